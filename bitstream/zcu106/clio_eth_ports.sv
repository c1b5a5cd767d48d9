// clio_eth_ports: the board's Ethernet ports in front of the fast path: per-port clock crossing, frame mux/demux, and the UDP layer.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Per port N (MAC user clock mac_clk[N], 64-bit AXI4-Stream without FCS):
//   RX: MAC -> clio_axis_async_fifo in frame mode with DROP_WHEN_FULL
//       (mac_clk[N] -> clk; the mux sees only whole frames, which then pass
//       at one beat per cycle of `clk`, so a frame arriving at line rate on
//       one port never holds up the other; the MAC cannot be back-pressured:
//       a frame meeting a full FIFO is dropped whole and pulses
//       `rx_overflow`; RX_FIFO_DEPTH must hold the largest frame),
//   TX: clio_axis_async_fifo in frame mode (clk -> mac_clk[N]; a frame is
//       released whole, so the MAC never underruns) -> MAC.
// Shared, in `clk`: clio_axis_frame_mux (whole frames, round robin, tagged
// with their port) -> clio_udp_shim -> Clio requests out (`m_clio`); Clio
// responses in (`s_clio`) -> clio_udp_shim (addressed to the client, on the
// port its last request came in on; ARP replies on their request's port) ->
// clio_axis_frame_demux -> the port's TX FIFO.
//
// Resets: `rst` (the fast path's, in `clk`) resets everything. Port N is
// also held in reset while `mac_down[N]` (its MAC's user resets, any
// domain) or `rst` is high, or while its MAC clock is not running: both of
// its FIFOs, through a synchronizer in each of its clock domains (so a
// stopped MAC clock cannot leave the TX FIFO filling until it stalls the
// other port). A port in reset is skipped by the mux, which ends a frame it
// was passing early (the shim then drops it, `rx_drop`, unless only bytes
// after its UDP payload were lost); frames for it are dropped whole by the
// demux (`tx_drop`), so a dead port never stalls the others.
//
// `rx_drop`: frames the shim dropped (see clio_udp_shim). `tx_drop`:
// responses the shim could not address plus frames for a port in reset;
// neither source pulses in two consecutive cycles (the shim spends at least
// 4 cycles per response, the demux's frames are at least 8 beats), so one
// pending pulse counts a coincidence exactly.
module clio_eth_ports #(
    parameter PORTS = 2,
    parameter TABLE_BITS = 6,
    parameter RX_FIFO_DEPTH = 512,
    parameter TX_FIFO_DEPTH = 256
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [47:0]          cfg_mac,
    input  wire [31:0]          cfg_ipv4,
    input  wire [15:0]          cfg_udp_port,

    input  wire [PORTS-1:0]     mac_clk,
    input  wire [PORTS-1:0]     mac_down,
    input  wire [PORTS*64-1:0]  mac_rx_tdata,
    input  wire [PORTS*8-1:0]   mac_rx_tkeep,
    input  wire [PORTS-1:0]     mac_rx_tvalid,
    input  wire [PORTS-1:0]     mac_rx_tlast,
    output wire [PORTS*64-1:0]  mac_tx_tdata,
    output wire [PORTS*8-1:0]   mac_tx_tkeep,
    output wire [PORTS-1:0]     mac_tx_tvalid,
    input  wire [PORTS-1:0]     mac_tx_tready,
    output wire [PORTS-1:0]     mac_tx_tlast,

    output wire [63:0]          m_clio_tdata,
    output wire [7:0]           m_clio_tkeep,
    output wire                 m_clio_tvalid,
    input  wire                 m_clio_tready,
    output wire                 m_clio_tlast,

    input  wire [63:0]          s_clio_tdata,
    input  wire [7:0]           s_clio_tkeep,
    input  wire                 s_clio_tvalid,
    output wire                 s_clio_tready,
    input  wire                 s_clio_tlast,

    // Port N in reset (in `clk`).
    output wire [PORTS-1:0]     port_rst,
    output wire                 rx_overflow,
    output wire                 rx_drop,
    output wire                 tx_drop,
    // A frame was cut by its port's reset (the shim drops it and counts it in
    // rx_drop, unless only bytes after its UDP payload were lost).
    output wire                 rx_cut
);

localparam DEST_WIDTH = PORTS > 1 ? $clog2(PORTS) : 1;

wire [PORTS*64-1:0] rxq_tdata, txd_tdata;
wire [PORTS*8-1:0]  rxq_tkeep, txd_tkeep;
wire [PORTS-1:0]    rxq_tvalid, rxq_tready, rxq_tlast;
wire [PORTS-1:0]    txd_tvalid, txd_tready, txd_tlast;
wire [PORTS-1:0]    lost;

