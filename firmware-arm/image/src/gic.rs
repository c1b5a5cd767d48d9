//! Idle sleep: just enough of the ZynqMP's GIC-400 (GICv2) and the
//! generic timer for a core with nothing to do to halt in `WFI` until a
//! bounded deadline or a wake-up from another core.
//!
//! Why `WFI` and not `WFE`: under QEMU's TCG a `WFE` only yields the vCPU
//! (it never halts), so a core waiting in `WFE` keeps the emulator's thread
//! busy; `WFI` halts the vCPU until an interrupt is pending at its CPU
//! interface, and when every vCPU is halted QEMU sleeps. Interrupts stay
//! masked in `PSTATE` (no handler runs): `WFI` wakes on a *pending*
//! interrupt whatever `PSTATE.I` says, and [`sleep`] then clears what woke it.
//!
//! Wake sources, both enabled per core in the distributor and forwarded by
//! the CPU interface:
//! - the EL1 virtual timer (PPI 27), armed for the sleep's bound and
//!   disabled afterwards (its output is level-sensitive, so disabling it
//!   withdraws the interrupt);
//! - [`WAKE_SGI`], sent by [`wake`] from the core that handed over work.
//!   An SGI sent before the target reaches `WFI` stays pending, so that
//!   `WFI` returns at once: no wake-up is lost.
//!
//! The GIC sits in the Device-nGnRnE window the MMU maps. Whether the image
//! runs Secure (entered at EL3) or Non-secure, and whether the GIC has the
//! security extensions, the same writes work: both group-enable bits are
//! set, and the interrupts keep the group boot firmware gave them.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Writeable, CNTV_CTL_EL0, CNTV_TVAL_EL0};

use crate::timer;

/// Distributor of the APU's GIC-400 (UG1085; the same in QEMU's `xlnx-zcu102`).
const GICD: usize = 0xf901_0000;
/// CPU interface of the APU's GIC-400 (banked per core).
const GICC: usize = 0xf902_0000;

const GICD_CTLR: usize = GICD;
/// Set-enable of interrupts 0–31 (SGIs and PPIs; banked per core).
const GICD_ISENABLER0: usize = GICD + 0x100;
const GICD_SGIR: usize = GICD + 0xf00;
const GICC_CTLR: usize = GICC;
const GICC_PMR: usize = GICC + 0x4;
const GICC_IAR: usize = GICC + 0xc;
const GICC_EOIR: usize = GICC + 0x10;

/// The EL1 virtual timer's PPI.
const VTIMER_PPI: u32 = 27;
/// The SGI one core sends another to end its sleep.
pub const WAKE_SGI: u32 = 0;
/// Interrupt ids from here on mean "nothing pending" (1020–1023).
const SPURIOUS: u32 = 1020;

fn write(addr: usize, v: u32) {
    // SAFETY: a GIC register inside the device window, mapped
    // Device-nGnRnE; the writes here only enable, forward or signal.
    unsafe { core::ptr::write_volatile(addr as *mut u32, v) }
}

fn read(addr: usize) -> u32 {
    // SAFETY: as for `write`; reading IAR acknowledges, which `drain` pairs
    // with an EOI.
    unsafe { core::ptr::read_volatile(addr as *const u32) }
}

/// Enable the distributor (once, by the primary, before any [`wake`]).
pub fn init_distributor() {
    write(GICD_CTLR, read(GICD_CTLR) | 0b11);
}

/// Enable this core's wake sources and its CPU interface.
pub fn init_cpu() {
    write(GICD_ISENABLER0, (1 << VTIMER_PPI) | (1 << WAKE_SGI));
    // Forward every priority.
    write(GICC_PMR, 0xff);
    write(GICC_CTLR, read(GICC_CTLR) | 0b11);
    drain();
}

/// Acknowledge and end every interrupt pending at this core's interface.
fn drain() {
    loop {
        let iar = read(GICC_IAR);
        if iar & 0x3ff >= SPURIOUS {
            return;
        }
        write(GICC_EOIR, iar);
    }
}

/// Halt this core until `max_us` have passed or another core calls
/// [`wake`] for it (or any other enabled interrupt arrives).
pub fn sleep(max_us: u64) {
    let ticks = max_us.saturating_mul(timer::frequency()) / 1_000_000;
    CNTV_TVAL_EL0.set(ticks.clamp(1, u64::from(u32::MAX >> 1)));
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::SET + CNTV_CTL_EL0::IMASK::CLEAR);
    barrier::isb(barrier::SY);
    barrier::dsb(barrier::SY);
    aarch64_cpu::asm::wfi();
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::CLEAR);
    barrier::isb(barrier::SY);
    drain();
}

/// End core `core`'s [`sleep`] (or its next one, if it is not asleep).
pub fn wake(core: usize) {
    // The flag stores that tell the core why it was woken come first.
    barrier::dsb(barrier::ISHST);
    write(GICD_SGIR, (1 << (16 + core)) | WAKE_SGI);
}
