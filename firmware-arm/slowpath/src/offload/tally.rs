//! Tally (offload id [`ID`]): a table of [`SLOTS`] 64-bit counters in the
//! offload's own address space, the smallest offload that exercises the
//! whole path (allocation on first use, reads, writes, compare-and-swap,
//! refusals, faults). It runs unchanged in the firmware
//! ([`super::OffloadHost`]) and in the emulator (`clio_emu`'s adapter), so
//! the two boards can be compared byte for byte.
//!
//! Arguments are big-endian; results little-endian 8-byte words.
//!
//! | op | args | result |
//! |---|---|---|
//! | [`op::ADD`] | `index: u32`, `delta: u64` | the counter after the wrapping add |
//! | [`op::GET`] | `index: u32` | the counter |
//! | [`op::PEEK`] | `va: u64` | the 8-byte word at `va` of its own address space: a VA it never allocated faults (`OFFLOAD_FAULT`), which is how the tests make a call fault |
//!
//! Refusals: [`code::OUT_OF_RANGE`] (index ≥ [`SLOTS`]), [`code::BAD_ARGS`]
//! (wrong argument length, unknown op).

use super::{Offload, OffloadError, OffloadMemory, Results};

/// The offload id (the first free one after Clio-KV 1, MV 2, DF 3).
pub const ID: u32 = 4;

/// Counters in the table.
pub const SLOTS: u32 = 1024;

/// Operations.
pub mod op {
    /// Add to a counter.
    pub const ADD: u16 = 1;
    /// Read a counter.
    pub const GET: u16 = 2;
    /// Read a word of the offload's address space by VA.
    pub const PEEK: u16 = 3;
}

/// Refusal codes.
pub mod code {
    /// The index is not below [`super::SLOTS`].
    pub const OUT_OF_RANGE: u16 = 1;
    /// The arguments do not parse, or the op is unknown.
    pub const BAD_ARGS: u16 = 2;
}

/// Times an `ADD` retries its compare-and-swap (another writer would be
/// needed to lose one; none exists, so a loss means broken memory).
const CAS_TRIES: u32 = 16;

/// The tally offload.
#[derive(Debug, Default)]
pub struct Tally {
    table: Option<u64>,
}

impl Tally {
    /// A tally with no table yet (allocated at its first `ADD` or `GET`).
    pub const fn new() -> Self {
        Tally { table: None }
    }

    fn slot(&mut self, mem: &mut dyn OffloadMemory, args: &[u8]) -> Result<u64, OffloadError> {
        let index = u32::from_be_bytes([args[0], args[1], args[2], args[3]]);
        if index >= SLOTS {
            return Err(OffloadError::Refused(code::OUT_OF_RANGE));
        }
        let t = match self.table {
            Some(t) => t,
            None => {
                let t = mem.alloc(u64::from(SLOTS) * 8)?;
                self.table = Some(t);
                t
            }
        };
        Ok(t + u64::from(index) * 8)
    }
}

impl Offload for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }

    fn max_result(&self, _op: u16) -> Option<usize> {
        Some(8)
    }

    fn call(
        &mut self,
        mem: &mut dyn OffloadMemory,
        op: u16,
        args: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        let bad = OffloadError::Refused(code::BAD_ARGS);
        match op {
            op::ADD => {
                if args.len() != 12 {
                    return Err(bad);
                }
                let va = self.slot(mem, args)?;
                let mut d = [0u8; 8];
                d.copy_from_slice(&args[4..12]);
                let delta = u64::from_be_bytes(d);
                let mut w = [0u8; 8];
                mem.read(va, &mut w)?;
                let mut old = u64::from_le_bytes(w);
                for _ in 0..CAS_TRIES {
                    let new = old.wrapping_add(delta);
                    let seen = mem.cas(va, old, new)?;
                    if seen == old {
                        return out.push(&new.to_le_bytes());
                    }
                    old = seen;
                }
                Err(OffloadError::Fault(super::Fault::Broken(
                    "counter changed under every compare-and-swap",
                )))
            }
            op::GET => {
                if args.len() != 4 {
                    return Err(bad);
                }
                let va = self.slot(mem, args)?;
                let mut w = [0u8; 8];
                mem.read(va, &mut w)?;
                out.push(&w)
            }
            op::PEEK => {
                if args.len() != 8 {
                    return Err(bad);
                }
                let mut v = [0u8; 8];
                v.copy_from_slice(args);
                let mut w = [0u8; 8];
                mem.read(u64::from_be_bytes(v), &mut w)?;
                out.push(&w)
            }
            _ => Err(bad),
        }
    }
}
