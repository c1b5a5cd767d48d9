//! The command line of the simulator (`edmsim`, and `clio edmsim`): run one
//! workload, or the whole Fig. 8 matrix.

use std::path::PathBuf;
use std::time::Instant;

use crate::plot::{render, Panel, PanelData};
use crate::published;
use crate::{
    generate, EdmOrder, IdealCache, Scheme, SimConfig, SizeCdf, Sizes, SlowdownStats, Summary,
    WorkloadSpec,
};

mod paper_cli;
use edm_pim::Priority;
use serde::Serialize;

/// Rack-scale EDM fabric simulator with six baselines (EDM §4.3, Fig. 8).
/// Command-line arguments of the simulator.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Scheme: edm (FCFS on 64 B microbenchmarks, SRPT on application traces), edm-fcfs,
    /// edm-srpt, ird, pfabric, pfc, dctcp, cxl, fastpass, or all.
    #[arg(long, default_value = "all")]
    scheme: String,
    /// Workload: write, read, mixed (see --write-ratio), or an application trace: hadoop, spark,
    /// sparksql, graphlab, memcached, shortflow.
    #[arg(long, default_value = "write")]
    workload: String,
    /// Offered load per node link, one value or a comma-separated list.
    #[arg(long, default_value = "0.8")]
    load: String,
    /// Message size in bytes of the write, read and mixed microbenchmarks (the published ones
    /// use 64 B; other sizes are not compared with them).
    #[arg(long, default_value_t = 64)]
    size: u64,
    /// Write share of the mixed workload (application traces use 0.5).
    #[arg(long, default_value_t = 0.5)]
    write_ratio: f64,
    /// Number of nodes.
    #[arg(long, default_value_t = 144)]
    nodes: usize,
    /// Messages per run.
    #[arg(long, default_value_t = 2000)]
    messages: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory with the `CDF_<name>.txt` workload files (default
    /// `../shared/data/edm-workloads`; a relative path is tried from the current directory,
    /// then from the repository root and its parent's `shared` directory).
    #[arg(long)]
    cdf_dir: Option<PathBuf>,
    /// Metric: `steady` (default: load = data load per host link, slowdown = completion /
    /// the message's unloaded completion in our model, warm-up discarded) or `published` (the
    /// published simulator's load labels, slot timing, expected times, read legs, stop rule
    /// and 2 000-message traces; see `paper`).
    #[arg(long, default_value = "steady")]
    metric: String,
    /// Published metric: granted data counts against a receiver's 256 B window until it
    /// reaches the `switch` (default) or arrives at the `receiver`.
    #[arg(long, default_value = "switch")]
    paper_window: String,
    /// Simulate this trace (CSV: FlowID,flowType,src,dst,flow_size_bytes,rreq_bytes,
    /// start_timeslot) instead of generating one.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Write the generated trace of the (single) workload point and seed to this CSV file.
    #[arg(long)]
    trace_out: Option<PathBuf>,
    /// Seeds per point (--seed, --seed + 1, ...); with more than one, means come with 95 %
    /// confidence intervals over seeds.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Share of each trace's first messages simulated but left out of the statistics
    /// (steady metric; default 0.1 with --fig8, 0 otherwise).
    #[arg(long)]
    warmup: Option<f64>,
    /// Parallel runs (default: the available cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run the whole Fig. 8 matrix (write-only and read-only load sweeps, mixed at 0.8, the five
    /// application traces at 0.4) and compare with the published values.
    #[arg(long)]
    fig8: bool,
    /// EDM scheduler timing in ps per PIM iteration (0 = instantaneous maximal matching).
    #[arg(long, default_value_t = 0)]
    pim_iteration_ps: u64,
    /// EDM block-slotted scheduling period in ps (0 = schedule at exact event times).
    #[arg(long, default_value_t = 0)]
    slot_ps: u64,
    /// EDM destination-side reservation for busy higher-priority sources (see edm-pim):
    /// auto (on for the SRPT application traces, off for the FCFS microbenchmarks), on, off.
    #[arg(long, default_value = "auto")]
    edm_reserve: String,
    /// EDM in-order delivery: node-pair (the paper's: per compute–memory node pair; `on` is
    /// the same), port-pair (everything sharing a port pair), or off (SRPT reorders a pair's
    /// messages too).
    #[arg(long, default_value = "node-pair")]
    edm_in_order: String,
    /// EDM control traffic charged to link time: bits per control message, one per chunk on
    /// both its ports (§3.1.4's /N/ and /G/: 33); 0 = free, like the baselines' control.
    #[arg(long, default_value_t = 0)]
    edm_control_bits: u32,
    /// EDM read requests charged to link time (8 B on the requester's uplink and the memory
    /// node's downlink): on or off.
    #[arg(long, default_value = "off")]
    edm_charge_rreq: String,
    /// CXL host transmit order: fifo (messages in issue order over --cxl-host-queues
    /// transaction queues) or rr (all active messages interleaved round-robin).
    #[arg(long, default_value = "fifo")]
    cxl_host_order: String,
    /// With --cxl-host-order fifo: in-order transaction queues per host (DMA channels or
    /// cores), interleaved flit by flit; a new message joins the least-backlogged one.
    #[arg(long, default_value_t = 4)]
    cxl_host_queues: u32,
    /// PFC (RoCE) hosts keep one queue pair per peer and send its requests, and separately its
    /// read responses, in issue order: on or off (every message interleaved).
    #[arg(long, default_value = "on")]
    pfc_in_order: String,
    /// Fastpass batching period in ps: one demand report per node and one allocation round per
    /// period (default: 8 timeslots of one 1460 B packet at 100 Gbps); 0 = one request and one
    /// grant frame per transfer.
    #[arg(long, default_value_t = 934_400)]
    fastpass_batch_ps: u64,
    /// Messages per application-trace run in --fig8 (the microbenchmarks use --messages).
    #[arg(long, default_value_t = 20000)]
    app_messages: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to this file (with any output format).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Print a Markdown table of mean slowdowns next to the published values.
    #[arg(long)]
    markdown: bool,
    /// Write an SVG plot (Fig. 8 layout for --fig8, slowdown vs load otherwise).
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// One simulated point.
#[derive(Debug, Clone, Serialize)]
struct Row {
    workload: String,
    load: f64,
    write_ratio: f64,
    edm_reserve: bool,
    published_mean: Option<f64>,
    /// Seeds pooled into `summary`.
    seeds: u64,
    /// Half-width of the 95 % confidence interval of the mean over seeds (t distribution);
    /// `None` with one seed.
    ci95: Option<f64>,
    /// Messages left out at the start of each trace.
    warmup: usize,
    #[serde(flatten)]
    summary: Summary,
}

fn parse_loads(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .map_err(|_| format!("--load: `{x}` is not a number"))
        })
        .collect()
}

