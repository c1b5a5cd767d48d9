//! Scalability (Clio Fig. 4/5): sync read latency as concurrent sessions
//! (PIDs) grow to 1000, and as mapped PTEs grow to 2^20. Both on boards
//! with 4 KiB pages so every session and PTE owns real memory.
//!
//! - `sessions`: an emulated board served over UDP; N sessions, each its
//!   own PID, socket and page, read round-robin from one thread.
//! - `ptes`: an in-process board; pages are mapped by touching them, then
//!   random 16 B reads over all mapped pages are timed, with the model's
//!   cycles per read (TLB hit below its 64 entries, one DRAM access above).

use std::time::Instant;

use anyhow::{Context, Result};
use clio::backend::UdpTransport;
use clio::{ClientConfig, Session};
use clio_wire::payload::perms;
use serde::Serialize;

use super::boards::{in_process, last_trace, small_page_board, SMALL_PAGE};
use super::stats::{median, ratio, Rng, Summary};
use super::svg::{self, Axis, Series};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};
use crate::report::fmt_ns;

/// Most ops a point may fail and still count as flat: none.
const FAILURES_ALLOWED: f64 = 0.0;
/// p50 at the largest scale over p50 at the smallest.
const FLAT: f64 = 1.5;

#[derive(Debug, Serialize)]
struct SessionPoint {
    sessions: u32,
    latency: Summary,
    failures: u64,
}

#[derive(Debug, Serialize)]
struct Sessions {
    read_bytes: usize,
    points: Vec<SessionPoint>,
    /// Sessions that could not be opened (or allocate and map a page).
    open_failures: u64,
}

struct Member {
    s: Session<UdpTransport>,
    va: u64,
}

/// Run the sessions benchmark.
pub fn sessions(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let max = p.sessions.iter().copied().max().unwrap_or(1);
    let cfg = small_page_board(&ctx.cfg, u64::from(max) + 1024)?;
    if max > cfg.va.max_pids {
        anyhow::bail!(
            "sessions: {max} sessions exceed the board's va.max_pids ({})",
            cfg.va.max_pids
        );
    }
    let board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(
        board,
        "127.0.0.1:0".parse()?,
        clio_emu::ServeOptions::default(),
    )?;
    let addr = server.addr();
    let mut members: Vec<Member> = Vec::new();
    let mut open_failures = 0u64;
    let mut points = Vec::new();
    let mut buf = [0u8; 16];
    let total: u64 = u64::from(max) + (p.session_samples * p.sessions.len()) as u64;
    let pb = bar(total, "sessions");
    for &n in &p.sessions {
        while members.len() < n as usize {
            // Each session is its own address space (the board assigns the PID).
            let opened = (|| -> Result<Member> {
                let mut s = Session::open(addr, ClientConfig::from_board(&cfg))?;
                let al = s.ralloc(SMALL_PAGE, perms::RW)?;
                let pid = s.pid().unwrap_or(0);
                s.rwrite(al.va, &pid.to_le_bytes())?;
                Ok(Member { s, va: al.va })
            })();
            match opened {
                Ok(m) => members.push(m),
                Err(_) if open_failures < 16 => open_failures += 1,
                Err(e) => return Err(e.context("sessions: 16 sessions failed to open")),
            }
            pb.inc(1);
        }
        let mut lat = Vec::with_capacity(p.session_samples);
        let mut failures = 0u64;
        // One unmeasured pass so every session's first read is not counted.
        for m in members.iter_mut() {
            let _ = m.s.rread(m.va, &mut buf);
        }
        for j in 0..p.session_samples {
            let m = &mut members[j % n as usize];
            let t = Instant::now();
            match m.s.rread(m.va, &mut buf) {
                Ok(()) => lat.push(ns_since(t)),
                Err(_) => failures += 1,
            }
            pb.inc(1);
        }
        points.push(SessionPoint {
            sessions: n,
            latency: Summary::of(&mut lat),
            failures,
        });
    }
    pb.finish_and_clear();
    for m in members {
        let _ = m.s.close();
    }
    server.stop().context("stopping the sessions board")?;
    Ok(Ran::Done(Box::new(Sessions {
        read_bytes: buf.len(),
        points,
        open_failures,
    })))
}

