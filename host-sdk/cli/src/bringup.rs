//! `clio bringup`: lab bring-up checks against a board, as a pass/fail table.
//!
//! Identity, link MTU, a walking-pattern memory test through
//! ralloc/rwrite/rread, the page-fault path, atomics, and latency sanity.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use clio::{ClientConfig, ClioError, Session};
use clio_wire::payload::perms;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::board_arg::{connect_target, TargetArgs};
use crate::report::{fmt_ns, percentile};

/// Run bring-up checks against a board.
#[derive(Debug, Args)]
pub struct BringupArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Bytes covered by the walking-pattern memory test.
    #[arg(long, default_value_t = 8 << 20)]
    pub mem_test_bytes: u64,
    /// Fail the latency check when the median 64 B read is slower than this (µs).
    #[arg(long, default_value_t = 1000.0)]
    pub max_p50_us: f64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    ok: bool,
    detail: String,
}

/// 64-bit test words: walking ones, walking zeros, then each word's own
/// address (catches address-line faults that a constant pattern hides).
fn pattern_word(round: u32, addr: u64) -> u64 {
    match round {
        0 => 1u64 << (addr / 8 % 64),
        1 => !(1u64 << (addr / 8 % 64)),
        _ => addr ^ 0xa5a5_5a5a_0f0f_f0f0,
    }
}

