//! Retransmission timeout and congestion/incast control of one connection.
//!
//! - RTO: RFC 6298 moving averages (SRTT, RTTVAR; RTO = SRTT + 4·RTTVAR,
//!   clamped to the configured bounds, doubled on each timeout). Every
//!   attempt has its own request id, so every sample is unambiguous (no
//!   Karn filtering is needed).
//! - `cwnd` (requests): delay-based AIMD as in Clio §4.4, in Swift's form:
//!   while the RTT is at or under the target, +`ai`/cwnd per completion
//!   (≈ +`ai` per RTT), or +`ai` per completion while cwnd is below 1;
//!   above it, cut by `beta·(rtt−target)/rtt` (at most `max_md`), at most
//!   once per RTT; a loss cuts by `max_md`. `cwnd` may fall below 1: then
//!   one request is outstanding and sends are spaced SRTT/cwnd apart
//!   (cwnd 0.1 = one request per 10 RTTs).
//! - The target is relative to the path: the configured target is the
//!   queueing delay allowed above the base RTT (the smallest RTT seen over
//!   the last one to two [`BASE_RTT_WINDOW_NS`] windows), and at least the
//!   base RTT itself, i.e. `target = base + max(target_delay, base)`. A
//!   path that is slow but uncongested (RTT steady at its base) is under
//!   target and keeps growing; only delay that builds up above the base
//!   (a queue) shrinks the window.
//! - `iwnd` (bytes): the response bytes expected from outstanding requests
//!   stay under the incast window; one request is always allowed so an
//!   oversized read cannot deadlock.

use crate::ClientConfig;

/// RTT estimator and windows.
#[derive(Debug, Clone)]
pub struct Control {
    srtt: Option<f64>,
    rttvar: f64,
    rto: u64,
    rto_min: u64,
    rto_max: u64,
    cwnd: f64,
    cwnd_min: f64,
    cwnd_max: f64,
    ai: f64,
    beta: f64,
    max_md: f64,
    target: f64,
    base: BaseRtt,
    last_decrease: Option<u64>,
    last_send: Option<u64>,
    iwnd: u64,
    /// Requests on the wire.
    pub inflight: u32,
    /// Response bytes expected from them.
    pub inflight_bytes: u64,
}

impl Control {
    /// Fresh state from the config.
    pub fn new(c: &ClientConfig) -> Self {
        Control {
            srtt: None,
            rttvar: 0.0,
            rto: c.rto_initial_ns,
            rto_min: c.rto_min_ns,
            rto_max: c.rto_max_ns,
            cwnd: c.cwnd_init,
            cwnd_min: c.cwnd_min,
            cwnd_max: c.cwnd_max,
            ai: c.cwnd_ai,
            beta: c.cwnd_beta,
            max_md: c.cwnd_max_md,
            target: c.target_delay_ns as f64,
            base: BaseRtt::default(),
            last_decrease: None,
            last_send: None,
            iwnd: c.iwnd_bytes,
            inflight: 0,
            inflight_bytes: 0,
        }
    }

    /// Current retransmission timeout in ns.
    pub fn rto(&self) -> u64 {
        self.rto
    }

    /// Smoothed RTT in ns, once sampled.
    pub fn srtt(&self) -> Option<u64> {
        self.srtt.map(|s| s as u64)
    }

    /// Current congestion window in requests.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Base RTT (the smallest recent sample) in ns, once sampled.
    pub fn base_rtt(&self) -> Option<u64> {
        self.base.get().map(|b| b as u64)
    }

    /// The delay target in force, in ns: `base + max(target_delay, base)`,
    /// or the configured target before any sample.
    pub fn effective_target(&self) -> f64 {
        match self.base.get() {
            Some(b) => b + self.target.max(b),
            None => self.target,
        }
    }

    /// RTT (or, before a sample, the RTO) used for pacing and "once per RTT".
    fn rtt_or_rto(&self) -> f64 {
        self.srtt.unwrap_or(self.rto as f64)
    }

    /// Whether a request expecting `bytes` of response may go now; if not
    /// and only pacing stands in the way, `Err(Some(t))` says when it may.
    pub fn may_send(&self, now: u64, bytes: u64) -> Result<(), Option<u64>> {
        if self.inflight > 0 && self.inflight_bytes.saturating_add(bytes) > self.iwnd {
            return Err(None);
        }
        if self.cwnd >= 1.0 {
            return if (self.inflight as f64) < self.cwnd.floor() {
                Ok(())
            } else {
                Err(None)
            };
        }
        if self.inflight > 0 {
            return Err(None);
        }
        match self.last_send {
            Some(last) => {
                let at = last + (self.rtt_or_rto() / self.cwnd) as u64;
                if now >= at {
                    Ok(())
                } else {
                    Err(Some(at))
                }
            }
            None => Ok(()),
        }
    }

