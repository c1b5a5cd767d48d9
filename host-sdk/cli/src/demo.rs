//! `clio demo`: the README's main job. Start an emulated board in this
//! process (served over UDP on loopback, like a real board on the wire) and
//! run a visible workload through the SDK, checking every result.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::{ClientConfig, ClioError, Session};
use clio_emu::{Board, FaultConfig, ServeOptions};
use clio_wire::payload::perms;
use serde::Serialize;

use crate::board_arg::load_board;
use crate::report::{fmt_ns, percentile};

/// Run a remote-memory workload against an embedded emulated board.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Board config: a TOML path or an embedded name.
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// Faults on the link in both directions (e.g. `drop=0.05,reorder=0.1,window_us=200,dup=0.02,seed=3`).
    #[arg(long, default_value = "")]
    pub faults: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run the rack workload instead: a controller and emulated memory nodes
    /// over UDP, a migration under writers, the primary of a replicated region
    /// killed under writers (every acknowledged write checked).
    #[arg(long)]
    pub rack: bool,
    /// Memory nodes of the rack workload (at least 3).
    #[arg(long, default_value_t = 3, requires = "rack")]
    pub nodes: usize,
}

#[derive(Debug, Serialize)]
struct Step {
    step: String,
    ok: bool,
    detail: String,
    micros: f64,
}

#[derive(Debug, Serialize)]
struct DemoReport {
    board: String,
    listen: String,
    steps: Vec<Step>,
    passed: usize,
    failed: usize,
}

struct Runner {
    steps: Vec<Step>,
    json: bool,
}

