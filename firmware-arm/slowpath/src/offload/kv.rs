//! Clio-KV's store (dissertation §3.6), `no_std`: the one implementation of
//! its algorithm, run by the firmware ([`super::OffloadHost`], offload id
//! [`OFFLOAD_ID`]) and wrapped by the emulator's `clio_kv::KvOffload`. Moved
//! here unchanged in behaviour from `host-sdk/kv/src/offload.rs` (issue #16),
//! with its heap uses made bounded: the object buffer is [`OBJ_MAX`] bytes,
//! each size class's free list holds `F` VAs (a VA freed beyond that is not
//! reused), errors carry static texts.
//!
//! Layout in its address space (reached only through [`OffloadMemory`]):
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
//! in place. Calls are served one at a time, so a replaced object's memory
//! can be reused at once (no reader is between its two reads).

use super::{Carver, Fault, MemFault, Offload, OffloadError, OffloadMemory, Results};

use proto::{code, decode, hash, op};

/// Clio-KV's offload id.
pub const OFFLOAD_ID: u32 = 1;
/// Longest key.
pub const MAX_KEY: usize = 250;
/// Longest value.
pub const MAX_VALUE: usize = 1024;

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
/// Largest object: header, longest key and value, rounded to a class.
pub const OBJ_MAX: usize = (OBJ_HDR + MAX_KEY + MAX_VALUE).div_ceil(CLASS) * CLASS;
/// Operations of a batch [`KvStore`]'s look-ahead covers at a time.
const AHEAD: usize = 32;
/// Size classes of the allocator (objects and slots).
const CLASSES: usize = OBJ_MAX / CLASS + 1;

/// Clio-KV's call format: the arguments after the `OffloadCallReq` of an
/// `OFFLOAD_CALL` to [`OFFLOAD_ID`], and its refusal codes.
///
/// Arguments (big-endian): `key_len: u16`, `reserved: u16 = 0`,
/// `value_len: u32`, then `key_len` key bytes and `value_len` value bytes
/// (`value_len` is 0 for read and delete). A read's result is the value;
/// the other operations return nothing.
pub mod proto {
    /// Operations (the `op` of the `OffloadCallReq`).
    pub mod op {
        /// Insert a key that must not exist.
        pub const CREATE: u16 = 1;
        /// Replace the value of a key that must exist.
        pub const UPDATE: u16 = 2;
        /// Read a key's value.
        pub const READ: u16 = 3;
        /// Remove a key that must exist.
        pub const DELETE: u16 = 4;
        /// Insert or replace.
        pub const PUT: u16 = 5;
    }

    /// Refusal codes (the `code` of an `OFFLOAD_REFUSED` answer).
    pub mod code {
        /// The key is longer than [`super::super::MAX_KEY`] (or empty).
        pub const KEY_TOO_LONG: u16 = 1;
        /// The value is longer than [`super::super::MAX_VALUE`].
        pub const VALUE_TOO_LONG: u16 = 2;
        /// No such key.
        pub const NOT_FOUND: u16 = 3;
        /// The key exists already (create).
        pub const EXISTS: u16 = 4;
        /// The arguments do not parse (lengths disagree, reserved bits set,
        /// unknown operation, a value on a read or delete).
        pub const BAD_ARGS: u16 = 5;
        /// The store's address space is out of memory or over its quota.
        pub const FULL: u16 = 6;
    }

    /// Most result bytes operation `op` returns: a read's value (at most
    /// [`super::MAX_VALUE`]), nothing for the others. The store declares it
    /// to the board and the client packs batches by it, so a batch's answer
    /// is sized by what its operations can return rather than a packet each.
    pub fn max_result(op: u16) -> usize {
        if op == op::READ {
            super::MAX_VALUE
        } else {
            0
        }
    }

    /// Length of the fixed part of the arguments.
    pub const ARGS_LEN: usize = 8;

    /// Decode arguments into (key, value); `Err(code)` names what is wrong.
    pub fn decode(args: &[u8]) -> Result<(&[u8], &[u8]), u16> {
        if args.len() < ARGS_LEN || args[2..4] != [0, 0] {
            return Err(code::BAD_ARGS);
        }
        let k = u16::from_be_bytes([args[0], args[1]]) as usize;
        let v = u32::from_be_bytes([args[4], args[5], args[6], args[7]]) as usize;
        if args.len() != ARGS_LEN + k + v {
            return Err(code::BAD_ARGS);
        }
        if k == 0 || k > super::MAX_KEY {
            return Err(code::KEY_TOO_LONG);
        }
        if v > super::MAX_VALUE {
            return Err(code::VALUE_TOO_LONG);
        }
        Ok((&args[ARGS_LEN..ARGS_LEN + k], &args[ARGS_LEN + k..]))
    }

