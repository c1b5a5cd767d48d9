//! Every malformed input gets the specified answer, and the model keeps
//! serving; golden response bytes pin the encoding the RTL must match.

mod common;

use clio_wire::clio::{field, HEADER_LEN};
use clio_wire::payload::perms;
use clio_wire::{Opcode, Status};
use common::{packet, Bench};

fn setup() -> (Bench, u64) {
    let mut b = Bench::new();
    let va = b.class_va(22) + (16u64 << 22);
    b.map(1, va, 1, 22, perms::RW, true);
    b.write(1, 1, va, b"still serving");
    (b, va)
}

fn refill_crc(p: &mut [u8]) {
    p[field::CRC].fill(0);
    let c = clio_wire::crc32c(p);
    p[field::CRC].copy_from_slice(&c.to_be_bytes());
}

fn still_serving(b: &mut Bench, va: u64) {
    assert_eq!(b.read(1, 999, va, 13).1, b"still serving");
}

#[test]
fn integrity_failures_get_a_nack_echoing_the_ids() {
    let (mut b, va) = setup();
    let mut p = packet(Opcode::Write, 1, 77, 5, va, 4, 0, b"abcd");
    p[HEADER_LEN + 1] ^= 0x10;
    let rs = b.send(&p);
    assert_eq!(rs.len(), 1);
    let h = rs[0].h;
    assert_eq!(
        (
            h.opcode,
            h.status,
            h.pid,
            h.req_id,
            h.retry_of,
            h.payload_len
        ),
        (Opcode::Nack, Status::Corrupt, 1, 77, 5, 0)
    );
    assert_eq!(
        (h.va, h.total_len, h.offset),
        (0, 0, 0),
        "only the ids are echoed"
    );
    // Payload shorter than the header declares: NACK too.
    let p = packet(Opcode::Write, 1, 78, 0, va, 4, 0, b"abcd");
    let rs = b.send(&p[..HEADER_LEN + 2]);
    assert_eq!((rs[0].h.opcode, rs[0].h.req_id), (Opcode::Nack, 78));
    assert_eq!(b.fp.stats().nacks, 2);
    assert_eq!(b.read(1, 2, va, 4).1, b"stil", "nothing written");
    still_serving(&mut b, va);
}

#[test]
fn runts_and_stray_responses_are_dropped_silently() {
    let (mut b, va) = setup();
    let p = packet(Opcode::Read, 1, 3, 0, va, 8, 0, &[]);
    assert!(b.send(&p[..HEADER_LEN - 1]).is_empty());
    assert!(b.send(&[]).is_empty());
    let mut resp = p.clone();
    resp[field::OPCODE] = Opcode::ReadResp.raw();
    refill_crc(&mut resp);
    assert!(b.send(&resp).is_empty());
    resp[field::OPCODE] = Opcode::Nack.raw();
    refill_crc(&mut resp);
    assert!(b.send(&resp).is_empty());
    assert_eq!((b.fp.stats().runts, b.fp.stats().stray_responses), (2, 2));
    // Trailing bytes after the declared payload (link padding) are ignored.
    let mut padded = p.clone();
    padded.extend_from_slice(&[0; 6]);
    assert_eq!(b.send(&padded)[0].h.status, Status::Ok);
    still_serving(&mut b, va);
}

/// Corrupt one header field of a valid read (CRC fixed up) and return the answer.
fn mutate(b: &mut Bench, va: u64, f: impl Fn(&mut Vec<u8>)) -> (Opcode, Status) {
    let mut p = packet(Opcode::Read, 1, 50, 0, va, 8, 0, &[]);
    f(&mut p);
    refill_crc(&mut p);
    let rs = b.send(&p);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].h.req_id, 50);
    if rs[0].h.status != Status::Ok {
        assert_eq!(rs[0].h.payload_len, 0);
    }
    (rs[0].h.opcode, rs[0].h.status)
}

