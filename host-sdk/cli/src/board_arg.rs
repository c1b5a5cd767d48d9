//! `--board`: a board-config file path or the name of an embedded config.

use anyhow::{Context, Result};
use clio_config::BoardConfig;

/// Load `arg` as a path if it names a file (or ends in `.toml`), else as
/// the name of a config embedded in the binary (`emulator`, `zcu106`, ...).
pub fn load_board(arg: &str) -> Result<BoardConfig> {
    let path = std::path::Path::new(arg);
    if path.exists() || arg.ends_with(".toml") {
        return clio_config::load(path).with_context(|| format!("loading board config {arg}"));
    }
    BoardConfig::embedded(arg).with_context(|| {
        let names: Vec<_> = BoardConfig::embedded_names().collect();
        format!(
            "board '{arg}' is neither a file nor an embedded config ({})",
            names.join(", ")
        )
    })
}
