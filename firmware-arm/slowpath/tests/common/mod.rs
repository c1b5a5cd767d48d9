//! A board model for the slow-path tests: it applies TX descriptors to a
//! byte image of the hash page table (through the wire crate's `Bucket`
//! view), keeps the free-PA FIFOs, plays first touches the way the fast path
//! does, and checks the safety rules the slow path must keep.
#![allow(dead_code)]

use clio_slowpath::{SlowPath, SlowPathConfig};
use clio_wire::pte::{Bucket, TableGeometry, PTE_LEN};
use clio_wire::ring::Descriptor;
use clio_wire::Pte;
use clio_wire::Status;
use std::collections::{BTreeMap, VecDeque};

/// A small board: 4 frames of 4 MiB, 32 buckets of 4 slots.
pub fn small_cfg() -> SlowPathConfig {
    let mut c = SlowPathConfig::from_board(&clio_config::boards::EMULATOR);
    c.data_size = 4 << 22;
    c.bucket_bits = 5;
    c.slots_per_bucket = 4;
    c.fifo_depth = 4;
    c.max_pids = 8;
    c.max_ranges = 64;
    c.max_retries = 32;
    c.va_bits = 32;
    c.check().unwrap();
    c
}

/// The seed the tests boot with (keys and epoch depend on nothing else).
pub const SEED: u64 = 0x5eed_0fb0_0007;

/// A slow path over `arena` with every PID held by the board, for tests of
/// allocation that open no sessions.
pub fn slow_path(cfg: SlowPathConfig, arena: &mut [u64]) -> SlowPath<'_> {
    let mut sp = SlowPath::new(cfg, arena, SEED).unwrap();
    for pid in 1..=cfg.max_pids {
        sp.reserve_pid(pid).unwrap();
    }
    sp
}

/// The fast path and board DRAM as far as the slow path can observe them.
pub struct Board {
    pub geo: TableGeometry,
    pub shifts: Vec<u8>,
    pub table: Vec<u8>,
    pub fifo: Vec<VecDeque<u32>>,
    /// PA ranges the slow path has handed out (in a FIFO or mapped), start -> end.
    pub held: BTreeMap<u64, u64>,
    /// Pages holding data written by a process: PA -> pid.
    pub content: BTreeMap<u64, u32>,
    /// TX descriptors applied.
    pub applied: u64,
    pub replies: Vec<Descriptor>,
    /// The epoch the slow path posted (0 before its `Epoch`).
    pub epoch: u32,
    /// Session-table entries installed by `SessionReply`: id -> (pid, key).
    pub sessions: BTreeMap<u16, (u32, u64)>,
}

impl Board {
    pub fn new(cfg: &SlowPathConfig) -> Self {
        let geo = TableGeometry {
            base: cfg.table_base,
            bucket_bits: cfg.bucket_bits,
            slots_per_bucket: cfg.slots_per_bucket,
        };
        Board {
            geo,
            shifts: cfg.shifts().to_vec(),
            table: vec![0; geo.table_bytes() as usize],
            fifo: vec![VecDeque::new(); cfg.shifts().len()],
            held: BTreeMap::new(),
            content: BTreeMap::new(),
            applied: 0,
            replies: Vec::new(),
            epoch: 0,
            sessions: BTreeMap::new(),
        }
    }

    fn bucket(&mut self, b: u32) -> Bucket<&mut [u8]> {
        let n = self.geo.bucket_bytes() as usize;
        let k = self.geo.slots_per_bucket as usize;
        Bucket::new_checked(&mut self.table[b as usize * n..(b as usize + 1) * n], k).unwrap()
    }

    pub fn slot(&self, b: u32, s: u32) -> Pte {
        let off = (b as usize * self.geo.slots_per_bucket as usize + s as usize) * PTE_LEN;
        Pte::parse(&self.table[off..off + PTE_LEN]).unwrap()
    }

    fn overlaps_held(&self, start: u64, end: u64) -> bool {
        self.held
            .range(..end)
            .next_back()
            .is_some_and(|(_, &e)| e > start)
    }

