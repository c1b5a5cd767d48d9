//! Fastpass: a central arbiter server attached to the switch by one link of the node rate.
//!
//! Every transfer (a write's data, a read's RREQ, then its response) is requested from the
//! arbiter with one control frame and every allocated chunk (one MTU of payload, a Fastpass
//! timeslot) is announced with one control frame (64 B each, the minimum Ethernet frame). The
//! arbiter computes allocations infinitely fast — with the shared [`edm_pim`] scheduler, FCFS,
//! no per-pair limit — but its link serializes every request and grant, which is the bottleneck
//! the paper points at. Allocated data never queues in the switch: a grant that leaves the
//! arbiter at `g` lets the sender start at `g + 2·hop`, and the sender's and receiver's ports
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

/// Run Fastpass over `msgs`.
pub fn run(cfg: &SimConfig, msgs: &[Message]) -> Result<RunResult, SimError> {
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
