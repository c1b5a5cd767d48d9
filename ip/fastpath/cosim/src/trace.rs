//! Seeded trace generation: client packets, slow-path ring traffic, and the
//! reference model's answers to them.
//!
//! The generator plays every party around the fast path: clients (reads,
//! writes of every size, atomics, ALLOC / FREE and their retries while the
//! slow path holds them, fences, retries, duplicates, malformed, corrupt
//! and truncated packets, wrong PIDs, unmapped and read-only pages) and the
//! slow path (PTE inserts and removals, TLB shootdowns, free-PA refills,
//! corrupt descriptors, consuming or not consuming the RX ring, REPLYs to
//! the forwarded requests it read: correct ones, stale generations, wrong
//! PIDs, unknown tags, undefined statuses). Every event
//! is applied to the model as it is generated, so the expected responses and
//! memory follow from the model alone.

use clio_fastpath::{ClientId, FastPath, GateStats, GateVerdict, OffloadLinkStats, Stats, Trace};
use clio_wire::clio::{field, flags, HEADER_LEN, RESPONSE_BIT};
use clio_wire::payload::{
    perms, AllocReq, AtomicArgs, ChaseReq, FreeReq, InfoResp, OffloadCallReq, OpenSessionReq,
};
use clio_wire::pte::{bucket_index, Pte, PTE_LEN};
use clio_wire::ring::{
    self, header_field, Descriptor, Direction, GateMode, GATE_BLOCK, GATE_MAX_TRACKED,
};
use clio_wire::{Header, Opcode, Status};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::board::{self, LARGE_POOL, LARGE_SHIFT, SMALL_POOL, SMALL_SHIFT};

mod classes;
pub use classes::{generate_class, Class, ClassCase, MIXED_EVERY, MIXED_EVERY_LONG};

/// One stimulus event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A packet arrives from the network.
    Packet(Vec<u8>),
    /// The fast path drains the TX ring once.
    Poll,
    /// The ARM writes bytes into board memory at a physical address.
    Mem(u64, Vec<u8>),
    /// Nothing arrives for this many cycles (paces a client in
    /// [`generate_fairness`]; the model has nothing to do).
    Gap(u32),
    /// The slow path reads an RX slot at this physical address: the board
    /// memory there must hold these bytes (a `GATE_DIRTY` report, checked
    /// as it is consumed, before a later push may overwrite it).
    Expect(u64, Vec<u8>),
}

/// Which translation path a request took (for latency reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathClass {
    /// Translated by the TLB.
    Hit,
    /// One bucket read, PTE already valid.
    Miss,
    /// Bucket read and first-touch fault.
    Fault,
    /// A READ of exactly the response bound (`network.max_response_bytes`),
    /// served in full: the longest one request may hold the output.
    Bound,
    /// A READ above the bound, answered `TOO_LARGE` header-only.
    TooLarge,
    /// A small READ of one client while another streams bound-sized READs
    /// ([`generate_fairness`]).
    Probe,
}

/// A generated case: stimulus, expected outputs, memory images.
#[derive(Debug, Clone)]
pub struct Case {
    /// Seed it was generated from.
    pub seed: u64,
    /// Events in order.
    pub events: Vec<Event>,
    /// Response packets, each with the index of the event that produced it.
    pub outputs: Vec<(usize, Vec<u8>)>,
    /// Single-beat, single-page 8-byte reads and the path each took.
    pub paths: Vec<(usize, PathClass)>,
    /// Board memory before the first event.
    pub initial: Vec<u8>,
    /// Board memory after the last event.
    pub last: Vec<u8>,
    /// Packets in the trace.
    pub packets: usize,
    /// Events from this index on are to be sent back to back (throughput run).
    pub stream_from: Option<usize>,
    /// The reference model's counters after the last event (what the trace covered).
    pub stats: Stats,
    /// The model's region-gate counters after the last event.
    pub gate: GateStats,
    /// Changes refused `BUSY` because a `GATE_DIRTY` report found the RX ring full.
    pub gate_rx_full: u64,
    /// `GATE_DIRTY` reports the slow path read (each an [`Event::Expect`]).
    pub gate_reports_read: u64,
    /// The model's offload pass-through counters (zero unless it is on).
    pub offload: OffloadLinkStats,
    /// What the slow path of [`generate_offload`] did.
    pub offload_gen: OffloadGen,
}

/// What the slow path of [`generate_offload`] read and answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OffloadGen {
    /// `OFFLOAD_REQ` slots it read (each an [`Event::Expect`]).
    pub slots_read: u64,
    /// Calls it reassembled from them.
    pub calls_read: u64,
    /// Answers it sent whole and in order (any status, any length).
    pub answers: u64,
    /// ... of them with a payload above the MTU.
    pub multi_packet: u64,
    /// ... of them above the response bound (answered `MALFORMED`).
    pub above_bound: u64,
    /// Answers under a stale or unknown sequence number.
    pub stale: u64,
    /// Answers with a fragment missing or two swapped.
    pub broken: u64,
    /// Answers whose head does not parse (short, bad status or reserved).
    pub bad_head: u64,
}

/// A page the slow path allocated to a process.
#[derive(Debug, Clone, Copy)]
struct Page {
    pid: u32,
    vpn: u64,
    shift: u8,
    perms: u8,
    bucket: u32,
    slot: u32,
}

/// A request forwarded to the slow path, as the ARM read it from the RX ring.
#[derive(Debug, Clone, Copy)]
struct Forwarded {
    tag: u32,
    pid: u32,
    req_id: u32,
    kind: FwdKind,
    va: u64,
    size: u64,
}

/// What a forwarded request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FwdKind {
    Alloc,
    Free,
    /// OPEN_SESSION joining `join` (0: a new address space) with `key`.
    Open {
        join: u16,
        key: u64,
    },
    /// CLOSE_SESSION of a session.
    Close {
        session: u16,
    },
}

/// Credentials of a session a client holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cred {
    session: u16,
    pid: u32,
    key: u64,
    epoch: u32,
}

/// What a published TX descriptor does to the clients' sessions.
#[derive(Debug, Clone, Copy)]
enum CredChange {
    Install(Cred),
    Close(u16),
}

/// A linked list the client built in its memory (for later walks).
#[derive(Debug, Clone)]
struct List {
    pid: u32,
    head: u64,
    keys: Vec<u64>,
    key_offset: u16,
    next_offset: u16,
    len: usize,
}

/// A sent non-idempotent request that a later retry may repeat.
#[derive(Debug, Clone)]
struct Sent {
    header: Header,
    payload: Vec<u8>,
}

struct Gen {
    rng: SmallRng,
    model: FastPath<Vec<u8>>,
    events: Vec<Event>,
    outputs: Vec<(usize, Vec<u8>)>,
    paths: Vec<(usize, PathClass)>,
    pages: Vec<Page>,
    next_req: u32,
    small_next: u64,
    large_next: u64,
    sent: Vec<Sent>,
    packets: usize,
    /// Forwarded requests the ARM has read and not yet answered.
    waiting: Vec<Forwarded>,
    /// Linked lists built for pointer chases.
    lists: Vec<List>,
    /// Sessions the clients hold (installed by the slow path).
    creds: Vec<Cred>,
    /// Sessions of an earlier boot (their requests must answer RESTARTED).
    stale: Vec<Cred>,
    /// This boot's epoch.
    epoch: u32,
    /// Changes refused for want of RX room for their `GATE_DIRTY`.
    gate_rx_full: u64,
    /// `GATE_DIRTY` reports read by the slow path.
    gate_reports_read: u64,
    /// The offload host's reassembly of `OFFLOAD_REQ`s ([`generate_offload`]).
    off_asm: Box<ring::OffloadAssembler<{ ring::MAX_OFFLOAD_LEN }>>,
    /// Calls read and not yet answered: (tag, seq).
    off_calls: Vec<(u32, u32)>,
    /// Calls answered (their late repeats are stale).
    off_done: Vec<(u32, u32)>,
    off_gen: OffloadGen,
}

/// Where the TX head sits; the doorbell follows it, so both go in one write.
const TX_HEAD: usize = header_field::HEAD.start;
const _: () = assert!(header_field::DOORBELL.start == header_field::HEAD.end);

impl Gen {
    /// The finished case: what was generated, the memory before (`initial`)
    /// and after it (the model's), and where the READ streams part starts.
    fn into_case(self, seed: u64, initial: Vec<u8>, stream_from: Option<usize>) -> Case {
        let last = self.model.dram().clone();
        Case {
            seed,
            events: self.events,
            outputs: self.outputs,
            paths: self.paths,
            initial,
            last,
            packets: self.packets,
            stream_from,
            stats: *self.model.stats(),
            gate: self.model.gate().stats(),
            gate_rx_full: self.gate_rx_full,
            gate_reports_read: self.gate_reports_read,
            offload: self.model.offload_link_stats(),
            offload_gen: self.off_gen,
        }
    }

    fn lay(&self) -> clio_fastpath::Layout {
        *self.model.layout()
    }

    fn mem_write(&mut self, pa: u64, bytes: Vec<u8>) {
        let off = (pa - self.lay().dram_base) as usize;
        self.model.dram_mut()[off..off + bytes.len()].copy_from_slice(&bytes);
        self.events.push(Event::Mem(pa, bytes));
    }

    fn u32_at(&self, pa: u64) -> u32 {
        let off = (pa - self.lay().dram_base) as usize;
        u32::from_le_bytes(self.model.dram()[off..off + 4].try_into().expect("4 bytes"))
    }

    /// Publish TX descriptors as the ARM does (slot, then head and doorbell);
    /// returns how many fitted.
    fn tx_publish(&mut self, slots: Vec<[u8; ring::SLOT_LEN]>) -> usize {
        let lay = self.lay();
        let base = lay.dram_base + lay.tx_ring.start as u64;
        let count = (lay.tx_ring.len() - ring::HEADER_LEN) / ring::SLOT_LEN;
        let mut published = 0;
        for s in slots {
            let head = self.u32_at(base + TX_HEAD as u64);
            let tail = self.u32_at(base + header_field::TAIL.start as u64);
            if head.wrapping_sub(tail) as usize >= count {
                break;
            }
            published += 1;
            let at = base + ring::slot_offset(head, count as u32) as u64;
            self.mem_write(at, s.to_vec());
            let bell = self.u32_at(base + header_field::DOORBELL.start as u64);
            let mut hb = head.wrapping_add(1).to_le_bytes().to_vec();
            hb.extend_from_slice(&bell.wrapping_add(1).to_le_bytes());
            self.mem_write(base + TX_HEAD as u64, hb);
        }
        published
    }

    fn desc(d: &Descriptor) -> [u8; ring::SLOT_LEN] {
        let mut s = [0u8; ring::SLOT_LEN];
        d.emit(&mut s).expect("descriptor encodes");
        s
    }

