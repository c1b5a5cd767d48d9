//! Differential test of Clio-DF's two memory-node halves: the emulator's
//! [`DfOffload`] (reading the caller's memory through the fast path, in
//! packets, on an in-process board) and the firmware's
//! `clio_slowpath::offload::df::DfOffload` (reading it directly in DRAM
//! through the slow path's table, served by the firmware's offload host over
//! `OFFLOAD_REQ` fragments; the slow-path tests' board, `df_rig`). The same
//! columns, predicates, projections, caps, selections and bad inputs go to
//! both; every answer (result bytes or refusal code) and every output must
//! be the same.

#[path = "../../../firmware-arm/slowpath/tests/df_rig/mod.rs"]
mod df_rig;

use clio::backend::InProcess;
use clio::{perms, ClientConfig, ClioError, Session};
use clio_config::BoardConfig;
use clio_df::proto::{self, code, op, pred, Aggregate, Select};
use clio_df::{DfOffload, OFFLOAD_ID};
use clio_emu::sdk::Emu;
use clio_emu::Board;
use clio_slowpath::offload::{df as fw, OffloadHost};
use clio_wire::Status;
use df_rig::{Creds, Outcome, Rig};

/// One memory node as the test drives it, in the caller's terms.
trait Side {
    fn alloc(&mut self, size: u64, perms: u8) -> u64;
    fn write(&mut self, va: u64, bytes: &[u8]);
    fn read(&mut self, va: u64, len: usize) -> Vec<u8>;
    fn free(&mut self, va: u64, size: u64);
    fn call(&mut self, op: u16, args: &[u8]) -> Outcome;
    fn upload(&mut self, values: &[u64]) -> u64 {
        let va = self.alloc((values.len() as u64 * 8).max(8), perms::RW);
        let b: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write(va, &b);
        va
    }
}

/// The emulator with the host-side offload.
struct Host(Session<InProcess<Emu>>);

impl Host {
    fn new() -> Host {
        let c = BoardConfig::embedded("emulator").unwrap();
        let mut b = Board::new(&c).unwrap();
        b.register_offload(OFFLOAD_ID, Box::<DfOffload>::default())
            .unwrap();
        let s =
            Session::open_with(InProcess::new(Emu(b), 1), ClientConfig::from_board(&c)).unwrap();
        Host(s)
    }
}

impl Side for Host {
    fn alloc(&mut self, size: u64, perms: u8) -> u64 {
        self.0.ralloc(size.max(8), perms).unwrap().va
    }
    fn write(&mut self, va: u64, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.0.rwrite(va, bytes).unwrap();
        }
    }
    fn read(&mut self, va: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0; len];
        if len > 0 {
            self.0.rread(va, &mut b).unwrap();
        }
        b
    }
    fn free(&mut self, va: u64, size: u64) {
        self.0.rfree(va, size.max(8)).unwrap();
    }
    fn call(&mut self, op: u16, args: &[u8]) -> Outcome {
        match self.0.offload_call(OFFLOAD_ID, op, args) {
            Ok(r) => Outcome::Ok(r),
            Err(ClioError::OffloadRefused { code, .. }) => Outcome::Refused(code),
            Err(ClioError::OffloadFault { .. }) => Outcome::Other(Status::OffloadFault),
            Err(e) => panic!("{e}"),
        }
    }
}

/// The firmware's offload on the slow-path board.
struct Fw<'a> {
    rig: Rig<'a>,
    host: OffloadHost<'a, 2, 4, { df_rig::B }>,
    me: Creds,
}

impl Side for Fw<'_> {
    fn alloc(&mut self, size: u64, perms: u8) -> u64 {
        self.rig.alloc(&self.me, size, perms)
    }
    fn write(&mut self, va: u64, bytes: &[u8]) {
        self.rig.write(&self.me, va, bytes);
    }
    fn read(&mut self, va: u64, len: usize) -> Vec<u8> {
        self.rig.read(&self.me, va, len)
    }
    fn free(&mut self, va: u64, size: u64) {
        self.rig.free(&self.me, va, size);
    }
    fn call(&mut self, op: u16, args: &[u8]) -> Outcome {
        self.rig
            .call(&mut self.host, &self.me, fw::OFFLOAD_ID, op, args)
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Both sides, and the calls compared.
struct Pair<'a> {
    host: Host,
    fw: Fw<'a>,
    compared: usize,
}

