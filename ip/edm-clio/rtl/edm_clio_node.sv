// edm_clio_node: a Clio memory node's EDM front end: request records in its EDM inbox -> the fast path's request stream; the fast path's answers -> answer chains and records.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The memory node's side of host-sdk/wire/src/edm_clio.rs, as edm-clio's model
// serves a record (`serve_record`), on an edm_host_top:
//   intake   a WREQ whose last chunk landed in an inbox slot (wapp_*; slot and
//            peer from the address, as the model) queues that slot (QDEPTH; a
//            full queue counts cnt_overflow and the card's slot times out);
//   check    the record header: rsvd 0, len <= EC_MAX_RECORD_PACKET and within
//            the words the WREQ wrote; a bad record is counted (cnt_bad) and
//            answered with nothing (the card's slot times out), never served;
//   serve    the record's Clio packet goes out on m_axis (64-bit beats, byte 0
//            in lane 0, keep contiguous: the beat format clio_fastpath_top takes
//            from the UDP shim, before its upsizer); the answers that come back
//            on s_axis with the request's pid and req_id are appended to the
//            answer chain `seq | (len | packet)* | 0` (an answer with another
//            pid/req_id, or one cut short by the PKT_WORDS buffer, counts
//            cnt_stray and is dropped). The request is answered when: not a
//            READ, after its first answer (Clio answers every other request
//            once); a READ, once its answers' payloads (bytes past the 56-byte
//            header) reach total_len, or an answer with a non-zero status
//            arrived; or ANSWER_TIMEOUT cycles passed without an answer
//            (cnt_timeouts: a request the fast path dropped, e.g. a duplicate,
//            gets the answers it had, maybe none);
//   answer   a READ's chain is written into the peer's outbox slot, its first
//            word (the seq) last, so that a card's RREQ overtaking the answer
//            reads the previous seq and reads again; any other request's chain
//            is staged as a record (len | 0 | seq | chain) in one of two staging
//            areas (STAGE_WORD, 512 words each) and WREQ'd into the card's
//            inbox slot for this node (inbox_addr(node_id, slot)); a staging
//            area is reused once its WREQ completed (wcomp, tag = area). A
//            chain that does not fit (a record's EC_MAX_RECORD_PACKET bytes, an
//            outbox slot's EC_OUTBOX_SLOT_BYTES) is dropped (cnt_dropped): a
//            record then carries an empty chain (it still frees the card's
//            slot), an outbox keeps its older seq.
// One request is in the fast path at a time: answers are matched to it and
// the ordering stays the fast path's. An answer completing while no request
// waits for answers is a stray (the fast path answers a packet only once it
// has all of it), so the answer stream is never held up.
// Memory (64-bit words, edm_host_top's ext port; writes immediate, reads one
// cycle later): the inbox at 0, the outboxes at EC_OUTBOX_BASE / 8, the
// staging areas at STAGE_WORD; the host's memory must hold the outboxes of the
// peers that read (a READ's RREQ outside it gets a NULL RRES).
module edm_clio_node #(
    parameter AW = 18,
    parameter [AW-1:0] STAGE_WORD = AW'(196608),
    parameter PKT_WORDS = 256,
    parameter QDEPTH = 32,
    parameter [31:0] ANSWER_TIMEOUT = 32'd1000000
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [15:0]   node_id,

    // edm_host_top requester (answer records), applied writes, local memory
    output reg           req_valid,
    input  wire          req_ready,
    output wire          req_write,
    output reg  [15:0]   req_dst,
    output reg  [63:0]   req_addr,
    output reg  [15:0]   req_len,
    output reg  [31:0]   req_local,
    output reg  [15:0]   req_tag,
    input  wire          wcomp_valid,
    input  wire [15:0]   wcomp_tag,
    input  wire          wapp_valid,
    input  wire [AW-1:0] wapp_addr,
    input  wire [15:0]   wapp_words,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]   wapp_peer,     // the peer is the slot's (as the model), not the sender
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire          wapp_last,
    output reg           ext_en,
    output reg           ext_we,
    output reg  [AW-1:0] ext_addr,
    output reg  [63:0]   ext_wdata,
    input  wire [63:0]   ext_rdata,

    // to the fast path: request packets
    output wire [63:0]   m_axis_tdata,
    output wire [7:0]    m_axis_tkeep,
    output wire          m_axis_tvalid,
    output wire          m_axis_tlast,
    input  wire          m_axis_tready,
    // from the fast path: answer packets
    input  wire [63:0]   s_axis_tdata,
    input  wire [7:0]    s_axis_tkeep,
    input  wire          s_axis_tvalid,
    input  wire          s_axis_tlast,
    output wire          s_axis_tready,

    // a record served (answered, or dropped), for counters and benches
    output reg           done_valid,
    output reg  [15:0]   done_peer,
    output reg  [15:0]   done_slot,
    output reg           done_read,

    output reg  [31:0]   cnt_records,
    output reg  [31:0]   cnt_bad,
    output reg  [31:0]   cnt_stray,
    output reg  [31:0]   cnt_timeouts,
    output reg  [31:0]   cnt_dropped,
    output reg  [31:0]   cnt_overflow
);

