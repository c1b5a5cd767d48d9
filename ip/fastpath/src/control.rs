//! The slow-path side: forwarding alloc/free over the RX ring, executing TX
//! commands, fences that wait for forwarded requests, error reports.

use clio_wire::clio::{flags, HEADER_LEN};
use clio_wire::payload::{AllocReq, AllocResp, FreeReq};
use clio_wire::pte::{pte_flags, Pte, PteView, PTE_LEN};
use clio_wire::ring::{Descriptor, PushError};
use clio_wire::{Header, Opcode, Status};

use crate::cycles::Trace;
use crate::dedup::{DedupKey, Recorded};
use crate::response::Resp;
use crate::{ClientId, Dram, FastPath};

/// A request forwarded to the slow path, waiting for its `Reply`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pending {
    pub(crate) live: bool,
    /// Generation of the slot, the high half of the tag.
    pub(crate) gen: u16,
    pub(crate) client: ClientId,
    /// The request as last seen (a retry re-targets the answer to itself).
    pub(crate) header: Option<Header>,
    /// Request id of the first attempt.
    pub(crate) first_req_id: u32,
}

/// A fence waiting for the forwarded requests of its PID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fence {
    pub(crate) client: ClientId,
    pub(crate) header: Header,
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
    /// forwarded. True if `h` was such a packet. Runs before the fence gate:
    /// it executes nothing, and the waiting request is what the fence waits for.
    pub(crate) fn retarget(&mut self, src: ClientId, h: &Header) -> bool {
        let same = |p: &Pending| {
            p.live
                && p.header.is_some_and(|q| {
                    q.pid == h.pid
                        && q.opcode == h.opcode
                        && (q.req_id == h.req_id
                            || (h.retry_of != 0
                                && (q.req_id == h.retry_of || p.first_req_id == h.retry_of)))
                })
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

    /// `Alloc`/`Free`: check the payload, then forward over the RX ring under a tag.
    pub(crate) fn forward<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let parsed = match h.opcode {
            Opcode::Alloc if payload.len() == AllocReq::LEN => {
                AllocReq::parse(payload).ok().map(Ok)
            }
            Opcode::Free if payload.len() == FreeReq::LEN => FreeReq::parse(payload).ok().map(Err),
            _ => None,
        };
        let Some(parsed) = parsed else {
            return self.fail(src, h, Status::Malformed, out);
        };
        let Some(slot) = self.pending.iter().position(|p| !p.live) else {
            self.stats.forward_busy += 1;
            return self.fail(src, h, Status::Busy, out);
        };
        let tag = u32::from(self.pending[slot].gen) << 16 | slot as u32;
        let d = match parsed {
            Ok(a) => Descriptor::AllocReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                va: h.va,
                size: a.size,
                perms: a.perms,
                page_shift: a.page_shift,
                fixed: h.flags & flags::FIXED_VA != 0,
            },
            Err(f) => Descriptor::FreeReq {
                tag,
                pid: h.pid,
                req_id: h.req_id,
                va: h.va,
                size: f.size,
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
        let p = &mut self.pending[slot];
        p.live = true;
        p.client = src;
        p.header = Some(*h);
        p.first_req_id = h.req_id;
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
        if !p.live || p.gen != gen || h.pid != pid {
            return false;
        }
        self.pending[slot] = Pending {
            gen: p.gen.wrapping_add(1),
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
        self.record(&h, &r, plen);
        if r.status == Status::Ok && p.first_req_id != h.req_id && p.first_req_id != h.retry_of {
            // The first attempt may still arrive late: it must not run again.
            let rec = Recorded {
                flags: r.flags,
                status: r.status.raw(),
                va: r.va,
                total_len: r.total_len,
                offset: r.offset,
                payload_len: plen as u8,
                payload: {
                    let mut b = [0; 16];
                    b[..plen].copy_from_slice(&self.buf[HEADER_LEN..HEADER_LEN + plen]);
                    b
                },
            };
            self.dedup.insert(
                DedupKey {
                    pid,
                    req_id: p.first_req_id,
                    offset: 0,
                    opcode: h.opcode.raw(),
                },
                rec,
            );
        }
        self.send(p.client, &r, plen, out);
        // Fences of this PID are released when nothing of it waits any more.
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
        true
    }
}
