//! Node-initiated migration, the controller's side (Clio §3.4.7: "a node under
//! memory pressure proactively migrates a rarely used region to a less loaded
//! node").
//!
//! Nodes report their pressure (heartbeats) and, per vRegion, the requests they
//! served (`Usage`, counted by the node's gate over the board ranges bound to
//! each region). The controller's state machine chooses ([`Message::PlanMove`]:
//! the most loaded node over the high mark, its least used single-copy region,
//! the least loaded node under the low mark). A [`Balancer`] runs beside the
//! controller and carries the plan out with the nodes, no client involved:
//!
//! 1. ask the source node for the region's chunks (`Chunks`: board ranges,
//!    their address space and the rack client it belongs to);
//! 2. join that address space on the source (`FindSpace`), and the same
//!    client's space on the target (joined, or created and `Register`ed: the
//!    client joins it when it follows the move);
//! 3. pause the region's chunks on the source (`Gate Paused`: writes answered
//!    `BUSY`, reads served; the node then refuses new chunks of the region
//!    `Busy`), list the chunks again until no new one slipped in;
//! 4. copy each chunk, `Bind` it on the target (`import`), fence the target;
//! 5. commit: `MoveRegion` at the controller (one logged change);
//! 6. gate the source `Moved` (clients learn the owner from the controller and
//!    the chunk table from the target) and free the source's chunks.
//!
//! Any failure before the commit rolls back: the source's gates reopen and the
//! copies are freed, so the region is where it was (a dead target is refused at
//! the commit, `NodeDead`). A lost answer to the commit is resolved by a
//! lookup. The balancer holds the sessions it created for clients on targets
//! until it stops (a share token lives as long as its session).

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio::backend::Transport;
use clio::{ClientConfig, Session};
use clio_control::{GateState, Message, MigrationKind, MoveOrder, NodeId, Replicas};

use crate::client::{
    chunk_list, copy_region, node_call, space_session, token_of, CopyEnd, CopyPolicy, Links,
    Migration, RackClientError, CHUNK,
};
use crate::config::RackConfig;
use crate::service::Client;

/// When the balancer acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalancerConfig {
    /// How often it asks the controller for a plan.
    pub period: Duration,
    /// A node above this pressure (used / total physical bytes, ppm) sheds a region.
    pub high_ppm: u32,
    /// Only a node below this pressure receives one.
    pub low_ppm: u32,
    /// How moves and re-replications copy while writes go on.
    pub copy: CopyPolicy,
}

impl Default for BalancerConfig {
    fn default() -> Self {
        BalancerConfig {
            period: Duration::from_millis(500),
            high_ppm: 800_000,
            low_ppm: 500_000,
            copy: CopyPolicy::default(),
        }
    }
}

/// What the balancer did so far.
#[derive(Debug, Clone, Default)]
pub struct BalancerStats {
    /// Plans asked for.
    pub plans: u64,
    /// Migrations committed.
    pub moved: Vec<Migration>,
    /// New backups made for replicated regions that lost a copy (`from` the
    /// primary, `to` the new backup).
    pub replicated: Vec<Migration>,
    /// Migrations and re-replications that failed and were rolled back (or
    /// found nothing to copy).
    pub rolled_back: u64,
    /// The last failure.
    pub last_error: Option<String>,
}

/// The migration executor beside the controller (see the module docs).
#[derive(Debug)]
pub struct Balancer {
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<BalancerStats>>,
    thread: Option<JoinHandle<()>>,
}

