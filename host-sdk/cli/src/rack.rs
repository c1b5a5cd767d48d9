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

/// What `clio rack` started: `Display` is the text report (ending with how
/// to ask it), `Serialize` the one-line `--json` one.
#[derive(Debug, Serialize)]
pub struct RackLayout {
    /// The controller's UDP address.
    pub controller: String,
    /// The controller's durable log.
    pub log: String,
    /// Every node, as the controller knows it.
    pub nodes: Vec<NodeRow>,
    /// The nodes' board config.
    #[serde(skip)]
    pub board: String,
}

impl fmt::Display for RackLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "clio rack: controller on udp://{} (log {}), {} emulated '{}' nodes",
            self.controller,
            self.log,
            self.nodes.len(),
            self.board
        )?;
        write!(f, "{}", Rows(&self.nodes))?;
        writeln!(
            f,
            "serving; `clio rack status --controller {}` from another shell",
            self.controller
        )
    }
}

/// A rack `clio rack` started; it serves until [`ServingRack::serve`]
/// returns (or it is dropped).
pub struct ServingRack {
    rack: LocalRack,
    balancer: clio_rack::Balancer,
    layout: RackLayout,
}

impl ServingRack {
    /// What was started, as the controller reports it.
    pub fn layout(&self) -> &RackLayout {
        &self.layout
    }

    /// Serves for `time` (`None`: until the process is killed), then stops
    /// the nodes and the controller.
    pub fn serve(self, time: Option<Duration>) -> Result<()> {
        match time {
            Some(t) => std::thread::sleep(t),
            None => loop {
                std::thread::park();
            },
        }
        self.balancer.stop();
        self.rack.stop().context("stopping the rack")
    }
}

/// Starts `clio rack` (without a subcommand): a controller and its
/// emulated nodes, every node registered and asked for its status
/// ([`status`] is `clio rack status`).
pub fn start(a: &RackArgs) -> Result<ServingRack> {
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
    let nodes = query(rack.controller_addr(), Some(rack.config()))?;
    let layout = RackLayout {
        controller: rack.controller_addr().to_string(),
        log: a.log.display().to_string(),
        nodes,
        board: board.board.name.to_string(),
    };
    Ok(ServingRack {
        rack,
        balancer,
        layout,
    })
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

    /// A started rack reports every node live and registered, answers
    /// `clio rack status`, and stops.
    #[test]
    fn starts_reports_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let a = RackArgs {
            cmd: None,
            nodes: 2,
            board: "emulator".into(),
            listen: "127.0.0.1:0".parse().unwrap(),
            log: dir.path().join("rack.log"),
            dead_after_ms: 3000,
            for_secs: Some(0),
            json: false,
        };
        let rack = start(&a).unwrap();
        let l = rack.layout();
        assert_eq!(l.nodes.len(), 2);
        assert!(l.nodes.iter().all(|n| n.live && n.epoch == 1), "{l:?}");
        let text = l.to_string();
        let first = text.lines().next().unwrap();
        assert!(first.ends_with("2 emulated 'emulator' nodes"), "{first}");
        assert!(text.lines().nth(2).unwrap().contains("mn0"), "{text}");
        assert!(text.ends_with("from another shell\n"), "{text}");
        let json = serde_json::to_value(l).unwrap();
        assert_eq!(
            json.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["controller", "log", "nodes"]
        );
        let controller = l.controller.parse().unwrap();
        let st = status(&StatusArgs {
            controller,
            json: false,
        })
        .unwrap();
        assert_eq!(st.nodes.len(), 2);
        assert!(st.nodes[0].name.is_none());
        rack.serve(Some(Duration::ZERO)).unwrap();
    }

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
