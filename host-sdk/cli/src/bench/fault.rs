//! First-touch (page-fault) access vs TLB-hit and TLB-miss access, on an
//! in-process board with 4 KiB pages.
//!
//! Two clocks, reported side by side:
//! - the fast-path MODEL's cycles for each request (its per-request trace),
//!   projected to ns at the board clock: what the hardware would take;
//! - host wall time of the whole in-process call. On the emulator a fault
//!   also runs the slow path's free-PA refill inside the call, so host time
//!   cannot show the hardware's "no extra cost"; the cycle model can.
//!
//! Phases: touch P fresh pages once (faults), re-read one page (hits), then
//! cycle over all P pages (P is far above the TLB's entries, so LRU misses
//! on every access). Every sample is classified by its trace, not by phase.

use std::time::Instant;

use anyhow::{bail, Result};
use clio_wire::payload::perms;
use serde::Serialize;

use super::boards::{in_process, last_trace, small_page_board, SMALL_PAGE};
use super::stats::{median, Summary};
use super::svg::{self, Axis};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};
use crate::report::fmt_ns;

/// One class of access.
#[derive(Debug, Serialize)]
struct Class {
    class: &'static str,
    samples: usize,
    /// Model: median cycles per request.
    model_cycles: f64,
    /// Model: that at the board clock, ns.
    model_ns: f64,
    /// Model: median DRAM accesses per request.
    model_dram_accesses: f64,
    /// Host wall time of the in-process call.
    host: Summary,
}

#[derive(Debug, Serialize)]
struct Fault {
    pages: u64,
    page_bytes: u64,
    tlb_entries: u32,
    clock_mhz: u32,
    read_bytes: usize,
    classes: Vec<Class>,
    /// Model: fault minus miss cycles (what a first touch adds to a miss).
    model_fault_extra_cycles: f64,
    /// Model: miss minus hit DRAM accesses (the bucket fetch).
    model_miss_extra_dram: f64,
    /// Host: fault p50 / hit p50 (includes the emulator's slow-path refill).
    host_fault_over_hit: f64,
}

#[derive(Default)]
struct Acc {
    cycles: Vec<f64>,
    dram: Vec<f64>,
    host: Vec<f64>,
}

/// Run the fault benchmark.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let pages = ctx.plan.fault_pages;
    let cfg = small_page_board(&ctx.cfg, pages + 1024)?;
    if pages <= u64::from(cfg.tlb.entries) * 2 {
        bail!(
            "fault: {pages} pages do not overflow the {}-entry TLB; misses need more",
            cfg.tlb.entries
        );
    }
    let mut s = in_process(&cfg)?;
    let al = s.ralloc(pages * SMALL_PAGE, perms::RW)?;
    let mut acc: [Acc; 3] = Default::default(); // hit, miss, fault
    let mut buf = [0u8; 16];
    let pb = bar(3 * pages, "fault");
    for phase in 0..3 {
        for i in 0..pages {
            let page = match phase {
                1 => 0,
                _ => i,
            };
            let t = Instant::now();
            s.rread(al.va + page * SMALL_PAGE + 64, &mut buf)?;
            let host = ns_since(t);
            let tr = last_trace(&mut s);
            let k = if tr.faulted() {
                2
            } else if tr.tlb_hit() {
                0
            } else {
                1
            };
            acc[k].cycles.push(tr.cycles as f64);
            acc[k].dram.push(f64::from(tr.dram_accesses));
            acc[k].host.push(host);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    s.rfree(al.va, al.size)?;
    let mhz = cfg.fastpath.clock_mhz;
    let classes: Vec<Class> = ["TLB hit", "TLB miss", "first touch (fault)"]
        .into_iter()
        .zip(acc.iter_mut())
        .map(|(class, a)| {
            let cycles = median(&mut a.cycles);
            Class {
                class,
                samples: a.host.len(),
                model_cycles: cycles,
                model_ns: cycles * 1000.0 / f64::from(mhz),
                model_dram_accesses: median(&mut a.dram),
                host: Summary::of(&mut a.host),
            }
        })
        .collect();
    if let Some(c) = classes.iter().find(|c| c.samples == 0) {
        bail!("fault: no '{}' access was observed", c.class);
    }
    let (hit, miss, fault) = (&classes[0], &classes[1], &classes[2]);
    Ok(Ran::Done(Box::new(Fault {
        pages,
        page_bytes: SMALL_PAGE,
        tlb_entries: cfg.tlb.entries,
        clock_mhz: mhz,
        read_bytes: buf.len(),
        model_fault_extra_cycles: fault.model_cycles - miss.model_cycles,
        model_miss_extra_dram: miss.model_dram_accesses - hit.model_dram_accesses,
        host_fault_over_hit: super::stats::ratio(fault.host.p50_ns, hit.host.p50_ns),
        classes,
    })))
}

impl Outcome for Fault {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![
            // Paper: a fault adds no latency beyond the (3-cycle) fault unit.
            Check::at_most(
                "model: first-touch cycles over a TLB miss",
                self.model_fault_extra_cycles,
                3.0,
            ),
            // Paper: a TLB miss is one DRAM access (the bucket).
            Check::at_most(
                "model: DRAM accesses a TLB miss adds",
                self.model_miss_extra_dram,
                1.0,
            ),
        ]
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  {} B reads over {} x {} KiB pages, {}-entry TLB; model at {} MHz vs host wall time (in process)\n  {:<20} {:>7} {:>12} {:>10} {:>6} {:>11} {:>11}\n",
            self.read_bytes,
            self.pages,
            self.page_bytes >> 10,
            self.tlb_entries,
            self.clock_mhz,
            "class",
            "samples",
            "model cycles",
            "model ns",
            "DRAM",
            "host p50",
            "host p99"
        );
        for c in &self.classes {
            o += &format!(
                "  {:<20} {:>7} {:>12.0} {:>10.0} {:>6.0} {:>11} {:>11}\n",
                c.class,
                c.samples,
                c.model_cycles,
                c.model_ns,
                c.model_dram_accesses,
                fmt_ns(c.host.p50_ns),
                fmt_ns(c.host.p99_ns)
            );
        }
        o += &format!(
            "  model: a first touch adds {:.0} cycles to a miss; a miss adds {:.0} DRAM access(es) to a hit\n  host: first touch p50 is {:.2}x a hit (the emulator runs the slow path's refill inside the call)\n",
            self.model_fault_extra_cycles, self.model_miss_extra_dram, self.host_fault_over_hit
        );
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let cats: Vec<String> = self.classes.iter().map(|c| c.class.to_string()).collect();
        vec![Plot {
            file: "fault-hit-miss.svg".into(),
            svg: svg::bar_chart(
                "Access latency: model (board) vs host wall time",
                &Axis::log("ns"),
                &cats,
                &[
                    (
                        "model, board ns".into(),
                        self.classes.iter().map(|c| c.model_ns).collect(),
                    ),
                    (
                        "host p50 ns".into(),
                        self.classes.iter().map(|c| c.host.p50_ns).collect(),
                    ),
                ],
            ),
        }]
    }
}