fn schemes(arg: &str, edm_priority: Priority) -> Result<Vec<Scheme>, String> {
    if arg == "all" {
        return Ok(Scheme::all(edm_priority).to_vec());
    }
    arg.split(',')
        .map(|s| {
            Scheme::parse(s.trim(), edm_priority).ok_or_else(|| {
                format!(
                    "--scheme: unknown scheme `{s}`; known: {}, all",
                    crate::SCHEME_NAMES.join(", ")
                )
            })
        })
        .collect()
}

/// Everything needed to run one workload point.
struct Point {
    workload: String,
    load: f64,
    write_ratio: f64,
    sizes: Sizes,
    edm_priority: Priority,
    edm_reserve: bool,
    messages: usize,
    /// The `--trace` file's messages, when given.
    trace: Option<std::sync::Arc<Vec<crate::Message>>>,
}

fn point(
    args: &Args,
    workload: &str,
    load: f64,
    write_ratio: f64,
    mtu: u32,
) -> Result<Point, String> {
    let (sizes, wr, pri, messages) = match workload {
        "write" => (Sizes::Fixed(args.size), 1.0, Priority::Fcfs, args.messages),
        "read" => (Sizes::Fixed(args.size), 0.0, Priority::Fcfs, args.messages),
        "mixed" => (
            Sizes::Fixed(args.size),
            write_ratio,
            Priority::Fcfs,
            args.messages,
        ),
        app => {
            let dir = resolve_cdf_dir(args.cdf_dir.as_deref())?;
            let cdf = SizeCdf::load(&dir, app, mtu).map_err(|e| e.to_string())?;
            let m = if args.fig8 {
                args.app_messages
            } else {
                args.messages
            };
            (Sizes::Cdf(cdf), 0.5, Priority::Srpt, m)
        }
    };
    let edm_reserve = match args.edm_reserve.as_str() {
        "auto" => pri == Priority::Srpt,
        "on" => true,
        "off" => false,
        other => return Err(format!("--edm-reserve: `{other}` is not auto, on or off")),
    };
    Ok(Point {
        workload: workload.to_string(),
        load,
        write_ratio: wr,
        sizes,
        edm_priority: pri,
        edm_reserve,
        messages,
        trace: None,
    })
}

