// clio_ring_dma: FPGA side of the ARM rings in shared DDR: RX producer and TX consumer over AXI4.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Runs the wire crate's ring protocol (host-sdk/wire/src/ring/engine.rs)
// with no private copy of the peer's index: every operation re-reads head,
// tail (and doorbell) from the ring header. One command at a time; `done`
// pulses with its result:
//  PUSH (RX, FPGA -> ARM): if head - tail >= slots, `res_full` and nothing
//   is written; else write the slot (CRC32C over bytes 0..60 filled in here),
//   then store head + 1 and doorbell + 1 in one strobed beat.
//  PROBE (RX): only the full test of PUSH.
//  POP (TX, ARM -> FPGA): if head == tail, `res_empty`; if head - tail
//   exceeds the slot count, `res_bad_head` and the ring is left alone; else
//   read the slot, judge it with clio_desc_check (`res_rejected` for a bad
//   one, whose bytes are not handed out), store tail + 1 (and rejected + 1
//   for a bad slot), and present the slot on m_tx_desc.
// One slot is one 512-bit beat; ring bases must be 64-byte aligned.
module clio_ring_dma #(
    parameter DATA_WIDTH = 512,
    parameter ADDR_WIDTH = 32,
    parameter ID_WIDTH = 4
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [ADDR_WIDTH-1:0]   rx_base,
    input  wire [31:0]             rx_slots,
    input  wire [ADDR_WIDTH-1:0]   tx_base,
    input  wire [31:0]             tx_slots,

    // Command: 0 PUSH, 1 PROBE, 2 POP. Taken when `cmd_valid` and idle.
    input  wire [1:0]              cmd,
    input  wire                    cmd_valid,
    output wire                    idle,
    // Descriptor to publish (bytes 0..59; the CRC bytes are ignored).
    input  wire [DATA_WIDTH-1:0]   s_rx_desc,

    output wire                    done,
    output wire                    res_full,
    output wire [31:0]             res_free,   // PUSH/PROBE: RX slots free after the command
    output wire                    res_empty,
    output wire                    res_bad_head,
    output wire                    res_rejected,
    output wire [DATA_WIDTH-1:0]   m_tx_desc,

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

import clio_pkg::RING_SLOT_LEN;
import clio_pkg::RING_HEADER_LEN;
import clio_pkg::RING_OFF_HEAD;
import clio_pkg::RING_OFF_DOORBELL;
import clio_pkg::RING_OFF_TAIL;
import clio_pkg::RING_OFF_REJECTED;
import clio_pkg::SLOT_OFF_CRC;

localparam BYTES = DATA_WIDTH / 8;

initial begin
    if (BYTES != RING_SLOT_LEN) begin
        $error("Error: one ring slot must be one beat (DATA_WIDTH = %0d) (instance %m)", RING_SLOT_LEN * 8);
        $finish;
    end
    if (RING_OFF_TAIL != BYTES || RING_HEADER_LEN != 2 * BYTES) begin
        $error("Error: ring header layout changed; revisit the beat mapping (instance %m)");
        $finish;
    end
end

localparam [1:0] CMD_PUSH = 2'd0, CMD_PROBE = 2'd1, CMD_POP = 2'd2;

// Controller states.
typedef enum logic [3:0] {
    ST_IDLE = 4'd0,
    ST_HDR_AR = 4'd1,
    ST_HDR_R0 = 4'd2,
    ST_HDR_R1 = 4'd3,
    ST_RX_SLOT_W = 4'd4,
    ST_RX_SLOT_B = 4'd5,
    ST_RX_HEAD_W = 4'd6,
    ST_RX_HEAD_B = 4'd7,
    ST_TX_SLOT_AR = 4'd8,
    ST_TX_SLOT_R = 4'd9,
    ST_TX_TAIL_W = 4'd11,
    ST_TX_TAIL_B = 4'd12
} state_t;

state_t            state_reg = ST_IDLE;
reg [1:0]            cmd_reg = CMD_PUSH;
reg [31:0]           head_reg = 0;
reg [31:0]           bell_reg = 0;
reg [31:0]           tail_reg = 0;
reg [31:0]           rej_reg = 0;
reg [DATA_WIDTH-1:0] slot_reg = 0;
reg [DATA_WIDTH-1:0] desc_reg = 0;
reg                  slot_bad_reg = 1'b0;
reg                  aw_done_reg = 1'b0;
reg                  w_done_reg = 1'b0;
reg                  done_reg = 1'b0;
reg                  full_reg = 1'b0;
reg [31:0]           free_reg = 0;
reg                  empty_reg = 1'b0;
reg                  bad_head_reg = 1'b0;

wire is_rx = cmd_reg != CMD_POP;

