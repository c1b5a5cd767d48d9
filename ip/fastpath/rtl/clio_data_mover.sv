// clio_data_mover: the engine's read/write data lane: a byte range of DRAM read or written in AXI4 INCR bursts, one beat per cycle.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A command names a physical byte range [`s_cmd_addr`, `s_cmd_addr` +
// `s_cmd_len`) (`s_cmd_len` > 0) and a direction; it is taken on
// `s_cmd_valid && s_cmd_ready`. The range is cut into INCR bursts of
// full-width beats that never cross a 4 KiB boundary (AXI4).
//
// Read: read commands queue (up to RD_QUEUE of them in flight): their
// bursts are issued back to back as soon as a command is taken, ahead of
// the data, so the next command's first beats follow the current one's
// last beat without a gap (one beat per cycle across commands, the DDR's
// latency paid once). Every R beat leaves on the read stream
// (`m_rd_valid`/`m_rd_ready`, `m_axi_rready` is `m_rd_ready`) as the
// bytes of its command's range it holds, moved down to lane 0
// (`m_rd_data`), `m_rd_len` of them: a command's first beat holds the
// range's bytes from its start lane up, its last one its tail, and that
// last beat carries `m_rd_mark` if the command was given with
// `s_cmd_mark` (the engine marks a response packet's last command). The
// consumer appends them in order (the engine into the response builder).
//
// Write: one command's bursts at a time, after every read has been handed
// over; the next write command is taken (into a one-command register) while
// the current one's last burst streams its W beats, and its burst's AW
// follows that burst's last beat, while the Bs of earlier bursts are still
// outstanding (up to WR_BURSTS bursts: AXI returns Bs in order on one id,
// so a queue of "ends its command" flags says which B completes a command). A read waits
// for every outstanding B (the DDR does not order a read after a write on
// its own). The source is a window the user keeps at the range's next byte
// (`s_wr_data`, lane 0 = next byte, combinational from the user's source
// position); every W beat accepted takes `m_wr_take` bytes from it
// (`m_wr_take_valid` that cycle: the user advances its position by that
// many), moved up to their DRAM lanes with the matching strobes.
//
// `m_done` pulses in the cycle a command ends: with a read's last beat
// handed over, or with the B of a write's last burst (in command order).
// `m_idle`: no command in the unit (no burst to issue, no beat to hand
// over, no B to wait for).
// Ids are 0 and responses are not checked (the DDR never errs).
module clio_data_mover #(
    parameter DATA_WIDTH = 512,       // beat width (bits)
    parameter ADDR_WIDTH = 32,        // AXI address width
    parameter LEN_WIDTH = 16,         // command length width (bytes)
    parameter ID_WIDTH = 4,           // AXI id width
    parameter RD_QUEUE = 4,           // read commands in flight (power of two)
    parameter WR_BURSTS = 4           // write bursts whose B is outstanding (power of two)
) (
    input  wire                    clk,
    input  wire                    rst,

    // Command.
    input  wire [ADDR_WIDTH-1:0]   s_cmd_addr,
    input  wire [LEN_WIDTH-1:0]    s_cmd_len,
    input  wire                    s_cmd_write,
    input  wire                    s_cmd_mark,
    input  wire                    s_cmd_valid,
    output wire                    s_cmd_ready,
    output wire                    m_done,
    output wire                    m_idle,

    // Read stream.
    output wire [DATA_WIDTH-1:0]   m_rd_data,
    output wire [$clog2(DATA_WIDTH/8):0] m_rd_len,
    output wire                    m_rd_mark,
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
localparam QW = $clog2(RD_QUEUE);
localparam BW = $clog2(WR_BURSTS);

initial begin
    if ((1 << OW) != BYTES || BYTES < 16 || BYTES > 4096 || ADDR_WIDTH <= 12) begin
        $error("Error: DATA_WIDTH/8 must be a power of two in 16..4096, ADDR_WIDTH above 12 (instance %m)");
        $finish;
    end
    if (RD_QUEUE < 2 || (1 << QW) != RD_QUEUE) begin
        $error("Error: RD_QUEUE must be a power of two, at least 2 (instance %m)");
        $finish;
    end
    if (WR_BURSTS < 2 || (1 << BW) != WR_BURSTS) begin
        $error("Error: WR_BURSTS must be a power of two, at least 2 (instance %m)");
        $finish;
    end
end

// Controller states (the address side of reads, and writes).
typedef enum logic [2:0] {
    M_IDLE = 3'd0,    // no burst to issue
    M_AR = 3'd1,      // read bursts of the last command taken offered
    M_AW = 3'd3,      // write burst address offered
    M_W = 3'd4        // write beats streaming in (its B is counted below)
} state_t;

state_t                 state_reg = M_IDLE;
reg [ADDR_WIDTH-1:0]    addr_reg = 0;       // next byte of the range (burst side)
reg [LEN_WIDTH-1:0]     rem_reg = 0;        // bytes of the write range not yet written
reg [8:0]               left_reg = 0;       // beats left in the current write burst
reg                     w_end_reg = 1'b0;   // the current write burst ends its command
// The next write command, taken during the current one's last burst.
reg                     nx_valid_reg = 1'b0;
reg [ADDR_WIDTH-1:0]    nx_addr_reg = 0;
reg [LEN_WIDTH-1:0]     nx_len_reg = 0;
// Beats from addr_reg's beat to the range's last beat, minus one: computed
// as the command is taken and lowered by each burst, so the next burst's
// length is a compare and a select on registers (not a chain of adds).
localparam RLW = LEN_WIDTH - OW + 1;
reg [RLW-1:0]           rl_reg = 0;
reg [RLW-1:0]           nx_rl_reg = 0;

// Read commands in flight, oldest first, each as its beats rather than its
// byte range (worked out as it is taken, so the R side only counts beats):
// beats - 1, the start lane, the bytes of its first beat (all of them if it
// has one) and of its last, and its mark. The oldest one's beats handed over.
reg [RLW-1:0]           rq_beats [0:RD_QUEUE-1];
reg [OW-1:0]            rq_lane [0:RD_QUEUE-1];
reg [OW:0]              rq_k1 [0:RD_QUEUE-1];
reg [OW:0]              rq_kl [0:RD_QUEUE-1];
reg                     rq_mark [0:RD_QUEUE-1];
reg [QW:0]              rq_wr_reg = 0, rq_rd_reg = 0;
reg [RLW-1:0]           r_beat_reg = 0;
reg                     r_first_reg = 1'b1;  // r_beat_reg == 0
wire [QW:0]             rq_count = rq_wr_reg - rq_rd_reg;
wire                    rq_empty = rq_count == 0;
wire                    rq_full = rq_count == RD_QUEUE[QW:0];
wire [QW-1:0]           rq_h = rq_rd_reg[QW-1:0];
initial begin
    for (int i = 0; i < RD_QUEUE; i = i + 1) begin
        rq_beats[i] = 0;
        rq_lane[i] = 0;
        rq_k1[i] = 0;
        rq_kl[i] = 0;
        rq_mark[i] = 1'b0;
    end
end

// The next burst: from addr_reg's beat to the range's last beat, cut at the
// 4 KiB boundary. Beats to the page's end, minus one, are the inverted beat
// bits; after a burst that is not the range's last, addr_reg is on a page
// boundary (the burst ran to it), so the page side needs no register.
wire [RLW-1:0]          pl = {{(RLW-12+OW){1'b0}}, ~addr_reg[11:OW]};
wire                    burst_last = rl_reg <= pl;   // the burst reaches the range's end
wire [7:0]              burst_len = burst_last ? rl_reg[7:0] : pl[7:0];   // AXI LEN (beats - 1)
wire [ADDR_WIDTH-1:0]   beat_addr = {addr_reg[ADDR_WIDTH-1:OW], {OW{1'b0}}};
// The next page (where a burst that is not the range's last ends).
wire [ADDR_WIDTH-1:0]   next_page = {addr_reg[ADDR_WIDTH-1:12] + 1'b1, 12'd0};
// rl for the burst after a full-page one: this one's pl + 1 beats fewer.
/* verilator lint_off WIDTH */
wire [RLW-1:0]          rl_after = rl_reg - pl - 1'b1;
// At the command: beats - 1 = (lane + len - 1) >> OW.
wire [LEN_WIDTH:0]      cmd_end = s_cmd_len + s_cmd_addr[OW-1:0] - 1'b1;
/* verilator lint_on WIDTH */

// The current write beat's bytes: from addr_reg's lane to the beat's end or the range's end.
wire [OW-1:0]           lane = addr_reg[OW-1:0];
wire [OW:0]             to_end = BYTES[OW:0] - {1'b0, lane};
wire [OW:0]             k = {{(LEN_WIDTH-OW-1){1'b0}}, to_end} > rem_reg ? rem_reg[OW:0] : to_end;
wire [BYTES-1:0]        k_mask = k[OW] ? {BYTES{1'b1}} : ~({BYTES{1'b1}} << k[OW-1:0]);

// The current read beat's bytes, of the oldest command in flight: its
// first beat from the start lane, full beats, its last beat's head.
wire                    r_first = r_first_reg;
wire                    r_last = r_beat_reg == rq_beats[rq_h];
wire [OW-1:0]           r_lane = rq_lane[rq_h] & {OW{r_first}};
wire [OW:0]             r_k = r_first ? rq_k1[rq_h] : r_last ? rq_kl[rq_h] : BYTES[OW:0];
// The command as it is taken: its first beat's bytes (to the beat's end, or
// all if it has one beat) and its last beat's (through cmd_end's lane).
wire [OW:0]             cmd_k1 = cmd_end[LEN_WIDTH:OW] == 0 ? s_cmd_len[OW:0] : BYTES[OW:0] - {1'b0, s_cmd_addr[OW-1:0]};
wire [OW:0]             cmd_kl = {1'b0, cmd_end[OW-1:0]} + 1'b1;

wire rd_beat = !rq_empty && m_axi_rvalid && m_rd_ready;
wire wr_beat = state_reg == M_W && m_axi_wready;

// Write bursts whose B is outstanding, oldest first: a bit each, set if the
// burst ends its command (its B ends the command). A burst enters with its
// AW (no AW while the queue is full) and leaves with its B.
reg [WR_BURSTS-1:0]     bq_end = 0;
reg [BW:0]              bq_wr_reg = 0, bq_rd_reg = 0;
wire [BW:0]             bq_count = bq_wr_reg - bq_rd_reg;
wire                    bq_empty = bq_count == 0;
wire                    bq_full = bq_count == WR_BURSTS[BW:0];
wire                    aw_go = state_reg == M_AW && !bq_full && m_axi_awready;
wire                    b_go = !bq_empty && m_axi_bvalid;

// Ids are 0, the DDR never errs, and the byte count ends a command (not rlast).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_resp = ^{m_axi_bid, m_axi_bresp, m_axi_rid, m_axi_rresp, m_axi_rlast};
/* verilator lint_on UNUSEDSIGNAL */

// A read waits for a free queue entry and every outstanding B, a write for
// every read to be handed over; the next write also enters during the
// current one's last burst (no read is taken meanwhile).
wire   idle_in = state_reg == M_IDLE && !nx_valid_reg;
assign s_cmd_ready = s_cmd_write ? (idle_in && rq_empty) || (state_reg == M_W && w_end_reg && !nx_valid_reg)
                                 : idle_in && !rq_full && bq_empty;
wire   cmd_go = s_cmd_valid && s_cmd_ready;
wire   nx_go = cmd_go && state_reg == M_W;       // taken into the next-command register
assign m_done = (rd_beat && r_last) || (b_go && bq_end[bq_rd_reg[BW-1:0]]);
assign m_idle = idle_in && rq_empty && bq_empty;

assign m_rd_data = m_axi_rdata >> {r_lane, 3'd0};
assign m_rd_len = r_k;
assign m_rd_mark = r_last && rq_mark[rq_h];
assign m_rd_valid = !rq_empty && m_axi_rvalid;
assign m_axi_rready = !rq_empty && m_rd_ready;

assign m_wr_take = k;
assign m_wr_take_valid = wr_beat;

assign m_axi_arid = {ID_WIDTH{1'b0}};
assign m_axi_araddr = beat_addr;
assign m_axi_arlen = burst_len;
assign m_axi_arsize = OW[2:0];
assign m_axi_arburst = 2'b01;
assign m_axi_arvalid = state_reg == M_AR;

assign m_axi_awid = {ID_WIDTH{1'b0}};
assign m_axi_awaddr = beat_addr;
assign m_axi_awlen = burst_len;
assign m_axi_awsize = OW[2:0];
assign m_axi_awburst = 2'b01;
assign m_axi_awvalid = state_reg == M_AW && !bq_full;
assign m_axi_wdata = s_wr_data << {lane, 3'd0};
assign m_axi_wstrb = k_mask << lane;
assign m_axi_wlast = left_reg == 9'd1;
assign m_axi_wvalid = state_reg == M_W;
assign m_axi_bready = !bq_empty;

// The read queue: a command enters as it is taken and leaves with its last beat.
always_ff @(posedge clk) begin
    if (cmd_go && !s_cmd_write) begin
        rq_beats[rq_wr_reg[QW-1:0]] <= cmd_end[LEN_WIDTH:OW];
        rq_lane[rq_wr_reg[QW-1:0]] <= s_cmd_addr[OW-1:0];
        rq_k1[rq_wr_reg[QW-1:0]] <= cmd_k1;
        rq_kl[rq_wr_reg[QW-1:0]] <= cmd_kl;
        rq_mark[rq_wr_reg[QW-1:0]] <= s_cmd_mark;
        rq_wr_reg <= rq_wr_reg + 1'b1;
    end
    if (rd_beat) begin
        if (r_last) begin
            r_beat_reg <= 0;
            r_first_reg <= 1'b1;
            rq_rd_reg <= rq_rd_reg + 1'b1;
        end else begin
            r_beat_reg <= r_beat_reg + 1'b1;
            r_first_reg <= 1'b0;
        end
    end
    if (rst) begin
        rq_wr_reg <= 0;
        rq_rd_reg <= 0;
        r_beat_reg <= 0;
        r_first_reg <= 1'b1;
    end
end

// The B queue.
always_ff @(posedge clk) begin
    if (aw_go) begin
        bq_end[bq_wr_reg[BW-1:0]] <= burst_last;
        bq_wr_reg <= bq_wr_reg + 1'b1;
    end
    if (b_go) bq_rd_reg <= bq_rd_reg + 1'b1;
    if (rst) begin
        bq_wr_reg <= 0;
        bq_rd_reg <= 0;
    end
end

always_ff @(posedge clk) begin
    if (nx_go) begin
        nx_valid_reg <= 1'b1;
        nx_addr_reg <= s_cmd_addr;
        nx_len_reg <= s_cmd_len;
        nx_rl_reg <= cmd_end[LEN_WIDTH:OW];
    end
    case (state_reg)
        M_IDLE: begin
            if (nx_valid_reg) begin
                // Taken in the cycle the previous write's last beat went.
                addr_reg <= nx_addr_reg;
                rem_reg <= nx_len_reg;
                rl_reg <= nx_rl_reg;
                nx_valid_reg <= 1'b0;
                state_reg <= M_AW;
            end else if (cmd_go) begin
                addr_reg <= s_cmd_addr;
                rem_reg <= s_cmd_len;
                rl_reg <= cmd_end[LEN_WIDTH:OW];
                state_reg <= s_cmd_write ? M_AW : M_AR;
            end
        end
        M_AR: begin
            // Bursts back to back; the command's beats are counted on the R side.
            if (m_axi_arready) begin
                addr_reg <= next_page;
                rl_reg <= rl_after;
                if (burst_last) state_reg <= M_IDLE;
            end
        end
        M_AW: begin
            if (aw_go) begin
                left_reg <= {1'b0, burst_len} + 9'd1;
                w_end_reg <= burst_last;
                rl_reg <= rl_after;    // used only if this burst is not the last
                state_reg <= M_W;
            end
        end
        M_W: begin
            if (wr_beat) begin
                addr_reg <= addr_reg + {{(ADDR_WIDTH-OW-1){1'b0}}, k};
                rem_reg <= rem_reg - {{(LEN_WIDTH-OW-1){1'b0}}, k};
                left_reg <= left_reg - 1'b1;
                // The burst's last beat: the next burst's address, the next
                // command's if one was taken, or idle (the Bs are counted in
                // the queue).
                if (left_reg == 9'd1) begin
                    if (!w_end_reg) begin
                        state_reg <= M_AW;
                    end else if (nx_valid_reg) begin
                        addr_reg <= nx_addr_reg;
                        rem_reg <= nx_len_reg;
                        rl_reg <= nx_rl_reg;
                        nx_valid_reg <= 1'b0;
                        state_reg <= M_AW;
                    end else begin
                        state_reg <= M_IDLE;
                    end
                end
            end
        end
        default: state_reg <= M_IDLE;
    endcase
    if (rst) begin
        state_reg <= M_IDLE;
        nx_valid_reg <= 1'b0;
        addr_reg <= 0;
        rem_reg <= 0;
        left_reg <= 0;
        rl_reg <= 0;
    end
end

endmodule

`resetall
