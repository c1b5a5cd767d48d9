//! Pipelined Clio-KV batches over UDP, and what the board's thread spends on
//! them: batches of 32 operations on 1 KiB values (`READS` of them reads, 16
//! by default, the rest updates; keys uniform over 10 000) through
//! `AsyncKvClient::batch` against an `emulator-jumbo` board served in this
//! process for `SECS` seconds (3 by default). Prints throughput, the
//! batch's p50/p99/mean and the serving thread's CPU time per batch (its
//! thread clock). `SYNC=1`: the same operations one call at a time
//! through the blocking `KvClient` (latency per call instead of per batch).
//! Run it beside two `nice -n 19` busy loops to see what a host without
//! idle CPUs does to the tail.
//!
//! ```sh
//! cargo run --release -p clio-kv --example kvpipe
//! ```
use std::time::{Duration, Instant};

use clio::{AsyncSession, ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_kv::{AsyncKvClient, KvClient, KvOffload, KvOp, OFFLOAD_ID};

fn key(i: u64) -> String {
    format!("user{i:012}")
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = BoardConfig::embedded("emulator-jumbo")?;
    cfg.sessions.mem_quota_bytes = cfg.regions.data.size - (8 << 20);
    let n = 10_000u64;
    let secs: f64 = env("SECS", 3.0);
    let reads: usize = env("READS", 16);
    let mut board = Board::new(&cfg)?;
    board.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(n / 4)))?;
    let h = clio_emu::spawn(board, "127.0.0.1:0".parse()?, ServeOptions::for_board(&cfg))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let a = rt.block_on(AsyncSession::open(h.addr(), ClientConfig::from_board(&cfg)))?;
    let kv = AsyncKvClient::new(vec![a])?;
    let v = vec![7u8; 1024];
    let keys: Vec<String> = (0..n).map(key).collect();
    for c in keys.chunks(32) {
        let ops: Vec<KvOp> = c.iter().map(|k| KvOp::Create(k.as_bytes(), &v)).collect();
        for r in rt.block_on(kv.batch(&ops))? {
            r?;
        }
    }
    let mut lat = Vec::new();
    let mut x = 12_345u64; // xorshift: the same keys every run
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n) as usize
    };
    let sync = std::env::var_os("SYNC").is_some();
    let per = if sync { 1 } else { 32 };
    let mut skv = if sync {
        Some(KvClient::new(vec![Session::open(
            h.addr(),
            ClientConfig::from_board(&cfg),
        )?])?)
    } else {
        None
    };
    let cpu0 = h.cpu_time().unwrap_or_default();
    let t0 = Instant::now();
    while let Some(skv) = skv
        .as_mut()
        .filter(|_| t0.elapsed() < Duration::from_secs_f64(secs))
    {
        let (k, read) = (keys[next()].as_bytes(), lat.len() % 32 < reads);
        let t = Instant::now();
        if read {
            skv.read(k)?;
        } else {
            skv.update(k, &v)?;
        }
        lat.push(t.elapsed());
    }
    while !sync && t0.elapsed() < Duration::from_secs_f64(secs) {
        let ops: Vec<KvOp> = (0..32)
            .map(|i| {
                let k = keys[next()].as_bytes();
                if i < reads {
                    KvOp::Read(k)
                } else {
                    KvOp::Update(k, &v)
                }
            })
            .collect();
        let t = Instant::now();
        for r in rt.block_on(kv.batch(&ops))? {
            r?;
        }
        lat.push(t.elapsed());
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let cpu = h.cpu_time().unwrap_or_default().saturating_sub(cpu0);
    lat.sort();
    let b = lat.len();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{} {b}, {:.0} kops/s, p50 {:.1} us, p99 {:.1} us, mean {:.1} us, board cpu {:.1} us each",
        if sync { "calls" } else { "batches of 32" },
        (b * per) as f64 / elapsed / 1e3,
        us(lat[b / 2]),
        us(lat[b * 99 / 100]),
        us(lat.iter().sum::<Duration>()) / b as f64,
        us(cpu) / b as f64
    );
    Ok(())
}
