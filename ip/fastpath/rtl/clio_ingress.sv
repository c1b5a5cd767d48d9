// clio_ingress: the fast path's intake stage: the parser, two packet buffers and the header registers.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The stage between the network and the top's consumers (issue #21):
//  - clio_rx_parser checks each packet (header fields, CRC, verdicts); its
//    beat stream and header outputs go to the hit lane, the session table's
//    intake check and the top's acceptance logic (`m_*`). A beat moves when
//    `m_valid && s_ready`; `s_ready` is the top's acceptance (it depends on
//    the engine's and the lanes' state, so it is computed there).
//  - Two packet buffers (banks of PKT_BEATS + 1 beats): the parser's beats
//    fill bank `m_in_bank` while the engine holds the packet of bank
//    `m_eng_bank` (and the write lane may still read earlier WRITEs'
//    payloads from either bank). Every accepted beat is kept, except a beat
//    the hit lane takes as a read (`s_take_rd`); beats past PKT_BEATS are
//    counted off but not stored.
//  - The header registers (`m_h_*`): the fields of the engine's packet,
//    captured from the parser with the last beat of a packet the hit lane
//    does not take (`s_to_lane` low), or formed from a request the hit lane
//    hands over from its L2 (`s_ho_valid`; the top gates it with the
//    engine's readiness). A packet the engine takes moves the parser to the
//    other bank; so does each WRITE the hit lane takes (two lane writes in
//    flight keep their beats in the two banks); a WRITE handed over gives
//    the engine its bank (`s_ho_bank`) and the parser the other one (a
//    handed-over READ has no beats in a bank and moves nothing).
//    `m_h_from_lane` says which of the two filled them.
//  - Read ports: beats 0 and 1 of the engine's packet (`m_eng01`), beat 0
//    of the bank being filled (`m_in_prev`, the hit lane's first beat of a
//    two-beat write) and two pairs of consecutive beats at any buffer index
//    (`s_rd_*_idx`: bank 1 starts at PKT_BEATS + 1), combinational.
module clio_ingress #(
    parameter DATA_WIDTH = 512,
    parameter PKT_BEATS = 24
) (
    input  wire                      clk,
    input  wire                      rst,

    input  wire [DATA_WIDTH-1:0]     s_axis_tdata,
    input  wire [DATA_WIDTH/8-1:0]   s_axis_tkeep,
    input  wire                      s_axis_tvalid,
    output wire                      s_axis_tready,
    input  wire                      s_axis_tlast,

    // The parser's checked beats and header (header fields valid with the
    // last beat).
    output wire [DATA_WIDTH-1:0]     m_tdata,
    output wire                      m_valid,
    output wire                      m_tlast,
    input  wire                      s_ready,
    output wire [7:0]                m_hdr_opcode,
    output wire [7:0]                m_hdr_flags,
    output wire [7:0]                m_hdr_status,
    output wire [31:0]               m_hdr_pid,
    output wire [31:0]               m_hdr_req_id,
    output wire [31:0]               m_hdr_retry_of,
    output wire [63:0]               m_hdr_va,
    output wire [31:0]               m_hdr_total_len,
    output wire [31:0]               m_hdr_offset,
    output wire [15:0]               m_hdr_payload_len,
    output wire [15:0]               m_hdr_session,
    output wire [31:0]               m_hdr_epoch,
    output wire [63:0]               m_hdr_key,
    output wire [31:0]               m_hdr_ack,
    output wire [15:0]               m_pkt_len,
    output wire                      m_err_short,
    output wire                      m_err_crc,
    output wire                      m_err_malformed,

    // The hit lane takes the packet of the beat in flight (`s_to_lane`), as
    // a read (`s_take_rd`: its beat is not kept).
    input  wire                      s_to_lane,
    input  wire                      s_take_rd,

    // A request the hit lane hands over to the engine.
    input  wire                      s_ho_valid,
    input  wire                      s_ho_wr,
    input  wire [31:0]               s_ho_pid,
    input  wire [31:0]               s_ho_req_id,
    input  wire [31:0]               s_ho_retry_of,
    input  wire [63:0]               s_ho_va,
    input  wire [31:0]               s_ho_total_len,
    input  wire [31:0]               s_ho_offset,
    input  wire [6:0]                s_ho_payload_len,
    input  wire [15:0]               s_ho_session,
    input  wire [31:0]               s_ho_epoch,
    input  wire [63:0]               s_ho_key,
    input  wire [31:0]               s_ho_ack,
    input  wire                      s_ho_bank,

    // Buffer state.
    output reg                       m_in_bank = 1'b0,
    output reg                       m_eng_bank = 1'b0,
    output reg  [$clog2(PKT_BEATS+1)-1:0] m_beat = 0,

    // The engine's packet header.
    output reg  [7:0]                m_h_op = 0,
    output reg  [7:0]                m_h_flags = 0,
    output reg  [7:0]                m_h_status = 0,
    output reg  [31:0]               m_h_pid = 0,
    output reg  [31:0]               m_h_req_id = 0,
    output reg  [31:0]               m_h_retry_of = 0,
    output reg  [31:0]               m_h_total_len = 0,
    output reg  [31:0]               m_h_offset = 0,
    output reg  [63:0]               m_h_va = 0,
    output reg  [15:0]               m_h_plen = 0,
    output reg  [15:0]               m_h_len = 0,
    output reg  [15:0]               m_h_session = 0,
    output reg  [31:0]               m_h_epoch = 0,
    output reg  [31:0]               m_h_ack = 0,
    output reg  [63:0]               m_h_key = 0,
    output reg                       m_h_short = 0,
    output reg                       m_h_crc = 0,
    output reg                       m_h_malformed = 0,
    output reg                       m_h_unknown = 0,
    output reg                       m_h_request = 0,
    output reg                       m_h_from_lane = 0,

    // Read ports.
    output wire [2*DATA_WIDTH-1:0]   m_eng01,
    output wire [DATA_WIDTH-1:0]     m_in_prev,
    input  wire [31:0]               s_rd_a_idx,
    output wire [2*DATA_WIDTH-1:0]   m_rd_a_pair,
    input  wire [31:0]               s_rd_b_idx,
    output wire [2*DATA_WIDTH-1:0]   m_rd_b_pair
);

