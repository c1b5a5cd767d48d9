//! `kv`: YCSB-style workloads against Clio-KV (an offload at an emulated
//! board served over UDP in this process), a real memcached and a real
//! redis-server (both started here on loopback TCP and stopped after), with
//! the same single client thread, sync (one request at a time) and
//! pipelined (batches of `depth` requests in flight).
//!
//! The generator is this crate's own code after the core workload
//! definitions (Cooper et al., SoCC 2010): A 50 % read / 50 % update, B 95 %
//! read / 5 % update, C 100 % read, D 95 % read / 5 % insert with reads of
//! the latest keys; request keys Zipf (θ = 0.99, scrambled) or uniform over
//! the loaded keys (D: Zipf over recency, or uniform). Each value size gets
//! a fresh board, loaded with `keys` keys; its per-address-space quota is
//! raised to nearly the whole data region (the stock emulator config gives
//! an address space 64 MiB). memcached runs with 1 GiB (no eviction).
//!
//! Clio-KV runs on a jumbo-frame board (`network.mtu_payload` =
//! `clio_wire::clio::MAX_PAYLOAD`, 8916 B, as `emulator-jumbo.toml`): the
//! peers' TCP over loopback moves segments of up to 64 KiB, and loopback
//! carries 9000-byte IP packets as it does 1500-byte ones, so the standard
//! 1450-byte payload would hand the peers 45× larger units of transfer for
//! no reason of the host's. The same run also measures Clio-KV on a board
//! with the `--config` board's own payload (1450 for `emulator`: the
//! `clio-kv-std` column) side by side, so the jumbo frames' share of the
//! result is measured, not assumed.
//!
//! A row's verdict: each store runs every row for at least `kv_ops`
//! requests (5 000) and a fixed time (`SECS`: 0.15 s sync, 0.25 s
//! pipelined; `--quick`: a third of `kv_ops` and `QUICK_SECS`), the
//! stores one after another (clio-kv, clio-kv-std, memcached, redis), and
//! that round is repeated `ROUNDS` (3) times; a store's throughput, p50 and
//! p99 in the row are the medians over its rounds, and the row's ratios
//! (and the targets' checks) are clio-kv's medians over the faster peer's
//! medians. Every round's values and its own ratios are in the JSON
//! (`rows[].rounds`). Interleaving makes a burst of load on the host fall
//! on all stores alike; medians of rounds drop a disturbed round.

use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clio::{AsyncSession, ClientConfig, Session};
use clio_kv::{AsyncKvClient, KvClient, KvOffload, KvOp, OFFLOAD_ID};
use serde::Serialize;

use super::stats::Rng;
use super::tcp::{find, LineClient, Server};
use super::{bar, Check, Ctx, Outcome, Plot, Ran};

/// Value sizes measured.
pub const VALUE_SIZES: [usize; 3] = [64, 256, 1024];
/// Zipf constant of the skewed distribution.
pub const THETA: f64 = 0.99;

/// A YCSB core workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Workload {
    /// 50 % read, 50 % update.
    A,
    /// 95 % read, 5 % update.
    B,
    /// 100 % read.
    C,
    /// 95 % read (latest keys), 5 % insert.
    D,
}

impl Workload {
    const ALL: [Workload; 4] = [Workload::A, Workload::B, Workload::C, Workload::D];
    /// Percent of requests that write (update, or insert for D).
    fn write_pct(self) -> u64 {
        match self {
            Workload::A => 50,
            Workload::B | Workload::D => 5,
            Workload::C => 0,
        }
    }
}

/// Key distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dist {
    /// Zipf θ = 0.99 (scrambled over the key space; D: over recency).
    Zipf,
    /// Uniform.
    Uniform,
}

/// Zipf ranks in `0..n` by the rejection-free method of Gray et al.
/// ("Quickly generating billion-record synthetic databases", 1994).
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Zipf {
    /// Ranks `0..n` (n ≥ 2) with constant `theta` (0 < θ < 1).
    pub fn new(n: u64, theta: f64) -> Zipf {
        let n = n.max(2);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2, theta);
        Zipf {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }
    /// A rank (0 most popular) from a uniform `u` in [0, 1).
    pub fn rank(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64).min(self.n - 1)
    }
}

