// clio_fwd_table: requests forwarded to the slow path (tags in flight) and the fences waiting for them.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Pending slots (reference model `Pending`, ip/fastpath/src/control.rs):
// each holds the request as last seen (a retry re-targets the answer to
// itself), the session it belongs to, the id of its first attempt (its dedup
// id) and a 16-bit generation that is never 0 (so no tag is 0: a
// SESSION_REPLY with tag 0 answers nobody); the tag handed to the slow path
// is `generation << 16 | slot`. Fence slots hold a FENCE waiting until no
// forwarded request of its PID is pending.
// All queries are combinational over the registered table (the engine holds
// their inputs in registers); updates take effect at the clock edge:
//  match       live slot of session `q_session` (never 0: OPEN_SESSION
//              requests and orphans are never matched) with opcode
//              `q_opcode` and first id `q_id`; the lowest such slot.
//  pending     some live slot has PID `q_pid`.
//  free        lowest slot not live, with its generation.
//  tag         `s_tag` names a live slot of the same generation; that slot's
//              fields are presented.
//  fence_wait  some waiting fence has PID `q_pid` (lowest one in
//              `m_fence_index`, its fields presented); `m_fence_any`: any
//              fence waits; `m_fence_free`: lowest free fence slot.
module clio_fwd_table #(
    parameter SLOTS = 64,
    parameter FENCES = 16
) (
    input  wire                    clk,
    input  wire                    rst,

    // Queries.
    input  wire [31:0]             q_pid,
    input  wire [15:0]             q_session,
    input  wire [7:0]              q_opcode,
    input  wire [31:0]             q_id,
    output reg                     m_match,
    output reg  [$clog2(SLOTS)-1:0] m_match_index,
    output reg                     m_pending,
    output reg                     m_free,
    output reg  [$clog2(SLOTS)-1:0] m_free_index,
    output wire [15:0]             m_free_gen,

    // The slot named by a tag.
    input  wire [31:0]             s_tag,
    output wire                    m_tag_ok,
    output wire [31:0]             m_pid,
    output wire [7:0]              m_opcode,
    output wire [31:0]             m_req_id,
    output wire [31:0]             m_retry_of,
    output wire [31:0]             m_first_req_id,
    output wire [63:0]             m_va,
    output wire [31:0]             m_total_len,
    output wire [31:0]             m_offset,
    output wire [15:0]             m_session,      // as the request carried it (echoed)
    output wire [15:0]             m_dd_session,   // 0 once orphaned
    output wire [31:0]             m_epoch,

    // Fences.
    output reg                     m_fence_wait,
    output reg  [$clog2(FENCES)-1:0] m_fence_index,
    output wire [31:0]             m_fence_req_id,
    output wire [31:0]             m_fence_retry_of,
    output wire [63:0]             m_fence_va,
    output wire [31:0]             m_fence_total_len,
    output wire [31:0]             m_fence_offset,
    output wire [15:0]             m_fence_session,
    output wire [31:0]             m_fence_epoch,
    output wire                    m_fence_any,
    output reg                     m_fence_free,
    output reg  [$clog2(FENCES)-1:0] m_fence_free_index,

    // Updates. `s_set`: write the request fields into slot `s_set_index`
    // and mark it live; `s_set_new` also takes `s_first` as the first id and
    // `s_dd_session` as its session (a new request), else the slot is
    // re-targeted. `s_release`: the slot leaves, its generation advances
    // (skipping 0). `s_fence_set` / `s_fence_clear` likewise for fence slots
    // (`s_fence_set` uses the request fields). `s_orphan`: the slots of
    // session `s_orphan_session` (every slot if `s_orphan_all`) lose their
    // session: they are still answered but never matched or recorded.
    input  wire [31:0]             s_pid,
    input  wire [7:0]              s_opcode,
    input  wire [31:0]             s_req_id,
    input  wire [31:0]             s_retry_of,
    input  wire [63:0]             s_va,
    input  wire [31:0]             s_total_len,
    input  wire [31:0]             s_offset,
    input  wire [15:0]             s_session,
    input  wire [31:0]             s_epoch,
    input  wire [31:0]             s_first,
    input  wire [15:0]             s_dd_session,
    input  wire                    s_set,
    input  wire                    s_set_new,
    input  wire [$clog2(SLOTS)-1:0] s_set_index,
    input  wire                    s_release,
    input  wire [$clog2(SLOTS)-1:0] s_release_index,
    input  wire                    s_fence_set,
    input  wire [$clog2(FENCES)-1:0] s_fence_set_index,
    input  wire                    s_fence_clear,
    input  wire [$clog2(FENCES)-1:0] s_fence_clear_index,
    input  wire                    s_orphan,
    input  wire                    s_orphan_all,
    input  wire [15:0]             s_orphan_session
);