impl Runner {
    fn step(&mut self, name: &str, f: impl FnOnce() -> Result<String>) {
        let t = Instant::now();
        let r = f();
        let micros = t.elapsed().as_secs_f64() * 1e6;
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(e) => (false, format!("{e:#}")),
        };
        if !self.json {
            println!(
                "  {:<4} {:<34} {:>10}  {}",
                if ok { "ok" } else { "FAIL" },
                name,
                fmt_ns(micros * 1e3),
                detail
            );
        }
        self.steps.push(Step {
            step: name.into(),
            ok,
            detail,
            micros,
        });
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Run `clio demo`.
pub fn run(a: &DemoArgs) -> Result<()> {
    let cfg = load_board(&a.board)?;
    if a.rack {
        return crate::demo_rack::run(&cfg, a.nodes, a.json);
    }
    let faults = FaultConfig::parse(&a.faults)
        .map_err(anyhow::Error::msg)
        .context("--faults")?;
    let opts = ServeOptions {
        inbound: faults,
        outbound: FaultConfig {
            seed: faults.seed ^ 0x5eed,
            ..faults
        },
        ..ServeOptions::for_board(&cfg)
    };
    let board = Board::new(&cfg).map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(board, "127.0.0.1:0".parse()?, opts)?;
    let addr = server.addr();
    if !a.json {
        println!(
            "clio demo: emulated board '{}' ({} MiB DRAM, {} KiB pages, {}-entry TLB) on udp://{addr}{}",
            cfg.board.name,
            cfg.dram.size >> 20,
            cfg.pages.default_size >> 10,
            cfg.tlb.entries,
            if faults.is_none() { String::new() } else { format!(", faults: {}", a.faults) }
        );
    }
    let page = cfg.pages.default_size;
    let mut r = Runner {
        steps: Vec::new(),
        json: a.json,
    };
    let mut s = Session::open(addr, ClientConfig::from_board(&cfg))
        .context("opening a session (a new address space)")?;
    let mut other = Session::open(addr, ClientConfig::from_board(&cfg))
        .context("opening a second session (another address space)")?;

    r.step("info", || {
        let i = s.info()?;
        Ok(format!(
            "board '{}', rtl {:#x}, mtu {}, {} slots/bucket",
            i.board_name().unwrap_or("?"),
            i.rtl_version,
            i.mtu,
            i.slots_per_bucket
        ))
    });
    let mut region = None;
    r.step("ralloc 3 pages", || {
        let al = s.ralloc(3 * page, perms::RW)?;
        region = Some(al);
        Ok(format!(
            "va {:#x}, {} bytes, {} retries",
            al.va, al.size, al.retries
        ))
    });
    let Some(al) = region else {
        bail!("allocation failed; nothing else can run")
    };
    // A write that starts just before a page boundary and spans many MTUs:
    // first touches fault in two pages, each packet executes on its own.
    let start = al.va + page - 1000;
    let data = pattern(20_000, 7);
    r.step("rwrite 20000 B across a page", || {
        s.rwrite(start, &data)?;
        Ok(format!(
            "{} packets of <= {} B",
            data.len().div_ceil(cfg.network.mtu_payload as usize),
            cfg.network.mtu_payload
        ))
    });
    r.step("rread it back", || {
        let mut back = vec![0u8; data.len()];
        s.rread(start, &mut back)?;
        if back != data {
            let i = back
                .iter()
                .zip(&data)
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            bail!("mismatch at byte {i}");
        }
        Ok("identical".into())
    });
    r.step("sync 64 B reads x 2000", || {
        let mut buf = [0u8; 64];
        let mut lat = Vec::with_capacity(2000);
        for i in 0..2000u64 {
            let t = Instant::now();
            s.rread(al.va + (i * 64) % (2 * page), &mut buf)?;
            lat.push(t.elapsed().as_nanos() as f64);
        }
        lat.sort_by(f64::total_cmp);
        Ok(format!(
            "p50 {}, p99 {}",
            fmt_ns(percentile(&lat, 0.5)),
            fmt_ns(percentile(&lat, 0.99))
        ))
    });
    r.step("async 64 B reads x 4096", || {
        let t = Instant::now();
        let mut handles = Vec::with_capacity(4096);
        for i in 0..4096u64 {
            handles.push(s.rread_async(al.va + (i * 64) % (2 * page), 64)?);
        }
        let results = s.rpoll(&handles)?;
        let ok = results.iter().filter(|r| r.is_ok()).count();
        if ok != handles.len() {
            bail!("{} of {} failed", handles.len() - ok, handles.len());
        }
        Ok(format!(
            "{:.0} ops/s pipelined",
            4096.0 / t.elapsed().as_secs_f64()
        ))
    });
    let word = al.va + 2 * page;
    r.step("fetch-and-add x 100", || {
        for _ in 0..100 {
            s.faa(word, 1)?;
        }
        let v = s.faa(word, 0)?;
        if v != 100 {
            bail!("counter is {v}, expected 100");
        }
        Ok("counter = 100, each applied once".into())
    });
    r.step("compare-and-swap", || {
        let old = s.cas(word, 100, 7)?;
        let miss = s.cas(word, 100, 9)?;
        if (old, miss) != (100, 7) {
            bail!("cas returned {old}/{miss}");
        }
        Ok("100 -> 7; a stale expectation leaves it".into())
    });
    r.step("rlock / runlock", || {
        let lock = word + 8;
        s.rlock(lock)?;
        let held = s.tas(lock)?;
        s.runlock(lock)?;
        if held == 0 {
            bail!("lock word was free while held");
        }
        Ok("held while locked, released after".into())
    });
    r.step("rfence, rrelease", || {
        let h = s.rwrite_async(al.va, &[1, 2, 3, 4])?;
        s.rfence()?;
        s.rrelease()?;
        if !s.try_rpoll(&h)? {
            bail!("write not complete after rrelease");
        }
        Ok("earlier writes complete".into())
    });
    r.step("isolation: PID 2 reads PID 1", || {
        let mut b = [0u8; 8];
        match other.rread(al.va, &mut b) {
            Err(e @ (ClioError::Permission { .. } | ClioError::Unmapped { .. })) => {
                Ok(format!("refused: {e}"))
            }
            Err(e) => bail!("unexpected error {e}"),
            Ok(()) => bail!("PID 2 read PID 1's memory"),
        }
    });
    r.step("rfree, then access", || {
        s.rfree(al.va, al.size)?;
        let mut b = [0u8; 8];
        match s.rread(al.va, &mut b) {
            Err(e @ ClioError::Unmapped { .. }) => Ok(format!("refused: {e}")),
            Err(e) => bail!("unexpected error {e}"),
            Ok(()) => bail!("read of freed memory succeeded"),
        }
    });
    let _ = s.close();
    let _ = other.close();
    let stats = server.stop()?;
    let failed = r.steps.iter().filter(|s| !s.ok).count();
    let report = DemoReport {
        board: cfg.board.name.to_string(),
        listen: addr.to_string(),
        passed: r.steps.len() - failed,
        failed,
        steps: r.steps,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} passed, {} failed  (board saw {} packets in, {} out; link dropped {}/{} in/out)",
            report.passed,
            report.failed,
            stats.received,
            stats.sent,
            stats.inbound.dropped,
            stats.outbound.dropped
        );
    }
    if failed > 0 {
        bail!("{failed} demo step(s) failed");
    }
    Ok(())
}
