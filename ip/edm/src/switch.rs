//! EDM switch network stack (EDM §3.1, §3.2.2): per-port RX classification, the
//! notification path into the priority-PIM scheduler (the `edm-pim` crate, one iteration
//! per 3 cycles), grant generation (/G/, or the buffered RREQ as the implicit grant of its
//! RRES), and virtual-circuit forwarding of WREQ/RRES chunks with a fixed latency.

use std::collections::{BTreeMap, HashMap, VecDeque};

use clio_wire::edm::{message_blocks, Block66, BlockClass, GrantRepr, MsgKind, ADDR_BYTES};
use edm_pim::{Config as PimConfig, LinkRate, Notification, Priority, Scheduler};

use crate::assemble::{Assembler, MemEvent};
use crate::forward::{Circuit, Forwarder};
use crate::phy::{MemBlock, MemUnit, RxDemux, TxMux, TxPolicy};
use crate::timing::Latency;

/// Switch parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchConfig {
    /// Number of ports `N`.
    pub ports: usize,
    /// Chunk size `c` in bytes.
    pub chunk_bytes: u16,
    /// Active notifications per pair `X` (queues hold `X·N`).
    pub active_per_pair: u32,
    /// FCFS or SRPT.
    pub priority: Priority,
    /// TX arbitration between memory and frame blocks on each port.
    pub policy: TxPolicy,
    /// Pipeline latencies.
    pub lat: Latency,
    /// Extra cycles a destination stays busy after a chunk's own blocks, leaving room on its
    /// downlink for the /G/ and forwarded RREQ blocks that port receives as a sender.
    pub release_slack: u64,
    /// Scheduler clock cycles per PHY cycle (1: the FPGA prototype, where the scheduler runs
    /// on the 390.625 MHz PHY clock). The notification-queue insert (`sw_queue_insert`) and
    /// the PIM iteration (`sw_pim_iteration`) count scheduler cycles; everything else counts
    /// PHY cycles, and grants leave on the next PHY cycle boundary. EDM §3.1.3 / §4.1: the
    /// ASIC scheduler runs at 3 GHz, 7.68 cycles per 2.56 ns PHY cycle.
    pub sched_clock: u32,
    /// Egress order between a due forwarded message and the switch's own /G/ or re-emitted
    /// RREQ: false (default) forwards first, true sends the grant first (between forwarded
    /// messages, never inside one), so a grant's wire time stays the fixed `T` of EDM
    /// §3.1.1 step 7 instead of waiting behind the port's incoming chunks.
    pub grants_first: bool,
}

impl SwitchConfig {
    /// Paper defaults for `ports` ports: c = 256 B, X = 3, FCFS, fair TX, slack 2.
    pub fn new(ports: usize) -> Self {
        SwitchConfig {
            ports,
            chunk_bytes: 256,
            active_per_pair: 3,
            priority: Priority::Fcfs,
            policy: TxPolicy::Fair,
            lat: Latency::PAPER,
            release_slack: 2,
            sched_clock: 1,
            grants_first: false,
        }
    }

    /// The port timing of EDM §3.1.1 step 7 taken literally: ports are released exactly one
    /// chunk wire time (`l/B`) after their grant (no `release_slack`), and the switch sends its
    /// /G/ or implicit-grant RREQ ahead of a due forwarded message (`grants_first`), so the
    /// grant's transmission time `T` is the same for every grant. Not the default, which keeps
    /// the cycle behaviour the RTL switch benches were built against.
    pub fn paper_timing(mut self) -> Self {
        self.release_slack = 0;
        self.grants_first = true;
        self
    }
}

/// What the switch's scheduler did, for latency breakdowns (recorded while
/// [`Switch::log`] is `Some`). Times are in scheduler cycles (`sched_clock` per PHY cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedEvent {
    /// Scheduler cycle: when the notification became visible to PIM, or when the granting
    /// iteration started.
    pub at: u64,
    /// True for a grant, false for a notification.
    pub grant: bool,
    /// Sending port of the scheduled message.
    pub src: u16,
    /// Receiving port.
    pub dst: u16,
    /// Scheduled message kind ([`MsgKind::Wreq`] or [`MsgKind::Rres`]).
    pub kind: MsgKind,
    /// The sender's message id.
    pub id: u8,
}

/// Error and activity counters of the switch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchCounters {
    /// Notifications (explicit or implicit) the scheduler refused (bad port, X exceeded, ...).
    pub notify_refused: u64,
    /// /G/ blocks received from hosts (hosts never send grants; dropped).
    pub unexpected: u64,
    /// Grants issued (including implicit RREQ grants).
    pub grants: u64,
    /// PIM iterations run.
    pub iterations: u64,
}

