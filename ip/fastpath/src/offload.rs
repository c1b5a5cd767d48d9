//! The offload port: where `OffloadCall` requests leave the fast path for
//! the board's offload engine, and where its answers come back.
//!
//! Without a port (the default, and the RTL built with `OFFLOAD_TAGS` = 0) an
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

/// Calls passed to the slow path remembered at once (an answer goes to its
/// call; the oldest is forgotten first, and its late answer dropped: the
/// client's retry is answered from the slow path's exactly-once record).
pub const OFFLOAD_TAGS: usize = 64;

/// What the offload pass-through to the slow path did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OffloadLinkStats {
    /// Calls passed to the slow path as `OFFLOAD_REQ` fragments.
    pub forwarded: u64,
    /// Calls answered from `OFFLOAD_REPLY` fragments.
    pub answered: u64,
    /// Calls answered `Busy` because the RX ring had no room for them.
    pub busy: u64,
    /// Answers dropped: for a forgotten call, a fragment missing, or a head
    /// that does not parse.
    pub dropped: u64,
}

/// The pass-through's state: the calls waiting, by tag, and the answer
/// being reassembled.
#[derive(Clone)]
pub(crate) struct OffloadLink {
    calls: Vec<Option<(u32, OffloadJob)>>,
    next_seq: u32,
    replies: clio_wire::ring::OffloadAssembler<{ clio_wire::ring::MAX_OFFLOAD_LEN }>,
    stats: OffloadLinkStats,
}

impl<D: Dram> FastPath<D> {
    /// Pass `OffloadCall`s to the slow path over the rings (`OFFLOAD_REQ`
    /// fragments: the checked request's header and payload) instead of
    /// answering `Unsupported`, and answer each from the `OFFLOAD_REPLY`
    /// fragments that come back, as [`FastPath::offload_reply`] answers the
    /// port's calls. An attached offload port takes precedence. The RTL
    /// does this when built with `OFFLOAD_TAGS` = 64 (`Unsupported` with
    /// the default 0); see rtl/README.md.
    pub fn forward_offloads_to_slow_path(&mut self) {
        if self.offload_link.is_none() {
            self.offload_link = Some(Box::new(OffloadLink {
                calls: vec![None; OFFLOAD_TAGS],
                next_seq: 0,
                replies: clio_wire::ring::OffloadAssembler::new(),
                stats: OffloadLinkStats::default(),
            }));
        }
    }

    /// Counters of the offload pass-through (zero when it is off).
    pub fn offload_link_stats(&self) -> OffloadLinkStats {
        self.offload_link
            .as_ref()
            .map(|l| l.stats)
            .unwrap_or_default()
    }

    /// A checked `OffloadCall` to the slow path, whole or not at all
    /// (`Busy` when the RX ring lacks room for all its fragments).
    pub(crate) fn forward_offload<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let mut pkt = vec![0u8; HEADER_LEN + payload.len()];
        if h.emit_with_payload(&mut pkt, payload).is_err() {
            return self.fail(src, h, Status::Malformed, out);
        }
        let count = u32::from(clio_wire::ring::offload_fragment_count(pkt.len()));
        let rx = &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        let room = self.rx.free_slots(rx) >= count;
        let Some(link) = self.offload_link.as_mut() else {
            return self.fail(src, h, Status::Unsupported, out);
        };
        if !room {
            link.stats.busy += 1;
            return self.fail(src, h, Status::Busy, out);
        }
        let seq = link.next_seq;
        link.next_seq = seq.wrapping_add(1);
        let tag = seq % OFFLOAD_TAGS as u32;
        let Some(frags) =
            clio_wire::ring::offload_fragments(tag, seq, &pkt, clio_wire::ring::Direction::Rx)
        else {
            return self.fail(src, h, Status::Malformed, out);
        };
        for f in frags {
            // Room was checked: a call is never half-pushed.
            let _ = self.rx.push(rx, &f);
        }
        link.calls[tag as usize] = Some((
            seq,
            OffloadJob {
                client: src,
                header: *h,
                payload: Vec::new(),
            },
        ));
        link.stats.forwarded += 1;
        self.stats.forwarded += 1;
        self.trace.forwarded = true;
    }

    /// One `OFFLOAD_REPLY` fragment; a completed answer goes to its call.
    pub(crate) fn offload_answer<F: FnMut(ClientId, &[u8])>(
        &mut self,
        d: &clio_wire::ring::Descriptor,
        out: &mut F,
    ) -> bool {
        let Some(link) = self.offload_link.as_mut() else {
            return false;
        };
        let dropped = link.replies.dropped();
        let done = link.replies.push(d);
        let mut answer = None;
        let mut ok = true;
        if let Some((tag, seq, bytes)) = done {
            let call = link.calls.get_mut(tag as usize).and_then(|c| match c {
                Some((s, _)) if *s == seq => c.take(),
                _ => None,
            });
            match (call, clio_wire::ring::OffloadReplyHead::split(bytes)) {
                (Some((_, job)), Ok((head, payload))) => {
                    answer = Some((job, head.status, payload.to_vec()));
                }
                _ => {
                    link.stats.dropped += 1;
                    ok = false;
                }
            }
        }
        link.stats.dropped += link.replies.dropped() - dropped;
        if let Some((job, status, payload)) = answer {
            link.stats.answered += 1;
            self.offload_reply(&job, status, &payload, out);
        }
        ok
    }
}
