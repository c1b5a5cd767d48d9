// clio_bucket_hash: pipelined bucket index of (PID, VPN) for the hash page table.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// index = ((vpn ^ rotl64(pid, HASH_PID_ROTATE)) * HASH_MULTIPLIER) >> (64 - BUCKET_BITS),
// the wire crate's `bucket_index`. Two register stages (mix, multiply),
// valid/ready with II = 1; `user` rides along.
module clio_bucket_hash #(
    parameter BUCKET_BITS = 16,
    parameter USER_WIDTH = 1
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire [31:0]            s_pid,
    input  wire [63:0]            s_vpn,
    input  wire [USER_WIDTH-1:0]  s_user,
    input  wire                   s_valid,
    output wire                   s_ready,

    output wire [BUCKET_BITS-1:0] m_index,
    output wire [USER_WIDTH-1:0]  m_user,
    output wire                   m_valid,
    input  wire                   m_ready
);

import clio_pkg::HASH_MULTIPLIER;
import clio_pkg::HASH_PID_ROTATE;

initial begin
    if (BUCKET_BITS < 1 || BUCKET_BITS > 32) begin
        $error("Error: BUCKET_BITS must be in 1..32 (instance %m)");
        $finish;
    end
end

reg [63:0]            key_reg = 0;
reg [USER_WIDTH-1:0]  user1_reg = 0;
reg                   valid1_reg = 1'b0;
reg [BUCKET_BITS-1:0] index_reg = 0;
reg [USER_WIDTH-1:0]  user2_reg = 0;
reg                   valid2_reg = 1'b0;

wire ready2 = !valid2_reg || m_ready;
wire ready1 = !valid1_reg || ready2;
assign s_ready = ready1;

wire [63:0] pid64 = {32'd0, s_pid};
wire [63:0] pid_rot = (pid64 << HASH_PID_ROTATE) | (pid64 >> (64 - HASH_PID_ROTATE));
// Only the top BUCKET_BITS of the 64-bit product form the index.
/* verilator lint_off UNUSEDSIGNAL */
wire [63:0] product = key_reg * HASH_MULTIPLIER;
/* verilator lint_on UNUSEDSIGNAL */

always_ff @(posedge clk) begin
    if (ready1) begin
        valid1_reg <= s_valid;
        key_reg <= s_vpn ^ pid_rot;
        user1_reg <= s_user;
    end
    if (ready2) begin
        valid2_reg <= valid1_reg;
        index_reg <= product[63 -: BUCKET_BITS];
        user2_reg <= user1_reg;
    end
    if (rst) begin
        valid1_reg <= 1'b0;
        valid2_reg <= 1'b0;
    end
end

assign m_index = index_reg;
assign m_user = user2_reg;
assign m_valid = valid2_reg;

endmodule

`resetall
