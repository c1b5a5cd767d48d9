//! `clio bench edm`: Clio requests over the EDM fabric in model time (issue #15).
//!
//! Runs the card translator, the EDM fabric and memory-node front ends of
//! `edm-clio` (cycle models, 2.56 ns per cycle) with a memory node that answers
//! at once (its own service time is the Clio fast path's, measured by
//! `clio bench --only fault`), so every nanosecond reported is the card's and the
//! fabric's:
//! - unloaded 64 B READ and WRITE, one at a time: total, and the legs (the
//!   request record's WREQ leaving the card; then for a READ the RREQ/RRES round
//!   trip, for a WRITE the record's arrival and the answer's WREQ back). EDM's
//!   links here have no transceiver or cable; Table 1 adds 192 ns for those per
//!   EDM operation (`LinkPhysical::TABLE1`), and the report adds it alike.
//! - loaded: 8 cards, 2 memory nodes (cards 4:1 on each node), 64 B READs and
//!   WRITEs half and half, Poisson arrivals; `load` is the offered share of a
//!   memory node's link (blocks per cycle); mean and p99 latency per load and
//!   their ratio to unloaded.

use anyhow::Result;
use clap::Args;
use clio_wire::clio::HEADER_LEN;
use clio_wire::{Header, Opcode, Status};
use edm::timing::{LinkPhysical, CYCLE_NS};
use edm_clio::{Answer, ClioFabric, ClioFabricConfig, MemoryNode};
use edm_sim::ethernet::{EthernetConfig, Op};
use serde::Serialize;

/// Options of `clio bench edm`.
#[derive(Debug, Args)]
pub struct EdmArgs {
    /// Fewer operations (CI smoke run).
    #[arg(long)]
    pub quick: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Seed of the arrival process.
    #[arg(long, default_value_t = 15)]
    pub seed: u64,
    /// Also measure the host-side cost of a 64 B sync read over the XDMA backend
    /// (software card on stand-in files, the board answering in the card's
    /// thread) against the UDP backend (the same board behind loopback UDP).
    #[arg(long)]
    pub host_cost: bool,
}

#[derive(Debug, Serialize)]
struct HostCost {
    reads: usize,
    udp_median_us: f64,
    xdma_median_us: f64,
    xdma_over_udp: f64,
}

fn median_read_us<T: clio::backend::Transport>(
    t: T,
    cfg: &clio_config::BoardConfig,
    n: usize,
) -> Result<f64> {
    let mut s = clio::Session::open_with(t, clio::ClientConfig::from_board(cfg))?;
    let a = s.ralloc(4096, clio_wire::payload::perms::RW)?;
    let mut b = [0u8; 64];
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = std::time::Instant::now();
        s.rread(a.va, &mut b)?;
        v.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[n / 2])
}

fn host_cost(n: usize) -> Result<HostCost> {
    let cfg = clio_config::BoardConfig::embedded("emulator").map_err(anyhow::Error::new)?;
    let board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(
        board,
        "127.0.0.1:0".parse()?,
        clio_emu::ServeOptions::for_board(&cfg),
    )?;
    let udp = median_read_us(
        clio::backend::UdpTransport::connect(server.addr())?,
        &cfg,
        n,
    )?;
    drop(server);
    let dir = std::env::temp_dir().join(format!("clio-bench-edm-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let r = (|| -> Result<f64> {
        let card =
            clio_xdma::FileCard::create(&dir, "xdma0", clio_xdma::FileCard::DEFAULT_GEOMETRY)?;
        let prefix = card.prefix().to_path_buf();
        let mut board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
        let th = card.spawn(move |p: &[u8], out: &mut dyn FnMut(&[u8])| {
            board.handle(1, p, &mut |_, a| out(a));
        });
        let x = median_read_us(clio_xdma::XdmaLink::open(&prefix)?, &cfg, n);
        th.stop()?;
        x
    })();
    let _ = std::fs::remove_dir_all(&dir);
    let xdma = r?;
    Ok(HostCost {
        reads: n,
        udp_median_us: udp,
        xdma_median_us: xdma,
        xdma_over_udp: xdma / udp,
    })
}

/// Answers a READ with the bytes asked for and anything else with a bare answer, at once.
struct Instant0;

