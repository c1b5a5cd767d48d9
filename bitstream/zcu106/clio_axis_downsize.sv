// clio_axis_downsize: AXI4-Stream width converter, wide to narrow (fast-path 512-bit to MAC 64-bit).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Splits each input beat into lanes of M_DATA_WIDTH, lane 0 (the low bits)
// first, and sends the lanes up to the last one holding data: with packed
// tkeep (contiguous from bit 0, all ones except on the last beat of a frame,
// as the fast path emits) a lane holds data iff its first keep bit is set.
// tlast goes out with the last lane sent of an input beat that had tlast;
// each output beat carries its lane's tkeep bits. An input beat with no
// byte at all (tkeep = 0) sends lane 0 with tkeep 0 (the fast path does not
// emit such beats). Input is taken into a register as soon as the previous
// beat's last lane leaves, so a long frame streams at one output beat per
// cycle.
module clio_axis_downsize #(
    parameter S_DATA_WIDTH = 512,
    parameter M_DATA_WIDTH = 64,
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

localparam RATIO = S_DATA_WIDTH / M_DATA_WIDTH;
localparam IW = RATIO > 1 ? $clog2(RATIO) : 1;

initial begin
    if (RATIO < 2 || RATIO * M_DATA_WIDTH != S_DATA_WIDTH || (1 << $clog2(RATIO)) != RATIO) begin
        $error("Error: S_DATA_WIDTH must be a power-of-two multiple (>= 2) of M_DATA_WIDTH (instance %m)");
        $finish;
    end
    if (S_KEEP_WIDTH * 8 != S_DATA_WIDTH || M_KEEP_WIDTH * 8 != M_DATA_WIDTH) begin
        $error("Error: keep widths must be data widths / 8 (instance %m)");
        $finish;
    end
end

reg [S_DATA_WIDTH-1:0] data_reg = 0, data_next;
reg [S_KEEP_WIDTH-1:0] keep_reg = 0, keep_next;
reg                    last_reg = 1'b0, last_next;
reg                    valid_reg = 1'b0, valid_next;
reg [IW-1:0]           lane_reg = 0, lane_next;

// Lanes of the held beat holding data (first keep bit), and whether another
// lane follows the current one.
wire [RATIO-1:0] lane_has;
genvar g;
generate
    for (g = 0; g < RATIO; g = g + 1) begin : g_lane
        assign lane_has[g] = keep_reg[g*M_KEEP_WIDTH];
    end
endgenerate
wire [IW-1:0] lane_up = lane_reg + 1'b1;
wire more = lane_reg != IW'(RATIO - 1) && lane_has[lane_up];
wire out_done = valid_reg && m_axis_tready && !more;

assign s_axis_tready = !valid_reg || out_done;

always @* begin
    data_next = data_reg;
    keep_next = keep_reg;
    last_next = last_reg;
    valid_next = valid_reg;
    lane_next = lane_reg;
    if (valid_reg && m_axis_tready) begin
        if (more) begin
            lane_next = lane_reg + 1'b1;
        end else begin
            valid_next = 1'b0;
            lane_next = 0;
        end
    end
    if (s_axis_tvalid && s_axis_tready) begin
        data_next = s_axis_tdata;
        keep_next = s_axis_tkeep;
        last_next = s_axis_tlast;
        valid_next = 1'b1;
        lane_next = 0;
    end
end

always @(posedge clk) begin
    data_reg <= data_next;
    keep_reg <= keep_next;
    last_reg <= last_next;
    valid_reg <= valid_next;
    lane_reg <= lane_next;
    if (rst) begin
        valid_reg <= 1'b0;
        lane_reg <= 0;
    end
end

assign m_axis_tdata = data_reg[lane_reg*M_DATA_WIDTH +: M_DATA_WIDTH];
assign m_axis_tkeep = keep_reg[lane_reg*M_KEEP_WIDTH +: M_KEEP_WIDTH];
assign m_axis_tlast = last_reg && !more;
assign m_axis_tvalid = valid_reg;

endmodule

`resetall
