// edm_host_top: EDM host-side PHY block layer: RX shim (edm_rx_demux) and message decoder
// into the host message engine (edm_host_engine, with its encoder), out through the TX shim
// (edm_tx_mux) that preempts the MAC's frames for memory units.
//
// Sits between the 64b/66b encoder/decoder and the scrambler/descrambler: line_tx/line_rx
// are unscrambled PCS blocks, one per cycle; enc_* is the MAC's encoder stream and dec_* the
// decoder's (frames released whole and consecutive, memory blocks removed).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_host_top #(
    parameter FAIR = 1,
    parameter DST_W = 4,
    parameter X = 3,
    parameter MSGS = 8,
    parameter SERVE = 8,
    parameter QDEPTH = 8,
    // grant queue: every chunk granted to this host (its writes' and the responses it serves)
    // may wait here while earlier units leave. The switch queues grant units for a port while
    // its downlink forwards chunks back to back (UDEPTH of edm_switch_top, default 64), one
    // per chunk of a message, then sends them in a burst: as deep as that queue (2X per other
    // node overflowed: a burst of 8 grants, the RREQ behind it dropped)
    parameter GDEPTH = 64,
    parameter CHUNK = 256,
    parameter MEM_WORDS = 512,
    parameter RX_DEPTH = 2048,
    parameter TAG_W = 16,
    // the engine's unit buffer (blocks; see edm_host_engine)
    parameter UDEPTH = 64,
    parameter AW = $clog2(MEM_WORDS)
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [15:0]       node_id,

    input  wire              req_valid,
    output wire              req_ready,
    input  wire              req_write,
    input  wire [15:0]       req_dst,
    input  wire [63:0]       req_addr,
    input  wire [15:0]       req_len,
    input  wire [31:0]       req_local,
    input  wire [TAG_W-1:0]  req_tag,
    input  wire              req_rmw,
    input  wire [3:0]        req_op,
    input  wire [63:0]       req_opa,
    input  wire [63:0]       req_opb,

    output wire              wcomp_valid,
    output wire [TAG_W-1:0]  wcomp_tag,
    output wire              rcomp_valid,
    output wire [TAG_W-1:0]  rcomp_tag,
    output wire              rcomp_ok,
    output wire [63:0]       rcomp_data,

    // a received WREQ chunk is in local memory (edm_host_engine)
    output wire              wapp_valid,
    output wire [AW-1:0]     wapp_addr,
    output wire [15:0]       wapp_words,
    output wire [15:0]       wapp_peer,
    output wire              wapp_last,

    input  wire              ext_en,
    input  wire              ext_we,
    input  wire [AW-1:0]     ext_addr,
    input  wire [63:0]       ext_wdata,
    output wire [63:0]       ext_rdata,

    // MAC side
    input  wire [63:0]       enc_data,
    input  wire [1:0]        enc_hdr,
    input  wire              enc_valid,
    output wire              enc_ready,
    output wire [63:0]       dec_data,
    output wire [1:0]        dec_hdr,
    output wire              dec_valid,

    // line side (towards the scrambler / from the descrambler)
    output wire [63:0]       line_tx_data,
    output wire [1:0]        line_tx_hdr,
    input  wire [63:0]       line_rx_data,
    input  wire [1:0]        line_rx_hdr,
    input  wire              line_rx_valid,

    output wire [31:0]       cnt_unknown_grant,
    output wire [31:0]       cnt_unknown_response,
    output wire [31:0]       cnt_unexpected,
    output wire [31:0]       cnt_bad_address,
    output wire [31:0]       cnt_bad_request,
    output wire [31:0]       cnt_bad_message,
    output wire [31:0]       cnt_rx_unknown,
    output wire [31:0]       cnt_rx_truncated,
    output wire [31:0]       cnt_preempted
);

initial begin
    if (FAIR != 0 && FAIR != 1) begin
        $error("FAIR must be 0 or 1");
        $finish;
    end
end

// ---- RX: shim, then messages
wire [63:0] rxm_data;
wire [1:0]  rxm_hdr;
wire [2:0]  rxm_class;
wire        rxm_valid;

/* verilator lint_off UNUSEDSIGNAL */
wire [1:0]  rxm_hdr_unused = rxm_hdr;
wire [31:0] cnt_stray_unused;
wire [31:0] cnt_bad_sync_unused;
wire [31:0] cnt_frames_unused;
wire [31:0] cnt_overflow_unused;
wire [31:0] cnt_idles_unused;
wire [1:0]  tx_src_unused;
/* verilator lint_on UNUSEDSIGNAL */

edm_rx_demux #(
    .DEPTH(RX_DEPTH)
) rx_inst (
    .clk(clk),
    .rst(rst),
    .in_data(line_rx_data),
    .in_hdr(line_rx_hdr),
    .in_valid(line_rx_valid),
    .mem_data(rxm_data),
    .mem_hdr(rxm_hdr),
    .mem_class(rxm_class),
    .mem_valid(rxm_valid),
    .dec_data(dec_data),
    .dec_hdr(dec_hdr),
    .dec_valid(dec_valid),
    .cnt_unknown(cnt_rx_unknown),
    .cnt_truncated(cnt_rx_truncated),
    .cnt_stray(cnt_stray_unused),
    .cnt_bad_sync(cnt_bad_sync_unused),
    .cnt_frames(cnt_frames_unused),
    .cnt_overflow(cnt_overflow_unused)
);

