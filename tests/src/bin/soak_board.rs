//! The board of the soak test (`tests/soak.rs`), in its own process so its
//! memory is measured apart from the test's clients.
//!
//! `clio-soak-board CLIENTS FAULTS_IN FAULTS_OUT`: serves the embedded
//! emulator board on an ephemeral loopback port with a client table of
//! CLIENTS entries and the given fault specs (`clio sim` syntax), prints
//! `addr IP:PORT`, then answers each line on stdin:
//! - `rss` → `rss BYTES heap BYTES live N capacity N evicted N unroutable N`:
//!   the process's resident bytes, its live heap bytes and the client
//!   table's counters. Zeroed allocations are written at once ([`Resident`]),
//!   so the board's DRAM and the slow path's arena are resident from the
//!   start and RSS moves only with what the board allocates, not with pages
//!   of fixed buffers touched for the first time;
//! - end of input → stops the server, prints `stats RECEIVED SENT`, exits.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI64, Ordering};

use clio_emu::{Board, FaultConfig, ServeOptions};

/// The system allocator, counting live bytes, with zeroed allocations
/// written through (the default `calloc` leaves fresh pages unmapped until
/// first touched, which an RSS trend would mistake for growth).
struct Resident;

static HEAP: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments; the
// zeroing writes exactly the bytes just allocated.
unsafe impl GlobalAlloc for Resident {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HEAP.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        HEAP.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's layout; `p` holds `l.size()` writable bytes.
        unsafe {
            let p = System.alloc(l);
            if !p.is_null() {
                std::ptr::write_bytes(p, 0, l.size());
            }
            p
        }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HEAP.fetch_sub(l.size() as i64, Ordering::Relaxed);
        // SAFETY: `p` came from this allocator with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        HEAP.fetch_add(new as i64 - l.size() as i64, Ordering::Relaxed);
        // SAFETY: as for `dealloc`, with the caller's new size.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Resident = Resident;

/// Resident bytes of this process (`/proc/self/statm`).
fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * page_size()
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

fn run(args: &[String]) -> Result<(), String> {
    let [clients, fin, fout] = args else {
        return Err("usage: clio-soak-board CLIENTS FAULTS_IN FAULTS_OUT".into());
    };
    let opts = ServeOptions {
        inbound: FaultConfig::parse(fin)?,
        outbound: FaultConfig::parse(fout)?,
        clients: clients
            .parse()
            .map_err(|_| format!("CLIENTS '{clients}' is not a number"))?,
    };
    let board = Board::new(&clio_tests::emulator_config()).map_err(|e| e.to_string())?;
    let server = clio_emu::spawn(board, ([127, 0, 0, 1], 0).into(), opts)
        .map_err(|e| format!("serving: {e}"))?;
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock, line: String| {
        writeln!(out, "{line}").and_then(|_| out.flush())
    };
    say(&mut out, format!("addr {}", server.addr())).map_err(|e| e.to_string())?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim() != "rss" {
            return Err(format!("unknown command '{line}'"));
        }
        let c = server.clients();
        say(
            &mut out,
            format!(
                "rss {} heap {} live {} capacity {} evicted {} unroutable {}",
                rss(),
                HEAP.load(Ordering::Relaxed),
                c.live,
                c.capacity,
                c.evicted,
                c.unroutable
            ),
        )
        .map_err(|e| e.to_string())?;
    }
    let s = server.stop().map_err(|e| format!("server: {e}"))?;
    say(&mut out, format!("stats {} {}", s.received, s.sent)).map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("clio-soak-board: {e}");
            ExitCode::FAILURE
        }
    }
}
