//! Sync `rread`/`rwrite` latency over UDP next to a bare UDP echo of the
//! same sizes through the same I/O shells: the echo server is the board's
//! own server loop (`clio_emu::spawn`) with an engine that sends each
//! datagram back, and the client is the SDK's `UdpTransport`. What is left
//! between the two is the protocol, the SDK and the board model.
//!
//! The series are interleaved in rounds (each round runs a batch of every
//! series, in a rotating order), so load from other processes falls on all
//! of them alike; one warm-up round is dropped.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clio::backend::{Transport, UdpTransport};
use clio::{ClientConfig, Session};
use clio_emu::{ClientId, Engine, ServeOptions};
use clio_wire::payload::perms;
use serde::Serialize;

use super::stats::{cdf_points, ratio, Proto, Summary};
use super::svg::{self, Axis, Series};
use super::{bar, ns_since, Check, Ctx, Outcome, Plot, Ran};
use crate::report::fmt_ns;

/// Access sizes of the latency and peer benchmarks.
pub const SIZES: [usize; 4] = [16, 64, 1024, 4096];

/// First byte of a floor datagram. It is never a Clio version, so a board
/// sharing the server with the echo never sees one.
const ECHO_MARK: u8 = 0xee;

/// The floor's server: every datagram goes straight back.
struct Echo;

impl Engine for Echo {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        out(from, packet)
    }
    fn poll(&mut self, _out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        None
    }
}

/// An emulated board whose server thread also echoes floor datagrams, so
/// the floor and the board share one thread, socket and CPU placement.
struct BoardWithEcho(clio_emu::Board);

impl Engine for BoardWithEcho {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        if packet.first() == Some(&ECHO_MARK) {
            out(from, packet)
        } else {
            Engine::handle(&mut self.0, from, packet, out)
        }
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.0.poll(out)
    }
    fn start(&mut self) {
        self.0.start()
    }
    fn pump(&mut self, max: usize, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        self.0.pump(max, out)
    }
    fn owed_bytes(&self) -> u64 {
        self.0.owed_bytes()
    }
}

/// Where a UDP benchmark sends: the board's address, an echo client for
/// the floor, and the server both share when the board is emulated here.
pub struct UdpTarget {
    /// The board.
    pub addr: std::net::SocketAddr,
    /// The floor.
    pub echo: EchoClient,
    /// What the floor is: on the board's own server thread, or beside a remote board.
    pub floor: &'static str,
    _server: Option<clio_emu::ServerHandle>,
}

impl UdpTarget {
    /// A fresh emulated board (from the config) answering board requests
    /// and floor echoes on one server thread; with `--addr`, that board
    /// and an echo server of our own on loopback.
    pub fn new(ctx: &Ctx) -> Result<UdpTarget> {
        if !ctx.embedded {
            return Ok(UdpTarget {
                addr: ctx.addr,
                echo: EchoClient::start()?,
                floor: "echo server on loopback (the board is remote)",
                _server: None,
            });
        }
        let board = clio_emu::Board::new(&ctx.cfg).map_err(anyhow::Error::msg)?;
        let server = clio_emu::spawn(
            BoardWithEcho(board),
            "127.0.0.1:0".parse()?,
            ServeOptions::default(),
        )
        .context("starting the emulated board")?;
        let addr = server.addr();
        Ok(UdpTarget {
            addr,
            echo: EchoClient::connect(addr, None)?,
            floor: "echo on the board's own server thread",
            _server: Some(server),
        })
    }
}

/// A bare UDP echo client on the SDK's transport.
pub struct EchoClient {
    t: UdpTransport,
    seq: u64,
    pkt: Vec<u8>,
    buf: Vec<u8>,
    /// Echoes that did not come back within a second (not counted as samples).
    pub lost: u64,
    _server: Option<clio_emu::ServerHandle>,
}

