//! Clio-MV's store (dissertation §3.6), `no_std`: the one implementation of
//! its algorithm, run by the firmware ([`super::OffloadHost`], offload id
//! [`OFFLOAD_ID`]) and wrapped by the emulator's `clio_mv::MvOffload`.
//! Moved here unchanged in behaviour from `host-sdk/mv/src/offload.rs`
//! (issue #16), with its heap uses made bounded: the slot buffer is
//! [`SLOT_MAX`] bytes, the allocator keeps up to `F` freed arrays for reuse
//! (one freed beyond that is not reused), errors carry static texts.
//!
//! Layout in its address space (reached only through [`OffloadMemory`];
//! words little-endian, as the board's atomics see them):
//!
//! - the **object-id map**: `max_objects` entries of 16 bytes, allocated on
//!   first use — `array: u64` (the object's version array, 0 = no live
//!   object), `gen: u32` (the id's generation), `next_free: u32` (the next
//!   entry of the free-id list, as index + 1; 0 ends it);
//! - the **free-id list**: deleted entries linked through `next_free`; its
//!   head is the store's one register besides the allocator's;
//! - a **version array** per object: a 16-byte header — `latest: u64`,
//!   `versions: u32`, `value_size: u32` — then `versions` slots of
//!   `16 + value_size` bytes (rounded up to 8): `version: u64`, `len: u32`,
//!   pad, value. Version `v` lives in slot `(v - 1) % versions`, so reading
//!   any kept version costs the same as reading the latest: the map entry,
//!   the header, the slot (three reads);
//! - arrays are placed by a size-class allocator over 4 MiB chunks taken
//!   with `alloc` (the emulated board's page; a smaller allocation would
//!   still take a whole page of the quota).
//!
//! An object id is `gen << 32 | index`: a deleted entry is issued again
//! with the next generation, so a stale id is told apart from a live one
//! (`DELETED`) and from one never issued (`NO_SUCH_OBJECT`).
//!
//! Consistency: an append writes its slot in full and then publishes it
//! with one compare-and-swap of `latest`; a create writes the header before
//! it publishes the array's VA into the map; a delete unpublishes it first.
//! Calls are served one at a time, so all operations on an object are
//! totally ordered, each one atomic — sequential consistency per object.

use super::{Carver, Fault, MemFault, Offload, OffloadError, OffloadMemory, Results};

use proto::{code, Call};

/// Clio-MV's offload id.
pub const OFFLOAD_ID: u32 = 2;
/// Longest value of a version (bytes; a value travels in one packet).
pub const MAX_VALUE: usize = 1024;
/// Largest version array (bytes): `16 + versions × (16 + value_size)`
/// (value size rounded up to 8) must fit one 4 MiB chunk — e.g. 4 032
/// versions of 1 KiB, 131 071 versions of 16 B.
pub const MAX_ARRAY_BYTES: u64 = 4 << 20;

/// Bytes of a map entry.
pub const ENTRY_LEN: u64 = 16;
/// Bytes of a version array's header.
pub const HEADER_LEN: u64 = 16;
/// Bytes of a slot's header.
pub const SLOT_HEADER: u64 = 16;
/// Bytes of the largest slot (a value of [`MAX_VALUE`]).
pub const SLOT_MAX: usize = SLOT_HEADER as usize + MAX_VALUE;
/// Bytes taken from the board at a time for arrays.
const CHUNK: u64 = 4 << 20;
/// Granularity of the array allocator's size classes.
const CLASS: u64 = 64;
/// Default capacity of the object-id map (a 4 MiB map).
pub const DEFAULT_MAX_OBJECTS: u32 = 1 << 18;

/// Bytes of one slot of an object whose values are at most `value_size`.
pub const fn slot_len(value_size: u32) -> u64 {
    SLOT_HEADER + (value_size as u64).div_ceil(8) * 8
}

/// Bytes of the version array of an object of this shape.
pub const fn array_len(versions: u32, value_size: u32) -> u64 {
    HEADER_LEN + versions as u64 * slot_len(value_size)
}

