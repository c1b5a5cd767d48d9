//! CPU cost of a 16 B sync read on the in-process backend (no sockets):
//! the SDK (request build, ordering, transport state machine, response
//! parse) plus the board model answering it. The same request packet is
//! then replayed to the board alone, so the SDK's own share is the
//! difference. Reported per op as the median over timed batches (robust
//! to the host preempting a batch).

use std::time::Instant;

use anyhow::{bail, Result};
use clio_wire::payload::perms;
use serde::Serialize;

use super::boards::{in_process, last_trace};
use super::stats::median;
use super::svg::{self, Axis};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};

/// The paper's CLib overhead, our target for SDK + model per 16 B read.
pub const TARGET_NS: f64 = 250.0;

#[derive(Debug, Serialize)]
struct InProc {
    read_bytes: usize,
    ops: u64,
    /// SDK + model per sync read: median over batches.
    per_op_ns: f64,
    /// Fastest batch.
    best_per_op_ns: f64,
    /// The board model alone (the captured request replayed).
    model_per_op_ns: f64,
    /// per_op_ns - model_per_op_ns.
    sdk_per_op_ns: f64,
    /// The model's projected on-board latency of that read.
    model_cycles: u64,
    /// At the board's fast-path clock.
    model_board_ns: f64,
}

/// Run the in-process CPU-cost benchmark.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let mut s = in_process(&ctx.cfg)?;
    let al = s.ralloc(4096, perms::RW)?;
    s.rwrite(al.va, &[7u8; 16])?;
    let mut buf = [0u8; 16];
    // Capture one read request, then stop copying packets.
    s.transport_mut().board().keep = true;
    s.rread(al.va, &mut buf)?;
    s.transport_mut().board().keep = false;
    let trace = last_trace(&mut s);
    let pkt = s.transport_mut().board().last.clone();
    if pkt.is_empty() || buf != [7u8; 16] {
        bail!("inproc: the captured read did not return the written bytes");
    }
    let pb = bar(2 * p.inproc_batches as u64, "inproc");
    let mut per_op = Vec::with_capacity(p.inproc_batches);
    let mut model = Vec::with_capacity(p.inproc_batches);
    for _ in 0..p.inproc_batches {
        let t = Instant::now();
        for _ in 0..p.inproc_batch {
            s.rread(al.va, &mut buf)?;
        }
        per_op.push(ns_since(t) / p.inproc_batch as f64);
        pb.inc(1);
        let board = &mut s.transport_mut().board().board;
        let mut answers = 0usize;
        let t = Instant::now();
        for _ in 0..p.inproc_batch {
            board.handle(1, &pkt, &mut |_, _| answers += 1);
        }
        model.push(ns_since(t) / p.inproc_batch as f64);
        if answers != p.inproc_batch {
            bail!(
                "inproc: the board answered {answers} of {} replayed reads",
                p.inproc_batch
            );
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let per_op_ns = median(&mut per_op);
    let model_ns = median(&mut model);
    Ok(Ran::Done(Box::new(InProc {
        read_bytes: buf.len(),
        ops: (p.inproc_batches * p.inproc_batch) as u64,
        per_op_ns,
        best_per_op_ns: per_op.first().copied().unwrap_or(0.0),
        model_per_op_ns: model_ns,
        sdk_per_op_ns: (per_op_ns - model_ns).max(0.0),
        model_cycles: trace.cycles,
        model_board_ns: trace.nanos(ctx.cfg.fastpath.clock_mhz),
    })))
}

impl Outcome for InProc {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::at_most(
            "in-process 16 B sync read, SDK + model, ns/op (median batch)",
            self.per_op_ns.round(),
            TARGET_NS,
        )]
    }

    fn text(&self) -> String {
        format!(
            "  {} B sync reads, in process (no sockets), {} ops\n  SDK + model {:.0} ns/op (best batch {:.0}), of which model {:.0} ns and SDK {:.0} ns\n  model's projected on-board latency of that read: {} cycles = {:.0} ns at the board clock\n",
            self.read_bytes,
            self.ops,
            self.per_op_ns,
            self.best_per_op_ns,
            self.model_per_op_ns,
            self.sdk_per_op_ns,
            self.model_cycles,
            self.model_board_ns
        )
    }

    fn plots(&self) -> Vec<Plot> {
        vec![Plot {
            file: "inproc-cost.svg".into(),
            svg: svg::bar_chart(
                "CPU cost of a 16 B sync read, in process",
                &Axis::linear("ns per op"),
                &["per op".to_string()],
                &[
                    ("SDK + model".into(), vec![self.per_op_ns]),
                    ("model alone".into(), vec![self.model_per_op_ns]),
                    ("SDK alone".into(), vec![self.sdk_per_op_ns]),
                    ("target".into(), vec![TARGET_NS]),
                ],
            ),
        }]
    }
}
