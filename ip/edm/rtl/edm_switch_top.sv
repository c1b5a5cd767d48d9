// edm_switch_top: EDM switch PHY (EDM §3.1, §3.2.2): per-port RX shims, virtual-circuit
// forwarding, the notification path into the priority-PIM scheduler, grants back to the
// sources, and per-port TX shims.
//
// Ingress (each port p): edm_rx_demux splits memory blocks from standard frames; frames go
// out on l2_rx_* whole and unchanged. Memory blocks enter edm_sw_forward: granted WREQ/RRES
// chunks are forwarded to their egress with a fixed latency; the rest is passed on here:
//   * /N/ (peer d, id, size): a notification p -> d for a WREQ;
//   * RREQ (/MS/ .. /MT/, peer m): the implicit notification m -> p for its RRES; the
//     request's blocks are kept, with peer rewritten to p, and become the implicit grant
//     of the response's first chunk.
// Each notification takes an entry of the ingress port's pending table (kind, id, buffered
// request) whose index is the scheduler tag, and enters edm_pim_sched in the cycle it
// arrives: the scheduler inserts one notification per port per cycle (EDM's per-port
// notification queues). An RREQ is notified at its /MS/ header.
// The scheduler starts an iteration (3 cycles) whenever a request is possible. For a match
// s -> d the switch opens
// the circuit at ingress s and queues, for egress s, the /G/ (peer d) or the buffered RREQ.
// Port s is released (rel_src_mask) when the chunk's wire time is over minus one iteration
// (timed from the accept step, so the scheduler sees it free when the model does), port
// d SLACK cycles later (room on its downlink for /G/ and RREQ blocks), as in the Rust model.
// Each ingress port has SLOTS >= 2X(PORTS-1) pending entries (X writes to and X reads from
// every other port), so a well-behaved host is never refused, and as many grant units per
// egress (UDEPTH). Egress (each port): forwarded messages keep their fixed latency unless a
// grant unit is partly sent; grant units (/G/, re-sent RREQ; 1 to 4 blocks) go out when no
// forwarded message is due, whole, as the model's TX FIFO sends them. Everything leaves through edm_tx_mux with strict memory priority (FAIR = 0), so
// frames from l2_tx_* are preempted at block granularity and still arrive whole.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_switch_top #(
    parameter PORTS = 4,
    parameter X = 3,
    parameter CHUNK = 256,
    parameter SRPT = 0,
    parameter SCHED_DEPTH = 6,
    parameter CIRC = 16,
    parameter SLOTS = 64,
    // grant units waiting per egress: every pending notification whose source is that port
    // can be matched while the egress forwards a message, so at least 2X(PORTS - 1)
    parameter UDEPTH = 64,
    parameter FWD_LAT = 1,
    parameter SLACK = 2,
    parameter RX_DEPTH = 2048,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1
) (
    input  wire                   clk,
    input  wire                   rst,

    // line side per port (unscrambled PCS blocks, one per cycle)
    input  wire [PORTS*64-1:0]    line_rx_data,
    input  wire [PORTS*2-1:0]     line_rx_hdr,
    input  wire [PORTS-1:0]       line_rx_valid,
    output wire [PORTS*64-1:0]    line_tx_data,
    output wire [PORTS*2-1:0]     line_tx_hdr,

    // L2 side per port: frames received (decoder) and frames to send (encoder)
    output wire [PORTS*64-1:0]    l2_rx_data,
    output wire [PORTS*2-1:0]     l2_rx_hdr,
    output wire [PORTS-1:0]       l2_rx_valid,
    input  wire [PORTS*64-1:0]    l2_tx_data,
    input  wire [PORTS*2-1:0]     l2_tx_hdr,
    input  wire [PORTS-1:0]       l2_tx_valid,
    output wire [PORTS-1:0]       l2_tx_ready,

    output reg  [31:0]            cnt_notify_refused,
    output reg  [31:0]            cnt_unexpected,
    output reg  [31:0]            cnt_grants,
    output reg  [31:0]            cnt_overflow,
    output wire [31:0]            cnt_forwarded,
    output wire [31:0]            cnt_no_circuit
);

