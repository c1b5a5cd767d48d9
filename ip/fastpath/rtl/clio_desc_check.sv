// clio_desc_check: validity of a TX-ring descriptor as the wire crate's Descriptor::parse decides it.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational. A slot is accepted when its CRC32C (bytes 0..59) matches,
// its kind is a TX kind, its flag bits are those the kind defines, every byte
// the kind does not use is zero (parse re-encodes and compares), the u64
// operands that carry u32 (u16) values have zero high bytes, an EPOCH's
// epoch is nonzero, a GATE_SET's mode is defined and its range is nonempty,
// does not wrap and (TRACKING) is at most GATE_MAX_TRACKED bytes unless the
// mode is OPEN, an OFFLOAD_REPLY fragment's length is 1..MAX_OFFLOAD_LEN,
// its count ceil(len / 40), its index below the count and its bytes after
// the datagram's end zero, and a PTE_WRITE's
// entry parses (no reserved flag or permission bits, page shift in range
// when allocated, never valid without allocated).
module clio_desc_check #(
    parameter DATA_WIDTH = 512
) (
    input  wire [DATA_WIDTH-1:0] slot,
    output wire                  ok
);

import clio_pkg::SLOT_OFF_KIND;
import clio_pkg::SLOT_OFF_FLAGS;
import clio_pkg::SLOT_OFF_PAGE_SHIFT;
import clio_pkg::SLOT_OFF_STATUS;
import clio_pkg::SLOT_OFF_PID;
import clio_pkg::SLOT_OFF_TAG;
import clio_pkg::SLOT_OFF_REQ_ID;
import clio_pkg::SLOT_OFF_A;
import clio_pkg::SLOT_OFF_B;
import clio_pkg::SLOT_OFF_C;
import clio_pkg::SLOT_OFF_F;
import clio_pkg::SLOT_OFF_CRC;
import clio_pkg::DESC_PTE_WRITE;
import clio_pkg::DESC_PTE_REMOVE;
import clio_pkg::DESC_TLB_INVALIDATE;
import clio_pkg::DESC_FREE_PA_PUSH;
import clio_pkg::DESC_REPLY;
import clio_pkg::DESC_SESSION_REPLY;
import clio_pkg::DESC_EPOCH;
import clio_pkg::DESC_GATE_SET;
import clio_pkg::DESC_OFFLOAD_REPLY;
import clio_pkg::SLOT_OFF_E;
import clio_pkg::GATE_MODE_OPEN;
import clio_pkg::GATE_MODE_TRACKING;
import clio_pkg::GATE_MODE_REJOIN;
import clio_pkg::GATE_MAX_TRACKED;
import clio_pkg::DESC_FLAG_FIXED_OR_MOVED;
import clio_pkg::DESC_FLAG_CLOSE;
import clio_pkg::DESC_FLAG_UPDATE;
import clio_pkg::PTE_LEN;
import clio_pkg::PTE_OFF_PERMS;
import clio_pkg::PTE_OFF_FLAGS;
import clio_pkg::PTE_FLAG_ALLOCATED;
import clio_pkg::PTE_FLAG_VALID;
import clio_pkg::PTE_PAGE_SHIFT_SHIFT;
import clio_pkg::PTE_FLAG_RESERVED;
import clio_pkg::PTE_MIN_PAGE_SHIFT;
import clio_pkg::PTE_MAX_PAGE_SHIFT;
import clio_pkg::PERM_READ;
import clio_pkg::PERM_WRITE;

localparam N = SLOT_OFF_CRC;

initial begin
    if (DATA_WIDTH != 512) begin
        $error("Error: a ring slot is one 512-bit beat (instance %m)");
        $finish;
    end
end

function [N-1:0] bytes(input integer off, input integer len);
    /* verilator lint_off UNUSEDSIGNAL */
    reg [63:0] m;
    /* verilator lint_on UNUSEDSIGNAL */
    begin
        m = ((64'd1 << len) - 64'd1) << off;
        bytes = m[N-1:0];
    end
endfunction

localparam [N-1:0] M_PTE_WRITE = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_FLAGS, 1)
    | bytes(SLOT_OFF_A, PTE_LEN) | bytes(SLOT_OFF_C, 4) | bytes(SLOT_OFF_F, 4);