impl MemoryNode for Instant0 {
    fn handle(&mut self, _from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8])) {
        let Ok(p) = clio_wire::Packet::new_checked(packet) else {
            return;
        };
        let Ok(h) = Header::parse_verified(&p) else {
            return;
        };
        let body = if h.opcode == Opcode::Read {
            vec![0xa5; h.total_len as usize]
        } else {
            Vec::new()
        };
        let Some(op) = h.opcode.response() else {
            return;
        };
        let r = Header {
            opcode: op,
            status: Status::Ok,
            payload_len: body.len() as u16,
            key: 0,
            ack: 0,
            ..h
        };
        let mut b = vec![0u8; HEADER_LEN + body.len()];
        if let Ok(n) = r.emit_with_payload(&mut b, &body) {
            out(&b[..n]);
        }
    }
}

/// A session-1 READ or 64 B WRITE request (`encode` sets the payload
/// length from the payload and fails only on one over 64 KiB).
fn packet(read: bool, req_id: u32) -> Result<Vec<u8>> {
    let (op, payload): (Opcode, &[u8]) = if read {
        (Opcode::Read, &[])
    } else {
        (Opcode::Write, &[0x5a; 64])
    };
    let h = Header {
        session: 1,
        ..Header::request(op, 1, req_id, 0x10_0000, 64)
    };
    h.encode(payload)
        .map_err(|e| anyhow::anyhow!("request: {e}"))
}

#[derive(Debug, Serialize, Clone, Copy)]
struct Unloaded {
    op: &'static str,
    samples: usize,
    /// Card + fabric, links without transceivers or cable.
    total_ns: f64,
    /// Request record's WREQ from submission until its last chunk left the card.
    record_ns: f64,
    /// The rest: READ the RREQ/RRES round trip, WRITE the record's arrival and the answer back.
    rest_ns: f64,
    /// EDM operations on the path (READ: WREQ + RREQ/RRES; WRITE: WREQ + WREQ back).
    edm_operations: u32,
    /// With Table 1's transceivers and cables (192 ns per EDM operation).
    total_with_physical_ns: f64,
}

/// One load point of one fabric.
#[derive(Debug, Serialize, Clone, Copy)]
struct Loaded {
    load: f64,
    ops: usize,
    mean_ns: f64,
    p99_ns: f64,
    mean_over_unloaded: f64,
    p99_over_unloaded: f64,
    /// EDM: mean from submission until the request record's WREQ completed (the card's
    /// queue for a slot and X, the /N/ → /G/ wait, the record's chunks). Ethernet: 0.
    record_mean_ns: f64,
    /// EDM: mean wait for one of the card's `SLOTS` request slots, inside the above.
    /// Ethernet: 0 (no limit on requests in flight).
    slot_wait_mean_ns: f64,
    /// Mean without the slot wait, over unloaded: what the fabric itself adds.
    fabric_mean_over_unloaded: f64,
    /// Busiest link's utilization: EDM `load` (a memory node's downlink, blocks), Ethernet
    /// the same link's share of wire bytes (frames, preamble, gap) for the same operations.
    link_utilization: f64,
    /// Requests never answered (their card slot timed out); left out of the statistics.
    lost: usize,
    /// Answers or records the cards and nodes refused (`edm_clio::Counters::bad_records`).
    bad_records: usize,
}

/// One fabric setting: its unloaded latencies and its loaded points.
#[derive(Debug, Serialize)]
struct Setting {
    name: &'static str,
    /// Unloaded 64 B read / write in this setting, measured as under load, ns.
    unloaded_read_ns: f64,
    unloaded_write_ns: f64,
    loaded: Vec<Loaded>,
}

/// `clio bench edm`'s report: `Display` is the text, `Serialize` the
/// `--json` form.
#[derive(Debug, Serialize)]
pub struct Report {
    table1_read_ns: f64,
    table1_write_ns: f64,
    unloaded: Vec<Unloaded>,
    /// Same arrivals (8 cards → 2 memory nodes, 64 B reads and writes half and half,
    /// Poisson) through each setting, side by side.
    settings: Vec<Setting>,
    host_cost: Option<HostCost>,
}

fn ns(c: f64) -> f64 {
    c * CYCLE_NS
}

/// The EDM fabric settings compared under load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdmSetting {
    /// `ClioFabricConfig::new` as the rack runs it: the default switch (forwarded data ahead
    /// of grants, `release_slack`), links without transceivers or cable.
    Rack,
    /// The paper's: `SwitchConfig::paper_timing` (EDM §3.1.1 step 7) and Table 1's PMA/PMD
    /// and propagation on every hop (19 cycles), so the unloaded latency is Table 1's fabric
    /// latency, as the paper normalizes.
    Paper,
    /// As `Paper` but the switch keeps forwarded data ahead of its grants (`grants_first`
    /// off), so an implicit-grant RREQ never overtakes the card's record WREQ to the node.
    PaperInOrder,
}

