//! Round-trip property tests for every format, and arbitrary bytes through
//! every parser (never a panic; errors always name a field).

use clio_wire::clio::{flags, Header, Opcode, Packet, Status, HEADER_LEN};
use clio_wire::payload::{
    AllocReq, AllocResp, AtomicArgs, AtomicResp, ChaseReq, ChaseResp, FreeReq, InfoResp,
    OffloadCallReq, OffloadCallResp, OpenSessionReq, OpenSessionResp,
};
use clio_wire::pte::{Bucket, Pte, VPN_MAX};
use clio_wire::ring::{Descriptor, Direction, SLOT_LEN};
use proptest::prelude::*;

fn opcode() -> impl Strategy<Value = Opcode> {
    proptest::sample::select(Opcode::ALL.to_vec())
}
fn status() -> impl Strategy<Value = Status> {
    proptest::sample::select(Status::ALL.to_vec())
}

prop_compose! {
    fn header_and_payload()(
        opcode in opcode(), status in status(), fl in 0u8..=flags::ALL,
        pid in any::<u32>(), req_id in any::<u32>(), retry_of in any::<u32>(),
        va in 0u64..(1 << 50), payload in proptest::collection::vec(any::<u8>(), 0..300),
        extra in 0u32..5000, offset_seed in any::<u32>(),
        session in any::<u16>(), epoch in any::<u32>(), key in any::<u64>(), ack in any::<u32>(),
    ) -> (Header, Vec<u8>) {
        let payload_len = payload.len() as u16;
        let total_len = payload.len() as u32 + extra;
        let offset = offset_seed % (extra + 1);
        (Header { opcode, flags: fl & flags::ALL, status, pid, req_id, retry_of, va, total_len, offset, payload_len, session, epoch, key, ack }, payload)
    }
}

prop_compose! {
    fn pte()(pid in any::<u32>(), vpn in 0..=VPN_MAX, ppn in any::<u32>(), perms in 0u8..=3,
             allocated in any::<bool>(), valid in any::<bool>(), shift in 12u8..=30) -> Pte {
        let allocated = allocated || valid;
        Pte { pid, vpn, ppn, perms, allocated, valid, page_shift: if allocated { shift } else { shift & 0x1f } }
    }
}

fn descriptor() -> impl Strategy<Value = Descriptor> {
    prop_oneof![
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u8>(),
            any::<u8>(),
            any::<bool>()
        )
            .prop_map(|(tag, pid, req_id, va, size, perms, page_shift, fixed)| {
                Descriptor::AllocReq {
                    tag,
                    pid,
                    req_id,
                    va,
                    size,
                    perms,
                    page_shift,
                    fixed,
                }
            }),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>()
        )
            .prop_map(|(tag, pid, req_id, va, size)| Descriptor::FreeReq {
                tag,
                pid,
                req_id,
                va,
                size
            }),
        (
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u32>(),
            any::<u32>()
        )
            .prop_map(
                |(pid, vpn, ppn, page_shift, bucket, slot)| Descriptor::PaConsumed {
                    pid,
                    vpn,
                    ppn,
                    page_shift,
                    bucket,
                    slot
                }
            ),
        (
            any::<u8>(),
            any::<u32>(),
            any::<u64>(),
            any::<u8>(),
            any::<u32>()
        )
            .prop_map(|(status, pid, va, opcode, count)| Descriptor::ErrorReport {
                status,
                pid,
                va,
                opcode,
                count
            }),
        (any::<u32>(), any::<u32>(), any::<bool>(), pte()).prop_map(
            |(bucket, slot, update, pte)| Descriptor::PteWrite {
                bucket,
                slot,
                update,
                pte
            }
        ),
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<u64>()).prop_map(
            |(bucket, slot, pid, vpn)| Descriptor::PteRemove {
                bucket,
                slot,
                pid,
                vpn
            }
        ),
        (any::<u32>(), any::<u64>(), any::<u32>())
            .prop_map(|(pid, vpn, pages)| Descriptor::TlbInvalidate { pid, vpn, pages }),
        (any::<u8>(), any::<u32>())
            .prop_map(|(page_shift, ppn)| Descriptor::FreePaPush { page_shift, ppn }),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u8>(),
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            any::<bool>()
        )
            .prop_map(|(tag, pid, req_id, status, va, size, retries, moved)| {
                Descriptor::Reply {
                    tag,
                    pid,
                    req_id,
                    status,
                    va,
                    size,
                    retries,
                    moved,
                }
            }),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
            any::<u64>()
        )
            .prop_map(|(tag, pid, req_id, join_session, join_key)| {
                Descriptor::SessionOpenReq {
                    tag,
                    pid,
                    req_id,
                    join_session,
                    join_key,
                }
            }),
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<u16>()).prop_map(
            |(tag, pid, req_id, session)| Descriptor::SessionCloseReq {
                tag,
                pid,
                req_id,
                session
            }
        ),
        (
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                any::<u8>(),
                any::<u16>()
            ),
            (
                any::<u64>(),
                any::<u16>(),
                any::<u16>(),
                any::<u32>(),
                any::<bool>()
            )
        )
            .prop_map(
                |((tag, pid, req_id, status, session), (key, dq, lq, mq, close))| {
                    Descriptor::SessionReply {
                        tag,
                        pid,
                        req_id,
                        status,
                        session,
                        key,
                        dedup_quota: dq,
                        lock_quota: lq,
                        mem_quota_pages: mq,
                        close,
                    }
                }
            ),
        (1u32..).prop_map(|epoch| Descriptor::Epoch { epoch }),
    ]
}

