//! `clio sim`: serve an emulated board over UDP.

use anyhow::{Context, Result};
use clap::Args;
use clio_emu::{Board, FaultConfig, ServeOptions};

use crate::board_arg::load_board;

/// Serve an emulated memory board until interrupted.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Board config: a TOML path or an embedded name.
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// Address to listen on (default: the config's network.ipv4 and udp_port).
    #[arg(long)]
    pub listen: Option<String>,
    /// Faults on packets arriving at the board, e.g. `drop=0.05,reorder=0.1,window_us=200,seed=1`.
    #[arg(long, default_value = "")]
    pub faults_in: String,
    /// Faults on packets the board sends (same syntax).
    #[arg(long, default_value = "")]
    pub faults_out: String,
}

/// Run `clio sim`.
pub fn run(a: &SimArgs) -> Result<()> {
    let cfg = load_board(&a.board)?;
    let listen = match &a.listen {
        Some(l) => l.clone(),
        None => format!(
            "{}:{}",
            std::net::Ipv4Addr::from(cfg.network.ipv4),
            cfg.network.udp_port
        ),
    };
    let addr: std::net::SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen '{listen}' is not an address:port"))?;
    let opts = ServeOptions {
        inbound: FaultConfig::parse(&a.faults_in)
            .map_err(anyhow::Error::msg)
            .context("--faults-in")?,
        outbound: FaultConfig::parse(&a.faults_out)
            .map_err(anyhow::Error::msg)
            .context("--faults-out")?,
    };
    let board = Board::new(&cfg).map_err(anyhow::Error::msg)?;
    let socket = std::net::UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
    eprintln!(
        "clio sim: board '{}' ({} MiB DRAM, {} KiB pages, {} TLB entries) serving on udp://{}",
        cfg.board.name,
        cfg.dram.size >> 20,
        cfg.pages.default_size >> 10,
        cfg.tlb.entries,
        socket.local_addr()?
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    clio_emu::server::serve(board, socket, opts, &stop)?;
    Ok(())
}
