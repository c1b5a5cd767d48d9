// edm_fabric_tb: co-simulation fabric: PORTS edm_host_top instances on the ports of one
// edm_switch_top, joined by links of LINK cycles each way (the PCS TX/RX pipeline of the
// Rust fabric model). Per-port signals are flattened for the cocotb bench.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_fabric_tb #(
    parameter PORTS = 4,
    parameter MEM_WORDS = 1024,
    parameter LINK = 4,
    // message state and serve tables large enough for X = 3 active messages to every other
    // port (the model's tables are bounded by X only), and a message queue deep enough that
    // the model's unbounded one never holds more in the runs of tb/run.sh
    parameter TABLE = (3 * (PORTS - 1) <= 8) ? 8 : (3 * (PORTS - 1) <= 16) ? 16 : 32,
    parameter QDEPTH = 32,
    // grant queue: edm_host_top's default, the switch's grant units per egress (grants of
    // successive chunks pile up behind forwarded ones; the model's queue is unbounded)
    parameter GDEPTH = 64,
    // unit buffer deep enough that frames holding a line never stall the host's jobs in the
    // bursts of tb/run.sh (the model's TX queue is unbounded; 64 blocks delayed write ids)
    parameter UDEPTH = 1024,
    parameter AW = $clog2(MEM_WORDS)
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [PORTS-1:0]     req_valid,
    output wire [PORTS-1:0]     req_ready,
    input  wire [PORTS-1:0]     req_write,
    input  wire [PORTS*16-1:0]  req_dst,
    input  wire [PORTS*64-1:0]  req_addr,
    input  wire [PORTS*16-1:0]  req_len,
    input  wire [PORTS*32-1:0]  req_local,
    input  wire [PORTS*16-1:0]  req_tag,
    input  wire [PORTS-1:0]     req_rmw,
    input  wire [PORTS*4-1:0]   req_op,
    input  wire [PORTS*64-1:0]  req_opa,
    input  wire [PORTS*64-1:0]  req_opb,
    output wire [PORTS-1:0]     wcomp_valid,
    output wire [PORTS*16-1:0]  wcomp_tag,
    output wire [PORTS-1:0]     rcomp_valid,
    output wire [PORTS*16-1:0]  rcomp_tag,
    output wire [PORTS-1:0]     rcomp_ok,
    output wire [PORTS*64-1:0]  rcomp_data,

    input  wire [PORTS-1:0]     ext_en,
    input  wire [PORTS-1:0]     ext_we,
    input  wire [PORTS*AW-1:0]  ext_addr,
    input  wire [PORTS*64-1:0]  ext_wdata,
    output wire [PORTS*64-1:0]  ext_rdata,

    // frames: host MAC side (h_*) and switch L2 side (s_*)
    input  wire [PORTS*64-1:0]  h_enc_data,
    input  wire [PORTS*2-1:0]   h_enc_hdr,
    input  wire [PORTS-1:0]     h_enc_valid,
    output wire [PORTS-1:0]     h_enc_ready,
    output wire [PORTS*64-1:0]  h_dec_data,
    output wire [PORTS*2-1:0]   h_dec_hdr,
    output wire [PORTS-1:0]     h_dec_valid,
    input  wire [PORTS*64-1:0]  s_enc_data,
    input  wire [PORTS*2-1:0]   s_enc_hdr,
    input  wire [PORTS-1:0]     s_enc_valid,
    output wire [PORTS-1:0]     s_enc_ready,
    output wire [PORTS*64-1:0]  s_dec_data,
    output wire [PORTS*2-1:0]   s_dec_hdr,
    output wire [PORTS-1:0]     s_dec_valid,

    // per host: unknown grants + unknown responses + unexpected + bad requests + bad messages
    output wire [PORTS*32-1:0]  host_errors,
    output wire [PORTS*32-1:0]  host_bad_address,
    output wire [31:0]          sw_refused,
    output wire [31:0]          sw_unexpected,
    output wire [31:0]          sw_overflow,
    output wire [31:0]          sw_no_circuit,
    output wire [31:0]          sw_grants,
    output wire [31:0]          sw_forwarded
);

wire [PORTS*64-1:0] up_data, down_data;
wire [PORTS*2-1:0]  up_hdr, down_hdr;

reg [65:0] up_pipe [0:PORTS*LINK-1];
reg [65:0] down_pipe [0:PORTS*LINK-1];

wire [PORTS*64-1:0] sw_rx_data, h_rx_data;
wire [PORTS*2-1:0]  sw_rx_hdr, h_rx_hdr;

