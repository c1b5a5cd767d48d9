# ip.tcl (zcu106) -- vendor IP of the Clio memory board, created by
# bitstream/build.tcl in its in-memory project:
#  - the Zynq UltraScale+ PS in a block design `clio_ps`: board preset (PS
#    DDR4, MIO, clocks of the ZCU106), pl_clk0 = 250 MHz fast-path clock,
#    M_AXI_HPM0_FPD (ARM -> fast-path registers), S_AXI_HP0_FPD (fast path ->
#    2 GB PS DDR: hash page table, rings, data pages), pl_clk1 = 100 MHz
#    free-running clock for the Ethernet core's DRP/reset logic (dclk);
#    make_wrapper names the external pins <pin>_0 / <interface>_0_<signal>,
#    the names clio_zcu106_top.sv uses;
#  - the 10G Ethernet subsystem `clio_eth` (MAC + BASE-R PCS/PMA) for the two
#    SFP+ cages on GTH quad 225 lanes 2 and 3 (network.front_end = "udp"), or
#    a bare GTH channel `clio_gth_edm` for an EDM port on SFP0
#    (network.front_end = "edm").
# In:  clio_ip_dir (a directory under the build's out dir), clio_front_end.
# Out: clio_ip_sources (HDL files build.tcl reads), clio_ips (IP names).
#
# IP versions are those of Vivado 2023.2; CONFIG names marked CHECK were not
# verified on a Vivado install.

set clio_ip_sources {}
set clio_ips {}

# --- Processing system -------------------------------------------------------
set board_parts [lsort [get_board_parts -quiet {xilinx.com:zcu106:part0:*}]]
if {[llength $board_parts] == 0} {
    error "ip.tcl: the ZCU106 board files (xilinx.com:zcu106:part0) are not installed in this Vivado"
}
set_property board_part [lindex $board_parts end] [current_project]

create_bd_design -dir $clio_ip_dir clio_ps
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:zynq_ultra_ps_e:3.5 ps]
apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"} $ps
# CHECK: PSU__FPGA_PL1_ENABLE and PSU__CRL_APB__PL1_REF_CTRL__FREQMHZ (pl_clk1).
set_property -dict [list \
    CONFIG.PSU__FPGA_PL0_ENABLE {1} \
    CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ {250} \
    CONFIG.PSU__FPGA_PL1_ENABLE {1} \
    CONFIG.PSU__CRL_APB__PL1_REF_CTRL__FREQMHZ {100} \
    CONFIG.PSU__USE__M_AXI_GP0 {1} \
    CONFIG.PSU__MAXIGP0__DATA_WIDTH {128} \
    CONFIG.PSU__USE__M_AXI_GP1 {0} \
    CONFIG.PSU__USE__M_AXI_GP2 {0} \
    CONFIG.PSU__USE__S_AXI_GP2 {1} \
    CONFIG.PSU__SAXIGP2__DATA_WIDTH {128} \
] $ps
make_bd_intf_pins_external [get_bd_intf_pins ps/M_AXI_HPM0_FPD]
make_bd_intf_pins_external [get_bd_intf_pins ps/S_AXI_HP0_FPD]
make_bd_pins_external [get_bd_pins ps/pl_clk0]
make_bd_pins_external [get_bd_pins ps/pl_clk1]
make_bd_pins_external [get_bd_pins ps/pl_resetn0]
connect_bd_net [get_bd_pins ps/pl_clk0] [get_bd_pins ps/maxihpm0_fpd_aclk] [get_bd_pins ps/saxihp0_fpd_aclk]
# The fast-path register block goes where the firmware looks for it: the
# board config's fastpath.regs_base (board-configs/zcu106.toml, the one
# definition), a 4 KiB window on M_AXI_HPM0_FPD. CHECK: the segment name
# Vivado gives the external interface (M_AXI_HPM0_FPD_0/Reg).
set clio_regs_base [clio_board_config_int \
    [file join $clio_root board-configs zcu106.toml] fastpath regs_base]
assign_bd_address -offset $clio_regs_base -range 4K \
    -target_address_space [get_bd_addr_spaces ps/Data] \
    [get_bd_addr_segs M_AXI_HPM0_FPD_0/Reg] -force
