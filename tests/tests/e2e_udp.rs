//! End to end through UDP: the SDK's blocking sessions against an emulated
//! board served on loopback (no faults). Allocation, data across page and
//! MTU boundaries, first-touch faults, free and reuse, isolation between
//! PIDs, locks across threads and processes, fence and release.

use std::process::Command;
use std::sync::{Arc, Barrier};

use clio::{Client, ClioError, Completion, OpKind};
use clio_tests::{first_difference, pattern, ServedBoard};
use clio_wire::payload::perms;

/// Write `data` at `va`, read it back, compare.
fn roundtrip(s: &mut clio::Session<clio::backend::UdpTransport>, va: u64, data: &[u8]) {
    s.rwrite(va, data)
        .unwrap_or_else(|e| panic!("write {} B at {va:#x}: {e}", data.len()));
    let mut back = vec![0u8; data.len()];
    s.rread(va, &mut back)
        .unwrap_or_else(|e| panic!("read {} B at {va:#x}: {e}", data.len()));
    assert_eq!(
        first_difference(&back, data),
        None,
        "{} B at {va:#x} read back differently",
        data.len()
    );
}

#[test]
fn alloc_write_read_across_mtu_and_page_boundaries() {
    let board = ServedBoard::emulator();
    let page = board.page();
    assert_eq!(page, 4 << 20, "the emulator's default page is 4 MiB");
    let mut s = board.session();
    let mtu = s.connection().config().mtu_payload;
    assert_eq!(mtu, 1450, "the probe kept the board's MTU");

    let a = s.ralloc(3 * page, perms::RW).unwrap();
    assert!(a.size >= 3 * page, "{a:?}");
    assert_eq!(a.va % page, 0, "ranges start on a page: {a:?}");

    // Sizes around one MTU payload, one byte, and a 64 KiB multi-packet
    // write, at an offset that is not aligned to anything.
    let mut at = a.va + 3;
    for (i, len) in [1, mtu - 1, mtu, mtu + 1, 2 * mtu, 64 << 10]
        .into_iter()
        .enumerate()
    {
        roundtrip(&mut s, at, &pattern(len, i as u64 + 1));
        at += len as u64 + 5;
    }
    // Straddling the first and the second page boundary, in sizes that
    // put the boundary inside the first, a middle and the last packet.
    for (k, (before, len)) in [
        (1u64, 2usize),
        (700, 1450),
        (1000, 20_000),
        (30_000, 40_000),
    ]
    .into_iter()
    .enumerate()
    {
        let boundary = a.va + (1 + (k as u64 % 2)) * page;
        roundtrip(&mut s, boundary - before, &pattern(len, 100 + k as u64));
    }
    // Reads that start and end on exact page and MTU multiples.
    let mut back = vec![0u8; 3 * mtu];
    s.rread(a.va + page, &mut back).unwrap();
    let mut whole = vec![0u8; 64 << 10];
    s.rread(a.va + page - (32 << 10), &mut whole).unwrap();
    assert_eq!(&whole[32 << 10..][..3 * mtu], &back[..]);
    s.close().unwrap();
    board.stop().unwrap();
}

#[test]
fn first_touch_faults_once_per_page() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let mut s = board.session();
    let a = s.ralloc(4 * page, perms::RW).unwrap();
    let faults = |b: &ServedBoard| b.stats().fast.faults;
    let f0 = faults(&board);
    // Allocation maps nothing: pages fault in on first touch.
    s.rwrite(a.va + 10, b"x").unwrap();
    assert_eq!(faults(&board), f0 + 1, "first write to page 0 faults");
    s.rwrite(a.va + page - 1, b"y").unwrap();
    assert_eq!(faults(&board), f0 + 1, "page 0 is mapped now");
    // A write across the 1|2 boundary faults both pages at once.
    s.rwrite(a.va + 2 * page - 4, &[7u8; 8]).unwrap();
    assert_eq!(faults(&board), f0 + 3, "pages 1 and 2 fault together");
    // A first-touch read faults too, and sees zeros.
    let mut b = vec![0xAAu8; 4096];
    s.rread(a.va + 3 * page + 123, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0), "fresh page reads as zeros");
    assert_eq!(faults(&board), f0 + 4);
    // Everything touched is still there; no more faults.
    let mut w = [0u8; 8];
    s.rread(a.va + 2 * page - 4, &mut w).unwrap();
    assert_eq!(w, [7u8; 8]);
    let mut one = [0u8; 1];
    s.rread(a.va + 10, &mut one).unwrap();
    assert_eq!(&one, b"x");
    assert_eq!(faults(&board), f0 + 4);
    let st = board.stats().fast;
    assert_eq!(st.fifo_empty, 0, "{st:?}");
    s.close().unwrap();
    board.stop().unwrap();
}

