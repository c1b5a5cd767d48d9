// clio_err_report: the error report: an ERROR_REPORT pushed to the slow path's RX ring, with the count of reports lost.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs the stage while it is in S_REP (`s_valid`), entered with
// the report's fields set (`s_status`, `s_pid`, `s_va`, `s_opcode`), and
// goes where the caller said once the stage is done (`m_done`). Every stage
// state is one engine cycle, as the engine's former S_REP and S_REP_DONE:
//   ST_REP   the descriptor is loaded (`m_desc_load`, `m_desc`); notices
//            still queued (`s_fq_pending`) go first (`m_flush`, a call: the
//            ring keeps the reference order), then the report is pushed
//            (`m_push`, a call to the engine's ring access).
//   ST_DONE  a report the full ring dropped (`s_ring_full`) is counted; the
//            next report carries the count of those lost since the last one
//            pushed, itself included (saturating at 2^32 - 1); a pushed
//            report clears it.
// `s_en` low (the engine held) stops the stage as it stops the engine.
module clio_err_report #(
    // Width of a ring descriptor (the AXI data width).
    parameter DATA_WIDTH = 512
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  s_valid,
    input  wire                  s_en,
    input  wire  [7:0]           s_status,
    input  wire  [31:0]          s_pid,
    input  wire  [63:0]          s_va,
    input  wire  [7:0]           s_opcode,
    output logic                 m_done,

    // The engine's notice flush and ring push (calls), the ring's verdict.
    input  wire                  s_fq_pending,
    output logic                 m_flush,
    output logic                 m_push,
    output logic                 m_desc_load,
    output logic [DATA_WIDTH-1:0] m_desc,
    input  wire                  s_ring_full
);

import clio_pkg::*;

typedef enum logic {
    ST_REP, ST_DONE
} st_t;

st_t state_reg = ST_REP, state_next;
reg [31:0] unreported_reg = 0;    // reports lost since the last one pushed

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    m_desc = 0;
    m_desc[SLOT_OFF_KIND*8 +: 8] = DESC_ERROR_REPORT;
    m_desc[SLOT_OFF_STATUS*8 +: 8] = s_status;
    m_desc[SLOT_OFF_PID*8 +: 32] = s_pid;
    m_desc[SLOT_OFF_A*8 +: 64] = s_va;
    m_desc[SLOT_OFF_B*8 +: 8] = s_opcode;
    m_desc[SLOT_OFF_F*8 +: 32] = unreported_reg == 32'hffffffff ? unreported_reg : unreported_reg + 1'b1;
end

always @* begin
    state_next = state_reg;
    m_done = 1'b0;
    m_flush = 1'b0;
    m_push = 1'b0;
    m_desc_load = 1'b0;
    if (s_valid && s_en) begin
        case (state_reg)
            ST_REP: begin
                m_desc_load = 1'b1;
                if (s_fq_pending) begin
                    m_flush = 1'b1;
                end else begin
                    m_push = 1'b1;
                    state_next = ST_DONE;
                end
            end
            default: begin
                m_done = 1'b1;
                state_next = ST_REP;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (s_valid && s_en && state_reg == ST_DONE) begin
        if (s_ring_full) begin
            if (unreported_reg != 32'hffffffff) unreported_reg <= unreported_reg + 1'b1;
        end else begin
            unreported_reg <= 0;
        end
    end
    if (rst) begin
        state_reg <= ST_REP;
        unreported_reg <= 0;
    end
end

endmodule

`resetall
