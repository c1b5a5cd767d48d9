//! The SDK side and the node side together: a local rack (controller and
//! emulated nodes over real UDP), a `RackClient` in process and over UDP.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clio::ClientConfig;
use clio_control::{GateState, Message, VREGION_BYTES};
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{RackClient, RackClientError, UdpLinks};

use common::{board, in_process};

fn start(m: usize, dir: &tempfile::TempDir) -> LocalRack {
    common::start(m, dir, 1000)
}

fn pattern(seed: u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (seed.wrapping_mul(31).wrapping_add(i as u64 * 7) >> 1) as u8)
        .collect()
}

#[test]
fn an_allocation_spans_regions_and_nodes_and_requests_split_at_edges() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(3, &dir);
    let c = in_process(&r);
    // 3 GiB: three regions, least-loaded first: one on each node.
    let va = c.ralloc(3 * VREGION_BYTES).unwrap();
    let owners: Vec<_> = (0..3)
        .map(|i| c.owner_of((va >> 30) as u32 + i).unwrap())
        .collect();
    assert_eq!(owners, [1, 2, 3]);
    // A write across the region 0/1 boundary and one across a chunk edge.
    let edge = va + VREGION_BYTES - 100;
    let data = pattern(1, 300);
    c.rwrite(edge, &data).unwrap();
    let chunk_edge = va + 2 * VREGION_BYTES + CHUNK - 5;
    c.rwrite(chunk_edge, &pattern(2, 10)).unwrap();
    let mut back = vec![0u8; 300];
    c.rread(edge, &mut back).unwrap();
    assert_eq!(back, data);
    let mut back = vec![0u8; 10];
    c.rread(chunk_edge, &mut back).unwrap();
    assert_eq!(back, pattern(2, 10));
    // The two halves really live on two boards: node 1 holds the first 100 bytes.
    let n1 = r.nodes()[0].lock().board().stats().fast.packets_in;
    let n2 = r.nodes()[1].lock().board().stats().fast.packets_in;
    assert!(n1 > 0 && n2 > 0);
    // Atomics route to the word's node.
    let w = va + 2 * VREGION_BYTES + 64;
    assert_eq!(c.faa(w, 5).unwrap(), 0);
    assert_eq!(c.cas(w, 5, 9).unwrap(), 5);
    assert_eq!(c.tas(w).unwrap(), 9);
    assert!(matches!(
        c.faa(w + 4, 1),
        Err(RackClientError::InvalidArgument { what: "va", .. })
    ));
    // A fence waits on all three nodes this client touched.
    assert_eq!(c.rfence().unwrap(), 3);
    assert_eq!(c.rrelease().unwrap(), 3);
    // Outside the allocation.
    let err = c.rread(va + 3 * VREGION_BYTES, &mut [0u8; 8]).unwrap_err();
    assert!(matches!(err, RackClientError::Unallocated { .. }), "{err}");
    // Free: regions go back to the controller and can be allocated again.
    c.rfree(va).unwrap();
    assert!(matches!(
        c.rfree(va),
        Err(RackClientError::Unallocated { .. })
    ));
    assert_eq!(c.ralloc(1).unwrap(), va);
}

#[test]
fn over_udp_a_client_reaches_every_node() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = RackClient::new(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        ClientConfig::from_board(&board()),
    )
    .unwrap();
    let va = c.ralloc(2 * VREGION_BYTES).unwrap();
    let at = va + VREGION_BYTES - 2000;
    let data = pattern(3, 4000);
    c.rwrite(at, &data).unwrap();
    let mut back = vec![0u8; 4000];
    c.rread(at, &mut back).unwrap();
    assert_eq!(back, data);
    assert_eq!(c.rfence().unwrap(), 2);
    // Migration over UDP: the gate travels as a control datagram to the node's port.
    let m = c.migrate((va >> 30) as u32, 2).unwrap();
    assert_eq!((m.from, m.to, m.bytes), (1, 2, CHUNK));
    c.rread(at, &mut back).unwrap();
    assert_eq!(back, data);
}

#[test]
fn an_unreachable_controller_is_named() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dead = sock.local_addr().unwrap();
    drop(sock);
    let dir = tempfile::tempdir().unwrap();
    let r = start(1, &dir);
    let c = RackClient::new(
        r.config(),
        dead,
        r.links(),
        ClientConfig::from_board(&board()),
    )
    .unwrap();
    c.set_controller_timeout(Duration::from_millis(20), 2);
    let err = c.ralloc(100).unwrap_err();
    assert!(matches!(err, RackClientError::Controller { addr, .. } if addr == dead));
    assert!(err.to_string().contains(&dead.to_string()), "{err}");
}

