//! The rack's global controller (issue #22, first slice): the two-level memory
//! management of LegoOS and Clio §3.4.7, top level.
//!
//! - [`config`]: the rack file (the memory nodes: name, address, capacity).
//! - [`state`]: the pure state machine: registration with epochs, liveness and
//!   fencing, 1 GiB vRegion assignment (least-loaded first), lookup, release.
//! - [`log`]: the durable, checksummed, append-only log of committed changes.
//! - [`Rack`]: the state machine over its log (commit before answering; replay on open).
//! - [`service`]: a UDP shell speaking the `clio-control` messages, and a small client.
//! - [`balancer`]: node-initiated migration: the controller's plan (a pressed
//!   node's least used region to a less loaded node) carried out with the nodes.
//! - [`client`]: the SDK side, [`RackClient`]: one address space over many nodes.
//! - [`node`]: the memory-node side for emulated boards: a region gate in front of
//!   the board ([`RackNode`]) and registration with heartbeats ([`NodeAgent`]).
#![forbid(unsafe_code)]

pub mod balancer;
pub mod client;
pub mod config;
pub mod local;
pub mod log;
pub mod node;
pub mod service;
pub mod state;

use std::path::Path;

use clio_control::{ErrorCode, Field, Message};

pub use balancer::{Balancer, BalancerConfig, BalancerStats};
pub use client::{
    CopyPolicy, Links, Migration, RackClient, RackClientError, SealedUdpLinks, UdpLinks,
};
pub use config::{load as load_config, NodeConfig, RackConfig, RackConfigError};
pub use log::{Log, LogError, Recovery};
pub use node::{InProcessLinks, NodeAgent, RackNode, SharedNode};
pub use state::{ApplyError, Controller, Decision, Event, NodeState};

/// Why a rack controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum RackError {
    /// The log could not be opened or recovered.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A good record does not apply to this rack file (e.g. it names a node the file
    /// no longer lists). Nothing is truncated: fix the rack file or move the log away.
    #[error("{file}: record {index} (offset {offset}) does not apply to the rack file: {error}")]
    Replay {
        /// The log file.
        file: String,
        /// 0-based record number.
        index: usize,
        /// Its byte offset.
        offset: u64,
        /// Why.
        error: ApplyError,
    },
}

/// The wall clock in Unix ms (0 before 1970).
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The controller over its durable log.
#[derive(Debug)]
pub struct Rack {
    ctl: Controller,
    log: Log,
}

impl Rack {
    /// Opens the log at `log_path` (created if absent), replays it over `config`, and
    /// starts the liveness clock at `now_ms`.
    pub fn open(
        config: RackConfig,
        log_path: impl AsRef<Path>,
        now_ms: u64,
    ) -> Result<(Rack, Recovery), RackError> {
        let (log, records, recovery) = Log::open(log_path)?;
        let mut ctl = Controller::new(config);
        for (index, (offset, events)) in records.iter().enumerate() {
            // A record is one change: apply all of it or refuse to start.
            let mut next = ctl.clone();
            for e in events {
                next.apply(e).map_err(|error| RackError::Replay {
                    file: log.path().display().to_string(),
                    index,
                    offset: *offset,
                    error,
                })?;
            }
            ctl = next;
        }
        ctl.start_clock(now_ms);
        Ok((Rack { ctl, log }, recovery))
    }

    /// The state machine (read only).
    pub fn controller(&self) -> &Controller {
        &self.ctl
    }

    /// The log.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Answers `request` at `now_ms`; a change is logged and synced before the answer
    /// is returned (a failed write answers `Refused { Storage }` and changes nothing).
    pub fn request(&mut self, now_ms: u64, request: &Message) -> Message {
        self.ctl.set_wall_clock(unix_ms());
        let d = self.ctl.handle(now_ms, request);
        if d.events.is_empty() {
            return d.reply;
        }
        match self.commit(&d.events) {
            Ok(()) => d.reply,
            Err(_) => Message::Refused {
                code: ErrorCode::Storage,
                field: Field::Message,
            },
        }
    }

    /// Declares nodes silent too long dead (logged); returns the events committed.
    /// Also closes open migrations whose mover fell silent (`TimedOut`).
    pub fn tick(&mut self, now_ms: u64) -> Result<Vec<Event>, LogError> {
        self.ctl.set_wall_clock(unix_ms());
        let events = self.ctl.expired(now_ms);
        if !events.is_empty() {
            self.commit(&events)?;
        }
        Ok(events)
    }

    /// The probes for the rack file's `join = "probe"` nodes (address and
    /// message): each names the node and the epoch the controller holds for
    /// it while it is live (0 otherwise: the node keeps what it learned).
    pub fn probes(&self) -> Vec<(std::net::SocketAddr, Message)> {
        self.ctl
            .config()
            .nodes
            .iter()
            .filter(|n| n.join == config::Join::Probe)
            .map(|n| {
                let epoch = self
                    .ctl
                    .node(n.id)
                    .filter(|s| s.is_live())
                    .map_or(0, |s| s.epoch);
                (n.address, Message::Probe { node: n.id, epoch })
            })
            .collect()
    }

    /// A probed node's `NodeInfo` answer, received from `from` at `now_ms`,
    /// handled as the message the node would have sent itself: a `Heartbeat`
    /// when it reports the live epoch the controller holds for it, else a
    /// `Hello` (its first answer, or one from an incarnation that was declared
    /// dead and is fenced: it is registered with a new epoch). Returns the
    /// controller's answer to that message; `None` if `info` is not a
    /// `NodeInfo` from the address of a `join = "probe"` node.
    pub fn probe_answer(
        &mut self,
        now_ms: u64,
        from: std::net::SocketAddr,
        info: &Message,
    ) -> Option<Message> {
        let Message::NodeInfo {
            node,
            boot_epoch,
            epoch,
            capacity,
            pressure,
        } = *info
        else {
            return None;
        };
        let cfg = self.ctl.config().node(node)?;
        if cfg.join != config::Join::Probe || cfg.address != from {
            return None;
        }
        let addr = cfg.node_addr();
        let st = self.ctl.node(node)?;
        let request = if st.is_live() && epoch == st.epoch && st.boot_epoch == boot_epoch {
            Message::Heartbeat {
                node,
                epoch,
                pressure,
            }
        } else {
            Message::Hello {
                node,
                addr,
                capacity,
                boot_epoch,
            }
        };
        Some(self.request(now_ms, &request))
    }

    fn commit(&mut self, events: &[Event]) -> Result<(), LogError> {
        self.log.append(events)?;
        for e in events {
            // handle()/expired() only produce events that apply to the current state.
            self.ctl.apply(e).expect("a decided event applies");
        }
        Ok(())
    }
}
