//! The offload host's request/answer path driven by arbitrary bytes: the
//! body of the cargo-fuzz target `offload_host` (host-sdk/wire/fuzz) and of
//! its stable twin `tests/offload_fuzz.rs`, which include this file.
//!
//! The bytes are read as a script of actions against an [`OffloadHost`]
//! serving the tally (id 4) and Clio-MV (id 2) over a small slow path and
//! DRAM:
//!
//! - `0`: a call (session, request id, retry-of, ack, offload id, op,
//!   arguments), sent whole as `OFFLOAD_REQ` fragments, its Clio header
//!   sometimes corrupted;
//! - `1`: a batch call of up to 8 operations;
//! - `2`: one raw fragment (tag, seq, length, index, count, bytes), pushed
//!   only if the ring's descriptor parser accepts it, as the ring would;
//! - `3`: a call whose fragments are cut short, repeated or swapped.
//!
//! After each action every descriptor the host pushed is checked: each
//! `OFFLOAD_REPLY` fragment encodes to a slot the TX parser accepts, echoes
//! the tag and seq of a request, the fragments reassemble into answers of
//! at most `B` bytes and [`OffloadHost::max_reply_fragments`] fragments,
//! whose head parses and whose status and payload have the shape the
//! status promises (a batch's results add up to its payload). A whole,
//! well-formed call gets exactly one answer; nothing panics.

use clio_slowpath::offload::mv::{self, MvStore};
use clio_slowpath::offload::tally::{self, Tally};
use clio_slowpath::offload::{OffloadHost, SliceDram};
use clio_slowpath::{SlowPath, SlowPathConfig};
use clio_wire::payload::{
    OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp,
    OFFLOAD_OP_BATCH,
};
use clio_wire::ring::{
    offload_fragments, Descriptor, Direction, OffloadAssembler, OffloadReplyHead, OFFLOAD_FRAGMENT,
};
use clio_wire::{Header, Opcode, Status};

/// MTU payload of the host.
const MTU: usize = 1450;
/// Answer datagram bound: small, so batches meet `TOO_LARGE`.
const B: usize = 4096;
/// Remembered answers: few, so retries meet forgotten records.
const R: usize = 4;

/// Bytes of a ring slot.
const SLOT: usize = 64;

/// Reads the script.
struct Cursor<'d>(&'d [u8]);

impl Cursor<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes([self.u8()?, self.u8()?]))
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.0.len());
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        a.to_vec()
    }
}

fn cfg() -> SlowPathConfig {
    let mut c = SlowPathConfig::from_board(&clio_config::boards::EMULATOR);
    // 4 KiB pages over 16 MiB: small arenas, yet Clio-MV's first chunk fits.
    c.default_shift = 12;
    c.data_size = 16 << 20;
    c.bucket_bits = 11;
    c.slots_per_bucket = 8;
    c.fifo_depth = 4;
    c.max_pids = 8;
    c.max_ranges = 64;
    c.max_retries = 32;
    c.va_bits = 32;
    c.check().expect("the drive's slow-path config");
    c
}

/// A request's fragments: its Clio header (fields from the script) and
/// `payload`.
fn request(s: &mut Cursor<'_>, payload: &[u8]) -> Option<Vec<u8>> {
    let session = u16::from(s.u8()? % 3 + 1);
    let req_id = u32::from(s.u8()?) + 1;
    let flags = s.u8()?;
    let retry_of = if flags & 1 != 0 {
        u32::from(s.u8()?)
    } else {
        0
    };
    let ack = if flags & 2 != 0 {
        u32::from(s.u8()?)
    } else {
        0
    };
    let mut h = Header::request(Opcode::OffloadCall, 3, req_id, 0, 0).with_session(
        session,
        9,
        42 + u64::from(session),
    );
    h.retry_of = retry_of;
    h.ack = ack;
    h.payload_len = payload.len() as u16;
    let mut pkt = vec![0u8; h.buffer_len()];
    h.emit_with_payload(&mut pkt, payload).ok()?;
    if flags & 4 != 0 {
        // A corrupt header byte (the host answers MALFORMED, or a checksum
        // it does not check lets it through: either is an answer).
        let at = usize::from(s.u8()?) % pkt.len();
        pkt[at] ^= s.u8()? | 1;
    }
    Some(pkt)
}

fn offload_id(sel: u8) -> u32 {
    [0, 1, mv::OFFLOAD_ID, 3, tally::ID, 77][usize::from(sel) % 6]
}

