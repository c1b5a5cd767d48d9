// clio_at_engine: the atomics that stay on the engine (LOCK, UNLOCK, an atomic with a fault queued) and the record.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs the stage in one state, S_AT (`s_valid`); a caller enters
// it at the state it names (`s_at`: 0 the atomic's word translated, 1 the
// word read, 2 an executed request's record), which the stage takes from
// ST_IDLE (`s_ready`). Every stage state is one engine cycle, as the
// engine's former S_AT_READ, S_AT_SYNCW, S_AT_RESP, S_AT_WR, S_AT_WRB and
// S_REC1 states were. The word's read is a call: the engine's `at_read`
// (through S_MEM_RD, back at 1; the translation loop calls it itself, a
// cycle sooner); the sync unit, the answer's fields and the lock counts stay
// the engine's: the stage reads their verdicts and says what the engine
// loads and where it goes.
//   ST_READ   the atomics stage takes the atomic (`s_take`: `m_let_go`),
//             else the word's read (`m_read`).
//   ST_SYNCW  the sync unit's result (`s_sync_valid`): a LOCK over the
//             session's quota (`s_lock_over`) fails OVER_QUOTA (`m_fail`);
//             a write or STATUS_OK loads the answer's fields (`m_result`)
//             and the write (`m_wr_load`; offered to the port in this
//             cycle: `m_wr_now`), ST_WR if the port did not take it, else
//             ST_WRB (a CAS that did not match: the B counts as seen);
//             else ST_RESP.
//   ST_WR     the write held on the port (`m_wr`) until it is taken.
//   ST_WRB    the B (`s_port_done`, seen); with it in and the builder free
//             (`s_free`): the answer's payload (`m_payload`), the lock count
//             (`m_locks`), the record and the answer's start (`m_record`).
//   ST_RESP   the answer's fields (`m_result`) and payload (`m_payload`);
//             STATUS_OK: the lock count (`m_locks`) and ST_REC1, else the
//             answer sent (`m_send`).
//   ST_REC1   the record and the answer's start (`m_record`).
// `m_at_read`, `m_at_resp`, `m_at_rec`, `m_wr`, `m_port` (ST_WR or ST_WRB)
// and `m_wr_now` are from the state (and the sync unit) alone, held or not,
// as the engine's state terms they replace (`at_hold`, `eng_hold`, the
// engine port's valid and write, the atomics stage's free port). `s_en` low
// (the engine held) stops the stage as it stops the engine; `s_idle` (the
// engine idle) clears it.
module clio_at_engine (
    input  wire       clk,
    input  wire       rst,

    // The engine: in S_AT, the state a call enters at, idle, held.
    input  wire       s_valid,
    input  wire [1:0] s_at,
    output wire       s_ready,
    input  wire       s_idle,
    input  wire       s_en,

    // The atomics stage takes the atomic instead.
    input  wire       s_take,

    // The sync unit's result: out, a write, STATUS_OK, a LOCK over quota.
    input  wire       s_sync_valid,
    input  wire       s_sync_write,
    input  wire       s_sync_ok,
    input  wire       s_lock_over,

    // The engine port (the write taken, its B), the builder free.
    input  wire       s_port_ready,
    input  wire       s_port_done,
    input  wire       s_free,

    // The engine's loads, calls and exits.
    output logic      m_let_go,
    output logic      m_read,
    output logic      m_fail,
    output logic      m_result,
    output logic      m_wr_load,
    output logic      m_payload,
    output logic      m_locks,
    output logic      m_send,
    output logic      m_record,
    output wire       m_at_read,
    output wire       m_at_resp,
    output wire       m_at_rec,
    output wire       m_wr,
    output wire       m_port,
    output wire       m_wr_now
);

typedef enum logic [2:0] {
    ST_READ = 3'd0, ST_SYNCW = 3'd1, ST_REC1 = 3'd2, ST_RESP = 3'd3, ST_WR = 3'd4, ST_WRB = 3'd5,
    ST_IDLE = 3'd7
} st_t;

st_t state_reg = ST_IDLE, state_next;
// The state this cycle: from ST_IDLE, the one the call enters at.
st_t at;
reg  b_seen = 1'b0;                                      // the write's B seen (or no write)
wire b_in = b_seen || (at == ST_WRB && s_port_done);
wire go = at == ST_WRB && b_in && s_free;

assign at = state_reg != ST_IDLE ? state_reg : s_at == 2'd1 ? ST_SYNCW : s_at == 2'd2 ? ST_REC1 : ST_READ;
assign s_ready = state_reg == ST_IDLE;
assign m_at_read = s_valid && at == ST_READ;
assign m_at_resp = s_valid && at == ST_RESP;
assign m_at_rec = s_valid && at == ST_REC1;
assign m_wr = s_valid && at == ST_WR;
assign m_port = s_valid && (at == ST_WR || at == ST_WRB);
assign m_wr_now = s_valid && at == ST_SYNCW && s_sync_valid && s_sync_write && !s_lock_over;

// `always @*`, not `always_comb`: in the whole board top Icarus 11 never got
// past time 0 with `always_comb` in a stage (bitstream/zcu106/tb).
always @* begin
    state_next = state_reg;
    m_let_go = 1'b0;
    m_read = 1'b0;
    m_fail = 1'b0;
    m_result = 1'b0;
    m_wr_load = 1'b0;
    m_payload = 1'b0;
    m_locks = 1'b0;
    m_send = 1'b0;
    m_record = 1'b0;
    if (s_en && s_valid) begin
        state_next = at;                                 // a call entered: wait there
        case (at)
            ST_READ: begin
                if (s_take) m_let_go = 1'b1;
                else m_read = 1'b1;
                state_next = ST_IDLE;
            end
            ST_SYNCW: begin
                if (s_sync_valid) begin
                    if (s_lock_over) begin
                        m_fail = 1'b1;
                        state_next = ST_IDLE;
                    end else if (s_sync_write || s_sync_ok) begin
                        m_result = 1'b1;
                        m_wr_load = 1'b1;
                        if (s_sync_write && !s_port_ready) state_next = ST_WR;
                        else state_next = ST_WRB;
                    end else begin
                        state_next = ST_RESP;
                    end
                end
            end
            ST_RESP: begin
                m_result = 1'b1;
                m_payload = 1'b1;
                if (s_sync_ok) begin
                    m_locks = 1'b1;
                    state_next = ST_REC1;
                end else begin
                    m_send = 1'b1;
                    state_next = ST_IDLE;
                end
            end
            ST_WR: if (s_port_ready) state_next = ST_WRB;
            ST_WRB: begin
                if (go) begin
                    m_payload = 1'b1;
                    m_locks = 1'b1;
                    m_record = 1'b1;
                    state_next = ST_IDLE;
                end
            end
            default: begin                               // ST_REC1
                m_record = 1'b1;
                state_next = ST_IDLE;
            end
        endcase
    end
end

always_ff @(posedge clk) begin
    state_reg <= state_next;
    if (s_en && s_valid && at == ST_SYNCW && s_sync_valid && !s_lock_over && (s_sync_write || s_sync_ok))
        b_seen <= !s_sync_write;
    if (s_en && s_valid && at == ST_WRB && s_port_done) b_seen <= 1'b1;
    if (s_idle || rst) state_reg <= ST_IDLE;
end

endmodule

`resetall
