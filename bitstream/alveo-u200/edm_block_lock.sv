// edm_block_lock: 64b/66b block lock (IEEE 802.3 clause 49.2.13.2.2) on a transceiver's RX gearbox output, driving its slip input.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The transceiver's 64b/66b gearbox cuts the received bits into 66-bit
// blocks at an arbitrary bit offset; `slip` (one cycle) moves the cut by one
// bit. A sync header is valid when it is 01 or 10.
// Unlocked: every invalid header slips, then waits SLIP_WAIT input blocks
// (the gearbox needs time to take the slip effect) before looking again;
// 64 consecutive valid headers lock.
// Locked: headers are counted in windows of 1024; 16 invalid ones in a
// window lose the lock (and slip). This is the standard's lock state machine;
// the bit-error-rate monitor (edm_link_monitor) runs behind it.
// Blocks are passed on (`out_*`, one register stage) only while locked.
module edm_block_lock #(
    parameter SLIP_WAIT = 64
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [63:0] in_data,
    input  wire [1:0]  in_hdr,
    input  wire        in_valid,
    output wire        slip,
    output wire        locked,
    output wire [63:0] out_data,
    output wire [1:0]  out_hdr,
    output wire        out_valid
);

initial begin
    if (SLIP_WAIT < 1 || SLIP_WAIT > 65535) begin
        $error("Error: SLIP_WAIT must be 1..65535 (instance %m)");
        $finish;
    end
end

reg        locked_reg = 1'b0;
reg        slip_reg = 1'b0;
reg [15:0] wait_reg = 0;
reg [10:0] sh_cnt_reg = 0;       // headers seen (of 64 unlocked, of 1024 locked)
reg [4:0]  bad_cnt_reg = 0;      // invalid headers in this window (locked)
reg [63:0] out_data_reg = 0;
reg [1:0]  out_hdr_reg = 0;
reg        out_valid_reg = 1'b0;

wire sh_valid = in_hdr[0] ^ in_hdr[1];

always @(posedge clk) begin
    slip_reg <= 1'b0;
    out_valid_reg <= 1'b0;
    if (in_valid) begin
        out_data_reg <= in_data;
        out_hdr_reg <= in_hdr;
        if (!locked_reg) begin
            if (wait_reg != 0) begin
                wait_reg <= wait_reg - 1'b1;
            end else if (!sh_valid) begin
                slip_reg <= 1'b1;
                wait_reg <= 16'(SLIP_WAIT);
                sh_cnt_reg <= 0;
            end else if (sh_cnt_reg == 11'd63) begin
                locked_reg <= 1'b1;
                sh_cnt_reg <= 0;
                bad_cnt_reg <= 0;
            end else begin
                sh_cnt_reg <= sh_cnt_reg + 1'b1;
            end
        end else begin
            out_valid_reg <= 1'b1;
            if (!sh_valid && bad_cnt_reg == 5'd15) begin
                locked_reg <= 1'b0;
                slip_reg <= 1'b1;
                wait_reg <= 16'(SLIP_WAIT);
                sh_cnt_reg <= 0;
                out_valid_reg <= 1'b0;
            end else if (sh_cnt_reg == 11'd1023) begin
                sh_cnt_reg <= 0;
                bad_cnt_reg <= 0;
            end else begin
                sh_cnt_reg <= sh_cnt_reg + 1'b1;
                bad_cnt_reg <= bad_cnt_reg + 5'(!sh_valid);
            end
        end
    end
    if (rst) begin
        locked_reg <= 1'b0;
        slip_reg <= 1'b0;
        wait_reg <= 0;
        sh_cnt_reg <= 0;
        bad_cnt_reg <= 0;
        out_valid_reg <= 1'b0;
    end
end

assign slip = slip_reg;
assign locked = locked_reg;
assign out_data = out_data_reg;
assign out_hdr = out_hdr_reg;
assign out_valid = out_valid_reg;

endmodule

`resetall
