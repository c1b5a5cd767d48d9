// clio_dedup: dedup buffer of executed non-idempotent requests, freed by acknowledgements (CAM).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Remembers the response record of each executed non-idempotent request
// under its key {opcode, offset, first id, session} (session in the low 16
// bits, the first-attempt id above it). Records are never evicted: an insert
// takes the lowest free entry, and entries are freed only by
//  ack      every entry of session `s_ack_session` whose id is serially
//           before `s_ack_id` (RFC 1982 over u32), all in one cycle;
//  close    every entry of session `s_close_session`;
//  clear    every entry (a new boot epoch);
//  complete with `s_complete_keep` = 0: the entry of `s_complete_key`.
// An entry may be a reservation (`pending`, taken when a request goes to the
// slow path): counted like a record, never a lookup hit; `complete` with
// keep = 1 turns it into the record. Lookup answers one cycle later with
// hit (complete records only), the record, whether the buffer is full and
// how many entries the key's session holds. Same-cycle operations: the
// lookup sees the state before the edge; frees win over a complete that
// keeps; an insert takes an entry that was free before the edge (never one
// a same-cycle free releases). An insert whose key is present overwrites it
// in place; an insert into a full buffer is dropped (the engine checks room
// first).
module clio_dedup #(
    parameter ENTRIES = 64,
    parameter KEY_WIDTH = 88,
    parameter REC_WIDTH = 280,
    parameter CW = $clog2(ENTRIES + 1)
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [KEY_WIDTH-1:0] s_lookup_key,
    input  wire                 s_lookup_valid,
    output wire                 m_lookup_hit,
    output wire [REC_WIDTH-1:0] m_lookup_rec,
    output wire                 m_lookup_full,
    output wire [CW-1:0]        m_lookup_count,
    output wire                 m_lookup_valid,

    input  wire [KEY_WIDTH-1:0] s_insert_key,
    input  wire [REC_WIDTH-1:0] s_insert_rec,
    input  wire                 s_insert_pending,
    input  wire                 s_insert_valid,

    input  wire [KEY_WIDTH-1:0] s_complete_key,
    input  wire [REC_WIDTH-1:0] s_complete_rec,
    input  wire                 s_complete_keep,
    input  wire                 s_complete_valid,

    input  wire [15:0]          s_ack_session,
    input  wire [31:0]          s_ack_id,
    input  wire                 s_ack_valid,

    input  wire [15:0]          s_close_session,
    input  wire                 s_close_valid,

    input  wire                 s_clear
);

localparam IW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;

initial begin
    if (ENTRIES < 1) begin
        $error("Error: ENTRIES must be at least 1 (instance %m)");
        $finish;
    end
    if (KEY_WIDTH < 48) begin
        $error("Error: KEY_WIDTH must hold {id, session} in its low 48 bits (instance %m)");
        $finish;
    end
end

// Live bits as one vector: frees of many entries are one masked update.
reg [ENTRIES-1:0]   live_v = 0;
reg                 pend_mem[0:ENTRIES-1];
reg [KEY_WIDTH-1:0] key_mem[0:ENTRIES-1];
reg [REC_WIDTH-1:0] rec_mem[0:ENTRIES-1];

reg                 hit_reg = 1'b0;
reg [REC_WIDTH-1:0] rec_reg = 0;
reg                 full_reg = 1'b0;
reg [CW-1:0]        count_reg = 0;
reg                 valid_reg = 1'b0;

reg          look_hit;
reg [IW-1:0] look_index;
reg [CW-1:0] look_count;
reg          any_free;
reg [IW-1:0] free_index;
reg          ins_hit;
reg [IW-1:0] ins_index;
reg          cmp_hit;
reg [IW-1:0] cmp_index;
reg [ENTRIES-1:0] free_now;
reg [ENTRIES-1:0] ins_new;
reg [31:0]   d;
integer i;

always @* begin
    look_hit = 1'b0;
    look_index = 0;
    look_count = 0;
    any_free = 1'b0;
    free_index = 0;
    ins_hit = 1'b0;
    ins_index = 0;
    cmp_hit = 1'b0;
    cmp_index = 0;
    free_now = 0;
    d = 0;
    // High to low: the lowest free entry wins.
    for (i = ENTRIES - 1; i >= 0; i = i - 1) begin
        if (live_v[i] && !pend_mem[i] && key_mem[i] == s_lookup_key) begin
            look_hit = 1'b1;
            look_index = i[IW-1:0];
        end
        if (live_v[i] && key_mem[i][15:0] == s_lookup_key[15:0]) look_count = look_count + 1'b1;
        if (!live_v[i]) begin
            any_free = 1'b1;
            free_index = i[IW-1:0];
        end
        if (live_v[i] && key_mem[i] == s_insert_key) begin
            ins_hit = 1'b1;
            ins_index = i[IW-1:0];
        end
        if (live_v[i] && key_mem[i] == s_complete_key) begin
            cmp_hit = 1'b1;
            cmp_index = i[IW-1:0];
        end
        d = s_ack_id - key_mem[i][47:16];
        free_now[i] = s_clear
            || (s_ack_valid && key_mem[i][15:0] == s_ack_session && d != 32'd0 && !d[31])
            || (s_close_valid && key_mem[i][15:0] == s_close_session);
    end
    if (s_complete_valid && !s_complete_keep && cmp_hit) free_now[cmp_index] = 1'b1;
    ins_new = 0;
    if (s_insert_valid && !ins_hit && any_free) ins_new[free_index] = 1'b1;
end

always @(posedge clk) begin
    valid_reg <= s_lookup_valid;
    if (s_lookup_valid) begin
        hit_reg <= look_hit;
        rec_reg <= rec_mem[look_index];
        full_reg <= !any_free;
        count_reg <= look_count;
    end
    if (s_complete_valid && s_complete_keep && cmp_hit) begin
        rec_mem[cmp_index] <= s_complete_rec;
        pend_mem[cmp_index] <= 1'b0;
    end
    if (s_insert_valid) begin
        if (ins_hit) begin
            rec_mem[ins_index] <= s_insert_rec;
            pend_mem[ins_index] <= s_insert_pending;
        end else if (any_free) begin
            pend_mem[free_index] <= s_insert_pending;
            key_mem[free_index] <= s_insert_key;
            rec_mem[free_index] <= s_insert_rec;
        end
    end
    // Frees clear live entries; an insert sets an entry that was free.
    live_v <= (live_v & ~free_now) | ins_new;
    if (rst) begin
        valid_reg <= 1'b0;
        live_v <= 0;
    end
end

assign m_lookup_hit = hit_reg;
assign m_lookup_rec = rec_reg;
assign m_lookup_full = full_reg;
assign m_lookup_count = count_reg;
assign m_lookup_valid = valid_reg;

endmodule

`resetall
