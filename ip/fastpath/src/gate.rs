//! The region gate (issue #22): a small table of gated ranges the slow path
//! sets over the TX ring (`GATE_SET`), checked at intake for every request
//! that touches memory. It is what migrates a rack region off a board whose
//! requests never reach the slow path: `Paused` holds changes back (`BUSY`),
//! `Tracking` serves everything and reports the 64 KiB blocks a change
//! dirties (`GATE_DIRTY` on the RX ring, before the change executes),
//! `Moved`/`Rejoin` send clients to the region's new home (`MOVED`).
//!
//! The verdict is a pure function of the table and the request
//! ([`GateTable::verdict`]) so the RTL module `clio_region_gate.sv` can be
//! checked against it request by request. With no entry set nothing is
//! checked and every answer is what it was without a gate.

use clio_wire::clio::Opcode;
use clio_wire::ring::{Descriptor, GateMode, GATE_BLOCK};
use clio_wire::{Header, Status};

use crate::{ClientId, Dram, FastPath};

/// One gate entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateEntry {
    /// Address space.
    pub pid: u32,
    /// First VA.
    pub va: u64,
    /// Bytes (not 0).
    pub len: u64,
    /// How requests to it are served (never `Open`: that clears the entry).
    pub mode: GateMode,
    /// Blocks dirtied since the entry was set (`Tracking`), bit i = block i.
    pub dirty: u64,
}

impl GateEntry {
    /// Whether `[va, end)` of `pid` overlaps the entry.
    fn overlaps(&self, pid: u32, va: u64, end: u64) -> bool {
        self.pid == pid && va < self.va.saturating_add(self.len) && self.va < end
    }

    /// The blocks of this entry that `[va, end)` touches (it must overlap).
    fn blocks(&self, va: u64, end: u64) -> u64 {
        let g_end = self.va.saturating_add(self.len);
        let first = (va.max(self.va) - self.va) / GATE_BLOCK;
        let last = ((end.min(g_end) - 1 - self.va) / GATE_BLOCK).min(63);
        if first > 63 {
            return 0;
        }
        let hi = if last == 63 {
            u64::MAX
        } else {
            (1u64 << (last + 1)) - 1
        };
        hi & !((1u64 << first) - 1)
    }
}

/// How a request is served by the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateVerdict {
    /// Not gated: serve it as usual.
    Serve,
    /// Answer header-only with this status (`Busy` or `Moved`).
    Refuse(Status),
    /// Serve it; first report these newly dirty blocks of entry `entry`
    /// (`GATE_DIRTY`), then set them.
    Track {
        /// The entry (lowest index whose new blocks are reported; a change
        /// over several tracking entries reports each: see `check`).
        entry: usize,
        /// Its new blocks.
        mask: u64,
    },
}

/// Whether requests with opcode `op` are gated: `Some(true)` changes memory,
/// `Some(false)` reads it. `Free` is the slow path's to gate (it sees every
/// forwarded free); `Alloc`'s VA is only a hint; the rest carry no range.
pub fn gate_class(op: Opcode) -> Option<bool> {
    match op {
        Opcode::Read | Opcode::PointerChase => Some(false),
        Opcode::Write
        | Opcode::TestAndSet
        | Opcode::CompareAndSwap
        | Opcode::FetchAndAdd
        | Opcode::Lock
        | Opcode::Unlock
        | Opcode::OffloadCall => Some(true),
        _ => None,
    }
}

/// The range a request is checked over: `[va, va + max(total_len, 1))`,
/// saturated at the end of the address space.
pub fn gate_range(h: &Header) -> (u64, u64) {
    (h.va, h.va.saturating_add(u64::from(h.total_len.max(1))))
}

/// What the gate did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Requests answered `BUSY` by a `Paused` or `Tracking` entry (or for
    /// want of RX room to report a dirty block).
    pub busy: u64,
    /// Requests answered `MOVED`.
    pub moved: u64,
    /// Changes served under a `Tracking` entry.
    pub tracked: u64,
    /// `GATE_DIRTY` reports pushed.
    pub reports: u64,
    /// `GATE_SET` commands applied.
    pub sets: u64,
}

