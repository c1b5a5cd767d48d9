//! Offloads on the emulated board on the RTL (issue #16): the Verilated top
//! (built with `OFFLOAD_TAGS` = 64) forwards `OFFLOAD_CALL` to the
//! in-process slow path over the RX ring (`OFFLOAD_REQ` fragments), whose
//! offload host (the firmware's offloads, `clio_slowpath::offload::
//! register_board`) answers with `OFFLOAD_REPLY` fragments the RTL turns
//! into the client's answer. Every call is sent to the model board too,
//! serving the same offload code through `clio_emu::native::Native`; the
//! answers must agree (status, request id, lengths, payload bytes). Clio-DF
//! is called in the caller's address space (a column written through the
//! RTL, scanned by the slow path's `DirectMem`), its outputs read back and
//! checked against the compute node's own computation.
//!
//! Needs `verilator` (skipped with the reason printed, failing under
//! `CI_STRICT=1`, as `rtl_board.rs`).

mod common;

use clio_config::BoardConfig;
use clio_emu::native::Native;
use clio_emu::rtl::{verilator_version, RtlBoard, RtlOptions};
use clio_emu::slow::OFFLOAD_MAX_ANSWER;
use clio_emu::{Board, Engine};
use clio_slowpath::offload::df;
use clio_slowpath::offload::kv::{self, KvStore};
use clio_slowpath::offload::tally::{self, Tally};
use clio_wire::{Opcode, Status};
use common::offload::{
    add_args, answers, batch, call_packet, call_payload, exchange, kv_args, ok_with, refused,
    Answer,
};
use common::Creds;

const CLIENT: u64 = 7;

/// What `b` answers to `pkt` (the shared exchange: `handle`, then polls
/// until nothing is due).
fn answer(b: &mut dyn Engine, pkt: &[u8]) -> Vec<Answer> {
    answers(&exchange(b, CLIENT, pkt))
}

/// The RTL board and the model board side by side, a session on each.
struct Pair {
    rtl: RtlBoard,
    model: Board,
    rtl_creds: Creds,
    model_creds: Creds,
    req: u32,
}

impl Pair {
    fn boot() -> Option<Pair> {
        let mut opts = RtlOptions::new();
        if std::env::var_os("CLIO_RTLSIM_CACHE").is_none() {
            opts.cache_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rtlsim");
        }
        if verilator_version(&opts.verilator).is_none() {
            let why = "verilator is not on PATH: the RTL board cannot be built";
            if std::env::var("CI_STRICT").as_deref() == Ok("1") {
                panic!("{why} (CI_STRICT=1)");
            }
            eprintln!("SKIPPED: {why}");
            return None;
        }
        let cfg = BoardConfig::embedded("emulator").unwrap();
        let mut rtl = RtlBoard::launch(&cfg, &opts).unwrap_or_else(|e| panic!("RTL board: {e}"));
        let mut model = Board::new(&cfg).unwrap();
        model
            .register_offload(tally::ID, Box::new(Native::new(Tally::new())))
            .unwrap();
        // The slow path's store: the same code, the same bucket count.
        model
            .register_offload(
                kv::OFFLOAD_ID,
                Box::new(Native::new(KvStore::<64>::new(kv::DEFAULT_BUCKETS))),
            )
            .unwrap();
        // Clio-DF: the firmware's code, in the caller's space.
        model
            .register_offload(df::OFFLOAD_ID, Box::new(Native::new(df::DfOffload::new())))
            .unwrap();
        let open = common::open_packet(1, None);
        let first = |b: &mut dyn Engine| common::creds_of(&exchange(b, CLIENT, &open)[0]);
        let rtl_creds = first(&mut rtl);
        let model_creds = first(&mut model);
        Some(Pair {
            rtl,
            model,
            rtl_creds,
            model_creds,
            req: 1,
        })
    }

    /// One `OFFLOAD_CALL` to both boards; (status, payload) of the answer,
    /// which must be the same on both.
    fn call(&mut self, id: u32, op: u16, args: &[u8]) -> (Status, Vec<u8>) {
        self.req += 1;
        let payload = call_payload(id, op, args);
        let pkt = |c: &Creds| call_packet(c, self.req, &payload, None);
        let r = answer(&mut self.rtl, &pkt(&self.rtl_creds));
        let m = answer(&mut self.model, &pkt(&self.model_creds));
        assert_eq!(r, m, "RTL board and model board answer differently");
        assert_eq!(r.len(), 1, "one packet: {r:?}");
        assert_eq!(
            (r[0].opcode, r[0].req_id),
            (Opcode::OffloadCallResp, self.req)
        );
        (r[0].status, r[0].payload.clone())
    }

