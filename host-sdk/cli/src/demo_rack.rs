//! `clio demo --rack`: a checked workload over a local rack — a controller and
//! emulated memory nodes served over real UDP on loopback, a `RackClient` over
//! UDP. It spans nodes, allocates small objects without controller round trips,
//! migrates a region under a writer, and kills the primary of a replicated region
//! under writers; every acknowledged write is checked against a model.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clio::backend::UdpTransport;
use clio::ClientConfig;
use clio_control::{Message, VREGION_BYTES};
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{RackClient, UdpLinks};
use serde::Serialize;

use crate::demo::{write_rows, Step};
use crate::progress::{Event, Progress, StepOutcome};
use crate::report::{fmt_ns, percentile};

/// The controller declares a node dead after this long without heartbeats
/// (sent every 100 ms). Not shorter: at 300 ms, a CI run on a loaded
/// two-core host (the demo beside other tests) declared a live node dead,
/// and the demo's last replicated allocation then found one live node.
const DEAD_AFTER_MS: u64 = 1000;

/// The outcome of `clio demo --rack`: every step's row, in order.
#[derive(Debug, Clone, Serialize)]
pub struct RackDemoReport {
    /// Memory nodes in the rack.
    pub nodes: usize,
    /// How the client reached the controller (`udp`).
    pub controller: String,
    /// The rows.
    pub steps: Vec<Step>,
    /// Rows that passed.
    pub passed: usize,
    /// Rows that failed.
    pub failed: usize,
}

impl RackDemoReport {
    /// The closing line: `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }

    /// An error when any step failed.
    pub fn verdict(&self) -> Result<()> {
        if self.failed > 0 {
            bail!("{} rack demo step(s) failed", self.failed);
        }
        Ok(())
    }
}

/// The rows as `clio demo --rack` prints them, then the summary line.
impl std::fmt::Display for RackDemoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_rows(f, &self.steps, 40)?;
        writeln!(f, "{}", self.summary())
    }
}

type Client = RackClient<UdpTransport>;

/// Writers owning alternate 8 B words of `[va, va + words * 8)` until `stop`;
/// each returns the model of its acknowledged writes.
fn writers(
    c: &Arc<Client>,
    va: u64,
    words: u64,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<Result<BTreeMap<u64, u64>>>> {
    (0..2u64)
        .map(|t| {
            let (c, stop) = (Arc::clone(c), Arc::clone(stop));
            std::thread::spawn(move || {
                let mut model = BTreeMap::new();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) || i < 50 {
                    let at = va + ((i * 2 + t) % words) * 8;
                    let v = (t << 60) | i;
                    c.rwrite(at, &v.to_le_bytes())?;
                    model.insert(at, v);
                    i += 1;
                }
                Ok(model)
            })
        })
        .collect()
}

/// Joins the writers and reads every word of their model back; the number of
/// words checked.
fn check(
    c: &Client,
    hs: Vec<std::thread::JoinHandle<Result<BTreeMap<u64, u64>>>>,
) -> Result<usize> {
    let mut model = BTreeMap::new();
    for h in hs {
        model.extend(h.join().map_err(|_| anyhow::anyhow!("writer panicked"))??);
    }
    let mut b = [0u8; 8];
    for (at, v) in &model {
        c.rread(*at, &mut b)?;
        if u64::from_le_bytes(b) != *v {
            bail!(
                "acknowledged write lost at {at:#x}: {:#x} instead of {v:#x}",
                u64::from_le_bytes(b)
            );
        }
    }
    Ok(model.len())
}

