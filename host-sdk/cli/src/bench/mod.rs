//! `clio bench`: the stack's benchmarks, side by side in one run, with a
//! text table, `--json` for scripts and SVG plots (`--svg DIR`).
//!
//! Each benchmark is a module returning an [`Outcome`]: its data (JSON),
//! its checks against the targets, a text rendering and its plots. This
//! module sizes the runs ([`Plan`]), runs the chosen benchmarks in order,
//! and assembles the report. See `host-sdk/cli/BENCH.md`.

mod boards;
mod df;
pub mod edm;
mod fairness;
mod fault;
mod inproc;
mod kv;
mod latency;
mod mv;
mod peer;
pub mod rack;
mod radix;
mod scale;
pub mod slowpath;
mod stats;
mod svg;
mod tcp;
mod throughput;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use clio_config::BoardConfig;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::board_arg::{connect_target, load_board, TargetArgs};

/// Run the benchmarks (all, or those named by `--only`), or a subcommand.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// A benchmark report of its own.
    #[command(subcommand)]
    pub cmd: Option<BenchCmd>,
    /// Options of the benchmark suite.
    #[command(flatten)]
    pub suite: SuiteArgs,
}

/// Benchmark reports with options of their own.
#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// The slow path's report: allocation retries (Clio Fig. 13),
    /// allocation latency, free-PA refill rate, memory footprint.
    Slowpath(slowpath::SlowpathArgs),
    /// Clio requests over the EDM fabric in model time: unloaded 64 B breakdown,
    /// 8 cards -> 2 memory nodes under load (issue #15).
    Edm(edm::EdmArgs),
    /// A rack of emulated nodes: 64 B read ops/s over 1-8 nodes, allocation
    /// through the controller vs one node, a migration under writers.
    Rack(rack::RackBenchArgs),
}

/// The benchmarks of the suite, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Which {
    /// Sync rread/rwrite latency over UDP next to a bare UDP echo.
    Latency,
    /// Pipelined 64 B async reads from one thread.
    Async,
    /// CPU cost of a 16 B sync read on the in-process backend.
    Inproc,
    /// First-touch (fault) vs TLB-hit vs TLB-miss access.
    Fault,
    /// Latency with 1..1000 concurrent sessions (PIDs).
    Sessions,
    /// Latency with up to 2^20 mapped PTEs.
    Ptes,
    /// The same workload against memcached (get/set).
    Memcached,
    /// Radix-tree lookups by rchase vs by rread over UDP (issue #16).
    Radix,
    /// YCSB A-D against Clio-KV, memcached and redis-server (issue #16).
    Kv,
    /// A small read's p50/p99 alone and while another client streams
    /// 8 MiB reads (issue #23).
    Fairness,
    /// Clio-MV: reading any version vs the latest (issue #16).
    Mv,
    /// Clio-DF: select at 1 % offloaded vs fetched and filtered (issue #16).
    Df,
}

impl Which {
    const ALL: [Which; 12] = [
        Which::Latency,
        Which::Async,
        Which::Inproc,
        Which::Fault,
        Which::Sessions,
        Which::Ptes,
        Which::Memcached,
        Which::Radix,
        Which::Kv,
        Which::Fairness,
        Which::Mv,
        Which::Df,
    ];

    fn name(self) -> &'static str {
        match self {
            Which::Latency => "latency",
            Which::Async => "async",
            Which::Inproc => "inproc",
            Which::Fault => "fault",
            Which::Sessions => "sessions",
            Which::Ptes => "ptes",
            Which::Memcached => "memcached",
            Which::Radix => "radix",
            Which::Kv => "kv",
            Which::Fairness => "fairness",
            Which::Mv => "mv",
            Which::Df => "df",
        }
    }

    /// Whether it talks to the target board over UDP.
    fn needs_target(self) -> bool {
        matches!(
            self,
            Which::Latency | Which::Async | Which::Memcached | Which::Radix | Which::Fairness
        )
    }
}

