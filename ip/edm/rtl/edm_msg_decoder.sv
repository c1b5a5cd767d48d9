// edm_msg_decoder: memory-side blocks (from edm_rx_classify) back into messages, demand
// notifications and grants.
//
// Body bytes are realigned into little-endian 8-byte words as blocks arrive (word j joins
// the last byte of one block with bytes 0..6 of the next). At the message's last block,
// msg_valid reports the header and whether the message is good: msg_bad_field when the
// header is invalid (as clio-wire's MsgHeader::check), msg_bad_length when the block count
// disagrees with it. Consumers drop the body words of a message that is not good. /N/ and /G/
// are parsed the same way (ctl_*). Outputs registered.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_msg_decoder (
    input  wire        clk,
    input  wire        rst,

    // class 1 = /MS/, 2 = /MD/, 3 = /MT/, 4 = /MST/, 5 = /N/, 6 = /G/
    input  wire [63:0] in_data,
    input  wire [2:0]  in_class,
    input  wire        in_valid,

    output reg  [63:0] body_data,
    output reg         body_valid,

    output reg         msg_valid,
    output reg         msg_bad_field,
    output reg         msg_bad_length,
    output reg  [2:0]  msg_kind,
    output reg         msg_last,
    output reg  [3:0]  msg_op,
    output reg  [15:0] msg_peer,
    output reg  [7:0]  msg_id,
    output reg  [15:0] msg_len,

    output reg         ctl_valid,
    output reg         ctl_grant,
    output reg         ctl_bad_field,
    output reg  [15:0] ctl_peer,
    output reg  [7:0]  ctl_id,
    output reg  [15:0] ctl_len,
    output reg  [2:0]  ctl_kind,

    // the header of the message being received (from the cycle after its /MS/ on), for a
    // consumer that places body words as they arrive
    output wire [47:0] cur_head
);

import edm_pkg::*;

function automatic [16:0] body_bytes(input [2:0] kind, input [3:0] op, input [15:0] len);
    case (kind)
        MSG_KIND_RREQ: body_bytes = 17'(ADDR_BYTES);
        MSG_KIND_WREQ: body_bytes = 17'(ADDR_BYTES) + {1'b0, len};
        MSG_KIND_RMWREQ: body_bytes = 17'(ADDR_BYTES) + ((op == RMW_OP_CAS) ? 17'd16 :
                (op == RMW_OP_FAA || op == RMW_OP_SWAP) ? 17'd8 : 17'd0);
        default: body_bytes = {1'b0, len};
    endcase
endfunction

// header fields of a /MS/ or /MST/ payload
wire [2:0]  h_kind = in_data[MSG_KIND_LSB +: 3];
wire        h_last = in_data[MSG_LAST_BIT];
wire [3:0]  h_op = in_data[MSG_OP_LSB +: 4];
wire [15:0] h_len = in_data[MSG_LEN_LSB +: 16];
wire h_ok = (h_kind == MSG_KIND_RMWREQ) ? (h_op <= RMW_OP_TAS && h_last &&
                h_len == ((h_op == RMW_OP_CAS || h_op == RMW_OP_TAS) ? 16'd1 : 16'd8)) :
            (h_op == 4'd0 && h_kind <= MSG_KIND_RRES &&
             (h_kind != MSG_KIND_RREQ || (h_len != 0 && h_last)) &&
             (h_kind != MSG_KIND_WREQ || h_len != 0));
wire [16:0] h_body = body_bytes(h_kind, h_op, h_len);
wire [16:0] h_blocks = (h_body <= 1) ? 17'd1 : 17'd1 + ((h_body + 17'd7) >> 3);

reg        in_msg_reg;
reg        ok_reg;
reg [16:0] want_reg;      // blocks the header asks for
reg [16:0] seen_reg;      // blocks received so far
reg [16:0] words_reg;     // body words still to emit
reg [7:0]  carry_reg;
reg [47:0] head_reg;
assign cur_head = head_reg;

always_ff @(posedge clk) begin
    body_valid <= 1'b0;
    msg_valid <= 1'b0;
    ctl_valid <= 1'b0;
    if (in_valid) begin
        case (in_class)
            3'd1, 3'd4: begin
                // /MS/ or /MST/: a new message (a message in progress was cut short)
                head_reg <= in_data[55:8];
                ok_reg <= h_ok;
                want_reg <= h_blocks;
                seen_reg <= 17'd1;
                carry_reg <= in_data[63:56];
                words_reg <= (h_body + 17'd7) >> 3;
                in_msg_reg <= in_class == 3'd1;
                if (in_class == 3'd4) begin
                    if (h_body != 0) begin
                        body_data <= {56'd0, in_data[63:56]};
                        body_valid <= 1'b1;
                    end
                    msg_valid <= 1'b1;
                    msg_bad_field <= !h_ok;
                    msg_bad_length <= h_ok && h_blocks != 1;
                    {msg_len, msg_id, msg_peer, msg_op, msg_last, msg_kind} <= in_data[55:8];
                end
            end
            3'd2, 3'd3: begin
                if (in_msg_reg) begin
                    seen_reg <= seen_reg + 1;
                    if (words_reg != 0) begin
                        body_data <= (in_class == 3'd2) ? {in_data[55:0], carry_reg} : {in_data[63:8], carry_reg};
                        body_valid <= 1'b1;
                        words_reg <= words_reg - 1;
                    end
                    carry_reg <= in_data[63:56];
                    if (in_class == 3'd3) begin
                        in_msg_reg <= 1'b0;
                        msg_valid <= 1'b1;
                        msg_bad_field <= !ok_reg;
                        msg_bad_length <= ok_reg && seen_reg + 1 != want_reg;
                        {msg_len, msg_id, msg_peer, msg_op, msg_last, msg_kind} <= head_reg;
                    end
                end
            end
            3'd5, 3'd6: begin
                in_msg_reg <= 1'b0;
                ctl_valid <= 1'b1;
                ctl_grant <= in_class == 3'd6;
                ctl_peer <= in_data[CB_PEER_LSB +: 16];
                ctl_id <= in_data[CB_ID_LSB +: 8];
                ctl_len <= in_data[CB_LEN_LSB +: 16];
                ctl_kind <= in_data[CB_KIND_LSB +: 3];
                if (in_class == 3'd5) begin
                    ctl_bad_field <= in_data[CB_LEN_LSB +: 16] == 16'd0;
                end else begin
                    ctl_bad_field <= in_data[CB_LEN_LSB +: 16] == 16'd0 ||
                        !(in_data[CB_KIND_LSB +: 8] == 8'(MSG_KIND_WREQ) || in_data[CB_KIND_LSB +: 8] == 8'(MSG_KIND_RRES));
                end
            end
            default: begin
            end
        endcase
    end

    if (rst) begin
        in_msg_reg <= 1'b0;
        body_valid <= 1'b0;
        msg_valid <= 1'b0;
        ctl_valid <= 1'b0;
    end
end

endmodule

`resetall
