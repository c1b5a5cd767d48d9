//! Generator of the wire reference `host-sdk/wire/REFERENCE.md`: what an
//! outside client needs to talk to a Clio board, produced from this crate's
//! own definitions so it cannot drift from them.
//!
//! What is derived rather than written down:
//! - header field offsets from [`clio::field`], sizes and byte order by
//!   probing the [`Packet`] setters with a marker value;
//! - payload field offsets, sizes and byte order by probing each payload's
//!   `emit` with one field set at a time, reserved bytes as the bytes no
//!   field covers, and whether they are checked by feeding a non-zero
//!   reserved byte to the payload's `parse`;
//! - opcode and status values and names from the enums' `ALL` lists, the
//!   session/path/dedup columns from the [`Opcode`] predicates;
//! - the CRC parameters from [`crc::POLY`] and a bitwise reference CRC that
//!   is checked against [`crc32c`] on the published check value;
//! - the worked packets' bytes from [`Header::encode`].
//!
//! The prose (when each status is returned, the per-opcode rules that live
//! in the fast path, not in this crate) is matched exhaustively on the
//! enums: a new opcode or status does not compile until it is described.
//! Any disagreement between prose tables and code (a field whose probe does
//! not find it where the table says) panics, so the drift test fails.
//! `CLIO_BLESS=1 cargo test -p clio-wire --features std` rewrites the copy.

use std::fmt::Write;
use std::string::String;
use std::vec::Vec;
use std::{format, vec};

use crate::clio::{self, field, flags, serial_before, HEADER_LEN, MAX_PAYLOAD, RESPONSE_BIT};
use crate::payload::{
    perms, AllocReq, AllocResp, AtomicArgs, AtomicResp, ChaseReq, ChaseResp, FreeReq, InfoResp,
    OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp,
    OpenSessionReq, OpenSessionResp,
};
use crate::pte::{MAX_PAGE_SHIFT, MIN_PAGE_SHIFT};
use crate::{crc, crc32c, Header, Opcode, Packet, Status};

/// Bytes of the word every atomic acts on: its `total_len` and the
/// alignment of its `va` (the fast path checks `total_len == 8`,
/// `va % 8 == 0`). clio-wire has no constant of its own for it; the
/// operand and answer lengths are this word.
const ATOMIC_WORD: usize = AtomicResp::LEN;

/// The marker written into a field to find it: distinct non-zero bytes, so
/// the probe sees every byte of the field (truncated to its width by the
/// `as` casts of a payload builder) and their order.
const MARKER: u64 = 0x0102_0304_0506_0708;

/// Byte order of a probed field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// One byte: no order.
    Byte,
    /// Most significant byte first.
    Big,
    /// Least significant byte first.
    Little,
    /// A byte string (ASCII).
    Text,
}

impl Order {
    fn as_str(self) -> &'static str {
        match self {
            Order::Byte => "—",
            Order::Big => "big",
            Order::Little => "little",
            Order::Text => "bytes",
        }
    }
}

/// Where a probe found a field.
#[derive(Debug, Clone, Copy)]
struct Span {
    offset: usize,
    size: usize,
    order: Order,
}

/// Compare a zero emission with one where the field holds the marker.
/// `hint_size` widens a span whose marker sets fewer bytes than the field
/// has (a boolean stored as a big-endian u32).
fn probe(name: &str, zero: &[u8], marked: &[u8], hint_size: Option<usize>) -> Span {
    assert_eq!(zero.len(), marked.len(), "{name}: emission length changed");
    let changed: Vec<usize> = (0..zero.len()).filter(|&i| zero[i] != marked[i]).collect();
    let (Some(&first), Some(&last)) = (changed.first(), changed.last()) else {
        panic!("{name}: setting the field changes no byte");
    };
    assert_eq!(
        last + 1 - first,
        changed.len(),
        "{name}: the field's bytes are not contiguous"
    );
    if let Some(size) = hint_size {
        // The marker set only the low byte(s); the field ends there (BE).
        assert!(
            last + 1 >= size,
            "{name}: hinted size {size} runs before byte 0"
        );
        return Span {
            offset: last + 1 - size,
            size,
            order: Order::Big,
        };
    }
    let bytes = &marked[first..=last];
    let size = bytes.len();
    let order = if size == 1 {
        Order::Byte
    } else if bytes.windows(2).all(|w| w[1] == w[0].wrapping_add(1)) && bytes[size - 1] == 8 {
        Order::Big
    } else if bytes.windows(2).all(|w| w[0] == w[1].wrapping_add(1)) && bytes[0] == 8 {
        Order::Little
    } else {
        Order::Text
    };
    Span {
        offset: first,
        size,
        order,
    }
}

/// How a payload field is probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An unsigned integer (its width comes from the probe).
    Int,
    /// A byte string.
    Text,
    /// 0 or 1 carried in a big-endian u32.
    Bool32,
}

/// One documented payload field.
struct FieldDoc {
    name: &'static str,
    kind: Kind,
    range: String,
    doc: &'static str,
}

fn fd(name: &'static str, kind: Kind, range: &str, doc: &'static str) -> FieldDoc {
    FieldDoc {
        name,
        kind,
        range: range.into(),
        doc,
    }
}

/// One documented payload: its fields in the builder's order, a builder
/// taking one raw value per field (a full struct literal, so a field added
/// to the struct does not compile here until documented), a valid baseline
/// and the payload's parser.
struct PayloadDoc {
    title: &'static str,
    rust: &'static str,
    len: usize,
    carried_by: &'static str,
    fields: Vec<FieldDoc>,
    build: fn(&[u64]) -> Vec<u8>,
    valid: Vec<u64>,
    parse_ok: fn(&[u8]) -> bool,
    notes: &'static str,
}

fn emit_vec<F: Fn(&mut [u8]) -> crate::Result<usize>>(len: usize, f: F) -> Vec<u8> {
    let mut b = vec![0u8; len];
    let n = f(&mut b).unwrap_or_else(|e| panic!("emit failed: {e}"));
    assert_eq!(n, len, "emit wrote {n} bytes, LEN is {len}");
    b
}

fn text16(v: u64) -> [u8; 16] {
    if v == 0 {
        [0; 16]
    } else {
        *b"ABCDEFGHIJKLMNOP"
    }
}

