// edm_rx_classify: EDM RX block classification (1 cycle), between descrambler and decoder.
//
// Splits the received 66-bit block stream into memory blocks (/MS/ /MD/ /MT/ /MST/ /N/ /G/,
// with /MD/ recognised as a data block inside a memory message) and frame-side blocks, and
// counts bad input: unknown control block types, memory messages cut short, stray /MT/,
// and invalid sync headers. Frame-side blocks go on to the reassembly buffer.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_rx_classify #(
    parameter CNT_W = 32
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [63:0]       in_data,
    input  wire [1:0]        in_hdr,
    input  wire              in_valid,

    // memory side: class 1 = /MS/, 2 = /MD/, 3 = /MT/, 4 = /MST/, 5 = /N/, 6 = /G/
    output reg  [63:0]       mem_data,
    output reg  [1:0]        mem_hdr,
    output reg  [2:0]        mem_class,
    output reg               mem_valid,

    // frame side (unknown types and bad sync become an error block)
    output reg  [63:0]       frm_data,
    output reg  [1:0]        frm_hdr,
    output reg               frm_valid,

    // high one cycle after every in_valid (the cycle the outputs above belong to)
    output reg               out_valid,

    output reg  [CNT_W-1:0]  cnt_unknown,
    output reg  [CNT_W-1:0]  cnt_truncated,
    output reg  [CNT_W-1:0]  cnt_stray,
    output reg  [CNT_W-1:0]  cnt_bad_sync
);

import edm_pkg::*;

localparam [63:0] ERROR_BLOCK = {{8{7'h1e}}, 8'h1e};

initial begin
    if (CNT_W < 1) begin
        $error("CNT_W must be positive");
        $finish;
    end
end

reg in_msg_reg;

wire [7:0] bt = in_data[7:0];
wire is_ctrl = in_hdr == SYNC_CTRL;
wire is_data = in_hdr == SYNC_DATA;
wire std_type = bt == BT_IDLE || bt == BT_CTRL_OS4 || bt == BT_CTRL_START4 || bt == BT_OS0_START4 ||
        bt == BT_OS0_OS4 || bt == BT_START0 || bt == BT_OS0_CTRL || bt == BT_TERM0 || bt == BT_TERM1 ||
        bt == BT_TERM2 || bt == BT_TERM3 || bt == BT_TERM4 || bt == BT_TERM5 || bt == BT_TERM6 ||
        bt == BT_TERM7;

always_ff @(posedge clk) begin
    mem_valid <= 1'b0;
    frm_valid <= 1'b0;
    out_valid <= in_valid;
    if (in_valid) begin
        mem_data <= in_data;
        mem_hdr <= in_hdr;
        frm_data <= in_data;
        frm_hdr <= in_hdr;
        if (in_msg_reg && is_data) begin
            mem_class <= 3'd2;
            mem_valid <= 1'b1;
        end else if (in_msg_reg && is_ctrl && bt == BT_MT) begin
            mem_class <= 3'd3;
            mem_valid <= 1'b1;
            in_msg_reg <= 1'b0;
        end else begin
            if (in_msg_reg) begin
                cnt_truncated <= cnt_truncated + 1;
                in_msg_reg <= 1'b0;
            end
            if (is_data) begin
                frm_valid <= 1'b1;
            end else if (!is_ctrl) begin
                cnt_bad_sync <= cnt_bad_sync + 1;
                frm_data <= ERROR_BLOCK;
                frm_hdr <= SYNC_CTRL;
                frm_valid <= 1'b1;
            end else if (bt == BT_MS) begin
                mem_class <= 3'd1;
                mem_valid <= 1'b1;
                in_msg_reg <= 1'b1;
            end else if (bt == BT_MST) begin
                mem_class <= 3'd4;
                mem_valid <= 1'b1;
            end else if (bt == BT_N) begin
                mem_class <= 3'd5;
                mem_valid <= 1'b1;
            end else if (bt == BT_G) begin
                mem_class <= 3'd6;
                mem_valid <= 1'b1;
            end else if (bt == BT_MT) begin
                cnt_stray <= cnt_stray + 1;
            end else if (std_type) begin
                frm_valid <= 1'b1;
            end else begin
                cnt_unknown <= cnt_unknown + 1;
                frm_data <= ERROR_BLOCK;
                frm_valid <= 1'b1;
            end
        end
    end

    if (rst) begin
        in_msg_reg <= 1'b0;
        out_valid <= 1'b0;
        mem_valid <= 1'b0;
        frm_valid <= 1'b0;
        cnt_unknown <= 0;
        cnt_truncated <= 0;
        cnt_stray <= 0;
        cnt_bad_sync <= 0;
    end
end

endmodule

`resetall
