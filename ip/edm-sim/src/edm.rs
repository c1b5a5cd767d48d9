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

use edm_pim::{Config as PimConfig, LinkRate, Match, Notification, Priority, Scheduler};

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

/// How the scheduler is clocked (from [`SimConfig::pim_iteration_ps`] and `slot_ps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clocking {
    /// PIM runs to a maximal matching at every change, in zero time.
    Instant,
    /// PIM runs to a maximal matching at slot boundaries of this length.
    Slotted(u64),
    /// One PIM iteration per boundary of this length (hardware timing).
    Iterations(u64),
}

impl Clocking {
    fn new(cfg: &SimConfig) -> Clocking {
        if cfg.pim_iteration_ps > 0 {
            Clocking::Iterations(cfg.pim_iteration_ps)
        } else if cfg.slot_ps > 0 {
            Clocking::Slotted(cfg.slot_ps)
        } else {
            Clocking::Instant
        }
    }

    /// The boundary length (0 when instant).
    fn tau(self) -> u64 {
        match self {
            Clocking::Instant => 0,
            Clocking::Slotted(tau) | Clocking::Iterations(tau) => tau,
        }
    }

    /// The first boundary at or after `t`.
    fn boundary(self, t: u64) -> u64 {
        match self.tau() {
            0 => t,
            tau => t.div_ceil(tau) * tau,
        }
    }
}

/// The EDM fabric while it runs: the scheduler, the hosts' notification accounting and the
/// event queue. [`run`] applies each instant's events ([`Edm::apply`]), lets the scheduler
/// match ([`Edm::schedule`]), delivers the granted chunks ([`Edm::deliver`]) and sets the next
/// wake-up ([`Edm::arm_release`]).
struct Edm<'a> {
    cfg: &'a SimConfig,
    msgs: &'a [Message],
    timing: Timing,
    clocking: Clocking,
    sched: Scheduler,
    q: EventQueue<Ev>,
    res: RunResult,
    // Host side: ordering lanes per port pair (2 with `EdmOrder::NodePair`: writes and
    // reads), the notifications active per pair and lane, and those held back by X.
    lanes: usize,
    active: Vec<u32>,
    held: Vec<VecDeque<u32>>,
    // Scheduler clock: the pending wake-up (at most one queued) and the iteration number.
    wake_at: Option<u64>,
    iteration_no: u32,
    // Statistics: iterations summed over the scheduler calls that matched.
    iter_sum: u64,
    sched_calls: u64,
    // Link time charged per chunk for control blocks (see the module doc).
    ctrl_ps: u64,
    rreq_ps: u64,
}

