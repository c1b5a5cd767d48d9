//! Packet-granularity interleaving of long READ answers (issue #23), opt-in
//! with [`FastPath::set_interleave_reads`].
//!
//! Off (the default, what the RTL does and the co-simulation checks), a READ
//! is answered whole inside [`FastPath::receive`]: all ⌈total_len/MTU⌉
//! packets, read from DRAM at intake. On, `receive` sends the first packet
//! and keeps the rest as a *read stream*: the request's header, PID, VA and
//! the bytes sent so far. [`FastPath::pump`] then emits streams' packets one
//! at a time, round-robin by client (each client's streams in arrival
//! order), so a request of another client that arrives between two pumps is
//! executed, and its answer sent, between two packets of the stream.
//!
//! Each pumped packet is translated again (TLB, bucket read on a miss, READ
//! permission) and read from DRAM when it is emitted, so a packet carries the
//! memory as it is then:
//! * a write that is executed while a stream is open (from any client) may
//!   show in its later packets. The SDK never issues such a write in the
//!   same thread (a synchronous read has completed before the next call; an
//!   asynchronous write waits for the page's readers, WAR), and Clio orders
//!   nothing across threads except through its synchronisation primitives:
//!   a reader that holds a lock has all of its answer before it unlocks;
//! * a `FENCE` of a PID first emits every open stream of that PID whole,
//!   so the fence still separates the reads before it from the requests
//!   after it;
//! * a page freed (or re-permissioned) while a stream is open is never read
//!   for it: its packet is replaced by a header-only answer with the status
//!   the translation gives (`UNMAPPED`, `PERMISSION`; `offset` 0) and the
//!   stream ends, so another PID's later data never leaves in it. The
//!   client's read then fails with that status, as if it had come later.

use std::collections::VecDeque;

use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::perms;
use clio_wire::Header;

use crate::cycles::Trace;
use crate::fastpath::ClientId;
use crate::response::Resp;
use crate::{Dram, FastPath};

/// The rest of one READ's answer.
#[derive(Debug, Clone)]
pub(crate) struct ReadStream {
    /// The answer's header fields (`offset` set per packet).
    resp: Resp,
    pid: u32,
    va: u64,
    total: u32,
    /// Bytes of data already sent (a multiple of the MTU).
    sent: u32,
}

impl ReadStream {
    /// Datagram bytes still to send: the data plus a header per packet.
    fn owed(&self, mtu: u32) -> u64 {
        let left = self.total - self.sent;
        u64::from(left) + u64::from(left.div_ceil(mtu)) * HEADER_LEN as u64
    }
}

/// Open read streams, one FIFO per client, served round-robin by client.
#[derive(Debug, Default, Clone)]
pub(crate) struct Streams {
    pub(crate) on: bool,
    queues: VecDeque<(ClientId, VecDeque<ReadStream>)>,
    /// Sum of [`ReadStream::owed`].
    owed: u64,
}

impl<D: Dram> FastPath<D> {
    /// Interleave long READ answers with other requests at packet
    /// granularity (see the module docs of `interleave.rs` and the README):
    /// `receive` sends a READ's first packet and [`FastPath::pump`] the
    /// rest. Off by default; turning it off leaves open streams to `pump`.
    pub fn set_interleave_reads(&mut self, on: bool) {
        self.streams.on = on;
    }

    /// Whether READ answers are interleaved ([`FastPath::set_interleave_reads`]).
    pub fn interleaves_reads(&self) -> bool {
        self.streams.on
    }

    /// Datagram bytes (data and headers) of open read streams not yet sent.
    pub fn owed_bytes(&self) -> u64 {
        self.streams.owed
    }