/// One generated request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read key i.
    Read(u64),
    /// Update key i.
    Update(u64),
    /// Insert key i (new).
    Insert(u64),
}

/// The request generator of one run.
#[derive(Debug)]
pub struct Generator {
    w: Workload,
    dist: Dist,
    zipf: Zipf,
    rng: Rng,
    /// Keys that exist (0..inserted).
    inserted: u64,
}

fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn scramble(i: u64, n: u64) -> u64 {
    clio_kv::proto::hash(&i.to_le_bytes()) % n
}

impl Generator {
    /// Over `loaded` keys (0..loaded).
    pub fn new(w: Workload, dist: Dist, loaded: u64, seed: u64) -> Generator {
        Generator {
            w,
            dist,
            zipf: Zipf::new(loaded, THETA),
            rng: Rng::new(seed),
            inserted: loaded,
        }
    }

    fn existing(&mut self) -> u64 {
        let n = self.inserted;
        match (self.dist, self.w) {
            (Dist::Uniform, _) => self.rng.below(n),
            // Latest: the most recent keys are the most popular.
            (Dist::Zipf, Workload::D) => n - 1 - self.zipf.rank(uniform(&mut self.rng)).min(n - 1),
            (Dist::Zipf, _) => scramble(self.zipf.rank(uniform(&mut self.rng)), n),
        }
    }

    /// The next request.
    pub fn next_op(&mut self) -> Op {
        let write = self.rng.below(100) < self.w.write_pct();
        match (write, self.w) {
            (false, _) => Op::Read(self.existing()),
            (true, Workload::D) => {
                self.inserted += 1;
                Op::Insert(self.inserted - 1)
            }
            (true, _) => Op::Update(self.existing()),
        }
    }
}

fn key(i: u64) -> String {
    format!("user{i:012}")
}

/// A store under test.
trait Store {
    fn name(&self) -> &'static str;
    /// One request, waiting for its answer; reads check the value's length.
    fn one(&mut self, op: Op, value: &[u8]) -> Result<()>;
    /// Requests back to back, then every answer.
    fn batch(&mut self, ops: &[Op], value: &[u8]) -> Result<()>;
}

// ---- Clio-KV ----

struct Clio {
    name: &'static str,
    sync: KvClient<clio::backend::UdpTransport>,
    rt: tokio::runtime::Runtime,
    asy: AsyncKvClient,
}

impl Clio {
    fn open(name: &'static str, addr: SocketAddr, cfg: &clio_config::BoardConfig) -> Result<Clio> {
        let s = Session::open(addr, ClientConfig::from_board(cfg))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let a = rt.block_on(AsyncSession::open(addr, ClientConfig::from_board(cfg)))?;
        Ok(Clio {
            name,
            sync: KvClient::new(vec![s])?,
            rt,
            asy: AsyncKvClient::new(vec![a])?,
        })
    }
}

impl Store for Clio {
    fn name(&self) -> &'static str {
        self.name
    }
    fn one(&mut self, op: Op, value: &[u8]) -> Result<()> {
        match op {
            Op::Read(i) => {
                let v = self.sync.read(key(i).as_bytes())?;
                if v.len() != value.len() {
                    bail!("clio-kv read {}: {} bytes", key(i), v.len());
                }
            }
            Op::Update(i) => self.sync.update(key(i).as_bytes(), value)?,
            Op::Insert(i) => self.sync.create(key(i).as_bytes(), value)?,
        }
        Ok(())
    }
    fn batch(&mut self, ops: &[Op], value: &[u8]) -> Result<()> {
        // Multi-op OFFLOAD_CALLs: as many operations per request packet as
        // fit, every call of the batch in flight at once.
        let keys: Vec<String> = ops
            .iter()
            .map(|&op| match op {
                Op::Read(i) | Op::Update(i) | Op::Insert(i) => key(i),
            })
            .collect();
        let kv_ops: Vec<KvOp<'_>> = ops
            .iter()
            .zip(&keys)
            .map(|(&op, k)| match op {
                Op::Read(_) => KvOp::Read(k.as_bytes()),
                Op::Update(_) => KvOp::Update(k.as_bytes(), value),
                Op::Insert(_) => KvOp::Create(k.as_bytes(), value),
            })
            .collect();
        let f = self.asy.batch(&kv_ops);
        let results = self.rt.block_on(f)?;
        for ((op, k), r) in ops.iter().zip(&keys).zip(results) {
            let got = r?;
            if matches!(op, Op::Read(_)) && got.len() != value.len() {
                bail!("clio-kv read {k}: {} bytes", got.len());
            }
        }
        Ok(())
    }
}

