//! Host-side tools for the Clio board firmware's own formats.
//!
//! The firmware never formats log text: it sends defmt frames (format-string
//! indices plus raw arguments) over its UART, and the strings stay in the ELF.
//! This crate turns such a byte stream back into log lines with the ELF
//! ([`Firmware`], [`LogStream`]), and reads a boot image's identity — the
//! linker's build id and the `.clio_manifest` section the build writes from
//! the board config — into an [`ImageManifest`] that `clio info` compares
//! with what a board reports. [`BuildIdScanner`] finds the build id in a
//! stream's banner frame without any ELF, so a decoder can refuse an ELF
//! that did not write the stream.

mod banner;
mod decode;
mod manifest;

pub use banner::{rzcobs_decode, BuildIdScanner};
pub use decode::{Firmware, Level, Location, LogLine, LogStream};
pub use manifest::ImageManifest;

/// Errors reading a firmware ELF or its contents.
#[derive(Debug, thiserror::Error)]
pub enum FwlogError {
    /// The bytes are not an ELF file the `object` crate can read.
    #[error("{file}: not a readable ELF file: {reason}")]
    NotElf {
        /// Name of the file (as given by the caller).
        file: String,
        /// What the parser reported.
        reason: String,
    },
    /// The ELF has no `.defmt` section: it was not built with defmt logging.
    #[error("{file}: no `.defmt` section; the image was not built with defmt logging")]
    NoDefmtTable {
        /// Name of the file.
        file: String,
    },
    /// The `.defmt` table could not be read (e.g. a defmt wire-version mismatch).
    #[error("{file}: defmt table unreadable: {reason}")]
    BadDefmtTable {
        /// Name of the file.
        file: String,
        /// What the decoder reported.
        reason: String,
    },
    /// A section the manifest needs is missing.
    #[error("{file}: missing section `{section}`")]
    MissingSection {
        /// Name of the file.
        file: String,
        /// Section name.
        section: &'static str,
    },
    /// A section is present but malformed.
    #[error("{file}: section `{section}`: {reason}")]
    BadSection {
        /// Name of the file.
        file: String,
        /// Section name.
        section: &'static str,
        /// What is wrong.
        reason: String,
    },
}
