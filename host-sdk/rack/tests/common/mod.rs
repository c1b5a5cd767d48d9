//! Shared test helpers: a three-node rack file and hello messages, a local
//! rack of emulated nodes and its in-process client, and writer threads that
//! keep a model of what was acknowledged.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use clio::backend::Transport;
use clio::ClientConfig;
use clio_config::BoardConfig;
use clio_control::{Message, MigrationInfo, MigrationKind, NodeId};
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{RackClient, RackConfig};

/// Three nodes: mn0 (4 GiB), mn1 (2 GiB), mn2 (8 GiB).
pub const RACK: &str = r#"
[controller]
listen = "127.0.0.1:7800"
dead_after_ms = 1000

[[node]]
name = "mn0"
address = "10.0.0.2:7700"
capacity = "4 GiB"

[[node]]
name = "mn1"
address = "10.0.0.3:7700"
capacity = "2 GiB"

[[node]]
name = "mn2"
address = "10.0.0.4:7700"
capacity = 8589934592
"#;

pub fn rack() -> RackConfig {
    clio_rack::config::load_str("rack.toml", RACK).unwrap()
}

pub fn hello(cfg: &RackConfig, node: NodeId, boot_epoch: u32) -> Message {
    let n = cfg.node(node).unwrap();
    Message::Hello {
        node,
        addr: n.node_addr(),
        capacity: n.capacity,
        boot_epoch,
    }
}

/// The board config of every emulated node in these tests.
pub fn board() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

/// A keyless local rack of `m` emulated nodes on loopback, its log in `dir`;
/// a node is declared dead after `dead_after_ms` without heartbeats.
pub fn start(m: usize, dir: &tempfile::TempDir, dead_after_ms: u64) -> LocalRack {
    LocalRack::start_keyless(
        m,
        &board(),
        "127.0.0.1:0".parse().unwrap(),
        &dir.path().join("rack.log"),
        dead_after_ms,
    )
    .unwrap()
}

/// A client of `r` whose nodes are called in process.
pub fn in_process(r: &LocalRack) -> RackClient<clio::backend::InProcess<clio_rack::SharedNode>> {
    RackClient::new(
        r.config(),
        r.controller_addr(),
        r.links(),
        ClientConfig::from_board(&board()),
    )
    .unwrap()
}

/// Two writer threads under a concurrent rack operation: thread `t` writes
/// its `i`-th value to `at(t, i)` until `stop` is set (at least `min`
/// writes). Each returns its model: the last value acknowledged per word
/// (only an acknowledged write enters it). `at` must give the two threads
/// disjoint words.
pub fn spawn_writers_at<T>(
    c: &Arc<RackClient<T>>,
    min: u64,
    stop: &Arc<AtomicBool>,
    at: impl Fn(u64, u64) -> u64 + Copy + Send + 'static,
) -> Vec<JoinHandle<BTreeMap<u64, u64>>>
where
    T: Transport + Send + 'static,
    RackClient<T>: Send + Sync,
{
    (0..2u64)
        .map(|t| {
            let c = Arc::clone(c);
            let stop = Arc::clone(stop);
            std::thread::spawn(move || {
                let mut model = BTreeMap::new();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) || i < min {
                    let at = at(t, i);
                    let v = (t << 60) | i;
                    c.rwrite(at, &v.to_le_bytes()).unwrap();
                    model.insert(at, v);
                    i += 1;
                }
                model
            })
        })
        .collect()
}

/// Two writer threads under a concurrent rack operation (a migration, a
/// failover): thread `t` owns every other word of `slots` 8-byte slots spread
/// over the two chunks at `va`, and writes until `stop` is set (at least
/// `min` writes); see [`spawn_writers_at`].
pub fn spawn_writers<T>(
    c: &Arc<RackClient<T>>,
    va: u64,
    slots: u64,
    min: u64,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<BTreeMap<u64, u64>>>
where
    T: Transport + Send + 'static,
    RackClient<T>: Send + Sync,
{
    spawn_writers_at(c, min, stop, move |t, i| {
        let slot = (i * 2 + t) % slots;
        va + (slot % 2) * CHUNK + slot * 8
    })
}

/// The writers' models joined into one (their words are disjoint).
pub fn join_writers(writers: Vec<JoinHandle<BTreeMap<u64, u64>>>) -> BTreeMap<u64, u64> {
    let mut model = BTreeMap::new();
    for w in writers {
        model.extend(w.join().unwrap());
    }
    model
}

/// The re-replications of `region` the controller at `ctl` records (kind
/// `Copy`), open ones first, then the ended ones newest first.
pub fn copies_recorded(ctl: std::net::SocketAddr, region: u32) -> Vec<MigrationInfo> {
    let mut c = clio_rack::service::Client::connect(ctl).unwrap();
    let (mut all, mut from) = (Vec::new(), Some(0));
    while let Some(at) = from {
        match c.call(Message::Migrations { from: at }).unwrap() {
            Message::MigrationList { entries, next } => {
                all.extend(entries);
                from = next;
            }
            other => panic!("Migrations answered {other:?}"),
        }
    }
    all.retain(|m| m.region == region && m.kind == MigrationKind::Copy);
    all
}
