// clio_fastpath_top: the Clio fast path: ingress check, dispatch, translation, data, sync, dedup, rings.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Structure: this module wires the stages and holds only the terms between
// them (the engine's holds, the AXI grant, the builder's payload, the hit
// lane's flags beside a walk); the sequencing of every request the lanes do
// not finish is clio_engine's (its state read here as one flag per state,
// `es_*`).
//
// Behaviour follows the reference model (ip/fastpath, README.md there) packet
// by packet:
//  ingress   clio_rx_parser: runts (< header) dropped; truncated or CRC-bad
//            packets NACKed (CORRUPT); stray responses dropped; header
//            fields the wire crate rejects -> MALFORMED; nonzero status,
//            flags other than FIXED_VA, payload above the MTU -> MALFORMED;
//            INFO answered from `cfg_info`; PID 0 or above `cfg_max_pid` ->
//            BAD_PID.
//  forward   ALLOC / FREE repeating or retrying a request still waiting in
//            the slow path re-target its answer (clio_fwd_table), nothing
//            else happens.
//  fence     a waiting FENCE of the PID -> BUSY.
//  gate      clio_region_gate (issue #22, the model's GateTable): a request
//            the slow path's GATE_SET entries hold back -> BUSY / MOVED; a
//            change under a TRACKING entry first pushes a GATE_DIRTY of the
//            64 KiB blocks it newly touches and marks them (BUSY, nothing
//            marked, without RX room). While an entry is set the hit lane
//            takes nothing, so every request meets this check.
//  dedup     clio_dedup: a non-idempotent request (or the one it retries)
//            already executed is answered from its record (DUPLICATE flag).
//  dispatch  READ / WRITE / TAS / CAS / FAA / LOCK / UNLOCK on the fast path;
//            ALLOC / FREE go to the RX ring as ALLOC_REQ / FREE_REQ under a
//            tag (generation << 16 | slot; BUSY without a free slot or RX
//            room); FENCE answers at once unless a forwarded request of the
//            PID waits (then it takes a fence slot, or BUSY); POINTER_CHASE
//            walks with clio_chase, every word read translated (READ);
//            OFFLOAD_CALL -> UNSUPPORTED, or (OFFLOAD_TAGS > 0) passed to
//            the slow path whole as OFFLOAD_REQ fragments (BUSY without RX
//            room for all), no dedup record (clio_offload_fwd).
//  translate page by page in VA order: page size from the VA class
//            (`cfg_class_shift`), clio_tlb, on a miss clio_bucket_hash +
//            clio_pt_fetch (one bucket read), clio_perm_check rules, PTE PPN
//            inside the data region (else UNMAPPED + ERROR_REPORT), first
//            touch through clio_fault_unit (PTE write-back, PA_CONSUMED
//            notice, TLB insert). The first failing page decides the status.
//  data      reads split at the MTU into READ_RESP packets; writes at any
//            alignment with byte strobes; each page's share of a read chunk
//            or of a write's payload is one clio_data_mover command (INCR
//            bursts, one beat per cycle); a READ's commands are issued ahead
//            of its data (the mover queues them) while the packer appends
//            the beats to the response builder and starts each packet with
//            its last beat; once a READ's last command is issued, the READ
//            stage (packer + mover queue) finishes it while the engine takes
//            the next request, whose READ data queues behind it (answers
//            keep the model's order: every other answer waits for the
//            stage's last packet); a WRITE whose first translation pass
//            found one page goes to clio_write_lane (its dedup record
//            inserted as it is handed over): the lane's mover command, B
//            and header-only answer follow while the engine takes the next
//            packet, which the parser received into the other of two packet
//            buffers (only a packet's last beat waits for the engine to let
//            the previous one go; a beat enters the write lane's buffer only
//            below the beat the mover reads, none the buffer of a write
//            waiting behind it); the lane holds two writes, the second's
//            burst following the first's last W beat while its B is
//            outstanding, answers in order; any other WRITE's buffer takes
//            the next packet's beats once the mover has taken the payload;
//            a TAS / CAS / FAA whose word is translated goes to
//            clio_atomic_stage (read, sync, write, B, record, answer while
//            the engine takes the next packet; see `at_hold`); LOCK, UNLOCK
//            and an atomic with a fault queued through clio_sync_unit here.
//  rings     `poll` drains the TX ring (clio_ring_dma + clio_desc_check):
//            PTE_WRITE, PTE_REMOVE, TLB_INVALIDATE, FREE_PA_PUSH, REPLY (tag
//            live, same generation and PID: the waiting request is answered,
//            recorded for dedup under its ids and its first id, and the
//            PID's fences are released when nothing of it waits any more);
//            bad slots and failing commands are rejected with an
//            ERROR_REPORT (count carries the reports a full RX ring swallowed);
//            GATE_SET sets a gate entry (rejected past the table), EPOCH
//            clears them all; OFFLOAD_REPLY fragments (OFFLOAD_TAGS > 0,
//            else rejected) are reassembled and answer their call in MTU
//            packets.
// Hit lane (clio_hit_lane, II = 1): a single-beat READ of 1..64 bytes in one
// DRAM beat or two of one page (the common small read; none while a fence
// waits) goes through a pipeline — L1: TLB lookup; L2: hit with READ
// permission -> DRAM read; the answer (header, data, CRC: one output beat
// up to 8 bytes, two beyond) is formed when the data returns — one request
// per cycle. A WRITE of one or two
// packet beats whose 1..64 bytes fall in one DRAM beat takes the same lane:
// L1 looks up the TLB and the dedup buffer; L2 needs a hit with WRITE
// permission, no record (a replay), room and quota, no late duplicate, then
// issues AW + W and inserts its dedup record in the same cycle; its header-only
// response leaves when the B arrives. Two writes may be in L1/L2 (the
// record of the one ahead forwarded to the next one's lookup; acks take
// effect as their packet leaves L1), so every lookup and ack sees the
// records of the writes before it, as in the model. Lane reads
// and writes never overlap in DRAM (a read waits for the lane's writes'
// B, a write for the reads' data). Anything else on L2 (miss, permission,
// replay, BUSY, ...) is handed to the engine, which decides it from the
// start, once the older lane requests have drained (a read that missed the
// TLB at once: the engine answers after them); the engine executes requests
// one at a time in arrival order and answers a packet only after every older
// lane request has answered. While it walks the page table for a READ the
// lane goes on beside it, through the insert until the engine is idle again
// (`lane_walk`, `lane_after` below). The AXI port is shared through
// clio_axi_arbiter.
// A first-touch fault takes its PPN and inserts the TLB entry at once and the
// request continues; the PTE write-back and the PA_CONSUMED notice wait in a
// small queue (FAULT_QUEUE entries) and are written after the response, or
// earlier when the queue is full, before any other RX-ring push (so the ring
// keeps the reference order), or before a data phase that spans more pages
// than the TLB holds (so no page is re-read from the table before its PTE is
// written). RX-ring room for the notices is known from a credit (free slots
// seen at the last ring access minus notices reserved since); the ring
// header is read only when the credit is zero.
// Pages are not zeroed on first touch (the slow path pushes zeroed pages:
// the model's ZeroPolicy::BySlowPath).
// READ streams (STREAMS > 0 and `cfg_streams_on`; the model's
// set_interleave_reads(true)): a
// multi-packet READ sends its first packet at intake and its other packets
// stay in a table of STREAMS open streams (answer header fields, PID, VA,
// bytes sent), kept in the model's pump order (clients = sessions,
// round-robin; a client's streams in arrival order). While streams are open
// the engine alternates: one request taken in, one stream packet pumped
// (translated again, read, sent; a failing translation ends the stream with
// a header-only answer of that status). It pumps before taking in a READ
// while the table is full and before a FENCE while a stream of its PID is
// open, so the fence orders those reads before itself (such a packet waits
// in hand until that pump can start, also while the write lane finishes a
// WRITE). A pump starts only when the hit lane and the write lane are empty
// and never ahead of a request the lane handed over. `ev_take_q`,
// `ev_pump_q`, `ev_poll_q` pulse (public to Verilator) when a request is
// taken in, a pump starts, a poll starts: the co-simulation replays the
// model in that order.
module clio_fastpath_top #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter ID_WIDTH = 4,
    parameter PKT_BEATS = 24,
    parameter TLB_ENTRIES = 64,
    parameter BUCKET_BITS = 16,
    parameter SLOTS = 16,
    parameter NUM_SIZES = 3,
    parameter [NUM_SIZES*8-1:0] FIFO_SHIFTS = {8'd12, 8'd21, 8'd22},
    parameter FIFO_DEPTH = 32,
    parameter DEDUP_ENTRIES = 64,
    parameter FAULT_QUEUE = 4,
    parameter FWD_SLOTS = 64,
    parameter FENCE_SLOTS = 16,
    parameter SESSIONS = 1024,
    // Open READ streams (0: every READ is answered whole, as before).
    parameter STREAMS = 0,
    // Region gate entries (GATE_SET's entry bound; the model's `gate_entries`).
    parameter GATE_ENTRIES = clio_pkg::GATE_ENTRIES,
    // OFFLOAD_CALLs remembered while the slow path serves them (issue #16;
    // the model's forward_offloads_to_slow_path with OFFLOAD_TAGS = 64).
    // 0: no pass-through, OFFLOAD_CALL is answered UNSUPPORTED.
    parameter OFFLOAD_TAGS = 0,
    // Longest offload answer payload held, in block RAM (at least the
    // response bound the board states in `cfg_info`, and the MTU; 64 KiB,
    // the boards' default bound; + 4 <= clio_pkg::MAX_OFFLOAD_LEN).
    parameter OFFLOAD_RESP_BYTES = 65536
) (
    input  wire                    clk,
    input  wire                    rst,

    // Static configuration (from the board config).
    input  wire [63:0]             cfg_table_base,
    input  wire [63:0]             cfg_rx_base,
    input  wire [31:0]             cfg_rx_slots,
    input  wire [63:0]             cfg_tx_base,
    input  wire [31:0]             cfg_tx_slots,
    input  wire [63:0]             cfg_data_start,
    input  wire [63:0]             cfg_data_end,
    input  wire [5:0]              cfg_va_bits,
    input  wire [31:0]             cfg_class_shift,
    input  wire [31:0]             cfg_max_pid,
    input  wire [15:0]             cfg_mtu,
    input  wire [INFO_RESP_LEN*8-1:0] cfg_info,     // InfoResp as the firmware writes it (epoch 0)
    // Interleave READ answers in open streams (needs STREAMS > 0; 0: every
    // READ answered whole, as before). Static: change it only when idle.
    input  wire                    cfg_streams_on,

    // Drain the TX ring once (pulse); `poll_done` pulses when finished.
    input  wire                    poll,
    output wire                    poll_done,
    output wire                    idle,

    input  wire [DATA_WIDTH-1:0]   s_axis_tdata,
    input  wire [DATA_WIDTH/8-1:0] s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,

    output wire [DATA_WIDTH-1:0]   m_axis_tdata,
    output wire [DATA_WIDTH/8-1:0] m_axis_tkeep,
    output wire                    m_axis_tvalid,
    input  wire                    m_axis_tready,
    output wire                    m_axis_tlast,

    output wire [ID_WIDTH-1:0]     m_axi_awid,
    output wire [ADDR_WIDTH-1:0]   m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [DATA_WIDTH-1:0]   m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0] m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [ID_WIDTH-1:0]     m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,
    output wire [ID_WIDTH-1:0]     m_axi_arid,
    output wire [ADDR_WIDTH-1:0]   m_axi_araddr,
    output wire [7:0]              m_axi_arlen,
    output wire [2:0]              m_axi_arsize,
    output wire [1:0]              m_axi_arburst,
    output wire                    m_axi_arvalid,
    input  wire                    m_axi_arready,
    input  wire [ID_WIDTH-1:0]     m_axi_rid,
    input  wire [DATA_WIDTH-1:0]   m_axi_rdata,
    input  wire [1:0]              m_axi_rresp,
    input  wire                    m_axi_rlast,
    input  wire                    m_axi_rvalid,
    output wire                    m_axi_rready
);

import clio_pkg::*;

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);
localparam SW = $clog2(SLOTS);
localparam PBW = $clog2(PKT_BEATS + 1);
localparam SIW = $clog2(SESSIONS);

initial begin
    if (DATA_WIDTH != 512) begin
        $error("Error: the top level runs at DATA_WIDTH = 512 (ring slots are beats) (instance %m)");
        $finish;
    end
    if (SESSIONS < 2 || SESSIONS > 65535) begin
        $error("Error: SESSIONS must be 2..65535 (session ids are u16) (instance %m)");
        $finish;
    end
end

function [31:0] bswap32(input [31:0] v);
    bswap32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction

function [63:0] bswap64(input [63:0] v);
    bswap64 = {bswap32(v[31:0]), bswap32(v[63:32])};
endfunction

// ---------------------------------------------------------------------------
// Ingress: parser, packet buffers and header registers (clio_ingress, its
// instance below the hit lane's: it takes the lane's hand-off).
// ---------------------------------------------------------------------------
wire [DATA_WIDTH-1:0] p_tdata;
wire                  p_tvalid;
wire                  p_tlast;
wire [7:0]  p_opcode, p_flags, p_status;
wire [31:0] p_pid, p_req_id, p_retry_of, p_total_len, p_offset;
wire [63:0] p_va;
wire [15:0] p_plen, p_len, p_session;
wire [31:0] p_epoch, p_ack;
wire [63:0] p_key;
wire        p_short, p_crc, p_malformed;

wire pkt_have_reg;
// The engine no longer reads the packet buffer (a WRITE whose payload the
// mover has taken): the next packet's beats but its last may enter.
wire pkt_done_reg;
wire parser_ready;
wire to_lane;

// Two packet buffers (banks of PKT_BEATS + 1 beats): the parser fills
// `in_bank` while the engine holds the packet of `eng_bank` (and the
// write lane may still read earlier WRITEs' payloads from either bank).
// Each packet the engine takes (and each write the hit lane takes; one it
// hands over gives the engine its own bank) moves the parser to the other
// bank, so packet n + 1 is received and
// checked while packet n is decided and translated; only its last beat
// (which brings the header registers) waits for the engine to let n go.
localparam PB1 = PKT_BEATS + 1;
wire in_bank, eng_bank;
// The first two beats: request payloads of up to 64 bytes start in beat 0
// (byte CLIO_HEADER_LEN) and run into beat 1.
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_WIDTH-1:0] pkt01;
/* verilator lint_on UNUSEDSIGNAL */
// Beat 0 of the bank being filled (the hit lane's first beat of a write).
wire [DATA_WIDTH-1:0] in_prev;
// Two read ports into the buffers (the write source, the offload fragment).
wire [31:0]           pb_rd_a_idx, pb_rd_b_idx;
wire [2*DATA_WIDTH-1:0] pb_rd_a_pair, pb_rd_b_pair;
wire [PBW-1:0]        pkt_beat;
wire [7:0]  h_op, h_flags, h_status;
wire [31:0] h_pid, h_req_id, h_retry_of, h_total_len, h_offset;
wire [63:0] h_va;
wire [15:0] h_plen, h_len, h_session;
wire [31:0] h_epoch, h_ack;
wire [63:0] h_key;
wire        h_short, h_crc, h_malformed, h_unknown, h_request;
wire        h_from_lane;

// ---------------------------------------------------------------------------
// Session table (on-chip, indexed by session id) and the boot epoch
// (clio_session_table). Written by the engine (SESSION_REPLY, EPOCH, acks,
// lock counts: clio_engine's `st_wr_*`, a registered command) and by the lane's acks;
// read by the lane and the engine.
// ---------------------------------------------------------------------------
// The engine's table writes (clio_engine's `st_set_*`): a registered command.
wire [15:0] st_wr_dquota;
wire [63:0] st_wr_key;
wire [15:0] st_wr_lquota;
wire [2:0] st_wr_op;
wire st_wr_open;
wire [31:0] st_wr_pid;
wire [15:0] st_wr_session;
wire [31:0] st_wr_word;
wire [31:0] epoch_reg;      // the table's epoch register
wire        st_in_ok;       // the parser's packet: current epoch, valid credentials
wire [31:0] l1_floor;
wire [15:0] l1_dquota;
wire        h_sess_ok;
wire [15:0] h_dquota, h_lquota, h_locks;
wire [31:0] h_floor;
wire [15:0] lane_l1_session;
wire        lane_ack;
wire [31:0] lane_ack_id;

clio_session_table #(.SESSIONS(SESSIONS)) st_inst (
    .clk(clk), .rst(rst),
    .s_in_session(p_session), .s_in_key(p_key), .s_in_pid(p_pid), .s_in_epoch(p_epoch),
    .m_in_ok(st_in_ok), .m_in_floor(),
    .s_l1_session(lane_l1_session), .m_l1_floor(l1_floor), .m_l1_dquota(l1_dquota),
    .s_l1_ack_valid(lane_ack), .s_l1_ack_id(lane_ack_id),
    .s_eng_session(h_session), .s_eng_key(h_key), .s_eng_pid(h_pid),
    .m_eng_ok(h_sess_ok), .m_eng_dquota(h_dquota), .m_eng_lquota(h_lquota), .m_eng_locks(h_locks),
    .m_eng_floor(h_floor), .m_epoch(epoch_reg),
    .s_wr_op(st_wr_op), .s_wr_session(st_wr_session), .s_wr_word(st_wr_word), .s_wr_open(st_wr_open),
    .s_wr_pid(st_wr_pid), .s_wr_key(st_wr_key), .s_wr_dquota(st_wr_dquota), .s_wr_lquota(st_wr_lquota)
);


// RFC 1982 order over u32: `a` comes before `b`.
function serial_before(input [31:0] a, input [31:0] b);
    reg [31:0] d;
    begin
        d = b - a;
        serial_before = d != 32'd0 && !d[31];
    end
endfunction

// Epoch 0: no EPOCH descriptor yet, no session exists.
function epoch_ok(input [31:0] e);
    epoch_ok = epoch_reg != 32'd0 && e == epoch_reg;
endfunction


// ---------------------------------------------------------------------------
// Hit lane (clio_hit_lane): single-beat TLB-hit reads and one-DRAM-beat
// TLB-hit writes at one request per cycle; everything else passes to the
// packet buffer for the engine (a request the lane cannot finish is handed
// over from its L2).
// ---------------------------------------------------------------------------
// While a fence waits, reads go to the engine (its fence gate answers BUSY).
wire fw_fence_any;
// While a region-gate entry is set, or a poll (which may set one) runs,
// every request goes to the engine, whose gate check the lane does not
// have: a request taken during a poll would otherwise be served ungated
// after the poll's GATE_SET. No co-simulation case sends packets during a
// poll, so without a gate set the lane's timing is what it was.
wire gt_live;
wire gt_poll_reg;
// Response bound of one request, in KiB: InfoResp bytes 62..64 (big endian)
// of `cfg_info`, so the bound the board states is the one it enforces
// (0: none). A READ above it is answered TOO_LARGE by the engine; lane reads
// (at most 64 bytes) are always below the smallest bound (1 KiB).
wire [15:0] max_resp_kib = {cfg_info[62*8 +: 8], cfg_info[63*8 +: 8]};
// A pump (and a poll) starts only with the lane empty, which a steady flood
// of lane requests never leaves: the lane takes at most PUMP_WAIT requests
// while the engine waits (`eng_waits`, see the READ streams section).
localparam PUMP_WAIT = 8;
wire eng_waits;
wire lane_active;           // the engine is idle: the lane may use the TLB and the AXI port
wire lane_walk;             // the engine walks for a READ: the lane's reads go on beside it (below)
wire lane_quiet;            // no looked-up hit of the lane in L2, in flight or on its output
wire lane_pre_quiet;        // ... but hits looked up after the walking READ's insert (`lane_after`)
reg  lane_after = 1'b0;     // the walking READ inserted its page: the lane goes on beside it (below)
reg  lane_ans_go = 1'b0;    // ... and that READ's answer has started
wire lane_past = lane_after && !lane_active;  // ... and the engine is not idle yet
// A read miss handed over with older lane reads in flight (`m_ho_early`):
// they finish beside the engine (below).
reg  lane_drain = 1'b0;
wire lane_ho_early;
// The walking READ's page is inserted while the lane beside it still has
// hits that were looked up before, or a miss is handed over before the reads
// ahead of it have answered: they answer first (the packer's start and the
// engine's answers wait). Neither set grows then (no lookup counts as
// before the insert once it is made, none is made in a drain), so the lane's
// quiet flags a cycle late are safe, and keep its TLB compare out of the
// engine's holds.
reg  lane_pre_quiet_q = 1'b0, lane_quiet_q = 1'b0;
wire lane_pre_hold = (lane_after && !lane_ans_go && !lane_pre_quiet_q) || (lane_drain && !lane_quiet_q);
// The lane moves beside the engine: a walk, past its insert, a drain.
wire lane_beside = lane_walk || lane_past || lane_drain;
wire lane_empty;
wire [3:0] lq_count;        // lane requests in flight
wire lo_valid;              // a lane answer waits on the output
wire lo_last;               // ... and it is the answer's last beat (a read of 9..64 bytes answers in two)
wire [DATA_WIDTH-1:0] lane_out_tdata;
wire [BYTES-1:0]      lane_out_tkeep;
wire rb_busy;               // the response builder holds engine packets not yet sent
wire lane_in_ready, lane_take_rd;
wire lane_ho_valid, lane_handoff;
wire lane_ho_wr, lane_ho_bank;
wire [31:0] lane_ho_pid, lane_ho_req_id, lane_ho_retry_of, lane_ho_total_len, lane_ho_offset;
wire [31:0] lane_ho_epoch, lane_ho_ack;
wire [63:0] lane_ho_va, lane_ho_key;
wire [6:0]  lane_ho_plen;
wire [15:0] lane_ho_session;
wire        lane_lookup, lane_tlb_look;
wire [31:0] lane_tlb_pid;
wire [63:0] lane_tlb_va;
wire        tlb_hit;
wire [31:0] tlb_ppn;
wire [7:0]  tlb_perms;
localparam DCW = $clog2(DEDUP_ENTRIES + 1);
wire             dd_hit, dd_full, dd_last;
wire [DCW-1:0]   dd_count;
wire             lane_dd_look, lane_dd_ins;
wire [87:0]      lane_dd_look_key, lane_dd_ins_key;
wire [279:0]     lane_dd_ins_rec;
wire [15:0]      lane_ack_session;
wire [ADDR_WIDTH-1:0] lane_araddr, lane_awaddr;
wire                  lane_arvalid, lane_arready, lane_rvalid, lane_rready;
wire                  lane_awvalid, lane_awready, lane_wvalid, lane_wready, lane_bvalid, lane_bready;
wire [DATA_WIDTH-1:0] lane_rdata, lane_wdata;
wire [BYTES-1:0]      lane_wstrb;

// The packet buffer takes the parser's beats while the engine holds no
// packet, or (a WRITE whose payload the mover has taken) all but the next
// packet's last; the lane has its say on each beat.
// The write lane (below) may still read earlier WRITEs' payloads from the
// buffer: a beat enters only below the beat the mover reads from, and not
// at all into the bank of a write whose payload waits behind it.
wire wl_src_busy;
wire wl_bank;                        // the bank the lane's payload bytes come from
wire [1:0] wl_held;                  // banks of lane writes waiting behind it
wire [15:0] wl_src_pos;
wire wl_ready, wl_idle, wl_mem;      // takes a command; holds nothing; a command in the mover
wire wl_mv_valid;
wire [ADDR_WIDTH-1:0] wl_mv_addr;
wire [15:0] wl_mv_len;
wire wl_ans_valid, wl_ans_ready;
wire [7:0]  wl_ans_op;
wire [31:0] wl_ans_pid, wl_ans_req_id, wl_ans_retry_of, wl_ans_total_len, wl_ans_offset, wl_ans_epoch;
wire [63:0] wl_ans_va;
wire [15:0] wl_ans_session;
wire wl_start = wl_ans_valid && wl_ans_ready;
/* verilator lint_off WIDTH */
wire [PBW-1:0] wl_src_beat = (CLIO_HEADER_LEN + wl_src_pos) >> OW;
/* verilator lint_on WIDTH */
// A packet the hit lane takes enters as before (the engine holds nothing,
// or all but the last beat of a WRITE whose payload the mover has taken);
// any other packet's beats but its last enter the parser's bank at once.
// A hit-lane packet's dedup lookup at intake must see the record the engine
// inserts as it hands a WRITE to the write lane (and lets its packet go in
// that cycle): it waits while an engine update is in flight.
wire dd_upd_busy;
wire in_free = (to_lane ? (!pkt_have_reg || (pkt_done_reg && !p_tlast) || (lane_beside && lane_take_rd)) && !dd_upd_busy
                        : (!pkt_have_reg || !p_tlast))
    && (!wl_src_busy || wl_bank != in_bank || pkt_beat < wl_src_beat) && !wl_held[in_bank];
assign parser_ready = in_free && lane_in_ready;
assign lane_handoff = lane_ho_valid && !pkt_have_reg && !lane_past;

clio_hit_lane #(
    .DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .DEDUP_ENTRIES(DEDUP_ENTRIES), .PUMP_WAIT(PUMP_WAIT)
) lane_inst (
    .clk(clk), .rst(rst),
    .cfg_va_bits(cfg_va_bits), .cfg_class_shift(cfg_class_shift), .cfg_max_pid(cfg_max_pid), .cfg_mtu(cfg_mtu),
    .s_in_tdata(p_tdata), .s_in_tlast(p_tlast), .s_in_valid(p_tvalid && in_free), .s_in_ready(lane_in_ready),
    .s_in_first(pkt_beat == 0), .s_in_second(pkt_beat == 1), .s_in_prev(in_prev),
    .s_hdr_opcode(p_opcode), .s_hdr_flags(p_flags), .s_hdr_status(p_status), .s_hdr_pid(p_pid),
    .s_hdr_req_id(p_req_id), .s_hdr_retry_of(p_retry_of), .s_hdr_va(p_va), .s_hdr_total_len(p_total_len),
    .s_hdr_offset(p_offset), .s_hdr_payload_len(p_plen), .s_hdr_session(p_session), .s_hdr_epoch(p_epoch),
    .s_hdr_key(p_key), .s_hdr_ack(p_ack), .s_pkt_len(p_len), .s_err_short(p_short), .s_err_crc(p_crc),
    .s_err_malformed(p_malformed), .s_in_sess_ok(st_in_ok), .s_in_bank(in_bank), .s_fence_any(fw_fence_any || gt_live || gt_poll_reg),
    .m_take(to_lane), .m_take_rd(lane_take_rd),
    .s_active(lane_active || lane_beside), .s_eng_waits(eng_waits), .m_empty(lane_empty), .m_inflight(lq_count),
    .s_rd_only(lane_beside),
    .s_no_look((lane_walk && xw_at_pte) || (lane_past && (tlb_ins_valid || tlb_look_valid || tlb_inv_valid))
        || (lane_drain && !lane_walk)),
    .m_quiet(lane_quiet), .m_pre_quiet(lane_pre_quiet), .s_walk_pid(h_pid), .s_walk_va(h_va),
    .s_post(lane_past), .s_post_hold(lane_past && !lane_ans_go),
    .m_ho_valid(lane_ho_valid), .m_ho_ready(!pkt_have_reg && !lane_past), .m_ho_early(lane_ho_early),
    .m_ho_wr(lane_ho_wr), .m_ho_pid(lane_ho_pid),
    .m_ho_req_id(lane_ho_req_id), .m_ho_retry_of(lane_ho_retry_of), .m_ho_va(lane_ho_va),
    .m_ho_total_len(lane_ho_total_len), .m_ho_offset(lane_ho_offset), .m_ho_payload_len(lane_ho_plen),
    .m_ho_session(lane_ho_session), .m_ho_epoch(lane_ho_epoch), .m_ho_key(lane_ho_key), .m_ho_ack(lane_ho_ack),
    .m_ho_bank(lane_ho_bank), .m_l1_session(lane_l1_session), .s_l1_floor(l1_floor), .s_l1_dquota(l1_dquota),
    .m_tlb_sel(lane_lookup), .m_tlb_valid(lane_tlb_look), .m_tlb_pid(lane_tlb_pid), .m_tlb_va(lane_tlb_va),
    .s_tlb_hit(tlb_hit), .s_tlb_ppn(tlb_ppn), .s_tlb_perms(tlb_perms),
    .m_dd_look_valid(lane_dd_look), .m_dd_look_key(lane_dd_look_key),
    .s_dd_hit(dd_hit), .s_dd_full(dd_full), .s_dd_last(dd_last), .s_dd_busy(dd_upd_busy),
    .s_dd_count(dd_count),
    .m_dd_ins_valid(lane_dd_ins), .m_dd_ins_key(lane_dd_ins_key), .m_dd_ins_rec(lane_dd_ins_rec),
    .m_ack_valid(lane_ack), .m_ack_session(lane_ack_session), .m_ack_id(lane_ack_id),
    .m_axi_araddr(lane_araddr), .m_axi_arvalid(lane_arvalid), .m_axi_arready(lane_arready),
    .m_axi_rdata(lane_rdata), .m_axi_rvalid(lane_rvalid), .m_axi_rready(lane_rready),
    .m_axi_awaddr(lane_awaddr), .m_axi_awvalid(lane_awvalid), .m_axi_awready(lane_awready),
    .m_axi_wdata(lane_wdata), .m_axi_wstrb(lane_wstrb), .m_axi_wvalid(lane_wvalid), .m_axi_wready(lane_wready),
    .m_axi_bvalid(lane_bvalid), .m_axi_bready(lane_bready),
    .s_rb_busy(rb_busy), .m_out_tdata(lane_out_tdata), .m_out_tkeep(lane_out_tkeep), .m_out_tvalid(lo_valid),
    .m_out_tlast(lo_last), .m_out_tready(m_axis_tready)
);

clio_ingress #(.DATA_WIDTH(DATA_WIDTH), .PKT_BEATS(PKT_BEATS)) ingress_inst (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tlast(s_axis_tlast),
    .m_tdata(p_tdata), .m_valid(p_tvalid), .m_tlast(p_tlast), .s_ready(parser_ready),
    .m_hdr_opcode(p_opcode), .m_hdr_flags(p_flags), .m_hdr_status(p_status), .m_hdr_pid(p_pid),
    .m_hdr_req_id(p_req_id), .m_hdr_retry_of(p_retry_of), .m_hdr_va(p_va),
    .m_hdr_total_len(p_total_len), .m_hdr_offset(p_offset), .m_hdr_payload_len(p_plen),
    .m_hdr_session(p_session), .m_hdr_epoch(p_epoch), .m_hdr_key(p_key), .m_hdr_ack(p_ack),
    .m_pkt_len(p_len), .m_err_short(p_short), .m_err_crc(p_crc), .m_err_malformed(p_malformed),
    .s_to_lane(to_lane), .s_take_rd(lane_take_rd),
    .s_ho_valid(lane_handoff), .s_ho_wr(lane_ho_wr), .s_ho_pid(lane_ho_pid), .s_ho_req_id(lane_ho_req_id),
    .s_ho_retry_of(lane_ho_retry_of), .s_ho_va(lane_ho_va), .s_ho_total_len(lane_ho_total_len),
    .s_ho_offset(lane_ho_offset), .s_ho_payload_len(lane_ho_plen), .s_ho_session(lane_ho_session),
    .s_ho_epoch(lane_ho_epoch), .s_ho_key(lane_ho_key), .s_ho_ack(lane_ho_ack), .s_ho_bank(lane_ho_bank),
    .m_in_bank(in_bank), .m_eng_bank(eng_bank), .m_beat(pkt_beat),
    .m_h_op(h_op), .m_h_flags(h_flags), .m_h_status(h_status), .m_h_pid(h_pid), .m_h_req_id(h_req_id),
    .m_h_retry_of(h_retry_of), .m_h_total_len(h_total_len), .m_h_offset(h_offset), .m_h_va(h_va),
    .m_h_plen(h_plen), .m_h_len(h_len), .m_h_session(h_session), .m_h_epoch(h_epoch), .m_h_ack(h_ack),
    .m_h_key(h_key), .m_h_short(h_short), .m_h_crc(h_crc), .m_h_malformed(h_malformed),
    .m_h_unknown(h_unknown), .m_h_request(h_request), .m_h_from_lane(h_from_lane),
    .m_eng01(pkt01), .m_in_prev(in_prev),
    .s_rd_a_idx(pb_rd_a_idx), .m_rd_a_pair(pb_rd_a_pair), .s_rd_b_idx(pb_rd_b_idx), .m_rd_b_pair(pb_rd_b_pair)
);

// ---------------------------------------------------------------------------
// The engine's state and registers (clio_engine, its instance after the
// READ-stream table): the state it is in, as one flag per state the units
// and the holds below look at.
// ---------------------------------------------------------------------------
wire es_idle, es_decide, es_dispatch, es_fail, es_send, es_info, es_replay, es_xl, es_rd, es_pm_end, es_wr, es_at;
wire es_mem_rd, es_mem_rdw, es_mem_wr, es_mem_wrb, es_ring, es_ring_w, es_rep, es_poll, es_cmd, es_rp, es_ch, es_cf;
wire es_flush, es_flush_pop;
wire mem_for_at, xl_for_wr, xl_for_at;

// Deferred fault side effects queued (the engine's fault queue) and the RX-ring credits.
localparam FQW = $clog2(FAULT_QUEUE + 1);
wire [FQW-1:0] fq_count;
wire [31:0] rx_credit;
// A finished packet's deferred fault effects drain in the background
// (S_FINISH lets the packet go first): the hit lane runs in S_FLUSH and
// S_FLUSH_POP meanwhile, and each PTE write-back / PA_CONSUMED push starts
// only once the lane is empty and takes no request this cycle (it does not
// own the port then; lane requests touch data pages only, which these
// writes never do, so DRAM ends as in the model). While a step waits the
// lane takes at most PUMP_WAIT more requests (`eng_waits`). Once the lane
// has handed a request to the engine it stops (the younger requests behind
// it answer after it, as in S_IDLE), and the drain goes on with nothing of
// the lane's in flight.
wire fl_bg;
wire fl_lane = fl_bg && !(pkt_have_reg && h_from_lane);
wire fl_wait = fl_bg && es_flush && fq_count != 0;
wire fl_go = pkt_have_reg ? lq_count == 0 : lane_empty && !(p_tvalid && to_lane && parser_ready);
wire [31:0] xl_pages;

// Response fields (pid, req_id and retry_of always echo the packet).
wire [7:0] r_op, r_flags, r_status;
wire [63:0] r_va;
wire [31:0] r_total_len, r_offset;
wire [15:0] r_plen;
wire [31:0] r_epoch;

// Translation.
wire [1:0] xl_at;
wire [1:0] at_at;
wire       xc_tlbw, xc_at_ok, xc_walking;   // the stage at ST_TLBW, ST_OK, ST_WALK (in S_XL)
wire xl_pass2;
wire [7:0] xl_need;
wire [63:0] xl_cur;
wire [64:0] xl_end;
wire [4:0] pg_shift;
wire [63:0] pg_vpn;
wire [31:0] pg_ppn;
wire [7:0] pg_perms;
wire [63:0] pg_start;
wire [64:0] pg_end;
wire pg_ok;
wire [BUCKET_BITS-1:0] pg_bucket;
wire [SW-1:0] pg_slot;
wire [7:0] pg_flags;
wire pg_found;

// Data movement.
wire [31:0] d_sent, d_n, d_filled;   // the READ's data phase (clio_rd_data)
wire [31:0] d_pos;             // the WRITE's data phase (clio_wr_data)
wire [63:0] d_base;
wire [OW-1:0] d_lane;
wire [OW:0] d_k;

// Open READ streams, in pump order (entry 0 next), and the one being pumped
// (clio_stream_table, below the READ-stream decisions); whether a packet was
// taken since the last pump (the engine's turn between packets and streams).
localparam STN = STREAMS > 0 ? STREAMS : 1;
localparam STW = $clog2(STN + 1);
wire [STW-1:0] sq_cnt /*verilator public_flat_rd*/;
wire        pm_on;
wire [31:0] pm_pid, pm_total, pm_sent;
wire [63:0] pm_va;
wire pm_turn;
// Event pulses for the co-simulation (see the header).
/* verilator lint_off UNUSEDSIGNAL */
wire ev_take_q /*verilator public_flat_rd*/;
wire ev_pump_q /*verilator public_flat_rd*/;
wire ev_poll_q /*verilator public_flat_rd*/;
/* verilator lint_on UNUSEDSIGNAL */
// The PID whose pages are translated: the pumped stream's, else the packet's.
wire [31:0] x_pid = pm_on ? pm_pid : h_pid;
// The READ in the data phase: the pumped stream, else the packet.
wire [63:0] rd_va = pm_on ? pm_va : h_va;
wire [31:0] rd_total = pm_on ? pm_total : h_total_len;

// Memory port of the engine.
wire [63:0] mem_addr;
wire [DATA_WIDTH-1:0] mem_wdata;
wire [BYTES-1:0] mem_wstrb;
wire [DATA_WIDTH-1:0] mem_rdata;
wire                 eng_ready, eng_done;      // clio_axi_arbiter's engine port
// The data mover (clio_data_mover): a page's share of a read chunk or of a
// write's payload, in bursts; `mv_go` holds its command until taken,
// `mv_mark` marks a read chunk's last command (its last beat ends the packet).
wire mv_go;
wire mv_mark;
wire [63:0] mv_addr;
wire [15:0] mv_len;
wire                 mv_cmd_ready, mv_done, mv_idle, mv_rd_valid, mv_rd_mark, mv_take_valid;
// READ packer: while `pk_on` (a READ's data phase), the mover's beats are
// appended to the response builder as they arrive and the beat that ends a
// chunk starts its packet (offset `pk_off`), while the engine issues the
// commands of the chunks after it (read ahead).
wire                 pk_on;
wire [15:0]          pk_filled;
wire [31:0]          pk_off;
// The READ stage: once a READ's last commands are issued, the packer (with
// the mover's queue) finishes its data on its own (`pk_solo`, its answer
// header fields kept in `ps_*`) while the engine takes the next request.
// Until it has started its last packet, the builder and the port belong to
// it: the engine holds before any other answer, the mover keeps the AXI
// port, the lane waits. The next READ's data phase issues its commands
// behind the stage's in the mover's queue: the packer goes on with them
// once the stage's last packet has started. Both are clio_rd_stage's.
wire                 pk_solo;
wire [7:0]           ps_op, ps_flags, ps_status;
wire [31:0]          ps_pid, ps_req_id, ps_retry_of, ps_total_len, ps_epoch;
wire [63:0]          ps_va;
wire [15:0]          ps_session;
wire                 eng_hold;     // the engine waits for the builder (below the builder)
wire                 wd_begin, wd_move;  // the WRITE's data phase in ST_BEGIN, ST_MOVE (clio_wr_data)
wire                 rdd_begin, rdd_move; // the READ's data phase in ST_BEGIN, ST_MOVE (clio_rd_data)
wire [DATA_WIDTH-1:0] mv_rd_data;
wire [OW:0]          mv_rd_len, mv_take;
wire [DATA_WIDTH-1:0] eng_rdata;

// Rings and error reports.
wire [1:0] ring_cmd;
wire [DATA_WIDTH-1:0] ring_desc;
wire [7:0] rep_status;
wire [31:0] rep_pid;
wire [63:0] rep_va;
wire [7:0] rep_opcode;

// Answers from the poll (replies, released fences) carry the ids of the
// request they answer, not of the packet in the buffer.
wire rs_own;
wire [31:0] rs_pid, rs_req_id, rs_retry_of;
wire [15:0] rs_session;
wire [255:0] r_payload;
wire [31:0] o_pid = rs_own ? rs_pid : h_pid;
wire [15:0] o_session = rs_own ? rs_session : h_session;
wire [31:0] o_req_id = rs_own ? rs_req_id : h_req_id;
wire [31:0] o_retry_of = rs_own ? rs_retry_of : h_retry_of;

