// clio_axis_upsize: AXI4-Stream width converter, narrow to wide (MAC 64-bit to fast-path 512-bit).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Packs RATIO = M_DATA_WIDTH / S_DATA_WIDTH input beats into one output
// beat, input beat i of a group in lane i (lane 0 = the low bits, so byte
// order is kept). A group ends after RATIO beats or at tlast; the output
// beat carries tlast of the input and the tkeep bits of the lanes filled,
// the others 0. With packed input (tkeep contiguous from bit 0 on every
// beat, all ones except on the last beat of a frame, as a MAC delivers it)
// the output is packed too, as the fast path's parser requires. Unfilled
// lanes read as 0. One input beat per cycle; the output is a register.
module clio_axis_upsize #(
    parameter S_DATA_WIDTH = 64,
    parameter M_DATA_WIDTH = 512,
    parameter S_KEEP_WIDTH = S_DATA_WIDTH / 8,
    parameter M_KEEP_WIDTH = M_DATA_WIDTH / 8
) (
    input  wire                     clk,
    input  wire                     rst,

    input  wire [S_DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [S_KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                     s_axis_tvalid,
    output wire                     s_axis_tready,
    input  wire                     s_axis_tlast,

    output wire [M_DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [M_KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                     m_axis_tvalid,
    input  wire                     m_axis_tready,
    output wire                     m_axis_tlast
);

localparam RATIO = M_DATA_WIDTH / S_DATA_WIDTH;
localparam IW = RATIO > 1 ? $clog2(RATIO) : 1;

initial begin
    if (RATIO < 2 || RATIO * S_DATA_WIDTH != M_DATA_WIDTH || (1 << $clog2(RATIO)) != RATIO) begin
        $error("Error: M_DATA_WIDTH must be a power-of-two multiple (>= 2) of S_DATA_WIDTH (instance %m)");
        $finish;
    end
    if (S_KEEP_WIDTH * 8 != S_DATA_WIDTH || M_KEEP_WIDTH * 8 != M_DATA_WIDTH) begin
        $error("Error: keep widths must be data widths / 8 (instance %m)");
        $finish;
    end
end

reg [M_DATA_WIDTH-1:0] data_reg = 0, data_next;
reg [M_KEEP_WIDTH-1:0] keep_reg = 0, keep_next;
reg                    last_reg = 1'b0, last_next;
reg                    valid_reg = 1'b0, valid_next;
reg [IW-1:0]           lane_reg = 0, lane_next;

wire accept = s_axis_tvalid && s_axis_tready;

assign s_axis_tready = !valid_reg || m_axis_tready;

always @* begin
    data_next = data_reg;
    keep_next = keep_reg;
    last_next = last_reg;
    valid_next = valid_reg && !m_axis_tready;
    lane_next = lane_reg;
    if (valid_reg && m_axis_tready) begin
        // The beat leaves; the next group starts empty.
        data_next = 0;
        keep_next = 0;
    end
    if (accept) begin
        data_next[lane_reg*S_DATA_WIDTH +: S_DATA_WIDTH] = s_axis_tdata;
        keep_next[lane_reg*S_KEEP_WIDTH +: S_KEEP_WIDTH] = s_axis_tkeep;
        if (s_axis_tlast || lane_reg == IW'(RATIO - 1)) begin
            valid_next = 1'b1;
            last_next = s_axis_tlast;
            lane_next = 0;
        end else begin
            lane_next = lane_reg + 1'b1;
        end
    end
end

always @(posedge clk) begin
    data_reg <= data_next;
    keep_reg <= keep_next;
    last_reg <= last_next;
    valid_reg <= valid_next;
    lane_reg <= lane_next;
    if (rst) begin
        data_reg <= 0;
        keep_reg <= 0;
        valid_reg <= 1'b0;
        lane_reg <= 0;
    end
end

assign m_axis_tdata = data_reg;
assign m_axis_tkeep = keep_reg;
assign m_axis_tlast = last_reg;
assign m_axis_tvalid = valid_reg;

endmodule

`resetall
