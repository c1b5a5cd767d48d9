// edm_scrambler: IEEE 802.3 Clause 49 self-synchronizing scrambler (x^58 + x^39 + 1),
// 64 payload bits per cycle; the sync header passes through. Registered output.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_scrambler #(
    parameter DESCRAMBLE = 0
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [63:0] in_data,
    input  wire [1:0]  in_hdr,
    input  wire        in_valid,
    output reg  [63:0] out_data,
    output reg  [1:0]  out_hdr,
    output reg         out_valid
);

// state bit j = the line bit sent (scrambler) or received (descrambler) j+1 bits ago
reg [57:0]  state_reg;
reg [121:0] ext;
reg [63:0]  res;
reg [57:0]  state_next;

always_comb begin : lfsr
    integer k, i, j;
    for (k = 0; k < 58; k = k + 1) begin
        ext[k] = state_reg[57-k];
    end
    for (i = 0; i < 64; i = i + 1) begin
        if (DESCRAMBLE != 0) begin
            ext[58+i] = in_data[i];
            res[i] = in_data[i] ^ ext[i+19] ^ ext[i];
        end else begin
            ext[58+i] = in_data[i] ^ ext[i+19] ^ ext[i];
            res[i] = ext[58+i];
        end
    end
    for (j = 0; j < 58; j = j + 1) begin
        state_next[j] = ext[121-j];
    end
end

always_ff @(posedge clk) begin
    out_valid <= in_valid;
    if (in_valid) begin
        out_data <= res;
        out_hdr <= in_hdr;
        state_reg <= state_next;
    end
    if (rst) begin
        state_reg <= {58{1'b1}};
        out_valid <= 1'b0;
    end
end

endmodule

`resetall
