//! Latency under load (EDM §4.3.1): `N` hosts issue 64 B reads and writes (half each) to
//! uniformly random other hosts with Bernoulli arrivals, and every operation's latency is
//! split into the stages it passed through, measured from link taps and the switch's
//! scheduler log. Mean latencies are normalized by the unloaded latency of the same fabric.

use std::collections::{HashMap, VecDeque};

use clio_wire::edm::{Block66, BlockClass, GrantRepr, MsgHeader, MsgKind, NotifyRepr};

use crate::fabric::{Dir, Fabric, FabricConfig};
use crate::host::Request;
use crate::switch::SchedEvent;
use crate::vectors::Rng;

/// Stages of a read, in order (names used in reports).
pub const READ_STAGES: [&str; 8] = [
    "host queue",
    "RREQ out",
    "to scheduler",
    "scheduler wait",
    "grant out",
    "memory node",
    "forward",
    "deliver",
];

/// Stages of a write, in order.
pub const WRITE_STAGES: [&str; 8] = [
    "host queue",
    "/N/ out",
    "to scheduler",
    "scheduler wait",
    "grant out",
    "WREQ out",
    "forward",
    "deliver",
];

/// What each stage spans (for reports), indexed like [`READ_STAGES`] / [`WRITE_STAGES`].
pub const STAGE_SPANS: [(&str, &str); 8] = [
    ("submitted -> dequeued", "submitted -> dequeued"),
    (
        "dequeued -> RREQ head leaves the CN",
        "dequeued -> /N/ leaves the CN",
    ),
    (
        "-> visible in the notification queue",
        "-> visible in the notification queue",
    ),
    (
        "-> start of the granting PIM iteration",
        "-> start of the granting PIM iteration",
    ),
    (
        "-> RREQ (implicit grant) leaves the switch",
        "-> /G/ leaves the switch",
    ),
    ("-> RRES head leaves the MN", "-> WREQ head leaves the CN"),
    (
        "-> RRES head leaves the switch",
        "-> WREQ head leaves the switch",
    ),
    ("-> first byte written at the CN", "-> first byte at the MN"),
];

/// Table 1's PMA/PMD (2 × 19 ns) and propagation (10 ns) per hop, in 2.56 ns PHY cycles
/// (18.75, rounded up): with it the unloaded fabric latency is 118 / 117 cycles (302 / 300 ns)
/// against the paper's 299.52 / 296.96 ns.
pub const TABLE1_WIRE_CYCLES: u64 = 19;

/// The same 48 ns per hop in 100G block times (0.64 ns).
pub const TABLE1_WIRE_BLOCKS_100G: u64 = 75;

/// 100G block times (0.64 ns) per 2.56 ns prototype cycle.
pub const BLOCKS_PER_CYCLE_100G: u64 = 4;

/// Scheduler cycles per 100G block time for the paper's 3 GHz ASIC scheduler
/// (3 GHz / 1.5625 G blocks/s = 1.92, rounded).
pub const ASIC_SCHED_CLOCK_100G: u32 = 2;

/// The setting of the paper's simulations (EDM §4.3: module latencies and propagation of
/// Table 1, links scaled to 100 Gbps; switch with [`crate::switch::SwitchConfig::paper_timing`]), counted in 100G block times of 0.64 ns: every
/// prototype latency ×4, 75 block times of PMA/PMD and propagation per hop. `asic` runs the
/// scheduler at 3 GHz (2 scheduler cycles per block time, insert 2 and iteration 3 of its own
/// cycles); otherwise it keeps the FPGA prototype's 390.625 MHz clock (insert 8 and iteration
/// 12 block times).
pub fn paper_sim_fabric(ports: usize, asic: bool) -> FabricConfig {
    let mut f = FabricConfig::new(ports);
    f.switch = f.switch.paper_timing();
    let mut lat = crate::timing::Latency::PAPER.scaled(BLOCKS_PER_CYCLE_100G);
    if asic {
        lat.sw_queue_insert = crate::timing::Latency::PAPER.sw_queue_insert;
        lat.sw_pim_iteration = crate::timing::Latency::PAPER.sw_pim_iteration;
        f.switch.sched_clock = ASIC_SCHED_CLOCK_100G;
    }
    f.switch.lat = lat;
    f.host.lat = lat;
    f.wire_cycles = TABLE1_WIRE_BLOCKS_100G;
    f
}

