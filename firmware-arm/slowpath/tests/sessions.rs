//! Sessions (issue #14): the boot epoch first on the TX ring, keys from the
//! seed, PID assignment and joins, the per-PID memory quota, closes that
//! free a PID's ranges, and the limits, over the fake board of `common`.

mod common;

use clio_slowpath::{BootSecret, Engine, SlowPath, SlowPathConfig, SlowPathError};
use clio_wire::ring::{self, ring_bytes, Consumer, Descriptor, Direction, Producer};
use clio_wire::Status;
use common::{scrub, small_cfg, Board, SEED};

/// A small board with room for 3 sessions (ids 1..4) and 8 PIDs, and an
/// 8 MiB memory quota per PID.
fn cfg() -> SlowPathConfig {
    let mut c = small_cfg();
    c.session_capacity = 4;
    c.mem_quota_bytes = 8 << 20;
    c.check().unwrap();
    c
}

fn open(pid: u32, join_session: u16, join_key: u64) -> Descriptor {
    Descriptor::SessionOpenReq {
        tag: 3,
        pid,
        req_id: 30,
        join_session,
        join_key,
    }
}

fn close(pid: u32, session: u16) -> Descriptor {
    Descriptor::SessionCloseReq {
        tag: 4,
        pid,
        req_id: 40,
        session,
    }
}

fn alloc(pid: u32, size: u64, shift: u8) -> Descriptor {
    Descriptor::AllocReq {
        tag: 1,
        pid,
        req_id: 1,
        va: 0,
        size,
        perms: 3,
        page_shift: shift,
        fixed: false,
    }
}

fn free(pid: u32, va: u64, size: u64) -> Descriptor {
    Descriptor::FreeReq {
        tag: 2,
        pid,
        req_id: 2,
        va,
        size,
    }
}

/// The slow path and the board it drives.
struct Rig<'a> {
    sp: SlowPath<'a>,
    board: Board,
    tx: Vec<Descriptor>,
}

impl<'a> Rig<'a> {
    fn new(cfg: SlowPathConfig, arena: &'a mut [u64]) -> Self {
        Rig {
            sp: SlowPath::new(cfg, arena, SEED).unwrap(),
            board: Board::new(&cfg),
            tx: Vec::new(),
        }
    }

    /// Handle `d`, apply everything it emitted, return the outcome and the
    /// last reply the board saw.
    fn run(&mut self, d: Descriptor) -> (Result<(), SlowPathError>, Descriptor) {
        let r = self.sp.handle(&d, &mut self.tx);
        assert!(
            self.sp.ready(),
            "{d:?} left work behind with an unbounded sink"
        );
        self.board.apply_all(&mut self.tx);
        let last = *self.board.replies.last().expect("a reply");
        (r, last)
    }

    /// Open a session; returns (session, pid, key) of an accepted one.
    fn open(&mut self, pid: u32, join: u16, key: u64) -> (u16, u32, u64) {
        match self.run(open(pid, join, key)) {
            (
                Ok(()),
                Descriptor::SessionReply {
                    status: 0,
                    session,
                    pid,
                    key,
                    close: false,
                    ..
                },
            ) => (session, pid, key),
            other => panic!("open refused: {other:?}"),
        }
    }

    /// The status of the last reply to `d`, checked against the typed error.
    fn status(&mut self, d: Descriptor) -> u8 {
        let (r, reply) = self.run(d);
        let status = match reply {
            Descriptor::Reply { status, .. } | Descriptor::SessionReply { status, .. } => status,
            other => panic!("not a reply: {other:?}"),
        };
        match r {
            Ok(()) => assert_eq!(status, Status::Ok.raw()),
            Err(e) => assert_eq!(status, e.status().raw(), "{e}"),
        }
        status
    }

    fn alloc_ok(&mut self, pid: u32, size: u64, shift: u8) -> (u64, u64) {
        match self.run(alloc(pid, size, shift)) {
            (
                Ok(()),
                Descriptor::Reply {
                    status: 0,
                    va,
                    size,
                    ..
                },
            ) => (va, size),
            other => panic!("alloc refused: {other:?}"),
        }
    }
}

