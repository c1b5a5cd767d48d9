// clio_count_cdc: carries a counter from one clock domain to another.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The source counter must change by at most one per s_clk cycle (it may
// wrap). Its Gray code is registered in the source domain (one bit changes
// per step, and a register, not logic, drives the crossing), sampled by two
// flip-flops in the destination domain and turned back into binary there:
// a sample taken while a bit changes is the value before or after that step,
// never a mix, so m_count only ever shows values the counter held, in order,
// 4 to 5 destination cycles late (2 synchronizer stages, the Gray register
// and the output register). The same scheme as the async FIFO's pointers.
module clio_count_cdc #(
    parameter WIDTH = 32
) (
    input  wire             s_clk,
    input  wire [WIDTH-1:0] s_count,
    input  wire             m_clk,
    output reg  [WIDTH-1:0] m_count = '0
);

initial begin
    if (WIDTH < 2) begin
        $error("Error: WIDTH must be at least 2 (instance %m)");
        $finish;
    end
end

function automatic [WIDTH-1:0] gray2bin(input [WIDTH-1:0] g);
    integer i;
    gray2bin[WIDTH-1] = g[WIDTH-1];
    for (i = WIDTH - 2; i >= 0; i = i - 1) begin
        gray2bin[i] = gray2bin[i + 1] ^ g[i];
    end
endfunction

reg [WIDTH-1:0] s_gray_reg = '0;
(* ASYNC_REG = "TRUE" *) reg [WIDTH-1:0] m_sync1_reg = '0;
(* ASYNC_REG = "TRUE" *) reg [WIDTH-1:0] m_sync2_reg = '0;

always_ff @(posedge s_clk) begin
    s_gray_reg <= s_count ^ (s_count >> 1);
end

always_ff @(posedge m_clk) begin
    m_sync1_reg <= s_gray_reg;
    m_sync2_reg <= m_sync1_reg;
    m_count <= gray2bin(m_sync2_reg);
end

endmodule

`resetall
