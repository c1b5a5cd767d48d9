// clio_tlb: fully associative TLB (CAM) with exact LRU replacement, insert and invalidate ports.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Lookup: (pid, va) in, one cycle later hit/ppn/perms/page_shift out, II = 1.
// An entry covers one page of its own size: it matches when the PID is equal
// and `va` lies in [vpn << shift, (vpn + 1) << shift), so pages of different
// sizes share the CAM.
// Insert: replaces the entry of the same (pid, vpn, shift) if present, else
// the first invalid entry, else the least recently used one.
// Invalidate: drops every entry of `pid` whose vpn is in [vpn, vpn + pages)
// (`pages` = 0: every entry of `pid`; the end saturates), or with
// `s_inval_exact` only the entry tagged (pid, vpn, shift).
// Consistency with in-flight lookups: a lookup that matched an entry which an
// insert or invalidate changes in the same cycle reports a miss, so the
// request re-reads the authoritative page table rather than a stale entry.
module clio_tlb #(
    parameter ENTRIES = 64,
    parameter PPN_WIDTH = 32,
    parameter USER_WIDTH = 1
) (
    input  wire                       clk,
    input  wire                       rst,

    input  wire [31:0]                s_lookup_pid,
    input  wire [63:0]                s_lookup_va,
    input  wire [USER_WIDTH-1:0]      s_lookup_user,
    input  wire                       s_lookup_valid,
    output wire                       s_lookup_ready,

    output wire                       m_lookup_hit,
    output wire [PPN_WIDTH-1:0]       m_lookup_ppn,
    output wire [7:0]                 m_lookup_perms,
    output wire [4:0]                 m_lookup_shift,
    output wire [$clog2(ENTRIES)-1:0] m_lookup_index,
    output wire [USER_WIDTH-1:0]      m_lookup_user,
    output wire                       m_lookup_valid,
    input  wire                       m_lookup_ready,

    input  wire [31:0]                s_insert_pid,
    input  wire [47:0]                s_insert_vpn,
    input  wire [4:0]                 s_insert_shift,
    input  wire [PPN_WIDTH-1:0]       s_insert_ppn,
    input  wire [7:0]                 s_insert_perms,
    input  wire                       s_insert_valid,

    input  wire [31:0]                s_inval_pid,
    input  wire [63:0]                s_inval_vpn,
    input  wire [31:0]                s_inval_pages,
    input  wire                       s_inval_exact,
    input  wire [4:0]                 s_inval_shift,
    input  wire                       s_inval_valid
);

localparam IW = $clog2(ENTRIES);

initial begin
    if (ENTRIES < 2 || (1 << IW) != ENTRIES) begin
        $error("Error: ENTRIES must be a power of two >= 2 (instance %m)");
        $finish;
    end
end

reg              valid_mem[0:ENTRIES-1];
reg [31:0]       pid_mem[0:ENTRIES-1];
reg [47:0]       vpn_mem[0:ENTRIES-1];
reg [4:0]        shift_mem[0:ENTRIES-1];
reg [63:0]       mask_mem[0:ENTRIES-1];
reg [63:0]       base_mem[0:ENTRIES-1];
reg [PPN_WIDTH-1:0] ppn_mem[0:ENTRIES-1];
reg [7:0]        perms_mem[0:ENTRIES-1];
reg [IW-1:0]     age_mem[0:ENTRIES-1];

reg                  out_valid_reg = 1'b0;
reg                  out_hit_reg = 1'b0;
reg [IW-1:0]         out_index_reg = 0;
reg [PPN_WIDTH-1:0]  out_ppn_reg = 0;
reg [7:0]            out_perms_reg = 0;
reg [4:0]            out_shift_reg = 0;
reg [USER_WIDTH-1:0] out_user_reg = 0;

assign s_lookup_ready = !out_valid_reg || m_lookup_ready;
wire lookup = s_lookup_valid && s_lookup_ready;

// Lookup match.
reg          hit;
reg [IW-1:0] hit_index;
// Insert target.
reg          ins_found;
reg [IW-1:0] ins_index;
reg          free_found;
reg [IW-1:0] free_index;
reg [IW-1:0] lru_index;
reg [IW-1:0] victim;
// Entries dropped by the invalidate.
reg [ENTRIES-1:0] inval_hit;
reg [63:0]   inval_end;
reg          inval_wrap;

