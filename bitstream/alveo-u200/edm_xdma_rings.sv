// edm_xdma_rings: card end of the PCIe packet rings: H2C slots -> packet stream, packet stream -> C2H slots.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The ring protocol and slot layout are host-sdk/wire/src/xdma.rs: two rings
// of SLOT_COUNT slots of SLOT_BYTES at byte addresses H2C_BASE and C2H_BASE
// of card memory; a slot is `len u16 | rsvd u16 | packet`, little-endian;
// indices are free-running u32s, slot = index & (SLOT_COUNT - 1).
// Card memory is reached through one 64-bit word port (`mem_*`, word index,
// read data one cycle after `mem_en`); the host fills and reads the same
// memory through the XDMA's AXI4 master on the other port.
//
// H2C (host -> card): while h2c_head != H2C_TAIL, read the slot's first word
// (length, reserved, packet bytes 0..3) and then its other words, and send
// the packet on m_axis (64-bit, packed tkeep, tlast on its last beat); after
// the last beat H2C_TAIL moves on, freeing the slot. A malformed slot
// (reserved != 0, length 0, or length > SLOT_BYTES - 4) is skipped and
// counted: err_add = 1 for one cycle. A host that publishes more than
// SLOT_COUNT slots ahead has had its slots overwritten: all of them are
// dropped at once (H2C_TAIL jumps to h2c_head, err_add = their number), as
// the software card in host-sdk/xdma does.
// C2H (card -> host): a packet is accepted on s_axis only while the C2H ring
// has room (c2h_head - c2h_tail < SLOT_COUNT; a host index past the card's
// reads as no room, so a bad host index never overwrites a slot). Its bytes
// go to the slot as they arrive (packet bytes from byte 4 on), then the
// first word with the length, and only then C2H_HEAD moves on, so the host
// never reads a slot before it is complete. A packet longer than
// SLOT_BYTES - 4, or empty, is consumed and dropped (c2h_drop pulses; the
// slot is not published).
// The word port goes to C2H writes first (one per accepted beat); H2C reads
// wait for a free cycle, so s_axis never stalls on m_axis. Throughput: one
// 64-bit beat per cycle each way when the other is idle, plus about 4 cycles
// per H2C slot (header read, first body read) and 2-3 per C2H slot.
// s_axis must be packed: every beat but the last carries 8 bytes.
module edm_xdma_rings #(
    parameter SLOT_BYTES = 2048,
    parameter SLOT_COUNT = 64,
    parameter [63:0] H2C_BASE = 64'h0,
    parameter [63:0] C2H_BASE = 64'h20000,
    parameter MEM_AW = 15
) (
    input  wire              clk,
    input  wire              rst,

    // Ring indices (from / to the register block).
    input  wire [31:0]       h2c_head,
    input  wire [31:0]       c2h_tail,
    output wire [31:0]       h2c_tail,
    output wire [31:0]       c2h_head,
    output wire [31:0]       err_add,
    output wire              c2h_drop,

    // Card memory, 64-bit words.
    output wire              mem_en,
    output wire              mem_we,
    output wire [MEM_AW-1:0] mem_addr,
    output wire [63:0]       mem_wdata,
    input  wire [63:0]       mem_rdata,

    // H2C packets.
    output wire [63:0]       m_axis_tdata,
    output wire [7:0]        m_axis_tkeep,
    output wire              m_axis_tvalid,
    input  wire              m_axis_tready,
    output wire              m_axis_tlast,

    // C2H packets (packed tkeep).
    input  wire [63:0]       s_axis_tdata,
    input  wire [7:0]        s_axis_tkeep,
    input  wire              s_axis_tvalid,
    output wire              s_axis_tready,
    input  wire              s_axis_tlast
);

localparam SLOT_WORDS = SLOT_BYTES / 8;
localparam [15:0] MAX_PACKET = 16'(SLOT_BYTES - 4);
localparam FIFO_DEPTH = 4;