genvar g;
generate
for (g = 0; g < PORTS; g = g + 1) begin : port
    // Is the MAC clock running? A bit toggling every 2 MAC cycles, watched from
    // `clk`: no edge for 127 cycles of `clk` means stopped (a reset of its
    // transceiver's PLL), and the port is held in reset until it runs again.
    reg [1:0] tick = 2'b00;
    always @(posedge mac_clk[g]) begin
        tick <= tick + 1'b1;
    end
    (* ASYNC_REG = "TRUE" *) reg [2:0] tick_sync = 3'b000;
    reg [6:0] idle_cnt = 7'h7f;
    always @(posedge clk) begin
        tick_sync <= {tick_sync[1:0], tick[1]};
        if (tick_sync[2] ^ tick_sync[1]) begin
            idle_cnt <= 7'd0;
        end else if (idle_cnt != 7'h7f) begin
            idle_cnt <= idle_cnt + 1'b1;
        end
    end
    wire stopped = idle_cnt == 7'h7f;

    // The port's reset in its MAC domain (asserted from configuration until
    // the clock has run a few cycles, and again for a few cycles when a
    // stopped clock restarts, so both sides of its FIFOs reset together) and
    // back in `clk`.
    (* ASYNC_REG = "TRUE" *) reg [2:0] rst_mac_sync = 3'b111;
    always @(posedge mac_clk[g]) begin
        rst_mac_sync <= {rst_mac_sync[1:0], mac_down[g] || rst || stopped};
    end
    wire rst_mac = rst_mac_sync[2];
    (* ASYNC_REG = "TRUE" *) reg [2:0] rst_fp_sync = 3'b111;
    always @(posedge clk) begin
        rst_fp_sync <= {rst_fp_sync[1:0], rst_mac};
    end
    // A FIFO's reader must be in reset whenever its writer is (else it reads
    // the writer's reset pointer as new data): the RX FIFO's reader (`clk`)
    // takes port_rst, which starts with `rst` and ends after rst_mac; the TX
    // FIFO's writer (`clk`) takes rst_link, which starts after rst_mac (its
    // reader's) and ends after it.
    wire rst_link = rst_fp_sync[2];
    assign port_rst[g] = rst || stopped || rst_link;

    // Always ready in drop mode; the TX FIFO never drops (frame mode without
    // DROP_WHEN_FULL waits instead).
    wire rxf_drop, rxf_tready, txf_drop;
    clio_axis_async_fifo #(
        .DATA_WIDTH(64),
        .DEPTH(RX_FIFO_DEPTH),
        .FRAME_FIFO(1),
        .DROP_WHEN_FULL(1)
    ) rx_fifo_inst (
        .s_clk(mac_clk[g]), .s_rst(rst_mac),
        .s_axis_tdata(mac_rx_tdata[64*g +: 64]), .s_axis_tkeep(mac_rx_tkeep[8*g +: 8]),
        .s_axis_tvalid(mac_rx_tvalid[g]), .s_axis_tready(rxf_tready), .s_axis_tlast(mac_rx_tlast[g]),
        .s_drop(rxf_drop),
        .m_clk(clk), .m_rst(port_rst[g]),
        .m_axis_tdata(rxq_tdata[64*g +: 64]), .m_axis_tkeep(rxq_tkeep[8*g +: 8]),
        .m_axis_tvalid(rxq_tvalid[g]), .m_axis_tready(rxq_tready[g]), .m_axis_tlast(rxq_tlast[g])
    );

    // A frame dropped at a full FIFO: toggle in the MAC domain, edge in `clk`.
    reg lost_toggle = 1'b0;
    always @(posedge mac_clk[g]) begin
        if (rxf_drop) begin
            lost_toggle <= !lost_toggle;
        end
    end
    (* ASYNC_REG = "TRUE" *) reg [2:0] lost_sync = 3'b000;
    always @(posedge clk) begin
        lost_sync <= {lost_sync[1:0], lost_toggle};
    end
    assign lost[g] = lost_sync[2] ^ lost_sync[1];

    clio_axis_async_fifo #(
        .DATA_WIDTH(64),
        .DEPTH(TX_FIFO_DEPTH),
        .FRAME_FIFO(1)
    ) tx_fifo_inst (
        .s_clk(clk), .s_rst(rst_link),
        .s_axis_tdata(txd_tdata[64*g +: 64]), .s_axis_tkeep(txd_tkeep[8*g +: 8]),
        .s_axis_tvalid(txd_tvalid[g]), .s_axis_tready(txd_tready[g]), .s_axis_tlast(txd_tlast[g]),
        .s_drop(txf_drop),
        .m_clk(mac_clk[g]), .m_rst(rst_mac),
        .m_axis_tdata(mac_tx_tdata[64*g +: 64]), .m_axis_tkeep(mac_tx_tkeep[8*g +: 8]),
        .m_axis_tvalid(mac_tx_tvalid[g]), .m_axis_tready(mac_tx_tready[g]),
        .m_axis_tlast(mac_tx_tlast[g])
    );
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = rxf_tready ^ txf_drop;
    /* verilator lint_on UNUSEDSIGNAL */
