//! The store itself: an offload at the memory node, in its own address space.
//!
//! Layout in its address space (reached only through [`OffloadMem`], i.e.
//! Clio reads, writes and CAS of its own session):
//!
//! - a bucket array of `buckets` head slots, allocated on first use;
//! - slots of 72 bytes: `next` VA (8, 0 = end of chain), seven 1-byte
//!   fingerprints, one pad byte, seven 8-byte object entries (0 = empty);
//!   words little-endian, as the board's atomics see them. An entry is the
//!   object's VA (below 2^56) with the object's length in 64-byte units in
//!   its top byte, so a read fetches the whole object in one request;
//! - objects: `key_len: u16`, pad, `value_len: u32`, key, value (LE
//!   header), placed by a size-class allocator over 4 MiB chunks taken with
//!   `alloc`.
//!
//! Atomic writes: an object is written in full before its VA is published
//! into a slot with one compare-and-swap (create: 0 → VA; update: old VA →
//! new VA; delete: VA → 0), so a reader finds either the old object or the
//! new one, never a partial one (read committed). Objects are never written
//! in place. The engine serves one call at a time, so a replaced object's
//! memory can be reused at once (no reader is between its two reads).

use clio_emu::{MemError, Offload, OffloadError, OffloadMem};
use clio_wire::Status;

use crate::proto::{code, decode, hash, op};

/// Bytes of a slot.
pub const SLOT_LEN: usize = 72;
/// Entries per slot (the dissertation's seven).
pub const SLOT_ENTRIES: usize = 7;
/// Object header bytes.
const OBJ_HDR: usize = 8;
/// Bytes taken from the board at a time for objects and chained slots: the
/// emulated board's default page (4 MiB); a smaller chunk still takes a
/// whole page of the address space's quota.
const CHUNK: u64 = 4 << 20;
/// Granularity of the object allocator's size classes.
const CLASS: usize = 64;
/// Default head slots.
pub const DEFAULT_BUCKETS: u64 = 16 * 1024;
/// An entry's top byte holds the object's length in [`CLASS`] units.
const LEN_SHIFT: u32 = 56;

/// The entry publishing the object at `va` of `len` bytes.
fn entry_of(va: u64, len: usize) -> Result<u64, OffloadError> {
    let units = len.div_ceil(CLASS) as u64;
    if va >> LEN_SHIFT != 0 || units >> (64 - LEN_SHIFT) != 0 {
        return Err(OffloadError::Fault(format!(
            "object at {va:#x} ({len} bytes) does not fit a slot entry"
        )));
    }
    Ok(va | units << LEN_SHIFT)
}

/// An entry's object VA and the bytes its size class spans.
fn split_entry(e: u64) -> (u64, usize) {
    (
        e & ((1 << LEN_SHIFT) - 1),
        (e >> LEN_SHIFT) as usize * CLASS,
    )
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    next: u64,
    fps: [u8; SLOT_ENTRIES],
    vas: [u64; SLOT_ENTRIES],
}

