// clio_engine: the fast path's sequencer for every request the lanes do not finish.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The engine runs, one at a time, every request neither lane finishes: a
// TLB miss's walk and fault, a write the write lane does not take, an atomic
// the atomics stage does not take, multi-page and multi-chunk reads and
// writes, control and forwarded requests, the TX poll, READ streams and the
// deferred fault effects. Each state is one step; most hand the step to a
// named stage and follow its verdict:
//   S_DECIDE    the intake decision (clio_intake_decide, `id_*`)
//   S_DISPATCH  the request checks (clio_dispatch_check, `dc_*`)
//   S_XL        the translation (clio_xl_ctl `xc_*`, its walk clio_xl_walk `xw_*`)
//   S_RD, S_WR  the READ's and WRITE's data phases (clio_rd_data `rdd_*`, clio_wr_data `wd_*`)
//   S_AT        the atomics left to the engine (clio_at_engine, `ae_*`)
//   S_CF        control forwarding (clio_ctrl_fwd, `cf_*`)
//   S_CMD       TX-ring commands (clio_tx_cmd, `tc_*`)
//   S_POLL      the TX poll (clio_tx_poll, `tp_*`)
//   S_RP        replies and released fences (clio_tx_reply, `rp_*`)
//   S_REP       error reports (clio_err_report, `er_*`)
//   S_CH        the pointer chase (clio_chase_read, `chr_*`)
// What stays here is the sequence: which state follows which; the calls
// with their return states (S_XL `xl_ret`, S_MEM_* `mem_ret`, S_RING*
// `ring_ret`, S_SEND* `send_ret`, S_REP `rep_ret`, S_FLUSH* `flush_ret`); the
// answer's fields (`r_*`, `rs_*`), the page being worked on (`pg_*`, `xl_*`)
// and the fault queue (`fq_*`).
//
// The ports keep the top's signal names: clio_fastpath_top wires each to the
// unit or stage its prefix names (above; `dd_` the dedup unit, `tlb_` the
// TLB, `fw_` the forwarding table, `ptf_` the bucket reader, `ring_` the ring
// engine, `sq_`/`pm_` the stream table, `h_` the packet's header registers)
// and reads the state as one flag per state (`es_*`). `eng_hold` (an answer
// waiting for the builder or an older answer, the atomics stage's hold, the
// region gate's verdict; the top's) stops the engine for the cycle as it
// stops the stages. The engine's states keep their numbers (the
// co-simulation's stall breakdown prints them).
module clio_engine #(
    parameter DATA_WIDTH = 512,
    parameter BUCKET_BITS = 16,
    parameter FAULT_QUEUE = 4,
    parameter OW = 6,         // log2 of the beat's bytes
    parameter SW = 4,         // log2 of a bucket's slots
    parameter SIW = 10,       // log2 of the session table's entries
    parameter DCW = 7,        // the dedup unit's count width
    parameter FIW = 6,        // log2 of the forwarding slots
    parameter FFW = 4,        // log2 of the fence slots
    parameter KEY_W = 88,     // the dedup key
    parameter REC_W = 280     // the dedup record
) (
    input  wire clk,
    input  wire rst,

    // What the engine reads: the units' and stages' outputs, the packet's header fields and
    // the top's decisions, under the top's names.
    input  wire ack_above_floor,
    input  wire ae_fail, ae_let_go, ae_locks, ae_read, ae_record, ae_result, ae_send, ae_wr_load,
    input  wire [64:0] at_end,
    input  wire at_fast,
    input  wire [63:0] at_pa,
    input  wire [7:0] at_shift0,
    input  wire [DATA_WIDTH-1:0] at_wdata,
    input  wire [DATA_WIDTH/8-1:0] at_wstrb,
    input  wire cf_ans_load, cf_call, cf_done, cf_fw_set, cf_fw_set_new, cf_of_call, cf_offset_load, cf_plen_load,
    input  wire cf_r_big, cf_reserve, cf_ring_load,
    input  wire [1:0] cf_call_kind, cf_ring_cmd,
    input  wire [FIW-1:0] cf_fw_set_index,
    input  wire [2:0] cf_next,
    input  wire [31:0] cf_r_offset,
    input  wire [15:0] cf_r_plen,
    input  wire [7:0] cf_r_status, cf_status,
    input  wire [DATA_WIDTH-1:0] cf_ring_desc,
    input  wire [63:0] ch_va,
    input  wire [63:0] chr_cur, chr_pa,
    input  wire chr_d0, chr_done, chr_found, chr_page, chr_read, chr_step, chr_xl,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [31:0] chr_k,          // at most a beat's bytes
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [15:0] chr_vlen,
    input  wire [64:0] chr_xl_end,
    input  wire [7:0] cls_shift,
    input  wire [REC_W-1:0] cur_rec,
    input  wire [31:0] d_filled, d_n, d_sent,
    input  wire dc_atomic, dc_cf, dc_chase, dc_fail, dc_fence, dc_read, dc_wr_setup, dc_write,
    input  wire [7:0] dc_status,
    input  wire dd_below_floor, dd_full, dd_hit, dd_out_valid,
    input  wire [DCW-1:0] dd_count,
    input  wire [REC_W-1:0] dd_rec,
    input  wire eng_done, eng_hold, eng_in_last, eng_ready,
    input  wire [DATA_WIDTH-1:0] eng_rdata,
    input  wire [31:0] epoch_reg,
    input  wire [DATA_WIDTH-1:0] er_desc,
    input  wire er_desc_load, er_done, er_flush, er_push,
    input  wire [31:0] fault_ppn,
    input  wire [127:0] fault_pte,
    input  wire fl_go,
    input  wire [15:0] fw_dd_session, fw_fence_session, fw_session,
    input  wire [31:0] fw_fence_epoch, fw_fence_offset, fw_fence_req_id, fw_fence_retry_of, fw_fence_total_len,
    input  wire [31:0] fw_first, fw_offset, fw_pid, fw_req_id, fw_retry_of, fw_total_len,
    input  wire [FFW-1:0] fw_fence_free_index, fw_fence_index,
    input  wire [63:0] fw_fence_va,
    input  wire fw_free,
    input  wire [7:0] fw_opcode,
    input  wire [31:0] h_ack, h_epoch, h_offset, h_total_len,
    input  wire [15:0] h_dquota, h_locks,
    input  wire h_from_lane, h_request,
    input  wire [7:0] h_op,
    input  wire [SIW-1:0] h_sidx,
    input  wire [63:0] h_va,
    input  wire [BUCKET_BITS-1:0] hash_index,
    input  wire id_admit, id_cf_gt, id_cf_match, id_cf_of, id_dd_look, id_dispatch, id_drop, id_epoch, id_fail,
    input  wire id_hdr_bad, id_info, id_nack, id_open, id_rd_fast,
    input  wire [7:0] id_status,
    input  wire idle_poll,
    input  wire is_nonidem,
    input  wire lane_drain, lane_empty, lane_handoff,
    input  wire lo_valid,
    input  wire [3:0] lq_count,
    input  wire needs_sess,
    input  wire [31:0] of_ans_epoch, of_ans_offset, of_ans_pid, of_ans_plen, of_ans_req_id, of_ans_retry_of,
    input  wire [31:0] of_ans_total_len,
    input  wire [15:0] of_ans_session,
    input  wire [63:0] of_ans_va,
    input  wire op_ok,
    input  wire [KEY_W-1:0] own_key,
    input  wire [7:0] p_opcode,
    input  wire p_tvalid,
    input  wire parser_ready,
    input  wire [63:0] pg_mask,
    input  wire pm_hold, pm_on, pm_want,
    input  wire [31:0] pm_total,
    input  wire [63:0] pm_va,
    input  wire poll,
    input  wire [7:0] ptf_flags, ptf_perms,
    input  wire ptf_found,
    input  wire [31:0] ptf_ppn,
    input  wire [SW-1:0] ptf_slot,
    input  wire rb_ready,
    input  wire [63:0] rd_cur, rd_pa, rd_va,
    input  wire [64:0] rd_end_full,
    input  wire [31:0] rd_seg, rd_total,
    input  wire [7:0] rd_shift0,
    input  wire rdd_cmd, rdd_cmd_taken, rdd_empty, rdd_finish, rdd_flush, rdd_page, rdd_pm_end, rdd_solo, rdd_start,
    input  wire ring_done, ring_idle,
    input  wire [31:0] ring_free,
    input  wire [DATA_WIDTH-1:0] ring_tx_desc,
    input  wire rp_done, rp_fence, rp_load, rp_load_rec, rp_own_clear, rp_rec, rp_reject, rp_send, rp_sess_open,
    input  wire rp_sess_set,
    input  wire [31:0] rp_r_epoch, rp_sess_pid,
    input  wire [7:0] rp_r_flags, rp_r_status,
    input  wire [255:0] rp_r_payload,
    input  wire [15:0] rp_r_plen, rp_sess, rp_sess_dquota, rp_sess_lquota,
    input  wire [63:0] rp_r_va, rp_sess_key,
    input  wire [63:0] slot_addr,
    input  wire [31:0] sq_n, sq_q_epoch, sq_q_pid, sq_q_req_id, sq_q_retry_of,
    input  wire [63:0] sq_q_cur,
    input  wire [15:0] sq_q_session,
    input  wire streams_open,
    input  wire [7:0] sync_status,
    input  wire tc_call, tc_done, tc_epoch, tc_gt_set, tc_inv_exact, tc_inv_load, tc_inv_valid, tc_push, tc_va_load,
    input  wire [31:0] tc_inv_pages, tc_inv_pid,
    input  wire [4:0] tc_inv_shift,
    input  wire [63:0] tc_inv_vpn, tc_mem_addr, tc_va,
    input  wire [DATA_WIDTH-1:0] tc_mem_wdata,
    input  wire [DATA_WIDTH/8-1:0] tc_mem_wstrb,
    input  wire [2:0] tc_next,
    input  wire [7:0] tlb_perms,
    input  wire [31:0] tlb_ppn,
    input  wire to_lane,
    input  wire tp_cmd, tp_done, tp_pop, tp_popped, tp_report,
    input  wire wd_answer, wd_cmd, wd_cmd_taken, wd_flush, wd_hand_off, wd_last_take, wd_page, wd_start,
    input  wire [REC_W-1:0] wl_rec,
    input  wire [63:0] wr_cur, wr_pa, wr_va0,
    input  wire [64:0] wr_end_full,
    input  wire wr_fast,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [31:0] wr_seg,         // at most an MTU (16 bits)
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [7:0] wr_shift0,
    input  wire [31:0] x_pid,
    input  wire xc_at_read, xc_clear, xc_fail, xc_flush, xc_hand_off, xc_last, xc_let_go, xc_look, xc_next, xc_ok,
    input  wire xc_probe, xc_report, xc_ret, xc_tlb_load,
    input  wire [7:0] xc_status,
    input  wire xw_bucket, xw_enq, xw_enq_unit, xw_fault_ppn, xw_insert, xw_pte,

    // What the engine drives: pulses and fields to the units and stages, its packet and
    // answer registers, under the top's names.
    output reg [1:0] at_at = 0,
    output reg [2:0] cf_entry = 0,
    output reg [OW:0] d_k = 0,
    output reg [OW-1:0] d_lane = 0,
    output reg dd_clear = 1'b0,
    output reg [15:0] dd_close_session = 0,
    output reg dd_close_valid = 1'b0,
    output reg [KEY_W-1:0] dd_look_key = 0,
    output reg dd_look_valid = 1'b0,
    output reg [KEY_W-1:0] dd_upd_key = 0,
    output reg [1:0] dd_upd_mode = 0,
    output reg [REC_W-1:0] dd_upd_rec = 0,
    output reg dd_upd_valid = 1'b0,
    output reg [DATA_WIDTH-1:0] desc_reg = 0,
    output reg ev_poll_q /*verilator public_flat_rd*/ = 1'b0,
    output reg ev_pump_q /*verilator public_flat_rd*/ = 1'b0,
    output reg ev_take_q /*verilator public_flat_rd*/ = 1'b0,
    output reg fl_bg = 1'b0,
    output reg [$clog2(FAULT_QUEUE + 1)-1:0] fq_count = 0,
    output reg fw_fence_clear = 1'b0,
    output reg [FFW-1:0] fw_fence_clear_index = 0,
    output reg fw_fence_set = 1'b0,
    output reg [FFW-1:0] fw_fence_set_index = 0,
    output reg fw_orphan = 1'b0,
    output reg fw_orphan_all = 1'b0,
    output reg [15:0] fw_orphan_session = 0,
    output reg fw_release = 1'b0,
    output reg [FIW-1:0] fw_release_index = 0,
    output reg fw_set = 1'b0,
    output reg [FIW-1:0] fw_set_index = 0,
    output reg fw_set_new = 1'b0,
    output reg gt_clear = 1'b0,
    output reg gt_poll_reg = 1'b0,
    output reg gt_set = 1'b0,
    output reg [63:0] mem_addr = 0,
    output reg [DATA_WIDTH-1:0] mem_rdata = 0,
    output reg [DATA_WIDTH-1:0] mem_wdata = 0,
    output reg [DATA_WIDTH/8-1:0] mem_wstrb = 0,
    output reg [63:0] mv_addr = 0,
    output reg mv_go = 1'b0,
    output reg [15:0] mv_len = 0,
    output reg mv_mark = 1'b0,
    output reg of_call = 1'b0,
    output reg [BUCKET_BITS-1:0] pg_bucket = 0,
    output reg [64:0] pg_end = 0,
    output reg [7:0] pg_flags = 0,
    output reg pg_found = 1'b0,
    output reg pg_ok = 1'b0,
    output reg [7:0] pg_perms = 0,
    output reg [31:0] pg_ppn = 0,
    output reg [4:0] pg_shift = 0,
    output reg [SW-1:0] pg_slot = 0,
    output reg [63:0] pg_start = 0,
    output reg [63:0] pg_vpn = 0,
    output reg pkt_done_reg = 1'b0,
    output reg pkt_have_reg /*verilator public_flat_rd*/ = 1'b0,
    output reg pm_turn = 1'b0,
    output reg poll_done_reg = 1'b0,
    output reg poll_req = 1'b0,
    output reg push_valid = 1'b0,
    output reg [31:0] r_epoch = 0,
    output reg [7:0] r_flags = 0,
    output reg [31:0] r_offset = 0,
    output reg [7:0] r_op = 0,
    output reg [255:0] r_payload = 0,
    output reg [15:0] r_plen = 0,
    output reg [7:0] r_status = 0,
    output reg [31:0] r_total_len = 0,
    output reg [63:0] r_va = 0,
    output reg rb_start = 1'b0,
    output reg [REC_W-1:0] rec_reg = 0,
    output reg [7:0] rep_opcode = 0,
    output reg [31:0] rep_pid = 0,
    output reg [7:0] rep_status = 0,
    output reg [63:0] rep_va = 0,
    output reg [1:0] ring_cmd = 0,
    output reg [DATA_WIDTH-1:0] ring_desc = 0,
    output reg ring_valid = 1'b0,
    output reg [1:0] rp_entry = 0,
    output reg rs_own = 1'b0,
    output reg [31:0] rs_pid = 0,
    output reg [31:0] rs_req_id = 0,
    output reg [31:0] rs_retry_of = 0,
    output reg [15:0] rs_session = 0,
    output reg [31:0] rx_credit = 0,
    output reg [15:0] st_wr_dquota = 0,
    output reg [63:0] st_wr_key = 0,
    output reg [15:0] st_wr_lquota = 0,
    output reg [2:0] st_wr_op = 0,
    output reg st_wr_open = 1'b0,
    output reg [31:0] st_wr_pid = 0,
    output reg [15:0] st_wr_session = 0,
    output reg [31:0] st_wr_word = 0,
    output reg sync_valid = 1'b0,
    output reg tlb_ins_valid = 1'b0,
    output reg tlb_inv_exact = 1'b0,
    output reg [31:0] tlb_inv_pages = 0,
    output reg [31:0] tlb_inv_pid = 0,
    output reg [4:0] tlb_inv_shift = 0,
    output reg tlb_inv_valid = 1'b0,
    output reg [63:0] tlb_inv_vpn = 0,
    output reg tlb_look_valid = 1'b0,
    output reg [1:0] xl_at = 0,
    output reg [63:0] xl_cur = 0,
    output reg [64:0] xl_end = 0,
    output reg [7:0] xl_need = 0,
    output reg [31:0] xl_pages = 0,
    output reg xl_pass2 = 1'b0,

    // The state the engine is in, for the units it drives and the top's holds.
    output wire es_idle, es_decide, es_dispatch, es_fail, es_send, es_info, es_replay, es_xl, es_rd, es_pm_end,
    output wire es_wr, es_at, es_mem_rd, es_mem_rdw, es_mem_wr, es_mem_wrb, es_ring, es_ring_w, es_rep, es_poll,
    output wire es_cmd, es_rp, es_ch, es_cf, es_flush, es_flush_pop,
    output wire mem_for_at,   // the engine's memory access is an atomic's word (returns to S_AT)
    output wire xl_for_wr,    // the translation's caller: a WRITE (S_WR), an atomic (S_AT)
    output wire xl_for_at
);