wire [63:0] body_data;
wire        body_valid;
wire        msg_valid;
wire        msg_bad_field;
wire        msg_bad_length;
wire [2:0]  msg_kind;
wire        msg_last;
wire [3:0]  msg_op;
wire [15:0] msg_peer;
wire [7:0]  msg_id;
wire [15:0] msg_len;
wire        ctl_valid;
wire        ctl_grant;
wire        ctl_bad_field;
wire [15:0] ctl_peer;
wire [7:0]  ctl_id;
wire [15:0] ctl_len;
wire [2:0]  ctl_kind;
wire [47:0] cur_head;

edm_msg_decoder dec_inst (
    .clk(clk),
    .rst(rst),
    .in_data(rxm_data),
    .in_class(rxm_class),
    .in_valid(rxm_valid),
    .body_data(body_data),
    .body_valid(body_valid),
    .msg_valid(msg_valid),
    .msg_bad_field(msg_bad_field),
    .msg_bad_length(msg_bad_length),
    .msg_kind(msg_kind),
    .msg_last(msg_last),
    .msg_op(msg_op),
    .msg_peer(msg_peer),
    .msg_id(msg_id),
    .msg_len(msg_len),
    .ctl_valid(ctl_valid),
    .ctl_grant(ctl_grant),
    .ctl_bad_field(ctl_bad_field),
    .ctl_peer(ctl_peer),
    .ctl_id(ctl_id),
    .ctl_len(ctl_len),
    .ctl_kind(ctl_kind),
    .cur_head(cur_head)
);

// a message start, aligned with the decoder's (registered) outputs for that block
reg rx_start_reg;

always_ff @(posedge clk) begin
    rx_start_reg <= rxm_valid && (rxm_class == 3'd1 || rxm_class == 3'd4);
    if (rst) begin
        rx_start_reg <= 1'b0;
    end
end

// ---- engine
wire [63:0] txm_data;
wire [1:0]  txm_hdr;
wire        txm_valid;
wire        txm_last;
wire [15:0] txm_len;
wire        txm_ready;

edm_host_engine #(
    .DST_W(DST_W),
    .X(X),
    .MSGS(MSGS),
    .SERVE(SERVE),
    .QDEPTH(QDEPTH),
    .GDEPTH(GDEPTH),
    .CHUNK(CHUNK),
    .MEM_WORDS(MEM_WORDS),
    .TAG_W(TAG_W),
    .UDEPTH(UDEPTH)
) engine_inst (
    .clk(clk),
    .rst(rst),
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
    .rx_start(rx_start_reg),
    .body_data(body_data),
    .body_valid(body_valid),
    .msg_valid(msg_valid),
    .msg_bad_field(msg_bad_field),
    .msg_bad_length(msg_bad_length),
    .msg_kind(msg_kind),
    .msg_last(msg_last),
    .msg_op(msg_op),
    .msg_peer(msg_peer),
    .msg_id(msg_id),
    .msg_len(msg_len),
    .ctl_valid(ctl_valid),
    .ctl_grant(ctl_grant),
    .ctl_bad_field(ctl_bad_field),
    .ctl_peer(ctl_peer),
    .ctl_id(ctl_id),
    .ctl_len(ctl_len),
    .ctl_kind(ctl_kind),
    .cur_head(cur_head),
    .mem_data(txm_data),
    .mem_hdr(txm_hdr),
    .mem_valid(txm_valid),
    .mem_last(txm_last),
    .mem_len(txm_len),
    .mem_ready(txm_ready),
    .cnt_unknown_grant(cnt_unknown_grant),
    .cnt_unknown_response(cnt_unknown_response),
    .cnt_unexpected(cnt_unexpected),
    .cnt_bad_address(cnt_bad_address),
    .cnt_bad_request(cnt_bad_request),
    .cnt_bad_message(cnt_bad_message)
);

// ---- TX shim
edm_tx_mux #(
    .FAIR(FAIR),
    .LEN_W(16)
) tx_inst (
    .clk(clk),
    .rst(rst),
    .enc_data(enc_data),
    .enc_hdr(enc_hdr),
    .enc_valid(enc_valid),
    .enc_ready(enc_ready),
    .mem_data(txm_data),
    .mem_hdr(txm_hdr),
    .mem_valid(txm_valid),
    .mem_last(txm_last),
    .mem_len(txm_len),
    .mem_ready(txm_ready),
    .out_data(line_tx_data),
    .out_hdr(line_tx_hdr),
    .out_src(tx_src_unused),
    .cnt_idles_reused(cnt_idles_unused),
    .cnt_preempted(cnt_preempted)
);

endmodule

`resetall
