//! `clio fabric`: an emulated EDM rack — `--cards` emulated Alveo U200 compute
//! cards, `--nodes` Clio memory nodes on EDM ports and one EDM switch, all on the
//! cycle models (`clio-fabric`). Each card's XDMA nodes are stand-in files that a
//! program opens as `xdma://DIR/xdmaN`, exactly as it opens a real card
//! (`clio info --addr xdma://DIR/xdma0`, `clio bringup --xdma DIR/xdma0`).
//! `--check` runs an SDK workload through every card and exits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::Session;
use clio_fabric::{Rack, RackOptions, RackStats};
use clio_wire::payload::perms;
use serde::Serialize;

use crate::board_arg::load_board;

/// Start an emulated EDM rack.
#[derive(Debug, Args)]
pub struct FabricArgs {
    /// Emulated U200 compute cards (card i sends to memory node i mod --nodes).
    #[arg(long, default_value_t = 2)]
    pub cards: usize,
    /// Clio memory nodes on EDM ports.
    #[arg(long, default_value_t = 1)]
    pub nodes: usize,
    /// Directory for the cards' device files (default: a fresh one under the
    /// system temporary directory, removed at exit).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Board config of the memory nodes (a TOML path or an embedded name).
    #[arg(long, default_value = "emulator")]
    pub config: String,
    /// Run alloc / write / read / atomics / free through every card, print the
    /// result and exit (non-zero on any failure).
    #[arg(long)]
    pub check: bool,
    /// Serve this many seconds, then exit (default: until interrupted).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One card's check.
#[derive(Debug, Serialize)]
struct CardCheck {
    card: String,
    ok: bool,
    error: Option<String>,
}

/// Model-time latency summary.
#[derive(Debug, Serialize, Default)]
struct Latency {
    count: usize,
    mean_ns: f64,
    p99_ns: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    cards: Vec<String>,
    nodes: usize,
    checks: Vec<CardCheck>,
    requests: u64,
    answers: u64,
    refused: Vec<(String, u64)>,
    read_latency: Latency,
    other_latency: Latency,
}

fn summary(st: &RackStats, read: bool) -> Latency {
    let mut v: Vec<u64> = st
        .latencies
        .iter()
        .filter(|(r, _)| *r == read)
        .map(|(_, c)| *c)
        .collect();
    if v.is_empty() {
        return Latency::default();
    }
    v.sort_unstable();
    let ns = |c: u64| c as f64 * edm::timing::CYCLE_NS;
    Latency {
        count: v.len(),
        mean_ns: v.iter().map(|&c| ns(c)).sum::<f64>() / v.len() as f64,
        p99_ns: ns(v[(v.len() * 99).div_ceil(100).saturating_sub(1)]),
    }
}

/// The SDK workload of `--check` on one card.
fn check_card(addr: &str, cfg: clio::ClientConfig) -> Result<()> {
    let t = clio_xdma::connect(addr)?;
    let mut s = Session::open_with(t, cfg)?;
    let a = s.ralloc(1 << 20, perms::RW)?;
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 31 + 7) as u8).collect();
    s.rwrite(a.va, &data)?;
    let mut back = vec![0u8; data.len()];
    s.rread(a.va, &mut back)?;
    if back != data {
        bail!("read back differs from what was written");
    }
    let w = a.va + 65_536;
    let old = s.faa(w, 3)?;
    let swapped = s.cas(w, old + 3, 99)?;
    if old != 0 || swapped != 3 {
        bail!("atomics: faa returned {old}, cas returned {swapped} (expected 0 and 3)");
    }
    s.rfree(a.va, 1 << 20)?;
    Ok(())
}

/// Run `clio fabric`.
pub fn run(a: &FabricArgs) -> Result<()> {
    let board = load_board(&a.config)?;
    let (dir, temp) = match &a.dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("--dir {}", d.display()))?;
            (d.clone(), false)
        }
        None => {
            let d = std::env::temp_dir().join(format!("clio-fabric-{}", std::process::id()));
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
            (d, true)
        }
    };
    let result = serve(a, &board, &dir);
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn serve(a: &FabricArgs, board: &clio_config::BoardConfig, dir: &std::path::Path) -> Result<()> {
    let rack = Rack::start(RackOptions {
        cards: a.cards,
        nodes: a.nodes,
        dir: dir.to_path_buf(),
        board: *board,
    })
    .map_err(|e| anyhow::anyhow!("clio fabric: {e}"))?;
    let cards: Vec<String> = rack
        .cards()
        .iter()
        .map(|p| format!("xdma://{}", p.display()))
        .collect();
    if !a.json {
        println!(
            "clio fabric: {} emulated U200 card(s), {} memory node(s) ('{}') on one EDM switch",
            a.cards, a.nodes, board.board.name
        );
        for (i, c) in cards.iter().enumerate() {
            println!("  card {i}: {c} -> memory node {}", i % a.nodes);
        }
    }
    let mut checks = Vec::new();
    if a.check {
        let cfg = clio::ClientConfig::from_board(board);
        for c in &cards {
            let r = check_card(c, cfg.clone());
            checks.push(CardCheck {
                card: c.clone(),
                ok: r.is_ok(),
                error: r.err().map(|e| format!("{e:#}")),
            });
        }
    } else {
        let end = a
            .seconds
            .map(|s| Instant::now() + Duration::from_secs_f64(s));
        loop {
            std::thread::sleep(Duration::from_millis(100));
            if end.is_some_and(|e| Instant::now() >= e) {
                break;
            }
        }
    }
    let st = rack.stats();
    rack.stop()
        .map_err(|e| anyhow::anyhow!("clio fabric: {e}"))?;
    let report = Report {
        cards,
        nodes: a.nodes,
        requests: st.requests,
        answers: st.answers,
        refused: st.refused.clone(),
        read_latency: summary(&st, true),
        other_latency: summary(&st, false),
        checks,
    };
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for c in &report.checks {
            match &c.error {
                None => println!("  PASS {}: alloc, write, read, faa, cas, free", c.card),
                Some(e) => println!("  FAIL {}: {e}", c.card),
            }
        }
        println!(
            "  {} requests, {} answers; EDM model latency card -> memory node -> card: reads mean {:.1} ns (p99 {:.1}, {} answers), others mean {:.1} ns (p99 {:.1}, {})",
            report.requests,
            report.answers,
            report.read_latency.mean_ns,
            report.read_latency.p99_ns,
            report.read_latency.count,
            report.other_latency.mean_ns,
            report.other_latency.p99_ns,
            report.other_latency.count
        );
    }
    if failed > 0 {
        bail!("clio fabric --check: {failed} card(s) failed");
    }
    Ok(())
}
