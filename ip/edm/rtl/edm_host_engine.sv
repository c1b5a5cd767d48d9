// edm_host_engine: EDM host message engine (EDM §3.2.1), requester and memory-node sides.
//
// Requester: a message queue of read/write requests; one message per cycle leaves it, the
// oldest whose destination has fewer than X active messages (order is kept per destination,
// other destinations are not blocked; the request arriving this cycle is a candidate too). A
// leaving message takes the next message id of its destination and an entry of the message
// state table, whether or not the encoder is free, and waits for it in the issued-message
// FIFO. A read sends its RREQ at once (the
// RREQ is its implicit notification); a write sends an /N/ and waits in the table for /G/s,
// each answered with one WREQ chunk read from local memory. Responses (RRES) land in local
// memory; a read completes when all its bytes arrived or on a NULL (empty, last) response.
// Memory node: a received RREQ reads local memory and is the implicit grant of its first
// RRES chunk (min(CHUNK, len)); later /G/s of kind RRES send the next chunks. A WREQ writes
// local memory. Requests for addresses outside memory are answered with a NULL RRES: an
// empty chunk for each grant of the request's length, the last marked last (the NULL), so
// the requester completes the read only once the switch has granted all of it.
// Received /G/s and implicit grants share one grant queue. A grant and an issued message go
// to the encoder in the order the model's TX FIFO gets their units (the message first if it
// left the queue before the grant came due).
// Received body words are staged and written to memory only once their message checked
// good (a cut-short or bad message writes nothing), except a read's response, whose words go
// to the read's buffer as they arrive (cut-through; the read completes with its last block). Addresses and lengths are 8-byte
// aligned (checked at submission; unaligned remote requests are served as bad addresses).
// Messages leave through edm_msg_encoder into a unit buffer and on to the TX mux; the
// encoder is never starved, so each unit is sent contiguously, and every job gives the encoder
// its first body word with start, so units follow each other without a gap (as from the
// model's TX FIFO) and reach the line 2 cycles after their job starts.
// Applied writes: when a received WREQ's words are in local memory, wapp_* reports where
// (first word, words, sender, whether it was the message's last chunk), so that a
// layer above (the Clio-over-EDM translator) learns of data written into its memory.
// RMW (CAS, FAA, SWAP, TAS on an aligned 64-bit word): the requester sends an RMWREQ (its
// implicit notification, like an RREQ) and reports the 1- or 8-byte result with the
// completion; the memory node executes it in arrival order with the writes (atomic: one
// message at a time) and answers with an RRES holding the result.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_host_engine #(
    parameter DST_W = 4,
    parameter X = 3,
    parameter MSGS = 8,
    parameter SERVE = 8,
    parameter QDEPTH = 8,
    parameter GDEPTH = 64,   // grant queue (see edm_host_top)
    parameter CHUNK = 256,
    parameter MEM_WORDS = 512,
    parameter TAG_W = 16,
    // cycles a grant waits in the grant queue before it may be served: the paper's RX -> TX
    // clock-domain crossing (EDM §3.2.1; the model's host_grant_queue), which this
    // single-clock engine has no synchronizer for; with the decoder and job cycles a grant's
    // unit reaches the line when the model's does (its job starts 2 cycles before that)
    parameter GQ_LAT = 5,
    // unit buffer (blocks, a power of two): jobs wait for room here while frames hold the
    // line, and a write's id is freed only when the job of its last chunk starts, so a small
    // buffer delays later messages behind a frame backlog (the model's TX queue is unbounded)
    parameter UDEPTH = 64,
    parameter AW = $clog2(MEM_WORDS)
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [15:0]       node_id,

    // request interface: read (req_write = 0) len bytes at req_addr on req_dst into local
    // byte address req_local, or write len bytes from req_local to req_addr on req_dst
    input  wire              req_valid,
    output wire              req_ready,
    input  wire              req_write,
    input  wire [15:0]       req_dst,
    input  wire [63:0]       req_addr,
    input  wire [15:0]       req_len,
    input  wire [31:0]       req_local,
    input  wire [TAG_W-1:0]  req_tag,
    // or an RMW (req_rmw = 1) of the word at req_addr: op (0 CAS, 1 FAA, 2 SWAP, 3 TAS) and
    // operands (CAS: compare, swap; FAA: addend; SWAP: value)
    input  wire              req_rmw,
    input  wire [3:0]        req_op,
    input  wire [63:0]       req_opa,
    input  wire [63:0]       req_opb,

    // completions: writes when their last chunk left, reads when their data is in memory
    output reg               wcomp_valid,
    output reg  [TAG_W-1:0]  wcomp_tag,
    output reg               rcomp_valid,
    output reg  [TAG_W-1:0]  rcomp_tag,
    output reg               rcomp_ok,
    output reg  [63:0]       rcomp_data,       // RMW result (little-endian bytes)

    // a received WREQ chunk is in local memory (one-cycle pulse)
    output reg               wapp_valid,
    output reg  [AW-1:0]     wapp_addr,
    output reg  [15:0]       wapp_words,
    output reg  [15:0]       wapp_peer,
    output reg               wapp_last,

    // local memory port (host DMA side), one access per cycle, read data one cycle later
    input  wire              ext_en,
    input  wire              ext_we,
    input  wire [AW-1:0]     ext_addr,
    input  wire [63:0]       ext_wdata,
    output reg  [63:0]       ext_rdata,

    // from edm_msg_decoder (rx_start: a /MS/ or /MST/ reached the decoder, aligned with its outputs)
    input  wire              rx_start,
    input  wire [63:0]       body_data,
    input  wire              body_valid,
    input  wire              msg_valid,
    input  wire              msg_bad_field,
    input  wire              msg_bad_length,
    input  wire [2:0]        msg_kind,
    input  wire              msg_last,
    input  wire [3:0]        msg_op,
    input  wire [15:0]       msg_peer,
    input  wire [7:0]        msg_id,
    input  wire [15:0]       msg_len,
    input  wire              ctl_valid,
    input  wire              ctl_grant,
    input  wire              ctl_bad_field,
    input  wire [15:0]       ctl_peer,
    input  wire [7:0]        ctl_id,
    input  wire [15:0]       ctl_len,
    input  wire [2:0]        ctl_kind,
    input  wire [47:0]       cur_head,         // header of the message being received

    // memory units to the TX mux (whole units, one block per cycle once started)
    output wire [63:0]       mem_data,
    output wire [1:0]        mem_hdr,
    output wire              mem_valid,
    output wire              mem_last,
    output wire [15:0]       mem_len,
    input  wire              mem_ready,

    output reg  [31:0]       cnt_unknown_grant,
    output reg  [31:0]       cnt_unknown_response,
    output reg  [31:0]       cnt_unexpected,
    output reg  [31:0]       cnt_bad_address,
    output reg  [31:0]       cnt_bad_request,
    output reg  [31:0]       cnt_bad_message
);

import edm_pkg::*;

localparam MW = $clog2(MSGS);
localparam SVW = $clog2(SERVE);
localparam QI = $clog2(QDEPTH);
localparam QW = QI + 1;
localparam GW = $clog2(GDEPTH);
localparam UW = $clog2(UDEPTH);
localparam LDEPTH = 16;
localparam LW = $clog2(LDEPTH);
localparam SDEPTH = 64;
localparam SW = $clog2(SDEPTH);
localparam DDEPTH = 16;
localparam DW = $clog2(DDEPTH);
localparam DSTS = 1 << DST_W;
localparam [31:0] MEM_BYTES = MEM_WORDS * 8;
// the largest unit: a WREQ chunk of CHUNK bytes plus the address
localparam UNIT_MAX = 2 + CHUNK / 8;

initial begin
    if (X < 1 || MSGS < 1 || SERVE < 1 || (1 << GW) != GDEPTH || (1 << QI) != QDEPTH || (1 << AW) != MEM_WORDS ||
        CHUNK < 8 || CHUNK % 8 != 0 || UNIT_MAX + 1 > UDEPTH || DST_W < 1 || DST_W > 16 ||
        (1 << MW) != MSGS || (1 << SVW) != SERVE || (1 << UW) != UDEPTH) begin
        $error("bad parameters: MSGS, SERVE, GDEPTH, MEM_WORDS, UDEPTH powers of two; CHUNK a multiple of 8 up to 496; UDEPTH above a unit");
        $finish;
    end
