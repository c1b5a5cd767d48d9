//! Back-to-back streams of one request class: the fast path's per-class
//! throughput table (`clio-cosim class`, `tb/cosim/classes.sh`). Each case
//! sets up pages and one session with the board's full quotas, then offers
//! `count` requests of the class back to back (`Case::stream_from`); every
//! request acknowledges all earlier ones, so dedup records never pile up.
//! The RTL's cycles come from the harness; the model's projected cycles
//! (its per-request pipeline cost) from [`ClassCase::model_cycles`].

use super::*;

/// A request class offered back to back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// 8-byte read within one beat of a page in the TLB (the hit lane).
    Read8,
    /// 64-byte read of a page in the TLB.
    Read64,
    /// 64-byte write of a page in the TLB.
    Write64,
    /// 1 KiB read of a page in the TLB.
    Read1k,
    /// 1 KiB write of a page in the TLB (MTU-sized packets).
    Write1k,
    /// 4 KiB read (a whole small page) in the TLB, in requests of at most
    /// the board's response bound (2 KiB on the co-simulation board).
    Read4k,
    /// 4 KiB write (a whole small page) in the TLB.
    Write4k,
    /// Fetch-and-add of a word in a page in the TLB.
    Faa,
    /// Compare-and-swap of a word in a page in the TLB.
    Cas,
    /// 8-byte read of a mapped page not in the TLB (four times more pages
    /// than TLB entries, visited in turn).
    Miss,
    /// 8-byte read of a page never touched (a first-touch fault); the
    /// slow path refills the free-page FIFO every `fifo_depth` requests.
    Fault,
    /// 8-byte reads of pages in the TLB (hit-lane reads), every
    /// [`MIXED_EVERY`]-th one of a mapped page not in the TLB instead (a
    /// miss, pages visited in turn): what the hits behind a miss pay.
    HitMiss,
    /// 8-byte reads of pages in the TLB, every [`MIXED_EVERY`]-th one of a
    /// page never touched instead (a first-touch fault; the slow path
    /// refills the free-page FIFO every `fifo_depth` faults).
    HitFault,
    /// As `hitfault`, with 8-byte writes (hit-lane writes) for the reads:
    /// lane writes and their dedup records while a fault's effects drain.
    HitWFault,
    /// As `hitmiss` with one miss in [`MIXED_EVERY_LONG`] requests: more
    /// hits arrive during a walk than a walk lasts cycles, so the hit lane
    /// still holds hits when the walked page is inserted.
    HitMiss16,
    /// As `hitmiss`, one request in `MIXED_EVERY_SPARSE` a miss: misses
    /// arriving slower than one walk each, so the hits behind a miss need
    /// not wait for it at all.
    HitMiss64,
    /// As `faa`, each fetch-and-add followed back to back by its retry (a
    /// new id, `retry_of` the first, acknowledging only the requests before
    /// the first): the retry is answered from the first one's dedup record,
    /// never executed again, however soon it follows.
    FaaRetry,
}

/// In the `hitmiss` and `hitfault` classes, one request in this many misses
/// the TLB (or faults); the others hit.
pub const MIXED_EVERY: usize = 4;

/// In the `hitmiss16` class, one request in this many misses the TLB.
pub const MIXED_EVERY_LONG: usize = 16;

/// In the `hitmiss64` class, one request in this many misses the TLB (a
/// walk's 28 cycles fit between two misses).
pub const MIXED_EVERY_SPARSE: usize = 64;

impl Class {
    /// Every class, in table order.
    pub const ALL: [Class; 17] = [
        Class::Read8,
        Class::Read64,
        Class::Write64,
        Class::Read1k,
        Class::Write1k,
        Class::Read4k,
        Class::Write4k,
        Class::Faa,
        Class::Cas,
        Class::Miss,
        Class::Fault,
        Class::HitMiss,
        Class::HitFault,
        Class::HitWFault,
        Class::HitMiss16,
        Class::HitMiss64,
        Class::FaaRetry,
    ];

    /// Name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Class::Read8 => "read8",
            Class::Read64 => "read64",
            Class::Write64 => "write64",
            Class::Read1k => "read1k",
            Class::Write1k => "write1k",
            Class::Read4k => "read4k",
            Class::Write4k => "write4k",
            Class::Faa => "faa",
            Class::Cas => "cas",
            Class::Miss => "miss",
            Class::Fault => "fault",
            Class::HitMiss => "hitmiss",
            Class::HitFault => "hitfault",
            Class::HitWFault => "hitwfault",
            Class::HitMiss16 => "hitmiss16",
            Class::HitMiss64 => "hitmiss64",
            Class::FaaRetry => "faaretry",
        }
    }

    /// The class named `s`.
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }

    /// Data bytes per request.
    pub fn bytes(self) -> u32 {
        match self {
            Class::Read64 | Class::Write64 => 64,
            Class::Read1k | Class::Write1k => 1024,
            Class::Read4k | Class::Write4k => 4096,
            _ => 8,
        }
    }

    /// A mixed class: hit-lane reads with one cold request (a miss or a
    /// first touch) in every `mixed_every`.
    pub fn is_mixed(self) -> bool {
        matches!(
            self,
            Class::HitMiss
                | Class::HitFault
                | Class::HitWFault
                | Class::HitMiss16
                | Class::HitMiss64
        )
    }

    /// One request in this many is the cold one (mixed classes).
    pub fn mixed_every(self) -> usize {
        match self {
            Class::HitMiss16 => MIXED_EVERY_LONG,
            Class::HitMiss64 => MIXED_EVERY_SPARSE,
            _ => MIXED_EVERY,
        }
    }

    fn is_write(self) -> bool {
        matches!(self, Class::Write64 | Class::Write1k | Class::Write4k)
    }
}

/// A class stream and what the model projects for it.
#[derive(Debug, Clone)]
pub struct ClassCase {
    /// The case (setup, then the stream).
    pub case: Case,
    /// Requests in the stream.
    pub requests: usize,
    /// Request packets in the stream (writes above the MTU take several,
    /// reads above the response bound several requests).
    pub packets: usize,
    /// Sum of the model's per-packet pipeline cycles over the stream.
    pub model_cycles: u64,
    /// Stream packets the model answered OK.
    pub ok: usize,
}

/// A session with the board's full quotas for `pid`, under a session id
/// the boot did not use.
fn full_session(g: &mut Gen, pid: u32) -> Cred {
    let cfg = board::board();
    let session = (g.lay().max_pid + 1) as u16;
    let key = g.rng.gen::<u64>() | 1;
    let d = Descriptor::SessionReply {
        tag: 0,
        pid,
        req_id: 0,
        status: 0,
        session,
        key,
        dedup_quota: cfg.dedup_quota(),
        lock_quota: cfg.lock_quota(),
        mem_quota_pages: cfg.mem_quota_pages(),
        close: false,
    };
    assert_eq!(
        g.tx_publish(vec![Gen::desc(&d)]),
        1,
        "the session fits the TX ring"
    );
    g.poll();
    Cred {
        session,
        pid,
        key,
        epoch: g.epoch,
    }
}

/// A request header of `c` that acknowledges every earlier request.
fn header(g: &mut Gen, c: &Cred, opcode: Opcode, va: u64, total_len: u32) -> Header {
    g.next_req = g.next_req.wrapping_add(1).max(1);
    Header {
        opcode,
        flags: 0,
        status: Status::Ok,
        pid: c.pid,
        req_id: g.next_req,
        retry_of: 0,
        va,
        total_len,
        offset: 0,
        payload_len: 0,
        session: c.session,
        epoch: c.epoch,
        key: c.key,
        ack: g.next_req,
    }
}

/// Map `n` small pages of `pid` from `vpn0` on (`valid`: backed now, else
/// first touch faults); the pages actually placed (a full bucket skips one).
fn map_pages(g: &mut Gen, pid: u32, vpn0: u64, n: usize, valid: bool) -> Vec<Page> {
    let mut placed = Vec::new();
    let mut vpn = vpn0;
    while placed.len() < n && vpn < vpn0 + 8 * n as u64 {
        if let Some(d) = g.allocate_with(pid, vpn, SMALL_SHIFT, valid, perms::RW) {
            // The TX ring holds a few descriptors at a time: publish each.
            assert_eq!(g.tx_publish(vec![Gen::desc(&d)]), 1, "PTE write published");
            g.poll();
            placed.extend(g.pages.last().copied());
        }
        vpn += 1;
    }
    placed
}

/// The slow path's turn: take the fast path's PA_CONSUMED notices off the
/// RX ring, and push `n` free small pages to its FIFO.
fn refill(g: &mut Gen, n: usize) {
    // Each call takes at least half of what waits: a few calls empty it.
    for _ in 0..6 {
        g.consume_rx();
    }
    let slots: Vec<_> = (0..n)
        .map(|_| {
            let ppn = g.next_ppn(SMALL_SHIFT);
            Gen::desc(&Descriptor::FreePaPush {
                page_shift: SMALL_SHIFT,
                ppn,
            })
        })
        .collect();
    assert_eq!(g.tx_publish(slots), n, "refill published");
    g.poll();
}

/// The request packets of stream request `i` of `class` at `va`.
fn packets(g: &mut Gen, c: &Cred, class: Class, i: usize, va: u64) -> Vec<(Header, Vec<u8>)> {
    let len = class.bytes();
    let mtu = g.lay().mtu as u32;
    if class.is_write() {
        let h = header(g, c, Opcode::Write, va, len);
        return (0..len)
            .step_by(mtu as usize)
            .map(|off| {
                let n = (len - off).min(mtu);
                let data: Vec<u8> = (0..n).map(|_| g.rng.gen()).collect();
                (Header { offset: off, ..h }, data)
            })
            .collect();
    }
    let (op, args) = match class {
        Class::Faa | Class::FaaRetry => (
            Opcode::FetchAndAdd,
            AtomicArgs::FetchAndAdd { addend: i as u64 },
        ),
        Class::Cas => (
            Opcode::CompareAndSwap,
            AtomicArgs::CompareAndSwap {
                expected: 0,
                new: i as u64,
            },
        ),
        _ => {
            // A read above the board's response bound is split into
            // requests of the bound, as the SDK does.
            let bound = g.lay().max_resp.max(1);
            return (0..len)
                .step_by(bound as usize)
                .map(|off| {
                    let n = (len - off).min(bound);
                    (header(g, c, Opcode::Read, va + off as u64, n), Vec::new())
                })
                .collect();
        }
    };
    let mut payload = vec![0u8; 16];
    let n = args.emit(&mut payload).expect("atomic arguments encode");
    payload.truncate(n);
    let first = header(g, c, op, va, 8);
    if class != Class::FaaRetry {
        return vec![(first, payload)];
    }
    let retry = Header {
        retry_of: first.req_id,
        ack: first.req_id,
        ..header(g, c, op, va, 8)
    };
    vec![(first, payload.clone()), (retry, payload)]
}

/// Generate a stream of `count` requests of `class` from `seed` (a fault
/// stream has at most as many requests as pages could be mapped).
pub fn generate_class(seed: u64, count: usize, class: Class) -> ClassCase {
    let mut g = new_gen(seed);
    let initial = g.model.dram().clone();
    g.boot();
    let cred = full_session(&mut g, 1);
    let lay = g.lay();
    let (tlb, depth) = (lay.tlb_entries, lay.fifo_depth.max(1));
    let pages = match class {
        Class::Miss => map_pages(&mut g, cred.pid, 0x1_0000, 4 * tlb, true),
        Class::Fault => map_pages(&mut g, cred.pid, 0x1_0000, count, false),
        // The hot set is a quarter of the TLB: the cold pages' entries are
        // always older (LRU evicts them, never a hot page).
        c if c.is_mixed() => map_pages(&mut g, cred.pid, 0x1_0000, (tlb / 4).max(1), true),
        _ => map_pages(&mut g, cred.pid, 0x1_0000, (tlb / 2).max(1), true),
    };
    assert!(!pages.is_empty(), "no page could be mapped");
    // The cold pages of the mixed classes (misses or first touches).
    let cold = match class {
        Class::HitMiss | Class::HitMiss16 | Class::HitMiss64 => {
            map_pages(&mut g, cred.pid, 0x1_1000, 4 * tlb, true)
        }
        Class::HitFault | Class::HitWFault => {
            map_pages(&mut g, cred.pid, 0x1_1000, count / MIXED_EVERY, false)
        }
        _ => Vec::new(),
    };
    if !matches!(class, Class::Miss | Class::Fault) {
        // Warm the TLB: one read of each page before the stream.
        for p in &pages {
            let h = header(&mut g, &cred, Opcode::Read, Gen::va_of(p), 8);
            g.send(Gen::emit(&h, &[]), false);
        }
    }
    let requests = match class {
        Class::Fault => count.min(pages.len()),
        Class::HitFault | Class::HitWFault => count.min(cold.len() * MIXED_EVERY),
        _ => count,
    };
    let mixed = class.is_mixed();
    let every = class.mixed_every();
    let stream_from = g.events.len();
    let (mut model_cycles, mut ok, mut sent) = (0u64, 0usize, 0usize);
    for i in 0..requests {
        if mixed && i % every == every - 1 {
            // The cold request: a miss or a first touch, its latency and
            // the hits' logged per path (`stream latency` in the harness).
            let n = i / every;
            if matches!(class, Class::HitFault | Class::HitWFault) && n % depth == 0 {
                refill(&mut g, depth);
            }
            let p = cold[n % cold.len()];
            let h = header(
                &mut g,
                &cred,
                Opcode::Read,
                Gen::va_of(&p) + (n as u64 % 64) * 64,
                8,
            );
            let t = g.send(Gen::emit(&h, &[]), true);
            model_cycles += t.cycles;
            ok += usize::from(t.status == Some(Status::Ok));
            sent += 1;
            continue;
        }
        let p = pages[i % pages.len()];
        // Small requests spread over the page's lines; large ones take the
        // page from its start.
        let line = if class.bytes() <= 64 {
            i as u64 % 64
        } else {
            0
        };
        if class == Class::Fault && i % depth == 0 {
            refill(&mut g, depth);
        }
        if class == Class::HitWFault {
            let h = header(&mut g, &cred, Opcode::Write, Gen::va_of(&p) + line * 64, 8);
            let data: Vec<u8> = (0..8).map(|_| g.rng.gen()).collect();
            let t = g.send(Gen::emit(&h, &data), true);
            model_cycles += t.cycles;
            ok += usize::from(t.status == Some(Status::Ok));
            sent += 1;
            continue;
        }
        for (h, payload) in packets(&mut g, &cred, class, i, Gen::va_of(&p) + line * 64) {
            // Path probes: the harness logs each path's stream latency.
            let t = g.send(Gen::emit(&h, &payload), true);
            model_cycles += t.cycles;
            ok += usize::from(t.status == Some(Status::Ok));
            sent += 1;
        }
    }
    ClassCase {
        case: g.into_case(seed, initial, Some(stream_from)),
        requests,
        packets: sent,
        model_cycles,
        ok,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_streams_ok_answers_on_its_path() {
        for class in Class::ALL {
            // At least two cold requests in the mixed classes.
            let c = generate_class(3, 40.max(2 * class.mixed_every()), class);
            assert!(c.requests > 0, "{}: no requests", class.name());
            assert_eq!(
                c.ok,
                c.packets,
                "{}: every stream packet is answered OK",
                class.name()
            );
            let st = c.case.stats;
            match class {
                Class::Miss => assert!(st.tlb_misses >= c.requests as u64, "miss: {st:?}"),
                Class::Fault => assert!(st.faults >= c.requests as u64, "fault: {st:?}"),
                _ if class.is_mixed() => {
                    // Exactly one request in `mixed_every` leaves the TLB
                    // hits (the hot set stays in the TLB).
                    let every = class.mixed_every();
                    let cold = (c.requests / every) as u64;
                    assert!(cold >= 2, "{}: {cold} cold requests", class.name());
                    let (n, what) =
                        if matches!(class, Class::HitMiss | Class::HitMiss16 | Class::HitMiss64) {
                            (st.tlb_misses, "misses")
                        } else {
                            (st.faults, "faults")
                        };
                    assert!(n >= cold, "{}: {n} {what} < {cold}", class.name());
                    let hits = c
                        .case
                        .paths
                        .iter()
                        .filter(|(_, p)| *p == PathClass::Hit)
                        .count();
                    assert_eq!(
                        hits,
                        c.requests - c.requests / every,
                        "{}: hits",
                        class.name()
                    );
                }
                _ => {}
            }
            assert_eq!(Class::parse(class.name()), Some(class));
        }
    }
}
