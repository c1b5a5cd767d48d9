//! Starting APU cores without PSCI: the ZynqMP PMU and reset controller.
//!
//! When the image enters at EL3 there is no PSCI firmware below it (it *is*
//! the EL3 software), so it starts cores itself, as the FSBL and the Xilinx
//! standalone flow do: a PMU power-up request for the core's island, then
//! its reset vector (`APU.RVBARADDRn`) and its release from reset
//! (`CRF_APB.RST_FPD_APU`). The sequence and its tests are in
//! `clio_slowpath::apu_boot`; this module is the MMIO under it.
//!
//! These registers are secure-only; callers must be in the secure world
//! (boot.rs drops from EL3 to Secure EL1).

use core::ptr::{read_volatile, write_volatile};

use clio_slowpath::apu_boot::{self, ApuError, PowerUp, PsBus};

/// Reads of `REQ_PWRUP_STATUS` before giving up on the PMU (each read is a
/// PS register access, well under a microsecond; the PMU powers an island
/// in tens of microseconds).
const PWRUP_MAX_POLLS: u32 = 1_000_000;

/// PS registers as volatile 32-bit MMIO.
struct Mmio;

impl PsBus for Mmio {
    fn read32(&mut self, addr: u64) -> u32 {
        // SAFETY: PS registers inside the Device-nGnRnE window (mmu.rs);
        // only the primary core calls this.
        unsafe { read_volatile(addr as usize as *const u32) }
    }
    fn write32(&mut self, addr: u64, value: u32) {
        // The reset vector and earlier stores must be visible before a
        // write that may start a core.
        aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::SY);
        // SAFETY: as above.
        unsafe { write_volatile(addr as usize as *mut u32, value) }
    }
}

/// Power up core `core`, point its reset vector at `entry` and release it.
pub fn release(core: u32, entry: u64) -> Result<PowerUp, ApuError> {
    apu_boot::power_up_and_release(&mut Mmio, core, entry, PWRUP_MAX_POLLS)
}

/// Start the system counter if nothing did (JTAG boot without an FSBL);
/// returns whether it was stopped.
pub fn start_system_counter() -> bool {
    apu_boot::start_system_counter(&mut Mmio, crate::board::COUNTER_HZ as u32)
}
