//! `--board`: a board-config file path or the name of an embedded config.

use anyhow::{Context, Result};
use clio_config::BoardConfig;

/// Load `arg` as a path if it names a file (or ends in `.toml`), else as
/// the name of a config embedded in the binary (`emulator`, `zcu106`, ...).
pub fn load_board(arg: &str) -> Result<BoardConfig> {
    let path = std::path::Path::new(arg);
    if path.exists() || arg.ends_with(".toml") {
        // The config error names the file and key already.
        return clio_config::load(path).map_err(anyhow::Error::new);
    }
    BoardConfig::embedded(arg).map_err(|_| {
        let names: Vec<_> = BoardConfig::embedded_names().collect();
        anyhow::anyhow!(
            "board '{arg}' is neither a file nor an embedded config ({})",
            names.join(", ")
        )
    })
}

/// Which board a client command talks to.
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// Board address `host:port`. Without it, an emulated board is started in
    /// this process (from `--config`) so the command can be tried with nothing set up.
    #[arg(long)]
    pub addr: Option<String>,
    /// Board config (a TOML path or an embedded name) the client takes its
    /// MTU, page size and timeouts from.
    #[arg(long, default_value = "emulator")]
    pub config: String,
    /// Process id (protection domain) to act as.
    #[arg(long, default_value_t = 1)]
    pub pid: u32,
}

/// Resolve a target: its address, its config, and the embedded server
/// (kept alive by the caller) when no address was given.
pub fn connect_target(
    t: &TargetArgs,
) -> Result<(
    std::net::SocketAddr,
    BoardConfig,
    Option<clio_emu::ServerHandle>,
)> {
    let cfg = load_board(&t.config)?;
    match &t.addr {
        Some(a) => {
            use std::net::ToSocketAddrs;
            let addr = a
                .to_socket_addrs()
                .with_context(|| format!("--addr '{a}' is not a host:port"))?
                .next()
                .with_context(|| format!("--addr '{a}' resolves to no address"))?;
            Ok((addr, cfg, None))
        }
        None => {
            let board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
            let server = clio_emu::spawn(
                board,
                "127.0.0.1:0".parse()?,
                clio_emu::ServeOptions::for_board(&cfg),
            )?;
            Ok((server.addr(), cfg, Some(server)))
        }
    }
}