/// Options of the benchmark suite.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A smoke run of a few seconds (CI): fewer samples, smaller scales.
    #[arg(long)]
    pub quick: bool,
    /// Print the report as JSON (progress and the summary line go to stderr).
    #[arg(long)]
    pub json: bool,
    /// Write SVG plots (latency CDFs, bar and scaling charts) into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Run only these benchmarks (comma-separated or repeated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Which>,
    /// Largest number of mapped 4 KiB pages in the `ptes` benchmark
    /// (default 2^20, quick 1024; the board's DRAM is sized to match).
    #[arg(long)]
    pub max_ptes: Option<u64>,
    /// Largest number of concurrent sessions in `sessions` (default 1000, quick 32).
    #[arg(long)]
    pub max_sessions: Option<u32>,
    /// Value sizes `kv` measures (comma-separated, of 64, 256 and 1024;
    /// default all three): `--kv-values 1024` runs the target rows
    /// only, a third of the time, with the same request streams.
    #[arg(long, value_delimiter = ',')]
    pub kv_values: Vec<usize>,
    /// The board the UDP benchmarks (latency, async, memcached) talk to;
    /// the scaling, fault and in-process ones build boards from `--config`.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// How much work each benchmark does.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The quick (smoke) sizes.
    pub quick: bool,
    /// Latency: measured rounds (after one warm-up round) and ops per
    /// series per round.
    pub lat_rounds: usize,
    /// Ops per series per round.
    pub lat_batch: usize,
    /// Async: laps per transport and seconds per lap.
    pub async_laps: usize,
    /// Seconds per async lap.
    pub async_lap_secs: f64,
    /// Async: requests kept outstanding.
    pub async_depth: usize,
    /// In-process: timed batches and ops per batch.
    pub inproc_batches: usize,
    /// Ops per in-process batch.
    pub inproc_batch: usize,
    /// Fault: pages first touched (then re-read as hits and misses).
    pub fault_pages: u64,
    /// Sessions: the session counts.
    pub sessions: Vec<u32>,
    /// Sessions: sync reads measured per count.
    pub session_samples: usize,
    /// PTEs: the mapped-page counts.
    pub ptes: Vec<u64>,
    /// PTEs: random reads measured per count.
    pub pte_samples: usize,
    /// Memcached: rounds and ops per series per round.
    pub peer_rounds: usize,
    /// Ops per memcached/clio series per round.
    pub peer_batch: usize,
    /// Radix: keys inserted into the depth-8 tree.
    pub radix_keys: usize,
    /// Radix: lookups of each kind (rchase, rread).
    pub radix_lookups: usize,
    /// KV: keys loaded per value size.
    pub kv_keys: u64,
    /// KV: requests per (workload, distribution, mode, store).
    pub kv_ops: usize,
    /// KV: requests in flight when pipelined.
    pub kv_depth: usize,
    /// KV: the value sizes measured (of `kv::VALUE_SIZES`).
    pub kv_values: Vec<usize>,
    /// MV: objects.
    pub mv_objects: usize,
    /// MV: versions appended to each object (all kept).
    pub mv_versions: u64,
    /// MV: reads of each kind (latest, any version).
    pub mv_reads: usize,
    /// DF: bytes of the table (two `u64` columns).
    pub df_bytes: u64,
    /// DF: rounds of each path.
    pub df_rounds: usize,
}

