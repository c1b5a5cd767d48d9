//! `clio bringup`: lab bring-up checks against a board, as a pass/fail table.
//!
//! Over UDP (`--addr`, or an emulated board in process) or PCIe (`--xdma
//! /dev/xdmaN`, an Alveo card through the XDMA driver). The board config is
//! the one the board names in its identity answer (what `clio info` shows);
//! a `--config` that describes another board is an error naming both.
//! Transport rows first (UDP: the kernel's ARP entry for the board; XDMA:
//! the driver's nodes, the status register, the link bit, a DMA at unaligned
//! host and card addresses), then identity and config hash, link MTU, a
//! walking-pattern memory test through ralloc/rwrite/rread, the page-fault
//! path, atomics, and latency sanity. Over UDP also the session checks of
//! the threat model: a request without a valid key is refused with at most
//! one small answer, a forged session cannot read, the board's boot epoch
//! is consistent (a stale one is answered `RESTARTED`), and the dedup quota
//! covers the client's retry horizon (they send crafted datagrams from
//! another socket, which the XDMA path has no equivalent of).

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use clio::backend::Transport;
use clio::{ClientConfig, ClioError, Session, SessionInfo};
use clio_config::BoardConfig;
use clio_wire::payload::{perms, InfoResp};
use clio_wire::xdma::{reg, status, ID, VERSION};
use clio_wire::{Header, Opcode, Packet, Status};
use clio_xdma::{XdmaDevice, XdmaLink};
use serde::Serialize;

use crate::board_arg::load_board;
use crate::progress::{Event, Progress, StepOutcome};
use crate::report::{fmt_ns, percentile};

/// Run bring-up checks against a board.
#[derive(Debug, Args)]
pub struct BringupArgs {
    /// Board address `host:port` (UDP). Without it and without --xdma, an
    /// emulated board is started in this process so the checks can be tried.
    #[arg(long, conflicts_with = "xdma")]
    pub addr: Option<String>,
    /// XDMA device prefix of an Alveo card (`/dev/xdma0`: the driver's
    /// `_user`, `_h2c_0`, `_c2h_0` nodes).
    #[arg(long)]
    pub xdma: Option<PathBuf>,
    /// Board config (a TOML path or an embedded name). Default: the config
    /// of the board the target names (`clio info`); `emulator` in process.
    #[arg(long)]
    pub config: Option<String>,
    /// Join an existing address space instead of opening a new one: a share
    /// token `clio:PID:SESSION:EPOCH:KEY` from a session of that address
    /// space (`Session::share`). It is a credential: whoever holds it has
    /// full access.
    #[arg(long, value_name = "TOKEN")]
    pub join: Option<String>,
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

/// One bring-up check's row.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The check's name (`identity`, `memory test`, …).
    pub check: String,
    /// Whether it passed.
    pub ok: bool,
    /// What it measured, or why it failed.
    pub detail: String,
}

/// The outcome of a bring-up: every check's row, in the order they ran.
#[derive(Debug, Clone, Serialize)]
pub struct BringupReport {
    /// The target, `udp://host:port` or `xdma:///dev/xdmaN`.
    pub board: String,
    /// The rows.
    pub checks: Vec<Check>,
    /// The board config the checks used.
    pub config: String,
    /// How many rows failed.
    pub failed: usize,
}

/// The whole table: the rows as `clio bringup` prints them, then the
/// summary line.
impl std::fmt::Display for BringupReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "clio bringup: {}", self.board)?;
        writeln!(f, "  (board config '{}')", self.config)?;
        for c in &self.checks {
            writeln!(
                f,
                "  {:<5} {:<18} {}",
                if c.ok { "PASS" } else { "FAIL" },
                c.check,
                c.detail
            )?;
        }
        writeln!(f, "{}", self.summary())
    }
}

impl BringupReport {
    /// The closing line: `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed",
            self.checks.len() - self.failed,
            self.failed
        )
    }

    /// An error when any check failed.
    pub fn verdict(&self) -> Result<()> {
        if self.failed > 0 {
            bail!("{} bring-up check(s) failed", self.failed);
        }
        Ok(())
    }
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

