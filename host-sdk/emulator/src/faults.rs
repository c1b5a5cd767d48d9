//! Fault injection for one direction of a link: drop, duplicate, corrupt,
//! reorder and delay packets at configurable rates.
//!
//! A pure state machine over caller-supplied time (nanoseconds): packets go
//! in with [`FaultyLink::push`] and come out of [`FaultyLink::pop_due`] when
//! their delivery time has come, so tests drive it without sleeping and a
//! seed reproduces every decision.

use std::collections::BinaryHeap;

/// Rates (probabilities in `0.0..=1.0`) and delays of injected faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultConfig {
    /// Probability that a packet is dropped.
    pub drop: f64,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
    /// Probability that one bit of a packet is flipped.
    pub corrupt: f64,
    /// Probability that a packet is held back up to `reorder_window_ns`,
    /// letting later packets overtake it.
    pub reorder: f64,
    /// Largest hold-back of a reordered packet.
    pub reorder_window_ns: u64,
    /// Fixed delay added to every packet.
    pub delay_ns: u64,
    /// Seed of the decisions.
    pub seed: u64,
}

/// Largest `window_us` / `delay_us` a fault spec accepts (10 s).
pub const MAX_DELAY_US: u64 = 10_000_000;

impl FaultConfig {
    /// No faults at all.
    pub const NONE: FaultConfig = FaultConfig {
        drop: 0.0,
        duplicate: 0.0,
        corrupt: 0.0,
        reorder: 0.0,
        reorder_window_ns: 0,
        delay_ns: 0,
        seed: 0,
    };

    /// Whether this configuration can change any packet.
    pub fn is_none(&self) -> bool {
        self.drop == 0.0
            && self.duplicate == 0.0
            && self.corrupt == 0.0
            && (self.reorder == 0.0 || self.reorder_window_ns == 0)
            && self.delay_ns == 0
    }

    /// Parse `drop=0.05,dup=0.01,corrupt=0.01,reorder=0.05,window_us=200,delay_us=0,seed=7`.
    /// `window_us` and `delay_us` are at most [`MAX_DELAY_US`].
    /// Unknown keys and out-of-range values are errors naming the key.
    pub fn parse(spec: &str) -> Result<FaultConfig, String> {
        let mut c = FaultConfig::NONE;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("fault spec item '{item}': expected key=value"))?;
            let prob = |v: &str| -> Result<f64, String> {
                let p: f64 = v
                    .parse()
                    .map_err(|_| format!("fault spec key '{k}': '{v}' is not a number"))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(format!("fault spec key '{k}' = {p}: must be in 0.0..=1.0"));
                }
                Ok(p)
            };
            let int = |v: &str| -> Result<u64, String> {
                v.parse()
                    .map_err(|_| format!("fault spec key '{k}': '{v}' is not a whole number"))
            };
            // Delays in microseconds, to nanoseconds: at most 10 s (so packet due times,
            // nanoseconds since the link started, cannot overflow).
            let micros = |v: &str| -> Result<u64, String> {
                let us = int(v)?;
                if us > MAX_DELAY_US {
                    return Err(format!(
                        "fault spec key '{k}' = {us}: must be at most {MAX_DELAY_US} (10 s)"
                    ));
                }
                Ok(us * 1000)
            };
            match k {
                "drop" => c.drop = prob(v)?,
                "dup" | "duplicate" => c.duplicate = prob(v)?,
                "corrupt" => c.corrupt = prob(v)?,
                "reorder" => c.reorder = prob(v)?,
                "window_us" => c.reorder_window_ns = micros(v)?,
                "delay_us" => c.delay_ns = micros(v)?,
                "seed" => c.seed = int(v)?,
                _ => {
                    return Err(format!(
                        "fault spec key '{k}' unknown (known: drop, dup, corrupt, reorder, window_us, delay_us, seed)"
                    ))
                }
            }
        }
        Ok(c)
    }
}

/// Counters of what a link did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Packets offered.
    pub offered: u64,
    /// Packets dropped.
    pub dropped: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Packets with a flipped bit.
    pub corrupted: u64,
    /// Packets held back for reordering.
    pub reordered: u64,
}

/// SplitMix64: small, fast, and reproducible across platforms.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Pending<A> {
    due: u64,
    seq: u64,
    to: A,
    bytes: Vec<u8>,
}

impl<A: Eq> Ord for Pending<A> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Min-heap on (due, seq): earliest first, FIFO among equals.
        (o.due, o.seq).cmp(&(self.due, self.seq))
    }
}
impl<A: Eq> PartialOrd for Pending<A> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// One direction of a faulty link carrying packets addressed to `A`.
#[derive(Debug)]
pub struct FaultyLink<A> {
    cfg: FaultConfig,
    rng: SplitMix64,
    queue: BinaryHeap<Pending<A>>,
    seq: u64,
    stats: FaultStats,
}

impl<A: Eq + Clone> FaultyLink<A> {
    /// A link applying `cfg`.
    pub fn new(cfg: FaultConfig) -> Self {
        FaultyLink {
            rng: SplitMix64::new(cfg.seed),
            cfg,
            queue: BinaryHeap::new(),
            seq: 0,
            stats: FaultStats::default(),
        }
    }

    /// What the link has done so far.
    pub fn stats(&self) -> FaultStats {
        self.stats
    }

