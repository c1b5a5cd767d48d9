// clio_edm_front: the ZCU106's EDM front end (network.front_end = "edm"): an EDM host's inbox and outbox <-> the fast path's 512-bit packet streams.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// In the EDM port's TX clock (clk_edm): edm_clio_node (ip/edm-clio/rtl) on
// the port's edm_host_top (its requester, applied-write reports and local
// memory port): request records in the inbox become Clio request packets,
// the fast path's answers become answer chains (a READ's, in the outbox) and
// answer records (WREQ'd into the card's inbox), by host-sdk/wire/src/edm_clio.rs.
// Towards the fast path (clk_fp), where the UDP build has clio_udp_shim:
//   requests: node (64-bit, clk_edm) -> clio_axis_async_fifo -> clio_axis_upsize
//             64 -> 512 -> m_fp (clio_fastpath_top s_axis);
//   answers:  s_fp (clio_fastpath_top m_axis) -> clio_axis_downsize 512 -> 64
//             -> clio_axis_async_fifo -> node.
// Resets (synchronous, active high): the FIFOs want the reader's reset to
// cover the writer's; both directions cross, so rst_edm and rst_fp must be
// asserted together and released together within the synchronizer time
// (the top derives both from the same sources).
module clio_edm_front #(
    parameter AW = 18,
    parameter [AW-1:0] STAGE_WORD = AW'(196608),
    parameter PKT_WORDS = 256,
    parameter [31:0] ANSWER_TIMEOUT = 32'd1000000,
    parameter FIFO_DEPTH = 512
) (
    input  wire          clk_edm,
    input  wire          rst_edm,
    input  wire [15:0]   node_id,

    // the EDM port's edm_host_top
    output wire          req_valid,
    input  wire          req_ready,
    output wire          req_write,
    output wire [15:0]   req_dst,
    output wire [63:0]   req_addr,
    output wire [15:0]   req_len,
    output wire [31:0]   req_local,
    output wire [15:0]   req_tag,
    input  wire          wcomp_valid,
    input  wire [15:0]   wcomp_tag,
    input  wire          wapp_valid,
    input  wire [AW-1:0] wapp_addr,
    input  wire [15:0]   wapp_words,
    input  wire [15:0]   wapp_peer,
    input  wire          wapp_last,
    output wire          ext_en,
    output wire          ext_we,
    output wire [AW-1:0] ext_addr,
    output wire [63:0]   ext_wdata,
    input  wire [63:0]   ext_rdata,

    input  wire          clk_fp,
    input  wire          rst_fp,
    output wire [511:0]  m_fp_tdata,
    output wire [63:0]   m_fp_tkeep,
    output wire          m_fp_tvalid,
    input  wire          m_fp_tready,
    output wire          m_fp_tlast,
    input  wire [511:0]  s_fp_tdata,
    input  wire [63:0]   s_fp_tkeep,
    input  wire          s_fp_tvalid,
    output wire          s_fp_tready,
    input  wire          s_fp_tlast,

    // the node's counters (clk_edm), for an ILA or a register
    output wire [31:0]   cnt_records,
    output wire [31:0]   cnt_bad,
    output wire [31:0]   cnt_stray,
    output wire [31:0]   cnt_timeouts,
    output wire [31:0]   cnt_dropped,
    output wire [31:0]   cnt_overflow
);

wire [63:0] nq_tdata, na_tdata, fq_tdata, fa_tdata;
wire [7:0]  nq_tkeep, na_tkeep, fq_tkeep, fa_tkeep;
wire        nq_tvalid, nq_tready, nq_tlast, na_tvalid, na_tready, na_tlast;
wire        fq_tvalid, fq_tready, fq_tlast, fa_tvalid, fa_tready, fa_tlast;
/* verilator lint_off UNUSEDSIGNAL */
wire        done_valid, done_read, q_drop, a_drop;
wire [15:0] done_peer, done_slot;
/* verilator lint_on UNUSEDSIGNAL */

