//! Starting APU cores without PSCI: the ZynqMP reset controller path.
//!
//! When the image enters at EL3 there is no PSCI firmware below it (it *is*
//! the EL3 software), so it releases cores itself, as the Xilinx standalone
//! flow does: set each core's reset vector (`APU.RVBARADDRn`), then take the
//! core out of reset (`CRF_APB.RST_FPD_APU`). Addresses and bits are from the
//! ZynqMP register reference (UG1087). The APU power islands are on from
//! power-on reset, so no PMU power-up request is made.
//!
//! These registers are secure-only; callers must be in the secure world
//! (boot.rs drops from EL3 to Secure EL1).

use core::ptr::{read_volatile, write_volatile};

/// `APU.RVBARADDR0L`; core n's low/high words are at +8n / +8n+4.
const RVBARADDR0L: usize = 0xfd5c_0040;
/// `CRF_APB.RST_FPD_APU`.
const RST_FPD_APU: usize = 0xfd1a_0104;
/// `ACPUn_RESET` is bit n.
const ACPU0_RESET: u32 = 1 << 0;
/// `ACPUn_PWRON_RESET` is bit 10 + n.
const ACPU0_PWRON_RESET: u32 = 1 << 10;

/// Point core `core`'s reset vector at `entry` and release it from reset.
pub fn release(core: u32, entry: u64) {
    let rvbar = RVBARADDR0L + 8 * core as usize;
    // SAFETY: APU and CRF registers of the ZynqMP, mapped as Device memory
    // (mmu.rs DEVICE_WINDOW); only the primary core writes them.
    unsafe {
        write_volatile(rvbar as *mut u32, entry as u32);
        write_volatile((rvbar + 4) as *mut u32, (entry >> 32) as u32);
        // The vector must be in place before the core leaves reset.
        aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::SY);
        let reset = read_volatile(RST_FPD_APU as *const u32);
        let core_bits = (ACPU0_RESET | ACPU0_PWRON_RESET) << core;
        write_volatile(RST_FPD_APU as *mut u32, reset & !core_bits);
    }
}
