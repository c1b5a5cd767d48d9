// edm_msg_encoder: a memory message (header + body bytes) into /MS/ /MD/ /MT/ or /MST/ blocks.
//
// The header is taken with start; the body arrives as little-endian 8-byte words, one per
// cycle while body_ready is high. Block k >= 1 carries body bytes 8k-7 .. 8k (the /MS/ holds
// body byte 0), so each output block joins the top 7 bytes of one word with the low byte of
// the next. One block per cycle; the first block leaves 2 cycles after start (the message
// queue read and the block creation of EDM §3.2.1), or 1 cycle after start when the first
// body word comes with start (body_valid in the start cycle; the host engine does so for
// RREQ/RMWREQ, whose address is in its message queue): the block is then on the output in
// the cycle the TX shim registers it, so the model's 2 cycles count to the line.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_msg_encoder (
    input  wire        clk,
    input  wire        rst,

    input  wire        start,
    input  wire [2:0]  hdr_kind,
    input  wire        hdr_last,
    input  wire [3:0]  hdr_op,
    input  wire [15:0] hdr_peer,
    input  wire [7:0]  hdr_id,
    input  wire [15:0] hdr_len,
    output wire        start_ready,

    input  wire [63:0] body_data,
    input  wire        body_valid,
    output wire        body_ready,

    output reg  [63:0] out_data,
    output reg  [1:0]  out_hdr,
    output reg         out_valid,
    output reg         out_last,
    output reg         out_error
);

import edm_pkg::*;

// body bytes the header implies (clio_wire::edm::MsgHeader::body_len)
function automatic [16:0] body_bytes(input [2:0] kind, input [3:0] op, input [15:0] len);
    case (kind)
        MSG_KIND_RREQ: body_bytes = 17'(ADDR_BYTES);
        MSG_KIND_WREQ: body_bytes = 17'(ADDR_BYTES) + {1'b0, len};
        MSG_KIND_RMWREQ: body_bytes = 17'(ADDR_BYTES) + ((op == RMW_OP_CAS) ? 17'd16 :
                (op == RMW_OP_FAA || op == RMW_OP_SWAP) ? 17'd8 : 17'd0);
        default: body_bytes = {1'b0, len};
    endcase
endfunction

// Encoder states: waiting for a message, sending its head block, its body blocks.
typedef enum logic [1:0] {
    S_IDLE = 2'd0,
    S_HEAD = 2'd1,
    S_BODY = 2'd2
} state_t;

state_t    state_reg;
reg [47:0] head_reg;      // payload bytes 1..6: kind/last/op, peer, id, len
reg [16:0] body_reg;      // body bytes still to place (after body byte 0)
reg [16:0] blocks_reg;    // blocks still to send after the current one
reg [55:0] carry_reg;     // bytes 1..7 of the last word taken
reg        err_reg;

assign start_ready = state_reg == S_IDLE;
// a word is needed for the first block (if the body is not empty) and for every /MD/ (its
// last byte is the next word's first)
wire need_word = (state_reg == S_HEAD && body_reg != 0) || (state_reg == S_BODY && blocks_reg > 1);
wire [16:0] start_body = body_bytes(hdr_kind, hdr_op, hdr_len);
// the first word taken together with start
// (an empty body with body_valid: the /MST/ at once too, its word not taken)
wire fast = state_reg == S_IDLE && start && body_valid;
assign body_ready = need_word || (state_reg == S_IDLE && start && start_body != 0);

// header validity (clio_wire::edm::MsgHeader::check)
wire hdr_ok = (hdr_kind == MSG_KIND_RMWREQ) ? (hdr_op <= RMW_OP_TAS && hdr_last &&
                  hdr_len == ((hdr_op == RMW_OP_CAS || hdr_op == RMW_OP_TAS) ? 16'd1 : 16'd8)) :
              (hdr_op == 4'd0 && hdr_kind <= MSG_KIND_RRES &&
               (hdr_kind != MSG_KIND_RREQ || (hdr_len != 0 && hdr_last)) &&
               (hdr_kind != MSG_KIND_WREQ || hdr_len != 0));

wire [16:0] start_blocks = (start_body <= 1) ? 17'd1 : 17'd1 + ((start_body + 17'd7) >> 3);

always_ff @(posedge clk) begin
    out_valid <= 1'b0;
    out_last <= 1'b0;
    out_error <= 1'b0;
    case (state_reg)
        S_IDLE: begin
            if (fast) begin
                // the /MS/ (or /MST/) at once
                out_valid <= 1'b1;
                out_hdr <= SYNC_CTRL;
                out_data <= {start_body != 0 ? body_data[7:0] : 8'd0, hdr_len, hdr_id, hdr_peer,
                             hdr_op, hdr_last, hdr_kind, start_blocks == 1 ? BT_MST : BT_MS};
                out_error <= !hdr_ok;
                err_reg <= !hdr_ok;
                head_reg <= {hdr_len, hdr_id, hdr_peer, hdr_op, hdr_last, hdr_kind};
                carry_reg <= body_data[63:8];
                body_reg <= (start_body > 8) ? start_body - 17'd8 : 17'd0;
                if (start_blocks == 1) begin
                    out_last <= 1'b1;
                end else begin
                    blocks_reg <= start_blocks - 1;
                    state_reg <= S_BODY;
                end
            end else if (start) begin
                head_reg <= {hdr_len, hdr_id, hdr_peer, hdr_op, hdr_last, hdr_kind};
                body_reg <= start_body;
                // 1 block for a body of at most 1 byte, else 1 + ceil(body / 8)
                blocks_reg <= start_blocks;
                err_reg <= !hdr_ok;
                state_reg <= S_HEAD;
            end
        end
        S_HEAD: begin
            if (body_valid || body_reg == 0) begin
                out_valid <= 1'b1;
                out_hdr <= SYNC_CTRL;
                out_data <= {body_reg != 0 ? body_data[7:0] : 8'd0, head_reg[47:0],
                             blocks_reg == 1 ? BT_MST : BT_MS};
                out_error <= err_reg;
                carry_reg <= body_data[63:8];
                body_reg <= (body_reg > 8) ? body_reg - 17'd8 : 17'd0;
                if (blocks_reg == 1) begin
                    out_last <= 1'b1;
                    state_reg <= S_IDLE;
                end else begin
                    blocks_reg <= blocks_reg - 1;
                    state_reg <= S_BODY;
                end
            end
        end
        default: begin
            if (blocks_reg == 1) begin
                // /MT/: the remaining (0..7) body bytes
                out_valid <= 1'b1;
                out_hdr <= SYNC_CTRL;
                out_data <= {carry_reg, BT_MT};
                out_last <= 1'b1;
                state_reg <= S_IDLE;
            end else if (body_valid) begin
                // /MD/
                out_valid <= 1'b1;
                out_hdr <= SYNC_DATA;
                out_data <= {body_data[7:0], carry_reg};
                carry_reg <= body_data[63:8];
                body_reg <= (body_reg > 8) ? body_reg - 17'd8 : 17'd0;
                blocks_reg <= blocks_reg - 1;
            end
        end
    endcase

    if (rst) begin
        state_reg <= S_IDLE;
        out_valid <= 1'b0;
        out_last <= 1'b0;
        out_error <= 1'b0;
    end
end

endmodule

`resetall
