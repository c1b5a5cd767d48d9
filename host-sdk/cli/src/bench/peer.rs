//! The peer: the same sync read/write workload against memcached (get/set
//! over one TCP connection, its text protocol), what a user without this
//! stack would pick, interleaved with the same clio ops over UDP. The
//! benchmark starts memcached on a free loopback port and stops it.

use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clio::{ClientConfig, Session};
use clio_wire::payload::perms;
use serde::Serialize;

use super::latency::{interleave, timed, SIZES};
use super::stats::{ratio, Summary};
use super::svg::{self, Axis};
use super::tcp::{find, LineClient, Server};
use super::{ns_since, Check, Ctx, Outcome, Plot, Ran};
use crate::report::fmt_ns;

/// A memcached text-protocol client on one TCP connection.
struct McClient {
    c: LineClient,
}

impl McClient {
    fn connect(addr: SocketAddr) -> Result<McClient> {
        Ok(McClient {
            c: LineClient::connect("memcached", addr, Duration::from_secs(5))?,
        })
    }

    fn read_line(&mut self) -> Result<&str> {
        self.c.read_line()
    }

    /// `set key 0 0 len` with `data`; expects `STORED`.
    fn set(&mut self, key: &str, data: &[u8]) -> Result<()> {
        let mut req = format!("set {key} 0 0 {}\r\n", data.len()).into_bytes();
        req.extend_from_slice(data);
        req.extend_from_slice(b"\r\n");
        self.c.w.write_all(&req)?;
        match self.read_line()? {
            "STORED" => Ok(()),
            other => bail!("memcached set {key}: answered {other:?}"),
        }
    }

    /// `get key` into `out` (whose length must be the value's).
    fn get(&mut self, key: &str, out: &mut [u8]) -> Result<()> {
        self.c.w.write_all(format!("get {key}\r\n").as_bytes())?;
        let head = self.read_line()?.to_string();
        let len: usize = match head.split(' ').collect::<Vec<_>>()[..] {
            ["VALUE", k, _flags, len] if k == key => len
                .parse()
                .with_context(|| format!("memcached get {key}: bad length in {head:?}"))?,
            ["END"] => bail!("memcached get {key}: not found"),
            _ => bail!("memcached get {key}: answered {head:?}"),
        };
        if len != out.len() {
            bail!("memcached get {key}: {len} bytes, expected {}", out.len());
        }
        self.c.read_bytes(len + 2)?;
        out.copy_from_slice(&self.c.buf[..len]);
        match self.read_line()? {
            "END" => Ok(()),
            other => bail!("memcached get {key}: expected END, got {other:?}"),
        }
    }
}

#[derive(Debug, Serialize)]
struct Row {
    bytes: usize,
    clio_rread: Summary,
    clio_rwrite: Summary,
    memcached_get: Summary,
    memcached_set: Summary,
    /// memcached get p50 / clio rread p50 (above 1: clio is faster).
    get_over_rread: f64,
    /// memcached set p50 / clio rwrite p50.
    set_over_rwrite: f64,
}

#[derive(Debug, Serialize)]
struct Peer {
    memcached: String,
    version: String,
    rows: Vec<Row>,
}

/// Run the memcached comparison (skipped when memcached is not installed).
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let Some(bin) = find("memcached") else {
        return Ok(Ran::Skipped(
            "memcached is not installed (Debian package 'memcached')".into(),
        ));
    };
    let p = &ctx.plan;
    let mc = Server::start(&bin, &|port| {
        [
            "-p",
            &port.to_string(),
            "-U",
            "0",
            "-l",
            "127.0.0.1",
            "-m",
            "64",
        ]
        .iter()
        // Root must name a user to run as; others ignore it.
        .chain(&["-u", "nobody"])
        .map(|s| s.to_string())
        .collect()
    })?;
    let mut c = McClient::connect(mc.addr)?;
    c.c.w.write_all(b"version\r\n")?;
    let version = c.read_line()?.trim_start_matches("VERSION ").to_string();
    let mut s = Session::open(ctx.addr, ClientConfig::from_board(&ctx.cfg))
        .with_context(|| format!("opening a session to {}", ctx.addr))?;
    let span = *SIZES.iter().max().unwrap_or(&4096);
    let al = s.ralloc(span as u64, perms::RW)?;
    let data = vec![0x6bu8; span];
    s.rwrite(al.va, &data)?;
    let keys: Vec<String> = SIZES.iter().map(|n| format!("clio-bench-{n}")).collect();
    for (k, &n) in keys.iter().zip(&SIZES) {
        c.set(k, &data[..n])?;
    }
    let mut buf = vec![0u8; span];
    // Series 4k..4k+3: clio rread, clio rwrite, memcached get, set of SIZES[k].
    let samples = interleave(
        4 * SIZES.len(),
        p.peer_rounds,
        p.peer_batch,
        "memcached",
        |i| {
            let k = i / 4;
            let n = SIZES[k];
            match i % 4 {
                0 => timed(|| s.rread(al.va, &mut buf[..n])),
                1 => timed(|| s.rwrite(al.va, &data[..n])),
                2 => {
                    let t = Instant::now();
                    c.get(&keys[k], &mut buf[..n])?;
                    Ok(Some(ns_since(t)))
                }
                _ => {
                    let t = Instant::now();
                    c.set(&keys[k], &data[..n])?;
                    Ok(Some(ns_since(t)))
                }
            }
        },
    )?;
    s.rfree(al.va, al.size)?;
    let _ = s.close();
    drop(c);
    drop(mc);
    let mut it = samples.into_iter();
    let mut rows = Vec::new();
    for &bytes in &SIZES {
        let mut next = || Summary::of(&mut it.next().unwrap_or_default());
        let (r, w, g, st) = (next(), next(), next(), next());
        rows.push(Row {
            bytes,
            get_over_rread: ratio(g.p50_ns, r.p50_ns),
            set_over_rwrite: ratio(st.p50_ns, w.p50_ns),
            clio_rread: r,
            clio_rwrite: w,
            memcached_get: g,
            memcached_set: st,
        });
    }
    Ok(Ran::Done(Box::new(Peer {
        memcached: bin.display().to_string(),
        version,
        rows,
    })))
}

