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
// Check port (combinational): the request's PID, VA, total length and class
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
    output logic        m_refuse,
    output logic [7:0]  m_status,
    output logic        m_track,
    output logic [31:0] m_track_entry,
    output logic [31:0] m_track_pid,
    output logic [63:0] m_track_va,
    output logic [63:0] m_track_mask,
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
reg [63:0] len_mem   [0:ENTRIES-1];
reg [2:0]  mode_mem  [0:ENTRIES-1];
reg [63:0] dirty_mem [0:ENTRIES-1];

initial begin : init_mem
    integer i;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        pid_mem[i] = 0;
        va_mem[i] = 0;
        len_mem[i] = 0;
        mode_mem[i] = 0;
        dirty_mem[i] = 0;
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

// The blocks of an entry starting at `e_va`, ending at `e_end`, that
// [va, end) touches (they overlap); 0 past block 63.
function automatic [63:0] blocks(input [63:0] e_va, input [63:0] e_end,
                                 input [63:0] va, input [63:0] req_end);
    reg [63:0] lo, hi, first, last;
    reg [63:0] upper, lower;
    begin
        lo = ((va > e_va) ? va : e_va) - e_va;
        hi = ((req_end < e_end) ? req_end : e_end) - 64'd1 - e_va;
        first = lo >> BLOCK_SHIFT;
        last = hi >> BLOCK_SHIFT;
        if (last > 64'd63) last = 64'd63;
        upper = (last == 64'd63) ? {64{1'b1}} : ((64'd1 << (last + 64'd1)) - 64'd1);
        lower = (64'd1 << first[5:0]) - 64'd1;
        blocks = (first > 64'd63) ? 64'd0 : (upper & ~lower);
    end
endfunction

wire [63:0] req_end = sat_add(s_req_va, {32'd0, (s_req_len == 32'd0) ? 32'd1 : s_req_len});
wire changes = s_req_class == CLASS_CHANGE || s_req_class == CLASS_OFFLOAD;

always @* begin : verdict
    integer i;
    reg [63:0] e_end;
    reg hit;
    reg [63:0] fresh;
    m_refuse = 1'b0;
    m_status = STATUS_OK;
    m_track = 1'b0;
    m_track_entry = 32'd0;
    m_track_pid = 32'd0;
    m_track_va = 64'd0;
    m_track_mask = 64'd0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        e_end = sat_add(va_mem[i], len_mem[i]);
        hit = valid_reg[i] && s_req_class != 2'd0 && pid_mem[i] == s_req_pid
            && s_req_va < e_end && va_mem[i] < req_end;
        if (hit && !m_refuse) begin
            if (mode_mem[i] == GATE_MODE_MOVED
                    || (mode_mem[i] == GATE_MODE_REJOIN && changes)) begin
                m_refuse = 1'b1;
                m_status = STATUS_MOVED;
            end else if ((mode_mem[i] == GATE_MODE_PAUSED && changes)
                    || (mode_mem[i] == GATE_MODE_TRACKING && s_req_class == CLASS_OFFLOAD)) begin
                m_refuse = 1'b1;
                m_status = STATUS_BUSY;
            end
        end
        fresh = blocks(va_mem[i], e_end, s_req_va, req_end) & ~dirty_mem[i];
        if (hit && !m_track && s_req_class == CLASS_CHANGE
                && mode_mem[i] == GATE_MODE_TRACKING && fresh != 64'd0) begin
            m_track = 1'b1;
            m_track_entry = 32'(i);
            m_track_pid = pid_mem[i];
            m_track_va = va_mem[i];
            m_track_mask = fresh;
        end
    end
    // A refusal decides before any report.
    if (m_refuse) begin
        m_track = 1'b0;
        m_track_entry = 32'd0;
        m_track_pid = 32'd0;
        m_track_va = 64'd0;
        m_track_mask = 64'd0;
    end
end

// Reads never report: CLASS_READ only matters through `changes`.
/* verilator lint_off UNUSEDPARAM */
localparam [1:0] UNUSED_CLASS = CLASS_READ;
/* verilator lint_on UNUSEDPARAM */

wire set_live = s_set_valid && m_set_ok;
wire mark_live = s_mark_valid && s_mark_entry < 32'(ENTRIES);
localparam EIW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;
wire [EIW-1:0] set_index = s_set_entry[EIW-1:0];
wire [EIW-1:0] mark_index = s_mark_entry[EIW-1:0];

always_ff @(posedge clk) begin
    if (mark_live) dirty_mem[mark_index] <= dirty_mem[mark_index] | s_mark_mask;
    if (set_live) begin
        valid_reg[set_index] <= s_set_mode != GATE_MODE_OPEN;
        pid_mem[set_index] <= s_set_pid;
        va_mem[set_index] <= s_set_va;
        len_mem[set_index] <= s_set_len;
        mode_mem[set_index] <= s_set_mode;
        // A set (also of the same range) starts an empty bitmap.
        dirty_mem[set_index] <= 64'd0;
    end
    if (s_clear || rst) valid_reg <= 0;
end

endmodule

`resetall