initial begin
    if (SLOT_COUNT < 1 || (SLOT_COUNT & (SLOT_COUNT - 1)) != 0) begin
        $error("Error: SLOT_COUNT must be a power of two (instance %m)");
        $finish;
    end
    if (SLOT_BYTES < 48 || SLOT_BYTES % 8 != 0 || SLOT_BYTES > 65536) begin
        $error("Error: SLOT_BYTES must be a multiple of 8, 48..65536 (instance %m)");
        $finish;
    end
    if (H2C_BASE % 8 != 0 || C2H_BASE % 8 != 0) begin
        $error("Error: ring bases must be 8-byte aligned (instance %m)");
        $finish;
    end
    if ((H2C_BASE + SLOT_COUNT * SLOT_BYTES) / 8 > (64'd1 << MEM_AW)
            || (C2H_BASE + SLOT_COUNT * SLOT_BYTES) / 8 > (64'd1 << MEM_AW)) begin
        $error("Error: the rings must fit in the 2^MEM_AW words of card memory (instance %m)");
        $finish;
    end
end

// Word index of word `k` of slot `index` of a ring at `base` (high bits of
// base and index beyond the memory are unused by construction).
/* verilator lint_off UNUSEDSIGNAL */
function [MEM_AW-1:0] word_addr(input [63:0] base, input [31:0] index, input [15:0] k);
    word_addr = MEM_AW'(base / 8) + MEM_AW'((index & (SLOT_COUNT - 1)) * SLOT_WORDS) + MEM_AW'(k);
endfunction
/* verilator lint_on UNUSEDSIGNAL */

function [7:0] keep_of(input [15:0] n);
    keep_of = n >= 8 ? 8'hff : 8'((32'd1 << n) - 1);
endfunction

function [3:0] count_keep(input [7:0] k);
    integer i;
    begin
        count_keep = 0;
        for (i = 0; i < 8; i = i + 1) begin
            count_keep = count_keep + 4'(k[i]);
        end
    end
endfunction

// ---------------------------------------------------------------------------
// C2H: packet stream -> slot.
// ---------------------------------------------------------------------------
localparam [1:0] C_IDLE = 2'd0, C_RECV = 2'd1, C_TAILW = 2'd2, C_HDRW = 2'd3;
reg [1:0]  c_state_reg = C_IDLE;
reg [31:0] c2h_head_reg = 0;
reg [15:0] c_beat_reg = 0;       // beats accepted (slot words 1.. written)
reg [16:0] c_len_reg = 0;        // packet bytes so far
reg        c_over_reg = 1'b0;    // longer than a slot: dropped
reg [31:0] c_first_reg = 0;      // packet bytes 0..3 (go in slot word 0)
reg [31:0] c_carry_reg = 0;      // packet bytes of the last beat not yet written
reg        c_drop_reg = 1'b0;

wire [31:0] c_used = c2h_head_reg - c2h_tail;
wire        c_room = c_used < 32'(SLOT_COUNT);
assign s_axis_tready = c_state_reg == C_RECV;
wire        c_beat = s_axis_tvalid && s_axis_tready;
wire [16:0] c_len_next = c_len_reg + 17'(count_keep(s_axis_tkeep));
wire        c_over_next = c_over_reg || c_len_next > 17'(MAX_PACKET);

// This cycle's C2H write, if any (C2H has the word port first).
reg              c_we;
reg [MEM_AW-1:0] c_addr;
reg [63:0]       c_wdata;
always @* begin
    c_we = 1'b0;
    c_addr = word_addr(C2H_BASE, c2h_head_reg, 16'd0);
    c_wdata = {s_axis_tdata[31:0], c_carry_reg};
    case (c_state_reg)
        C_RECV: begin
            if (c_beat && c_beat_reg != 0 && !c_over_next) begin
                c_we = 1'b1;
                c_addr = word_addr(C2H_BASE, c2h_head_reg, c_beat_reg);
            end
        end
        C_TAILW: begin
            c_we = 1'b1;
            c_addr = word_addr(C2H_BASE, c2h_head_reg, c_beat_reg);
            c_wdata = {32'd0, c_carry_reg};
        end
        C_HDRW: begin
            c_we = 1'b1;
            c_wdata = {c_first_reg, 16'd0, c_len_reg[15:0]};
        end
        default: ;
    endcase
end

always @(posedge clk) begin
    c_drop_reg <= 1'b0;
    case (c_state_reg)
        C_IDLE: begin
            c_beat_reg <= 0;
            c_len_reg <= 0;
            c_over_reg <= 1'b0;
            if (c_room) begin
                c_state_reg <= C_RECV;
            end
        end
        C_RECV: begin
            if (c_beat) begin
                c_len_reg <= c_len_next;
                c_over_reg <= c_over_next;
                if (!c_over_next) begin
                    c_beat_reg <= c_beat_reg + 1'b1;
                    c_carry_reg <= s_axis_tdata[63:32];
                    if (c_beat_reg == 0) begin
                        c_first_reg <= s_axis_tdata[31:0];
                    end
                end
                if (s_axis_tlast) begin
                    if (c_over_next || c_len_next == 0) begin
                        c_drop_reg <= 1'b1;
                        c_state_reg <= C_IDLE;
                    end else if ({2'b00, c_len_next} + 19'd4 > {c_beat_reg + 16'd1, 3'b000}) begin
                        // The carried bytes need one more word.
                        c_state_reg <= C_TAILW;
                    end else begin
                        c_state_reg <= C_HDRW;
                    end
                end
            end
        end
        C_TAILW: begin
            c_state_reg <= C_HDRW;
        end
        C_HDRW: begin
            c2h_head_reg <= c2h_head_reg + 1'b1;
            c_state_reg <= C_IDLE;
        end
        default: c_state_reg <= C_IDLE;
    endcase
    if (rst) begin
        c_state_reg <= C_IDLE;
        c2h_head_reg <= 0;
        c_drop_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------
// H2C: slot -> packet stream.
// ---------------------------------------------------------------------------
localparam [1:0] H_IDLE = 2'd0, H_HDR = 2'd1, H_BODY = 2'd2;
reg [1:0]  h_state_reg = H_IDLE;
reg [31:0] h2c_tail_reg = 0;
reg [31:0] err_add_reg = 0;
reg [15:0] h_next_reg = 0;       // next slot word to read
reg [15:0] h_last_reg = 0;       // last slot word of the packet
reg [15:0] h_rem_reg = 0;        // packet bytes not yet sent
reg [31:0] h_carry_reg = 0;      // packet bytes read but not yet sent
reg        h_inflight_reg = 1'b0;
reg [63:0] h_fifo [0:FIFO_DEPTH-1];
reg [1:0]  h_wr_ptr_reg = 0, h_rd_ptr_reg = 0;
reg [2:0]  h_count_reg = 0;

wire [31:0] h_ahead = h2c_head - h2c_tail_reg;
// A read may be issued when the word port is free and the FIFO has room for it.
wire h_want_hdr = h_state_reg == H_IDLE && h_ahead != 0 && h_ahead <= 32'(SLOT_COUNT);
wire h_want_body = h_state_reg == H_BODY && h_next_reg <= h_last_reg
    && 32'(h_count_reg) + 32'(h_inflight_reg) < FIFO_DEPTH;
wire h_rd = (h_want_hdr || h_want_body) && !c_we;
wire [MEM_AW-1:0] h_addr = word_addr(H2C_BASE, h2c_tail_reg, h_want_hdr ? 16'd0 : h_next_reg);

// Output beat: carried bytes alone at the end, else carry + the next word.
wire        h_short = h_rem_reg <= 16'd4;
wire [63:0] h_word = h_fifo[h_rd_ptr_reg];
assign m_axis_tvalid = h_state_reg == H_BODY && (h_short || h_count_reg != 0);
assign m_axis_tdata = h_short ? {32'd0, h_carry_reg} : {h_word[31:0], h_carry_reg};
assign m_axis_tkeep = keep_of(h_rem_reg);
assign m_axis_tlast = h_rem_reg <= 16'd8;
wire h_beat = m_axis_tvalid && m_axis_tready;
wire h_pop = h_beat && !h_short;

wire [15:0] hdr_len = mem_rdata[15:0];
wire [15:0] hdr_rsvd = mem_rdata[31:16];

always @(posedge clk) begin
    err_add_reg <= 0;
    h_inflight_reg <= h_rd;
    if (h_rd && h_want_body) begin
        h_next_reg <= h_next_reg + 1'b1;
    end
    // Read data of a body word lands in the FIFO.
    if (h_inflight_reg && h_state_reg == H_BODY) begin
        h_fifo[h_wr_ptr_reg] <= mem_rdata;
        h_wr_ptr_reg <= h_wr_ptr_reg + 1'b1;
    end
    if (h_pop) begin
        h_rd_ptr_reg <= h_rd_ptr_reg + 1'b1;
        h_carry_reg <= h_word[63:32];
    end
    h_count_reg <= h_count_reg + 3'(h_inflight_reg && h_state_reg == H_BODY) - 3'(h_pop);
    case (h_state_reg)
        H_IDLE: begin
            if (h_ahead > 32'(SLOT_COUNT)) begin
                err_add_reg <= h_ahead;
                h2c_tail_reg <= h2c_head;
            end else if (h_rd) begin
                h_state_reg <= H_HDR;
            end
        end
        H_HDR: begin
            if (h_inflight_reg) begin
                if (hdr_rsvd != 0 || hdr_len == 0 || hdr_len > MAX_PACKET) begin
                    err_add_reg <= 1;
                    h2c_tail_reg <= h2c_tail_reg + 1'b1;
                    h_state_reg <= H_IDLE;
                end else begin
                    h_carry_reg <= mem_rdata[63:32];
                    h_rem_reg <= hdr_len;
                    h_next_reg <= 16'd1;
                    h_last_reg <= 16'((32'(hdr_len) + 11) / 8 - 1);
                    h_state_reg <= H_BODY;
                end
            end
        end
        H_BODY: begin
            if (h_beat) begin
                h_rem_reg <= h_rem_reg - (h_rem_reg >= 16'd8 ? 16'd8 : h_rem_reg);
                if (m_axis_tlast) begin
                    h2c_tail_reg <= h2c_tail_reg + 1'b1;
                    h_state_reg <= H_IDLE;
                end
            end
        end
        default: h_state_reg <= H_IDLE;
    endcase
    if (rst) begin
        h_state_reg <= H_IDLE;
        h2c_tail_reg <= 0;
        err_add_reg <= 0;
        h_inflight_reg <= 1'b0;
        h_wr_ptr_reg <= 0;
        h_rd_ptr_reg <= 0;
        h_count_reg <= 0;
    end
end

assign mem_en = c_we || h_rd;
assign mem_we = c_we;
assign mem_addr = c_we ? c_addr : h_addr;
assign mem_wdata = c_wdata;
assign h2c_tail = h2c_tail_reg;
assign c2h_head = c2h_head_reg;
assign err_add = err_add_reg;
assign c2h_drop = c_drop_reg;

endmodule

`resetall
