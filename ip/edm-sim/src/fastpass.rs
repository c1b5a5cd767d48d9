//! Fastpass: a central arbiter server attached to the switch by one link of the node rate.
//!
//! Every transfer (a write's data, a read's RREQ, then its response) must be requested from the
//! arbiter and allocated link time before it is sent. The arbiter computes allocations
//! infinitely fast — with the shared [`edm_pim`] scheduler, FCFS, no per-pair limit — but its
//! link serializes every demand and allocation frame, which is the bottleneck the paper points
//! at. Two control models:
//! * batched ([`run_batched`], the default, as Fastpass's control protocol works): each node
//!   reports all its new demands in one frame (one entry per destination) at most once per
//!   batching period, and the arbiter runs one allocation round per period, sending each
//!   endpoint one frame with all its allocations of the round;
//! * per transfer ([`run_per_transfer`], `fastpass_batch_ps = 0`): one 64 B request frame per
//!   transfer and one 64 B grant frame per allocated chunk (one MTU of payload, a timeslot).
//!
//! Allocated data never queues in the switch: the sender starts once its allocation has
//! arrived (two hops after it left the arbiter link), and the sender's and receiver's ports
//! are reserved until that transfer ends (minus the shortest grant transit, so back-to-back
//! allocations pipeline).

use edm_pim::{Config as PimConfig, LinkRate, Notification, Priority, Scheduler};

use crate::config::SimConfig;
use crate::event::EventQueue;
use crate::workload::{Kind, Message};
use crate::{RunResult, SimError};

/// Bytes of one request or grant frame on the arbiter link.
pub const CONTROL_FRAME_BYTES: u64 = 64;

#[derive(Debug, Clone, Copy)]
struct Transfer {
    msg: u32,
    data: bool,
    src: u16,
    dst: u16,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Issue(u32),
    /// A request for transfer `t` reaches the arbiter.
    Request(u32),
    /// A transfer's last byte reached its receiver.
    Done(u32),
    Wake,
}

/// Run Fastpass over `msgs`: batched control ([`run_batched`]) when
/// [`SimConfig::fastpass_batch_ps`] is positive, else one request and one grant per transfer.
pub fn run(cfg: &SimConfig, msgs: &[Message]) -> Result<RunResult, SimError> {
    if cfg.fastpass_batch_ps > 0 {
        run_batched(cfg, msgs)
    } else {
        run_per_transfer(cfg, msgs)
    }
}

