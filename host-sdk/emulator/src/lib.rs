//! The emulated Clio memory board.
//!
//! The board is the fast-path reference model plus the unchanged slow-path
//! library, talking over real ring buffers in emulated board DRAM, behind a
//! UDP endpoint ([`server`]) like the hardware's Ethernet/IPv4/UDP port.
//! [`faults`] injects loss, duplication, corruption, reordering and delay
//! in either direction for reliability tests. With feature `sdk`,
//! `sdk::Emu` puts a board behind the SDK's in-process backend.

pub mod board;
pub mod clients;
pub mod faults;
pub mod native;
pub mod offload;
pub mod qemu;
pub mod rtl;
#[cfg(feature = "sdk")]
pub mod sdk;
pub mod server;
pub mod slow;

pub use board::{boot_seed, Board, BoardError, BoardStats, QemuBoard};
pub use clients::{ClientCounters, ClientTable};
pub use faults::{FaultConfig, FaultyLink};
pub use offload::{MemError, Offload, OffloadCounters, OffloadError, OffloadMem};
pub use server::{spawn, ClientId, Engine, ServeOptions, ServerHandle, Traced};
pub use slow::InProcSlowPath;
