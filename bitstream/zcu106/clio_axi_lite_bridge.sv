// clio_axi_lite_bridge: AXI4 slave (M_AXI_HPM0_FPD) to 32-bit AXI4-Lite master, one word at a time.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The PS's M_AXI_HPM0_FPD is a full AXI4 master (IDs, bursts, a DATA_WIDTH
// data bus); the register block is AXI4-Lite with 32-bit words. This bridge
// serves one transaction at a time (register traffic is a few accesses at
// boot and a doorbell per TX batch, so throughput does not matter): every
// beat is split into the 32-bit words it covers, each becomes one AXI-Lite
// access (a write word with no strobe set is skipped), read words are placed
// in their byte lanes (word address bits [log2(DATA_WIDTH/8)-1:2]), and the
// response of a beat (reads) or of the burst (writes) is the worst of its
// words. IDs are echoed. FIXED bursts repeat the beat address; INCR and
// WRAP bursts advance by the transfer size (the ARM does not wrap on device
// memory). The AXI-Lite address is the low LITE_ADDR_WIDTH bits, so the
// register block repeats through the address window the PS assigns.
// Reads and writes alternate when both wait.
module clio_axi_lite_bridge #(
    parameter DATA_WIDTH = 128,
    parameter ADDR_WIDTH = 40,
    parameter ID_WIDTH = 16,
    parameter LITE_ADDR_WIDTH = 12
) (
    input  wire                       clk,
    input  wire                       rst,

    input  wire [ID_WIDTH-1:0]        s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]      s_axi_awaddr,
    input  wire [7:0]                 s_axi_awlen,
    input  wire [2:0]                 s_axi_awsize,
    input  wire [1:0]                 s_axi_awburst,
    input  wire                       s_axi_awvalid,
    output wire                       s_axi_awready,
    input  wire [DATA_WIDTH-1:0]      s_axi_wdata,
    input  wire [DATA_WIDTH/8-1:0]    s_axi_wstrb,
    input  wire                       s_axi_wlast,
    input  wire                       s_axi_wvalid,
    output wire                       s_axi_wready,
    output wire [ID_WIDTH-1:0]        s_axi_bid,
    output wire [1:0]                 s_axi_bresp,
    output wire                       s_axi_bvalid,
    input  wire                       s_axi_bready,
    input  wire [ID_WIDTH-1:0]        s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]      s_axi_araddr,
    input  wire [7:0]                 s_axi_arlen,
    input  wire [2:0]                 s_axi_arsize,
    input  wire [1:0]                 s_axi_arburst,
    input  wire                       s_axi_arvalid,
    output wire                       s_axi_arready,
    output wire [ID_WIDTH-1:0]        s_axi_rid,
    output wire [DATA_WIDTH-1:0]      s_axi_rdata,
    output wire [1:0]                 s_axi_rresp,
    output wire                       s_axi_rlast,
    output wire                       s_axi_rvalid,
    input  wire                       s_axi_rready,

    output wire [LITE_ADDR_WIDTH-1:0] m_axil_awaddr,
    output wire                       m_axil_awvalid,
    input  wire                       m_axil_awready,
    output wire [31:0]                m_axil_wdata,
    output wire [3:0]                 m_axil_wstrb,
    output wire                       m_axil_wvalid,
    input  wire                       m_axil_wready,
    input  wire [1:0]                 m_axil_bresp,
    input  wire                       m_axil_bvalid,
    output wire                       m_axil_bready,
    output wire [LITE_ADDR_WIDTH-1:0] m_axil_araddr,
    output wire                       m_axil_arvalid,
    input  wire                       m_axil_arready,
    input  wire [31:0]                m_axil_rdata,
    input  wire [1:0]                 m_axil_rresp,
    input  wire                       m_axil_rvalid,
    output wire                       m_axil_rready
);

localparam BYTES = DATA_WIDTH / 8;
localparam LW = $clog2(BYTES / 4);     // word-lane index bits

initial begin
    if (DATA_WIDTH < 64 || (1 << $clog2(DATA_WIDTH)) != DATA_WIDTH || DATA_WIDTH > 1024) begin
        $error("Error: DATA_WIDTH must be a power of two from 64 to 1024 (instance %m)");
        $finish;
    end
    if (LITE_ADDR_WIDTH < 3 || LITE_ADDR_WIDTH > ADDR_WIDTH) begin
        $error("Error: LITE_ADDR_WIDTH must be between 3 and ADDR_WIDTH (instance %m)");
        $finish;
    end