impl Outcome for Sessions {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        let (Some(first), Some(last)) = (self.points.first(), self.points.last()) else {
            return Vec::new();
        };
        let failures: u64 =
            self.points.iter().map(|p| p.failures).sum::<u64>() + self.open_failures;
        vec![
            Check::at_most(
                format!(
                    "sessions: p50 at {} / p50 at {}",
                    last.sessions, first.sessions
                ),
                ratio(last.latency.p50_ns, first.latency.p50_ns),
                FLAT,
            ),
            Check::at_most(
                "sessions: failed opens and reads",
                failures as f64,
                FAILURES_ALLOWED,
            ),
        ]
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  {} B sync reads over UDP, round-robin over N sessions (each its own address space, socket and 4 KiB page)\n  {:>8} {:>10} {:>10} {:>10} {:>9}\n",
            self.read_bytes, "sessions", "p50", "p99", "p99.9", "failures"
        );
        for p in &self.points {
            o += &format!(
                "  {:>8} {:>10} {:>10} {:>10} {:>9}\n",
                p.sessions,
                fmt_ns(p.latency.p50_ns),
                fmt_ns(p.latency.p99_ns),
                fmt_ns(p.latency.p999_ns),
                p.failures
            );
        }
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let line = |name: &str, f: fn(&SessionPoint) -> f64| Series {
            name: name.into(),
            points: self
                .points
                .iter()
                .map(|p| (f64::from(p.sessions), f(p) / 1e3))
                .collect(),
            dashed: false,
        };
        vec![Plot {
            file: "scale-sessions.svg".into(),
            svg: svg::line_chart(
                "Sync read latency vs concurrent sessions",
                &Axis::log("sessions (PIDs)"),
                &Axis::linear("latency (µs)"),
                &[
                    line("p50", |p| p.latency.p50_ns),
                    line("p99", |p| p.latency.p99_ns),
                ],
                false,
            ),
        }]
    }
}

#[derive(Debug, Serialize)]
struct PtePoint {
    mapped_pages: u64,
    /// Model: median cycles of a random read.
    model_cycles: f64,
    /// Model: that in ns at the board clock.
    model_ns: f64,
    /// Fraction of reads the TLB served.
    tlb_hit_rate: f64,
    /// Model: mean DRAM accesses per read.
    dram_accesses: f64,
    /// Host wall time of the in-process call.
    host: Summary,
    failures: u64,
    /// Seconds to map this step's new pages (one first touch each).
    map_seconds: f64,
}

#[derive(Debug, Serialize)]
struct Ptes {
    page_bytes: u64,
    tlb_entries: u32,
    clock_mhz: u32,
    read_bytes: usize,
    points: Vec<PtePoint>,
}

/// Pages per allocation while mapping (256 MiB of 4 KiB pages).
const ALLOC_CHUNK: u64 = 65536;

/// Run the PTE-scaling benchmark.
pub fn ptes(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let max = p.ptes.iter().copied().max().unwrap_or(1);
    let cfg = small_page_board(&ctx.cfg, max + 1024)?;
    let mut s = in_process(&cfg)?;
    let mhz = cfg.fastpath.clock_mhz;
    let mut pages: Vec<u64> = Vec::new(); // VA of every mapped page
    let mut rng = Rng::new(0x5eed);
    let mut buf = [0u8; 16];
    let mut points = Vec::new();
    let pb = bar(max, "ptes map");
    for &n in &p.ptes {
        let t = Instant::now();
        while (pages.len() as u64) < n {
            let want = (n - pages.len() as u64).min(ALLOC_CHUNK);
            let al = s.ralloc(want * SMALL_PAGE, perms::RW).with_context(|| {
                format!("ptes: allocating {want} pages at {} mapped", pages.len())
            })?;
            for i in 0..want {
                let va = al.va + i * SMALL_PAGE;
                s.rread(va, &mut buf[..8])
                    .with_context(|| format!("ptes: first touch of page {}", pages.len()))?;
                pages.push(va);
                pb.inc(1);
            }
        }
        let map_seconds = t.elapsed().as_secs_f64();
        pb.set_message(format!("{n} mapped, measuring"));
        let pick =
            |rng: &mut Rng| pages[rng.below(pages.len() as u64) as usize] + 8 * rng.below(500);
        // Warm the TLB with the same distribution, unmeasured.
        for _ in 0..p.pte_samples / 4 {
            let va = pick(&mut rng);
            let _ = s.rread(va, &mut buf);
        }
        let (mut host, mut cycles) = (Vec::new(), Vec::new());
        let (mut hits, mut dram, mut failures) = (0u64, 0u64, 0u64);
        for _ in 0..p.pte_samples {
            let va = pick(&mut rng);
            let t = Instant::now();
            match s.rread(va, &mut buf) {
                Ok(()) => {
                    host.push(ns_since(t));
                    let tr = last_trace(&mut s);
                    cycles.push(tr.cycles as f64);
                    hits += u64::from(tr.tlb_hit());
                    dram += u64::from(tr.dram_accesses);
                }
                Err(_) => failures += 1,
            }
        }
        let ok = cycles.len().max(1) as f64;
        let c = median(&mut cycles);
        points.push(PtePoint {
            mapped_pages: n,
            model_cycles: c,
            model_ns: c * 1000.0 / f64::from(mhz),
            tlb_hit_rate: hits as f64 / ok,
            dram_accesses: dram as f64 / ok,
            host: Summary::of(&mut host),
            failures,
            map_seconds,
        });
        pb.set_message(String::new());
    }
    pb.finish_and_clear();
    Ok(Ran::Done(Box::new(Ptes {
        page_bytes: SMALL_PAGE,
        tlb_entries: cfg.tlb.entries,
        clock_mhz: mhz,
        read_bytes: buf.len(),
        points,
    })))
}