fn memory_test<T: Transport>(
    s: &mut Session<T>,
    bytes: u64,
    mtu: usize,
    sink: &mut dyn Progress,
    cfg: &BoardConfig,
) -> Result<String> {
    let al = match s.ralloc(bytes, perms::RW) {
        Ok(al) => al,
        Err(ClioError::TooLarge { .. }) => bail!(
            "--mem-test-bytes {bytes}: larger than the board can ever allocate at once (its data region, regions.data.size, is {} bytes)",
            cfg.regions.data.size
        ),
        Err(ClioError::OverQuota { .. }) => bail!(
            "--mem-test-bytes {bytes}: over one address space's memory quota (sessions.mem_quota_bytes = {} bytes)",
            cfg.sessions.mem_quota_bytes
        ),
        Err(e) => return Err(e.into()),
    };
    let chunk = (mtu / 8 * 8).max(8) * 16;
    let rounds = 3u32;
    let total = bytes.div_ceil(chunk as u64) * rounds as u64 * 2;
    let mut done = 0;
    let mut advance = |sink: &mut dyn Progress| {
        done += 1;
        sink.event(Event::Advanced { done, total });
    };
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
            advance(sink);
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
                    bail!("round {round}: word at {addr:#x} reads {got:#018x}, wrote {want:#018x}");
                }
            }
            off += n as u64;
            advance(sink);
        }
    }
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
    // Touch the page first: its fault may be answered BUSY while the slow
    // path refills free pages (slowly under QEMU), a BUSY this check is not
    // about. After it, only the dedup quota can answer BUSY.
    s.rwrite(al.va, &[0u8; 8])?;
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

/// The rows of the table.
/// The rows so far, and where each new row is reported.
struct Table<'a> {
    sink: &'a mut dyn Progress,
    checks: Vec<Check>,
    /// When the previous row ended (or the checks began): the checks run
    /// one after another, each computed just before it is added, so the
    /// time since is the row's own.
    since: Instant,
}

impl Table<'_> {
    fn add(&mut self, check: &str, r: Result<String>) {
        let micros = self.since.elapsed().as_secs_f64() * 1e6;
        let (ok, detail) = match r {
            Ok(d) => (true, d),
            Err(e) => (false, format!("{e:#}")),
        };
        self.sink.event(Event::Step(StepOutcome {
            name: check.into(),
            ok,
            detail: detail.clone(),
            micros,
        }));
        self.checks.push(Check {
            check: check.into(),
            ok,
            detail,
        });
        self.since = Instant::now();
    }
}

/// Where the checks go.
enum Target {
    Udp(SocketAddr),
    Xdma(PathBuf),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Udp(a) => write!(f, "udp://{a}"),
            Target::Xdma(p) => write!(f, "xdma://{}", p.display()),
        }
    }
}

/// The kernel's ARP entry for `ip` in `arp_table` (the text of
/// `/proc/net/arp`): the hardware address when the entry is complete.
pub fn arp_lookup(arp_table: &str, ip: IpAddr) -> Option<String> {
    arp_table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // IP address, HW type, Flags (0x2 = complete), HW address, Mask, Device.
        (f.len() >= 6 && f[0].parse::<IpAddr>().ok() == Some(ip) && f[2] == "0x2")
            .then(|| format!("{} on {}", f[3], f[5]))
    })
}

