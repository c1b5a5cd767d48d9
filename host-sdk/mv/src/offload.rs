//! The store itself: an offload at the memory node, in its own address space.
//!
//! Layout in its address space (reached only through [`OffloadMem`], i.e.
//! Clio reads, writes and CAS of its own session; words little-endian, as
//! the board's atomics see them):
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
//!   with `alloc` (the emulated board's page; a smaller `ralloc` would
//!   still take a whole page of the quota).
//!
//! An object id is `gen << 32 | index`: a deleted entry is issued again
//! with the next generation, so a stale id is told apart from a live one
//! (`DELETED`) and from one never issued (`NO_SUCH_OBJECT`).
//!
//! Consistency: an append writes its slot in full and then publishes it
//! with one compare-and-swap of `latest`; a create writes the header before
//! it publishes the array's VA into the map; a delete unpublishes it first.
//! The engine serves one call at a time, so all operations on an object
//! are totally ordered, each one atomic — sequential consistency per
//! object (a client's calls keep its program order when it waits for
//! each, as the blocking client does).

use clio_emu::{MemError, Offload, OffloadError, OffloadMem};
use clio_wire::Status;

use crate::proto::{code, Call};
use crate::{MAX_ARRAY_BYTES, MAX_VALUE};

/// Bytes of a map entry.
pub const ENTRY_LEN: u64 = 16;
/// Bytes of a version array's header.
pub const HEADER_LEN: u64 = 16;
/// Bytes of a slot's header.
pub const SLOT_HEADER: u64 = 16;
/// Bytes taken from the board at a time for arrays.
const CHUNK: u64 = 4 << 20;
/// Granularity of the array allocator's size classes.
const CLASS: u64 = 64;
/// Default capacity of the object-id map (a 4 MiB map).
pub const DEFAULT_MAX_OBJECTS: u32 = 1 << 18;

/// Bytes of one slot of an object whose values are at most `value_size`.
pub fn slot_len(value_size: u32) -> u64 {
    SLOT_HEADER + u64::from(value_size).div_ceil(8) * 8
}

