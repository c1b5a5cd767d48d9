// clio_xl_walk: the translation stage's page-table walk and fault handling for a page the TLB missed.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The translation loop (clio_xl_ctl) hands it a page the TLB missed
// (`s_valid && s_ready`, at its ST_TLBW as the TLB answers) and it runs
// while the loop is at its ST_WALK, the engine in S_XL (`s_run`); every
// stage state is one engine cycle, as the engine's former S_XL_HASHW,
// S_XL_PTF, S_XL_PTFW, S_XL_PTE, S_XL_FAULT, S_XL_FAULTW and S_XL_ENQ states
// were. What the stage borrows from the engine is a call (a flush of the
// fault queue, the RX ring's PROBE), passed on by the loop: the engine
// leaves S_XL, does it and comes back, and the stage goes on where it
// stopped.
// The page's PID, VPN, shift, bucket and PTE stay the engine's registers
// (the hash unit, the bucket reader, the permission check and the fault unit
// read them as before); the stage drives the units' valids and says what the
// engine loads and where it goes.
//   ST_HASHW  the hash unit works (`m_hash_valid` the cycle after the hand-off);
//             its answer: the engine loads the bucket (`m_bucket`), the bucket
//             reader starts (`m_ptf_valid` the next cycle).
//   ST_PTF    the reader's first cycle.
//   ST_PTFW   the reader's answer: the engine loads the PTE (`m_pte`).
//   ST_PTE    the permission check's verdict: the TLB insert (`m_insert`,
//             the walk is over: the loop's ST_OK) at once; any other once the
//             hit lane beside the walk is quiet (`s_lane_busy`): a failure (`m_fail`, the check's
//             status); a fault: the fault unit starts (`m_fault_valid`) if the
//             RX ring has a credit, else the fault queue is flushed first
//             (`m_flush`, back here) or, empty, the ring probed (`m_probe`,
//             back in ST_FAULT); a PPN outside the data area: UNMAPPED
//             reported (`m_report`, the walk is over).
//   ST_FAULT  the fault unit starts after the probe.
//   ST_FAULTW its answer: taken, the engine loads its PPN (`m_fault_ppn`) and
//             queues the fault (`m_enq_unit`, the walk is over), or, the
//             queue full, flushes it first (`m_flush`, back in ST_ENQ);
//             code 1: UNMAPPED (`m_fail`); code 2: BUSY reported (`m_report`);
//             else BUSY (`m_fail`).
//   ST_ENQ    the fault queued after the flush (`m_enq`, the loaded PPN).
// `m_ptf_own` (ST_PTF, ST_PTFW): the bucket reader owns the engine's arbiter
// client (the top's `sel_ptf`); `m_walking` (ST_HASHW … ST_PTE) and `m_at_pte`
// (ST_PTE) are what the hit lane beside a walk reads (the top's `lane_walk`).
// `s_en` low (the engine held) stops the stage as it stops the engine;
// `s_idle` (the engine idle) clears it.
module clio_xl_walk (
    input  wire        clk,
    input  wire        rst,

    // The engine: the page to walk, the stage runs, idle, held.
    input  wire        s_valid,
    output logic       s_ready,
    input  wire        s_run,
    input  wire        s_idle,
    input  wire        s_en,

    // The bucket hash and the bucket reader.
    output reg         m_hash_valid = 1'b0,
    input  wire        s_hash_valid,
    output reg         m_ptf_valid = 1'b0,
    input  wire        s_ptf_valid,

    // The permission check of the loaded PTE, the data area, the hit lane.
    input  wire [7:0]  s_perm_status,
    input  wire        s_perm_fault,
    input  wire        s_in_data,
    input  wire        s_lane_busy,

    // The fault unit and what a fault needs: an RX-ring credit, the queue.
    output reg         m_fault_valid = 1'b0,
    input  wire        s_fault_valid,
    input  wire        s_fault_ok,
    input  wire [1:0]  s_fault_code,
    input  wire        s_credit,
    input  wire        s_fq_any,
    input  wire        s_fq_full,

    // The engine's loads, calls and exits.
    output logic       m_bucket,
    output logic       m_pte,
    output logic       m_fail,
    output logic       m_report,
    output logic [7:0] m_status,
    output logic       m_flush,
    output logic       m_probe,
    output logic       m_fault_ppn,
    output logic       m_enq_unit,
    output logic       m_enq,
    output logic       m_insert,
    output wire        m_ptf_own,
    output wire        m_walking,
    output wire        m_at_pte
);

