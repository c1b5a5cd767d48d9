//! `clio bringup`: lab bring-up checks against a board, as a pass/fail table.
//!
//! Identity, link MTU, a walking-pattern memory test through
//! ralloc/rwrite/rread, the page-fault path, atomics, latency sanity, and
//! the session checks of the threat model: a request without a valid key
//! is refused with at most one small answer, a forged session cannot read,
//! the board's boot epoch is consistent (a stale one is answered
//! `RESTARTED`), and the dedup quota covers the client's retry horizon.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::{ClientConfig, ClioError, Session, SessionInfo};
use clio_wire::payload::{perms, InfoResp};
use clio_wire::{Header, Opcode, Packet, Status};
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

/// Send one crafted request from a fresh socket (another source port, as
/// an outside attacker would) and collect every answer until 200 ms pass
/// without one: (request bytes, answers as (header, total bytes)).
fn raw_exchange(
    addr: SocketAddr,
    h: Header,
    payload: &[u8],
) -> Result<(usize, Vec<(Header, usize)>)> {
    let sock = UdpSocket::bind(if addr.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    })
    .context("binding a raw UDP socket")?;
    sock.connect(addr)?;
    sock.set_read_timeout(Some(Duration::from_millis(200)))?;
    let pkt = h.encode(payload).map_err(|e| anyhow::anyhow!("{e}"))?;
    sock.send(&pkt)?;
    let mut answers = Vec::new();
    let mut buf = vec![0u8; 65536];
    while let Ok(n) = sock.recv(&mut buf) {
        let p = Packet::new_checked(&buf[..n]).map_err(|e| anyhow::anyhow!("answer: {e}"))?;
        let r = Header::parse_verified(&p).map_err(|e| anyhow::anyhow!("answer: {e}"))?;
        answers.push((r, n));
        if answers.len() > 64 {
            break;
        }
    }
    Ok((pkt.len(), answers))
}

/// The one header-only answer with `want` a refused request must get, and
/// never more bytes than it carried.
fn one_small_refusal(sent: usize, answers: &[(Header, usize)], want: Status) -> Result<String> {
    let total: usize = answers.iter().map(|a| a.1).sum();
    match answers {
        [(h, n)] if h.status == want && h.payload_len == 0 && *n <= sent => {
            Ok(format!("{}, {n} B answered to {sent} B", want.name()))
        }
        [] => bail!("no answer (expected one {})", want.name()),
        [(h, n)] => bail!(
            "answered {} with {n} B ({} B payload) to {sent} B; expected one header-only {}",
            h.status.name(),
            h.payload_len,
            want.name()
        ),
        _ => bail!(
            "{} answers, {total} B in all, to one {sent} B request",
            answers.len()
        ),
    }
}

/// A WRITE with this session's credentials but a wrong key is refused and
/// changes nothing.
fn wrong_key_check(
    addr: SocketAddr,
    s: &mut Session<clio::backend::UdpTransport>,
    page: u64,
) -> Result<String> {
    let me = *s.session_info().context("no session")?;
    let al = s.ralloc(page, perms::RW)?;
    s.rwrite(al.va, &[0x11; 64])?;
    let h = Header::request(Opcode::Write, me.pid, 0x7a11_0001, al.va, 64).with_session(
        me.session,
        me.epoch,
        me.key ^ 0x8000_0000_0000_0001,
    );
    let (sent, answers) = raw_exchange(addr, h, &[0xee; 64])?;
    let verdict = one_small_refusal(sent, &answers, Status::BadSession)?;
    let mut back = [0u8; 64];
    s.rread(al.va, &mut back)?;
    s.rfree(al.va, al.size)?;
    if back != [0x11; 64] {
        bail!("the refused write changed memory");
    }
    Ok(format!(
        "WRITE with a wrong key: {verdict}; memory unchanged"
    ))
}

