// clio_axi_ram: behavioural DDR model for simulation: an AXI4 slave over a word array.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// INCR bursts of full-width beats, byte strobes on writes. Address `BASE + i * DATA_WIDTH/8` is word i;
// accesses outside the array read zero and are not written. The array is
// public to the simulation harness (initial image, final image).
module clio_axi_ram #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter ID_WIDTH = 4,
    parameter WORDS = 65536,
    parameter [ADDR_WIDTH-1:0] BASE = 0,
    parameter READ_LATENCY = 4,
    parameter WRITE_LATENCY = 2
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [ID_WIDTH-1:0]     s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]   s_axi_awaddr,
    input  wire [7:0]              s_axi_awlen,
    input  wire [2:0]              s_axi_awsize,
    input  wire [1:0]              s_axi_awburst,
    input  wire                    s_axi_awvalid,
    output wire                    s_axi_awready,
    input  wire [DATA_WIDTH-1:0]   s_axi_wdata,
    input  wire [DATA_WIDTH/8-1:0] s_axi_wstrb,
    input  wire                    s_axi_wlast,
    input  wire                    s_axi_wvalid,
    output wire                    s_axi_wready,
    output wire [ID_WIDTH-1:0]     s_axi_bid,
    output wire [1:0]              s_axi_bresp,
    output wire                    s_axi_bvalid,
    input  wire                    s_axi_bready,
    input  wire [ID_WIDTH-1:0]     s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]   s_axi_araddr,
    input  wire [7:0]              s_axi_arlen,
    input  wire [2:0]              s_axi_arsize,
    input  wire [1:0]              s_axi_arburst,
    input  wire                    s_axi_arvalid,
    output wire                    s_axi_arready,
    output wire [ID_WIDTH-1:0]     s_axi_rid,
    output wire [DATA_WIDTH-1:0]   s_axi_rdata,
    output wire [1:0]              s_axi_rresp,
    output wire                    s_axi_rlast,
    output wire                    s_axi_rvalid,
    input  wire                    s_axi_rready
);

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);
localparam WW = $clog2(WORDS);

initial begin
    if ((1 << OW) != BYTES || (1 << WW) != WORDS) begin
        $error("Error: DATA_WIDTH/8 and WORDS must be powers of two (instance %m)");
        $finish;
    end
end

reg [DATA_WIDTH-1:0] mem [0:WORDS-1] /* verilator public_flat_rw */;

// Reads: bursts are queued (up to 8); the first beat of a burst is served
// READ_LATENCY cycles after it was accepted, then one beat per cycle, so
// back-to-back single-beat reads flow at one per cycle. Writes: one burst's
// beats at a time, each burst acknowledged (B, in order) WRITE_LATENCY cycles
// after its last beat; the next burst's address is taken meanwhile (up to
// BQ Bs outstanding, as a DDR controller's write queue does), and an address
// is not accepted while a burst's beats are coming in (masters here never
// overlap a read and a write of the same address: a read waits for its B).
localparam QD = 8;
reg [ADDR_WIDTH-1:0] q_word [0:QD-1];
reg [7:0]            q_len [0:QD-1];
reg [ID_WIDTH-1:0]   q_id [0:QD-1];
reg [31:0]           q_time [0:QD-1];
reg [3:0]            q_wr = 0, q_rd = 0;
reg [31:0]           now = 0;
reg [7:0]            beat_reg = 0;
wire                 q_empty = q_wr == q_rd;
wire                 q_full = (q_wr - q_rd) == QD;

// Write channel states: waiting for an address, taking the beats. The Bs
// wait in a queue (id, cycle from which it is offered).
typedef enum logic [0:0] {
    W_IDLE = 1'd0,
    W_DATA = 1'd1
} wstate_t;
localparam BQ = 4;
reg [ID_WIDTH-1:0]   bq_id [0:BQ-1];
reg [31:0]           bq_time [0:BQ-1];
reg [2:0]            bq_wr = 0, bq_rd = 0;
wire                 bq_empty = bq_wr == bq_rd;
wire                 bq_full = (bq_wr - bq_rd) == BQ;
wire [1:0]           bq_head = bq_rd[1:0];
wstate_t             wstate_reg = W_IDLE;
reg [ID_WIDTH-1:0]   wid_reg = 0;
reg [ADDR_WIDTH-1:0] wword_reg = 0;
reg [7:0]            wleft_reg = 0;