    /// Emit up to `max` packets of open read streams, one at a time
    /// round-robin by client (each client's streams in arrival order);
    /// returns how many were emitted. Their costs count in
    /// [`FastPath::stats`]; [`FastPath::last_trace`] stays that of the last
    /// `receive`.
    pub fn pump<F: FnMut(ClientId, &[u8])>(&mut self, max: usize, out: &mut F) -> usize {
        let mut n = 0;
        let last = core::mem::take(&mut self.trace);
        while n < max {
            let Some((client, mut q)) = self.streams.queues.pop_front() else {
                break;
            };
            if let Some(mut s) = q.pop_front() {
                n += 1;
                if self.stream_packet(client, &mut s, out) {
                    q.push_front(s);
                }
            }
            if !q.is_empty() {
                self.streams.queues.push_back((client, q));
            }
        }
        self.account_pump();
        self.trace = last;
        n
    }

    /// Open a stream for the rest of READ `h` (its first `sent` bytes went
    /// out in `receive`).
    pub(crate) fn open_stream(&mut self, src: ClientId, h: &Header, sent: u32) {
        let s = ReadStream {
            resp: Resp::of(h),
            pid: h.pid,
            va: h.va,
            total: h.total_len,
            sent,
        };
        self.streams.owed += s.owed(self.lay.mtu as u32);
        self.stats.read_streams += 1;
        match self.streams.queues.iter_mut().find(|(c, _)| *c == src) {
            Some((_, q)) => q.push_back(s),
            None => self.streams.queues.push_back((src, VecDeque::from([s]))),
        }
    }

    /// Emit every open stream of `pid` whole (a `FENCE` of the PID orders
    /// them before itself).
    pub(crate) fn flush_streams_of<F: FnMut(ClientId, &[u8])>(&mut self, pid: u32, out: &mut F) {
        if self.streams.queues.is_empty() {
            return;
        }
        let queues = core::mem::take(&mut self.streams.queues);
        let mut keep = VecDeque::with_capacity(queues.len());
        for (client, q) in queues {
            let mut rest = VecDeque::with_capacity(q.len());
            for mut s in q {
                if s.pid != pid {
                    rest.push_back(s);
                    continue;
                }
                while self.stream_packet(client, &mut s, out) {}
            }
            if !rest.is_empty() {
                keep.push_back((client, rest));
            }
        }
        self.streams.queues = keep;
    }

    /// Send the next packet of `s`; true if the stream has more.
    fn stream_packet<F: FnMut(ClientId, &[u8])>(
        &mut self,
        client: ClientId,
        s: &mut ReadStream,
        out: &mut F,
    ) -> bool {
        let mtu = self.lay.mtu as u32;
        self.streams.owed -= s.owed(mtu);
        let n = (s.total - s.sent).min(mtu);
        let va = s.va + u64::from(s.sent);
        if let Err(status) = self.translate_range(s.pid, va, u64::from(n), perms::READ) {
            // The page went away (or lost READ) since intake: nothing more
            // is read for this stream; the client learns why.
            self.stats.read_streams_cut += 1;
            let mut r = s.resp;
            r.status = status;
            r.offset = 0;
            self.send(client, &r, 0, out);
            return false;
        }
        for i in 0..self.segs.len() {
            let len = self.segs[i].len as u64;
            self.dram_read_cost(len);
        }
        let mut filled = 0;
        for i in 0..self.segs.len() {
            let seg = self.segs[i];
            self.buf[HEADER_LEN + filled..HEADER_LEN + filled + seg.len]
                .copy_from_slice(&self.dram.bytes()[seg.off..seg.off + seg.len]);
            filled += seg.len;
        }
        let mut r = s.resp;
        r.offset = s.sent;
        self.send(client, &r, n as usize, out);
        s.sent += n;
        if s.sent < s.total {
            self.streams.owed += s.owed(mtu);
            true
        } else {
            false
        }
    }

    /// Add the costs of pumped packets (in `self.trace`) to the counters.
    fn account_pump(&mut self) {
        let t: Trace = self.trace;
        self.stats.cycles += t.cycles;
        self.stats.dram_accesses += u64::from(t.dram_accesses);
        self.stats.tlb_hits += u64::from(t.tlb_hits);
        self.stats.tlb_misses += u64::from(t.tlb_misses);
        self.stats.faults += u64::from(t.faults);
    }
}
