//! A fault-injected soak with the board's RSS sampled (issue #23): the board
//! must not grow while it serves a steady workload over a lossy, duplicating,
//! reordering, corrupting link from ever new client addresses.
//!
//! The board runs in its own process (`clio-soak-board`), so its memory is
//! measured apart from the clients'. For [`soak_secs`] (60 s by default,
//! `CLIO_SOAK_SECS` to change; the 10-minute version is `CLIO_SOAK_SECS=600
//! cargo test -p clio-tests --test soak -- --nocapture`), with the issue's
//! fault mix on both links ([`FAULTS`]: 2 % loss, 1 % duplication, 5 %
//! reordering in a 200 µs window, 0.5 % corruption), each round:
//! - a long-lived session writes a random span (1 B – 6 KB) of a 3-page range
//!   and reads 4 KiB back against a local model, and adds 1 to a counter;
//! - a fresh session (a new UDP source, its own PID) allocates a page,
//!   writes, reads back and FAAs on it, and frees it, as a bring-up does;
//! - [`FLOOD_PER_ROUND`] fresh sockets each send one INFO (new sources).
//!
//! The board's client table holds [`CLIENTS`] entries, so it is full within
//! the first round and evicts from then on. The board process's RSS and
//! live heap are sampled every [`SAMPLE_EVERY`] (its zeroed allocations, the
//! emulated DRAM and the slow path's arena, are written through at
//! allocation, so their pages touched for the first time do not show as
//! growth); the test fails if the live heap grows by more than
//! [`HEAP_BOUND`] after the warm-up, or if an RSS sample
//! after the warm-up (the first quarter of the run, at least [`WARMUP_MIN`])
//! exceeds the first post-warm-up sample by more than [`RSS_BOUND`].
//! Without the bound (capacity 2^24, the old unbounded table) a 30 s run
//! grew by 988 KiB in its 20 s after the warm-up (every new source kept its
//! entry) and never evicted; with it, a 40 s run grew by 20 KiB.
//! At the end: memory equals the model, the counter equals the number of
//! adds (each FAA applied exactly once), and the table never held more than
//! its capacity.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use clio::backend::UdpTransport;
use clio::Session;
use clio_tests::{client_config, emulator_config, first_difference, seed, Rng};
use clio_wire::payload::{perms, InfoResp};
use clio_wire::{Header, Opcode};

/// Client-table capacity of the soaked board.
const CLIENTS: usize = 64;
/// The fault mix, each direction (the seed is appended).
const FAULTS: &str = "drop=0.02,dup=0.01,reorder=0.05,window_us=200,corrupt=0.005";
/// Fresh INFO sources per round.
const FLOOD_PER_ROUND: usize = 32;
/// Most the board's RSS may grow after the warm-up.
const RSS_BOUND: u64 = 512 << 10;
/// Most the board's live heap may grow after the warm-up (the allocator's
/// exact count: a leak shows here first).
const HEAP_BOUND: u64 = 64 << 10;
/// How often RSS is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);
/// Shortest warm-up.
const WARMUP_MIN: Duration = Duration::from_secs(10);
/// Pages of the long-lived data range.
const PAGES: u64 = 3;

/// Run length: `CLIO_SOAK_SECS`, else 60 s (CI).
fn soak_secs() -> u64 {
    std::env::var("CLIO_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}

/// One `rss` answer of the board process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    rss: u64,
    heap: u64,
    live: u64,
    evicted: u64,
    unroutable: u64,
}

/// The board process and its command pipe.
struct BoardProc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    addr: SocketAddr,
}

impl BoardProc {
    fn start(seed: u64) -> BoardProc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clio-soak-board"))
            .arg(CLIENTS.to_string())
            .arg(format!("{FAULTS},seed={seed}"))
            .arg(format!("{FAULTS},seed={}", seed ^ 0x50a4))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start clio-soak-board");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let addr = line
            .strip_prefix("addr ")
            .unwrap_or_else(|| panic!("clio-soak-board said '{line}'"))
            .trim()
            .parse()
            .unwrap();
        BoardProc {
            child,
            stdin,
            stdout,
            addr,
        }
    }

    fn sample(&mut self) -> Sample {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "rss").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = |key: &str| -> u64 {
            let i = f
                .iter()
                .position(|w| *w == key)
                .unwrap_or_else(|| panic!("'{line}'"));
            f[i + 1].parse().unwrap()
        };
        Sample {
            rss: n("rss"),
            heap: n("heap"),
            live: n("live"),
            evicted: n("evicted"),
            unroutable: n("unroutable"),
        }
    }

    /// Close the pipe; the board stops and reports its datagram counts.
    fn stop(mut self) -> (u64, u64) {
        drop(self.stdin.take());
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "clio-soak-board: {status}");
        let f: Vec<u64> = line
            .strip_prefix("stats ")
            .unwrap_or_else(|| panic!("clio-soak-board said '{line}'"))
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        (f[0], f[1])
    }
}

impl Drop for BoardProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A session in a new address space of its own.
fn session(addr: SocketAddr) -> Session<UdpTransport> {
    Session::open(addr, client_config(&emulator_config()))
        .unwrap_or_else(|e| panic!("open a session: {e}"))
}

