// clio_pt_fetch: hash page-table bucket read over AXI4 with parallel tag compare on (PID, VPN, page shift).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// On a TLB miss: one INCR burst reads the K-slot bucket at
// table_base + bucket * K * PTE_LEN (one DRAM access); every slot of each
// beat is compared against the tag (pid, vpn, page shift) as it arrives, and
// the first slot that matches (allocated, same PID, 48-bit VPN and flags page
// shift: the same VPN at another page size is another page) and is a
// well-formed PTE (no reserved flag or permission bits) is reported with its
// PTE fields; `m_bad` counts tag matches that failed those checks (the
// reference model's `pte_errors`). One bucket
// read in flight; latency = AXI read latency + beats + 2 cycles.
module clio_pt_fetch #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter ID_WIDTH = 4,
    parameter BUCKET_BITS = 16,
    parameter SLOTS = 16,
    parameter USER_WIDTH = 1
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [ADDR_WIDTH-1:0]   table_base,

    input  wire [31:0]             s_pid,
    input  wire [63:0]             s_vpn,
    input  wire [4:0]              s_shift,
    input  wire [BUCKET_BITS-1:0]  s_bucket,
    input  wire [USER_WIDTH-1:0]   s_user,
    input  wire                    s_valid,
    output wire                    s_ready,

    output wire                    m_found,
    output wire [$clog2(SLOTS)-1:0] m_slot,
    output wire [BUCKET_BITS-1:0]  m_bucket,
    output wire [31:0]             m_pid,
    output wire [63:0]             m_vpn,
    output wire [$clog2(SLOTS):0]  m_bad,
    output wire [31:0]             m_ppn,
    output wire [7:0]              m_perms,
    output wire [7:0]              m_flags,
    output wire [USER_WIDTH-1:0]   m_user,
    output wire                    m_valid,
    input  wire                    m_ready,

    output wire [ID_WIDTH-1:0]     m_axi_arid,
    output wire [ADDR_WIDTH-1:0]   m_axi_araddr,
    output wire [7:0]              m_axi_arlen,
    output wire [2:0]              m_axi_arsize,
    output wire [1:0]              m_axi_arburst,
    output wire                    m_axi_arvalid,
    input  wire                    m_axi_arready,
    input  wire [ID_WIDTH-1:0]     m_axi_rid,
    input  wire [DATA_WIDTH-1:0]   m_axi_rdata,
    input  wire [1:0]              m_axi_rresp,
    input  wire                    m_axi_rlast,
    input  wire                    m_axi_rvalid,
    output wire                    m_axi_rready
);

import clio_pkg::PTE_LEN;
import clio_pkg::PTE_OFF_PID;
import clio_pkg::PTE_OFF_PPN;
import clio_pkg::PTE_OFF_VPN;
import clio_pkg::PTE_OFF_PERMS;
import clio_pkg::PTE_OFF_FLAGS;
import clio_pkg::PTE_FLAG_ALLOCATED;
import clio_pkg::PTE_FLAG_VALID;
import clio_pkg::PTE_PAGE_SHIFT_SHIFT;
import clio_pkg::PTE_FLAG_RESERVED;
import clio_pkg::PERM_READ;
import clio_pkg::PERM_WRITE;

localparam BEAT_BYTES = DATA_WIDTH / 8;
localparam BUCKET_BYTES = SLOTS * PTE_LEN;
localparam BEATS = BUCKET_BYTES / BEAT_BYTES;
localparam SLOTS_PER_BEAT = BEAT_BYTES / PTE_LEN;
localparam SW = $clog2(SLOTS);
localparam BW = BEATS > 1 ? $clog2(BEATS) : 1;
localparam PTE_W = PTE_LEN * 8;

initial begin
    if ((1 << SW) != SLOTS || BUCKET_BYTES < BEAT_BYTES) begin
        $error("Error: SLOTS must be a power of two with SLOTS * PTE_LEN >= DATA_WIDTH / 8 (instance %m)");
        $finish;
    end
    if (BEATS > 256) begin
        $error("Error: a bucket must fit one AXI burst (instance %m)");
        $finish;
    end
end

// Controller states.
typedef enum logic [1:0] {
    ST_IDLE = 2'd0,
    ST_AR = 2'd1,
    ST_DATA = 2'd2,
    ST_RESP = 2'd3
} state_t;

state_t              state_reg = ST_IDLE;
reg [31:0]             pid_reg = 0;
reg [63:0]             vpn_reg = 0;
reg [4:0]              shift_reg = 0;
reg [SW:0]             bad_reg = 0;
reg [BUCKET_BITS-1:0]  bucket_reg = 0;
reg [USER_WIDTH-1:0]   user_reg = 0;
reg [BW-1:0]           beat_reg = 0;
reg                    found_reg = 1'b0;
reg [SW-1:0]           slot_reg = 0;
// The tag half of the slot equals the request's (pid, vpn) by construction.
/* verilator lint_off UNUSEDSIGNAL */
reg [PTE_W-1:0]        pte_reg = 0;
/* verilator lint_on UNUSEDSIGNAL */

