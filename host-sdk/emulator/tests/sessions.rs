//! Sessions on the emulated board (issue #14): every boot has a fresh
//! random epoch, a session works only with its key, closing it frees its
//! address space, and a restarted board (in process, and over UDP on the
//! same port) answers an old session's request with RESTARTED and the new
//! epoch, never with data.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_fastpath::ModelOptions;
use clio_wire::payload::InfoResp;
use clio_wire::{Opcode, Status};
use common::{creds_of, info_packet, one, open_packet, parse, Creds};

fn emulator() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

fn info_epoch(board: &mut Board) -> u32 {
    let (h, p) = parse(&one(board, 3, &info_packet(77)));
    assert_eq!(h.status, Status::Ok);
    let info = InfoResp::parse(&p).unwrap();
    assert_eq!(info.epoch, h.epoch);
    info.epoch
}

#[test]
fn every_boot_has_a_fresh_epoch_from_os_randomness() {
    let cfg = emulator();
    let epochs: Vec<u32> = (0..4)
        .map(|_| {
            let mut b = Board::new(&cfg).unwrap();
            let e = info_epoch(&mut b);
            assert_eq!(e, b.epoch());
            assert_ne!(e, 0);
            e
        })
        .collect();
    for (i, a) in epochs.iter().enumerate() {
        for b in &epochs[i + 1..] {
            // 32 random bits: equal by chance once in 2^32.
            assert_ne!(a, b, "two boots with the same epoch: {epochs:?}");
        }
    }
    // A given seed boots reproducibly (for tests), another seed differently.
    let opts = ModelOptions::default();
    let a = Board::with_seed(&cfg, opts, 7).unwrap().epoch();
    assert_eq!(Board::with_seed(&cfg, opts, 7).unwrap().epoch(), a);
    assert_ne!(Board::with_seed(&cfg, opts, 8).unwrap().epoch(), a);
}

#[test]
fn a_session_needs_its_key_and_its_close_frees_the_address_space() {
    let cfg = emulator();
    let mut board = Board::new(&cfg).unwrap();
    let me = common::open(&mut board, 1, 1);
    assert_eq!((me.session, me.pid, me.epoch), (1, 1, board.epoch()));
    assert_eq!(board.slow().session(1).map(|s| s.key), Some(me.key));
    let (h, _) = parse(&one(&mut board, 1, &me.alloc(2, 10_000)));
    assert_eq!((h.opcode, h.status), (Opcode::AllocResp, Status::Ok));
    let va = h.va;
    let (h, _) = parse(&one(
        &mut board,
        1,
        &me.request(Opcode::Write, 3, va, 4, b"abcd"),
    ));
    assert_eq!(h.status, Status::Ok);

    // A guessed key, another PID, or a session that is not open: one
    // header-only BAD_SESSION, no longer than the request, and nothing
    // changes.
    for forged in [
        Creds {
            key: me.key ^ 1,
            ..me
        },
        Creds { pid: 2, ..me },
        Creds { session: 2, ..me },
    ] {
        let req = forged.request(Opcode::Read, 4, va, 4, &[]);
        let resp = one(&mut board, 6, &req);
        assert!(resp.len() <= req.len());
        let (h, p) = parse(&resp);
        assert_eq!((h.status, p.len(), h.key), (Status::BadSession, 0, 0));
    }

    // A second process joins with the key; a wrong key cannot.
    let bad = one(
        &mut board,
        2,
        &open_packet(5, Some((me.session, me.key ^ 9, me.pid))),
    );
    assert_eq!(parse(&bad).0.status, Status::BadSession);
    let friend = creds_of(&one(
        &mut board,
        2,
        &open_packet(6, Some((me.session, me.key, me.pid))),
    ));
    assert_eq!(friend.pid, me.pid);
    assert_ne!(friend.key, me.key);
    let (h, data) = parse(&one(
        &mut board,
        2,
        &friend.request(Opcode::Read, 7, va, 4, &[]),
    ));
    assert_eq!((h.status, &data[..]), (Status::Ok, &b"abcd"[..]));

    // Closing one session keeps the memory; closing the last frees it and
    // the PID.
    let (h, _) = parse(&one(
        &mut board,
        1,
        &me.request(Opcode::CloseSession, 8, 0, 0, &[]),
    ));
    assert_eq!((h.opcode, h.status), (Opcode::CloseSessionResp, Status::Ok));
    assert_eq!(board.slow().ranges().len(), 1);
    let (h, _) = parse(&one(
        &mut board,
        2,
        &friend.request(Opcode::CloseSession, 9, 0, 0, &[]),
    ));
    assert_eq!(h.status, Status::Ok);
    assert!(board.slow().ranges().is_empty());
    assert!(!board.slow().pid_assigned(me.pid));
    // A closed session is refused (and closing it again is BAD_SESSION).
    let (h, _) = parse(&one(
        &mut board,
        1,
        &me.request(Opcode::Read, 10, va, 4, &[]),
    ));
    assert_eq!(h.status, Status::BadSession);
    let (h, _) = parse(&one(
        &mut board,
        1,
        &me.request(Opcode::CloseSession, 11, 0, 0, &[]),
    ));
    assert_eq!(h.status, Status::BadSession);
    // The next address space gets the PID back, with a new key.
    let next = common::open(&mut board, 3, 12);
    assert_eq!(next.pid, me.pid);
    assert_ne!(next.key, me.key);
}

