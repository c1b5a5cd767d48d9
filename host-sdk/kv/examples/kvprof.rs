//! Where a Clio-KV call's time goes: the same calls in process (board only,
//! no UDP) and over UDP, sync and pipelined.
//!
//! `--packets`: the store's memory accesses go as Clio packets into the
//! fast path instead of its direct translated access (for comparison).
//! `--jumbo`: the board is `emulator-jumbo` (8916-byte payloads).
//! `BOARD_ONLY=1`: only the in-process batches, timed inside the board's
//! `handle` (what the board's thread spends per operation; for `perf`).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clio::backend::{InProcess, InProcessBoard};
use clio::{AsyncSession, ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions};
use clio_kv::{AsyncKvClient, KvClient, KvOffload, KvOp, OFFLOAD_ID};

/// The board in process; `spent` counts the nanoseconds inside its
/// `handle` (the board's own work, without the client's).
struct Emu(Board, Arc<AtomicU64>);
impl InProcessBoard for Emu {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        // The answers' copies into the client's queue count as the board's
        // (a server copies them into its socket).
        let t = Instant::now();
        self.0.handle(from, pkt, &mut |to, p| {
            if to == from {
                out(p)
            }
        });
        self.1
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// In process: batches of 32 reads (and of 32 updates) through the
/// blocking client, and the share of their time spent inside the board.
fn board_batches(
    cfg: &BoardConfig,
    direct: bool,
    n: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let v = vec![7u8; 1024];
    let mut board = Board::new(cfg)?;
    board.set_offload_direct(direct);
    board.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(n / 4)))?;
    let spent = Arc::new(AtomicU64::new(0));
    let s = Session::open_with(
        InProcess::new(Emu(board, spent.clone()), 1),
        ClientConfig::from_board(cfg),
    )?;
    let mut kv = KvClient::new(vec![s])?;
    let keys: Vec<String> = (0..n).map(key).collect();
    for chunk in keys.chunks(32) {
        let ops: Vec<KvOp> = chunk
            .iter()
            .map(|k| KvOp::Create(k.as_bytes(), &v))
            .collect();
        for r in kv.batch(&ops)? {
            r?;
        }
    }
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5u64);
    for what in ["read", "update"] {
        spent.store(0, Ordering::Relaxed);
        let t = Instant::now();
        for _ in 0..rounds {
            for chunk in keys.chunks(32) {
                let ops: Vec<KvOp> = chunk
                    .iter()
                    .map(|k| match what {
                        "read" => KvOp::Read(k.as_bytes()),
                        _ => KvOp::Update(k.as_bytes(), &v),
                    })
                    .collect();
                for r in kv.batch(&ops)? {
                    r?;
                }
            }
        }
        let ops = (n * rounds) as f64;
        println!(
            "inproc batch {what} depth 32: {:.2} us/op, of which in the board {:.2} us/op",
            t.elapsed().as_secs_f64() * 1e6 / ops,
            spent.load(Ordering::Relaxed) as f64 / 1e3 / ops
        );
    }
    Ok(())
}

fn key(i: u64) -> String {
    format!("user{i:012}")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let jumbo = std::env::args().any(|a| a == "--jumbo");
    let mut cfg = BoardConfig::embedded(if jumbo { "emulator-jumbo" } else { "emulator" })?;
    println!(
        "board: {}, payload {} B",
        cfg.board.name, cfg.network.mtu_payload
    );
    cfg.sessions.mem_quota_bytes = cfg.regions.data.size - (8 << 20);
    let n = 20_000u64;
    let direct = !std::env::args().any(|a| a == "--packets");
    println!(
        "offload memory access: {}",
        if direct { "direct" } else { "packets" }
    );
    if std::env::var_os("BOARD_ONLY").is_some() {
        return board_batches(&cfg, direct, n);
    }
    let v = vec![7u8; 1024];
    {
        let mut board = Board::new(&cfg)?;
        board.set_offload_direct(direct);
        board.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(n / 4)))?;
        let s = Session::open_with(
            InProcess::new(Emu(board, Arc::new(AtomicU64::new(0))), 1),
            ClientConfig::from_board(&cfg),
        )?;
        let mut kv = KvClient::new(vec![s])?;
        let t = Instant::now();
        for i in 0..n {
            kv.create(key(i).as_bytes(), &v)?;
        }
        println!(
            "inproc create {:.2} us",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
        let t = Instant::now();
        for _ in 0..5 {
            for i in 0..n {
                kv.read(key(i).as_bytes())?;
            }
        }
        println!(
            "inproc read (x5) {:.2} us",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
        let t = Instant::now();
        for i in 0..n {
            kv.update(key(i).as_bytes(), &v)?;
        }
        println!(
            "inproc update {:.2} us",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    if std::env::var_os("INPROC_ONLY").is_some() {
        return board_batches(&cfg, direct, n);
    }
    let mut board = Board::new(&cfg)?;
    board.set_offload_direct(direct);
    board.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(n / 4)))?;
    let h = clio_emu::spawn(board, "127.0.0.1:0".parse()?, ServeOptions::for_board(&cfg))?;
    let s = Session::open(h.addr(), ClientConfig::from_board(&cfg))?;
    let mut kv = KvClient::new(vec![s])?;
    for i in 0..n {
        kv.create(key(i).as_bytes(), &v)?;
    }
    let t = Instant::now();
    for i in 0..n {
        kv.read(key(i).as_bytes())?;
    }
    println!(
        "udp sync read {:.2} us",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    // The blocking client's batches of 32 updates of distinct keys (one
    // update per packet at a 1450-byte payload, eight at 8916): each call
    // waited for in turn, against every call in flight together.
    let keys: Vec<String> = (0..n).map(key).collect();
    for pipelined in [false, true] {
        kv.set_pipelined(pipelined);
        let t = Instant::now();
        for chunk in keys.chunks(32) {
            let ops: Vec<KvOp> = chunk
                .iter()
                .map(|k| KvOp::Update(k.as_bytes(), &v))
                .collect();
            for r in kv.batch(&ops)? {
                r?;
            }
        }
        println!(
            "udp sync batch update depth 32 ({}): {:.2} us/op",
            if pipelined {
                "pipelined"
            } else {
                "one call at a time"
            },
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let a = rt.block_on(AsyncSession::open(h.addr(), ClientConfig::from_board(&cfg)))?;
    let akv = AsyncKvClient::new(vec![a])?;
    for depth in [1usize, 8, 32, 128] {
        let t = Instant::now();
        let mut i = 0;
        while i < n {
            let fs: Vec<_> = (i..(i + depth as u64).min(n))
                .map(|k| akv.read(key(k).as_bytes()))
                .collect();
            rt.block_on(async {
                for f in fs {
                    f.await.unwrap();
                }
            });
            i += depth as u64;
        }
        println!(
            "udp async read depth {depth}: {:.2} us/op",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    // The same reads as multi-op calls (as many per packet as fit).
    for depth in [8usize, 32] {
        let keys: Vec<String> = (0..n).map(key).collect();
        let t = Instant::now();
        for chunk in keys.chunks(depth) {
            let ops: Vec<KvOp> = chunk.iter().map(|k| KvOp::Read(k.as_bytes())).collect();
            for r in rt.block_on(akv.batch(&ops))? {
                r?;
            }
        }
        println!(
            "udp batch read depth {depth}: {:.2} us/op",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    Ok(())
}