import edm_pkg::*;

localparam int NS = EC_SLOTS;
localparam int IW = $clog2(NS * 16);                       // inbox slot index: peer * NS + slot
localparam int SB = $clog2(NS);
localparam int SLOT_WORDS = EC_INBOX_SLOT_BYTES / 8;       // 512
localparam [AW-1:0] INBOX_WORDS = AW'(SLOT_WORDS * NS * 16);
localparam int QW = $clog2(QDEPTH);
localparam int PW = $clog2(PKT_WORDS);

typedef enum logic [3:0] {
    S_IDLE   = 4'd0,
    S_HEAD   = 4'd1,    // the record's word 0 is on ext_rdata next
    S_CHECK  = 4'd2,
    S_STAGE  = 4'd3,    // waiting for a free staging area (not a READ)
    S_STREAM = 4'd4,
    S_WAIT   = 4'd5,    // answers
    S_COPY   = 4'd6,    // an answer into the chain
    S_TERM   = 4'd7,    // the chain's 0 terminator
    S_FLUSH  = 4'd8,
    S_FIRST  = 4'd9,    // the chain's / record's first word
    S_POST   = 4'd10,
    S_DONE   = 4'd11
} state_t;

state_t st_reg = S_IDLE;

// ---- intake queue: (inbox slot index, words written from the slot's start)
reg [IW-1:0] q_idx [0:QDEPTH-1];
reg [9:0]    q_words [0:QDEPTH-1];
reg [QW:0]   q_head_reg = '0, q_tail_reg = '0;
wire         q_empty = q_head_reg == q_tail_reg;
wire         q_full = (q_tail_reg - q_head_reg) == (QW+1)'(QDEPTH);
wire [AW-1:0] wa_idx = wapp_addr / AW'(SLOT_WORDS);
wire [AW-1:0] wa_end = wapp_addr + AW'(wapp_words) - wa_idx * AW'(SLOT_WORDS);
wire         wa_push = wapp_valid && wapp_last && wapp_addr < INBOX_WORDS;

// ---- the request being served
reg [IW-1:0] idx_reg = '0;
reg [9:0]    words_reg = '0;
reg [15:0]   len_reg = '0;
reg [31:0]   seq_reg = '0;
reg          read_reg = 1'b0;
reg [31:0]   pid_reg = '0, rid_reg = '0, total_reg = '0;
reg [31:0]   paid_reg = '0;         // READ payload bytes answered
reg [31:0]   wait_reg = '0;
reg          stage_reg = 1'b0;      // the staging area of a non-READ
reg [1:0]    stage_busy_reg = '0;

