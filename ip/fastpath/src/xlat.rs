//! Address translation: TLB, one bucket read on a miss, permission check,
//! and the first-touch page fault.

use clio_wire::pte::{Pte, PteView, PTE_LEN};
use clio_wire::ring::Descriptor;
use clio_wire::Status;

use crate::config::ZeroPolicy;
use crate::fastpath::Seg;
use crate::tlb::TlbEntry;
use crate::{Dram, FastPath};

impl<D: Dram> FastPath<D> {
    /// Translate `[va, va + len)` of `pid` needing permission bits `need`,
    /// page by page in VA order, into `self.segs`. The first page that fails
    /// decides the status; faults taken on earlier pages stay mapped.
    pub(crate) fn translate_range(
        &mut self,
        pid: u32,
        va: u64,
        len: u64,
        need: u8,
    ) -> Result<(), Status> {
        self.segs.clear();
        let Some(end) = va.checked_add(len) else {
            return Err(Status::Unmapped);
        };
        let mut cur = va;
        while cur < end {
            let (page_pa, shift) = self.translate_page(pid, cur, need)?;
            let mask = (1u64 << shift) - 1;
            let page_end = (cur | mask).saturating_add(1);
            let n = end.min(page_end) - cur;
            let off = self.lay.offset(page_pa + (cur & mask));
            self.segs.push(Seg {
                off,
                len: n as usize,
            });
            cur += n;
        }
        Ok(())
    }

    /// Translate the page holding `va`: returns the physical address of the
    /// page and its shift.
    fn translate_page(&mut self, pid: u32, va: u64, need: u8) -> Result<(u64, u8), Status> {
        let shift = self.lay.shift_of(va).ok_or(Status::Unmapped)?;
        let vpn = va >> shift;
        let c = self.opts.costs;
        self.trace.pages += 1;
        self.trace.cycles += u64::from(c.tlb_lookup) + u64::from(c.perm_check);
        if let Some(e) = self.tlb.lookup(pid, vpn, shift) {
            self.trace.tlb_hits += 1;
            if e.perms & need != need {
                return Err(Status::Permission);
            }
            return Ok((u64::from(e.ppn) << shift, shift));
        }
        self.trace.tlb_misses += 1;
        let g = self.lay.table;
        let bucket = g.bucket_of(pid, vpn);
        let base = self.lay.offset(g.bucket_addr(bucket));
        self.dram_read_cost(g.bucket_bytes());
        let mut found = None;
        for slot in 0..g.slots_per_bucket as usize {
            let at = base + slot * PTE_LEN;
            let raw = &self.dram.bytes()[at..at + PTE_LEN];
            // A slot is only ever written whole, so the view cannot be short.
            let Ok(view) = PteView::new_checked(raw) else {
                continue;
            };
            // The tag is (pid, vpn, page_shift): a page of another size with
            // the same VPN number is a different page.
            if !view.matches(pid, vpn, shift) {
                continue;
            }
            match Pte::parse(raw) {
                Ok(p) => {
                    found = Some((slot as u32, p));
                    break;
                }
                _ => self.stats.pte_errors += 1,
            }
        }
        let Some((slot, mut pte)) = found else {
            return Err(Status::Unmapped);
        };
        if pte.perms & need != need {
            return Err(Status::Permission);
        }
        if pte.valid {
            if !self.lay.page_in_data(pte.ppn, shift) {
                self.stats.pte_errors += 1;
                self.report_error(Status::Unmapped, pid, va);
                return Err(Status::Unmapped);
            }
        } else {
            pte = self.fault(pid, va, bucket, slot, pte)?;
        }
        self.tlb.insert(TlbEntry {
            pid,
            vpn,
            page_shift: shift,
            ppn: pte.ppn,
            perms: pte.perms,
        });
        Ok((u64::from(pte.ppn) << shift, shift))
    }

    /// First touch of an allocated page: take a free PA, write the PTE
    /// valid, zero the page (policy `OnFault`) and tell the slow path.
    fn fault(
        &mut self,
        pid: u32,
        va: u64,
        bucket: u32,
        slot: u32,
        mut pte: Pte,
    ) -> Result<Pte, Status> {
        let shift = pte.page_shift;
        let Some(fifo) = self.lay.fifo_of(shift) else {
            return Err(Status::Unmapped);
        };
        if self.fifos[fifo].is_empty() {
            self.stats.fifo_empty += 1;
            self.report_error(Status::Busy, pid, va);
            return Err(Status::Busy);
        }
        let rx = &self.dram.bytes()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        if self.rx.free_slots(rx) == 0 {
            self.stats.rx_full_faults += 1;
            return Err(Status::Busy);
        }
        let Some(ppn) = self.fifos[fifo].pop_front() else {
            return Err(Status::Busy);
        };
        pte.ppn = ppn;
        pte.valid = true;
        let at = self.lay.offset(self.lay.table.slot_addr(bucket, slot));
        self.dram.bytes_mut()[at..at + PTE_LEN].copy_from_slice(&pte.to_bytes());
        // The PTE write-back runs beside the continuing request: counted as
        // an access, not as cycles on the request's path.
        self.trace.dram_accesses += 1;
        self.trace.dram_bytes += PTE_LEN as u64;
        self.trace.cycles += u64::from(self.opts.costs.fault);
        self.trace.faults += 1;
        if self.opts.zero_policy == ZeroPolicy::OnFault {
            let page = 1usize << shift;
            let start = self.lay.offset(u64::from(ppn) << shift);
            self.dram.bytes_mut()[start..start + page].fill(0);
            self.dram_write_cost(page as u64);
            self.trace.zeroed_bytes += page as u64;
        }
        let d = Descriptor::PaConsumed {
            pid,
            vpn: pte.vpn,
            ppn,
            page_shift: shift,
            bucket,
            slot,
        };
        let rx = &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        // Room was checked above and the descriptor is well formed.
        let _ = self.rx.push(rx, &d);
        Ok(pte)
    }
}
