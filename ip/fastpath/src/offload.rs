//! The offload port: where `OffloadCall` requests leave the fast path for
//! the board's offload engine, and where its answers come back.
//!
//! Without a port (the default, and what the RTL implements today) an
//! `OffloadCall` is answered `Unsupported`. With one
//! ([`FastPath::attach_offload_port`]) the fast path checks the request as
//! it checks every other (CRC, header, session credentials, epoch, PID,
//! fences) and queues it for the engine instead of answering; the engine
//! answers through [`FastPath::offload_reply`]. Exactly-once for offload
//! calls is the engine's: their answers outgrow the 16-byte dedup records,
//! so they take none here.

use std::collections::VecDeque;

use clio_wire::clio::HEADER_LEN;
use clio_wire::{Header, Opcode, Status};

use crate::fastpath::ClientId;
use crate::response::Resp;
use crate::{Dram, FastPath};

/// Calls the port holds before the fast path answers `Busy`.
pub const OFFLOAD_QUEUE: usize = 256;

/// One `OffloadCall` waiting for the offload engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadJob {
    /// Who sent it (the answer goes back there).
    pub client: ClientId,
    /// Its checked header.
    pub header: Header,
    /// Its payload (`OffloadCallReq` + arguments, unchecked).
    pub payload: Vec<u8>,
}

impl<D: Dram> FastPath<D> {
    /// Give this fast path an offload port: from now on `OffloadCall`
    /// requests queue for [`FastPath::take_offload`] instead of being
    /// answered `Unsupported`.
    pub fn attach_offload_port(&mut self) {
        if self.offloads.is_none() {
            self.offloads = Some(VecDeque::with_capacity(OFFLOAD_QUEUE));
        }
    }

    /// Whether an offload port is attached.
    pub fn has_offload_port(&self) -> bool {
        self.offloads.is_some()
    }

    /// The oldest call waiting for the offload engine.
    pub fn take_offload(&mut self) -> Option<OffloadJob> {
        self.offloads.as_mut()?.pop_front()
    }

    /// Queue a checked `OffloadCall` (or answer `Unsupported` without a
    /// port, `Busy` with a full one).
    pub(crate) fn offload<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let Some(q) = self.offloads.as_mut() else {
            return self.fail(src, h, Status::Unsupported, out);
        };
        if q.len() >= OFFLOAD_QUEUE {
            return self.fail(src, h, Status::Busy, out);
        }
        q.push_back(OffloadJob {
            client: src,
            header: *h,
            payload: payload.to_vec(),
        });
        self.trace.forwarded = true;
    }

    /// Answer `job` with `status` and `payload`. A payload over one MTU
    /// (a batch's answer) leaves in packets of one MTU, as a READ answer
    /// does: each with `total_len` = the whole payload's length and
    /// `offset` = where its bytes go. A payload over the board's response
    /// bound is an engine bug: it is answered `Malformed`, never sent
    /// truncated.
    pub fn offload_reply<F: FnMut(ClientId, &[u8])>(
        &mut self,
        job: &OffloadJob,
        status: Status,
        payload: &[u8],
        out: &mut F,
    ) {
        let h = &job.header;
        let mtu = self.lay.mtu;
        let bound = (self.lay.max_resp as usize).max(mtu);
        if h.opcode != Opcode::OffloadCall || payload.len() > bound {
            return self.fail(job.client, h, Status::Malformed, out);
        }
        let mut r = Resp::of(h);
        r.status = status;
        if payload.len() <= mtu {
            self.buf[HEADER_LEN..HEADER_LEN + payload.len()].copy_from_slice(payload);
            return self.send(job.client, &r, payload.len(), out);
        }
        r.total_len = payload.len() as u32;
        for (k, chunk) in payload.chunks(mtu).enumerate() {
            r.offset = (k * mtu) as u32;
            self.buf[HEADER_LEN..HEADER_LEN + chunk.len()].copy_from_slice(chunk);
            self.send(job.client, &r, chunk.len(), out);
        }
    }
}
