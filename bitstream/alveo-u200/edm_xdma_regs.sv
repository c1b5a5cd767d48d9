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
//                      `err_add` is added every cycle, wrapping).
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
    input  wire [31:0]           err_add
);

import clio_pkg::*;

localparam [1:0] RESP_OKAY = 2'b00;
localparam [1:0] RESP_SLVERR = 2'b10;

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

initial begin
    if (ADDR_WIDTH < 6 || ADDR_WIDTH > 32) begin
        $error("Error: ADDR_WIDTH must be 6..32 to hold the register block (instance %m)");
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
wire [ADDR_WIDTH-1:0] ra = {s_axil_araddr[ADDR_WIDTH-1:2], 2'b00};
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
        default: rd_ok = 1'b0;
    endcase
end

// ---------------------------------------------------------------------------
// AXI-Lite read channel.
// ---------------------------------------------------------------------------
reg        rvalid_reg = 1'b0;
reg [31:0] rdata_reg = 0;
reg [1:0]  rresp_reg = RESP_OKAY;

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
        rdata_reg <= rd_word;
        rresp_reg <= rd_ok ? RESP_OKAY : RESP_SLVERR;
    end
    if (rst) begin
        rvalid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// AXI-Lite write channel: hold AW and W until both are here, then write.
// ---------------------------------------------------------------------------
reg                  aw_have_reg = 1'b0, w_have_reg = 1'b0;
reg [ADDR_WIDTH-1:0] aw_addr_reg = 0;
reg [31:0]           w_data_reg = 0;
reg [3:0]            w_strb_reg = 0;
reg                  bvalid_reg = 1'b0;
reg [1:0]            bresp_reg = RESP_OKAY;

assign s_axil_awready = !aw_have_reg && !bvalid_reg;
assign s_axil_wready = !w_have_reg && !bvalid_reg;
assign s_axil_bvalid = bvalid_reg;
assign s_axil_bresp = bresp_reg;

wire [ADDR_WIDTH-1:0] wa_raw = aw_have_reg ? aw_addr_reg : s_axil_awaddr;
wire [ADDR_WIDTH-1:0] wa = {wa_raw[ADDR_WIDTH-1:2], 2'b00};
wire [31:0]           wd = w_have_reg ? w_data_reg : s_axil_wdata;
wire [3:0]            ws = w_have_reg ? w_strb_reg : s_axil_wstrb;
wire aw_now = aw_have_reg || (s_axil_awvalid && s_axil_awready);
wire w_now = w_have_reg || (s_axil_wvalid && s_axil_wready);
wire do_write = aw_now && w_now && !bvalid_reg;

always @(posedge clk) begin
    if (bvalid_reg && s_axil_bready) begin
        bvalid_reg <= 1'b0;
    end
    if (s_axil_awvalid && s_axil_awready && !do_write) begin
        aw_have_reg <= 1'b1;
        aw_addr_reg <= s_axil_awaddr;
    end
    if (s_axil_wvalid && s_axil_wready && !do_write) begin
        w_have_reg <= 1'b1;
        w_data_reg <= s_axil_wdata;
        w_strb_reg <= s_axil_wstrb;
    end
    errors_reg <= errors_reg + err_add;
    if (do_write) begin
        aw_have_reg <= 1'b0;
        w_have_reg <= 1'b0;
        bvalid_reg <= 1'b1;
        bresp_reg <= RESP_OKAY;
        case (wa)
            A_H2C_HEAD: h2c_head_reg <= merge(h2c_head_reg, wd, ws);
            A_C2H_TAIL: c2h_tail_reg <= merge(c2h_tail_reg, wd, ws);
            // Read-only or unmapped.
            default: bresp_reg <= RESP_SLVERR;
        endcase
    end
    if (rst) begin
        aw_have_reg <= 1'b0;
        w_have_reg <= 1'b0;
        bvalid_reg <= 1'b0;
        h2c_head_reg <= 0;
        c2h_tail_reg <= 0;
        errors_reg <= 0;
    end
end

assign h2c_head = h2c_head_reg;
assign c2h_tail = c2h_tail_reg;

// Byte-in-word address bits: wstrb selects the bytes.
/* verilator lint_off UNUSEDSIGNAL */
wire unused_addr = ^{s_axil_araddr[1:0], wa_raw[1:0]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