#[test]
fn free_then_reuse_reads_zeros() {
    // One address space may take the whole data region here.
    let mut cfg = clio_tests::emulator_config();
    cfg.sessions.mem_quota_bytes = cfg.regions.data.size;
    let board = ServedBoard::start(cfg, clio_emu::ServeOptions::default());
    let page = board.page();
    let mut s = board.session();
    // Dirty every page the board has: allocate as much as it gives in one
    // range, touch each page with a marker at both ends.
    let data_pages = board.cfg.regions.data.size / page;
    let mut pages = data_pages;
    let a = loop {
        match s.ralloc(pages * page, perms::RW) {
            Ok(a) => break a,
            Err(ClioError::OutOfMemory { .. }) if pages > 1 => pages -= 1,
            Err(e) => panic!("ralloc {pages} pages: {e}"),
        }
    };
    println!("allocated {pages} of {data_pages} data pages");
    let marker = [0xC5u8; 64];
    for p in 0..pages {
        s.rwrite(a.va + p * page, &marker).unwrap();
        s.rwrite(a.va + (p + 1) * page - 64, &marker).unwrap();
    }
    let faulted = board.stats().fast.faults;
    assert!(faulted >= pages, "every page faulted in");
    s.rfree(a.va, a.size).unwrap();
    // The freed range is gone for its owner.
    let mut b = [0u8; 8];
    assert_eq!(
        s.rread(a.va, &mut b),
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va: a.va,
            len: 8
        })
    );
    // Allocate again: with every page dirtied before, each page this range
    // faults in is a reused one, and it must read as zeros.
    let b2 = s.ralloc(pages * page, perms::RW).unwrap();
    let mut buf = vec![0xFFu8; 64];
    for p in 0..pages {
        for off in [0, page - 64] {
            s.rread(b2.va + p * page + off, &mut buf).unwrap();
            assert!(
                buf.iter().all(|&x| x == 0),
                "page {p} offset {off:#x} of the new range shows old data"
            );
        }
    }
    assert!(board.stats().fast.faults >= faulted + pages);
    // And it is usable.
    roundtrip(&mut s, b2.va + page - 100, &pattern(3000, 9));
    s.rfree(b2.va, b2.size).unwrap();
    s.close().unwrap();
    board.stop().unwrap();
}

#[test]
fn pids_are_isolated() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let mut p1 = board.session();
    let mut p2 = board.session();
    // Each PID's VA space starts empty, so plain allocations of the two
    // would likely get the same addresses; fixed VAs make each range lie
    // where the other PID has nothing.
    let a = p1.ralloc_at(64 * page, 2 * page, perms::RW).unwrap();
    let b = p2.ralloc_at(128 * page, page, perms::RW).unwrap();
    println!("PID 11: {a:?}, PID 12: {b:?}");
    assert!(!a.moved && !b.moved, "free fixed VAs are honoured");
    let d1 = pattern(5000, 1);
    let d2 = pattern(5000, 2);
    p1.rwrite(a.va, &d1).unwrap();
    p2.rwrite(b.va, &d2).unwrap();
    // Each PID sees its own bytes.
    let mut back = vec![0u8; 5000];
    p1.rread(a.va, &mut back).unwrap();
    assert_eq!(back, d1);
    p2.rread(b.va, &mut back).unwrap();
    assert_eq!(back, d2);
    // A VA the other PID owns and this one does not is refused, for reads,
    // writes and atomics alike, and nothing changes.
    let outside = |r: &clio::Allocation, own: &clio::Allocation| {
        (0..r.size / page)
            .map(|i| r.va + i * page)
            .find(|&v| v + page <= own.va || v >= own.va + own.size)
            .expect("a page of one range outside the other")
    };
    for (s, theirs, mine) in [(&mut p2, &a, &b), (&mut p1, &b, &a)] {
        let va = outside(theirs, mine);
        let mut w = [0u8; 8];
        assert_eq!(
            s.rread(va, &mut w),
            Err(ClioError::Unmapped {
                op: OpKind::Read,
                va,
                len: 8
            })
        );
        assert_eq!(
            s.rwrite(va, &[1; 8]),
            Err(ClioError::Unmapped {
                op: OpKind::Write,
                va,
                len: 8
            })
        );
        assert_eq!(
            s.faa(va, 1),
            Err(ClioError::Unmapped {
                op: OpKind::FetchAndAdd,
                va,
                len: 8
            })
        );
    }
    p1.rread(a.va, &mut back).unwrap();
    assert_eq!(back, d1, "PID 11's data is untouched");
    p2.rread(b.va, &mut back).unwrap();
    assert_eq!(back, d2, "PID 12's data is untouched");
    // Two fresh PIDs get their first ranges at the same VA, each in its
    // own space: the same address, two memories.
    let mut p3 = board.session();
    let mut p4 = board.session();
    let c3 = p3.ralloc(page, perms::RW).unwrap();
    let c4 = p4.ralloc(page, perms::RW).unwrap();
    assert_eq!(
        c3.va, c4.va,
        "placement depends on the PID's own space only"
    );
    p3.rwrite(c3.va, &d1).unwrap();
    p4.rwrite(c4.va, &d2).unwrap();
    p3.rread(c3.va, &mut back).unwrap();
    assert_eq!(back, d1);
    p4.rread(c4.va, &mut back).unwrap();
    assert_eq!(back, d2);
    // Freeing one PID's range leaves the other's alone.
    p1.rfree(a.va, a.size).unwrap();
    p2.rread(b.va, &mut back).unwrap();
    assert_eq!(back, d2);
    // Permissions: a read-only range refuses writes and atomics.
    let ro = p2.ralloc(page, perms::READ).unwrap();
    let mut w = [0xEEu8; 8];
    p2.rread(ro.va, &mut w).unwrap();
    assert_eq!(w, [0; 8]);
    assert_eq!(
        p2.rwrite(ro.va, &[1; 8]),
        Err(ClioError::Permission {
            op: OpKind::Write,
            va: ro.va
        })
    );
    assert_eq!(
        p2.tas(ro.va + 8),
        Err(ClioError::Permission {
            op: OpKind::TestAndSet,
            va: ro.va + 8
        })
    );
    assert!(board.stats().fast.permission >= 2);
    board.stop().unwrap();
}