impl Plan {
    /// The sizes for `quick` or a full run, with the caps of the options.
    pub fn new(quick: bool, max_ptes: Option<u64>, max_sessions: Option<u32>) -> Plan {
        let max_ptes = max_ptes.unwrap_or(if quick { 1024 } else { 1 << 20 });
        let max_sessions = max_sessions.unwrap_or(if quick { 32 } else { 1000 });
        let mut ptes: Vec<u64> = [1u64, 16, 64, 256, 4096, 65536, 1 << 20]
            .into_iter()
            .filter(|&n| n < max_ptes)
            .collect();
        ptes.push(max_ptes.max(1));
        let mut sessions: Vec<u32> = [1u32, 10, 100, 1000]
            .into_iter()
            .filter(|&n| n < max_sessions)
            .collect();
        sessions.push(max_sessions.max(1));
        if quick {
            Plan {
                quick,
                lat_rounds: 4,
                lat_batch: 25,
                async_laps: 3,
                async_lap_secs: 0.05,
                async_depth: 64,
                inproc_batches: 40,
                inproc_batch: 50,
                fault_pages: 256,
                sessions,
                session_samples: 200,
                ptes,
                pte_samples: 200,
                peer_rounds: 4,
                peer_batch: 20,
                radix_keys: 300,
                radix_lookups: 50,
                kv_keys: 2000,
                kv_ops: 400,
                kv_depth: 16,
                kv_values: kv::VALUE_SIZES.to_vec(),
                mv_objects: 4,
                mv_versions: 50,
                mv_reads: 300,
                df_bytes: 2 << 20,
                df_rounds: 3,
            }
        } else {
            Plan {
                quick,
                lat_rounds: 100,
                lat_batch: 100,
                async_laps: 10,
                async_lap_secs: 0.4,
                async_depth: 512,
                inproc_batches: 2000,
                inproc_batch: 200,
                fault_pages: 8192,
                sessions,
                session_samples: 4000,
                ptes,
                pte_samples: 20_000,
                peer_rounds: 30,
                peer_batch: 100,
                radix_keys: 5000,
                radix_lookups: 500,
                // The size: 100 000 keys (of 1 KiB: about 110 MB in
                // the store's address space).
                kv_keys: 100_000,
                kv_ops: 5_000,
                kv_depth: 32,
                kv_values: kv::VALUE_SIZES.to_vec(),
                mv_objects: 32,
                mv_versions: 1000,
                mv_reads: 5000,
                df_bytes: 64 << 20,
                df_rounds: 5,
            }
        }
    }
}

/// One comparison with a target.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What is compared.
    pub what: String,
    /// The target, as text (`<= 1.5`).
    pub target: String,
    /// The measured value.
    pub value: f64,
    /// Whether the target is met.
    pub met: bool,
}

impl Check {
    /// `value <= max`.
    pub fn at_most(what: impl Into<String>, value: f64, max: f64) -> Check {
        Check {
            what: what.into(),
            target: format!("<= {max}"),
            value,
            met: value <= max,
        }
    }

    /// `value >= min`.
    pub fn at_least(what: impl Into<String>, value: f64, min: f64) -> Check {
        Check {
            what: what.into(),
            target: format!(">= {min}"),
            value,
            met: value >= min,
        }
    }
}

/// An SVG file a benchmark offers.
#[derive(Debug, Clone)]
pub struct Plot {
    /// File name inside the `--svg` directory.
    pub file: String,
    /// The document.
    pub svg: String,
}

/// What a benchmark hands back.
pub trait Outcome {
    /// Its measurements as JSON.
    fn data(&self) -> Result<serde_json::Value>;
    /// Its comparisons with the targets.
    fn checks(&self) -> Vec<Check>;
    /// A human-readable table.
    fn text(&self) -> String;
    /// Its plots.
    fn plots(&self) -> Vec<Plot>;
}

/// A benchmark's result: done, or skipped with the reason.
pub enum Ran {
    /// It ran.
    Done(Box<dyn Outcome>),
    /// It could not run here (e.g. a peer system is not installed).
    Skipped(String),
}

/// What the benchmarks share: the plan and the target board.
pub struct Ctx {
    /// Sizes.
    pub plan: Plan,
    /// Board config of the target (and of in-process boards).
    pub cfg: BoardConfig,
    /// Name of that config as given.
    pub config_name: String,
    /// The target board (`--addr`, or the board `connect_target` started).
    /// With an emulated target, `latency` and `async` start their own board
    /// whose server thread also answers the floor's echoes.
    pub addr: SocketAddr,
    /// Whether `addr` is a board this process started.
    pub embedded: bool,
}

