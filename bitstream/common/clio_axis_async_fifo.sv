// clio_axis_async_fifo: AXI4-Stream FIFO between two unrelated clocks (Gray-code pointers).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Carries tdata, tkeep and tlast. The write and read pointers are binary
// counters one bit wider than the address; each side publishes its pointer
// as a Gray code register, which the other side samples through a two-flop
// synchronizer (only one bit changes per increment, so a sample taken
// mid-change is either the old or the new value, never a third one).
// Full: write pointer minus synchronized read pointer = DEPTH; empty: the
// synchronized write pointer equals the read pointer. Both are pessimistic
// (the synchronized pointer is late), never wrong.
//
// FRAME_FIFO = 1 (store and forward): the write side publishes only the
// pointer after the last beat of a complete frame, so the reader sees whole
// frames and never stalls mid-frame (a MAC transmitter must not underrun).
// A frame must then fit in DEPTH beats, else the FIFO fills before its end
// and stalls for ever: size DEPTH to the largest frame.
//
// DROP_WHEN_FULL = 1 (frame mode only; for a source that cannot wait, such
// as a MAC receiver): `s_axis_tready` is always high. A beat arriving while
// the FIFO is full drops its whole frame: the beats of it already written
// are discarded (the write pointer returns to the last frame boundary), the
// rest up to its tlast is ignored, and `s_drop` pulses (write clock) once.
// Only whole frames reach the reader, and a frame longer than DEPTH is
// dropped instead of stalling the FIFO.
//
// The read port has one output register (registered memory read, so the
// memory can be block RAM): a beat appears two synchronizer cycles plus one
// after it was written. Resets are per side, synchronous and active high.
// Order them: the read side's reset must begin no later than the write
// side's and end no earlier (derive the write side's from the read side's
// through a synchronizer). A write side reset alone sets its published
// pointer back to 0, which a running reader would take for new data.
module clio_axis_async_fifo #(
    parameter DATA_WIDTH = 64,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter DEPTH = 256,
    parameter FRAME_FIFO = 0,
    parameter DROP_WHEN_FULL = 0
) (
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,
    input  wire                   s_axis_tlast,
    output wire                   s_drop,

    input  wire                   m_clk,
    input  wire                   m_rst,
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast
);

localparam AW = $clog2(DEPTH);
localparam WW = DATA_WIDTH + KEEP_WIDTH + 1;

initial begin
    if (DEPTH < 4 || (1 << AW) != DEPTH) begin
        $error("Error: DEPTH must be a power of two of at least 4 (instance %m)");
        $finish;
    end
    if (DROP_WHEN_FULL != 0 && FRAME_FIFO == 0) begin
        $error("Error: DROP_WHEN_FULL needs FRAME_FIFO = 1 (instance %m)");
        $finish;
    end
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: KEEP_WIDTH must be DATA_WIDTH / 8 (instance %m)");
        $finish;
    end
end