/// One simulation of the job list: a point, a scheme and a seed.
struct Job {
    point: usize,
    scheme: Scheme,
    seed: u64,
}

/// What a job returns: its summary and the counted slowdowns, all and per kind.
struct JobOut {
    summary: Summary,
    all: Vec<f64>,
    writes: Vec<f64>,
    reads: Vec<f64>,
}

/// The trace of point `p` for `seed`: the `--trace` file's, or a generated one.
fn trace_of(p: &Point, cfg: &SimConfig, seed: u64) -> Result<Vec<crate::Message>, String> {
    if let Some(t) = &p.trace {
        return Ok(t.to_vec());
    }
    let spec = WorkloadSpec {
        load: p.load,
        write_ratio: p.write_ratio,
        sizes: p.sizes.clone(),
        messages: p.messages,
        seed,
    };
    generate(&spec, cfg).map_err(|e| e.to_string())
}

fn run_job(cfg: &SimConfig, p: &Point, job: &Job, warmup: f64) -> Result<JobOut, String> {
    let cfg = &SimConfig {
        edm_reserve: p.edm_reserve,
        ..*cfg
    };
    let msgs = trace_of(p, cfg, job.seed)?;
    let skip = (warmup * msgs.len() as f64).floor() as usize;
    let mut ideals = IdealCache::new();
    let (res, summary, all) = crate::evaluate_after(job.scheme, cfg, &msgs, &mut ideals, skip)
        .map_err(|e| e.to_string())?;
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    let kinds = msgs
        .iter()
        .zip(&res.finish)
        .skip(skip)
        .filter(|(_, f)| f.is_some())
        .map(|(m, _)| m.kind);
    for (k, &v) in kinds.zip(&all) {
        match k {
            crate::Kind::Write => writes.push(v),
            crate::Kind::Read => reads.push(v),
        }
    }
    Ok(JobOut {
        summary,
        all,
        writes,
        reads,
    })
}

/// Run `f` over `items` on `jobs` threads with a progress bar on stderr (hidden when stderr
/// is not a terminal); results in item order, the first error wins.
fn par_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    what: &str,
    f: impl Fn(&T) -> Result<R, String> + Sync,
) -> Result<Vec<R>, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let bar = indicatif::ProgressBar::new(items.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} runs (eta {eta})",
        )
        .map_err(|e| e.to_string())?,
    );
    bar.set_message(what.to_string());
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<R, String>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                let failed = r.is_err();
                out.lock().expect("no panics while holding the lock")[i] = Some(r);
                bar.inc(1);
                if failed {
                    // Stop handing out work; the others finish their current run.
                    next.store(items.len(), Ordering::Relaxed);
                }
            });
        }
    });
    bar.finish_and_clear();
    let v = out.into_inner().map_err(|e| e.to_string())?;
    let mut res = Vec::with_capacity(v.len());
    for r in v {
        match r {
            Some(r) => res.push(r?),
            None => return Err("a parallel run was cancelled".into()),
        }
    }
    Ok(res)
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom.
pub fn t95(df: u64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df as usize - 1],
        _ => 1.96,
    }
}

