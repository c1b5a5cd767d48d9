// edm_pim_sched_ring_port: one port of the scalable PIM scheduler (edm_pim_sched_ring).
//
// As a destination, the port owns the notification queues of every pair (*, me) in block
// memories: HK (head of each pair: present, arrival, remaining, tag; scanned in the request
// phase, LANES banks indexed by the source's rank), META (head slot and count per source, read
// asynchronously for notifications and the accept update) and Q (DEPTH entries per pair,
// circular). As a source, it holds its busy flag, its grant decision and its match outputs.
// One ring register per port carries, in turn, the source busy flags (request phase), the
// requests (grant phase) and the grants (return phase); it shifts by LANES ports per cycle and
// port me reads the ring registers of ports me+1 .. me+LANES, so at step t it sees the ports of
// rank t*LANES .. t*LANES+LANES-1, where rank(other) = (other - me - 1) mod PORTS is the
// rotated tie order of the priority encoder. Candidates are folded in rank order with a strict
// less-than, which keeps the first of equal keys: the edm-pim arbitration.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_pim_sched_ring_port #(
    parameter PORTS = 4,
    parameter DEPTH = 6,
    parameter SRPT = 0,
    parameter CHUNK = 256,
    parameter TAG_W = 16,
    parameter LANES = 1,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1,
    parameter RW = 1 + 2 * PW + 64 + TAG_W
) (
    input  wire              clk,
    input  wire              rst,
    input  wire [PW-1:0]     me,

    // control from edm_pim_sched_ring (one-hot phase strobes and the shared step counter)
    input  wire              clear_en,      // reset sweep: clear entry `step`
    input  wire              iter_begin,    // iteration start: snapshot busy flags, read step 0
    input  wire              req_scan,      // request phase: compare step-1, read step
    input  wire              req_read,      // request phase: issue a read for `step`
    input  wire              gnt_load,      // grant phase: load requests into the ring
    input  wire              gnt_scan,      // grant phase: compare ring, shift
    input  wire              ret_load,      // return phase: load grants into the ring
    input  wire              ret_scan,      // return phase: compare ring, shift
    input  wire              commit,        // accept: update queues, busy flags, outputs
    input  wire [PW:0]       step,

    // notification (broadcast; this port acts when notif_dst == me)
    input  wire              notif_fire,
    input  wire [PW-1:0]     notif_src,
    input  wire [PW-1:0]     notif_dst,
    input  wire [31:0]       notif_bytes,
    input  wire [TAG_W-1:0]  notif_tag,
    input  wire [31:0]       notif_time,
    output wire              notif_ok,

    input  wire              rel_src_valid,
    input  wire [PW-1:0]     rel_src,
    input  wire              rel_dst_valid,
    input  wire [PW-1:0]     rel_dst,

    // ring registers of ports me+1 .. me+LANES (lane j in bits [j*RW +: RW]), and ours
    input  wire [LANES*RW-1:0] nx_ring,
    output wire [RW-1:0]     ring,

    output reg               req_valid,
    output reg  [PW-1:0]     req_src,
    output reg               match_valid,
    output reg  [PW-1:0]     match_dst,
    output reg  [TAG_W-1:0]  match_tag,
    output reg  [31:0]       match_len,
    output reg               match_last
);

localparam CW = $clog2(DEPTH + 1);
localparam SW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
localparam MW = SW + CW;
localparam HW = 1 + 64 + TAG_W;
localparam QW = 64 + TAG_W;
localparam QN = PORTS * DEPTH;
localparam QA = $clog2(QN);
localparam LB = (LANES > 1) ? $clog2(LANES) : 0;
localparam STEPS = (PORTS + LANES - 1) / LANES;
localparam AW = (STEPS > 1) ? $clog2(STEPS) : 1;
localparam XW = PW + 2 + LB;

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
    if (LANES < 1 || LANES > PORTS || (LANES & (LANES - 1)) != 0) begin
        $error("LANES must be a power of two in 1..PORTS");
        $finish;
    end
    if (RW != 1 + 2 * PW + 64 + TAG_W) begin
        $error("RW must be 1 + 2 * PW + 64 + TAG_W");
        $finish;
    end
