//! `clio bench rack`: a rack of emulated memory nodes under one controller.
//!
//! - aggregate 64 B read ops/s with 1, 2, 4, 8 nodes from a fixed set of client
//!   threads (in process and over UDP loopback), and the scaling over 1 node,
//!   each thread reading a fixed total span (4 MiB) split over the nodes, so the
//!   touched set does not grow with the node count; beside the wall-clock
//!   number, a **model-time projection**: each node's service time taken from
//!   the fast-path model's pipeline cycles at the board's clock, aggregate =
//!   requests / the busiest node's service time;
//! - allocation latency through the controller (`RackClient::ralloc`: one
//!   controller round trip and its logged, fsynced change) against one node's
//!   `ralloc`, measured side by side;
//! - a region migrated under concurrent writers, twice side by side: writes
//!   paused for the whole copy (`CopyPolicy::PAUSED`, the behaviour before dirty
//!   tracking) and copied while writes go on (dirty tracking, the default):
//!   bytes/s moved, write latency p50/p99 before and during the move, the write
//!   pause, and acknowledged writes lost (checked against a model of what each
//!   writer last wrote);
//! - re-replication under concurrent writers (the balancer gives a replicated
//!   region that lost its backup a new one), paused vs tracked: writers' p99
//!   during the copy and lost writes;
//! - replication: 64 B write latency to a replicated region against a
//!   single-copy one (same client, interleaved), and failover: the primary of a
//!   replicated region killed under two writers and an adder, time from the kill
//!   to the region acknowledging writes again, acknowledged writes and adds lost.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use clio::backend::Transport;
use clio::{ClientConfig, Session};
use clio_control::VREGION_BYTES;
use clio_rack::client::CHUNK;
use clio_rack::local::LocalRack;
use clio_rack::{Balancer, BalancerConfig, CopyPolicy, Links, RackClient, UdpLinks};
use serde::Serialize;

use super::stats::{ratio, Rng, Summary};
use crate::board_arg::load_board;

/// `clio bench rack` options.
#[derive(Debug, Args)]
pub struct RackBenchArgs {
    /// Board config of every node.
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// Seconds per throughput point.
    #[arg(long, default_value_t = 1.0)]
    pub secs: f64,
    /// Client threads for the throughput points.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Allocation samples per side.
    #[arg(long, default_value_t = 200)]
    pub allocs: usize,
    /// Chunks (4 MiB each) in the migrated region.
    #[arg(long, default_value_t = 8)]
    pub chunks: u64,
    /// 64 KiB blocks per chunk the writers keep rewriting during a migration or
    /// re-replication (their hot set; 64 = every block: the copy cannot
    /// converge and pauses after its bound on rounds).
    #[arg(long, default_value_t = 1)]
    pub hot_blocks: u64,
    /// Write samples per side for the replication overhead.
    #[arg(long, default_value_t = 2000)]
    pub writes: usize,
    /// The controller's `dead_after_ms` in the failover run (a node silent this
    /// long is declared dead; the failover time follows it).
    #[arg(long, default_value_t = 300)]
    pub dead_after_ms: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Point {
    transport: &'static str,
    nodes: usize,
    threads: usize,
    ops: u64,
    ops_per_s: f64,
    scaling_vs_1: f64,
    /// Requests served by the least busy node / by the busiest (1 = even).
    evenness: f64,
    /// Per-node service capacity: requests served / time spent serving them,
    /// over all nodes (what one node does per second while it has a core).
    node_capacity_ops_s: f64,
    /// Cores' worth of node service time per second of the run (Σ busy / wall).
    node_busy_cores: f64,
    /// CPU time this process used per second of the run (clients, nodes and
    /// every other thread of it; at most the host's cores).
    process_cpu_cores: f64,
    /// Model time (a projection, not a measurement of this host): requests
    /// served / the busiest node's Σ fast-path pipeline cycles at the board's
    /// clock. Assumes each node serves one request at a time (no pipelining
    /// across requests) and that clients and the network keep every node busy.
    model_ops_per_s: f64,
    /// `model_ops_per_s` over the 1-node point's.
    model_scaling_vs_1: f64,
}

/// Served requests, service time (ns) and fast-path model cycles of each node.
fn node_service(r: &LocalRack) -> Vec<(u64, u64, u64)> {
    r.nodes()
        .iter()
        .map(|n| {
            let n = n.lock();
            let s = n.stats();
            (s.served, s.busy_ns, n.board().stats().fast.cycles)
        })
        .collect()
}

/// This process's user + system CPU time in seconds (`/proc/self/stat`); 0
/// where it cannot be read.
fn process_cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) in parentheses.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after ')'.
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // USER_HZ is 100 on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

