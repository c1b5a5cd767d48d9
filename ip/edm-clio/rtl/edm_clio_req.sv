// edm_clio_req: the request stage of the U200 card's Clio-to-EDM translator: H2C packets -> request records in the card's EDM memory and the EDM requests that carry them.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The mapping is host-sdk/wire/src/edm_clio.rs (constants from the generated
// edm_pkg); edm-clio's model (ClioFabric::issue / card_events) does the same:
//  - A packet is taken from the H2C stream only when one of the EC_SLOTS slots
//    is free (the lowest free slot). Its beats are written into the slot's
//    staging record in the card's EDM memory (word STAGE_WORD + slot * 512,
//    packet from the record's second word, bytes past tkeep zeroed), while
//    edm_clio_xlate classifies it.
//  - A refused packet (refuse_valid, with the code, length and header bytes)
//    takes no slot and sends nothing. Otherwise the record header `len u16 | 0 u16 | seq u32`
//    (seq counting carried packets from 1) is written and the slot's WREQ is
//    posted: the record to the memory node dst, at inbox_addr(node_id, slot),
//    from the staging record. Lengths are rounded up to 8 bytes (the EDM host
//    moves whole words; the model sends the exact length: up to 7 bytes more on
//    the wire per request here).
//  - When that WREQ completes (wcomp, tag = slot), a READ posts its RREQ: the
//    answer chain at outbox_addr(node_id, slot) on dst, read_demand bytes, into
//    the slot's answer area (word ANSWER_WORD + slot * 8192), tag = EC_SLOTS + slot.
//    Other requests wait for the answer record the node writes into the card's
//    inbox.
//  - The slot stays busy until free_valid names it (the return stage took its
//    answer, or it timed out). reread_valid posts a READ's RREQ again (its
//    answer chain was not in the node's outbox yet: an older seq came back).
// RREQs go before WREQs on the request port. slot_seq / slot_read /
// slot_demand describe each busy slot for the return stage. Checked against
// the model (tb/req, `edm-clio-req-vectors`).
module edm_clio_req #(
    parameter AW = 17,
    parameter [AW-1:0] STAGE_WORD = 0,
    parameter [AW-1:0] ANSWER_WORD = 0
) (
    input  wire          clk,
    input  wire          rst,

    input  wire [15:0]   node_id,   // this card's EDM node id
    input  wire [15:0]   dst,       // the memory node's

    input  wire [63:0]   s_axis_tdata,
    input  wire [7:0]    s_axis_tkeep,
    input  wire          s_axis_tvalid,
    input  wire          s_axis_tlast,
    output wire          s_axis_tready,

    output wire          mem_we,
    output wire [AW-1:0] mem_addr,
    output wire [63:0]   mem_wdata,

    output wire          req_valid,
    input  wire          req_ready,
    output wire          req_write,
    output wire [15:0]   req_dst,
    output wire [63:0]   req_addr,
    output wire [15:0]   req_len,
    output wire [31:0]   req_local,
    output wire [15:0]   req_tag,

    input  wire          wcomp_valid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]   wcomp_tag,     // only this stage's tags (0 .. 2*EC_SLOTS-1) complete here
    /* verilator lint_on UNUSEDSIGNAL */

    input  wire          free_valid,
    input  wire [$clog2(edm_pkg::EC_SLOTS)-1:0] free_slot,
    input  wire          reread_valid,  // a READ's answer was not there yet: RREQ again
    input  wire [$clog2(edm_pkg::EC_SLOTS)-1:0] reread_slot,

    output reg           refuse_valid,
    output reg  [2:0]    refuse_code,
    output reg  [15:0]   refuse_len,
    output reg  [8*edm_pkg::CLIO_HEADER_LEN-1:0] refuse_hdr,  // the packet's first CLIO_HEADER_LEN bytes (kept until the next packet's)

    output wire [edm_pkg::EC_SLOTS-1:0] slot_busy,
    output wire [32*edm_pkg::EC_SLOTS-1:0] slot_seq,
    output wire [edm_pkg::EC_SLOTS-1:0] slot_read,
    output wire [16*edm_pkg::EC_SLOTS-1:0] slot_demand
);