    /// Offer a packet at time `now`.
    pub fn push(&mut self, now: u64, to: A, bytes: &[u8]) {
        self.stats.offered += 1;
        if self.rng.chance(self.cfg.drop) {
            self.stats.dropped += 1;
            return;
        }
        let copies = if self.rng.chance(self.cfg.duplicate) {
            self.stats.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut b = bytes.to_vec();
            if !b.is_empty() && self.rng.chance(self.cfg.corrupt) {
                self.stats.corrupted += 1;
                let bit = self.rng.below(b.len() as u64 * 8);
                b[(bit / 8) as usize] ^= 1 << (bit % 8);
            }
            let mut due = now + self.cfg.delay_ns;
            if self.cfg.reorder_window_ns > 0 && self.rng.chance(self.cfg.reorder) {
                self.stats.reordered += 1;
                due += 1 + self.rng.below(self.cfg.reorder_window_ns);
            }
            self.seq += 1;
            self.queue.push(Pending {
                due,
                seq: self.seq,
                to: to.clone(),
                bytes: b,
            });
        }
    }

    /// Time of the next delivery, if any packet is waiting.
    pub fn next_due(&self) -> Option<u64> {
        self.queue.peek().map(|p| p.due)
    }

    /// Take the next packet whose time has come.
    pub fn pop_due(&mut self, now: u64) -> Option<(A, Vec<u8>)> {
        if self.queue.peek()?.due <= now {
            self.queue.pop().map(|p| (p.to, p.bytes))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_specs_never_panic(spec in any::<String>()) {
            if let Err(e) = FaultConfig::parse(&spec) {
                prop_assert!(e.starts_with("fault spec"), "{e}");
            }
        }

        #[test]
        fn keyed_specs_never_panic(
            items in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("drop"), Just("dup"), Just("corrupt"), Just("reorder"),
                        Just("window_us"), Just("delay_us"), Just("seed"), Just("x"),
                    ],
                    prop_oneof![
                        any::<u64>().prop_map(|v| v.to_string()),
                        any::<f64>().prop_map(|v| v.to_string()),
                        "[0-9.e-]{0,8}",
                    ],
                ),
                0..5,
            )
        ) {
            let spec: Vec<String> = items.iter().map(|(k, v)| format!("{k}={v}")).collect();
            if let Ok(c) = FaultConfig::parse(&spec.join(",")) {
                prop_assert!(c.delay_ns <= MAX_DELAY_US * 1000);
                prop_assert!(c.reorder_window_ns <= MAX_DELAY_US * 1000);
                // A configured link pushes and delivers without overflow.
                let mut l = FaultyLink::new(c);
                l.push(1_000, 0u8, &[1, 2, 3]);
                while l.pop_due(u64::MAX).is_some() {}
            }
        }
    }

    #[test]
    fn delays_beyond_ten_seconds_are_refused_naming_the_key() {
        let e = FaultConfig::parse("delay_us=18446744073709551615").unwrap_err();
        assert_eq!(
            e,
            "fault spec key 'delay_us' = 18446744073709551615: must be at most 10000000 (10 s)"
        );
        assert!(FaultConfig::parse("window_us=10000001")
            .unwrap_err()
            .contains("'window_us'"));
        assert_eq!(
            FaultConfig::parse("window_us=10000000")
                .unwrap()
                .reorder_window_ns,
            10_000_000_000
        );
    }

    #[test]
    fn none_passes_everything_in_order() {
        let mut l = FaultyLink::new(FaultConfig::NONE);
        for i in 0..100u8 {
            l.push(0, 1u32, &[i]);
        }
        for i in 0..100u8 {
            assert_eq!(l.pop_due(0), Some((1, vec![i])));
        }
        assert_eq!(l.pop_due(u64::MAX), None);
    }

    #[test]
    fn rates_are_applied_and_reproducible() {
        let cfg =
            FaultConfig::parse("drop=0.1,dup=0.1,corrupt=0.1,reorder=0.2,window_us=50,seed=42")
                .unwrap();
        let run = || {
            let mut l = FaultyLink::new(cfg);
            let mut out = Vec::new();
            for i in 0..10_000u32 {
                l.push(i as u64 * 1000, 0u8, &i.to_le_bytes());
            }
            while let Some((_, b)) = l.pop_due(u64::MAX) {
                out.push(b);
            }
            (l.stats(), out)
        };
        let (s, out) = run();
        assert_eq!(run().1, out, "same seed, same decisions");
        let near = |n: u64, p: f64| (n as f64 - 10_000.0 * p).abs() < 10_000.0 * p * 0.2;
        assert!(near(s.dropped, 0.1), "{s:?}");
        assert!(near(s.duplicated, 0.09), "{s:?}");
        assert!(s.corrupted > 500, "{s:?}");
        assert_eq!(out.len() as u64, s.offered - s.dropped + s.duplicated);
        // Some packet overtook another.
        let ids: Vec<u32> = out
            .iter()
            .map(|b| u32::from_le_bytes(b[..4].try_into().unwrap()))
            .collect();
        assert!(ids.windows(2).any(|w| w[0] > w[1]));
    }

    #[test]
    fn delivery_waits_for_its_time() {
        let mut l = FaultyLink::new(FaultConfig {
            delay_ns: 500,
            ..FaultConfig::NONE
        });
        l.push(100, (), b"x");
        assert_eq!(l.next_due(), Some(600));
        assert_eq!(l.pop_due(599), None);
        assert!(l.pop_due(600).is_some());
    }

    #[test]
    fn bad_specs_name_the_key() {
        assert!(FaultConfig::parse("drop=2").unwrap_err().contains("'drop'"));
        assert!(FaultConfig::parse("lose=0.1")
            .unwrap_err()
            .contains("'lose'"));
        assert!(FaultConfig::parse("seed=x").unwrap_err().contains("'seed'"));
        assert!(FaultConfig::parse("").unwrap().is_none());
    }
}
