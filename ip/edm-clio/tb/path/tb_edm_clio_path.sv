// tb_edm_clio_path: the whole Clio-over-EDM path in RTL: the card's translator (edm_clio_card) on its EDM host, the EDM switch, and the memory node's EDM front end (edm_clio_node) on its EDM host (bench only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Port 0: the card, edm_clio_card on edm_host_top (H2C in, C2H out). Port 1: the
// memory node, edm_clio_node on edm_host_top; the bench plays the Clio fast path
// behind it (fp_req: the request packets, fp_ans: the answers). Both on
// edm_switch_top, joined by links of LINK cycles each way, as the EDM fabric
// co-simulation (ip/edm/tb/edm_fabric) does.
module tb_edm_clio_path #(
    parameter LINK = 4,
    parameter MEM_WORDS = 262144,
    parameter AW = $clog2(MEM_WORDS),
    parameter [15:0] REREAD_BACKOFF = 16'd64,  // the card's first re-read wait (edm-clio-cosim backoff=)
    parameter [31:0] TIMEOUT = 32'd200000,
    parameter [31:0] ANSWER_TIMEOUT = 32'd2000
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [63:0] h2c_tdata,
    input  wire [7:0]  h2c_tkeep,
    input  wire        h2c_tvalid,
    input  wire        h2c_tlast,
    output wire        h2c_tready,
    output wire [63:0] c2h_tdata,
    output wire [7:0]  c2h_tkeep,
    output wire        c2h_tvalid,
    output wire        c2h_tlast,
    input  wire        c2h_tready,
    output wire        card_ready,
    output wire [31:0] card_refused,
    output wire [31:0] card_timeouts,
    output wire [31:0] card_bad,

    output wire [63:0] fp_req_tdata,
    output wire [7:0]  fp_req_tkeep,
    output wire        fp_req_tvalid,
    output wire        fp_req_tlast,
    input  wire        fp_req_tready,
    input  wire [63:0] fp_ans_tdata,
    input  wire [7:0]  fp_ans_tkeep,
    input  wire        fp_ans_tvalid,
    input  wire        fp_ans_tlast,
    output wire        fp_ans_tready,
    output wire [31:0] node_records,
    output wire [31:0] node_bad,
    output wire [31:0] node_stray,
    output wire [31:0] node_timeouts,
    output wire [31:0] node_dropped,
    output wire [31:0] node_overflow,
    output wire [31:0] host_errors
);

`include "edm_clio_links.svh"

// ---- the card
`include "edm_clio_card_side.svh"

/* verilator lint_off UNUSEDSIGNAL */
wire [63:0] c_rcomp_data, n_rcomp_data;
wire [15:0] n_rcomp_tag;
wire        n_rcomp_valid, n_rcomp_ok;
wire [1:0]  c_dec_hdr, n_dec_hdr;
wire [63:0] c_dec_data, n_dec_data;
wire        c_dec_valid, n_dec_valid, c_enc_ready, n_enc_ready;
/* verilator lint_on UNUSEDSIGNAL */

