//! Rack-scale simulator of the EDM memory fabric and six baselines (EDM, ASPLOS'25 §4.3).
//!
//! One switch, `N` nodes (default 144), 100 Gbps links, 10 ns propagation per hop plus the PHY
//! latencies of Table 1. Schemes:
//! * [`Scheme::Edm`] — the in-PHY priority-PIM scheduler (the shared [`edm_pim`] crate), chunk
//!   256 B, `X` = 3, FCFS or SRPT;
//! * [`Scheme::Dctcp`], [`Scheme::Pfabric`], [`Scheme::Pfc`], [`Scheme::Cxl`] — packet-switched
//!   baselines over an output-queued switch (see [`packet`]);
//! * [`Scheme::Ird`] — idealized receiver-driven transport (zero-time notification, SRPT
//!   tokens paced at the receiver's line rate);
//! * [`Scheme::Fastpass`] — a central arbiter behind one 100 Gbps link, matching infinitely
//!   fast (with the same [`edm_pim`] scheduler) on demands and allocations batched per
//!   endpoint, so control bandwidth is its limit.
//!
//! The metric is the slowdown of every message: its completion time (issue to last data byte
//! delivered) divided by its ideal completion time, the time the same scheme takes when the
//! message is alone in the network (the steady metric; [`evaluate_after`] leaves a warm-up
//! out). [`paper`] implements the published simulator's own definitions (`--metric
//! published`), and [`trace`] reads and writes traces in its CSV format. Modeling choices and
//! deviations: `ip/edm-sim/README.md`.

pub mod cli;
pub mod config;
pub mod edm;
pub mod ethernet;
pub mod event;
pub mod fastpass;
pub mod packet;
pub mod paper;
pub mod plot;
pub mod published;
pub mod report;
pub mod trace;
pub mod workload;

use std::collections::HashMap;

use edm_pim::Priority;
use serde::Serialize;
use thiserror::Error;

pub use config::{EdmOrder, SimConfig};
pub use report::{SlowdownStats, Summary};
pub use workload::{generate, Kind, Message, SizeCdf, Sizes, WorkloadSpec};