end

localparam [2:0] S_IDLE = 3'd0,
                 S_RD_REQ = 3'd1,   // AXI-Lite AR out
                 S_RD_WAIT = 3'd2,  // AXI-Lite R in
                 S_RD_BEAT = 3'd3,  // AXI4 R beat out
                 S_WR_BEAT = 3'd4,  // AXI4 W beat in
                 S_WR_REQ = 3'd5,   // AXI-Lite AW + W out
                 S_WR_WAIT = 3'd6,  // AXI-Lite B in
                 S_WR_RESP = 3'd7;  // AXI4 B out

reg [2:0]            state_reg = S_IDLE;
reg                  prefer_write_reg = 1'b0;
reg [ID_WIDTH-1:0]   id_reg = 0;
reg [ADDR_WIDTH-1:0] addr_reg = 0;        // current beat address
reg [ADDR_WIDTH-1:0] word_reg = 0;        // current word address
reg [7:0]            beats_left_reg = 0;  // beats after this one
reg [2:0]            size_reg = 0;
reg [1:0]            burst_reg = 0;
reg [DATA_WIDTH-1:0] data_reg = 0;        // read beat being gathered / write beat held
reg [BYTES-1:0]      strb_reg = 0;
reg [1:0]            resp_reg = 0;
reg                  aw_sent_reg = 1'b0, w_sent_reg = 1'b0;

// Last word address of the current beat: (addr | (bytes - 1)) with the low
// two bits cleared.
wire [ADDR_WIDTH-1:0] beat_mask = (ADDR_WIDTH'(1) << size_reg) - 1'b1;
wire [ADDR_WIDTH-1:0] beat_last_word = (addr_reg | beat_mask) & ~ADDR_WIDTH'(3);
wire                  last_word = word_reg == beat_last_word;
wire [ADDR_WIDTH-1:0] next_beat = burst_reg == 2'b00 ? addr_reg : ((addr_reg & ~beat_mask) + beat_mask + 1'b1);
wire [LW-1:0]         lane = word_reg[2 +: LW];
wire [3:0]            word_strb = strb_reg[lane*4 +: 4];

function [ADDR_WIDTH-1:0] word_of(input [ADDR_WIDTH-1:0] a);
    word_of = a & ~ADDR_WIDTH'(3);
endfunction

function [1:0] worst(input [1:0] a, input [1:0] b);
    worst = a > b ? a : b;
endfunction

wire take_read = s_axi_arvalid && (!s_axi_awvalid || !prefer_write_reg);
wire take_write = s_axi_awvalid && !take_read;

assign s_axi_arready = state_reg == S_IDLE && take_read;
assign s_axi_awready = state_reg == S_IDLE && take_write;
assign s_axi_wready = state_reg == S_WR_BEAT;
assign s_axi_rvalid = state_reg == S_RD_BEAT;
assign s_axi_rid = id_reg;
assign s_axi_rdata = data_reg;
assign s_axi_rresp = resp_reg;
assign s_axi_rlast = beats_left_reg == 0;
assign s_axi_bvalid = state_reg == S_WR_RESP;
assign s_axi_bid = id_reg;
assign s_axi_bresp = resp_reg;

assign m_axil_araddr = word_reg[LITE_ADDR_WIDTH-1:0];
assign m_axil_arvalid = state_reg == S_RD_REQ;
assign m_axil_rready = state_reg == S_RD_WAIT;
assign m_axil_awaddr = word_reg[LITE_ADDR_WIDTH-1:0];
assign m_axil_awvalid = state_reg == S_WR_REQ && !aw_sent_reg;
assign m_axil_wdata = data_reg[lane*32 +: 32];
assign m_axil_wstrb = word_strb;
assign m_axil_wvalid = state_reg == S_WR_REQ && !w_sent_reg;
assign m_axil_bready = state_reg == S_WR_WAIT;

