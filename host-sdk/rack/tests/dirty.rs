//! Dirty tracking in the node's gate, and copies that run while writes go on:
//! the gate's record per 64 KiB block, migrations whose writers keep writing
//! during the copy (checked against their models), the bound on rounds, and a
//! target killed during a tracked copy (rolled back, never half).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio::backend::Transport;
use clio::ClientConfig;
use clio_control::{ErrorCode, Field, GateState, Message, DIRTY_BLOCK};
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::node::Gate;
use clio_rack::{CopyPolicy, Links, RackClient, UdpLinks};

use common::board;

fn start(m: usize, dir: &tempfile::TempDir) -> LocalRack {
    common::start(m, dir, 1000)
}

fn in_process(r: &LocalRack) -> Arc<RackClient<clio::backend::InProcess<clio_rack::SharedNode>>> {
    Arc::new(common::in_process(r))
}

/// Two writers whose words lie in every 64 KiB block of `chunks` chunks at
/// `va` (thread `t` owns the words at offset `8 t` of each block), writing
/// until `stop`: each returns its model (the last acknowledged value per word).
fn spread_writers<T>(
    c: &Arc<RackClient<T>>,
    va: u64,
    chunks: u64,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<BTreeMap<u64, u64>>>
where
    T: Transport + Send + 'static,
    RackClient<T>: Send + Sync,
{
    let blocks = chunks * (CHUNK / DIRTY_BLOCK);
    common::spawn_writers_at(c, 2 * blocks, stop, move |t, i| {
        va + (i % blocks) * DIRTY_BLOCK + 8 * t
    })
}

fn check<T: Transport>(c: &RackClient<T>, writers: Vec<JoinHandle<BTreeMap<u64, u64>>>) -> usize {
    let model = common::join_writers(writers);
    for (at, v) in &model {
        let mut b = [0u8; 8];
        c.rread(*at, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), *v, "word at {at:#x}");
    }
    model.len()
}

#[test]
fn a_tracking_gate_records_changes_per_block_and_a_take_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(1, &dir);
    let c = in_process(&r);
    let va = c.ralloc(CHUNK).unwrap();
    let region = (va >> 30) as u32;
    c.rwrite(va, &[1; 8]).unwrap();
    let node = r.nodes()[0].clone();
    let (pid, _, nva) = node.lock().chunks_of(region)[0];
    let links = r.links();
    let addr = r.config().nodes[0].address;
    let gate = |state| Message::Gate {
        region,
        pid,
        va: nva,
        len: CHUNK,
        state,
    };
    let take = || {
        links.control(
            1,
            addr,
            Message::TakeDirty {
                region,
                pid,
                va: nva,
            },
        )
    };
    // No record before tracking: refused naming the field.
    assert_eq!(
        take().unwrap(),
        Message::Refused {
            code: ErrorCode::NotAssigned,
            field: Field::TakeDirtyVa
        }
    );
    assert!(matches!(
        links.control(1, addr, gate(GateState::Tracking)).unwrap(),
        Message::Ack { .. }
    ));
    // Served while tracking: a write in block 0, one across blocks 2-3, an atomic in 63.
    c.rwrite(va + 16, &[2; 8]).unwrap();
    c.rwrite(va + 3 * DIRTY_BLOCK - 4, &[3; 8]).unwrap();
    c.faa(va + 63 * DIRTY_BLOCK, 5).unwrap();
    // Reads mark nothing.
    let mut b = [0u8; 8];
    c.rread(va + 10 * DIRTY_BLOCK, &mut b).unwrap();
    let want = 1 | (1 << 2) | (1 << 3) | (1 << 63);
    assert_eq!(take().unwrap(), Message::Dirty { mask: want });
    assert_eq!(
        take().unwrap(),
        Message::Dirty { mask: 0 },
        "the take cleared it"
    );
    // New chunks of a tracked region are refused Busy.
    assert_eq!(
        links
            .control(
                1,
                addr,
                Message::Bind {
                    region,
                    chunk: 1,
                    pid,
                    va: nva + CHUNK,
                    len: CHUNK,
                    import: false
                }
            )
            .unwrap(),
        Message::Refused {
            code: ErrorCode::Busy,
            field: Field::BindRegion
        }
    );
    // Paused keeps the record for the last round, and answers writes BUSY.
    c.rwrite(va + 5 * DIRTY_BLOCK, &[4; 8]).unwrap();
    node.lock().set_gate(Gate {
        region,
        pid,
        va: nva,
        len: CHUNK,
        state: GateState::Paused,
    });
    assert_eq!(take().unwrap(), Message::Dirty { mask: 1 << 5 });
    // Open drops it.
    links.control(1, addr, gate(GateState::Open)).unwrap();
    assert!(matches!(take().unwrap(), Message::Refused { .. }));
    assert!(node.lock().gates().is_empty());
    // The data went to the board all along.
    c.rread(va + 5 * DIRTY_BLOCK, &mut b).unwrap();
    assert_eq!(b, [4; 8]);
    // A tracking gate longer than one mask is refused at decoding.
    let long = Message::Gate {
        region,
        pid,
        va: nva,
        len: 2 * CHUNK,
        state: GateState::Tracking,
    };
    assert!(matches!(
        links.control(1, addr, long).unwrap(),
        Message::Refused {
            code: ErrorCode::Malformed,
            ..
        }
    ));
    assert!(node.lock().gates().is_empty());
}