/// The table: `entries` slots, each empty or a [`GateEntry`].
#[derive(Debug, Clone)]
pub struct GateTable {
    slots: Vec<Option<GateEntry>>,
    /// Entries set (so an empty table costs one compare per request).
    live: usize,
    /// One past the highest entry set (the scan's bound: the slow path
    /// takes the lowest free entry, so a large table is scanned only as far
    /// as it is used).
    hi: usize,
    pub(crate) stats: GateStats,
}

impl GateTable {
    /// An empty table of `entries` slots.
    pub fn new(entries: usize) -> GateTable {
        GateTable {
            slots: vec![None; entries],
            live: 0,
            hi: 0,
            stats: GateStats::default(),
        }
    }

    /// Slots of the table.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Entry `i`, if set.
    pub fn entry(&self, i: usize) -> Option<&GateEntry> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// Whether no entry is set.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Counters.
    pub fn stats(&self) -> GateStats {
        self.stats
    }

    /// Applies a `GATE_SET`: entry `i` becomes `(pid, va, len, mode)` with
    /// an empty bitmap, or is cleared (`Open`). `false`: no such entry.
    pub fn set(&mut self, i: usize, pid: u32, va: u64, len: u64, mode: GateMode) -> bool {
        let Some(slot) = self.slots.get_mut(i) else {
            return false;
        };
        let was = slot.is_some();
        *slot = (mode != GateMode::Open).then_some(GateEntry {
            pid,
            va,
            len,
            mode,
            dirty: 0,
        });
        match (was, slot.is_some()) {
            (false, true) => self.live += 1,
            (true, false) => self.live -= 1,
            _ => {}
        }
        if mode != GateMode::Open {
            self.hi = self.hi.max(i + 1);
        }
        while self.hi > 0 && self.slots[self.hi - 1].is_none() {
            self.hi -= 1;
        }
        self.stats.sets += 1;
        true
    }

    /// Marks `mask` dirty in entry `i` (after its report was pushed); `false`:
    /// no such entry set.
    pub fn mark(&mut self, i: usize, mask: u64) -> bool {
        match self.slots.get_mut(i) {
            Some(Some(e)) => {
                e.dirty |= mask;
                true
            }
            _ => false,
        }
    }

    /// Clears every entry (a new boot of the slow path).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.live = 0;
        self.hi = 0;
    }

    /// The verdict on request `h` (nothing changes). The entries of `h.pid`
    /// overlapping its range are looked at in index order: the first that
    /// refuses decides; if none does and the request changes memory, the
    /// first tracking entry whose bitmap lacks some of the touched blocks
    /// is named with those blocks (the caller reports them, sets them and
    /// asks again until the verdict is `Serve`).
    pub fn verdict(&self, h: &Header) -> GateVerdict {
        if self.live == 0 {
            return GateVerdict::Serve;
        }
        let Some(changes) = gate_class(h.opcode) else {
            return GateVerdict::Serve;
        };
        let (va, end) = gate_range(h);
        let hits = || {
            self.slots[..self.hi]
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.as_ref().map(|e| (i, e)))
                .filter(|(_, e)| e.overlaps(h.pid, va, end))
        };
        for (_, e) in hits() {
            let refuse = match e.mode {
                GateMode::Moved => Some(Status::Moved),
                GateMode::Rejoin if changes => Some(Status::Moved),
                GateMode::Paused if changes => Some(Status::Busy),
                // An offload may change memory where no bitmap looks.
                GateMode::Tracking if h.opcode == Opcode::OffloadCall => Some(Status::Busy),
                _ => None,
            };
            if let Some(s) = refuse {
                return GateVerdict::Refuse(s);
            }
        }
        if changes {
            for (i, e) in hits() {
                if e.mode == GateMode::Tracking {
                    let new = e.blocks(va, end) & !e.dirty;
                    if new != 0 {
                        return GateVerdict::Track {
                            entry: i,
                            mask: new,
                        };
                    }
                }
            }
        }
        GateVerdict::Serve
    }

    /// Whether `h` is a change served under a tracking entry (for counting).
    fn tracks(&self, h: &Header) -> bool {
        let (va, end) = gate_range(h);
        gate_class(h.opcode) == Some(true)
            && self.slots[..self.hi]
                .iter()
                .flatten()
                .any(|e| e.mode == GateMode::Tracking && e.overlaps(h.pid, va, end))
    }
}

