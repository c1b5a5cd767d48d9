//! PCIe transport to Alveo cards over the Xilinx XDMA driver's character
//! devices.
//!
//! - [`XdmaDevice`]: the driver's nodes for one card (`<prefix>_user`,
//!   `<prefix>_h2c_N`, `<prefix>_c2h_N`, `<prefix>_control`): 32-bit
//!   register access to the user BAR and DMA by `pwrite`/`pread` at card
//!   addresses.
//! - [`XdmaLink`]: the host end of the packet rings defined in
//!   [`clio_wire::xdma`] (probe, send, receive with a deadline); it
//!   implements the SDK's [`clio::backend::Transport`], so a
//!   `clio::Session` runs over it.
//! - [`dma`]: the XDMA driver's buffer-alignment rule (every DMA goes
//!   through a bounce buffer congruent to the card address) and its
//!   timeout, reported as [`XdmaError::DmaTimeout`] with what to do.
//! - [`connect`]: the SDK's backend chosen by address (`udp://HOST:PORT`,
//!   `xdma:///dev/xdma0`), as [`AnyTransport`].
//! - [`card`]: [`FileCard`], a software card on stand-in files, used by the
//!   tests (no card or driver is needed) and usable as a software card.
//!
//! See `README.md` beside this crate for running against a real card.

mod addr;
pub mod card;
mod device;
pub mod dma;
mod error;
mod link;
mod node;
mod transport;

pub use addr::{connect, AnyTransport, BoardAddr};
pub use card::{CardStats, CardThread, FileCard, Served};
pub use device::{node_path, XdmaDevice};
pub use error::{Result, XdmaError};
pub use link::{card_counters, CardCounters, Geometry, LinkStats, XdmaLink, DEFAULT_SEND_TIMEOUT};