/// What one throughput run measured.
struct Run {
    ops: u64,
    wall_s: f64,
    /// Per node: (served, busy ns, model cycles) during the run.
    nodes: Vec<(u64, u64, u64)>,
    cpu_s: f64,
}

#[derive(Debug, Serialize)]
struct Alloc {
    /// `RackClient::ralloc` of 64 KiB: carved out of a vRegion the client holds.
    controller: Summary,
    /// One node's `Session::ralloc` of 64 KiB.
    single_node: Summary,
    p50_ratio: f64,
    /// Allocation plus its first 64 B write, rack side (takes board memory on
    /// first touch of each 4 MiB chunk).
    with_first_write: Summary,
    /// The same on one node.
    single_node_with_first_write: Summary,
    with_first_write_p50_ratio: f64,
    /// Whole vRegions from the controller (one logged, fsynced change).
    controller_region: Summary,
}

#[derive(Debug, Serialize)]
struct Replication {
    /// 64 B writes to a single-copy region.
    single_copy: Summary,
    /// 64 B writes to a replicated region (both copies acknowledge).
    replicated: Summary,
    /// (replicated p50 / single p50 - 1) in percent.
    overhead_p50_pct: f64,
    dead_after_ms: u64,
    /// From the primary's kill to the first write issued after it being acknowledged.
    failover_s: f64,
    writes_checked: usize,
    lost_writes: usize,
    adds_acked: u64,
    adds_found: u64,
}

#[derive(Debug, Serialize)]
struct Move {
    /// `paused` (writes wait for the whole copy) or `tracked` (dirty tracking).
    policy: &'static str,
    bytes: u64,
    seconds: f64,
    bytes_per_s: f64,
    /// Rounds of dirty blocks copied while writes went on.
    rounds: u32,
    /// How long writes were paused (the last round to the switch).
    write_pause_s: f64,
    writes_before: Summary,
    writes_during: Summary,
    writes_checked: usize,
    lost_writes: usize,
}

/// A replicated region that lost its backup gets a new one from the balancer
/// while two writers keep writing.
#[derive(Debug, Serialize)]
struct Rereplication {
    /// `paused` or `tracked`, as for [`Move`].
    policy: &'static str,
    bytes: u64,
    /// From the first gate to the commit's `Rejoin` gates.
    seconds: f64,
    rounds: u32,
    write_pause_s: f64,
    writes_before: Summary,
    /// Writes issued while the primary's chunks were gated for the copy.
    writes_during: Summary,
    writes_checked: usize,
    lost_writes: usize,
}

/// `clio bench rack`'s report: `Display` is the text, `Serialize` the
/// `--json` form; [`Report::verdict`] fails if acknowledged writes were
/// lost.
#[derive(Debug, Serialize)]
pub struct Report {
    board: String,
    cores: usize,
    /// Client threads (`--threads`), named in the text only.
    #[serde(skip)]
    threads: usize,
    throughput: Vec<Point>,
    alloc: Alloc,
    migration: Vec<Move>,
    replication: Replication,
    rereplication: Vec<Rereplication>,
}

fn temp_log(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("clio-bench-rack-{}-{tag}.log", std::process::id()))
}

fn start(
    m: usize,
    board: &clio_config::BoardConfig,
    tag: &str,
) -> Result<(LocalRack, std::path::PathBuf)> {
    start_with(m, board, tag, 5000)
}

