//! EDM: hosts notify the switch scheduler ([`edm_pim::Scheduler`]), the scheduler grants one
//! chunk per match, data crosses the switch on a reserved virtual circuit without queuing.
//!
//! Timing (Table 1, 64 B message alone: write 296.96 ns, read 299.52 ns):
//! * a write's /N/ block, or a read's RREQ, reaches the scheduler `hop + 3 cycles` after issue;
//! * a chunk granted at `g` is fully delivered at `g + 3·hop + stack + l/B`, where `stack` is the
//!   rest of Table 1's stack latency (grant generation and processing, data block generation,
//!   switch forwarding, receive processing); for reads the first grant is the RREQ forwarded to
//!   the memory node, later ones /G/ blocks;
//! * the scheduler holds both ports for `l/B` after the grant (§3.1.1 step 7) and runs PIM to a
//!   maximal matching at every change (notification or release) in zero time, like the
//!   published simulator's instantaneous scheduler;
//! * a host keeps at most `X` notifications active per destination; it learns that one retired
//!   `hop + 3 cycles` after the message's last grant, and only then notifies the next one.
//!
//! By default control blocks (/N/, /G/, RREQ) ride between data blocks without link time, as
//! the baselines' ACKs, tokens and credits do. [`SimConfig::edm_control_bits`] charges one
//! control message per chunk to both of its ports (a write's /N/ travels on the sender's
//! uplink, each /G/ on its downlink: one of each per 64 B write), and
//! [`SimConfig::edm_charge_rreq`] charges a read's RREQ instead for its first chunk; the
//! scheduler then holds both ports for `l/B` plus that time.

use std::collections::VecDeque;

use edm_pim::{Config as PimConfig, LinkRate, Notification, Priority, Scheduler};

use crate::config::{EdmOrder, SimConfig};
use crate::event::EventQueue;
use crate::workload::{Kind, Message};
use crate::{RunResult, SimError};

/// Table 1 EDM write fabric latency for a 64 B message.
pub const TABLE1_WRITE_PS: u64 = 296_960;
/// Table 1 EDM read fabric latency for a 64 B message.
pub const TABLE1_READ_PS: u64 = 299_520;

/// Fixed latencies of the EDM stack derived from [`SimConfig`] and Table 1.
#[derive(Debug, Clone, Copy)]
struct Timing {
    notify: u64,
    grant_to_host: u64,
    deliver_write: u64,
    deliver_read: u64,
}

