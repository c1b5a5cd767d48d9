//! The slow-path side: forwarding alloc/free over the RX ring, executing TX
//! commands, fences that wait for forwarded requests, error reports.

use clio_wire::clio::{flags, HEADER_LEN};
use clio_wire::payload::{AllocReq, AllocResp, FreeReq, OpenSessionReq, OpenSessionResp};
use clio_wire::pte::{pte_flags, Pte, PteView, PTE_LEN};
use clio_wire::ring::{Descriptor, PushError};
use clio_wire::{Header, Opcode, Status};

use crate::cycles::Trace;
use crate::dedup::DedupKey;
use crate::fastpath::dedup_key;
use crate::response::Resp;
use crate::session::Session;
use crate::{ClientId, Dram, FastPath};

/// A request forwarded to the slow path, waiting for its `Reply`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pending {
    pub(crate) live: bool,
    /// Generation of the slot, the high half of the tag (never 0, so no tag
    /// is 0: a `SessionReply` with tag 0 answers nobody).
    pub(crate) gen: u16,
    pub(crate) client: ClientId,
    /// The request as last seen (a retry re-targets the answer to itself).
    pub(crate) header: Option<Header>,
    /// Session the request came in; 0 for `OpenSession` and once the
    /// session closed (an orphan: answered, never re-targeted or recorded).
    pub(crate) session: u16,
    /// First-attempt id of the request (its dedup id).
    pub(crate) first_req_id: u32,
}

impl Pending {
    /// A free slot of generation 1.
    pub(crate) fn new() -> Pending {
        Pending {
            gen: 1,
            ..Pending::default()
        }
    }

    /// The generation after `gen` (0 is skipped).
    pub(crate) fn next_gen(gen: u16) -> u16 {
        match gen.wrapping_add(1) {
            0 => 1,
            g => g,
        }
    }
}

/// A fence waiting for the forwarded requests of its PID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fence {
    pub(crate) client: ClientId,
    pub(crate) header: Header,
}

/// What a forwarded request asks of the slow path.
#[derive(Debug, Clone, Copy)]
enum Fwd {
    Alloc(AllocReq),
    Free(FreeReq),
    Open(OpenSessionReq),
    Close,
}

/// What one [`FastPath::poll_rings`] call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollSummary {
    /// TX descriptors taken from the ring.
    pub commands: u32,
    /// Of those, rejected (malformed or failing their checks).
    pub rejected: u32,
    /// Response packets sent (replies to forwarded requests, released fences).
    pub responses: u32,
}

impl<D: Dram> FastPath<D> {
    /// Whether a fence of `pid` is waiting.
    pub(crate) fn fence_waiting(&self, pid: u32) -> bool {
        self.fences_live != 0 && self.fences.iter().flatten().any(|f| f.header.pid == pid)
    }

    fn pending_of(&self, pid: u32) -> bool {
        self.pending
            .iter()
            .any(|p| p.live && p.header.is_some_and(|h| h.pid == pid))
    }

