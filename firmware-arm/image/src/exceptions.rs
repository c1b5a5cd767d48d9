//! Exception vectors: every exception is reported over defmt, then the core
//! halts (or, in test builds, the run ends through semihosting).
//!
//! Nothing is expected to trap in this image yet (interrupts stay masked), so
//! every entry is treated as fatal: the report names the vector, the syndrome
//! (ESR_EL1, decoded exception class), the fault address and the return
//! address, which is what an engineer needs from a board's UART.

use core::arch::global_asm;
use core::sync::atomic::{AtomicBool, Ordering};

global_asm!(
    r#"
    .section .text.vectors, "ax"
    .global __vectors
    .balign 2048
__vectors:
    .irp kind, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    .balign 0x80
    sub     sp, sp, #{frame}
    stp     x0, x1, [sp, #0]
    mov     x0, #\kind
    b       __exception_common
    .endr

__exception_common:
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x19, [sp, #144]
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
    mrs     x1, elr_el1
    stp     x30, x1, [sp, #240]
    mrs     x1, spsr_el1
    mrs     x2, esr_el1
    stp     x1, x2, [sp, #256]
    mrs     x1, far_el1
    str     x1, [sp, #272]
    mov     x1, sp
    bl      exception_report
1:  wfe
    b       1b
"#,
    frame = const core::mem::size_of::<TrapFrame>(),
);

/// Registers saved by the vector stub, in the order it stores them.
#[repr(C)]
pub struct TrapFrame {
    /// General-purpose registers x0..x30.
    pub x: [u64; 31],
    /// Return address of the exception (`ELR_EL1`).
    pub elr: u64,
    /// Saved program status (`SPSR_EL1`).
    pub spsr: u64,
    /// Exception syndrome (`ESR_EL1`).
    pub esr: u64,
    /// Fault address (`FAR_EL1`); meaningful for aborts only.
    pub far: u64,
    _pad: u64,
}

const _: () = assert!(core::mem::size_of::<TrapFrame>() % 16 == 0);

/// Set by the first exception, so a fault while reporting does not recurse.
static IN_EXCEPTION: AtomicBool = AtomicBool::new(false);

/// Name of a vector table entry (`kind` = 4 × source + type).
fn vector_name(kind: u64) -> defmt::Str {
    match kind {
        0 => defmt::intern!("sync, current EL with SP_EL0"),
        1 => defmt::intern!("IRQ, current EL with SP_EL0"),
        2 => defmt::intern!("FIQ, current EL with SP_EL0"),
        3 => defmt::intern!("SError, current EL with SP_EL0"),
        4 => defmt::intern!("sync, current EL with SP_ELx"),
        5 => defmt::intern!("IRQ, current EL with SP_ELx"),
        6 => defmt::intern!("FIQ, current EL with SP_ELx"),
        7 => defmt::intern!("SError, current EL with SP_ELx"),
        8 => defmt::intern!("sync, lower EL (AArch64)"),
        9 => defmt::intern!("IRQ, lower EL (AArch64)"),
        10 => defmt::intern!("FIQ, lower EL (AArch64)"),
        11 => defmt::intern!("SError, lower EL (AArch64)"),
        12 => defmt::intern!("sync, lower EL (AArch32)"),
        13 => defmt::intern!("IRQ, lower EL (AArch32)"),
        14 => defmt::intern!("FIQ, lower EL (AArch32)"),
        _ => defmt::intern!("SError, lower EL (AArch32)"),
    }
}

/// Name of an ESR exception class (ARM ARM D17.2.37).
fn class_name(ec: u8) -> defmt::Str {
    match ec {
        0x00 => defmt::intern!("unknown reason"),
        0x01 => defmt::intern!("WFI/WFE trapped"),
        0x07 => defmt::intern!("FP/SIMD access trapped"),
        0x0e => defmt::intern!("illegal execution state"),
        0x15 => defmt::intern!("SVC (AArch64)"),
        0x16 => defmt::intern!("HVC (AArch64)"),
        0x17 => defmt::intern!("SMC (AArch64)"),
        0x18 => defmt::intern!("MSR/MRS/system instruction trapped"),
        0x20 => defmt::intern!("instruction abort, lower EL"),
        0x21 => defmt::intern!("instruction abort, same EL"),
        0x22 => defmt::intern!("PC alignment fault"),
        0x24 => defmt::intern!("data abort, lower EL"),
        0x25 => defmt::intern!("data abort, same EL"),
        0x26 => defmt::intern!("SP alignment fault"),
        0x2f => defmt::intern!("SError"),
        0x30 | 0x31 => defmt::intern!("breakpoint"),
        0x32 | 0x33 => defmt::intern!("software step"),
        0x34 | 0x35 => defmt::intern!("watchpoint"),
        0x3c => defmt::intern!("BRK instruction"),
        _ => defmt::intern!("other"),
    }
}

/// Called by the vector stub with the vector index and the saved registers.
#[no_mangle]
extern "C" fn exception_report(kind: u64, frame: &TrapFrame) -> ! {
    if IN_EXCEPTION.swap(true, Ordering::AcqRel) {
        // A fault while reporting a fault: report nothing more.
        crate::halt(crate::EXIT_FAULT);
    }
    crate::logger::break_frame_of_this_core();
    let esr = frame.esr;
    let ec = ((esr >> 26) & 0x3f) as u8;
    let iss = (esr & 0x01ff_ffff) as u32;
    defmt::error!(
        "exception on core {=u8}: {=istr}; ESR_EL1={=u64:#010x} EC={=u8:#04x} ({=istr}) ISS={=u32:#x} FAR_EL1={=u64:#018x} ELR_EL1={=u64:#018x} SPSR_EL1={=u64:#x}",
        crate::core_id(),
        vector_name(kind),
        esr,
        ec,
        class_name(ec),
        iss,
        frame.far,
        frame.elr,
        frame.spsr
    );
    if ec == 0x24 || ec == 0x25 {
        // Data-abort ISS: fault status code and whether it was a write.
        defmt::error!(
            "data abort: DFSC={=u8:#04x} WnR={=bool} FAR valid={=bool}",
            (iss & 0x3f) as u8,
            iss & (1 << 6) != 0,
            iss & (1 << 10) == 0
        );
    }
    crate::halt(crate::EXIT_FAULT)
}
