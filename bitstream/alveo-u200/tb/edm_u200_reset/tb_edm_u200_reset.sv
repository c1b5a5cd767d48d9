// tb_edm_u200_reset: edm_u200_top with the XDMA's axi_aclk stopped: the SI5335 reset pulse and the transceivers' reset must still run.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Simulation only (run.sh, with -DCLIO_STUB_CLOCKS and the vendor stubs,
// whose clio_xdma ties axi_aclk to 0: a PCIe link that is down or held in
// PERST#). The board clock (USER_SI570, 156.25 MHz) runs. Checks, per QSFP
// cage: FS = 2'b10 on every cycle; qsfp*_refclk_reset high for exactly
// RESET cycles from power-up, then low for good, with FS already driven
// when it rises and falls; both transceivers' gtwiz_reset_all_in released
// RESET + SETTLE cycles after power-up, and their free-running reset clock
// toggling, without one edge of axi_aclk. (Before: no refclk reset port at
// all, and the reset controller ran on axi_aclk, so it never left reset.)
module tb_edm_u200_reset;

localparam integer RESET = 20;
localparam integer SETTLE = 30;

localparam integer TB_REFCLK_RESET_CYCLES = RESET;
localparam integer TB_REFCLK_SETTLE_CYCLES = SETTLE;
localparam [0:0] TB_PCIE_PERST_N = 1'b0;  // PCIe held in PERST#
`include "edm_u200_top_dut.svh"

integer cycle = 0, errors = 0;
integer reset_high0 = 0, reset_high1 = 0, falls0 = 0, falls1 = 0;
integer gt_release0 = -1, gt_release1 = -1, freerun_edges = 0, pcie_edges = 0;
reg last_reset0 = 1'b1, last_reset1 = 1'b1;

always @(posedge dut.gt0_inst.gtwiz_reset_clk_freerun_in) freerun_edges = freerun_edges + 1;
always @(posedge dut.clk_pcie) pcie_edges = pcie_edges + 1;

always @(negedge user_clk) begin
    if (q0_fs !== 2'b10 || q1_fs !== 2'b10) begin
        $display("FAIL: cycle %0d: FS = %b / %b, expected 10 / 10", cycle, q0_fs, q1_fs);
        errors = errors + 1;
    end
    if (q0_refclk_reset === 1'b1) reset_high0 = reset_high0 + 1;
    if (q1_refclk_reset === 1'b1) reset_high1 = reset_high1 + 1;
    if (last_reset0 === 1'b1 && q0_refclk_reset === 1'b0) falls0 = falls0 + 1;
    if (last_reset1 === 1'b1 && q1_refclk_reset === 1'b0) falls1 = falls1 + 1;
    if (gt_release0 < 0 && dut.gt0_inst.gtwiz_reset_all_in === 1'b0) gt_release0 = cycle;
    if (gt_release1 < 0 && dut.gt1_inst.gtwiz_reset_all_in === 1'b0) gt_release1 = cycle;
    last_reset0 = q0_refclk_reset;
    last_reset1 = q1_refclk_reset;
    cycle = cycle + 1;
end

initial begin
    #1500;
    if (reset_high0 != RESET || reset_high1 != RESET || falls0 != 1 || falls1 != 1) begin
        $display("FAIL: refclk reset high for %0d / %0d cycles (expected %0d), %0d / %0d falls (expected 1)",
                 reset_high0, reset_high1, RESET, falls0, falls1);
        errors = errors + 1;
    end
    if (gt_release0 < RESET + SETTLE || gt_release1 < RESET + SETTLE || gt_release0 > RESET + SETTLE + 2) begin
        $display("FAIL: transceiver reset_all released at cycle %0d / %0d, expected %0d (axi_aclk edges: %0d)",
                 gt_release0, gt_release1, RESET + SETTLE, pcie_edges);
        errors = errors + 1;
    end
    if (freerun_edges < 200) begin
        $display("FAIL: transceiver free-running clock: %0d edges", freerun_edges);
        errors = errors + 1;
    end
    if (pcie_edges != 0) begin
        $display("FAIL: the bench meant axi_aclk stopped, saw %0d edges", pcie_edges);
        errors = errors + 1;
    end
    if (errors != 0) $fatal(1);
    $display("PASS: SI5335 reset high %0d cycles with FS = 10, transceivers out of reset at cycle %0d, axi_aclk stopped (%0d edges)",
             reset_high0, gt_release0, pcie_edges);
    $finish;
end

endmodule

`resetall
