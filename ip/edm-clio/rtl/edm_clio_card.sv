// edm_clio_card: the U200 card's Clio-to-EDM translator: H2C Clio request packets -> EDM requests of an edm_host_top, answers -> C2H Clio packets.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The mapping of host-sdk/wire/src/edm_clio.rs, as edm-clio's model
// (ClioFabric) runs it for one card sending to one memory node (dst):
//   edm_clio_req    takes each H2C packet into a free slot (one of EC_SLOTS),
//                   stages its record in the host's memory and posts the
//                   record's WREQ to the node's inbox, then a READ's RREQ of
//                   its answer chain (sized by the read, edm_clio_xlate);
//   edm_clio_chain  turns each answer into C2H packets: a READ's answer chain
//                   when its RREQ completes (rcomp, tag EC_SLOTS + slot), or the
//                   answer record the node wrote into this card's inbox slot
//                   (inbox_addr(dst, slot), seen on wapp_* when its last chunk
//                   is in memory);
//   here            the answers' order (lowest slot first), freeing slots (an
//                   answer taken, a NULL RRES, or TIMEOUT cycles without an
//                   answer: a dead link never wedges the card), reading a
//                   READ's answer again when an older chain came back (the
//                   node had not answered yet when the RREQ reached it) after
//                   a bounded back-off (REREAD_BACKOFF, doubling), and
//                   counters.
// Host memory layout (64-bit words): the inbox at 0 (EC_INBOX_BASE, written by
// memory nodes), the slots' staging records at STAGE_WORD, their READ answers
// at ANSWER_WORD (8192 words a slot). The host's ext port is shared: the
// request stage's writes first, the return stage reads otherwise.
// A refused packet (edm_clio_req) is counted (cnt_refused) and, unless it is
// shorter than a Clio header, answered here as edm-clio's model answers it
// (clio_wire::edm_clio::emit_refusal): a header-only Clio answer on the C2H
// stream, between the return stage's frames, with status TOO_LARGE (a READ past
// EC_MAX_READ, a packet past a record) or NACK/UNSUPPORTED (no request opcode),
// the request's ids echoed and the CRC32C computed a word per cycle. The H2C
// stream is held while such an answer is pending (it reads the request stage's
// copy of the header).
// ready: out of reset (STATUS.READY of the card).
module edm_clio_card #(
    parameter AW = 18,
    parameter [AW-1:0] STAGE_WORD = AW'(65536),
    parameter [AW-1:0] ANSWER_WORD = AW'(131072),
    parameter [31:0] TIMEOUT = 32'd2000000,
    // A READ whose RREQ found an older chain reads again after REREAD_BACKOFF
    // cycles, doubling with each re-read of the request up to REREAD_BACKOFF_MAX
    // (edm-clio's ClioFabricConfig::reread_backoff, _max; 0: at once).
    parameter [15:0] REREAD_BACKOFF = 16'd64,
    parameter [15:0] REREAD_BACKOFF_MAX = 16'd1024
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [15:0]   node_id,
    input  wire [15:0]   dst,
    output reg           ready,

    input  wire [63:0]   s_axis_tdata,
    input  wire [7:0]    s_axis_tkeep,
    input  wire          s_axis_tvalid,
    input  wire          s_axis_tlast,
    output wire          s_axis_tready,

    output wire [63:0]   m_axis_tdata,
    output wire [7:0]    m_axis_tkeep,
    output wire          m_axis_tvalid,
    output wire          m_axis_tlast,
    input  wire          m_axis_tready,

    // edm_host_top requester, completions, applied writes, local memory port
    output wire          req_valid,
    input  wire          req_ready,
    output wire          req_write,
    output wire [15:0]   req_dst,
    output wire [63:0]   req_addr,
    output wire [15:0]   req_len,
    output wire [31:0]   req_local,
    output wire [15:0]   req_tag,
    input  wire          wcomp_valid,
    input  wire [15:0]   wcomp_tag,
    input  wire          rcomp_valid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]   rcomp_tag,     // only this card's tags (0 .. 2*EC_SLOTS-1) complete here
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire          rcomp_ok,
    input  wire          wapp_valid,
    input  wire [AW-1:0] wapp_addr,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]   wapp_words,    // a chunk: at most CHUNK / 8 words
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [15:0]   wapp_peer,
    input  wire          wapp_last,
    output wire          ext_en,
    output wire          ext_we,
    output wire [AW-1:0] ext_addr,
    output wire [63:0]   ext_wdata,
    input  wire [63:0]   ext_rdata,

    output reg  [31:0]   cnt_refused,
    output reg  [31:0]   cnt_timeouts,
    output reg  [31:0]   cnt_bad       // answers that did not parse, stray writes, NULL responses
);

