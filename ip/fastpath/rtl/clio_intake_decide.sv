// clio_intake_decide: the engine's S_DECIDE verdict on a packet it takes.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational. The intake decisions in the reference model's order; the
// first that applies is the verdict, exactly one output strobe:
// - a runt (shorter than the header): dropped (`m_drop`);
// - short or a bad CRC: a NACK, CORRUPT (`m_nack`);
// - a response (the opcode's response bit): dropped;
// - a header that does not parse: answered like a NACK (`m_hdr_bad`),
//   UNSUPPORTED for an unknown opcode, else MALFORMED (`m_status`);
// - a request that needs a session (all but INFO and OPEN_SESSION): a stale
//   epoch fails RESTARTED (with the current epoch, `m_epoch`), a bad session
//   BAD_SESSION (`m_fail`, `m_status`).
// Past these the packet is admitted (`m_admit`: its ack raises the
// session's floor, the engine's business), then:
// - a nonzero status, flags other than FIXED_VA or a payload above the MTU:
//   MALFORMED;
// - INFO: shorter than its answer MALFORMED (no amplification), else
//   answered with the current epoch (`m_info`, `m_epoch`); OPEN_SESSION:
//   `m_open`;
// - a PID of 0 or above the maximum: BAD_PID;
// - ALLOC/FREE/CLOSE_SESSION: the control forwarding's match (`m_cf_match`);
// - a fence of the PID waiting: BUSY; a gate entry refusing: its status;
//   a tracked gate change: its report first (`m_cf_gt`);
// - a READ for the fast path (`s_rd_fast`): its first page (`m_rd_fast`);
// - OFFLOAD_CALL with offloads on: to the slow path (`m_cf_of`);
// - a non-idempotent request: a late duplicate (below the floor as the ack
//   leaves it, `s_late_dup`) dropped, else the dedup lookup (`m_dd_look`);
// - anything else: the dispatch (`m_dispatch`, clio_dispatch_check).
module clio_intake_decide #(
    parameter bit OF_ON = 1'b1               // OFFLOAD_CALL goes to the slow path
) (
    input  wire [15:0] s_len,                // the packet's length
    input  wire        s_short,
    input  wire        s_crc,                // the CRC does not match
    input  wire [7:0]  s_op,
    input  wire        s_malformed,          // the header does not parse
    input  wire        s_unknown,            // ... because of an unknown opcode
    input  wire        s_epoch_ok,
    input  wire        s_sess_ok,
    input  wire [7:0]  s_status,
    input  wire [7:0]  s_flags,
    input  wire [15:0] s_plen,
    input  wire [15:0] s_mtu,
    input  wire [31:0] s_pid,
    input  wire [31:0] s_max_pid,
    input  wire        s_fence_wait,         // a fence of the PID waits
    input  wire        s_gt_refuse,          // a gate entry refuses the request
    input  wire [7:0]  s_gt_status,          // ... with this status
    input  wire        s_gt_track,           // a tracked gate change: report first
    input  wire        s_rd_fast,            // a READ the fast path takes
    input  wire        s_nonidem,            // a non-idempotent request (deduplicated)
    input  wire        s_late_dup,           // its id below the session's floor

    output reg         m_drop,
    output reg         m_nack,
    output reg         m_hdr_bad,
    output reg         m_fail,
    output reg  [7:0]  m_status,
    output reg         m_epoch,
    output reg         m_admit,
    output reg         m_info,
    output reg         m_open,
    output reg         m_cf_match,
    output reg         m_cf_gt,
    output reg         m_cf_of,
    output reg         m_rd_fast,
    output reg         m_dd_look,
    output reg         m_dispatch
);