end

// ---------------------------------------------------------------- local memory
reg [63:0] mem [0:MEM_WORDS-1];
// Zero at power-up, as the FPGA's block/ultra RAM (no INIT) and the model's memory: a read of a
// word never written (a READ's answer chain read before the memory node wrote its outbox, which
// the translator then reads again) returns zeros, in simulation too, not X.
initial begin : mem_zero
    integer i;
    for (i = 0; i < MEM_WORDS; i = i + 1) begin
        mem[i] = 64'd0;
    end
end

// ---------------------------------------------------------------- message queue
reg [QW-1:0]    q_cnt_reg;
reg             q_write [0:QDEPTH-1];
reg             q_rmw [0:QDEPTH-1];
reg [3:0]       q_op [0:QDEPTH-1];
reg [63:0]      q_opa [0:QDEPTH-1];
reg [63:0]      q_opb [0:QDEPTH-1];
reg [DST_W-1:0] q_dst [0:QDEPTH-1];
reg [63:0]      q_addr [0:QDEPTH-1];
reg [15:0]      q_len [0:QDEPTH-1];
reg [AW-1:0]    q_local [0:QDEPTH-1];
reg [TAG_W-1:0] q_tag [0:QDEPTH-1];

// ---------------------------------------------------------------- message state table
reg [MSGS-1:0]  t_valid_reg;
reg             t_write [0:MSGS-1];
reg             t_rmw [0:MSGS-1];
reg [DST_W-1:0] t_dst [0:MSGS-1];
reg [7:0]       t_id [0:MSGS-1];
reg [63:0]      t_addr [0:MSGS-1];
reg [AW-1:0]    t_local [0:MSGS-1];
reg [15:0]      t_total [0:MSGS-1];
reg [15:0]      t_done [0:MSGS-1];     // bytes sent (writes) or received (reads)
reg [TAG_W-1:0] t_tag [0:MSGS-1];
reg [3:0]       t_op [0:MSGS-1];
reg [63:0]      t_opa [0:MSGS-1];
reg [63:0]      t_opb [0:MSGS-1];
reg [7:0]       next_id [0:DSTS-1];

// ---------------------------------------------------------------- issued messages
// Messages leave the queue (take their id and table entry) one per cycle whenever their
// destination has room, as the model's do, whether or not the encoder is free; they wait here,
// with the cycle they left, until the encoder sends them. A grant and a message are sent in
// the order the model puts their units into its TX FIFO: the message first if it left before
// the grant came due (both reach the line 2 cycles after their job starts). Every issued
// message holds a table entry, so MSGS slots never fill before the table does: a smaller FIFO
// held messages back in the queue under a burst, later than the model let them leave.
localparam IDEPTH = MSGS;
localparam IW = $clog2(IDEPTH);
reg [MW-1:0]    im_slot [0:IDEPTH-1];
reg [15:0]      im_time [0:IDEPTH-1];
reg [IW:0]      im_wr_reg, im_rd_reg;
wire            im_empty = im_wr_reg == im_rd_reg;
wire            im_full = (im_wr_reg - im_rd_reg) == IDEPTH[IW:0];
wire [MW-1:0]   im_head = im_slot[im_rd_reg[IW-1:0]];

// ---------------------------------------------------------------- serve table (memory node)
reg [SERVE-1:0] s_valid_reg;
reg [15:0]      s_peer [0:SERVE-1];
reg [7:0]       s_id [0:SERVE-1];
reg [AW-1:0]    s_addr [0:SERVE-1];
reg [15:0]      s_total [0:SERVE-1];
reg [15:0]      s_sent [0:SERVE-1];
reg             s_rmw [0:SERVE-1];
reg             s_null [0:SERVE-1];    // a NULL response: every grant gets an empty chunk
reg [63:0]      s_result [0:SERVE-1];

// ---------------------------------------------------------------- grant queue
reg [2:0]  g_kind [0:GDEPTH-1];
reg [15:0] g_peer [0:GDEPTH-1];
reg [7:0]  g_id [0:GDEPTH-1];
reg [15:0] g_len [0:GDEPTH-1];
reg [GW:0] g_wr_reg, g_rd_reg;
reg [15:0] g_at [0:GDEPTH-1];          // cycle from which the entry may be served
reg [15:0] g_now_reg;
wire g_empty = g_wr_reg == g_rd_reg;
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] g_wait = g_now_reg - g_at[g_rd_reg[GW-1:0]];
/* verilator lint_on UNUSEDSIGNAL */
wire g_due = !g_empty && !g_wait[15];
wire g_full = (g_wr_reg - g_rd_reg) == GDEPTH[GW:0];

// ---------------------------------------------------------------- unit buffer (to TX mux)
reg [65:0]    u_mem [0:UDEPTH-1];
reg [UW:0]    u_wr_reg, u_rd_reg;
reg [UW:0]    u_reserved_reg;          // blocks in the buffer plus blocks promised to it
reg [15:0]    ul_mem [0:LDEPTH-1];
reg           ul_comp [0:LDEPTH-1];    // the unit is a write's last chunk: complete it as it leaves
reg [TAG_W-1:0] ul_tag [0:LDEPTH-1];
reg [LW:0]    ul_wr_reg, ul_rd_reg;
reg           u_in_unit_reg;
reg [15:0]    u_left_reg;
wire [UW:0]   u_count = u_wr_reg - u_rd_reg;
wire          ul_empty = ul_wr_reg == ul_rd_reg;
wire          ul_full = (ul_wr_reg - ul_rd_reg) == LDEPTH[LW:0];
wire [15:0]   ul_head = ul_mem[ul_rd_reg[LW-1:0]];
// The encoder writes a unit's blocks on consecutive cycles (its body words come from local
// memory without waiting), so a unit may start as soon as its first block is here.
wire          u_head_ready = !ul_empty && u_count != 0;
// An RREQ/RMWREQ's blocks go from the encoder to the TX mux in the cycle they are made when
// the buffer is empty (they are written to the buffer too, and popped at once if taken).
reg           u_fast_reg;
wire          u_bypass;

assign mem_valid = u_in_unit_reg || u_head_ready || u_bypass;
assign mem_data = u_bypass ? enc_out_data : u_mem[u_rd_reg[UW-1:0]][63:0];
assign mem_hdr = u_bypass ? enc_out_hdr : u_mem[u_rd_reg[UW-1:0]][65:64];
assign mem_last = u_in_unit_reg ? u_left_reg == 16'd1 : ul_head == 16'd1;
assign mem_len = ul_head;
wire u_pop = mem_valid && mem_ready;

// ---------------------------------------------------------------- RX staging
reg [63:0]    st_mem [0:SDEPTH-1];
reg [SW:0]    st_wr_reg, st_commit_reg, st_rd_reg;
reg [SW:0]    st_msg_words_reg;         // words of the message being received
reg [63:0]    st_word0_reg;             // its first body word (the address of RREQ/WREQ)
reg [63:0]    st_word1_reg;             // its second and third (RMW operands)
reg [63:0]    st_word2_reg;
// descriptors of committed messages: what the drain does with their words
reg [1:0]     d_op [0:DDEPTH-1];        // 0 discard, 1 write to memory
reg [SW:0]    d_words [0:DDEPTH-1];
reg           d_skip [0:DDEPTH-1];      // drop the first word (the WREQ address)
reg [AW-1:0]  d_base [0:DDEPTH-1];
reg           d_comp [0:DDEPTH-1];      // report a read completion when done
reg [TAG_W-1:0] d_tag [0:DDEPTH-1];
reg           d_ok [0:DDEPTH-1];
reg [63:0]    d_data [0:DDEPTH-1];      // RMW result (requester) or operand a (memory node)
reg [63:0]    d_opb [0:DDEPTH-1];
reg [3:0]     d_rmw_op [0:DDEPTH-1];
reg [15:0]    d_peer [0:DDEPTH-1];
reg [7:0]     d_id [0:DDEPTH-1];
reg           d_in_range [0:DDEPTH-1];
reg           d_wapp [0:DDEPTH-1];      // report an applied write when done
reg           d_last [0:DDEPTH-1];
reg [DW:0]    d_wr_reg, d_rd_reg;
reg           dr_active_reg;
reg [SW:0]    dr_left_reg;
reg           dr_skip_reg;
reg [AW-1:0]  dr_ptr_reg;
reg           dr_op_reg;
reg           dr_comp_reg;
reg [TAG_W-1:0] dr_tag_reg;
reg           dr_ok_reg;
reg [63:0]    dr_data_reg;
reg           dr_wapp_reg;
reg           dr_last_reg;
reg [AW-1:0]  dr_base_reg;
reg [15:0]    dr_peer_reg;
reg [SW:0]    dr_words_reg;

