//! Client-side knobs: which address space to open or join, MTU,
//! retransmission timeouts, retry budget, congestion and incast windows,
//! dependency-tracking granularity.
//!
//! Times are plain nanoseconds so the protocol layer needs no clock type.

use core::fmt;
use core::str::FromStr;

use clio_config::BoardConfig;
use clio_wire::clio::MAX_PAYLOAD;

use crate::ClioError;

/// What a process hands another so that it can join its address space:
/// the credentials of one live session (possession of the key IS the
/// capability, as an RDMA rkey) plus the PID and the board's epoch.
///
/// Its text form (`Display` / `FromStr`) is one word,
/// `clio:PID:SESSION:EPOCH:KEY` with EPOCH as 8 and KEY as 16 hex digits,
/// e.g. `clio:7:3:1f2e3d4c:0123456789abcdef`, to pass on a command line or
/// in an environment variable. Treat it as a secret: whoever holds it can
/// read, write and free the whole address space until that session closes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShareToken {
    /// The address space (process id) to join.
    pub pid: u32,
    /// A live session of that address space.
    pub session: u16,
    /// The board's boot epoch that session was opened in (a join after a
    /// restart fails with [`ClioError::BoardRestarted`]).
    pub epoch: u32,
    /// That session's key.
    pub key: u64,
}

impl fmt::Debug for ShareToken {
    // The key is a credential: keep it out of logs and panic messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShareToken")
            .field("pid", &self.pid)
            .field("session", &self.session)
            .field("epoch", &format_args!("{:#010x}", self.epoch))
            .field("key", &"<secret>")
            .finish()
    }
}

impl fmt::Display for ShareToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "clio:{}:{}:{:08x}:{:016x}",
            self.pid, self.session, self.epoch, self.key
        )
    }
}

impl FromStr for ShareToken {
    type Err = ClioError;

    fn from_str(s: &str) -> Result<ShareToken, ClioError> {
        let bad = |what: &'static str| ClioError::InvalidArgument {
            what,
            reason: "share token must look like clio:PID:SESSION:EPOCH(8 hex):KEY(16 hex)",
        };
        let mut it = s.trim().split(':');
        if it.next() != Some("clio") {
            return Err(bad("token"));
        }
        let mut part = |what: &'static str| it.next().ok_or(bad(what));
        let pid: u32 = part("token.pid")?.parse().map_err(|_| bad("token.pid"))?;
        let session: u16 = part("token.session")?
            .parse()
            .map_err(|_| bad("token.session"))?;
        let e = part("token.epoch")?;
        let epoch = (e.len() == 8)
            .then(|| u32::from_str_radix(e, 16).ok())
            .flatten()
            .ok_or(bad("token.epoch"))?;
        let k = part("token.key")?;
        let key = (k.len() == 16)
            .then(|| u64::from_str_radix(k, 16).ok())
            .flatten()
            .ok_or(bad("token.key"))?;
        if it.next().is_some() {
            return Err(bad("token"));
        }
        if pid == 0 || session == 0 {
            return Err(ClioError::InvalidArgument {
                what: if pid == 0 {
                    "token.pid"
                } else {
                    "token.session"
                },
                reason: "must not be zero",
            });
        }
        Ok(ShareToken {
            pid,
            session,
            epoch,
            key,
        })
    }
}