impl Balancer {
    /// Starts the balancer on its own thread: it reaches the controller at
    /// `controller` and the nodes of `rack` through `links` (sessions with `cfg`).
    pub fn start<T, L>(
        rack: &RackConfig,
        controller: SocketAddr,
        links: L,
        cfg: ClientConfig,
        config: BalancerConfig,
    ) -> io::Result<Balancer>
    where
        T: Transport + Send + 'static,
        L: Links<T> + 'static,
    {
        let mut mover = Mover {
            ctl: Client::connect(controller)?.with_key(rack.key),
            key: rack.key,
            links: Box::new(links),
            addrs: rack.nodes.iter().map(|n| (n.id, n.address)).collect(),
            cfg,
            kept: BTreeMap::new(),
            policy: config.copy,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(BalancerStats::default()));
        let (flag, st) = (Arc::clone(&stop), Arc::clone(&stats));
        let thread = std::thread::Builder::new()
            .name("clio-rack-balancer".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    // A region short of a copy comes first: it is one failure
                    // away from loss.
                    let replica = mover.ctl.call(Message::PlanReplica);
                    if let Ok(Message::ReplicaPlan(Some(plan))) = replica {
                        let r = mover.re_replicate(plan);
                        let mut s = st.lock().unwrap_or_else(|p| p.into_inner());
                        match r {
                            Ok(m) => s.replicated.push(m),
                            Err(e) => {
                                s.rolled_back += 1;
                                s.last_error = Some(e.to_string());
                            }
                        }
                    }
                    let plan = mover.ctl.call(Message::PlanMove {
                        high_ppm: config.high_ppm,
                        low_ppm: config.low_ppm,
                    });
                    st.lock().unwrap_or_else(|p| p.into_inner()).plans += 1;
                    let replicating = matches!(replica, Ok(Message::ReplicaPlan(Some(_))));
                    if let (false, Ok(Message::MovePlan(Some(order)))) = (replicating, plan) {
                        let r = mover.move_region(order);
                        let mut s = st.lock().unwrap_or_else(|p| p.into_inner());
                        match r {
                            Ok(m) => s.moved.push(m),
                            Err(e) => {
                                s.rolled_back += 1;
                                s.last_error = Some(e.to_string());
                            }
                        }
                    }
                    // Sleep out the period in short steps (stop stays prompt).
                    while !flag.load(Ordering::Relaxed) && started.elapsed() < config.period {
                        std::thread::sleep(Duration::from_millis(10).min(config.period));
                    }
                }
            })?;
        Ok(Balancer {
            stop,
            stats,
            thread: Some(thread),
        })
    }

    /// What it did so far.
    pub fn stats(&self) -> BalancerStats {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Stops it (after the migration in progress, if any).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.halt();
    }
}

struct Mover<T: Transport> {
    ctl: Client,
    /// The rack key (progress reports seal with it too).
    key: Option<clio_control::auth::RackKey>,
    links: Box<dyn Links<T>>,
    addrs: BTreeMap<NodeId, SocketAddr>,
    cfg: ClientConfig,
    /// Sessions created on targets for clients that had none there: (node, client).
    kept: BTreeMap<(NodeId, u64), Session<T>>,
    policy: CopyPolicy,
}

impl<T: Transport> Mover<T> {
    fn addr(&self, node: NodeId) -> Result<SocketAddr, RackClientError> {
        self.addrs
            .get(&node)
            .copied()
            .ok_or(RackClientError::UnknownNode { region: 0, node })
    }

    fn gate(
        &self,
        node: NodeId,
        region: u32,
        pid: u32,
        va: u64,
        state: GateState,
    ) -> Result<(), RackClientError> {
        let addr = self.addr(node)?;
        let m = Message::Gate {
            region,
            pid,
            va,
            len: CHUNK,
            state,
        };
        match node_call(&*self.links, node, addr, m)? {
            Message::Ack { .. } => Ok(()),
            other => Err(RackClientError::Gate {
                node,
                addr,
                source: io::Error::other(format!("unexpected answer {other:?}")),
            }),
        }
    }

    /// A session in rack client `client`'s address space on `node`: joined if
    /// it has one there, else created, registered and kept.
    fn space(&mut self, node: NodeId, client: u64) -> Result<Session<T>, RackClientError> {
        let addr = self.addr(node)?;
        let found = node_call(&*self.links, node, addr, Message::FindSpace { client })?;
        if let Message::SpaceOf {
            space: Some(sp), ..
        } = found
        {
            let c = ClientConfig {
                join: Some(token_of(sp)),
                ..self.cfg.clone()
            };
            return self
                .links
                .session(node, addr, c)
                .map_err(|source| RackClientError::Node { node, addr, source });
        }
        let s = space_session(&*self.links, node, addr, client, &self.cfg)?;
        let token = s
            .share()
            .map_err(|source| RackClientError::Node { node, addr, source })?;
        self.kept.insert((node, client), s);
        let c = ClientConfig {
            join: Some(token),
            ..self.cfg.clone()
        };
        self.links
            .session(node, addr, c)
            .map_err(|source| RackClientError::Node { node, addr, source })
    }

