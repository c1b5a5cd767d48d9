// clio_region_gate: the rack region gate, ranges of address spaces held back while a region migrates.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// ENTRIES entries, each (valid, PID, VA, length, mode, dirty bitmap), set by
// the slow path's GATE_SET descriptors (wire README, "The region gate on the
// rings"); the behaviour is the model's `clio_fastpath::GateTable`
// (ip/fastpath/src/gate.rs), checked request by request by the bench.
//
// Set port: `s_set_valid` with entry, PID, VA, length and mode (a decoded
// GATE_SET) is applied at the edge: the entry takes the range and mode with
// an empty bitmap, or is cleared (mode OPEN). `m_set_ok` says whether the
// entry exists (entry < ENTRIES); a set of another entry changes nothing
// (the top counts it rejected). `s_clear` (an EPOCH: a new boot of the slow
// path) clears every entry at the edge; reset does too.
//
// Check port (registered): the request's PID, VA, total length and class
// (0 not gated, 1 reads, 2 changes, 3 offload call). It is checked over
// [va, va + max(len, 1)) (saturated at 2^64) against every entry of its PID
// whose range [e.va, e.va + e.len) (saturated) overlaps it, lowest entry
// first:
//   MOVED                     -> refuse MOVED
//   REJOIN, change or offload -> refuse MOVED
//   PAUSED, change or offload -> refuse BUSY
//   TRACKING, offload         -> refuse BUSY
// The first refusing entry decides (`m_refuse`, `m_status`). Otherwise a
// change under TRACKING entries names the lowest one whose bitmap lacks some
// of the 64 KiB blocks the range touches (`m_track`, its entry, PID, first
// VA and the missing blocks `m_track_mask`): the top pushes a GATE_DIRTY of
// them (or answers BUSY without RX room), then marks them (`s_mark_valid`,
// applied at the edge) and checks again until neither is raised.
// `m_live`: some entry is set (without one nothing is checked).
//
// The verdict is registered: the outputs are the check of the request and
// the table as they stood in the cycle before, and `m_ready` says they are
// today's: the request's inputs are the ones checked and no set, mark or
// clear has applied since, or no entry is set (then `m_refuse` and
// `m_track` are 0: nothing to check). A user waits for `m_ready`, one cycle
// after its request or the table changes. (Combinational, the check's
// 64-bit end, range compares and lowest-entry select fed the top's intake
// decision and the loads behind it, the top's deepest paths: rtl/README,
// "Cutting the decision cone".)
module clio_region_gate #(
    // Entries of the table (a board's is the wire crate's GATE_ENTRIES).
    parameter ENTRIES = clio_pkg::GATE_ENTRIES
) (
    input  wire         clk,
    input  wire         rst,

    input  wire         s_set_valid,
    input  wire  [31:0] s_set_entry,
    input  wire  [31:0] s_set_pid,
    input  wire  [63:0] s_set_va,
    input  wire  [63:0] s_set_len,
    input  wire  [2:0]  s_set_mode,
    output wire         m_set_ok,
    input  wire         s_clear,

    input  wire  [31:0] s_req_pid,
    input  wire  [63:0] s_req_va,
    input  wire  [31:0] s_req_len,
    input  wire  [1:0]  s_req_class,     // 0 none, 1 read, 2 change, 3 offload
    output wire         m_ready,
    output wire         m_refuse,
    output wire  [7:0]  m_status,
    output wire         m_track,
    output wire  [31:0] m_track_entry,
    output wire  [31:0] m_track_pid,
    output wire  [63:0] m_track_va,
    output wire  [63:0] m_track_mask,
    output wire         m_live,

    input  wire         s_mark_valid,
    input  wire  [31:0] s_mark_entry,
    input  wire  [63:0] s_mark_mask
);

import clio_pkg::*;

localparam [1:0] CLASS_READ = 2'd1, CLASS_CHANGE = 2'd2, CLASS_OFFLOAD = 2'd3;
localparam BLOCK_SHIFT = $clog2(GATE_BLOCK);

initial begin
    if (ENTRIES < 1 || ENTRIES > 4096) begin
        $error("Error: ENTRIES must be 1..4096 (instance %m)");
        $finish;
    end
    if ((1 << BLOCK_SHIFT) != GATE_BLOCK) begin
        $error("Error: GATE_BLOCK must be a power of two (instance %m)");
        $finish;
    end
end

