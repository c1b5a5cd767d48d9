//! Direct translated accesses: the path of programs running *at* the
//! memory node (the emulated board's offloads) into the fast path's
//! translation and permission check, without a Clio packet.
//!
//! An offload's read, write or compare-and-swap is checked exactly as the
//! same request in a packet would be: its session's credentials and this
//! boot's epoch, no fence waiting for its PID, then the one translation of
//! [`FastPath::translate_range`] (TLB, page-table bucket, permission bits,
//! first-touch fault). What it skips is what only a network needs: building
//! the packet, its CRC, parsing it and the answer, and the dedup record of a
//! non-idempotent request (an in-process call is never retried).
//!
//! Any refusal (`Err`) leaves DRAM untouched (faults taken on earlier pages
//! stay mapped, as for a packet). Callers that want the packet path's
//! handling of a refusal (its `BUSY` retries after the slow path ran, its
//! statuses) send the same request as a packet then.

use clio_wire::payload::perms;
use clio_wire::Status;

use crate::{Dram, FastPath, Trace};

/// Ask the CPU to bring every cache line of `b` in (no-op off x86-64).
fn prefetch_lines(b: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = b.as_ptr();
        let lines = (b.len() + (p as usize & 63)).div_ceil(64);
        for i in 0..lines {
            // SAFETY: a prefetch never faults and changes no memory; the
            // address is `b`'s first byte plus whole lines, and
            // `wrapping_add` keeps its computation free of UB.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i * 64).cast()) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// The session an access is made under (as a request's header carries it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirectCreds {
    /// The address space.
    pub pid: u32,
    /// Session id.
    pub session: u16,
    /// Boot epoch the session was opened in.
    pub epoch: u32,
    /// Session key.
    pub key: u64,
}

impl<D: Dram> FastPath<D> {
    /// The checks a packet's header gets before its opcode is looked at.
    fn direct_check(&self, c: &DirectCreds) -> Result<(), Status> {
        if self.epoch == 0 || c.epoch != self.epoch {
            return Err(Status::Restarted);
        }
        if self.sessions.check(c.session, c.key, c.pid).is_none() {
            return Err(Status::BadSession);
        }
        if c.pid == 0 || c.pid > self.lay.max_pid {
            return Err(Status::BadPid);
        }
        if self.fence_waiting(c.pid) {
            return Err(Status::Busy);
        }
        Ok(())
    }

    /// Count the access's trace into the statistics, as `receive` does for
    /// a packet's.
    fn direct_done(&mut self) {
        self.stats.cycles += self.trace.cycles;
        self.stats.dram_accesses += u64::from(self.trace.dram_accesses);
        self.stats.tlb_hits += u64::from(self.trace.tlb_hits);
        self.stats.tlb_misses += u64::from(self.trace.tlb_misses);
        self.stats.faults += u64::from(self.trace.faults);
    }

    /// Read `buf.len()` bytes at `va` of `c.pid` (permission `READ`).
    pub fn direct_read(&mut self, c: &DirectCreds, va: u64, buf: &mut [u8]) -> Result<(), Status> {
        self.direct_check(c)?;
        self.trace = Trace::default();
        let r = self.translate_range(c.pid, va, buf.len() as u64, perms::READ);
        if let Err(s) = r {
            self.direct_done();
            return Err(s);
        }
        let mut pos = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            buf[pos..pos + s.len].copy_from_slice(&self.dram.bytes()[s.off..s.off + s.len]);
            pos += s.len;
            self.dram_read_cost(s.len as u64);
        }
        self.direct_done();
        Ok(())
    }

    /// Read `len` bytes at `va` of `c.pid` (permission `READ`) and hand them
    /// to `f` where they lie in DRAM when they are one physical run (else
    /// gathered into `scratch` first): the check, translation and cost of
    /// [`FastPath::direct_read`] without a copy into a buffer of the
    /// caller's. `f` runs only when the access is allowed.
    pub fn direct_read_with<R>(
        &mut self,
        c: &DirectCreds,
        va: u64,
        len: usize,
        scratch: &mut Vec<u8>,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, Status> {
        self.direct_check(c)?;
        self.trace = Trace::default();
        let r = self.translate_range(c.pid, va, len as u64, perms::READ);
        if let Err(s) = r {
            self.direct_done();
            return Err(s);
        }
        for i in 0..self.segs.len() {
            self.dram_read_cost(self.segs[i].len as u64);
        }
        self.direct_done();
        let bytes = self.dram.bytes();
        if let [s] = self.segs[..] {
            return Ok(f(&bytes[s.off..s.off + s.len]));
        }
        scratch.clear();
        for s in &self.segs {
            scratch.extend_from_slice(&bytes[s.off..s.off + s.len]);
        }
        Ok(f(scratch))
    }

    /// Start bringing `len` bytes at `va` of `c.pid` into the host's caches
    /// where the TLB already maps them readable: a hint for an access that
    /// follows (an offload's batch looks ahead), with no effect on memory,
    /// the TLB, statistics or any answer. Pages the TLB does not hold are
    /// skipped (no page-table walk, no fault).
    pub fn direct_prefetch(&self, c: &DirectCreds, va: u64, len: usize) {
        if self.direct_check(c).is_err() {
            return;
        }
        let Some(end) = va.checked_add(len as u64) else {
            return;
        };
        let mut cur = va;
        while cur < end {
            let Some(shift) = self.lay.shift_of(cur) else {
                return;
            };
            let Some(e) = self.tlb.peek(c.pid, cur >> shift, shift) else {
                return;
            };
            let mask = (1u64 << shift) - 1;
            let n = end.min((cur | mask).saturating_add(1)) - cur;
            if e.perms & perms::READ != 0 && self.lay.page_in_data(e.ppn, shift) {
                let off = self.lay.offset((u64::from(e.ppn) << shift) + (cur & mask));
                if let Some(b) = self.dram.bytes().get(off..off + n as usize) {
                    prefetch_lines(b);
                }
            }
            cur += n;
        }
    }

    /// Write `data` at `va` of `c.pid` (permission `WRITE`).
    pub fn direct_write(&mut self, c: &DirectCreds, va: u64, data: &[u8]) -> Result<(), Status> {
        self.direct_check(c)?;
        self.trace = Trace::default();
        let r = self.translate_range(c.pid, va, data.len() as u64, perms::WRITE);
        if let Err(s) = r {
            self.direct_done();
            return Err(s);
        }
        let mut pos = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            self.dram.bytes_mut()[s.off..s.off + s.len].copy_from_slice(&data[pos..pos + s.len]);
            pos += s.len;
            self.dram_write_cost(s.len as u64);
        }
        self.direct_done();
        Ok(())
    }

    /// Compare-and-swap the 8-byte word at `va` (8-aligned) of `c.pid`
    /// (permission `WRITE`, as the packet's); the old value.
    pub fn direct_cas(
        &mut self,
        c: &DirectCreds,
        va: u64,
        expected: u64,
        new: u64,
    ) -> Result<u64, Status> {
        if va % 8 != 0 {
            return Err(Status::Malformed);
        }
        self.direct_check(c)?;
        self.trace = Trace::default();
        let r = self.translate_range(c.pid, va, 8, perms::WRITE);
        if let Err(s) = r {
            self.direct_done();
            return Err(s);
        }
        self.trace.cycles += u64::from(self.opts.costs.sync_unit);
        let off = self.segs[0].off;
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.dram.bytes()[off..off + 8]);
        let old = u64::from_le_bytes(w);
        self.dram_read_cost(8);
        if old == expected {
            self.dram.bytes_mut()[off..off + 8].copy_from_slice(&new.to_le_bytes());
            self.dram_write_cost(8);
        }
        self.direct_done();
        Ok(old)
    }
}
