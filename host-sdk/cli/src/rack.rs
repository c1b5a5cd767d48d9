//! `clio rack`: a rack of emulated memory nodes under one controller, and
//! `clio rack status`: what a running controller knows.

use std::fmt;
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

/// One node as the controller knows it.
#[derive(Debug, Serialize)]
pub struct NodeRow {
    /// Node id.
    pub id: u16,
    /// Its name in the rack config (a rack started here only).
    pub name: Option<String>,
    /// Its address in the rack config (a rack started here only).
    pub address: Option<String>,
    /// The node's boot epoch.
    pub epoch: u32,
    /// Whether the controller hears from it.
    pub live: bool,
    /// vRegions placed on it.
    pub regions: u32,
    /// Bytes in use, if reported.
    pub used_bytes: Option<u64>,
    /// Bytes free, if reported.
    pub free_bytes: Option<u64>,
}

/// What `clio rack status` found; `Display` is the text report, `Serialize`
/// the `--json` one.
#[derive(Debug, Serialize)]
pub struct RackStatus {
    /// The controller asked.
    pub controller: String,
    /// Every node it knows.
    pub nodes: Vec<NodeRow>,
}

impl fmt::Display for RackStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "rack controller udp://{}: {} nodes",
            self.controller,
            self.nodes.len()
        )?;
        write!(f, "{}", Rows(&self.nodes))
    }
}

/// Runs `clio rack` without a subcommand: starts a rack and serves until
/// killed or `--for-secs` ([`status`] is `clio rack status`).
pub fn run(a: &RackArgs) -> Result<()> {
    serve(a)
}

fn serve(a: &RackArgs) -> Result<()> {
    let board = load_board(&a.board)?;
    let rack = LocalRack::start(a.nodes, &board, a.listen, &a.log, a.dead_after_ms)
        .with_context(|| format!("starting a rack of {} nodes", a.nodes))?;
    // Node-initiated migration: a node over 80 % used sheds its least used
    // region to a node under 50 %.
    let balancer = rack
        .start_balancer(
            clio::ClientConfig::from_board(&board),
            clio_rack::BalancerConfig::default(),
        )
        .context("starting the rack's balancer")?;
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
        print!("{}", Rows(&rows));
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
    balancer.stop();
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

/// The node table.
struct Rows<'a>(&'a [NodeRow]);

impl fmt::Display for Rows<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>4}  {:<8} {:<22} {:>6} {:>5} {:>8} {:>10} {:>10}",
            "node", "name", "address", "epoch", "live", "regions", "used MiB", "free MiB"
        )?;
        for r in self.0 {
            writeln!(
                f,
                "{:>4}  {:<8} {:<22} {:>6} {:>5} {:>8} {:>10} {:>10}",
                r.id,
                r.name.as_deref().unwrap_or("-"),
                r.address.as_deref().unwrap_or("-"),
                r.epoch,
                if r.live { "yes" } else { "no" },
                r.regions,
                mib(r.used_bytes),
                mib(r.free_bytes)
            )?;
        }
        Ok(())
    }
}

/// Asks a running controller for its nodes (`clio rack status`); the
/// caller prints the report.
pub fn status(s: &StatusArgs) -> Result<RackStatus> {
    Ok(RackStatus {
        controller: s.controller.to_string(),
        nodes: query(s.controller, None)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_report_text_and_json() {
        let r = RackStatus {
            controller: "127.0.0.1:7800".into(),
            nodes: vec![NodeRow {
                id: 1,
                name: None,
                address: None,
                epoch: 3,
                live: false,
                regions: 2,
                used_bytes: Some(3 << 20),
                free_bytes: None,
            }],
        };
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "rack controller udp://127.0.0.1:7800: 1 nodes");
        assert!(lines[1].trim_start().starts_with("node  name"), "{text}");
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(row, ["1", "-", "-", "3", "no", "2", "3.0", "-"]);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nodes"][0]["used_bytes"], 3 << 20);
    }
}
