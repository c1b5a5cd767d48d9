//! Retransmission timeout and congestion/incast control of one connection.
//!
//! - RTO: RFC 6298 moving averages (SRTT, RTTVAR; RTO = SRTT + 4·RTTVAR,
//!   clamped to the configured bounds, doubled on each timeout). Every
//!   attempt has its own request id, so every sample is unambiguous (no
//!   Karn filtering is needed).
//! - `cwnd` (requests): delay-based AIMD as in Clio §4.4, in Swift's form:
//!   while the RTT is at or under the target, +`ai`/cwnd per completion
//!   (≈ +`ai` per RTT); above it, cut by `beta·(rtt−target)/rtt` (at most
//!   `max_md`), at most once per RTT; a loss cuts by `max_md`. `cwnd` may
//!   fall below 1: then one request is outstanding and sends are spaced
//!   SRTT/cwnd apart (cwnd 0.1 = one request per 10 RTTs).
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

        if r <= self.target {
            let inc = if self.cwnd >= 1.0 {
                self.ai / self.cwnd
            } else {
                self.ai * self.cwnd
            };
            self.cwnd = (self.cwnd + inc).min(self.cwnd_max);
        } else if self.can_decrease(now) {
            let cut = (self.beta * (r - self.target) / r).min(self.max_md);
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
        // RTT twice the target: cut by 0.8 * 0.5 = 40 %.
        c.on_rtt(1_000_000, 20_000);
        assert!((c.cwnd() - before * 0.6).abs() < 1e-9);
        // A second high sample within one RTT does not cut again.
        let after = c.cwnd();
        c.on_rtt(1_001_000, 20_000);
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
        // SRTT unknown: pacing uses the RTO (50 µs) / 0.01 = 5 ms.
        assert_eq!(c.may_send(1, 10), Err(Some(5_000_000)));
        assert_eq!(c.may_send(5_000_000, 10), Ok(()));
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
