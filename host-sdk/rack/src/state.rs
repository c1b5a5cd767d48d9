//! The controller as a pure state machine: no I/O, no clock of its own.
//!
//! Durable state changes only through [`Event`]s: [`Controller::handle`] decides a
//! request's answer and the events that make it true; the caller makes them durable
//! (the log) and then [`Controller::apply`]s them. Recovery applies the same events
//! from the log, so a restarted controller is the same state machine. Liveness (when
//! a node was last heard, its pressure) is volatile and kept here directly.

use std::collections::{BTreeMap, VecDeque};

use clio_control::{
    ErrorCode, Field, Message, MigrationInfo, MigrationKind, MigrationOutcome, MoveOrder, NodeId,
    Placement, Pressure, Replicas, MAX_MIGRATION_LIST, REGION_COUNT, VREGION_BYTES,
};
use serde::{Deserialize, Serialize};

use crate::config::RackConfig;

/// One durable change. Nodes are recorded by name, so reordering the rack file
/// (which renumbers node ids) keeps the map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// `node` registered with a new `epoch` (its earlier epochs are fenced from now on).
    Registered {
        /// Node name.
        node: String,
        /// The new epoch.
        epoch: u32,
        /// The board's boot epoch it said hello with.
        boot_epoch: u32,
    },
    /// `node` was declared dead; its epoch moved to `epoch`, which no incarnation holds,
    /// so everything the old incarnation sends is stale.
    Dead {
        /// Node name.
        node: String,
        /// The fence epoch.
        epoch: u32,
    },
    /// `region` is owned by `node`.
    Assigned {
        /// vRegion index.
        region: u32,
        /// Node name.
        node: String,
    },
    /// `region` changed owner to `node` (a migration's commit point).
    Moved {
        /// vRegion index.
        region: u32,
        /// New owner's name.
        node: String,
    },
    /// `region` has no owner any more.
    Released {
        /// vRegion index.
        region: u32,
    },
    /// `region` (owned already) is replicated: `node` holds its backup copy.
    Replicated {
        /// vRegion index.
        region: u32,
        /// Backup node's name.
        node: String,
    },
    /// The primary of `region` is gone: its backup becomes the owner (and the
    /// region has no backup any more).
    Promoted {
        /// vRegion index.
        region: u32,
    },
    /// The backup of `region` is gone: the region has one copy from now on.
    Unreplicated {
        /// vRegion index.
        region: u32,
    },
    /// A migration of `region` from `from` to `to` began (`clio rack status`).
    MigrationStarted(MigrationStart),
    /// Migration `id` ended (`Completed` in the same change as its `Moved`,
    /// or a copy's in the same change as its `Replicated`).
    MigrationEnded {
        /// Its id.
        id: u32,
        /// How.
        outcome: MigrationOutcome,
        /// When (Unix ms).
        at_unix_ms: u64,
    },
    /// A re-replication of `region` from its owner `from` to the new backup
    /// `to` began: recorded as a migration of kind `Copy`. (A variant of its
    /// own, appended, so logs written before it still read; same fields as
    /// `MigrationStarted`, and the same encoding as a struct variant had.)
    CopyStarted(MigrationStart),
}

/// The start of a migration or a copy (`Event::MigrationStarted`,
/// `Event::CopyStarted`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationStart {
    /// The controller's id for it (copies share the numbering).
    pub id: u32,
    /// vRegion index.
    pub region: u32,
    /// Giver's name (a copy's: the owner it is copied from).
    pub from: String,
    /// Taker's name (a copy's: the new backup).
    pub to: String,
    /// Bytes to copy.
    pub total_bytes: u64,
    /// When (Unix ms, the controller's clock).
    pub at_unix_ms: u64,
}

/// An event that cannot apply to the current state (a log written against another
/// rack file, or a bug); nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// The event names a node the rack file does not list.
    #[error("node '{0}' is not in the rack file")]
    UnknownNode(String),
    /// The region is already owned.
    #[error("region {region} is already owned by node '{owner}'")]
    AlreadyAssigned {
        /// vRegion index.
        region: u32,
        /// Current owner's name.
        owner: String,
    },
    /// The region has no owner to release.
    #[error("region {0} is not assigned")]
    NotAssigned(u32),
    /// A backup event for a region that has no backup, or a backup on its own
    /// primary or a second one.
    #[error("region {0}: backup event does not fit its replicas")]
    Backup(u32),
    /// The region index is out of range.
    #[error("region {0} is out of range (max {max})", max = REGION_COUNT - 1)]
    RegionOutOfRange(u32),
    /// A migration event that does not fit the open migrations (an id
    /// reused, or the end of one that is not open).
    #[error("migration {0}: event does not fit the open migrations")]
    Migration(u32),
    /// Epochs only grow.
    #[error("node '{node}': epoch {epoch} does not follow {current}")]
    EpochNotNewer {
        /// Node name.
        node: String,
        /// The event's epoch.
        epoch: u32,
        /// The current one.
        current: u32,
    },
}

/// What the controller knows about one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeState {
    /// Current epoch; 0 = never registered.
    pub epoch: u32,
    /// Boot epoch of the current registration.
    pub boot_epoch: u32,
    /// Declared dead and not registered again since.
    pub dead: bool,
    /// Regions it holds a copy of (as owner or as backup).
    pub regions: u64,
    /// When it was last heard (ms, the caller's clock); volatile.
    pub last_heard_ms: Option<u64>,
    /// Its last pressure report; volatile.
    pub pressure: Option<Pressure>,
    /// Until when (ms, the caller's clock) its pressure reports are ignored:
    /// a move it took part in committed just before; volatile.
    pub settle_until_ms: u64,
}

