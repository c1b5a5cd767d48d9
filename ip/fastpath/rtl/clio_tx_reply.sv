// clio_tx_reply: the reply stage: the slow path's REPLY / SESSION_REPLY answers a forwarded request, then the PID's fences.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over the TX command in hand (`s_desc`; `s_valid` while
// the engine is in S_RP, taken while `s_ready`) with an entry (`s_entry`)
// and waits for the verdict (`m_done`: the poll's next slot, or with
// `m_reject` the command's MALFORMED report). The entry state runs in the
// cycle the command is taken; every later state is one engine cycle, as the
// engine's former S_RP_*, S_SR_* and S_CMD_REJECT states were.
//   0 REJECT   the command is reported (the exit the others share).
//   1 REPLY    answers the forwarded ALLOC / FREE under its tag (slot valid,
//              same PID, ALLOC or FREE, else rejected): the answer's fields
//              are loaded (`m_load`, `m_load_rec`: ids from the forwarding
//              slot, `m_r_*` from the command) and the slot released, then
//              the dedup reservation becomes the record or is removed
//              (`m_rec`), then the answer is sent.
//   2 SESSION  SESSION_REPLY: an OK installs or clears the session entry
//              (`m_sess_set`: the table, the dedup records and the orphans
//              of the session); a tagged one answers the OPEN / CLOSE it
//              names (rejected unless the slot holds one, a CLOSE of the
//              same PID), an OpenSessionResp written into the response
//              builder as it is sent; an untagged one answers nobody.
// After an answer the PID's fences answer, lowest slot first, once nothing
// of the PID waits any more (`m_fence`, each sent), then the poll goes on
// (`m_own_clear`: the engine's answers carry the packet's ids again).
// Sends are the engine's (`m_send`, a call: the engine comes back to S_RP);
// the payload is written in the send's cycle (`m_wr_state`, the engine's
// answer hold applies; `m_wr_open`: OpenSessionResp, else AllocResp).
// `s_en` low (the engine held) stops the stage as it stops the engine.
module clio_tx_reply #(
    // Width of a ring descriptor (the AXI data width).
    parameter DATA_WIDTH = 512,
    // Session-table entries: an installed session's id is below it.
    parameter SESSIONS = 1024
) (
    input  wire                  clk,
    input  wire                  rst,

    // The command and the verdict.
    input  wire                  s_valid,
    input  wire                  s_en,
    output wire                  s_ready,
    input  wire  [1:0]           s_entry,
    input  wire  [DATA_WIDTH-1:0] s_desc,
    output logic                 m_done,
    output logic                 m_reject,

    // The forwarding slot the tag names, and the PID's fences.
    input  wire                  s_fw_tag_ok,
    input  wire  [31:0]          s_fw_pid,
    input  wire  [7:0]           s_fw_opcode,
    input  wire  [63:0]          s_fw_va,
    input  wire  [31:0]          s_fw_epoch,
    input  wire                  s_fw_pending,
    input  wire                  s_fw_fence_wait,
    input  wire  [31:0]          s_epoch,

    // The answer: fields loaded (and the slot released), its record, sends.
    output logic                 m_load,
    output logic                 m_load_rec,
    output logic [7:0]           m_r_status,
    output logic [7:0]           m_r_flags,
    output logic [63:0]          m_r_va,
    output logic [31:0]          m_r_epoch,
    output logic [15:0]          m_r_plen,
    output logic [255:0]         m_r_payload,
    output logic                 m_rec,
    output logic                 m_send,
    output logic                 m_fence,
    output logic                 m_own_clear,
    output wire                  m_wr_state,
    output wire                  m_wr_open,

    // The session entry a SESSION_REPLY installs or clears.
    output logic                 m_sess_set,
    output wire  [15:0]          m_sess,
    output wire                  m_sess_open,
    output wire  [31:0]          m_sess_pid,
    output wire  [63:0]          m_sess_key,
    output wire  [15:0]          m_sess_dquota,
    output wire  [15:0]          m_sess_lquota
);

import clio_pkg::*;

typedef enum logic [2:0] {
    ST_IDLE, ST_REC1, ST_SEND, ST_SR_SEND, ST_FENCE, ST_REJECT
} st_t;

localparam logic [1:0] ENTRY_REJECT = 2'd0, ENTRY_REPLY = 2'd1;

st_t state_reg = ST_IDLE, state_next;

function [31:0] bswap32(input [31:0] v);
    bswap32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction
function [63:0] bswap64(input [63:0] v);
    bswap64 = {bswap32(v[31:0]), bswap32(v[63:32])};
endfunction

