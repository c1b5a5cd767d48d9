// clio_ctrl_fwd: the control-forwarding stage: requests the slow path answers, pushed to its RX ring; offload answers.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over a packet once its intake decisions are made
// (`s_valid` with `s_entry`, taken while `s_ready`), and waits for it
// (`s_valid` stays up) until the stage says how the packet goes on
// (`m_done` with `m_next`). The first state runs in the cycle the packet is
// taken, so the hand-over costs no cycle. Five entries:
//   0 FW_MATCH  ALLOC, FREE, CLOSE_SESSION: a repeat or retry of a request
//               still in the slow path is attached to it (`m_fw_set` of the
//               match, finish); a fence of the PID waiting answers BUSY;
//               otherwise the packet goes on (`m_next` GO: the dedup lookup
//               or dispatch, the engine's choice).
//   1 FW_PUSH   a checked ALLOC / FREE / OPEN / CLOSE: its descriptor
//               (`s_fw_desc`) is pushed; BUSY without RX room, else the
//               forwarding slot is taken (`m_fw_set`, new) with a dedup
//               reservation (`m_reserve`), finish.
//   2 GT        a change under a TRACKING gate entry: a GATE_DIRTY of the
//               blocks the entry lacks is pushed (BUSY without room), the
//               blocks are marked (`m_gt_mark`), then the gate is asked
//               again once its registered verdict has seen the mark
//               (`s_gt_ready`, a cycle): another refusal fails, another
//               tracking entry pushes again, else the packet goes on (GO).
//   3 OF        an OFFLOAD_CALL: the RX ring is probed for room for every
//               fragment (`s_of_cnt`, whole or BUSY), then each 40-byte
//               fragment (`m_of_i`: the top reads its bytes, `s_of_data`)
//               is pushed as an OFFLOAD_REQ; after the last the call waits
//               under its tag (`m_of_call`), finish.
//   4 OF_ANS    a completed offload answer from the poll (clio_offload_fwd
//               latched it): the answer's header is loaded (`m_ans_load`,
//               status `m_r_status`; an answer over the MTU leaves as MTU
//               packets as a READ's: `m_r_big`, total length = its length,
//               offset 0); an answer over the bound (`s_of_bound`) is sent
//               header-only MALFORMED (never truncated). Each packet's bytes
//               are written into the response builder from the answer's rows
//               (`m_of_wr`, `m_of_k` bytes at `m_of_fill`, up to the rest of
//               a row per cycle, not while `s_wr_block`: the READ packer
//               writes), then the packet is sent (`m_r_plen`; the next one's
//               offset `m_r_offset`); after the last the poll goes on.
// Every push or probe is the engine's ring access, asked for on the call
// port (`m_call_valid`; `m_call_kind` 1: the deferred fault notices first,
// 0: a ring command `m_ring_cmd` with `m_ring_desc` when `m_ring_load`,
// 2: send the response fields loaded so far): the engine takes it in the
// cycle it is asked (the stage then waits for `s_valid` again) and brings
// the ring's result (`s_ring_full`, `s_ring_free`). A verdict may end with
// a send too (`m_next` 4: send, then the poll's next slot). `s_en` low (the engine held by the response builder)
// stops the stage as it stops the engine. Notices still queued
// (`s_fq_pending`) go first: the RX ring keeps the reference order.
module clio_ctrl_fwd #(
    // Width of a ring descriptor (the AXI data width).
    parameter DATA_WIDTH = 512,
    // Index width of the forwarding table's slots.
    parameter FIW = 4
) (
    input  wire                  clk,
    input  wire                  rst,

    // The decided packet and its verdict.
    input  wire                  s_valid,
    input  wire [2:0]            s_entry,
    output wire                  s_ready,
    input  wire                  s_en,
    output logic                 m_done,
    output logic [2:0]           m_next,     // 0 finish, 1 fail with m_status, 2 go on, 3 poll on, 4 send + poll on
    output logic [7:0]           m_status,

    // The engine's ring access and the notice flush (request; taken at once).
    output logic                 m_call_valid,
    output logic [1:0]           m_call_kind, // 0 ring command, 1 notice flush, 2 send
    output logic [1:0]           m_ring_cmd,  // 0 push, 1 probe
    output logic                 m_ring_load,
    output logic [DATA_WIDTH-1:0] m_ring_desc,
    input  wire                  s_ring_full,
    input  wire  [31:0]          s_ring_free,
    input  wire                  s_fq_pending,

    // Forwarding table.
    input  wire                  s_fw_match,
    input  wire  [FIW-1:0]       s_fw_match_index,
    input  wire                  s_fw_fence_wait,
    input  wire  [FIW-1:0]       s_fw_free_index,
    input  wire  [DATA_WIDTH-1:0] s_fw_desc,
    output logic                 m_fw_set,
    output logic                 m_fw_set_new,
    output logic [FIW-1:0]       m_fw_set_index,
    output logic                 m_reserve,

    // Region gate (its verdict is registered: `s_gt_ready`, it is today's).
    input  wire                  s_gt_ready,
    input  wire                  s_gt_refuse,
    input  wire  [7:0]           s_gt_status,
    input  wire                  s_gt_track,
    input  wire  [31:0]          s_gt_track_pid,
    input  wire  [31:0]          s_gt_track_entry,
    input  wire  [63:0]          s_gt_track_va,
    input  wire  [63:0]          s_gt_track_mask,
    output logic                 m_gt_mark,

    // Offload call.
    input  wire  [15:0]          s_of_cnt,
    input  wire  [15:0]          s_of_len,
    input  wire  [31:0]          s_of_tag,
    input  wire  [31:0]          s_of_seq,
    input  wire  [319:0]         s_of_data,
    output wire  [15:0]          m_of_i,
    output logic                 m_of_call,

    // Offload answer.
    input  wire  [31:0]          s_of_ans_plen,
    input  wire  [7:0]           s_of_ans_status,
    input  wire  [31:0]          s_of_bound,
    input  wire  [15:0]          s_mtu,
    input  wire  [5:0]           s_of_rd_left,
    input  wire                  s_wr_block,
    output logic                 m_ans_load,
    output logic [7:0]           m_r_status,
    output logic                 m_r_big,
    output logic                 m_plen_load,
    output logic [15:0]          m_r_plen,
    output logic                 m_offset_load,
    output logic [31:0]          m_r_offset,
    output logic                 m_of_wr,
    output wire  [5:0]           m_of_k,
    output wire  [15:0]          m_of_fill,
    output wire                  m_wr_state      // writing an answer's bytes (the engine's answer hold applies)
);

