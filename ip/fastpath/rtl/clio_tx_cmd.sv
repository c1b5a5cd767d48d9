// clio_tx_cmd: the TX-command stage: a command the slow path put on the TX ring, checked and carried out or passed on.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over the descriptor the poll popped (`s_desc`; `s_valid`
// while the engine is in S_CMD, taken while `s_ready`) and waits for the
// stage's verdict (`m_done` with `m_next`). The dispatch runs in the cycle
// the descriptor is taken, so the hand-over costs no cycle; every later
// state is one engine cycle, as the engine's former S_CMD_* states were.
//   PTE_WRITE       a slot in the table and, if the new PTE is valid, its
//                   page in the data region, else rejected; the slot is read
//                   (`m_call_valid`: the engine's memory read of
//                   `m_mem_addr`, back to S_CMD with `s_old_pte`), whatever
//                   it held leaves the TLB (if it parses and is allocated),
//                   then the new tag, then the slot is written (`m_next` 5).
//   PTE_REMOVE      the slot is read; unless it holds the command's PID and
//                   VPN (allocated) the command is rejected, else the tag
//                   leaves the TLB and the slot is cleared (`m_next` 5).
//   TLB_INVALIDATE  a range of pages (operand F) leaves the TLB.
//   FREE_PA_PUSH    a page of a known size inside the data region is pushed
//                   (`m_push`) if the free list has room, else rejected; the
//                   page's address is the VA a rejection reports (`m_va`).
//   EPOCH           a new boot (`m_epoch`: the engine drops sessions,
//                   records, waiting requests and gate entries).
//   GATE_SET        applied (`m_gt_set`) if the gate takes it (`s_gt_set_ok`).
//   OFFLOAD_REPLY   a fragment of an offload answer, taken by
//                   clio_offload_fwd in this cycle (`m_of_frag`); a fragment
//                   it refuses is rejected, a completed answer is sent
//                   (`m_next` 4), otherwise the poll goes on.
//   REPLY, SESSION_REPLY go to the engine's reply states (`m_next` 2, 3).
//   Anything else is rejected (`m_next` 1: the engine's error report).
// Every TLB invalidation is one strobe (`m_inv_load`; `m_inv_valid` says
// whether it invalidates): an exact one names a page size (`m_inv_shift`),
// a range a page count (`m_inv_pages`). `s_en` low (the engine held) stops
// the stage as it stops the engine.
module clio_tx_cmd #(
    // Width of a ring descriptor (the AXI data width).
    parameter DATA_WIDTH = 512,
    // The offload pass-through is present (OFFLOAD_TAGS > 0).
    parameter OF_ON = 1
) (
    input  wire                  clk,
    input  wire                  rst,

    // The popped descriptor and the verdict.
    input  wire                  s_valid,
    input  wire                  s_en,
    output wire                  s_ready,
    input  wire  [DATA_WIDTH-1:0] s_desc,
    output logic                 m_done,
    output logic [2:0]           m_next,     // 0 poll on, 1 reject, 2 REPLY, 3 SESSION_REPLY, 4 offload answer, 5 write + poll on
    output logic                 m_va_load,
    output logic [63:0]          m_va,       // reported by a rejection

    // Page table: the command's slot (the top's address arithmetic) and the data region.
    input  wire                  s_in_range,
    input  wire  [63:0]          s_slot_addr,
    input  wire  [63:0]          s_data_start,
    input  wire  [63:0]          s_data_end,
    // The engine's memory access: a read (call, back with the slot), a write (verdict 5).
    output logic                 m_call_valid,
    output wire  [63:0]          m_mem_addr,
    input  wire  [127:0]         s_old_pte,
    output logic [DATA_WIDTH-1:0] m_mem_wdata,
    output wire  [DATA_WIDTH/8-1:0] m_mem_wstrb,

    // TLB invalidation.
    output logic                 m_inv_load,
    output logic                 m_inv_valid,
    output logic                 m_inv_exact,
    output logic [31:0]          m_inv_pid,
    output logic [63:0]          m_inv_vpn,
    output logic [31:0]          m_inv_pages,
    output logic [4:0]           m_inv_shift,

    // Free-PA list, epoch, region gate, offload answer fragments.
    input  wire                  s_push_known,
    input  wire                  s_push_ready,
    output logic                 m_push,
    output logic                 m_epoch,
    input  wire                  s_gt_set_ok,
    output logic                 m_gt_set,
    output wire                  m_of_frag,
    input  wire                  s_of_done,
    input  wire                  s_of_answer
);

