// edm_xdma_path: the card's PCIe packet path: ring memory, ring engine and register block behind the XDMA's two masters.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// XDMA AXI4 master (the host's _h2c_N / _c2h_N DMA) -> edm_ring_ram (on-chip,
// MEM_BYTES; card address = AXI address) <- word port -> edm_xdma_rings
// (H2C slots -> m_axis, s_axis -> C2H slots); XDMA AXI-Lite master (the
// host's _user BAR) -> edm_xdma_regs (map of host-sdk/wire/src/xdma.rs).
// The geometry parameters are what the register block publishes and what
// the ring engine uses, so the two always agree. `ready` and `link_up` are
// the STATUS bits (already in this clock domain).
module edm_xdma_path #(
    parameter SLOT_BYTES = 2048,
    parameter SLOT_COUNT = 64,
    parameter [63:0] H2C_BASE = 64'h0,
    parameter [63:0] C2H_BASE = 64'h20000,
    parameter MEM_BYTES = 262144,
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    parameter REG_ADDR_WIDTH = 16
) (
    input  wire                      clk,
    input  wire                      rst,

    input  wire [AXI_ID_WIDTH-1:0]   s_axi_awid,
    input  wire [AXI_ADDR_WIDTH-1:0] s_axi_awaddr,
    input  wire [7:0]                s_axi_awlen,
    input  wire [2:0]                s_axi_awsize,
    input  wire [1:0]                s_axi_awburst,
    input  wire                      s_axi_awvalid,
    output wire                      s_axi_awready,
    input  wire [511:0]              s_axi_wdata,
    input  wire [63:0]               s_axi_wstrb,
    input  wire                      s_axi_wlast,
    input  wire                      s_axi_wvalid,
    output wire                      s_axi_wready,
    output wire [AXI_ID_WIDTH-1:0]   s_axi_bid,
    output wire [1:0]                s_axi_bresp,
    output wire                      s_axi_bvalid,
    input  wire                      s_axi_bready,
    input  wire [AXI_ID_WIDTH-1:0]   s_axi_arid,
    input  wire [AXI_ADDR_WIDTH-1:0] s_axi_araddr,
    input  wire [7:0]                s_axi_arlen,
    input  wire [2:0]                s_axi_arsize,
    input  wire [1:0]                s_axi_arburst,
    input  wire                      s_axi_arvalid,
    output wire                      s_axi_arready,
    output wire [AXI_ID_WIDTH-1:0]   s_axi_rid,
    output wire [511:0]              s_axi_rdata,
    output wire [1:0]                s_axi_rresp,
    output wire                      s_axi_rlast,
    output wire                      s_axi_rvalid,
    input  wire                      s_axi_rready,

    input  wire [REG_ADDR_WIDTH-1:0] s_axil_awaddr,
    input  wire                      s_axil_awvalid,
    output wire                      s_axil_awready,
    input  wire [31:0]               s_axil_wdata,
    input  wire [3:0]                s_axil_wstrb,
    input  wire                      s_axil_wvalid,
    output wire                      s_axil_wready,
    output wire [1:0]                s_axil_bresp,
    output wire                      s_axil_bvalid,
    input  wire                      s_axil_bready,
    input  wire [REG_ADDR_WIDTH-1:0] s_axil_araddr,
    input  wire                      s_axil_arvalid,
    output wire                      s_axil_arready,
    output wire [31:0]               s_axil_rdata,
    output wire [1:0]                s_axil_rresp,
    output wire                      s_axil_rvalid,
    input  wire                      s_axil_rready,

    // H2C packets (from the host) and C2H packets (to the host).
    output wire [63:0]               m_axis_tdata,
    output wire [7:0]                m_axis_tkeep,
    output wire                      m_axis_tvalid,
    input  wire                      m_axis_tready,
    output wire                      m_axis_tlast,
    input  wire [63:0]               s_axis_tdata,
    input  wire [7:0]                s_axis_tkeep,
    input  wire                      s_axis_tvalid,
    output wire                      s_axis_tready,
    input  wire                      s_axis_tlast,

    input  wire                      ready,
    input  wire                      link_up,
    // The translator's counters (XLATE_* registers), in this clock domain.
    input  wire [31:0]               xlate_refused,
    input  wire [31:0]               xlate_timeouts,
    input  wire [31:0]               xlate_bad,
    output wire                      c2h_drop
);

