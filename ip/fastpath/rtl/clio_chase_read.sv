// clio_chase_read: the pointer chase's reads: each word or value clio_chase names, translated, read and handed back; the answer.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine starts a chase in S_DISPATCH (`s_start`, with the value's
// length; clio_chase starts in the same cycle) and runs the stage while it
// is in S_CH (`s_valid`); every stage state is one engine cycle, as the
// engine's former S_CH_STEP, S_CH_D0, S_CH_D1, S_CH_D2 and S_CH_RESP were.
// What the stage borrows from the engine is a call: the engine leaves S_CH,
// does it and comes back, and the stage goes on where it stopped.
//   ST_STEP  the walk's next step (`s_walk_valid`, taken: `m_walk_ready`;
//            `m_step`: the engine loads the translation's start): a word
//            (8 bytes) or the value (`m_value`: found) is translated from
//            its first byte to its end (`m_xl`, a call: the engine's
//            translation, back in ST_D0); not found: the answer.
//   ST_D0    translated: the bytes are read from the first one (`m_d0`).
//   ST_D1    all bytes read: a word goes back to the walk (`m_word_valid`,
//            `m_word`), the value ends the walk (the answer). Else a byte
//            outside the translated page is translated (`m_page`, a call:
//            the engine's next page, back here), or up to the rest of the
//            page, of the bytes wanted and of the DRAM beat is read
//            (`m_read` of `m_k` bytes at `m_pa`, a call: the engine's memory
//            read, back in ST_D2).
//   ST_D2    the bytes read (`s_rd`, `s_k`) join the word or, for the value,
//            are written into the response builder (`m_wr_value`, at byte
//            `m_got` of the value).
//   ST_RESP  the answer (`m_done`: ChaseResp, found or not, and the value);
//            a found walk wrote the fixed part when it took the value step
//            (`m_wr_found`), a walk that did not writes it now
//            (`m_wr_not_found`; `m_resp_state`: the engine's answer hold).
// A translation that fails ends the chase in the engine; the next chase
// starts the stage again. `s_en` low (the engine held) stops the stage as it
// stops the engine.
module clio_chase_read #(
    // Width of a DRAM beat (the AXI data width).
    parameter DATA_WIDTH = 512
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  s_start,
    input  wire  [15:0]          s_vlen,
    input  wire                  s_valid,
    input  wire                  s_en,

    // clio_chase: its steps, the words back.
    input  wire                  s_walk_valid,
    input  wire  [1:0]           s_walk_cmd,
    input  wire  [63:0]          s_walk_va,
    input  wire  [31:0]          s_walk_hops,
    output logic                 m_walk_ready,
    output logic                 m_word_valid,
    output wire  [63:0]          m_word,

    // The translation (calls) and the page it found.
    output logic                 m_step,
    output logic                 m_xl,
    output logic [64:0]          m_xl_end,
    output logic                 m_d0,
    output logic                 m_page,
    output wire  [63:0]          m_cur,
    input  wire                  s_pg_ok,
    input  wire  [63:0]          s_pg_start,
    input  wire  [64:0]          s_pg_end,
    input  wire  [31:0]          s_pg_ppn,
    input  wire  [4:0]           s_pg_shift,

    // The memory read (a call) and its bytes.
    output logic                 m_read,
    output wire  [63:0]          m_pa,
    output logic [31:0]          m_k,
    input  wire  [63:0]          s_rd,
    input  wire  [15:0]          s_k,

    // The answer.
    output logic                 m_wr_found,
    output logic                 m_wr_value,
    output logic                 m_wr_not_found,
    output wire  [15:0]          m_got,
    output wire                  m_resp_state,
    output logic                 m_done,
    output wire                  m_found,
    output wire  [15:0]          m_vlen,
    output wire  [31:0]          m_hops
);

localparam BYTES = DATA_WIDTH / 8;
localparam OW = $clog2(BYTES);
localparam logic [1:0] CMD_WORD = 2'd0, CMD_VALUE = 2'd1;

typedef enum logic [2:0] {
    ST_STEP, ST_D0, ST_D1, ST_D2, ST_RESP
} st_t;

st_t state_reg = ST_STEP, state_next;
reg        value_reg = 1'b0, found_reg = 1'b0;
reg [63:0] base_reg = 0, cur_reg = 0, word_reg = 0;
reg [15:0] need_reg = 0, got_reg = 0, vlen_reg = 0;
reg [31:0] hops_reg = 0;