wire [ADDR_WIDTH-1:0] ar_word = (s_axi_araddr - BASE) >> OW;
wire [ADDR_WIDTH-1:0] aw_word = (s_axi_awaddr - BASE) >> OW;
wire [2:0]            q_head = q_rd[2:0];
wire [ADDR_WIDTH-1:0] r_word = q_word[q_head] + {{(ADDR_WIDTH-8){1'b0}}, beat_reg};
wire                  r_ready_now = !q_empty && (now - q_time[q_head]) >= READ_LATENCY;
wire                  w_in_range = wword_reg < WORDS;

assign s_axi_arready = !q_full && wstate_reg == W_IDLE;
assign s_axi_awready = wstate_reg == W_IDLE && q_empty && !s_axi_arvalid && !bq_full;
assign s_axi_wready = wstate_reg == W_DATA;
assign s_axi_rvalid = r_ready_now;
assign s_axi_rdata = (r_ready_now && r_word < WORDS) ? mem[r_word[WW-1:0]] : {DATA_WIDTH{1'b0}};
assign s_axi_rlast = beat_reg == q_len[q_head];
assign s_axi_rid = q_id[q_head];
assign s_axi_rresp = 2'b00;
assign s_axi_bvalid = !bq_empty && now >= bq_time[bq_head];
assign s_axi_bid = bq_id[bq_head];
assign s_axi_bresp = 2'b00;

always_ff @(posedge clk) begin
    integer i;  // loop index local to the block
    now <= now + 1;
    if (s_axi_arvalid && s_axi_arready) begin
        q_word[q_wr[2:0]] <= ar_word;
        q_len[q_wr[2:0]] <= s_axi_arlen;
        q_id[q_wr[2:0]] <= s_axi_arid;
        q_time[q_wr[2:0]] <= now;
        q_wr <= q_wr + 1'b1;
    end
    if (r_ready_now && s_axi_rready) begin
        if (beat_reg == q_len[q_head]) begin
            beat_reg <= 0;
            q_rd <= q_rd + 1'b1;
        end else begin
            beat_reg <= beat_reg + 1'b1;
        end
    end
    case (wstate_reg)
        W_IDLE: begin
            if (s_axi_awvalid && s_axi_awready) begin
                wid_reg <= s_axi_awid;
                wword_reg <= aw_word;
                wleft_reg <= s_axi_awlen;
                wstate_reg <= W_DATA;
            end
        end
        W_DATA: begin
            if (s_axi_wvalid) begin
                if (w_in_range) begin
                    for (i = 0; i < BYTES; i = i + 1) begin
                        if (s_axi_wstrb[i]) mem[wword_reg[WW-1:0]][i*8 +: 8] <= s_axi_wdata[i*8 +: 8];
                    end
                end
                wword_reg <= wword_reg + 1'b1;
                wleft_reg <= wleft_reg - 1'b1;
                if (wleft_reg == 0 || s_axi_wlast) begin
                    // Offered WRITE_LATENCY + 1 cycles after the last beat.
                    bq_id[bq_wr[1:0]] <= wid_reg;
                    bq_time[bq_wr[1:0]] <= now + WRITE_LATENCY + 1;
                    bq_wr <= bq_wr + 1'b1;
                    wstate_reg <= W_IDLE;
                end
            end
        end
        default: wstate_reg <= W_IDLE;
    endcase
    if (s_axi_bvalid && s_axi_bready) bq_rd <= bq_rd + 1'b1;
    if (rst) begin
        q_wr <= 0;
        q_rd <= 0;
        beat_reg <= 0;
        wstate_reg <= W_IDLE;
        bq_wr <= 0;
        bq_rd <= 0;
    end
end

// Burst type and beat size are fixed by the masters of this design (INCR, full width).
/* verilator lint_off UNUSEDSIGNAL */
wire unused = ^{s_axi_awsize, s_axi_awburst, s_axi_arsize, s_axi_arburst};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
