// clio_axi_arbiter: the fast path's one AXI4 master port, shared by the hit lane, the engine, the data mover, the bucket reader and the ring DMA.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// One owner at a time, named by `grant` (the top level derives it from the
// engine's state: the engine waits on the bucket reader or the ring DMA, runs
// its own single-beat access, or is idle and lets the hit lane read):
//  GRANT_LANE    single-beat reads (AR, R) and strobed single-beat writes
//                (AW, W, B) of the hit lane, passed through;
//  GRANT_ENGINE  the engine's single-beat port below;
//  GRANT_PTF     AR/R of the bucket reader (clio_pt_fetch);
//  GRANT_RING    every channel of the ring DMA (clio_ring_dma);
//  GRANT_MOVER   every channel of the engine's data mover (clio_data_mover:
//                multi-beat reads and writes of a request's data).
// A client without the grant sees no ready and no valid; the owner's
// channels pass through combinationally (no cycle added).
//
// Second reader (`lane_rd`, with GRANT_PTF, GRANT_MOVER or GRANT_ENGINE):
// while the engine walks the page table for a READ and until that READ has
// answered, the hit lane's single-beat reads share the read channels with
// the owner. AR: the owner first (it is what the engine waits on); an AR
// presented and not yet accepted stays presented (AXI: valid and address
// stable until ready), so the choice is locked until its ready (also an AR
// the lane presented as the port's owner). The lane's reads carry id
// LANE_ID, also as the owner (the engine may take the port over while they
// are in flight: a read miss handed over early), the owners' ids must
// differ (they use 0), and R beats go to the reader their id names. The
// write channels stay the owner's (the lane does not write then).
//
// Engine port: one full-width beat at `s_eng_addr` (aligned down to the
// beat), a read or a strobed write. The command is held on `s_eng_valid`
// until `s_eng_ready` (AR accepted; AW and W both accepted, in either order);
// `m_eng_done` pulses when the R beat (data on `m_eng_rdata`, that cycle
// only) or the B response arrives. The port's FSM waits in P_IDLE until the
// engine owns the port (`grant == GRANT_ENGINE`).
module clio_axi_arbiter #(
    parameter DATA_WIDTH = 512,       // beat width (bits)
    parameter ADDR_WIDTH = 32,        // AXI address width
    parameter ID_WIDTH = 4,           // AXI id width (the engine uses id 0, the lane's reads LANE_ID)
    parameter LANE_ID = 1             // the lane's AXI id as the second reader (GRANT_PTF with `lane_rd`)
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [2:0]              grant,
    input  wire                    lane_rd,      // with GRANT_PTF: the lane reads beside the bucket reader

    // Hit lane: single-beat reads and writes.
    input  wire [ADDR_WIDTH-1:0]   s_lane_araddr,
    input  wire                    s_lane_arvalid,
    output wire                    s_lane_arready,
    output wire [DATA_WIDTH-1:0]   s_lane_rdata,
    output wire                    s_lane_rvalid,
    input  wire                    s_lane_rready,
    input  wire [ADDR_WIDTH-1:0]   s_lane_awaddr,
    input  wire                    s_lane_awvalid,
    output wire                    s_lane_awready,
    input  wire [DATA_WIDTH-1:0]   s_lane_wdata,
    input  wire [DATA_WIDTH/8-1:0] s_lane_wstrb,
    input  wire                    s_lane_wvalid,
    output wire                    s_lane_wready,
    output wire                    s_lane_bvalid,
    input  wire                    s_lane_bready,

    // Engine: single-beat read / strobed write.
    input  wire [ADDR_WIDTH-1:0]   s_eng_addr,
    input  wire                    s_eng_write,
    input  wire [DATA_WIDTH-1:0]   s_eng_wdata,
    input  wire [DATA_WIDTH/8-1:0] s_eng_wstrb,
    input  wire                    s_eng_valid,
    output wire                    s_eng_ready,
    output wire                    m_eng_done,
    output wire [DATA_WIDTH-1:0]   m_eng_rdata,

    // Bucket reader: read channels.
    input  wire [ID_WIDTH-1:0]     s_ptf_arid,
    input  wire [ADDR_WIDTH-1:0]   s_ptf_araddr,
    input  wire [7:0]              s_ptf_arlen,
    input  wire [2:0]              s_ptf_arsize,
    input  wire [1:0]              s_ptf_arburst,
    input  wire                    s_ptf_arvalid,
    output wire                    s_ptf_arready,
    output wire [ID_WIDTH-1:0]     s_ptf_rid,
    output wire [DATA_WIDTH-1:0]   s_ptf_rdata,
    output wire [1:0]              s_ptf_rresp,
    output wire                    s_ptf_rlast,
    output wire                    s_ptf_rvalid,
    input  wire                    s_ptf_rready,

    // Ring DMA: every channel.
    input  wire [ID_WIDTH-1:0]     s_ring_awid,
    input  wire [ADDR_WIDTH-1:0]   s_ring_awaddr,
    input  wire [7:0]              s_ring_awlen,
    input  wire [2:0]              s_ring_awsize,
    input  wire [1:0]              s_ring_awburst,
    input  wire                    s_ring_awvalid,
    output wire                    s_ring_awready,
    input  wire [DATA_WIDTH-1:0]   s_ring_wdata,
    input  wire [DATA_WIDTH/8-1:0] s_ring_wstrb,
    input  wire                    s_ring_wlast,
    input  wire                    s_ring_wvalid,
    output wire                    s_ring_wready,
    output wire [ID_WIDTH-1:0]     s_ring_bid,
    output wire [1:0]              s_ring_bresp,
    output wire                    s_ring_bvalid,
    input  wire                    s_ring_bready,
    input  wire [ID_WIDTH-1:0]     s_ring_arid,
    input  wire [ADDR_WIDTH-1:0]   s_ring_araddr,
    input  wire [7:0]              s_ring_arlen,
    input  wire [2:0]              s_ring_arsize,
    input  wire [1:0]              s_ring_arburst,
    input  wire                    s_ring_arvalid,
    output wire                    s_ring_arready,
    output wire [ID_WIDTH-1:0]     s_ring_rid,
    output wire [DATA_WIDTH-1:0]   s_ring_rdata,
    output wire [1:0]              s_ring_rresp,
    output wire                    s_ring_rlast,
    output wire                    s_ring_rvalid,
    input  wire                    s_ring_rready,

    // Data mover: every channel (bursts).
    input  wire [ADDR_WIDTH-1:0]   s_mv_awaddr,
    input  wire [7:0]              s_mv_awlen,
    input  wire                    s_mv_awvalid,
    output wire                    s_mv_awready,
    input  wire [DATA_WIDTH-1:0]   s_mv_wdata,
    input  wire [DATA_WIDTH/8-1:0] s_mv_wstrb,
    input  wire                    s_mv_wlast,
    input  wire                    s_mv_wvalid,
    output wire                    s_mv_wready,
    output wire                    s_mv_bvalid,
    input  wire                    s_mv_bready,
    input  wire [ADDR_WIDTH-1:0]   s_mv_araddr,
    input  wire [7:0]              s_mv_arlen,
    input  wire                    s_mv_arvalid,
    output wire                    s_mv_arready,
    output wire                    s_mv_rvalid,
    input  wire                    s_mv_rready,

    // The shared master port (R data, ids and responses go to every client;
    // the engine and the lane ignore the responses, as the DDR never errs).
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
localparam [2:0] GRANT_LANE = 3'd0, GRANT_ENGINE = 3'd1, GRANT_PTF = 3'd2, GRANT_RING = 3'd3, GRANT_MOVER = 3'd4;