impl Slot {
    /// A slot from its [`SLOT_LEN`] bytes (short input reads as zeros).
    fn parse(b: &[u8]) -> Slot {
        let w = |o: usize| {
            b.get(o..o + 8)
                .and_then(|w| w.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        let mut s = Slot {
            next: w(0),
            ..Slot::default()
        };
        if let Some(fps) = b.get(8..8 + SLOT_ENTRIES) {
            s.fps.copy_from_slice(fps);
        }
        for i in 0..SLOT_ENTRIES {
            s.vas[i] = w(16 + 8 * i);
        }
        s
    }
}

/// What an object's bytes say about a looked-up key.
enum Match {
    /// Another key's object.
    Other,
    /// The key's: its value's length.
    Key(usize),
    /// The header claims a value past the entry's span.
    Overlong,
}

/// Compare the object in `o` (its header and key, and with `value`, all of
/// it) with `key`; for the key's object, append its value to `value`.
fn match_object(o: &[u8], key: &[u8], span: usize, value: Option<&mut Vec<u8>>) -> Match {
    let want = OBJ_HDR + key.len();
    let klen = u16::from_le_bytes([o[0], o[1]]) as usize;
    if klen != key.len() || &o[OBJ_HDR..want] != key {
        return Match::Other;
    }
    let vlen = u32::from_le_bytes([o[4], o[5], o[6], o[7]]) as usize;
    if want + vlen > span {
        return Match::Overlong;
    }
    if let Some(out) = value {
        // A read fetched the whole span: the value goes straight from the
        // board's memory into the answer.
        out.extend_from_slice(&o[want..want + vlen]);
    }
    Match::Key(vlen)
}

fn fp_va(slot: u64, i: usize) -> u64 {
    slot + 8 + i as u64
}
fn entry_va(slot: u64, i: usize) -> u64 {
    slot + 16 + 8 * i as u64
}

fn full_or_fault(e: MemError) -> OffloadError {
    match e.status {
        Status::OverQuota | Status::OutOfMemory | Status::TooLarge => {
            OffloadError::Refused(code::FULL)
        }
        _ => OffloadError::from(e),
    }
}

/// What a walk of a key's chain found.
struct Walk {
    found: Option<Found>,
    /// The first empty entry of the chain.
    free: Option<(u64, usize)>,
    /// The chain's last slot.
    last: u64,
}

/// Where a key was found.
struct Found {
    slot: u64,
    index: usize,
    /// The slot entry as stored (compared by the CAS that replaces it).
    entry: u64,
    obj: u64,
    value_len: usize,
}

/// Clio-KV, as an offload (`clio_emu::Board::register_offload`).
#[derive(Debug)]
pub struct KvOffload {
    buckets: u64,
    table: Option<u64>,
    chunk_at: u64,
    chunk_end: u64,
    free: Vec<Vec<u64>>,
    keys: u64,
    /// The object being written (kept for its capacity: no allocation per
    /// write).
    obj: Vec<u8>,
    /// A batch's look-ahead: head slot, fingerprint, header and key
    /// bytes, whether a read (kept for its capacity).
    ahead: Vec<(u64, u8, usize, bool)>,
}

impl Default for KvOffload {
    fn default() -> Self {
        KvOffload::new(DEFAULT_BUCKETS)
    }
}

impl KvOffload {
    /// A store of `buckets` head slots (at least 1); nothing is allocated
    /// until the first call.
    pub fn new(buckets: u64) -> KvOffload {
        KvOffload {
            buckets: buckets.max(1),
            table: None,
            chunk_at: 0,
            chunk_end: 0,
            free: Vec::new(),
            keys: 0,
            obj: Vec::new(),
            ahead: Vec::new(),
        }
    }

    /// Keys stored.
    pub fn len(&self) -> u64 {
        self.keys
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    fn table(&mut self, mem: &mut OffloadMem<'_>) -> Result<u64, OffloadError> {
        if let Some(t) = self.table {
            return Ok(t);
        }
        // Fresh pages read as zeros: every head slot starts empty.
        let t = mem
            .alloc(self.buckets * SLOT_LEN as u64)
            .map_err(full_or_fault)?;
        self.table = Some(t);
        Ok(t)
    }

    fn alloc(&mut self, mem: &mut OffloadMem<'_>, len: usize) -> Result<u64, OffloadError> {
        let class = len.div_ceil(CLASS);
        if let Some(va) = self.free.get_mut(class).and_then(Vec::pop) {
            return Ok(va);
        }
        let bytes = (class * CLASS) as u64;
        if self.chunk_at + bytes > self.chunk_end {
            let c = mem.alloc(CHUNK).map_err(full_or_fault)?;
            self.chunk_at = c;
            self.chunk_end = c + CHUNK;
        }
        let va = self.chunk_at;
        self.chunk_at += bytes;
        Ok(va)
    }

    fn release(&mut self, va: u64, len: usize) {
        let class = len.div_ceil(CLASS);
        if self.free.len() <= class {
            self.free.resize_with(class + 1, Vec::new);
        }
        self.free[class].push(va);
    }

    fn read_slot(mem: &mut OffloadMem<'_>, va: u64) -> Result<Slot, MemError> {
        mem.read_with(va, SLOT_LEN, Slot::parse)
    }

    fn head(&mut self, mem: &mut OffloadMem<'_>, h: u64) -> Result<u64, OffloadError> {
        let t = self.table(mem)?;
        Ok(t + (h % self.buckets) * SLOT_LEN as u64)
    }

    /// Walk the key's chain: a slot at a time, then the object of each
    /// entry whose fingerprint matches (with `value`, all of it in one
    /// request, and the key's value is appended to `value` from where it
    /// lies; else its header and key). Also says where an insert goes.
    fn find(
        &mut self,
        mem: &mut OffloadMem<'_>,
        key: &[u8],
        mut value: Option<&mut Vec<u8>>,
    ) -> Result<Walk, OffloadError> {
        let h = hash(key);
        let fp = (h >> 56) as u8;
        let mut at = self.head(mem, h)?;
        let mut free = None;
        // A chain longer than every slot the quota could hold is corrupt.
        for _ in 0..(1u64 << 32) {
            let s = Self::read_slot(mem, at)?;
            for i in 0..SLOT_ENTRIES {
                if s.vas[i] == 0 {
                    free = free.or(Some((at, i)));
                    continue;
                }
                if s.fps[i] != fp {
                    continue;
                }
                let (va, span) = split_entry(s.vas[i]);
                let want = OBJ_HDR + key.len();
                if span < want {
                    // Shorter than this key's header: another key.
                    continue;
                }
                let len = if value.is_some() { span } else { want };
                let out = value.as_deref_mut();
                match mem.read_with(va, len, |o| match_object(o, key, span, out))? {
                    Match::Other => {}
                    Match::Overlong => {
                        return Err(OffloadError::Fault(format!(
                            "object at {va:#x} is longer than its entry says"
                        )))
                    }
                    Match::Key(vlen) => {
                        return Ok(Walk {
                            found: Some(Found {
                                slot: at,
                                index: i,
                                entry: s.vas[i],
                                obj: va,
                                value_len: vlen,
                            }),
                            free,
                            last: at,
                        })
                    }
                }
            }
            if s.next == 0 {
                return Ok(Walk {
                    found: None,
                    free,
                    last: at,
                });
            }
            at = s.next;
        }
        Err(OffloadError::Fault("hash chain does not end".into()))
    }

    fn write_object(
        &mut self,
        mem: &mut OffloadMem<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<u64, OffloadError> {
        let len = OBJ_HDR + key.len() + value.len();
        let va = self.alloc(mem, len)?;
        let entry = entry_of(va, len)?;
        let b = &mut self.obj;
        b.clear();
        b.extend_from_slice(&(key.len() as u16).to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&(value.len() as u32).to_le_bytes());
        b.extend_from_slice(key);
        b.extend_from_slice(value);
        mem.write(va, b)?;
        Ok(entry)
    }

    /// Publish `obj` (an entry: VA and length) into the free entry the walk
    /// found, or into a new slot linked after the chain's last one.
    fn insert(
        &mut self,
        mem: &mut OffloadMem<'_>,
        key: &[u8],
        obj: u64,
        w: &Walk,
    ) -> Result<(), OffloadError> {
        let fp = (hash(key) >> 56) as u8;
        if let Some((slot, i)) = w.free {
            // The fingerprint first: an entry counts only once its VA is set.
            mem.write(fp_va(slot, i), &[fp])?;
            if mem.cas(entry_va(slot, i), 0, obj)? != 0 {
                return Err(OffloadError::Fault("slot entry taken under us".into()));
            }
            return Ok(());
        }
        // Chain full: a new slot holding the entry, then link it.
        let new = self.alloc(mem, SLOT_LEN)?;
        let mut b = [0u8; SLOT_LEN];
        b[8] = fp;
        b[16..24].copy_from_slice(&obj.to_le_bytes());
        mem.write(new, &b)?;
        if mem.cas(w.last, 0, new)? != 0 {
            return Err(OffloadError::Fault("chain link taken under us".into()));
        }
        Ok(())
    }
}

impl Offload for KvOffload {
    fn name(&self) -> &str {
        "clio-kv"
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        Some(crate::proto::max_result(op))
    }

    /// Look ahead over a batch: every operation's head slot first, then,
    /// from each head (in cache by then), the objects whose fingerprint
    /// matches (whole for a read), so the operations find their slots and
    /// objects in cache instead of waiting on each miss in turn.
    fn prepare(&mut self, mem: &mut OffloadMem<'_>, ops: &[(u16, &[u8])]) {
        let Some(table) = self.table else { return };
        let mut ahead = std::mem::take(&mut self.ahead);
        ahead.clear();
        for &(opn, args) in ops {
            let Ok((key, _)) = decode(args) else { continue };
            let h = hash(key);
            let at = table + (h % self.buckets) * SLOT_LEN as u64;
            mem.prefetch(at, SLOT_LEN);
            ahead.push((at, (h >> 56) as u8, OBJ_HDR + key.len(), opn == op::READ));
        }
        for &(at, fp, want, whole) in &ahead {
            let Ok(s) = Self::read_slot(mem, at) else {
                continue;
            };
            for i in 0..SLOT_ENTRIES {
                if s.vas[i] != 0 && s.fps[i] == fp {
                    let (va, span) = split_entry(s.vas[i]);
                    mem.prefetch(va, if whole { span } else { want.min(span) });
                }
            }
        }
        self.ahead = ahead;
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        opn: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        let (key, value) = decode(args).map_err(OffloadError::Refused)?;
        let no_value = matches!(opn, op::READ | op::DELETE);
        if no_value && !value.is_empty() {
            return Err(OffloadError::Refused(code::BAD_ARGS));
        }
        let w = match opn {
            // A read's value goes into the answer as the walk finds it.
            op::READ => self.find(mem, key, Some(out))?,
            op::CREATE | op::UPDATE | op::DELETE | op::PUT => self.find(mem, key, None)?,
            _ => return Err(OffloadError::Refused(code::BAD_ARGS)),
        };
        self.apply(mem, opn, key, value, &w)
    }
}

impl KvOffload {
    /// Carry out `opn` on what the walk found (a read's value is in the
    /// answer already).
    fn apply(
        &mut self,
        mem: &mut OffloadMem<'_>,
        opn: u16,
        key: &[u8],
        value: &[u8],
        w: &Walk,
    ) -> Result<(), OffloadError> {
        match (opn, &w.found) {
            (op::READ, Some(_)) => Ok(()),
            (op::CREATE, Some(_)) => Err(OffloadError::Refused(code::EXISTS)),
            (op::READ | op::UPDATE | op::DELETE, None) => {
                Err(OffloadError::Refused(code::NOT_FOUND))
            }
            (op::CREATE | op::PUT, None) => {
                let obj = self.write_object(mem, key, value)?;
                self.insert(mem, key, obj, w)?;
                self.keys += 1;
                Ok(())
            }
            (op::UPDATE | op::PUT, Some(f)) => {
                let obj = self.write_object(mem, key, value)?;
                if mem.cas(entry_va(f.slot, f.index), f.entry, obj)? != f.entry {
                    return Err(OffloadError::Fault("entry changed under us".into()));
                }
                self.release(f.obj, OBJ_HDR + key.len() + f.value_len);
                Ok(())
            }
            (op::DELETE, Some(f)) => {
                if mem.cas(entry_va(f.slot, f.index), f.entry, 0)? != f.entry {
                    return Err(OffloadError::Fault("entry changed under us".into()));
                }
                self.release(f.obj, OBJ_HDR + key.len() + f.value_len);
                self.keys -= 1;
                Ok(())
            }
            _ => Err(OffloadError::Refused(code::BAD_ARGS)),
        }
    }
}