/// A pair of the same thing on each side (VAs differ).
type Two = (u64, u64);

impl Pair<'_> {
    fn both<T>(&mut self, f: impl Fn(&mut dyn Side) -> T) -> (T, T) {
        (f(&mut self.host), f(&mut self.fw))
    }

    /// The same call on both sides, its arguments built by `args` from each
    /// side's VAs (`false`: the host's, `true`: the firmware's); the
    /// answers must agree. Returns the answer.
    fn call(&mut self, op: u16, args: impl Fn(bool) -> Vec<u8>, what: &str) -> Outcome {
        let h = self.host.call(op, &args(false));
        let f = self.fw.call(op, &args(true));
        assert_eq!(
            h, f,
            "{what}: host (left) and firmware (right) answer differently"
        );
        self.compared += 1;
        h
    }

    fn free(&mut self, va: Two, size: u64) {
        self.host.free(va.0, size);
        self.fw.free(va.1, size);
    }

    /// The same bytes at `va` on both sides.
    fn same_memory(&mut self, va: Two, len: usize, what: &str) {
        assert_eq!(self.host.read(va.0, len), self.fw.read(va.1, len), "{what}");
    }
}

fn pick(v: Two, fw: bool) -> u64 {
    if fw {
        v.1
    } else {
        v.0
    }
}

fn boot<'a>(arena: &'a mut [u64], df: &'a mut fw::DfOffload) -> Pair<'a> {
    let mut rig = Rig::new(arena);
    let me = rig.open();
    Pair {
        host: Host::new(),
        fw: Fw {
            rig,
            host: df_rig::host(df),
            me,
        },
        compared: 0,
    }
}

#[test]
fn the_firmware_answers_as_the_emulator_does() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut df = fw::DfOffload::new();
    let mut p = boot(&mut arena, &mut df);
    let mut next = xorshift(0xd1ff_0df0);
    let (mut oks, mut refusals) = (0, 0);
    for round in 0..40 {
        let rows = [0usize, 1, 3, 200, 1000, 8192, 8193, 17_000][round % 8];
        let spread = [4u64, 1000, u64::MAX][round % 3];
        let col: Vec<u64> = (0..rows)
            .map(|_| match next() % 16 {
                0 => 0,
                1 => u64::MAX,
                _ => next() % spread,
            })
            .collect();
        let other: Vec<u64> = (0..rows).map(|_| next()).collect();
        let c: Two = p.both(|s| s.upload(&col));
        let o: Two = p.both(|s| s.upload(&other));
        // Now and then an unknown predicate (0, 8).
        let predicate = match round % 9 {
            7 => 0,
            8 => 8,
            _ => 1 + (next() % 7) as u8,
        };
        let (lo, hi) = (next() % spread, next() % spread);
        let cap = match next() % 4 {
            0 => rows as u64,
            1 => rows as u64 / 3,
            2 => 0,
            _ => u64::MAX,
        };
        let project = next() % 2 == 0;
        let room = cap.min(rows as u64);
        // Outputs allocated and never touched by the caller.
        let r: Two = p.both(|s| s.alloc(room * 4, perms::RW));
        let v: Two = if project {
            p.both(|s| s.alloc(room * 8, perms::RW))
        } else {
            (0, 0)
        };
        let what = format!(
            "round {round}: {rows} rows, predicate {predicate} {lo} {hi}, cap {cap}, project {project}"
        );
        let res = p.call(
            op::SELECT,
            |f| {
                Select {
                    column: pick(c, f),
                    rows: rows as u64,
                    predicate,
                    lo,
                    hi,
                    project: if project { pick(o, f) } else { 0 },
                    out_rows: pick(r, f),
                    out_values: pick(v, f),
                    cap,
                }
                .encode()
            },
            &what,
        );
        let written = match &res {
            Outcome::Ok(b) => {
                oks += 1;
                proto::select_result(b).unwrap().1 as usize
            }
            _ => {
                refusals += 1;
                0
            }
        };
        p.same_memory(r, written * 4, &what);
        if project {
            p.same_memory(v, written * 8, &what);
        }
        // Aggregates: the column, and the other column's selected rows.
        p.call(
            op::AGGREGATE,
            |f| {
                Aggregate {
                    column: pick(c, f),
                    rows: rows as u64,
                    selection: 0,
                    selected: 0,
                }
                .encode()
            },
            &what,
        );
        if written > 0 {
            let agg = |f| {
                Aggregate {
                    column: pick(o, f),
                    rows: rows as u64,
                    selection: pick(r, f),
                    selected: written as u64,
                }
                .encode()
            };
            assert!(matches!(p.call(op::AGGREGATE, agg, &what), Outcome::Ok(_)));
            // A row past the column in the selection.
            let bad = (rows as u32 + (next() % 3) as u32).to_le_bytes();
            let at = (next() % written as u64) * 4;
            p.host.write(r.0 + at, &bad);
            p.fw.write(r.1 + at, &bad);
            assert_eq!(
                p.call(op::AGGREGATE, agg, &what),
                Outcome::Refused(code::BAD_ROW)
            );
        }
        p.free(c, rows as u64 * 8);
        p.free(o, rows as u64 * 8);
        p.free(r, room * 4);
        if project {
            p.free(v, room * 8);
        }
    }
    assert!(
        oks > 20 && refusals > 3,
        "{oks} answered, {refusals} refused"
    );
    assert!(p.compared > 100, "{} calls compared", p.compared);
}