#[test]
fn the_epoch_is_the_first_tx_descriptor_and_comes_from_the_seed() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = SlowPath::new(cfg, &mut arena, SEED).unwrap();
    assert!(!sp.epoch_posted());
    assert_eq!(sp.epoch(), BootSecret::from_seed(SEED).epoch());
    assert_ne!(sp.epoch(), 0);
    // A full sink holds everything back, refills included.
    let mut full: heapless::Vec<Descriptor, 0> = heapless::Vec::new();
    assert!(!sp.pump(&mut full));
    assert_eq!(sp.refill(&mut full), 0);
    let mut tx = Vec::new();
    assert!(sp.pump(&mut tx));
    assert_eq!(tx, [Descriptor::Epoch { epoch: sp.epoch() }]);
    assert!(sp.epoch_posted());
    assert!(sp.pump(&mut tx));
    assert_eq!(tx.len(), 1, "the epoch goes out once");
    // Another boot seed, another epoch.
    let mut arena2 = vec![0u64; cfg.arena_words()];
    let other = SlowPath::new(cfg, &mut arena2, SEED + 1).unwrap();
    assert_ne!(other.epoch(), sp.epoch());
}

#[test]
fn new_address_spaces_get_the_lowest_free_pid_and_keyed_sessions() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let secret = BootSecret::from_seed(SEED);
    let (s1, p1, k1) = rig.open(0, 0, 0);
    assert_eq!((s1, p1, k1), (1, 1, secret.key(1, 1)));
    let (s2, p2, k2) = rig.open(0, 0, 0);
    assert_eq!((s2, p2, k2), (2, 2, secret.key(2, 1)));
    assert_ne!(k1, k2);
    // The reply carries the quotas of the config and answers the request.
    let Descriptor::SessionReply {
        tag,
        req_id,
        dedup_quota,
        lock_quota,
        mem_quota_pages,
        ..
    } = *rig.board.replies.last().unwrap()
    else {
        unreachable!()
    };
    assert_eq!((tag, req_id), (3, 30));
    assert_eq!(
        (dedup_quota, lock_quota, mem_quota_pages),
        (cfg.dedup_quota, cfg.lock_quota, 2)
    );
    // The board table holds what the slow path's shadow holds.
    assert_eq!(rig.board.sessions.get(&1), Some(&(1, k1)));
    assert_eq!(rig.sp.session(2).map(|s| (s.pid, s.key)), Some((2, k2)));
    assert_eq!(rig.sp.open_sessions(), 2);
    assert_eq!(rig.sp.stats().sessions_opened, 2);
}

#[test]
fn a_join_needs_the_key_and_the_pid_of_a_live_session() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (s1, p1, k1) = rig.open(0, 0, 0);
    let bad = Status::BadSession.raw();
    assert_eq!(rig.status(open(p1, s1, k1 ^ 1)), bad, "wrong key");
    assert_eq!(rig.status(open(p1 + 1, s1, k1)), bad, "wrong pid");
    assert_eq!(rig.status(open(0, s1, k1)), bad, "pid 0 on a join");
    assert_eq!(rig.status(open(p1, 3, k1)), bad, "session not open");
    assert_eq!(rig.status(open(p1, 999, k1)), bad, "id out of range");
    // A new address space asked with a PID is malformed.
    assert_eq!(rig.status(open(5, 0, 0)), Status::Malformed.raw());
    // Refusals install nothing and assign nothing.
    assert_eq!(rig.sp.open_sessions(), 1);
    assert_eq!(rig.board.sessions.len(), 1);
    assert!(!rig.sp.pid_assigned(2));
    assert_eq!(rig.sp.stats().session_errors, 6);
    // The right key and PID join the same address space.
    let (s2, p2, k2) = rig.open(p1, s1, k1);
    assert_eq!((s2, p2), (2, p1));
    assert_ne!(k2, k1);
    assert_eq!(rig.sp.pid_sessions(p1), 2);
    // Both sessions' memory is one address space: one quota.
    let (va, _) = rig.alloc_ok(p1, 4 << 20, 22);
    assert_eq!(rig.sp.pid_charged_bytes(p1), 4 << 20);
    assert_eq!(rig.status(free(p1, va, 4 << 20)), 0);
}