fn payloads() -> Vec<PayloadDoc> {
    let page_shift = format!(
        "0 (board default) or {MIN_PAGE_SHIFT}..={MAX_PAGE_SHIFT}, a page size the board supports"
    );
    vec![
        PayloadDoc {
            title: "AllocReq",
            rust: "payload::AllocReq",
            len: AllocReq::LEN,
            carried_by: "ALLOC request (payload_len must equal LEN)",
            fields: vec![
                fd("size", Kind::Int, "1..; rounded up to whole pages", "bytes requested"),
                fd("perms", Kind::Int, &format!("{:#x} (READ) | {:#x} (WRITE), not 0", perms::READ, perms::WRITE), "permissions of the new range"),
                fd("page_shift", Kind::Int, &page_shift, "log2 of the range's page size"),
            ],
            build: |v| emit_vec(AllocReq::LEN, |b| AllocReq { size: v[0], perms: v[1] as u8, page_shift: v[2] as u8 }.emit(b)),
            valid: vec![4096, perms::RW as u64, 0],
            parse_ok: |b| AllocReq::parse(b).is_ok(),
            notes: "The VA hint (or, with flag FIXED_VA, the exact VA wanted) travels in the header's `va`.",
        },
        PayloadDoc {
            title: "AllocResp",
            rust: "payload::AllocResp",
            len: AllocResp::LEN,
            carried_by: "ALLOC_RESP with status OK",
            fields: vec![
                fd("size", Kind::Int, "whole pages", "bytes reserved"),
                fd("retries", Kind::Int, "any", "candidate ranges refused for bucket overflow (diagnostic)"),
            ],
            build: |v| emit_vec(AllocResp::LEN, |b| AllocResp { size: v[0], retries: v[1] as u32 }.emit(b)),
            valid: vec![4096, 0],
            parse_ok: |b| AllocResp::parse(b).is_ok(),
            notes: "The placed VA is the response header's `va`; flag MOVED says it is not the FIXED_VA asked for.",
        },
        PayloadDoc {
            title: "FreeReq",
            rust: "payload::FreeReq",
            len: FreeReq::LEN,
            carried_by: "FREE request (payload_len must equal LEN)",
            fields: vec![fd("size", Kind::Int, "covers whole allocated ranges", "bytes to free from the header's `va`")],
            build: |v| emit_vec(FreeReq::LEN, |b| FreeReq { size: v[0] }.emit(b)),
            valid: vec![4096],
            parse_ok: |b| FreeReq::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "CAS operands",
            rust: "payload::AtomicArgs::CompareAndSwap",
            len: AtomicArgs::CAS_LEN,
            carried_by: "CAS request (payload_len must equal LEN)",
            fields: vec![
                fd("expected", Kind::Int, "any", "value the word must hold"),
                fd("new", Kind::Int, "any", "value stored if it does"),
            ],
            build: |v| emit_vec(AtomicArgs::CAS_LEN, |b| AtomicArgs::CompareAndSwap { expected: v[0], new: v[1] }.emit(b)),
            valid: vec![0, 0],
            parse_ok: |b| AtomicArgs::parse_cas(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "FAA operand",
            rust: "payload::AtomicArgs::FetchAndAdd",
            len: AtomicArgs::FAA_LEN,
            carried_by: "FAA request (payload_len must equal LEN)",
            fields: vec![fd("addend", Kind::Int, "any (wrapping add)", "value added to the word")],
            build: |v| emit_vec(AtomicArgs::FAA_LEN, |b| AtomicArgs::FetchAndAdd { addend: v[0] }.emit(b)),
            valid: vec![0],
            parse_ok: |b| AtomicArgs::parse_faa(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "AtomicResp",
            rust: "payload::AtomicResp",
            len: AtomicResp::LEN,
            carried_by: "TAS/CAS/FAA/LOCK/UNLOCK responses with status OK, and LOCK_RESP with BUSY",
            fields: vec![fd("old", Kind::Int, "any", "the word's value before the operation")],
            build: |v| emit_vec(AtomicResp::LEN, |b| AtomicResp { old: v[0] }.emit(b)),
            valid: vec![0],
            parse_ok: |b| AtomicResp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "ChaseReq",
            rust: "payload::ChaseReq",
            len: ChaseReq::LEN,
            carried_by: "POINTER_CHASE request (payload_len must equal LEN)",
            fields: vec![
                fd("key", Kind::Int, "any", "key searched for"),
                fd("key_offset", Kind::Int, "any", "offset of the 8-byte little-endian key within a node"),
                fd("next_offset", Kind::Int, "any", "offset of the 8-byte little-endian next pointer (0 ends the list)"),
                fd("value_offset", Kind::Int, "any", "offset of the value within the matching node"),
                fd("value_len", Kind::Int, &format!("0..={}, and {} + value_len ≤ MTU", ChaseReq::MAX_VALUE, ChaseResp::LEN), "value bytes returned"),
                fd("max_hops", Kind::Int, &format!("1..={}", ChaseReq::MAX_HOPS), "most nodes visited"),
            ],
            build: |v| emit_vec(ChaseReq::LEN, |b| ChaseReq { key: v[0], key_offset: v[1] as u16, next_offset: v[2] as u16, value_offset: v[3] as u16, value_len: v[4] as u16, max_hops: v[5] as u32 }.emit(b)),
            valid: vec![0, 0, 8, 16, 8, 1],
            parse_ok: |b| ChaseReq::parse(b).is_ok(),
            notes: "The walk starts at the header's `va`.",
        },
        PayloadDoc {
            title: "ChaseResp",
            rust: "payload::ChaseResp",
            len: ChaseResp::LEN,
            carried_by: "POINTER_CHASE_RESP with status OK (followed by value_len value bytes when found)",
            fields: vec![
                fd("node_va", Kind::Int, "0 if not found", "VA of the matching node"),
                fd("hops", Kind::Int, "1..=max_hops", "nodes visited"),
                fd("found", Kind::Bool32, "0 or 1", "whether the key was found"),
            ],
            build: |v| emit_vec(ChaseResp::LEN, |b| ChaseResp { node_va: v[0], hops: v[1] as u32, found: v[2] != 0 }.emit(b)),
            valid: vec![0, 1, 0],
            parse_ok: |b| ChaseResp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "OffloadCallReq",
            rust: "payload::OffloadCallReq",
            len: OffloadCallReq::LEN,
            carried_by: "OFFLOAD_CALL request (fixed part; the operation's arguments, defined by the offload, follow)",
            fields: vec![
                fd("offload", Kind::Int, "an id registered on the board", "which offload"),
                fd("op", Kind::Int, "defined by the offload", "which operation of it"),
            ],
            build: |v| emit_vec(OffloadCallReq::LEN, |b| OffloadCallReq { offload: v[0] as u32, op: v[1] as u16 }.emit(b)),
            valid: vec![0, 0],
            parse_ok: |b| OffloadCallReq::parse(b).is_ok(),
            notes: "Answered by the board's offload engine (the emulated board registers Clio-KV as offload 1): OK + OffloadCallResp + result bytes, NO_SUCH_OFFLOAD for an unknown id, OFFLOAD_FAULT when the offload faulted, OFFLOAD_REFUSED + OffloadCallResp (code = the offload's reason). A board without an offload engine (the RTL fast path alone) answers UNSUPPORTED. Exactly-once is the offload engine's: it remembers its answers per (session, first attempt's req_id) until `ack` passes them. Clio-KV's calls (its own format, from `clio_kv::proto`): `op` 1 create, 2 update, 3 read, 4 delete, 5 put; arguments `key_len` u16, reserved u16 = 0, `value_len` u32 (big-endian), then the key (1..=250 bytes) and the value (≤ 1024 bytes; none for read and delete); a read's result is the value, the others return nothing. A board whose slow path serves offloads (the firmware image; the fast path passes the call to the ARM whole over the rings, `OFFLOAD_REQ`/`OFFLOAD_REPLY` in the wire README) answers with the same statuses and bytes; it runs Clio-KV (id 1, as above) and the tally test offload, id 4: `op` 1 add (`index` u32, `delta` u64, big-endian; result the new value, 8 bytes little-endian), 2 get (`index` u32; result the value), 3 peek (`va` u64: the word at that VA of the offload's own address space, OFFLOAD_FAULT outside it); refusal codes 1 index ≥ 1024, 2 bad arguments or op.",
        },
        PayloadDoc {
            title: "OffloadCallResp",
            rust: "payload::OffloadCallResp",
            len: OffloadCallResp::LEN,
            carried_by: "OFFLOAD_CALL_RESP with status OK or OFFLOAD_REFUSED (fixed part; result bytes follow with OK)",
            fields: vec![
                fd("code", Kind::Int, "0 with OK; the offload's reason (≠ 0) with OFFLOAD_REFUSED", "why the call was refused"),
            ],
            build: |v| emit_vec(OffloadCallResp::LEN, |b| OffloadCallResp { code: v[0] as u16 }.emit(b)),
            valid: vec![0],
            parse_ok: |b| OffloadCallResp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "OpenSessionReq",
            rust: "payload::OpenSessionReq",
            len: OpenSessionReq::LEN,
            carried_by: "OPEN_SESSION request (payload_len must equal LEN exactly)",
            fields: vec![
                fd("join_session", Kind::Int, "0 = new address space; else a live session id", "session whose address space to join"),
                fd("join_key", Kind::Int, "0 when join_session = 0; else that session's key", "proof of the right to join"),
            ],
            build: |v| emit_vec(OpenSessionReq::LEN, |b| OpenSessionReq { join_session: v[0] as u16, join_key: v[1] }.emit(b)),
            valid: vec![0, 0],
            parse_ok: |b| OpenSessionReq::parse(b).is_ok(),
            notes: "The trailing zero bytes make the request as long as its answer (no amplification).",
        },
        PayloadDoc {
            title: "OpenSessionResp",
            rust: "payload::OpenSessionResp",
            len: OpenSessionResp::LEN,
            carried_by: "OPEN_SESSION_RESP with status OK",
            fields: vec![
                fd("session", Kind::Int, "1..sessions (InfoResp.sessions)", "the session id to put in `session`"),
                fd("pid", Kind::Int, "1..", "the address space to put in `pid`"),
                fd("key", Kind::Int, "any (unguessable)", "the session key to put in `key`"),
                fd("epoch", Kind::Int, "non-zero", "this boot's epoch, to put in `epoch`"),
                fd("dedup_quota", Kind::Int, "any", "dedup records the session may hold (unacknowledged non-idempotent requests)"),
                fd("lock_quota", Kind::Int, "any", "locks the session may hold at once"),
                fd("mem_quota_pages", Kind::Int, "any", "default-size pages the address space may allocate"),
            ],
            build: |v| emit_vec(OpenSessionResp::LEN, |b| OpenSessionResp { session: v[0] as u16, pid: v[1] as u32, key: v[2], epoch: v[3] as u32, dedup_quota: v[4] as u16, lock_quota: v[5] as u16, mem_quota_pages: v[6] as u32 }.emit(b)),
            valid: vec![1, 1, 1, 1, 1, 1, 1],
            parse_ok: |b| OpenSessionResp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "InfoResp",
            rust: "payload::InfoResp",
            len: InfoResp::LEN,
            carried_by: "INFO_RESP with status OK",
            fields: vec![
                fd("board", Kind::Text, "ASCII, NUL-padded", "board name (e.g. `emulator`, `zcu106`)"),
                fd("firmware_version", Kind::Int, "major<<16 | minor<<8 | patch", "slow-path firmware version"),
                fd("rtl_version", Kind::Int, "major<<16 | minor<<8 | patch", "fast-path behaviour version"),
                fd("build_id", Kind::Int, "any", "firmware build id"),
                fd("config_hash", Kind::Int, "any", "hash of the board configuration"),
                fd("dram_bytes", Kind::Int, "any", "board DRAM"),
                fd("mtu", Kind::Int, &format!("≤ {MAX_PAYLOAD}"), "largest payload per packet, both directions: cut writes and expect read chunks of this size"),
                fd("page_shift", Kind::Int, &format!("{MIN_PAGE_SHIFT}..={MAX_PAGE_SHIFT}"), "log2 of the default page size"),
                fd("slots_per_bucket", Kind::Int, "any", "page-table slots per bucket (diagnostic)"),
                fd("tlb_entries", Kind::Int, "any", "TLB entries (diagnostic)"),
                fd("epoch", Kind::Int, "non-zero once booted", "this boot's epoch; changes at every restart"),
                fd("sessions", Kind::Int, "any", "session-table entries: session ids are 1..sessions"),
                fd("max_resp_kib", Kind::Int, "0 or 1..=65535", "largest response one request may produce, in KiB (0: none stated): a READ with `total_len` above `max_resp_kib` × 1024 gets TOO_LARGE, header-only, nothing read; split larger reads (and, by convention, writes) into requests of at most this many bytes"),
            ],
            build: |v| emit_vec(InfoResp::LEN, |b| InfoResp { board: text16(v[0]), firmware_version: v[1] as u32, rtl_version: v[2] as u32, build_id: v[3], config_hash: v[4], dram_bytes: v[5], mtu: v[6] as u16, page_shift: v[7] as u8, slots_per_bucket: v[8] as u8, tlb_entries: v[9] as u32, epoch: v[10] as u32, sessions: v[11] as u16, max_resp_kib: v[12] as u16 }.emit(b)),
            valid: vec![0; 13],
            parse_ok: |b| InfoResp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "OffloadBatchReq",
            rust: "payload::OffloadBatchReq",
            len: OffloadBatchReq::LEN,
            carried_by: "OFFLOAD_CALL request with OffloadCallReq.op = 0xffff (OFFLOAD_OP_BATCH), right after the OffloadCallReq; as the count of an OK answer to it, right after the OffloadCallResp",
            fields: vec![
                fd("count", Kind::Int, "1..=64 (OFFLOAD_BATCH_MAX_OPS)", "operations (request) or outcomes (answer) that follow"),
            ],
            build: |v| emit_vec(OffloadBatchReq::LEN, |b| OffloadBatchReq { count: v[0] as u16 }.emit(b)),
            valid: vec![1],
            parse_ok: |b| OffloadBatchReq::parse(b).is_ok(),
            notes: "A batch is several operations of one offload in one request: `count` × (OffloadBatchOp + its `args_len` argument bytes), packed, nothing after the last. The board runs them in order, each as if it were its own OFFLOAD_CALL, and answers OK + OffloadCallResp (code 0) + OffloadBatchReq (the same count) + `count` × (OffloadBatchResult + its `len` result bytes): each operation has its own status, so one refusal does not fail the others. The answer may be longer than one packet: it is then sent as several OFFLOAD_CALL_RESP packets with the same req_id, `total_len` = the whole answer's length and `offset` = where the packet's payload goes in it (as a READ answer; section 7). A batch that does not parse is answered MALFORMED; the whole call is exactly-once like any OFFLOAD_CALL. A batch whose answer could exceed `InfoResp.max_resp_kib` × 1024 bytes is answered TOO_LARGE and nothing of it runs: 8 + 4 + for each operation 8 + its largest result, which is what the offload documents for that operation (Clio-KV: 1024 for a read, 0 for the others) and otherwise one packet's worth (`InfoResp.mtu` − 8); split it into smaller batches.",
        },
        PayloadDoc {
            title: "OffloadBatchOp",
            rust: "payload::OffloadBatchOp",
            len: OffloadBatchOp::LEN,
            carried_by: "each operation of an OffloadBatchReq (its argument bytes follow)",
            fields: vec![
                fd("op", Kind::Int, "defined by the offload; not 0xffff", "which operation"),
                fd("args_len", Kind::Int, "bytes left in the batch", "argument bytes that follow"),
            ],
            build: |v| emit_vec(OffloadBatchOp::LEN, |b| OffloadBatchOp { op: v[0] as u16, args_len: v[1] as u16 }.emit(b)),
            valid: vec![0, 0],
            parse_ok: |b| OffloadBatchOp::parse(b).is_ok(),
            notes: "",
        },
        PayloadDoc {
            title: "OffloadBatchResult",
            rust: "payload::OffloadBatchResult",
            len: OffloadBatchResult::LEN,
            carried_by: "each outcome of an OK answer to a batch (its result bytes follow)",
            fields: vec![
                fd("status", Kind::Int, "OK, OFFLOAD_REFUSED or OFFLOAD_FAULT", "the operation's outcome"),
                fd("code", Kind::Int, "≠ 0 exactly with OFFLOAD_REFUSED", "the offload's reason for refusing it"),
                fd("len", Kind::Int, "0 unless OK", "result bytes that follow"),
            ],
            build: |v| emit_vec(OffloadBatchResult::LEN, |b| OffloadBatchResult { status: crate::Status::parse(v[0] as u8).unwrap_or(crate::Status::Ok), code: v[1] as u16, len: v[2] as u32 }.emit(b)),
            valid: vec![0, 0, 0],
            parse_ok: |b| OffloadBatchResult::parse(b).is_ok(),
            notes: "",
        },
    ]
}

/// A payload's layout as found by probing: fields and reserved runs.
struct Layout {
    rows: Vec<(Span, String, String, String)>,
}

fn layout(p: &PayloadDoc) -> Layout {
    let n = p.fields.len();
    let zero = (p.build)(&vec![0; n]);
    assert_eq!(zero.len(), p.len, "{}: emission is not LEN bytes", p.title);
    let mut covered = vec![false; p.len];
    let mut rows = Vec::new();
    for (i, f) in p.fields.iter().enumerate() {
        let mut vals = vec![0u64; n];
        vals[i] = if f.kind == Kind::Bool32 { 1 } else { MARKER };
        let marked = (p.build)(&vals);
        let name = format!("{}.{}", p.title, f.name);
        let mut span = probe(&name, &zero, &marked, (f.kind == Kind::Bool32).then_some(4));
        if f.kind == Kind::Text {
            span.order = Order::Text;
        }
        for c in &mut covered[span.offset..span.offset + span.size] {
            assert!(!*c, "{name}: overlaps another field");
            *c = true;
        }
        let ty = match (f.kind, span.size) {
            (Kind::Text, s) => format!("u8[{s}]"),
            (Kind::Bool32, _) => "u32 (bool)".into(),
            (_, s) => format!("u{}", s * 8),
        };
        rows.push((
            span,
            format!("`{}` {ty}", f.name),
            f.range.clone(),
            f.doc.into(),
        ));
    }
    // Reserved runs: bytes no field covers. Checked = the parser refuses a
    // non-zero byte there in an otherwise valid payload.
    let valid = (p.build)(&p.valid);
    assert!(
        (p.parse_ok)(&valid),
        "{}: the baseline does not parse",
        p.title
    );
    let mut i = 0;
    while i < p.len {
        if covered[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < p.len && !covered[i] {
            i += 1;
        }
        let checked = (start..i).all(|b| {
            let mut poked = valid.clone();
            poked[b] = 0x5a;
            !(p.parse_ok)(&poked)
        });
        let range = if checked {
            "0 (a non-zero byte is refused: MALFORMED)"
        } else {
            "send 0 (ignored)"
        };
        rows.push((
            Span {
                offset: start,
                size: i - start,
                order: Order::Byte,
            },
            "reserved".into(),
            range.into(),
            String::new(),
        ));
    }
    rows.sort_by_key(|r| r.0.offset);
    Layout { rows }
}

/// The header fields in wire order: name, offset constant, the setter used
/// to probe it, the valid values in requests, what responses carry.
type HeaderSetter = fn(&mut Packet<&mut [u8]>, u64);

fn header_fields() -> Vec<(&'static str, usize, HeaderSetter, String, &'static str)> {
    vec![
        ("version", field::VERSION, |p, v| p.set_version(v as u8), format!("{} (other values: MALFORMED)", clio::VERSION), "2"),
        ("opcode", field::OPCODE, |p, _| p.set_opcode(Opcode::Nack), "a request opcode (table below)".into(), "request opcode | 0x80, or 0xff (NACK)"),
        ("flags", field::FLAGS, |p, v| p.set_flags(v as u8), format!("0, or FIXED_VA ({:#04x}) on ALLOC", flags::FIXED_VA), "MOVED, DUPLICATE bits (below)"),
        ("status", field::STATUS, |p, _| p.set_status(Status::OverQuota), "0 (OK)".into(), "the outcome (status table)"),
        ("pid", field::PID.start, |p, v| p.set_pid(v as u32), "the session's PID (OpenSessionResp.pid); 0 in INFO and in OPEN_SESSION for a new address space".into(), "echoed"),
        ("req_id", field::REQ_ID.start, |p, v| p.set_req_id(v as u32), "1..=0xffffffff, never 0; increasing per session (serial arithmetic, wraps)".into(), "echoed"),
        ("retry_of", field::RETRY_OF.start, |p, v| p.set_retry_of(v as u32), "0 on a first attempt; on a retry the FIRST attempt's req_id".into(), "echoed"),
        ("va", field::VA.start, |p, v| p.set_va(v), "virtual address of the request's first byte; `va + total_len` must not overflow 2^64".into(), "echoed (ALLOC_RESP: the placed VA; NACK and MALFORMED: 0)"),
        ("total_len", field::TOTAL_LEN.start, |p, v| p.set_total_len(v as u32), "bytes of the whole request's data (per-opcode rules below)".into(), "echoed (NACK and MALFORMED: 0)"),
        ("offset", field::OFFSET.start, |p, v| p.set_offset(v as u32), "WRITE: where this packet's payload sits in the request's data; else 0".into(), "echoed; READ_RESP: the chunk's offset; NACK: the refused packet's offset"),
        ("payload_len", field::PAYLOAD_LEN.start, |p, v| p.set_payload_len(v as u16), format!("bytes after the header; ≤ the board's MTU (InfoResp.mtu, never above {MAX_PAYLOAD})"), "bytes after the header"),
        ("session", field::SESSION.start, |p, v| p.set_session(v as u16), "OpenSessionResp.session; 0 in INFO and OPEN_SESSION".into(), "echoed"),
        ("epoch", field::EPOCH.start, |p, v| p.set_epoch(v as u32), "OpenSessionResp.epoch (the boot the session was opened in); 0 in INFO and OPEN_SESSION".into(), "echoed; RESTARTED, INFO_RESP, OPEN_SESSION_RESP: the board's current epoch"),
        ("key", field::KEY.start, |p, v| p.set_key(v), "OpenSessionResp.key; 0 in INFO and OPEN_SESSION".into(), "0"),
        ("ack", field::ACK.start, |p, v| p.set_ack(v as u32), "acknowledgement watermark (below); 0 = no information".into(), "0"),
        ("crc", field::CRC.start, |p, v| p.set_crc(v as u32), "CRC32C of the packet (below)".into(), "same rule"),
    ]
}

/// Per-opcode rules of a request: payload, total_len, offset/alignment,
/// answer. The fast-path model (`ip/fastpath`) and the slow path enforce
/// these; anything else is MALFORMED.
fn request_rules(op: Opcode) -> Option<[String; 4]> {
    let atomic = format!("= {ATOMIC_WORD}");
    let aligned = format!("0; `va % {ATOMIC_WORD} == 0`");
    let r = |a: String, b: &str, c: &str, d: &str| Some([a, b.into(), c.into(), d.into()]);
    match op {
        Opcode::Alloc => r(
            format!("= {} (AllocReq)", AllocReq::LEN),
            "0 (ignored)",
            "0",
            "ALLOC_RESP + AllocResp; `va` = placed VA",
        ),
        Opcode::Free => r(
            format!("= {} (FreeReq)", FreeReq::LEN),
            "0 (ignored)",
            "0",
            "FREE_RESP, no payload",
        ),
        Opcode::Read => r(
            "0".into(),
            "bytes to read (any u32; mapped READ pages)",
            "0",
            "⌈total_len / MTU⌉ READ_RESP chunks (one empty chunk when total_len = 0)",
        ),
        Opcode::Write => r(
            "≤ MTU (this packet's slice)".into(),
            "bytes of the whole write",
            "`offset + payload_len ≤ total_len`",
            "one WRITE_RESP per packet, no payload",
        ),
        Opcode::TestAndSet => r("0".into(), &atomic, &aligned, "TAS_RESP + AtomicResp"),
        Opcode::CompareAndSwap => r(
            format!("= {} (CAS operands)", AtomicArgs::CAS_LEN),
            &atomic,
            &aligned,
            "CAS_RESP + AtomicResp (OK whether or not it swapped)",
        ),
        Opcode::FetchAndAdd => r(
            format!("= {} (FAA operand)", AtomicArgs::FAA_LEN),
            &atomic,
            &aligned,
            "FAA_RESP + AtomicResp",
        ),
        Opcode::Lock => r(
            "0".into(),
            &atomic,
            &aligned,
            "LOCK_RESP + AtomicResp; BUSY (with payload) if held",
        ),
        Opcode::Unlock => r("0".into(), &atomic, &aligned, "UNLOCK_RESP + AtomicResp"),
        Opcode::Fence => r(
            "0".into(),
            "0 (ignored)",
            "0",
            "FENCE_RESP once earlier slow-path requests of the PID are answered",
        ),
        Opcode::PointerChase => r(
            format!("= {} (ChaseReq)", ChaseReq::LEN),
            "0 (ignored)",
            "0",
            "POINTER_CHASE_RESP + ChaseResp + value",
        ),
        Opcode::OffloadCall => r(
            format!("≥ {} (OffloadCallReq + args)", OffloadCallReq::LEN),
            "0 (ignored)",
            "0",
            "OFFLOAD_CALL_RESP + OffloadCallResp + result (UNSUPPORTED without an offload engine)",
        ),
        Opcode::Info => r(
            format!("≥ {} zero bytes (anti-amplification)", InfoResp::LEN),
            "0",
            "0",
            "INFO_RESP + InfoResp",
        ),
        Opcode::OpenSession => r(
            format!("= {} (OpenSessionReq)", OpenSessionReq::LEN),
            "0",
            "0",
            "OPEN_SESSION_RESP + OpenSessionResp",
        ),
        Opcode::CloseSession => r("0".into(), "0", "0", "CLOSE_SESSION_RESP, no payload"),
        Opcode::AllocResp
        | Opcode::FreeResp
        | Opcode::ReadResp
        | Opcode::WriteResp
        | Opcode::TestAndSetResp
        | Opcode::CompareAndSwapResp
        | Opcode::FetchAndAddResp
        | Opcode::LockResp
        | Opcode::UnlockResp
        | Opcode::FenceResp
        | Opcode::PointerChaseResp
        | Opcode::OffloadCallResp
        | Opcode::InfoResp
        | Opcode::OpenSessionResp
        | Opcode::CloseSessionResp
        | Opcode::Nack => None,
    }
}

/// When each status is returned, and what a client does about it.
fn status_doc(s: Status) -> (&'static str, &'static str) {
    match s {
        Status::Ok => ("success", "use the answer"),
        Status::BadPid => (
            "the PID is 0 or above the board's PID range on a request that passed the session check (cannot happen with credentials from OPEN_SESSION)",
            "a client bug; do not retry",
        ),
        Status::Permission => (
            "the range's permissions forbid the access (a write or atomic to a read-only range)",
            "do not retry",
        ),
        Status::Unmapped => (
            "the VA (or part of `[va, va+total_len)`) is not inside a range the PID allocated",
            "do not retry",
        ),
        Status::OutOfMemory => ("ALLOC: no physical memory or VA space is left", "do not retry (or free first)"),
        Status::Malformed => (
            "the header parses but breaks a rule: version, undefined flag or status bits in a request, payload_len over the MTU, a per-opcode rule of the table above, a payload that does not parse (reserved bytes, ranges), an INFO shorter than the padding, an OPEN_SESSION of the wrong length. Header-only; when the header itself did not parse only pid/req_id/retry_of/session/epoch are echoed",
            "a client bug; do not retry",
        ),
        Status::Busy => (
            "temporarily unable, nothing executed and nothing recorded: LOCK on a held lock (payload = the lock word), a fence of the PID waiting, the slow path's queue full, the first touch of a page with no free page queued, the dedup buffer full or the session holding its dedup quota of unacknowledged requests",
            "back off (raise `ack` if you can) and retry, as a retry (`retry_of`)",
        ),
        Status::Corrupt => (
            "only in a NACK: the packet named by `req_id` and `offset` was shorter than its `payload_len` or failed its CRC; nothing of it executed",
            "resend that packet (a retry of the request)",
        ),
        Status::Unsupported => (
            "unknown request opcode, or an operation this board does not offer (OFFLOAD_CALL on a board without an offload engine)",
            "do not retry",
        ),
        Status::BadSession => (
            "`session` is 0 or out of range or not open, or `key` or `pid` is not the session's (also: OPEN_SESSION joining with a wrong session/key/pid; CLOSE_SESSION of a closed session). Header-only; nothing executed, no dedup record",
            "open a new session; after a CLOSE_SESSION retry, treat as closed",
        ),
        Status::Restarted => (
            "`epoch` is not this boot's: the board restarted and every session of the earlier boot is gone (also every session request while the board is still booting: its epoch is 0 until the slow path is up). The answer's `epoch` is the current one. Header-only",
            "report the restart to the user of the session (its memory is gone); open a new session",
        ),
        Status::OverQuota => (
            "a per-session or per-address-space limit would be exceeded: ALLOC beyond the PID's memory quota, LOCK while holding `lock_quota` locks, OPEN_SESSION with every session-table entry in use",
            "free or unlock first; do not retry as is",
        ),
        Status::NoSuchOffload => (
            "OFFLOAD_CALL names an offload id no offload is registered under. Header-only",
            "a client bug or the wrong board; do not retry",
        ),
        Status::OffloadFault => (
            "the offload faulted serving the call (a memory access of its own address space failed, or it crashed); the board and its other offloads keep serving. Header-only",
            "report it; retrying the same call will most likely fault again",
        ),
        Status::OffloadRefused => (
            "the offload refused the call; the OffloadCallResp after the header carries its reason `code` (Clio-KV: 1 key too long, 2 value too long, 3 no such key, 4 key exists, 5 bad arguments, 6 store full)",
            "depends on the code; do not retry as is",
        ),
        Status::TooLarge => (
            "the request asks for more than the board can ever serve in one request, whatever is free: ALLOC larger than the board's data region or than the VA window of its page size (a board that is only full answers OUT_OF_MEMORY or OVER_QUOTA); READ whose `total_len` is above InfoResp.max_resp_kib × 1024 (answered header-only, nothing read)",
            "split the request (or allocate less); do not retry as is",
        ),
        Status::Moved => (
            "in a rack (several memory nodes under one controller): the request's VA lies in a 1 GiB vRegion (`va >> 30`) this node no longer serves, because the region migrated to another node. Header-only; nothing executed, no dedup record. A region being migrated answers BUSY to writes, atomics, locks, allocations and frees until the move completes",
            "look the region up at the rack controller (clio-control `Lookup`) and resend the request to its new owner",
        ),
    }
}

/// Bitwise CRC with explicit parameters: the reference the document states.
fn crc_bitwise(poly_reflected: u32, init: u32, xorout: u32, data: &[u8]) -> u32 {
    let mut c = init;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ poly_reflected
            } else {
                c >> 1
            };
        }
    }
    c ^ xorout
}

