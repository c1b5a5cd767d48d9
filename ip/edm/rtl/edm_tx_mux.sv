// edm_tx_mux: EDM TX shim between the 64b/66b encoder and the scrambler.
//
// Merges memory units (a whole memory message, or one /N/ or /G/ block, sent contiguously)
// into the encoder's block stream: encoder idle blocks (the IFG) are replaced by memory
// blocks, and frame blocks are preempted at block granularity (EDM §3.2.3). The encoder
// side has a 4-block buffer whose fullness is the back-pressure towards the MAC.
// FAIR = 1: in contested cycles memory and frames get equal block shares (a unit is never
// split); FAIR = 0: memory always wins. Output registered, one block every cycle.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_tx_mux #(
    parameter FAIR = 1,
    parameter LEN_W = 16
) (
    input  wire              clk,
    input  wire              rst,

    // encoder side
    input  wire [63:0]       enc_data,
    input  wire [1:0]        enc_hdr,
    input  wire              enc_valid,
    output wire              enc_ready,

    // memory side: blocks of the head unit; mem_len (blocks in the unit) is valid with its first block
    input  wire [63:0]       mem_data,
    input  wire [1:0]        mem_hdr,
    input  wire              mem_valid,
    input  wire              mem_last,
    input  wire [LEN_W-1:0]  mem_len,
    output reg               mem_ready,

    // to the scrambler; src: 0 = idle inserted, 1 = encoder, 2 = memory
    output reg  [63:0]       out_data,
    output reg  [1:0]        out_hdr,
    output reg  [1:0]        out_src,

    output reg  [31:0]       cnt_idles_reused,
    output reg  [31:0]       cnt_preempted
);

import edm_pkg::*;

localparam [63:0] IDLE_DATA = {56'd0, BT_IDLE};

initial begin
    if (LEN_W < 1 || LEN_W > 31) begin
        $error("LEN_W must be in 1..31");
        $finish;
    end
end

reg [65:0] fifo [0:3];
reg [2:0]  count_reg;
reg        in_mem_reg;
reg signed [31:0] credit_reg;

assign enc_ready = count_reg < 3'd4;

wire push = enc_valid && enc_ready;
wire [2:0] len_eff = count_reg + {2'd0, push};
wire [65:0] head = (count_reg == 0) ? {enc_hdr, enc_data} : fifo[0];
wire head_idle = head[65:64] == SYNC_CTRL && head[7:0] == BT_IDLE;
wire enc_frame = len_eff != 0 && !head_idle;

reg        pop;
reg        take_mem;
reg        in_mem_next;
reg signed [31:0] credit_next;

always_comb begin
    pop = 1'b0;
    take_mem = 1'b0;
    in_mem_next = in_mem_reg;
    credit_next = credit_reg;
    mem_ready = 1'b0;
    if (in_mem_reg) begin
        take_mem = 1'b1;
        mem_ready = 1'b1;
        in_mem_next = !mem_last;
    end else begin
        if (mem_valid && (!enc_frame || FAIR == 0 || credit_reg <= 0)) begin
            take_mem = 1'b1;
            mem_ready = 1'b1;
            in_mem_next = !mem_last;
            if (!enc_frame && len_eff != 0) begin
                pop = 1'b1;
            end
            if (enc_frame) begin
                credit_next = credit_reg + {{(32-LEN_W){1'b0}}, mem_len};
            end
        end else begin
            if (mem_valid && enc_frame) begin
                credit_next = credit_reg - 1;
            end else begin
                credit_next = 0;
            end
            pop = len_eff != 0;
        end
    end
end

always_ff @(posedge clk) begin
    if (take_mem) begin
        out_data <= mem_data;
        out_hdr <= mem_hdr;
        out_src <= 2'd2;
    end else if (pop) begin
        out_data <= head[63:0];
        out_hdr <= head[65:64];
        out_src <= 2'd1;
    end else begin
        out_data <= IDLE_DATA;
        out_hdr <= SYNC_CTRL;
        out_src <= 2'd0;
    end
    if (!in_mem_reg && take_mem) begin
        if (enc_frame) begin
            cnt_preempted <= cnt_preempted + 1;
        end else if (len_eff != 0) begin
            cnt_idles_reused <= cnt_idles_reused + 1;
        end
    end

    // buffer: shift out the head on pop, append the pushed block
    if (pop) begin
        fifo[0] <= fifo[1];
        fifo[1] <= fifo[2];
        fifo[2] <= fifo[3];
        if (push && count_reg != 0) begin
            fifo[count_reg - 1] <= {enc_hdr, enc_data};
        end
    end else if (push) begin
        fifo[count_reg[1:0]] <= {enc_hdr, enc_data};
    end
    count_reg <= len_eff - {2'd0, pop};
    in_mem_reg <= in_mem_next;
    credit_reg <= credit_next;

    if (rst) begin
        count_reg <= 0;
        in_mem_reg <= 1'b0;
        credit_reg <= 0;
        cnt_idles_reused <= 0;
        cnt_preempted <= 0;
        out_data <= IDLE_DATA;
        out_hdr <= SYNC_CTRL;
        out_src <= 2'd0;
    end
end

endmodule

`resetall