/// A call's `OffloadCallReq` and arguments from the script.
fn call_payload(s: &mut Cursor<'_>) -> Option<Vec<u8>> {
    let id = offload_id(s.u8()?);
    let op = u16::from(s.u8()? % 8);
    let n = usize::from(s.u8()?);
    let mut p = OffloadCallReq { offload: id, op }.to_bytes().to_vec();
    p.extend_from_slice(&s.bytes(n));
    Some(p)
}

fn batch_payload(s: &mut Cursor<'_>) -> Option<Vec<u8>> {
    let id = offload_id(s.u8()?);
    let count = s.u8()? % 9;
    let mut p = OffloadCallReq {
        offload: id,
        op: OFFLOAD_OP_BATCH,
    }
    .to_bytes()
    .to_vec();
    p.extend_from_slice(
        &OffloadBatchReq {
            count: count.into(),
        }
        .to_bytes(),
    );
    for _ in 0..count {
        let op = u16::from(s.u8()? % 8);
        let n = s.u8()? % 32;
        let args = s.bytes(usize::from(n));
        p.extend_from_slice(
            &OffloadBatchOp {
                op,
                args_len: args.len() as u16,
            }
            .to_bytes(),
        );
        p.extend_from_slice(&args);
    }
    Some(p)
}

/// The ring's view of `d`: encoded to a slot and parsed back (`None` if
/// the parser refuses it).
fn through_ring(d: &Descriptor, dir: Direction) -> Option<Descriptor> {
    let mut slot = [0u8; SLOT];
    d.emit(&mut slot).ok()?;
    Descriptor::parse(&slot, dir).ok()
}

/// Checks everything the host pushed since the last look; the answers
/// completed, as (seq, status, payload).
fn answers(
    tx: &mut Vec<Descriptor>,
    asm: &mut OffloadAssembler<B>,
    sent: &[(u32, u32)],
) -> Vec<(u32, Status, Vec<u8>)> {
    let mut out = Vec::new();
    let mut frags = 0u32;
    for d in tx.drain(..) {
        let Descriptor::Offload { tag, seq, dir, .. } = d else {
            // Board-table commands of the offloads' allocations.
            continue;
        };
        assert_eq!(dir, Direction::Tx, "a reply fragment goes to TX");
        assert!(
            sent.contains(&(tag, seq)),
            "a reply echoes a request's tag and seq"
        );
        assert_eq!(
            through_ring(&d, Direction::Tx),
            Some(d),
            "a reply fragment survives the ring"
        );
        frags += 1;
        if let Some((_, seq, dg)) = asm.push(&d) {
            assert!(frags <= OffloadHost::<2, R, B>::max_reply_fragments());
            frags = 0;
            let (head, payload) = OffloadReplyHead::split(dg).expect("the answer's head");
            check_answer(head.status, payload);
            out.push((seq, head.status, payload.to_vec()));
        }
    }
    assert_eq!(frags, 0, "no half-pushed answer");
    assert_eq!(asm.dropped(), 0, "answers are whole and in order");
    out
}

/// The payload has the shape its status promises.
fn check_answer(status: Status, p: &[u8]) {
    match status {
        Status::Ok => {
            let head = OffloadCallResp::parse(p).expect("an OK answer's head");
            assert_eq!(head.code, 0);
        }
        Status::OffloadRefused => {
            assert_eq!(p.len(), OffloadCallResp::LEN);
            assert_ne!(OffloadCallResp::parse(p).unwrap().code, 0);
        }
        Status::OffloadFault | Status::NoSuchOffload | Status::Malformed | Status::TooLarge => {
            assert!(p.is_empty(), "{status:?} carries nothing");
        }
        s => panic!("an offload answer of status {s:?}"),
    }
}

/// A batch's answer: its count, then results that add up to the payload,
/// each with the shape its status promises.
fn check_batch(p: &[u8], count: usize) {
    let mut at = OffloadCallResp::LEN;
    let head = OffloadBatchReq::parse(&p[at..]).expect("the batch count");
    assert_eq!(head.count as usize, count);
    at += OffloadBatchReq::LEN;
    for _ in 0..count {
        let r = OffloadBatchResult::parse(&p[at..]).expect("a batch result");
        match r.status {
            Status::Ok => assert_eq!(r.code, 0),
            Status::OffloadRefused => assert!(r.code != 0 && r.len == 0),
            Status::OffloadFault => assert!(r.code == 0 && r.len == 0),
            s => panic!("a batch result of status {s:?}"),
        }
        at += OffloadBatchResult::LEN + r.len as usize;
        assert!(at <= p.len(), "a result past the answer");
    }
    assert_eq!(at, p.len(), "nothing after the last result");
}