#[test]
fn a_migration_copies_while_writers_dirty_every_block_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = in_process(&r);
    let chunks = 2;
    let va = c.ralloc(chunks * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    for i in 0..chunks {
        c.rwrite(va + i * CHUNK, &[1; 64]).unwrap();
    }
    let from = c.owner_of(region).unwrap();
    let src = r.nodes()[usize::from(from) - 1].clone();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spread_writers(&c, va, chunks, &stop);
    std::thread::sleep(Duration::from_millis(20));
    let tracked = src.lock().stats().tracked;
    // Never satisfied (0 dirty blocks is rare under two writers): the bound
    // on rounds ends the tracking, and the last round runs paused.
    let policy = CopyPolicy {
        max_rounds: 3,
        final_blocks: 0,
    };
    let m = c.migrate_with(region, 3 - from, policy).unwrap();
    assert!(m.rounds <= 3, "{m:?}");
    assert!(m.bytes >= chunks * CHUNK, "{m:?}");
    assert_eq!((m.bytes - chunks * CHUNK) % DIRTY_BLOCK, 0, "{m:?}");
    assert!(m.paused <= m.took, "{m:?}");
    // Writes were served (and recorded) during the copy, not held back.
    assert!(
        src.lock().stats().tracked > tracked,
        "no write ran during the copy"
    );
    // The gate that tracked them and held the last round is the fast path's:
    // its GATE_DIRTY reports fed the record the mover took.
    let g = src.lock().board().fast().gate().stats();
    assert!(g.reports > 0 && g.tracked > 0 && g.sets > 0, "{g:?}");
    assert_eq!(c.owner_of(region), Some(3 - from));
    stop.store(true, Ordering::Relaxed);
    let words = check(&c, writers);
    assert!(words as u64 >= 2 * chunks * 64);
    // The source answers MOVED and keeps no record.
    let s = src.lock();
    assert!(s.gates().iter().all(|g| g.state == GateState::Moved));
}

#[test]
fn the_paused_policy_holds_writes_for_the_whole_copy_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let r = start(2, &dir);
    let c = in_process(&r);
    let va = c.ralloc(2 * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    c.rwrite(va, &[1; 64]).unwrap();
    c.rwrite(va + CHUNK, &[1; 64]).unwrap();
    let from = c.owner_of(region).unwrap();
    let src = r.nodes()[usize::from(from) - 1].clone();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spread_writers(&c, va, 2, &stop);
    std::thread::sleep(Duration::from_millis(20));
    let m = c
        .migrate_with(region, 3 - from, CopyPolicy::PAUSED)
        .unwrap();
    assert_eq!((m.rounds, m.bytes), (0, 2 * CHUNK));
    assert_eq!(src.lock().stats().tracked, 0, "nothing tracked");
    stop.store(true, Ordering::Relaxed);
    check(&c, writers);
}

#[test]
fn a_target_killed_during_a_tracked_copy_rolls_back_or_completes_never_half() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = start(2, &dir);
    let cfg = ClientConfig {
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(&board())
    };
    let c = Arc::new(RackClient::new(r.config(), r.controller_addr(), UdpLinks, cfg).unwrap());
    let chunks = 6;
    let va = c.ralloc(chunks * CHUNK).unwrap();
    let region = (va >> 30) as u32;
    for i in 0..chunks {
        c.rwrite(va + i * CHUNK, &[7; 64]).unwrap();
    }
    let from = c.owner_of(region).unwrap();
    let to = 3 - from;
    let src = r.nodes()[usize::from(from) - 1].clone();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spread_writers(&c, va, 1, &stop);
    let mover = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || c.migrate(region, to))
    };
    // Kill the target once the source tracks the region (the copy runs).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !src
        .lock()
        .gates()
        .iter()
        .any(|g| g.region == region && g.state == GateState::Tracking)
    {
        assert!(Instant::now() < deadline, "the copy never started");
        std::thread::sleep(Duration::from_millis(1));
    }
    r.kill(to).unwrap();
    let res = mover.join().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let mut ctl = clio_rack::service::Client::connect(r.controller_addr()).unwrap();
    let owner = match ctl.call(Message::Lookup { region }).unwrap() {
        Message::Owner(p) => p.node,
        other => panic!("{other:?}"),
    };
    match res {
        // Rolled back: the source owns it, serves and tracks nothing.
        Err(_) => {
            assert_eq!(owner, from);
            assert_eq!(c.owner_of(region), Some(from));
            assert!(src.lock().gates().is_empty(), "gates reopened");
            assert_eq!(src.lock().chunks_of(region).len() as u64, chunks);
            check(&c, writers);
        }
        // Completed before the kill: the controller and the cache agree.
        Ok(m) => {
            assert_eq!((owner, m.to), (to, to));
            assert_eq!(c.owner_of(region), Some(to));
        }
    }
}