edm_host_top #(
    .FAIR(1),
    .DST_W(4),
    .MEM_WORDS(MEM_WORDS)
) card_host (
    .clk(clk), .rst(rst), .node_id(16'd0),
    .req_valid(c_req_valid), .req_ready(c_req_ready), .req_write(c_req_write),
    .req_dst(c_req_dst), .req_addr(c_req_addr), .req_len(c_req_len), .req_local(c_req_local),
    .req_tag(c_req_tag), .req_rmw(1'b0), .req_op(4'd0), .req_opa(64'd0), .req_opb(64'd0),
    .wcomp_valid(c_wcomp_valid), .wcomp_tag(c_wcomp_tag),
    .rcomp_valid(c_rcomp_valid), .rcomp_tag(c_rcomp_tag), .rcomp_ok(c_rcomp_ok), .rcomp_data(c_rcomp_data),
    .wapp_valid(c_wapp_valid), .wapp_addr(c_wapp_addr), .wapp_words(c_wapp_words),
    .wapp_peer(c_wapp_peer), .wapp_last(c_wapp_last),
    .ext_en(c_ext_en), .ext_we(c_ext_we), .ext_addr(c_ext_addr), .ext_wdata(c_ext_wdata), .ext_rdata(c_ext_rdata),
    .enc_data(64'd0), .enc_hdr(2'b00), .enc_valid(1'b0), .enc_ready(c_enc_ready),
    .dec_data(c_dec_data), .dec_hdr(c_dec_hdr), .dec_valid(c_dec_valid),
    .line_tx_data(up_data[0 +: 64]), .line_tx_hdr(up_hdr[0 +: 2]),
    .line_rx_data(h_rx_data[0 +: 64]), .line_rx_hdr(h_rx_hdr[0 +: 2]), .line_rx_valid(1'b1),
    .cnt_unknown_grant(c_ug), .cnt_unknown_response(c_ur), .cnt_unexpected(c_ux),
    .cnt_bad_address(c_ba), .cnt_bad_request(c_br), .cnt_bad_message(c_bm),
    .cnt_rx_unknown(c_ru), .cnt_rx_truncated(c_rt), .cnt_preempted(c_pre)
);

// ---- the memory node: edm_clio_node on its EDM host (the bench is its fast path)
wire          n_req_valid, n_req_ready, n_req_write;
wire [15:0]   n_req_dst, n_req_len, n_req_tag, n_wcomp_tag, n_wapp_words, n_wapp_peer;
wire [63:0]   n_req_addr, n_ext_wdata, n_ext_rdata;
wire [31:0]   n_req_local;
wire          n_wcomp_valid, n_wapp_valid, n_wapp_last, n_ext_en, n_ext_we;
wire [AW-1:0] n_wapp_addr, n_ext_addr;
/* verilator lint_off UNUSEDSIGNAL */
wire          n_done_valid, n_done_read;
wire [15:0]   n_done_peer, n_done_slot;
/* verilator lint_on UNUSEDSIGNAL */

edm_host_top #(
    .FAIR(1),
    .DST_W(4),
    .MEM_WORDS(MEM_WORDS)
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

edm_clio_node #(
    .AW(AW),
    .STAGE_WORD(AW'(200000)),
    .ANSWER_TIMEOUT(ANSWER_TIMEOUT)
) node_inst (
    .clk(clk), .rst(rst), .node_id(16'd1),
    .req_valid(n_req_valid), .req_ready(n_req_ready), .req_write(n_req_write), .req_dst(n_req_dst),
    .req_addr(n_req_addr), .req_len(n_req_len), .req_local(n_req_local), .req_tag(n_req_tag),
    .wcomp_valid(n_wcomp_valid), .wcomp_tag(n_wcomp_tag),
    .wapp_valid(n_wapp_valid), .wapp_addr(n_wapp_addr), .wapp_words(n_wapp_words),
    .wapp_peer(n_wapp_peer), .wapp_last(n_wapp_last),
    .ext_en(n_ext_en), .ext_we(n_ext_we), .ext_addr(n_ext_addr), .ext_wdata(n_ext_wdata), .ext_rdata(n_ext_rdata),
    .m_axis_tdata(fp_req_tdata), .m_axis_tkeep(fp_req_tkeep), .m_axis_tvalid(fp_req_tvalid),
    .m_axis_tlast(fp_req_tlast), .m_axis_tready(fp_req_tready),
    .s_axis_tdata(fp_ans_tdata), .s_axis_tkeep(fp_ans_tkeep), .s_axis_tvalid(fp_ans_tvalid),
    .s_axis_tlast(fp_ans_tlast), .s_axis_tready(fp_ans_tready),
    .done_valid(n_done_valid), .done_peer(n_done_peer), .done_slot(n_done_slot), .done_read(n_done_read),
    .cnt_records(node_records), .cnt_bad(node_bad), .cnt_stray(node_stray),
    .cnt_timeouts(node_timeouts), .cnt_dropped(node_dropped), .cnt_overflow(node_overflow)
);

/* verilator lint_off UNUSEDSIGNAL */
wire [127:0] l2_rx_data;
wire [3:0]   l2_rx_hdr;
wire [1:0]   l2_rx_valid, l2_tx_ready;
wire [31:0]  sw_refused, sw_unexpected, sw_grants, sw_overflow, sw_forwarded, sw_no_circuit;
/* verilator lint_on UNUSEDSIGNAL */

edm_switch_top #(
    .PORTS(2)
) switch_inst (
    .clk(clk),
    .rst(rst),
    .line_rx_data(sw_rx_data),
    .line_rx_hdr(sw_rx_hdr),
    .line_rx_valid(2'b11),
    .line_tx_data(down_data),
    .line_tx_hdr(down_hdr),
    .l2_rx_data(l2_rx_data),
    .l2_rx_hdr(l2_rx_hdr),
    .l2_rx_valid(l2_rx_valid),
    .l2_tx_data(128'd0),
    .l2_tx_hdr(4'd0),
    .l2_tx_valid(2'b00),
    .l2_tx_ready(l2_tx_ready),
    .cnt_notify_refused(sw_refused),
    .cnt_unexpected(sw_unexpected),
    .cnt_grants(sw_grants),
    .cnt_overflow(sw_overflow),
    .cnt_forwarded(sw_forwarded),
    .cnt_no_circuit(sw_no_circuit)
);

endmodule

`resetall
