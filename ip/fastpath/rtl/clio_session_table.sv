// clio_session_table: the fast path's session table (indexed by session id) and the boot epoch.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// One entry per session id (1..SESSIONS-1; id 0 is never a session): valid
// bit, PID, key, dedup and lock quotas, locks held and the ack floor (the
// furthest ack the session sent, 0 = none: a non-idempotent packet of a
// request before it was answered and acknowledged already). The epoch is the
// current boot's (0: no EPOCH descriptor yet, so no session exists). Entries
// are indexed by the low bits of the 16-bit session id; the credential check
// also requires 0 < id < SESSIONS.
//
// Read ports (combinational, asynchronous reads of the entry they name):
//  in    the packet at the parser's output (the hit lane's intake): epoch and
//        credentials (`m_in_ok`), the floor;
//  l1    the lane's first stage: floor and dedup quota; the ack of the packet
//        leaving it raises the floor (`s_l1_ack_valid`: the floor becomes
//        `s_l1_ack_id` if none is set or the ack is serially after it; the
//        comparison sees the floor as this port shows it, the write lands at
//        the edge);
//  eng   the engine's packet: credentials, quotas, locks held, floor.
// `m_epoch` is the current epoch.
//
// Engine write port: the engine decides its writes in its clocked state
// machine, so a write it makes at an edge arrives here in the cycle after, as
// a registered command (`s_wr_op`, one per cycle, like its pulses to the other
// units). The table applies the command as of that edge: every read port
// shows it in the cycle it is presented (write-first), and it is stored at
// the edge that ends that cycle. An L1 ack taken at the edge the command
// was made is the newer write of that floor and is kept. Commands:
//  FLOOR   floor of `s_wr_session` := `s_wr_word`;
//  LOCKS   locks held := `s_wr_word[15:0]`;
//  ENTRY   `s_wr_open`: install (PID, key, quotas; locks and floor 0), else
//          clear the entry (every field 0);
//  EPOCH   epoch := `s_wr_word`, every entry invalid (a new boot).
// Reset invalidates every entry and sets the epoch to 0; a command made at a
// reset edge is dropped.
module clio_session_table #(
    parameter SESSIONS = 1024
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [15:0] s_in_session,
    input  wire [63:0] s_in_key,
    input  wire [31:0] s_in_pid,
    input  wire [31:0] s_in_epoch,
    output wire        m_in_ok,
    output wire [31:0] m_in_floor,

    input  wire [15:0] s_l1_session,
    output wire [31:0] m_l1_floor,
    output wire [15:0] m_l1_dquota,
    input  wire        s_l1_ack_valid,
    input  wire [31:0] s_l1_ack_id,

    input  wire [15:0] s_eng_session,
    input  wire [63:0] s_eng_key,
    input  wire [31:0] s_eng_pid,
    output wire        m_eng_ok,
    output wire [15:0] m_eng_dquota,
    output wire [15:0] m_eng_lquota,
    output wire [15:0] m_eng_locks,
    output wire [31:0] m_eng_floor,

    output wire [31:0] m_epoch,

    input  wire [2:0]  s_wr_op,           // 0 none, 1 FLOOR, 2 LOCKS, 3 ENTRY, 4 EPOCH
    input  wire [15:0] s_wr_session,
    input  wire [31:0] s_wr_word,
    input  wire        s_wr_open,
    input  wire [31:0] s_wr_pid,
    input  wire [63:0] s_wr_key,
    input  wire [15:0] s_wr_dquota,
    input  wire [15:0] s_wr_lquota
);

localparam SIW = $clog2(SESSIONS);
localparam [2:0] OP_FLOOR = 3'd1, OP_LOCKS = 3'd2, OP_ENTRY = 3'd3, OP_EPOCH = 3'd4;

initial begin
    if (SESSIONS < 2 || SESSIONS > 65535) begin
        $error("Error: SESSIONS must be 2..65535 (session ids are u16) (instance %m)");
        $finish;
    end
end

// Valid bits as one vector: a new epoch clears them all in one cycle.
reg [SESSIONS-1:0] valid_reg = 0;
reg [31:0] epoch_reg = 0;
reg [31:0] pid_mem [0:SESSIONS-1];
reg [63:0] key_mem [0:SESSIONS-1];
reg [15:0] dquota_mem [0:SESSIONS-1];
reg [15:0] lquota_mem [0:SESSIONS-1];
reg [15:0] locks_mem [0:SESSIONS-1];
reg [31:0] floor_mem [0:SESSIONS-1];
// The L1 ack stored at the last edge (its floor is newer than a command
// the engine made at that edge) and the reset at the last edge.
reg            ack_q_reg = 1'b0;
reg [SIW-1:0]  ack_q_index_reg = 0;
reg            rst_q_reg = 1'b0;

initial begin : init_mem
    integer i;
    for (i = 0; i < SESSIONS; i = i + 1) begin
        pid_mem[i] = 0;
        key_mem[i] = 0;
        dquota_mem[i] = 0;
        lquota_mem[i] = 0;
        locks_mem[i] = 0;
        floor_mem[i] = 0;
    end
end

// RFC 1982 order over u32: `a` comes before `b`.
function automatic serial_before(input [31:0] a, input [31:0] b);
    reg [31:0] d;
    begin
        d = b - a;
        serial_before = d != 32'd0 && !d[31];
    end
