//! The store as the emulated board's offload. Its algorithm (the object-id
//! map, the free-id list, per-object version arrays, CAS publish, the array
//! allocator; layout in `clio_slowpath::offload::mv`) lives in the slow
//! path's `no_std` library, the one implementation the firmware image runs
//! too (offload 2); this wraps it for the emulator's engine, its memory
//! accesses going through `OffloadMem` (`clio_emu::native::Native`), i.e.
//! Clio reads, writes and CAS of its own session.

use clio_emu::native::Native;
use clio_emu::{Offload, OffloadError, OffloadMem};
use clio_slowpath::offload::mv::MvStore;

pub use clio_slowpath::offload::mv::{
    array_len, slot_len, DEFAULT_MAX_OBJECTS, ENTRY_LEN, HEADER_LEN, SLOT_HEADER,
};

/// Freed version arrays the emulator's store keeps for reuse (one more is
/// not reused: its memory stays in the store's space).
pub const FREE_ARRAYS: usize = 4096;

/// Clio-MV, as an offload (`clio_emu::Board::register_offload`).
#[derive(Debug)]
pub struct MvOffload(Box<Native<MvStore<FREE_ARRAYS>>>);

impl Default for MvOffload {
    fn default() -> Self {
        MvOffload::new(DEFAULT_MAX_OBJECTS)
    }
}

impl MvOffload {
    /// A store of at most `max_objects` live objects (at least 1); nothing
    /// is allocated until the first call.
    pub fn new(max_objects: u32) -> MvOffload {
        MvOffload(Box::new(Native::new(MvStore::new(max_objects))))
    }

    /// Live objects.
    pub fn len(&self) -> u64 {
        self.0.inner().len()
    }

    /// Whether no object is live.
    pub fn is_empty(&self) -> bool {
        self.0.inner().is_empty()
    }
}

impl Offload for MvOffload {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        self.0.call(mem, op, args, out)
    }
}