/// One load point to simulate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadConfig {
    /// The fabric (port count, switch and host parameters, wire delay).
    pub fabric: FabricConfig,
    /// Offered load: downlink blocks per cycle per port (an operation puts 11 blocks on
    /// downlinks: RREQ 2 + RRES 9, or /G/ 1 + WREQ 10).
    pub load: f64,
    /// Cycles during which requests are submitted (then the fabric drains).
    pub cycles: u64,
    /// Seed of the arrival process.
    pub seed: u64,
    /// Fraction of operations that are writes (the rest are reads); 0.5 in the paper's
    /// microbenchmark.
    pub write_share: f64,
}

/// Mean latency and its split into stages for one operation type.
#[derive(Debug, Clone, PartialEq)]
pub struct OpStats {
    /// Operations measured.
    pub count: usize,
    /// Mean latency in PHY cycles.
    pub mean: f64,
    /// Mean latency divided by the unloaded latency of the same fabric.
    pub ratio: f64,
    /// Mean cycles per stage (same order as [`READ_STAGES`] / [`WRITE_STAGES`]); they add up
    /// to `mean` for the operations whose every stage was observed.
    pub stages: [f64; 8],
}

/// Result of one load point.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadResult {
    /// Reads: submission to the first response byte written at the requester.
    pub read: OpStats,
    /// Writes: submission to the first byte at the memory node.
    pub write: OpStats,
    /// Unloaded read latency of this fabric, cycles.
    pub unloaded_read: u64,
    /// Unloaded write latency of this fabric, cycles.
    pub unloaded_write: u64,
}

/// The lone operation of the unloaded measurements: a 64 B write or read
/// from host 0 to host 1, address 0.
pub fn probe_request(write: bool) -> Request {
    if write {
        Request::Write {
            dst: 1,
            addr: 0,
            data: vec![5; 64],
        }
    } else {
        Request::Read {
            dst: 1,
            addr: 0,
            len: 64,
            local_addr: 0,
        }
    }
}

