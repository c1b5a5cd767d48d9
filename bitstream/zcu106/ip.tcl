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
#    SFP+ cages on GTH quad 225 lanes 2 and 3.
# In:  clio_ip_dir (a directory under the build's out dir).
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