/// Another address space's session id with a guessed key cannot read,
/// and an 8 MiB READ without a valid key is not amplified.
fn forged_session_check(
    addr: SocketAddr,
    victim: &mut Session<clio::backend::UdpTransport>,
    page: u64,
) -> Result<String> {
    let v = *victim.session_info().context("no session")?;
    let al = victim.ralloc(page, perms::RW)?;
    victim.rwrite(al.va, b"bring-up secret")?;
    let guess = (clio::fresh_first_req_id() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let h = Header::request(Opcode::Read, v.pid, 0x7a11_0002, al.va, 15)
        .with_session(v.session, v.epoch, guess);
    let (sent, answers) = raw_exchange(addr, h, &[])?;
    let small = one_small_refusal(sent, &answers, Status::BadSession)?;
    // The largest read a packet can ask for, forged: at most its own size back.
    let len = (8u64 << 20).min(page) as u32;
    let h = Header::request(Opcode::Read, v.pid, 0x7a11_0003, al.va, len).with_session(
        v.session,
        v.epoch,
        guess ^ 1,
    );
    let (sent_big, answers_big) = raw_exchange(addr, h, &[])?;
    let big = one_small_refusal(sent_big, &answers_big, Status::BadSession)?;
    victim.rfree(al.va, al.size)?;
    Ok(format!(
        "PID {} session {} with a guessed key: {small}; a {} KiB READ: {big}",
        v.pid,
        v.session,
        len >> 10
    ))
}

/// INFO's epoch is the session's, nonzero; a request naming another epoch
/// is answered RESTARTED with the current one.
fn epoch_check(addr: SocketAddr, info: &InfoResp, me: &SessionInfo) -> Result<String> {
    if info.epoch == 0 {
        bail!("INFO reports epoch 0 (the fast path never got its Epoch descriptor)");
    }
    if me.epoch != info.epoch {
        bail!(
            "session opened in epoch {:#010x}, INFO says {:#010x}",
            me.epoch,
            info.epoch
        );
    }
    let stale = me.epoch.wrapping_add(1).max(1);
    let h = Header::request(Opcode::Read, me.pid, 0x7a11_0004, 0, 8)
        .with_session(me.session, stale, me.key);
    let (sent, answers) = raw_exchange(addr, h, &[])?;
    let verdict = one_small_refusal(sent, &answers, Status::Restarted)?;
    if answers[0].0.epoch != info.epoch {
        bail!(
            "RESTARTED answer carries epoch {:#010x}, not the board's",
            answers[0].0.epoch
        );
    }
    Ok(format!(
        "epoch {:#010x}, {} session slots; a stale epoch gets {verdict}",
        info.epoch, info.sessions
    ))
}

/// The session's dedup quota against what the client keeps unacknowledged:
/// the SDK never has more records unacknowledged than the quota (a write
/// takes one per packet), and every record stays until acknowledged, so a
/// retry up to the give-up time finds it. Shown by pipelining more small
/// writes than the quota, and by one write of more packets than the quota
/// (the SDK cuts it; each part's records are freed by the next part's ack):
/// all land, none is refused BUSY.
fn dedup_check(s: &mut Session<clio::backend::UdpTransport>, page: u64) -> Result<String> {
    let me = *s.session_info().context("no session")?;
    let c = s.connection().config().clone();
    let q = u64::from(me.dedup_quota);
    if q == 0 {
        bail!("dedup quota 0: no write or atomic can ever run");
    }
    let n = (q + 16).min(4096);
    let big = ((q + 8) * c.mtu_payload as u64).min(page);
    let al = s.ralloc(page, perms::RW)?;
    let before = s.connection().stats();
    let hs = (0..n)
        .map(|i| s.rwrite_async(al.va + (i * 8) % page, &i.to_le_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    for r in s.rpoll(&hs)? {
        r?;
    }
    let data: Vec<u8> = (0..big).map(|i| (i % 251) as u8).collect();
    s.rwrite(al.va, &data)?;
    let mut back = vec![0u8; data.len()];
    s.rread(al.va, &mut back)?;
    let after = s.connection().stats();
    s.rfree(al.va, al.size)?;
    if back != data {
        bail!("a {big} B write read back differently");
    }
    let busy = after.busy - before.busy;
    let held = after.dedup_waits - before.dedup_waits;
    if busy > 0 {
        bail!("{busy} BUSY answers to {n} pipelined writes and a {big} B write (quota {q})");
    }
    let window = (c.cwnd_max as u64).min(c.max_ops as u64);
    Ok(format!(
        "quota {q} records/session, client window {window}: {n} pipelined writes and one \
         {} KiB write ({} packets), 0 BUSY, {held} held back by the quota; records live \
         until acked, so retries up to the {:.1} s give-up time ({} retries) always find theirs",
        big >> 10,
        big.div_ceil(c.mtu_payload as u64),
        c.request_timeout_ns as f64 / 1e9,
        c.retry_budget
    ))
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
            "clio bringup: {addr} (client config '{}'{})",
            cfg.board.name,
            if a.target.join.is_some() {
                ", joining an address space"
            } else {
                ""
            }
        );
    }
    let mut s = match Session::open(addr, a.target.client_config(&cfg)?) {
        Ok(s) => s,
        Err(e) => bail!("no answer from {addr}: {e}"),
    };
    let info = s.info();
    add(
        "identity",
        info.clone().map_err(Into::into).map(|i| {
            format!(
                "board '{}', rtl {:#x}, mtu {}, page {} KiB",
                i.board_name().unwrap_or("?"),
                i.rtl_version,
                i.mtu,
                1u64 << i.page_shift >> 10
            )
        }),
    );
    let me = s.session_info().copied();
    add(
        "epoch",
        match (&info, &me) {
            (Ok(i), Some(m)) => epoch_check(addr, i, m),
            (Err(e), _) => Err(anyhow::anyhow!("no INFO: {e}")),
            (_, None) => Err(anyhow::anyhow!("no session")),
        },
    );
    add("session key", wrong_key_check(addr, &mut s, page));
    add(
        "forged session",
        Session::open(addr, ClientConfig::from_board(&cfg))
            .map_err(anyhow::Error::from)
            .and_then(|mut victim| forged_session_check(addr, &mut victim, page)),
    );
    add("dedup coverage", dedup_check(&mut s, page));
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
