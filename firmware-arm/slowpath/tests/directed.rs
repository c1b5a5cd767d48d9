//! Directed tests: errors by name, fixed placement, fences and zeroing,
//! the free/first-touch race, and emission through a small sink.

mod common;

use clio_slowpath::{ReplyTo, SlowPath, SlowPathError};
use clio_wire::ring::Descriptor;
use common::{scrub, small_cfg, Board};

const TO: ReplyTo = ReplyTo { tag: 1, req_id: 1 };

fn alloc(pid: u32, va: u64, size: u64, perms: u8, shift: u8, fixed: bool) -> Descriptor {
    Descriptor::AllocReq {
        tag: 1,
        pid,
        req_id: 1,
        va,
        size,
        perms,
        page_shift: shift,
        fixed,
    }
}

fn free(pid: u32, va: u64, size: u64) -> Descriptor {
    Descriptor::FreeReq {
        tag: 1,
        pid,
        req_id: 1,
        va,
        size,
    }
}

#[test]
fn every_error_is_typed_and_answered() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut tx = Vec::new();
    let mut board = Board::new(&cfg);
    let mut run = |sp: &mut SlowPath<'_>, d: Descriptor| {
        let r = sp.handle(&d, &mut tx);
        board.apply_all(&mut tx);
        let Some(Descriptor::Reply { status, .. }) = board.replies.last().copied() else {
            panic!("no reply")
        };
        if let Err(e) = r {
            assert_eq!(status, e.status().raw(), "{e}");
        }
        r
    };
    assert_eq!(
        run(&mut sp, alloc(1, 0, 0, 3, 12, false)),
        Err(SlowPathError::ZeroSize)
    );
    let e = run(&mut sp, alloc(1, 0, 1 << 40, 3, 12, false)).unwrap_err();
    assert!(matches!(e, SlowPathError::Oversize { .. }), "{e}");
    // Larger than the board can ever hold is its own answer, not MALFORMED.
    assert_eq!(e.status(), clio_wire::Status::TooLarge);
    assert_eq!(
        run(&mut sp, alloc(1, 0, 4096, 0, 12, false)),
        Err(SlowPathError::BadPerms(0))
    );
    assert_eq!(
        run(&mut sp, alloc(1, 0, 4096, 0x10, 12, false)),
        Err(SlowPathError::BadPerms(0x10))
    );
    assert_eq!(
        run(&mut sp, alloc(1, 0, 4096, 3, 13, false)),
        Err(SlowPathError::UnsupportedPageSize(13))
    );
    assert_eq!(
        run(&mut sp, alloc(0, 0, 4096, 3, 12, false)),
        Err(SlowPathError::UnknownPid(0))
    );
    // Whole data region of 4 MiB pages: fits once, then physical memory is exhausted.
    let whole = cfg.pages_of(22) << 22;
    assert_eq!(run(&mut sp, alloc(1, 0, whole, 3, 22, false)), Ok(()));
    assert_eq!(
        run(&mut sp, alloc(2, 0, 4096, 3, 12, false)),
        Err(SlowPathError::PhysExhausted)
    );
    let r0 = sp.ranges().get(0);
    assert_eq!(
        run(&mut sp, free(9, r0.start, 4096)),
        Err(SlowPathError::UnknownPid(9))
    );
    assert_eq!(
        run(&mut sp, free(1, r0.start + (1 << 22), 1 << 22)),
        Err(SlowPathError::PartiallyAllocated {
            va: r0.start + (1 << 22)
        })
    );
    assert_eq!(
        run(&mut sp, free(1, r0.end(), 4096)),
        Err(SlowPathError::NotAllocated { va: r0.end() })
    );
    assert_eq!(
        run(&mut sp, free(1, r0.start, 0)),
        Err(SlowPathError::ZeroSize)
    );
    assert_eq!(run(&mut sp, free(1, r0.start, whole)), Ok(()));
    // Two adjacent ranges with different permissions cannot be freed as one.
    assert_eq!(run(&mut sp, alloc(3, 1 << 30, 4096, 1, 12, true)), Ok(()));
    assert_eq!(
        run(&mut sp, alloc(3, (1 << 30) + 4096, 4096, 3, 12, true)),
        Ok(())
    );
    assert_eq!(
        run(&mut sp, free(3, 1 << 30, 8192)),
        Err(SlowPathError::PermissionMismatch { first: 1, other: 3 })
    );
    assert_eq!(run(&mut sp, free(3, 1 << 30, 4096)), Ok(()));
    assert_eq!(
        run(&mut sp, free(3, 1 << 30, 4096)),
        Err(SlowPathError::DoubleFree { va: 1 << 30 })
    );
    // PIDs are 1..=max_pids (8 here): the PID table always has room for
    // them, and anything above is no PID at all.
    for pid in 4..=8 {
        assert_eq!(run(&mut sp, alloc(pid, 0, 4096, 3, 12, false)), Ok(()));
    }
    assert_eq!(
        run(&mut sp, alloc(9, 0, 4096, 3, 12, false)),
        Err(SlowPathError::UnknownPid(9))
    );
    // Errors are counted.
    assert!(sp.stats().alloc_errors >= 8 && sp.stats().free_errors >= 6);
    board.assert_matches(&sp);
}

