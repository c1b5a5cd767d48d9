// clio_zcu106_vendor_stubs: stand-ins declaring the vendor IP ports clio_zcu106_top connects (lint only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// NOT the vendor IP and never read by bitstream/build.tcl (which reads only
// bitstream/zcu106/*.sv, not this tb/ directory): these black boxes declare
// the ports of the Vivado-generated `clio_ps_wrapper` (block design
// `clio_ps` of bitstream/zcu106/ip.tcl) and of the `clio_eth` xxv_ethernet
// core that clio_zcu106_top connects, with the widths the top assumes, so
// `verilator --lint-only -Wall` can check the top's wiring. Their outputs
// are tied to constants. The names and widths are the assumptions listed in
// clio_zcu106_top.sv (CHECK there); a Vivado build is the real check.
// With CLIO_STUB_CLOCKS defined (tb/clio_zcu106_clocks only) the PS and the
// Ethernet core also model their clocks and the GT's OUTCLKSEL selection.

/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off DECLFILENAME */

module clio_ps_wrapper (
    output wire         pl_clk0_0,
    output wire         pl_clk1_0,
    output wire         pl_resetn0_0,

    output wire [15:0]  M_AXI_HPM0_FPD_0_awid,
    output wire [39:0]  M_AXI_HPM0_FPD_0_awaddr,
    output wire [7:0]   M_AXI_HPM0_FPD_0_awlen,
    output wire [2:0]   M_AXI_HPM0_FPD_0_awsize,
    output wire [1:0]   M_AXI_HPM0_FPD_0_awburst,
    output wire         M_AXI_HPM0_FPD_0_awlock,
    output wire [3:0]   M_AXI_HPM0_FPD_0_awcache,
    output wire [2:0]   M_AXI_HPM0_FPD_0_awprot,
    output wire [3:0]   M_AXI_HPM0_FPD_0_awqos,
    output wire [15:0]  M_AXI_HPM0_FPD_0_awuser,
    output wire         M_AXI_HPM0_FPD_0_awvalid,
    input  wire         M_AXI_HPM0_FPD_0_awready,
    output wire [127:0] M_AXI_HPM0_FPD_0_wdata,
    output wire [15:0]  M_AXI_HPM0_FPD_0_wstrb,
    output wire         M_AXI_HPM0_FPD_0_wlast,
    output wire         M_AXI_HPM0_FPD_0_wvalid,
    input  wire         M_AXI_HPM0_FPD_0_wready,
    input  wire [15:0]  M_AXI_HPM0_FPD_0_bid,
    input  wire [1:0]   M_AXI_HPM0_FPD_0_bresp,
    input  wire         M_AXI_HPM0_FPD_0_bvalid,
    output wire         M_AXI_HPM0_FPD_0_bready,
    output wire [15:0]  M_AXI_HPM0_FPD_0_arid,
    output wire [39:0]  M_AXI_HPM0_FPD_0_araddr,
    output wire [7:0]   M_AXI_HPM0_FPD_0_arlen,
    output wire [2:0]   M_AXI_HPM0_FPD_0_arsize,
    output wire [1:0]   M_AXI_HPM0_FPD_0_arburst,
    output wire         M_AXI_HPM0_FPD_0_arlock,
    output wire [3:0]   M_AXI_HPM0_FPD_0_arcache,
    output wire [2:0]   M_AXI_HPM0_FPD_0_arprot,
    output wire [3:0]   M_AXI_HPM0_FPD_0_arqos,
    output wire [15:0]  M_AXI_HPM0_FPD_0_aruser,
    output wire         M_AXI_HPM0_FPD_0_arvalid,
    input  wire         M_AXI_HPM0_FPD_0_arready,
    input  wire [15:0]  M_AXI_HPM0_FPD_0_rid,
    input  wire [127:0] M_AXI_HPM0_FPD_0_rdata,
    input  wire [1:0]   M_AXI_HPM0_FPD_0_rresp,
    input  wire         M_AXI_HPM0_FPD_0_rlast,
    input  wire         M_AXI_HPM0_FPD_0_rvalid,
    output wire         M_AXI_HPM0_FPD_0_rready,

    input  wire [5:0]   S_AXI_HP0_FPD_0_awid,
    input  wire [48:0]  S_AXI_HP0_FPD_0_awaddr,
    input  wire [7:0]   S_AXI_HP0_FPD_0_awlen,
    input  wire [2:0]   S_AXI_HP0_FPD_0_awsize,
    input  wire [1:0]   S_AXI_HP0_FPD_0_awburst,
    input  wire         S_AXI_HP0_FPD_0_awlock,
    input  wire [3:0]   S_AXI_HP0_FPD_0_awcache,
    input  wire [2:0]   S_AXI_HP0_FPD_0_awprot,
    input  wire [3:0]   S_AXI_HP0_FPD_0_awqos,
    input  wire         S_AXI_HP0_FPD_0_awuser,
    input  wire         S_AXI_HP0_FPD_0_awvalid,
    output wire         S_AXI_HP0_FPD_0_awready,
    input  wire [127:0] S_AXI_HP0_FPD_0_wdata,
    input  wire [15:0]  S_AXI_HP0_FPD_0_wstrb,
    input  wire         S_AXI_HP0_FPD_0_wlast,
    input  wire         S_AXI_HP0_FPD_0_wvalid,
    output wire         S_AXI_HP0_FPD_0_wready,
    output wire [5:0]   S_AXI_HP0_FPD_0_bid,
    output wire [1:0]   S_AXI_HP0_FPD_0_bresp,
    output wire         S_AXI_HP0_FPD_0_bvalid,
    input  wire         S_AXI_HP0_FPD_0_bready,
    input  wire [5:0]   S_AXI_HP0_FPD_0_arid,
    input  wire [48:0]  S_AXI_HP0_FPD_0_araddr,
    input  wire [7:0]   S_AXI_HP0_FPD_0_arlen,
    input  wire [2:0]   S_AXI_HP0_FPD_0_arsize,
    input  wire [1:0]   S_AXI_HP0_FPD_0_arburst,
    input  wire         S_AXI_HP0_FPD_0_arlock,
    input  wire [3:0]   S_AXI_HP0_FPD_0_arcache,
    input  wire [2:0]   S_AXI_HP0_FPD_0_arprot,
    input  wire [3:0]   S_AXI_HP0_FPD_0_arqos,
    input  wire         S_AXI_HP0_FPD_0_aruser,
    input  wire         S_AXI_HP0_FPD_0_arvalid,
    output wire         S_AXI_HP0_FPD_0_arready,
    output wire [5:0]   S_AXI_HP0_FPD_0_rid,
    output wire [127:0] S_AXI_HP0_FPD_0_rdata,
    output wire [1:0]   S_AXI_HP0_FPD_0_rresp,
    output wire         S_AXI_HP0_FPD_0_rlast,
    output wire         S_AXI_HP0_FPD_0_rvalid,
    input  wire         S_AXI_HP0_FPD_0_rready
);
`ifdef CLIO_STUB_CLOCKS
// Clock model for tb/clio_zcu106_clocks (simulation only): pl_clk0 250 MHz,
// pl_clk1 100 MHz, pl_resetn0 released after 200 ns.
reg pl_clk0_r = 1'b0, pl_clk1_r = 1'b0, pl_resetn_r = 1'b0;
always #2 pl_clk0_r = !pl_clk0_r;
always #5 pl_clk1_r = !pl_clk1_r;
initial #200 pl_resetn_r = 1'b1;
assign pl_clk0_0 = pl_clk0_r;
assign pl_clk1_0 = pl_clk1_r;
assign pl_resetn0_0 = pl_resetn_r;
`else
assign pl_clk0_0 = 1'b0;
assign pl_clk1_0 = 1'b0;
assign pl_resetn0_0 = 1'b0;
`endif
assign M_AXI_HPM0_FPD_0_awid = '0;
assign M_AXI_HPM0_FPD_0_awaddr = '0;
assign M_AXI_HPM0_FPD_0_awlen = '0;
assign M_AXI_HPM0_FPD_0_awsize = '0;
assign M_AXI_HPM0_FPD_0_awburst = '0;
assign M_AXI_HPM0_FPD_0_awlock = '0;
assign M_AXI_HPM0_FPD_0_awcache = '0;
assign M_AXI_HPM0_FPD_0_awprot = '0;
assign M_AXI_HPM0_FPD_0_awqos = '0;
assign M_AXI_HPM0_FPD_0_awuser = '0;
assign M_AXI_HPM0_FPD_0_awvalid = '0;
assign M_AXI_HPM0_FPD_0_wdata = '0;
assign M_AXI_HPM0_FPD_0_wstrb = '0;
assign M_AXI_HPM0_FPD_0_wlast = '0;
assign M_AXI_HPM0_FPD_0_wvalid = '0;
assign M_AXI_HPM0_FPD_0_bready = '0;
assign M_AXI_HPM0_FPD_0_arid = '0;
assign M_AXI_HPM0_FPD_0_araddr = '0;
assign M_AXI_HPM0_FPD_0_arlen = '0;
assign M_AXI_HPM0_FPD_0_arsize = '0;
assign M_AXI_HPM0_FPD_0_arburst = '0;
assign M_AXI_HPM0_FPD_0_arlock = '0;
assign M_AXI_HPM0_FPD_0_arcache = '0;
assign M_AXI_HPM0_FPD_0_arprot = '0;
assign M_AXI_HPM0_FPD_0_arqos = '0;
assign M_AXI_HPM0_FPD_0_aruser = '0;
assign M_AXI_HPM0_FPD_0_arvalid = '0;
assign M_AXI_HPM0_FPD_0_rready = '0;
assign S_AXI_HP0_FPD_0_awready = 1'b0;
assign S_AXI_HP0_FPD_0_wready = 1'b0;
assign S_AXI_HP0_FPD_0_bid = 6'd0;
assign S_AXI_HP0_FPD_0_bresp = 2'd0;
assign S_AXI_HP0_FPD_0_bvalid = 1'b0;
assign S_AXI_HP0_FPD_0_arready = 1'b0;
assign S_AXI_HP0_FPD_0_rid = 6'd0;
assign S_AXI_HP0_FPD_0_rdata = 128'd0;
assign S_AXI_HP0_FPD_0_rresp = 2'd0;
assign S_AXI_HP0_FPD_0_rlast = 1'b0;
assign S_AXI_HP0_FPD_0_rvalid = 1'b0;
endmodule

module clio_eth (
    input  wire [1:0]   gt_rxp_in,
    input  wire [1:0]   gt_rxn_in,
    output wire [1:0]   gt_txp_out,
    output wire [1:0]   gt_txn_out,
    input  wire         gt_refclk_p,
    input  wire         gt_refclk_n,
    output wire         gt_refclk_out,
    input  wire         sys_reset,
    input  wire         dclk,

    output wire         tx_clk_out_0,
    input  wire         rx_core_clk_0,
    output wire         rx_clk_out_0,
    input  wire         rx_reset_0,
    output wire         user_rx_reset_0,
    input  wire         tx_reset_0,
    output wire         user_tx_reset_0,
    input  wire         gtwiz_reset_tx_datapath_0,
    input  wire         gtwiz_reset_rx_datapath_0,
    input  wire [2:0]   txoutclksel_in_0,
    input  wire [2:0]   rxoutclksel_in_0,
    output wire         rx_axis_tvalid_0,
    output wire [63:0]  rx_axis_tdata_0,
    output wire         rx_axis_tlast_0,
    output wire [7:0]   rx_axis_tkeep_0,
    output wire         rx_axis_tuser_0,
    output wire         tx_axis_tready_0,
    input  wire         tx_axis_tvalid_0,
    input  wire [63:0]  tx_axis_tdata_0,
    input  wire         tx_axis_tlast_0,
    input  wire [7:0]   tx_axis_tkeep_0,
    input  wire         tx_axis_tuser_0,
    input  wire [55:0]  tx_preamblein_0,
    output wire         stat_rx_block_lock_0,
    input  wire         ctl_rx_enable_0,
    input  wire         ctl_rx_delete_fcs_0,
    input  wire         ctl_rx_ignore_fcs_0,
    input  wire [14:0]  ctl_rx_max_packet_len_0,
    input  wire [7:0]   ctl_rx_min_packet_len_0,
    input  wire         ctl_rx_check_preamble_0,
    input  wire         ctl_rx_check_sfd_0,
    input  wire         ctl_rx_process_lfi_0,
    input  wire         ctl_tx_enable_0,
    input  wire         ctl_tx_fcs_ins_enable_0,
    input  wire         ctl_tx_ignore_fcs_0,
    input  wire [3:0]   ctl_tx_ipg_value_0,
    input  wire         ctl_tx_send_lfi_0,
    input  wire         ctl_tx_send_rfi_0,
    input  wire         ctl_tx_send_idle_0,

    output wire         tx_clk_out_1,
    input  wire         rx_core_clk_1,
    output wire         rx_clk_out_1,
    input  wire         rx_reset_1,
    output wire         user_rx_reset_1,
    input  wire         tx_reset_1,
    output wire         user_tx_reset_1,
    input  wire         gtwiz_reset_tx_datapath_1,
    input  wire         gtwiz_reset_rx_datapath_1,
    input  wire [2:0]   txoutclksel_in_1,
    input  wire [2:0]   rxoutclksel_in_1,
    output wire         rx_axis_tvalid_1,
    output wire [63:0]  rx_axis_tdata_1,
    output wire         rx_axis_tlast_1,
    output wire [7:0]   rx_axis_tkeep_1,
    output wire         rx_axis_tuser_1,
    output wire         tx_axis_tready_1,
    input  wire         tx_axis_tvalid_1,
    input  wire [63:0]  tx_axis_tdata_1,
    input  wire         tx_axis_tlast_1,
    input  wire [7:0]   tx_axis_tkeep_1,
    input  wire         tx_axis_tuser_1,
    input  wire [55:0]  tx_preamblein_1,
    output wire         stat_rx_block_lock_1,
    input  wire         ctl_rx_enable_1,
    input  wire         ctl_rx_delete_fcs_1,
    input  wire         ctl_rx_ignore_fcs_1,
    input  wire [14:0]  ctl_rx_max_packet_len_1,
    input  wire [7:0]   ctl_rx_min_packet_len_1,
    input  wire         ctl_rx_check_preamble_1,
    input  wire         ctl_rx_check_sfd_1,
    input  wire         ctl_rx_process_lfi_1,
    input  wire         ctl_tx_enable_1,
    input  wire         ctl_tx_fcs_ins_enable_1,
    input  wire         ctl_tx_ignore_fcs_1,
    input  wire [3:0]   ctl_tx_ipg_value_1,
    input  wire         ctl_tx_send_lfi_1,
    input  wire         ctl_tx_send_rfi_1,
    input  wire         ctl_tx_send_idle_1
);
assign gt_txp_out = 2'b00;
assign gt_txn_out = 2'b00;
assign gt_refclk_out = 1'b0;
`ifdef CLIO_STUB_CLOCKS
// Clock model of the GT's TXOUTCLK/RXOUTCLK multiplexers (UG576,
// TXOUTCLKSEL/RXOUTCLKSEL): only 3'b101 (TXPROGDIVCLK/RXPROGDIVCLK) gives
// the 156.25 MHz user clock this core configuration runs on; 3'b000 is a
// static level, and the other selections are not the user clock (modelled
// as static too, so a wrong value fails the bench rather than passing with
// a wrong frequency). An open input (z in simulation) counts as the 0
// synthesis ties it to, hence `===`. user_*_reset_N fall 64 user-clock cycles after
// sys_reset falls, and stay high while the clock does not run.
wire [1:0] tx_sel_ok = {txoutclksel_in_1 === 3'b101, txoutclksel_in_0 === 3'b101};
wire [1:0] rx_sel_ok = {rxoutclksel_in_1 === 3'b101, rxoutclksel_in_0 === 3'b101};
reg [1:0] progdiv = 2'b00;
always #3.2 progdiv = ~progdiv;
wire [1:0] txclk = progdiv & tx_sel_ok;
wire [1:0] rxclk = progdiv & rx_sel_ok;
reg [6:0] tx_rst_cnt [0:1];
reg [6:0] rx_rst_cnt [0:1];
initial begin
    tx_rst_cnt[0] = 7'd0; tx_rst_cnt[1] = 7'd0;
    rx_rst_cnt[0] = 7'd0; rx_rst_cnt[1] = 7'd0;