wire [15:0]  peer = {{(16-IW+SB){1'b0}}, idx_reg[IW-1:SB]};
wire [15:0]  slot = 16'(idx_reg[SB-1:0]);
wire [AW-1:0] inbox_word = AW'(idx_reg) * AW'(SLOT_WORDS);
wire [AW-1:0] outbox_word = AW'(EC_OUTBOX_BASE / 8) + AW'(idx_reg) * AW'(EC_OUTBOX_SLOT_BYTES / 8);
wire [AW-1:0] stage_word = STAGE_WORD + (stage_reg ? AW'(SLOT_WORDS) : '0);

// ---- streaming the packet out: reads in flight and a 4-entry FIFO
reg [9:0]    rd_next_reg = '0;      // packet words asked for
reg [9:0]    rd_back_reg = '0;      // packet words returned
reg          rd_pend_reg = 1'b0;
reg [63:0]   of_data [0:3];
reg [7:0]    of_keep [0:3];
reg          of_last [0:3];
reg [2:0]    of_head_reg = '0, of_tail_reg = '0;
wire [2:0]   of_count = of_tail_reg - of_head_reg;
wire [9:0]   pkt_words = 10'((len_reg + 16'd7) >> 3);
wire         of_pop = m_axis_tvalid && m_axis_tready;
wire         rd_go = st_reg == S_STREAM && rd_next_reg < pkt_words
                     && ({1'b0, of_count} + {3'b0, rd_pend_reg}) < 4'd4;

assign m_axis_tvalid = of_count != 3'd0;
assign m_axis_tdata = of_data[of_head_reg[1:0]];
assign m_axis_tkeep = of_keep[of_head_reg[1:0]];
assign m_axis_tlast = of_last[of_head_reg[1:0]];

// ---- answer packets: a buffer, the first two words kept for matching
reg [63:0]   pb_mem [0:PKT_WORDS-1];
reg [PW:0]   ab_words_reg = '0;     // words received of the current answer
reg [15:0]   ab_bytes_reg = '0;
reg          ab_cut_reg = 1'b0;     // longer than the buffer
/* verilator lint_off UNUSEDSIGNAL */
reg [63:0]   ab_w0_reg = '0, ab_w1_reg = '0;   // pid, status; req_id
/* verilator lint_on UNUSEDSIGNAL */
reg          ab_done_reg = 1'b0;    // a whole answer waits in the buffer
wire         ab_busy = ab_words_reg != '0;
assign s_axis_tready = !ab_done_reg;
wire         ab_take = s_axis_tvalid && s_axis_tready;
wire [3:0]   s_nb = 4'(s_axis_tkeep[0]) + 4'(s_axis_tkeep[1]) + 4'(s_axis_tkeep[2]) + 4'(s_axis_tkeep[3])
                    + 4'(s_axis_tkeep[4]) + 4'(s_axis_tkeep[5]) + 4'(s_axis_tkeep[6]) + 4'(s_axis_tkeep[7]);
wire [31:0]  ab_pid = {ab_w0_reg[39:32], ab_w0_reg[47:40], ab_w0_reg[55:48], ab_w0_reg[63:56]};
wire [31:0]  ab_rid = {ab_w1_reg[7:0], ab_w1_reg[15:8], ab_w1_reg[23:16], ab_w1_reg[31:24]};
wire [7:0]   ab_status = ab_w0_reg[31:24];
wire         ab_match = st_reg == S_WAIT && !ab_cut_reg && ab_bytes_reg >= 16'd12
                        && ab_pid == pid_reg && ab_rid == rid_reg;
wire         ab_close;              // this answer completes the request
wire [31:0]  ab_payload = ab_bytes_reg > 16'(CLIO_HEADER_LEN) ? {16'd0, ab_bytes_reg - 16'(CLIO_HEADER_LEN)} : 32'd0;

// ---- chain packer: bytes appended at pos, a word written whenever one fills
reg [63:0]   tail_reg = '0;         // bytes not yet written, byte 0 in bits 7:0
reg [2:0]    tn_reg = '0;           // how many
reg [13:0]   wa_reg = '0;           // the word they go to, from the chain's area start
reg [16:0]   pos_reg = '0;          // chain bytes so far
reg          over_reg = 1'b0;       // the chain no longer fits: dropped
reg [63:0]   w0_reg = '0;           // a READ chain's first word, written last
reg [PW:0]   cp_reg = '0;           // COPY: buffer words fed
reg          cp_pre_reg = 1'b0;     // COPY: the length prefix is fed
reg [63:0]   pb_q_reg = '0;         // buffer read (one cycle)
reg          close_reg = 1'b0;      // COPY: the request is answered after this answer

assign ab_close = !read_reg || ab_status != 8'd0
                  || paid_reg + ab_payload >= total_reg;
wire [16:0]  chain_cap = read_reg ? 17'(EC_OUTBOX_SLOT_BYTES) : 17'(EC_MAX_RECORD_PACKET);
wire [AW-1:0] area_word = read_reg ? outbox_word : stage_word;

// what the packer takes this cycle
reg          pk_in;
reg [63:0]   pk_data;
reg [3:0]    pk_nb;
always_comb begin
    pk_in = 1'b0;
    pk_data = 64'd0;
    pk_nb = 4'd0;
    if (st_reg == S_COPY && !cp_pre_reg) begin
        pk_in = 1'b1;
        pk_data = {48'd0, ab_bytes_reg};
        pk_nb = 4'd2;
    end else if (st_reg == S_COPY && cp_reg != '0) begin
        pk_in = 1'b1;
        pk_data = pb_q_reg;
        pk_nb = (cp_reg == ab_words_reg && ab_bytes_reg[2:0] != 3'd0) ? {1'b0, ab_bytes_reg[2:0]} : 4'd8;
    end else if (st_reg == S_TERM) begin
        pk_in = 1'b1;
        pk_nb = 4'd2;
    end
end

function automatic [63:0] low_bytes(input [63:0] d, input [3:0] n);
    integer k;
    low_bytes = 64'd0;
    for (k = 0; k < 8; k = k + 1) begin
        if (4'(k) < n) low_bytes[8*k +: 8] = d[8*k +: 8];
    end
endfunction

wire [127:0] pk_comb = {64'd0, tail_reg} | ({64'd0, low_bytes(pk_data, pk_nb)} << (8 * tn_reg));
wire [4:0]   pk_fill = {2'b0, tn_reg} + {1'b0, pk_nb};
wire         pk_full = pk_in && pk_fill >= 5'd8;

// ---- memory port: one user per state (requests are served one at a time)
always_comb begin
    ext_en = 1'b0;
    ext_we = 1'b0;
    ext_addr = '0;
    ext_wdata = 64'd0;
    if (st_reg == S_IDLE && !q_empty) begin
        ext_en = 1'b1;
        ext_addr = AW'(q_idx[q_head_reg[QW-1:0]]) * AW'(SLOT_WORDS);
    end else if (rd_go) begin
        ext_en = 1'b1;
        ext_addr = inbox_word + AW'(1) + AW'(rd_next_reg);
    end else if (pk_full && !(read_reg && wa_reg == 14'd0)) begin
        ext_en = 1'b1;
        ext_we = 1'b1;
        ext_addr = area_word + AW'(wa_reg);
        ext_wdata = pk_comb[63:0];
    end else if (st_reg == S_FLUSH && tn_reg != 3'd0 && !(read_reg && wa_reg == 14'd0)) begin
        ext_en = 1'b1;
        ext_we = 1'b1;
        ext_addr = area_word + AW'(wa_reg);
        ext_wdata = tail_reg;
    end else if (st_reg == S_FIRST && (!read_reg || !over_reg)) begin
        ext_en = 1'b1;
        ext_we = 1'b1;
        ext_addr = area_word;
        // a READ: the chain's first word; else the record's header (len | 0 | seq)
        ext_wdata = read_reg ? w0_reg : {seq_reg, 16'd0, 16'(pos_reg)};
    end
end

assign req_write = 1'b1;

// the record header on ext_rdata (S_CHECK)
wire [15:0] h_len = ext_rdata[15:0];
wire [15:0] h_rsvd = ext_rdata[31:16];
wire        h_bad = h_rsvd != 16'd0 || h_len > 16'(EC_MAX_RECORD_PACKET)
                    || {4'd0, h_len} + 20'd8 > {7'd0, words_reg, 3'b000};

always_ff @(posedge clk) begin
    done_valid <= 1'b0;

    // intake
    if (wa_push) begin
        if (q_full) begin
            cnt_overflow <= cnt_overflow + 32'd1;
        end else begin
            q_idx[q_tail_reg[QW-1:0]] <= IW'(wa_idx);
            q_words[q_tail_reg[QW-1:0]] <= wa_end > AW'(SLOT_WORDS) ? 10'(SLOT_WORDS) : 10'(wa_end);
            q_tail_reg <= q_tail_reg + 1'b1;
        end
    end

    // staging areas free again
    if (wcomp_valid && wcomp_tag < 16'd2) begin
        stage_busy_reg[wcomp_tag[0]] <= 1'b0;
    end

    // the packet out
    if (of_pop) begin
        of_head_reg <= of_head_reg + 3'd1;
    end
    rd_pend_reg <= rd_go;
    if (rd_go) begin
        rd_next_reg <= rd_next_reg + 10'd1;
    end
    if (rd_pend_reg) begin
        of_data[of_tail_reg[1:0]] <= ext_rdata;
        of_last[of_tail_reg[1:0]] <= rd_back_reg + 10'd1 == pkt_words;
        of_keep[of_tail_reg[1:0]] <= (rd_back_reg + 10'd1 == pkt_words && len_reg[2:0] != 3'd0)
                                     ? 8'((9'd1 << len_reg[2:0]) - 9'd1) : 8'hff;
        of_tail_reg <= of_tail_reg + 3'd1;
        rd_back_reg <= rd_back_reg + 10'd1;
        case (rd_back_reg)
            10'd0: begin
                pid_reg <= {ext_rdata[39:32], ext_rdata[47:40], ext_rdata[55:48], ext_rdata[63:56]};
                read_reg <= len_reg >= 16'd2 && ext_rdata[15:8] == 8'(CLIO_OP_READ);
            end
            10'd1: rid_reg <= {ext_rdata[7:0], ext_rdata[15:8], ext_rdata[23:16], ext_rdata[31:24]};
            10'd3: total_reg <= {ext_rdata[7:0], ext_rdata[15:8], ext_rdata[23:16], ext_rdata[31:24]};
            default: ;
        endcase
    end

    // answers in
    if (ab_take) begin
        if (ab_words_reg < (PW+1)'(PKT_WORDS)) begin
            pb_mem[ab_words_reg[PW-1:0]] <= s_axis_tdata;
        end else begin
            ab_cut_reg <= 1'b1;
        end
        if (ab_words_reg == '0) ab_w0_reg <= s_axis_tdata;
        if (ab_words_reg == (PW+1)'(1)) ab_w1_reg <= s_axis_tdata;
        if (ab_words_reg != (PW+1)'(PKT_WORDS)) ab_words_reg <= ab_words_reg + 1'b1;
        ab_bytes_reg <= ab_bytes_reg + 16'(s_nb);
        if (s_axis_tlast) begin
            ab_done_reg <= 1'b1;
        end
    end
    pb_q_reg <= pb_mem[cp_reg[PW-1:0]];

    // the packer
    if (pk_in) begin
        pos_reg <= pos_reg + 17'(pk_nb);
        if (pk_full) begin
            if (read_reg && wa_reg == 14'd0) w0_reg <= pk_comb[63:0];
            wa_reg <= wa_reg + 14'd1;
            tail_reg <= pk_comb[127:64];
            tn_reg <= 3'(pk_fill - 5'd8);
        end else begin
            tail_reg <= pk_comb[63:0];
            tn_reg <= 3'(pk_fill);
        end
    end

    // a whole answer that is no answer of the request in the fast path: dropped
    // (held while a non-READ waits for a staging area: its answer may be in)
    if (ab_done_reg && st_reg != S_COPY && st_reg != S_STAGE && !(st_reg == S_WAIT && ab_match)) begin
        ab_done_reg <= 1'b0;
        ab_words_reg <= '0;
        ab_bytes_reg <= '0;
        ab_cut_reg <= 1'b0;
        cnt_stray <= cnt_stray + 32'd1;
    end

    case (st_reg)
        S_IDLE: begin
            if (!q_empty) begin
                idx_reg <= q_idx[q_head_reg[QW-1:0]];
                words_reg <= q_words[q_head_reg[QW-1:0]];
                q_head_reg <= q_head_reg + 1'b1;
                st_reg <= S_HEAD;
            end
        end
        S_HEAD: st_reg <= S_CHECK;
        S_CHECK: begin
            len_reg <= h_len;
            seq_reg <= ext_rdata[63:32];
            read_reg <= 1'b0;
            pid_reg <= '0;
            rid_reg <= '0;
            total_reg <= '0;
            rd_next_reg <= '0;
            rd_back_reg <= '0;
            paid_reg <= '0;
            wait_reg <= '0;
            over_reg <= 1'b0;
            if (h_bad) begin
                cnt_bad <= cnt_bad + 32'd1;
                st_reg <= S_IDLE;
            end else begin
                cnt_records <= cnt_records + 32'd1;
                st_reg <= h_len == 16'd0 ? S_STAGE : S_STREAM;
            end
        end
        S_STREAM: begin
            // the whole packet has left; the first word told whether it is a READ
            if (rd_back_reg == pkt_words && of_count == 3'd0) begin
                st_reg <= read_reg ? S_WAIT : S_STAGE;
            end
        end
        S_STAGE: begin
            if (!stage_busy_reg[0] || !stage_busy_reg[1]) begin
                stage_reg <= stage_busy_reg[0];
                st_reg <= len_reg == 16'd0 ? S_TERM : S_WAIT;
            end
        end
        S_WAIT: begin
            if (ab_done_reg && ab_match) begin
                wait_reg <= 32'd0;
                paid_reg <= paid_reg + ab_payload;
                close_reg <= ab_close;
                if (over_reg || {1'b0, pos_reg} + 18'd4 + {2'd0, ab_bytes_reg} > {1'b0, chain_cap}) begin
                    // the chain no longer fits: dropped, the answers still counted
                    over_reg <= 1'b1;
                    ab_done_reg <= 1'b0;
                    ab_words_reg <= '0;
                    ab_bytes_reg <= '0;
                    st_reg <= ab_close ? S_TERM : S_WAIT;
                end else begin
                    cp_pre_reg <= 1'b0;
                    cp_reg <= '0;
                    st_reg <= S_COPY;
                end
            end else if (!ab_busy && !ab_done_reg) begin
                wait_reg <= wait_reg + 32'd1;
                if (wait_reg >= ANSWER_TIMEOUT) begin
                    cnt_timeouts <= cnt_timeouts + 32'd1;
                    st_reg <= S_TERM;
                end
            end
        end
        S_COPY: begin
            // cycle 0: the length prefix (and the buffer's word 0 read); then one word a cycle
            cp_pre_reg <= 1'b1;
            if (cp_pre_reg && cp_reg == ab_words_reg) begin
                ab_done_reg <= 1'b0;
                ab_words_reg <= '0;
                ab_bytes_reg <= '0;
                st_reg <= close_reg ? S_TERM : S_WAIT;
            end else begin
                cp_reg <= cp_reg + 1'b1;
            end
        end
        S_TERM: begin
            st_reg <= S_FLUSH;
        end
        S_FLUSH: begin
            st_reg <= S_FIRST;
            if (tn_reg != 3'd0 && read_reg && wa_reg == 14'd0) w0_reg <= tail_reg;
        end
        S_FIRST: begin
            if (over_reg) begin
                cnt_dropped <= cnt_dropped + 32'd1;
            end
            if (read_reg) begin
                st_reg <= S_DONE;
            end else begin
                st_reg <= S_POST;
                req_valid <= 1'b1;
                req_dst <= peer;
                req_addr <= 64'(EC_INBOX_BASE) + ({48'd0, node_id} * 64'(NS) + {48'd0, slot}) * 64'(EC_INBOX_SLOT_BYTES);
                req_len <= 16'((pos_reg + 17'd8 + 17'd7) & ~17'd7);
                req_local <= 32'(stage_word) << 3;
                req_tag <= {15'd0, stage_reg};
                stage_busy_reg[stage_reg] <= 1'b1;
            end
        end
        S_POST: begin
            if (req_ready) begin
                req_valid <= 1'b0;
                st_reg <= S_DONE;
            end
        end
        S_DONE: begin
            done_valid <= 1'b1;
            done_peer <= peer;
            done_slot <= slot;
            done_read <= read_reg;
            st_reg <= S_IDLE;
        end
        default: st_reg <= S_IDLE;
    endcase

    // a new chain: its seq first (READ: at the outbox slot's byte 0; else after the record header)
    if (st_reg == S_CHECK) begin
        tail_reg <= {32'd0, ext_rdata[63:32]};
        tn_reg <= 3'd4;
        pos_reg <= 17'd4;
        wa_reg <= 14'd0;      // a READ's chain starts at word 0 of the outbox slot
    end
    if (st_reg == S_STAGE) begin
        wa_reg <= 14'd1;      // a record's chain starts at word 1 of the staging area
    end
    // a dropped chain: start over, empty
    if (st_reg == S_TERM && over_reg && !read_reg) begin
        // the terminator goes after the seq alone
        tail_reg <= {16'd0, 16'd0, seq_reg};
        tn_reg <= 3'd6;
        pos_reg <= 17'd6;
        wa_reg <= 14'd1;
    end

    if (rst) begin
        st_reg <= S_IDLE;
        q_head_reg <= '0;
        q_tail_reg <= '0;
        of_head_reg <= '0;
        of_tail_reg <= '0;
        rd_pend_reg <= 1'b0;
        ab_words_reg <= '0;
        ab_bytes_reg <= '0;
        ab_cut_reg <= 1'b0;
        ab_done_reg <= 1'b0;
        stage_busy_reg <= '0;
        req_valid <= 1'b0;
        done_valid <= 1'b0;
        cnt_records <= 32'd0;
        cnt_bad <= 32'd0;
        cnt_stray <= 32'd0;
        cnt_timeouts <= 32'd0;
        cnt_dropped <= 32'd0;
        cnt_overflow <= 32'd0;
    end
end

endmodule

`resetall
