// clio_resp_builder: response packet assembly (header + payload), CRC32C fill and AXI-stream output.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine writes payload bytes into the packet buffer at packet byte
// offsets (CLIO_HEADER_LEN + payload offset), up to one beat's worth per
// cycle at any byte alignment. `start` latches the header fields and the
// payload length; the builder then runs the buffered beats through the CRC
// unit (one beat per cycle, header with a zero CRC field first), patches the
// big-endian CRC into the header and streams the packet out. `done` pulses
// with the last beat accepted.
module clio_resp_builder #(
    parameter DATA_WIDTH = 512,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter BEATS = 24
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire                   wr_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]            wr_off,     // bits above the buffer size are ignored
    /* verilator lint_on UNUSEDSIGNAL */
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

localparam BW = $clog2(BEATS);
localparam OW = $clog2(KEEP_WIDTH);

initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH || (1 << OW) != KEEP_WIDTH) begin
        $error("Error: DATA_WIDTH must be a power-of-two number of bytes (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH < CLIO_HEADER_LEN) begin
        $error("Error: the header must fit in the first beat (instance %m)");
        $finish;
    end
    if (BEATS < 3) begin
        $error("Error: BEATS must be at least 3 (instance %m)");
        $finish;
    end
end

function [31:0] bswap32(input [31:0] v);
    bswap32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction

function [63:0] bswap64(input [63:0] v);
    bswap64 = {bswap32(v[31:0]), bswap32(v[63:32])};
endfunction

// The packet buffer as two single-write-port banks (even and odd beats): a
// write of up to one beat touches beat wr_beat (lanes from wr_lane up) and
// beat wr_beat + 1 (lanes below wr_lane), which always lie in different
// banks. Both take the same data, wr_data rotated up by wr_lane bytes, with
// per-byte enables; reads are asynchronous (LUT RAM).
localparam EVEN_BEATS = (BEATS + 1) / 2;
localparam ODD_BEATS = BEATS / 2;
localparam HW = BW - 1;  // bank address bits

reg [DATA_WIDTH-1:0] even_mem[0:EVEN_BEATS-1];
reg [DATA_WIDTH-1:0] odd_mem[0:ODD_BEATS-1];

wire [BW-1:0] wr_beat = wr_off[OW +: BW];
wire [OW-1:0] wr_lane = wr_off[OW-1:0];
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_WIDTH-1:0] wr_dup = {wr_data, wr_data} << {wr_lane, 3'd0};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_WIDTH-1:0] wr_rot = wr_dup[DATA_WIDTH +: DATA_WIDTH];
wire [KEEP_WIDTH-1:0] wr_len_mask = wr_len[OW] ? {KEEP_WIDTH{1'b1}} : ~({KEEP_WIDTH{1'b1}} << wr_len[OW-1:0]);
wire [2*KEEP_WIDTH-1:0] wr_mask = {{KEEP_WIDTH{1'b0}}, wr_len_mask} << wr_lane;
// Beat wr_beat + 1 (its bank address and whether it exists).
wire [BW:0]   wr_next = {1'b0, wr_beat} + 1'b1;
wire          wr_lo_ok = {1'b0, wr_beat} < BEATS[BW:0];
wire          wr_hi_ok = wr_next < BEATS[BW:0];
// Even bank: wr_beat if even (low lanes), else wr_beat + 1 (high lanes).
wire [HW-1:0] even_addr = wr_beat[0] ? wr_next[HW:1] : wr_beat[BW-1:1];
wire [KEEP_WIDTH-1:0] even_we = !wr_en ? {KEEP_WIDTH{1'b0}}
    : wr_beat[0] ? (wr_hi_ok ? wr_mask[KEEP_WIDTH +: KEEP_WIDTH] : {KEEP_WIDTH{1'b0}})
    : (wr_lo_ok ? wr_mask[KEEP_WIDTH-1:0] : {KEEP_WIDTH{1'b0}});
wire [HW-1:0] odd_addr = wr_beat[BW-1:1];
wire [KEEP_WIDTH-1:0] odd_we = !wr_en ? {KEEP_WIDTH{1'b0}}
    : wr_beat[0] ? (wr_lo_ok ? wr_mask[KEEP_WIDTH-1:0] : {KEEP_WIDTH{1'b0}})
    : (wr_hi_ok ? wr_mask[KEEP_WIDTH +: KEEP_WIDTH] : {KEEP_WIDTH{1'b0}});

// Controller states: idle, running the CRC over the buffered beats, streaming out.
typedef enum logic [1:0] {
    ST_IDLE = 2'd0,
    ST_CRC = 2'd1,
    ST_OUT = 2'd2
} state_t;
state_t              state_reg = ST_IDLE;
reg [DATA_WIDTH-1:0] hdr_reg = 0;      // beat 0 header bytes (crc zero)
reg [16:0]           len_reg = 0;      // packet bytes
reg [BW:0]           beat_reg = 0;
reg [BW:0]           last_beat_reg = 0;
reg [31:0]           crc_reg = 32'hffffffff;
reg                  done_reg = 1'b0;

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

// The current beat with the header merged in (beat 0).
reg [DATA_WIDTH-1:0] cur_beat;
reg [KEEP_WIDTH-1:0] cur_keep;
/* verilator lint_off WIDTH */
wire [16:0] beat_start = {beat_reg, {OW{1'b0}}};
/* verilator lint_on WIDTH */
wire [16:0] remain = len_reg - beat_start;
// The buffer read stays a continuous assignment: an `always_comb` block that
// reads the banks is woken by every write to them under Icarus 11 (its bench
// took over 10 min instead of 40 s).
wire [DATA_WIDTH-1:0] buf_beat = beat_reg[0] ? odd_mem[beat_reg[BW-1:1]] : even_mem[beat_reg[BW-1:1]];

always_comb begin
    integer i;  // loop index local to the block (no shared variable between processes)
    cur_beat = buf_beat;
    if (beat_reg == 0) begin
        for (i = 0; i < CLIO_HEADER_LEN; i = i + 1) begin
            cur_beat[i*8 +: 8] = hdr_reg[i*8 +: 8];
        end
    end
    cur_keep = {KEEP_WIDTH{1'b1}};
    /* verilator lint_off WIDTH */
    if (remain < KEEP_WIDTH) begin
        cur_keep = ~({KEEP_WIDTH{1'b1}} << remain);
    end
    /* verilator lint_on WIDTH */
end

wire [31:0] crc_out;
clio_crc32c #(.DATA_WIDTH(DATA_WIDTH), .KEEP_WIDTH(KEEP_WIDTH)) crc_inst (
    .crc_in(crc_reg), .data(cur_beat), .keep(cur_keep), .crc_out(crc_out)
);

reg [DATA_WIDTH-1:0] out_beat;
always_comb begin
    integer i;
    // Lanes past the end of the packet carry zeros, not stale buffer bytes.
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        out_beat[i*8 +: 8] = cur_keep[i] ? cur_beat[i*8 +: 8] : 8'd0;
    end
    if (beat_reg == 0) begin
        out_beat[CLIO_OFF_CRC*8 +: 32] = bswap32(~crc_reg);
    end
end

always_ff @(posedge clk) begin
    integer i;
    done_reg <= 1'b0;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (even_we[i]) even_mem[even_addr][i*8 +: 8] <= wr_rot[i*8 +: 8];
        if (odd_we[i]) odd_mem[odd_addr][i*8 +: 8] <= wr_rot[i*8 +: 8];
    end
    case (state_reg)
        ST_IDLE: begin
            if (start) begin
                hdr_reg <= hdr_image;
                /* verilator lint_off WIDTH */
                len_reg <= CLIO_HEADER_LEN + hdr_payload_len;
                last_beat_reg <= (CLIO_HEADER_LEN + hdr_payload_len - 1) >> OW;
                /* verilator lint_on WIDTH */
                beat_reg <= 0;
                crc_reg <= 32'hffffffff;
                state_reg <= ST_CRC;
            end
        end
        ST_CRC: begin
            crc_reg <= crc_out;
            beat_reg <= beat_reg + 1'b1;
            if (beat_reg == last_beat_reg) begin
                beat_reg <= 0;
                state_reg <= ST_OUT;
            end
        end
        ST_OUT: begin
            if (m_axis_tready) begin
                beat_reg <= beat_reg + 1'b1;
                if (beat_reg == last_beat_reg) begin
                    state_reg <= ST_IDLE;
                    done_reg <= 1'b1;
                end
            end
        end
        default: state_reg <= ST_IDLE;
    endcase
    if (rst) begin
        state_reg <= ST_IDLE;
        done_reg <= 1'b0;
    end
end

assign busy = state_reg != ST_IDLE;
assign done = done_reg;
assign m_axis_tdata = out_beat;
assign m_axis_tkeep = cur_keep;
assign m_axis_tvalid = state_reg == ST_OUT;
assign m_axis_tlast = beat_reg == last_beat_reg;

endmodule

`resetall
