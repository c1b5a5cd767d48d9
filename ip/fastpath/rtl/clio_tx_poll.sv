// clio_tx_poll: the TX-ring poll loop: pop the slow path's TX ring slot by slot, hand each command on.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A poll (the top's `poll` input, taken while the engine idles) visits at
// most `s_slots` slots of the TX ring. The engine starts it (`s_start`, as it
// enters S_POLL: slot 0) and runs the stage while it is in S_POLL
// (`s_valid`); every stage state is one engine cycle, as the engine's
// former S_POLL, S_POLL_POPPED, S_POLL_NEXT and S_POLL_DONE states were.
// What the stage borrows from the engine is a call: the engine leaves S_POLL,
// does it and comes back, and the stage goes on where it stopped.
//   ST_SLOT    all slots visited: done; else the next slot is popped
//              (`m_pop`: the engine's ring access, clio_ring_dma POP).
//   ST_POPPED  the pop's outcome (`s_empty`, `s_bad_head`, `s_rejected`,
//              held by the ring until its next command); the engine loads the
//              descriptor and a MALFORMED report's defaults (`m_popped`).
//              Empty ring: done. A head that does not parse: reported
//              (`m_report`, the engine's error report), then done. A slot the
//              ring rejected: reported, then the next slot. Else the command
//              goes to clio_tx_cmd (`m_cmd`); every way out of it comes back
//              here for the next slot.
//   ST_NEXT    the next slot.
//   ST_DONE    the poll is over (`m_done`: the engine idles again).
// `s_en` low (the engine held) stops the stage as it stops the engine.
module clio_tx_poll (
    input  wire        clk,
    input  wire        rst,

    // The engine: idle (no poll inside), the stage runs, the slots to visit.
    input  wire        s_idle,
    input  wire        s_valid,
    input  wire        s_en,
    input  wire [31:0] s_slots,

    // The ring pop (a call) and its outcome.
    output logic       m_pop,
    input  wire        s_empty,
    input  wire        s_bad_head,
    input  wire        s_rejected,
    output logic       m_popped,

    // Where the engine goes: the error report (a call), the TX command (a
    // call), or back to idle.
    output logic       m_report,
    output logic       m_cmd,
    output logic       m_done
);

typedef enum logic [1:0] {
    ST_SLOT, ST_POPPED, ST_NEXT, ST_DONE
} st_t;

st_t state_reg = ST_SLOT, state_next;
reg [31:0] slot_reg = 0;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` here (bitstream/zcu106/tb, the clocks bench).
always @* begin
    state_next = state_reg;
    m_pop = 1'b0;
    m_popped = 1'b0;
    m_report = 1'b0;
    m_cmd = 1'b0;
    m_done = 1'b0;
    if (s_valid && s_en) begin
        case (state_reg)
            ST_SLOT: begin
                if (slot_reg == s_slots) begin
                    state_next = ST_DONE;
                end else begin
                    m_pop = 1'b1;
                    state_next = ST_POPPED;
                end
            end
            ST_POPPED: begin
                m_popped = 1'b1;
                if (s_empty) begin
                    state_next = ST_DONE;
                end else if (s_bad_head) begin
                    m_report = 1'b1;
                    state_next = ST_DONE;
                end else if (s_rejected) begin
                    m_report = 1'b1;
                    state_next = ST_NEXT;
                end else begin
                    m_cmd = 1'b1;
                    state_next = ST_NEXT;
                end
            end
            ST_NEXT: state_next = ST_SLOT;
            default: begin
                m_done = 1'b1;
                state_next = ST_SLOT;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (s_valid && s_en && state_reg == ST_NEXT) slot_reg <= slot_reg + 1'b1;
    if (s_idle) begin
        state_reg <= ST_SLOT;
        slot_reg <= 0;
    end
    if (rst) begin
        state_reg <= ST_SLOT;
        slot_reg <= 0;
    end
end

endmodule

`resetall