/// Clio-MV's call format: the arguments after the `OffloadCallReq` of an
/// `OFFLOAD_CALL` to [`OFFLOAD_ID`], its results and its refusal codes. All
/// integers big-endian.
///
/// | op | arguments | result |
/// |---|---|---|
/// | `CREATE` | `versions: u32`, `value_size: u32` | `id: u64` |
/// | `APPEND` | `id: u64`, `value_len: u32`, `reserved: u32 = 0`, value | `version: u64` |
/// | `READ` | `id: u64`, `version: u64` (0 = the latest) | `version: u64`, value |
/// | `DELETE` | `id: u64` | nothing |
/// | `INFO` | `id: u64` | `latest: u64`, `oldest: u64`, `versions: u32`, `value_size: u32` |
///
/// `versions` is how many of an object's latest versions are kept (older
/// ones are overwritten in place: a read of one is `VERSION_GONE`);
/// `value_size` bounds every value appended to the object. Versions count
/// from 1; `oldest` is 0 while the object has none.
pub mod proto {
    /// Operations (the `op` of the `OffloadCallReq`).
    pub mod op {
        /// Create an object; returns its id.
        pub const CREATE: u16 = 1;
        /// Append a version; returns its number.
        pub const APPEND: u16 = 2;
        /// Read a version (or the latest).
        pub const READ: u16 = 3;
        /// Delete an object (its id may be issued again, with a new generation).
        pub const DELETE: u16 = 4;
        /// An object's version range and shape.
        pub const INFO: u16 = 5;
    }

    /// Refusal codes (the `code` of an `OFFLOAD_REFUSED` answer).
    pub mod code {
        /// The arguments do not parse (length, reserved bits, unknown op).
        pub const BAD_ARGS: u16 = 1;
        /// No object was ever issued under this id.
        pub const NO_SUCH_OBJECT: u16 = 2;
        /// The object was deleted (a read, append or second delete of it).
        pub const DELETED: u16 = 3;
        /// The version was never appended (above the latest, or the object has
        /// none yet).
        pub const NO_SUCH_VERSION: u16 = 4;
        /// The version was appended but is older than the versions kept.
        pub const VERSION_GONE: u16 = 5;
        /// The value is longer than the object's `value_size` (or than
        /// [`super::super::MAX_VALUE`]).
        pub const VALUE_TOO_LONG: u16 = 6;
        /// `CREATE` with `versions` or `value_size` of 0, a value size over
        /// [`super::super::MAX_VALUE`], or a version array over
        /// [`super::super::MAX_ARRAY_BYTES`].
        pub const BAD_SHAPE: u16 = 7;
        /// The store is out of memory, over its quota, or out of object ids.
        pub const FULL: u16 = 8;
    }

    /// Bytes of `CREATE`'s arguments.
    pub const CREATE_LEN: usize = 8;
    /// Bytes of `APPEND`'s fixed arguments (before the value).
    pub const APPEND_LEN: usize = 16;
    /// Bytes of `READ`'s arguments.
    pub const READ_LEN: usize = 16;
    /// Bytes of `DELETE`'s and `INFO`'s arguments.
    pub const ID_LEN: usize = 8;
    /// Bytes of `INFO`'s result.
    pub const INFO_LEN: usize = 24;

    pub(super) fn be64(b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_be_bytes(w)
    }