#[test]
fn fixed_requests_are_placed_exactly_or_moved_and_say_so() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut tx = Vec::new();
    let va = sp.va_window(12).unwrap().0 + 0x1000_0000;
    let p = sp.alloc(TO, 5, va, 3 * 4096, 3, 12, true).unwrap();
    assert!(sp.pump(&mut tx));
    assert_eq!((p.range.start, p.moved), (va, false));
    // Same address again: taken, so it moves and the reply says so.
    let q = sp.alloc(TO, 5, va, 4096, 3, 12, true).unwrap();
    assert!(sp.pump(&mut tx));
    assert!(q.moved && q.range.start != va);
    assert!(matches!(
        tx.last(),
        Some(Descriptor::Reply { moved: true, .. })
    ));
    // Misaligned fixed address: moved too. Another PID may use the same VA.
    let m = sp.alloc(TO, 5, va + 100, 4096, 3, 12, true).unwrap();
    assert!(m.moved);
    assert!(sp.pump(&mut tx));
    let o = sp.alloc(TO, 6, va, 4096, 3, 12, true).unwrap();
    assert_eq!((o.range.start, o.moved), (va, false));
}

#[test]
fn freed_pages_are_zeroed_only_after_the_tlb_fence() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut tx = Vec::new();
    let p = sp.alloc(TO, 1, 0, 2 * 4096, 3, 12, false).unwrap();
    sp.pump(&mut tx);
    sp.refill(&mut tx);
    board.apply_all(&mut tx);
    for i in 0..2 {
        let n = board.touch(1, p.range.vpn() + i, 12).unwrap();
        sp.handle(&n, &mut tx).unwrap();
    }
    assert_eq!(sp.size_state(0).mapped, 2);
    sp.free(TO, 1, p.range.start, p.range.bytes()).unwrap();
    sp.pump(&mut tx);
    // The fast path has taken the removals but not the TLB invalidation.
    let tlb = tx
        .iter()
        .position(|d| matches!(d, Descriptor::TlbInvalidate { .. }))
        .unwrap();
    let rest = tx.split_off(tlb);
    board.apply_all(&mut tx);
    assert_eq!(
        scrub(&mut sp, &mut board),
        0,
        "no zeroing before the TLB fence"
    );
    assert_eq!(sp.dirty_pages(), 2);
    tx = rest;
    board.apply_all(&mut tx);
    assert_eq!(scrub(&mut sp, &mut board), 2);
    assert_eq!(sp.dirty_pages(), 0);
    // The zeroed pages go to another process, which finds them empty.
    sp.alloc(TO, 2, 0, 64 * 4096, 3, 12, false).unwrap();
    sp.pump(&mut tx);
    for _ in 0..20 {
        sp.refill(&mut tx);
        board.apply_all(&mut tx);
        let r = sp.ranges().of_pid(2).next().unwrap();
        for i in 0..r.pages {
            if let Some(n) = board.touch(2, r.vpn() + i, 12) {
                sp.handle(&n, &mut tx).unwrap();
            }
        }
    }
    assert_eq!(sp.size_state(0).mapped, 64);
    board.assert_matches(&sp);
}

