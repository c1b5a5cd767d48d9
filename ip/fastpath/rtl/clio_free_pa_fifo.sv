// clio_free_pa_fifo: one FIFO of free physical page numbers per supported page size.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The slow path keeps these topped up (ring FREE_PA_PUSH); a first-touch
// fault pops one. Sizes are given as page shifts (SHIFTS, 8 bits each,
// entry 0 in the low byte); a push or pop naming a shift that is not in the
// list is refused (`s_push_ready` low / `pop_ok` low). Pop is first-word
// fall-through: `pop_ok` and `pop_ppn` are valid in the cycle of the request.
module clio_free_pa_fifo #(
    parameter NUM_SIZES = 3,
    parameter [NUM_SIZES*8-1:0] SHIFTS = {8'd12, 8'd21, 8'd22},
    parameter DEPTH = 32,
    parameter PPN_WIDTH = 32
) (
    input  wire                 clk,
    input  wire                 rst,

    input  wire [4:0]           s_push_shift,
    input  wire [PPN_WIDTH-1:0] s_push_ppn,
    input  wire                 s_push_valid,
    output wire                 s_push_ready,
    output wire                 s_push_known,

    input  wire [4:0]           pop_shift,
    input  wire                 pop_en,
    output wire                 pop_ok,
    output wire                 pop_known,
    output wire [PPN_WIDTH-1:0] pop_ppn,

    output wire [NUM_SIZES*($clog2(DEPTH)+1)-1:0] level
);

localparam AW = $clog2(DEPTH);
localparam SIW = NUM_SIZES > 1 ? $clog2(NUM_SIZES) : 1;

initial begin
    if ((1 << AW) != DEPTH) begin
        $error("Error: DEPTH must be a power of two (instance %m)");
        $finish;
    end
end

reg [PPN_WIDTH-1:0] mem[0:NUM_SIZES*DEPTH-1];
reg [AW:0]          wr_ptr[0:NUM_SIZES-1];
reg [AW:0]          rd_ptr[0:NUM_SIZES-1];

reg           push_hit, pop_hit;
reg [SIW-1:0] push_sel, pop_sel;

always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    push_hit = 1'b0;
    push_sel = 0;
    pop_hit = 1'b0;
    pop_sel = 0;
    for (i = 0; i < NUM_SIZES; i = i + 1) begin
        if (SHIFTS[i*8 +: 8] == {3'd0, s_push_shift}) begin
            push_hit = 1'b1;
            push_sel = i[SIW-1:0];
        end
        if (SHIFTS[i*8 +: 8] == {3'd0, pop_shift}) begin
            pop_hit = 1'b1;
            pop_sel = i[SIW-1:0];
        end
    end
end

wire push_full = (wr_ptr[push_sel] ^ rd_ptr[push_sel]) == {1'b1, {AW{1'b0}}};
wire pop_empty = wr_ptr[pop_sel] == rd_ptr[pop_sel];

assign s_push_known = push_hit;
assign s_push_ready = push_hit && !push_full;
assign pop_ok = pop_hit && !pop_empty;
assign pop_known = pop_hit;
/* verilator lint_off WIDTH */
assign pop_ppn = mem[pop_sel * DEPTH + rd_ptr[pop_sel][AW-1:0]];
/* verilator lint_on WIDTH */

genvar g;
generate
    for (g = 0; g < NUM_SIZES; g = g + 1) begin : level_out
        assign level[g*(AW+1) +: AW+1] = wr_ptr[g] - rd_ptr[g];
    end
endgenerate

always_ff @(posedge clk) begin : seq_2
    integer i;  // loop index local to the block (no shared variable between processes)
    if (s_push_valid && s_push_ready) begin
        /* verilator lint_off WIDTH */
        mem[push_sel * DEPTH + wr_ptr[push_sel][AW-1:0]] <= s_push_ppn;
        /* verilator lint_on WIDTH */
        wr_ptr[push_sel] <= wr_ptr[push_sel] + 1'b1;
    end
    if (pop_en && pop_ok) begin
        rd_ptr[pop_sel] <= rd_ptr[pop_sel] + 1'b1;
    end
    if (rst) begin
        for (i = 0; i < NUM_SIZES; i = i + 1) begin
            wr_ptr[i] <= 0;
            rd_ptr[i] <= 0;
        end
    end
end

endmodule

`resetall
