// clio_axis_frame_demux: routes whole AXI4-Stream frames to the output named by their tdest; frames for a down output are dropped.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The output is decided at a frame's first beat (tdest, and whether that
// output is down) and kept for the whole frame, so a frame is never split
// between outputs or cut by a link coming up in its middle. A frame for an
// output that is down (`m_down[k]`: its link or clock-crossing FIFO in
// reset) or for tdest >= PORTS is consumed at full rate and `drop` pulses at
// its last beat, so one dead port never stalls the others. An output that
// goes down in the middle of a frame takes the rest itself (its FIFO
// discards while in reset). One clock; all inputs in its domain.
module clio_axis_frame_demux #(
    parameter PORTS = 2,
    parameter DATA_WIDTH = 64,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter DEST_WIDTH = PORTS > 1 ? $clog2(PORTS) : 1
) (
    input  wire                        clk,
    input  wire                        rst,

    input  wire [PORTS-1:0]            m_down,

    input  wire [DATA_WIDTH-1:0]       s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]       s_axis_tkeep,
    input  wire                        s_axis_tvalid,
    output wire                        s_axis_tready,
    input  wire                        s_axis_tlast,
    input  wire [DEST_WIDTH-1:0]       s_axis_tdest,

    output wire [PORTS*DATA_WIDTH-1:0] m_axis_tdata,
    output wire [PORTS*KEEP_WIDTH-1:0] m_axis_tkeep,
    output wire [PORTS-1:0]            m_axis_tvalid,
    input  wire [PORTS-1:0]            m_axis_tready,
    output wire [PORTS-1:0]            m_axis_tlast,

    output wire                        drop
);

initial begin
    if (PORTS < 1 || (1 << DEST_WIDTH) < PORTS || KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: need PORTS >= 1, 2^DEST_WIDTH >= PORTS, KEEP_WIDTH = DATA_WIDTH / 8 (instance %m)");
        $finish;
    end
end

reg                  mid_reg = 1'b0;   // inside a frame
reg [DEST_WIDTH-1:0] dest_reg = 0;
reg                  dropping_reg = 1'b0;
reg                  drop_reg = 1'b0;

wire [DEST_WIDTH-1:0] d = mid_reg ? dest_reg : s_axis_tdest;
wire in_range = int'(d) < PORTS;
// Index safe for any tdest (out-of-range frames are dropped anyway).
wire [DEST_WIDTH-1:0] k = in_range ? d : {DEST_WIDTH{1'b0}};
wire dropping = mid_reg ? dropping_reg : !in_range || m_down[k];

assign m_axis_tdata = {PORTS{s_axis_tdata}};
assign m_axis_tkeep = {PORTS{s_axis_tkeep}};
assign m_axis_tlast = {PORTS{s_axis_tlast}};
assign m_axis_tvalid = (s_axis_tvalid && !dropping) ? PORTS'(1) << k : {PORTS{1'b0}};
assign s_axis_tready = dropping || m_axis_tready[k];
assign drop = drop_reg;

always @(posedge clk) begin
    drop_reg <= 1'b0;
    if (s_axis_tvalid && s_axis_tready) begin
        mid_reg <= !s_axis_tlast;
        dest_reg <= d;
        dropping_reg <= dropping;
        drop_reg <= s_axis_tlast && dropping;
    end
    if (rst) begin
        mid_reg <= 1'b0;
        drop_reg <= 1'b0;
    end
end

endmodule

`resetall
