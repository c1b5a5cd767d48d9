// edm_pim_sched_ring: scalable EDM priority iterative-PIM scheduler (queues in block memories).
//
// Same decisions as edm_pim_sched and the edm-pim crate (FCFS/SRPT, rotated priority-encoder
// tie order, chunks min(CHUNK, remaining), per-pair FIFO of DEPTH messages), but with the
// storage in memories and the N x N request/grant logic time-multiplexed over a ring of
// PORTS edm_pim_sched_ring_port instances, so the logic grows as N * LANES and the state as
// N^2 * DEPTH queue words of block memory. With STEPS = ceil(PORTS / LANES), one iteration takes
// 3 * STEPS + 4 cycles:
//   request (STEPS + 1): each destination scans its head memory in rotated order, LANES
//                        sources per cycle, keeping the best eligible head (source busy flags
//                        travel the ring beside the scan);
//   grant (STEPS + 1):   the requests travel the ring; each source keeps the best one for it;
//   return (STEPS + 1):  the grants travel the ring back to the destinations;
//   commit (1):          queues, busy flags and outputs are updated.
// LANES = PORTS gives 7 cycles per iteration with N^2 comparators (the 3-cycle edm_pim_sched
// keeps sorted lists instead).
// Notifications are taken when notif_ready is high (between iterations); a notification in
// an iteration's start cycle is not accepted (it would race the scan) and must be held.
// After reset the memories are cleared in PORTS cycles (iter_busy high, notif_ready low);
// iter_start is taken only while iter_busy is low. Busy flags are sampled in the start cycle
// (as in edm_pim_sched); a release during an iteration takes effect at once but is seen by the
// next iteration, and the commit of a match wins over a release of the same port side.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_pim_sched_ring #(
    parameter PORTS = 4,
    parameter DEPTH = 6,
    parameter SRPT = 0,
    parameter CHUNK = 256,
    parameter TAG_W = 16,
    parameter LANES = 1,
    parameter PW = (PORTS > 1) ? $clog2(PORTS) : 1
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    notif_valid,
    output wire                    notif_ready,
    input  wire [PW-1:0]           notif_src,
    input  wire [PW-1:0]           notif_dst,
    input  wire [31:0]             notif_bytes,
    input  wire [TAG_W-1:0]        notif_tag,
    input  wire [31:0]             notif_time,
    output reg                     notif_refused,

    input  wire                    rel_src_valid,
    input  wire [PW-1:0]           rel_src,
    input  wire                    rel_dst_valid,
    input  wire [PW-1:0]           rel_dst,

    input  wire                    iter_start,
    output wire                    iter_busy,
    output reg                     iter_done,

    output wire [PORTS-1:0]        req_valid,
    output wire [PORTS*PW-1:0]     req_src,
    output wire [PORTS-1:0]        match_valid,
    output wire [PORTS*PW-1:0]     match_dst,
    output wire [PORTS*TAG_W-1:0]  match_tag,
    output wire [PORTS*32-1:0]     match_len,
    output wire [PORTS-1:0]        match_last
);

localparam RW = 1 + 2 * PW + 64 + TAG_W;
localparam CNT_W = PW + 1;
localparam STEPS = (PORTS + LANES - 1) / LANES;

localparam [2:0]
    ST_CLEAR = 3'd0,
    ST_IDLE = 3'd1,
    ST_REQ = 3'd2,
    ST_GLOAD = 3'd3,
    ST_GSCAN = 3'd4,
    ST_RLOAD = 3'd5,
    ST_RSCAN = 3'd6,
    ST_COMMIT = 3'd7;

initial begin
    if (PORTS < 2) begin
        $error("PORTS must be at least 2");
        $finish;
    end
    if (DEPTH < 1) begin
        $error("DEPTH must be at least 1");
        $finish;
    end
    if (CHUNK < 1) begin
        $error("CHUNK must be positive");
        $finish;
    end
    if (LANES < 1 || LANES > PORTS || (LANES & (LANES - 1)) != 0) begin
        $error("LANES must be a power of two in 1..PORTS");
        $finish;
    end
end

reg [2:0]        stage_reg;
reg [CNT_W-1:0]  cnt_reg;

wire last_clear = cnt_reg == CNT_W'(PORTS - 1);
wire last_step = cnt_reg == CNT_W'(STEPS);
wire idle = stage_reg == ST_IDLE;
wire begin_iter = idle && iter_start;

