//! `clio info`: who a board is and what it runs, optionally checked
//! against a firmware build manifest.
//!
//! For an emulated board it also prints the UDP server's client table
//! (live, capacity, evicted): the INFO payload is the board's wire format,
//! so these come from the emulator's stats probe on the same port
//! (`clio_emu::server::probe_stats`), which a hardware board does not answer.

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::Session;
use clio_fwlog::ImageManifest;
use clio_wire::payload::InfoResp;
use serde::Serialize;

use crate::board_arg::{connect_target, TargetArgs};

/// Ask a board for its identity.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Which board, and how to reach it.
    #[command(flatten)]
    pub target: TargetArgs,
    /// A firmware `manifest.json` (from firmware-arm/image/package.sh) to compare against.
    #[arg(long)]
    pub manifest: Option<std::path::PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The board's answer as plain fields.
#[derive(Debug, Serialize)]
pub struct BoardIdentity {
    /// Board name.
    pub board: String,
    /// Firmware version as `major.minor.patch`.
    pub firmware_version: String,
    /// RTL (or model) version.
    pub rtl_version: String,
    /// First 8 bytes of the firmware build id, hex.
    pub build_id: String,
    /// Config hash, hex.
    pub config_hash: String,
    /// DRAM bytes.
    pub dram_bytes: u64,
    /// Largest payload per packet.
    pub mtu: u16,
    /// Default page size in bytes.
    pub page_bytes: u64,
    /// Page-table slots per bucket.
    pub slots_per_bucket: u8,
    /// TLB entries.
    pub tlb_entries: u32,
    /// The board's boot epoch, hex (changes at every restart).
    pub epoch: String,
    /// Session-table entries (session ids `1..sessions`).
    pub sessions: u16,
}

fn version(v: u32) -> String {
    format!("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff)
}

impl From<&InfoResp> for BoardIdentity {
    fn from(i: &InfoResp) -> Self {
        BoardIdentity {
            board: i.board_name().unwrap_or("?").to_string(),
            firmware_version: version(i.firmware_version),
            rtl_version: version(i.rtl_version),
            build_id: format!("{:016x}", i.build_id),
            config_hash: format!("{:016x}", i.config_hash),
            dram_bytes: i.dram_bytes,
            mtu: i.mtu,
            page_bytes: 1u64 << i.page_shift,
            slots_per_bucket: i.slots_per_bucket,
            tlb_entries: i.tlb_entries,
            epoch: format!("{:08x}", i.epoch),
            sessions: i.sessions,
        }
    }
}

/// One comparison of the board's answer with the manifest.
#[derive(Debug, Serialize)]
pub struct Check {
    /// The compared field (`board`, `build_id`, `config_hash`).
    pub field: &'static str,
    /// What the board says.
    pub board: String,
    /// What the manifest says.
    pub manifest: String,
    /// Whether they agree.
    pub ok: bool,
}

/// What `clio info` found; `Display` is the text report, `Serialize` the
/// `--json` one.
#[derive(Debug, Serialize)]
pub struct InfoReport {
    /// The board's answer.
    pub board: BoardIdentity,
    /// The UDP server's client table, when the board is an emulator.
    pub emulator: Option<clio_emu::server::ProbeReply>,
    /// The card's counters, when the board is reached through an Alveo card.
    pub card: Option<clio_xdma::CardCounters>,
    /// The comparison with `--manifest` (empty without one).
    pub manifest_checks: Vec<Check>,
}

impl InfoReport {
    /// An error naming every field in which the board differs from the manifest.
    pub fn verdict(&self) -> Result<()> {
        let bad: Vec<_> = self
            .manifest_checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.field)
            .collect();
        if !bad.is_empty() {
            bail!("board differs from the manifest in: {}", bad.join(", "));
        }
        Ok(())
    }
}

impl std::fmt::Display for InfoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = &self.board;
        writeln!(f, "board            {}", id.board)?;
        writeln!(
            f,
            "firmware         {}  (build {})",
            id.firmware_version, id.build_id
        )?;
        writeln!(f, "rtl              {}", id.rtl_version)?;
        writeln!(f, "config hash      {}", id.config_hash)?;
        writeln!(f, "dram             {} MiB", id.dram_bytes >> 20)?;
        writeln!(f, "mtu              {} B", id.mtu)?;
        writeln!(
            f,
            "pages            {} KiB, {} slots/bucket, {} TLB entries",
            id.page_bytes >> 10,
            id.slots_per_bucket,
            id.tlb_entries
        )?;
        writeln!(f, "epoch            {}", id.epoch)?;
        writeln!(
            f,
            "sessions         {} at once (table of {}, ids 1..{})",
            id.sessions.saturating_sub(1),
            id.sessions,
            id.sessions.saturating_sub(1)
        )?;
        if let Some(e) = &self.emulator {
            let c = &e.clients;
            writeln!(
                f,
                "clients          {} live of {}, {} evicted, {} answers to evicted clients dropped (emulator)",
                c.live, c.capacity, c.evicted, c.unroutable
            )?;
        }
        if let Some(c) = &self.card {
            writeln!(f, "card             {c}")?;
        }
        for c in &self.manifest_checks {
            writeln!(
                f,
                "{:<6} {:<11} board {}  manifest {}",
                if c.ok { "match" } else { "DIFF" },
                c.field,
                c.board,
                c.manifest
            )?;
        }
        Ok(())
    }
}

