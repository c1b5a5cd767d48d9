// edm_phy_shim: the EDM part of one PCS: TX (encoder + memory units -> edm_tx_mux ->
// scrambler) and RX (descrambler -> edm_link_monitor -> edm_rx_demux -> decoder + memory
// blocks). Standard frames pass through unchanged; memory blocks ride in the IFG and
// preempt frames at block granularity.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_phy_shim #(
    parameter FAIR = 1,
    parameter RX_DEPTH = 2048,
    parameter WINDOW = 48828,
    parameter THRESHOLD = 16
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [63:0] enc_data,
    input  wire [1:0]  enc_hdr,
    input  wire        enc_valid,
    output wire        enc_ready,

    input  wire [63:0] txm_data,
    input  wire [1:0]  txm_hdr,
    input  wire        txm_valid,
    input  wire        txm_last,
    input  wire [15:0] txm_len,
    output wire        txm_ready,

    output wire [63:0] line_tx_data,
    output wire [1:0]  line_tx_hdr,
    output wire        line_tx_valid,
    // what the TX shim sent one cycle before line_tx: 0 idle, 1 encoder, 2 memory
    output wire [1:0]  tx_src,

    input  wire [63:0] line_rx_data,
    input  wire [1:0]  line_rx_hdr,
    input  wire        line_rx_valid,

    output wire [63:0] dec_data,
    output wire [1:0]  dec_hdr,
    output wire        dec_valid,

    output wire [63:0] rxm_data,
    output wire [1:0]  rxm_hdr,
    output wire [2:0]  rxm_class,
    output wire        rxm_valid,

    output wire        link_down,
    output wire [31:0] cnt_unknown,
    output wire [31:0] cnt_truncated,
    output wire [31:0] cnt_stray,
    output wire [31:0] cnt_bad_sync
);

wire [63:0] mux_data;
wire [1:0]  mux_hdr;
wire [1:0]  mux_src;
assign tx_src = mux_src;
reg         mux_valid_reg;

always_ff @(posedge clk) begin
    mux_valid_reg <= !rst;
end

/* verilator lint_off PINCONNECTEMPTY */
edm_tx_mux #(
    .FAIR(FAIR)
) edm_tx_mux_inst (
    .clk(clk),
    .rst(rst),
    .enc_data(enc_data),
    .enc_hdr(enc_hdr),
    .enc_valid(enc_valid),
    .enc_ready(enc_ready),
    .mem_data(txm_data),
    .mem_hdr(txm_hdr),
    .mem_valid(txm_valid),
    .mem_last(txm_last),
    .mem_len(txm_len),
    .mem_ready(txm_ready),
    .out_data(mux_data),
    .out_hdr(mux_hdr),
    .out_src(mux_src),
    .cnt_idles_reused(),
    .cnt_preempted()
);
/* verilator lint_on PINCONNECTEMPTY */

edm_scrambler #(
    .DESCRAMBLE(0)
) edm_scrambler_inst (
    .clk(clk),
    .rst(rst),
    .in_data(mux_data),
    .in_hdr(mux_hdr),
    .in_valid(mux_valid_reg),
    .out_data(line_tx_data),
    .out_hdr(line_tx_hdr),
    .out_valid(line_tx_valid)
);

wire [63:0] des_data;
wire [1:0]  des_hdr;
wire        des_valid;

edm_scrambler #(
    .DESCRAMBLE(1)
) edm_descrambler_inst (
    .clk(clk),
    .rst(rst),
    .in_data(line_rx_data),
    .in_hdr(line_rx_hdr),
    .in_valid(line_rx_valid),
    .out_data(des_data),
    .out_hdr(des_hdr),
    .out_valid(des_valid)
);

wire [63:0] mon_data;
wire [1:0]  mon_hdr;
wire        mon_valid;

edm_link_monitor #(
    .WINDOW(WINDOW),
    .THRESHOLD(THRESHOLD)
) edm_link_monitor_inst (
    .clk(clk),
    .rst(rst),
    .in_data(des_data),
    .in_hdr(des_hdr),
    .in_valid(des_valid),
    .out_data(mon_data),
    .out_hdr(mon_hdr),
    .out_valid(mon_valid),
    .link_down(link_down)
);

/* verilator lint_off PINCONNECTEMPTY */
edm_rx_demux #(
    .DEPTH(RX_DEPTH)
) edm_rx_demux_inst (
    .clk(clk),
    .rst(rst),
    .in_data(mon_data),
    .in_hdr(mon_hdr),
    .in_valid(mon_valid),
    .mem_data(rxm_data),
    .mem_hdr(rxm_hdr),
    .mem_class(rxm_class),
    .mem_valid(rxm_valid),
    .dec_data(dec_data),
    .dec_hdr(dec_hdr),
    .dec_valid(dec_valid),
    .cnt_unknown(cnt_unknown),
    .cnt_truncated(cnt_truncated),
    .cnt_stray(cnt_stray),
    .cnt_bad_sync(cnt_bad_sync),
    .cnt_frames(),
    .cnt_overflow()
);
/* verilator lint_on PINCONNECTEMPTY */

endmodule

`resetall