#[test]
fn fixed_va_allocation_is_moved_when_taken() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let mut s = board.session();
    let want = 256 * page;
    let a = s.ralloc_at(want, 2 * page, perms::RW).unwrap();
    assert_eq!((a.va, a.moved), (want, false), "{a:?}");
    // The same address again, and one overlapping its second page: both
    // placed elsewhere, flagged as moved, and disjoint from the first.
    for at in [want, want + page] {
        let b = s.ralloc_at(at, page, perms::RW).unwrap();
        assert!(b.moved, "{b:?}");
        assert!(
            b.va + b.size <= a.va || b.va >= a.va + a.size,
            "{b:?} overlaps {a:?}"
        );
        s.rwrite(b.va, b"moved").unwrap();
    }
    let mut w = [0xffu8; 5];
    s.rread(a.va, &mut w).unwrap();
    assert_eq!(w, [0; 5], "the first range is untouched");
    // An unaligned fixed VA is placed on a page boundary.
    let c = s.ralloc_at(want + 100 * page + 123, 10, perms::RW).unwrap();
    assert_eq!(c.va % page, 0, "{c:?}");
    board.stop().unwrap();
}

/// Lock-protected read-modify-write of a plain (non-atomic) 8-byte
/// counter: read, add one, write back, between `rlock` and `runlock`.
fn locked_increments(
    s: &mut clio::Session<clio::backend::UdpTransport>,
    lock: u64,
    counter: u64,
    n: u64,
) {
    for _ in 0..n {
        s.rlock(lock).unwrap();
        let mut w = [0u8; 8];
        s.rread(counter, &mut w).unwrap();
        let v = u64::from_le_bytes(w) + 1;
        s.rwrite(counter, &v.to_le_bytes()).unwrap();
        s.runlock(lock).unwrap();
    }
}

#[test]
fn locks_serialise_threads() {
    const THREADS: u64 = 4;
    const EACH: u64 = 40;
    let board = ServedBoard::emulator();
    let client = Client::new(board.addr(), board.client()).unwrap();
    let mut s = client.session().unwrap();
    let a = s.ralloc(board.page(), perms::RW).unwrap();
    let (lock, counter) = (a.va, a.va + 64);
    let start = Arc::new(Barrier::new(THREADS as usize));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let client = client.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut s = client.session().unwrap();
                start.wait();
                locked_increments(&mut s, lock, counter, EACH);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut w = [0u8; 8];
    s.rread(counter, &mut w).unwrap();
    assert_eq!(u64::from_le_bytes(w), THREADS * EACH, "no lost update");
    assert_eq!(s.tas(lock).unwrap(), 0, "the lock ends free");
    board.stop().unwrap();
}

