//! Identity-mapped stage-1 translation at EL1, from the board config.
//!
//! The MMU is on for three reasons: caches (the slow path is CPU-bound),
//! exclusive loads/stores (the A53 needs Normal cacheable memory for the
//! spin locks and atomics used across cores), and memory types — the ring
//! region is shared with the FPGA, which does not snoop the A53 caches, so it
//! is mapped Normal non-cacheable.
//!
//! Layout: 4 KiB granule, 39-bit VA (T0SZ = 25), so the walk starts at level
//! 1 (1 GiB entries). The low 4 GiB are mapped through four level-2 tables of
//! 2 MiB blocks:
//! - board DRAM (`dram`): Normal write-back, inner shareable;
//! - the ring region (`regions.rings`): Normal non-cacheable;
//! - `DEVICE_WINDOW` (PL AXI ports, QSPI, PCIe low, the PS peripherals with
//!   the UART and the GIC): Device-nGnRnE, never executable;
//! - everything else is unmapped, so a stray access faults at once.

use core::cell::UnsafeCell;

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{ReadWriteable, Writeable, MAIR_EL1, SCTLR_EL1, TCR_EL1, TTBR0_EL1};

use clio_config::Region;

use crate::board;

const BLOCK_2M: u64 = 2 << 20;
const GIB: u64 = 1 << 30;
/// Gigabytes mapped through level-2 tables.
const MAPPED_GIB: usize = 4;

/// ZynqMP address window of device registers below 4 GiB (UG1085 table 10-1):
/// PL AXI ports at 0x8000_0000 up to the PS peripherals ending at 4 GiB.
pub const DEVICE_WINDOW: (u64, u64) = (0x8000_0000, 0x1_0000_0000);

/// An address no table maps (the first byte above the low 4 GiB): an access
/// takes a level-1 translation fault.
#[cfg(feature = "fault-test")]
pub const UNMAPPED_PROBE: u64 = MAPPED_GIB as u64 * GIB;

/// MAIR_EL1 attribute indices.
const ATTR_DEVICE: u64 = 0;
const ATTR_NORMAL_WB: u64 = 1;
const ATTR_NORMAL_NC: u64 = 2;

const DESC_BLOCK: u64 = 0b01;
const DESC_TABLE: u64 = 0b11;
const AF: u64 = 1 << 10;
const SH_INNER: u64 = 0b11 << 8;
const PXN: u64 = 1 << 53;
const UXN: u64 = 1 << 54;

/// Level-2 block descriptor for the 2 MiB at `pa`, or 0 (invalid).
const fn block(pa: u64) -> u64 {
    let this = Region {
        base: pa,
        size: BLOCK_2M,
    };
    let in_dram = board::BOARD.dram.region().contains(&this);
    let attrs = if in_dram && board::RINGS.overlaps(&this) {
        (ATTR_NORMAL_NC << 2) | SH_INNER | UXN
    } else if in_dram {
        (ATTR_NORMAL_WB << 2) | SH_INNER
    } else if pa >= DEVICE_WINDOW.0 && pa + BLOCK_2M <= DEVICE_WINDOW.1 {
        (ATTR_DEVICE << 2) | PXN | UXN
    } else {
        return 0;
    };
    pa | attrs | AF | DESC_BLOCK
}

#[repr(C, align(4096))]
struct Table([u64; 512]);

/// The level-2 tables, fixed at build time from the board config.
static L2: [Table; MAPPED_GIB] = {
    let mut t = [const { Table([0; 512]) }; MAPPED_GIB];
    let mut g = 0;
    while g < MAPPED_GIB {
        let mut i = 0;
        while i < 512 {
            t[g].0[i] = block(g as u64 * GIB + i as u64 * BLOCK_2M);
            i += 1;
        }
        g += 1;
    }
    t
};

// The memory map must have been laid out for 2 MiB blocks (build.rs checks
// the config keys; this keeps the tables honest if that check changes).
const _: () = {
    assert!(board::DRAM_BASE % BLOCK_2M == 0 && board::DRAM_SIZE % BLOCK_2M == 0);
    assert!(board::RINGS.base % BLOCK_2M == 0 && board::RINGS.size % BLOCK_2M == 0);
    assert!(board::DRAM_BASE + board::DRAM_SIZE <= MAPPED_GIB as u64 * GIB);
};

/// The level-1 table: points at the level-2 tables, so it is filled at run
/// time (a static's address is not a constant the compiler can store).
struct L1(UnsafeCell<Table>);

// SAFETY: written once by the primary core before any core enables the MMU.
unsafe impl Sync for L1 {}

static L1_TABLE: L1 = L1(UnsafeCell::new(Table([0; 512])));

/// Fill the level-1 table. Primary core only, before any `enable`.
pub fn build_tables() {
    // SAFETY: no core walks the tables yet, and only the primary runs.
    let l1 = unsafe { &mut *L1_TABLE.0.get() };
    for (entry, l2) in l1.0.iter_mut().zip(L2.iter()) {
        *entry = (l2.0.as_ptr() as u64) | DESC_TABLE;
    }
    barrier::dsb(barrier::SY);
}

/// Turn on translation and caches on this core. The tables must be built.
/// Call before the core touches memory shared with other cores.
pub fn enable() {
    MAIR_EL1.set(
        (0x00 << (8 * ATTR_DEVICE))
            | (0xff << (8 * ATTR_NORMAL_WB))
            | (0x44 << (8 * ATTR_NORMAL_NC)),
    );
    TTBR0_EL1.set_baddr(L1_TABLE.0.get() as u64);
    TCR_EL1.write(
        TCR_EL1::T0SZ.val(25)
            + TCR_EL1::TG0::KiB_4
            + TCR_EL1::IRGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::ORGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::SH0::Inner
            + TCR_EL1::EPD1::DisableTTBR1Walks
            + TCR_EL1::IPS::Bits_40,
    );
    barrier::isb(barrier::SY);
    // SAFETY: drops TLB entries of this core; nothing is cached from the
    // MMU-off state that must survive.
    unsafe { core::arch::asm!("tlbi vmalle1", options(nostack)) };
    barrier::dsb(barrier::NSH);
    barrier::isb(barrier::SY);
    // Keep the RES1 bits boot.rs set.
    SCTLR_EL1.modify(
        SCTLR_EL1::M::Enable
            + SCTLR_EL1::C::Cacheable
            + SCTLR_EL1::I::Cacheable
            + SCTLR_EL1::SA::Enable
            + SCTLR_EL1::A::Disable,
    );
    barrier::isb(barrier::SY);
}
