// tb_clio_edm_front: a U200 card's EDM host, the EDM switch and the ZCU106's EDM front end on the real fast path (bench only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Port 0: the card's edm_host_top, whose requester and memory the bench drives
// (it plays the card's translator). Port 1: the memory node, as the ZCU106 top
// builds it with network.front_end = "edm": an edm_host_top (the top's EDM port
// has the same host behind its block lock and scrambler), clio_edm_front and
// clio_fastpath_top (on its behavioural DDR, clio_fastpath_sim), the fast path
// in its own clock (clk_fp) as on the board. Links of LINK cycles each way.
module tb_clio_edm_front #(
    parameter LINK = 4,
    parameter MEM_WORDS = 262144,
    parameter AW = $clog2(MEM_WORDS)
) (
    input  wire          clk,
    input  wire          clk_fp,
    input  wire          rst,

    input  wire          c_req_valid,
    output wire          c_req_ready,
    input  wire          c_req_write,
    input  wire [63:0]   c_req_addr,
    input  wire [15:0]   c_req_len,
    input  wire [31:0]   c_req_local,
    input  wire [15:0]   c_req_tag,
    output wire          c_wcomp_valid,
    output wire [15:0]   c_wcomp_tag,
    output wire          c_rcomp_valid,
    output wire [15:0]   c_rcomp_tag,
    output wire          c_rcomp_ok,
    output wire          c_wapp_valid,
    output wire [AW-1:0] c_wapp_addr,
    output wire [15:0]   c_wapp_words,
    output wire [15:0]   c_wapp_peer,
    output wire          c_wapp_last,

    input  wire [511:0]  cfg_info,
    output wire [31:0]   host_errors,
    output wire [31:0]   node_records,
    output wire [31:0]   node_bad,
    output wire [31:0]   node_stray,
    output wire [31:0]   node_timeouts
);