genvar gp;
generate
    for (gp = 0; gp < PORTS; gp = gp + 1) begin : host
        wire [31:0] c_ug, c_ur, c_ux, c_br, c_bm, c_ru, c_rt, c_pre;

        assign host_errors[gp*32 +: 32] = c_ug + c_ur + c_ux + c_br + c_bm;
        assign sw_rx_data[gp*64 +: 64] = up_pipe[gp*LINK+LINK-1][63:0];
        assign sw_rx_hdr[gp*2 +: 2] = up_pipe[gp*LINK+LINK-1][65:64];
        assign h_rx_data[gp*64 +: 64] = down_pipe[gp*LINK+LINK-1][63:0];
        assign h_rx_hdr[gp*2 +: 2] = down_pipe[gp*LINK+LINK-1][65:64];

        always @(posedge clk) begin : links
            integer k;
            up_pipe[gp*LINK] <= {up_hdr[gp*2 +: 2], up_data[gp*64 +: 64]};
            down_pipe[gp*LINK] <= {down_hdr[gp*2 +: 2], down_data[gp*64 +: 64]};
            for (k = 1; k < LINK; k = k + 1) begin
                up_pipe[gp*LINK+k] <= up_pipe[gp*LINK+k-1];
                down_pipe[gp*LINK+k] <= down_pipe[gp*LINK+k-1];
            end
            if (rst) begin
                for (k = 0; k < LINK; k = k + 1) begin
                    up_pipe[gp*LINK+k] <= {2'b01, 56'd0, 8'h1e};
                    down_pipe[gp*LINK+k] <= {2'b01, 56'd0, 8'h1e};
                end
            end
        end

        edm_host_top #(
            .FAIR(1),
            .DST_W(4),
            .MSGS(TABLE),
            .SERVE(TABLE),
            .QDEPTH(QDEPTH),
            .GDEPTH(GDEPTH),
            .UDEPTH(UDEPTH),
            .MEM_WORDS(MEM_WORDS)
        ) host_inst (
            .clk(clk),
            .rst(rst),
            .node_id(gp),
            .req_valid(req_valid[gp]),
            .req_ready(req_ready[gp]),
            .req_write(req_write[gp]),
            .req_dst(req_dst[gp*16 +: 16]),
            .req_addr(req_addr[gp*64 +: 64]),
            .req_len(req_len[gp*16 +: 16]),
            .req_local(req_local[gp*32 +: 32]),
            .req_tag(req_tag[gp*16 +: 16]),
            .req_rmw(req_rmw[gp]),
            .req_op(req_op[gp*4 +: 4]),
            .req_opa(req_opa[gp*64 +: 64]),
            .req_opb(req_opb[gp*64 +: 64]),
            .wcomp_valid(wcomp_valid[gp]),
            .wcomp_tag(wcomp_tag[gp*16 +: 16]),
            .rcomp_valid(rcomp_valid[gp]),
            .rcomp_tag(rcomp_tag[gp*16 +: 16]),
            .rcomp_ok(rcomp_ok[gp]),
            .rcomp_data(rcomp_data[gp*64 +: 64]),
            .ext_en(ext_en[gp]),
            .ext_we(ext_we[gp]),
            .ext_addr(ext_addr[gp*AW +: AW]),
            .ext_wdata(ext_wdata[gp*64 +: 64]),
            .ext_rdata(ext_rdata[gp*64 +: 64]),
            .enc_data(h_enc_data[gp*64 +: 64]),
            .enc_hdr(h_enc_hdr[gp*2 +: 2]),
            .enc_valid(h_enc_valid[gp]),
            .enc_ready(h_enc_ready[gp]),
            .dec_data(h_dec_data[gp*64 +: 64]),
            .dec_hdr(h_dec_hdr[gp*2 +: 2]),
            .dec_valid(h_dec_valid[gp]),
            .line_tx_data(up_data[gp*64 +: 64]),
            .line_tx_hdr(up_hdr[gp*2 +: 2]),
            .line_rx_data(h_rx_data[gp*64 +: 64]),
            .line_rx_hdr(h_rx_hdr[gp*2 +: 2]),
            .line_rx_valid(1'b1),
            .cnt_unknown_grant(c_ug),
            .cnt_unknown_response(c_ur),
            .cnt_unexpected(c_ux),
            .cnt_bad_address(host_bad_address[gp*32 +: 32]),
            .cnt_bad_request(c_br),
            .cnt_bad_message(c_bm),
            .cnt_rx_unknown(c_ru),
            .cnt_rx_truncated(c_rt),
            .cnt_preempted(c_pre)
        );
    end
endgenerate

// circuits per ingress: every chunk granted to a host may wait behind its backlog (frames
// holding its line) before it reaches the switch, 2X per other node as its grant queue; 16
// overflowed in the burst of seed 1795679532 (a WREQ refused, `sw_no_circuit`)
edm_switch_top #(
    .PORTS(PORTS),
    .CIRC(GDEPTH)
) switch_inst (
    .clk(clk),
    .rst(rst),
    .line_rx_data(sw_rx_data),
    .line_rx_hdr(sw_rx_hdr),
    .line_rx_valid({PORTS{1'b1}}),
    .line_tx_data(down_data),
    .line_tx_hdr(down_hdr),
    .l2_rx_data(s_dec_data),
    .l2_rx_hdr(s_dec_hdr),
    .l2_rx_valid(s_dec_valid),
    .l2_tx_data(s_enc_data),
    .l2_tx_hdr(s_enc_hdr),
    .l2_tx_valid(s_enc_valid),
    .l2_tx_ready(s_enc_ready),
    .cnt_notify_refused(sw_refused),
    .cnt_unexpected(sw_unexpected),
    .cnt_grants(sw_grants),
    .cnt_overflow(sw_overflow),
    .cnt_forwarded(sw_forwarded),
    .cnt_no_circuit(sw_no_circuit)
);

endmodule

`resetall
