// edm_u200_vendor_stubs: stand-ins declaring the vendor IP ports edm_u200_top connects (lint only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// NOT the vendor IP and never read by bitstream/build.tcl (which reads only
// bitstream/alveo-u200/*.sv, not this tb/ directory): these black boxes
// declare the ports of the XDMA core `clio_xdma`, of the transceiver cores
// `clio_gt0` / `clio_gt1` (bitstream/alveo-u200/ip.tcl) and of the
// IBUFDS_GTE4 primitive that edm_u200_top connects, with the widths the top
// assumes, so `verilator --lint-only -Wall` and Icarus can check the top's
// wiring. Their outputs are tied to constants. The names and widths are the
// assumptions listed in edm_u200_top.sv (CHECK there); a Vivado build is the
// real check.
// With -DCLIO_STUB_PCIE (tb/edm_u200_ready, with -DCLIO_STUB_CLOCKS), the
// stand-ins run: clio_xdma's axi_aclk (250 MHz) and axi_aresetn (released at
// 200 ns), and an AXI-Lite reader that reads STATUS (clio_pkg's offset) over
// and over through the card's register block (status_last, status_reads);
// the transceivers' user clocks (390.625 MHz) and their reset done flags
// (raised at GT_DONE_NS).

`ifndef GT_DONE_NS
`define GT_DONE_NS 2000
`endif

/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off DECLFILENAME */
/* verilator lint_off MULTITOP */

module clio_xdma (
    input  wire         sys_clk,
    input  wire         sys_clk_gt,
    input  wire         sys_rst_n,
    input  wire [15:0]  pci_exp_rxp,
    input  wire [15:0]  pci_exp_rxn,
    input  wire         usr_irq_req,
    input  wire         m_axi_awready,
    input  wire         m_axi_wready,
    input  wire [3:0]   m_axi_bid,
    input  wire [1:0]   m_axi_bresp,
    input  wire         m_axi_bvalid,
    input  wire         m_axi_arready,
    input  wire [3:0]   m_axi_rid,
    input  wire [511:0] m_axi_rdata,
    input  wire [1:0]   m_axi_rresp,
    input  wire         m_axi_rlast,
    input  wire         m_axi_rvalid,
    input  wire         m_axil_awready,
    input  wire         m_axil_wready,
    input  wire [1:0]   m_axil_bresp,
    input  wire         m_axil_bvalid,
    input  wire         m_axil_arready,
    input  wire [31:0]  m_axil_rdata,
    input  wire [1:0]   m_axil_rresp,
    input  wire         m_axil_rvalid,
    output wire         user_lnk_up,
    output wire [15:0]  pci_exp_txp,
    output wire [15:0]  pci_exp_txn,
    output wire         axi_aclk,
    output wire         axi_aresetn,
    output wire         usr_irq_ack,
    output wire         msi_enable,
    output wire [2:0]   msi_vector_width,
    output wire [3:0]   m_axi_awid,
    output wire [63:0]  m_axi_awaddr,
    output wire [7:0]   m_axi_awlen,
    output wire [2:0]   m_axi_awsize,
    output wire [1:0]   m_axi_awburst,
    output wire [2:0]   m_axi_awprot,
    output wire         m_axi_awlock,
    output wire [3:0]   m_axi_awcache,
    output wire         m_axi_awvalid,
    output wire [511:0] m_axi_wdata,
    output wire [63:0]  m_axi_wstrb,
    output wire         m_axi_wlast,
    output wire         m_axi_wvalid,
    output wire         m_axi_bready,
    output wire [3:0]   m_axi_arid,
    output wire [63:0]  m_axi_araddr,
    output wire [7:0]   m_axi_arlen,
    output wire [2:0]   m_axi_arsize,
    output wire [1:0]   m_axi_arburst,
    output wire [2:0]   m_axi_arprot,
    output wire         m_axi_arlock,
    output wire [3:0]   m_axi_arcache,
    output wire         m_axi_arvalid,
    output wire         m_axi_rready,
    output wire [31:0]  m_axil_awaddr,
    output wire [2:0]   m_axil_awprot,
    output wire         m_axil_awvalid,
    output wire [31:0]  m_axil_wdata,
    output wire [3:0]   m_axil_wstrb,
    output wire         m_axil_wvalid,
    output wire         m_axil_bready,
    output wire [31:0]  m_axil_araddr,
    output wire [2:0]   m_axil_arprot,
    output wire         m_axil_arvalid,
    output wire         m_axil_rready
);
`ifdef CLIO_STUB_PCIE
reg aclk = 1'b0;
always #2 aclk = !aclk;
reg aresetn = 1'b0;
initial #200 aresetn = 1'b1;
assign user_lnk_up = aresetn;
assign axi_aclk = aclk;
assign axi_aresetn = aresetn;
// The host reading STATUS: one read at a time, a new one 32 cycles after each answer.
reg        arvalid = 1'b0;
reg        waiting = 1'b0;
reg [5:0]  gap = 6'd0;
reg [31:0] status_last = 32'd0;
integer    status_reads = 0;
always @(posedge aclk) begin
    if (!aresetn) begin
        arvalid <= 1'b0;
        waiting <= 1'b0;
        gap <= 6'd0;
    end else begin
        if (arvalid && m_axil_arready) begin
            arvalid <= 1'b0;
        end
        if (waiting && m_axil_rvalid) begin
            waiting <= 1'b0;
            status_last <= m_axil_rdata;
            status_reads <= status_reads + 1;
            gap <= 6'd0;
        end else if (!waiting) begin
            gap <= gap + 6'd1;
            if (gap == 6'd31) begin
                arvalid <= 1'b1;
                waiting <= 1'b1;
            end
        end
    end
end
assign m_axil_araddr = clio_pkg::XDMA_REG_STATUS;
assign m_axil_arvalid = arvalid;
assign m_axil_rready = 1'b1;
`else
assign user_lnk_up = 1'd0;
assign axi_aclk = 1'd0;
assign axi_aresetn = 1'd0;
assign m_axil_araddr = 32'd0;
assign m_axil_arvalid = 1'd0;
assign m_axil_rready = 1'd0;
`endif
assign pci_exp_txp = 16'd0;
assign pci_exp_txn = 16'd0;
assign usr_irq_ack = 1'd0;
assign msi_enable = 1'd0;
assign msi_vector_width = 3'd0;
assign m_axi_awid = 4'd0;
assign m_axi_awaddr = 64'd0;
assign m_axi_awlen = 8'd0;
assign m_axi_awsize = 3'd0;
assign m_axi_awburst = 2'd0;
assign m_axi_awprot = 3'd0;
assign m_axi_awlock = 1'd0;
assign m_axi_awcache = 4'd0;
assign m_axi_awvalid = 1'd0;
assign m_axi_wdata = 512'd0;
assign m_axi_wstrb = 64'd0;
assign m_axi_wlast = 1'd0;
assign m_axi_wvalid = 1'd0;
assign m_axi_bready = 1'd0;
assign m_axi_arid = 4'd0;
assign m_axi_araddr = 64'd0;
assign m_axi_arlen = 8'd0;
assign m_axi_arsize = 3'd0;
assign m_axi_arburst = 2'd0;
assign m_axi_arprot = 3'd0;
assign m_axi_arlock = 1'd0;
assign m_axi_arcache = 4'd0;
assign m_axi_arvalid = 1'd0;
assign m_axi_rready = 1'd0;
assign m_axil_awaddr = 32'd0;
assign m_axil_awprot = 3'd0;
assign m_axil_awvalid = 1'd0;
assign m_axil_wdata = 32'd0;
assign m_axil_wstrb = 4'd0;
assign m_axil_wvalid = 1'd0;
assign m_axil_bready = 1'd0;
assign m_axil_arprot = 3'd0;
endmodule

module clio_gt0 (
    input  wire         gtyrxp_in,
    input  wire         gtyrxn_in,
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
    output wire         gtytxp_out,
    output wire         gtytxn_out,
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
assign gtytxp_out = 1'd0;
assign gtytxn_out = 1'd0;
`ifdef CLIO_STUB_PCIE
reg uclk = 1'b0;
always #1.28 uclk = !uclk;
reg done = 1'b0;
initial #(`GT_DONE_NS) done = 1'b1;
assign gtwiz_reset_tx_done_out = done;
assign gtwiz_reset_rx_done_out = done;
assign gtwiz_userclk_tx_usrclk2_out = uclk;
assign gtwiz_userclk_rx_usrclk2_out = uclk;
assign gtwiz_userclk_tx_active_out = done;
assign gtwiz_userclk_rx_active_out = done;
`else
assign gtwiz_reset_tx_done_out = 1'd0;
assign gtwiz_reset_rx_done_out = 1'd0;
assign gtwiz_userclk_tx_usrclk2_out = 1'd0;
assign gtwiz_userclk_rx_usrclk2_out = 1'd0;
assign gtwiz_userclk_tx_active_out = 1'd0;
assign gtwiz_userclk_rx_active_out = 1'd0;
`endif
assign gtwiz_userdata_rx_out = 64'd0;
assign rxheader_out = 6'd0;
assign rxheadervalid_out = 2'd0;
assign rxdatavalid_out = 2'd0;
endmodule

module clio_gt1 (
    input  wire         gtyrxp_in,
    input  wire         gtyrxn_in,
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
    output wire         gtytxp_out,
    output wire         gtytxn_out,
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
assign gtytxp_out = 1'd0;
assign gtytxn_out = 1'd0;
`ifdef CLIO_STUB_PCIE
reg uclk = 1'b0;
always #1.28 uclk = !uclk;
reg done = 1'b0;
initial #(`GT_DONE_NS) done = 1'b1;
assign gtwiz_reset_tx_done_out = done;
assign gtwiz_reset_rx_done_out = done;
assign gtwiz_userclk_tx_usrclk2_out = uclk;
assign gtwiz_userclk_rx_usrclk2_out = uclk;
assign gtwiz_userclk_tx_active_out = done;
assign gtwiz_userclk_rx_active_out = done;
`else
assign gtwiz_reset_tx_done_out = 1'd0;
assign gtwiz_reset_rx_done_out = 1'd0;
assign gtwiz_userclk_tx_usrclk2_out = 1'd0;
assign gtwiz_userclk_rx_usrclk2_out = 1'd0;
assign gtwiz_userclk_tx_active_out = 1'd0;
assign gtwiz_userclk_rx_active_out = 1'd0;
`endif
assign gtwiz_userdata_rx_out = 64'd0;
assign rxheader_out = 6'd0;
assign rxheadervalid_out = 2'd0;
assign rxdatavalid_out = 2'd0;
endmodule

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

module IBUFDS (
    input  wire         I,
    input  wire         IB,
    output wire         O
);
`ifdef CLIO_STUB_CLOCKS
// tb/edm_u200_reset: the buffer passes the board clock through.
assign O = I;
`else
assign O = 1'd0;
`endif
endmodule

module BUFG (
    input  wire         I,
    output wire         O
);
`ifdef CLIO_STUB_CLOCKS
assign O = I;
`else
assign O = 1'd0;
`endif
endmodule

/* verilator lint_on MULTITOP */
/* verilator lint_on DECLFILENAME */
/* verilator lint_on UNUSEDSIGNAL */

`resetall