import clio_pkg::CLIO_HEADER_LEN;
import clio_pkg::INFO_RESP_LEN;
import clio_pkg::OP_RESPONSE_BIT;
import clio_pkg::OP_INFO;
import clio_pkg::OP_OPEN_SESSION;
import clio_pkg::OP_ALLOC;
import clio_pkg::OP_FREE;
import clio_pkg::OP_CLOSE_SESSION;
import clio_pkg::OP_OFFLOAD_CALL;
import clio_pkg::FLAG_FIXED_VA;
import clio_pkg::STATUS_OK;
import clio_pkg::STATUS_CORRUPT;
import clio_pkg::STATUS_UNSUPPORTED;
import clio_pkg::STATUS_MALFORMED;
import clio_pkg::STATUS_RESTARTED;
import clio_pkg::STATUS_BAD_SESSION;
import clio_pkg::STATUS_BAD_PID;
import clio_pkg::STATUS_BUSY;

wire needs_sess = s_op != OP_INFO && s_op != OP_OPEN_SESSION;

always @* begin
    m_drop = 1'b0;
    m_nack = 1'b0;
    m_hdr_bad = 1'b0;
    m_fail = 1'b0;
    m_status = STATUS_OK;
    m_epoch = 1'b0;
    m_admit = 1'b0;
    m_info = 1'b0;
    m_open = 1'b0;
    m_cf_match = 1'b0;
    m_cf_gt = 1'b0;
    m_cf_of = 1'b0;
    m_rd_fast = 1'b0;
    m_dd_look = 1'b0;
    m_dispatch = 1'b0;
    if (s_len < CLIO_HEADER_LEN[15:0]) begin
        m_drop = 1'b1;                                   // runt
    end else if (s_short || s_crc) begin
        m_nack = 1'b1;
        m_status = STATUS_CORRUPT;
    end else if ((s_op & OP_RESPONSE_BIT) != 8'd0) begin
        m_drop = 1'b1;                                   // stray response
    end else if (s_malformed) begin
        m_hdr_bad = 1'b1;                                // an unknown opcode is not damage: no retry
        m_status = s_unknown ? STATUS_UNSUPPORTED : STATUS_MALFORMED;
    end else if (needs_sess && !s_epoch_ok) begin
        m_fail = 1'b1;
        m_status = STATUS_RESTARTED;
        m_epoch = 1'b1;
    end else if (needs_sess && !s_sess_ok) begin
        m_fail = 1'b1;
        m_status = STATUS_BAD_SESSION;                   // nothing else happens
    end else begin
        m_admit = 1'b1;
        if (s_status != STATUS_OK || (s_flags & ~FLAG_FIXED_VA) != 8'd0 || s_plen > s_mtu) begin
            m_fail = 1'b1;
            m_status = STATUS_MALFORMED;
        end else if (s_op == OP_INFO) begin
            if (s_plen < INFO_RESP_LEN[15:0]) begin
                m_fail = 1'b1;
                m_status = STATUS_MALFORMED;
            end else begin
                m_info = 1'b1;
                m_epoch = 1'b1;
            end
        end else if (s_op == OP_OPEN_SESSION) begin
            m_open = 1'b1;
        end else if (s_pid == 32'd0 || s_pid > s_max_pid) begin
            m_fail = 1'b1;
            m_status = STATUS_BAD_PID;
        end else if (s_op == OP_ALLOC || s_op == OP_FREE || s_op == OP_CLOSE_SESSION) begin
            m_cf_match = 1'b1;
        end else if (s_fence_wait) begin
            m_fail = 1'b1;
            m_status = STATUS_BUSY;
        end else if (s_gt_refuse) begin
            m_fail = 1'b1;
            m_status = s_gt_status;
        end else if (s_gt_track) begin
            m_cf_gt = 1'b1;
        end else if (s_rd_fast) begin
            m_rd_fast = 1'b1;
        end else if (OF_ON && s_op == OP_OFFLOAD_CALL) begin
            m_cf_of = 1'b1;
        end else if (s_nonidem) begin
            if (s_late_dup) m_drop = 1'b1;               // a late duplicate
            else m_dd_look = 1'b1;
        end else begin
            m_dispatch = 1'b1;
        end
    end
end

endmodule

`resetall
