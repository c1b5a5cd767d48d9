// Shared by the EDM-over-Clio benches (ip/edm-clio/tb/cosim, tb/path and
// bitstream/zcu106/tb/clio_edm_front): two EDM links of LINK cycles each way,
// port 0 (the card) and port 1 (the node) of a switch, as 66-bit blocks, holding
// idle control blocks (type 0x1e) out of reset. The including module declares
// clk, rst and LINK; the switch drives down_*, the hosts up_*.
wire [127:0] up_data, down_data;
wire [3:0]   up_hdr, down_hdr;
reg  [65:0]  up_pipe [0:2*LINK-1];
reg  [65:0]  down_pipe [0:2*LINK-1];
wire [127:0] sw_rx_data, h_rx_data;
wire [3:0]   sw_rx_hdr, h_rx_hdr;

genvar gp;
generate
for (gp = 0; gp < 2; gp = gp + 1) begin : link
    assign sw_rx_data[gp*64 +: 64] = up_pipe[gp*LINK+LINK-1][63:0];
    assign sw_rx_hdr[gp*2 +: 2] = up_pipe[gp*LINK+LINK-1][65:64];
    assign h_rx_data[gp*64 +: 64] = down_pipe[gp*LINK+LINK-1][63:0];
    assign h_rx_hdr[gp*2 +: 2] = down_pipe[gp*LINK+LINK-1][65:64];
    always @(posedge clk) begin : pipe
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
end
endgenerate