impl Outcome for Ptes {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        let mut c = Vec::new();
        let failures: u64 = self.points.iter().map(|p| p.failures).sum();
        c.push(Check::at_most(
            "ptes: failed reads",
            failures as f64,
            FAILURES_ALLOWED,
        ));
        // Flat above the TLB: the largest table costs what a table just
        // past the TLB costs (one bucket fetch each, Fig. 5).
        let past_tlb = self
            .points
            .iter()
            .find(|p| p.mapped_pages > 2 * u64::from(self.tlb_entries));
        if let (Some(a), Some(b)) = (past_tlb, self.points.last()) {
            c.push(Check::at_most(
                format!(
                    "ptes: model cycles at {} pages / at {} pages",
                    b.mapped_pages, a.mapped_pages
                ),
                ratio(b.model_cycles, a.model_cycles),
                1.0,
            ));
            c.push(Check::at_most(
                format!(
                    "ptes: model DRAM accesses per read at {} pages",
                    b.mapped_pages
                ),
                b.dram_accesses,
                2.0,
            ));
        }
        c
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  random {} B reads over N mapped {} KiB pages, in process; {}-entry TLB, model at {} MHz\n  {:>8} {:>9} {:>8} {:>8} {:>6} {:>10} {:>10} {:>8} {:>8}\n",
            self.read_bytes,
            self.page_bytes >> 10,
            self.tlb_entries,
            self.clock_mhz,
            "pages",
            "cycles",
            "model",
            "TLB hit",
            "DRAM",
            "host p50",
            "host p99",
            "failed",
            "map s"
        );
        for p in &self.points {
            o += &format!(
                "  {:>8} {:>9.0} {:>8} {:>7.0}% {:>6.2} {:>10} {:>10} {:>8} {:>8.2}\n",
                p.mapped_pages,
                p.model_cycles,
                fmt_ns(p.model_ns),
                p.tlb_hit_rate * 100.0,
                p.dram_accesses,
                fmt_ns(p.host.p50_ns),
                fmt_ns(p.host.p99_ns),
                p.failures,
                p.map_seconds
            );
        }
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let line = |name: &str, dashed: bool, f: fn(&PtePoint) -> f64| Series {
            name: name.into(),
            points: self
                .points
                .iter()
                .map(|p| (p.mapped_pages as f64, f(p)))
                .collect(),
            dashed,
        };
        vec![Plot {
            file: "scale-ptes.svg".into(),
            svg: svg::line_chart(
                "Read latency vs mapped 4 KiB pages",
                &Axis::log("mapped pages (PTEs)"),
                &Axis::log("ns"),
                &[
                    line("model, board ns", false, |p| p.model_ns),
                    line("host p50 ns", true, |p| p.host.p50_ns),
                ],
                false,
            ),
        }]
    }
}
