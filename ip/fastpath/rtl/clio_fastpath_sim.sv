// clio_fastpath_sim: simulation top: clio_fastpath_top on the behavioural DDR model clio_axi_ram.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Not for synthesis: the memory is a plain array the harness loads and dumps
// (public to Verilator as ram_inst.mem).
module clio_fastpath_sim #(
    parameter ADDR_WIDTH = 32,
    parameter PKT_BEATS = 24,
    parameter TLB_ENTRIES = 64,
    parameter BUCKET_BITS = 16,
    parameter SLOTS = 16,
    parameter NUM_SIZES = 3,
    parameter [NUM_SIZES*8-1:0] FIFO_SHIFTS = {8'd12, 8'd21, 8'd22},
    parameter FIFO_DEPTH = 32,
    parameter DEDUP_ENTRIES = 64,
    parameter FWD_SLOTS = 64,
    parameter FENCE_SLOTS = 16,
    parameter SESSIONS = 1024,
    parameter RAM_WORDS = 65536,
    parameter RAM_READ_LATENCY = 4,
    parameter STREAMS = 4,
    // OFFLOAD_CALL pass-through to the slow path (0: off, UNSUPPORTED).
    parameter OFFLOAD_TAGS = 0,
    parameter OFFLOAD_RESP_BYTES = 65536
) (
    input  wire         clk,
    input  wire         rst,

    input  wire [63:0]  cfg_table_base,
    input  wire [63:0]  cfg_rx_base,
    input  wire [31:0]  cfg_rx_slots,
    input  wire [63:0]  cfg_tx_base,
    input  wire [31:0]  cfg_tx_slots,
    input  wire [63:0]  cfg_data_start,
    input  wire [63:0]  cfg_data_end,
    input  wire [5:0]   cfg_va_bits,
    input  wire [31:0]  cfg_class_shift,
    input  wire [31:0]  cfg_max_pid,
    input  wire [15:0]  cfg_mtu,
    input  wire [511:0] cfg_info,
    input  wire         cfg_streams_on,

    input  wire         poll,
    output wire         poll_done,
    output wire         idle,

    input  wire [511:0] s_axis_tdata,
    input  wire [63:0]  s_axis_tkeep,
    input  wire         s_axis_tvalid,
    output wire         s_axis_tready,
    input  wire         s_axis_tlast,

    output wire [511:0] m_axis_tdata,
    output wire [63:0]  m_axis_tkeep,
    output wire         m_axis_tvalid,
    input  wire         m_axis_tready,
    output wire         m_axis_tlast
);

wire [3:0]            awid, bid, arid, rid;
wire [ADDR_WIDTH-1:0] awaddr, araddr;
wire [7:0]            awlen, arlen;
wire [2:0]            awsize, arsize;
wire [1:0]            awburst, arburst, bresp, rresp;
wire                  awvalid, awready, wlast, wvalid, wready, bvalid, bready;
wire                  arvalid, arready, rlast, rvalid, rready;
wire [511:0]          wdata, rdata;
wire [63:0]           wstrb;

clio_fastpath_top #(
    .ADDR_WIDTH(ADDR_WIDTH), .PKT_BEATS(PKT_BEATS), .TLB_ENTRIES(TLB_ENTRIES),
    .BUCKET_BITS(BUCKET_BITS), .SLOTS(SLOTS), .NUM_SIZES(NUM_SIZES), .FIFO_SHIFTS(FIFO_SHIFTS),
    .FIFO_DEPTH(FIFO_DEPTH), .DEDUP_ENTRIES(DEDUP_ENTRIES),
    .FWD_SLOTS(FWD_SLOTS), .FENCE_SLOTS(FENCE_SLOTS), .SESSIONS(SESSIONS), .STREAMS(STREAMS),
    .OFFLOAD_TAGS(OFFLOAD_TAGS), .OFFLOAD_RESP_BYTES(OFFLOAD_RESP_BYTES)
) top_inst (
    .clk(clk), .rst(rst),
    .cfg_table_base(cfg_table_base), .cfg_rx_base(cfg_rx_base), .cfg_rx_slots(cfg_rx_slots),
    .cfg_tx_base(cfg_tx_base), .cfg_tx_slots(cfg_tx_slots), .cfg_data_start(cfg_data_start),
    .cfg_data_end(cfg_data_end), .cfg_va_bits(cfg_va_bits), .cfg_class_shift(cfg_class_shift),
    .cfg_max_pid(cfg_max_pid), .cfg_mtu(cfg_mtu), .cfg_info(cfg_info),
    .cfg_streams_on(cfg_streams_on), .poll(poll), .poll_done(poll_done), .idle(idle),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tlast(s_axis_tlast),
    .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready), .m_axis_tlast(m_axis_tlast),
    .m_axi_awid(awid), .m_axi_awaddr(awaddr), .m_axi_awlen(awlen), .m_axi_awsize(awsize),
    .m_axi_awburst(awburst), .m_axi_awvalid(awvalid), .m_axi_awready(awready),
    .m_axi_wdata(wdata), .m_axi_wstrb(wstrb), .m_axi_wlast(wlast), .m_axi_wvalid(wvalid),
    .m_axi_wready(wready), .m_axi_bid(bid), .m_axi_bresp(bresp), .m_axi_bvalid(bvalid),
    .m_axi_bready(bready), .m_axi_arid(arid), .m_axi_araddr(araddr), .m_axi_arlen(arlen),
    .m_axi_arsize(arsize), .m_axi_arburst(arburst), .m_axi_arvalid(arvalid), .m_axi_arready(arready),
    .m_axi_rid(rid), .m_axi_rdata(rdata), .m_axi_rresp(rresp), .m_axi_rlast(rlast),
    .m_axi_rvalid(rvalid), .m_axi_rready(rready)
);

clio_axi_ram #(
    .DATA_WIDTH(512), .ADDR_WIDTH(ADDR_WIDTH), .ID_WIDTH(4), .WORDS(RAM_WORDS),
    .READ_LATENCY(RAM_READ_LATENCY)
) ram_inst (
    .clk(clk), .rst(rst),
    .s_axi_awid(awid), .s_axi_awaddr(awaddr), .s_axi_awlen(awlen), .s_axi_awsize(awsize),
    .s_axi_awburst(awburst), .s_axi_awvalid(awvalid), .s_axi_awready(awready),
    .s_axi_wdata(wdata), .s_axi_wstrb(wstrb), .s_axi_wlast(wlast), .s_axi_wvalid(wvalid),
    .s_axi_wready(wready), .s_axi_bid(bid), .s_axi_bresp(bresp), .s_axi_bvalid(bvalid),
    .s_axi_bready(bready), .s_axi_arid(arid), .s_axi_araddr(araddr), .s_axi_arlen(arlen),
    .s_axi_arsize(arsize), .s_axi_arburst(arburst), .s_axi_arvalid(arvalid), .s_axi_arready(arready),
    .s_axi_rid(rid), .s_axi_rdata(rdata), .s_axi_rresp(rresp), .s_axi_rlast(rlast),
    .s_axi_rvalid(rvalid), .s_axi_rready(rready)
);

endmodule

`resetall
