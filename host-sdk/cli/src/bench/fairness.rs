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
//! With the board emulated in this process, the benchmark serves its own
//! board of the target's config and has the server trace the prober's
//! requests ([`clio_emu::ServerHandle::trace`]): each sample splits into
//! *intake* (probe call → the board's loop took the request in: the SDK's
//! send, the socket, a board busy elsewhere), *board* (taken in → the send
//! of the answer returned: the board's own queueing, its fairness) and
//! *return* (→ the probe call returned: the kernel, the prober's wake-up).
//! The prober's, streamer's and board thread's scheduler waits
//! (`/proc/<tid>/schedstat`, time runnable but not running) show how much
//! of the tail is the host's two cores rather than the board. The same run
//! is then repeated on a second emulated board whose bound is raised to
//! 65 535 KiB (each 8 MiB read then one request), the board before the
//! bound existed: its ratio is reported beside, not checked.
//!
//! The checked run puts the streamer's client thread in the `SCHED_IDLE`
//! class ([`Priority::Idle`]): on a real rack the streaming client is
//! another host, and on this machine's two cores an equal-priority streamer
//! thread takes the core the prober's wake-up needs, so the prober's tail
//! measured the host's scheduler, not the board (the schedstat waits above
//! show it). A `SCHED_IDLE` thread runs only on a core that neither the
//! board nor the prober wants, and is preempted at once when they wake,
//! which is what a client on its own host looks like to them; nice 19 did
//! not do that (a woken prober still waited milliseconds behind it). The
//! board's thread keeps its priority: the board is still shared, and the
//! streamer must still stream [`MIN_STREAM_GBPS`]. The same run with the
//! streamer at the prober's priority is reported beside it.
//!
//! The emulated board interleaves long READ answers packet by packet
//! (`clio_emu::Board::set_interleave_reads`); `CLIO_FAIR_WHOLE_READS=1`
//! serves boards that answer each READ whole, for a side-by-side contrast.

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
/// The streamer thread's scheduling in a run.
#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// `SCHED_IDLE`: the checked run. The streaming client stands for
    /// another host, not for a thread competing with the prober and the
    /// board for this host's cores.
    Idle,
    /// The prober's own priority (reported, not checked).
    Same,
}

