//! Bad input at a served board, in raw UDP datagrams and through the SDK:
//! corrupted and truncated packets, malformed headers, wrong PIDs and
//! session credentials, out-of-range VAs, oversize requests. Each gets the
//! answer the fast-path specification (`ip/fastpath/README.md`, "Intake")
//! names, and after each the board still serves valid requests.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use clio::{ClioError, OpKind, SessionInfo};
use clio_tests::{pattern, ServedBoard};
use clio_wire::clio::{field, flags, HEADER_LEN};
use clio_wire::payload::{perms, AtomicArgs, AtomicResp, InfoResp};
use clio_wire::{Header, Opcode, Packet, Status};

/// Request ids of the raw client live in their own range.
const RAW_LANE: u32 = 0xEE00_0000;

/// A raw datagram client: it signs its requests with the credentials of an
/// SDK session (a second client of that session, as far as the board can
/// tell), whatever PID a request names.
struct Raw {
    sock: UdpSocket,
    board: SocketAddr,
    next: u32,
    creds: SessionInfo,
}

/// One answer, checked to be a well-formed response.
#[derive(Debug)]
struct Answer {
    h: Header,
    payload: Vec<u8>,
}

impl Raw {
    fn new(board: SocketAddr, creds: SessionInfo) -> Raw {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        // Only a bound on a failure: every wait below ends with a datagram.
        sock.set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Raw {
            sock,
            board,
            next: 1,
            creds,
        }
    }

    fn id(&mut self) -> u32 {
        self.next += 1;
        RAW_LANE | self.next
    }

    /// A valid request with a fresh id, carrying the session's credentials
    /// (an INFO with no payload is padded to the answer's size, as the
    /// board requires).
    fn req(
        &mut self,
        opcode: Opcode,
        pid: u32,
        va: u64,
        total_len: u32,
        payload: &[u8],
    ) -> Vec<u8> {
        let c = self.creds;
        let pad = [0u8; InfoResp::LEN];
        let payload = if opcode == Opcode::Info && payload.is_empty() {
            &pad[..]
        } else {
            payload
        };
        Header::request(opcode, pid, self.id(), va, total_len)
            .with_session(c.session, c.epoch, c.key)
            .encode(payload)
            .unwrap()
    }

    fn send(&self, bytes: &[u8]) {
        self.sock.send_to(bytes, self.board).unwrap();
    }

    fn recv(&self) -> Answer {
        let mut buf = vec![0u8; 65536];
        let (n, from) = self
            .sock
            .recv_from(&mut buf)
            .expect("the board answers (or a later probe does)");
        assert_eq!(from, self.board);
        let p = Packet::new_checked(&buf[..n]).expect("answer is a whole packet");
        let h = Header::parse_verified(&p).expect("answer parses and its CRC holds");
        assert_eq!(n, HEADER_LEN + h.payload_len as usize, "no trailing bytes");
        Answer {
            h,
            payload: p.payload().to_vec(),
        }
    }

    /// Send `bytes` and take the one answer.
    fn ask(&self, bytes: &[u8]) -> Answer {
        self.send(bytes);
        self.recv()
    }

    /// Build a valid request with a fresh id, send it, take the answer.
    fn ask_new(
        &mut self,
        opcode: Opcode,
        pid: u32,
        va: u64,
        total_len: u32,
        payload: &[u8],
    ) -> Answer {
        let b = self.req(opcode, pid, va, total_len, payload);
        self.ask(&b)
    }

    /// The board is alive: `INFO` answers, and `check` (a valid request
    /// of the test) succeeds. Also proves that nothing else was queued
    /// for this socket before it (UDP on loopback keeps order).
    fn alive(&mut self, pid: u32, va: u64, expect: &[u8]) {
        let info = self.req(Opcode::Info, pid, 0, 0, &[]);
        let id = Packet::new_unchecked(&info[..]).req_id();
        let a = self.ask(&info);
        assert_eq!(
            (a.h.opcode, a.h.status, a.h.req_id),
            (Opcode::InfoResp, Status::Ok, id),
            "the next answer is the probe's: {:?}",
            a.h
        );
        let read = self.req(Opcode::Read, pid, va, expect.len() as u32, &[]);
        let a = self.ask(&read);
        assert_eq!(
            (a.h.opcode, a.h.status),
            (Opcode::ReadResp, Status::Ok),
            "{:?}",
            a.h
        );
        assert_eq!(a.payload, expect, "a valid read after bad input");
    }
}

