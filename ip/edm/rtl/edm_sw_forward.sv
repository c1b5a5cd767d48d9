// edm_sw_forward: EDM switch virtual-circuit forwarding (EDM §3.2.2).
//
// Per ingress port, a table of granted circuits (kind, id, destination, bytes) in grant
// order. The first block of a WREQ/RRES chunk is checked against it by its header alone;
// a hit forwards the chunk to the destination port with a fixed latency of LAT cycles and
// the header's peer rewritten to the ingress port, a miss drops and counts it. Any other
// memory block (RREQ, /N/, ...) is passed on to the notification path. Each egress sends
// forwarded messages whole, in the order they started; a forwarded message waits only for
// a memory unit its TX shim is in the middle of (mid_unit). A chunk cut short by its sender
// is closed with an empty /MT/. Outputs registered; one block per port per cycle.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_sw_forward #(
    parameter PORTS = 4,
    parameter CIRC = 8,
    parameter QDEPTH = 64,
    parameter ODEPTH = 16,
    parameter LAT = 4,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1
) (
    input  wire                   clk,
    input  wire                   rst,

    // memory-side blocks from each port's RX shim (class as edm_rx_classify)
    input  wire [PORTS-1:0]       in_valid,
    input  wire [PORTS*3-1:0]     in_class,
    input  wire [PORTS*2-1:0]     in_hdr,
    input  wire [PORTS*64-1:0]    in_data,

    // grants from the scheduler, at most one per source port per cycle
    input  wire [PORTS-1:0]       grant_valid,
    input  wire [PORTS*3-1:0]     grant_kind,
    input  wire [PORTS*8-1:0]     grant_id,
    input  wire [PORTS*PW-1:0]    grant_dst,
    input  wire [PORTS*16-1:0]    grant_len,

    input  wire [PORTS-1:0]       mid_unit,

    output reg  [PORTS-1:0]       pass_valid,
    output wire [PORTS-1:0]       pass_now,     // pass_valid one cycle early, aligned with in_*
    output reg  [PORTS*3-1:0]     pass_class,
    output reg  [PORTS*2-1:0]     pass_hdr,
    output reg  [PORTS*64-1:0]    pass_data,

    output reg  [PORTS-1:0]       fwd_valid,
    output reg  [PORTS*2-1:0]     fwd_hdr,
    output reg  [PORTS*64-1:0]    fwd_data,

    output reg  [31:0]            cnt_forwarded,
    output reg  [31:0]            cnt_no_circuit,
    output reg  [31:0]            cnt_overflow
);

import edm_pkg::*;