// CRC of the outgoing RX slot (bytes 0..59).
localparam [BYTES-1:0] CRC_KEEP = {{(BYTES-SLOT_OFF_CRC){1'b0}}, {SLOT_OFF_CRC{1'b1}}};
wire [31:0] rx_crc_raw;

clio_crc32c #(.DATA_WIDTH(DATA_WIDTH)) rx_crc_inst (
    .crc_in(32'hffffffff), .data(desc_reg), .keep(CRC_KEEP), .crc_out(rx_crc_raw)
);

reg [DATA_WIDTH-1:0] rx_slot_image;
always_comb begin
    rx_slot_image = desc_reg;
    rx_slot_image[SLOT_OFF_CRC*8 +: 32] = ~rx_crc_raw;
end

wire in_ok;
clio_desc_check #(.DATA_WIDTH(DATA_WIDTH)) check_inst (
    .slot(m_axi_rdata), .ok(in_ok)
);

wire [31:0] rx_mask = rx_slots - 1;
wire [31:0] tx_mask = tx_slots - 1;
wire [31:0] rd_tail = m_axi_rdata[(RING_OFF_TAIL-BYTES)*8 +: 32];

// AXI address/data selection per state.
reg [ADDR_WIDTH-1:0] awaddr;
reg [DATA_WIDTH-1:0] wdata;
reg [BYTES-1:0]      wstrb;
reg [ADDR_WIDTH-1:0] araddr;
reg [7:0]            arlen;

