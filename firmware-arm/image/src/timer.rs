//! ARM generic timer: the system counter as a clock and a delay source.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Readable, CNTFRQ_EL0, CNTPCT_EL0};

/// Counter frequency in Hz: `CNTFRQ_EL0` as boot firmware programmed it, or
/// the board config's value when it was left at zero (only EL3 may set it,
/// and a board booted straight from the FSBL may not have).
pub fn frequency() -> u64 {
    match CNTFRQ_EL0.get() {
        0 => crate::board::COUNTER_HZ,
        f => f,
    }
}

/// Current system counter value.
pub fn ticks() -> u64 {
    // Keep the read from being hoisted above earlier instructions.
    barrier::isb(barrier::SY);
    CNTPCT_EL0.get()
}

/// Convert counter ticks to microseconds without overflowing for any
/// counter value.
pub fn ticks_to_micros(ticks: u64, hz: u64) -> u64 {
    if hz == 0 {
        return 0;
    }
    (ticks / hz) * 1_000_000 + (ticks % hz) * 1_000_000 / hz
}

/// Microseconds since the counter started (the defmt timestamp).
pub fn micros() -> u64 {
    ticks_to_micros(ticks(), frequency())
}

/// Busy-wait delays on the generic timer (`embedded_hal::delay::DelayNs`).
pub struct Delay;

impl embedded_hal::delay::DelayNs for Delay {
    fn delay_ns(&mut self, ns: u32) {
        let hz = frequency();
        let wait = (u64::from(ns) * hz).div_ceil(1_000_000_000);
        let start = ticks();
        while ticks().wrapping_sub(start) < wait {}
    }
}

/// A deadline on the generic timer.
pub struct Deadline {
    end: u64,
}

impl Deadline {
    /// A deadline `us` microseconds from now.
    pub fn after_micros(us: u64) -> Self {
        let hz = frequency();
        Self {
            end: ticks().saturating_add(us.saturating_mul(hz) / 1_000_000),
        }
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        ticks() >= self.end
    }
}
