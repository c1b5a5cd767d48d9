//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use clio_config::{load_from, BoardConfig, ConfigError, Source, EMBEDDED_FILES};

/// In-memory board files under `board-configs/`, starting from the shipped ones.
#[derive(Default)]
pub struct Files(pub HashMap<PathBuf, String>);

impl Files {
    /// The shipped files.
    pub fn shipped() -> Self {
        let mut f = Files::default();
        for (_, file, text) in EMBEDDED_FILES {
            f = f.with(file, text);
        }
        f
    }

    /// Adds or replaces `board-configs/<name>`.
    pub fn with(mut self, name: &str, text: &str) -> Self {
        self.0
            .insert(Path::new("board-configs").join(name), text.to_owned());
        self
    }

    /// Loads `board-configs/<name>`.
    pub fn load(&self, name: &str) -> Result<BoardConfig, ConfigError> {
        load_from(self, &Path::new("board-configs").join(name))
    }

    /// Loads `board-configs/<name>` and returns the error message (fails if it loads).
    pub fn error(&self, name: &str) -> String {
        match self.load(name) {
            Ok(c) => panic!("{name} unexpectedly loaded: {c:?}"),
            Err(e) => e.to_string(),
        }
    }
}

impl Source for Files {
    fn read(&self, path: &Path) -> io::Result<String> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "No such file or directory"))
    }

    fn identity(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
}

/// A ZCU106 child file overriding the given TOML text.
pub fn child(overrides: &str) -> String {
    format!("inherit = \"zcu106.toml\"\n{overrides}")
}

/// The shipped zcu106 text with `from` replaced by `to` (which must occur).
pub fn zcu106_with(from: &str, to: &str) -> String {
    let text = clio_config::EMBEDDED_FILES[0].2;
    assert!(text.contains(from), "zcu106.toml has no {from:?}");
    text.replacen(from, to, 1)
}
