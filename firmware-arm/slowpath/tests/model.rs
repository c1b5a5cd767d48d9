//! Property tests of the slow path against a simple model: random
//! sequences of allocations, frees, first touches, refills and scrubs.

mod common;

use clio_slowpath::{SlowPath, SlowPathError, VaRange};
use clio_wire::ring::Descriptor;
use clio_wire::Status;
use common::{scrub, small_cfg, Board};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc {
        pid: u32,
        pages: u64,
        class: u8,
        perms: u8,
        fixed: bool,
        at: u64,
    },
    Free {
        pick: usize,
        how: u8,
    },
    Touch {
        pick: usize,
        page: u64,
    },
    Refill,
    Scrub,
    BogusNotice {
        ppn: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..5, 1u64..24, 0u8..6, 1u8..4, any::<bool>(), 0u64..64).prop_map(|(pid, pages, class, perms, fixed, at)| Op::Alloc {
            pid, pages, class, perms, fixed, at
        }),
        2 => (any::<usize>(), 0u8..5).prop_map(|(pick, how)| Op::Free { pick, how }),
        4 => (any::<usize>(), 0u64..24).prop_map(|(pick, page)| Op::Touch { pick, page }),
        1 => Just(Op::Refill),
        1 => Just(Op::Scrub),
        1 => any::<u32>().prop_map(|ppn| Op::BogusNotice { ppn }),
    ]
}

struct Harness<'a> {
    sp: SlowPath<'a>,
    board: Board,
    live: Vec<VaRange>,
    tx: Vec<Descriptor>,
}

impl Harness<'_> {
    fn handle(&mut self, d: Descriptor) -> Result<(), SlowPathError> {
        let r = self.sp.handle(&d, &mut self.tx);
        assert!(self.sp.ready(), "an unbounded sink takes the whole job");
        self.board.apply_all(&mut self.tx);
        r
    }

    fn last_reply(&self) -> Descriptor {
        *self.board.replies.last().unwrap()
    }

    fn check(&self) {
        // Ranges equal the model, sorted, and never overlap within a PID.
        let mut want = self.live.clone();
        want.sort_by_key(|r| (r.pid, r.start));
        let have: Vec<VaRange> = self.sp.ranges().iter().collect();
        assert_eq!(have, want);
        for w in have.windows(2) {
            if w[0].pid == w[1].pid {
                assert!(w[0].end() <= w[1].start, "overlap {:?} {:?}", w[0], w[1]);
            }
        }
        // Every range lies inside the VA class of its page size, the only
        // place the fast path looks for pages of that size.
        let pc = self.sp.page_classes();
        for r in &have {
            assert_eq!(pc.shift_of(r.start), Some(r.page_shift), "{r:?}");
            assert_eq!(pc.shift_of(r.end() - 1), Some(r.page_shift), "{r:?}");
        }
        // Shadow table equals the board table, and no bucket exceeds K.
        self.board.assert_matches(&self.sp);
        // Shadow table holds exactly the pages of the live ranges.
        let mut pages: Vec<(u32, u64, u8)> = self
            .sp
            .shadow()
            .live()
            .map(|(_, _, p)| (p.pid, p.vpn, p.page_shift))
            .collect();
        pages.sort();
        let mut want_pages: Vec<(u32, u64, u8)> = self
            .live
            .iter()
            .flat_map(|r| (0..r.pages).map(move |i| (r.pid, r.vpn() + i, r.page_shift)))
            .collect();
        want_pages.sort();
        assert_eq!(pages, want_pages);
        assert!(self.sp.shadow().peak_bucket_use() <= self.sp.config().slots_per_bucket);
    }
}

