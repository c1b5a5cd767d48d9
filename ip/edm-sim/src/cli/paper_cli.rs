//! `--metric published`: the Fig. 8 matrix (or one point, or a `--trace` file) under the
//! published simulator's definitions ([`crate::paper`]). EDM runs the published slot model;
//! the baselines, whose published timing and expected-time formulas are not known (CXL's hop
//! and stop rule excepted), run our own models on the same published traces, clipped at 1 as the
//! published metric does.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::{mean_ci, par_map, published_value, resolve_cdf_dir, schemes, Args};
use crate::paper::{self, PaperConfig, PaperTraceSpec};
use crate::trace::TraceRecord;
use crate::{published, IdealCache, Kind, Scheme, SimConfig, SizeCdf, Sizes};
use edm_pim::Priority;

/// CXL in the published simulator stops after this many completions.
pub const CXL_COMPLETIONS: usize = 1500;

/// One point of the published matrix.
struct PubPoint {
    workload: String,
    /// The published label (load, or write share for mixed).
    label: f64,
    /// The label used to look up the published value (load; mixed: the write-share label).
    load_label: f64,
    generator_load: f64,
    write_share: f64,
    sizes: Sizes,
    records: Option<Arc<Vec<TraceRecord>>>,
}

/// A row of the published-metric report.
#[derive(Debug, Clone, Serialize)]
pub struct PubRow {
    /// Workload.
    pub workload: String,
    /// Published label: load (write/read/apps) or write share (mixed, at load 0.8).
    pub label: f64,
    /// Generator load behind the label.
    pub generator_load: f64,
    /// Data load per host link that generator load gives.
    pub data_load: f64,
    /// Share of writes in the trace.
    pub write_share: f64,
    /// Scheme.
    pub scheme: String,
    /// Seeds averaged.
    pub seeds: u64,
    /// Mean published slowdown (mean over seeds of each trace's mean).
    pub mean: f64,
    /// 95 % confidence half-width over seeds.
    pub ci95: Option<f64>,
    /// Messages (legs) averaged per trace, mean over seeds.
    pub completed: f64,
    /// Messages (legs) per trace, mean over seeds (a read is two legs for EDM).
    pub legs: f64,
    /// The published value, if any.
    pub published: Option<f64>,
    /// Wall-clock seconds of the runs.
    pub wall_s: f64,
    /// EDM: mean slowdown of writes, read request legs and read response legs (means over
    /// seeds; NaN, printed as null, when a trace has none).
    pub by_leg: Option<[f64; 3]>,
}

fn points(args: &Args, cfg: &PaperConfig) -> Result<Vec<PubPoint>, String> {
    let mut out = Vec::new();
    let micro = |w: &str, label: f64, share: f64| -> Result<PubPoint, String> {
        let g = paper::generator_load(label).ok_or_else(|| {
            format!(
                "--load: {label} is not a published label (0.2, 0.4, 0.6, 0.8, 0.9) for --metric published"
            )
        })?;
        Ok(PubPoint {
            workload: w.to_string(),
            label,
            load_label: label,
            generator_load: g,
            write_share: share,
            sizes: Sizes::Fixed(64),
            records: None,
        })
    };
    let app = |name: &str| -> Result<PubPoint, String> {
        let dir = resolve_cdf_dir(args.cdf_dir.as_deref())?;
        let cdf = SizeCdf::load(&dir, name, 1460).map_err(|e| e.to_string())?;
        // Our reading for the traces: label 0.4 is a data load of 0.4 of the wire rate with
        // 1 460 B in 1 500 B packets (the microbenchmark rewrite to 64 B does not apply).
        let g = 0.4 * paper::WIRE_BITS_PER_MESSAGE / (8.0 * cdf.mean() * 1500.0 / 1460.0);
        Ok(PubPoint {
            workload: name.to_string(),
            label: 0.4,
            load_label: 0.4,
            generator_load: g,
            write_share: 0.5,
            sizes: Sizes::Cdf(cdf),
            records: None,
        })
    };
    if let Some(path) = &args.trace {
        let recs = crate::trace::load(path).map_err(|e| e.to_string())?;
        if let Some(r) = recs
            .iter()
            .find(|r| usize::from(r.src.max(r.dst)) >= cfg.nodes)
        {
            return Err(format!(
                "trace `{}`: FlowID {} addresses node {}, not below --nodes {}",
                path.display(),
                r.flow_id,
                r.src.max(r.dst),
                cfg.nodes
            ));
        }
        let writes = recs.iter().filter(|r| r.kind == Kind::Write).count();
        out.push(PubPoint {
            workload: path
                .file_stem()
                .map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
            label: f64::NAN,
            load_label: f64::NAN,
            generator_load: f64::NAN,
            write_share: writes as f64 / recs.len().max(1) as f64,
            sizes: Sizes::Fixed(64),
            records: Some(Arc::new(recs)),
        });
    } else if args.fig8 {
        for &l in &published::LOADS {
            out.push(micro("write", l, 1.0)?);
        }
        for &l in &published::LOADS {
            out.push(micro("read", l, 0.0)?);
        }
        for &wl in &published::MIXED_WRITE_SHARES {
            let mut p = micro(
                "mixed",
                0.8,
                paper::mixed_write_share(wl).expect("published"),
            )?;
            p.label = wl;
            out.push(p);
        }
        for a in published::APPS {
            out.push(app(a)?);
        }
    } else {
        for l in super::parse_loads(&args.load)? {
            out.push(match args.workload.as_str() {
                "write" => micro("write", l, 1.0)?,
                "read" => micro("read", l, 0.0)?,
                "mixed" => {
                    let share = paper::mixed_write_share(args.write_ratio).ok_or_else(|| {
                        format!(
                            "--write-ratio: {} is not a published mixed label (0.2, 0.5, 0.8)",
                            args.write_ratio
                        )
                    })?;
                    let mut p = micro("mixed", l, share)?;
                    p.label = args.write_ratio;
                    p
                }
                a => {
                    if (l - 0.4).abs() > 1e-9 {
                        return Err(format!(
                            "--load: application traces are published at 0.4 only, not {l}"
                        ));
                    }
                    app(a)?
                }
            });
        }
    }
    Ok(out)
}