fn config(cards: usize, nodes: usize, s: EdmSetting) -> ClioFabricConfig {
    let mut c = ClioFabricConfig::new(cards, nodes);
    if s != EdmSetting::Rack {
        c.fabric.switch = c.fabric.switch.paper_timing();
        c.fabric.switch.grants_first = s == EdmSetting::Paper;
        c.fabric.wire_cycles = edm::load::TABLE1_WIRE_CYCLES;
    }
    c
}

fn unloaded_in(read: bool, n: usize, s: EdmSetting) -> Result<(u64, u64)> {
    let mut f = ClioFabric::new(config(1, 1, s), vec![Instant0]).map_err(anyhow::Error::msg)?;
    let (mut tot, mut rec) = (0u64, 0u64);
    for i in 0..n {
        f.submit(0, &packet(read, i as u32 + 1)?)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if !f.run_until_idle(1_000_000) {
            anyhow::bail!(
                "unloaded {}: no answer",
                if read { "read" } else { "write" }
            );
        }
        let a: Vec<Answer> = f.take_answers();
        let a = a.first().ok_or_else(|| anyhow::anyhow!("no answer"))?;
        tot += a.answered - a.submitted;
        rec += a.record_sent - a.submitted;
    }
    Ok((tot, rec))
}

fn unloaded(read: bool, n: usize) -> Result<Unloaded> {
    let (tot, rec) = unloaded_in(read, n, EdmSetting::Rack)?;
    let phys = LinkPhysical::TABLE1.added_ns(4).total_ns();
    let total_ns = ns(tot as f64 / n as f64);
    Ok(Unloaded {
        op: if read { "read64" } else { "write64" },
        samples: n,
        total_ns,
        record_ns: ns(rec as f64 / n as f64),
        rest_ns: ns((tot - rec) as f64 / n as f64),
        edm_operations: 2,
        total_with_physical_ns: total_ns + 2.0 * phys,
    })
}

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Blocks a 64 B operation puts on a memory node's downlink, averaged over READ
/// and WRITE (the request record's WREQ: 8-byte address + record; a READ adds its RREQ).
fn node_blocks_per_op() -> f64 {
    let rec = |payload: usize| {
        clio_wire::edm::message_blocks(
            8 + clio_wire::edm_clio::RECORD_HEADER + HEADER_LEN + payload,
        ) as f64
    };
    (rec(0) + 2.0 + rec(64)) / 2.0
}

const CARDS: usize = 8;
const NODES: usize = 2;

/// One operation of the offered traffic: arrival (cycles), card, READ or WRITE.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    at: f64,
    card: usize,
    read: bool,
}

/// Poisson arrivals per card at `load` (the offered share of a memory node's downlink in EDM
/// blocks; four cards share each node), in arrival order.
fn arrivals(load: f64, ops: usize, seed: u64) -> Vec<Arrival> {
    let per_card = load / node_blocks_per_op() / (CARDS / NODES) as f64;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut next: Vec<f64> = (0..CARDS).map(|_| -rng.unit().ln() / per_card).collect();
    let mut v = Vec::with_capacity(ops);
    while v.len() < ops {
        let (card, &at) = next
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((0, &0.0));
        v.push(Arrival {
            at,
            card,
            read: rng.unit() < 0.5,
        });
        next[card] += -rng.unit().ln() / per_card;
    }
    v
}

/// Mean and p99 of `lat` (ns) after the first tenth (warm-up), with `base` the unloaded
/// latency of each operation.
fn summarize(load: f64, lat: &[(f64, f64, f64, f64)], util: f64) -> Loaded {
    let lat: Vec<(f64, f64, f64, f64)> = lat[lat.len() / 10..]
        .iter()
        .copied()
        .filter(|l| !l.0.is_nan())
        .collect();
    let mut v: Vec<f64> = lat.iter().map(|l| l.0).collect();
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let p99 = v[(v.len() * 99).div_ceil(100) - 1];
    let base = lat.iter().map(|l| l.1).sum::<f64>() / lat.len() as f64;
    Loaded {
        load,
        ops: v.len(),
        mean_ns: mean,
        p99_ns: p99,
        mean_over_unloaded: mean / base,
        p99_over_unloaded: p99 / base,
        record_mean_ns: lat.iter().map(|l| l.2).sum::<f64>() / lat.len() as f64,
        slot_wait_mean_ns: lat.iter().map(|l| l.3).sum::<f64>() / lat.len() as f64,
        fabric_mean_over_unloaded: (mean - lat.iter().map(|l| l.3).sum::<f64>() / lat.len() as f64)
            / base,
        link_utilization: util,
        lost: 0,
        bad_records: 0,
    }
}