// ---- memcached and redis over TCP ----

/// How long a read from memcached or redis may wait.
const PEER_TIMEOUT: Duration = Duration::from_secs(10);

/// memcached, text protocol.
struct Memcached {
    c: LineClient,
    _server: Server,
}

impl Memcached {
    fn push(&mut self, op: Op, value: &[u8]) {
        let o = &mut self.c.out;
        match op {
            Op::Read(i) => o.extend_from_slice(format!("get {}\r\n", key(i)).as_bytes()),
            Op::Update(i) | Op::Insert(i) => {
                o.extend_from_slice(format!("set {} 0 0 {}\r\n", key(i), value.len()).as_bytes());
                o.extend_from_slice(value);
                o.extend_from_slice(b"\r\n");
            }
        }
    }
    fn answer(&mut self, op: Op, n: usize) -> Result<()> {
        match op {
            Op::Read(i) => {
                let head = self.c.read_line()?.to_string();
                let want = format!("VALUE {} 0 {n}", key(i));
                if head != want {
                    bail!("memcached get {}: answered {head:?}", key(i));
                }
                self.c.read_bytes(n + 2)?;
                if self.c.read_line()? != "END" {
                    bail!("memcached get {}: no END", key(i));
                }
            }
            _ => {
                let l = self.c.read_line()?;
                if l != "STORED" {
                    bail!("memcached set: answered {l:?}");
                }
            }
        }
        Ok(())
    }
}

impl Store for Memcached {
    fn name(&self) -> &'static str {
        "memcached"
    }
    fn one(&mut self, op: Op, value: &[u8]) -> Result<()> {
        self.batch(&[op], value)
    }
    fn batch(&mut self, ops: &[Op], value: &[u8]) -> Result<()> {
        self.c.out.clear();
        for &op in ops {
            self.push(op, value);
        }
        self.c.w.write_all(&self.c.out)?;
        for &op in ops {
            self.answer(op, value.len())?;
        }
        Ok(())
    }
}

/// redis-server, RESP.
struct Redis {
    c: LineClient,
    _server: Server,
}

impl Store for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }
    fn one(&mut self, op: Op, value: &[u8]) -> Result<()> {
        self.batch(&[op], value)
    }
    fn batch(&mut self, ops: &[Op], value: &[u8]) -> Result<()> {
        let o = &mut self.c.out;
        o.clear();
        for &op in ops {
            match op {
                Op::Read(i) => {
                    let k = key(i);
                    o.extend_from_slice(
                        format!("*2\r\n$3\r\nGET\r\n${}\r\n{k}\r\n", k.len()).as_bytes(),
                    );
                }
                Op::Update(i) | Op::Insert(i) => {
                    let k = key(i);
                    o.extend_from_slice(
                        format!(
                            "*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${}\r\n",
                            k.len(),
                            value.len()
                        )
                        .as_bytes(),
                    );
                    o.extend_from_slice(value);
                    o.extend_from_slice(b"\r\n");
                }
            }
        }
        self.c.w.write_all(&self.c.out)?;
        for &op in ops {
            let l = self.c.read_line()?.to_string();
            match op {
                Op::Read(i) => {
                    if l != format!("${}", value.len()) {
                        bail!("redis GET {}: answered {l:?}", key(i));
                    }
                    self.c.read_bytes(value.len() + 2)?;
                }
                _ => {
                    if l != "+OK" {
                        bail!("redis SET: answered {l:?}");
                    }
                }
            }
        }
        Ok(())
    }
}

// ---- the benchmark ----