struct PubJob {
    point: usize,
    scheme: Scheme,
    seed: u64,
}

struct PubOut {
    by_leg: Option<[f64; 3]>,
    mean: f64,
    completed: usize,
    legs: usize,
    wall_s: f64,
}

fn trace(
    p: &PubPoint,
    cfg: &PaperConfig,
    messages: usize,
    seed: u64,
) -> Result<Arc<Vec<TraceRecord>>, String> {
    if let Some(r) = &p.records {
        return Ok(Arc::clone(r));
    }
    let spec = PaperTraceSpec {
        generator_load: p.generator_load,
        write_share: p.write_share,
        sizes: p.sizes.clone(),
        messages,
        seed,
    };
    paper::generate(&spec, cfg)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn run_job(
    p: &PubPoint,
    job: &PubJob,
    pcfg: &PaperConfig,
    cfg: &SimConfig,
    messages: usize,
) -> Result<PubOut, String> {
    let started = Instant::now();
    let recs = trace(p, pcfg, messages, job.seed)?;
    if let Scheme::Edm(_) = job.scheme {
        let run = paper::run_edm(
            &PaperConfig {
                seed: job.seed,
                ..*pcfg
            },
            &recs,
        )
        .map_err(|e| e.to_string())?;
        let s = run.summary();
        return Ok(PubOut {
            by_leg: Some([s.writes, s.requests, s.responses]),
            mean: s.mean,
            completed: s.completed,
            legs: s.legs,
            wall_s: started.elapsed().as_secs_f64(),
        });
    }
    // Baselines: our model on the published trace, slowdown against our lone-message time,
    // clipped at 1. CXL: a 0.64 ns hop and only the first 1 500 completions.
    let msgs = crate::trace::to_messages("published trace", &recs, cfg.nodes)
        .map_err(|e| e.to_string())?;
    let cfg = if job.scheme == Scheme::Cxl {
        SimConfig {
            prop_ps: crate::trace::SLOT_PS,
            phy_ps: 0,
            ..*cfg
        }
    } else {
        *cfg
    };
    let res = crate::run_scheme(job.scheme, &cfg, &msgs).map_err(|e| e.to_string())?;
    let mut ideals = IdealCache::new();
    let mut done: Vec<(u64, f64)> = Vec::with_capacity(msgs.len());
    for (m, f) in msgs.iter().zip(&res.finish) {
        if let Some(f) = f {
            let ideal = ideals
                .ideal(job.scheme, &cfg, m.kind, m.bytes)
                .map_err(|e| e.to_string())?;
            done.push((*f, ((f - m.arrival) as f64 / ideal as f64).max(1.0)));
        }
    }
    if job.scheme == Scheme::Cxl {
        done.sort_by_key(|d| d.0);
        done.truncate(CXL_COMPLETIONS);
    }
    Ok(PubOut {
        by_leg: None,
        mean: done.iter().map(|d| d.1).sum::<f64>() / done.len().max(1) as f64,
        completed: done.len(),
        legs: msgs.len(),
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// Run the published-metric matrix as `args` asks and print it.
pub(super) fn run(args: &Args, cfg: &SimConfig) -> Result<(), String> {
    let started = Instant::now();
    let pcfg = PaperConfig {
        nodes: cfg.nodes,
        rreq_bytes: 16,
        window_at_switch: match args.paper_window.as_str() {
            "receiver" => false,
            "switch" => true,
            other => {
                return Err(format!(
                    "--paper-window: `{other}` is not receiver or switch"
                ))
            }
        },
        ..PaperConfig::default()
    };
    let pts = points(args, &pcfg)?;
    if let Some(out) = &args.trace_out {
        let [p] = &pts[..] else {
            return Err(
                "--trace-out: needs a single workload point (one --load, no --fig8)".into(),
            );
        };
        let recs = trace(p, &pcfg, args.messages, args.seed)?;
        crate::trace::save(out, &recs).map_err(|e| e.to_string())?;
    }
    let mut jobs = Vec::new();
    for (pi, p) in pts.iter().enumerate() {
        for scheme in schemes(&args.scheme, Priority::Srpt)? {
            let seeds = if p.records.is_some() { 1 } else { args.seeds };
            for k in 0..seeds {
                jobs.push(PubJob {
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
    let outs = par_map(&jobs, threads, "edmsim --metric published", |j| {
        run_job(&pts[j.point], j, &pcfg, cfg, args.messages)
    })?;
    let mut rows = Vec::new();
    let mut i = 0;
    while i < jobs.len() {
        let (pi, scheme) = (jobs[i].point, jobs[i].scheme);
        let mut k = i;
        while k < jobs.len() && jobs[k].point == pi && jobs[k].scheme == scheme {
            k += 1;
        }
        let g = &outs[i..k];
        let p = &pts[pi];
        let means: Vec<f64> = g.iter().map(|o| o.mean).collect();
        let (mean, ci95) = mean_ci(&means);
        let name = match scheme {
            Scheme::Edm(_) => "edm",
            s => s.name(),
        };
        let published = if p.workload == "mixed" {
            published_value("mixed", 0.8, p.label, name)
        } else {
            published_value(&p.workload, p.load_label, p.write_share, name)
        };
        let mean_bytes = match &p.sizes {
            Sizes::Fixed(b) => *b as f64,
            Sizes::Cdf(c) => c.mean(),
        };
        rows.push(PubRow {
            workload: p.workload.clone(),
            label: p.label,
            generator_load: p.generator_load,
            data_load: paper::data_load(p.generator_load, mean_bytes),
            write_share: p.write_share,
            scheme: name.to_string(),
            seeds: g.len() as u64,
            mean,
            ci95,
            completed: g.iter().map(|o| o.completed as f64).sum::<f64>() / g.len() as f64,
            legs: g.iter().map(|o| o.legs as f64).sum::<f64>() / g.len() as f64,
            published,
            wall_s: g.iter().map(|o| o.wall_s).sum(),
            by_leg: g[0].by_leg.map(|_| {
                let m = |k: usize| {
                    g.iter().filter_map(|o| o.by_leg.map(|b| b[k])).sum::<f64>() / g.len() as f64
                };
                [m(0), m(1), m(2)]
            }),
        });
        i = k;
    }
    let wall = started.elapsed().as_secs_f64();
    let json = || {
        let out = serde_json::json!({
            "metric": "published", "config": pcfg, "messages": args.messages,
            "seed": args.seed, "seeds": args.seeds, "wall_s": wall, "rows": rows,
            "app_ranks": app_ranks(&rows),
        });
        serde_json::to_string_pretty(&out).map_err(|e| e.to_string())
    };
    if let Some(path) = &args.json_out {
        std::fs::write(path, json()? + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.json {
        println!("{}", json()?);
    } else if args.markdown {
        print_markdown(&rows, wall);
    } else {
        print_table(&rows, wall);
    }
    if let Some(path) = &args.plot {
        let svg = super::fig8_svg(
            &format!(
                "EDM fabric simulator, published metric ({} nodes, {} messages per trace, {} seeds)",
                cfg.nodes, args.messages, args.seeds
            ),
            &|w, x, name| {
                rows.iter()
                    .find(|r| r.workload == w && r.scheme == name && (r.label - x).abs() < 1e-9)
                    .map_or(f64::NAN, |r| r.mean)
            },
            &rows.iter().fold(Vec::new(), |mut v: Vec<String>, r| {
                if !v.contains(&r.scheme) {
                    v.push(r.scheme.clone());
                }
                v
            }),
        );
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// One scheme's ranked application means: (our app name, our mean, published value at that
/// rank) per rank.
pub type Ranked = (String, Vec<(String, f64, Option<f64>)>);

/// Per scheme: our application-trace means sorted ascending beside the published values,
/// which are in rank order (the published log parser sorted them before labelling).
/// Each entry: (scheme, [(our app name, our mean, published value at that rank)]).
pub fn app_ranks(rows: &[PubRow]) -> Vec<Ranked> {
    let mut out = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if published::APPS.contains(&r.workload.as_str()) && !names.contains(&r.scheme.as_str()) {
            names.push(&r.scheme);
        }
    }
    for n in names {
        let mut ours: Vec<(String, f64)> = rows
            .iter()
            .filter(|r| r.scheme == n && published::APPS.contains(&r.workload.as_str()))
            .map(|r| (r.workload.clone(), r.mean))
            .collect();
        ours.sort_by(|a, b| a.1.total_cmp(&b.1));
        let publ = published::APP_SLOWDOWN.iter().find(|(s, _)| *s == n);
        let v = ours
            .into_iter()
            .enumerate()
            .map(|(i, (a, m))| (a, m, publ.map(|(_, p)| p[i])))
            .collect();
        out.push((n.to_string(), v));
    }
    out
}

fn fmt_ci(r: &PubRow) -> String {
    r.ci95.map_or(String::new(), |c| format!(" ± {c:.3}"))
}

fn print_table(rows: &[PubRow], wall: f64) {
    println!(
        "{:<10} {:>5} {:>6} {:>9} {:>6} {:<9} {:>16} {:>9} {:>6} {:>9}",
        "workload",
        "label",
        "gen",
        "data_load",
        "wr",
        "scheme",
        "mean (±ci95)",
        "published",
        "ratio",
        "done"
    );
    for r in rows {
        let m = format!("{:.3}{}", r.mean, fmt_ci(r));
        println!(
            "{:<10} {:>5.2} {:>6.2} {:>9.3} {:>6.3} {:<9} {:>16} {:>9} {:>6} {:>9.0}",
            r.workload,
            r.label,
            r.generator_load,
            r.data_load,
            r.write_share,
            r.scheme,
            m,
            r.published.map_or("-".into(), |p| format!("{p:.2}")),
            r.published
                .map_or("-".into(), |p| format!("{:.2}", r.mean / p)),
            r.completed
        );
    }
    println!("total wall time {wall:.2} s");
}

fn print_markdown(rows: &[PubRow], wall: f64) {
    println!("| workload | label | generator load | data load | write share | scheme | mean ± 95 % CI | published | ours / published | averaged / legs |");
    println!("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|");
    for r in rows {
        if published::APPS.contains(&r.workload.as_str()) {
            continue;
        }
        println!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.3} | {} | {:.3}{} | {} | {} | {:.0} / {:.0} |",
            r.workload,
            r.label,
            r.generator_load,
            r.data_load,
            r.write_share,
            r.scheme,
            r.mean,
            fmt_ci(r),
            r.published.map_or("-".into(), |p| format!("{p:.2}")),
            r.published
                .map_or("-".into(), |p| format!("{:.2}", r.mean / p)),
            r.completed,
            r.legs
        );
    }
    let ranks = app_ranks(rows);
    if !ranks.is_empty() {
        println!();
        println!("Application traces at label 0.4, ranked (the published values are in rank order, not per application):");
        println!();
        println!("| scheme | rank | application | data load | mean ± 95 % CI | published at this rank | ours / published |");
        println!("|---|---:|---|---:|---:|---:|---:|");
        for (scheme, v) in &ranks {
            for (i, (app, m, p)) in v.iter().enumerate() {
                let r = rows
                    .iter()
                    .find(|r| &r.scheme == scheme && &r.workload == app)
                    .expect("ranked from rows");
                println!(
                    "| {scheme} | {} | {app} | {:.3} | {m:.3}{} | {} | {} |",
                    i + 1,
                    r.data_load,
                    fmt_ci(r),
                    p.map_or("-".into(), |p| format!("{p:.2}")),
                    p.map_or("-".into(), |p| format!("{:.2}", m / p)),
                );
            }
        }
    }
    println!();
    println!("Total wall time: {wall:.1} s.");
}
