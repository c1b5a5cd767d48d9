//! Clio memory-board firmware for the ZCU106's Cortex-A53 cluster.
//!
//! Boots every core into EL1, reports over a defmt log on the console UART,
//! and reports any exception with its syndrome; the lab image then serves
//! the FPGA↔ARM rings with the slow-path library (core 0 polls, cores 1–3
//! work, `service.rs`). See README.md for the boot flow, the memory map and
//! the ring service.
#![no_std]
#![no_main]

mod apu;
mod board;
mod boot;
mod buildinfo;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod cache;
mod el3;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod entropy;
mod exceptions;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod fastpath;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod gic;
mod logger;
mod mmu;
mod psci;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod ringmem;
#[cfg(any(feature = "test-mode", feature = "fault-test"))]
mod semihosting;
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
mod service;
mod timer;
mod uart;

use core::sync::atomic::{AtomicU32, Ordering};

use aarch64_cpu::registers::{Readable, MPIDR_EL1};
use embedded_hal::delay::DelayNs;

/// Exit status of a test build after an exception was reported.
pub const EXIT_FAULT: u32 = 3;
/// Exit status of a test build after a panic.
const EXIT_PANIC: u32 = 4;
/// Status the ring service halts with when it cannot start.
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
pub const EXIT_SERVICE: u32 = 7;
/// Exit status of a test build whose secondary cores did not come up.
#[cfg(all(feature = "test-mode", not(feature = "fault-test")))]
const EXIT_CORES: u32 = 5;

/// Exit status of the fault test when the faulting load did not fault.
#[cfg(feature = "fault-test")]
const EXIT_NO_FAULT: u32 = 6;

/// How long the primary waits for secondary cores to report in.
const SECONDARY_TIMEOUT_US: u64 = 2_000_000;

/// Bit n set once core n runs Rust code at EL1.
static CORES_ONLINE: AtomicU32 = AtomicU32::new(0);

/// Index of the running core within the cluster (MPIDR_EL1.Aff0).
pub fn core_id() -> u8 {
    (MPIDR_EL1.get() & 0xff) as u8
}

/// Stop this core. Test builds end the emulator run with `code`; release
/// builds wait for a debugger or a reset.
pub fn halt(code: u32) -> ! {
    #[cfg(any(feature = "test-mode", feature = "fault-test"))]
    semihosting::exit(code);
    #[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
    {
        let _ = code;
        loop {
            aarch64_cpu::asm::wfe();
        }
    }
}

/// Primary core entry, from `_start` at EL1 with `.bss` zeroed.
#[no_mangle]
extern "C" fn kmain(entry_el: u64) -> ! {
    // Atomics and the logger's lock need the MMU on (cacheable memory).
    mmu::build_tables();
    mmu::enable();
    CORES_ONLINE.fetch_or(1, Ordering::AcqRel);
    // Secure EL1 below our own EL3: nothing may have started the system
    // counter (JTAG boot, no FSBL); CNTPCT_EL0 would never move.
    let counter_started = entry_el == 3 && apu::start_system_counter();
    let uart_ok = logger::init();
    let build_id = buildinfo::BuildId::of_this_image();
    defmt::info!(
        "clio-firmware {=str} board {=str} build {=str} config {=str}: entered EL{=u8}, running EL1",
        env!("CARGO_PKG_VERSION"),
        board::BOARD_NAME,
        build_id.as_ref().map_or("unknown", |b| b.as_str()),
        board::CONFIG_HASH,
        entry_el as u8
    );
    if let Some((cpuectlr, cntfrq)) = el3::setup_of(0) {
        // SMPEN and CNTFRQ as written at EL3 (QEMU reads CPUECTLR_EL1 as a
        // constant 0 and ignores the write, so only the value written shows).
        defmt::info!(
            "EL3 setup core 0: CPUECTLR_EL1 {=u64:#x} -> {=u64:#x} (SMPEN set), CNTFRQ_EL0 {=u64} -> {=u64} Hz{=str}",
            cpuectlr,
            cpuectlr | clio_slowpath::apu_boot::CPUECTLR_SMPEN,
            cntfrq,
            board::COUNTER_HZ,
            if counter_started { ", system counter started" } else { "" }
        );
    }
    if !uart_ok {
        defmt::warn!(
            "console baud rate {=u32} not reachable from {=u32} Hz; UART left as the loader set it",
            board::CONSOLE_BAUD,
            board::CONSOLE_UART_REF_HZ
        );
    }
    defmt::info!(
        "image {=u64:#x}..{=u64:#x}, {=u32} cores, {=u32} KiB stack each, counter {=u64} Hz",
        board::FIRMWARE_BASE,
        board::FIRMWARE_BASE + board::FIRMWARE_SIZE,
        board::NUM_CORES,
        board::STACK_SIZE_PER_CORE / 1024,
        timer::frequency()
    );
    defmt::info!(
        "DRAM {=u64:#x}+{=u64:#x}, rings {=u64:#x}+{=u64:#x}: RX {=u64:#x} x{=u32}, TX {=u64:#x} x{=u32}, {=u32} B slots",
        board::DRAM_BASE,
        board::DRAM_SIZE,
        board::RINGS.base,
        board::RINGS.size,
        board::RX_RING.base,
        board::RX_RING.slots,
        board::TX_RING.base,
        board::TX_RING.slots,
        board::RING_SLOT_BYTES
    );

    let online = start_secondaries(entry_el);
    after_boot(online)
}

