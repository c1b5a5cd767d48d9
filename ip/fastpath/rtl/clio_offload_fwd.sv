// clio_offload_fwd: the OFFLOAD_CALL pass-through's call table and answer reassembly (issue #16).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The model's `OffloadLink` (ip/fastpath/src/offload.rs) and the wire
// crate's `OffloadAssembler`, for the top level, which pushes the calls'
// OFFLOAD_REQ fragments and sends the answers itself.
//
// Calls: `m_seq` is the sequence number the next forwarded call gets (its
// tag `m_tag` = seq mod TAGS); `s_call_valid` (after its fragments were
// pushed) records the answer's header fields under that tag, forgetting the
// call that held it (its late answer is dropped), and counts seq on.
//
// Answers: one OFFLOAD_REPLY fragment per `s_frag_valid` (already checked by
// clio_desc_check). As `OffloadAssembler`, one datagram is assembled at a
// time: a fragment that does not continue it (other tag, seq, length, or not
// the next index) drops it (counted); a fragment of index 0 starts a new
// one, any other is dropped (counted). Fragment i's 40 bytes go to row i of
// the buffer (rows past ROWS are not kept: such a datagram is longer than
// the response bound and is answered MALFORMED from its length alone); the
// buffer is block RAM (one write port, one registered read port), so the
// head's 4 bytes are kept aside from fragment 0 for the verdict. The
// verdict is combinational in the fragment's cycle: `m_done` (it completes a
// datagram) and `m_answer` (its call is live under that tag with that seq,
// and the head parses: length >= 4, a defined status, zero reserved bytes).
// A completed datagram always takes its call (as the model's `take`); one
// that is not answered is counted dropped (the top rejects the descriptor).
// An answer latches the call's fields, the head's status and the payload
// length (`m_ans_*`, from the next cycle) and sets the read pointer to the
// payload's first byte: `m_rd_data` holds the bytes from there to the end
// of their row (`m_rd_left` of them, 1..40); `s_rd_take` consumes
// `s_rd_len` of them (at most `m_rd_left`). The row is read a cycle ahead
// (at the pointer's next value), so `m_rd_data` is valid from the second
// cycle after the answer (the top spends the first in S_OF_ANS) and then
// after every take, as long as no fragment is pushed while it is read.
module clio_offload_fwd #(
    // Calls remembered at once (the model's OFFLOAD_TAGS).
    parameter TAGS = 64,
    // Longest answer payload served (the board's response bound, >= the
    // MTU; its datagram, with the 4-byte head, within MAX_OFFLOAD_LEN).
    parameter RESP_BYTES = 65536
) (
    input  wire         clk,
    input  wire         rst,

    output wire [31:0]  m_seq,
    output wire [31:0]  m_tag,
    input  wire         s_call_valid,
    input  wire [31:0]  s_call_pid,
    input  wire [31:0]  s_call_req_id,
    input  wire [31:0]  s_call_retry_of,
    input  wire [63:0]  s_call_va,
    input  wire [31:0]  s_call_total_len,
    input  wire [31:0]  s_call_offset,
    input  wire [15:0]  s_call_session,
    input  wire [31:0]  s_call_epoch,

    input  wire         s_frag_valid,
    input  wire [31:0]  s_frag_tag,
    input  wire [31:0]  s_frag_seq,
    input  wire [31:0]  s_frag_len,
    input  wire [15:0]  s_frag_index,
    input  wire [15:0]  s_frag_count,
    input  wire [319:0] s_frag_data,
    output wire         m_done,
    output wire         m_answer,

    output reg  [31:0]  m_ans_pid = 0,
    output reg  [31:0]  m_ans_req_id = 0,
    output reg  [31:0]  m_ans_retry_of = 0,
    output reg  [63:0]  m_ans_va = 0,
    output reg  [31:0]  m_ans_total_len = 0,
    output reg  [31:0]  m_ans_offset = 0,
    output reg  [15:0]  m_ans_session = 0,
    output reg  [31:0]  m_ans_epoch = 0,
    output reg  [7:0]   m_ans_status = 0,
    output reg  [31:0]  m_ans_plen = 0,

    output wire [319:0] m_rd_data,
    output wire [5:0]   m_rd_left,
    input  wire         s_rd_take,
    input  wire [5:0]   s_rd_len,

    output reg  [31:0]  m_answered = 0,
    output reg  [31:0]  m_dropped = 0
);

