// edm_clio_chain: the return stage of the U200 card's Clio-to-EDM translator: an answer in the card's EDM memory -> Clio packets on the C2H stream.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// An answer for a slot arrives in the card's EDM memory either as a READ's RRES
// (the answer chain itself, `seq u32 | (len u16 | packet)* | 0 u16`, start_bytes
// long) or as the record the memory node wrote into the card's inbox
// (start_record = 1: `len u16 | rsvd u16 | seq u32 | chain`, the chain being the
// record's len bytes; start_bytes is then how many bytes of the slot arrived). On start the stage reads the answer from start_word on,
// checks it (host-sdk/wire/src/edm_clio.rs; constants from the generated edm_pkg)
// and sends each packet of the chain on m_axis as one frame (byte 0 in lane 0,
// keep contiguous), exactly as edm-clio's model (`unpack_answer`) delivers it:
//   - a record whose rsvd is not 0, whose len exceeds EC_MAX_RECORD_PACKET or
//     the bytes that arrived (the model waits for the rest: same outcome), a
//     chain shorter than 6 bytes, or a chain whose seq is not start_seq (a stale
//     answer): nothing sent, done with done_ok = 0, done_frees = 0 (the slot keeps
//     waiting for its answer or its timeout);
//   - a length prefix running past the chain, or one stray byte where a length
//     should be: the packets before it are sent, done_ok = 0, done_frees = 1;
//   - else every packet up to the zero terminator (or the chain's end) is sent,
//     done_ok = 1, done_frees = 1.
// done pulses once per start, once the last packet's last beat is in the output
// register. Memory port: mem_en / mem_addr (64-bit words) are combinational and
// sampled at the next clock edge if mem_gnt (a shared port; else the stage asks
// again), the word is on mem_rdata in the cycle after
// (edm_host_engine's ext port). The reads are pipelined: a word is asked for in
// every cycle the byte buffer (32 bytes) has room for it and the one already in
// flight, so the stage moves a word per cycle (3.125 GB/s at the U200 EDM port's
// 390.625 MHz TX clock, one 25G EDM link) while C2H takes a beat per cycle.
// Checked answer by answer against the model (tb/chain, `edm-clio-chain-vectors`).
module edm_clio_chain #(
    parameter AW = 16
) (
    input  wire          clk,
    input  wire          rst,

    input  wire          start,
    input  wire          start_record,
    input  wire [AW-1:0] start_word,
    input  wire [16:0]   start_bytes,   // READ answers: the RRES's bytes
    input  wire [31:0]   start_seq,
    output wire          busy,

    output wire          mem_en,
    input  wire          mem_gnt,       // the port is ours this cycle (else ask again)
    output wire [AW-1:0] mem_addr,
    input  wire [63:0]   mem_rdata,

    output reg  [63:0]   m_axis_tdata,
    output reg  [7:0]    m_axis_tkeep,
    output reg           m_axis_tvalid,
    output reg           m_axis_tlast,
    input  wire          m_axis_tready,

    output reg           done,
    output reg           done_ok,
    output reg           done_frees
);

import edm_pkg::*;

// Walk states: idle, the record header, the chain's sequence number, a packet's
// length prefix, a packet's bytes.
typedef enum logic [2:0] {
    S_IDLE = 3'd0,
    S_HDR = 3'd1,
    S_SEQ = 3'd2,
    S_LEN = 3'd3,
    S_DATA = 3'd4
} state_t;

