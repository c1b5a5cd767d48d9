//! Clio-DF's firmware half (`clio_slowpath::offload::df`) served by the
//! offload host over fragments, in the **caller's** address space: answers
//! against a plain computation, every refusal code, the caller's session
//! checked, other address spaces out of reach, and the pages it backs
//! agreeing between the slow path's table and the board's.

mod df_rig;

use clio_slowpath::offload::df::proto::{self, code, op, pred, Aggregate, Select};
use clio_slowpath::offload::df::{DfOffload, OFFLOAD_ID};
use clio_wire::payload::perms;
use clio_wire::Status;
use df_rig::{Creds, Outcome, Rig};

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The predicate, spelled out independently of the offload's.
fn holds(p: u8, x: u64, lo: u64, hi: u64) -> bool {
    match p {
        1 => x == lo,
        2 => x != lo,
        3 => x < lo,
        4 => x <= lo,
        5 => x > lo,
        6 => x >= lo,
        7 => lo <= x && x <= hi,
        _ => unreachable!(),
    }
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn agg_bytes(vals: impl Iterator<Item = u64>) -> Vec<u8> {
    let (mut n, mut sum, mut lo, mut hi) = (0u64, 0u128, u64::MAX, 0u64);
    for v in vals {
        n += 1;
        sum += u128::from(v);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if n == 0 {
        lo = 0;
    }
    let mut r = n.to_be_bytes().to_vec();
    r.extend_from_slice(&sum.to_be_bytes());
    r.extend_from_slice(&lo.to_be_bytes());
    r.extend_from_slice(&hi.to_be_bytes());
    r
}

fn sel_args(column: u64, rows: u64, predicate: u8, lo: u64, hi: u64) -> Select {
    Select {
        column,
        rows,
        predicate,
        lo,
        hi,
        project: 0,
        out_rows: 0,
        out_values: 0,
        cap: 0,
    }
}

#[test]
fn answers_and_outputs_match_a_plain_computation() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut rig = Rig::new(&mut arena);
    let mut df = DfOffload::new();
    let mut host = df_rig::host(&mut df);
    let me = rig.open();
    let mut next = xorshift(0x0df0_f1e5);
    for round in 0..24 {
        // Up to 20 000 rows: columns over several pages and 64 KiB scans.
        let rows = [0, 1, 7, 513, 8192, 8193, 20_000][round % 7] as usize;
        let spread = [3u64, 100, u64::MAX][round % 3];
        let col: Vec<u64> = (0..rows)
            .map(|_| match next() % 16 {
                0 => 0,
                1 => u64::MAX,
                _ => next() % spread.max(1),
            })
            .collect();
        let other: Vec<u64> = (0..rows).map(|_| next()).collect();
        let cva = rig.upload(&me, &col);
        let ova = rig.upload(&me, &other);
        let p = 1 + (next() % 7) as u8;
        let (mut lo, mut hi) = (next() % spread.max(1), next() % spread.max(1));
        if p == pred::BETWEEN && lo > hi {
            std::mem::swap(&mut lo, &mut hi);
        }
        let want: Vec<u32> = (0..rows as u32)
            .filter(|&i| holds(p, col[i as usize], lo, hi))
            .collect();
        let cap = match next() % 3 {
            0 => rows as u64,
            1 => want.len() as u64 / 2,
            _ => 0,
        };
        let project = next() % 2 == 0;
        // Outputs the caller allocates and never touches.
        let out_rows = rig.alloc(&me, cap * 4, perms::RW);
        let out_values = if project {
            rig.alloc(&me, cap * 8, perms::RW)
        } else {
            0
        };
        let s = Select {
            project: if project { ova } else { 0 },
            out_rows,
            out_values,
            cap,
            ..sel_args(cva, rows as u64, p, lo, hi)
        };
        let written = want.len().min(cap as usize);
        let mut result = (want.len() as u64).to_be_bytes().to_vec();
        result.extend_from_slice(&(written as u64).to_be_bytes());
        assert_eq!(
            rig.call(&mut host, &me, OFFLOAD_ID, op::SELECT, &s.to_bytes()),
            Outcome::Ok(result),
            "round {round}: {rows} rows, predicate {p} {lo} {hi}, cap {cap}"
        );
        let got_rows = u32s(&rig.read(&me, out_rows, written * 4));
        assert_eq!(got_rows, want[..written], "round {round}");
        if project {
            let got = u64s(&rig.read(&me, out_values, written * 8));
            let w: Vec<u64> = want[..written].iter().map(|&i| other[i as usize]).collect();
            assert_eq!(got, w, "round {round}");
        }
        // Aggregates: the whole column, and the selected rows.
        let a = Aggregate {
            column: cva,
            rows: rows as u64,
            selection: 0,
            selected: 0,
        };
        assert_eq!(
            rig.call(&mut host, &me, OFFLOAD_ID, op::AGGREGATE, &a.to_bytes()),
            Outcome::Ok(agg_bytes(col.iter().copied())),
            "round {round}"
        );
        if written > 0 {
            let a = Aggregate {
                column: ova,
                rows: rows as u64,
                selection: out_rows,
                selected: written as u64,
            };
            assert_eq!(
                rig.call(&mut host, &me, OFFLOAD_ID, op::AGGREGATE, &a.to_bytes()),
                Outcome::Ok(agg_bytes(
                    want[..written].iter().map(|&i| other[i as usize])
                )),
                "round {round}"
            );
        }
        rig.check_tables();
        rig.free(&me, cva, rows as u64 * 8);
        rig.free(&me, ova, rows as u64 * 8);
        rig.free(&me, out_rows, cap * 4);
        if project {
            rig.free(&me, out_values, cap * 8);
        }
    }
    drop(host);
    assert!(df.rows_scanned() > 0);
}

#[test]
fn each_refusal_code() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut rig = Rig::new(&mut arena);
    let mut df = DfOffload::new();
    let mut host = df_rig::host(&mut df);
    let me = rig.open();
    let col: Vec<u64> = (0..100).collect();
    let cva = rig.upload(&me, &col);
    let out = rig.alloc(&me, 400, perms::RW);
    let good = Select {
        out_rows: out,
        cap: 100,
        ..sel_args(cva, 100, pred::LT, 10, 0)
    };
    let mut call =
        |rig: &mut Rig<'_>, o: u16, args: &[u8]| rig.call(&mut host, &me, OFFLOAD_ID, o, args);
    let mut ok = 10u64.to_be_bytes().to_vec();
    ok.extend_from_slice(&10u64.to_be_bytes());
    assert_eq!(
        call(&mut rig, op::SELECT, &good.to_bytes()),
        Outcome::Ok(ok)
    );

    // BAD_ARGS: a short call, reserved bytes, an unknown op, a projection
    // without an output, too many rows, an array past 2^64.
    let bad = Outcome::Refused(code::BAD_ARGS);
    assert_eq!(call(&mut rig, op::SELECT, &good.to_bytes()[..71]), bad);
    let mut reserved = good.to_bytes();
    reserved[20] = 1;
    assert_eq!(call(&mut rig, op::SELECT, &reserved), bad);
    assert_eq!(call(&mut rig, 9, &good.to_bytes()), bad);
    let s = Select {
        project: cva,
        ..good
    };
    assert_eq!(call(&mut rig, op::SELECT, &s.to_bytes()), bad);
    let s = Select {
        rows: proto::MAX_ROWS + 1,
        ..good
    };
    assert_eq!(call(&mut rig, op::SELECT, &s.to_bytes()), bad);
    let s = Select {
        column: u64::MAX - 8,
        ..good
    };
    assert_eq!(call(&mut rig, op::SELECT, &s.to_bytes()), bad);
    let a = Aggregate {
        column: cva,
        rows: 100,
        selection: 0,
        selected: 3,
    };
    assert_eq!(call(&mut rig, op::AGGREGATE, &a.to_bytes()), bad);
    assert_eq!(call(&mut rig, op::AGGREGATE, &a.to_bytes()[..31]), bad);

    // BAD_PREDICATE: unknown, and BETWEEN with lo > hi.
    let s = Select {
        predicate: 8,
        ..good
    };
    assert_eq!(
        call(&mut rig, op::SELECT, &s.to_bytes()),
        Outcome::Refused(code::BAD_PREDICATE)
    );
    let s = Select {
        predicate: pred::BETWEEN,
        lo: 5,
        hi: 4,
        ..good
    };
    assert_eq!(
        call(&mut rig, op::SELECT, &s.to_bytes()),
        Outcome::Refused(code::BAD_PREDICATE)
    );

    // UNMAPPED: a column past the caller's range, an output never
    // allocated, a freed column.
    let unmapped = Outcome::Refused(code::UNMAPPED);
    let s = Select {
        rows: 100 + 4096,
        ..good
    };
    assert_eq!(call(&mut rig, op::SELECT, &s.to_bytes()), unmapped);
    let s = Select {
        out_rows: 0x7000_0000,
        ..good
    };
    assert_eq!(call(&mut rig, op::SELECT, &s.to_bytes()), unmapped);
    let gone = rig.upload(&me, &col);
    rig.free(&me, gone, 800);
    let a = Aggregate {
        column: gone,
        rows: 100,
        selection: 0,
        selected: 0,
    };
    assert_eq!(call(&mut rig, op::AGGREGATE, &a.to_bytes()), unmapped);

    // PERMISSION: an output the caller may only read, a column it may
    // only write.
    let ro = rig.alloc(&me, 400, perms::READ);
    let s = Select {
        out_rows: ro,
        ..good
    };
    assert_eq!(
        call(&mut rig, op::SELECT, &s.to_bytes()),
        Outcome::Refused(code::PERMISSION)
    );
    assert_eq!(rig.read(&me, ro, 400), vec![0; 400], "nothing written");
    let wo = rig.alloc(&me, 800, perms::WRITE);
    rig.write(&me, wo, &[1; 800]);
    let a = Aggregate {
        column: wo,
        rows: 100,
        selection: 0,
        selected: 0,
    };
    assert_eq!(
        call(&mut rig, op::AGGREGATE, &a.to_bytes()),
        Outcome::Refused(code::PERMISSION)
    );

    // BAD_ROW: a selection naming row 100 of a 100-row column.
    let sel = rig.alloc(&me, 8, perms::RW);
    rig.write(&me, sel, &[3, 0, 0, 0, 100, 0, 0, 0]);
    let a = Aggregate {
        column: cva,
        rows: 100,
        selection: sel,
        selected: 2,
    };
    assert_eq!(
        call(&mut rig, op::AGGREGATE, &a.to_bytes()),
        Outcome::Refused(code::BAD_ROW)
    );
    // Only the first index: fine.
    let a = Aggregate { selected: 1, ..a };
    assert_eq!(
        call(&mut rig, op::AGGREGATE, &a.to_bytes()),
        Outcome::Ok(agg_bytes([3u64].into_iter()))
    );
    rig.check_tables();
}