assign m_word = word_reg;
assign m_cur = cur_reg;
assign m_got = got_reg;
assign m_resp_state = state_reg == ST_RESP;
assign m_found = found_reg;
assign m_vlen = vlen_reg;
assign m_hops = hops_reg;

// The current byte and its page.
wire [63:0] pg_mask = (64'd1 << s_pg_shift) - 64'd1;
wire        in_page = s_pg_ok && cur_reg >= s_pg_start && {1'b0, cur_reg} < s_pg_end;
assign m_pa = ({32'd0, s_pg_ppn} << s_pg_shift) | (cur_reg & pg_mask);
wire [64:0] page_left = s_pg_end - {1'b0, cur_reg};
/* verilator lint_off WIDTH */
always @* begin
    m_k = BYTES - m_pa[OW-1:0];
    if (need_reg - got_reg < m_k) m_k = need_reg - got_reg;
    if (page_left < m_k) m_k = page_left;
end
/* verilator lint_on WIDTH */
/* verilator lint_off WIDTH */
wire [63:0] rd_mask = s_k >= 8 ? 64'hffffffffffffffff : ((64'd1 << {s_k, 3'd0}) - 64'd1);
/* verilator lint_on WIDTH */

wire run = s_valid && s_en;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    state_next = state_reg;
    m_walk_ready = 1'b0;
    m_word_valid = 1'b0;
    m_step = 1'b0;
    m_xl = 1'b0;
    m_xl_end = {1'b0, s_walk_va} + 65'd8;
    m_d0 = 1'b0;
    m_page = 1'b0;
    m_read = 1'b0;
    m_wr_found = 1'b0;
    m_wr_value = 1'b0;
    m_wr_not_found = 1'b0;
    m_done = 1'b0;
    if (run) begin
        case (state_reg)
            ST_STEP: begin
                m_walk_ready = 1'b1;
                if (s_walk_valid) begin
                    m_step = 1'b1;
                    if (s_walk_cmd == CMD_WORD) begin
                        m_xl = 1'b1;
                        state_next = ST_D0;
                    end else if (s_walk_cmd == CMD_VALUE) begin
                        // Found: the fixed ChaseResp part first (the builder
                        // takes a payload in order), the value bytes follow.
                        m_wr_found = 1'b1;
                        m_xl = 1'b1;
                        m_xl_end = {1'b0, s_walk_va} + {49'd0, vlen_reg};
                        state_next = ST_D0;
                    end else begin
                        state_next = ST_RESP;                // not found
                    end
                end
            end
            ST_D0: begin
                m_d0 = 1'b1;
                state_next = ST_D1;
            end
            ST_D1: begin
                if (got_reg == need_reg) begin
                    // A word goes back to clio_chase; the value ends the walk.
                    m_word_valid = !value_reg;
                    if (value_reg) state_next = ST_RESP;
                    else state_next = ST_STEP;
                end else if (!in_page) begin
                    m_page = 1'b1;
                end else begin
                    m_read = 1'b1;
                    state_next = ST_D2;
                end
            end
            ST_D2: begin
                m_wr_value = value_reg;
                state_next = ST_D1;
            end
            default: begin
                m_wr_not_found = !found_reg;
                m_done = 1'b1;
                state_next = ST_STEP;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (run) begin
        case (state_reg)
            ST_STEP: begin
                if (s_walk_valid) begin
                    base_reg <= s_walk_va;
                    hops_reg <= s_walk_hops;
                    if (s_walk_cmd == CMD_WORD) begin
                        value_reg <= 1'b0;
                        need_reg <= 16'd8;
                    end else if (s_walk_cmd == CMD_VALUE) begin
                        value_reg <= 1'b1;
                        found_reg <= 1'b1;
                        need_reg <= vlen_reg;
                    end else begin
                        found_reg <= 1'b0;
                    end
                end
            end
            ST_D0: begin
                cur_reg <= base_reg;
                got_reg <= 0;
                word_reg <= 0;
            end
            ST_D2: begin
                if (!value_reg) word_reg <= word_reg | ((s_rd & rd_mask) << {got_reg[2:0], 3'd0});
                got_reg <= got_reg + s_k;
                cur_reg <= cur_reg + {48'd0, s_k};
            end
            default: begin end
        endcase
    end
    if (s_start) begin
        state_reg <= ST_STEP;
        vlen_reg <= s_vlen;
    end
    if (rst) state_reg <= ST_STEP;
end

endmodule

`resetall
