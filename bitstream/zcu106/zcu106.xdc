# zcu106.xdc -- pins and clocks of the Clio memory board on a Xilinx ZCU106
# (xczu7ev-ffvc1156-2-e). Port names are the contract with the board top
# (`clio_zcu106_top`); ci/suites/30-bitstream.sh checks every port named
# here exists on the top once it is written.
#
# Pin sources: the ZCU106 board user guide (UG1244) and the board's master
# XDC (zcu106 rev 1.0). Lines marked CHECK need a Vivado run or a board
# (bitstream/README.md, "CHECK marks", lists each and why).

# ---------------------------------------------------------------------------
# Configuration
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]

# ---------------------------------------------------------------------------
# 10G SFP+ cages (two ports, BASE-R), GTH quad 225 lanes 2 and 3.
# SFP0 (P2): GTHE4_CHANNEL_X0Y10
set_property PACKAGE_PIN AA2 [get_ports {sfp_rx_p[0]}]
set_property PACKAGE_PIN AA1 [get_ports {sfp_rx_n[0]}]
set_property PACKAGE_PIN Y4  [get_ports {sfp_tx_p[0]}]
set_property PACKAGE_PIN Y3  [get_ports {sfp_tx_n[0]}]
# SFP1 (P3): GTHE4_CHANNEL_X0Y11
set_property PACKAGE_PIN W2  [get_ports {sfp_rx_p[1]}]
set_property PACKAGE_PIN W1  [get_ports {sfp_rx_n[1]}]
set_property PACKAGE_PIN W6  [get_ports {sfp_tx_p[1]}]
set_property PACKAGE_PIN W5  [get_ports {sfp_tx_n[1]}]

# GT reference clock: 156.25 MHz from the user SI570 (U56) through the
# SI53340 buffer into MGTREFCLK1 of quad 226 (shared with quad 225 through
# the north/south refclk routing). The SI570 must run at 156.25 MHz: it
# powers up at that frequency on the ZCU106 (settled: UG1244's clocking
# table and the ZCU106 board files' SI570 default, checked in the issue #17
# review; no programming needed unless the system controller changed it).
set_property PACKAGE_PIN U10 [get_ports sfp_refclk_p]
set_property PACKAGE_PIN U9  [get_ports sfp_refclk_n]
create_clock -period 6.400 -name sfp_refclk [get_ports sfp_refclk_p]

# SFP+ transmitter disables (active low on the board, bank 64 at 1.2 V).
set_property -dict {PACKAGE_PIN AE22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {sfp_tx_disable_b[0]}]
set_property -dict {PACKAGE_PIN AF20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {sfp_tx_disable_b[1]}]
set_false_path -to [get_ports {sfp_tx_disable_b[*]}]
set_output_delay 0 [get_ports {sfp_tx_disable_b[*]}]

# ---------------------------------------------------------------------------
# User LEDs (GPIO_LED_0..3): link up per port, fast path ready, slow path alive.
set_property -dict {PACKAGE_PIN AL11 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN AL13 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN AK13 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_property -dict {PACKAGE_PIN AE15 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[3]}]
set_false_path -to [get_ports {led[*]}]
set_output_delay 0 [get_ports {led[*]}]

# ---------------------------------------------------------------------------
# PS-PL clock and board DDR.
# The fast-path clock is pl_clk0 of the Zynq UltraScale+ PS, set to 250 MHz
# in bitstream/zcu106/ip.tcl; the PS IP's own constraints create that clock,
# so it is not created here. The 2 GB PS DDR4 is reached through the PS
# (S_AXI_HP0_FPD); its pins belong to the PS and take no PL constraints.
# The GT user clocks (TX/RX 156.25 MHz for 10G BASE-R) are created by the
# Ethernet IP's constraints; the fast-path clock domain is asynchronous to
# them and crosses through clio_axis_async_fifo (Gray-code pointers through
# two-flop ASYNC_REG synchronizers) and two-flop synchronizers of the link,
# reset and overflow signals in clio_zcu106_top. The clocks are found from
# the top's nets clk_fp (pl_clk0), clk_mac0 and clk_mac1 (tx_clk_out_0/1) --
# CHECK (Vivado run, bitstream/README.md): the clock names at the first
# build (report_clock_interaction).
set_clock_groups -asynchronous \
    -group [get_clocks -of_objects [get_nets clk_fp]] \
    -group [get_clocks -of_objects [get_nets clk_mac0]] \
    -group [get_clocks -of_objects [get_nets clk_mac1]]