/// Configuration of one client connection to one memory node.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// Which address space the session opens: `None` (the default) asks the
    /// board for a new one (the board assigns the PID); `Some(token)` joins
    /// the address space of the live session the token names (see
    /// [`crate::Session::share`]).
    pub join: Option<ShareToken>,
    /// Largest payload per packet (the board's `network.mtu_payload`); an
    /// opened session takes the one its board's INFO advertises.
    pub mtu_payload: usize,
    /// RTO used before the first RTT sample.
    pub rto_initial_ns: u64,
    /// Lower bound of the RTO.
    pub rto_min_ns: u64,
    /// Upper bound of the RTO (also caps the busy backoff).
    pub rto_max_ns: u64,
    /// A request (all retries included) fails after this long.
    pub request_timeout_ns: u64,
    /// Retries after the first attempt before a request fails with `Timeout`.
    pub retry_budget: u32,
    /// Initial congestion window, in requests.
    pub cwnd_init: f64,
    /// Smallest congestion window (may be below 1: then requests are paced;
    /// the default 0.1 waits at most 10 RTTs between requests).
    pub cwnd_min: f64,
    /// Largest congestion window.
    pub cwnd_max: f64,
    /// Additive increase, in requests per RTT, while delay is below target.
    pub cwnd_ai: f64,
    /// Multiplicative-decrease gain on excess delay (Swift's beta).
    pub cwnd_beta: f64,
    /// Largest fractional decrease at once (also the cut on a loss).
    pub cwnd_max_md: f64,
    /// Queueing delay allowed above the path's base RTT; RTTs above
    /// `base + max(target_delay_ns, base)` shrink `cwnd` (see `proto::Control`).
    pub target_delay_ns: u64,
    /// Incast window: most response bytes expected at once.
    pub iwnd_bytes: u64,
    /// log2 of the dependency-tracking granularity (the board's page size).
    pub page_shift: u8,
    /// Operation slots (in flight, blocked or completed but not yet taken);
    /// a power of two, at most 65536.
    pub max_ops: usize,
    /// Largest single request; larger reads and writes are rejected (the
    /// blocking and async APIs split them).
    pub max_request_bytes: u32,
    /// First backoff after a `BUSY` answer (doubles up to `rto_max_ns`).
    pub busy_backoff_ns: u64,
    /// First request id; later ids count up from it (wrapping, skipping 0).
    /// `None` starts at 1, which keeps the protocol layer deterministic for
    /// tests; [`crate::Session`] and [`crate::AsyncSession`] fill `None`
    /// with [`fresh_first_req_id`]. (The board keys its dedup records by
    /// session, so this is no longer needed for correctness; an
    /// unpredictable start only makes a forged answer harder to aim.)
    pub first_req_id: Option<u32>,
}

/// An unpredictable starting point for a connection's request ids: mixes
/// the system clock's nanoseconds, the process id and a process-wide
/// counter (so two connections opened in the same nanosecond differ).
/// Never 0.
pub fn fresh_first_req_id() -> u32 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    // SplitMix64 finaliser over the three sources.
    let mut z =
        t ^ (std::process::id() as u64).rotate_left(32) ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z as u32).max(1)
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            join: None,
            mtu_payload: 1450,
            rto_initial_ns: 1_000_000,
            rto_min_ns: 20_000,
            rto_max_ns: 100_000_000,
            request_timeout_ns: 1_000_000_000,
            retry_budget: 8,
            cwnd_init: 16.0,
            cwnd_min: 0.1,
            cwnd_max: 1024.0,
            cwnd_ai: 1.0,
            cwnd_beta: 0.8,
            cwnd_max_md: 0.5,
            target_delay_ns: 100_000,
            iwnd_bytes: 4 << 20,
            page_shift: 22,
            max_ops: 4096,
            max_request_bytes: 64 << 20,
            busy_backoff_ns: 10_000,
            first_req_id: None,
        }
    }
}