#[test]
fn migration_under_concurrent_writers_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = Arc::new(in_process(&r));
    let va = c.ralloc(2 * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let from = c.owner_of(region).unwrap();
    let to = 3 - from;
    // Touch both chunks.
    c.rwrite(va, &[1; 64]).unwrap();
    c.rwrite(va + CHUNK, &[1; 64]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Two writers, each owning its own words: the model is what each last wrote
    // and got acknowledged.
    let writers = common::spawn_writers(&c, va, 1024, 200, &stop);
    std::thread::sleep(Duration::from_millis(20));
    let m = c.migrate(region, to).unwrap();
    assert_eq!((m.from, m.to), (from, to));
    // Both chunks, then the blocks the writers dirtied during the copy.
    assert!(m.bytes >= 2 * CHUNK, "{m:?}");
    assert_eq!(c.owner_of(region), Some(to));
    stop.store(true, Ordering::Relaxed);
    let model = common::join_writers(writers);
    for (at, v) in &model {
        let mut b = [0u8; 8];
        c.rread(*at, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), *v, "word at {at:#x}");
    }
    // The source answers MOVED to its old ranges; the controller agrees.
    let src = r.nodes()[usize::from(from) - 1].lock();
    assert!(src
        .gates()
        .iter()
        .all(|g| g.state == GateState::Moved && g.region == region));
    assert_eq!(src.gates().len(), 2);
}