fn start_with(
    m: usize,
    board: &clio_config::BoardConfig,
    tag: &str,
    dead_after_ms: u64,
) -> Result<(LocalRack, std::path::PathBuf)> {
    let log = temp_log(tag);
    let _ = std::fs::remove_file(&log);
    let r = LocalRack::start_keyless(m, board, "127.0.0.1:0".parse()?, &log, dead_after_ms)
        .with_context(|| format!("starting a local rack of {m} nodes"))?;
    Ok((r, log))
}

/// Each client thread's read span, split evenly over the nodes: fixed, so the
/// touched set (threads × span) is the same at every node count.
const SPAN: u64 = CHUNK;

/// Ops/s of `threads` clients reading 64 B at random from one region per node,
/// `SPAN / m` bytes of each.
fn throughput<T, L>(
    r: &LocalRack,
    links: impl Fn() -> L,
    cfg: &ClientConfig,
    m: usize,
    threads: usize,
    secs: f64,
) -> Result<Run>
where
    T: Transport + Send + 'static,
    L: Links<T> + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let mut hs = Vec::new();
    let ready = Arc::new(std::sync::Barrier::new(threads + 1));
    for t in 0..threads {
        let c = RackClient::new(r.config(), r.controller_addr(), links(), cfg.clone())?;
        // One region on each node (least-loaded placement spreads them).
        let va = c.ralloc(m as u64 * VREGION_BYTES)?;
        for i in 0..m as u64 {
            c.rwrite(va + i * VREGION_BYTES, &[t as u8; 64])?;
        }
        let (stop, ops, ready) = (stop.clone(), ops.clone(), ready.clone());
        hs.push(std::thread::spawn(move || -> Result<()> {
            let mut rng = Rng::new(t as u64 + 1);
            let mut buf = [0u8; 64];
            ready.wait();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let i = rng.below(m as u64);
                c.rread(
                    va + i * VREGION_BYTES + rng.below(SPAN / m as u64 / 64) * 64,
                    &mut buf,
                )?;
                n += 1;
            }
            ops.fetch_add(n, Ordering::Relaxed);
            Ok(())
        }));
    }
    let before = node_service(r);
    let cpu0 = process_cpu_s();
    let t0 = std::time::Instant::now();
    ready.wait();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().map_err(|_| anyhow::anyhow!("reader panicked"))??;
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = process_cpu_s() - cpu0;
    let nodes = node_service(r)
        .iter()
        .zip(&before)
        .map(|(a, b)| (a.0 - b.0, a.1 - b.1, a.2 - b.2))
        .collect();
    Ok(Run {
        ops: ops.load(Ordering::Relaxed),
        wall_s,
        nodes,
        cpu_s,
    })
}

fn run_points(a: &RackBenchArgs, board: &clio_config::BoardConfig) -> Result<Vec<Point>> {
    let cfg = ClientConfig::from_board(board);
    let hz = f64::from(board.fastpath.clock_mhz) * 1e6;
    let mut points = Vec::new();
    for transport in ["inproc", "udp"] {
        let (mut base, mut model_base) = (0.0, 0.0);
        for m in [1usize, 2, 4, 8] {
            let (r, log) = start(m, board, &format!("{transport}{m}"))?;
            let run = if transport == "inproc" {
                throughput(&r, || r.links(), &cfg, m, a.threads, a.secs)?
            } else {
                throughput(&r, || UdpLinks, &cfg, m, a.threads, a.secs)?
            };
            drop(r);
            let _ = std::fs::remove_file(log);
            let ops = run.ops;
            let ops_per_s = ops as f64 / a.secs;
            let served: Vec<u64> = run.nodes.iter().map(|n| n.0).collect();
            let (lo, hi) = (
                served.iter().copied().min().unwrap_or(0),
                served.iter().copied().max().unwrap_or(0),
            );
            let busy_s = run.nodes.iter().map(|n| n.1).sum::<u64>() as f64 / 1e9;
            let total: u64 = served.iter().sum();
            let busiest_s = run.nodes.iter().map(|n| n.2).max().unwrap_or(0) as f64 / hz;
            let model_ops_per_s = ratio(total as f64, busiest_s);
            if m == 1 {
                base = ops_per_s;
                model_base = model_ops_per_s;
            }
            points.push(Point {
                transport,
                nodes: m,
                threads: a.threads,
                ops,
                ops_per_s,
                scaling_vs_1: ratio(ops_per_s, base),
                evenness: ratio(lo as f64, hi as f64),
                node_capacity_ops_s: ratio(total as f64, busy_s),
                node_busy_cores: busy_s / run.wall_s,
                process_cpu_cores: run.cpu_s / run.wall_s,
                model_ops_per_s,
                model_scaling_vs_1: ratio(model_ops_per_s, model_base),
            });
        }
    }
    Ok(points)
}