end

// (base + 1 + r) mod PORTS: the port of rank r (< PORTS) as seen from port base
function automatic [PW-1:0] seen(input [PW-1:0] base, input [PW-1:0] r);
    reg [PW:0] x;
    x = {1'b0, base} + {1'b0, r} + 1'b1;
    if (x >= PORTS[PW:0]) begin
        x = x - PORTS[PW:0];
    end
    if (x >= PORTS[PW:0]) begin
        x = x - PORTS[PW:0];
    end
    seen = x[PW-1:0];
endfunction

// (other - base - 1) mod PORTS: the rank of port other as seen from port base
function automatic [PW-1:0] rank_of(input [PW-1:0] base, input [PW-1:0] other);
    reg [PW+1:0] x;
    x = {2'b0, other} + PORTS[PW+1:0] - {2'b0, base} - 1'b1;
    if (x >= PORTS[PW+1:0]) begin
        x = x - PORTS[PW+1:0];
    end
    rank_of = x[PW-1:0];
endfunction

function automatic [SW-1:0] slot_add(input [SW-1:0] a, input [CW-1:0] b);
    reg [SW+CW:0] x;
    x = {{(CW+1){1'b0}}, a} + {{(SW+1){1'b0}}, b};
    if (x >= DEPTH) begin
        x = x - DEPTH;
    end
    slot_add = x[SW-1:0];
endfunction

