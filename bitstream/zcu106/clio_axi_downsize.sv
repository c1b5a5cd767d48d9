// clio_axi_downsize: AXI4 width converter, 512-bit master to 128-bit slave (fast path to S_AXI_HP0_FPD).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Supported transfers: full-width INCR bursts (AxSIZE = log2(S_DATA_WIDTH/8))
// -- the only kind the fast path issues, always wide-beat aligned
// (clio_fastpath_top, clio_pt_fetch, clio_ring_dma). A legal AXI4 burst of
// that kind covers at most 4 KiB, so the narrow burst of RATIO * (len + 1)
// beats always fits AxLEN's 256 beats. Other sizes or burst types are not
// converted: their beats would be split as if full width (unsupported_o
// pulses when one is accepted, so a simulation or an ILA sees it).
//
// Address channels pass through combinationally with len and size rewritten
// and the address aligned down to the wide beat (an unaligned start of a
// full-width burst uses the lanes of its aligned beat, under its strobes).
// Each wide write beat goes out as RATIO narrow beats, lane 0 (low bits)
// first, wstrb sliced alike; each RATIO narrow read beats are gathered into
// one wide beat whose rresp is the worst of them.
// IDs: the slave side uses one ID (0), so the slave returns reads and write
// responses in order and never interleaves read data; the master's IDs wait
// in order in two small FIFOs (OUTSTANDING each) and are given back with
// the responses. Address handshakes stall while a FIFO is full.
module clio_axi_downsize #(
    parameter S_DATA_WIDTH = 512,
    parameter M_DATA_WIDTH = 128,
    parameter S_ADDR_WIDTH = 32,
    parameter M_ADDR_WIDTH = 49,
    parameter S_ID_WIDTH = 4,
    parameter M_ID_WIDTH = 6,
    parameter OUTSTANDING = 16
) (
    input  wire                      clk,
    input  wire                      rst,

    // Wide slave port (from the fast path's m_axi).
    input  wire [S_ID_WIDTH-1:0]     s_axi_awid,
    input  wire [S_ADDR_WIDTH-1:0]   s_axi_awaddr,
    input  wire [7:0]                s_axi_awlen,
    input  wire [2:0]                s_axi_awsize,
    input  wire [1:0]                s_axi_awburst,
    input  wire                      s_axi_awvalid,
    output wire                      s_axi_awready,
    input  wire [S_DATA_WIDTH-1:0]   s_axi_wdata,
    input  wire [S_DATA_WIDTH/8-1:0] s_axi_wstrb,
    input  wire                      s_axi_wlast,
    input  wire                      s_axi_wvalid,
    output wire                      s_axi_wready,
    output wire [S_ID_WIDTH-1:0]     s_axi_bid,
    output wire [1:0]                s_axi_bresp,
    output wire                      s_axi_bvalid,
    input  wire                      s_axi_bready,
    input  wire [S_ID_WIDTH-1:0]     s_axi_arid,
    input  wire [S_ADDR_WIDTH-1:0]   s_axi_araddr,
    input  wire [7:0]                s_axi_arlen,
    input  wire [2:0]                s_axi_arsize,
    input  wire [1:0]                s_axi_arburst,
    input  wire                      s_axi_arvalid,
    output wire                      s_axi_arready,
    output wire [S_ID_WIDTH-1:0]     s_axi_rid,
    output wire [S_DATA_WIDTH-1:0]   s_axi_rdata,
    output wire [1:0]                s_axi_rresp,
    output wire                      s_axi_rlast,
    output wire                      s_axi_rvalid,
    input  wire                      s_axi_rready,

    // Narrow master port (to S_AXI_HP0_FPD).
    output wire [M_ID_WIDTH-1:0]     m_axi_awid,
    output wire [M_ADDR_WIDTH-1:0]   m_axi_awaddr,
    output wire [7:0]                m_axi_awlen,
    output wire [2:0]                m_axi_awsize,
    output wire [1:0]                m_axi_awburst,
    output wire                      m_axi_awvalid,
    input  wire                      m_axi_awready,
    output wire [M_DATA_WIDTH-1:0]   m_axi_wdata,
    output wire [M_DATA_WIDTH/8-1:0] m_axi_wstrb,
    output wire                      m_axi_wlast,
    output wire                      m_axi_wvalid,
    input  wire                      m_axi_wready,
    input  wire [M_ID_WIDTH-1:0]     m_axi_bid,
    input  wire [1:0]                m_axi_bresp,
    input  wire                      m_axi_bvalid,
    output wire                      m_axi_bready,
    output wire [M_ID_WIDTH-1:0]     m_axi_arid,
    output wire [M_ADDR_WIDTH-1:0]   m_axi_araddr,
    output wire [7:0]                m_axi_arlen,
    output wire [2:0]                m_axi_arsize,
    output wire [1:0]                m_axi_arburst,
    output wire                      m_axi_arvalid,
    input  wire                      m_axi_arready,
    input  wire [M_ID_WIDTH-1:0]     m_axi_rid,
    input  wire [M_DATA_WIDTH-1:0]   m_axi_rdata,
    input  wire [1:0]                m_axi_rresp,
    input  wire                      m_axi_rlast,
    input  wire                      m_axi_rvalid,
    output wire                      m_axi_rready,

    // Pulses when an address of an unsupported size or burst type is accepted.
    output wire                      unsupported_o
);

