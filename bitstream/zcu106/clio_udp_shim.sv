// clio_udp_shim: the board's Ethernet/IPv4/UDP layer between the 10G MAC stream and the fast path (RX strip, TX prepend, ARP, client table).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// RX (clio_udp_rx): Ethernet frames in, the payloads of UDP datagrams to
// cfg_mac / cfg_ipv4 / cfg_udp_port out (one Clio packet per frame).
// TX (clio_udp_tx): the fast path's responses in, Ethernet/IPv4/UDP frames
// to the client that sent the request out; ARP replies for cfg_ipv4.
//
// Ports: with several Ethernet ports muxed onto this one stream
// (clio_axis_frame_mux), `s_eth_tdest` names the port a frame came in on and
// `m_eth_tdest` the port a frame must go out on (clio_axis_frame_demux): a
// response goes out on the port its client's last request came in on, an
// ARP reply on the port of its request. With one port, tie s_eth_tdest to 0.
//
// Client table: each accepted request writes its sender's (MAC, IPv4, UDP
// port, Ethernet port) to entry pid[TABLE_BITS-1:0] with tag = the full pid;
// a response is sent to the entry of its pid when the tag matches, else
// dropped (`tx_drop`).
// Two live pids with the same low bits evict each other (the later request
// wins; a response of the evicted one is dropped and its client retries).
// `rst` empties the table.
//
// Bound: 2^TABLE_BITS entries (64 in clio_zcu106_top, at most 4096), fixed
// distributed RAM (129 bits each) that no traffic can grow. The table is
// never "full" in the sense of refusing: with more live pids than entries,
// a new pid replaces the pid sharing its index (not the least recently used
// one), the replaced pid's responses are dropped (tx_drop) until its next
// request re-learns the entry, and no response ever goes to another pid's
// client (the tag is the full pid). Two busy pids sharing an index thrash:
// each one's responses are lost whenever the other asked last. An entry is
// learned from every request passed to the fast path, before the fast path
// checks its CRC or PID: a corrupt or forged request rewrites its pid's entry
// (responses then go to the forger's address until the client asks again).
// Learning only from requests the fast path accepts needs a verdict from it,
// which the session-key work adds to the fast-path interface.
//
// `rx_drop` pulses once per received frame neither passed on nor answered as
// an ARP request (and once per frame shorter than its UDP length, which is
// passed padded, see clio_udp_rx); `tx_drop` once per response not sent.
// One clock; all inputs in its domain.
module clio_udp_shim #(
    parameter TABLE_BITS = 6,
    parameter DEST_WIDTH = 1
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [47:0] cfg_mac,
    input  wire [31:0] cfg_ipv4,
    input  wire [15:0] cfg_udp_port,

    // From the MAC: Ethernet frames.
    input  wire [63:0] s_eth_tdata,
    input  wire [7:0]  s_eth_tkeep,
    input  wire        s_eth_tvalid,
    output wire        s_eth_tready,
    input  wire        s_eth_tlast,
    input  wire [DEST_WIDTH-1:0] s_eth_tdest,

    // To the fast path: Clio requests.
    output wire [63:0] m_clio_tdata,
    output wire [7:0]  m_clio_tkeep,
    output wire        m_clio_tvalid,
    input  wire        m_clio_tready,
    output wire        m_clio_tlast,

    // From the fast path: Clio responses.
    input  wire [63:0] s_clio_tdata,
    input  wire [7:0]  s_clio_tkeep,
    input  wire        s_clio_tvalid,
    output wire        s_clio_tready,
    input  wire        s_clio_tlast,

    // To the MAC: Ethernet frames.
    output wire [63:0] m_eth_tdata,
    output wire [7:0]  m_eth_tkeep,
    output wire        m_eth_tvalid,
    input  wire        m_eth_tready,
    output wire        m_eth_tlast,
    output wire [DEST_WIDTH-1:0] m_eth_tdest,

    output wire        rx_drop,
    output wire        tx_drop
);

localparam ENTRIES = 1 << TABLE_BITS;

initial begin
    if (TABLE_BITS < 1 || TABLE_BITS > 12) begin
        $error("Error: TABLE_BITS must be in 1..12 (instance %m)");
        $finish;
    end
end