localparam IW = $clog2(SLOTS);
localparam FW = $clog2(FENCES);

initial begin
    if (SLOTS < 2 || SLOTS > 65536) begin
        $error("Error: SLOTS must be 2..65536 (the slot is the low half of a tag) (instance %m)");
        $finish;
    end
    if (FENCES < 2) begin
        $error("Error: FENCES must be at least 2 (instance %m)");
        $finish;
    end
end

reg              live [0:SLOTS-1];
reg [15:0]       gen [0:SLOTS-1];
reg [31:0]       pid_mem [0:SLOTS-1];
reg [7:0]        op_mem [0:SLOTS-1];
reg [31:0]       req_mem [0:SLOTS-1];
reg [31:0]       retry_mem [0:SLOTS-1];
reg [31:0]       first_mem [0:SLOTS-1];
reg [63:0]       va_mem [0:SLOTS-1];
reg [31:0]       len_mem [0:SLOTS-1];
reg [31:0]       off_mem [0:SLOTS-1];
reg [15:0]       hsess_mem [0:SLOTS-1];
reg [15:0]       sess_mem [0:SLOTS-1];
reg [31:0]       epoch_mem [0:SLOTS-1];

reg              f_live [0:FENCES-1];
reg [31:0]       f_pid [0:FENCES-1];
reg [31:0]       f_req [0:FENCES-1];
reg [31:0]       f_retry [0:FENCES-1];
reg [63:0]       f_va [0:FENCES-1];
reg [31:0]       f_len [0:FENCES-1];
reg [31:0]       f_off [0:FENCES-1];
reg [15:0]       f_sess [0:FENCES-1];
reg [31:0]       f_epoch [0:FENCES-1];

integer k;  // initial block only

initial begin
    for (k = 0; k < SLOTS; k = k + 1) begin
        live[k] = 1'b0;
        gen[k] = 16'd1;
        hsess_mem[k] = 0;
        sess_mem[k] = 0;
        epoch_mem[k] = 0;
        pid_mem[k] = 0;
        op_mem[k] = 0;
        req_mem[k] = 0;
        retry_mem[k] = 0;
        first_mem[k] = 0;
        va_mem[k] = 0;
        len_mem[k] = 0;
        off_mem[k] = 0;
    end
    for (k = 0; k < FENCES; k = k + 1) begin
        f_live[k] = 1'b0;
        f_pid[k] = 0;
        f_req[k] = 0;
        f_retry[k] = 0;
        f_va[k] = 0;
        f_len[k] = 0;
        f_off[k] = 0;
        f_sess[k] = 0;
        f_epoch[k] = 0;
    end
end

// Lowest-index priority over the slots (loops run high to low so the last
// assignment is the lowest index).
reg any_fence;
always_comb begin : comb_1
    integer i;  // loop index local to the block (no shared variable between processes)
    m_match = 1'b0;
    m_match_index = 0;
    m_pending = 1'b0;
    m_free = 1'b0;
    m_free_index = 0;
    for (i = SLOTS - 1; i >= 0; i = i - 1) begin
        if (live[i] && sess_mem[i] != 16'd0 && sess_mem[i] == q_session && op_mem[i] == q_opcode
                && first_mem[i] == q_id) begin
            m_match = 1'b1;
            m_match_index = i[IW-1:0];
        end
        if (live[i] && pid_mem[i] == q_pid) m_pending = 1'b1;
        if (!live[i]) begin
            m_free = 1'b1;
            m_free_index = i[IW-1:0];
        end
    end
    m_fence_wait = 1'b0;
    m_fence_index = 0;
    m_fence_free = 1'b0;
    m_fence_free_index = 0;
    any_fence = 1'b0;
    for (i = FENCES - 1; i >= 0; i = i - 1) begin
        if (f_live[i]) any_fence = 1'b1;
        if (f_live[i] && f_pid[i] == q_pid) begin
            m_fence_wait = 1'b1;
            m_fence_index = i[FW-1:0];
        end
        if (!f_live[i]) begin
            m_fence_free = 1'b1;
            m_fence_free_index = i[FW-1:0];
        end
    end
