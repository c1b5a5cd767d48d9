// edm_board_reset: SI5335 reference-clock reset pulse and the transceivers' reset, on a free-running board clock.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Runs on clk_free, the U200's user SI570 (156.25 MHz at power-up, a board
// oscillator): the XDMA's axi_aclk is derived from the PCIe reference clock
// and is not free-running (PG195: it stops with the PCIe link, e.g. while
// PERST# is held), so the transceivers' reset controller and the clock
// generator's reset must not depend on it.
//
// After configuration: the SI5335's frequency-select pins are driven to FS
// (the top ties qsfp*_fs constant, so they are valid from the first cycle),
// then its RESET is held high for RESET_CYCLES so it restarts with that FS
// (reference designs for this card constrain qsfp*_refclk_reset and pulse
// it after setting FS; the pin is active high), then the transceivers are
// held in reset (gt_reset_all) for SETTLE_CYCLES more while the 161.13 MHz
// reference settles. Defaults at 156.25 MHz: 105 us and 27 ms.
module edm_board_reset #(
    parameter integer RESET_CYCLES = 16384,
    parameter integer SETTLE_CYCLES = 4194304
) (
    input  wire clk_free,
    output wire refclk_reset,
    output wire gt_reset_all
);

localparam integer TOTAL = RESET_CYCLES + SETTLE_CYCLES;
localparam integer W = $clog2(TOTAL + 1);

// Power-up value: the FPGA's registers come out of configuration with their
// initial values, so the sequence starts without any other reset.
reg [W-1:0] count = {W{1'b0}};
reg refclk_reset_reg = 1'b1;
reg gt_reset_reg = 1'b1;

always @(posedge clk_free) begin
    if (count != TOTAL[W-1:0]) begin
        count <= count + 1'b1;
    end
    refclk_reset_reg <= count < RESET_CYCLES[W-1:0];
    gt_reset_reg <= count != TOTAL[W-1:0];
end

assign refclk_reset = refclk_reset_reg;
assign gt_reset_all = gt_reset_reg;

endmodule

`resetall