fn run_alloc(a: &RackBenchArgs, board: &clio_config::BoardConfig) -> Result<Alloc> {
    let (r, log) = start(2, board, "alloc")?;
    let cfg = ClientConfig::from_board(board);
    let c = RackClient::new(r.config(), r.controller_addr(), UdpLinks, cfg.clone())?;
    let mut s = Session::open(r.config().nodes[0].address, cfg)?;
    let (mut ctl, mut one) = (Vec::new(), Vec::new());
    let (mut ctl_w, mut one_w, mut region) = (Vec::new(), Vec::new(), Vec::new());
    let first = [0x5au8; 64];
    // Interleaved, so both sides see the same machine moment by moment.
    for i in 0..a.allocs {
        let t = Instant::now();
        let va = c.ralloc(64 << 10)?;
        ctl.push(t.elapsed().as_nanos() as f64);
        c.rfree(va)?;
        let t = Instant::now();
        let al = s.ralloc(64 << 10, clio_wire::payload::perms::RW)?;
        one.push(t.elapsed().as_nanos() as f64);
        s.rfree(al.va, al.size)?;
        let t = Instant::now();
        let va = c.ralloc(64 << 10)?;
        c.rwrite(va, &first)?;
        ctl_w.push(t.elapsed().as_nanos() as f64);
        c.rfree(va)?;
        let t = Instant::now();
        let al = s.ralloc(64 << 10, clio_wire::payload::perms::RW)?;
        s.rwrite(al.va, &first)?;
        one_w.push(t.elapsed().as_nanos() as f64);
        s.rfree(al.va, al.size)?;
        if i % 4 == 0 {
            let t = Instant::now();
            let va = c.ralloc(clio_rack::client::ARENA_MAX + 1)?;
            region.push(t.elapsed().as_nanos() as f64);
            c.rfree(va)?;
        }
    }
    drop(r);
    let _ = std::fs::remove_file(log);
    let (controller, single_node) = (Summary::of(&mut ctl), Summary::of(&mut one));
    let (with_first_write, single_node_with_first_write) =
        (Summary::of(&mut ctl_w), Summary::of(&mut one_w));
    Ok(Alloc {
        p50_ratio: ratio(controller.p50_ns, single_node.p50_ns),
        with_first_write_p50_ratio: ratio(
            with_first_write.p50_ns,
            single_node_with_first_write.p50_ns,
        ),
        controller,
        single_node,
        with_first_write,
        single_node_with_first_write,
        controller_region: Summary::of(&mut region),
    })
}