    /// 64-bit FNV-1a: the store's bucket hash and fingerprint.
    pub fn hash(key: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in key {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}

fn broken(what: &'static str) -> OffloadError {
    OffloadError::Fault(Fault::Broken(what))
}

/// The entry publishing the object at `va` of `len` bytes.
fn entry_of(va: u64, len: usize) -> Result<u64, OffloadError> {
    let units = len.div_ceil(CLASS) as u64;
    if va >> LEN_SHIFT != 0 || units >> (64 - LEN_SHIFT) != 0 {
        return Err(broken("object does not fit a slot entry"));
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
    fn parse(b: &[u8; SLOT_LEN]) -> Slot {
        let w = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let mut s = Slot {
            next: w(0),
            ..Slot::default()
        };
        s.fps.copy_from_slice(&b[8..8 + SLOT_ENTRIES]);
        for i in 0..SLOT_ENTRIES {
            s.vas[i] = w(16 + 8 * i);
        }
        s
    }
}

/// Compare the object in `o` (its header and key; with `value`, all of
/// it) with `key`: for the key's object its value's length (the value
/// appended to `value`), for another key's `None`; a fault if the header
/// claims a value past the entry's `span` or the value does not fit the
/// answer.
fn match_object(
    o: &[u8],
    key: &[u8],
    span: usize,
    value: Option<&mut Results<'_>>,
) -> Result<Option<usize>, OffloadError> {
    let want = OBJ_HDR + key.len();
    let (Some(hdr), Some(k)) = (o.get(..OBJ_HDR), o.get(OBJ_HDR..want)) else {
        return Err(broken("object shorter than its key"));
    };
    let klen = u16::from_le_bytes([hdr[0], hdr[1]]) as usize;
    if klen != key.len() || k != key {
        return Ok(None);
    }
    let vlen = u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]) as usize;
    if want + vlen > span {
        return Err(broken("object is longer than its entry says"));
    }
    if let Some(out) = value {
        let v = o
            .get(want..want + vlen)
            .ok_or(broken("object shorter than its entry"))?;
        out.push(v)?;
    }
    Ok(Some(vlen))
}

fn fp_va(slot: u64, i: usize) -> u64 {
    slot + 8 + i as u64
}
fn entry_va(slot: u64, i: usize) -> u64 {
    slot + 16 + 8 * i as u64
}

fn full_or_fault(e: MemFault) -> OffloadError {
    e.refused_if_full(code::FULL)
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

/// Clio-KV's store, keeping up to `F` freed VAs per size class for reuse.
#[derive(Debug)]
pub struct KvStore<const F: usize> {
    buckets: u64,
    table: Option<u64>,
    chunks: Carver,
    free: [heapless::Vec<u64, F>; CLASSES],
    keys: u64,
    /// The object buffer of the call in progress.
    obj: [u8; OBJ_MAX],
}

impl<const F: usize> Default for KvStore<F> {
    fn default() -> Self {
        KvStore::new(DEFAULT_BUCKETS)
    }
}

impl<const F: usize> KvStore<F> {
    /// A store of `buckets` head slots (at least 1); nothing is allocated
    /// until the first call.
    pub const fn new(buckets: u64) -> Self {
        KvStore {
            buckets: if buckets == 0 { 1 } else { buckets },
            table: None,
            chunks: Carver::new(),
            free: [const { heapless::Vec::new() }; CLASSES],
            keys: 0,
            obj: [0; OBJ_MAX],
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

    fn table(&mut self, mem: &mut dyn OffloadMemory) -> Result<u64, OffloadError> {
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

    fn alloc(&mut self, mem: &mut dyn OffloadMemory, len: usize) -> Result<u64, OffloadError> {
        let class = len.div_ceil(CLASS);
        if let Some(va) = self.free.get_mut(class).and_then(heapless::Vec::pop) {
            return Ok(va);
        }
        let bytes = (class * CLASS) as u64;
        self.chunks.carve(mem, bytes, CHUNK).map_err(full_or_fault)
    }

    fn release(&mut self, va: u64, len: usize) {
        let class = len.div_ceil(CLASS);
        // A full list (or a class past the largest object) forgets the VA:
        // its memory stays in the store's address space, unused.
        if let Some(list) = self.free.get_mut(class) {
            let _ = list.push(va);
        }
    }

    fn read_slot(mem: &mut dyn OffloadMemory, va: u64) -> Result<Slot, MemFault> {
        let mut b = [0u8; SLOT_LEN];
        mem.read(va, &mut b)?;
        Ok(Slot::parse(&b))
    }

    fn head(&mut self, mem: &mut dyn OffloadMemory, h: u64) -> Result<u64, OffloadError> {
        let t = self.table(mem)?;
        Ok(t + (h % self.buckets) * SLOT_LEN as u64)
    }

    /// Walk the key's chain: a slot at a time, then the object of each
    /// entry whose fingerprint matches (with `value`, all of it — header,
    /// key and value in one request — and the key's value is appended to
    /// `value`, from where it lies when `mem` can hand it over in place;
    /// else header and key). Also says where an insert goes.
    fn find(
        &mut self,
        mem: &mut dyn OffloadMemory,
        key: &[u8],
        mut value: Option<&mut Results<'_>>,
    ) -> Result<Walk, OffloadError> {
        let whole = value.is_some();
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
                if span > OBJ_MAX {
                    return Err(broken("slot entry longer than any object"));
                }
                let len = if whole { span } else { want };
                let mut seen = Ok(None);
                let mut look = |o: &[u8]| seen = match_object(o, key, span, value.as_deref_mut());
                match mem.read_in_place(va, len, &mut look) {
                    Some(r) => r?,
                    None => {
                        let obj = &mut self.obj[..len];
                        mem.read(va, obj)?;
                        look(obj);
                    }
                }
                if let Some(vlen) = seen? {
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
                    });
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
        Err(broken("hash chain does not end"))
    }

    fn write_object(
        &mut self,
        mem: &mut dyn OffloadMemory,
        key: &[u8],
        value: &[u8],
    ) -> Result<u64, OffloadError> {
        let len = OBJ_HDR + key.len() + value.len();
        let va = self.alloc(mem, len)?;
        let entry = entry_of(va, len)?;
        let b = &mut self.obj[..len];
        b[0..2].copy_from_slice(&(key.len() as u16).to_le_bytes());
        b[2..4].copy_from_slice(&[0, 0]);
        b[4..8].copy_from_slice(&(value.len() as u32).to_le_bytes());
        b[OBJ_HDR..OBJ_HDR + key.len()].copy_from_slice(key);
        b[OBJ_HDR + key.len()..].copy_from_slice(value);
        mem.write(va, b)?;
        Ok(entry)
    }

    /// Publish `obj` (an entry: VA and length) into the free entry the walk
    /// found, or into a new slot linked after the chain's last one.
    fn insert(
        &mut self,
        mem: &mut dyn OffloadMemory,
        key: &[u8],
        obj: u64,
        w: &Walk,
    ) -> Result<(), OffloadError> {
        let fp = (hash(key) >> 56) as u8;
        if let Some((slot, i)) = w.free {
            // The fingerprint first: an entry counts only once its VA is set.
            mem.write(fp_va(slot, i), &[fp])?;
            if mem.cas(entry_va(slot, i), 0, obj)? != 0 {
                return Err(broken("slot entry taken under us"));
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
            return Err(broken("chain link taken under us"));
        }
        Ok(())
    }

    /// Carry out `opn` on what the walk found (a read's value is in the
    /// answer already).
    fn apply(
        &mut self,
        mem: &mut dyn OffloadMemory,
        opn: u16,
        key: &[u8],
        value: &[u8],
        w: &Walk,
    ) -> Result<(), OffloadError> {
        match (opn, &w.found) {
            // The walk appended the value to the answer.
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
                    return Err(broken("entry changed under us"));
                }
                self.release(f.obj, OBJ_HDR + key.len() + f.value_len);
                Ok(())
            }
            (op::DELETE, Some(f)) => {
                if mem.cas(entry_va(f.slot, f.index), f.entry, 0)? != f.entry {
                    return Err(broken("entry changed under us"));
                }
                self.release(f.obj, OBJ_HDR + key.len() + f.value_len);
                self.keys -= 1;
                Ok(())
            }
            _ => Err(OffloadError::Refused(code::BAD_ARGS)),
        }
    }
}

impl<const F: usize> Offload for KvStore<F> {
    fn name(&self) -> &'static str {
        "clio-kv"
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        Some(proto::max_result(op))
    }

    /// Look ahead over a batch, `AHEAD` (32) operations at a time: every
    /// operation's head slot first, then, from each head (in cache by
    /// then), the objects whose fingerprint matches (whole for a read), so
    /// the operations find their slots and objects in cache instead of
    /// waiting on each miss in turn. Reads only; a failed read skips its
    /// operation.
    fn prepare(&mut self, mem: &mut dyn OffloadMemory, ops: &[(u16, &[u8])]) {
        let Some(table) = self.table else { return };
        for window in ops.chunks(AHEAD) {
            // Head slot, fingerprint, header and key bytes, whether a read.
            let mut ahead = heapless::Vec::<(u64, u8, usize, bool), AHEAD>::new();
            for &(opn, args) in window {
                let Ok((key, _)) = decode(args) else { continue };
                let h = hash(key);
                let at = table + (h % self.buckets) * SLOT_LEN as u64;
                mem.prefetch(at, SLOT_LEN);
                let _ = ahead.push((at, (h >> 56) as u8, OBJ_HDR + key.len(), opn == op::READ));
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
        }
    }

    fn call(
        &mut self,
        mem: &mut dyn OffloadMemory,
        opn: u16,
        args: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        let (key, value) = decode(args).map_err(OffloadError::Refused)?;
        let no_value = matches!(opn, op::READ | op::DELETE);
        if no_value && !value.is_empty() {
            return Err(OffloadError::Refused(code::BAD_ARGS));
        }
        let w = match opn {
            // A read's value goes into the answer as the walk finds it.
            op::READ => self.find(mem, key, Some(&mut *out))?,
            op::CREATE | op::UPDATE | op::DELETE | op::PUT => self.find(mem, key, None)?,
            _ => return Err(OffloadError::Refused(code::BAD_ARGS)),
        };
        self.apply(mem, opn, key, value, &w)
    }
}