/// Whether [`bar`] draws: off unless a program turns it on (the `clio`
/// binary does), so a library caller's terminal is left alone.
static SHOW_PROGRESS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets the benchmarks draw progress bars on stderr (when it is a terminal).
pub fn show_progress(on: bool) {
    SHOW_PROGRESS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A benchmark's progress bar: on stderr when [`show_progress`] turned bars
/// on and stderr is a terminal, hidden otherwise.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let b = if SHOW_PROGRESS.load(std::sync::atomic::Ordering::Relaxed) {
        ProgressBar::new(len)
    } else {
        ProgressBar::hidden()
    };
    b.set_style(
        ProgressStyle::with_template("  {prefix:<10} {bar:36} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b.set_prefix(what.to_string());
    b
}

/// Nanoseconds since `t`.
pub fn ns_since(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64
}

/// The machine a suite ran on.
#[derive(Debug, Serialize)]
pub struct Machine {
    /// Cores available to the process.
    pub nproc: usize,
    /// 1, 5 and 15-minute load averages (empty where /proc/loadavg is missing).
    pub loadavg_start: Vec<f64>,
    /// The same at the end of the run.
    pub loadavg_end: Vec<f64>,
}

fn loadavg() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| {
            s.split_whitespace()
                .take(3)
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// How a benchmark of the suite ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran.
    Ok,
    /// It could not run here (the reason is given).
    Skipped,
    /// It failed (the error is given).
    Failed,
}

/// One benchmark's entry in the suite report.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    /// The benchmark (`--only` name).
    pub name: &'static str,
    /// How it ended.
    pub status: Status,
    /// Why it was skipped, or its error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Its comparisons with the targets.
    pub checks: Vec<Check>,
    /// The SVG files written (with `--svg`).
    pub plots: Vec<String>,
    /// Its measurements.
    pub data: serde_json::Value,
}

/// Counts over the suite.
#[derive(Debug, Serialize)]
pub struct Totals {
    /// Benchmarks that ran.
    pub ok: usize,
    /// Benchmarks skipped.
    pub skipped: usize,
    /// Benchmarks that failed.
    pub failed: usize,
    /// Target comparisons made.
    pub targets: usize,
    /// Of those, met.
    pub targets_met: usize,
}

/// The suite's report (`--json` prints it whole).
#[derive(Debug, Serialize)]
pub struct SuiteReport {
    /// Always `clio bench`.
    pub tool: &'static str,
    /// Whether the quick sizes ran.
    pub quick: bool,
    /// The board config's name as given.
    pub config: String,
    /// The UDP target.
    pub target: String,
    /// The machine.
    pub machine: Machine,
    /// The sizes.
    pub plan: Plan,
    /// Wall time of the suite, seconds.
    pub seconds: f64,
    /// Each benchmark, in the order run.
    pub benchmarks: Vec<BenchResult>,
    /// Counts.
    pub summary: Totals,
}

impl SuiteReport {
    /// The one-line summary: counts, targets met, time and load.
    pub fn summary(&self) -> String {
        format!(
            "clio bench: {} benchmark(s): {} ok, {} skipped, {} failed; targets met {}/{}; {:.1} s, load average {} -> {}",
            self.benchmarks.len(),
            self.summary.ok,
            self.summary.skipped,
            self.summary.failed,
            self.summary.targets_met,
            self.summary.targets,
            self.seconds,
            fmt_load(&self.machine.loadavg_start),
            fmt_load(&self.machine.loadavg_end),
        )
    }

    /// An error if a benchmark failed (a missed target is not one).
    pub fn verdict(&self) -> Result<()> {
        if self.summary.failed > 0 {
            bail!("{} benchmark(s) failed", self.summary.failed);
        }
        Ok(())
    }
}