    fn move_region(&mut self, o: MoveOrder) -> Result<Migration, RackClientError> {
        let MoveOrder {
            region,
            from,
            from_epoch,
            to,
        } = o;
        let from_addr = self.addr(from)?;
        let to_addr = self.addr(to)?;
        let Some((client, pid, listed)) = chunk_list(&*self.links, from, from_addr, region)? else {
            return Err(RackClientError::Unallocated {
                va: u64::from(region) << clio_control::VREGION_SHIFT,
            });
        };
        let mut src = self.space(from, client)?;
        if src.pid() != Some(pid) {
            return Err(RackClientError::Gate {
                node: from,
                addr: from_addr,
                source: io::Error::other("the region's chunks are not in its client's space"),
            });
        }
        let mut dst = self.space(to, client)?;
        let dst_pid = dst.pid().unwrap_or(0);
        let ctl_addr = self.ctl_addr();
        let ctl_err = |source| RackClientError::Controller {
            addr: ctl_addr,
            source,
        };
        // Recorded at the controller (`clio rack status`); progress goes
        // through a socket of its own (the copy borrows `self`).
        let id = crate::client::begin_migration(
            |m| self.ctl.call(m).map_err(ctl_err),
            ctl_addr,
            region,
            (from, to),
            listed.len() as u64 * CHUNK,
            MigrationKind::Move,
        )?;
        let mut reporter = crate::service::Client::connect(ctl_addr)
            .ok()
            .map(|c| c.with_key(self.key));
        let started = Instant::now();
        let mut paused: BTreeMap<u64, u64> = BTreeMap::new();
        let mut copied = BTreeMap::new();
        let mut done = None;
        let res = (|| {
            done = Some(self.track_and_copy(
                region,
                (from, pid, &mut src),
                (to, dst_pid, &mut dst),
                &mut paused,
                &mut copied,
                &mut |copied_bytes| {
                    if let Some(r) = reporter.as_mut() {
                        r.attempts = 1;
                        let _ = r.call(Message::MigrationProgress { id, copied_bytes });
                    }
                },
            )?);
            dst.rfence().map_err(|source| RackClientError::Node {
                node: to,
                addr: to_addr,
                source,
            })?;
            self.ctl
                .call(Message::MoveRegion {
                    region,
                    from,
                    from_epoch,
                    to,
                })
                .map_err(|source| RackClientError::Controller {
                    addr: self.ctl_addr(),
                    source,
                })
        })();
        let switched = match res {
            Ok(Message::Owner(p)) if p.node == to => Ok(()),
            Ok(other) => Err(RackClientError::Controller {
                addr: self.ctl_addr(),
                source: io::Error::other(format!("MoveRegion answered {other:?}")),
            }),
            // A lost answer: the controller's map says what happened.
            Err(e @ RackClientError::Controller { .. }) => {
                match self.ctl.call(Message::Lookup { region }) {
                    Ok(Message::Owner(p)) if p.node == to => Ok(()),
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        let c = match (switched, done) {
            (Ok(()), Some(c)) => c,
            (res, _) => {
                for &nva in paused.values() {
                    let _ = self.gate(from, region, pid, nva, GateState::Open);
                }
                for &nva in copied.values() {
                    let _ = dst.rfree(nva, CHUNK);
                }
                // Best effort: a record left open closes `TimedOut`.
                let _ = self.ctl.call(Message::MigrationEnd {
                    id,
                    outcome: clio_control::MigrationOutcome::RolledBack,
                });
                return Err(res.err().unwrap_or(RackClientError::StillMoving { region }));
            }
        };
        // Best effort on a source that may die now: the switch is committed.
        let moved: Vec<u64> = paused
            .values()
            .copied()
            .filter(|&nva| self.gate(from, region, pid, nva, GateState::Moved).is_ok())
            .collect();
        let write_pause = c.paused_at.elapsed();
        for nva in moved {
            let _ = src.rfree(nva, CHUNK);
        }
        Ok(Migration {
            region,
            from,
            to,
            bytes: c.bytes,
            paused: write_pause,
            took: started.elapsed(),
            rounds: c.rounds,
        })
    }

    /// Re-replication: copies `plan.region` from its primary to the new backup
    /// under a pause of the primary's writes (reads go on), commits the backup
    /// at the controller (`AddBackup`), then gates the primary `Rejoin`: the
    /// region's client learns the backup at its next write and reopens the
    /// gates, writing to both copies from then on. Rolled back (gates reopened,
    /// copies freed) on any failure before the commit.
    fn re_replicate(&mut self, plan: Replicas) -> Result<Migration, RackClientError> {
        let Replicas {
            region,
            primary,
            primary_epoch,
            backup,
            ..
        } = plan;
        let paddr = self.addr(primary)?;
        let Some((client, pid, listed)) = chunk_list(&*self.links, primary, paddr, region)? else {
            return Err(RackClientError::Unallocated {
                va: u64::from(region) << clio_control::VREGION_SHIFT,
            });
        };
        let mut src = self.space(primary, client)?;
        let mut dst = self.space(backup, client)?;
        let dst_pid = dst.pid().unwrap_or(0);
        let ctl_addr = self.ctl_addr();
        // Recorded at the controller as a copy (`clio rack status`), ended
        // `Completed` by the `AddBackup` commit or `RolledBack` below.
        let id = crate::client::begin_migration(
            |m| {
                self.ctl
                    .call(m)
                    .map_err(|source| RackClientError::Controller {
                        addr: ctl_addr,
                        source,
                    })
            },
            ctl_addr,
            region,
            (primary, backup),
            listed.len() as u64 * CHUNK,
            MigrationKind::Copy,
        )?;
        let mut reporter = crate::service::Client::connect(ctl_addr)
            .ok()
            .map(|c| c.with_key(self.key));
        let started = Instant::now();
        let mut paused = BTreeMap::new();
        let mut copied = BTreeMap::new();
        let mut done = None;
        let res = (|| {
            done = Some(self.track_and_copy(
                region,
                (primary, pid, &mut src),
                (backup, dst_pid, &mut dst),
                &mut paused,
                &mut copied,
                &mut |copied_bytes| {
                    if let Some(r) = reporter.as_mut() {
                        r.attempts = 1;
                        let _ = r.call(Message::MigrationProgress { id, copied_bytes });
                    }
                },
            )?);
            dst.rfence()
                .map_err(|source| self.node_err(backup, source))?;
            self.ctl
                .call(Message::AddBackup {
                    region,
                    primary,
                    primary_epoch,
                    backup,
                })
                .map_err(|source| RackClientError::Controller {
                    addr: self.ctl_addr(),
                    source,
                })
        })();
        let committed = match res {
            Ok(Message::ReplicaState(r)) if r.backup == backup => Ok(()),
            Ok(other) => Err(RackClientError::Controller {
                addr: self.ctl_addr(),
                source: io::Error::other(format!("AddBackup answered {other:?}")),
            }),
            Err(e @ RackClientError::Controller { .. }) => {
                match self.ctl.call(Message::LookupReplicas { region }) {
                    Ok(Message::ReplicaState(r)) if r.backup == backup => Ok(()),
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        let c = match (committed, done) {
            (Ok(()), Some(c)) => c,
            (res, _) => {
                for &nva in paused.values() {
                    let _ = self.gate(primary, region, pid, nva, GateState::Open);
                }
                for &nva in copied.values() {
                    let _ = dst.rfree(nva, CHUNK);
                }
                // Best effort: a record left open closes `TimedOut`.
                let _ = self.ctl.call(Message::MigrationEnd {
                    id,
                    outcome: clio_control::MigrationOutcome::RolledBack,
                });
                return Err(res.err().unwrap_or(RackClientError::StillMoving { region }));
            }
        };
        for &nva in paused.values() {
            // Committed: a failure here leaves the gate paused (writes retry
            // BUSY); the client's next lookup finds the backup either way.
            let _ = self.gate(primary, region, pid, nva, GateState::Rejoin);
        }
        Ok(Migration {
            region,
            from: primary,
            to: backup,
            bytes: c.bytes,
            paused: c.paused_at.elapsed(),
            took: started.elapsed(),
            rounds: c.rounds,
        })
    }

    fn node_err(&self, node: NodeId, source: clio::ClioError) -> RackClientError {
        RackClientError::Node {
            node,
            addr: self.addr(node).unwrap_or_else(|_| ([0, 0, 0, 0], 0).into()),
            source,
        }
    }

    /// Copies `region`'s chunks from `from` to `to` as the balancer's
    /// [`CopyPolicy`] says (`copy_region`: tracked rounds, then a short
    /// pause), listing the source's chunks until no new one slipped in.
    /// Records what it gated and copied (for a rollback).
    fn track_and_copy(
        &self,
        region: u32,
        (from, pid, src): (NodeId, u32, &mut Session<T>),
        (to, dst_pid, dst): (NodeId, u32, &mut Session<T>),
        gated: &mut BTreeMap<u64, u64>,
        copied: &mut BTreeMap<u64, u64>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<crate::client::Copied, RackClientError> {
        let from_addr = self.addr(from)?;
        let to_addr = self.addr(to)?;
        let mut src_end = CopyEnd {
            node: from,
            addr: from_addr,
            pid,
            session: src,
        };
        let mut dst_end = CopyEnd {
            node: to,
            addr: to_addr,
            pid: dst_pid,
            session: dst,
        };
        copy_region(
            &*self.links,
            region,
            &|nva, state| self.gate(from, region, pid, nva, state),
            &mut || {
                Ok(chunk_list(&*self.links, from, from_addr, region)?
                    .map(|(_, _, c)| c)
                    .unwrap_or_default())
            },
            &mut src_end,
            &mut dst_end,
            self.policy,
            gated,
            copied,
            progress,
        )
    }

    fn ctl_addr(&self) -> SocketAddr {
        self.ctl.peer().unwrap_or_else(|_| ([0, 0, 0, 0], 0).into())
    }
}