/// Mean and 95 % confidence half-width of `v` (half-width `None` for fewer than 2 values).
pub fn mean_ci(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, None);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Some(t95(v.len() as u64 - 1) * (var / n).sqrt()))
}

fn run_points(
    args: &Args,
    cfg: &SimConfig,
    points: &[Point],
    warmup: f64,
) -> Result<Vec<Row>, String> {
    let mut jobs = Vec::new();
    for (pi, p) in points.iter().enumerate() {
        for scheme in schemes(&args.scheme, p.edm_priority)? {
            let seeds = if p.trace.is_some() { 1 } else { args.seeds };
            for k in 0..seeds {
                jobs.push(Job {
                    point: pi,
                    scheme,
                    seed: args.seed + k,
                });
            }
        }
    }
    let threads = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let outs = par_map(&jobs, threads, "edmsim", |j| {
        run_job(cfg, &points[j.point], j, warmup)
    })?;
    let mut rows: Vec<Row> = Vec::new();
    let mut i = 0;
    while i < jobs.len() {
        let (pi, scheme) = (jobs[i].point, jobs[i].scheme);
        let mut k = i;
        while k < jobs.len() && jobs[k].point == pi && jobs[k].scheme == scheme {
            k += 1;
        }
        let group = &outs[i..k];
        let p = &points[pi];
        let means: Vec<f64> = group.iter().map(|o| o.summary.all.mean).collect();
        let (_, ci95) = mean_ci(&means);
        let pool = |f: &dyn Fn(&JobOut) -> &Vec<f64>| -> Vec<f64> {
            group.iter().flat_map(|o| f(o).iter().copied()).collect()
        };
        let mut summary = group[0].summary.clone();
        summary.all = SlowdownStats::of(&pool(&|o| &o.all));
        summary.writes = SlowdownStats::of(&pool(&|o| &o.writes));
        summary.reads = SlowdownStats::of(&pool(&|o| &o.reads));
        summary.completed = summary.all.count;
        summary.messages = group.iter().map(|o| o.summary.messages).sum();
        summary.drops = group.iter().map(|o| o.summary.drops).sum();
        summary.events = group.iter().map(|o| o.summary.events).sum();
        summary.wall_s = group.iter().map(|o| o.summary.wall_s).sum();
        summary.events_per_s = if summary.wall_s > 0.0 {
            summary.events as f64 / summary.wall_s
        } else {
            0.0
        };
        summary.max_queue = group.iter().map(|o| o.summary.max_queue).max().unwrap_or(0);
        rows.push(Row {
            workload: p.workload.clone(),
            load: p.load,
            write_ratio: p.write_ratio,
            edm_reserve: p.edm_reserve,
            published_mean: match p.sizes {
                // The published microbenchmarks are 64 B messages only.
                Sizes::Fixed(b) if b != 64 => None,
                _ if p.trace.is_some() => None,
                _ => published_value(&p.workload, p.load, p.write_ratio, scheme.name()),
            },
            seeds: group.len() as u64,
            ci95,
            warmup: (warmup * p.messages as f64).floor() as usize,
            summary,
        });
        i = k;
    }
    Ok(rows)
}

