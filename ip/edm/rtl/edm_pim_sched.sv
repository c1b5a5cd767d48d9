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
// in the cycle a head appears, changes or leaves: every entry's place is the number of heads
// with a smaller key (all compared in parallel), so any number of heads may change per cycle
// (NOTIFS notifications, one per switch port, plus the accepts), and an iteration needs no
// comparisons at all:
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
    // notifications inserted per cycle (lanes; lane order is arrival order within a cycle)
    parameter NOTIFS = 1,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [NOTIFS-1:0]       notif_valid,
    input  wire [NOTIFS*PW-1:0]    notif_src,
    input  wire [NOTIFS*PW-1:0]    notif_dst,
    input  wire [NOTIFS*32-1:0]    notif_bytes,
    input  wire [NOTIFS*TAG_W-1:0] notif_tag,
    input  wire [31:0]             notif_time,
    output reg  [NOTIFS-1:0]       notif_refused,

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
    if (NOTIFS < 1) begin
        $error("NOTIFS must be at least 1");
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
reg [LW-1:0]    dl_len_reg [0:PORTS-1];
reg [PW-1:0]    sl_id_reg [0:PAIRS-1];
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

// Notifications of this cycle, lane by lane: lane l is taken when its pair has room after the
// lanes before it (two lanes name the same pair when a host writes to a node that reads from
// it in the same cycle); nf_pos is its place in the pair's FIFO.
reg [NOTIFS-1:0] notif_ok;
reg [31:0]       nf_pair [0:NOTIFS-1];
reg [CW:0]       nf_pos [0:NOTIFS-1];
reg [CW:0]       nf_add [0:PAIRS-1];     // notifications taken per pair

always @* begin : notif_take
    integer l, p;
    for (p = 0; p < PAIRS; p = p + 1) begin
        nf_add[p] = 0;
    end
    for (l = 0; l < NOTIFS; l = l + 1) begin
        nf_pair[l] = 32'(notif_dst[l*PW +: PW]) * PORTS + 32'(notif_src[l*PW +: PW]);
        nf_pos[l] = {1'b0, cnt_reg[nf_pair[l]]} - {{CW{1'b0}}, pop[nf_pair[l]]} + nf_add[nf_pair[l]];
        notif_ok[l] = notif_valid[l] && notif_src[l*PW +: PW] != notif_dst[l*PW +: PW] &&
                notif_bytes[l*32 +: 32] != 0 && {1'b0, cnt_reg[nf_pair[l]]} + nf_add[nf_pair[l]] < (CW+1)'(DEPTH);
        if (notif_ok[l]) begin
            nf_add[nf_pair[l]] = nf_add[nf_pair[l]] + 1'b1;
        end
    end
end

// head of every pair after this cycle's accept and inserts
reg [PAIRS-1:0] head_present;
reg [31:0]      head_time [0:PAIRS-1];
reg [31:0]      head_rem [0:PAIRS-1];

always @* begin : next_heads
    integer p, l;
    reg [CW-1:0] left;
    for (p = 0; p < PAIRS; p = p + 1) begin
        left = cnt_reg[p] - {{(CW-1){1'b0}}, pop[p]};
        head_time[p] = pop[p] ? time_reg[p*DEPTH+1] : time_reg[p*DEPTH];
        head_rem[p] = pop[p] ? rem_reg[p*DEPTH+1] : (dec[p] ? rem_reg[p*DEPTH] - CHUNK : rem_reg[p*DEPTH]);
        head_present[p] = left != 0 || nf_add[p] != 0;
        if (left == 0) begin
            for (l = NOTIFS - 1; l >= 0; l = l - 1) begin
                if (notif_ok[l] && nf_pair[l] == p) begin
                    head_time[p] = notif_time;
                    head_rem[p] = notif_bytes[l*32 +: 32];
                end
            end
        end
    end
end

// Ordered lists after this cycle: every list sorted by its pairs' head keys
// {priority, arrival, rank}. Keys are distinct (the rank), so an entry's place is the number of
// keys below its own: compare all against all in parallel, which takes any number of changed
// entries per cycle (an accept and a notification from every port).
reg [PW-1:0] dl_id_next [0:PAIRS-1];
reg [LW-1:0] dl_len_next [0:PORTS-1];
reg [PW-1:0] sl_id_next [0:PAIRS-1];
reg [LW-1:0] sl_len_next [0:PORTS-1];

always @* begin : list_update
    integer me, o, o2, pos, n;
    reg [KW-1:0] key [0:PORTS-1];
    reg [PORTS-1:0] here;
    for (o = 0; o < PAIRS; o = o + 1) begin
        dl_id_next[o] = 0;
        sl_id_next[o] = 0;
    end
    // destination lists: the sources with a head towards me
    for (me = 0; me < PORTS; me = me + 1) begin
        n = 0;
        for (o = 0; o < PORTS; o = o + 1) begin
            here[o] = head_present[me*PORTS+o];
            key[o] = {(SRPT != 0) ? head_rem[me*PORTS+o] : head_time[me*PORTS+o], head_time[me*PORTS+o],
                      rank_of(me, o)};
            n = n + (here[o] ? 1 : 0);
        end
        for (o = 0; o < PORTS; o = o + 1) begin
            pos = 0;
            for (o2 = 0; o2 < PORTS; o2 = o2 + 1) begin
                if (here[o2] && key[o2] < key[o]) begin
                    pos = pos + 1;
                end
            end
            if (here[o]) begin
                dl_id_next[me*PORTS+pos] = o[PW-1:0];
            end
        end
        dl_len_next[me] = n[LW-1:0];
    end
    // source lists: the destinations I have a head towards
    for (me = 0; me < PORTS; me = me + 1) begin
        n = 0;
        for (o = 0; o < PORTS; o = o + 1) begin
            here[o] = head_present[o*PORTS+me];
            key[o] = {(SRPT != 0) ? head_rem[o*PORTS+me] : head_time[o*PORTS+me], head_time[o*PORTS+me],
                      rank_of(me, o)};
            n = n + (here[o] ? 1 : 0);
        end
        for (o = 0; o < PORTS; o = o + 1) begin
            pos = 0;
            for (o2 = 0; o2 < PORTS; o2 = o2 + 1) begin
                if (here[o2] && key[o2] < key[o]) begin
                    pos = pos + 1;
                end
            end
            if (here[o]) begin
                sl_id_next[me*PORTS+pos] = o[PW-1:0];
            end
        end
        sl_len_next[me] = n[LW-1:0];
    end
end

always_ff @(posedge clk) begin : state_update
    integer d, s, k, p, i, l;
    iter_done <= 1'b0;
    notif_refused <= notif_valid & ~notif_ok;

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
        cnt_reg[p] <= CW'({1'b0, cnt_reg[p]} + nf_add[p] - {{CW{1'b0}}, pop[p]});
    end
    for (l = 0; l < NOTIFS; l = l + 1) begin
        if (notif_ok[l]) begin
            k = nf_pair[l] * DEPTH + 32'(nf_pos[l]);
            time_reg[k] <= notif_time;
            rem_reg[k] <= notif_bytes[l*32 +: 32];
            tag_reg[k] <= notif_tag[l*TAG_W +: TAG_W];
        end
    end
    for (i = 0; i < PAIRS; i = i + 1) begin
        dl_id_reg[i] <= dl_id_next[i];
        sl_id_reg[i] <= sl_id_next[i];
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
        notif_refused <= 0;
    end
end

endmodule

`resetall
