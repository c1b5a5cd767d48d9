//! What the firmware must do itself when it is the EL3 software of the
//! ZynqMP APU (entered at EL3 from the FSBL, over JTAG, or in QEMU with
//! `secure=on`): the per-core setup that trusted firmware or the Xilinx
//! standalone BSP would otherwise have done, and starting cores 1–3.
//!
//! The image supplies the system registers ([`El3SysRegs`]) and the PS
//! registers ([`PsBus`]); tests supply fakes that record every access, so
//! the order and the values are checked without a board (QEMU does not
//! model `CPUECTLR_EL1`: it reads as a constant there).
//!
//! Sources checked (not copied): the Xilinx embeddedsw standalone BSP,
//! `lib/bsp/standalone/src/arm/ARMv8/64bit/gcc/boot.S` (at EL3, before the
//! MMU and caches are enabled: writes `CNTFRQ_EL0` from the design's
//! timestamp clock, then sets `CPUECTLR_EL1.SMPEN`), its `xtime_l.c`
//! (`XTime_StartTimer`: IOU_SCNTRS frequency and enable, only if the counter
//! is stopped), and the FSBL's `XFsbl_PowerUpIsland` (`PMU_GLOBAL`
//! `REQ_PWRUP_INT_EN`, `REQ_PWRUP_TRIG`, poll `REQ_PWRUP_STATUS`; skipped
//! when `CSU.VERSION` reports the QEMU platform). Register addresses are
//! from UG1087.

/// `CPUECTLR_EL1.SMPEN` (bit 6): take part in the cluster's coherency.
/// Without it a core's data caches are not kept coherent with the other
/// cores', so exclusive loads/stores on shared cacheable memory (the
/// firmware's ticket lock, the log lock) do not work across cores.
pub const CPUECTLR_SMPEN: u64 = 1 << 6;

/// System registers the EL3 setup touches (the image implements them with
/// `mrs`/`msr` of `S3_1_C15_C2_1` and `CNTFRQ_EL0`).
pub trait El3SysRegs {
    /// Read `CPUECTLR_EL1`.
    fn read_cpuectlr(&mut self) -> u64;
    /// Write `CPUECTLR_EL1`.
    fn write_cpuectlr(&mut self, value: u64);
    /// Read `CNTFRQ_EL0`.
    fn read_cntfrq(&mut self) -> u64;
    /// Write `CNTFRQ_EL0` (writable only at the highest EL, here EL3).
    fn write_cntfrq(&mut self, value: u64);
}

/// What [`el3_cpu_setup`] found and wrote on one core (for the boot log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct El3Setup {
    /// `CPUECTLR_EL1` before.
    pub cpuectlr_before: u64,
    /// `CPUECTLR_EL1` as written (with [`CPUECTLR_SMPEN`]).
    pub cpuectlr_written: u64,
    /// `CNTFRQ_EL0` before (UNKNOWN at reset on the A53).
    pub cntfrq_before: u64,
    /// `CNTFRQ_EL0` as written.
    pub cntfrq_written: u64,
}

/// Per-core EL3 setup, to run on every core that enters at EL3 before it
/// enables its MMU and caches: `CNTFRQ_EL0` = `counter_hz` (its reset
/// value is UNKNOWN and only EL3 may write it; lower ELs only read it),
/// then `CPUECTLR_EL1.SMPEN` set, other bits kept.
pub fn el3_cpu_setup<R: El3SysRegs + ?Sized>(regs: &mut R, counter_hz: u64) -> El3Setup {
    let cntfrq_before = regs.read_cntfrq();
    regs.write_cntfrq(counter_hz);
    let cpuectlr_before = regs.read_cpuectlr();
    let cpuectlr_written = cpuectlr_before | CPUECTLR_SMPEN;
    regs.write_cpuectlr(cpuectlr_written);
    El3Setup {
        cpuectlr_before,
        cpuectlr_written,
        cntfrq_before,
        cntfrq_written: counter_hz,
    }
}

/// 32-bit accesses to PS registers at their physical addresses.
pub trait PsBus {
    /// Read the word at `addr`.
    fn read32(&mut self, addr: u64) -> u32;
    /// Write `value` to the word at `addr`.
    fn write32(&mut self, addr: u64, value: u32);
}