#[test]
fn another_address_space_is_out_of_reach() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut rig = Rig::new(&mut arena);
    let mut df = DfOffload::new();
    let mut host = df_rig::host(&mut df);
    let me = rig.open();
    let them = rig.open();
    assert_ne!(me.pid, them.pid);
    // Their column lies past everything the caller holds.
    let _pad = rig.alloc(&them, 64 << 10, perms::RW);
    let secret: Vec<u64> = (0..512).map(|i| 0x5ec0_0000 + i).collect();
    let theirs = rig.upload(&them, &secret);
    let mine = rig.upload(&me, &[1, 2, 3]);
    assert!(rig.sp.translate(me.pid, theirs).is_none());
    let mut call = |rig: &mut Rig<'_>, c: &Creds, o: u16, args: &[u8]| {
        rig.call(&mut host, c, OFFLOAD_ID, o, args)
    };

    // Reading it, or writing into it, from the caller's space: unmapped.
    let a = Aggregate {
        column: theirs,
        rows: 512,
        selection: 0,
        selected: 0,
    };
    assert_eq!(
        call(&mut rig, &me, op::AGGREGATE, &a.to_bytes()),
        Outcome::Refused(code::UNMAPPED)
    );
    let s = Select {
        out_rows: theirs,
        cap: 3,
        ..sel_args(mine, 3, pred::GE, 0, 0)
    };
    assert_eq!(
        call(&mut rig, &me, op::SELECT, &s.to_bytes()),
        Outcome::Refused(code::UNMAPPED)
    );
    let bytes: Vec<u8> = secret.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(rig.read(&them, theirs, 4096), bytes, "their column intact");
    // Their own call reaches it.
    assert_eq!(
        call(&mut rig, &them, op::AGGREGATE, &a.to_bytes()),
        Outcome::Ok(agg_bytes(secret.iter().copied()))
    );

    // The caller's session must be proven: a wrong key, another PID under
    // the caller's session, a stale epoch, a closed session. The join is
    // refused and the call faults (the fast path refuses such a header
    // before it gets here; this side checks again).
    let fault = Outcome::Other(Status::OffloadFault);
    for forged in [
        Creds {
            key: me.key ^ 1,
            ..me
        },
        Creds {
            pid: them.pid,
            ..me
        },
        Creds {
            epoch: me.epoch ^ 1,
            ..me
        },
    ] {
        assert_eq!(
            call(&mut rig, &forged, op::AGGREGATE, &a.to_bytes()),
            fault,
            "{forged:?}"
        );
    }
    let gone = rig.open();
    rig.sp
        .close_session(clio_slowpath::ReplyTo::default(), gone.pid, gone.session)
        .unwrap();
    rig.settle();
    let a0 = Aggregate {
        column: 0,
        rows: 0,
        selection: 0,
        selected: 0,
    };
    assert_eq!(call(&mut rig, &gone, op::AGGREGATE, &a0.to_bytes()), fault);
    // The caller itself is still served.
    assert_eq!(
        call(&mut rig, &me, op::AGGREGATE, &a0.to_bytes()),
        Outcome::Ok(agg_bytes(std::iter::empty()))
    );
    rig.check_tables();
}

