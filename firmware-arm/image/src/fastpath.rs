//! The fast-path register block (`clio_fp_regs`) as the A53 reaches it:
//! volatile 32-bit MMIO at `fastpath.regs_base` of the board config, on the
//! PS's `M_AXI_HPM0_FPD` port. The driver (identity check, boot sequence,
//! doorbell, status) is `clio_slowpath::fastpath_regs`; this module is its
//! bus and the decision whether the block exists.
//!
//! Present only in a ZCU106 hardware build: `board.kind = "zcu106"` and
//! not built with the `qemu` feature.
//! - `emulator.toml` images (QEMU co-simulation) skip it: there the fast
//!   path is the emulator process, which drains the TX ring by itself;
//! - the `qemu` feature skips it for a ZCU106-config image booted in QEMU's
//!   `xlnx-zcu102`, which has no PL. (Without it, QEMU 7.2 reads the
//!   window as 0: the lab image stops at the `ID` check, logged, without a
//!   fault; `ci.sh` checks exactly that.)
//!
//! On a board the PL must be configured (boot image or JTAG) before the
//! firmware touches the block: an access to an unconfigured PL port never
//! completes. [`hold`] therefore reads the CSU's `PCAP_STATUS` first and
//! stops, logged, while `PL_DONE` is clear. A configured PL with another
//! design fails the `ID`/`VERSION` check, which stops the boot before any
//! write.

use aarch64_cpu::asm::barrier;
use clio_config::BoardKind;
use clio_slowpath::fastpath_regs::{
    check_pl_done, fastpath_config, info_payload, version_word, CSU_PCAP_STATUS,
};
use clio_slowpath::{FastPathRegs, FastPathStatus, RegisterBus, RegsError, SlowPathConfig};
use clio_wire::fpregs::FastPathConfig;

use crate::board::BOARD;

/// Whether this image programs the register block (module docs).
pub const PRESENT: bool = matches!(BOARD.board.kind, BoardKind::Zcu106) && !cfg!(feature = "qemu");

/// Base of the block (`fastpath.regs_base`; 0 where the config has none).
pub const BASE: u64 = match BOARD.fastpath.regs_base {
    Some(b) => b,
    None => 0,
};

/// Device-nGnRnE window of the MMU the block must lie in (src/mmu.rs).
const _: () = assert!(
    !PRESENT
        || (BOARD.fastpath.regs_base.is_some()
            && BASE >= crate::mmu::DEVICE_WINDOW.0
            && BASE + clio_wire::fpregs::BLOCK_LEN as u64 <= crate::mmu::DEVICE_WINDOW.1),
    "fastpath.regs_base must lie in the MMU's device window (0x8000_0000..4 GiB)"
);

/// Volatile 32-bit accesses to the block, mapped Device-nGnRnE: issued
/// once each, in program order, never merged or cached.
#[derive(Clone, Copy)]
pub struct Mmio {
    base: usize,
}

impl RegisterBus for Mmio {
    fn read32(&mut self, offset: u32) -> u32 {
        // SAFETY: `PRESENT` guarantees the block is at `base` (a device
        // mapping); offsets come from the register map, inside its window.
        unsafe { core::ptr::read_volatile((self.base + offset as usize) as *const u32) }
    }

    fn write32(&mut self, offset: u32, value: u32) {
        // Ring slots and indices (Normal non-cacheable) written before this
        // reach the point the fast path reads them from before the register
        // write does, so a doorbell never overtakes its descriptors (what
        // Linux's `writel` does with `dma_wmb`).
        barrier::dmb(barrier::OSHST);
        // SAFETY: as for `read32`.
        unsafe { core::ptr::write_volatile((self.base + offset as usize) as *mut u32, value) }
    }
}

/// The block's driver, or `None` where the block does not exist.
pub fn regs() -> Option<FastPathRegs<Mmio>> {
    PRESENT.then(|| {
        FastPathRegs::new(Mmio {
            base: BASE as usize,
        })
    })
}

/// First 8 bytes of this image's GNU build id, big-endian (the INFO
/// payload's `build_id`, as `clio info` compares it); 0 if unknown.
fn build_id_word() -> u64 {
    let Some(id) = crate::buildinfo::BuildId::of_this_image() else {
        return 0;
    };
    let hex = id.as_str().as_bytes();
    let mut v = 0u64;
    for &c in hex.iter().take(16) {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => 0,
        };
        v = v << 4 | u64::from(digit);
    }
    v
}

/// `CARGO_PKG_VERSION` as major << 16 | minor << 8 | patch.
fn firmware_version() -> u32 {
    let mut parts = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u8>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    version_word(next(), next(), next())
}