#[derive(Debug, Clone)]
struct Pending {
    kind: MsgKind,
    id: u8,
    rreq: Option<Vec<Block66>>,
}

#[derive(Debug, Clone)]
struct Port {
    rx: RxDemux,
    asm: Assembler,
    tx: TxMux,
    ip_tx: VecDeque<Block66>,
    ip_rx: Vec<Block66>,
}

#[derive(Debug, Clone)]
enum Action {
    /// A notification into the scheduler, with the ingress port it arrived on.
    Notify(Notification, u16),
    Emit(u16, Vec<Block66>),
    ReleaseSrc(u16),
    ReleaseDst(u16),
}

/// Length of one run of back-to-back PIM iterations, for the iterations-per-matching statistic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchingRun {
    /// Cycle the run started.
    pub start: u64,
    /// Iterations that made at least one match.
    pub iterations: u32,
}

/// The switch: `N` ports around one scheduler.
#[derive(Debug, Clone)]
pub struct Switch {
    cfg: SwitchConfig,
    sched: Scheduler,
    ports: Vec<Port>,
    fwd: Forwarder,
    pending: HashMap<u64, Pending>,
    next_tag: u64,
    actions: BTreeMap<(u64, u64), Action>,
    seq: u64,
    iter_free_at: u64,
    run: Option<MatchingRun>,
    /// Finished runs of iterations (each ends when an iteration finds nothing to match).
    pub runs: Vec<MatchingRun>,
    /// Scheduler event log; `None` (the default) records nothing.
    pub log: Option<Vec<SchedEvent>>,
    /// Counters.
    pub counters: SwitchCounters,
}

impl Switch {
    /// A switch; fails if the scheduler configuration is invalid (message names the field).
    pub fn new(cfg: SwitchConfig) -> Result<Self, edm_pim::ConfigError> {
        if cfg.sched_clock == 0 {
            return Err(edm_pim::ConfigError::Zero {
                field: "sched_clock",
            });
        }
        // A pair s->d queues s's own writes to d and the responses to d's reads from s, each
        // limited to X by its sender, so the scheduler's per-pair bound is 2X (queues 2X·N).
        let mut pc = PimConfig::new(cfg.ports)
            .with_priority(cfg.priority)
            .with_active_per_pair(2 * cfg.active_per_pair);
        pc.chunk_bytes = cfg.chunk_bytes as u32;
        // Ports are released explicitly after each chunk's wire time (see `release_slack`).
        pc.link = LinkRate {
            bytes: 8,
            time: cfg.sched_clock as u64,
        };
        let sched = Scheduler::new(pc)?;
        let port = Port {
            rx: RxDemux::new(),
            asm: Assembler::new(),
            tx: TxMux::new(cfg.policy),
            ip_tx: VecDeque::new(),
            ip_rx: Vec::new(),
        };
        Ok(Switch {
            ports: vec![port; cfg.ports],
            fwd: Forwarder::new(cfg.ports, cfg.lat.sw_forward),
            sched,
            pending: HashMap::new(),
            next_tag: 0,
            actions: BTreeMap::new(),
            seq: 0,
            iter_free_at: 0,
            run: None,
            runs: Vec::new(),
            log: None,
            counters: SwitchCounters::default(),
            cfg,
        })
    }

    /// Configuration.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Forwarding counters (chunks forwarded, chunks without a circuit).
    pub fn forward_counters(&self) -> crate::forward::ForwardCounters {
        self.fwd.counters
    }

    /// The scheduler (read-only).
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// Queue frame blocks for transmission on `port` (the switch's own L2 side).
    pub fn send_frame(&mut self, port: usize, blocks: &[Block66]) {
        self.ports[port].ip_tx.extend(blocks.iter().copied());
    }

    /// Decoder-side blocks received on `port` (idles left out).
    pub fn frames_received(&self, port: usize) -> &[Block66] {
        &self.ports[port].ip_rx
    }

    /// RX shim counters of `port`.
    pub fn rx_counters(&self, port: usize) -> crate::phy::RxCounters {
        self.ports[port].rx.counters
    }

    /// True when nothing is queued, scheduled or in flight inside the switch.
    pub fn is_quiet(&self) -> bool {
        self.pending.is_empty()
            && self.actions.is_empty()
            && self.fwd.is_empty()
            && self
                .ports
                .iter()
                .all(|p| p.tx.is_quiet() && p.ip_tx.is_empty() && p.rx.buffered() == 0)
    }