impl ClientConfig {
    /// Settings for a board: MTU, timeouts, retry budget and page size come
    /// from its config; the delay target is four times the RTO floor. The
    /// session opens a new address space (set [`ClientConfig::join`] to join
    /// one).
    pub fn from_board(board: &BoardConfig) -> ClientConfig {
        let t = &board.timeouts;
        let rto_min_ns = t.rto_min_us.saturating_mul(1000);
        ClientConfig {
            mtu_payload: board.network.mtu_payload as usize,
            rto_initial_ns: (rto_min_ns * 10).clamp(rto_min_ns, t.rto_max_us.saturating_mul(1000)),
            rto_min_ns,
            rto_max_ns: t.rto_max_us.saturating_mul(1000),
            request_timeout_ns: t.request_us.saturating_mul(1000),
            retry_budget: t.retry_budget,
            target_delay_ns: rto_min_ns.saturating_mul(4),
            page_shift: board.pages.default_size.trailing_zeros() as u8,
            ..ClientConfig::default()
        }
    }

    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ClioError> {
        let bad = |field: &'static str, reason: String| Err(ClioError::Config { field, reason });
        if self.mtu_payload < 64 || self.mtu_payload > MAX_PAYLOAD {
            return bad(
                "mtu_payload",
                format!("{} not in 64..={MAX_PAYLOAD}", self.mtu_payload),
            );
        }
        if self.rto_min_ns == 0 || self.rto_min_ns > self.rto_max_ns {
            return bad(
                "rto_min_ns",
                format!(
                    "{} must be in 1..=rto_max_ns ({})",
                    self.rto_min_ns, self.rto_max_ns
                ),
            );
        }
        if !(self.rto_min_ns..=self.rto_max_ns).contains(&self.rto_initial_ns) {
            return bad(
                "rto_initial_ns",
                "must lie within rto_min_ns..=rto_max_ns".into(),
            );
        }
        if self.request_timeout_ns == 0 {
            return bad("request_timeout_ns", "must be positive".into());
        }
        let finite_pos = |v: f64| v.is_finite() && v > 0.0;
        if !finite_pos(self.cwnd_min) || !finite_pos(self.cwnd_max) || self.cwnd_min > self.cwnd_max
        {
            return bad("cwnd_min", "need 0 < cwnd_min <= cwnd_max".into());
        }
        if !(self.cwnd_min..=self.cwnd_max).contains(&self.cwnd_init) {
            return bad("cwnd_init", "must lie within cwnd_min..=cwnd_max".into());
        }
        if !finite_pos(self.cwnd_ai) {
            return bad("cwnd_ai", "must be positive".into());
        }
        if !finite_pos(self.cwnd_beta) || self.cwnd_beta > 1.0 {
            return bad("cwnd_beta", "must be in (0, 1]".into());
        }
        if !finite_pos(self.cwnd_max_md) || self.cwnd_max_md >= 1.0 {
            return bad("cwnd_max_md", "must be in (0, 1)".into());
        }
        if self.target_delay_ns == 0 {
            return bad("target_delay_ns", "must be positive".into());
        }
        if self.iwnd_bytes == 0 {
            return bad("iwnd_bytes", "must be positive".into());
        }
        if !(12..=30).contains(&self.page_shift) {
            return bad("page_shift", format!("{} not in 12..=30", self.page_shift));
        }
        if !self.max_ops.is_power_of_two() || !(2..=65536).contains(&self.max_ops) {
            return bad(
                "max_ops",
                format!("{} is not a power of two in 2..=65536", self.max_ops),
            );
        }
        if self.max_request_bytes == 0 {
            return bad("max_request_bytes", "must be positive".into());
        }
        if self.busy_backoff_ns == 0 {
            return bad("busy_backoff_ns", "must be positive".into());
        }
        if self.first_req_id == Some(0) {
            return bad("first_req_id", "0 is never a request id".into());
        }
        if let Some(t) = self.join {
            if t.pid == 0 || t.session == 0 {
                return bad("join", "token names PID 0 or session 0".into());
            }
        }
        Ok(())
    }
}