proptest! {
    #[test]
    fn header_round_trip((h, payload) in header_and_payload()) {
        // Headers whose data slice would run past the request are refused by
        // parse; keep the ones emit is meant for.
        prop_assume!(!h.carries_data_slice() || h.offset + h.payload_len as u32 <= h.total_len);
        let mut buf = vec![0u8; HEADER_LEN + payload.len()];
        let n = h.emit_with_payload(&mut buf, &payload).unwrap();
        let p = Packet::new_checked(&buf[..n]).unwrap();
        prop_assert_eq!(Header::parse_verified(&p).unwrap(), h);
        prop_assert_eq!(p.payload(), &payload[..]);
    }

    #[test]
    fn any_single_bit_flip_is_caught((h, payload) in header_and_payload(), bit in any::<usize>()) {
        prop_assume!(!h.carries_data_slice() || h.offset + h.payload_len as u32 <= h.total_len);
        let mut buf = vec![0u8; HEADER_LEN + payload.len()];
        h.emit_with_payload(&mut buf, &payload).unwrap();
        let bit = bit % (buf.len() * 8);
        buf[bit / 8] ^= 1 << (bit % 8);
        prop_assert!(Header::parse_verified(&Packet::new_unchecked(&buf[..])).is_err());
    }

    #[test]
    fn descriptor_round_trip(d in descriptor()) {
        let dir = if d.kind().is_rx() { Direction::Rx } else { Direction::Tx };
        let mut s = [0u8; SLOT_LEN];
        d.emit(&mut s).unwrap();
        prop_assert_eq!(Descriptor::parse(&s, dir).unwrap(), d);
    }

    #[test]
    fn pte_round_trip(p in pte()) {
        let b = p.to_bytes();
        prop_assert_eq!(Pte::parse(&b).unwrap(), p);
    }

    #[test]
    fn payload_round_trips(size in any::<u64>(), perms in 1u8..=3, shift in prop_oneof![Just(0u8), 12u8..=30],
                           a in any::<u64>(), b in any::<u64>(), c in any::<u32>(), found in any::<bool>(),
                           v16 in any::<u16>(), vl in 0u16..=ChaseReq::MAX_VALUE, name in "[a-z0-9]{0,16}") {
        let mut buf = [0u8; 64];
        let r = AllocReq { size, perms, page_shift: shift };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(AllocReq::parse(&buf).unwrap(), r);
        let r = AllocResp { size, retries: c };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(AllocResp::parse(&buf).unwrap(), r);
        let r = FreeReq { size };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(FreeReq::parse(&buf).unwrap(), r);
        let r = AtomicArgs::CompareAndSwap { expected: a, new: b };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(AtomicArgs::parse_cas(&buf).unwrap(), r);
        let r = AtomicArgs::FetchAndAdd { addend: a };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(AtomicArgs::parse_faa(&buf).unwrap(), r);
        let r = AtomicResp { old: b };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(AtomicResp::parse(&buf).unwrap(), r);
        let r = ChaseReq { key: a, key_offset: v16, next_offset: v16 ^ 8, value_offset: 3, value_len: vl, max_hops: c };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(ChaseReq::parse(&buf).unwrap(), r);
        let r = ChaseResp { node_va: a, hops: c, found };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(ChaseResp::parse(&buf).unwrap(), r);
        let r = OffloadCallReq { offload: c, op: v16 };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(OffloadCallReq::parse(&buf).unwrap(), r);
        let r = OffloadCallResp { code: v16 };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(OffloadCallResp::parse(&buf).unwrap(), r);
        let r = InfoResp { board: InfoResp::board_field(&name), firmware_version: c, rtl_version: c ^ 1,
            build_id: a, config_hash: b, dram_bytes: size, mtu: v16, page_shift: 22, slots_per_bucket: 16, tlb_entries: 64,
            epoch: c ^ 7, sessions: v16 ^ 3, max_resp_kib: v16 ^ 5 };
        r.emit(&mut buf).unwrap();
        let back = InfoResp::parse(&buf).unwrap();
        prop_assert_eq!(back, r);
        prop_assert_eq!(back.board_name().unwrap(), name.as_str());
        let r = OpenSessionReq { join_session: v16, join_key: if v16 == 0 { 0 } else { a } };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(OpenSessionReq::parse(&buf).unwrap(), r);
        let r = OpenSessionResp { session: v16, pid: c, key: a, epoch: c ^ 5, dedup_quota: v16 ^ 1,
            lock_quota: v16 ^ 2, mem_quota_pages: c ^ 9 };
        r.emit(&mut buf).unwrap();
        prop_assert_eq!(OpenSessionResp::parse(&buf).unwrap(), r);
    }

    /// The fuzz contract on stable: any bytes into any parser give a value
    /// or an error naming a field; none panics.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        clio_wire_fuzz_all(&bytes);
    }
}