/// `aa:bb:cc:dd:ee:ff`, as /proc/net/arp prints it.
fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// ARP row: a board on a real network must have answered ARP (its UDP layer
/// does once the firmware wrote MAC/IPV4); loopback has no ARP.
fn arp_check(addr: SocketAddr, cfg_mac: Option<String>) -> Result<String> {
    let ip = addr.ip();
    if ip.is_loopback() {
        return Ok(format!("{ip} is loopback: no ARP (emulated board)"));
    }
    let table = std::fs::read_to_string("/proc/net/arp").context("reading /proc/net/arp")?;
    match arp_lookup(&table, ip) {
        Some(entry) => {
            if let Some(mac) = cfg_mac {
                if !entry.to_ascii_lowercase().starts_with(&mac.to_ascii_lowercase()) {
                    bail!("{ip} is at {entry}, but the board config says network.mac = {mac}");
                }
            }
            Ok(format!("{ip} is at {entry}"))
        }
        None => bail!(
            "no complete ARP entry for {ip} in /proc/net/arp: the board's UDP layer answers ARP only after the firmware wrote MAC and IPV4 (check `clio logs`), and only on a linked SFP+ port"
        ),
    }
}

/// XDMA rows before the link is opened: the nodes, the status register, the
/// link bit, and a DMA at unaligned host and card addresses.
fn xdma_checks(t: &mut Table, prefix: &Path) -> Result<()> {
    let dev = match XdmaDevice::open(prefix) {
        Ok(d) => d,
        Err(e) => {
            t.add(
                "xdma nodes",
                Err(anyhow::Error::new(e).context(
                    "is the XDMA driver loaded (lsmod | grep xdma) and the card programmed and rescanned?",
                )),
            );
            bail!("no XDMA device at {}", prefix.display());
        }
    };
    t.add(
        "xdma nodes",
        Ok(format!(
            "{}, {}, {}",
            dev.user_path().display(),
            dev.h2c_path().display(),
            dev.c2h_path().display()
        )),
    );
    let regs = (|| -> Result<(u32, u32, u32)> {
        Ok((
            dev.read_u32(reg::ID)?,
            dev.read_u32(reg::VERSION)?,
            dev.read_u32(reg::STATUS)?,
        ))
    })();
    let (id, version, st) = match regs {
        Ok(v) => v,
        Err(e) => {
            t.add("status register", Err(e));
            bail!("cannot read the card's registers");
        }
    };
    t.add(
        "status register",
        if id != ID {
            Err(anyhow::anyhow!(
                "ID = {id:#010x}, expected {ID:#010x} (\"CLIO\"): wrong bitstream or wrong card"
            ))
        } else if version != VERSION {
            Err(anyhow::anyhow!(
                "register-map VERSION = {version}, this host speaks {VERSION}"
            ))
        } else if st & status::READY == 0 {
            Err(anyhow::anyhow!(
                "STATUS = {st:#x}: READY clear (the card takes no H2C slot)"
            ))
        } else {
            Ok(format!(
                "ID CLIO, VERSION {version}, STATUS {st:#x} (READY)"
            ))
        },
    );
    t.add(
        "link",
        if st & status::LINK_UP != 0 {
            Ok("STATUS.LINK_UP: port 0 has block lock".into())
        } else {
            Err(anyhow::anyhow!(
                "STATUS.LINK_UP clear: no block lock on QSFP0 (cable, module, or the far end)"
            ))
        },
    );
    // The card's counters since its reset: what it refused or lost so far.
    t.add(
        "card counters",
        clio_xdma::card_counters(&dev)
            .map(|c| c.to_string())
            .map_err(anyhow::Error::from),
    );
    // A DMA whose host buffer is not congruent to the card address modulo
    // the engine's alignment is refused by the driver; clio-xdma bounces
    // it. The scratch place is an H2C slot the host has not published, so
    // the card does not read it.
    let dma = (|| -> Result<String> {
        let tail = dev.read_u32(reg::H2C_TAIL)?;
        let base = dev.read_u64(reg::H2C_BASE)?;
        let slot = u64::from(dev.read_u32(reg::SLOT_BYTES)?);
        let count = u64::from(dev.read_u32(reg::SLOT_COUNT)?.max(1));
        let card = base + (u64::from(tail) % count) * slot + 7;
        let backing: Vec<u8> = (0..259u32).map(|i| (i * 13 + 5) as u8).collect();
        let data = &backing[3..3 + 200];
        dev.dma_write(card, data)?;
        let mut back = vec![0u8; 201];
        dev.dma_read(card, &mut back[1..])?;
        if &back[1..] != data {
            bail!("200 bytes written at card address {card:#x} read back different");
        }
        Ok(format!(
            "200 B at card {card:#x} from host offset 3, read back into offset 1: intact"
        ))
    })();
    t.add("dma alignment", dma);
    Ok(())
}