import clio_pkg::*;

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);

typedef enum logic [2:0] {
    ST_IDLE, ST_OLD, ST_INV2, ST_WRITE, ST_RM, ST_RMINV, ST_PUSH
} st_t;

localparam logic [2:0] NEXT_POLL = 3'd0, NEXT_REJECT = 3'd1, NEXT_REPLY = 3'd2, NEXT_SESSION = 3'd3,
    NEXT_OF_ANS = 3'd4, NEXT_WRITE_POLL = 3'd5;

st_t state_reg = ST_IDLE, state_next;

// Descriptor fields (a command reads only some of the slot).
/* verilator lint_off UNUSEDSIGNAL */
wire         unused_desc = ^s_desc;
/* verilator lint_on UNUSEDSIGNAL */
wire [7:0]   c_kind = s_desc[SLOT_OFF_KIND*8 +: 8];
wire [31:0]  c_slot = s_desc[SLOT_OFF_F*8 +: 32];
wire [31:0]  c_pid = s_desc[SLOT_OFF_PID*8 +: 32];
wire [63:0]  c_vpn = s_desc[SLOT_OFF_A*8 +: 64];
wire [127:0] c_pte = s_desc[SLOT_OFF_A*8 +: 128];
wire [31:0]  c_pte_pid = c_pte[PTE_OFF_PID*8 +: 32];
wire [31:0]  c_pte_ppn = c_pte[PTE_OFF_PPN*8 +: 32];
wire [47:0]  c_pte_vpn = c_pte[PTE_OFF_VPN*8 +: 48];
wire [7:0]   c_pte_flags = c_pte[PTE_OFF_FLAGS*8 +: 8];
wire [4:0]   c_pte_shift = c_pte_flags[PTE_PAGE_SHIFT_SHIFT +: 5];
wire         c_pte_valid = (c_pte_flags & PTE_FLAG_VALID) != 0;
wire [7:0]   c_push_shift = s_desc[SLOT_OFF_PAGE_SHIFT*8 +: 8];
wire [31:0]  c_push_ppn = s_desc[SLOT_OFF_B*8 +: 32];

// The slot read back (its PPN is irrelevant to invalidation and removal).
/* verilator lint_off UNUSEDSIGNAL */
wire [127:0] old_pte = s_old_pte;
/* verilator lint_on UNUSEDSIGNAL */
wire [7:0]   old_flags = old_pte[PTE_OFF_FLAGS*8 +: 8];
wire [7:0]   old_perms = old_pte[PTE_OFF_PERMS*8 +: 8];
wire [4:0]   old_shift = old_flags[PTE_PAGE_SHIFT_SHIFT +: 5];
wire         old_alloc = (old_flags & PTE_FLAG_ALLOCATED) != 0;
wire         old_valid = (old_flags & PTE_FLAG_VALID) != 0;
/* verilator lint_off WIDTH */
wire         old_parses = (old_flags & PTE_FLAG_RESERVED) == 0
    && (old_perms & ~(PERM_READ | PERM_WRITE)) == 0
    && (!old_alloc || (old_shift >= PTE_MIN_PAGE_SHIFT && old_shift <= PTE_MAX_PAGE_SHIFT))
    && (!old_valid || old_alloc);
/* verilator lint_on WIDTH */

