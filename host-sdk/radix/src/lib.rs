//! A radix tree in Clio remote memory, searched with one pointer chase
//! (`rchase`, executed by the board) per level.
//!
//! Keys are `levels × bits` bits wide (at most 64) and split into `levels`
//! chunks of `bits` bits, most significant first. Every tree node (a
//! "level list") is a linked list in remote memory of 24-byte entries:
//!
//! ```text
//! offset 0   key    u64 LE   the key chunk (SENTINEL in a list's first entry)
//! offset 8   next   u64 LE   next entry of the same list, 0 ends it
//! offset 16  child  u64 LE   the child list's first entry; at the last level, the value
//! ```
//!
//! Each list starts with a sentinel entry whose key ([`SENTINEL`]) never
//! equals a chunk, so a list's address never changes: a parent's `child`
//! pointer is written once, and inserting into a list links the new entry
//! right after its sentinel. [`RadixTree::get`] looks a key up with one
//! `rchase` per level (the board compares the level's chunk at offset 0,
//! follows `next` at offset 8 and returns the 8-byte `child` at offset 16:
//! the next level's list, or the value), so a lookup is `levels` round
//! trips whatever the lists' lengths. [`RadixTree::get_rread`] walks the same
//! lists with client-side `rread`s, one round trip per entry visited: the
//! baseline. [`RadixTree::insert`] builds the tree from the client with
//! `rwrite` (a new key's missing levels are written as one block, then
//! linked into the existing list by one 8-byte write).
//!
//! A list holds at most `2^bits + 1` entries (its sentinel and one per chunk
//! value), so every walk is capped at [`RadixTree::max_hops`] = `2^bits + 2`
//! entries: a walk that reaches the cap (the chase's `HopLimit`) has met a
//! cycle or a corrupt chain and fails with [`RadixError::Corrupt`]. A pointer
//! outside the address space fails with the board's `UNMAPPED`
//! ([`RadixError::Remote`] holding [`clio::ClioError::Unmapped`]).
//!
//! One writer at a time: inserts are not atomic with respect to concurrent
//! inserts of other sessions (readers in other sessions see either the old
//! or the new list, since a new entry is complete before the 8-byte write
//! that links it).

use clio::backend::Transport;
use clio::{ChaseOutcome, ChaseRequest, ClioError, Session};
use clio_wire::payload::perms;

/// Bytes of one list entry.
pub const ENTRY_LEN: u64 = 24;
/// Offset of the key chunk in an entry.
pub const KEY_OFFSET: u16 = 0;
/// Offset of the next pointer in an entry.
pub const NEXT_OFFSET: u16 = 8;
/// Offset of the child pointer (or, at the last level, the value).
pub const CHILD_OFFSET: u16 = 16;
/// Key of every list's first (sentinel) entry; no key chunk equals it.
pub const SENTINEL: u64 = u64::MAX;
/// Largest `bits` per level (a list's walk must fit the wire's 4096 hops).
pub const MAX_BITS: u8 = 11;
/// Bytes the tree allocates at a time for its entries (the board rounds
/// up to whole pages).
pub const ARENA_BYTES: u64 = 1 << 20;

/// What can go wrong in a tree operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RadixError {
    /// A remote operation of a lookup or insert at `level` failed (e.g. a
    /// pointer outside the address space: [`ClioError::Unmapped`]).
    #[error("radix level {level}: {source}")]
    Remote {
        /// Tree level (0 = root).
        level: u8,
        /// The SDK's error.
        source: ClioError,
    },
    /// The list at `list` of `level` did not end within
    /// [`RadixTree::max_hops`] entries (a cycle or a corrupt chain), or an
    /// inner entry's child pointer is null.
    #[error("radix level {level}: corrupt list at {list:#x} (stopped after {hops} entries)")]
    Corrupt {
        /// Tree level (0 = root).
        level: u8,
        /// VA of the list's sentinel entry.
        list: u64,
        /// Entries visited.
        hops: u32,
    },
    /// The key has bits above the tree's key width.
    #[error("key {key:#x} is wider than the tree's {width} bits")]
    KeyTooWide {
        /// The key.
        key: u64,
        /// The tree's key width.
        width: u32,
    },
    /// `levels` and `bits` do not describe a tree.
    #[error("radix layout: {0}")]
    Layout(&'static str),
    /// Setting up the tree's memory failed (allocation, the root's write).
    #[error("radix setup: {0}")]
    Setup(ClioError),
}

