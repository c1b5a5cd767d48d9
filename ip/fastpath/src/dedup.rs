//! The dedup buffer: responses of recently executed non-idempotent requests.
//!
//! A bounded FIFO of `dedup_entries` records (from the board config), each
//! keyed by `(pid, req_id, offset, opcode)`; inserting into a full buffer
//! evicts the oldest record. A hash index with chained records makes lookups
//! O(1); it holds no state beyond the FIFO itself (no allocation after
//! construction).

/// Key of a remembered request: the packet it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DedupKey {
    /// Process.
    pub pid: u32,
    /// Request id the record answers.
    pub req_id: u32,
    /// Offset of the packet within the request (writes; 0 otherwise).
    pub offset: u32,
    /// Raw request opcode.
    pub opcode: u8,
}

/// The remembered response (everything but the ids of the packet that asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    /// Raw response flags (DUPLICATE is added when replayed).
    pub flags: u8,
    /// Raw status.
    pub status: u8,
    /// Response `va`.
    pub va: u64,
    /// Response `total_len`.
    pub total_len: u32,
    /// Response `offset`.
    pub offset: u32,
    /// Response payload length (at most 16).
    pub payload_len: u8,
    /// Response payload bytes.
    pub payload: [u8; 16],
}

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry {
    live: bool,
    key: DedupKey,
    rec: Recorded,
    next: u32,
}

/// The buffer.
#[derive(Debug, Clone)]
pub struct Dedup {
    entries: Vec<Entry>,
    heads: Vec<u32>,
    mask: u64,
    /// Next FIFO position to write (and evict).
    write: usize,
    len: usize,
}

impl Dedup {
    /// A buffer of `capacity` records.
    pub fn new(capacity: usize) -> Dedup {
        let capacity = capacity.max(1);
        let buckets = (capacity * 2).next_power_of_two();
        let blank = Entry {
            live: false,
            key: DedupKey {
                pid: 0,
                req_id: 0,
                offset: 0,
                opcode: 0,
            },
            rec: Recorded::default(),
            next: NIL,
        };
        Dedup {
            entries: vec![blank; capacity],
            heads: vec![NIL; buckets],
            mask: buckets as u64 - 1,
            write: 0,
            len: 0,
        }
    }

    /// Records it can hold.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn bucket(&self, k: &DedupKey) -> usize {
        let x =
            (u64::from(k.pid) << 32 | u64::from(k.req_id)) ^ u64::from(k.offset).rotate_left(17);
        (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32 & self.mask) as usize
    }

    /// The record of `key`, if remembered.
    #[inline]
    pub fn get(&self, key: &DedupKey) -> Option<Recorded> {
        let mut i = self.heads[self.bucket(key)];
        while i != NIL {
            let e = &self.entries[i as usize];
            if e.live && e.key == *key {
                return Some(e.rec);
            }
            i = e.next;
        }
        None
    }

    /// Remember `rec` under `key`, evicting the oldest record when full. A
    /// key already present is overwritten in place.
    pub fn insert(&mut self, key: DedupKey, rec: Recorded) {
        let b = self.bucket(&key);
        let mut i = self.heads[b];
        while i != NIL {
            let e = &mut self.entries[i as usize];
            if e.live && e.key == key {
                e.rec = rec;
                return;
            }
            i = e.next;
        }
        let w = self.write;
        if self.entries[w].live {
            self.unlink(w);
        } else {
            self.len += 1;
        }
        self.entries[w] = Entry {
            live: true,
            key,
            rec,
            next: self.heads[b],
        };
        self.heads[b] = w as u32;
        self.write = (w + 1) % self.entries.len();
    }

    fn unlink(&mut self, w: usize) {
        let b = self.bucket(&self.entries[w].key);
        let next = self.entries[w].next;
        if self.heads[b] == w as u32 {
            self.heads[b] = next;
        } else {
            let mut i = self.heads[b];
            while i != NIL {
                if self.entries[i as usize].next == w as u32 {
                    self.entries[i as usize].next = next;
                    break;
                }
                i = self.entries[i as usize].next;
            }
        }
        self.entries[w].live = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(id: u32) -> DedupKey {
        DedupKey {
            pid: 1,
            req_id: id,
            offset: 0,
            opcode: 4,
        }
    }

    fn r(v: u8) -> Recorded {
        Recorded {
            status: v,
            ..Recorded::default()
        }
    }

    #[test]
    fn fifo_eviction_and_lookup() {
        let mut d = Dedup::new(3);
        for id in 1..=3 {
            d.insert(k(id), r(id as u8));
        }
        assert_eq!(d.len(), 3);
        assert_eq!(d.get(&k(2)).unwrap().status, 2);
        d.insert(k(4), r(4));
        assert!(d.get(&k(1)).is_none(), "oldest evicted");
        assert_eq!(d.get(&k(4)).unwrap().status, 4);
        assert_eq!(d.len(), 3);
        // Every key field distinguishes records.
        assert!(d.get(&DedupKey { offset: 8, ..k(2) }).is_none());
        assert!(d.get(&DedupKey { opcode: 5, ..k(2) }).is_none());
        assert!(d.get(&DedupKey { pid: 2, ..k(2) }).is_none());
    }

    #[test]
    fn many_laps_keep_index_consistent() {
        let mut d = Dedup::new(7);
        for id in 0..1000u32 {
            d.insert(k(id), r(id as u8));
            for back in 0..7u32.min(id + 1) {
                assert!(d.get(&k(id - back)).is_some(), "id {id} back {back}");
            }
            if id >= 7 {
                assert!(d.get(&k(id - 7)).is_none());
            }
        }
    }
}
