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
    /// Join an existing address space instead of opening a new one: a share
    /// token `clio:PID:SESSION:EPOCH:KEY` from a session of that address
    /// space (`Session::share`). It is a credential: whoever holds it has
    /// full access.
    #[arg(long, value_name = "TOKEN")]
    pub join: Option<String>,
}

impl TargetArgs {
    /// Client settings for `cfg`, joining `--join`'s address space if given.
    pub fn client_config(&self, cfg: &BoardConfig) -> Result<clio::ClientConfig> {
        let join = match &self.join {
            Some(t) => Some(
                t.parse::<clio::ShareToken>()
                    .map_err(|e| anyhow::anyhow!("--join: {e}"))?,
            ),
            None => None,
        };
        Ok(clio::ClientConfig {
            join,
            ..clio::ClientConfig::from_board(cfg)
        })
    }
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