state_t      st_reg = S_IDLE;
reg [255:0]  bb_reg = 256'd0;      // bytes read and not consumed, byte 0 in bits 7:0
reg [5:0]    bc_reg = 6'd0;        // how many (0..32)
reg          rd_pend_reg = 1'b0;   // a word was asked for; it is on mem_rdata now
reg [AW-1:0] next_reg = {AW{1'b0}};
reg [13:0]   fetched_reg = 14'd0;  // words asked for
reg [13:0]   limit_reg = 14'd0;    // words of the answer
reg [16:0]   rem_reg = 17'd0;      // chain bytes not consumed (after DATA's packet)
reg [15:0]   plen_reg = 16'd0;     // bytes of the current packet left to send
reg [31:0]   seq_reg = 32'd0;

assign busy = st_reg != S_IDLE || rd_pend_reg;

wire active = st_reg != S_IDLE;
// Room for this word and the one in flight even if nothing is taken meanwhile.
assign mem_en = active && fetched_reg < limit_reg
    && bc_reg + (rd_pend_reg ? 6'd8 : 6'd0) <= 6'd24;
assign mem_addr = next_reg;

wire out_free = !m_axis_tvalid || m_axis_tready;
wire [3:0] data_n = (plen_reg < 16'd8) ? plen_reg[3:0] : 4'd8;

// This cycle's consumption (bytes taken from the front of bb_reg) and outcome.
reg [3:0]  take;
reg        fin, fin_ok, fin_frees;
always_comb begin
    take = 4'd0;
    fin = 1'b0;
    fin_ok = 1'b0;
    fin_frees = 1'b0;
    case (st_reg)
        S_HDR: if (bc_reg >= 6'd8) begin
            take = 4'd8;
            if (bb_reg[31:16] != 16'd0 || bb_reg[15:0] > 16'(EC_MAX_RECORD_PACKET)
                    || {1'b0, bb_reg[15:0]} + 17'(EC_RECORD_HEADER) > rem_reg) begin
                fin = 1'b1;
            end
        end
        S_SEQ: if (rem_reg < 17'd6) begin
            fin = 1'b1;
        end else if (bc_reg >= 6'd4) begin
            take = 4'd4;
            fin = bb_reg[31:0] != seq_reg;
        end
        S_LEN: if (rem_reg == 17'd0) begin
            fin = 1'b1;
            fin_ok = 1'b1;
            fin_frees = 1'b1;
        end else if (rem_reg == 17'd1) begin
            fin = 1'b1;
            fin_frees = 1'b1;
        end else if (bc_reg >= 6'd2) begin
            take = 4'd2;
            if (bb_reg[15:0] == 16'd0) begin
                fin = 1'b1;
                fin_ok = 1'b1;
                fin_frees = 1'b1;
            end else if ({1'b0, bb_reg[15:0]} > rem_reg - 17'd2) begin
                fin = 1'b1;
                fin_frees = 1'b1;
            end
        end
        S_DATA: if (bc_reg >= {2'b0, data_n} && out_free) begin
            take = data_n;
        end
        default: ;
    endcase
end

wire [255:0] bb_taken = bb_reg >> {take, 3'b000};
wire [5:0]   bc_taken = bc_reg - {2'b0, take};
// 64-bit mask of the first data_n bytes.
wire [63:0]  data_mask = (data_n == 4'd8) ? {64{1'b1}} : ((64'd1 << {data_n, 3'b000}) - 64'd1);

always_ff @(posedge clk) begin
    done <= 1'b0;
    if (m_axis_tvalid && m_axis_tready) begin
        m_axis_tvalid <= 1'b0;
    end
    if (mem_en && mem_gnt) begin
        next_reg <= next_reg + 1'b1;
        fetched_reg <= fetched_reg + 14'd1;
    end
    rd_pend_reg <= mem_en && mem_gnt;
    if (rd_pend_reg && active) begin
        bb_reg <= bb_taken | ({192'd0, mem_rdata} << {bc_taken, 3'b000});
        bc_reg <= bc_taken + 6'd8;
    end else begin
        bb_reg <= bb_taken;
        bc_reg <= bc_taken;
    end

    case (st_reg)
        S_IDLE: if (start && !rd_pend_reg) begin
            st_reg <= start_record ? S_HDR : S_SEQ;
            next_reg <= start_word;
            fetched_reg <= 14'd0;
            // A READ answer is at most 64 KiB (8192 words); a record's header is read
            // first and gives the rest.
            limit_reg <= start_record ? 14'd1 : 14'((start_bytes + 17'd7) >> 3);
            rem_reg <= start_bytes;
            seq_reg <= start_seq;
            bb_reg <= 256'd0;
            bc_reg <= 6'd0;
        end
        S_HDR: if (take != 4'd0 && !fin) begin
            rem_reg <= {1'b0, bb_reg[15:0]};
            limit_reg <= 14'd1 + 14'(({1'b0, bb_reg[15:0]} + 17'd7) >> 3);
            st_reg <= S_SEQ;
        end
        S_SEQ: if (take != 4'd0 && !fin) begin
            rem_reg <= rem_reg - 17'd4;
            st_reg <= S_LEN;
        end
        S_LEN: if (take != 4'd0 && !fin) begin
            plen_reg <= bb_reg[15:0];
            rem_reg <= rem_reg - 17'd2 - {1'b0, bb_reg[15:0]};
            st_reg <= S_DATA;
        end
        S_DATA: if (take != 4'd0) begin
            m_axis_tvalid <= 1'b1;
            m_axis_tdata <= bb_reg[63:0] & data_mask;
            m_axis_tkeep <= 8'((16'd1 << data_n) - 16'd1);
            m_axis_tlast <= plen_reg == {12'd0, data_n};
            plen_reg <= plen_reg - {12'd0, data_n};
            if (plen_reg == {12'd0, data_n}) begin
                st_reg <= S_LEN;
            end
        end
        default: st_reg <= S_IDLE;
    endcase
    if (fin) begin
        st_reg <= S_IDLE;
        done <= 1'b1;
        done_ok <= fin_ok;
        done_frees <= fin_frees;
    end

    if (rst) begin
        st_reg <= S_IDLE;
        rd_pend_reg <= 1'b0;
        bc_reg <= 6'd0;
        m_axis_tvalid <= 1'b0;
        m_axis_tlast <= 1'b0;
        m_axis_tdata <= 64'd0;
        m_axis_tkeep <= 8'd0;
        done <= 1'b0;
        done_ok <= 1'b0;
        done_frees <= 1'b0;
    end
end

endmodule

`resetall