function [AW:0] bin2gray(input [AW:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

function [AW:0] gray2bin(input [AW:0] g);
    integer i;
    begin
        gray2bin[AW] = g[AW];
        for (i = AW - 1; i >= 0; i = i - 1) begin
            gray2bin[i] = gray2bin[i + 1] ^ g[i];
        end
    end
endfunction

reg [WW-1:0] mem [0:DEPTH-1];
// Each side's published pointer, Gray coded (read by the other side).
reg [AW:0] wr_gray_reg = 0;
reg [AW:0] rd_gray_reg = 0;

// ---------------------------------------------------------------------------
// Write side.
// ---------------------------------------------------------------------------
reg [AW:0] wr_ptr_reg = 0, wr_ptr_next;
reg [AW:0] wr_pub_reg = 0, wr_pub_next;     // the pointer the reader may use
(* ASYNC_REG = "TRUE" *) reg [AW:0] rd_gray_s1_reg = 0;
(* ASYNC_REG = "TRUE" *) reg [AW:0] rd_gray_s2_reg = 0;

wire [AW:0] rd_ptr_sync = gray2bin(rd_gray_s2_reg);
wire        full = (wr_ptr_reg - rd_ptr_sync) == DEPTH[AW:0];
// Drop mode: discarding the rest of a frame that met a full FIFO.
reg         dropping_reg = 1'b0, dropping_next;
reg         drop_reg = 1'b0, drop_next;
wire        wr_en = s_axis_tvalid && !full && !dropping_reg;

assign s_axis_tready = DROP_WHEN_FULL != 0 ? 1'b1 : !full;
assign s_drop = drop_reg;

always @* begin
    wr_ptr_next = wr_ptr_reg;
    wr_pub_next = wr_pub_reg;
    dropping_next = dropping_reg;
    drop_next = 1'b0;
    if (wr_en) begin
        wr_ptr_next = wr_ptr_reg + 1'b1;
        if (FRAME_FIFO == 0 || s_axis_tlast) begin
            wr_pub_next = wr_ptr_reg + 1'b1;
        end
    end else if (DROP_WHEN_FULL != 0 && s_axis_tvalid) begin
        // Full, or already dropping: forget the frame's written beats.
        wr_ptr_next = wr_pub_reg;
        dropping_next = !s_axis_tlast;
        drop_next = !dropping_reg;
    end
end

always @(posedge s_clk) begin
    if (wr_en) begin
        mem[wr_ptr_reg[AW-1:0]] <= {s_axis_tlast, s_axis_tkeep, s_axis_tdata};
    end
    wr_ptr_reg <= wr_ptr_next;
    wr_pub_reg <= wr_pub_next;
    dropping_reg <= dropping_next;
    drop_reg <= drop_next;
    wr_gray_reg <= bin2gray(wr_pub_next);
    rd_gray_s1_reg <= rd_gray_reg;
    rd_gray_s2_reg <= rd_gray_s1_reg;
    if (s_rst) begin
        wr_ptr_reg <= 0;
        wr_pub_reg <= 0;
        dropping_reg <= 1'b0;
        drop_reg <= 1'b0;
        wr_gray_reg <= 0;
        rd_gray_s1_reg <= 0;
        rd_gray_s2_reg <= 0;
    end
end

// ---------------------------------------------------------------------------
// Read side.
// ---------------------------------------------------------------------------
reg [AW:0] rd_ptr_reg = 0, rd_ptr_next;
(* ASYNC_REG = "TRUE" *) reg [AW:0] wr_gray_s1_reg = 0;
(* ASYNC_REG = "TRUE" *) reg [AW:0] wr_gray_s2_reg = 0;
reg          out_valid_reg = 1'b0, out_valid_next;
reg [WW-1:0] out_reg = 0;

wire [AW:0] wr_ptr_sync = gray2bin(wr_gray_s2_reg);
wire        empty = wr_ptr_sync == rd_ptr_reg;
wire        rd_en = !empty && (!out_valid_reg || m_axis_tready);

always @* begin
    rd_ptr_next = rd_ptr_reg;
    out_valid_next = out_valid_reg && !m_axis_tready;
    if (rd_en) begin
        rd_ptr_next = rd_ptr_reg + 1'b1;
        out_valid_next = 1'b1;
    end
end

always @(posedge m_clk) begin
    if (rd_en) begin
        out_reg <= mem[rd_ptr_reg[AW-1:0]];
    end
    rd_ptr_reg <= rd_ptr_next;
    rd_gray_reg <= bin2gray(rd_ptr_next);
    out_valid_reg <= out_valid_next;
    wr_gray_s1_reg <= wr_gray_reg;
    wr_gray_s2_reg <= wr_gray_s1_reg;
    if (m_rst) begin
        rd_ptr_reg <= 0;
        rd_gray_reg <= 0;
        out_valid_reg <= 1'b0;
        wr_gray_s1_reg <= 0;
        wr_gray_s2_reg <= 0;
    end
end

assign m_axis_tdata = out_reg[DATA_WIDTH-1:0];
assign m_axis_tkeep = out_reg[DATA_WIDTH +: KEEP_WIDTH];
assign m_axis_tlast = out_reg[WW-1];
assign m_axis_tvalid = out_valid_reg;

endmodule

`resetall