    fn schedule(&mut self, at: u64, a: Action) {
        self.seq += 1;
        self.actions.insert((at, self.seq), a);
    }

    /// Advance one cycle: `rx[p]` is the block received on port `p`; returns the block sent on each port.
    pub fn tick(&mut self, now: u64, rx: &[Block66]) -> Vec<Block66> {
        for (p, &b) in rx.iter().enumerate().take(self.cfg.ports) {
            let (mem, dec) = self.ports[p].rx.tick(b);
            if !matches!(dec.class(), BlockClass::Idle) {
                self.ports[p].ip_rx.push(dec);
            }
            if let Some(m) = mem {
                self.on_mem_block(now, p as u16, m);
            }
        }
        // The scheduler runs `sched_clock` cycles per PHY cycle; actions are keyed in its cycles.
        let k = u64::from(self.cfg.sched_clock);
        for j in 0..k {
            let t = now * k + j;
            self.run_actions(t);
            self.pim(t);
        }
        let mut out = Vec::with_capacity(self.cfg.ports);
        for (d, port) in self.ports.iter_mut().enumerate() {
            out.push(port_tx(
                port,
                &mut self.fwd,
                d as u16,
                now,
                self.cfg.grants_first,
            ));
        }
        out
    }

    fn run_actions(&mut self, now: u64) {
        while let Some((&(at, s), a)) = self.actions.first_key_value() {
            if at > now {
                break;
            }
            if matches!(a, Action::Notify(..)) {
                // The scheduler takes one notification per ingress port per cycle, the lower
                // port first into a pair's queue (an RREQ is notified as of its head though
                // parsed at its tail, so arrival order is not the order of scheduling).
                let mut lanes: Vec<(u16, u64)> = self
                    .actions
                    .range((at, 0)..(at + 1, 0))
                    .filter_map(|(&(_, s), a)| match a {
                        Action::Notify(_, lane) => Some((*lane, s)),
                        _ => None,
                    })
                    .collect();
                lanes.sort_unstable();
                for (_, s) in lanes {
                    if let Some(Action::Notify(n, _)) = self.actions.remove(&(at, s)) {
                        self.notify(at, n);
                    }
                }
                continue;
            }
            match self.actions.remove(&(at, s)).expect("key just seen") {
                Action::Notify(n, _) => self.notify(at, n),
                Action::Emit(p, blocks) => {
                    self.ports[p as usize].tx.push_memory(MemUnit { blocks })
                }
                Action::ReleaseSrc(p) => self.sched.release_src(p),
                Action::ReleaseDst(p) => self.sched.release_dst(p),
            }
        }
    }

    /// One scheduler cycle `now` (in scheduler cycles): start a PIM iteration if the previous
    /// one has finished and some queued message has both ports free.
    fn pim(&mut self, now: u64) {
        if now < self.iter_free_at {
            return;
        }
        if !self.sched.has_eligible() {
            if let Some(r) = self.run.take() {
                self.runs.push(r);
            }
            return;
        }
        let run = self.run.get_or_insert(MatchingRun {
            start: now,
            iterations: 0,
        });
        run.iterations += 1;
        let k = run.iterations;
        self.counters.iterations += 1;
        let it = self.sched.iterate(now, k);
        let lat = self.cfg.lat;
        let granted = now + lat.sw_pim_iteration;
        self.iter_free_at = granted;
        for m in it.matches {
            let Some(p) = self.pending.get_mut(&m.id) else {
                continue;
            };
            let (kind, id) = (p.kind, p.id);
            let first_rres = p.rreq.take();
            if m.last {
                self.pending.remove(&m.id);
            }
            let len = m.len as u16;
            if let Some(log) = self.log.as_mut() {
                log.push(SchedEvent {
                    at: now,
                    grant: true,
                    src: m.src,
                    dst: m.dst,
                    kind,
                    id,
                });
            }
            // The /G/ (or RREQ) is built on the PHY clock from the next PHY cycle boundary.
            let k = u64::from(self.cfg.sched_clock);
            let emit_at = (granted.div_ceil(k) + lat.sw_grant_gen) * k;
            let unit = match first_rres {
                Some(rreq) => rreq,
                None => vec![GrantRepr {
                    peer: m.dst,
                    id,
                    len,
                    kind,
                }
                .emit()],
            };
            self.fwd.grant(
                m.src,
                Circuit {
                    kind,
                    id,
                    dst: m.dst,
                    len,
                },
            );
            self.counters.grants += 1;
            self.schedule(emit_at, Action::Emit(m.src, unit));
            let body = if kind == MsgKind::Wreq {
                ADDR_BYTES + len as usize
            } else {
                len as usize
            };
            // EDM §3.1.1 step 7: the next grant for these ports may be issued once the chunk's
            // wire time has passed since this one. An iteration takes `sw_pim_iteration`
            // cycles, so the ports become eligible that much earlier.
            let wire = message_blocks(body) as u64 * k;
            let free = granted + wire - wire.min(lat.sw_pim_iteration);
            self.schedule(free, Action::ReleaseSrc(m.src));
            self.schedule(free + self.cfg.release_slack * k, Action::ReleaseDst(m.dst));
        }
    }

