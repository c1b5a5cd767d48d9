// edm_u200_port: one EDM port of the U200 card between a transceiver's 64b/66b gearbox and the EDM host stack.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// RX (recovered clock rx_clk): gearbox blocks -> edm_block_lock (drives the
//     gearbox slip) -> edm_scrambler (descramble) -> edm_link_monitor (hi-BER:
//     16 bad sync headers in 125 us take the link down, sticky until reset)
//     -> edm_block_cdc (to tx_clk, idle blocks deleted to match rates).
// TX (tx_clk): edm_host_top line side -> edm_scrambler -> gearbox.
// edm_host_top (tx_clk) is the EDM host stack: requester (req_* /
// wcomp_* / rcomp_*) and memory node serving its local memory (ext_* is the
// local side of that memory; wapp_* reports received writes applied to it). There is no Ethernet MAC on the card: the
// frame path of the stack is idle (nothing to send, received frames
// dropped), so the port carries EDM memory traffic only.
// link_up (rx_clk domain): block lock and no hi-BER.
// Resets: tx_rst and rx_rst synchronous to their clocks, active high.
module edm_u200_port #(
    parameter SLIP_WAIT = 64,
    parameter WINDOW = 48828,
    parameter CDC_DEPTH = 32,
    parameter MEM_WORDS = 512,
    parameter TAG_W = 16,
    parameter AW = $clog2(MEM_WORDS)
) (
    input  wire             tx_clk,
    input  wire             tx_rst,
    input  wire             rx_clk,
    input  wire             rx_rst,
    input  wire [15:0]      node_id,

    // Transceiver gearbox.
    output wire [63:0]      gt_tx_data,
    output wire [1:0]       gt_tx_hdr,
    input  wire [63:0]      gt_rx_data,
    input  wire [1:0]       gt_rx_hdr,
    input  wire             gt_rx_valid,
    output wire             gt_rx_slip,
    output wire             link_up,

    // EDM requests and completions, local memory (tx_clk).
    input  wire             req_valid,
    output wire             req_ready,
    input  wire             req_write,
    input  wire [15:0]      req_dst,
    input  wire [63:0]      req_addr,
    input  wire [15:0]      req_len,
    input  wire [31:0]      req_local,
    input  wire [TAG_W-1:0] req_tag,
    input  wire             req_rmw,
    input  wire [3:0]       req_op,
    input  wire [63:0]      req_opa,
    input  wire [63:0]      req_opb,
    output wire             wcomp_valid,
    output wire [TAG_W-1:0] wcomp_tag,
    output wire             rcomp_valid,
    output wire [TAG_W-1:0] rcomp_tag,
    output wire             rcomp_ok,
    output wire [63:0]      rcomp_data,
    // A received WREQ chunk is in local memory (edm_host_engine).
    output wire             wapp_valid,
    output wire [AW-1:0]    wapp_addr,
    output wire [15:0]      wapp_words,
    output wire [15:0]      wapp_peer,
    output wire             wapp_last,
    input  wire             ext_en,
    input  wire             ext_we,
    input  wire [AW-1:0]    ext_addr,
    input  wire [63:0]      ext_wdata,
    output wire [63:0]      ext_rdata
);

// ---------------------------------------------------------------------------
// RX, recovered clock.
// ---------------------------------------------------------------------------
wire [63:0] lock_data;
wire [1:0]  lock_hdr;
wire        lock_valid;
wire        locked;

edm_block_lock #(
    .SLIP_WAIT(SLIP_WAIT)
) edm_block_lock_inst (
    .clk(rx_clk),
    .rst(rx_rst),
    .in_data(gt_rx_data),
    .in_hdr(gt_rx_hdr),
    .in_valid(gt_rx_valid),
    .slip(gt_rx_slip),
    .locked(locked),
    .out_data(lock_data),
    .out_hdr(lock_hdr),
    .out_valid(lock_valid)
);

wire [63:0] des_data;
wire [1:0]  des_hdr;
wire        des_valid;

edm_scrambler #(
    .DESCRAMBLE(1)
) edm_descrambler_inst (
    .clk(rx_clk),
    .rst(rx_rst),
    .in_data(lock_data),
    .in_hdr(lock_hdr),
    .in_valid(lock_valid),
    .out_data(des_data),
    .out_hdr(des_hdr),
    .out_valid(des_valid)
);

wire [63:0] mon_data;
wire [1:0]  mon_hdr;
wire        mon_valid;
wire        link_down;