wire [63:0] ins_mask = ~((64'd1 << s_insert_shift) - 64'd1);
wire [63:0] ins_base = {16'd0, s_insert_vpn} << s_insert_shift;


always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    hit = 1'b0;
    hit_index = 0;
    ins_found = 1'b0;
    ins_index = 0;
    free_found = 1'b0;
    free_index = 0;
    lru_index = 0;
    inval_hit = 0;
    {inval_wrap, inval_end} = {1'b0, s_inval_vpn} + {33'd0, s_inval_pages};
    for (i = ENTRIES - 1; i >= 0; i = i - 1) begin
        if (valid_mem[i] && pid_mem[i] == s_lookup_pid
                && ((s_lookup_va ^ base_mem[i]) & mask_mem[i]) == 64'd0) begin
            hit = 1'b1;
            hit_index = i[IW-1:0];
        end
        if (valid_mem[i] && pid_mem[i] == s_insert_pid && vpn_mem[i] == s_insert_vpn
                && shift_mem[i] == s_insert_shift) begin
            ins_found = 1'b1;
            ins_index = i[IW-1:0];
        end
        if (!valid_mem[i]) begin
            free_found = 1'b1;
            free_index = i[IW-1:0];
        end
        if (age_mem[i] == {IW{1'b1}}) begin
            lru_index = i[IW-1:0];
        end
        if (valid_mem[i] && pid_mem[i] == s_inval_pid && (s_inval_exact
                ? ({16'd0, vpn_mem[i]} == s_inval_vpn && shift_mem[i] == s_inval_shift)
                : (s_inval_pages == 32'd0 || ({16'd0, vpn_mem[i]} >= s_inval_vpn
                    && (inval_wrap || {16'd0, vpn_mem[i]} < inval_end))))) begin
            inval_hit[i] = 1'b1;
        end
    end
    victim = ins_found ? ins_index : (free_found ? free_index : lru_index);
end

// The entry whose recency is refreshed this cycle (an insert wins over a hit).
wire          touch = (s_insert_valid) || (lookup && hit);
wire [IW-1:0] touch_index = s_insert_valid ? victim : hit_index;

always_ff @(posedge clk) begin : seq_2
    integer i;  // loop index local to the block (no shared variable between processes)
    if (s_lookup_ready) begin
        out_valid_reg <= s_lookup_valid;
        out_hit_reg <= hit
            && !(s_insert_valid && victim == hit_index)
            && !(s_inval_valid && inval_hit[hit_index]);
        out_index_reg <= hit_index;
        out_ppn_reg <= ppn_mem[hit_index];
        out_perms_reg <= perms_mem[hit_index];
        out_shift_reg <= shift_mem[hit_index];
        out_user_reg <= s_lookup_user;
    end

    if (touch) begin
        for (i = 0; i < ENTRIES; i = i + 1) begin
            if (age_mem[i] < age_mem[touch_index]) begin
                age_mem[i] <= age_mem[i] + 1'b1;
            end
        end
        age_mem[touch_index] <= 0;
    end

    if (s_inval_valid) begin
        for (i = 0; i < ENTRIES; i = i + 1) begin
            if (inval_hit[i]) begin
                valid_mem[i] <= 1'b0;
            end
        end
    end

    if (s_insert_valid) begin
        valid_mem[victim] <= 1'b1;
        pid_mem[victim] <= s_insert_pid;
        vpn_mem[victim] <= s_insert_vpn;
        shift_mem[victim] <= s_insert_shift;
        mask_mem[victim] <= ins_mask;
        base_mem[victim] <= ins_base;
        ppn_mem[victim] <= s_insert_ppn;
        perms_mem[victim] <= s_insert_perms;
    end

    if (rst) begin
        out_valid_reg <= 1'b0;
        for (i = 0; i < ENTRIES; i = i + 1) begin
            valid_mem[i] <= 1'b0;
            age_mem[i] <= i[IW-1:0];
        end
    end
end

assign m_lookup_valid = out_valid_reg;
assign m_lookup_hit = out_hit_reg;
assign m_lookup_index = out_index_reg;
assign m_lookup_ppn = out_ppn_reg;
assign m_lookup_perms = out_perms_reg;
assign m_lookup_shift = out_shift_reg;
assign m_lookup_user = out_user_reg;

endmodule

`resetall
