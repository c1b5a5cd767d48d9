# ip.tcl (alveo-u200) -- vendor IP of the EDM card, created by
# bitstream/build.tcl in its in-memory project:
#  - XDMA `clio_xdma`: PCIe Gen3 x16 at PCIE4 X1Y2, one H2C and one C2H
#    channel (the host's /dev/xdma0_h2c_0 and _c2h_0) onto a 512-bit AXI4
#    master, and an AXI-Lite master on BAR0 (the host's /dev/xdma0_user: the
#    register block of host-sdk/wire/src/xdma.rs);
#  - two 25GBASE-R PCS/PMA cores `clio_eth0`/`clio_eth1` (no MAC: the EDM
#    PHY shim sits between the PCS and the 64b/66b blocks), one lane of each
#    QSFP28 cage, 161.1328125 MHz reference.
# In:  clio_ip_dir.  Out: clio_ip_sources, clio_ips.
#
# IP versions are those of Vivado 2023.2; CONFIG names marked CHECK were not
# verified on a Vivado install.

set clio_ip_sources {}
set clio_ips {}

# --- PCIe DMA ---------------------------------------------------------------
create_ip -name xdma -vendor xilinx.com -library ip -version 4.1 \
    -module_name clio_xdma -dir $clio_ip_dir
set_property -dict [list \
    CONFIG.mode_selection {Advanced} \
    CONFIG.pcie_blk_locn {X1Y2} \
    CONFIG.select_quad {GTY_Quad_227} \
    CONFIG.pl_link_cap_max_link_width {X16} \
    CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
    CONFIG.ref_clk_freq {100_MHz} \
    CONFIG.axi_data_width {512_bit} \
    CONFIG.axisten_freq {250} \
    CONFIG.xdma_rnum_chnl {1} \
    CONFIG.xdma_wnum_chnl {1} \
    CONFIG.axilite_master_en {true} \
    CONFIG.axilite_master_size {64} \
    CONFIG.axilite_master_scale {Kilobytes} \
    CONFIG.pf0_device_id {903F} \
] [get_ips clio_xdma]
generate_target {synthesis instantiation_template} [get_ips clio_xdma]
lappend clio_ips clio_xdma

# --- 25G PCS/PMA, one per QSFP28 cage (quads 231 and 230) ------------------
foreach {name quad lane} {clio_eth0 Quad_X1Y12 X1Y48 clio_eth1 Quad_X1Y11 X1Y44} {
    create_ip -name xxv_ethernet -vendor xilinx.com -library ip -version 4.1 \
        -module_name $name -dir $clio_ip_dir
    set_property -dict [list \
        CONFIG.CORE {Ethernet PCS/PMA 64-bit} \
        CONFIG.LINE_RATE {25} \
        CONFIG.NUM_OF_CORES {1} \
        CONFIG.BASE_R_KR {BASE-R} \
        CONFIG.INCLUDE_AXI4_INTERFACE {0} \
        CONFIG.ENABLE_PIPELINE_REG {1} \
        CONFIG.GT_REF_CLK_FREQ {161.1328125} \
        CONFIG.GT_GROUP_SELECT $quad \
        CONFIG.LANE1_GT_LOC $lane \
    ] [get_ips $name]
    generate_target {synthesis instantiation_template} [get_ips $name]
    lappend clio_ips $name
}