    fn poll(&mut self) {
        let idx = self.events.len();
        self.events.push(Event::Poll);
        let mut outs = Vec::new();
        self.model
            .poll_rings(&mut |_, b: &[u8]| outs.push(b.to_vec()));
        self.outputs.extend(outs.into_iter().map(|o| (idx, o)));
    }

    /// Whether the RX ring has no free slot.
    fn rx_full(&self) -> bool {
        let lay = self.lay();
        let base = lay.dram_base + lay.rx_ring.start as u64;
        let head = self.u32_at(base + header_field::HEAD.start as u64);
        let tail = self.u32_at(base + header_field::TAIL.start as u64);
        let count = ((lay.rx_ring.len() - ring::HEADER_LEN) / ring::SLOT_LEN) as u32;
        head.wrapping_sub(tail) >= count
    }

    /// The slow path moves regions (issue #22): one to three `GATE_SET`s
    /// over allocated pages (every mode, few entries so they are re-set and
    /// cleared often, the odd entry past the table or tracked range above
    /// the bound: rejected), then (if it is `reading`) the RX ring now and
    /// then, then the poll.
    fn gate_batch(&mut self, reading: bool) {
        let entries = self.model.gate().capacity() as u32;
        let mut slots = Vec::new();
        for _ in 0..self.rng.gen_range(1..=3) {
            let entry = if self.rng.gen_bool(0.04) {
                entries + self.rng.gen_range(0..3)
            } else {
                self.rng.gen_range(0..entries.min(5))
            };
            let mode = match self.rng.gen_range(0..20) {
                0..=4 => GateMode::Open,
                5..=8 => GateMode::Paused,
                9..=15 => GateMode::Tracking,
                16..=17 => GateMode::Moved,
                _ => GateMode::Rejoin,
            };
            let (pid, va, len) = if self.pages.is_empty() || self.rng.gen_bool(0.05) {
                (
                    self.rng.gen_range(1..=self.lay().max_pid),
                    0x8000_0000,
                    4096,
                )
            } else {
                let p = self.pages[self.rng.gen_range(0..self.pages.len())];
                let page = 1u64 << p.shift;
                let (va, len) = match self.rng.gen_range(0..6) {
                    // A PID's small pages (VPN 0x10000..) at once.
                    0 | 1 => (0x1_0000u64 << 12, 32 << 12),
                    2 => (Self::va_of(&p), page),
                    3 => (
                        Self::va_of(&p) + self.rng.gen_range(0..page),
                        self.rng.gen_range(1..256),
                    ),
                    4 => (
                        Self::va_of(&p) & !(GATE_BLOCK - 1),
                        self.rng.gen_range(1..=4) * GATE_BLOCK,
                    ),
                    _ => (
                        Self::va_of(&p).saturating_sub(self.rng.gen_range(0..2 * page)),
                        self.rng.gen_range(1..=GATE_MAX_TRACKED),
                    ),
                };
                (p.pid, va, len)
            };
            let len = if mode == GateMode::Tracking && self.rng.gen_bool(0.03) {
                GATE_MAX_TRACKED + 1
            } else {
                len
            };
            slots.push(Self::desc(&Descriptor::GateSet {
                entry,
                pid,
                va,
                len,
                mode,
            }));
        }
        self.tx_publish(slots);
        if reading && self.rng.gen_bool(0.4) {
            self.consume_rx();
        }
        self.poll();
    }

    fn consume_rx(&mut self) {
        let lay = self.lay();
        let base = lay.dram_base + lay.rx_ring.start as u64;
        let head = self.u32_at(base + header_field::HEAD.start as u64);
        let tail = self.u32_at(base + header_field::TAIL.start as u64);
        if head != tail {
            let upto = if self.rng.gen_bool(0.5) {
                head
            } else {
                tail.wrapping_add(head.wrapping_sub(tail).div_ceil(2))
            };
            // The ARM reads what it consumes: forwarded requests wait for its reply.
            let count = ((lay.rx_ring.len() - ring::HEADER_LEN) / ring::SLOT_LEN) as u32;
            let mut i = tail;
            while i != upto {
                let at = lay.rx_ring.start + ring::slot_offset(i, count);
                let slot = &self.model.dram()[at..at + ring::SLOT_LEN];
                match Descriptor::parse(slot, Direction::Rx) {
                    Ok(Descriptor::AllocReq {
                        tag,
                        pid,
                        req_id,
                        va,
                        size,
                        ..
                    }) => self.waiting.push(Forwarded {
                        tag,
                        pid,
                        req_id,
                        kind: FwdKind::Alloc,
                        va,
                        size,
                    }),
                    Ok(Descriptor::FreeReq {
                        tag,
                        pid,
                        req_id,
                        va,
                        size,
                    }) => self.waiting.push(Forwarded {
                        tag,
                        pid,
                        req_id,
                        kind: FwdKind::Free,
                        va,
                        size,
                    }),
                    Ok(Descriptor::SessionOpenReq {
                        tag,
                        pid,
                        req_id,
                        join_session,
                        join_key,
                    }) => self.waiting.push(Forwarded {
                        tag,
                        pid,
                        req_id,
                        kind: FwdKind::Open {
                            join: join_session,
                            key: join_key,
                        },
                        va: 0,
                        size: 0,
                    }),
                    Ok(Descriptor::SessionCloseReq {
                        tag,
                        pid,
                        req_id,
                        session,
                    }) => self.waiting.push(Forwarded {
                        tag,
                        pid,
                        req_id,
                        kind: FwdKind::Close { session },
                        va: 0,
                        size: 0,
                    }),
                    Ok(d @ Descriptor::Offload { .. }) => {
                        // The slow path's offload host: the fragment must be
                        // in the RTL's ring too, byte for byte.
                        let bytes = self.model.dram()[at..at + ring::SLOT_LEN].to_vec();
                        self.events
                            .push(Event::Expect(lay.dram_base + at as u64, bytes));
                        self.off_gen.slots_read += 1;
                        if let Some((tag, seq, _)) = self.off_asm.push(&d) {
                            self.off_calls.push((tag, seq));
                            self.off_gen.calls_read += 1;
                        }
                    }
                    Ok(Descriptor::GateDirty { .. }) => {
                        // The report must be in the RTL's ring too, byte for byte.
                        let bytes = self.model.dram()[at..at + ring::SLOT_LEN].to_vec();
                        self.events
                            .push(Event::Expect(lay.dram_base + at as u64, bytes));
                        self.gate_reports_read += 1;
                    }
                    _ => {}
                }
                i = i.wrapping_add(1);
            }
            self.mem_write(
                base + header_field::TAIL.start as u64,
                upto.to_le_bytes().to_vec(),
            );
        }
    }

    fn next_ppn(&mut self, shift: u8) -> u32 {
        let (pool, next) = if shift == SMALL_SHIFT {
            (SMALL_POOL, &mut self.small_next)
        } else {
            (LARGE_POOL, &mut self.large_next)
        };
        let pages = (pool.1 - pool.0) >> shift;
        let pa = pool.0 + ((*next % pages) << shift);
        *next += 1;
        (pa >> shift) as u32
    }

    /// Allocate a page to a process: find a free slot of its bucket in the
    /// table as the model holds it, and describe the PTE write.
    fn allocate(&mut self, pid: u32, vpn: u64, shift: u8, valid: bool) -> Option<Descriptor> {
        let perms = if self.rng.gen_bool(0.15) {
            perms::READ
        } else {
            perms::RW
        };
        self.allocate_with(pid, vpn, shift, valid, perms)
    }

    /// [`Gen::allocate`] with the permissions given.
    fn allocate_with(
        &mut self,
        pid: u32,
        vpn: u64,
        shift: u8,
        valid: bool,
        perms: u8,
    ) -> Option<Descriptor> {
        let lay = self.lay();
        let g = lay.table;
        if self
            .pages
            .iter()
            .any(|p| p.pid == pid && p.vpn == vpn && p.shift == shift)
        {
            return None;
        }
        let bucket = bucket_index(pid, vpn, g.bucket_bits);
        let taken: Vec<u32> = self
            .pages
            .iter()
            .filter(|p| p.bucket == bucket)
            .map(|p| p.slot)
            .collect();
        let slot = (0..g.slots_per_bucket).find(|s| !taken.contains(s))?;
        let ppn = if valid { self.next_ppn(shift) } else { 0 };
        self.pages.push(Page {
            pid,
            vpn,
            shift,
            perms,
            bucket,
            slot,
        });
        let pte = Pte {
            pid,
            vpn,
            ppn,
            perms,
            allocated: true,
            valid,
            page_shift: shift,
        };
        Some(Descriptor::PteWrite {
            bucket,
            slot,
            update: false,
            pte,
        })
    }

    fn va_of(p: &Page) -> u64 {
        p.vpn << p.shift
    }

