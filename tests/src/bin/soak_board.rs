//! The board of the soak test (`tests/soak.rs`), in its own process so its
//! memory is measured apart from the test's clients.
//!
//! `clio-soak-board CLIENTS FAULTS_IN FAULTS_OUT`: serves the embedded
//! emulator board on an ephemeral loopback port with a client table of
//! CLIENTS entries and the given fault specs (`clio sim` syntax), prints
//! `addr IP:PORT`, then answers each line on stdin:
//! - `rss` → `rss BYTES live N capacity N evicted N unroutable N`: the
//!   process's resident bytes and the client table's counters. The board's
//!   DRAM is made resident before serving ([`Board::prefault_dram`]), so RSS
//!   moves only with what the board allocates, not with DRAM pages clients
//!   touch for the first time;
//! - end of input → stops the server, prints `stats RECEIVED SENT`, exits.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use clio_emu::{Board, FaultConfig, ServeOptions};

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
    let mut board = Board::new(&clio_tests::emulator_config()).map_err(|e| e.to_string())?;
    board.prefault_dram();
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
                "rss {} live {} capacity {} evicted {} unroutable {}",
                rss(),
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