// Descriptor fields (a reply reads only some of the slot).
/* verilator lint_off UNUSEDSIGNAL */
wire         unused_desc = ^s_desc;
/* verilator lint_on UNUSEDSIGNAL */
wire [31:0]  c_pid = s_desc[SLOT_OFF_PID*8 +: 32];
wire [7:0]   c_status = s_desc[SLOT_OFF_STATUS*8 +: 8];
wire [7:0]   c_flags = s_desc[SLOT_OFF_FLAGS*8 +: 8];
wire [31:0]  c_tag = s_desc[SLOT_OFF_TAG*8 +: 32];
// REPLY: the VA an ALLOC got, its size and retries (the AllocResp).
wire         c_moved = (c_flags & DESC_FLAG_FIXED_OR_MOVED) != 0;
wire [63:0]  c_va = s_desc[SLOT_OFF_A*8 +: 64];
wire [63:0]  c_size = s_desc[SLOT_OFF_B*8 +: 64];
wire [31:0]  c_retries = s_desc[SLOT_OFF_F*8 +: 32];
// SESSION_REPLY: the entry.
wire         c_close = (c_flags & DESC_FLAG_CLOSE) != 0;
wire [15:0]  c_sess = s_desc[SLOT_OFF_B*8 +: 16];
wire [63:0]  c_key = s_desc[SLOT_OFF_A*8 +: 64];
wire [15:0]  c_dquota = s_desc[SLOT_OFF_C*8 +: 16];
wire [15:0]  c_lquota = s_desc[(SLOT_OFF_C+2)*8 +: 16];
wire [31:0]  c_mquota = s_desc[(SLOT_OFF_C+4)*8 +: 32];
/* verilator lint_off WIDTH */
wire         c_sess_in = c_sess != 16'd0 && c_sess < SESSIONS;
/* verilator lint_on WIDTH */
wire         c_ok = c_status == STATUS_OK;
// The slow path's status as the answer's (a status past the known ones: MALFORMED).
wire [7:0]   c_ans_status = c_status <= STATUS_OVER_QUOTA ? c_status : STATUS_MALFORMED;
// OpenSessionResp of an installed session (big-endian on the wire).
wire [255:0] sr_payload = {32'd0, bswap32(c_mquota), c_lquota[7:0], c_lquota[15:8], c_dquota[7:0], c_dquota[15:8],
    bswap32(s_epoch), bswap64(c_key), bswap32(c_pid), 16'd0, c_sess[7:0], c_sess[15:8]};

wire rp_ok = s_fw_tag_ok && s_fw_pid == c_pid && (s_fw_opcode == OP_ALLOC || s_fw_opcode == OP_FREE);
wire sr_ok = !(c_ok && !c_sess_in)
    && (c_tag == 32'd0 || (s_fw_tag_ok && s_fw_opcode == (c_close ? OP_CLOSE_SESSION : OP_OPEN_SESSION)
        && (!c_close || s_fw_pid == c_pid)));
wire is_alloc = s_fw_opcode == OP_ALLOC;

assign s_ready = state_reg == ST_IDLE;
assign m_wr_state = state_reg == ST_SEND || state_reg == ST_SR_SEND;
assign m_wr_open = state_reg == ST_SR_SEND;
assign m_sess = c_sess;
assign m_sess_open = !c_close;
assign m_sess_pid = c_pid;
assign m_sess_key = c_key;
assign m_sess_dquota = c_dquota;
assign m_sess_lquota = c_lquota;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
/* verilator lint_off WIDTH */
always @* begin
    state_next = state_reg;
    m_done = 1'b0;
    m_reject = 1'b0;
    m_load = 1'b0;
    m_load_rec = 1'b0;
    m_r_status = c_ans_status;
    m_r_flags = 8'd0;
    m_r_va = s_fw_va;
    m_r_epoch = s_fw_epoch;
    m_r_plen = 16'd0;
    m_r_payload = sr_payload;
    m_rec = 1'b0;
    m_send = 1'b0;
    m_fence = 1'b0;
    m_own_clear = 1'b0;
    m_sess_set = 1'b0;
    if (s_valid && s_en) begin
        case (state_reg)
            ST_IDLE: begin
                if (s_entry == ENTRY_REJECT) begin
                    m_reject = 1'b1;
                    m_done = 1'b1;
                end else if (s_entry == ENTRY_REPLY) begin
                    if (!rp_ok) begin
                        state_next = ST_REJECT;
                    end else begin
                        m_load = 1'b1;
                        m_load_rec = 1'b1;
                        m_r_flags = (is_alloc && c_moved) ? FLAG_MOVED : 8'd0;
                        m_r_va = is_alloc ? c_va : s_fw_va;
                        m_r_plen = is_alloc ? ALLOC_RESP_LEN : 16'd0;
                        m_r_payload = {128'd0, 32'd0, bswap32(c_retries), bswap64(c_size)};
                        state_next = ST_REC1;
                    end
                end else begin
                    if (!sr_ok) begin
                        state_next = ST_REJECT;
                    end else begin
                        // A close clears; an open starts clean, then installs.
                        m_sess_set = c_ok;
                        if (c_tag == 32'd0) begin
                            m_done = 1'b1;                   // nobody waits
                        end else begin
                            m_load = 1'b1;
                            m_r_epoch = c_close ? s_fw_epoch : s_epoch;
                            m_r_plen = (!c_close && c_ok) ? OPEN_SESSION_RESP_LEN : 16'd0;
                            if (!c_close && c_ok) state_next = ST_SR_SEND;
                            else state_next = ST_SEND;
                        end
                    end
                end
            end
            ST_REC1: begin
                // The reservation taken at intake becomes the record, or is
                // freed if the request failed (its retry must execute).
                m_rec = 1'b1;
                state_next = ST_SEND;
            end
            ST_SEND, ST_SR_SEND: begin
                m_send = 1'b1;
                state_next = ST_FENCE;
            end
            ST_FENCE: begin
                if (!s_fw_pending && s_fw_fence_wait) begin
                    // Nothing of the PID waits any more: its fences answer, lowest slot first.
                    m_fence = 1'b1;
                    m_send = 1'b1;
                end else begin
                    m_own_clear = 1'b1;
                    m_done = 1'b1;
                end
            end
            default: begin
                m_reject = 1'b1;
                m_done = 1'b1;
            end
        endcase
        if (m_done) state_next = ST_IDLE;
    end
end
/* verilator lint_on WIDTH */

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (rst) state_reg <= ST_IDLE;
end

endmodule

`resetall