/// A radix tree in one address space of a board. The handle holds the
/// root's VA, the layout and the arena new entries are taken from; the
/// entries themselves live in remote memory.
#[derive(Debug, Clone)]
pub struct RadixTree {
    root: u64,
    levels: u8,
    bits: u8,
    arena: u64,
    arena_end: u64,
}

fn le(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

fn entry(out: &mut Vec<u8>, key: u64, next: u64, child: u64) {
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&next.to_le_bytes());
    out.extend_from_slice(&child.to_le_bytes());
}

impl RadixTree {
    fn check_layout(levels: u8, bits: u8) -> Result<(), RadixError> {
        if levels == 0 {
            return Err(RadixError::Layout("levels must be at least 1"));
        }
        if bits == 0 || bits > MAX_BITS {
            return Err(RadixError::Layout("bits per level must be in 1..=11"));
        }
        if u32::from(levels) * u32::from(bits) > 64 {
            return Err(RadixError::Layout("levels × bits must be at most 64"));
        }
        Ok(())
    }

    /// Create an empty tree of `levels` levels of `bits` bits each in the
    /// session's address space: allocates an arena and writes the root
    /// list's sentinel.
    pub fn create<T: Transport>(
        s: &mut Session<T>,
        levels: u8,
        bits: u8,
    ) -> Result<RadixTree, RadixError> {
        Self::check_layout(levels, bits)?;
        let mut t = RadixTree {
            root: 0,
            levels,
            bits,
            arena: 0,
            arena_end: 0,
        };
        let root = t.take(s, ENTRY_LEN).map_err(RadixError::Setup)?;
        let mut b = Vec::with_capacity(ENTRY_LEN as usize);
        entry(&mut b, SENTINEL, 0, 0);
        s.rwrite(root, &b).map_err(RadixError::Setup)?;
        t.root = root;
        Ok(t)
    }

    /// A handle on a tree another handle created (e.g. in a session that
    /// joined the creator's address space), from its root VA and layout.
    /// Inserts through it allocate their own arena.
    pub fn open(root: u64, levels: u8, bits: u8) -> Result<RadixTree, RadixError> {
        Self::check_layout(levels, bits)?;
        Ok(RadixTree {
            root,
            levels,
            bits,
            arena: 0,
            arena_end: 0,
        })
    }

    /// VA of the root list's sentinel entry.
    pub fn root(&self) -> u64 {
        self.root
    }

    /// Levels (key chunks per key).
    pub fn levels(&self) -> u8 {
        self.levels
    }

    /// Bits per key chunk.
    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// Key width in bits (`levels × bits`).
    pub fn key_bits(&self) -> u32 {
        u32::from(self.levels) * u32::from(self.bits)
    }

    /// Most entries one list walk visits: `2^bits + 2`, one more than the
    /// longest legitimate list (its sentinel and every chunk value).
    pub fn max_hops(&self) -> u32 {
        (1u32 << self.bits) + 2
    }

    /// The key's chunk at `level` (0 = most significant).
    pub fn chunk(&self, key: u64, level: u8) -> u64 {
        let shift = u32::from(self.bits) * u32::from(self.levels - 1 - level);
        (key >> shift) & ((1u64 << self.bits) - 1)
    }