always_comb begin
    awaddr = 0;
    wdata = 0;
    wstrb = 0;
    araddr = is_rx ? rx_base : tx_base;
    arlen = 8'd1;
    case (state_reg)
        ST_RX_SLOT_W, ST_RX_SLOT_B: begin
            /* verilator lint_off WIDTH */
            awaddr = rx_base + RING_HEADER_LEN + (head_reg & rx_mask) * RING_SLOT_LEN;
            /* verilator lint_on WIDTH */
            wdata = rx_slot_image;
            wstrb = {BYTES{1'b1}};
        end
        ST_RX_HEAD_W, ST_RX_HEAD_B: begin
            awaddr = rx_base;
            wdata[RING_OFF_HEAD*8 +: 32] = head_reg + 1;
            wdata[RING_OFF_DOORBELL*8 +: 32] = bell_reg + 1;
            wstrb[RING_OFF_HEAD +: 8] = 8'hff;
        end
        ST_TX_TAIL_W, ST_TX_TAIL_B: begin
            /* verilator lint_off WIDTH */
            awaddr = tx_base + RING_OFF_TAIL;
            /* verilator lint_on WIDTH */
            wdata[(RING_OFF_TAIL-BYTES)*8 +: 32] = tail_reg + 1;
            wdata[(RING_OFF_REJECTED-BYTES)*8 +: 32] = rej_reg + {31'd0, slot_bad_reg};
            wstrb[(RING_OFF_TAIL-BYTES) +: 8] = 8'hff;
        end
        ST_TX_SLOT_AR, ST_TX_SLOT_R: begin
            /* verilator lint_off WIDTH */
            araddr = tx_base + RING_HEADER_LEN + (tail_reg & tx_mask) * RING_SLOT_LEN;
            /* verilator lint_on WIDTH */
            arlen = 8'd0;
        end
        default: begin end
    endcase
end

wire in_write = state_reg == ST_RX_SLOT_W || state_reg == ST_RX_HEAD_W || state_reg == ST_TX_TAIL_W;
wire aw_fire = in_write && !aw_done_reg && m_axi_awready;
wire w_fire = in_write && !w_done_reg && m_axi_wready;
wire aw_ok = aw_done_reg || aw_fire;
wire w_ok = w_done_reg || w_fire;

always_ff @(posedge clk) begin
    done_reg <= 1'b0;
    if (aw_fire) aw_done_reg <= 1'b1;
    if (w_fire) w_done_reg <= 1'b1;
    case (state_reg)
        ST_IDLE: begin
            if (cmd_valid) begin
                cmd_reg <= cmd;
                desc_reg <= s_rx_desc;
                full_reg <= 1'b0;
                empty_reg <= 1'b0;
                bad_head_reg <= 1'b0;
                slot_bad_reg <= 1'b0;
                state_reg <= ST_HDR_AR;
            end
        end
        ST_HDR_AR: if (m_axi_arready) state_reg <= ST_HDR_R0;
        ST_HDR_R0: begin
            if (m_axi_rvalid) begin
                head_reg <= m_axi_rdata[RING_OFF_HEAD*8 +: 32];
                bell_reg <= m_axi_rdata[RING_OFF_DOORBELL*8 +: 32];
                state_reg <= ST_HDR_R1;
            end
        end
        ST_HDR_R1: begin
            if (m_axi_rvalid) begin
                tail_reg <= rd_tail;
                rej_reg <= m_axi_rdata[(RING_OFF_REJECTED-BYTES)*8 +: 32];
                if (is_rx) begin
                    free_reg <= head_reg - rd_tail >= rx_slots ? 32'd0 : rx_slots - (head_reg - rd_tail);
                    if (head_reg - rd_tail >= rx_slots) begin
                        full_reg <= 1'b1;
                        done_reg <= 1'b1;
                        state_reg <= ST_IDLE;
                    end else if (cmd_reg == CMD_PROBE) begin
                        done_reg <= 1'b1;
                        state_reg <= ST_IDLE;
                    end else begin
                        state_reg <= ST_RX_SLOT_W;
                    end
                end else if (head_reg == rd_tail) begin
                    empty_reg <= 1'b1;
                    done_reg <= 1'b1;
                    state_reg <= ST_IDLE;
                end else if (head_reg - rd_tail > tx_slots) begin
                    bad_head_reg <= 1'b1;
                    done_reg <= 1'b1;
                    state_reg <= ST_IDLE;
                end else begin
                    state_reg <= ST_TX_SLOT_AR;
                end
            end
        end
        ST_RX_SLOT_W: begin
            if (aw_ok && w_ok) begin
                aw_done_reg <= 1'b0;
                w_done_reg <= 1'b0;
                state_reg <= ST_RX_SLOT_B;
            end
        end
        ST_RX_SLOT_B: if (m_axi_bvalid) state_reg <= ST_RX_HEAD_W;
        ST_RX_HEAD_W: begin
            if (aw_ok && w_ok) begin
                aw_done_reg <= 1'b0;
                w_done_reg <= 1'b0;
                state_reg <= ST_RX_HEAD_B;
            end
        end
        ST_RX_HEAD_B: begin
            if (m_axi_bvalid) begin
                free_reg <= free_reg - 1'b1;
                done_reg <= 1'b1;
                state_reg <= ST_IDLE;
            end
        end
        ST_TX_SLOT_AR: if (m_axi_arready) state_reg <= ST_TX_SLOT_R;
        ST_TX_SLOT_R: begin
            if (m_axi_rvalid) begin
                slot_reg <= in_ok ? m_axi_rdata : {DATA_WIDTH{1'b0}};
                slot_bad_reg <= !in_ok;
                state_reg <= ST_TX_TAIL_W;
            end
        end
        ST_TX_TAIL_W: begin
            if (aw_ok && w_ok) begin
                aw_done_reg <= 1'b0;
                w_done_reg <= 1'b0;
                state_reg <= ST_TX_TAIL_B;
            end
        end
        ST_TX_TAIL_B: begin
            if (m_axi_bvalid) begin
                done_reg <= 1'b1;
                state_reg <= ST_IDLE;
            end
        end
        default: state_reg <= ST_IDLE;
    endcase
    if (rst) begin
        state_reg <= ST_IDLE;
        aw_done_reg <= 1'b0;
        w_done_reg <= 1'b0;
        done_reg <= 1'b0;
    end
end

assign idle = state_reg == ST_IDLE;
assign done = done_reg;
assign res_full = full_reg;
assign res_free = free_reg;
assign res_empty = empty_reg;
assign res_bad_head = bad_head_reg;
assign res_rejected = slot_bad_reg;
assign m_tx_desc = slot_reg;

assign m_axi_awid = 0;
assign m_axi_awaddr = awaddr;
assign m_axi_awlen = 8'd0;
assign m_axi_awsize = 3'd6;
assign m_axi_awburst = 2'b01;
assign m_axi_awvalid = in_write && !aw_done_reg;
assign m_axi_wdata = wdata;
assign m_axi_wstrb = wstrb;
assign m_axi_wlast = 1'b1;
assign m_axi_wvalid = in_write && !w_done_reg;
assign m_axi_bready = state_reg == ST_RX_SLOT_B || state_reg == ST_RX_HEAD_B || state_reg == ST_TX_TAIL_B;
assign m_axi_arid = 0;
assign m_axi_araddr = araddr;
assign m_axi_arlen = arlen;
assign m_axi_arsize = 3'd6;
assign m_axi_arburst = 2'b01;
assign m_axi_arvalid = state_reg == ST_HDR_AR || state_reg == ST_TX_SLOT_AR;
assign m_axi_rready = state_reg == ST_HDR_R0 || state_reg == ST_HDR_R1 || state_reg == ST_TX_SLOT_R;

// IDs and responses are not used: one transaction in flight, no DRAM errors modelled.
/* verilator lint_off UNUSEDSIGNAL */
wire unused = ^{m_axi_bid, m_axi_bresp, m_axi_rid, m_axi_rresp, m_axi_rlast};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