/// Seconds each (store, row) measurement runs at least, per round: sync,
/// then pipelined (full run; `--quick` runs `QUICK_SECS`). Together with
/// the plan's `kv_ops` floor (at least that many requests) this makes a
/// pipelined measurement ≥ 50 000 requests at the rates measured here
/// (a row lasted ~25 ms when it was 5 000 requests, and single rows moved
/// by 2× between runs).
const SECS: (f64, f64) = (0.15, 0.25);
/// `--quick`'s (CI smoke run) seconds per measurement.
const QUICK_SECS: (f64, f64) = (0.01, 0.02);
/// Bytes of DRAM (and data region) the kv boards get on top of the
/// config's, for the loaded keys and D's inserts.
const KV_EXTRA_DRAM: u64 = 256 << 20;

/// Rounds per row: every store measured once per round, in turn; a row's
/// values and verdict are the medians over the rounds.
const ROUNDS: usize = 3;

/// Throughput and latency of one (store, mode) measurement, or the medians
/// of several (each field's own median).
#[derive(Debug, Clone, Copy, Serialize)]
struct Measured {
    ops_per_sec: f64,
    /// Sync: per request; pipelined: per batch (send to last answer).
    p50_us: f64,
    p99_us: f64,
    /// Requests measured (a median's: the sum over the rounds).
    ops: usize,
}

impl Measured {
    /// Each field's median over `v` (not empty); `ops` summed.
    fn median(v: &[Measured]) -> Measured {
        let med = |f: &dyn Fn(&Measured) -> f64| median(&mut v.iter().map(f).collect::<Vec<_>>());
        Measured {
            ops_per_sec: med(&|m| m.ops_per_sec),
            p50_us: med(&|m| m.p50_us),
            p99_us: med(&|m| m.p99_us),
            ops: v.iter().map(|m| m.ops).sum(),
        }
    }
}

