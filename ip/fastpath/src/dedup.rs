//! The dedup buffer: responses of executed non-idempotent requests, kept
//! until the client acknowledges them.
//!
//! `dedup_entries` records (from the board config), each keyed by
//! `(session, id, offset, opcode)` where `id` is the request's FIRST-attempt
//! id (`retry_of` if nonzero, else `req_id`). A record is freed only by an
//! acknowledgement of its session (the `ack` watermark of a later request,
//! [`Dedup::ack`]), by the session's close ([`Dedup::clear_session`]) or by
//! a new boot epoch ([`Dedup::clear`]) — never evicted. When no record is
//! free, or the session already holds its quota, the board refuses new
//! non-idempotent requests of that session with `Busy` ([`Dedup::room`]).
//!
//! A request forwarded to the slow path takes its record at intake as a
//! *reservation* ([`Dedup::reserve`]), so the record is sure to fit when the
//! reply comes ([`Dedup::complete`]); a reservation is counted like a record
//! but never answers a lookup.
//!
//! A hash index finds a key in O(1); each session's records form an
//! intrusive list, so an acknowledgement visits only that session's records.
//! Nothing allocates after construction.

use std::collections::HashMap;

use clio_wire::clio::serial_before;

/// Key of a remembered request: the packet it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DedupKey {
    /// Session the request came in.
    pub session: u16,
    /// First-attempt request id (`retry_of` if nonzero, else `req_id`).
    pub id: u32,
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
    key: DedupKey,
    /// `None`: a reservation of a request the slow path still holds.
    rec: Option<Recorded>,
    prev: u32,
    next: u32,
}

/// Why a new non-idempotent request cannot take a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// Every record of the buffer is in use.
    Full,
    /// The session holds as many records as its quota allows.
    Quota,
}

/// The buffer.
#[derive(Debug, Clone)]
pub struct Dedup {
    entries: Vec<Option<Entry>>,
    index: HashMap<DedupKey, u32>,
    free: Vec<u32>,
    /// Per session: first record of its list and records held.
    heads: Vec<u32>,
    counts: Vec<u32>,
}

impl Dedup {
    /// A buffer of `capacity` records for session ids `0..sessions`.
    pub fn new(capacity: usize, sessions: usize) -> Dedup {
        let capacity = capacity.max(1);
        let sessions = sessions.max(1);
        Dedup {
            entries: vec![None; capacity],
            index: HashMap::with_capacity(capacity),
            free: (0..capacity as u32).rev().collect(),
            heads: vec![NIL; sessions],
            counts: vec![0; sessions],
        }
    }

