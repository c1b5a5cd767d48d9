//! The crate's one error type. Every variant that touches a device node
//! names its path, so a missing or misbehaving node is obvious.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong talking to an XDMA card (or its stand-in).
#[derive(Debug, thiserror::Error)]
pub enum XdmaError {
    /// A device node could not be opened.
    #[error("cannot open XDMA node {path}: {source}")]
    Open {
        /// The node.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A read or write on a node failed.
    #[error("{op} on {path} at {offset:#x}: {source}")]
    Io {
        /// The node.
        path: PathBuf,
        /// `"read"` or `"write"`.
        op: &'static str,
        /// Byte offset (BAR offset or card address).
        offset: u64,
        /// What the OS said.
        source: io::Error,
    },
    /// The XDMA driver timed out a DMA transfer (`ETIMEDOUT`): it aborted
    /// the transfer and stopped the engine; the card never completed it.
    #[error("DMA {op} on {path} at card address {offset:#x} timed out in the XDMA driver, which stopped the engine: the card did not complete the transfer. Check `dmesg` for the engine status, then reset the card (reprogram it with `clio flash` and rescan PCIe, or `rmmod xdma` and load the driver again) before retrying; raise the driver's h2c_timeout_ms/c2h_timeout_ms only for a card that is known to be slow")]
    DmaTimeout {
        /// The DMA node.
        path: PathBuf,
        /// `"read"` or `"write"`.
        op: &'static str,
        /// Card address of the transfer.
        offset: u64,
    },
    /// A DMA buffer breaks the driver's alignment rule (a bug in this crate:
    /// every DMA goes through an aligned bounce buffer).
    #[error("DMA {op} on {path} at card address {offset:#x}: host buffer {buf:#x} is not congruent to the card address modulo {align} (the XDMA driver would refuse it with EINVAL)")]
    Misaligned {
        /// The DMA node.
        path: PathBuf,
        /// `"read"` or `"write"`.
        op: &'static str,
        /// Card address of the transfer.
        offset: u64,
        /// Host buffer address.
        buf: usize,
        /// The alignment checked.
        align: usize,
    },
    /// A transfer made no progress (the node returned 0 bytes).
    #[error("{op} on {path} at {offset:#x} stopped after {done} of {want} bytes")]
    ShortTransfer {
        /// The node.
        path: PathBuf,
        /// `"read"` or `"write"`.
        op: &'static str,
        /// Byte offset where the transfer started.
        offset: u64,
        /// Bytes moved before it stopped.
        done: usize,
        /// Bytes asked for.
        want: usize,
    },
    /// The user BAR does not identify a Clio card.
    #[error("{path}: ID register is {found:#010x}, expected {expected:#010x} (\"CLIO\"); wrong bitstream or wrong card?")]
    BadId {
        /// The user node.
        path: PathBuf,
        /// Value read.
        found: u32,
        /// Value a Clio card has.
        expected: u32,
    },
    /// The card speaks another register-map version.
    #[error("{path}: register-map VERSION is {found}, this host supports {expected}")]
    BadVersion {
        /// The user node.
        path: PathBuf,
        /// Value read.
        found: u32,
        /// Version this crate implements.
        expected: u32,
    },
    /// The card's fast path is not out of reset.
    #[error("{path}: card not READY (STATUS = {status:#010x})")]
    NotReady {
        /// The user node.
        path: PathBuf,
        /// Value of the STATUS register.
        status: u32,
    },
    /// A geometry register holds an unusable value.
    #[error("{path}: register {reg} = {value:#x}: {reason}")]
    Geometry {
        /// The user node.
        path: PathBuf,
        /// Register name.
        reg: &'static str,
        /// Value read.
        value: u64,
        /// Why it is unusable.
        reason: &'static str,
    },
    /// A ring index published by the other side is impossible.
    #[error("{path}: {reg} = {value} is {ahead} slots ahead of its consumer, ring holds {count}")]
    RingIndex {
        /// The node holding the register.
        path: PathBuf,
        /// Register name.
        reg: &'static str,
        /// Value read.
        value: u32,
        /// Distance from the consumer index.
        ahead: u32,
        /// Slots per ring.
        count: u32,
    },
    /// A packet does not fit one slot.
    #[error("packet of {len} bytes does not fit a slot (max {max} bytes)")]
    TooLarge {
        /// Packet length.
        len: usize,
        /// Largest packet a slot holds.
        max: usize,
    },
    /// The receive buffer is smaller than the packet in the slot (the slot was consumed).
    #[error("received packet of {len} bytes does not fit the {cap}-byte buffer (dropped)")]
    BufferTooSmall {
        /// Packet length.
        len: usize,
        /// Buffer capacity.
        cap: usize,
    },
    /// A slot image is malformed (the slot was consumed and dropped).
    #[error("{ring} slot {index}: {source}")]
    Slot {
        /// `"h2c"` or `"c2h"`.
        ring: &'static str,
        /// Free-running slot index.
        index: u32,
        /// The slot field at fault.
        source: clio_wire::Error,
    },
    /// The H2C ring stayed full for the whole send timeout.
    #[error("H2C ring full: card consumed nothing for {waited:?} ({path})")]
    Full {
        /// The user node.
        path: PathBuf,
        /// How long the send waited.
        waited: Duration,
    },
}

impl XdmaError {
    /// Whether the error concerns one slot only (it was consumed; the link
    /// is still usable).
    pub fn is_slot_local(&self) -> bool {
        matches!(
            self,
            XdmaError::Slot { .. } | XdmaError::BufferTooSmall { .. }
        )
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, XdmaError>;