impl EchoClient {
    /// Start an echo server on loopback and connect to it.
    pub fn start() -> Result<EchoClient> {
        let server = clio_emu::spawn(Echo, "127.0.0.1:0".parse()?, ServeOptions::default())
            .context("starting the UDP echo server")?;
        EchoClient::connect(server.addr(), Some(server))
    }

    fn connect(
        addr: std::net::SocketAddr,
        server: Option<clio_emu::ServerHandle>,
    ) -> Result<EchoClient> {
        Ok(EchoClient {
            t: UdpTransport::connect(addr)?,
            seq: 0,
            pkt: Vec::new(),
            buf: vec![0; 65536],
            lost: 0,
            _server: server,
        })
    }

    /// One round trip of a `len`-byte datagram; its time in ns, or None if lost.
    pub fn once(&mut self, len: usize) -> Result<Option<f64>> {
        self.seq += 1;
        let len = len.max(9);
        self.pkt.resize(len, 0xa5);
        self.pkt[0] = ECHO_MARK;
        self.pkt[1..9].copy_from_slice(&self.seq.to_le_bytes());
        let t = Instant::now();
        self.t.send(&self.pkt)?;
        let deadline = t + Duration::from_secs(1);
        loop {
            match self.t.recv(&mut self.buf, deadline)? {
                // A late echo of an earlier, lost datagram: not this one.
                Some(n) if n != len || self.buf[..9] != self.pkt[..9] => continue,
                Some(_) => return Ok(Some(ns_since(t))),
                None => {
                    self.lost += 1;
                    return Ok(None);
                }
            }
        }
    }
}

impl EchoClient {
    /// Keep `depth` datagrams of `len` bytes in flight for `lap`; echoes
    /// per second. A datagram not back within 100 ms counts as lost and
    /// frees its place.
    pub fn pipelined(&mut self, len: usize, depth: usize, lap: Duration) -> Result<f64> {
        self.pkt.resize(len.max(9), 0xa5);
        self.pkt[0] = ECHO_MARK;
        let mut out = 0usize;
        let mut done = 0u64;
        let t = Instant::now();
        while t.elapsed() < lap {
            while out < depth {
                self.t.send(&self.pkt)?;
                out += 1;
            }
            match self
                .t
                .recv(&mut self.buf, Instant::now() + Duration::from_millis(100))?
            {
                Some(_) => {
                    out -= 1;
                    done += 1;
                }
                None => {
                    self.lost += out as u64;
                    out = 0;
                }
            }
        }
        // Take back what is still in flight so later measurements start clean.
        let end = Instant::now() + Duration::from_millis(100);
        while out > 0 && self.t.recv(&mut self.buf, end)?.is_some() {
            out -= 1;
        }
        Ok(done as f64 / t.elapsed().as_secs_f64())
    }
}

impl EchoClient {
    /// One round trip of `len` payload bytes cut into datagrams of at most
    /// `mtu` payload bytes plus a Clio header each, all sent back to back,
    /// until every echo is back: the floor of a multi-packet request.
    pub fn once_split(&mut self, len: usize, mtu: usize) -> Result<Option<f64>> {
        self.seq += 1;
        let hdr = clio_wire::clio::HEADER_LEN;
        let parts = len.div_ceil(mtu.max(1)).max(1);
        let tag = self.seq.to_le_bytes();
        let t = Instant::now();
        for i in 0..parts {
            let n = hdr + mtu.min(len - i * mtu);
            self.pkt.resize(n.max(9), 0xa5);
            self.pkt[0] = ECHO_MARK;
            self.pkt[1..9].copy_from_slice(&tag);
            self.t.send(&self.pkt)?;
        }
        let deadline = t + Duration::from_secs(1);
        let mut got = 0;
        while got < parts {
            match self.t.recv(&mut self.buf, deadline)? {
                Some(n) if n >= 9 && self.buf[1..9] == tag => got += 1,
                Some(_) => continue,
                None => {
                    self.lost += 1;
                    return Ok(None);
                }
            }
        }
        Ok(Some(ns_since(t)))
    }
}

