// Bench wrapper of clio_eth_ports with two ports: each MAC clock on its own
// input (cocotb drives whole signals), everything else passed through.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module clio_eth_ports_tb #(
    parameter RX_FIFO_DEPTH = 128
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [47:0]   cfg_mac,
    input  wire [31:0]   cfg_ipv4,
    input  wire [15:0]   cfg_udp_port,
    input  wire          mac_clk0,
    input  wire          mac_clk1,
    input  wire [1:0]    mac_down,
    input  wire [127:0]  mac_rx_tdata,
    input  wire [15:0]   mac_rx_tkeep,
    input  wire [1:0]    mac_rx_tvalid,
    input  wire [1:0]    mac_rx_tlast,
    output wire [127:0]  mac_tx_tdata,
    output wire [15:0]   mac_tx_tkeep,
    output wire [1:0]    mac_tx_tvalid,
    input  wire [1:0]    mac_tx_tready,
    output wire [1:0]    mac_tx_tlast,
    output wire [63:0]   m_clio_tdata,
    output wire [7:0]    m_clio_tkeep,
    output wire          m_clio_tvalid,
    input  wire          m_clio_tready,
    output wire          m_clio_tlast,
    input  wire [63:0]   s_clio_tdata,
    input  wire [7:0]    s_clio_tkeep,
    input  wire          s_clio_tvalid,
    output wire          s_clio_tready,
    input  wire          s_clio_tlast,
    output wire [1:0]    port_rst,
    output wire          rx_overflow,
    output wire          rx_drop,
    output wire          tx_drop,
    output wire          rx_cut
);

clio_eth_ports #(
    .PORTS(2),
    .RX_FIFO_DEPTH(RX_FIFO_DEPTH)
) dut (
    .clk(clk), .rst(rst),
    .cfg_mac(cfg_mac), .cfg_ipv4(cfg_ipv4), .cfg_udp_port(cfg_udp_port),
    .mac_clk({mac_clk1, mac_clk0}), .mac_down(mac_down),
    .mac_rx_tdata(mac_rx_tdata), .mac_rx_tkeep(mac_rx_tkeep), .mac_rx_tvalid(mac_rx_tvalid),
    .mac_rx_tlast(mac_rx_tlast),
    .mac_tx_tdata(mac_tx_tdata), .mac_tx_tkeep(mac_tx_tkeep), .mac_tx_tvalid(mac_tx_tvalid),
    .mac_tx_tready(mac_tx_tready), .mac_tx_tlast(mac_tx_tlast),
    .m_clio_tdata(m_clio_tdata), .m_clio_tkeep(m_clio_tkeep), .m_clio_tvalid(m_clio_tvalid),
    .m_clio_tready(m_clio_tready), .m_clio_tlast(m_clio_tlast),
    .s_clio_tdata(s_clio_tdata), .s_clio_tkeep(s_clio_tkeep), .s_clio_tvalid(s_clio_tvalid),
    .s_clio_tready(s_clio_tready), .s_clio_tlast(s_clio_tlast),
    .port_rst(port_rst), .rx_overflow(rx_overflow), .rx_drop(rx_drop), .tx_drop(tx_drop),
    .rx_cut(rx_cut)
);

endmodule

`resetall
