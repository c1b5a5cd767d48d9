//! `clio fabric`: an emulated EDM rack — `--cards` emulated Alveo U200 compute
//! cards, `--nodes` Clio memory nodes on EDM ports and one EDM switch, all on the
//! cycle models (`clio-fabric`). Each card's XDMA nodes are stand-in files that a
//! program opens as `xdma://DIR/xdmaN`, exactly as it opens a real card
//! (`clio info --addr xdma://DIR/xdma0`, `clio bringup --xdma DIR/xdma0`).
//! `--check` runs an SDK workload through every card and exits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::progress::{Event, Progress};
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
#[derive(Debug, Clone, Serialize)]
pub struct CardCheck {
    /// The card's address (`xdma://…`).
    pub card: String,
    /// Whether the SDK workload passed on it.
    pub ok: bool,
    /// Why it failed.
    pub error: Option<String>,
}

/// Model-time latency summary.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Latency {
    /// Answers counted.
    pub count: usize,
    /// Mean, ns.
    pub mean_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
}

/// What `clio fabric` did: the cards, the `--check` rows, the rack's counts.
#[derive(Debug, Clone, Serialize)]
pub struct FabricReport {
    /// Card addresses, card `i` in front of memory node `i % nodes`.
    pub cards: Vec<String>,
    /// Memory nodes.
    pub nodes: usize,
    /// One row per card with `--check`.
    pub checks: Vec<CardCheck>,
    /// Requests the cards took.
    pub requests: u64,
    /// Answers they gave.
    pub answers: u64,
    /// Refusals by reason.
    pub refused: Vec<(String, u64)>,
    /// Read latency card -> memory node -> card (model time).
    pub read_latency: Latency,
    /// Latency of the other requests.
    pub other_latency: Latency,
}

/// The `--check` rows and the counts, as `clio fabric` prints them at the end.
impl std::fmt::Display for FabricReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.checks {
            match &c.error {
                None => writeln!(f, "  PASS {}: alloc, write, read, faa, cas, free", c.card)?,
                Some(e) => writeln!(f, "  FAIL {}: {e}", c.card)?,
            }
        }
        writeln!(
            f,
            "  {} requests, {} answers; EDM model latency card -> memory node -> card: reads mean {:.1} ns (p99 {:.1}, {} answers), others mean {:.1} ns (p99 {:.1}, {})",
            self.requests,
            self.answers,
            self.read_latency.mean_ns,
            self.read_latency.p99_ns,
            self.read_latency.count,
            self.other_latency.mean_ns,
            self.other_latency.p99_ns,
            self.other_latency.count
        )
    }
}

impl FabricReport {
    /// An error when a card failed its check.
    pub fn verdict(&self) -> Result<()> {
        let failed = self.checks.iter().filter(|c| !c.ok).count();
        if failed > 0 {
            bail!("clio fabric --check: {failed} card(s) failed");
        }
        Ok(())
    }
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

/// Runs `clio fabric`: starts the emulated rack, reports it (the cards as
/// [`Event::Endpoint`]s) to `sink`, runs `--check` or serves for
/// `--seconds` (until killed without), stops it; the report.
pub fn fabric(a: &FabricArgs, sink: &mut dyn Progress) -> Result<FabricReport> {
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
    let result = serve(a, &board, &dir, sink);
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn serve(
    a: &FabricArgs,
    board: &clio_config::BoardConfig,
    dir: &std::path::Path,
    sink: &mut dyn Progress,
) -> Result<FabricReport> {
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
    sink.event(Event::Began {
        command: "clio fabric".into(),
        against: format!(
            "{} emulated U200 card(s), {} memory node(s) ('{}') on one EDM switch",
            a.cards, a.nodes, board.board.name
        ),
    });
    for (i, c) in cards.iter().enumerate() {
        sink.event(Event::Endpoint {
            name: format!("card {i}"),
            detail: format!("{c} -> memory node {}", i % a.nodes),
        });
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
    Ok(FabricReport {
        cards,
        nodes: a.nodes,
        requests: st.requests,
        answers: st.answers,
        refused: st.refused.clone(),
        read_latency: summary(&st, true),
        other_latency: summary(&st, false),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::{fabric, FabricArgs};
    use crate::progress::Event;

    /// `--check` in process: the rack line, one endpoint event per card (in
    /// front of node `i % nodes`), then every card passes the SDK workload.
    #[test]
    fn check_reports_the_cards_then_passes_on_each() {
        let dir = tempfile::tempdir().unwrap();
        let a = FabricArgs {
            cards: 2,
            nodes: 1,
            dir: Some(dir.path().to_path_buf()),
            config: "emulator".into(),
            check: true,
            seconds: None,
            json: false,
        };
        let mut ev = Vec::new();
        let report = fabric(&a, &mut ev).unwrap();
        assert!(matches!(&ev[0], Event::Began { command, .. } if command == "clio fabric"));
        let cards: Vec<(String, String)> = ev
            .iter()
            .filter_map(|e| match e {
                Event::Endpoint { name, detail } => Some((name.clone(), detail.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(cards.len(), 2);
        assert_eq!(cards[1].0, "card 1");
        assert!(cards[1].1.ends_with("-> memory node 0"), "{cards:?}");
        assert_eq!(report.checks.len(), 2);
        assert!(report.checks.iter().all(|c| c.ok), "{report}");
        assert!(report.answers > 0);
        assert!(report.verdict().is_ok());
    }
}