`include "edm_clio_links.svh"

wire [31:0] c_ug, c_ur, c_ux, c_ba, c_br, c_bm, n_ug, n_ur, n_ux, n_ba, n_br, n_bm;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] c_ru, c_rt, c_pre, n_ru, n_rt, n_pre;
wire [63:0] c_rcomp_data, c_ext_rdata, n_rcomp_data;
wire [15:0] n_rcomp_tag;
wire        n_rcomp_valid, n_rcomp_ok;
wire [1:0]  c_dec_hdr, n_dec_hdr;
wire [63:0] c_dec_data, n_dec_data;
wire        c_dec_valid, n_dec_valid, c_enc_ready, n_enc_ready;
/* verilator lint_on UNUSEDSIGNAL */
assign host_errors = c_ug + c_ur + c_ux + c_ba + c_br + c_bm + n_ug + n_ur + n_ux + n_ba + n_br + n_bm;

edm_host_top #(
    .FAIR(1), .DST_W(4), .MEM_WORDS(MEM_WORDS)
) card_host (
    .clk(clk), .rst(rst), .node_id(16'd0),
    .req_valid(c_req_valid), .req_ready(c_req_ready), .req_write(c_req_write),
    .req_dst(16'd1), .req_addr(c_req_addr), .req_len(c_req_len), .req_local(c_req_local),
    .req_tag(c_req_tag), .req_rmw(1'b0), .req_op(4'd0), .req_opa(64'd0), .req_opb(64'd0),
    .wcomp_valid(c_wcomp_valid), .wcomp_tag(c_wcomp_tag),
    .rcomp_valid(c_rcomp_valid), .rcomp_tag(c_rcomp_tag), .rcomp_ok(c_rcomp_ok), .rcomp_data(c_rcomp_data),
    .wapp_valid(c_wapp_valid), .wapp_addr(c_wapp_addr), .wapp_words(c_wapp_words),
    .wapp_peer(c_wapp_peer), .wapp_last(c_wapp_last),
    .ext_en(1'b0), .ext_we(1'b0), .ext_addr({AW{1'b0}}), .ext_wdata(64'd0), .ext_rdata(c_ext_rdata),
    .enc_data(64'd0), .enc_hdr(2'b00), .enc_valid(1'b0), .enc_ready(c_enc_ready),
    .dec_data(c_dec_data), .dec_hdr(c_dec_hdr), .dec_valid(c_dec_valid),
    .line_tx_data(up_data[0 +: 64]), .line_tx_hdr(up_hdr[0 +: 2]),
    .line_rx_data(h_rx_data[0 +: 64]), .line_rx_hdr(h_rx_hdr[0 +: 2]), .line_rx_valid(1'b1),
    .cnt_unknown_grant(c_ug), .cnt_unknown_response(c_ur), .cnt_unexpected(c_ux),
    .cnt_bad_address(c_ba), .cnt_bad_request(c_br), .cnt_bad_message(c_bm),
    .cnt_rx_unknown(c_ru), .cnt_rx_truncated(c_rt), .cnt_preempted(c_pre)
);

// ---- the memory node (port 1)
wire          n_req_valid, n_req_ready, n_req_write;
wire [15:0]   n_req_dst, n_req_len, n_req_tag, n_wcomp_tag, n_wapp_words, n_wapp_peer;
wire [63:0]   n_req_addr, n_ext_wdata, n_ext_rdata;
wire [31:0]   n_req_local;
wire          n_wcomp_valid, n_wapp_valid, n_wapp_last, n_ext_en, n_ext_we;
wire [AW-1:0] n_wapp_addr, n_ext_addr;

edm_host_top #(
    .FAIR(1), .DST_W(4), .MEM_WORDS(MEM_WORDS)
) node_host (
    .clk(clk), .rst(rst), .node_id(16'd1),
    .req_valid(n_req_valid), .req_ready(n_req_ready), .req_write(n_req_write),
    .req_dst(n_req_dst), .req_addr(n_req_addr), .req_len(n_req_len), .req_local(n_req_local),
    .req_tag(n_req_tag), .req_rmw(1'b0), .req_op(4'd0), .req_opa(64'd0), .req_opb(64'd0),
    .wcomp_valid(n_wcomp_valid), .wcomp_tag(n_wcomp_tag),
    .rcomp_valid(n_rcomp_valid), .rcomp_tag(n_rcomp_tag), .rcomp_ok(n_rcomp_ok), .rcomp_data(n_rcomp_data),
    .wapp_valid(n_wapp_valid), .wapp_addr(n_wapp_addr), .wapp_words(n_wapp_words),
    .wapp_peer(n_wapp_peer), .wapp_last(n_wapp_last),
    .ext_en(n_ext_en), .ext_we(n_ext_we), .ext_addr(n_ext_addr), .ext_wdata(n_ext_wdata), .ext_rdata(n_ext_rdata),
    .enc_data(64'd0), .enc_hdr(2'b00), .enc_valid(1'b0), .enc_ready(n_enc_ready),
    .dec_data(n_dec_data), .dec_hdr(n_dec_hdr), .dec_valid(n_dec_valid),
    .line_tx_data(up_data[64 +: 64]), .line_tx_hdr(up_hdr[2 +: 2]),
    .line_rx_data(h_rx_data[64 +: 64]), .line_rx_hdr(h_rx_hdr[2 +: 2]), .line_rx_valid(1'b1),
    .cnt_unknown_grant(n_ug), .cnt_unknown_response(n_ur), .cnt_unexpected(n_ux),
    .cnt_bad_address(n_ba), .cnt_bad_request(n_br), .cnt_bad_message(n_bm),
    .cnt_rx_unknown(n_ru), .cnt_rx_truncated(n_rt), .cnt_preempted(n_pre)
);

wire [511:0] fq_tdata, fa_tdata;
wire [63:0]  fq_tkeep, fa_tkeep;
wire         fq_tvalid, fq_tready, fq_tlast, fa_tvalid, fa_tready, fa_tlast;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]  node_dropped, node_overflow;
wire         poll_done, fp_idle;
/* verilator lint_on UNUSEDSIGNAL */

// A reset released in clk_fp as well (the FIFOs' two sides together).
reg [1:0] rst_fp_reg = 2'b11;
always @(posedge clk_fp) rst_fp_reg <= {rst_fp_reg[0], rst};
wire rst_fp = rst_fp_reg[1] || rst;

clio_edm_front #(
    .AW(AW),
    .STAGE_WORD(AW'(196608)),
    .ANSWER_TIMEOUT(32'd20000)
) front_inst (
    .clk_edm(clk), .rst_edm(rst), .node_id(16'd1),
    .req_valid(n_req_valid), .req_ready(n_req_ready), .req_write(n_req_write), .req_dst(n_req_dst),
    .req_addr(n_req_addr), .req_len(n_req_len), .req_local(n_req_local), .req_tag(n_req_tag),
    .wcomp_valid(n_wcomp_valid), .wcomp_tag(n_wcomp_tag),
    .wapp_valid(n_wapp_valid), .wapp_addr(n_wapp_addr), .wapp_words(n_wapp_words),
    .wapp_peer(n_wapp_peer), .wapp_last(n_wapp_last),
    .ext_en(n_ext_en), .ext_we(n_ext_we), .ext_addr(n_ext_addr), .ext_wdata(n_ext_wdata), .ext_rdata(n_ext_rdata),
    .clk_fp(clk_fp), .rst_fp(rst_fp),
    .m_fp_tdata(fq_tdata), .m_fp_tkeep(fq_tkeep), .m_fp_tvalid(fq_tvalid), .m_fp_tready(fq_tready),
    .m_fp_tlast(fq_tlast),
    .s_fp_tdata(fa_tdata), .s_fp_tkeep(fa_tkeep), .s_fp_tvalid(fa_tvalid), .s_fp_tready(fa_tready),
    .s_fp_tlast(fa_tlast),
    .cnt_records(node_records), .cnt_bad(node_bad), .cnt_stray(node_stray),
    .cnt_timeouts(node_timeouts), .cnt_dropped(node_dropped), .cnt_overflow(node_overflow)
);

clio_fastpath_sim fp_inst (
    .clk(clk_fp), .rst(rst_fp),
    .cfg_table_base(64'h10000), .cfg_rx_base(64'h20000), .cfg_rx_slots(32'd16),
    .cfg_tx_base(64'h30000), .cfg_tx_slots(32'd16), .cfg_data_start(64'h100000),
    .cfg_data_end(64'h200000), .cfg_va_bits(6'd48), .cfg_class_shift(32'd0),
    .cfg_max_pid(32'd100), .cfg_mtu(16'd1450), .cfg_info(cfg_info),
    .cfg_streams_on(1'b1),   // long READs streamed, as the ZCU106 top does by default
    .poll(1'b0), .poll_done(poll_done), .idle(fp_idle),
    .s_axis_tdata(fq_tdata), .s_axis_tkeep(fq_tkeep), .s_axis_tvalid(fq_tvalid),
    .s_axis_tready(fq_tready), .s_axis_tlast(fq_tlast),
    .m_axis_tdata(fa_tdata), .m_axis_tkeep(fa_tkeep), .m_axis_tvalid(fa_tvalid),
    .m_axis_tready(fa_tready), .m_axis_tlast(fa_tlast)
);

// ---- the switch
/* verilator lint_off UNUSEDSIGNAL */
wire [127:0] l2_rx_data;
wire [3:0]   l2_rx_hdr;
wire [1:0]   l2_rx_valid, l2_tx_ready;
wire [31:0]  sw_refused, sw_unexpected, sw_grants, sw_overflow, sw_forwarded, sw_no_circuit;
/* verilator lint_on UNUSEDSIGNAL */

edm_switch_top #(
    .PORTS(2)
) switch_inst (
    .clk(clk), .rst(rst),
    .line_rx_data(sw_rx_data), .line_rx_hdr(sw_rx_hdr), .line_rx_valid(2'b11),
    .line_tx_data(down_data), .line_tx_hdr(down_hdr),
    .l2_rx_data(l2_rx_data), .l2_rx_hdr(l2_rx_hdr), .l2_rx_valid(l2_rx_valid),
    .l2_tx_data(128'd0), .l2_tx_hdr(4'd0), .l2_tx_valid(2'b00), .l2_tx_ready(l2_tx_ready),
    .cnt_notify_refused(sw_refused), .cnt_unexpected(sw_unexpected), .cnt_grants(sw_grants),
    .cnt_overflow(sw_overflow), .cnt_forwarded(sw_forwarded), .cnt_no_circuit(sw_no_circuit)
);

endmodule

`resetall