import clio_pkg::*;

localparam BYTES = DATA_WIDTH / 8;

// The engine's states, numbered as before (traces and the README name them by
// these values); the return-address registers hold one of them.
typedef enum logic [6:0] {
    S_IDLE = 7'd0, S_DECIDE = 7'd1, S_FINISH = 7'd2, S_FAIL = 7'd3, S_SEND = 7'd4, S_SEND_W = 7'd5,
    S_INFO = 7'd6, S_DD_LOOK1 = 7'd7, S_DD_W1 = 7'd8, S_OPEN = 7'd9,
    S_REPLAY = 7'd12, S_DISPATCH = 7'd13,
    S_XL = 7'd14,
    S_RD = 7'd31,
    S_WR = 7'd36,
    S_AT = 7'd40,
    S_MEM_RD = 7'd46, S_MEM_RDW = 7'd47, S_MEM_WR = 7'd48, S_MEM_WRB = 7'd49,
    S_RING = 7'd50, S_RING_W = 7'd51, S_REP = 7'd52,
    S_POLL = 7'd54,
    S_CMD = 7'd58,
    S_FLUSH = 7'd67, S_FLUSH_NOTE = 7'd68, S_FLUSH_POP = 7'd69,
    S_RP = 7'd74,
    S_CH = 7'd80,
    S_PM_END = 7'd85,
    S_CF = 7'd89
} eng_state_t;

