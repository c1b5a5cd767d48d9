//! A set of byte ranges `[start, end)` within one request: which parts of a
//! read response arrived, or which packets of a write were acknowledged.
//!
//! Packets arrive in any order and may repeat; in the common case they come
//! in order and the set stays a single merged range, so inserts are O(1).

/// Sorted, disjoint, non-adjacent ranges. The `Vec` is kept across uses.
#[derive(Debug, Default, Clone)]
pub struct RangeSet {
    r: Vec<(u32, u32)>,
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// Some bytes were new.
    New,
    /// Every byte was already present (a duplicate packet).
    Duplicate,
}

impl RangeSet {
    /// Forget everything (keeps the allocation).
    pub fn clear(&mut self) {
        self.r.clear();
    }

    /// Whether nothing was inserted since the last clear.
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// Add `[start, end)`; empty ranges are duplicates.
    pub fn insert(&mut self, start: u32, end: u32) -> Insert {
        if start >= end {
            return Insert::Duplicate;
        }
        // Fast path: extends (or is inside) the last range.
        if let Some(last) = self.r.last_mut() {
            if start >= last.0 && start <= last.1 {
                if end <= last.1 {
                    return Insert::Duplicate;
                }
                last.1 = end;
                return Insert::New;
            }
        }
        // First range whose end reaches start (touching merges).
        let i = self.r.partition_point(|&(_, e)| e < start);
        if i < self.r.len() && self.r[i].0 <= start && end <= self.r[i].1 {
            return Insert::Duplicate;
        }
        let mut j = i;
        let mut ns = start;
        let mut ne = end;
        while j < self.r.len() && self.r[j].0 <= end {
            ns = ns.min(self.r[j].0);
            ne = ne.max(self.r[j].1);
            j += 1;
        }
        self.r.splice(i..j, core::iter::once((ns, ne)));
        Insert::New
    }

    /// Whether `[0, len)` is fully covered.
    pub fn covers(&self, len: u32) -> bool {
        if len == 0 {
            return true;
        }
        matches!(self.r.first(), Some(&(0, e)) if e >= len)
    }

    /// The first offset at or after `from` that is not covered.
    pub fn next_gap(&self, from: u32) -> u32 {
        let i = self.r.partition_point(|&(_, e)| e <= from);
        match self.r.get(i) {
            Some(&(s, e)) if s <= from => e,
            _ => from,
        }
    }

    /// Total bytes covered.
    pub fn bytes(&self) -> u64 {
        self.r.iter().map(|&(s, e)| (e - s) as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_in_any_order_and_spots_duplicates() {
        let mut s = RangeSet::default();
        assert_eq!(s.insert(20, 30), Insert::New);
        assert_eq!(s.insert(0, 10), Insert::New);
        assert!(!s.covers(30));
        assert_eq!(s.insert(0, 10), Insert::Duplicate);
        assert_eq!(s.insert(22, 25), Insert::Duplicate);
        assert_eq!(s.insert(10, 20), Insert::New);
        assert!(s.covers(30));
        assert_eq!(s.bytes(), 30);
        assert_eq!(s.insert(5, 35), Insert::New);
        assert!(s.covers(35));
        s.clear();
        assert!(s.covers(0));
        assert!(!s.covers(1));
    }

    #[test]
    fn matches_a_bitmap_model() {
        // Deterministic pseudo-random inserts against a per-byte model.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200 {
            let mut s = RangeSet::default();
            let mut model = [false; 64];
            for _ in 0..12 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let a = (x % 64) as u32;
                let b = ((x >> 8) % 65) as u32;
                let (a, b) = (a.min(b), a.max(b));
                let was_new = (a..b).any(|i| !model[i as usize]);
                let got = s.insert(a, b);
                assert_eq!(got == Insert::New, was_new, "insert {a}..{b}");
                (a..b).for_each(|i| model[i as usize] = true);
                assert_eq!(s.bytes(), model.iter().filter(|&&m| m).count() as u64);
                let prefix = model.iter().take_while(|&&m| m).count() as u32;
                assert!(s.covers(prefix));
                assert!(!s.covers(prefix + 1) || prefix == 64);
                for from in 0..=64u32 {
                    let gap = (from..64).find(|&i| !model[i as usize]).unwrap_or(64);
                    assert_eq!(s.next_gap(from), gap, "next_gap({from})");
                }
            }
        }
    }
}
