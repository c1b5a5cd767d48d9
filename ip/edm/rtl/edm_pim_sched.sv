// edm_pim_sched: EDM priority iterative-PIM scheduler, one iteration in exactly 3 cycles.
//
// Notification queues: one FIFO of messages per source-destination pair (in-order delivery
// per pair). Their heads are kept in ordered lists (EDM §3.1.2):
//   * per destination d, the sources with queued messages sorted by head key
//     {priority, arrival, rank_d(source)};
//   * per source s, the destinations with queued messages sorted by head key
//     {priority, arrival, rank_s(destination)};
// where priority is the arrival time (FCFS) or the remaining bytes (SRPT) and
// rank_me(other) = (other - me - 1) mod PORTS is the rotated tie order. The lists are updated
// in the cycle a head appears, changes or leaves (insert: compare against the list in
// parallel and shift; remove: shift), so an iteration needs no comparisons at all:
//   cycle 1 (request): each free destination marks the entries of its list whose source is
//                      free; a priority encoder picks the first (highest priority) one.
//   cycle 2 (grant):   each source marks the entries of its list that requested it; a
//                      priority encoder picks the first.
//   cycle 3 (accept):  the pairs become busy and one chunk min(CHUNK, remaining) is granted.
// Decisions equal the edm-pim crate's. Ports are released by rel_* (the switch does so after
// each chunk's wire time).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_pim_sched #(
    parameter PORTS = 4,
    parameter DEPTH = 6,
    parameter SRPT = 0,
    parameter CHUNK = 256,
    parameter TAG_W = 16,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    notif_valid,
    input  wire [PW-1:0]           notif_src,
    input  wire [PW-1:0]           notif_dst,
    input  wire [31:0]             notif_bytes,
    input  wire [TAG_W-1:0]        notif_tag,
    input  wire [31:0]             notif_time,
    output reg                     notif_refused,

    input  wire                    rel_src_valid,
    input  wire [PW-1:0]           rel_src,
    input  wire                    rel_dst_valid,
    input  wire [PW-1:0]           rel_dst,
    // any number of ports released at once; a port released in its accept cycle is never
    // marked busy (a chunk shorter than an iteration)
    input  wire [PORTS-1:0]        rel_src_mask,
    input  wire [PORTS-1:0]        rel_dst_mask,

    input  wire                    iter_start,
    output wire                    iter_busy,
    output reg                     iter_done,
    output wire                    iter_eligible,   // a request is possible this cycle

    output reg  [PORTS-1:0]        req_valid,
    output reg  [PORTS*PW-1:0]     req_src,
    output reg  [PORTS-1:0]        match_valid,
    output reg  [PORTS*PW-1:0]     match_dst,
    output reg  [PORTS*TAG_W-1:0]  match_tag,
    output reg  [PORTS*32-1:0]     match_len,
    output reg  [PORTS-1:0]        match_last,

    // the matches registered on match_* at the end of this cycle (the accept step), so that
    // the switch can time their ports' release from the accept
    output wire [PORTS-1:0]        acc_valid,
    output wire [PORTS*PW-1:0]     acc_dst,
    output wire [PORTS*TAG_W-1:0]  acc_tag,
    output wire [PORTS*32-1:0]     acc_len
);

localparam PAIRS = PORTS * PORTS;
localparam CW = $clog2(DEPTH + 1);
localparam LW = $clog2(PORTS + 1);
localparam KW = 64 + PW;

initial begin
    if (PORTS < 2) begin
        $error("PORTS must be at least 2");
        $finish;
    end
    if (DEPTH < 1) begin
        $error("DEPTH must be at least 1");
        $finish;
    end
    if (CHUNK < 1) begin
        $error("CHUNK must be positive");
        $finish;
    end
end

