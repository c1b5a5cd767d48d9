//! `clio rack`: a rack of emulated memory nodes under one controller, and
//! `clio rack status`: what a running controller knows.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use clio_control::{ErrorCode, Message};
use clio_rack::local::LocalRack;
use clio_rack::service::Client;
use serde::Serialize;

use crate::board_arg::load_board;

/// `clio rack` arguments.
#[derive(Debug, Args)]
pub struct RackArgs {
    /// Ask a running controller instead of starting a rack.
    #[command(subcommand)]
    pub cmd: Option<RackCmd>,
    /// Emulated memory nodes to start (1..=64).
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Board config of every node (a file or an embedded name).
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// The controller's UDP address (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7800")]
    pub listen: SocketAddr,
    /// The controller's durable log (replayed if it exists).
    #[arg(long, default_value = "clio-rack.log")]
    pub log: PathBuf,
    /// Silence after which a node is declared dead, ms.
    #[arg(long, default_value_t = 3000)]
    pub dead_after_ms: u64,
    /// Stop after this many seconds (default: serve until killed).
    #[arg(long)]
    pub for_secs: Option<u64>,
    /// Print the layout as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Subcommands of `clio rack`.
#[derive(Debug, Subcommand)]
pub enum RackCmd {
    /// Nodes, their epochs, liveness, regions and pressure, from a running controller.
    Status(StatusArgs),
}

/// `clio rack status` arguments.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The controller.
    #[arg(long, default_value = "127.0.0.1:7800")]
    pub controller: SocketAddr,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct NodeRow {
    id: u16,
    name: Option<String>,
    address: Option<String>,
    epoch: u32,
    live: bool,
    regions: u32,
    used_bytes: Option<u64>,
    free_bytes: Option<u64>,
}

/// Runs `clio rack`.
pub fn run(a: &RackArgs) -> Result<()> {
    match &a.cmd {
        Some(RackCmd::Status(s)) => status(s),
        None => serve(a),
    }
}

fn serve(a: &RackArgs) -> Result<()> {
    let board = load_board(&a.board)?;
    let rack = LocalRack::start(a.nodes, &board, a.listen, &a.log, a.dead_after_ms)
        .with_context(|| format!("starting a rack of {} nodes", a.nodes))?;
    let rows = query(rack.controller_addr(), Some(rack.config()))?;
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "controller": rack.controller_addr().to_string(),
                "log": a.log.display().to_string(),
                "nodes": rows,
            })
        );
    } else {
        println!(
            "clio rack: controller on udp://{} (log {}), {} emulated '{}' nodes",
            rack.controller_addr(),
            a.log.display(),
            a.nodes,
            board.board.name
        );
        print_rows(&rows);
        println!(
            "serving; `clio rack status --controller {}` from another shell",
            rack.controller_addr()
        );
    }
    match a.for_secs {
        Some(s) => std::thread::sleep(Duration::from_secs(s)),
        None => loop {
            std::thread::park();
        },
    }
    rack.stop().context("stopping the rack")?;
    Ok(())
}

fn query(controller: SocketAddr, names: Option<&clio_rack::RackConfig>) -> Result<Vec<NodeRow>> {
    let mut c = Client::connect(controller)?;
    let mut rows = Vec::new();
    for id in 1..=u16::MAX {
        match c
            .call(Message::NodeStatus { node: id })
            .with_context(|| format!("rack controller {controller}"))?
        {
            Message::NodeReport {
                node,
                epoch,
                live,
                regions,
                pressure,
            } => {
                let cfg = names.and_then(|n| n.node(node));
                rows.push(NodeRow {
                    id: node,
                    name: cfg.map(|c| c.name.clone()),
                    address: cfg.map(|c| c.address.to_string()),
                    epoch,
                    live,
                    regions,
                    used_bytes: pressure.map(|p| p.used_bytes),
                    free_bytes: pressure.map(|p| p.free_bytes),
                });
            }
            Message::Refused {
                code: ErrorCode::UnknownNode,
                ..
            } => break,
            other => anyhow::bail!("rack controller {controller}: unexpected answer {other:?}"),
        }
    }
    Ok(rows)
}

fn mib(b: Option<u64>) -> String {
    b.map_or("-".into(), |b| {
        format!("{:.1}", b as f64 / (1 << 20) as f64)
    })
}

fn print_rows(rows: &[NodeRow]) {
    println!(
        "{:>4}  {:<8} {:<22} {:>6} {:>5} {:>8} {:>10} {:>10}",
        "node", "name", "address", "epoch", "live", "regions", "used MiB", "free MiB"
    );
    for r in rows {
        println!(
            "{:>4}  {:<8} {:<22} {:>6} {:>5} {:>8} {:>10} {:>10}",
            r.id,
            r.name.as_deref().unwrap_or("-"),
            r.address.as_deref().unwrap_or("-"),
            r.epoch,
            if r.live { "yes" } else { "no" },
            r.regions,
            mib(r.used_bytes),
            mib(r.free_bytes)
        );
    }
}

fn status(s: &StatusArgs) -> Result<()> {
    let rows = query(s.controller, None)?;
    if s.json {
        println!(
            "{}",
            serde_json::json!({ "controller": s.controller.to_string(), "nodes": rows })
        );
    } else {
        println!(
            "rack controller udp://{}: {} nodes",
            s.controller,
            rows.len()
        );
        print_rows(&rows);
    }
    Ok(())
}
