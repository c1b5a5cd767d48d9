// clio_data_mover: the engine's read/write data lane: a byte range of DRAM read or written in AXI4 INCR bursts, one beat per cycle.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A command names a physical byte range [`s_cmd_addr`, `s_cmd_addr` +
// `s_cmd_len`) (`s_cmd_len` > 0) and a direction; it is taken on
// `s_cmd_valid && s_cmd_ready`. The range is cut into INCR bursts of
// full-width beats that never cross a 4 KiB boundary (AXI4), each burst
// issued as soon as the one before it is done.
//
// Read: every R beat leaves on the read stream (`m_rd_valid`/`m_rd_ready`,
// `m_axi_rready` is `m_rd_ready`) as the bytes of the range it holds, moved
// down to lane 0 (`m_rd_data`), `m_rd_len` of them: the first beat holds
// the range's bytes from its start lane up, the last one its tail. The
// consumer appends them in order (the engine into the response buffer).
//
// Write: the source is a window the user keeps at the range's next byte
// (`s_wr_data`, lane 0 = next byte, combinational from the user's source
// position); every W beat accepted takes `m_wr_take` bytes from it
// (`m_wr_take_valid` that cycle: the user advances its position by that
// many), moved up to their DRAM lanes with the matching strobes.
//
// `m_done` pulses in the cycle the command ends: with the last read beat
// handed over, or with the B of the last write burst. The unit holds one
// command at a time; ids are 0 and responses are not checked (the DDR
// never errs).
module clio_data_mover #(
    parameter DATA_WIDTH = 512,       // beat width (bits)
    parameter ADDR_WIDTH = 32,        // AXI address width
    parameter LEN_WIDTH = 16,         // command length width (bytes)
    parameter ID_WIDTH = 4            // AXI id width
) (
    input  wire                    clk,
    input  wire                    rst,

    // Command.
    input  wire [ADDR_WIDTH-1:0]   s_cmd_addr,
    input  wire [LEN_WIDTH-1:0]    s_cmd_len,
    input  wire                    s_cmd_write,
    input  wire                    s_cmd_valid,
    output wire                    s_cmd_ready,
    output wire                    m_done,

    // Read stream.
    output wire [DATA_WIDTH-1:0]   m_rd_data,
    output wire [$clog2(DATA_WIDTH/8):0] m_rd_len,
    output wire                    m_rd_valid,
    input  wire                    m_rd_ready,

    // Write source.
    input  wire [DATA_WIDTH-1:0]   s_wr_data,
    output wire [$clog2(DATA_WIDTH/8):0] m_wr_take,
    output wire                    m_wr_take_valid,

    // AXI4 master.
    output wire [ID_WIDTH-1:0]     m_axi_awid,
    output wire [ADDR_WIDTH-1:0]   m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [DATA_WIDTH-1:0]   m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0] m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [ID_WIDTH-1:0]     m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,
    output wire [ID_WIDTH-1:0]     m_axi_arid,
    output wire [ADDR_WIDTH-1:0]   m_axi_araddr,
    output wire [7:0]              m_axi_arlen,
    output wire [2:0]              m_axi_arsize,
    output wire [1:0]              m_axi_arburst,
    output wire                    m_axi_arvalid,
    input  wire                    m_axi_arready,
    input  wire [ID_WIDTH-1:0]     m_axi_rid,
    input  wire [DATA_WIDTH-1:0]   m_axi_rdata,
    input  wire [1:0]              m_axi_rresp,
    input  wire                    m_axi_rlast,
    input  wire                    m_axi_rvalid,
    output wire                    m_axi_rready
);

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);
localparam PAGE_BEATS = 4096 / BYTES;     // beats from a 4 KiB boundary to the next

initial begin
    if ((1 << OW) != BYTES || BYTES < 16 || BYTES > 4096 || ADDR_WIDTH <= 12) begin
        $error("Error: DATA_WIDTH/8 must be a power of two in 16..4096, ADDR_WIDTH above 12 (instance %m)");
        $finish;
    end
end

// Controller states.
typedef enum logic [2:0] {
    M_IDLE = 3'd0,    // no command
    M_AR = 3'd1,      // read burst address offered
    M_R = 3'd2,       // read beats streaming out
    M_AW = 3'd3,      // write burst address offered
    M_W = 3'd4,       // write beats streaming in
    M_B = 3'd5        // waiting for the burst's B
} state_t;

state_t                 state_reg = M_IDLE;
reg [ADDR_WIDTH-1:0]    addr_reg = 0;       // next byte of the range
reg [LEN_WIDTH-1:0]     rem_reg = 0;        // bytes of the range not yet moved
reg [8:0]               left_reg = 0;       // beats left in the current burst