/// Run Fastpass with one request frame and one grant frame per transfer.
pub fn run_per_transfer(cfg: &SimConfig, msgs: &[Message]) -> Result<RunResult, SimError> {
    let n = cfg.nodes;
    let hop = cfg.hop_ps();
    let ctrl = cfg.ser_ps(CONTROL_FRAME_BYTES);
    let mut pim = PimConfig::new(n)
        .with_priority(Priority::Fcfs)
        .with_active_per_pair(u32::MAX);
    pim.chunk_bytes = cfg.mtu_bytes;
    pim.link = LinkRate {
        bytes: 1,
        time: cfg.ps_per_byte,
    };
    let mut arb = Scheduler::new(pim).map_err(|e| SimError::Internal(e.to_string()))?;
    let mut q = EventQueue::new();
    for m in msgs {
        q.push(m.arrival, Ev::Issue(m.id));
    }
    let mut res = RunResult::new(msgs.len());
    let mut transfers: Vec<Transfer> = Vec::with_capacity(msgs.len() * 2);
    let (mut arb_in_busy, mut arb_out_busy) = (0u64, 0u64);
    let mut wake_at: Option<u64> = None;
    let (mut iter_sum, mut calls) = (0u64, 0u64);
    // Send a request frame from `src` at `t`: node uplink, switch, then the arbiter's link.
    let request = |q: &mut EventQueue<Ev>, arb_in_busy: &mut u64, t: u64, id: u32| {
        let start = (t + ctrl + hop).max(*arb_in_busy);
        *arb_in_busy = start + ctrl;
        q.push(start + ctrl + hop, Ev::Request(id));
    };
    while let Some(t) = q.peek_time() {
        if t > cfg.time_limit_ps {
            return Err(SimError::TimeLimit {
                scheme: "fastpass",
                limit_ps: cfg.time_limit_ps,
            });
        }
        let mut dirty = false;
        while q.peek_time() == Some(t) {
            let (_, ev) = q.pop().expect("peeked");
            match ev {
                Ev::Issue(id) => {
                    let m = &msgs[id as usize];
                    let data = m.kind == Kind::Write;
                    transfers.push(Transfer {
                        msg: id,
                        data,
                        src: m.requester,
                        dst: m.target,
                    });
                    request(&mut q, &mut arb_in_busy, t, transfers.len() as u32 - 1);
                }
                Ev::Request(tid) => {
                    let tr = transfers[tid as usize];
                    let m = &msgs[tr.msg as usize];
                    let bytes = if tr.data {
                        m.bytes
                    } else {
                        u64::from(cfg.rreq_bytes)
                    };
                    let note = Notification {
                        src: tr.src,
                        dst: tr.dst,
                        bytes,
                        id: u64::from(tid),
                    };
                    arb.notify(t, note)
                        .map_err(|e| SimError::Internal(format!("arbiter refused: {e}")))?;
                    dirty = true;
                }
                Ev::Done(tid) => {
                    let tr = transfers[tid as usize];
                    if tr.data {
                        res.finish[tr.msg as usize] = Some(t);
                    } else {
                        // RREQ delivered: the memory node requests a slot for the response.
                        transfers.push(Transfer {
                            msg: tr.msg,
                            data: true,
                            src: tr.dst,
                            dst: tr.src,
                        });
                        request(&mut q, &mut arb_in_busy, t, transfers.len() as u32 - 1);
                    }
                }
                Ev::Wake => {
                    if wake_at == Some(t) {
                        wake_at = None;
                    }
                    dirty = true;
                }
            }
        }
        if !dirty {
            continue;
        }
        let out = arb.schedule(t);
        if !out.matches.is_empty() {
            iter_sum += u64::from(out.iterations);
            calls += 1;
        }
        for mt in &out.matches {
            let tr = transfers[mt.id as usize];
            // The grant frame queues on the arbiter's link, then crosses two hops.
            let gdep = t.max(arb_out_busy) + ctrl;
            arb_out_busy = gdep;
            let start = gdep + 2 * hop;
            let ser = cfg.ser_ps(u64::from(mt.len));
            arb.hold_until(
                mt.src,
                mt.dst,
                (start + ser).saturating_sub(2 * hop + ctrl).max(t + 1),
            );
            if tr.data {
                res.delivered[tr.msg as usize] += u64::from(mt.len);
                res.sent_bytes += u64::from(mt.len);
            }
            if mt.last {
                q.push(start + 2 * (ser + hop), Ev::Done(mt.id as u32));
            }
        }
        if arb.queued() > 0 {
            if let Some(r) = arb.next_release() {
                if r > t && wake_at.is_none_or(|w| r < w) {
                    wake_at = Some(r);
                    q.push(r, Ev::Wake);
                }
            }
        }
    }
    res.events = q.processed();
    res.pim_iterations = if calls > 0 {
        iter_sum as f64 / calls as f64
    } else {
        0.0
    };
    Ok(res)
}

/// Fixed part of a batched control frame (Ethernet header and FCS, IPv4, FCP header): a
/// minimum 64 B frame holds this plus four entries.
pub const FRAME_FIXED_BYTES: u64 = 48;
/// One demand entry (destination, count) or allocation entry (destination, length).
pub const ENTRY_BYTES: u64 = 4;
/// Largest control frame (an MTU).
pub const FRAME_MAX_BYTES: u64 = 1500;

/// Bytes on the wire of control frames carrying `entries` entries: as few frames as fit, each
/// at least the 64 B Ethernet minimum.
pub fn batch_frame_bytes(entries: u64) -> u64 {
    let per_frame = (FRAME_MAX_BYTES - FRAME_FIXED_BYTES) / ENTRY_BYTES;
    let (full, rest) = (entries / per_frame, entries % per_frame);
    let last = if rest > 0 || full == 0 {
        (FRAME_FIXED_BYTES + rest * ENTRY_BYTES).max(CONTROL_FRAME_BYTES)
    } else {
        0
    };
    full * (FRAME_FIXED_BYTES + per_frame * ENTRY_BYTES) + last
}

#[derive(Debug, Clone, Copy)]
enum BatchEv {
    Issue(u32),
    /// Node `n` sends a demand report with everything it has not reported yet.
    Report(u16),
    /// Report `r` (an index into the report list) reaches the arbiter.
    Demands(u32),
    /// The arbiter runs an allocation round.
    Round,
    /// A transfer's last byte reached its receiver.
    Done(u32),
}

