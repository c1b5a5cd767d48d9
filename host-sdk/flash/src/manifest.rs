//! Build manifests and their checks, done before any tool runs.
//!
//! - The bitstream manifest is written by `bitstream/build.tcl` next to the
//!   bitstream: `board`, `part`, `top`, `bitstream` (file, relative to the
//!   manifest), `sha256`, `source_hash`, `tool_version`, report files.
//! - The firmware manifest is the one `firmware-arm/image/package.sh`
//!   writes (fwlog's [`ImageManifest`]: `elf`, `build_id`, `config_hash`,
//!   `board`, …). The ELF is re-read and its build id and config hash must
//!   equal the manifest's.
//!
//! Relative paths in a manifest are relative to the manifest's directory.

use std::io::Read;
use std::path::{Path, PathBuf};

use clio_fwlog::ImageManifest;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::{Board, FlashError};

/// A checked bitstream manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitstreamManifest {
    /// The manifest file.
    pub file: PathBuf,
    /// Board it was built for.
    pub board: Board,
    /// FPGA part.
    pub part: String,
    /// Top module.
    pub top: String,
    /// The bitstream, resolved against the manifest's directory.
    pub bitstream: PathBuf,
    /// Its SHA-256, lowercase hex (verified).
    pub sha256: String,
    /// Hash of the sources it was built from.
    pub source_hash: String,
    /// Vivado version that built it.
    pub tool_version: String,
}

/// A checked firmware manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareManifest {
    /// The manifest file.
    pub file: PathBuf,
    /// The ELF, resolved against the manifest's directory.
    pub elf: PathBuf,
    /// The manifest as written by `package.sh` (build id and config hash verified).
    pub image: ImageManifest,
}

fn read_object(file: &Path) -> Result<Map<String, Value>, FlashError> {
    let text = std::fs::read_to_string(file).map_err(|source| FlashError::ManifestRead {
        file: file.to_path_buf(),
        source,
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(FlashError::ManifestParse {
            file: file.to_path_buf(),
            reason: "top level is not an object".into(),
        }),
        Err(e) => Err(FlashError::ManifestParse {
            file: file.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

fn key_str<'a>(
    file: &Path,
    m: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a str, FlashError> {
    let bad = |reason: &str| FlashError::ManifestKey {
        file: file.to_path_buf(),
        key,
        reason: reason.to_string(),
    };
    match m.get(key) {
        None => Err(bad("missing")),
        Some(Value::String(s)) if s.is_empty() => Err(bad("empty")),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(bad(&format!("expected a string, found {v}"))),
    }
}

fn resolve(file: &Path, key: &'static str, name: &str) -> Result<PathBuf, FlashError> {
    let p = Path::new(name);
    let path = if p.is_absolute() {
        p.to_path_buf()
    } else {
        file.parent().unwrap_or(Path::new(".")).join(p)
    };
    if !path.is_file() {
        return Err(FlashError::MissingFile {
            file: file.to_path_buf(),
            key,
            path,
        });
    }
    // Absolute, because the tools run in a temporary directory.
    std::fs::canonicalize(&path).map_err(|source| FlashError::ManifestRead { file: path, source })
}

fn check_board(file: &Path, m: &Map<String, Value>, board: Board) -> Result<(), FlashError> {
    let found = key_str(file, m, "board")?;
    if found != board.name() {
        return Err(FlashError::ManifestKey {
            file: file.to_path_buf(),
            key: "board",
            reason: format!(
                "built for `{found}`, not for the `{}` being flashed",
                board.name()
            ),
        });
    }
    Ok(())
}

/// SHA-256 of a file, lowercase hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl BitstreamManifest {
    /// Load `file` and check it: board and part match `board`, the
    /// bitstream exists and its SHA-256 is the recorded one.
    pub fn load(file: &Path, board: Board) -> Result<BitstreamManifest, FlashError> {
        let m = read_object(file)?;
        check_board(file, &m, board)?;
        let part = key_str(file, &m, "part")?;
        if part != board.part() {
            return Err(FlashError::ManifestKey {
                file: file.to_path_buf(),
                key: "part",
                reason: format!("`{part}` is not the {board}'s part `{}`", board.part()),
            });
        }
        let sha = key_str(file, &m, "sha256")?.to_ascii_lowercase();
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(FlashError::ManifestKey {
                file: file.to_path_buf(),
                key: "sha256",
                reason: format!("`{sha}` is not 64 hex digits"),
            });
        }
        let bitstream = resolve(file, "bitstream", key_str(file, &m, "bitstream")?)?;
        let actual = sha256_file(&bitstream).map_err(|source| FlashError::ManifestRead {
            file: bitstream.clone(),
            source,
        })?;
        if actual != sha {
            return Err(FlashError::Mismatch {
                file: file.to_path_buf(),
                key: "sha256",
                path: bitstream,
                expected: sha,
                actual,
            });
        }
        Ok(BitstreamManifest {
            file: file.to_path_buf(),
            board,
            part: part.to_string(),
            top: key_str(file, &m, "top")?.to_string(),
            bitstream,
            sha256: sha,
            source_hash: key_str(file, &m, "source_hash")?.to_string(),
            tool_version: key_str(file, &m, "tool_version")?.to_string(),
        })
    }
}

impl FirmwareManifest {
    /// Load `file` (a `package.sh` manifest) and check it: board matches,
    /// the ELF exists, and the ELF's build id and config hash are the
    /// recorded ones.
    pub fn load(file: &Path, board: Board) -> Result<FirmwareManifest, FlashError> {
        let m = read_object(file)?;
        check_board(file, &m, board)?;
        for key in ["build_id", "config_hash", "version"] {
            key_str(file, &m, key)?;
        }
        let elf = resolve(file, "elf", key_str(file, &m, "elf")?)?;
        let image: ImageManifest =
            serde_json::from_value(Value::Object(m)).map_err(|e| FlashError::ManifestParse {
                file: file.to_path_buf(),
                reason: e.to_string(),
            })?;
        let bytes = std::fs::read(&elf).map_err(|source| FlashError::ManifestRead {
            file: elf.clone(),
            source,
        })?;
        let found = ImageManifest::from_elf(&elf.display().to_string(), &bytes).map_err(|e| {
            FlashError::ManifestKey {
                file: file.to_path_buf(),
                key: "elf",
                reason: e.to_string(),
            }
        })?;
        for (key, expected, actual) in [
            ("build_id", &image.build_id, &found.build_id),
            ("config_hash", &image.config_hash, &found.config_hash),
            ("board", &image.board, &found.board),
        ] {
            if expected != actual {
                return Err(FlashError::Mismatch {
                    file: file.to_path_buf(),
                    key,
                    path: elf,
                    expected: expected.clone(),
                    actual: actual.clone(),
                });
            }
        }
        Ok(FirmwareManifest {
            file: file.to_path_buf(),
            elf,
            image,
        })
    }
}