impl NodeState {
    /// Registered and not declared dead: it may receive new regions.
    pub fn is_live(&self) -> bool {
        self.epoch != 0 && !self.dead
    }
}

/// A request's outcome: the answer, and the events to make durable before sending it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The answer.
    pub reply: Message,
    /// Events to log and apply (empty for reads and refusals).
    pub events: Vec<Event>,
}

impl Decision {
    fn read(reply: Message) -> Self {
        Decision {
            reply,
            events: Vec::new(),
        }
    }
    fn refuse(code: ErrorCode, field: Field) -> Self {
        Decision::read(Message::Refused { code, field })
    }
}

/// The global controller's state: nodes and the vRegion owner map.
#[derive(Debug, Clone)]
pub struct Controller {
    config: RackConfig,
    nodes: Vec<NodeState>,
    regions: BTreeMap<u32, NodeId>,
    /// Backup of each replicated region that still has one.
    backups: BTreeMap<u32, NodeId>,
    /// Per-region use its owner reports (volatile): what migration planning reads.
    usage: BTreeMap<u32, Use>,
    /// Replicated regions that lost a copy and have no backup yet (derived from
    /// the logged failover events): what re-replication plans from.
    degraded: std::collections::BTreeSet<u32>,
    /// Open migrations by id (durable, with volatile progress and liveness).
    migrations: BTreeMap<u32, OpenMigration>,
    /// The most recent ended migrations, newest first (at most [`RECENT_MIGRATIONS`]).
    ended: VecDeque<MigrationInfo>,
    /// The next migration id (one above the highest logged).
    next_migration: u32,
    /// The wall clock (Unix ms) the caller last gave ([`Controller::set_wall_clock`]):
    /// stamped into migration events for `clio rack status`.
    wall_ms: u64,
    /// The id and time (caller's clock) of the last `MigrationBegin` decided:
    /// when its event applies, that is when its mover was last heard.
    begun: Option<(u32, u64)>,
}

/// An open migration: its record, and when its mover was last heard (volatile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenMigration {
    /// As `clio rack status` shows it.
    pub info: MigrationInfo,
    /// When its mover last reported (ms, the caller's clock; set at a restart).
    pub last_heard_ms: Option<u64>,
}

/// Ended migrations the controller keeps for `clio rack status`.
pub const RECENT_MIGRATIONS: usize = 16;

/// A region's use as its owner reported it (volatile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// The reporting node (the owner when it reported).
    pub node: NodeId,
    /// Chunks it holds.
    pub chunks: u16,
    /// Requests served, decayed: each report halves the old score and adds its
    /// count, so a region's past weighs less with every heartbeat.
    pub score: u64,
    /// When it was last reported (ms).
    pub at_ms: u64,
}

/// A usage report older than this is not used for planning (the node stopped
/// reporting the region: it holds no chunks of it any more, or it is gone).
pub const USAGE_STALE_MS: u64 = 2000;

/// How long after a move commits both nodes' pressure reports are ignored.
/// The giver frees the region's memory only after the commit, so a report
/// computed before that free still counts the region and would plan a second
/// move off a node that is no longer pressed.
pub const SETTLE_MS: u64 = 1000;

impl Controller {
    /// A controller with no history over the nodes of `config`.
    pub fn new(config: RackConfig) -> Self {
        let nodes = vec![NodeState::default(); config.nodes.len()];
        Controller {
            config,
            nodes,
            regions: BTreeMap::new(),
            backups: BTreeMap::new(),
            usage: BTreeMap::new(),
            degraded: std::collections::BTreeSet::new(),
            migrations: BTreeMap::new(),
            ended: VecDeque::new(),
            next_migration: 1,
            wall_ms: 0,
            begun: None,
        }
    }

    /// Sets the wall clock (Unix ms) stamped into the migration events of
    /// later decisions (volatile; the state machine has no clock of its own).
    pub fn set_wall_clock(&mut self, unix_ms: u64) {
        self.wall_ms = unix_ms;
    }