/// `CSU.VERSION` (platform in bits 15:12).
pub const CSU_VERSION: u64 = 0xFFCA_0044;
/// `CSU.VERSION` platform value of QEMU's model (embeddedsw
/// `XPLAT_ZYNQ_ULTRA_MPQEMU`).
pub const PLATFORM_QEMU: u32 = 3;
/// `PMU_GLOBAL.REQ_PWRUP_STATUS`: a bit stays set while its request runs.
pub const PMU_REQ_PWRUP_STATUS: u64 = 0xFFD8_0110;
/// `PMU_GLOBAL.REQ_PWRUP_INT_EN`.
pub const PMU_REQ_PWRUP_INT_EN: u64 = 0xFFD8_0118;
/// `PMU_GLOBAL.REQ_PWRUP_TRIG`.
pub const PMU_REQ_PWRUP_TRIG: u64 = 0xFFD8_0120;
/// `PMU_GLOBAL.PWR_STATE` bit of A53 core `n` is bit `n` (`ACPUn`).
pub const fn pwr_acpu(core: u32) -> u32 {
    1 << core
}
/// `APU.RVBARADDR0L`; core n's low/high words are at +8n / +8n+4.
pub const RVBARADDR0L: u64 = 0xFD5C_0040;
/// `CRF_APB.RST_FPD_APU`.
pub const RST_FPD_APU: u64 = 0xFD1A_0104;
/// `ACPUn_RESET` is bit n of [`RST_FPD_APU`].
pub const ACPU0_RESET: u32 = 1 << 0;
/// `ACPUn_PWRON_RESET` is bit 10 + n of [`RST_FPD_APU`].
pub const ACPU0_PWRON_RESET: u32 = 1 << 10;
/// `IOU_SCNTRS.COUNTER_CONTROL_REGISTER` (bit 0: EN).
pub const SCNTRS_CNTCR: u64 = 0xFF26_0000;
/// `IOU_SCNTRS.BASE_FREQUENCY_ID_REGISTER`.
pub const SCNTRS_FREQ: u64 = 0xFF26_0020;

/// Why a core could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApuError {
    /// The PMU did not finish the power-up request within the poll budget
    /// (no PMU firmware/ROM answering, or the island failed):
    /// `REQ_PWRUP_STATUS` still had `status` set.
    PowerUpTimeout {
        /// The core.
        core: u32,
        /// The last `REQ_PWRUP_STATUS` value.
        status: u32,
    },
}

/// How [`power_up_and_release`] started a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerUp {
    /// The PMU was asked to power the core's island and answered after
    /// `polls` reads of `REQ_PWRUP_STATUS`.
    Requested {
        /// Status reads until the request finished.
        polls: u32,
    },
    /// `CSU.VERSION` says QEMU, which has no PMU: skipped, as the FSBL does.
    SkippedQemu,
}

/// The platform field of a `CSU.VERSION` value.
pub fn platform(csu_version: u32) -> u32 {
    (csu_version >> 12) & 0xf
}

/// Start core `core` (1..=3) at `entry` without PSCI: ask the PMU to power
/// its island (the FSBL powers the APU islands before it hands off; a core
/// released from reset while powered down never runs), then set its reset
/// vector and release `ACPUn_RESET`/`ACPUn_PWRON_RESET`. `max_polls` bounds
/// the wait for the PMU.
pub fn power_up_and_release<B: PsBus + ?Sized>(
    bus: &mut B,
    core: u32,
    entry: u64,
    max_polls: u32,
) -> Result<PowerUp, ApuError> {
    let mask = pwr_acpu(core);
    let how = if platform(bus.read32(CSU_VERSION)) == PLATFORM_QEMU {
        PowerUp::SkippedQemu
    } else {
        bus.write32(PMU_REQ_PWRUP_INT_EN, mask);
        bus.write32(PMU_REQ_PWRUP_TRIG, mask);
        let mut polls = 0;
        loop {
            let status = bus.read32(PMU_REQ_PWRUP_STATUS);
            polls += 1;
            if status & mask == 0 {
                break;
            }
            if polls >= max_polls {
                return Err(ApuError::PowerUpTimeout { core, status });
            }
        }
        PowerUp::Requested { polls }
    };
    let rvbar = RVBARADDR0L + 8 * u64::from(core);
    bus.write32(rvbar, entry as u32);
    bus.write32(rvbar + 4, (entry >> 32) as u32);
    let reset = bus.read32(RST_FPD_APU);
    let core_bits = (ACPU0_RESET | ACPU0_PWRON_RESET) << core;
    bus.write32(RST_FPD_APU, reset & !core_bits);
    Ok(how)
}

/// Start the system counter (IOU_SCNTRS) if it is stopped, with
/// `counter_hz` as its base frequency, as the BSP's `XTime_StartTimer`
/// does at EL3: after a JTAG boot (psu_init, no FSBL) nothing else starts
/// it, and `CNTPCT_EL0` would stay 0 (every timeout in the image would
/// never expire). Returns whether it had to be started.
pub fn start_system_counter<B: PsBus + ?Sized>(bus: &mut B, counter_hz: u32) -> bool {
    if bus.read32(SCNTRS_CNTCR) & 1 != 0 {
        return false;
    }
    bus.write32(SCNTRS_FREQ, counter_hz);
    bus.write32(SCNTRS_CNTCR, 1);
    true
}
