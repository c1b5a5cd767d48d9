//! `mv`: Clio-MV over UDP — reading the latest version of an object next to
//! reading a random older kept version (16-byte values, as in the
//! dissertation's Fig. 3.19), interleaved one for one on the same objects
//! so both see the same load; appends timed too. Issue #16's target:
//! reading any version costs what reading the latest does (median ratio
//! within 10 %).

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clio::{ClientConfig, Session};
use clio_mv::{MvClient, MvOffload, ObjectId, OFFLOAD_ID};
use serde::Serialize;

use super::stats::{Rng, Summary};
use super::svg::{self, Axis};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};

/// Issue #16's target: median any-version read / median latest read.
pub const TARGET_RATIO: f64 = 1.10;
/// Bytes of a value.
const VALUE: usize = 16;

#[derive(Debug, Serialize)]
struct Mv {
    objects: usize,
    versions_per_object: u64,
    value_bytes: usize,
    reads_each: usize,
    /// Median of `append`, ns.
    append_median_ns: f64,
    /// p99 of `append`, ns.
    append_p99_ns: f64,
    /// Median of `read_latest`, ns.
    latest_median_ns: f64,
    /// p99 of `read_latest`, ns.
    latest_p99_ns: f64,
    /// Median of `read_version` of a random kept version, ns.
    any_median_ns: f64,
    /// p99 of `read_version`, ns.
    any_p99_ns: f64,
    /// any median / latest median.
    any_over_latest: f64,
    /// Client retries during the reads.
    retries: u64,
}

fn value(obj: usize, v: u64) -> [u8; VALUE] {
    let mut b = [0u8; VALUE];
    b[..8].copy_from_slice(&(obj as u64).to_le_bytes());
    b[8..].copy_from_slice(&v.to_le_bytes());
    b
}

/// Run the version-read comparison on a board of its own.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let cfg = ctx.cfg;
    let mut board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
    board
        .register_offload(OFFLOAD_ID, Box::<MvOffload>::default())
        .map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(
        board,
        "127.0.0.1:0".parse()?,
        clio_emu::ServeOptions::for_board(&cfg),
    )?;
    let s = Session::open(server.addr(), ClientConfig::from_board(&cfg))
        .context("mv: opening a session")?;
    let mut mv = MvClient::new(s);
    let versions = p.mv_versions;
    let pb = bar((p.mv_objects as u64 * versions) + p.mv_reads as u64, "mv");
    let mut ids: Vec<ObjectId> = Vec::new();
    for _ in 0..p.mv_objects {
        ids.push(mv.create(versions as u32, VALUE as u32)?);
    }
    let mut append_ns = Vec::new();
    for v in 1..=versions {
        for (o, &id) in ids.iter().enumerate() {
            let at = Instant::now();
            let got = mv.append(id, &value(o, v))?;
            append_ns.push(ns_since(at));
            if got != v {
                bail!("mv: append to {id} gave version {got}, expected {v}");
            }
        }
        pb.inc(p.mv_objects as u64);
    }
    let mut rng = Rng::new(0x3f);
    let (mut latest_ns, mut any_ns) = (Vec::new(), Vec::new());
    let retries0 = mv.session().connection().stats().retries;
    for i in 0..p.mv_reads {
        let o = rng.below(ids.len() as u64) as usize;
        let v = 1 + rng.below(versions);
        for latest in [i % 2 == 0, i % 2 != 0] {
            let at = Instant::now();
            let (got_v, got) = if latest {
                mv.read_latest(ids[o])?
            } else {
                (v, mv.read_version(ids[o], v)?)
            };
            let ns = ns_since(at);
            let want_v = if latest { versions } else { v };
            if got_v != want_v || got != value(o, want_v) {
                bail!("mv: object {} version {want_v} read back wrong", ids[o]);
            }
            if latest {
                latest_ns.push(ns);
            } else {
                any_ns.push(ns);
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let retries = mv.session().connection().stats().retries - retries0;
    drop(mv);
    server.stop()?;
    let (ap, lt, an) = (
        Summary::of(&mut append_ns),
        Summary::of(&mut latest_ns),
        Summary::of(&mut any_ns),
    );
    Ok(Ran::Done(Box::new(Mv {
        objects: p.mv_objects,
        versions_per_object: versions,
        value_bytes: VALUE,
        reads_each: p.mv_reads,
        append_median_ns: ap.p50_ns,
        append_p99_ns: ap.p99_ns,
        latest_median_ns: lt.p50_ns,
        latest_p99_ns: lt.p99_ns,
        any_median_ns: an.p50_ns,
        any_p99_ns: an.p99_ns,
        any_over_latest: an.p50_ns / lt.p50_ns,
        retries,
    })))
}

impl Outcome for Mv {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::at_most(
            "mv median read of any version / of the latest",
            (self.any_over_latest * 1000.0).round() / 1000.0,
            TARGET_RATIO,
        )]
    }

    fn text(&self) -> String {
        format!(
            "  {} objects x {} versions of {} B, {} reads of each kind over UDP (interleaved)\n  append:      median {:.1} µs, p99 {:.1} µs\n  read latest: median {:.1} µs, p99 {:.1} µs\n  read any:    median {:.1} µs, p99 {:.1} µs\n  any / latest {:.3}; retries {}\n",
            self.objects,
            self.versions_per_object,
            self.value_bytes,
            self.reads_each,
            self.append_median_ns / 1e3,
            self.append_p99_ns / 1e3,
            self.latest_median_ns / 1e3,
            self.latest_p99_ns / 1e3,
            self.any_median_ns / 1e3,
            self.any_p99_ns / 1e3,
            self.any_over_latest,
            self.retries,
        )
    }

    fn plots(&self) -> Vec<Plot> {
        vec![Plot {
            file: "mv-read.svg".into(),
            svg: svg::bar_chart(
                "Clio-MV 16 B operations over UDP, median",
                &Axis::linear("µs per call"),
                &["call".to_string()],
                &[
                    ("append".into(), vec![self.append_median_ns / 1e3]),
                    ("read latest".into(), vec![self.latest_median_ns / 1e3]),
                    ("read any version".into(), vec![self.any_median_ns / 1e3]),
                ],
            ),
        }]
    }
}
