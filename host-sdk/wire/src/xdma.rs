//! The host <-> card packet path over PCIe (Alveo U200 with the Xilinx XDMA
//! IP): the register map of the card's user BAR and the layout of the two
//! packet rings in card memory.
//!
//! The host moves whole Clio packets (the same bytes as on Ethernet) with
//! DMA: requests are written into H2C slots in card DDR through an
//! `_h2c_N` channel and published by writing `H2C_HEAD` in the user BAR;
//! the card answers into C2H slots, publishes `C2H_HEAD`, and the host reads
//! the slots through a `_c2h_N` channel and frees them with `C2H_TAIL`.
//! Indices are free-running `u32`s as in the ARM rings. Registers and slot
//! headers are little-endian.
//!
//! ```text
//! user BAR  +0x00 ID ("CLIO")   +0x04 VERSION      +0x08 H2C_HEAD (host)  +0x0c H2C_TAIL (card)
//!           +0x10 C2H_HEAD (card) +0x14 C2H_TAIL (host) +0x18 SLOT_BYTES  +0x1c SLOT_COUNT
//!           +0x20 H2C_BASE (u64)  +0x28 C2H_BASE (u64) +0x30 STATUS       +0x34 ERRORS
//!           +0x38 XLATE_REFUSED   +0x3c XLATE_TIMEOUTS  +0x40 XLATE_BAD
//! slot      +0 len u16 | rsvd u16 | packet bytes (len <= SLOT_BYTES - 4)
//! ```

use crate::error::bytes::{le16, set_le16};
use crate::{Error, ErrorKind, Result};

/// Value of the `ID` register: "CLIO" little-endian.
pub const ID: u32 = 0x4F49_4C43;
/// Register-map version (2: the translator's counters, `XLATE_*`).
pub const VERSION: u32 = 2;

/// Byte offsets of the user-BAR registers.
pub mod reg {
    /// Identity, read-only.
    pub const ID: u64 = 0x00;
    /// Register-map version, read-only.
    pub const VERSION: u64 = 0x04;
    /// Host -> card producer index (written by the host).
    pub const H2C_HEAD: u64 = 0x08;
    /// Host -> card consumer index (written by the card).
    pub const H2C_TAIL: u64 = 0x0c;
    /// Card -> host producer index (written by the card).
    pub const C2H_HEAD: u64 = 0x10;
    /// Card -> host consumer index (written by the host).
    pub const C2H_TAIL: u64 = 0x14;
    /// Bytes per slot, read-only.
    pub const SLOT_BYTES: u64 = 0x18;
    /// Slots per ring (power of two), read-only.
    pub const SLOT_COUNT: u64 = 0x1c;
    /// Card address of H2C slot 0, u64, read-only.
    pub const H2C_BASE: u64 = 0x20;
    /// Card address of C2H slot 0, u64, read-only.
    pub const C2H_BASE: u64 = 0x28;
    /// Status bits ([`super::status`]).
    pub const STATUS: u64 = 0x30;
    /// Count of malformed slots the card dropped.
    pub const ERRORS: u64 = 0x34;
    /// Packets the card's Clio-to-EDM translator refused and carried nothing
    /// for (too short, too long for a record, no Clio request opcode, a READ
    /// whose answer chain would not fit one RREQ), read-only, wrapping.
    pub const XLATE_REFUSED: u64 = 0x38;
    /// Translator slots freed by their timeout (no answer came: a dead EDM
    /// link or memory node), read-only, wrapping.
    pub const XLATE_TIMEOUTS: u64 = 0x3c;
    /// Answers that did not parse, stray answer writes and NULL responses
    /// the translator dropped, read-only, wrapping.
    pub const XLATE_BAD: u64 = 0x40;
    /// Bytes of the register block.
    pub const BLOCK_LEN: u64 = 0x44;
}

/// One user-BAR register, for generated references (`REFERENCE.md`, the SV
/// package): its name, offset, width, who writes it and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegDoc {
    /// Name (the `reg` constant's).
    pub name: &'static str,
    /// Byte offset in the user BAR.
    pub offset: u64,
    /// Width in bytes (4, or 8 for the two base addresses, low word first).
    pub bytes: u8,
    /// Written by the host (else read-only to it).
    pub host_writes: bool,
    /// What it holds.
    pub doc: &'static str,
}

