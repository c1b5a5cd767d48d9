//! Packet-granularity interleaving of long READ answers
//! (`FastPath::set_interleave_reads`, `FastPath::pump`).

mod common;

use clio_fastpath::ClientId;
use clio_wire::payload::perms;
use clio_wire::ring::Descriptor;
use clio_wire::{Opcode, Status};
use common::{packet, parse, Bench, Resp, CLIENT};

const MIB4: u8 = 22;
const KIB4: u8 = 12;
const MTU: usize = 1450;

fn mapped(shift: u8, pages: u64) -> (Bench, u64) {
    let mut b = Bench::new();
    let va = b.class_va(shift) + (16u64 << shift);
    b.map(1, va, pages, shift, perms::RW, true);
    b.map(2, va, pages, shift, perms::RW, true);
    (b, va)
}

fn recv(b: &mut Bench, from: ClientId, pkt: &[u8]) -> Vec<Resp> {
    let mut v = Vec::new();
    b.fp.receive(from, pkt, &mut |to, p: &[u8]| v.push(parse(to, p)));
    v
}

fn pump(b: &mut Bench, max: usize) -> Vec<Resp> {
    let mut v = Vec::new();
    let n = b.fp.pump(max, &mut |to, p: &[u8]| v.push(parse(to, p)));
    assert_eq!(n, v.len());
    v
}

#[test]
fn a_streamed_read_is_byte_identical_to_a_whole_one() {
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 13 + 5) as u8).collect();
    let mut answers = Vec::new();
    for on in [false, true] {
        let (mut b, va) = mapped(KIB4, 8);
        assert!(b
            .write(1, 1, va + 300, &data)
            .iter()
            .all(|&s| s == Status::Ok));
        b.fp.set_interleave_reads(on);
        let pkt = packet(Opcode::Read, 1, 2, 0, va + 300, data.len() as u32, 0, &[]);
        let mut rs = recv(&mut b, CLIENT, &pkt);
        if on {
            assert_eq!(rs.len(), 1, "only the first packet at intake");
            let left = data.len() - MTU;
            let owed = left + left.div_ceil(MTU) * clio_wire::clio::HEADER_LEN;
            assert_eq!(b.fp.owed_bytes(), owed as u64);
            while b.fp.owed_bytes() > 0 {
                rs.extend(pump(&mut b, 3));
            }
            assert!(pump(&mut b, 3).is_empty());
            assert_eq!(b.fp.stats().read_streams, 1);
        }
        answers.push(rs.into_iter().map(|r| r.bytes).collect::<Vec<_>>());
    }
    assert_eq!(answers[0].len(), data.len().div_ceil(MTU));
    assert_eq!(answers[0], answers[1], "same packets, same order");
}

#[test]
fn streams_take_turns_by_client_and_other_requests_go_between_packets() {
    let (mut b, va) = mapped(MIB4, 1);
    b.fp.set_interleave_reads(true);
    let (a, c) = (ClientId(1), ClientId(2));
    // Client A: two 10-packet reads; client C: one.
    let len = 10 * MTU as u32;
    assert_eq!(
        recv(&mut b, a, &packet(Opcode::Read, 1, 1, 0, va, len, 0, &[])).len(),
        1
    );
    assert_eq!(
        recv(&mut b, a, &packet(Opcode::Read, 1, 2, 0, va, len, 0, &[])).len(),
        1
    );
    assert_eq!(
        recv(&mut b, c, &packet(Opcode::Read, 2, 1, 0, va, len, 0, &[])).len(),
        1
    );
    let rs = pump(&mut b, 4);
    let who: Vec<_> = rs
        .iter()
        .map(|r| (r.to.0, r.h.req_id, r.h.offset))
        .collect();
    let m = MTU as u32;
    assert_eq!(who, [(1, 1, m), (2, 1, m), (1, 1, 2 * m), (2, 1, 2 * m)]);
    // A small read arriving now is answered at once, whole.
    let small = recv(
        &mut b,
        ClientId(3),
        &packet(Opcode::Read, 2, 9, 0, va, 64, 0, &[]),
    );
    assert_eq!((small.len(), small[0].h.status), (1, Status::Ok));
    // A's second read starts after its first ends.
    let mut rest = Vec::new();
    while b.fp.owed_bytes() > 0 {
        rest.extend(pump(&mut b, 5));
    }
    let a_ids: Vec<_> = rest
        .iter()
        .filter(|r| r.to == a)
        .map(|r| r.h.req_id)
        .collect();
    assert!(a_ids.windows(2).all(|w| w[0] <= w[1]), "{a_ids:?}");
    assert_eq!(rest.len(), 3 * 9 - 4);
}