impl Outcome for Peer {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        // The issue asks for the ratio, not a bar; no target to check.
        Vec::new()
    }

    fn text(&self) -> String {
        let mut o = format!(
            "  memcached {} over one TCP connection (get/set) vs clio over UDP (rread/rwrite), interleaved\n  {:>6} {:>11} {:>11} {:>9} {:>11} {:>11} {:>9}\n",
            self.version, "size", "rread p50", "get p50", "get/rread", "rwrite p50", "set p50", "set/rwr"
        );
        for r in &self.rows {
            o += &format!(
                "  {:>6} {:>11} {:>11} {:>9.2} {:>11} {:>11} {:>9.2}\n",
                format!("{} B", r.bytes),
                fmt_ns(r.clio_rread.p50_ns),
                fmt_ns(r.memcached_get.p50_ns),
                r.get_over_rread,
                fmt_ns(r.clio_rwrite.p50_ns),
                fmt_ns(r.memcached_set.p50_ns),
                r.set_over_rwrite
            );
        }
        o += "  ratio > 1: memcached is slower than clio\n";
        o
    }

    fn plots(&self) -> Vec<Plot> {
        let cats: Vec<String> = self.rows.iter().map(|r| format!("{} B", r.bytes)).collect();
        let pick = |f: fn(&Row) -> f64| self.rows.iter().map(f).collect::<Vec<f64>>();
        vec![Plot {
            file: "peer-memcached.svg".into(),
            svg: svg::bar_chart(
                "clio vs memcached, median sync latency",
                &Axis::linear("p50 latency (µs)"),
                &cats,
                &[
                    ("clio rread".into(), pick(|r| r.clio_rread.p50_ns / 1e3)),
                    (
                        "memcached get".into(),
                        pick(|r| r.memcached_get.p50_ns / 1e3),
                    ),
                    ("clio rwrite".into(), pick(|r| r.clio_rwrite.p50_ns / 1e3)),
                    (
                        "memcached set".into(),
                        pick(|r| r.memcached_set.p50_ns / 1e3),
                    ),
                ],
            ),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A scripted memcached: answers what the protocol says, so the client's
    /// parsing is checked without the daemon.
    fn scripted(replies: &'static [u8]) -> (McClient, std::thread::JoinHandle<Vec<u8>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.write_all(replies).unwrap();
            s.shutdown(std::net::Shutdown::Write).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            got
        });
        (McClient::connect(addr).unwrap(), h)
    }

    #[test]
    fn text_protocol_round_trip() {
        let (mut c, h) = scripted(b"STORED\r\nVALUE k 0 3\r\nabc\r\nEND\r\nEND\r\nNOT_STORED\r\n");
        c.set("k", b"abc").unwrap();
        let mut out = [0u8; 3];
        c.get("k", &mut out).unwrap();
        assert_eq!(&out, b"abc");
        let e = c.get("k", &mut out).unwrap_err().to_string();
        assert!(e.contains("not found"), "{e}");
        let e = c.set("k", b"x").unwrap_err().to_string();
        assert!(e.contains("NOT_STORED"), "{e}");
        drop(c);
        let sent = h.join().unwrap();
        assert_eq!(
            sent,
            b"set k 0 0 3\r\nabc\r\nget k\r\nget k\r\nset k 0 0 1\r\nx\r\n".to_vec()
        );
    }

    #[test]
    fn wrong_length_is_an_error() {
        let (mut c, _h) = scripted(b"VALUE k 0 5\r\nabcde\r\nEND\r\n");
        let mut out = [0u8; 3];
        let e = c.get("k", &mut out).unwrap_err().to_string();
        assert!(e.contains("5 bytes, expected 3"), "{e}");
    }
}