import clio_pkg::*;

typedef enum logic [2:0] {
    ST_IDLE, ST_HASHW, ST_PTF, ST_PTFW, ST_PTE, ST_FAULT, ST_FAULTW, ST_ENQ
} st_t;

st_t state_reg = ST_IDLE, state_next;
logic fault_go;

// From the state alone (the top's `lane_walk` reads them and feeds `s_lane_busy`).
assign m_ptf_own = state_reg == ST_PTF || state_reg == ST_PTFW;
assign m_walking = state_reg == ST_HASHW || state_reg == ST_PTF || state_reg == ST_PTFW || state_reg == ST_PTE;
assign m_at_pte = state_reg == ST_PTE;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    s_ready = state_reg == ST_IDLE;
    m_bucket = 1'b0;
    m_pte = 1'b0;
    m_fail = 1'b0;
    m_report = 1'b0;
    m_status = STATUS_OK;
    m_flush = 1'b0;
    m_probe = 1'b0;
    m_fault_ppn = 1'b0;
    m_enq_unit = 1'b0;
    m_enq = 1'b0;
    m_insert = 1'b0;
    fault_go = 1'b0;
    if (s_en && state_reg == ST_IDLE) begin
        if (s_valid) state_next = ST_HASHW;
    end else if (s_en && s_run) begin
        case (state_reg)
            ST_HASHW: begin
                if (s_hash_valid) begin
                    m_bucket = 1'b1;
                    state_next = ST_PTF;
                end
            end
            ST_PTF: state_next = ST_PTFW;
            ST_PTFW: begin
                if (s_ptf_valid) begin
                    m_pte = 1'b1;
                    state_next = ST_PTE;
                end
            end
            ST_PTE: begin
                if (s_perm_status == STATUS_OK && !s_perm_fault && s_in_data) begin
                    // The insert does not wait for the lane: the engine holds
                    // the READ's answer until the hits looked up before it
                    // have answered (the top's `lane_pre_hold`).
                    m_insert = 1'b1;
                    state_next = ST_IDLE;
                end else if (s_lane_busy) begin
                    // The lane's hits looked up during the walk answer first.
                end else if (s_perm_status != STATUS_OK) begin
                    m_fail = 1'b1;
                    m_status = s_perm_status;
                    state_next = ST_IDLE;
                end else if (s_perm_fault) begin
                    if (s_credit) begin
                        fault_go = 1'b1;
                        state_next = ST_FAULTW;
                    end else if (s_fq_any) begin
                        m_flush = 1'b1;                  // settle the ring, then look again
                    end else begin
                        m_probe = 1'b1;                  // PROBE: room for PA_CONSUMED?
                        state_next = ST_FAULT;
                    end
                end else begin
                    m_report = 1'b1;                     // !s_in_data
                    m_status = STATUS_UNMAPPED;
                    state_next = ST_IDLE;
                end
            end
            ST_FAULT: begin
                fault_go = 1'b1;
                state_next = ST_FAULTW;
            end
            ST_FAULTW: begin
                if (s_fault_valid) begin
                    state_next = ST_IDLE;
                    if (s_fault_ok) begin
                        m_fault_ppn = 1'b1;
                        if (s_fq_full) begin
                            m_flush = 1'b1;
                            state_next = ST_ENQ;
                        end else begin
                            m_enq_unit = 1'b1;
                        end
                    end else if (s_fault_code == 2'd1) begin
                        m_fail = 1'b1;
                        m_status = STATUS_UNMAPPED;
                    end else if (s_fault_code == 2'd2) begin
                        m_report = 1'b1;
                        m_status = STATUS_BUSY;
                    end else begin
                        m_fail = 1'b1;
                        m_status = STATUS_BUSY;
                    end
                end
            end
            default: begin                               // ST_ENQ
                m_enq = 1'b1;
                state_next = ST_IDLE;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    m_hash_valid <= s_en && state_reg == ST_IDLE && s_valid;
    m_ptf_valid <= m_bucket;
    m_fault_valid <= fault_go;
    if (s_idle || rst) begin
        state_reg <= ST_IDLE;
        m_hash_valid <= 1'b0;
        m_ptf_valid <= 1'b0;
        m_fault_valid <= 1'b0;
    end
end

endmodule

`resetall