/// Run Fastpass with batched control, as Fastpass's control protocol does: a node reports its
/// new demands (one entry per destination) in one frame at most once per batching period `R`;
/// the arbiter runs an allocation round at most once per `R`, allocating the next `R` of
/// link time at once, and sends each endpoint one frame with all its allocations of the round.
/// Allocation frames are serialized on the arbiter's link in allocation order; an allocation
/// is usable once the frame bytes up to it have reached the sender. Ports stay reserved until
/// the allocated transfer ends (minus the shortest grant transit), so data never queues.
pub fn run_batched(cfg: &SimConfig, msgs: &[Message]) -> Result<RunResult, SimError> {
    let n = cfg.nodes;
    let hop = cfg.hop_ps();
    let period = cfg.fastpass_batch_ps;
    // Shortest time from an allocation decision to the sender starting: one minimum frame on
    // the arbiter link and two hops (arbiter to switch to node).
    let lead = 2 * hop + cfg.ser_ps(CONTROL_FRAME_BYTES);
    let per_frame = (FRAME_MAX_BYTES - FRAME_FIXED_BYTES) / ENTRY_BYTES;
    let mut pim = PimConfig::new(n)
        .with_priority(Priority::Fcfs)
        .with_active_per_pair(u32::MAX);
    pim.chunk_bytes = cfg.mtu_bytes;
    pim.link = LinkRate {
        bytes: 1,
        time: cfg.ps_per_byte,
    };
    let mut arb = Scheduler::new(pim).map_err(|e| SimError::Internal(e.to_string()))?;
    let mut q = EventQueue::new();
    for m in msgs {
        q.push(m.arrival, BatchEv::Issue(m.id));
    }
    let mut res = RunResult::new(msgs.len());
    let mut transfers: Vec<Transfer> = Vec::with_capacity(msgs.len() * 2);
    let mut unreported: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut report_due = vec![false; n];
    let mut last_report: Vec<Option<u64>> = vec![None; n];
    let mut reports: Vec<Vec<u32>> = Vec::new();
    let (mut arb_in_busy, mut arb_out_busy) = (0u64, 0u64);
    let mut round_due = false;
    let mut last_round: Option<u64> = None;
    let mut rounds = 0u64;
    // Per source: the round of its open allocation frame and the entries in it.
    let mut frame_round = vec![u64::MAX; n];
    let mut frame_entries = vec![0u64; n];
    let (mut iter_sum, mut calls) = (0u64, 0u64);
    let next_slot = |last: Option<u64>, t: u64| last.map_or(t, |l| t.max(l + period));

    let add_transfer = |q: &mut EventQueue<BatchEv>,
                        transfers: &mut Vec<Transfer>,
                        unreported: &mut [Vec<u32>],
                        report_due: &mut [bool],
                        last_report: &[Option<u64>],
                        t: u64,
                        tr: Transfer| {
        transfers.push(tr);
        let s = usize::from(tr.src);
        unreported[s].push(transfers.len() as u32 - 1);
        if !report_due[s] {
            report_due[s] = true;
            q.push(next_slot(last_report[s], t), BatchEv::Report(tr.src));
        }
    };

    while let Some((t, ev)) = q.pop() {
        if t > cfg.time_limit_ps {
            return Err(SimError::TimeLimit {
                scheme: "fastpass",
                limit_ps: cfg.time_limit_ps,
            });
        }
        match ev {
            BatchEv::Issue(id) => {
                let m = &msgs[id as usize];
                let tr = Transfer {
                    msg: id,
                    data: m.kind == Kind::Write,
                    src: m.requester,
                    dst: m.target,
                };
                add_transfer(
                    &mut q,
                    &mut transfers,
                    &mut unreported,
                    &mut report_due,
                    &last_report,
                    t,
                    tr,
                );
            }
            BatchEv::Report(node) => {
                let s = usize::from(node);
                report_due[s] = false;
                last_report[s] = Some(t);
                let batch = std::mem::take(&mut unreported[s]);
                let mut dsts: Vec<u16> = batch.iter().map(|&x| transfers[x as usize].dst).collect();
                dsts.sort_unstable();
                dsts.dedup();
                let ser = cfg.ser_ps(batch_frame_bytes(dsts.len() as u64));
                // Node uplink, switch, then FIFO on the arbiter's link.
                let start = (t + ser + hop).max(arb_in_busy);
                arb_in_busy = start + ser;
                reports.push(batch);
                q.push(
                    start + ser + hop,
                    BatchEv::Demands(reports.len() as u32 - 1),
                );
            }
            BatchEv::Demands(r) => {
                for &tid in &reports[r as usize] {
                    let tr = transfers[tid as usize];
                    let m = &msgs[tr.msg as usize];
                    let bytes = if tr.data {
                        m.bytes
                    } else {
                        u64::from(cfg.rreq_bytes)
                    };
                    let note = Notification {
                        src: tr.src,
                        dst: tr.dst,
                        bytes,
                        id: u64::from(tid),
                    };
                    arb.notify(t, note)
                        .map_err(|e| SimError::Internal(format!("arbiter refused: {e}")))?;
                }
                reports[r as usize] = Vec::new();
                if !round_due {
                    round_due = true;
                    q.push(next_slot(last_round, t), BatchEv::Round);
                }
            }
            BatchEv::Round => {
                round_due = false;
                last_round = Some(t);
                rounds += 1;
                let mut cursor = t.max(arb_out_busy);
                let mut v = t;
                loop {
                    let out = arb.schedule(v);
                    if !out.matches.is_empty() {
                        iter_sum += u64::from(out.iterations);
                        calls += 1;
                    }
                    for mt in &out.matches {
                        let s = usize::from(mt.src);
                        if frame_round[s] != rounds || frame_entries[s] % per_frame == 0 {
                            if frame_round[s] != rounds {
                                frame_entries[s] = 0;
                            }
                            frame_round[s] = rounds;
                            cursor += cfg.ser_ps(CONTROL_FRAME_BYTES);
                        } else if frame_entries[s] % per_frame >= 4 {
                            cursor += cfg.ser_ps(ENTRY_BYTES);
                        }
                        frame_entries[s] += 1;
                        let start = (v + lead).max(cursor + 2 * hop);
                        let ser = cfg.ser_ps(u64::from(mt.len));
                        arb.hold_until(
                            mt.src,
                            mt.dst,
                            (start + ser).saturating_sub(lead).max(v + 1),
                        );
                        let tr = transfers[mt.id as usize];
                        if tr.data {
                            res.delivered[tr.msg as usize] += u64::from(mt.len);
                            res.sent_bytes += u64::from(mt.len);
                        }
                        if mt.last {
                            q.push(start + 2 * (ser + hop), BatchEv::Done(mt.id as u32));
                        }
                    }
                    if arb.queued() == 0 {
                        break;
                    }
                    match arb.next_release() {
                        Some(r) if r > v && r < t + period => v = r,
                        _ => break,
                    }
                }
                arb_out_busy = cursor;
                if arb.queued() > 0 {
                    round_due = true;
                    q.push(t + period, BatchEv::Round);
                }
            }
            BatchEv::Done(tid) => {
                let tr = transfers[tid as usize];
                if tr.data {
                    res.finish[tr.msg as usize] = Some(t);
                } else {
                    // RREQ delivered: the memory node reports demand for the response.
                    let resp = Transfer {
                        msg: tr.msg,
                        data: true,
                        src: tr.dst,
                        dst: tr.src,
                    };
                    add_transfer(
                        &mut q,
                        &mut transfers,
                        &mut unreported,
                        &mut report_due,
                        &last_report,
                        t,
                        resp,
                    );
                }
            }
        }
    }
    res.events = q.processed();
    res.pim_iterations = if calls > 0 {
        iter_sum as f64 / calls as f64
    } else {
        0.0
    };
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_bytes_pad_to_the_minimum_and_split_at_the_mtu() {
        assert_eq!(batch_frame_bytes(0), 64);
        assert_eq!(batch_frame_bytes(4), 64);
        assert_eq!(batch_frame_bytes(5), 68);
        // 363 entries fill a 1500 B frame; one more starts a second frame.
        assert_eq!(batch_frame_bytes(363), 1500);
        assert_eq!(batch_frame_bytes(364), 1500 + 64);
    }

    #[test]
    fn lone_batched_write_by_hand() {
        let cfg = SimConfig {
            nodes: 3,
            ..SimConfig::default()
        };
        let m = [Message {
            id: 0,
            kind: Kind::Write,
            requester: 0,
            target: 2,
            bytes: 64,
            arrival: 0,
        }];
        // Report: 64 B frame (5.12 ns) on the uplink, a hop (48 ns), 5.12 ns on the arbiter
        // link, a hop: demand at 106.24 ns; the round runs at once. Allocation frame 5.12 ns,
        // two hops: the sender starts at 207.36 ns; 64 B up (5.12), hop, 64 B down, hop.
        let r = run_batched(&cfg, &m).unwrap();
        assert_eq!(r.finish[0], Some(207_360 + 2 * (5_120 + 48_000)));
        // A lone transfer sees no batching delay, so both control models agree.
        assert_eq!(run_per_transfer(&cfg, &m).unwrap().finish, r.finish);
    }
}
