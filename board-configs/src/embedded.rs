//! The shipped board files, built into the crate so nothing needs setting up.

use std::io;
use std::path::{Path, PathBuf};

use crate::load::{load_from, ConfigError, Source};
use crate::model::BoardConfig;

/// The shipped files: (board name, file name, contents).
pub const FILES: [(&str, &str, &str); 4] = [
    ("zcu106", "zcu106.toml", include_str!("../zcu106.toml")),
    (
        "alveo-u200",
        "alveo-u200.toml",
        include_str!("../alveo-u200.toml"),
    ),
    (
        "emulator",
        "emulator.toml",
        include_str!("../emulator.toml"),
    ),
    (
        "emulator-jumbo",
        "emulator-jumbo.toml",
        include_str!("../emulator-jumbo.toml"),
    ),
];

/// Directory the shipped files are shown under in error messages.
pub const DIR: &str = "board-configs";

/// Serves the shipped files (and only them) as if they were in [`DIR`].
#[derive(Clone, Copy, Debug, Default)]
pub struct EmbeddedSource;

impl Source for EmbeddedSource {
    fn read(&self, path: &Path) -> io::Result<String> {
        let in_dir = path.parent() == Some(Path::new(DIR));
        FILES
            .iter()
            .find(|(_, file, _)| in_dir && path.file_name() == Some(file.as_ref()))
            .map(|(_, _, text)| (*text).to_owned())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not a shipped board file"))
    }

    fn identity(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
}

impl BoardConfig {
    /// Names accepted by [`BoardConfig::embedded`].
    pub fn embedded_names() -> impl Iterator<Item = &'static str> {
        FILES.iter().map(|(name, _, _)| *name)
    }

    /// Loads a shipped board (`"zcu106"`, `"alveo-u200"`, `"emulator"` or
    /// `"emulator-jumbo"`).
    pub fn embedded(name: &str) -> Result<BoardConfig, ConfigError> {
        let file = FILES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or_else(|| format!("{name}.toml"), |(_, f, _)| (*f).to_owned());
        load_from(&EmbeddedSource, &Path::new(DIR).join(file))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::FILES;
    use crate::codegen::{shipped_boards_source, to_rust_source};

    /// Compares `path` (relative to the crate) with `text`; rewrites it under `CLIO_BLESS=1`.
    fn check_generated(path: &str, text: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        if std::env::var_os("CLIO_BLESS").is_some() {
            std::fs::write(&path, text).unwrap();
            return;
        }
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            old == text,
            "{} is stale: run `CLIO_BLESS=1 cargo test -p clio-config`",
            path.display()
        );
    }

    /// The checked-in `const`s (`boards`, and the firmware-build-script form
    /// the round-trip test compiles) are what the TOML files on disk generate.
    #[test]
    fn generated_sources_match_the_board_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let boards: Vec<_> = FILES
            .iter()
            .map(|(name, file, _)| {
                let c = crate::load(dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
                (*name, c)
            })
            .collect();
        check_generated("src/boards_gen.rs", &shipped_boards_source(&boards));
        check_generated(
            "tests/generated/zcu106_board.rs",
            &to_rust_source(&boards.iter().find(|(n, _)| *n == "zcu106").unwrap().1),
        );
    }
}
