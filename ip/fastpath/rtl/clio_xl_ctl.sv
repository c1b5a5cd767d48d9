// clio_xl_ctl: the translation loop: a VA range page by page through the TLB and, on a miss, the walk stage.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs the stage in one state, S_XL (`s_valid`); a caller enters
// it at the state it names (`s_at`: 0 the range's first check, 1 the next
// page, 2 the TLB's answer to a lookup the caller issued), which the stage
// takes from ST_IDLE (`s_ready`). Every stage state is one engine cycle, as
// the engine's former S_XL_BEGIN, S_XL_PAGE, S_XL_TLBW, S_XL_WALK, S_XL_OK,
// S_XL_FAILU and S_XL_FAILB states were. The range and the page (`xl_*`,
// `pg_*`) stay the engine's registers: the stage reads their checks and says
// what the engine loads and where it goes. What it borrows from the engine
// is a call (the walk's fault-queue flush and ring PROBE, the error report):
// the engine leaves S_XL, does it and comes back, and the stage goes on
// where it stopped.
//   ST_BEGIN  the page count cleared (`m_clear`); a range past the VA
//             space's top (`s_wraps`) fails UNMAPPED, else ST_PAGE.
//   ST_PAGE   the first pass at the range's end (`s_at_end`): back to the
//             caller (`m_ret`); a VA outside the space (`s_va_bad`) fails
//             UNMAPPED; else the page's shift and VPN loaded and the TLB
//             looked up (`m_look`).
//   ST_TLBW   the TLB's answer: a hit loads the PPN and permissions
//             (`m_tlb_load`) and fails PERMISSION without the needed ones,
//             else the page is translated (below); a miss goes to the walk
//             stage (`m_walk`, its hand-off).
//   ST_WALK   the walk stage runs (`m_walking`); its flush and PROBE are the
//             engine's calls (`m_flush`, `m_probe`, back here), its failure
//             fails (`m_fail`, its status), its report is the engine's error
//             report (`m_report`, back in ST_FAILB for BUSY, else ST_FAILU),
//             the TLB insert or the fault queued: ST_OK.
//   ST_OK     the page is translated (below).
//   ST_FAILU  after the report: UNMAPPED (`m_fail`).
//   ST_FAILB  after the report: BUSY (`m_fail`).
// A translated page (`m_ok`: its bounds and `pg_ok` loaded): a second pass
// (`s_pass2`, one page) goes back to the caller; a page after it in the
// range (`s_more`) is the next (`m_next`, ST_PAGE); else the range is done
// (`m_last`) and goes to the write lane (`s_wl_take`: `m_hand_off`), the
// atomics stage (`s_at_take`: `m_let_go`), the engine's atomic read
// (`s_at_read`: `m_at_read`) or back to the caller (`m_ret`).
// `m_tlbw`, `m_at_ok` and `m_walking` (in S_XL, at ST_TLBW, ST_OK, ST_WALK)
// are from the state alone, held or not, as the engine's state terms they
// replace (the write lane's and atomics stage's early hand-off, the walk
// stage's run, the hit lane beside a walk). `s_en` low (the engine held)
// stops the stage as it stops the engine; `s_idle` (the engine idle) clears it.
module clio_xl_ctl (
    input  wire       clk,
    input  wire       rst,

    // The engine: in S_XL, the state a call enters at, idle, held.
    input  wire       s_valid,
    input  wire [1:0] s_at,
    output wire       s_ready,
    input  wire       s_idle,
    input  wire       s_en,

    // The range and the page: the range wraps, the first pass is at its
    // end, the current VA is outside the space, a second pass, a page after
    // the current one.
    input  wire       s_wraps,
    input  wire       s_at_end,
    input  wire       s_va_bad,
    input  wire       s_pass2,
    input  wire       s_more,

    // The TLB's answer to the page's lookup.
    input  wire       s_tlb_valid,
    input  wire       s_tlb_hit,
    input  wire       s_tlb_perm_ok,

    // The walk stage's verdicts (clio_xl_walk): inserted or the fault queued,
    // failed, reported (with its status), its calls.
    input  wire       s_walk_ok,
    input  wire       s_walk_fail,
    input  wire       s_walk_report,
    input  wire [7:0] s_walk_status,
    input  wire       s_walk_flush,
    input  wire       s_walk_probe,

    // The range's last page taken by the write lane, the atomics stage, the
    // engine's atomic read.
    input  wire       s_wl_take,
    input  wire       s_at_take,
    input  wire       s_at_read,

    // The engine's loads, calls and exits.
    output logic       m_clear,
    output logic       m_look,
    output logic       m_tlb_load,
    output logic       m_walk,
    output logic       m_fail,
    output logic       m_report,
    output logic [7:0] m_status,
    output logic       m_flush,
    output logic       m_probe,
    output logic       m_ok,
    output logic       m_next,
    output logic       m_last,
    output logic       m_hand_off,
    output logic       m_let_go,
    output logic       m_at_read,
    output logic       m_ret,
    output wire        m_tlbw,
    output wire        m_at_ok,
    output wire        m_walking
);

