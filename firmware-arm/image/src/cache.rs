//! Zeroing board DRAM that the fast path will read, and keeping the ARM's
//! view of a client's pages coherent with the fast path's (an offload
//! working in its caller's address space).
//!
//! The data pages and the hash page table sit in DRAM the A53 maps
//! write-back cacheable, while the fast path reads DDR behind the caches.
//! So a range handed to the fast path is zeroed (`DC ZVA`, a whole cache
//! line per instruction, when `DCZID_EL0` allows it) and then cleaned to the
//! point of coherency (`DC CVAC`), with a `DSB SY` before the caller publishes
//! anything that lets the fast path use it.

use aarch64_cpu::asm::barrier;

fn dczid() -> u64 {
    let v: u64;
    // SAFETY: reading an EL0-accessible ID register.
    unsafe { core::arch::asm!("mrs {}, dczid_el0", out(reg) v, options(nomem, nostack)) };
    v
}

fn ctr() -> u64 {
    let v: u64;
    // SAFETY: reading the cache type register.
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) v, options(nomem, nostack)) };
    v
}

/// Bytes one `DC ZVA` clears, or `None` when the instruction is prohibited.
fn zva_block() -> Option<usize> {
    let d = dczid();
    (d & (1 << 4) == 0).then(|| 4usize << (d & 0xf))
}

/// Smallest data cache line, for maintenance by address.
fn dcache_line() -> usize {
    4usize << ((ctr() >> 16) & 0xf)
}

/// Zero `len` bytes at physical (= virtual, identity map) address `base`
/// and clean them to the point of coherency.
///
/// # Safety
/// The range must be mapped Normal memory that nothing else uses meanwhile.
pub unsafe fn zero_for_device(base: u64, len: u64) {
    let start = base as usize;
    let end = start + len as usize;
    match zva_block() {
        Some(block) if start % block == 0 && end % block == 0 => {
            let mut p = start;
            while p < end {
                // SAFETY: inside the caller's range; aligned to the block.
                unsafe { core::arch::asm!("dc zva, {}", in(reg) p, options(nostack)) };
                p += block;
            }
        }
        _ => {
            // SAFETY: the caller owns the range.
            unsafe { core::ptr::write_bytes(start as *mut u8, 0, len as usize) };
        }
    }
    let line = dcache_line();
    let mut p = start & !(line - 1);
    while p < end {
        // SAFETY: clean by address of mapped memory.
        unsafe { core::arch::asm!("dc cvac, {}", in(reg) p, options(nostack)) };
        p += line;
    }
    barrier::dsb(barrier::SY);
}

/// Clean and invalidate the cache lines of `len` bytes at `base` (identity
/// map) to the point of coherency, so the next access reads DRAM as the
/// fast path left it (and no dirty line of ours is lost).
///
/// # Safety
/// The range must be mapped Normal memory.
pub unsafe fn clean_invalidate(base: u64, len: usize) {
    by_line(base, len, |p| {
        // SAFETY: clean and invalidate by address of mapped memory.
        unsafe { core::arch::asm!("dc civac, {}", in(reg) p, options(nostack)) }
    });
}

/// Clean the cache lines of `len` bytes at `base` to the point of
/// coherency, so the fast path reads what the ARM wrote.
///
/// # Safety
/// The range must be mapped Normal memory.
pub unsafe fn clean(base: u64, len: usize) {
    by_line(base, len, |p| {
        // SAFETY: clean by address of mapped memory.
        unsafe { core::arch::asm!("dc cvac, {}", in(reg) p, options(nostack)) }
    });
}

fn by_line(base: u64, len: usize, mut f: impl FnMut(usize)) {
    let line = dcache_line();
    let end = base as usize + len;
    let mut p = base as usize & !(line - 1);
    while p < end {
        f(p);
        p += line;
    }
    barrier::dsb(barrier::SY);
}
