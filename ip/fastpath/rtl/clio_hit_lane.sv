// clio_hit_lane: the fast path's II = 1 lane for one-DRAM-beat TLB-hit reads and writes.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A READ of 1..64 bytes within one DRAM beat or two in the same page (none
// while a fence waits; up to 8 bytes answer in one output beat, 9..64 in
// two; a read over two DRAM beats issues two AR and answers on the second R
// beat) or a
// WRITE of one or two packet beats whose 1..64 payload bytes land in one DRAM
// beat, with valid credentials (`s_in_sess_ok`: current epoch, session, key,
// PID), goes through a pipeline at one request per cycle:
//  intake  the parser's beat is eligible (`m_take`) and taken while L1 is
//          free; a write's dedup lookup is issued now (`m_dd_look_*`), the
//          write ahead of it still in L1/L2 forwarded (its key, session);
//  L1      the dedup answer with the forwarded record (a write: a record =
//          a replay, a full buffer, a count at the session's quota, or a
//          late duplicate below the session's floor after its own ack send
//          it to the engine), then, as it leaves L1, its ack frees its
//          session's records and raises the floor (`m_ack_*`) and the TLB
//          is looked up (not for a write the engine will answer from its
//          record or drop, so the TLB's LRU order stays the model's);
//  L2      a hit with READ permission issues AR; a hit with WRITE
//          permission issues AW, then W, and inserts the dedup record in the
//          same cycle; anything else (miss, permission, a write L1 refused)
//          is handed to the engine (`m_ho_*`), which decides it from the
//          start, once the older lane requests have answered;
//  answer  the oldest request in flight (up to LQ - 1) answers when its R
//          beat (header, data, CRC: one or two output beats) or its B
//          (header only) arrives, after the engine's packets still in the
//          response builder (`s_rb_busy`), into a two-beat output register:
//          a two-beat answer holds it for two cycles (II = 1 per output
//          beat), its beats back to back so no builder beat comes between.
// Two writes may be in L1/L2 (II = 1 per beat for two-beat writes): a
// write's lookup sees the records of the writes before it, the one whose
// record is not inserted yet by forwarding; an ack, taken as its packet
// leaves L1, comes after every older request's checks, and a record it
// frees in the cycle it would be inserted is not inserted, as the model
// inserts, then frees it. A hand-off makes a younger write's answer stale
// (the engine ran): it goes to the engine too. Reads and writes never
// overlap in DRAM (a read waits for the B of the lane's writes, a write for
// the data of its reads). Each lane write moves the parser to the other
// packet-buffer bank (its beats stay in its own bank for a hand-off); beats
// that are not the lane's pass to the packet buffer: every beat but a
// packet's last while no lane write holds the parser's bank, a last beat
// only when the lane is empty (the engine starts a packet only after every
// older lane request has answered).
//
// The lane moves (L1 -> L2, AR / AW, answers, hand-offs) only while
// `s_active` (the engine is idle: the lane owns the TLB and the AXI port;
// or the lane runs beside the engine, below).
// While the engine walks the page table for a READ (`s_rd_only`, the lane
// then shares the read channels with the port's owner), only reads without
// `retry_of` leave L1 (a write or a retry waits there: it may not pass the
// walking READ), and no AW is issued; while `s_no_look` (the engine's own
// TLB accesses: the walked page's insert) nothing leaves L1. From the insert
// on (`s_post`) the lookups come after it: those hits answer after the
// walking READ, so while `s_post_hold` (its answer has not started) they
// wait in the answer queue without an AR, the reads behind them following
// them there, and issue their ARs oldest first once it is released; the
// engine holds the READ's answer until the hits looked up before the insert
// have answered (`m_pre_quiet`: none of them in L2, in flight or out).
// A read that misses (the held one below, or one in L2 without retry_of) is
// handed over with older reads still in flight (`m_ho_early`; no writes):
// the engine answers after them, the lane drains beside it. Anything else
// is handed over once every older request has answered.
// The next miss: a read without retry_of that misses in L2 while the engine
// walks moves to a slot of its own (`ho_*`, one) if it is not on the walking
// READ's page (`s_walk_pid`/`s_walk_va`: that one hits once the walk inserts
// it, so the model would not see it walk, and the rule lets nothing pass it),
// and the reads behind it go on: looked up before the walking READ's insert
// and before the held miss's own (it walks only after the walking READ has
// answered), answered before both (ip/fastpath/README.md, "Answer order").
// A read to the held miss's page stays in L1 (it would miss too), as does
// anything once the walk is over (`s_post` or not `s_rd_only`; the read in
// L1 as the miss parks moves on with it): the held miss is handed over
// first, as soon as the engine can take it.
// Back-off: while the engine waits for an empty lane (`s_eng_waits`: to pump
// a READ stream or to poll), the lane takes at most PUMP_WAIT more requests,
// then none until the engine has started.
module clio_hit_lane #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter DEDUP_ENTRIES = 64,          // the dedup buffer's size (width of its count)
    parameter PUMP_WAIT = 8,
    parameter DCW = $clog2(DEDUP_ENTRIES + 1)
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [5:0]              cfg_va_bits,
    input  wire [31:0]             cfg_class_shift,
    input  wire [31:0]             cfg_max_pid,
    input  wire [15:0]             cfg_mtu,

    // Intake: the parser's beat (`s_in_valid`: offered and the packet buffer
    // can take it), its place in the packet and the packet's header.
    input  wire [DATA_WIDTH-1:0]   s_in_tdata,
    input  wire                    s_in_tlast,
    input  wire                    s_in_valid,
    output wire                    s_in_ready,
    input  wire                    s_in_first,        // the packet's first beat
    input  wire                    s_in_second,       // its second beat
    input  wire [DATA_WIDTH-1:0]   s_in_prev,         // the packet's first beat, when this is its second
    input  wire [7:0]              s_hdr_opcode,
    input  wire [7:0]              s_hdr_flags,
    input  wire [7:0]              s_hdr_status,
    input  wire [31:0]             s_hdr_pid,
    input  wire [31:0]             s_hdr_req_id,
    input  wire [31:0]             s_hdr_retry_of,
    input  wire [63:0]             s_hdr_va,
    input  wire [31:0]             s_hdr_total_len,
    input  wire [31:0]             s_hdr_offset,
    input  wire [15:0]             s_hdr_payload_len,
    input  wire [15:0]             s_hdr_session,
    input  wire [31:0]             s_hdr_epoch,
    input  wire [63:0]             s_hdr_key,
    input  wire [31:0]             s_hdr_ack,
    input  wire [15:0]             s_pkt_len,
    input  wire                    s_err_short,
    input  wire                    s_err_crc,
    input  wire                    s_err_malformed,
    input  wire                    s_in_sess_ok,      // epoch and credentials (session table)
    input  wire                    s_in_bank,         // the packet buffer bank the beat enters
    input  wire                    s_fence_any,       // a fence waits: reads go to the engine
    output wire                    m_take,            // the beat is a lane request's (last) beat
    output wire                    m_take_rd,         // ... of a lane read (not kept in the packet buffer)

    input  wire                    s_active,          // the engine is idle
    input  wire                    s_eng_waits,       // the engine waits for an empty lane
    input  wire                    s_rd_only,         // the engine walks: only reads without retry_of move
    input  wire                    s_no_look,         // ... and its insert comes: nothing leaves L1
    input  wire [31:0]             s_walk_pid,        // the walking READ's PID and VA (while `s_rd_only`)
    input  wire [63:0]             s_walk_va,
    input  wire                    s_post,            // lookups come after the walking READ's insert ...
    input  wire                    s_post_hold,       // ... and, until its answer has started, issue no AR
    output wire                    m_quiet,           // no looked-up hit in L2, nothing in flight or out
    output wire                    m_pre_quiet,       // ... but a hit looked up after the insert (`s_post`) in L2
    output wire                    m_empty,           // nothing in L1, L2, in flight or out
    output wire [3:0]              m_inflight,        // requests issued to DRAM, not answered

    // Hand-off of the L2 request to the engine (taken while `m_ho_ready`).
    output wire                    m_ho_valid,
    input  wire                    m_ho_ready,
    output wire                    m_ho_early,        // ... older reads of the lane still in flight
    output wire                    m_ho_wr,
    output wire [31:0]             m_ho_pid,
    output wire [31:0]             m_ho_req_id,
    output wire [31:0]             m_ho_retry_of,
    output wire [63:0]             m_ho_va,
    output wire [31:0]             m_ho_total_len,
    output wire [31:0]             m_ho_offset,
    output wire [6:0]              m_ho_payload_len,
    output wire [15:0]             m_ho_session,
    output wire [31:0]             m_ho_epoch,
    output wire [63:0]             m_ho_key,
    output wire [31:0]             m_ho_ack,
    output wire                    m_ho_bank,         // a write's bank in the packet buffer

    // The session table's L1 port.
    output wire [15:0]             m_l1_session,
    input  wire [31:0]             s_l1_floor,
    input  wire [15:0]             s_l1_dquota,

    // TLB lookup (`m_tlb_sel`: the lane owns the lookup port this cycle;
    // answer next cycle).
    output wire                    m_tlb_sel,
    output wire                    m_tlb_valid,
    output wire [31:0]             m_tlb_pid,
    output wire [63:0]             m_tlb_va,
    input  wire                    s_tlb_hit,
    input  wire [31:0]             s_tlb_ppn,
    input  wire [7:0]              s_tlb_perms,

    // Dedup buffer: a write's lookup at intake or, stale, from L1 (answer
    // next cycle), its record inserted as it issues, the ack of the packet
    // leaving L1 (also the session table's, on its L1 port).
    output wire                    m_dd_look_valid,
    output wire [87:0]             m_dd_look_key,
    input  wire                    s_dd_hit,
    input  wire                    s_dd_full,
    input  wire                    s_dd_last,         // one free entry left
    input  wire                    s_dd_busy,         // an engine update lands: no lookup now
    input  wire [DCW-1:0]          s_dd_count,
    output wire                    m_dd_ins_valid,
    output wire [87:0]             m_dd_ins_key,
    output wire [279:0]            m_dd_ins_rec,
    output wire                    m_ack_valid,
    output wire [15:0]             m_ack_session,
    output wire [31:0]             m_ack_id,

    // AXI: single-beat reads and strobed single-beat writes (beat addresses).
    output wire [ADDR_WIDTH-1:0]   m_axi_araddr,
    output wire                    m_axi_arvalid,
    input  wire                    m_axi_arready,
    input  wire [DATA_WIDTH-1:0]   m_axi_rdata,
    input  wire                    m_axi_rvalid,
    output wire                    m_axi_rready,
    output wire [ADDR_WIDTH-1:0]   m_axi_awaddr,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [DATA_WIDTH-1:0]   m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0] m_axi_wstrb,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,

    // Answers: one or two beats each, back to back (`m_out_tvalid` stays up
    // between them); they wait while the builder holds packets.
    input  wire                    s_rb_busy,
    output wire [DATA_WIDTH-1:0]   m_out_tdata,
    output wire [DATA_WIDTH/8-1:0] m_out_tkeep,
    output wire                    m_out_tvalid,
    output wire                    m_out_tlast,
    input  wire                    m_out_tready
);

