//! Sessions, keys, epochs, acknowledged dedup and quotas (issue #14): the
//! exactly-once scenario, spoofing attempts that change nothing, records
//! freed only by acknowledgements, the session handshake over the rings.

mod common;

use clio_wire::clio::{flags, HEADER_LEN};
use clio_wire::payload::{
    perms, AtomicArgs, AtomicResp, InfoResp, OpenSessionReq, OpenSessionResp,
};
use clio_wire::ring::Descriptor;
use clio_wire::{Header, Opcode, Status};
use common::{key_of, packet, Bench, EPOCH};

const MIB4: u8 = 22;

fn mapped(b: &mut Bench) -> u64 {
    let va = b.class_va(MIB4) + (16u64 << MIB4);
    b.map(1, va, 1, MIB4, perms::RW, true);
    va
}

/// A request of PID 1's session with an explicit ack watermark.
#[allow(clippy::too_many_arguments)]
fn pkt_ack(
    op: Opcode,
    req_id: u32,
    retry_of: u32,
    va: u64,
    len: u32,
    off: u32,
    ack: u32,
    payload: &[u8],
) -> Vec<u8> {
    Header {
        retry_of,
        offset: off,
        ack,
        ..Header::request(op, 1, req_id, va, len).with_session(1, EPOCH, key_of(1))
    }
    .encode(payload)
    .unwrap()
}

fn faa_pkt(req_id: u32, retry_of: u32, va: u64, ack: u32) -> Vec<u8> {
    let mut p = [0u8; 8];
    AtomicArgs::FetchAndAdd { addend: 1 }.emit(&mut p).unwrap();
    pkt_ack(Opcode::FetchAndAdd, req_id, retry_of, va, 8, 0, ack, &p)
}

fn word(b: &mut Bench, va: u64) -> u64 {
    u64::from_le_bytes(b.read(1, 0x7fff_0000, va, 8).1.try_into().unwrap())
}

/// The scenario: an FAA whose answer is lost, then more writes than
/// the buffer has records, then the FAA's retry. The FAA applies once; the
/// writes beyond the buffer get BUSY instead of evicting its record.
#[test]
fn lost_faa_answer_then_a_flood_of_writes_then_the_retry_applies_once() {
    let mut cfg = common::board();
    cfg.dedup.buffer_bytes = 16 * u64::from(cfg.dedup.entry_bytes);
    let mut b = Bench::with(cfg, Default::default());
    let va = mapped(&mut b);
    let cap = b.fp.dedup().capacity() as u32;
    assert_eq!(cap, 16);
    // The FAA executes; its answer is lost on the way back.
    let rs = b.send(&faa_pkt(1, 0, va, 0));
    assert_eq!((rs[0].h.status, rs[0].h.flags), (Status::Ok, 0));
    // More writes than the buffer has records. The client's watermark is
    // its oldest request in flight, the FAA: ack = 1 frees nothing.
    let mut busy = 0;
    for i in 0..cap + 5 {
        let id = 2 + i;
        let rs = b.send(&pkt_ack(
            Opcode::Write,
            id,
            0,
            va + 64 + u64::from(i) * 8,
            8,
            0,
            1,
            &[0xaa; 8],
        ));
        if rs[0].h.status == Status::Busy {
            busy += 1;
        } else {
            assert_eq!(rs[0].h.status, Status::Ok);
        }
    }
    assert_eq!(
        busy, 6,
        "15 writes fit beside the FAA's record, the rest are refused"
    );
    assert_eq!(b.read(1, 500, va + 64 + 14 * 8, 8).1, [0xaa; 8]);
    assert_eq!(
        b.read(1, 501, va + 64 + 15 * 8, 8).1,
        [0; 8],
        "a BUSY write executed nothing"
    );
    // The FAA's retry is answered from its record, not executed again.
    let rs = b.send(&faa_pkt(100, 1, va, 1));
    assert_eq!(rs[0].h.flags, flags::DUPLICATE);
    assert_eq!(AtomicResp::parse(rs[0].payload()).unwrap().old, 0);
    assert_eq!(word(&mut b, va), 1, "applied exactly once");
    // Once the client acknowledges everything, records are free again.
    let rs = b.send(&faa_pkt(200, 0, va, 200));
    assert_eq!(rs[0].h.status, Status::Ok);
    assert_eq!(b.fp.dedup().len(), 1, "only the new FAA's record is held");
    assert_eq!(word(&mut b, va), 2);
}