    /// A request expecting `bytes` of response went out.
    pub fn on_send(&mut self, now: u64, bytes: u64) {
        self.inflight += 1;
        self.inflight_bytes += bytes;
        self.last_send = Some(now);
    }

    /// A request left the wire (answered, lost, or abandoned).
    pub fn on_leave(&mut self, bytes: u64) {
        self.inflight = self.inflight.saturating_sub(1);
        self.inflight_bytes = self.inflight_bytes.saturating_sub(bytes);
    }

    /// A request completed after `rtt` ns.
    pub fn on_rtt(&mut self, now: u64, rtt: u64) {
        let r = rtt as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.rto = ((s + 4.0 * self.rttvar) as u64).clamp(self.rto_min, self.rto_max);

        self.base.sample(now, r);
        let target = self.effective_target();
        if r <= target {
            let inc = if self.cwnd >= 1.0 {
                self.ai / self.cwnd
            } else {
                self.ai
            };
            self.cwnd = (self.cwnd + inc).min(self.cwnd_max);
        } else if self.can_decrease(now) {
            let cut = (self.beta * (r - target) / r).min(self.max_md);
            self.decrease(now, cut);
        }
    }

    /// A request was lost (timeout, NACK or corrupt response).
    pub fn on_loss(&mut self, now: u64, timed_out: bool) {
        if timed_out {
            self.rto = (self.rto.saturating_mul(2)).clamp(self.rto_min, self.rto_max);
        }
        if self.can_decrease(now) {
            self.decrease(now, self.max_md);
        }
    }

    fn can_decrease(&self, now: u64) -> bool {
        match self.last_decrease {
            None => true,
            Some(t) => now.saturating_sub(t) as f64 >= self.rtt_or_rto(),
        }
    }

    fn decrease(&mut self, now: u64, cut: f64) {
        self.cwnd = (self.cwnd * (1.0 - cut)).max(self.cwnd_min);
        self.last_decrease = Some(now);
    }
}

/// Length of one base-RTT window: the base is the minimum over the current
/// and the previous window, so a base that rose (a route change) is taken
/// up within two windows while a queue lasting less than a window cannot
/// raise it.
pub const BASE_RTT_WINDOW_NS: u64 = 10_000_000_000;

/// Windowed minimum of the RTT samples.
#[derive(Debug, Clone, Default)]
struct BaseRtt {
    start: Option<u64>,
    cur: Option<f64>,
    prev: Option<f64>,
}

impl BaseRtt {
    fn sample(&mut self, now: u64, r: f64) {
        let start = *self.start.get_or_insert(now);
        if now.saturating_sub(start) >= BASE_RTT_WINDOW_NS {
            self.prev = self.cur.take();
            self.start = Some(now);
        }
        self.cur = Some(self.cur.map_or(r, |c| c.min(r)));
    }