import edm_pkg::*;

localparam [AW-1:0] INBOX_SLOT_WORDS = AW'(EC_INBOX_SLOT_BYTES / 8);
localparam [AW-1:0] ANSWER_SLOT_WORDS = AW'(EC_OUTBOX_SLOT_BYTES / 8);
localparam [AW-1:0] INBOX_WORDS = AW'(EC_INBOX_SLOT_BYTES / 8 * EC_SLOTS * 16);  // 16: clio_wire MAX_PEERS
localparam int NS = EC_SLOTS;
localparam int SB = $clog2(NS);    // slot index bits; a tag is {read, slot}

// lowest set bit of a slot mask (slot 0 if none)
function automatic [SB-1:0] lowest(input [NS-1:0] m);
    integer k;
    lowest = '0;
    for (k = NS - 1; k >= 0; k = k - 1) begin
        if (m[k]) lowest = SB'(k);
    end
endfunction

always_ff @(posedge clk) begin
    ready <= !rst;
end

// ---- request stage
wire          rq_tready;
assign s_axis_tready = rq_tready && !rf_pend_reg;
wire          rq_we;
wire [AW-1:0] rq_addr;
wire [63:0]   rq_wdata;
reg           free_valid;
reg  [SB-1:0] free_slot;
wire          refuse_valid;
wire [2:0]    refuse_code;
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0]   refuse_len;
wire [8*CLIO_HEADER_LEN-1:0] refuse_hdr;  // bytes 16..23 (va) and 40..55 (key, ack, crc) are not echoed
/* verilator lint_on UNUSEDSIGNAL */
reg           rf_pend_reg = 1'b0;         // a refusal answer to send: H2C held
wire [NS-1:0] slot_busy, slot_read;
wire [32*NS-1:0] slot_seq;
wire [16*NS-1:0] slot_demand;

edm_clio_req #(
    .AW(AW),
    .STAGE_WORD(STAGE_WORD),
    .ANSWER_WORD(ANSWER_WORD)
) req_inst (
    .clk(clk),
    .rst(rst),
    .node_id(node_id),
    .dst(dst),
    .s_axis_tdata(s_axis_tdata),
    .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tvalid(s_axis_tvalid && !rf_pend_reg),
    .s_axis_tlast(s_axis_tlast),
    .s_axis_tready(rq_tready),
    .mem_we(rq_we),
    .mem_addr(rq_addr),
    .mem_wdata(rq_wdata),
    .req_valid(req_valid),
    .req_ready(req_ready),
    .req_write(req_write),
    .req_dst(req_dst),
    .req_addr(req_addr),
    .req_len(req_len),
    .req_local(req_local),
    .req_tag(req_tag),
    .wcomp_valid(wcomp_valid),
    .wcomp_tag(wcomp_tag),
    .free_valid(free_valid),
    .free_slot(free_slot),
    .reread_valid(rr_go_reg != '0),
    .reread_slot(lowest(rr_go_reg)),
    .refuse_valid(refuse_valid),
    .refuse_code(refuse_code),
    .refuse_len(refuse_len),
    .refuse_hdr(refuse_hdr),
    .slot_busy(slot_busy),
    .slot_seq(slot_seq),
    .slot_read(slot_read),
    .slot_demand(slot_demand)
);

// ---- return stage
reg           ch_start;
reg           ch_record;
reg  [AW-1:0] ch_word;
reg  [16:0]   ch_bytes;
reg  [31:0]   ch_seq;
reg  [SB-1:0] ch_slot_reg = '0;
reg           ch_read_reg = 1'b0;   // it is a READ's answer chain
wire          ch_busy, ch_mem_en, ch_done, ch_ok, ch_frees;
wire [AW-1:0] ch_addr;
wire [63:0]   ch_tdata;
wire [7:0]    ch_tkeep;
wire          ch_tvalid, ch_tlast;
wire          rf_out;               // the C2H stream carries a refusal answer

edm_clio_chain #(
    .AW(AW)
) chain_inst (
    .clk(clk),
    .rst(rst),
    .start(ch_start),
    .start_record(ch_record),
    .start_word(ch_word),
    .start_bytes(ch_bytes),
    .start_seq(ch_seq),
    .busy(ch_busy),
    .mem_en(ch_mem_en),
    .mem_gnt(!rq_we),
    .mem_addr(ch_addr),
    .mem_rdata(ext_rdata),
    .m_axis_tdata(ch_tdata),
    .m_axis_tkeep(ch_tkeep),
    .m_axis_tvalid(ch_tvalid),
    .m_axis_tlast(ch_tlast),
    .m_axis_tready(m_axis_tready && !rf_out),
    .done(ch_done),
    .done_ok(ch_ok),
    .done_frees(ch_frees)
);