import clio_pkg::*;

typedef enum logic [2:0] {
    ST_BEGIN = 3'd0, ST_PAGE = 3'd1, ST_TLBW = 3'd2, ST_WALK = 3'd3, ST_OK = 3'd4, ST_FAILU = 3'd5,
    ST_FAILB = 3'd6, ST_IDLE = 3'd7
} st_t;

st_t state_reg = ST_IDLE, state_next;
// The state this cycle: from ST_IDLE, the one the call enters at.
st_t at;
logic page_ok;

assign at = state_reg != ST_IDLE ? state_reg : s_at == 2'd1 ? ST_PAGE : s_at == 2'd2 ? ST_TLBW : ST_BEGIN;
assign s_ready = state_reg == ST_IDLE;
assign m_tlbw = s_valid && at == ST_TLBW;
assign m_at_ok = s_valid && at == ST_OK;
assign m_walking = s_valid && at == ST_WALK;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    m_clear = 1'b0;
    m_look = 1'b0;
    m_tlb_load = 1'b0;
    m_walk = 1'b0;
    m_fail = 1'b0;
    m_report = 1'b0;
    m_status = STATUS_OK;
    m_flush = 1'b0;
    m_probe = 1'b0;
    m_ok = 1'b0;
    m_next = 1'b0;
    m_last = 1'b0;
    m_hand_off = 1'b0;
    m_let_go = 1'b0;
    m_at_read = 1'b0;
    m_ret = 1'b0;
    page_ok = 1'b0;
    if (s_en && s_valid) begin
        state_next = at;                                 // a call entered: wait there
        case (at)
            ST_BEGIN: begin
                m_clear = 1'b1;
                if (s_wraps) begin
                    m_fail = 1'b1;
                    m_status = STATUS_UNMAPPED;
                    state_next = ST_IDLE;
                end else begin
                    state_next = ST_PAGE;
                end
            end
            ST_PAGE: begin
                if (!s_pass2 && s_at_end) begin
                    m_ret = 1'b1;
                    state_next = ST_IDLE;
                end else if (s_va_bad) begin
                    m_fail = 1'b1;
                    m_status = STATUS_UNMAPPED;
                    state_next = ST_IDLE;
                end else begin
                    m_look = 1'b1;
                    state_next = ST_TLBW;
                end
            end
            ST_TLBW: begin
                if (s_tlb_valid && s_tlb_hit) begin
                    m_tlb_load = 1'b1;
                    if (!s_tlb_perm_ok) begin
                        m_fail = 1'b1;
                        m_status = STATUS_PERMISSION;
                        state_next = ST_IDLE;
                    end else begin
                        page_ok = 1'b1;                  // ST_OK's work, a cycle sooner
                    end
                end else if (s_tlb_valid) begin
                    m_walk = 1'b1;
                    state_next = ST_WALK;
                end
            end
            ST_WALK: begin
                m_flush = s_walk_flush;
                m_probe = s_walk_probe;
                if (s_walk_fail) begin
                    m_fail = 1'b1;
                    m_status = s_walk_status;
                    state_next = ST_IDLE;
                end else if (s_walk_report) begin
                    m_report = 1'b1;
                    m_status = s_walk_status;
                    if (s_walk_status == STATUS_BUSY) state_next = ST_FAILB;
                    else state_next = ST_FAILU;
                end else if (s_walk_ok) begin
                    state_next = ST_OK;
                end
            end
            ST_OK: page_ok = 1'b1;
            ST_FAILU: begin
                m_fail = 1'b1;
                m_status = STATUS_UNMAPPED;
                state_next = ST_IDLE;
            end
            default: begin                               // ST_FAILB
                m_fail = 1'b1;
                m_status = STATUS_BUSY;
                state_next = ST_IDLE;
            end
        endcase
        if (page_ok) begin
            m_ok = 1'b1;
            if (s_pass2) begin
                m_ret = 1'b1;
                state_next = ST_IDLE;
            end else if (s_more) begin
                m_next = 1'b1;
                state_next = ST_PAGE;
            end else begin
                m_last = 1'b1;
                state_next = ST_IDLE;
                if (s_wl_take) m_hand_off = 1'b1;        // a one-page WRITE: the lane takes it
                else if (s_at_take) m_let_go = 1'b1;     // the atomics stage takes it
                else if (s_at_read) m_at_read = 1'b1;    // the atomic's read (`at_read`), a cycle sooner
                else m_ret = 1'b1;
            end
        end
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (s_idle || rst) state_reg <= ST_IDLE;
end

endmodule

`resetall