#[test]
fn only_a_pid_with_a_session_or_held_by_the_board_allocates() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let bad = Status::BadSession.raw();
    assert_eq!(rig.status(alloc(1, 4096, 12)), bad);
    assert_eq!(rig.status(free(1, 1 << 22, 4096)), bad);
    assert_eq!(rig.status(alloc(9, 4096, 12)), Status::BadPid.raw());
    assert!(rig.sp.ranges().is_empty());
    // The board's own PIDs allocate without a session and are never handed out.
    rig.sp.reserve_pid(1).unwrap();
    rig.alloc_ok(1, 4096, 12);
    assert_eq!(rig.sp.reserve_pid(9), Err(SlowPathError::UnknownPid(9)));
    let (_, p, _) = rig.open(0, 0, 0);
    assert_eq!(p, 2);
    assert_eq!(rig.sp.reserve_pid(2), Err(SlowPathError::BadSession));
}

#[test]
fn an_alloc_beyond_the_pid_quota_is_over_quota_and_frees_refund_it() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (_, p, _) = rig.open(0, 0, 0);
    let (_, q, _) = rig.open(0, 0, 0);
    // 8 MiB quota: 4 + 2 + 2 MiB fit, one more 4 KiB page does not.
    let (a, _) = rig.alloc_ok(p, 4 << 20, 22);
    let (b, _) = rig.alloc_ok(p, 2 << 20, 21);
    rig.alloc_ok(p, 2 << 20, 21);
    assert_eq!(rig.sp.pid_charged_bytes(p), 8 << 20);
    let over = Status::OverQuota.raw();
    assert_eq!(rig.status(alloc(p, 4096, 12)), over);
    assert_eq!(
        rig.sp.handle(&alloc(p, 4096, 12), &mut rig.tx),
        Err(SlowPathError::OverQuota {
            used: 8 << 20,
            quota: 8 << 20
        })
    );
    rig.board.apply_all(&mut rig.tx);
    assert_eq!(rig.sp.stats().over_quota, 2);
    // Another address space is not affected by p's use.
    rig.alloc_ok(q, 4096, 12);
    // A free gives the bytes back.
    assert_eq!(rig.status(free(p, b, 2 << 20)), 0);
    assert_eq!(rig.sp.pid_charged_bytes(p), 6 << 20);
    rig.alloc_ok(p, 2 << 20, 21);
    assert_eq!(rig.status(free(p, a, 4 << 20)), 0);
    assert_eq!(rig.sp.pid_charged_bytes(p), 4 << 20);
}

#[test]
fn closing_the_last_session_frees_the_pid_ranges_and_releases_the_pid() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (s1, p, k1) = rig.open(0, 0, 0);
    let (s2, _, _) = rig.open(p, s1, k1);
    let (_, other, _) = rig.open(0, 0, 0);
    let (keep_va, _) = rig.alloc_ok(other, 4096, 12);
    let mut ranges = Vec::new();
    for (size, shift) in [(3 * 4096, 12), (4 << 20, 22), (2 << 20, 21)] {
        ranges.push(rig.alloc_ok(p, size, shift));
    }
    // Touch a page so it is dirty after the close (fenced, then zeroed).
    rig.sp.refill(&mut rig.tx);
    rig.board.apply_all(&mut rig.tx);
    let vpn = ranges[0].0 >> 12;
    let n = rig.board.touch(p, vpn, 12).expect("a PA in the FIFO");
    rig.sp.handle(&n, &mut rig.tx).unwrap();

    // Closing one of two sessions frees nothing.
    let removes_before = rig.board.applied;
    assert_eq!(rig.status(close(p, s2)), 0);
    assert_eq!(rig.board.applied, removes_before + 1);
    assert_eq!(rig.sp.pid_sessions(p), 1);
    assert_eq!(rig.sp.ranges().len(), 4);

    // The last one: every range of p goes (PTE removes and TLB
    // invalidations, as frees), then the close reply, then p is free.
    let r = rig.sp.handle(&close(p, s1), &mut rig.tx);
    assert_eq!(r, Ok(()));
    let kinds: Vec<_> = rig
        .tx
        .iter()
        .map(|d| match d {
            Descriptor::PteRemove { .. } => 'R',
            Descriptor::TlbInvalidate { .. } => 'T',
            Descriptor::SessionReply { .. } => 'S',
            _ => '?',
        })
        .collect();
    let pages = 3 + 1 + 1;
    assert_eq!(kinds.iter().filter(|&&k| k == 'R').count(), pages);
    assert_eq!(kinds.iter().filter(|&&k| k == 'T').count(), 3);
    assert_eq!(kinds.last(), Some(&'S'), "the reply comes after the frees");
    match *rig.tx.last().unwrap() {
        Descriptor::SessionReply {
            tag,
            req_id,
            status,
            session,
            pid,
            close,
            key,
            ..
        } => assert_eq!(
            (tag, req_id, status, session, pid, close, key),
            (4, 40, 0, s1, p, true, 0)
        ),
        _ => unreachable!(),
    }
    rig.board.apply_all(&mut rig.tx);
    assert!(rig.sp.ranges().iter().all(|r| r.pid != p));
    assert_eq!(rig.sp.ranges().len(), 1);
    assert_eq!(rig.sp.pid_charged_bytes(p), 0);
    assert!(!rig.sp.pid_assigned(p));
    assert_eq!(rig.sp.stats().pids_released, 1);
    assert!(rig.board.sessions.keys().all(|&s| s != s1 && s != s2));
    rig.board.assert_matches(&rig.sp);
    // The touched page is zeroed once the fast path has passed the fence.
    assert_eq!(scrub(&mut rig.sp, &mut rig.board), 1);
    // The other address space is untouched; p is the lowest free PID again
    // and its old session ids come back with new keys.
    assert!(rig.sp.ranges().iter().any(|r| r.start == keep_va));
    let (s, p2, k) = rig.open(0, 0, 0);
    assert_eq!((s, p2), (1, p));
    assert_eq!(k, BootSecret::from_seed(SEED).key(1, 2));
    assert_ne!(k, k1);
}