    fn check_key(&self, key: u64) -> Result<(), RadixError> {
        let width = self.key_bits();
        if width < 64 && key >> width != 0 {
            return Err(RadixError::KeyTooWide { key, width });
        }
        Ok(())
    }

    /// `len` bytes of fresh remote memory from the arena.
    fn take<T: Transport>(&mut self, s: &mut Session<T>, len: u64) -> Result<u64, ClioError> {
        if self.arena == 0 || self.arena + len > self.arena_end {
            let a = s.ralloc(ARENA_BYTES.max(len), perms::RW)?;
            self.arena = a.va;
            self.arena_end = a.va + a.size;
        }
        let va = self.arena;
        self.arena += len;
        Ok(va)
    }

    /// The chase that looks `key`'s chunk up in the list at `list`.
    fn chase_req(&self, list: u64, chunk: u64) -> ChaseRequest {
        ChaseRequest {
            va: list,
            key: chunk,
            key_offset: KEY_OFFSET,
            next_offset: NEXT_OFFSET,
            value_offset: CHILD_OFFSET,
            value_len: 8,
            max_hops: self.max_hops(),
        }
    }

    /// One level of a chase lookup: `Some((entry VA, child))` or `None`.
    fn chase_level<T: Transport>(
        &self,
        s: &mut Session<T>,
        level: u8,
        list: u64,
        chunk: u64,
    ) -> Result<Option<(u64, u64)>, RadixError> {
        let r = s
            .rchase(&self.chase_req(list, chunk))
            .map_err(|source| RadixError::Remote { level, source })?;
        match r.outcome {
            ChaseOutcome::Found { node_va, value } => Ok(Some((node_va, le(&value)))),
            ChaseOutcome::End => Ok(None),
            ChaseOutcome::HopLimit => Err(RadixError::Corrupt {
                level,
                list,
                hops: r.hops,
            }),
        }
    }

    /// The list of the next level from an inner entry's child pointer.
    fn descend(level: u8, list: u64, child: u64, hops: u32) -> Result<u64, RadixError> {
        if child == 0 {
            return Err(RadixError::Corrupt { level, list, hops });
        }
        Ok(child)
    }

    /// Look `key` up with one `rchase` per level (`levels` round trips).
    pub fn get<T: Transport>(
        &self,
        s: &mut Session<T>,
        key: u64,
    ) -> Result<Option<u64>, RadixError> {
        self.check_key(key)?;
        let mut list = self.root;
        for level in 0..self.levels {
            match self.chase_level(s, level, list, self.chunk(key, level))? {
                None => return Ok(None),
                Some((_, child)) if level + 1 == self.levels => return Ok(Some(child)),
                Some((_, child)) => list = Self::descend(level, list, child, 0)?,
            }
        }
        Ok(None)
    }

    /// Look `key` up by walking the same lists with client-side `rread`s of
    /// whole entries: one round trip per entry visited (the baseline that
    /// [`RadixTree::get`] replaces). Same results and errors.
    pub fn get_rread<T: Transport>(
        &self,
        s: &mut Session<T>,
        key: u64,
    ) -> Result<Option<u64>, RadixError> {
        self.check_key(key)?;
        let mut list = self.root;
        let mut e = [0u8; ENTRY_LEN as usize];
        for level in 0..self.levels {
            let chunk = self.chunk(key, level);
            let mut cur = list;
            let mut hops = 0u32;
            let child = loop {
                if hops == self.max_hops() {
                    return Err(RadixError::Corrupt { level, list, hops });
                }
                hops += 1;
                s.rread(cur, &mut e)
                    .map_err(|source| RadixError::Remote { level, source })?;
                if le(&e[KEY_OFFSET as usize..]) == chunk {
                    break le(&e[CHILD_OFFSET as usize..]);
                }
                match le(&e[NEXT_OFFSET as usize..]) {
                    0 => return Ok(None),
                    n => cur = n,
                }
            };
            if level + 1 == self.levels {
                return Ok(Some(child));
            }
            list = Self::descend(level, list, child, hops)?;
        }
        Ok(None)
    }