eng_state_t state_reg /*verilator public_flat_rd*/ = S_IDLE;
eng_state_t send_ret = S_IDLE, mem_ret = S_IDLE, ring_ret = S_IDLE, rep_ret = S_IDLE, xl_ret = S_IDLE;
eng_state_t flush_ret = S_IDLE;

// The state as flags (the top's units and holds look at these).
assign es_at = state_reg == S_AT;
assign es_cf = state_reg == S_CF;
assign es_ch = state_reg == S_CH;
assign es_cmd = state_reg == S_CMD;
assign es_decide = state_reg == S_DECIDE;
assign es_dispatch = state_reg == S_DISPATCH;
assign es_fail = state_reg == S_FAIL;
assign es_flush = state_reg == S_FLUSH;
assign es_flush_pop = state_reg == S_FLUSH_POP;
assign es_idle = state_reg == S_IDLE;
assign es_info = state_reg == S_INFO;
assign es_mem_rd = state_reg == S_MEM_RD;
assign es_mem_rdw = state_reg == S_MEM_RDW;
assign es_mem_wr = state_reg == S_MEM_WR;
assign es_mem_wrb = state_reg == S_MEM_WRB;
assign es_pm_end = state_reg == S_PM_END;
assign es_poll = state_reg == S_POLL;
assign es_rd = state_reg == S_RD;
assign es_rep = state_reg == S_REP;
assign es_replay = state_reg == S_REPLAY;
assign es_ring = state_reg == S_RING;
assign es_ring_w = state_reg == S_RING_W;
assign es_rp = state_reg == S_RP;
assign es_send = state_reg == S_SEND;
assign es_wr = state_reg == S_WR;
assign es_xl = state_reg == S_XL;
assign mem_for_at = mem_ret == S_AT;
assign xl_for_wr = xl_ret == S_WR;
assign xl_for_at = xl_ret == S_AT;

// Where a call enters the stages the engine runs in one state: the translation
// (clio_xl_ctl, in S_XL: the range's wrap check, the next page, the TLB's answer
// to the caller's lookup), the atomics (clio_at_engine, in S_AT: the translated
// word, the word read, the record), the control forwarding (clio_ctrl_fwd, in
// S_CF) and the reply stage (clio_tx_reply, in S_RP).
localparam [1:0] XL_AT_BEGIN = 2'd0, XL_AT_PAGE = 2'd1, XL_AT_TLBW = 2'd2;
localparam [1:0] AT_AT_READ = 2'd0, AT_AT_SYNCW = 2'd1, AT_AT_REC1 = 2'd2;
localparam logic [2:0] CF_FW_MATCH = 3'd0, CF_FW_PUSH = 3'd1, CF_GT = 3'd2, CF_OF = 3'd3, CF_OF_ANS = 3'd4;
localparam logic [1:0] RP_REJECT = 2'd0, RP_REPLY = 2'd1, RP_SESSION = 2'd2;
// The session table's write commands (`st_wr_op`).
localparam [2:0] ST_NONE = 3'd0, ST_FLOOR = 3'd1, ST_LOCKS = 3'd2, ST_ENTRY = 3'd3, ST_EPOCH = 3'd4;

// Deferred fault side effects: PTE slot address and image, PA_CONSUMED fields.
reg [63:0]  fq_addr [0:FAULT_QUEUE-1];
reg [127:0] fq_pte [0:FAULT_QUEUE-1];
reg [31:0]  fq_pid [0:FAULT_QUEUE-1];
reg [47:0]  fq_vpn [0:FAULT_QUEUE-1];
reg [31:0]  fq_ppn [0:FAULT_QUEUE-1];
reg [4:0]   fq_shift [0:FAULT_QUEUE-1];
reg [BUCKET_BITS-1:0] fq_bucket [0:FAULT_QUEUE-1];
reg [SW-1:0] fq_slot [0:FAULT_QUEUE-1];

// The failing request's status; a TX command's VA.
reg [7:0]  fail_status = 0;
reg [63:0] cmd_va = 0;
// The record key of the forwarded request a poll answers: its opcode, first id and session.
reg [7:0]  rs_op = 0;
reg [31:0] rs_first = 0;
reg [15:0] rs_dd_session = 0;

// The engine's table writes (called from its clocked block, which clears
// `st_wr_op` every cycle): the table shows them from the next cycle on.
task automatic st_set_floor(input [15:0] s, input [31:0] v);
    begin
        st_wr_op <= ST_FLOOR;
        st_wr_session <= s;
        st_wr_word <= v;
    end
