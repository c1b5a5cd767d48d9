# ip.tcl (alveo-u200) -- vendor IP of the EDM card, created by
# bitstream/build.tcl in its in-memory project:
#  - XDMA `clio_xdma`: PCIe Gen3 x16 at PCIE4 X1Y2, one H2C and one C2H
#    channel (the host's /dev/xdma0_h2c_0 and _c2h_0) onto a 512-bit AXI4
#    master, and an AXI-Lite master on BAR0 (the host's /dev/xdma0_user: the
#    register block of host-sdk/wire/src/xdma.rs);
#  - two GTY transceiver cores `clio_gt0`/`clio_gt1` (gtwizard_ultrascale,
#    25.78125 Gb/s, 64b/66b asynchronous gearbox, no PCS and no MAC: the EDM
#    stack sits between our scrambler and the gearbox), one lane of each
#    QSFP28 cage, 161.1328125 MHz reference.
# In:  clio_ip_dir.  Out: clio_ip_sources, clio_ips.
#
# IP versions are those of Vivado 2023.2. No CONFIG name here was verified on
# a Vivado install (CHECK all at the first build); the transceiver settings
# follow the GTY-10GBASE-R preset as other open 25G designs use it, with the
# asynchronous gearbox (64B66B_ASYNC: no TX sequence pauses) in its place.

set clio_ip_sources {}
set clio_ips {}

# --- PCIe DMA ---------------------------------------------------------------
# select_quad only takes effect with en_gt_selection (PG195: "Enable GT
# Quad selection"); without it the IP keeps its default quad for the block.
create_ip -name xdma -vendor xilinx.com -library ip -version 4.1 \
    -module_name clio_xdma -dir $clio_ip_dir
set_property -dict [list \
    CONFIG.mode_selection {Advanced} \
    CONFIG.pcie_blk_locn {X1Y2} \
    CONFIG.en_gt_selection {true} \
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

# --- 25G transceivers, one lane per QSFP28 cage (quads 231 and 230) --------
# EDM needs the 66-bit blocks between the 64b/66b encoder and the scrambler,
# which a PCS/PMA core keeps inside; so the cores are bare GTY channels with
# the 64b/66b asynchronous gearbox (no PCS): edm_u200_port does block lock,
# (de)scrambling and the EDM stack. Reference: MGTREFCLK1 of the quad,
# 161.1328125 MHz; free-running clock: the board's USER_SI570 (156.25 MHz),
# not the XDMA's axi_aclk, which stops with the PCIe link (PG195).
foreach {name lane} {clio_gt0 X1Y48 clio_gt1 X1Y44} {
    create_ip -name gtwizard_ultrascale -vendor xilinx.com -library ip -version 1.7 \
        -module_name $name -dir $clio_ip_dir
    set_property -dict [list CONFIG.preset {GTY-10GBASE-R}] [get_ips $name]
    set_property -dict [list \
        CONFIG.CHANNEL_ENABLE $lane \
        CONFIG.TX_MASTER_CHANNEL $lane \
        CONFIG.RX_MASTER_CHANNEL $lane \
        CONFIG.TX_LINE_RATE {25.78125} \
        CONFIG.TX_REFCLK_FREQUENCY {161.1328125} \
        CONFIG.TX_DATA_ENCODING {64B66B_ASYNC} \
        CONFIG.TX_USER_DATA_WIDTH {64} \
        CONFIG.TX_INT_DATA_WIDTH {64} \
        CONFIG.RX_LINE_RATE {25.78125} \
        CONFIG.RX_REFCLK_FREQUENCY {161.1328125} \
        CONFIG.RX_DATA_DECODING {64B66B_ASYNC} \
        CONFIG.RX_USER_DATA_WIDTH {64} \
        CONFIG.RX_INT_DATA_WIDTH {64} \
        CONFIG.RX_REFCLK_SOURCE "$lane clk1" \
        CONFIG.TX_REFCLK_SOURCE "$lane clk1" \
        CONFIG.LOCATE_COMMON {CORE} \
        CONFIG.LOCATE_TX_USER_CLOCKING {CORE} \
        CONFIG.LOCATE_RX_USER_CLOCKING {CORE} \
        CONFIG.FREERUN_FREQUENCY {156.25} \
    ] [get_ips $name]
    generate_target {synthesis instantiation_template} [get_ips $name]
    lappend clio_ips $name
}