/// A table cell: a `|` inside would end the cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn hex(b: &[u8]) -> String {
    let mut s = String::new();
    for (i, x) in b.iter().enumerate() {
        if i > 0 && i % 16 == 0 {
            s.push('\n');
        } else if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// The worked example packets: (title, header, payload).
fn examples() -> Vec<(&'static str, Header, Vec<u8>)> {
    let mut open = vec![0u8; OpenSessionReq::LEN];
    let _ = OpenSessionReq {
        join_session: 0,
        join_key: 0,
    }
    .emit(&mut open);
    let mut faa = vec![0u8; AtomicArgs::FAA_LEN];
    let _ = AtomicArgs::FetchAndAdd { addend: 5 }.emit(&mut faa);
    vec![
        (
            "INFO request (padded with 64 zero bytes)",
            Header::request(Opcode::Info, 0, 1, 0, 0),
            vec![0u8; InfoResp::LEN],
        ),
        (
            "OPEN_SESSION request for a new address space",
            Header::request(Opcode::OpenSession, 0, 2, 0, 0),
            open,
        ),
        (
            "WRITE of 4 bytes `abcd` at VA 0x1000 by session 3 (pid 7, epoch 0x11223344, key 0x0102030405060708, ack 10)",
            Header {
                ack: 10,
                ..Header::request(Opcode::Write, 7, 12, 0x1000, 4)
                    .with_session(3, 0x1122_3344, 0x0102_0304_0506_0708)
            },
            b"abcd".to_vec(),
        ),
        (
            "FAA +5 on the word at VA 0x2000, a retry (req_id 14) of request 13, same session",
            Header {
                retry_of: 13,
                ack: 13,
                ..Header::request(Opcode::FetchAndAdd, 7, 14, 0x2000, ATOMIC_WORD as u32)
                    .with_session(3, 0x1122_3344, 0x0102_0304_0506_0708)
            },
            faa,
        ),
    ]
}

/// The text of `REFERENCE.md`.
pub fn markdown() -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "# Clio wire reference (version {v})\n\n\
         GENERATED by the clio-wire crate (`host-sdk/wire/src/reference.rs`) from the crate's own\n\
         definitions; do not edit. Regenerate with `CLIO_BLESS=1 cargo test -p clio-wire --features std`;\n\
         `cargo test -p clio-wire` fails when this file differs from the generated text.\n\n\
         Everything an outside client needs to talk to a Clio memory board: packet layout, checksums,\n\
         per-opcode rules, how multi-packet requests and replies are cut, every status, the session\n\
         handshake and the rules that keep exactly-once semantics. Offsets are in bytes from the start\n\
         of the Clio header; every multi-byte field on the wire is **big-endian** unless a table says\n\
         otherwise.",
        v = clio::VERSION
    );

    section_transport(w);
    section_threat(w);
    section_header(w);
    section_crc(w);
    section_opcodes(w);
    section_payloads(w);
    section_cutting(w);
    section_statuses(w);
    section_sessions(w);
    section_dedup(w);
    section_order(w);
    section_examples(w);
    section_xdma(w);
    o
}