/// The board config: `--config` if given (it must name the board that
/// answered), else the embedded config of the name the board gave.
fn resolve_config(
    given: Option<&str>,
    target: &Target,
    info: &clio_wire::payload::InfoResp,
) -> Result<BoardConfig> {
    let name = info.board_name().unwrap_or("?").to_string();
    match given {
        Some(c) => {
            let cfg = load_board(c)?;
            if cfg.board.name.as_str() != name {
                bail!(
                    "--config {c} is for board '{}', but the board at {target} says it is '{name}' (clio info); pass its config or leave --config out",
                    cfg.board.name
                );
            }
            Ok(cfg)
        }
        None => BoardConfig::embedded(&name).map_err(|_| {
            anyhow::anyhow!(
                "the board at {target} says it is '{name}', which has no embedded config: pass --config FILE"
            )
        }),
    }
}

/// Runs `clio bringup`: the checks against the board `a` names (an
/// emulated one in process without `--addr`/`--xdma`), each row sent to
/// `sink` as it ends. An error when the board cannot be reached or named;
/// failed checks are rows of the report (see [`BringupReport::verdict`]).
pub fn check(a: &BringupArgs, sink: &mut dyn Progress) -> Result<BringupReport> {
    let mut table = Table {
        sink,
        checks: Vec::new(),
        since: Instant::now(),
    };
    let mut _server = None;
    let target = match (&a.addr, &a.xdma) {
        // `--addr xdma:///dev/xdmaN` is `--xdma /dev/xdmaN`.
        (Some(addr), _) if addr.starts_with("xdma://") => match addr.parse() {
            Ok(clio_xdma::BoardAddr::Xdma(p)) => Target::Xdma(p),
            Ok(other) => bail!("--addr {other}: not an xdma address"),
            Err(e) => bail!("--addr: {e}"),
        },
        (Some(addr), _) => {
            use std::net::ToSocketAddrs;
            let sa = addr
                .to_socket_addrs()
                .with_context(|| format!("--addr '{addr}' is not a host:port"))?
                .next()
                .with_context(|| format!("--addr '{addr}' resolves to no address"))?;
            Target::Udp(sa)
        }
        (None, Some(p)) => Target::Xdma(p.clone()),
        (None, None) => {
            let cfg = load_board(a.config.as_deref().unwrap_or("emulator"))?;
            let board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
            let server = clio_emu::spawn(
                board,
                "127.0.0.1:0".parse()?,
                clio_emu::ServeOptions::default(),
            )?;
            let sa = server.addr();
            _server = Some(server);
            Target::Udp(sa)
        }
    };
    table.sink.event(Event::Began {
        command: "clio bringup".into(),
        against: format!(
            "{target}{}",
            if a.join.is_some() {
                " (joining an address space)"
            } else {
                ""
            }
        ),
    });
    let join = match &a.join {
        Some(t) => Some(
            t.parse::<clio::ShareToken>()
                .map_err(|e| anyhow::anyhow!("--join: {e}"))?,
        ),
        None => None,
    };
    let client = |cfg: &BoardConfig| ClientConfig {
        join,
        ..ClientConfig::from_board(cfg)
    };
    // The identity query runs with a provisional config (timeouts, MTU of
    // the request): --config's, or the emulator's.
    let probe_cfg = load_board(a.config.as_deref().unwrap_or("emulator"))?;
    let probe = client(&probe_cfg);
    match &target {
        Target::Udp(addr) => {
            let info = Session::open(*addr, probe)
                .map_err(|e| anyhow::anyhow!("no answer from {addr}: {e}"))?
                .info()?;
            let cfg = resolve_config(a.config.as_deref(), &target, &info)?;
            table.since = Instant::now();
            table.add("arp", arp_check(*addr, Some(mac_text(&cfg.network.mac))));
            let s = Session::open(*addr, client(&cfg))
                .map_err(|e| anyhow::anyhow!("no answer from {addr}: {e}"))?;
            let addr = *addr;
            let page = cfg.pages.default_size;
            let victim_cfg = ClientConfig::from_board(&cfg);
            checks(a, &mut table, s, &cfg, &target, |s, t| {
                let info = s.info();
                let me = s.session_info().copied();
                t.add(
                    "epoch",
                    match (&info, &me) {
                        (Ok(i), Some(m)) => epoch_check(addr, i, m),
                        (Err(e), _) => Err(anyhow::anyhow!("no INFO: {e}")),
                        (_, None) => Err(anyhow::anyhow!("no session")),
                    },
                );
                t.add("session key", wrong_key_check(addr, s, page));
                t.add(
                    "forged session",
                    Session::open(addr, victim_cfg)
                        .map_err(anyhow::Error::from)
                        .and_then(|mut victim| forged_session_check(addr, &mut victim, page)),
                );
                t.add("dedup coverage", dedup_check(s, page));
            })
        }
        Target::Xdma(prefix) => {
            table.since = Instant::now();
            xdma_checks(&mut table, prefix)?;
            let link = XdmaLink::open(prefix)?;
            let info = Session::open_with(link, probe)?.info()?;
            let cfg = resolve_config(a.config.as_deref(), &target, &info)?;
            let s = Session::open_with(XdmaLink::open(prefix)?, client(&cfg))?;
            checks(a, &mut table, s, &cfg, &target, |s, t| {
                t.add(
                    "epoch",
                    s.info().map_err(Into::into).and_then(|i| {
                        let me = s.session_info().copied().context("no session")?;
                        if i.epoch == 0 || i.epoch != me.epoch {
                            bail!(
                                "INFO epoch {:#010x}, session opened in {:#010x}",
                                i.epoch,
                                me.epoch
                            );
                        }
                        Ok(format!(
                            "epoch {:#010x}, {} session slots",
                            i.epoch, i.sessions
                        ))
                    }),
                );
            })
        }
    }
}

