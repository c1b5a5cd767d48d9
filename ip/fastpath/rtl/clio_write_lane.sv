// clio_write_lane: the WRITE stage: a translated one-page write's burst, its B and its header-only answer, while the engine goes on.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over a WRITE once its intake decisions are made
// (credentials, ack, fence gate, dedup lookup: no record, room and quota)
// and its range is translated to one physical range (one page): the command
// carries the physical address, the payload length and the answer's header
// fields. The engine inserts the dedup record in the cycle it hands over (a
// TLB-hit write of one page cannot fail any more: its answer is OK), so a
// retry taken in while this write is still in the stage finds the record,
// as in the model, where the write is done before the next packet.
//
// The stage then
//   W_CMD   offers the mover command (`m_mv_*`; the top gives it priority
//           over the engine's commands on the shared clio_data_mover);
//   W_MOVE  counts the payload bytes the mover takes from the packet buffer
//           (`m_src_pos`, the source window's position; `m_src_busy` while
//           bytes remain: the buffer's beats below the one being read may
//           already take the next packet) until the mover's `done` (the B
//           of the last burst);
//   W_ANS   offers the header-only answer (`m_ans_valid` and the header
//           fields; taken on `s_ans_ready`, i.e. the response builder's
//           start), so the answer leaves after the data is in DRAM.
// One write at a time: a new command is taken once the answer has started.
// `m_mem_busy` from the command until the mover's done: the top keeps the
// AXI port with the mover meanwhile, so no other client passes the write.
module clio_write_lane #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter LEN_WIDTH = 16
) (
    input  wire                          clk,
    input  wire                          rst,

    // Command from the engine.
    input  wire                          s_cmd_valid,
    output wire                          s_cmd_ready,
    input  wire [ADDR_WIDTH-1:0]         s_cmd_addr,
    input  wire [LEN_WIDTH-1:0]          s_cmd_len,
    input  wire [7:0]                    s_hdr_opcode,
    input  wire [31:0]                   s_hdr_pid,
    input  wire [31:0]                   s_hdr_req_id,
    input  wire [31:0]                   s_hdr_retry_of,
    input  wire [63:0]                   s_hdr_va,
    input  wire [31:0]                   s_hdr_total_len,
    input  wire [31:0]                   s_hdr_offset,
    input  wire [15:0]                   s_hdr_session,
    input  wire [31:0]                   s_hdr_epoch,

    // The data mover's command port and write source.
    output wire                          m_mv_valid,
    input  wire                          m_mv_ready,
    output wire [ADDR_WIDTH-1:0]         m_mv_addr,
    output wire [LEN_WIDTH-1:0]          m_mv_len,
    input  wire                          s_mv_take_valid,
    input  wire [$clog2(DATA_WIDTH/8):0] s_mv_take,
    input  wire                          s_mv_done,
    output wire [LEN_WIDTH-1:0]          m_src_pos,
    output wire                          m_src_busy,
    output wire                          m_mem_busy,

    // The header-only answer.
    output wire                          m_ans_valid,
    input  wire                          s_ans_ready,
    output wire [7:0]                    m_ans_opcode,
    output wire [31:0]                   m_ans_pid,
    output wire [31:0]                   m_ans_req_id,
    output wire [31:0]                   m_ans_retry_of,
    output wire [63:0]                   m_ans_va,
    output wire [31:0]                   m_ans_total_len,
    output wire [31:0]                   m_ans_offset,
    output wire [15:0]                   m_ans_session,
    output wire [31:0]                   m_ans_epoch,

    // Nothing in the stage.
    output wire                          m_idle
);

initial begin
    if (DATA_WIDTH < 64 || (DATA_WIDTH & (DATA_WIDTH - 1)) != 0) begin
        $error("Error: DATA_WIDTH must be a power of two of at least 64 (instance %m)");
        $finish;
    end
    if (LEN_WIDTH < 8 || LEN_WIDTH > 32) begin
        $error("Error: LEN_WIDTH must be 8..32 (instance %m)");
        $finish;
    end
end

typedef enum logic [1:0] {
    W_IDLE = 2'd0,      // no write
    W_CMD = 2'd1,       // the mover command is offered
    W_MOVE = 2'd2,      // taken: payload bytes move, then the B
    W_ANS = 2'd3        // in DRAM: the answer waits for the builder
} wl_state_t;

wl_state_t state_reg = W_IDLE;
reg [ADDR_WIDTH-1:0] addr_reg = 0;
reg [LEN_WIDTH-1:0]  len_reg = 0;
reg [LEN_WIDTH-1:0]  pos_reg = 0;
reg [7:0]            op_reg = 0;
reg [31:0]           pid_reg = 0, req_id_reg = 0, retry_of_reg = 0, total_len_reg = 0, offset_reg = 0;
reg [31:0]           epoch_reg = 0;
reg [63:0]           va_reg = 0;
reg [15:0]           session_reg = 0;

assign s_cmd_ready = state_reg == W_IDLE;
assign m_mv_valid = state_reg == W_CMD;
assign m_mv_addr = addr_reg;
assign m_mv_len = len_reg;
assign m_src_pos = pos_reg;
assign m_src_busy = state_reg == W_CMD || (state_reg == W_MOVE && pos_reg != len_reg);
assign m_mem_busy = state_reg == W_CMD || state_reg == W_MOVE;
assign m_ans_valid = state_reg == W_ANS;
assign m_ans_opcode = op_reg;
assign m_ans_pid = pid_reg;
assign m_ans_req_id = req_id_reg;
assign m_ans_retry_of = retry_of_reg;
assign m_ans_va = va_reg;
assign m_ans_total_len = total_len_reg;
assign m_ans_offset = offset_reg;
assign m_ans_session = session_reg;
assign m_ans_epoch = epoch_reg;
assign m_idle = state_reg == W_IDLE;

always_ff @(posedge clk) begin
    case (state_reg)
        W_IDLE: begin
            if (s_cmd_valid) begin
                addr_reg <= s_cmd_addr;
                len_reg <= s_cmd_len;
                pos_reg <= 0;
                op_reg <= s_hdr_opcode;
                pid_reg <= s_hdr_pid;
                req_id_reg <= s_hdr_req_id;
                retry_of_reg <= s_hdr_retry_of;
                va_reg <= s_hdr_va;
                total_len_reg <= s_hdr_total_len;
                offset_reg <= s_hdr_offset;
                session_reg <= s_hdr_session;
                epoch_reg <= s_hdr_epoch;
                state_reg <= W_CMD;
            end
        end
        W_CMD: begin
            if (m_mv_ready) state_reg <= W_MOVE;
        end
        W_MOVE: begin
            if (s_mv_take_valid) pos_reg <= pos_reg + {{(LEN_WIDTH-$clog2(DATA_WIDTH/8)-1){1'b0}}, s_mv_take};
            if (s_mv_done) state_reg <= W_ANS;
        end
        W_ANS: begin
            if (s_ans_ready) state_reg <= W_IDLE;
        end
        default: state_reg <= W_IDLE;
    endcase
    if (rst) begin
        state_reg <= W_IDLE;
        pos_reg <= 0;
    end
end

endmodule

`resetall
