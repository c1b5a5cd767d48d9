//! defmt global logger over the console UART, with a generic-timer timestamp.
//!
//! Frames are rzcobs-encoded (defmt's default encoding, recorded in the ELF
//! so the host decoder picks the matching framing). A spin lock owned by one
//! core at a time serialises frames from all cores; interrupts stay masked in
//! this image, so a frame is never interrupted except by an exception, which
//! breaks the frame (see [`break_frame_of_this_core`]).

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, Ordering};

use crate::uart::Uart;

defmt::timestamp!("{=u64:us}", crate::timer::micros());

/// Owner of the logger: a core id, or `FREE`.
static OWNER: AtomicU8 = AtomicU8::new(FREE);
const FREE: u8 = u8::MAX;

/// State touched only by the core that owns `OWNER`.
struct State {
    encoder: defmt::Encoder,
    uart: Uart,
}

struct Shared(UnsafeCell<State>);

// SAFETY: `State` is only accessed by the core holding `OWNER`.
unsafe impl Sync for Shared {}

static STATE: Shared = Shared(UnsafeCell::new(State {
    encoder: defmt::Encoder::new(),
    // SAFETY: the board config names the console UART's register block.
    uart: unsafe { Uart::new(crate::board::CONSOLE_UART_BASE) },
}));

/// Configure the console UART. Call once on the primary core before logging.
/// Returns `false` if the configured baud rate cannot be reached.
///
/// Ends with a frame delimiter, so text an earlier boot stage left on the
/// line (FSBL or ATF banners) is not glued to the first frame.
pub fn init() -> bool {
    lock();
    // SAFETY: this core holds the lock.
    let state = unsafe { &mut *STATE.0.get() };
    let ok = state.uart.init(
        crate::board::CONSOLE_UART_REF_HZ,
        crate::board::CONSOLE_BAUD,
    );
    state.uart.write_byte(0);
    unlock();
    ok
}

fn lock() {
    let me = crate::core_id();
    while OWNER
        .compare_exchange_weak(FREE, me, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
}

fn unlock() {
    OWNER.store(FREE, Ordering::Release);
}

/// Called on exception entry: if this core was inside a frame, end it with a
/// frame delimiter so the host decoder resynchronises on the next frame, and
/// release the lock so the exception report can be logged.
pub fn break_frame_of_this_core() {
    if OWNER.load(Ordering::Acquire) == crate::core_id() {
        // SAFETY: this core holds the lock.
        let state = unsafe { &mut *STATE.0.get() };
        state.uart.write_byte(0);
        state.encoder = defmt::Encoder::new();
        unlock();
    }
}

#[defmt::global_logger]
struct UartLogger;

// SAFETY: `acquire` takes a lock held until `release`; `write` and `flush`
// run only between the two on the owning core.
unsafe impl defmt::Logger for UartLogger {
    fn acquire() {
        lock();
        // SAFETY: this core holds the lock.
        let state = unsafe { &mut *STATE.0.get() };
        let uart = &mut state.uart;
        state
            .encoder
            .start_frame(|b| b.iter().for_each(|&x| uart.write_byte(x)));
    }

    unsafe fn flush() {
        // SAFETY: called between acquire and release (trait contract).
        unsafe { (*STATE.0.get()).uart.wait_idle() };
    }

    unsafe fn release() {
        // SAFETY: called after acquire (trait contract).
        let state = unsafe { &mut *STATE.0.get() };
        let uart = &mut state.uart;
        state
            .encoder
            .end_frame(|b| b.iter().for_each(|&x| uart.write_byte(x)));
        unlock();
    }

    unsafe fn write(bytes: &[u8]) {
        // SAFETY: called between acquire and release (trait contract).
        let state = unsafe { &mut *STATE.0.get() };
        let uart = &mut state.uart;
        state
            .encoder
            .write(bytes, |b| b.iter().for_each(|&x| uart.write_byte(x)));
    }
}
