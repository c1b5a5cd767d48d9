//! Node-initiated migration: nodes report pressure and per-region use, the
//! controller plans, the balancer moves — no client call. A local rack over
//! UDP, a client over UDP writing all along, checked against its model.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio::backend::UdpTransport;
use clio::ClientConfig;
use clio_config::BoardConfig;
use clio_control::{GateState, Message, MigrationOutcome, VREGION_BYTES};
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{Balancer, BalancerConfig, RackClient, RackClientError, UdpLinks};

/// One rack at a time under `cargo test` too (nextest: `.config/nextest.toml`).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn board() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

fn cfg() -> ClientConfig {
    ClientConfig::from_board(&board())
}

type Client = RackClient<UdpTransport>;

/// Node `node`'s last reported pressure in ppm (used / total).
fn load_ppm(ctl: &mut clio_rack::service::Client, node: u16) -> Option<u64> {
    match ctl.call(Message::NodeStatus { node }).unwrap() {
        Message::NodeReport {
            pressure: Some(p), ..
        } => Some(p.used_bytes * 1_000_000 / (p.used_bytes + p.free_bytes).max(1)),
        _ => None,
    }
}

/// A writer of `chunks` chunks at `va`: word `i % words` of chunk `i % chunks`,
/// every `pause` (none: as fast as it goes), until `stop`. Returns its model
/// (the last acknowledged value per word).
fn writer(
    c: &Arc<Client>,
    va: u64,
    chunks: u64,
    pause: Option<Duration>,
    stop: &Arc<AtomicBool>,
    tag: u64,
) -> JoinHandle<BTreeMap<u64, u64>> {
    let (c, stop) = (Arc::clone(c), Arc::clone(stop));
    std::thread::spawn(move || {
        let mut model = BTreeMap::new();
        let mut i = 0u64;
        while !stop.load(Ordering::SeqCst) || i < 50 {
            let at = va + (i % chunks) * CHUNK + (i % 256) * 8;
            let v = (tag << 56) | i;
            match c.rwrite(at, &v.to_le_bytes()) {
                Ok(()) => {
                    model.insert(at, v);
                }
                // Paused longer than the client's patience (a slow, loaded
                // host): not acknowledged, so not in the model; nothing else
                // may fail.
                Err(RackClientError::StillMoving { .. })
                | Err(RackClientError::Node {
                    source: clio::ClioError::Busy { .. },
                    ..
                }) => {}
                Err(e) => panic!("write at {at:#x}: {e}"),
            }
            i += 1;
            if let Some(p) = pause {
                std::thread::sleep(p);
            }
        }
        model
    })
}

struct Setup {
    rack: LocalRack,
    c: Arc<Client>,
    hot: u64,
    cold: u64,
    /// Node 1's load with both regions, node 2's, and one chunk's share (ppm).
    loads: (u64, u64, u64),
}

