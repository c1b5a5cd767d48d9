// clio_dedup: dedup buffer of recently executed non-idempotent requests (FIFO-evicting CAM).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Remembers the response record of each executed non-idempotent request under
// its key (pid, req_id, offset, opcode). Insert overwrites the record of an
// equal key in place; otherwise it writes the next FIFO position, evicting
// the oldest record once the buffer is full. Lookup compares every entry in
// parallel and answers one cycle later. Insert and lookup in the same cycle:
// the lookup sees the state before the insert.
module clio_dedup #(
    parameter ENTRIES = 64,
    parameter KEY_WIDTH = 104,
    parameter REC_WIDTH = 280
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [KEY_WIDTH-1:0] s_lookup_key,
    input  wire                 s_lookup_valid,
    output wire                 m_lookup_hit,
    output wire [REC_WIDTH-1:0] m_lookup_rec,
    output wire                 m_lookup_valid,

    input  wire [KEY_WIDTH-1:0] s_insert_key,
    input  wire [REC_WIDTH-1:0] s_insert_rec,
    input  wire                 s_insert_valid
);

localparam IW = ENTRIES > 1 ? $clog2(ENTRIES) : 1;

initial begin
    if (ENTRIES < 1) begin
        $error("Error: ENTRIES must be at least 1 (instance %m)");
        $finish;
    end
end

reg                 live_mem[0:ENTRIES-1];
reg [KEY_WIDTH-1:0] key_mem[0:ENTRIES-1];
reg [REC_WIDTH-1:0] rec_mem[0:ENTRIES-1];
reg [IW-1:0]        wr_ptr_reg = 0;

reg                 hit_reg = 1'b0;
reg [REC_WIDTH-1:0] rec_reg = 0;
reg                 valid_reg = 1'b0;

reg          look_hit;
reg [IW-1:0] look_index;
reg          ins_hit;
reg [IW-1:0] ins_index;
integer i;

always @* begin
    look_hit = 1'b0;
    look_index = 0;
    ins_hit = 1'b0;
    ins_index = 0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
        if (live_mem[i] && key_mem[i] == s_lookup_key) begin
            look_hit = 1'b1;
            look_index = i[IW-1:0];
        end
        if (live_mem[i] && key_mem[i] == s_insert_key) begin
            ins_hit = 1'b1;
            ins_index = i[IW-1:0];
        end
    end
end

always @(posedge clk) begin
    valid_reg <= s_lookup_valid;
    if (s_lookup_valid) begin
        hit_reg <= look_hit;
        rec_reg <= rec_mem[look_index];
    end
    if (s_insert_valid) begin
        if (ins_hit) begin
            rec_mem[ins_index] <= s_insert_rec;
        end else begin
            live_mem[wr_ptr_reg] <= 1'b1;
            key_mem[wr_ptr_reg] <= s_insert_key;
            rec_mem[wr_ptr_reg] <= s_insert_rec;
            /* verilator lint_off WIDTH */
            wr_ptr_reg <= wr_ptr_reg == ENTRIES - 1 ? 0 : wr_ptr_reg + 1'b1;
            /* verilator lint_on WIDTH */
        end
    end
    if (rst) begin
        valid_reg <= 1'b0;
        wr_ptr_reg <= 0;
        for (i = 0; i < ENTRIES; i = i + 1) begin
            live_mem[i] <= 1'b0;
        end
    end
end

assign m_lookup_hit = hit_reg;
assign m_lookup_rec = rec_reg;
assign m_lookup_valid = valid_reg;

endmodule

`resetall