import clio_pkg::*;

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);
localparam LQ = 8;                 // answer queue entries (LQ - 1 in flight)
localparam LEN_W = 7;              // lane reads carry at most BYTES bytes (one DRAM beat)
localparam B0 = BYTES - CLIO_HEADER_LEN;   // data bytes in an answer's first beat
localparam GW = $clog2(PUMP_WAIT + 1);

initial begin
    if (DATA_WIDTH != 512) begin
        $error("Error: the hit lane runs at DATA_WIDTH = 512 (header in one beat, answer in two) (instance %m)");
        $finish;
    end
    if (PUMP_WAIT < 1) begin
        $error("Error: PUMP_WAIT must be at least 1 (instance %m)");
        $finish;
    end
end

// What a pipeline stage holds.
typedef enum logic [1:0] {
    ST_EMPTY = 2'd0,
    ST_READ = 2'd1,
    ST_WRITE = 2'd2
} stage_t;

function automatic [31:0] bswap32(input [31:0] v);
    bswap32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction

function automatic [63:0] bswap64(input [63:0] v);
    bswap64 = {bswap32(v[31:0]), bswap32(v[63:32])};
endfunction

// RFC 1982 order over u32: `a` comes before `b`.
function automatic serial_before(input [31:0] a, input [31:0] b);
    reg [31:0] d;
    begin
        d = b - a;
        serial_before = d != 32'd0 && !d[31];
    end