impl<D: Dram> FastPath<D> {
    /// The region gate (for inspection).
    pub fn gate(&self) -> &GateTable {
        &self.gate
    }

    /// Rebuilds the region gate with `entries` entries, all clear (an
    /// emulated rack node's table is larger than a board's).
    pub fn set_gate_entries(&mut self, entries: usize) {
        self.gate = GateTable::new(entries);
    }

    /// The gate's `GATE_SET` command; false (rejected) for an entry past the table.
    pub(crate) fn gate_set(&mut self, d: &Descriptor) -> bool {
        let Descriptor::GateSet {
            entry,
            pid,
            va,
            len,
            mode,
        } = *d
        else {
            return false;
        };
        self.gate.set(entry as usize, pid, va, len, mode)
    }

    /// The gate's intake check of request `h`: `true` if it was answered
    /// (refused) here. A change under a tracking entry reports its newly
    /// dirty blocks first; without RX room for a report it is refused `BUSY`
    /// and nothing is marked.
    pub(crate) fn gate_check<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        out: &mut F,
    ) -> bool {
        if self.gate.is_empty() {
            return false;
        }
        loop {
            match self.gate.verdict(h) {
                GateVerdict::Serve => break,
                GateVerdict::Refuse(s) => {
                    match s {
                        Status::Moved => self.gate.stats.moved += 1,
                        _ => self.gate.stats.busy += 1,
                    }
                    self.fail(src, h, s, out);
                    return true;
                }
                GateVerdict::Track { entry, mask } => {
                    let Some(e) = self.gate.entry(entry).copied() else {
                        break;
                    };
                    let report = Descriptor::GateDirty {
                        entry: entry as u32,
                        pid: e.pid,
                        va: e.va,
                        mask,
                    };
                    let rx =
                        &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
                    if self.rx.push(rx, &report).is_err() {
                        self.gate.stats.busy += 1;
                        self.fail(src, h, Status::Busy, out);
                        return true;
                    }
                    self.gate.stats.reports += 1;
                    self.trace.forwarded = true;
                    self.gate.mark(entry, mask);
                }
            }
        }
        if self.gate.tracks(h) {
            self.gate.stats.tracked += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Opcode, pid: u32, va: u64, len: u32) -> Header {
        Header::request(op, pid, 1, va, len)
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn blocks_of_a_range() {
        let e = GateEntry {
            pid: 1,
            va: 4 * MIB,
            len: 4 * MIB,
            mode: GateMode::Tracking,
            dirty: 0,
        };
        assert_eq!(e.blocks(4 * MIB, 4 * MIB + 1), 1);
        // Across a block edge: both blocks.
        assert_eq!(
            e.blocks(4 * MIB + GATE_BLOCK - 4, 4 * MIB + GATE_BLOCK + 4),
            0b11
        );
        // Starting before the entry: from block 0.
        assert_eq!(e.blocks(4 * MIB - 8, 4 * MIB + 8), 1);
        // The last byte: block 63; past the end clipped.
        assert_eq!(e.blocks(8 * MIB - 1, 8 * MIB + 100), 1 << 63);
        assert_eq!(e.blocks(0, 16 * MIB), u64::MAX);
    }

    #[test]
    fn verdicts_by_mode_and_boundaries() {
        let mut t = GateTable::new(4);
        let (va, len) = (4 * MIB, 2 * MIB);
        assert_eq!(t.verdict(&req(Opcode::Write, 1, va, 8)), GateVerdict::Serve);
        assert!(t.set(0, 1, va, len, GateMode::Paused));
        let w = |t: &GateTable, a, n| t.verdict(&req(Opcode::Write, 1, a, n));
        assert_eq!(w(&t, va, 8), GateVerdict::Refuse(Status::Busy));
        assert_eq!(w(&t, va + len - 1, 1), GateVerdict::Refuse(Status::Busy));
        // The byte after the range and the byte before it are not gated.
        assert_eq!(w(&t, va + len, 8), GateVerdict::Serve);
        assert_eq!(w(&t, va - 8, 8), GateVerdict::Serve);
        // A write that starts before the range and ends inside it is.
        assert_eq!(w(&t, va - 8, 9), GateVerdict::Refuse(Status::Busy));
        // Reads go on; another PID is untouched.
        assert_eq!(t.verdict(&req(Opcode::Read, 1, va, 64)), GateVerdict::Serve);
        assert_eq!(t.verdict(&req(Opcode::Write, 2, va, 8)), GateVerdict::Serve);
        for op in [
            Opcode::FetchAndAdd,
            Opcode::CompareAndSwap,
            Opcode::TestAndSet,
            Opcode::Lock,
            Opcode::Unlock,
            Opcode::OffloadCall,
        ] {
            assert_eq!(
                t.verdict(&req(op, 1, va, 8)),
                GateVerdict::Refuse(Status::Busy),
                "{op:?}"
            );
        }
        // Free and Alloc are not the fast path's to gate.
        assert_eq!(t.verdict(&req(Opcode::Free, 1, va, 0)), GateVerdict::Serve);
        assert!(t.set(0, 1, va, len, GateMode::Moved));
        assert_eq!(
            t.verdict(&req(Opcode::Read, 1, va, 8)),
            GateVerdict::Refuse(Status::Moved)
        );
        assert!(t.set(0, 1, va, len, GateMode::Rejoin));
        assert_eq!(t.verdict(&req(Opcode::Read, 1, va, 8)), GateVerdict::Serve);
        assert_eq!(w(&t, va, 8), GateVerdict::Refuse(Status::Moved));
        assert!(t.set(0, 0, 0, 0, GateMode::Open));
        assert!(t.is_empty());
        assert_eq!(w(&t, va, 8), GateVerdict::Serve);
        // A slot past the table is refused.
        assert!(!t.set(4, 1, va, len, GateMode::Paused));
    }

    #[test]
    fn tracking_names_new_blocks_once() {
        let mut t = GateTable::new(2);
        let va = 8 * MIB;
        assert!(t.set(1, 3, va, 4 * MIB, GateMode::Tracking));
        let h = req(Opcode::Write, 3, va + GATE_BLOCK - 8, 16);
        assert_eq!(
            t.verdict(&h),
            GateVerdict::Track {
                entry: 1,
                mask: 0b11
            }
        );
        t.slots[1].as_mut().unwrap().dirty |= 0b11;
        assert_eq!(t.verdict(&h), GateVerdict::Serve);
        // Reads mark nothing; offload calls wait.
        assert_eq!(
            t.verdict(&req(Opcode::Read, 3, va + 5 * GATE_BLOCK, 8)),
            GateVerdict::Serve
        );
        assert_eq!(
            t.verdict(&req(Opcode::OffloadCall, 3, va, 8)),
            GateVerdict::Refuse(Status::Busy)
        );
        // Setting the entry again clears its bitmap.
        assert!(t.set(1, 3, va, 4 * MIB, GateMode::Tracking));
        assert_eq!(
            t.verdict(&h),
            GateVerdict::Track {
                entry: 1,
                mask: 0b11
            }
        );
        // A paused entry overlapping the write decides before any tracking one.
        assert!(t.set(0, 3, va + GATE_BLOCK, GATE_BLOCK, GateMode::Paused));
        assert_eq!(t.verdict(&h), GateVerdict::Refuse(Status::Busy));
    }
}