/// A bad call: what it is, its op, its arguments on each side, the code.
type Case = (&'static str, u16, Box<dyn Fn(bool) -> Vec<u8>>, u16);

#[test]
fn bad_input_is_refused_alike() {
    let mut arena = vec![0u64; df_rig::cfg().arena_words()];
    let mut df = fw::DfOffload::new();
    let mut p = boot(&mut arena, &mut df);
    let col: Vec<u64> = (0..300).map(|i| i % 17).collect();
    let c: Two = p.both(|s| s.upload(&col));
    let r: Two = p.both(|s| s.alloc(300 * 4, perms::RW));
    let v: Two = p.both(|s| s.alloc(300 * 8, perms::RW));
    let ro: Two = p.both(|s| s.alloc(300 * 4, perms::READ));
    let good = move |f: bool| Select {
        column: pick(c, f),
        rows: 300,
        predicate: pred::LE,
        lo: 3,
        hi: 0,
        project: 0,
        out_rows: pick(r, f),
        out_values: 0,
        cap: 300,
    };
    assert!(matches!(
        p.call(op::SELECT, |f| good(f).encode(), "good"),
        Outcome::Ok(_)
    ));
    let cases: Vec<Case> = vec![
        (
            "short",
            op::SELECT,
            Box::new(move |f| good(f).encode()[..71].to_vec()),
            code::BAD_ARGS,
        ),
        (
            "reserved byte",
            op::SELECT,
            Box::new(move |f| {
                let mut b = good(f).encode();
                b[23] = 9;
                b
            }),
            code::BAD_ARGS,
        ),
        (
            "unknown op",
            7,
            Box::new(move |f| good(f).encode()),
            code::BAD_ARGS,
        ),
        (
            "projection without output",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    project: pick(c, f),
                    ..good(f)
                }
                .encode()
            }),
            code::BAD_ARGS,
        ),
        (
            "past 2^64",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    out_rows: u64::MAX - 100,
                    ..good(f)
                }
                .encode()
            }),
            code::BAD_ARGS,
        ),
        (
            "unknown predicate",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    predicate: 99,
                    ..good(f)
                }
                .encode()
            }),
            code::BAD_PREDICATE,
        ),
        (
            "between lo > hi",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    predicate: pred::BETWEEN,
                    lo: 9,
                    hi: 1,
                    ..good(f)
                }
                .encode()
            }),
            code::BAD_PREDICATE,
        ),
        (
            "unmapped column",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    column: 0x7f00_0000_0000,
                    ..good(f)
                }
                .encode()
            }),
            code::UNMAPPED,
        ),
        (
            "unmapped projection",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    project: 0x7f00_0000_0000,
                    out_values: pick(v, f),
                    ..good(f)
                }
                .encode()
            }),
            code::UNMAPPED,
        ),
        (
            "read-only output",
            op::SELECT,
            Box::new(move |f| {
                Select {
                    out_rows: pick(ro, f),
                    ..good(f)
                }
                .encode()
            }),
            code::PERMISSION,
        ),
        (
            "unmapped selection",
            op::AGGREGATE,
            Box::new(move |f| {
                Aggregate {
                    column: pick(c, f),
                    rows: 300,
                    selection: 0x7f00_0000_0000,
                    selected: 1,
                }
                .encode()
            }),
            code::UNMAPPED,
        ),
    ];
    for (what, o, args, want) in &cases {
        assert_eq!(p.call(*o, args, what), Outcome::Refused(*want), "{what}");
    }
    // Nothing was written where the caller may only read.
    p.same_memory(ro, 300 * 4, "read-only output");
    assert_eq!(p.fw.read(ro.1, 1200), vec![0; 1200]);
}

