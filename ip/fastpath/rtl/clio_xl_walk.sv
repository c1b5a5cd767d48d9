// clio_xl_walk: the translation stage's page-table walk: a TLB miss's bucket hash and bucket read.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine hands it a page the TLB missed (`s_valid && s_ready`, in
// S_XL_TLBW as the TLB answers) and waits in one state, S_XL_WALK, while the
// stage runs; every stage state is one engine cycle, as the engine's former
// S_XL_HASHW, S_XL_PTF and S_XL_PTFW states were. The page's PID, VPN, shift
// and bucket stay the engine's registers (the hash unit and the bucket reader
// read them as before); the stage drives both units' valids.
//   ST_HASHW  the hash unit works (`m_hash_valid` the cycle after the hand-off);
//             its answer: the engine loads the bucket (`m_bucket`), the bucket
//             reader starts (`m_ptf_valid` the next cycle).
//   ST_PTF    the reader's first cycle.
//   ST_PTFW   the reader's answer: the engine loads the PTE it found (or not:
//             `m_done`) and goes to S_XL_PTE (the permission check).
// `m_ptf_own` (ST_PTF, ST_PTFW): the bucket reader owns the engine's arbiter
// client (the top's `sel_ptf`). `s_en` low (the engine held) stops the stage as
// it stops the engine; `s_idle` (the engine idle) clears it.
module clio_xl_walk (
    input  wire        clk,
    input  wire        rst,

    // The engine: the page to walk, idle, held.
    input  wire        s_valid,
    output logic       s_ready,
    input  wire        s_idle,
    input  wire        s_en,

    // The bucket hash and the bucket reader.
    output reg         m_hash_valid = 1'b0,
    input  wire        s_hash_valid,
    output reg         m_ptf_valid = 1'b0,
    input  wire        s_ptf_valid,

    // The engine's loads: the bucket, then the PTE (the walk is over).
    output logic       m_bucket,
    output logic       m_done,
    output logic       m_ptf_own,
    output logic       m_active
);

typedef enum logic [1:0] {
    ST_IDLE, ST_HASHW, ST_PTF, ST_PTFW
} st_t;

st_t state_reg = ST_IDLE, state_next;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    s_ready = state_reg == ST_IDLE;
    m_bucket = 1'b0;
    m_done = 1'b0;
    m_ptf_own = state_reg == ST_PTF || state_reg == ST_PTFW;
    m_active = state_reg != ST_IDLE;
    if (s_en) begin
        case (state_reg)
            ST_IDLE: if (s_valid) state_next = ST_HASHW;
            ST_HASHW: begin
                if (s_hash_valid) begin
                    m_bucket = 1'b1;
                    state_next = ST_PTF;
                end
            end
            ST_PTF: state_next = ST_PTFW;
            default: begin
                if (s_ptf_valid) begin
                    m_done = 1'b1;
                    state_next = ST_IDLE;
                end
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    m_hash_valid <= s_en && state_reg == ST_IDLE && s_valid;
    m_ptf_valid <= m_bucket;
    if (s_idle || rst) begin
        state_reg <= ST_IDLE;
        m_hash_valid <= 1'b0;
        m_ptf_valid <= 1'b0;
    end
end

endmodule

`resetall