/// One round of a row: every store measured once, one after another.
#[derive(Debug, Clone, Serialize)]
struct Round {
    clio: Measured,
    clio_std: Option<Measured>,
    memcached: Option<Measured>,
    redis: Option<Measured>,
    /// This round's own clio / faster-peer ratios (for the scatter; the
    /// row's verdict uses the medians).
    throughput_ratio: Option<f64>,
    p50_ratio: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Row {
    value_bytes: usize,
    workload: Workload,
    dist: Dist,
    mode: &'static str,
    /// Clio-KV on the jumbo-frame board: medians over `rounds`.
    clio: Measured,
    /// Clio-KV on a board with the standard payload (`Kv::std_mtu_payload`).
    clio_std: Option<Measured>,
    memcached: Option<Measured>,
    redis: Option<Measured>,
    /// The verdict's throughput ratio: clio's median throughput / the
    /// faster peer's median throughput.
    throughput_ratio: Option<f64>,
    /// The verdict's p50 ratio: clio's median p50 / the lowest peer median
    /// p50 (below 1: clio is faster).
    p50_ratio: Option<f64>,
    /// Every round's values.
    rounds: Vec<Round>,
}

#[derive(Debug, Serialize)]
struct Kv {
    /// Payload per packet of the board Clio-KV's ratios are for (jumbo).
    mtu_payload: usize,
    /// Payload per packet of the `clio_std` runs (`None`: not run, the
    /// config's payload is the jumbo one already).
    std_mtu_payload: Option<usize>,
    keys: u64,
    /// Fewest requests per measurement.
    min_ops: usize,
    /// Fewest seconds per measurement, sync.
    secs_sync: f64,
    /// Fewest seconds per measurement, pipelined.
    secs_pipelined: f64,
    /// Rounds per row (medians over them).
    rounds: usize,
    depth: usize,
    threads: usize,
    peers: Vec<String>,
    rows: Vec<Row>,
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// The median (the mean of the middle two for an even count).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Run `g`'s requests against `s` (one at a time when `depth` ≤ 1, else
/// batches of `depth`) until at least `min_ops` requests and `secs`
/// seconds; returns the measurement and how many keys it inserted.
/// Throughput counts the time inside the store's calls only (generating
/// a request is not the store's cost; the same for every store).
fn measure(
    s: &mut dyn Store,
    g: &mut Generator,
    min_ops: usize,
    secs: f64,
    depth: usize,
    value: &[u8],
) -> Result<(Measured, u64)> {
    let depth = depth.max(1);
    let mut lat = Vec::new();
    let mut busy = 0.0f64;
    let mut done = 0usize;
    let mut inserted = 0u64;
    let mut chunk = Vec::with_capacity(depth);
    while done < min_ops.max(1) || busy < secs {
        chunk.clear();
        chunk.extend((0..depth).map(|_| g.next_op()));
        inserted += chunk.iter().filter(|o| matches!(o, Op::Insert(_))).count() as u64;
        let at = Instant::now();
        if depth == 1 {
            s.one(chunk[0], value)?;
        } else {
            s.batch(&chunk, value)?;
        }
        let t = at.elapsed().as_secs_f64();
        busy += t;
        lat.push(t * 1e6);
        done += chunk.len();
    }
    Ok((
        Measured {
            ops_per_sec: done as f64 / busy.max(1e-9),
            p50_us: percentile(&mut lat, 0.5),
            p99_us: percentile(&mut lat, 0.99),
            ops: done,
        },
        inserted,
    ))
}

fn load(s: &mut dyn Store, n: u64, value: &[u8], depth: usize) -> Result<()> {
    let ops: Vec<Op> = (0..n).map(Op::Insert).collect();
    for c in ops.chunks(depth.max(1)) {
        s.batch(c, value)?;
    }
    Ok(())
}

/// Clio's ratios against the faster peer: (throughput, p50).
fn ratios(
    clio: Measured,
    mc: Option<Measured>,
    rd: Option<Measured>,
) -> (Option<f64>, Option<f64>) {
    let peers: Vec<Measured> = [mc, rd].into_iter().flatten().collect();
    let best_tp = peers.iter().map(|m| m.ops_per_sec).reduce(f64::max);
    let best_p50 = peers.iter().map(|m| m.p50_us).reduce(f64::min);
    (
        best_tp.map(|b| clio.ops_per_sec / b),
        best_p50.map(|b| clio.p50_us / b),
    )
}

/// Run the key-value comparison.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let (keys, depth) = (p.kv_keys, p.kv_depth);
    // `--quick` (CI, a debug build): the plan's requests per row split
    // over the rounds, so the smoke run stays as long as it was.
    let min_ops = if p.quick { p.kv_ops / ROUNDS } else { p.kv_ops };
    let (secs_sync, secs_pipe) = if p.quick { QUICK_SECS } else { SECS };
    let mut std_cfg = ctx.cfg;
    // Room for `keys` 1 KiB objects and D's inserts (time-based: a faster
    // store inserts more) in the store's one address space: the data
    // region, and the board's DRAM, grown by KV_EXTRA_DRAM when it ends
    // the DRAM (with the stock emulator's 156 MiB, a Clio-KV pipelining at
    // 300-400 k ops/s answered "store full" in D's last rows).
    if std_cfg.regions.data.base + std_cfg.regions.data.size
        == std_cfg.dram.base + std_cfg.dram.size
    {
        std_cfg.dram.size += KV_EXTRA_DRAM;
        std_cfg.regions.data.size += KV_EXTRA_DRAM;
    }
    std_cfg.sessions.mem_quota_bytes = std_cfg.regions.data.size - (8 << 20);
    std_cfg.validate().map_err(|e| {
        anyhow::anyhow!("kv: the board with {KV_EXTRA_DRAM} more bytes of data: {e}")
    })?;
    let mut cfg = std_cfg;
    cfg.network.mtu_payload = clio_wire::clio::MAX_PAYLOAD as u32;
    cfg.validate()
        .map_err(|e| anyhow::anyhow!("kv: the jumbo-frame board: {e}"))?;
    let std_mtu = (std_cfg.network.mtu_payload != cfg.network.mtu_payload)
        .then_some(std_cfg.network.mtu_payload as usize);
    let mc_bin = find("memcached");
    let redis_bin = find("redis-server");
    let mut peers = Vec::new();
    if let Some(b) = &mc_bin {
        peers.push(format!("memcached ({})", b.display()));
    }
    if let Some(b) = &redis_bin {
        peers.push(format!("redis-server ({})", b.display()));
    }
    let combos = p.kv_values.len() * Workload::ALL.len() * 2 * 2;
    let pb = bar(combos as u64, "kv");
    let mut rows = Vec::new();
    // `vi` is the size's place in VALUE_SIZES (not in the plan's list), so a
    // run of some sizes gets the same request streams as a run of all.
    for (vi, &vsize) in VALUE_SIZES
        .iter()
        .enumerate()
        .filter(|(_, v)| p.kv_values.contains(v))
    {
        let value = vec![0x5au8 + vi as u8; vsize];
        let kv_board = |c: &clio_config::BoardConfig| -> Result<clio_emu::ServerHandle> {
            let mut board = clio_emu::Board::new(c).map_err(anyhow::Error::msg)?;
            board
                .register_offload(OFFLOAD_ID, Box::new(KvOffload::new((keys / 4).max(64))))
                .map_err(anyhow::Error::msg)?;
            Ok(clio_emu::spawn(
                board,
                "127.0.0.1:0".parse()?,
                clio_emu::ServeOptions::for_board(c),
            )?)
        };
        let server = kv_board(&cfg)?;
        let mut stores: Vec<Box<dyn Store>> =
            vec![Box::new(Clio::open("clio-kv", server.addr(), &cfg)?)];
        let std_server = match std_mtu {
            Some(_) => Some(kv_board(&std_cfg)?),
            None => None,
        };
        if let Some(h) = &std_server {
            stores.push(Box::new(Clio::open("clio-kv-std", h.addr(), &std_cfg)?));
        }
        if let Some(b) = &mc_bin {
            let srv = Server::start(b, &|port| {
                [
                    "-p",
                    &port.to_string(),
                    "-U",
                    "0",
                    "-l",
                    "127.0.0.1",
                    "-m",
                    "1024",
                    "-u",
                    "nobody",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect()
            })?;
            stores.push(Box::new(Memcached {
                c: LineClient::connect("memcached", srv.addr, PEER_TIMEOUT)?,
                _server: srv,
            }));
        }
        if let Some(b) = &redis_bin {
            let srv = Server::start(b, &|port| {
                [
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect()
            })?;
            stores.push(Box::new(Redis {
                c: LineClient::connect("redis", srv.addr, PEER_TIMEOUT)?,
                _server: srv,
            }));
        }
        for s in stores.iter_mut() {
            load(s.as_mut(), keys, &value, 64)
                .with_context(|| format!("kv: loading {}", s.name()))?;
        }
        // D inserts new keys: each store's keys past everything it has
        // inserted so far (time-based runs insert different counts).
        let mut inserted = vec![0u64; stores.len()];
        for (wi, &w) in Workload::ALL.iter().enumerate() {
            for (di, &dist) in [Dist::Zipf, Dist::Uniform].iter().enumerate() {
                for (mi, (mode, d, secs)) in
                    [("sync", 1usize, secs_sync), ("pipelined", depth, secs_pipe)]
                        .into_iter()
                        .enumerate()
                {
                    let mut rounds = Vec::with_capacity(ROUNDS);
                    for round in 0..ROUNDS {
                        // One seed per (row, round): every store of a round
                        // gets the same request stream.
                        let seed = ((vi * 100 + wi * 10 + di * 2 + mi) * 16 + round) as u64 + 1;
                        let mut got = Vec::new();
                        for (si, s) in stores.iter_mut().enumerate() {
                            let mut g = Generator::new(w, dist, keys + inserted[si], seed);
                            let (m, ins) = measure(s.as_mut(), &mut g, min_ops, secs, d, &value)
                                .with_context(|| {
                                    format!("kv: {} {w:?} {dist:?} {mode} round {round}", s.name())
                                })?;
                            inserted[si] += ins;
                            got.push((s.name(), m));
                        }
                        let find = |n: &str| got.iter().find(|(m, _)| *m == n).map(|(_, x)| *x);
                        let clio = find("clio-kv").context("clio-kv result")?;
                        let (mc, rd) = (find("memcached"), find("redis"));
                        let (tr, pr) = ratios(clio, mc, rd);
                        rounds.push(Round {
                            clio,
                            clio_std: find("clio-kv-std"),
                            memcached: mc,
                            redis: rd,
                            throughput_ratio: tr,
                            p50_ratio: pr,
                        });
                    }
                    let med = |f: &dyn Fn(&Round) -> Option<Measured>| {
                        let v: Vec<Measured> = rounds.iter().filter_map(f).collect();
                        (!v.is_empty()).then(|| Measured::median(&v))
                    };
                    let clio = med(&|r| Some(r.clio)).context("clio-kv result")?;
                    let (mc, rd) = (med(&|r| r.memcached), med(&|r| r.redis));
                    let (tr, pr) = ratios(clio, mc, rd);
                    rows.push(Row {
                        value_bytes: vsize,
                        workload: w,
                        dist,
                        mode,
                        clio,
                        clio_std: med(&|r| r.clio_std),
                        memcached: mc,
                        redis: rd,
                        throughput_ratio: tr,
                        p50_ratio: pr,
                        rounds,
                    });
                }
                pb.inc(2);
            }
        }
        drop(stores);
        server.stop()?;
        if let Some(h) = std_server {
            h.stop()?;
        }
    }
    pb.finish_and_clear();
    Ok(Ran::Done(Box::new(Kv {
        mtu_payload: cfg.network.mtu_payload as usize,
        std_mtu_payload: std_mtu,
        keys,
        min_ops,
        secs_sync,
        secs_pipelined: secs_pipe,
        rounds: ROUNDS,
        depth,
        threads: 1,
        peers,
        rows,
    })))
}

impl Outcome for Kv {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        // Issue #16's targets: 1 KiB values, YCSB A/B/C, Zipf: throughput
        // ≥ 1.0× the faster peer and p50 ≤ 1.0×, sync and pipelined.
        self.rows
            .iter()
            .filter(|r| r.value_bytes == 1024 && r.dist == Dist::Zipf && r.workload != Workload::D)
            .flat_map(|r| {
                let what = format!("kv {:?} 1 KiB zipf {}", r.workload, r.mode);
                let mut v = Vec::new();
                if let Some(t) = r.throughput_ratio {
                    v.push(Check::at_least(
                        format!("{what}: throughput / faster peer"),
                        (t * 100.0).round() / 100.0,
                        1.0,
                    ));
                }
                if let Some(p) = r.p50_ratio {
                    v.push(Check::at_most(
                        format!("{what}: p50 / faster peer"),
                        (p * 100.0).round() / 100.0,
                        1.0,
                    ));
                }
                v
            })
            .collect()
    }

    fn text(&self) -> String {
        let mut s = format!(
            "  clio-kv: payload {} B per packet (jumbo frames); clio-kv-std: {}\n  {} keys; per measurement at least {} requests and {} s sync / {} s pipelined; {} rounds per row (stores in turn), medians shown; {} client thread, pipelined depth {}; peers: {}\n  value  wl dist    mode       clio-kv kops/s p50/p99 µs   clio-kv-std kops/s p50/p99   memcached kops/s p50/p99   redis kops/s p50/p99   tput ratio  p50 ratio\n",
            self.mtu_payload,
            self.std_mtu_payload.map_or("not run".to_string(), |m| format!("payload {m} B")),
            self.keys,
            self.min_ops,
            self.secs_sync,
            self.secs_pipelined,
            self.rounds,
            self.threads,
            self.depth,
            if self.peers.is_empty() { "none installed".to_string() } else { self.peers.join(", ") }
        );
        let m = |x: Option<Measured>| {
            x.map_or("—".to_string(), |m| {
                format!("{:.1} {:.0}/{:.0}", m.ops_per_sec / 1e3, m.p50_us, m.p99_us)
            })
        };
        for r in &self.rows {
            s.push_str(&format!(
                "  {:>5}  {:?}  {:<7} {:<10} {:<27} {:<28} {:<26} {:<22} {:<11} {}\n",
                r.value_bytes,
                r.workload,
                format!("{:?}", r.dist).to_lowercase(),
                r.mode,
                m(Some(r.clio)),
                m(r.clio_std),
                m(r.memcached),
                m(r.redis),
                r.throughput_ratio.map_or("—".into(), |x| format!("{x:.2}")),
                r.p50_ratio.map_or("—".into(), |x| format!("{x:.2}")),
            ));
        }
        s
    }

    fn plots(&self) -> Vec<Plot> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that answers at once and counts what it is asked.
    struct Counting {
        calls: usize,
        ops: usize,
    }

    impl Store for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn one(&mut self, _op: Op, _value: &[u8]) -> Result<()> {
            self.calls += 1;
            self.ops += 1;
            Ok(())
        }
        fn batch(&mut self, ops: &[Op], _value: &[u8]) -> Result<()> {
            self.calls += 1;
            self.ops += ops.len();
            Ok(())
        }
    }