fn section_xdma(w: &mut String) {
    use crate::xdma;
    let _ = writeln!(
        w,
        "\n## 13. The PCIe transport: an Alveo U200 card (XDMA)\n\n\
         A host with a U200 EDM card sends the same Clio packets through two rings in card memory\n\
         instead of UDP datagrams (the card carries them over EDM to a memory node and back). With the\n\
         Xilinx XDMA driver the card shows as character devices: `<prefix>_user` (the register block\n\
         below, BAR0; 4-byte `pread`/`pwrite` at the register's offset), `<prefix>_h2c_0` and\n\
         `<prefix>_c2h_0` (DMA: `pwrite`/`pread` at a card address). Registers and slot headers are\n\
         **little-endian**; ring indices are free-running `u32`s (slot = index mod `SLOT_COUNT`).\n\n\
         Register map (version {v}; block of {len} bytes; an offset outside it, or a write to a\n\
         read-only register, is refused by the card):\n\n\
         | offset | register | bytes | written by | holds |\n|---|---|---|---|---|",
        v = xdma::VERSION,
        len = xdma::reg::BLOCK_LEN
    );
    for r in xdma::REGISTERS {
        let _ = writeln!(
            w,
            "| {:#04x} | `{}` | {} | {} | {} |",
            r.offset,
            r.name,
            r.bytes,
            if r.host_writes { "host" } else { "card" },
            cell(r.doc)
        );
    }
    let _ = writeln!(
        w,
        "\nA slot is `len u16 | reserved u16 (0) | packet` ({h} header bytes; `len` at most\n\
         `SLOT_BYTES - {h}`). To send: wait until `H2C_HEAD - H2C_TAIL < SLOT_COUNT`, write the slot at\n\
         `H2C_BASE + (H2C_HEAD mod SLOT_COUNT) * SLOT_BYTES`, then write `H2C_HEAD + 1`. To receive:\n\
         while `C2H_HEAD != C2H_TAIL`, read the slot at `C2H_BASE + (C2H_TAIL mod SLOT_COUNT) *\n\
         SLOT_BYTES`, then write `C2H_TAIL + 1`. The card publishes `C2H_HEAD` only after the slot's\n\
         bytes, so a host never reads a partial slot. Check `ID`, `VERSION` and `STATUS.READY` before\n\
         the first packet; retransmission, ordering and every rule above are unchanged.\n\n\
         A packet the card cannot carry over EDM it answers itself, in the C2H ring like any answer\n\
         (and counts in `XLATE_REFUSED`): a header-only answer echoing `pid`, `req_id`, `retry_of`,\n\
         `offset`, `session` and `epoch` (`va`, `total_len`, `key`, `ack` 0, CRC filled in), with\n\
         status TOO_LARGE and the request's response opcode for a READ of more than {max_read} bytes or\n\
         a packet longer than {max_pkt} bytes, and NACK + UNSUPPORTED for an opcode byte that is no\n\
         request. The request's CRC is not checked first, so such an answer to a corrupted header is\n\
         a stray the host drops. A packet shorter than the header names no request: it is only counted.",
        h = xdma::SLOT_HEADER_LEN,
        max_read = crate::edm_clio::MAX_READ,
        max_pkt = crate::edm_clio::MAX_RECORD_PACKET
    );
}

