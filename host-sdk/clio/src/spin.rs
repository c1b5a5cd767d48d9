//! When a client may poll for its answers by yielding the CPU.
//!
//! Both transports poll the socket for a short while before they block,
//! yielding between polls: on an idle host this skips the wake-up of a
//! sleeping thread (35–40 µs on a VM whose vCPU halted). But a yield hands
//! the CPU to any other runnable thread on it, even one at nice 19, and the
//! poller, still runnable, gets it back only when that thread's slice ends
//! (at the next scheduler tick: 1–9 ms seen with `HZ=250`), while a thread
//! that blocks is woken as soon as its answer arrives, ahead of such a
//! thread. With two busy loops beside a pipelined Clio-KV client, 187 of
//! its yields in 3 s came back after 0.3–9 ms. So a yield that comes back
//! late ([`LATE_YIELD`]) stops polling: the caller blocks for this answer,
//! and for the next [`HOLD`] it blocks at once.

use std::time::{Duration, Instant};

/// A yield that takes longer than this gave the CPU to another thread for
/// a slice (one that found nothing else to run returns in about a µs).
pub(crate) const LATE_YIELD: Duration = Duration::from_micros(200);

/// How long a late yield stops polling: long against a row of requests,
/// so a host whose CPUs stay busy costs one slice per `HOLD`, not one per
/// answer.
pub(crate) const HOLD: Duration = Duration::from_secs(1);

/// Whether polling may yield now; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct SpinGuard {
    hold_until: Option<Instant>,
    late: u64,
}

impl SpinGuard {
    /// Whether to poll (yielding) before blocking, at `now`.
    pub(crate) fn may_spin(&self, now: Instant) -> bool {
        self.hold_until.is_none_or(|t| now >= t)
    }

    /// Yield the CPU once. False when the yield came back late: stop
    /// polling and block.
    pub(crate) fn yield_now(&mut self) -> bool {
        let t = Instant::now();
        std::thread::yield_now();
        self.returned(t, Instant::now())
    }

    /// A yield started at `t` came back at `back`: false (and polling held
    /// off for [`HOLD`]) when that was late.
    fn returned(&mut self, t: Instant, back: Instant) -> bool {
        if back.saturating_duration_since(t) > LATE_YIELD {
            self.hold_until = Some(back + HOLD);
            self.late += 1;
            false
        } else {
            true
        }
    }

    /// Late yields so far.
    #[cfg(test)]
    pub(crate) fn late(&self) -> u64 {
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_yield_holds_polling_off() {
        let mut g = SpinGuard::default();
        let t0 = Instant::now();
        assert!(g.may_spin(t0));
        // A prompt yield changes nothing.
        assert!(g.returned(t0, t0 + Duration::from_micros(3)));
        assert!(g.may_spin(t0 + Duration::from_micros(3)));
        assert_eq!(g.late(), 0);
        // A yield that came back 4 ms later (another thread's slice).
        let back = t0 + Duration::from_millis(4);
        assert!(!g.returned(t0, back));
        assert_eq!(g.late(), 1);
        assert!(!g.may_spin(back));
        assert!(!g.may_spin(back + HOLD - Duration::from_millis(1)));
        assert!(g.may_spin(back + HOLD));
    }
}
