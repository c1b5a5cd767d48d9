// clio_stream_table: the open READ streams, in pump order, and the stream being pumped.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A READ longer than one packet, with streams on, leaves packet by packet
// between other requests: after its first packet the engine's data phase
// inserts it (`s_insert`, the READ's fields and the bytes sent) after the
// last open stream of its session, else last. The engine pumps entry 0
// (`s_pump`): the table keeps what the pump needs of it (`m_pm_*`: PID, VA,
// length, bytes sent, the packet's length up to the MTU) while the engine
// translates and sends that packet; a page that went away cuts the stream
// (`s_cut`). At the pump's end (`s_rotate`) stream 0's client goes last (the
// model's round-robin): the entries after its group (the leading entries of
// its session) first, then stream 0 if it goes on (its packet was sent whole
// and bytes remain; its bytes sent advanced), then the rest of its group.
// The lookups for the engine's packet (`s_pid`, `s_session`): whether a
// stream of its PID is open (a FENCE waits for it).
// The strobes come from the engine's case (held with it): the registers
// change exactly as they did in the engine's clocked block.
module clio_stream_table #(
    parameter int STN = 4,                                // entries (>= 1)
    localparam int STW = $clog2(STN + 1)
) (
    input  wire           clk,
    input  wire           rst,

    // The engine's packet: the READ to insert (its bytes sent so far), and
    // the lookups' keys.
    input  wire           s_insert,
    input  wire [31:0]    s_pid,
    input  wire [31:0]    s_req_id,
    input  wire [31:0]    s_retry_of,
    input  wire [31:0]    s_epoch,
    input  wire [31:0]    s_total,
    input  wire [31:0]    s_sent,
    input  wire [15:0]    s_session,
    input  wire [63:0]    s_va,
    // The pump: begun on entry 0 (its packet cut at the MTU), cut, ended.
    input  wire           s_pump,
    input  wire [15:0]    s_mtu,
    input  wire           s_cut,
    input  wire           s_rotate,

    // The table: open streams; one of the packet's PID is open.
    output reg  [STW-1:0] m_cnt = 0,
    output reg            m_pid_open,
    // Entry 0: its answers' fields, the next packet's first VA and length.
    output wire [31:0]    m_q_pid,
    output wire [31:0]    m_q_req_id,
    output wire [31:0]    m_q_retry_of,
    output wire [15:0]    m_q_session,
    output wire [31:0]    m_q_epoch,
    output wire [63:0]    m_q_cur,
    output wire [31:0]    m_q_n,
    // The stream being pumped.
    output reg            m_pm_on = 1'b0,
    output reg  [31:0]    m_pm_pid = 0,
    output reg  [63:0]    m_pm_va = 0,
    output reg  [31:0]    m_pm_total = 0,
    output reg  [31:0]    m_pm_sent = 0
);

reg [31:0] sq_pid [0:STN-1];
reg [31:0] sq_req_id [0:STN-1];
reg [31:0] sq_retry_of [0:STN-1];
reg [31:0] sq_epoch [0:STN-1];
reg [31:0] sq_total [0:STN-1];
reg [31:0] sq_sent [0:STN-1];
reg [15:0] sq_session [0:STN-1];
reg [63:0] sq_va [0:STN-1];
reg        pm_cut = 1'b0;
reg [31:0] pm_n = 0;
integer qi;
initial begin
    for (qi = 0; qi < STN; qi = qi + 1) begin
        sq_pid[qi] = 0; sq_req_id[qi] = 0; sq_retry_of[qi] = 0; sq_epoch[qi] = 0;
        sq_total[qi] = 0; sq_sent[qi] = 0; sq_session[qi] = 0; sq_va[qi] = 0;
    end
end

// Where a new stream of the packet's session goes (after that client's last
// one, else last), how many leading entries belong to the client of entry 0
// (its turn moves them all to the back), whether a stream of the packet's
// PID is open. `always @*`, not `always_comb`: in the whole board top Icarus
// 11 never got past time 0 with `always_comb` in a stage.
reg [STW-1:0] sq_ins, sq_grp;
reg           sq_run;
/* verilator lint_off WIDTH */
always @* begin
    sq_ins = m_cnt;
    sq_grp = 1;
    sq_run = 1'b1;
    m_pid_open = 1'b0;
    for (qi = 0; qi < STN; qi = qi + 1) begin
        if (qi < m_cnt && sq_session[qi] == s_session) sq_ins = qi + 1;
        if (qi < m_cnt && sq_pid[qi] == s_pid) m_pid_open = 1'b1;
        if (qi > 0) begin
            if (sq_run && qi < m_cnt && sq_session[qi] == sq_session[0]) sq_grp = qi + 1;
            else sq_run = 1'b0;
        end
    end