/// What the suite reports while it runs; `Display` is the text `clio
/// bench` prints for it (the header line, or a benchmark's section).
#[derive(Debug)]
pub enum SuiteEvent<'a> {
    /// The suite is about to run.
    Began {
        /// Whether the quick sizes run.
        quick: bool,
        /// The board config's name as given.
        config: &'a str,
        /// The UDP target.
        target: SocketAddr,
        /// Whether the target is a board this process started.
        emulated_here: bool,
        /// Cores available.
        cores: usize,
        /// Load averages at the start.
        loadavg: &'a [f64],
    },
    /// A benchmark ended.
    Ran {
        /// Its entry in the report.
        result: &'a BenchResult,
        /// Its text table (empty unless it ran).
        text: &'a str,
    },
}

impl fmt::Display for SuiteEvent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SuiteEvent::Began {
                quick,
                config,
                target,
                emulated_here,
                cores,
                loadavg,
            } => writeln!(
                f,
                "clio bench{}: board config '{config}', UDP target {target}{}; {cores} core(s), load average {}",
                if *quick { " --quick" } else { "" },
                if *emulated_here {
                    " (emulated in this process)"
                } else {
                    ""
                },
                fmt_load(loadavg),
            ),
            SuiteEvent::Ran { result: r, text } => {
                let reason = r.reason.as_deref().unwrap_or("");
                match r.status {
                    Status::Skipped => return writeln!(f, "\n== {}: skipped ({reason})", r.name),
                    Status::Failed => return writeln!(f, "\n== {}: FAILED: {reason}", r.name),
                    Status::Ok => {}
                }
                writeln!(f, "\n== {} ({:.1} s)", r.name, r.seconds)?;
                write!(f, "{text}")?;
                for c in &r.checks {
                    writeln!(
                        f,
                        "  [{}] {}: {} (target {})",
                        if c.met { "met" } else { "MISS" },
                        c.what,
                        fmt_value(c.value),
                        c.target
                    )?;
                }
                Ok(())
            }
        }
    }
}

fn run_one(which: Which, ctx: &Ctx) -> Result<Ran> {
    match which {
        Which::Latency => latency::run(ctx),
        Which::Async => throughput::run(ctx),
        Which::Inproc => inproc::run(ctx),
        Which::Fault => fault::run(ctx),
        Which::Sessions => scale::sessions(ctx),
        Which::Ptes => scale::ptes(ctx),
        Which::Memcached => peer::run(ctx),
        Which::Radix => radix::run(ctx),
        Which::Kv => kv::run(ctx),
        Which::Fairness => fairness::run(ctx),
        Which::Mv => mv::run(ctx),
        Which::Df => df::run(ctx),
    }
}

/// Runs `which` and makes its report entry (writing its plots into `svg`)
/// and text.
fn run_entry(which: Which, ctx: &Ctx, svg: Option<&Path>) -> Result<(BenchResult, String)> {
    let t = Instant::now();
    let r = run_one(which, ctx);
    let seconds = t.elapsed().as_secs_f64();
    let entry = |status, reason| BenchResult {
        name: which.name(),
        status,
        reason,
        seconds,
        checks: Vec::new(),
        plots: Vec::new(),
        data: serde_json::Value::Null,
    };
    Ok(match r {
        Ok(Ran::Done(o)) => {
            let mut files = Vec::new();
            if let Some(dir) = svg {
                for p in o.plots() {
                    let path = dir.join(&p.file);
                    // A plot with clipped text or an empty series is a bug
                    // of ours, not something to hand a reader.
                    svg::check(&p.svg).map_err(|e| anyhow::anyhow!("plot {}: {e}", p.file))?;
                    std::fs::write(&path, &p.svg)
                        .with_context(|| format!("writing {}", path.display()))?;
                    files.push(path.display().to_string());
                }
            }
            let res = BenchResult {
                checks: o.checks(),
                plots: files,
                data: o.data()?,
                ..entry(Status::Ok, None)
            };
            (res, o.text())
        }
        Ok(Ran::Skipped(reason)) => (entry(Status::Skipped, Some(reason)), String::new()),
        Err(e) => (entry(Status::Failed, Some(format!("{e:#}"))), String::new()),
    })
}