/// Resolve the workload directory: `given` (or the default `../shared/data/edm-workloads`)
/// from the current directory, then from the repository root (found by walking up from the
/// current directory, then from this crate's source directory), then `shared/…` beside the
/// root's parent. The error names the flag and every path tried.
pub fn resolve_cdf_dir(given: Option<&std::path::Path>) -> Result<PathBuf, String> {
    let default = PathBuf::from("../shared/data/edm-workloads");
    let flag_given = given.is_some();
    let rel = given.map_or(default, std::path::Path::to_path_buf);
    let mut tried: Vec<PathBuf> = vec![rel.clone()];
    if rel.is_dir() {
        return Ok(rel);
    }
    if rel.is_relative() {
        let mut roots = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            roots.extend(repo_root(&cwd));
        }
        roots.extend(repo_root(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))));
        for root in roots {
            let mut cands = vec![root.join(&rel)];
            // `../shared/x` from the root is `<parent>/shared/x`; also try the root's parent's
            // parent, for worktrees one level deeper.
            if let Ok(rest) = rel.strip_prefix("../shared") {
                for up in root.ancestors().skip(1).take(2) {
                    cands.push(up.join("shared").join(rest));
                }
            }
            for c in cands {
                if c.is_dir() {
                    return Ok(c);
                }
                if !tried.contains(&c) {
                    tried.push(c);
                }
            }
        }
    }
    let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "--cdf-dir: no workload directory at {} ({}); pass --cdf-dir DIR with the CDF_<name>.txt files",
        list.join(", "),
        if flag_given { "as given" } else { "the default" }
    ))
}

/// The nearest ancestor of `from` holding a `Cargo.toml` with a `[workspace]` table.
fn repo_root(from: &std::path::Path) -> Option<PathBuf> {
    from.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]"))
        })
        .map(std::path::Path::to_path_buf)
}

fn published_value(workload: &str, load: f64, wr: f64, scheme: &str) -> Option<f64> {
    let li = published::LOADS
        .iter()
        .position(|&l| (l - load).abs() < 1e-9);
    match workload {
        "write" => published::lookup(&published::WRITE_ONLY, scheme, li?),
        "read" => published::lookup(&published::READ_ONLY, scheme, li?),
        "mixed" if (load - 0.8).abs() < 1e-9 => {
            let wi = published::MIXED_WRITE_SHARES
                .iter()
                .position(|&w| (w - wr).abs() < 1e-9)?;
            published::lookup(&published::MIXED, scheme, wi)
        }
        app if (load - 0.4).abs() < 1e-9 => {
            let ai = published::APPS.iter().position(|&a| a == app)?;
            published::lookup(&published::APP_SLOWDOWN, scheme, ai)
        }
        _ => None,
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<10} {:>5} {:>5} {:<9} {:>6} {:>8} {:>7} {:>8} {:>8} {:>9} {:>7} {:>8} {:>9}",
        "workload",
        "load",
        "wr",
        "scheme",
        "done",
        "mean",
        "±ci95",
        "median",
        "p99",
        "published",
        "drops",
        "wall_s",
        "Mev/s"
    );
    for r in rows {
        let s = &r.summary;
        let publ = r
            .published_mean
            .map_or("-".to_string(), |v| format!("{v:.2}"));
        println!(
            "{:<10} {:>5.2} {:>5.2} {:<9} {:>6} {:>8.3} {:>7} {:>8.3} {:>8.3} {:>9} {:>7} {:>8.3} {:>9.2}",
            r.workload,
            r.load,
            r.write_ratio,
            s.scheme,
            s.completed,
            s.all.mean,
            r.ci95.map_or("-".to_string(), |c| format!("{c:.3}")),
            s.all.median,
            s.all.p99,
            publ,
            s.drops,
            s.wall_s,
            s.events_per_s / 1e6
        );
    }
}

fn print_markdown(rows: &[Row], wall: f64) {
    println!("| workload | load | write share | scheme | mean ± 95 % CI (seeds) | median | p99 | published mean | ours / published |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let s = &r.summary;
        let (publ, ratio) = match r.published_mean {
            Some(p) => (format!("{p:.2}"), format!("{:.2}", s.all.mean / p)),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "| {} | {:.1} | {:.1} | {} | {:.3}{} | {:.2} | {:.2} | {} | {} |",
            r.workload,
            r.load,
            r.write_ratio,
            s.scheme,
            s.all.mean,
            r.ci95
                .map_or(String::new(), |c| format!(" ± {c:.3} ({})", r.seeds)),
            s.all.median,
            s.all.p99,
            publ,
            ratio
        );
    }
    println!();
    println!("Total wall time: {wall:.1} s.");
}