    /// The same request of each board's session to both; the answers,
    /// which must agree.
    fn both(&mut self, op: Opcode, va: u64, total: u32, payload: &[u8]) -> Vec<Answer> {
        self.req += 1;
        let r = answer(
            &mut self.rtl,
            &self.rtl_creds.request(op, self.req, va, total, payload),
        );
        let m = answer(
            &mut self.model,
            &self.model_creds.request(op, self.req, va, total, payload),
        );
        assert_eq!(r, m, "RTL board and model board answer {op:?} differently");
        r
    }

    /// `size` bytes (read-write) in each session's space: the same VA on
    /// both boards (the same slow-path placement).
    fn alloc(&mut self, size: u64) -> u64 {
        self.req += 1;
        let va = |b: &mut dyn Engine, c: &Creds| {
            let got = exchange(b, CLIENT, &c.alloc(self.req, size));
            let (h, _) = common::parse(&got[0]);
            assert_eq!((h.opcode, h.status), (Opcode::AllocResp, Status::Ok));
            h.va
        };
        let r = va(&mut self.rtl, &self.rtl_creds);
        assert_eq!(r, va(&mut self.model, &self.model_creds), "placement");
        r
    }

    /// Write `data` at `va` on both boards, a packet per request.
    fn write(&mut self, va: u64, data: &[u8]) {
        for (i, piece) in data.chunks(PIECE).enumerate() {
            let at = va + (i * PIECE) as u64;
            let a = self.both(Opcode::Write, at, piece.len() as u32, piece);
            assert_eq!((a.len(), a[0].status), (1, Status::Ok), "{a:?}");
        }
    }

    /// `len` bytes at `va`, the same on both boards.
    fn read(&mut self, va: u64, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for at in (0..len).step_by(PIECE) {
            let n = PIECE.min(len - at);
            let a = self.both(Opcode::Read, va + at as u64, n as u32, &[]);
            assert_eq!((a.len(), a[0].status), (1, Status::Ok), "{a:?}");
            out.extend_from_slice(&a[0].payload);
        }
        out
    }
}

/// Bytes of one write or read request (within one packet).
const PIECE: usize = 1024;

impl Pair {
    /// One batch `OFFLOAD_CALL` (`ops`: operation and arguments) to both
    /// boards; every packet of the answer, the same on both.
    fn call_batch(&mut self, id: u32, ops: &[(u16, Vec<u8>)]) -> Vec<Answer> {
        self.req += 1;
        let p = batch(id, ops);
        let r = answer(
            &mut self.rtl,
            &call_packet(&self.rtl_creds, self.req, &p, None),
        );
        let m = answer(
            &mut self.model,
            &call_packet(&self.model_creds, self.req, &p, None),
        );
        assert_eq!(r, m, "RTL board and model board answer differently");
        assert!(
            r.iter()
                .all(|a| (a.opcode, a.req_id) == (Opcode::OffloadCallResp, self.req)),
            "{r:?}"
        );
        r
    }
}