    pub(super) fn be32(b: &[u8], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&b[at..at + 4]);
        u32::from_be_bytes(w)
    }

    /// A decoded call.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Call<'a> {
        /// `CREATE`.
        Create {
            /// Versions kept.
            versions: u32,
            /// Largest value.
            value_size: u32,
        },
        /// `APPEND`.
        Append {
            /// Object.
            id: u64,
            /// The new version's value.
            value: &'a [u8],
        },
        /// `READ`.
        Read {
            /// Object.
            id: u64,
            /// Version (0 = the latest).
            version: u64,
        },
        /// `DELETE`.
        Delete {
            /// Object.
            id: u64,
        },
        /// `INFO`.
        Info {
            /// Object.
            id: u64,
        },
    }

    impl<'a> Call<'a> {
        /// Decode operation `op` with `args`; `Err(code)` says what is wrong.
        pub fn decode(op: u16, args: &'a [u8]) -> Result<Call<'a>, u16> {
            let exact = |n: usize| {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(code::BAD_ARGS)
                }
            };
            match op {
                op::CREATE => {
                    exact(CREATE_LEN)?;
                    Ok(Call::Create {
                        versions: be32(args, 0),
                        value_size: be32(args, 4),
                    })
                }
                op::APPEND => {
                    if args.len() < APPEND_LEN || be32(args, 12) != 0 {
                        return Err(code::BAD_ARGS);
                    }
                    let len = be32(args, 8) as usize;
                    exact(APPEND_LEN.saturating_add(len))?;
                    Ok(Call::Append {
                        id: be64(args, 0),
                        value: &args[APPEND_LEN..],
                    })
                }
                op::READ => {
                    exact(READ_LEN)?;
                    Ok(Call::Read {
                        id: be64(args, 0),
                        version: be64(args, 8),
                    })
                }
                op::DELETE => {
                    exact(ID_LEN)?;
                    Ok(Call::Delete { id: be64(args, 0) })
                }
                op::INFO => {
                    exact(ID_LEN)?;
                    Ok(Call::Info { id: be64(args, 0) })
                }
                _ => Err(code::BAD_ARGS),
            }
        }

        /// The operation and its encoded arguments (feature `alloc`).
        #[cfg(feature = "alloc")]
        pub fn encode(&self) -> (u16, alloc::vec::Vec<u8>) {
            let mut b = alloc::vec::Vec::new();
            let op = self.encode_into(&mut b);
            (op, b)
        }

        /// The operation, and its arguments' bytes appended to `b`.
        pub fn encode_into<E: Extend<u8>>(&self, b: &mut E) -> u16 {
            let mut put = |s: &[u8]| b.extend(s.iter().copied());
            match *self {
                Call::Create {
                    versions,
                    value_size,
                } => {
                    put(&versions.to_be_bytes());
                    put(&value_size.to_be_bytes());
                    op::CREATE
                }
                Call::Append { id, value } => {
                    put(&id.to_be_bytes());
                    put(&(value.len() as u32).to_be_bytes());
                    put(&[0; 4]);
                    put(value);
                    op::APPEND
                }
                Call::Read { id, version } => {
                    put(&id.to_be_bytes());
                    put(&version.to_be_bytes());
                    op::READ
                }
                Call::Delete { id } => {
                    put(&id.to_be_bytes());
                    op::DELETE
                }
                Call::Info { id } => {
                    put(&id.to_be_bytes());
                    op::INFO
                }
            }
        }
    }
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn full_or_fault(e: MemFault) -> OffloadError {
    e.refused_if_full(code::FULL)
}

fn refuse(code: u16) -> OffloadError {
    OffloadError::Refused(code)
}

fn broken(what: &'static str) -> OffloadError {
    OffloadError::Fault(Fault::Broken(what))
}

/// A version array's header.
#[derive(Debug, Clone, Copy)]
struct Header {
    latest: u64,
    versions: u32,
    value_size: u32,
}

impl Header {
    fn oldest(&self) -> u64 {
        match self.latest {
            0 => 0,
            l => l.saturating_sub(u64::from(self.versions) - 1).max(1),
        }
    }
}

/// A live object found through the map.
#[derive(Debug, Clone, Copy)]
struct Live {
    index: u32,
    entry: u64,
    array: u64,
}

/// Clio-MV's store, keeping up to `F` freed arrays (any size class) for
/// reuse.
#[derive(Debug)]
pub struct MvStore<const F: usize> {
    max_objects: u32,
    map: Option<u64>,
    /// Entries ever issued (the map's high-water mark).
    issued: u32,
    /// Head of the free-id list (index + 1; 0 = empty).
    free_head: u32,
    live: u64,
    chunks: Carver,
    /// Freed arrays: (size class, VA), the latest freed last.
    free: heapless::Vec<(u32, u64), F>,
    /// The slot of the call in progress.
    slot: [u8; SLOT_MAX],
}

impl<const F: usize> Default for MvStore<F> {
    fn default() -> Self {
        MvStore::new(DEFAULT_MAX_OBJECTS)
    }
}

impl<const F: usize> MvStore<F> {
    /// A store of at most `max_objects` live objects (at least 1); nothing
    /// is allocated until the first call.
    pub const fn new(max_objects: u32) -> Self {
        MvStore {
            max_objects: if max_objects == 0 { 1 } else { max_objects },
            map: None,
            issued: 0,
            free_head: 0,
            live: 0,
            chunks: Carver::new(),
            free: heapless::Vec::new(),
            slot: [0; SLOT_MAX],
        }
    }

