// clio_atomic_stage: a TLB-hit atomic (TAS / CAS / FAA) executed off the engine: read, sync unit, write, B, record, answer.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over an atomic whose 8-byte word is translated (`s_valid`
// while `s_ready`: the word's physical address, the opcode and operands, its
// dedup key and its answer's header fields, all taken in that cycle; the
// engine lets its packet go then) and takes the next packet while the stage
//   ST_WAIT  waits until nothing else uses or is about to use the shared AXI
//            port (`s_port_free`: the mover, the lanes and the engine's own
//            port, bucket and ring clients quiet);
//   ST_RD    owns the port from here to the B (`m_port_own`: the top's mux
//            gives it the arbiter's engine port and holds every other client
//            back) and offers the word's read until taken;
//   ST_RDW   waits for the read data; in its cycle the word goes to the sync
//            unit (clio_sync_unit, one registered stage);
//   ST_SYNC  the sync unit's result: the dedup record (the old value in its
//            payload) goes to the buffer now (`m_rec_valid`, one cycle), and
//            the new word's write is offered (a CAS that does not match
//            writes nothing and answers from here);
//   ST_WR    holds the write until the port took it whole (AW and W);
//   ST_WRB   waits for the B: a later access of the word by any path sees
//            the result; the answer starts in the B's cycle if it may;
//   ST_ANS   the answer (the old value, 8 bytes) waits for `m_ans_ready`.
// Until its record is in (`m_rec_pending`: ST_WAIT .. ST_RDW) the engine
// takes no packet: the next lookup, ack and quota count see the record as
// the model's do. The engine's answers, data phases and the lanes wait while
// the stage is not idle (`m_idle`), so answers keep the model's order and no
// other path touches the word before the write.
module clio_atomic_stage #(
    parameter DATA_WIDTH = 512,           // AXI beat width (bits)
    parameter ADDR_WIDTH = 32,            // AXI address width
    parameter KEY_WIDTH = 88,             // dedup key {opcode, offset, first id, session}
    parameter REC_WIDTH = 280,            // dedup record (clio_dedup's layout, below)
    parameter BYTES = DATA_WIDTH / 8,
    parameter OW = $clog2(BYTES)
) (
    input  wire                  clk,
    input  wire                  rst,

    // Hand-over from the engine.
    input  wire                  s_valid,
    output logic                 s_ready,
    input  wire [ADDR_WIDTH-1:0] s_addr,          // the word's physical byte address (8-byte aligned)
    input  wire [7:0]            s_opcode,        // OP_TAS, OP_CAS or OP_FAA
    input  wire [63:0]           s_arg0,          // CAS expected / FAA addend (numbers)
    input  wire [63:0]           s_arg1,          // CAS new value
    input  wire [KEY_WIDTH-1:0]  s_key,
    input  wire [7:0]            s_hdr_opcode,    // the answer's header fields
    input  wire [7:0]            s_hdr_flags,
    input  wire [31:0]           s_hdr_pid,
    input  wire [31:0]           s_hdr_req_id,
    input  wire [31:0]           s_hdr_retry_of,
    input  wire [63:0]           s_hdr_va,
    input  wire [31:0]           s_hdr_total_len,
    input  wire [31:0]           s_hdr_offset,
    input  wire [15:0]           s_hdr_session,
    input  wire [31:0]           s_hdr_epoch,

    // The shared AXI port (the arbiter's engine port through the top's mux).
    input  wire                  s_port_free,
    output logic                 m_port_own,
    output logic                 m_mem_valid,
    output logic                 m_mem_write,
    output logic [ADDR_WIDTH-1:0] m_mem_addr,
    output logic [DATA_WIDTH-1:0] m_mem_wdata,
    output logic [BYTES-1:0]     m_mem_wstrb,
    input  wire                  s_mem_ready,
    input  wire                  s_mem_done,
    input  wire [DATA_WIDTH-1:0] s_mem_rdata,

    // The dedup record (insert).
    output logic                 m_rec_valid,
    output logic [KEY_WIDTH-1:0] m_rec_key,
    output logic [REC_WIDTH-1:0] m_rec,
    output logic                 m_rec_pending,

    // The answer: header fields above, payload `m_ans_data` (8 bytes).
    output logic                 m_ans_valid,
    input  wire                  s_ans_ready,
    output logic [7:0]           m_ans_opcode,
    output logic [7:0]           m_ans_flags,
    output logic [7:0]           m_ans_status,
    output logic [31:0]          m_ans_pid,
    output logic [31:0]          m_ans_req_id,
    output logic [31:0]          m_ans_retry_of,
    output logic [63:0]          m_ans_va,
    output logic [31:0]          m_ans_total_len,
    output logic [31:0]          m_ans_offset,
    output logic [15:0]          m_ans_session,
    output logic [31:0]          m_ans_epoch,
    output logic [63:0]          m_ans_data,      // the old value, big-endian (wire order)

    output logic                 m_idle
);

import clio_pkg::STATUS_OK;
import clio_pkg::ATOMIC_RESP_LEN;

initial begin
    if (REC_WIDTH != 280 || KEY_WIDTH < 48) begin
        $error("Error: REC_WIDTH must be 280 (clio_dedup's record) and KEY_WIDTH at least 48 (instance %m)");
        $finish;
    end
end

typedef enum logic [2:0] {
    ST_IDLE, ST_WAIT, ST_RD, ST_RDW, ST_SYNC, ST_WR, ST_WRB, ST_ANS
} st_t;

st_t state_reg = ST_IDLE, state_next;