#[test]
fn acks_free_records_of_their_session_only() {
    let mut b = Bench::new();
    let va = mapped(&mut b);
    for id in 1..=4 {
        b.send(&faa_pkt(id, 0, va, 0));
    }
    b.map(2, va, 1, MIB4, perms::RW, true);
    let mut p = [0u8; 8];
    AtomicArgs::FetchAndAdd { addend: 1 }.emit(&mut p).unwrap();
    b.send(&packet(Opcode::FetchAndAdd, 2, 1, 0, va, 8, 0, &p));
    assert_eq!(
        (b.fp.dedup().session_len(1), b.fp.dedup().session_len(2)),
        (4, 1)
    );
    // A read carrying ack = 3 frees ids 1 and 2 of session 1.
    let rs = b.send(&pkt_ack(Opcode::Read, 5, 0, va, 8, 0, 3, &[]));
    assert_eq!(rs[0].h.status, Status::Ok);
    assert_eq!(
        (b.fp.dedup().session_len(1), b.fp.dedup().session_len(2)),
        (2, 1)
    );
    assert_eq!(b.fp.stats().dedup_acked, 2);
    // A packet of an acknowledged request (a late network duplicate, or a
    // retry the client cannot have sent) is dropped: its record is gone and
    // executing it would apply it twice.
    let before = word(&mut b, va);
    assert!(b.send(&faa_pkt(6, 2, va, 0)).is_empty());
    assert!(b.send(&faa_pkt(2, 0, va, 0)).is_empty());
    assert_eq!(b.fp.stats().stale_duplicates, 2);
    assert_eq!(word(&mut b, va), before, "not applied again");
    assert_eq!(b.send(&faa_pkt(7, 3, va, 0))[0].h.flags, flags::DUPLICATE);
    // A spoofed ack from outside the session frees nothing.
    let mut spoof = pkt_ack(Opcode::Read, 8, 0, va, 8, 0, 0x7000_0000, &[]);
    spoof[clio_wire::clio::field::KEY.start] ^= 0x40;
    let h = Header::parse(&clio_wire::Packet::new_unchecked(&spoof[..])).unwrap();
    let spoof = h.encode(&[]).unwrap();
    assert_eq!(b.send(&spoof)[0].h.status, Status::BadSession);
    assert_eq!(b.fp.dedup().session_len(1), 2);
}

#[test]
fn dedup_quota_per_session_refuses_with_busy() {
    let mut b = Bench::new();
    let va = mapped(&mut b);
    b.open_with(1, 1, key_of(1), 3, 4);
    assert!(b.poll().is_empty());
    for id in 1..=3 {
        assert_eq!(b.send(&faa_pkt(id, 0, va, 0))[0].h.status, Status::Ok);
    }
    assert_eq!(b.send(&faa_pkt(4, 0, va, 0))[0].h.status, Status::Busy);
    assert_eq!(b.fp.stats().dedup_busy, 1);
    // Another session is not starved by it.
    b.map(2, va, 1, MIB4, perms::RW, true);
    assert_eq!(b.write(2, 1, va, b"x"), [Status::Ok]);
    // Idempotent requests are never refused for it; an ack makes room.
    assert_eq!(b.read(1, 5, va, 8).0, Status::Ok);
    assert_eq!(b.send(&faa_pkt(6, 0, va, 2))[0].h.status, Status::Ok);
    assert_eq!(word(&mut b, va), 4);
}