/// The Fig. 8 plot: (a) write-only and (b) read-only load sweeps, (c) mixed at 0.8, (d) the
/// application traces ranked per scheme (the published values are in rank order). `get(w, x,
/// scheme)` is our mean for workload `w` at `x` (load, write share for mixed, 0.4 for traces);
/// the published values are drawn beside ours.
pub(crate) fn fig8_svg(
    title: &str,
    get: &dyn Fn(&str, f64, &str) -> f64,
    names: &[String],
) -> String {
    let refs = |table: &[(&str, [f64; 5])]| -> Vec<(String, Vec<f64>)> {
        names
            .iter()
            .map(|n| {
                (
                    n.clone(),
                    (0..5)
                        .map(|i| published::lookup(table, n, i).unwrap_or(f64::NAN))
                        .collect(),
                )
            })
            .collect()
    };
    // Fastpass (tens) would squash every other scheme near 1 on the microbenchmarks: its
    // range is stated in the panel instead. The traces span decades anyway (log scale).
    let off_scale: Vec<String> = if names.len() > 1 {
        names.iter().filter(|n| *n == "fastpass").cloned().collect()
    } else {
        Vec::new()
    };
    let lines = |w: &str, table: &[(&str, [f64; 5])], title: &str| Panel {
        title: title.to_string(),
        x_label: "load (published label)".into(),
        data: PanelData::Lines {
            x: published::LOADS.to_vec(),
            series: names
                .iter()
                .map(|n| {
                    (
                        n.clone(),
                        published::LOADS.iter().map(|&l| get(w, l, n)).collect(),
                    )
                })
                .collect(),
        },
        reference: refs(table),
        off_scale: off_scale.clone(),
    };
    let mixed_ref = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                (0..3)
                    .map(|i| published::lookup(&published::MIXED, n, i).unwrap_or(f64::NAN))
                    .collect(),
            )
        })
        .collect();
    let panels = vec![
        lines(
            "write",
            &published::WRITE_ONLY,
            "(a) write-only, 64 B all-to-all",
        ),
        lines(
            "read",
            &published::READ_ONLY,
            "(b) read-only, 64 B all-to-all",
        ),
        Panel {
            title: "(c) mixed reads/writes at load 0.8".into(),
            x_label: "write share (published label)".into(),
            data: PanelData::Bars {
                groups: published::MIXED_WRITE_SHARES
                    .iter()
                    .map(|w| format!("{w}"))
                    .collect(),
                series: names
                    .iter()
                    .map(|n| {
                        (
                            n.clone(),
                            published::MIXED_WRITE_SHARES
                                .iter()
                                .map(|&w| get("mixed", w, n))
                                .collect(),
                        )
                    })
                    .collect(),
            },
            reference: mixed_ref,
            off_scale: off_scale.clone(),
        },
        Panel {
            title: "(d) application traces at load 0.4, ranked per scheme".into(),
            x_label: "rank (ascending; the published labels are ranks)".into(),
            data: PanelData::Bars {
                groups: (1..=5).map(|r| r.to_string()).collect(),
                series: names
                    .iter()
                    .map(|n| {
                        let mut v: Vec<f64> = published::APPS
                            .iter()
                            .map(|a| get(a, 0.4, n))
                            .filter(|v| v.is_finite())
                            .collect();
                        v.sort_by(f64::total_cmp);
                        (n.clone(), v)
                    })
                    .collect(),
            },
            reference: refs(&published::APP_SLOWDOWN),
            off_scale: vec![],
        },
    ];
    render(title, &panels, 2)
}

/// Plot series name of a scheme: EDM's priority variants (FCFS on the microbenchmarks, SRPT
/// on the traces) are one series.
fn series_name(scheme: &str) -> &str {
    if scheme.starts_with("edm") {
        "edm"
    } else {
        scheme
    }
}

