// edm_block_cdc: 66-bit block stream from a transceiver's RX clock to the TX clock, deleting idle blocks to match rates.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The RX side runs on the recovered clock, the EDM stack on the TX clock:
// same nominal rate, up to +-100 ppm apart each. Blocks cross through an
// asynchronous FIFO (Gray-code pointers through two-flop synchronizers).
// Rate matching as in a standard PCS, at block granularity: when the writer
// sees the FIFO at least half full, an arriving idle block (the clause 49
// all-/I/ control block, BT_IDLE with zero control codes) is dropped instead
// of written (cnt_deleted). Only idle blocks are ever deleted: frames and
// EDM memory units are contiguous runs of non-idle blocks, so none is cut.
// The reader never inserts blocks: when the FIFO is empty out_valid is low
// for that cycle (the EDM RX path takes a valid per block, as it does for
// the gearbox's own gaps). A block arriving at a full FIFO is lost and
// counted (cnt_overflow): with DEPTH/2 blocks of margin and 200 ppm between
// the clocks, that takes DEPTH/2 x 5000 blocks without a single idle.
// The descrambler runs before this FIFO (a self-synchronizing descrambler
// must see every block), so the blocks here are plain.
// Resets: per side, synchronous, active high; reset both together.
module edm_block_cdc #(
    parameter DEPTH = 32
) (
    input  wire        wr_clk,
    input  wire        wr_rst,
    input  wire [63:0] in_data,
    input  wire [1:0]  in_hdr,
    input  wire        in_valid,
    output wire [31:0] cnt_deleted,
    output wire [31:0] cnt_overflow,

    input  wire        rd_clk,
    input  wire        rd_rst,
    output wire [63:0] out_data,
    output wire [1:0]  out_hdr,
    output wire        out_valid
);

import edm_pkg::*;

localparam AW = $clog2(DEPTH);

initial begin
    if (DEPTH < 8 || (1 << AW) != DEPTH) begin
        $error("Error: DEPTH must be a power of two of at least 8 (instance %m)");
        $finish;
    end
end

function [AW:0] bin2gray(input [AW:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

function [AW:0] gray2bin(input [AW:0] g);
    integer i;
    begin
        gray2bin[AW] = g[AW];
        for (i = AW - 1; i >= 0; i = i - 1) begin
            gray2bin[i] = gray2bin[i + 1] ^ g[i];
        end
    end
endfunction

reg [65:0] mem [0:DEPTH-1];

// ---------------------------------------------------------------------------
// Write side.
// ---------------------------------------------------------------------------
reg [AW:0]  wr_ptr_reg = 0;
reg [AW:0]  wr_gray_reg = 0;
reg [AW:0]  rd_gray_sync1_reg = 0, rd_gray_sync2_reg = 0;
reg [31:0]  deleted_reg = 0;
reg [31:0]  overflow_reg = 0;

wire [AW:0] wr_fill = wr_ptr_reg - gray2bin(rd_gray_sync2_reg);
wire        is_idle = in_hdr == SYNC_CTRL && in_data == {56'd0, BT_IDLE};
wire        del = in_valid && is_idle && wr_fill >= (AW + 1)'(DEPTH / 2);
wire        full = wr_fill == (AW + 1)'(DEPTH);
wire        push = in_valid && !del && !full;

always @(posedge wr_clk) begin
    rd_gray_sync1_reg <= rd_gray_reg;
    rd_gray_sync2_reg <= rd_gray_sync1_reg;
    if (push) begin
        mem[wr_ptr_reg[AW-1:0]] <= {in_hdr, in_data};
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
        wr_gray_reg <= bin2gray(wr_ptr_reg + 1'b1);
    end
    if (del) begin
        deleted_reg <= deleted_reg + 1'b1;
    end
    if (in_valid && !del && full) begin
        overflow_reg <= overflow_reg + 1'b1;
    end
    if (wr_rst) begin
        wr_ptr_reg <= 0;
        wr_gray_reg <= 0;
        rd_gray_sync1_reg <= 0;
        rd_gray_sync2_reg <= 0;
        deleted_reg <= 0;
        overflow_reg <= 0;
    end
end

// ---------------------------------------------------------------------------
// Read side.
// ---------------------------------------------------------------------------
reg [AW:0]  rd_ptr_reg = 0;
reg [AW:0]  rd_gray_reg = 0;
reg [AW:0]  wr_gray_sync1_reg = 0, wr_gray_sync2_reg = 0;
reg [65:0]  out_reg = 0;
reg         out_valid_reg = 1'b0;

wire empty = rd_ptr_reg == gray2bin(wr_gray_sync2_reg);

always @(posedge rd_clk) begin
    wr_gray_sync1_reg <= wr_gray_reg;
    wr_gray_sync2_reg <= wr_gray_sync1_reg;
    out_valid_reg <= !empty;
    if (!empty) begin
        out_reg <= mem[rd_ptr_reg[AW-1:0]];
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
        rd_gray_reg <= bin2gray(rd_ptr_reg + 1'b1);
    end
    if (rd_rst) begin
        rd_ptr_reg <= 0;
        rd_gray_reg <= 0;
        wr_gray_sync1_reg <= 0;
        wr_gray_sync2_reg <= 0;
        out_valid_reg <= 1'b0;
    end
end

assign out_data = out_reg[63:0];
assign out_hdr = out_reg[65:64];
assign out_valid = out_valid_reg;
assign cnt_deleted = deleted_reg;
assign cnt_overflow = overflow_reg;

endmodule

`resetall