#[test]
fn lock_quota_per_session() {
    let mut b = Bench::new();
    let va = mapped(&mut b);
    b.open_with(1, 1, key_of(1), 64, 2);
    assert!(b.poll().is_empty());
    let lock = |b: &mut Bench, id: u32, at: u64, op: Opcode| {
        b.send(&pkt_ack(op, id, 0, at, 8, 0, 0, &[]))[0].h
    };
    assert_eq!(lock(&mut b, 1, va, Opcode::Lock).status, Status::Ok);
    assert_eq!(lock(&mut b, 2, va + 8, Opcode::Lock).status, Status::Ok);
    let h = lock(&mut b, 3, va + 16, Opcode::Lock);
    assert_eq!((h.status, h.payload_len), (Status::OverQuota, 0));
    assert_eq!(word(&mut b, va + 16), 0, "the third lock was not taken");
    // A held lock is still BUSY (not over quota): it would not succeed anyway.
    assert_eq!(lock(&mut b, 4, va, Opcode::Lock).status, Status::Busy);
    assert_eq!(b.fp.sessions().get(1).unwrap().locks, 2);
    // A replayed LOCK does not count twice.
    let rs = b.send(&pkt_ack(Opcode::Lock, 5, 1, va, 8, 0, 0, &[]));
    assert_eq!(rs[0].h.flags, flags::DUPLICATE);
    assert_eq!(lock(&mut b, 6, va, Opcode::Unlock).status, Status::Ok);
    assert_eq!(b.fp.sessions().get(1).unwrap().locks, 1);
    assert_eq!(lock(&mut b, 7, va + 16, Opcode::Lock).status, Status::Ok);
    assert_eq!(word(&mut b, va + 16), 1);
    // Unlocks never take the count below zero.
    for id in 8..12 {
        lock(&mut b, id, va + 24, Opcode::Unlock);
    }
    assert_eq!(b.fp.sessions().get(1).unwrap().locks, 0);
}

/// Requests without valid credentials change nothing and get at most one
/// header-only answer, never longer than the request.
#[test]
fn spoofed_pid_wrong_key_wrong_session_stale_epoch_change_nothing() {
    let mut b = Bench::new();
    let va = mapped(&mut b);
    b.write(1, 1, va, b"secret!!");
    b.send(&faa_pkt(2, 0, va + 8, 0));
    let before = b.fp.dram().clone();
    let dedup = b.fp.dedup().len();
    let base = Header {
        ack: 0x7fff_ffff,
        ..Header::request(Opcode::Write, 1, 3, va, 8).with_session(1, EPOCH, key_of(1))
    };
    let cases: [(&str, Header, Status); 6] = [
        (
            "guessed key",
            Header { key: 12345, ..base },
            Status::BadSession,
        ),
        ("spoofed pid", Header { pid: 2, ..base }, Status::BadSession),
        (
            "another session, own pid",
            Header { session: 2, ..base },
            Status::BadSession,
        ),
        (
            "no session",
            Header {
                session: 0,
                key: 0,
                ..base
            },
            Status::BadSession,
        ),
        (
            "session id beyond the table",
            Header {
                session: u16::MAX,
                ..base
            },
            Status::BadSession,
        ),
        (
            "an earlier boot",
            Header {
                epoch: EPOCH - 1,
                ..base
            },
            Status::Restarted,
        ),
    ];
    for (what, h, status) in cases {
        for (op, payload) in [
            (Opcode::Write, &b"XXXXXXXX"[..]),
            (Opcode::FetchAndAdd, &[0, 0, 0, 0, 0, 0, 0, 9][..]),
            (Opcode::Free, &[0, 0, 0, 0, 0, 0x40, 0, 0][..]),
            (Opcode::Unlock, &[][..]),
            (Opcode::CloseSession, &[][..]),
        ] {
            let len = if op == Opcode::Write || op.is_non_idempotent() && op != Opcode::Free {
                8
            } else {
                0
            };
            let pkt = Header {
                opcode: op,
                total_len: len,
                ..h
            }
            .encode(payload)
            .unwrap();
            let rs = b.send(&pkt);
            assert_eq!(rs.len(), 1, "{what} {op:?}");
            assert_eq!(rs[0].h.status, status, "{what} {op:?}");
            assert_eq!(rs[0].h.payload_len, 0, "{what} {op:?}");
            assert!(
                rs[0].bytes.len() <= pkt.len(),
                "{what} {op:?}: amplification"
            );
            if status == Status::Restarted {
                assert_eq!(rs[0].h.epoch, EPOCH, "the answer names the current epoch");
            }
        }
        // A large read asks for many packets: one small error answers it.
        let pkt = Header {
            opcode: Opcode::Read,
            total_len: 8 << 20,
            ..h
        }
        .encode(&[])
        .unwrap();
        let rs = b.send(&pkt);
        assert_eq!(
            (rs.len(), rs[0].bytes.len()),
            (1, HEADER_LEN),
            "{what}: read"
        );
    }
    assert!(b.fp.dram() == &before, "memory and rings unchanged");
    assert_eq!(b.fp.dedup().len(), dedup, "no record taken, none freed");
    assert!(b.rx().is_empty(), "nothing forwarded");
    // A replayed req_id from another source with a wrong key cannot poison
    // the dedup buffer: the owner's next request executes.
    let spoof = Header {
        key: 1,
        ..Header::request(Opcode::FetchAndAdd, 1, 50, va + 8, 8).with_session(1, EPOCH, 0)
    };
    b.send(&spoof.encode(&[0; 8]).unwrap());
    assert_eq!(b.send(&faa_pkt(50, 0, va + 8, 0))[0].h.flags, 0);
    assert_eq!(word(&mut b, va + 8), 2);
}