    /// Live objects.
    pub fn len(&self) -> u64 {
        self.live
    }

    /// Whether no object is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn map(&mut self, mem: &mut dyn OffloadMemory) -> Result<u64, OffloadError> {
        if let Some(m) = self.map {
            return Ok(m);
        }
        // Fresh pages read as zeros: every entry starts free, generation 0.
        let m = mem
            .alloc(u64::from(self.max_objects) * ENTRY_LEN)
            .map_err(full_or_fault)?;
        self.map = Some(m);
        Ok(m)
    }

    fn alloc(&mut self, mem: &mut dyn OffloadMemory, len: u64) -> Result<u64, OffloadError> {
        let class = len.div_ceil(CLASS);
        // The latest array freed in this class (as a stack per class).
        if let Some(i) = self.free.iter().rposition(|&(c, _)| u64::from(c) == class) {
            return Ok(self.free.remove(i).1);
        }
        let bytes = class * CLASS;
        self.chunks.carve(mem, bytes, CHUNK).map_err(full_or_fault)
    }

    fn release(&mut self, va: u64, len: u64) {
        // A full list forgets the VA: its memory stays in the store's
        // address space, unused.
        if let Ok(class) = u32::try_from(len.div_ceil(CLASS)) {
            let _ = self.free.push((class, va));
        }
    }

    /// The live object `id`, or why there is none.
    fn lookup(&mut self, mem: &mut dyn OffloadMemory, id: u64) -> Result<Live, OffloadError> {
        let (gen, index) = ((id >> 32) as u32, id as u32);
        if gen == 0 || index >= self.issued {
            return Err(refuse(code::NO_SUCH_OBJECT));
        }
        let entry = self.map(mem)? + u64::from(index) * ENTRY_LEN;
        let mut b = [0u8; ENTRY_LEN as usize];
        mem.read(entry, &mut b)?;
        let (array, egen) = (le64(&b, 0), le32(&b, 8));
        if egen < gen {
            return Err(refuse(code::NO_SUCH_OBJECT));
        }
        if egen > gen || array == 0 {
            return Err(refuse(code::DELETED));
        }
        Ok(Live {
            index,
            entry,
            array,
        })
    }

    fn header(mem: &mut dyn OffloadMemory, array: u64) -> Result<Header, OffloadError> {
        let mut b = [0u8; HEADER_LEN as usize];
        mem.read(array, &mut b)?;
        let h = Header {
            latest: le64(&b, 0),
            versions: le32(&b, 8),
            value_size: le32(&b, 12),
        };
        if h.versions == 0 || h.value_size == 0 || h.value_size as usize > MAX_VALUE {
            return Err(broken("version array has a corrupt header"));
        }
        Ok(h)
    }

    fn slot_va(array: u64, h: &Header, version: u64) -> u64 {
        let i = (version - 1) % u64::from(h.versions);
        array.wrapping_add(HEADER_LEN + i * slot_len(h.value_size))
    }

    fn create(
        &mut self,
        mem: &mut dyn OffloadMemory,
        versions: u32,
        value_size: u32,
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        if versions == 0
            || value_size == 0
            || value_size as usize > MAX_VALUE
            || array_len(versions, value_size) > MAX_ARRAY_BYTES
        {
            return Err(refuse(code::BAD_SHAPE));
        }
        let map = self.map(mem)?;
        // An id: the free list's head, or a never-issued entry.
        let (index, gen, next_free) = if self.free_head != 0 {
            let index = self.free_head - 1;
            let mut b = [0u8; ENTRY_LEN as usize];
            mem.read(map + u64::from(index) * ENTRY_LEN, &mut b)?;
            let gen = le32(&b, 8)
                .checked_add(1)
                .ok_or(broken("free map entry at its last generation"))?;
            (index, gen, le32(&b, 12))
        } else if self.issued < self.max_objects {
            (self.issued, 1, 0)
        } else {
            return Err(refuse(code::FULL));
        };
        let len = array_len(versions, value_size);
        let array = self.alloc(mem, len)?;
        let mut h = [0u8; HEADER_LEN as usize];
        h[8..12].copy_from_slice(&versions.to_le_bytes());
        h[12..16].copy_from_slice(&value_size.to_le_bytes());
        if let Err(e) = mem.write(array, &h) {
            self.release(array, len);
            return Err(e.into());
        }
        // Generation before the array: the entry counts once `array` is set.
        let entry = map + u64::from(index) * ENTRY_LEN;
        let mut g = [0u8; 8];
        g[..4].copy_from_slice(&gen.to_le_bytes());
        mem.write(entry + 8, &g)?;
        if mem.cas(entry, 0, array)? != 0 {
            return Err(broken("map entry taken under us"));
        }
        if self.free_head != 0 {
            self.free_head = next_free;
        } else {
            self.issued += 1;
        }
        self.live += 1;
        out.push(&(u64::from(gen) << 32 | u64::from(index)).to_be_bytes())
    }

    fn append(
        &mut self,
        mem: &mut dyn OffloadMemory,
        id: u64,
        value: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        if value.len() > MAX_VALUE {
            return Err(refuse(code::VALUE_TOO_LONG));
        }
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        if value.len() > h.value_size as usize {
            return Err(refuse(code::VALUE_TOO_LONG));
        }
        let v = h.latest + 1;
        let n = SLOT_HEADER as usize + value.len();
        let s = &mut self.slot[..n];
        s[0..8].copy_from_slice(&v.to_le_bytes());
        s[8..12].copy_from_slice(&(value.len() as u32).to_le_bytes());
        s[12..16].copy_from_slice(&[0; 4]);
        s[16..].copy_from_slice(value);
        mem.write(Self::slot_va(o.array, &h, v), s)?;
        // Publish: the slot is complete before `latest` names it.
        if mem.cas(o.array, h.latest, v)? != h.latest {
            return Err(broken("latest version changed under us"));
        }
        out.push(&v.to_be_bytes())
    }

    fn read(
        &mut self,
        mem: &mut dyn OffloadMemory,
        id: u64,
        version: u64,
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        let v = if version == 0 { h.latest } else { version };
        if v == 0 || v > h.latest {
            return Err(refuse(code::NO_SUCH_VERSION));
        }
        if v < h.oldest() {
            return Err(refuse(code::VERSION_GONE));
        }
        let s = &mut self.slot[..slot_len(h.value_size) as usize];
        mem.read(Self::slot_va(o.array, &h, v), s)?;
        let (sv, len) = (le64(s, 0), le32(s, 8) as usize);
        if sv != v || len > h.value_size as usize {
            return Err(broken("a slot holds another version than its place says"));
        }
        out.push(&v.to_be_bytes())?;
        let at = SLOT_HEADER as usize;
        out.push(&s[at..at + len])
    }

    fn delete(&mut self, mem: &mut dyn OffloadMemory, id: u64) -> Result<(), OffloadError> {
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        // Unpublish first: from here on the id reads as deleted.
        if mem.cas(o.entry, o.array, 0)? != o.array {
            return Err(broken("map entry changed under us"));
        }
        // A generation at its end is never issued again (its entry leaks).
        if (id >> 32) < u64::from(u32::MAX) {
            mem.write(o.entry + 12, &self.free_head.to_le_bytes())?;
            self.free_head = o.index + 1;
        }
        self.release(o.array, array_len(h.versions, h.value_size));
        self.live -= 1;
        Ok(())
    }

    fn info(
        &mut self,
        mem: &mut dyn OffloadMemory,
        id: u64,
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        out.push(&h.latest.to_be_bytes())?;
        out.push(&h.oldest().to_be_bytes())?;
        out.push(&h.versions.to_be_bytes())?;
        out.push(&h.value_size.to_be_bytes())
    }
}

impl<const F: usize> Offload for MvStore<F> {
    fn name(&self) -> &'static str {
        "clio-mv"
    }

    fn call(
        &mut self,
        mem: &mut dyn OffloadMemory,
        op: u16,
        args: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        match Call::decode(op, args).map_err(refuse)? {
            Call::Create {
                versions,
                value_size,
            } => self.create(mem, versions, value_size, out),
            Call::Append { id, value } => self.append(mem, id, value, out),
            Call::Read { id, version } => self.read(mem, id, version, out),
            Call::Delete { id } => self.delete(mem, id),
            Call::Info { id } => self.info(mem, id, out),
        }
    }
}
