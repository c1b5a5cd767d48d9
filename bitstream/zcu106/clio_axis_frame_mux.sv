// clio_axis_frame_mux: whole frames from PORTS AXI4-Stream inputs onto one, round-robin, tagged with their input in tdest.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A frame, once its first beat is presented, is passed whole before another
// input is served (beats of different frames never interleave); the next
// frame is taken from the first input with a beat waiting after the one
// served last, so every input gets a turn. No bubble: the first beat of a
// frame passes in the cycle it is chosen. `m_axis_tdest` is the input
// number for every beat of the frame.
//
// `s_rst[k]` is input k's own reset (its clock-crossing FIFO and link): an
// input in reset is never chosen. If it enters reset in the middle of a
// frame, whose tail will then never come, the frame is ended with one zero
// byte (tkeep = 1, tlast) so the consumer sees a short frame it rejects, and
// `cut` pulses; a frame chosen but not yet started is simply abandoned. The
// other inputs are unaffected. One clock; all inputs in its domain.
module clio_axis_frame_mux #(
    parameter PORTS = 2,
    parameter DATA_WIDTH = 64,
    parameter KEEP_WIDTH = DATA_WIDTH / 8,
    parameter DEST_WIDTH = PORTS > 1 ? $clog2(PORTS) : 1
) (
    input  wire                        clk,
    input  wire                        rst,

    input  wire [PORTS-1:0]            s_rst,
    input  wire [PORTS*DATA_WIDTH-1:0] s_axis_tdata,
    input  wire [PORTS*KEEP_WIDTH-1:0] s_axis_tkeep,
    input  wire [PORTS-1:0]            s_axis_tvalid,
    output wire [PORTS-1:0]            s_axis_tready,
    input  wire [PORTS-1:0]            s_axis_tlast,

    output wire [DATA_WIDTH-1:0]       m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]       m_axis_tkeep,
    output wire                        m_axis_tvalid,
    input  wire                        m_axis_tready,
    output wire                        m_axis_tlast,
    output wire [DEST_WIDTH-1:0]       m_axis_tdest,

    output wire                        cut
);

initial begin
    if (PORTS < 1 || (1 << DEST_WIDTH) < PORTS || KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: need PORTS >= 1, 2^DEST_WIDTH >= PORTS, KEEP_WIDTH = DATA_WIDTH / 8 (instance %m)");
        $finish;
    end
end

reg                  active_reg = 1'b0;   // an input is chosen
reg                  started_reg = 1'b0;  // and a beat of its frame has passed
reg                  abort_reg = 1'b0;    // ending a cut frame
reg [DEST_WIDTH-1:0] grant_reg = 0;
reg [DEST_WIDTH-1:0] last_reg = DEST_WIDTH'(PORTS - 1);
reg                  cut_reg = 1'b0;

// Round robin: the first input with a beat, after the one served last.
reg [DEST_WIDTH-1:0] pick;
reg                  found;
reg [DEST_WIDTH:0]   idx;
integer i;
always @* begin
    pick = 0;
    found = 1'b0;
    for (i = 1; i <= PORTS; i = i + 1) begin
        // (last + i) mod PORTS; last + i < 2 * PORTS.
        idx = {1'b0, last_reg} + (DEST_WIDTH + 1)'(i);
        if (idx >= (DEST_WIDTH + 1)'(PORTS)) begin
            idx = idx - (DEST_WIDTH + 1)'(PORTS);
        end
        if (!found && s_axis_tvalid[idx[DEST_WIDTH-1:0]] && !s_rst[idx[DEST_WIDTH-1:0]]) begin
            pick = idx[DEST_WIDTH-1:0];
            found = 1'b1;
        end
    end
end

wire [DEST_WIDTH-1:0] sel = active_reg ? grant_reg : pick;
// A beat of the chosen input may pass (not while aborting or in its reset).
wire pass = !abort_reg && (active_reg ? s_axis_tvalid[grant_reg] && !s_rst[grant_reg] : found);

assign m_axis_tvalid = pass || abort_reg;
assign m_axis_tdata = abort_reg ? {DATA_WIDTH{1'b0}} : s_axis_tdata[sel*DATA_WIDTH +: DATA_WIDTH];
assign m_axis_tkeep = abort_reg ? KEEP_WIDTH'(1) : s_axis_tkeep[sel*KEEP_WIDTH +: KEEP_WIDTH];
assign m_axis_tlast = abort_reg || s_axis_tlast[sel];
assign m_axis_tdest = sel;
assign s_axis_tready = (pass && m_axis_tready) ? PORTS'(1) << sel : {PORTS{1'b0}};
assign cut = cut_reg;

always @(posedge clk) begin
    cut_reg <= 1'b0;
    if (abort_reg) begin
        if (m_axis_tready) begin
            abort_reg <= 1'b0;
            active_reg <= 1'b0;
            started_reg <= 1'b0;
            last_reg <= grant_reg;
            cut_reg <= 1'b1;
        end
    end else if (active_reg && s_rst[grant_reg]) begin
        // The chosen input is being reset: end its frame, or drop the choice.
        if (started_reg) begin
            abort_reg <= 1'b1;
        end else begin
            active_reg <= 1'b0;
        end
    end else begin
        if (!active_reg && found) begin
            active_reg <= 1'b1;
            grant_reg <= pick;
        end
        if (pass && m_axis_tready) begin
            started_reg <= !s_axis_tlast[sel];
            if (s_axis_tlast[sel]) begin
                active_reg <= 1'b0;
                last_reg <= sel;
            end
        end
    end
    if (rst) begin
        active_reg <= 1'b0;
        started_reg <= 1'b0;
        abort_reg <= 1'b0;
        last_reg <= DEST_WIDTH'(PORTS - 1);
        cut_reg <= 1'b0;
    end
end

endmodule

`resetall
