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