#[test]
fn outputs_the_caller_never_touched_are_backed_once_and_the_tables_agree() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut rig = Rig::new(&mut arena);
    let mut df = DfOffload::new();
    let mut host = df_rig::host(&mut df);
    let me = rig.open();
    let col: Vec<u64> = (0..5000).map(|i| i % 3).collect();
    let cva = rig.upload(&me, &col);
    // 5 000 rows of u32: five 4 KiB pages, none touched.
    let out = rig.alloc(&me, 5000 * 4, perms::RW);
    assert!(rig.sp.translate(me.pid, out).is_none());
    let s = Select {
        out_rows: out,
        cap: 5000,
        ..sel_args(cva, 5000, pred::NE, 7, 0)
    };
    let before = rig.sp.phys().free_bytes();
    let r = rig.call(&mut host, &me, OFFLOAD_ID, op::SELECT, &s.to_bytes());
    let mut want = 5000u64.to_be_bytes().to_vec();
    want.extend_from_slice(&5000u64.to_be_bytes());
    assert_eq!(r, Outcome::Ok(want));
    assert_eq!(
        before - rig.sp.phys().free_bytes(),
        5 * 4096,
        "one page per output page"
    );
    // Board table = shadow table (the PTE writes went out), and a first
    // touch by the fast path finds them mapped.
    rig.check_tables();
    let rows = u32s(&rig.read(&me, out, 5000 * 4));
    assert_eq!(rows, (0..5000).collect::<Vec<u32>>());
    // The same select again writes the same pages.
    let r2 = rig.call(&mut host, &me, OFFLOAD_ID, op::SELECT, &s.to_bytes());
    assert!(matches!(r2, Outcome::Ok(_)));
    assert_eq!(before - rig.sp.phys().free_bytes(), 5 * 4096);
    // The caller's quota counts what it allocated, not the offload.
    assert!(rig.sp.pid_charged_bytes(me.pid) >= 5000 * 4 + 5000 * 8);
}