#[test]
fn a_failed_migration_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(2, &dir);
    let c = in_process(&r);
    let va = c.ralloc(CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let from = c.owner_of(region).unwrap();
    let to = 3 - from;
    c.rwrite(va, b"before").unwrap();
    // The target is declared dead before the switch: the controller refuses the
    // move, the source reopens, the data stays where it was.
    r.silence(to);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut ctl = clio_rack::service::Client::connect(r.controller_addr()).unwrap();
    // Wait for the controller to declare it dead on its own clock.
    while !matches!(
        ctl.call(Message::NodeStatus { node: to }).unwrap(),
        Message::NodeReport { live: false, .. }
    ) {
        assert!(std::time::Instant::now() < deadline, "never declared dead");
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = r.nodes()[usize::from(to) - 1].lock().pressure();
    let err = c.migrate(region, to).unwrap_err();
    assert!(
        matches!(
            err,
            RackClientError::Refused {
                code: clio_control::ErrorCode::NodeDead,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(c.owner_of(region), Some(from));
    assert!(r.nodes()[usize::from(from) - 1].lock().gates().is_empty());
    c.rwrite(va + 6, b" after").unwrap();
    let mut b = [0u8; 12];
    c.rread(va, &mut b).unwrap();
    assert_eq!(&b, b"before after");
    // The target's copy was freed again.
    assert_eq!(r.nodes()[usize::from(to) - 1].lock().pressure(), before);
}

#[test]
fn a_source_that_dies_mid_migration_leaves_the_region_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(2, &dir);
    let cfg = ClientConfig {
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(&board())
    };
    let c = RackClient::new(r.config(), r.controller_addr(), UdpLinks, cfg).unwrap();
    let va = c.ralloc(CHUNK).unwrap();
    let region = (va >> 30) as u32;
    c.rwrite(va, b"data").unwrap();
    let from = c.owner_of(region).unwrap();
    // The source's board stops answering (its server is gone) before the copy.
    r.kill(from).unwrap();
    let err = c.migrate(region, 3 - from).unwrap_err();
    assert!(
        matches!(&err, RackClientError::Gate { node, .. } | RackClientError::Node { node, .. } if *node == from),
        "{err}"
    );
    // Never half: the controller still names the source, the cache too.
    let mut ctl = clio_rack::service::Client::connect(r.controller_addr()).unwrap();
    assert!(matches!(
        ctl.call(Message::Lookup { region }).unwrap(),
        Message::Owner(p) if p.node == from
    ));
    assert_eq!(c.owner_of(region), Some(from));
}

#[test]
fn a_node_declared_dead_is_fenced_until_it_says_hello_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(2, &dir);
    let mut ctl = clio_rack::service::Client::connect(r.controller_addr()).unwrap();
    r.silence(2);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let dead_epoch = loop {
        if let Message::NodeReport {
            live: false, epoch, ..
        } = ctl.call(Message::NodeStatus { node: 2 }).unwrap()
        {
            break epoch;
        }
        assert!(std::time::Instant::now() < deadline, "never declared dead");
        std::thread::sleep(Duration::from_millis(50));
    };
    // The old incarnation's heartbeats are refused (its epoch is stale).
    assert!(matches!(
        ctl.call(Message::Heartbeat {
            node: 2,
            epoch: 1,
            pressure: clio_control::Pressure {
                used_bytes: 0,
                free_bytes: 1
            }
        })
        .unwrap(),
        Message::Refused {
            code: clio_control::ErrorCode::StaleEpoch,
            ..
        }
    ));
    // No new regions land on it: a 1 GiB allocation goes to node 1.
    let c = in_process(&r);
    let va = c.ralloc(1).unwrap();
    assert_eq!(c.owner_of((va >> 30) as u32), Some(1));
    // Hello again: an epoch above the fence, live again.
    let e = r.rejoin(2).unwrap();
    assert!(e > dead_epoch, "{e} > {dead_epoch}");
    assert!(matches!(
        ctl.call(Message::NodeStatus { node: 2 }).unwrap(),
        Message::NodeReport { live: true, epoch, .. } if epoch == e
    ));
    // An unknown node id is refused by name.
    assert!(matches!(
        ctl.call(Message::NodeStatus { node: 9 }).unwrap(),
        Message::Refused {
            code: clio_control::ErrorCode::UnknownNode,
            field: clio_control::Field::NodeStatusNode
        }
    ));
}

#[test]
fn locks_route_to_each_words_node_and_exclude_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(3, &dir);
    let c = Arc::new(in_process(&r));
    let va = c.ralloc(3 * VREGION_BYTES).unwrap();
    // One lock word in each region: one on each node.
    let words: Vec<u64> = (0..3).map(|i| va + i * VREGION_BYTES + 128).collect();
    for &w in &words {
        c.rlock(w).unwrap();
    }
    for (i, &w) in words.iter().enumerate() {
        let mut b = [0u8; 8];
        c.rread(w, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), 1, "lock word {i} held");
    }
    // The lock word really is on its node: that board saw a lock request.
    for (i, n) in r.nodes().iter().enumerate() {
        assert!(
            n.lock().board().stats().fast.packets_in > 0,
            "node {}",
            i + 1
        );
    }
    // A second thread waits on the node-2 word until it is released.
    let released = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (c, released, w) = (Arc::clone(&c), Arc::clone(&released), words[1]);
        std::thread::spawn(move || {
            c.rlock(w).unwrap();
            let after = released.load(Ordering::SeqCst);
            c.runlock(w).unwrap();
            after
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    released.store(true, Ordering::SeqCst);
    c.runlock(words[1]).unwrap();
    assert!(waiter.join().unwrap(), "the lock was granted while held");
    c.runlock(words[0]).unwrap();
    c.runlock(words[2]).unwrap();
    for &w in &words {
        assert_eq!(c.cas(w, 0, 0).unwrap(), 0, "released");
    }
    // Lock words are 8-byte aligned words.
    assert!(matches!(
        c.rlock(words[0] + 4),
        Err(RackClientError::InvalidArgument { what: "va", .. })
    ));
}

#[test]
fn a_pressed_node_sheds_its_coldest_region_while_a_writer_keeps_the_hot_one() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = Arc::new(in_process(&r));
    // Two whole regions; the second starts on node 2 and is moved to node 1,
    // so node 1 holds both: a hot one and a cold one (touched once per chunk).
    // The hot one has the lower index: a tie would pick it, so only the
    // request counts make the cold one go.
    let hot = c.ralloc(VREGION_BYTES).unwrap();
    let cold = c.ralloc(VREGION_BYTES).unwrap();
    let (cold_r, hot_r) = ((cold >> 30) as u32, (hot >> 30) as u32);
    assert!(hot_r < cold_r);
    assert_eq!(c.owner_of(hot_r), Some(1));
    if c.owner_of(cold_r) != Some(1) {
        c.migrate(cold_r, 1).unwrap();
    }
    for i in 0..4 {
        c.rwrite(cold + i * CHUNK, &pattern(i, 64)).unwrap();
    }
    // The hot region is written all along by another thread.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (c, stop) = (Arc::clone(&c), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut model = BTreeMap::new();
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) || i < 100 {
                let at = hot + (i % 4) * CHUNK + (i % 512) * 8;
                c.rwrite(at, &i.to_le_bytes()).unwrap();
                model.insert(at, i);
                i += 1;
            }
            model
        })
    };
    // Node 1 reports its pages in use, more than node 2.
    let mut ctl = clio_rack::service::Client::connect(r.controller_addr()).unwrap();
    let mut used = |node| match ctl.call(Message::NodeStatus { node }).unwrap() {
        Message::NodeReport {
            pressure: Some(p), ..
        } => Some(p.used_bytes),
        _ => None,
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !matches!((used(1), used(2)), (Some(a), Some(b)) if a > b) {
        assert!(std::time::Instant::now() < deadline, "no pressure reports");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Marks no node passes (none above 1000‰ used, none below 0‰): nothing moves.
    assert!(c.shed_pressure(1000, 0).unwrap().is_none());
    // Node 1 is above 0‰ used and node 2 below 1000‰: node 1 sheds its coldest.
    let m = c
        .shed_pressure(0, 1000)
        .unwrap()
        .expect("a region was shed");
    stop.store(true, Ordering::SeqCst);
    let model = writer.join().unwrap();
    assert_eq!((m.region, m.from, m.to), (cold_r, 1, 2));
    assert_eq!(c.owner_of(cold_r), Some(2));
    assert_eq!(c.owner_of(hot_r), Some(1));
    for i in 0..4 {
        let mut b = vec![0u8; 64];
        c.rread(cold + i * CHUNK, &mut b).unwrap();
        assert_eq!(b, pattern(i, 64), "cold chunk {i} after the move");
    }
    for (&at, &v) in &model {
        let mut b = [0u8; 8];
        c.rread(at, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), v, "hot word at {at:#x}");
    }
}
