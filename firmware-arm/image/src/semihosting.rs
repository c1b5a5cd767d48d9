//! ARM semihosting, used only by test builds to end a QEMU run with a status.
//!
//! On a board without a debugger attached `HLT #0xF000` is an undefined
//! instruction, so release images never call this.

/// `SYS_EXIT`: report that the application stopped.
const SYS_EXIT: u64 = 0x18;
/// `ADP_Stopped_ApplicationExit`: a normal exit carrying a status code.
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x2_0026;

/// End the run with `code` as the emulator's exit status (AArch64 extended
/// `SYS_EXIT`: the parameter block carries the reason and the code).
pub fn exit(code: u32) -> ! {
    let block = [ADP_STOPPED_APPLICATION_EXIT, u64::from(code)];
    // SAFETY: semihosting call; the host reads the two-word block.
    unsafe {
        core::arch::asm!(
            "hlt #0xf000",
            in("x0") SYS_EXIT,
            in("x1") block.as_ptr(),
            options(nostack)
        );
    }
    // A host that ignores the request: stop here.
    loop {
        aarch64_cpu::asm::wfe();
    }
}