#[test]
fn an_expired_session_is_refused_and_its_memory_freed() {
    let cfg = emulator();
    let mut board = Board::new(&cfg).unwrap();
    let me = common::open(&mut board, 1, 1);
    let (h, _) = parse(&one(&mut board, 1, &me.alloc(2, 4096)));
    assert_eq!(h.status, Status::Ok);
    assert_eq!(
        board.expire_session(me.session + 1),
        Err(clio_slowpath::SlowPathError::BadSession)
    );
    board.expire_session(me.session).unwrap();
    // The fast path applied the slow path's tag-0 close: the entry is gone.
    let (h, _) = parse(&one(
        &mut board,
        1,
        &me.request(Opcode::Read, 3, h.va, 8, &[]),
    ));
    assert_eq!(h.status, Status::BadSession);
    assert!(board.slow().ranges().is_empty());
    assert_eq!(board.slow().open_sessions(), 0);
}

#[test]
fn an_alloc_beyond_the_memory_quota_is_over_quota() {
    let cfg = emulator();
    let quota = cfg.sessions.mem_quota_bytes;
    let mut board = Board::new(&cfg).unwrap();
    let me = common::open(&mut board, 1, 1);
    let (h, _) = parse(&one(&mut board, 1, &me.alloc(2, quota)));
    assert_eq!(h.status, Status::Ok);
    let (h, _) = parse(&one(&mut board, 1, &me.alloc(3, 1)));
    assert_eq!((h.opcode, h.status), (Opcode::AllocResp, Status::OverQuota));
    // Another tenant still gets memory.
    let other = common::open(&mut board, 2, 4);
    let (h, _) = parse(&one(&mut board, 2, &other.alloc(5, 1)));
    assert_eq!(h.status, Status::Ok);
}

#[test]
fn a_rebooted_board_answers_an_old_session_restarted() {
    let cfg = emulator();
    let mut first = Board::new(&cfg).unwrap();
    let me = common::open(&mut first, 1, 1);
    let (h, _) = parse(&one(&mut first, 1, &me.alloc(2, 4096)));
    let va = h.va;
    // The board restarts: a new boot of the same config.
    let mut second = Board::new(&cfg).unwrap();
    assert_ne!(second.epoch(), me.epoch);
    // The same request (same PID, whose new owner may have memory at the
    // same VA) is refused with the new epoch, never served.
    let other = common::open(&mut second, 2, 1);
    assert_eq!(other.pid, me.pid, "the PID is reused after a restart");
    let (h, _) = parse(&one(&mut second, 2, &other.alloc(2, 4096)));
    assert_eq!((h.status, h.va), (Status::Ok, va), "and so is the VA");
    for op in [
        Opcode::Read,
        Opcode::Write,
        Opcode::FetchAndAdd,
        Opcode::CloseSession,
    ] {
        let payload: &[u8] = match op {
            Opcode::Write => b"zzzz",
            Opcode::FetchAndAdd => &[0; 8],
            _ => &[],
        };
        let total = match op {
            Opcode::Read | Opcode::Write => 4,
            Opcode::FetchAndAdd => 8,
            _ => 0,
        };
        let (h, p) = parse(&one(&mut second, 1, &me.request(op, 3, va, total, payload)));
        assert_eq!(
            (h.status, h.epoch, p.len()),
            (Status::Restarted, second.epoch(), 0),
            "{op:?}"
        );
    }
    assert_eq!(second.slow().open_sessions(), 1);
}

/// `clio sim` restarted on the same port: the old session's next request
/// gets RESTARTED and the new boot's epoch over real UDP.
#[test]
fn a_board_restarted_on_the_same_udp_port_answers_restarted() {
    let cfg = emulator();
    let server = clio_emu::spawn(
        Board::new(&cfg).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::default(),
    )
    .unwrap();
    let addr = server.addr();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let call = |pkt: &[u8]| -> Vec<u8> {
        sock.send_to(pkt, addr).unwrap();
        let mut buf = vec![0u8; 9000];
        let (n, _) = sock.recv_from(&mut buf).unwrap();
        buf.truncate(n);
        buf
    };
    let (h, _) = parse(&call(&info_packet(1)));
    let old_epoch = h.epoch;
    let me = creds_of(&call(&open_packet(2, None)));
    assert_eq!(me.epoch, old_epoch);
    let (h, _) = parse(&call(&me.alloc(3, 4096)));
    assert_eq!(h.status, Status::Ok);
    let va = h.va;
    let (h, _) = parse(&call(&me.request(Opcode::Write, 4, va, 4, b"live")));
    assert_eq!(h.status, Status::Ok);
    server.stop().unwrap();

    // Restart on the same address.
    let server = clio_emu::spawn(Board::new(&cfg).unwrap(), addr, ServeOptions::default()).unwrap();
    assert_eq!(server.addr(), addr);
    let (h, p) = parse(&call(&me.request(Opcode::Read, 5, va, 4, &[])));
    assert_eq!((h.status, p.len()), (Status::Restarted, 0));
    assert_ne!(h.epoch, old_epoch);
    let (h, p) = parse(&call(&info_packet(6)));
    assert_eq!(InfoResp::parse(&p).unwrap().epoch, h.epoch);
    let new_epoch = h.epoch;
    assert_ne!(new_epoch, old_epoch);
    // A new session works in the new boot, and the old data is gone.
    let again = creds_of(&call(&open_packet(7, None)));
    assert_eq!(again.epoch, new_epoch);
    let (h, _) = parse(&call(&again.alloc(8, 4096)));
    let (h, data) = parse(&call(&again.request(Opcode::Read, 9, h.va, 4, &[])));
    assert_eq!((h.status, &data[..]), (Status::Ok, &[0u8; 4][..]));
    server.stop().unwrap();
}