end
always @(posedge txclk[0] or posedge sys_reset)
    if (sys_reset) tx_rst_cnt[0] <= 7'd0; else if (!tx_rst_cnt[0][6]) tx_rst_cnt[0] <= tx_rst_cnt[0] + 7'd1;
always @(posedge txclk[1] or posedge sys_reset)
    if (sys_reset) tx_rst_cnt[1] <= 7'd0; else if (!tx_rst_cnt[1][6]) tx_rst_cnt[1] <= tx_rst_cnt[1] + 7'd1;
always @(posedge rxclk[0] or posedge sys_reset)
    if (sys_reset) rx_rst_cnt[0] <= 7'd0; else if (!rx_rst_cnt[0][6]) rx_rst_cnt[0] <= rx_rst_cnt[0] + 7'd1;
always @(posedge rxclk[1] or posedge sys_reset)
    if (sys_reset) rx_rst_cnt[1] <= 7'd0; else if (!rx_rst_cnt[1][6]) rx_rst_cnt[1] <= rx_rst_cnt[1] + 7'd1;
assign tx_clk_out_0 = txclk[0];
assign rx_clk_out_0 = rxclk[0];
assign user_rx_reset_0 = !rx_rst_cnt[0][6];
assign user_tx_reset_0 = !tx_rst_cnt[0][6];
`else
assign tx_clk_out_0 = 1'b0;
assign rx_clk_out_0 = 1'b0;
assign user_rx_reset_0 = 1'b1;
assign user_tx_reset_0 = 1'b1;
`endif
assign rx_axis_tvalid_0 = 1'b0;
assign rx_axis_tdata_0 = 64'd0;
assign rx_axis_tlast_0 = 1'b0;
assign rx_axis_tkeep_0 = 8'd0;
assign rx_axis_tuser_0 = 1'b0;
assign tx_axis_tready_0 = 1'b0;
assign stat_rx_block_lock_0 = 1'b0;
`ifdef CLIO_STUB_CLOCKS
assign tx_clk_out_1 = txclk[1];
assign rx_clk_out_1 = rxclk[1];
assign user_rx_reset_1 = !rx_rst_cnt[1][6];
assign user_tx_reset_1 = !tx_rst_cnt[1][6];
`else
assign tx_clk_out_1 = 1'b0;
assign rx_clk_out_1 = 1'b0;
assign user_rx_reset_1 = 1'b1;
assign user_tx_reset_1 = 1'b1;
`endif
assign rx_axis_tvalid_1 = 1'b0;
assign rx_axis_tdata_1 = 64'd0;
assign rx_axis_tlast_1 = 1'b0;
assign rx_axis_tkeep_1 = 8'd0;
assign rx_axis_tuser_1 = 1'b0;
assign tx_axis_tready_1 = 1'b0;
assign stat_rx_block_lock_1 = 1'b0;
endmodule

`resetall

