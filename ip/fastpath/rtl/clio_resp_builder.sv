// clio_resp_builder: response packet assembly (header + payload), CRC32C and AXI-stream output, double-buffered.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Two packet buffers: the user fills one while the other leaves.
//
// The user appends payload bytes to the fill buffer through the write port,
// in order: a write at packet offset CLIO_HEADER_LEN (payload byte 0) begins
// a payload, every other write continues where the previous one ended (up to
// one beat's worth per cycle, at any byte alignment; bytes past the buffer
// end are dropped). `start` takes the header fields and commits the fill
// buffer; its payload length must be 0 or the number of bytes appended
// (simulation reports other uses). Writes and `start` are allowed while
// `ready` is high (a fill buffer is free): after a `start`, `ready` stays
// high when the other buffer is free, so the next packet is written while
// this one leaves.
//
// CRC: the CRC of "header with a zero CRC field + payload" is linear, so
// it is split at the header's end:
//   crc = A^(8 payload_len) * crc(header) ^ crc0(payload),
// crc0 from a zero register, A^(8n) a product of constant 32x32 matrices
// picked from tables by groups of up to six bits of n. While the payload
// is written, every complete packet beat is folded into crc0 by the one
// clio_crc32c instance, one beat per cycle (beat 0 with its header lanes
// zero: zeros from a zero register leave it zero). `start` takes
// crc(header) from the header fields (a second, header-only instance);
// after it, only the beat not yet folded (the partial last one) is left,
// folded and combined in one cycle (the two terms are kept apart and XORed
// as the header leaves). A packet can leave the cycle after that, not after a
// pass over the packet.
//
// Packets leave in `start` order, one beat per cycle, back to back; `done`
// pulses after each packet's last beat; `busy` is high while a committed
// packet has not left. A buffer is free for the next packet (`ready`) in
// the cycle its last beat is taken (a combinational path from
// m_axis_tready), so a writer that appends a beat per cycle and starts with
// its last write keeps the output busy every cycle.
module clio_resp_builder #(
    parameter DATA_WIDTH = 512,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter BEATS = 24
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire                   wr_en,
    input  wire [15:0]            wr_off,
    input  wire [DATA_WIDTH-1:0]  wr_data,
    input  wire [$clog2(KEEP_WIDTH):0] wr_len,

    input  wire [7:0]             hdr_opcode,
    input  wire [7:0]             hdr_flags,
    input  wire [7:0]             hdr_status,
    input  wire [31:0]            hdr_pid,
    input  wire [31:0]            hdr_req_id,
    input  wire [31:0]            hdr_retry_of,
    input  wire [63:0]            hdr_va,
    input  wire [31:0]            hdr_total_len,
    input  wire [31:0]            hdr_offset,
    input  wire [15:0]            hdr_payload_len,
    input  wire [15:0]            hdr_session,
    input  wire [31:0]            hdr_epoch,
    input  wire                   start,
    output wire                   ready,
    output wire                   busy,
    output wire                   done,

    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast
);

import clio_pkg::CLIO_VERSION;
import clio_pkg::CLIO_HEADER_LEN;
import clio_pkg::CLIO_OFF_VERSION;
import clio_pkg::CLIO_OFF_OPCODE;
import clio_pkg::CLIO_OFF_FLAGS;
import clio_pkg::CLIO_OFF_STATUS;
import clio_pkg::CLIO_OFF_PID;
import clio_pkg::CLIO_OFF_REQ_ID;
import clio_pkg::CLIO_OFF_RETRY_OF;
import clio_pkg::CLIO_OFF_VA;
import clio_pkg::CLIO_OFF_TOTAL_LEN;
import clio_pkg::CLIO_OFF_OFFSET;
import clio_pkg::CLIO_OFF_PAYLOAD_LEN;
import clio_pkg::CLIO_OFF_SESSION;
import clio_pkg::CLIO_OFF_EPOCH;
import clio_pkg::CLIO_OFF_CRC;
import clio_pkg::CRC32C_POLY_REFLECTED;

localparam BW = $clog2(BEATS);
localparam OW = $clog2(KEEP_WIDTH);
// Bits of a byte count within the buffer (the CRC shift length).
localparam NW = $clog2(BEATS * KEEP_WIDTH);
localparam [31:0] POLY = CRC32C_POLY_REFLECTED;
localparam [16:0] HDR = CLIO_HEADER_LEN[16:0];

initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH || (1 << OW) != KEEP_WIDTH) begin
        $error("Error: DATA_WIDTH must be a power-of-two number of bytes (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH < CLIO_HEADER_LEN) begin
        $error("Error: the header must fit in the first beat (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH > 64) begin
        $error("Error: at most 64 lanes (the CRC's zero-lane table has 64 entries) (instance %m)");
        $finish;
    end
    if (BEATS < 3 || BEATS * KEEP_WIDTH > 65536) begin
        $error("Error: BEATS must be at least 3 and the buffer at most 64 KiB (instance %m)");
        $finish;
    end
end

function [31:0] bswap32(input [31:0] v);
    bswap32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction

function [63:0] bswap64(input [63:0] v);
    bswap64 = {bswap32(v[31:0]), bswap32(v[63:32])};
endfunction

// Row-major 32x32 matrix times a vector.
function [31:0] zmul(input [32*32-1:0] m, input [31:0] v);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) zmul[r] = ^(v & m[r*32 +: 32]);
    end
endfunction

// Row-major A^(8 * 2^j): eight zero-bit steps of the register, squared j
// times (yosys evaluates constant functions slowly: squaring, not 2^j steps).
function [32*32-1:0] shift_matrix(input integer j);
    reg [32*32-1:0] m, sq;
    reg [31:0] v, c;
    integer s, i, n;
    begin
        for (s = 0; s < 32; s = s + 1) begin
            v = 32'd1 << s;
            for (n = 0; n < 8; n = n + 1) v = {1'b0, v[31:1]} ^ (v[0] ? POLY : 32'd0);
            for (i = 0; i < 32; i = i + 1) m[i*32 + s] = v[i];
        end
        for (n = 0; n < j; n = n + 1) begin
            for (s = 0; s < 32; s = s + 1) begin
                for (i = 0; i < 32; i = i + 1) c[i] = m[i*32 + s];
                v = zmul(m, c);
                for (i = 0; i < 32; i = i + 1) sq[i*32 + s] = v[i];
            end
            m = sq;
        end
        shift_matrix = m;
    end
endfunction

// Row-major A^(-8): eight zero bits taken back out of the register (bit 31 of
// a stepped register is the bit that was shifted out; needs POLY[31]).
function [32*32-1:0] unstep_matrix8;
    reg [31:0] v;
    integer s, i, n;
    begin
        unstep_matrix8 = 0;
        for (s = 0; s < 32; s = s + 1) begin
            v = 32'd1 << s;
            for (n = 0; n < 8; n = n + 1) v = {v[30:0] ^ (v[31] ? POLY[30:0] : 31'd0), v[31]};
            for (i = 0; i < 32; i = i + 1) unstep_matrix8[i*32 + s] = v[i];
        end
    end
endfunction

// Row-major base^0 .. base^(n-1) (n <= 64), entry e at bits [e*1024 +: 1024]:
// one product per entry (powers of one matrix commute, so the order is free).
function [64*32*32-1:0] power_table(input [32*32-1:0] base, input integer n);
    reg [32*32-1:0] m, nm;
    reg [31:0] c, v;
    integer e, s, i;
    begin
        power_table = 0;
        m = 0;
        for (i = 0; i < 32; i = i + 1) m[i*32 + i] = 1'b1;
        for (e = 0; e < n; e = e + 1) begin
            power_table[e*1024 +: 1024] = m;
            for (s = 0; s < 32; s = s + 1) begin
                for (i = 0; i < 32; i = i + 1) c[i] = base[i*32 + s];
                v = zmul(m, c);
                for (i = 0; i < 32; i = i + 1) nm[i*32 + s] = v[i];
            end
            m = nm;
        end
    end
endfunction

// The response header with a zero CRC field, in wire byte order. A function
// rather than field-by-field writes in an `always_comb` block: Icarus 11 counts
// the written variable among the block's inputs (constant part-selects) and
// re-runs the block forever.
function automatic [DATA_WIDTH-1:0] header_image(
    input [7:0] opcode, input [7:0] flags, input [7:0] status, input [31:0] pid,
    input [31:0] req_id, input [31:0] retry_of, input [63:0] va, input [31:0] total_len,
    input [31:0] offset, input [15:0] payload_len, input [15:0] session, input [31:0] epoch
);
    header_image = 0;
    header_image[CLIO_OFF_VERSION*8 +: 8] = CLIO_VERSION[7:0];
    header_image[CLIO_OFF_OPCODE*8 +: 8] = opcode;
    header_image[CLIO_OFF_FLAGS*8 +: 8] = flags;
    header_image[CLIO_OFF_STATUS*8 +: 8] = status;
    header_image[CLIO_OFF_PID*8 +: 32] = bswap32(pid);
    header_image[CLIO_OFF_REQ_ID*8 +: 32] = bswap32(req_id);
    header_image[CLIO_OFF_RETRY_OF*8 +: 32] = bswap32(retry_of);
    header_image[CLIO_OFF_VA*8 +: 64] = bswap64(va);
    header_image[CLIO_OFF_TOTAL_LEN*8 +: 32] = bswap32(total_len);
    header_image[CLIO_OFF_OFFSET*8 +: 32] = bswap32(offset);
    header_image[CLIO_OFF_PAYLOAD_LEN*8 +: 16] = {payload_len[7:0], payload_len[15:8]};
    // Responses echo session and epoch; key and ack stay zero.
    header_image[CLIO_OFF_SESSION*8 +: 16] = {session[7:0], session[15:8]};
    header_image[CLIO_OFF_EPOCH*8 +: 32] = bswap32(epoch);
endfunction

wire [DATA_WIDTH-1:0] hdr_image = header_image(hdr_opcode, hdr_flags, hdr_status, hdr_pid,
    hdr_req_id, hdr_retry_of, hdr_va, hdr_total_len, hdr_offset, hdr_payload_len, hdr_session,
    hdr_epoch);

// Contiguous keep of the first n bytes of a beat (n >= KEEP_WIDTH: all).
function [KEEP_WIDTH-1:0] keep_of(input [16:0] n);
    /* verilator lint_off WIDTH */
    keep_of = n >= KEEP_WIDTH ? {KEEP_WIDTH{1'b1}} : ~({KEEP_WIDTH{1'b1}} << n);
    /* verilator lint_on WIDTH */
endfunction

// ---------------------------------------------------------------------------
// Buffer state. Slot `fill_ptr_reg` is written; slots leave from
// `out_ptr_reg` in commit order. Per slot: committed (`full`), CRC
// finished (`fin`), header, length, crc(header).
// ---------------------------------------------------------------------------
reg                  fill_ptr_reg = 1'b0;
reg                  out_ptr_reg = 1'b0;
reg [1:0]            full_reg = 2'b00;
reg [1:0]            fin_reg = 2'b00;
reg [DATA_WIDTH-1:0] hdr_reg [0:1];      // beat 0 header bytes (CRC zero)
reg [16:0]           len_reg [0:1];      // packet bytes
reg [BW:0]           last_reg [0:1];     // last beat
reg [31:0]           hcrc_reg [0:1];     // CRC register after the header (from 0xffffffff)
reg [31:0]           crc_reg [0:1];      // A^(8 payload_len) crc(header); the packet's CRC register is
                                         // this ^ fcrc_reg (the payload's), unless hz_reg (at the output)
reg [NW-1:0]         plen_reg [0:1];     // payload bytes (the combination's shift)
reg                  hz_reg [0:1];       // no payload
reg [OW-1:0]         kt_reg [0:1];       // zero lanes after the last byte in the last beat
reg [KEEP_WIDTH-1:0] zm_reg [0:1];       // the same lanes as a mask (the top kt_reg lanes)
// Fold state: beats 0 .. fb - 1 are in fcrc (from zero, header lanes zero);
// bytes are written through packet offset `wend`.
reg [31:0]           fcrc_reg [0:1];
reg [BW:0]           fb_reg [0:1];
reg [16:0]           wend_reg [0:1];
reg [BW:0]           ob_reg = 0;         // beat leaving
reg                  done_reg = 1'b0;

integer ii;
initial begin
    for (ii = 0; ii < 2; ii = ii + 1) begin
        hdr_reg[ii] = 0;
        len_reg[ii] = 0;
        last_reg[ii] = 0;
        hcrc_reg[ii] = 0;
        crc_reg[ii] = 0;
        plen_reg[ii] = 0;
        hz_reg[ii] = 1'b0;
        kt_reg[ii] = 0;
        zm_reg[ii] = 0;
        fcrc_reg[ii] = 0;
        fb_reg[ii] = 0;
        wend_reg[ii] = 0;
    end
end

// Output side (below): the oldest committed slot leaves once its CRC is finished.
wire          o = out_ptr_reg;
wire          o_valid = full_reg[o] && fin_reg[o];
wire          o_last = ob_reg == last_reg[o];
wire          o_take = o_valid && m_axis_tready;

wire fill = fill_ptr_reg;
// The fill slot is free, or frees as its last beat is taken now.
assign ready = !full_reg[fill] || (o == fill && o_take && o_last);
wire wr_go = wr_en && ready;
wire start_go = start && ready;

// ---------------------------------------------------------------------------
// The packet buffers: per slot two single-write-port banks (even and odd
// beats). A write of up to one beat touches beat wr_beat (lanes from wr_lane
// up) and beat wr_beat + 1 (lanes below wr_lane), which always lie in
// different banks. Both take the same data, wr_data rotated up by wr_lane
// bytes, with per-byte enables; reads are asynchronous (LUT RAM), one read
// address per slot (the leaving beat, else the beat the CRC unit reads).
// ---------------------------------------------------------------------------
localparam EVEN_BEATS = (BEATS + 1) / 2;
localparam ODD_BEATS = BEATS / 2;
localparam HW = BW - 1;  // bank address bits

wire [BW-1:0] wr_beat = wr_off[OW +: BW];
wire [OW-1:0] wr_lane = wr_off[OW-1:0];
// Offsets past the buffer are dropped (never wrapped).
wire          wr_in = wr_off < BEATS * KEEP_WIDTH;
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_WIDTH-1:0] wr_dup = {wr_data, wr_data} << {wr_lane, 3'd0};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] wr_rot = wr_dup[DATA_WIDTH +: DATA_WIDTH];
wire [KEEP_WIDTH-1:0] wr_len_mask = wr_len[OW] ? {KEEP_WIDTH{1'b1}} : ~({KEEP_WIDTH{1'b1}} << wr_len[OW-1:0]);
wire [2*KEEP_WIDTH-1:0] wr_mask = {{KEEP_WIDTH{1'b0}}, wr_len_mask} << wr_lane;
wire [BW:0]   wr_next = {1'b0, wr_beat} + 1'b1;
wire          wr_lo_ok = wr_in && {1'b0, wr_beat} < BEATS[BW:0];
wire          wr_hi_ok = wr_in && wr_next < BEATS[BW:0];
wire [HW-1:0] even_addr = wr_beat[0] ? wr_next[HW:1] : wr_beat[BW-1:1];
wire [KEEP_WIDTH-1:0] even_we = !wr_go ? {KEEP_WIDTH{1'b0}}
    : wr_beat[0] ? (wr_hi_ok ? wr_mask[KEEP_WIDTH +: KEEP_WIDTH] : {KEEP_WIDTH{1'b0}})
    : (wr_lo_ok ? wr_mask[KEEP_WIDTH-1:0] : {KEEP_WIDTH{1'b0}});
wire [HW-1:0] odd_addr = wr_beat[BW-1:1];
wire [KEEP_WIDTH-1:0] odd_we = !wr_go ? {KEEP_WIDTH{1'b0}}
    : wr_beat[0] ? (wr_lo_ok ? wr_mask[KEEP_WIDTH-1:0] : {KEEP_WIDTH{1'b0}})
    : (wr_hi_ok ? wr_mask[KEEP_WIDTH +: KEEP_WIDTH] : {KEEP_WIDTH{1'b0}});
/* verilator lint_off WIDTH */
wire [16:0]   wr_end = wr_off + wr_len;
/* verilator lint_on WIDTH */

// The CRC unit's job (below) names its slot.
wire          js;
wire [DATA_WIDTH-1:0] slot_rd [0:1];

genvar gs;
generate
    for (gs = 0; gs < 2; gs = gs + 1) begin : slot
        reg [DATA_WIDTH-1:0] even_mem [0:EVEN_BEATS-1];
        reg [DATA_WIDTH-1:0] odd_mem [0:ODD_BEATS-1];
        wire          sel = fill == gs;
        // The leaving beat, else the slot's own next beat to fold (used only
        // when the slot is the CRC job's, so not behind the job's selection).
        /* verilator lint_off UNUSEDSIGNAL */
        wire [BW:0]   rd_beat = (full_reg[gs] && fin_reg[gs]) ? ob_reg : fb_reg[gs];  // below BEATS
        /* verilator lint_on UNUSEDSIGNAL */
        always_ff @(posedge clk) begin
            integer i;  // loop index local to the block (no shared variable between processes)
            for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
                if (sel && even_we[i]) even_mem[even_addr][i*8 +: 8] <= wr_rot[i*8 +: 8];
                if (sel && odd_we[i]) odd_mem[odd_addr][i*8 +: 8] <= wr_rot[i*8 +: 8];
            end
        end
        // Continuous assignment: an `always_comb` block reading the banks is
        // woken by every write to them under Icarus 11 (see README).
        assign slot_rd[gs] = rd_beat[0] ? odd_mem[rd_beat[BW-1:1]] : even_mem[rd_beat[BW-1:1]];
    end
endgenerate

// ---------------------------------------------------------------------------
// The CRC unit: one beat per cycle for the oldest slot with work. A
// committed slot whose CRC is not finished first (folds its remaining
// beats; with the last one, or at once when none is left, the combination);
// else the fill slot folds its next complete beat.
// ---------------------------------------------------------------------------
wire [1:0] fin_need = full_reg & ~fin_reg;
assign js = fin_need[out_ptr_reg] ? out_ptr_reg : fin_need[!out_ptr_reg] ? !out_ptr_reg : fill;
wire       j_fin = fin_need[js];
wire [BW:0] j_fb = fb_reg[js];
/* verilator lint_off WIDTH */
wire [16:0] j_fb_end = {j_fb, {OW{1'b0}}} + KEEP_WIDTH;
// Committed: a beat left to fold (the last one finishes), else finish now.
wire       j_tail = j_fin && j_fb <= last_reg[js];
wire       j_comb = j_fin && j_fb >= last_reg[js];
// Filling: the next beat is complete (written through the last cycle) and
// inside the buffer; not in a cycle its slot is (re)committed or restarted.
wire       j_fold = !j_fin && !full_reg[js] && j_fb < BEATS && j_fb_end <= wend_reg[js];
/* verilator lint_on WIDTH */

// The beat's valid lanes: all but the header's in beat 0 and, in a packet's
// last beat, the zm_reg lanes past its end. Each slot's zero lanes from its
// own registers (a compare and an AND), then per lane the job's slot picked
// together with its data: the slot selection and the zeroing are one LUT
// ahead of the CRC.
wire [1:0] at_last = {fb_reg[1] == last_reg[1], fb_reg[0] == last_reg[0]};
wire [1:0] at_first = {fb_reg[1] == 0, fb_reg[0] == 0};
wire [1:0] s_last = fin_need & at_last;
wire       j_last = s_last[js];
wire [OW-1:0] j_kt = j_last ? kt_reg[js] : {OW{1'b0}};
wire [DATA_WIDTH-1:0] crc_data;
genvar gl;
generate
    for (gl = 0; gl < KEEP_WIDTH; gl = gl + 1) begin : crc_lane
        wire [1:0] zero;
        for (gs = 0; gs < 2; gs = gs + 1) begin : per_slot
            if (gl < CLIO_HEADER_LEN) begin : hdr_lane
                assign zero[gs] = at_first[gs] || (s_last[gs] && zm_reg[gs][gl]);
            end else begin : data_lane
                assign zero[gs] = s_last[gs] && zm_reg[gs][gl];
            end
        end
        assign crc_data[gl*8 +: 8] = zero[js] ? 8'd0 : slot_rd[js][gl*8 +: 8];
    end
endgenerate

// The fold: the beat with its invalid lanes zeroed, as a full beat (constant
// keep: no residue stage in the unit), then the kt trailing zero bytes taken
// back out, A^(-8 kt), one matrix picked from a table by kt (a LUT per
// matrix bit and a 32-input parity: three levels) instead of a chain of
// conditional matrices, one per bit of kt.
wire [31:0] crc_full;
clio_crc32c #(.DATA_WIDTH(DATA_WIDTH), .KEEP_WIDTH(KEEP_WIDTH)) crc_inst (
    .crc_in(fcrc_reg[js]), .data(crc_data), .keep({KEEP_WIDTH{1'b1}}), .crc_out(crc_full)
);
localparam [64*32*32-1:0] UNSTEP = power_table(unstep_matrix8(), KEEP_WIDTH < 64 ? KEEP_WIDTH : 64);
// A table lookup as a chain of selects, one per entry, each between the
// entry's constant matrix and the chain so far: every matrix bit is a
// constant function of the select bits (one LUT for six) that yosys folds
// as it reads it. An indexed part-select of the whole constant
// (`UNSTEP[j_kt*1024 +: 1024]`) made yosys 0.23 build a shifter over all
// 64 Ki bits first (no result after 17.7 CPU minutes). Not a loop in an
// `always_comb` block (Icarus 11 reloads the whole table for each entry,
// over 100 times slower) nor a function taking the table (Verilator 5.006
// copies the argument into a local and its partial-constant fill writes
// past it).
genvar ge;
generate
    for (ge = 0; ge < KEEP_WIDTH; ge = ge + 1) begin : unstep_ent
        localparam [32*32-1:0] M = UNSTEP[ge*1024 +: 1024];
        wire [32*32-1:0] acc;
        if (ge == 0) begin : first
            assign acc = M;
        end else begin : next
            assign acc = j_kt == ge ? M : unstep_ent[ge-1].acc;
        end
    end
endgenerate
wire [32*32-1:0] unstep_k = unstep_ent[KEEP_WIDTH-1].acc;
wire [31:0] crc_out = zmul(unstep_k, crc_full);

// crc(header) of the packet being started, from its fields.
wire [31:0] hdr_crc;
clio_crc32c #(.DATA_WIDTH(DATA_WIDTH), .KEEP_WIDTH(KEEP_WIDTH)) hdr_crc_inst (
    .crc_in(32'hffffffff), .data(hdr_image), .keep(keep_of(HDR)), .crc_out(hdr_crc)
);

// The combination: A^(8n) crc(header) ^ crc0(payload), n = payload bytes:
// A^(8n) as table lookups over groups of at most six bits of n (two groups
// up to 4 KiB buffers), each a matrix picked by its bits as above.
localparam NST = (NW + 5) / 6;
localparam NCW = (NW + NST - 1) / NST;
wire [NW-1:0] j_plen = plen_reg[js];
wire [32*(NST+1)-1:0] hs /* verilator split_var */;
assign hs[31:0] = hcrc_reg[js];
genvar gt, gm;
generate
    for (gt = 0; gt < NST; gt = gt + 1) begin : hshift
        localparam LO = gt * NCW;
        localparam W = (LO + NCW <= NW) ? NCW : NW - LO;
        localparam [64*32*32-1:0] TBL = power_table(shift_matrix(LO), 1 << W);
        wire [W-1:0] sel = j_plen[LO +: W];
        for (gm = 0; gm < (1 << W); gm = gm + 1) begin : ent  // as unstep_ent above
            localparam [32*32-1:0] M = TBL[gm*1024 +: 1024];
            wire [32*32-1:0] acc;
            if (gm == 0) begin : first
                assign acc = M;
            end else begin : next
                assign acc = sel == gm ? M : ent[gm-1].acc;
            end
        end
        wire [32*32-1:0] m = ent[(1 << W)-1].acc;
        assign hs[(gt+1)*32 +: 32] = zmul(m, hs[gt*32 +: 32]);
    end
endgenerate
// The payload's part (fcrc_reg, final once the slot is finished) is XORed
// in at the output, not here: it would put an XOR behind the fold's last
// level (crc_out) on the way into crc_reg.
wire [31:0] j_hshift = hs[NST*32 +: 32];

// ---------------------------------------------------------------------------
// Output beat: buffer lanes, the header and CRC in beat 0, zeros past the end.
// ---------------------------------------------------------------------------
/* verilator lint_off WIDTH */
wire [16:0]   o_left = len_reg[o] - {ob_reg, {OW{1'b0}}};
/* verilator lint_on WIDTH */
wire [KEEP_WIDTH-1:0] o_keep = keep_of(o_left);
wire [DATA_WIDTH-1:0] o_rd = slot_rd[o];
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]   o_crc = crc_reg[o] ^ (hz_reg[o] ? 32'd0 : fcrc_reg[o]);
wire [DATA_WIDTH-1:0] o_hdr = hdr_reg[o] | ({{(DATA_WIDTH-32){1'b0}}, bswap32(~o_crc)} << (CLIO_OFF_CRC*8));  // header lanes used
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] out_beat;
generate
    for (gl = 0; gl < KEEP_WIDTH; gl = gl + 1) begin : out_lane
        if (gl < CLIO_HEADER_LEN) begin : hdr_lane
            assign out_beat[gl*8 +: 8] = ob_reg == 0 ? o_hdr[gl*8 +: 8] : o_keep[gl] ? o_rd[gl*8 +: 8] : 8'd0;
        end else begin : data_lane
            assign out_beat[gl*8 +: 8] = o_keep[gl] ? o_rd[gl*8 +: 8] : 8'd0;
        end
    end
endgenerate

// The started packet's zero lanes: from its end in its last beat up (none if
// it ends on a beat boundary).
/* verilator lint_off WIDTH */
wire [OW-1:0] st_end_lane = CLIO_HEADER_LEN + hdr_payload_len;
/* verilator lint_on WIDTH */
wire [KEEP_WIDTH-1:0] st_zm = st_end_lane == 0 ? {KEEP_WIDTH{1'b0}} : {KEEP_WIDTH{1'b1}} << st_end_lane;

always_ff @(posedge clk) begin
    done_reg <= 1'b0;
    // Output (first: a start into the slot freed in this cycle overrides it).
    if (o_take) begin
        ob_reg <= ob_reg + 1'b1;
        if (o_last) begin
            ob_reg <= 0;
            full_reg[o] <= 1'b0;
            out_ptr_reg <= !o;
            done_reg <= 1'b1;
        end
    end
    // The CRC unit.
    if (j_tail || j_fold) begin
        fcrc_reg[js] <= crc_out;
        fb_reg[js] <= j_fb + 1'b1;
    end
    if (j_comb) begin
        crc_reg[js] <= j_hshift;
        fin_reg[js] <= 1'b1;
    end
    // The fill slot: a write at payload byte 0 begins a payload (after the fold above).
    if (wr_go) begin
        wend_reg[fill] <= wr_end;
        if ({1'b0, wr_off} == HDR) begin
            fcrc_reg[fill] <= 32'd0;
            fb_reg[fill] <= 0;
        end
    end
    if (start_go) begin
        full_reg[fill] <= 1'b1;
        fin_reg[fill] <= 1'b0;
        hdr_reg[fill] <= hdr_image;
        hcrc_reg[fill] <= hdr_crc;
        /* verilator lint_off WIDTH */
        len_reg[fill] <= CLIO_HEADER_LEN + hdr_payload_len;
        plen_reg[fill] <= hdr_payload_len[NW-1:0];
        hz_reg[fill] <= hdr_payload_len == 0;
        kt_reg[fill] <= -(CLIO_HEADER_LEN + hdr_payload_len);
        zm_reg[fill] <= st_zm;
        last_reg[fill] <= (CLIO_HEADER_LEN + hdr_payload_len - 1) >> OW;
        /* verilator lint_on WIDTH */
        fill_ptr_reg <= !fill;
    end
    if (rst) begin
        fill_ptr_reg <= 1'b0;
        out_ptr_reg <= 1'b0;
        full_reg <= 2'b00;
        fin_reg <= 2'b00;
        ob_reg <= 0;
        done_reg <= 1'b0;
    end
end

assign busy = full_reg != 2'b00;
assign done = done_reg;
assign m_axis_tdata = out_beat;
assign m_axis_tkeep = o_keep;
assign m_axis_tvalid = o_valid;
assign m_axis_tlast = o_last;

`ifndef SYNTHESIS
// The write contract (in-order appends; a payload length of 0 or the bytes
// appended); a simulation check.
always @(posedge clk) begin
    if (!rst && wr_en && !ready) $error("Error: clio_resp_builder written while not ready (instance %m)");
    if (!rst && start && !ready) $error("Error: clio_resp_builder started while not ready (instance %m)");
    if (!rst && wr_go && {1'b0, wr_off} != HDR && {1'b0, wr_off} != wend_reg[fill]) begin
        $error("Error: clio_resp_builder write at %0d, not an append at %0d (instance %m)", wr_off, wend_reg[fill]);
    end
    /* verilator lint_off WIDTH */
    if (!rst && start_go && hdr_payload_len != 0 && !(wr_go && {1'b0, wr_off} == HDR)
            && CLIO_HEADER_LEN + hdr_payload_len != ((wr_go ? wr_end : wend_reg[fill]) < BEATS * KEEP_WIDTH
                ? (wr_go ? wr_end : wend_reg[fill]) : BEATS * KEEP_WIDTH)) begin
        $error("Error: clio_resp_builder payload length %0d is not the %0d bytes appended (instance %m)",
            hdr_payload_len, (wr_go ? wr_end : wend_reg[fill]) - CLIO_HEADER_LEN);
    end
    /* verilator lint_on WIDTH */
end
`endif

endmodule

`resetall