fn open_req(req_id: u32, pid: u32, join: u16, join_key: u64) -> Vec<u8> {
    let mut p = [0u8; OpenSessionReq::LEN];
    OpenSessionReq {
        join_session: join,
        join_key,
    }
    .emit(&mut p)
    .unwrap();
    Header::request(Opcode::OpenSession, pid, req_id, 0, 0)
        .encode(&p)
        .unwrap()
}

#[test]
fn open_and_close_go_through_the_slow_path() {
    let mut b = Bench::new();
    // OPEN_SESSION needs no session; its payload must be exactly OpenSessionReq.
    let short = Header::request(Opcode::OpenSession, 0, 1, 0, 0)
        .encode(&[0; 16])
        .unwrap();
    assert_eq!(b.send(&short)[0].h.status, Status::Malformed);
    let req = open_req(2, 0, 0, 0);
    assert!(
        b.send(&req).is_empty(),
        "answered when the slow path replies"
    );
    let rx = b.rx();
    let Descriptor::SessionOpenReq {
        tag,
        pid: 0,
        req_id: 2,
        join_session: 0,
        join_key: 0,
    } = rx[0]
    else {
        panic!("{rx:?}")
    };
    assert_ne!(tag, 0, "tag 0 means nobody waits");
    // A retry opens another session (no re-target, no dedup).
    assert!(b.send(&open_req(3, 0, 0, 0)).is_empty());
    assert_eq!(b.rx().len(), 1);
    b.post(&Descriptor::SessionReply {
        tag,
        pid: 9,
        req_id: 2,
        status: 0,
        session: 30,
        key: 0xfeed,
        dedup_quota: 5,
        lock_quota: 1,
        mem_quota_pages: 16,
        close: false,
    });
    let rs = b.poll();
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(
        (r.h.opcode, r.h.status, r.h.req_id, r.h.epoch),
        (Opcode::OpenSessionResp, Status::Ok, 2, EPOCH)
    );
    assert!(r.bytes.len() <= req.len(), "no amplification");
    let o = OpenSessionResp::parse(r.payload()).unwrap();
    assert_eq!(
        o,
        OpenSessionResp {
            session: 30,
            pid: 9,
            key: 0xfeed,
            epoch: EPOCH,
            dedup_quota: 5,
            lock_quota: 1,
            mem_quota_pages: 16
        }
    );
    // The session works at once.
    let fence = Header::request(Opcode::Fence, 9, 4, 0, 0)
        .with_session(30, EPOCH, 0xfeed)
        .encode(&[])
        .unwrap();
    assert_eq!(b.send(&fence)[0].h.status, Status::Ok);
    // CLOSE_SESSION: forwarded (with a valid session only), answered by the close.
    let close = Header::request(Opcode::CloseSession, 9, 5, 0, 0)
        .with_session(30, EPOCH, 0xfeed)
        .encode(&[])
        .unwrap();
    assert!(b.send(&close).is_empty());
    let rx = b.rx();
    let Descriptor::SessionCloseReq {
        tag,
        pid: 9,
        req_id: 5,
        session: 30,
    } = rx[0]
    else {
        panic!("{rx:?}")
    };
    // A repeat while it waits is re-targeted, not forwarded again.
    assert!(b.send(&close).is_empty());
    assert!(b.rx().is_empty());
    b.post(&Descriptor::SessionReply {
        tag,
        pid: 9,
        req_id: 5,
        status: 0,
        session: 30,
        key: 0,
        dedup_quota: 0,
        lock_quota: 0,
        mem_quota_pages: 0,
        close: true,
    });
    let rs = b.poll();
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status, rs[0].h.payload_len),
        (Opcode::CloseSessionResp, Status::Ok, 0)
    );
    assert_eq!(b.send(&fence)[0].h.status, Status::BadSession, "closed");
    assert_eq!(
        b.send(&close)[0].h.status,
        Status::BadSession,
        "a second close"
    );
    assert_eq!(b.fp.stats().sessions_closed, 1);
}