endfunction

// The command as it applies this cycle.
wire           wr_live = !rst_q_reg;
wire [SIW-1:0] wr_index = s_wr_session[SIW-1:0];
wire           wr_entry = wr_live && s_wr_op == OP_ENTRY;
wire           wr_locks = wr_live && (s_wr_op == OP_LOCKS || s_wr_op == OP_ENTRY);
wire           wr_epoch = wr_live && s_wr_op == OP_EPOCH;
wire           wr_floor = wr_live && (s_wr_op == OP_FLOOR || s_wr_op == OP_ENTRY)
    && !(ack_q_reg && ack_q_index_reg == wr_index);
// FLOOR / LOCKS carry the value; ENTRY zeroes both.
wire [31:0]    wr_floor_val = s_wr_op == OP_ENTRY ? 32'd0 : s_wr_word;
wire [15:0]    wr_locks_val = s_wr_op == OP_ENTRY ? 16'd0 : s_wr_word[15:0];
wire [31:0]    wr_pid_val = s_wr_open ? s_wr_pid : 32'd0;
wire [63:0]    wr_key_val = s_wr_open ? s_wr_key : 64'd0;
wire [15:0]    wr_dquota_val = s_wr_open ? s_wr_dquota : 16'd0;
wire [15:0]    wr_lquota_val = s_wr_open ? s_wr_lquota : 16'd0;

assign m_epoch = wr_epoch ? s_wr_word : epoch_reg;

// Intake port.
wire [SIW-1:0] in_index = s_in_session[SIW-1:0];
wire in_cmd = wr_index == in_index;
wire in_valid = wr_epoch ? 1'b0 : (wr_entry && in_cmd) ? s_wr_open : valid_reg[in_index];
wire [63:0] in_key = (wr_entry && in_cmd) ? wr_key_val : key_mem[in_index];
wire [31:0] in_pid = (wr_entry && in_cmd) ? wr_pid_val : pid_mem[in_index];
assign m_in_floor = (wr_floor && in_cmd) ? wr_floor_val : floor_mem[in_index];
assign m_in_ok = m_epoch != 32'd0 && s_in_epoch == m_epoch
    && s_in_session != 16'd0 && 32'(s_in_session) < SESSIONS
    && in_valid && in_key == s_in_key && in_pid == s_in_pid;

// First-stage port.
wire [SIW-1:0] l1_index = s_l1_session[SIW-1:0];
wire l1_cmd = wr_index == l1_index;
assign m_l1_floor = (wr_floor && l1_cmd) ? wr_floor_val : floor_mem[l1_index];
wire l1_ack = s_l1_ack_valid && (m_l1_floor == 32'd0 || serial_before(m_l1_floor, s_l1_ack_id));
assign m_l1_dquota = (wr_entry && l1_cmd) ? wr_dquota_val : dquota_mem[l1_index];

// Engine port.
wire [SIW-1:0] eng_index = s_eng_session[SIW-1:0];
wire eng_cmd = wr_index == eng_index;
wire eng_valid = wr_epoch ? 1'b0 : (wr_entry && eng_cmd) ? s_wr_open : valid_reg[eng_index];
wire [63:0] eng_key = (wr_entry && eng_cmd) ? wr_key_val : key_mem[eng_index];
wire [31:0] eng_pid = (wr_entry && eng_cmd) ? wr_pid_val : pid_mem[eng_index];
assign m_eng_ok = s_eng_session != 16'd0 && 32'(s_eng_session) < SESSIONS
    && eng_valid && eng_key == s_eng_key && eng_pid == s_eng_pid;
assign m_eng_dquota = (wr_entry && eng_cmd) ? wr_dquota_val : dquota_mem[eng_index];
assign m_eng_lquota = (wr_entry && eng_cmd) ? wr_lquota_val : lquota_mem[eng_index];
assign m_eng_locks = (wr_locks && eng_cmd) ? wr_locks_val : locks_mem[eng_index];
assign m_eng_floor = (wr_floor && eng_cmd) ? wr_floor_val : floor_mem[eng_index];

// Only the low bits of these ids index an entry (no credential check on them).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_ids = ^{s_l1_session, s_wr_session};
/* verilator lint_on UNUSEDSIGNAL */

always_ff @(posedge clk) begin
    if (wr_entry) begin
        valid_reg[wr_index] <= s_wr_open;
        pid_mem[wr_index] <= wr_pid_val;
        key_mem[wr_index] <= wr_key_val;
        dquota_mem[wr_index] <= wr_dquota_val;
        lquota_mem[wr_index] <= wr_lquota_val;
    end
    if (wr_locks) locks_mem[wr_index] <= wr_locks_val;
    if (wr_floor) floor_mem[wr_index] <= wr_floor_val;
    if (wr_epoch) begin
        epoch_reg <= s_wr_word;
        valid_reg <= 0;
    end
    // The L1 ack is the newer write of its floor.
    if (l1_ack) floor_mem[l1_index] <= s_l1_ack_id;
    ack_q_reg <= l1_ack;
    ack_q_index_reg <= l1_index;
    rst_q_reg <= rst;
    if (rst) begin
        epoch_reg <= 32'd0;
        valid_reg <= 0;
        ack_q_reg <= 1'b0;
    end
end

endmodule

`resetall