    /// `Fence`: answered now if no forwarded request of the PID is waiting,
    /// else when the last one is answered; later requests of the PID get
    /// `Busy` meanwhile.
    pub(crate) fn fence<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        out: &mut F,
    ) {
        self.trace.cycles += 1;
        // Reads of the PID still being sent packet by packet complete first.
        self.flush_streams_of(h.pid, out);
        if !self.pending_of(h.pid) {
            return self.fail(src, h, Status::Ok, out);
        }
        match self.fences.iter().position(Option::is_none) {
            Some(i) => {
                self.fences[i] = Some(Fence {
                    client: src,
                    header: *h,
                });
                self.fences_live += 1;
                self.trace.forwarded = true;
            }
            None => self.fail(src, h, Status::Busy, out),
        }
    }

    /// A duplicate or retry of a request still in the slow path: the answer
    /// goes to this latest attempt when the reply comes, nothing new is
    /// forwarded. True if `h` was such a packet: same session, opcode and
    /// first-attempt id. Runs before the fence gate: it executes nothing, and
    /// the waiting request is what the fence waits for.
    pub(crate) fn retarget(&mut self, src: ClientId, h: &Header) -> bool {
        let id = dedup_key(h).id;
        let same = |p: &Pending| {
            p.live
                && p.session != 0
                && p.session == h.session
                && p.first_req_id == id
                && p.header.is_some_and(|q| q.opcode == h.opcode)
        };
        let Some(i) = self.pending.iter().position(same) else {
            return false;
        };
        self.pending[i].client = src;
        self.pending[i].header = Some(*h);
        self.stats.pending_retargets += 1;
        self.trace.forwarded = true;
        true
    }

    /// `OpenSession`: check the payload and forward it. Not re-targeted and
    /// not recorded (it has no session yet): a retry opens another session.
    pub(crate) fn open_session<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        match OpenSessionReq::parse(payload) {
            Ok(req) if payload.len() == OpenSessionReq::LEN => {
                self.forward_desc(src, h, Fwd::Open(req), out)
            }
            _ => self.fail(src, h, Status::Malformed, out),
        }
    }

    /// `Alloc`/`Free`/`CloseSession`: check the payload, then forward over
    /// the RX ring under a tag.
    pub(crate) fn forward<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let parsed = match h.opcode {
            Opcode::Alloc if payload.len() == AllocReq::LEN => {
                AllocReq::parse(payload).ok().map(Fwd::Alloc)
            }
            Opcode::Free if payload.len() == FreeReq::LEN => {
                FreeReq::parse(payload).ok().map(Fwd::Free)
            }
            Opcode::CloseSession if payload.is_empty() => Some(Fwd::Close),
            _ => None,
        };
        let Some(parsed) = parsed else {
            return self.fail(src, h, Status::Malformed, out);
        };
        self.forward_desc(src, h, parsed, out)
    }

    fn forward_desc<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        what: Fwd,
        out: &mut F,
    ) {
        let Some(slot) = self.pending.iter().position(|p| !p.live) else {
            self.stats.forward_busy += 1;
            return self.fail(src, h, Status::Busy, out);
        };
        let tag = u32::from(self.pending[slot].gen) << 16 | slot as u32;
        let d = match what {
            Fwd::Alloc(a) => Descriptor::AllocReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                va: h.va,
                size: a.size,
                perms: a.perms,
                page_shift: a.page_shift,
                fixed: h.flags & flags::FIXED_VA != 0,
            },
            Fwd::Free(f) => Descriptor::FreeReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                va: h.va,
                size: f.size,
            },
            Fwd::Open(o) => Descriptor::SessionOpenReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                join_session: o.join_session,
                join_key: o.join_key,
            },
            Fwd::Close => Descriptor::SessionCloseReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                session: h.session,
            },
        };
        let rx = &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        match self.rx.push(rx, &d) {
            Ok(()) => {}
            Err(PushError::Full) | Err(PushError::Invalid(_)) => {
                self.stats.forward_busy += 1;
                return self.fail(src, h, Status::Busy, out);
            }
        }
        self.trace.cycles += 1;
        self.trace.forwarded = true;
        self.stats.forwarded += 1;
        let key = dedup_key(h);
        if h.opcode.is_non_idempotent() {
            // Its record is taken now, so it fits when the reply comes.
            self.dedup.reserve(key);
        }
        let p = &mut self.pending[slot];
        p.live = true;
        p.client = src;
        p.header = Some(*h);
        p.session = if h.opcode == Opcode::OpenSession {
            0
        } else {
            h.session
        };
        p.first_req_id = key.id;
    }

    /// Push an error report; when the RX ring is full the error is counted
    /// and carried by the next report that fits.
    pub(crate) fn report_error(&mut self, status: Status, pid: u32, va: u64) {
        let d = Descriptor::ErrorReport {
            status: status.raw(),
            pid,
            va,
            opcode: self.trace.opcode,
            count: self.unreported.saturating_add(1),
        };
        let rx = &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        match self.rx.push(rx, &d) {
            Ok(()) => {
                self.unreported = 0;
                self.stats.error_reports += 1;
            }
            Err(_) => self.unreported = self.unreported.saturating_add(1),
        }
    }

    /// Execute every TX command waiting (at most one ring's worth per call);
    /// replies to forwarded requests and released fences go to `out`.
    pub fn poll_rings<F: FnMut(ClientId, &[u8])>(&mut self, out: &mut F) -> PollSummary {
        let mut sum = PollSummary::default();
        let saved = self.trace;
        for _ in 0..self.tx.slot_count() {
            self.trace = Trace::default();
            let tx = &mut self.dram.bytes_mut()[self.lay.tx_ring.start..self.lay.tx_ring.end];
            let Some(r) = self.tx.pop(tx) else { break };
            sum.commands += 1;
            let before = self.stats.packets_out;
            let ok = match r {
                Ok(d) => self.command(d, out),
                Err(e) => {
                    self.stats.tx_rejected += 1;
                    self.report_error(Status::Malformed, 0, 0);
                    if e.field == "ring.head" {
                        // The producer index is corrupt: nothing more to take.
                        sum.rejected += 1;
                        break;
                    }
                    false
                }
            };
            if !ok {
                sum.rejected += 1;
            }
            sum.responses += (self.stats.packets_out - before) as u32;
        }
        self.trace = saved;
        sum
    }

    /// Execute one TX command; false if it was rejected.
    fn command<F: FnMut(ClientId, &[u8])>(&mut self, d: Descriptor, out: &mut F) -> bool {
        let ok = match d {
            Descriptor::PteWrite {
                bucket, slot, pte, ..
            } => self.pte_write(bucket, slot, &pte),
            Descriptor::PteRemove {
                bucket,
                slot,
                pid,
                vpn,
            } => self.pte_remove(bucket, slot, pid, vpn),
            Descriptor::TlbInvalidate { pid, vpn, pages } => {
                self.tlb.invalidate_range(pid, vpn, pages);
                true
            }
            Descriptor::FreePaPush { page_shift, ppn } => self.free_pa_push(page_shift, ppn),
            Descriptor::Reply {
                tag,
                pid,
                status,
                va,
                size,
                retries,
                moved,
                ..
            } => self.reply(tag, pid, status, va, size, retries, moved, out),
            Descriptor::SessionReply {
                tag,
                pid,
                status,
                session,
                key,
                dedup_quota,
                lock_quota,
                mem_quota_pages,
                close,
                ..
            } => {
                let q = OpenSessionResp {
                    session,
                    pid,
                    key,
                    epoch: self.epoch,
                    dedup_quota,
                    lock_quota,
                    mem_quota_pages,
                };
                self.session_reply(tag, status, q, close, out)
            }
            Descriptor::Epoch { epoch } => {
                self.new_epoch(epoch);
                // A new boot's slow path holds no gate.
                self.gate.clear();
                true
            }
            Descriptor::GateSet { .. } => self.gate_set(&d),
            Descriptor::Control {
                dir: clio_wire::ring::Direction::Tx,
                ..
            } => self.control_reply(&d, out),
            Descriptor::Offload {
                dir: clio_wire::ring::Direction::Tx,
                ..
            } => self.offload_answer(&d, out),
            // RX kinds never parse from the TX ring.
            _ => false,
        };
        if ok {
            self.stats.tx_commands += 1;
        } else {
            self.stats.tx_rejected += 1;
            let va = match d {
                Descriptor::FreePaPush { page_shift, ppn } => u64::from(ppn) << page_shift.min(63),
                _ => 0,
            };
            self.report_error(Status::Malformed, 0, va);
        }
        ok
    }

    fn slot_offset(&self, bucket: u32, slot: u32) -> Option<usize> {
        let g = self.lay.table;
        if u64::from(bucket) >= g.buckets() || slot >= g.slots_per_bucket {
            return None;
        }
        Some(self.lay.offset(g.slot_addr(bucket, slot)))
    }

    fn pte_write(&mut self, bucket: u32, slot: u32, pte: &Pte) -> bool {
        let Some(at) = self.slot_offset(bucket, slot) else {
            return false;
        };
        if pte.valid && !self.lay.page_in_data(pte.ppn, pte.page_shift) {
            return false;
        }
        // Whatever the slot held before and the new tag both leave the TLB.
        if let Ok(old) = Pte::parse(&self.dram.bytes()[at..at + PTE_LEN]) {
            if old.allocated {
                self.tlb.invalidate(old.pid, old.vpn, old.page_shift);
            }
        }
        self.tlb.invalidate(pte.pid, pte.vpn, pte.page_shift);
        self.dram.bytes_mut()[at..at + PTE_LEN].copy_from_slice(&pte.to_bytes());
        true
    }

    fn pte_remove(&mut self, bucket: u32, slot: u32, pid: u32, vpn: u64) -> bool {
        let Some(at) = self.slot_offset(bucket, slot) else {
            return false;
        };
        // The command names the slot, not the page size: the slot must hold
        // an allocated PTE of (pid, vpn) at the page shift it records.
        let raw = &self.dram.bytes()[at..at + PTE_LEN];
        let Ok(view) = PteView::new_checked(raw) else {
            return false;
        };
        let shift = view.flags() >> pte_flags::PAGE_SHIFT_SHIFT;
        if !view.matches(pid, vpn, shift) {
            return false;
        }
        self.tlb.invalidate(pid, vpn, shift);
        self.dram.bytes_mut()[at..at + PTE_LEN].fill(0);
        true
    }

    fn free_pa_push(&mut self, page_shift: u8, ppn: u32) -> bool {
        let Some(i) = self.lay.fifo_of(page_shift) else {
            return false;
        };
        if !self.lay.page_in_data(ppn, page_shift) || self.fifos[i].len() >= self.lay.fifo_depth {
            return false;
        }
        self.fifos[i].push_back(ppn);
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn reply<F: FnMut(ClientId, &[u8])>(
        &mut self,
        tag: u32,
        pid: u32,
        status: u8,
        va: u64,
        size: u64,
        retries: u32,
        moved: bool,
        out: &mut F,
    ) -> bool {
        let slot = (tag & 0xffff) as usize;
        let gen = (tag >> 16) as u16;
        let Some(p) = self.pending.get(slot).copied() else {
            return false;
        };
        let Some(h) = p.header else { return false };
        if !p.live
            || p.gen != gen
            || h.pid != pid
            || !matches!(h.opcode, Opcode::Alloc | Opcode::Free)
        {
            return false;
        }
        self.pending[slot] = Pending {
            gen: Pending::next_gen(p.gen),
            ..Pending::default()
        };
        let mut r = Resp::of(&h);
        r.status = Status::parse(status).unwrap_or(Status::Malformed);
        let mut plen = 0;
        if h.opcode == Opcode::Alloc {
            r.va = va;
            if moved {
                r.flags |= flags::MOVED;
            }
            plen = AllocResp::LEN;
            let _ = AllocResp { size, retries }.emit(&mut self.buf[HEADER_LEN..HEADER_LEN + plen]);
        }
        // The reservation taken at intake becomes the record (or is freed if
        // the request failed: its retry must execute). An orphan has none.
        let key = DedupKey {
            session: p.session,
            id: p.first_req_id,
            offset: 0,
            opcode: h.opcode.raw(),
        };
        let rec = (r.status == Status::Ok).then(|| self.recorded(&r, plen));
        self.dedup.complete(&key, rec);
        self.send(p.client, &r, plen, out);
        self.release_fences(h.pid, out);
        true
    }

    /// Fences of `pid` are released when nothing of it waits any more.
    fn release_fences<F: FnMut(ClientId, &[u8])>(&mut self, pid: u32, out: &mut F) {
        if !self.pending_of(pid) {
            for i in 0..self.fences.len() {
                if let Some(f) = self.fences[i] {
                    if f.header.pid == pid {
                        self.fences[i] = None;
                        self.fences_live -= 1;
                        self.fail(f.client, &f.header, Status::Ok, out);
                    }
                }
            }
        }
    }

    /// `SessionReply`: install (open) or clear (close) a session-table
    /// entry, then answer the forwarded request `tag` (0: nobody). Rejected
    /// (false, nothing changes) if `tag` is not 0 and names no waiting
    /// request of the right kind, or an OK status names a session id
    /// outside `1..capacity`.
    fn session_reply<F: FnMut(ClientId, &[u8])>(
        &mut self,
        tag: u32,
        status: u8,
        q: OpenSessionResp,
        close: bool,
        out: &mut F,
    ) -> bool {
        let ok = status == Status::Ok.raw();
        if ok && !self.sessions.in_range(q.session) {
            return false;
        }
        let slot = (tag & 0xffff) as usize;
        let waiting = if tag == 0 {
            None
        } else {
            let want = if close {
                Opcode::CloseSession
            } else {
                Opcode::OpenSession
            };
            let Some(p) = self.pending.get(slot).copied() else {
                return false;
            };
            match p.header {
                Some(h)
                    if p.live
                        && p.gen == (tag >> 16) as u16
                        && h.opcode == want
                        && (!close || h.pid == q.pid) =>
                {
                    Some((p, h))
                }
                _ => return false,
            }
        };
        if ok {
            if close {
                self.close_session(q.session);
            } else {
                // A reused id starts clean, whatever the slow path did before.
                self.close_session(q.session);
                if let Some(e) = self.sessions.get_mut(q.session) {
                    *e = Session {
                        valid: true,
                        pid: q.pid,
                        key: q.key,
                        dedup_quota: q.dedup_quota,
                        lock_quota: q.lock_quota,
                        locks: 0,
                        ack_floor: 0,
                    };
                }
                self.stats.sessions_opened += 1;
            }
        }
        let Some((p, h)) = waiting else {
            return true;
        };
        self.pending[slot] = Pending {
            gen: Pending::next_gen(p.gen),
            ..Pending::default()
        };
        let mut r = Resp::of(&h);
        r.status = Status::parse(status).unwrap_or(Status::Malformed);
        let mut plen = 0;
        if !close {
            r.epoch = self.epoch;
            if r.status == Status::Ok {
                plen = OpenSessionResp::LEN;
                let _ = q.emit(&mut self.buf[HEADER_LEN..HEADER_LEN + plen]);
            }
        }
        self.send(p.client, &r, plen, out);
        self.release_fences(h.pid, out);
        true
    }

    /// Clear session `s`: its entry, dedup records and lock count; requests
    /// of it still in the slow path become orphans (answered, never
    /// re-targeted or recorded).
    fn close_session(&mut self, s: u16) {
        if let Some(e) = self.sessions.get_mut(s) {
            if e.valid {
                self.stats.sessions_closed += 1;
            }
            *e = Session::default();
        }
        self.dedup.clear_session(s);
        for p in &mut self.pending {
            if p.session == s {
                p.session = 0;
            }
        }
    }

    /// `Epoch`: a new boot of the slow path. Every session, dedup record and
    /// lock count of the earlier boot is gone; requests it still held become
    /// orphans.
    fn new_epoch(&mut self, epoch: u32) {
        self.epoch = epoch;
        self.sessions.clear();
        self.dedup.clear();
        for p in &mut self.pending {
            p.session = 0;
        }
    }
}
