// clio_dedup: dedup buffer of executed non-idempotent requests, freed by acknowledgements (CAM).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Remembers the response record of each executed non-idempotent request
// under its key {opcode, offset, first id, session} (session in the low 16
// bits, the first-attempt id above it). Records are never evicted: entries
// are freed only by
//  ack      every entry of session `s_ack_session` whose id is serially
//           before `s_ack_id` (RFC 1982 over u32), all in one cycle;
//  close    every entry of session `s_close_session`;
//  clear    every entry (a new boot epoch);
//  update   mode REMOVE: the entry of `s_update_key` (a failed reply).
// One update port (the engine never needs two in a cycle), by `s_update_mode`:
//  INSERT   the record: overwrites the key's entry if present, else takes the
//           lowest free entry (dropped if none: the engine checks room first);
//  RESERVE  the same, as a reservation (a request handed to the slow path):
//           counted like a record, never a lookup hit;
//  COMPLETE the key's entry, if present, becomes the record;
//  REMOVE   the key's entry, if present, is freed.
// Lookup answers one cycle later with hit (records only), the record,
// whether the buffer is full, whether one free entry is left (`last`: a
// record inserted after the lookup fills it) and how many entries the key's
// session holds.
// Same-cycle operations: the lookup sees the state before the edge; frees
// win over an update of the same entry; an insert takes an entry that was
// free before the edge. The record store has a single write port.
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
    output wire                 m_lookup_last,
    output wire [CW-1:0]        m_lookup_count,
    output wire                 m_lookup_valid,

    input  wire [KEY_WIDTH-1:0] s_update_key,
    input  wire [REC_WIDTH-1:0] s_update_rec,
    input  wire [1:0]           s_update_mode,    // 0 INSERT, 1 RESERVE, 2 COMPLETE, 3 REMOVE
    input  wire                 s_update_valid,

    input  wire [15:0]          s_ack_session,
    input  wire [31:0]          s_ack_id,
    input  wire                 s_ack_valid,

    input  wire [15:0]          s_close_session,
    input  wire                 s_close_valid,

    input  wire                 s_clear
);

localparam IW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;
// Modes (2'd2 = COMPLETE: a write of the key's entry only, with pending cleared).
localparam [1:0] M_INSERT = 2'd0, M_RESERVE = 2'd1, M_REMOVE = 2'd3;

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
reg                 last_reg = 1'b0;
reg [CW-1:0]        count_reg = 0;
reg                 valid_reg = 1'b0;

reg          look_hit;
reg [IW-1:0] look_index;
reg [CW-1:0] look_count;
// The session's entries are counted by a balanced adder tree over the
// match vector (a heap: node k sums 2k+1 and 2k+2), not a chain of
// ENTRIES increments: log2(ENTRIES) adder levels on the lookup path.
localparam LEAVES = 1 << IW;
reg [ENTRIES-1:0] same_session;
reg [CW-1:0] count_tree[0:2*LEAVES-2];
reg          any_free;
reg [IW-1:0] free_index;
reg          upd_hit;
reg [IW-1:0] upd_index;
reg [ENTRIES-1:0] free_now;
reg [ENTRIES-1:0] ins_new;
reg [ENTRIES-1:0] free_v, free_rest;
reg          wr_en;
reg [IW-1:0] wr_index;
reg [31:0]   d;

wire upd_puts = s_update_mode == M_INSERT || s_update_mode == M_RESERVE;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    look_hit = 1'b0;
    look_index = 0;
    look_count = 0;
    any_free = 1'b0;
    free_index = 0;
    upd_hit = 1'b0;
    upd_index = 0;
    free_now = 0;
    same_session = 0;
    d = 0;
    // High to low: the lowest matching or free entry wins.
    for (i = ENTRIES - 1; i >= 0; i = i - 1) begin
        if (live_v[i] && !pend_mem[i] && key_mem[i] == s_lookup_key) begin
            look_hit = 1'b1;
            look_index = i[IW-1:0];
        end
        same_session[i] = live_v[i] && key_mem[i][15:0] == s_lookup_key[15:0];
        if (!live_v[i]) begin
            any_free = 1'b1;
            free_index = i[IW-1:0];
        end
        if (live_v[i] && key_mem[i] == s_update_key) begin
            upd_hit = 1'b1;
            upd_index = i[IW-1:0];
        end
        d = s_ack_id - key_mem[i][47:16];
        free_now[i] = s_clear
            || (s_ack_valid && key_mem[i][15:0] == s_ack_session && d != 32'd0 && !d[31])
            || (s_close_valid && key_mem[i][15:0] == s_close_session);
    end
    for (i = 0; i < LEAVES; i = i + 1)
        count_tree[LEAVES - 1 + i] = (i < ENTRIES) ? {{(CW-1){1'b0}}, same_session[i]} : {CW{1'b0}};
    for (i = LEAVES - 2; i >= 0; i = i - 1)
        count_tree[i] = count_tree[2*i + 1] + count_tree[2*i + 2];
    look_count = count_tree[0];
    if (s_update_valid && s_update_mode == M_REMOVE && upd_hit) free_now[upd_index] = 1'b1;
    // The free entries but the lowest: none when exactly one is free.
    free_v = ~live_v;
    free_rest = free_v & (free_v - 1'b1);
    ins_new = 0;
    if (s_update_valid && upd_puts && !upd_hit && any_free) ins_new[free_index] = 1'b1;
    // One write port: the key's entry, or the lowest free one for a new key.
    wr_en = s_update_valid && (upd_hit ? s_update_mode != M_REMOVE : (upd_puts && any_free));
    wr_index = upd_hit ? upd_index : free_index;
end

always_ff @(posedge clk) begin
    valid_reg <= s_lookup_valid;
    if (s_lookup_valid) begin
        hit_reg <= look_hit;
        rec_reg <= rec_mem[look_index];
        full_reg <= !any_free;
        last_reg <= any_free && free_rest == 0;
        count_reg <= look_count;
    end
    if (wr_en) begin
        rec_mem[wr_index] <= s_update_rec;
        pend_mem[wr_index] <= s_update_mode == M_RESERVE;
        key_mem[wr_index] <= s_update_key;
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
assign m_lookup_last = last_reg;
assign m_lookup_count = count_reg;
assign m_lookup_valid = valid_reg;

endmodule

`resetall