impl Timing {
    fn new(cfg: &SimConfig) -> Timing {
        let hop = cfg.hop_ps();
        let notify = hop + 3 * cfg.cycle_ps;
        // Remaining stack latency so that a lone 64 B message takes exactly the Table 1 time.
        let rest = |total: u64| total.saturating_sub(notify + 3 * hop + cfg.ser_ps(64));
        Timing {
            notify,
            grant_to_host: hop + 3 * cfg.cycle_ps,
            deliver_write: 3 * hop + rest(TABLE1_WRITE_PS),
            deliver_read: 3 * hop + rest(TABLE1_READ_PS),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// The application issues message `m`.
    Issue(u32),
    /// Message `m`'s notification reaches the scheduler.
    Notify(u32),
    /// The host of pair `idx` learns one notification retired.
    Retire(usize),
    /// A port release is due: rerun the scheduler.
    Wake,
    /// Hardware-timed mode: the next PIM iteration boundary.
    Tick,
}

/// Run EDM with `priority` over `msgs`.
pub fn run(cfg: &SimConfig, msgs: &[Message], priority: Priority) -> Result<RunResult, SimError> {
    let n = cfg.nodes;
    let timing = Timing::new(cfg);
    let mut pim_cfg = PimConfig::new(n)
        .with_priority(priority)
        .with_active_per_pair(cfg.active_per_pair);
    pim_cfg.chunk_bytes = cfg.chunk_bytes;
    pim_cfg.reserve = cfg.edm_reserve;
    pim_cfg.in_order = cfg.edm_order != EdmOrder::Off;
    // Ordering lanes per port pair: the writes and the reads sharing it (see `EdmOrder`).
    let lanes = if cfg.edm_order == EdmOrder::NodePair {
        2
    } else {
        1
    };
    // A destination queues X per source and lane (the writers' and the readers' hosts each
    // rate-limit their own notifications).
    pim_cfg.queue_capacity = pim_cfg.queue_capacity.saturating_mul(lanes as u32);
    pim_cfg.link = LinkRate {
        bytes: 1,
        time: cfg.ps_per_byte,
    };
    let mut sched = Scheduler::new(pim_cfg).map_err(|e| SimError::Internal(e.to_string()))?;
    let mut q = EventQueue::new();
    for m in msgs {
        q.push(m.arrival, Ev::Issue(m.id));
    }
    let mut res = RunResult::new(msgs.len());
    let lane = |m: &Message| match (lanes, m.kind) {
        (2, Kind::Read) => 1u8,
        _ => 0,
    };
    // Host-side X accounting per port pair and lane.
    let pair = |m: &Message| {
        (usize::from(m.data_dst()) * n + usize::from(m.data_src())) * lanes + usize::from(lane(m))
    };
    let mut active = vec![0u32; n * n * lanes];
    let mut held: Vec<VecDeque<u32>> = vec![VecDeque::new(); n * n * lanes];
    let mut wake_at: Option<u64> = None;
    let (mut iter_sum, mut sched_calls) = (0u64, 0u64);
    let slotted = cfg.pim_iteration_ps == 0 && cfg.slot_ps > 0;
    let tau = if slotted {
        cfg.slot_ps
    } else {
        cfg.pim_iteration_ps
    };
    let boundary = |t: u64| if tau == 0 { t } else { t.div_ceil(tau) * tau };
    let mut iteration_no = 0u32;
    let ctrl_ps = u64::from(cfg.edm_control_bits) * cfg.ps_per_byte / 8;
    let rreq_ps = if cfg.edm_charge_rreq {
        cfg.ser_ps(u64::from(cfg.rreq_bytes))
    } else {
        0
    };

    while let Some(t) = q.peek_time() {
        if t > cfg.time_limit_ps {
            return Err(SimError::TimeLimit {
                scheme: "edm",
                limit_ps: cfg.time_limit_ps,
            });
        }
        let mut dirty = false;
        // Apply every event of this instant, then schedule once (the hardware sees them together).
        while q.peek_time() == Some(t) {
            let (_, ev) = q.pop().expect("peeked");
            match ev {
                Ev::Issue(id) => {
                    let m = &msgs[id as usize];
                    let p = pair(m);
                    if active[p] < cfg.active_per_pair {
                        active[p] += 1;
                        q.push(t + timing.notify, Ev::Notify(id));
                    } else {
                        held[p].push_back(id);
                    }
                }
                Ev::Notify(id) => {
                    let m = &msgs[id as usize];
                    let note = Notification {
                        src: m.data_src(),
                        dst: m.data_dst(),
                        bytes: m.bytes,
                        id: u64::from(id),
                    };
                    sched
                        .notify_lane(t, note, lane(m))
                        .map_err(|e| SimError::Internal(format!("EDM notify refused: {e}")))?;
                    res.max_queue = res.max_queue.max(sched.queue_len(m.data_dst()));
                    dirty = true;
                }
                Ev::Retire(p) => {
                    active[p] -= 1;
                    if let Some(next) = held[p].pop_front() {
                        active[p] += 1;
                        q.push(t + timing.notify, Ev::Notify(next));
                    }
                }
                Ev::Wake | Ev::Tick => {
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
        let matches = if tau == 0 {
            let out = sched.schedule(t);
            if !out.matches.is_empty() {
                iter_sum += u64::from(out.iterations);
                sched_calls += 1;
            }
            out.matches
        } else if t % tau != 0 {
            // Hardware-timed: work waits for the next iteration boundary.
            let b = boundary(t);
            if wake_at.is_none_or(|w| b < w) {
                wake_at = Some(b);
                q.push(b, Ev::Tick);
            }
            continue;
        } else if slotted {
            let out = sched.schedule(t);
            if !out.matches.is_empty() {
                iter_sum += u64::from(out.iterations);
                sched_calls += 1;
            }
            out.matches
        } else {
            sched.release_expired(t);
            iteration_no = iteration_no.wrapping_add(1);
            let it = sched.iterate(t, iteration_no);
            if !it.matches.is_empty() {
                iter_sum += 1;
            }
            sched_calls += u64::from(!it.requests.is_empty());
            if !it.requests.is_empty() && sched.queued() > 0 && sched.has_eligible() {
                // More matching possible right away: iterate again next boundary.
                wake_at = Some(t + tau);
                q.push(t + tau, Ev::Tick);
            }
            it.matches
        };
        for mt in &matches {
            let m = &msgs[mt.id as usize];
            let lat = match m.kind {
                Kind::Write => timing.deliver_write,
                Kind::Read => timing.deliver_read,
            };
            // One control message per chunk on each of its links: a read's first grant is its
            // RREQ, every other chunk needs a /G/, and a write's /N/ rides with its first chunk.
            let control = match (m.kind, mt.offset) {
                (Kind::Read, 0) => rreq_ps,
                _ => ctrl_ps,
            };
            if control > 0 {
                sched.hold_until(mt.src, mt.dst, mt.release_at + control);
            }
            res.delivered[mt.id as usize] += u64::from(mt.len);
            res.sent_bytes += u64::from(mt.len);
            if mt.last {
                res.finish[mt.id as usize] = Some(t + lat + cfg.ser_ps(u64::from(mt.len)));
                q.push(t + timing.grant_to_host, Ev::Retire(pair(m)));
            }
        }
        if sched.queued() > 0 {
            if let Some(r) = sched.next_release() {
                let r = boundary(r);
                if r > t && wake_at.is_none_or(|w| r < w) {
                    wake_at = Some(r);
                    q.push(r, Ev::Wake);
                }
            }
        }
    }
    res.events = q.processed();
    // Instant mode: mean iterations per maximal matching. Timed mode: share of iterations that
    // matched something.
    res.pim_iterations = if sched_calls > 0 {
        iter_sum as f64 / sched_calls as f64
    } else {
        0.0
    };
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_messages_take_the_table1_latency() {
        let cfg = SimConfig {
            nodes: 3,
            ..SimConfig::default()
        };
        for (kind, want) in [(Kind::Write, TABLE1_WRITE_PS), (Kind::Read, TABLE1_READ_PS)] {
            let m = [Message {
                id: 0,
                kind,
                requester: 0,
                target: 2,
                bytes: 64,
                arrival: 1000,
            }];
            let r = run(&cfg, &m, Priority::Fcfs).unwrap();
            assert_eq!(r.finish[0], Some(1000 + want));
        }
    }
}