/// Runs `clio demo --rack` with `nodes` emulated nodes of `board`, each
/// step sent to `sink` as it ends. An error when the rack cannot start;
/// failed steps are rows of the report (see [`RackDemoReport::verdict`]).
pub fn demo(
    board: &clio_config::BoardConfig,
    nodes: usize,
    sink: &mut dyn Progress,
) -> Result<RackDemoReport> {
    if nodes < 3 {
        bail!("--nodes: the rack demo needs at least 3 (two copies and a migration target)");
    }
    let log = std::env::temp_dir().join(format!("clio-demo-rack-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut r = LocalRack::start_keyless(nodes, board, "127.0.0.1:0".parse()?, &log, DEAD_AFTER_MS)
        .context("starting a local rack")?;
    sink.event(Event::Began {
        command: "clio demo --rack".into(),
        against: format!(
            "controller on udp://{}, {nodes} emulated '{}' nodes, dead after {DEAD_AFTER_MS} ms",
            r.controller_addr(),
            board.board.name
        ),
    });
    let cfg = ClientConfig {
        // A dead node is noticed within this bound (the controller's verdict
        // follows within dead_after_ms).
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(board)
    };
    let c = Arc::new(RackClient::new(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        cfg,
    )?);
    let mut steps = Vec::new();
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result<String>| {
        let o = StepOutcome::run(name, f);
        let ok = o.ok;
        sink.event(Event::Step(o.clone()));
        steps.push(Step::from(o));
        ok
    };

    let span = 3 * VREGION_BYTES;
    let mut big = 0;
    let ok = step("ralloc 3 GiB over the nodes", &mut || {
        big = c.ralloc(span)?;
        let owners: Vec<String> = (0..3)
            .map(|i| {
                let region = (big >> 30) as u32 + i;
                format!("{}", c.owner_of(region).unwrap_or(0))
            })
            .collect();
        Ok(format!(
            "va {big:#x}, regions on nodes {}",
            owners.join(", ")
        ))
    });
    if !ok {
        bail!("allocation failed; nothing else can run");
    }
    let edge = big + VREGION_BYTES - 3000;
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 31 + 7) as u8).collect();
    step("rwrite/rread 6000 B across a node edge", &mut || {
        c.rwrite(edge, &data)?;
        let mut back = vec![0u8; data.len()];
        c.rread(edge, &mut back)?;
        if back != data {
            bail!("read back differs");
        }
        Ok(format!("fenced on {} nodes", c.rfence()?))
    });
    step("200 small rallocs (no controller trip)", &mut || {
        let mut lat = Vec::new();
        let mut vas = Vec::new();
        for _ in 0..200 {
            let t = Instant::now();
            vas.push(c.ralloc(4096)?);
            lat.push(t.elapsed().as_nanos() as f64);
        }
        for (i, va) in vas.iter().enumerate() {
            c.rwrite(*va, &(i as u64).to_le_bytes())?;
        }
        let mut b = [0u8; 8];
        for (i, va) in vas.iter().enumerate() {
            c.rread(*va, &mut b)?;
            if u64::from_le_bytes(b) != i as u64 {
                bail!("object {i} reads {}", u64::from_le_bytes(b));
            }
            c.rfree(*va)?;
        }
        lat.sort_by(f64::total_cmp);
        Ok(format!(
            "p50 {}, p99 {}; each written, read back, freed",
            fmt_ns(percentile(&lat, 0.5)),
            fmt_ns(percentile(&lat, 0.99))
        ))
    });
    let moved = (big >> 30) as u32 + 2;
    step("migrate a region under 2 writers", &mut || {
        let va = u64::from(moved) << 30;
        c.rwrite(va, &[0; 64])?;
        let from = c.owner_of(moved).context("no owner")?;
        let to = (1..=nodes as u16)
            .find(|n| *n != from)
            .context("no target")?;
        let stop = Arc::new(AtomicBool::new(false));
        let hs = writers(&c, va, 512, &stop);
        std::thread::sleep(Duration::from_millis(30));
        let m = c.migrate(moved, to)?;
        stop.store(true, Ordering::Relaxed);
        let n = check(&c, hs)?;
        Ok(format!(
            "node {} -> {}, {} KiB, writes paused {}; {n} words checked, 0 lost",
            m.from,
            m.to,
            m.bytes >> 10,
            fmt_ns(m.paused.as_nanos() as f64)
        ))
    });
    let mut rep = 0;
    step("ralloc_replicated 8 MiB", &mut || {
        rep = c.ralloc_replicated(2 * CHUNK)?;
        let (p, b) = c.copies_of((rep >> 30) as u32).context("no copies")?;
        let b = b.context("no backup")?;
        c.rwrite(rep + CHUNK, &0u64.to_le_bytes())?;
        Ok(format!("primary node {p}, backup node {b}"))
    });
    let mut victim = 0;
    step("kill the primary under 2 writers + adder", &mut || {
        let region = (rep >> 30) as u32;
        let counter = rep + CHUNK;
        let (p, b) = c.copies_of(region).context("no copies")?;
        let b = b.context("no backup")?;
        victim = p;
        let stop = Arc::new(AtomicBool::new(false));
        let hs = writers(&c, rep, 1024, &stop);
        let adder = {
            let (c, stop) = (Arc::clone(&c), Arc::clone(&stop));
            std::thread::spawn(move || -> Result<u64> {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) || n < 50 {
                    c.faa(counter, 1)?;
                    n += 1;
                }
                Ok(n)
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        r.kill(p)?;
        c.rwrite(rep + 8 * 2000, &[1; 8])?;
        let pause = t.elapsed();
        stop.store(true, Ordering::Relaxed);
        let n = check(&c, hs)?;
        let acked = adder
            .join()
            .map_err(|_| anyhow::anyhow!("adder panicked"))??;
        let mut w = [0u8; 8];
        c.rread(counter, &mut w)?;
        if u64::from_le_bytes(w) != acked {
            bail!(
                "{acked} adds acknowledged, counter {}",
                u64::from_le_bytes(w)
            );
        }
        if c.copies_of(region) != Some((b, None)) {
            bail!("region not served by the promoted backup");
        }
        Ok(format!(
            "node {p} killed; backup {b} promoted, serving after {}; {n} words and {acked} adds checked, 0 lost",
            fmt_ns(pause.as_nanos() as f64)
        ))
    });
    step("the dead node is fenced", &mut || {
        let mut ctl = clio_rack::service::Client::connect(r.controller_addr())?;
        let Message::NodeReport { live, epoch, .. } =
            ctl.call(Message::NodeStatus { node: victim })?
        else {
            bail!("unexpected answer to NodeStatus");
        };
        if live {
            bail!("node {victim} still live at the controller");
        }
        let va = c.ralloc_replicated(1)?;
        let (p, b) = c.copies_of((va >> 30) as u32).context("no copies")?;
        let b = b.context("the new allocation has one copy")?;
        if p == victim || b == victim {
            bail!("a new region was placed on the dead node");
        }
        Ok(format!(
            "node {victim} dead at epoch {epoch} (fence); new copies on {p} and {b}"
        ))
    });
    drop(c);
    r.stop()?;
    let _ = std::fs::remove_file(&log);
    let failed = steps.iter().filter(|s| !s.ok).count();
    Ok(RackDemoReport {
        nodes,
        controller: "udp".into(),
        passed: steps.len() - failed,
        failed,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::demo;
    use crate::progress::{steps, Event};

    /// In process over loopback UDP: the rack line, then the seven steps
    /// (node kill included) as events, matching the report's rows.
    #[test]
    fn rack_demo_reports_each_step_as_an_event() {
        let board = clio_config::BoardConfig::embedded("emulator").unwrap();
        let mut ev = Vec::new();
        let report = demo(&board, 3, &mut ev).unwrap();
        assert!(
            matches!(&ev[0], Event::Began { command, against }
                if command == "clio demo --rack" && against.contains("3 emulated 'emulator' nodes")),
            "{:?}",
            ev[0]
        );
        let rows = steps(&ev);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names.len(), 7, "{names:?}");
        assert!(names.contains(&"kill the primary under 2 writers + adder"));
        for (r, s) in rows.iter().zip(&report.steps) {
            assert_eq!((&r.0, r.1), (&s.step, s.ok));
        }
        assert_eq!((report.passed, report.failed), (7, 0), "{report}");
    }

    /// Fewer than three nodes is refused before anything starts.
    #[test]
    fn two_nodes_are_refused() {
        let board = clio_config::BoardConfig::embedded("emulator").unwrap();
        let mut ev = Vec::new();
        let e = demo(&board, 2, &mut ev).unwrap_err();
        assert!(e.to_string().contains("--nodes"), "{e}");
        assert!(ev.is_empty());
    }
}
