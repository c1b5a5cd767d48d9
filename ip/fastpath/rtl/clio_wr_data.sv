// clio_wr_data: the WRITE's data phase (the payload into memory, page by page, through the data mover).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs the stage in one state, S_WR (`s_valid`: the WRITE's
// translation returns there); the stage takes the WRITE in ST_BEGIN
// (`s_ready`) and every stage state is one engine cycle, as the engine's
// former S_WR_BEGIN, S_WR_STEP and S_WR_MOVE states were. What the stage
// borrows from the engine is a call (a flush of the fault queue, the
// translation of the next page): the engine leaves S_WR, does it and comes
// back, and the stage goes on where it stopped. The page (`s_in_page`, the
// PA and the segment) stays the engine's; the stage keeps the payload's
// position (`m_pos`, from `m_base`) and says what the engine loads and where
// it goes.
//   ST_BEGIN  one translated page (`s_one`): the write lane takes the WRITE
//             once it has a slot (`m_hand_off`, the engine lets the packet
//             go); else, once the lane's burst has left the mover
//             (`s_lane_mem` low), the stage's own pass (`m_start`: position
//             0, the engine's second translation pass), after a flush of the
//             fault queue if the pages could evict its entries (`m_flush`).
//   ST_STEP   the payload written: the header-only answer (`m_answer`, the
//             engine records it first); the position outside the page: the
//             next page translated (`m_page`, back here); else one mover
//             command for the rest of the payload in this page (`m_cmd`).
//   ST_MOVE   the command held until taken (`m_cmd_taken`); each beat the
//             mover takes from the packet buffer advances the position; the
//             payload's last byte taken (`m_last_take`: the packet buffer may
//             take the next packet); the mover done: back to ST_STEP.
// `m_begin` (ST_BEGIN: the write lane's hand-off, the atomics stage's hold)
// and `m_move` (ST_MOVE: the mover's command and the AXI grant) are from the
// state alone. `s_en` low (the engine held) stops the stage as it stops the
// engine; `s_idle` (the engine idle) clears it.
module clio_wr_data #(
    parameter int OW = 6                               // log2 of the data path's bytes
) (
    input  wire        clk,
    input  wire        rst,

    // The engine: in S_WR, the WRITE taken, idle, held.
    input  wire        s_valid,
    output wire        s_ready,
    input  wire        s_idle,
    input  wire        s_en,

    // The WRITE: one translated page for the write lane, the lane ready and
    // its burst in the mover, a flush first, the payload's start and length.
    input  wire        s_one,
    input  wire        s_lane_ready,
    input  wire        s_lane_mem,
    input  wire        s_flush_first,
    input  wire [63:0] s_base,
    input  wire [15:0] s_plen,

    // The page holds the position; the data mover.
    input  wire        s_in_page,
    input  wire        s_cmd_ready,
    input  wire        s_take_valid,
    input  wire [OW:0] s_take,
    input  wire        s_done,

    // The position, the engine's loads, calls and exits.
    output reg  [31:0] m_pos = 0,
    output reg  [63:0] m_base = 0,
    output logic       m_hand_off,
    output logic       m_start,
    output logic       m_flush,
    output logic       m_answer,
    output logic       m_page,
    output logic       m_cmd,
    output logic       m_cmd_taken,
    output logic       m_last_take,
    output wire        m_begin,
    output wire        m_move
);

typedef enum logic [1:0] {
    ST_BEGIN, ST_STEP, ST_MOVE
} st_t;

st_t state_reg = ST_BEGIN, state_next;
wire [31:0] take32 = {{(31 - OW){1'b0}}, s_take};

assign s_ready = state_reg == ST_BEGIN;
assign m_begin = state_reg == ST_BEGIN;
assign m_move = state_reg == ST_MOVE;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    m_hand_off = 1'b0;
    m_start = 1'b0;
    m_flush = 1'b0;
    m_answer = 1'b0;
    m_page = 1'b0;
    m_cmd = 1'b0;
    m_cmd_taken = 1'b0;
    m_last_take = 1'b0;
    if (s_en && s_valid) begin
        case (state_reg)
            ST_BEGIN: begin
                if (s_one) begin
                    m_hand_off = s_lane_ready;
                end else if (!s_lane_mem) begin
                    m_start = 1'b1;
                    m_flush = s_flush_first;
                    state_next = ST_STEP;
                end
            end
            ST_STEP: begin
                if (m_pos == {16'd0, s_plen}) begin
                    m_answer = 1'b1;
                    state_next = ST_BEGIN;
                end else if (!s_in_page) begin
                    m_page = 1'b1;
                end else begin
                    m_cmd = 1'b1;
                    state_next = ST_MOVE;
                end
            end
            default: begin                               // ST_MOVE
                m_cmd_taken = s_cmd_ready;
                m_last_take = s_take_valid && m_pos + take32 == {16'd0, s_plen};
                if (s_done) state_next = ST_STEP;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (m_start) begin
        m_pos <= 0;
        m_base <= s_base;
    end
    if (s_en && s_valid && state_reg == ST_MOVE && s_take_valid) m_pos <= m_pos + take32;
    if (s_idle || rst) state_reg <= ST_BEGIN;
end

endmodule

`resetall