// pair p = dst * PORTS + src; entry k of pair p at p * DEPTH + k (k = 0 is the head)
reg [CW-1:0]    cnt_reg [0:PAIRS-1];
reg [31:0]      time_reg [0:PAIRS*DEPTH-1];
reg [31:0]      rem_reg [0:PAIRS*DEPTH-1];
reg [TAG_W-1:0] tag_reg [0:PAIRS*DEPTH-1];
reg [PORTS-1:0] src_busy_reg;
reg [PORTS-1:0] dst_busy_reg;

// ordered lists: entry i of list l at l * PORTS + i, valid below *_len_reg[l]
reg [PW-1:0]    dl_id_reg [0:PAIRS-1];
reg [KW-1:0]    dl_key_reg [0:PAIRS-1];
reg [LW-1:0]    dl_len_reg [0:PORTS-1];
reg [PW-1:0]    sl_id_reg [0:PAIRS-1];
reg [KW-1:0]    sl_key_reg [0:PAIRS-1];
reg [LW-1:0]    sl_len_reg [0:PORTS-1];

reg [1:0]       stage_reg;
reg [PORTS-1:0] grant_valid_reg;
reg [PW-1:0]    grant_dst_reg [0:PORTS-1];

assign iter_busy = stage_reg != 0;

function automatic [PW-1:0] rank_of(input integer me, input integer other);
    /* verilator lint_off UNUSEDSIGNAL */
    integer r;
    /* verilator lint_on UNUSEDSIGNAL */
    r = (other + 2 * PORTS - me - 1) % PORTS;
    rank_of = r[PW-1:0];
endfunction

// cycle 1: request (priority encoder over each destination's ordered list)
reg [PORTS-1:0] req_valid_next;
reg [PW-1:0]    req_src_next [0:PORTS-1];

always @* begin : request_step
    integer d, i;
    for (d = 0; d < PORTS; d = d + 1) begin
        req_valid_next[d] = 1'b0;
        req_src_next[d] = 0;
        for (i = PORTS - 1; i >= 0; i = i - 1) begin
            if (i < dl_len_reg[d] && !dst_busy_reg[d] && !src_busy_reg[dl_id_reg[d*PORTS+i]]) begin
                req_valid_next[d] = 1'b1;
                req_src_next[d] = dl_id_reg[d*PORTS+i];
            end
        end
    end
end

// an iteration started now would request something (the switch starts one only then, as the
// model does: an idle scheduler does not wait for a free-running iteration boundary)
assign iter_eligible = |req_valid_next;

// cycle 2: grant (priority encoder over each source's ordered list)
reg [PORTS-1:0] grant_valid_next;
reg [PW-1:0]    grant_dst_next [0:PORTS-1];

always @* begin : grant_step
    integer s, i;
    reg [PW-1:0] d;
    for (s = 0; s < PORTS; s = s + 1) begin
        grant_valid_next[s] = 1'b0;
        grant_dst_next[s] = 0;
        for (i = PORTS - 1; i >= 0; i = i - 1) begin
            d = sl_id_reg[s*PORTS+i];
            if (i < sl_len_reg[s] && req_valid[d] && req_src[d*PW +: PW] == s[PW-1:0]) begin
                grant_valid_next[s] = 1'b1;
                grant_dst_next[s] = d;
            end
        end
    end
end

// cycle 3: accept, plus notification inserts (any cycle)
reg [PAIRS-1:0] pop;
reg [PAIRS-1:0] dec;
reg [31:0]      chunk_len [0:PORTS-1];

always @* begin : accept_step
    integer s, p;
    pop = 0;
    dec = 0;
    for (s = 0; s < PORTS; s = s + 1) begin
        p = 32'(grant_dst_reg[s]) * PORTS + s;
        chunk_len[s] = (rem_reg[p*DEPTH] < CHUNK) ? rem_reg[p*DEPTH] : CHUNK;
        if (stage_reg == 2 && grant_valid_reg[s]) begin
            dec[p] = 1'b1;
            pop[p] = rem_reg[p*DEPTH] <= CHUNK;
        end
    end
end

