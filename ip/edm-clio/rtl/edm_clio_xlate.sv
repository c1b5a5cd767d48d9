// edm_clio_xlate: the classification stage of the U200 card's Clio-to-EDM translator.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Watches the H2C packet stream (one Clio request packet per frame, byte 0 in
// lane 0 of the first beat, keep contiguous from lane 0) and, one cycle after
// each packet's last beat, reports how the card carries it over EDM, by the one
// mapping of host-sdk/wire/src/edm_clio.rs (constants from the generated
// edm_pkg):
//   out_carry  CARRY_READ  (WREQ of the request record, then an RREQ of
//                           out_demand bytes of answer chain),
//              CARRY_WRITE (WREQ of the record; the answer comes back by WREQ),
//              CARRY_REFUSE (out_refuse says why, checked in this order:
//                           REFUSE_SHORT, REFUSE_PACKET_LEN, REFUSE_OPCODE,
//                           REFUSE_READ_LEN).
//   out_len    the packet's bytes (saturating at 16 bits).
// The stream is never back-pressured (s_tready = 1): the stage only reads.
// Checked packet by packet against edm-clio's model (tb/, vectors from
// `edm-clio-vectors`).
module edm_clio_xlate (
    input  wire        clk,
    input  wire        rst,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [63:0] s_tdata, // only the opcode and total_len lanes are read
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [7:0]  s_tkeep,
    input  wire        s_tvalid,
    input  wire        s_tlast,
    output wire        s_tready,
    output reg         out_valid,
    output reg  [1:0]  out_carry,
    output reg  [2:0]  out_refuse,
    output reg  [15:0] out_demand,
    output reg  [15:0] out_len
);

import edm_pkg::*;

assign s_tready = 1'b1;

// Byte offsets of the fields read (host-sdk/wire/src/clio.rs `field`): opcode
// at byte 1 (beat 0), total_len at bytes 24..27, big-endian (beat 3, lanes 0..3).
localparam int OPCODE_BEAT = 0;
localparam int TOTAL_BEAT = 3;

reg [15:0] beat_reg = 16'd0;
reg [16:0] len_reg = 17'd0;
reg [7:0]  opcode_reg = 8'd0;
reg [31:0] total_reg = 32'd0;

function automatic [3:0] keep_bytes(input [7:0] k);
    integer i;
    keep_bytes = 4'd0;
    for (i = 0; i < 8; i = i + 1) begin
        keep_bytes = keep_bytes + {3'd0, k[i]};
    end
endfunction

// This beat's contribution, so the decision can be made on the last beat.
wire [7:0]  opcode_now = (beat_reg == OPCODE_BEAT[15:0]) ? s_tdata[15:8] : opcode_reg;
wire [31:0] total_now = (beat_reg == TOTAL_BEAT[15:0])
    ? {s_tdata[7:0], s_tdata[15:8], s_tdata[23:16], s_tdata[31:24]} : total_reg;
wire [16:0] len_sum = len_reg + {13'd0, keep_bytes(s_tkeep)};
// A packet longer than 16 bits of bytes is refused as too long anyway.
wire [16:0] len_now = len_sum[16] ? 17'h1ffff : len_sum;
// Fields the packet does not reach are 0, as in the model's reading.
wire [7:0]  opcode_eff = (len_now > 17'd1) ? opcode_now : 8'd0;
wire [31:0] total_eff = (len_now >= 17'd28) ? total_now : 32'd0;

// Answer chain of a READ: seq, (len + header) per READ_ANSWER_PAYLOAD bytes, data, end.
wire [31:0] answers = (total_eff == 32'd0) ? 32'd1
    : ((total_eff + (EC_READ_ANSWER_PAYLOAD - 1)) >> $clog2(EC_READ_ANSWER_PAYLOAD));
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] demand = // at most 16 bits below EC_MAX_READ
    32'd6 + answers * (32'd2 + CLIO_HEADER_LEN) + total_eff;
/* verilator lint_on UNUSEDSIGNAL */

wire short_pkt = len_now < 17'(CLIO_HEADER_LEN);
wire long_pkt = len_now > 17'(EC_MAX_RECORD_PACKET);
wire bad_op = opcode_eff < 8'(CLIO_OP_FIRST) || opcode_eff > 8'(CLIO_OP_LAST);
wire is_read = opcode_eff == 8'(CLIO_OP_READ);
wire long_read = total_eff > EC_MAX_READ;

always_ff @(posedge clk) begin
    out_valid <= 1'b0;
    if (s_tvalid) begin
        if (s_tlast) begin
            out_valid <= 1'b1;
            out_len <= len_now[15:0] | {16{len_now[16]}};
            out_demand <= 16'd0;
            out_refuse <= 3'd0;
            if (short_pkt) begin
                out_carry <= 2'(CARRY_REFUSE);
                out_refuse <= 3'(REFUSE_SHORT);
            end else if (long_pkt) begin
                out_carry <= 2'(CARRY_REFUSE);
                out_refuse <= 3'(REFUSE_PACKET_LEN);
            end else if (bad_op) begin
                out_carry <= 2'(CARRY_REFUSE);
                out_refuse <= 3'(REFUSE_OPCODE);
            end else if (is_read && long_read) begin
                out_carry <= 2'(CARRY_REFUSE);
                out_refuse <= 3'(REFUSE_READ_LEN);
            end else if (is_read) begin
                out_carry <= 2'(CARRY_READ);
                out_demand <= demand[15:0];
            end else begin
                out_carry <= 2'(CARRY_WRITE);
            end
            beat_reg <= 16'd0;
            len_reg <= 17'd0;
            opcode_reg <= 8'd0;
            total_reg <= 32'd0;
        end else begin
            beat_reg <= (beat_reg == 16'hffff) ? beat_reg : beat_reg + 16'd1;
            len_reg <= len_now;
            opcode_reg <= opcode_now;
            total_reg <= total_now;
        end
    end
    if (rst) begin
        out_valid <= 1'b0;
        out_carry <= 2'd0;
        out_refuse <= 3'd0;
        out_demand <= 16'd0;
        out_len <= 16'd0;
        beat_reg <= 16'd0;
        len_reg <= 17'd0;
        opcode_reg <= 8'd0;
        total_reg <= 32'd0;
    end
end

endmodule

`resetall