// Forwarding table updates.
localparam FIW = $clog2(FWD_SLOTS);
localparam FFW = $clog2(FENCE_SLOTS);
wire fw_set, fw_set_new, fw_release, fw_fence_set, fw_fence_clear;
wire fw_orphan, fw_orphan_all;
wire [15:0] fw_orphan_session;
wire [FIW-1:0] fw_set_index, fw_release_index;
wire [FFW-1:0] fw_fence_set_index, fw_fence_clear_index;

// Dedup: key {opcode, offset, first id, session}.
localparam KEY_W = 88;
localparam REC_W = 280;
/* verilator lint_off UNUSEDSIGNAL */
wire [REC_W-1:0] rec_reg;    // the builder replays the record's answer bytes only
/* verilator lint_on UNUSEDSIGNAL */
wire [31:0]      dd_id;      // defined with the helpers below
wire [REC_W-1:0] cur_rec;

// Poll.
wire poll_req;
wire poll_done_reg;
// Only the operand bytes of the TX kinds are read.
/* verilator lint_off UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] desc_reg;
/* verilator lint_on UNUSEDSIGNAL */

// Pulses to the units.
wire tlb_look_valid;
wire tlb_ins_valid;
wire tlb_inv_valid;
wire tlb_inv_exact;
wire [31:0] tlb_inv_pid;
wire [63:0] tlb_inv_vpn;
wire [31:0] tlb_inv_pages;
wire [4:0] tlb_inv_shift;
wire hash_valid;             // the walk stage's (clio_xl_walk)
wire ptf_valid;
wire fault_valid;            // the walk stage's (clio_xl_walk)
wire sync_valid;
wire dd_look_valid;
wire [KEY_W-1:0] dd_look_key;
// One update port: 0 insert, 1 reserve, 2 complete, 3 remove.
wire dd_upd_valid;
wire [1:0] dd_upd_mode;
wire [KEY_W-1:0] dd_upd_key;
wire [REC_W-1:0] dd_upd_rec;
// The engine's ack (S_DECIDE) reaches the buffer in its own cycle
// (`dec_ack`, below the helpers), so the dedup lookup S_DECIDE issues sees
// the records it frees.
wire dec_ack;
wire dd_close_valid;
wire [15:0] dd_close_session;
wire dd_clear;
wire ring_valid;
wire rb_start;
wire push_valid;

// ---------------------------------------------------------------------------
// Units.
// ---------------------------------------------------------------------------
wire [4:0]  tlb_shift;
wire        tlb_out_valid;

