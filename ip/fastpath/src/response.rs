//! Response formation: which header fields a response carries.
//!
//! A response echoes the request's `pid`, `req_id`, `retry_of`, `va`,
//! `total_len` and `offset`; the opcode is the request's with the top bit set;
//! flags are zero except `DUPLICATE` (replayed from the dedup buffer) and
//! `MOVED` (alloc placed away from a fixed VA). The exceptions are listed in
//! the README: read chunks carry their own `offset`, `AllocResp` carries the
//! placed VA in `va`.

use clio_wire::clio::{flags, HEADER_LEN};
use clio_wire::{Header, Opcode, Packet, Status};

use crate::dedup::Recorded;
use crate::fastpath::dedup_key;
use crate::{Dram, FastPath};

/// Header fields of a response (the payload length is given at emission).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resp {
    pub(crate) opcode: Opcode,
    pub(crate) flags: u8,
    pub(crate) status: Status,
    pub(crate) pid: u32,
    pub(crate) req_id: u32,
    pub(crate) retry_of: u32,
    pub(crate) va: u64,
    pub(crate) total_len: u32,
    pub(crate) offset: u32,
    pub(crate) session: u16,
    pub(crate) epoch: u32,
}

impl Resp {
    /// The `Ok` response to a parsed request (opcode = its response opcode).
    pub(crate) fn of(h: &Header) -> Resp {
        Resp {
            opcode: h.opcode.response().unwrap_or(Opcode::Nack),
            flags: 0,
            status: Status::Ok,
            pid: h.pid,
            req_id: h.req_id,
            retry_of: h.retry_of,
            va: h.va,
            total_len: h.total_len,
            offset: h.offset,
            session: h.session,
            epoch: h.epoch,
        }
    }

    /// A response to a packet that failed its integrity check or did not
    /// parse: the ids, the packet's `offset` (which packet of a multi-packet
    /// request was refused), `session` and `epoch` are echoed; `va` and
    /// `total_len` are zero, so the answer itself always parses.
    pub(crate) fn raw(p: &Packet<&[u8]>, opcode: Opcode, status: Status) -> Resp {
        let h = Header::refusal(p, opcode, status);
        Resp {
            opcode,
            status,
            ..Resp::of(&h)
        }
    }

    /// A response replayed from the dedup buffer to request `h`.
    pub(crate) fn replayed(h: &Header, rec: &Recorded) -> Resp {
        Resp {
            opcode: h.opcode.response().unwrap_or(Opcode::Nack),
            flags: rec.flags | flags::DUPLICATE,
            status: Status::parse(rec.status).unwrap_or(Status::Ok),
            pid: h.pid,
            req_id: h.req_id,
            retry_of: h.retry_of,
            va: rec.va,
            total_len: rec.total_len,
            offset: rec.offset,
            session: h.session,
            epoch: h.epoch,
        }
    }

    /// Write the header into `pkt` (whose payload is already in place) and fill the CRC.
    pub(crate) fn emit(&self, pkt: &mut [u8]) {
        let h = Header {
            opcode: self.opcode,
            flags: self.flags,
            status: self.status,
            pid: self.pid,
            req_id: self.req_id,
            retry_of: self.retry_of,
            va: self.va,
            total_len: self.total_len,
            offset: self.offset,
            payload_len: (pkt.len() - HEADER_LEN) as u16,
            session: self.session,
            epoch: self.epoch,
            key: 0,
            ack: 0,
        };
        let mut p = Packet::new_unchecked(pkt);
        h.emit(&mut p);
        p.fill_crc();
    }
}

impl<D: Dram> FastPath<D> {
    /// The record of response `r` (payload of `plen` bytes in `buf`).
    pub(crate) fn recorded(&self, r: &Resp, plen: usize) -> Recorded {
        let mut rec = Recorded {
            flags: r.flags,
            status: r.status.raw(),
            va: r.va,
            total_len: r.total_len,
            offset: r.offset,
            payload_len: plen as u8,
            payload: [0; 16],
        };
        rec.payload[..plen].copy_from_slice(&self.buf[HEADER_LEN..HEADER_LEN + plen]);
        rec
    }

    /// Remember the response `r` (payload in `buf`) of a non-idempotent
    /// request that completed `Ok`, under its session and first-attempt id.
    /// The room was checked at intake.
    pub(crate) fn record(&mut self, h: &Header, r: &Resp, plen: usize) {
        if r.status != Status::Ok || !h.opcode.is_non_idempotent() {
            return;
        }
        let rec = self.recorded(r, plen);
        self.dedup.insert(dedup_key(h), rec);
    }
}