fn clio_wire_fuzz_all(bytes: &[u8]) {
    fn named<T>(r: clio_wire::Result<T>) {
        if let Err(e) = r {
            assert!(!e.field.is_empty());
            assert!(!e.to_string().is_empty());
        }
    }
    if let Ok(p) = Packet::new_checked(bytes) {
        named(Header::parse_verified(&p));
        named(Header::parse(&p));
    } else {
        named(Packet::new_checked(bytes).map(|_| ()));
    }
    named(AllocReq::parse(bytes));
    named(AllocResp::parse(bytes));
    named(FreeReq::parse(bytes));
    named(AtomicArgs::parse_cas(bytes));
    named(AtomicArgs::parse_faa(bytes));
    named(AtomicResp::parse(bytes));
    named(ChaseReq::parse(bytes));
    named(ChaseResp::parse(bytes));
    named(OffloadCallReq::parse(bytes));
    named(OffloadCallResp::parse(bytes));
    named(InfoResp::parse(bytes));
    named(OpenSessionReq::parse(bytes));
    named(OpenSessionResp::parse(bytes));
    named(Pte::parse(bytes));
    named(Descriptor::parse(bytes, Direction::Rx));
    named(Descriptor::parse(bytes, Direction::Tx));
    if let Ok(b) = Bucket::new_checked(bytes, bytes.len() / 16) {
        let _ = b.find(1, 2, 12);
        let _ = b.used();
    }
    named(clio_wire::ring::RingHeader::new_checked(bytes).and_then(|h| h.check()));
    named(clio_wire::xdma::parse_slot(bytes));
    // EDM has its own error type (each variant names its field).
    let mut blocks = Vec::new();
    for chunk in bytes.chunks(clio_wire::edm::BLOCK_BYTES) {
        if let Ok(v) = clio_wire::edm::BlockView::new_checked(chunk) {
            let b = v.block();
            let _ = clio_wire::edm::NotifyRepr::parse(&b).map_err(|e| e.to_string());
            let _ = clio_wire::edm::GrantRepr::parse(&b).map_err(|e| e.to_string());
            blocks.push(b);
        }
    }
    let mut body = vec![0u8; 1 << 17];
    let _ = clio_wire::edm::parse_message(&blocks, &mut body).map_err(|e| e.to_string());
}

