//! The model in the RTL's order: `clio-cosim check` reads a case, the events
//! the RTL logged while it ran it (`tb/cosim/harness.cpp --replay`: request
//! taken in, READ stream packet pumped, poll started, ARM memory write) and
//! its responses, drives the reference model through the same events
//! ([`FastPath::receive`], [`FastPath::pump`], [`FastPath::poll_rings`], a
//! memory write) and requires every response byte-identical, in order, and
//! the same final memory.
//!
//! Clients are sessions: the model's [`ClientId`] of a packet is its
//! `session` field, the identity the RTL's stream table round-robins over.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::Path;

use clio_fastpath::{ClientId, FastPath};
use clio_wire::clio::field;

use crate::board;

/// What a successful check saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    /// Requests taken in.
    pub takes: usize,
    /// Stream packets pumped.
    pub pumps: usize,
    /// Polls of the TX ring.
    pub polls: usize,
    /// ARM memory writes.
    pub writes: usize,
    /// Responses compared.
    pub responses: usize,
    /// READ streams the model opened.
    pub streams: u64,
    /// Streams ended by a page that went away.
    pub cut: u64,
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err(format!("odd-length hex `{}`", &s[..s.len().min(40)]));
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
}

/// The client of a packet: its session (0 if too short to carry one).
fn client_of(p: &[u8]) -> ClientId {
    match p.get(field::SESSION) {
        Some(b) => ClientId(u64::from(u16::from_be_bytes([b[0], b[1]]))),
        None => ClientId(0),
    }
}

/// Check case `dir` (with `rtl_events.txt` and `rtl_final.bin` from the
/// harness) against a model with READ interleaving `interleave`.
pub fn check(dir: &Path, interleave: bool) -> Result<Checked, String> {
    let b = board::board();
    let init = read(dir, "init.bin")?;
    let mut m = FastPath::new(&b, board::options(), init).map_err(|e| e.to_string())?;
    m.set_interleave_reads(interleave);
    let base = m.layout().dram_base;
    let stim = String::from_utf8(read(dir, "stim.txt")?).map_err(|e| e.to_string())?;
    let mut packets = VecDeque::new();
    let mut writes = VecDeque::new();
    for (n, l) in stim.lines().enumerate() {
        match l.split_once(' ') {
            Some(("P", h)) => packets.push_back(unhex(h)?),
            Some(("M", rest)) => {
                let (a, h) = rest
                    .split_once(' ')
                    .ok_or(format!("stim.txt line {}: M without data", n + 1))?;
                let pa = u64::from_str_radix(a, 16).map_err(|e| e.to_string())?;
                writes.push_back((pa, unhex(h)?));
            }
            _ => {}
        }
    }
    let log = String::from_utf8(read(dir, "rtl_events.txt")?).map_err(|e| e.to_string())?;
    let mut c = Checked::default();
    let mut want: VecDeque<Vec<u8>> = VecDeque::new();
    for (n, l) in log.lines().enumerate() {
        let at = || format!("rtl_events.txt line {}", n + 1);
        match l.split_once(' ').map_or((l, ""), |x| x) {
            ("T", _) => {
                let p = packets.pop_front().ok_or(format!(
                    "{}: the RTL took in more packets than were sent",
                    at()
                ))?;
                m.receive(client_of(&p), &p, &mut |_, o: &[u8]| {
                    want.push_back(o.to_vec())
                });
                c.takes += 1;
            }
            ("P", _) => {
                if m.pump(1, &mut |_, o: &[u8]| want.push_back(o.to_vec())) != 1 {
                    return Err(format!(
                        "{}: the RTL pumped a stream packet, the model has none open",
                        at()
                    ));
                }
                c.pumps += 1;
            }
            ("R", _) => {
                m.poll_rings(&mut |_, o: &[u8]| want.push_back(o.to_vec()));
                c.polls += 1;
            }
            ("M", _) => {
                let (pa, bytes) = writes.pop_front().ok_or(format!(
                    "{}: more memory writes than the stimulus has",
                    at()
                ))?;
                let off = (pa - base) as usize;
                m.dram_mut()[off..off + bytes.len()].copy_from_slice(&bytes);
                c.writes += 1;
            }
            ("O", h) => {
                let got = unhex(h)?;
                match want.pop_front() {
                    Some(w) if w == got => c.responses += 1,
                    Some(w) => {
                        return Err(format!(
                            "{}: response {} differs\n  model: {}\n  rtl:   {}",
                            at(),
                            c.responses,
                            hex(&w),
                            hex(&got)
                        ))
                    }
                    None => {
                        return Err(format!(
                            "{}: the RTL sent a response the model did not: {}",
                            at(),
                            hex(&got)
                        ))
                    }
                }
            }
            _ => return Err(format!("{}: unknown event `{l}`", at())),
        }
    }
    if !packets.is_empty() {
        return Err(format!(
            "{} packets were never taken in by the RTL",
            packets.len()
        ));
    }
    if let Some(w) = want.front() {
        return Err(format!(
            "the model sent {} more responses, first {}",
            want.len(),
            hex(w)
        ));
    }
    if m.owed_bytes() != 0 {
        return Err(format!(
            "the model still owes {} bytes of open streams",
            m.owed_bytes()
        ));
    }
    let fin = read(dir, "rtl_final.bin")?;
    let mem = m.dram();
    if fin.len() != mem.len() {
        return Err(format!(
            "rtl_final.bin has {} bytes, the board {}",
            fin.len(),
            mem.len()
        ));
    }
    if let Some(i) = (0..fin.len()).find(|&i| fin[i] != mem[i]) {
        return Err(format!(
            "final memory differs at {:#x}: model {:02x} rtl {:02x}",
            base + i as u64,
            mem[i],
            fin[i]
        ));
    }
    c.streams = m.stats().read_streams;
    c.cut = m.stats().read_streams_cut;
    Ok(c)
}