    /// Apply one TX descriptor as the fast path would, checking it is sane.
    pub fn apply(&mut self, d: &Descriptor) {
        self.applied += 1;
        // The slow path's first TX descriptor is its epoch, and only that one.
        match *d {
            Descriptor::Epoch { epoch } => {
                assert_eq!(self.applied, 1, "Epoch not the first TX descriptor");
                assert_ne!(epoch, 0);
                self.epoch = epoch;
            }
            _ => assert_ne!(self.epoch, 0, "{d:?} before the Epoch descriptor"),
        }
        match *d {
            Descriptor::Epoch { .. } => {}
            Descriptor::SessionReply {
                status,
                session,
                pid,
                key,
                close,
                ..
            } => {
                if status == Status::Ok.raw() {
                    if close {
                        assert!(
                            self.sessions.remove(&session).is_some(),
                            "close of session {session} not installed"
                        );
                    } else {
                        assert!(
                            self.sessions.insert(session, (pid, key)).is_none(),
                            "open of session {session} already installed"
                        );
                    }
                }
                self.replies.push(*d);
            }
            Descriptor::PteWrite {
                bucket,
                slot,
                update,
                pte,
            } => {
                assert_eq!(
                    self.geo.bucket_of(pte.pid, pte.vpn),
                    bucket,
                    "PTE in the wrong bucket"
                );
                let mut bk = self.bucket(bucket);
                assert!(
                    update || !bk.slot(slot as usize).allocated(),
                    "insert over a live slot {bucket}/{slot}"
                );
                bk.write(slot as usize, &pte).unwrap();
                if pte.valid {
                    // A page the slow path backed itself (not through the
                    // FIFO): handed out now.
                    let start = (pte.ppn as u64) << pte.page_shift;
                    if !self.held.contains_key(&start) {
                        let end = start + (1u64 << pte.page_shift);
                        assert!(
                            !self.overlaps_held(start, end),
                            "PA {start:#x} handed out twice"
                        );
                        self.held.insert(start, end);
                    }
                }
            }
            Descriptor::PteRemove {
                bucket,
                slot,
                pid,
                vpn,
            } => {
                // The command names the slot; its tag is compared at the
                // page shift the slot records, as the fast path does.
                let shift = self.slot(bucket, slot).page_shift;
                let mut bk = self.bucket(bucket);
                assert!(
                    bk.slot(slot as usize).matches(pid, vpn, shift),
                    "remove of a slot not holding the page"
                );
                bk.write(slot as usize, &Pte::EMPTY).unwrap();
            }
            Descriptor::TlbInvalidate { .. } => {}
            Descriptor::FreePaPush { page_shift, ppn } => {
                let start = (ppn as u64) << page_shift;
                let end = start + (1u64 << page_shift);
                assert!(
                    !self.overlaps_held(start, end),
                    "PA {start:#x} handed out twice"
                );
                self.held.insert(start, end);
                let c = self.shifts.iter().position(|&s| s == page_shift).unwrap();
                self.fifo[c].push_back(ppn);
            }
            Descriptor::Reply { .. } => self.replies.push(*d),
            other => panic!("RX descriptor on TX: {other:?}"),
        }
    }

    pub fn apply_all(&mut self, tx: &mut Vec<Descriptor>) {
        for d in tx.drain(..) {
            self.apply(&d);
        }
    }

    /// A first touch of `(pid, vpn)` at page size `shift`: take a PA from
    /// the FIFO, map it in the table, write the process's data into it, and
    /// return the notice. `None` if the FIFO is empty.
    pub fn touch(&mut self, pid: u32, vpn: u64, shift: u8) -> Option<Descriptor> {
        let c = self.shifts.iter().position(|&s| s == shift).unwrap();
        let b = self.geo.bucket_of(pid, vpn);
        let k = self.geo.slots_per_bucket;
        let slot = (0..k).find(|&s| self.slot(b, s).matches(pid, vpn, shift))?;
        if self.slot(b, slot).valid {
            return None;
        }
        let ppn = self.fifo[c].pop_front()?;
        let pa = (ppn as u64) << shift;
        let end = pa + (1u64 << shift);
        assert!(
            self.content.range(pa..end).next().is_none(),
            "page {pa:#x} handed to pid {pid} still holds another process's data"
        );
        let mut p = self.slot(b, slot);
        p.valid = true;
        p.ppn = ppn;
        self.bucket(b).write(slot as usize, &p).unwrap();
        self.content.insert(pa, pid);
        Some(Descriptor::PaConsumed {
            pid,
            vpn,
            ppn,
            page_shift: shift,
            bucket: b,
            slot,
        })
    }