import edm_pkg::*;

localparam int NS = EC_SLOTS;
localparam [AW-1:0] STAGE_SLOT_WORDS = AW'(EC_INBOX_SLOT_BYTES / 8);
localparam [AW-1:0] ANSWER_SLOT_WORDS = AW'(EC_OUTBOX_SLOT_BYTES / 8);

localparam int SB = $clog2(NS);    // slot index bits; a tag is {read, slot}

initial begin
    if (NS < 2 || (1 << SB) != NS || SB > 14) begin
        $error("edm_clio_req needs a power-of-two EC_SLOTS in 2..16384 (EC_SLOTS = %0d)", NS);
        $finish;
    end
end

// lowest set bit of a slot mask (slot 0 if none)
function automatic [SB-1:0] lowest(input [NS-1:0] m);
    integer k;
    lowest = '0;
    for (k = NS - 1; k >= 0; k = k - 1) begin
        if (m[k]) lowest = SB'(k);
    end
endfunction

// ---- per-slot state
reg [NS-1:0] busy_reg = '0;
reg [NS-1:0] wpend_reg = '0;   // record WREQ to post
reg [NS-1:0] rpend_reg = '0;   // answer RREQ to post
reg [NS-1:0] read_reg = '0;
reg [31:0] seq_mem [0:NS-1];
reg [15:0] len_mem [0:NS-1];      // record bytes (8 + packet), not rounded
reg [15:0] demand_mem [0:NS-1];
reg [31:0] seq_next_reg = 32'd1;

genvar g;
generate
for (g = 0; g < NS; g = g + 1) begin : slot_out
    assign slot_seq[32*g +: 32] = seq_mem[g];
    assign slot_demand[16*g +: 16] = demand_mem[g];
end
endgenerate
assign slot_busy = busy_reg;
assign slot_read = read_reg;

// ---- intake
// Intake states: waiting for a free slot, receiving a packet, waiting for its class.
typedef enum logic [1:0] {
    IN_IDLE = 2'd0,
    IN_RECV = 2'd1,
    IN_CLASS = 2'd2
} intake_t;
intake_t   in_reg = IN_IDLE;
reg [SB-1:0] cur_reg = '0;
reg [9:0]  beat_reg = 10'd0;

wire [NS-1:0] free_mask = ~busy_reg;
wire       any_free = free_mask != '0;
wire [SB-1:0] lowest_free = lowest(free_mask);

assign s_axis_tready = in_reg == IN_RECV;
wire beat = s_axis_tvalid && s_axis_tready;

wire        cls_valid;
wire [1:0]  cls_carry;
wire [2:0]  cls_refuse;
wire [15:0] cls_demand, cls_len;

edm_clio_xlate classify_inst (
    .clk(clk),
    .rst(rst),
    .s_tdata(s_axis_tdata),
    .s_tkeep(s_axis_tkeep),
    .s_tvalid(beat),
    .s_tlast(s_axis_tlast),
    /* verilator lint_off PINCONNECTEMPTY */
    .s_tready(),
    /* verilator lint_on PINCONNECTEMPTY */
    .out_valid(cls_valid),
    .out_carry(cls_carry),
    .out_refuse(cls_refuse),
    .out_demand(cls_demand),
    .out_len(cls_len)
);

function automatic [63:0] keep_mask(input [7:0] k);
    integer i;
    for (i = 0; i < 8; i = i + 1) begin
        keep_mask[8*i +: 8] = {8{k[i]}};
    end
endfunction

wire [AW-1:0] stage_base = STAGE_WORD + AW'(cur_reg) * STAGE_SLOT_WORDS;
// Beats past a record's room are not stored (the packet is refused as too long).
wire beat_store = beat && beat_reg < 10'(EC_INBOX_SLOT_BYTES / 8 - 1);
wire carried = in_reg == IN_CLASS && cls_valid && cls_carry != 2'(CARRY_REFUSE);
wire [15:0] rec_len = cls_len + 16'(EC_RECORD_HEADER);

