//! Typed board configurations for Clio memory boards and EDM cards.
//!
//! One TOML file per board (`zcu106.toml`, `alveo-u200.toml`, `emulator.toml`
//! in `board-configs/`) fixes DRAM layout, page sizes, page-table geometry,
//! TLB, rings, clock, network identity, dedup buffer and timeouts. A file may
//! `inherit` another and override some keys.
//!
//! - The types ([`BoardConfig`] and its parts) are plain `Copy` structs usable
//!   from `no_std` firmware, and every derived value (bucket count, page-table
//!   bytes, ...) is a method of [`BoardConfig`], computed in one place.
//! - The shipped boards are also `const`s in [`boards`], generated from the TOML
//!   files (checked in, drift-tested), so a firmware can use them with no
//!   parsing and no build script of its own.
//! - Every dotted key is a constant in [`keys`], used by the loader and the validator.
//! - With the `std` feature (default; ignored on bare-metal targets): [`load`] a file with inheritance and
//!   validation (every error names the file, the dotted key and the allowed
//!   range), [`BoardConfig::embedded`] for the shipped files, [`to_rust_source`]
//!   for firmware build scripts, and [`BoardConfig::to_toml`].
//! - [`BoardConfig::config_hash`] identifies a resolved config (for boot manifests).
//!
//! ```
//! # #[cfg(feature = "std")] {
//! let emu = clio_config::BoardConfig::embedded("emulator").unwrap();
//! assert_eq!(emu.pages.default_size, 4 << 20);
//! assert_eq!(emu.bucket_count(), clio_config::boards::EMULATOR.bucket_count());
//! # }
//! ```
#![cfg_attr(not(clio_config_std), no_std)]
#![forbid(unsafe_code)]

mod canonical;
pub mod keys;
mod model;
mod validate;

#[cfg(clio_config_std)]
mod codegen;
#[cfg(clio_config_std)]
mod embedded;
#[cfg(clio_config_std)]
mod load;

pub use canonical::{write_canonical, Fnv1a64};
pub use model::*;
pub use validate::{check, limits, name_byte_ok, Limit, Reason, Shown, Violation, HPM0_FPD_WINDOW};

#[cfg(clio_config_std)]
pub use codegen::{to_rust_const, to_rust_expr, to_rust_source};
#[cfg(clio_config_std)]
pub use embedded::{EmbeddedSource, DIR as EMBEDDED_DIR, FILES as EMBEDDED_FILES};
#[cfg(clio_config_std)]
pub use load::{
    load, load_from, load_str, parse_size, ConfigError, FsSource, Source, MAX_INHERIT_DEPTH,
};

/// The shipped boards as `const`s, generated from the TOML files by this
/// crate's code generator into `src/boards_gen.rs`; a test
/// fails when a TOML file changes without it (`CLIO_BLESS=1 cargo test -p
/// clio-config` regenerates it).
pub mod boards {
    include!("boards_gen.rs");

    /// The shipped board called `name` (`"zcu106"`, `"alveo-u200"`, `"emulator"`).
    pub fn by_name(name: &str) -> Option<crate::BoardConfig> {
        ALL.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }
}

#[cfg(clio_config_std)]
impl BoardConfig {
    /// The canonical TOML form: every key, no inheritance; loads back to `self`.
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = write_canonical(self, &mut s);
        s
    }
}