fn memory_test(
    s: &mut Session<clio::backend::UdpTransport>,
    bytes: u64,
    mtu: usize,
    json: bool,
) -> Result<String> {
    let al = s.ralloc(bytes, perms::RW)?;
    let chunk = (mtu / 8 * 8).max(8) * 16;
    let rounds = 3u32;
    let total = bytes.div_ceil(chunk as u64) * rounds as u64 * 2;
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total)
    };
    bar.set_style(
        ProgressStyle::with_template("  memory test {bar:40} {pos}/{len} chunks {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut buf = vec![0u8; chunk];
    let mut back = vec![0u8; chunk];
    for round in 0..rounds {
        let mut off = 0;
        while off < bytes {
            let n = chunk.min((bytes - off) as usize);
            for (i, w) in buf[..n].chunks_exact_mut(8).enumerate() {
                w.copy_from_slice(&pattern_word(round, al.va + off + i as u64 * 8).to_le_bytes());
            }
            s.rwrite(al.va + off, &buf[..n])?;
            off += n as u64;
            bar.inc(1);
        }
        let mut off = 0;
        while off < bytes {
            let n = chunk.min((bytes - off) as usize);
            s.rread(al.va + off, &mut back[..n])?;
            for (i, w) in back[..n].chunks_exact(8).enumerate() {
                let addr = al.va + off + i as u64 * 8;
                let want = pattern_word(round, addr);
                let got = u64::from_le_bytes(w.try_into().unwrap_or_default());
                if got != want {
                    bar.finish_and_clear();
                    bail!("round {round}: word at {addr:#x} reads {got:#018x}, wrote {want:#018x}");
                }
            }
            off += n as u64;
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    s.rfree(al.va, al.size)?;
    Ok(format!("{} MiB x {rounds} patterns verified", bytes >> 20))
}

/// Run `clio bringup`.
pub fn run(a: &BringupArgs) -> Result<()> {
    let (addr, cfg, _server) = connect_target(&a.target)?;
    let mtu = cfg.network.mtu_payload as usize;
    let page = cfg.pages.default_size;
    let mut checks = Vec::new();
    let mut add = |check: &'static str, r: Result<String>| {
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(e) => (false, format!("{e:#}")),
        };
        if !a.json {
            println!(
                "  {:<5} {:<18} {}",
                if ok { "PASS" } else { "FAIL" },
                check,
                detail
            );
        }
        checks.push(Check { check, ok, detail });
    };
    if !a.json {
        println!(
            "clio bringup: {addr} (client config '{}', PID {})",
            cfg.board.name, a.target.pid
        );
    }
    let mut s = match Session::open(addr, ClientConfig::from_board(&cfg, a.target.pid)) {
        Ok(s) => s,
        Err(e) => bail!("no answer from {addr}: {e}"),
    };
    add(
        "identity",
        s.info().map_err(Into::into).map(|i| {
            format!(
                "board '{}', rtl {:#x}, mtu {}, page {} KiB",
                i.board_name().unwrap_or("?"),
                i.rtl_version,
                i.mtu,
                1u64 << i.page_shift >> 10
            )
        }),
    );
    add(
        "link mtu",
        (|| {
            let al = s.ralloc(page, perms::RW)?;
            for n in [mtu - 1, mtu, mtu + 1, 3 * mtu + 7] {
                let data: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
                s.rwrite(al.va, &data)?;
                let mut back = vec![0u8; n];
                s.rread(al.va, &mut back)?;
                if back != data {
                    bail!("{n}-byte transfer came back different");
                }
            }
            s.rfree(al.va, al.size)?;
            Ok(format!(
                "{}..{} B transfers intact (MTU {mtu})",
                mtu - 1,
                3 * mtu + 7
            ))
        })(),
    );
    add(
        "memory test",
        memory_test(&mut s, a.mem_test_bytes.max(8), mtu, a.json),
    );
    add(
        "page faults",
        (|| {
            let al = s.ralloc(2 * page, perms::RW)?;
            let mut b = [0u8; 64];
            let t = Instant::now();
            s.rread(al.va + page, &mut b)?;
            let first = t.elapsed().as_nanos() as f64;
            let t = Instant::now();
            s.rread(al.va + page, &mut b)?;
            let second = t.elapsed().as_nanos() as f64;
            if b != [0u8; 64] {
                bail!("a fresh page does not read as zeros");
            }
            s.rfree(al.va, al.size)?;
            match s.rread(al.va, &mut b) {
                Err(ClioError::Unmapped { .. }) => {}
                other => bail!("access after free gave {other:?}, expected Unmapped"),
            }
            Ok(format!(
                "first touch {}, next {}; fresh page zeroed; freed range refused",
                fmt_ns(first),
                fmt_ns(second)
            ))
        })(),
    );
    add(
        "atomics",
        (|| {
            let al = s.ralloc(page, perms::RW)?;
            for _ in 0..10 {
                s.faa(al.va, 3)?;
            }
            let v = s.cas(al.va, 30, 1)?;
            s.rfree(al.va, al.size)?;
            if v != 30 {
                bail!("counter {v} after 10 x FAA(3)");
            }
            Ok("FAA x 10 = 30, CAS swapped".into())
        })(),
    );
    let max_p50 = a.max_p50_us;
    add(
        "latency",
        (|| {
            let al = s.ralloc(page, perms::RW)?;
            let mut b = [0u8; 64];
            let mut lat = Vec::with_capacity(1000);
            for i in 0..1000u64 {
                let t = Instant::now();
                s.rread(al.va + (i * 64) % page, &mut b)?;
                lat.push(t.elapsed().as_nanos() as f64);
            }
            s.rfree(al.va, al.size)?;
            lat.sort_by(f64::total_cmp);
            let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
            if p50 > max_p50 * 1e3 {
                bail!("p50 {} above --max-p50-us {max_p50}", fmt_ns(p50));
            }
            Ok(format!(
                "64 B sync read p50 {}, p99 {}",
                fmt_ns(p50),
                fmt_ns(p99)
            ))
        })(),
    );
    let failed = checks.iter().filter(|c| !c.ok).count();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "board": addr.to_string(), "checks": checks, "failed": failed })
            )?
        );
    } else {
        println!("{} passed, {} failed", checks.len() - failed, failed);
    }
    if failed > 0 {
        bail!("{failed} bring-up check(s) failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::pattern_word;

    #[test]
    fn patterns_differ_per_round_and_address() {
        assert_eq!(pattern_word(0, 0), 1);
        assert_eq!(pattern_word(0, 8), 2);
        assert_eq!(pattern_word(1, 0), !1);
        assert_ne!(pattern_word(2, 0), pattern_word(2, 8));
    }
}
