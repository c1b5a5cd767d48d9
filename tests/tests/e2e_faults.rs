//! A long randomized workload through the emulator's faulty links (loss,
//! reordering, duplication, corruption, delay; both directions), checked
//! against a local model: memory contents equal the model's bytes, and
//! every atomic is applied exactly once.

use std::time::Instant;

use clio::backend::UdpTransport;
use clio::{Allocation, Completion, Session};
use clio_emu::{FaultConfig, ServeOptions};
use clio_tests::{emulator_config, first_difference, seed, Rng, ServedBoard};
use clio_wire::payload::perms;

/// Pages of the data range.
const PAGES: u64 = 3;
/// FAA counters and CAS words (8 bytes each) in the atomics range.
const COUNTERS: usize = 16;
const CAS_WORDS: usize = 16;
/// Writes stay below this many bytes (a few packets): every retry resends
/// a whole request, so long requests under heavy loss need many attempts.
const MAX_WRITE: u64 = 4000;
/// Windows of the data range the workload hits: each page's start, middle
/// and end, so writes and reads cross page boundaries often.
const WINDOW: u64 = 48 << 10;

/// What the workload did, for the final checks and the report.
#[derive(Debug, Default)]
struct Tally {
    writes: u64,
    reads: u64,
    faas: u64,
    cas_hits: u64,
    cas_misses: u64,
    alloc_frees: u64,
    async_ops: u64,
}

struct Workload<'a> {
    s: &'a mut Session<UdpTransport>,
    rng: Rng,
    page: u64,
    data: Allocation,
    atomics: Allocation,
    /// The bytes the data range must hold.
    model: Vec<u8>,
    /// Values of the FAA counters and of the CAS words.
    counters: [u64; COUNTERS],
    cas_words: [u64; CAS_WORDS],
    tally: Tally,
}

