//! Reset entry: exception-level handling, per-core stacks, `.bss`, FP/SIMD.
//!
//! Every core runs at EL1. A core that enters at EL3 (no trusted firmware
//! below us, e.g. `-M xlnx-zcu102,secure=on` or a board booted straight from
//! the FSBL) drops to Secure EL1; a core that enters at EL2 (a hypervisor-capable
//! boot without EL3 firmware taking it lower) drops to EL1. EL1 is where the
//! firmware would run under ARM Trusted Firmware on the board, so one vector
//! table (`VBAR_EL1`) and one set of system registers serve every boot path.
//!
//! Entered at EL3, each core first runs `el3_setup` (el3.rs): `CNTFRQ_EL0`
//! and `CPUECTLR_EL1.SMPEN`, which no firmware below us has set, before its
//! MMU and caches are on (the cores share a ticket lock that needs hardware
//! coherency).
//!
//! The primary core (MPIDR.Aff0 = 0) zeroes `.bss` and calls `kmain`.
//! Secondary cores enter at `_secondary_start` (passed to PSCI `CPU_ON`, or
//! set as their reset vector when the image releases them itself, apu.rs);
//! a secondary that reaches `_start` instead (a loader that releases all
//! cores at the image entry) parks in `wfe` so it cannot race the primary.

use core::arch::global_asm;

global_asm!(
    r#"
    .section .text.boot, "ax"
    .global _start
    .global _secondary_start

_start:
    mrs     x19, mpidr_el1
    and     x19, x19, #0xff
    cbnz    x19, .Lpark
    mrs     x20, CurrentEL
    lsr     x20, x20, #2
    bl      .Lto_el1
    bl      .Lcore_setup
    /* Zero .bss before any Rust code reads a static. */
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
1:  cmp     x0, x1
    b.hs    2f
    stp     xzr, xzr, [x0], #16
    b       1b
2:  mov     x0, x20
    bl      kmain
    b       .Lpark

_secondary_start:
    mrs     x19, mpidr_el1
    and     x19, x19, #0xff
    mrs     x20, CurrentEL
    lsr     x20, x20, #2
    bl      .Lto_el1
    bl      .Lcore_setup
    mov     x0, x19
    mov     x1, x20
    bl      secondary_main
    b       .Lpark

/* Continue at EL1 (return address in x30). Clobbers x0-x3, x21 and,
   from EL3, what el3_setup clobbers (not x19/x20: callee-saved). */
.Lto_el1:
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    cmp     x0, #3
    b.eq    .Lfrom_el3
    cmp     x0, #2
    b.eq    .Lfrom_el2
    ret
.Lfrom_el3:
    msr     cptr_el3, xzr              /* no FP/SIMD traps to EL3 */
    isb
    /* Per-core EL3 setup in Rust (el3.rs: CNTFRQ_EL0, CPUECTLR_EL1.SMPEN),
       before this core turns on its MMU and caches, on this core's stack
       (SP_EL3; EL1 reuses it from the top afterwards). x19 = core. */
    ldr     x0, =_num_cores
    cmp     x19, x0
    b.hs    .Lpark                     /* a core the config does not know */
    ldr     x1, =__stacks_start
    ldr     x2, =_stack_size_per_core
    add     x3, x19, #1
    madd    x1, x2, x3, x1
    mov     sp, x1
    mov     x21, x30
    mov     x0, x19
    bl      el3_setup
    mov     x30, x21
    mov     x0, #(1 << 10)             /* SCR_EL3.RW: EL1 is AArch64; NS = 0 */
    msr     scr_el3, x0
    b       .Leret_el1
.Lfrom_el2:
    mov     x0, #(1 << 31)             /* HCR_EL2.RW: EL1 is AArch64 */
    msr     hcr_el2, x0
    mov     x0, #0x33ff                /* CPTR_EL2: RES1 bits, TFP = 0 */
    msr     cptr_el2, x0
    mov     x0, #3                     /* CNTHCTL_EL2: EL1 may use the physical counter and timer */
    msr     cnthctl_el2, x0
    msr     cntvoff_el2, xzr
.Leret_el1:
    ldr     x0, =0x30d00800            /* SCTLR_EL1 RES1 bits: MMU, caches, alignment checks off */
    msr     sctlr_el1, x0
    mov     x0, #0x3c5                 /* SPSR: D, A, I, F masked; EL1h */
    mrs     x1, CurrentEL
    cmp     x1, #(3 << 2)
    b.ne    1f
    msr     spsr_el3, x0
    msr     elr_el3, x30
    eret
1:  msr     spsr_el2, x0
    msr     elr_el2, x30
    eret

/* At EL1: FP/SIMD on, vectors, stack of core x19. Clobbers x0-x3. */
.Lcore_setup:
    ldr     x0, =_num_cores
    cmp     x19, x0
    b.hs    .Lpark                     /* a core the config does not know */
    mov     x0, #(3 << 20)             /* CPACR_EL1.FPEN: no FP/SIMD traps */
    msr     cpacr_el1, x0
    ldr     x0, =__vectors
    msr     vbar_el1, x0
    ldr     x1, =__stacks_start
    ldr     x2, =_stack_size_per_core
    add     x3, x19, #1
    madd    x1, x2, x3, x1
    mov     sp, x1
    isb
    ret

.Lpark:
    wfe
    b       .Lpark
    .ltorg
"#
);

/// Address of the secondary-core entry point, for PSCI `CPU_ON`.
pub fn secondary_entry() -> u64 {
    extern "C" {
        fn _secondary_start();
    }
    _secondary_start as *const () as usize as u64
}