localparam [N-1:0] M_PTE_REMOVE = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_PID, 4)
    | bytes(SLOT_OFF_A, 8) | bytes(SLOT_OFF_C, 4) | bytes(SLOT_OFF_F, 4);
localparam [N-1:0] M_TLB_INVALIDATE = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_PID, 4)
    | bytes(SLOT_OFF_A, 8) | bytes(SLOT_OFF_F, 4);
localparam [N-1:0] M_FREE_PA_PUSH = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_PAGE_SHIFT, 1)
    | bytes(SLOT_OFF_B, 4);
localparam [N-1:0] M_REPLY = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_FLAGS, 1) | bytes(SLOT_OFF_STATUS, 1)
    | bytes(SLOT_OFF_PID, 4) | bytes(SLOT_OFF_TAG, 4) | bytes(SLOT_OFF_REQ_ID, 4)
    | bytes(SLOT_OFF_A, 8) | bytes(SLOT_OFF_B, 8) | bytes(SLOT_OFF_F, 4);
// SESSION_REPLY: key in A, the u16 session in B, the quotas in C.
localparam [N-1:0] M_SESSION_REPLY = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_FLAGS, 1)
    | bytes(SLOT_OFF_STATUS, 1) | bytes(SLOT_OFF_PID, 4) | bytes(SLOT_OFF_TAG, 4)
    | bytes(SLOT_OFF_REQ_ID, 4) | bytes(SLOT_OFF_A, 8) | bytes(SLOT_OFF_B, 2) | bytes(SLOT_OFF_C, 8);
// EPOCH: the u32 epoch in A, nonzero.
localparam [N-1:0] M_EPOCH = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_A, 4);
// GATE_SET: the mode in STATUS, the entry in TAG, the range in A (VA) and B (length).
// OFFLOAD_REPLY: index | count << 16 in PID, tag, seq in REQ_ID, data in A..E, len in F.
localparam [N-1:0] M_OFFLOAD = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_PID, 4) | bytes(SLOT_OFF_TAG, 4)
    | bytes(SLOT_OFF_REQ_ID, 4) | bytes(SLOT_OFF_A, SLOT_OFF_E + 8 - SLOT_OFF_A) | bytes(SLOT_OFF_F, 4);
localparam [N-1:0] M_GATE_SET = bytes(SLOT_OFF_KIND, 1) | bytes(SLOT_OFF_STATUS, 1) | bytes(SLOT_OFF_PID, 4)
    | bytes(SLOT_OFF_TAG, 4) | bytes(SLOT_OFF_A, 8) | bytes(SLOT_OFF_B, 8);

