// clio_crc32c: CRC32C (reflected 0x82F63B78) over one stream beat of up to KEEP_WIDTH bytes per cycle.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational: advances a running (non-inverted) CRC register by the bytes
// of `data` whose `keep` bit is set, lowest byte lane first. Callers start
// from 32'hffffffff and invert at the end, as the wire crate does.
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

initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: DATA_WIDTH must be KEEP_WIDTH * 8 (instance %m)");
        $finish;
    end
end

reg [31:0] crc_reg;
integer i, j;

always @* begin
    crc_reg = crc_in;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        if (keep[i]) begin
            for (j = 0; j < 8; j = j + 1) begin
                if (crc_reg[0] ^ data[i*8+j]) begin
                    crc_reg = (crc_reg >> 1) ^ CRC32C_POLY_REFLECTED;
                end else begin
                    crc_reg = crc_reg >> 1;
                end
            end
        end
    end
end

assign crc_out = crc_reg;

endmodule

`resetall
