//! The store as the emulated board's offload. Its algorithm (layout,
//! chained slots of seven fingerprints and VAs, CAS publish, the object
//! allocator) lives in `clio_slowpath::offload::kv` (`no_std`), the one
//! implementation the firmware image runs too; this wraps it for the
//! emulator's engine, its memory accesses going through `OffloadMem`
//! (`clio_emu::native::Native`).

use clio_emu::native::Native;
use clio_emu::{Offload, OffloadError, OffloadMem};
use clio_slowpath::offload::kv::KvStore;

pub use clio_slowpath::offload::kv::{DEFAULT_BUCKETS, SLOT_ENTRIES, SLOT_LEN};

/// Freed object VAs the emulator's store keeps per size class for reuse
/// (one more is not reused: its memory stays in the store's space).
pub const FREE_PER_CLASS: usize = 1024;

/// Clio-KV, as an offload (`clio_emu::Board::register_offload`).
#[derive(Debug)]
pub struct KvOffload(Box<Native<KvStore<FREE_PER_CLASS>>>);

impl Default for KvOffload {
    fn default() -> Self {
        KvOffload::new(DEFAULT_BUCKETS)
    }
}

impl KvOffload {
    /// A store of `buckets` head slots (at least 1); nothing is allocated
    /// until the first call.
    pub fn new(buckets: u64) -> KvOffload {
        KvOffload(Box::new(Native::new(KvStore::new(buckets))))
    }

    /// Keys stored.
    pub fn len(&self) -> u64 {
        self.0.inner().len()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.0.inner().is_empty()
    }
}

impl Offload for KvOffload {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        self.0.max_result(op)
    }

    /// The store's look-ahead over a batch (prefetching its head slots and
    /// matching objects; `clio_slowpath::offload::kv`).
    fn prepare(&mut self, mem: &mut OffloadMem<'_>, ops: &[(u16, &[u8])]) {
        self.0.prepare(mem, ops);
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