function automatic [63:0] key_of(input [31:0] t, input [31:0] rem);
    key_of = (SRPT != 0) ? {rem, t} : {32'd0, t};
endfunction

// ---- memories -------------------------------------------------------------------------------
reg [MW-1:0] meta_mem [0:PORTS-1];
reg [QW-1:0] q_mem [0:QN-1];

reg              hk_we;
reg [PW-1:0]     hk_wrank;          // HK entry = rank: bank rank % LANES, address rank / LANES
reg [HW-1:0]     hk_wdata;
wire [HW-1:0]    hk_q [0:LANES-1];
wire [AW-1:0]    hk_raddr = step[AW-1:0];

reg              meta_we;
reg [PW-1:0]     meta_waddr;
reg [MW-1:0]     meta_wdata;
wire [PW-1:0]    meta_raddr;
wire [MW-1:0]    meta_rdata = meta_mem[meta_raddr];

reg              q_we;
reg [QA-1:0]     q_waddr;
reg [QW-1:0]     q_wdata;
reg              q_re;
reg [QA-1:0]     q_raddr;
reg [QW-1:0]     q_q;

genvar b;
generate
    for (b = 0; b < LANES; b = b + 1) begin : hk_bank
        reg [HW-1:0] hk_mem [0:STEPS-1];
        reg [HW-1:0] hk_rd;
        wire [XW-1:0] wr = XW'(hk_wrank);
        wire [AW-1:0] waddr = AW'(wr >> LB);
        // the reset sweep clears address `step` of every bank
        wire hit = clear_en || LB == 0 || wr[(LB > 0 ? LB : 1)-1:0] == b[(LB > 0 ? LB : 1)-1:0];
        assign hk_q[b] = hk_rd;
        always_ff @(posedge clk) begin
            if (hk_we && hit) begin
                hk_mem[waddr] <= hk_wdata;
            end
            if (req_read) begin
                hk_rd <= hk_mem[hk_raddr];
            end
        end
    end
endgenerate

always_ff @(posedge clk) begin
    if (meta_we) begin
        meta_mem[meta_waddr] <= meta_wdata;
    end
end

always_ff @(posedge clk) begin
    if (q_we) begin
        q_mem[q_waddr] <= q_wdata;
    end
    if (q_re) begin
        q_q <= q_mem[q_raddr];
    end
end

// ---- state ----------------------------------------------------------------------------------
reg              src_busy_reg;
reg              dst_busy_reg;
reg              dst_free_reg;      // snapshot at iteration start
reg [RW-1:0]     ring_reg;

// destination side: best eligible head seen in the request scan
reg              best_v_reg;
reg [PW-1:0]     best_src_reg;
reg [PW-1:0]     best_rank_reg;
reg [31:0]       best_time_reg;
reg [31:0]       best_rem_reg;
reg [TAG_W-1:0]  best_tag_reg;
reg              acc_reg;           // our request was granted

// source side: best request seen in the grant scan
reg              g_v_reg;
reg [PW-1:0]     g_dst_reg;
reg [31:0]       g_time_reg;
reg [31:0]       g_rem_reg;
reg [TAG_W-1:0]  g_tag_reg;

assign ring = ring_reg;
wire [RW-1:0] own_req = {best_v_reg, best_src_reg, me, best_time_reg, best_rem_reg, best_tag_reg};
wire [RW-1:0] own_gnt = {{(RW-PW-1){1'b0}}, g_v_reg, g_dst_reg};

// META is read for the notified pair, or for our requested pair from the grant phase on
wire in_accept = gnt_load || gnt_scan || ret_load || ret_scan || commit;
assign meta_raddr = in_accept ? best_src_reg : notif_src;
wire [SW-1:0]    m_head = meta_rdata[MW-1 -: SW];
wire [CW-1:0]    m_cnt = meta_rdata[CW-1:0];

assign notif_ok = notif_fire && notif_dst == me && notif_src != notif_dst && notif_bytes != 0 &&
        m_cnt < DEPTH;

wire [31:0] chunk = CHUNK;
wire        best_pop = best_rem_reg <= chunk;
wire [SW-1:0] next_head = slot_add(m_head, 1);

always @* begin : writes
    hk_we = 1'b0;
    hk_wrank = rank_of(me, notif_src);
    hk_wdata = {1'b1, notif_time, notif_bytes, notif_tag};
    meta_we = 1'b0;
    meta_waddr = notif_src;
    meta_wdata = {m_head, m_cnt + 1'b1};
    q_we = 1'b0;
    q_waddr = QA'(notif_src) * QA'(DEPTH) + QA'(slot_add(m_head, m_cnt));
    q_wdata = {notif_time, notif_bytes, notif_tag};
    q_re = gnt_load;
    q_raddr = QA'(best_src_reg) * QA'(DEPTH) + QA'(next_head);
    if (clear_en) begin
        hk_we = 32'(step) < STEPS;
        hk_wrank = PW'(step << LB);
        hk_wdata = 0;
        meta_we = 1'b1;
        meta_waddr = step[PW-1:0];
        meta_wdata = 0;
    end else if (commit) begin
        hk_wrank = best_rank_reg;
        meta_waddr = best_src_reg;
        if (acc_reg) begin
            hk_we = 1'b1;
            if (best_pop) begin
                meta_we = 1'b1;
                meta_wdata = {next_head, m_cnt - 1'b1};
                hk_wdata = {m_cnt != 1, q_q};
            end else begin
                hk_wdata = {1'b1, best_time_reg, best_rem_reg - chunk, best_tag_reg};
            end
        end
    end else if (notif_ok) begin
        q_we = 1'b1;
        meta_we = 1'b1;
        hk_we = m_cnt == 0;
    end
end

// fold this step's LANES candidates into the running best, in rank order
wire [XW-1:0] base_rank = (XW'(step) - 1'b1) << LB;

reg              nb_v;
reg [PW-1:0]     nb_rank;
reg [31:0]       nb_time;
reg [31:0]       nb_rem;
reg [TAG_W-1:0]  nb_tag;
reg              ng_v;
reg [PW-1:0]     ng_dst;
reg [31:0]       ng_time;
reg [31:0]       ng_rem;
reg [TAG_W-1:0]  ng_tag;
reg              nacc;

always @* begin : fold
    integer j;
    reg [XW-1:0] r;
    reg [RW-1:0] rec;
    reg [HW-1:0] h;
    nb_v = best_v_reg;
    nb_rank = best_rank_reg;
    nb_time = best_time_reg;
    nb_rem = best_rem_reg;
    nb_tag = best_tag_reg;
    ng_v = g_v_reg;
    ng_dst = g_dst_reg;
    ng_time = g_time_reg;
    ng_rem = g_rem_reg;
    ng_tag = g_tag_reg;
    nacc = acc_reg;
    for (j = 0; j < LANES; j = j + 1) begin
        r = base_rank + XW'(j);
        rec = nx_ring[j*RW +: RW];
        h = hk_q[j];
        // request: head present, source free (busy flag in the ring's bit 0)
        if (32'(r) < PORTS && h[HW-1] && !rec[0] &&
                (!nb_v || key_of(h[TAG_W+63 -: 32], h[TAG_W+31 -: 32]) < key_of(nb_time, nb_rem))) begin
            nb_v = 1'b1;
            nb_rank = r[PW-1:0];
            nb_time = h[TAG_W+63 -: 32];
            nb_rem = h[TAG_W+31 -: 32];
            nb_tag = h[TAG_W-1:0];
        end
        // grant: a request for this source
        if (32'(r) < PORTS && rec[RW-1] && rec[RW-2 -: PW] == me &&
                (!ng_v || key_of(rec[TAG_W+63 -: 32], rec[TAG_W+31 -: 32]) < key_of(ng_time, ng_rem))) begin
            ng_v = 1'b1;
            ng_dst = rec[RW-2-PW -: PW];
            ng_time = rec[TAG_W+63 -: 32];
            ng_rem = rec[TAG_W+31 -: 32];
            ng_tag = rec[TAG_W-1:0];
        end
        // return: the grant of a source names this destination
        if (32'(r) < PORTS && rec[PW] && rec[PW-1:0] == me) begin
            nacc = 1'b1;
        end
    end
end

wire [RW-1:0] ring_shift = nx_ring[(LANES-1)*RW +: RW];

always_ff @(posedge clk) begin
    if (rel_src_valid && rel_src == me) begin
        src_busy_reg <= 1'b0;
    end
    if (rel_dst_valid && rel_dst == me) begin
        dst_busy_reg <= 1'b0;
    end

    if (iter_begin) begin
        dst_free_reg <= !dst_busy_reg;
        ring_reg <= {{(RW-1){1'b0}}, src_busy_reg};
        best_v_reg <= 1'b0;
        g_v_reg <= 1'b0;
        acc_reg <= 1'b0;
    end
    if (req_scan) begin
        ring_reg <= ring_shift;
        if (dst_free_reg) begin
            best_v_reg <= nb_v;
            best_rank_reg <= nb_rank;
            best_src_reg <= seen(me, nb_rank);
            best_time_reg <= nb_time;
            best_rem_reg <= nb_rem;
            best_tag_reg <= nb_tag;
        end
    end
    if (gnt_load) begin
        req_valid <= best_v_reg;
        req_src <= best_src_reg;
        ring_reg <= own_req;
    end
    if (gnt_scan) begin
        ring_reg <= ring_shift;
        g_v_reg <= ng_v;
        g_dst_reg <= ng_dst;
        g_time_reg <= ng_time;
        g_rem_reg <= ng_rem;
        g_tag_reg <= ng_tag;
    end
    if (ret_load) begin
        ring_reg <= own_gnt;
    end
    if (ret_scan) begin
        ring_reg <= ring_shift;
        acc_reg <= nacc;
    end
    if (commit) begin
        match_valid <= g_v_reg;
        match_dst <= g_dst_reg;
        match_tag <= g_tag_reg;
        match_len <= (g_rem_reg < chunk) ? g_rem_reg : chunk;
        match_last <= g_rem_reg <= chunk;
        if (g_v_reg) begin
            src_busy_reg <= 1'b1;
        end
        if (acc_reg) begin
            dst_busy_reg <= 1'b1;
        end
    end

    if (rst) begin
        src_busy_reg <= 1'b0;
        dst_busy_reg <= 1'b0;
        dst_free_reg <= 1'b0;
        best_v_reg <= 1'b0;
        g_v_reg <= 1'b0;
        acc_reg <= 1'b0;
        req_valid <= 1'b0;
        match_valid <= 1'b0;
    end
end

endmodule

`resetall