// clio_gth_edm (gtwizard_ultrascale 1.7, one GTH channel, 64B66B_ASYNC, 64-bit
// user data; only in the network.front_end = "edm" build, bitstream/zcu106/ip.tcl).
module clio_gth_edm (
    input  wire         gthrxp_in,
    input  wire         gthrxn_in,
    input  wire         gtrefclk00_in,
    input  wire         gtwiz_reset_clk_freerun_in,
    input  wire         gtwiz_reset_all_in,
    input  wire         gtwiz_reset_tx_pll_and_datapath_in,
    input  wire         gtwiz_reset_tx_datapath_in,
    input  wire         gtwiz_reset_rx_pll_and_datapath_in,
    input  wire         gtwiz_reset_rx_datapath_in,
    input  wire         gtwiz_userclk_tx_reset_in,
    input  wire         gtwiz_userclk_rx_reset_in,
    input  wire [63:0]  gtwiz_userdata_tx_in,
    input  wire [5:0]   txheader_in,
    input  wire [6:0]   txsequence_in,
    input  wire         rxgearboxslip_in,
    output wire         gthtxp_out,
    output wire         gthtxn_out,
    output wire         gtwiz_reset_tx_done_out,
    output wire         gtwiz_reset_rx_done_out,
    output wire         gtwiz_userclk_tx_usrclk2_out,
    output wire         gtwiz_userclk_rx_usrclk2_out,
    output wire         gtwiz_userclk_tx_active_out,
    output wire         gtwiz_userclk_rx_active_out,
    output wire [63:0]  gtwiz_userdata_rx_out,
    output wire [5:0]   rxheader_out,
    output wire [1:0]   rxheadervalid_out,
    output wire [1:0]   rxdatavalid_out
);
assign gthtxp_out = 1'd0;
assign gthtxn_out = 1'd0;
assign gtwiz_reset_tx_done_out = 1'd0;
assign gtwiz_reset_rx_done_out = 1'd0;
assign gtwiz_userclk_tx_usrclk2_out = 1'd0;
assign gtwiz_userclk_rx_usrclk2_out = 1'd0;
assign gtwiz_userclk_tx_active_out = 1'd0;
assign gtwiz_userclk_rx_active_out = 1'd0;
assign gtwiz_userdata_rx_out = 64'd0;
assign rxheader_out = 6'd0;
assign rxheadervalid_out = 2'd0;
assign rxdatavalid_out = 2'd0;
endmodule

// IBUFDS_GTE4 (UltraScale+ library; the edm build's GT reference clock buffer).
module IBUFDS_GTE4 (
    input  wire         I,
    input  wire         IB,
    input  wire         CEB,
    output wire         O,
    output wire         ODIV2
);
assign O = 1'd0;
assign ODIV2 = 1'd0;
endmodule
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */
