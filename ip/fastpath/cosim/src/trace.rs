//! Seeded trace generation: client packets, slow-path ring traffic, and the
//! reference model's answers to them.
//!
//! The generator plays every party around the fast path: clients (reads,
//! writes of every size, atomics, retries, duplicates, malformed, corrupt
//! and truncated packets, wrong PIDs, unmapped and read-only pages) and the
//! slow path (PTE inserts and removals, TLB shootdowns, free-PA refills,
//! corrupt descriptors, consuming or not consuming the RX ring). Every event
//! is applied to the model as it is generated, so the expected responses and
//! memory follow from the model alone.

use clio_fastpath::{ClientId, FastPath, Trace};
use clio_wire::clio::{flags, HEADER_LEN, RESPONSE_BIT};
use clio_wire::payload::{perms, AtomicArgs, OffloadReq};
use clio_wire::pte::{bucket_index, Pte, PTE_LEN};
use clio_wire::ring::{self, header_field, Descriptor};
use clio_wire::{Header, Opcode, Status};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::board::{self, LARGE_POOL, LARGE_SHIFT, SMALL_POOL, SMALL_SHIFT};

/// One stimulus event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A packet arrives from the network.
    Packet(Vec<u8>),
    /// The fast path drains the TX ring once.
    Poll,
    /// The ARM writes bytes into board memory at a physical address.
    Mem(u64, Vec<u8>),
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
}

const TX_HEAD: usize = header_field::HEAD;

impl Gen {
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

    /// Publish TX descriptors as the ARM does (slot, then head and doorbell).
    fn tx_publish(&mut self, slots: Vec<[u8; ring::SLOT_LEN]>) {
        let lay = self.lay();
        let base = lay.dram_base + lay.tx_ring.start as u64;
        let count = (lay.tx_ring.len() - ring::HEADER_LEN) / ring::SLOT_LEN;
        for s in slots {
            let head = self.u32_at(base + TX_HEAD as u64);
            let tail = self.u32_at(base + header_field::TAIL as u64);
            if head.wrapping_sub(tail) as usize >= count {
                break;
            }
            let at = base + ring::slot_offset(head, count as u32) as u64;
            self.mem_write(at, s.to_vec());
            let bell = self.u32_at(base + header_field::DOORBELL as u64);
            let mut hb = head.wrapping_add(1).to_le_bytes().to_vec();
            hb.extend_from_slice(&bell.wrapping_add(1).to_le_bytes());
            self.mem_write(base + TX_HEAD as u64, hb);
        }
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

    fn consume_rx(&mut self) {
        let lay = self.lay();
        let base = lay.dram_base + lay.rx_ring.start as u64;
        let head = self.u32_at(base + header_field::HEAD as u64);
        let tail = self.u32_at(base + header_field::TAIL as u64);
        if head != tail {
            let upto = if self.rng.gen_bool(0.5) {
                head
            } else {
                tail.wrapping_add(head.wrapping_sub(tail).div_ceil(2))
            };
            self.mem_write(
                base + header_field::TAIL as u64,
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
        let perms = if self.rng.gen_bool(0.15) {
            perms::READ
        } else {
            perms::RW
        };
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
    fn slow_path_batch(&mut self, initial: bool) {
        let mut slots = Vec::new();
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
                    s[ring::slot_field::D + 1] = 7;
                    let crc = clio_wire::crc32c(&s[..ring::slot_field::CRC]);
                    s[ring::slot_field::CRC..].copy_from_slice(&crc.to_le_bytes());
                }
                _ => {
                    s = Self::desc(&Descriptor::Reply {
                        tag: 3,
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
        self.tx_publish(slots);
        if self.rng.gen_bool(0.7) {
            self.consume_rx();
        }
        self.poll();
    }

    fn send(&mut self, pkt: Vec<u8>, path_probe: bool) {
        let idx = self.events.len();
        let mut outs = Vec::new();
        let trace: Trace = self
            .model
            .receive(ClientId(0), &pkt, &mut |_, b: &[u8]| outs.push(b.to_vec()));
        if path_probe && trace.pages == 1 && trace.status == Some(Status::Ok) {
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
    }

    fn header(&mut self, opcode: Opcode, pid: u32, va: u64, total_len: u32) -> Header {
        self.next_req = self.next_req.wrapping_add(1).max(1);
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
        }
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

    fn request(&mut self) {
        let mtu = self.lay().mtu;
        let (pid, va) = self.target();
        let roll = self.rng.gen_range(0..100);
        let mut probe = false;
        let (mut h, payload) = match roll {
            0..=29 => {
                let len = match self.rng.gen_range(0..4) {
                    0 => 8,
                    1 => self.rng.gen_range(0..64),
                    2 => self.rng.gen_range(0..2 * mtu as u32),
                    _ => self.rng.gen_range(0..5000),
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
                    h.retry_of = h.req_id;
                    self.next_req = self.next_req.wrapping_add(1).max(1);
                    h.req_id = self.next_req;
                }
                (h, s.payload)
            }
            85..=86 => (self.header(Opcode::Info, pid, 0, 0), Vec::new()),
            87..=88 => (self.header(Opcode::Fence, pid, 0, 0), Vec::new()),
            89 => {
                let mut p = vec![0u8; OffloadReq::LEN];
                let _ = OffloadReq { offload: 7 }.emit(&mut p);
                (self.header(Opcode::OffloadCall, pid, va, 0), p)
            }
            _ => (self.header(Opcode::Read, pid, va, 8), Vec::new()),
        };
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
        let refill = |p: &mut Vec<u8>| {
            let n = HEADER_LEN + u16::from_be_bytes([p[32], p[33]]) as usize;
            let n = n.min(p.len());
            p[36..40].fill(0);
            let crc = clio_wire::crc32c(&p[..n]);
            p[36..40].copy_from_slice(&crc.to_be_bytes());
        };
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
                    0 => pkt[0] = 2,
                    1 => pkt[1] = 0x33,
                    2 => pkt[2] = flags::MOVED,
                    3 => pkt[3] = 1,
                    4 => pkt[35] = 1,
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
    }
}

/// Generate a case of about `requests` client packets from `seed`.
pub fn generate(seed: u64, requests: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.slow_path_batch(true);
    while g.packets < requests {
        g.request();
        if g.rng.gen_bool(0.04) {
            g.slow_path_batch(false);
        }
    }
    let last = g.model.dram().clone();
    Case {
        seed,
        events: g.events,
        outputs: g.outputs,
        paths: g.paths,
        initial,
        last,
        packets: g.packets,
        stream_from: None,
    }
}

/// A throughput case: `count` single-beat reads (1..=24 bytes within one
/// 64-byte line) of pages already in the TLB, to be sent back to back after
/// a setup (mapped pages, one warm-up read per page).
pub fn generate_stream(seed: u64, count: usize) -> Case {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
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
        let len = g.rng.gen_range(1..=24u32);
        let off = g.rng.gen_range(0..=64 - u64::from(len));
        let line = g.rng.gen_range(0..64);
        read(&mut g, &p, line, off, len);
    }
    let last = g.model.dram().clone();
    Case {
        seed,
        events: g.events,
        outputs: g.outputs,
        paths: g.paths,
        initial,
        last,
        packets: g.packets,
        stream_from: Some(stream_from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
