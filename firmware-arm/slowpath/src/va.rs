//! Per-PID VA bookkeeping: the table of live ranges (the slow path's vma
//! tree) and the table of PIDs with their next-fit cursors.
//!
//! The range table is one sorted array over all PIDs, keyed by
//! `(pid, start)`: lookups are a binary search, O(log n); insert and remove
//! shift the tail, O(log n) + a memmove of at most `n` 24-byte records (n =
//! live ranges, capped by `max_ranges`). The PID table is open addressing
//! with linear probing and backward-shift deletion, O(1) expected.

use crate::words::take;
use crate::SlowPathError;
use clio_wire::pte::MAX_PAGE_CLASSES;

/// One live VA range of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VaRange {
    /// Owner.
    pub pid: u32,
    /// First VA (a multiple of the page size).
    pub start: u64,
    /// Pages of `1 << page_shift` bytes.
    pub pages: u64,
    /// log2 of the page size.
    pub page_shift: u8,
    /// [`clio_wire::payload::perms`] bits.
    pub perms: u8,
}

impl VaRange {
    /// Bytes covered.
    pub const fn bytes(&self) -> u64 {
        self.pages << self.page_shift
    }
    /// One past the last VA.
    pub const fn end(&self) -> u64 {
        self.start + self.bytes()
    }
    /// First VPN.
    pub const fn vpn(&self) -> u64 {
        self.start >> self.page_shift
    }
}

/// The sorted range table.
#[derive(Debug)]
pub struct RangeTable<'a> {
    w: &'a mut [u64],
    len: usize,
}

impl<'a> RangeTable<'a> {
    pub(crate) fn new(w: &'a mut [u64]) -> Self {
        RangeTable { w, len: 0 }
    }

    /// Live ranges.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no range is live.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Most ranges the table can hold.
    pub fn capacity(&self) -> usize {
        self.w.len() / 3
    }

    /// Range number `i` in `(pid, start)` order.
    pub fn get(&self, i: usize) -> VaRange {
        let w = &self.w[3 * i..3 * i + 3];
        VaRange {
            start: w[0],
            pages: w[1],
            pid: w[2] as u32,
            perms: (w[2] >> 32) as u8,
            page_shift: (w[2] >> 40) as u8,
        }
    }

    fn put(&mut self, i: usize, r: &VaRange) {
        let w = &mut self.w[3 * i..3 * i + 3];
        w[0] = r.start;
        w[1] = r.pages;
        w[2] = r.pid as u64 | (r.perms as u64) << 32 | (r.page_shift as u64) << 40;
    }

    fn key(&self, i: usize) -> (u32, u64) {
        (self.w[3 * i + 2] as u32, self.w[3 * i])
    }

    /// First index whose key is `>= (pid, va)`.
    pub fn lower_bound(&self, pid: u32, va: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < (pid, va) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the first range of `pid` that ends after `va` (it contains
    /// `va` or lies above it).
    pub fn first_ending_after(&self, pid: u32, va: u64) -> Option<usize> {
        let i = self.lower_bound(pid, va);
        if i > 0 {
            let r = self.get(i - 1);
            if r.pid == pid && r.end() > va {
                return Some(i - 1);
            }
        }
        (i < self.len && self.key(i).0 == pid).then_some(i)
    }

    /// Whether `[va, va + bytes)` touches no live range of `pid`; if it
    /// does, the first range in the way.
    pub fn conflict(&self, pid: u32, va: u64, bytes: u64) -> Option<VaRange> {
        let i = self.first_ending_after(pid, va)?;
        let r = self.get(i);
        (r.start < va.saturating_add(bytes)).then_some(r)
    }

    /// Insert a range that overlaps nothing.
    pub(crate) fn insert(&mut self, r: &VaRange) -> Result<(), SlowPathError> {
        if self.len == self.capacity() {
            return Err(SlowPathError::RangeTableFull);
        }
        let i = self.lower_bound(r.pid, r.start);
        self.w.copy_within(3 * i..3 * self.len, 3 * i + 3);
        self.put(i, r);
        self.len += 1;
        Ok(())
    }

    /// Remove `n` ranges from index `i`.
    pub(crate) fn remove(&mut self, i: usize, n: usize) {
        self.w.copy_within(3 * (i + n)..3 * self.len, 3 * i);
        self.len -= n;
    }

    /// The live ranges of `pid`, ascending.
    pub fn of_pid(&self, pid: u32) -> impl Iterator<Item = VaRange> + '_ {
        let i = self.lower_bound(pid, 0);
        (i..self.len)
            .map(|j| self.get(j))
            .take_while(move |r| r.pid == pid)
    }

    /// Every live range, in `(pid, start)` order.
    pub fn iter(&self) -> impl Iterator<Item = VaRange> + '_ {
        (0..self.len).map(|j| self.get(j))
    }
}

