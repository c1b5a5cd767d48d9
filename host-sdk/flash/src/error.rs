//! The crate's one error type: each variant names the manifest key, file
//! or tool at fault.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Everything that can stop a flash.
#[derive(Debug, thiserror::Error)]
pub enum FlashError {
    /// A manifest could not be read.
    #[error("cannot read manifest {file}: {source}")]
    ManifestRead {
        /// The manifest.
        file: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A manifest is not a JSON object.
    #[error("manifest {file} is not valid JSON: {reason}")]
    ManifestParse {
        /// The manifest.
        file: PathBuf,
        /// Parser message.
        reason: String,
    },
    /// A manifest key is missing, has the wrong type, or an unusable value.
    #[error("manifest {file}: key `{key}`: {reason}")]
    ManifestKey {
        /// The manifest.
        file: PathBuf,
        /// The key at fault.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A file a manifest names does not exist.
    #[error("manifest {file}: key `{key}` names {path}, which does not exist")]
    MissingFile {
        /// The manifest.
        file: PathBuf,
        /// The key naming the file.
        key: &'static str,
        /// The resolved path.
        path: PathBuf,
    },
    /// A file does not match the digest or id its manifest records.
    #[error("manifest {file}: key `{key}` says {expected} but {path} has {actual}")]
    Mismatch {
        /// The manifest.
        file: PathBuf,
        /// The key holding the expected value.
        key: &'static str,
        /// The file checked.
        path: PathBuf,
        /// Value recorded in the manifest.
        expected: String,
        /// Value found in the file.
        actual: String,
    },
    /// A file the request names directly (not through a manifest) is missing.
    #[error("{what} {path} does not exist")]
    MissingInput {
        /// What the file is for.
        what: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// The request lacks something the route needs, or combines things that do not fit.
    #[error("invalid flash request: {0}")]
    Request(String),
    /// A vendor tool is not installed where we look.
    #[error(
        "{tool} not found (searched {searched}); install it or source the Xilinx settings64.sh"
    )]
    ToolNotFound {
        /// Tool name.
        tool: &'static str,
        /// Where we looked.
        searched: String,
    },
    /// A host step (PCIe remove/rescan, SD copy) failed.
    #[error("host step `{step}` failed on {path}: {source}")]
    HostStep {
        /// The step, as a shell command.
        step: String,
        /// The file at fault.
        path: std::path::PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A tool script could not be written.
    #[error("cannot write tool script {path}: {source}")]
    Script {
        /// Script path.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A tool could not be started.
    #[error("cannot start {tool} ({path}): {source}")]
    Spawn {
        /// Tool name.
        tool: &'static str,
        /// Its path.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A tool failed; its last output lines say why.
    #[error("{tool} failed ({status}); last output:\n{}", last_lines.join("\n"))]
    ToolFailed {
        /// Tool name.
        tool: &'static str,
        /// Exit status, or what went wrong when it exited 0.
        status: String,
        /// The tool's last output lines.
        last_lines: Vec<String>,
    },
    /// A tool ran past its time limit and was killed.
    #[error("{tool} still running after {after:?}, killed; last output:\n{}", last_lines.join("\n"))]
    ToolTimeout {
        /// Tool name.
        tool: &'static str,
        /// The limit.
        after: Duration,
        /// The tool's last output lines.
        last_lines: Vec<String>,
    },
}