assign_bd_address
validate_bd_design
save_bd_design
set bd [get_files clio_ps.bd]
# Non-project flow: the block design's IP (the PS) must be synthesized with
# the top, not out of context; an out-of-context BD cell that nothing
# synthesizes stays a black box in synth_design. Global mode (None) folds it
# into the top's synthesis.
set_property synth_checkpoint_mode None $bd
generate_target all $bd
lappend clio_ip_sources [make_wrapper -files $bd -top]

# --- Network side: network.front_end of the board config (build.tcl sets
# clio_front_end) -------------------------------------------------------------
if {$clio_front_end eq "edm"} {
    # An EDM port on SFP0 (GTH quad 225 lane 2, X0Y10): a bare GTH channel at
    # 10.3125 Gb/s with the 64b/66b asynchronous gearbox and no PCS (EDM needs
    # the 66-bit blocks; edm_u200_port does block lock, (de)scrambling and the
    # EDM stack, as on the U200). Reference: the 156.25 MHz SFP clock;
    # free-running clock: pl_clk1 (100 MHz). No Ethernet core. CHECK every
    # CONFIG name at the first build (taken from the U200's GTY cores with the
    # GTH-10GBASE-R preset in place of the GTY one).
    create_ip -name gtwizard_ultrascale -vendor xilinx.com -library ip -version 1.7 \
        -module_name clio_gth_edm -dir $clio_ip_dir
    set_property -dict [list CONFIG.preset {GTH-10GBASE-R}] [get_ips clio_gth_edm]
    set_property -dict [list \
        CONFIG.CHANNEL_ENABLE {X0Y10} \
        CONFIG.TX_MASTER_CHANNEL {X0Y10} \
        CONFIG.RX_MASTER_CHANNEL {X0Y10} \
        CONFIG.TX_LINE_RATE {10.3125} \
        CONFIG.TX_REFCLK_FREQUENCY {156.25} \
        CONFIG.TX_DATA_ENCODING {64B66B_ASYNC} \
        CONFIG.TX_USER_DATA_WIDTH {64} \
        CONFIG.TX_INT_DATA_WIDTH {32} \
        CONFIG.RX_LINE_RATE {10.3125} \
        CONFIG.RX_REFCLK_FREQUENCY {156.25} \
        CONFIG.RX_DATA_DECODING {64B66B_ASYNC} \
        CONFIG.RX_USER_DATA_WIDTH {64} \
        CONFIG.RX_INT_DATA_WIDTH {32} \
        CONFIG.RX_REFCLK_SOURCE {X0Y10 clk1+2} \
        CONFIG.TX_REFCLK_SOURCE {X0Y10 clk1+2} \
        CONFIG.LOCATE_COMMON {CORE} \
        CONFIG.LOCATE_TX_USER_CLOCKING {CORE} \
        CONFIG.LOCATE_RX_USER_CLOCKING {CORE} \
        CONFIG.FREERUN_FREQUENCY {100} \
    ] [get_ips clio_gth_edm]
    generate_target {synthesis instantiation_template} [get_ips clio_gth_edm]
    lappend clio_ips clio_gth_edm
    return
}

# --- 10G Ethernet (two SFP+ ports) -------------------------------------------
create_ip -name xxv_ethernet -vendor xilinx.com -library ip -version 4.1 \
    -module_name clio_eth -dir $clio_ip_dir
# CHECK: GT_DRP_CLK (must match the dclk the top gives: pl_clk1, 100 MHz).
set_property -dict [list \
    CONFIG.CORE {Ethernet MAC+PCS/PMA 64-bit} \
    CONFIG.LINE_RATE {10} \
    CONFIG.NUM_OF_CORES {2} \
    CONFIG.BASE_R_KR {BASE-R} \
    CONFIG.DATA_PATH_INTERFACE {AXI Stream} \
    CONFIG.INCLUDE_AXI4_INTERFACE {0} \
    CONFIG.INCLUDE_STATISTICS_COUNTERS {0} \
    CONFIG.ENABLE_PIPELINE_REG {1} \
    CONFIG.GT_REF_CLK_FREQ {156.25} \
    CONFIG.GT_DRP_CLK {100.00} \
    CONFIG.GT_GROUP_SELECT {Quad_X0Y2} \
    CONFIG.LANE1_GT_LOC {X0Y10} \
    CONFIG.LANE2_GT_LOC {X0Y11} \
] [get_ips clio_eth]
generate_target {synthesis instantiation_template} [get_ips clio_eth]
lappend clio_ips clio_eth
