//! The scheduler state machine: notification queues, busy flags, and PIM iterations.

use std::collections::VecDeque;

use crate::config::{Arbitration, Config, Priority};
use crate::error::{ConfigError, NotifyError};
use crate::rng::XorShift64;

/// A switch port number (`0..ports`).
pub type Port = u16;

/// A demand notification: `src` wants to send `bytes` bytes to `dst` (EDM §3.1.1).
///
/// For a write this is the /N/ block; for a read it is the RREQ seen at the switch, with
/// `src` = memory node and `dst` = requester (the RRES direction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Notification {
    /// Sending port.
    pub src: Port,
    /// Receiving port.
    pub dst: Port,
    /// Message length in bytes (> 0).
    pub bytes: u64,
    /// Caller's message tag, returned in every [`Match`] of this message.
    pub id: u64,
}

/// Composite ordering key; the lowest key wins a request or grant decision.
///
/// `priority` is the policy value (arrival time for FCFS, remaining bytes for SRPT), `arrival`
/// the notification time passed to [`Scheduler::notify`], and `rank` the tie rank of the competing
/// port as seen by the deciding port (see [`Arbitration`]; under the default rotated encoder a
/// deciding port `q` ranks port `p` as `(p - q - 1) mod N`). The competing port is the source
/// when a destination picks among its queued messages, and the destination when a source picks
/// among requests. An RTL ordered list plus priority encoder reproduces the model exactly if it
/// compares these three fields as one unsigned number, most significant first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RankKey {
    /// Policy value (lower is more urgent).
    pub priority: u64,
    /// Notification arrival time.
    pub arrival: u64,
    /// Tie rank of the competing port.
    pub rank: u16,
}

/// Tie rank that deciding port `me` gives competing port `other` under `arb` (ports < `n`).
pub fn tie_rank(arb: Arbitration, n: usize, me: Port, other: Port) -> u16 {
    match arb {
        Arbitration::PriorityEncoder => {
            ((usize::from(other) + 2 * n - usize::from(me) - 1) % n) as u16
        }
        Arbitration::LowestPort | Arbitration::Random { .. } => other,
    }
}

/// A request issued in step 1 of an iteration: destination `dst` asks source `src` to be matched
/// for the message `id` (its highest-priority eligible message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Request {
    /// Destination port issuing the request.
    pub dst: Port,
    /// Source port receiving the request.
    pub src: Port,
    /// Message tag.
    pub id: u64,
    /// Key the destination ranked this message by.
    pub key: RankKey,
}

/// An accepted match: a grant allowing `src` to send `len` bytes of message `id` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Match {
    /// Source port (receives the /G/ grant).
    pub src: Port,
    /// Destination port.
    pub dst: Port,
    /// Message tag from the notification.
    pub id: u64,
    /// Byte offset of this chunk within the message.
    pub offset: u64,
    /// Chunk length `l = min(c, remaining)`.
    pub len: u32,
    /// True when this chunk completes the message (it left the queue).
    pub last: bool,
    /// Model time at which `src` and `dst` become free again (`now + l/B`).
    pub release_at: u64,
    /// 1-based PIM iteration (within its [`Scheduler::schedule`] call) that produced the match.
    pub iteration: u32,
}

/// Trace of one PIM iteration, for test benches that check the RTL cycle by cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Iteration {
    /// Requests from step 1, in ascending destination order.
    pub requests: Vec<Request>,
    /// Matches accepted in steps 2–3, in ascending source order.
    pub matches: Vec<Match>,
}

/// Result of running PIM to convergence (or the iteration cap).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    /// All matches, grouped by iteration, each iteration in ascending source order.
    pub matches: Vec<Match>,
    /// Iterations that issued at least one request. Each such iteration matches at least one
    /// pair; the final request step that finds nothing eligible is not counted (the hardware
    /// sees an empty request vector in its first cycle).
    pub iterations: u32,
    /// False only when the iteration cap stopped PIM while eligible messages remained.
    pub maximal: bool,
}

/// Number of ordering lanes per pair ([`Scheduler::notify_lane`]).
pub const MAX_LANES: u8 = 64;

/// Queued state of one message.
#[derive(Debug, Clone, Copy)]
struct Msg {
    id: u64,
    arrival: u64,
    total: u64,
    sent: u64,
    /// Ordering lane within the pair ([`Scheduler::notify_lane`]).
    lane: u8,
}