    /// A batch of slow-path work: allocations, refills, removals, shootdowns,
    /// the odd corrupt descriptor; then the fast path polls.
    /// REPLYs of the ARM: answers to forwarded requests it read (most of
    /// them correct, some with an undefined status), and the odd reply with
    /// a stale generation, a wrong PID or a tag nobody holds; SESSION_REPLYs
    /// to OPEN_SESSION / CLOSE_SESSION (some with a session id outside the
    /// table), slow-path-initiated closes. Returns the slots, per slot the
    /// index in `waiting` it answers, and what it does to the clients' sessions.
    #[allow(clippy::type_complexity)]
    fn replies(
        &mut self,
    ) -> (
        Vec<[u8; ring::SLOT_LEN]>,
        Vec<Option<usize>>,
        Vec<Option<CredChange>>,
    ) {
        let mut slots = Vec::new();
        let mut answers = Vec::new();
        let mut changes = Vec::new();
        let max_pid = self.lay().max_pid;
        let cap = self.lay().sessions as u16;
        for i in 0..self.waiting.len() {
            if !self.rng.gen_bool(0.6) {
                continue;
            }
            let w = self.waiting[i];
            let status = match self.rng.gen_range(0..20) {
                0 => Status::OutOfMemory.raw(),
                1 => Status::Busy.raw(),
                2 => 0x33, // undefined: the client sees MALFORMED
                _ => Status::Ok.raw(),
            };
            match w.kind {
                FwdKind::Open { join, key } => {
                    // The slow path's answer: a join needs a live session and its key.
                    let joined = self
                        .creds
                        .iter()
                        .find(|c| c.session == join && c.key == key && c.pid == w.pid)
                        .copied();
                    let (status, pid) = match (join, joined) {
                        (0, _) if w.pid == 0 => (status, self.rng.gen_range(1..=max_pid)),
                        (_, Some(c)) if join != 0 => (status, c.pid),
                        _ => (Status::BadSession.raw(), w.pid),
                    };
                    let session = match self.rng.gen_range(0..30) {
                        0 => 0,   // outside the table: rejected
                        1 => cap, // outside the table: rejected
                        _ => self.rng.gen_range(1..cap),
                    };
                    let (mut d, cred) = self.install(w.tag, session, pid);
                    if let Descriptor::SessionReply { status: st, .. } = &mut d {
                        *st = status;
                    }
                    let ok = status == Status::Ok.raw();
                    let valid = !ok || (1..cap).contains(&session);
                    slots.push(Self::desc(&d));
                    answers.push(valid.then_some(i));
                    changes.push((ok && valid).then_some(CredChange::Install(cred)));
                }
                FwdKind::Close { session } => {
                    let ok = status == Status::Ok.raw();
                    slots.push(Self::desc(&Descriptor::SessionReply {
                        tag: w.tag,
                        pid: w.pid,
                        req_id: w.req_id,
                        status,
                        session,
                        key: 0,
                        dedup_quota: 0,
                        lock_quota: 0,
                        mem_quota_pages: 0,
                        close: true,
                    }));
                    answers.push(Some(i));
                    changes.push(ok.then_some(CredChange::Close(session)));
                }
                FwdKind::Alloc | FwdKind::Free => {
                    let alloc = w.kind == FwdKind::Alloc;
                    let moved = alloc && self.rng.gen_bool(0.3);
                    let va = if moved {
                        w.va.wrapping_add(self.rng.gen_range(1..64u64) << SMALL_SHIFT)
                    } else {
                        w.va
                    };
                    let mut d = Descriptor::Reply {
                        tag: w.tag,
                        pid: w.pid,
                        req_id: w.req_id,
                        status,
                        va,
                        size: w.size.next_multiple_of(1 << SMALL_SHIFT),
                        retries: if alloc { self.rng.gen_range(0..5) } else { 0 },
                        moved,
                    };
                    let mut answers_it = Some(i);
                    if let Descriptor::Reply { tag, pid, .. } = &mut d {
                        match self.rng.gen_range(0..25) {
                            0 => {
                                *tag = tag.wrapping_add(1 << 16); // another generation of the slot
                                answers_it = None;
                            }
                            1 => {
                                *pid = *pid % max_pid + 1; // not the requester
                                answers_it = None;
                            }
                            _ => {}
                        }
                    }
                    slots.push(Self::desc(&d));
                    answers.push(answers_it);
                    changes.push(None);
                }
            }
        }
        if self.rng.gen_bool(0.1) {
            // A tag no slot holds (beyond the table), or a second answer to an
            // answered request (its generation has moved on).
            let tag = if self.rng.gen_bool(0.5) {
                0x1_0000 | self.rng.gen_range(64..0x1_0000u32)
            } else {
                self.rng.gen_range(0..64u32)
            };
            slots.push(Self::desc(&Descriptor::Reply {
                tag,
                pid: self.rng.gen_range(1..=max_pid),
                req_id: 1,
                status: 0,
                va: 0,
                size: 0,
                retries: 0,
                moved: false,
            }));
            answers.push(None);
            changes.push(None);
        }
        if !self.creds.is_empty() && self.rng.gen_bool(0.05) {
            // The slow path closes a session on its own (tag 0: no answer).
            let c = self.creds[self.rng.gen_range(0..self.creds.len())];
            slots.push(Self::desc(&Descriptor::SessionReply {
                tag: 0,
                pid: c.pid,
                req_id: 0,
                status: 0,
                session: c.session,
                key: 0,
                dedup_quota: 0,
                lock_quota: 0,
                mem_quota_pages: 0,
                close: true,
            }));
            answers.push(None);
            changes.push(Some(CredChange::Close(c.session)));
        }
        if self.rng.gen_bool(0.1) {
            // A session the slow path opens on its own for some PID.
            let session = self.rng.gen_range(1..cap);
            let pid = self.rng.gen_range(1..=max_pid);
            let (d, cred) = self.install(0, session, pid);
            slots.push(Self::desc(&d));
            answers.push(None);
            changes.push(Some(CredChange::Install(cred)));
        }
        (slots, answers, changes)
    }

    fn slow_path_batch(&mut self, initial: bool) {
        let (mut slots, answers, changes) = if initial {
            (Vec::new(), Vec::new(), Vec::new())
        } else {
            self.replies()
        };
        let max_pid = self.lay().max_pid;
        let n_alloc = if initial {
            14
        } else {
            self.rng.gen_range(0..4)
        };
        for _ in 0..n_alloc {
            let pid = self.rng.gen_range(1..=max_pid);
            let (vpn, shift) = if self.rng.gen_bool(0.75) {
                (0x1_0000 + self.rng.gen_range(0..24u64), SMALL_SHIFT)
            } else {
                let base = self.lay().class_base(1) >> LARGE_SHIFT;
                (base + self.rng.gen_range(0..8u64), LARGE_SHIFT)
            };
            let valid = self.rng.gen_bool(0.3);
            if let Some(d) = self.allocate(pid, vpn, shift, valid) {
                slots.push(Self::desc(&d));
            }
        }
        for _ in 0..self.rng.gen_range(0..6) {
            let shift = if self.rng.gen_bool(0.7) {
                SMALL_SHIFT
            } else {
                LARGE_SHIFT
            };
            let mut ppn = self.next_ppn(shift);
            if self.rng.gen_bool(0.05) {
                ppn = 3; // outside the data region: refused
            }
            let ps = if self.rng.gen_bool(0.03) { 21 } else { shift };
            slots.push(Self::desc(&Descriptor::FreePaPush {
                page_shift: ps,
                ppn,
            }));
        }
        if !initial && !self.pages.is_empty() && self.rng.gen_bool(0.2) {
            let i = self.rng.gen_range(0..self.pages.len());
            let p = self.pages[i];
            let wrong = self.rng.gen_bool(0.2);
            let vpn = if wrong { p.vpn + 1000 } else { p.vpn };
            if !wrong {
                self.pages.remove(i);
            }
            slots.push(Self::desc(&Descriptor::PteRemove {
                bucket: p.bucket,
                slot: p.slot,
                pid: p.pid,
                vpn,
            }));
        }
        if !initial && !self.pages.is_empty() && self.rng.gen_bool(0.2) {
            let p = self.pages[self.rng.gen_range(0..self.pages.len())];
            let pages = *[0u32, 1, 4].get(self.rng.gen_range(0..3)).unwrap_or(&1);
            slots.push(Self::desc(&Descriptor::TlbInvalidate {
                pid: p.pid,
                vpn: p.vpn,
                pages,
            }));
        }
        if !initial && !self.pages.is_empty() && self.rng.gen_bool(0.1) {
            // Permission change of a live page (an update: the TLB entry leaves).
            let i = self.rng.gen_range(0..self.pages.len());
            let p = self.pages[i];
            let off = self
                .lay()
                .offset(self.lay().table.slot_addr(p.bucket, p.slot));
            if let Ok(mut pte) = Pte::parse(&self.model.dram()[off..off + PTE_LEN]) {
                pte.perms = if pte.perms == perms::RW {
                    perms::READ
                } else {
                    perms::RW
                };
                self.pages[i].perms = pte.perms;
                slots.push(Self::desc(&Descriptor::PteWrite {
                    bucket: p.bucket,
                    slot: p.slot,
                    update: true,
                    pte,
                }));
            }
        }
        if self.rng.gen_bool(0.15) {
            // Corrupt descriptors: a flipped bit, a stray operand byte, a reply nobody waits for.
            let mut s = Self::desc(&Descriptor::FreePaPush {
                page_shift: SMALL_SHIFT,
                ppn: 0x180,
            });
            match self.rng.gen_range(0..3) {
                0 => s[self.rng.gen_range(0..60)] ^= 1 << self.rng.gen_range(0..8),
                1 => {
                    s[ring::slot_field::D.start + 1] = 7;
                    let crc = clio_wire::crc32c(&s[..ring::slot_field::CRC.start]);
                    s[ring::slot_field::CRC].copy_from_slice(&crc.to_le_bytes());
                }
                _ => {
                    s = Self::desc(&Descriptor::Reply {
                        tag: 0x1_0003,
                        pid: 1,
                        req_id: 9,
                        status: 0,
                        va: 0,
                        size: 0,
                        retries: 0,
                        moved: false,
                    })
                }
            }
            slots.push(s);
        }
        let published = self.tx_publish(slots);
        for c in changes[..published.min(changes.len())].iter().flatten() {
            self.apply(*c);
        }
        // Replies that made it into the ring leave the ARM's list (a wrong one
        // is rejected and its request still waits for the right one).
        let mut done: Vec<usize> = answers[..published.min(answers.len())]
            .iter()
            .flatten()
            .copied()
            .collect();
        done.sort_unstable();
        for i in done.into_iter().rev() {
            self.waiting.remove(i);
        }
        if self.rng.gen_bool(0.7) {
            self.consume_rx();
        }
        self.poll();
    }

    /// Apply a client packet to the model, recording it and the answers;
    /// returns the model's trace of it.
    fn send(&mut self, pkt: Vec<u8>, path_probe: bool) -> Trace {
        let idx = self.events.len();
        // A change the gate tracks, with no RX room for its report: BUSY.
        if !self.model.gate().is_empty() && self.rx_full() {
            let p = clio_wire::Packet::new_unchecked(&pkt[..]);
            // As the model takes it in: whole and with a good CRC first.
            if pkt.len() >= HEADER_LEN
                && pkt.len() >= HEADER_LEN + p.payload_len() as usize
                && p.verify_crc().is_ok()
            {
                if let Ok(h) = Header::parse(&p) {
                    if matches!(self.model.gate().verdict(&h), GateVerdict::Track { .. }) {
                        self.gate_rx_full += 1;
                    }
                }
            }
        }
        let mut outs = Vec::new();
        let trace: Trace = self
            .model
            .receive(ClientId(0), &pkt, &mut |_, b: &[u8]| outs.push(b.to_vec()));
        let read_len = (pkt.len() >= HEADER_LEN && pkt[1] == Opcode::Read.raw())
            .then(|| Header::parse(&clio_wire::Packet::new_unchecked(&pkt[..])).ok())
            .flatten()
            .map(|h| h.total_len);
        if trace.status == Some(Status::TooLarge) && read_len.is_some() {
            self.paths.push((idx, PathClass::TooLarge));
        } else if trace.status == Some(Status::Ok) && read_len == Some(self.lay().max_resp) {
            self.paths.push((idx, PathClass::Bound));
        } else if path_probe && trace.pages == 1 && trace.status == Some(Status::Ok) {
            let class = if trace.faults > 0 {
                PathClass::Fault
            } else if trace.tlb_misses > 0 {
                PathClass::Miss
            } else {
                PathClass::Hit
            };
            self.paths.push((idx, class));
        }
        self.outputs.extend(outs.into_iter().map(|o| (idx, o)));
        self.events.push(Event::Packet(pkt));
        self.packets += 1;
        trace
    }