assign iter_busy = !idle;
assign notif_ready = idle && !iter_start;
wire notif_fire = notif_valid && notif_ready;

wire clear_en = stage_reg == ST_CLEAR;
wire req_scan = stage_reg == ST_REQ;
wire req_read = begin_iter || (req_scan && !last_step);
wire gnt_load = stage_reg == ST_GLOAD;
wire gnt_scan = stage_reg == ST_GSCAN;
wire ret_load = stage_reg == ST_RLOAD;
wire ret_scan = stage_reg == ST_RSCAN;
wire commit = stage_reg == ST_COMMIT;
// step: read address in the request phase; scan index + 1 when comparing (all phases)
wire [CNT_W-1:0] step = begin_iter ? {CNT_W{1'b0}} : cnt_reg;

wire [PORTS-1:0]    ok;
wire [RW-1:0]       ring [0:PORTS-1];

genvar i, j;
generate
    for (i = 0; i < PORTS; i = i + 1) begin : port
        wire [LANES*RW-1:0] nx_ring;
        for (j = 0; j < LANES; j = j + 1) begin : lane
            assign nx_ring[j*RW +: RW] = ring[(i + 1 + j) % PORTS];
        end
        edm_pim_sched_ring_port #(
            .PORTS(PORTS),
            .DEPTH(DEPTH),
            .SRPT(SRPT),
            .CHUNK(CHUNK),
            .TAG_W(TAG_W),
            .LANES(LANES),
            .PW(PW),
            .RW(RW)
        ) port_inst (
            .clk(clk),
            .rst(rst),
            .me(PW'(i)),
            .clear_en(clear_en),
            .iter_begin(begin_iter),
            .req_scan(req_scan),
            .req_read(req_read),
            .gnt_load(gnt_load),
            .gnt_scan(gnt_scan),
            .ret_load(ret_load),
            .ret_scan(ret_scan),
            .commit(commit),
            .step(step),
            .notif_fire(notif_fire),
            .notif_src(notif_src),
            .notif_dst(notif_dst),
            .notif_bytes(notif_bytes),
            .notif_tag(notif_tag),
            .notif_time(notif_time),
            .notif_ok(ok[i]),
            .rel_src_valid(rel_src_valid),
            .rel_src(rel_src),
            .rel_dst_valid(rel_dst_valid),
            .rel_dst(rel_dst),
            .nx_ring(nx_ring),
            .ring(ring[i]),
            .req_valid(req_valid[i]),
            .req_src(req_src[i*PW +: PW]),
            .match_valid(match_valid[i]),
            .match_dst(match_dst[i*PW +: PW]),
            .match_tag(match_tag[i*TAG_W +: TAG_W]),
            .match_len(match_len[i*32 +: 32]),
            .match_last(match_last[i])
        );
    end
endgenerate

always_ff @(posedge clk) begin
    iter_done <= 1'b0;
    notif_refused <= notif_fire && ok == 0;
    cnt_reg <= cnt_reg + 1'b1;
    case (stage_reg)
        ST_CLEAR: begin
            if (last_clear) begin
                stage_reg <= ST_IDLE;
            end
        end
        ST_IDLE: begin
            cnt_reg <= CNT_W'(1);
            if (iter_start) begin
                stage_reg <= ST_REQ;
            end
        end
        ST_REQ: begin
            if (last_step) begin
                stage_reg <= ST_GLOAD;
            end
        end
        ST_GLOAD: begin
            cnt_reg <= CNT_W'(1);
            stage_reg <= ST_GSCAN;
        end
        ST_GSCAN: begin
            if (last_step) begin
                stage_reg <= ST_RLOAD;
            end
        end
        ST_RLOAD: begin
            cnt_reg <= CNT_W'(1);
            stage_reg <= ST_RSCAN;
        end
        ST_RSCAN: begin
            if (last_step) begin
                stage_reg <= ST_COMMIT;
            end
        end
        default: begin
            iter_done <= 1'b1;
            stage_reg <= ST_IDLE;
        end
    endcase

    if (rst) begin
        stage_reg <= ST_CLEAR;
        cnt_reg <= 0;
        iter_done <= 1'b0;
        notif_refused <= 1'b0;
    end
end

endmodule

`resetall