fn loaded_edm(
    load: f64,
    arr: &[Arrival],
    s: EdmSetting,
    unloaded_ns: (f64, f64),
) -> Result<Loaded> {
    let mut cfg = config(CARDS, NODES, s);
    // Lost answers (see `lost`) should not hold a card slot for long.
    cfg.slot_timeout = 50_000;
    let mut f =
        ClioFabric::new(cfg, (0..NODES).map(|_| Instant0).collect()).map_err(anyhow::Error::msg)?;
    // Answers come back out of order: index them by request id (the submission order).
    let mut lat = vec![(f64::NAN, 0.0, 0.0, 0.0); arr.len()];
    let (mut sent, mut got) = (0usize, 0usize);
    while got < arr.len() {
        let now = f.now() as f64;
        while sent < arr.len() && arr[sent].at <= now {
            let a = arr[sent];
            f.submit(a.card, &packet(a.read, sent as u32 + 1)?)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            sent += 1;
        }
        f.step();
        for a in f.take_answers() {
            let id = clio_wire::Packet::new_checked(&a.packet[..])
                .ok()
                .and_then(|p| Header::parse_verified(&p).ok())
                .map(|h| h.req_id as usize)
                .ok_or_else(|| anyhow::anyhow!("load {load}: an answer without a valid header"))?;
            let i = id
                .checked_sub(1)
                .filter(|&i| i < arr.len())
                .ok_or_else(|| anyhow::anyhow!("load {load}: answer to unknown request {id}"))?;
            let base = if a.read { unloaded_ns.0 } else { unloaded_ns.1 };
            lat[i] = (
                ns((a.answered - a.submitted) as f64),
                base,
                ns((a.record_sent - a.submitted) as f64),
                ns((a.issued - a.submitted) as f64),
            );
            got += 1;
        }
        // A request whose answer was lost frees its card slot at the timeout: stop when
        // everything was sent and nothing is left at the cards.
        if sent == arr.len() && f.outstanding() == 0 {
            break;
        }
        if f.now() > 50_000_000 {
            anyhow::bail!(
                "load {load}: {got} of {} answered after 50M cycles",
                arr.len()
            );
        }
    }
    let mut l = summarize(load, &lat, load);
    l.lost = f.counters.timeouts as usize;
    l.bad_records = f.counters.bad_records as usize;
    Ok(l)
}

/// Clio packet bytes of a 64 B READ/WRITE request and of its answer.
fn clio_bytes(read: bool) -> (usize, usize) {
    if read {
        (HEADER_LEN, HEADER_LEN + 64)
    } else {
        (HEADER_LEN + 64, HEADER_LEN)
    }
}

fn loaded_ethernet(load: f64, arr: &[Arrival], unloaded_ns: (f64, f64)) -> Loaded {
    let cfg = EthernetConfig::TABLE1;
    let ops: Vec<Op> = arr
        .iter()
        .map(|a| {
            let (request_bytes, answer_bytes) = clio_bytes(a.read);
            Op {
                at_ns: ns(a.at),
                card: a.card,
                node: CARDS + a.card % NODES,
                request_bytes,
                answer_bytes,
            }
        })
        .collect();
    let out = edm_sim::ethernet::run(&cfg, CARDS + NODES, &ops);
    let lat: Vec<(f64, f64, f64, f64)> = arr
        .iter()
        .zip(out)
        .map(|(a, l)| {
            (
                l,
                if a.read { unloaded_ns.0 } else { unloaded_ns.1 },
                0.0,
                0.0,
            )
        })
        .collect();
    // The node downlink carries the same operations' requests as frames.
    let per_op_ns = (cfg.wire_ns(clio_bytes(true).0) + cfg.wire_ns(clio_bytes(false).0)) / 2.0;
    let ops_per_ns = load / node_blocks_per_op() / CYCLE_NS;
    summarize(load, &lat, ops_per_ns * per_op_ns)
}

fn ethernet_unloaded(read: bool) -> f64 {
    let (request_bytes, answer_bytes) = clio_bytes(read);
    let op = Op {
        at_ns: 0.0,
        card: 0,
        node: 1,
        request_bytes,
        answer_bytes,
    };
    edm_sim::ethernet::run(&EthernetConfig::TABLE1, 2, &[op])[0]
}

