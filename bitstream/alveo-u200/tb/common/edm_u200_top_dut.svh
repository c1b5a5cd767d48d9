// edm_u200_top_dut.svh: the setup the whole-top benches share (tb_edm_u200_reset,
// tb_edm_u200_ready): the board clock, a wire for every output, and edm_u200_top
// as `dut` with idle serial lanes and the module cage present.
//
// Included inside a bench module, which first declares:
//   localparam integer TB_REFCLK_RESET_CYCLES  (edm_u200_top's REFCLK_RESET_CYCLES)
//   localparam integer TB_REFCLK_SETTLE_CYCLES (edm_u200_top's REFCLK_SETTLE_CYCLES)
//   localparam [0:0]   TB_PCIE_PERST_N         (1: PCIe out of reset, 0: held in PERST#)
// run.sh compiles the benches with -I tb/common.

// USER_SI570, 156.25 MHz.
reg user_clk = 1'b0;
always #3.2 user_clk = !user_clk;

wire [15:0] txp, txn;
wire q0_tx_p, q0_tx_n, q1_tx_p, q1_tx_n;
wire q0_modsel_l, q0_reset_l, q0_lpmode, q1_modsel_l, q1_reset_l, q1_lpmode;
wire [1:0] q0_fs, q1_fs;
wire q0_refclk_reset, q1_refclk_reset;
wire [2:0] led;

edm_u200_top #(
    .REFCLK_RESET_CYCLES(TB_REFCLK_RESET_CYCLES),
    .REFCLK_SETTLE_CYCLES(TB_REFCLK_SETTLE_CYCLES)
) dut (
    .user_clk_p(user_clk),
    .user_clk_n(!user_clk),
    .pcie_refclk_p(1'b0),
    .pcie_refclk_n(1'b1),
    .pcie_perst_n(TB_PCIE_PERST_N),
    .pci_exp_rxp(16'd0),
    .pci_exp_rxn(16'hffff),
    .pci_exp_txp(txp),
    .pci_exp_txn(txn),
    .qsfp0_refclk_p(1'b0),
    .qsfp0_refclk_n(1'b1),
    .qsfp0_rx_p(1'b0),
    .qsfp0_rx_n(1'b1),
    .qsfp0_tx_p(q0_tx_p),
    .qsfp0_tx_n(q0_tx_n),
    .qsfp0_modsel_l(q0_modsel_l),
    .qsfp0_reset_l(q0_reset_l),
    .qsfp0_lpmode(q0_lpmode),
    .qsfp0_modprs_l(1'b0),
    .qsfp0_fs(q0_fs),
    .qsfp0_refclk_reset(q0_refclk_reset),
    .qsfp1_refclk_p(1'b0),
    .qsfp1_refclk_n(1'b1),
    .qsfp1_rx_p(1'b0),
    .qsfp1_rx_n(1'b1),
    .qsfp1_tx_p(q1_tx_p),
    .qsfp1_tx_n(q1_tx_n),
    .qsfp1_modsel_l(q1_modsel_l),
    .qsfp1_reset_l(q1_reset_l),
    .qsfp1_lpmode(q1_lpmode),
    .qsfp1_modprs_l(1'b0),
    .qsfp1_fs(q1_fs),
    .qsfp1_refclk_reset(q1_refclk_reset),
    .led(led)
);