/// Two nodes; a hot region (`hot_chunks` touched) and a cold one
/// (`cold_chunks`) on node 1, an untouched one on node 2; each chunk filled.
fn setup(dir: &tempfile::TempDir, hot_chunks: u64, cold_chunks: u64) -> Setup {
    let rack = LocalRack::start_keyless(
        2,
        &board(),
        "127.0.0.1:0".parse().unwrap(),
        &dir.path().join("rack.log"),
        1000,
    )
    .unwrap();
    let c =
        Arc::new(RackClient::new(rack.config(), rack.controller_addr(), UdpLinks, cfg()).unwrap());
    // Both nodes reported their pressure before `start` returned (a tie in
    // regions is broken by it).
    let mut ctl = clio_rack::service::Client::connect(rack.controller_addr()).unwrap();
    // Least loaded first: node 1, node 2, node 1 (equal reports: lower id).
    let hot = c.ralloc(VREGION_BYTES).unwrap();
    let _other = c.ralloc(VREGION_BYTES).unwrap();
    let cold = c.ralloc(VREGION_BYTES).unwrap();
    assert_eq!(c.owner_of((hot >> 30) as u32), Some(1));
    assert_eq!(c.owner_of((cold >> 30) as u32), Some(1));
    let fill = vec![0xa5u8; CHUNK as usize];
    for i in 0..hot_chunks {
        c.rwrite(hot + i * CHUNK, &fill).unwrap();
    }
    for i in 0..cold_chunks {
        c.rwrite(cold + i * CHUNK, &fill).unwrap();
    }
    // Wait for heartbeats that show the touched chunks.
    let deadline = Instant::now() + Duration::from_secs(10);
    let loads = loop {
        std::thread::sleep(Duration::from_millis(250));
        if let (Some(a), Some(b)) = (load_ppm(&mut ctl, 1), load_ppm(&mut ctl, 2)) {
            let per = a.saturating_sub(b) / (hot_chunks + cold_chunks);
            if per > 0 {
                break (a, b, per);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no pressure reports show the chunks"
        );
    };
    Setup {
        rack,
        c,
        hot,
        cold,
        loads,
    }
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_pressed_node_moves_its_least_used_region_on_its_own_and_writers_lose_nothing() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let (hot_chunks, cold_chunks) = (4, 2);
    let s = setup(&dir, hot_chunks, cold_chunks);
    let (c, hot, cold) = (&s.c, s.hot, s.cold);
    let (cold_r, hot_r) = ((cold >> 30) as u32, (hot >> 30) as u32);
    // The hot region is written as fast as it goes, the cold one now and then:
    // both are checked against their writers' models.
    let stop = Arc::new(AtomicBool::new(false));
    let writers = [
        writer(
            c,
            hot,
            hot_chunks,
            Some(Duration::from_micros(200)),
            &stop,
            1,
        ),
        writer(
            c,
            cold,
            cold_chunks,
            Some(Duration::from_millis(2)),
            &stop,
            2,
        ),
    ];
    // Let the nodes report who is hot.
    std::thread::sleep(Duration::from_millis(400));
    // Marks: node 1 with both regions is over `high`; with only the hot one
    // it is under (no second move); node 2 is under `low` (and stays under
    // `high` after receiving the cold one, so nothing moves back).
    let (_, b, per) = s.loads;
    let high = (b + per * (hot_chunks + cold_chunks / 2)) as u32;
    let low = (b + per * (cold_chunks + 1)) as u32;
    let bal = Balancer::start(
        s.rack.config(),
        s.rack.controller_addr(),
        UdpLinks,
        cfg(),
        BalancerConfig {
            period: Duration::from_millis(100),
            high_ppm: high,
            low_ppm: low,
            ..BalancerConfig::default()
        },
    )
    .unwrap();
    wait_for("a migration", 120, || !bal.stats().moved.is_empty());
    // The writers keep going across the switch, then stop.
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let models: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let st = bal.stats();
    bal.stop();
    let m = st.moved[0];
    assert_eq!((m.region, m.from, m.to), (cold_r, 1, 2), "{st:?}");
    // The chunks, then the blocks the writer dirtied during the copy.
    let extra = m.bytes - cold_chunks * CHUNK;
    assert_eq!(extra % clio_control::DIRTY_BLOCK, 0, "{m:?}");
    assert_eq!(st.moved.len(), 1, "no second move: {st:?}");
    // The controller, and the client after following MOVED, agree.
    let mut ctl = clio_rack::service::Client::connect(s.rack.controller_addr()).unwrap();
    assert!(
        matches!(ctl.call(Message::Lookup { region: cold_r }).unwrap(),
        Message::Owner(p) if p.node == 2)
    );
    assert_eq!(c.owner_of(cold_r), Some(2));
    assert_eq!(c.owner_of(hot_r), Some(1));
    // Node 1 answers MOVED for the old copy and holds no chunk of it any more.
    {
        let n1 = s.rack.nodes()[0].lock();
        assert!(n1
            .gates()
            .iter()
            .all(|g| g.region == cold_r && g.state == GateState::Moved));
        assert!(n1.chunks_of(cold_r).is_empty());
        assert_eq!(n1.chunks_of(hot_r).len() as u64, hot_chunks);
    }
    assert_eq!(
        s.rack.nodes()[1].lock().chunks_of(cold_r).len() as u64,
        cold_chunks
    );
    // Nothing lost: every acknowledged word reads back, and the rest of the
    // cold region's fill moved with it.
    for model in &models {
        for (&at, &v) in model {
            let mut w = [0u8; 8];
            c.rread(at, &mut w).unwrap();
            assert_eq!(u64::from_le_bytes(w), v, "word at {at:#x}");
        }
    }
    let mut tail = vec![0u8; 4096];
    c.rread(cold + CHUNK - 4096, &mut tail).unwrap();
    assert!(tail.iter().all(|&b| b == 0xa5));
    // A fresh chunk of the moved region is taken on its new owner.
    c.rwrite(cold + cold_chunks * CHUNK, b"new chunk").unwrap();
    assert_eq!(
        s.rack.nodes()[1].lock().chunks_of(cold_r).len() as u64,
        cold_chunks + 1
    );
}

#[test]
fn a_target_that_dies_mid_migration_rolls_the_move_back() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    // A large cold region: its copy takes long enough to kill the target in it.
    let (hot_chunks, cold_chunks) = (2, 8);
    let mut s = setup(&dir, hot_chunks, cold_chunks);
    let (c, cold) = (Arc::clone(&s.c), s.cold);
    let cold_r = (cold >> 30) as u32;
    let stop = Arc::new(AtomicBool::new(false));
    let w = writer(&c, cold, 2, Some(Duration::from_millis(2)), &stop, 3);
    std::thread::sleep(Duration::from_millis(400));
    let (a, b, _) = s.loads;
    let bal = Balancer::start(
        s.rack.config(),
        s.rack.controller_addr(),
        UdpLinks,
        cfg(),
        BalancerConfig {
            period: Duration::from_millis(100),
            high_ppm: ((a + b) / 2) as u32,
            low_ppm: ((a + b) / 2) as u32,
            ..BalancerConfig::default()
        },
    )
    .unwrap();
    // The copy has started once node 1 gates the region (tracking, then paused).
    let n1 = s.rack.nodes()[0].clone();
    wait_for("the pause", 120, || {
        n1.lock()
            .gates()
            .iter()
            .any(|g| matches!(g.state, GateState::Paused | GateState::Tracking))
    });
    s.rack.kill(2).unwrap();
    wait_for("the rollback", 120, || bal.stats().rolled_back > 0);
    let st = bal.stats();
    bal.stop();
    assert!(st.moved.is_empty(), "{st:?}");
    // Never half: the controller names node 1, which serves the region again.
    let mut ctl = clio_rack::service::Client::connect(s.rack.controller_addr()).unwrap();
    assert!(
        matches!(ctl.call(Message::Lookup { region: cold_r }).unwrap(),
        Message::Owner(p) if p.node == 1)
    );
    assert!(n1.lock().gates().is_empty(), "gates reopened");
    assert_eq!(n1.lock().chunks_of(cold_r).len() as u64, cold_chunks);
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    let model = w.join().unwrap();
    for (&at, &v) in &model {
        let mut word = [0u8; 8];
        c.rread(at, &mut word).unwrap();
        assert_eq!(u64::from_le_bytes(word), v, "word at {at:#x}");
    }
    assert_eq!(c.owner_of(cold_r), Some(1));
}