reg [ENTRIES-1:0] valid_reg = 0;
reg [31:0] pid_mem   [0:ENTRIES-1];
reg [63:0] va_mem    [0:ENTRIES-1];
reg [2:0]  mode_mem  [0:ENTRIES-1];
reg [63:0] dirty_mem [0:ENTRIES-1];
// Kept at the set so the check does not compute them per request (its
// path into the dirty bits was the top's deepest): the entry's end
// e.va + e.len (saturated), e.va + 1 (mod 2^64: the request's last byte
// less e.va is req_end - va1), the entry's last block (its last byte's,
// clamped to 63) and whether the entry is empty (then the mask runs to
// block 63, as hi = e.va - 1 - e.va wraps in the model).
reg [63:0] end_mem   [0:ENTRIES-1];
reg [63:0] va1_mem   [0:ENTRIES-1];
reg [5:0]  elast_mem [0:ENTRIES-1];
reg [ENTRIES-1:0] empty_reg = 0;

initial begin : init_mem
    integer i;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        pid_mem[i] = 0;
        va_mem[i] = 0;
        mode_mem[i] = 0;
        dirty_mem[i] = 0;
        end_mem[i] = 0;
        va1_mem[i] = 0;
        elast_mem[i] = 0;
    end
end

assign m_set_ok = s_set_entry < 32'(ENTRIES);
assign m_live = |valid_reg;