proptest! {
    /// A control datagram of any length survives fragmenting, the ring
    /// encoding and reassembly; a lost fragment drops it (counted).
    #[test]
    fn control_datagrams_round_trip_through_fragments(
        bytes in proptest::collection::vec(any::<u8>(), 1..=clio_wire::ring::MAX_CONTROL_LEN),
        tag in any::<u32>(), seq in any::<u32>(), rx in any::<bool>(), lose in any::<prop::sample::Index>(),
    ) {
        use clio_wire::ring::{control_fragments, ControlAssembler};
        let dir = if rx { Direction::Rx } else { Direction::Tx };
        let mut slots = Vec::new();
        for d in control_fragments(tag, seq, &bytes, dir).unwrap() {
            let mut s = [0u8; SLOT_LEN];
            d.emit(&mut s).unwrap();
            prop_assert_eq!(Descriptor::parse(&s, dir).unwrap(), d);
            slots.push(d);
        }
        let mut a = ControlAssembler::new();
        let mut got = None;
        for d in &slots {
            if let Some((t, q, b)) = a.push(d) {
                got = Some((t, q, b.to_vec()));
            }
        }
        prop_assert_eq!(got, Some((tag, seq, bytes.clone())));
        if slots.len() > 1 {
            let skip = lose.index(slots.len());
            let mut a = ControlAssembler::new();
            let done = slots.iter().enumerate().filter(|&(i, _)| i != skip).any(|(_, d)| a.push(d).is_some());
            prop_assert!(!done);
            prop_assert!(a.dropped() >= 1 || skip == slots.len() - 1);
        }
    }
}

#[test]
fn control_fragments_are_checked() {
    use clio_wire::ring::{control_fragments, CONTROL_FRAGMENT, MAX_CONTROL_LEN};
    assert!(control_fragments(1, 1, &[], Direction::Rx).is_none());
    assert!(control_fragments(1, 1, &[0; MAX_CONTROL_LEN + 1], Direction::Rx).is_none());
    let d = control_fragments(1, 2, &[7; CONTROL_FRAGMENT + 1], Direction::Rx)
        .unwrap()
        .nth(1)
        .unwrap();
    let mut s = [0u8; SLOT_LEN];
    d.emit(&mut s).unwrap();
    // A REPLY kind on the RX ring is refused.
    assert_eq!(
        Descriptor::parse(&s, Direction::Tx).unwrap_err().field,
        "ring.kind"
    );
    let bad = |f: &dyn Fn(&mut [u8; SLOT_LEN])| {
        let mut t = s;
        f(&mut t);
        let crc = clio_wire::crc::crc32c(&t[..60]);
        t[60..64].copy_from_slice(&crc.to_le_bytes());
        Descriptor::parse(&t, Direction::Rx).unwrap_err().field
    };
    // Bytes past the datagram's end, a wrong count, an index past it, len 0.
    assert_eq!(bad(&|t| t[17] = 1), "ring.a");
    assert_eq!(bad(&|t| t[3] = 3), "ring.control.count");
    assert_eq!(bad(&|t| t[2] = 2), "ring.control.index");
    assert_eq!(bad(&|t| t[56..60].fill(0)), "ring.control.len");
}

