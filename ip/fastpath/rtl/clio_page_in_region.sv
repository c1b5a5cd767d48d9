// clio_page_in_region: whether a page of 2^shift bytes at a PPN lies wholly inside a physical region.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational. The region is [s_lo, s_hi), below 2^64; the page's start
// and end are computed on 96 bits, so neither wraps: a page of 2^64 bytes or
// more is never inside. Used wherever a PPN is taken from outside the block:
// a PTE the walk read (the top), a PTE_WRITE's and a FREE_PA_PUSH's page
// (clio_tx_cmd). Their shifts are below 32, where a 65-bit sum (the helper
// function this replaces) gave the same answer.
module clio_page_in_region (
    input  wire [31:0] s_ppn,
    input  wire [7:0]  s_shift,
    input  wire [63:0] s_lo,
    input  wire [63:0] s_hi,
    output wire        m_in
);

wire [95:0] start = {64'd0, s_ppn} << s_shift[5:0];
wire [95:0] fin = start + (96'd1 << s_shift[5:0]);
assign m_in = s_shift < 8'd64 && start >= {32'd0, s_lo} && fin <= {32'd0, s_hi};

endmodule

`resetall