// The next burst: from addr_reg's beat to the range's last beat, cut at the 4 KiB boundary.
/* verilator lint_off UNUSEDSIGNAL */
wire [ADDR_WIDTH-1:0]   last_byte = addr_reg + {{(ADDR_WIDTH-LEN_WIDTH){1'b0}}, rem_reg} - 1'b1;
/* verilator lint_on UNUSEDSIGNAL */
wire [ADDR_WIDTH-OW-1:0] range_beats = last_byte[ADDR_WIDTH-1:OW] - addr_reg[ADDR_WIDTH-1:OW] + 1'b1;
wire [8:0]              page_beats = PAGE_BEATS[8:0] - {{(9-12+OW){1'b0}}, addr_reg[11:OW]};
wire [8:0]              burst_beats = range_beats < {{(ADDR_WIDTH-OW-9){1'b0}}, page_beats}
    ? range_beats[8:0] : page_beats;
wire [ADDR_WIDTH-1:0]   beat_addr = {addr_reg[ADDR_WIDTH-1:OW], {OW{1'b0}}};

// The current beat's bytes: from addr_reg's lane to the beat's end or the range's end.
wire [OW-1:0]           lane = addr_reg[OW-1:0];
wire [OW:0]             to_end = BYTES[OW:0] - {1'b0, lane};
wire [OW:0]             k = {{(LEN_WIDTH-OW-1){1'b0}}, to_end} > rem_reg ? rem_reg[OW:0] : to_end;
wire [BYTES-1:0]        k_mask = k[OW] ? {BYTES{1'b1}} : ~({BYTES{1'b1}} << k[OW-1:0]);

wire rd_beat = state_reg == M_R && m_axi_rvalid && m_rd_ready;
wire wr_beat = state_reg == M_W && m_axi_wready;
wire last_of_range = {{(LEN_WIDTH-OW-1){1'b0}}, k} == rem_reg;

// Ids are 0, the DDR never errs, and the beat count ends a burst (not rlast).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_resp = ^{m_axi_bid, m_axi_bresp, m_axi_rid, m_axi_rresp, m_axi_rlast};
/* verilator lint_on UNUSEDSIGNAL */

assign s_cmd_ready = state_reg == M_IDLE;
assign m_done = (rd_beat && last_of_range) || (state_reg == M_B && m_axi_bvalid && rem_reg == 0);

assign m_rd_data = m_axi_rdata >> {lane, 3'd0};
assign m_rd_len = k;
assign m_rd_valid = state_reg == M_R && m_axi_rvalid;
assign m_axi_rready = state_reg == M_R && m_rd_ready;

assign m_wr_take = k;
assign m_wr_take_valid = wr_beat;

assign m_axi_arid = {ID_WIDTH{1'b0}};
assign m_axi_araddr = beat_addr;
assign m_axi_arlen = burst_beats[7:0] - 8'd1;
assign m_axi_arsize = OW[2:0];
assign m_axi_arburst = 2'b01;
assign m_axi_arvalid = state_reg == M_AR;

assign m_axi_awid = {ID_WIDTH{1'b0}};
assign m_axi_awaddr = beat_addr;
assign m_axi_awlen = burst_beats[7:0] - 8'd1;
assign m_axi_awsize = OW[2:0];
assign m_axi_awburst = 2'b01;
assign m_axi_awvalid = state_reg == M_AW;
assign m_axi_wdata = s_wr_data << {lane, 3'd0};
assign m_axi_wstrb = k_mask << lane;
assign m_axi_wlast = left_reg == 9'd1;
assign m_axi_wvalid = state_reg == M_W;
assign m_axi_bready = state_reg == M_B;

always_ff @(posedge clk) begin
    case (state_reg)
        M_IDLE: begin
            if (s_cmd_valid) begin
                addr_reg <= s_cmd_addr;
                rem_reg <= s_cmd_len;
                state_reg <= s_cmd_write ? M_AW : M_AR;
            end
        end
        M_AR: begin
            if (m_axi_arready) begin
                left_reg <= burst_beats;
                state_reg <= M_R;
            end
        end
        M_R: begin
            if (rd_beat) begin
                addr_reg <= addr_reg + {{(ADDR_WIDTH-OW-1){1'b0}}, k};
                rem_reg <= rem_reg - {{(LEN_WIDTH-OW-1){1'b0}}, k};
                left_reg <= left_reg - 1'b1;
                if (last_of_range) state_reg <= M_IDLE;
                else if (left_reg == 9'd1) state_reg <= M_AR;
            end
        end
        M_AW: begin
            if (m_axi_awready) begin
                left_reg <= burst_beats;
                state_reg <= M_W;
            end
        end
        M_W: begin
            if (wr_beat) begin
                addr_reg <= addr_reg + {{(ADDR_WIDTH-OW-1){1'b0}}, k};
                rem_reg <= rem_reg - {{(LEN_WIDTH-OW-1){1'b0}}, k};
                left_reg <= left_reg - 1'b1;
                if (left_reg == 9'd1) state_reg <= M_B;
            end
        end
        M_B: begin
            if (m_axi_bvalid) state_reg <= rem_reg == 0 ? M_IDLE : M_AW;
        end
        default: state_reg <= M_IDLE;
    endcase
    if (rst) begin
        state_reg <= M_IDLE;
        addr_reg <= 0;
        rem_reg <= 0;
        left_reg <= 0;
    end
end

endmodule

`resetall