#[test]
fn a_replicated_region_that_lost_its_backup_gets_a_new_one_and_survives_its_primary() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rack = LocalRack::start_keyless(
        3,
        &board(),
        "127.0.0.1:0".parse().unwrap(),
        &dir.path().join("rack.log"),
        1000,
    )
    .unwrap();
    let quick = ClientConfig {
        request_timeout_ns: 200_000_000,
        ..cfg()
    };
    let c =
        Arc::new(RackClient::new(rack.config(), rack.controller_addr(), UdpLinks, quick).unwrap());
    let va = c.ralloc_replicated(2 * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let (primary, Some(backup)) = c.copies_of(region).unwrap() else {
        panic!("two copies")
    };
    let third = 6 - primary - backup;
    c.rwrite(va, &[7u8; 64]).unwrap();
    c.rwrite(va + CHUNK, &[7u8; 64]).unwrap();
    let bal = rack
        .start_balancer(
            cfg(),
            BalancerConfig {
                period: Duration::from_millis(100),
                high_ppm: 1_000_000,
                low_ppm: 0,
                ..BalancerConfig::default()
            },
        )
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = common::spawn_writers(&c, va, 512, 100, &stop);
    // The backup dies: the primary serves alone, then the controller makes a
    // new backup on the third node while the writers write.
    rack.kill(backup).unwrap();
    wait_for("a new backup", 120, || !bal.stats().replicated.is_empty());
    let st = bal.stats();
    let m = st.replicated[0];
    assert_eq!((m.region, m.from, m.to), (region, primary, third), "{st:?}");
    assert!(m.bytes >= 2 * CHUNK, "{m:?}");
    assert_eq!(
        (m.bytes - 2 * CHUNK) % clio_control::DIRTY_BLOCK,
        0,
        "{m:?}"
    );
    // The controller records the copy as a re-replication, ended by its commit.
    let copies = common::copies_recorded(rack.controller_addr(), region);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert_eq!(
        (copies[0].from, copies[0].to, copies[0].outcome),
        (primary, third, MigrationOutcome::Completed),
        "{copies:?}"
    );
    assert_eq!(copies[0].total_bytes, 2 * CHUNK);
    // The writers' next changes learn it and write to both again.
    wait_for("the client to write to both", 120, || {
        c.copies_of(region) == Some((primary, Some(third)))
    });
    std::thread::sleep(Duration::from_millis(200));
    // Now the primary dies too: the new backup is promoted and holds every
    // acknowledged write.
    rack.kill(primary).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let model = common::join_writers(writers);
    bal.stop();
    assert_eq!(c.copies_of(region), Some((third, None)));
    let mut ctl = clio_rack::service::Client::connect(rack.controller_addr()).unwrap();
    assert!(
        matches!(ctl.call(Message::LookupReplicas { region }).unwrap(),
        Message::ReplicaState(r) if r.primary == third && r.backup == 0)
    );
    assert!(!model.is_empty());
    for (&at, &v) in &model {
        let mut w = [0u8; 8];
        c.rread(at, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w), v, "word at {at:#x}");
    }
    // Bytes written before the backup was lost were copied too.
    let mut b = [0u8; 64];
    c.rread(va + CHUNK + 4096, &mut b).unwrap();
}

