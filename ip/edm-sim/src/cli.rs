//! The command line of the simulator (`edmsim`, and `clio edmsim`): run one
//! workload, or the whole Fig. 8 matrix.

use std::path::PathBuf;
use std::time::Instant;

use crate::plot::{render, Panel, PanelData};
use crate::published;
use crate::{
    evaluate, generate, EdmOrder, IdealCache, Scheme, SimConfig, SizeCdf, Sizes, Summary,
    WorkloadSpec,
};
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
    /// Directory with the `CDF_<name>.txt` workload files.
    #[arg(long, default_value = "../shared/data/edm-workloads")]
    cdf_dir: PathBuf,
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
            Scheme::parse(s.trim(), edm_priority)
                .ok_or_else(|| format!("--scheme: unknown scheme `{s}`"))
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
            let cdf = SizeCdf::load(&args.cdf_dir, app, mtu).map_err(|e| e.to_string())?;
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
    })
}

fn run_point(
    args: &Args,
    cfg: &SimConfig,
    p: &Point,
    scheme_arg: &str,
    ideals: &mut IdealCache,
) -> Result<Vec<Row>, String> {
    let spec = WorkloadSpec {
        load: p.load,
        write_ratio: p.write_ratio,
        sizes: p.sizes.clone(),
        messages: p.messages,
        seed: args.seed,
    };
    let cfg = &SimConfig {
        edm_reserve: p.edm_reserve,
        ..*cfg
    };
    let msgs = generate(&spec, cfg).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for scheme in schemes(scheme_arg, p.edm_priority)? {
        let (_, summary) = evaluate(scheme, cfg, &msgs, ideals).map_err(|e| e.to_string())?;
        rows.push(Row {
            workload: p.workload.clone(),
            load: p.load,
            write_ratio: p.write_ratio,
            edm_reserve: p.edm_reserve,
            published_mean: match p.sizes {
                // The published microbenchmarks are 64 B messages only.
                Sizes::Fixed(b) if b != 64 => None,
                _ => published_value(&p.workload, p.load, p.write_ratio, scheme.name()),
            },
            summary,
        });
    }
    Ok(rows)
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
        "{:<10} {:>5} {:>5} {:<9} {:>6} {:>8} {:>8} {:>8} {:>9} {:>7} {:>8} {:>9}",
        "workload",
        "load",
        "wr",
        "scheme",
        "done",
        "mean",
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
            "{:<10} {:>5.2} {:>5.2} {:<9} {:>6} {:>8.3} {:>8.3} {:>8.3} {:>9} {:>7} {:>8.3} {:>9.2}",
            r.workload,
            r.load,
            r.write_ratio,
            s.scheme,
            s.completed,
            s.all.mean,
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
    println!("| workload | load | write share | scheme | mean | median | p99 | published mean | ours / published |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let s = &r.summary;
        let (publ, ratio) = match r.published_mean {
            Some(p) => (format!("{p:.2}"), format!("{:.2}", s.all.mean / p)),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "| {} | {:.1} | {:.1} | {} | {:.2} | {:.2} | {:.2} | {} | {} |",
            r.workload,
            r.load,
            r.write_ratio,
            s.scheme,
            s.all.mean,
            s.all.median,
            s.all.p99,
            publ,
            ratio
        );
    }
    println!();
    println!("Total wall time: {wall:.1} s.");
}

fn fig8_panels(rows: &[Row]) -> Vec<Panel> {
    let names: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in rows {
            let n = if r.summary.scheme.starts_with("edm") {
                "edm".to_string()
            } else {
                r.summary.scheme.clone()
            };
            if !v.contains(&n) {
                v.push(n);
            }
        }
        v
    };
    let get = |w: &str, load: f64, wr: f64, name: &str| {
        rows.iter()
            .find(|r| {
                r.workload == w
                    && (r.load - load).abs() < 1e-9
                    && (r.write_ratio - wr).abs() < 1e-9
                    && (r.summary.scheme == name
                        || (name == "edm" && r.summary.scheme.starts_with("edm")))
            })
            .map_or(f64::NAN, |r| r.summary.all.mean)
    };
    let lines = |w: &str, wr: f64, title: &str| Panel {
        title: title.to_string(),
        x_label: "load".into(),
        data: PanelData::Lines {
            x: published::LOADS.to_vec(),
            series: names
                .iter()
                .map(|n| {
                    (
                        n.clone(),
                        published::LOADS.iter().map(|&l| get(w, l, wr, n)).collect(),
                    )
                })
                .collect(),
        },
    };
    vec![
        lines("write", 1.0, "(a) write-only, 64 B all-to-all"),
        lines("read", 0.0, "(a) read-only, 64 B all-to-all"),
        Panel {
            title: "(a) mixed reads/writes at load 0.8".into(),
            x_label: "write share".into(),
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
                                .map(|&w| get("mixed", 0.8, w, n))
                                .collect(),
                        )
                    })
                    .collect(),
            },
        },
        Panel {
            title: "(b) application traces at load 0.4".into(),
            x_label: "workload".into(),
            data: PanelData::Bars {
                groups: published::APPS.iter().map(|a| a.to_string()).collect(),
                series: names
                    .iter()
                    .map(|n| {
                        (
                            n.clone(),
                            published::APPS
                                .iter()
                                .map(|a| get(a, 0.4, 0.5, n))
                                .collect(),
                        )
                    })
                    .collect(),
            },
        },
    ]
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
    let started = Instant::now();
    let mut ideals = IdealCache::new();
    let mut rows = Vec::new();
    let mut points = Vec::new();
    if args.fig8 {
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
    for p in &points {
        let r = run_point(&args, &cfg, p, &args.scheme, &mut ideals)?;
        if !args.json && !args.markdown {
            print_table(&r);
        }
        rows.extend(r);
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
        let panels = if args.fig8 {
            fig8_panels(&rows)
        } else {
            let loads = parse_loads(&args.load)?;
            let mut names: Vec<String> = Vec::new();
            for r in &rows {
                if !names.contains(&r.summary.scheme) {
                    names.push(r.summary.scheme.clone());
                }
            }
            let series = names
                .iter()
                .map(|n| {
                    let ys = loads
                        .iter()
                        .map(|&l| {
                            rows.iter()
                                .find(|r| &r.summary.scheme == n && (r.load - l).abs() < 1e-9)
                                .map_or(f64::NAN, |r| r.summary.all.mean)
                        })
                        .collect();
                    (n.clone(), ys)
                })
                .collect();
            vec![Panel {
                title: format!("{} workload", args.workload),
                x_label: "load".into(),
                data: PanelData::Lines { x: loads, series },
            }]
        };
        let runs = if args.fig8 {
            format!(
                "{} messages per microbenchmark, {} per trace",
                args.messages, args.app_messages
            )
        } else {
            format!("{} messages", args.messages)
        };
        let svg = render(
            &format!(
                "EDM fabric simulator: mean slowdown ({} nodes, {runs})",
                cfg.nodes
            ),
            &panels,
            2,
        );
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