// The lookup port is the lane's unless the engine looks up (never both, see
// the dedup unit's instance).
clio_tlb #(.ENTRIES(TLB_ENTRIES), .PPN_WIDTH(32), .USER_WIDTH(1)) tlb_inst (
    .clk(clk), .rst(rst),
    .s_lookup_pid(tlb_look_valid ? x_pid : lane_tlb_pid), .s_lookup_va(tlb_look_valid ? xl_cur : lane_tlb_va),
    .s_lookup_user(1'b0), .s_lookup_valid(tlb_look_valid || lane_tlb_look), .s_lookup_ready(),
    .m_lookup_hit(tlb_hit), .m_lookup_ppn(tlb_ppn), .m_lookup_perms(tlb_perms),
    .m_lookup_shift(tlb_shift), .m_lookup_index(), .m_lookup_user(),
    .m_lookup_valid(tlb_out_valid), .m_lookup_ready(1'b1),
    .s_insert_pid(x_pid), .s_insert_vpn(pg_vpn[47:0]), .s_insert_shift(pg_shift),
    .s_insert_ppn(pg_ppn), .s_insert_perms(pg_perms), .s_insert_valid(tlb_ins_valid),
    .s_inval_pid(tlb_inv_pid), .s_inval_vpn(tlb_inv_vpn), .s_inval_pages(tlb_inv_pages),
    .s_inval_exact(tlb_inv_exact), .s_inval_shift(tlb_inv_shift), .s_inval_valid(tlb_inv_valid)
);

// For the co-simulation's order check (`clio-cosim check`): the hit lane's
// TLB lookups and the engine's TLB inserts, one cycle late and public as
// `ev_take_q` is. A read answered before an earlier walk must have looked
// the TLB up before that walk's insert.
/* verilator lint_off UNUSEDSIGNAL */
reg        ev_look_q /*verilator public_flat_rd*/ = 1'b0;
reg [31:0] ev_look_pid /*verilator public_flat_rd*/ = 0;
reg [63:0] ev_look_va /*verilator public_flat_rd*/ = 0;
reg        ev_ins_q /*verilator public_flat_rd*/ = 1'b0;
reg [31:0] ev_ins_pid /*verilator public_flat_rd*/ = 0;
reg [63:0] ev_ins_vpn /*verilator public_flat_rd*/ = 0;
reg [4:0]  ev_ins_shift /*verilator public_flat_rd*/ = 0;
/* verilator lint_on UNUSEDSIGNAL */
// Only lookups that hit are logged (a miss touches no entry, and the lane
// hands the request over: the engine looks it up again); the hit is known
// a cycle after the lookup, so inserts are logged a cycle later as well.
reg        ev_look_d = 1'b0, ev_ins_d = 1'b0;
reg [31:0] ev_look_pid_d = 0, ev_ins_pid_d = 0;
reg [63:0] ev_look_va_d = 0, ev_ins_vpn_d = 0;
reg [4:0]  ev_ins_shift_d = 0;
always @(posedge clk) begin
    ev_look_d <= lane_tlb_look && !rst;
    ev_look_pid_d <= lane_tlb_pid;
    ev_look_va_d <= lane_tlb_va;
    ev_look_q <= ev_look_d && tlb_hit && !rst;
    ev_look_pid <= ev_look_pid_d;
    ev_look_va <= ev_look_va_d;
    ev_ins_d <= tlb_ins_valid && !rst;
    ev_ins_pid_d <= x_pid;
    ev_ins_vpn_d <= pg_vpn;
    ev_ins_shift_d <= pg_shift;
    ev_ins_q <= ev_ins_d && !rst;
    ev_ins_pid <= ev_ins_pid_d;
    ev_ins_vpn <= ev_ins_vpn_d;
    ev_ins_shift <= ev_ins_shift_d;
end

wire [BUCKET_BITS-1:0] hash_index;
wire                   hash_out_valid;

clio_bucket_hash #(.BUCKET_BITS(BUCKET_BITS), .USER_WIDTH(1)) hash_inst (
    .clk(clk), .rst(rst),
    .s_pid(x_pid), .s_vpn(pg_vpn), .s_user(1'b0), .s_valid(hash_valid), .s_ready(),
    .m_index(hash_index), .m_user(), .m_valid(hash_out_valid), .m_ready(1'b1)
);

wire                   ptf_found;
wire [SW-1:0]          ptf_slot;
wire [31:0]            ptf_ppn;
wire [7:0]             ptf_perms;
wire [7:0]             ptf_flags;
wire                   ptf_out_valid;
wire [ID_WIDTH-1:0]    ptf_arid;
wire [ADDR_WIDTH-1:0]  ptf_araddr;
wire [7:0]             ptf_arlen;
wire [2:0]             ptf_arsize;
wire [1:0]             ptf_arburst;
wire                   ptf_arvalid;
wire                   ptf_rready;
wire                   ptf_arready, ptf_rvalid, ptf_rlast;
wire [ID_WIDTH-1:0]    ptf_rid;
wire [DATA_WIDTH-1:0]  ptf_rdata;
wire [1:0]             ptf_rresp;
wire                   xw_ptf_own;  // the walk stage's bucket read (clio_xl_walk)
wire                   sel_ptf = xw_ptf_own;

clio_pt_fetch #(
    .DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .ID_WIDTH(ID_WIDTH),
    .BUCKET_BITS(BUCKET_BITS), .SLOTS(SLOTS), .USER_WIDTH(1)
) ptf_inst (
    .clk(clk), .rst(rst), .table_base(cfg_table_base[ADDR_WIDTH-1:0]),
    .s_pid(x_pid), .s_vpn(pg_vpn), .s_shift(pg_shift), .s_bucket(pg_bucket), .s_user(1'b0),
    .s_valid(ptf_valid), .s_ready(),
    .m_found(ptf_found), .m_slot(ptf_slot), .m_bucket(), .m_pid(), .m_vpn(), .m_bad(),
    .m_ppn(ptf_ppn), .m_perms(ptf_perms), .m_flags(ptf_flags), .m_user(),
    .m_valid(ptf_out_valid), .m_ready(1'b1),
    .m_axi_arid(ptf_arid), .m_axi_araddr(ptf_araddr), .m_axi_arlen(ptf_arlen),
    .m_axi_arsize(ptf_arsize), .m_axi_arburst(ptf_arburst), .m_axi_arvalid(ptf_arvalid),
    .m_axi_arready(ptf_arready),
    .m_axi_rid(ptf_rid), .m_axi_rdata(ptf_rdata), .m_axi_rresp(ptf_rresp),
    .m_axi_rlast(ptf_rlast), .m_axi_rvalid(ptf_rvalid), .m_axi_rready(ptf_rready)
);

wire [7:0] perm_status;
wire       perm_fault;

clio_perm_check perm_inst (
    .found(pg_found), .pte_perms(pg_perms), .pte_flags(pg_flags), .need(xl_need),
    .status(perm_status), .fault(perm_fault)
);

wire        fault_ok;
wire [1:0]  fault_code;
wire [31:0] fault_ppn;
wire        fault_out_valid;
wire [127:0] fault_pte;
wire        push_ready, push_known;

clio_fault_unit #(
    .BUCKET_BITS(BUCKET_BITS), .SLOT_BITS(SW), .NUM_SIZES(NUM_SIZES), .SHIFTS(FIFO_SHIFTS),
    .FIFO_DEPTH(FIFO_DEPTH), .USER_WIDTH(1)
) fault_inst (
    .clk(clk), .rst(rst),
    .s_push_shift(desc_reg[SLOT_OFF_PAGE_SHIFT*8 +: 5]), .s_push_ppn(desc_reg[SLOT_OFF_B*8 +: 32]),
    .s_push_valid(push_valid), .s_push_ready(push_ready), .s_push_known(push_known),
    .s_pid(x_pid), .s_vpn(pg_vpn[47:0]), .s_bucket(pg_bucket), .s_slot(pg_slot),
    .s_perms(pg_perms), .s_shift(pg_shift), .s_user(1'b0), .s_rx_room(rx_credit != 0),
    .s_valid(fault_valid), .s_ready(),
    .m_ok(fault_ok), .m_code(fault_code), .m_ppn(fault_ppn), .m_user(), .m_valid(fault_out_valid),
    .m_ready(1'b1),
    .m_pte_bucket(), .m_pte_slot(), .m_pte_data(fault_pte), .m_pte_valid(), .m_pte_ready(1'b1),
    .m_tlb_pid(), .m_tlb_vpn(), .m_tlb_shift(), .m_tlb_ppn(), .m_tlb_perms(), .m_tlb_valid(),
    .m_note_pid(), .m_note_vpn(), .m_note_ppn(), .m_note_shift(), .m_note_bucket(), .m_note_slot(),
    .m_note_valid(), .m_note_ready(1'b1),
    .fifo_level()
);

wire [63:0] sync_old, sync_new;
wire        sync_write;
wire [7:0]  sync_status;
wire        sync_out_valid;

// An atomic's read completes (S_MEM_RDW, mem_ret S_AT): the sync unit
// takes the word from the port's data in that cycle, not a cycle later.
wire        at_rd_done = es_mem_rdw && eng_done && mem_for_at;
clio_sync_unit sync_inst (
    .clk(clk), .rst(rst),
    .s_opcode(h_op), .s_old(at_rd_done ? eng_rdata[{d_lane, 3'd0} +: 64] : mem_rdata[{d_lane, 3'd0} +: 64]),
    .s_arg0(bswap64(pkt01[CLIO_HEADER_LEN*8 +: 64])),
    .s_arg1(bswap64(pkt01[(CLIO_HEADER_LEN+8)*8 +: 64])),
    .s_valid(sync_valid || at_rd_done),
    .m_old(sync_old), .m_new(sync_new), .m_write(sync_write), .m_status(sync_status),
    .m_valid(sync_out_valid)
);

// The atomics on the engine (clio_at_engine, below the write's data phase).
// The atomic's write is offered to the engine port in the cycle the sync
// unit's result is out (its ST_SYNCW), from that result, not a cycle later
// from mem_wdata; a lock over its quota writes nothing.
wire        ae_let_go, ae_read, ae_fail, ae_result, ae_wr_load, ae_payload, ae_locks, ae_send, ae_record;
wire        ae_at_read, ae_at_resp, ae_at_rec, ae_wr, ae_port, ae_wr_now;
wire        at_lock_over = h_op == OP_LOCK && sync_status == STATUS_OK && h_locks >= h_lquota;
wire        at_wr_now = ae_wr_now;
wire [DATA_WIDTH-1:0] at_wdata = {{(DATA_WIDTH-64){1'b0}}, sync_new} << {d_lane, 3'd0};
wire [BYTES-1:0]      at_wstrb = {{(BYTES-8){1'b0}}, 8'hff} << d_lane;

// The atomics stage (clio_atomic_stage, below the builder): a TLB-hit TAS,
// CAS or FAA whose word is translated by the first pass (no fault queued, no
// pump) is handed to it from the page hit (clio_xl_ctl's ST_TLBW or ST_OK, `m_let_go`)
// or from clio_at_engine's ST_READ, and its packet let go; the stage reads, syncs, writes,
// inserts the record and answers while the engine takes the next packet.
wire        at_s_ready, at_idle, at_rec_pend, at_own, at_hold, at_port_free;
wire        at_mem_valid, at_mem_write, at_mem_done_raw, at_mem_ready_raw;
wire [ADDR_WIDTH-1:0] at_mem_addr;
wire [DATA_WIDTH-1:0] at_mem_wdata;
wire [BYTES-1:0]      at_mem_wstrb;
wire        at_rec_valid;
wire [KEY_W-1:0] at_rec_key;
wire [REC_W-1:0] at_rec;
wire        at_ans_valid, at_ans_ready;
wire        at_start = at_ans_valid && at_ans_ready;
wire [7:0]  at_ans_op, at_ans_flags, at_ans_status;
wire [31:0] at_ans_pid, at_ans_req_id, at_ans_retry_of, at_ans_total_len, at_ans_offset, at_ans_epoch;
wire [63:0] at_ans_va, at_ans_data;
wire [15:0] at_ans_session;
// An update in flight for the hit lane's intake lookups: the engine's, or an
// atomic record the stage has still to insert (a lane write taken in
// meanwhile would look up without it; it waits, as for the engine's).
assign dd_upd_busy = dd_upd_valid || at_rec_pend || at_rec_valid;

wire [REC_W-1:0] dd_rec;
wire             dd_out_valid;
// A lane request acknowledges as it leaves the lane's L1 (the engine is idle
// then); the engine acknowledges from S_DECIDE.
// The lane's and the engine's lookups, updates and acks never meet in one
// cycle (checked in simulation below), so each port's key is selected by the
// engine's side, a register or a state: the lane's strobes, which wait on
// the AXI port through its L2 (`l2_fire`, `l1_move`), only enable, and the
// key compares start from registers (rtl/README, "Cutting the decision cone").

clio_dedup #(.ENTRIES(DEDUP_ENTRIES), .KEY_WIDTH(KEY_W), .REC_WIDTH(REC_W)) dedup_inst (
    .clk(clk), .rst(rst),
    .s_lookup_key(dd_look_valid ? dd_look_key : lane_dd_look_key), .s_lookup_valid(lane_dd_look || dd_look_valid),
    .m_lookup_hit(dd_hit), .m_lookup_rec(dd_rec), .m_lookup_full(dd_full), .m_lookup_last(dd_last),
    .m_lookup_count(dd_count),
    .m_lookup_valid(dd_out_valid),
    .s_update_key(at_rec_valid ? at_rec_key : dd_upd_valid ? dd_upd_key : lane_dd_ins_key),
    .s_update_rec(at_rec_valid ? at_rec : dd_upd_valid ? dd_upd_rec : lane_dd_ins_rec),
    .s_update_mode(dd_upd_valid && !at_rec_valid ? dd_upd_mode : 2'd0), .s_update_valid(lane_dd_ins || at_rec_valid || dd_upd_valid),
    .s_ack_session(es_decide ? h_session : lane_ack_session),
    .s_ack_id(es_decide ? h_ack : lane_ack_id),
    .s_ack_valid(lane_ack || dec_ack),
    .s_close_session(dd_close_session), .s_close_valid(dd_close_valid), .s_clear(dd_clear)
);

wire                   sel_ring = es_ring || es_ring_w;
wire                   ring_idle, ring_done, ring_full, ring_empty, ring_bad_head, ring_rejected;
wire [31:0]            ring_free;
wire [DATA_WIDTH-1:0]  ring_tx_desc;
wire [ID_WIDTH-1:0]    rg_awid, rg_arid;
wire [ADDR_WIDTH-1:0]  rg_awaddr, rg_araddr;
wire [7:0]             rg_awlen, rg_arlen;
wire [2:0]             rg_awsize, rg_arsize;
wire [1:0]             rg_awburst, rg_arburst;
wire                   rg_awvalid, rg_wvalid, rg_wlast, rg_bready, rg_arvalid, rg_rready;
wire [DATA_WIDTH-1:0]  rg_wdata;
wire [BYTES-1:0]       rg_wstrb;
wire                   rg_awready, rg_wready, rg_bvalid, rg_arready, rg_rvalid, rg_rlast;
wire [ID_WIDTH-1:0]    rg_bid, rg_rid;
wire [1:0]             rg_bresp, rg_rresp;
wire [DATA_WIDTH-1:0]  rg_rdata;

clio_ring_dma #(.DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .ID_WIDTH(ID_WIDTH)) ring_inst (
    .clk(clk), .rst(rst),
    .rx_base(cfg_rx_base[ADDR_WIDTH-1:0]), .rx_slots(cfg_rx_slots),
    .tx_base(cfg_tx_base[ADDR_WIDTH-1:0]), .tx_slots(cfg_tx_slots),
    .cmd(ring_cmd), .cmd_valid(ring_valid), .idle(ring_idle), .s_rx_desc(ring_desc),
    .done(ring_done), .res_full(ring_full), .res_free(ring_free), .res_empty(ring_empty), .res_bad_head(ring_bad_head),
    .res_rejected(ring_rejected), .m_tx_desc(ring_tx_desc),
    .m_axi_awid(rg_awid), .m_axi_awaddr(rg_awaddr), .m_axi_awlen(rg_awlen), .m_axi_awsize(rg_awsize),
    .m_axi_awburst(rg_awburst), .m_axi_awvalid(rg_awvalid), .m_axi_awready(rg_awready),
    .m_axi_wdata(rg_wdata), .m_axi_wstrb(rg_wstrb), .m_axi_wlast(rg_wlast), .m_axi_wvalid(rg_wvalid),
    .m_axi_wready(rg_wready), .m_axi_bid(rg_bid), .m_axi_bresp(rg_bresp),
    .m_axi_bvalid(rg_bvalid), .m_axi_bready(rg_bready),
    .m_axi_arid(rg_arid), .m_axi_araddr(rg_araddr), .m_axi_arlen(rg_arlen), .m_axi_arsize(rg_arsize),
    .m_axi_arburst(rg_arburst), .m_axi_arvalid(rg_arvalid), .m_axi_arready(rg_arready),
    .m_axi_rid(rg_rid), .m_axi_rdata(rg_rdata), .m_axi_rresp(rg_rresp),
    .m_axi_rlast(rg_rlast), .m_axi_rvalid(rg_rvalid), .m_axi_rready(rg_rready)
);

wire                 fw_match, fw_pending, fw_free, fw_tag_ok, fw_fence_wait, fw_fence_free;
wire [FIW-1:0]       fw_match_index, fw_free_index;
wire [15:0]          fw_free_gen;
wire [31:0]          fw_pid, fw_req_id, fw_retry_of, fw_first, fw_total_len, fw_offset;
wire [7:0]           fw_opcode;
wire [63:0]          fw_va;
wire [FFW-1:0]       fw_fence_index, fw_fence_free_index;
wire [31:0]          fw_fence_req_id, fw_fence_retry_of, fw_fence_total_len, fw_fence_offset;
wire [63:0]          fw_fence_va;
wire [15:0]          fw_session, fw_dd_session, fw_fence_session;
wire [31:0]          fw_epoch, fw_fence_epoch;

clio_fwd_table #(.SLOTS(FWD_SLOTS), .FENCES(FENCE_SLOTS)) fwd_inst (
    .clk(clk), .rst(rst),
    .q_pid(o_pid), .q_session(h_session), .q_opcode(h_op), .q_id(dd_id),
    .m_match(fw_match), .m_match_index(fw_match_index), .m_pending(fw_pending),
    .m_free(fw_free), .m_free_index(fw_free_index), .m_free_gen(fw_free_gen),
    .s_tag(desc_reg[SLOT_OFF_TAG*8 +: 32]), .m_tag_ok(fw_tag_ok), .m_pid(fw_pid), .m_opcode(fw_opcode),
    .m_req_id(fw_req_id), .m_retry_of(fw_retry_of), .m_first_req_id(fw_first), .m_va(fw_va),
    .m_total_len(fw_total_len), .m_offset(fw_offset),
    .m_session(fw_session), .m_dd_session(fw_dd_session), .m_epoch(fw_epoch),
    .m_fence_wait(fw_fence_wait), .m_fence_index(fw_fence_index), .m_fence_req_id(fw_fence_req_id),
    .m_fence_retry_of(fw_fence_retry_of), .m_fence_va(fw_fence_va), .m_fence_total_len(fw_fence_total_len),
    .m_fence_offset(fw_fence_offset), .m_fence_session(fw_fence_session), .m_fence_epoch(fw_fence_epoch),
    .m_fence_any(fw_fence_any), .m_fence_free(fw_fence_free),
    .m_fence_free_index(fw_fence_free_index),
    .s_pid(h_pid), .s_opcode(h_op), .s_req_id(h_req_id), .s_retry_of(h_retry_of), .s_va(h_va),
    .s_total_len(h_total_len), .s_offset(h_offset),
    .s_session(h_session), .s_epoch(h_epoch), .s_first(dd_id),
    .s_dd_session(h_op == OP_OPEN_SESSION ? 16'd0 : h_session),
    .s_set(fw_set), .s_set_new(fw_set_new), .s_set_index(fw_set_index),
    .s_release(fw_release), .s_release_index(fw_release_index),
    .s_fence_set(fw_fence_set), .s_fence_set_index(fw_fence_set_index),
    .s_fence_clear(fw_fence_clear), .s_fence_clear_index(fw_fence_clear_index),
    .s_orphan(fw_orphan), .s_orphan_all(fw_orphan_all), .s_orphan_session(fw_orphan_session)
);

// Region gate (issue #22): set from the poll (GATE_SET; EPOCH clears it),
// checked at S_DECIDE after the fence gate over the held header's
// [va, va + max(total_len, 1)). Classes as the model's `gate_class`. The
// verdict is registered (`gt_ready`): S_DECIDE waits a cycle for it when it
// is not the held header's or the table changed, only while an entry is set
// (`gate_wait`, in the engine's hold).
wire gt_set, gt_clear;
wire        gt_set_ok, gt_ready, gt_refuse, gt_track;
wire [7:0]  gt_status;
wire [31:0] gt_track_entry, gt_track_pid;
wire [63:0] gt_track_va, gt_track_mask;
function automatic [1:0] gate_class(input [7:0] op);
    gate_class = (op == OP_READ || op == OP_POINTER_CHASE) ? 2'd1
        : (op == OP_WRITE || op == OP_TAS || op == OP_CAS || op == OP_FAA || op == OP_LOCK || op == OP_UNLOCK) ? 2'd2
        : op == OP_OFFLOAD_CALL ? 2'd3 : 2'd0;
endfunction
// The header checked: the one the engine decides on next. While it idles
// with no packet held that is the parser's (a packet taken as its last beat
// enters loads the header registers from it at that edge, and the verdict
// is ready at S_DECIDE), else the header registers; S_DECIDE waits unless
// the verdict is the held header's either way.
wire        gt_pick_p = es_idle && !pkt_have_reg;
wire [31:0] gt_pid = gt_pick_p ? p_pid : h_pid;
wire [63:0] gt_va = gt_pick_p ? p_va : h_va;
wire [31:0] gt_len = gt_pick_p ? p_total_len : h_total_len;
wire [1:0]  gt_class = gate_class(gt_pick_p ? p_opcode : h_op);
// The GATE_DIRTY just pushed: its blocks are marked at this edge, so
// the control-forwarding stage's next check sees them set.
wire        gt_mark;

clio_region_gate #(.ENTRIES(GATE_ENTRIES)) gate_inst (
    .clk(clk), .rst(rst),
    .s_set_valid(gt_set), .s_set_entry(desc_reg[SLOT_OFF_TAG*8 +: 32]), .s_set_pid(desc_reg[SLOT_OFF_PID*8 +: 32]),
    .s_set_va(desc_reg[SLOT_OFF_A*8 +: 64]), .s_set_len(desc_reg[SLOT_OFF_B*8 +: 64]),
    .s_set_mode(desc_reg[SLOT_OFF_STATUS*8 +: 3]), .m_set_ok(gt_set_ok), .s_clear(gt_clear),
    .s_req_pid(gt_pid), .s_req_va(gt_va), .s_req_len(gt_len), .s_req_class(gt_class),
    .m_ready(gt_ready), .m_refuse(gt_refuse), .m_status(gt_status), .m_track(gt_track), .m_track_entry(gt_track_entry),
    .m_track_pid(gt_track_pid), .m_track_va(gt_track_va), .m_track_mask(gt_track_mask), .m_live(gt_live),
    .s_mark_valid(gt_mark), .s_mark_entry(gt_track_entry), .s_mark_mask(gt_track_mask)
);

// Pointer chase: request fields (first beat) and the walk.
wire [63:0] cq_key = bswap64(pkt01[CLIO_HEADER_LEN*8 +: 64]);
wire [15:0] cq_key_off = {pkt01[(CLIO_HEADER_LEN+8)*8 +: 8], pkt01[(CLIO_HEADER_LEN+9)*8 +: 8]};
wire [15:0] cq_next_off = {pkt01[(CLIO_HEADER_LEN+10)*8 +: 8], pkt01[(CLIO_HEADER_LEN+11)*8 +: 8]};
wire [15:0] cq_value_off = {pkt01[(CLIO_HEADER_LEN+12)*8 +: 8], pkt01[(CLIO_HEADER_LEN+13)*8 +: 8]};
wire [15:0] cq_value_len = {pkt01[(CLIO_HEADER_LEN+14)*8 +: 8], pkt01[(CLIO_HEADER_LEN+15)*8 +: 8]};
wire [31:0] cq_max_hops = bswap32(pkt01[(CLIO_HEADER_LEN+16)*8 +: 32]);
/* verilator lint_off WIDTH */
wire        cq_ok = h_plen == CHASE_REQ_LEN && cq_value_len <= CHASE_MAX_VALUE && cq_max_hops != 0
    && cq_max_hops <= CHASE_MAX_HOPS && CHASE_RESP_LEN + cq_value_len <= cfg_mtu;
/* verilator lint_on WIDTH */
wire        ch_start = es_dispatch && !eng_hold && h_op == OP_POINTER_CHASE && cq_ok;
wire [1:0]  ch_cmd;
wire [63:0] ch_va, ch_m_node;
wire [31:0] ch_m_hops;
wire        ch_valid;

clio_chase chase_inst (
    .clk(clk), .rst(rst),
    .s_va(h_va), .s_key(cq_key), .s_key_offset(cq_key_off), .s_next_offset(cq_next_off),
    .s_value_offset(cq_value_off), .s_max_hops(cq_max_hops), .s_start(ch_start),
    .s_word(chr_word), .s_word_valid(chr_word_valid),
    .m_cmd(ch_cmd), .m_va(ch_va), .m_node(ch_m_node), .m_hops(ch_m_hops), .m_valid(ch_valid),
    .m_ready(chr_walk_ready)
);

// The chase's reads (clio_chase_read): each step of the walk translated and
// read in S_CH, the engine's translation, page and memory states its calls
// (back to S_CH); the answer written as the walk goes.
wire        chr_walk_ready, chr_word_valid, chr_step, chr_xl, chr_d0, chr_page, chr_read;
wire        chr_wr_found, chr_wr_value, chr_wr_not_found, chr_resp_state, chr_done, chr_found;
wire [63:0] chr_word, chr_cur, chr_pa;
wire [64:0] chr_xl_end;
wire [31:0] chr_hops;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] chr_k;                                   // at most a beat
/* verilator lint_on UNUSEDSIGNAL */
wire [15:0] chr_got, chr_vlen;
/* verilator lint_off WIDTH */
wire [63:0] ch_rd = mem_rdata >> {d_lane, 3'd0};      // the bytes read, from lane 0
/* verilator lint_on WIDTH */
clio_chase_read #(.DATA_WIDTH(DATA_WIDTH)) chr_inst (
    .clk(clk), .rst(rst),
    .s_start(ch_start), .s_vlen(cq_value_len), .s_valid(es_ch), .s_en(!eng_hold),
    .s_walk_valid(ch_valid), .s_walk_cmd(ch_cmd), .s_walk_va(ch_va), .s_walk_hops(ch_m_hops),
    .m_walk_ready(chr_walk_ready), .m_word_valid(chr_word_valid), .m_word(chr_word),
    .m_step(chr_step), .m_xl(chr_xl), .m_xl_end(chr_xl_end), .m_d0(chr_d0), .m_page(chr_page), .m_cur(chr_cur),
    .s_pg_ok(pg_ok), .s_pg_start(pg_start), .s_pg_end(pg_end), .s_pg_ppn(pg_ppn), .s_pg_shift(pg_shift),
    .m_read(chr_read), .m_pa(chr_pa), .m_k(chr_k), .s_rd(ch_rd),
    .s_k({{(15-OW){1'b0}}, d_k}),
    .m_wr_found(chr_wr_found), .m_wr_value(chr_wr_value), .m_wr_not_found(chr_wr_not_found), .m_got(chr_got),
    .m_resp_state(chr_resp_state), .m_done(chr_done), .m_found(chr_found), .m_vlen(chr_vlen), .m_hops(chr_hops)
);

// Response builder write port, driven by the state.
reg                  rb_wr_en;
reg [15:0]           rb_wr_off;
reg [DATA_WIDTH-1:0] rb_wr_data;
reg [OW:0]           rb_wr_len;
wire                 rb_ready;
wire [DATA_WIDTH-1:0] rb_tdata;
wire [BYTES-1:0]     rb_tkeep;
wire                 rb_tvalid, rb_tlast;

// The packer takes a beat while the builder has room; the chunk's last beat
// starts its packet in the same cycle (payload length: the bytes appended).
wire                 pk_ready, pk_beat, pk_start;
wire [15:0]          pk_plen;

clio_resp_builder #(.DATA_WIDTH(DATA_WIDTH), .BEATS(PKT_BEATS)) resp_inst (
    .clk(clk), .rst(rst),
    .wr_en(rb_wr_en), .wr_off(rb_wr_off), .wr_data(rb_wr_data), .wr_len(rb_wr_len),
    .hdr_opcode(at_start ? at_ans_op : wl_start ? wl_ans_op : pk_solo ? ps_op : r_op),
    .hdr_flags(at_start ? at_ans_flags : wl_start ? 8'd0 : pk_solo ? ps_flags : r_flags),
    .hdr_status(at_start ? at_ans_status : wl_start ? STATUS_OK : pk_solo ? ps_status : r_status),
    .hdr_pid(at_start ? at_ans_pid : wl_start ? wl_ans_pid : pk_solo ? ps_pid : o_pid),
    .hdr_req_id(at_start ? at_ans_req_id : wl_start ? wl_ans_req_id : pk_solo ? ps_req_id : o_req_id),
    .hdr_retry_of(at_start ? at_ans_retry_of : wl_start ? wl_ans_retry_of : pk_solo ? ps_retry_of : o_retry_of),
    .hdr_va(at_start ? at_ans_va : wl_start ? wl_ans_va : pk_solo ? ps_va : r_va),
    .hdr_total_len(at_start ? at_ans_total_len : wl_start ? wl_ans_total_len : pk_solo ? ps_total_len : r_total_len),
    .hdr_offset(at_start ? at_ans_offset : wl_start ? wl_ans_offset : pk_on ? pk_off : r_offset),
    .hdr_payload_len(at_start ? ATOMIC_RESP_LEN[15:0] : wl_start ? 16'd0 : pk_on ? pk_plen : r_plen),
    .hdr_session(at_start ? at_ans_session : wl_start ? wl_ans_session : pk_solo ? ps_session : o_session),
    .hdr_epoch(at_start ? at_ans_epoch : wl_start ? wl_ans_epoch : pk_solo ? ps_epoch : r_epoch),
    .start(rb_start || pk_start || wl_start || at_start), .ready(rb_ready), .busy(rb_busy), .done(),
    .m_axis_tdata(rb_tdata), .m_axis_tkeep(rb_tkeep), .m_axis_tvalid(rb_tvalid),
    .m_axis_tready(m_axis_tready && !lo_valid), .m_axis_tlast(rb_tlast)
);

// The engine's answers (and a chase, which writes its answer as it walks)
// wait while the READ stage owns the builder or no buffer is free; the next
// READ's data phase waits for the stage (one packer).
// The write lane's answer is older than any the engine starts: the engine's
// answers (the record's too) and a READ's data phase (the packer) wait for it.
wire rb_wait = pk_solo || !rb_ready || !wl_idle || lane_pre_hold;
// The region gate's registered verdict is a cycle behind a new header or
// table (only while an entry is set, clio_region_gate's `m_ready`).
wire gate_wait = es_decide && !gt_ready;
assign eng_hold = (rb_wait && (es_send || es_info
        || es_replay || ae_at_resp || (es_ch && chr_resp_state)
        || (es_cf && cf_wr_state) || (es_rp && rp_wr_state)
        || (es_dispatch && h_op == OP_POINTER_CHASE)))
    || (!wl_idle && (ae_at_rec || (es_rd && rdd_begin)))
    || at_hold || gate_wait;
// While the atomics stage holds an atomic the engine takes no packet until
// the atomic's record is in (its lookup, ack and quota count see it, as in
// the model), and starts no answer, no data phase (the mover, the write lane)
// and no atomic of its own until the stage has answered: the stage's answer
// is older, and nothing else touches the word before the stage's write. The
// engine's port, bucket and ring accesses wait for the port (`at_own`).
assign at_hold = (es_idle && at_rec_pend)
    || (!at_idle && (es_send || es_info || (es_rp && rp_wr_state)
        || es_replay || ae_at_resp || (es_ch && chr_resp_state)
        || (es_cf && cf_wr_state) || (es_dispatch && h_op == OP_POINTER_CHASE)
        || ae_at_rec || (es_rd && rdd_begin) || (es_wr && wd_begin) || ae_at_read));
// The stage's answer: after an older write lane's or READ stage's, with the
// builder free and no other start in this cycle. The packer may be on with
// nothing to append: a READ stage that ended while the engine waits in
// S_RD in ST_BEGIN (`at_hold`) keeps it on for that READ, whose commands are not
// issued yet; the stage's answer goes first (the rb_wr mux below).
assign at_ans_ready = rb_ready && !rb_start && (!pk_on || (es_rd && rdd_begin)) && !pk_solo && wl_idle;

clio_atomic_stage #(.DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .KEY_WIDTH(KEY_W), .REC_WIDTH(REC_W)) at_inst (
    .clk(clk), .rst(rst),
    .s_valid(at_cmd_valid), .s_ready(at_s_ready), .s_addr(at_pa[ADDR_WIDTH-1:0]), .s_opcode(h_op),
    .s_arg0(bswap64(pkt01[CLIO_HEADER_LEN*8 +: 64])), .s_arg1(bswap64(pkt01[(CLIO_HEADER_LEN+8)*8 +: 64])),
    .s_key(own_key), .s_hdr_opcode(r_op), .s_hdr_flags(r_flags), .s_hdr_pid(h_pid), .s_hdr_req_id(h_req_id),
    .s_hdr_retry_of(h_retry_of), .s_hdr_va(h_va), .s_hdr_total_len(h_total_len), .s_hdr_offset(h_offset),
    .s_hdr_session(h_session), .s_hdr_epoch(r_epoch),
    .s_port_free(at_port_free), .m_port_own(at_own),
    .m_mem_valid(at_mem_valid), .m_mem_write(at_mem_write), .m_mem_addr(at_mem_addr), .m_mem_wdata(at_mem_wdata),
    .m_mem_wstrb(at_mem_wstrb), .s_mem_ready(at_mem_ready_raw), .s_mem_done(at_mem_done_raw), .s_mem_rdata(eng_rdata),
    .m_rec_valid(at_rec_valid), .m_rec_key(at_rec_key), .m_rec(at_rec), .m_rec_pending(at_rec_pend),
    .m_ans_valid(at_ans_valid), .s_ans_ready(at_ans_ready), .m_ans_opcode(at_ans_op), .m_ans_flags(at_ans_flags),
    .m_ans_status(at_ans_status), .m_ans_pid(at_ans_pid), .m_ans_req_id(at_ans_req_id),
    .m_ans_retry_of(at_ans_retry_of), .m_ans_va(at_ans_va), .m_ans_total_len(at_ans_total_len),
    .m_ans_offset(at_ans_offset), .m_ans_session(at_ans_session), .m_ans_epoch(at_ans_epoch),
    .m_ans_data(at_ans_data), .m_idle(at_idle)
);

// The lane's answer starts when the builder has a free buffer and no other
// start is under way (the engine's is held while the lane holds a write).
assign wl_ans_ready = rb_ready && !rb_start && !pk_on;

assign m_axis_tdata = lo_valid ? lane_out_tdata : rb_tdata;
assign m_axis_tkeep = lo_valid ? lane_out_tkeep : rb_tkeep;
assign m_axis_tvalid = lo_valid || rb_tvalid;
assign m_axis_tlast = lo_valid ? lo_last : rb_tlast;

// ---------------------------------------------------------------------------
// Combinational helpers.
// ---------------------------------------------------------------------------
/* verilator lint_off WIDTH */
wire        is_nonidem = h_op == OP_WRITE || h_op == OP_TAS || h_op == OP_CAS || h_op == OP_FAA
    || h_op == OP_LOCK || h_op == OP_UNLOCK || h_op == OP_ALLOC || h_op == OP_FREE || h_op == OP_OFFLOAD_CALL;
wire [31:0] key_off = h_op == OP_WRITE ? h_offset : 32'd0;
// The dedup id: the first attempt's id (`retry_of` of a retry).
assign dd_id = h_retry_of != 32'd0 ? h_retry_of : h_req_id;
wire [KEY_W-1:0] own_key = {h_op, key_off, dd_id, h_session};
// Session credentials of the packet in hand.
wire        needs_sess = h_op != OP_INFO && h_op != OP_OPEN_SESSION;
wire [SIW-1:0] h_sidx = h_session[SIW-1:0];

// VA class -> page shift.
wire [63:0] va_hi = xl_cur >> cfg_va_bits;
wire [1:0]  va_cls = xl_cur >> (cfg_va_bits - 2);
wire [7:0]  cls_shift = cfg_class_shift[va_cls*8 +: 8];
wire [63:0] pg_mask = (64'd1 << pg_shift) - 64'd1;

// A READ's range past the top of the VA space (clio_xl_ctl's ST_BEGIN check).
wire [64:0] rd_end_full = {1'b0, h_va} + {33'd0, h_total_len};
wire        rd_wraps = rd_end_full[64];
// A WRITE's range end (ST_BEGIN's wrap check, done at dispatch).
wire [64:0] wr_end_full = {1'b0, h_va + h_offset} + {49'd0, h_plen};
// The page shift of a VA's class, 0 for a VA outside the space (ST_PAGE's
// checks on `xl_cur`, here on a request's first byte).
function [7:0] first_shift(input [63:0] va);
    reg [1:0] cls;
    begin
        cls = va >> (cfg_va_bits - 2);
        first_shift = (va >> cfg_va_bits) != 64'd0 ? 8'd0 : cfg_class_shift[cls*8 +: 8];
    end
endfunction
// A WRITE's first byte and its page (ST_PAGE's checks of it): a WRITE
// with a payload, no wrap and a valid first page starts its TLB lookup from
// the dedup verdict (S_DD_W1); any other goes through S_DISPATCH.
wire [63:0] wr_va0 = h_va + h_offset;
wire [7:0]  wr_shift0 = first_shift(wr_va0);
wire        wr_fast = h_op == OP_WRITE && h_plen != 16'd0 && !wr_end_full[64] && wr_shift0 != 0;
// A READ that passes S_DISPATCH's checks (no payload or offset, within the
// response bound, no wrap) with a valid first page starts its TLB lookup
// from S_DECIDE; any other goes through S_DISPATCH.
wire [7:0]  rd_shift0 = first_shift(h_va);
wire        rd_fast = h_op == OP_READ && h_plen == 16'd0 && h_offset == 32'd0 && h_total_len != 32'd0
    && !(max_resp_kib != 16'd0 && h_total_len > {6'd0, max_resp_kib, 10'd0}) && !rd_wraps && rd_shift0 != 0;
// An atomic that passes S_DISPATCH's checks (operands, an 8-byte aligned
// word, no wrap) with a valid page starts its TLB lookup from the dedup
// verdict (S_DD_W1), as a WRITE; any other goes through S_DISPATCH.
wire [64:0] at_end = {1'b0, h_va} + ATOMIC_RESP_LEN;
wire [7:0]  at_shift0 = first_shift(h_va);
wire        at_fast = ((h_op == OP_CAS && h_plen == CAS_ARGS_LEN) || (h_op == OP_FAA && h_plen == FAA_ARGS_LEN)
    || ((h_op == OP_TAS || h_op == OP_LOCK || h_op == OP_UNLOCK) && h_plen == 16'd0))
    && h_total_len == ATOMIC_RESP_LEN && h_offset == 32'd0 && h_va[2:0] == 3'd0 && !at_end[64] && at_shift0 != 0;
// S_DECIDE: the packet passed the header, epoch and credential checks, so
// its ack frees records and raises the floor (`dec_floor`: the floor as it
// leaves it, which S_DD_LOOK1 would see).
wire        dec_pass = h_len >= CLIO_HEADER_LEN && !h_short && !h_crc && (h_op & OP_RESPONSE_BIT) == 0
    && !h_malformed && (!needs_sess || (epoch_ok(h_epoch) && h_sess_ok));
assign      dec_ack = es_decide && !gate_wait && dec_pass && needs_sess && h_ack != 32'd0;
// The ack raises the session's floor; the packet's first id is below it (a late duplicate).
wire        ack_above_floor = h_floor == 32'd0 || serial_before(h_floor, h_ack);
wire        dd_below_floor = h_floor != 32'd0 && serial_before(dd_id, h_floor);
wire [31:0] dec_floor = (needs_sess && h_ack != 32'd0 && ack_above_floor)
    ? h_ack : h_floor;
// Data phase: the current byte and its page.
wire [63:0] rd_cur = rd_va + d_sent + d_filled;
wire [63:0] wr_cur = d_base + d_pos;
wire        rd_in_page = pg_ok && rd_cur >= pg_start && {1'b0, rd_cur} < pg_end;
wire        wr_in_page = pg_ok && wr_cur >= pg_start && {1'b0, wr_cur} < pg_end;
wire [63:0] rd_pa = ({32'd0, pg_ppn} << pg_shift) | (rd_cur & pg_mask);
wire [63:0] wr_pa = ({32'd0, pg_ppn} << pg_shift) | (wr_cur & pg_mask);
// A WRITE the write lane takes: its first pass translated one page (which
// holds the whole payload) and there is a payload; its record's fields.
wire        wl_one = xl_pages == 32'd1 && pg_ok && h_plen != 16'd0;
// The page's PPN: the TLB's answer in ST_TLBW's hand-off, else the page's.
wire [31:0] wl_ppn = xc_tlbw ? tlb_ppn : pg_ppn;
wire [63:0] wl_pa = ({32'd0, wl_ppn} << pg_shift) | ((h_va + h_offset) & pg_mask);
// An atomic's word, from the same PPN (translated in ST_TLBW or before).
wire [63:0] at_pa = ({32'd0, wl_ppn} << pg_shift) | (h_va & pg_mask);
wire [REC_W-1:0] wl_rec = {128'd0, 8'd0, h_offset, h_total_len, h_va, STATUS_OK, r_flags};
// Handed over from ST_OK already when the first pass's only page (the
// last) is translated there (S_WR's hand-off in clio_wr_data's ST_BEGIN, a cycle sooner).
wire        xl_more = ({1'b0, xl_cur | pg_mask} + 1'b1) < xl_end;   // a page after this one
// Sooner still from ST_TLBW: the first pass's only page hits the TLB
// with WRITE permission (ST_OK's work in the cycle the answer comes).
wire        wl_last1 = !xl_pass2 && !xl_more && xl_for_wr && xl_pages == 32'd1 && h_plen != 16'd0;
wire        wl_early = xc_at_ok && wl_last1;
wire        wl_tlb = xc_tlbw && tlb_out_valid && tlb_hit && (tlb_perms & xl_need) == xl_need && wl_last1;
wire        wl_cmd_valid = (es_wr && wd_begin && !eng_hold && wl_one) || wl_early || wl_tlb;
// An atomic the atomics stage takes this cycle (see `at_s_ready` above).
wire        at_last1 = !xl_pass2 && !xl_more && !pm_on && fq_count == 0
    && (h_op == OP_TAS || h_op == OP_CAS || h_op == OP_FAA) && at_s_ready;
wire        at_cmd_valid = !eng_hold && at_last1 && (xl_for_at || ae_at_read)
    && ((xc_tlbw && tlb_out_valid && tlb_hit && (tlb_perms & xl_need) == xl_need)
        || xc_at_ok || ae_at_read);
wire [64:0] rd_page_left = pg_end - {1'b0, rd_cur};
wire [64:0] wr_page_left = pg_end - {1'b0, wr_cur};

// The page's share of the rest of the read chunk / of the write payload (one mover command).
wire [31:0] rd_seg = rd_page_left < {33'd0, d_n - d_filled} ? rd_page_left[31:0] : d_n - d_filled;
wire [31:0] wr_seg = wr_page_left < {33'd0, h_plen - d_pos} ? wr_page_left[31:0] : h_plen - d_pos;

// Write source: payload bytes [d_pos, d_pos + 64) of the packet.
wire [31:0] src_off = CLIO_HEADER_LEN + (wl_mem ? {16'd0, wl_src_pos} : d_pos);
wire [PBW-1:0] src_beat = src_off >> OW;
wire [OW-1:0] src_lane = src_off[OW-1:0];
wire        src_bank = wl_mem ? wl_bank : eng_bank;
wire [31:0] src_idx = (src_bank ? PB1 : 0) + {{(32-PBW){1'b0}}, src_beat};
assign pb_rd_a_idx = src_idx;
wire [2*DATA_WIDTH-1:0] src_pair = pb_rd_a_pair;
wire [DATA_WIDTH-1:0] src_window = src_pair >> {src_lane, 3'd0};

// Page-table slot address.
wire [63:0] slot_addr = cfg_table_base + pg_bucket * (SLOTS * PTE_LEN) + pg_slot * PTE_LEN;

// Descriptor fields of the TX command in hand.
wire [7:0]  c_kind = desc_reg[SLOT_OFF_KIND*8 +: 8];
wire [63:0] c_bucket = desc_reg[SLOT_OFF_C*8 +: 64];
wire [31:0] c_slot = desc_reg[SLOT_OFF_F*8 +: 32];
wire        c_in_range = c_bucket < (64'd1 << BUCKET_BITS) && c_slot < SLOTS;
wire [63:0] c_slot_addr = cfg_table_base + c_bucket * (SLOTS * PTE_LEN) + c_slot * PTE_LEN;

// Offload pass-through (issue #16, OFFLOAD_TAGS > 0): the call's packet
// (header and payload, L = 56 + payload bytes) leaves as ceil(L / 40)
// OFFLOAD_REQ fragments; OFFLOAD_REPLY fragments from the poll are
// reassembled by clio_offload_fwd and answer their call (clio_ctrl_fwd's OF_ANS entry).
localparam OF_ON = OFFLOAD_TAGS > 0;
wire [15:0]  of_i;                                   // fragment pushed next (clio_ctrl_fwd)
wire of_call;
wire [15:0]  of_len = CLIO_HEADER_LEN[15:0] + h_plen;
// ceil(L / 40) = floor((L + 39) * 52429 / 2^21), exact for L < 2^16 + 1.
/* verilator lint_off UNUSEDSIGNAL */
wire [37:0]  of_cnt_prod = ({22'd0, of_len} + 38'd39) * 38'd52429;
/* verilator lint_on UNUSEDSIGNAL */
wire [15:0]  of_cnt = of_cnt_prod[36:21];
wire [31:0]  of_seq, of_tag;
wire         of_done, of_answer;
wire         tc_of_frag;                             // an OFFLOAD_REPLY fragment taken (clio_tx_cmd)
wire [31:0]  of_ans_pid, of_ans_req_id, of_ans_retry_of, of_ans_total_len, of_ans_offset, of_ans_epoch, of_ans_plen;
wire [63:0]  of_ans_va;
wire [15:0]  of_ans_session;
wire [7:0]   of_ans_status;
wire [319:0] of_rd_data;
wire [5:0]   of_rd_left;
// The answer's bound: the response bound of `cfg_info`, at least the MTU.
wire [31:0]  of_bound = {6'd0, max_resp_kib, 10'd0} > {16'd0, cfg_mtu} ? {6'd0, max_resp_kib, 10'd0} : {16'd0, cfg_mtu};
// An answer's bytes written into the response builder (clio_ctrl_fwd): up
// to the rest of a buffer row per cycle, at byte `of_fill` of the payload.
wire [5:0]   of_k;
wire [15:0]  of_fill;
wire         of_wr;
wire         cf_wr_state;
// Fragment `of_i` of the packet: 40 bytes at 40 * of_i, zero past its end.
wire [31:0]  of_off = {16'd0, of_i} * 32'd40;
wire [31:0]  of_idx = (eng_bank ? PB1 : 0) + (of_off >> OW);
assign pb_rd_b_idx = of_idx;
wire [2*DATA_WIDTH-1:0] of_pair = pb_rd_b_pair >> {of_off[OW-1:0], 3'd0};
reg  [319:0] of_data;
always @* begin : of_frag_bytes
    integer j;
    for (j = 0; j < 40; j = j + 1)
        of_data[j*8 +: 8] = of_off + j < {16'd0, of_len} ? of_pair[j*8 +: 8] : 8'd0;
end

// Without the pass-through (OFFLOAD_TAGS = 0) the module is left out: its
// outputs are tied off and nothing of it is synthesized.
generate if (OF_ON) begin : g_offload
    clio_offload_fwd #(.TAGS(OFFLOAD_TAGS), .RESP_BYTES(OFFLOAD_RESP_BYTES)) offload_inst (
        .clk(clk), .rst(rst),
        .m_seq(of_seq), .m_tag(of_tag), .s_call_valid(of_call),
        .s_call_pid(h_pid), .s_call_req_id(h_req_id), .s_call_retry_of(h_retry_of), .s_call_va(h_va),
        .s_call_total_len(h_total_len), .s_call_offset(h_offset), .s_call_session(h_session), .s_call_epoch(h_epoch),
        .s_frag_valid(tc_of_frag),
        .s_frag_tag(desc_reg[SLOT_OFF_TAG*8 +: 32]), .s_frag_seq(desc_reg[SLOT_OFF_REQ_ID*8 +: 32]),
        .s_frag_len(desc_reg[SLOT_OFF_F*8 +: 32]), .s_frag_index(desc_reg[SLOT_OFF_PID*8 +: 16]),
        .s_frag_count(desc_reg[(SLOT_OFF_PID+2)*8 +: 16]), .s_frag_data(desc_reg[SLOT_OFF_A*8 +: 320]),
        .m_done(of_done), .m_answer(of_answer),
        .m_ans_pid(of_ans_pid), .m_ans_req_id(of_ans_req_id), .m_ans_retry_of(of_ans_retry_of), .m_ans_va(of_ans_va),
        .m_ans_total_len(of_ans_total_len), .m_ans_offset(of_ans_offset), .m_ans_session(of_ans_session),
        .m_ans_epoch(of_ans_epoch), .m_ans_status(of_ans_status), .m_ans_plen(of_ans_plen),
        .m_rd_data(of_rd_data), .m_rd_left(of_rd_left), .s_rd_take(of_wr), .s_rd_len(of_k[5:0]),
        .m_answered(), .m_dropped()
    );
end else begin : g_no_offload
    assign of_seq = 0;
    assign of_tag = 0;
    assign of_done = 1'b0;
    assign of_answer = 1'b0;
    assign {of_ans_pid, of_ans_req_id, of_ans_retry_of, of_ans_total_len, of_ans_offset, of_ans_epoch, of_ans_plen} = 0;
    assign of_ans_va = 0;
    assign of_ans_session = 0;
    assign of_ans_status = 0;
    assign of_rd_data = 0;
    assign of_rd_left = 0;
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_of = ^{of_call, tc_of_frag};
    /* verilator lint_on UNUSEDSIGNAL */
end endgenerate

// The page-table slot read back for a command (lane of the slot in the beat;
// clio_tx_cmd decodes it).
wire [127:0] old_pte = mem_rdata >> {mem_addr[OW-1:0], 3'd0};

// Dedup record of the response in hand (payload bytes: the atomics' old
// value, or the AllocResp of a reply).
wire [127:0] rec_payload = {64'd0, bswap64(sync_old)};
assign cur_rec = {(r_plen == ATOMIC_RESP_LEN ? rec_payload : (r_plen == ALLOC_RESP_LEN ? r_payload[127:0] : 128'd0)),
    r_plen[7:0], r_offset, r_total_len, r_va, r_status, r_flags};

// ALLOC / FREE payload (first beat) and the descriptor forwarding it.
wire [63:0] fa_size = bswap64(pkt01[CLIO_HEADER_LEN*8 +: 64]);
wire [7:0]  fa_perms = pkt01[(CLIO_HEADER_LEN+8)*8 +: 8];
wire [7:0]  fa_shift = pkt01[(CLIO_HEADER_LEN+9)*8 +: 8];
wire [47:0] fa_rsvd = pkt01[(CLIO_HEADER_LEN+10)*8 +: 48];
wire        fa_ok = h_op == OP_ALLOC
    ? (h_plen == ALLOC_REQ_LEN && fa_perms != 0 && (fa_perms & ~(PERM_READ | PERM_WRITE)) == 0
        && (fa_shift == 0 || (fa_shift >= PTE_MIN_PAGE_SHIFT && fa_shift <= PTE_MAX_PAGE_SHIFT)) && fa_rsvd == 0)
    : h_op == OP_FREE ? h_plen == FREE_REQ_LEN
    : h_plen == 16'd0;                                   // CLOSE_SESSION: no payload
// OPEN_SESSION payload (OpenSessionReq, bytes 56..87 of the packet): the
// reserved bytes and the pad must be zero, no key without a session to join.
wire [255:0] op_pl = pkt01[CLIO_HEADER_LEN*8 +: 256];
wire [15:0]  op_join = {op_pl[7:0], op_pl[15:8]};
wire [63:0]  op_key = bswap64(op_pl[64 +: 64]);
wire         op_ok = h_plen == OPEN_SESSION_REQ_LEN && op_pl[16 +: 48] == 48'd0 && op_pl[128 +: 128] == 128'd0
    && (op_join != 16'd0 || op_key == 64'd0);

// S_DISPATCH's verdict (clio_dispatch_check): fail with a status, or the
// one stage or translation the request starts; the arm loads per verdict.
wire        dc_fail, dc_read, dc_write, dc_wr_setup, dc_atomic, dc_fence, dc_chase, dc_cf;
wire [7:0]  dc_status;
clio_dispatch_check dispatch_check (
    .s_op(h_op), .s_plen(h_plen), .s_offset(h_offset), .s_total_len(h_total_len), .s_va_low(h_va[2:0]),
    .s_rd_wraps(rd_wraps), .s_wr_wraps(wr_end_full[64]), .s_max_resp_kib(max_resp_kib),
    .s_fw_pending(fw_pending), .s_fw_fence_free(fw_fence_free), .s_fw_free(fw_free),
    .s_cq_ok(cq_ok), .s_fa_ok(fa_ok),
    .m_fail(dc_fail), .m_status(dc_status), .m_read(dc_read), .m_write(dc_write), .m_wr_setup(dc_wr_setup),
    .m_atomic(dc_atomic), .m_fence(dc_fence), .m_chase(dc_chase), .m_cf(dc_cf)
);

// S_DECIDE's verdict (clio_intake_decide): the intake decisions in the
// model's order; the arm loads per verdict (and raises the ack floor).
wire        id_drop, id_nack, id_hdr_bad, id_fail, id_epoch, id_admit, id_info, id_open;
wire        id_cf_match, id_cf_gt, id_cf_of, id_rd_fast, id_dd_look, id_dispatch;
wire [7:0]  id_status;
wire        id_late_dup = dec_floor != 32'd0 && serial_before(dd_id, dec_floor);
clio_intake_decide #(.OF_ON(OF_ON)) intake_decide (
    .s_len(h_len), .s_short(h_short), .s_crc(h_crc), .s_op(h_op), .s_malformed(h_malformed),
    .s_unknown(h_unknown), .s_epoch_ok(epoch_ok(h_epoch)), .s_sess_ok(h_sess_ok), .s_status(h_status),
    .s_flags(h_flags), .s_plen(h_plen), .s_mtu(cfg_mtu), .s_pid(h_pid), .s_max_pid(cfg_max_pid),
    .s_fence_wait(fw_fence_wait), .s_gt_refuse(gt_refuse), .s_gt_status(gt_status), .s_gt_track(gt_track),
    .s_rd_fast(rd_fast), .s_nonidem(is_nonidem), .s_late_dup(id_late_dup),
    .m_drop(id_drop), .m_nack(id_nack), .m_hdr_bad(id_hdr_bad), .m_fail(id_fail), .m_status(id_status),
    .m_epoch(id_epoch), .m_admit(id_admit), .m_info(id_info), .m_open(id_open), .m_cf_match(id_cf_match),
    .m_cf_gt(id_cf_gt), .m_cf_of(id_cf_of), .m_rd_fast(id_rd_fast), .m_dd_look(id_dd_look),
    .m_dispatch(id_dispatch)
);
reg [DATA_WIDTH-1:0] fw_desc;
always @* begin
    fw_desc = 0;
    fw_desc[SLOT_OFF_KIND*8 +: 8] = h_op == OP_ALLOC ? DESC_ALLOC_REQ : h_op == OP_FREE ? DESC_FREE_REQ
        : h_op == OP_OPEN_SESSION ? DESC_SESSION_OPEN_REQ : DESC_SESSION_CLOSE_REQ;
    fw_desc[SLOT_OFF_PID*8 +: 32] = h_pid;
    fw_desc[SLOT_OFF_TAG*8 +: 32] = {fw_free_gen, 16'd0} | fw_free_index;
    fw_desc[SLOT_OFF_REQ_ID*8 +: 32] = h_req_id;
    if (h_op == OP_ALLOC || h_op == OP_FREE) begin
        fw_desc[SLOT_OFF_A*8 +: 64] = h_va;
        fw_desc[SLOT_OFF_B*8 +: 64] = fa_size;
    end else if (h_op == OP_OPEN_SESSION) begin
        fw_desc[SLOT_OFF_A*8 +: 64] = op_key;
        fw_desc[SLOT_OFF_B*8 +: 16] = op_join;
    end else begin
        fw_desc[SLOT_OFF_B*8 +: 16] = h_session;
    end
    if (h_op == OP_ALLOC) begin
        fw_desc[SLOT_OFF_FLAGS*8 +: 8] = (h_flags & FLAG_FIXED_VA) != 0 ? DESC_FLAG_FIXED_OR_MOVED : 8'd0;
        fw_desc[SLOT_OFF_PAGE_SHIFT*8 +: 8] = fa_shift;
        fw_desc[SLOT_OFF_C*8 +: 8] = fa_perms;
    end
end

// The control-forwarding stage (clio_ctrl_fwd): forwarded requests, gate
// reports and offload calls pushed to the RX ring, and offload answers from
// the poll. The engine hands it the packet (or the answer) in S_CF (entry
// `cf_entry`) and does its ring accesses, notice flushes and sends for it
// (returning to S_CF) until it says how the packet goes on.
wire [2:0] cf_entry;
wire                  cf_ready, cf_done, cf_call, cf_ring_load, cf_fw_set, cf_fw_set_new, cf_reserve;
wire                  cf_of_call, cf_ans_load, cf_r_big, cf_plen_load, cf_offset_load;
wire [2:0]            cf_next;
wire [1:0]            cf_call_kind, cf_ring_cmd;
wire [7:0]            cf_r_status;
wire [15:0]           cf_r_plen;
wire [31:0]           cf_r_offset;
wire [7:0]            cf_status;
wire [DATA_WIDTH-1:0] cf_ring_desc;
wire [FIW-1:0]        cf_fw_set_index;
clio_ctrl_fwd #(.DATA_WIDTH(DATA_WIDTH), .FIW(FIW)) cf_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_cf), .s_entry(cf_entry), .s_ready(cf_ready), .s_en(!eng_hold),
    .m_done(cf_done), .m_next(cf_next), .m_status(cf_status),
    .m_call_valid(cf_call), .m_call_kind(cf_call_kind), .m_ring_cmd(cf_ring_cmd), .m_ring_load(cf_ring_load),
    .m_ring_desc(cf_ring_desc), .s_ring_full(ring_full), .s_ring_free(ring_free), .s_fq_pending(fq_count != 0),
    .s_fw_match(fw_match), .s_fw_match_index(fw_match_index), .s_fw_fence_wait(fw_fence_wait),
    .s_fw_free_index(fw_free_index), .s_fw_desc(fw_desc), .m_fw_set(cf_fw_set), .m_fw_set_new(cf_fw_set_new),
    .m_fw_set_index(cf_fw_set_index), .m_reserve(cf_reserve),
    .s_gt_ready(gt_ready), .s_gt_refuse(gt_refuse), .s_gt_status(gt_status), .s_gt_track(gt_track),
    .s_gt_track_pid(gt_track_pid),
    .s_gt_track_entry(gt_track_entry), .s_gt_track_va(gt_track_va), .s_gt_track_mask(gt_track_mask),
    .m_gt_mark(gt_mark),
    .s_of_cnt(of_cnt), .s_of_len(of_len), .s_of_tag(of_tag), .s_of_seq(of_seq), .s_of_data(of_data),
    .m_of_i(of_i), .m_of_call(cf_of_call),
    .s_of_ans_plen(of_ans_plen), .s_of_ans_status(of_ans_status), .s_of_bound(of_bound), .s_mtu(cfg_mtu),
    .s_of_rd_left(of_rd_left), .s_wr_block(pk_on), .m_ans_load(cf_ans_load), .m_r_status(cf_r_status),
    .m_r_big(cf_r_big), .m_plen_load(cf_plen_load), .m_r_plen(cf_r_plen), .m_offset_load(cf_offset_load),
    .m_r_offset(cf_r_offset), .m_of_wr(of_wr), .m_of_k(of_k), .m_of_fill(of_fill), .m_wr_state(cf_wr_state)
);

// The TX-command stage (clio_tx_cmd): the command the poll popped, checked
// and carried out (page-table slots, TLB invalidations, free pages, epoch,
// gate entries, offload answer fragments) or passed to the reply states. The
// engine hands it over in S_CMD, does its slot reads for it (returning to
// S_CMD) and follows its verdict.
wire                  tc_done, tc_va_load, tc_call, tc_inv_load, tc_inv_valid, tc_inv_exact;
wire                  tc_push, tc_epoch, tc_gt_set, tc_ready;
wire [2:0]            tc_next;
wire [63:0]           tc_va, tc_mem_addr, tc_inv_vpn;
wire [31:0]           tc_inv_pid, tc_inv_pages;
wire [4:0]            tc_inv_shift;
wire [DATA_WIDTH-1:0] tc_mem_wdata;
wire [BYTES-1:0]      tc_mem_wstrb;
clio_tx_cmd #(.DATA_WIDTH(DATA_WIDTH), .OF_ON(OF_ON ? 1 : 0)) tc_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_cmd), .s_en(!eng_hold), .s_ready(tc_ready), .s_desc(desc_reg),
    .m_done(tc_done), .m_next(tc_next), .m_va_load(tc_va_load), .m_va(tc_va),
    .s_in_range(c_in_range), .s_slot_addr(c_slot_addr), .s_data_start(cfg_data_start), .s_data_end(cfg_data_end),
    .m_call_valid(tc_call), .m_mem_addr(tc_mem_addr), .s_old_pte(old_pte), .m_mem_wdata(tc_mem_wdata),
    .m_mem_wstrb(tc_mem_wstrb),
    .m_inv_load(tc_inv_load), .m_inv_valid(tc_inv_valid), .m_inv_exact(tc_inv_exact), .m_inv_pid(tc_inv_pid),
    .m_inv_vpn(tc_inv_vpn), .m_inv_pages(tc_inv_pages), .m_inv_shift(tc_inv_shift),
    .s_push_known(push_known), .s_push_ready(push_ready), .m_push(tc_push), .m_epoch(tc_epoch),
    .s_gt_set_ok(gt_set_ok), .m_gt_set(tc_gt_set), .m_of_frag(tc_of_frag), .s_of_done(of_done),
    .s_of_answer(of_answer)
);

// The TX-ring poll loop: slot by slot, each popped command on to clio_tx_cmd
// (every way out of a command comes back to S_POLL, the poll's next slot).
wire tp_pop, tp_popped, tp_report, tp_cmd, tp_done;
clio_tx_poll tp_inst (
    .clk(clk), .rst(rst),
    .s_idle(es_idle), .s_valid(es_poll), .s_en(!eng_hold), .s_slots(cfg_tx_slots),
    .m_pop(tp_pop), .s_empty(ring_empty), .s_bad_head(ring_bad_head), .s_rejected(ring_rejected),
    .m_popped(tp_popped), .m_report(tp_report), .m_cmd(tp_cmd), .m_done(tp_done)
);

// The reply stage (clio_tx_reply): REPLY and SESSION_REPLY answer the
// forwarded request their tag names, then the PID's fences; a command
// rejected anywhere on the way is reported from here. The engine hands it
// over in S_RP (entry `rp_entry`), sends for it (returning to S_RP) and
// follows its verdict: the poll's next slot or the command's report.
wire [1:0] rp_entry;
wire         rp_done, rp_reject, rp_load, rp_load_rec, rp_rec, rp_send, rp_fence, rp_own_clear;
wire         rp_wr_state, rp_wr_open, rp_sess_set, rp_sess_open;
wire [7:0]   rp_r_status, rp_r_flags;
wire [63:0]  rp_r_va, rp_sess_key;
wire [31:0]  rp_r_epoch, rp_sess_pid;
wire [15:0]  rp_r_plen, rp_sess, rp_sess_dquota, rp_sess_lquota;
wire [255:0] rp_r_payload;
clio_tx_reply #(.DATA_WIDTH(DATA_WIDTH), .SESSIONS(SESSIONS)) rp_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_rp), .s_en(!eng_hold), .s_ready(), .s_entry(rp_entry), .s_desc(desc_reg),
    .m_done(rp_done), .m_reject(rp_reject),
    .s_fw_tag_ok(fw_tag_ok), .s_fw_pid(fw_pid), .s_fw_opcode(fw_opcode), .s_fw_va(fw_va), .s_fw_epoch(fw_epoch),
    .s_fw_pending(fw_pending), .s_fw_fence_wait(fw_fence_wait), .s_epoch(epoch_reg),
    .m_load(rp_load), .m_load_rec(rp_load_rec), .m_r_status(rp_r_status), .m_r_flags(rp_r_flags),
    .m_r_va(rp_r_va), .m_r_epoch(rp_r_epoch), .m_r_plen(rp_r_plen), .m_r_payload(rp_r_payload),
    .m_rec(rp_rec), .m_send(rp_send), .m_fence(rp_fence), .m_own_clear(rp_own_clear),
    .m_wr_state(rp_wr_state), .m_wr_open(rp_wr_open),
    .m_sess_set(rp_sess_set), .m_sess(rp_sess), .m_sess_open(rp_sess_open), .m_sess_pid(rp_sess_pid),
    .m_sess_key(rp_sess_key), .m_sess_dquota(rp_sess_dquota), .m_sess_lquota(rp_sess_lquota)
);

// The page-table walk and its fault (clio_xl_walk): a page the TLB missed is
// handed over as the TLB answers (clio_xl_ctl's ST_TLBW, `xc_walk`); the
// engine runs the stage in S_XL while the translation is at ST_WALK, loads
// the bucket, the PTE and a fault's PPN as it says; its calls (the fault
// queue's flush, the ring's PROBE; each returns to S_XL) and its verdict
// (S_FAIL, the report, the fault queued or the TLB insert, then ST_OK) go
// through the translation stage.
wire xc_walk;
wire xw_valid = xc_walk;
wire xw_bucket, xw_pte, xw_fail, xw_report, xw_flush, xw_probe, xw_fault_ppn, xw_enq_unit, xw_enq, xw_insert;
wire xw_walking, xw_at_pte;
wire [7:0] xw_status;
// The PTE the walk read names a page inside the data region (else UNMAPPED).
wire pg_in_data;
clio_page_in_region pg_region_inst (
    .s_ppn(pg_ppn), .s_shift({3'd0, pg_shift}), .s_lo(cfg_data_start), .s_hi(cfg_data_end), .m_in(pg_in_data)
);
clio_xl_walk xw_inst (
    .clk(clk), .rst(rst),
    .s_valid(xw_valid), .s_ready(), .s_run(xc_walking), .s_idle(es_idle), .s_en(!eng_hold),
    .m_hash_valid(hash_valid), .s_hash_valid(hash_out_valid),
    .m_ptf_valid(ptf_valid), .s_ptf_valid(ptf_out_valid),
    .s_perm_status(perm_status), .s_perm_fault(perm_fault),
    .s_in_data(pg_in_data), .s_lane_busy(lane_walk && !lane_quiet),
    .m_fault_valid(fault_valid), .s_fault_valid(fault_out_valid), .s_fault_ok(fault_ok), .s_fault_code(fault_code),
    .s_credit(rx_credit != 0), .s_fq_any(fq_count != 0), .s_fq_full(fq_count == FAULT_QUEUE),
    .m_bucket(xw_bucket), .m_pte(xw_pte), .m_fail(xw_fail), .m_report(xw_report), .m_status(xw_status),
    .m_flush(xw_flush), .m_probe(xw_probe), .m_fault_ppn(xw_fault_ppn), .m_enq_unit(xw_enq_unit),
    .m_enq(xw_enq), .m_insert(xw_insert), .m_ptf_own(xw_ptf_own), .m_walking(xw_walking), .m_at_pte(xw_at_pte)
);

// The translation loop (clio_xl_ctl): the engine runs it in S_XL, entered at
// `xl_at` (`xl_call`), loads the range's and page's registers as it says,
// does the walk's calls and the error report it asks for (each returning to
// S_XL) and leaves as it says: S_FAIL, the next page or the range's end
// (the write lane's or atomics stage's hand-off, the atomic's read, or back
// to `xl_ret`).
wire xc_clear, xc_look, xc_tlb_load, xc_fail, xc_report, xc_flush, xc_probe, xc_ok, xc_next, xc_last;
wire xc_hand_off, xc_let_go, xc_at_read, xc_ret;
wire [7:0] xc_status;
clio_xl_ctl xc_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_xl), .s_at(xl_at), .s_ready(), .s_idle(es_idle), .s_en(!eng_hold),
    .s_wraps(xl_end[64]), .s_at_end({1'b0, xl_cur} >= xl_end), .s_va_bad(va_hi != 0 || cls_shift == 0),
    .s_pass2(xl_pass2), .s_more(xl_more),
    .s_tlb_valid(tlb_out_valid), .s_tlb_hit(tlb_hit), .s_tlb_perm_ok((tlb_perms & xl_need) == xl_need),
    .s_walk_ok(xw_insert || xw_enq_unit || xw_enq), .s_walk_fail(xw_fail), .s_walk_report(xw_report),
    .s_walk_status(xw_status), .s_walk_flush(xw_flush), .s_walk_probe(xw_probe),
    .s_wl_take(wl_last1 && wl_ready && at_idle), .s_at_take(at_cmd_valid), .s_at_read(xl_for_at && at_idle),
    .m_clear(xc_clear), .m_look(xc_look), .m_tlb_load(xc_tlb_load), .m_walk(xc_walk), .m_fail(xc_fail),
    .m_report(xc_report), .m_status(xc_status), .m_flush(xc_flush), .m_probe(xc_probe), .m_ok(xc_ok),
    .m_next(xc_next), .m_last(xc_last), .m_hand_off(xc_hand_off), .m_let_go(xc_let_go), .m_at_read(xc_at_read),
    .m_ret(xc_ret), .m_tlbw(xc_tlbw), .m_at_ok(xc_at_ok), .m_walking(xc_walking)
);

// The WRITE's data phase (clio_wr_data): the engine runs it in S_WR; the
// write lane's hand-off, the engine's own pass through the mover, the page
// translations and the fault-queue flush it calls (see the module).
wire wd_hand_off, wd_start, wd_flush, wd_answer, wd_page, wd_cmd, wd_cmd_taken, wd_last_take;
clio_wr_data #(.OW(OW)) wd_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_wr), .s_ready(), .s_idle(es_idle), .s_en(!eng_hold),
    .s_one(wl_one), .s_lane_ready(wl_ready), .s_lane_mem(wl_mem),
    .s_flush_first(fq_count != 0 && xl_pages > TLB_ENTRIES), .s_base(h_va + h_offset), .s_plen(h_plen),
    .s_in_page(wr_in_page), .s_cmd_ready(mv_cmd_ready), .s_take_valid(mv_take_valid), .s_take(mv_take),
    .s_done(mv_done),
    .m_pos(d_pos), .m_base(d_base), .m_hand_off(wd_hand_off), .m_start(wd_start), .m_flush(wd_flush),
    .m_answer(wd_answer), .m_page(wd_page), .m_cmd(wd_cmd), .m_cmd_taken(wd_cmd_taken),
    .m_last_take(wd_last_take), .m_begin(wd_begin), .m_move(wd_move)
);

// The atomics that stay on the engine (LOCK, UNLOCK, an atomic with a fault
// queued) and the record of an executed request (clio_at_engine): the engine
// runs it in S_AT, entered at `at_at` (`at_call`, `at_read`), and does the
// word's read, the loads and the exits it asks for (see the module). Its
// ST_WR holds the write on the port until the port takes it whole (AW and
// W), its ST_WRB waits for the B; the answer's payload, the dedup record and
// the answer's start all go in the one cycle the B is in and the builder is
// free, so nothing else can take the builder's fill buffer between payload
// and start.
clio_at_engine ae_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_at), .s_at(at_at), .s_ready(), .s_idle(es_idle), .s_en(!eng_hold),
    .s_take(at_cmd_valid), .s_sync_valid(sync_out_valid), .s_sync_write(sync_write),
    .s_sync_ok(sync_status == STATUS_OK), .s_lock_over(at_lock_over),
    .s_port_ready(eng_ready), .s_port_done(eng_done), .s_free(!rb_wait && !pk_on),
    .m_let_go(ae_let_go), .m_read(ae_read), .m_fail(ae_fail), .m_result(ae_result), .m_wr_load(ae_wr_load),
    .m_payload(ae_payload), .m_locks(ae_locks), .m_send(ae_send), .m_record(ae_record),
    .m_at_read(ae_at_read), .m_at_resp(ae_at_resp), .m_at_rec(ae_at_rec), .m_wr(ae_wr), .m_port(ae_port),
    .m_wr_now(ae_wr_now)
);

// The READ's data phase (clio_rd_data): the engine runs it in S_RD; the
// packer's start, the answer's fields, the mover's commands, the hand to the
// READ stage and the stream table's insert are its loads, the fault-queue
// flush, the page translations and an empty READ's send its calls (see the
// module). The page, its PA and the segment stay here (`rd_*` above).
wire rdd_start, rdd_flush, rdd_empty, rdd_solo, rdd_page, rdd_cmd, rdd_cmd_taken, rdd_drained;
wire rdd_insert, rdd_finish, rdd_pm_end;
clio_rd_data rdd_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_rd), .s_ready(), .s_idle(es_idle), .s_en(!eng_hold),
    .s_pm(pm_on), .s_streams(streams_on), .s_solo(pk_solo),
    .s_flush_first(fq_count != 0 && xl_pages > TLB_ENTRIES), .s_sent0(pm_on ? pm_sent : 32'd0),
    .s_total(rd_total), .s_mtu(cfg_mtu),
    .s_in_page(rd_in_page), .s_mv_idle(mv_idle), .s_cmd_ready(mv_cmd_ready), .s_cmd_len(mv_len),
    .s_pk_empty(pk_filled == 16'd0), .s_rb_ready(rb_ready),
    .m_sent(d_sent), .m_n(d_n), .m_filled(d_filled), .m_start(rdd_start), .m_flush(rdd_flush),
    .m_empty(rdd_empty), .m_solo(rdd_solo), .m_page(rdd_page), .m_cmd(rdd_cmd), .m_cmd_taken(rdd_cmd_taken),
    .m_drained(rdd_drained), .m_insert(rdd_insert), .m_finish(rdd_finish), .m_pm_end(rdd_pm_end),
    .m_begin(rdd_begin), .m_move(rdd_move)
);

// The READ packer and the READ stage (clio_rd_stage): the data phase's
// start, stop (an empty READ, a page that went away), drain and hand-off
// are the engine's strobes (held with it); the mover's beats, the builder's
// room and the stage's last packet its own.
clio_rd_stage #(.OW(OW)) rs_inst (
    .clk(clk), .rst(rst),
    .s_start(rdd_start), .s_off0(pm_on ? pm_sent : 32'd0),
    .s_stop(rdd_empty || (es_fail && !eng_hold)), .s_drained(rdd_drained), .s_solo(rdd_solo),
    .s_restart(es_rd && rdd_begin),
    .s_op(r_op), .s_flags(r_flags), .s_status(r_status), .s_pid(o_pid), .s_req_id(o_req_id),
    .s_retry_of(o_retry_of), .s_va(r_va), .s_total_len(r_total_len), .s_session(o_session), .s_epoch(r_epoch),
    .s_rd_valid(mv_rd_valid), .s_rd_mark(mv_rd_mark), .s_rd_len(mv_rd_len), .s_rb_ready(rb_ready),
    .s_rb_start(rb_start), .s_hold(lane_pre_hold),
    .m_on(pk_on), .m_filled(pk_filled), .m_off(pk_off), .m_plen(pk_plen), .m_ready(pk_ready), .m_beat(pk_beat),
    .m_start(pk_start), .m_solo(pk_solo), .m_last(), .m_op(ps_op), .m_flags(ps_flags),
    .m_status(ps_status), .m_pid(ps_pid), .m_req_id(ps_req_id), .m_retry_of(ps_retry_of), .m_va(ps_va),
    .m_total_len(ps_total_len), .m_session(ps_session), .m_epoch(ps_epoch)
);

// The error report (clio_err_report): run in S_REP, entered with `rep_*`
// set; the notice flush and the ring push are its calls (back to S_REP),
// then the engine goes on at `rep_ret`.
wire                  er_done, er_flush, er_push, er_desc_load;
wire [DATA_WIDTH-1:0] er_desc;
clio_err_report #(.DATA_WIDTH(DATA_WIDTH)) er_inst (
    .clk(clk), .rst(rst),
    .s_valid(es_rep), .s_en(!eng_hold), .s_status(rep_status), .s_pid(rep_pid), .s_va(rep_va),
    .s_opcode(rep_opcode), .m_done(er_done),
    .s_fq_pending(fq_count != 0), .m_flush(er_flush), .m_push(er_push), .m_desc_load(er_desc_load),
    .m_desc(er_desc), .s_ring_full(ring_full)
);

always @* begin
    rb_wr_en = 1'b0;
    rb_wr_off = CLIO_HEADER_LEN;
    rb_wr_data = 0;
    rb_wr_len = 0;
    if (at_start) begin
        // The atomics stage's answer: the old value, with its start (the
        // packer has nothing to append then: `at_ans_ready`).
        rb_wr_en = 1'b1;
        rb_wr_data = {{(DATA_WIDTH-64){1'b0}}, at_ans_data};
        rb_wr_len = ATOMIC_RESP_LEN;
    end else if (pk_on) begin
        // A READ's data phase: the mover's beats, appended in order.
        rb_wr_en = pk_beat;
        rb_wr_off = CLIO_HEADER_LEN + pk_filled;
        rb_wr_data = mv_rd_data;
        rb_wr_len = mv_rd_len;
    end else if (!eng_hold) begin
        // One state flag at most is up: a parallel case, as the case over the
        // engine's state it was (no priority chain in the builder's input).
        (* parallel_case *) case (1'b1)
        es_info: begin
            // cfg_info is the InfoResp the firmware wrote (register map
            // FPREG_INFO); the epoch is this block's own.
            rb_wr_en = 1'b1;
            rb_wr_data = {{(DATA_WIDTH-INFO_RESP_LEN*8){1'b0}}, cfg_info[INFO_RESP_LEN*8-1:480],
                bswap32(epoch_reg), cfg_info[447:0]};
            rb_wr_len = INFO_RESP_LEN;
        end
        es_replay: begin
            rb_wr_en = 1'b1;
            rb_wr_data = rec_reg[152 +: 128];
            rb_wr_len = rec_reg[144 +: 8];
        end
        es_at: begin
            rb_wr_en = ae_payload;
            rb_wr_data = bswap64(sync_old);
            rb_wr_len = ATOMIC_RESP_LEN;
        end
        es_rp: if (rp_wr_state) begin
            // The answer's payload (clio_tx_reply), written as it is sent.
            rb_wr_en = 1'b1;
            rb_wr_data = rp_wr_open ? {{(DATA_WIDTH-256){1'b0}}, r_payload} : {{(DATA_WIDTH-128){1'b0}}, r_payload[127:0]};
            rb_wr_len = rp_wr_open ? OPEN_SESSION_RESP_LEN : ALLOC_RESP_LEN;
        end
        es_ch: begin
            if (chr_wr_found) begin
                // Found: the fixed ChaseResp part first (the builder takes a
                // payload in order), the value bytes follow.
                rb_wr_en = 1'b1;
                rb_wr_data = {{(DATA_WIDTH-128){1'b0}}, bswap32(32'd1), bswap32(ch_m_hops), bswap64(ch_m_node)};
                rb_wr_len = CHASE_RESP_LEN;
            end else if (chr_wr_value) begin
                // Value bytes after the fixed ChaseResp part.
                rb_wr_en = 1'b1;
                rb_wr_off = CLIO_HEADER_LEN + CHASE_RESP_LEN + chr_got;
                rb_wr_data = mem_rdata >> {d_lane, 3'd0};
                rb_wr_len = d_k;
            end else if (chr_wr_not_found) begin
                // Not found: the fixed part alone.
                rb_wr_en = 1'b1;
                rb_wr_data = {{(DATA_WIDTH-128){1'b0}}, bswap32(32'd0), bswap32(chr_hops), 64'd0};
                rb_wr_len = CHASE_RESP_LEN;
            end
        end
        es_cf: begin
            // An offload answer's bytes, up to the rest of a buffer row per cycle.
            rb_wr_en = of_wr;
            rb_wr_off = CLIO_HEADER_LEN + of_fill;
            rb_wr_data = {{(DATA_WIDTH-320){1'b0}}, of_rd_data};
            rb_wr_len = of_k;
        end
        default: begin end
        endcase
    end
end
/* verilator lint_on WIDTH */

// ---------------------------------------------------------------------------
// READ streams: what the engine does next from S_IDLE; the table
// (clio_stream_table) says whether a stream of the packet's PID is open.
// ---------------------------------------------------------------------------
wire sq_pid_open;
// A READ waits while the table is full, a FENCE while its PID streams; else
// a packet in hand and open streams take turns. A request the lane handed
// over was taken in already: it goes first.
wire pm_must = pkt_have_reg && ((h_op == OP_READ && {{(32-STW){1'b0}}, sq_cnt} == STN) || (h_op == OP_FENCE && sq_pid_open));
wire streams_on = STREAMS != 0 && cfg_streams_on;
wire streams_open = streams_on && sq_cnt != 0;
// The engine's packet's last beat enters now (it loads the header registers).
wire eng_in_last = p_tvalid && parser_ready && !to_lane && p_tlast;
wire pm_want = streams_on && sq_cnt != 0 && lane_empty && wl_idle && !(pkt_have_reg && h_from_lane)
    && (!pkt_have_reg || pm_turn || pm_must);
// The packet in hand that must follow a pump waits for one: a pump also
// waits for the write lane (its packet reads memory the lane's WRITE may
// still be writing), and taking the packet meanwhile would answer a FENCE
// before its PID's stream packets or overfill the table with a READ.
wire pm_hold = streams_on && pm_must && !h_from_lane;
// A pump (and a poll) starts only with the lane empty, which a steady flood
// of lane requests never leaves: after PUMP_WAIT lane requests taken in while
// the engine waits in S_IDLE to pump or poll, the lane takes no new one until
// the engine has started (a stream packet then goes out at least once per
// PUMP_WAIT + 1 lane requests). The order stays the one the events report.
assign eng_waits = fl_wait || es_idle && ((poll_req && !pkt_have_reg) || (streams_on && sq_cnt != 0
    && !(pkt_have_reg && h_from_lane) && (!pkt_have_reg || pm_turn || pm_must)));
// S_IDLE polls first (a poll asked for, nothing in hand), else pumps if it may.
wire idle_poll = poll_req && lane_empty && !pkt_have_reg && wl_idle;
wire [31:0] sq_q_pid, sq_q_req_id, sq_q_retry_of, sq_q_epoch, sq_n;
wire [15:0] sq_q_session;
wire [63:0] sq_q_cur;

// The READ-stream table (clio_stream_table): the data phase's insert (S_RD),
// the pump's start from S_IDLE, a pumped page that went away (S_FAIL) and the
// round-robin at the pump's end (S_PM_END) are the engine's strobes (held
// with it); entry 0 and the pumped stream its outputs.
clio_stream_table #(.STN(STN)) sqt_inst (
    .clk(clk), .rst(rst),
    .s_insert(rdd_insert), .s_pid(h_pid), .s_req_id(h_req_id), .s_retry_of(h_retry_of), .s_epoch(h_epoch),
    .s_total(h_total_len), .s_sent(d_sent + d_n), .s_session(h_session), .s_va(h_va),
    .s_pump(es_idle && !eng_hold && !idle_poll && pm_want), .s_mtu(cfg_mtu),
    .s_cut(es_fail && !eng_hold), .s_rotate(es_pm_end && !eng_hold && fq_count == 0),
    .m_cnt(sq_cnt), .m_pid_open(sq_pid_open), .m_q_pid(sq_q_pid), .m_q_req_id(sq_q_req_id),
    .m_q_retry_of(sq_q_retry_of), .m_q_session(sq_q_session), .m_q_epoch(sq_q_epoch), .m_q_cur(sq_q_cur),
    .m_q_n(sq_n), .m_pm_on(pm_on), .m_pm_pid(pm_pid), .m_pm_va(pm_va), .m_pm_total(pm_total),
    .m_pm_sent(pm_sent)
);

// ---------------------------------------------------------------------------
// The engine (clio_engine): the sequencer of every request the lanes do not
// finish, its ports under the top's names.
// ---------------------------------------------------------------------------
clio_engine #(.DATA_WIDTH(DATA_WIDTH), .BUCKET_BITS(BUCKET_BITS), .FAULT_QUEUE(FAULT_QUEUE), .OW(OW), .SW(SW),
    .SIW(SIW), .DCW(DCW), .FIW(FIW), .FFW(FFW), .KEY_W(KEY_W), .REC_W(REC_W)) eng_inst (
    .clk(clk), .rst(rst), .ack_above_floor(ack_above_floor), .ae_fail(ae_fail), .ae_let_go(ae_let_go),
    .ae_locks(ae_locks), .ae_read(ae_read), .ae_record(ae_record), .ae_result(ae_result), .ae_send(ae_send),
    .ae_wr_load(ae_wr_load), .at_end(at_end), .at_fast(at_fast), .at_pa(at_pa), .at_shift0(at_shift0),
    .at_wdata(at_wdata), .at_wstrb(at_wstrb), .cf_ans_load(cf_ans_load), .cf_call(cf_call),
    .cf_call_kind(cf_call_kind), .cf_done(cf_done), .cf_fw_set(cf_fw_set), .cf_fw_set_index(cf_fw_set_index),
    .cf_fw_set_new(cf_fw_set_new), .cf_next(cf_next), .cf_of_call(cf_of_call), .cf_offset_load(cf_offset_load),
    .cf_plen_load(cf_plen_load), .cf_r_big(cf_r_big), .cf_r_offset(cf_r_offset), .cf_r_plen(cf_r_plen),
    .cf_r_status(cf_r_status), .cf_reserve(cf_reserve), .cf_ring_cmd(cf_ring_cmd), .cf_ring_desc(cf_ring_desc),
    .cf_ring_load(cf_ring_load), .cf_status(cf_status), .ch_va(ch_va), .chr_cur(chr_cur), .chr_d0(chr_d0),
    .chr_done(chr_done), .chr_found(chr_found), .chr_k(chr_k), .chr_pa(chr_pa), .chr_page(chr_page),
    .chr_read(chr_read), .chr_step(chr_step), .chr_vlen(chr_vlen), .chr_xl(chr_xl), .chr_xl_end(chr_xl_end),
    .cls_shift(cls_shift), .cur_rec(cur_rec), .d_filled(d_filled), .d_n(d_n), .d_sent(d_sent), .dc_atomic(dc_atomic),
    .dc_cf(dc_cf), .dc_chase(dc_chase), .dc_fail(dc_fail), .dc_fence(dc_fence), .dc_read(dc_read),
    .dc_status(dc_status), .dc_wr_setup(dc_wr_setup), .dc_write(dc_write), .dd_below_floor(dd_below_floor),
    .dd_count(dd_count), .dd_full(dd_full), .dd_hit(dd_hit), .dd_out_valid(dd_out_valid), .dd_rec(dd_rec),
    .eng_done(eng_done), .eng_hold(eng_hold), .eng_in_last(eng_in_last), .eng_rdata(eng_rdata),
    .eng_ready(eng_ready), .epoch_reg(epoch_reg), .er_desc(er_desc), .er_desc_load(er_desc_load), .er_done(er_done),
    .er_flush(er_flush), .er_push(er_push), .fault_ppn(fault_ppn), .fault_pte(fault_pte), .fl_go(fl_go),
    .fw_dd_session(fw_dd_session), .fw_fence_epoch(fw_fence_epoch), .fw_fence_free_index(fw_fence_free_index),
    .fw_fence_index(fw_fence_index), .fw_fence_offset(fw_fence_offset), .fw_fence_req_id(fw_fence_req_id),
    .fw_fence_retry_of(fw_fence_retry_of), .fw_fence_session(fw_fence_session),
    .fw_fence_total_len(fw_fence_total_len), .fw_fence_va(fw_fence_va), .fw_first(fw_first), .fw_free(fw_free),
    .fw_offset(fw_offset), .fw_opcode(fw_opcode), .fw_pid(fw_pid), .fw_req_id(fw_req_id), .fw_retry_of(fw_retry_of),
    .fw_session(fw_session), .fw_total_len(fw_total_len), .h_ack(h_ack), .h_dquota(h_dquota), .h_epoch(h_epoch),
    .h_from_lane(h_from_lane), .h_locks(h_locks), .h_offset(h_offset), .h_op(h_op), .h_request(h_request),
    .h_sidx(h_sidx), .h_total_len(h_total_len), .h_va(h_va), .hash_index(hash_index), .id_admit(id_admit),
    .id_cf_gt(id_cf_gt), .id_cf_match(id_cf_match), .id_cf_of(id_cf_of), .id_dd_look(id_dd_look),
    .id_dispatch(id_dispatch), .id_drop(id_drop), .id_epoch(id_epoch), .id_fail(id_fail), .id_hdr_bad(id_hdr_bad),
    .id_info(id_info), .id_nack(id_nack), .id_open(id_open), .id_rd_fast(id_rd_fast), .id_status(id_status),
    .idle_poll(idle_poll), .is_nonidem(is_nonidem), .lane_drain(lane_drain), .lane_empty(lane_empty),
    .lane_handoff(lane_handoff), .lo_valid(lo_valid), .lq_count(lq_count), .needs_sess(needs_sess),
    .of_ans_epoch(of_ans_epoch), .of_ans_offset(of_ans_offset), .of_ans_pid(of_ans_pid), .of_ans_plen(of_ans_plen),
    .of_ans_req_id(of_ans_req_id), .of_ans_retry_of(of_ans_retry_of), .of_ans_session(of_ans_session),
    .of_ans_total_len(of_ans_total_len), .of_ans_va(of_ans_va), .op_ok(op_ok), .own_key(own_key),
    .p_opcode(p_opcode), .p_tvalid(p_tvalid), .parser_ready(parser_ready), .pg_mask(pg_mask), .pm_hold(pm_hold),
    .pm_on(pm_on), .pm_total(pm_total), .pm_va(pm_va), .pm_want(pm_want), .poll(poll), .ptf_flags(ptf_flags),
    .ptf_found(ptf_found), .ptf_perms(ptf_perms), .ptf_ppn(ptf_ppn), .ptf_slot(ptf_slot), .rb_ready(rb_ready),
    .rd_cur(rd_cur), .rd_end_full(rd_end_full), .rd_pa(rd_pa), .rd_seg(rd_seg), .rd_shift0(rd_shift0),
    .rd_total(rd_total), .rd_va(rd_va), .rdd_cmd(rdd_cmd), .rdd_cmd_taken(rdd_cmd_taken), .rdd_empty(rdd_empty),
    .rdd_finish(rdd_finish), .rdd_flush(rdd_flush), .rdd_page(rdd_page), .rdd_pm_end(rdd_pm_end),
    .rdd_solo(rdd_solo), .rdd_start(rdd_start), .ring_done(ring_done), .ring_free(ring_free), .ring_idle(ring_idle),
    .ring_tx_desc(ring_tx_desc), .rp_done(rp_done), .rp_fence(rp_fence), .rp_load(rp_load),
    .rp_load_rec(rp_load_rec), .rp_own_clear(rp_own_clear), .rp_r_epoch(rp_r_epoch), .rp_r_flags(rp_r_flags),
    .rp_r_payload(rp_r_payload), .rp_r_plen(rp_r_plen), .rp_r_status(rp_r_status), .rp_r_va(rp_r_va),
    .rp_rec(rp_rec), .rp_reject(rp_reject), .rp_send(rp_send), .rp_sess(rp_sess), .rp_sess_dquota(rp_sess_dquota),
    .rp_sess_key(rp_sess_key), .rp_sess_lquota(rp_sess_lquota), .rp_sess_open(rp_sess_open),
    .rp_sess_pid(rp_sess_pid), .rp_sess_set(rp_sess_set), .slot_addr(slot_addr), .sq_n(sq_n), .sq_q_cur(sq_q_cur),
    .sq_q_epoch(sq_q_epoch), .sq_q_pid(sq_q_pid), .sq_q_req_id(sq_q_req_id), .sq_q_retry_of(sq_q_retry_of),
    .sq_q_session(sq_q_session), .streams_open(streams_open), .sync_status(sync_status), .tc_call(tc_call),
    .tc_done(tc_done), .tc_epoch(tc_epoch), .tc_gt_set(tc_gt_set), .tc_inv_exact(tc_inv_exact),
    .tc_inv_load(tc_inv_load), .tc_inv_pages(tc_inv_pages), .tc_inv_pid(tc_inv_pid), .tc_inv_shift(tc_inv_shift),
    .tc_inv_valid(tc_inv_valid), .tc_inv_vpn(tc_inv_vpn), .tc_mem_addr(tc_mem_addr), .tc_mem_wdata(tc_mem_wdata),
    .tc_mem_wstrb(tc_mem_wstrb), .tc_next(tc_next), .tc_push(tc_push), .tc_va(tc_va), .tc_va_load(tc_va_load),
    .tlb_perms(tlb_perms), .tlb_ppn(tlb_ppn), .to_lane(to_lane), .tp_cmd(tp_cmd), .tp_done(tp_done), .tp_pop(tp_pop),
    .tp_popped(tp_popped), .tp_report(tp_report), .wd_answer(wd_answer), .wd_cmd(wd_cmd),
    .wd_cmd_taken(wd_cmd_taken), .wd_flush(wd_flush), .wd_hand_off(wd_hand_off), .wd_last_take(wd_last_take),
    .wd_page(wd_page), .wd_start(wd_start), .wl_rec(wl_rec), .wr_cur(wr_cur), .wr_end_full(wr_end_full),
    .wr_fast(wr_fast), .wr_pa(wr_pa), .wr_seg(wr_seg), .wr_shift0(wr_shift0), .wr_va0(wr_va0), .x_pid(x_pid),
    .xc_at_read(xc_at_read), .xc_clear(xc_clear), .xc_fail(xc_fail), .xc_flush(xc_flush), .xc_hand_off(xc_hand_off),
    .xc_last(xc_last), .xc_let_go(xc_let_go), .xc_look(xc_look), .xc_next(xc_next), .xc_ok(xc_ok),
    .xc_probe(xc_probe), .xc_report(xc_report), .xc_ret(xc_ret), .xc_status(xc_status), .xc_tlb_load(xc_tlb_load),
    .xw_bucket(xw_bucket), .xw_enq(xw_enq), .xw_enq_unit(xw_enq_unit), .xw_fault_ppn(xw_fault_ppn),
    .xw_insert(xw_insert), .xw_pte(xw_pte), .at_at(at_at), .cf_entry(cf_entry), .d_k(d_k), .d_lane(d_lane),
    .dd_clear(dd_clear), .dd_close_session(dd_close_session), .dd_close_valid(dd_close_valid),
    .dd_look_key(dd_look_key), .dd_look_valid(dd_look_valid), .dd_upd_key(dd_upd_key), .dd_upd_mode(dd_upd_mode),
    .dd_upd_rec(dd_upd_rec), .dd_upd_valid(dd_upd_valid), .desc_reg(desc_reg), .ev_poll_q(ev_poll_q),
    .ev_pump_q(ev_pump_q), .ev_take_q(ev_take_q), .fl_bg(fl_bg), .fq_count(fq_count),
    .fw_fence_clear(fw_fence_clear), .fw_fence_clear_index(fw_fence_clear_index), .fw_fence_set(fw_fence_set),
    .fw_fence_set_index(fw_fence_set_index), .fw_orphan(fw_orphan), .fw_orphan_all(fw_orphan_all),
    .fw_orphan_session(fw_orphan_session), .fw_release(fw_release), .fw_release_index(fw_release_index),
    .fw_set(fw_set), .fw_set_index(fw_set_index), .fw_set_new(fw_set_new), .gt_clear(gt_clear),
    .gt_poll_reg(gt_poll_reg), .gt_set(gt_set), .mem_addr(mem_addr), .mem_rdata(mem_rdata), .mem_wdata(mem_wdata),
    .mem_wstrb(mem_wstrb), .mv_addr(mv_addr), .mv_go(mv_go), .mv_len(mv_len), .mv_mark(mv_mark), .of_call(of_call),
    .pg_bucket(pg_bucket), .pg_end(pg_end), .pg_flags(pg_flags), .pg_found(pg_found), .pg_ok(pg_ok),
    .pg_perms(pg_perms), .pg_ppn(pg_ppn), .pg_shift(pg_shift), .pg_slot(pg_slot), .pg_start(pg_start),
    .pg_vpn(pg_vpn), .pkt_done_reg(pkt_done_reg), .pkt_have_reg(pkt_have_reg), .pm_turn(pm_turn),
    .poll_done_reg(poll_done_reg), .poll_req(poll_req), .push_valid(push_valid), .r_epoch(r_epoch),
    .r_flags(r_flags), .r_offset(r_offset), .r_op(r_op), .r_payload(r_payload), .r_plen(r_plen), .r_status(r_status),
    .r_total_len(r_total_len), .r_va(r_va), .rb_start(rb_start), .rec_reg(rec_reg), .rep_opcode(rep_opcode),
    .rep_pid(rep_pid), .rep_status(rep_status), .rep_va(rep_va), .ring_cmd(ring_cmd), .ring_desc(ring_desc),
    .ring_valid(ring_valid), .rp_entry(rp_entry), .rs_own(rs_own), .rs_pid(rs_pid), .rs_req_id(rs_req_id),
    .rs_retry_of(rs_retry_of), .rs_session(rs_session), .rx_credit(rx_credit), .st_wr_dquota(st_wr_dquota),
    .st_wr_key(st_wr_key), .st_wr_lquota(st_wr_lquota), .st_wr_op(st_wr_op), .st_wr_open(st_wr_open),
    .st_wr_pid(st_wr_pid), .st_wr_session(st_wr_session), .st_wr_word(st_wr_word), .sync_valid(sync_valid),
    .tlb_ins_valid(tlb_ins_valid), .tlb_inv_exact(tlb_inv_exact), .tlb_inv_pages(tlb_inv_pages),
    .tlb_inv_pid(tlb_inv_pid), .tlb_inv_shift(tlb_inv_shift), .tlb_inv_valid(tlb_inv_valid),
    .tlb_inv_vpn(tlb_inv_vpn), .tlb_look_valid(tlb_look_valid), .xl_at(xl_at), .xl_cur(xl_cur), .xl_end(xl_end),
    .xl_need(xl_need), .xl_pages(xl_pages), .xl_pass2(xl_pass2), .es_at(es_at), .es_cf(es_cf),
    .es_ch(es_ch), .es_cmd(es_cmd), .es_decide(es_decide), .es_dispatch(es_dispatch), .es_fail(es_fail),
    .es_flush(es_flush), .es_flush_pop(es_flush_pop), .es_idle(es_idle), .es_info(es_info), .es_mem_rd(es_mem_rd),
    .es_mem_rdw(es_mem_rdw), .es_mem_wr(es_mem_wr), .es_mem_wrb(es_mem_wrb), .es_pm_end(es_pm_end),
    .es_poll(es_poll), .es_rd(es_rd), .es_rep(es_rep), .es_replay(es_replay), .es_ring(es_ring),
    .es_ring_w(es_ring_w), .es_rp(es_rp), .es_send(es_send), .es_wr(es_wr), .es_xl(es_xl), .mem_for_at(mem_for_at),
    .xl_for_wr(xl_for_wr), .xl_for_at(xl_for_at)
);

assign poll_done = poll_done_reg;
assign idle = es_idle && !pkt_have_reg && !poll_req && lane_empty && !p_tvalid && !rb_busy && !pk_on
    && wl_idle && at_idle;
// The lane waits for the READ stage too: its answers follow the stage's
// packets, and the mover holds the port.
// And for the write lane: its answer is older, and its burst holds the port.
// And during a background drain, between its port accesses (see `fl_bg`).
// Not while the engine holds a request the lane handed over (its older
// requests have answered): a younger request's TLB lookup would come before
// the handed-over miss's insert, the model's after it (the TLB's recency
// order, which decides later evictions, would differ).
assign lane_active = ((((es_idle && !(pkt_have_reg && h_from_lane))
        || (fl_lane && (es_flush || es_flush_pop)))
    && !pk_solo && wl_idle) || lane_walk) && at_idle;
// Hits answered before a walking READ (issue #21; the rule: ip/fastpath/README.md
// "Answer order"): while the engine walks the page table for a READ of at most
// one beat's bytes (its first page: nothing of it inserted yet; not a stream's
// pump), with the mover, the write lane and the READ stage idle (nothing can
// claim the port until the walk ends), the lane takes reads at intake, looks
// them up (reads without retry_of only: `s_rd_only`) and reads beside the
// bucket reader (the arbiter's second reader, its own AXI id). In the walk
// stage's ST_PTE it looks nothing up; the insert comes at once (then
// `lane_after`, below), any other verdict once every hit it looked up has
// answered (`lane_quiet`). The next miss behind the walking READ
// waits in the lane's hand-off slot (not on the walking READ's page: `h_pid`,
// `h_va`), the reads behind it going on; a second one stops the lane in L2.
// Not while the atomics stage works (`at_idle`: it may own the port, and the
// lane issues nothing until it has answered); it cannot start during a walk.
assign lane_walk = xc_walking && xw_walking && h_op == OP_READ && !pm_on && h_total_len <= 32'(BYTES) && !xl_pass2
    && xl_pages == 32'd1 && mv_idle && !wl_mem && wl_idle && !pk_solo && !fl_bg && at_idle;
// Past the walk (issue #21, "What a sparse miss costs"): the walk inserts
// the page at once, and the lane goes on taking reads and looking them up
// (not in the cycles of the engine's TLB accesses) until the engine is idle
// again (`lane_active`) or, the answer started, the lane is empty. The hits
// looked up before the insert answer before the walking READ: its answer's
// start waits until they have (`lane_pre_hold`: the packer appends the data
// and holds the start, so the mover's R beats never wait on the lane's).
// Those looked up after it answer after it: they issue no AR until its
// answer has started (`lane_ans_go`; its data are then in the builder, so
// their R beats wait only for the builder). The lane reads beside whichever
// of the engine's port, the mover or the bucket reader owns the AXI port
// (the arbiter's second reader); nothing is handed over to the engine
// meanwhile, and with a miss held (the lane's slot) nothing more is looked
// up: the held miss goes to the engine as soon as it is idle.
always_ff @(posedge clk) begin
    if (lane_walk && xw_insert && !eng_hold) lane_after <= 1'b1;
    else if (lane_ans_go && (lane_active || lane_empty)) lane_after <= 1'b0;
    if (lane_after && !lane_ans_go && (pk_start || rb_start)) lane_ans_go <= 1'b1;
    else if (!lane_after) lane_ans_go <= 1'b0;
    // The drain ends with the older reads answered, or as the walk begins
    // (its own holds cover them then: `lane_quiet` before a verdict other
    // than the insert, `lane_pre_hold` after it).
    if (lane_handoff && lane_ho_early) lane_drain <= 1'b1;
    else if (lane_quiet || lane_walk) lane_drain <= 1'b0;
    lane_pre_quiet_q <= lane_pre_quiet;
    lane_quiet_q <= lane_quiet;
    if (rst) begin
        lane_after <= 1'b0;
        lane_ans_go <= 1'b0;
        lane_drain <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// AXI master: the engine, the bucket reader or the ring engine, whichever
// the engine is waiting on, else (engine idle) the hit lane.
// ---------------------------------------------------------------------------
// The mover keeps the port while it has commands (a READ's chunks are read
// ahead, and the READ stage drains while the engine goes on): a bucket
// read, a ring access or an engine access waits for it (their clients hold
// their requests until granted), so DRAM sees the model's order.
wire       mv_cmd_state = (es_rd && rdd_move) || (es_wr && wd_move);
// The write lane's command goes first (its write is older than anything the
// engine issues after handing it over).
wire       mv_cmd_ready_raw;
assign     mv_cmd_ready = mv_cmd_ready_raw && !wl_mv_valid;

// The WRITE stage (clio_write_lane): one-page WRITEs' bursts, their Bs and
// their answers, while the engine takes the next packet; two writes, one
// per packet bank, so the next write's burst follows the previous one's
// last W beat while its B is outstanding. Its own mover command port is
// this shared mover (its commands first): the mover streams writes in
// order after every queued read (a read waits for their Bs), so DRAM sees
// the model's order without a second AXI write path and a hazard check
// against it.
clio_write_lane #(.DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .LEN_WIDTH(16), .SLOTS(2), .BUFS(2)) wl_inst (
    .clk(clk), .rst(rst),
    .s_cmd_valid(wl_cmd_valid && at_idle), .s_cmd_ready(wl_ready), .s_cmd_addr(wl_pa[ADDR_WIDTH-1:0]), .s_cmd_len(h_plen),
    .s_cmd_buf(eng_bank),
    .s_hdr_opcode(r_op), .s_hdr_pid(h_pid), .s_hdr_req_id(h_req_id), .s_hdr_retry_of(h_retry_of),
    .s_hdr_va(h_va), .s_hdr_total_len(h_total_len), .s_hdr_offset(h_offset), .s_hdr_session(h_session),
    .s_hdr_epoch(r_epoch),
    .m_mv_valid(wl_mv_valid), .m_mv_ready(mv_cmd_ready_raw), .m_mv_addr(wl_mv_addr), .m_mv_len(wl_mv_len),
    .s_mv_take_valid(mv_take_valid), .s_mv_take(mv_take), .s_mv_done(mv_done),
    .m_src_pos(wl_src_pos), .m_src_buf(wl_bank), .m_src_busy(wl_src_busy), .m_buf_held(wl_held),
    .m_mem_busy(wl_mem),
    .m_ans_valid(wl_ans_valid), .s_ans_ready(wl_ans_ready), .m_ans_opcode(wl_ans_op), .m_ans_pid(wl_ans_pid),
    .m_ans_req_id(wl_ans_req_id), .m_ans_retry_of(wl_ans_retry_of), .m_ans_va(wl_ans_va),
    .m_ans_total_len(wl_ans_total_len), .m_ans_offset(wl_ans_offset), .m_ans_session(wl_ans_session),
    .m_ans_epoch(wl_ans_epoch), .m_idle(wl_idle)
);
wire [2:0] axi_grant = at_own ? 3'd1 : (!mv_idle || wl_mem) ? 3'd4 : sel_ring ? 3'd3 : (sel_ptf || lane_walk) ? 3'd2 : mv_cmd_state ? 3'd4
    : lane_active ? 3'd0 : 3'd1;
wire [ADDR_WIDTH-1:0] mv_awaddr, mv_araddr;
wire [7:0]           mv_awlen, mv_arlen;
wire                 mv_awvalid, mv_awready, mv_wlast, mv_wvalid, mv_wready, mv_bvalid, mv_bready;
wire                 mv_arvalid, mv_arready, mv_rvalid, mv_rready;
wire [DATA_WIDTH-1:0] mv_wdata;
wire [BYTES-1:0]     mv_wstrb;

clio_data_mover #(.DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .LEN_WIDTH(16), .ID_WIDTH(ID_WIDTH)) mv_inst (
    .clk(clk), .rst(rst),
    .s_cmd_addr(wl_mv_valid ? wl_mv_addr : mv_addr[ADDR_WIDTH-1:0]), .s_cmd_len(wl_mv_valid ? wl_mv_len : mv_len),
    .s_cmd_write(wl_mv_valid || (es_wr && wd_move)), .s_cmd_mark(!wl_mv_valid && mv_mark),
    .s_cmd_valid(wl_mv_valid || (mv_go && mv_cmd_state)), .s_cmd_ready(mv_cmd_ready_raw), .m_done(mv_done),
    .m_idle(mv_idle),
    .m_rd_data(mv_rd_data), .m_rd_len(mv_rd_len), .m_rd_mark(mv_rd_mark), .m_rd_valid(mv_rd_valid),
    .m_rd_ready(pk_ready),
    .s_wr_data(src_window), .m_wr_take(mv_take), .m_wr_take_valid(mv_take_valid),
    .m_axi_awid(), .m_axi_awaddr(mv_awaddr), .m_axi_awlen(mv_awlen), .m_axi_awsize(), .m_axi_awburst(),
    .m_axi_awvalid(mv_awvalid), .m_axi_awready(mv_awready), .m_axi_wdata(mv_wdata), .m_axi_wstrb(mv_wstrb),
    .m_axi_wlast(mv_wlast), .m_axi_wvalid(mv_wvalid), .m_axi_wready(mv_wready),
    .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(mv_bvalid), .m_axi_bready(mv_bready),
    .m_axi_arid(), .m_axi_araddr(mv_araddr), .m_axi_arlen(mv_arlen), .m_axi_arsize(), .m_axi_arburst(),
    .m_axi_arvalid(mv_arvalid), .m_axi_arready(mv_arready), .m_axi_rid(m_axi_rid), .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp), .m_axi_rlast(m_axi_rlast), .m_axi_rvalid(mv_rvalid), .m_axi_rready(mv_rready)
);

wire eng_valid = es_mem_rd || es_mem_wr || ae_wr || at_wr_now;
// The arbiter's engine port is the atomics stage's while it owns the port
// (`at_own`, read to B; the engine's accesses wait), else the engine's. The
// stage takes it only when no other client is in a transaction or about to
// start one (`at_port_free`); every other client waits for the grant.
wire arb_eng_ready, arb_eng_done;
assign eng_ready = arb_eng_ready && !at_own;
assign eng_done = arb_eng_done && !at_own;
assign at_mem_ready_raw = arb_eng_ready && at_own;
assign at_mem_done_raw = arb_eng_done && at_own;
assign at_port_free = mv_idle && !wl_mem && !wl_mv_valid && lq_count == 0 && !mv_cmd_state && !sel_ring && !sel_ptf
    && !at_wr_now && !es_mem_rd && !es_mem_rdw && !es_mem_wr
    && !es_mem_wrb && !ae_port;

clio_axi_arbiter #(.DATA_WIDTH(DATA_WIDTH), .ADDR_WIDTH(ADDR_WIDTH), .ID_WIDTH(ID_WIDTH)) arb_inst (
    .clk(clk), .rst(rst), .grant(axi_grant), .lane_rd(lane_beside),
    .s_lane_araddr(lane_araddr), .s_lane_arvalid(lane_arvalid), .s_lane_arready(lane_arready),
    .s_lane_rdata(lane_rdata), .s_lane_rvalid(lane_rvalid),
    .s_lane_rready(lane_rready),
    .s_lane_awaddr(lane_awaddr), .s_lane_awvalid(lane_awvalid), .s_lane_awready(lane_awready),
    .s_lane_wdata(lane_wdata), .s_lane_wstrb(lane_wstrb), .s_lane_wvalid(lane_wvalid), .s_lane_wready(lane_wready),
    .s_lane_bvalid(lane_bvalid), .s_lane_bready(lane_bready),
    .s_eng_addr(at_own ? at_mem_addr : mem_addr[ADDR_WIDTH-1:0]),
    .s_eng_write(at_own ? at_mem_write : es_mem_wr || ae_wr || at_wr_now),
    .s_eng_wdata(at_own ? at_mem_wdata : at_wr_now ? at_wdata : mem_wdata),
    .s_eng_wstrb(at_own ? at_mem_wstrb : at_wr_now ? at_wstrb : mem_wstrb), .s_eng_valid(at_own ? at_mem_valid : eng_valid),
    .s_eng_ready(arb_eng_ready), .m_eng_done(arb_eng_done),
    .m_eng_rdata(eng_rdata),
    .s_ptf_arid(ptf_arid), .s_ptf_araddr(ptf_araddr), .s_ptf_arlen(ptf_arlen), .s_ptf_arsize(ptf_arsize),
    .s_ptf_arburst(ptf_arburst), .s_ptf_arvalid(ptf_arvalid), .s_ptf_arready(ptf_arready),
    .s_ptf_rid(ptf_rid), .s_ptf_rdata(ptf_rdata), .s_ptf_rresp(ptf_rresp), .s_ptf_rlast(ptf_rlast),
    .s_ptf_rvalid(ptf_rvalid), .s_ptf_rready(ptf_rready),
    .s_ring_awid(rg_awid), .s_ring_awaddr(rg_awaddr), .s_ring_awlen(rg_awlen), .s_ring_awsize(rg_awsize),
    .s_ring_awburst(rg_awburst), .s_ring_awvalid(rg_awvalid), .s_ring_awready(rg_awready),
    .s_ring_wdata(rg_wdata), .s_ring_wstrb(rg_wstrb), .s_ring_wlast(rg_wlast), .s_ring_wvalid(rg_wvalid),
    .s_ring_wready(rg_wready), .s_ring_bid(rg_bid), .s_ring_bresp(rg_bresp), .s_ring_bvalid(rg_bvalid),
    .s_ring_bready(rg_bready),
    .s_ring_arid(rg_arid), .s_ring_araddr(rg_araddr), .s_ring_arlen(rg_arlen), .s_ring_arsize(rg_arsize),
    .s_ring_arburst(rg_arburst), .s_ring_arvalid(rg_arvalid), .s_ring_arready(rg_arready),
    .s_ring_rid(rg_rid), .s_ring_rdata(rg_rdata), .s_ring_rresp(rg_rresp), .s_ring_rlast(rg_rlast),
    .s_ring_rvalid(rg_rvalid), .s_ring_rready(rg_rready),
    .s_mv_awaddr(mv_awaddr), .s_mv_awlen(mv_awlen), .s_mv_awvalid(mv_awvalid), .s_mv_awready(mv_awready),
    .s_mv_wdata(mv_wdata), .s_mv_wstrb(mv_wstrb), .s_mv_wlast(mv_wlast), .s_mv_wvalid(mv_wvalid),
    .s_mv_wready(mv_wready), .s_mv_bvalid(mv_bvalid), .s_mv_bready(mv_bready),
    .s_mv_araddr(mv_araddr), .s_mv_arlen(mv_arlen), .s_mv_arvalid(mv_arvalid), .s_mv_arready(mv_arready),
    .s_mv_rvalid(mv_rvalid), .s_mv_rready(mv_rready),
    .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize), .m_axi_awburst(m_axi_awburst), .m_axi_awvalid(m_axi_awvalid),
    .m_axi_awready(m_axi_awready), .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast), .m_axi_wvalid(m_axi_wvalid), .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(m_axi_bvalid), .m_axi_bready(m_axi_bready),
    .m_axi_arid(m_axi_arid), .m_axi_araddr(m_axi_araddr), .m_axi_arlen(m_axi_arlen),
    .m_axi_arsize(m_axi_arsize), .m_axi_arburst(m_axi_arburst), .m_axi_arvalid(m_axi_arvalid),
    .m_axi_arready(m_axi_arready), .m_axi_rid(m_axi_rid), .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp), .m_axi_rlast(m_axi_rlast), .m_axi_rvalid(m_axi_rvalid),
    .m_axi_rready(m_axi_rready)
);

// Unused pieces of the units' outputs.
/* verilator lint_off UNUSEDSIGNAL */
wire unused_top = ^{tlb_shift, cfg_info[479:448], mem_addr[63:ADDR_WIDTH], cfg_table_base[63:ADDR_WIDTH],
    cfg_rx_base[63:ADDR_WIDTH], cfg_tx_base[63:ADDR_WIDTH], c_kind, mv_addr[63:ADDR_WIDTH],
    wl_pa[63:ADDR_WIDTH],
    cf_ready, tc_ready};  // the engine waits in S_CF (S_CMD) for the stage's verdict: it is idle whenever a packet (command) comes
/* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
// The shared ports' select is the engine's side (the TLB's and the dedup
// unit's instances above): the lane never uses one in the same cycle.
always @(posedge clk) begin
    if (!rst && lane_lookup && tlb_look_valid) $error("Error: the lane and the engine look up the TLB in one cycle (instance %m)");
    if (!rst && lane_dd_look && dd_look_valid) $error("Error: the lane and the engine look up the dedup unit in one cycle (instance %m)");
    if (!rst && lane_dd_ins && (at_rec_valid || dd_upd_valid)) begin
        $error("Error: the lane's record and another dedup update in one cycle (instance %m)");
    end
    if (!rst && lane_ack && es_decide) $error("Error: the lane acknowledges while the engine decides (instance %m)");
    // Beside another owner the lane reads only through the arbiter's second reader.
    if (!rst && axi_grant != 3'd0 && (lq_count != 0 || lane_arvalid)
            && !(lane_beside && (axi_grant == 3'd1 || axi_grant == 3'd2 || axi_grant == 3'd4))) begin
        $error("Error: the lane reads while the AXI port is another's and not shared (instance %m)");
    end
end
`endif

endmodule

`resetall