localparam RATIO = S_DATA_WIDTH / M_DATA_WIDTH;
localparam RW = $clog2(RATIO);
localparam S_BYTES = S_DATA_WIDTH / 8;
localparam M_BYTES = M_DATA_WIDTH / 8;
localparam S_SIZE = $clog2(S_BYTES);
localparam M_SIZE = $clog2(M_BYTES);
localparam QW = $clog2(OUTSTANDING);

initial begin
    if (RATIO < 2 || RATIO * M_DATA_WIDTH != S_DATA_WIDTH || (1 << RW) != RATIO) begin
        $error("Error: S_DATA_WIDTH must be a power-of-two multiple (>= 2) of M_DATA_WIDTH (instance %m)");
        $finish;
    end
    if (M_ADDR_WIDTH < S_ADDR_WIDTH) begin
        $error("Error: M_ADDR_WIDTH must be at least S_ADDR_WIDTH (instance %m)");
        $finish;
    end
    if (OUTSTANDING < 2 || (1 << QW) != OUTSTANDING) begin
        $error("Error: OUTSTANDING must be a power of two of at least 2 (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// ID FIFOs (in order; the slave answers in order on its single ID).
// ---------------------------------------------------------------------------
reg [S_ID_WIDTH-1:0] rq_mem [0:OUTSTANDING-1];
reg [S_ID_WIDTH-1:0] bq_mem [0:OUTSTANDING-1];
reg [QW:0] rq_wr_reg = 0, rq_rd_reg = 0, bq_wr_reg = 0, bq_rd_reg = 0;
wire rq_full = (rq_wr_reg - rq_rd_reg) == OUTSTANDING[QW:0];
wire bq_full = (bq_wr_reg - bq_rd_reg) == OUTSTANDING[QW:0];

// (len + 1) * RATIO - 1; the high bits of len are 0 in a legal burst (above).
function [7:0] narrow_len(input [7:0] len);
    narrow_len = (len << RW) | 8'(RATIO - 1);
endfunction

// ---------------------------------------------------------------------------
// Address channels.
// ---------------------------------------------------------------------------
assign m_axi_arid = 0;
assign m_axi_araddr = M_ADDR_WIDTH'({s_axi_araddr[S_ADDR_WIDTH-1:S_SIZE], {S_SIZE{1'b0}}});
assign m_axi_arlen = narrow_len(s_axi_arlen);
assign m_axi_arsize = M_SIZE[2:0];
assign m_axi_arburst = s_axi_arburst;
assign m_axi_arvalid = s_axi_arvalid && !rq_full;
assign s_axi_arready = m_axi_arready && !rq_full;
wire ar_fire = s_axi_arvalid && s_axi_arready;

assign m_axi_awid = 0;
assign m_axi_awaddr = M_ADDR_WIDTH'({s_axi_awaddr[S_ADDR_WIDTH-1:S_SIZE], {S_SIZE{1'b0}}});
assign m_axi_awlen = narrow_len(s_axi_awlen);
assign m_axi_awsize = M_SIZE[2:0];
assign m_axi_awburst = s_axi_awburst;
assign m_axi_awvalid = s_axi_awvalid && !bq_full;
assign s_axi_awready = m_axi_awready && !bq_full;
wire aw_fire = s_axi_awvalid && s_axi_awready;

