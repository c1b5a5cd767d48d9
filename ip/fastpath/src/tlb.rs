//! The TLB: a content-addressed memory with least-recently-used replacement.
//!
//! In hardware every entry compares its tag `(pid, vpn, page_shift)` in
//! parallel; here a lookup checks the most recently hit entry first and then
//! scans, which gives the same answer. Replacement is exactly specified so
//! the RTL can match it: the victim is the lowest-index invalid entry, else
//! the entry whose last use (lookup hit or insert) is oldest.

/// One translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TlbEntry {
    /// Owning process.
    pub pid: u32,
    /// Virtual page number at `page_shift`.
    pub vpn: u64,
    /// log2 page size.
    pub page_shift: u8,
    /// Physical page number at `page_shift`.
    pub ppn: u32,
    /// Permission bits.
    pub perms: u8,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    valid: bool,
    entry: TlbEntry,
    last_use: u64,
}

/// The TLB.
#[derive(Debug, Clone)]
pub struct Tlb {
    slots: Vec<Slot>,
    clock: u64,
    mru: usize,
}

impl Tlb {
    /// An empty TLB of `entries` entries.
    pub fn new(entries: usize) -> Tlb {
        Tlb {
            slots: vec![Slot::default(); entries.max(1)],
            clock: 0,
            mru: 0,
        }
    }

    /// Number of entries.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Valid entries.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.valid).count()
    }

    /// Whether no entry is valid.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Look up `(pid, vpn, page_shift)`; a hit becomes most recently used.
    #[inline]
    pub fn lookup(&mut self, pid: u32, vpn: u64, page_shift: u8) -> Option<TlbEntry> {
        let hit = |s: &Slot| {
            s.valid && s.entry.pid == pid && s.entry.vpn == vpn && s.entry.page_shift == page_shift
        };
        let i = if hit(&self.slots[self.mru]) {
            self.mru
        } else {
            self.slots.iter().position(hit)?
        };
        let now = self.tick();
        self.slots[i].last_use = now;
        self.mru = i;
        Some(self.slots[i].entry)
    }

    /// Look up `(pid, vpn, page_shift)` without touching the replacement
    /// order (for hints that must leave the TLB's state as it is).
    pub fn peek(&self, pid: u32, vpn: u64, page_shift: u8) -> Option<TlbEntry> {
        self.slots
            .iter()
            .find(|s| {
                s.valid
                    && s.entry.pid == pid
                    && s.entry.vpn == vpn
                    && s.entry.page_shift == page_shift
            })
            .map(|s| s.entry)
    }

    /// Insert (or refresh) a translation; returns the index it went to.
    pub fn insert(&mut self, e: TlbEntry) -> usize {
        let now = self.tick();
        let same = self.slots.iter().position(|s| {
            s.valid
                && s.entry.pid == e.pid
                && s.entry.vpn == e.vpn
                && s.entry.page_shift == e.page_shift
        });
        let i = match same.or_else(|| self.slots.iter().position(|s| !s.valid)) {
            Some(i) => i,
            None => {
                // Oldest last use; ties cannot happen (the clock is strictly increasing).
                let mut best = 0;
                for (i, s) in self.slots.iter().enumerate() {
                    if s.last_use < self.slots[best].last_use {
                        best = i;
                    }
                }
                best
            }
        };
        self.slots[i] = Slot {
            valid: true,
            entry: e,
            last_use: now,
        };
        self.mru = i;
        i
    }

    /// Drop the entry of `(pid, vpn, page_shift)` if present.
    pub fn invalidate(&mut self, pid: u32, vpn: u64, page_shift: u8) -> usize {
        self.invalidate_where(|e| e.pid == pid && e.vpn == vpn && e.page_shift == page_shift)
    }

    /// Drop every entry of `pid` whose VPN (at its own page size) lies in
    /// `[vpn, vpn + pages)`; `pages == 0` drops every entry of `pid`.
    pub fn invalidate_range(&mut self, pid: u32, vpn: u64, pages: u32) -> usize {
        let end = vpn.saturating_add(u64::from(pages));
        self.invalidate_where(|e| e.pid == pid && (pages == 0 || (e.vpn >= vpn && e.vpn < end)))
    }

    fn invalidate_where(&mut self, f: impl Fn(&TlbEntry) -> bool) -> usize {
        let mut n = 0;
        for s in &mut self.slots {
            if s.valid && f(&s.entry) {
                s.valid = false;
                n += 1;
            }
        }
        n
    }

    /// The valid entries with their indices (for tests and co-simulation dumps).
    pub fn entries(&self) -> impl Iterator<Item = (usize, TlbEntry)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.valid)
            .map(|(i, s)| (i, s.entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(pid: u32, vpn: u64) -> TlbEntry {
        TlbEntry {
            pid,
            vpn,
            page_shift: 12,
            ppn: vpn as u32 + 100,
            perms: 3,
        }
    }

    #[test]
    fn hit_miss_and_tag_fields() {
        let mut t = Tlb::new(4);
        t.insert(e(1, 5));
        assert_eq!(t.lookup(1, 5, 12).unwrap().ppn, 105);
        assert!(t.lookup(2, 5, 12).is_none(), "other pid");
        assert!(t.lookup(1, 6, 12).is_none(), "other vpn");
        assert!(t.lookup(1, 5, 22).is_none(), "other page size");
    }

    #[test]
    fn lru_victim_is_oldest_use() {
        let mut t = Tlb::new(3);
        assert_eq!(t.insert(e(1, 1)), 0);
        assert_eq!(t.insert(e(1, 2)), 1);
        assert_eq!(t.insert(e(1, 3)), 2);
        // Touch 1 and 3: entry of vpn 2 is now the oldest.
        t.lookup(1, 1, 12).unwrap();
        t.lookup(1, 3, 12).unwrap();
        assert_eq!(t.insert(e(1, 4)), 1);
        assert!(t.lookup(1, 2, 12).is_none());
        // Now oldest is vpn 1 (used before 3 and 4).
        assert_eq!(t.insert(e(1, 5)), 0);
        // Re-inserting an existing tag refreshes in place.
        assert_eq!(t.insert(TlbEntry { ppn: 9, ..e(1, 5) }), 0);
        assert_eq!(t.lookup(1, 5, 12).unwrap().ppn, 9);
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn invalidation_frees_lowest_slot_first() {
        let mut t = Tlb::new(4);
        for v in 0..4 {
            t.insert(e(7, v));
        }
        assert_eq!(t.invalidate_range(7, 1, 2), 2);
        assert_eq!(t.insert(e(8, 0)), 1);
        assert_eq!(t.invalidate(7, 0, 12), 1);
        assert_eq!(t.invalidate_range(7, 0, 0), 1);
        assert_eq!(t.len(), 1);
    }
}