/// Every register of the user BAR, in offset order.
pub const REGISTERS: [RegDoc; 15] = {
    const fn r(
        name: &'static str,
        offset: u64,
        bytes: u8,
        host_writes: bool,
        doc: &'static str,
    ) -> RegDoc {
        RegDoc {
            name,
            offset,
            bytes,
            host_writes,
            doc,
        }
    }
    [
        r(
            "ID",
            reg::ID,
            4,
            false,
            "`0x4f494c43` (\"CLIO\" little-endian)",
        ),
        r(
            "VERSION",
            reg::VERSION,
            4,
            false,
            "register-map version; a host refuses a card of another version",
        ),
        r(
            "H2C_HEAD",
            reg::H2C_HEAD,
            4,
            true,
            "host → card producer index (free-running)",
        ),
        r(
            "H2C_TAIL",
            reg::H2C_TAIL,
            4,
            false,
            "host → card consumer index: slots below it are free again",
        ),
        r(
            "C2H_HEAD",
            reg::C2H_HEAD,
            4,
            false,
            "card → host producer index",
        ),
        r(
            "C2H_TAIL",
            reg::C2H_TAIL,
            4,
            true,
            "card → host consumer index",
        ),
        r(
            "SLOT_BYTES",
            reg::SLOT_BYTES,
            4,
            false,
            "bytes per slot (4-byte slot header included)",
        ),
        r(
            "SLOT_COUNT",
            reg::SLOT_COUNT,
            4,
            false,
            "slots per ring, a power of two",
        ),
        r(
            "H2C_BASE",
            reg::H2C_BASE,
            8,
            false,
            "card address of H2C slot 0",
        ),
        r(
            "C2H_BASE",
            reg::C2H_BASE,
            8,
            false,
            "card address of C2H slot 0",
        ),
        r(
            "STATUS",
            reg::STATUS,
            4,
            false,
            "bit 0 READY (the card serves), bit 1 LINK_UP (its EDM link is up)",
        ),
        r(
            "ERRORS",
            reg::ERRORS,
            4,
            false,
            "malformed H2C slots the card dropped (wrapping)",
        ),
        r(
            "XLATE_REFUSED",
            reg::XLATE_REFUSED,
            4,
            false,
            "packets the translator refused, carrying nothing (wrapping)",
        ),
        r(
            "XLATE_TIMEOUTS",
            reg::XLATE_TIMEOUTS,
            4,
            false,
            "translator slots freed by their timeout: no answer came (wrapping)",
        ),
        r(
            "XLATE_BAD",
            reg::XLATE_BAD,
            4,
            false,
            "answers that did not parse, stray answer writes, NULL responses (wrapping)",
        ),
    ]
};

/// Bits of the `STATUS` register.
pub mod status {
    /// The fast path is out of reset and serving.
    pub const READY: u32 = 0x1;
    /// The link to the EDM fabric is up.
    pub const LINK_UP: u32 = 0x2;
}

/// Bytes of the per-slot header (length and reserved).
pub const SLOT_HEADER_LEN: usize = 4;

/// Card address of slot `index` (free-running) of a ring at `base`.
pub const fn slot_addr(base: u64, index: u32, slot_count: u32, slot_bytes: u32) -> u64 {
    base + (index & (slot_count - 1)) as u64 * slot_bytes as u64
}

/// Encode `packet` into a slot image of `slot.len()` bytes; returns the
/// number of bytes that need to be transferred.
pub fn emit_slot(packet: &[u8], slot: &mut [u8]) -> Result<usize> {
    let need = SLOT_HEADER_LEN + packet.len();
    if need > slot.len() || packet.len() > u16::MAX as usize {
        return Err(Error::new(
            "xdma.slot.len",
            ErrorKind::OutOfRange {
                value: packet.len() as u64,
                max: slot.len().saturating_sub(SLOT_HEADER_LEN) as u64,
            },
        ));
    }
    set_le16(slot, 0, packet.len() as u16);
    set_le16(slot, 2, 0);
    slot[SLOT_HEADER_LEN..need].copy_from_slice(packet);
    Ok(need)
}

/// The packet bytes held in a slot image.
pub fn parse_slot(slot: &[u8]) -> Result<&[u8]> {
    if slot.len() < SLOT_HEADER_LEN {
        return Err(Error::truncated("xdma.slot", SLOT_HEADER_LEN, slot.len()));
    }
    let len = le16(slot, 0) as usize;
    let rsvd = le16(slot, 2);
    if rsvd != 0 {
        return Err(Error::new(
            "xdma.slot.reserved",
            ErrorKind::Reserved(rsvd as u64),
        ));
    }
    if SLOT_HEADER_LEN + len > slot.len() {
        return Err(Error::new(
            "xdma.slot.len",
            ErrorKind::OutOfRange {
                value: len as u64,
                max: (slot.len() - SLOT_HEADER_LEN) as u64,
            },
        ));
    }
    Ok(&slot[SLOT_HEADER_LEN..SLOT_HEADER_LEN + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_round_trip_and_errors() {
        let mut s = [0u8; 32];
        assert_eq!(emit_slot(b"hello", &mut s).unwrap(), 9);
        assert_eq!(&s[..4], &[5, 0, 0, 0]);
        assert_eq!(parse_slot(&s).unwrap(), b"hello");
        assert_eq!(
            emit_slot(&[0u8; 29], &mut s).unwrap_err().field,
            "xdma.slot.len"
        );
        s[0] = 200;
        assert_eq!(parse_slot(&s).unwrap_err().field, "xdma.slot.len");
        s[0] = 1;
        s[2] = 1;
        assert_eq!(parse_slot(&s).unwrap_err().field, "xdma.slot.reserved");
        assert_eq!(slot_addr(0x1000, 9, 8, 2048), 0x1000 + 2048);
    }

    #[test]
    fn register_table_is_the_map() {
        let mut end = 0;
        for r in REGISTERS {
            assert_eq!(
                r.offset, end,
                "{} is not right after the one before",
                r.name
            );
            end = r.offset + r.bytes as u64;
        }
        assert_eq!(end, reg::BLOCK_LEN);
    }
}