impl Workload<'_> {
    /// Windows start at each page's start, middle and end (minus half a
    /// window, so the end window straddles the next page's start).
    fn window_starts(&self) -> Vec<u64> {
        let mut w = Vec::new();
        for p in 0..PAGES {
            w.push(p * self.page);
            w.push(p * self.page + self.page / 2);
            if p + 1 < PAGES {
                w.push((p + 1) * self.page - WINDOW / 2);
            }
        }
        w.push(PAGES * self.page - WINDOW);
        w
    }

    /// A random `(offset, len)` inside a random window.
    fn span(&mut self, max_len: u64) -> (u64, u64) {
        let ws = self.window_starts();
        let base = ws[self.rng.below(ws.len() as u64) as usize];
        let len = if self.rng.percent(20) {
            self.rng.range(1, 16)
        } else {
            self.rng.range(1, max_len)
        };
        (base + self.rng.below(WINDOW - len + 1), len)
    }

    fn write(&mut self) {
        let (off, len) = self.span(MAX_WRITE);
        let mut d = vec![0u8; len as usize];
        self.rng.fill(&mut d);
        self.s
            .rwrite(self.data.va + off, &d)
            .unwrap_or_else(|e| panic!("write {len} B at +{off:#x}: {e}"));
        self.model[off as usize..(off + len) as usize].copy_from_slice(&d);
        self.tally.writes += 1;
    }

    fn read(&mut self) {
        let (off, len) = self.span(6000);
        let mut back = vec![0u8; len as usize];
        self.s
            .rread(self.data.va + off, &mut back)
            .unwrap_or_else(|e| panic!("read {len} B at +{off:#x}: {e}"));
        let want = &self.model[off as usize..(off + len) as usize];
        if let Some(i) = first_difference(&back, want) {
            panic!("read {len} B at +{off:#x}: byte {i} differs from the model");
        }
        self.tally.reads += 1;
    }

    fn faa(&mut self) {
        let i = self.rng.below(COUNTERS as u64) as usize;
        let old = self.s.faa(self.atomics.va + 8 * i as u64, 1).unwrap();
        assert_eq!(old, self.counters[i], "FAA {i}: old value (applied once?)");
        self.counters[i] += 1;
        self.tally.faas += 1;
    }

    fn cas(&mut self) {
        let i = self.rng.below(CAS_WORDS as u64) as usize;
        let va = self.atomics.va + 8 * (COUNTERS + i) as u64;
        let cur = self.cas_words[i];
        let hit = self.rng.percent(75);
        let expected = if hit { cur } else { cur ^ 1 };
        let new = self.rng.next_u64();
        let old = self.s.cas(va, expected, new).unwrap();
        // A CAS executed twice would answer the new value the second time.
        assert_eq!(old, cur, "CAS {i}: old value (applied once?)");
        if hit {
            self.cas_words[i] = new;
            self.tally.cas_hits += 1;
        } else {
            self.tally.cas_misses += 1;
        }
    }

    /// A batch of asynchronous writes and reads, polled together. The SDK
    /// orders conflicting ones by page, so each read must see the model as
    /// of its place in program order.
    fn async_batch(&mut self) {
        let n = self.rng.range(4, 24);
        let mut handles = Vec::new();
        let mut expect: Vec<Option<Vec<u8>>> = Vec::new();
        for _ in 0..n {
            if self.rng.percent(50) {
                let (off, len) = self.span(MAX_WRITE);
                let mut d = vec![0u8; len as usize];
                self.rng.fill(&mut d);
                handles.push(self.s.rwrite_async(self.data.va + off, &d).unwrap());
                self.model[off as usize..(off + len) as usize].copy_from_slice(&d);
                expect.push(None);
            } else {
                let (off, len) = self.span(3000);
                handles.push(self.s.rread_async(self.data.va + off, len).unwrap());
                expect.push(Some(
                    self.model[off as usize..(off + len) as usize].to_vec(),
                ));
            }
        }
        let results = self.s.rpoll(&handles).unwrap();
        for (k, (r, e)) in results.into_iter().zip(expect).enumerate() {
            match (r, e) {
                (Ok(Completion::Written), None) => {}
                (Ok(Completion::Read(got)), Some(want)) => {
                    if let Some(i) = first_difference(&got, &want) {
                        panic!("async read {k} of {n}: byte {i} differs from the model");
                    }
                }
                (r, e) => panic!(
                    "async op {k} of {n}: got {r:?}, wanted {}",
                    if e.is_some() { "data" } else { "a write ack" }
                ),
            }
        }
        self.tally.async_ops += n;
    }

    /// Allocate a page, use it, free it. ALLOC and FREE are not
    /// idempotent: one executed twice leaks a range (found at the end, when
    /// the whole board must be allocatable again) or frees twice (the
    /// retry would answer `Unmapped`).
    fn alloc_free(&mut self) {
        let a = self.s.ralloc(self.page, perms::RW).unwrap();
        assert!(a.size >= self.page, "{a:?}");
        let off = self.rng.below(self.page - 64);
        let mut d = [0u8; 64];
        self.rng.fill(&mut d);
        self.s.rwrite(a.va + off, &d).unwrap();
        let mut back = [0u8; 64];
        self.s.rread(a.va + off, &mut back).unwrap();
        assert_eq!(back, d, "scratch page at {:#x}", a.va);
        self.s.rfree(a.va, a.size).unwrap();
        self.tally.alloc_frees += 1;
    }

    fn step(&mut self) {
        match self.rng.below(100) {
            0..=28 => self.write(),
            29..=53 => self.read(),
            54..=68 => self.faa(),
            69..=83 => self.cas(),
            84..=86 => self.alloc_free(),
            _ => self.async_batch(),
        }
    }

    /// Compare every window with the model and every atomic word with its
    /// expected value (reads in small pieces: each is one request).
    fn verify(&mut self) {
        for w in self.window_starts() {
            for off in (w..w + WINDOW).step_by(4096) {
                let mut back = vec![0u8; 4096];
                self.s.rread(self.data.va + off, &mut back).unwrap();
                let want = &self.model[off as usize..off as usize + 4096];
                if let Some(i) = first_difference(&back, want) {
                    panic!("final check at +{off:#x}: byte {i} differs from the model");
                }
            }
        }
        let mut words = vec![0u8; 8 * (COUNTERS + CAS_WORDS)];
        self.s.rread(self.atomics.va, &mut words).unwrap();
        let got: Vec<u64> = words
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            got[..COUNTERS].iter().sum::<u64>(),
            self.tally.faas,
            "the counters add up to the number of FAAs issued"
        );
        assert_eq!(&got[..COUNTERS], &self.counters[..], "each counter");
        assert_eq!(&got[COUNTERS..], &self.cas_words[..], "CAS words");
    }
}

/// Run `ops` random steps through a board with `faults` on both links
/// (independent decisions per direction); returns the link counters.
fn run(faults: FaultConfig, ops: u64, seed: u64) -> clio_emu::server::ServeStats {
    let opts = ServeOptions {
        inbound: FaultConfig {
            seed: faults.seed,
            ..faults
        },
        outbound: FaultConfig {
            seed: faults.seed ^ 0x0b5e_55ed,
            ..faults
        },
        ..ServeOptions::default()
    };
    // The final leak check allocates the whole data region in one address
    // space: let its quota cover that.
    let mut cfg = emulator_config();
    cfg.sessions.mem_quota_bytes = cfg.regions.data.size;
    let board = ServedBoard::start(cfg, opts);
    let page = board.page();
    let mut s = board.session();
    let data = s.ralloc(PAGES * page, perms::RW).unwrap();
    let atomics = s.ralloc(page, perms::RW).unwrap();
    let t0 = Instant::now();
    let mut w = Workload {
        s: &mut s,
        rng: Rng::new(seed),
        page,
        data,
        atomics,
        model: vec![0u8; (PAGES * page) as usize],
        counters: [0; COUNTERS],
        cas_words: [0; CAS_WORDS],
        tally: Tally::default(),
    };
    for _ in 0..ops {
        w.step();
    }
    w.verify();
    let tally = std::mem::take(&mut w.tally);
    // Nothing leaked: with both ranges freed, the board's whole data region
    // can be allocated again in one range.
    s.rfree(data.va, data.size).unwrap();
    s.rfree(atomics.va, atomics.size).unwrap();
    let pages = board.cfg.regions.data.size / page;
    let all = s
        .ralloc(pages * page, perms::RW)
        .unwrap_or_else(|e| panic!("all {pages} pages after the workload: {e}"));
    s.rfree(all.va, all.size).unwrap();
    let sdk = s.connection().stats();
    let fast = board.stats().fast;
    s.close().unwrap();
    let links = board.stop().expect("the board thread ran to the end");
    println!(
        "{ops} ops in {:.1} s: {tally:?}\nsdk: {sdk:?}\nboard dedup replays: {}, nacks: {}\nlinks: {links:?}",
        t0.elapsed().as_secs_f64(),
        fast.duplicates,
        fast.nacks
    );
    assert!(tally.faas > 0 && tally.cas_hits > 0 && tally.async_ops > 0 && tally.alloc_frees > 0);
    links
}