// ---------------------------------------------------------------- TX job
reg           tx_body_reg;              // feeding body words to the encoder
reg           tx_addr_first_reg;        // the next word is the address word
reg           tx_regs_reg;              // later words come from tx_w1/tx_w2, not memory
reg           tx_ridx_reg;
reg [63:0]    tx_w1_reg, tx_w2_reg;
reg [63:0]    tx_addr_word_reg;
reg [AW-1:0]  tx_ptr_reg;
reg [12:0]    tx_words_reg;             // words still to feed

// encoder
reg           enc_start;
reg [2:0]     enc_kind;
reg           enc_last;
reg [3:0]     enc_op;
reg [15:0]    enc_peer;
reg [7:0]     enc_id;
reg [15:0]    enc_len;
wire          enc_start_ready;
wire          enc_body_ready;
wire [63:0]   enc_out_data;
wire [1:0]    enc_out_hdr;
wire          enc_out_valid;
wire          enc_out_last;
wire          enc_out_error;
wire [63:0]   enc_body_data;            // assigned below the TX job selection
wire          enc_body_valid;

edm_msg_encoder enc_inst (
    .clk(clk),
    .rst(rst),
    .start(enc_start),
    .hdr_kind(enc_kind),
    .hdr_last(enc_last),
    .hdr_op(enc_op),
    .hdr_peer(enc_peer),
    .hdr_id(enc_id),
    .hdr_len(enc_len),
    .start_ready(enc_start_ready),
    .body_data(enc_body_data),
    .body_valid(enc_body_valid),
    .body_ready(enc_body_ready),
    .out_data(enc_out_data),
    .out_hdr(enc_out_hdr),
    .out_valid(enc_out_valid),
    .out_last(enc_out_last),
    .out_error(enc_out_error)
);

