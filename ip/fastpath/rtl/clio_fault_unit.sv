// clio_fault_unit: first-touch page fault in a constant number of cycles.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A request whose PTE is allocated but not valid takes a PPN from the free-PA
// FIFO of its page size. In the same cycle the unit queues (a) the PTE
// write-back (slot now VALID with that PPN), (b) the TLB insert and (c) the
// PA_CONSUMED notice for the slow path, and the request continues with the
// PPN one cycle later: the fault adds exactly one cycle to a miss. A fault
// that cannot be served answers `m_ok = 0` with `m_code`: CODE_NO_FIFO (no
// FIFO of that page size: the reference model's UNMAPPED), CODE_EMPTY (FIFO
// empty: BUSY, reported to the slow path), CODE_NO_ROOM (the RX ring has no
// slot for the PA_CONSUMED notice, `s_rx_room` low: BUSY); nothing is
// popped or written then.
// Side effects go out through small queues; `s_ready` drops only if one of
// them is full.
module clio_fault_unit #(
    parameter BUCKET_BITS = 16,
    parameter SLOT_BITS = 4,
    parameter NUM_SIZES = 3,
    parameter [NUM_SIZES*8-1:0] SHIFTS = {8'd12, 8'd21, 8'd22},
    parameter FIFO_DEPTH = 32,
    parameter USER_WIDTH = 1
) (
    input  wire                   clk,
    input  wire                   rst,

    // Free PAs from the slow path.
    input  wire [4:0]             s_push_shift,
    input  wire [31:0]            s_push_ppn,
    input  wire                   s_push_valid,
    output wire                   s_push_ready,
    output wire                   s_push_known,

    // The faulting request.
    input  wire [31:0]            s_pid,
    input  wire [47:0]            s_vpn,
    input  wire [BUCKET_BITS-1:0] s_bucket,
    input  wire [SLOT_BITS-1:0]   s_slot,
    input  wire [7:0]             s_perms,
    input  wire [4:0]             s_shift,
    input  wire [USER_WIDTH-1:0]  s_user,
    input  wire                   s_rx_room,
    input  wire                   s_valid,
    output wire                   s_ready,

    output wire                   m_ok,
    output wire [1:0]             m_code,
    output wire [31:0]            m_ppn,
    output wire [USER_WIDTH-1:0]  m_user,
    output wire                   m_valid,
    input  wire                   m_ready,

    // PTE write-back: the 16-byte slot image for (bucket, slot).
    output wire [BUCKET_BITS-1:0] m_pte_bucket,
    output wire [SLOT_BITS-1:0]   m_pte_slot,
    output wire [127:0]           m_pte_data,
    output wire                   m_pte_valid,
    input  wire                   m_pte_ready,

    // TLB insert (fire and forget).
    output wire [31:0]            m_tlb_pid,
    output wire [47:0]            m_tlb_vpn,
    output wire [4:0]             m_tlb_shift,
    output wire [31:0]            m_tlb_ppn,
    output wire [7:0]             m_tlb_perms,
    output wire                   m_tlb_valid,

    // PA_CONSUMED notice to the slow path.
    output wire [31:0]            m_note_pid,
    output wire [47:0]            m_note_vpn,
    output wire [31:0]            m_note_ppn,
    output wire [4:0]             m_note_shift,
    output wire [BUCKET_BITS-1:0] m_note_bucket,
    output wire [SLOT_BITS-1:0]   m_note_slot,
    output wire                   m_note_valid,
    input  wire                   m_note_ready,

    output wire [NUM_SIZES*($clog2(FIFO_DEPTH)+1)-1:0] fifo_level
);

import clio_pkg::PTE_OFF_PID;
import clio_pkg::PTE_OFF_PPN;
import clio_pkg::PTE_OFF_VPN;
import clio_pkg::PTE_OFF_PERMS;
import clio_pkg::PTE_OFF_FLAGS;
import clio_pkg::PTE_FLAG_ALLOCATED;
import clio_pkg::PTE_FLAG_VALID;
import clio_pkg::PTE_PAGE_SHIFT_SHIFT;

localparam [1:0] CODE_OK = 2'd0, CODE_NO_FIFO = 2'd1, CODE_EMPTY = 2'd2, CODE_NO_ROOM = 2'd3;

wire        pop_ok;
wire        pop_known;
wire [31:0] pop_ppn;
wire        serve = pop_ok && s_rx_room;

// Result stage.
reg                  res_valid_reg = 1'b0;
reg                  res_ok_reg = 1'b0;
reg [1:0]            res_code_reg = CODE_OK;
reg [31:0]           res_ppn_reg = 0;
reg [USER_WIDTH-1:0] res_user_reg = 0;