localparam CW = $clog2(CIRC + 1);
localparam QW = $clog2(QDEPTH);
localparam OW = $clog2(ODEPTH);
localparam [63:0] CLOSE_DATA = {56'd0, BT_MT};
localparam [1:0] CUT_NONE = 2'd0;
localparam [1:0] CUT_FWD = 2'd1;
localparam [1:0] CUT_DROP = 2'd2;

initial begin
    if (PORTS < 2 || CIRC < 1 || (1 << QW) != QDEPTH || (1 << OW) != ODEPTH || LAT < 1) begin
        $error("bad parameters: PORTS >= 2, CIRC >= 1, QDEPTH and ODEPTH powers of two, LAT >= 1");
        $finish;
    end
end

reg [31:0] now_reg;

// circuit tables: entry k of ingress p at p*CIRC + k, valid entries packed at the bottom
reg [CW-1:0] ccnt_reg [0:PORTS-1];
reg [2:0]    ckind_reg [0:PORTS*CIRC-1];
reg [7:0]    cid_reg [0:PORTS*CIRC-1];
reg [PW-1:0] cdst_reg [0:PORTS*CIRC-1];
reg [15:0]   clen_reg [0:PORTS*CIRC-1];

reg [1:0]    cut_reg [0:PORTS-1];
reg [PW-1:0] cut_dst_reg [0:PORTS-1];

// egress queues: one FIFO per (egress d, ingress p) of {due, end, hdr, data}
reg [98:0]   q_mem [0:PORTS*PORTS*QDEPTH-1];
reg [QW:0]   q_wr_reg [0:PORTS*PORTS-1];
reg [QW:0]   q_rd_reg [0:PORTS*PORTS-1];
// per egress, the ingress of each started message, in start order
reg [PW-1:0] o_mem [0:PORTS*ODEPTH-1];
reg [OW:0]   o_wr_reg [0:PORTS-1];
reg [OW:0]   o_rd_reg [0:PORTS-1];
reg [PORTS-1:0] in_fwd_reg;

// ---- ingress decisions ----
reg [PORTS-1:0]     hit;
reg [CW-1:0]        hit_idx [0:PORTS-1];
reg [PORTS-1:0]     close_push;     // push a close /MT/ to cut_dst (before anything else)
reg [PORTS-1:0]     blk_push;       // push this block to fwd_dst
reg [PORTS-1:0]     blk_start;      // ... as the first block of a message
reg [PORTS-1:0]     blk_end;
reg [63:0]          blk_data [0:PORTS-1];
reg [PW-1:0]        fwd_dst [0:PORTS-1];
reg [PORTS-1:0]     pass;
assign pass_now = pass;
reg [1:0]           cut_next [0:PORTS-1];
reg [PW-1:0]        cut_dst_next [0:PORTS-1];
reg [PORTS-1:0]     fwd_new;
reg [PORTS-1:0]     drop_new;

always_comb begin : ingress_step
    integer p, k;
    reg [2:0] cls;
    reg [63:0] d;
    reg head, ctl, fwd_kind;
    reg [1:0] cut;
    for (p = 0; p < PORTS; p = p + 1) begin
        cls = in_class[p*3 +: 3];
        d = in_data[p*64 +: 64];
        head = cls == 3'd1 || cls == 3'd4;
        ctl = cls == 3'd5 || cls == 3'd6;
        close_push[p] = 1'b0;
        blk_push[p] = 1'b0;
        blk_start[p] = 1'b0;
        blk_end[p] = 1'b0;
        blk_data[p] = d;
        pass[p] = 1'b0;
        hit[p] = 1'b0;
        hit_idx[p] = 0;
        fwd_new[p] = 1'b0;
        drop_new[p] = 1'b0;
        cut = cut_reg[p];
        fwd_kind = 1'b0;
        cut_dst_next[p] = cut_dst_reg[p];
        fwd_dst[p] = cut_dst_reg[p];
        if (in_valid[p]) begin
            if (head || ctl) begin
                close_push[p] = cut == CUT_FWD;
                cut = CUT_NONE;
            end
            // a WREQ (kind 1, len != 0) or RRES (kind 3) with a clean header is forwardable
            fwd_kind = d[MSG_OP_LSB +: 4] == 4'd0 &&
                ((d[MSG_KIND_LSB +: 3] == MSG_KIND_WREQ && d[MSG_LEN_LSB +: 16] != 16'd0) ||
                 d[MSG_KIND_LSB +: 3] == MSG_KIND_RRES);
            if (head && fwd_kind) begin
                for (k = CIRC - 1; k >= 0; k = k - 1) begin
                    if (k < ccnt_reg[p] && ckind_reg[p*CIRC+k] == d[MSG_KIND_LSB +: 3] &&
                            cid_reg[p*CIRC+k] == d[MSG_ID_LSB +: 8] &&
                            {{(16-PW){1'b0}}, cdst_reg[p*CIRC+k]} == d[MSG_PEER_LSB +: 16] &&
                            d[MSG_LEN_LSB +: 16] <= clen_reg[p*CIRC+k]) begin
                        hit[p] = 1'b1;
                        hit_idx[p] = k[CW-1:0];
                    end
                end
                if (hit[p]) begin
                    cut = CUT_FWD;
                    cut_dst_next[p] = d[MSG_PEER_LSB +: PW];
                    fwd_new[p] = 1'b1;
                end else begin
                    cut = CUT_DROP;
                    drop_new[p] = 1'b1;
                end
            end
            fwd_dst[p] = cut_dst_next[p];
            if (cut == CUT_FWD) begin
                if (!ctl) begin
                    blk_push[p] = 1'b1;
                    blk_start[p] = head;
                    blk_end[p] = cls == 3'd3 || cls == 3'd4;
                    if (head) begin
                        blk_data[p] = d;
                        blk_data[p][MSG_PEER_LSB +: 16] = {{(16-PW){1'b0}}, p[PW-1:0]};
                    end
                    if (blk_end[p]) begin
                        cut = CUT_NONE;
                    end
                end else begin
                    pass[p] = 1'b1;
                end
            end else if (cut == CUT_DROP) begin
                if (cls == 3'd3 || cls == 3'd4) begin
                    cut = CUT_NONE;
                end
            end else begin
                pass[p] = 1'b1;
            end
        end
        cut_next[p] = cut;
    end
end

// ---- egress decisions ----
reg [PORTS-1:0] eg_pop;
reg [PW-1:0]    eg_src [0:PORTS-1];
reg [98:0]      eg_ent [0:PORTS-1];

always_comb begin : egress_step
    integer e, qi;
    reg [PW-1:0] src;
    for (e = 0; e < PORTS; e = e + 1) begin
        eg_pop[e] = 1'b0;
        src = o_mem[e*ODEPTH + 32'(o_rd_reg[e][OW-1:0])];
        eg_src[e] = src;
        qi = e * PORTS + 32'(src);
        eg_ent[e] = q_mem[qi*QDEPTH + 32'(q_rd_reg[qi][QW-1:0])];
        if (o_wr_reg[e] != o_rd_reg[e] && q_wr_reg[qi] != q_rd_reg[qi] &&
                eg_ent[e][98:67] <= now_reg && (in_fwd_reg[e] || !mid_unit[e])) begin
            eg_pop[e] = 1'b1;
        end
    end
end

always_ff @(posedge clk) begin : state_update
    integer p, k, e, qi, n;
    reg [QW-1:0] wr;
    reg [CW-1:0] cnt;
    reg [OW:0] owr;
    now_reg <= now_reg + 1;
    pass_valid <= pass;
    fwd_valid <= eg_pop;
    for (p = 0; p < PORTS; p = p + 1) begin
        pass_class[p*3 +: 3] <= in_class[p*3 +: 3];
        pass_hdr[p*2 +: 2] <= in_hdr[p*2 +: 2];
        pass_data[p*64 +: 64] <= in_data[p*64 +: 64];
        cut_reg[p] <= cut_next[p];
        cut_dst_reg[p] <= cut_dst_next[p];
    end
    n = 0;
    for (p = 0; p < PORTS; p = p + 1) begin
        n = n + (drop_new[p] ? 1 : 0);
    end
    cnt_no_circuit <= cnt_no_circuit + n;
    n = 0;
    for (p = 0; p < PORTS; p = p + 1) begin
        n = n + (fwd_new[p] ? 1 : 0);
    end
    cnt_forwarded <= cnt_forwarded + n;

    // circuit tables: remove the hit (order kept), then append this cycle's grant
    for (p = 0; p < PORTS; p = p + 1) begin
        cnt = ccnt_reg[p];
        if (hit[p]) begin
            for (k = 0; k < CIRC - 1; k = k + 1) begin
                if (k >= hit_idx[p]) begin
                    ckind_reg[p*CIRC+k] <= ckind_reg[p*CIRC+k+1];
                    cid_reg[p*CIRC+k] <= cid_reg[p*CIRC+k+1];
                    cdst_reg[p*CIRC+k] <= cdst_reg[p*CIRC+k+1];
                    clen_reg[p*CIRC+k] <= clen_reg[p*CIRC+k+1];
                end
            end
            cnt = cnt - 1'b1;
        end
        if (grant_valid[p]) begin
            if (cnt < CIRC) begin
                ckind_reg[p*CIRC+32'(cnt)] <= grant_kind[p*3 +: 3];
                cid_reg[p*CIRC+32'(cnt)] <= grant_id[p*8 +: 8];
                cdst_reg[p*CIRC+32'(cnt)] <= grant_dst[p*PW +: PW];
                clen_reg[p*CIRC+32'(cnt)] <= grant_len[p*16 +: 16];
                cnt = cnt + 1'b1;
            end else begin
                cnt_overflow <= cnt_overflow + 1;
            end
        end
        ccnt_reg[p] <= cnt;
    end

    // egress queues: pops, then pushes (close /MT/ first, then the block); per egress the
    // order FIFO takes message starts in ingress-port order
    for (e = 0; e < PORTS; e = e + 1) begin
        if (eg_pop[e]) begin
            qi = e * PORTS + 32'(eg_src[e]);
            q_rd_reg[qi] <= q_rd_reg[qi] + 1'b1;
            fwd_hdr[e*2 +: 2] <= eg_ent[e][65:64];
            fwd_data[e*64 +: 64] <= eg_ent[e][63:0];
            in_fwd_reg[e] <= !eg_ent[e][66];
            if (eg_ent[e][66]) begin
                o_rd_reg[e] <= o_rd_reg[e] + 1'b1;
            end
        end
        owr = o_wr_reg[e];
        for (p = 0; p < PORTS; p = p + 1) begin
            if (blk_push[p] && blk_start[p] && 32'(fwd_dst[p]) == e) begin
                o_mem[e*ODEPTH + 32'(owr[OW-1:0])] <= p[PW-1:0];
                owr = owr + 1'b1;
            end
        end
        o_wr_reg[e] <= owr;
    end
    for (p = 0; p < PORTS; p = p + 1) begin
        if (close_push[p]) begin
            qi = 32'(cut_dst_reg[p]) * PORTS + p;
            wr = q_wr_reg[qi][QW-1:0];
            q_mem[qi*QDEPTH + 32'(wr)] <= {now_reg + LAT, 1'b1, SYNC_CTRL, CLOSE_DATA};
        end
        if (blk_push[p]) begin
            qi = 32'(fwd_dst[p]) * PORTS + p;
            wr = q_wr_reg[qi][QW-1:0] + {{(QW-1){1'b0}}, close_push[p] && cut_dst_reg[p] == fwd_dst[p]};
            q_mem[qi*QDEPTH + 32'(wr)] <= {now_reg + LAT, blk_end[p], in_hdr[p*2 +: 2], blk_data[p]};
        end
        for (e = 0; e < PORTS; e = e + 1) begin
            qi = e * PORTS + p;
            n = ((close_push[p] && 32'(cut_dst_reg[p]) == e) ? 1 : 0) + ((blk_push[p] && 32'(fwd_dst[p]) == e) ? 1 : 0);
            if (n != 0) begin
                q_wr_reg[qi] <= q_wr_reg[qi] + n[QW:0];
            end
        end
    end

    if (rst) begin
        now_reg <= 0;
        for (p = 0; p < PORTS; p = p + 1) begin
            ccnt_reg[p] <= 0;
            cut_reg[p] <= CUT_NONE;
            o_wr_reg[p] <= 0;
            o_rd_reg[p] <= 0;
        end
        for (qi = 0; qi < PORTS * PORTS; qi = qi + 1) begin
            q_wr_reg[qi] <= 0;
            q_rd_reg[qi] <= 0;
        end
        in_fwd_reg <= 0;
        pass_valid <= 0;
        fwd_valid <= 0;
        cnt_forwarded <= 0;
        cnt_no_circuit <= 0;
        cnt_overflow <= 0;
    end
end

endmodule

`resetall
