// clio_rx_parser: Clio header parse, CRC32C integrity check and dispatch class over an AXI stream.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Passes every beat through one register stage (II = 1) and, together with
// the last beat of a packet, presents the parsed header and the verdict:
// `m_err_short` (fewer bytes than header + payload_len), `m_err_crc` (CRC32C
// over header-with-zero-crc + payload mismatch), `m_err_malformed` (a header
// field the wire crate's `Header::parse` rejects) and the dispatch class.
// The checks follow `Header::parse_verified`: length, then CRC, then fields.
// Bytes after header + payload_len (Ethernet padding) are not covered.
// The input stream is packed (AXI4-Stream with `tkeep` contiguous from lane 0,
// as a MAC delivers it): the byte count and clio_crc32c rely on it, and
// clio_crc32c reports any other mask in simulation.
module clio_rx_parser #(
    parameter DATA_WIDTH = 512,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter LEN_WIDTH = 16
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,
    input  wire                   s_axis_tlast,

    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast,

    // Valid with the last output beat.
    output wire [7:0]             m_hdr_opcode,
    output wire [7:0]             m_hdr_flags,
    output wire [7:0]             m_hdr_status,
    output wire [31:0]            m_hdr_pid,
    output wire [31:0]            m_hdr_req_id,
    output wire [31:0]            m_hdr_retry_of,
    output wire [63:0]            m_hdr_va,
    output wire [31:0]            m_hdr_total_len,
    output wire [31:0]            m_hdr_offset,
    output wire [15:0]            m_hdr_payload_len,
    output wire [15:0]            m_hdr_session,
    output wire [31:0]            m_hdr_epoch,
    output wire [63:0]            m_hdr_key,
    output wire [31:0]            m_hdr_ack,
    output wire [LEN_WIDTH-1:0]   m_pkt_len,
    output wire                   m_err_short,
    output wire                   m_err_crc,
    output wire                   m_err_malformed,
    // Of the malformed: the version is right but the opcode is unknown
    // (answered UNSUPPORTED, not MALFORMED).
    output wire                   m_err_unknown_op,
    output wire                   m_opcode_request,
    // 0: fast path, 1: slow path (ARM), 2: extend path, 3: answered locally (info).
    output wire [1:0]             m_class
);

import clio_pkg::*;

localparam BEAT_BYTES_W = $clog2(KEEP_WIDTH) + 1;

initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: DATA_WIDTH must be KEEP_WIDTH * 8 (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH < CLIO_HEADER_LEN) begin
        $error("Error: the Clio header must fit in the first beat (KEEP_WIDTH >= %0d) (instance %m)", CLIO_HEADER_LEN);
        $finish;
    end
    if (LEN_WIDTH < 16) begin
        $error("Error: LEN_WIDTH must be at least 16 (instance %m)");
        $finish;
    end
end

localparam [1:0] CLASS_FAST = 2'd0;
localparam [1:0] CLASS_SLOW = 2'd1;
localparam [1:0] CLASS_EXTEND = 2'd2;
localparam [1:0] CLASS_LOCAL = 2'd3;

function [7:0] byte_at(input [DATA_WIDTH-1:0] d, input integer idx);
    byte_at = d[idx*8 +: 8];
endfunction

function [15:0] be16(input [DATA_WIDTH-1:0] d, input integer o);
    be16 = {byte_at(d, o), byte_at(d, o+1)};
endfunction

function [31:0] be32(input [DATA_WIDTH-1:0] d, input integer o);
    be32 = {be16(d, o), be16(d, o+2)};
endfunction

function [63:0] be64(input [DATA_WIDTH-1:0] d, input integer o);
    be64 = {be32(d, o), be32(d, o+4)};
endfunction

// State across the beats of one packet.
reg              first_reg = 1'b1, first_next;
reg [LEN_WIDTH-1:0] count_reg = 0, count_next;
reg [31:0]       crc_reg = 32'hffffffff, crc_next;
reg [15:0]       plen_reg = 0, plen_next;

