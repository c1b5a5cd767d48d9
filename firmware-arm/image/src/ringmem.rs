//! The FPGA↔ARM rings as seen from the A53: [`clio_wire::ring::RingMemory`]
//! over the ring region in board DRAM.
//!
//! The ring region is mapped Normal non-cacheable (src/mmu.rs), because the
//! fast path reaches DDR through the PS's AXI ports without snooping the A53
//! caches. Every access here is volatile (the compiler must neither drop nor
//! merge it: the other side changes the memory) and the index accesses carry
//! the barriers the ring protocol needs against an observer outside the
//! cluster, hence outer-shareable:
//! - `load_u32` (acquire): load, then `dmb oshld`, so the descriptor bytes
//!   are read after the index that published them;
//! - `store_u32` (release): `dmb osh`, then store, so the descriptor bytes
//!   (and the reads of a slot being released) complete before the index
//!   that hands the slot over.
//!
//! Under QEMU the other side is the emulator process sharing the guest RAM
//! file; TCG turns these barriers into host fences, so the same protocol
//! holds there.

use aarch64_cpu::asm::barrier;
use clio_wire::ring::RingMemory;
use clio_wire::Field;

/// One ring (header and slots) at a fixed physical address.
#[derive(Clone, Copy)]
pub struct SharedRing {
    base: usize,
    len: usize,
}

impl SharedRing {
    /// The ring of `len` bytes at `base`.
    ///
    /// # Safety
    /// `base..base + len` must be mapped, hold only this ring, and be shared
    /// with at most one peer that follows the ring protocol.
    pub const unsafe fn new(base: u64, len: usize) -> Self {
        Self {
            base: base as usize,
            len,
        }
    }

    fn check(&self, off: usize, n: usize) -> usize {
        // Offsets come from the ring engine (masked indices of a ring whose
        // header it validated), never from descriptor contents.
        assert!(
            off.checked_add(n).is_some_and(|e| e <= self.len),
            "ring access out of bounds"
        );
        self.base + off
    }
}

impl RingMemory for SharedRing {
    fn len(&self) -> usize {
        self.len
    }

    fn load_u32(&self, at: Field) -> u32 {
        debug_assert_eq!(at.len(), 4, "ring index field {at:?}");
        let p = self.check(at.start, 4) as *const u32;
        // SAFETY: in bounds of the ring (checked); ring fields are 4-aligned.
        let v = unsafe { p.read_volatile() };
        barrier::dmb(barrier::OSHLD);
        u32::from_le(v)
    }

    fn store_u32(&mut self, at: Field, v: u32) {
        debug_assert_eq!(at.len(), 4, "ring index field {at:?}");
        let p = self.check(at.start, 4) as *mut u32;
        barrier::dmb(barrier::OSH);
        // SAFETY: as in `load_u32`.
        unsafe { p.write_volatile(v.to_le()) };
    }

    fn read(&self, off: usize, buf: &mut [u8]) {
        let at = self.check(off, buf.len());
        if at % 8 == 0 && buf.len() % 8 == 0 {
            // Slots and headers: 64-bit accesses.
            for (i, chunk) in buf.chunks_exact_mut(8).enumerate() {
                // SAFETY: in bounds, 8-aligned.
                let w = unsafe { ((at + 8 * i) as *const u64).read_volatile() };
                chunk.copy_from_slice(&w.to_ne_bytes());
            }
        } else {
            for (i, b) in buf.iter_mut().enumerate() {
                // SAFETY: in bounds.
                *b = unsafe { ((at + i) as *const u8).read_volatile() };
            }
        }
    }

    fn write(&mut self, off: usize, buf: &[u8]) {
        let at = self.check(off, buf.len());
        if at % 8 == 0 && buf.len() % 8 == 0 {
            for (i, chunk) in buf.chunks_exact(8).enumerate() {
                let w = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8]));
                // SAFETY: in bounds, 8-aligned.
                unsafe { ((at + 8 * i) as *mut u64).write_volatile(w) };
            }
        } else {
            for (i, &b) in buf.iter().enumerate() {
                // SAFETY: in bounds.
                unsafe { ((at + i) as *mut u8).write_volatile(b) };
            }
        }
    }
}