/// Errors of the simulator; each names the field, file or scheme at fault.
#[derive(Debug, Error)]
pub enum SimError {
    /// A configuration field is invalid.
    #[error("config field `{field}` {why}")]
    Config {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// A workload parameter is invalid.
    #[error("workload field `{field}`: {why}")]
    Workload {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        why: String,
    },
    /// A CDF file is malformed.
    #[error("CDF `{name}` line {line}: {why}")]
    Cdf {
        /// CDF name.
        name: String,
        /// 1-based line (0 when the file has no data).
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// A CSV trace file is malformed.
    #[error("trace `{name}` line {line}: {why}")]
    Trace {
        /// File name or path.
        name: String,
        /// 1-based line (0 when the fault is not on one line).
        line: usize,
        /// What is wrong, naming the field.
        why: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {why}")]
    Io {
        /// Path.
        path: String,
        /// OS error text.
        why: String,
    },
    /// A run exceeded its simulated-time limit (an unstable configuration).
    #[error("scheme {scheme} still had work after the time limit of {limit_ps} ps")]
    TimeLimit {
        /// Scheme name.
        scheme: &'static str,
        /// The limit.
        limit_ps: u64,
    },
    /// An internal invariant failed (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// A transport/scheduling scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Scheme {
    /// EDM with the given priority policy.
    Edm(#[serde(skip)] Priority),
    /// Idealized receiver-driven transport.
    Ird,
    /// pFabric over DCTCP-style hosts.
    Pfabric,
    /// PFC with DCQCN.
    Pfc,
    /// DCTCP.
    Dctcp,
    /// CXL-style credit-based link flow control.
    Cxl,
    /// Fastpass central arbiter.
    Fastpass,
}

impl Scheme {
    /// The seven schemes of Fig. 8 in plotting order, with EDM using `edm_priority`.
    pub fn all(edm_priority: Priority) -> [Scheme; 7] {
        [
            Scheme::Edm(edm_priority),
            Scheme::Ird,
            Scheme::Pfabric,
            Scheme::Pfc,
            Scheme::Dctcp,
            Scheme::Cxl,
            Scheme::Fastpass,
        ]
    }

    /// Short name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Scheme::Edm(Priority::Fcfs) => "edm-fcfs",
            Scheme::Edm(Priority::Srpt) => "edm-srpt",
            Scheme::Ird => "ird",
            Scheme::Pfabric => "pfabric",
            Scheme::Pfc => "pfc",
            Scheme::Dctcp => "dctcp",
            Scheme::Cxl => "cxl",
            Scheme::Fastpass => "fastpass",
        }
    }

    /// Parse a name from [`Scheme::name`]; `edm` means EDM with `edm_default`.
    pub fn parse(s: &str, edm_default: Priority) -> Option<Scheme> {
        Some(match s {
            "edm" => Scheme::Edm(edm_default),
            "edm-fcfs" => Scheme::Edm(Priority::Fcfs),
            "edm-srpt" => Scheme::Edm(Priority::Srpt),
            "ird" => Scheme::Ird,
            "pfabric" => Scheme::Pfabric,
            "pfc" => Scheme::Pfc,
            "dctcp" => Scheme::Dctcp,
            "cxl" => Scheme::Cxl,
            "fastpass" => Scheme::Fastpass,
            _ => return None,
        })
    }
}

/// Every name [`Scheme::parse`] accepts.
pub const SCHEME_NAMES: [&str; 9] = [
    "edm", "edm-fcfs", "edm-srpt", "ird", "pfabric", "pfc", "dctcp", "cxl", "fastpass",
];

/// Raw outcome of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    /// Completion time (ps) of each message, `None` if it never completed.
    pub finish: Vec<Option<u64>>,
    /// Distinct data bytes delivered to each message's receiver.
    pub delivered: Vec<u64>,
    /// Data bytes delivered more than once (retransmissions of packets that were not lost).
    pub duplicate_bytes: u64,
    /// Data bytes put on sender links, retransmissions included.
    pub sent_bytes: u64,
    /// Data packets dropped in the network.
    pub drops: u64,
    /// Events processed.
    pub events: u64,
    /// EDM: largest notification-queue length seen at any destination.
    pub max_queue: u32,
    /// EDM/Fastpass: mean PIM iterations per scheduling pass that matched something.
    pub pim_iterations: f64,
}

impl RunResult {
    /// Empty result for `n` messages.
    pub fn new(n: usize) -> RunResult {
        RunResult {
            finish: vec![None; n],
            delivered: vec![0; n],
            duplicate_bytes: 0,
            sent_bytes: 0,
            drops: 0,
            events: 0,
            max_queue: 0,
            pim_iterations: 0.0,
        }
    }
}

/// Run `scheme` over the trace `msgs`.
pub fn run_scheme(
    scheme: Scheme,
    cfg: &SimConfig,
    msgs: &[Message],
) -> Result<RunResult, SimError> {
    cfg.validate()?;
    if let Some(m) = msgs.iter().find(|m| {
        usize::from(m.requester) >= cfg.nodes
            || usize::from(m.target) >= cfg.nodes
            || m.requester == m.target
            || m.bytes == 0
    }) {
        return Err(SimError::Workload {
            field: "messages",
            why: format!(
                "message {} has bad endpoints or size for {} nodes: {m:?}",
                m.id, cfg.nodes
            ),
        });
    }
    if msgs.windows(2).any(|w| w[1].arrival < w[0].arrival)
        || msgs.iter().enumerate().any(|(i, m)| m.id as usize != i)
    {
        return Err(SimError::Workload {
            field: "messages",
            why: "ids must be 0.. in arrival order".into(),
        });
    }
    match scheme {
        Scheme::Edm(p) => edm::run(cfg, msgs, p),
        Scheme::Fastpass => fastpass::run(cfg, msgs),
        Scheme::Ird => packet::run(cfg, msgs, packet::Flavor::Ird),
        Scheme::Pfabric => packet::run(cfg, msgs, packet::Flavor::Pfabric),
        Scheme::Pfc => packet::run(cfg, msgs, packet::Flavor::Pfc),
        Scheme::Dctcp => packet::run(cfg, msgs, packet::Flavor::Dctcp),
        Scheme::Cxl => packet::run(cfg, msgs, packet::Flavor::Cxl),
    }
}

/// Ideal completion times: `scheme` with the message alone on a 2-node network, memoized by
/// (kind, size) — on one switch every pair of nodes is equivalent.
#[derive(Debug, Default)]
pub struct IdealCache {
    cache: HashMap<(Scheme, Kind, u64), u64>,
}

impl IdealCache {
    /// Empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ideal completion time (ps) of a `kind` message of `bytes` under `scheme`.
    pub fn ideal(
        &mut self,
        scheme: Scheme,
        cfg: &SimConfig,
        kind: Kind,
        bytes: u64,
    ) -> Result<u64, SimError> {
        if let Some(&v) = self.cache.get(&(scheme, kind, bytes)) {
            return Ok(v);
        }
        let alone = SimConfig { nodes: 2, ..*cfg };
        let m = [Message {
            id: 0,
            kind,
            requester: 0,
            target: 1,
            bytes,
            arrival: 0,
        }];
        let r = run_scheme(scheme, &alone, &m)?;
        let t = r.finish[0].ok_or_else(|| {
            SimError::Internal(format!("{} lone message did not finish", scheme.name()))
        })?;
        self.cache.insert((scheme, kind, bytes), t);
        Ok(t)
    }
}

/// Run `scheme` on `msgs` and summarize slowdowns against the scheme's ideal times.
pub fn evaluate(
    scheme: Scheme,
    cfg: &SimConfig,
    msgs: &[Message],
    ideals: &mut IdealCache,
) -> Result<(RunResult, Summary), SimError> {
    let (res, summary, _) = evaluate_after(scheme, cfg, msgs, ideals, 0)?;
    Ok((res, summary))
}

/// Like [`evaluate`], but the first `warmup` messages of the trace (in issue order) are
/// simulated and left out of the statistics (the queues are still filling then); also
/// returns the slowdown of every counted message, in trace order.
pub fn evaluate_after(
    scheme: Scheme,
    cfg: &SimConfig,
    msgs: &[Message],
    ideals: &mut IdealCache,
    warmup: usize,
) -> Result<(RunResult, Summary, Vec<f64>), SimError> {
    let start = std::time::Instant::now();
    let res = run_scheme(scheme, cfg, msgs)?;
    let wall = start.elapsed().as_secs_f64();
    let mut slow = Vec::with_capacity(msgs.len());
    let mut by_kind: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (m, f) in msgs.iter().zip(&res.finish).skip(warmup) {
        if let Some(f) = f {
            let ideal = ideals.ideal(scheme, cfg, m.kind, m.bytes)?;
            let s = (f - m.arrival) as f64 / ideal as f64;
            slow.push(s);
            by_kind[usize::from(m.kind == Kind::Write)].push(s);
        }
    }
    let summary = Summary::new(
        scheme.name(),
        msgs.len(),
        &slow,
        &by_kind[1],
        &by_kind[0],
        &res,
        wall,
    );
    Ok((res, summary, slow))
}