#[test]
fn loss_reorder_duplication_both_ways() {
    let seed = seed(0x5eed_0001);
    let faults = FaultConfig {
        drop: 0.05,
        duplicate: 0.05,
        reorder: 0.10,
        reorder_window_ns: 300_000,
        seed,
        ..FaultConfig::NONE
    };
    let links = run(faults, 2000, seed);
    // The faults really happened in both directions.
    for l in [links.inbound, links.outbound] {
        assert!(
            l.dropped > 0 && l.duplicated > 0 && l.reordered > 0,
            "{l:?}"
        );
    }
}

#[test]
fn corruption_and_delay_both_ways() {
    let seed = seed(0x5eed_0002);
    let faults = FaultConfig {
        drop: 0.02,
        duplicate: 0.02,
        corrupt: 0.03,
        reorder: 0.05,
        reorder_window_ns: 200_000,
        delay_ns: 1_000_000,
        seed,
    };
    let links = run(faults, 600, seed);
    for l in [links.inbound, links.outbound] {
        assert!(l.corrupted > 0 && l.dropped > 0, "{l:?}");
    }
}

/// Multi-packet requests under the same 5 % loss each way: a 64 KiB write
/// (46 packets, 46 acknowledgements) and a 64 KiB read (46 response
/// packets) must complete. Were every retry to resend all of a request and
/// forget what was acknowledged or received, an attempt would succeed only
/// if all ~92 packets survived (0.95^92 ≈ 0.9 %) and the write would fail
/// with `Timeout`. A retry resends only unacknowledged write packets (the
/// board's dedup buffer records writes per packet offset) and keeps the
/// read bytes already received.
#[test]
fn large_requests_complete_under_loss() {
    let f = FaultConfig::parse("drop=0.05,seed=3").unwrap();
    let opts = ServeOptions {
        inbound: f,
        outbound: FaultConfig { seed: 4, ..f },
        ..ServeOptions::default()
    };
    let board = ServedBoard::start(emulator_config(), opts);
    let mut s = board.session();
    let a = s.ralloc(board.page(), perms::RW).unwrap();
    let d = clio_tests::pattern(64 << 10, 1);
    s.rwrite(a.va, &d).unwrap();
    let mut back = vec![0u8; d.len()];
    s.rread(a.va, &mut back).unwrap();
    assert_eq!(first_difference(&back, &d), None);
    board.stop().unwrap();
}

/// An 8 MiB `rread` (and `rwrite`) through the SDK under 1 % loss each way.
/// The board refuses a READ above its response bound (`TOO_LARGE`, 64 KiB
/// in emulator.toml) and states the bound in INFO; the session splits below
/// it, so the transfer is 128 ordinary requests, each retried on its own,
/// and no single request holds the board for more than 64 KiB of answers.
/// Without the split, the unsplit READ gets `TOO_LARGE`; without the
/// board's bound, it is one 5 786-packet request.
#[test]
fn an_8_mib_read_completes_under_loss_in_bounded_requests() {
    let f = FaultConfig::parse("drop=0.01,seed=23").unwrap();
    let opts = ServeOptions {
        inbound: f,
        outbound: FaultConfig { seed: 24, ..f },
        ..ServeOptions::default()
    };
    let board = ServedBoard::start(emulator_config(), opts);
    let mut s = board.session();
    let bound = s.board_info().unwrap().max_resp_bytes().unwrap();
    assert_eq!(bound, 64 << 10);
    let len = 8 << 20;
    let a = s.ralloc(len as u64, perms::RW).unwrap();
    let d = clio_tests::pattern(len, 23);
    s.rwrite(a.va, &d).unwrap();
    let mut back = vec![0u8; d.len()];
    s.rread(a.va, &mut back).unwrap();
    assert_eq!(first_difference(&back, &d), None);
    let fast = board.stats().fast;
    assert_eq!(fast.too_large, 0, "every request was within the bound");
    s.close().unwrap();
    let links = board.stop().unwrap();
    assert!(
        links.outbound.dropped > 0 && links.inbound.dropped > 0,
        "{links:?}"
    );
}
