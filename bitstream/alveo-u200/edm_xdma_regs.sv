// edm_xdma_regs: AXI4-Lite register block of the card's PCIe packet rings (user BAR of the XDMA IP).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The register map is host-sdk/wire/src/xdma.rs; every offset and constant
// here is an XDMA_* constant of the generated clio_pkg (ID "CLIO", VERSION,
// the register offsets, the STATUS bits). 32-bit registers, little-endian;
// H2C_BASE and C2H_BASE are 64-bit (low word first).
//   read-write (host): H2C_HEAD (host -> card producer index),
//                      C2H_TAIL (card -> host consumer index); wstrb is
//                      honoured byte by byte;
//   read-only:         ID, VERSION, H2C_TAIL and C2H_HEAD (the ring engine's
//                      indices), SLOT_BYTES, SLOT_COUNT, H2C_BASE, C2H_BASE
//                      (parameters: the geometry of the rings in card
//                      memory), STATUS (READY, LINK_UP inputs), ERRORS (the
//                      ring engine's count of malformed H2C slots dropped:
//                      `err_add` is added every cycle, wrapping), XLATE_REFUSED,
//                      XLATE_TIMEOUTS, XLATE_BAD (the translator's counters,
//                      inputs already in this clock domain).
// Responses: an offset no register holds (within the ADDR_WIDTH window,
// BLOCK_LEN and above included) answers SLVERR, reads returning 0; so does a
// write to a read-only register (nothing changes). Address bits [1:0] are
// ignored. One write and one read at a time; AW and W in any order.
// `rst` clears H2C_HEAD, C2H_TAIL and ERRORS (the ring engine clears its
// indices with the same reset, so both ends restart at 0).
module edm_xdma_regs #(
    parameter ADDR_WIDTH = 16,
    parameter SLOT_BYTES = 2048,
    parameter SLOT_COUNT = 64,
    parameter [63:0] H2C_BASE = 64'h0,
    parameter [63:0] C2H_BASE = 64'h20000
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

    // Ring indices: the host's (to the ring engine) and the engine's.
    output wire [31:0]           h2c_head,
    output wire [31:0]           c2h_tail,
    input  wire [31:0]           h2c_tail,
    input  wire [31:0]           c2h_head,
    // STATUS inputs (already in this clock domain) and the error count.
    input  wire                  ready,
    input  wire                  link_up,
    input  wire [31:0]           err_add,
    // The translator's counters (edm_clio_card), synchronized to this clock.
    input  wire [31:0]           xlate_refused,
    input  wire [31:0]           xlate_timeouts,
    input  wire [31:0]           xlate_bad
);

import clio_pkg::*;

localparam [ADDR_WIDTH-1:0] A_ID = ADDR_WIDTH'(XDMA_REG_ID);
localparam [ADDR_WIDTH-1:0] A_VERSION = ADDR_WIDTH'(XDMA_REG_VERSION);
localparam [ADDR_WIDTH-1:0] A_H2C_HEAD = ADDR_WIDTH'(XDMA_REG_H2C_HEAD);
localparam [ADDR_WIDTH-1:0] A_H2C_TAIL = ADDR_WIDTH'(XDMA_REG_H2C_TAIL);
localparam [ADDR_WIDTH-1:0] A_C2H_HEAD = ADDR_WIDTH'(XDMA_REG_C2H_HEAD);
localparam [ADDR_WIDTH-1:0] A_C2H_TAIL = ADDR_WIDTH'(XDMA_REG_C2H_TAIL);
localparam [ADDR_WIDTH-1:0] A_SLOT_BYTES = ADDR_WIDTH'(XDMA_REG_SLOT_BYTES);
localparam [ADDR_WIDTH-1:0] A_SLOT_COUNT = ADDR_WIDTH'(XDMA_REG_SLOT_COUNT);
localparam [ADDR_WIDTH-1:0] A_H2C_BASE = ADDR_WIDTH'(XDMA_REG_H2C_BASE);
localparam [ADDR_WIDTH-1:0] A_C2H_BASE = ADDR_WIDTH'(XDMA_REG_C2H_BASE);
localparam [ADDR_WIDTH-1:0] A_STATUS = ADDR_WIDTH'(XDMA_REG_STATUS);
localparam [ADDR_WIDTH-1:0] A_ERRORS = ADDR_WIDTH'(XDMA_REG_ERRORS);
localparam [ADDR_WIDTH-1:0] A_XLATE_REFUSED = ADDR_WIDTH'(XDMA_REG_XLATE_REFUSED);
localparam [ADDR_WIDTH-1:0] A_XLATE_TIMEOUTS = ADDR_WIDTH'(XDMA_REG_XLATE_TIMEOUTS);
localparam [ADDR_WIDTH-1:0] A_XLATE_BAD = ADDR_WIDTH'(XDMA_REG_XLATE_BAD);

