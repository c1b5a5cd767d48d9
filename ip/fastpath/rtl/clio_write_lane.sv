// clio_write_lane: the WRITE stage: translated one-page writes' bursts, their Bs and their header-only answers, while the engine goes on.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands over a WRITE once its intake decisions are made
// (credentials, ack, fence gate, dedup lookup: no record, room and quota)
// and its range is translated to one physical range (one page): the command
// carries the physical address, the payload length, the packet buffer that
// holds the payload and the answer's header fields. The engine inserts the
// dedup record in the cycle it hands over (a TLB-hit write of one page
// cannot fail any more: its answer is OK), so a retry taken in while this
// write is still in the stage finds the record, as in the model, where the
// write is done before the next packet.
//
// The stage holds up to SLOTS writes, oldest first, each
//   queued     until the mover takes its command (`m_mv_*`, oldest first;
//              the top gives it priority over the engine's commands on the
//              shared clio_data_mover, which takes a write while the Bs of
//              earlier ones are outstanding);
//   moving     while the mover takes its payload bytes from the packet
//              buffer (`m_src_pos`, the source window's position in
//              `m_src_buf`, of the oldest write with bytes left;
//              `m_src_busy` while there is one: the buffer's beats below
//              the one being read may already take the next packet, and a
//              buffer of a later write (`m_buf_held`) none);
//   written    once the mover's `done` (the B of its last burst: dones come
//              in command order) has come;
// and offers the oldest write's header-only answer once it is written
// (`m_ans_valid` and the header fields; taken on `s_ans_ready`, i.e. the
// response builder's start): answers leave in hand-over order, each after
// its own data is in DRAM. A new command is taken while a slot is free.
// `m_mem_busy` while a write waits for its `done`: the top keeps the AXI
// port with the mover meanwhile, and the mover's takes and dones are the
// stage's, so no other client passes the writes.
module clio_write_lane #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter LEN_WIDTH = 16,
    parameter SLOTS = 2,              // writes in the stage (power of two)
    parameter BUFS = 2                // packet buffers the payloads are in
) (
    input  wire                          clk,
    input  wire                          rst,

    // Command from the engine.
    input  wire                          s_cmd_valid,
    output wire                          s_cmd_ready,
    input  wire [ADDR_WIDTH-1:0]         s_cmd_addr,
    input  wire [LEN_WIDTH-1:0]          s_cmd_len,
    input  wire [(BUFS > 1 ? $clog2(BUFS) : 1)-1:0] s_cmd_buf,
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
    output wire [(BUFS > 1 ? $clog2(BUFS) : 1)-1:0] m_src_buf,
    output wire                          m_src_busy,
    output wire [BUFS-1:0]               m_buf_held,
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

localparam SW = $clog2(SLOTS);
localparam BFW = BUFS > 1 ? $clog2(BUFS) : 1;

initial begin
    if (DATA_WIDTH < 64 || (DATA_WIDTH & (DATA_WIDTH - 1)) != 0) begin
        $error("Error: DATA_WIDTH must be a power of two of at least 64 (instance %m)");
        $finish;
    end
    if (LEN_WIDTH < 8 || LEN_WIDTH > 32) begin
        $error("Error: LEN_WIDTH must be 8..32 (instance %m)");
        $finish;
    end
    if (SLOTS < 2 || (1 << SW) != SLOTS || BUFS < 1) begin
        $error("Error: SLOTS must be a power of two of at least 2, BUFS at least 1 (instance %m)");
        $finish;
    end
end

// The slots, a ring: [ans, done) written, [done, take) payload taken and
// waiting for the B, [take, cmd) taking its payload (the oldest) or
// commanded, [cmd, wr) queued. ans <= done <= take <= cmd <= wr (mod 2 SLOTS).
reg [ADDR_WIDTH-1:0] q_addr [0:SLOTS-1];
reg [LEN_WIDTH-1:0]  q_len [0:SLOTS-1];
reg [BFW-1:0]        q_buf [0:SLOTS-1];
reg [7:0]            q_op [0:SLOTS-1];
reg [31:0]           q_pid [0:SLOTS-1], q_req_id [0:SLOTS-1], q_retry_of [0:SLOTS-1];
reg [31:0]           q_total_len [0:SLOTS-1], q_offset [0:SLOTS-1], q_epoch [0:SLOTS-1];
reg [63:0]           q_va [0:SLOTS-1];
reg [15:0]           q_session [0:SLOTS-1];
initial begin
    for (int i = 0; i < SLOTS; i = i + 1) begin
        q_addr[i] = 0;
        q_len[i] = 0;
        q_buf[i] = 0;
        q_op[i] = 0;
        q_pid[i] = 0;
        q_req_id[i] = 0;
        q_retry_of[i] = 0;
        q_total_len[i] = 0;
        q_offset[i] = 0;
        q_epoch[i] = 0;
        q_va[i] = 0;
        q_session[i] = 0;
    end
end
reg [SW:0]           wr_reg = 0, cmd_reg = 0, take_reg = 0, done_reg = 0, ans_reg = 0;
reg [LEN_WIDTH-1:0]  pos_reg = 0;          // payload bytes of slot `take` taken

wire [SW-1:0] cmd_i = cmd_reg[SW-1:0];
wire [SW-1:0] take_i = take_reg[SW-1:0];
wire [SW-1:0] ans_i = ans_reg[SW-1:0];
wire          taking = take_reg != cmd_reg;      // the oldest write with bytes left is commanded
wire          take = s_mv_take_valid && taking;
/* verilator lint_off WIDTH */
wire [LEN_WIDTH-1:0] pos_next = pos_reg + s_mv_take;
/* verilator lint_on WIDTH */
// A done is a commanded write's whose bytes are all taken (the mover's dones
// come in command order, none before the last W beat).
wire          done = s_mv_done && done_reg != take_reg;
wire [SW:0]   count = wr_reg - ans_reg;

// Buffers of writes after the oldest one with bytes left: held whole.
wire [SW:0]   behind = wr_reg - take_reg;    // that write and the ones after it
reg [BUFS-1:0] held;
always @* begin
    held = {BUFS{1'b0}};
    for (int i = 1; i < SLOTS; i = i + 1) begin
        /* verilator lint_off WIDTH */
        if (i < behind) held[q_buf[(take_i + i) % SLOTS]] = 1'b1;
        /* verilator lint_on WIDTH */
    end
end

assign s_cmd_ready = count != SLOTS[SW:0];
assign m_mv_valid = cmd_reg != wr_reg;
assign m_mv_addr = q_addr[cmd_i];
assign m_mv_len = q_len[cmd_i];
assign m_src_pos = pos_reg;
assign m_src_buf = q_buf[take_i];
assign m_src_busy = take_reg != wr_reg;
assign m_buf_held = held;
assign m_mem_busy = done_reg != wr_reg;
assign m_ans_valid = ans_reg != done_reg;
assign m_ans_opcode = q_op[ans_i];
assign m_ans_pid = q_pid[ans_i];
assign m_ans_req_id = q_req_id[ans_i];
assign m_ans_retry_of = q_retry_of[ans_i];
assign m_ans_va = q_va[ans_i];
assign m_ans_total_len = q_total_len[ans_i];
assign m_ans_offset = q_offset[ans_i];
assign m_ans_session = q_session[ans_i];
assign m_ans_epoch = q_epoch[ans_i];
assign m_idle = count == 0;

always_ff @(posedge clk) begin
    if (s_cmd_valid && s_cmd_ready) begin
        q_addr[wr_reg[SW-1:0]] <= s_cmd_addr;
        q_len[wr_reg[SW-1:0]] <= s_cmd_len;
        q_buf[wr_reg[SW-1:0]] <= s_cmd_buf;
        q_op[wr_reg[SW-1:0]] <= s_hdr_opcode;
        q_pid[wr_reg[SW-1:0]] <= s_hdr_pid;
        q_req_id[wr_reg[SW-1:0]] <= s_hdr_req_id;
        q_retry_of[wr_reg[SW-1:0]] <= s_hdr_retry_of;
        q_va[wr_reg[SW-1:0]] <= s_hdr_va;
        q_total_len[wr_reg[SW-1:0]] <= s_hdr_total_len;
        q_offset[wr_reg[SW-1:0]] <= s_hdr_offset;
        q_session[wr_reg[SW-1:0]] <= s_hdr_session;
        q_epoch[wr_reg[SW-1:0]] <= s_hdr_epoch;
        wr_reg <= wr_reg + 1'b1;
    end
    if (m_mv_valid && m_mv_ready) cmd_reg <= cmd_reg + 1'b1;
    if (take) begin
        if (pos_next == q_len[take_i]) begin
            pos_reg <= 0;
            take_reg <= take_reg + 1'b1;
        end else begin
            pos_reg <= pos_next;
        end
    end
    if (done) done_reg <= done_reg + 1'b1;
    if (m_ans_valid && s_ans_ready) ans_reg <= ans_reg + 1'b1;
    if (rst) begin
        wr_reg <= 0;
        cmd_reg <= 0;
        take_reg <= 0;
        done_reg <= 0;
        ans_reg <= 0;
        pos_reg <= 0;
    end
end

endmodule

`resetall