initial begin
    if ((1 << OW) != BYTES || ADDR_WIDTH <= OW) begin
        $error("Error: DATA_WIDTH/8 must be a power of two below 2^ADDR_WIDTH (instance %m)");
        $finish;
    end
    if (LANE_ID == 0 || LANE_ID >= (1 << ID_WIDTH)) begin
        $error("Error: LANE_ID must be a nonzero AXI id below 2^ID_WIDTH (instance %m)");
        $finish;
    end
end

// Engine port states.
typedef enum logic [1:0] {
    P_IDLE = 2'd0,     // no access; a command drives AR (read) or AW + W (write) directly
    P_WRITE = 2'd1,    // AW or W accepted, the other not yet
    P_RDATA = 2'd2,    // AR accepted: waiting for the R beat
    P_BRESP = 2'd3     // AW and W accepted: waiting for B
} port_t;

port_t state_reg = P_IDLE;
reg    aw_done_reg = 1'b0, w_done_reg = 1'b0;

wire own_lane = grant == GRANT_LANE;
wire own_eng = grant == GRANT_ENGINE;
wire own_ptf = grant == GRANT_PTF;
wire own_ring = grant == GRANT_RING;
wire own_mv = grant == GRANT_MOVER;
// The lane as the second reader beside the bucket reader, the mover or the engine's port.
wire share = (own_ptf || own_mv || own_eng) && lane_rd;
localparam [ID_WIDTH-1:0] LID = LANE_ID[ID_WIDTH-1:0];
wire cmd_wr = own_eng && s_eng_valid && s_eng_write && (state_reg == P_IDLE || state_reg == P_WRITE);
wire cmd_rd_want = own_eng && s_eng_valid && !s_eng_write && state_reg == P_IDLE;
// The owner's AR goes first (the engine waits on it); the lane's AR is
// presented and was not accepted last cycle: it stays.
wire owner_ar = own_ptf ? s_ptf_arvalid : own_mv ? s_mv_arvalid : cmd_rd_want;
reg  ar_lane_reg = 1'b0;
wire lane_locked = share && ar_lane_reg;
wire ar_lane = lane_locked || (share && s_lane_arvalid && !owner_ar);
wire r_lane = share && m_axi_rvalid && m_axi_rid == LID;
// (The owner waits only for a locked lane AR: its own handshake never reads the lane's valid.)
wire cmd_rd = cmd_rd_want && !lane_locked;
wire eng_awvalid = cmd_wr && !aw_done_reg;
wire eng_wvalid = cmd_wr && !w_done_reg;
wire aw_ok = aw_done_reg || (eng_awvalid && m_axi_awready);
wire w_ok = w_done_reg || (eng_wvalid && m_axi_wready);
wire [ADDR_WIDTH-1:0] eng_beat = {s_eng_addr[ADDR_WIDTH-1:OW], {OW{1'b0}}};
// Only beat addresses leave the port (the lane and the engine pick their bytes from the beat).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_low = ^{s_lane_araddr[OW-1:0], s_lane_awaddr[OW-1:0], s_eng_addr[OW-1:0], s_mv_araddr[OW-1:0],
    s_mv_awaddr[OW-1:0]};
/* verilator lint_on UNUSEDSIGNAL */

assign s_eng_ready = (cmd_rd && m_axi_arready) || (cmd_wr && aw_ok && w_ok);
assign m_eng_done = own_eng && ((state_reg == P_RDATA && m_axi_rvalid && !r_lane) || (state_reg == P_BRESP && m_axi_bvalid));
assign m_eng_rdata = m_axi_rdata;

always_ff @(posedge clk) begin
    case (state_reg)
        P_IDLE, P_WRITE: begin
            if (cmd_rd && m_axi_arready) begin
                state_reg <= P_RDATA;
            end else if (cmd_wr) begin
                if (aw_ok && w_ok) begin
                    aw_done_reg <= 1'b0;
                    w_done_reg <= 1'b0;
                    state_reg <= P_BRESP;
                end else begin
                    aw_done_reg <= aw_ok;
                    w_done_reg <= w_ok;
                    state_reg <= P_WRITE;
                end
            end
        end
        P_RDATA: if (own_eng && m_axi_rvalid && !r_lane) state_reg <= P_IDLE;
        P_BRESP: if (own_eng && m_axi_bvalid) state_reg <= P_IDLE;
        default: state_reg <= P_IDLE;
    endcase
    // (Also the lane's own AR: the port may pass to a sharing owner while it waits.)
    ar_lane_reg <= (ar_lane || own_lane) && s_lane_arvalid && !m_axi_arready;
    if (rst) begin
        ar_lane_reg <= 1'b0;
        state_reg <= P_IDLE;
        aw_done_reg <= 1'b0;
        w_done_reg <= 1'b0;
    end
end

// Write channels: the ring DMA, the data mover, the lane or the engine (the bucket reader only reads).
assign m_axi_awid = own_ring ? s_ring_awid : {ID_WIDTH{1'b0}};
assign m_axi_awaddr = own_ring ? s_ring_awaddr : own_mv ? {s_mv_awaddr[ADDR_WIDTH-1:OW], {OW{1'b0}}}
    : own_lane ? {s_lane_awaddr[ADDR_WIDTH-1:OW], {OW{1'b0}}} : eng_beat;
assign m_axi_awlen = own_ring ? s_ring_awlen : own_mv ? s_mv_awlen : 8'd0;
assign m_axi_awsize = own_ring ? s_ring_awsize : OW[2:0];
assign m_axi_awburst = own_ring ? s_ring_awburst : 2'b01;
assign m_axi_awvalid = own_ring ? s_ring_awvalid : own_mv ? s_mv_awvalid : own_lane ? s_lane_awvalid : eng_awvalid;
assign m_axi_wdata = own_ring ? s_ring_wdata : own_mv ? s_mv_wdata : own_lane ? s_lane_wdata : s_eng_wdata;
assign m_axi_wstrb = own_ring ? s_ring_wstrb : own_mv ? s_mv_wstrb : own_lane ? s_lane_wstrb : s_eng_wstrb;
assign m_axi_wlast = own_ring ? s_ring_wlast : own_mv ? s_mv_wlast : 1'b1;
assign m_axi_wvalid = own_ring ? s_ring_wvalid : own_mv ? s_mv_wvalid : own_lane ? s_lane_wvalid : eng_wvalid;
assign m_axi_bready = own_ring ? s_ring_bready : own_mv ? s_mv_bready : own_lane ? s_lane_bready
    : (own_eng && state_reg == P_BRESP);
assign s_lane_awready = own_lane && m_axi_awready;
assign s_lane_wready = own_lane && m_axi_wready;
assign s_lane_bvalid = own_lane && m_axi_bvalid;
assign s_ring_awready = own_ring && m_axi_awready;
assign s_ring_wready = own_ring && m_axi_wready;
assign s_ring_bvalid = own_ring && m_axi_bvalid;
assign s_mv_awready = own_mv && m_axi_awready;
assign s_mv_wready = own_mv && m_axi_wready;
assign s_mv_bvalid = own_mv && m_axi_bvalid;
assign s_ring_bid = m_axi_bid;
assign s_ring_bresp = m_axi_bresp;

// Read channels: every client.
// (`ar_lane`: the lane's AR beside the owner, `r_lane`: an R beat of the lane's id then.)
assign m_axi_arid = own_ring ? s_ring_arid : (ar_lane || own_lane) ? LID : (own_ptf ? s_ptf_arid : {ID_WIDTH{1'b0}});
assign m_axi_araddr = own_ring ? s_ring_araddr : (own_ptf && !ar_lane) ? s_ptf_araddr
    : (own_mv && !ar_lane) ? {s_mv_araddr[ADDR_WIDTH-1:OW], {OW{1'b0}}}
    : (own_lane || ar_lane) ? {s_lane_araddr[ADDR_WIDTH-1:OW], {OW{1'b0}}} : eng_beat;
assign m_axi_arlen = own_ring ? s_ring_arlen : (own_ptf && !ar_lane) ? s_ptf_arlen : (own_mv && !ar_lane) ? s_mv_arlen
    : 8'd0;
assign m_axi_arsize = own_ring ? s_ring_arsize : ((own_ptf && !ar_lane) ? s_ptf_arsize : OW[2:0]);
assign m_axi_arburst = own_ring ? s_ring_arburst : ((own_ptf && !ar_lane) ? s_ptf_arburst : 2'b01);
assign m_axi_arvalid = own_ring ? s_ring_arvalid : ar_lane ? s_lane_arvalid : own_ptf ? s_ptf_arvalid
    : own_mv ? s_mv_arvalid : own_lane ? s_lane_arvalid : cmd_rd;
assign m_axi_rready = own_ring ? s_ring_rready : r_lane ? s_lane_rready : own_ptf ? s_ptf_rready
    : own_mv ? s_mv_rready : own_lane ? s_lane_rready : (own_eng && state_reg == P_RDATA);
assign s_lane_arready = (own_lane || ar_lane) && m_axi_arready;
assign s_lane_rvalid = (own_lane || r_lane) && m_axi_rvalid;
assign s_ptf_arready = own_ptf && !lane_locked && m_axi_arready;
assign s_ptf_rvalid = own_ptf && !r_lane && m_axi_rvalid;
assign s_ring_arready = own_ring && m_axi_arready;
assign s_ring_rvalid = own_ring && m_axi_rvalid;
assign s_mv_arready = own_mv && !lane_locked && m_axi_arready;
assign s_mv_rvalid = own_mv && !r_lane && m_axi_rvalid;
assign s_lane_rdata = m_axi_rdata;
assign {s_ptf_rid, s_ptf_rdata, s_ptf_rresp, s_ptf_rlast} = {m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast};
assign {s_ring_rid, s_ring_rdata, s_ring_rresp, s_ring_rlast} = {m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast};

endmodule

`resetall
