//! `clio rack`: a rack of emulated memory nodes under one controller, and
//! `clio rack status`: what a running controller knows.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use clio_control::auth::RackKey;
use clio_control::{ErrorCode, Message, MigrationInfo, MigrationKind, MigrationOutcome};
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
    /// The rack key file (32 hex digits): read if it exists, else a fresh
    /// key is written there (mode 0600). Default: the log's path + `.key`.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
    /// Run without a rack key: bare, unauthenticated control datagrams.
    #[arg(long, conflicts_with = "key_file")]
    pub keyless: bool,
}

/// Subcommands of `clio rack`.
#[derive(Debug, Subcommand)]
pub enum RackCmd {
    /// Nodes, their epochs, liveness, regions and pressure, and the
    /// migrations in progress and recently ended, from a running controller.
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
    /// The rack key (32 hex digits) of a rack whose file names one
    /// (`controller.key`/`key_file`): requests are sealed with it.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
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

/// One migration as the controller records it.
#[derive(Debug, Serialize)]
pub struct MigrationRow {
    /// The controller's id for it.
    pub id: u32,
    /// vRegion index.
    pub region: u32,
    /// Giver node id.
    pub from: u16,
    /// Taker node id.
    pub to: u16,
    /// Bytes copied so far, as last reported (`None`: unknown since a
    /// controller restart, until the mover reports again).
    pub copied_bytes: Option<u64>,
    /// Bytes to copy.
    pub total_bytes: u64,
    /// When it began (Unix ms, the controller's clock).
    pub started_unix_ms: u64,
    /// When it ended (Unix ms), if it did.
    pub ended_unix_ms: Option<u64>,
    /// How long it ran, ms (ended ones only).
    pub duration_ms: Option<u64>,
    /// `in_progress`, `completed`, `rolled_back` or `timed_out`.
    pub outcome: &'static str,
    /// `move` (a migration: `to` owns the region after it) or `copy` (a
    /// re-replication: `to` is the region's new backup after it).
    pub kind: &'static str,
}

impl From<MigrationInfo> for MigrationRow {
    fn from(m: MigrationInfo) -> Self {
        MigrationRow {
            id: m.id,
            region: m.region,
            from: m.from,
            to: m.to,
            copied_bytes: m.copied_bytes,
            total_bytes: m.total_bytes,
            started_unix_ms: m.started_unix_ms,
            ended_unix_ms: m.ended_unix_ms,
            duration_ms: m.ended_unix_ms.map(|e| e.saturating_sub(m.started_unix_ms)),
            outcome: match m.outcome {
                MigrationOutcome::InProgress => "in_progress",
                MigrationOutcome::Completed => "completed",
                MigrationOutcome::RolledBack => "rolled_back",
                MigrationOutcome::TimedOut => "timed_out",
            },
            kind: match m.kind {
                MigrationKind::Move => "move",
                MigrationKind::Copy => "copy",
            },
        }
    }
}

/// What `clio rack status` found; `Display` is the text report, `Serialize`
/// the `--json` one.
#[derive(Debug, Serialize)]
pub struct RackStatus {
    /// The controller asked.
    pub controller: String,
    /// Every node it knows.
    pub nodes: Vec<NodeRow>,
    /// Migrations in progress (ascending id), then the most recent ended
    /// ones (newest first), from the controller's durable log.
    pub migrations: Vec<MigrationRow>,
    /// When the report was taken (Unix ms, this host's clock): "started
    /// N s ago" is measured from it.
    #[serde(skip)]
    pub now_unix_ms: u64,
}

impl fmt::Display for RackStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "rack controller udp://{}: {} nodes",
            self.controller,
            self.nodes.len()
        )?;
        write!(f, "{}", Rows(&self.nodes))?;
        let open = self
            .migrations
            .iter()
            .filter(|m| m.outcome == "in_progress")
            .count();
        writeln!(
            f,
            "migrations: {open} in progress, {} ended",
            self.migrations.len() - open
        )?;
        if self.migrations.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "{:>4}  {:<4}  {:>7}  {:<9} {:>21}  {:>9}  {:>9}  outcome",
            "id", "kind", "region", "from->to", "copied/total MiB", "started", "took"
        )?;
        for m in &self.migrations {
            let ago = self.now_unix_ms.saturating_sub(m.started_unix_ms) as f64 / 1000.0;
            writeln!(
                f,
                "{:>4}  {:<4}  {:>7}  {:<9} {:>21}  {:>9}  {:>9}  {}",
                m.id,
                m.kind,
                m.region,
                format!("{}->{}", m.from, m.to),
                format!("{}/{}", mib(m.copied_bytes), mib(Some(m.total_bytes))),
                format!("{ago:.1}s ago"),
                m.duration_ms
                    .map_or("-".into(), |d| format!("{:.3}s", d as f64 / 1000.0)),
                m.outcome.replace('_', " ")
            )?;
        }
        Ok(())
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
    /// The rack key's file (`None`: the rack runs keyless).
    pub key_file: Option<String>,
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
        match &self.key_file {
            Some(k) => writeln!(
                f,
                "serving, keyed; `clio rack status --controller {} --key-file {k}` from another shell",
                self.controller
            ),
            None => writeln!(
                f,
                "serving, keyless; `clio rack status --controller {}` from another shell",
                self.controller
            ),
        }
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
    let (key, key_file) = if a.keyless {
        (None, None)
    } else {
        let f = a.key_file.clone().unwrap_or_else(|| {
            let mut p = a.log.clone().into_os_string();
            p.push(".key");
            PathBuf::from(p)
        });
        (Some(rack_key_file(&f)?), Some(f.display().to_string()))
    };
    let rack = LocalRack::start_with_key(a.nodes, &board, a.listen, &a.log, a.dead_after_ms, key)
        .with_context(|| format!("starting a rack of {} nodes", a.nodes))?;
    // Node-initiated migration: a node over 80 % used sheds its least used
    // region to a node under 50 %.
    let balancer = rack
        .start_balancer(
            clio::ClientConfig::from_board(&board),
            clio_rack::BalancerConfig::default(),
        )
        .context("starting the rack's balancer")?;
    let nodes = query(
        rack.controller_addr(),
        Some(rack.config()),
        rack.config().key,
    )?;
    let layout = RackLayout {
        controller: rack.controller_addr().to_string(),
        log: a.log.display().to_string(),
        nodes,
        board: board.board.name.to_string(),
        key_file,
    };
    Ok(ServingRack {
        rack,
        balancer,
        layout,
    })
}