#[test]
fn fault_injected_soak_keeps_board_rss_flat() {
    let secs = soak_secs();
    let seed = seed(23);
    let mut rng = Rng::new(seed);
    let mut board = BoardProc::start(seed);
    let page = emulator_config().pages.default_size;
    let mut main = session(board.addr);
    let data = main.ralloc(PAGES * page, perms::RW).unwrap();
    let counter = main.ralloc(page, perms::RW).unwrap();
    let mut model = vec![0u8; (PAGES * page) as usize];
    let mut adds = 0u64;
    // Padded as the wire requires (no answer larger than the request).
    let info = Header::request(Opcode::Info, 0, 1, 0, 0)
        .encode(&[0u8; InfoResp::LEN])
        .unwrap();

    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    let warmup = (Duration::from_secs(secs) / 4).max(WARMUP_MIN);
    let mut samples: Vec<(f64, Sample)> = Vec::new();
    let mut warm: Option<Sample> = None;
    let mut worst = 0u64;
    let mut worst_heap = 0u64;
    let mut next_sample = start;
    let mut rounds = 0u64;
    while Instant::now() < end {
        rounds += 1;
        // The long-lived session: a write, a read-back, an add.
        let len = rng.range(1, 6000);
        let off = rng.below(PAGES * page - len);
        let mut bytes = vec![0u8; len as usize];
        rng.fill(&mut bytes);
        main.rwrite(data.va + off, &bytes).unwrap();
        model[off as usize..(off + len) as usize].copy_from_slice(&bytes);
        let roff = rng.below(PAGES * page - 4096);
        let mut got = vec![0u8; 4096];
        main.rread(data.va + roff, &mut got).unwrap();
        let want = &model[roff as usize..roff as usize + 4096];
        assert!(
            got == want,
            "round {rounds}: read at +{roff:#x} differs from the model at byte {:?}",
            first_difference(&got, want)
        );
        main.faa(counter.va, 1).unwrap();
        adds += 1;

        // A fresh session from a new source in a new address space: alloc,
        // use, free; dropping it closes the session at the board.
        let mut s = session(board.addr);
        let a = s.ralloc(page, perms::RW).unwrap();
        let b = clio_tests::pattern(3000, rounds);
        s.rwrite(a.va + page / 2, &b).unwrap();
        let mut back = vec![0u8; 3000];
        s.rread(a.va + page / 2, &mut back).unwrap();
        assert_eq!(back, b, "round {rounds}");
        assert_eq!(s.faa(a.va, 5).unwrap(), 0, "round {rounds}: a fresh page");
        s.rfree(a.va, page).unwrap();
        drop(s);

        // New sources, one INFO each (answers not read).
        for _ in 0..FLOOD_PER_ROUND {
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.send_to(&info, board.addr).unwrap();
        }

        let now = Instant::now();
        if now >= next_sample {
            next_sample = now + SAMPLE_EVERY;
            let smp = board.sample();
            assert!(
                smp.live <= CLIENTS as u64,
                "client table over capacity: {smp:?}"
            );
            samples.push((now.duration_since(start).as_secs_f64(), smp));
            match warm {
                None if now.duration_since(start) >= warmup => warm = Some(smp),
                Some(w) => {
                    worst = worst.max(smp.rss.saturating_sub(w.rss));
                    worst_heap = worst_heap.max(smp.heap.saturating_sub(w.heap));
                }
                None => {}
            }
        }
    }
    let mut word = [0u8; 8];
    main.rread(counter.va, &mut word).unwrap();
    assert_eq!(
        u64::from_le_bytes(word),
        adds,
        "every FAA applied exactly once"
    );
    for (i, chunk) in model.chunks(64 << 10).enumerate() {
        let at = data.va + (i as u64) * (64 << 10);
        let mut got = vec![0u8; chunk.len()];
        main.rread(at, &mut got).unwrap();
        assert!(
            got == chunk,
            "final check at {at:#x}: {:?}",
            first_difference(&got, chunk)
        );
    }
    drop(main);
    let last = board.sample();
    let (received, sent) = board.stop();
    if let Some(w) = warm {
        worst = worst.max(last.rss.saturating_sub(w.rss));
        worst_heap = worst_heap.max(last.heap.saturating_sub(w.heap));
    }
    let w = warm.expect("the run is longer than its warm-up");
    println!(
        "soak {secs} s, seed {seed}: {rounds} rounds, {received} datagrams in, {sent} out; \
         client table of {CLIENTS}: evicted {}, answers to evicted clients dropped {}",
        last.evicted, last.unroutable
    );
    println!(
        "board RSS: {} KiB after the {:.0} s warm-up, {} KiB at the end, worst growth {} KiB \
         (bound {} KiB); live heap {} KiB after the warm-up, {} KiB at the end",
        w.rss >> 10,
        warmup.as_secs_f64(),
        last.rss >> 10,
        worst >> 10,
        RSS_BOUND >> 10,
        w.heap >> 10,
        last.heap >> 10
    );
    let shown: Vec<String> = samples
        .iter()
        .map(|(t, s)| format!("{t:.0}s:{}K/{}K", s.rss >> 10, s.heap >> 10))
        .collect();
    println!("samples (RSS/heap): {}", shown.join(" "));
    assert!(last.evicted > 0, "the soak never filled the client table");
    assert!(
        worst_heap <= HEAP_BOUND,
        "board heap grew by {} KiB after the warm-up (bound {} KiB)",
        worst_heap >> 10,
        HEAP_BOUND >> 10
    );
    assert!(
        worst <= RSS_BOUND,
        "board RSS grew by {} KiB after the warm-up (bound {} KiB)",
        worst >> 10,
        RSS_BOUND >> 10
    );
}