assign unsupported_o = (ar_fire && (s_axi_arsize != S_SIZE[2:0] || s_axi_arburst != 2'b01))
    || (aw_fire && (s_axi_awsize != S_SIZE[2:0] || s_axi_awburst != 2'b01));

// ---------------------------------------------------------------------------
// Write data: one wide beat out as RATIO narrow beats.
// ---------------------------------------------------------------------------
reg [S_DATA_WIDTH-1:0] w_data_reg = 0;
reg [S_BYTES-1:0]      w_strb_reg = 0;
reg                    w_last_reg = 1'b0;
reg                    w_valid_reg = 1'b0;
reg [RW-1:0]           w_lane_reg = 0;

wire w_lane_last = w_lane_reg == RW'(RATIO - 1);
assign s_axi_wready = !w_valid_reg || (m_axi_wready && w_lane_last);
assign m_axi_wdata = w_data_reg[w_lane_reg*M_DATA_WIDTH +: M_DATA_WIDTH];
assign m_axi_wstrb = w_strb_reg[w_lane_reg*M_BYTES +: M_BYTES];
assign m_axi_wlast = w_last_reg && w_lane_last;
assign m_axi_wvalid = w_valid_reg;

always @(posedge clk) begin
    if (w_valid_reg && m_axi_wready) begin
        w_lane_reg <= w_lane_reg + 1'b1;
        if (w_lane_last) begin
            w_valid_reg <= 1'b0;
        end
    end
    if (s_axi_wvalid && s_axi_wready) begin
        w_data_reg <= s_axi_wdata;
        w_strb_reg <= s_axi_wstrb;
        w_last_reg <= s_axi_wlast;
        w_valid_reg <= 1'b1;
        w_lane_reg <= 0;
    end
    if (rst) begin
        w_valid_reg <= 1'b0;
        w_lane_reg <= 0;
    end
end

// ---------------------------------------------------------------------------
// Write response: the slave's, under the oldest outstanding master ID.
// ---------------------------------------------------------------------------
assign s_axi_bid = bq_mem[bq_rd_reg[QW-1:0]];
assign s_axi_bresp = m_axi_bresp;
assign s_axi_bvalid = m_axi_bvalid;
assign m_axi_bready = s_axi_bready;

// ---------------------------------------------------------------------------
// Read data: RATIO narrow beats gathered into one wide beat.
// ---------------------------------------------------------------------------
reg [S_DATA_WIDTH-1:0] r_data_reg = 0;
reg [1:0]              r_resp_reg = 2'b00;
reg                    r_last_reg = 1'b0;
reg                    r_valid_reg = 1'b0;
reg [RW-1:0]           r_lane_reg = 0;

assign m_axi_rready = !r_valid_reg || s_axi_rready;
assign s_axi_rid = rq_mem[rq_rd_reg[QW-1:0]];
assign s_axi_rdata = r_data_reg;
assign s_axi_rresp = r_resp_reg;
assign s_axi_rlast = r_last_reg;
assign s_axi_rvalid = r_valid_reg;

always @(posedge clk) begin
    if (r_valid_reg && s_axi_rready) begin
        r_valid_reg <= 1'b0;
    end
    if (m_axi_rvalid && m_axi_rready) begin
        r_data_reg[r_lane_reg*M_DATA_WIDTH +: M_DATA_WIDTH] <= m_axi_rdata;
        // The first lane of a beat starts the worst-of from its own resp.
        if (r_lane_reg == 0 || m_axi_rresp > r_resp_reg) begin
            r_resp_reg <= m_axi_rresp;
        end
        r_lane_reg <= r_lane_reg + 1'b1;
        if (r_lane_reg == RW'(RATIO - 1)) begin
            r_valid_reg <= 1'b1;
            r_last_reg <= m_axi_rlast;
        end
    end
    if (rst) begin
        r_valid_reg <= 1'b0;
        r_lane_reg <= 0;
    end
end

// ---------------------------------------------------------------------------
// ID FIFO pointers.
// ---------------------------------------------------------------------------
always @(posedge clk) begin
    if (ar_fire) begin
        rq_mem[rq_wr_reg[QW-1:0]] <= s_axi_arid;
        rq_wr_reg <= rq_wr_reg + 1'b1;
    end
    if (r_valid_reg && s_axi_rready && r_last_reg) begin
        rq_rd_reg <= rq_rd_reg + 1'b1;
    end
    if (aw_fire) begin
        bq_mem[bq_wr_reg[QW-1:0]] <= s_axi_awid;
        bq_wr_reg <= bq_wr_reg + 1'b1;
    end
    if (m_axi_bvalid && m_axi_bready) begin
        bq_rd_reg <= bq_rd_reg + 1'b1;
    end
    if (rst) begin
        rq_wr_reg <= 0;
        rq_rd_reg <= 0;
        bq_wr_reg <= 0;
        bq_rd_reg <= 0;
    end
end

// The slave's IDs are all 0 (set above); the low address bits select lanes
// only (strobes carry them).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_ids = ^{m_axi_bid, m_axi_rid, s_axi_awaddr[S_SIZE-1:0], s_axi_araddr[S_SIZE-1:0]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
