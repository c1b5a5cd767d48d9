// edm_link_monitor: 802.3 high-BER rule on received sync headers. THRESHOLD invalid sync
// headers (2'b00 or 2'b11) within WINDOW blocks disable the link, sticky until reset
// (EDM §3.3: a corrupting link is disabled and reported). While disabled, every block is
// replaced by an error block. Registered output.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module edm_link_monitor #(
    parameter WINDOW = 48828,
    parameter THRESHOLD = 16
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [63:0] in_data,
    input  wire [1:0]  in_hdr,
    input  wire        in_valid,
    output reg  [63:0] out_data,
    output reg  [1:0]  out_hdr,
    output reg         out_valid,
    output reg         link_down
);

localparam [63:0] ERROR_BLOCK = {{8{7'h1e}}, 8'h1e};

initial begin
    if (WINDOW < 1 || THRESHOLD < 1) begin
        $error("WINDOW and THRESHOLD must be positive");
        $finish;
    end
end

reg [31:0] elapsed_reg;
reg [31:0] errors_reg;
reg [31:0] elapsed;
reg [31:0] errors;
wire bad = in_hdr == 2'b00 || in_hdr == 2'b11;

always_comb begin
    elapsed = elapsed_reg;
    errors = errors_reg;
    if (elapsed >= WINDOW) begin
        elapsed = 0;
        errors = 0;
    end
    if (bad) begin
        errors = errors + 1;
    end
end

always_ff @(posedge clk) begin
    out_valid <= in_valid;
    if (in_valid) begin
        if (link_down || errors >= THRESHOLD) begin
            out_data <= ERROR_BLOCK;
            out_hdr <= 2'b01;
        end else begin
            out_data <= in_data;
            out_hdr <= in_hdr;
        end
        if (!link_down) begin
            elapsed_reg <= elapsed + 1;
            errors_reg <= errors;
            if (errors >= THRESHOLD) begin
                link_down <= 1'b1;
            end
        end
    end
    if (rst) begin
        elapsed_reg <= 0;
        errors_reg <= 0;
        link_down <= 1'b0;
        out_valid <= 1'b0;
    end
end

endmodule

`resetall