#[test]
fn each_bad_field_gets_its_answer() {
    let (mut b, va) = setup();
    let m = Status::Malformed;
    assert_eq!(
        mutate(&mut b, va, |p| p[field::VERSION] = 1),
        (Opcode::ReadResp, m)
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::OPCODE] = 0x3f),
        (Opcode::Nack, Status::Unsupported),
        "unknown opcode: not damage, the client must not retry"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::FLAGS] = 0x80),
        (Opcode::ReadResp, m),
        "undefined flag"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::FLAGS] = 0x04),
        (Opcode::ReadResp, m),
        "response flag in a request"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::FLAGS] = 0x01),
        (Opcode::ReadResp, Status::Ok),
        "FIXED_VA is ignored"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::STATUS] = 1),
        (Opcode::ReadResp, m),
        "status in a request"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::STATUS] = 99),
        (Opcode::ReadResp, m),
        "unknown status"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::KEY.end - 1] ^= 1),
        (Opcode::ReadResp, Status::BadSession),
        "wrong key"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::SESSION.end - 1] = 2),
        (Opcode::ReadResp, Status::BadSession),
        "another PID's session"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::EPOCH.end - 1] ^= 1),
        (Opcode::ReadResp, Status::Restarted),
        "an earlier boot"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::OFFSET.end - 1] = 4),
        (Opcode::ReadResp, m),
        "read with offset"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::VA].fill(0xff)),
        (Opcode::ReadResp, m),
        "va + len wraps"
    );
    assert_eq!(
        mutate(&mut b, va, |p| p[field::PID].fill(0)),
        (Opcode::ReadResp, Status::BadSession),
        "a PID not the session's"
    );
    // A read carrying a payload.
    let rs = b.send(&packet(Opcode::Read, 1, 51, 0, va, 8, 0, b"xx"));
    assert_eq!(rs[0].h.status, m);
    // Write packet beyond its request: offset + payload_len > total_len.
    let mut p = packet(Opcode::Write, 1, 52, 0, va, 4, 0, b"abcd");
    p[field::TOTAL_LEN.end - 1] = 3;
    refill_crc(&mut p);
    assert_eq!(b.send(&p)[0].h.status, m);
    // Payload above the board MTU (1450) but within the wire maximum.
    let big = vec![1u8; 1451];
    let rs = b.send(&packet(Opcode::Write, 1, 53, 0, va, 1451, 0, &big));
    assert_eq!(rs[0].h.status, m);
    // Control payloads of the wrong size.
    for op in [Opcode::Alloc, Opcode::Free, Opcode::PointerChase] {
        let rs = b.send(&packet(op, 1, 54, 0, va, 0, 0, &[0; 3]));
        assert_eq!(
            (rs[0].h.opcode, rs[0].h.status),
            (op.response().unwrap(), m),
            "{op:?}"
        );
    }
    // Alloc with undefined permission bits.
    let mut a = [0u8; 16];
    a[8] = 0x10;
    assert_eq!(
        b.send(&packet(Opcode::Alloc, 1, 55, 0, 0, 0, 0, &a))[0]
            .h
            .status,
        m
    );
    assert!(b.fp.stats().malformed >= 13);
    assert_eq!(b.fp.stats().bad_session, 3);
    still_serving(&mut b, va);
}

#[test]
fn random_garbage_never_panics_and_every_answer_is_well_formed() {
    use rand::{Rng, SeedableRng};
    let (mut b, va) = setup();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    // Writes aimed away from the bytes `still_serving` checks (mutations may retarget them a little).
    let base = packet(Opcode::Write, 1, 60, 0, va + 0x10_0000, 16, 0, &[3u8; 16]);
    for _ in 0..3000 {
        let mut p = base.clone();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..p.len());
            p[i] = rng.gen();
        }
        if rng.gen_bool(0.7) {
            refill_crc(&mut p);
        }
        let n = rng.gen_range(0..=p.len());
        // `send` parses every response and checks its CRC.
        b.send(&p[..n]);
    }
    still_serving(&mut b, va);
}

/// Golden bytes: the exact encoding of a few responses.
#[test]
fn golden_responses() {
    let (mut b, va) = setup();
    assert_eq!(va, 0x0400_0000);
    let rs = b.send(&packet(Opcode::Read, 1, 0x0a0b_0c0d, 0, va, 4, 0, &[]));
    let want: &[u8] = &[
        0x02, 0x83, 0x00, 0x00, // version, READ_RESP, flags, OK
        0x00, 0x00, 0x00, 0x01, // pid
        0x0a, 0x0b, 0x0c, 0x0d, // req_id
        0x00, 0x00, 0x00, 0x00, // retry_of
        0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, // va
        0x00, 0x00, 0x00, 0x04, // total_len
        0x00, 0x00, 0x00, 0x00, // offset
        0x00, 0x04, 0x00, 0x01, // payload_len, session (echoed)
        0x5e, 0xed, 0x00, 0x01, // epoch (echoed)
        0, 0, 0, 0, 0, 0, 0, 0, // key: never in a response
        0, 0, 0, 0, // ack: never in a response
    ];
    assert_eq!(&rs[0].bytes[..52], want);
    assert_eq!(
        &rs[0].bytes[52..56],
        &[0xc6, 0x7d, 0x79, 0x5e],
        "crc (checked against an independent bitwise CRC32C)"
    );
    assert_eq!(&rs[0].bytes[56..], b"stil");

    let mut p = packet(Opcode::Read, 1, 9, 0, va, 4, 0, &[]);
    p[field::REQ_ID.end - 1] ^= 1;
    let rs = b.send(&p);
    assert_eq!(
        rs[0].bytes,
        [
            2, 0xff, 0, 7, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 1, 0x5e, 0xed, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x37,
            0x4f, 0x8a, 0x05
        ],
        "NACK of a packet whose req_id byte was hit"
    );

    let rs = b.send(&packet(
        Opcode::FetchAndAdd,
        1,
        3,
        0,
        va,
        8,
        0,
        &5u64.to_be_bytes(),
    ));
    assert_eq!(&rs[0].bytes[..4], &[2, 0x87, 0, 0]);
    assert_eq!(
        &rs[0].bytes[56..],
        &u64::from_le_bytes(*b"still se").to_be_bytes(),
        "old value, big-endian on the wire"
    );
    let retry = b.send(&packet(
        Opcode::FetchAndAdd,
        1,
        4,
        3,
        va,
        8,
        0,
        &5u64.to_be_bytes(),
    ));
    assert_eq!(
        &retry[0].bytes[..16],
        &[2, 0x87, 0x04, 0, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 3]
    );
}
