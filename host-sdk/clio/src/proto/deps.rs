//! Page-granularity dependency tracking of a connection's operations (T2).
//!
//! Each page touched by an active operation remembers its last writer and
//! the readers issued since. A new read depends on the page's last writer
//! (RAW); a new write depends on the last writer (WAW) and on every reader
//! since (WAR), and becomes the last writer. Reads of a page never wait for
//! each other. Barriers (fence, lock, unlock, metadata operations on very
//! large ranges) depend on every active operation, and every later
//! operation depends on the newest active barrier.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Ranges spanning more pages than this are tracked as barriers.
pub const MAX_TRACKED_PAGES: u64 = 64;

/// What an operation touches, for ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Footprint {
    /// Nothing (board info).
    None,
    /// Reads pages `first..=last`.
    Read {
        /// First page number.
        first: u64,
        /// Last page number.
        last: u64,
    },
    /// Writes (or read-modify-writes, or frees) pages `first..=last`.
    Write {
        /// First page number.
        first: u64,
        /// Last page number.
        last: u64,
    },
    /// Waits for all earlier operations; all later ones wait for it.
    Barrier,
    /// Waits for all earlier operations; later ones do not wait for it.
    Release,
}

impl Footprint {
    /// Pages of `[va, va + len)` as a read or write footprint, or a barrier
    /// when the range is too large to track page by page.
    pub fn range(va: u64, len: u64, page_shift: u8, write: bool) -> Footprint {
        let first = va >> page_shift;
        let last = (va + len.max(1) - 1) >> page_shift;
        if last - first >= MAX_TRACKED_PAGES {
            Footprint::Barrier
        } else if write {
            Footprint::Write { first, last }
        } else {
            Footprint::Read { first, last }
        }
    }

    /// Whether the operation waits for every earlier one.
    pub fn waits_for_all(self) -> bool {
        matches!(self, Footprint::Barrier | Footprint::Release)
    }
}

#[derive(Debug, Default)]
struct Page {
    writer: Option<u32>,
    readers: Vec<u32>,
}

/// Multiplicative hash for page numbers (SipHash is needlessly slow here).
#[derive(Default)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// The tracker; operation slots are named by their index.
#[derive(Debug, Default)]
pub struct Deps {
    pages: HashMap<u64, Page, BuildHasherDefault<PageHasher>>,
    spare: Vec<Vec<u32>>,
    barrier: Option<u32>,
}

impl Deps {
    /// Register a new operation; pushes the slots it must wait for onto
    /// `blockers` (possibly with repeats). For footprints that wait for all,
    /// the caller adds every active operation itself.
    pub fn register(&mut self, me: u32, fp: Footprint, blockers: &mut Vec<u32>) {
        if let Some(b) = self.barrier {
            blockers.push(b);
        }
        match fp {
            Footprint::None | Footprint::Release => {}
            Footprint::Barrier => self.barrier = Some(me),
            Footprint::Read { first, last } => {
                for p in first..=last {
                    let page = self.page(p);
                    if let Some(w) = page.writer {
                        blockers.push(w);
                    }
                    page.readers.push(me);
                }
            }
            Footprint::Write { first, last } => {
                for p in first..=last {
                    let page = self.page(p);
                    if let Some(w) = page.writer {
                        blockers.push(w);
                    }
                    blockers.extend_from_slice(&page.readers);
                    page.readers.clear();
                    page.writer = Some(me);
                }
            }
        }
    }

    /// Forget a completed operation.
    pub fn complete(&mut self, me: u32, fp: Footprint) {
        match fp {
            Footprint::None | Footprint::Release => {}
            Footprint::Barrier => {
                if self.barrier == Some(me) {
                    self.barrier = None;
                }
            }
            Footprint::Read { first, last } | Footprint::Write { first, last } => {
                for p in first..=last {
                    let Some(page) = self.pages.get_mut(&p) else {
                        continue;
                    };
                    if page.writer == Some(me) {
                        page.writer = None;
                    }
                    if let Some(i) = page.readers.iter().position(|&r| r == me) {
                        page.readers.swap_remove(i);
                    }
                    if page.writer.is_none() && page.readers.is_empty() {
                        if let Some(old) = self.pages.remove(&p) {
                            self.spare.push(old.readers);
                        }
                    }
                }
            }
        }
    }

    /// Pages currently tracked (for tests and stats).
    pub fn tracked_pages(&self) -> usize {
        self.pages.len()
    }

    fn page(&mut self, p: u64) -> &mut Page {
        let spare = &mut self.spare;
        self.pages.entry(p).or_insert_with(|| Page {
            writer: None,
            readers: spare.pop().unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(d: &mut Deps, me: u32, fp: Footprint) -> Vec<u32> {
        let mut b = Vec::new();
        d.register(me, fp, &mut b);
        b.sort_unstable();
        b.dedup();
        b
    }

    #[test]
    fn raw_war_waw_and_read_sharing() {
        let mut d = Deps::default();
        let w = |p| Footprint::Write { first: p, last: p };
        let r = |p| Footprint::Read { first: p, last: p };
        assert!(reg(&mut d, 0, w(1)).is_empty());
        assert_eq!(reg(&mut d, 1, r(1)), vec![0], "RAW");
        assert_eq!(reg(&mut d, 2, r(1)), vec![0], "reads do not wait for reads");
        assert_eq!(reg(&mut d, 3, w(1)), vec![0, 1, 2], "WAW + WAR");
        assert!(reg(&mut d, 4, w(2)).is_empty(), "other page is independent");
        for (me, fp) in [(0, w(1)), (1, r(1)), (2, r(1)), (3, w(1)), (4, w(2))] {
            d.complete(me, fp);
        }
        assert_eq!(d.tracked_pages(), 0);
    }

    #[test]
    fn barriers_order_later_operations() {
        let mut d = Deps::default();
        assert!(reg(&mut d, 0, Footprint::Barrier).is_empty());
        assert_eq!(
            reg(&mut d, 1, Footprint::Read { first: 5, last: 6 }),
            vec![0]
        );
        assert_eq!(reg(&mut d, 2, Footprint::Release), vec![0]);
        d.complete(0, Footprint::Barrier);
        assert!(reg(&mut d, 3, Footprint::None).is_empty());
    }

    #[test]
    fn huge_ranges_become_barriers() {
        assert_eq!(Footprint::range(0, 1 << 40, 12, true), Footprint::Barrier);
        assert_eq!(
            Footprint::range(4095, 2, 12, false),
            Footprint::Read { first: 0, last: 1 }
        );
        assert_eq!(
            Footprint::range(4096, 0, 12, true),
            Footprint::Write { first: 1, last: 1 }
        );
    }
}
