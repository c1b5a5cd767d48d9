// tb_edm_clio_cosim: the translator (edm_clio_card) on an EDM host, a memory node's EDM host and the EDM switch, in RTL (bench only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Port 0: the card, edm_clio_card on edm_host_top (H2C in, C2H out). Port 1: a
// memory node's edm_host_top whose requester and memory the bench drives (it
// plays the Clio board behind the node's EDM port). Both on edm_switch_top,
// joined by links of LINK cycles each way, as the EDM fabric co-simulation
// (ip/edm/tb/edm_fabric) does.
module tb_edm_clio_cosim #(
    parameter LINK = 4,
    parameter MEM_WORDS = 262144,
    parameter AW = $clog2(MEM_WORDS),
    parameter [15:0] REREAD_BACKOFF = 16'd64,  // the card's first re-read wait (edm-clio-cosim backoff=)
    parameter [31:0] TIMEOUT = 32'd200000
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

    input  wire        n_req_valid,
    output wire        n_req_ready,
    input  wire [63:0] n_req_addr,
    input  wire [15:0] n_req_len,
    input  wire [31:0] n_req_local,
    input  wire [15:0] n_req_tag,
    output wire        n_wcomp_valid,
    output wire        n_wapp_valid,
    output wire [AW-1:0] n_wapp_addr,
    output wire [15:0] n_wapp_words,
    output wire [15:0] n_wapp_peer,
    output wire        n_wapp_last,
    output wire [31:0] host_errors
);

`include "edm_clio_links.svh"

// ---- the card
`include "edm_clio_card_side.svh"

/* verilator lint_off UNUSEDSIGNAL */
wire [63:0] c_rcomp_data, n_rcomp_data, n_ext_rdata;
wire [15:0] n_wcomp_tag, n_rcomp_tag;
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

// ---- the memory node's EDM port (the bench is its Clio board)
edm_host_top #(
    .FAIR(1),
    .DST_W(4),
    .MEM_WORDS(MEM_WORDS)
) node_host (
    .clk(clk), .rst(rst), .node_id(16'd1),
    .req_valid(n_req_valid), .req_ready(n_req_ready), .req_write(1'b1),
    .req_dst(16'd0), .req_addr(n_req_addr), .req_len(n_req_len), .req_local(n_req_local),
    .req_tag(n_req_tag), .req_rmw(1'b0), .req_op(4'd0), .req_opa(64'd0), .req_opb(64'd0),
    .wcomp_valid(n_wcomp_valid), .wcomp_tag(n_wcomp_tag),
    .rcomp_valid(n_rcomp_valid), .rcomp_tag(n_rcomp_tag), .rcomp_ok(n_rcomp_ok), .rcomp_data(n_rcomp_data),
    .wapp_valid(n_wapp_valid), .wapp_addr(n_wapp_addr), .wapp_words(n_wapp_words),
    .wapp_peer(n_wapp_peer), .wapp_last(n_wapp_last),
    .ext_en(1'b0), .ext_we(1'b0), .ext_addr({AW{1'b0}}), .ext_wdata(64'd0), .ext_rdata(n_ext_rdata),
    .enc_data(64'd0), .enc_hdr(2'b00), .enc_valid(1'b0), .enc_ready(n_enc_ready),
    .dec_data(n_dec_data), .dec_hdr(n_dec_hdr), .dec_valid(n_dec_valid),
    .line_tx_data(up_data[64 +: 64]), .line_tx_hdr(up_hdr[2 +: 2]),
    .line_rx_data(h_rx_data[64 +: 64]), .line_rx_hdr(h_rx_hdr[2 +: 2]), .line_rx_valid(1'b1),
    .cnt_unknown_grant(n_ug), .cnt_unknown_response(n_ur), .cnt_unexpected(n_ux),
    .cnt_bad_address(n_ba), .cnt_bad_request(n_br), .cnt_bad_message(n_bm),
    .cnt_rx_unknown(n_ru), .cnt_rx_truncated(n_rt), .cnt_preempted(n_pre)
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
