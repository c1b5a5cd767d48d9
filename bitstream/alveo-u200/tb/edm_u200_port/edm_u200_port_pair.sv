// edm_u200_port_pair: bench top of two edm_u200_port instances whose gearboxes the cocotb bench joins.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Port A's RX runs on B's TX clock and the other way round, as on a real
// link (the receiver's clock is recovered from the sender's). The bench
// moves the bits between the gearbox ports, cutting them at a bit offset it
// chooses and moving it on every slip.
module edm_u200_port_pair #(
    parameter SLIP_WAIT = 8
) (
    input  wire        a_clk,
    input  wire        a_rst_tx,
    input  wire        a_rst_rx,
    input  wire        b_clk,
    input  wire        b_rst_tx,
    input  wire        b_rst_rx,

    output wire [63:0] a_gt_tx_data,
    output wire [1:0]  a_gt_tx_hdr,
    input  wire [63:0] a_gt_rx_data,
    input  wire [1:0]  a_gt_rx_hdr,
    input  wire        a_gt_rx_valid,
    output wire        a_gt_rx_slip,
    output wire        a_link_up,
    output wire [63:0] b_gt_tx_data,
    output wire [1:0]  b_gt_tx_hdr,
    input  wire [63:0] b_gt_rx_data,
    input  wire [1:0]  b_gt_rx_hdr,
    input  wire        b_gt_rx_valid,
    output wire        b_gt_rx_slip,
    output wire        b_link_up,

    input  wire        a_req_valid,
    output wire        a_req_ready,
    input  wire        a_req_write,
    input  wire [15:0] a_req_dst,
    input  wire [63:0] a_req_addr,
    input  wire [15:0] a_req_len,
    input  wire [31:0] a_req_local,
    input  wire [15:0] a_req_tag,
    input  wire        a_req_rmw,
    input  wire [3:0]  a_req_op,
    input  wire [63:0] a_req_opa,
    input  wire [63:0] a_req_opb,
    output wire        a_rcomp_valid,
    output wire [15:0] a_rcomp_tag,
    output wire        a_rcomp_ok,
    output wire [63:0] a_rcomp_data,
    input  wire        a_ext_en,
    input  wire        a_ext_we,
    input  wire [8:0]  a_ext_addr,
    input  wire [63:0] a_ext_wdata,
    output wire [63:0] a_ext_rdata,
    input  wire        b_ext_en,
    input  wire        b_ext_we,
    input  wire [8:0]  b_ext_addr,
    input  wire [63:0] b_ext_wdata,
    output wire [63:0] b_ext_rdata
);

/* verilator lint_off PINCONNECTEMPTY */
edm_u200_port #(
    .SLIP_WAIT(SLIP_WAIT)
) a_inst (
    .tx_clk(a_clk),
    .tx_rst(a_rst_tx),
    .rx_clk(b_clk),
    .rx_rst(a_rst_rx),
    .node_id(16'd1),
    .gt_tx_data(a_gt_tx_data),
    .gt_tx_hdr(a_gt_tx_hdr),
    .gt_rx_data(a_gt_rx_data),
    .gt_rx_hdr(a_gt_rx_hdr),
    .gt_rx_valid(a_gt_rx_valid),
    .gt_rx_slip(a_gt_rx_slip),
    .link_up(a_link_up),
    .req_valid(a_req_valid),
    .req_ready(a_req_ready),
    .req_write(a_req_write),
    .req_dst(a_req_dst),
    .req_addr(a_req_addr),
    .req_len(a_req_len),
    .req_local(a_req_local),
    .req_tag(a_req_tag),
    .req_rmw(a_req_rmw),
    .req_op(a_req_op),
    .req_opa(a_req_opa),
    .req_opb(a_req_opb),
    .wcomp_valid(),
    .wcomp_tag(),
    .rcomp_valid(a_rcomp_valid),
    .rcomp_tag(a_rcomp_tag),
    .rcomp_ok(a_rcomp_ok),
    .rcomp_data(a_rcomp_data),
    .wapp_valid(),
    .wapp_addr(),
    .wapp_words(),
    .wapp_peer(),
    .wapp_last(),
    .ext_en(a_ext_en),
    .ext_we(a_ext_we),
    .ext_addr(a_ext_addr),
    .ext_wdata(a_ext_wdata),
    .ext_rdata(a_ext_rdata)
);

edm_u200_port #(
    .SLIP_WAIT(SLIP_WAIT)
) b_inst (
    .tx_clk(b_clk),
    .tx_rst(b_rst_tx),
    .rx_clk(a_clk),
    .rx_rst(b_rst_rx),
    .node_id(16'd2),
    .gt_tx_data(b_gt_tx_data),
    .gt_tx_hdr(b_gt_tx_hdr),
    .gt_rx_data(b_gt_rx_data),
    .gt_rx_hdr(b_gt_rx_hdr),
    .gt_rx_valid(b_gt_rx_valid),
    .gt_rx_slip(b_gt_rx_slip),
    .link_up(b_link_up),
    .req_valid(1'b0),
    .req_ready(),
    .req_write(1'b0),
    .req_dst(16'd0),
    .req_addr(64'd0),
    .req_len(16'd0),
    .req_local(32'd0),
    .req_tag(16'd0),
    .req_rmw(1'b0),
    .req_op(4'd0),
    .req_opa(64'd0),
    .req_opb(64'd0),
    .wcomp_valid(),
    .wcomp_tag(),
    .rcomp_valid(),
    .rcomp_tag(),
    .rcomp_ok(),
    .rcomp_data(),
    .wapp_valid(),
    .wapp_addr(),
    .wapp_words(),
    .wapp_peer(),
    .wapp_last(),
    .ext_en(b_ext_en),
    .ext_we(b_ext_we),
    .ext_addr(b_ext_addr),
    .ext_wdata(b_ext_wdata),
    .ext_rdata(b_ext_rdata)
);
/* verilator lint_on PINCONNECTEMPTY */

endmodule

`resetall
