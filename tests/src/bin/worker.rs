//! A second process for the cross-process tests: drives the board named on
//! the command line through the SDK, joining the address space of another
//! process's session with the share token it was handed.
//!
//! `clio-e2e-worker lock-increments ADDR TOKEN LOCK_VA COUNTER_VA N`:
//! N times, take the lock at LOCK_VA, read the 8-byte little-endian counter
//! at COUNTER_VA, write it back plus one, release the lock.

use std::process::ExitCode;

use clio::{ClientConfig, Session};

fn num(s: &str, what: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{what}: '{s}' is not a number"))
}

fn run(args: &[String]) -> Result<(), String> {
    let [mode, addr, token, lock, counter, n] = args else {
        return Err(
            "usage: clio-e2e-worker lock-increments ADDR TOKEN LOCK_VA COUNTER_VA N".into(),
        );
    };
    if mode != "lock-increments" {
        return Err(format!("mode '{mode}' unknown (known: lock-increments)"));
    }
    let addr = addr.parse().map_err(|e| format!("ADDR '{addr}': {e}"))?;
    let token: clio::ShareToken = token.parse().map_err(|e| format!("TOKEN: {e}"))?;
    let cfg = ClientConfig {
        join: Some(token),
        ..clio_tests::client_config(&clio_tests::emulator_config())
    };
    let (lock, counter, n) = (
        num(lock, "LOCK_VA")?,
        num(counter, "COUNTER_VA")?,
        num(n, "N")?,
    );
    let mut s = Session::open(addr, cfg).map_err(|e| format!("open: {e}"))?;
    for i in 0..n {
        let step = |e: clio::ClioError| format!("increment {i}: {e}");
        s.rlock(lock).map_err(step)?;
        let mut w = [0u8; 8];
        s.rread(counter, &mut w).map_err(step)?;
        let v = u64::from_le_bytes(w) + 1;
        s.rwrite(counter, &v.to_le_bytes()).map_err(step)?;
        s.runlock(lock).map_err(step)?;
    }
    s.close().map_err(|e| format!("close: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("clio-e2e-worker: {e}");
            ExitCode::FAILURE
        }
    }
}