impl Msg {
    fn remaining(&self) -> u64 {
        self.total - self.sent
    }
}

/// Best candidate found so far in one arbitration decision.
#[derive(Debug, Clone, Copy)]
struct Pick {
    key: RankKey,
    other: Port,
    id: u64,
    ties: u32,
}

/// The priority iterative-PIM scheduler of one EDM switch.
///
/// Holds one notification queue per destination port (each pair's messages FIFO, at most `X` per
/// pair and `queue_capacity` per destination), a busy flag with release time per source side and
/// per destination side of every port, and the tie-break generator. All methods are
/// deterministic functions of the call sequence.
#[derive(Debug, Clone)]
pub struct Scheduler {
    cfg: Config,
    /// `pairs[dst * n + src]`: that pair's messages in arrival order.
    pairs: Vec<VecDeque<Msg>>,
    /// Per destination: sources with a non-empty pair queue, in first-activation order.
    active: Vec<Vec<Port>>,
    /// Per destination: number of queued messages.
    dst_len: Vec<u32>,
    /// Per port as a sender: `Some(release time)` while busy.
    src_busy: Vec<Option<u64>>,
    /// Per port as a receiver: `Some(release time)` while busy.
    dst_busy: Vec<Option<u64>>,
    /// Per source: best request received in the current iteration.
    grant_pick: Vec<Option<Pick>>,
    rng: XorShift64,
    queued: usize,
}