// The command's page lies inside the data region [s_data_start, s_data_end).
wire pte_in, push_in;
clio_page_in_region pte_region_inst (
    .s_ppn(c_pte_ppn), .s_shift({3'd0, c_pte_shift}), .s_lo(s_data_start), .s_hi(s_data_end), .m_in(pte_in)
);
clio_page_in_region push_region_inst (
    .s_ppn(c_push_ppn), .s_shift(c_push_shift), .s_lo(s_data_start), .s_hi(s_data_end), .m_in(push_in)
);

wire pte_ok = !c_pte_valid || pte_in;
wire push_ok = s_push_known && push_in && s_push_ready && c_push_shift <= 31;

assign s_ready = state_reg == ST_IDLE;
assign m_mem_addr = s_slot_addr;
assign m_mem_wstrb = {{(BYTES-16){1'b0}}, 16'hffff} << s_slot_addr[OW-1:0];
// The fragment is taken in the dispatch cycle (kept apart from the verdict,
// which depends on what clio_offload_fwd makes of it).
assign m_of_frag = OF_ON != 0 && s_valid && s_en && state_reg == ST_IDLE && c_kind == DESC_OFFLOAD_REPLY;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    state_next = state_reg;
    m_done = 1'b0;
    m_next = NEXT_POLL;
    m_va_load = 1'b0;
    m_va = 0;
    m_call_valid = 1'b0;
    m_mem_wdata = 0;
    m_inv_load = 1'b0;
    m_inv_valid = 1'b0;
    m_inv_exact = 1'b1;
    m_inv_pid = c_pid;
    m_inv_vpn = c_vpn;
    m_inv_pages = c_slot;
    m_inv_shift = 5'd0;
    m_push = 1'b0;
    m_epoch = 1'b0;
    m_gt_set = 1'b0;
    if (s_valid && s_en) begin
        case (state_reg)
            ST_IDLE: begin
                m_va_load = 1'b1;
                m_done = 1'b1;
                case (c_kind)
                    DESC_PTE_WRITE: begin
                        if (!s_in_range || !pte_ok) begin
                            m_next = NEXT_REJECT;
                        end else begin
                            m_done = 1'b0;
                            m_call_valid = 1'b1;
                            state_next = ST_OLD;
                        end
                    end
                    DESC_PTE_REMOVE: begin
                        if (!s_in_range) begin
                            m_next = NEXT_REJECT;
                        end else begin
                            m_done = 1'b0;
                            m_call_valid = 1'b1;
                            state_next = ST_RM;
                        end
                    end
                    DESC_TLB_INVALIDATE: begin
                        m_inv_load = 1'b1;                   // operand F: page count
                        m_inv_valid = 1'b1;
                        m_inv_exact = 1'b0;
                    end
                    DESC_FREE_PA_PUSH: begin
                        m_va = {32'd0, c_push_ppn} << (c_push_shift > 63 ? 63 : c_push_shift);
                        if (!push_ok) begin
                            m_next = NEXT_REJECT;
                        end else begin
                            m_push = 1'b1;
                            m_done = 1'b0;
                            state_next = ST_PUSH;
                        end
                    end
                    DESC_REPLY: m_next = NEXT_REPLY;
                    DESC_SESSION_REPLY: m_next = NEXT_SESSION;
                    DESC_EPOCH: m_epoch = 1'b1;
                    DESC_GATE_SET: begin
                        // Applied at the next edge; an entry past the table is rejected.
                        if (s_gt_set_ok) m_gt_set = 1'b1;
                        else m_next = NEXT_REJECT;
                    end
                    DESC_OFFLOAD_REPLY: begin
                        if (OF_ON == 0 || (s_of_done && !s_of_answer)) m_next = NEXT_REJECT;
                        else if (s_of_done) m_next = NEXT_OF_ANS;    // the completed answer is sent
                    end
                    default: m_next = NEXT_REJECT;
                endcase
            end
            ST_PUSH: m_done = 1'b1;
            ST_OLD: begin
                // Whatever the slot held and the new tag both leave the TLB.
                m_inv_load = 1'b1;
                m_inv_pid = old_pte[PTE_OFF_PID*8 +: 32];
                m_inv_vpn = {16'd0, old_pte[PTE_OFF_VPN*8 +: 48]};
                m_inv_shift = old_shift;
                m_inv_valid = old_parses && old_alloc;
                state_next = ST_INV2;
            end
            ST_INV2: begin
                m_inv_load = 1'b1;
                m_inv_pid = c_pte_pid;
                m_inv_vpn = {16'd0, c_pte_vpn};
                m_inv_shift = c_pte_shift;
                m_inv_valid = 1'b1;
                state_next = ST_WRITE;
            end
            ST_WRITE: begin
                m_mem_wdata = {{(DATA_WIDTH-128){1'b0}}, c_pte} << {s_slot_addr[OW-1:0], 3'd0};
                m_next = NEXT_WRITE_POLL;
                m_done = 1'b1;
            end
            ST_RM: begin
                if (!old_alloc || old_pte[PTE_OFF_PID*8 +: 32] != c_pid
                        || {16'd0, old_pte[PTE_OFF_VPN*8 +: 48]} != c_vpn) begin
                    m_next = NEXT_REJECT;
                    m_done = 1'b1;
                end else begin
                    m_inv_load = 1'b1;
                    m_inv_shift = old_parses ? old_shift : 5'd0;
                    m_inv_valid = 1'b1;
                    state_next = ST_RMINV;
                end
            end
            ST_RMINV: begin
                m_next = NEXT_WRITE_POLL;                    // the slot cleared
                m_done = 1'b1;
            end
            default: m_done = 1'b1;
        endcase
        if (m_done) state_next = ST_IDLE;
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (rst) state_reg <= ST_IDLE;
end

endmodule

`resetall