    fn on_mem_block(&mut self, now: u64, p: u16, m: MemBlock) {
        let lat = self.cfg.lat;
        let Some(m) = self.fwd.ingress(now, p, m) else {
            return;
        };
        let port = &mut self.ports[p as usize];
        let Some(ev) = port.asm.push(now, m) else {
            return;
        };
        // Classification on the PHY clock, then the ordered-list insert on the scheduler's.
        let k = u64::from(self.cfg.sched_clock);
        let visible = |t: u64| (t + lat.sw_classify) * k + lat.sw_queue_insert;
        match ev {
            MemEvent::Notify(n, at) => {
                let tag = self.tag(Pending {
                    kind: MsgKind::Wreq,
                    id: n.id,
                    rreq: None,
                });
                self.schedule(
                    visible(at),
                    Action::Notify(
                        Notification {
                            src: p,
                            dst: n.peer,
                            bytes: n.size as u64,
                            id: tag,
                        },
                        p,
                    ),
                );
            }
            MemEvent::Grant(..) => self.counters.unexpected += 1,
            MemEvent::Message(msg) => {
                let h = msg.header;
                if !matches!(h.kind, MsgKind::Rreq | MsgKind::Rmwreq) {
                    return;
                }
                // Rewrite the peer from the memory node to the requester and keep the blocks:
                // they go out as the implicit grant of the response.
                let mut rh = h;
                rh.peer = p;
                let blocks =
                    crate::assemble::encode(&rh, &msg.body).expect("re-encode a parsed request");
                let tag = self.tag(Pending {
                    kind: MsgKind::Rres,
                    id: h.id,
                    rreq: Some(blocks),
                });
                let at = visible(msg.head).max(now * k);
                self.schedule(
                    at,
                    Action::Notify(
                        Notification {
                            src: h.peer,
                            dst: p,
                            bytes: h.len as u64,
                            id: tag,
                        },
                        p,
                    ),
                );
            }
        }
    }

    fn notify(&mut self, at: u64, n: Notification) {
        if self.sched.notify(at, n).is_err() {
            self.counters.notify_refused += 1;
            self.pending.remove(&n.id);
        } else if let (Some(log), Some(p)) = (self.log.as_mut(), self.pending.get(&n.id)) {
            log.push(SchedEvent {
                at,
                grant: false,
                src: n.src,
                dst: n.dst,
                kind: p.kind,
                id: p.id,
            });
        }
    }

    fn tag(&mut self, p: Pending) -> u64 {
        let t = self.next_tag;
        self.next_tag += 1;
        self.pending.insert(t, p);
        t
    }
}

/// Egress: forwarded circuit data first (fixed latency, never delayed by new work), then the
/// port's memory units and frame blocks through its TX shim.
fn port_tx(port: &mut Port, fwd: &mut Forwarder, d: u16, now: u64, grants_first: bool) -> Block66 {
    let out = if grants_first && port.tx.memory_backlog() > 0 && !fwd.mid_message(d) {
        port.tx.tick().0
    } else {
        match fwd.egress(now, d, port.tx.mid_unit()) {
            Some(b) => {
                port.tx.line_taken();
                b
            }
            None => port.tx.tick().0,
        }
    };
    // The MAC's block enters the shim after its registered output took this cycle's block
    // (a frame block leaves a cycle after it is handed over, as in the RTL).
    if port.tx.encoder_ready() {
        if let Some(b) = port.ip_tx.pop_front() {
            let _ = port.tx.push_encoder(b);
        } else if port.tx.is_idle() {
            let _ = port.tx.push_encoder(Block66::IDLE);
        }
    }
    out
}