impl Scheduler {
    /// A scheduler with empty queues and all ports free.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.ports;
        let seed = match cfg.arbitration {
            Arbitration::Random { seed } => seed,
            Arbitration::PriorityEncoder | Arbitration::LowestPort => 0,
        };
        Ok(Scheduler {
            cfg,
            pairs: vec![VecDeque::new(); n * n],
            active: vec![Vec::new(); n],
            dst_len: vec![0; n],
            src_busy: vec![None; n],
            dst_busy: vec![None; n],
            grant_pick: vec![None; n],
            rng: XorShift64::new(seed),
            queued: 0,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.cfg.ports
    }

    /// Add a demand notification that arrived at time `now`. Refused (state unchanged) if a port
    /// is out of range, `src == dst`, `bytes == 0`, the pair has `X` active notifications, or the
    /// destination queue is full.
    pub fn notify(&mut self, now: u64, n: Notification) -> Result<(), NotifyError> {
        self.notify_lane(now, n, 0)
    }

    /// [`Scheduler::notify`] into ordering lane `lane` of the pair. With
    /// [`Config::in_order`], messages of one lane are granted in arrival order while SRPT
    /// orders the heads of different lanes like different pairs, and `X` applies per lane.
    /// A lane is one compute–memory node pair whose data takes this port pair: when every
    /// node is both a compute and a memory node, `s -> d` carries `s`'s writes to `d` and the
    /// read responses `d` asked `s` for, two pairs with no order between them (§3.1.1).
    /// Everything else (FCFS, the destination queue bound) ignores lanes.
    pub fn notify_lane(&mut self, now: u64, n: Notification, lane: u8) -> Result<(), NotifyError> {
        let ports = self.cfg.ports;
        if lane >= MAX_LANES {
            return Err(NotifyError::LaneOutOfRange {
                lane,
                max: MAX_LANES,
            });
        }
        if usize::from(n.src) >= ports {
            return Err(NotifyError::PortOutOfRange {
                field: "src",
                port: n.src,
                ports,
            });
        }
        if usize::from(n.dst) >= ports {
            return Err(NotifyError::PortOutOfRange {
                field: "dst",
                port: n.dst,
                ports,
            });
        }
        if n.src == n.dst {
            return Err(NotifyError::SelfLoop { port: n.src });
        }
        if n.bytes == 0 {
            return Err(NotifyError::ZeroLength {
                src: n.src,
                dst: n.dst,
            });
        }
        let (s, d) = (usize::from(n.src), usize::from(n.dst));
        let idx = d * ports + s;
        if self.lane_len(idx, lane) >= self.cfg.active_per_pair {
            return Err(NotifyError::PairFull {
                src: n.src,
                dst: n.dst,
                limit: self.cfg.active_per_pair,
            });
        }
        if self.dst_len[d] >= self.cfg.queue_capacity {
            return Err(NotifyError::QueueFull {
                dst: n.dst,
                capacity: self.cfg.queue_capacity,
            });
        }
        if self.pairs[idx].is_empty() {
            self.active[d].push(n.src);
        }
        let msg = Msg {
            id: n.id,
            arrival: now,
            total: n.bytes,
            sent: 0,
            lane,
        };
        let q = &mut self.pairs[idx];
        if self.cfg.in_order || self.cfg.priority == Priority::Fcfs {
            q.push_back(msg);
        } else {
            // Unordered SRPT: keep the pair sorted by remaining bytes (stable for ties), so a
            // shorter message may overtake, even preempt, a longer one of the same pair.
            let pos = q
                .iter()
                .position(|m| m.remaining() > msg.remaining())
                .unwrap_or(q.len());
            q.insert(pos, msg);
        }
        self.dst_len[d] += 1;
        self.queued += 1;
        Ok(())
    }

    /// Release ports whose busy time has elapsed (`release_at <= now`), then run PIM iterations
    /// until no new match forms (a maximal matching over free ports) or the iteration cap.
    pub fn schedule(&mut self, now: u64) -> Schedule {
        self.release_expired(now);
        let mut out = Schedule {
            matches: Vec::new(),
            iterations: 0,
            maximal: true,
        };
        loop {
            if let Some(cap) = self.cfg.max_iterations {
                if out.iterations >= cap {
                    out.maximal = !self.has_eligible();
                    break;
                }
            }
            let made = self.run_iteration(now, out.iterations + 1, None, &mut out.matches);
            if made == 0 {
                break;
            }
            out.iterations += 1;
        }
        out
    }

    /// Run exactly one PIM iteration (request, grant, accept) at time `now` without releasing
    /// any port first, and return its trace. `iteration` is stored in the matches.
    pub fn iterate(&mut self, now: u64, iteration: u32) -> Iteration {
        let mut it = Iteration::default();
        self.run_iteration(now, iteration, Some(&mut it.requests), &mut it.matches);
        it
    }

    /// Free every source and destination side whose release time is `<= now`. Returns how many
    /// port sides were freed.
    pub fn release_expired(&mut self, now: u64) -> usize {
        let mut freed = 0;
        for slot in self.src_busy.iter_mut().chain(self.dst_busy.iter_mut()) {
            if matches!(slot, Some(t) if *t <= now) {
                *slot = None;
                freed += 1;
            }
        }
        freed
    }

    /// Free the sending side of `port` now, regardless of its release time.
    pub fn release_src(&mut self, port: Port) {
        if let Some(slot) = self.src_busy.get_mut(usize::from(port)) {
            *slot = None;
        }
    }

    /// Free the receiving side of `port` now, regardless of its release time.
    pub fn release_dst(&mut self, port: Port) {
        if let Some(slot) = self.dst_busy.get_mut(usize::from(port)) {
            *slot = None;
        }
    }

    /// Set the release time of `src`'s sending side and `dst`'s receiving side to `until`
    /// (marking them busy if free). For callers whose transfer starts later than the grant, e.g.
    /// a grant delayed on a control link; out-of-range ports are ignored.
    pub fn hold_until(&mut self, src: Port, dst: Port, until: u64) {
        if let Some(slot) = self.src_busy.get_mut(usize::from(src)) {
            *slot = Some(until);
        }
        if let Some(slot) = self.dst_busy.get_mut(usize::from(dst)) {
            *slot = Some(until);
        }
    }

    /// Earliest pending release time of any busy port side, if any (for event-driven callers).
    pub fn next_release(&self) -> Option<u64> {
        self.src_busy
            .iter()
            .chain(self.dst_busy.iter())
            .filter_map(|t| *t)
            .min()
    }

    /// Release time of `port`'s sending side, `None` if free (or out of range).
    pub fn src_busy_until(&self, port: Port) -> Option<u64> {
        self.src_busy.get(usize::from(port)).copied().flatten()
    }

    /// Release time of `port`'s receiving side, `None` if free (or out of range).
    pub fn dst_busy_until(&self, port: Port) -> Option<u64> {
        self.dst_busy.get(usize::from(port)).copied().flatten()
    }

    /// Messages queued for destination `dst` (0 if out of range).
    pub fn queue_len(&self, dst: Port) -> u32 {
        self.dst_len.get(usize::from(dst)).copied().unwrap_or(0)
    }

    /// Messages queued for the pair `src -> dst`, all lanes (0 if out of range).
    pub fn pair_len(&self, src: Port, dst: Port) -> u32 {
        let n = self.cfg.ports;
        if usize::from(src) >= n || usize::from(dst) >= n {
            return 0;
        }
        self.pairs[usize::from(dst) * n + usize::from(src)].len() as u32
    }

    /// Whether another notification for `src -> dst` would be accepted now (lane 0).
    pub fn can_notify(&self, src: Port, dst: Port) -> bool {
        self.can_notify_lane(src, dst, 0)
    }

    /// Whether another notification for `src -> dst` in `lane` would be accepted now.
    pub fn can_notify_lane(&self, src: Port, dst: Port, lane: u8) -> bool {
        let n = self.cfg.ports;
        src != dst
            && usize::from(src) < n
            && usize::from(dst) < n
            && lane < MAX_LANES
            && self.lane_len(usize::from(dst) * n + usize::from(src), lane)
                < self.cfg.active_per_pair
            && self.queue_len(dst) < self.cfg.queue_capacity
    }

    /// Messages of `lane` queued in pair queue `idx`.
    fn lane_len(&self, idx: usize, lane: u8) -> u32 {
        self.pairs[idx].iter().filter(|m| m.lane == lane).count() as u32
    }

    /// Total messages queued in all notification queues.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Remaining (not yet granted) bytes of every queued message of `src -> dst`, in FIFO order.
    pub fn pair_remaining(&self, src: Port, dst: Port) -> Vec<(u64, u64)> {
        let n = self.cfg.ports;
        if usize::from(src) >= n || usize::from(dst) >= n {
            return Vec::new();
        }
        self.pairs[usize::from(dst) * n + usize::from(src)]
            .iter()
            .map(|m| (m.id, m.remaining()))
            .collect()
    }

    /// True if some queued message has both its source and destination sides free, i.e. the
    /// current busy set is not a maximal matching of the queued demand (with
    /// [`Config::reserve`], destinations holding out for a busy source do not count).
    pub fn has_eligible(&self) -> bool {
        let n = self.cfg.ports;
        (0..n).any(|d| {
            if self.dst_busy[d].is_some() {
                return false;
            }
            let prio = |s: Port| {
                let head = self.head(d * n + usize::from(s));
                self.key_of(head, d as Port, s).priority
            };
            let is_free = |s: &&Port| self.src_busy[usize::from(**s)].is_none();
            let Some(best_free) = self.active[d]
                .iter()
                .filter(is_free)
                .map(|&s| prio(s))
                .min()
            else {
                return false;
            };
            !self.cfg.reserve
                || !self.active[d]
                    .iter()
                    .any(|&s| !is_free(&&s) && prio(s) < best_free)
        })
    }

    /// Position in pair queue `idx` of the message the pair offers: the front, except under
    /// in-order SRPT with several lanes queued, where it is the lane head with the fewest
    /// remaining bytes (earliest arrival on ties).
    fn head_pos(&self, idx: usize) -> usize {
        let q = &self.pairs[idx];
        if !(self.cfg.in_order && self.cfg.priority == Priority::Srpt) {
            return 0;
        }
        let mut seen = 0u64; // lanes whose head was already considered
        let mut best: Option<(u64, u64, usize)> = None;
        for (i, m) in q.iter().enumerate() {
            let bit = 1u64 << m.lane;
            if seen & bit != 0 {
                continue;
            }
            seen |= bit;
            let key = (m.remaining(), m.arrival, i);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map_or(0, |b| b.2)
    }

    /// The message pair queue `idx` offers (see [`Scheduler::head_pos`]).
    fn head(&self, idx: usize) -> &Msg {
        &self.pairs[idx][self.head_pos(idx)]
    }

    /// Ordering key of message `m` in a decision by port `me` where port `other` competes.
    fn key_of(&self, m: &Msg, me: Port, other: Port) -> RankKey {
        let priority = match self.cfg.priority {
            Priority::Fcfs => m.arrival,
            Priority::Srpt => m.remaining(),
        };
        let rank = tie_rank(self.cfg.arbitration, self.cfg.ports, me, other);
        RankKey {
            priority,
            arrival: m.arrival,
            rank,
        }
    }

    /// Fold `cand` into `best` under the configured arbitration rule.
    fn consider(rng: &mut XorShift64, arb: Arbitration, best: &mut Option<Pick>, cand: Pick) {
        match best {
            None => *best = Some(cand),
            Some(b) => match arb {
                Arbitration::PriorityEncoder | Arbitration::LowestPort => {
                    if cand.key < b.key {
                        *best = Some(cand);
                    }
                }
                Arbitration::Random { .. } => {
                    if cand.key.priority < b.key.priority {
                        *best = Some(cand);
                    } else if cand.key.priority == b.key.priority {
                        // Reservoir sampling: each tied candidate wins with probability 1/ties.
                        let ties = b.ties + 1;
                        if rng.below(ties) == 0 {
                            *best = Some(Pick { ties, ..cand });
                        } else {
                            b.ties = ties;
                        }
                    }
                }
            },
        }
    }

    /// One request/grant/accept round; appends matches to `out` and returns how many it made.
    fn run_iteration(
        &mut self,
        now: u64,
        iteration: u32,
        mut trace: Option<&mut Vec<Request>>,
        out: &mut Vec<Match>,
    ) -> usize {
        let n = self.cfg.ports;
        let arb = self.cfg.arbitration;
        self.grant_pick.iter_mut().for_each(|p| *p = None);
        let mut any_request = false;

        // Step 1 (request): every free destination picks its best eligible head message.
        for d in 0..n {
            if self.dst_busy[d].is_some() {
                continue;
            }
            let mut best: Option<Pick> = None;
            let mut best_busy: Option<RankKey> = None;
            for &s in &self.active[d] {
                if self.src_busy[usize::from(s)].is_some() {
                    if self.cfg.reserve {
                        let head = self.head(d * n + usize::from(s));
                        let k = self.key_of(head, d as Port, s);
                        best_busy = Some(best_busy.map_or(k, |b| b.min(k)));
                    }
                    continue;
                }
                let head = self.head(d * n + usize::from(s));
                let cand = Pick {
                    key: self.key_of(head, d as Port, s),
                    other: s,
                    id: head.id,
                    ties: 1,
                };
                Self::consider(&mut self.rng, arb, &mut best, cand);
            }
            let Some(req) = best else { continue };
            if best_busy.is_some_and(|b| b.priority < req.key.priority) {
                continue; // Reserved for a higher-priority message whose source is busy.
            }
            any_request = true;
            let (s, dst) = (req.other, d as Port);
            if let Some(t) = trace.as_deref_mut() {
                t.push(Request {
                    dst,
                    src: s,
                    id: req.id,
                    key: req.key,
                });
            }
            // Step 2 (grant): the source keeps its best request, re-ranked from its own view.
            let rank = tie_rank(arb, n, s, dst);
            let cand = Pick {
                key: RankKey { rank, ..req.key },
                other: dst,
                id: req.id,
                ties: 1,
            };
            let mut slot = self.grant_pick[usize::from(s)];
            Self::consider(&mut self.rng, arb, &mut slot, cand);
            self.grant_pick[usize::from(s)] = slot;
        }
        if !any_request {
            return 0;
        }

        // Step 3 (accept): granted pairs transfer one chunk and become busy.
        let mut made = 0;
        for s in 0..n {
            let Some(pick) = self.grant_pick[s] else {
                continue;
            };
            let d = usize::from(pick.other);
            let idx = d * n + s;
            let chunk = u64::from(self.cfg.chunk_bytes);
            let pos = self.head_pos(idx);
            let msg = &mut self.pairs[idx][pos];
            let len = chunk.min(msg.remaining());
            let offset = msg.sent;
            msg.sent += len;
            let last = msg.remaining() == 0;
            let id = msg.id;
            if last {
                self.pairs[idx].remove(pos);
                self.dst_len[d] -= 1;
                self.queued -= 1;
                if self.pairs[idx].is_empty() {
                    let pos = self.active[d]
                        .iter()
                        .position(|&x| usize::from(x) == s)
                        .expect("empty pair was active");
                    // Order-preserving removal keeps iteration order a pure function of history.
                    self.active[d].remove(pos);
                }
            }
            let release_at = now + self.cfg.link.busy_time(len);
            self.src_busy[s] = Some(release_at);
            self.dst_busy[d] = Some(release_at);
            out.push(Match {
                src: s as Port,
                dst: d as Port,
                id,
                offset,
                len: len as u32,
                last,
                release_at,
                iteration,
            });
            made += 1;
        }
        made
    }
}
