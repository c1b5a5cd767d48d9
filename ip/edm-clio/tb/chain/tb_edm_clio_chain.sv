// tb_edm_clio_chain: edm_clio_chain with a word memory behind its read port (bench only).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The memory stands in for the card's EDM memory (edm_host_engine's ext port:
// the word is on rdata in the cycle after the enable); the bench fills it
// through `mem` between answers.
module tb_edm_clio_chain (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,
    input  wire        start_record,
    input  wire [9:0]  start_word,
    input  wire [16:0] start_bytes,
    input  wire [31:0] start_seq,
    output wire        busy,
    output wire [63:0] m_axis_tdata,
    output wire [7:0]  m_axis_tkeep,
    output wire        m_axis_tvalid,
    output wire        m_axis_tlast,
    input  wire        m_axis_tready,
    input  wire        mem_gnt,
    output wire        done,
    output wire        done_ok,
    output wire        done_frees,
    output reg  [31:0] reads
);

reg [63:0] mem [0:1023];
reg [63:0] rdata = 64'd0;
wire       mem_en;
wire [9:0] mem_addr;

always @(posedge clk) begin
    if (mem_en && mem_gnt) begin
        rdata <= mem[mem_addr];
    end else begin
        rdata <= {$random, $random};  // a word not asked for is garbage
    end
    if (rst || start) begin
        reads <= 32'd0;
    end else if (mem_en && mem_gnt) begin
        reads <= reads + 32'd1;
    end
end

edm_clio_chain #(
    .AW(10)
) dut (
    .clk(clk),
    .rst(rst),
    .start(start),
    .start_record(start_record),
    .start_word(start_word),
    .start_bytes(start_bytes),
    .start_seq(start_seq),
    .busy(busy),
    .mem_en(mem_en),
    .mem_gnt(mem_gnt),
    .mem_addr(mem_addr),
    .mem_rdata(rdata),
    .m_axis_tdata(m_axis_tdata),
    .m_axis_tkeep(m_axis_tkeep),
    .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tlast(m_axis_tlast),
    .m_axis_tready(m_axis_tready),
    .done(done),
    .done_ok(done_ok),
    .done_frees(done_frees)
);

endmodule

`resetall