/// The payload per packet a session should use after the board's INFO:
/// the board's advertised `mtu` (both ways: the board answers reads in
/// packets of its MTU whatever the client asks, so a client whose path could
/// not carry them could not talk to it anyway), capped at the wire's
/// [`MAX_PAYLOAD`]; `None` when it states none or it is `current` already.
pub(crate) fn board_mtu(info: &clio_wire::payload::InfoResp, current: usize) -> Option<usize> {
    let mtu = (info.mtu as usize).min(MAX_PAYLOAD);
    (mtu != 0 && mtu != current).then_some(mtu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_defaults_are_valid() {
        for name in BoardConfig::embedded_names() {
            let b = BoardConfig::embedded(name).unwrap();
            let c = ClientConfig::from_board(&b);
            c.validate().unwrap();
            assert_eq!(c.mtu_payload, b.network.mtu_payload as usize);
            assert_eq!(c.rto_min_ns, b.timeouts.rto_min_us * 1000);
            assert_eq!(1u64 << c.page_shift, b.pages.default_size);
        }
        ClientConfig::default().validate().unwrap();
    }

    #[test]
    fn bad_fields_are_named() {
        let field = |f: &dyn Fn(&mut ClientConfig)| {
            let mut c = ClientConfig::default();
            f(&mut c);
            match c.validate() {
                Err(ClioError::Config { field, .. }) => field,
                other => panic!("expected a config error, got {other:?}"),
            }
        };
        assert_eq!(field(&|c| c.mtu_payload = 10), "mtu_payload");
        assert_eq!(field(&|c| c.rto_min_ns = c.rto_max_ns + 1), "rto_min_ns");
        assert_eq!(field(&|c| c.cwnd_init = 1e9), "cwnd_init");
        assert_eq!(field(&|c| c.max_ops = 1000), "max_ops");
        assert_eq!(field(&|c| c.page_shift = 40), "page_shift");
        assert_eq!(
            field(&|c| {
                c.join = Some(ShareToken {
                    pid: 0,
                    session: 1,
                    epoch: 1,
                    key: 1,
                })
            }),
            "join"
        );
        assert_eq!(field(&|c| c.cwnd_min = f64::NAN), "cwnd_min");
        assert_eq!(field(&|c| c.first_req_id = Some(0)), "first_req_id");
    }

    #[test]
    fn fresh_first_ids_differ_and_are_nonzero() {
        let ids: Vec<u32> = (0..64).map(|_| fresh_first_req_id()).collect();
        assert!(ids.iter().all(|&i| i != 0));
        let mut d = ids.clone();
        d.sort_unstable();
        d.dedup();
        assert!(d.len() > 60, "{ids:?}");
    }

    #[test]
    fn share_tokens_round_trip_and_name_the_bad_part() {
        let t = ShareToken {
            pid: 7,
            session: 3,
            epoch: 0x1f2e_3d4c,
            key: 0x0123_4567_89ab_cdef,
        };
        let s = t.to_string();
        assert_eq!(s, "clio:7:3:1f2e3d4c:0123456789abcdef");
        assert_eq!(s.parse::<ShareToken>().unwrap(), t);
        assert!(!format!("{t:?}").contains("89ab"), "Debug hides the key");
        let what = |s: &str| match s.parse::<ShareToken>() {
            Err(ClioError::InvalidArgument { what, .. }) => what,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(what("7:3:1f2e3d4c:0123456789abcdef"), "token");
        assert_eq!(what("clio:x:3:1f2e3d4c:0123456789abcdef"), "token.pid");
        assert_eq!(
            what("clio:7:70000:1f2e3d4c:0123456789abcdef"),
            "token.session"
        );
        assert_eq!(what("clio:7:3:1f2e3d:0123456789abcdef"), "token.epoch");
        assert_eq!(what("clio:7:3:1f2e3d4c:0123"), "token.key");
        assert_eq!(what("clio:7:3:1f2e3d4c"), "token.key");
        assert_eq!(what("clio:7:3:1f2e3d4c:0123456789abcdef:9"), "token");
        assert_eq!(what("clio:0:3:1f2e3d4c:0123456789abcdef"), "token.pid");
    }
}