fn scheme_names(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        let n = series_name(&r.summary.scheme);
        if !v.iter().any(|x| x == n) {
            v.push(n.to_string());
        }
    }
    v
}

/// Run the simulator as the command line asked; errors are one line.
pub fn run(args: Args) -> Result<(), String> {
    let edm_order = match args.edm_in_order.as_str() {
        "node-pair" | "on" => EdmOrder::NodePair,
        "port-pair" => EdmOrder::PortPair,
        "off" => EdmOrder::Off,
        other => {
            return Err(format!(
                "--edm-in-order: `{other}` is not node-pair, port-pair or off"
            ))
        }
    };
    let edm_charge_rreq = on_off("--edm-charge-rreq", &args.edm_charge_rreq)?;
    let cxl_host_fifo = match args.cxl_host_order.as_str() {
        "fifo" => true,
        "rr" => false,
        other => return Err(format!("--cxl-host-order: `{other}` is not fifo or rr")),
    };
    let pfc_in_order = on_off("--pfc-in-order", &args.pfc_in_order)?;
    if args.size == 0 || args.size > crate::workload::MAX_MESSAGE_BYTES {
        return Err(format!(
            "--size: {} is not in 1..={} bytes",
            args.size,
            crate::workload::MAX_MESSAGE_BYTES
        ));
    }
    let cfg = SimConfig {
        nodes: args.nodes,
        pfc_in_order,
        cxl_host_fifo,
        cxl_host_queues: args.cxl_host_queues,
        edm_control_bits: args.edm_control_bits,
        edm_charge_rreq,
        fastpass_batch_ps: args.fastpass_batch_ps,
        edm_order,
        pim_iteration_ps: args.pim_iteration_ps,
        slot_ps: args.slot_ps,
        ..SimConfig::default()
    };
    cfg.validate().map_err(|e| e.to_string())?;
    if args.seeds == 0 {
        return Err("--seeds: must be at least 1".into());
    }
    let warmup = args.warmup.unwrap_or(if args.fig8 { 0.1 } else { 0.0 });
    if !(0.0..0.9).contains(&warmup) {
        return Err(format!("--warmup: {warmup} is not in [0, 0.9)"));
    }
    match args.metric.as_str() {
        "steady" => {}
        "published" => return paper_cli::run(&args, &cfg),
        other => return Err(format!("--metric: `{other}` is not steady or published")),
    }
    let started = Instant::now();
    let mut points = Vec::new();
    if let Some(path) = &args.trace {
        let name = path.display().to_string();
        let recs = crate::trace::load(path).map_err(|e| e.to_string())?;
        let msgs = crate::trace::to_messages(&name, &recs, cfg.nodes).map_err(|e| e.to_string())?;
        let writes = msgs.iter().filter(|m| m.kind == crate::Kind::Write).count();
        let span_ps = msgs.last().map_or(0, |m| m.arrival).max(1);
        let bytes: u64 = msgs.iter().map(|m| m.bytes).sum();
        let mut p = point(&args, "write", 0.0, 1.0, cfg.mtu_bytes)?;
        p.workload = path
            .file_stem()
            .map_or("trace".into(), |s| s.to_string_lossy().into_owned());
        // The trace's own data load per host link over its arrival span.
        p.load = bytes as f64 * cfg.ps_per_byte as f64 / span_ps as f64 / cfg.nodes as f64;
        p.write_ratio = writes as f64 / msgs.len().max(1) as f64;
        p.messages = msgs.len();
        if msgs.iter().any(|m| m.bytes != msgs[0].bytes) {
            p.edm_priority = Priority::Srpt;
            p.edm_reserve = args.edm_reserve != "off";
        }
        p.trace = Some(std::sync::Arc::new(msgs));
        points.push(p);
    } else if args.fig8 {
        for w in ["write", "read"] {
            for &l in &published::LOADS {
                points.push(point(&args, w, l, 0.0, cfg.mtu_bytes)?);
            }
        }
        for &wr in &published::MIXED_WRITE_SHARES {
            points.push(point(&args, "mixed", 0.8, wr, cfg.mtu_bytes)?);
        }
        for app in published::APPS {
            points.push(point(&args, app, 0.4, 0.5, cfg.mtu_bytes)?);
        }
    } else {
        for l in parse_loads(&args.load)? {
            points.push(point(
                &args,
                &args.workload,
                l,
                args.write_ratio,
                cfg.mtu_bytes,
            )?);
        }
    }
    if let Some(out) = &args.trace_out {
        let [p] = &points[..] else {
            return Err(
                "--trace-out: needs a single workload point (one --load, no --fig8)".into(),
            );
        };
        let cfg_p = SimConfig {
            edm_reserve: p.edm_reserve,
            ..cfg
        };
        let msgs = trace_of(p, &cfg_p, args.seed)?;
        let recs: Vec<crate::trace::TraceRecord> = msgs
            .iter()
            .map(|m| crate::trace::TraceRecord::from_message(m, u64::from(cfg.rreq_bytes)))
            .collect();
        crate::trace::save(out, &recs).map_err(|e| e.to_string())?;
    }
    let rows = run_points(&args, &cfg, &points, warmup)?;
    if !args.json && !args.markdown {
        print_table(&rows);
    }
    let wall = started.elapsed().as_secs_f64();
    let json = || {
        let out = serde_json::json!({ "config": cfg, "messages": args.messages, "app_messages": args.app_messages, "seed": args.seed, "wall_s": wall, "rows": rows });
        serde_json::to_string_pretty(&out).map_err(|e| e.to_string())
    };
    if let Some(path) = &args.json_out {
        std::fs::write(path, json()? + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.markdown {
        print_markdown(&rows, wall);
    } else if args.json {
        println!("{}", json()?);
    } else {
        println!("total wall time {wall:.2} s");
    }
    if let Some(path) = &args.plot {
        let runs = if args.fig8 {
            format!(
                "{} messages per microbenchmark, {} per trace, {} seed(s)",
                args.messages, args.app_messages, args.seeds
            )
        } else {
            format!("{} messages", args.messages)
        };
        let title = format!(
            "EDM fabric simulator, steady metric: mean slowdown ({} nodes, {runs})",
            cfg.nodes
        );
        let svg = if args.fig8 {
            let get = |w: &str, x: f64, name: &str| {
                rows.iter()
                    .find(|r| {
                        r.workload == w
                            && series_name(&r.summary.scheme) == name
                            && match w {
                                "mixed" => (r.write_ratio - x).abs() < 1e-9,
                                _ => (r.load - x).abs() < 1e-9,
                            }
                    })
                    .map_or(f64::NAN, |r| r.summary.all.mean)
            };
            fig8_svg(&title, &get, &scheme_names(&rows))
        } else {
            let loads = parse_loads(&args.load)?;
            let mut exact: Vec<String> = Vec::new();
            for r in &rows {
                if !exact.contains(&r.summary.scheme) {
                    exact.push(r.summary.scheme.clone());
                }
            }
            let series = exact
                .iter()
                .map(|n| {
                    let ys = loads
                        .iter()
                        .map(|&l| {
                            rows.iter()
                                .find(|r| {
                                    series_name(&r.summary.scheme) == n && (r.load - l).abs() < 1e-9
                                })
                                .map_or(f64::NAN, |r| r.summary.all.mean)
                        })
                        .collect();
                    (n.clone(), ys)
                })
                .collect();
            render(
                &title,
                &[Panel {
                    title: format!("{} workload", args.workload),
                    x_label: "load".into(),
                    data: PanelData::Lines { x: loads, series },
                    reference: vec![],
                    off_scale: vec![],
                }],
                1,
            )
        };
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Parse an `on`/`off` flag value; the error names the flag.
fn on_off(flag: &str, value: &str) -> Result<bool, String> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("{flag}: `{other}` is not on or off")),
    }
}