    #[test]
    fn a_measurement_runs_its_floor_and_its_time() {
        let value = [0u8; 8];
        // The request floor, sync: one request per call.
        let mut s = Counting { calls: 0, ops: 0 };
        let mut g = Generator::new(Workload::A, Dist::Zipf, 1000, 1);
        let (m, ins) = measure(&mut s, &mut g, 500, 0.0, 1, &value).unwrap();
        assert_eq!((m.ops, s.ops, s.calls, ins), (500, 500, 500, 0));
        assert!(m.ops_per_sec > 0.0 && m.p50_us <= m.p99_us);
        // Pipelined, batches of 16, time-bound: whole batches, ≥ the time.
        let mut s = Counting { calls: 0, ops: 0 };
        let t = Instant::now();
        let (m, _) = measure(&mut s, &mut g, 1, 0.02, 16, &value).unwrap();
        assert!(t.elapsed().as_secs_f64() >= 0.02);
        assert_eq!(m.ops, s.ops);
        assert_eq!(s.ops, s.calls * 16);
        // D counts its inserts, so the next run starts past them.
        let mut g = Generator::new(Workload::D, Dist::Zipf, 1000, 5);
        let (m, ins) = measure(&mut s, &mut g, 2000, 0.0, 8, &value).unwrap();
        assert!(ins > 40 && ins < 200, "{ins} of {}", m.ops);
    }