end
/* verilator lint_on WIDTH */

assign m_q_pid = sq_pid[0];
assign m_q_req_id = sq_req_id[0];
assign m_q_retry_of = sq_retry_of[0];
assign m_q_session = sq_session[0];
assign m_q_epoch = sq_epoch[0];
assign m_q_cur = sq_va[0] + {32'd0, sq_sent[0]};
wire [31:0] sq_left = sq_total[0] - sq_sent[0];
assign m_q_n = sq_left < {16'd0, s_mtu} ? sq_left : {16'd0, s_mtu};

// The pumped stream goes on (its packet was sent whole and more remain).
wire pm_keep = !pm_cut && m_pm_sent + pm_n < m_pm_total;
// Where entry qk comes from after the pump: the entries after stream 0's
// group first, then stream 0 if it goes on, then the rest of its group.
integer qsrc [0:STN-1];
integer qk;
/* verilator lint_off WIDTH */
always @* begin
    for (qk = 0; qk < STN; qk = qk + 1) begin
        if (qk < m_cnt - sq_grp) qsrc[qk] = qk + sq_grp;
        else if (pm_keep && qk == m_cnt - sq_grp) qsrc[qk] = 0;
        else qsrc[qk] = qk - (m_cnt - sq_grp) - (pm_keep ? 1 : 0) + 1;
        if (qsrc[qk] >= STN || qsrc[qk] < 0) qsrc[qk] = 0;
    end
end
/* verilator lint_on WIDTH */

integer qs;
/* verilator lint_off WIDTH */
always_ff @(posedge clk) begin
    if (s_pump) begin
        m_pm_on <= 1'b1;
        pm_cut <= 1'b0;
        m_pm_pid <= sq_pid[0];
        m_pm_va <= sq_va[0];
        m_pm_total <= sq_total[0];
        m_pm_sent <= sq_sent[0];
        pm_n <= m_q_n;
    end
    if (s_cut && m_pm_on) pm_cut <= 1'b1;
    if (s_insert) begin
        // Entries from the insert position on move back by one.
        for (qs = STN - 1; qs >= 0; qs = qs - 1) begin
            if (qs > sq_ins) begin
                sq_pid[qs] <= sq_pid[qs - 1];
                sq_req_id[qs] <= sq_req_id[qs - 1];
                sq_retry_of[qs] <= sq_retry_of[qs - 1];
                sq_epoch[qs] <= sq_epoch[qs - 1];
                sq_total[qs] <= sq_total[qs - 1];
                sq_sent[qs] <= sq_sent[qs - 1];
                sq_session[qs] <= sq_session[qs - 1];
                sq_va[qs] <= sq_va[qs - 1];
            end else if (qs == sq_ins) begin
                sq_pid[qs] <= s_pid;
                sq_req_id[qs] <= s_req_id;
                sq_retry_of[qs] <= s_retry_of;
                sq_epoch[qs] <= s_epoch;
                sq_total[qs] <= s_total;
                sq_sent[qs] <= s_sent;
                sq_session[qs] <= s_session;
                sq_va[qs] <= s_va;
            end
        end
        m_cnt <= m_cnt + 1'b1;
    end
    if (s_rotate) begin
        for (qs = 0; qs < STN; qs = qs + 1) begin
            sq_pid[qs] <= sq_pid[qsrc[qs]];
            sq_req_id[qs] <= sq_req_id[qsrc[qs]];
            sq_retry_of[qs] <= sq_retry_of[qsrc[qs]];
            sq_epoch[qs] <= sq_epoch[qsrc[qs]];
            sq_total[qs] <= sq_total[qsrc[qs]];
            sq_sent[qs] <= qsrc[qs] == 0 ? m_pm_sent + pm_n : sq_sent[qsrc[qs]];
            sq_session[qs] <= sq_session[qsrc[qs]];
            sq_va[qs] <= sq_va[qsrc[qs]];
        end
        m_cnt <= pm_keep ? m_cnt : m_cnt - 1'b1;
        m_pm_on <= 1'b0;
    end
    if (rst) begin
        m_cnt <= 0;
        m_pm_on <= 1'b0;
    end
end
/* verilator lint_on WIDTH */

endmodule

`resetall