    /// Insert `key` → `value` (or replace its value); returns the value it
    /// had. Finds the existing path with one `rchase` per level, then
    /// writes what is missing with `rwrite`: the new entry of the first
    /// missing level and a sentinel and entry for every level below, as one
    /// block, then links the new entry after its list's sentinel.
    pub fn insert<T: Transport>(
        &mut self,
        s: &mut Session<T>,
        key: u64,
        value: u64,
    ) -> Result<Option<u64>, RadixError> {
        self.check_key(key)?;
        let last = self.levels - 1;
        let mut list = self.root;
        for level in 0..self.levels {
            let chunk = self.chunk(key, level);
            match self.chase_level(s, level, list, chunk)? {
                Some((node, old)) if level == last => {
                    s.rwrite(node + u64::from(CHILD_OFFSET), &value.to_le_bytes())
                        .map_err(|source| RadixError::Remote { level, source })?;
                    return Ok(Some(old));
                }
                Some((_, child)) => list = Self::descend(level, list, child, 0)?,
                None => {
                    self.graft(s, level, list, key, value)?;
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }

    /// Write the levels `from..` of `key` as one block and link it into the
    /// list at `list` (whose sentinel's `next` it takes over).
    fn graft<T: Transport>(
        &mut self,
        s: &mut Session<T>,
        from: u8,
        list: u64,
        key: u64,
        value: u64,
    ) -> Result<(), RadixError> {
        let remote = |source| RadixError::Remote {
            level: from,
            source,
        };
        let mut w = [0u8; 8];
        s.rread(list + u64::from(NEXT_OFFSET), &mut w)
            .map_err(remote)?;
        let old_next = u64::from_le_bytes(w);
        let below = u64::from(self.levels - 1 - from);
        let len = ENTRY_LEN + below * 2 * ENTRY_LEN;
        let at = self.take(s, len).map_err(remote)?;
        let mut b = Vec::with_capacity(len as usize);
        // The new entry of level `from`, then (sentinel, entry) per level below.
        let sentinel_of = |k: u64| at + ENTRY_LEN + k * 2 * ENTRY_LEN;
        let first_child = if below == 0 { value } else { sentinel_of(0) };
        entry(&mut b, self.chunk(key, from), old_next, first_child);
        for k in 0..below {
            let level = from + 1 + k as u8;
            let sentinel = sentinel_of(k);
            entry(&mut b, SENTINEL, sentinel + ENTRY_LEN, 0);
            let child = if k + 1 == below {
                value
            } else {
                sentinel_of(k + 1)
            };
            entry(&mut b, self.chunk(key, level), 0, child);
        }
        s.rwrite(at, &b).map_err(remote)?;
        s.rwrite(list + u64::from(NEXT_OFFSET), &at.to_le_bytes())
            .map_err(remote)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_chunks() {
        assert!(RadixTree::open(0, 0, 8).is_err());
        assert!(RadixTree::open(0, 8, 0).is_err());
        assert!(RadixTree::open(0, 8, 12).is_err());
        assert!(RadixTree::open(0, 7, 10).is_err());
        let t = RadixTree::open(64, 8, 8).unwrap();
        assert_eq!(t.key_bits(), 64);
        assert_eq!(t.max_hops(), 258);
        assert_eq!(t.chunk(0x0102_0304_0506_0708, 0), 1);
        assert_eq!(t.chunk(0x0102_0304_0506_0708, 7), 8);
        let t = RadixTree::open(64, 3, 4).unwrap();
        assert_eq!(t.chunk(0xabc, 0), 0xa);
        assert_eq!(t.chunk(0xabc, 2), 0xc);
        assert_eq!(
            t.check_key(0x1000),
            Err(RadixError::KeyTooWide {
                key: 0x1000,
                width: 12
            })
        );
    }
}