    fn get(&self) -> Option<f64> {
        match (self.cur, self.prev) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ClientConfig {
        ClientConfig {
            cwnd_init: 4.0,
            target_delay_ns: 10_000,
            rto_min_ns: 1_000,
            rto_initial_ns: 50_000,
            ..ClientConfig::default()
        }
    }

    #[test]
    fn rto_follows_rfc6298() {
        let mut c = Control::new(&cfg());
        assert_eq!(c.rto(), 50_000);
        c.on_rtt(0, 8_000);
        // SRTT = 8000, RTTVAR = 4000 -> RTO = 24000.
        assert_eq!(c.rto(), 24_000);
        c.on_rtt(0, 8_000);
        // RTTVAR = 3000, SRTT 8000 -> 20000.
        assert_eq!(c.rto(), 20_000);
        c.on_loss(100_000, true);
        assert_eq!(c.rto(), 40_000);
    }

    #[test]
    fn aimd_grows_under_target_and_cuts_once_per_rtt() {
        let mut c = Control::new(&cfg());
        for _ in 0..40 {
            c.on_rtt(0, 5_000);
        }
        assert!(c.cwnd() > 9.5 && c.cwnd() < 10.5, "cwnd {}", c.cwnd());
        let before = c.cwnd();
        // Base 5 µs, effective target 5 + max(10, 5) = 15 µs. An RTT of
        // 30 µs is twice that: cut by 0.8 * 0.5 = 40 %.
        assert_eq!(c.effective_target(), 15_000.0);
        c.on_rtt(1_000_000, 30_000);
        assert!((c.cwnd() - before * 0.6).abs() < 1e-9);
        // A second high sample within one RTT does not cut again.
        let after = c.cwnd();
        c.on_rtt(1_001_000, 30_000);
        assert_eq!(c.cwnd(), after);
    }

    #[test]
    fn window_goes_below_one_and_paces() {
        let mut c = Control::new(&cfg());
        for i in 0..20u64 {
            c.on_loss(i * 10_000_000, false);
        }
        assert_eq!(c.cwnd(), ClientConfig::default().cwnd_min);
        c.on_send(0, 10);
        assert_eq!(c.may_send(1, 10), Err(None));
        c.on_leave(10);
        // SRTT unknown: pacing uses the RTO (50 µs) / 0.1 = 500 µs.
        assert_eq!(c.may_send(1, 10), Err(Some(500_000)));
        assert_eq!(c.may_send(500_000, 10), Ok(()));
        // An answer under target brings it back to one request per RTT.
        c.on_rtt(600_000, 5_000);
        assert!(c.cwnd() >= 1.0, "cwnd {}", c.cwnd());
    }

    /// A synchronous flow (one request at a time, RTT = the path's base)
    /// over a path slower than the configured target, whose window was cut
    /// by losses, grows back: the base RTT is not queueing.
    #[test]
    fn slow_but_stable_path_grows_back() {
        let mut c = Control::new(&cfg());
        let rtt = 3_000_000; // 3 ms, 300 × the 10 µs target.
        let mut now = 0;
        for _ in 0..5 {
            c.on_loss(now, false);
            now += 10 * rtt;
        }
        assert!(c.cwnd() < 1.0, "cwnd {}", c.cwnd());
        for _ in 0..20 {
            // Wait for pacing, then one request takes one RTT.
            c.on_send(now, 8);
            now += rtt;
            c.on_leave(8);
            c.on_rtt(now, rtt);
            while let Err(Some(at)) = c.may_send(now, 8) {
                now = at;
            }
        }
        assert_eq!(c.base_rtt(), Some(rtt));
        assert!(c.cwnd() > 4.0, "cwnd {}", c.cwnd());
    }

    /// Delay building up above the base (a queue) cuts the window once per
    /// RTT, down below 1 if it persists.
    #[test]
    fn queue_building_up_shrinks_the_window_below_one() {
        let mut c = Control::new(&ClientConfig {
            cwnd_min: 0.01,
            ..cfg()
        });
        let base = 20_000u64;
        let mut now = 0;
        for _ in 0..10 {
            now += base;
            c.on_rtt(now, base);
        }
        let grown = c.cwnd();
        assert!(grown > 4.0, "cwnd {grown}");
        // RTT rises 10 µs per RTT: a growing queue.
        let mut rtt = base;
        let mut cuts = 0;
        while c.cwnd() >= 0.5 {
            rtt += 10_000;
            now += rtt;
            let before = c.cwnd();
            c.on_rtt(now, rtt);
            let after = c.cwnd();
            if after < before {
                cuts += 1;
                // A second sample right away (same RTT) is not cut again.
                c.on_rtt(now + 1, rtt);
                assert_eq!(c.cwnd(), after);
            }
            assert!(cuts < 50, "cwnd stuck at {}", c.cwnd());
        }
        assert_eq!(c.base_rtt(), Some(base));
        assert!(c.cwnd() < 0.5 && c.cwnd() >= 0.01);
    }

    #[test]
    fn base_rtt_ages_out() {
        let mut c = Control::new(&cfg());
        c.on_rtt(0, 10_000);
        c.on_rtt(1, 50_000);
        assert_eq!(c.base_rtt(), Some(10_000));
        // The path got slower for good: within two windows the base follows.
        c.on_rtt(BASE_RTT_WINDOW_NS, 50_000);
        assert_eq!(c.base_rtt(), Some(10_000));
        c.on_rtt(2 * BASE_RTT_WINDOW_NS, 50_000);
        assert_eq!(c.base_rtt(), Some(50_000));
    }

    #[test]
    fn incast_window_limits_expected_bytes() {
        let mut c = Control::new(&ClientConfig {
            iwnd_bytes: 1000,
            ..cfg()
        });
        assert_eq!(c.may_send(0, 5000), Ok(()), "one request always fits");
        c.on_send(0, 600);
        assert_eq!(c.may_send(0, 500), Err(None));
        assert_eq!(c.may_send(0, 400), Ok(()));
    }
}