    fn header(&mut self, opcode: Opcode, pid: u32, va: u64, total_len: u32) -> Header {
        self.next_req = self.next_req.wrapping_add(1).max(1);
        // A session of the PID, if the client holds one (else none: BAD_SESSION).
        if pid != 0 && !self.creds.iter().any(|c| c.pid == pid) && self.rng.gen_bool(0.9) {
            // The client opens a session first (the slow path installs it).
            self.open_for(pid);
        }
        let mine: Vec<Cred> = self
            .creds
            .iter()
            .filter(|c| c.pid == pid)
            .copied()
            .collect();
        let c = if mine.is_empty() {
            None
        } else {
            Some(mine[self.rng.gen_range(0..mine.len())])
        };
        // Acknowledgements: usually none, often a watermark some way back
        // (frees older records), now and then everything sent so far.
        let ack = match self.rng.gen_range(0..100) {
            0..=49 => 0,
            50..=97 => self
                .next_req
                .wrapping_sub(self.rng.gen_range(1..150))
                .max(1),
            _ => self.next_req.wrapping_add(1).max(1),
        };
        Header {
            opcode,
            flags: 0,
            status: Status::Ok,
            pid,
            req_id: self.next_req,
            retry_of: 0,
            va,
            total_len,
            offset: 0,
            payload_len: 0,
            session: c.map_or(0, |c| c.session),
            epoch: c.map_or(self.epoch, |c| c.epoch),
            key: c.map_or(0, |c| c.key),
            ack,
        }
    }

    /// Apply a published session change to what the clients hold.
    fn apply(&mut self, c: CredChange) {
        match c {
            CredChange::Install(n) => {
                self.creds.retain(|x| x.session != n.session);
                self.creds.push(n);
            }
            CredChange::Close(s) => self.creds.retain(|x| x.session != s),
        }
    }

    /// A SESSION_REPLY installing `session` for `pid` (tag 0: nobody asked).
    fn install(&mut self, tag: u32, session: u16, pid: u32) -> (Descriptor, Cred) {
        let cfg = board::board();
        let key = self.rng.gen::<u64>() | 1;
        let cred = Cred {
            session,
            pid,
            key,
            epoch: self.epoch,
        };
        let d = Descriptor::SessionReply {
            tag,
            pid,
            req_id: 0,
            status: 0,
            session,
            key,
            dedup_quota: match self.rng.gen_range(0..10) {
                0 => 2,
                1 => 0,
                _ => cfg.dedup_quota(),
            },
            lock_quota: if self.rng.gen_bool(0.2) {
                0
            } else {
                cfg.lock_quota()
            },
            mem_quota_pages: cfg.mem_quota_pages(),
            close: false,
        };
        (d, cred)
    }

    /// Install a session for `pid` under an id no client holds (if any).
    fn open_for(&mut self, pid: u32) {
        let cap = self.lay().sessions as u16;
        let free: Vec<u16> = (1..cap)
            .filter(|s| !self.creds.iter().any(|c| c.session == *s))
            .collect();
        if free.is_empty() {
            return;
        }
        let session = free[self.rng.gen_range(0..free.len())];
        let (d, cred) = self.install(0, session, pid);
        if self.tx_publish(vec![Self::desc(&d)]) == 1 {
            self.apply(CredChange::Install(cred));
            self.poll();
        }
    }

    /// A boot of the slow path: a new epoch first, then one session per PID.
    fn boot(&mut self) {
        self.epoch = self.rng.gen::<u32>() | 1;
        self.stale.append(&mut self.creds);
        self.stale.retain(|c| c.epoch != 0);
        if self.stale.len() > 8 {
            self.stale.drain(..self.stale.len() - 8);
        }
        let mut slots = vec![Self::desc(&Descriptor::Epoch { epoch: self.epoch })];
        let mut creds = Vec::new();
        for pid in 1..=self.lay().max_pid {
            let (d, c) = self.install(0, pid as u16, pid);
            slots.push(Self::desc(&d));
            creds.push(c);
        }
        let n = self.tx_publish(slots);
        assert_eq!(n, creds.len() + 1, "the boot descriptors fit the TX ring");
        self.creds = creds;
        self.poll();
    }