genvar ga;
generate
    for (ga = 0; ga < PORTS; ga = ga + 1) begin : acc
        assign acc_valid[ga] = stage_reg == 2 && grant_valid_reg[ga];
        assign acc_dst[ga*PW +: PW] = grant_dst_reg[ga];
        assign acc_tag[ga*TAG_W +: TAG_W] = tag_reg[(32'(grant_dst_reg[ga]) * PORTS + ga) * DEPTH];
        assign acc_len[ga*32 +: 32] = chunk_len[ga];
    end
endgenerate

wire [31:0] notif_pair = 32'(notif_dst) * PORTS + 32'(notif_src);
wire notif_ok = notif_valid && notif_src != notif_dst && notif_bytes != 0 &&
        cnt_reg[notif_pair] < DEPTH;

// head of every pair after this cycle's accept and insert
reg [PAIRS-1:0] head_changed;
reg [PAIRS-1:0] head_present;
reg [31:0]      head_time [0:PAIRS-1];
reg [31:0]      head_rem [0:PAIRS-1];

always @* begin : next_heads
    integer p;
    reg [CW-1:0] left;
    for (p = 0; p < PAIRS; p = p + 1) begin
        left = cnt_reg[p] - {{(CW-1){1'b0}}, pop[p]};
        head_time[p] = pop[p] ? time_reg[p*DEPTH+1] : time_reg[p*DEPTH];
        head_rem[p] = pop[p] ? rem_reg[p*DEPTH+1] : (dec[p] ? rem_reg[p*DEPTH] - CHUNK : rem_reg[p*DEPTH]);
        head_changed[p] = dec[p];
        if (notif_ok && notif_pair == p && left == 0) begin
            head_time[p] = notif_time;
            head_rem[p] = notif_bytes;
            head_changed[p] = 1'b1;
        end
        head_present[p] = left != 0 || (notif_ok && notif_pair == p);
    end
end

// ordered-list maintenance: a list changes in at most two entries per cycle, the pair of this
// cycle's accept (if its destination / source is this list's port) and the pair of this
// cycle's notification (if it gave an empty pair a head). Each changed entry is taken out and,
// if the pair still has a head, put back at the position its new key sorts to: two
// compare-against-all-and-shift steps per list.
reg [PW-1:0] dl_id_next [0:PAIRS-1];
reg [KW-1:0] dl_key_next [0:PAIRS-1];
reg [LW-1:0] dl_len_next [0:PORTS-1];
reg [PW-1:0] sl_id_next [0:PAIRS-1];
reg [KW-1:0] sl_key_next [0:PAIRS-1];
reg [LW-1:0] sl_len_next [0:PORTS-1];

// the accepting source of each destination this cycle
reg [PORTS-1:0] acc_dst_valid;
reg [PW-1:0]    acc_dst_src [0:PORTS-1];

always @* begin : accept_by_dst
    integer s;
    acc_dst_valid = 0;
    for (s = 0; s < PORTS; s = s + 1) begin
        acc_dst_src[s] = 0;
    end
    for (s = 0; s < PORTS; s = s + 1) begin
        if (stage_reg == 2 && grant_valid_reg[s]) begin
            acc_dst_valid[grant_dst_reg[s]] = 1'b1;
            acc_dst_src[grant_dst_reg[s]] = s[PW-1:0];
        end
    end
end

always @* begin : list_update
    integer l, i, j, c, pos, n;
    /* verilator lint_off UNUSEDSIGNAL */
    integer p;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [PW-1:0] ids [0:PORTS-1];
    reg [KW-1:0] keys [0:PORTS-1];
    reg [PW-1:0] ch_other [0:1];
    reg [1:0]    ch_valid;
    reg [KW-1:0] k;
    reg [PW-1:0] me;
    reg [PW-1:0] id;
    reg [LW-1:0] len;
    /* verilator lint_off UNUSEDSIGNAL */
    integer lm;
    /* verilator lint_on UNUSEDSIGNAL */
    reg dst_side;
    for (i = 0; i < PAIRS; i = i + 1) begin
        dl_id_next[i] = 0;
        dl_key_next[i] = 0;
        sl_id_next[i] = 0;
        sl_key_next[i] = 0;
    end
    for (i = 0; i < PORTS; i = i + 1) begin
        dl_len_next[i] = 0;
        sl_len_next[i] = 0;
    end
    for (l = 0; l < 2 * PORTS; l = l + 1) begin
        dst_side = l < PORTS;
        lm = dst_side ? l : l - PORTS;
        me = lm[PW-1:0];
        len = dst_side ? dl_len_reg[me] : sl_len_reg[me];
        k = 0;
        pos = 0;
        // the (at most two) changed entries of this list, named by the other port
        ch_valid[0] = dst_side ? acc_dst_valid[me] : (stage_reg == 2 && grant_valid_reg[me]);
        ch_other[0] = dst_side ? acc_dst_src[me] : grant_dst_reg[me];
        ch_valid[1] = notif_ok && (dst_side ? notif_dst == me : notif_src == me);
        ch_other[1] = dst_side ? notif_src : notif_dst;
        p = dst_side ? 32'(me) * PORTS + 32'(ch_other[1]) : 32'(ch_other[1]) * PORTS + 32'(me);
        if (!head_changed[p] || (ch_valid[0] && ch_other[0] == ch_other[1])) begin
            ch_valid[1] = 1'b0;
        end
        // copy the list without the changed entries
        n = 0;
        for (i = 0; i < PORTS; i = i + 1) begin
            ids[i] = 0;
            keys[i] = 0;
        end
        for (i = 0; i < PORTS; i = i + 1) begin
            id = dst_side ? dl_id_reg[32'(me)*PORTS+i] : sl_id_reg[32'(me)*PORTS+i];
            if (i < len &&
                    !(ch_valid[0] && id == ch_other[0]) && !(ch_valid[1] && id == ch_other[1])) begin
                ids[n] = id;
                keys[n] = dst_side ? dl_key_reg[32'(me)*PORTS+i] : sl_key_reg[32'(me)*PORTS+i];
                n = n + 1;
            end
        end
        // put back the changed entries that still have a head, at their sorted position
        for (c = 0; c < 2; c = c + 1) begin
            p = dst_side ? 32'(me) * PORTS + 32'(ch_other[c]) : 32'(ch_other[c]) * PORTS + 32'(me);
            if (ch_valid[c] && head_present[p]) begin
                k = {(SRPT != 0) ? head_rem[p] : head_time[p], head_time[p], rank_of(32'(me), 32'(ch_other[c]))};
                pos = 0;
                for (i = 0; i < PORTS; i = i + 1) begin
                    if (i < n && keys[i] < k) begin
                        pos = pos + 1;
                    end
                end
                for (j = PORTS - 1; j > 0; j = j - 1) begin
                    if (j > pos && j <= n) begin
                        ids[j] = ids[j-1];
                        keys[j] = keys[j-1];
                    end
                end
                ids[pos] = ch_other[c];
                keys[pos] = k;
                n = n + 1;
            end
        end
        for (i = 0; i < PORTS; i = i + 1) begin
            if (dst_side) begin
                dl_id_next[32'(me)*PORTS+i] = ids[i];
                dl_key_next[32'(me)*PORTS+i] = keys[i];
            end else begin
                sl_id_next[32'(me)*PORTS+i] = ids[i];
                sl_key_next[32'(me)*PORTS+i] = keys[i];
            end
        end
        if (dst_side) begin
            dl_len_next[me] = n[LW-1:0];
        end else begin
            sl_len_next[me] = n[LW-1:0];
        end
    end
end

always_ff @(posedge clk) begin : state_update
    integer d, s, k, p, i;
    iter_done <= 1'b0;
    notif_refused <= notif_valid && !notif_ok;

    for (p = 0; p < PAIRS; p = p + 1) begin
        if (pop[p]) begin
            for (k = 0; k < DEPTH - 1; k = k + 1) begin
                time_reg[p*DEPTH+k] <= time_reg[p*DEPTH+k+1];
                rem_reg[p*DEPTH+k] <= rem_reg[p*DEPTH+k+1];
                tag_reg[p*DEPTH+k] <= tag_reg[p*DEPTH+k+1];
            end
        end else if (dec[p]) begin
            rem_reg[p*DEPTH] <= rem_reg[p*DEPTH] - CHUNK;
        end
        if (notif_ok && notif_pair == p) begin
            k = 32'(cnt_reg[p]) - (pop[p] ? 1 : 0);
            time_reg[p*DEPTH+k] <= notif_time;
            rem_reg[p*DEPTH+k] <= notif_bytes;
            tag_reg[p*DEPTH+k] <= notif_tag;
        end
        cnt_reg[p] <= cnt_reg[p] + ((notif_ok && notif_pair == p) ? 1 : 0) - (pop[p] ? 1 : 0);
    end
    for (i = 0; i < PAIRS; i = i + 1) begin
        dl_id_reg[i] <= dl_id_next[i];
        dl_key_reg[i] <= dl_key_next[i];
        sl_id_reg[i] <= sl_id_next[i];
        sl_key_reg[i] <= sl_key_next[i];
    end
    for (i = 0; i < PORTS; i = i + 1) begin
        dl_len_reg[i] <= dl_len_next[i];
        sl_len_reg[i] <= sl_len_next[i];
    end

    if (rel_src_valid) begin
        src_busy_reg[rel_src] <= 1'b0;
    end
    if (rel_dst_valid) begin
        dst_busy_reg[rel_dst] <= 1'b0;
    end

    case (stage_reg)
        2'd0: begin
            if (iter_start) begin
                req_valid <= req_valid_next;
                for (d = 0; d < PORTS; d = d + 1) begin
                    req_src[d*PW +: PW] <= req_src_next[d];
                end
                stage_reg <= 2'd1;
            end
        end
        2'd1: begin
            grant_valid_reg <= grant_valid_next;
            for (s = 0; s < PORTS; s = s + 1) begin
                grant_dst_reg[s] <= grant_dst_next[s];
            end
            stage_reg <= 2'd2;
        end
        default: begin
            match_valid <= grant_valid_reg;
            for (s = 0; s < PORTS; s = s + 1) begin
                p = 32'(grant_dst_reg[s]) * PORTS + s;
                match_dst[s*PW +: PW] <= grant_dst_reg[s];
                match_tag[s*TAG_W +: TAG_W] <= tag_reg[p*DEPTH];
                match_len[s*32 +: 32] <= chunk_len[s];
                match_last[s] <= rem_reg[p*DEPTH] <= CHUNK;
                if (grant_valid_reg[s]) begin
                    src_busy_reg[s] <= 1'b1;
                    dst_busy_reg[grant_dst_reg[s]] <= 1'b1;
                end
            end
            iter_done <= 1'b1;
            stage_reg <= 2'd0;
        end
    endcase
    for (p = 0; p < PORTS; p = p + 1) begin
        if (rel_src_mask[p] == 1'b1) begin
            src_busy_reg[p] <= 1'b0;
        end
        if (rel_dst_mask[p] == 1'b1) begin
            dst_busy_reg[p] <= 1'b0;
        end
    end

    if (rst) begin
        for (p = 0; p < PAIRS; p = p + 1) begin
            cnt_reg[p] <= 0;
        end
        for (i = 0; i < PORTS; i = i + 1) begin
            dl_len_reg[i] <= 0;
            sl_len_reg[i] <= 0;
        end
        src_busy_reg <= 0;
        dst_busy_reg <= 0;
        stage_reg <= 2'd0;
        req_valid <= 0;
        grant_valid_reg <= 0;
        match_valid <= 0;
        iter_done <= 1'b0;
        notif_refused <= 1'b0;
    end
end

endmodule

`resetall