fn section_transport(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 1. Transport\n\n\
         One Clio packet per UDP/IPv4 datagram, sent to the board's UDP port (board config\n\
         `network.udp_port`; `clio sim` prints the address it serves). A packet is the {HEADER_LEN}-byte header\n\
         followed by `payload_len` payload bytes; bytes after that (link padding) are ignored. The board\n\
         answers to the source address and port of the request. There is no connection: every packet is\n\
         self-contained (it names the address space, the request, the VA, the whole request's length and\n\
         where its own payload sits), so packets may arrive in any order, be lost or duplicated. The\n\
         client retransmits; the board never does. A host with an Alveo U200 EDM card sends the same\n\
         packets through the card's PCIe rings instead (section 13)."
    );
}

fn section_threat(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 2. Threat model\n\n\
         An attacker on the same network can send any datagram with any source address and port, any\n\
         `pid`, `session` and `req_id`, but cannot read other clients' traffic (the model RoCE's rkeys\n\
         assume). Within it:\n\n\
         - A request is executed only if `session`, `key` and `pid` name a session the board opened, in the\n\
           boot named by `epoch` (one on-chip table lookup in the fast path, before anything else).\n\
         - A request without valid credentials executes nothing, takes no dedup record, changes no state\n\
           and is answered with at most one header-only packet ({HEADER_LEN} bytes, never more bytes than it\n\
           carried): BAD_SESSION or RESTARTED.\n\
         - The only requests that need no session, INFO and OPEN_SESSION, must be padded to at least the\n\
           length of their answer (INFO: {info} payload bytes, OPEN_SESSION: exactly {open}), so the board\n\
           never sends more bytes than it received towards a forged source address.\n\
         - Dedup records are keyed by session, so nobody else can pre-fill an answer to a victim's\n\
           future request.\n\
         - The session key is 64 bits from a keyed PRF (SipHash-2-4) of a per-boot random seed; it is a\n\
           bearer capability: whoever holds (session, key) may use the session and join its address space.\n\
           Keys travel in clear; the model assumes the attacker cannot read them.",
        info = InfoResp::LEN,
        open = OpenSessionReq::LEN
    );
}