/// Compare a board's identity with a manifest. The board reports the first
/// 8 bytes of the GNU build id (big-endian) in its 64-bit `build_id` field.
fn compare(id: &BoardIdentity, m: &ImageManifest) -> Vec<Check> {
    let prefix = |s: &str| s.get(..16).unwrap_or(s).to_ascii_lowercase();
    let mut v = vec![
        Check {
            field: "board",
            board: id.board.clone(),
            manifest: m.board.clone(),
            ok: id.board == m.board,
        },
        Check {
            field: "build_id",
            board: id.build_id.clone(),
            manifest: m.build_id.clone(),
            ok: id.build_id == prefix(&m.build_id),
        },
    ];
    let hash = m.config_hash.trim_start_matches("0x").to_ascii_lowercase();
    v.push(Check {
        field: "config_hash",
        board: id.config_hash.clone(),
        manifest: m.config_hash.clone(),
        ok: u64::from_str_radix(&hash, 16)
            .ok()
            .map(|h| format!("{h:016x}"))
            == Some(id.config_hash.clone()),
    });
    v
}

/// The emulator's server counters, if the board is an emulator that answers
/// a stats probe within a short wait.
fn emulator_stats(addr: std::net::SocketAddr) -> Option<clio_emu::server::ProbeReply> {
    let any: std::net::SocketAddr = if addr.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = std::net::UdpSocket::bind(any).ok()?;
    clio_emu::server::probe_stats(&socket, addr, std::time::Duration::from_millis(300))
        .ok()
        .flatten()
}

/// Ask the board (and compare with `--manifest`); the caller prints the
/// report and then checks its [`InfoReport::verdict`].
pub fn query(a: &InfoArgs) -> Result<InfoReport> {
    let (info, emulator, card) = match a.target.addr.as_deref() {
        // An Alveo card (or an emulated one, `clio fabric`) through its XDMA nodes.
        Some(x) if x.starts_with("xdma://") => {
            let cfg = crate::board_arg::load_board(&a.target.config)?;
            let t = clio_xdma::connect(x).with_context(|| format!("opening {x}"))?;
            let mut s = Session::open_with(t, a.target.client_config(&cfg)?)
                .with_context(|| format!("opening a session with {x}"))?;
            let info = s
                .info()
                .with_context(|| format!("asking {x} for its identity"))?;
            let card = match x.parse::<clio_xdma::BoardAddr>() {
                Ok(clio_xdma::BoardAddr::Xdma(p)) => clio_xdma::XdmaDevice::open(&p)
                    .and_then(|d| clio_xdma::card_counters(&d))
                    .with_context(|| format!("reading {x}'s counters"))
                    .map(Some)?,
                _ => None,
            };
            (info, None, card)
        }
        _ => {
            let (addr, cfg, _server) = connect_target(&a.target)?;
            let mut s = Session::open(addr, a.target.client_config(&cfg)?)
                .with_context(|| format!("opening a session with {addr}"))?;
            let info = s
                .info()
                .with_context(|| format!("asking {addr} for its identity"))?;
            (info, emulator_stats(addr), None)
        }
    };
    let id = BoardIdentity::from(&info);
    let checks = match &a.manifest {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let m: ImageManifest = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a firmware manifest", p.display()))?;
            compare(&id, &m)
        }
        None => Vec::new(),
    };
    Ok(InfoReport {
        board: id,
        emulator,
        card,
        manifest_checks: checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulator_stats_come_from_an_emulator_only() {
        let cfg = clio_config::BoardConfig::embedded("emulator").unwrap();
        let board = clio_emu::Board::new(&cfg).unwrap();
        let server = clio_emu::spawn(
            board,
            "127.0.0.1:0".parse().unwrap(),
            clio_emu::ServeOptions::for_board(&cfg),
        )
        .unwrap();
        let e = emulator_stats(server.addr()).expect("an emulator answers the probe");
        assert_eq!(e.clients.capacity, u64::from(cfg.network.clients));
        assert_eq!(e.clients.live, 0, "the probe itself is not a client");
        // Something that never answers (a bound socket nobody reads): no line.
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(emulator_stats(silent.local_addr().unwrap()).is_none());
    }

    #[test]
    fn manifest_comparison() {
        let id = BoardIdentity {
            board: "zcu106".into(),
            firmware_version: "0.1.0".into(),
            rtl_version: "1.0.0".into(),
            build_id: "0123456789abcdef".into(),
            config_hash: "00000000deadbeef".into(),
            dram_bytes: 1 << 31,
            mtu: 1450,
            page_bytes: 4 << 20,
            slots_per_bucket: 16,
            tlb_entries: 64,
            epoch: "1f2e3d4c".into(),
            sessions: 1024,
        };
        let mut m = ImageManifest {
            elf: "x".into(),
            size: 1,
            mem_size: 1,
            entry: 0,
            build_id: "0123456789ABCDEF00112233".into(),
            config_hash: "0xdeadbeef".into(),
            board: "zcu106".into(),
            version: "0.1.0".into(),
        };
        assert!(compare(&id, &m).iter().all(|c| c.ok));
        m.build_id = "ff23456789abcdef".into();
        m.config_hash = "beef".into();
        let bad: Vec<_> = compare(&id, &m)
            .into_iter()
            .filter(|c| !c.ok)
            .map(|c| c.field)
            .collect();
        assert_eq!(bad, ["build_id", "config_hash"]);
        // The report says so in text, in JSON and in its verdict.
        let report = InfoReport {
            manifest_checks: compare(&id, &m),
            board: id,
            emulator: None,
            card: None,
        };
        let text = report.to_string();
        assert!(text.starts_with("board            zcu106\n"), "{text}");
        assert!(
            text.contains("DIFF   build_id    board 0123456789abcdef"),
            "{text}"
        );
        assert!(!text.contains("clients"), "no emulator line: {text}");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["board"]["mtu"], 1450);
        assert_eq!(json["manifest_checks"][1]["ok"], false);
        let e = report.verdict().unwrap_err().to_string();
        assert_eq!(
            e,
            "board differs from the manifest in: build_id, config_hash"
        );
    }
}