#[test]
fn locks_serialise_processes() {
    const PROCS: u32 = 3;
    const EACH: u64 = 30;
    let board = ServedBoard::emulator();
    // The children join the parent's address space with its share token;
    // the board sees one protection domain and four sessions.
    let mut s = board.session();
    let token = s.share().unwrap().to_string();
    let a = s.ralloc(board.page(), perms::RW).unwrap();
    let (lock, counter) = (a.va + 4096, a.va + 8192);
    let children: Vec<_> = (1..=PROCS)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_clio-e2e-worker"))
                .args([
                    "lock-increments".to_string(),
                    board.addr().to_string(),
                    token.clone(),
                    format!("{lock:#x}"),
                    format!("{counter:#x}"),
                    EACH.to_string(),
                ])
                .spawn()
                .expect("spawn the worker process")
        })
        .collect();
    // The parent contends too.
    locked_increments(&mut s, lock, counter, EACH);
    for mut c in children {
        let st = c.wait().unwrap();
        assert!(st.success(), "worker failed: {st}");
    }
    let mut w = [0u8; 8];
    s.rread(counter, &mut w).unwrap();
    assert_eq!(
        u64::from_le_bytes(w),
        (PROCS as u64 + 1) * EACH,
        "no lost update across processes"
    );
    board.stop().unwrap();
}

#[test]
fn fence_and_release_complete_earlier_operations() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let mut s = board.session();
    let a = s.ralloc(4 * page, perms::RW).unwrap();
    // Many async writes on several pages, then a fence: every write has
    // completed when the fence returns, and reads see them.
    let mut hs = Vec::new();
    let mut spans = Vec::new();
    let mut model = vec![0u8; (4 * page) as usize];
    for i in 0..64u64 {
        // Spread over all four pages; some writes overlap earlier ones
        // (the later one wins: WAW order within a page).
        let off = (i * 262_147) % (4 * page - 3000);
        let d = pattern(1 + (i as usize * 97) % 3000, i);
        model[off as usize..off as usize + d.len()].copy_from_slice(&d);
        spans.push((off as usize, d.len()));
        hs.push(s.rwrite_async(a.va + off, &d).unwrap());
    }
    s.rfence().unwrap();
    for h in &hs {
        assert!(
            s.try_rpoll(h).unwrap(),
            "a write before the fence is incomplete"
        );
    }
    let rs = s.rpoll(&hs).unwrap();
    assert!(rs.iter().all(|r| r == &Ok(Completion::Written)), "{rs:?}");
    for (off, len) in spans {
        let mut back = vec![0u8; len];
        s.rread(a.va + off as u64, &mut back).unwrap();
        assert_eq!(
            first_difference(&back, &model[off..off + len]),
            None,
            "{len} B at +{off:#x}"
        );
    }
    // Release: an async write, a read of it, an allocation and another
    // write, then rrelease: every one is complete without another wait.
    let w = s.rwrite_async(a.va + 5, &pattern(10_000, 77)).unwrap();
    let r = s.rread_async(a.va + 5, 10_000).unwrap();
    let f = s.ralloc_async(page, perms::RW).unwrap();
    let x = s.rwrite_async(a.va + 3 * page, &[9; 100]).unwrap();
    s.rrelease().unwrap();
    for h in [&w, &r, &f, &x] {
        assert!(
            s.try_rpoll(h).unwrap(),
            "an operation before rrelease is incomplete"
        );
    }
    let rs = s.rpoll(&[w, r, f, x]).unwrap();
    assert_eq!(rs[0], Ok(Completion::Written));
    assert_eq!(
        rs[1],
        Ok(Completion::Read(pattern(10_000, 77))),
        "RAW order"
    );
    assert!(matches!(rs[2], Ok(Completion::Allocated(_))), "{:?}", rs[2]);
    assert_eq!(rs[3], Ok(Completion::Written));
    s.close().unwrap();
    board.stop().unwrap();
}