// Output stage.
reg [DATA_WIDTH-1:0] out_data_reg = 0;
reg [KEEP_WIDTH-1:0] out_keep_reg = 0;
reg                  out_valid_reg = 1'b0;
reg                  out_last_reg = 1'b0;

reg [7:0]  opcode_reg = 0, opcode_next;
reg [7:0]  flags_reg = 0, flags_next;
reg [7:0]  status_reg = 0, status_next;
reg [31:0] pid_reg = 0, pid_next;
reg [31:0] req_id_reg = 0, req_id_next;
reg [31:0] retry_of_reg = 0, retry_of_next;
reg [63:0] va_reg = 0, va_next;
reg [31:0] total_len_reg = 0, total_len_next;
reg [31:0] offset_reg = 0, offset_next;
reg [15:0] session_reg = 0, session_next;
reg [31:0] epoch_reg = 0, epoch_next;
reg [63:0] key_reg = 0, key_next;
reg [31:0] ack_reg = 0, ack_next;
reg        unknown_op_reg = 0, unknown_op_next;
reg [31:0] carried_crc_reg = 0, carried_crc_next;
reg        malformed_reg = 0, malformed_next;
reg        request_reg = 0, request_next;
reg [1:0]  class_reg = 0, class_next;
reg        err_short_reg = 0, err_short_next;
reg        err_crc_reg = 0, err_crc_next;
reg [LEN_WIDTH-1:0] pkt_len_reg = 0, pkt_len_next;

wire accept = s_axis_tvalid && s_axis_tready;
assign s_axis_tready = !out_valid_reg || m_axis_tready;

