//! Async throughput: 64 B reads from one client thread, kept pipelined (a
//! fixed number outstanding; the SDK sends them as `cwnd` allows), over UDP
//! to the target and on the in-process backend (no sockets: the ceiling
//! the SDK and the board model leave).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clio::backend::Transport;
use clio::{ClientConfig, Session};
use clio_wire::payload::perms;
use serde::Serialize;

use super::boards::in_process;
use super::stats::median;
use super::svg::{self, Axis};
use super::{bar, Check, Ctx, Outcome, Plot, Ran};

const READ: u64 = 64;
/// Reads cycle over this many bytes of one allocation.
const SPAN: u64 = 64 * 1024;
/// Target of the issue: one client thread, UDP.
pub const TARGET_OPS: f64 = 1e6;

/// One transport's result.
#[derive(Debug, Serialize)]
struct Lane {
    transport: &'static str,
    /// Median lap rate, ops/s.
    ops_per_sec: f64,
    /// Fastest lap, ops/s.
    best_ops_per_sec: f64,
    /// Every lap, ops/s.
    laps: Vec<f64>,
    ops: u64,
    /// Requests kept outstanding by the client.
    depth: usize,
    /// Congestion window at the end, requests.
    cwnd_end: f64,
    retries: u64,
}

#[derive(Debug, Serialize)]
struct Throughput {
    read_bytes: u64,
    lanes: Vec<Lane>,
}

/// Keep `depth` reads outstanding for `laps` laps of `lap`; ops/s per lap.
fn pipeline<T: Transport>(
    s: &mut Session<T>,
    depth: usize,
    lap: Duration,
    laps: usize,
    label: &str,
) -> Result<(Vec<f64>, u64)> {
    let al = s.ralloc(SPAN, perms::RW)?;
    s.rwrite(al.va, &vec![3u8; SPAN as usize])?;
    let mut q = VecDeque::with_capacity(depth);
    let mut buf = [0u8; READ as usize];
    let mut i = 0u64;
    let mut total = 0u64;
    let mut rates = Vec::with_capacity(laps);
    let pb = bar(laps as u64 + 1, label);
    // Lap 0 warms up (cwnd growth, caches) and is not counted.
    for lap_no in 0..=laps {
        let t = Instant::now();
        let mut done = 0u64;
        while t.elapsed() < lap {
            for _ in 0..64 {
                while q.len() < depth {
                    q.push_back(s.rread_async(al.va + (i * READ) % SPAN, READ)?);
                    i += 1;
                }
                if let Some(h) = q.pop_front() {
                    s.rread_wait(h, &mut buf)?;
                    done += 1;
                }
            }
        }
        if lap_no > 0 {
            rates.push(done as f64 / t.elapsed().as_secs_f64());
            total += done;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    while let Some(h) = q.pop_front() {
        s.rread_wait(h, &mut buf)?;
    }
    s.rfree(al.va, al.size)?;
    Ok((rates, total))
}

fn lane<T: Transport>(
    name: &'static str,
    s: &mut Session<T>,
    ctx: &Ctx,
    label: &str,
) -> Result<Lane> {
    let p = &ctx.plan;
    let lap = Duration::from_secs_f64(p.async_lap_secs);
    let (laps, ops) = pipeline(s, p.async_depth, lap, p.async_laps, label)?;
    let mut sorted = laps.clone();
    Ok(Lane {
        transport: name,
        ops_per_sec: median(&mut sorted),
        best_ops_per_sec: sorted.last().copied().unwrap_or(0.0),
        laps,
        ops,
        depth: p.async_depth,
        cwnd_end: s.connection().control().cwnd(),
        retries: s.connection().stats().retries,
    })
}

/// Run the async throughput benchmark.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let mut udp = Session::open(ctx.addr, ClientConfig::from_board(&ctx.cfg, ctx.pid + 1))
        .with_context(|| format!("opening a session to {}", ctx.addr))?;
    let a = lane("udp", &mut udp, ctx, "async udp")?;
    let _ = udp.close();
    let mut local = in_process(&ctx.cfg, ctx.pid + 1)?;
    let b = lane("in-process", &mut local, ctx, "async inproc")?;
    Ok(Ran::Done(Box::new(Throughput {
        read_bytes: READ,
        lanes: vec![a, b],
    })))
}

impl Outcome for Throughput {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        self.lanes
            .iter()
            .filter(|l| l.transport == "udp")
            .map(|l| {
                Check::at_least(
                    "async 64 B reads over UDP, ops/s (median lap)",
                    l.ops_per_sec,
                    TARGET_OPS,
                )
            })
            .collect()
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  {} B reads, one thread, pipelined\n  {:<11} {:>12} {:>12} {:>8} {:>6} {:>8}\n",
            self.read_bytes, "transport", "ops/s (p50)", "best lap", "depth", "cwnd", "retries"
        );
        for l in &self.lanes {
            o += &format!(
                "  {:<11} {:>12.0} {:>12.0} {:>8} {:>6.1} {:>8}\n",
                l.transport, l.ops_per_sec, l.best_ops_per_sec, l.depth, l.cwnd_end, l.retries
            );
        }
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let cats: Vec<String> = self.lanes.iter().map(|l| l.transport.to_string()).collect();
        vec![Plot {
            file: "async-throughput.svg".into(),
            svg: svg::bar_chart(
                "Async 64 B reads, one thread",
                &Axis::linear("M ops/s"),
                &cats,
                &[
                    (
                        "median lap".into(),
                        self.lanes.iter().map(|l| l.ops_per_sec / 1e6).collect(),
                    ),
                    (
                        "best lap".into(),
                        self.lanes
                            .iter()
                            .map(|l| l.best_ops_per_sec / 1e6)
                            .collect(),
                    ),
                    ("target (UDP)".into(), vec![TARGET_OPS / 1e6]),
                ],
            ),
        }]
    }
}
