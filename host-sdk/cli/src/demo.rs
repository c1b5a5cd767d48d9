//! `clio demo`: the README's main job. Start an emulated board in this
//! process (served over UDP on loopback, like a real board on the wire) and
//! run a visible workload through the SDK, checking every result.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::{ClientConfig, ClioError, Session};
use clio_emu::{Board, FaultConfig, ServeOptions};
use clio_wire::payload::perms;
use serde::Serialize;

use crate::board_arg::load_board;
use crate::progress::{Event, Progress, StepOutcome};
use crate::report::{fmt_ns, percentile};

/// Run a remote-memory workload against an embedded emulated board.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Board config: a TOML path or an embedded name.
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// Faults on the link in both directions (e.g. `drop=0.05,reorder=0.1,window_us=200,dup=0.02,seed=3`).
    #[arg(long, default_value = "")]
    pub faults: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run the rack workload instead: a controller and emulated memory nodes
    /// over UDP, a migration under writers, the primary of a replicated region
    /// killed under writers (every acknowledged write checked).
    #[arg(long)]
    pub rack: bool,
    /// Memory nodes of the rack workload (at least 3).
    #[arg(long, default_value_t = 3, requires = "rack")]
    pub nodes: usize,
}

/// One demo step's row.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The step's name.
    pub step: String,
    /// Whether it passed.
    pub ok: bool,
    /// What it did, or why it failed.
    pub detail: String,
    /// How long it took, in microseconds.
    pub micros: f64,
}

impl From<StepOutcome> for Step {
    fn from(s: StepOutcome) -> Self {
        Self {
            step: s.name,
            ok: s.ok,
            detail: s.detail,
            micros: s.micros,
        }
    }
}

/// The board's packet counts at the end of a demo (not in the JSON form).
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkCounts {
    /// Packets the board received.
    pub received: u64,
    /// Packets the board sent.
    pub sent: u64,
    /// Packets the faulty link dropped towards the board.
    pub dropped_in: u64,
    /// Packets the faulty link dropped towards the client.
    pub dropped_out: u64,
}

/// The outcome of `clio demo`: every step's row, in order.
#[derive(Debug, Clone, Serialize)]
pub struct DemoReport {
    /// The board config's name.
    pub board: String,
    /// Where the emulated board listened.
    pub listen: String,
    /// The rows.
    pub steps: Vec<Step>,
    /// Rows that passed.
    pub passed: usize,
    /// Rows that failed.
    pub failed: usize,
    /// The board's packet counts.
    #[serde(skip)]
    pub link: LinkCounts,
}

impl DemoReport {
    /// The closing line: counts of steps and of the board's packets.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed  (board saw {} packets in, {} out; link dropped {}/{} in/out)",
            self.passed,
            self.failed,
            self.link.received,
            self.link.sent,
            self.link.dropped_in,
            self.link.dropped_out
        )
    }

    /// An error when any step failed.
    pub fn verdict(&self) -> Result<()> {
        if self.failed > 0 {
            bail!("{} demo step(s) failed", self.failed);
        }
        Ok(())
    }
}

/// The rows as `clio demo` prints them, then the summary line.
impl std::fmt::Display for DemoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_rows(f, &self.steps, 34)?;
        writeln!(f, "{}", self.summary())
    }
}

/// Demo rows, the name padded to `width`.
pub(crate) fn write_rows(
    f: &mut std::fmt::Formatter<'_>,
    steps: &[Step],
    width: usize,
) -> std::fmt::Result {
    for s in steps {
        writeln!(
            f,
            "  {:<4} {:<width$} {:>10}  {}",
            if s.ok { "ok" } else { "FAIL" },
            s.step,
            fmt_ns(s.micros * 1e3),
            s.detail
        )?;
    }
    Ok(())
}

/// Runs steps, reporting each to the sink as it ends.
pub(crate) struct Runner<'a> {
    pub(crate) steps: Vec<Step>,
    pub(crate) sink: &'a mut dyn Progress,
}