proptest! {
    /// An offload datagram of any length survives fragmenting, the ring
    /// encoding and reassembly; a lost fragment drops it (counted); one
    /// longer than the assembler holds is dropped once.
    #[test]
    fn offload_datagrams_round_trip_through_fragments(
        bytes in proptest::collection::vec(any::<u8>(), 1..=3000),
        tag in any::<u32>(), seq in any::<u32>(), rx in any::<bool>(), lose in any::<prop::sample::Index>(),
    ) {
        use clio_wire::ring::{offload_fragments, OffloadAssembler};
        let dir = if rx { Direction::Rx } else { Direction::Tx };
        let mut slots = Vec::new();
        for d in offload_fragments(tag, seq, &bytes, dir).unwrap() {
            let mut s = [0u8; SLOT_LEN];
            d.emit(&mut s).unwrap();
            prop_assert_eq!(Descriptor::parse(&s, dir).unwrap(), d);
            slots.push(d);
        }
        let mut a = OffloadAssembler::<3000>::new();
        let mut got = None;
        for d in &slots {
            if let Some((t, q, b)) = a.push(d) {
                got = Some((t, q, b.to_vec()));
            }
        }
        prop_assert_eq!(got, Some((tag, seq, bytes.clone())));
        if slots.len() > 1 {
            let skip = lose.index(slots.len());
            let mut a = OffloadAssembler::<3000>::new();
            let done = slots.iter().enumerate().filter(|&(i, _)| i != skip).any(|(_, d)| a.push(d).is_some());
            prop_assert!(!done);
            prop_assert!(a.dropped() >= 1 || skip == slots.len() - 1);
        }
        let mut small = OffloadAssembler::<64>::new();
        let done = slots.iter().any(|d| small.push(d).is_some());
        prop_assert_eq!(done, bytes.len() <= 64);
        prop_assert_eq!(small.dropped(), u64::from(bytes.len() > 64));
    }
}

#[test]
fn offload_fragments_are_checked() {
    use clio_wire::ring::{offload_fragments, OffloadReplyHead, MAX_OFFLOAD_LEN, OFFLOAD_FRAGMENT};
    assert!(offload_fragments(1, 1, &[], Direction::Rx).is_none());
    assert!(offload_fragments(1, 1, &vec![0; MAX_OFFLOAD_LEN + 1], Direction::Rx).is_none());
    let d = offload_fragments(1, 2, &[7; OFFLOAD_FRAGMENT + 1], Direction::Rx)
        .unwrap()
        .nth(1)
        .unwrap();
    let mut s = [0u8; SLOT_LEN];
    d.emit(&mut s).unwrap();
    assert_eq!(s[0], 0x08);
    assert_eq!(
        Descriptor::parse(&s, Direction::Tx).unwrap_err().field,
        "ring.kind"
    );
    let bad = |f: &dyn Fn(&mut [u8; SLOT_LEN])| {
        let mut t = s;
        f(&mut t);
        let crc = clio_wire::crc::crc32c(&t[..60]);
        t[60..64].copy_from_slice(&crc.to_le_bytes());
        Descriptor::parse(&t, Direction::Rx).unwrap_err().field
    };
    // Bytes past the datagram's end, a wrong count, an index past it, len 0,
    // bits in the unused bytes.
    assert_eq!(bad(&|t| t[17] = 1), "ring.a");
    assert_eq!(bad(&|t| t[6] = 3), "ring.offload.count");
    assert_eq!(bad(&|t| t[4] = 2), "ring.offload.index");
    assert_eq!(
        bad(&|t| t[56..60].copy_from_slice(&0u32.to_le_bytes())),
        "ring.offload.len"
    );
    assert_eq!(bad(&|t| t[2] = 1), "ring.page_shift");
    // The reply head: status then three zero bytes.
    let h = OffloadReplyHead {
        status: clio_wire::Status::OffloadFault,
    };
    let mut dg = h.to_bytes().to_vec();
    dg.extend_from_slice(b"xy");
    assert_eq!(OffloadReplyHead::split(&dg).unwrap(), (h, &b"xy"[..]));
    assert_eq!(
        OffloadReplyHead::split(&dg[..3]).unwrap_err().field,
        "ring.offload_reply"
    );
    dg[2] = 1;
    assert_eq!(
        OffloadReplyHead::split(&dg).unwrap_err().field,
        "ring.offload_reply.reserved"
    );
    dg[2] = 0;
    dg[0] = 0xee;
    assert!(OffloadReplyHead::split(&dg).is_err());
}