import clio_pkg::STATUS_LAST;
import clio_pkg::OFFLOAD_FRAGMENT;
import clio_pkg::MAX_OFFLOAD_LEN;
import clio_pkg::OFFLOAD_REPLY_HEAD_LEN;

localparam TW = TAGS > 1 ? $clog2(TAGS) : 1;
localparam ROWS = (RESP_BYTES + OFFLOAD_REPLY_HEAD_LEN + OFFLOAD_FRAGMENT - 1) / OFFLOAD_FRAGMENT;
localparam RW = $clog2(ROWS + 1);

initial begin
    if (TAGS < 1 || (TAGS & (TAGS - 1)) != 0) begin
        $error("Error: TAGS must be a power of two (tag = seq mod TAGS) (instance %m)");
        $finish;
    end
    if (OFFLOAD_FRAGMENT != 40 || RESP_BYTES < 1 || RESP_BYTES + OFFLOAD_REPLY_HEAD_LEN > MAX_OFFLOAD_LEN) begin
        $error("Error: RESP_BYTES + 4 must be 1..MAX_OFFLOAD_LEN, in rows of 40 bytes (instance %m)");
        $finish;
    end
end

// ---- call table ----
reg [31:0] seq_reg = 0;
reg [TAGS-1:0] c_valid = 0;
reg [31:0] c_seq [0:TAGS-1];
reg [31:0] c_pid [0:TAGS-1];
reg [31:0] c_req_id [0:TAGS-1];
reg [31:0] c_retry_of [0:TAGS-1];
reg [63:0] c_va [0:TAGS-1];
reg [31:0] c_total_len [0:TAGS-1];
reg [31:0] c_offset [0:TAGS-1];
reg [15:0] c_session [0:TAGS-1];
reg [31:0] c_epoch [0:TAGS-1];