/// Runs `clio bench edm`; the caller prints the report.
pub fn run(a: &EdmArgs) -> Result<Report> {
    let n = if a.quick { 20 } else { 200 };
    let ops = if a.quick { 500 } else { 5000 };
    let r = unloaded(true, n)?;
    let w = unloaded(false, n)?;
    let mut rep = Report {
        table1_read_ns: 299.52,
        table1_write_ns: 296.96,
        unloaded: vec![r, w],
        settings: Vec::new(),
        host_cost: None,
    };
    if a.host_cost {
        rep.host_cost = Some(host_cost(if a.quick { 200 } else { 2000 })?);
    }
    let loads = [0.2, 0.4, 0.6, 0.8, 0.9];
    let traffic: Vec<Vec<Arrival>> = loads.iter().map(|&l| arrivals(l, ops, a.seed)).collect();
    for (name, s) in [
        (
            "edm (rack: default switch, no transceivers/cable)",
            EdmSetting::Rack,
        ),
        (
            "edm (paper: paper_timing switch, Table 1 PMA/PMD + propagation)",
            EdmSetting::Paper,
        ),
        (
            "edm (paper, grants behind forwarded data: no slack, Table 1 PMA/PMD + propagation)",
            EdmSetting::PaperInOrder,
        ),
    ] {
        let u = |read| -> Result<f64> {
            let (tot, _) = unloaded_in(read, n, s)?;
            Ok(ns(tot as f64 / n as f64))
        };
        let base = (u(true)?, u(false)?);
        let mut set = Setting {
            name,
            unloaded_read_ns: base.0,
            unloaded_write_ns: base.1,
            loaded: Vec::new(),
        };
        for (&load, arr) in loads.iter().zip(&traffic) {
            set.loaded.push(loaded_edm(load, arr, s, base)?);
        }
        rep.settings.push(set);
    }
    let base = (ethernet_unloaded(true), ethernet_unloaded(false));
    rep.settings.push(Setting {
        name: "udp/ipv4 over a store-and-forward ethernet switch (Table 1 raw Ethernet latencies, 25G)",
        unloaded_read_ns: base.0,
        unloaded_write_ns: base.1,
        loaded: loads
            .iter()
            .zip(&traffic)
            .map(|(&load, arr)| loaded_ethernet(load, arr, base))
            .collect(),
    });
    Ok(rep)
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rep = self;
        writeln!(f, "clio bench edm: Clio over the EDM fabric, model time (2.56 ns cycles), memory node answering at once")?;
        for u in &rep.unloaded {
            writeln!(
                f,
                "  unloaded {:<8} {:>7.2} ns = record WREQ {:>7.2} + rest {:>7.2}; {} EDM operations, {:>7.2} ns with Table 1's physical share (Table 1 per EDM operation: read {:.2}, write {:.2})",
                u.op, u.total_ns, u.record_ns, u.rest_ns, u.edm_operations, u.total_with_physical_ns, rep.table1_read_ns, rep.table1_write_ns
            )?;
        }
        writeln!(f, "  loaded: 8 cards -> 2 memory nodes, 64 B reads/writes half and half, Poisson, the same arrivals in every setting")?;
        for s in &rep.settings {
            writeln!(
                f,
                "  {}: unloaded read {:.2} ns, write {:.2} ns",
                s.name, s.unloaded_read_ns, s.unloaded_write_ns
            )?;
            for l in &s.loaded {
                writeln!(
                    f,
                    "    load {:.1}: mean {:>9.2} ns ({:>6.2}x unloaded), p99 {:>9.2} ns ({:>6.2}x), record leg {:>8.2} ns (card slot wait {:>8.2}; without it {:.2}x), busiest link {:>4.2}, {} ops, {} lost",
                    l.load, l.mean_ns, l.mean_over_unloaded, l.p99_ns, l.p99_over_unloaded, l.record_mean_ns, l.slot_wait_mean_ns, l.fabric_mean_over_unloaded, l.link_utilization, l.ops, l.lost
                )?;
            }
        }
        if let Some(h) = &rep.host_cost {
            writeln!(
                f,
                "  host side, 64 B sync read, median of {}: XDMA backend (software card on stand-in files) {:.1} us, UDP backend (loopback) {:.1} us: {:.2}x",
                h.reads, h.xdma_median_us, h.udp_median_us, h.xdma_over_udp
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::packet;
    use clio_wire::clio::HEADER_LEN;
    use clio_wire::{Header, Opcode, Packet};

    /// The requests the fabric benches submit parse back as sent.
    #[test]
    fn requests_parse_back() {
        for (read, op, len) in [(true, Opcode::Read, 0), (false, Opcode::Write, 64)] {
            let b = packet(read, 9).unwrap();
            assert_eq!(b.len(), HEADER_LEN + len);
            let h = Header::parse_verified(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            assert_eq!(
                (h.opcode, h.payload_len as usize, h.session, h.req_id),
                (op, len, 1, 9)
            );
        }
    }
}
