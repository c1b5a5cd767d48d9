// edm_rx_demux: EDM RX shim between the descrambler and the 64b/66b decoder.
//
// edm_rx_classify pulls the memory blocks out of the stream; this module holds the blocks
// of each non-memory frame until its terminate has arrived and then releases the frame in
// consecutive cycles (EDM §3.2.3), so the decoder and MAC see standard frames even when
// memory blocks preempted them on the wire. Outside frames, the cycles memory blocks
// occupied become idle blocks; surplus idles behind held frames are dropped (one idle is
// kept between frames), which bounds the buffer. Latency: 2 cycles plus the hold time.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_rx_demux #(
    parameter DEPTH = 2048,
    parameter CNT_W = 32
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [63:0]       in_data,
    input  wire [1:0]        in_hdr,
    input  wire              in_valid,

    output wire [63:0]       mem_data,
    output wire [1:0]        mem_hdr,
    output wire [2:0]        mem_class,
    output wire              mem_valid,

    // decoder side: one block per received block
    output reg  [63:0]       dec_data,
    output reg  [1:0]        dec_hdr,
    output reg               dec_valid,

    output wire [CNT_W-1:0]  cnt_unknown,
    output wire [CNT_W-1:0]  cnt_truncated,
    output wire [CNT_W-1:0]  cnt_stray,
    output wire [CNT_W-1:0]  cnt_bad_sync,
    output reg  [CNT_W-1:0]  cnt_frames,
    output reg  [CNT_W-1:0]  cnt_overflow
);

import edm_pkg::*;

localparam AW = $clog2(DEPTH);
localparam [63:0] IDLE_DATA = {56'd0, BT_IDLE};

initial begin
    if (DEPTH < 4 || (1 << AW) != DEPTH) begin
        $error("DEPTH must be a power of two >= 4");
        $finish;
    end
end

wire [63:0] frm_data;
wire [1:0]  frm_hdr;
wire        frm_valid;
wire        cyc_valid;

edm_rx_classify #(
    .CNT_W(CNT_W)
) edm_rx_classify_inst (
    .clk(clk),
    .rst(rst),
    .in_data(in_data),
    .in_hdr(in_hdr),
    .in_valid(in_valid),
    .mem_data(mem_data),
    .mem_hdr(mem_hdr),
    .mem_class(mem_class),
    .mem_valid(mem_valid),
    .frm_data(frm_data),
    .frm_hdr(frm_hdr),
    .frm_valid(frm_valid),
    .out_valid(cyc_valid),
    .cnt_unknown(cnt_unknown),
    .cnt_truncated(cnt_truncated),
    .cnt_stray(cnt_stray),
    .cnt_bad_sync(cnt_bad_sync)
);

// buffer entries: {end flag, hdr, data}
reg [65:0]  buf_mem [0:DEPTH-1];
reg         buf_end [0:DEPTH-1];
reg [AW:0]  wr_ptr_reg;
reg [AW:0]  rd_ptr_reg;
reg         in_frame_reg;
reg         streaming_reg;
reg         last_idle_reg;
reg [AW:0]  complete_reg;

wire [7:0] fbt = frm_data[7:0];
wire f_ctrl = frm_hdr == SYNC_CTRL;
wire f_start = f_ctrl && (fbt == BT_START0 || fbt == BT_CTRL_START4 || fbt == BT_OS0_START4);
wire f_data = frm_hdr == SYNC_DATA;
wire f_idle = f_ctrl && fbt == BT_IDLE;

wire [AW:0] count = wr_ptr_reg - rd_ptr_reg;
wire empty = count == 0;

// push decision (the model's push_ip)
reg         push;
reg         push_end;
reg         close_last;
reg         in_frame_next;
reg         last_idle_next;
reg [AW:0]  complete_push;