always @(posedge clk) begin
    case (state_reg)
        S_IDLE: begin
            if (s_axi_arvalid && s_axi_arready) begin
                id_reg <= s_axi_arid;
                addr_reg <= s_axi_araddr;
                word_reg <= word_of(s_axi_araddr);
                beats_left_reg <= s_axi_arlen;
                size_reg <= s_axi_arsize;
                burst_reg <= s_axi_arburst;
                data_reg <= 0;
                resp_reg <= 2'b00;
                prefer_write_reg <= 1'b1;
                state_reg <= S_RD_REQ;
            end else if (s_axi_awvalid && s_axi_awready) begin
                id_reg <= s_axi_awid;
                addr_reg <= s_axi_awaddr;
                word_reg <= word_of(s_axi_awaddr);
                beats_left_reg <= s_axi_awlen;
                size_reg <= s_axi_awsize;
                burst_reg <= s_axi_awburst;
                resp_reg <= 2'b00;
                prefer_write_reg <= 1'b0;
                state_reg <= S_WR_BEAT;
            end
        end
        S_RD_REQ: if (m_axil_arready) state_reg <= S_RD_WAIT;
        S_RD_WAIT: begin
            if (m_axil_rvalid) begin
                data_reg[lane*32 +: 32] <= m_axil_rdata;
                resp_reg <= worst(resp_reg, m_axil_rresp);
                if (last_word) begin
                    state_reg <= S_RD_BEAT;
                end else begin
                    word_reg <= word_reg + 4;
                    state_reg <= S_RD_REQ;
                end
            end
        end
        S_RD_BEAT: begin
            if (s_axi_rready) begin
                if (beats_left_reg == 0) begin
                    state_reg <= S_IDLE;
                end else begin
                    beats_left_reg <= beats_left_reg - 1'b1;
                    addr_reg <= next_beat;
                    word_reg <= word_of(next_beat);
                    data_reg <= 0;
                    resp_reg <= 2'b00;
                    state_reg <= S_RD_REQ;
                end
            end
        end
        S_WR_BEAT: begin
            if (s_axi_wvalid) begin
                data_reg <= s_axi_wdata;
                strb_reg <= s_axi_wstrb;
                aw_sent_reg <= 1'b0;
                w_sent_reg <= 1'b0;
                state_reg <= S_WR_REQ;
            end
        end
        S_WR_REQ: begin
            if (word_strb == 4'd0) begin
                // Nothing to write in this word: next word or beat.
                if (!last_word) begin
                    word_reg <= word_reg + 4;
                end else if (beats_left_reg == 0) begin
                    state_reg <= S_WR_RESP;
                end else begin
                    beats_left_reg <= beats_left_reg - 1'b1;
                    addr_reg <= next_beat;
                    word_reg <= word_of(next_beat);
                    state_reg <= S_WR_BEAT;
                end
            end else begin
                if (m_axil_awready) aw_sent_reg <= 1'b1;
                if (m_axil_wready) w_sent_reg <= 1'b1;
                if ((aw_sent_reg || m_axil_awready) && (w_sent_reg || m_axil_wready)) begin
                    state_reg <= S_WR_WAIT;
                end
            end
        end
        S_WR_WAIT: begin
            if (m_axil_bvalid) begin
                resp_reg <= worst(resp_reg, m_axil_bresp);
                aw_sent_reg <= 1'b0;
                w_sent_reg <= 1'b0;
                if (!last_word) begin
                    word_reg <= word_reg + 4;
                    state_reg <= S_WR_REQ;
                end else if (beats_left_reg == 0) begin
                    state_reg <= S_WR_RESP;
                end else begin
                    beats_left_reg <= beats_left_reg - 1'b1;
                    addr_reg <= next_beat;
                    word_reg <= word_of(next_beat);
                    state_reg <= S_WR_BEAT;
                end
            end
        end
        S_WR_RESP: if (s_axi_bready) state_reg <= S_IDLE;
        default: state_reg <= S_IDLE;
    endcase
    if (rst) begin
        state_reg <= S_IDLE;
        prefer_write_reg <= 1'b0;
        aw_sent_reg <= 1'b0;
        w_sent_reg <= 1'b0;
    end
end

// The burst's own wlast is implied by its length.
/* verilator lint_off UNUSEDSIGNAL */
wire unused_wlast = s_axi_wlast;
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