endfunction

// ---------------------------------------------------------------------------
// Intake: eligibility of the parser's packet.
// ---------------------------------------------------------------------------
wire        in_wr = s_hdr_opcode == OP_WRITE;
// Target VA (the offset is zero for lane reads); its class and page.
wire [63:0] in_tva = s_hdr_va + {32'd0, s_hdr_offset};
wire [31:0] in_len = in_wr ? {16'd0, s_hdr_payload_len} : s_hdr_total_len;
wire [63:0] in_va_hi = in_tva >> cfg_va_bits;
/* verilator lint_off WIDTH */
wire [1:0]  in_cls = in_tva >> (cfg_va_bits - 2);
wire [7:0]  in_end = in_tva[OW-1:0] + in_len;
/* verilator lint_on WIDTH */
wire [7:0]  in_shift = cfg_class_shift[in_cls*8 +: 8];
/* verilator lint_off WIDTH */
wire elig_common = s_in_tlast && s_pkt_len >= CLIO_HEADER_LEN && !s_err_short && !s_err_crc
    && !s_err_malformed && s_hdr_status == STATUS_OK && (s_hdr_flags & ~FLAG_FIXED_VA) == 8'd0
    && s_hdr_pid != 32'd0 && s_hdr_pid <= cfg_max_pid && in_va_hi == 64'd0 && in_shift != 8'd0
    && !s_fence_any && s_in_sess_ok;
// A read over two DRAM beats: its second beat must be in the same page (one translation).
wire [63:0] in_pmask = (64'd1 << in_shift) - 64'd1;
wire in_span = in_end > BYTES;
wire in_last_line = ((in_tva | 64'(BYTES - 1)) & in_pmask) == in_pmask;
wire elig_rd = elig_common && s_in_first && in_end <= 2 * BYTES && !(in_span && in_last_line)
    && s_hdr_opcode == OP_READ && s_hdr_payload_len == 16'd0 && s_hdr_offset == 32'd0 && s_hdr_total_len != 32'd0
    && s_hdr_total_len <= BYTES && s_hdr_total_len <= {16'd0, cfg_mtu};
wire elig_wr = elig_common && in_end <= BYTES && (s_in_first || s_in_second) && in_wr && s_hdr_payload_len != 16'd0
    && s_hdr_payload_len <= BYTES && s_hdr_payload_len <= cfg_mtu;
/* verilator lint_on WIDTH */
wire elig = elig_rd || elig_wr;
// The write payload: bytes 56.. of the packet (beat 0 is `s_in_prev` for a two-beat packet).
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_WIDTH-1:0] in_pair = s_in_first ? {{DATA_WIDTH{1'b0}}, s_in_tdata} : {s_in_tdata, s_in_prev};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] in_wdata = in_pair[CLIO_HEADER_LEN*8 +: DATA_WIDTH];

// ---------------------------------------------------------------------------
// Pipeline registers.
// ---------------------------------------------------------------------------
stage_t          l1_state_reg = ST_EMPTY, l2_state_reg = ST_EMPTY;
// The first cycle in the stage (the TLB / dedup answer is on its port then).
reg              l1_first_reg = 1'b0, l2_first_reg = 1'b0;
reg [31:0]       l1_pid_reg = 0, l1_req_id_reg = 0, l1_retry_of_reg = 0;
reg [31:0]       l2_pid_reg = 0, l2_req_id_reg = 0, l2_retry_of_reg = 0;
reg [15:0]       l1_session_reg = 0, l2_session_reg = 0;
reg [31:0]       l1_epoch_reg = 0, l2_epoch_reg = 0, l1_ack_reg = 0, l2_ack_reg = 0;
reg [63:0]       l1_key_reg = 0, l2_key_reg = 0;
reg [63:0]       l1_va_reg = 0, l2_va_reg = 0;
reg [LEN_W-1:0]  l1_len_reg = 0, l2_len_reg = 0;
reg [4:0]        l1_shift_reg = 0, l2_shift_reg = 0;
// A read over two DRAM beats; in L2, its first AR was accepted.
reg              l1_span_reg = 1'b0, l2_span_reg = 1'b0, l2_ar1_reg = 1'b0;
// L2's lookup came after the walking READ's insert (`s_post` as it left L1).
reg              l2_post_reg = 1'b0;
// Writes: target VA, echoed total_len and offset, payload (from byte 0) and its length.
reg [63:0]       l1_tva_reg = 0, l2_tva_reg = 0;
reg [31:0]       l1_total_reg = 0, l2_total_reg = 0, l1_off_reg = 0, l2_off_reg = 0;
reg [6:0]        l1_plen_reg = 0, l2_plen_reg = 0;
reg [DATA_WIDTH-1:0] l1_data_reg = 0, l2_data_reg = 0;
// A write's dedup answer (kept while L1 waits) and L1's verdict on it.
reg              l1_dd_hit_reg = 1'b0, l1_dd_full_reg = 1'b0, l1_dd_last_reg = 1'b0, l2_dd_bad_reg = 1'b0;
reg [DCW-1:0]    l1_dd_count_reg = 0;
// The write ahead of it whose record was not in the buffer at its lookup
// (forwarded): there was one, of the same session, of the same key.
reg              l1_fw_any_reg = 1'b0, l1_fw_same_reg = 1'b0, l1_fw_hit_reg = 1'b0;
// The engine ran (a hand-off) after the write's lookup: its answer is
// stale, and the write looks up again once the engine is idle.
reg              l1_stale_reg = 1'b0;
// A write's bank in the packet buffer (its beats, for a hand-off).
reg              l1_bank_reg = 1'b0, l2_bank_reg = 1'b0;
// The TLB answer, kept while L2 waits.
reg              l2_hit_reg = 1'b0;
reg [31:0]       l2_ppn_reg = 0;
reg [7:0]        l2_perms_reg = 0;
// The next miss behind a walking READ, held for the engine (a read: no bank, no payload).
reg              ho_valid_reg = 1'b0;
reg [31:0]       ho_pid_reg = 0, ho_req_id_reg = 0, ho_total_reg = 0, ho_epoch_reg = 0, ho_ack_reg = 0;
reg [15:0]       ho_session_reg = 0;
reg [63:0]       ho_va_reg = 0, ho_key_reg = 0;
reg [4:0]        ho_shift_reg = 0;

// Requests in flight, oldest first, with what their answers echo.
reg [31:0]       lq_pid_mem [0:LQ-1];
reg [31:0]       lq_req_id_mem [0:LQ-1];
reg [31:0]       lq_retry_of_mem [0:LQ-1];
reg [15:0]       lq_session_mem [0:LQ-1];
reg [31:0]       lq_epoch_mem [0:LQ-1];
reg [63:0]       lq_va_mem [0:LQ-1];
reg [LEN_W-1:0]  lq_len_mem [0:LQ-1];
stage_t          lq_kind_mem [0:LQ-1];     // ST_WRITE: answered on its B, ST_READ: on its (last) R beat
reg              lq_span_mem [0:LQ-1];     // a read of two R beats
reg [31:0]       lq_total_mem [0:LQ-1];
reg [31:0]       lq_off_mem [0:LQ-1];
reg [3:0]        lq_wr_reg = 0, lq_rd_reg = 0;
reg [3:0]        lq_nw_reg = 0;            // writes among them (reads and writes never mix in flight)
wire [3:0]       lq_count = lq_wr_reg - lq_rd_reg;
// Reads looked up after the walking READ's insert wait here for their AR
// while `s_post_hold` (entries lq_ar_reg .. lq_wr_reg - 1; those before
// lq_ar_reg are issued), at their beat address; lq_ar1_reg: the first AR of
// the oldest one, a read over two DRAM beats, was accepted.
reg [ADDR_WIDTH-1:0] lq_pa_mem [0:LQ-1];
reg [3:0]        lq_ar_reg = 0;
reg              lq_ar1_reg = 1'b0;
wire [3:0]       lq_def = lq_wr_reg - lq_ar_reg;
// The W beat of the write whose AW was accepted last.
reg                  lw_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] lw_data_reg = 0;
reg [BYTES-1:0]      lw_strb_reg = 0;
// The first R beat of a read over two DRAM beats, while its second is due.
reg                  lr_half_reg = 1'b0;
reg [DATA_WIDTH-1:0] lr_first_reg = 0;
// The answer beat on the output, and a two-beat answer's second beat behind it.
reg                  lo_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] lo_data_reg = 0;
reg [BYTES-1:0]      lo_keep_reg = 0;
reg                  lo2_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] lo2_data_reg = 0;
reg [BYTES-1:0]      lo2_keep_reg = 0;
// Requests taken while the engine waits for an empty lane.
reg [GW-1:0]         grants_reg = 0;

initial begin : init_lq
    integer i;
    for (i = 0; i < LQ; i = i + 1) begin
        lq_pid_mem[i] = 0; lq_req_id_mem[i] = 0; lq_retry_of_mem[i] = 0; lq_session_mem[i] = 0;
        lq_epoch_mem[i] = 0; lq_va_mem[i] = 0; lq_len_mem[i] = 0; lq_kind_mem[i] = ST_READ;
        lq_total_mem[i] = 0; lq_off_mem[i] = 0; lq_span_mem[i] = 1'b0; lq_pa_mem[i] = 0;
    end
end

wire l1_valid = l1_state_reg != ST_EMPTY;
wire l2_valid = l2_state_reg != ST_EMPTY;
wire l1_wr = l1_state_reg == ST_WRITE;
wire l2_wr = l2_state_reg == ST_WRITE;
wire pause = grants_reg == GW'(PUMP_WAIT);

assign m_empty = !l1_valid && !l2_valid && !ho_valid_reg && lq_count == 0 && !lo_valid_reg && !lw_valid_reg;
assign m_inflight = lq_count;

// ---------------------------------------------------------------------------
// L1 and L2.
// ---------------------------------------------------------------------------
wire l2_hit = l2_first_reg ? s_tlb_hit : l2_hit_reg;
wire [31:0] l2_ppn = l2_first_reg ? s_tlb_ppn : l2_ppn_reg;
wire [7:0]  l2_perms = l2_first_reg ? s_tlb_perms : l2_perms_reg;
// A write executes in the lane only as the engine would: no dedup record of
// it (else a replay), room in the dedup buffer and the session's quota, not a
// late duplicate. The lookup was issued at intake, before the acks of the
// packets ahead of it in L1 and its own ack freed records (an ack takes
// effect as its packet leaves L1): it sees more records than the model,
// never fewer, so a hit there or a count at the quota only sends the write
// to the engine. The one write ahead of it whose record was not inserted yet
// is forwarded: its key counts as a hit, its record in the session's count
// and in the buffer's room. That write executes, else it was handed to the
// engine: the answer is stale, and the write looks up again from L1 once
// the engine is idle (nothing ahead of it then).
wire        l1_dd_hit = (l1_first_reg ? s_dd_hit : l1_dd_hit_reg) || l1_fw_hit_reg;
wire        l1_dd_full = (l1_first_reg ? s_dd_full : l1_dd_full_reg)
    || (l1_fw_any_reg && (l1_first_reg ? s_dd_last : l1_dd_last_reg));
wire [DCW:0] l1_dd_count = {1'b0, l1_first_reg ? s_dd_count : l1_dd_count_reg} + {{DCW{1'b0}}, l1_fw_same_reg};
wire [31:0] l1_ddid = l1_retry_of_reg != 32'd0 ? l1_retry_of_reg : l1_req_id_reg;
// The floor after the packet's own ack (the table takes it as L1 moves).
wire        l1_ack_raises = l1_ack_reg != 32'd0 && (s_l1_floor == 32'd0 || serial_before(s_l1_floor, l1_ack_reg));
wire [31:0] l1_floor = l1_ack_raises ? l1_ack_reg : s_l1_floor;
/* verilator lint_off WIDTH */
wire l1_dd_bad = l1_dd_hit || l1_dd_full || l1_dd_count >= s_l1_dquota
    || (l1_floor != 32'd0 && serial_before(l1_ddid, l1_floor));
/* verilator lint_on WIDTH */
assign m_l1_session = l1_session_reg;
wire l2_good = l2_wr ? (!l2_dd_bad_reg && l2_hit && (l2_perms & PERM_WRITE) == PERM_WRITE)
    : l2_hit && (l2_perms & PERM_READ) == PERM_READ;
// Reads and writes never overlap in DRAM: a read waits for the lane's writes, a write for its reads.
// A hit looked up after the walking READ's insert reads only once that READ's
// answer has started (its R beat then waits for nothing but the builder):
// until then it waits in the answer queue (`l2_defer`), and the reads behind
// it follow it there; the waiting ones issue first, oldest first.
wire l2_rd_go = s_active && l2_valid && !l2_wr && l2_good && lq_count < LQ - 1 && lq_nw_reg == 0;
wire l2_defer = l2_rd_go && !l2_ar1_reg && ((l2_post_reg && s_post_hold) || lq_def != 0);
wire lq_ar_go = s_active && lq_def != 0 && !s_post_hold;
wire [2:0] lq_a = lq_ar_reg[2:0];
assign m_axi_arvalid = lq_ar_go || (l2_rd_go && !l2_defer);
assign m_axi_awvalid = s_active && !s_rd_only && l2_valid && l2_wr && l2_good && lq_count < LQ - 1
    && lq_nw_reg == lq_count && !lw_valid_reg;
// A read over two DRAM beats leaves L2 with its second AR.
wire l2_ar = !lq_ar_go && m_axi_arvalid && m_axi_arready;
wire l2_issue = (l2_ar && (!l2_span_reg || l2_ar1_reg)) || (m_axi_awvalid && m_axi_awready);
wire l2_fire = l2_issue || l2_defer;
wire lq_ar = lq_ar_go && m_axi_arready;
wire lq_ar_done = lq_ar && (!lq_span_mem[lq_a] || lq_ar1_reg);
wire l2_eject = l2_valid && !l2_good;
// A miss in L2 during a walk is held (`park`) unless on the walking READ's page.
/* verilator lint_off WIDTH */
wire l2_walk_page = l2_pid_reg == s_walk_pid && ((l2_tva_reg ^ s_walk_va) >> l2_shift_reg) == 64'd0;
wire l1_ho_page = l1_pid_reg == ho_pid_reg && ((l1_tva_reg ^ ho_va_reg) >> ho_shift_reg) == 64'd0;
/* verilator lint_on WIDTH */
wire park = s_active && s_rd_only && !ho_valid_reg && l2_valid && !l2_wr && !l2_hit
    && l2_retry_of_reg == 32'd0 && !l2_walk_page;
// The held miss goes first. A read that missed (the held one, or one in L2
// without retry_of) goes at once, with older reads (no writes) in flight
// (`m_ho_early`: the engine answers after them); anything else once every
// older request has answered.
wire ho_miss = ho_valid_reg || (!l2_wr && !l2_hit && l2_retry_of_reg == 32'd0);
assign m_ho_early = lq_count != 0 || lo_valid_reg;
assign m_ho_valid = s_active && (ho_valid_reg ? !(l2_valid && l2_good) : l2_eject && !park)
    && (!m_ho_early || (ho_miss && lq_nw_reg == 0 && !lw_valid_reg));
wire handoff = m_ho_valid && m_ho_ready;
wire l2_free = !l2_valid || l2_fire || park;
// The re-lookup of a stale write: the engine has let the handed-off packet
// go (`m_ho_ready`) and its last dedup update has landed.
wire l1_relook = s_active && m_ho_ready && l1_wr && l1_stale_reg && !s_dd_busy;
wire l1_move = s_active && l1_valid && l2_free && !(l2_eject && !park) && !(l1_wr && l1_stale_reg) && !s_no_look
    && !(s_rd_only && (l1_wr || l1_retry_of_reg != 32'd0)) && !(ho_valid_reg && (!s_rd_only || s_post || l1_ho_page));
// A miss in L2 is handed over later: its lookup touched nothing in the TLB.
assign m_quiet = !(l2_valid && l2_good) && lq_count == 0 && !lo_valid_reg && !lr_half_reg && !lw_valid_reg;
assign m_pre_quiet = !(l2_valid && l2_good && !l2_post_reg) && lq_ar_reg == lq_rd_reg && !lo_valid_reg
    && !lr_half_reg && !lw_valid_reg;
wire l1_free = !l1_valid || l1_move;
// A write in L1 or L2 keeps its beats in its bank of the packet buffer (a
// write handed to the engine is read from there; each lane write moves the
// parser to the other bank): no beat enters that bank while it is there.
// A write's lookup sees the one write ahead of it whose record is not
// inserted yet (forwarded, below): a second one waits.
wire bank_busy = (l1_wr && l1_bank_reg == s_in_bank) || (l2_wr && l2_bank_reg == s_in_bank);
assign s_in_ready = !(l2_eject && !park)
    && (elig ? (l1_free && !pause && !(elig_wr && (bank_busy || (l1_wr && l2_wr))))
             : (s_in_tlast ? m_empty : !bank_busy));
wire in_fire = s_in_valid && s_in_ready;
wire in_take = in_fire && elig;
assign m_take = elig;
assign m_take_rd = elig_rd;

assign m_tlb_sel = l1_move;
assign m_tlb_valid = l1_move && !(l1_wr && l1_dd_bad);
assign m_tlb_pid = l1_pid_reg;
assign m_tlb_va = l1_tva_reg;

// The lane's dedup accesses: a write's lookup at intake, its record as it fires.
wire [31:0] in_ddid = s_hdr_retry_of != 32'd0 ? s_hdr_retry_of : s_hdr_req_id;
assign m_dd_look_valid = (in_fire && elig_wr) || l1_relook;
wire [31:0] l2_ddid = l2_retry_of_reg != 32'd0 ? l2_retry_of_reg : l2_req_id_reg;
// The write whose record the lookup cannot see yet: in L2 (it inserts at
// the earliest in this cycle), else in L1 (it moves on in this cycle).
wire        fw_valid = l1_wr || l2_wr;
wire [15:0] fw_session = l2_wr ? l2_session_reg : l1_session_reg;
wire [31:0] fw_off = l2_wr ? l2_off_reg : l1_off_reg;
wire [31:0] fw_ddid = l2_wr ? l2_ddid : l1_ddid;
wire        in_fw_same = fw_valid && fw_session == s_hdr_session;
wire        in_fw_hit = in_fw_same && fw_off == s_hdr_offset && fw_ddid == in_ddid;
// (No intake while L1 holds a stale write: L1 is not free.)
assign m_dd_look_key = l1_relook ? {OP_WRITE, l1_off_reg, l1_ddid, l1_session_reg}
                                 : {OP_WRITE, s_hdr_offset, in_ddid, s_hdr_session};
// A lane request's ack frees records and raises the floor as it leaves L1
// (the engine is idle then), after every older request's lookup and floor
// check, and as the write ahead of it inserts its record: a record the ack
// frees is not inserted (the model inserts it, then frees it).
assign m_ack_valid = l1_move && l1_ack_reg != 32'd0;
assign m_ack_session = l1_session_reg;
assign m_ack_id = l1_ack_reg;
wire l2_acked = m_ack_valid && l1_session_reg == l2_session_reg && serial_before(l2_ddid, l1_ack_reg);
assign m_dd_ins_valid = l2_fire && l2_wr && !l2_acked;
assign m_dd_ins_key = {OP_WRITE, l2_off_reg, l2_ddid, l2_session_reg};
assign m_dd_ins_rec = {128'd0, 8'd0, l2_off_reg, l2_total_reg, l2_va_reg, STATUS_OK, 8'd0};

wire [63:0] l2_mask = (64'd1 << l2_shift_reg) - 64'd1;
// Beat address of the access: only the bits the AXI port carries are used.
/* verilator lint_off UNUSEDSIGNAL */
wire [63:0] l2_pa = ({32'd0, l2_ppn} << l2_shift_reg) | (l2_tva_reg & l2_mask);
/* verilator lint_on UNUSEDSIGNAL */
assign m_axi_araddr = lq_ar_go ? lq_pa_mem[lq_a] + (lq_ar1_reg ? ADDR_WIDTH'(BYTES) : ADDR_WIDTH'(0))
    : l2_pa[ADDR_WIDTH-1:0] + (l2_ar1_reg ? ADDR_WIDTH'(BYTES) : ADDR_WIDTH'(0));
assign m_axi_awaddr = l2_pa[ADDR_WIDTH-1:0];
assign m_axi_wdata = lw_data_reg;
assign m_axi_wstrb = lw_strb_reg;
assign m_axi_wvalid = lw_valid_reg;

// A held miss is a lane read (retry_of, offset and payload length 0).
assign m_ho_wr = !ho_valid_reg && l2_wr;
assign m_ho_pid = ho_valid_reg ? ho_pid_reg : l2_pid_reg;
assign m_ho_req_id = ho_valid_reg ? ho_req_id_reg : l2_req_id_reg;
assign m_ho_retry_of = ho_valid_reg ? 32'd0 : l2_retry_of_reg;
assign m_ho_va = ho_valid_reg ? ho_va_reg : l2_va_reg;
assign m_ho_total_len = ho_valid_reg ? ho_total_reg : l2_total_reg;
assign m_ho_offset = ho_valid_reg ? 32'd0 : l2_off_reg;
assign m_ho_payload_len = ho_valid_reg ? 7'd0 : l2_plen_reg;
assign m_ho_session = ho_valid_reg ? ho_session_reg : l2_session_reg;
assign m_ho_epoch = ho_valid_reg ? ho_epoch_reg : l2_epoch_reg;
assign m_ho_key = ho_valid_reg ? ho_key_reg : l2_key_reg;
assign m_ho_ack = ho_valid_reg ? ho_ack_reg : l2_ack_reg;
assign m_ho_bank = !ho_valid_reg && l2_bank_reg;

// ---------------------------------------------------------------------------
// Answers: the oldest request in flight, from its R beat or its B.
// ---------------------------------------------------------------------------
wire [2:0]  lq_h = lq_rd_reg[2:0];
wire        lq_head_wr = lq_kind_mem[lq_h] == ST_WRITE;
// The output register is free next cycle (a second beat behind the current one keeps it).
wire        out_free = !s_rb_busy && (!lo_valid_reg || (m_out_tready && !lo2_valid_reg));
// The first R beat of a read over two DRAM beats is kept, not answered: the
// oldest request's, or (none in flight) that of the read in L2 whose second
// AR waits, so the R channel never waits on the AR channel.
wire        lq_half = !lr_half_reg && (lq_count != 0 ? !lq_head_wr && lq_span_mem[lq_h]
                                                     : l2_valid && l2_span_reg && l2_ar1_reg);
wire        half_take = s_active && lq_half && m_axi_rvalid;
wire        answer = s_active && lq_count != 0 && (lq_head_wr ? m_axi_bvalid : m_axi_rvalid && !lq_half) && out_free;
assign m_axi_rready = (s_active && lq_half) || (lq_count != 0 && !lq_head_wr && out_free);
assign m_axi_bready = lq_count != 0 && lq_head_wr && out_free;

// The answer header is a function of its fields (a continuous assignment: see
// the README on Icarus and header building in always_comb).
function automatic [DATA_WIDTH-1:0] answer_beat(input wr, input [31:0] pid, input [31:0] req_id,
        input [31:0] retry_of, input [63:0] va, input [31:0] total, input [31:0] off,
        input [LEN_W-1:0] len, input [15:0] session, input [31:0] epoch, input [DATA_WIDTH-1:0] data);
    integer i;
    begin
        answer_beat = 0;
        answer_beat[CLIO_OFF_VERSION*8 +: 8] = CLIO_VERSION[7:0];
        answer_beat[CLIO_OFF_OPCODE*8 +: 8] = wr ? OP_WRITE_RESP : OP_READ_RESP;
        answer_beat[CLIO_OFF_PID*8 +: 32] = bswap32(pid);
        answer_beat[CLIO_OFF_REQ_ID*8 +: 32] = bswap32(req_id);
        answer_beat[CLIO_OFF_RETRY_OF*8 +: 32] = bswap32(retry_of);
        answer_beat[CLIO_OFF_VA*8 +: 64] = bswap64(va);
        answer_beat[CLIO_OFF_TOTAL_LEN*8 +: 32] = bswap32(total);
        answer_beat[CLIO_OFF_OFFSET*8 +: 32] = bswap32(off);
        answer_beat[CLIO_OFF_PAYLOAD_LEN*8 +: 16] = {{(8-LEN_W){1'b0}}, len, 8'd0};
        answer_beat[CLIO_OFF_SESSION*8 +: 16] = {session[7:0], session[15:8]};
        answer_beat[CLIO_OFF_EPOCH*8 +: 32] = bswap32(epoch);
        for (i = 0; i < B0; i = i + 1) begin
            /* verilator lint_off WIDTH */
            if (i < len) answer_beat[(CLIO_HEADER_LEN + i)*8 +: 8] = data[i*8 +: 8];
            /* verilator lint_on WIDTH */
        end
    end
endfunction

wire [63:0]      hq_va = lq_va_mem[lq_h];
wire [LEN_W-1:0] hq_len = lq_len_mem[lq_h];
wire [31:0]      hq_pid = lq_pid_mem[lq_h];
wire [31:0]      hq_req_id = lq_req_id_mem[lq_h];
wire [31:0]      hq_retry_of = lq_retry_of_mem[lq_h];
wire [31:0]      hq_total = lq_total_mem[lq_h];
wire [31:0]      hq_off = lq_off_mem[lq_h];
wire [15:0]      hq_session = lq_session_mem[lq_h];
wire [31:0]      hq_epoch = lq_epoch_mem[lq_h];
// The read's bytes from its first byte on (a read over two beats: the kept beat, then this one).
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_WIDTH-1:0] lr_pair = (lr_half_reg ? {m_axi_rdata, lr_first_reg} : {{DATA_WIDTH{1'b0}}, m_axi_rdata})
    >> {hq_va[OW-1:0], 3'd0};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] lr_data = lr_pair[DATA_WIDTH-1:0];
wire [DATA_WIDTH-1:0] lr_beat = answer_beat(lq_head_wr, hq_pid, hq_req_id, hq_retry_of, hq_va, hq_total,
    hq_off, hq_len, hq_session, hq_epoch, lr_data);
// A read of more than B0 bytes answers in two beats: the second carries data bytes B0.. .
wire        lr_two = !lq_head_wr && hq_len > LEN_W'(B0);
/* verilator lint_off WIDTH */
wire [BYTES-1:0] lr_keep = lr_two ? {BYTES{1'b1}} : ~({BYTES{1'b1}} << (CLIO_HEADER_LEN + hq_len));
wire [BYTES-1:0] lr_keep2 = ~({BYTES{1'b1}} << (hq_len - B0));
/* verilator lint_on WIDTH */
wire [DATA_WIDTH-1:0] lr_beat2 = lr_data >> (B0 * 8);
wire [31:0] lr_crc0, lr_crc1;

clio_crc32c #(.DATA_WIDTH(DATA_WIDTH)) crc_inst (
    .crc_in(32'hffffffff), .data(lr_beat), .keep(lr_keep), .crc_out(lr_crc0)
);
// The second beat continues the first's CRC (unused for a one-beat answer).
clio_crc32c #(.DATA_WIDTH(DATA_WIDTH)) crc2_inst (
    .crc_in(lr_crc0), .data(lr_beat2), .keep(lr_two ? lr_keep2 : {BYTES{1'b0}}), .crc_out(lr_crc1)
);
wire [31:0] lr_crc = lr_two ? lr_crc1 : lr_crc0;

assign m_out_tdata = lo_data_reg;
assign m_out_tkeep = lo_keep_reg;
assign m_out_tvalid = lo_valid_reg;
assign m_out_tlast = !lo2_valid_reg;

always_ff @(posedge clk) begin
    if (l1_move) begin
        l2_state_reg <= l1_state_reg;
        l2_first_reg <= 1'b1;
        l2_pid_reg <= l1_pid_reg;
        l2_req_id_reg <= l1_req_id_reg;
        l2_retry_of_reg <= l1_retry_of_reg;
        l2_session_reg <= l1_session_reg;
        l2_epoch_reg <= l1_epoch_reg;
        l2_key_reg <= l1_key_reg;
        l2_ack_reg <= l1_ack_reg;
        l2_va_reg <= l1_va_reg;
        l2_len_reg <= l1_len_reg;
        l2_shift_reg <= l1_shift_reg;
        l2_span_reg <= l1_span_reg;
        l2_ar1_reg <= 1'b0;
        l2_post_reg <= s_post;
        l2_tva_reg <= l1_tva_reg;
        l2_total_reg <= l1_total_reg;
        l2_off_reg <= l1_off_reg;
        l2_plen_reg <= l1_plen_reg;
        l2_data_reg <= l1_data_reg;
        l2_dd_bad_reg <= l1_wr && l1_dd_bad;
        l2_bank_reg <= l1_bank_reg;
        l1_state_reg <= ST_EMPTY;
    end else if (l2_fire || park || (handoff && !ho_valid_reg)) begin
        l2_state_reg <= ST_EMPTY;
    end else if (l2_ar) begin
        l2_ar1_reg <= 1'b1;
    end
    if (l2_valid && l2_first_reg) begin
        // Keep the lookup result while L2 waits.
        l2_first_reg <= l1_move;
        l2_hit_reg <= s_tlb_hit;
        l2_ppn_reg <= s_tlb_ppn;
        l2_perms_reg <= s_tlb_perms;
    end
    if (l1_valid && l1_first_reg) begin
        // Keep the dedup answer while L1 waits.
        l1_first_reg <= 1'b0;
        l1_dd_hit_reg <= s_dd_hit;
        l1_dd_full_reg <= s_dd_full;
        l1_dd_count_reg <= s_dd_count;
        l1_dd_last_reg <= s_dd_last;
    end
    if (park) begin
        ho_valid_reg <= 1'b1;
        ho_pid_reg <= l2_pid_reg;
        ho_req_id_reg <= l2_req_id_reg;
        ho_total_reg <= l2_total_reg;
        ho_epoch_reg <= l2_epoch_reg;
        ho_ack_reg <= l2_ack_reg;
        ho_session_reg <= l2_session_reg;
        ho_va_reg <= l2_va_reg;
        ho_key_reg <= l2_key_reg;
        ho_shift_reg <= l2_shift_reg;
    end else if (handoff) begin
        ho_valid_reg <= 1'b0;
    end
    // The engine runs from a hand-off on: a write in L1 looked up before.
    if (handoff) l1_stale_reg <= 1'b1;
    if (l1_relook) begin
        l1_stale_reg <= 1'b0;
        l1_first_reg <= 1'b1;
        l1_fw_any_reg <= 1'b0;
        l1_fw_same_reg <= 1'b0;
        l1_fw_hit_reg <= 1'b0;
    end
    if (in_take) begin
        l1_state_reg <= elig_wr ? ST_WRITE : ST_READ;
        l1_first_reg <= 1'b1;
        l1_pid_reg <= s_hdr_pid;
        l1_req_id_reg <= s_hdr_req_id;
        l1_retry_of_reg <= s_hdr_retry_of;
        l1_session_reg <= s_hdr_session;
        l1_epoch_reg <= s_hdr_epoch;
        l1_key_reg <= s_hdr_key;
        l1_ack_reg <= s_hdr_ack;
        l1_va_reg <= s_hdr_va;
        l1_len_reg <= elig_wr ? {LEN_W{1'b0}} : s_hdr_total_len[LEN_W-1:0];
        l1_shift_reg <= in_shift[4:0];
        l1_span_reg <= elig_rd && in_span;
        l1_tva_reg <= in_tva;
        l1_total_reg <= s_hdr_total_len;
        l1_off_reg <= s_hdr_offset;
        l1_plen_reg <= s_hdr_payload_len[6:0];
        l1_data_reg <= in_wdata;
        l1_bank_reg <= s_in_bank;
        l1_fw_any_reg <= fw_valid;
        l1_fw_same_reg <= in_fw_same;
        l1_fw_hit_reg <= in_fw_hit;
        l1_stale_reg <= 1'b0;
    end
    if (l2_fire) begin
        lq_pid_mem[lq_wr_reg[2:0]] <= l2_pid_reg;
        lq_req_id_mem[lq_wr_reg[2:0]] <= l2_req_id_reg;
        lq_retry_of_mem[lq_wr_reg[2:0]] <= l2_retry_of_reg;
        lq_session_mem[lq_wr_reg[2:0]] <= l2_session_reg;
        lq_epoch_mem[lq_wr_reg[2:0]] <= l2_epoch_reg;
        lq_va_mem[lq_wr_reg[2:0]] <= l2_va_reg;
        lq_len_mem[lq_wr_reg[2:0]] <= l2_len_reg;
        lq_kind_mem[lq_wr_reg[2:0]] <= l2_state_reg;
        lq_total_mem[lq_wr_reg[2:0]] <= l2_total_reg;
        lq_off_mem[lq_wr_reg[2:0]] <= l2_off_reg;
        lq_span_mem[lq_wr_reg[2:0]] <= l2_span_reg;
        lq_pa_mem[lq_wr_reg[2:0]] <= l2_pa[ADDR_WIDTH-1:0];
        lq_wr_reg <= lq_wr_reg + 1'b1;
    end
    if (l2_issue || lq_ar_done) begin
        lq_ar_reg <= lq_ar_reg + 1'b1;
        lq_ar1_reg <= 1'b0;
    end else if (lq_ar) begin
        lq_ar1_reg <= 1'b1;
    end
    if (lw_valid_reg && m_axi_wready) lw_valid_reg <= 1'b0;
    if (l2_fire && l2_wr) begin
        lw_valid_reg <= 1'b1;
        lw_data_reg <= l2_data_reg << {l2_tva_reg[OW-1:0], 3'd0};
        /* verilator lint_off WIDTH */
        lw_strb_reg <= ~({BYTES{1'b1}} << l2_plen_reg) << l2_tva_reg[OW-1:0];
        /* verilator lint_on WIDTH */
    end
    lq_nw_reg <= lq_nw_reg + ((l2_fire && l2_wr) ? 4'd1 : 4'd0) - ((answer && lq_head_wr) ? 4'd1 : 4'd0);
    if (lo_valid_reg && m_out_tready) begin
        // The second beat follows the first in the next cycle.
        lo_valid_reg <= lo2_valid_reg;
        lo_data_reg <= lo2_data_reg;
        lo_keep_reg <= lo2_keep_reg;
        lo2_valid_reg <= 1'b0;
    end
    if (half_take) begin
        lr_half_reg <= 1'b1;
        lr_first_reg <= m_axi_rdata;
    end
    if (answer) begin
        lr_half_reg <= 1'b0;
        lo_valid_reg <= 1'b1;
        lo_data_reg <= lr_beat | ({{(DATA_WIDTH-32){1'b0}}, bswap32(~lr_crc)} << (CLIO_OFF_CRC*8));
        lo_keep_reg <= lr_keep;
        lo2_valid_reg <= lr_two;
        /* verilator lint_off WIDTH */
        lo2_data_reg <= lr_beat2 & ~({DATA_WIDTH{1'b1}} << ((hq_len - B0) * 8));
        /* verilator lint_on WIDTH */
        lo2_keep_reg <= lr_keep2;
        lq_rd_reg <= lq_rd_reg + 1'b1;
    end
    if (!s_eng_waits) grants_reg <= 0;
    else if (in_take && s_in_tlast) grants_reg <= grants_reg + 1'b1;
    if (rst) begin
        l1_state_reg <= ST_EMPTY;
        l2_state_reg <= ST_EMPTY;
        ho_valid_reg <= 1'b0;
        lq_wr_reg <= 0;
        lq_rd_reg <= 0;
        lq_ar_reg <= 0;
        lq_ar1_reg <= 1'b0;
        lq_nw_reg <= 0;
        lw_valid_reg <= 1'b0;
        lo_valid_reg <= 1'b0;
        lo2_valid_reg <= 1'b0;
        lr_half_reg <= 1'b0;
        l2_ar1_reg <= 1'b0;
        grants_reg <= 0;
    end
end

endmodule

`resetall