fn run(ops: Vec<Op>) {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut h = Harness {
        sp,
        board: Board::new(&cfg),
        live: Vec::new(),
        tx: Vec::new(),
    };
    let shifts = cfg.shifts().to_vec();
    let mut req = 0u32;
    for op in ops {
        req += 1;
        match op {
            Op::Alloc {
                pid,
                pages,
                class,
                perms,
                fixed,
                at,
            } => {
                // Mostly the smallest size, sometimes the others or the default (0).
                let shift = match class {
                    0..=2 => shifts[0],
                    3 => shifts[1],
                    4 => shifts[2],
                    _ => 0,
                };
                let eff = if shift == 0 { cfg.default_shift } else { shift };
                // Fixed requests aim at or next to an existing range (often
                // of another size, so in another class) to force moves, or
                // into the class of their size, or anywhere in class 0.
                let (lo, _) = h.sp.va_window(eff).unwrap();
                let va = match h.live.get(at as usize % h.live.len().max(1)) {
                    Some(r) if fixed && at % 4 == 0 => r.start,
                    Some(r) if fixed && at % 4 == 2 => r.end(),
                    _ if at % 4 == 1 => lo + (at << eff),
                    _ => (at + 1) << 24,
                };
                // Large pages: few of them (the board has four 4 MiB frames).
                let pages = if eff == shifts[0] {
                    pages
                } else {
                    pages % 3 + 1
                };
                let size = (pages << eff) - (at % 3);
                let r = h.handle(Descriptor::AllocReq {
                    tag: req,
                    pid,
                    req_id: req,
                    va,
                    size,
                    perms,
                    page_shift: shift,
                    fixed,
                });
                let reply = h.last_reply();
                let Descriptor::Reply {
                    status,
                    va: rva,
                    size: rsize,
                    moved,
                    req_id,
                    ..
                } = reply
                else {
                    unreachable!()
                };
                assert_eq!(req_id, req);
                match r {
                    Ok(()) => {
                        assert_eq!(status, Status::Ok.raw());
                        assert_eq!(rsize, pages << eff);
                        assert_eq!(rva % (1 << eff), 0);
                        if fixed && !moved {
                            assert_eq!(rva, va);
                        }
                        h.live.push(VaRange {
                            pid,
                            start: rva,
                            pages,
                            page_shift: eff,
                            perms,
                        });
                    }
                    Err(e) => {
                        assert_eq!(status, e.status().raw());
                        assert!(
                            matches!(
                                e,
                                SlowPathError::PhysExhausted
                                    | SlowPathError::TableFull { .. }
                                    | SlowPathError::RangeTableFull
                                    | SlowPathError::Oversize { .. }
                            ),
                            "unexpected {e:?}"
                        );
                    }
                }
            }
            Op::Free { pick, how } => {
                if h.live.is_empty() {
                    let r = h.handle(Descriptor::FreeReq {
                        tag: req,
                        pid: 1,
                        req_id: req,
                        va: 1 << 30,
                        size: 4096,
                    });
                    assert!(matches!(
                        r,
                        Err(SlowPathError::UnknownPid(1)
                            | SlowPathError::NotAllocated { .. }
                            | SlowPathError::DoubleFree { .. })
                    ));
                    continue;
                }
                let i = pick % h.live.len();
                let r = h.live[i];
                let page = 1u64 << r.page_shift;
                let (va, size) = match how {
                    // Exact, and with a size that rounds up to the same pages.
                    0 | 1 => (r.start, r.bytes() - how as u64),
                    // Cuts the range.
                    2 => (r.start + page, r.bytes() - page),
                    3 => (r.start, r.bytes() + page),
                    _ => (r.start, r.bytes()),
                };
                let res = h.handle(Descriptor::FreeReq {
                    tag: req,
                    pid: r.pid,
                    req_id: req,
                    va,
                    size,
                });
                let Descriptor::Reply { status, .. } = h.last_reply() else {
                    unreachable!()
                };
                match how {
                    0 | 1 | 4 => {
                        assert_eq!(res, Ok(()));
                        assert_eq!(status, Status::Ok.raw());
                        h.live.remove(i);
                        if how == 4 {
                            // Freeing it again is a double free (if the PID still exists).
                            let again = h.handle(Descriptor::FreeReq {
                                tag: req,
                                pid: r.pid,
                                req_id: req,
                                va,
                                size,
                            });
                            assert!(
                                matches!(
                                    again,
                                    Err(SlowPathError::DoubleFree { .. }
                                        | SlowPathError::UnknownPid(_))
                                ),
                                "{again:?}"
                            );
                        }
                    }
                    2 => {
                        if r.pages > 1 {
                            assert!(
                                matches!(
                                    res,
                                    Err(SlowPathError::PartiallyAllocated { .. }
                                        | SlowPathError::NotAllocated { .. })
                                ),
                                "{res:?}"
                            );
                        }
                        if res.is_ok() {
                            unreachable!("cut free accepted");
                        }
                    }
                    _ => {
                        // Past the end: refused unless an adjacent range with
                        // equal perms and size fills exactly the extra page.
                        let next = h
                            .live
                            .iter()
                            .position(|x| x.pid == r.pid && x.start == r.end());
                        match (res, next) {
                            (Ok(()), Some(j))
                                if h.live[j].pages == 1
                                    && h.live[j].perms == r.perms
                                    && h.live[j].page_shift == r.page_shift =>
                            {
                                let j2 = h.live[j];
                                h.live.retain(|x| *x != r && *x != j2);
                            }
                            (Err(SlowPathError::PermissionMismatch { .. }), Some(_)) => {}
                            (Err(SlowPathError::PartiallyAllocated { .. }), _) => {}
                            (res, next) => panic!("over-long free: {res:?} next {next:?}"),
                        }
                    }
                }
            }
            Op::Touch { pick, page } => {
                if h.live.is_empty() {
                    continue;
                }
                let r = h.live[pick % h.live.len()];
                let vpn = r.vpn() + page % r.pages;
                if let Some(n) = h.board.touch(r.pid, vpn, r.page_shift) {
                    h.handle(n).unwrap();
                }
            }
            Op::Refill => {
                h.sp.refill(&mut h.tx);
                h.board.apply_all(&mut h.tx);
            }
            Op::Scrub => {
                scrub(&mut h.sp, &mut h.board);
            }
            Op::BogusNotice { ppn } => {
                let n = Descriptor::PaConsumed {
                    pid: 1,
                    vpn: 5,
                    ppn,
                    page_shift: shifts[0],
                    bucket: 0,
                    slot: 0,
                };
                let fifo_has = h.board.fifo[0].contains(&ppn);
                if !fifo_has {
                    assert_eq!(h.handle(n), Err(SlowPathError::BadNotice));
                }
            }
        }
        h.check();
    }
    if std::env::var("SLOWPATH_TRACE").is_ok() {
        eprintln!("{:?}", h.sp.stats());
    }
    // Free everything: every page comes back, apart from those parked in FIFOs.
    for r in std::mem::take(&mut h.live) {
        h.handle(Descriptor::FreeReq {
            tag: 0,
            pid: r.pid,
            req_id: 0,
            va: r.start,
            size: r.bytes(),
        })
        .unwrap();
    }
    scrub(&mut h.sp, &mut h.board);
    h.check();
    assert_eq!(h.sp.shadow().used_slots(), 0);
    assert_eq!(h.sp.dirty_pages(), 0);
    assert!(h.sp.pids().is_empty());
    let fifo_bytes: u64 = (0..shifts.len())
        .map(|c| (h.sp.size_state(c).in_fifo as u64) << shifts[c])
        .sum();
    let held: u64 = h.board.held.iter().map(|(s, e)| e - s).sum();
    assert_eq!(held, fifo_bytes, "only FIFO pages stay handed out");
    assert_eq!(
        h.sp.phys().free_bytes() + fifo_bytes,
        h.sp.phys().total_bytes()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn slow_path_matches_model(ops in proptest::collection::vec(op(), 1..160)) {
        run(ops);
    }
}

#[test]
fn fills_table_with_retries_and_never_overflows() {
    // Many one-page-size allocations until the table refuses: retries happen,
    // every bucket stays within K, and the refusal is typed.
    let mut cfg = small_cfg();
    cfg.max_retries = 1000;
    cfg.max_ranges = 200;
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut h = Harness {
        sp,
        board: Board::new(&cfg),
        live: Vec::new(),
        tx: Vec::new(),
    };
    let mut retries = 0;
    let mut last = Ok(());
    for i in 0..400u32 {
        let pid = 1 + i % 3;
        last = h.handle(Descriptor::AllocReq {
            tag: i,
            pid,
            req_id: i,
            va: 0,
            size: 3 << 12,
            perms: 3,
            page_shift: 12,
            fixed: false,
        });
        let Descriptor::Reply { va, retries: r, .. } = h.last_reply() else {
            unreachable!()
        };
        if last.is_err() {
            break;
        }
        retries += r;
        h.live.push(VaRange {
            pid,
            start: va,
            pages: 3,
            page_shift: 12,
            perms: 3,
        });
    }
    h.check();
    eprintln!(
        "live {} retries {retries} last {last:?} used {}",
        h.live.len(),
        h.sp.shadow().used_slots()
    );
    assert!(retries > 0, "a nearly full table must cause retries");
    assert!(
        matches!(last, Err(SlowPathError::TableFull { .. })),
        "{last:?}"
    );
    assert_eq!(h.sp.shadow().peak_bucket_use(), cfg.slots_per_bucket);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary field values in RX descriptors (session opens and closes
    /// included) never panic, every request gets exactly one reply, and the
    /// shadow table stays equal to the board.
    #[test]
    fn arbitrary_requests_never_panic(reqs in proptest::collection::vec(
        (0u8..5, any::<u32>(), any::<u64>(), any::<u64>(), any::<u8>(), any::<u8>(), any::<bool>(), any::<u32>()), 1..40)) {
        let cfg = small_cfg();
        let mut arena = vec![0u64; cfg.arena_words()];
        // PIDs 1 and 2 belong to the board; 3..=8 are for sessions.
        let mut sp = clio_slowpath::SlowPath::new(cfg, &mut arena, common::SEED).unwrap();
        sp.reserve_pid(1).unwrap();
        sp.reserve_pid(2).unwrap();
        let mut board = Board::new(&cfg);
        let mut tx = Vec::new();
        let mut requests = 0;
        for (kind, pid, va, size, perms, shift, fixed, x) in reqs {
            // Small values often, so some requests succeed.
            let pid = if x % 2 == 0 { pid % 4 } else { pid };
            let size = if x % 3 == 0 { size % (64 << 12) } else { size };
            let va = if x % 5 == 0 { va % (1 << 32) } else { va };
            let d = match kind {
                0 => { requests += 1; Descriptor::AllocReq { tag: x, pid, req_id: x, va, size, perms, page_shift: shift, fixed } }
                1 => { requests += 1; Descriptor::FreeReq { tag: x, pid, req_id: x, va, size } }
                // Often a live session's id, key and PID, so joins and closes succeed.
                3 | 4 => {
                    requests += 1;
                    let id = if x % 3 == 0 { va as u16 } else { (va % 8) as u16 };
                    let live = sp.session(id);
                    let pid = match live { Some(s) if x % 2 == 0 => s.pid, _ => pid };
                    if kind == 3 {
                        let (join_session, join_key, pid) = match live {
                            Some(s) if x % 7 != 0 => (id, s.key, pid),
                            _ if x % 5 != 1 => (0, 0, 0),
                            _ => (id, size, pid),
                        };
                        Descriptor::SessionOpenReq { tag: x, pid, req_id: x, join_session, join_key }
                    } else {
                        Descriptor::SessionCloseReq { tag: x, pid, req_id: x, session: id }
                    }
                }
                _ => Descriptor::PaConsumed { pid, vpn: va, ppn: x, page_shift: shift, bucket: (size >> 32) as u32, slot: size as u32 },
            };
            let _ = sp.handle(&d, &mut tx);
            prop_assert!(sp.ready());
            board.apply_all(&mut tx);
        }
        prop_assert_eq!(board.replies.len(), requests);
        board.assert_matches(&sp);
        // The fast path's session table is the slow path's shadow.
        prop_assert_eq!(board.sessions.len() as u32, sp.open_sessions());
        for (&id, &(pid, key)) in &board.sessions {
            let s = sp.session(id).unwrap();
            prop_assert_eq!((s.pid, s.key), (pid, key));
            prop_assert!(sp.pid_assigned(pid));
        }
    }
}