import clio_pkg::*;

localparam PBW = $clog2(PKT_BEATS + 1);
localparam PB1 = PKT_BEATS + 1;

wire p_unknown, p_request;
// The class output and tkeep are not needed: dispatch decodes the opcode
// itself, and the length comes from the parser.
/* verilator lint_off UNUSEDSIGNAL */
wire [1:0] p_class;
wire [DATA_WIDTH/8-1:0] p_tkeep;
/* verilator lint_on UNUSEDSIGNAL */

clio_rx_parser #(.DATA_WIDTH(DATA_WIDTH)) parser_inst (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tlast(s_axis_tlast),
    .m_axis_tdata(m_tdata), .m_axis_tkeep(p_tkeep), .m_axis_tvalid(m_valid),
    .m_axis_tready(s_ready), .m_axis_tlast(m_tlast),
    .m_hdr_opcode(m_hdr_opcode), .m_hdr_flags(m_hdr_flags), .m_hdr_status(m_hdr_status), .m_hdr_pid(m_hdr_pid),
    .m_hdr_req_id(m_hdr_req_id), .m_hdr_retry_of(m_hdr_retry_of), .m_hdr_va(m_hdr_va),
    .m_hdr_total_len(m_hdr_total_len), .m_hdr_offset(m_hdr_offset), .m_hdr_payload_len(m_hdr_payload_len),
    .m_hdr_session(m_hdr_session), .m_hdr_epoch(m_hdr_epoch), .m_hdr_key(m_hdr_key), .m_hdr_ack(m_hdr_ack),
    .m_pkt_len(m_pkt_len), .m_err_short(m_err_short), .m_err_crc(m_err_crc), .m_err_malformed(m_err_malformed),
    .m_err_unknown_op(p_unknown),
    .m_opcode_request(p_request), .m_class(p_class)
);

