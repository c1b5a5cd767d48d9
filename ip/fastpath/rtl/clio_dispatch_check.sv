// clio_dispatch_check: the engine's S_DISPATCH verdict on a request's operands.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational. A request that reached S_DISPATCH (not taken by a fast path
// at intake) either fails here (`m_fail`, answered with `m_status` by
// S_FAIL) or starts exactly one of: the translation of a READ (`m_read`), of
// a WRITE (`m_write`), of an atomic (`m_atomic`), a FENCE's wait behind its
// PID's forwarded requests (`m_fence`), the pointer chase (`m_chase`) or the
// control forwarding of ALLOC/FREE/CLOSE_SESSION (`m_cf`). The checks, in
// the order the model makes them:
// - READ: no payload and no offset, else MALFORMED; at most the per-request
//   response bound (`s_max_resp_kib` KiB, 0 = none), else TOO_LARGE; the
//   range does not wrap, else UNMAPPED (as the translation's first step).
// - WRITE: the range [va + offset, + plen) does not wrap, else UNMAPPED.
//   `m_wr_setup` (every WRITE) loads the translation's registers even when
//   it fails: the engine always did, and the refactor keeps its registers.
// - TAS/LOCK/UNLOCK without payload, CAS with CAS_ARGS_LEN, FAA with
//   FAA_ARGS_LEN bytes; total length ATOMIC_RESP_LEN, no offset, an 8-byte
//   aligned VA; else MALFORMED.
// - FENCE: nothing forwarded pending: OK at once; else a free fence slot
//   waits, none: BUSY.
// - POINTER_CHASE: its operands (`s_cq_ok`), else MALFORMED.
// - ALLOC/FREE/CLOSE_SESSION: operands (`s_fa_ok`), else MALFORMED; a free
//   forwarding slot, else BUSY.
// - Any other opcode: UNSUPPORTED.
module clio_dispatch_check (
    input  wire [7:0]  s_op,
    input  wire [15:0] s_plen,
    input  wire [31:0] s_offset,
    input  wire [31:0] s_total_len,
    input  wire [2:0]  s_va_low,         // the VA's low bits (atomic alignment)
    input  wire        s_rd_wraps,       // va + total length passes 2^64
    input  wire        s_wr_wraps,       // va + offset + plen passes 2^64
    input  wire [15:0] s_max_resp_kib,   // the response bound in KiB, 0 = none
    input  wire        s_fw_pending,     // the PID has forwarded requests pending
    input  wire        s_fw_fence_free,  // a fence slot is free
    input  wire        s_fw_free,        // a forwarding slot is free
    input  wire        s_cq_ok,          // the chase's operands are well formed
    input  wire        s_fa_ok,          // ALLOC/FREE/CLOSE_SESSION operands are well formed

    output reg         m_fail,
    output reg  [7:0]  m_status,
    output reg         m_read,
    output reg         m_write,
    output reg         m_wr_setup,
    output reg         m_atomic,
    output reg         m_fence,
    output reg         m_chase,
    output reg         m_cf
);

import clio_pkg::OP_READ;
import clio_pkg::OP_WRITE;
import clio_pkg::OP_TAS;
import clio_pkg::OP_CAS;
import clio_pkg::OP_FAA;
import clio_pkg::OP_LOCK;
import clio_pkg::OP_UNLOCK;
import clio_pkg::OP_FENCE;
import clio_pkg::OP_POINTER_CHASE;
import clio_pkg::OP_ALLOC;
import clio_pkg::OP_FREE;
import clio_pkg::OP_CLOSE_SESSION;
import clio_pkg::STATUS_OK;
import clio_pkg::STATUS_MALFORMED;
import clio_pkg::STATUS_TOO_LARGE;
import clio_pkg::STATUS_UNMAPPED;
import clio_pkg::STATUS_BUSY;
import clio_pkg::STATUS_UNSUPPORTED;
import clio_pkg::CAS_ARGS_LEN;
import clio_pkg::FAA_ARGS_LEN;
import clio_pkg::ATOMIC_RESP_LEN;

wire rd_too_large = s_max_resp_kib != 16'd0 && s_total_len > {6'd0, s_max_resp_kib, 10'd0};
wire at_bad = (s_op == OP_CAS && s_plen != CAS_ARGS_LEN[15:0]) || (s_op == OP_FAA && s_plen != FAA_ARGS_LEN[15:0])
    || ((s_op == OP_TAS || s_op == OP_LOCK || s_op == OP_UNLOCK) && s_plen != 16'd0)
    || s_total_len != ATOMIC_RESP_LEN[31:0] || s_offset != 32'd0 || s_va_low != 3'd0;

always @* begin
    m_fail = 1'b0;
    m_status = STATUS_OK;
    m_read = 1'b0;
    m_write = 1'b0;
    m_wr_setup = 1'b0;
    m_atomic = 1'b0;
    m_fence = 1'b0;
    m_chase = 1'b0;
    m_cf = 1'b0;
    case (s_op)
        OP_READ: begin
            if (s_plen != 16'd0 || s_offset != 32'd0) begin m_fail = 1'b1; m_status = STATUS_MALFORMED; end
            else if (rd_too_large) begin m_fail = 1'b1; m_status = STATUS_TOO_LARGE; end   // header-only, nothing read
            else if (s_rd_wraps) begin m_fail = 1'b1; m_status = STATUS_UNMAPPED; end
            else m_read = 1'b1;
        end
        OP_WRITE: begin
            m_wr_setup = 1'b1;
            if (s_wr_wraps) begin m_fail = 1'b1; m_status = STATUS_UNMAPPED; end
            else m_write = 1'b1;
        end
        OP_TAS, OP_CAS, OP_FAA, OP_LOCK, OP_UNLOCK: begin
            if (at_bad) begin m_fail = 1'b1; m_status = STATUS_MALFORMED; end
            else m_atomic = 1'b1;
        end
        OP_FENCE: begin
            if (!s_fw_pending) begin m_fail = 1'b1; m_status = STATUS_OK; end                // nothing to wait for
            else if (s_fw_fence_free) m_fence = 1'b1;
            else begin m_fail = 1'b1; m_status = STATUS_BUSY; end
        end
        OP_POINTER_CHASE: begin
            if (!s_cq_ok) begin m_fail = 1'b1; m_status = STATUS_MALFORMED; end
            else m_chase = 1'b1;
        end
        OP_ALLOC, OP_FREE, OP_CLOSE_SESSION: begin
            if (!s_fa_ok) begin m_fail = 1'b1; m_status = STATUS_MALFORMED; end
            else if (!s_fw_free) begin m_fail = 1'b1; m_status = STATUS_BUSY; end
            else m_cf = 1'b1;
        end
        default: begin m_fail = 1'b1; m_status = STATUS_UNSUPPORTED; end
    endcase
end

endmodule

`resetall
