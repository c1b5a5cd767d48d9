//! One definition of every wire and ring format in the stack.
//!
//! In the smoltcp style each format has a zero-copy view (`Packet<T: AsRef<[u8]>>`
//! and friends) with checked field accessors, plus a plain `Repr` with `parse`
//! and `emit`. Malformed input becomes an [`Error`] naming the field at fault;
//! nothing here panics on input bytes and nothing allocates.
//!
//! - [`clio`]: the per-packet Clio header, opcodes, status codes.
//! - [`payload`]: fixed payloads of control, atomic, extend-path and info packets.
//! - [`ring`]: the FPGA <-> ARM ring header and descriptors.
//! - [`pte`]: PTE and bucket layout of the hash page table, and its hash.
//! - [`edm`]: EDM's 66-bit PHY blocks and memory messages.
//! - [`edm_clio`]: Clio packets carried over EDM (the U200 card's translator).
//! - [`xdma`]: the user-BAR register map and packet slots of the PCIe (XDMA) path.
//! - [`crc`]: CRC32C, the integrity check of packets and descriptors.
//! - `display`: `Display` for [`Header`], [`Descriptor`] and [`Pte`] (one-line dumps).
//! - `svgen` (feature `std`): the generated SystemVerilog packages.
//! - `reference` (feature `std`): the generated wire reference `REFERENCE.md`.
#![cfg_attr(not(test), no_std)]
// Unsafe code is allowed in exactly one place: the SSE4.2 CRC32C path.
#![deny(unsafe_code)]

#[cfg(feature = "std")]
extern crate std;

pub mod clio;
pub mod crc;
mod display;
pub mod edm;
pub mod edm_clio;
mod enums;
mod error;
pub mod fpregs;
pub mod payload;
pub mod pte;
#[cfg(feature = "std")]
pub mod reference;
pub mod ring;
#[cfg(feature = "std")]
pub mod svgen;
pub mod xdma;

pub use clio::{Header, Opcode, Packet, Status};

/// The bytes of a multi-byte field (smoltcp's convention): offset and width
/// in one value, so `&buf[field::VA]` is the whole field and nobody writes
/// `field::VA + 7`. One-byte fields stay plain `usize` offsets.
pub type Field = core::ops::Range<usize>;
pub use crc::crc32c;
pub use error::{Error, ErrorKind, Result};
pub use pte::{bucket_index, PageClasses, Pte, TableGeometry};
pub use ring::Descriptor;
