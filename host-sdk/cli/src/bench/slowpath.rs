//! `clio bench slowpath`: the slow path's own report (allocation retry
//! curve, allocation latency, free-PA refill rate, footprint), computed by
//! `clio_slowpath::report` and rendered here as text, JSON or SVG.

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use clio_emu::qemu::SlowPathBench;
use clio_slowpath::report::{report, to_svg, Report, ReportOptions};
use serde::Serialize;

use crate::board_arg::load_board;
use crate::report::fmt_ns;

/// Options of the slow-path report. The slow path measured is the
/// `clio-slowpath` library running on this host.
#[derive(Debug, Args)]
pub struct SlowpathArgs {
    /// Board config (a TOML path or an embedded name) whose slow path is measured.
    #[arg(long, default_value = "zcu106")]
    pub board: String,
    /// A quick pass (fewer probes and levels; seconds).
    #[arg(long)]
    pub quick: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the retry curves as an SVG plot to this file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Where the measured slow path runs: `inproc` (the library's full
    /// report), or `qemu` (ring round trip and alloc latency of the firmware
    /// in QEMU next to the in-process library, in one run).
    #[arg(long, value_enum, default_value_t = crate::sim::SlowPathKind::Inproc)]
    pub slow_path: crate::sim::SlowPathKind,
    /// Firmware ELF for `--slow-path qemu`, built for `--board`.
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// Samples per operation for `--slow-path qemu`.
    #[arg(long, default_value_t = 500)]
    pub iterations: usize,
}

/// `clio bench slowpath`'s report: `Display` is the text, `Serialize` the
/// `--json` form (either report as it is).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum SlowpathReport {
    /// The library's full report (`--slow-path inproc`).
    Inproc(Report),
    /// Ring round trip and allocation latency, QEMU next to in process.
    Qemu(SlowPathBench),
}

impl fmt::Display for SlowpathReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = match self {
            SlowpathReport::Inproc(r) => return write!(f, "{}", text(r)),
            SlowpathReport::Qemu(r) => r,
        };
        writeln!(
            f,
            "slow path: board '{}', firmware {}, QEMU boot {} ms, {} samples",
            r.board, r.build_id, r.qemu_boot_ms, r.iterations
        )?;
        writeln!(
            f,
            "  {:<12} {:>26} {:>26}",
            "", "ring round trip p50 / p99", "alloc p50 / p99"
        )?;
        for (name, l) in [("in process", &r.in_process), ("QEMU", &r.qemu)] {
            writeln!(
                f,
                "  {:<12} {:>12} / {:>11} {:>12} / {:>11}",
                name,
                fmt_ns(l.ring_round_trip.median_ns as f64),
                fmt_ns(l.ring_round_trip.p99_ns as f64),
                fmt_ns(l.alloc.median_ns as f64),
                fmt_ns(l.alloc.p99_ns as f64)
            )?;
        }
        Ok(())
    }
}

/// `--slow-path qemu`: both slow paths behind the same rings, side by side.
fn run_qemu(a: &SlowpathArgs) -> Result<SlowPathBench> {
    let cfg = load_board(&a.board)?;
    let image = a
        .image
        .as_ref()
        .context("--slow-path qemu needs --image (the firmware ELF built for --board)")?;
    let mut opts = clio_emu::qemu::QemuOptions::new(image, cfg);
    if let Some(q) = clio_emu::qemu::find_qemu() {
        opts.qemu = q;
    }
    Ok(clio_emu::qemu::bench_slowpath(
        opts,
        if a.quick { 50 } else { a.iterations },
    )?)
}

/// Runs `clio bench slowpath` (writing the `--svg` plot); the caller
/// prints the report.
pub fn run(a: &SlowpathArgs) -> Result<SlowpathReport> {
    if a.slow_path == crate::sim::SlowPathKind::Qemu {
        return Ok(SlowpathReport::Qemu(run_qemu(a)?));
    }
    let cfg = load_board(&a.board)?;
    let opts = if a.quick {
        ReportOptions::QUICK
    } else {
        ReportOptions::FULL
    };
    let r = report(&cfg, &opts);
    if let Some(path) = &a.svg {
        std::fs::write(path, to_svg(&r))
            .with_context(|| format!("--svg: writing {}", path.display()))?;
    }
    Ok(SlowpathReport::Inproc(r))
}

/// The report as tables.
fn text(r: &Report) -> String {
    let mut o = String::new();
    for c in &r.retry_curves {
        o += &format!(
            "retry curve: {} ({} pages, {} slots)\n  util%  pages  mean retries   max  refused  median alloc\n",
            c.name, c.phys_pages, c.table_slots
        );
        for p in &c.points {
            o += &format!(
                "  {:5.1} {:6} {:13.3} {:5} {:8} {:>13}\n",
                p.utilization_pct,
                p.pages,
                p.mean_retries,
                p.max_retries,
                p.refused,
                fmt_ns(p.median_alloc_ns)
            );
        }
        o += &match c.per_retry_ns {
            Some(ns) => format!("  time per retry: {}\n", fmt_ns(ns)),
            None => "  time per retry: no retries observed\n".to_string(),
        };
    }
    o += &format!(
        "allocation latency ({}):\n  pages  util%  VA median    VA p99  PA per page\n",
        r.board
    );
    for l in &r.alloc_latency {
        o += &format!(
            "  {:5} {:6} {:>10} {:>9} {:>12}\n",
            l.pages,
            l.utilization_pct,
            fmt_ns(l.va_alloc_ns),
            fmt_ns(l.va_alloc_p99_ns),
            fmt_ns(l.pa_alloc_ns)
        );
    }
    o += &format!(
        "free-PA refill: {:.2} M PAs/s median lap, {:.2} M/s best lap, over {} PAs (target {:.2} M/s: {})\n",
        r.refill.per_sec / 1e6,
        r.refill.best_per_sec / 1e6,
        r.refill.pages,
        r.refill.target_per_sec / 1e6,
        if r.refill.meets_target { "met" } else { "NOT met" }
    );
    let f = &r.footprint;
    o += &format!(
        "footprint ({}): shadow table {} KiB, bucket counts {} KiB, ranges {} KiB, PIDs {} KiB, phys {} KiB, dirty queue {} KiB, total {} KiB\n",
        f.board,
        f.shadow_table >> 10,
        f.bucket_counts >> 10,
        f.ranges >> 10,
        f.pids >> 10,
        f.phys >> 10,
        f.dirty_queue >> 10,
        f.total >> 10
    );
    o
}
