//! The shipped board files, built into the crate so nothing needs setting up.

use std::io;
use std::path::{Path, PathBuf};

use crate::load::{load_from, ConfigError, Source};
use crate::model::BoardConfig;

/// The shipped files: (board name, file name, contents).
pub const FILES: [(&str, &str, &str); 3] = [
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

    /// Loads a shipped board (`"zcu106"`, `"alveo-u200"` or `"emulator"`).
    pub fn embedded(name: &str) -> Result<BoardConfig, ConfigError> {
        let file = FILES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or_else(|| format!("{name}.toml"), |(_, f, _)| (*f).to_owned());
        load_from(&EmbeddedSource, &Path::new(DIR).join(file))
    }
}