/// The block's configuration from the board config and the slow path's
/// layout `sp`, checked; `None` after logging the field at fault.
pub fn config(sp: &SlowPathConfig) -> Option<FastPathConfig> {
    let info = info_payload(
        &BOARD,
        firmware_version(),
        clio_wire::payload::FASTPATH_VERSION,
        build_id_word(),
    );
    let cfg = match fastpath_config(&BOARD, sp, info) {
        Ok(c) => c,
        Err(e) => {
            defmt::error!("fast path config: {=str}: {=str}", e.field, e.reason);
            return None;
        }
    };
    if let Err(e) = cfg.check() {
        log_error(RegsError::Config(e));
        return None;
    }
    Some(cfg)
}

/// The CSU's `PCAP_STATUS` (a PS register: it answers with or without a
/// bitstream).
fn pcap_status() -> u32 {
    // SAFETY: a 32-bit read-only status register of the PS, inside the
    // device window (asserted below); reading it has no side effect.
    unsafe { core::ptr::read_volatile(CSU_PCAP_STATUS as usize as *const u32) }
}

const _: () = assert!(
    CSU_PCAP_STATUS >= crate::mmu::DEVICE_WINDOW.0 && CSU_PCAP_STATUS < crate::mmu::DEVICE_WINDOW.1
);

/// Check that the PL is configured, then `ID`/`VERSION`, and hold the fast
/// path in reset (before board DRAM is formatted); `false` after logging
/// what was found.
pub fn hold(regs: &mut FastPathRegs<Mmio>) -> bool {
    if let Err(e) = check_pl_done(pcap_status()) {
        log_error(e);
        return false;
    }
    match regs.hold() {
        Ok(()) => {
            defmt::info!(
                "fast path at {=u64:#x}: ID and VERSION {=u32} match, held in reset",
                BASE,
                clio_wire::fpregs::VERSION
            );
            true
        }
        Err(e) => {
            log_error(e);
            false
        }
    }
}

/// Write the configuration, release the reset and log the status (once
/// board DRAM is formatted); `false` after logging what went wrong.
pub fn release(regs: &mut FastPathRegs<Mmio>, cfg: &FastPathConfig) -> bool {
    match regs.configure(cfg) {
        Ok(st) => {
            defmt::info!(
                "fast path released: table {=u64:#x}, data {=u64:#x}..{=u64:#x}, MTU {=u32}, UDP port {=u16}, READ streams {=bool}",
                cfg.table_base,
                cfg.data_start,
                cfg.data_end,
                cfg.mtu,
                cfg.udp_port,
                cfg.read_streams
            );
            log_status(&st);
            true
        }
        Err(e) => {
            log_error(e);
            false
        }
    }
}

fn log_error(e: RegsError) {
    match e {
        RegsError::PlNotConfigured { pcap_status } => defmt::error!(
            "PL not configured: CSU PCAP_STATUS ({=u64:#x}) reads {=u32:#010x}, PL_DONE clear; load the bitstream (boot image or JTAG) and reset the APU; fast-path registers at {=u64:#x} not touched",
            CSU_PCAP_STATUS,
            pcap_status,
            BASE
        ),
        RegsError::Config(e) => defmt::error!(
            "fast path config: {=str} = {=u64:#x} cannot be written",
            e.field,
            e.value
        ),
        RegsError::Mismatch {
            register,
            offset,
            read,
            expected,
        } => defmt::error!(
            "fast-path register {=str} (+{=u32:#x}) at {=u64:#x} reads {=u32:#010x}, expected {=u32:#010x}: wrong bitstream, or the block is not at fastpath.regs_base; fast path not released",
            register,
            offset,
            BASE,
            read,
            expected
        ),
        RegsError::StillInReset { status } => defmt::error!(
            "fast-path STATUS {=u32:#x}: still in reset after CONTROL.RESET was cleared",
            status
        ),
    }
}

/// Log the status registers.
pub fn log_status(st: &FastPathStatus) {
    defmt::info!(
        "fast path: STATUS {=u32:#x} (idle {=bool}, poll busy {=bool}, link0 {=bool}, link1 {=bool}, rx overflow {=bool}, in reset {=bool}) drains {=u32} rx drops {=u32} tx drops {=u32}",
        st.status,
        st.idle(),
        st.poll_busy(),
        st.link_up(0),
        st.link_up(1),
        st.rx_overflow(),
        st.in_reset(),
        st.poll_count,
        st.rx_drops,
        st.tx_drops
    );
}