/// Run the script `data`; the statuses of the answers, in order.
pub fn run(data: &[u8]) -> Vec<Status> {
    let c = cfg();
    let mut arena = vec![0u64; c.arena_words()];
    let mut sp = SlowPath::new(c, &mut arena, 0x5eed).expect("slow path");
    // Zero pages from the OS: only the pages the offloads touch cost.
    let mut dram = vec![0u8; c.data_size as usize];
    let mut t = Tally::new();
    let mut m = MvStore::<8>::new(64);
    let mut host = OffloadHost::<2, R, B>::new(MTU, 1 << 16);
    host.register(tally::ID, &mut t).unwrap();
    host.register(mv::OFFLOAD_ID, &mut m).unwrap();
    let mut tx = Vec::new();
    let mut asm = OffloadAssembler::<B>::new();
    let mut s = Cursor(data);
    let mut seq = 0u32;
    let mut seen = Vec::new();
    while let Some(action) = s.u8() {
        let mut d = SliceDram {
            base: c.data_base,
            bytes: &mut dram,
        };
        seq = seq.wrapping_add(1);
        let tag = seq % 64;
        match action % 4 {
            a @ (0 | 1 | 3) => {
                let batch = a == 1;
                let Some(payload) = (if batch {
                    batch_payload(&mut s)
                } else {
                    call_payload(&mut s)
                }) else {
                    break;
                };
                let Some(pkt) = request(&mut s, &payload) else {
                    break;
                };
                let mut frags: Vec<Descriptor> = offload_fragments(tag, seq, &pkt, Direction::Rx)
                    .expect("a request's fragments")
                    .collect();
                let whole = a != 3;
                if !whole {
                    let how = s.u8().unwrap_or(0);
                    let i = usize::from(s.u8().unwrap_or(0)) % frags.len();
                    match how % 3 {
                        0 => frags.truncate(i),
                        1 => {
                            let f = frags[i];
                            frags.insert(i, f);
                        }
                        _ => {
                            let j = (i + 1) % frags.len();
                            frags.swap(i, j);
                        }
                    }
                }
                let mut answered = 0;
                for f in &frags {
                    answered += host.fragment(f, &mut sp, &mut d, &mut tx) as usize;
                }
                let got = answers(&mut tx, &mut asm, &[(tag, seq)]);
                assert_eq!(got.len(), answered);
                seen.extend(got.iter().map(|g| g.1));
                if whole {
                    assert_eq!(answered, 1, "one answer per whole call");
                    let (_, status, p) = &got[0];
                    let parses = OffloadCallReq::parse_with_args(&payload[..]).is_ok();
                    if batch && *status == Status::Ok && parses {
                        let at = OffloadCallReq::LEN;
                        let count = u16::from_be_bytes([payload[at], payload[at + 1]]);
                        check_batch(p, usize::from(count));
                    }
                } else {
                    assert!(answered <= 1, "at most one answer per call");
                }
            }
            _ => {
                let len = u32::from(s.u16().unwrap_or(0));
                let index = u16::from(s.u8().unwrap_or(0));
                // 0: the count the length needs (else rarely parses).
                let count = match s.u8().unwrap_or(0) {
                    0 => (len as usize).div_ceil(OFFLOAD_FRAGMENT) as u16,
                    c => u16::from(c),
                };
                let mut data = [0u8; OFFLOAD_FRAGMENT];
                let b = s.bytes(OFFLOAD_FRAGMENT);
                data[..b.len()].copy_from_slice(&b);
                let f = Descriptor::Offload {
                    tag,
                    seq,
                    len,
                    index,
                    count,
                    data,
                    dir: Direction::Rx,
                };
                if let Some(f) = through_ring(&f, Direction::Rx) {
                    let answered = host.fragment(&f, &mut sp, &mut d, &mut tx) as usize;
                    let got = answers(&mut tx, &mut asm, &[(tag, seq)]);
                    assert_eq!(got.len(), answered);
                    seen.extend(got.iter().map(|g| g.1));
                }
            }
        }
    }
    seen
}