impl Priority {
    fn label(self) -> &'static str {
        match self {
            Priority::Idle => "SCHED_IDLE",
            Priority::Same => "the prober's priority",
        }
    }

    /// Apply to the calling thread.
    fn apply(self) -> Result<()> {
        if self == Priority::Same {
            return Ok(());
        }
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 names the calling thread; `param` outlives the call.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if rc != 0 {
            return Err(anyhow!(
                "fairness: putting the streamer thread in SCHED_IDLE: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
}
/// The streamer's goodput below which the loaded rounds did not load the
/// board (a starved low-priority streamer would meet the ratio trivially):
/// a tenth of one 10 Gbit/s port.
pub const MIN_STREAM_GBPS: f64 = 1.0;

/// Where a probe read's time went, per phase (only with the board
/// emulated in this process, whose server traces the prober).
#[derive(Debug, Serialize)]
struct Phases {
    /// Probe samples matched to a traced request (one each).
    matched: usize,
    /// Probe call → the board's loop took the request in.
    intake: Summary,
    /// Taken in → the send of its answer returned (the board-side time).
    board: Summary,
    /// Answer sent → the probe call returned.
    ret: Summary,
    /// Datagrams the board sent between taking the request in and sending
    /// its answer, p50 and p99: its queueing counted in packets, which the
    /// host's scheduler cannot stretch.
    ahead_p50: f64,
    ahead_p99: f64,
    /// Their bytes, p99, and the time they take on one of the board's
    /// ports at its line rate (`network.port_gbps`), µs: the board-side
    /// delay a hardware board with this queueing adds.
    ahead_bytes_p99: f64,
    ahead_line_us_p99: f64,
}

/// Scheduler time of one thread over the loaded rounds: on a CPU, and
/// runnable but waiting for one (`/proc/<tid>/schedstat`).
#[derive(Debug, Serialize, Default, Clone, Copy)]
struct Sched {
    run_ms: f64,
    wait_ms: f64,
}

/// One board's measurement.
#[derive(Debug, Serialize)]
struct Side {
    /// The streamer thread's scheduling (the prober's is unchanged).
    streamer_priority: Priority,
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
    /// Phases of the unloaded samples.
    unloaded_phases: Option<Phases>,
    /// Phases of the loaded samples.
    loaded_phases: Option<Phases>,
    /// Board-side (taken in → answered) loaded p99 / unloaded p99.
    board_p99_ratio: Option<f64>,
    /// The prober's own scheduler wait per loaded sample.
    loaded_probe_sched_wait: Option<Summary>,
    /// Scheduler time of the prober, streamer and board threads in the
    /// loaded rounds (`None` where /proc has no schedstat).
    loaded_sched: Option<[Sched; 3]>,
    /// Wall time of the loaded rounds, ms.
    loaded_wall_ms: f64,
    /// The streamer's goodput while streaming, Gbit/s.
    stream_gbps: f64,
    /// 8 MiB reads the streamer completed.
    stream_reads: u64,
    /// Requests per streamed read (what the SDK cut each into).
    requests_per_stream_read: f64,
    /// Retries of the prober (RTO expiry or loss).
    probe_retries: u64,
    /// Retries of the streamer.
    stream_retries: u64,
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
    /// The target board, the streamer in `SCHED_IDLE` (checked).
    bounded: Side,
    /// The target board, the streamer at the prober's priority (reported:
    /// on two cores its tail is the host's scheduler).
    same_priority: Side,
    /// An emulated board without a practical bound (only with the board
    /// emulated in this process).
    unbounded: Option<Side>,
    /// How the contrast run failed, if it did.
    unbounded_error: Option<String>,
}

/// Run the fairness benchmark against the target board.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let (rounds, per_round) = if ctx.plan.quick { (4, 50) } else { (10, 300) };
    // An emulated target: serve an own board of its config, to trace it.
    let serve = |cfg: &BoardConfig| -> Result<clio_emu::ServerHandle> {
        let mut board = clio_emu::Board::new(cfg).map_err(anyhow::Error::msg)?;
        // `CLIO_FAIR_WHOLE_READS=1`: the board answers each READ whole at
        // intake (as before interleaving, and as the RTL does), for a
        // side-by-side contrast.
        if std::env::var_os("CLIO_FAIR_WHOLE_READS").is_some_and(|v| v == "1") {
            board.set_interleave_reads(false);
        }
        Ok(clio_emu::spawn(
            board,
            "127.0.0.1:0".parse()?,
            clio_emu::ServeOptions::for_board(cfg),
        )?)
    };
    // One board per measurement, emulated here, or the target board.
    let on_board = |cfg: &BoardConfig, label: &str, prio: Priority| -> Result<Side> {
        if ctx.embedded {
            let server = serve(cfg)?;
            let side = measure(
                server.addr(),
                cfg,
                Some(&server),
                rounds,
                per_round,
                label,
                prio,
            );
            server.stop()?;
            side
        } else {
            measure(ctx.addr, cfg, None, rounds, per_round, label, prio)
        }
    };
    let bounded = on_board(&ctx.cfg, "fairness", Priority::Idle)?;
    if let Some(e) = &bounded.stream_error {
        return Err(anyhow!("{e}"));
    }
    let same_priority = on_board(
        &ctx.cfg,
        "fairness, streamer at the prober's priority",
        Priority::Same,
    )?;
    let unbounded = if ctx.embedded {
        let mut cfg = ctx.cfg;
        cfg.network.max_response_bytes = 65_535 * 1024;
        Some(on_board(&cfg, "fairness, no bound", Priority::Idle).map_err(|e| format!("{e:#}")))
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
        same_priority,
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

/// `(on-CPU ns, runnable-waiting ns)` of a thread, from its schedstat
/// (`None` where the kernel has none).
fn schedstat(path: &str) -> Option<(u64, u64)> {
    let t = std::fs::read_to_string(path).ok()?;
    let mut f = t.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// The schedstat paths of this process's threads named `name`.
fn threads_named(name: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .map(|e| e.path().join("schedstat").display().to_string())
        .collect()
}

/// Summed schedstat of `paths`.
fn sched_sum(paths: &[String]) -> Option<(u64, u64)> {
    paths.iter().try_fold((0, 0), |(r, w), p| {
        schedstat(p).map(|(r2, w2)| (r + r2, w + w2))
    })
}

/// One probe sample: its call's start and end, and the prober's scheduler
/// wait during it.
struct Sample {
    t0: Instant,
    t1: Instant,
    wait_ns: Option<u64>,
}

/// Split `samples` into phases with the server's trace: each sample takes
/// the last record taken in during it (a retry's, if it was retried). The
/// server stamps "answered" when the send of the whole burst holding the
/// answer returned, which may be after the prober already got it: the
/// answer was sent by the time the probe call returned, so the stamp is
/// capped there.
fn phases(samples: &[Sample], trace: &[clio_emu::Traced], port_gbps: u32) -> Phases {
    let (mut intake, mut board, mut ret) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ahead, mut ahead_bytes) = (Vec::new(), Vec::new());
    for s in samples {
        let hit = trace
            .iter()
            .rev()
            .find(|r| r.taken >= s.t0 && r.taken <= s.t1);
        if let Some(r) = hit {
            let (taken, answered) = (&r.taken, &r.answered.min(s.t1));
            ahead.push(r.ahead as f64);
            ahead_bytes.push(r.ahead_bytes as f64);
            intake.push(taken.duration_since(s.t0).as_nanos() as f64);
            board.push(answered.duration_since(*taken).as_nanos() as f64);
            ret.push(s.t1.duration_since(*answered).as_nanos() as f64);
        }
    }
    let ahead = Summary::of(&mut ahead);
    let ahead_bytes = Summary::of(&mut ahead_bytes);
    Phases {
        ahead_p50: ahead.p50_ns,
        ahead_p99: ahead.p99_ns,
        ahead_bytes_p99: ahead_bytes.p99_ns,
        ahead_line_us_p99: ahead_bytes.p99_ns * 8.0 / f64::from(port_gbps.max(1)) / 1e3,
        matched: board.len(),
        intake: Summary::of(&mut intake),
        board: Summary::of(&mut board),
        ret: Summary::of(&mut ret),
    }
}

fn measure(
    addr: SocketAddr,
    board: &BoardConfig,
    server: Option<&clio_emu::ServerHandle>,
    rounds: usize,
    per_round: usize,
    label: &str,
    streamer_priority: Priority,
) -> Result<Side> {
    let cfg = ClientConfig::from_board(board);
    let stream_iwnd = std::env::var("CLIO_FAIR_IWND")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(STREAM_IWND);
    let mut probe = Session::open(addr, cfg.clone())
        .with_context(|| format!("fairness: opening the probe's session on {addr}"))?;
    let bound = probe.board_info().and_then(|i| i.max_resp_bytes());
    let probe_port = probe.transport_mut().local_addr()?.port();
    let a = probe.ralloc(PROBE_BYTES as u64, perms::RW)?;
    probe.rwrite(a.va, &[0x5a; PROBE_BYTES])?;
    let st = Arc::new(Stream::default());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let streamer = {
        let st = st.clone();
        std::thread::spawn(move || -> Result<(u64, u64)> {
            // Response bytes in flight: STREAM_IWND, or CLIO_FAIR_IWND (the
            // SDK's default 4 MiB queued ~64 bound-sized reads at the board
            // that sent a turn's answers whole, past a loaded host's RTO;
            // with bounded bursts it streams, see the emulator README).
            let mut s = Session::open(
                addr,
                ClientConfig {
                    iwnd_bytes: stream_iwnd,
                    ..cfg
                },
            )?;
            let b = s.ralloc(STREAM_BYTES as u64, perms::RW)?;
            let mut buf = vec![0u8; STREAM_BYTES];
            streamer_priority.apply()?;
            let me = std::fs::read_link("/proc/thread-self")
                .map(|p| format!("/proc/{}/schedstat", p.display()))
                .unwrap_or_default();
            let _ = ready_tx.send(me);
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
    let streamer_stat = ready_rx
        .recv()
        .map_err(|_| anyhow!("fairness: the streamer failed to start"))?;
    let prober_stat = "/proc/thread-self/schedstat";
    let board_stats = threads_named("clio-board");
    let mut buf = [0u8; PROBE_BYTES];
    // Warm-up, unmeasured.
    for _ in 0..per_round {
        probe.rread(a.va, &mut buf)?;
    }
    let (mut unloaded, mut loaded) = (Vec::new(), Vec::new());
    let mut sched = [(0u64, 0u64); 3];
    let mut loaded_wall = 0u64;
    let pb = bar((2 * rounds) as u64, label);
    let retries_before = probe.connection().stats().retries;
    if let Some(h) = server {
        h.trace(Some(SocketAddr::new(addr.ip(), probe_port)));
    }
    let sample = |probe: &mut Session<clio::backend::UdpTransport>,
                  buf: &mut [u8],
                  what: &'static str|
     -> Result<Sample> {
        let w0 = schedstat(prober_stat);
        let t0 = Instant::now();
        probe.rread(a.va, buf).context(what)?;
        let t1 = Instant::now();
        let wait_ns = w0.zip(schedstat(prober_stat)).map(|(a, b)| b.1 - a.1);
        Ok(Sample { t0, t1, wait_ns })
    };
    let result = (|| -> Result<()> {
        for _ in 0..rounds {
            // Unloaded: the streamer idle, no read of it in flight.
            st.active.store(false, Ordering::Release);
            while st.busy.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            for _ in 0..per_round {
                unloaded.push(sample(&mut probe, &mut buf, "fairness: probe")?);
            }
            pb.inc(1);
            // Loaded: the streamer has a read in flight.
            st.active.store(true, Ordering::Release);
            streamer.thread().unpark();
            while !st.busy.load(Ordering::Acquire) && !streamer.is_finished() {
                std::thread::yield_now();
            }
            let before = [
                schedstat(prober_stat),
                schedstat(&streamer_stat),
                sched_sum(&board_stats),
            ];
            let w = Instant::now();
            for _ in 0..per_round {
                loaded.push(sample(&mut probe, &mut buf, "fairness: probe, loaded")?);
            }
            loaded_wall += w.elapsed().as_nanos() as u64;
            let after = [
                schedstat(prober_stat),
                schedstat(&streamer_stat),
                sched_sum(&board_stats),
            ];
            for (i, (b, a)) in before.iter().zip(after).enumerate() {
                if let (Some(b), Some(a)) = (b, a) {
                    sched[i].0 += a.0 - b.0;
                    sched[i].1 += a.1 - b.1;
                }
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
    let trace = server.map(|h| {
        let t = h.take_trace();
        h.trace(None);
        t
    });
    let (stream_requests, stream_retries, stream_error) = match joined {
        Ok((n, r)) => (n, r, None),
        Err(e) => (0, 0, Some(format!("{e:#}"))),
    };
    let probe_retries = probe.connection().stats().retries - retries_before;
    if buf != [0x5a; PROBE_BYTES] {
        return Err(anyhow!("fairness: the probe read wrong bytes"));
    }
    let reads = st.reads.load(Ordering::Relaxed);
    let secs = st.ns.load(Ordering::Relaxed) as f64 / 1e9;
    let (unloaded_phases, loaded_phases) = match &trace {
        Some(t) => {
            let g = board.network.port_gbps;
            (Some(phases(&unloaded, t, g)), Some(phases(&loaded, t, g)))
        }
        None => (None, None),
    };
    let board_p99_ratio = unloaded_phases
        .as_ref()
        .zip(loaded_phases.as_ref())
        .map(|(u, l)| ratio(l.board.p99_ns, u.board.p99_ns));
    let mut waits: Option<Vec<f64>> = loaded.iter().map(|s| s.wait_ns.map(|w| w as f64)).collect();
    let loaded_probe_sched_wait = waits.as_mut().map(|w| Summary::of(w));
    let loaded_sched = (!board_stats.is_empty() && schedstat(prober_stat).is_some()).then(|| {
        sched.map(|(r, w)| Sched {
            run_ms: r as f64 / 1e6,
            wait_ms: w as f64 / 1e6,
        })
    });
    let lat = |v: &[Sample]| -> Vec<f64> {
        v.iter()
            .map(|s| s.t1.duration_since(s.t0).as_nanos() as f64)
            .collect()
    };
    let u = Summary::of(&mut lat(&unloaded));
    let l = Summary::of(&mut lat(&loaded));
    Ok(Side {
        streamer_priority,
        max_response_bytes: bound,
        p99_ratio: ratio(l.p99_ns, u.p99_ns),
        p50_ratio: ratio(l.p50_ns, u.p50_ns),
        unloaded: u,
        loaded: l,
        unloaded_phases,
        loaded_phases,
        board_p99_ratio,
        loaded_probe_sched_wait,
        loaded_sched,
        loaded_wall_ms: loaded_wall as f64 / 1e6,
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
        stream_retries,
        stream_error,
    })
}

fn side_text(name: &str, s: &Side) -> String {
    let us = |ns: f64| ns / 1e3;
    let mut t = format!(
        "  {name}: bound {}\n    probe {} B end to end: unloaded p50 {:.1} µs p99 {:.1} µs; loaded p50 {:.1} µs p99 {:.1} µs; p99 ratio {:.2}, p50 ratio {:.2}\n",
        s.max_response_bytes
            .map_or("none stated".to_string(), |b| format!("{} KiB", b / 1024)),
        PROBE_BYTES,
        us(s.unloaded.p50_ns),
        us(s.unloaded.p99_ns),
        us(s.loaded.p50_ns),
        us(s.loaded.p99_ns),
        s.p99_ratio,
        s.p50_ratio,
    );
    if let (Some(u), Some(l)) = (&s.unloaded_phases, &s.loaded_phases) {
        t += &format!(
            "    board side (taken in → answer sent): unloaded p50 {:.1} µs p99 {:.1} µs; loaded p50 {:.1} µs p99 {:.1} µs; p99 ratio {:.2}\n",
            us(u.board.p50_ns),
            us(u.board.p99_ns),
            us(l.board.p50_ns),
            us(l.board.p99_ns),
            s.board_p99_ratio.unwrap_or(0.0),
        );
        t += &format!(
            "    loaded phases p50/p99 µs: intake {:.1}/{:.1}, board {:.1}/{:.1}, return {:.1}/{:.1} ({} of {} samples traced)\n",
            us(l.intake.p50_ns),
            us(l.intake.p99_ns),
            us(l.board.p50_ns),
            us(l.board.p99_ns),
            us(l.ret.p50_ns),
            us(l.ret.p99_ns),
            l.matched,
            s.loaded.n,
        );
    }
    if let (Some(u), Some(l)) = (&s.unloaded_phases, &s.loaded_phases) {
        t += &format!(
            "    datagrams the board sent ahead of the probe's answer: unloaded p50 {:.0} p99 {:.0}; loaded p50 {:.0} p99 {:.0} ({:.0} B, {:.1} µs at the port's line rate)\n",
            u.ahead_p50, u.ahead_p99, l.ahead_p50, l.ahead_p99, l.ahead_bytes_p99, l.ahead_line_us_p99,
        );
    }
    if let Some(w) = &s.loaded_probe_sched_wait {
        t += &format!(
            "    prober's scheduler wait per loaded sample: p50 {:.1} µs p99 {:.1} µs\n",
            us(w.p50_ns),
            us(w.p99_ns),
        );
    }
    if let Some([p, st, b]) = &s.loaded_sched {
        t += &format!(
            "    loaded rounds ({:.0} ms): on CPU / waiting for one, ms: prober {:.0}/{:.0}, streamer {:.0}/{:.0}, board {:.0}/{:.0}\n",
            s.loaded_wall_ms, p.run_ms, p.wait_ms, st.run_ms, st.wait_ms, b.run_ms, b.wait_ms,
        );
    }
    t += &format!(
        "    streamer: {} reads of 8 MiB, {:.1} requests each, {:.2} Gbit/s, {} retries; probe retries {}\n",
        s.stream_reads,
        s.requests_per_stream_read,
        s.stream_gbps,
        s.stream_retries,
        s.probe_retries,
    );
    t + &s
        .stream_error
        .as_ref()
        .map_or(String::new(), |e| format!("    streamer failed: {e}\n"))
}

impl Outcome for Fairness {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![
            Check::at_most(
                "probe p99 while another client streams 8 MiB reads / unloaded p99",
                (self.bounded.p99_ratio * 100.0).round() / 100.0,
                TARGET_P99_RATIO,
            ),
            Check::at_least(
                "the streamer's goodput in that run, Gbit/s (else the board was not loaded)",
                (self.bounded.stream_gbps * 100.0).round() / 100.0,
                MIN_STREAM_GBPS,
            ),
        ]
    }

    fn text(&self) -> String {
        let mut t = format!(
            "  {} rounds × {} probe reads unloaded and loaded, alternating\n",
            self.rounds, self.samples_per_round
        );
        t += &side_text(
            &format!(
                "target board, streamer thread at {}",
                Priority::Idle.label()
            ),
            &self.bounded,
        );
        t += &side_text(
            "same board, streamer at the prober's priority (reported, not checked)",
            &self.same_priority,
        );
        if let Some(u) = &self.unbounded {
            t += &side_text("same board, bound raised (contrast)", u);
        }
        if let Some(e) = &self.unbounded_error {
            t += &format!("  same board, bound raised (contrast): failed: {e}\n");
        }
        t
    }

    fn plots(&self) -> Vec<Plot> {
        let mut cats = vec!["bounded".to_string(), "same priority".to_string()];
        let mut un = vec![
            self.bounded.unloaded.p99_ns / 1e3,
            self.same_priority.unloaded.p99_ns / 1e3,
        ];
        let mut lo = vec![
            self.bounded.loaded.p99_ns / 1e3,
            self.same_priority.loaded.p99_ns / 1e3,
        ];
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