initial begin
    if (ADDR_WIDTH < $clog2(XDMA_BLOCK_LEN) || ADDR_WIDTH > 32) begin
        $error("Error: ADDR_WIDTH must hold the register block (XDMA_BLOCK_LEN) and be at most 32 (instance %m)");
        $finish;
    end
    if (SLOT_COUNT < 1 || (SLOT_COUNT & (SLOT_COUNT - 1)) != 0) begin
        $error("Error: SLOT_COUNT must be a power of two (instance %m)");
        $finish;
    end
    if (SLOT_BYTES < XDMA_SLOT_HEADER_LEN + CLIO_HEADER_LEN || SLOT_BYTES % 4 != 0
            || SLOT_BYTES > XDMA_SLOT_HEADER_LEN + 65535) begin
        $error("Error: SLOT_BYTES must be a multiple of 4 holding a Clio header (instance %m)");
        $finish;
    end
end

reg [31:0] h2c_head_reg = 0;
reg [31:0] c2h_tail_reg = 0;
reg [31:0] errors_reg = 0;

function [31:0] merge(input [31:0] old, input [31:0] d, input [3:0] s);
    integer b;
    begin
        for (b = 0; b < 4; b = b + 1) begin
            merge[8*b +: 8] = s[b] ? d[8*b +: 8] : old[8*b +: 8];
        end
    end
endfunction

wire [31:0] status_word = (ready ? XDMA_STATUS_READY : 32'd0) | (link_up ? XDMA_STATUS_LINK_UP : 32'd0);

// ---------------------------------------------------------------------------
// Read decode (combinational on the read address).
// ---------------------------------------------------------------------------
wire [ADDR_WIDTH-1:0] ra;
reg [31:0] rd_word;
reg        rd_ok;

always @* begin
    rd_word = 32'd0;
    rd_ok = 1'b1;
    case (ra)
        A_ID: rd_word = XDMA_ID;
        A_VERSION: rd_word = 32'(XDMA_VERSION);
        A_H2C_HEAD: rd_word = h2c_head_reg;
        A_H2C_TAIL: rd_word = h2c_tail;
        A_C2H_HEAD: rd_word = c2h_head;
        A_C2H_TAIL: rd_word = c2h_tail_reg;
        A_SLOT_BYTES: rd_word = 32'(SLOT_BYTES);
        A_SLOT_COUNT: rd_word = 32'(SLOT_COUNT);
        A_H2C_BASE: rd_word = H2C_BASE[31:0];
        A_H2C_BASE + 4: rd_word = H2C_BASE[63:32];
        A_C2H_BASE: rd_word = C2H_BASE[31:0];
        A_C2H_BASE + 4: rd_word = C2H_BASE[63:32];
        A_STATUS: rd_word = status_word;
        A_ERRORS: rd_word = errors_reg;
        A_XLATE_REFUSED: rd_word = xlate_refused;
        A_XLATE_TIMEOUTS: rd_word = xlate_timeouts;
        A_XLATE_BAD: rd_word = xlate_bad;
        default: rd_ok = 1'b0;
    endcase
end

// ---------------------------------------------------------------------------
// AXI-Lite handshakes (clio_axil_regif); writes applied below.
// ---------------------------------------------------------------------------
wire                  wr_en;
wire [ADDR_WIDTH-1:0] wa;
wire [31:0]           wd;
wire [3:0]            ws;
reg                   wr_err_reg = 1'b0;

clio_axil_regif #(
    .ADDR_WIDTH(ADDR_WIDTH)
) regif_inst (
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

always @(posedge clk) begin
    errors_reg <= errors_reg + err_add;
    if (wr_en) begin
        wr_err_reg <= 1'b0;
        case (wa)
            A_H2C_HEAD: h2c_head_reg <= merge(h2c_head_reg, wd, ws);
            A_C2H_TAIL: c2h_tail_reg <= merge(c2h_tail_reg, wd, ws);
            // Read-only or unmapped.
            default: wr_err_reg <= 1'b1;
        endcase
    end
    if (rst) begin
        h2c_head_reg <= 0;
        c2h_tail_reg <= 0;
        errors_reg <= 0;
    end
end

assign h2c_head = h2c_head_reg;
assign c2h_tail = c2h_tail_reg;

endmodule

`resetall