/// Fault test: fault on purpose; the exception report ends the run.
#[cfg(feature = "fault-test")]
fn after_boot(_online: u32) -> ! {
    trigger_data_abort()
}

/// Boot test: every core the boot path can start must be online, then the
/// run ends with status 0.
#[cfg(all(feature = "test-mode", not(feature = "fault-test")))]
fn after_boot(online: u32) -> ! {
    let expected = all_cores_mask();
    if online != expected {
        defmt::error!(
            "cores online {=u32:#b}, expected {=u32:#b}",
            online,
            expected
        );
        halt(EXIT_CORES);
    }
    defmt::info!("boot test passed");
    semihosting::exit(0)
}

/// Lab image: serve the rings. Cores that did not come up leave their
/// worker queues unserved, so the service needs all of them.
#[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
fn after_boot(online: u32) -> ! {
    let expected = all_cores_mask();
    if online != expected {
        defmt::error!(
            "cores online {=u32:#b}, expected {=u32:#b}: not serving",
            online,
            expected
        );
        halt(EXIT_SERVICE);
    }
    service::run_primary()
}

fn all_cores_mask() -> u32 {
    (1u32 << board::NUM_CORES) - 1
}

/// Start cores 1.. and wait for them to report in: through PSCI `CPU_ON`
/// when firmware below us provides it (entry at EL1/EL2), else (entry at EL3)
/// through the ZynqMP reset controller. Returns the mask of cores online.
fn start_secondaries(entry_el: u64) -> u32 {
    if entry_el == 3 {
        defmt::info!("entered at EL3: powering cores up through the PMU, releasing them through RVBAR and RST_FPD_APU");
        for core in 1..board::NUM_CORES {
            match apu::release(core, boot::secondary_entry()) {
                Ok(clio_slowpath::apu_boot::PowerUp::Requested { polls }) => defmt::info!(
                    "core {=u32}: PMU power-up done after {=u32} status reads, released",
                    core,
                    polls
                ),
                Ok(clio_slowpath::apu_boot::PowerUp::SkippedQemu) => defmt::info!(
                    "core {=u32}: CSU.VERSION says QEMU, no PMU power-up; released",
                    core
                ),
                Err(clio_slowpath::apu_boot::ApuError::PowerUpTimeout { core, status }) => {
                    defmt::error!(
                        "core {=u32}: PMU power-up request not finished (REQ_PWRUP_STATUS {=u32:#x}); core left in reset (is the PMU firmware running?)",
                        core,
                        status
                    )
                }
            }
        }
    } else {
        let (major, minor) = psci::version();
        defmt::info!("PSCI {=u16}.{=u16}", major, minor);
        let cluster = MPIDR_EL1.get() & 0xff_00ff_ff00;
        for core in 1..board::NUM_CORES {
            let mpidr = cluster | u64::from(core);
            if let Err(e) = psci::cpu_on(mpidr, boot::secondary_entry(), u64::from(core)) {
                defmt::error!("CPU_ON core {=u32}: {}", core, e);
            }
        }
    }
    let deadline = timer::Deadline::after_micros(SECONDARY_TIMEOUT_US);
    let expected = all_cores_mask();
    let mut delay = timer::Delay;
    loop {
        let online = CORES_ONLINE.load(Ordering::Acquire);
        if online == expected || deadline.expired() {
            defmt::info!("cores online {=u32:#b}", online);
            return online;
        }
        delay.delay_us(10);
    }
}

/// Secondary core entry, from `_secondary_start` at EL1 on its own stack.
#[no_mangle]
extern "C" fn secondary_main(core: u64, entry_el: u64) -> ! {
    // First, so this core sees shared data through the same caches as the
    // primary (the primary built the tables before starting it).
    mmu::enable();
    match el3::setup_of(core as usize) {
        Some((cpuectlr, cntfrq)) => defmt::info!(
            "core {=u8} online (entered EL{=u8}; CPUECTLR_EL1 {=u64:#x} -> {=u64:#x} SMPEN set, CNTFRQ_EL0 {=u64} -> {=u64} Hz)",
            core as u8,
            entry_el as u8,
            cpuectlr,
            cpuectlr | clio_slowpath::apu_boot::CPUECTLR_SMPEN,
            cntfrq,
            board::COUNTER_HZ
        ),
        None => defmt::info!(
            "core {=u8} online (entered EL{=u8})",
            core as u8,
            entry_el as u8
        ),
    }
    CORES_ONLINE.fetch_or(1 << core, Ordering::AcqRel);
    #[cfg(not(any(feature = "test-mode", feature = "fault-test")))]
    service::run_worker(core as usize);
    #[cfg(any(feature = "test-mode", feature = "fault-test"))]
    loop {
        aarch64_cpu::asm::wfe();
    }
}

/// Load from an address no translation table maps: a synchronous data abort
/// (level-1 translation fault) the exception vectors must report.
#[cfg(feature = "fault-test")]
fn trigger_data_abort() -> ! {
    defmt::info!("fault test: loading from {=u64:#x}", mmu::UNMAPPED_PROBE);
    // SAFETY: deliberately faulting load; the handler never returns here.
    let v = unsafe { core::ptr::read_volatile(mmu::UNMAPPED_PROBE as *const u64) };
    defmt::error!("fault test: load returned {=u64:#x} without faulting", v);
    halt(EXIT_NO_FAULT)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    match info.location() {
        Some(l) => defmt::error!("panic at {=str}:{=u32}", l.file(), l.line()),
        None => defmt::error!("panic"),
    }
    halt(EXIT_PANIC)
}