import clio_pkg::*;

typedef enum logic [3:0] {
    ST_IDLE, ST_FW_MATCH, ST_FW_PUSH, ST_FW_PUSHED, ST_GT_PUSH, ST_GT_PUSHED, ST_GT_CHECK,
    ST_OF_BEGIN, ST_OF_PROBED, ST_OF_PUSH, ST_OF_PUSHED, ST_OF_ANS, ST_OF_WR, ST_OF_NEXT
} st_t;

localparam logic [2:0] NEXT_FINISH = 3'd0, NEXT_FAIL = 3'd1, NEXT_GO = 3'd2, NEXT_POLL = 3'd3,
    NEXT_SEND_POLL = 3'd4;
localparam logic [1:0] CALL_RING = 2'd0, CALL_FLUSH = 2'd1, CALL_SEND = 2'd2;

st_t state_reg = ST_IDLE, state_next;
reg [15:0] of_i_reg = 0, of_count_reg = 0;    // fragment pushed next; fragments of the call
reg [15:0] of_i_next, of_count_next;
reg [31:0] of_sent_reg = 0, of_n_reg = 0, of_fill_reg = 0;    // answer bytes sent; this packet's; written
reg [31:0] of_sent_next, of_n_next, of_fill_next;
// Bytes of the answer packet written per cycle: the rest of the buffer row.
wire [31:0] of_left = of_n_reg - of_fill_reg;
assign m_of_k = {26'd0, s_of_rd_left} < of_left ? s_of_rd_left : of_left[5:0];
assign m_of_fill = of_fill_reg[15:0];
assign m_wr_state = state_reg == ST_OF_WR;
// The rest of the answer after this packet, at most an MTU.
wire [31:0] of_done_bytes = of_sent_reg + of_n_reg;
wire [31:0] of_rest = s_of_ans_plen - of_done_bytes;

// A packet taken this cycle runs its entry state now.
st_t st;
// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    st = state_reg;
    if (state_reg == ST_IDLE) begin
        case (s_entry)
            3'd0: st = ST_FW_MATCH;
            3'd1: st = ST_FW_PUSH;
            3'd2: st = ST_GT_PUSH;
            3'd3: st = ST_OF_BEGIN;
            default: st = ST_OF_ANS;
        endcase
    end
end

assign s_ready = state_reg == ST_IDLE;
assign m_of_i = of_i_reg;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    state_next = state_reg;
    of_i_next = of_i_reg;
    of_count_next = of_count_reg;
    of_sent_next = of_sent_reg;
    of_n_next = of_n_reg;
    of_fill_next = of_fill_reg;
    m_ans_load = 1'b0;
    m_r_status = s_of_ans_status;
    m_r_big = 1'b0;
    m_plen_load = 1'b0;
    m_r_plen = of_n_reg[15:0];
    m_offset_load = 1'b0;
    m_r_offset = of_done_bytes;
    m_of_wr = 1'b0;
    m_done = 1'b0;
    m_next = NEXT_FINISH;
    m_status = STATUS_BUSY;
    m_call_valid = 1'b0;
    m_call_kind = CALL_RING;
    m_ring_cmd = 2'd0;
    m_ring_load = 1'b0;
    m_ring_desc = 0;
    m_fw_set = 1'b0;
    m_fw_set_new = 1'b0;
    m_fw_set_index = s_fw_match_index;
    m_reserve = 1'b0;
    m_gt_mark = 1'b0;
    m_of_call = 1'b0;
    if (s_valid && s_en) begin
        case (st)
            ST_FW_MATCH: begin
                if (s_fw_match) begin
                    // The answer goes to this packet; nothing new is forwarded.
                    m_fw_set = 1'b1;
                    m_done = 1'b1;
                end else if (s_fw_fence_wait) begin
                    m_next = NEXT_FAIL;
                    m_done = 1'b1;
                end else begin
                    m_next = NEXT_GO;
                    m_done = 1'b1;
                end
            end
            ST_FW_PUSH, ST_GT_PUSH, ST_OF_BEGIN: begin
                m_call_valid = 1'b1;
                if (s_fq_pending) begin
                    m_call_kind = CALL_FLUSH;                // earlier notices go first
                    state_next = st;
                end else if (st == ST_FW_PUSH) begin
                    m_ring_load = 1'b1;
                    m_ring_desc = s_fw_desc;
                    state_next = ST_FW_PUSHED;
                end else if (st == ST_GT_PUSH) begin
                    m_ring_load = 1'b1;
                    m_ring_desc[SLOT_OFF_KIND*8 +: 8] = DESC_GATE_DIRTY;
                    m_ring_desc[SLOT_OFF_PID*8 +: 32] = s_gt_track_pid;
                    m_ring_desc[SLOT_OFF_TAG*8 +: 32] = s_gt_track_entry;
                    m_ring_desc[SLOT_OFF_A*8 +: 64] = s_gt_track_va;
                    m_ring_desc[SLOT_OFF_C*8 +: 64] = s_gt_track_mask;
                    state_next = ST_GT_PUSHED;
                end else begin
                    of_count_next = s_of_cnt;
                    m_ring_cmd = 2'd1;                       // PROBE: room for every fragment?
                    state_next = ST_OF_PROBED;
                end
            end
            ST_FW_PUSHED: begin
                m_done = 1'b1;
                state_next = ST_IDLE;
                if (s_ring_full) begin
                    m_next = NEXT_FAIL;
                end else begin
                    // ALLOC / FREE take their dedup record now (a
                    // reservation), so it fits when the reply comes.
                    m_fw_set = 1'b1;
                    m_fw_set_new = 1'b1;
                    m_fw_set_index = s_fw_free_index;
                    m_reserve = 1'b1;
                end
            end
            ST_GT_PUSHED: begin
                if (s_ring_full) begin
                    m_next = NEXT_FAIL;                      // no RX room: nothing marked
                    m_done = 1'b1;
                end else begin
                    m_gt_mark = 1'b1;                        // marked at this edge
                    state_next = ST_GT_CHECK;
                end
            end
            ST_GT_CHECK: begin
                // Another tracking entry may lack blocks too: each reports.
                if (!s_gt_ready) begin
                    // The verdict of the table before the mark: wait.
                end else if (s_gt_refuse) begin
                    m_next = NEXT_FAIL;
                    m_status = s_gt_status;
                    m_done = 1'b1;
                end else if (s_gt_track) begin
                    state_next = ST_GT_PUSH;
                end else begin
                    m_next = NEXT_GO;
                    m_done = 1'b1;
                end
            end
            ST_OF_PROBED: begin
                of_i_next = 0;
                if (s_ring_free < {16'd0, of_count_reg}) begin
                    m_next = NEXT_FAIL;                      // whole or not at all
                    m_done = 1'b1;
                end else begin
                    state_next = ST_OF_PUSH;
                end
            end
            ST_OF_PUSH: begin
                m_call_valid = 1'b1;
                m_ring_load = 1'b1;
                m_ring_desc[SLOT_OFF_KIND*8 +: 8] = DESC_OFFLOAD_REQ;
                m_ring_desc[SLOT_OFF_PID*8 +: 32] = {of_count_reg, of_i_reg};
                m_ring_desc[SLOT_OFF_TAG*8 +: 32] = s_of_tag;
                m_ring_desc[SLOT_OFF_REQ_ID*8 +: 32] = s_of_seq;
                m_ring_desc[SLOT_OFF_A*8 +: 320] = s_of_data;
                m_ring_desc[SLOT_OFF_F*8 +: 32] = {16'd0, s_of_len};
                state_next = ST_OF_PUSHED;
            end
            ST_OF_PUSHED: begin
                if (of_i_reg + 16'd1 == of_count_reg) begin
                    m_of_call = 1'b1;                        // the call waits under its tag
                    m_done = 1'b1;
                end else begin
                    of_i_next = of_i_reg + 16'd1;
                    state_next = ST_OF_PUSH;
                end
            end
            ST_OF_ANS: begin
                m_ans_load = 1'b1;
                of_sent_next = 0;
                of_fill_next = 0;
                of_n_next = s_of_ans_plen < {16'd0, s_mtu} ? s_of_ans_plen : {16'd0, s_mtu};
                if (s_of_ans_plen > s_of_bound) begin
                    m_r_status = STATUS_MALFORMED;           // an engine bug: never sent truncated
                    m_next = NEXT_SEND_POLL;
                    m_done = 1'b1;
                end else begin
                    m_r_big = s_of_ans_plen > {16'd0, s_mtu};    // MTU packets, as a READ's
                    state_next = ST_OF_WR;
                end
            end
            ST_OF_WR: begin
                if (of_fill_reg == of_n_reg) begin
                    m_plen_load = 1'b1;
                    m_call_valid = 1'b1;
                    m_call_kind = CALL_SEND;
                    state_next = ST_OF_NEXT;
                end else begin
                    m_of_wr = !s_wr_block;
                    of_fill_next = of_fill_reg + {26'd0, m_of_k};
                end
            end
            ST_OF_NEXT: begin
                if (of_done_bytes >= s_of_ans_plen) begin
                    m_next = NEXT_POLL;
                    m_done = 1'b1;
                end else begin
                    of_sent_next = of_done_bytes;
                    m_offset_load = 1'b1;
                    of_n_next = of_rest < {16'd0, s_mtu} ? of_rest : {16'd0, s_mtu};
                    of_fill_next = 0;
                    state_next = ST_OF_WR;
                end
            end
            default: begin end
        endcase
        if (m_done) state_next = ST_IDLE;
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    of_i_reg <= of_i_next;
    of_count_reg <= of_count_next;
    of_sent_reg <= of_sent_next;
    of_n_reg <= of_n_next;
    of_fill_reg <= of_fill_next;
    if (rst) state_reg <= ST_IDLE;
end

endmodule

`resetall
