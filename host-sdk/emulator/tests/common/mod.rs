//! Raw-packet clients of a board for the emulator tests: open a session
//! (wire v2) and put its credentials in every request.
#![allow(dead_code)]

pub mod offload;
pub mod qemu;

use clio_emu::Board;
use clio_wire::clio::flags;
use clio_wire::payload::{perms, AllocReq, InfoResp, OpenSessionReq, OpenSessionResp};
use clio_wire::{Header, Opcode, Packet, Status};

/// A session's credentials as the board handed them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creds {
    /// Session id.
    pub session: u16,
    /// Its address space.
    pub pid: u32,
    /// Its key.
    pub key: u64,
    /// The boot epoch it was opened in.
    pub epoch: u32,
}

impl Creds {
    /// A request of this session (no ack information).
    pub fn request(&self, op: Opcode, id: u32, va: u64, total: u32, payload: &[u8]) -> Vec<u8> {
        Header::request(op, self.pid, id, va, total)
            .with_session(self.session, self.epoch, self.key)
            .encode(payload)
            .unwrap()
    }

    /// An `ALLOC` of `size` read-write bytes, placed by the board.
    pub fn alloc(&self, id: u32, size: u64) -> Vec<u8> {
        self.alloc_at(id, 0, size, false)
    }

    /// An `ALLOC` of `size` read-write bytes at `va`: a hint, or the only
    /// place taken if `fixed` (`FIXED_VA`).
    pub fn alloc_at(&self, id: u32, va: u64, size: u64, fixed: bool) -> Vec<u8> {
        let mut a = [0u8; AllocReq::LEN];
        AllocReq {
            size,
            perms: perms::RW,
            page_shift: 0,
        }
        .emit(&mut a)
        .unwrap();
        Header {
            flags: if fixed { flags::FIXED_VA } else { 0 },
            ..Header::request(Opcode::Alloc, self.pid, id, va, 0).with_session(
                self.session,
                self.epoch,
                self.key,
            )
        }
        .encode(&a)
        .unwrap()
    }
}

/// An `OpenSession` request: a new address space (`join = None`) or a join
/// of `(session, key, pid)`.
pub fn open_packet(id: u32, join: Option<(u16, u64, u32)>) -> Vec<u8> {
    let (join_session, join_key, pid) = join.unwrap_or((0, 0, 0));
    let mut p = [0u8; OpenSessionReq::LEN];
    OpenSessionReq {
        join_session,
        join_key,
    }
    .emit(&mut p)
    .unwrap();
    Header::request(Opcode::OpenSession, pid, id, 0, 0)
        .encode(&p)
        .unwrap()
}

/// An `Info` request (padded to the answer's length, as v2 requires).
pub fn info_packet(id: u32) -> Vec<u8> {
    Header::request(Opcode::Info, 0, id, 0, 0)
        .encode(&[0u8; InfoResp::LEN])
        .unwrap()
}

/// Header and payload of a response packet (CRC checked).
pub fn parse(pkt: &[u8]) -> (Header, Vec<u8>) {
    let p = Packet::new_checked(pkt).unwrap();
    (Header::parse_verified(&p).unwrap(), p.payload().to_vec())
}

/// Credentials from an `OpenSessionResp` packet (must be OK).
pub fn creds_of(pkt: &[u8]) -> Creds {
    let (h, p) = parse(pkt);
    creds_from(&h, &p)
}

/// Credentials from a parsed `OpenSessionResp` (must be OK).
pub fn creds_from(h: &Header, p: &[u8]) -> Creds {
    assert_eq!(
        (h.opcode, h.status),
        (Opcode::OpenSessionResp, Status::Ok),
        "{h:?}"
    );
    let r = OpenSessionResp::parse(p).unwrap();
    assert_eq!(r.epoch, h.epoch);
    Creds {
        session: r.session,
        pid: r.pid,
        key: r.key,
        epoch: r.epoch,
    }
}

/// Send one packet from client `from`; exactly one answer must come back.
pub fn one(board: &mut Board, from: u64, pkt: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    board.handle(from, pkt, &mut |to, p| {
        assert_eq!(to, from);
        got.push(p.to_vec());
    });
    assert_eq!(got.len(), 1, "one response per request");
    got.pop().unwrap()
}

/// Open a session on a new address space of `board`.
pub fn open(board: &mut Board, from: u64, id: u32) -> Creds {
    creds_of(&one(board, from, &open_packet(id, None)))
}