/// Run each of `series` ops `batch` times per round for `rounds` rounds
/// after one warm-up round, rotating the order; `op(i)` runs series `i`
/// once and returns its time (None: no sample). Samples per series.
pub fn interleave(
    series: usize,
    rounds: usize,
    batch: usize,
    label: &str,
    mut op: impl FnMut(usize) -> Result<Option<f64>>,
) -> Result<Vec<Vec<f64>>> {
    let mut out = vec![Vec::with_capacity(rounds * batch); series];
    let pb = bar((rounds + 1) as u64, label);
    for round in 0..=rounds {
        for k in 0..series {
            let i = (k + round) % series;
            for _ in 0..batch {
                let t = op(i)?;
                if let (Some(t), true) = (t, round > 0) {
                    out[i].push(t);
                }
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(out)
}

/// Time one call in ns.
pub fn timed(f: impl FnOnce() -> Result<(), clio::ClioError>) -> Result<Option<f64>> {
    let t = Instant::now();
    f()?;
    Ok(Some(ns_since(t)))
}

/// What one latency series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Echo,
    EchoMtu,
    Read,
    Write,
}

/// One access size.
#[derive(Debug, Serialize)]
struct Row {
    bytes: usize,
    /// Bare UDP echo of `bytes + 40` (a Clio header) each way.
    echo: Summary,
    rread: Summary,
    rwrite: Summary,
    /// rread p50 / echo p50.
    rread_p50_over_floor: f64,
    /// rwrite p50 / echo p50.
    rwrite_p50_over_floor: f64,
    /// Sizes above the MTU: the echo cut into MTU-sized datagrams as the
    /// SDK cuts a write (each way), the floor of a multi-packet access.
    #[serde(skip_serializing_if = "Option::is_none")]
    echo_mtu: Option<Summary>,
    /// rread p50 / MTU-cut echo p50.
    #[serde(skip_serializing_if = "Option::is_none")]
    rread_p50_over_mtu_floor: Option<f64>,
    /// rwrite p50 / MTU-cut echo p50.
    #[serde(skip_serializing_if = "Option::is_none")]
    rwrite_p50_over_mtu_floor: Option<f64>,
    /// rread p99 / echo p99 (the floor's own tail is this machine's).
    rread_p99_over_floor_p99: f64,
    /// rwrite p99 / echo p99.
    rwrite_p99_over_floor_p99: f64,
    /// Sorted samples of echo, rread, rwrite (and the MTU-cut echo).
    #[serde(skip)]
    sorted: Vec<Vec<f64>>,
}

#[derive(Debug, Serialize)]
struct Latency {
    target: String,
    floor: &'static str,
    /// Payload bytes per packet (the board's MTU).
    mtu_payload: usize,
    rows: Vec<Row>,
    echo_lost: u64,
    /// The SDK session's counters over the run.
    proto: Proto,
}

/// Run the latency benchmark.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let target = UdpTarget::new(ctx)?;
    let mut echo = target.echo;
    let mut s = Session::open(target.addr, ClientConfig::from_board(&ctx.cfg))
        .with_context(|| format!("opening a session to {}", target.addr))?;
    let span = *SIZES.iter().max().unwrap_or(&4096) as u64;
    let al = s.ralloc(span, perms::RW)?;
    // Map the page first: every measured access is a TLB hit.
    s.rwrite(al.va, &vec![1u8; span as usize])?;
    let data = vec![0x5au8; span as usize];
    let mut buf = vec![0u8; span as usize];
    let hdr = clio_wire::clio::HEADER_LEN;
    let mtu = ctx.cfg.network.mtu_payload as usize;
    // Every (size, kind) series; the MTU-cut echo only where it differs.
    let mut series: Vec<(usize, Kind)> = Vec::new();
    for &n in &SIZES {
        series.extend([(n, Kind::Echo), (n, Kind::Read), (n, Kind::Write)]);
        if n > mtu {
            series.push((n, Kind::EchoMtu));
        }
    }
    let samples = interleave(series.len(), p.lat_rounds, p.lat_batch, "latency", |i| {
        let (n, kind) = series[i];
        match kind {
            Kind::Echo => echo.once(n + hdr),
            Kind::EchoMtu => echo.once_split(n, mtu),
            Kind::Read => timed(|| s.rread(al.va, &mut buf[..n])),
            Kind::Write => timed(|| s.rwrite(al.va, &data[..n])),
        }
    })?;
    let proto = Proto::from(s.connection().stats());
    s.rfree(al.va, al.size)?;
    let _ = s.close();
    let mut rows = Vec::new();
    for &bytes in &SIZES {
        let take = |k: Kind| -> Option<(Summary, Vec<f64>)> {
            let i = series.iter().position(|&x| x == (bytes, k))?;
            let mut v = samples[i].clone();
            Some((Summary::of(&mut v), v))
        };
        let (Some((echo_s, e)), Some((rread, r)), Some((rwrite, w))) =
            (take(Kind::Echo), take(Kind::Read), take(Kind::Write))
        else {
            bail!("latency: missing series at {bytes} B");
        };
        let split = take(Kind::EchoMtu);
        let mut sorted = vec![e, r, w];
        let echo_mtu = split.map(|(sum, v)| {
            sorted.push(v);
            sum
        });
        rows.push(Row {
            bytes,
            echo: echo_s,
            rread,
            rwrite,
            rread_p50_over_floor: ratio(rread.p50_ns, echo_s.p50_ns),
            rwrite_p50_over_floor: ratio(rwrite.p50_ns, echo_s.p50_ns),
            echo_mtu,
            rread_p50_over_mtu_floor: echo_mtu.map(|m| ratio(rread.p50_ns, m.p50_ns)),
            rwrite_p50_over_mtu_floor: echo_mtu.map(|m| ratio(rwrite.p50_ns, m.p50_ns)),
            rread_p99_over_floor_p99: ratio(rread.p99_ns, echo_s.p99_ns),
            rwrite_p99_over_floor_p99: ratio(rwrite.p99_ns, echo_s.p99_ns),
            sorted,
        });
    }
    Ok(Ran::Done(Box::new(Latency {
        target: target.addr.to_string(),
        floor: target.floor,
        mtu_payload: mtu,
        rows,
        echo_lost: echo.lost,
        proto,
    })))
}

impl Outcome for Latency {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        let mut c = Vec::new();
        for r in &self.rows {
            for (op, s, over) in [
                ("rread", &r.rread, r.rread_p50_over_floor),
                ("rwrite", &r.rwrite, r.rwrite_p50_over_floor),
            ] {
                c.push(Check::at_most(
                    format!("{op} {} B p50 / UDP echo p50", r.bytes),
                    over,
                    1.5,
                ));
                c.push(Check::at_most(
                    format!("{op} {} B p99 / p50", r.bytes),
                    s.tail(),
                    2.0,
                ));
            }
        }
        c
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  sync over UDP to {} vs a bare UDP echo of header + size each way ({})\n  {:>6}  {:<7} {:>10} {:>10} {:>10} {:>8} {:>9}\n",
            self.target, self.floor, "size", "series", "p50", "p99", "p99.9", "p99/p50", "p50/floor"
        );
        for r in &self.rows {
            let mut lines = vec![
                ("echo", &r.echo, 1.0),
                ("rread", &r.rread, r.rread_p50_over_floor),
                ("rwrite", &r.rwrite, r.rwrite_p50_over_floor),
            ];
            if let Some(m) = &r.echo_mtu {
                lines.push(("echo/MTU", m, ratio(m.p50_ns, r.echo.p50_ns)));
            }
            for (name, s, over) in lines {
                o += &format!(
                    "  {:>6}  {:<7} {:>10} {:>10} {:>10} {:>8.2} {:>9.2}\n",
                    format!("{} B", r.bytes),
                    name,
                    fmt_ns(s.p50_ns),
                    fmt_ns(s.p99_ns),
                    fmt_ns(s.p999_ns),
                    s.tail(),
                    over
                );
            }
        }
        for r in &self.rows {
            if let (Some(a), Some(b)) = (r.rread_p50_over_mtu_floor, r.rwrite_p50_over_mtu_floor) {
                o += &format!(
                    "  echo/MTU at {} B: the echo cut into {} B packets each way, as the SDK cuts a write; rread p50 / it = {a:.2}, rwrite p50 / it = {b:.2}\n",
                    r.bytes, self.mtu_payload
                );
            }
        }
        o += &format!(
            "  {} samples per series; {} echo(es) lost; SDK: {}\n",
            self.rows.first().map_or(0, |r| r.rread.n),
            self.echo_lost,
            self.proto
        );
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let mut out = Vec::new();
        for r in &self.rows {
            let names = [
                "UDP echo (floor)",
                "rread",
                "rwrite",
                "UDP echo in MTU packets",
            ];
            let series: Vec<Series> = names
                .iter()
                .zip(&r.sorted)
                .enumerate()
                .map(|(i, (n, v))| Series {
                    name: (*n).into(),
                    points: cdf_points(v, 400)
                        .into_iter()
                        .map(|(x, y)| (x / 1e3, y))
                        .collect(),
                    dashed: i == 0 || i == 3,
                })
                .collect();
            out.push(Plot {
                file: format!("latency-cdf-{}B.svg", r.bytes),
                svg: svg::line_chart(
                    &format!("Sync latency CDF, {} B, UDP loopback", r.bytes),
                    &Axis::log("latency (µs)"),
                    &Axis::linear("fraction of requests"),
                    &series,
                    true,
                ),
            });
        }
        let cats: Vec<String> = self.rows.iter().map(|r| format!("{} B", r.bytes)).collect();
        let pick = |f: fn(&Row) -> f64| self.rows.iter().map(f).collect::<Vec<f64>>();
        out.push(Plot {
            file: "latency-p50.svg".into(),
            svg: svg::bar_chart(
                "Median sync latency by size",
                &Axis::linear("p50 latency (µs)"),
                &cats,
                &[
                    ("UDP echo (floor)".into(), pick(|r| r.echo.p50_ns / 1e3)),
                    ("rread".into(), pick(|r| r.rread.p50_ns / 1e3)),
                    ("rwrite".into(), pick(|r| r.rwrite.p50_ns / 1e3)),
                ],
            ),
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_rotates_and_drops_the_warm_up() {
        let mut order = Vec::new();
        let got = interleave(3, 2, 2, "t", |i| {
            order.push(i);
            Ok(Some(i as f64))
        })
        .unwrap();
        // Warm-up round 0 (0,1,2), then rounds starting at 1 and 2.
        assert_eq!(
            order,
            [0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1]
        );
        assert_eq!(got, vec![vec![0.0; 4], vec![1.0; 4], vec![2.0; 4]]);
        // A None is no sample; an error stops the run.
        let none = interleave(1, 1, 3, "t", |_| Ok(None)).unwrap();
        assert!(none[0].is_empty());
        assert!(interleave(1, 1, 1, "t", |_| bail!("boom")).is_err());
    }

    #[test]
    fn echo_round_trips() {
        let mut e = EchoClient::start().unwrap();
        for len in [8, 56, 4136] {
            let t = e.once(len).unwrap().expect("echo on loopback");
            assert!(t > 0.0);
        }
        // 4096 B in 1450 B packets: three datagrams out, all three back.
        assert!(e.once_split(4096, 1450).unwrap().is_some());
        assert!(e.once_split(16, 1450).unwrap().is_some());
        // Nothing left over: the next single echo matches its own datagram.
        assert!(e.once(64).unwrap().is_some());
        assert_eq!(e.lost, 0);
    }
}
