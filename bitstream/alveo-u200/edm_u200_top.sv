// edm_u200_top: Alveo U200 board top: PCIe (XDMA) packet rings in on-chip memory and two EDM ports on the QSFP28 cages.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Ports are exactly the names bitstream/alveo-u200/u200.xdc constrains, plus
// the sixteen PCIe lanes, whose pins the XDMA IP's own constraints place
// (bitstream/ci/check_flow.tcl checks both).
//
// What the card is: the host's PCIe packet path of host-sdk/wire/src/xdma.rs
// (register block on BAR0, H2C and C2H rings of Clio packets in card memory)
// and an EDM host on each QSFP28 cage (one 25G lane each, the EDM host stack
// between our own scrambler and the transceiver's 64b/66b gearbox).
//
// Data path
//   PCIe:  edm_xdma_path: clio_xdma AXI4 master (512-bit, the host's
//          _h2c_0 / _c2h_0 DMA) -> edm_ring_ram (on-chip, RING_MEM_BYTES;
//          card address = AXI address) <- word port -> edm_xdma_rings (H2C
//          slots -> packet stream, packet stream -> C2H slots); clio_xdma
//          AXI-Lite master (BAR0, the host's _user) -> edm_xdma_regs (xdma.rs
//          map; offsets from clio_pkg's XDMA_* constants).
//          The rings live in on-chip memory: the U200's DDR4 needs a memory
//          controller (MIG) IP that ip.tcl does not create, and 2 x 64 slots
//          of 2 KiB (256 KiB) fit in 64 of the part's 2160 RAMB36.
//   EDM:   per cage, clio_gtN (transceiver, 25.78125 Gb/s, 64b/66b
//          asynchronous gearbox, no PCS) <-> edm_u200_port: block lock,
//          descrambler, hi-BER monitor, clock crossing from the recovered
//          clock to the TX clock (idle blocks deleted to match rates),
//          edm_host_top, scrambler. Each port is an EDM host with its own
//          node id (NODE_ID0, NODE_ID1): its memory node serves the fabric's
//          reads, writes and atomics on its local memory (EDM_MEM_WORDS
//          64-bit words), and its requester takes read / write / atomic
//          requests (req_*).
//   Between the two: the Clio-to-EDM translator (ip/edm-clio/rtl,
//          edm_clio_card) on port 0, in port 0's TX clock: the H2C packet
//          stream crosses from clk_pcie through clio_axis_async_fifo, each
//          Clio request packet is carried over EDM to the Clio memory node
//          CLIO_NODE_ID by the mapping of host-sdk/wire/src/edm_clio.rs
//          (READ: WREQ of the request record into the node's inbox, then an
//          RREQ of its answer chain, sized by the read; every other request:
//          WREQ of the record, answered by a WREQ into this card's inbox),
//          and the answers' Clio packets cross back into C2H slots. The
//          translator stages records and answers in port 0's EDM memory
//          (EDM_MEM_WORDS: the inbox, EC_SLOTS staging records and READ answers).
//          STATUS.READY is the translator out of reset (port 0's TX side
//          runs: its transceiver is up and PCIe out of reset), synchronized
//          into clk_pcie; until then the host's XdmaLink::open refuses the
//          card with NotReady. Port 1's requester is idle; both ports'
//          memory nodes serve the fabric.
//
// Clock domains
//   clk_pcie  axi_aclk of clio_xdma, 250 MHz: ring memory, rings, register
//             block. Not free-running (it stops with the PCIe link), so it
//             clocks nothing the transceivers' reset depends on.
//   clk_free  USER_SI570 (156.25 MHz at power-up, a board oscillator):
//             edm_board_reset (SI5335 reset pulse, transceiver reset_all)
//             and the transceivers' free-running reset clock.
//   clk_tx[N] the transceiver's TX user clock, 390.625 MHz: edm_host_top,
//             scrambler, read side of the clock crossing.
//   clk_rx[N] the recovered RX user clock: lock, descrambler, monitor, write
//             side of the clock crossing.
// Resets: rst_pcie from axi_aresetn (PCIe link reset or PERST#); each EDM
// port's sides are held in reset until the transceiver's TX / RX reset is
// done, and whenever rst_pcie is; each reset is synchronized into its clock.
//
// STATUS.LINK_UP: port 0 has block lock and no hi-BER (synchronized into
// clk_pcie). LEDs: led[0] port 0 link, led[1] port 1 link, led[2] PCIe link
// up. QSFP sideband: modules selected (ModSelL 0), out of reset, high power
// mode, SI5335 FS = 2'b10 (161.1328125 MHz reference), SI5335 RESET pulsed
// after power-up with FS already driven (edm_board_reset), then the
// transceivers released.
//
// Vendor port names this top relies on (not verified on a Vivado install;
// CHECK at the first build):
//  - clio_xdma (xdma 4.1, PG195, AXI memory-mapped, 512-bit, AXI-Lite
//    master): sys_clk, sys_clk_gt, sys_rst_n, user_lnk_up,
//    pci_exp_{txp,txn,rxp,rxn}[15:0], axi_aclk, axi_aresetn,
//    usr_irq_req[0:0], usr_irq_ack[0:0], msi_enable, msi_vector_width[2:0],
//    m_axi_{aw,ar}{id[3:0],addr[63:0],len[7:0],size[2:0],burst[1:0],
//    prot[2:0],lock,cache[3:0],valid,ready}, m_axi_w{data[511:0],
//    strb[63:0],last,valid,ready}, m_axi_b{id,resp,valid,ready},
//    m_axi_r{id,data,resp,last,valid,ready}, m_axil_{aw,ar}{addr[31:0],
//    prot[2:0],valid,ready}, m_axil_w{data[31:0],strb[3:0],valid,ready},
//    m_axil_b{resp,valid,ready}, m_axil_r{data,resp,valid,ready}.
//  - clio_gt0 / clio_gt1 (gtwizard_ultrascale 1.7, PG182, one GTY channel,
//    64B66B_ASYNC encoding, 64-bit user data, common and user clocking in
//    the core): gtyrxp_in, gtyrxn_in, gtytxp_out, gtytxn_out, gtrefclk00_in,
//    gtwiz_reset_clk_freerun_in, gtwiz_reset_all_in,
//    gtwiz_reset_{tx,rx}_{pll_and_datapath,datapath}_in,
//    gtwiz_reset_{tx,rx}_done_out, gtwiz_userclk_{tx,rx}_reset_in,
//    gtwiz_userclk_{tx,rx}_usrclk2_out, gtwiz_userclk_{tx,rx}_active_out,
//    gtwiz_userdata_tx_in[63:0], gtwiz_userdata_rx_out[63:0],
//    txheader_in[5:0], txsequence_in[6:0], rxgearboxslip_in,
//    rxheader_out[5:0], rxheadervalid_out[1:0], rxdatavalid_out[1:0].
//    Which header bit goes on the wire first, and the bit order of the user
//    data against edm_scrambler's, are CHECK items too (both ends of a link
//    run this design, so a swap is consistent but not standard).
//  - IBUFDS_GTE4 (UltraScale+ library): I, IB, CEB, O, ODIV2; IBUFDS: I,
//    IB, O; BUFG: I, O.
// bitstream/alveo-u200/tb/stubs/edm_u200_vendor_stubs.sv declares exactly
// these ports for the lint of this file.
module edm_u200_top #(
    parameter [15:0] NODE_ID0 = 16'd1,
    parameter [15:0] NODE_ID1 = 16'd2,
    // The Clio memory node (its EDM node id) port 0's translator sends to.
    parameter [15:0] CLIO_NODE_ID = 16'd3,
    // Translator slot timeout, port 0 TX cycles (2.56 ns): 5.1 ms.
    parameter [31:0] CLIO_TIMEOUT = 32'd2000000,
    // edm_board_reset timing (benches shorten them).
    parameter integer REFCLK_RESET_CYCLES = 16384,
    parameter integer REFCLK_SETTLE_CYCLES = 4194304
) (
    // USER_SI570, 156.25 MHz at power-up: the free-running board clock.
    input  wire        user_clk_p,
    input  wire        user_clk_n,
    input  wire        pcie_refclk_p,
    input  wire        pcie_refclk_n,
    input  wire        pcie_perst_n,
    input  wire [15:0] pci_exp_rxp,
    input  wire [15:0] pci_exp_rxn,
    output wire [15:0] pci_exp_txp,
    output wire [15:0] pci_exp_txn,

    input  wire        qsfp0_refclk_p,
    input  wire        qsfp0_refclk_n,
    input  wire        qsfp0_rx_p,
    input  wire        qsfp0_rx_n,
    output wire        qsfp0_tx_p,
    output wire        qsfp0_tx_n,
    output wire        qsfp0_modsel_l,
    output wire        qsfp0_reset_l,
    output wire        qsfp0_lpmode,
    input  wire        qsfp0_modprs_l,
    output wire [1:0]  qsfp0_fs,
    output wire        qsfp0_refclk_reset,

    input  wire        qsfp1_refclk_p,
    input  wire        qsfp1_refclk_n,
    input  wire        qsfp1_rx_p,
    input  wire        qsfp1_rx_n,
    output wire        qsfp1_tx_p,
    output wire        qsfp1_tx_n,
    output wire        qsfp1_modsel_l,
    output wire        qsfp1_reset_l,
    output wire        qsfp1_lpmode,
    input  wire        qsfp1_modprs_l,
    output wire [1:0]  qsfp1_fs,
    output wire        qsfp1_refclk_reset,

    output wire [2:0]  led
);

