// clio_rd_data: the READ's data phase (the mover's commands, chunk by chunk and page by page, ahead of the data).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs the stage in one state, S_RD (`s_valid`: the READ's
// translation, or a stream's pump, returns there); the stage takes the READ
// in ST_BEGIN (`s_ready`) and every stage state is one engine cycle, as the
// engine's former S_RD_BEGIN, S_RD_CHUNK, S_RD_STEP, S_RD_MOVE, S_RD_DRAIN
// and S_RD_AFTER states were. What the stage borrows from the engine is a
// call (a flush of the fault queue, the translation of the next page, the
// send of an empty READ's answer): the engine leaves S_RD, does it and comes
// back, and the stage goes on where it stopped. A chunk is one response
// packet (the rest of the READ cut at the MTU), a page's share of it one
// mover command; the packer and the READ stage below the engine's case
// append the beats and start the packets. The page (`s_in_page`, the PA and
// the segment) stays the engine's; the stage keeps the READ's position: the
// bytes sent before this chunk (`m_sent`), the chunk's length (`m_n`) and
// its bytes issued (`m_filled`).
//   ST_BEGIN  the READ taken (`m_start`: the engine starts the packer and
//             loads the answer's fields; from `s_sent0`, a stream's bytes
//             sent), the first chunk; a flush of the fault queue first if
//             the pages could evict its entries (`m_flush`).
//   ST_CHUNK  the next chunk (after a chunk whose packets have left).
//   ST_STEP   an empty chunk: the header-only answer (`m_empty`, sent,
//             back in ST_AFTER); the chunk's commands issued: the READ
//             stage busy (`s_solo`): wait; the READ's last chunk outside a
//             stream: handed to the READ stage (`m_solo`, the engine lets
//             the packet go); a stream's chunk or the last: ST_DRAIN; else
//             the next chunk at once. The position outside the page: the
//             next page translated once the mover is idle (`m_page`, back
//             here); else one mover command (`m_cmd`).
//   ST_MOVE   the command held until taken (`m_cmd_taken`).
//   ST_DRAIN  the mover idle, every beat appended, a buffer free
//             (`m_drained`: the packer stops).
//   ST_AFTER  a stream's pump ends (`m_pm_end`); the READ's last byte sent
//             (`m_finish`); streams on: the rest goes into the stream table
//             (`m_insert` with `m_finish`); else ST_CHUNK.
// `m_begin` (ST_BEGIN: the engine's holds, the packer's restart) and `m_move`
// (ST_MOVE: the mover's command and the AXI grant) are from the state
// alone. `s_en` low (the engine held) stops the stage as it stops the
// engine; `s_idle` (the engine idle) clears it.
module clio_rd_data (
    input  wire        clk,
    input  wire        rst,

    // The engine: in S_RD, the READ taken, idle, held.
    input  wire        s_valid,
    output wire        s_ready,
    input  wire        s_idle,
    input  wire        s_en,

    // The READ: a stream's pump, streams on, the READ stage busy, a flush
    // first, the bytes sent before (a pump), the READ's length, the MTU.
    input  wire        s_pm,
    input  wire        s_streams,
    input  wire        s_solo,
    input  wire        s_flush_first,
    input  wire [31:0] s_sent0,
    input  wire [31:0] s_total,
    input  wire [15:0] s_mtu,

    // The page holds the position; the data mover (its command's length:
    // the engine's register); the packer empty; the builder ready.
    input  wire        s_in_page,
    input  wire        s_mv_idle,
    input  wire        s_cmd_ready,
    input  wire [15:0] s_cmd_len,
    input  wire        s_pk_empty,
    input  wire        s_rb_ready,

    // The position, the engine's loads, calls and exits.
    output reg  [31:0] m_sent = 0,
    output reg  [31:0] m_n = 0,
    output reg  [31:0] m_filled = 0,
    output logic       m_start,
    output logic       m_flush,
    output logic       m_empty,
    output logic       m_solo,
    output logic       m_page,
    output logic       m_cmd,
    output logic       m_cmd_taken,
    output logic       m_drained,
    output logic       m_insert,
    output logic       m_finish,
    output logic       m_pm_end,
    output wire        m_begin,
    output wire        m_move
);

