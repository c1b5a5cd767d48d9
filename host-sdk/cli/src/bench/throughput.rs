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
use super::stats::{median, Proto};
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
    /// The SDK session's counters over the run.
    proto: Proto,
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
        proto: Proto::from(s.connection().stats()),
    })
}

/// Datagrams kept in flight by the echo floor (within a default socket
/// buffer, so the floor measures the path, not drops).
const ECHO_DEPTH: usize = 128;

/// The same laps as a bare pipelined UDP echo of a 64 B read's request.
fn echo_lane(ctx: &Ctx, e: &mut super::latency::EchoClient) -> Result<Lane> {
    let p = &ctx.plan;
    let lap = Duration::from_secs_f64(p.async_lap_secs);
    let pb = bar(p.async_laps as u64 + 1, "async echo");
    e.pipelined(clio_wire::clio::HEADER_LEN, ECHO_DEPTH, lap)?;
    pb.inc(1);
    let mut laps = Vec::with_capacity(p.async_laps);
    for _ in 0..p.async_laps {
        laps.push(e.pipelined(clio_wire::clio::HEADER_LEN, ECHO_DEPTH, lap)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let mut sorted = laps.clone();
    Ok(Lane {
        transport: "udp echo (floor)",
        ops_per_sec: median(&mut sorted),
        best_ops_per_sec: sorted.last().copied().unwrap_or(0.0),
        ops: (laps.iter().sum::<f64>() * p.async_lap_secs) as u64,
        laps,
        depth: ECHO_DEPTH,
        cwnd_end: 0.0,
        proto: Proto::default(),
    })
}

/// Run the async throughput benchmark.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let mut target = super::latency::UdpTarget::new(ctx)?;
    let floor = echo_lane(ctx, &mut target.echo)?;
    let mut udp = Session::open(target.addr, ClientConfig::from_board(&ctx.cfg))
        .with_context(|| format!("opening a session to {}", target.addr))?;
    let a = lane("udp", &mut udp, ctx, "async udp")?;
    let _ = udp.close();
    let mut local = in_process(&ctx.cfg)?;
    let b = lane("in-process", &mut local, ctx, "async inproc")?;
    Ok(Ran::Done(Box::new(Throughput {
        read_bytes: READ,
        lanes: vec![floor, a, b],
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
            "  {} B reads, one thread, pipelined\n  {:<11} {:>12} {:>12} {:>8} {:>6}\n",
            self.read_bytes, "transport", "ops/s (p50)", "best lap", "depth", "cwnd"
        );
        for l in &self.lanes {
            o += &format!(
                "  {:<11} {:>12.0} {:>12.0} {:>8} {:>6.1}\n",
                l.transport, l.ops_per_sec, l.best_ops_per_sec, l.depth, l.cwnd_end
            );
        }
        for l in self.lanes.iter().filter(|l| l.proto.requests_sent > 0) {
            o += &format!("  {} SDK: {}\n", l.transport, l.proto);
        }
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let cats: Vec<String> = self.lanes.iter().map(|l| l.transport.to_string()).collect();
        vec![Plot {
            file: "async-throughput.svg".into(),
            svg: svg::bar_chart(
                "Async 64 B reads, one thread",
                // In process is ~10x UDP: a linear axis flattens the UDP bars.
                &Axis::auto(
                    "M ops/s",
                    self.lanes
                        .iter()
                        .map(|l| l.ops_per_sec / 1e6)
                        .chain([TARGET_OPS / 1e6]),
                ),
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
                    // Only under the UDP lane (NaN draws no bar).
                    ("target (UDP)".into(), vec![f64::NAN, TARGET_OPS / 1e6]),
                ],
            ),
        }]
    }
}