// The atomic in hand.
reg [ADDR_WIDTH-1:0] addr_reg = 0;
reg [7:0]            op_reg = 0;
reg [63:0]           arg0_reg = 0, arg1_reg = 0;
reg [KEY_WIDTH-1:0]  key_reg = 0;
reg [7:0]            h_op = 0, h_flags = 0;
reg [31:0]           h_pid = 0, h_req_id = 0, h_retry_of = 0, h_total_len = 0, h_offset = 0, h_epoch = 0;
reg [63:0]           h_va = 0;
reg [15:0]           h_session = 0;
reg [63:0]           old_reg = 0, new_reg = 0;

wire [OW-1:0] lane = addr_reg[OW-1:0];

wire [63:0] sync_old, sync_new;
wire        sync_write;
wire [7:0]  sync_status;
wire        sync_valid;

clio_sync_unit sync_inst (
    .clk(clk), .rst(rst),
    .s_opcode(op_reg), .s_old(s_mem_rdata[{lane, 3'd0} +: 64]), .s_arg0(arg0_reg), .s_arg1(arg1_reg),
    .s_valid(state_reg == ST_RDW && s_mem_done),
    .m_old(sync_old), .m_new(sync_new), .m_write(sync_write), .m_status(sync_status), .m_valid(sync_valid)
);

function automatic [63:0] bswap64(input [63:0] x);
    integer i;
    begin
        for (i = 0; i < 8; i = i + 1) bswap64[i*8 +: 8] = x[(7-i)*8 +: 8];
    end
endfunction

// The old value: the sync unit's in ST_SYNC, kept from then on.
wire [63:0] old_now = state_reg == ST_SYNC ? sync_old : old_reg;

// `always @*`, not `always_comb` (Icarus 11 in the ZCU106 board top's bench).
always @* begin
    state_next = state_reg;
    s_ready = state_reg == ST_IDLE;
    m_port_own = state_reg == ST_RD || state_reg == ST_RDW || state_reg == ST_SYNC || state_reg == ST_WR
        || state_reg == ST_WRB;
    m_mem_valid = 1'b0;
    m_mem_write = 1'b0;
    m_mem_addr = addr_reg;
    m_mem_wdata = {{(DATA_WIDTH-64){1'b0}}, state_reg == ST_SYNC ? sync_new : new_reg} << {lane, 3'd0};
    m_mem_wstrb = {{(BYTES-8){1'b0}}, 8'hff} << lane;
    m_rec_valid = 1'b0;
    m_rec_pending = state_reg == ST_WAIT || state_reg == ST_RD || state_reg == ST_RDW;
    m_ans_valid = 1'b0;
    case (state_reg)
        ST_IDLE: begin
            if (s_valid && s_port_free) state_next = ST_RD;
            else if (s_valid) state_next = ST_WAIT;
        end
        ST_WAIT: if (s_port_free) state_next = ST_RD;
        ST_RD: begin
            m_mem_valid = 1'b1;
            if (s_mem_ready) state_next = ST_RDW;
        end
        ST_RDW: if (s_mem_done) state_next = ST_SYNC;
        ST_SYNC: begin
            m_rec_valid = 1'b1;
            if (sync_write) begin
                m_mem_valid = 1'b1;
                m_mem_write = 1'b1;
                if (s_mem_ready) state_next = ST_WRB;
                else state_next = ST_WR;
            end else begin
                m_ans_valid = 1'b1;
                if (s_ans_ready) state_next = ST_IDLE;
                else state_next = ST_ANS;
            end
        end
        ST_WR: begin
            m_mem_valid = 1'b1;
            m_mem_write = 1'b1;
            if (s_mem_ready) state_next = ST_WRB;
        end
        ST_WRB: begin
            if (s_mem_done) begin
                m_ans_valid = 1'b1;
                if (s_ans_ready) state_next = ST_IDLE;
                else state_next = ST_ANS;
            end
        end
        default: begin                                   // ST_ANS
            m_ans_valid = 1'b1;
            if (s_ans_ready) state_next = ST_IDLE;
        end
    endcase
    m_idle = state_reg == ST_IDLE;
    m_rec_key = key_reg;
    // clio_dedup's record: {payload (16 bytes), payload length, offset,
    // total length, VA, status, flags}, as the engine's `cur_rec`.
    m_rec = {64'd0, bswap64(old_now), ATOMIC_RESP_LEN[7:0], h_offset, h_total_len, h_va, STATUS_OK, h_flags};
    m_ans_opcode = h_op;
    m_ans_flags = h_flags;
    m_ans_status = STATUS_OK;
    m_ans_pid = h_pid;
    m_ans_req_id = h_req_id;
    m_ans_retry_of = h_retry_of;
    m_ans_va = h_va;
    m_ans_total_len = h_total_len;
    m_ans_offset = h_offset;
    m_ans_session = h_session;
    m_ans_epoch = h_epoch;
    m_ans_data = bswap64(old_now);
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (state_reg == ST_IDLE && s_valid) begin
        addr_reg <= s_addr;
        op_reg <= s_opcode;
        arg0_reg <= s_arg0;
        arg1_reg <= s_arg1;
        key_reg <= s_key;
        h_op <= s_hdr_opcode;
        h_flags <= s_hdr_flags;
        h_pid <= s_hdr_pid;
        h_req_id <= s_hdr_req_id;
        h_retry_of <= s_hdr_retry_of;
        h_va <= s_hdr_va;
        h_total_len <= s_hdr_total_len;
        h_offset <= s_hdr_offset;
        h_session <= s_hdr_session;
        h_epoch <= s_hdr_epoch;
    end
    if (state_reg == ST_SYNC) begin
        old_reg <= sync_old;
        new_reg <= sync_new;
    end
    if (rst) begin
        state_reg <= ST_IDLE;
    end
end

// The sync unit answers OK for TAS, CAS and FAA (its status matters for
// LOCK only, which stays on the engine).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_stage = ^{sync_status, sync_valid};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