    fn emit(h: &Header, payload: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + payload.len()];
        let mut h = *h;
        h.payload_len = payload.len() as u16;
        h.emit_with_payload(&mut buf, payload)
            .expect("packet encodes");
        buf
    }

    /// A VA to use: usually inside an allocated page, sometimes not.
    fn target(&mut self) -> (u32, u64) {
        let max_pid = self.lay().max_pid;
        if self.pages.is_empty() || self.rng.gen_bool(0.06) {
            let va = if self.rng.gen_bool(0.5) {
                0x8000_0000 + self.rng.gen_range(0..0x1000)
            } else {
                0x1_0000u64 << 12 | 0x123
            };
            return (self.rng.gen_range(1..=max_pid), va);
        }
        let p = self.pages[self.rng.gen_range(0..self.pages.len())];
        let off = if self.rng.gen_bool(0.2) {
            (1u64 << p.shift) - self.rng.gen_range(1..64)
        } else {
            self.rng.gen_range(0..(1u64 << p.shift))
        };
        (p.pid, Self::va_of(&p) + off)
    }

    /// An ALLOC (fixed or hinted VA, page size default/explicit, the odd bad
    /// payload) or a FREE, to be forwarded to the slow path.
    fn alloc_or_free(&mut self, pid: u32, va: u64) -> (Header, Vec<u8>) {
        let va = va & !((1 << SMALL_SHIFT) - 1);
        if self.rng.gen_bool(0.6) {
            let size = self.rng.gen_range(1..16u64) << SMALL_SHIFT;
            let req = AllocReq {
                size,
                perms: if self.rng.gen_bool(0.8) {
                    perms::RW
                } else {
                    perms::READ
                },
                page_shift: *[0u8, SMALL_SHIFT, LARGE_SHIFT]
                    .get(self.rng.gen_range(0..3))
                    .unwrap_or(&0),
            };
            let mut p = vec![0u8; AllocReq::LEN];
            let _ = req.emit(&mut p);
            match self.rng.gen_range(0..40) {
                0 => p[8] = 0,  // no permission
                1 => p[8] = 4,  // undefined permission bit
                2 => p[9] = 31, // page shift out of range
                3 => p[9] = 11, // page shift out of range
                4 => p[12] = 1, // reserved byte
                5 => p.truncate(self.rng.gen_range(0..AllocReq::LEN)),
                6 => p.push(0),
                _ => {}
            }
            let mut h = self.header(Opcode::Alloc, pid, va, 0);
            if self.rng.gen_bool(0.3) {
                h.flags = flags::FIXED_VA;
            }
            (h, p)
        } else {
            let mut p = vec![0u8; FreeReq::LEN];
            let _ = FreeReq {
                size: self.rng.gen_range(1..16u64) << SMALL_SHIFT,
            }
            .emit(&mut p);
            if self.rng.gen_bool(0.03) {
                p.truncate(5);
            }
            (self.header(Opcode::Free, pid, va, 0), p)
        }
    }

    /// Write a linked list into pages of one process (8-byte WRITE packets:
    /// key and next pointer of every node). Nodes sit anywhere in the pages,
    /// some across a page end; the last points nowhere, back to the head (a
    /// cycle), or to an unmapped VA.
    fn build_list(&mut self) {
        let rw: Vec<Page> = self
            .pages
            .iter()
            .filter(|p| p.perms == perms::RW)
            .copied()
            .collect();
        if rw.is_empty() {
            return;
        }
        let pid = rw[self.rng.gen_range(0..rw.len())].pid;
        let mine: Vec<Page> = rw.iter().filter(|p| p.pid == pid).copied().collect();
        let key_offset = self.rng.gen_range(0..40u16);
        let next_offset = (key_offset + 8 + self.rng.gen_range(0..24u16)) % 48;
        let n = self.rng.gen_range(1..=5usize);
        let nodes: Vec<u64> = (0..n)
            .map(|_| {
                let p = mine[self.rng.gen_range(0..mine.len())];
                let size = 1u64 << p.shift;
                let off = if self.rng.gen_bool(0.1) {
                    size - self.rng.gen_range(1..56) // words across the page end
                } else {
                    self.rng.gen_range(0..size - 64)
                };
                Self::va_of(&p) + off
            })
            .collect();
        let keys: Vec<u64> = (0..n).map(|_| self.rng.gen()).collect();
        for i in 0..n {
            let next = if i + 1 < n {
                nodes[i + 1]
            } else {
                match self.rng.gen_range(0..10) {
                    0..=2 => nodes[0],
                    3 => 0x8000_0000 + self.rng.gen_range(0..0x1000),
                    _ => 0,
                }
            };
            for (at, v) in [
                (u64::from(key_offset), keys[i]),
                (u64::from(next_offset), next),
            ] {
                let h = self.header(Opcode::Write, pid, nodes[i] + at, 8);
                let pkt = Self::emit(&h, &v.to_le_bytes());
                self.send(pkt, false);
            }
        }
        self.lists.push(List {
            pid,
            head: nodes[0],
            keys,
            key_offset,
            next_offset,
            len: n,
        });
        if self.lists.len() > 16 {
            self.lists.remove(0);
        }
    }

    /// A POINTER_CHASE over a list built earlier (memory may have changed
    /// since): a key of the list or not, hop limits below and above its
    /// length, values of any length, the odd malformed request.
    fn chase_request(&mut self) -> Option<(Header, Vec<u8>)> {
        if self.lists.is_empty() {
            return None;
        }
        let l = self.lists[self.rng.gen_range(0..self.lists.len())].clone();
        let mtu = self.lay().mtu as u16;
        let key = if self.rng.gen_bool(0.6) {
            l.keys[self.rng.gen_range(0..l.keys.len())]
        } else {
            self.rng.gen()
        };
        let mut req = ChaseReq {
            key,
            key_offset: l.key_offset,
            next_offset: l.next_offset,
            value_offset: self.rng.gen_range(0..80),
            value_len: match self.rng.gen_range(0..4) {
                0 => 0,
                1 => 8,
                2 => self.rng.gen_range(0..64),
                _ => self.rng.gen_range(0..=mtu - 16),
            },
            max_hops: match self.rng.gen_range(0..10) {
                0 => 1,
                // The longest walk allowed is costly to simulate: now and then.
                1 if self.rng.gen_bool(0.2) => 4096,
                1 | 2 => 64,
                _ => self.rng.gen_range(1..=l.len as u32 + 2),
            },
        };
        let mut len = ChaseReq::LEN;
        match self.rng.gen_range(0..40) {
            0 => req.max_hops = 0,
            1 => req.max_hops = 4097,
            2 => req.value_len = mtu - 15,
            3 => req.value_len = ChaseReq::MAX_VALUE + 1,
            4 => len = ChaseReq::LEN - 1,
            5 => len = ChaseReq::LEN + 1,
            _ => {}
        }
        let mut p = vec![0u8; ChaseReq::LEN + 1];
        let _ = req.emit(&mut p);
        p.truncate(len);
        Some((self.header(Opcode::PointerChase, l.pid, l.head, 0), p))
    }

    /// Directed: the same VPN mapped at both page sizes for one PID. The PTE
    /// tag is (pid, vpn, page shift) and the bucket index ignores the size,
    /// so the two pages share a bucket: the bucket read and the TLB must
    /// tell them apart (larger page in the lower slot for one VPN, in the
    /// higher for the other; one read-only, one read-write; one mapped, one
    /// faulting on first touch; a shootdown and a removal of one of them).
    fn two_page_sizes(&mut self) {
        let pid = 1;
        let large_base = self.lay().class_base(1) >> LARGE_SHIFT;
        let vpns = [large_base + 40, large_base + 41];
        // Both sizes' VAs of these VPNs lie in their own class.
        assert_eq!(
            self.lay().shift_of(vpns[0] << SMALL_SHIFT),
            Some(SMALL_SHIFT)
        );
        assert_eq!(
            self.lay().shift_of(vpns[0] << LARGE_SHIFT),
            Some(LARGE_SHIFT)
        );
        let mut slots = Vec::new();
        let order = [
            [
                (LARGE_SHIFT, true, perms::READ),
                (SMALL_SHIFT, false, perms::RW),
            ],
            [
                (SMALL_SHIFT, true, perms::RW),
                (LARGE_SHIFT, false, perms::RW),
            ],
        ];
        for (vpn, pair) in vpns.iter().zip(order) {
            for (shift, valid, p) in pair {
                if let Some(d) = self.allocate_with(pid, *vpn, shift, valid, p) {
                    slots.push(Self::desc(&d));
                }
            }
        }
        for shift in [SMALL_SHIFT, LARGE_SHIFT] {
            for _ in 0..2 {
                let ppn = self.next_ppn(shift);
                slots.push(Self::desc(&Descriptor::FreePaPush {
                    page_shift: shift,
                    ppn,
                }));
            }
        }
        self.tx_publish(slots);
        self.poll();
        let touch = |g: &mut Self| {
            for vpn in vpns {
                for shift in [SMALL_SHIFT, LARGE_SHIFT] {
                    let va = (vpn << shift) + 0x18;
                    let h = g.header(Opcode::Write, pid, va, 8);
                    let v = (vpn << 8 | u64::from(shift)).to_le_bytes();
                    g.send(Self::emit(&h, &v), false);
                    let h = g.header(Opcode::FetchAndAdd, pid, va, 8);
                    let mut a = [0u8; 8];
                    let _ = AtomicArgs::FetchAndAdd { addend: 3 }.emit(&mut a);
                    g.send(Self::emit(&h, &a), false);
                    let h = g.header(Opcode::Read, pid, va, 8);
                    g.send(Self::emit(&h, &[]), true);
                }
            }
        };
        touch(self);
        // Shootdown of one VPN (every size), then the reads miss and re-read the bucket.
        let inv = Self::desc(&Descriptor::TlbInvalidate {
            pid,
            vpn: vpns[0],
            pages: 1,
        });
        self.tx_publish(vec![inv]);
        self.poll();
        touch(self);
        // Remove the small page of the first VPN: its large twin stays mapped.
        if let Some(i) = self
            .pages
            .iter()
            .position(|p| p.pid == pid && p.vpn == vpns[0] && p.shift == SMALL_SHIFT)
        {
            let p = self.pages.remove(i);
            let rm = Self::desc(&Descriptor::PteRemove {
                bucket: p.bucket,
                slot: p.slot,
                pid,
                vpn: p.vpn,
            });
            self.tx_publish(vec![rm]);
            self.poll();
        }
        touch(self);
    }

    /// An OPEN_SESSION: a new address space, a join of a session the
    /// client holds (or with a wrong key), the odd malformed payload.
    fn open_session(&mut self) -> (Header, Vec<u8>) {
        let mut req = OpenSessionReq {
            join_session: 0,
            join_key: 0,
        };
        let mut pid = 0;
        if !self.creds.is_empty() && self.rng.gen_bool(0.3) {
            let c = self.creds[self.rng.gen_range(0..self.creds.len())];
            req.join_session = c.session;
            req.join_key = if self.rng.gen_bool(0.85) {
                c.key
            } else {
                c.key ^ 4
            };
            pid = c.pid;
        }
        let mut p = vec![0u8; OpenSessionReq::LEN];
        let _ = req.emit(&mut p);
        match self.rng.gen_range(0..40) {
            0 => p.truncate(self.rng.gen_range(0..OpenSessionReq::LEN)),
            1 => p[self.rng.gen_range(2..8)] = 1,    // reserved
            2 => p[self.rng.gen_range(16..32)] = 1,  // pad
            3 if req.join_session == 0 => p[15] = 1, // a key without a session to join
            4 => p.push(0),
            _ => {}
        }
        (self.header(Opcode::OpenSession, pid, 0, 0), p)
    }

    /// Directed: the exactly-once scenario. An FAA whose answer is
    /// lost, then more writes than the buffer has records (the client's
    /// watermark stays at the FAA), so the buffer fills and writes get
    /// BUSY; then the FAA's retry is answered from its record; then an
    /// acknowledgement of everything frees the buffer.
    fn exactly_once(&mut self) {
        let Some(p) = self
            .pages
            .iter()
            .find(|p| p.pid == 1 && p.perms == perms::RW)
            .copied()
        else {
            return;
        };
        let session = self.lay().sessions as u16 - 1;
        let (mut d, cred) = self.install(0, session, 1);
        if let Descriptor::SessionReply { dedup_quota, .. } = &mut d {
            *dedup_quota = u16::MAX; // only the buffer's size binds
        }
        self.tx_publish(vec![Self::desc(&d)]);
        self.apply(CredChange::Install(cred));
        self.poll();
        let va = Self::va_of(&p) + 8;
        let with = |h: Header| h.with_session(cred.session, cred.epoch, cred.key);
        let faa = |id: u32, retry_of: u32| {
            let mut a = [0u8; 8];
            let _ = AtomicArgs::FetchAndAdd { addend: 5 }.emit(&mut a);
            let h = Header {
                retry_of,
                ..with(Header::request(Opcode::FetchAndAdd, 1, id, va, 8))
            };
            Self::emit(&h, &a)
        };
        self.next_req = self.next_req.wrapping_add(1).max(1);
        let first = self.next_req;
        self.send(faa(first, 0), false);
        for i in 0..self.lay().dedup_entries as u64 + 4 {
            self.next_req = self.next_req.wrapping_add(1).max(1);
            let h = Header {
                ack: first,
                ..with(Header::request(
                    Opcode::Write,
                    1,
                    self.next_req,
                    va + 8 + 8 * (i % 64),
                    8,
                ))
            };
            self.send(Self::emit(&h, &i.to_le_bytes()), false);
        }
        self.next_req = self.next_req.wrapping_add(1).max(1);
        let retry = self.next_req;
        self.send(faa(retry, first), false);
        self.next_req = self.next_req.wrapping_add(1).max(1);
        let h = Header {
            ack: self.next_req.wrapping_add(1),
            ..with(Header::request(Opcode::Read, 1, self.next_req, va, 8))
        };
        self.send(Self::emit(&h, &[]), false);
    }

    fn request(&mut self) {
        let mtu = self.lay().mtu;
        let (pid, va) = self.target();
        let roll = self.rng.gen_range(0..100);
        let mut probe = false;
        let (mut h, payload) = match roll {
            0..=29 => {
                let bound = self.lay().max_resp;
                let len = match self.rng.gen_range(0..5) {
                    0 => 8,
                    1 => self.rng.gen_range(0..64),
                    2 => self.rng.gen_range(0..2 * mtu as u32),
                    3 => self.rng.gen_range(0..5000),
                    // Either side of the response bound (TOO_LARGE above).
                    _ => bound - 1 + self.rng.gen_range(0..3),
                };
                probe = len == 8 && va % 64 <= 56;
                (self.header(Opcode::Read, pid, va, len), Vec::new())
            }
            30..=59 => {
                let plen = match self.rng.gen_range(0..3) {
                    0 => self.rng.gen_range(0..25),
                    1 => self.rng.gen_range(0..=mtu),
                    _ => self.rng.gen_range(0..200),
                };
                let payload: Vec<u8> = (0..plen).map(|_| self.rng.gen()).collect();
                let extra = if self.rng.gen_bool(0.3) {
                    self.rng.gen_range(0..3000)
                } else {
                    0
                };
                let offset = if extra > 0 {
                    self.rng.gen_range(0..=extra)
                } else {
                    0
                };
                let mut h = self.header(
                    Opcode::Write,
                    pid,
                    va.saturating_sub(u64::from(offset)),
                    plen as u32 + extra,
                );
                h.offset = offset;
                (h, payload)
            }
            60..=79 => {
                let op = [
                    Opcode::TestAndSet,
                    Opcode::CompareAndSwap,
                    Opcode::FetchAndAdd,
                    Opcode::Lock,
                    Opcode::Unlock,
                ][self.rng.gen_range(0..5)];
                let va = if self.rng.gen_bool(0.95) {
                    va & !7
                } else {
                    va | 1
                };
                let mut payload = vec![0u8; 16];
                let n = match op {
                    Opcode::CompareAndSwap => {
                        let expected = *[0u64, 1, self.rng.gen()]
                            .get(self.rng.gen_range(0..3))
                            .unwrap_or(&0);
                        AtomicArgs::CompareAndSwap {
                            expected,
                            new: self.rng.gen(),
                        }
                        .emit(&mut payload)
                        .unwrap_or(0)
                    }
                    Opcode::FetchAndAdd => AtomicArgs::FetchAndAdd {
                        addend: self.rng.gen(),
                    }
                    .emit(&mut payload)
                    .unwrap_or(0),
                    _ => 0,
                };
                payload.truncate(n);
                (self.header(op, pid, va, 8), payload)
            }
            80..=84 => {
                // Retry or duplicate of an earlier non-idempotent request.
                if self.sent.is_empty() {
                    return;
                }
                let s = self.sent[self.rng.gen_range(0..self.sent.len())].clone();
                let mut h = s.header;
                if self.rng.gen_bool(0.7) {
                    // A retry names the first attempt (as the SDK does), now
                    // and then the attempt before it.
                    if h.retry_of == 0 || self.rng.gen_bool(0.1) {
                        h.retry_of = h.req_id;
                    }
                    self.next_req = self.next_req.wrapping_add(1).max(1);
                    h.req_id = self.next_req;
                }
                (h, s.payload)
            }
            85 => {
                // INFO must be as long as its answer; now and then it is not.
                let n = if self.rng.gen_bool(0.85) {
                    InfoResp::LEN + self.rng.gen_range(0..8)
                } else {
                    self.rng.gen_range(0..InfoResp::LEN)
                };
                (self.header(Opcode::Info, pid, 0, 0), vec![0u8; n])
            }
            86 => self.open_session(),
            87..=88 => (self.header(Opcode::Fence, pid, 0, 0), Vec::new()),
            89 => {
                let mut p = vec![0u8; OffloadCallReq::LEN];
                let _ = OffloadCallReq { offload: 7, op: 0 }.emit(&mut p);
                (self.header(Opcode::OffloadCall, pid, va, 0), p)
            }
            90..=92 => self.alloc_or_free(pid, va),
            93 => {
                self.build_list();
                return;
            }
            94..=95 => match self.chase_request() {
                Some(r) => r,
                None => return,
            },
            96 if self.rng.gen_bool(0.3) => {
                // CLOSE_SESSION of one of the PID's sessions (the odd one with a payload).
                let p = if self.rng.gen_bool(0.05) {
                    vec![0u8; 4]
                } else {
                    Vec::new()
                };
                (self.header(Opcode::CloseSession, pid, 0, 0), p)
            }
            97 => {
                // An opcode this board does not know: UNSUPPORTED.
                let mut h = self.header(Opcode::Read, pid, va, 8);
                h.opcode = Opcode::Read;
                let mut pkt = Self::emit(&h, &[]);
                pkt[field::OPCODE] = *[0x10u8, 0x3f, 0x7e]
                    .get(self.rng.gen_range(0..3))
                    .unwrap_or(&0x10);
                refill_crc(&mut pkt);
                self.send(pkt, false);
                return;
            }
            _ => (self.header(Opcode::Read, pid, va, 8), Vec::new()),
        };
        // Credentials that do not hold: a guessed key, another session, an
        // earlier boot, none at all.
        match self.rng.gen_range(0..100) {
            0 => h.key ^= 1 << self.rng.gen_range(0..64),
            1 => h.session = self.rng.gen_range(0..self.lay().sessions as u16 + 2),
            2 => {
                if let Some(c) = self
                    .stale
                    .get(self.rng.gen_range(0..self.stale.len().max(1)))
                {
                    (h.session, h.key, h.epoch) = (c.session, c.key, c.epoch);
                } else {
                    h.epoch ^= 0x100;
                }
            }
            3 => (h.session, h.key) = (0, 0),
            _ => {}
        }
        if self.rng.gen_bool(0.03) {
            h.pid = *[0u32, self.lay().max_pid + 1]
                .get(self.rng.gen_range(0..2))
                .unwrap_or(&0);
        }
        if h.opcode.is_non_idempotent() && self.rng.gen_bool(0.5) {
            self.sent.push(Sent {
                header: h,
                payload: payload.clone(),
            });
            if self.sent.len() > 64 {
                self.sent.remove(0);
            }
        }
        let mut pkt = Self::emit(&h, &payload);
        // Damage: malformed fields (CRC refilled), corruption, truncation, runts, strays.
        let damage = self.rng.gen_range(0..100);
        let refill = |p: &mut Vec<u8>| refill_crc(p);
        match damage {
            0..=1 => {
                let i = self.rng.gen_range(0..pkt.len());
                pkt[i] ^= 1 << self.rng.gen_range(0..8);
            }
            2 => pkt.truncate(self.rng.gen_range(HEADER_LEN..=pkt.len())),
            3 => pkt.truncate(self.rng.gen_range(0..HEADER_LEN)),
            4 => {
                pkt[1] |= RESPONSE_BIT;
                refill(&mut pkt);
            }
            5 => {
                match self.rng.gen_range(0..6) {
                    0 => pkt[0] = 1,
                    1 => pkt[1] = 0x33,
                    2 => pkt[2] = flags::MOVED,
                    3 => pkt[3] = 1,
                    4 => pkt[field::SESSION.end - 1] ^= 1,
                    _ => pkt[2] = 0x40,
                }
                refill(&mut pkt);
            }
            6 => pkt.extend(std::iter::repeat_n(0u8, self.rng.gen_range(1..30))),
            _ => {}
        }
        self.send(pkt, probe && damage > 6);
    }
}