#[test]
fn arbitrary_calls_are_answered_or_refused_and_touch_nothing_of_another_pid() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut rig = Rig::new(&mut arena);
    let mut df = DfOffload::new();
    let mut host = df_rig::host(&mut df);
    let me = rig.open();
    let them = rig.open();
    let theirs = rig.upload(&them, &(0..2048).collect::<Vec<u64>>());
    let before = rig.read(&them, theirs, 2048 * 8);
    let col = rig.upload(&me, &(0..3000).map(|i| i % 11).collect::<Vec<u64>>());
    let out = rig.alloc(&me, 3000 * 8, perms::RW);
    let ro = rig.alloc(&me, 4096, perms::READ);
    let mut next = xorshift(0xa5b_17a3);
    // VAs the script picks from: the caller's, theirs, nothing, near misses.
    let vas = [
        0,
        col,
        out,
        ro,
        theirs,
        col + 3000 * 8,
        out + 8 * 2999,
        0x7f00_0000,
    ];
    let (mut ok, mut refused) = (0, [0u32; 6]);
    for i in 0..3000 {
        let mut va = || vas[(next() % vas.len() as u64) as usize] + (next() % 4) * 8;
        let mut args = if i % 2 == 0 {
            Select {
                column: va(),
                rows: [0, 1, 100, 3000, 5000][(i / 2) % 5],
                predicate: (i % 9) as u8,
                lo: 3,
                hi: 7,
                project: if i % 3 == 0 { va() } else { 0 },
                out_rows: va(),
                out_values: if i % 3 == 0 { va() } else { 0 },
                cap: [0, 10, 3000, u64::MAX][i % 4],
            }
            .to_bytes()
            .to_vec()
        } else {
            Aggregate {
                column: va(),
                rows: [0, 7, 3000, 2048][i % 4],
                selection: if i % 5 == 1 { 0 } else { va() },
                selected: if i % 5 == 1 { 0 } else { next() % 4000 },
            }
            .to_bytes()
            .to_vec()
        };
        if i % 7 == 0 {
            let at = (next() as usize) % args.len();
            args[at] ^= next() as u8 | 1;
        }
        let o = if i % 2 == 0 {
            op::SELECT
        } else {
            op::AGGREGATE
        };
        match rig.call(&mut host, &me, OFFLOAD_ID, o, &args) {
            Outcome::Ok(_) => ok += 1,
            Outcome::Refused(c @ 1..=5) => refused[c as usize] += 1,
            other => panic!("call {i}: {other:?} for {args:?}"),
        }
    }
    assert!(ok > 100, "{ok} answered");
    assert!(
        refused[1..].iter().all(|&n| n > 0),
        "each code met: {refused:?}"
    );
    assert_eq!(
        rig.read(&them, theirs, 2048 * 8),
        before,
        "their memory untouched"
    );
    rig.check_tables();
}
