// tb_edm_clio_node: edm_clio_node on a plain memory standing in for edm_host_top's local memory and ext port (bench only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The memory has edm_host_engine's ext-port timing (a write lands at the clock
// edge; a read's word is on ext_rdata from the edge after, held until the next
// read). The bench writes request records into it (as the host's WREQs would),
// reports them on wapp_*, plays the host's requester (req_ready, wcomp) and the
// fast path (m_axis in, s_axis out).
module tb_edm_clio_node #(
    parameter AW = 18,
    parameter [AW-1:0] STAGE_WORD = AW'(196608),
    parameter PKT_WORDS = 256,
    parameter QDEPTH = 32,
    parameter [31:0] ANSWER_TIMEOUT = 32'd300
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [15:0]   node_id,
    output wire          req_valid,
    input  wire          req_ready,
    output wire          req_write,
    output wire [15:0]   req_dst,
    output wire [63:0]   req_addr,
    output wire [15:0]   req_len,
    output wire [31:0]   req_local,
    output wire [15:0]   req_tag,
    input  wire          wcomp_valid,
    input  wire [15:0]   wcomp_tag,
    input  wire          wapp_valid,
    input  wire [AW-1:0] wapp_addr,
    input  wire [15:0]   wapp_words,
    input  wire [15:0]   wapp_peer,
    input  wire          wapp_last,
    output wire [63:0]   m_axis_tdata,
    output wire [7:0]    m_axis_tkeep,
    output wire          m_axis_tvalid,
    output wire          m_axis_tlast,
    input  wire          m_axis_tready,
    input  wire [63:0]   s_axis_tdata,
    input  wire [7:0]    s_axis_tkeep,
    input  wire          s_axis_tvalid,
    input  wire          s_axis_tlast,
    output wire          s_axis_tready,
    output wire          done_valid,
    output wire [15:0]   done_peer,
    output wire [15:0]   done_slot,
    output wire          done_read,
    output wire [31:0]   cnt_records,
    output wire [31:0]   cnt_bad,
    output wire [31:0]   cnt_stray,
    output wire [31:0]   cnt_timeouts,
    output wire [31:0]   cnt_dropped,
    output wire [31:0]   cnt_overflow
);

reg [63:0] mem [0:(1 << AW) - 1];
reg [63:0] ext_rdata = 64'd0;
wire          ext_en, ext_we;
wire [AW-1:0] ext_addr;
wire [63:0]   ext_wdata;

integer i;
initial begin
    for (i = 0; i < (1 << AW); i = i + 1) mem[i] = 64'd0;
end

always @(posedge clk) begin
    if (ext_en) begin
        if (ext_we) mem[ext_addr] <= ext_wdata;
        ext_rdata <= mem[ext_addr];
    end
end

edm_clio_node #(
    .AW(AW),
    .STAGE_WORD(STAGE_WORD),
    .PKT_WORDS(PKT_WORDS),
    .QDEPTH(QDEPTH),
    .ANSWER_TIMEOUT(ANSWER_TIMEOUT)
) dut (
    .clk(clk), .rst(rst), .node_id(node_id),
    .req_valid(req_valid), .req_ready(req_ready), .req_write(req_write), .req_dst(req_dst),
    .req_addr(req_addr), .req_len(req_len), .req_local(req_local), .req_tag(req_tag),
    .wcomp_valid(wcomp_valid), .wcomp_tag(wcomp_tag),
    .wapp_valid(wapp_valid), .wapp_addr(wapp_addr), .wapp_words(wapp_words),
    .wapp_peer(wapp_peer), .wapp_last(wapp_last),
    .ext_en(ext_en), .ext_we(ext_we), .ext_addr(ext_addr), .ext_wdata(ext_wdata), .ext_rdata(ext_rdata),
    .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tlast(m_axis_tlast), .m_axis_tready(m_axis_tready),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tlast(s_axis_tlast), .s_axis_tready(s_axis_tready),
    .done_valid(done_valid), .done_peer(done_peer), .done_slot(done_slot), .done_read(done_read),
    .cnt_records(cnt_records), .cnt_bad(cnt_bad), .cnt_stray(cnt_stray),
    .cnt_timeouts(cnt_timeouts), .cnt_dropped(cnt_dropped), .cnt_overflow(cnt_overflow)
);

endmodule

`resetall