endtask
task automatic st_set_locks(input [15:0] s, input [15:0] v);
    begin
        st_wr_op <= ST_LOCKS;
        st_wr_session <= s;
        st_wr_word <= {16'd0, v};
    end
endtask
// Install (open) or clear an entry.
task automatic st_set_entry(input [15:0] s, input open, input [31:0] pid, input [63:0] k,
        input [15:0] dquota, input [15:0] lquota);
    begin
        st_wr_op <= ST_ENTRY;
        st_wr_session <= s;
        st_wr_open <= open;
        st_wr_pid <= pid;
        st_wr_key <= k;
        st_wr_dquota <= dquota;
        st_wr_lquota <= lquota;
    end
endtask
// A new boot: every entry invalid.
task automatic st_set_epoch(input [31:0] e);
    begin
        st_wr_op <= ST_EPOCH;
        st_wr_word <= e;
    end
endtask

// ---------------------------------------------------------------------------
// The engine.
// ---------------------------------------------------------------------------
integer fi;

/* verilator lint_off WIDTH */
// A taken fault goes on at once: its PTE write-back and PA_CONSUMED notice
// wait in the fault queue (written after the response), its TLB entry is
// inserted, and one RX-ring credit is spent on the notice.
task automatic fault_enqueue(input [31:0] ppn);
    begin
        fq_addr[fq_count] <= slot_addr;
        fq_pte[fq_count] <= fault_pte;
        fq_pid[fq_count] <= x_pid;
        fq_vpn[fq_count] <= pg_vpn[47:0];
        fq_ppn[fq_count] <= ppn;
        fq_shift[fq_count] <= pg_shift;
        fq_bucket[fq_count] <= pg_bucket;
        fq_slot[fq_count] <= pg_slot;
        fq_count <= fq_count + 1'b1;
        rx_credit <= rx_credit - 1'b1;
        tlb_ins_valid <= 1'b1;
    end
endtask

// The engine is done with its packet: S_FINISH's work now (the packet let
// go, the next one's last beat enters a cycle sooner) unless faults' side
// effects are deferred (S_FINISH writes them first).
task automatic let_go;
    begin
        if (fq_count != 0) begin
            state_reg <= S_FINISH;
        end else begin
            pkt_have_reg <= 1'b0;
            pkt_done_reg <= 1'b0;
            state_reg <= S_IDLE;
        end
    end
endtask

// A one-page WRITE the write lane takes this cycle (`wl_cmd_valid &&
// wl_ready`, from the translation's ST_TLBW or ST_OK, or S_WR in ST_BEGIN): it cannot fail any
// more, so its record goes in now (a retry taken in meanwhile is answered
// from it, as in the model), and the packet is let go. The lane moves the
// payload, waits for the B and answers while the engine goes on.
task automatic wl_hand_off;
    begin
        dd_upd_key <= own_key;
        dd_upd_rec <= wl_rec;
        dd_upd_mode <= 2'd0;                             // insert
        dd_upd_valid <= 1'b1;
        let_go();
    end
endtask

// An atomic's word: its page is the first pass's (one 8-byte aligned word
// never spans pages, so the model's single lookup is this one); the sync
// unit takes the word in the cycle the read completes (`at_rd_done`).
task automatic at_read;
    begin
        mem_addr <= at_pa;
        d_lane <= h_va[OW-1:0];
        mem_ret <= S_AT;
        at_at <= AT_AT_SYNCW;
        state_reg <= S_MEM_RD;
    end
endtask

// A call of the atomics on the engine (clio_at_engine), entering at `at` (AT_AT_*).
task automatic at_call(input [1:0] at);
    begin
        at_at <= at;
        state_reg <= S_AT;
    end
endtask

// A call of the translation (clio_xl_ctl), entering at `at` (XL_AT_*).
task automatic xl_call(input [1:0] at);
    begin
        xl_at <= at;
        state_reg <= S_XL;
    end
endtask

// The first page's TLB lookup, issued with S_DISPATCH's and ST_PAGE's
// work for a READ or WRITE whose first page is valid VA (`shift`: its
// class's page shift), from the intake decision (S_DECIDE for a READ, the
// dedup verdict for a WRITE): the lookup follows every check the model
// makes before it, so the TLB's LRU order stays the model's.
task automatic xl_first(input [63:0] va, input [64:0] fin, input [7:0] need, input eng_state_t ret,
        input [7:0] shift);
    begin
        xl_pass2 <= 1'b0;
        pg_ok <= 1'b0;
        xl_cur <= va;
        xl_end <= fin;
        xl_need <= need;
        xl_ret <= ret;
        pg_shift <= shift[4:0];
        pg_vpn <= va >> shift;
        xl_pages <= 32'd1;
        tlb_look_valid <= 1'b1;
        xl_call(XL_AT_TLBW);
    end
endtask

always @(posedge clk) begin
    tlb_look_valid <= 1'b0;
    tlb_ins_valid <= 1'b0;
    tlb_inv_valid <= 1'b0;
    sync_valid <= 1'b0;
    dd_look_valid <= 1'b0;
    dd_upd_valid <= 1'b0;
    dd_close_valid <= 1'b0;
    dd_clear <= 1'b0;
    fw_orphan <= 1'b0;
    fw_orphan_all <= 1'b0;
    ring_valid <= 1'b0;
    rb_start <= 1'b0;
    push_valid <= 1'b0;
    fw_set <= 1'b0;
    fw_release <= 1'b0;
    fw_fence_set <= 1'b0;
    fw_fence_clear <= 1'b0;
    poll_done_reg <= 1'b0;
    gt_set <= 1'b0;
    gt_clear <= 1'b0;
    of_call <= 1'b0;
    st_wr_op <= ST_NONE;
    ev_take_q <= p_tvalid && parser_ready && to_lane;
    ev_pump_q <= 1'b0;
    ev_poll_q <= 1'b0;
    if (poll) poll_req <= 1'b1;

    if (!eng_hold) case (state_reg)
        S_IDLE: begin
            rs_own <= 1'b0;
            if (idle_poll) begin
                poll_req <= 1'b0;
                rep_opcode <= 8'd0;
                ev_poll_q <= 1'b1;
                gt_poll_reg <= 1'b1;
                state_reg <= S_POLL;
            end else if (pm_want) begin
                // Pump the next packet of stream 0 (the table keeps it):
                // translate its range (READ), then the data phase; answers
                // carry its ids.
                pm_turn <= 1'b0;
                rs_own <= 1'b1;
                rs_pid <= sq_q_pid;
                rs_req_id <= sq_q_req_id;
                rs_retry_of <= sq_q_retry_of;
                rs_session <= sq_q_session;
                r_op <= OP_READ_RESP;
                r_flags <= 8'd0;
                r_epoch <= sq_q_epoch;
                rep_opcode <= 8'd0;                          // the model's pump has no request opcode
                xl_pass2 <= 1'b0;
                pg_ok <= 1'b0;
                xl_cur <= sq_q_cur;
                xl_end <= {1'b0, sq_q_cur} + sq_n;
                xl_need <= PERM_READ;
                xl_ret <= S_RD;
                ev_pump_q <= 1'b1;
                xl_call(XL_AT_BEGIN);
            end else if (pkt_have_reg && !pm_hold && (h_from_lane ? (lq_count == 0 && !lo_valid) || lane_drain
                                                                  : lane_empty)) begin
                rep_opcode <= h_op;
                if (!h_from_lane) ev_take_q <= 1'b1;        // a lane hand-off was taken at intake
                pm_turn <= 1'b1;
                state_reg <= S_DECIDE;
            end else if (eng_in_last && !streams_open && lane_empty) begin
                // The packet is taken in the cycle its last beat enters
                // (the header registers load at this edge, S_DECIDE reads
                // them): what the branch above does a cycle later, with no
                // stream to pump and the lane empty (it stays so: this
                // beat is the engine's).
                rep_opcode <= p_opcode;
                ev_take_q <= 1'b1;
                pm_turn <= 1'b1;
                state_reg <= S_DECIDE;
            end
        end

        // ----- intake decisions, in the reference model's order -----
        S_DECIDE: begin                                  // the verdict: clio_intake_decide
            r_op <= h_request ? (h_op | OP_RESPONSE_BIT) : OP_NACK;
            r_flags <= 8'd0;
            r_va <= h_va;
            r_total_len <= h_total_len;
            r_offset <= h_offset;
            r_plen <= 16'd0;
            r_epoch <= h_epoch;
            if (id_epoch) r_epoch <= epoch_reg;              // RESTARTED, INFO: the current epoch
            if (id_drop) state_reg <= S_FINISH;              // runt, stray response, late duplicate
            if (id_nack) begin
                // NACK: the ids, the packet's offset, session and epoch are echoed.
                r_op <= OP_NACK;
                r_status <= STATUS_CORRUPT;
                r_va <= 64'd0;
                r_total_len <= 32'd0;
                send_ret <= S_FINISH;
                state_reg <= S_SEND;
            end
            if (id_hdr_bad) begin
                // The header does not parse: shaped like a NACK.
                r_status <= id_status;
                r_va <= 64'd0;
                r_total_len <= 32'd0;
                send_ret <= S_FINISH;
                state_reg <= S_SEND;
            end
            if (id_fail) begin
                fail_status <= id_status;
                state_reg <= S_FAIL;
            end
            if (id_admit && needs_sess && h_ack != 32'd0) begin
                // Acknowledged answers free their records (`dec_ack`,
                // this cycle); the floor rises.
                if (ack_above_floor) st_set_floor(h_sidx, h_ack);
            end
            if (id_info) state_reg <= S_INFO;
            if (id_open) state_reg <= S_OPEN;
            if (id_cf_match) begin
                cf_entry <= CF_FW_MATCH;
                state_reg <= S_CF;
            end
            if (id_cf_gt) begin
                cf_entry <= CF_GT;                           // report the blocks first
                state_reg <= S_CF;
            end
            if (id_rd_fast) xl_first(h_va, rd_end_full, PERM_READ, S_RD, rd_shift0);
            if (id_cf_of) begin
                cf_entry <= CF_OF;                           // to the slow path; its host keeps exactly-once
                state_reg <= S_CF;
            end
            if (id_dd_look) begin
                // S_DD_LOOK1's work, a cycle sooner: the floor as this
                // packet's ack leaves it; the lookup sees the ack's frees.
                dd_look_key <= own_key;
                dd_look_valid <= 1'b1;
                state_reg <= S_DD_W1;
            end
            if (id_dispatch) state_reg <= S_DISPATCH;
        end
        S_OPEN: begin
            // Not re-targeted, not recorded: a retry opens another session.
            if (!op_ok) begin
                fail_status <= STATUS_MALFORMED;
                state_reg <= S_FAIL;
            end else if (!fw_free) begin
                fail_status <= STATUS_BUSY;
                state_reg <= S_FAIL;
            end else begin
                cf_entry <= CF_FW_PUSH;
                state_reg <= S_CF;
            end
        end
        // ----- control forwarding (clio_ctrl_fwd): its ring accesses, then its verdict -----
        S_CF: begin
            if (cf_call && cf_call_kind == 2'd1) begin
                flush_ret <= S_CF;
                state_reg <= S_FLUSH;
            end else if (cf_call && cf_call_kind == 2'd2) begin
                send_ret <= S_CF;
                state_reg <= S_SEND;
            end else if (cf_call) begin
                if (cf_ring_load) ring_desc <= cf_ring_desc;
                ring_cmd <= cf_ring_cmd;
                ring_ret <= S_CF;
                state_reg <= S_RING;
            end
            if (cf_ans_load) begin
                // The completed offload answer (clio_offload_fwd latched its call).
                rs_own <= 1'b1;
                rs_pid <= of_ans_pid;
                rs_req_id <= of_ans_req_id;
                rs_retry_of <= of_ans_retry_of;
                rs_session <= of_ans_session;
                r_op <= OP_OFFLOAD_CALL_RESP;
                r_flags <= 8'd0;
                r_epoch <= of_ans_epoch;
                r_va <= of_ans_va;
                r_total_len <= cf_r_big ? of_ans_plen : of_ans_total_len;
                r_offset <= cf_r_big ? 32'd0 : of_ans_offset;
                r_plen <= 16'd0;
                r_status <= cf_r_status;
            end
            if (cf_plen_load) r_plen <= cf_r_plen;
            if (cf_offset_load) r_offset <= cf_r_offset;
            if (cf_fw_set) begin
                fw_set <= 1'b1;
                fw_set_new <= cf_fw_set_new;
                fw_set_index <= cf_fw_set_index;
            end
            if (cf_reserve) begin
                dd_upd_key <= own_key;
                dd_upd_rec <= 0;
                dd_upd_mode <= 2'd1;                     // reserve
                dd_upd_valid <= is_nonidem;
            end
            if (cf_of_call) of_call <= 1'b1;
            if (cf_done) begin
                case (cf_next)
                    3'd0: state_reg <= S_FINISH;
                    3'd1: begin
                        fail_status <= cf_status;
                        state_reg <= S_FAIL;
                    end
                    3'd2: state_reg <= is_nonidem ? S_DD_LOOK1 : S_DISPATCH;
                    3'd3: state_reg <= S_POLL;
                    default: begin
                        send_ret <= S_POLL;
                        state_reg <= S_SEND;
                    end
                endcase
            end
        end
        S_INFO: begin
            r_status <= STATUS_OK;
            r_plen <= INFO_RESP_LEN;
            send_ret <= S_FINISH;
            state_reg <= S_SEND;
        end
        S_FAIL: begin
            // A data phase's page went away (the READ stage, if any, goes on:
            // clio_rd_stage's `s_stop`).
            r_status <= fail_status;
            r_plen <= 16'd0;
            r_va <= h_va;
            r_total_len <= h_total_len;
            // A read response without data says so with offset 0.
            r_offset <= h_op == OP_READ ? 32'd0 : h_offset;
            send_ret <= S_FINISH;
            state_reg <= S_SEND;
            if (pm_on) begin
                // A pumped packet's page went away: the stream ends with a
                // header-only answer of that status (the table cuts it).
                r_va <= pm_va;
                r_total_len <= pm_total;
                r_offset <= 32'd0;
                send_ret <= S_PM_END;
            end
        end
        S_SEND: begin
            rb_start <= 1'b1;
            state_reg <= S_SEND_W;
        end
        // The builder took the packet (start seen) and has a free buffer for
        // the next one: go on while this one leaves.
        S_SEND_W: if (!rb_start && rb_ready) state_reg <= send_ret;
        S_FINISH: begin
            pkt_have_reg <= 1'b0;
            pkt_done_reg <= 1'b0;
            if (fq_count != 0) begin
                fl_bg <= 1'b1;                               // drain with the lane running
                flush_ret <= S_IDLE;
                state_reg <= S_FLUSH;
            end else begin
                state_reg <= S_IDLE;
            end
        end

        // ----- deferred fault side effects, oldest first -----
        S_FLUSH: begin
            if (fq_count == 0) begin
                fl_bg <= 1'b0;
                state_reg <= flush_ret;
            end else if (!fl_bg || fl_go) begin
                mem_addr <= fq_addr[0];
                mem_wdata <= {{(DATA_WIDTH-128){1'b0}}, fq_pte[0]} << {fq_addr[0][OW-1:0], 3'd0};
                mem_wstrb <= {{(BYTES-16){1'b0}}, 16'hffff} << fq_addr[0][OW-1:0];
                mem_ret <= S_FLUSH_NOTE;
                state_reg <= S_MEM_WR;
            end
        end
        S_FLUSH_NOTE: begin
            ring_desc <= 0;
            ring_desc[SLOT_OFF_KIND*8 +: 8] <= DESC_PA_CONSUMED;
            ring_desc[SLOT_OFF_PAGE_SHIFT*8 +: 8] <= fq_shift[0];
            ring_desc[SLOT_OFF_PID*8 +: 32] <= fq_pid[0];
            ring_desc[SLOT_OFF_A*8 +: 64] <= {16'd0, fq_vpn[0]};
            ring_desc[SLOT_OFF_B*8 +: 64] <= {32'd0, fq_ppn[0]};
            ring_desc[SLOT_OFF_C*8 +: 64] <= fq_bucket[0];
            ring_desc[SLOT_OFF_F*8 +: 32] <= fq_slot[0];
            ring_cmd <= 2'd0;
            ring_ret <= S_FLUSH_POP;
            state_reg <= S_RING;
        end
        S_FLUSH_POP: begin
            for (fi = 0; fi + 1 < FAULT_QUEUE; fi = fi + 1) begin
                fq_addr[fi] <= fq_addr[fi + 1];
                fq_pte[fi] <= fq_pte[fi + 1];
                fq_pid[fi] <= fq_pid[fi + 1];
                fq_vpn[fi] <= fq_vpn[fi + 1];
                fq_ppn[fi] <= fq_ppn[fi + 1];
                fq_shift[fi] <= fq_shift[fi + 1];
                fq_bucket[fi] <= fq_bucket[fi + 1];
                fq_slot[fi] <= fq_slot[fi + 1];
            end
            fq_count <= fq_count - 1'b1;
            state_reg <= S_FLUSH;
        end

        // ----- dedup -----
        S_DD_LOOK1: begin
            if (dd_below_floor) begin
                // A late duplicate of an acknowledged request: dropped.
                state_reg <= S_FINISH;
            end else begin
                dd_look_key <= own_key;
                dd_look_valid <= 1'b1;
                state_reg <= S_DD_W1;
            end
        end
        S_DD_W1: begin
            if (dd_out_valid) begin
                rec_reg <= dd_rec;
                if (dd_hit) begin
                    state_reg <= S_REPLAY;
                end else if (dd_full || {{(32-DCW){1'b0}}, dd_count} >= {16'd0, h_dquota}) begin
                    // Never evicted: without room the request waits for acks.
                    fail_status <= STATUS_BUSY;
                    state_reg <= S_FAIL;
                end else if (wr_fast) begin
                    xl_first(wr_va0, wr_end_full, PERM_WRITE, S_WR, wr_shift0);
                end else if (at_fast) begin
                    xl_first(h_va, at_end, PERM_WRITE, S_AT, at_shift0);
                    at_at <= AT_AT_READ;
                end else begin
                    state_reg <= S_DISPATCH;
                end
            end
        end
        S_REPLAY: begin
            r_flags <= rec_reg[0 +: 8] | FLAG_DUPLICATE;
            r_status <= rec_reg[8 +: 8];
            r_va <= rec_reg[16 +: 64];
            r_total_len <= rec_reg[80 +: 32];
            r_offset <= rec_reg[112 +: 32];
            r_plen <= rec_reg[144 +: 8];
            send_ret <= S_FINISH;
            state_reg <= S_SEND;
        end

        // ----- dispatch -----
        S_DISPATCH: begin                                // the verdict: clio_dispatch_check
            xl_pass2 <= 1'b0;
            pg_ok <= 1'b0;
            if (dc_fail) begin
                fail_status <= dc_status;
                state_reg <= S_FAIL;
            end
            if (dc_read) begin
                // ST_BEGIN's work, one cycle sooner.
                xl_pages <= 0;
                xl_cur <= h_va;
                xl_end <= rd_end_full;
                xl_need <= PERM_READ;
                xl_ret <= S_RD;
                xl_call(XL_AT_PAGE);
            end
            if (dc_wr_setup) begin
                // ST_BEGIN's work, one cycle sooner (as a READ's); loaded
                // for every WRITE, one whose range wraps too.
                xl_pages <= 0;
                xl_cur <= h_va + h_offset;
                xl_end <= wr_end_full;
                xl_need <= PERM_WRITE;
                xl_ret <= S_WR;
            end
            if (dc_write) xl_call(XL_AT_PAGE);
            if (dc_atomic) begin
                xl_cur <= h_va;
                xl_end <= {1'b0, h_va} + ATOMIC_RESP_LEN;
                xl_need <= PERM_WRITE;
                xl_ret <= S_AT;                          // one page: no second pass
                at_at <= AT_AT_READ;
                xl_call(XL_AT_BEGIN);
            end
            if (dc_fence) begin
                // Answered after the reply that completes the PID's last forwarded request.
                fw_fence_set <= 1'b1;
                fw_fence_set_index <= fw_fence_free_index;
                state_reg <= S_FINISH;
            end
            if (dc_chase) state_reg <= S_CH;             // clio_chase and clio_chase_read start now (ch_start)
            if (dc_cf) begin
                cf_entry <= CF_FW_PUSH;
                state_reg <= S_CF;
            end
        end

        // ----- extend path: pointer chase (clio_chase walks, clio_chase_read reads): its calls, the answer -----
        S_CH: begin
            if (chr_step) begin
                xl_pass2 <= 1'b0;
                pg_ok <= 1'b0;
                xl_cur <= ch_va;
                xl_need <= PERM_READ;
                xl_ret <= S_CH;
            end
            if (chr_xl) begin
                xl_end <= chr_xl_end;
                xl_call(XL_AT_BEGIN);
            end
            if (chr_d0) begin
                xl_pass2 <= 1'b1;
                pg_ok <= 1'b0;
            end
            if (chr_page) begin
                xl_cur <= chr_cur;
                xl_ret <= S_CH;
                xl_call(XL_AT_PAGE);
            end
            if (chr_read) begin
                d_lane <= chr_pa[OW-1:0];
                d_k <= chr_k[OW:0];
                mem_addr <= chr_pa;
                mem_ret <= S_CH;
                state_reg <= S_MEM_RD;
            end
            if (chr_done) begin
                r_status <= STATUS_OK;
                r_flags <= 8'd0;
                r_va <= h_va;
                r_total_len <= h_total_len;
                r_offset <= h_offset;
                r_plen <= CHASE_RESP_LEN + (chr_found ? chr_vlen : 16'd0);
                send_ret <= S_FINISH;
                state_reg <= S_SEND;
            end
        end

        // ----- translation (clio_xl_ctl; the walk, clio_xl_walk, in its ST_WALK) -----
        S_XL: begin                                      // the stage runs; its calls come back here
            if (xc_clear) xl_pages <= 0;
            if (xc_look) begin
                pg_shift <= cls_shift[4:0];
                pg_vpn <= xl_cur >> cls_shift;
                xl_pages <= xl_pages + 1'b1;
                tlb_look_valid <= 1'b1;                      // the TLB takes the VA itself
            end
            if (xc_tlb_load) begin
                pg_ppn <= tlb_ppn;
                pg_perms <= tlb_perms;
            end
            if (xw_bucket) pg_bucket <= hash_index;
            if (xw_pte) begin
                pg_found <= ptf_found;
                pg_slot <= ptf_slot;
                pg_ppn <= ptf_ppn;
                pg_perms <= ptf_perms;
                pg_flags <= ptf_flags;
            end
            if (xw_fault_ppn) pg_ppn <= fault_ppn;
            if (xw_enq_unit) fault_enqueue(fault_ppn);
            if (xw_enq) fault_enqueue(pg_ppn);
            if (xw_insert) tlb_ins_valid <= 1'b1;
            if (xc_fail) begin
                fail_status <= xc_status;
                state_reg <= S_FAIL;
            end
            if (xc_report) begin
                rep_status <= xc_status;
                rep_pid <= x_pid;
                rep_va <= xl_cur;
                rep_ret <= S_XL;
                state_reg <= S_REP;
            end
            if (xc_flush) begin
                flush_ret <= S_XL;
                state_reg <= S_FLUSH;
            end
            if (xc_probe) begin
                ring_cmd <= 2'd1;                        // PROBE: room for PA_CONSUMED?
                ring_ret <= S_XL;
                state_reg <= S_RING;
            end
            // A translated page: its bounds; the next page, or the range's end.
            if (xc_ok) begin
                pg_start <= xl_cur & ~pg_mask;
                pg_end <= {1'b0, xl_cur | pg_mask} + 1'b1;
                pg_ok <= 1'b1;
            end
            if (xc_next) xl_cur <= (xl_cur | pg_mask) + 1'b1;
            if (xc_last) xl_cur <= xl_end[63:0];             // the last page: translated
            if (xc_hand_off) wl_hand_off();                  // a one-page WRITE: the lane took it
            if (xc_let_go) let_go();                         // the atomics stage took it
            if (xc_at_read) at_read();                       // ST_READ's work, a cycle sooner
            if (xc_ret) state_reg <= xl_ret;
        end

        // ----- READ data phase (clio_rd_data) -----
        // The stage issues the mover's commands chunk by chunk (a chunk is
        // one response packet, cut at the MTU, and a page's share of it one
        // command), ahead of the data; the packer (below the case) appends
        // the beats to the builder and starts each packet with its last
        // beat, so the next chunk's bursts are read while the current one
        // streams in and the previous one leaves.
        S_RD: begin                                      // the stage runs; its calls come back here
            if (rdd_start) begin
                // (the packer starts, or waits behind the READ stage: clio_rd_stage)
                r_status <= STATUS_OK;
                r_va <= rd_va;
                r_total_len <= rd_total;
                // A pumped packet keeps the last page its translation found
                // (the data phase translates again only a second page), and so
                // does a READ of one page: looking it up again would find the
                // same entry, already the TLB's most recent use (the model's
                // second lookup leaves its LRU order as it is).
                pg_ok <= (pm_on || xl_pages == 32'd1) && pg_ok;
                xl_pass2 <= 1'b1;
            end
            if (rdd_flush) begin
                flush_ret <= S_RD;
                state_reg <= S_FLUSH;
            end
            if (rdd_empty) begin
                // An empty READ: the header-only answer, nothing moved (the
                // packer stops: clio_rd_stage's `s_stop`).
                r_offset <= d_sent;
                r_plen <= 16'd0;
                send_ret <= S_RD;
                state_reg <= S_SEND;
            end
            // The READ's last commands are issued: the READ stage (packer +
            // mover queue, clio_rd_stage) finishes it on its own with this
            // answer's header, and the engine goes on.
            if (rdd_solo) let_go();
            if (rdd_page) begin
                xl_cur <= rd_cur;
                xl_ret <= S_RD;
                xl_call(XL_AT_PAGE);
            end
            if (rdd_cmd) begin
                // The rest of the chunk in this page: one mover command; the
                // chunk's last one is marked (its last beat starts the packet).
                mv_addr <= rd_pa;
                mv_len <= rd_seg[15:0];
                mv_mark <= d_filled + rd_seg == d_n;
                mv_go <= 1'b1;
            end
            if (rdd_cmd_taken) mv_go <= 1'b0;
            // `rdd_insert`: the rest leaves packet by packet, between other
            // requests (the stream table takes it; S_IDLE pumped before this
            // READ if the table was full).
            if (rdd_finish) state_reg <= S_FINISH;
            if (rdd_pm_end) state_reg <= S_PM_END;
        end
        S_PM_END: begin
            if (fq_count != 0) begin
                flush_ret <= S_PM_END;
                state_reg <= S_FLUSH;
            end else begin
                // Stream 0's client goes last (the model's round-robin, the
                // stream table's rotation); the pump ends.
                state_reg <= S_IDLE;
            end
        end

        // ----- WRITE data phase (clio_wr_data) -----
        S_WR: begin                                      // the stage runs; its calls come back here
            if (wd_hand_off) wl_hand_off();
            if (wd_start) begin
                pg_ok <= 1'b0;
                xl_pass2 <= 1'b1;
            end
            if (wd_flush) begin
                flush_ret <= S_WR;
                state_reg <= S_FLUSH;
            end
            if (wd_answer) begin
                // Written: the header-only answer, recorded first.
                r_status <= STATUS_OK;
                r_plen <= 16'd0;
                r_va <= h_va;
                r_total_len <= h_total_len;
                r_offset <= h_offset;
                at_call(AT_AT_REC1);
            end
            if (wd_page) begin
                xl_cur <= wr_cur;
                xl_ret <= S_WR;
                xl_call(XL_AT_PAGE);
            end
            if (wd_cmd) begin
                // The rest of the payload in this page, streamed by the mover
                // from the packet buffer (src_window follows d_pos).
                mv_addr <= wr_pa;
                mv_len <= wr_seg[15:0];
                mv_go <= 1'b1;
            end
            if (wd_cmd_taken) mv_go <= 1'b0;
            // The payload's last byte taken: the packet buffer may take the
            // next packet's beats while the B, the record and the answer follow.
            if (wd_last_take) pkt_done_reg <= 1'b1;
        end

        // ----- atomics on the engine and the record (clio_at_engine) -----
        S_AT: begin                                      // the stage runs; its read comes back here
            if (ae_let_go) let_go();                     // the atomics stage took it
            if (ae_read) at_read();
            if (ae_fail) begin
                // A lock that would be taken while the session holds its quota.
                fail_status <= STATUS_OVER_QUOTA;
                state_reg <= S_FAIL;
            end
            if (ae_result) begin
                r_status <= sync_status;
                r_plen <= ATOMIC_RESP_LEN;
                r_va <= h_va;
                r_total_len <= h_total_len;
                r_offset <= h_offset;
            end
            if (ae_wr_load) begin
                // The write, offered to the port in this cycle (`at_wr_now`).
                mem_wdata <= at_wdata;
                mem_wstrb <= at_wstrb;
            end
            if (ae_locks) begin
                if (h_op == OP_LOCK && h_locks != 16'hffff) st_set_locks(h_sidx, h_locks + 16'd1);
                if (h_op == OP_UNLOCK && h_locks != 16'd0) st_set_locks(h_sidx, h_locks - 16'd1);
            end
            if (ae_send) begin
                send_ret <= S_FINISH;
                state_reg <= S_SEND;
            end
            if (ae_record) begin
                // The dedup record of an executed non-idempotent request.
                dd_upd_key <= own_key;
                dd_upd_rec <= cur_rec;
                dd_upd_mode <= 2'd0;                     // insert
                dd_upd_valid <= 1'b1;
                send_ret <= S_FINISH;
                rb_start <= 1'b1;                        // S_SEND's start, a cycle sooner
                state_reg <= S_SEND_W;
            end
        end

        // ----- engine memory port -----
        // (clio_axi_arbiter's engine port: command, then its completion)
        S_MEM_RD: if (eng_ready) state_reg <= S_MEM_RDW;
        S_MEM_RDW: begin
            if (eng_done) begin
                mem_rdata <= eng_rdata;
                state_reg <= mem_ret;
            end
        end
        S_MEM_WR: if (eng_ready) state_reg <= S_MEM_WRB;
        S_MEM_WRB: if (eng_done) state_reg <= mem_ret;

        // ----- rings -----
        S_RING: begin
            if (ring_idle) begin
                ring_valid <= 1'b1;
                state_reg <= S_RING_W;
            end
        end
        S_RING_W: begin
            if (ring_done) begin
                if (ring_cmd != 2'd2) begin
                    // Free RX slots now, less the notices still queued (the one
                    // just pushed by a flush is no longer queued).
                    rx_credit <= ring_free - (fq_count != 0 ? fq_count - 1'b1 : 1'b0);
                end
                state_reg <= ring_ret;
            end
        end
        // ----- error report (clio_err_report): its flushes and push, then back to the caller -----
        S_REP: begin
            if (er_desc_load) begin
                ring_desc <= er_desc;
                ring_cmd <= 2'd0;
            end
            if (er_flush) begin
                // Earlier notices go first: the ring keeps the reference order.
                flush_ret <= S_REP;
                state_reg <= S_FLUSH;
            end
            if (er_push) begin
                ring_ret <= S_REP;
                state_reg <= S_RING;
            end
            if (er_done) state_reg <= rep_ret;
        end

        // ----- TX ring poll (clio_tx_poll): its pops, reports and commands -----
        S_POLL: begin
            if (tp_popped) begin
                rep_status <= STATUS_MALFORMED;
                rep_pid <= 0;
                rep_va <= 0;
                desc_reg <= ring_tx_desc;
            end
            if (tp_pop) begin
                ring_cmd <= 2'd2;
                ring_ret <= S_POLL;
                state_reg <= S_RING;
            end
            if (tp_report) begin
                rep_ret <= S_POLL;
                state_reg <= S_REP;
            end
            if (tp_cmd) state_reg <= S_CMD;
            if (tp_done) begin
                poll_done_reg <= 1'b1;
                gt_poll_reg <= 1'b0;
                state_reg <= S_IDLE;
            end
        end
        // ----- TX ring commands (clio_tx_cmd): its slot reads, then its verdict -----
        S_CMD: begin
            if (tc_va_load) cmd_va <= tc_va;
            if (tc_inv_load) begin
                tlb_inv_pid <= tc_inv_pid;
                tlb_inv_vpn <= tc_inv_vpn;
                if (tc_inv_exact) tlb_inv_shift <= tc_inv_shift;
                else tlb_inv_pages <= tc_inv_pages;
                tlb_inv_exact <= tc_inv_exact;
                tlb_inv_valid <= tc_inv_valid;
            end
            if (tc_push) push_valid <= 1'b1;
            if (tc_epoch) begin
                // A new boot: every session, record and lock count of the
                // earlier one is gone; requests it held become orphans.
                // (Lock counts are zeroed when an entry is installed.)
                st_set_epoch(desc_reg[SLOT_OFF_A*8 +: 32]);
                dd_clear <= 1'b1;
                fw_orphan <= 1'b1;
                fw_orphan_all <= 1'b1;
                gt_clear <= 1'b1;                        // a new boot's slow path holds no gate
            end
            if (tc_gt_set) gt_set <= 1'b1;
            if (tc_call) begin
                mem_addr <= tc_mem_addr;
                mem_ret <= S_CMD;
                state_reg <= S_MEM_RD;
            end
            if (tc_done) begin
                case (tc_next)
                    3'd0: state_reg <= S_POLL;
                    3'd1: begin
                        rp_entry <= RP_REJECT;
                        state_reg <= S_RP;
                    end
                    3'd2: begin
                        rp_entry <= RP_REPLY;
                        state_reg <= S_RP;
                    end
                    3'd3: begin
                        rp_entry <= RP_SESSION;
                        state_reg <= S_RP;
                    end
                    3'd4: begin
                        cf_entry <= CF_OF_ANS;           // the completed answer is sent
                        state_reg <= S_CF;
                    end
                    default: begin
                        mem_wdata <= tc_mem_wdata;
                        mem_wstrb <= tc_mem_wstrb;
                        mem_ret <= S_POLL;
                        state_reg <= S_MEM_WR;
                    end
                endcase
            end
        end

        // ----- REPLY, SESSION_REPLY (clio_tx_reply): its sends, then its verdict -----
        S_RP: begin
            if (rp_load) begin
                // The answer carries the ids of the request it answers.
                fw_release <= 1'b1;
                fw_release_index <= desc_reg[SLOT_OFF_TAG*8 +: FIW];
                rs_own <= 1'b1;
                rs_pid <= fw_pid;
                rs_req_id <= fw_req_id;
                rs_retry_of <= fw_retry_of;
                rs_session <= fw_session;
                r_op <= fw_opcode | OP_RESPONSE_BIT;
                r_status <= rp_r_status;
                r_flags <= rp_r_flags;
                r_va <= rp_r_va;
                r_total_len <= fw_total_len;
                r_offset <= fw_offset;
                r_epoch <= rp_r_epoch;
                r_plen <= rp_r_plen;
                r_payload <= rp_r_payload;
            end
            if (rp_load_rec) begin
                rs_first <= fw_first;
                rs_dd_session <= fw_dd_session;
                rs_op <= fw_opcode;
            end
            if (rp_sess_set) begin
                st_set_entry(rp_sess[SIW-1:0], rp_sess_open, rp_sess_pid, rp_sess_key, rp_sess_dquota, rp_sess_lquota);
                dd_close_valid <= 1'b1;
                dd_close_session <= rp_sess;
                fw_orphan <= 1'b1;
                fw_orphan_session <= rp_sess;
            end
            if (rp_rec) begin
                // The reservation taken at intake becomes the record, or is
                // freed if the request failed (its retry must execute). An
                // orphan (session 0) has none.
                dd_upd_key <= {rs_op, 32'd0, rs_first, rs_dd_session};
                dd_upd_rec <= cur_rec;
                dd_upd_mode <= r_status == STATUS_OK ? 2'd2 : 2'd3;   // complete / remove
                dd_upd_valid <= 1'b1;
            end
            if (rp_fence) begin
                fw_fence_clear <= 1'b1;
                fw_fence_clear_index <= fw_fence_index;
                rs_req_id <= fw_fence_req_id;
                rs_retry_of <= fw_fence_retry_of;
                rs_session <= fw_fence_session;
                r_epoch <= fw_fence_epoch;
                r_op <= OP_FENCE_RESP;
                r_flags <= 8'd0;
                r_status <= STATUS_OK;
                r_va <= fw_fence_va;
                r_total_len <= fw_fence_total_len;
                r_offset <= fw_fence_offset;
                r_plen <= 16'd0;
            end
            if (rp_send) begin
                send_ret <= S_RP;
                state_reg <= S_SEND;
            end
            if (rp_own_clear) rs_own <= 1'b0;
            if (rp_done) begin
                if (rp_reject) begin
                    rep_status <= STATUS_MALFORMED;
                    rep_pid <= 0;
                    rep_va <= cmd_va;
                    rep_ret <= S_POLL;
                    state_reg <= S_REP;
                end else begin
                    state_reg <= S_POLL;
                end
            end
        end
        default: state_reg <= S_IDLE;
    endcase

    if (eng_in_last || lane_handoff) begin
        pkt_have_reg <= 1'b1;
    end

    if (rst) begin
        state_reg <= S_IDLE;
        pkt_have_reg <= 1'b0;
        pkt_done_reg <= 1'b0;
        poll_req <= 1'b0;
        pm_turn <= 1'b0;
        mv_go <= 1'b0;
        fq_count <= 0;
        fl_bg <= 1'b0;
        rx_credit <= 0;
        gt_poll_reg <= 1'b0;
    end
end
/* verilator lint_on WIDTH */

endmodule

`resetall
