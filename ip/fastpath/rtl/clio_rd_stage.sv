// clio_rd_stage: the READ packer and the READ stage (a READ's beats into response packets, its end on its own).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The packer: while `m_on` (a READ's data phase, clio_rd_data), the data
// mover's beats are appended to the response builder (`m_beat`, at offset
// `m_filled` of the payload) while it has room; a chunk's last beat (the
// mover's mark) starts its packet in the same cycle (`m_start`: offset
// `m_off`, payload length `m_plen`, the bytes appended), so the next chunk's
// bursts are read while the current one streams in and the previous one
// leaves. While `s_hold` (the hit lane's hits ahead of the READ have not
// answered) the last beat is appended and the start waits.
// The READ stage: a READ whose last commands are issued (`s_solo`, with no
// stream involved) finishes its data on its own (`m_solo`, its answer's
// header fields kept in `m_*`) while the engine takes the next request. A
// READ that begins its data phase meanwhile (`s_start`) waits behind the
// stage's in the mover's queue: the packer goes on with its beats once the
// stage's last packet has started (`m_last`), from its first byte (no READ
// streams with a stage), if that READ has begun (now, `s_restart`, or before),
// else stops. A data phase that ends without data (`s_stop`: an empty
// READ's answer, a page that went away) forgets such a waiting READ, else
// stops the packer; `s_drained` (every beat appended) stops it.
// The engine's strobes come from its case (held with it); the beats and the
// stage's end follow them in the same cycle, as they did below the case.
module clio_rd_stage #(
    parameter int OW = 6                               // log2 of the data path's bytes
) (
    input  wire        clk,
    input  wire        rst,

    // The engine: a READ's data phase begins (the packet's offset), ends
    // without data, is drained; the READ handed to the stage with its answer's
    // header; the data phase of the next READ begun (`s_restart`).
    input  wire        s_start,
    input  wire [31:0] s_off0,
    input  wire        s_stop,
    input  wire        s_drained,
    input  wire        s_solo,
    input  wire        s_restart,
    input  wire [7:0]  s_op,
    input  wire [7:0]  s_flags,
    input  wire [7:0]  s_status,
    input  wire [31:0] s_pid,
    input  wire [31:0] s_req_id,
    input  wire [31:0] s_retry_of,
    input  wire [63:0] s_va,
    input  wire [31:0] s_total_len,
    input  wire [15:0] s_session,
    input  wire [31:0] s_epoch,

    // The data mover's read beats; the response builder ready, its start.
    input  wire        s_rd_valid,
    input  wire        s_rd_mark,
    input  wire [OW:0] s_rd_len,
    input  wire        s_rb_ready,
    input  wire        s_rb_start,
    input  wire        s_hold,                         // a packet's start waits (its beats are appended)

    // The packer and the stage.
    output reg         m_on = 1'b0,
    output reg  [15:0] m_filled = 0,
    output reg  [31:0] m_off = 0,
    output wire [15:0] m_plen,
    output wire        m_ready,
    output wire        m_beat,
    output wire        m_start,
    output reg         m_solo = 1'b0,
    output wire        m_last,
    output reg  [7:0]  m_op = 0,
    output reg  [7:0]  m_flags = 0,
    output reg  [7:0]  m_status = 0,
    output reg  [31:0] m_pid = 0,
    output reg  [31:0] m_req_id = 0,
    output reg  [31:0] m_retry_of = 0,
    output reg  [63:0] m_va = 0,
    output reg  [31:0] m_total_len = 0,
    output reg  [15:0] m_session = 0,
    output reg  [31:0] m_epoch = 0
);

reg next = 1'b0;                                         // a READ waits behind the stage's
reg pend = 1'b0;                                         // a chunk's beats appended, its start held

// The packer takes a beat while the builder has room; the chunk's last beat
// starts its packet in the same cycle (payload length: the bytes appended),
// unless `s_hold`: the beat is appended (the mover's R channel never waits
// on the hold) and the start follows once the hold is gone, no beat taken
// meanwhile.
assign m_ready = m_on && s_rb_ready && !s_rb_start && !pend;
assign m_beat = s_rd_valid && m_ready;
wire   mark = m_beat && s_rd_mark;
assign m_start = (mark || (pend && s_rb_ready && !s_rb_start)) && !s_hold;
// (A held start takes no beat: its length is the bytes appended.)
assign m_plen = m_filled + (pend ? 16'd0 : {{(15 - OW){1'b0}}, s_rd_len});
// The stage's last packet starts (its offset reaches the READ's length; it
// was reached already if every packet started before the stage began).
assign m_last = m_solo && ((m_start && m_off + {16'd0, m_plen} == m_total_len) || m_off == m_total_len);

always_ff @(posedge clk) begin
    // The engine's strobes (its case) first, the packer's beats and the
    // stage's end after them (as below the case): the later assignments win.
    if (s_start) begin
        if (m_solo && !m_last) begin
            next <= 1'b1;                                // the packer takes it after the stage
        end else begin
            m_off <= s_off0;
            m_filled <= 0;
            m_on <= 1'b1;
        end
    end
    if (s_stop) begin
        if (m_solo && !m_last) next <= 1'b0;
        else m_on <= 1'b0;
    end
    if (s_solo) begin
        m_solo <= 1'b1;
        m_op <= s_op;
        m_flags <= s_flags;
        m_status <= s_status;
        m_pid <= s_pid;
        m_req_id <= s_req_id;
        m_retry_of <= s_retry_of;
        m_va <= s_va;
        m_total_len <= s_total_len;
        m_session <= s_session;
        m_epoch <= s_epoch;
    end
    if (s_drained) m_on <= 1'b0;
    // A beat appended; a chunk's last one started its packet (or waits to).
    if (m_start) begin
        m_filled <= 16'd0;
        m_off <= m_off + {16'd0, m_plen};
        pend <= 1'b0;
    end else if (m_beat) begin
        m_filled <= m_plen;
        if (s_rd_mark) pend <= 1'b1;
    end
    // The stage is done once its last packet has started.
    if (m_last) begin
        m_solo <= 1'b0;
        next <= 1'b0;
        if (next || s_restart) begin
            m_off <= 32'd0;
            m_filled <= 16'd0;
        end else begin
            m_on <= 1'b0;
        end
    end
    if (rst) begin
        m_on <= 1'b0;
        m_solo <= 1'b0;
        next <= 1'b0;
        pend <= 1'b0;
    end
end

endmodule

`resetall
