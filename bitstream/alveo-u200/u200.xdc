# u200.xdc -- pins and clocks of the EDM card on a Xilinx Alveo U200
# (xcu200-fsgd2104-2-e). Port names are the contract with the board top
# (`edm_u200_top`); ci/suites/30-bitstream.sh checks that every port named
# here is a port of the top and that every bit of every top port is
# constrained here, except the PCIe lanes the XDMA IP places (`ip_pins` in
# bitstream/build.tcl).
#
# Pin sources: the Alveo U200/U250 user guide (UG1289) and the card's
# master XDC. Lines marked CHECK need a Vivado run or a card
# (bitstream/README.md, "CHECK marks", lists each and why).

# ---------------------------------------------------------------------------
# Configuration (the card boots its shell from SPI flash at 1.8 V).
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]

# ---------------------------------------------------------------------------
# QSFP28 cage 0: GTY quad 231. EDM runs one 25G lane per cage (the cage's
# first lane, transceiver X1Y48); the other three lanes (M/L/K pins) are not
# used, so they are not ports of the top.
set_property PACKAGE_PIN N4 [get_ports qsfp0_rx_p]
set_property PACKAGE_PIN N3 [get_ports qsfp0_rx_n]
set_property PACKAGE_PIN N9 [get_ports qsfp0_tx_p]
set_property PACKAGE_PIN N8 [get_ports qsfp0_tx_n]
# QSFP28 cage 1: GTY quad 230, first lane (transceiver X1Y44).
set_property PACKAGE_PIN U4 [get_ports qsfp1_rx_p]
set_property PACKAGE_PIN U3 [get_ports qsfp1_rx_n]
set_property PACKAGE_PIN U9 [get_ports qsfp1_tx_p]
set_property PACKAGE_PIN U8 [get_ports qsfp1_tx_n]

# GT reference clocks: MGTREFCLK1 of quads 231 and 230 from the SI5335
# clock generator. With FS = 0b10 it outputs 161.1328125 MHz, the 25.78125
# Gb/s (25GBASE-R) reference; the board top drives qsfp*_fs to 2'b10.
set_property PACKAGE_PIN K11 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN K10 [get_ports qsfp0_refclk_n]
set_property PACKAGE_PIN P11 [get_ports qsfp1_refclk_p]
set_property PACKAGE_PIN P10 [get_ports qsfp1_refclk_n]
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
create_clock -period 6.206 -name qsfp1_refclk [get_ports qsfp1_refclk_p]

# QSFP28 sideband (bank 64/65 at 1.2 V).
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_modsel_l]
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_reset_l]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_lpmode]
set_property -dict {PACKAGE_PIN BE20 IOSTANDARD LVCMOS12 PULLUP true} [get_ports qsfp0_modprs_l]
set_property -dict {PACKAGE_PIN AT20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp0_fs[0]}]
set_property -dict {PACKAGE_PIN AU22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp0_fs[1]}]
set_property -dict {PACKAGE_PIN AY20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp1_modsel_l]
set_property -dict {PACKAGE_PIN BC18 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp1_reset_l]
set_property -dict {PACKAGE_PIN AV22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp1_lpmode]
set_property -dict {PACKAGE_PIN BC19 IOSTANDARD LVCMOS12 PULLUP true} [get_ports qsfp1_modprs_l]
set_property -dict {PACKAGE_PIN AR22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp1_fs[0]}]
set_property -dict {PACKAGE_PIN AU20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {qsfp1_fs[1]}]
# SI5335 RESET of each cage's reference clock (active high; pins from the
# card's master XDC, nets QSFP0_REFCLK_RESET / QSFP1_REFCLK_RESET in bank
# 64): pulsed after configuration with FS already driven (edm_board_reset).
set_property -dict {PACKAGE_PIN AT22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp0_refclk_reset]
set_property -dict {PACKAGE_PIN AR21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports qsfp1_refclk_reset]
set_false_path -to [get_ports {qsfp0_modsel_l qsfp0_reset_l qsfp0_lpmode qsfp0_fs[*] qsfp0_refclk_reset qsfp1_modsel_l qsfp1_reset_l qsfp1_lpmode qsfp1_fs[*] qsfp1_refclk_reset}]
set_output_delay 0 [get_ports {qsfp0_modsel_l qsfp0_reset_l qsfp0_lpmode qsfp0_fs[*] qsfp0_refclk_reset qsfp1_modsel_l qsfp1_reset_l qsfp1_lpmode qsfp1_fs[*] qsfp1_refclk_reset}]
set_false_path -from [get_ports {qsfp0_modprs_l qsfp1_modprs_l}]
set_input_delay 0 [get_ports {qsfp0_modprs_l qsfp1_modprs_l}]

# ---------------------------------------------------------------------------
# PCIe (XDMA IP, Gen3 x16 at PCIE4 X1Y2). The sixteen lanes (GTY quads
# 224-227; top ports pci_exp_{rx,tx}{p,n}[15:0]) are placed by the XDMA IP's
# own constraints from its `pcie_blk_locn`, so they have no PACKAGE_PIN here
# (bitstream/build.tcl lists them as `ip_pins`); only the reference clock
# and PERST# are ours.
# 100 MHz PCIe reference clock: MGTREFCLK0 of quad 226 (settled: AM11/AM10
# are MGTREFCLK0P/N_226 in the U200 master XDC, checked in the issue #17
# review; UG1289 also routes a second copy to quad 227, unused here).
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]
set_input_delay 0 [get_ports pcie_perst_n]

# ---------------------------------------------------------------------------
# USER_SI570: 156.25 MHz at power-up (LVDS, bank 64; pins from the card's
# master XDC, nets USER_SI570_CLOCK_P/N). The free-running clock of the
# transceivers' reset controllers and of edm_board_reset; axi_aclk is not
# free-running (PG195).
set_property -dict {PACKAGE_PIN AU19 IOSTANDARD LVDS} [get_ports user_clk_p]
set_property -dict {PACKAGE_PIN AV19 IOSTANDARD LVDS} [get_ports user_clk_n]
create_clock -period 6.400 -name user_clk [get_ports user_clk_p]

# ---------------------------------------------------------------------------
# User LEDs.
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*]}]
set_output_delay 0 [get_ports {led[*]}]

# ---------------------------------------------------------------------------
# Clock domains of edm_u200_top: the PCIe side (XDMA axi_aclk, from the PCIe
# reference clock), the board clock (user_clk: reset sequencing) and, per transceiver, its TX and its recovered RX user
# clock. Every crossing between them goes through a synchronizer or a
# Gray-code FIFO (edm_block_cdc) or is a quasi-static reset or link bit.
# CHECK (Vivado run, bitstream/README.md): the clock names at the first
# build (report_clock_interaction).
set_clock_groups -asynchronous \
    -group [get_clocks -of_objects [get_nets clk_pcie]] \
    -group [get_clocks user_clk] \
    -group [get_clocks -of_objects [get_nets {clk_tx[0]}]] \
    -group [get_clocks -of_objects [get_nets {clk_rx[0]}]] \
    -group [get_clocks -of_objects [get_nets {clk_tx[1]}]] \
    -group [get_clocks -of_objects [get_nets {clk_rx[1]}]]