/// Runs the suite (`clio bench` without a subcommand): the chosen
/// benchmarks in order, each reported to `on` as it ends. A benchmark that
/// fails is reported and the suite goes on; the caller prints the report
/// and its [`SuiteReport::verdict`].
pub fn run_suite(a: &SuiteArgs, on: &mut dyn FnMut(SuiteEvent<'_>)) -> Result<SuiteReport> {
    let started = Instant::now();
    let loadavg_start = loadavg();
    let mut which: Vec<Which> = if a.only.is_empty() {
        Which::ALL.to_vec()
    } else {
        Which::ALL
            .into_iter()
            .filter(|w| a.only.contains(w))
            .collect()
    };
    which.dedup();
    let mut plan = Plan::new(a.quick, a.max_ptes, a.max_sessions);
    if !a.kv_values.is_empty() {
        if let Some(v) = a.kv_values.iter().find(|v| !kv::VALUE_SIZES.contains(v)) {
            bail!(
                "--kv-values: {v} is not a measured value size (one of {:?})",
                kv::VALUE_SIZES
            );
        }
        plan.kv_values = kv::VALUE_SIZES
            .into_iter()
            .filter(|v| a.kv_values.contains(v))
            .collect();
    }
    // Only start (or resolve) a target when a UDP benchmark needs one.
    let (addr, cfg, server) = if which.iter().any(|w| w.needs_target()) {
        connect_target(&a.target)?
    } else {
        (
            SocketAddr::from(([127, 0, 0, 1], 0)),
            load_board(&a.target.config)?,
            None,
        )
    };
    let ctx = Ctx {
        plan,
        cfg,
        config_name: a.target.config.clone(),
        addr,
        embedded: server.is_some() || a.target.addr.is_none(),
    };
    if let Some(dir) = &a.svg {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--svg: creating directory {}", dir.display()))?;
    }
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    on(SuiteEvent::Began {
        quick: a.quick,
        config: &ctx.config_name,
        target: ctx.addr,
        emulated_here: server.is_some(),
        cores: nproc,
        loadavg: &loadavg_start,
    });
    let mut results = Vec::new();
    for w in which {
        let (result, text) = run_entry(w, &ctx, a.svg.as_deref())?;
        on(SuiteEvent::Ran {
            result: &result,
            text: &text,
        });
        results.push(result);
    }
    drop(server);
    let count = |s: Status| results.iter().filter(|r| r.status == s).count();
    let checks = results.iter().flat_map(|r| r.checks.iter());
    let summary = Totals {
        ok: count(Status::Ok),
        skipped: count(Status::Skipped),
        failed: count(Status::Failed),
        targets: checks.clone().count(),
        targets_met: checks.filter(|c| c.met).count(),
    };
    Ok(SuiteReport {
        tool: "clio bench",
        quick: a.quick,
        config: ctx.config_name.clone(),
        target: if ctx.embedded {
            format!("emulated board on {}", ctx.addr)
        } else {
            ctx.addr.to_string()
        },
        machine: Machine {
            nproc,
            loadavg_start,
            loadavg_end: loadavg(),
        },
        plan: ctx.plan.clone(),
        seconds: started.elapsed().as_secs_f64(),
        summary,
        benchmarks: results,
    })
}

fn fmt_load(l: &[f64]) -> String {
    if l.is_empty() {
        "unknown".into()
    } else {
        l.iter()
            .map(|v| format!("{v:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A check's value: integers plainly, ratios with two decimals, big
/// numbers with SI prefixes.
fn fmt_value(v: f64) -> String {
    if v.abs() >= 1e4 {
        svg::tick_label((v / 1e3).round() * 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_scale_with_the_caps() {
        let full = Plan::new(false, None, None);
        assert_eq!(full.ptes, vec![1, 16, 64, 256, 4096, 65536, 1 << 20]);
        assert_eq!(full.sessions, vec![1, 10, 100, 1000]);
        let quick = Plan::new(true, None, None);
        assert_eq!(quick.ptes, vec![1, 16, 64, 256, 1024]);
        assert_eq!(quick.sessions, vec![1, 10, 32]);
        let capped = Plan::new(false, Some(5000), Some(1));
        assert_eq!(capped.ptes, vec![1, 16, 64, 256, 4096, 5000]);
        assert_eq!(capped.sessions, vec![1]);
    }

    #[test]
    fn checks_compare_both_ways() {
        assert!(Check::at_most("x", 1.5, 1.5).met);
        assert!(!Check::at_most("x", 1.6, 1.5).met);
        assert!(Check::at_least("y", 1e6, 1e6).met);
        assert!(!Check::at_least("y", 9e5, 1e6).met);
        assert_eq!(Check::at_most("x", 1.0, 2.0).target, "<= 2");
        assert_eq!(fmt_value(3.0), "3");
        assert_eq!(fmt_value(1.234), "1.23");
        assert_eq!(fmt_value(1_234_567.0), "1.235M");
    }

    fn result(name: &'static str, status: Status, reason: Option<&str>) -> BenchResult {
        BenchResult {
            name,
            status,
            reason: reason.map(str::to_string),
            seconds: 1.5,
            checks: vec![Check::at_most("p50 ratio", 1.2, 1.5)],
            plots: Vec::new(),
            data: serde_json::Value::Null,
        }
    }

    /// The text of each event, and the summary and verdict of a report.
    #[test]
    fn events_render_and_failures_decide_the_verdict() {
        let began = SuiteEvent::Began {
            quick: true,
            config: "emulator",
            target: "127.0.0.1:9".parse().unwrap(),
            emulated_here: true,
            cores: 2,
            loadavg: &[],
        };
        assert_eq!(
            began.to_string(),
            "clio bench --quick: board config 'emulator', UDP target 127.0.0.1:9 (emulated in this process); 2 core(s), load average unknown\n"
        );
        let ok = result("latency", Status::Ok, None);
        let ran = SuiteEvent::Ran {
            result: &ok,
            text: "  table\n",
        };
        assert_eq!(
            ran.to_string(),
            "\n== latency (1.5 s)\n  table\n  [met] p50 ratio: 1.20 (target <= 1.5)\n"
        );
        let skipped = result("memcached", Status::Skipped, Some("not installed"));
        let failed = result("kv", Status::Failed, Some("boom"));
        let text = |r| {
            SuiteEvent::Ran {
                result: r,
                text: "",
            }
            .to_string()
        };
        assert_eq!(text(&skipped), "\n== memcached: skipped (not installed)\n");
        assert_eq!(text(&failed), "\n== kv: FAILED: boom\n");
        let mut report = SuiteReport {
            tool: "clio bench",
            quick: true,
            config: "emulator".into(),
            target: "x".into(),
            machine: Machine {
                nproc: 2,
                loadavg_start: vec![0.5, 0.25, 1.0],
                loadavg_end: Vec::new(),
            },
            plan: Plan::new(true, None, None),
            seconds: 3.0,
            benchmarks: vec![ok, skipped],
            summary: Totals {
                ok: 1,
                skipped: 1,
                failed: 0,
                targets: 1,
                targets_met: 1,
            },
        };
        assert_eq!(
            report.summary(),
            "clio bench: 2 benchmark(s): 1 ok, 1 skipped, 0 failed; targets met 1/1; 3.0 s, load average 0.50 0.25 1.00 -> unknown"
        );
        assert!(report.verdict().is_ok());
        report.benchmarks.push(failed);
        report.summary.failed = 1;
        let e = report.verdict().unwrap_err().to_string();
        assert_eq!(e, "1 benchmark(s) failed");
    }
}
