//! Replicated regions end to end: a local rack (controller and emulated nodes
//! over real UDP) and a client over UDP. A node is killed under a concurrent
//! write load; every acknowledged write is checked against a model.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clio::ClientConfig;
use clio_control::VREGION_BYTES;
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{RackClient, RackClientError, UdpLinks};

/// Death is declared after this long without heartbeats (sent every
/// 100 ms); long enough that a loaded host's late heartbeat is not a death.
const DEAD_AFTER_MS: u64 = 1000;

use common::board;

fn start(m: usize, dir: &tempfile::TempDir) -> LocalRack {
    common::start(m, dir, DEAD_AFTER_MS)
}

fn client(r: &LocalRack) -> RackClient<clio::backend::UdpTransport> {
    let cfg = ClientConfig {
        // A dead node is noticed within this bound (the controller's verdict
        // follows within dead_after_ms).
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(&board())
    };
    RackClient::new(r.config(), r.controller_addr(), UdpLinks, cfg).unwrap()
}

fn read_word(c: &RackClient<clio::backend::UdpTransport>, at: u64) -> u64 {
    let mut b = [0u8; 8];
    c.rread(at, &mut b).unwrap();
    u64::from_le_bytes(b)
}

/// Two writers own alternate words over two chunks and a third adds to a
/// counter; `kill` picks which copy dies 40 ms into the load. Returns the
/// model check's word count.
fn kill_under_load(kill_primary: bool) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(3, &dir);
    let c = Arc::new(client(&r));
    let va = c.ralloc_replicated(2 * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let counter = va + CHUNK + 4096;
    c.rwrite(va, &[0; 64]).unwrap();
    c.rwrite(counter, &0u64.to_le_bytes()).unwrap();
    let (primary, backup) = c.copies_of(region).unwrap();
    let backup = backup.expect("replicated");
    assert_ne!(primary, backup);
    let stop = Arc::new(AtomicBool::new(false));
    let writers = common::spawn_writers(&c, va, 512, 100, &stop);
    let adder = {
        let c = Arc::clone(&c);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut acked = 0u64;
            while !stop.load(Ordering::Relaxed) || acked < 50 {
                c.faa(counter, 1).unwrap();
                acked += 1;
            }
            acked
        })
    };
    std::thread::sleep(Duration::from_millis(40));
    let victim = if kill_primary { primary } else { backup };
    let killed = Instant::now();
    r.kill(victim).unwrap();
    // Serving again: a write to the region acknowledged after the kill.
    c.rwrite(va + 8 * 1000, &[7; 8]).unwrap();
    let pause = killed.elapsed();
    stop.store(true, Ordering::Relaxed);
    let model = common::join_writers(writers);
    let acked = adder.join().unwrap();
    // What is left: the backup promoted, or the primary alone.
    let survivor = if kill_primary { backup } else { primary };
    assert_eq!(c.copies_of(region), Some((survivor, None)));
    for (at, v) in &model {
        assert_eq!(read_word(&c, *at), *v, "word at {at:#x}");
    }
    // Every acknowledged add exactly once: none lost, none applied twice.
    assert_eq!(read_word(&c, counter), acked);
    assert!(pause < Duration::from_secs(5), "{pause:?}");
    // The dead node gets no new regions, and a fence skips it.
    let before = c.rfence().unwrap();
    assert!(before >= 1);
    model.len()
}

#[test]
fn a_killed_primary_fails_over_to_its_backup_and_loses_no_acknowledged_write() {
    assert!(kill_under_load(true) >= 200);
}

#[test]
fn a_killed_backup_leaves_the_primary_serving_alone() {
    assert!(kill_under_load(false) >= 200);
}