    /// Records it can hold.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Records held (reservations included).
    pub fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.free.len() == self.entries.len()
    }

    /// Records (reservations included) session `s` holds.
    pub fn session_len(&self, s: u16) -> usize {
        self.counts.get(usize::from(s)).map_or(0, |&c| c as usize)
    }

    /// Whether session `s` may take one more record under `quota`.
    pub fn room(&self, s: u16, quota: u16) -> Result<(), NoRoom> {
        if self.free.is_empty() {
            Err(NoRoom::Full)
        } else if self.session_len(s) >= usize::from(quota) {
            Err(NoRoom::Quota)
        } else {
            Ok(())
        }
    }

    /// The completed record of `key`, if remembered.
    #[inline]
    pub fn get(&self, key: &DedupKey) -> Option<Recorded> {
        let i = *self.index.get(key)?;
        self.entries[i as usize].and_then(|e| e.rec)
    }

    /// Whether `key` holds a record or a reservation.
    pub fn contains(&self, key: &DedupKey) -> bool {
        self.index.contains_key(key)
    }

    /// Remember `rec` under `key` (a key already present is overwritten).
    /// False if no record was free (the caller checked [`Dedup::room`] first).
    pub fn insert(&mut self, key: DedupKey, rec: Recorded) -> bool {
        self.put(key, Some(rec))
    }

    /// Reserve the record of a request handed to the slow path.
    pub fn reserve(&mut self, key: DedupKey) -> bool {
        self.put(key, None)
    }

    fn put(&mut self, key: DedupKey, rec: Option<Recorded>) -> bool {
        if let Some(&i) = self.index.get(&key) {
            if let Some(e) = &mut self.entries[i as usize] {
                e.rec = rec;
            }
            return true;
        }
        let s = usize::from(key.session);
        if s >= self.heads.len() {
            return false;
        }
        let Some(i) = self.free.pop() else {
            return false;
        };
        let head = self.heads[s];
        if head != NIL {
            if let Some(h) = &mut self.entries[head as usize] {
                h.prev = i;
            }
        }
        self.entries[i as usize] = Some(Entry {
            key,
            rec,
            prev: NIL,
            next: head,
        });
        self.heads[s] = i;
        self.counts[s] += 1;
        self.index.insert(key, i);
        true
    }

    /// The slow path answered the request reserved under `key`: keep its
    /// response (`Some`) or free the reservation (`None`: it failed and its
    /// retry must execute). Nothing happens if the key was freed meanwhile
    /// (acknowledged, or its session closed).
    pub fn complete(&mut self, key: &DedupKey, rec: Option<Recorded>) {
        let Some(&i) = self.index.get(key) else {
            return;
        };
        match rec {
            Some(r) => {
                if let Some(e) = &mut self.entries[i as usize] {
                    e.rec = Some(r);
                }
            }
            None => self.remove_at(i),
        }
    }

    fn remove_at(&mut self, i: u32) {
        let Some(e) = self.entries[i as usize].take() else {
            return;
        };
        let s = usize::from(e.key.session);
        if e.prev == NIL {
            self.heads[s] = e.next;
        } else if let Some(p) = &mut self.entries[e.prev as usize] {
            p.next = e.next;
        }
        if e.next != NIL {
            if let Some(n) = &mut self.entries[e.next as usize] {
                n.prev = e.prev;
            }
        }
        self.counts[s] -= 1;
        self.index.remove(&e.key);
        self.free.push(i);
    }

    /// Acknowledgement `ack` of session `s`: free every record (reservations
    /// included) whose id is serially before `ack`. Returns records freed.
    pub fn ack(&mut self, s: u16, ack: u32) -> usize {
        let Some(&head) = self.heads.get(usize::from(s)) else {
            return 0;
        };
        let mut freed = 0;
        let mut i = head;
        while i != NIL {
            let Some(e) = self.entries[i as usize] else {
                break;
            };
            if serial_before(e.key.id, ack) {
                self.remove_at(i);
                freed += 1;
            }
            i = e.next;
        }
        freed
    }

    /// Free every record of session `s` (it closed).
    pub fn clear_session(&mut self, s: u16) {
        while let Some(&head) = self.heads.get(usize::from(s)) {
            if head == NIL {
                break;
            }
            self.remove_at(head);
        }
    }

    /// Free every record (a new boot epoch).
    pub fn clear(&mut self) {
        for i in 0..self.entries.len() as u32 {
            self.remove_at(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: u16, id: u32) -> DedupKey {
        DedupKey {
            session: s,
            id,
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
    fn never_evicts_and_reports_full() {
        let mut d = Dedup::new(3, 4);
        for id in 1..=3 {
            assert_eq!(d.room(1, 8), Ok(()));
            assert!(d.insert(k(1, id), r(id as u8)));
        }
        assert_eq!(d.room(1, 8), Err(NoRoom::Full));
        assert_eq!(d.room(2, 8), Err(NoRoom::Full));
        assert!(!d.insert(k(1, 4), r(4)), "a full buffer takes nothing");
        for id in 1..=3 {
            assert_eq!(d.get(&k(1, id)).map(|x| x.status), Some(id as u8));
        }
        // Every key field distinguishes records.
        assert!(d
            .get(&DedupKey {
                offset: 8,
                ..k(1, 2)
            })
            .is_none());
        assert!(d
            .get(&DedupKey {
                opcode: 5,
                ..k(1, 2)
            })
            .is_none());
        assert!(d.get(&k(2, 2)).is_none());
    }

    #[test]
    fn acks_free_only_their_session_and_older_ids() {
        let mut d = Dedup::new(8, 4);
        for id in [u32::MAX - 1, u32::MAX, 1, 2, 3] {
            d.insert(k(1, id), r(1));
        }
        d.insert(k(2, 1), r(2));
        // The watermark wraps: ids before 2 in serial order are freed.
        assert_eq!(d.ack(1, 2), 3);
        assert_eq!(d.session_len(1), 2);
        assert!(d.get(&k(1, 1)).is_none() && d.get(&k(1, u32::MAX)).is_none());
        assert!(d.get(&k(1, 2)).is_some() && d.get(&k(1, 3)).is_some());
        assert!(d.get(&k(2, 1)).is_some(), "another session's record stays");
        assert_eq!(d.ack(1, 2), 0, "acks are idempotent");
        d.clear_session(1);
        assert_eq!((d.session_len(1), d.len()), (0, 1));
        d.clear();
        assert!(d.is_empty());
    }

    #[test]
    fn quota_and_reservations() {
        let mut d = Dedup::new(8, 4);
        d.reserve(k(3, 10));
        assert!(
            d.get(&k(3, 10)).is_none(),
            "a reservation answers no lookup"
        );
        assert!(d.contains(&k(3, 10)));
        d.insert(k(3, 11), r(1));
        assert_eq!(d.room(3, 2), Err(NoRoom::Quota));
        assert_eq!(d.room(3, 3), Ok(()));
        d.complete(&k(3, 10), Some(r(7)));
        assert_eq!(d.get(&k(3, 10)).map(|x| x.status), Some(7));
        d.reserve(k(3, 12));
        d.complete(&k(3, 12), None);
        assert_eq!(d.session_len(3), 2, "a failed reservation is freed");
        d.complete(&k(3, 99), Some(r(1)));
        assert_eq!(
            d.session_len(3),
            2,
            "completing a freed key records nothing"
        );
    }

    #[test]
    fn many_cycles_keep_lists_consistent() {
        let mut d = Dedup::new(16, 4);
        let mut next = [1u32; 4];
        for round in 0..2000u32 {
            let s = (round % 3 + 1) as u16;
            if d.room(s, 6).is_ok() {
                d.insert(k(s, next[s as usize]), r(s as u8));
                next[s as usize] += 1;
            }
            if round % 5 == 0 {
                d.ack(s, next[s as usize] - 2);
            }
            let total: usize = (0..4).map(|s| d.session_len(s)).sum();
            assert_eq!(total, d.len());
            assert!(d.session_len(s) <= 6);
        }
    }
}