end
endgenerate

assign rx_overflow = |lost;

wire [63:0]           rxm_tdata, txe_tdata;
wire [7:0]            rxm_tkeep, txe_tkeep;
wire                  rxm_tvalid, rxm_tready, rxm_tlast;
wire                  txe_tvalid, txe_tready, txe_tlast;
wire [DEST_WIDTH-1:0] rxm_tdest, txe_tdest;
wire                  shim_tx_drop, port_tx_drop;

clio_axis_frame_mux #(
    .PORTS(PORTS),
    .DATA_WIDTH(64)
) rx_mux_inst (
    .clk(clk), .rst(rst),
    .s_rst(port_rst),
    .s_axis_tdata(rxq_tdata), .s_axis_tkeep(rxq_tkeep), .s_axis_tvalid(rxq_tvalid),
    .s_axis_tready(rxq_tready), .s_axis_tlast(rxq_tlast),
    .m_axis_tdata(rxm_tdata), .m_axis_tkeep(rxm_tkeep), .m_axis_tvalid(rxm_tvalid),
    .m_axis_tready(rxm_tready), .m_axis_tlast(rxm_tlast), .m_axis_tdest(rxm_tdest),
    .cut(rx_cut)
);

clio_udp_shim #(
    .TABLE_BITS(TABLE_BITS),
    .DEST_WIDTH(DEST_WIDTH)
) udp_shim_inst (
    .clk(clk), .rst(rst),
    .cfg_mac(cfg_mac), .cfg_ipv4(cfg_ipv4), .cfg_udp_port(cfg_udp_port),
    .s_eth_tdata(rxm_tdata), .s_eth_tkeep(rxm_tkeep), .s_eth_tvalid(rxm_tvalid),
    .s_eth_tready(rxm_tready), .s_eth_tlast(rxm_tlast), .s_eth_tdest(rxm_tdest),
    .m_clio_tdata(m_clio_tdata), .m_clio_tkeep(m_clio_tkeep), .m_clio_tvalid(m_clio_tvalid),
    .m_clio_tready(m_clio_tready), .m_clio_tlast(m_clio_tlast),
    .s_clio_tdata(s_clio_tdata), .s_clio_tkeep(s_clio_tkeep), .s_clio_tvalid(s_clio_tvalid),
    .s_clio_tready(s_clio_tready), .s_clio_tlast(s_clio_tlast),
    .m_eth_tdata(txe_tdata), .m_eth_tkeep(txe_tkeep), .m_eth_tvalid(txe_tvalid),
    .m_eth_tready(txe_tready), .m_eth_tlast(txe_tlast), .m_eth_tdest(txe_tdest),
    .rx_drop(rx_drop), .tx_drop(shim_tx_drop)
);

clio_axis_frame_demux #(
    .PORTS(PORTS),
    .DATA_WIDTH(64)
) tx_demux_inst (
    .clk(clk), .rst(rst),
    .m_down(port_rst),
    .s_axis_tdata(txe_tdata), .s_axis_tkeep(txe_tkeep), .s_axis_tvalid(txe_tvalid),
    .s_axis_tready(txe_tready), .s_axis_tlast(txe_tlast), .s_axis_tdest(txe_tdest),
    .m_axis_tdata(txd_tdata), .m_axis_tkeep(txd_tkeep), .m_axis_tvalid(txd_tvalid),
    .m_axis_tready(txd_tready), .m_axis_tlast(txd_tlast),
    .drop(port_tx_drop)
);

reg tx_drop_extra = 1'b0;
always @(posedge clk) begin
    tx_drop_extra <= shim_tx_drop && port_tx_drop;
    if (rst) begin
        tx_drop_extra <= 1'b0;
    end
end
assign tx_drop = shim_tx_drop || port_tx_drop || tx_drop_extra;

endmodule

`resetall