/// The rack key in `path`, or a fresh one written there (mode 0600) if the
/// file does not exist; errors name the file, never the key.
fn rack_key_file(path: &std::path::Path) -> Result<RackKey> {
    match std::fs::read_to_string(path) {
        Ok(text) => RackKey::from_hex(&text)
            .map_err(|e| anyhow::anyhow!("--key-file {}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = clio_rack::local::generate_key();
            let mut o = std::fs::OpenOptions::new();
            o.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                o.mode(0o600);
            }
            let mut f = o
                .open(path)
                .with_context(|| format!("--key-file {}: cannot create", path.display()))?;
            use std::io::Write as _;
            writeln!(f, "{}", clio_rack::local::key_hex(&key))
                .with_context(|| format!("--key-file {}: cannot write", path.display()))?;
            Ok(key)
        }
        Err(e) => Err(anyhow::anyhow!(
            "--key-file {}: cannot read: {e}",
            path.display()
        )),
    }
}

fn query(
    controller: SocketAddr,
    names: Option<&clio_rack::RackConfig>,
    key: Option<RackKey>,
) -> Result<Vec<NodeRow>> {
    let mut c = Client::connect(controller)?.with_key(key);
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

/// Every migration the controller records, page by page.
fn query_migrations(controller: SocketAddr, key: Option<RackKey>) -> Result<Vec<MigrationRow>> {
    let mut c = Client::connect(controller)?.with_key(key);
    let mut rows = Vec::new();
    let mut from = 0;
    loop {
        match c
            .call(Message::Migrations { from })
            .with_context(|| format!("rack controller {controller}"))?
        {
            Message::MigrationList { entries, next } => {
                rows.extend(entries.into_iter().map(MigrationRow::from));
                match next {
                    Some(n) if n > from => from = n,
                    _ => return Ok(rows),
                }
            }
            other => anyhow::bail!("rack controller {controller}: unexpected answer {other:?}"),
        }
    }
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
    let key = match &s.key_file {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("--key-file {}: cannot read", f.display()))?;
            Some(
                RackKey::from_hex(&text)
                    .map_err(|e| anyhow::anyhow!("--key-file {}: {e}", f.display()))?,
            )
        }
        None => None,
    };
    let nodes = query(s.controller, None, key)?;
    let migrations = query_migrations(s.controller, key)?;
    Ok(RackStatus {
        controller: s.controller.to_string(),
        nodes,
        migrations,
        now_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
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
            key_file: None,
            keyless: false,
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
            ["controller", "key_file", "log", "nodes"]
        );
        // Keyed by default: the key was written beside the log.
        let key_file = PathBuf::from(l.key_file.clone().expect("keyed by default"));
        assert_eq!(key_file, dir.path().join("rack.log.key"));
        assert!(RackKey::from_hex(&std::fs::read_to_string(&key_file).unwrap()).is_ok());
        let controller = l.controller.parse().unwrap();
        // Without the key the controller answers nothing readable.
        assert!(status(&StatusArgs {
            controller,
            json: false,
            key_file: None,
        })
        .is_err());
        let st = status(&StatusArgs {
            controller,
            json: false,
            key_file: Some(key_file),
        })
        .unwrap();
        assert_eq!(st.nodes.len(), 2);
        assert!(st.nodes[0].name.is_none());
        rack.serve(Some(Duration::ZERO)).unwrap();
    }

    fn status_of(controller: SocketAddr) -> RackStatus {
        status_keyed(controller, None)
    }

    fn status_keyed(controller: SocketAddr, key_file: Option<PathBuf>) -> RackStatus {
        status(&StatusArgs {
            controller,
            json: false,
            key_file,
        })
        .unwrap()
    }

    /// `clio rack status` lists a client's migration (completed, with its
    /// bytes and duration) and one rolled back (its target declared dead).
    #[test]
    fn status_lists_completed_and_rolled_back_migrations() {
        let dir = tempfile::tempdir().unwrap();
        let board = clio_config::BoardConfig::embedded("emulator").unwrap();
        let mut r = LocalRack::start_keyless(
            3,
            &board,
            "127.0.0.1:0".parse().unwrap(),
            &dir.path().join("rack.log"),
            1000,
        )
        .unwrap();
        let c = clio_rack::RackClient::new(
            r.config(),
            r.controller_addr(),
            r.links(),
            clio::ClientConfig::from_board(&board),
        )
        .unwrap();
        let va = c.ralloc(clio_control::VREGION_BYTES).unwrap();
        c.rwrite(va, &[7u8; 4096]).unwrap();
        c.rwrite(va + clio_rack::client::CHUNK, &[8u8; 64]).unwrap();
        let region = (va >> 30) as u32;
        let from = c.owner_of(region).unwrap();
        let to = if from == 1 { 2 } else { 1 };
        let m = c.migrate(region, to).unwrap();
        let st = status_of(r.controller_addr());
        assert_eq!(st.migrations.len(), 1, "{st}");
        let row = &st.migrations[0];
        assert_eq!(
            (row.region, row.from, row.to, row.outcome),
            (region, from, to, "completed")
        );
        assert_eq!(row.kind, "move");
        assert_eq!(row.total_bytes, 2 * clio_rack::client::CHUNK);
        assert_eq!(row.copied_bytes, Some(m.bytes));
        assert!(row.duration_ms.is_some());
        // Back towards a node the controller declared dead: refused at the
        // commit, rolled back, and recorded so.
        let dead = 6 - from - to;
        r.silence(dead);
        let mut ctl = Client::connect(r.controller_addr()).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !matches!(
            ctl.call(Message::NodeStatus { node: dead }).unwrap(),
            Message::NodeReport { live: false, .. }
        ) {
            assert!(std::time::Instant::now() < deadline, "never declared dead");
            std::thread::sleep(Duration::from_millis(50));
        }
        c.migrate(region, dead).unwrap_err();
        let st = status_of(r.controller_addr());
        let text = st.to_string();
        assert!(
            text.contains("migrations: 0 in progress, 2 ended"),
            "{text}"
        );
        let rows: Vec<_> = st.migrations.iter().map(|m| (m.id, m.outcome)).collect();
        assert_eq!(rows, [(2, "rolled_back"), (1, "completed")], "{text}");
        assert!(text.contains(&format!("{to}->{dead}")), "{text}");
        let json = serde_json::to_value(&st).unwrap();
        assert_eq!(json["migrations"][0]["outcome"], "rolled_back");
        assert_eq!(json["migrations"][1]["region"], region);
    }

    /// A migration the controller saw begin survives a controller restart
    /// (from its log): shown in progress with its copied bytes unknown, then
    /// as the restarted controller resolves it — completed when the mover's
    /// commit arrives, timed out when the mover stays silent.
    #[test]
    fn a_migration_open_across_a_controller_restart_is_shown_as_it_resolves() {
        use clio_rack::service::Service;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("rack.log");
        // A keyed rack: `clio rack status --key-file` seals its requests.
        let hex = "00112233445566778899aabbccddeeff";
        let key_file = dir.path().join("rack.key");
        std::fs::write(&key_file, hex).unwrap();
        let key = Some(RackKey::from_hex(hex).unwrap());
        let text =
            "[controller]\ndead_after_ms = 600000\nkey = \"00112233445566778899aabbccddeeff\"\n\
                    migration_timeout_ms = 1500\n\
                    [[node]]\nname = \"a\"\naddress = \"127.0.0.1:7701\"\ncapacity = \"4 GiB\"\n\
                    [[node]]\nname = \"b\"\naddress = \"127.0.0.1:7702\"\ncapacity = \"4 GiB\"\n";
        let cfg = clio_rack::config::load_str("rack.toml", text).unwrap();
        let serve = || {
            let (rack, _) = clio_rack::Rack::open(cfg.clone(), &log, 0).unwrap();
            Service::bind("127.0.0.1:0", rack).unwrap().spawn().unwrap()
        };
        let svc = serve();
        let mut c = Client::connect(svc.addr()).unwrap().with_key(key);
        for n in 1..=2u16 {
            let a = cfg.node(n).unwrap();
            let hello = Message::Hello {
                node: n,
                addr: a.node_addr(),
                capacity: a.capacity,
                boot_epoch: 9,
            };
            assert!(matches!(c.call(hello).unwrap(), Message::Welcome { .. }));
        }
        let Message::Allocated { placements } = c
            .call(Message::Allocate {
                bytes: 2 * clio_control::VREGION_BYTES,
            })
            .unwrap()
        else {
            panic!("allocated")
        };
        let mut ids = Vec::new();
        for p in &placements {
            let begin = Message::MigrationBegin {
                region: p.region,
                from: p.node,
                to: 3 - p.node,
                total_bytes: 8 << 20,
                kind: MigrationKind::Move,
            };
            let Message::MigrationId { id } = c.call(begin.clone()).unwrap() else {
                panic!("an id")
            };
            // A second mover of the same region is refused.
            assert_eq!(
                c.call(begin).unwrap(),
                Message::Refused {
                    code: ErrorCode::Busy,
                    field: clio_control::Field::MigrationRegion
                }
            );
            let p = Message::MigrationProgress {
                id,
                copied_bytes: 4 << 20,
            };
            assert!(matches!(c.call(p).unwrap(), Message::Ack { .. }));
            ids.push(id);
        }
        let st = status_keyed(svc.addr(), Some(key_file.clone()));
        assert_eq!(st.migrations.len(), 2);
        assert!(st
            .migrations
            .iter()
            .all(|m| m.outcome == "in_progress" && m.copied_bytes == Some(4 << 20)));
        // The controller restarts over its log (on a new port).
        svc.stop().unwrap();
        let svc = serve();
        let st = status_keyed(svc.addr(), Some(key_file.clone()));
        let text = st.to_string();
        assert!(
            text.contains("migrations: 2 in progress, 0 ended"),
            "{text}"
        );
        assert!(
            st.migrations.iter().all(|m| m.copied_bytes.is_none()),
            "{text}"
        );
        assert!(text.contains("-/8.0"), "{text}");
        // The first mover outlived the restart and commits; the second is gone.
        let mut c = Client::connect(svc.addr()).unwrap().with_key(key);
        let p = placements[0];
        let Message::Owner(_) = c
            .call(Message::MoveRegion {
                region: p.region,
                from: p.node,
                from_epoch: 1,
                to: 3 - p.node,
            })
            .unwrap()
        else {
            panic!("moved")
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let st = loop {
            let st = status_keyed(svc.addr(), Some(key_file.clone()));
            if st.migrations.iter().all(|m| m.outcome != "in_progress") {
                break st;
            }
            assert!(std::time::Instant::now() < deadline, "{st}");
            std::thread::sleep(Duration::from_millis(50));
        };
        let rows: Vec<_> = st.migrations.iter().map(|m| (m.id, m.outcome)).collect();
        assert_eq!(rows, [(ids[1], "timed_out"), (ids[0], "completed")], "{st}");
        // The controller kept the second region on its source.
        let Message::Owner(o) = c
            .call(Message::Lookup {
                region: placements[1].region,
            })
            .unwrap()
        else {
            panic!("owner")
        };
        assert_eq!(o.node, placements[1].node);
        // And after one more restart the ended ones are still listed.
        svc.stop().unwrap();
        let svc = serve();
        let again: Vec<_> = status_keyed(svc.addr(), Some(key_file.clone()))
            .migrations
            .iter()
            .map(|m| (m.id, m.outcome, m.duration_ms.is_some()))
            .collect();
        assert_eq!(
            again,
            [(ids[1], "timed_out", true), (ids[0], "completed", true)]
        );
        // Without the key, a keyed controller answers nothing readable.
        let e = status(&StatusArgs {
            controller: svc.addr(),
            json: false,
            key_file: None,
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("no answer"), "{e:#}");
        svc.stop().unwrap();
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
            migrations: vec![
                MigrationRow::from(MigrationInfo {
                    id: 2,
                    region: 5,
                    from: 1,
                    to: 2,
                    total_bytes: 8 << 20,
                    copied_bytes: Some(4 << 20),
                    started_unix_ms: 10_000,
                    ended_unix_ms: None,
                    outcome: MigrationOutcome::InProgress,
                    kind: MigrationKind::Copy,
                }),
                MigrationRow::from(MigrationInfo {
                    id: 1,
                    region: 4,
                    from: 2,
                    to: 1,
                    total_bytes: 4 << 20,
                    copied_bytes: None,
                    started_unix_ms: 8_000,
                    ended_unix_ms: Some(9_250),
                    outcome: MigrationOutcome::RolledBack,
                    kind: MigrationKind::Move,
                }),
            ],
            now_unix_ms: 12_500,
        };
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "rack controller udp://127.0.0.1:7800: 1 nodes");
        assert!(lines[1].trim_start().starts_with("node  name"), "{text}");
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(row, ["1", "-", "-", "3", "no", "2", "3.0", "-"]);
        assert_eq!(lines[3], "migrations: 1 in progress, 1 ended");
        let m: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(
            m,
            ["2", "copy", "5", "1->2", "4.0/8.0", "2.5s", "ago", "-", "in", "progress"]
        );
        let m: Vec<&str> = lines[6].split_whitespace().collect();
        assert_eq!(
            m,
            ["1", "move", "4", "2->1", "-/4.0", "4.5s", "ago", "1.250s", "rolled", "back"]
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nodes"][0]["used_bytes"], 3 << 20);
        assert_eq!(json["migrations"][1]["duration_ms"], 1250);
        assert_eq!(json["migrations"][0]["outcome"], "in_progress");
        assert_eq!(json["migrations"][0]["kind"], "copy");
    }
}
