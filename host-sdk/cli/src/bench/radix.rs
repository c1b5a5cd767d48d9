//! `radix`: lookups in a depth-8 radix tree (8 bits per level) in remote
//! memory over UDP, by `rchase` (one pointer chase per level, executed by
//! the board) and by `rread` (the client walks each level's list, one round
//! trip per entry), side by side: the same keys, the two lookups of a key
//! back to back, medians. Round trips per lookup come from the SDK's stats
//! (requests sent, first attempts: `requests_sent - retries`; retries,
//! from loss or RTO expiry on a loaded host, are reported on their own). Issue #16's target: rchase ≥ 3× faster, and one round
//! trip per level.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clio::{ClientConfig, Session};
use clio_radix::RadixTree;
use serde::Serialize;

use super::stats::{median, Rng};
use super::svg::{self, Axis};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};

/// Levels of the tree.
pub const LEVELS: u8 = 8;
/// Bits per level.
pub const BITS: u8 = 8;
/// Issue #16's target: median rread lookup / median rchase lookup.
pub const TARGET_SPEEDUP: f64 = 3.0;

#[derive(Debug, Serialize)]
struct Radix {
    levels: u8,
    bits_per_level: u8,
    keys: usize,
    lookups: usize,
    insert_seconds: f64,
    /// Median lookup latency, ns.
    rchase_median_ns: f64,
    /// Median lookup latency, ns.
    rread_median_ns: f64,
    /// rread median / rchase median.
    speedup: f64,
    /// Mean round trips (requests, first attempts) per lookup.
    rchase_round_trips: f64,
    /// Mean round trips (requests, first attempts) per lookup.
    rread_round_trips: f64,
    /// rchase round trips per level.
    rchase_round_trips_per_level: f64,
    /// Retries during the lookups (RTO expiry or loss; not in the round trips).
    retries: u64,
}

/// Run the radix lookup benchmark against the target board.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let mut s = Session::open(ctx.addr, ClientConfig::from_board(&ctx.cfg))
        .with_context(|| format!("radix: opening a session on {}", ctx.addr))?;
    let mut t = RadixTree::create(&mut s, LEVELS, BITS)?;
    let mut rng = Rng::new(16);
    let mut keys = Vec::with_capacity(p.radix_keys);
    let pb = bar((p.radix_keys + p.radix_lookups) as u64, "radix");
    let started = Instant::now();
    for i in 0..p.radix_keys {
        let k = rng.next_u64();
        t.insert(&mut s, k, k ^ 0x5a5a)?;
        keys.push(k);
        if i % 64 == 0 {
            pb.set_position(i as u64);
        }
    }
    let insert_seconds = started.elapsed().as_secs_f64();
    let mut chase_ns = Vec::with_capacity(p.radix_lookups);
    let mut rread_ns = Vec::with_capacity(p.radix_lookups);
    let (mut chase_rt, mut rread_rt) = (0u64, 0u64);
    let retries_before = s.connection().stats().retries;
    for i in 0..p.radix_lookups {
        let k = keys[rng.below(keys.len() as u64) as usize];
        // Alternate which goes first, so neither always runs warm.
        for first in [i % 2 == 0, i % 2 != 0] {
            let st = s.connection().stats();
            let sent = st.requests_sent - st.retries;
            let at = Instant::now();
            let got = if first {
                t.get(&mut s, k)?
            } else {
                t.get_rread(&mut s, k)?
            };
            let ns = ns_since(at);
            let st = s.connection().stats();
            let rt = st.requests_sent - st.retries - sent;
            if got != Some(k ^ 0x5a5a) {
                bail!("radix: lookup of {k:#x} returned {got:?}");
            }
            if first {
                chase_ns.push(ns);
                chase_rt += rt;
            } else {
                rread_ns.push(ns);
                rread_rt += rt;
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let n = p.radix_lookups.max(1) as f64;
    let rchase_median_ns = median(&mut chase_ns);
    let rread_median_ns = median(&mut rread_ns);
    let r = Radix {
        levels: LEVELS,
        bits_per_level: BITS,
        keys: p.radix_keys,
        lookups: p.radix_lookups,
        insert_seconds,
        rchase_median_ns,
        rread_median_ns,
        speedup: rread_median_ns / rchase_median_ns,
        rchase_round_trips: chase_rt as f64 / n,
        rread_round_trips: rread_rt as f64 / n,
        rchase_round_trips_per_level: chase_rt as f64 / n / f64::from(LEVELS),
        retries: s.connection().stats().retries - retries_before,
    };
    Ok(Ran::Done(Box::new(r)))
}

impl Outcome for Radix {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![
            Check::at_least(
                "radix lookup speed-up, median rread / median rchase",
                (self.speedup * 100.0).round() / 100.0,
                TARGET_SPEEDUP,
            ),
            Check::at_most(
                "rchase round trips per level",
                self.rchase_round_trips_per_level,
                1.0,
            ),
        ]
    }

    fn text(&self) -> String {
        format!(
            "  depth-{} tree ({} bits per level), {} random keys (inserted in {:.1} s), {} lookups of each kind over UDP\n  rchase: median {:.1} µs, {:.2} round trips per lookup ({:.2} per level)\n  rread:  median {:.1} µs, {:.1} round trips per lookup\n  speed-up {:.1}x; retries {}\n",
            self.levels,
            self.bits_per_level,
            self.keys,
            self.insert_seconds,
            self.lookups,
            self.rchase_median_ns / 1e3,
            self.rchase_round_trips,
            self.rchase_round_trips_per_level,
            self.rread_median_ns / 1e3,
            self.rread_round_trips,
            self.speedup,
            self.retries,
        )
    }

    fn plots(&self) -> Vec<Plot> {
        vec![Plot {
            file: "radix-lookup.svg".into(),
            svg: svg::bar_chart(
                "Radix tree lookup (depth 8) over UDP, median",
                &Axis::linear("µs per lookup"),
                &["lookup".to_string()],
                &[
                    ("rchase".into(), vec![self.rchase_median_ns / 1e3]),
                    ("rread".into(), vec![self.rread_median_ns / 1e3]),
                ],
            ),
        }]
    }
}