typedef enum logic [2:0] {
    ST_BEGIN, ST_CHUNK, ST_STEP, ST_MOVE, ST_DRAIN, ST_AFTER
} st_t;

st_t state_reg = ST_BEGIN, state_next;

// A chunk: the rest after `sent` bytes, cut at the MTU.
function automatic [31:0] chunk_n(input [31:0] total, input [31:0] sent, input [15:0] mtu);
    chunk_n = (total - sent) < {16'd0, mtu} ? (total - sent) : {16'd0, mtu};
endfunction

wire [31:0] next_sent = m_sent + m_n;
wire        last = next_sent >= s_total;                 // this chunk ends the READ
wire        run = s_en && s_valid;

assign s_ready = state_reg == ST_BEGIN;
assign m_begin = state_reg == ST_BEGIN;
assign m_move = state_reg == ST_MOVE;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    m_start = 1'b0;
    m_flush = 1'b0;
    m_empty = 1'b0;
    m_solo = 1'b0;
    m_page = 1'b0;
    m_cmd = 1'b0;
    m_cmd_taken = 1'b0;
    m_drained = 1'b0;
    m_insert = 1'b0;
    m_finish = 1'b0;
    m_pm_end = 1'b0;
    if (run) begin
        case (state_reg)
            ST_BEGIN: begin
                m_start = 1'b1;
                m_flush = s_flush_first;
                state_next = ST_STEP;
            end
            ST_CHUNK: state_next = ST_STEP;
            ST_STEP: begin
                if (m_n == 0) begin
                    m_empty = 1'b1;
                    state_next = ST_AFTER;
                end else if (m_filled == m_n) begin
                    if (s_solo) begin
                        // One READ stage at a time: the one before finishes first.
                    end else if (!s_pm && !s_streams && last) begin
                        m_solo = 1'b1;
                        state_next = ST_BEGIN;
                    end else if (s_pm || s_streams || last) begin
                        state_next = ST_DRAIN;
                    end
                end else if (!s_in_page) begin
                    // The next page once the mover is idle (a bucket read or
                    // a fault takes the AXI port).
                    m_page = s_mv_idle;
                end else begin
                    m_cmd = 1'b1;
                    state_next = ST_MOVE;
                end
            end
            ST_MOVE: begin
                m_cmd_taken = s_cmd_ready;
                if (s_cmd_ready) state_next = ST_STEP;
            end
            ST_DRAIN: begin
                if (s_mv_idle && s_pk_empty && s_rb_ready) begin
                    m_drained = 1'b1;
                    state_next = ST_AFTER;
                end
            end
            default: begin                               // ST_AFTER
                if (s_pm) begin
                    m_pm_end = 1'b1;
                    state_next = ST_BEGIN;
                end else if (last) begin
                    m_finish = 1'b1;
                    state_next = ST_BEGIN;
                end else if (s_streams) begin
                    // The rest leaves packet by packet, between other requests.
                    m_insert = 1'b1;
                    m_finish = 1'b1;
                    state_next = ST_BEGIN;
                end else begin
                    state_next = ST_CHUNK;
                end
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (run) begin
        case (state_reg)
            ST_BEGIN: begin
                m_sent <= s_sent0;
                m_n <= chunk_n(s_total, s_sent0, s_mtu);
                m_filled <= 0;
            end
            ST_CHUNK: begin
                m_n <= chunk_n(s_total, m_sent, s_mtu);
                m_filled <= 0;
            end
            ST_STEP: begin
                if (m_n != 0 && m_filled == m_n && !s_solo && !(s_pm || s_streams || last)) begin
                    // The next chunk at once (its commands go out while the
                    // previous chunk's data streams in).
                    m_sent <= next_sent;
                    m_n <= chunk_n(s_total, next_sent, s_mtu);
                    m_filled <= 0;
                end
                if (m_solo) m_sent <= next_sent;
            end
            ST_MOVE: if (s_cmd_ready) m_filled <= m_filled + {16'd0, s_cmd_len};
            ST_AFTER: m_sent <= next_sent;
            default: ;
        endcase
    end
    if (s_idle || rst) state_reg <= ST_BEGIN;
end

endmodule

`resetall
