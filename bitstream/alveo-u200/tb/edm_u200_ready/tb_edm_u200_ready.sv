// tb_edm_u200_ready: edm_u200_top with PCIe and the transceivers running (stand-ins): STATUS.READY, read by the host over AXI-Lite, goes high when the Clio-to-EDM translator is up.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Simulation only (run.sh, with -DCLIO_STUB_CLOCKS -DCLIO_STUB_PCIE and the
// vendor stubs): the stand-in clio_xdma runs axi_aclk, releases axi_aresetn at
// 200 ns and reads STATUS over and over through the card's AXI-Lite register
// block, as the host's XdmaLink::open does; the stand-in transceivers run
// their user clocks and report their resets done at GT_DONE_NS (2000 ns).
// Checks: with PCIe up but port 0's transceiver still in reset (the
// translator held in reset), the host reads STATUS.READY = 0; once the
// transceiver is up (the translator out of reset), STATUS.READY = 1, and it
// never falls back. The STATUS bits are clio_pkg's (generated from
// clio-wire's xdma register map).
module tb_edm_u200_ready;

import clio_pkg::*;

localparam integer TB_REFCLK_RESET_CYCLES = 20;
localparam integer TB_REFCLK_SETTLE_CYCLES = 30;
localparam [0:0] TB_PCIE_PERST_N = 1'b1;  // PCIe out of reset
`include "edm_u200_top_dut.svh"

integer errors = 0, reads_low = 0, reads_high = 0, falls = 0, last_reads = 0;
reg seen_high = 1'b0;

// Each completed host read of STATUS.
always @(posedge dut.clk_pcie) begin
    if (dut.xdma_inst.status_reads != last_reads) begin
        last_reads = dut.xdma_inst.status_reads;
        if ((dut.xdma_inst.status_last & XDMA_STATUS_READY) != 0) begin
            reads_high = reads_high + 1;
            seen_high = 1'b1;
            if (!dut.gt0_inst.gtwiz_reset_tx_done_out) begin
                $display("FAIL: STATUS.READY = 1 at %0t with port 0's transceiver in reset", $time);
                errors = errors + 1;
            end
        end else begin
            reads_low = reads_low + 1;
            if (seen_high) falls = falls + 1;
        end
    end
end

initial begin
    #5000;
    if (reads_low == 0) begin
        $display("FAIL: the host never read STATUS.READY = 0 before the translator was up");
        errors = errors + 1;
    end
    if (reads_high < 5 || falls != 0) begin
        $display("FAIL: STATUS.READY = 1 in %0d reads, fell %0d times after rising", reads_high, falls);
        errors = errors + 1;
    end
    if (errors != 0) $fatal(1);
    $display("PASS: STATUS.READY read 0 in %0d host reads while the translator was in reset, 1 in %0d reads once it was up (STATUS = %08x)",
             reads_low, reads_high, dut.xdma_inst.status_last);
    $finish;
end

endmodule

`resetall
