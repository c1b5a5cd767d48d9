// clio_chase: extend-path pointer chase: the walk over a linked list, one memory word at a time.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The walk of the reference model's `chase` (ip/fastpath/src/fastpath.rs):
// cur = va; for hop = 1..=max_hops: read the 8-byte key at cur + key_offset;
// equal to `key` -> found; else read the 8-byte pointer at cur + next_offset;
// 0 ends the walk, else cur = pointer. This unit holds the walk and says what
// to read next; the engine that owns translation and DRAM performs each read
// and hands back the word (or abandons the walk on a translation failure).
// After `s_start` (or a word on `s_word_valid`), one cycle later `m_valid`
// presents the next step until `m_ready`:
//  CMD_WORD   read the LE word at `m_va` and return it on `s_word`;
//  CMD_VALUE  the key was found at node `m_node`: read the value bytes at
//             `m_va` (= node + value_offset); the walk is over;
//  CMD_DONE   not found (end of list, or `max_hops` nodes visited).
// `m_hops` counts the nodes visited so far. VA arithmetic wraps (the engine
// rejects a word read whose 8 bytes would pass the top of the VA space).
module clio_chase (
    input  wire        clk,
    input  wire        rst,

    input  wire [63:0] s_va,
    input  wire [63:0] s_key,
    input  wire [15:0] s_key_offset,
    input  wire [15:0] s_next_offset,
    input  wire [15:0] s_value_offset,
    input  wire [31:0] s_max_hops,
    input  wire        s_start,

    input  wire [63:0] s_word,
    input  wire        s_word_valid,

    output wire [1:0]  m_cmd,
    output wire [63:0] m_va,
    output wire [63:0] m_node,
    output wire [31:0] m_hops,
    output wire        m_valid,
    input  wire        m_ready
);

localparam [1:0] CMD_WORD = 2'd0, CMD_VALUE = 2'd1, CMD_DONE = 2'd2;
// Controller states.
typedef enum logic [1:0] {
    ST_IDLE = 2'd0,
    ST_HOP = 2'd1,
    ST_OUT = 2'd2,
    ST_WAIT = 2'd3
} state_t;

state_t  state_reg = ST_IDLE;
reg        want_next_reg = 1'b0;      // the word awaited is the next pointer (else the key)
reg [63:0] cur_reg = 0, key_reg = 0;
reg [15:0] key_off_reg = 0, next_off_reg = 0, value_off_reg = 0;
reg [31:0] max_hops_reg = 0, hops_reg = 0;
reg [1:0]  cmd_reg = CMD_WORD;
reg [63:0] va_reg = 0;

assign m_cmd = cmd_reg;
assign m_va = va_reg;
assign m_node = cur_reg;
assign m_hops = hops_reg;
assign m_valid = state_reg == ST_OUT;

always_ff @(posedge clk) begin
    case (state_reg)
        ST_IDLE: begin end
        ST_HOP: begin
            // Visit the next node, or stop at the hop limit.
            if (hops_reg == max_hops_reg) begin
                cmd_reg <= CMD_DONE;
            end else begin
                hops_reg <= hops_reg + 1'b1;
                cmd_reg <= CMD_WORD;
                va_reg <= cur_reg + {48'd0, key_off_reg};
                want_next_reg <= 1'b0;
            end
            state_reg <= ST_OUT;
        end
        ST_OUT: begin
            if (m_ready) state_reg <= cmd_reg == CMD_WORD ? ST_WAIT : ST_IDLE;
        end
        ST_WAIT: begin
            if (s_word_valid) begin
                if (!want_next_reg) begin
                    if (s_word == key_reg) begin
                        cmd_reg <= CMD_VALUE;
                        va_reg <= cur_reg + {48'd0, value_off_reg};
                    end else begin
                        cmd_reg <= CMD_WORD;
                        va_reg <= cur_reg + {48'd0, next_off_reg};
                        want_next_reg <= 1'b1;
                    end
                    state_reg <= ST_OUT;
                end else if (s_word == 64'd0) begin
                    cmd_reg <= CMD_DONE;
                    state_reg <= ST_OUT;
                end else begin
                    cur_reg <= s_word;
                    state_reg <= ST_HOP;
                end
            end
        end
        default: state_reg <= ST_IDLE;
    endcase
    // A new walk abandons whatever was going on (the engine stops a walk
    // whose read failed by not answering it).
    if (s_start) begin
        cur_reg <= s_va;
        key_reg <= s_key;
        key_off_reg <= s_key_offset;
        next_off_reg <= s_next_offset;
        value_off_reg <= s_value_offset;
        max_hops_reg <= s_max_hops;
        hops_reg <= 0;
        state_reg <= ST_HOP;
    end
    if (rst) begin
        state_reg <= ST_IDLE;
    end
end

endmodule

`resetall