wire [31:0] crc_raw;
clio_crc32c #(.DATA_WIDTH(DATA_WIDTH)) crc_inst (
    .crc_in(32'hffffffff), .data(slot), .keep({{(DATA_WIDTH/8-N){1'b0}}, {N{1'b1}}}), .crc_out(crc_raw)
);

wire [7:0] kind = slot[SLOT_OFF_KIND*8 +: 8];
wire [7:0] flags = slot[SLOT_OFF_FLAGS*8 +: 8];
wire [7:0] pte_perms = slot[(SLOT_OFF_A+PTE_OFF_PERMS)*8 +: 8];
wire [7:0] pte_flags = slot[(SLOT_OFF_A+PTE_OFF_FLAGS)*8 +: 8];
wire [4:0] pte_shift = pte_flags[PTE_PAGE_SHIFT_SHIFT +: 5];
wire       pte_alloc = (pte_flags & PTE_FLAG_ALLOCATED) != 0;
wire       pte_valid = (pte_flags & PTE_FLAG_VALID) != 0;

reg [N-1:0] used;
reg [7:0]   flags_ok_mask;
reg         kind_ok;
reg [N-1:0] nonzero;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    kind_ok = 1'b1;
    used = 0;
    flags_ok_mask = 0;
    case (kind)
        DESC_PTE_WRITE: begin used = M_PTE_WRITE; flags_ok_mask = DESC_FLAG_UPDATE; end
        DESC_PTE_REMOVE: used = M_PTE_REMOVE;
        DESC_TLB_INVALIDATE: used = M_TLB_INVALIDATE;
        DESC_FREE_PA_PUSH: used = M_FREE_PA_PUSH;
        DESC_REPLY: begin used = M_REPLY; flags_ok_mask = DESC_FLAG_FIXED_OR_MOVED; end
        DESC_SESSION_REPLY: begin used = M_SESSION_REPLY; flags_ok_mask = DESC_FLAG_CLOSE; end
        DESC_EPOCH: used = M_EPOCH;
        DESC_GATE_SET: used = M_GATE_SET;
        DESC_OFFLOAD_REPLY: used = M_OFFLOAD;
        default: kind_ok = 1'b0;
    endcase
    for (i = 0; i < N; i = i + 1) begin
        nonzero[i] = slot[i*8 +: 8] != 8'd0;
    end
    // The flags byte is judged by its own rule below.
    nonzero[SLOT_OFF_FLAGS] = 1'b0;
end

wire pte_ok = kind != DESC_PTE_WRITE || (
    (pte_flags & PTE_FLAG_RESERVED) == 8'd0
    && (pte_perms & ~(PERM_READ | PERM_WRITE)) == 8'd0
    && (!pte_alloc || ({27'd0, pte_shift} >= PTE_MIN_PAGE_SHIFT && {27'd0, pte_shift} <= PTE_MAX_PAGE_SHIFT))
    && (!pte_valid || pte_alloc));

wire epoch_ok = kind != DESC_EPOCH || slot[SLOT_OFF_A*8 +: 32] != 32'd0;

// GATE_SET: mode OPEN..REJOIN; unless OPEN, 0 < len <= 2^64 - 1 - va (no
// wrap), and at most GATE_MAX_TRACKED when TRACKING.
wire [7:0]  gate_mode = slot[SLOT_OFF_STATUS*8 +: 8];
wire [63:0] gate_va = slot[SLOT_OFF_A*8 +: 64];
wire [63:0] gate_len = slot[SLOT_OFF_B*8 +: 64];
wire gate_ok = kind != DESC_GATE_SET || (gate_mode <= {5'd0, GATE_MODE_REJOIN}
    && (gate_mode == {5'd0, GATE_MODE_OPEN} || (gate_len != 64'd0
        && (gate_mode == {5'd0, GATE_MODE_TRACKING} ? gate_len <= 64'(GATE_MAX_TRACKED) : gate_len <= ~gate_va))));

// OFFLOAD_REPLY (the wire's `fragment` checks, fragments of 40 bytes):
// 1 <= len <= MAX_OFFLOAD_LEN, (count - 1) * 40 < len <= count * 40,
// index < count, zeros after the datagram's end.
localparam [31:0] OF_MAX = 32'd131072;     // clio_wire::ring::MAX_OFFLOAD_LEN
wire [31:0] of_len = slot[SLOT_OFF_F*8 +: 32];
wire [15:0] of_index = slot[SLOT_OFF_PID*8 +: 16];
wire [15:0] of_count = slot[(SLOT_OFF_PID+2)*8 +: 16];
wire [21:0] of_cap = {of_count, 5'd0} + {2'd0, of_count, 3'd0};       // count * 40
wire [21:0] of_start = {of_index, 5'd0} + {2'd0, of_index, 3'd0};     // index * 40
wire [21:0] of_left = of_len[21:0] - of_start;                         // bytes from this fragment on
reg  [39:0] of_tail;                                                   // data bytes past the end
always @* begin : comb_of
    integer j;
    for (j = 0; j < 40; j = j + 1) of_tail[j] = {16'd0, j[5:0]} >= of_left && slot[(SLOT_OFF_A+j)*8 +: 8] != 8'd0;
end
wire of_ok = kind != DESC_OFFLOAD_REPLY || (of_len != 32'd0 && of_len <= OF_MAX
    && {10'd0, of_len[21:0]} <= {10'd0, of_cap} && {10'd0, of_len[21:0]} + 32'd40 > {10'd0, of_cap}
    && of_index < of_count && of_tail == 40'd0);

assign ok = ~crc_raw == slot[SLOT_OFF_CRC*8 +: 32] && kind_ok
    && (flags & ~flags_ok_mask) == 8'd0
    && (nonzero & ~used) == 0
    && pte_ok && epoch_ok && gate_ok && of_ok;

endmodule

`resetall
