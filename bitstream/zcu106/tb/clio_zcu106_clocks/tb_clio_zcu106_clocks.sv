// tb_clio_zcu106_clocks: the whole clio_zcu106_top with clock models of the PS and the 10G core: each MAC user clock must run.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Simulation only (run.sh builds it with -DCLIO_STUB_CLOCKS and the vendor
// stubs). The stub of the xxv_ethernet core gives tx_clk_out_N only when
// txoutclksel_in_N selects TXPROGDIVCLK (3'b101), as the GT does, so this
// bench fails when the top leaves those inputs open (they read 0: finding 1
// of issue #17). It counts rising edges of both MAC user clocks and checks
// their period and that the MAC user resets are released.
module tb_clio_zcu106_clocks;

reg refclk = 1'b0;
always #3.2 refclk = !refclk;

wire [1:0] tx_p, tx_n, tx_dis_b;
wire [3:0] led;

clio_zcu106_top dut (
    .sfp_refclk_p(refclk),
    .sfp_refclk_n(!refclk),
    .sfp_rx_p(2'b00),
    .sfp_rx_n(2'b11),
    .sfp_tx_p(tx_p),
    .sfp_tx_n(tx_n),
    .sfp_tx_disable_b(tx_dis_b),
    .led(led)
);

integer edges0 = 0, edges1 = 0;
realtime last0 = 0.0, period0 = 0.0, last1 = 0.0, period1 = 0.0;
always @(posedge dut.clk_mac0) begin
    edges0 = edges0 + 1;
    if (last0 > 0.0) period0 = $realtime - last0;
    last0 = $realtime;
end
always @(posedge dut.clk_mac1) begin
    edges1 = edges1 + 1;
    if (last1 > 0.0) period1 = $realtime - last1;
    last1 = $realtime;
end

initial begin
    #2000;
    // 1.8 us after reset at 156.25 MHz is about 280 edges.
    if (edges0 < 250 || edges1 < 250) begin
        $display("FAIL: MAC user clocks do not run: clk_mac0 %0d, clk_mac1 %0d rising edges in 2 us (txoutclksel_in_N not 3'b101?)",
                 edges0, edges1);
        $fatal(1);
    end
    if (period0 < 6.3 || period0 > 6.5 || period1 < 6.3 || period1 > 6.5) begin
        $display("FAIL: MAC user clock periods %0.2f / %0.2f ns, expected 6.4 ns", period0, period1);
        $fatal(1);
    end
    if (dut.user_tx_reset_0 || dut.user_tx_reset_1 || dut.user_rx_reset_0 || dut.user_rx_reset_1) begin
        $display("FAIL: MAC user resets still asserted after 2 us");
        $fatal(1);
    end
    if (tx_dis_b !== 2'b11) begin
        $display("FAIL: SFP transmitters disabled (sfp_tx_disable_b = %b)", tx_dis_b);
        $fatal(1);
    end
    $display("PASS: clk_mac0 %0d and clk_mac1 %0d rising edges in 2 us, period %0.2f ns; MAC user resets released",
             edges0, edges1, period0);
    $finish;
end

endmodule

`resetall