reg [DATA_WIDTH-1:0] pkt_mem [0:2*PB1-1];

assign m_eng01 = m_eng_bank ? {pkt_mem[PB1 + 1], pkt_mem[PB1]} : {pkt_mem[1], pkt_mem[0]};
assign m_in_prev = m_in_bank ? pkt_mem[PB1] : pkt_mem[0];
assign m_rd_a_pair = {pkt_mem[s_rd_a_idx + 1], pkt_mem[s_rd_a_idx]};
assign m_rd_b_pair = {pkt_mem[s_rd_b_idx + 1], pkt_mem[s_rd_b_idx]};

always @(posedge clk) begin
    // Every beat but a lane read's is kept (a lane write's, for a hand-off).
    if (m_valid && s_ready && !s_take_rd) begin
        if (m_beat < PKT_BEATS) begin
            pkt_mem[(m_in_bank ? PB1 : 0) + {{(32-PBW){1'b0}}, m_beat}] <= m_tdata;
            m_beat <= m_beat + 1'b1;
        end
        if (m_tlast) m_beat <= 0;
        // A lane write: the next packet goes to the other bank.
        if (m_tlast && s_to_lane) m_in_bank <= !m_in_bank;
        if (m_tlast && !s_to_lane) begin
            // The engine's packet: the next one goes to the other bank.
            m_eng_bank <= m_in_bank;
            m_in_bank <= !m_in_bank;
            m_h_op <= m_hdr_opcode;
            m_h_flags <= m_hdr_flags;
            m_h_status <= m_hdr_status;
            m_h_pid <= m_hdr_pid;
            m_h_req_id <= m_hdr_req_id;
            m_h_retry_of <= m_hdr_retry_of;
            m_h_va <= m_hdr_va;
            m_h_total_len <= m_hdr_total_len;
            m_h_offset <= m_hdr_offset;
            m_h_plen <= m_hdr_payload_len;
            m_h_len <= m_pkt_len;
            m_h_session <= m_hdr_session;
            m_h_epoch <= m_hdr_epoch;
            m_h_key <= m_hdr_key;
            m_h_ack <= m_hdr_ack;
            m_h_short <= m_err_short;
            m_h_crc <= m_err_crc;
            m_h_malformed <= m_err_malformed;
            m_h_unknown <= p_unknown;
            m_h_request <= p_request;
            m_h_from_lane <= 1'b0;
        end
    end
    if (s_ho_valid) begin
        // An L2 request the lane cannot finish: the engine takes it over
        // (a write's beats are still in its bank: no beat entered that bank
        // while the lane held it; a later packet's are in the other one).
        if (s_ho_wr) begin
            m_eng_bank <= s_ho_bank;
            m_in_bank <= !s_ho_bank;
        end
        m_h_op <= s_ho_wr ? OP_WRITE : OP_READ;
        m_h_flags <= 8'd0;
        m_h_status <= STATUS_OK;
        m_h_pid <= s_ho_pid;
        m_h_req_id <= s_ho_req_id;
        m_h_retry_of <= s_ho_retry_of;
        m_h_va <= s_ho_va;
        m_h_total_len <= s_ho_total_len;
        m_h_offset <= s_ho_offset;
        m_h_plen <= s_ho_wr ? {9'd0, s_ho_payload_len} : 16'd0;
        m_h_len <= CLIO_HEADER_LEN[15:0] + (s_ho_wr ? {9'd0, s_ho_payload_len} : 16'd0);
        m_h_session <= s_ho_session;
        m_h_epoch <= s_ho_epoch;
        m_h_key <= s_ho_key;
        m_h_ack <= s_ho_ack;
        m_h_short <= 1'b0;
        m_h_crc <= 1'b0;
        m_h_malformed <= 1'b0;
        m_h_unknown <= 1'b0;
        m_h_request <= 1'b1;
        m_h_from_lane <= 1'b1;
    end
    if (rst) begin
        m_beat <= 0;
        m_in_bank <= 1'b0;
        m_eng_bank <= 1'b0;
    end
end

endmodule

`resetall