/// Recompute the CRC of a packet whose header was changed.
pub(crate) fn refill_crc(p: &mut [u8]) {
    let n = HEADER_LEN
        + u16::from_be_bytes([p[field::PAYLOAD_LEN.start], p[field::PAYLOAD_LEN.end - 1]]) as usize;
    let n = n.min(p.len());
    p[field::CRC].fill(0);
    let crc = clio_wire::crc32c(&p[..n]);
    p[field::CRC].copy_from_slice(&crc.to_be_bytes());
}

fn new_gen(seed: u64) -> Gen {
    let board = board::board();
    let dram = vec![0u8; board.dram.size as usize];
    let model =
        FastPath::format(&board, board::options(), dram).expect("co-simulation board formats");
    Gen {
        rng: SmallRng::seed_from_u64(seed),
        model,
        events: Vec::new(),
        outputs: Vec::new(),
        paths: Vec::new(),
        pages: Vec::new(),
        next_req: 0,
        small_next: 0,
        large_next: 0,
        sent: Vec::new(),
        packets: 0,
        waiting: Vec::new(),
        lists: Vec::new(),
        creds: Vec::new(),
        stale: Vec::new(),
        epoch: 0,
        gate_rx_full: 0,
        gate_reports_read: 0,
        off_asm: Box::new(ring::OffloadAssembler::new()),
        off_calls: Vec::new(),
        off_done: Vec::new(),
        off_gen: OffloadGen::default(),
    }
}

/// Generate a case of about `requests` client packets from `seed`.
pub fn generate(seed: u64, requests: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    // Before the slow path's EPOCH every session request answers RESTARTED.
    let h = g.header(Opcode::Read, 1, 0x1000, 8);
    g.send(Gen::emit(&h, &[]), false);
    g.boot();
    g.slow_path_batch(true);
    g.two_page_sizes();
    g.exactly_once();
    while g.packets < requests {
        g.request();
        if g.rng.gen_bool(0.04) {
            g.slow_path_batch(false);
        }
        if g.rng.gen_bool(0.0005) {
            // The slow path reboots: a new epoch, every session anew.
            g.boot();
        }
    }
    g.into_case(seed, initial, None)
}

/// A case of about `requests` client packets from `seed` with the region
/// gate in use (issue #22): the random trace of [`generate`], and between
/// its requests the slow path sets, re-sets and clears gate entries over
/// the pages the requests touch (paused, tracking, moved, rejoin, open),
/// now and then stops reading the RX ring for a while (tracked changes
/// then find no room for their `GATE_DIRTY`: BUSY) and checks every
/// `GATE_DIRTY` it reads ([`Event::Expect`]). An EPOCH now and then clears
/// every entry.
pub fn generate_gates(seed: u64, requests: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.boot();
    g.slow_path_batch(true);
    g.two_page_sizes();
    let mut reading = true;
    while g.packets < requests {
        g.request();
        if g.rng.gen_bool(0.04) {
            g.gate_batch(reading);
        }
        if g.rng.gen_bool(0.01) {
            // The slow path is busy elsewhere (it stops reading the RX
            // ring, so reports find it full) or back.
            reading = !reading;
        }
        if reading && g.rng.gen_bool(0.05) {
            g.consume_rx();
        }
        if reading && g.rng.gen_bool(0.03) {
            g.slow_path_batch(false);
        }
        if g.rng.gen_bool(0.001) {
            g.boot();
        }
    }
    g.into_case(seed, initial, None)
}

impl Gen {
    /// A client's `OFFLOAD_CALL` of `len` payload bytes (an `OffloadCallReq`
    /// and arguments; the fast path does not look inside).
    fn offload_call(&mut self, len: usize) -> usize {
        let (pid, va) = self.target();
        let mut p = vec![0u8; len.max(OffloadCallReq::LEN)];
        let _ = OffloadCallReq {
            offload: self.rng.gen_range(1..8),
            op: self.rng.gen(),
        }
        .emit(&mut p);
        self.rng.fill(&mut p[OffloadCallReq::LEN..]);
        p.truncate(len);
        let mut h = self.header(Opcode::OffloadCall, pid, va, 0);
        if self.rng.gen_bool(0.3) {
            // Echoed by a one-packet answer, replaced in a multi-packet one.
            h.total_len = self.rng.gen_range(0..5000);
            h.offset = self.rng.gen_range(0..h.total_len.max(1));
        }
        let pkt = Self::emit(&h, &p);
        let idx = self.events.len();
        self.send(pkt, false);
        idx
    }