/// The checks every transport shares, with `session_rows` (the
/// transport's own session checks) after the identity row, then the verdict.
fn checks<T: Transport>(
    a: &BringupArgs,
    table: &mut Table,
    mut s: Session<T>,
    cfg: &BoardConfig,
    target: &Target,
    session_rows: impl FnOnce(&mut Session<T>, &mut Table),
) -> Result<BringupReport> {
    let mtu = cfg.network.mtu_payload as usize;
    let page = cfg.pages.default_size;
    table
        .sink
        .event(Event::Config(cfg.board.name.as_str().into()));
    table.since = Instant::now();
    table.add(
        "identity",
        s.info().map_err(Into::into).and_then(|i| {
            let want = cfg.config_hash();
            if i.config_hash != want {
                bail!(
                    "board '{}' runs config hash {:016x}, config '{}' hashes to {want:016x}: the board was built from another config",
                    i.board_name().unwrap_or("?"),
                    i.config_hash,
                    cfg.board.name
                );
            }
            Ok(format!(
                "board '{}', rtl {:#x}, mtu {}, page {} KiB, config hash {:016x}",
                i.board_name().unwrap_or("?"),
                i.rtl_version,
                i.mtu,
                1u64 << i.page_shift >> 10,
                i.config_hash
            ))
        }),
    );
    session_rows(&mut s, table);
    table.add(
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
    let mem = memory_test(&mut s, a.mem_test_bytes.max(8), mtu, &mut *table.sink, cfg);
    table.add("memory test", mem);
    table.add(
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
    table.add(
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
    table.add(
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
    let checks = std::mem::take(&mut table.checks);
    let failed = checks.iter().filter(|c| !c.ok).count();
    Ok(BringupReport {
        board: target.to_string(),
        checks,
        config: cfg.board.name.as_str().into(),
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::{arp_lookup, check, mac_text, pattern_word, BringupArgs};
    use crate::progress::{steps, Event};

    /// Bring-up of an emulated board in process, 64 KiB memory test, with
    /// this latency limit.
    fn emulated(max_p50_us: f64) -> BringupArgs {
        BringupArgs {
            addr: None,
            xdma: None,
            config: None,
            join: None,
            mem_test_bytes: 1 << 16,
            max_p50_us,
            json: false,
        }
    }

    /// In process against an emulated board: the events name the target,
    /// then the config, every check's row in order (the memory test's
    /// chunks counted up to their total before its row), and the report
    /// holds the same rows.
    #[test]
    fn emulated_board_reports_every_check_as_an_event() {
        let a = emulated(1e6);
        let mut ev = Vec::new();
        let report = check(&a, &mut ev).unwrap();
        assert!(
            matches!(&ev[0], Event::Began { command, against }
                if command == "clio bringup" && *against == report.board),
            "{:?}",
            ev[0]
        );
        assert!(ev.contains(&Event::Config("emulator".into())));
        let rows = steps(&ev);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "arp",
                "identity",
                "epoch",
                "session key",
                "forged session",
                "dedup coverage",
                "link mtu",
                "memory test",
                "page faults",
                "atomics",
                "latency"
            ]
        );
        assert!(rows.iter().all(|r| r.1), "{ev:?}");
        let adv: Vec<(u64, u64)> = ev
            .iter()
            .filter_map(|e| match e {
                Event::Advanced { done, total } => Some((*done, *total)),
                _ => None,
            })
            .collect();
        let total = adv[0].1;
        assert!(total > 0 && adv.len() as u64 == total, "{adv:?}");
        assert!(adv.iter().enumerate().all(|(i, a)| a.0 == i as u64 + 1));
        let mem_row = ev
            .iter()
            .position(|e| matches!(e, Event::Step(s) if s.name == "memory test"))
            .unwrap();
        let last_adv = ev
            .iter()
            .rposition(|e| matches!(e, Event::Advanced { .. }))
            .unwrap();
        assert!(last_adv < mem_row);
        assert_eq!(report.checks.len(), rows.len());
        assert_eq!(report.failed, 0);
        assert_eq!(report.config, "emulator");
        assert!(report.verdict().is_ok());
        assert!(report.to_string().ends_with("11 passed, 0 failed\n"));
    }

    /// A check that fails is a failed row and event, and the verdict says so.
    #[test]
    fn a_failing_check_is_a_failed_row_and_a_failing_verdict() {
        let a = emulated(0.0);
        let mut ev = Vec::new();
        let report = check(&a, &mut ev).unwrap();
        assert!(steps(&ev).contains(&("latency".into(), false)));
        assert_eq!(report.failed, 1);
        assert!(report.verdict().is_err());
        assert_eq!(report.summary(), "10 passed, 1 failed");
    }

    #[test]
    fn arp_entries_must_be_complete() {
        let table = "IP address       HW type     Flags       HW address            Mask     Device\n\
                     10.0.0.2         0x1         0x2         00:0a:35:00:01:22     *        enp1s0\n\
                     10.0.0.3         0x1         0x0         00:00:00:00:00:00     *        enp1s0\n";
        assert_eq!(
            arp_lookup(table, "10.0.0.2".parse().unwrap()).as_deref(),
            Some("00:0a:35:00:01:22 on enp1s0")
        );
        assert_eq!(
            arp_lookup(table, "10.0.0.3".parse().unwrap()),
            None,
            "incomplete"
        );
        assert_eq!(arp_lookup(table, "10.0.0.4".parse().unwrap()), None);
        assert_eq!(mac_text(&[0, 0x0a, 0x35, 0, 1, 0x22]), "00:0a:35:00:01:22");
    }

    #[test]
    fn patterns_differ_per_round_and_address() {
        assert_eq!(pattern_word(0, 0), 1);
        assert_eq!(pattern_word(0, 8), 2);
        assert_eq!(pattern_word(1, 0), !1);
        assert_ne!(pattern_word(2, 0), pattern_word(2, 8));
    }
}