#[test]
fn a_first_touch_racing_a_free_is_reclaimed_dirty() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut tx = Vec::new();
    let p = sp.alloc(TO, 1, 0, 4096, 3, 12, false).unwrap();
    sp.pump(&mut tx);
    sp.refill(&mut tx);
    board.apply_all(&mut tx);
    // The free is handled; its commands are on the ring but not applied
    // when the process touches the page.
    sp.free(TO, 1, p.range.start, 4096).unwrap();
    sp.pump(&mut tx);
    let notice = board.touch(1, p.range.vpn(), 12).unwrap();
    board.apply_all(&mut tx);
    sp.handle(&notice, &mut tx).unwrap();
    assert_eq!(sp.stats().stale_notices, 1);
    assert_eq!(sp.dirty_pages(), 1);
    assert_eq!(scrub(&mut sp, &mut board), 1);
    assert_eq!(sp.phys().free_bytes(), sp.phys().total_bytes());
    board.assert_matches(&sp);
}

#[test]
fn a_full_sink_holds_the_job_and_requests_wait() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut small: heapless::Vec<Descriptor, 3> = heapless::Vec::new();
    sp.handle(&alloc(1, 0, 10 * 4096, 3, 12, false), &mut small)
        .unwrap();
    assert!(!sp.ready());
    assert_eq!(
        sp.handle(&alloc(1, 0, 4096, 3, 12, false), &mut small),
        Err(SlowPathError::Busy)
    );
    let mut rounds = 0;
    loop {
        for d in small.iter() {
            board.apply(d);
        }
        small.clear();
        rounds += 1;
        if sp.pump(&mut small) {
            break;
        }
    }
    for d in small.iter() {
        board.apply(d);
    }
    assert!(rounds >= 3);
    assert_eq!(
        board.replies.len(),
        1,
        "the reply comes after all ten PTE writes"
    );
    board.assert_matches(&sp);
}

/// Whether every page of `r` lies in the VA class of its page size.
fn in_its_class(sp: &SlowPath<'_>, r: &clio_slowpath::VaRange) -> bool {
    let pc = sp.page_classes();
    (0..r.pages).all(|i| pc.shift_of(r.start + (i << r.page_shift)) == Some(r.page_shift))
        && pc.shift_of(r.end() - 1) == Some(r.page_shift)
}

#[test]
fn every_page_size_is_placed_in_its_va_class() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut tx = Vec::new();
    let pc = *sp.page_classes();
    assert_eq!(pc, cfg.page_classes().unwrap());
    // Default size first (class 0), then the others ascending.
    assert_eq!(
        (pc.shift(0), pc.shift(1), pc.shift(2), pc.shift(3)),
        (Some(22), Some(12), Some(21), None)
    );
    for (shift, eff) in [(12u8, 12u8), (21, 21), (22, 22), (0, 22)] {
        let (lo, hi) = sp.va_window(eff).unwrap();
        assert_eq!(pc.shift_of(lo), Some(eff));
        assert_eq!(pc.shift_of(hi - 1), Some(eff));
        // The board holds four 4 MiB frames: one large page of each size.
        let pages = if eff == 12 { 2 } else { 1 };
        let p = sp.alloc(TO, 1, 0, pages << eff, 3, shift, false).unwrap();
        assert!(sp.pump(&mut tx));
        assert_eq!(p.range.page_shift, eff);
        assert!(in_its_class(&sp, &p.range), "{shift}: {:?}", p.range);
        assert!(p.range.start >= lo && p.range.end() <= hi);
    }
    // Class 0 keeps the null page unmapped.
    assert!(sp.va_window(22).unwrap().0 >= 1 << 22);
    assert_eq!(sp.va_window(13), None);
    board.apply_all(&mut tx);
    board.assert_matches(&sp);
}