    #[test]
    fn medians_of_rounds() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let m = |t: f64, p: f64| Measured {
            ops_per_sec: t,
            p50_us: p,
            p99_us: 2.0 * p,
            ops: 10,
        };
        // A disturbed round (the slow one) does not move the median.
        let v = Measured::median(&[m(100.0, 10.0), m(20.0, 90.0), m(110.0, 12.0)]);
        assert_eq!(
            (v.ops_per_sec, v.p50_us, v.p99_us, v.ops),
            (100.0, 12.0, 24.0, 30)
        );
        // Ratios against the faster peer: highest throughput, lowest p50,
        // each from whichever peer has it.
        let (t, p) = ratios(m(100.0, 10.0), Some(m(50.0, 8.0)), Some(m(200.0, 20.0)));
        assert_eq!((t, p), (Some(0.5), Some(1.25)));
        assert_eq!(ratios(m(1.0, 1.0), None, None), (None, None));
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let z = Zipf::new(100_000, THETA);
        let mut rng = Rng::new(3);
        let mut hits0 = 0;
        for _ in 0..100_000 {
            let r = z.rank(uniform(&mut rng));
            assert!(r < 100_000);
            if r == 0 {
                hits0 += 1;
            }
        }
        // P(rank 0) = 1 / zeta(n) ≈ 0.08 for θ = 0.99, n = 100 K.
        assert!((6_000..11_000).contains(&hits0), "{hits0}");
    }

    #[test]
    fn workload_mixes_match_the_definitions() {
        for (w, writes) in [
            (Workload::A, 50),
            (Workload::B, 5),
            (Workload::C, 0),
            (Workload::D, 5),
        ] {
            let mut g = Generator::new(w, Dist::Zipf, 1000, 1);
            let n = 20_000;
            let got = (0..n)
                .filter(|_| !matches!(g.next_op(), Op::Read(_)))
                .count();
            let pct = got as f64 * 100.0 / n as f64;
            assert!((pct - writes as f64).abs() < 1.5, "{w:?}: {pct}");
        }
        // D inserts fresh keys and reads recent ones.
        let mut g = Generator::new(Workload::D, Dist::Zipf, 1000, 2);
        let mut next = 1000;
        for _ in 0..5000 {
            match g.next_op() {
                Op::Insert(i) => {
                    assert_eq!(i, next);
                    next += 1;
                }
                Op::Read(i) => assert!(i < next),
                Op::Update(_) => panic!("D does not update"),
            }
        }
    }
}