#[test]
fn a_close_through_a_tiny_sink_resumes_and_holds_later_requests() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (s, p, _) = rig.open(0, 0, 0);
    for _ in 0..4 {
        rig.alloc_ok(p, 2 * 4096, 12);
    }
    let mut small: heapless::Vec<Descriptor, 3> = heapless::Vec::new();
    rig.sp.handle(&close(p, s), &mut small).unwrap();
    let mut rounds = 1;
    while !rig.sp.ready() {
        // No new request is taken while the close is being emitted.
        assert_eq!(
            rig.sp
                .handle(&open(0, 0, 0), &mut heapless::Vec::<Descriptor, 0>::new()),
            Err(SlowPathError::Busy)
        );
        for d in small.iter() {
            rig.board.apply(d);
        }
        small.clear();
        rig.sp.pump(&mut small);
        rounds += 1;
    }
    for d in small.iter() {
        rig.board.apply(d);
    }
    assert!(rounds >= 5, "{rounds}");
    assert!(rig.sp.ranges().is_empty());
    assert!(rig.board.sessions.is_empty());
    rig.board.assert_matches(&rig.sp);
}

#[test]
fn closing_a_session_that_is_not_open_is_bad_session_and_changes_nothing() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (s, p, _) = rig.open(0, 0, 0);
    rig.alloc_ok(p, 4096, 12);
    let bad = Status::BadSession.raw();
    assert_eq!(rig.status(close(p + 1, s)), bad, "another pid");
    assert_eq!(rig.status(close(p, s + 1)), bad, "not open");
    assert_eq!(rig.status(close(p, 0)), bad, "no session");
    assert!(matches!(
        rig.board.replies.last(),
        Some(Descriptor::SessionReply { close: true, .. })
    ));
    assert_eq!(rig.sp.open_sessions(), 1);
    assert_eq!(rig.sp.ranges().len(), 1);
    assert_eq!(rig.status(close(p, s)), 0);
    // Closing it twice: the second is BAD_SESSION (the SDK's "already closed").
    assert_eq!(rig.status(close(p, s)), bad);
}

#[test]
fn an_expired_session_is_closed_with_tag_0_and_frees_like_a_close() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let (s, p, _) = rig.open(0, 0, 0);
    rig.alloc_ok(p, 4096, 12);
    assert_eq!(rig.sp.expire_session(s + 1), Err(SlowPathError::BadSession));
    assert!(rig.tx.is_empty(), "nothing emitted for a session not open");
    rig.sp.expire_session(s).unwrap();
    rig.sp.pump(&mut rig.tx);
    match *rig.tx.last().unwrap() {
        Descriptor::SessionReply {
            tag,
            status,
            session,
            pid,
            close,
            ..
        } => assert_eq!((tag, status, session, pid, close), (0, 0, s, p, true)),
        ref d => panic!("{d:?}"),
    }
    assert!(rig
        .tx
        .iter()
        .any(|d| matches!(d, Descriptor::PteRemove { .. })));
    rig.board.apply_all(&mut rig.tx);
    assert!(rig.board.sessions.is_empty());
    assert!(rig.sp.ranges().is_empty());
    assert!(!rig.sp.pid_assigned(p));
    assert_eq!(rig.sp.stats().sessions_closed, 1);
}