/// Per-PID state: one next-fit cursor per VA page-size class and the
/// number of live ranges.
#[derive(Debug)]
pub struct PidTable<'a> {
    w: &'a mut [u64],
    len: usize,
    max: usize,
}

const EMPTY: u64 = 0;

/// Arena words of one PID entry: PID and range count, then one cursor per
/// VA class ([`clio_wire::pte::MAX_PAGE_CLASSES`]).
pub(crate) const PID_ENTRY_WORDS: usize = 1 + MAX_PAGE_CLASSES;

impl<'a> PidTable<'a> {
    /// A table of `w.len() / PID_ENTRY_WORDS` entries (a power of two)
    /// holding at most `max` PIDs.
    pub(crate) fn new(w: &'a mut [u64], max: usize) -> Self {
        w.fill(0);
        PidTable { w, len: 0, max }
    }

    fn cap(&self) -> usize {
        self.w.len() / PID_ENTRY_WORDS
    }

    fn entry(&self, i: usize) -> &[u64] {
        &self.w[PID_ENTRY_WORDS * i..PID_ENTRY_WORDS * (i + 1)]
    }

    fn home(&self, pid: u32) -> usize {
        let bits = self.cap().trailing_zeros();
        if bits == 0 {
            return 0;
        }
        ((pid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Entry of `pid`, or `Err(empty entry where it would go)`.
    fn probe(&self, pid: u32) -> Result<usize, usize> {
        let mask = self.cap() - 1;
        let mut i = self.home(pid);
        loop {
            let w0 = self.entry(i)[0];
            if w0 == EMPTY {
                return Err(i);
            }
            if w0 as u32 == pid {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// PIDs with state.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no PID has state.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry index of a known PID.
    pub fn get(&self, pid: u32) -> Option<usize> {
        if pid == 0 {
            return None;
        }
        self.probe(pid).ok()
    }

    /// Entry of `pid`, created with every cursor 0 (= the start of its
    /// class) if new.
    pub(crate) fn get_or_insert(&mut self, pid: u32) -> Result<usize, SlowPathError> {
        if pid == 0 {
            return Err(SlowPathError::UnknownPid(0));
        }
        match self.probe(pid) {
            Ok(i) => Ok(i),
            Err(_) if self.len >= self.max => Err(SlowPathError::PidTableFull),
            Err(i) => {
                let e = &mut self.w[PID_ENTRY_WORDS * i..PID_ENTRY_WORDS * (i + 1)];
                e.fill(0);
                e[0] = pid as u64;
                self.len += 1;
                Ok(i)
            }
        }
    }

    /// Next-fit cursor of entry `i` in VA class `class` (0 = not set yet).
    pub fn cursor(&self, i: usize, class: usize) -> u64 {
        self.entry(i)[1 + class % MAX_PAGE_CLASSES]
    }

    pub(crate) fn set_cursor(&mut self, i: usize, class: usize, va: u64) {
        self.w[PID_ENTRY_WORDS * i + 1 + class % MAX_PAGE_CLASSES] = va;
    }

    /// Live ranges of entry `i`.
    pub fn ranges(&self, i: usize) -> u32 {
        (self.entry(i)[0] >> 32) as u32
    }

    pub(crate) fn add_ranges(&mut self, i: usize, delta: i64) {
        let n = (self.ranges(i) as i64 + delta).max(0) as u64;
        let w0 = &mut self.w[PID_ENTRY_WORDS * i];
        *w0 = (*w0 & 0xffff_ffff) | n << 32;
    }

    /// Drop the state of `pid` (backward-shift deletion keeps probes short).
    pub(crate) fn remove(&mut self, pid: u32) -> bool {
        let Some(mut hole) = self.get(pid) else {
            return false;
        };
        let mask = self.cap() - 1;
        let n = PID_ENTRY_WORDS;
        let mut i = (hole + 1) & mask;
        while self.entry(i)[0] != EMPTY {
            let home = self.home(self.entry(i)[0] as u32);
            // Move entry i into the hole if its home is not in (hole, i].
            let dist_i = i.wrapping_sub(home) & mask;
            let dist_hole = i.wrapping_sub(hole) & mask;
            if dist_i >= dist_hole {
                self.w.copy_within(n * i..n * (i + 1), n * hole);
                hole = i;
            }
            i = (i + 1) & mask;
        }
        self.w[n * hole..n * (hole + 1)].fill(0);
        debug_assert_eq!(EMPTY, 0);
        self.len -= 1;
        true
    }
}

/// Split the range and PID tables off an arena.
pub(crate) fn carve<'a>(
    rest: &mut &'a mut [u64],
    range_words: u64,
    pid_words: u64,
    max_pids: usize,
) -> (RangeTable<'a>, PidTable<'a>) {
    let r = take(rest, range_words);
    let p = take(rest, pid_words);
    (RangeTable::new(r), PidTable::new(p, max_pids))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pid: u32, start: u64, pages: u64) -> VaRange {
        VaRange {
            pid,
            start,
            pages,
            page_shift: 12,
            perms: 3,
        }
    }

    #[test]
    fn ranges_stay_sorted_and_conflicts_are_found() {
        let mut w = [0u64; 3 * 8];
        let mut t = RangeTable::new(&mut w);
        t.insert(&r(2, 0x10000, 2)).unwrap();
        t.insert(&r(1, 0x20000, 1)).unwrap();
        t.insert(&r(2, 0x1000, 1)).unwrap();
        let keys: Vec<_> = t.iter().map(|x| (x.pid, x.start)).collect();
        assert_eq!(keys, [(1, 0x20000), (2, 0x1000), (2, 0x10000)]);
        assert_eq!(
            t.conflict(2, 0x11000, 0x1000).map(|x| x.start),
            Some(0x10000)
        );
        assert_eq!(t.conflict(2, 0x12000, 0x1000), None);
        assert_eq!(t.conflict(2, 0x2000, 0xe000), None);
        assert_eq!(
            t.conflict(2, 0x2000, 0xe001).map(|x| x.start),
            Some(0x10000)
        );
        assert_eq!(
            t.conflict(1, 0x1000, 0x1000),
            None,
            "other PIDs do not conflict"
        );
        assert_eq!(t.of_pid(2).count(), 2);
        t.remove(1, 1);
        assert_eq!(t.of_pid(2).count(), 1);
    }

    #[test]
    fn pid_table_insert_remove_with_collisions() {
        let mut w = [0u64; PID_ENTRY_WORDS * 8];
        let mut t = PidTable::new(&mut w, 6);
        for pid in 1..=6 {
            let i = t.get_or_insert(pid).unwrap();
            assert_eq!(t.cursor(i, 0), 0);
            for class in 0..MAX_PAGE_CLASSES {
                t.set_cursor(i, class, pid as u64 * 10 + class as u64);
            }
            t.add_ranges(i, 1);
        }
        assert_eq!(t.get_or_insert(7), Err(SlowPathError::PidTableFull));
        assert_eq!(t.get_or_insert(0), Err(SlowPathError::UnknownPid(0)));
        for pid in [3, 1, 5] {
            assert!(t.remove(pid));
        }
        for pid in [2, 4, 6] {
            let i = t.get(pid).unwrap();
            for class in 0..MAX_PAGE_CLASSES {
                assert_eq!(t.cursor(i, class), pid as u64 * 10 + class as u64);
            }
            assert_eq!(t.ranges(i), 1);
        }
        for pid in [1, 3, 5] {
            assert!(t.get(pid).is_none());
        }
        assert_eq!(t.len(), 3);
        // A PID that comes back starts with fresh cursors.
        let i = t.get_or_insert(3).unwrap();
        assert_eq!((t.cursor(i, 1), t.ranges(i)), (0, 0));
        assert_eq!(t.len(), 4);
    }
}