/// Rewrite the CRC after editing header bytes, so only the edit is wrong.
fn refill(mut b: Vec<u8>) -> Vec<u8> {
    Packet::new_unchecked(&mut b[..]).fill_crc();
    b
}

/// An edit of a request's bytes (before its CRC is recomputed).
type Edit = fn(&mut [u8]);

#[test]
fn every_bad_packet_gets_its_answer_and_the_board_keeps_serving() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let max_pid = board.cfg.va.max_pids;
    let mtu = board.cfg.network.mtu_payload as usize;
    // A session with known memory to read between the bad packets.
    let mut s = board.session();
    let creds = *s.session_info().unwrap();
    let pid = creds.pid;
    let a = s.ralloc(2 * page, perms::RW).unwrap();
    let known = pattern(300, 3);
    s.rwrite(a.va, &known).unwrap();
    // The raw client gets a session of its own in the same address space: it
    // picks its own request ids, which must never fall before the ack floor
    // that `s`'s acknowledgements raise (the board drops those as late
    // duplicates), and `s` starts from an unpredictable id.
    let raw_session = board.join(&s);
    let mut raw = Raw::new(board.addr(), *raw_session.session_info().unwrap());
    raw.alive(pid, a.va, &known);
    let before = board.stats().fast;

    // Corrupted CRC: NACK with the ids and the offset copied, nothing else.
    let mut b = raw.req(Opcode::Write, pid, a.va, 4, b"evil");
    let id = Packet::new_unchecked(&b[..]).req_id();
    b[HEADER_LEN] ^= 0x10;
    let r = raw.ask(&b);
    assert_eq!((r.h.opcode, r.h.status), (Opcode::Nack, Status::Corrupt));
    assert_eq!(
        (r.h.pid, r.h.req_id, r.h.va, r.h.total_len, r.h.offset),
        (pid, id, 0, 0, 0)
    );
    assert!(r.payload.is_empty());
    raw.alive(pid, a.va, &known);

    // Truncated: the header promises more payload than the datagram has.
    let b = raw.req(Opcode::Write, pid, a.va, 100, &[7u8; 100]);
    let r = raw.ask(&b[..HEADER_LEN + 50]);
    assert_eq!((r.h.opcode, r.h.status), (Opcode::Nack, Status::Corrupt));
    raw.alive(pid, a.va, &known);

    // A runt and a response opcode are dropped without an answer: the next
    // answer on this socket is the liveness probe's.
    raw.send(&[0x01, 0x03, 0, 0, 0, 0, 0, 5]);
    let mut stray = raw.req(Opcode::Read, pid, a.va, 8, &[]);
    stray[field::OPCODE] = Opcode::ReadResp.raw();
    raw.send(&refill(stray));
    raw.alive(pid, a.va, &known);

    // Header fields the parser refuses: Malformed, with the response opcode
    // of the request; an unknown opcode is UNSUPPORTED (not a NACK, which
    // would tell the client to retry).
    let cases: Vec<(&str, Edit, Status)> = vec![
        ("version 1", |b| b[field::VERSION] = 1, Status::Malformed),
        (
            "unknown opcode",
            |b| b[field::OPCODE] = 0x3f,
            Status::Unsupported,
        ),
        (
            "undefined flag",
            |b| b[field::FLAGS] = 0x80,
            Status::Malformed,
        ),
        (
            "unknown status",
            |b| b[field::STATUS] = 0xee,
            Status::Malformed,
        ),
    ];
    for (what, edit, status) in cases {
        let mut b = raw.req(Opcode::Read, pid, a.va, 8, &[]);
        let id = Packet::new_unchecked(&b[..]).req_id();
        edit(&mut b);
        let r = raw.ask(&refill(b));
        assert_eq!((r.h.status, r.h.req_id), (status, id), "{what}: {:?}", r.h);
        assert!(r.payload.is_empty(), "{what}: header only");
        raw.alive(pid, a.va, &known);
    }
    // Parsed but not acceptable in a request: Malformed, ids and VA echoed.
    let cases: Vec<(&str, Edit)> = vec![
        ("status not OK", |b| b[field::STATUS] = Status::Busy.raw()),
        ("response-only flag", |b| b[field::FLAGS] = flags::DUPLICATE),
    ];
    for (what, edit) in cases {
        let mut b = raw.req(Opcode::Read, pid, a.va, 8, &[]);
        let id = Packet::new_unchecked(&b[..]).req_id();
        edit(&mut b);
        let r = raw.ask(&refill(b));
        assert_eq!(
            (r.h.opcode, r.h.status, r.h.req_id, r.h.va),
            (Opcode::ReadResp, Status::Malformed, id, a.va),
            "{what}"
        );
        raw.alive(pid, a.va, &known);
    }

    // Another PID than the session's, valid or not: the session check
    // refuses it before anything else (header only).
    for bad in [0, pid + 1, max_pid + 1, u32::MAX] {
        let r = raw.ask_new(Opcode::Write, bad, a.va, 8, &[1; 8]);
        assert_eq!(
            (r.h.opcode, r.h.status, r.payload.len()),
            (Opcode::WriteResp, Status::BadSession, 0),
            "PID {bad}"
        );
        raw.alive(pid, a.va, &known);
    }
    // INFO answers without a session, when padded to its answer's size.
    let r = raw.ask_new(Opcode::Info, 0, 0, 0, &[]);
    assert_eq!((r.h.opcode, r.h.status), (Opcode::InfoResp, Status::Ok));
    let r = raw.ask_new(Opcode::Info, 0, 0, 0, &[0; 8]);
    assert_eq!(
        (r.h.status, r.payload.len()),
        (Status::Malformed, 0),
        "an unpadded INFO would amplify"
    );
    raw.alive(pid, a.va, &known);

    // Out-of-range VAs: beyond the 50-bit space, in the unused VA class,
    // unallocated, and a read running past the end of the range.
    let va_bits = board.cfg.va.bits;
    for (what, va, len) in [
        ("beyond va.bits", 1u64 << va_bits, 8u32),
        ("top bit set", 1u64 << 63, 8),
        ("unused VA class", 3u64 << (va_bits - 2), 8),
        ("unallocated", a.va + 64 * page, 8),
        ("past the range end", a.va + 2 * page - 8, 16),
    ] {
        let r = raw.ask_new(Opcode::Read, pid, va, len, &[]);
        assert_eq!(
            (r.h.opcode, r.h.status),
            (Opcode::ReadResp, Status::Unmapped),
            "{what}"
        );
        assert!(r.payload.is_empty(), "{what}: no data");
        raw.alive(pid, a.va, &known);
    }
    // A read above the board's response bound is refused before translation.
    let r = raw.ask_new(Opcode::Read, pid, a.va, u32::MAX, &[]);
    assert_eq!(
        (r.h.opcode, r.h.status),
        (Opcode::ReadResp, Status::TooLarge),
        "huge read past the end"
    );
    assert!(r.payload.is_empty(), "huge read: no data");
    raw.alive(pid, a.va, &known);

    // Oversize and inconsistent requests.
    let big = vec![0x5a; 9000];
    let mut cases: Vec<(&str, Vec<u8>, Status)> = vec![
        (
            "write payload one byte over the MTU",
            raw.req(Opcode::Write, pid, a.va, mtu as u32 + 1, &big[..mtu + 1]),
            Status::Malformed,
        ),
        (
            "write payload above the largest packet",
            raw.req(Opcode::Write, pid, a.va, 9000, &big),
            Status::Malformed,
        ),
        (
            "read carrying a payload",
            raw.req(Opcode::Read, pid, a.va, 8, &[1, 2, 3]),
            Status::Malformed,
        ),
        (
            "FAA with a short operand",
            raw.req(Opcode::FetchAndAdd, pid, a.va, 8, &[0, 0, 0, 1]),
            Status::Malformed,
        ),
        (
            "FAA on a misaligned word",
            raw.req(Opcode::FetchAndAdd, pid, a.va + 4, 8, &1u64.to_be_bytes()),
            Status::Malformed,
        ),
        (
            "TAS of 16 bytes",
            raw.req(Opcode::TestAndSet, pid, a.va, 16, &[]),
            Status::Malformed,
        ),
        (
            "ALLOC with a short payload",
            raw.req(Opcode::Alloc, pid, 0, 0, &[0, 1, 2]),
            Status::Malformed,
        ),
        (
            "FREE without a payload",
            raw.req(Opcode::Free, pid, a.va, 0, &[]),
            Status::Malformed,
        ),
        (
            "offload call shorter than its OffloadCallReq",
            raw.req(Opcode::OffloadCall, pid, 0, 0, &[0, 0, 0, 1]),
            Status::Malformed,
        ),
        (
            "offload call with reserved bits set",
            raw.req(Opcode::OffloadCall, pid, 0, 0, &[0, 0, 0, 1, 0, 1, 0, 1]),
            Status::Malformed,
        ),
        (
            "offload call of an unregistered offload id",
            raw.req(Opcode::OffloadCall, pid, 0, 0, &[0, 0xab, 0, 1, 0, 1, 0, 0]),
            Status::NoSuchOffload,
        ),
    ];
    // A write packet whose slice ends past the write's total length.
    let mut w = raw.req(Opcode::Write, pid, a.va, 8, &[9u8; 8]);
    Packet::new_unchecked(&mut w[..]).set_offset(4);
    cases.push(("write slice past total_len", refill(w), Status::Malformed));
    // A range that wraps the address space.
    cases.push((
        "va + total_len wraps",
        raw.req(Opcode::Read, pid, u64::MAX - 3, 8, &[]),
        Status::Malformed,
    ));
    for (what, b, status) in cases {
        let want = Opcode::parse(b[field::OPCODE]).unwrap().response().unwrap();
        let r = raw.ask(&b);
        assert_eq!((r.h.opcode, r.h.status), (want, status), "{what}");
        raw.alive(pid, a.va, &known);
    }
    // None of them wrote anything.
    let mut back = vec![0u8; 300];
    s.rread(a.va, &mut back).unwrap();
    assert_eq!(back, known);
    let mut next = [0xffu8; 16];
    s.rread(a.va + 300, &mut next).unwrap();
    assert_eq!(next, [0; 16]);

    let after = board.stats().fast;
    assert_eq!(after.nacks - before.nacks, 2, "{after:?}");
    assert_eq!(after.runts - before.runts, 1);
    assert_eq!(after.stray_responses - before.stray_responses, 1);
    assert!(after.malformed - before.malformed >= 16, "{after:?}");
    // A valid atomic still works, through the raw path and the SDK.
    let mut o = [0u8; AtomicArgs::FAA_LEN];
    AtomicArgs::FetchAndAdd { addend: 5 }.emit(&mut o).unwrap();
    let r = raw.ask_new(Opcode::FetchAndAdd, pid, a.va + page, 8, &o);
    assert_eq!(
        (r.h.opcode, r.h.status),
        (Opcode::FetchAndAddResp, Status::Ok)
    );
    assert_eq!(AtomicResp::parse(&r.payload).unwrap().old, 0);
    assert_eq!(s.faa(a.va + page, 1).unwrap(), 5);
    s.close().unwrap();
    board.stop().expect("the board thread never panicked");
}