// Side-effect registers (one deep each; faults are rare next to hits).
reg                   pte_valid_reg = 1'b0;
reg [BUCKET_BITS-1:0] pte_bucket_reg = 0;
reg [SLOT_BITS-1:0]   pte_slot_reg = 0;
reg [127:0]           pte_data_reg = 0;
reg                   tlb_valid_reg = 1'b0;
reg [31:0]            fpid_reg = 0;
reg [47:0]            fvpn_reg = 0;
reg [4:0]             fshift_reg = 0;
reg [7:0]             fperms_reg = 0;
reg                   note_valid_reg = 1'b0;

wire side_free = (!pte_valid_reg || m_pte_ready) && (!note_valid_reg || m_note_ready);
assign s_ready = (!res_valid_reg || m_ready) && side_free;
wire take = s_valid && s_ready;

clio_free_pa_fifo #(
    .NUM_SIZES(NUM_SIZES),
    .SHIFTS(SHIFTS),
    .DEPTH(FIFO_DEPTH),
    .PPN_WIDTH(32)
)
fifo_inst (
    .clk(clk),
    .rst(rst),
    .s_push_shift(s_push_shift),
    .s_push_ppn(s_push_ppn),
    .s_push_valid(s_push_valid),
    .s_push_ready(s_push_ready),
    .s_push_known(s_push_known),
    .pop_shift(s_shift),
    .pop_en(take && serve),
    .pop_ok(pop_ok),
    .pop_known(pop_known),
    .pop_ppn(pop_ppn),
    .level(fifo_level)
);

reg [127:0] pte_image;
always_comb begin
    pte_image = 128'd0;
    pte_image[PTE_OFF_PID*8 +: 32] = s_pid;
    pte_image[PTE_OFF_PPN*8 +: 32] = pop_ppn;
    pte_image[PTE_OFF_VPN*8 +: 48] = s_vpn;
    pte_image[PTE_OFF_PERMS*8 +: 8] = s_perms;
    pte_image[PTE_OFF_FLAGS*8 +: 8] = PTE_FLAG_ALLOCATED | PTE_FLAG_VALID
        | ({3'd0, s_shift} << PTE_PAGE_SHIFT_SHIFT);
end

always_ff @(posedge clk) begin
    if (m_ready) begin
        res_valid_reg <= 1'b0;
    end
    if (m_pte_ready) begin
        pte_valid_reg <= 1'b0;
    end
    if (m_note_ready) begin
        note_valid_reg <= 1'b0;
    end
    tlb_valid_reg <= 1'b0;

    if (take) begin
        res_valid_reg <= 1'b1;
        res_ok_reg <= serve;
        res_code_reg <= !pop_known ? CODE_NO_FIFO : (!pop_ok ? CODE_EMPTY : (!s_rx_room ? CODE_NO_ROOM : CODE_OK));
        res_ppn_reg <= serve ? pop_ppn : 32'd0;
        res_user_reg <= s_user;
        if (serve) begin
            pte_valid_reg <= 1'b1;
            pte_bucket_reg <= s_bucket;
            pte_slot_reg <= s_slot;
            pte_data_reg <= pte_image;
            tlb_valid_reg <= 1'b1;
            note_valid_reg <= 1'b1;
            fpid_reg <= s_pid;
            fvpn_reg <= s_vpn;
            fshift_reg <= s_shift;
            fperms_reg <= s_perms;
        end
    end

    if (rst) begin
        res_valid_reg <= 1'b0;
        pte_valid_reg <= 1'b0;
        tlb_valid_reg <= 1'b0;
        note_valid_reg <= 1'b0;
    end
end

assign m_ok = res_ok_reg;
assign m_code = res_code_reg;
assign m_ppn = res_ppn_reg;
assign m_user = res_user_reg;
assign m_valid = res_valid_reg;

assign m_pte_bucket = pte_bucket_reg;
assign m_pte_slot = pte_slot_reg;
assign m_pte_data = pte_data_reg;
assign m_pte_valid = pte_valid_reg;

assign m_tlb_pid = fpid_reg;
assign m_tlb_vpn = fvpn_reg;
assign m_tlb_shift = fshift_reg;
assign m_tlb_ppn = res_ppn_reg;
assign m_tlb_perms = fperms_reg;
assign m_tlb_valid = tlb_valid_reg;

assign m_note_pid = fpid_reg;
assign m_note_vpn = fvpn_reg;
assign m_note_ppn = res_ppn_reg;
assign m_note_shift = fshift_reg;
assign m_note_bucket = pte_bucket_reg;
assign m_note_slot = pte_slot_reg;
assign m_note_valid = note_valid_reg;

endmodule

`resetall