edm_link_monitor #(
    .WINDOW(WINDOW),
    .THRESHOLD(16)
) edm_link_monitor_inst (
    .clk(rx_clk),
    .rst(rx_rst),
    .in_data(des_data),
    .in_hdr(des_hdr),
    .in_valid(des_valid),
    .out_data(mon_data),
    .out_hdr(mon_hdr),
    .out_valid(mon_valid),
    .link_down(link_down)
);

assign link_up = locked && !link_down;

wire [63:0] line_rx_data;
wire [1:0]  line_rx_hdr;
wire        line_rx_valid;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] cnt_deleted;
wire [31:0] cnt_overflow;
/* verilator lint_on UNUSEDSIGNAL */

edm_block_cdc #(
    .DEPTH(CDC_DEPTH)
) edm_block_cdc_inst (
    .wr_clk(rx_clk),
    .wr_rst(rx_rst),
    .in_data(mon_data),
    .in_hdr(mon_hdr),
    .in_valid(mon_valid),
    .cnt_deleted(cnt_deleted),
    .cnt_overflow(cnt_overflow),
    .rd_clk(tx_clk),
    .rd_rst(tx_rst),
    .out_data(line_rx_data),
    .out_hdr(line_rx_hdr),
    .out_valid(line_rx_valid)
);

// ---------------------------------------------------------------------------
// EDM host stack and TX, tx_clk.
// ---------------------------------------------------------------------------
wire [63:0] line_tx_data;
wire [1:0]  line_tx_hdr;
/* verilator lint_off UNUSEDSIGNAL */
wire        enc_ready;
wire [63:0] dec_data;
wire [1:0]  dec_hdr;
wire        dec_valid;
wire [31:0] cnt_unknown_grant, cnt_unknown_response, cnt_unexpected, cnt_bad_address;
wire [31:0] cnt_bad_request, cnt_bad_message, cnt_rx_unknown, cnt_rx_truncated, cnt_preempted;
wire        scr_valid;
/* verilator lint_on UNUSEDSIGNAL */

edm_host_top #(
    .MEM_WORDS(MEM_WORDS),
    .TAG_W(TAG_W)
) edm_host_top_inst (
    .clk(tx_clk),
    .rst(tx_rst),
    .node_id(node_id),
    .req_valid(req_valid),
    .req_ready(req_ready),
    .req_write(req_write),
    .req_dst(req_dst),
    .req_addr(req_addr),
    .req_len(req_len),
    .req_local(req_local),
    .req_tag(req_tag),
    .req_rmw(req_rmw),
    .req_op(req_op),
    .req_opa(req_opa),
    .req_opb(req_opb),
    .wcomp_valid(wcomp_valid),
    .wcomp_tag(wcomp_tag),
    .rcomp_valid(rcomp_valid),
    .rcomp_tag(rcomp_tag),
    .rcomp_ok(rcomp_ok),
    .rcomp_data(rcomp_data),
    .wapp_valid(wapp_valid),
    .wapp_addr(wapp_addr),
    .wapp_words(wapp_words),
    .wapp_peer(wapp_peer),
    .wapp_last(wapp_last),
    .ext_en(ext_en),
    .ext_we(ext_we),
    .ext_addr(ext_addr),
    .ext_wdata(ext_wdata),
    .ext_rdata(ext_rdata),
    // No MAC: no frames to send.
    .enc_data(64'd0),
    .enc_hdr(2'b00),
    .enc_valid(1'b0),
    .enc_ready(enc_ready),
    .dec_data(dec_data),
    .dec_hdr(dec_hdr),
    .dec_valid(dec_valid),
    .line_tx_data(line_tx_data),
    .line_tx_hdr(line_tx_hdr),
    .line_rx_data(line_rx_data),
    .line_rx_hdr(line_rx_hdr),
    .line_rx_valid(line_rx_valid),
    .cnt_unknown_grant(cnt_unknown_grant),
    .cnt_unknown_response(cnt_unknown_response),
    .cnt_unexpected(cnt_unexpected),
    .cnt_bad_address(cnt_bad_address),
    .cnt_bad_request(cnt_bad_request),
    .cnt_bad_message(cnt_bad_message),
    .cnt_rx_unknown(cnt_rx_unknown),
    .cnt_rx_truncated(cnt_rx_truncated),
    .cnt_preempted(cnt_preempted)
);

edm_scrambler #(
    .DESCRAMBLE(0)
) edm_scrambler_inst (
    .clk(tx_clk),
    .rst(tx_rst),
    .in_data(line_tx_data),
    .in_hdr(line_tx_hdr),
    .in_valid(!tx_rst),
    .out_data(gt_tx_data),
    .out_hdr(gt_tx_hdr),
    .out_valid(scr_valid)
);

endmodule

`resetall
