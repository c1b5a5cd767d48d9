// tb_clio_axil_regif: bench wrapper (simulation only) of clio_axil_regif with a small register block behind it.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Behind the front end: four read-write words at 0x00..0x0c (byte strobes
// honoured), a read-only word at 0x10 (RO_VALUE), everything else unmapped.
// Writes to 0x10 or unmapped offsets answer SLVERR and change nothing;
// reads of unmapped offsets answer SLVERR with data 0. `writes` counts the
// wr_en pulses, so the bench can check each write is applied exactly once.
module tb_clio_axil_regif #(
    parameter ADDR_WIDTH = 8,
    parameter [31:0] RO_VALUE = 32'hC0DE_0042
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire [ADDR_WIDTH-1:0] s_axil_awaddr,
    input  wire                  s_axil_awvalid,
    output wire                  s_axil_awready,
    input  wire [31:0]           s_axil_wdata,
    input  wire [3:0]            s_axil_wstrb,
    input  wire                  s_axil_wvalid,
    output wire                  s_axil_wready,
    output wire [1:0]            s_axil_bresp,
    output wire                  s_axil_bvalid,
    input  wire                  s_axil_bready,
    input  wire [ADDR_WIDTH-1:0] s_axil_araddr,
    input  wire                  s_axil_arvalid,
    output wire                  s_axil_arready,
    output wire [31:0]           s_axil_rdata,
    output wire [1:0]            s_axil_rresp,
    output wire                  s_axil_rvalid,
    input  wire                  s_axil_rready,
    output reg  [31:0]           writes = 0
);

wire [ADDR_WIDTH-1:0] ra, wa;
wire [31:0]           wd;
wire [3:0]            ws;
wire                  wr_en;
reg  [31:0]           rd_word;
reg                   rd_ok;
reg                   wr_err_reg = 1'b0;
reg  [31:0]           regs [0:3];

initial begin
    regs[0] = 0;
    regs[1] = 0;
    regs[2] = 0;
    regs[3] = 0;
end

always @* begin
    rd_ok = 1'b1;
    rd_word = 32'd0;
    if (ra < ADDR_WIDTH'(16)) begin
        rd_word = regs[ra[3:2]];
    end else if (ra == ADDR_WIDTH'(16)) begin
        rd_word = RO_VALUE;
    end else begin
        rd_ok = 1'b0;
    end
end

integer b;
always @(posedge clk) begin
    if (wr_en) begin
        writes <= writes + 1;
        wr_err_reg <= 1'b0;
        if (wa < ADDR_WIDTH'(16)) begin
            for (b = 0; b < 4; b = b + 1) begin
                if (ws[b]) regs[wa[3:2]][8*b +: 8] <= wd[8*b +: 8];
            end
        end else begin
            wr_err_reg <= 1'b1;
        end
    end
end

clio_axil_regif #(
    .ADDR_WIDTH(ADDR_WIDTH)
) dut_inst (
    .clk(clk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .rd_addr(ra),
    .rd_data(rd_word),
    .rd_ok(rd_ok),
    .wr_en(wr_en),
    .wr_addr(wa),
    .wr_data(wd),
    .wr_strb(ws),
    .wr_err(wr_err_reg)
);

endmodule

`resetall