// a + b saturated at 2^64 - 1.
function automatic [63:0] sat_add(input [63:0] a, input [63:0] b);
    reg [64:0] s;
    begin
        s = {1'b0, a} + {1'b0, b};
        sat_add = s[64] ? {64{1'b1}} : s[63:0];
    end
endfunction

// The block of an offset (its bits from BLOCK_SHIFT up), clamped to 63.
function automatic [5:0] block63(input [63-BLOCK_SHIFT:0] blk);
    begin
        block63 = (blk[63-BLOCK_SHIFT:6] != 0) ? 6'd63 : blk[5:0];
    end
endfunction

// The lowest set bit of v alone.
function automatic [ENTRIES-1:0] lowest(input [ENTRIES-1:0] v);
    begin
        lowest = v & (~v + 1'b1);
    end
endfunction

// The request's end, max(len, 1) as len with bit 0 forced when len is 0.
wire [63:0] req_end = sat_add(s_req_va, {32'd0, s_req_len[31:1], s_req_len[0] | (s_req_len == 32'd0)});
wire changes = s_req_class == CLASS_CHANGE || s_req_class == CLASS_OFFLOAD;

// Per entry, in parallel: overlap, refusal, and the blocks [first, last]
// the request touches, as the model's loop computes them (lo = max(va,
// e.va) - e.va, hi = min(end, e.end) - 1 - e.va; first = lo >> 16, last =
// min(hi >> 16, 63), none when first > 63). For an overlapping request both
// ends lie above e.va, so min() splits into the entry's last block (kept)
// and the request's (one subtract), and the mask is the AND of the three
// thermometer codes (b >= first, b <= either last), not a shift and a
// subtract behind a min, compare and clamp.
wire [ENTRIES-1:0] moved_v, refuse_v, track_v;
wire [63:0] fresh_v [0:ENTRIES-1];
genvar g;
generate
for (g = 0; g < ENTRIES; g = g + 1) begin : per_entry
    wire hit = valid_reg[g] && s_req_class != 2'd0 && pid_mem[g] == s_req_pid
        && s_req_va < end_mem[g] && va_mem[g] < req_end;
    wire moved = mode_mem[g] == GATE_MODE_MOVED || (mode_mem[g] == GATE_MODE_REJOIN && changes);
    wire busy = (mode_mem[g] == GATE_MODE_PAUSED && changes)
        || (mode_mem[g] == GATE_MODE_TRACKING && s_req_class == CLASS_OFFLOAD);
    // First block: the request's start past e.va, else 0; none past 63.
    // The offsets' bits below a block are not needed.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [64:0] lo = {1'b0, s_req_va} - {1'b0, va_mem[g]};
    wire [63:0] hi = req_end - va1_mem[g];
    /* verilator lint_on UNUSEDSIGNAL */
    wire after = !lo[64];
    wire first_out = after && lo[63:BLOCK_SHIFT+6] != 0;
    wire [5:0] first = after ? lo[BLOCK_SHIFT+5:BLOCK_SHIFT] : 6'd0;
    wire [5:0] rlast = block63(hi[63:BLOCK_SHIFT]);
    wire [63:0] blocks;
    genvar b;
    // b >= first and b <= last: constant for b = 0 or 63 on one side.
    /* verilator lint_off UNSIGNED */
    /* verilator lint_off CMPCONST */
    for (b = 0; b < 64; b = b + 1) begin : per_block
        assign blocks[b] = !first_out && first <= 6'(b) && elast_mem[g] >= 6'(b)
            && (empty_reg[g] || rlast >= 6'(b));
    end
    /* verilator lint_on CMPCONST */
    /* verilator lint_on UNSIGNED */
    assign fresh_v[g] = blocks & ~dirty_mem[g];
    assign moved_v[g] = moved;
    assign refuse_v[g] = hit && (moved || busy);
    assign track_v[g] = hit && s_req_class == CLASS_CHANGE && mode_mem[g] == GATE_MODE_TRACKING
        && fresh_v[g] != 64'd0;
end
endgenerate

// The lowest refusing entry decides; else the lowest tracking entry with
// new blocks reports (a refusal decides before any report).
wire [ENTRIES-1:0] refuse_first = lowest(refuse_v);
wire [ENTRIES-1:0] track_first = (|refuse_v) ? {ENTRIES{1'b0}} : lowest(track_v);

logic        c_refuse, c_track;
logic [7:0]  c_status;
logic [31:0] c_track_entry, c_track_pid;
logic [63:0] c_track_va, c_track_mask;
always @* begin : verdict
    integer i;
    c_refuse = |refuse_v;
    c_status = !c_refuse ? STATUS_OK : (|(refuse_first & moved_v)) ? STATUS_MOVED : STATUS_BUSY;
    c_track = |track_first;
    c_track_entry = 32'd0;
    c_track_pid = 32'd0;
    c_track_va = 64'd0;
    c_track_mask = 64'd0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        c_track_entry = c_track_entry | (track_first[i] ? 32'(i) : 32'd0);
        c_track_pid = c_track_pid | (track_first[i] ? pid_mem[i] : 32'd0);
        c_track_va = c_track_va | (track_first[i] ? va_mem[i] : 64'd0);
        c_track_mask = c_track_mask | (track_first[i] ? fresh_v[i] : 64'd0);
    end
end

// The verdict as registered, the request it is for, and whether the table
// changed at the edge it was taken (then it is the old table's).
reg        q_refuse = 1'b0, q_track = 1'b0;
reg [7:0]  q_status = 0;
reg [31:0] q_track_entry = 0, q_track_pid = 0;
reg [63:0] q_track_va = 0, q_track_mask = 0;
reg [31:0] q_pid = 0, q_len = 0;
reg [63:0] q_va = 0;
reg [1:0]  q_class = 0;
reg        q_stale = 1'b1;
wire       q_same = q_pid == s_req_pid && q_va == s_req_va && q_len == s_req_len && q_class == s_req_class;
assign m_ready = !m_live || (q_same && !q_stale);
assign m_refuse = m_live && q_refuse;
assign m_status = q_status;
assign m_track = m_live && q_track;
assign m_track_entry = q_track_entry;
assign m_track_pid = q_track_pid;
assign m_track_va = q_track_va;
assign m_track_mask = q_track_mask;

// Reads never report: CLASS_READ only matters through `changes`.
/* verilator lint_off UNUSEDPARAM */
localparam [1:0] UNUSED_CLASS = CLASS_READ;
/* verilator lint_on UNUSEDPARAM */

wire set_live = s_set_valid && m_set_ok;
wire mark_live = s_mark_valid && s_mark_entry < 32'(ENTRIES);
localparam EIW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;
wire [EIW-1:0] set_index = s_set_entry[EIW-1:0];
wire [EIW-1:0] mark_index = s_mark_entry[EIW-1:0];
wire [63:0] set_end = sat_add(s_set_va, s_set_len);
/* verilator lint_off UNUSEDSIGNAL */
wire [63:0] set_hi = set_end - 64'd1 - s_set_va;   // its bits below a block unused
/* verilator lint_on UNUSEDSIGNAL */

always_ff @(posedge clk) begin
    q_refuse <= c_refuse;
    q_status <= c_status;
    q_track <= c_track;
    q_track_entry <= c_track_entry;
    q_track_pid <= c_track_pid;
    q_track_va <= c_track_va;
    q_track_mask <= c_track_mask;
    q_pid <= s_req_pid;
    q_va <= s_req_va;
    q_len <= s_req_len;
    q_class <= s_req_class;
    q_stale <= set_live || mark_live || s_clear || rst;
    if (mark_live) dirty_mem[mark_index] <= dirty_mem[mark_index] | s_mark_mask;
    if (set_live) begin
        valid_reg[set_index] <= s_set_mode != GATE_MODE_OPEN;
        pid_mem[set_index] <= s_set_pid;
        va_mem[set_index] <= s_set_va;
        mode_mem[set_index] <= s_set_mode;
        end_mem[set_index] <= set_end;
        va1_mem[set_index] <= s_set_va + 64'd1;
        elast_mem[set_index] <= block63(set_hi[63:BLOCK_SHIFT]);
        empty_reg[set_index] <= s_set_len == 64'd0;
        // A set (also of the same range) starts an empty bitmap.
        dirty_mem[set_index] <= 64'd0;
    end
    if (s_clear || rst) valid_reg <= 0;
end

endmodule

`resetall