import edm_pkg::*;

localparam SW = $clog2(SLOTS);
localparam TAG_W = PW + SW;
localparam UW = $clog2(UDEPTH);
localparam NSLOT = PORTS * SLOTS;
localparam [65:0] IDLE_BLK = {SYNC_CTRL, 56'd0, BT_IDLE};

initial begin
    if (PORTS < 2 || (1 << PW) < PORTS || (1 << SW) != SLOTS ||
        (1 << UW) != UDEPTH || X < 1 || CHUNK < 8 || FWD_LAT < 1 || SCHED_DEPTH < 2 * X ||
        CIRC < 2 * X || SLOTS < 2 * X * (PORTS - 1) || UDEPTH < 2 * X * (PORTS - 1)) begin
        $error("bad parameters: PORTS >= 2; SLOTS, UDEPTH powers of two; X >= 1; SCHED_DEPTH, CIRC >= 2X; SLOTS, UDEPTH >= 2X(PORTS-1)");
        $finish;
    end
end

// ---------------------------------------------------------------- RX shims
wire [PORTS*64-1:0] rxm_data;
wire [PORTS*2-1:0]  rxm_hdr;
wire [PORTS*3-1:0]  rxm_class;
wire [PORTS-1:0]    rxm_valid;

genvar gp;
generate
    for (gp = 0; gp < PORTS; gp = gp + 1) begin : port
        /* verilator lint_off UNUSEDSIGNAL */
        wire [31:0] c_unknown, c_truncated, c_stray, c_bad_sync, c_frames, c_overflow;
        wire [31:0] c_idles, c_preempted;
        wire [1:0]  tx_src;
        wire        mem_ready_unused;
        /* verilator lint_on UNUSEDSIGNAL */

        edm_rx_demux #(
            .DEPTH(RX_DEPTH)
        ) rx_inst (
            .clk(clk),
            .rst(rst),
            .in_data(line_rx_data[gp*64 +: 64]),
            .in_hdr(line_rx_hdr[gp*2 +: 2]),
            .in_valid(line_rx_valid[gp]),
            .mem_data(rxm_data[gp*64 +: 64]),
            .mem_hdr(rxm_hdr[gp*2 +: 2]),
            .mem_class(rxm_class[gp*3 +: 3]),
            .mem_valid(rxm_valid[gp]),
            .dec_data(l2_rx_data[gp*64 +: 64]),
            .dec_hdr(l2_rx_hdr[gp*2 +: 2]),
            .dec_valid(l2_rx_valid[gp]),
            .cnt_unknown(c_unknown),
            .cnt_truncated(c_truncated),
            .cnt_stray(c_stray),
            .cnt_bad_sync(c_bad_sync),
            .cnt_frames(c_frames),
            .cnt_overflow(c_overflow)
        );

        edm_tx_mux #(
            .FAIR(0),
            .LEN_W(16)
        ) tx_inst (
            .clk(clk),
            .rst(rst),
            .enc_data(l2_tx_data[gp*64 +: 64]),
            .enc_hdr(l2_tx_hdr[gp*2 +: 2]),
            .enc_valid(l2_tx_valid[gp]),
            .enc_ready(l2_tx_ready[gp]),
            .mem_data(eg_blk[gp][63:0]),
            .mem_hdr(eg_blk[gp][65:64]),
            .mem_valid(eg_valid[gp]),
            .mem_last(eg_last[gp]),
            .mem_len(16'd1),
            .mem_ready(mem_ready_unused),
            .out_data(line_tx_data[gp*64 +: 64]),
            .out_hdr(line_tx_hdr[gp*2 +: 2]),
            .out_src(tx_src),
            .cnt_idles_reused(c_idles),
            .cnt_preempted(c_preempted)
        );
    end
endgenerate

// ---------------------------------------------------------------- forwarding
// The notification path reads the RX shims' memory blocks directly (pass_now: the blocks the
// forwarding does not take, in the cycle they arrive), not the forwarding's registered copy.
wire [PORTS-1:0]    pass_now;
/* verilator lint_off UNUSEDSIGNAL */
wire [PORTS-1:0]    pass_valid;
wire [PORTS*3-1:0]  pass_class;
wire [PORTS*2-1:0]  pass_hdr;
wire [31:0]         fwd_overflow;
wire [PORTS*64-1:0] pass_data;
/* verilator lint_on UNUSEDSIGNAL */
wire [PORTS-1:0]    fwd_valid;
wire [PORTS*2-1:0]  fwd_hdr;
wire [PORTS*64-1:0] fwd_data;

reg  [PORTS-1:0]    gr_valid_reg;
reg  [PORTS*3-1:0]  gr_kind_reg;
reg  [PORTS*8-1:0]  gr_id_reg;
reg  [PORTS*PW-1:0] gr_dst_reg;
reg  [PORTS*16-1:0] gr_len_reg;
reg  [PORTS-1:0]    mid_unit;

edm_sw_forward #(
    .PORTS(PORTS),
    .CIRC(CIRC),
    .LAT(FWD_LAT)
) fwd_inst (
    .clk(clk),
    .rst(rst),
    .in_valid(rxm_valid),
    .in_class(rxm_class),
    .in_hdr(rxm_hdr),
    .in_data(rxm_data),
    .grant_valid(gr_valid_reg),
    .grant_kind(gr_kind_reg),
    .grant_id(gr_id_reg),
    .grant_dst(gr_dst_reg),
    .grant_len(gr_len_reg),
    .mid_unit(mid_unit),
    .pass_valid(pass_valid),
    .pass_now(pass_now),
    .pass_class(pass_class),
    .pass_hdr(pass_hdr),
    .pass_data(pass_data),
    .fwd_valid(fwd_valid),
    .fwd_hdr(fwd_hdr),
    .fwd_data(fwd_data),
    .cnt_forwarded(cnt_forwarded),
    .cnt_no_circuit(cnt_no_circuit),
    .cnt_overflow(fwd_overflow)
);

