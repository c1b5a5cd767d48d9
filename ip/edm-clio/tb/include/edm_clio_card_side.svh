// Shared by the translator's whole-fabric benches (ip/edm-clio/tb/cosim and
// tb/path): the card (edm_clio_card, node 0, sending to node 1) with its
// host-engine wires (c_*), and the sum of both hosts' error counters
// (host_errors; the node's are n_*). The including module declares clk, rst,
// AW, TIMEOUT, REREAD_BACKOFF, the H2C/C2H streams, card_ready and the card_* counters.
wire          c_req_valid, c_req_ready, c_req_write;
wire [15:0]   c_req_dst, c_req_len, c_req_tag;
wire [63:0]   c_req_addr;
wire [31:0]   c_req_local;
wire          c_wcomp_valid, c_rcomp_valid, c_rcomp_ok;
wire [15:0]   c_wcomp_tag, c_rcomp_tag;
wire          c_wapp_valid, c_wapp_last;
wire [AW-1:0] c_wapp_addr;
wire [15:0]   c_wapp_words, c_wapp_peer;
wire          c_ext_en, c_ext_we;
wire [AW-1:0] c_ext_addr;
wire [63:0]   c_ext_wdata, c_ext_rdata;
wire [31:0]   c_ug, c_ur, c_ux, c_ba, c_br, c_bm, n_ug, n_ur, n_ux, n_ba, n_br, n_bm;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]   c_ru, c_rt, c_pre, n_ru, n_rt, n_pre;
/* verilator lint_on UNUSEDSIGNAL */
assign host_errors = c_ug + c_ur + c_ux + c_ba + c_br + c_bm + n_ug + n_ur + n_ux + n_ba + n_br + n_bm;

edm_clio_card #(
    .AW(AW),
    .TIMEOUT(TIMEOUT),
    .REREAD_BACKOFF(REREAD_BACKOFF)
) card_inst (
    .clk(clk),
    .rst(rst),
    .node_id(16'd0),
    .dst(16'd1),
    .ready(card_ready),
    .s_axis_tdata(h2c_tdata),
    .s_axis_tkeep(h2c_tkeep),
    .s_axis_tvalid(h2c_tvalid),
    .s_axis_tlast(h2c_tlast),
    .s_axis_tready(h2c_tready),
    .m_axis_tdata(c2h_tdata),
    .m_axis_tkeep(c2h_tkeep),
    .m_axis_tvalid(c2h_tvalid),
    .m_axis_tlast(c2h_tlast),
    .m_axis_tready(c2h_tready),
    .req_valid(c_req_valid),
    .req_ready(c_req_ready),
    .req_write(c_req_write),
    .req_dst(c_req_dst),
    .req_addr(c_req_addr),
    .req_len(c_req_len),
    .req_local(c_req_local),
    .req_tag(c_req_tag),
    .wcomp_valid(c_wcomp_valid),
    .wcomp_tag(c_wcomp_tag),
    .rcomp_valid(c_rcomp_valid),
    .rcomp_tag(c_rcomp_tag),
    .rcomp_ok(c_rcomp_ok),
    .wapp_valid(c_wapp_valid),
    .wapp_addr(c_wapp_addr),
    .wapp_words(c_wapp_words),
    .wapp_peer(c_wapp_peer),
    .wapp_last(c_wapp_last),
    .ext_en(c_ext_en),
    .ext_we(c_ext_we),
    .ext_addr(c_ext_addr),
    .ext_wdata(c_ext_wdata),
    .ext_rdata(c_ext_rdata),
    .cnt_refused(card_refused),
    .cnt_timeouts(card_timeouts),
    .cnt_bad(card_bad)
);