#[test]
fn sdk_maps_bad_credentials_and_bad_va_to_errors() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let max_pid = board.cfg.va.max_pids;
    // A session whose credentials were tampered with (another PID, or
    // another key) is refused before anything runs.
    let mut t = board.session();
    let good = *t.session_info().unwrap();
    let session = good.session;
    for bad in [
        SessionInfo { pid: 0, ..good },
        SessionInfo {
            pid: max_pid + 1,
            ..good
        },
        SessionInfo {
            key: good.key ^ 1,
            ..good
        },
    ] {
        t.connection_mut().set_session(Some(bad));
        let mut b = [0u8; 8];
        assert_eq!(
            s_err(t.rread(4096, &mut b)),
            ClioError::BadSession {
                op: OpKind::Read,
                session
            }
        );
        assert_eq!(
            s_err(t.faa(4096, 1).map(drop)),
            ClioError::BadSession {
                op: OpKind::FetchAndAdd,
                session
            }
        );
        assert_eq!(
            t.ralloc(page, perms::RW).unwrap_err(),
            ClioError::BadSession {
                op: OpKind::Alloc,
                session
            }
        );
    }
    t.connection_mut().set_session(Some(good));
    t.ralloc(page, perms::RW).unwrap();
    let mut s = board.session();
    let a = s.ralloc(page, perms::RW).unwrap();
    let mut b = vec![0u8; 16];
    for va in [1u64 << board.cfg.va.bits, a.va + page - 8, a.va + 16 * page] {
        assert_eq!(
            s.rread(va, &mut b),
            Err(ClioError::Unmapped {
                op: OpKind::Read,
                va,
                len: 16
            }),
            "{va:#x}"
        );
    }
    assert_eq!(
        s.rwrite(a.va + page - 4, &[1u8; 8]),
        Err(ClioError::Unmapped {
            op: OpKind::Write,
            va: a.va + page - 4,
            len: 8
        })
    );
    // A read longer than its allocation (issue #19: 8 MiB from 4 MiB) starts
    // at an allocated address: the error names the whole range, not just
    // a VA that is in fact allocated.
    let four = s.ralloc(4 * page, perms::RW).unwrap();
    let mut long = vec![0u8; 8 * page as usize];
    let e = s.rread(four.va, &mut long).unwrap_err();
    assert_eq!(
        e,
        ClioError::Unmapped {
            op: OpKind::Read,
            va: four.va,
            len: 8 * page
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "read of {} bytes at {:#x}: [{:#x}, {:#x}) is not entirely inside an allocation",
            8 * page,
            four.va,
            four.va,
            four.va + 8 * page
        )),
        "{msg}"
    );
    s.rfree(four.va, four.size).unwrap();
    // An allocation larger than the board could ever hold is TOO_LARGE
    // (the slow path's `Oversize`), even one byte past the data region;
    // one that only exceeds what is left is out of memory (no overcommit).
    for size in [board.cfg.dram.size * 2, board.cfg.regions.data.size + 1] {
        assert_eq!(
            s.ralloc(size, perms::RW),
            Err(ClioError::TooLarge {
                op: OpKind::Alloc,
                va: 0
            }),
            "{size}"
        );
    }
    // Up to the address space's quota (`sessions.mem_quota_bytes`), then
    // OVER_QUOTA; the board's memory runs out (OUT_OF_MEMORY) only when
    // several address spaces together ask for more than it has.
    let quota = board.cfg.sessions.mem_quota_bytes / page;
    let all = s.ralloc((quota - 1) * page, perms::RW).unwrap();
    assert_eq!(
        s.ralloc(page, perms::RW),
        Err(ClioError::OverQuota {
            op: OpKind::Alloc,
            va: 0
        })
    );
    let data_pages = board.cfg.regions.data.size / page;
    let mut others = Vec::new();
    let oom = loop {
        let mut o = board.session();
        match o.ralloc(quota * page, perms::RW) {
            Ok(_) => others.push(o),
            Err(e) => break e,
        }
        assert!(
            others.len() as u64 <= data_pages / quota,
            "never out of memory"
        );
    };
    assert_eq!(oom, ClioError::OutOfMemory { op: OpKind::Alloc });
    drop(others);
    s.rfree(all.va, all.size).unwrap();
    s.ralloc(page, perms::RW).unwrap();
    // Frees that do not match a live range exactly.
    let two = s.ralloc(2 * page, perms::RW).unwrap();
    assert_eq!(
        s.rfree(two.va, page),
        Err(ClioError::Unmapped {
            op: OpKind::Free,
            va: two.va,
            len: page
        }),
        "half a range"
    );
    s.rfree(two.va, two.size).unwrap();
    assert_eq!(
        s.rfree(two.va, two.size),
        Err(ClioError::Unmapped {
            op: OpKind::Free,
            va: two.va,
            len: two.size
        }),
        "double free"
    );
    // Arguments the SDK refuses before sending.
    assert!(matches!(
        s.rread(a.va, &mut []),
        Err(ClioError::InvalidArgument { .. })
    ));
    assert!(matches!(
        s.rwrite(u64::MAX - 2, &[1u8; 8]),
        Err(ClioError::InvalidArgument { .. })
    ));
    // The session still works.
    s.rwrite(a.va, b"still here").unwrap();
    let mut back = [0u8; 10];
    s.rread(a.va, &mut back).unwrap();
    assert_eq!(&back, b"still here");
    board.stop().unwrap();
}

fn s_err(r: Result<(), ClioError>) -> ClioError {
    r.expect_err("refused")
}
