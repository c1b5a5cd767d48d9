//! Per-core setup when the image is the EL3 software (entered at EL3 from
//! the FSBL, over JTAG, or in QEMU with `secure=on`): `CNTFRQ_EL0` and
//! `CPUECTLR_EL1.SMPEN`, before the core enables its MMU and caches (the
//! logic and its tests are `clio_slowpath::apu_boot`).
//!
//! `el3_setup` is called from boot.rs at EL3 with the MMU and caches off
//! and this core's stack, before `.bss` is zeroed: it records what it did
//! in `.data` statics (non-zero initialisers keep them out of `.bss`), and
//! `kmain` / `secondary_main` log it once the UART is up.

use core::sync::atomic::{AtomicU64, Ordering};

use clio_slowpath::apu_boot::{self, El3SysRegs};

use crate::board;

/// Marks "no EL3 setup ran on this core" (a real `CPUECTLR_EL1` never has
/// every bit set).
const NONE: u64 = u64::MAX;

/// Per core: `CPUECTLR_EL1` before the setup.
static CPUECTLR_BEFORE: [AtomicU64; 4] = [const { AtomicU64::new(NONE) }; 4];
/// Per core: `CNTFRQ_EL0` before the setup.
static CNTFRQ_BEFORE: [AtomicU64; 4] = [const { AtomicU64::new(NONE) }; 4];

/// The A53's system registers through `mrs`/`msr`.
struct SysRegs;

impl El3SysRegs for SysRegs {
    fn read_cpuectlr(&mut self) -> u64 {
        let v: u64;
        // SAFETY: CPUECTLR_EL1 (S3_1_C15_C2_1) is accessible at EL3 on the A53.
        unsafe { core::arch::asm!("mrs {}, s3_1_c15_c2_1", out(reg) v) };
        v
    }
    fn write_cpuectlr(&mut self, value: u64) {
        // SAFETY: as above; the A53 TRM requires SMPEN set before caches
        // and MMU are enabled, which is when this runs. ISB: takes effect
        // before the next instruction.
        unsafe { core::arch::asm!("msr s3_1_c15_c2_1, {}", "isb", in(reg) value) };
    }
    fn read_cntfrq(&mut self) -> u64 {
        let v: u64;
        // SAFETY: CNTFRQ_EL0 is readable at every EL.
        unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) v) };
        v
    }
    fn write_cntfrq(&mut self, value: u64) {
        // SAFETY: writable at the highest implemented EL, which is where we are.
        unsafe { core::arch::asm!("msr cntfrq_el0, {}", in(reg) value) };
    }
}

/// Called by boot.rs at EL3 (MMU off, this core's stack) for core `core`.
#[no_mangle]
extern "C" fn el3_setup(core: u64) {
    let s = apu_boot::el3_cpu_setup(&mut SysRegs, board::COUNTER_HZ);
    // Plain stores (no exclusives: memory is Device-nGnRnE with the MMU off).
    if let Some(slot) = CPUECTLR_BEFORE.get(core as usize) {
        slot.store(s.cpuectlr_before, Ordering::Relaxed);
        CNTFRQ_BEFORE[core as usize].store(s.cntfrq_before, Ordering::Relaxed);
    }
}

/// What the EL3 setup of `core` found: `(CPUECTLR_EL1, CNTFRQ_EL0)` before
/// it wrote them, or `None` if the core did not enter at EL3.
pub fn setup_of(core: usize) -> Option<(u64, u64)> {
    let c = CPUECTLR_BEFORE.get(core)?.load(Ordering::Relaxed);
    let f = CNTFRQ_BEFORE[core].load(Ordering::Relaxed);
    (c != NONE).then_some((c, f))
}