#[test]
fn a_new_backup_killed_during_the_tracked_copy_rolls_back_or_completes_never_half() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut rack = LocalRack::start_keyless(
        3,
        &board(),
        "127.0.0.1:0".parse().unwrap(),
        &dir.path().join("rack.log"),
        1000,
    )
    .unwrap();
    let quick = ClientConfig {
        request_timeout_ns: 200_000_000,
        ..cfg()
    };
    let c =
        Arc::new(RackClient::new(rack.config(), rack.controller_addr(), UdpLinks, quick).unwrap());
    // A large region: its copy takes long enough to kill the new backup in it.
    let chunks = 8;
    let va = c.ralloc_replicated(chunks * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let (primary, Some(backup)) = c.copies_of(region).unwrap() else {
        panic!("two copies")
    };
    let third = 6 - primary - backup;
    let fill = vec![0x5au8; CHUNK as usize];
    for i in 0..chunks {
        c.rwrite(va + i * CHUNK, &fill).unwrap();
    }
    let bal = rack
        .start_balancer(
            cfg(),
            BalancerConfig {
                period: Duration::from_millis(100),
                high_ppm: 1_000_000,
                low_ppm: 0,
                ..BalancerConfig::default()
            },
        )
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = common::spawn_writers(&c, va, 512, 100, &stop);
    // The backup dies; once the controller has declared it, the balancer
    // copies the region to the third node with the primary tracking writes.
    rack.kill(backup).unwrap();
    let p = rack.nodes()[usize::from(primary) - 1].clone();
    wait_for("the tracked copy", 120, || {
        p.lock()
            .gates()
            .iter()
            .any(|g| g.region == region && g.state == GateState::Tracking)
    });
    let tracked_at_kill = p.lock().stats().tracked;
    rack.kill(third).unwrap();
    wait_for("the re-replication to end", 120, || {
        let st = bal.stats();
        st.rolled_back > 0 || !st.replicated.is_empty()
    });
    // The writers go on past the outcome (and past the third node's death).
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let model = common::join_writers(writers);
    let st = bal.stats();
    bal.stop();
    let completed = !st.replicated.is_empty();
    if completed {
        // The commit came first: the third node was the backup, then died.
        let m = st.replicated[0];
        assert_eq!((m.region, m.from, m.to), (region, primary, third), "{st:?}");
    } else {
        assert!(st.rolled_back > 0, "{st:?}");
    }
    // The controller's record agrees: a completed copy only if committed.
    let copies = common::copies_recorded(rack.controller_addr(), region);
    assert!(!copies.is_empty());
    for m in &copies {
        assert_eq!((m.from, m.to), (primary, third), "{copies:?}");
    }
    assert_eq!(
        copies
            .iter()
            .filter(|m| m.outcome == MigrationOutcome::Completed)
            .count(),
        usize::from(completed),
        "{copies:?}"
    );
    eprintln!(
        "outcome: {}; {tracked_at_kill} tracked changes at the kill; {st:?}",
        if completed {
            "completed"
        } else {
            "rolled back"
        }
    );
    // Never half: the controller names the primary alone (the third node's
    // copy was never committed, or it was and then died), the primary holds
    // every chunk and serves changes again (no gate left paused or tracking).
    let mut ctl = clio_rack::service::Client::connect(rack.controller_addr()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match ctl.call(Message::LookupReplicas { region }).unwrap() {
            Message::ReplicaState(r) if r.primary == primary && r.backup == 0 => break,
            Message::ReplicaState(r) => {
                assert!(r.primary == primary && r.backup == third, "{r:?}");
                assert!(completed, "a backup the balancer never committed: {r:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(Instant::now() < deadline, "the dead backup stays named");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(p.lock().chunks_of(region).len() as u64, chunks);
    assert!(
        p.lock()
            .gates()
            .iter()
            .all(|g| !matches!(g.state, GateState::Tracking | GateState::Paused)),
        "{:?}",
        p.lock().gates()
    );
    // No acknowledged write lost, the rest of the fill intact, and the
    // region takes changes again.
    assert!(!model.is_empty());
    for (&at, &v) in &model {
        let mut w = [0u8; 8];
        c.rread(at, &mut w).unwrap();
        assert_eq!(u64::from_le_bytes(w), v, "word at {at:#x}");
    }
    let mut tail = vec![0u8; 4096];
    c.rread(va + chunks * CHUNK - 4096, &mut tail).unwrap();
    assert!(tail.iter().all(|&b| b == 0x5a));
    c.rwrite(va + 5 * CHUNK, b"after").unwrap();
    let mut b = [0u8; 5];
    c.rread(va + 5 * CHUNK, &mut b).unwrap();
    assert_eq!(&b, b"after");
    assert_eq!(c.copies_of(region), Some((primary, None)));
}