#[test]
fn a_packet_reads_memory_when_it_is_sent() {
    let (mut b, va) = mapped(MIB4, 1);
    b.fp.set_interleave_reads(true);
    let len = 3 * MTU as u32;
    let rs = recv(
        &mut b,
        ClientId(1),
        &packet(Opcode::Read, 1, 1, 0, va, len, 0, &[]),
    );
    assert_eq!(rs[0].payload(), &[0u8; MTU][..]);
    // Another client writes the third packet's bytes meanwhile.
    let w = recv(
        &mut b,
        ClientId(2),
        &packet(Opcode::Write, 2, 1, 0, va + 2 * MTU as u64, 4, 0, b"late"),
    );
    // PID 2 has its own pages: PID 1's stream is unchanged ...
    assert_eq!(w[0].h.status, Status::Ok);
    // ... while PID 1's own write (another thread, no ordering) shows.
    let w = recv(
        &mut b,
        ClientId(2),
        &packet(Opcode::Write, 1, 7, 0, va + 2 * MTU as u64, 4, 0, b"late"),
    );
    assert_eq!(w[0].h.status, Status::Ok);
    let rs = pump(&mut b, 8);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].payload(), &[0u8; MTU][..]);
    assert_eq!(&rs[1].payload()[..4], b"late");
}

#[test]
fn a_fence_sends_its_pids_streams_first() {
    let (mut b, va) = mapped(MIB4, 1);
    b.fp.set_interleave_reads(true);
    let len = 5 * MTU as u32;
    recv(
        &mut b,
        ClientId(1),
        &packet(Opcode::Read, 1, 1, 0, va, len, 0, &[]),
    );
    recv(
        &mut b,
        ClientId(2),
        &packet(Opcode::Read, 2, 1, 0, va, len, 0, &[]),
    );
    let rs = recv(
        &mut b,
        ClientId(3),
        &packet(Opcode::Fence, 1, 2, 0, 0, 0, 0, &[]),
    );
    let ops: Vec<_> = rs.iter().map(|r| (r.to.0, r.h.opcode)).collect();
    let mut want = vec![(1, Opcode::ReadResp); 4];
    want.push((3, Opcode::FenceResp));
    assert_eq!(ops, want, "PID 1's stream, then the fence; PID 2's waits");
    assert_eq!(pump(&mut b, 100).len(), 4);
    assert_eq!(b.fp.owed_bytes(), 0);
}

#[test]
fn a_page_unmapped_under_a_stream_ends_it_with_the_status() {
    let (mut b, va) = mapped(KIB4, 4);
    b.fp.set_interleave_reads(true);
    let len = 4 * 4096;
    let rs = recv(
        &mut b,
        CLIENT,
        &packet(Opcode::Read, 1, 1, 0, va, len, 0, &[]),
    );
    assert_eq!(rs[0].h.status, Status::Ok);
    // The slow path removes the third page (a FREE's work) and shoots it
    // down from the TLB.
    let lay = *b.fp.layout();
    let vpn = (va >> KIB4) + 2;
    let bucket = lay.table.bucket_of(1, vpn);
    let slot = (0..lay.table.slots_per_bucket)
        .find(|&s| {
            let at = lay.offset(lay.table.slot_addr(bucket, s));
            clio_wire::pte::Pte::parse(&b.fp.dram()[at..at + 16])
                .is_ok_and(|p| p.pid == 1 && p.vpn == vpn)
        })
        .expect("the page's PTE");
    b.post(&Descriptor::PteRemove {
        bucket,
        slot,
        pid: 1,
        vpn,
    });
    b.post(&Descriptor::TlbInvalidate {
        pid: 1,
        vpn,
        pages: 1,
    });
    b.poll();
    let mut rest = Vec::new();
    while b.fp.owed_bytes() > 0 {
        rest.extend(pump(&mut b, 1));
    }
    let last = rest.last().unwrap();
    assert_eq!((last.h.status, last.h.offset), (Status::Unmapped, 0));
    assert!(last.payload().is_empty());
    // Nothing of the removed page or after it was sent.
    let sent: u32 = rs
        .iter()
        .chain(&rest)
        .map(|r| r.payload().len() as u32)
        .sum();
    assert!(sent <= 2 * 4096, "sent {sent}");
    assert_eq!(b.fp.stats().read_streams_cut, 1);
}