#[test]
fn offload_calls_through_the_verilated_top() {
    use kv::proto::{code, op};
    let Some(mut b) = Pair::boot() else { return };
    let k = kv::OFFLOAD_ID;

    // Clio-KV: put, get, delete, get of the deleted key.
    assert_eq!(
        b.call(k, op::PUT, &kv_args(b"alpha", b"one")),
        (Status::Ok, ok_with(b""))
    );
    let value = vec![0x5au8; 700];
    assert_eq!(
        b.call(k, op::PUT, &kv_args(b"beta", &value)),
        (Status::Ok, ok_with(b""))
    );
    assert_eq!(
        b.call(k, op::READ, &kv_args(b"alpha", b"")),
        (Status::Ok, ok_with(b"one"))
    );
    assert_eq!(
        b.call(k, op::READ, &kv_args(b"beta", b"")),
        (Status::Ok, ok_with(&value))
    );
    assert_eq!(
        b.call(k, op::DELETE, &kv_args(b"alpha", b"")),
        (Status::Ok, ok_with(b""))
    );
    assert_eq!(
        b.call(k, op::READ, &kv_args(b"alpha", b"")),
        (Status::OffloadRefused, refused(code::NOT_FOUND))
    );

    // The tally: the counter adds up across calls.
    assert_eq!(
        b.call(tally::ID, tally::op::ADD, &add_args(5, 7)),
        (Status::Ok, ok_with(&7u64.to_le_bytes()))
    );
    assert_eq!(
        b.call(tally::ID, tally::op::ADD, &add_args(5, 3)),
        (Status::Ok, ok_with(&10u64.to_le_bytes()))
    );

    // No such offload: its own status, no payload.
    assert_eq!(b.call(77, 1, &[]), (Status::NoSuchOffload, vec![]));

    // The calls went through the slow path's offload host.
    let s = b
        .rtl
        .offload_stats()
        .expect("the RTL board serves offloads");
    assert_eq!((s.ok, s.refused, s.unknown), (7, 1, 1), "{s:?}");

    // Batch answers longer than 2 048 bytes (the former LUT-RAM buffer),
    // up to the board's 64 KiB bound (the RTL's block-RAM buffer holds it
    // whole): three reads of the 700-byte value, then 63 reads of 1 KiB
    // values (Clio-KV's largest batch), each sent in MTU packets.
    assert_eq!(OFFLOAD_MAX_ANSWER, 64 * 1024);
    let big: Vec<Vec<u8>> = (0..3u8)
        .map(|i| (0..kv::MAX_VALUE).map(|j| (j as u8) ^ (i * 0x55)).collect())
        .collect();
    for (i, v) in big.iter().enumerate() {
        assert_eq!(
            b.call(k, op::PUT, &kv_args(&[b'k', i as u8], v)),
            (Status::Ok, ok_with(b""))
        );
    }
    for (count, key_of) in [
        (
            3usize,
            &(|_: usize| b"beta".to_vec()) as &dyn Fn(usize) -> Vec<u8>,
        ),
        (63, &|i: usize| vec![b'k', (i % 3) as u8]),
    ] {
        let ops: Vec<(u16, Vec<u8>)> = (0..count)
            .map(|i| (op::READ, kv_args(&key_of(i), b"")))
            .collect();
        let r = b.call_batch(k, &ops);
        let payload: Vec<u8> = r.iter().flat_map(|a| a.payload.clone()).collect();
        assert!(r.iter().all(|a| a.status == Status::Ok), "{r:?}");
        assert_eq!(r[0].total_len as usize, payload.len());
        assert!(payload.len() > 2048 && payload.len() <= OFFLOAD_MAX_ANSWER);
        // Every value read comes back in order.
        let mut at = 0;
        for i in 0..count {
            let want = if count == 3 { &value } else { &big[i % 3] };
            let found = payload[at..]
                .windows(want.len())
                .position(|w| w == &want[..])
                .unwrap_or_else(|| panic!("batch of {count}: value {i} missing"));
            at += found + want.len();
        }
        if count == 63 {
            assert!(payload.len() > 63 * kv::MAX_VALUE, "{}", payload.len());
            assert!(r.len() > 40, "{} packets", r.len());
        }
    }
    // The host counts a batch's operations one by one.
    let s = b.rtl.offload_stats().unwrap();
    assert_eq!(
        (s.ok, s.refused, s.unknown),
        (7 + 3 + 3 + 63, 1, 1),
        "{s:?}"
    );
    // Clio-DF in the caller's address space: a column the client wrote
    // through the RTL, scanned by the slow path's `DirectMem` once it has
    // checked the caller's session, the selection written where the client
    // reads it; on the model board the same code joins the caller's PID
    // through `OffloadMem`. Answers and outputs agree, and with the
    // compute node's own computation.
    let rows = 3000u64;
    let col: Vec<u64> = (0..rows).map(|i| (i * 7919 + 13) % 100).collect();
    let column = b.alloc(rows * 8);
    let bytes: Vec<u8> = col.iter().flat_map(|v| v.to_le_bytes()).collect();
    b.write(column, &bytes);
    let out = b.alloc(rows * 4);
    let want: Vec<u32> = (0..rows as u32).filter(|&i| col[i as usize] < 10).collect();
    let n = want.len() as u64;
    assert!(n > 100 && n < rows / 5, "{n}");
    let select = df::proto::Select {
        column,
        rows,
        predicate: df::proto::pred::LT,
        lo: 10,
        hi: 0,
        project: 0,
        out_rows: out,
        out_values: 0,
        cap: rows,
    };
    assert_eq!(
        b.call(df::OFFLOAD_ID, df::proto::op::SELECT, &select.encode()),
        (Status::Ok, ok_with(&df::proto::select_result_bytes(n, n)))
    );
    let got: Vec<u8> = want.iter().flat_map(|r| r.to_le_bytes()).collect();
    assert_eq!(b.read(out, got.len()), got, "the selection");
    let sum: u128 = want.iter().map(|&r| u128::from(col[r as usize])).sum();
    let vals = want.iter().map(|&r| col[r as usize]);
    let (min, max) = (vals.clone().min().unwrap(), vals.max().unwrap());
    let agg = df::proto::Aggregate {
        column,
        rows,
        selection: out,
        selected: n,
    };
    assert_eq!(
        b.call(df::OFFLOAD_ID, df::proto::op::AGGREGATE, &agg.encode()),
        (
            Status::Ok,
            ok_with(&df::proto::aggregate_result_bytes(n, sum, min, max))
        )
    );
    // A column outside the caller's space: refused alike.
    let away = df::proto::Select {
        column: column + (1 << 40),
        ..select
    };
    assert_eq!(
        b.call(df::OFFLOAD_ID, df::proto::op::SELECT, &away.encode()),
        (Status::OffloadRefused, refused(df::proto::code::UNMAPPED))
    );
}