#[test]
fn the_firmware_code_in_the_emulators_engine_answers_alike() {
    // `clio_emu::native::Native` serves the firmware's offload in the
    // emulator's engine, its caller's-space join forwarded to
    // `OffloadMem::use_caller_space`: the DataFrame client gets the same
    // answers as from the emulator's own `DfOffload`.
    use clio_df::{DfClient, Predicate};
    let c = BoardConfig::embedded("emulator").unwrap();
    let client = |b: Board| {
        DfClient::new(
            Session::open_with(InProcess::new(Emu(b), 1), ClientConfig::from_board(&c)).unwrap(),
        )
    };
    let mut b = Board::new(&c).unwrap();
    b.register_offload(
        OFFLOAD_ID,
        Box::new(clio_emu::native::Native::new(fw::DfOffload::new())),
    )
    .unwrap();
    let mut native = client(b);
    let mut b = Board::new(&c).unwrap();
    b.register_offload(OFFLOAD_ID, Box::<DfOffload>::default())
        .unwrap();
    let mut own = client(b);
    let mut next = xorshift(0x7a7e_0df0);
    let a: Vec<u64> = (0..12_345).map(|_| next() % 50).collect();
    let v: Vec<u64> = (0..12_345).map(|_| next()).collect();
    let cols = [("a", &a[..]), ("v", &v[..])];
    let (tn, to) = (native.upload(&cols).unwrap(), own.upload(&cols).unwrap());
    for pred in [
        Predicate::Eq(3),
        Predicate::Ne(3),
        Predicate::Lt(10),
        Predicate::Between(20, 29),
        Predicate::Gt(100),
    ] {
        let (sn, so) = (
            native.select(&tn, "a", pred, Some("v"), 12_345).unwrap(),
            own.select(&to, "a", pred, Some("v"), 12_345).unwrap(),
        );
        assert_eq!(sn.matched(), so.matched(), "{pred:?}");
        assert!(sn.matched() > 0 || matches!(pred, Predicate::Gt(100)));
        assert_eq!(
            native.fetch_rows(&sn).unwrap(),
            own.fetch_rows(&so).unwrap()
        );
        assert_eq!(
            native.fetch_values(&sn).unwrap(),
            own.fetch_values(&so).unwrap()
        );
        assert_eq!(
            native.aggregate(&tn, "v", Some(&sn)).unwrap(),
            own.aggregate(&to, "v", Some(&so)).unwrap(),
            "{pred:?}"
        );
        assert_eq!(
            native.aggregate_values(&sn).unwrap(),
            own.aggregate_values(&so).unwrap()
        );
    }
    assert_eq!(
        native.aggregate(&tn, "v", None).unwrap(),
        own.aggregate(&to, "v", None).unwrap()
    );
}