// Ring geometry (host-sdk/xdma's FileCard::DEFAULT_GEOMETRY: a 1450-byte-MTU
// Clio packet fits a slot).
localparam RING_SLOT_BYTES = 2048;
localparam RING_SLOT_COUNT = 64;
localparam [63:0] RING_H2C_BASE = 64'h0;
localparam [63:0] RING_C2H_BASE = 64'h20000;
localparam RING_MEM_BYTES = 262144;
localparam REG_ADDR_WIDTH = 16;      // 64 KiB BAR0 (ip.tcl)
// Port 0's translator needs the inbox (512 KiB), EC_SLOTS = 8 staging records
// (32 KiB) and 8 READ answers (512 KiB): 2 MiB of EDM memory per port (2 x 456
// of the part's 2160 RAMB36).
localparam EDM_MEM_WORDS = 262144;
localparam EDM_AW = $clog2(EDM_MEM_WORDS);

// ---------------------------------------------------------------------------
// PCIe: reference clock, XDMA.
// ---------------------------------------------------------------------------
wire pcie_refclk_gt, pcie_refclk_div2;

IBUFDS_GTE4 pcie_refclk_ibuf_inst (
    .I(pcie_refclk_p),
    .IB(pcie_refclk_n),
    .CEB(1'b0),
    .O(pcie_refclk_gt),
    .ODIV2(pcie_refclk_div2)
);

wire clk_pcie, pcie_aresetn, pcie_link_up;

wire [3:0]   axi_awid, axi_bid, axi_arid, axi_rid;
wire [63:0]  axi_awaddr, axi_araddr;
wire [7:0]   axi_awlen, axi_arlen;
wire [2:0]   axi_awsize, axi_arsize, axi_awprot, axi_arprot;
wire [1:0]   axi_awburst, axi_arburst, axi_bresp, axi_rresp;
wire [3:0]   axi_awcache, axi_arcache;
wire         axi_awlock, axi_arlock;
wire         axi_awvalid, axi_awready, axi_wlast, axi_wvalid, axi_wready;
wire         axi_bvalid, axi_bready, axi_arvalid, axi_arready;
wire         axi_rlast, axi_rvalid, axi_rready;
wire [511:0] axi_wdata, axi_rdata;
wire [63:0]  axi_wstrb;

wire [31:0]  axil_awaddr, axil_araddr, axil_wdata, axil_rdata;
wire [2:0]   axil_awprot, axil_arprot;
wire [3:0]   axil_wstrb;
wire [1:0]   axil_bresp, axil_rresp;
wire         axil_awvalid, axil_awready, axil_wvalid, axil_wready, axil_bvalid, axil_bready;
wire         axil_arvalid, axil_arready, axil_rvalid, axil_rready;

/* verilator lint_off UNUSEDSIGNAL */
wire [0:0]   usr_irq_ack;
wire         msi_enable;
wire [2:0]   msi_vector_width;
/* verilator lint_on UNUSEDSIGNAL */

clio_xdma xdma_inst (
    .sys_clk(pcie_refclk_div2),
    .sys_clk_gt(pcie_refclk_gt),
    .sys_rst_n(pcie_perst_n),
    .user_lnk_up(pcie_link_up),
    .pci_exp_txp(pci_exp_txp),
    .pci_exp_txn(pci_exp_txn),
    .pci_exp_rxp(pci_exp_rxp),
    .pci_exp_rxn(pci_exp_rxn),
    .axi_aclk(clk_pcie),
    .axi_aresetn(pcie_aresetn),
    .usr_irq_req(1'b0),
    .usr_irq_ack(usr_irq_ack),
    .msi_enable(msi_enable),
    .msi_vector_width(msi_vector_width),

    .m_axi_awid(axi_awid),
    .m_axi_awaddr(axi_awaddr),
    .m_axi_awlen(axi_awlen),
    .m_axi_awsize(axi_awsize),
    .m_axi_awburst(axi_awburst),
    .m_axi_awprot(axi_awprot),
    .m_axi_awlock(axi_awlock),
    .m_axi_awcache(axi_awcache),
    .m_axi_awvalid(axi_awvalid),
    .m_axi_awready(axi_awready),
    .m_axi_wdata(axi_wdata),
    .m_axi_wstrb(axi_wstrb),
    .m_axi_wlast(axi_wlast),
    .m_axi_wvalid(axi_wvalid),
    .m_axi_wready(axi_wready),
    .m_axi_bid(axi_bid),
    .m_axi_bresp(axi_bresp),
    .m_axi_bvalid(axi_bvalid),
    .m_axi_bready(axi_bready),
    .m_axi_arid(axi_arid),
    .m_axi_araddr(axi_araddr),
    .m_axi_arlen(axi_arlen),
    .m_axi_arsize(axi_arsize),
    .m_axi_arburst(axi_arburst),
    .m_axi_arprot(axi_arprot),
    .m_axi_arlock(axi_arlock),
    .m_axi_arcache(axi_arcache),
    .m_axi_arvalid(axi_arvalid),
    .m_axi_arready(axi_arready),
    .m_axi_rid(axi_rid),
    .m_axi_rdata(axi_rdata),
    .m_axi_rresp(axi_rresp),
    .m_axi_rlast(axi_rlast),
    .m_axi_rvalid(axi_rvalid),
    .m_axi_rready(axi_rready),

    .m_axil_awaddr(axil_awaddr),
    .m_axil_awprot(axil_awprot),
    .m_axil_awvalid(axil_awvalid),
    .m_axil_awready(axil_awready),
    .m_axil_wdata(axil_wdata),
    .m_axil_wstrb(axil_wstrb),
    .m_axil_wvalid(axil_wvalid),
    .m_axil_wready(axil_wready),
    .m_axil_bresp(axil_bresp),
    .m_axil_bvalid(axil_bvalid),
    .m_axil_bready(axil_bready),
    .m_axil_araddr(axil_araddr),
    .m_axil_arprot(axil_arprot),
    .m_axil_arvalid(axil_arvalid),
    .m_axil_arready(axil_arready),
    .m_axil_rdata(axil_rdata),
    .m_axil_rresp(axil_rresp),
    .m_axil_rvalid(axil_rvalid),
    .m_axil_rready(axil_rready)
);

// Synchronous reset of the PCIe side (axi_aresetn is synchronous to axi_aclk).
reg rst_pcie_reg = 1'b1;
always @(posedge clk_pcie) begin
    rst_pcie_reg <= !pcie_aresetn;
end
wire rst_pcie = rst_pcie_reg;

// ---------------------------------------------------------------------------
// PCIe packet path: ring memory, ring engine, register block (clk_pcie).
// ---------------------------------------------------------------------------
// Link state of each port, into clk_pcie.
wire [1:0] link_up;
(* ASYNC_REG = "TRUE" *) reg [1:0] link0_sync_reg = 2'b00;
(* ASYNC_REG = "TRUE" *) reg [1:0] link1_sync_reg = 2'b00;
always @(posedge clk_pcie) begin
    link0_sync_reg <= {link0_sync_reg[0], link_up[0]};
    link1_sync_reg <= {link1_sync_reg[0], link_up[1]};
end

/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] axil_awaddr_high = axil_awaddr[31:16];
wire [15:0] axil_araddr_high = axil_araddr[31:16];
wire [5:0]  axil_prot = {axil_awprot, axil_arprot};
wire [15:0] axi_unused = {axi_awprot, axi_arprot, axi_awlock, axi_arlock, axi_awcache, axi_arcache};
wire        c2h_drop;
/* verilator lint_on UNUSEDSIGNAL */
// Packet streams of the rings (clk_pcie) and of the translator (port 0 TX clock).
wire [63:0] h2c_tdata, c2h_tdata, x_h2c_tdata, x_c2h_tdata;
wire [7:0]  h2c_tkeep, c2h_tkeep, x_h2c_tkeep, x_c2h_tkeep;
wire        h2c_tvalid, h2c_tready, h2c_tlast, c2h_tvalid, c2h_tready, c2h_tlast;
wire        x_h2c_tvalid, x_h2c_tready, x_h2c_tlast, x_c2h_tvalid, x_c2h_tready, x_c2h_tlast;
// The translator is up (port 0 TX clock), and that synchronized into clk_pcie.
wire        x_ready;
wire [31:0] x_cnt_refused_pcie, x_cnt_timeouts_pcie, x_cnt_bad_pcie;
(* ASYNC_REG = "TRUE" *) reg [1:0] x_ready_sync_reg = 2'b00;
always @(posedge clk_pcie) begin
    x_ready_sync_reg <= {x_ready_sync_reg[0], x_ready};
end

edm_xdma_path #(
    .SLOT_BYTES(RING_SLOT_BYTES),
    .SLOT_COUNT(RING_SLOT_COUNT),
    .H2C_BASE(RING_H2C_BASE),
    .C2H_BASE(RING_C2H_BASE),
    .MEM_BYTES(RING_MEM_BYTES),
    .AXI_ADDR_WIDTH(64),
    .AXI_ID_WIDTH(4),
    .REG_ADDR_WIDTH(REG_ADDR_WIDTH)
) xdma_path_inst (
    .clk(clk_pcie),
    .rst(rst_pcie),
    .s_axi_awid(axi_awid),
    .s_axi_awaddr(axi_awaddr),
    .s_axi_awlen(axi_awlen),
    .s_axi_awsize(axi_awsize),
    .s_axi_awburst(axi_awburst),
    .s_axi_awvalid(axi_awvalid),
    .s_axi_awready(axi_awready),
    .s_axi_wdata(axi_wdata),
    .s_axi_wstrb(axi_wstrb),
    .s_axi_wlast(axi_wlast),
    .s_axi_wvalid(axi_wvalid),
    .s_axi_wready(axi_wready),
    .s_axi_bid(axi_bid),
    .s_axi_bresp(axi_bresp),
    .s_axi_bvalid(axi_bvalid),
    .s_axi_bready(axi_bready),
    .s_axi_arid(axi_arid),
    .s_axi_araddr(axi_araddr),
    .s_axi_arlen(axi_arlen),
    .s_axi_arsize(axi_arsize),
    .s_axi_arburst(axi_arburst),
    .s_axi_arvalid(axi_arvalid),
    .s_axi_arready(axi_arready),
    .s_axi_rid(axi_rid),
    .s_axi_rdata(axi_rdata),
    .s_axi_rresp(axi_rresp),
    .s_axi_rlast(axi_rlast),
    .s_axi_rvalid(axi_rvalid),
    .s_axi_rready(axi_rready),
    .s_axil_awaddr(axil_awaddr[REG_ADDR_WIDTH-1:0]),
    .s_axil_awvalid(axil_awvalid),
    .s_axil_awready(axil_awready),
    .s_axil_wdata(axil_wdata),
    .s_axil_wstrb(axil_wstrb),
    .s_axil_wvalid(axil_wvalid),
    .s_axil_wready(axil_wready),
    .s_axil_bresp(axil_bresp),
    .s_axil_bvalid(axil_bvalid),
    .s_axil_bready(axil_bready),
    .s_axil_araddr(axil_araddr[REG_ADDR_WIDTH-1:0]),
    .s_axil_arvalid(axil_arvalid),
    .s_axil_arready(axil_arready),
    .s_axil_rdata(axil_rdata),
    .s_axil_rresp(axil_rresp),
    .s_axil_rvalid(axil_rvalid),
    .s_axil_rready(axil_rready),
    .m_axis_tdata(h2c_tdata),
    .m_axis_tkeep(h2c_tkeep),
    .m_axis_tvalid(h2c_tvalid),
    .m_axis_tready(h2c_tready),
    .m_axis_tlast(h2c_tlast),
    .s_axis_tdata(c2h_tdata),
    .s_axis_tkeep(c2h_tkeep),
    .s_axis_tvalid(c2h_tvalid),
    .s_axis_tready(c2h_tready),
    .s_axis_tlast(c2h_tlast),
    .ready(x_ready_sync_reg[1]),
    .link_up(link0_sync_reg[1]),
    .xlate_refused(x_cnt_refused_pcie),
    .xlate_timeouts(x_cnt_timeouts_pcie),
    .xlate_bad(x_cnt_bad_pcie),
    .c2h_drop(c2h_drop)
);