#[test]
fn session_reply_checks() {
    let mut b = Bench::new();
    let reply = |tag, session, close| Descriptor::SessionReply {
        tag,
        pid: 1,
        req_id: 1,
        status: 0,
        session,
        key: 1,
        dedup_quota: 1,
        lock_quota: 1,
        mem_quota_pages: 1,
        close,
    };
    let cap = b.cfg.session_capacity() as u16;
    // Session id 0 or beyond the table; a tag nobody holds.
    for d in [
        reply(0, 0, false),
        reply(0, cap, false),
        reply(0x1_0003, 5, false),
        reply(0x1_0003, 5, true),
    ] {
        b.post(&d);
        assert!(b.poll().is_empty());
    }
    assert_eq!(b.fp.stats().tx_rejected, 4);
    assert_eq!(b.rx().len(), 4, "each reported");
    // A slow-path-initiated close (tag 0) clears the entry, its records and lock count.
    let va = mapped(&mut b);
    b.send(&faa_pkt(1, 0, va, 0));
    b.send(&pkt_ack(Opcode::Lock, 2, 0, va + 8, 8, 0, 0, &[]));
    assert_eq!(
        (
            b.fp.dedup().session_len(1),
            b.fp.sessions().get(1).unwrap().locks
        ),
        (2, 1)
    );
    b.post(&reply(0, 1, true));
    assert!(b.poll().is_empty());
    assert_eq!(b.fp.dedup().session_len(1), 0);
    assert_eq!(
        b.fp.sessions().get(1).unwrap(),
        &clio_fastpath::Session::default()
    );
    assert_eq!(b.read(1, 3, va, 8).0, Status::BadSession);
}

#[test]
fn a_new_epoch_resets_sessions_records_and_locks() {
    let mut b = Bench::new();
    let va = mapped(&mut b);
    b.send(&faa_pkt(1, 0, va, 0));
    b.send(&pkt_ack(Opcode::Lock, 2, 0, va + 8, 8, 0, 0, &[]));
    b.post(&Descriptor::Epoch { epoch: EPOCH + 1 });
    assert!(b.poll().is_empty());
    assert_eq!(b.fp.epoch(), EPOCH + 1);
    assert!(b.fp.dedup().is_empty());
    assert_eq!(b.fp.sessions().open(), 0);
    let rs = b.send(&faa_pkt(3, 1, va, 0));
    assert_eq!(
        (rs[0].h.status, rs[0].h.epoch),
        (Status::Restarted, EPOCH + 1)
    );
    // INFO (no session) tells the new epoch.
    let rs = b.send(&packet(Opcode::Info, 0, 4, 0, 0, 0, 0, &[0; InfoResp::LEN]));
    assert_eq!(InfoResp::parse(rs[0].payload()).unwrap().epoch, EPOCH + 1);
    assert_eq!(
        word_unchecked(&b, va),
        1,
        "memory is the slow path's business, not the epoch's"
    );
}

fn word_unchecked(b: &Bench, va: u64) -> u64 {
    // Read the word through the page table image: the session is gone.
    let lay = b.fp.layout();
    let g = lay.table;
    let vpn = va >> MIB4;
    let bucket = g.bucket_of(1, vpn);
    (0..g.slots_per_bucket)
        .find_map(|s| {
            let at = lay.offset(g.slot_addr(bucket, s));
            let pte = clio_wire::pte::Pte::parse(&b.fp.dram()[at..at + 16]).ok()?;
            (pte.pid == 1 && pte.vpn == vpn).then(|| {
                let pa = (u64::from(pte.ppn) << MIB4) + (va & ((1 << MIB4) - 1));
                let o = lay.offset(pa);
                u64::from_le_bytes(b.fp.dram()[o..o + 8].try_into().unwrap())
            })
        })
        .unwrap()
}

#[test]
fn before_the_first_epoch_every_session_request_is_restarted() {
    let cfg = common::board();
    let dram = vec![0u8; cfg.dram.size as usize];
    let mut fp = clio_fastpath::FastPath::format(&cfg, Default::default(), dram).unwrap();
    let pkt = Header::request(Opcode::Read, 1, 1, 0, 8)
        .encode(&[])
        .unwrap();
    let mut got = Vec::new();
    fp.receive(common::CLIENT, &pkt, &mut |_, r: &[u8]| {
        got.push(r.to_vec())
    });
    assert_eq!(got[0][3], Status::Restarted.raw());
}

#[test]
fn forwarded_alloc_reserves_its_record_and_a_failure_frees_it() {
    let mut b = Bench::new();
    b.open_with(1, 1, key_of(1), 1, 1);
    assert!(b.poll().is_empty());
    let alloc = |id, retry_of| {
        let mut p = [0u8; 16];
        clio_wire::payload::AllocReq {
            size: 4 << 20,
            perms: perms::RW,
            page_shift: 0,
        }
        .emit(&mut p)
        .unwrap();
        pkt_ack(Opcode::Alloc, id, retry_of, 0, 0, 0, 0, &p)
    };
    assert!(b.send(&alloc(1, 0)).is_empty());
    assert_eq!(b.fp.dedup().session_len(1), 1, "reserved at intake");
    // The session's quota (1) is taken by the reservation.
    let va = b.class_va(MIB4);
    assert_eq!(b.send(&faa_pkt(2, 0, va, 0))[0].h.status, Status::Busy);
    let Descriptor::AllocReq { tag, .. } = b.rx()[0] else {
        panic!()
    };
    b.post(&Descriptor::Reply {
        tag,
        pid: 1,
        req_id: 1,
        status: Status::OutOfMemory.raw(),
        va: 0,
        size: 0,
        retries: 0,
        moved: false,
    });
    assert_eq!(b.poll()[0].h.status, Status::OutOfMemory);
    assert_eq!(
        b.fp.dedup().session_len(1),
        0,
        "a failure frees its reservation"
    );
    // Its retry is forwarded again, and an OK reply becomes the record.
    assert!(b.send(&alloc(3, 1)).is_empty());
    let Descriptor::AllocReq { tag, .. } = b.rx()[0] else {
        panic!()
    };
    b.post(&Descriptor::Reply {
        tag,
        pid: 1,
        req_id: 3,
        status: 0,
        va: 0x40_0000,
        size: 4 << 20,
        retries: 0,
        moved: false,
    });
    assert_eq!(b.poll()[0].h.status, Status::Ok);
    let rs = b.send(&alloc(4, 1));
    assert_eq!((rs[0].h.flags, rs[0].h.va), (flags::DUPLICATE, 0x40_0000));
}