end

assign m_free_gen = gen[m_free_index];
assign m_fence_any = any_fence;

/* verilator lint_off WIDTH */
wire          tag_in_range = s_tag[15:0] < SLOTS;
/* verilator lint_on WIDTH */
wire [IW-1:0] t = s_tag[IW-1:0];
assign m_tag_ok = tag_in_range && live[t] && gen[t] == s_tag[31:16];
assign m_pid = pid_mem[t];
assign m_opcode = op_mem[t];
assign m_req_id = req_mem[t];
assign m_retry_of = retry_mem[t];
assign m_first_req_id = first_mem[t];
assign m_va = va_mem[t];
assign m_total_len = len_mem[t];
assign m_offset = off_mem[t];
assign m_session = hsess_mem[t];
assign m_dd_session = sess_mem[t];
assign m_epoch = epoch_mem[t];

assign m_fence_req_id = f_req[m_fence_index];
assign m_fence_retry_of = f_retry[m_fence_index];
assign m_fence_va = f_va[m_fence_index];
assign m_fence_total_len = f_len[m_fence_index];
assign m_fence_offset = f_off[m_fence_index];
assign m_fence_session = f_sess[m_fence_index];
assign m_fence_epoch = f_epoch[m_fence_index];

always_ff @(posedge clk) begin : seq_2
    integer i;  // loop index local to the block (no shared variable between processes)
    if (s_set) begin
        live[s_set_index] <= 1'b1;
        pid_mem[s_set_index] <= s_pid;
        op_mem[s_set_index] <= s_opcode;
        req_mem[s_set_index] <= s_req_id;
        retry_mem[s_set_index] <= s_retry_of;
        va_mem[s_set_index] <= s_va;
        len_mem[s_set_index] <= s_total_len;
        off_mem[s_set_index] <= s_offset;
        hsess_mem[s_set_index] <= s_session;
        epoch_mem[s_set_index] <= s_epoch;
        if (s_set_new) begin
            first_mem[s_set_index] <= s_first;
            sess_mem[s_set_index] <= s_dd_session;
        end
    end
    if (s_orphan) begin
        for (i = 0; i < SLOTS; i = i + 1) begin
            if (s_orphan_all || sess_mem[i] == s_orphan_session) sess_mem[i] <= 16'd0;
        end
    end
    if (s_release) begin
        live[s_release_index] <= 1'b0;
        gen[s_release_index] <= gen[s_release_index] == 16'hffff ? 16'd1 : gen[s_release_index] + 16'd1;
    end
    if (s_fence_set) begin
        f_live[s_fence_set_index] <= 1'b1;
        f_pid[s_fence_set_index] <= s_pid;
        f_req[s_fence_set_index] <= s_req_id;
        f_retry[s_fence_set_index] <= s_retry_of;
        f_va[s_fence_set_index] <= s_va;
        f_len[s_fence_set_index] <= s_total_len;
        f_off[s_fence_set_index] <= s_offset;
        f_sess[s_fence_set_index] <= s_session;
        f_epoch[s_fence_set_index] <= s_epoch;
    end
    if (s_fence_clear) begin
        f_live[s_fence_clear_index] <= 1'b0;
    end
    if (rst) begin
        for (i = 0; i < SLOTS; i = i + 1) begin
            live[i] <= 1'b0;
            gen[i] <= 16'd1;
        end
        for (i = 0; i < FENCES; i = i + 1) begin
            f_live[i] <= 1'b0;
        end
    end
end

endmodule

`resetall