/// Unloaded latency (cycles) of one 64 B read and one 64 B write on an otherwise idle fabric
/// with this configuration, measured like the loaded operations.
pub fn unloaded(cfg: &FabricConfig) -> Result<(u64, u64), String> {
    let mut out = [0u64; 2];
    for (i, write) in [false, true].into_iter().enumerate() {
        let mut c = *cfg;
        c.switch.ports = 2;
        let mut f = Fabric::new(c).map_err(|e| e.to_string())?;
        f.hosts[0]
            .submit(0, probe_request(write))
            .map_err(|e| e.to_string())?;
        if !f.run_until_quiet(100_000) {
            return Err("unloaded operation did not finish".into());
        }
        out[i] = if write {
            f.hosts[1].applied.first().map(|a| a.first)
        } else {
            f.hosts[0].completions.first().map(|c| c.first_data)
        }
        .ok_or("unloaded operation produced no result")?;
    }
    Ok((out[0], out[1]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum What {
    Notify,
    Grant,
    Msg(MsgKind),
}

/// Cycles at which a control block with (what, peer, id) passed a tap point, ascending.
type TapIndex = HashMap<(usize, bool, What, u16, u8), Vec<u64>>;

fn index_taps(f: &Fabric) -> TapIndex {
    let mut idx: TapIndex = HashMap::new();
    for t in f.taps.iter().filter(|t| !t.rx) {
        let Some((what, peer, id)) = describe(&t.block) else {
            continue;
        };
        idx.entry((t.link, t.dir == Dir::Up, what, peer, id))
            .or_default()
            .push(t.cycle);
    }
    idx
}

fn describe(b: &Block66) -> Option<(What, u16, u8)> {
    match b.class() {
        BlockClass::Notify => NotifyRepr::parse(b)
            .ok()
            .map(|n| (What::Notify, n.peer, n.id)),
        BlockClass::Grant => GrantRepr::parse(b)
            .ok()
            .map(|g| (What::Grant, g.peer, g.id)),
        BlockClass::Ms | BlockClass::Mst => MsgHeader::parse_payload(b.payload)
            .ok()
            .map(|h| (What::Msg(h.kind), h.peer, h.id)),
        _ => None,
    }
}

/// First time at or after `t` in an ascending list.
fn first_from(v: Option<&Vec<u64>>, t: u64) -> Option<u64> {
    let v = v?;
    v.get(v.partition_point(|&x| x < t)).copied()
}

/// Scheduler events keyed by (grant, src, dst, kind, id), times in scheduler cycles.
type SchedIndex = HashMap<(bool, u16, u16, MsgKind, u8), Vec<u64>>;

fn index_sched(log: &[SchedEvent]) -> SchedIndex {
    let mut idx: SchedIndex = HashMap::new();
    for e in log {
        idx.entry((e.grant, e.src, e.dst, e.kind, e.id))
            .or_default()
            .push(e.at);
    }
    idx
}

/// Simulate one load point; every operation's latency and its stages are measured.
pub fn run(cfg: &LoadConfig) -> Result<LoadResult, String> {
    let ports = cfg.fabric.switch.ports;
    if ports < 2 {
        return Err(format!("load: `ports` must be at least 2, got {ports}"));
    }
    if !(cfg.load > 0.0 && cfg.load <= 1.0) {
        return Err(format!("load: `load` must be in (0, 1], got {}", cfg.load));
    }
    if !(0.0..=1.0).contains(&cfg.write_share) {
        return Err(format!(
            "load: `write_share` must be in [0, 1], got {}",
            cfg.write_share
        ));
    }
    // Half and half draws one bit per operation (as the experiment always has); other mixes
    // compare a 32-bit draw.
    let half = cfg.write_share == 0.5;
    let write_threshold = (cfg.write_share * (1u64 << 32) as f64) as u64;
    let (unloaded_read, unloaded_write) = unloaded(&cfg.fabric)?;
    let mut f = Fabric::new(cfg.fabric).map_err(|e| e.to_string())?;
    f.tap = true;
    f.switch.log = Some(Vec::new());
    let mut rng = Rng::new(cfg.seed);
    let p_op = cfg.load / 11.0;
    let threshold = (p_op * (1u64 << 32) as f64) as u64;
    for now in 0..cfg.cycles {
        for h in 0..ports {
            if rng.below(1 << 32) < threshold {
                let mut dst = rng.below(ports as u64 - 1) as u16;
                if dst >= h as u16 {
                    dst += 1;
                }
                let addr = rng.below(1000) * 64;
                let write = if half {
                    rng.below(2) == 1
                } else {
                    rng.below(1 << 32) < write_threshold
                };
                let req = if !write {
                    Request::Read {
                        dst,
                        addr,
                        len: 64,
                        local_addr: 0,
                    }
                } else {
                    Request::Write {
                        dst,
                        addr,
                        data: vec![1; 64],
                    }
                };
                f.hosts[h].submit(now, req).map_err(|e| e.to_string())?;
            }
        }
        f.tick();
    }
    if !f.run_until_quiet(1_000_000) {
        return Err("load: the fabric did not drain within 1 000 000 cycles".into());
    }
    let taps = index_taps(&f);
    let k = u64::from(cfg.fabric.switch.sched_clock) as f64;
    let sched = index_sched(f.switch.log.as_deref().unwrap_or(&[]));
    let sched_at = |grant: bool, src: u16, dst: u16, kind: MsgKind, id: u8, from: f64| {
        let v = sched.get(&(grant, src, dst, kind, id))?;
        let from_sub = (from * k).ceil() as u64;
        v.get(v.partition_point(|&x| x < from_sub))
            .map(|&x| x as f64 / k)
    };
    let tap = |link: usize, up: bool, what: What, peer: u16, id: u8, t: f64| {
        first_from(taps.get(&(link, up, what, peer, id)), t.floor() as u64).map(|x| x as f64)
    };

    let mut reads = Acc::default();
    let mut writes = Acc::default();
    // Writes complete at the CN when their data leaves; the memory node records arrival.
    let mut write_ops: HashMap<(usize, u16, u8), VecDeque<(u64, u64)>> = HashMap::new();
    for (c, host) in f.hosts.iter().enumerate() {
        let cn = c as u16;
        for op in &host.completions {
            let (m, id) = (op.dst, op.id);
            if !op.result.is_empty() {
                let total = (op.first_data - op.submitted) as f64;
                let q = op.dequeued as f64;
                let t = (|| {
                    let rreq_out = tap(c, true, What::Msg(MsgKind::Rreq), m, id, q)?;
                    let vis = sched_at(false, m, cn, MsgKind::Rres, id, rreq_out)?;
                    let grant = sched_at(true, m, cn, MsgKind::Rres, id, vis)?;
                    let rreq_down =
                        tap(m as usize, false, What::Msg(MsgKind::Rreq), cn, id, grant)?;
                    let rres_up = tap(
                        m as usize,
                        true,
                        What::Msg(MsgKind::Rres),
                        cn,
                        id,
                        rreq_down,
                    )?;
                    let rres_down = tap(c, false, What::Msg(MsgKind::Rres), m, id, rres_up)?;
                    Some([q, rreq_out, vis, grant, rreq_down, rres_up, rres_down])
                })();
                reads.add(total, op.submitted, op.first_data, t);
            } else {
                write_ops
                    .entry((c, m, id))
                    .or_default()
                    .push_back((op.submitted, op.dequeued));
            }
        }
    }
    for (m, host) in f.hosts.iter().enumerate() {
        let mn = m as u16;
        for a in &host.applied {
            let c = a.src as usize;
            let Some((submitted, dequeued)) = write_ops
                .get_mut(&(c, mn, a.id))
                .and_then(|q| q.pop_front())
            else {
                continue;
            };
            let id = a.id;
            let q = dequeued as f64;
            let total = (a.first - submitted) as f64;
            let t = (|| {
                let n_out = tap(c, true, What::Notify, mn, id, q)?;
                let vis = sched_at(false, a.src, mn, MsgKind::Wreq, id, n_out)?;
                let grant = sched_at(true, a.src, mn, MsgKind::Wreq, id, vis)?;
                let g_down = tap(c, false, What::Grant, mn, id, grant)?;
                let w_up = tap(c, true, What::Msg(MsgKind::Wreq), mn, id, g_down)?;
                let w_down = tap(m, false, What::Msg(MsgKind::Wreq), a.src, id, w_up)?;
                Some([q, n_out, vis, grant, g_down, w_up, w_down])
            })();
            writes.add(total, submitted, a.first, t);
        }
    }
    Ok(LoadResult {
        read: reads.finish(unloaded_read),
        write: writes.finish(unloaded_write),
        unloaded_read,
        unloaded_write,
    })
}

#[derive(Default)]
struct Acc {
    n: usize,
    sum: f64,
    staged: usize,
    stages: [f64; 8],
}

impl Acc {
    fn add(&mut self, total: f64, start: u64, end: u64, marks: Option<[f64; 7]>) {
        self.n += 1;
        self.sum += total;
        let Some(m) = marks else { return };
        let mut prev = start as f64;
        for (i, &t) in m.iter().chain([end as f64].iter()).enumerate() {
            self.stages[i] += t - prev;
            prev = t;
        }
        self.staged += 1;
    }

    fn finish(self, unloaded: u64) -> OpStats {
        let mean = self.sum / self.n.max(1) as f64;
        let mut stages = self.stages;
        for s in &mut stages {
            *s /= self.staged.max(1) as f64;
        }
        OpStats {
            count: self.n,
            mean,
            ratio: mean / unloaded as f64,
            stages,
        }
    }
}
