//! The in-process board answers raw Clio packets: a session opened through
//! the slow path, alloc through the slow path, first-touch write through
//! the fast path's fault unit, read back.

mod common;

use clio_config::BoardConfig;
use clio_emu::Board;
use clio_wire::payload::{perms, AllocReq, AllocResp};
use clio_wire::{Opcode, Status};
use common::{parse, Creds};

fn one(board: &mut Board, pkt: &[u8]) -> (clio_wire::Header, Vec<u8>) {
    parse(&common::one(board, 9, pkt))
}

#[test]
fn alloc_write_read() {
    let cfg = BoardConfig::embedded("emulator").unwrap();
    let mut board = Board::new(&cfg).unwrap();
    let me = common::open(&mut board, 9, 100);
    let mut a = [0u8; AllocReq::LEN];
    AllocReq {
        size: 10_000,
        perms: perms::RW,
        page_shift: 0,
    }
    .emit(&mut a)
    .unwrap();
    let (h, p) = one(&mut board, &me.request(Opcode::Alloc, 1, 0, 0, &a));
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::AllocResp, Status::Ok),
        "{h:?}"
    );
    let r = AllocResp::parse(&p).unwrap();
    assert!(r.size >= 10_000);
    let va = h.va;
    let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let (h, _) = one(
        &mut board,
        &me.request(Opcode::Write, 2, va + 100, 1000, &data),
    );
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::WriteResp, Status::Ok),
        "{h:?}"
    );
    let (h, p) = one(
        &mut board,
        &me.request(Opcode::Read, 3, va + 100, 1000, &[]),
    );
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::ReadResp, Status::Ok),
        "{h:?}"
    );
    assert_eq!(p, data);
    // Another address space cannot see it: its own session gets no mapping...
    let other = common::open(&mut board, 9, 101);
    assert_ne!(other.pid, me.pid);
    let (h, _) = one(
        &mut board,
        &other.request(Opcode::Read, 4, va + 100, 8, &[]),
    );
    assert_eq!(h.status, Status::Unmapped);
    // ...and naming this PID without its key is refused before anything runs.
    let forged = Creds {
        pid: me.pid,
        ..other
    };
    let (h, p) = one(
        &mut board,
        &forged.request(Opcode::Read, 5, va + 100, 8, &[]),
    );
    assert_eq!((h.status, p.len()), (Status::BadSession, 0));
}

/// The read that held the board for seconds (issue #23): one READ of 8 MiB.
/// The board answers it with one header (`TOO_LARGE`, nothing read), so the
/// next client's request is served right after; a read of exactly the bound
/// that INFO states is served in full.
#[test]
fn a_read_above_the_response_bound_is_one_header_and_the_next_client_goes_next() {
    let cfg = BoardConfig::embedded("emulator").unwrap();
    let mut board = Board::new(&cfg).unwrap();
    let (h, p) = one(&mut board, &common::info_packet(1));
    let bound = clio_wire::payload::InfoResp::parse(&p)
        .unwrap()
        .max_resp_bytes()
        .unwrap();
    assert_eq!(
        (h.status, bound),
        (Status::Ok, cfg.network.max_response_bytes)
    );
    let me = common::open(&mut board, 9, 100);
    let mut a = [0u8; AllocReq::LEN];
    AllocReq {
        size: 8 << 20,
        perms: perms::RW,
        page_shift: 0,
    }
    .emit(&mut a)
    .unwrap();
    let (h, _) = one(&mut board, &me.request(Opcode::Alloc, 1, 0, 0, &a));
    assert_eq!(h.status, Status::Ok, "{h:?}");
    let va = h.va;
    let (h, p) = one(&mut board, &me.request(Opcode::Read, 2, va, 8 << 20, &[]));
    assert_eq!(
        (h.opcode, h.status, h.offset, p.len()),
        (Opcode::ReadResp, Status::TooLarge, 0, 0)
    );
    // Another client, right behind it, is answered at once.
    let other = common::open(&mut board, 10, 200);
    assert_ne!(other.pid, me.pid);
    let mut got = 0usize;
    board.handle(
        9,
        &me.request(Opcode::Read, 3, va, bound, &[]),
        &mut |_, p| {
            let (h, d) = parse(p);
            assert_eq!(h.status, Status::Ok);
            got += d.len();
        },
    );
    assert_eq!(got, bound as usize);
    assert_eq!(board.stats().fast.too_large, 1);
}