    /// The slow path answers some of the calls it read: whole answers of
    /// every status and of lengths either side of the MTU and of the
    /// response bound, and now and then one under a stale sequence number,
    /// with a fragment missing or two swapped, or with a head that does not
    /// parse. Fragments go through the TX ring as fast as it drains (a poll
    /// whenever it is full).
    fn offload_answers(&mut self) {
        let mtu = self.lay().mtu as u32;
        let bound = self.lay().max_resp.max(mtu);
        let mut frags: Vec<[u8; ring::SLOT_LEN]> = Vec::new();
        let n = self.rng.gen_range(0..=self.off_calls.len().min(4));
        for _ in 0..n {
            let i = self.rng.gen_range(0..self.off_calls.len());
            let (tag, seq) = self.off_calls.remove(i);
            let plen = match self.rng.gen_range(0..12) {
                0 => 0,
                1..=3 => self.rng.gen_range(1..64),
                4 => mtu - 1 + self.rng.gen_range(0..3),
                5 => self.rng.gen_range(mtu + 2..2 * mtu + 100),
                6 => 2 * mtu + self.rng.gen_range(0..2),
                7 => bound - 1 + self.rng.gen_range(0..3),
                8 => bound + self.rng.gen_range(2..200),
                _ => self.rng.gen_range(1..bound),
            };
            let status = if self.rng.gen_bool(0.6) {
                Status::Ok
            } else {
                Status::ALL[self.rng.gen_range(0..Status::ALL.len())]
            };
            let mut dg = ring::OffloadReplyHead { status }.to_bytes().to_vec();
            dg.extend((0..plen).map(|_| self.rng.gen::<u8>()));
            let (mut seq_out, mut kind) = (seq, 0);
            match self.rng.gen_range(0..100) {
                0..=5 => {
                    // A stale sequence number: an answer already given, or
                    // one the table forgot (64 calls on), or none at all.
                    seq_out = match self.off_done.last() {
                        Some(&(_, q)) if self.rng.gen_bool(0.5) => q,
                        _ if self.rng.gen_bool(0.5) => seq.wrapping_sub(64),
                        _ => seq.wrapping_add(1000),
                    };
                    // The call itself is still to be answered.
                    self.off_calls.push((tag, seq));
                    kind = 1;
                }
                6..=9 => kind = 2,
                10..=12 => {
                    // A head that does not parse.
                    match self.rng.gen_range(0..3) {
                        0 => dg.truncate(self.rng.gen_range(1..4)),
                        1 => dg[0] = 0xff,
                        _ => dg[1 + self.rng.gen_range(0..3)] = 1,
                    }
                    kind = 3;
                }
                _ => {}
            }
            let tag_out = if kind == 1 { seq_out % 64 } else { tag };
            let mut these: Vec<[u8; ring::SLOT_LEN]> =
                ring::offload_fragments(tag_out, seq_out, &dg, Direction::Tx)
                    .expect("answer fits the ring's bound")
                    .map(|d| Self::desc(&d))
                    .collect();
            if kind == 2 {
                if these.len() >= 2 && self.rng.gen_bool(0.5) {
                    let k = self.rng.gen_range(0..these.len() - 1);
                    these.swap(k, k + 1);
                } else {
                    let k = self.rng.gen_range(0..these.len());
                    these.remove(k);
                }
            }
            match kind {
                0 => {
                    self.off_gen.answers += 1;
                    if plen > bound {
                        self.off_gen.above_bound += 1;
                    } else if plen > mtu {
                        self.off_gen.multi_packet += 1;
                    }
                }
                1 => self.off_gen.stale += 1,
                2 => self.off_gen.broken += 1,
                _ => self.off_gen.bad_head += 1,
            }
            if kind != 1 {
                self.off_done.push((tag, seq));
            }
            frags.extend(these);
        }
        while !frags.is_empty() {
            let put = self.tx_publish(frags.clone());
            frags.drain(..put);
            self.poll();
        }
    }
}

/// A case of about `requests` client packets from `seed` with the model's
/// offload pass-through on (issue #16; the RTL built with OFFLOAD_TAGS =
/// 64): the random trace of [`generate`], `OFFLOAD_CALL`s of every payload
/// length up to the MTU between its requests, and the generator as the
/// slow path's offload host: it reads the `OFFLOAD_REQ` fragments from the
/// RX ring (each checked byte for byte in the RTL's ring, [`Event::Expect`]),
/// and answers the calls through the TX ring (`Gen::offload_answers`);
/// now and then it stops reading (calls then find no room: `BUSY`).
pub fn generate_offload(seed: u64, requests: usize) -> Case {
    let mut g = new_gen(seed);
    g.model.forward_offloads_to_slow_path();
    let initial = g.model.dram().clone();
    g.boot();
    g.slow_path_batch(true);
    g.two_page_sizes();
    let mtu = g.lay().mtu;
    let mut reading = true;
    while g.packets < requests {
        g.request();
        if g.rng.gen_bool(0.08) {
            let len = match g.rng.gen_range(0..4) {
                0 => g.rng.gen_range(0..=64),
                1 => mtu - g.rng.gen_range(0..3),
                _ => g.rng.gen_range(0..=mtu),
            };
            let _ = g.offload_call(len);
        }
        if g.rng.gen_bool(0.01) {
            reading = !reading;
        }
        if reading && g.rng.gen_bool(0.15) {
            g.consume_rx();
        }
        if g.rng.gen_bool(0.05) {
            g.offload_answers();
        }
        if reading && g.rng.gen_bool(0.02) {
            g.slow_path_batch(false);
        }
        if g.rng.gen_bool(0.0005) {
            g.boot();
        }
    }
    g.into_case(seed, initial, None)
}

/// A cost case of the offload pass-through: `calls` `OFFLOAD_CALL`s of
/// `req_bytes` payload bytes, each read by the slow path at once and
/// answered `OK` with `answer_bytes` payload bytes (the TX ring polled
/// whenever it is full, and after the last fragment). Also returns the
/// events that measure it: `(event, "call")` for each call's packet and
/// `(event, "answer")` for each poll of its answer.
pub fn generate_offload_cost(
    seed: u64,
    req_bytes: usize,
    answer_bytes: usize,
    calls: usize,
) -> (Case, Vec<(usize, &'static str)>) {
    let mut g = new_gen(seed);
    g.model.forward_offloads_to_slow_path();
    let initial = g.model.dram().clone();
    g.boot();
    g.slow_path_batch(true);
    g.two_page_sizes();
    let mut roles = Vec::new();
    let mut done = 0;
    while done < calls {
        let idx = g.offload_call(req_bytes);
        // The slow path reads every fragment the call pushed.
        for _ in 0..4 {
            g.consume_rx();
        }
        let Some((tag, seq)) = g.off_calls.pop() else {
            continue; // not forwarded (no session yet, BUSY): not measured
        };
        roles.push((idx, "call"));
        let mut dg = ring::OffloadReplyHead { status: Status::Ok }
            .to_bytes()
            .to_vec();
        dg.extend((0..answer_bytes).map(|_| g.rng.gen::<u8>()));
        let mut frags: Vec<[u8; ring::SLOT_LEN]> =
            ring::offload_fragments(tag, seq, &dg, Direction::Tx)
                .expect("answer fits the ring's bound")
                .map(|d| Gen::desc(&d))
                .collect();
        while !frags.is_empty() {
            let put = g.tx_publish(frags.clone());
            frags.drain(..put);
            roles.push((g.events.len(), "answer"));
            g.poll();
        }
        done += 1;
    }
    (g.into_case(seed, initial, None), roles)
}

/// A throughput case: `count` single-beat reads (1..=8 bytes within one
/// 64-byte line) of pages already in the TLB, to be sent back to back after
/// a setup (mapped pages, one warm-up read per page).
pub fn generate_stream(seed: u64, count: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.boot();
    let tlb = g.lay().tlb_entries as u64;
    let mut slots = Vec::new();
    for i in 0..(tlb / 2).max(1) {
        if let Some(d) = g.allocate(1, 0x1_0000 + i, SMALL_SHIFT, true) {
            slots.push(Gen::desc(&d));
        }
    }
    g.tx_publish(slots);
    g.poll();
    // Read-only pages still allow reads; every page is readable.
    let pages = g.pages.clone();
    let read = |g: &mut Gen, p: &Page, line: u64, off: u64, len: u32| {
        let va = Gen::va_of(p) + line * 64 + off;
        let h = g.header(Opcode::Read, p.pid, va, len);
        let pkt = Gen::emit(&h, &[]);
        g.send(pkt, false);
    };
    for p in &pages {
        read(&mut g, p, 0, 0, 8);
    }
    let stream_from = g.events.len();
    for _ in 0..count {
        let p = pages[g.rng.gen_range(0..pages.len())];
        let len = g.rng.gen_range(1..=8u32);
        let off = g.rng.gen_range(0..=64 - u64::from(len));
        let line = g.rng.gen_range(0..64);
        read(&mut g, &p, line, off, len);
    }
    g.into_case(seed, initial, Some(stream_from))
}

/// A fairness case: PID 1 (session 1) asks for a bound-sized READ every
/// `gap` cycles (about what one takes to answer, so its answers fill the
/// output) while PID 2 (session 2) sends an 8-byte READ (a
/// [`PathClass::Probe`]) at a random point after every `every` of them;
/// `count` READs in all. Halfway the slow path removes one of PID 1's pages
/// (READ streams of it end `UNMAPPED`). Replayed with and without READ
/// streams, the probes' latency shows what one client's long answers cost
/// another.
pub fn generate_fairness(seed: u64, count: usize, every: usize, gap: u32) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.boot();
    let mut slots = Vec::new();
    for pid in [1u32, 2] {
        for i in 0..2u64 {
            if let Some(d) = g.allocate_with(pid, 0x1_0000 + i, SMALL_SHIFT, true, perms::RW) {
                slots.push(Gen::desc(&d));
            }
        }
    }
    g.tx_publish(slots);
    g.poll();
    let bound = g.lay().max_resp;
    let pages = g.pages.clone();
    // Warm the TLB: one read per page.
    for p in &pages {
        let h = g.header(Opcode::Read, p.pid, Gen::va_of(p), 8);
        g.send(Gen::emit(&h, &[]), false);
    }
    let streamer: Vec<Page> = pages.iter().filter(|p| p.pid == 1).copied().collect();
    let prober: Vec<Page> = pages.iter().filter(|p| p.pid == 2).copied().collect();
    let mut left = 0;
    for i in 0..count {
        if i == count / 2 {
            let p = streamer[0];
            g.pages.retain(|q| q.pid != p.pid || q.vpn != p.vpn);
            let rm = Gen::desc(&Descriptor::PteRemove {
                bucket: p.bucket,
                slot: p.slot,
                pid: p.pid,
                vpn: p.vpn,
            });
            g.tx_publish(vec![rm]);
            g.poll();
        }
        if i % (every + 1) == every {
            let before = g.rng.gen_range(0..=gap);
            g.events.push(Event::Gap(before));
            let p = prober[g.rng.gen_range(0..prober.len())];
            let va = Gen::va_of(&p) + g.rng.gen_range(0..64u64) * 64;
            let h = g.header(Opcode::Read, 2, va, 8);
            let idx = g.events.len();
            g.send(Gen::emit(&h, &[]), false);
            g.paths.push((idx, PathClass::Probe));
            left = gap - before;
        } else {
            if i > 0 {
                g.events.push(Event::Gap(left));
            }
            let p = streamer[g.rng.gen_range(0..streamer.len())];
            let off =
                u64::from(bound) * g.rng.gen_range(0..(1u64 << SMALL_SHIFT) / u64::from(bound));
            let h = g.header(Opcode::Read, 1, Gen::va_of(&p) + off, bound);
            g.send(Gen::emit(&h, &[]), false);
            left = gap;
        }
    }
    g.into_case(seed, initial, None)
}