    /// The zeroing callback: the page must be unreachable (no valid PTE maps it).
    pub fn zero(&mut self, pa: u64, len: u64) {
        let k = self.geo.slots_per_bucket;
        for b in 0..self.geo.buckets() as u32 {
            for s in 0..k {
                let p = self.slot(b, s);
                if p.valid {
                    let mpa = (p.ppn as u64) << p.page_shift;
                    assert!(
                        mpa + (1 << p.page_shift) <= pa || mpa >= pa + len,
                        "zeroing mapped page {pa:#x}"
                    );
                }
            }
        }
        assert_eq!(
            self.held.remove(&pa),
            Some(pa + len),
            "zeroing a page not handed out"
        );
        let keys: Vec<u64> = self.content.range(pa..pa + len).map(|(&k, _)| k).collect();
        for k in keys {
            self.content.remove(&k);
        }
    }

    /// The board table equals the shadow table byte for byte.
    pub fn assert_matches(&self, sp: &SlowPath<'_>) {
        let k = self.geo.slots_per_bucket;
        for b in 0..self.geo.buckets() as u32 {
            let mut used = 0;
            for s in 0..k {
                let off = (b as usize * k as usize + s as usize) * PTE_LEN;
                let shadow = sp.shadow().slot_bytes(b, s).unwrap();
                assert_eq!(
                    &self.table[off..off + PTE_LEN],
                    &shadow[..],
                    "slot {b}/{s} differs"
                );
                used += self.slot(b, s).allocated as u32;
            }
            assert!(used <= k);
            assert_eq!(sp.shadow().free_in(b), k - used, "free count of bucket {b}");
        }
    }
}

/// Scrub with the board's zeroing callback, everything applied so far consumed.
pub fn scrub(sp: &mut SlowPath<'_>, board: &mut Board) -> u64 {
    let consumed = board.applied;
    let mut zeroed = Vec::new();
    let n = sp.scrub(consumed, |pa, len| zeroed.push((pa, len)));
    for (pa, len) in zeroed {
        board.zero(pa, len);
    }
    n
}

/// One `OFFLOAD_CALL` packet `pkt` through `host` the way the ring carries
/// it: cut into `OFFLOAD_REQ` fragments under tag `seq % 64` and `seq`, fed
/// one by one, and its `OFFLOAD_REPLY` fragments (which must carry the same
/// tag and sequence) put back together. Returns the answer's status and
/// payload; the slow path's other descriptors stay in `tx`, in order.
pub fn offload_exchange<const B: usize>(
    host: &mut clio_slowpath::offload::OffloadHost<'_, 2, 4, B>,
    sp: &mut SlowPath<'_>,
    dram: &mut clio_slowpath::offload::SliceDram<'_>,
    tx: &mut Vec<Descriptor>,
    seq: u32,
    pkt: &[u8],
) -> (Status, Vec<u8>) {
    use clio_wire::ring::{offload_fragments, Direction, OffloadAssembler, OffloadReplyHead};
    let tag = seq % 64;
    let mut answered = 0;
    for f in offload_fragments(tag, seq, pkt, Direction::Rx).unwrap() {
        answered += host.fragment(&f, sp, dram, tx) as u32;
    }
    assert_eq!(answered, 1, "one answer per call");
    let mut a = OffloadAssembler::<{ 1 << 16 }>::new();
    let mut got = None;
    let mut rest = Vec::new();
    for d in tx.drain(..) {
        if let Descriptor::Offload {
            dir,
            tag: t,
            seq: s,
            ..
        } = d
        {
            assert_eq!(
                (dir, t, s),
                (Direction::Tx, tag, seq),
                "the answer's fragment"
            );
            if let Some((_, _, b)) = a.push(&d) {
                got = Some(b.to_vec());
            }
        } else {
            rest.push(d);
        }
    }
    *tx = rest;
    let dg = got.expect("a whole answer");
    let (head, p) = OffloadReplyHead::split(&dg).unwrap();
    (head.status, p.to_vec())
}