impl Runner<'_> {
    /// Runs `f` as the step `name`.
    pub(crate) fn step(&mut self, name: &str, f: impl FnOnce() -> Result<String>) {
        let o = StepOutcome::run(name, f);
        self.sink.event(Event::Step(o.clone()));
        self.steps.push(o.into());
    }

    /// (passed, failed).
    pub(crate) fn counts(&self) -> (usize, usize) {
        let failed = self.steps.iter().filter(|s| !s.ok).count();
        (self.steps.len() - failed, failed)
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Runs `clio demo` (not `--rack`: that is [`crate::demo_rack::demo`]):
/// the checked workload on an emulated board in this process, each step
/// sent to `sink` as it ends. An error when the board cannot start; failed
/// steps are rows of the report (see [`DemoReport::verdict`]).
pub fn demo(a: &DemoArgs, sink: &mut dyn Progress) -> Result<DemoReport> {
    let cfg = load_board(&a.board)?;
    let faults = FaultConfig::parse(&a.faults)
        .map_err(anyhow::Error::msg)
        .context("--faults")?;
    let opts = ServeOptions {
        inbound: faults,
        outbound: FaultConfig {
            seed: faults.seed ^ 0x5eed,
            ..faults
        },
        ..ServeOptions::for_board(&cfg)
    };
    let board = Board::new(&cfg).map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(board, "127.0.0.1:0".parse()?, opts)?;
    let addr = server.addr();
    sink.event(Event::Began {
        command: "clio demo".into(),
        against: format!(
            "emulated board '{}' ({} MiB DRAM, {} KiB pages, {}-entry TLB) on udp://{addr}{}",
            cfg.board.name,
            cfg.dram.size >> 20,
            cfg.pages.default_size >> 10,
            cfg.tlb.entries,
            if faults.is_none() {
                String::new()
            } else {
                format!(", faults: {}", a.faults)
            }
        ),
    });
    let page = cfg.pages.default_size;
    let mut r = Runner {
        steps: Vec::new(),
        sink,
    };
    let mut s = Session::open(addr, ClientConfig::from_board(&cfg))
        .context("opening a session (a new address space)")?;
    let mut other = Session::open(addr, ClientConfig::from_board(&cfg))
        .context("opening a second session (another address space)")?;

    r.step("info", || {
        let i = s.info()?;
        Ok(format!(
            "board '{}', rtl {:#x}, mtu {}, {} slots/bucket",
            i.board_name().unwrap_or("?"),
            i.rtl_version,
            i.mtu,
            i.slots_per_bucket
        ))
    });
    let mut region = None;
    r.step("ralloc 3 pages", || {
        let al = s.ralloc(3 * page, perms::RW)?;
        region = Some(al);
        Ok(format!(
            "va {:#x}, {} bytes, {} retries",
            al.va, al.size, al.retries
        ))
    });
    let Some(al) = region else {
        bail!("allocation failed; nothing else can run")
    };
    // A write that starts just before a page boundary and spans many MTUs:
    // first touches fault in two pages, each packet executes on its own.
    let start = al.va + page - 1000;
    let data = pattern(20_000, 7);
    r.step("rwrite 20000 B across a page", || {
        s.rwrite(start, &data)?;
        Ok(format!(
            "{} packets of <= {} B",
            data.len().div_ceil(cfg.network.mtu_payload as usize),
            cfg.network.mtu_payload
        ))
    });
    r.step("rread it back", || {
        let mut back = vec![0u8; data.len()];
        s.rread(start, &mut back)?;
        if back != data {
            let i = back
                .iter()
                .zip(&data)
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            bail!("mismatch at byte {i}");
        }
        Ok("identical".into())
    });
    r.step("sync 64 B reads x 2000", || {
        let mut buf = [0u8; 64];
        let mut lat = Vec::with_capacity(2000);
        for i in 0..2000u64 {
            let t = Instant::now();
            s.rread(al.va + (i * 64) % (2 * page), &mut buf)?;
            lat.push(t.elapsed().as_nanos() as f64);
        }
        lat.sort_by(f64::total_cmp);
        Ok(format!(
            "p50 {}, p99 {}",
            fmt_ns(percentile(&lat, 0.5)),
            fmt_ns(percentile(&lat, 0.99))
        ))
    });
    r.step("async 64 B reads x 4096", || {
        let t = Instant::now();
        let mut handles = Vec::with_capacity(4096);
        for i in 0..4096u64 {
            handles.push(s.rread_async(al.va + (i * 64) % (2 * page), 64)?);
        }
        let results = s.rpoll(&handles)?;
        let ok = results.iter().filter(|r| r.is_ok()).count();
        if ok != handles.len() {
            bail!("{} of {} failed", handles.len() - ok, handles.len());
        }
        Ok(format!(
            "{:.0} ops/s pipelined",
            4096.0 / t.elapsed().as_secs_f64()
        ))
    });
    let word = al.va + 2 * page;
    r.step("fetch-and-add x 100", || {
        for _ in 0..100 {
            s.faa(word, 1)?;
        }
        let v = s.faa(word, 0)?;
        if v != 100 {
            bail!("counter is {v}, expected 100");
        }
        Ok("counter = 100, each applied once".into())
    });
    r.step("compare-and-swap", || {
        let old = s.cas(word, 100, 7)?;
        let miss = s.cas(word, 100, 9)?;
        if (old, miss) != (100, 7) {
            bail!("cas returned {old}/{miss}");
        }
        Ok("100 -> 7; a stale expectation leaves it".into())
    });
    r.step("rlock / runlock", || {
        let lock = word + 8;
        s.rlock(lock)?;
        let held = s.tas(lock)?;
        s.runlock(lock)?;
        if held == 0 {
            bail!("lock word was free while held");
        }
        Ok("held while locked, released after".into())
    });
    r.step("rfence, rrelease", || {
        let h = s.rwrite_async(al.va, &[1, 2, 3, 4])?;
        s.rfence()?;
        s.rrelease()?;
        if !s.try_rpoll(&h)? {
            bail!("write not complete after rrelease");
        }
        Ok("earlier writes complete".into())
    });
    r.step("isolation: PID 2 reads PID 1", || {
        let mut b = [0u8; 8];
        match other.rread(al.va, &mut b) {
            Err(e @ (ClioError::Permission { .. } | ClioError::Unmapped { .. })) => {
                Ok(format!("refused: {e}"))
            }
            Err(e) => bail!("unexpected error {e}"),
            Ok(()) => bail!("PID 2 read PID 1's memory"),
        }
    });
    r.step("rfree, then access", || {
        s.rfree(al.va, al.size)?;
        let mut b = [0u8; 8];
        match s.rread(al.va, &mut b) {
            Err(e @ ClioError::Unmapped { .. }) => Ok(format!("refused: {e}")),
            Err(e) => bail!("unexpected error {e}"),
            Ok(()) => bail!("read of freed memory succeeded"),
        }
    });
    let _ = s.close();
    let _ = other.close();
    let stats = server.stop()?;
    let (passed, failed) = r.counts();
    Ok(DemoReport {
        board: cfg.board.name.to_string(),
        listen: addr.to_string(),
        passed,
        failed,
        steps: r.steps,
        link: LinkCounts {
            received: stats.received,
            sent: stats.sent,
            dropped_in: stats.inbound.dropped,
            dropped_out: stats.outbound.dropped,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::{demo, DemoArgs};
    use crate::progress::{steps, Event};

    /// In process: the events open with the board line, then one step event
    /// per row of the report, in order, all passing; the board's packet
    /// counts are in the report (its summary line).
    #[test]
    fn demo_reports_each_step_as_an_event() {
        let a = DemoArgs {
            board: "emulator".into(),
            faults: String::new(),
            json: false,
            rack: false,
            nodes: 3,
        };
        let mut ev = Vec::new();
        let report = demo(&a, &mut ev).unwrap();
        assert!(
            matches!(&ev[0], Event::Began { command, against }
                if command == "clio demo" && against.contains(&report.listen)),
            "{:?}",
            ev[0]
        );
        let rows = steps(&ev);
        assert_eq!(rows.len(), 12, "{rows:?}");
        assert_eq!(rows.len(), ev.len() - 1);
        for (r, s) in rows.iter().zip(&report.steps) {
            assert_eq!((&r.0, r.1), (&s.step, s.ok));
        }
        assert_eq!(rows[0].0, "info");
        assert_eq!(rows[11].0, "rfree, then access");
        assert_eq!((report.passed, report.failed), (12, 0), "{report}");
        assert!(report.link.received > 0 && report.link.sent > 0);
        assert!(report.verdict().is_ok());
    }

    /// A bad `--faults` is an error naming the flag, before any event.
    #[test]
    fn bad_faults_are_an_error_before_any_event() {
        let a = DemoArgs {
            board: "emulator".into(),
            faults: "drop=lots".into(),
            json: false,
            rack: false,
            nodes: 3,
        };
        let mut ev = Vec::new();
        let e = demo(&a, &mut ev).unwrap_err();
        assert!(format!("{e:#}").contains("--faults"), "{e:#}");
        assert!(ev.is_empty());
    }
}
