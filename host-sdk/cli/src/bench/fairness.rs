//! `fairness`: a small read's latency while another client streams large
//! reads (issue #23). Two sessions on the target board, each its own PID
//! and UDP socket: a prober doing sync 64 B `rread`s and a streamer doing
//! sync 8 MiB `rread`s back to back from its own thread (the SDK cuts each
//! into requests of the board's response bound, `InfoResp.max_resp_kib`,
//! and pipelines them). The prober's samples alternate in rounds between
//! the streamer idle (unloaded) and streaming (loaded), so both series see
//! the same machine load; p50/p99 of each, and the loaded/unloaded p99
//! ratio against the target (≤ 2).
//!
//! With the board emulated in this process, the same run is repeated on a
//! second emulated board whose bound is raised to 65 535 KiB (each 8 MiB
//! read then one request), the board before the bound existed: its ratio
//! is reported beside, not checked.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_wire::payload::perms;
use serde::Serialize;

use super::stats::{ratio, Summary};
use super::svg::{self, Axis};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};

/// Bytes of one streamed read.
pub const STREAM_BYTES: usize = 8 << 20;
/// Bytes of one probe read.
pub const PROBE_BYTES: usize = 64;
/// The streamer's incast window (bytes of responses outstanding).
pub const STREAM_IWND: u64 = 1 << 20;
/// Issue #23's target: loaded p99 / unloaded p99 of the probe.
pub const TARGET_P99_RATIO: f64 = 2.0;

/// One board's measurement.
#[derive(Debug, Serialize)]
struct Side {
    /// The board's response bound (bytes), as its INFO states it.
    max_response_bytes: Option<u32>,
    /// Probe latency with the streamer idle.
    unloaded: Summary,
    /// Probe latency while the streamer streams.
    loaded: Summary,
    /// loaded p99 / unloaded p99.
    p99_ratio: f64,
    /// loaded p50 / unloaded p50.
    p50_ratio: f64,
    /// The streamer's goodput while streaming, Gbit/s.
    stream_gbps: f64,
    /// 8 MiB reads the streamer completed.
    stream_reads: u64,
    /// Requests per streamed read (what the SDK cut each into).
    requests_per_stream_read: f64,
    /// Retries of the prober (RTO expiry or loss).
    probe_retries: u64,
    /// The streamer's failure, if its reads failed (the contrast board's
    /// single 8 MiB requests can exhaust the retry budget).
    stream_error: Option<String>,
}

#[derive(Debug, Serialize)]
struct Fairness {
    probe_bytes: usize,
    stream_bytes: usize,
    rounds: usize,
    samples_per_round: usize,
    /// The target board.
    bounded: Side,
    /// An emulated board without a practical bound (only with the board
    /// emulated in this process).
    unbounded: Option<Side>,
    /// How the contrast run failed, if it did.
    unbounded_error: Option<String>,
}