localparam MEM_AW = $clog2(MEM_BYTES / 8);

wire              mem_en, mem_we;
wire [MEM_AW-1:0] mem_addr;
wire [63:0]       mem_wdata, mem_rdata;

edm_ring_ram #(
    .MEM_BYTES(MEM_BYTES),
    .ADDR_WIDTH(AXI_ADDR_WIDTH),
    .ID_WIDTH(AXI_ID_WIDTH)
) ring_ram_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_awid(s_axi_awid),
    .s_axi_awaddr(s_axi_awaddr),
    .s_axi_awlen(s_axi_awlen),
    .s_axi_awsize(s_axi_awsize),
    .s_axi_awburst(s_axi_awburst),
    .s_axi_awvalid(s_axi_awvalid),
    .s_axi_awready(s_axi_awready),
    .s_axi_wdata(s_axi_wdata),
    .s_axi_wstrb(s_axi_wstrb),
    .s_axi_wlast(s_axi_wlast),
    .s_axi_wvalid(s_axi_wvalid),
    .s_axi_wready(s_axi_wready),
    .s_axi_bid(s_axi_bid),
    .s_axi_bresp(s_axi_bresp),
    .s_axi_bvalid(s_axi_bvalid),
    .s_axi_bready(s_axi_bready),
    .s_axi_arid(s_axi_arid),
    .s_axi_araddr(s_axi_araddr),
    .s_axi_arlen(s_axi_arlen),
    .s_axi_arsize(s_axi_arsize),
    .s_axi_arburst(s_axi_arburst),
    .s_axi_arvalid(s_axi_arvalid),
    .s_axi_arready(s_axi_arready),
    .s_axi_rid(s_axi_rid),
    .s_axi_rdata(s_axi_rdata),
    .s_axi_rresp(s_axi_rresp),
    .s_axi_rlast(s_axi_rlast),
    .s_axi_rvalid(s_axi_rvalid),
    .s_axi_rready(s_axi_rready),
    .mem_en(mem_en),
    .mem_we(mem_we),
    .mem_addr(mem_addr),
    .mem_wdata(mem_wdata),
    .mem_rdata(mem_rdata)
);

wire [31:0] h2c_head, h2c_tail, c2h_head, c2h_tail, err_add;

edm_xdma_rings #(
    .SLOT_BYTES(SLOT_BYTES),
    .SLOT_COUNT(SLOT_COUNT),
    .H2C_BASE(H2C_BASE),
    .C2H_BASE(C2H_BASE),
    .MEM_AW(MEM_AW)
) rings_inst (
    .clk(clk),
    .rst(rst),
    .h2c_head(h2c_head),
    .c2h_tail(c2h_tail),
    .h2c_tail(h2c_tail),
    .c2h_head(c2h_head),
    .err_add(err_add),
    .c2h_drop(c2h_drop),
    .mem_en(mem_en),
    .mem_we(mem_we),
    .mem_addr(mem_addr),
    .mem_wdata(mem_wdata),
    .mem_rdata(mem_rdata),
    .m_axis_tdata(m_axis_tdata),
    .m_axis_tkeep(m_axis_tkeep),
    .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready),
    .m_axis_tlast(m_axis_tlast),
    .s_axis_tdata(s_axis_tdata),
    .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready),
    .s_axis_tlast(s_axis_tlast)
);

edm_xdma_regs #(
    .ADDR_WIDTH(REG_ADDR_WIDTH),
    .SLOT_BYTES(SLOT_BYTES),
    .SLOT_COUNT(SLOT_COUNT),
    .H2C_BASE(H2C_BASE),
    .C2H_BASE(C2H_BASE)
) regs_inst (
    .clk(clk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .h2c_head(h2c_head),
    .c2h_tail(c2h_tail),
    .h2c_tail(h2c_tail),
    .c2h_head(c2h_head),
    .ready(ready),
    .link_up(link_up),
    .err_add(err_add),
    .xlate_refused(xlate_refused),
    .xlate_timeouts(xlate_timeouts),
    .xlate_bad(xlate_bad)
);

endmodule

`resetall