fn section_header(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 3. Header ({HEADER_LEN} bytes)\n\n\
         | offset | size | field | byte order | requests: valid values | responses |\n\
         |---:|---:|---|---|---|---|"
    );
    let mut next = 0;
    for (name, off, set, req, resp) in header_fields() {
        let zero = [0u8; HEADER_LEN];
        let mut marked = [0u8; HEADER_LEN];
        {
            let mut p = Packet::new_unchecked(&mut marked[..]);
            set(&mut p, MARKER);
        }
        let span = probe(&format!("clio.{name}"), &zero, &marked, None);
        assert_eq!(
            span.offset, off,
            "clio.{name}: field constant {off}, setter writes at {}",
            span.offset
        );
        assert_eq!(span.offset, next, "clio.{name}: gap or overlap before it");
        next = span.offset + span.size;
        let _ = writeln!(
            w,
            "| {} | {} | `{name}` u{} | {} | {} | {} |",
            span.offset,
            span.size,
            span.size * 8,
            span.order.as_str(),
            cell(&req),
            cell(resp)
        );
    }
    assert_eq!(next, HEADER_LEN, "the header fields do not fill HEADER_LEN");
    let _ = writeln!(
        w,
        "\nFlag bits (`flags`): `FIXED_VA` = {:#04x} (ALLOC request: place the range exactly at `va` if free),\n\
         `MOVED` = {:#04x} (ALLOC_RESP: placed elsewhere than the FIXED_VA asked), `DUPLICATE` = {:#04x}\n\
         (response replayed from the dedup buffer: the request was executed once, earlier). Other bits\n\
         must be 0. A request may carry only `FIXED_VA`.\n\n\
         Response header: `version` = {}, `opcode` = request opcode | {RESPONSE_BIT:#04x}, `key` = `ack` = 0,\n\
         everything else as the table says. Responses echo `pid`, `req_id`, `retry_of`, `va`, `total_len`,\n\
         `offset`, `session` and `epoch` of the packet they answer, except: READ_RESP chunks carry their own\n\
         `offset` (an error READ_RESP has `offset` 0); ALLOC_RESP carries the placed VA; a replayed\n\
         (DUPLICATE) answer carries the recorded `va`/`total_len`/`offset` and the new packet's ids;\n\
         RESTARTED, INFO_RESP and OPEN_SESSION_RESP carry the board's current `epoch`; a NACK and an\n\
         answer to a header that did not parse carry `va` = `total_len` = 0.\n\n\
         Serial arithmetic: request ids wrap. `a` is before `b` when `(b - a) mod 2^32` is in\n\
         `1..2^31` (RFC 1982): 1 is before 2, 0xffffffff is before 3, 3 is not before 0xffffffff.",
        flags::FIXED_VA,
        flags::MOVED,
        flags::DUPLICATE,
        clio::VERSION,
    );
    assert!(
        serial_before(1, 2) && serial_before(u32::MAX, 3) && !serial_before(3, u32::MAX),
        "the stated serial-arithmetic examples do not hold"
    );
}