edm_clio_node #(
    .AW(AW),
    .STAGE_WORD(STAGE_WORD),
    .PKT_WORDS(PKT_WORDS),
    .ANSWER_TIMEOUT(ANSWER_TIMEOUT)
) node_inst (
    .clk(clk_edm), .rst(rst_edm), .node_id(node_id),
    .req_valid(req_valid), .req_ready(req_ready), .req_write(req_write), .req_dst(req_dst),
    .req_addr(req_addr), .req_len(req_len), .req_local(req_local), .req_tag(req_tag),
    .wcomp_valid(wcomp_valid), .wcomp_tag(wcomp_tag),
    .wapp_valid(wapp_valid), .wapp_addr(wapp_addr), .wapp_words(wapp_words),
    .wapp_peer(wapp_peer), .wapp_last(wapp_last),
    .ext_en(ext_en), .ext_we(ext_we), .ext_addr(ext_addr), .ext_wdata(ext_wdata), .ext_rdata(ext_rdata),
    .m_axis_tdata(nq_tdata), .m_axis_tkeep(nq_tkeep), .m_axis_tvalid(nq_tvalid),
    .m_axis_tlast(nq_tlast), .m_axis_tready(nq_tready),
    .s_axis_tdata(na_tdata), .s_axis_tkeep(na_tkeep), .s_axis_tvalid(na_tvalid),
    .s_axis_tlast(na_tlast), .s_axis_tready(na_tready),
    .done_valid(done_valid), .done_peer(done_peer), .done_slot(done_slot), .done_read(done_read),
    .cnt_records(cnt_records), .cnt_bad(cnt_bad), .cnt_stray(cnt_stray),
    .cnt_timeouts(cnt_timeouts), .cnt_dropped(cnt_dropped), .cnt_overflow(cnt_overflow)
);

// Requests: clk_edm -> clk_fp, then 64 -> 512.
clio_axis_async_fifo #(
    .DEPTH(FIFO_DEPTH)
) req_fifo_inst (
    .s_clk(clk_edm), .s_rst(rst_edm),
    .s_axis_tdata(nq_tdata), .s_axis_tkeep(nq_tkeep), .s_axis_tvalid(nq_tvalid),
    .s_axis_tready(nq_tready), .s_axis_tlast(nq_tlast), .s_drop(q_drop),
    .m_clk(clk_fp), .m_rst(rst_fp),
    .m_axis_tdata(fq_tdata), .m_axis_tkeep(fq_tkeep), .m_axis_tvalid(fq_tvalid),
    .m_axis_tready(fq_tready), .m_axis_tlast(fq_tlast)
);

clio_axis_upsize #(
    .S_DATA_WIDTH(64),
    .M_DATA_WIDTH(512)
) req_upsize_inst (
    .clk(clk_fp), .rst(rst_fp),
    .s_axis_tdata(fq_tdata), .s_axis_tkeep(fq_tkeep), .s_axis_tvalid(fq_tvalid),
    .s_axis_tready(fq_tready), .s_axis_tlast(fq_tlast),
    .m_axis_tdata(m_fp_tdata), .m_axis_tkeep(m_fp_tkeep), .m_axis_tvalid(m_fp_tvalid),
    .m_axis_tready(m_fp_tready), .m_axis_tlast(m_fp_tlast)
);

// Answers: 512 -> 64, then clk_fp -> clk_edm.
clio_axis_downsize #(
    .S_DATA_WIDTH(512),
    .M_DATA_WIDTH(64)
) ans_downsize_inst (
    .clk(clk_fp), .rst(rst_fp),
    .s_axis_tdata(s_fp_tdata), .s_axis_tkeep(s_fp_tkeep), .s_axis_tvalid(s_fp_tvalid),
    .s_axis_tready(s_fp_tready), .s_axis_tlast(s_fp_tlast),
    .m_axis_tdata(fa_tdata), .m_axis_tkeep(fa_tkeep), .m_axis_tvalid(fa_tvalid),
    .m_axis_tready(fa_tready), .m_axis_tlast(fa_tlast)
);

clio_axis_async_fifo #(
    .DEPTH(FIFO_DEPTH)
) ans_fifo_inst (
    .s_clk(clk_fp), .s_rst(rst_fp),
    .s_axis_tdata(fa_tdata), .s_axis_tkeep(fa_tkeep), .s_axis_tvalid(fa_tvalid),
    .s_axis_tready(fa_tready), .s_axis_tlast(fa_tlast), .s_drop(a_drop),
    .m_clk(clk_edm), .m_rst(rst_edm),
    .m_axis_tdata(na_tdata), .m_axis_tkeep(na_tkeep), .m_axis_tvalid(na_tvalid),
    .m_axis_tready(na_tready), .m_axis_tlast(na_tlast)
);

endmodule

`resetall