// ---------------------------------------------------------------- scheduler
// the notifications offered to the scheduler this cycle, one lane per ingress port: the head
// of its FIFO, straight from the FIFO (no register between them)
reg  [PORTS-1:0]       nt_valid;
reg  [PORTS*PW-1:0]    nt_src;
reg  [PORTS*PW-1:0]    nt_dst;
reg  [PORTS*32-1:0]    nt_bytes;
reg  [PORTS*TAG_W-1:0] nt_tag;
wire                iter_eligible;
reg  [31:0]         now_reg;
wire [PORTS-1:0]    nt_refused;
reg  [PORTS-1:0]    rel_src_mask;
reg  [PORTS-1:0]    rel_dst_mask;
wire [PORTS-1:0]    acc_valid;
wire [PORTS*PW-1:0] acc_dst;
wire [PORTS*TAG_W-1:0] acc_tag;
/* verilator lint_off UNUSEDSIGNAL */
wire [PORTS*32-1:0] acc_len;
/* verilator lint_on UNUSEDSIGNAL */
wire                iter_busy;
wire                iter_done;
/* verilator lint_off UNUSEDSIGNAL */
wire [PORTS-1:0]    req_valid;
wire [PORTS*PW-1:0] req_src;
wire [PORTS*32-1:0] m_len;
/* verilator lint_on UNUSEDSIGNAL */
wire [PORTS-1:0]    m_held;           // held until the next iteration's accept step
wire [PORTS-1:0]    m_valid = iter_done ? m_held : {PORTS{1'b0}};
wire [PORTS*PW-1:0] m_dst;
wire [PORTS*TAG_W-1:0] m_tag;
wire [PORTS-1:0]    m_last;

edm_pim_sched #(
    .PORTS(PORTS),
    .DEPTH(SCHED_DEPTH),
    .SRPT(SRPT),
    .CHUNK(CHUNK),
    .TAG_W(TAG_W),
    .NOTIFS(PORTS)
) pim_inst (
    .clk(clk),
    .rst(rst),
    .notif_valid(nt_valid),
    .notif_src(nt_src),
    .notif_dst(nt_dst),
    .notif_bytes(nt_bytes),
    .notif_tag(nt_tag),
    .notif_time(now_reg),
    .notif_refused(nt_refused),
    .rel_src_valid(1'b0),
    .rel_src({PW{1'b0}}),
    .rel_dst_valid(1'b0),
    .rel_dst({PW{1'b0}}),
    .rel_src_mask(rel_src_mask),
    .rel_dst_mask(rel_dst_mask),
    .iter_start(!iter_busy && iter_eligible),
    .iter_busy(iter_busy),
    .iter_done(iter_done),
    .iter_eligible(iter_eligible),
    .req_valid(req_valid),
    .req_src(req_src),
    .match_valid(m_held),
    .match_dst(m_dst),
    .match_tag(m_tag),
    .match_len(m_len),
    .match_last(m_last),
    .acc_valid(acc_valid),
    .acc_dst(acc_dst),
    .acc_tag(acc_tag),
    .acc_len(acc_len)
);

// ---------------------------------------------------------------- pending table
// entry k of ingress p at p*SLOTS + k; its index is the scheduler tag {p, k}
reg [NSLOT-1:0] sl_valid_reg;
reg             sl_rres [0:NSLOT-1];      // 0: WREQ (from /N/), 1: RRES (from RREQ)
reg [7:0]       sl_id [0:NSLOT-1];
reg             sl_has_req [0:NSLOT-1];   // the buffered RREQ has not been sent yet
reg [2:0]       sl_n [0:NSLOT-1];
reg             sl_bad [0:NSLOT-1];       // its request was cut short: no implicit grant to send
reg [65:0]      sl_blk [0:NSLOT*4-1];

// request capture per ingress (RREQ and RMWREQ are at most 4 blocks): the notification is
// made from the /MS/ header (peer, id, len), as the model's is from the message head; the
// later blocks are written into the entry as they arrive (a match is at least 5 cycles
// after the /MS/, when all of them are in)
reg [2:0]       cap_n_reg [0:PORTS-1];
reg [PORTS-1:0] cap_ok_reg;                 // the /MS/ took an entry
reg [SW-1:0]    cap_slot_reg [0:PORTS-1];

// local units per egress (a /G/, or a buffered request of up to 4 blocks)
reg [2:0]       lu_n [0:PORTS*UDEPTH-1];
reg [65:0]      lu_blk [0:PORTS*UDEPTH*4-1];
reg [UW:0]      lu_wr_reg [0:PORTS-1];
reg [UW:0]      lu_rd_reg [0:PORTS-1];
reg [PORTS-1:0] lu_active_reg;
reg [2:0]       lu_idx_reg [0:PORTS-1];
reg [PORTS-1:0] fwd_open_reg;

// release timers
reg [15:0]      src_tmr_reg [0:PORTS-1];
reg [15:0]      dst_tmr_reg [0:PORTS-1];
reg [PORTS-1:0] src_arm_reg, dst_arm_reg;

// ---------------------------------------------------------------- ingress parse
reg [PORTS-1:0]  in_notify;       // a notification is complete this cycle
reg              in_rres [0:PORTS-1];
reg [PW-1:0]     in_src [0:PORTS-1];
reg [PW-1:0]     in_dst [0:PORTS-1];
reg [15:0]       in_bytes [0:PORTS-1];
reg [7:0]        in_id [0:PORTS-1];
reg [PORTS-1:0]  in_bad;          // a block the switch never takes (counted)
reg [2:0]        cap_n_next [0:PORTS-1];
reg [PORTS-1:0]  cap_write;       // store the block at cap_n_reg of the captured entry
reg [PORTS-1:0]  cap_cut;         // the request being captured was cut short
reg [65:0]       cap_data [0:PORTS-1];
reg [PORTS-1:0]  slot_ok;
reg [SW-1:0]     slot_free [0:PORTS-1];

always @* begin : ingress_parse
    integer p, k;
    reg [2:0] cls;
    reg [63:0] d;
    for (p = 0; p < PORTS; p = p + 1) begin
        cls = rxm_class[p*3 +: 3];
        d = rxm_data[p*64 +: 64];
        in_notify[p] = 1'b0;
        in_rres[p] = 1'b0;
        in_src[p] = 0;
        in_dst[p] = 0;
        in_bytes[p] = 0;
        in_id[p] = 0;
        in_bad[p] = 1'b0;
        cap_n_next[p] = cap_n_reg[p];
        cap_write[p] = 1'b0;
        cap_cut[p] = 1'b0;
        cap_data[p] = {SYNC_CTRL, d};
        if (rxm_valid[p] && pass_now[p]) begin
            // anything but /MD/ /MT/ ends a request being captured
            cap_cut[p] = cap_n_reg[p] != 0 && cls != 3'd2 && cls != 3'd3;
            case (cls)
                3'd5: begin
                    // /N/ (peer, id, size)
                    cap_n_next[p] = 0;
                    if (d[CB_PEER_LSB +: 16] < 16'(PORTS) && d[CB_LEN_LSB +: 16] != 0) begin
                        in_notify[p] = 1'b1;
                        in_src[p] = p[PW-1:0];
                        in_dst[p] = d[CB_PEER_LSB +: PW];
                        in_bytes[p] = d[CB_LEN_LSB +: 16];
                        in_id[p] = d[CB_ID_LSB +: 8];
                    end else begin
                        in_bad[p] = 1'b1;
                    end
                end
                3'd1: begin
                    // /MS/ of a request: the notification memory node -> requester; the block
                    // is kept with the peer rewritten to the requester
                    cap_n_next[p] = 0;
                    if ((d[MSG_KIND_LSB +: 3] == MSG_KIND_RREQ || d[MSG_KIND_LSB +: 3] == MSG_KIND_RMWREQ) &&
                            d[MSG_PEER_LSB +: 16] < 16'(PORTS)) begin
                        cap_data[p][MSG_PEER_LSB +: 16] = 16'(p);
                        cap_n_next[p] = 3'd1;
                        in_notify[p] = 1'b1;
                        in_rres[p] = 1'b1;
                        in_src[p] = d[MSG_PEER_LSB +: PW];
                        in_dst[p] = p[PW-1:0];
                        in_bytes[p] = d[MSG_LEN_LSB +: 16];
                        in_id[p] = d[MSG_ID_LSB +: 8];
                    end else begin
                        in_bad[p] = 1'b1;
                    end
                end
                3'd2, 3'd3: begin
                    if (cap_n_reg[p] != 0 && cap_n_reg[p] < 3'd4) begin
                        cap_write[p] = 1'b1;
                        cap_data[p] = {(cls == 3'd2) ? SYNC_DATA : SYNC_CTRL, d};
                        cap_n_next[p] = (cls == 3'd3) ? 3'd0 : cap_n_reg[p] + 3'd1;
                    end else begin
                        cap_cut[p] = cap_n_reg[p] != 0;
                        cap_n_next[p] = 0;
                        in_bad[p] = 1'b1;
                    end
                end
                default: begin
                    // /G/ (hosts never send grants), /MST/ (no request is one block)
                    cap_n_next[p] = 0;
                    in_bad[p] = 1'b1;
                end
            endcase
        end
        slot_ok[p] = 1'b0;
        slot_free[p] = 0;
        for (k = SLOTS - 1; k >= 0; k = k - 1) begin
            if (!sl_valid_reg[p*SLOTS+k]) begin
                slot_ok[p] = 1'b1;
                slot_free[p] = k[SW-1:0];
            end
        end
    end
end

// ---------------------------------------------------------------- notification lanes
// Every port hands the notification arriving this cycle straight to the scheduler, which
// inserts them all (EDM §3.1.2: the switch may receive a notification on every port in a
// cycle, so the notification queues take them in parallel); a notification is inserted in
// the cycle its block arrives, and one the scheduler refuses frees its pending entry.
always @* begin : lanes
    integer p;
    for (p = 0; p < PORTS; p = p + 1) begin
        nt_valid[p] = in_notify[p] && slot_ok[p];
        nt_src[p*PW +: PW] = in_src[p];
        nt_dst[p*PW +: PW] = in_dst[p];
        nt_bytes[p*32 +: 32] = {16'd0, in_bytes[p]};
        nt_tag[p*TAG_W +: TAG_W] = {p[PW-1:0], slot_free[p]};
    end
end

// ---------------------------------------------------------------- match handling
// message_blocks(body) - min(that, 3): cycles until the source may be granted again
function automatic [15:0] release_delay(input rres, input [15:0] len);
    reg [16:0] body, blocks;
    begin
        body = rres ? {1'b0, len} : {1'b0, len} + 17'd8;
        blocks = (body <= 1) ? 17'd1 : 17'd1 + ((body + 17'd7) >> 3);
        release_delay = (blocks > 17'd3) ? 16'(blocks - 17'd3) : 16'd0;
    end
endfunction

// ---------------------------------------------------------------- egress feed
reg [PORTS-1:0]  eg_valid;
reg [PORTS-1:0]  eg_last;
reg [65:0]       eg_blk [0:PORTS-1];
reg [PORTS-1:0]  lu_start;
reg [PORTS-1:0]  eg_conflict;

always @* begin : egress_feed
    integer e, i;
    reg [2:0] n;
    for (e = 0; e < PORTS; e = e + 1) begin
        i = e * UDEPTH + 32'(lu_rd_reg[e][UW-1:0]);
        n = lu_n[i];
        lu_start[e] = !fwd_valid[e] && !fwd_open_reg[e] && !lu_active_reg[e] && lu_wr_reg[e] != lu_rd_reg[e];
        eg_conflict[e] = fwd_valid[e] && lu_active_reg[e];
        eg_valid[e] = 1'b0;
        eg_last[e] = 1'b0;
        eg_blk[e] = IDLE_BLK;
        if (fwd_valid[e]) begin
            eg_valid[e] = 1'b1;
            eg_blk[e] = {fwd_hdr[e*2 +: 2], fwd_data[e*64 +: 64]};
            eg_last[e] = fwd_hdr[e*2 +: 2] == SYNC_CTRL &&
                (fwd_data[e*64 +: 8] == BT_MT || fwd_data[e*64 +: 8] == BT_MST);
        end else if (lu_active_reg[e] || lu_start[e]) begin
            eg_valid[e] = 1'b1;
            eg_blk[e] = lu_blk[i*4 + (lu_start[e] ? 0 : 32'(lu_idx_reg[e]))];
            eg_last[e] = lu_start[e] ? n == 3'd1 : lu_idx_reg[e] + 3'd1 == n;
        end
        // a forwarded message waits only for a grant unit partly sent at the end of this cycle
        // (the model's mid_unit); between units it goes first, as the model's forwarder does
        mid_unit[e] = !fwd_valid[e] && (lu_active_reg[e] || lu_start[e]) && !eg_last[e];
    end
end

// the tags presented to the scheduler last cycle (notif_refused answers them)
reg [PORTS*TAG_W-1:0] nt_tag_prev_reg;
always_ff @(posedge clk) begin
    nt_tag_prev_reg <= nt_tag;
end

// Release timers, started at the accept step: the model frees a source
// max(wire, iteration) cycles after the iteration starts (the accept is its third cycle) and
// the destination SLACK cycles later, so a port is released (rel_*_mask, cleared at the end
// of the cycle) in the cycle before that: at once for a chunk no longer than an iteration,
// else from a timer loaded with the rest. Any number of ports are released per cycle.
reg [15:0]      acc_src_hold [0:PORTS-1];   // release_delay: cycles past the iteration
reg [15:0]      acc_dst_hold [0:PORTS-1];

always @* begin : releases
    integer p, s;
    reg [TAG_W-1:0] t;
    for (p = 0; p < PORTS; p = p + 1) begin
        rel_src_mask[p] = src_arm_reg[p] && src_tmr_reg[p] == 0;
        rel_dst_mask[p] = dst_arm_reg[p] && dst_tmr_reg[p] == 0;
    end
    for (s = 0; s < PORTS; s = s + 1) begin
        t = acc_tag[s*TAG_W +: TAG_W];
        acc_src_hold[s] = release_delay(sl_rres[t], acc_len[s*32 +: 16]);
        acc_dst_hold[s] = acc_src_hold[s] + 16'(SLACK);
        if (acc_valid[s]) begin
            if (acc_src_hold[s] == 0) begin
                rel_src_mask[s] = 1'b1;
            end
            if (acc_dst_hold[s] == 0) begin
                rel_dst_mask[acc_dst[s*PW +: PW]] = 1'b1;
            end
        end
    end
end

// ---------------------------------------------------------------- sequential
always_ff @(posedge clk) begin : seq
    integer p, s, e, k, i, o, n, ov;
    reg [TAG_W-1:0] tag;
    reg [15:0] len;
    now_reg <= now_reg + 1;

    // request capture: later blocks into the entry the /MS/ took
    for (p = 0; p < PORTS; p = p + 1) begin
        k = p * SLOTS + 32'(cap_slot_reg[p]);
        if (cap_write[p] && cap_ok_reg[p]) begin
            sl_blk[k*4 + 32'(cap_n_reg[p])] <= cap_data[p];
            sl_n[k] <= cap_n_reg[p] + 3'd1;
        end
        if (cap_cut[p] && cap_ok_reg[p]) begin
            sl_bad[k] <= 1'b1;
        end
        cap_n_reg[p] <= cap_n_next[p];
    end

    // new notifications: a pending entry and a FIFO place, or refused
    n = 0;
    ov = 0;
    for (p = 0; p < PORTS; p = p + 1) begin
        if (in_bad[p]) begin
            n = n + 1;
        end
        if (in_notify[p]) begin
            cap_ok_reg[p] <= 1'b0;
            if (slot_ok[p]) begin
                k = p * SLOTS + 32'(slot_free[p]);
                sl_valid_reg[k] <= 1'b1;
                sl_rres[k] <= in_rres[p];
                sl_id[k] <= in_id[p];
                sl_has_req[k] <= in_rres[p];
                sl_bad[k] <= 1'b0;
                sl_n[k] <= 3'd1;
                sl_blk[k*4] <= cap_data[p];
                cap_ok_reg[p] <= in_rres[p];
                cap_slot_reg[p] <= slot_free[p];
            end else begin
                ov = ov + 1;
            end
        end
    end
    cnt_unexpected <= cnt_unexpected + n;

    // one notification per port and cycle into the scheduler; a refusal frees its entry
    for (p = 0; p < PORTS; p = p + 1) begin
        if (nt_refused[p]) begin
            sl_valid_reg[nt_tag_prev_reg[p*TAG_W +: TAG_W]] <= 1'b0;
            ov = ov + 1;
        end
    end
    cnt_notify_refused <= cnt_notify_refused + ov;

    // matches: circuit, grant unit, release timers
    gr_valid_reg <= m_valid;
    n = 0;
    for (s = 0; s < PORTS; s = s + 1) begin
        tag = m_tag[s*TAG_W +: TAG_W];
        o = 32'(tag);
        len = m_len[s*32 +: 16];
        gr_kind_reg[s*3 +: 3] <= sl_rres[o] ? MSG_KIND_RRES : MSG_KIND_WREQ;
        gr_id_reg[s*8 +: 8] <= sl_id[o];
        gr_dst_reg[s*PW +: PW] <= m_dst[s*PW +: PW];
        gr_len_reg[s*16 +: 16] <= len;
        if (m_valid[s]) begin
            n = n + 1;
            if (m_last[s]) begin
                sl_valid_reg[o] <= 1'b0;
            end
            sl_has_req[o] <= 1'b0;
            i = s * UDEPTH + 32'(lu_wr_reg[s][UW-1:0]);
            if (sl_has_req[o] && sl_bad[o]) begin
                // the request was cut short: nothing to send (the memory node never saw it)
                cnt_overflow <= cnt_overflow + 1;
            end else if ((lu_wr_reg[s] - lu_rd_reg[s]) != UDEPTH[UW:0]) begin
                if (sl_has_req[o]) begin
                    lu_n[i] <= sl_n[o];
                    for (k = 0; k < 4; k = k + 1) begin
                        lu_blk[i*4+k] <= sl_blk[o*4+k];
                    end
                end else begin
                    lu_n[i] <= 3'd1;
                    lu_blk[i*4] <= {SYNC_CTRL, 8'd0, 5'd0, sl_rres[o] ? MSG_KIND_RRES : MSG_KIND_WREQ,
                                    len, sl_id[o], {{(16-PW){1'b0}}, m_dst[s*PW +: PW]}, BT_G};
                end
                lu_wr_reg[s] <= lu_wr_reg[s] + 1;
            end else begin
                cnt_overflow <= cnt_overflow + 1;
            end
        end
    end
    cnt_grants <= cnt_grants + n;

    // release timers: count down, stop at the release; (re)started at an accept
    for (p = 0; p < PORTS; p = p + 1) begin
        if (src_arm_reg[p]) begin
            if (src_tmr_reg[p] == 0) begin
                src_arm_reg[p] <= 1'b0;
            end else begin
                src_tmr_reg[p] <= src_tmr_reg[p] - 1;
            end
        end
        if (dst_arm_reg[p]) begin
            if (dst_tmr_reg[p] == 0) begin
                dst_arm_reg[p] <= 1'b0;
            end else begin
                dst_tmr_reg[p] <= dst_tmr_reg[p] - 1;
            end
        end
    end
    for (s = 0; s < PORTS; s = s + 1) begin
        if (acc_valid[s]) begin
            if (acc_src_hold[s] != 0) begin
                src_tmr_reg[s] <= acc_src_hold[s] - 16'd1;
                src_arm_reg[s] <= 1'b1;
            end
            if (acc_dst_hold[s] != 0) begin
                dst_tmr_reg[acc_dst[s*PW +: PW]] <= acc_dst_hold[s] - 16'd1;
                dst_arm_reg[acc_dst[s*PW +: PW]] <= 1'b1;
            end
        end
    end

    // egress: local units and the forwarded-message state
    for (e = 0; e < PORTS; e = e + 1) begin
        if (fwd_valid[e]) begin
            fwd_open_reg[e] <= !eg_last[e];
        end else if (lu_active_reg[e] || lu_start[e]) begin
            if (eg_last[e]) begin
                lu_active_reg[e] <= 1'b0;
                lu_rd_reg[e] <= lu_rd_reg[e] + 1;
            end else begin
                lu_active_reg[e] <= 1'b1;
                lu_idx_reg[e] <= (lu_start[e] ? 3'd0 : lu_idx_reg[e]) + 3'd1;
            end
        end
        if (eg_conflict[e]) begin
            cnt_overflow <= cnt_overflow + 1;
        end
    end

    if (rst) begin
        now_reg <= 0;
        sl_valid_reg <= 0;
        for (p = 0; p < PORTS; p = p + 1) begin
            cap_n_reg[p] <= 0;
            cap_slot_reg[p] <= 0;
            lu_wr_reg[p] <= 0;
            lu_rd_reg[p] <= 0;
            lu_idx_reg[p] <= 0;
        end
        cap_ok_reg <= 0;
        gr_valid_reg <= 0;
        lu_active_reg <= 0;
        fwd_open_reg <= 0;
        src_arm_reg <= 0;
        dst_arm_reg <= 0;
        cnt_notify_refused <= 0;
        cnt_unexpected <= 0;
        cnt_grants <= 0;
        cnt_overflow <= 0;
    end
end

endmodule

`resetall