/// The same allocation and data path on a board whose default page size is
/// one of the other supported sizes (4 KiB, 2 MiB).
fn small_workload_with_default_page(size: u64) {
    let mut cfg = clio_tests::emulator_config();
    assert!(cfg.pages.sizes.contains(size), "{size} supported");
    cfg.pages.default_size = size;
    let board = ServedBoard::start(cfg, clio_emu::ServeOptions::default());
    let mut s = board.session();
    assert_eq!(1u64 << s.connection().config().page_shift, size);
    let a = s.ralloc(3 * size, perms::RW).unwrap();
    assert!(a.size >= 3 * size && a.va % size == 0, "{a:?}");
    let f0 = board.stats().fast.faults;
    // Across the first page boundary, several MTUs long.
    let len = (size as usize).min(6000);
    roundtrip(&mut s, a.va + size - len as u64 / 2, &pattern(len, 5));
    assert_eq!(board.stats().fast.faults, f0 + 2, "two pages faulted in");
    roundtrip(&mut s, a.va + 3 * size - 8, &8u64.to_le_bytes());
    assert_eq!(s.faa(a.va + 3 * size - 8, 2).unwrap(), 8);
    s.rfree(a.va, a.size).unwrap();
    let mut b = [0u8; 8];
    assert!(matches!(
        s.rread(a.va, &mut b),
        Err(ClioError::Unmapped { .. })
    ));
    let b2 = s.ralloc(size, perms::RW).unwrap();
    roundtrip(&mut s, b2.va, &pattern(100, 6));
    s.close().unwrap();
    board.stop().unwrap();
}

#[test]
fn default_page_of_2_mib() {
    small_workload_with_default_page(2 << 20);
}

#[test]
fn default_page_of_4_kib() {
    small_workload_with_default_page(4 << 10);
}

/// A single synchronous flow over a clean link whose RTT is above the
/// SDK's delay target (here from a 3 ms one-way delay) must still send one
/// request per RTT. `ClientConfig::from_board` sets a 2 ms delay target
/// (4 × `rto_min`); were the target absolute, every RTT sample above it
/// would cut `cwnd` and none let it grow, sinking to `cwnd_min` and pacing
/// one request per 1/`cwnd_min` RTTs. The target is relative to the path's
/// base RTT, so a slow but uncongested path keeps growing.
#[test]
fn cwnd_recovers_when_rtt_exceeds_target() {
    let opts = clio_emu::ServeOptions {
        outbound: clio_emu::FaultConfig {
            delay_ns: 3_000_000,
            ..clio_emu::FaultConfig::NONE
        },
        ..clio_emu::ServeOptions::default()
    };
    let board = ServedBoard::start(clio_tests::emulator_config(), opts);
    let cfg = clio::ClientConfig {
        request_timeout_ns: 20_000_000_000,
        ..clio::ClientConfig::from_board(&board.cfg)
    };
    let mut s = clio::Session::open(board.addr(), cfg).unwrap();
    let a = s.ralloc(board.page(), perms::RW).unwrap();
    let mut w = [0u8; 8];
    for i in 0..16 {
        s.rread(a.va + 8 * i, &mut w).unwrap();
    }
    let c = s.connection().control();
    println!("srtt {:?} ns, cwnd {}", c.srtt(), c.cwnd());
    assert!(
        c.cwnd() >= 1.0,
        "a lossless synchronous flow is paced below one request per RTT: cwnd {}",
        c.cwnd()
    );
    board.stop().unwrap();
}

/// A new session of an address space that used the board before (a
/// restarted process joining again) must have its requests executed: the
/// board keys dedup records by session, so a new session numbering its
/// requests like an old one is never answered from the old one's records.
#[test]
fn a_new_session_of_a_pid_is_not_answered_from_the_old_ones_records() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let mut old = board.session();
    // Keeps the address space (and its memory) alive across `old`'s close.
    let keeper = board.join(&old);
    let a = old.ralloc(page, perms::RW).unwrap();
    old.rwrite(a.va, b"old data").unwrap();
    assert_eq!(old.faa(a.va + 64, 1).unwrap(), 0);
    let first = old.connection().config().first_req_id;
    old.close().unwrap();

    // The same first request id as the old session: a restarted process
    // that numbers its requests the same way.
    let mut new = clio::Session::join(
        board.addr(),
        keeper.share().unwrap(),
        clio::ClientConfig {
            first_req_id: first,
            ..board.client()
        },
    )
    .unwrap();
    let b = new.ralloc(page, perms::RW).unwrap();
    assert_ne!(b.va, a.va, "a second allocation gets its own range");
    new.rwrite(b.va, b"new data").unwrap();
    let mut back = [0u8; 8];
    new.rread(b.va, &mut back).unwrap();
    assert_eq!(&back, b"new data");
    assert_eq!(new.faa(a.va + 64, 1).unwrap(), 1, "the FAA executed");
    assert_eq!(board.stats().fast.duplicates, 0, "nothing was replayed");
    board.stop().unwrap();
}