// ---------------------------------------------------------------- request validation
wire [32:0] req_end = {1'b0, req_local} + {17'd0, req_len};
wire req_ok = req_dst != node_id && req_dst < DSTS && req_addr[2:0] == 3'd0 && (req_rmw ?
              req_op <= RMW_OP_TAS :
              (req_len != 0 && req_len[2:0] == 3'd0 && req_local[2:0] == 3'd0 &&
               req_end <= {1'b0, MEM_BYTES}));
// RMW operand and result bytes
function automatic [15:0] rmw_resp(input [3:0] op);
    rmw_resp = (op == RMW_OP_CAS || op == RMW_OP_TAS) ? 16'd1 : 16'd8;
endfunction
function automatic [1:0] rmw_words(input [3:0] op);
    rmw_words = (op == RMW_OP_CAS) ? 2'd2 : (op == RMW_OP_TAS) ? 2'd0 : 2'd1;
endfunction
assign req_ready = q_cnt_reg != QDEPTH[QW-1:0];

// ---------------------------------------------------------------- queue pick
// the oldest queued message whose destination has room (fewer than X active) and a free id
reg              pick_valid;
reg [QI-1:0]     pick_idx;
reg [MW-1:0]     free_slot;
reg              free_slot_ok;
reg              pick_id_busy;
reg              qpick_valid;             // a queued message can leave

// When no queued message can leave, the request arriving this cycle is offered (the bypass),
// so a host reads its message queue in the cycle a request is submitted, as the model's does
// (its queue scan sees the new request too): at once when the queue is empty, and past
// queued messages whose destinations are at their X limit.
wire             q_bypass = req_valid && req_ok && req_ready && !qpick_valid;
wire             pq_write = q_bypass ? req_write && !req_rmw : q_write[pick_idx];
wire             pq_rmw = q_bypass ? req_rmw : q_rmw[pick_idx];
wire [3:0]       pq_op = q_bypass ? req_op : q_op[pick_idx];
wire [63:0]      pq_opa = q_bypass ? req_opa : q_opa[pick_idx];
wire [63:0]      pq_opb = q_bypass ? req_opb : q_opb[pick_idx];
wire [DST_W-1:0] pq_dst = q_bypass ? req_dst[DST_W-1:0] : q_dst[pick_idx];
wire [63:0]      pq_addr = q_bypass ? req_addr : q_addr[pick_idx];
wire [15:0]      pq_len = q_bypass ? req_len : q_len[pick_idx];
wire [AW-1:0]    pq_local = q_bypass ? req_local[AW+2:3] : q_local[pick_idx];
wire [TAG_W-1:0] pq_tag = q_bypass ? req_tag : q_tag[pick_idx];

always @* begin : queue_scan
    integer i, j, n;
    qpick_valid = 1'b0;
    pick_idx = 0;
    free_slot_ok = 1'b0;
    free_slot = 0;
    for (j = MSGS - 1; j >= 0; j = j - 1) begin
        if (!t_valid_reg[j]) begin
            free_slot_ok = 1'b1;
            free_slot = j[MW-1:0];
        end
    end
    for (i = QDEPTH - 1; i >= 0; i = i - 1) begin
        n = 0;
        for (j = 0; j < MSGS; j = j + 1) begin
            if (t_valid_reg[j] && t_dst[j] == q_dst[i]) begin
                n = n + 1;
            end
        end
        if (i < 32'(q_cnt_reg) && n < X && free_slot_ok) begin
            qpick_valid = 1'b1;
            pick_idx = i[QI-1:0];
        end
    end
end

always @* begin : pick_step
    integer j, n;
    pick_valid = qpick_valid;
    n = 0;
    if (q_bypass) begin
        for (j = 0; j < MSGS; j = j + 1) begin
            if (t_valid_reg[j] && t_dst[j] == req_dst[DST_W-1:0]) begin
                n = n + 1;
            end
        end
        pick_valid = n < X && free_slot_ok;
    end
    pick_id_busy = 1'b0;
    for (j = 0; j < MSGS; j = j + 1) begin
        if (t_valid_reg[j] && t_dst[j] == pq_dst && t_id[j] == next_id[pq_dst]) begin
            pick_id_busy = 1'b1;
        end
    end
end

// ---------------------------------------------------------------- grant lookup
// A grant whose message this node does not know (bad input: a NULL response is served to
// its last grant, so it leaves none) is dead. It is dropped as soon as it is due at the head, in any cycle, and the entry
// behind it is the one looked up for the next job in that same cycle: the model drops a dead
// grant when it comes to serve it and serves the next at once, so it takes no job slot.
wire [GW-1:0] g_head = g_rd_reg[GW-1:0];
reg           hd_live;

always @* begin : head_lookup
    integer j;
    hd_live = 1'b0;
    for (j = 0; j < MSGS; j = j + 1) begin
        if (g_kind[g_head] == MSG_KIND_WREQ && t_valid_reg[j] && t_write[j] &&
                {{(16-DST_W){1'b0}}, t_dst[j]} == g_peer[g_head] && t_id[j] == g_id[g_head]) begin
            hd_live = 1'b1;
        end
    end
    for (j = 0; j < SERVE; j = j + 1) begin
        if (g_kind[g_head] == MSG_KIND_RRES && s_valid_reg[j] && s_peer[j] == g_peer[g_head] &&
                s_id[j] == g_id[g_head]) begin
            hd_live = 1'b1;
        end
    end
end

wire          g_head_dead = g_due && !hd_live;
wire [GW:0]   g_count = g_wr_reg - g_rd_reg;
// the entry the next grant job serves: the head, or the one behind a dead head
wire [GW-1:0] g_sel = g_head_dead ? g_head + 1'b1 : g_head;
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0]   g_sel_wait = g_now_reg - g_at[g_sel];
/* verilator lint_on UNUSEDSIGNAL */
wire          g_sel_due = (g_head_dead ? g_count >= 2 : !g_empty) && !g_sel_wait[15];
wire [2:0]  gh_kind = g_kind[g_sel];
wire [15:0] gh_peer = g_peer[g_sel];
wire [7:0]  gh_id = g_id[g_sel];
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] gh_len = g_len[g_sel];  // whole words only (bits 2:0 dropped)
/* verilator lint_on UNUSEDSIGNAL */
reg         gw_hit;
reg [MW-1:0] gw_idx;
reg         gs_hit;
reg [SVW-1:0] gs_idx;

always @* begin : grant_lookup
    integer j;
    gw_hit = 1'b0;
    gw_idx = 0;
    for (j = MSGS - 1; j >= 0; j = j - 1) begin
        if (t_valid_reg[j] && t_write[j] && {{(16-DST_W){1'b0}}, t_dst[j]} == gh_peer && t_id[j] == gh_id) begin
            gw_hit = 1'b1;
            gw_idx = j[MW-1:0];
        end
    end
    gs_hit = 1'b0;
    gs_idx = 0;
    for (j = SERVE - 1; j >= 0; j = j - 1) begin
        if (s_valid_reg[j] && s_peer[j] == gh_peer && s_id[j] == gh_id) begin
            gs_hit = 1'b1;
            gs_idx = j[SVW-1:0];
        end
    end
end

wire [15:0] gw_rest = t_total[gw_idx] - t_done[gw_idx];
wire [15:0] gw_len = ({gh_len[15:3], 3'd0} < gw_rest) ? {gh_len[15:3], 3'd0} : gw_rest;
wire [15:0] gs_rest = s_total[gs_idx] - s_sent[gs_idx];
// bytes of the request this grant covers, and the chunk's body: none for a NULL response,
// which spends every grant the switch schedules for the request's length (the NULL, empty
// and last, with the last) so the read completes only once the switch holds none of it
wire [15:0] gs_step = s_rmw[gs_idx] ? gs_rest :
                      ({gh_len[15:3], 3'd0} < gs_rest) ? {gh_len[15:3], 3'd0} : gs_rest;
wire [15:0] gs_len = s_null[gs_idx] ? 16'd0 : gs_step;

// ---------------------------------------------------------------- response cut-through
// A read's response words go into local memory as they arrive (the model's host_rx_data: the
// data is handed over block by block), not after the message checked good: the read
// completes as its last block is checked. A response cut short leaves bytes of its chunk in
// the read's buffer, which the read has not completed; nothing outside that buffer is
// written. RMW results and NULL responses carry no data for memory.
/* verilator lint_off UNUSEDSIGNAL */
wire [47:0] ch = cur_head;
/* verilator lint_on UNUSEDSIGNAL */
wire [2:0]  ch_kind = ch[2:0];
wire [15:0] ch_peer = ch[23:8];
wire [7:0]  ch_id = ch[31:24];
wire [15:0] ch_len = ch[47:32];
reg          ct_hit;
reg [MW-1:0] ct_idx;
reg          ct_active_reg;
reg [AW-1:0] ct_ptr_reg;

always @* begin : ct_lookup
    integer j;
    ct_hit = 1'b0;
    ct_idx = 0;
    for (j = MSGS - 1; j >= 0; j = j - 1) begin
        if (t_valid_reg[j] && !t_write[j] && !t_rmw[j] && {{(16-DST_W){1'b0}}, t_dst[j]} == ch_peer &&
                t_id[j] == ch_id) begin
            ct_hit = 1'b1;
            ct_idx = j[MW-1:0];
        end
    end
end
wire ct_start = rx_start && ch_kind == MSG_KIND_RRES && ct_hit && ch_len[2:0] == 3'd0 &&
                ch_len <= t_total[ct_idx] - t_done[ct_idx];

// ---------------------------------------------------------------- RX message lookup
reg          rr_hit;
reg [MW-1:0] rr_idx;
reg          rs_dup;
reg          rs_free_ok;
reg [SVW-1:0] rs_free;

always @* begin : rx_lookup
    integer j;
    rr_hit = 1'b0;
    rr_idx = 0;
    for (j = MSGS - 1; j >= 0; j = j - 1) begin
        if (t_valid_reg[j] && !t_write[j] && {{(16-DST_W){1'b0}}, t_dst[j]} == msg_peer && t_id[j] == msg_id) begin
            rr_hit = 1'b1;
            rr_idx = j[MW-1:0];
        end
    end
    rs_dup = 1'b0;
    rs_free_ok = 1'b0;
    rs_free = 0;
    for (j = SERVE - 1; j >= 0; j = j - 1) begin
        if (s_valid_reg[j] && s_peer[j] == msg_peer && s_id[j] == msg_id) begin
            rs_dup = 1'b1;
        end
        if (!s_valid_reg[j]) begin
            rs_free_ok = 1'b1;
            rs_free = j[SVW-1:0];
        end
    end
end

// words of the message that ends this cycle (including a word arriving with msg_valid)
// Staging never overwrites words not yet drained: a message whose words do not fit (longer
// than the buffer, or arriving faster than the drain) is dropped whole and counted, as is one
// arriving while the descriptor FIFO is full.
wire st_full = rx_start ? (st_commit_reg - st_rd_reg) == SDEPTH[SW:0] : (st_wr_reg - st_rd_reg) == SDEPTH[SW:0];
wire st_push = body_valid && !st_full;
reg  st_ovf_reg;
wire m_ovf = (!rx_start && st_ovf_reg) || (body_valid && st_full);
wire d_full = (d_wr_reg - d_rd_reg) == DDEPTH[DW:0];
wire m_drop = msg_valid && (m_ovf || d_full);
wire [SW:0] m_prev_words = rx_start ? {(SW+1){1'b0}} : st_msg_words_reg;
wire [SW:0] m_words = m_prev_words + {{SW{1'b0}}, st_push};
wire [63:0] m_word0 = (m_prev_words == 0) ? body_data : st_word0_reg;
wire [63:0] m_word1 = (m_prev_words == 1) ? body_data : st_word1_reg;
wire [63:0] m_word2 = (m_prev_words == 2) ? body_data : st_word2_reg;
wire [64:0] m_rend = {1'b0, m_word0} + 65'd8;
wire m_rmw_in_range = m_word0[2:0] == 3'd0 && m_rend <= {33'd0, MEM_BYTES};
wire m_good = msg_valid && !msg_bad_field && !msg_bad_length && !m_drop;
wire [64:0] m_wend = {1'b0, m_word0} + {49'd0, msg_len};
wire m_w_in_range = m_word0[2:0] == 3'd0 && msg_len[2:0] == 3'd0 && m_wend <= {33'd0, MEM_BYTES};
wire [15:0] rr_rest = t_total[rr_idx] - t_done[rr_idx];
wire rr_ok = rr_hit && msg_len <= rr_rest && (msg_len[2:0] == 3'd0 || t_rmw[rr_idx]);
wire rr_null = msg_len == 0 && msg_last;
// an implicit grant (RREQ) or a received /G/ enters the grant queue this cycle
wire rreq_take = m_good && msg_kind == MSG_KIND_RREQ && !rs_dup && rs_free_ok && !g_full;
wire gctl_take = ctl_valid && ctl_grant && !ctl_bad_field && !g_full;

// ---------------------------------------------------------------- RMW execution
// The drain executes an RMWREQ when no decoder event needs the serve table or the grant
// queue this cycle (so neither is written twice).
wire rmw_go = !msg_valid && !ctl_valid && !g_full && rs_free_ok;
wire [DW-1:0] dh = d_rd_reg[DW-1:0];
wire [63:0] rmw_old = mem[d_base[dh]];
reg  [63:0] rmw_new;
reg  [63:0] rmw_result;

// {new word, result} of an atomic operation on the old word
function automatic [127:0] rmw_apply(input [3:0] op, input [63:0] old, input [63:0] a, input [63:0] b);
    case (op)
        RMW_OP_CAS: rmw_apply = {(old == a) ? b : old, 63'd0, old == a};
        RMW_OP_FAA: rmw_apply = {old + a, old};
        RMW_OP_SWAP: rmw_apply = {a, old};
        default: rmw_apply = {64'd1, 63'd0, old != 64'd0};
    endcase
endfunction

always @* begin
    {rmw_new, rmw_result} = rmw_apply(d_rmw_op[dh], rmw_old, d_data[dh], d_opb[dh]);
end

// An RMWREQ whose word no pending write or RMW touches (none queued for the drain before it,
// none being drained) is executed as it commits, like the model's, which applies a message
// the moment it is complete: it does not wait for the drain to write the words of earlier
// messages into memory. Otherwise it waits its turn in the drain, so order on one word holds.
wire [AW-1:0] rn_addr = m_word0[AW+2:3];
reg           rmw_conflict;

always @* begin : rmw_order
    integer k;
    reg [DW-1:0] i;
    reg [DW:0] pending;
    pending = d_wr_reg - d_rd_reg;
    // (a write's staged words start with its address word, d_skip / dr_skip_reg: not data)
    rmw_conflict = dr_active_reg && dr_op_reg && 32'(rn_addr) >= 32'(dr_ptr_reg) &&
                   32'(rn_addr) < 32'(dr_ptr_reg) + 32'(dr_left_reg) - 32'(dr_skip_reg);
    for (k = 0; k < DDEPTH; k = k + 1) begin
        i = d_rd_reg[DW-1:0] + k[DW-1:0];
        if (k < 32'(pending)) begin
            if (d_op[i] == 2'd1 && 32'(rn_addr) >= 32'(d_base[i]) &&
                    32'(rn_addr) < 32'(d_base[i]) + 32'(d_words[i]) - 32'(d_skip[i])) begin
                rmw_conflict = 1'b1;
            end
            if (d_op[i] == 2'd2 && d_base[i] == rn_addr) begin
                rmw_conflict = 1'b1;
            end
        end
    end
end

wire rmw_now = m_good && msg_kind == MSG_KIND_RMWREQ && !rs_dup && rs_free_ok && !g_full &&
               !ctl_valid && !rmw_conflict;
wire [127:0] rn_out = rmw_apply(msg_op, mem[rn_addr], m_word1, m_word2);

// ---------------------------------------------------------------- TX job selection
wire tx_idle = !tx_body_reg && enc_start_ready;
wire [UW:0] free_blocks = UDEPTH[UW:0] - u_reserved_reg;
// The next job needs room for its own unit only (a NULL response or an /N/ one block), so a
// short unit does not wait behind a long one still leaving the buffer.
wire [15:0] g_blocks = (gh_kind == MSG_KIND_WREQ && gw_hit) ? 16'd2 + {3'd0, gw_len[15:3]} :
                       (gh_kind == MSG_KIND_RRES && gs_hit) ? ((gs_len == 0) ? 16'd1 : 16'd1 + {3'd0, gs_len[15:3]}) :
                       16'd0;
// a message leaves the queue (its id busy: the id is skipped instead)
wire             do_pick_skip = pick_valid && pick_id_busy;
wire             do_issue = pick_valid && !pick_id_busy && !im_full;
wire [DST_W-1:0] pk_dst = pq_dst;
wire [7:0]       pk_id = next_id[pk_dst];
// the next message to send: the oldest issued one, or the one leaving the queue this cycle
wire             m_cand = !im_empty || do_issue;
wire             jm_write = im_empty ? pq_write : t_write[im_head];
wire             jm_rmw = im_empty ? pq_rmw : t_rmw[im_head];
wire [3:0]       jm_op = im_empty ? pq_op : t_op[im_head];
wire [63:0]      jm_opa = im_empty ? pq_opa : t_opa[im_head];
wire [63:0]      jm_opb = im_empty ? pq_opb : t_opb[im_head];
wire [DST_W-1:0] jm_dst = im_empty ? pk_dst : t_dst[im_head];
wire [7:0]       jm_id = im_empty ? pk_id : t_id[im_head];
wire [63:0]      jm_addr = im_empty ? pq_addr : t_addr[im_head];
wire [15:0]      jm_len = im_empty ? pq_len : t_total[im_head];   // RMW: the result bytes
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0]      jm_left = (im_empty ? g_now_reg : im_time[im_rd_reg[IW-1:0]]) - g_at[g_sel];
/* verilator lint_on UNUSEDSIGNAL */
// (when the selected entry is dead too, no job starts: it is dropped as the head next cycle)
wire             sel_grant = g_sel_due && !(m_cand && jm_left[15]);
wire [15:0] p_blocks = jm_write ? 16'd1 : 16'd2 + (jm_rmw ? {14'd0, rmw_words(jm_op)} : 16'd0);
wire [15:0] next_blocks = sel_grant ? g_blocks : p_blocks;
wire space_ok = {{(16-UW-1){1'b0}}, free_blocks} >= next_blocks && !ul_full;

reg        do_grant_w, do_grant_s, do_grant_drop, do_pick_read, do_pick_write;

always @* begin
    do_grant_w = 1'b0;
    do_grant_s = 1'b0;
    do_grant_drop = g_head_dead;
    do_pick_read = 1'b0;
    do_pick_write = 1'b0;
    if (tx_idle && space_ok) begin
        if (sel_grant) begin
            if (gh_kind == MSG_KIND_WREQ && gw_hit) begin
                do_grant_w = 1'b1;
            end else if (gh_kind == MSG_KIND_RRES && gs_hit) begin
                do_grant_s = 1'b1;
            end
        end else if (m_cand) begin
            if (!jm_write) begin
                do_pick_read = 1'b1;
            end else begin
                // the /N/ goes straight into the unit buffer (after the encoder's last block
                // when that is written in the same cycle)
                do_pick_write = 1'b1;
            end
        end
    end
end

wire [63:0]      n_block = {16'd0, jm_len, jm_id, {{(16-DST_W){1'b0}}, jm_dst}, BT_N};

always @* begin
    enc_start = 1'b0;
    enc_op = 4'd0;
    enc_kind = MSG_KIND_RREQ;
    enc_last = 1'b1;
    enc_peer = 0;
    enc_id = 0;
    enc_len = 0;
    if (do_grant_w) begin
        enc_start = 1'b1;
        enc_kind = MSG_KIND_WREQ;
        enc_last = t_done[gw_idx] + gw_len == t_total[gw_idx];
        enc_peer = gh_peer;
        enc_id = gh_id;
        enc_len = gw_len;
    end else if (do_grant_s) begin
        enc_start = 1'b1;
        enc_kind = MSG_KIND_RRES;
        enc_last = s_sent[gs_idx] + gs_step == s_total[gs_idx];
        enc_peer = gh_peer;
        enc_id = gh_id;
        enc_len = gs_len;
    end else if (do_pick_read) begin
        enc_start = 1'b1;
        enc_kind = jm_rmw ? MSG_KIND_RMWREQ : MSG_KIND_RREQ;
        enc_op = jm_rmw ? jm_op : 4'd0;
        enc_last = 1'b1;
        enc_peer = {{(16-DST_W){1'b0}}, jm_dst};
        enc_id = jm_id;
        enc_len = (jm_rmw && im_empty) ? rmw_resp(jm_op) : jm_len;
    end
end

// blocks of the unit a job adds
wire [15:0] job_blocks = do_grant_w ? 16'd2 + {3'd0, gw_len[15:3]} :
                         do_grant_s ? ((gs_len == 0) ? 16'd1 : 16'd1 + {3'd0, gs_len[15:3]}) :
                         do_pick_read ? 16'd2 + (jm_rmw ? {14'd0, rmw_words(jm_op)} : 16'd0) :
                         16'd1;
wire job_unit = do_grant_w || do_grant_s || do_pick_read || do_pick_write;

// An RREQ/RMWREQ gives the encoder its address word with start, so its /MS/ is on the
// encoder's output one cycle later and goes to the TX mux without the unit buffer's cycle.
// Every job gives the encoder its first body word with start (RREQ/RMWREQ and WREQ their
// address, RRES its first data word or RMW result; an empty RRES none), so its /MS/ is made
// in the next cycle and a job started in the cycle after the previous unit's last block
// continues it without a gap, as the model's TX FIFO sends units back to back.
wire [63:0] gw_addr_word = t_addr[gw_idx] + {48'd0, t_done[gw_idx]};
wire [AW-1:0] gs_ptr = s_addr[gs_idx] + AW'(16'(s_sent[gs_idx] >> 3));
assign enc_body_data = do_pick_read ? jm_addr :
                       do_grant_w ? gw_addr_word :
                       do_grant_s ? (s_rmw[gs_idx] ? s_result[gs_idx] : mem[gs_ptr]) :
                       tx_addr_first_reg ? tx_addr_word_reg :
                       tx_regs_reg ? (tx_ridx_reg ? tx_w2_reg : tx_w1_reg) : mem[tx_ptr_reg];
assign enc_body_valid = do_pick_read || do_grant_w || do_grant_s || (tx_body_reg && tx_words_reg != 0);
assign u_bypass = u_fast_reg && u_count == 0 && enc_out_valid && (u_in_unit_reg || !ul_empty);

// where an /N/ goes in the unit buffer: after the encoder's block written in the same cycle
wire [UW-1:0] u_wr_next = u_wr_reg[UW-1:0] + 1'b1;
wire [UW-1:0] u_n_at = enc_out_valid ? u_wr_next : u_wr_reg[UW-1:0];

// ---------------------------------------------------------------- sequential
always_ff @(posedge clk) begin : seq
    integer i;
    reg [QW-1:0] qc;
    wcomp_valid <= 1'b0;
    rcomp_valid <= 1'b0;
    wapp_valid <= 1'b0;

    // local memory: external port
    if (ext_en) begin
        if (ext_we) begin
            mem[ext_addr] <= ext_wdata;
        end
        ext_rdata <= mem[ext_addr];
    end

    // message queue: remove the picked entry, append the new request
    qc = q_cnt_reg;
    if (do_issue && !q_bypass) begin
        for (i = 0; i < QDEPTH - 1; i = i + 1) begin
            if (i >= 32'(pick_idx)) begin
                q_write[i] <= q_write[i+1];
                q_rmw[i] <= q_rmw[i+1];
                q_op[i] <= q_op[i+1];
                q_opa[i] <= q_opa[i+1];
                q_opb[i] <= q_opb[i+1];
                q_dst[i] <= q_dst[i+1];
                q_addr[i] <= q_addr[i+1];
                q_len[i] <= q_len[i+1];
                q_local[i] <= q_local[i+1];
                q_tag[i] <= q_tag[i+1];
            end
        end
        qc = qc - 1;
    end
    if (req_valid && req_ready && !(q_bypass && do_issue)) begin
        if (req_ok) begin
            q_write[qc[QI-1:0]] <= req_write && !req_rmw;
            q_rmw[qc[QI-1:0]] <= req_rmw;
            q_op[qc[QI-1:0]] <= req_op;
            q_opa[qc[QI-1:0]] <= req_opa;
            q_opb[qc[QI-1:0]] <= req_opb;
            q_dst[qc[QI-1:0]] <= req_dst[DST_W-1:0];
            q_addr[qc[QI-1:0]] <= req_addr;
            q_len[qc[QI-1:0]] <= req_len;
            q_local[qc[QI-1:0]] <= req_local[AW+2:3];
            q_tag[qc[QI-1:0]] <= req_tag;
            qc = qc + 1;
        end else begin
            cnt_bad_request <= cnt_bad_request + 1;
        end
    end
    q_cnt_reg <= qc;

    if (do_pick_skip) begin
        next_id[pk_dst] <= pk_id + 8'd1;
    end
    if (do_issue) begin
        next_id[pk_dst] <= pk_id + 8'd1;
        t_op[free_slot] <= pq_op;
        t_opa[free_slot] <= pq_opa;
        t_opb[free_slot] <= pq_opb;
        t_valid_reg[free_slot] <= 1'b1;
        t_write[free_slot] <= pq_write;
        t_rmw[free_slot] <= pq_rmw;
        t_dst[free_slot] <= pk_dst;
        t_id[free_slot] <= pk_id;
        t_addr[free_slot] <= pq_addr;
        t_local[free_slot] <= pq_local;
        t_total[free_slot] <= pq_rmw ? rmw_resp(pq_op) : pq_len;
        t_done[free_slot] <= 0;
        t_tag[free_slot] <= pq_tag;
    end

    // grant queue
    // (a dead head is dropped beside the job of the entry behind it)
    g_rd_reg <= g_rd_reg + {{GW{1'b0}}, do_grant_drop} + {{GW{1'b0}}, do_grant_w || do_grant_s};
    if (do_grant_drop) begin
        cnt_unknown_grant <= cnt_unknown_grant + 1;
    end
    g_now_reg <= g_now_reg + 16'd1;
    if (gctl_take || rreq_take) begin
        g_at[g_wr_reg[GW-1:0]] <= g_now_reg + 16'(GQ_LAT);
    end
    if (gctl_take) begin
        g_kind[g_wr_reg[GW-1:0]] <= ctl_kind;
        g_peer[g_wr_reg[GW-1:0]] <= ctl_peer;
        g_id[g_wr_reg[GW-1:0]] <= ctl_id;
        g_len[g_wr_reg[GW-1:0]] <= ctl_len;
        g_wr_reg <= g_wr_reg + 1;
    end else if (rreq_take) begin
        g_kind[g_wr_reg[GW-1:0]] <= MSG_KIND_RRES;
        g_peer[g_wr_reg[GW-1:0]] <= msg_peer;
        g_id[g_wr_reg[GW-1:0]] <= msg_id;
        g_len[g_wr_reg[GW-1:0]] <= (msg_len < CHUNK[15:0]) ? msg_len : CHUNK[15:0];
        g_wr_reg <= g_wr_reg + 1;
    end else if (rmw_now) begin
        g_at[g_wr_reg[GW-1:0]] <= g_now_reg + 16'(GQ_LAT);
        g_kind[g_wr_reg[GW-1:0]] <= MSG_KIND_RRES;
        g_peer[g_wr_reg[GW-1:0]] <= msg_peer;
        g_id[g_wr_reg[GW-1:0]] <= msg_id;
        g_len[g_wr_reg[GW-1:0]] <= rmw_resp(msg_op);
        g_wr_reg <= g_wr_reg + 1;
    end
    if (ctl_valid) begin
        if (!ctl_grant) begin
            cnt_unexpected <= cnt_unexpected + 1;
        end else if (ctl_bad_field || g_full) begin
            cnt_unknown_grant <= cnt_unknown_grant + 1;
        end
    end

    // TX jobs
    if (do_grant_w) begin
        // the address word went to the encoder with start; the data words follow
        tx_body_reg <= 1'b1;
        tx_addr_first_reg <= 1'b0;
        tx_regs_reg <= 1'b0;
        tx_ptr_reg <= t_local[gw_idx] + AW'(16'(t_done[gw_idx] >> 3));
        tx_words_reg <= gw_len[15:3];
        t_done[gw_idx] <= t_done[gw_idx] + gw_len;
        if (t_done[gw_idx] + gw_len == t_total[gw_idx]) begin
            t_valid_reg[gw_idx] <= 1'b0;
        end
    end
    if (do_grant_s) begin
        // the first word (or the RMW result) went to the encoder with start
        tx_body_reg <= !s_rmw[gs_idx] && gs_len > 16'd8;
        tx_addr_first_reg <= 1'b0;
        tx_regs_reg <= 1'b0;
        tx_ptr_reg <= gs_ptr + 1;
        tx_words_reg <= (s_rmw[gs_idx] || gs_len == 0) ? 13'd0 : 13'((gs_len + 16'd7) >> 3) - 13'd1;
        s_sent[gs_idx] <= s_sent[gs_idx] + gs_step;
        if (s_sent[gs_idx] + gs_step == s_total[gs_idx]) begin
            s_valid_reg[gs_idx] <= 1'b0;
        end
    end
    if (do_pick_read) begin
        // the address word went to the encoder with start; the RMW operands follow
        tx_body_reg <= jm_rmw && rmw_words(jm_op) != 2'd0;
        tx_addr_first_reg <= 1'b0;
        tx_addr_word_reg <= jm_addr;
        tx_regs_reg <= 1'b1;
        tx_ridx_reg <= 1'b0;
        tx_w1_reg <= jm_opa;
        tx_w2_reg <= jm_opb;
        tx_words_reg <= jm_rmw ? {11'd0, rmw_words(jm_op)} : 13'd0;
    end

    // issued messages: in when they leave the queue (unless sent at once), out when sent
    if (do_issue && !(im_empty && (do_pick_read || do_pick_write))) begin
        im_slot[im_wr_reg[IW-1:0]] <= free_slot;
        im_time[im_wr_reg[IW-1:0]] <= g_now_reg;
        im_wr_reg <= im_wr_reg + 1;
    end
    if (!im_empty && (do_pick_read || do_pick_write)) begin
        im_rd_reg <= im_rd_reg + 1;
    end
    if (tx_body_reg) begin
        if (enc_body_valid && enc_body_ready) begin
            tx_words_reg <= tx_words_reg - 1;
            if (tx_addr_first_reg) begin
                tx_addr_first_reg <= 1'b0;
            end else if (tx_regs_reg) begin
                tx_ridx_reg <= 1'b1;
            end else begin
                tx_ptr_reg <= tx_ptr_reg + 1;
            end
        end
        if (tx_words_reg == 0 || (tx_words_reg == 1 && enc_body_valid && enc_body_ready)) begin
            tx_body_reg <= 1'b0;
        end
    end

    // unit buffer
    if (job_unit) begin
        ul_mem[ul_wr_reg[LW-1:0]] <= job_blocks;
        ul_comp[ul_wr_reg[LW-1:0]] <= do_grant_w && t_done[gw_idx] + gw_len == t_total[gw_idx];
        ul_tag[ul_wr_reg[LW-1:0]] <= t_tag[gw_idx];
        ul_wr_reg <= ul_wr_reg + 1;
    end
    u_reserved_reg <= u_reserved_reg + (job_unit ? job_blocks[UW:0] : {(UW+1){1'b0}}) - {{UW{1'b0}}, u_pop};
    if (do_pick_read || do_grant_w || do_grant_s) begin
        u_fast_reg <= 1'b1;
    end else if (enc_out_valid && enc_out_last) begin
        u_fast_reg <= 1'b0;
    end
    if (enc_out_valid) begin
        u_mem[u_wr_reg[UW-1:0]] <= {enc_out_hdr, enc_out_data};
    end
    if (do_pick_write) begin
        u_mem[u_n_at] <= {SYNC_CTRL, n_block};
    end
    u_wr_reg <= u_wr_reg + {{UW{1'b0}}, enc_out_valid} + {{UW{1'b0}}, do_pick_write};
    if (u_pop) begin
        u_rd_reg <= u_rd_reg + 1;
        if (!u_in_unit_reg) begin
            // a write completes when its last chunk starts leaving (as in the model)
            wcomp_valid <= ul_comp[ul_rd_reg[LW-1:0]];
            wcomp_tag <= ul_tag[ul_rd_reg[LW-1:0]];
            ul_rd_reg <= ul_rd_reg + 1;
            u_in_unit_reg <= ul_head != 16'd1;
            u_left_reg <= ul_head - 16'd1;
        end else begin
            u_left_reg <= u_left_reg - 16'd1;
            u_in_unit_reg <= u_left_reg != 16'd1;
        end
    end

    // response cut-through
    if (rx_start) begin
        ct_active_reg <= ct_start;
        ct_ptr_reg <= t_local[ct_idx] + AW'(16'(t_done[ct_idx] >> 3));
    end else if (msg_valid) begin
        ct_active_reg <= 1'b0;
    end
    if (ct_active_reg && body_valid && !rx_start) begin
        mem[ct_ptr_reg] <= body_data;
        ct_ptr_reg <= ct_ptr_reg + 1;
    end

    // RX staging: a new message rolls back uncommitted words of one cut short
    if (rx_start || msg_valid) begin
        st_ovf_reg <= 1'b0;
    end else if (body_valid && st_full) begin
        st_ovf_reg <= 1'b1;
    end
    if (rx_start) begin
        if (st_push) begin
            st_mem[st_commit_reg[SW-1:0]] <= body_data;
            st_wr_reg <= st_commit_reg + 1;
            st_msg_words_reg <= 1;
            st_word0_reg <= body_data;
        end else begin
            st_wr_reg <= st_commit_reg;
            st_msg_words_reg <= 0;
        end
    end else if (st_push) begin
        st_mem[st_wr_reg[SW-1:0]] <= body_data;
        st_wr_reg <= st_wr_reg + 1;
        st_msg_words_reg <= st_msg_words_reg + 1;
        if (st_msg_words_reg == 0) begin
            st_word0_reg <= body_data;
        end
        if (st_msg_words_reg == 1) begin
            st_word1_reg <= body_data;
        end
        if (st_msg_words_reg == 2) begin
            st_word2_reg <= body_data;
        end
    end

    if (m_drop) begin
        st_wr_reg <= st_commit_reg;
        st_msg_words_reg <= 0;
        cnt_bad_message <= cnt_bad_message + 1;
    end else if (msg_valid) begin
        // commit this message's words with a descriptor saying what to do with them
        st_commit_reg <= (rx_start ? st_commit_reg : st_wr_reg) + {{SW{1'b0}}, st_push};
        st_msg_words_reg <= 0;
        d_words[d_wr_reg[DW-1:0]] <= m_words;
        d_op[d_wr_reg[DW-1:0]] <= 2'd0;
        d_skip[d_wr_reg[DW-1:0]] <= 1'b0;
        d_comp[d_wr_reg[DW-1:0]] <= 1'b0;
        d_tag[d_wr_reg[DW-1:0]] <= 0;
        d_ok[d_wr_reg[DW-1:0]] <= 1'b0;
        d_data[d_wr_reg[DW-1:0]] <= m_word1;
        d_opb[d_wr_reg[DW-1:0]] <= m_word2;
        d_rmw_op[d_wr_reg[DW-1:0]] <= msg_op;
        d_peer[d_wr_reg[DW-1:0]] <= msg_peer;
        d_id[d_wr_reg[DW-1:0]] <= msg_id;
        d_in_range[d_wr_reg[DW-1:0]] <= m_rmw_in_range;
        d_wapp[d_wr_reg[DW-1:0]] <= 1'b0;
        d_last[d_wr_reg[DW-1:0]] <= msg_last;
        d_base[d_wr_reg[DW-1:0]] <= m_word0[AW+2:3];
        d_wr_reg <= d_wr_reg + 1;
        if (!m_good) begin
            cnt_bad_message <= cnt_bad_message + 1;
        end else begin
            case (msg_kind)
                MSG_KIND_RREQ: begin
                    if (rs_dup) begin
                        cnt_unexpected <= cnt_unexpected + 1;
                    end else if (!rs_free_ok || g_full) begin
                        cnt_bad_message <= cnt_bad_message + 1;
                    end else begin
                        s_valid_reg[rs_free] <= 1'b1;
                        s_peer[rs_free] <= msg_peer;
                        s_id[rs_free] <= msg_id;
                        s_addr[rs_free] <= m_word0[AW+2:3];
                        s_sent[rs_free] <= 0;
                        s_rmw[rs_free] <= 1'b0;
                        s_total[rs_free] <= msg_len;
                        s_null[rs_free] <= !m_w_in_range;
                        if (!m_w_in_range) begin
                            // answered with a NULL response
                            cnt_bad_address <= cnt_bad_address + 1;
                        end
                    end
                end
                MSG_KIND_WREQ: begin
                    if (m_w_in_range) begin
                        d_op[d_wr_reg[DW-1:0]] <= 2'd1;
                        d_skip[d_wr_reg[DW-1:0]] <= 1'b1;
                        d_base[d_wr_reg[DW-1:0]] <= m_word0[AW+2:3];
                        d_wapp[d_wr_reg[DW-1:0]] <= 1'b1;
                    end else begin
                        cnt_bad_address <= cnt_bad_address + 1;
                    end
                end
                MSG_KIND_RRES: begin
                    if (rr_ok) begin
                        // the words are in memory already (cut-through); the staged copy is
                        // discarded by the drain
                        t_done[rr_idx] <= t_done[rr_idx] + msg_len;
                        if (msg_len == rr_rest || rr_null) begin
                            t_valid_reg[rr_idx] <= 1'b0;
                            rcomp_valid <= 1'b1;
                            rcomp_tag <= t_tag[rr_idx];
                            rcomp_ok <= !rr_null;
                            rcomp_data <= (msg_len == 0) ? 64'd0 : m_word0;
                        end
                    end else begin
                        cnt_unknown_response <= cnt_unknown_response + 1;
                    end
                end
                default: begin
                    // RMWREQ: executed now, or by the drain in order with the writes before it
                    if (rs_dup) begin
                        cnt_unexpected <= cnt_unexpected + 1;
                    end else if (rmw_now) begin
                        if (m_rmw_in_range) begin
                            mem[rn_addr] <= rn_out[127:64];
                        end
                        s_valid_reg[rs_free] <= 1'b1;
                        s_peer[rs_free] <= msg_peer;
                        s_id[rs_free] <= msg_id;
                        s_sent[rs_free] <= 0;
                        s_rmw[rs_free] <= 1'b1;
                        s_null[rs_free] <= 1'b0;
                        s_result[rs_free] <= rn_out[63:0];
                        s_total[rs_free] <= m_rmw_in_range ? rmw_resp(msg_op) : 16'd0;
                        if (!m_rmw_in_range) begin
                            cnt_bad_address <= cnt_bad_address + 1;
                        end
                    end else begin
                        d_op[d_wr_reg[DW-1:0]] <= 2'd2;
                        if (!m_rmw_in_range) begin
                            cnt_bad_address <= cnt_bad_address + 1;
                        end
                    end
                end
            endcase
        end
    end

    // drain: committed words into memory, one per cycle (a message takes max(words, 1) + 1
    // cycles, no more than it took to arrive)
    if (dr_active_reg) begin
        if (dr_left_reg != 0) begin
            if (dr_op_reg && !dr_skip_reg) begin
                mem[dr_ptr_reg] <= st_mem[st_rd_reg[SW-1:0]];
                dr_ptr_reg <= dr_ptr_reg + 1;
            end
            dr_skip_reg <= 1'b0;
            st_rd_reg <= st_rd_reg + 1;
            dr_left_reg <= dr_left_reg - 1;
        end
        if (dr_left_reg <= 1) begin
            dr_active_reg <= 1'b0;
            if (dr_comp_reg) begin
                rcomp_valid <= 1'b1;
                rcomp_tag <= dr_tag_reg;
                rcomp_ok <= dr_ok_reg;
                rcomp_data <= dr_data_reg;
            end
            if (dr_wapp_reg) begin
                wapp_valid <= 1'b1;
                wapp_addr <= dr_base_reg;
                wapp_words <= 16'(dr_words_reg);
                wapp_peer <= dr_peer_reg;
                wapp_last <= dr_last_reg;
            end
        end
    end else if (d_wr_reg != d_rd_reg && d_op[d_rd_reg[DW-1:0]] == 2'd0) begin
        // a message whose staged words go nowhere (requests, responses already in memory,
        // atomics executed at commit): its words are dropped at once, so a run of short
        // messages does not fill the staging buffer or the descriptor FIFO
        st_rd_reg <= st_rd_reg + d_words[d_rd_reg[DW-1:0]];
        d_rd_reg <= d_rd_reg + 1;
    end else if (d_wr_reg != d_rd_reg && (d_op[d_rd_reg[DW-1:0]] != 2'd2 || rmw_go)) begin
        dr_active_reg <= 1'b1;
        if (d_op[d_rd_reg[DW-1:0]] == 2'd2) begin
            // the atomic step: read, modify, write one word; its result is the response
            if (d_in_range[d_rd_reg[DW-1:0]]) begin
                mem[d_base[d_rd_reg[DW-1:0]]] <= rmw_new;
            end
            s_valid_reg[rs_free] <= 1'b1;
            s_peer[rs_free] <= d_peer[d_rd_reg[DW-1:0]];
            s_id[rs_free] <= d_id[d_rd_reg[DW-1:0]];
            s_sent[rs_free] <= 0;
            s_rmw[rs_free] <= 1'b1;
            s_null[rs_free] <= 1'b0;
            s_result[rs_free] <= rmw_result;
            s_total[rs_free] <= d_in_range[d_rd_reg[DW-1:0]] ? rmw_resp(d_rmw_op[d_rd_reg[DW-1:0]]) : 16'd0;
            g_kind[g_wr_reg[GW-1:0]] <= MSG_KIND_RRES;
            // one cycle after the commit that queues an RREQ's implicit grant
            g_at[g_wr_reg[GW-1:0]] <= g_now_reg + 16'(GQ_LAT) - 16'd1;
            g_peer[g_wr_reg[GW-1:0]] <= d_peer[d_rd_reg[DW-1:0]];
            g_id[g_wr_reg[GW-1:0]] <= d_id[d_rd_reg[DW-1:0]];
            g_len[g_wr_reg[GW-1:0]] <= rmw_resp(d_rmw_op[d_rd_reg[DW-1:0]]);
            g_wr_reg <= g_wr_reg + 1;
        end
        dr_left_reg <= d_words[d_rd_reg[DW-1:0]];
        dr_skip_reg <= d_skip[d_rd_reg[DW-1:0]];
        dr_ptr_reg <= d_base[d_rd_reg[DW-1:0]];
        dr_op_reg <= d_op[d_rd_reg[DW-1:0]] == 2'd1;
        dr_comp_reg <= d_comp[d_rd_reg[DW-1:0]];
        dr_tag_reg <= d_tag[d_rd_reg[DW-1:0]];
        dr_ok_reg <= d_ok[d_rd_reg[DW-1:0]];
        dr_data_reg <= d_data[d_rd_reg[DW-1:0]];
        dr_wapp_reg <= d_wapp[d_rd_reg[DW-1:0]] && d_op[d_rd_reg[DW-1:0]] == 2'd1;
        dr_last_reg <= d_last[d_rd_reg[DW-1:0]];
        dr_base_reg <= d_base[d_rd_reg[DW-1:0]];
        dr_peer_reg <= d_peer[d_rd_reg[DW-1:0]];
        // the WREQ's first word is its address, not data
        dr_words_reg <= d_words[d_rd_reg[DW-1:0]] - 1;
        d_rd_reg <= d_rd_reg + 1;
    end

    if (enc_out_valid && enc_out_error) begin
        cnt_bad_message <= cnt_bad_message + 1;
    end

    if (rst) begin
        q_cnt_reg <= 0;
        t_valid_reg <= 0;
        s_valid_reg <= 0;
        for (i = 0; i < DSTS; i = i + 1) begin
            next_id[i] <= 8'd0;
        end
        g_wr_reg <= 0;
        im_wr_reg <= 0;
        im_rd_reg <= 0;
        g_rd_reg <= 0;
        g_now_reg <= 0;
        u_wr_reg <= 0;
        u_rd_reg <= 0;
        u_reserved_reg <= 0;
        ul_wr_reg <= 0;
        ul_rd_reg <= 0;
        u_in_unit_reg <= 1'b0;
        u_fast_reg <= 1'b0;
        ct_active_reg <= 1'b0;
        u_left_reg <= 0;
        st_wr_reg <= 0;
        st_commit_reg <= 0;
        st_rd_reg <= 0;
        st_msg_words_reg <= 0;
        st_ovf_reg <= 1'b0;
        d_wr_reg <= 0;
        d_rd_reg <= 0;
        dr_active_reg <= 1'b0;
        tx_body_reg <= 1'b0;
        tx_addr_first_reg <= 1'b0;
        tx_words_reg <= 0;
        wcomp_valid <= 1'b0;
        rcomp_valid <= 1'b0;
        wapp_valid <= 1'b0;
        cnt_unknown_grant <= 0;
        cnt_unknown_response <= 0;
        cnt_unexpected <= 0;
        cnt_bad_address <= 0;
        cnt_bad_request <= 0;
        cnt_bad_message <= 0;
    end
end

endmodule

`resetall