assign s_ready = state_reg == ST_IDLE;
assign m_axi_arvalid = state_reg == ST_AR;
assign m_axi_rready = state_reg == ST_DATA;
assign m_valid = state_reg == ST_RESP;

// Tag compare of every slot of the arriving beat.
reg                 beat_found;
reg [SW:0]          beat_bad;
reg                 tag_hit;
reg                 well_formed;
reg [SW-1:0]        beat_slot;
reg [PTE_W-1:0]     beat_pte;
reg [PTE_W-1:0]     pte;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    beat_found = 1'b0;
    beat_bad = 0;
    beat_slot = 0;
    beat_pte = 0;
    for (i = SLOTS_PER_BEAT - 1; i >= 0; i = i - 1) begin
        pte = m_axi_rdata[i*PTE_W +: PTE_W];
        // Tag = (pid, vpn, page shift): the same VPN at another page size is another page.
        tag_hit = (pte[PTE_OFF_FLAGS*8 +: 8] & PTE_FLAG_ALLOCATED) != 8'd0
            && pte[PTE_OFF_PID*8 +: 32] == pid_reg
            && {16'd0, pte[PTE_OFF_VPN*8 +: 48]} == vpn_reg
            && pte[PTE_OFF_FLAGS*8 + PTE_PAGE_SHIFT_SHIFT +: 5] == shift_reg;
        well_formed = (pte[PTE_OFF_FLAGS*8 +: 8] & PTE_FLAG_RESERVED) == 8'd0
            && (pte[PTE_OFF_PERMS*8 +: 8] & ~(PERM_READ | PERM_WRITE)) == 8'd0;
        if (tag_hit && !well_formed) begin
            beat_bad = beat_bad + 1'b1;
        end
        if (tag_hit && well_formed) begin
            beat_found = 1'b1;
            /* verilator lint_off WIDTH */
            beat_slot = beat_reg * SLOTS_PER_BEAT + i;
            /* verilator lint_on WIDTH */
            beat_pte = pte;
        end
    end
end

always_ff @(posedge clk) begin
    case (state_reg)
        ST_IDLE: begin
            if (s_valid) begin
                pid_reg <= s_pid;
                vpn_reg <= s_vpn;
                shift_reg <= s_shift;
                bucket_reg <= s_bucket;
                user_reg <= s_user;
                state_reg <= ST_AR;
            end
        end
        ST_AR: begin
            beat_reg <= 0;
            found_reg <= 1'b0;
            pte_reg <= 0;
            slot_reg <= 0;
            bad_reg <= 0;
            if (m_axi_arready) begin
                state_reg <= ST_DATA;
            end
        end
        ST_DATA: begin
            if (m_axi_rvalid) begin
                beat_reg <= beat_reg + 1'b1;
                if (!found_reg) begin
                    bad_reg <= bad_reg + beat_bad;
                end
                // A bucket never holds two slots of one (pid, vpn); keep the first.
                if (beat_found && !found_reg) begin
                    found_reg <= 1'b1;
                    slot_reg <= beat_slot;
                    pte_reg <= beat_pte;
                end
                if (m_axi_rlast) begin
                    state_reg <= ST_RESP;
                end
            end
        end
        default: begin
            if (m_ready) begin
                state_reg <= ST_IDLE;
            end
        end
    endcase
    if (rst) begin
        state_reg <= ST_IDLE;
    end
end

/* verilator lint_off WIDTH */
assign m_axi_araddr = table_base + bucket_reg * BUCKET_BYTES;
assign m_axi_arlen = BEATS - 1;
assign m_axi_arsize = $clog2(BEAT_BYTES);
/* verilator lint_on WIDTH */
assign m_axi_arburst = 2'b01;
assign m_axi_arid = 0;

assign m_found = found_reg;
assign m_slot = slot_reg;
assign m_bucket = bucket_reg;
assign m_pid = pid_reg;
assign m_vpn = vpn_reg;
assign m_bad = bad_reg;
assign m_ppn = pte_reg[PTE_OFF_PPN*8 +: 32];
assign m_perms = pte_reg[PTE_OFF_PERMS*8 +: 8];
assign m_flags = pte_reg[PTE_OFF_FLAGS*8 +: 8];
assign m_user = user_reg;

// rid/rresp are not used: one burst in flight, and DRAM errors are not modelled.
/* verilator lint_off UNUSEDSIGNAL */
wire unused = ^{m_axi_rid, m_axi_rresp};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
