// clio_axil_regif: AXI4-Lite slave front end of a register block (handshakes only; the block decodes).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The board register blocks (clio_fp_regs on the ZCU106, edm_xdma_regs on
// the U200) keep their maps; this module carries the AXI4-Lite protocol for
// them. One read and one write at a time; AW and W may come in any order.
//   Read:  `rd_addr` is the word-aligned read address (bits [1:0] cleared),
//          valid whenever `s_axil_arvalid`; the block answers combinationally
//          with `rd_data` and `rd_ok` (0: SLVERR, data as given). The answer
//          is registered on the AR handshake and held until R is taken.
//   Write: `wr_en` pulses for one cycle once both AW and W are here, with the
//          word-aligned `wr_addr`, `wr_data` and `wr_strb`; the block applies
//          the write and sets `wr_err` (a register it owns, updated on that
//          cycle) to answer SLVERR. B is valid from the next cycle until taken,
//          and `s_axil_bresp` follows `wr_err` meanwhile.
// Address bits [1:0] are ignored (the word is addressed; wstrb picks the
// bytes).
module clio_axil_regif #(
    parameter ADDR_WIDTH = 12
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

    output wire [ADDR_WIDTH-1:0] rd_addr,
    input  wire [31:0]           rd_data,
    input  wire                  rd_ok,

    output wire                  wr_en,
    output wire [ADDR_WIDTH-1:0] wr_addr,
    output wire [31:0]           wr_data,
    output wire [3:0]            wr_strb,
    input  wire                  wr_err
);

localparam [1:0] RESP_OKAY = 2'b00;
localparam [1:0] RESP_SLVERR = 2'b10;

initial begin
    if (ADDR_WIDTH < 3 || ADDR_WIDTH > 32) begin
        $error("Error: ADDR_WIDTH must be 3..32 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// Read channel.
// ---------------------------------------------------------------------------
reg        rvalid_reg = 1'b0;
reg [31:0] rdata_reg = 0;
reg [1:0]  rresp_reg = RESP_OKAY;

assign rd_addr = {s_axil_araddr[ADDR_WIDTH-1:2], 2'b00};
assign s_axil_arready = !rvalid_reg;
assign s_axil_rvalid = rvalid_reg;
assign s_axil_rdata = rdata_reg;
assign s_axil_rresp = rresp_reg;

always @(posedge clk) begin
    if (rvalid_reg && s_axil_rready) begin
        rvalid_reg <= 1'b0;
    end
    if (s_axil_arvalid && s_axil_arready) begin
        rvalid_reg <= 1'b1;
        rdata_reg <= rd_data;
        rresp_reg <= rd_ok ? RESP_OKAY : RESP_SLVERR;
    end
    if (rst) begin
        rvalid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// Write channel: hold AW and W until both are here, then write.
// ---------------------------------------------------------------------------
reg                  aw_have_reg = 1'b0, w_have_reg = 1'b0;
reg [ADDR_WIDTH-1:0] aw_addr_reg = 0;
reg [31:0]           w_data_reg = 0;
reg [3:0]            w_strb_reg = 0;
reg                  bvalid_reg = 1'b0;

assign s_axil_awready = !aw_have_reg && !bvalid_reg;
assign s_axil_wready = !w_have_reg && !bvalid_reg;
assign s_axil_bvalid = bvalid_reg;
assign s_axil_bresp = wr_err ? RESP_SLVERR : RESP_OKAY;

wire [ADDR_WIDTH-1:0] wa_raw = aw_have_reg ? aw_addr_reg : s_axil_awaddr;
wire aw_now = aw_have_reg || (s_axil_awvalid && s_axil_awready);
wire w_now = w_have_reg || (s_axil_wvalid && s_axil_wready);

assign wr_en = aw_now && w_now && !bvalid_reg;
assign wr_addr = {wa_raw[ADDR_WIDTH-1:2], 2'b00};
assign wr_data = w_have_reg ? w_data_reg : s_axil_wdata;
assign wr_strb = w_have_reg ? w_strb_reg : s_axil_wstrb;

always @(posedge clk) begin
    if (bvalid_reg && s_axil_bready) begin
        bvalid_reg <= 1'b0;
    end
    if (s_axil_awvalid && s_axil_awready && !wr_en) begin
        aw_have_reg <= 1'b1;
        aw_addr_reg <= s_axil_awaddr;
    end
    if (s_axil_wvalid && s_axil_wready && !wr_en) begin
        w_have_reg <= 1'b1;
        w_data_reg <= s_axil_wdata;
        w_strb_reg <= s_axil_wstrb;
    end
    if (wr_en) begin
        aw_have_reg <= 1'b0;
        w_have_reg <= 1'b0;
        bvalid_reg <= 1'b1;
    end
    if (rst) begin
        aw_have_reg <= 1'b0;
        w_have_reg <= 1'b0;
        bvalid_reg <= 1'b0;
    end
end

// Byte-in-word address bits: wstrb selects the bytes.
/* verilator lint_off UNUSEDSIGNAL */
wire unused_addr = ^{s_axil_araddr[1:0], wa_raw[1:0]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
