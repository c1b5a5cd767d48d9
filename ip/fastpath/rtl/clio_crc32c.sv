// clio_crc32c: CRC32C (reflected 0x82F63B78) over one stream beat of up to KEEP_WIDTH bytes per cycle.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational: advances a running (non-inverted) CRC register by the bytes
// of `data` whose `keep` bit is set, lowest byte lane first. Callers start
// from 32'hffffffff and invert at the end, as the wire crate does.
//
// `keep` must be contiguous from lane 0 (2^n - 1 for n valid bytes, the
// AXI-stream packet convention every user follows); simulation reports any
// other mask. The update is linear over GF(2), so instead of a byte-by-byte
// chain it is computed as
//   R       = A^(8W) crc_in  ^  D * (data with the invalid lanes zeroed)
//   crc_out = A^(-8k) R,   k = W - n invalid lanes,
// where A is one zero bit through the register, D the fixed full-beat data
// matrix (W = KEEP_WIDTH bytes) and A^(-8k) the residue stage: it removes
// the k trailing zero bytes again, one conditional 32x32 matrix per bit of k.
// All matrices are constants derived from CRC32C_POLY_REFLECTED at
// elaboration; the running CRC enters as the first 32 data bits.
module clio_crc32c #(
    parameter DATA_WIDTH = 512,
    parameter KEEP_WIDTH = DATA_WIDTH / 8
) (
    input  wire [31:0]           crc_in,
    input  wire [DATA_WIDTH-1:0] data,
    input  wire [KEEP_WIDTH-1:0] keep,
    output wire [31:0]           crc_out
);

import clio_pkg::CRC32C_POLY_REFLECTED;

localparam [31:0] POLY = CRC32C_POLY_REFLECTED;
// Bits of the invalid-lane count k (0..KEEP_WIDTH).
localparam KW = $clog2(KEEP_WIDTH + 1);

initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: DATA_WIDTH must be KEEP_WIDTH * 8 (instance %m)");
        $finish;
    end
    if (DATA_WIDTH < 32) begin
        $error("Error: DATA_WIDTH must be at least 32 (instance %m)");
        $finish;
    end
    if (!POLY[31]) begin
        // The residue stage inverts the register step, which needs bit 31.
        $error("Error: the reflected polynomial must have bit 31 set (instance %m)");
        $finish;
    end
end

// Row i of the data matrix D: bit p is set when data bit p reaches CRC bit
// i after the full beat (a data bit enters as POLY and then sees the
// remaining 8W - 1 - p zero steps). A running-CRC bit s reaches bit 0 after
// s steps and enters as POLY there too, so D's first 32 columns are also
// the matrix A^(8W) of crc_in: the beat is D * (data ^ crc_in).
// (Steps are written inline: yosys evaluates constant functions slowly.)
function [DATA_WIDTH-1:0] data_row(input [4:0] i);
    reg [31:0] v;
    integer p;
    begin
        v = POLY;
        for (p = DATA_WIDTH - 1; p >= 0; p = p - 1) begin
            data_row[p] = v[i];
            v = {1'b0, v[31:1]} ^ (v[0] ? POLY : 32'd0);
        end
    end
endfunction

// Row-major 32x32 matrix A^(-steps): each column e_s goes back `steps`
// zero bits (bit 31 of a stepped register is the bit that was shifted out).
function [32*32-1:0] unstep_matrix(input integer steps);
    reg [31:0] v;
    integer s, i, n;
    begin
        unstep_matrix = 0;
        for (s = 0; s < 32; s = s + 1) begin
            v = 32'd1 << s;
            for (n = 0; n < steps; n = n + 1) begin
                v = {v[30:0] ^ (v[31] ? POLY[30:0] : 31'd0), v[31]};
            end
            for (i = 0; i < 32; i = i + 1) unstep_matrix[i*32 + s] = v[i];
        end
    end
endfunction

// Per bit j of k, the valid-byte counts n (0..W) whose k = W - n has it set.
function [KEEP_WIDTH:0] count_select(input integer j);
    integer n;
    begin
        for (n = 0; n <= KEEP_WIDTH; n = n + 1) count_select[n] = (((KEEP_WIDTH - n) >> j) & 1) != 0;
    end
endfunction

// Row-major 32x32 matrix times a vector.
function [31:0] zmul(input [32*32-1:0] m, input [31:0] v);
    integer r;
    begin
        for (r = 0; r < 32; r = r + 1) zmul[r] = ^(v & m[r*32 +: 32]);
    end
endfunction

// The invalid-lane count k from the contiguous mask (n as one-hot: last
// valid lane below, first invalid lane above) and the masked beat with the
// running CRC folded into its first 32 bits.
reg [KEEP_WIDTH:0]   n_onehot;
wire [KW-1:0]        k;
reg [DATA_WIDTH-1:0] beat;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    n_onehot = {keep, 1'b1} & ~{1'b0, keep};
    beat = 0;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (keep[i]) beat[i*8 +: 8] = data[i*8 +: 8];
    end
    beat[31:0] = beat[31:0] ^ crc_in;
end

genvar g;

// The full-beat matrix, one parity per CRC bit.
wire [31:0] full;
wire [32*(KW+1)-1:0] res /* verilator split_var */;  // residue stage j in bits [32j +: 32]

generate
    for (g = 0; g < 32; g = g + 1) begin : beat_rows
        localparam [DATA_WIDTH-1:0] ROW = data_row(g);
        assign full[g] = ^(beat & ROW);
    end
    for (g = 0; g < KW; g = g + 1) begin : residue
        localparam [KEEP_WIDTH:0] SEL = count_select(g);
        localparam [32*32-1:0] MAT = unstep_matrix(8 << g);
        assign k[g] = |(n_onehot & SEL);
        assign res[(g+1)*32 +: 32] = k[g] ? zmul(MAT, res[g*32 +: 32]) : res[g*32 +: 32];
    end
endgenerate

assign res[31:0] = full;
assign crc_out = res[KW*32 +: 32];

`ifndef SYNTHESIS
// The contract on `keep` (unknown values at start-up are not reported); a simulation
// check, so a plain `always @*` (Icarus refuses system tasks in `always_comb`).
always @* begin
    if (!$isunknown(keep) && ((({1'b0, keep} + 1'b1) & {1'b0, keep}) != 0)) begin
        $error("Error: clio_crc32c keep %h is not contiguous from lane 0 (instance %m)", keep);
    end
end
`endif

endmodule

`resetall