fn section_crc(w: &mut String) {
    let reflected = crc::POLY;
    let normal = reflected.reverse_bits();
    let (init, xorout) = (0xFFFF_FFFFu32, 0xFFFF_FFFFu32);
    // The stated parameters must be the crate's CRC.
    for v in [&b"123456789"[..], &[0u8; 32][..], &b"abcd"[..], &[][..]] {
        assert_eq!(
            crc_bitwise(reflected, init, xorout, v),
            crc32c(v),
            "the stated CRC parameters are not the crate's CRC32C"
        );
    }
    let check = crc32c(b"123456789");
    let _ = writeln!(
        w,
        "\n## 4. Checksum: CRC32C\n\n\
         | parameter | value |\n|---|---|\n\
         | algorithm | CRC-32C (Castagnoli), as iSCSI / SSE4.2 `crc32` |\n\
         | polynomial | {normal:#010X} (normal), {reflected:#010X} (reflected) |\n\
         | reflected input / output | yes / yes |\n\
         | init | {init:#010X} |\n\
         | xorout | {xorout:#010X} |\n\
         | check: CRC of ASCII `123456789` | {check:#010X} |\n\
         | check: CRC of 32 zero bytes | {zeros:#010X} |\n\n\
         Coverage: the {HEADER_LEN} header bytes with the `crc` field (offset {crc_off}) taken as zero,\n\
         then the `payload_len` payload bytes. The result is stored big-endian at offset {crc_off}.\n\
         Table-driven, bytewise (what `crc32c` computes):\n\n\
         ```text\n\
         table[i] = i, then 8 times: t = (t >> 1) ^ ({reflected:#010X} if t & 1 else 0)\n\
         c = {init:#010X}; for each byte b: c = (c >> 8) ^ table[(c ^ b) & 0xFF]; crc = c ^ {xorout:#010X}\n\
         ```\n\n\
         A packet whose length is below `{HEADER_LEN} + payload_len` or whose CRC does not match is answered\n\
         with a NACK (section 8), never executed; one shorter than {HEADER_LEN} bytes is dropped.",
        zeros = crc32c(&[0u8; 32]),
        crc_off = field::CRC.start,
    );
}

fn section_opcodes(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 5. Opcodes and per-opcode rules\n\n\
         `session`: needs valid session credentials. `path`: fast = answered by the FPGA pipeline,\n\
         slow = forwarded to the board's ARM (answered later, microseconds to milliseconds), extend =\n\
         offload engine. `dedup`: non-idempotent, recorded in the dedup buffer and answered from it when\n\
         retried (section 10). Violating a rule of the payload, total_len or offset/alignment column\n\
         answers MALFORMED (header only).\n\n\
         | value | request | response | session | path | dedup | payload_len | total_len | offset / alignment | answer |\n\
         |---|---|---|---|---|---|---|---|---|---|"
    );
    for &op in Opcode::ALL {
        let Some([pl, tl, off, ans]) = request_rules(op) else {
            continue;
        };
        let resp = op.response().map_or("—", Opcode::name);
        let path = if op.is_slow_path() {
            "slow"
        } else if op.is_extend_path() {
            "extend"
        } else {
            "fast"
        };
        let yn = |b: bool| if b { "yes" } else { "no" };
        let _ = writeln!(
            w,
            "| {:#04x} | {} | {} ({:#04x}) | {} | {path} | {} | {} | {} | {} | {} |",
            op.raw(),
            op.name(),
            resp,
            op.response().map_or(0, Opcode::raw),
            yn(op.needs_session()),
            yn(op.is_non_idempotent()),
            cell(&pl),
            cell(&tl),
            cell(&off),
            cell(&ans),
        );
    }
    let _ = writeln!(
        w,
        "| {:#04x} | — | {} | | | | 0 | 0 | the refused packet's `offset` | a packet was refused for corruption (section 8) |\n\n\
         Any other request opcode (bit 7 clear) is answered UNSUPPORTED. Packets with bit 7 set that reach\n\
         the board are dropped.\n\n\
         Atomics (TAS, CAS, FAA, LOCK, UNLOCK) act on the {ATOMIC_WORD}-byte word at `va`, which must be\n\
         {ATOMIC_WORD}-byte aligned, with `total_len` = {ATOMIC_WORD} and `offset` = 0. The word is stored\n\
         **little-endian** in board memory (what a READ returns and a WRITE stores); operands and results\n\
         travel big-endian in the payloads. TAS: store 1, return the old value. CAS: store `new` iff\n\
         old = `expected`; status OK either way, the client compares `old`. FAA: store old + addend\n\
         (wrapping). LOCK: if old = 0 store 1 and answer OK, else answer BUSY (word unchanged, payload =\n\
         old). UNLOCK: store 0. Atomics need WRITE permission; READ needs READ.\n\n\
         Address spaces: VAs belong to a PID; ranges come from ALLOC (page-aligned, whole pages of the\n\
         board's default page size unless `page_shift` asks otherwise). Memory is mapped on first touch\n\
         and reads as zeros until written. A range is usable by every session of its PID.",
        Opcode::Nack.raw(),
        Opcode::Nack.name()
    );
}

fn section_payloads(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 6. Payloads\n\n\
         Offsets below are from the start of the payload (header offset {HEADER_LEN}). Reserved bytes are\n\
         sent as 0. Data payloads of WRITE and READ_RESP are raw bytes. An INFO request's payload is\n\
         {info} zero bytes (or more); CLOSE_SESSION, READ, FENCE, TAS, LOCK and UNLOCK carry none.",
        info = InfoResp::LEN
    );
    for p in payloads() {
        let lay = layout(&p);
        let _ = writeln!(
            w,
            "\n### {} ({} bytes) — `{}`\n\nCarried by: {}.\n\n\
             | offset | size | field | byte order | valid values | meaning |\n|---:|---:|---|---|---|---|",
            p.title, p.len, p.rust, p.carried_by
        );
        for (span, name, range, doc) in lay.rows {
            let _ = writeln!(
                w,
                "| {} | {} | {name} | {} | {} | {} |",
                span.offset,
                span.size,
                span.order.as_str(),
                cell(&range),
                cell(&doc)
            );
        }
        if !p.notes.is_empty() {
            let _ = writeln!(w, "\n{}", p.notes);
        }
    }
}

fn section_cutting(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 7. Multi-packet requests and replies\n\n\
         MTU = `InfoResp.mtu`: the largest payload of one packet in either direction (at most\n\
         {MAX_PAYLOAD}; 1450 on the emulator and the boards' standard-frame configs). Ask INFO first.\n\n\
         - **WRITE** of `n` bytes at `va`: one packet per slice. Every packet carries the same `req_id`,\n\
           `va` and `total_len = n`, its own `offset` and `payload_len` (≤ MTU); the slices must tile\n\
           `[0, n)`. The SDK cuts at `offset = 0, MTU, 2·MTU, …` (the last slice shorter); the board accepts\n\
           any slice with `offset + payload_len ≤ total_len` and executes each packet on its own, in any\n\
           order. Each packet is answered by its own WRITE_RESP (echoing its `offset`); the write is done\n\
           when every slice is answered OK. Pages are translated per packet: a failing packet (UNMAPPED,\n\
           PERMISSION) does not undo the others.\n\
         - **READ** of `n` bytes: one request packet (`payload_len` = 0, `offset` = 0); the board answers\n\
           ⌈n / MTU⌉ READ_RESP packets, chunk `k` with `offset = k·MTU` and `payload_len = min(MTU, n − k·MTU)`\n\
           (one empty packet for n = 0). They may arrive in any order; reassemble by `offset`. An error is\n\
           one header-only READ_RESP with `offset` 0. A retried READ is answered in full again.\n\
         - Every other request is one packet and gets one answer packet.\n\
         - A retry of a multi-packet WRITE may resend only the slices not yet answered (the board's\n\
           dedup key includes the packet's `offset`, section 10)."
    );
}