impl<'a> Edm<'a> {
    fn new(
        cfg: &'a SimConfig,
        msgs: &'a [Message],
        priority: Priority,
    ) -> Result<Edm<'a>, SimError> {
        let n = cfg.nodes;
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
        let sched = Scheduler::new(pim_cfg).map_err(|e| SimError::Internal(e.to_string()))?;
        let mut q = EventQueue::new();
        for m in msgs {
            q.push(m.arrival, Ev::Issue(m.id));
        }
        Ok(Edm {
            cfg,
            msgs,
            timing: Timing::new(cfg),
            clocking: Clocking::new(cfg),
            sched,
            q,
            res: RunResult::new(msgs.len()),
            lanes,
            active: vec![0; n * n * lanes],
            held: vec![VecDeque::new(); n * n * lanes],
            wake_at: None,
            iteration_no: 0,
            iter_sum: 0,
            sched_calls: 0,
            ctrl_ps: u64::from(cfg.edm_control_bits) * cfg.ps_per_byte / 8,
            rreq_ps: if cfg.edm_charge_rreq {
                cfg.ser_ps(u64::from(cfg.rreq_bytes))
            } else {
                0
            },
        })
    }

    /// The ordering lane of message `m` within its port pair.
    fn lane(&self, m: &Message) -> u8 {
        match (self.lanes, m.kind) {
            (2, Kind::Read) => 1,
            _ => 0,
        }
    }

    /// Index of `m`'s port pair and lane in the host-side X accounting.
    fn pair(&self, m: &Message) -> usize {
        let n = self.cfg.nodes;
        (usize::from(m.data_dst()) * n + usize::from(m.data_src())) * self.lanes
            + usize::from(self.lane(m))
    }

    /// Apply one event at `t`; true if the scheduler has new work (a notification or a wake-up).
    fn apply(&mut self, t: u64, ev: Ev) -> Result<bool, SimError> {
        match ev {
            Ev::Issue(id) => {
                let p = self.pair(&self.msgs[id as usize]);
                if self.active[p] < self.cfg.active_per_pair {
                    self.active[p] += 1;
                    self.q.push(t + self.timing.notify, Ev::Notify(id));
                } else {
                    self.held[p].push_back(id);
                }
                Ok(false)
            }
            Ev::Notify(id) => {
                let m = &self.msgs[id as usize];
                let note = Notification {
                    src: m.data_src(),
                    dst: m.data_dst(),
                    bytes: m.bytes,
                    id: u64::from(id),
                };
                let lane = self.lane(m);
                self.sched
                    .notify_lane(t, note, lane)
                    .map_err(|e| SimError::Internal(format!("EDM notify refused: {e}")))?;
                self.res.max_queue = self.res.max_queue.max(self.sched.queue_len(m.data_dst()));
                Ok(true)
            }
            Ev::Retire(p) => {
                self.active[p] -= 1;
                if let Some(next) = self.held[p].pop_front() {
                    self.active[p] += 1;
                    self.q.push(t + self.timing.notify, Ev::Notify(next));
                }
                Ok(false)
            }
            Ev::Wake | Ev::Tick => {
                if self.wake_at == Some(t) {
                    self.wake_at = None;
                }
                Ok(true)
            }
        }
    }

    /// Let the scheduler match at `t`; `None` when, hardware-timed, `t` is between iteration
    /// boundaries (the work then waits for the next one).
    fn schedule(&mut self, t: u64) -> Option<Vec<Match>> {
        match self.clocking {
            Clocking::Iterations(tau) | Clocking::Slotted(tau) if t % tau != 0 => {
                let b = self.clocking.boundary(t);
                if self.wake_at.is_none_or(|w| b < w) {
                    self.wake_at = Some(b);
                    self.q.push(b, Ev::Tick);
                }
                None
            }
            Clocking::Instant | Clocking::Slotted(_) => {
                let out = self.sched.schedule(t);
                if !out.matches.is_empty() {
                    self.iter_sum += u64::from(out.iterations);
                    self.sched_calls += 1;
                }
                Some(out.matches)
            }
            Clocking::Iterations(tau) => {
                self.sched.release_expired(t);
                self.iteration_no = self.iteration_no.wrapping_add(1);
                let it = self.sched.iterate(t, self.iteration_no);
                if !it.matches.is_empty() {
                    self.iter_sum += 1;
                }
                self.sched_calls += u64::from(!it.requests.is_empty());
                if !it.requests.is_empty() && self.sched.queued() > 0 && self.sched.has_eligible() {
                    // More matching possible right away: iterate again next boundary.
                    self.wake_at = Some(t + tau);
                    self.q.push(t + tau, Ev::Tick);
                }
                Some(it.matches)
            }
        }
    }

    /// Deliver the chunks granted at `t`: charge control blocks, count bytes, finish messages
    /// and tell their hosts (after the grant's way back) that a notification retired.
    fn deliver(&mut self, t: u64, matches: &[Match]) {
        for mt in matches {
            let m = &self.msgs[mt.id as usize];
            let lat = match m.kind {
                Kind::Write => self.timing.deliver_write,
                Kind::Read => self.timing.deliver_read,
            };
            // One control message per chunk on each of its links: a read's first grant is its
            // RREQ, every other chunk needs a /G/, and a write's /N/ rides with its first chunk.
            let control = match (m.kind, mt.offset) {
                (Kind::Read, 0) => self.rreq_ps,
                _ => self.ctrl_ps,
            };
            if control > 0 {
                self.sched
                    .hold_until(mt.src, mt.dst, mt.release_at + control);
            }
            self.res.delivered[mt.id as usize] += u64::from(mt.len);
            self.res.sent_bytes += u64::from(mt.len);
            if mt.last {
                self.res.finish[mt.id as usize] =
                    Some(t + lat + self.cfg.ser_ps(u64::from(mt.len)));
                let p = self.pair(m);
                self.q.push(t + self.timing.grant_to_host, Ev::Retire(p));
            }
        }
    }

    /// With work queued, wake at the next port release (on a boundary) unless woken earlier.
    fn arm_release(&mut self, t: u64) {
        if self.sched.queued() == 0 {
            return;
        }
        if let Some(r) = self.sched.next_release() {
            let r = self.clocking.boundary(r);
            if r > t && self.wake_at.is_none_or(|w| r < w) {
                self.wake_at = Some(r);
                self.q.push(r, Ev::Wake);
            }
        }
    }

    fn finish(mut self) -> RunResult {
        self.res.events = self.q.processed();
        // Instant mode: mean iterations per maximal matching. Timed mode: share of iterations
        // that matched something.
        self.res.pim_iterations = if self.sched_calls > 0 {
            self.iter_sum as f64 / self.sched_calls as f64
        } else {
            0.0
        };
        self.res
    }
}

/// Run EDM with `priority` over `msgs`.
pub fn run(cfg: &SimConfig, msgs: &[Message], priority: Priority) -> Result<RunResult, SimError> {
    let mut edm = Edm::new(cfg, msgs, priority)?;
    while let Some(t) = edm.q.peek_time() {
        if t > cfg.time_limit_ps {
            return Err(SimError::TimeLimit {
                scheme: "edm",
                limit_ps: cfg.time_limit_ps,
            });
        }
        // Apply every event of this instant, then schedule once (the hardware sees them together).
        let mut dirty = false;
        while edm.q.peek_time() == Some(t) {
            let (_, ev) = edm.q.pop().expect("peeked");
            dirty |= edm.apply(t, ev)?;
        }
        if !dirty {
            continue;
        }
        let Some(matches) = edm.schedule(t) else {
            continue;
        };
        edm.deliver(t, &matches);
        edm.arm_release(t);
    }
    Ok(edm.finish())
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