#[test]
fn a_fixed_va_outside_its_class_is_moved_into_it() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut tx = Vec::new();
    let (lo4k, _) = sp.va_window(12).unwrap();
    let (lo2m, _) = sp.va_window(21).unwrap();
    // A 4 KiB range asked for at a 2 MiB-class address: moved into the 4 KiB class.
    let p = sp
        .alloc(TO, 7, lo2m + (8 << 21), 2 * 4096, 3, 12, true)
        .unwrap();
    assert!(sp.pump(&mut tx));
    assert!(p.moved);
    assert!(in_its_class(&sp, &p.range), "{:?}", p.range);
    assert!(matches!(
        tx.last(),
        Some(Descriptor::Reply { moved: true, .. })
    ));
    // A 2 MiB range asked for in the 4 KiB class, and one asked for in the
    // default class: both moved into the 2 MiB class.
    for va in [lo4k, 64 << 21] {
        let q = sp.alloc(TO, 7, va, 1 << 21, 3, 21, true).unwrap();
        assert!(sp.pump(&mut tx));
        assert!(q.moved && in_its_class(&sp, &q.range), "{va:#x}: {q:?}");
    }
    // A 4 MiB range whose fixed VA starts in class 0 but runs past its end.
    let (_, hi4m) = sp.va_window(22).unwrap();
    let r = sp
        .alloc(TO, 7, hi4m - (1 << 22), 2 << 22, 3, 22, true)
        .unwrap();
    assert!(sp.pump(&mut tx));
    assert!(r.moved && in_its_class(&sp, &r.range), "{r:?}");
    // Inside its class a fixed VA is honoured exactly.
    let s = sp
        .alloc(TO, 7, lo2m + (8 << 21), 1 << 21, 3, 21, true)
        .unwrap();
    assert!(sp.pump(&mut tx));
    assert_eq!((s.range.start, s.moved), (lo2m + (8 << 21), false));
    // A size with no class is refused, not moved.
    assert_eq!(
        sp.alloc(TO, 7, lo4k, 1 << 13, 3, 13, true),
        Err(SlowPathError::UnsupportedPageSize(13))
    );
    assert!(sp.pump(&mut tx));
    assert_eq!(sp.stats().moved, 4);
    board.apply_all(&mut tx);
    board.assert_matches(&sp);
}

#[test]
fn interleaved_sizes_keep_one_next_fit_cursor_per_class() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = common::slow_path(cfg, &mut arena);
    let mut board = Board::new(&cfg);
    let mut tx = Vec::new();
    let mut last: [Option<clio_slowpath::VaRange>; 2] = [None, None];
    for i in 0..6 {
        let (shift, pages) = if i % 2 == 0 { (12, 3) } else { (21, 1) };
        let p = sp.alloc(TO, 3, 0, pages << shift, 3, shift, false).unwrap();
        assert!(sp.pump(&mut tx));
        assert!(in_its_class(&sp, &p.range));
        // Each size continues where its own previous range ended (further
        // on only if a bucket was full there).
        if let Some(prev) = last[i % 2] {
            if p.retries == 0 {
                assert_eq!(p.range.start, prev.end(), "{p:?}");
            } else {
                assert!(p.range.start > prev.end(), "{p:?}");
            }
        }
        last[i % 2] = Some(p.range);
    }
    board.apply_all(&mut tx);
    board.assert_matches(&sp);
    // Free all, one size at a time; everything comes back.
    let ranges: Vec<_> = sp.ranges().of_pid(3).collect();
    assert_eq!(ranges.len(), 6);
    for r in ranges {
        sp.free(TO, 3, r.start, r.bytes()).unwrap();
        assert!(sp.pump(&mut tx));
    }
    board.apply_all(&mut tx);
    assert!(sp.pids().is_empty());
    assert_eq!(sp.shadow().used_slots(), 0);
    board.assert_matches(&sp);
}