/// Bytes of the version array of an object of this shape.
pub fn array_len(versions: u32, value_size: u32) -> u64 {
    HEADER_LEN + u64::from(versions) * slot_len(value_size)
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

fn full_or_fault(e: MemError) -> OffloadError {
    match e.status {
        Status::OverQuota | Status::OutOfMemory | Status::TooLarge => {
            OffloadError::Refused(code::FULL)
        }
        _ => OffloadError::from(e),
    }
}

fn refuse(code: u16) -> OffloadError {
    OffloadError::Refused(code)
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

/// Clio-MV, as an offload (`clio_emu::Board::register_offload`).
#[derive(Debug)]
pub struct MvOffload {
    max_objects: u32,
    map: Option<u64>,
    /// Entries ever issued (the map's high-water mark).
    issued: u32,
    /// Head of the free-id list (index + 1; 0 = empty).
    free_head: u32,
    live: u64,
    chunk_at: u64,
    chunk_end: u64,
    free: Vec<Vec<u64>>,
}

impl Default for MvOffload {
    fn default() -> Self {
        MvOffload::new(DEFAULT_MAX_OBJECTS)
    }
}

impl MvOffload {
    /// A store of at most `max_objects` live objects (at least 1); nothing
    /// is allocated until the first call.
    pub fn new(max_objects: u32) -> MvOffload {
        MvOffload {
            max_objects: max_objects.max(1),
            map: None,
            issued: 0,
            free_head: 0,
            live: 0,
            chunk_at: 0,
            chunk_end: 0,
            free: Vec::new(),
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

    fn map(&mut self, mem: &mut OffloadMem<'_>) -> Result<u64, OffloadError> {
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

    fn alloc(&mut self, mem: &mut OffloadMem<'_>, len: u64) -> Result<u64, OffloadError> {
        let class = len.div_ceil(CLASS) as usize;
        if let Some(va) = self.free.get_mut(class).and_then(Vec::pop) {
            return Ok(va);
        }
        let bytes = class as u64 * CLASS;
        if self.chunk_at + bytes > self.chunk_end {
            let c = mem.alloc(CHUNK).map_err(full_or_fault)?;
            self.chunk_at = c;
            self.chunk_end = c + CHUNK;
        }
        let va = self.chunk_at;
        self.chunk_at += bytes;
        Ok(va)
    }

    fn release(&mut self, va: u64, len: u64) {
        let class = len.div_ceil(CLASS) as usize;
        if self.free.len() <= class {
            self.free.resize_with(class + 1, Vec::new);
        }
        self.free[class].push(va);
    }

    /// The live object `id`, or why there is none.
    fn lookup(&mut self, mem: &mut OffloadMem<'_>, id: u64) -> Result<Live, OffloadError> {
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

    fn header(mem: &mut OffloadMem<'_>, array: u64) -> Result<Header, OffloadError> {
        let mut b = [0u8; HEADER_LEN as usize];
        mem.read(array, &mut b)?;
        let h = Header {
            latest: le64(&b, 0),
            versions: le32(&b, 8),
            value_size: le32(&b, 12),
        };
        if h.versions == 0 || h.value_size == 0 || h.value_size as usize > MAX_VALUE {
            return Err(OffloadError::Fault(format!(
                "version array at {array:#x} has a corrupt header"
            )));
        }
        Ok(h)
    }

    fn slot(array: u64, h: &Header, version: u64) -> u64 {
        array + HEADER_LEN + ((version - 1) % u64::from(h.versions)) * slot_len(h.value_size)
    }

    fn create(
        &mut self,
        mem: &mut OffloadMem<'_>,
        versions: u32,
        value_size: u32,
        out: &mut Vec<u8>,
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
            (index, le32(&b, 8) + 1, le32(&b, 12))
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
            return Err(OffloadError::Fault("map entry taken under us".into()));
        }
        if self.free_head != 0 {
            self.free_head = next_free;
        } else {
            self.issued += 1;
        }
        self.live += 1;
        out.extend_from_slice(&(u64::from(gen) << 32 | u64::from(index)).to_be_bytes());
        Ok(())
    }

    fn append(
        &mut self,
        mem: &mut OffloadMem<'_>,
        id: u64,
        value: &[u8],
        out: &mut Vec<u8>,
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
        let mut s = Vec::with_capacity(SLOT_HEADER as usize + value.len());
        s.extend_from_slice(&v.to_le_bytes());
        s.extend_from_slice(&(value.len() as u32).to_le_bytes());
        s.extend_from_slice(&[0; 4]);
        s.extend_from_slice(value);
        mem.write(Self::slot(o.array, &h, v), &s)?;
        // Publish: the slot is complete before `latest` names it.
        if mem.cas(o.array, h.latest, v)? != h.latest {
            return Err(OffloadError::Fault(
                "latest version changed under us".into(),
            ));
        }
        out.extend_from_slice(&v.to_be_bytes());
        Ok(())
    }

    fn read(
        &mut self,
        mem: &mut OffloadMem<'_>,
        id: u64,
        version: u64,
        out: &mut Vec<u8>,
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
        let mut s = vec![0u8; slot_len(h.value_size) as usize];
        mem.read(Self::slot(o.array, &h, v), &mut s)?;
        let (sv, len) = (le64(&s, 0), le32(&s, 8) as usize);
        if sv != v || len > h.value_size as usize {
            return Err(OffloadError::Fault(format!(
                "slot of version {v} holds version {sv} ({len} bytes)"
            )));
        }
        out.extend_from_slice(&v.to_be_bytes());
        let at = SLOT_HEADER as usize;
        out.extend_from_slice(&s[at..at + len]);
        Ok(())
    }

    fn delete(&mut self, mem: &mut OffloadMem<'_>, id: u64) -> Result<(), OffloadError> {
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        // Unpublish first: from here on the id reads as deleted.
        if mem.cas(o.entry, o.array, 0)? != o.array {
            return Err(OffloadError::Fault("map entry changed under us".into()));
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
        mem: &mut OffloadMem<'_>,
        id: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        let o = self.lookup(mem, id)?;
        let h = Self::header(mem, o.array)?;
        out.extend_from_slice(&h.latest.to_be_bytes());
        out.extend_from_slice(&h.oldest().to_be_bytes());
        out.extend_from_slice(&h.versions.to_be_bytes());
        out.extend_from_slice(&h.value_size.to_be_bytes());
        Ok(())
    }
}

impl Offload for MvOffload {
    fn name(&self) -> &str {
        "clio-mv"
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
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