always_comb begin
    push = 1'b0;
    push_end = 1'b0;
    close_last = 1'b0;
    in_frame_next = in_frame_reg;
    last_idle_next = last_idle_reg;
    complete_push = complete_reg;
    if (cyc_valid && frm_valid) begin
        if (f_start) begin
            if (in_frame_reg && !empty) begin
                close_last = 1'b1;
                complete_push = complete_push + 1;
            end
            in_frame_next = 1'b1;
            push = 1'b1;
            last_idle_next = 1'b0;
        end else if (f_data) begin
            push = 1'b1;
            last_idle_next = 1'b0;
        end else if (in_frame_reg) begin
            in_frame_next = 1'b0;
            complete_push = complete_push + 1;
            push = 1'b1;
            push_end = 1'b1;
            last_idle_next = 1'b0;
        end else if (f_idle && !empty && last_idle_reg) begin
            push = 1'b0;
        end else begin
            push = 1'b1;
            last_idle_next = f_idle;
        end
    end
end

// the front after this cycle's push (bypass when the buffer was empty)
wire [65:0] front = empty ? {frm_hdr, frm_data} : buf_mem[rd_ptr_reg[AW-1:0]];
wire front_end = empty ? push_end : (buf_end[rd_ptr_reg[AW-1:0]] || (close_last && count == 1));
wire front_valid = !empty || push;
wire front_start = front[65:64] == SYNC_CTRL &&
        (front[7:0] == BT_START0 || front[7:0] == BT_CTRL_START4 || front[7:0] == BT_OS0_START4);

// pop decision (the model's pop_out)
reg        pop;
reg        streaming_next;
reg [AW:0] complete_next;
reg        frame_done;

always_comb begin
    pop = 1'b0;
    streaming_next = streaming_reg;
    complete_next = complete_push;
    frame_done = 1'b0;
    if (cyc_valid) begin
        if (streaming_reg) begin
            pop = 1'b1;
            if (front_end) begin
                streaming_next = 1'b0;
                complete_next = complete_push - 1;
                frame_done = 1'b1;
            end
        end else if (front_valid && front_start) begin
            if (complete_push != 0) begin
                pop = 1'b1;
                if (front_end) begin
                    complete_next = complete_push - 1;
                    frame_done = 1'b1;
                end else begin
                    streaming_next = 1'b1;
                end
            end
        end else if (front_valid) begin
            pop = 1'b1;
            if (front_end) begin
                complete_next = complete_push - 1;
            end
        end
    end
end

wire full = count == DEPTH;

always_ff @(posedge clk) begin
    dec_valid <= cyc_valid;
    if (cyc_valid) begin
        if (pop) begin
            dec_hdr <= front[65:64];
            dec_data <= front[63:0];
        end else begin
            dec_hdr <= SYNC_CTRL;
            dec_data <= IDLE_DATA;
        end
    end
    if (close_last) begin
        buf_end[wr_ptr_reg[AW-1:0] - 1'b1] <= 1'b1;
    end
    if (push && !full && !(empty && pop)) begin
        buf_mem[wr_ptr_reg[AW-1:0]] <= {frm_hdr, frm_data};
        buf_end[wr_ptr_reg[AW-1:0]] <= push_end;
        wr_ptr_reg <= wr_ptr_reg + 1;
    end
    if (push && full) begin
        cnt_overflow <= cnt_overflow + 1;
    end
    if (pop && !empty) begin
        rd_ptr_reg <= rd_ptr_reg + 1;
    end
    if (frame_done) begin
        cnt_frames <= cnt_frames + 1;
    end
    in_frame_reg <= in_frame_next;
    last_idle_reg <= last_idle_next;
    streaming_reg <= streaming_next;
    complete_reg <= complete_next;

    if (rst) begin
        wr_ptr_reg <= 0;
        rd_ptr_reg <= 0;
        in_frame_reg <= 1'b0;
        streaming_reg <= 1'b0;
        last_idle_reg <= 1'b0;
        complete_reg <= 0;
        dec_valid <= 1'b0;
        cnt_frames <= 0;
        cnt_overflow <= 0;
    end
end

endmodule

`resetall