// ---- the card's own answer to a refused packet (clio_wire::edm_clio::emit_refusal)
localparam int HW = CLIO_HEADER_LEN / 8;    // words of a Clio header

// CRC32C (reflected, as host-sdk/wire/src/crc.rs) of one word, byte 0 first.
function automatic [31:0] crc_word(input [31:0] c, input [63:0] d);
    integer k;
    crc_word = c;
    for (k = 0; k < 64; k = k + 1) begin
        crc_word = (crc_word[0] ^ d[k]) ? ((crc_word >> 1) ^ CLIO_CRC32C_POLY_REFLECTED) : (crc_word >> 1);
    end
endfunction

reg [7:0]  rf_status_reg = 8'd0;
reg [2:0]  rf_idx_reg = 3'd0;       // word of the answer (CRC, then sending)
reg        rf_send_reg = 1'b0;      // the CRC is done: send
reg        rf_own_reg = 1'b0;       // the C2H stream is ours (until the last word)
reg        ch_mid_reg = 1'b0;       // the return stage is within a frame on C2H
reg [31:0] rf_crc_reg = 32'hffffffff;

wire [7:0] rf_req_op = refuse_hdr[15:8];
wire [7:0] rf_op = (rf_req_op >= 8'(CLIO_OP_FIRST) && rf_req_op <= 8'(CLIO_OP_LAST))
    ? (rf_req_op | 8'(CLIO_RESPONSE_BIT)) : 8'(CLIO_OP_NACK);
wire [31:0] rf_crc = ~rf_crc_reg;
// Word i of the answer (byte 0 in bits 7:0; fields big-endian); the CRC field is 0
// while the CRC is computed.
reg [63:0] rf_word;
always_comb begin
    case (rf_idx_reg)
        3'd0: rf_word = {refuse_hdr[63:32], rf_status_reg, 8'd0, rf_op, 8'(CLIO_VERSION)};  // pid echoed
        3'd1: rf_word = refuse_hdr[127:64];                         // req_id, retry_of
        3'd3: rf_word = {refuse_hdr[255:224], 32'd0};               // offset; total_len 0
        3'd4: rf_word = {refuse_hdr[319:272], 16'd0};               // session, epoch; payload_len 0
        3'd6: rf_word = rf_send_reg ? {rf_crc[7:0], rf_crc[15:8], rf_crc[23:16], rf_crc[31:24], 32'd0} : 64'd0;
        default: rf_word = 64'd0;                                   // va, key, ack
    endcase
end
// Between the return stage's frames, and never taking back a beat it already offers.
wire rf_go = rf_send_reg && !rf_own_reg && !ch_mid_reg && !ch_tvalid;
assign rf_out = rf_own_reg || rf_go;
assign m_axis_tdata = rf_out ? rf_word : ch_tdata;
assign m_axis_tkeep = rf_out ? 8'hff : ch_tkeep;
assign m_axis_tvalid = rf_out ? 1'b1 : ch_tvalid;
assign m_axis_tlast = rf_out ? rf_idx_reg == 3'(HW - 1) : ch_tlast;