    /// Open migrations, ascending id.
    pub fn open_migrations(&self) -> impl Iterator<Item = &OpenMigration> + '_ {
        self.migrations.values()
    }

    /// Ended migrations, newest first.
    pub fn ended_migrations(&self) -> impl Iterator<Item = &MigrationInfo> + '_ {
        self.ended.iter()
    }

    fn open_migration_of(&self, region: u32) -> Option<(u32, MigrationKind)> {
        self.migrations
            .values()
            .find(|m| m.info.region == region)
            .map(|m| (m.info.id, m.info.kind))
    }

    fn end_event(&self, id: u32, outcome: MigrationOutcome) -> Event {
        Event::MigrationEnded {
            id,
            outcome,
            at_unix_ms: self.wall_ms,
        }
    }

    /// Replicated regions waiting for a new backup.
    pub fn degraded(&self) -> impl Iterator<Item = u32> + '_ {
        self.degraded.iter().copied()
    }

    /// Re-replication's decision: the lowest replicated region that lost a copy
    /// and whose primary is live, with a new backup on the least loaded other
    /// live node with a free slot.
    pub fn plan_replica(&self) -> Option<Replicas> {
        self.degraded.iter().find_map(|&region| {
            let primary = *self.regions.get(&region)?;
            let pst = self.node(primary).filter(|st| st.is_live())?;
            // Only what the primary reports holding chunks of: an untouched
            // region has nothing to copy (and no gate to tell its client).
            self.usage
                .get(&region)
                .filter(|u| u.node == primary && u.chunks > 0)?;
            let backup = self
                .config
                .nodes
                .iter()
                .filter(|n| n.id != primary)
                .filter_map(|n| {
                    let st = self.node(n.id)?;
                    (st.is_live() && st.regions < n.region_slots()).then_some((
                        u128::from(st.regions),
                        u128::from(n.region_slots()),
                        n.id,
                        st.epoch,
                    ))
                })
                .min_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)).then(a.2.cmp(&b.2)))?;
            Some(Replicas {
                region,
                primary,
                primary_epoch: pst.epoch,
                backup: backup.2,
                backup_epoch: backup.3,
            })
        })
    }

    /// The use reported for `region` (volatile).
    pub fn usage(&self, region: u32) -> Option<Use> {
        self.usage.get(&region).copied()
    }

    /// Used physical bytes of live node `id` in parts per million of its total,
    /// from its last heartbeat.
    fn load_ppm(&self, id: NodeId) -> Option<u64> {
        let st = self.node(id)?;
        let p = st.pressure.filter(|_| st.is_live())?;
        let total = u128::from(p.used_bytes) + u128::from(p.free_bytes);
        Some((u128::from(p.used_bytes) * 1_000_000 / total.max(1)) as u64)
    }

    /// Node-initiated migration's decision (Clio §3.4.7: a node under memory
    /// pressure moves a rarely used region to a less loaded node). The most
    /// loaded live node over `high_ppm`, its single-copy region with chunks and
    /// the lowest use score (fresh reports only), and the least loaded live node
    /// under `low_ppm` with a free region slot; `None` if any is missing.
    pub fn plan_move(&self, now_ms: u64, high_ppm: u64, low_ppm: u64) -> Option<MoveOrder> {
        let loads: Vec<(u64, NodeId)> = self
            .config
            .nodes
            .iter()
            .filter_map(|n| Some((self.load_ppm(n.id)?, n.id)))
            .collect();
        let &(hot, from) = loads
            .iter()
            .max_by_key(|(l, id)| (*l, std::cmp::Reverse(*id)))?;
        if hot <= high_ppm {
            return None;
        }
        let to = loads
            .iter()
            .filter(|&&(l, id)| {
                l < low_ppm
                    && id != from
                    && self.node(id).is_some_and(|st| st.regions < self.slots(id))
            })
            .min()?
            .1;
        let (region, _) = self
            .usage
            .iter()
            .filter(|(r, u)| {
                u.node == from
                    && u.chunks > 0
                    && now_ms.saturating_sub(u.at_ms) <= USAGE_STALE_MS
                    && self.regions.get(r) == Some(&from)
                    && !self.backups.contains_key(r)
                    && !self.degraded.contains(r)
            })
            .min_by_key(|(r, u)| (u.score, **r))?;
        Some(MoveOrder {
            region: *region,
            from,
            from_epoch: self.node(from)?.epoch,
            to,
        })
    }

    /// The rack file it runs with.
    pub fn config(&self) -> &RackConfig {
        &self.config
    }

    /// State of node `id`.
    pub fn node(&self, id: NodeId) -> Option<&NodeState> {
        self.nodes.get(usize::from(id).checked_sub(1)?)
    }

    /// Owner of `region`, if any.
    pub fn owner(&self, region: u32) -> Option<NodeId> {
        self.regions.get(&region).copied()
    }

    /// Backup of `region`, if it is replicated and the backup is alive.
    pub fn backup(&self, region: u32) -> Option<NodeId> {
        self.backups.get(&region).copied()
    }

    fn replicas(&self, region: u32) -> Option<Replicas> {
        let primary = self.owner(region)?;
        let epoch = |n: NodeId| self.node(n).map_or(0, |s| s.epoch);
        let backup = self.backup(region).unwrap_or(0);
        Some(Replicas {
            region,
            primary,
            primary_epoch: epoch(primary),
            backup,
            backup_epoch: if backup == 0 { 0 } else { epoch(backup) },
        })
    }

    /// Failover when the nodes in `lost` lost their memory (declared dead, or
    /// registered again after a reboot): each replicated region whose primary is
    /// lost and whose backup is not gets its backup promoted; each whose backup is
    /// lost keeps one copy. A region whose both copies are lost stays with its
    /// owner (its data is gone; clients see the node's errors).
    fn failover(&self, lost: &[NodeId]) -> Vec<(u32, bool)> {
        self.backups
            .iter()
            .filter_map(|(&region, &backup)| {
                let primary = self.owner(region)?;
                match (lost.contains(&primary), lost.contains(&backup)) {
                    (true, false) => Some((region, true)),
                    (false, true) => Some((region, false)),
                    _ => None,
                }
            })
            .collect()
    }

    fn failover_events(&self, lost: &[NodeId]) -> Vec<Event> {
        self.failover(lost)
            .into_iter()
            .map(|(region, promote)| {
                if promote {
                    Event::Promoted { region }
                } else {
                    Event::Unreplicated { region }
                }
            })
            .collect()
    }

    /// Every assigned region and its owner, ascending.
    pub fn assignments(&self) -> impl Iterator<Item = (u32, NodeId)> + '_ {
        self.regions.iter().map(|(r, n)| (*r, *n))
    }

    fn id_of(&self, name: &str) -> Result<NodeId, ApplyError> {
        self.config
            .node_by_name(name)
            .map(|n| n.id)
            .ok_or_else(|| ApplyError::UnknownNode(name.to_string()))
    }

    fn name_of(&self, id: NodeId) -> &str {
        &self.config.nodes[usize::from(id) - 1].name
    }

    fn state_mut(&mut self, id: NodeId) -> &mut NodeState {
        &mut self.nodes[usize::from(id) - 1]
    }

    /// Raise `node`'s epoch to `epoch`, which must be newer (epochs only
    /// grow: a registration or a death fences everything before it).
    fn advance_epoch(&mut self, node: &str, epoch: u32) -> Result<&mut NodeState, ApplyError> {
        let id = self.id_of(node)?;
        let st = self.state_mut(id);
        if epoch <= st.epoch {
            return Err(ApplyError::EpochNotNewer {
                node: node.to_string(),
                epoch,
                current: st.epoch,
            });
        }
        st.epoch = epoch;
        Ok(st)
    }

    /// Applies one durable event (live, after logging it, or replaying the log).
    /// On error nothing changed.
    pub fn apply(&mut self, event: &Event) -> Result<(), ApplyError> {
        match event {
            Event::Registered {
                node,
                epoch,
                boot_epoch,
            } => {
                let st = self.advance_epoch(node, *epoch)?;
                st.boot_epoch = *boot_epoch;
                st.dead = false;
            }
            Event::Dead { node, epoch } => {
                let st = self.advance_epoch(node, *epoch)?;
                st.dead = true;
                st.last_heard_ms = None;
                st.pressure = None;
            }
            Event::Assigned { region, node } => {
                let id = self.id_of(node)?;
                if *region >= REGION_COUNT {
                    return Err(ApplyError::RegionOutOfRange(*region));
                }
                if let Some(owner) = self.regions.get(region) {
                    return Err(ApplyError::AlreadyAssigned {
                        region: *region,
                        owner: self.name_of(*owner).to_string(),
                    });
                }
                self.regions.insert(*region, id);
                self.state_mut(id).regions += 1;
            }
            Event::Moved { region, node } => {
                let to = self.id_of(node)?;
                let Some(from) = self.regions.get(region).copied() else {
                    return Err(ApplyError::NotAssigned(*region));
                };
                if self.backups.contains_key(region) {
                    return Err(ApplyError::Backup(*region));
                }
                self.regions.insert(*region, to);
                self.usage.remove(region);
                self.state_mut(from).regions -= 1;
                self.state_mut(to).regions += 1;
                // Both nodes' pressure changes with the move: plan the next one
                // on reports sent after it, not before.
                self.state_mut(from).pressure = None;
                self.state_mut(to).pressure = None;
            }
            Event::Released { region } => {
                let Some(id) = self.regions.remove(region) else {
                    return Err(ApplyError::NotAssigned(*region));
                };
                self.usage.remove(region);
                self.degraded.remove(region);
                self.state_mut(id).regions -= 1;
                if let Some(b) = self.backups.remove(region) {
                    self.state_mut(b).regions -= 1;
                }
            }
            Event::Replicated { region, node } => {
                let id = self.id_of(node)?;
                let Some(owner) = self.owner(*region) else {
                    return Err(ApplyError::NotAssigned(*region));
                };
                if owner == id || self.backups.contains_key(region) {
                    return Err(ApplyError::Backup(*region));
                }
                self.backups.insert(*region, id);
                self.degraded.remove(region);
                self.state_mut(id).regions += 1;
            }
            Event::Promoted { region } => {
                let Some(b) = self.backups.get(region).copied() else {
                    return Err(ApplyError::Backup(*region));
                };
                let Some(p) = self.regions.insert(*region, b) else {
                    return Err(ApplyError::NotAssigned(*region));
                };
                self.backups.remove(region);
                self.degraded.insert(*region);
                self.state_mut(p).regions -= 1;
            }
            Event::Unreplicated { region } => {
                let Some(b) = self.backups.remove(region) else {
                    return Err(ApplyError::Backup(*region));
                };
                self.degraded.insert(*region);
                self.state_mut(b).regions -= 1;
            }
            Event::MigrationStarted(start) | Event::CopyStarted(start) => {
                let kind = match event {
                    Event::CopyStarted(_) => MigrationKind::Copy,
                    _ => MigrationKind::Move,
                };
                let MigrationStart {
                    id,
                    region,
                    from,
                    to,
                    total_bytes,
                    at_unix_ms,
                } = start;
                let (from, to) = (self.id_of(from)?, self.id_of(to)?);
                if *region >= REGION_COUNT {
                    return Err(ApplyError::RegionOutOfRange(*region));
                }
                if *id < self.next_migration || self.migrations.contains_key(id) {
                    return Err(ApplyError::Migration(*id));
                }
                self.next_migration = id.saturating_add(1);
                // Live: heard at the decision; replayed: `start_clock` sets it.
                let last_heard_ms = self.begun.take().filter(|b| b.0 == *id).map(|b| b.1);
                self.migrations.insert(
                    *id,
                    OpenMigration {
                        info: MigrationInfo {
                            id: *id,
                            region: *region,
                            from,
                            to,
                            total_bytes: *total_bytes,
                            copied_bytes: Some(0),
                            started_unix_ms: *at_unix_ms,
                            ended_unix_ms: None,
                            outcome: MigrationOutcome::InProgress,
                            kind,
                        },
                        last_heard_ms,
                    },
                );
            }
            Event::MigrationEnded {
                id,
                outcome,
                at_unix_ms,
            } => {
                if *outcome == MigrationOutcome::InProgress {
                    return Err(ApplyError::Migration(*id));
                }
                let Some(m) = self.migrations.remove(id) else {
                    return Err(ApplyError::Migration(*id));
                };
                let mut info = m.info;
                info.ended_unix_ms = Some(*at_unix_ms);
                info.outcome = *outcome;
                self.ended.push_front(info);
                self.ended.truncate(RECENT_MIGRATIONS);
            }
        }
        Ok(())
    }

    /// After recovery: every live node counts as heard at `now_ms`, so one that stays
    /// silent is declared dead `dead_after_ms` later.
    pub fn start_clock(&mut self, now_ms: u64) {
        for st in &mut self.nodes {
            if st.is_live() {
                st.last_heard_ms = Some(now_ms);
            }
        }
        // The same for open migrations: a mover that outlived the restart
        // reports again (or commits) within the timeout, else it is closed.
        for m in self.migrations.values_mut() {
            m.last_heard_ms = Some(now_ms);
            // Progress is not logged: unknown until the mover reports again.
            m.info.copied_bytes = None;
        }
    }

    /// Nodes silent for longer than the rack file's `dead_after_ms` at `now_ms`:
    /// the events declaring them dead.
    /// With them, in the same change, the failover of replicated regions: a
    /// primary's backup is promoted, a dead backup is dropped.
    pub fn expired(&self, now_ms: u64) -> Vec<Event> {
        let limit = self.config.dead_after_ms;
        let dead: Vec<(NodeId, Event)> = self
            .nodes
            .iter()
            .zip(&self.config.nodes)
            .filter(|(st, _)| st.is_live())
            .filter(|(st, _)| {
                st.last_heard_ms
                    .is_none_or(|t| now_ms.saturating_sub(t) > limit)
            })
            .map(|(st, cfg)| {
                (
                    cfg.id,
                    Event::Dead {
                        node: cfg.name.clone(),
                        epoch: st.epoch.saturating_add(1),
                    },
                )
            })
            .collect();
        let ids: Vec<NodeId> = dead.iter().map(|(id, _)| *id).collect();
        let mut events: Vec<Event> = dead.into_iter().map(|(_, e)| e).collect();
        events.extend(self.failover_events(&ids));
        // Open migrations whose mover fell silent: the source stays the owner
        // (only a `MoveRegion` switches it), so the record closes `TimedOut`.
        let timeout = self.config.migration_timeout_ms;
        for m in self.migrations.values() {
            if m.last_heard_ms
                .is_none_or(|t| now_ms.saturating_sub(t) > timeout)
            {
                events.push(self.end_event(m.info.id, MigrationOutcome::TimedOut));
            }
        }
        events
    }

    /// The node's state if `epoch` is its current one and it is live; else the refusal.
    fn fenced(
        &self,
        node: NodeId,
        epoch: u32,
        f_node: Field,
        f_epoch: Field,
    ) -> Result<&NodeState, (ErrorCode, Field)> {
        let st = self.node(node).ok_or((ErrorCode::UnknownNode, f_node))?;
        if st.epoch == 0 {
            return Err((ErrorCode::NodeDead, f_node));
        }
        if epoch != st.epoch {
            return Err((ErrorCode::StaleEpoch, f_epoch));
        }
        if st.dead {
            return Err((ErrorCode::NodeDead, f_epoch));
        }
        Ok(st)
    }

    fn slots(&self, id: NodeId) -> u64 {
        self.config.nodes[usize::from(id) - 1].region_slots()
    }

    /// Decides the answer to `request` at `now_ms`. Durable state is untouched (the
    /// returned events carry the change); volatile liveness is updated.
    pub fn handle(&mut self, now_ms: u64, request: &Message) -> Decision {
        if let Err(e) = request.validate() {
            let field = field_named(e.field).unwrap_or(Field::Message);
            return Decision::refuse(ErrorCode::Malformed, field);
        }
        match *request {
            Message::Hello {
                node,
                addr,
                capacity,
                boot_epoch,
            } => {
                let Some(cfg) = self.config.node(node) else {
                    return Decision::refuse(ErrorCode::UnknownNode, Field::HelloNode);
                };
                if cfg.node_addr() != addr {
                    return Decision::refuse(ErrorCode::AddressMismatch, Field::HelloAddr);
                }
                if capacity < cfg.capacity {
                    return Decision::refuse(ErrorCode::CapacityMismatch, Field::HelloCapacity);
                }
                let name = cfg.name.clone();
                let st = self.state_mut(node);
                st.last_heard_ms = Some(now_ms);
                if st.is_live() && st.boot_epoch == boot_epoch {
                    // A repeated hello of the same incarnation: same answer, no change.
                    return Decision::read(Message::Welcome {
                        node,
                        epoch: st.epoch,
                    });
                }
                // A live node saying hello with a new boot epoch rebooted: its DRAM,
                // hence its copies of replicated regions, are gone (a dead one had
                // its failover when it was declared dead).
                let rebooted = st.is_live();
                let Some(epoch) = st.epoch.checked_add(1) else {
                    return Decision::refuse(ErrorCode::StaleEpoch, Field::HelloNode);
                };
                let mut events = vec![Event::Registered {
                    node: name,
                    epoch,
                    boot_epoch,
                }];
                if rebooted {
                    events.extend(self.failover_events(&[node]));
                }
                Decision {
                    reply: Message::Welcome { node, epoch },
                    events,
                }
            }
            Message::Heartbeat {
                node,
                epoch,
                pressure,
            } => {
                if let Err((code, field)) =
                    self.fenced(node, epoch, Field::HeartbeatNode, Field::HeartbeatEpoch)
                {
                    return Decision::refuse(code, field);
                }
                let st = self.state_mut(node);
                st.last_heard_ms = Some(now_ms);
                if now_ms >= st.settle_until_ms {
                    st.pressure = Some(pressure);
                }
                Decision::read(Message::Ack { epoch })
            }
            Message::AssignRegion {
                region,
                owner,
                epoch,
            } => {
                if self.regions.contains_key(&region) {
                    return Decision::refuse(ErrorCode::AlreadyAssigned, Field::AssignRegion);
                }
                let st = match self.fenced(owner, epoch, Field::AssignOwner, Field::AssignEpoch) {
                    Ok(st) => st,
                    Err((code, field)) => return Decision::refuse(code, field),
                };
                if st.regions >= self.slots(owner) {
                    return Decision::refuse(ErrorCode::NoCapacity, Field::AssignOwner);
                }
                Decision {
                    reply: Message::Owner(Placement {
                        region,
                        node: owner,
                        epoch,
                    }),
                    events: vec![Event::Assigned {
                        region,
                        node: self.name_of(owner).to_string(),
                    }],
                }
            }
            Message::ReleaseRegion {
                region,
                owner,
                epoch,
            } => {
                let Some(holder) = self.owner(region) else {
                    return Decision::refuse(ErrorCode::NotAssigned, Field::ReleaseRegion);
                };
                if holder != owner {
                    return Decision::refuse(ErrorCode::NotOwner, Field::ReleaseOwner);
                }
                // A release names the owner's current epoch (a host learns it from
                // Lookup); the owner may be dead: its regions can still be given back.
                let current = self.node(owner).map_or(0, |s| s.epoch);
                if epoch != current {
                    return Decision::refuse(ErrorCode::StaleEpoch, Field::ReleaseEpoch);
                }
                Decision {
                    reply: Message::Ack { epoch },
                    events: vec![Event::Released { region }],
                }
            }
            Message::Lookup { region } => match self.owner(region) {
                Some(node) => {
                    let epoch = self.node(node).map_or(0, |s| s.epoch);
                    Decision::read(Message::Owner(Placement {
                        region,
                        node,
                        epoch,
                    }))
                }
                None => Decision::read(Message::NotAssigned { region }),
            },
            Message::Allocate { bytes } => self.allocate(bytes, false),
            Message::AllocateReplicated { bytes } => self.allocate(bytes, true),
            Message::LookupReplicas { region } => match self.replicas(region) {
                Some(r) => Decision::read(Message::ReplicaState(r)),
                None => Decision::read(Message::NotAssigned { region }),
            },
            Message::MoveRegion {
                region,
                from,
                from_epoch,
                to,
            } => {
                let Some(holder) = self.owner(region) else {
                    return Decision::refuse(ErrorCode::NotAssigned, Field::MoveRegion);
                };
                if holder != from {
                    return Decision::refuse(ErrorCode::NotOwner, Field::MoveFrom);
                }
                if self.backups.contains_key(&region) {
                    return Decision::refuse(ErrorCode::Replicated, Field::MoveRegion);
                }
                // The giver may be dead (its regions can be moved off it), but the
                // epoch fences a mover that works from stale knowledge.
                if self.node(from).map_or(0, |s| s.epoch) != from_epoch {
                    return Decision::refuse(ErrorCode::StaleEpoch, Field::MoveFromEpoch);
                }
                let Some(st) = self.node(to) else {
                    return Decision::refuse(ErrorCode::UnknownNode, Field::MoveTo);
                };
                if !st.is_live() {
                    return Decision::refuse(ErrorCode::NodeDead, Field::MoveTo);
                }
                if st.regions >= self.slots(to) {
                    return Decision::refuse(ErrorCode::NoCapacity, Field::MoveTo);
                }
                let epoch = st.epoch;
                for n in [from, to] {
                    self.state_mut(n).settle_until_ms = now_ms + SETTLE_MS;
                }
                let mut events = vec![Event::Moved {
                    region,
                    node: self.name_of(to).to_string(),
                }];
                // The commit ends the region's open migration in the same
                // logged change: a crash cannot leave it half. (An open copy
                // to a new backup is not this commit's: its `AddBackup` will
                // be refused or it times out.)
                if let Some((id, MigrationKind::Move)) = self.open_migration_of(region) {
                    events.push(self.end_event(id, MigrationOutcome::Completed));
                }
                Decision {
                    reply: Message::Owner(Placement {
                        region,
                        node: to,
                        epoch,
                    }),
                    events,
                }
            }
            Message::MigrationBegin {
                region,
                from,
                to,
                total_bytes,
                kind,
            } => {
                if self.node(from).is_none() {
                    return Decision::refuse(ErrorCode::UnknownNode, Field::MoveFrom);
                }
                if self.node(to).is_none() {
                    return Decision::refuse(ErrorCode::UnknownNode, Field::MoveTo);
                }
                match self.owner(region) {
                    None => {
                        return Decision::refuse(ErrorCode::NotAssigned, Field::MigrationRegion)
                    }
                    Some(o) if o != from => {
                        return Decision::refuse(ErrorCode::NotOwner, Field::MoveFrom)
                    }
                    Some(_) => {}
                }
                if self.open_migration_of(region).is_some() {
                    return Decision::refuse(ErrorCode::Busy, Field::MigrationRegion);
                }
                let id = self.next_migration;
                self.begun = Some((id, now_ms));
                let (from, to, at_unix_ms) = (
                    self.name_of(from).to_string(),
                    self.name_of(to).to_string(),
                    self.wall_ms,
                );
                let start = MigrationStart {
                    id,
                    region,
                    from,
                    to,
                    total_bytes,
                    at_unix_ms,
                };
                let started = match kind {
                    MigrationKind::Move => Event::MigrationStarted(start),
                    MigrationKind::Copy => Event::CopyStarted(start),
                };
                Decision {
                    reply: Message::MigrationId { id },
                    events: vec![started],
                }
            }
            Message::MigrationProgress { id, copied_bytes } => match self.migrations.get_mut(&id) {
                Some(m) => {
                    m.info.copied_bytes = Some(copied_bytes);
                    m.last_heard_ms = Some(now_ms);
                    Decision::read(Message::Ack { epoch: 0 })
                }
                None => Decision::refuse(ErrorCode::NotAssigned, Field::MigrationId),
            },
            Message::MigrationEnd { id, outcome } => {
                if !self.migrations.contains_key(&id) {
                    return Decision::refuse(ErrorCode::NotAssigned, Field::MigrationId);
                }
                Decision {
                    reply: Message::Ack { epoch: 0 },
                    events: vec![self.end_event(id, outcome)],
                }
            }
            Message::Migrations { from } => {
                let all: Vec<MigrationInfo> = self
                    .migrations
                    .values()
                    .map(|m| m.info)
                    .chain(self.ended.iter().copied())
                    .collect();
                let start = (from as usize).min(all.len());
                let end = (start + MAX_MIGRATION_LIST).min(all.len());
                Decision::read(Message::MigrationList {
                    entries: all[start..end].iter().copied().collect(),
                    next: (end < all.len()).then_some(end as u32),
                })
            }
            Message::NodeStatus { node } => match self.node(node) {
                Some(st) => Decision::read(Message::NodeReport {
                    node,
                    epoch: st.epoch,
                    live: st.is_live(),
                    regions: u32::try_from(st.regions).unwrap_or(u32::MAX),
                    pressure: st.pressure,
                }),
                None => Decision::refuse(ErrorCode::UnknownNode, Field::NodeStatusNode),
            },
            Message::Usage {
                node,
                epoch,
                ref regions,
            } => {
                if let Err((code, field)) =
                    self.fenced(node, epoch, Field::UsageNode, Field::UsageEpoch)
                {
                    return Decision::refuse(code, field);
                }
                self.state_mut(node).last_heard_ms = Some(now_ms);
                for u in regions {
                    // Only the owner's report counts (a stale report of a moved
                    // region is dropped).
                    if self.regions.get(&u.region) != Some(&node) {
                        continue;
                    }
                    let old = self
                        .usage
                        .get(&u.region)
                        .filter(|o| o.node == node)
                        .map_or(0, |o| o.score);
                    self.usage.insert(
                        u.region,
                        Use {
                            node,
                            chunks: u.chunks,
                            score: old / 2 + u.hits,
                            at_ms: now_ms,
                        },
                    );
                }
                Decision::read(Message::Ack { epoch })
            }
            Message::PlanReplica => Decision::read(Message::ReplicaPlan(self.plan_replica())),
            Message::AddBackup {
                region,
                primary,
                primary_epoch,
                backup,
            } => {
                let Some(holder) = self.owner(region) else {
                    return Decision::refuse(ErrorCode::NotAssigned, Field::AddBackupRegion);
                };
                if holder != primary {
                    return Decision::refuse(ErrorCode::NotOwner, Field::AddBackupRegion);
                }
                if self.node(primary).map_or(0, |s| s.epoch) != primary_epoch {
                    return Decision::refuse(ErrorCode::StaleEpoch, Field::AddBackupRegion);
                }
                // Only a replicated region that lost its copy takes a new one.
                if !self.degraded.contains(&region) {
                    return Decision::refuse(ErrorCode::Replicated, Field::AddBackupRegion);
                }
                let Some(st) = self.node(backup) else {
                    return Decision::refuse(ErrorCode::UnknownNode, Field::AddBackupBackup);
                };
                if !st.is_live() {
                    return Decision::refuse(ErrorCode::NodeDead, Field::AddBackupBackup);
                }
                if st.regions >= self.slots(backup) {
                    return Decision::refuse(ErrorCode::NoCapacity, Field::AddBackupBackup);
                }
                Decision {
                    reply: Message::ReplicaState(Replicas {
                        region,
                        primary,
                        primary_epoch,
                        backup,
                        backup_epoch: st.epoch,
                    }),
                    events: {
                        let mut events = vec![Event::Replicated {
                            region,
                            node: self.name_of(backup).to_string(),
                        }];
                        // The commit ends the region's open copy in the same
                        // logged change, as `MoveRegion` ends a move.
                        if let Some((id, MigrationKind::Copy)) = self.open_migration_of(region) {
                            events.push(self.end_event(id, MigrationOutcome::Completed));
                        }
                        events
                    },
                }
            }
            Message::PlanMove { high_ppm, low_ppm } => Decision::read(Message::MovePlan(
                self.plan_move(now_ms, u64::from(high_ppm), u64::from(low_ppm)),
            )),
            // Addressed to memory nodes, not to the controller.
            Message::Gate { .. }
            | Message::Bind { .. }
            | Message::Register { .. }
            | Message::FindSpace { .. }
            | Message::TakeDirty { .. }
            | Message::Probe { .. }
            | Message::Chunks { .. } => Decision::refuse(ErrorCode::NotARequest, Field::Message),
            Message::Welcome { .. }
            | Message::NodeReport { .. }
            | Message::Ack { .. }
            | Message::Owner(_)
            | Message::NotAssigned { .. }
            | Message::Allocated { .. }
            | Message::AllocatedReplicated { .. }
            | Message::ReplicaState(_)
            | Message::SpaceOf { .. }
            | Message::ChunkList { .. }
            | Message::MovePlan(_)
            | Message::ReplicaPlan(_)
            | Message::Dirty { .. }
            | Message::MigrationId { .. }
            | Message::MigrationList { .. }
            | Message::NodeInfo { .. }
            | Message::Refused { .. } => Decision::refuse(ErrorCode::NotARequest, Field::Message),
        }
    }

    /// First region of the lowest run of `n` free regions.
    fn lowest_free_run(&self, n: u32) -> Option<u32> {
        let mut start = 0u32;
        // Owned regions ascending: a run ends where the next owned one starts.
        for &r in self.regions.keys() {
            if r >= start && r - start >= n {
                return Some(start);
            }
            start = start.max(r + 1);
        }
        (REGION_COUNT - start >= n).then_some(start)
    }

    /// The lowest run of free regions, each placed on the least-loaded live node with room
    /// (load = held copies / region slots; ties: more reported free bytes, then lower id);
    /// `replicated`: each also gets a backup, the least-loaded other node. All or nothing.
    fn allocate(&self, bytes: u64, replicated: bool) -> Decision {
        let want = bytes.div_ceil(VREGION_BYTES) as usize;
        let field = if replicated {
            Field::AllocateReplicatedBytes
        } else {
            Field::AllocateBytes
        };
        // (id, held, slots, reported free bytes)
        let mut load: Vec<(NodeId, u64, u64, u64)> = self
            .config
            .nodes
            .iter()
            .zip(&self.nodes)
            .filter(|(_, st)| st.is_live())
            .map(|(cfg, st)| {
                (
                    cfg.id,
                    st.regions,
                    cfg.region_slots(),
                    st.pressure.map_or(0, |p| p.free_bytes),
                )
            })
            .collect();
        // One allocation is one contiguous run of regions (the lowest free run), so
        // its rack addresses are contiguous.
        let Some(start) = self.lowest_free_run(want as u32) else {
            return Decision::refuse(ErrorCode::NoCapacity, field);
        };
        let mut pick = |not: NodeId| -> Option<NodeId> {
            let best = load
                .iter_mut()
                .filter(|(id, owned, slots, _)| owned < slots && *id != not)
                .min_by(|a, b| {
                    (u128::from(a.1) * u128::from(b.2))
                        .cmp(&(u128::from(b.1) * u128::from(a.2)))
                        .then(b.3.cmp(&a.3))
                        .then(a.0.cmp(&b.0))
                })?;
            best.1 += 1;
            Some(best.0)
        };
        let epoch = |n: NodeId| self.node(n).map_or(0, |s| s.epoch);
        let mut placements = heapless::Vec::new();
        let mut sets = heapless::Vec::new();
        let mut events = Vec::with_capacity(want * 2);
        for region in start..start + want as u32 {
            let Some(node) = pick(0) else {
                return Decision::refuse(ErrorCode::NoCapacity, field);
            };
            events.push(Event::Assigned {
                region,
                node: self.name_of(node).to_string(),
            });
            // `want` is bounded by validate() (MAX_PLACEMENTS / MAX_REPLICATED).
            let full = if replicated {
                let Some(backup) = pick(node) else {
                    return Decision::refuse(ErrorCode::NoCapacity, field);
                };
                events.push(Event::Replicated {
                    region,
                    node: self.name_of(backup).to_string(),
                });
                sets.push(Replicas {
                    region,
                    primary: node,
                    primary_epoch: epoch(node),
                    backup,
                    backup_epoch: epoch(backup),
                })
                .is_err()
            } else {
                placements
                    .push(Placement {
                        region,
                        node,
                        epoch: epoch(node),
                    })
                    .is_err()
            };
            if full {
                return Decision::refuse(ErrorCode::Malformed, field);
            }
        }
        let reply = if replicated {
            Message::AllocatedReplicated { sets }
        } else {
            Message::Allocated { placements }
        };
        Decision { reply, events }
    }
}

/// The protocol field called `name` (as decoding errors name it), if it has one.
pub fn field_named(name: &str) -> Option<Field> {
    Field::ALL.iter().copied().find(|f| f.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two start variants carry one shared struct; their log encoding
    /// must stay what the struct variants wrote (variant index, then the
    /// fields in order), so logs written before still read.
    #[test]
    fn start_events_keep_their_log_encoding() {
        let start = MigrationStart {
            id: 3,
            region: 5,
            from: "a".into(),
            to: "bc".into(),
            total_bytes: 300,
            at_unix_ms: 1,
        };
        let fields = [3, 5, 1, b'a', 2, b'b', b'c', 0xac, 0x02, 1];
        for (event, index) in [
            (Event::MigrationStarted(start.clone()), 8u8),
            (Event::CopyStarted(start), 10u8),
        ] {
            let bytes = postcard::to_stdvec(&event).unwrap();
            assert_eq!(bytes[0], index, "{event:?}");
            assert_eq!(&bytes[1..], &fields, "{event:?}");
            assert_eq!(postcard::from_bytes::<Event>(&bytes).unwrap(), event);
        }
    }
}