assign mem_we = beat_store || carried;
assign mem_addr = carried ? stage_base : stage_base + AW'(1) + AW'(beat_reg);
assign mem_wdata = carried ? {seq_next_reg, 16'd0, cls_len} : (s_axis_tdata & keep_mask(s_axis_tkeep));

// ---- request port: RREQs first, then WREQs; lowest slot first
wire        pick_r = rpend_reg != '0;
wire [NS-1:0] pend = pick_r ? rpend_reg : wpend_reg;
wire [SB-1:0] ps = lowest(pend);
wire [63:0] slot_idx = 64'(node_id) * 64'(NS) + 64'(ps);
wire [15:0] plen = pick_r ? demand_mem[ps] : len_mem[ps];

assign req_valid = pend != '0;
assign req_write = !pick_r;
assign req_dst = dst;
assign req_addr = pick_r ? 64'(EC_OUTBOX_BASE) + slot_idx * 64'(EC_OUTBOX_SLOT_BYTES)
                         : 64'(EC_INBOX_BASE) + slot_idx * 64'(EC_INBOX_SLOT_BYTES);
assign req_len = (plen + 16'd7) & ~16'd7;
assign req_local = pick_r ? {(32 - AW - 3)'(0), ANSWER_WORD + AW'(ps) * ANSWER_SLOT_WORDS, 3'b000}
                          : {(32 - AW - 3)'(0), STAGE_WORD + AW'(ps) * STAGE_SLOT_WORDS, 3'b000};
assign req_tag = {(15 - SB)'(0), pick_r, ps};
wire posted = req_valid && req_ready;

wire [SB-1:0] wc_slot = wcomp_tag[SB-1:0];
wire       wc_record = wcomp_valid && !wcomp_tag[SB] && busy_reg[wc_slot];

always_ff @(posedge clk) begin
    refuse_valid <= 1'b0;
    case (in_reg)
        IN_IDLE: if (any_free) begin
            cur_reg <= lowest_free;
            beat_reg <= 10'd0;
            in_reg <= IN_RECV;
        end
        IN_RECV: if (beat) begin
            beat_reg <= (beat_reg == 10'h3ff) ? beat_reg : beat_reg + 10'd1;
            if (beat_reg < 10'(CLIO_HEADER_LEN / 8)) begin
                refuse_hdr[64*beat_reg[2:0] +: 64] <= s_axis_tdata & keep_mask(s_axis_tkeep);
            end
            if (s_axis_tlast) begin
                in_reg <= IN_CLASS;
            end
        end
        IN_CLASS: if (cls_valid) begin
            in_reg <= IN_IDLE;
            if (cls_carry == 2'(CARRY_REFUSE)) begin
                refuse_valid <= 1'b1;
                refuse_code <= cls_refuse;
                refuse_len <= cls_len;
            end else begin
                busy_reg[cur_reg] <= 1'b1;
                wpend_reg[cur_reg] <= 1'b1;
                read_reg[cur_reg] <= cls_carry == 2'(CARRY_READ);
                seq_mem[cur_reg] <= seq_next_reg;
                len_mem[cur_reg] <= rec_len;
                demand_mem[cur_reg] <= cls_demand;
                seq_next_reg <= seq_next_reg + 32'd1;
            end
        end
        default: in_reg <= IN_IDLE;
    endcase

    if (posted) begin
        if (pick_r) rpend_reg[ps] <= 1'b0;
        else wpend_reg[ps] <= 1'b0;
    end
    if (wc_record && read_reg[wc_slot]) begin
        rpend_reg[wc_slot] <= 1'b1;
    end
    if (reread_valid && busy_reg[reread_slot] && read_reg[reread_slot]) begin
        rpend_reg[reread_slot] <= 1'b1;
    end
    if (free_valid) begin
        busy_reg[free_slot] <= 1'b0;
        wpend_reg[free_slot] <= 1'b0;
        rpend_reg[free_slot] <= 1'b0;
    end

    if (rst) begin
        in_reg <= IN_IDLE;
        busy_reg <= '0;
        wpend_reg <= '0;
        rpend_reg <= '0;
        read_reg <= '0;
        seq_next_reg <= 32'd1;
        refuse_valid <= 1'b0;
        refuse_code <= 3'd0;
        refuse_len <= 16'd0;
        refuse_hdr <= '0;
    end
end

endmodule

`resetall