#[test]
fn a_full_session_table_or_pid_space_is_over_quota() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::new(cfg, &mut arena);
    let over = Status::OverQuota.raw();
    let (s1, p1, k1) = rig.open(0, 0, 0);
    rig.open(0, 0, 0);
    rig.open(p1, s1, k1);
    // Ids 1..4: three sessions fill the table, joins included.
    assert_eq!(rig.status(open(0, 0, 0)), over);
    assert_eq!(rig.status(open(p1, s1, k1)), over);
    assert_eq!(
        rig.sp.handle(&open(0, 0, 0), &mut rig.tx),
        Err(SlowPathError::SessionTableFull)
    );
    rig.board.apply_all(&mut rig.tx);
    // No PID left: the board holds the other six.
    let mut cfg2 = cfg;
    cfg2.session_capacity = 16;
    let mut arena2 = vec![0u64; cfg2.arena_words()];
    let mut rig2 = Rig::new(cfg2, &mut arena2);
    for pid in 2..=8 {
        rig2.sp.reserve_pid(pid).unwrap();
    }
    rig2.open(0, 0, 0);
    assert_eq!(rig2.status(open(0, 0, 0)), over);
    assert_eq!(
        rig2.sp.handle(&open(0, 0, 0), &mut rig2.tx),
        Err(SlowPathError::NoFreePid)
    );
}

/// The engine over byte rings: the epoch first, then a session's open and
/// close answered through the worker queues.
#[test]
fn sessions_through_the_engine_and_rings() {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = SlowPath::new(cfg, &mut arena, SEED).unwrap();
    let epoch = sp.epoch();
    let (rx_slots, tx_slots) = (8, 64);
    let mut rx = vec![0u8; ring_bytes(rx_slots)];
    let mut tx = vec![0u8; ring_bytes(tx_slots)];
    ring::init(&mut rx[..], rx_slots).unwrap();
    ring::init(&mut tx[..], tx_slots).unwrap();
    let mut fp_rx = Producer::attach(&rx[..], Direction::Rx).unwrap();
    let mut fp_tx = Consumer::attach(&tx[..], Direction::Tx).unwrap();
    let mut e: Engine<'_, 2, 4> = Engine::new(sp, &rx[..], &tx[..]).unwrap();
    let mut board = Board::new(&cfg);
    let mut drain = |tx: &mut Vec<u8>, board: &mut Board| {
        while let Some(d) = fp_tx.pop(&mut tx[..]) {
            board.apply(&d.unwrap());
        }
    };
    // Before any request: the epoch alone.
    e.step(&mut rx[..], &mut tx[..], 16, |_, _| {});
    drain(&mut tx, &mut board);
    assert_eq!((board.epoch, board.applied), (epoch, 1));

    fp_rx.push(&mut rx[..], &open(0, 0, 0)).unwrap();
    e.step(&mut rx[..], &mut tx[..], 16, |_, _| {});
    drain(&mut tx, &mut board);
    let key = BootSecret::from_seed(SEED).key(1, 1);
    assert_eq!(board.sessions.get(&1), Some(&(1, key)));
    fp_rx.push(&mut rx[..], &alloc(1, 4096, 12)).unwrap();
    fp_rx.push(&mut rx[..], &close(1, 1)).unwrap();
    // Each step runs one request per worker.
    for _ in 0..2 {
        e.step(&mut rx[..], &mut tx[..], 16, |_, _| {});
        drain(&mut tx, &mut board);
    }
    // Same worker queue (PID 1): the alloc ran before the close, which
    // freed its range.
    let statuses: Vec<_> = board
        .replies
        .iter()
        .map(|d| match *d {
            Descriptor::Reply { status, .. } => ('A', status),
            Descriptor::SessionReply { status, close, .. } => {
                (if close { 'C' } else { 'O' }, status)
            }
            _ => ('?', 0),
        })
        .collect();
    assert_eq!(statuses, [('O', 0), ('A', 0), ('C', 0)]);
    assert!(e.core().ranges().is_empty());
    assert!(board.sessions.is_empty());
    assert_eq!(e.counters().dispatched, 3);
}