fn run_replication(a: &RackBenchArgs, board: &clio_config::BoardConfig) -> Result<Replication> {
    let (mut r, log) = start_with(3, board, "replication", a.dead_after_ms)?;
    let cfg = ClientConfig {
        // A dead node is noticed within this bound; the controller's verdict
        // follows within dead_after_ms.
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(board)
    };
    let c = Arc::new(RackClient::new(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        cfg,
    )?);
    // Overhead: the same client, interleaved, 64 B to a single-copy region and
    // to a replicated one.
    let one = c.ralloc(CHUNK)?;
    let two = c.ralloc_replicated(CHUNK)?;
    let data = [0x3cu8; 64];
    c.rwrite(one, &data)?;
    c.rwrite(two, &data)?;
    let (mut single, mut replicated) = (Vec::new(), Vec::new());
    let mut rng = Rng::new(7);
    for _ in 0..a.writes {
        let off = rng.below(CHUNK / 64) * 64;
        let t = Instant::now();
        c.rwrite(one + off, &data)?;
        single.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        c.rwrite(two + off, &data)?;
        replicated.push(t.elapsed().as_nanos() as f64);
    }
    let (single_copy, replicated) = (Summary::of(&mut single), Summary::of(&mut replicated));
    // Failover: two writers own alternate words, an adder counts its adds.
    let region = (two >> 30) as u32;
    let counter = two + CHUNK - 64;
    c.rwrite(counter, &0u64.to_le_bytes())?;
    let (primary, _) = c.copies_of(region).context("no copies")?;
    let stop = Arc::new(AtomicBool::new(false));
    let words = 1024u64;
    let writers: Vec<_> = (0..2u64)
        .map(|t| {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || -> Result<_> {
                let mut model = BTreeMap::new();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let at = two + ((i * 2 + t) % words) * 8;
                    let v = (t << 60) | i;
                    c.rwrite(at, &v.to_le_bytes())?;
                    model.insert(at, v);
                    i += 1;
                }
                Ok(model)
            })
        })
        .collect();
    let adder = {
        let (c, stop) = (c.clone(), stop.clone());
        std::thread::spawn(move || -> Result<u64> {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                c.faa(counter, 1)?;
                n += 1;
            }
            Ok(n)
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let killed = Instant::now();
    r.kill(primary)?;
    // Serving again: a write issued after the kill, acknowledged by both the
    // promoted copy (and no other: the region has one copy now).
    c.rwrite(two + 8 * words, &data)?;
    let failover_s = killed.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let mut model = BTreeMap::new();
    for w in writers {
        model.extend(w.join().map_err(|_| anyhow::anyhow!("writer panicked"))??);
    }
    let adds_acked = adder
        .join()
        .map_err(|_| anyhow::anyhow!("adder panicked"))??;
    let lost = count_lost(&c, &model)?;
    let mut b = [0u8; 8];
    c.rread(counter, &mut b)?;
    let adds_found = u64::from_le_bytes(b);
    drop(r);
    let _ = std::fs::remove_file(log);
    Ok(Replication {
        overhead_p50_pct: (ratio(replicated.p50_ns, single_copy.p50_ns) - 1.0) * 100.0,
        single_copy,
        replicated,
        dead_after_ms: a.dead_after_ms,
        failover_s,
        writes_checked: model.len(),
        lost_writes: lost,
        adds_acked,
        adds_found,
    })
}

fn run_move(
    a: &RackBenchArgs,
    board: &clio_config::BoardConfig,
    (policy, copy): (&'static str, CopyPolicy),
) -> Result<Move> {
    let (r, log) = start(2, board, &format!("move-{policy}"))?;
    let cfg = ClientConfig::from_board(board);
    let c = Arc::new(RackClient::new(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        cfg,
    )?);
    let va = c.ralloc(a.chunks * CHUNK)?;
    let region = (va >> 30) as u32;
    for i in 0..a.chunks {
        c.rwrite(va + i * CHUNK, &[0xa5; 64])?;
    }
    let from = c.owner_of(region).context("no owner")?;
    let moving = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    // A hot set: words in the first 64 KiB block of each chunk.
    let writers = block_writers(&c, va, a.chunks, a.hot_blocks, &moving, &stop);
    std::thread::sleep(Duration::from_millis(300));
    moving.store(true, Ordering::Relaxed);
    let t = Instant::now();
    let m = c.migrate_with(region, 3 - from, copy)?;
    let seconds = t.elapsed().as_secs_f64();
    moving.store(false, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let (model, mut before, mut during) = join_writers(writers)?;
    let lost = count_lost(&c, &model)?;
    drop(r);
    let _ = std::fs::remove_file(log);
    Ok(Move {
        policy,
        bytes: m.bytes,
        seconds,
        bytes_per_s: m.bytes as f64 / seconds,
        rounds: m.rounds,
        write_pause_s: m.paused.as_secs_f64(),
        writes_before: Summary::of(&mut before),
        writes_during: Summary::of(&mut during),
        writes_checked: model.len(),
        lost_writes: lost,
    })
}

/// Two writers on alternate words of the first `blocks` 64 KiB blocks of each
/// of `chunks` chunks at `va` (a hot set of `chunks × blocks` blocks), one word
/// per block per turn; latencies go to `during` while `moving` is set. Each
/// returns (model, before, during).
type WriterOut = (BTreeMap<u64, u64>, Vec<f64>, Vec<f64>);

/// Join the block writers: their models merged, their latencies before and
/// during the copy.
fn join_writers(writers: Vec<std::thread::JoinHandle<Result<WriterOut>>>) -> Result<WriterOut> {
    let (mut model, mut before, mut during) = (BTreeMap::new(), Vec::new(), Vec::new());
    for w in writers {
        let (md, b, d) = w.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
        model.extend(md);
        before.extend(b);
        during.extend(d);
    }
    Ok((model, before, during))
}

/// Acknowledged writes lost: words of `model` (address → last value
/// acknowledged) that read back otherwise.
fn count_lost<T: Transport>(c: &RackClient<T>, model: &BTreeMap<u64, u64>) -> Result<usize> {
    let mut lost = 0;
    let mut b = [0u8; 8];
    for (at, v) in model {
        c.rread(*at, &mut b)?;
        if u64::from_le_bytes(b) != *v {
            lost += 1;
        }
    }
    Ok(lost)
}

fn block_writers<T>(
    c: &Arc<RackClient<T>>,
    va: u64,
    chunks: u64,
    blocks: u64,
    moving: &Arc<AtomicBool>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<Result<WriterOut>>>
where
    T: Transport + Send + 'static,
    RackClient<T>: Send + Sync,
{
    let hot = chunks * blocks;
    (0..2u64)
        .map(|t| {
            let (c, stop, moving) = (c.clone(), stop.clone(), moving.clone());
            std::thread::spawn(move || -> Result<_> {
                let mut model = BTreeMap::new();
                let (mut before, mut during) = (Vec::new(), Vec::new());
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let k = i % hot;
                    let at = va
                        + (k % chunks) * CHUNK
                        + (k / chunks) * clio_control::DIRTY_BLOCK
                        + ((i / hot) % 64) * 16
                        + 8 * t;
                    let v = (t << 60) | i;
                    let start = Instant::now();
                    let m = moving.load(Ordering::Relaxed);
                    c.rwrite(at, &v.to_le_bytes())?;
                    let ns = start.elapsed().as_nanos() as f64;
                    if m || moving.load(Ordering::Relaxed) {
                        during.push(ns);
                    } else {
                        before.push(ns);
                    }
                    model.insert(at, v);
                    i += 1;
                }
                Ok((model, before, during))
            })
        })
        .collect()
}

fn run_rereplicate(
    a: &RackBenchArgs,
    board: &clio_config::BoardConfig,
    (policy, copy): (&'static str, CopyPolicy),
) -> Result<Rereplication> {
    let (mut r, log) = start_with(3, board, &format!("rerep-{policy}"), a.dead_after_ms)?;
    let cfg = ClientConfig {
        request_timeout_ns: 200_000_000,
        ..ClientConfig::from_board(board)
    };
    let c = Arc::new(RackClient::new(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        cfg.clone(),
    )?);
    let va = c.ralloc_replicated(a.chunks * CHUNK)?;
    let region = (va >> 30) as u32;
    for i in 0..a.chunks {
        c.rwrite(va + i * CHUNK, &[0x5a; 64])?;
    }
    let (primary, backup) = c.copies_of(region).context("no copies")?;
    let backup = backup.context("not replicated")?;
    // The backup dies; the next write waits out the failover (single copy now).
    r.kill(backup)?;
    c.rwrite(va, &[0x5b; 64])?;
    let moving = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let writers = block_writers(&c, va, a.chunks, a.hot_blocks, &moving, &stop);
    std::thread::sleep(Duration::from_millis(300));
    let bal = Balancer::start(
        r.config(),
        r.controller_addr(),
        UdpLinks,
        cfg,
        BalancerConfig {
            period: Duration::from_millis(50),
            // No pressure moves: re-replication only.
            high_ppm: 1_000_000,
            low_ppm: 0,
            copy,
        },
    )?;
    let node = r.nodes()[usize::from(primary) - 1].clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    let m = loop {
        if let Some(m) = bal.stats().replicated.first().copied() {
            break m;
        }
        if Instant::now() > deadline {
            anyhow::bail!("no re-replication within 60 s: {:?}", bal.stats());
        }
        let gated = node.lock().gates().iter().any(|g| {
            g.region == region
                && matches!(
                    g.state,
                    clio_control::GateState::Tracking | clio_control::GateState::Paused
                )
        });
        if gated {
            moving.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    moving.store(false, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let (model, mut before, mut during) = join_writers(writers)?;
    let lost = count_lost(&c, &model)?;
    // The balancer holds the client's new address space on the new backup
    // (it created it): it stops after the client is done.
    bal.stop();
    drop(r);
    let _ = std::fs::remove_file(log);
    Ok(Rereplication {
        policy,
        bytes: m.bytes,
        seconds: m.took.as_secs_f64(),
        rounds: m.rounds,
        write_pause_s: m.paused.as_secs_f64(),
        writes_before: Summary::of(&mut before),
        writes_during: Summary::of(&mut during),
        writes_checked: model.len(),
        lost_writes: lost,
    })
}

/// The two copy policies measured side by side.
const POLICIES: [(&str, CopyPolicy); 2] = [
    ("paused", CopyPolicy::PAUSED),
    (
        "tracked",
        CopyPolicy {
            max_rounds: 4,
            final_blocks: 16,
        },
    ),
];

/// Runs `clio bench rack`; the caller prints the report and its
/// [`Report::verdict`].
pub fn run(a: &RackBenchArgs) -> Result<Report> {
    let board = load_board(&a.board)?;
    if a.threads == 0 || a.chunks == 0 || a.chunks > 16 {
        anyhow::bail!("--threads must be positive and --chunks 1..=16 (64 MiB per address space)");
    }
    if !(1..=64).contains(&a.hot_blocks) {
        anyhow::bail!("--hot-blocks must be 1..=64 (64 KiB blocks of a 4 MiB chunk)");
    }
    let throughput = run_points(a, &board)?;
    let alloc = run_alloc(a, &board)?;
    let migration = POLICIES
        .iter()
        .map(|&p| run_move(a, &board, p))
        .collect::<Result<Vec<_>>>()?;
    let replication = run_replication(a, &board)?;
    let rereplication = POLICIES
        .iter()
        .map(|&p| run_rereplicate(a, &board, p))
        .collect::<Result<Vec<_>>>()?;
    Ok(Report {
        board: board.board.name.to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        threads: a.threads,
        throughput,
        alloc,
        migration,
        replication,
        rereplication,
    })
}

impl Report {
    /// An error if the migration or the failover lost acknowledged writes.
    pub fn verdict(&self) -> Result<()> {
        let lost = self.replication.lost_writes != 0
            || self.replication.adds_found != self.replication.adds_acked
            || self.migration.iter().any(|m| m.lost_writes != 0)
            || self.rereplication.iter().any(|m| m.lost_writes != 0);
        if lost {
            anyhow::bail!("acknowledged writes were lost");
        }
        Ok(())
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self;
        writeln!(
            f,
            "clio bench rack: board '{}', {} cores, {} client threads",
            r.board, r.cores, r.threads
        )?;
        writeln!(
            f,
            "{:<8} {:>5} {:>12} {:>10} {:>9} {:>14} {:>11} {:>9} {:>15} {:>10}",
            "",
            "nodes",
            "64 B ops/s",
            "vs 1 node",
            "evenness",
            "node cap op/s",
            "node cores",
            "proc cpu",
            "model ops/s*",
            "model vs 1"
        )?;
        for p in &r.throughput {
            writeln!(
                f,
                "{:<8} {:>5} {:>12.0} {:>9.2}x {:>9.2} {:>14.0} {:>11.2} {:>9.2} {:>15.0} {:>9.2}x",
                p.transport,
                p.nodes,
                p.ops_per_s,
                p.scaling_vs_1,
                p.evenness,
                p.node_capacity_ops_s,
                p.node_busy_cores,
                p.process_cpu_cores,
                p.model_ops_per_s,
                p.model_scaling_vs_1
            )?;
        }
        writeln!(
            f,
            "* model time, a projection: requests / the busiest node's fast-path pipeline cycles at the board's clock (one request at a time per node; clients and network not modelled)"
        )?;
        writeln!(
            f,
            "allocation p50: controller {:.1} us, one node {:.1} us ({:.2}x); p99 {:.1} / {:.1} us",
            r.alloc.controller.p50_ns / 1e3,
            r.alloc.single_node.p50_ns / 1e3,
            r.alloc.p50_ratio,
            r.alloc.controller.p99_ns / 1e3,
            r.alloc.single_node.p99_ns / 1e3
        )?;
        writeln!(
            f,
            "allocation + first 64 B write p50: rack {:.1} us, one node {:.1} us ({:.2}x); whole vRegion via the controller p50 {:.1} us",
            r.alloc.with_first_write.p50_ns / 1e3,
            r.alloc.single_node_with_first_write.p50_ns / 1e3,
            r.alloc.with_first_write_p50_ratio,
            r.alloc.controller_region.p50_ns / 1e3
        )?;
        for mv in &r.migration {
            writeln!(
                f,
                "migration ({}): {:.1} MiB in {:.3} s ({:.1} MiB/s), {} rounds, writes paused {:.1} ms; 8 B writes p50/p99 before {:.1}/{:.1} us, during {:.1}/{:.1} us ({} during); {} words checked, {} lost",
                mv.policy,
                mv.bytes as f64 / (1 << 20) as f64,
                mv.seconds,
                mv.bytes_per_s / (1 << 20) as f64,
                mv.rounds,
                mv.write_pause_s * 1e3,
                mv.writes_before.p50_ns / 1e3,
                mv.writes_before.p99_ns / 1e3,
                mv.writes_during.p50_ns / 1e3,
                mv.writes_during.p99_ns / 1e3,
                mv.writes_during.n,
                mv.writes_checked,
                mv.lost_writes
            )?;
        }
        for rr in &r.rereplication {
            writeln!(
                f,
                "re-replication ({}): {:.1} MiB in {:.3} s, {} rounds, writes paused {:.1} ms; 8 B writes p50/p99 before {:.1}/{:.1} us, during {:.1}/{:.1} us ({} during); {} words checked, {} lost",
                rr.policy,
                rr.bytes as f64 / (1 << 20) as f64,
                rr.seconds,
                rr.rounds,
                rr.write_pause_s * 1e3,
                rr.writes_before.p50_ns / 1e3,
                rr.writes_before.p99_ns / 1e3,
                rr.writes_during.p50_ns / 1e3,
                rr.writes_during.p99_ns / 1e3,
                rr.writes_during.n,
                rr.writes_checked,
                rr.lost_writes
            )?;
        }
        let rp = &r.replication;
        writeln!(
            f,
            "replication: 64 B write p50 single copy {:.1} us, replicated {:.1} us (+{:.0} %); p99 {:.1} / {:.1} us",
            rp.single_copy.p50_ns / 1e3,
            rp.replicated.p50_ns / 1e3,
            rp.overhead_p50_pct,
            rp.single_copy.p99_ns / 1e3,
            rp.replicated.p99_ns / 1e3
        )?;
        writeln!(
            f,
            "failover (dead_after_ms {}): primary killed -> serving again in {:.3} s; {} words checked, {} lost; {} adds acknowledged, {} found",
            rp.dead_after_ms,
            rp.failover_s,
            rp.writes_checked,
            rp.lost_writes,
            rp.adds_acked,
            rp.adds_found
        )
    }
}