always_ff @(posedge clk) begin
    if (ch_tvalid && m_axis_tready && !rf_out) begin
        ch_mid_reg <= !ch_tlast;
    end
    if (refuse_valid && refuse_code != 3'(REFUSE_SHORT)) begin
        rf_pend_reg <= 1'b1;
        rf_status_reg <= 8'(refuse_code == 3'(REFUSE_OPCODE) ? EC_STATUS_OPCODE : EC_STATUS_TOO_LARGE);
        rf_idx_reg <= 3'd0;
        rf_crc_reg <= 32'hffffffff;
    end else if (rf_pend_reg && !rf_send_reg) begin
        rf_crc_reg <= crc_word(rf_crc_reg, rf_word);
        rf_idx_reg <= (rf_idx_reg == 3'(HW - 1)) ? 3'd0 : rf_idx_reg + 3'd1;
        rf_send_reg <= rf_idx_reg == 3'(HW - 1);
    end else if (rf_out && m_axis_tready) begin
        rf_own_reg <= rf_idx_reg != 3'(HW - 1);
        rf_idx_reg <= rf_idx_reg + 3'd1;
        if (rf_idx_reg == 3'(HW - 1)) begin
            rf_pend_reg <= 1'b0;
            rf_send_reg <= 1'b0;
        end
    end else if (rf_go) begin
        rf_own_reg <= 1'b1;
    end
    if (rst) begin
        rf_pend_reg <= 1'b0;
        rf_send_reg <= 1'b0;
        rf_own_reg <= 1'b0;
        ch_mid_reg <= 1'b0;
        rf_idx_reg <= 3'd0;
    end
end

assign ext_en = rq_we || ch_mem_en;
assign ext_we = rq_we;
assign ext_addr = rq_we ? rq_addr : ch_addr;
assign ext_wdata = rq_wdata;

// ---- answers waiting for the return stage, per slot
reg [NS-1:0] rd_ans_reg = '0;     // a READ's RRES is in its answer area
reg [NS-1:0] rec_ans_reg = '0;    // the node's answer record is in the inbox
reg [12:0] acc_mem [0:NS-1];      // words of the inbox slot written since the last look
reg [NS-1:0] free_pend_reg = '0;
reg        ch_run_reg = 1'b0;     // the return stage works on ch_slot_reg
reg [31:0] age_mem [0:NS-1];
// Re-reads of a READ's answer after an older chain came back: waiting, due, the
// cycles left, and how many so far (the back-off doubles with each).
reg [NS-1:0] rr_wait_reg = '0;
reg [NS-1:0] rr_go_reg = '0;
reg [15:0]   rr_left_mem [0:NS-1];
reg [3:0]    rr_n_mem [0:NS-1];

// The wait before a re-read when n were made already: REREAD_BACKOFF << n, at most _MAX.
function automatic [15:0] backoff(input [3:0] n);
    reg [31:0] w;
    w = {16'd0, REREAD_BACKOFF} << n;
    backoff = (w > {16'd0, REREAD_BACKOFF_MAX}) ? REREAD_BACKOFF_MAX : w[15:0];
endfunction
wire stale = ch_done && ch_read_reg && !ch_frees;
reg [NS-1:0] busy_last_reg = '0;

wire [SB-1:0] rc_slot = rcomp_tag[SB-1:0];
wire       rc_mine = rcomp_valid && rcomp_tag[SB] && slot_busy[rc_slot];

// An applied write into the inbox: whose slot.
wire [AW-1:0] wa_idx = wapp_addr / INBOX_SLOT_WORDS;     // peer * EC_SLOTS + slot
wire [SB-1:0] wa_slot = wa_idx[SB-1:0];
wire          wa_inbox = wapp_addr < INBOX_WORDS;
wire          wa_mine = wapp_valid && wa_inbox && wapp_peer == dst && wa_idx[AW-1:SB] == (AW-SB)'(dst)
                        && slot_busy[wa_slot] && !slot_read[wa_slot];

wire [NS-1:0] ans = (rd_ans_reg | rec_ans_reg) & slot_busy & ~free_pend_reg;
wire [SB-1:0] ans_slot = lowest(ans);
wire       ans_go = ans != '0 && !ch_busy && !ch_run_reg;

always_comb begin
    ch_start = ans_go;
    ch_record = !rd_ans_reg[ans_slot];
    ch_seq = slot_seq[32*ans_slot +: 32];
    if (rd_ans_reg[ans_slot]) begin
        ch_word = ANSWER_WORD + AW'(ans_slot) * ANSWER_SLOT_WORDS;
        ch_bytes = {1'b0, slot_demand[16*ans_slot +: 16]};
    end else begin
        ch_word = (AW'(dst) * AW'(EC_SLOTS) + AW'(ans_slot)) * INBOX_SLOT_WORDS;
        ch_bytes = {acc_mem[ans_slot], 3'b000} + 17'd0;
    end
    // one slot freed per cycle, lowest first
    free_valid = free_pend_reg != '0;
    free_slot = lowest(free_pend_reg);
end

always_ff @(posedge clk) begin
    integer i;  // loop index local to the block
    busy_last_reg <= slot_busy;
    if (free_valid) begin
        free_pend_reg[free_slot] <= 1'b0;
    end
    for (i = 0; i < NS; i = i + 1) begin
        // a newly taken slot: no answer yet, its clock starts
        if (rr_wait_reg[i]) begin
            rr_left_mem[i] <= rr_left_mem[i] - 16'd1;
            if (rr_left_mem[i] <= 16'd1) begin
                rr_wait_reg[i] <= 1'b0;
                rr_go_reg[i] <= 1'b1;
            end
        end
        if (slot_busy[i] && !busy_last_reg[i]) begin
            rr_n_mem[i] <= 4'd0;
            rr_wait_reg[i] <= 1'b0;
            rr_go_reg[i] <= 1'b0;
            age_mem[i] <= 32'd0;
            rd_ans_reg[i] <= 1'b0;
            rec_ans_reg[i] <= 1'b0;
            acc_mem[i] <= 13'd0;
        end else if (slot_busy[i] && !free_pend_reg[i]) begin
            age_mem[i] <= age_mem[i] + 32'd1;
            if (age_mem[i] >= TIMEOUT && !(ch_run_reg && ch_slot_reg == SB'(i))) begin
                free_pend_reg[i] <= 1'b1;
                rr_wait_reg[i] <= 1'b0;
                rr_go_reg[i] <= 1'b0;
                rd_ans_reg[i] <= 1'b0;
                rec_ans_reg[i] <= 1'b0;
                cnt_timeouts <= cnt_timeouts + 32'd1;
            end
        end
    end
    if (rcomp_valid && rcomp_tag[SB]) begin
        if (!rc_mine) begin
            cnt_bad <= cnt_bad + 32'd1;
        end else if (rcomp_ok) begin
            rd_ans_reg[rc_slot] <= 1'b1;
        end else begin
            // a NULL response: nothing to unpack, the slot is free again
            free_pend_reg[rc_slot] <= 1'b1;
            cnt_bad <= cnt_bad + 32'd1;
        end
    end
    if (wapp_valid && wa_inbox) begin
        if (!wa_mine) begin
            cnt_bad <= cnt_bad + 32'd1;
        end else begin
            acc_mem[wa_slot] <= acc_mem[wa_slot] + wapp_words[12:0];
            if (wapp_last) begin
                rec_ans_reg[wa_slot] <= 1'b1;
            end
        end
    end
    if (ans_go) begin
        ch_run_reg <= 1'b1;
        ch_slot_reg <= ans_slot;
        ch_read_reg <= rd_ans_reg[ans_slot];
        rd_ans_reg[ans_slot] <= 1'b0;
        rec_ans_reg[ans_slot] <= 1'b0;
        if (!rd_ans_reg[ans_slot]) begin
            acc_mem[ans_slot] <= 13'd0;
        end
    end
    if (rr_go_reg != '0) begin
        rr_go_reg[lowest(rr_go_reg)] <= 1'b0;
    end
    if (stale) begin
        rr_n_mem[ch_slot_reg] <= (rr_n_mem[ch_slot_reg] == 4'hf) ? 4'hf : rr_n_mem[ch_slot_reg] + 4'd1;
        if (backoff(rr_n_mem[ch_slot_reg]) == 16'd0) begin
            rr_go_reg[ch_slot_reg] <= 1'b1;
        end else begin
            rr_wait_reg[ch_slot_reg] <= 1'b1;
            rr_left_mem[ch_slot_reg] <= backoff(rr_n_mem[ch_slot_reg]);
        end
    end
    if (ch_done) begin
        ch_run_reg <= 1'b0;
        if (ch_frees) begin
            free_pend_reg[ch_slot_reg] <= 1'b1;
        end
        if (!ch_ok) begin
            cnt_bad <= cnt_bad + 32'd1;
        end
    end
    if (refuse_valid) begin
        cnt_refused <= cnt_refused + 32'd1;
    end
    if (rst) begin
        rd_ans_reg <= '0;
        rec_ans_reg <= '0;
        free_pend_reg <= '0;
        ch_run_reg <= 1'b0;
        busy_last_reg <= '0;
        rr_wait_reg <= '0;
        rr_go_reg <= '0;
        cnt_refused <= 32'd0;
        cnt_timeouts <= 32'd0;
        cnt_bad <= 32'd0;
    end
end

endmodule

`resetall
