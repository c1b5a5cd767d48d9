//! PSCI calls (SMC conduit) to the firmware below EL1: ARM Trusted Firmware
//! on a board, or the emulator's built-in PSCI under QEMU.

/// `PSCI_VERSION`.
const PSCI_VERSION: u32 = 0x8400_0000;
/// `CPU_ON` (SMC64).
const CPU_ON_64: u32 = 0xc400_0003;

/// PSCI return codes (PSCI spec, table 5.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum PsciError {
    /// `NOT_SUPPORTED`.
    NotSupported,
    /// `INVALID_PARAMETERS`.
    InvalidParameters,
    /// `DENIED`.
    Denied,
    /// `ALREADY_ON`.
    AlreadyOn,
    /// `ON_PENDING`.
    OnPending,
    /// `INTERNAL_FAILURE`.
    InternalFailure,
    /// `NOT_PRESENT`.
    NotPresent,
    /// `DISABLED`.
    Disabled,
    /// `INVALID_ADDRESS`.
    InvalidAddress,
    /// Any other negative value.
    Other(i64),
}

impl PsciError {
    fn from_code(code: i64) -> Self {
        match code {
            -1 => Self::NotSupported,
            -2 => Self::InvalidParameters,
            -3 => Self::Denied,
            -4 => Self::AlreadyOn,
            -5 => Self::OnPending,
            -6 => Self::InternalFailure,
            -7 => Self::NotPresent,
            -8 => Self::Disabled,
            -9 => Self::InvalidAddress,
            c => Self::Other(c),
        }
    }
}

fn smc(function: u32, a1: u64, a2: u64, a3: u64) -> i64 {
    let ret: i64;
    // SAFETY: SMC calling convention: x0..x3 in, x0 out; the callee may
    // clobber x0..x17, which are declared as such.
    unsafe {
        core::arch::asm!(
            "smc #0",
            inlateout("x0") u64::from(function) => ret,
            inlateout("x1") a1 => _,
            inlateout("x2") a2 => _,
            inlateout("x3") a3 => _,
            out("x4") _, out("x5") _, out("x6") _, out("x7") _,
            out("x8") _, out("x9") _, out("x10") _, out("x11") _,
            out("x12") _, out("x13") _, out("x14") _, out("x15") _,
            out("x16") _, out("x17") _,
            options(nostack)
        );
    }
    ret
}

/// PSCI version as `(major, minor)`.
pub fn version() -> (u16, u16) {
    let v = smc(PSCI_VERSION, 0, 0, 0) as u64;
    ((v >> 16) as u16, v as u16)
}

/// Start core `mpidr` at `entry` (a physical address), passing `context` in x0.
pub fn cpu_on(mpidr: u64, entry: u64, context: u64) -> Result<(), PsciError> {
    match smc(CPU_ON_64, mpidr, entry, context) {
        0 => Ok(()),
        code => Err(PsciError::from_code(code)),
    }
}