wire        learn_valid;
wire [31:0] learn_pid, learn_ipv4, lookup_pid;
wire [47:0] learn_mac;
wire [15:0] learn_port;
wire [DEST_WIDTH-1:0] learn_dest, arp_dest;
wire        arp_valid, arp_ready;
wire [47:0] arp_sha;
wire [31:0] arp_spa;

clio_udp_rx #(
    .DEST_WIDTH(DEST_WIDTH)
) rx_inst (
    .clk(clk), .rst(rst),
    .cfg_mac(cfg_mac), .cfg_ipv4(cfg_ipv4), .cfg_udp_port(cfg_udp_port),
    .s_axis_tdata(s_eth_tdata), .s_axis_tkeep(s_eth_tkeep), .s_axis_tvalid(s_eth_tvalid),
    .s_axis_tready(s_eth_tready), .s_axis_tlast(s_eth_tlast), .s_axis_tdest(s_eth_tdest),
    .m_axis_tdata(m_clio_tdata), .m_axis_tkeep(m_clio_tkeep), .m_axis_tvalid(m_clio_tvalid),
    .m_axis_tready(m_clio_tready), .m_axis_tlast(m_clio_tlast),
    .learn_valid(learn_valid), .learn_pid(learn_pid), .learn_mac(learn_mac),
    .learn_ipv4(learn_ipv4), .learn_port(learn_port), .learn_dest(learn_dest),
    .arp_valid(arp_valid), .arp_ready(arp_ready), .arp_sha(arp_sha), .arp_spa(arp_spa),
    .arp_dest(arp_dest),
    .drop(rx_drop)
);

// The client table (distributed RAM: one write port, one asynchronous read).
reg [31:0] tag_mem [0:ENTRIES-1];
reg [47:0] mac_mem [0:ENTRIES-1];
reg [31:0] ip_mem [0:ENTRIES-1];
reg [15:0] port_mem [0:ENTRIES-1];
reg [DEST_WIDTH-1:0] dest_mem [0:ENTRIES-1];
reg [ENTRIES-1:0] valid_reg = 0;

integer ti;
initial begin
    for (ti = 0; ti < ENTRIES; ti = ti + 1) begin
        tag_mem[ti] = 0;
        mac_mem[ti] = 0;
        ip_mem[ti] = 0;
        port_mem[ti] = 0;
        dest_mem[ti] = 0;
    end
end

wire [TABLE_BITS-1:0] w_idx = learn_pid[TABLE_BITS-1:0];
wire [TABLE_BITS-1:0] r_idx = lookup_pid[TABLE_BITS-1:0];

always @(posedge clk) begin
    if (learn_valid) begin
        tag_mem[w_idx] <= learn_pid;
        mac_mem[w_idx] <= learn_mac;
        ip_mem[w_idx] <= learn_ipv4;
        port_mem[w_idx] <= learn_port;
        dest_mem[w_idx] <= learn_dest;
        valid_reg[w_idx] <= 1'b1;
    end
    if (rst) begin
        valid_reg <= 0;
    end
end

wire lookup_hit = valid_reg[r_idx] && tag_mem[r_idx] == lookup_pid;

clio_udp_tx #(
    .DEST_WIDTH(DEST_WIDTH)
) tx_inst (
    .clk(clk), .rst(rst),
    .cfg_mac(cfg_mac), .cfg_ipv4(cfg_ipv4), .cfg_udp_port(cfg_udp_port),
    .s_axis_tdata(s_clio_tdata), .s_axis_tkeep(s_clio_tkeep), .s_axis_tvalid(s_clio_tvalid),
    .s_axis_tready(s_clio_tready), .s_axis_tlast(s_clio_tlast),
    .m_axis_tdata(m_eth_tdata), .m_axis_tkeep(m_eth_tkeep), .m_axis_tvalid(m_eth_tvalid),
    .m_axis_tready(m_eth_tready), .m_axis_tlast(m_eth_tlast), .m_axis_tdest(m_eth_tdest),
    .lookup_pid(lookup_pid), .lookup_hit(lookup_hit), .lookup_mac(mac_mem[r_idx]),
    .lookup_ipv4(ip_mem[r_idx]), .lookup_port(port_mem[r_idx]), .lookup_dest(dest_mem[r_idx]),
    .arp_valid(arp_valid), .arp_ready(arp_ready), .arp_sha(arp_sha), .arp_spa(arp_spa),
    .arp_dest(arp_dest),
    .drop(tx_drop)
);

endmodule

`resetall