#[test]
fn both_copies_hold_every_write_and_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = client(&r);
    let va = c.ralloc_replicated(3 * VREGION_BYTES / 2).unwrap();
    // Across the region edge: two regions, each with two copies.
    let at = va + VREGION_BYTES - 100;
    let data: Vec<u8> = (0..200u32).map(|i| (i * 13) as u8).collect();
    c.rwrite(at, &data).unwrap();
    let w = va + 64;
    assert_eq!(c.faa(w, 5).unwrap(), 0);
    assert_eq!(c.cas(w, 5, 9).unwrap(), 5);
    assert_eq!(c.cas(w, 5, 11).unwrap(), 9);
    assert_eq!(c.tas(w).unwrap(), 9);
    // Each copy, read through its own board: the same bytes.
    for region in [(va >> 30) as u32, (va >> 30) as u32 + 1] {
        let (p, b) = c.copies_of(region).unwrap();
        assert_ne!(Some(p), b);
    }
    let mut back = vec![0u8; 200];
    c.rread(at, &mut back).unwrap();
    assert_eq!(back, data);
    // The backup's board was written as often as the primary's: kill the
    // primary of the first region and read everything from the backup.
    drop(c);
    let mut r = r;
    let c = client(&r);
    let va2 = c.ralloc_replicated(CHUNK).unwrap();
    c.rwrite(va2, &data).unwrap();
    c.faa(va2 + 1024, 41).unwrap();
    c.tas(va2 + 2048).unwrap();
    let (p, _) = c.copies_of((va2 >> 30) as u32).unwrap();
    r.kill(p).unwrap();
    let mut back = vec![0u8; 200];
    c.rread(va2, &mut back).unwrap();
    assert_eq!(back, data);
    assert_eq!(read_word(&c, va2 + 1024), 41);
    assert_eq!(read_word(&c, va2 + 2048), 1);
    // A replicated region does not migrate.
    let err = c.migrate((va2 >> 30) as u32, p).unwrap_err();
    assert!(
        matches!(err, RackClientError::InvalidArgument { what: "region", .. }),
        "{err}"
    );
    // The region that lost a copy is not carved further, and with one live
    // node left there is no second copy to be had.
    let err = c.ralloc_replicated(64).unwrap_err();
    assert!(
        matches!(
            err,
            RackClientError::Refused {
                code: clio_control::ErrorCode::NoCapacity,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn small_allocations_share_a_region_and_free_it_with_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = client(&r);
    let a = c.ralloc(100).unwrap();
    let b = c.ralloc(1000).unwrap();
    // Carved from one region, aligned, apart.
    assert_eq!(a >> 30, b >> 30);
    assert_eq!(b % 64, 0);
    assert!(b >= a + 100);
    c.rwrite(a, &[1; 100]).unwrap();
    c.rwrite(b, &[2; 1000]).unwrap();
    let mut x = [0u8; 100];
    c.rread(a, &mut x).unwrap();
    assert_eq!(x, [1; 100]);
    // Big allocations get their own regions.
    let big = c.ralloc(2 * VREGION_BYTES).unwrap();
    assert_ne!(big >> 30, a >> 30);
    // A replicated small allocation comes from a replicated region.
    let rep = c.ralloc_replicated(64).unwrap();
    assert_ne!(rep >> 30, a >> 30);
    assert!(c.copies_of((rep >> 30) as u32).unwrap().1.is_some());
    assert!(c.copies_of((a >> 30) as u32).unwrap().1.is_none());
    c.rfree(a).unwrap();
    c.rfree(b).unwrap();
    assert!(matches!(
        c.rfree(a),
        Err(RackClientError::Unallocated { .. })
    ));
    // Still the arena: kept. Fill it past its end and the old one is released
    // once empty.
    let region = (a >> 30) as u32;
    assert!(c.copies_of(region).is_some());
    let mut last = 0;
    for _ in 0..17 {
        last = c.ralloc(64 << 20).unwrap();
    }
    assert_ne!(last >> 30, a >> 30);
    assert!(c.copies_of(region).is_some(), "16 live allocations hold it");
}

#[test]
fn a_held_lock_stays_held_on_the_promoted_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(3, &dir);
    let holder = client(&r);
    let va = holder.ralloc_replicated(CHUNK).unwrap();
    let region = (va >> 30) as u32;
    let w = va + 256;
    holder.rlock(w).unwrap();
    // Released and taken again: both copies follow each change.
    holder.runlock(w).unwrap();
    holder.rlock(w).unwrap();
    let (p, b) = holder.copies_of(region).unwrap();
    let b = b.expect("replicated");
    r.kill(p).unwrap();
    // On the promoted copy the word is still held: a CAS that would take it fails.
    assert_eq!(holder.cas(w, 0, 7).unwrap(), 1);
    assert_eq!(holder.copies_of(region).unwrap(), (b, None));
    // Its holder releases it there; then it can be taken again.
    holder.runlock(w).unwrap();
    assert_eq!(read_word(&holder, w), 0);
    holder.rlock(w).unwrap();
    assert_eq!(read_word(&holder, w), 1);
    holder.runlock(w).unwrap();
}

#[test]
fn a_lock_taken_just_before_the_primary_dies_is_held_once() {
    // Two threads contend for one replicated lock word while the primary dies;
    // each critical section bumps a plain word twice (read, write, read, write):
    // mutual exclusion across the failover means no bump is lost.
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(3, &dir);
    let c = Arc::new(client(&r));
    let va = c.ralloc_replicated(CHUNK).unwrap();
    let (lockw, data) = (va + 64, va + 4096);
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (c, stop) = (Arc::clone(&c), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut done = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    c.rlock(lockw).unwrap();
                    let v = read_word(&c, data);
                    c.rwrite(data, &(v + 1).to_le_bytes()).unwrap();
                    c.runlock(lockw).unwrap();
                    done += 1;
                }
                done
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(40));
    let (p, _) = c.copies_of((va >> 30) as u32).unwrap();
    r.kill(p).unwrap();
    let killed = Instant::now();
    while killed.elapsed() < Duration::from_millis(2 * DEAD_AFTER_MS + 400) {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
    let total: u64 = workers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(total > 0);
    assert_eq!(
        read_word(&c, data),
        total,
        "a critical section overlapped another"
    );
    assert_eq!(read_word(&c, lockw), 0);
}

/// A write to a replicated region whose backup copy stays paused (gated for a
/// copy) for longer than the session's request deadline waits for the pause,
/// as a single-copy write does, instead of failing with the backup's `BUSY`.
#[test]
fn a_replicated_write_waits_out_a_pause_longer_than_its_request_deadline() {
    use clio_control::{GateState, Message};
    use clio_rack::Links;
    let dir = tempfile::tempdir().unwrap();
    let r = start(3, &dir);
    let c = Arc::new(client(&r));
    let va = c.ralloc_replicated(CHUNK).unwrap();
    let region = (va >> 30) as u32;
    c.rwrite(va, &[1; 8]).unwrap();
    let (_, backup) = c.copies_of(region).unwrap();
    let backup = backup.expect("replicated");
    let i = usize::from(backup) - 1;
    let (pid, _, nva) = r.nodes()[i].lock().chunks_of(region)[0];
    let addr = r.config().nodes[i].address;
    let links = r.links();
    let gate = |state| {
        let m = Message::Gate {
            region,
            pid,
            va: nva,
            len: CHUNK,
            state,
        };
        assert!(matches!(
            links.control(1, addr, m).unwrap(),
            Message::Ack { .. }
        ));
    };
    gate(GateState::Paused);
    let writer = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || {
            let t = Instant::now();
            (c.rwrite(va, &[2; 8]), t.elapsed())
        })
    };
    // The pause is the test's input: three of the client's request deadlines.
    std::thread::sleep(Duration::from_millis(600));
    gate(GateState::Open);
    let (res, took) = writer.join().unwrap();
    res.unwrap();
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert_eq!(read_word(&c, va), u64::from_le_bytes([2; 8]));
}

/// A single-copy region's node that stays silent for longer than the session's
/// request deadline, but is alive (an overloaded host), gets a plain write sent
/// again rather than a timeout.
#[test]
fn a_write_to_a_live_but_slow_node_is_sent_again_after_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = Arc::new(client(&r));
    let va = c.ralloc(CHUNK).unwrap();
    c.rwrite(va, &[1; 8]).unwrap();
    let owner = c.owner_of((va >> 30) as u32).unwrap();
    // Holding the node's lock keeps its server thread from answering (its
    // heartbeats stop as well, for less than DEAD_AFTER_MS).
    let node = r.nodes()[usize::from(owner) - 1].clone();
    let held = node.lock();
    let writer = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || {
            let t = Instant::now();
            (c.rwrite(va, &[2; 8]), t.elapsed())
        })
    };
    // The silence is the test's input: three of the client's request deadlines.
    std::thread::sleep(Duration::from_millis(600));
    drop(held);
    let (res, took) = writer.join().unwrap();
    res.unwrap();
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert_eq!(read_word(&c, va), u64::from_le_bytes([2; 8]));
}