// ---------------------------------------------------------------------------
// EDM ports: transceiver + edm_u200_port per cage.
// ---------------------------------------------------------------------------
wire qsfp0_refclk, qsfp1_refclk;
/* verilator lint_off UNUSEDSIGNAL */
wire qsfp0_refclk_div2, qsfp1_refclk_div2;
/* verilator lint_on UNUSEDSIGNAL */

IBUFDS_GTE4 qsfp0_refclk_ibuf_inst (
    .I(qsfp0_refclk_p),
    .IB(qsfp0_refclk_n),
    .CEB(1'b0),
    .O(qsfp0_refclk),
    .ODIV2(qsfp0_refclk_div2)
);

IBUFDS_GTE4 qsfp1_refclk_ibuf_inst (
    .I(qsfp1_refclk_p),
    .IB(qsfp1_refclk_n),
    .CEB(1'b0),
    .O(qsfp1_refclk),
    .ODIV2(qsfp1_refclk_div2)
);

// Per port N (index N of each vector): the transceiver's user clocks, reset
// done flags and 64b/66b gearbox interface.
wire [1:0]   clk_tx, clk_rx, gt_tx_done, gt_rx_done, gt_slip;
wire [127:0] gt_tx_data, gt_rx_data;
wire [3:0]   gt_tx_hdr;
wire [11:0]  gt_rx_header;
wire [3:0]   gt_rx_header_valid, gt_rx_data_valid;
/* verilator lint_off UNUSEDSIGNAL */
wire [1:0]   gt_tx_active, gt_rx_active;
/* verilator lint_on UNUSEDSIGNAL */

// Free-running board clock for the transceivers' reset controllers and the
// SI5335 reset: not axi_aclk, which stops with the PCIe link (PG195).
wire clk_free_ibuf, clk_free, refclk_reset, gt_reset_all;

IBUFDS user_clk_ibuf_inst (
    .I(user_clk_p),
    .IB(user_clk_n),
    .O(clk_free_ibuf)
);

BUFG user_clk_bufg_inst (
    .I(clk_free_ibuf),
    .O(clk_free)
);

edm_board_reset #(
    .RESET_CYCLES(REFCLK_RESET_CYCLES),
    .SETTLE_CYCLES(REFCLK_SETTLE_CYCLES)
) board_reset_inst (
    .clk_free(clk_free),
    .refclk_reset(refclk_reset),
    .gt_reset_all(gt_reset_all)
);

clio_gt0 gt0_inst (
    .gtyrxp_in(qsfp0_rx_p),
    .gtyrxn_in(qsfp0_rx_n),
    .gtytxp_out(qsfp0_tx_p),
    .gtytxn_out(qsfp0_tx_n),
    .gtrefclk00_in(qsfp0_refclk),
    .gtwiz_reset_clk_freerun_in(clk_free),
    .gtwiz_reset_all_in(gt_reset_all),
    .gtwiz_reset_tx_pll_and_datapath_in(1'b0),
    .gtwiz_reset_tx_datapath_in(1'b0),
    .gtwiz_reset_rx_pll_and_datapath_in(1'b0),
    .gtwiz_reset_rx_datapath_in(1'b0),
    .gtwiz_reset_tx_done_out(gt_tx_done[0]),
    .gtwiz_reset_rx_done_out(gt_rx_done[0]),
    .gtwiz_userclk_tx_reset_in(1'b0),
    .gtwiz_userclk_rx_reset_in(1'b0),
    .gtwiz_userclk_tx_usrclk2_out(clk_tx[0]),
    .gtwiz_userclk_rx_usrclk2_out(clk_rx[0]),
    .gtwiz_userclk_tx_active_out(gt_tx_active[0]),
    .gtwiz_userclk_rx_active_out(gt_rx_active[0]),
    .gtwiz_userdata_tx_in(gt_tx_data[64*0 +: 64]),
    .gtwiz_userdata_rx_out(gt_rx_data[64*0 +: 64]),
    .txheader_in({4'd0, gt_tx_hdr[2*0 +: 2]}),
    .txsequence_in(7'd0),
    .rxgearboxslip_in(gt_slip[0]),
    .rxheader_out(gt_rx_header[6*0 +: 6]),
    .rxheadervalid_out(gt_rx_header_valid[2*0 +: 2]),
    .rxdatavalid_out(gt_rx_data_valid[2*0 +: 2])
);

clio_gt1 gt1_inst (
    .gtyrxp_in(qsfp1_rx_p),
    .gtyrxn_in(qsfp1_rx_n),
    .gtytxp_out(qsfp1_tx_p),
    .gtytxn_out(qsfp1_tx_n),
    .gtrefclk00_in(qsfp1_refclk),
    .gtwiz_reset_clk_freerun_in(clk_free),
    .gtwiz_reset_all_in(gt_reset_all),
    .gtwiz_reset_tx_pll_and_datapath_in(1'b0),
    .gtwiz_reset_tx_datapath_in(1'b0),
    .gtwiz_reset_rx_pll_and_datapath_in(1'b0),
    .gtwiz_reset_rx_datapath_in(1'b0),
    .gtwiz_reset_tx_done_out(gt_tx_done[1]),
    .gtwiz_reset_rx_done_out(gt_rx_done[1]),
    .gtwiz_userclk_tx_reset_in(1'b0),
    .gtwiz_userclk_rx_reset_in(1'b0),
    .gtwiz_userclk_tx_usrclk2_out(clk_tx[1]),
    .gtwiz_userclk_rx_usrclk2_out(clk_rx[1]),
    .gtwiz_userclk_tx_active_out(gt_tx_active[1]),
    .gtwiz_userclk_rx_active_out(gt_rx_active[1]),
    .gtwiz_userdata_tx_in(gt_tx_data[64*1 +: 64]),
    .gtwiz_userdata_rx_out(gt_rx_data[64*1 +: 64]),
    .txheader_in({4'd0, gt_tx_hdr[2*1 +: 2]}),
    .txsequence_in(7'd0),
    .rxgearboxslip_in(gt_slip[1]),
    .rxheader_out(gt_rx_header[6*1 +: 6]),
    .rxheadervalid_out(gt_rx_header_valid[2*1 +: 2]),
    .rxdatavalid_out(gt_rx_data_valid[2*1 +: 2])
);

// Port 0's requester side, driven by the translator; port 1's is idle.
wire          x_req_valid, x_req_write;
wire [15:0]   x_req_dst, x_req_len, x_req_tag;
wire [63:0]   x_req_addr;
wire [31:0]   x_req_local;
wire          x_ext_en, x_ext_we;
wire [EDM_AW-1:0] x_ext_addr;
wire [63:0]   x_ext_wdata;
/* verilator lint_off UNUSEDSIGNAL */
// (port 1's completions and reports are not used)
wire [1:0]    rst_tx, e_req_ready, e_wcomp_valid, e_rcomp_valid, e_rcomp_ok, e_wapp_valid, e_wapp_last;
wire [31:0]   e_wcomp_tag, e_rcomp_tag, e_wapp_words, e_wapp_peer;
wire [127:0]  e_ext_rdata, e_rcomp_data;
wire [2*EDM_AW-1:0] e_wapp_addr;
/* verilator lint_on UNUSEDSIGNAL */

genvar p;
generate
for (p = 0; p < 2; p = p + 1) begin : port
    // Reset synchronizers: each side of the port stays in reset until its
    // transceiver direction is ready, and while the PCIe side is.
    (* ASYNC_REG = "TRUE" *) reg [2:0] rst_tx_sync_reg = 3'b111;
    (* ASYNC_REG = "TRUE" *) reg [2:0] rst_rx_sync_reg = 3'b111;
    wire rst_tx_async = rst_pcie || !gt_tx_done[p];
    wire rst_rx_async = rst_pcie || !gt_rx_done[p];
    always @(posedge clk_tx[p] or posedge rst_tx_async) begin
        if (rst_tx_async) rst_tx_sync_reg <= 3'b111;
        else rst_tx_sync_reg <= {rst_tx_sync_reg[1:0], 1'b0};
    end
    always @(posedge clk_rx[p] or posedge rst_rx_async) begin
        if (rst_rx_async) rst_rx_sync_reg <= 3'b111;
        else rst_rx_sync_reg <= {rst_rx_sync_reg[1:0], 1'b0};
    end
    assign rst_tx[p] = rst_tx_sync_reg[2];

    /* verilator lint_off PINCONNECTEMPTY */
    edm_u200_port #(
        .MEM_WORDS(EDM_MEM_WORDS)
    ) port_inst (
        .tx_clk(clk_tx[p]),
        .tx_rst(rst_tx_sync_reg[2]),
        .rx_clk(clk_rx[p]),
        .rx_rst(rst_rx_sync_reg[2]),
        .node_id(p == 0 ? NODE_ID0 : NODE_ID1),
        .gt_tx_data(gt_tx_data[64*p +: 64]),
        .gt_tx_hdr(gt_tx_hdr[2*p +: 2]),
        .gt_rx_data(gt_rx_data[64*p +: 64]),
        .gt_rx_hdr(gt_rx_header[6*p +: 2]),
        .gt_rx_valid(gt_rx_data_valid[2*p] && gt_rx_header_valid[2*p]),
        .gt_rx_slip(gt_slip[p]),
        .link_up(link_up[p]),
        // Port 0: the translator's requests; port 1: idle.
        .req_valid(p == 0 ? x_req_valid : 1'b0),
        .req_ready(e_req_ready[p]),
        .req_write(p == 0 ? x_req_write : 1'b0),
        .req_dst(p == 0 ? x_req_dst : 16'd0),
        .req_addr(p == 0 ? x_req_addr : 64'd0),
        .req_len(p == 0 ? x_req_len : 16'd0),
        .req_local(p == 0 ? x_req_local : 32'd0),
        .req_tag(p == 0 ? x_req_tag : 16'd0),
        .req_rmw(1'b0),
        .req_op(4'd0),
        .req_opa(64'd0),
        .req_opb(64'd0),
        .wcomp_valid(e_wcomp_valid[p]),
        .wcomp_tag(e_wcomp_tag[16*p +: 16]),
        .rcomp_valid(e_rcomp_valid[p]),
        .rcomp_tag(e_rcomp_tag[16*p +: 16]),
        .rcomp_ok(e_rcomp_ok[p]),
        .rcomp_data(e_rcomp_data[64*p +: 64]),
        .wapp_valid(e_wapp_valid[p]),
        .wapp_addr(e_wapp_addr[EDM_AW*p +: EDM_AW]),
        .wapp_words(e_wapp_words[16*p +: 16]),
        .wapp_peer(e_wapp_peer[16*p +: 16]),
        .wapp_last(e_wapp_last[p]),
        .ext_en(p == 0 ? x_ext_en : 1'b0),
        .ext_we(p == 0 ? x_ext_we : 1'b0),
        .ext_addr(p == 0 ? x_ext_addr : {EDM_AW{1'b0}}),
        .ext_wdata(p == 0 ? x_ext_wdata : 64'd0),
        .ext_rdata(e_ext_rdata[64*p +: 64])
    );
    /* verilator lint_on PINCONNECTEMPTY */
end
endgenerate

// ---------------------------------------------------------------------------
// The Clio-to-EDM translator on port 0 (port 0 TX clock), and its packet
// streams' clock crossings.
// ---------------------------------------------------------------------------
// H2C: written on clk_pcie, read by the translator. The read side's reset
// (port 0 TX) follows rst_pcie, as the FIFO asks.
/* verilator lint_off PINCONNECTEMPTY */
clio_axis_async_fifo #(
    .DEPTH(512)
) h2c_fifo_inst (
    .s_clk(clk_pcie),
    .s_rst(rst_pcie),
    .s_axis_tdata(h2c_tdata),
    .s_axis_tkeep(h2c_tkeep),
    .s_axis_tvalid(h2c_tvalid),
    .s_axis_tready(h2c_tready),
    .s_axis_tlast(h2c_tlast),
    .s_drop(),
    .m_clk(clk_tx[0]),
    .m_rst(rst_tx[0]),
    .m_axis_tdata(x_h2c_tdata),
    .m_axis_tkeep(x_h2c_tkeep),
    .m_axis_tvalid(x_h2c_tvalid),
    .m_axis_tready(x_h2c_tready),
    .m_axis_tlast(x_h2c_tlast)
);

// C2H: written by the translator, read on clk_pcie. The read side is held in
// reset while port 0's TX side is (synchronized), so a transceiver reset
// restarts both sides. CHECK: that reset reaches the reader two clk_pcie
// cycles after the writer's; a transceiver reset in the middle of C2H
// traffic is not simulated.
(* ASYNC_REG = "TRUE" *) reg [1:0] rst_tx0_pcie_reg = 2'b11;
always @(posedge clk_pcie) begin
    rst_tx0_pcie_reg <= {rst_tx0_pcie_reg[0], rst_tx[0]};
end

clio_axis_async_fifo #(
    .DEPTH(512)
) c2h_fifo_inst (
    .s_clk(clk_tx[0]),
    .s_rst(rst_tx[0]),
    .s_axis_tdata(x_c2h_tdata),
    .s_axis_tkeep(x_c2h_tkeep),
    .s_axis_tvalid(x_c2h_tvalid),
    .s_axis_tready(x_c2h_tready),
    .s_axis_tlast(x_c2h_tlast),
    .s_drop(),
    .m_clk(clk_pcie),
    .m_rst(rst_pcie || rst_tx0_pcie_reg[1]),
    .m_axis_tdata(c2h_tdata),
    .m_axis_tkeep(c2h_tkeep),
    .m_axis_tvalid(c2h_tvalid),
    .m_axis_tready(c2h_tready),
    .m_axis_tlast(c2h_tlast)
);
/* verilator lint_on PINCONNECTEMPTY */

// The translator's counters, in port 0's TX clock, shown by the user BAR
// (XLATE_* registers) through clio_count_cdc (each steps at most once a cycle).
wire [31:0] x_cnt_refused, x_cnt_timeouts, x_cnt_bad;

clio_count_cdc #(.WIDTH(32)) x_cnt_refused_cdc_inst (
    .s_clk(clk_tx[0]), .s_count(x_cnt_refused), .m_clk(clk_pcie), .m_count(x_cnt_refused_pcie)
);
clio_count_cdc #(.WIDTH(32)) x_cnt_timeouts_cdc_inst (
    .s_clk(clk_tx[0]), .s_count(x_cnt_timeouts), .m_clk(clk_pcie), .m_count(x_cnt_timeouts_pcie)
);
clio_count_cdc #(.WIDTH(32)) x_cnt_bad_cdc_inst (
    .s_clk(clk_tx[0]), .s_count(x_cnt_bad), .m_clk(clk_pcie), .m_count(x_cnt_bad_pcie)
);

edm_clio_card #(
    .AW(EDM_AW),
    .TIMEOUT(CLIO_TIMEOUT)
) clio_card_inst (
    .clk(clk_tx[0]),
    .rst(rst_tx[0]),
    .node_id(NODE_ID0),
    .dst(CLIO_NODE_ID),
    .ready(x_ready),
    .s_axis_tdata(x_h2c_tdata),
    .s_axis_tkeep(x_h2c_tkeep),
    .s_axis_tvalid(x_h2c_tvalid),
    .s_axis_tlast(x_h2c_tlast),
    .s_axis_tready(x_h2c_tready),
    .m_axis_tdata(x_c2h_tdata),
    .m_axis_tkeep(x_c2h_tkeep),
    .m_axis_tvalid(x_c2h_tvalid),
    .m_axis_tlast(x_c2h_tlast),
    .m_axis_tready(x_c2h_tready),
    .req_valid(x_req_valid),
    .req_ready(e_req_ready[0]),
    .req_write(x_req_write),
    .req_dst(x_req_dst),
    .req_addr(x_req_addr),
    .req_len(x_req_len),
    .req_local(x_req_local),
    .req_tag(x_req_tag),
    .wcomp_valid(e_wcomp_valid[0]),
    .wcomp_tag(e_wcomp_tag[15:0]),
    .rcomp_valid(e_rcomp_valid[0]),
    .rcomp_tag(e_rcomp_tag[15:0]),
    .rcomp_ok(e_rcomp_ok[0]),
    .wapp_valid(e_wapp_valid[0]),
    .wapp_addr(e_wapp_addr[EDM_AW-1:0]),
    .wapp_words(e_wapp_words[15:0]),
    .wapp_peer(e_wapp_peer[15:0]),
    .wapp_last(e_wapp_last[0]),
    .ext_en(x_ext_en),
    .ext_we(x_ext_we),
    .ext_addr(x_ext_addr),
    .ext_wdata(x_ext_wdata),
    .ext_rdata(e_ext_rdata[63:0]),
    .cnt_refused(x_cnt_refused),
    .cnt_timeouts(x_cnt_timeouts),
    .cnt_bad(x_cnt_bad)
);

// ---------------------------------------------------------------------------
// QSFP sideband and LEDs.
// ---------------------------------------------------------------------------
assign qsfp0_modsel_l = 1'b0;
assign qsfp0_reset_l = 1'b1;
assign qsfp0_lpmode = 1'b0;
assign qsfp0_fs = 2'b10;
assign qsfp0_refclk_reset = refclk_reset;
assign qsfp1_modsel_l = 1'b0;
assign qsfp1_reset_l = 1'b1;
assign qsfp1_lpmode = 1'b0;
assign qsfp1_fs = 2'b10;
assign qsfp1_refclk_reset = refclk_reset;

// Link LEDs light only with a module present (ModPrsL low).
assign led[0] = link0_sync_reg[1] && !qsfp0_modprs_l;
assign led[1] = link1_sync_reg[1] && !qsfp1_modprs_l;
assign led[2] = pcie_link_up;

/* verilator lint_off UNUSEDSIGNAL */
wire [7:0] gt_rx_header_high = {gt_rx_header[11:8], gt_rx_header[5:2]};
wire [3:0] gt_rx_valid_high = {gt_rx_header_valid[3], gt_rx_data_valid[3], gt_rx_header_valid[1],
                               gt_rx_data_valid[1]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