// Header fields of the current beat (meaningful on the first beat).
wire [15:0] beat_plen = be16(s_axis_tdata, CLIO_OFF_PAYLOAD_LEN);
wire [15:0] cur_plen = first_reg ? beat_plen : plen_reg;
localparam [LEN_WIDTH:0] HDR_LEN = CLIO_HEADER_LEN[LEN_WIDTH:0];
wire [LEN_WIDTH:0] limit = HDR_LEN + {{(LEN_WIDTH+1-16){1'b0}}, cur_plen};

reg [KEEP_WIDTH-1:0] crc_keep;
reg [DATA_WIDTH-1:0] crc_data;
reg [BEAT_BYTES_W-1:0] beat_bytes;
wire [31:0] crc_out;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    crc_keep = s_axis_tkeep;
    crc_data = s_axis_tdata;
    beat_bytes = 0;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (s_axis_tkeep[i]) begin
            beat_bytes = i[BEAT_BYTES_W-1:0] + 1'b1;
        end
        if ({1'b0, count_reg} + i[LEN_WIDTH:0] >= limit) begin
            crc_keep[i] = 1'b0;
        end
    end
    if (first_reg) begin
        // The CRC field itself counts as zero.
        crc_data[CLIO_OFF_CRC*8 +: 32] = 32'd0;
    end
end

clio_crc32c #(
    .DATA_WIDTH(DATA_WIDTH),
    .KEEP_WIDTH(KEEP_WIDTH)
)
crc_inst (
    .crc_in(first_reg ? 32'hffffffff : crc_reg),
    .data(crc_data),
    .keep(crc_keep),
    .crc_out(crc_out)
);

reg        op_known;
reg        op_request;
reg [1:0]  op_class;
reg        slice;
reg [32:0] slice_end;
/* verilator lint_off UNUSEDSIGNAL */
reg [64:0] va_end;  // only the carry matters
/* verilator lint_on UNUSEDSIGNAL */
reg [LEN_WIDTH:0] total_bytes;

always_comb begin
    first_next = first_reg;
    count_next = count_reg;
    crc_next = crc_reg;
    plen_next = plen_reg;
    opcode_next = opcode_reg;
    flags_next = flags_reg;
    status_next = status_reg;
    pid_next = pid_reg;
    req_id_next = req_id_reg;
    retry_of_next = retry_of_reg;
    va_next = va_reg;
    total_len_next = total_len_reg;
    offset_next = offset_reg;
    session_next = session_reg;
    epoch_next = epoch_reg;
    key_next = key_reg;
    ack_next = ack_reg;
    unknown_op_next = unknown_op_reg;
    carried_crc_next = carried_crc_reg;
    malformed_next = malformed_reg;
    request_next = request_reg;
    class_next = class_reg;
    err_short_next = err_short_reg;
    err_crc_next = err_crc_reg;
    pkt_len_next = pkt_len_reg;

    op_known = 1'b1;
    op_request = 1'b1;
    op_class = CLASS_FAST;
    case (byte_at(s_axis_tdata, CLIO_OFF_OPCODE))
        OP_ALLOC, OP_FREE, OP_OPEN_SESSION, OP_CLOSE_SESSION: op_class = CLASS_SLOW;
        OP_READ, OP_WRITE, OP_TAS, OP_CAS, OP_FAA, OP_LOCK, OP_UNLOCK, OP_FENCE: op_class = CLASS_FAST;
        OP_POINTER_CHASE, OP_OFFLOAD_CALL: op_class = CLASS_EXTEND;
        OP_INFO: op_class = CLASS_LOCAL;
        OP_ALLOC_RESP, OP_FREE_RESP, OP_READ_RESP, OP_WRITE_RESP, OP_TAS_RESP, OP_CAS_RESP,
        OP_FAA_RESP, OP_LOCK_RESP, OP_UNLOCK_RESP, OP_FENCE_RESP, OP_POINTER_CHASE_RESP,
        OP_OFFLOAD_CALL_RESP, OP_INFO_RESP, OP_OPEN_SESSION_RESP, OP_CLOSE_SESSION_RESP,
        OP_NACK: op_request = 1'b0;
        default: begin
            op_known = 1'b0;
            op_request = 1'b0;
        end
    endcase
    slice = byte_at(s_axis_tdata, CLIO_OFF_OPCODE) == OP_WRITE
        || byte_at(s_axis_tdata, CLIO_OFF_OPCODE) == OP_READ_RESP;
    slice_end = {1'b0, be32(s_axis_tdata, CLIO_OFF_OFFSET)} + {17'd0, beat_plen};
    va_end = {1'b0, be64(s_axis_tdata, CLIO_OFF_VA)} + {33'd0, be32(s_axis_tdata, CLIO_OFF_TOTAL_LEN)};
    total_bytes = {1'b0, count_reg} + {{(LEN_WIDTH+1-BEAT_BYTES_W){1'b0}}, beat_bytes};

    if (accept) begin
        count_next = total_bytes[LEN_WIDTH-1:0];
        crc_next = crc_out;
        first_next = s_axis_tlast;
        if (first_reg) begin
            plen_next = beat_plen;
            opcode_next = byte_at(s_axis_tdata, CLIO_OFF_OPCODE);
            flags_next = byte_at(s_axis_tdata, CLIO_OFF_FLAGS);
            status_next = byte_at(s_axis_tdata, CLIO_OFF_STATUS);
            pid_next = be32(s_axis_tdata, CLIO_OFF_PID);
            req_id_next = be32(s_axis_tdata, CLIO_OFF_REQ_ID);
            retry_of_next = be32(s_axis_tdata, CLIO_OFF_RETRY_OF);
            va_next = be64(s_axis_tdata, CLIO_OFF_VA);
            total_len_next = be32(s_axis_tdata, CLIO_OFF_TOTAL_LEN);
            offset_next = be32(s_axis_tdata, CLIO_OFF_OFFSET);
            session_next = be16(s_axis_tdata, CLIO_OFF_SESSION);
            epoch_next = be32(s_axis_tdata, CLIO_OFF_EPOCH);
            key_next = be64(s_axis_tdata, CLIO_OFF_KEY);
            ack_next = be32(s_axis_tdata, CLIO_OFF_ACK);
            unknown_op_next = byte_at(s_axis_tdata, CLIO_OFF_VERSION) == CLIO_VERSION[7:0] && !op_known;
            carried_crc_next = be32(s_axis_tdata, CLIO_OFF_CRC);
            request_next = op_request;
            class_next = op_class;
            malformed_next = byte_at(s_axis_tdata, CLIO_OFF_VERSION) != CLIO_VERSION[7:0]
                || !op_known
                || byte_at(s_axis_tdata, CLIO_OFF_STATUS) > STATUS_OVER_QUOTA
                || (byte_at(s_axis_tdata, CLIO_OFF_FLAGS) & ~(FLAG_FIXED_VA | FLAG_MOVED | FLAG_DUPLICATE)) != 8'd0
                || {16'd0, beat_plen} > CLIO_MAX_PAYLOAD
                || (slice && slice_end > {1'b0, be32(s_axis_tdata, CLIO_OFF_TOTAL_LEN)})
                || va_end[64];
        end
        if (s_axis_tlast) begin
            count_next = 0;
            pkt_len_next = total_bytes[LEN_WIDTH-1:0];
            err_short_next = total_bytes < limit || total_bytes[LEN_WIDTH];
            // A short packet is reported as short only (its CRC is meaningless).
            err_crc_next = !err_short_next
                && ~crc_out != (first_reg ? be32(s_axis_tdata, CLIO_OFF_CRC) : carried_crc_reg);
        end
    end
end

always_ff @(posedge clk) begin
    if (s_axis_tready) begin
        out_valid_reg <= s_axis_tvalid;
        if (s_axis_tvalid) begin
            out_data_reg <= s_axis_tdata;
            out_keep_reg <= s_axis_tkeep;
            out_last_reg <= s_axis_tlast;
        end
    end

    first_reg <= first_next;
    count_reg <= count_next;
    crc_reg <= crc_next;
    plen_reg <= plen_next;
    opcode_reg <= opcode_next;
    flags_reg <= flags_next;
    status_reg <= status_next;
    pid_reg <= pid_next;
    req_id_reg <= req_id_next;
    retry_of_reg <= retry_of_next;
    va_reg <= va_next;
    total_len_reg <= total_len_next;
    offset_reg <= offset_next;
    session_reg <= session_next;
    epoch_reg <= epoch_next;
    key_reg <= key_next;
    ack_reg <= ack_next;
    unknown_op_reg <= unknown_op_next;
    carried_crc_reg <= carried_crc_next;
    malformed_reg <= malformed_next;
    request_reg <= request_next;
    class_reg <= class_next;
    err_short_reg <= err_short_next;
    err_crc_reg <= err_crc_next;
    pkt_len_reg <= pkt_len_next;

    if (rst) begin
        out_valid_reg <= 1'b0;
        first_reg <= 1'b1;
        count_reg <= 0;
    end
end

assign m_axis_tdata = out_data_reg;
assign m_axis_tkeep = out_keep_reg;
assign m_axis_tvalid = out_valid_reg;
assign m_axis_tlast = out_last_reg;

assign m_hdr_opcode = opcode_reg;
assign m_hdr_flags = flags_reg;
assign m_hdr_status = status_reg;
assign m_hdr_pid = pid_reg;
assign m_hdr_req_id = req_id_reg;
assign m_hdr_retry_of = retry_of_reg;
assign m_hdr_va = va_reg;
assign m_hdr_total_len = total_len_reg;
assign m_hdr_offset = offset_reg;
assign m_hdr_payload_len = plen_reg;
assign m_hdr_session = session_reg;
assign m_hdr_epoch = epoch_reg;
assign m_hdr_key = key_reg;
assign m_hdr_ack = ack_reg;
assign m_err_unknown_op = unknown_op_reg;
assign m_pkt_len = pkt_len_reg;
assign m_err_short = err_short_reg;
assign m_err_crc = err_crc_reg;
assign m_err_malformed = malformed_reg;
assign m_opcode_request = request_reg;
assign m_class = class_reg;

endmodule

`resetall