/// Run the fairness benchmark against the target board.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let (rounds, per_round) = if ctx.plan.quick { (4, 50) } else { (10, 300) };
    let bounded = measure(ctx.addr, &ctx.cfg, rounds, per_round, "fairness")?;
    if let Some(e) = &bounded.stream_error {
        return Err(anyhow!("{e}"));
    }
    let unbounded = if ctx.embedded {
        let mut cfg = ctx.cfg;
        cfg.network.max_response_bytes = 65_535 * 1024;
        let board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
        let server = clio_emu::spawn(
            board,
            "127.0.0.1:0".parse()?,
            clio_emu::ServeOptions::for_board(&cfg),
        )?;
        let side = measure(server.addr(), &cfg, rounds, per_round, "fairness, no bound");
        server.stop()?;
        Some(side.map_err(|e| format!("{e:#}")))
    } else {
        None
    };
    let (unbounded, unbounded_error) = match unbounded {
        Some(Ok(s)) => (Some(s), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    Ok(Ran::Done(Box::new(Fairness {
        probe_bytes: PROBE_BYTES,
        stream_bytes: STREAM_BYTES,
        rounds,
        samples_per_round: per_round,
        bounded,
        unbounded,
        unbounded_error,
    })))
}

/// The streamer's shared state.
#[derive(Default)]
struct Stream {
    /// Stream while set.
    active: AtomicBool,
    /// A read is in flight.
    busy: AtomicBool,
    quit: AtomicBool,
    reads: AtomicU64,
    /// Nanoseconds spent in reads.
    ns: AtomicU64,
}

fn measure(
    addr: SocketAddr,
    board: &BoardConfig,
    rounds: usize,
    per_round: usize,
    label: &str,
) -> Result<Side> {
    let cfg = ClientConfig::from_board(board);
    let stream_iwnd = std::env::var("CLIO_FAIR_IWND")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(STREAM_IWND);
    let mut probe = Session::open(addr, cfg.clone())
        .with_context(|| format!("fairness: opening the probe's session on {addr}"))?;
    let bound = probe.board_info().and_then(|i| i.max_resp_bytes());
    let a = probe.ralloc(PROBE_BYTES as u64, perms::RW)?;
    probe.rwrite(a.va, &[0x5a; PROBE_BYTES])?;
    let st = Arc::new(Stream::default());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let streamer = {
        let st = st.clone();
        std::thread::spawn(move || -> Result<(u64, u64)> {
            // Response bytes in flight: STREAM_IWND (the default 4 MiB
            // queues ~64 bound-sized reads at a loopback board that serves
            // one at a time, past the RTO of a loaded host).
            let mut s = Session::open(
                addr,
                ClientConfig {
                    iwnd_bytes: stream_iwnd,
                    ..cfg
                },
            )?;
            let b = s.ralloc(STREAM_BYTES as u64, perms::RW)?;
            let mut buf = vec![0u8; STREAM_BYTES];
            let _ = ready_tx.send(());
            while !st.quit.load(Ordering::Acquire) {
                if !st.active.load(Ordering::Acquire) {
                    std::thread::park();
                    continue;
                }
                st.busy.store(true, Ordering::Release);
                let t = Instant::now();
                let r = s.rread(b.va, &mut buf);
                st.ns.fetch_add(ns_since(t) as u64, Ordering::Relaxed);
                st.busy.store(false, Ordering::Release);
                r.context("fairness: the streamer's 8 MiB rread")?;
                st.reads.fetch_add(1, Ordering::Relaxed);
            }
            let c = s.connection().stats();
            Ok((c.requests_sent - c.retries, c.retries))
        })
    };
    ready_rx
        .recv()
        .map_err(|_| anyhow!("fairness: the streamer failed to start"))?;
    let mut buf = [0u8; PROBE_BYTES];
    // Warm-up, unmeasured.
    for _ in 0..per_round {
        probe.rread(a.va, &mut buf)?;
    }
    let (mut unloaded, mut loaded) = (Vec::new(), Vec::new());
    let pb = bar((2 * rounds) as u64, label);
    let retries_before = probe.connection().stats().retries;
    let result = (|| -> Result<()> {
        for _ in 0..rounds {
            // Unloaded: the streamer idle, no read of it in flight.
            st.active.store(false, Ordering::Release);
            while st.busy.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            for _ in 0..per_round {
                let t = Instant::now();
                probe.rread(a.va, &mut buf).context("fairness: probe")?;
                unloaded.push(ns_since(t));
            }
            pb.inc(1);
            // Loaded: the streamer has a read in flight.
            st.active.store(true, Ordering::Release);
            streamer.thread().unpark();
            while !st.busy.load(Ordering::Acquire) && !streamer.is_finished() {
                std::thread::yield_now();
            }
            for _ in 0..per_round {
                let t = Instant::now();
                probe
                    .rread(a.va, &mut buf)
                    .context("fairness: probe, loaded")?;
                loaded.push(ns_since(t));
            }
            pb.inc(1);
        }
        Ok(())
    })();
    pb.finish_and_clear();
    st.quit.store(true, Ordering::Release);
    st.active.store(false, Ordering::Release);
    streamer.thread().unpark();
    let joined = streamer
        .join()
        .map_err(|_| anyhow!("fairness: the streamer panicked"))?;
    result?;
    let (stream_requests, stream_error) = match joined {
        Ok((n, _)) => (n, None),
        Err(e) => (0, Some(format!("{e:#}"))),
    };
    let probe_retries = probe.connection().stats().retries - retries_before;
    if buf != [0x5a; PROBE_BYTES] {
        return Err(anyhow!("fairness: the probe read wrong bytes"));
    }
    let reads = st.reads.load(Ordering::Relaxed);
    let secs = st.ns.load(Ordering::Relaxed) as f64 / 1e9;
    let u = Summary::of(&mut unloaded);
    let l = Summary::of(&mut loaded);
    Ok(Side {
        max_response_bytes: bound,
        p99_ratio: ratio(l.p99_ns, u.p99_ns),
        p50_ratio: ratio(l.p50_ns, u.p50_ns),
        unloaded: u,
        loaded: l,
        stream_gbps: if secs > 0.0 {
            (reads * STREAM_BYTES as u64) as f64 * 8.0 / secs / 1e9
        } else {
            0.0
        },
        stream_reads: reads,
        // The streamer's requests also count its ralloc (one).
        requests_per_stream_read: if reads > 0 {
            stream_requests.saturating_sub(1) as f64 / reads as f64
        } else {
            0.0
        },
        probe_retries,
        stream_error,
    })
}

fn side_text(name: &str, s: &Side) -> String {
    format!(
        "  {name}: bound {}\n    probe {} B unloaded p50 {:.1} µs p99 {:.1} µs; loaded p50 {:.1} µs p99 {:.1} µs; p99 ratio {:.2}, p50 ratio {:.2}\n    streamer: {} reads of 8 MiB, {:.1} requests each, {:.2} Gbit/s; probe retries {}\n",
        s.max_response_bytes
            .map_or("none stated".to_string(), |b| format!("{} KiB", b / 1024)),
        PROBE_BYTES,
        s.unloaded.p50_ns / 1e3,
        s.unloaded.p99_ns / 1e3,
        s.loaded.p50_ns / 1e3,
        s.loaded.p99_ns / 1e3,
        s.p99_ratio,
        s.p50_ratio,
        s.stream_reads,
        s.requests_per_stream_read,
        s.stream_gbps,
        s.probe_retries,
    ) + &s
        .stream_error
        .as_ref()
        .map_or(String::new(), |e| format!("    streamer failed: {e}\n"))
}

impl Outcome for Fairness {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::at_most(
            "probe p99 while another client streams 8 MiB reads / unloaded p99",
            (self.bounded.p99_ratio * 100.0).round() / 100.0,
            TARGET_P99_RATIO,
        )]
    }

    fn text(&self) -> String {
        let mut t = format!(
            "  {} rounds × {} probe reads unloaded and loaded, alternating\n",
            self.rounds, self.samples_per_round
        );
        t += &side_text("target board", &self.bounded);
        if let Some(u) = &self.unbounded {
            t += &side_text("same board, bound raised (contrast)", u);
        }
        if let Some(e) = &self.unbounded_error {
            t += &format!("  same board, bound raised (contrast): failed: {e}\n");
        }
        t
    }

    fn plots(&self) -> Vec<Plot> {
        let mut cats = vec!["bounded".to_string()];
        let mut un = vec![self.bounded.unloaded.p99_ns / 1e3];
        let mut lo = vec![self.bounded.loaded.p99_ns / 1e3];
        if let Some(u) = &self.unbounded {
            cats.push("no bound".into());
            un.push(u.unloaded.p99_ns / 1e3);
            lo.push(u.loaded.p99_ns / 1e3);
        }
        vec![Plot {
            file: "fairness-p99.svg".into(),
            svg: svg::bar_chart(
                "64 B read p99, alone vs beside an 8 MiB-read stream",
                &Axis::linear("µs"),
                &cats,
                &[("unloaded".into(), un), ("loaded".into(), lo)],
            ),
        }]
    }
}
