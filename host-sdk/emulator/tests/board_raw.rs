//! The in-process board answers raw Clio packets: alloc through the slow
//! path, first-touch write through the fast path's fault unit, read back.

use clio_config::BoardConfig;
use clio_emu::Board;
use clio_wire::payload::{perms, AllocReq, AllocResp};
use clio_wire::{Header, Opcode, Packet, Status};

fn req(op: Opcode, pid: u32, id: u32, va: u64, total: u32, payload: &[u8]) -> Vec<u8> {
    Header::request(op, pid, id, va, total)
        .encode(payload)
        .unwrap()
}

fn one(board: &mut Board, pkt: &[u8]) -> (Header, Vec<u8>) {
    let mut got = Vec::new();
    board.handle(9, pkt, &mut |to, p| {
        assert_eq!(to, 9);
        got.push(p.to_vec());
    });
    assert_eq!(got.len(), 1, "one response per request");
    let p = Packet::new_checked(&got[0][..]).unwrap();
    (Header::parse_verified(&p).unwrap(), p.payload().to_vec())
}

#[test]
fn alloc_write_read() {
    let cfg = BoardConfig::embedded("emulator").unwrap();
    let mut board = Board::new(&cfg).unwrap();
    let mut a = [0u8; AllocReq::LEN];
    AllocReq {
        size: 10_000,
        perms: perms::RW,
        page_shift: 0,
    }
    .emit(&mut a)
    .unwrap();
    let (h, p) = one(&mut board, &req(Opcode::Alloc, 5, 1, 0, 0, &a));
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::AllocResp, Status::Ok),
        "{h:?}"
    );
    let r = AllocResp::parse(&p).unwrap();
    assert!(r.size >= 10_000);
    let va = h.va;
    let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let (h, _) = one(&mut board, &req(Opcode::Write, 5, 2, va + 100, 1000, &data));
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::WriteResp, Status::Ok),
        "{h:?}"
    );
    let (h, p) = one(&mut board, &req(Opcode::Read, 5, 3, va + 100, 1000, &[]));
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::ReadResp, Status::Ok),
        "{h:?}"
    );
    assert_eq!(p, data);
    // Another process cannot see it.
    let (h, _) = one(&mut board, &req(Opcode::Read, 6, 4, va + 100, 8, &[]));
    assert_ne!(h.status, Status::Ok);
}
