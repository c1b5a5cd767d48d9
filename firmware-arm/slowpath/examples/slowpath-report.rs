//! Run the slow-path benchmark report and write it as JSON and SVG.
//!
//! `cargo run -p clio-slowpath --release --features std --example slowpath-report -- \
//!     [--board zcu106|emulator] [--quick] [--json out.json] [--svg out.svg]`

use clio_slowpath::report::{report, to_svg, ReportOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut board = "zcu106".to_string();
    let mut json = None;
    let mut svg = None;
    let mut opts = ReportOptions::FULL;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--board" => board = args.next().unwrap_or_default(),
            "--json" => json = args.next(),
            "--svg" => svg = args.next(),
            "--quick" => opts = ReportOptions::QUICK,
            other => {
                eprintln!("slowpath-report: unknown argument {other:?} (use --board, --json, --svg, --quick)");
                return ExitCode::from(2);
            }
        }
    }
    let cfg = match board.as_str() {
        "zcu106" => clio_config::boards::ZCU106,
        "emulator" => clio_config::boards::EMULATOR,
        other => {
            eprintln!("slowpath-report: --board {other:?}: expected zcu106 or emulator");
            return ExitCode::from(2);
        }
    };
    let r = report(&cfg, &opts);
    for c in &r.retry_curves {
        println!(
            "retry curve: {} ({} pages, {} slots)",
            c.name, c.phys_pages, c.table_slots
        );
        println!("  util%   pages  mean_retries  max  refused  median_alloc_us");
        for p in &c.points {
            println!(
                "  {:6.1} {:6} {:13.3} {:4} {:8} {:16.2}",
                p.utilization_pct,
                p.pages,
                p.mean_retries,
                p.max_retries,
                p.refused,
                p.median_alloc_ns / 1e3
            );
        }
        match c.per_retry_ns {
            Some(ns) => println!("  time per retry: {:.2} us", ns / 1e3),
            None => println!("  time per retry: no retries observed"),
        }
    }
    println!("alloc latency ({}):", r.board);
    println!("  pages  util%  va_alloc_us(median)  va_p99_us  pa_per_page_us(median)");
    for l in &r.alloc_latency {
        println!(
            "  {:5} {:6} {:20.2} {:10.2} {:23.3}",
            l.pages,
            l.utilization_pct,
            l.va_alloc_ns / 1e3,
            l.va_alloc_p99_ns / 1e3,
            l.pa_alloc_ns / 1e3
        );
    }
    println!(
        "refill: {:.2} M PAs/s median lap, {:.2} M/s best lap, over {} PAs (target {:.2} M/s: {})",
        r.refill.per_sec / 1e6,
        r.refill.best_per_sec / 1e6,
        r.refill.pages,
        r.refill.target_per_sec / 1e6,
        if r.refill.meets_target {
            "met"
        } else {
            "NOT met"
        }
    );
    let f = &r.footprint;
    println!(
        "footprint ({}): shadow table {} KiB, bucket counts {} KiB, ranges {} KiB, pids {} KiB, phys {} KiB, dirty queue {} KiB, total {} KiB",
        f.board,
        f.shadow_table >> 10,
        f.bucket_counts >> 10,
        f.ranges >> 10,
        f.pids >> 10,
        f.phys >> 10,
        f.dirty_queue >> 10,
        f.total >> 10
    );
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&r).expect("report serialises");
        if let Err(e) = std::fs::write(&p, text) {
            eprintln!("slowpath-report: writing {p}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(p) = svg {
        if let Err(e) = std::fs::write(&p, to_svg(&r)) {
            eprintln!("slowpath-report: writing {p}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