fn section_statuses(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 8. Statuses\n\n\
         | value | status | when returned | what the client does |\n|---:|---|---|---|"
    );
    for &s in Status::ALL {
        let (when, act) = status_doc(s);
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} |",
            s.raw(),
            s.name(),
            cell(when),
            cell(act)
        );
    }
    let _ = writeln!(
        w,
        "\nError answers carry no payload, except LOCK_RESP with BUSY (the lock word). Failed requests are\n\
         not recorded in the dedup buffer: retrying one executes it again.\n\n\
         **NACK** (opcode {nack:#04x}, status {corrupt}): the board received a packet it cannot trust —\n\
         shorter than `{HEADER_LEN} + payload_len`, or failing its CRC. It echoes the received bytes' `pid`,\n\
         `req_id`, `retry_of`, `offset`, `session` and `epoch`, with `va` = `total_len` = 0, no payload, so\n\
         the client knows which packet (of a multi-packet WRITE: which slice) to resend. Nothing was\n\
         executed. An unknown opcode is **not** a NACK: it is UNSUPPORTED (retrying cannot help). A NACK\n\
         is header-only, never longer than the packet it refuses.",
        nack = Opcode::Nack.raw(),
        corrupt = Status::Corrupt.name()
    );
}

fn section_sessions(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 9. Sessions: the handshake\n\n\
         1. **INFO** (optional but recommended): `opcode` {info_op:#04x}, `pid` = `session` = `epoch` = `key` = 0,\n\
            `payload_len` ≥ {info_len}, payload all zeros. The answer's InfoResp gives the MTU, the boot\n\
            `epoch` and the session-table size. INFO needs no session; an INFO with a shorter payload is\n\
            answered MALFORMED, header-only.\n\
         2. **OPEN_SESSION** ({open_op:#04x}): `session` = `epoch` = `key` = 0, `payload_len` = {open_len} exactly\n\
            (OpenSessionReq). To open a **new address space**: `pid` = 0, `join_session` = 0,\n\
            `join_key` = 0; the board assigns a fresh PID. To **join** an existing one (a second process\n\
            sharing memory): `pid` = that session's PID, `join_session` = its id, `join_key` = its key (the\n\
            owner hands the pair out; holding the key is the capability). The answer (OPEN_SESSION_RESP,\n\
            status OK) carries OpenSessionResp: `session`, `pid`, `key`, `epoch` and the quotas. A wrong\n\
            join pair answers BAD_SESSION; a full session table OVER_QUOTA. OPEN_SESSION goes to the slow\n\
            path and is not deduplicated: a retry may open a second session; use the first answer that\n\
            arrives (the extra session stays open until closed or the board restarts — a documented\n\
            limitation).\n\
         3. **Use**: every other request carries `pid`, `session`, `epoch`, `key` from the answer, a fresh\n\
            `req_id` and the `ack` watermark.\n\
         4. **CLOSE_SESSION** ({close_op:#04x}), no payload, with the session's credentials: frees the\n\
            session's dedup records and lock count; when the last session of a PID closes, the PID's\n\
            ranges are freed. Closing a closed session answers BAD_SESSION — treat it as closed.\n\
         5. **Restart**: the board draws a new random non-zero `epoch` at every boot and forgets every\n\
            session. A request of an earlier boot's session answers RESTARTED (header-only, carrying the\n\
            new epoch). The client must surface this (the memory is gone) — never read zeros as data —\n\
            and may open a new session.\n\n\
         Quotas (OpenSessionResp): `dedup_quota` unacknowledged non-idempotent requests per session\n\
         (beyond: BUSY), `lock_quota` locks held per session (beyond: OVER_QUOTA), `mem_quota_pages`\n\
         default-size pages per PID (an ALLOC beyond: OVER_QUOTA).",
        info_op = Opcode::Info.raw(),
        info_len = InfoResp::LEN,
        open_op = Opcode::OpenSession.raw(),
        open_len = OpenSessionReq::LEN,
        close_op = Opcode::CloseSession.raw(),
    );
}

fn section_dedup(w: &mut String) {
    let ni: Vec<&str> = Opcode::ALL
        .iter()
        .filter(|o| o.is_non_idempotent())
        .map(|o| o.name())
        .collect();
    let _ = writeln!(
        w,
        "\n## 10. Request ids, retries, the ack watermark, exactly-once\n\n\
         - `req_id` is never 0 and increases per session (serial arithmetic). Each attempt may use a new\n\
           id; a retry carries `retry_of` = the **first** attempt's id (the SDK gives every attempt a new\n\
           id). The dedup id of a packet is `retry_of` if non-zero, else `req_id`.\n\
         - Non-idempotent requests ({list}) that complete OK are recorded under\n\
           (session, dedup id, `offset` for WRITE else 0, opcode). A later packet with the same key is not\n\
           executed: the recorded answer is replayed with flag DUPLICATE. So an FAA whose answer was lost\n\
           is applied once however often it is retried.\n\
         - Records are freed only by the client's acknowledgement or by closing the session — never\n\
           evicted. `ack` = A in a request says: every request of this session whose first-attempt id r\n\
           is serially before A (`(A - r) mod 2^32` in `1..2^31`) has had its answer received. The board\n\
           frees those records. 0 = no information. Send A = the oldest first-attempt id still awaiting\n\
           an answer, or the next id you will assign if none is outstanding. Never acknowledge a request\n\
           you may still retry: it is gone for good.\n\
         - The board keeps, per session, the furthest `ack` it has seen (its ack floor). A packet of a\n\
           non-idempotent request whose dedup id is serially before the floor was answered and\n\
           acknowledged already: it is a late network duplicate and is dropped without an answer (its\n\
           record is freed, so executing it would apply it twice).\n\
         - When the dedup buffer has no free record, or the session holds `dedup_quota` records, a new\n\
           non-idempotent request is answered BUSY (not executed, not recorded): acknowledge, back off,\n\
           retry.\n\
         - Idempotent requests (READ, FENCE, POINTER_CHASE, INFO) are simply executed again when retried.\n\
         - A retry of an ALLOC/FREE still waiting in the slow path is not forwarded again: its answer goes\n\
           to the latest attempt.",
        list = ni.join(", ")
    );
}

fn section_order(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 11. Order of the board's checks\n\n\
         The fast path (model and RTL identical) checks, in this order, and the first failing check decides:\n\n\
         1. shorter than {HEADER_LEN} bytes → dropped silently;\n\
         2. shorter than `{HEADER_LEN} + payload_len`, or CRC mismatch → NACK (header-only);\n\
         3. a response opcode (bit 7 set) → dropped;\n\
         4. header does not parse: unknown opcode → UNSUPPORTED, anything else (version, status, flags,\n\
            payload_len > {MAX_PAYLOAD}, WRITE slice past `total_len`, `va + total_len` overflow) → MALFORMED\n\
            (header-only);\n\
         5. opcode not INFO/OPEN_SESSION: `epoch` ≠ the board's, or the board's is still 0 (booting) →\n\
            RESTARTED (header-only);\n\
         6. opcode not INFO/OPEN_SESSION: `session` = 0 or ≥ capacity, or not open, or `key` or `pid` not\n\
            the session's → BAD_SESSION (header-only). Nothing else happens;\n\
         7. `ack` ≠ 0: free this session's dedup records serially before `ack`, and raise the session's\n\
            ack floor to `ack`;\n\
         8. request status ≠ OK, a flag other than FIXED_VA, payload_len > MTU → MALFORMED; INFO answered;\n\
            fence of the PID waiting → BUSY;\n\
         9. non-idempotent: dedup id serially before the ack floor → dropped (no answer); dedup hit →\n\
            replay; buffer or session quota full → BUSY; else execute and record;\n\
         10. the per-opcode rules of section 5 and translation (UNMAPPED, PERMISSION, BUSY on a page\n\
             fault with no free page), LOCK quota → OVER_QUOTA."
    );
}

fn section_examples(w: &mut String) {
    let _ = writeln!(
        w,
        "\n## 12. Worked packets\n\n\
         Complete packets (header + payload) as a client sends them, CRC included; a client\n\
         implementation should produce exactly these bytes."
    );
    for (title, h, payload) in examples() {
        let bytes = h
            .encode(&payload)
            .unwrap_or_else(|e| panic!("example {title}: {e}"));
        let p = Packet::new_checked(&bytes[..]).expect("example packet checks");
        assert!(p.verify_crc().is_ok(), "example {title}: CRC");
        let _ = writeln!(
            w,
            "\n{title}, {} bytes, crc {:#010x}:\n\n```text\n{}\n```",
            bytes.len(),
            p.crc(),
            hex(&bytes)
        );
    }
}