wire [TW-1:0] new_tag = seq_reg[TW-1:0];
assign m_seq = seq_reg;
/* verilator lint_off WIDTH */
assign m_tag = TAGS > 1 ? {{(32-TW){1'b0}}, new_tag} : 32'd0;
/* verilator lint_on WIDTH */

// ---- reassembly ----
reg        at_valid = 1'b0;
reg [31:0] at_tag = 0, at_seq = 0, at_len = 0;
reg [15:0] at_next = 0;
reg [31:0] at_head = 0;                       // fragment 0's first 4 bytes
// The answer buffer: block RAM, written by fragment, read a row ahead.
(* ram_style = "block" *)
reg [319:0] rows [0:ROWS-1];
reg [319:0] rd_q;
reg [RW-1:0] rd_row = 0, rd_row_n;
reg [5:0]    rd_off = 0, rd_off_n;

wire continues = at_valid && s_frag_tag == at_tag && s_frag_seq == at_seq && s_frag_len == at_len
    && s_frag_index == at_next;
wire store = continues || s_frag_index == 16'd0;
assign m_done = s_frag_valid && store && s_frag_index + 16'd1 == s_frag_count;
// The completed datagram's call and head.
wire [TW-1:0] f_tag = s_frag_tag[TW-1:0];
/* verilator lint_off WIDTH */
wire        tag_in = TAGS > 1 ? s_frag_tag < TAGS : s_frag_tag == 32'd0;
/* verilator lint_on WIDTH */
wire        call_hit = tag_in && c_valid[f_tag] && c_seq[f_tag] == s_frag_seq;
wire [31:0] head = s_frag_index == 16'd0 ? s_frag_data[31:0] : at_head;
wire        head_ok = s_frag_len >= 32'd4 && head[7:0] <= STATUS_LAST && head[31:8] == 24'd0;
assign m_answer = m_done && call_hit && head_ok;

assign m_rd_data = rd_q >> {rd_off, 3'd0};
assign m_rd_left = 6'd40 - rd_off;

// The read pointer after this edge (a take after the answer wins, as before).
always @* begin
    rd_row_n = rd_row;
    rd_off_n = rd_off;
    if (s_frag_valid && m_answer) begin
        rd_row_n = 0;
        rd_off_n = 6'd4;
    end
    if (s_rd_take) begin
        if (rd_off + s_rd_len >= 6'd40) begin
            rd_row_n = rd_row + 1'b1;
            rd_off_n = 6'd0;
        end else begin
            rd_off_n = rd_off + s_rd_len;
        end
    end
    if (rst) begin
        rd_row_n = 0;
        rd_off_n = 0;
    end
end

// One write port, one synchronous read port (block RAM inference).
/* verilator lint_off WIDTH */
wire wr_row = s_frag_valid && store && s_frag_index < ROWS;
/* verilator lint_on WIDTH */
always @(posedge clk) begin
    if (wr_row) rows[s_frag_index[RW-1:0]] <= s_frag_data;
    rd_q <= rows[rd_row_n];
end

always @(posedge clk) begin
    if (s_call_valid) begin
        c_valid[new_tag] <= 1'b1;
        c_seq[new_tag] <= seq_reg;
        c_pid[new_tag] <= s_call_pid;
        c_req_id[new_tag] <= s_call_req_id;
        c_retry_of[new_tag] <= s_call_retry_of;
        c_va[new_tag] <= s_call_va;
        c_total_len[new_tag] <= s_call_total_len;
        c_offset[new_tag] <= s_call_offset;
        c_session[new_tag] <= s_call_session;
        c_epoch[new_tag] <= s_call_epoch;
        seq_reg <= seq_reg + 32'd1;
    end
    if (s_frag_valid) begin
        // Drops: the datagram in progress (not continued), a stray
        // fragment (not continuing, not a first), a completed datagram
        // nobody takes.
        m_dropped <= m_dropped + {31'd0, !continues && at_valid} + {31'd0, !store}
            + {31'd0, m_done && !m_answer};
        if (!store) begin
            at_valid <= 1'b0;
        end else begin
            if (s_frag_index == 16'd0) at_head <= s_frag_data[31:0];
            if (m_done) begin
                at_valid <= 1'b0;
                if (call_hit) c_valid[f_tag] <= 1'b0;
            end else begin
                at_valid <= 1'b1;
                at_tag <= s_frag_tag;
                at_seq <= s_frag_seq;
                at_len <= s_frag_len;
                at_next <= s_frag_index + 16'd1;
            end
        end
        if (m_answer) begin
            m_answered <= m_answered + 32'd1;
            m_ans_pid <= c_pid[f_tag];
            m_ans_req_id <= c_req_id[f_tag];
            m_ans_retry_of <= c_retry_of[f_tag];
            m_ans_va <= c_va[f_tag];
            m_ans_total_len <= c_total_len[f_tag];
            m_ans_offset <= c_offset[f_tag];
            m_ans_session <= c_session[f_tag];
            m_ans_epoch <= c_epoch[f_tag];
            m_ans_status <= head[7:0];
            m_ans_plen <= s_frag_len - 32'd4;
        end
    end
    rd_row <= rd_row_n;
    rd_off <= rd_off_n;
    if (rst) begin
        seq_reg <= 0;
        c_valid <= 0;
        at_valid <= 1'b0;
        m_answered <= 0;
        m_dropped <= 0;
    end
end

endmodule

`resetall