/// A hit-lane flood case: PID 1 (session 1) asks for `streams` bound-sized
/// READs, then PID 2 (session 2) sends `count` 8-byte READs of TLB-hit
/// lines (hit-lane reads, [`PathClass::Probe`]) back to back, with no gap.
/// Replayed with READ streams on, the RTL must pump PID 1's streams while
/// the flood lasts (a pump waits for an empty lane, which a flood at one
/// request per cycle never leaves; the lane pauses after a bounded number
/// of its grants), so the model's replay sees pumps between the probes.
pub fn generate_flood(seed: u64, count: usize, streams: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.boot();
    let mut slots = Vec::new();
    for pid in [1u32, 2] {
        if let Some(d) = g.allocate_with(pid, 0x1_0000, SMALL_SHIFT, true, perms::RW) {
            slots.push(Gen::desc(&d));
        }
    }
    g.tx_publish(slots);
    g.poll();
    let bound = g.lay().max_resp;
    let pages = g.pages.clone();
    for p in &pages {
        let h = g.header(Opcode::Read, p.pid, Gen::va_of(p), 8);
        g.send(Gen::emit(&h, &[]), false);
    }
    let streamer = *pages.iter().find(|p| p.pid == 1).expect("PID 1's page");
    let prober = *pages.iter().find(|p| p.pid == 2).expect("PID 2's page");
    for i in 0..streams as u64 {
        let slots = (1u64 << SMALL_SHIFT) / u64::from(bound);
        let h = g.header(
            Opcode::Read,
            1,
            Gen::va_of(&streamer) + u64::from(bound) * (i % slots),
            bound,
        );
        g.send(Gen::emit(&h, &[]), false);
    }
    for _ in 0..count {
        let va = Gen::va_of(&prober) + g.rng.gen_range(0..64u64) * 64;
        let h = g.header(Opcode::Read, 2, va, 8);
        let idx = g.events.len();
        g.send(Gen::emit(&h, &[]), false);
        g.paths.push((idx, PathClass::Probe));
    }
    g.into_case(seed, initial, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flood_case_opens_streams_then_floods_without_gaps() {
        let c = generate_flood(3, 50, 4);
        assert!(!c.events.iter().any(|e| matches!(e, Event::Gap(_))));
        let probes = c
            .paths
            .iter()
            .filter(|(_, k)| *k == PathClass::Probe)
            .count();
        assert_eq!(probes, 50);
        assert_eq!(c.events, generate_flood(3, 50, 4).events);
    }

    #[test]
    fn deterministic_and_varied() {
        let a = generate(5, 400);
        let b = generate(5, 400);
        assert_eq!(a.events, b.events, "same seed, same trace");
        assert_eq!(a.outputs, b.outputs);
        assert_ne!(
            generate(6, 400).events,
            a.events,
            "another seed, another trace"
        );
        assert!(a.packets >= 400);
        assert!(a.events.iter().any(|e| matches!(e, Event::Poll)));
        assert!(a.events.iter().any(|e| matches!(e, Event::Mem(..))));
        // The trace reaches the interesting answers, not only OK.
        let statuses: std::collections::BTreeSet<u8> =
            a.outputs.iter().map(|(_, o)| o[3]).collect();
        for s in [
            Status::Ok,
            Status::Unmapped,
            Status::Malformed,
            Status::Corrupt,
        ] {
            assert!(statuses.contains(&s.raw()), "no response with status {s:?}");
        }
        assert!(
            a.outputs.iter().any(|(_, o)| o[2] & flags::DUPLICATE != 0),
            "no replayed response"
        );
        assert_ne!(a.initial, a.last, "the trace changes memory");
    }

    #[test]
    fn offload_case_covers_every_answer() {
        let c = generate_offload(4, 6000);
        let (l, o) = (c.offload, c.offload_gen);
        // Calls forwarded and refused for want of RX room; answers of one
        // and several packets and above the bound; stale, broken and bad
        // answers dropped; every fragment the slow path read checked.
        assert!(l.forwarded > 100 && l.busy > 20, "{l:?}");
        assert!(l.answered > 80 && l.dropped > 20, "{l:?}");
        assert!(o.multi_packet > 20 && o.above_bound > 5, "{o:?}");
        assert!(o.stale > 3 && o.broken > 3 && o.bad_head > 3, "{o:?}");
        let expects = c
            .events
            .iter()
            .filter(|e| matches!(e, Event::Expect(..)))
            .count() as u64;
        assert_eq!(expects, o.slots_read);
        // The answers the model sent for calls: OFFLOAD_CALL responses.
        let answers = c
            .outputs
            .iter()
            .filter(|(_, p)| p[1] == Opcode::OffloadCall.raw() | RESPONSE_BIT)
            .count() as u64;
        assert!(answers >= l.answered + l.busy, "{answers} {l:?}");
        assert_eq!(generate(4, 2000).offload, OffloadLinkStats::default());
    }

    #[test]
    fn gate_case_covers_every_verdict() {
        let c = generate_gates(9, 8000);
        let g = c.gate;
        // Sets (some rejected past the table), refusals of both kinds,
        // tracked changes, reports pushed and read, reports refused for
        // want of RX room; and the trace without gates is unchanged.
        assert!(g.sets > 200, "{g:?}");
        assert!(g.busy > 50 && g.moved > 50 && g.tracked > 50, "{g:?}");
        assert!(g.reports > 30, "{g:?}");
        assert!(c.gate_reports_read > 20, "{}", c.gate_reports_read);
        assert!(c.gate_rx_full > 0, "no report found the RX ring full");
        assert!(c.stats.tx_rejected > 0);
        let moved = c
            .outputs
            .iter()
            .filter(|(_, o)| o[3] == Status::Moved.raw())
            .count() as u64;
        assert_eq!(moved, g.moved);
        assert!(
            !generate(9, 2000)
                .events
                .iter()
                .any(|e| matches!(e, Event::Expect(..))),
            "the plain trace has no gate"
        );
    }

    #[test]
    fn sessions_acks_quotas_and_spoofs_are_covered() {
        let c = generate(4, 6000);
        let statuses: std::collections::BTreeSet<u8> =
            c.outputs.iter().map(|(_, o)| o[3]).collect();
        // Stale keys, sessions and epochs; a full buffer or a session's
        // quota; the lock quota; unknown opcodes.
        for s in [
            Status::BadSession,
            Status::Restarted,
            Status::Busy,
            Status::OverQuota,
            Status::Unsupported,
            Status::TooLarge,
        ] {
            assert!(statuses.contains(&s.raw()), "no response with status {s:?}");
        }
        assert!(
            c.outputs.iter().any(|(_, o)| o[2] & flags::DUPLICATE != 0),
            "no replayed response"
        );
        assert!(c.stats.dedup_busy > 0 && c.stats.dedup_acked > 0);
        // Reads either side of the response bound: served in full, refused.
        for class in [PathClass::Bound, PathClass::TooLarge] {
            assert!(
                c.paths.iter().any(|(_, p)| *p == class),
                "no {class:?} read"
            );
        }
        assert!(c.stats.too_large > 0);
        assert!(c.stats.sessions_opened > 6 && c.stats.sessions_closed > 0);
    }

    #[test]
    fn slow_path_and_extend_path_traffic() {
        let c = generate(1, 3000);
        let polls: std::collections::BTreeSet<usize> = c
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::Poll))
            .map(|(i, _)| i)
            .collect();
        let at_poll = |op: Opcode| {
            c.outputs
                .iter()
                .filter(|(i, o)| polls.contains(i) && o[1] == op.raw() | RESPONSE_BIT)
                .map(|(_, o)| o.clone())
                .collect::<Vec<_>>()
        };
        // Replies answer forwarded requests at a poll, some placed elsewhere (MOVED).
        let allocs = at_poll(Opcode::Alloc);
        assert!(allocs.iter().any(|o| o[3] == Status::Ok.raw()));
        assert!(allocs.iter().any(|o| o[2] & flags::MOVED != 0));
        assert!(allocs.iter().any(|o| o[3] != Status::Ok.raw()));
        assert!(!at_poll(Opcode::Free).is_empty());
        // Sessions opened and closed through the rings, answered at a poll.
        assert!(at_poll(Opcode::OpenSession)
            .iter()
            .any(|o| o[3] == Status::Ok.raw() && o.len() == HEADER_LEN + 32));
        assert!(at_poll(Opcode::CloseSession)
            .iter()
            .any(|o| o[3] == Status::Ok.raw()));
        // Fences that waited are answered at the poll of the completing reply.
        assert!(!at_poll(Opcode::Fence).is_empty());
        assert!(
            c.stats.forwarded > 20 && c.stats.pending_retargets > 0,
            "{:?}",
            (c.stats.forwarded, c.stats.pending_retargets)
        );
        // REPLYs with stale tags or wrong PIDs are rejected.
        assert!(c.stats.tx_rejected > 0);
        // Chases: found with a value, not found, failing mid-walk, malformed.
        let chases: Vec<&Vec<u8>> = c
            .outputs
            .iter()
            .filter(|(_, o)| o[1] == Opcode::PointerChase.raw() | RESPONSE_BIT)
            .map(|(_, o)| o)
            .collect();
        let ok: Vec<&Vec<u8>> = chases
            .iter()
            .filter(|o| o[3] == Status::Ok.raw() && o.len() >= HEADER_LEN + 16)
            .copied()
            .collect();
        assert!(ok
            .iter()
            .any(|o| o[HEADER_LEN + 15] == 1 && o.len() > HEADER_LEN + 16));
        assert!(ok.iter().any(|o| o[HEADER_LEN + 15] == 0));
        assert!(chases.iter().any(|o| o[3] == Status::Unmapped.raw()));
        assert!(chases.iter().any(|o| o[3] == Status::Malformed.raw()));
    }

    #[test]
    fn stream_case_is_all_single_beat_hits() {
        let c = generate_stream(9, 200);
        let from = c.stream_from.expect("a stream section");
        let stream = &c.events[from..];
        assert_eq!(stream.len(), 200);
        for e in stream {
            let Event::Packet(p) = e else {
                panic!("only packets in the stream")
            };
            assert!(p.len() <= 64 && p[1] == Opcode::Read.raw());
        }
        // One OK response per read, each a single beat.
        let answers: Vec<_> = c.outputs.iter().filter(|(i, _)| *i >= from).collect();
        assert_eq!(answers.len(), 200);
        assert!(answers
            .iter()
            .all(|(_, o)| o[3] == Status::Ok.raw() && o.len() <= 64));
    }

    #[test]
    fn fairness_case_paces_a_streamer_and_probes_between() {
        let c = generate_fairness(5, 100, 4, 300);
        let probes = c
            .paths
            .iter()
            .filter(|(_, p)| *p == PathClass::Probe)
            .count();
        let bound = c
            .paths
            .iter()
            .filter(|(_, p)| *p == PathClass::Bound)
            .count();
        assert_eq!(probes, 20);
        // Reads of the page removed halfway answer UNMAPPED, the others in full.
        assert!(
            bound > 40 && bound < 80,
            "{bound} bound-sized reads answered"
        );
        assert!(c
            .events
            .iter()
            .any(|e| matches!(e, Event::Gap(g) if *g > 0)));
        assert_eq!(c.events, generate_fairness(5, 100, 4, 300).events);
    }
}
