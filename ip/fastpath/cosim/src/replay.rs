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

use clio_fastpath::{ClientId, FastPath, Layout};
use clio_wire::clio::{field, Opcode, HEADER_LEN};

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
    /// Hit-lane TLB lookups logged.
    pub lookups: usize,
    /// Answers sent before an earlier request's (each within the ordering rule).
    pub reordered: usize,
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

/// A request the RTL took in whose answer the model has not produced yet.
struct Taken {
    /// Arrival number (0 = the first packet of `stim.txt`).
    n: usize,
    p: Vec<u8>,
    /// Log line of its take (`T`).
    take: usize,
    /// Log line of its first hit-lane TLB lookup (`K`, logged for hits only), if the lane
    /// looked it up and hit.
    look: Option<usize>,
    /// Younger requests answered before it.
    passed_by: Vec<Passer>,
}

/// A younger request answered before a [`Taken`] one.
#[derive(Clone, Copy)]
struct Passer {
    /// Its arrival number.
    n: usize,
    /// Log line of its answer.
    line: usize,
    /// Log line of its hit-lane TLB lookup.
    look: usize,
}

/// A TLB insert the RTL logged (`I pid vpn shift`).
struct Insert {
    line: usize,
    pid: u32,
    vpn: u64,
    shift: u8,
    /// Claimed by the request (handed to the model) that walked or faulted for it.
    used: bool,
}

/// The TLB's order of effects against the answer order.
#[derive(Default)]
struct TlbOrder {
    /// The latest insert line claimed by a request the model has taken, and
    /// that request (for messages).
    last_insert: usize,
    inserter: String,
}

impl TlbOrder {
    /// Request `t` is handed to the model after every request it was
    /// answered behind: a lookup logged before their latest insert touched
    /// the RTL's TLB before that insert, the model's after it, so the two
    /// TLBs' recency orders (which decide later evictions) would differ.
    fn look(&mut self, t: &Taken) -> Result<(), String> {
        match t.look {
            Some(k) if k < self.last_insert => Err(format!(
                "{} was looked up in the TLB (log line {}) before the TLB insert (log line {}) \
                 of {}, which was answered ahead of it: the model looks it up after that insert",
                describe(t.n, &t.p),
                k + 1,
                self.last_insert + 1,
                self.inserter
            )),
            _ => Ok(()),
        }
    }

    /// Request `t` walked or faulted in the model: it claims its insert.
    fn claim(&mut self, lay: &Layout, t: &Taken, inserts: &mut [Insert]) {
        let pid = be32(&t.p, field::PID);
        let Some((s, lo, hi)) = pages(lay, &t.p) else {
            return;
        };
        if let Some(i) = inserts.iter_mut().find(|i| {
            !i.used
                && i.line > t.take
                && i.pid == pid
                && (lo..=hi).contains(&((i.vpn << i.shift) >> s))
        }) {
            i.used = true;
            if i.line > self.last_insert {
                self.last_insert = i.line;
                self.inserter = describe(t.n, &t.p);
            }
        }
    }
}

fn be32(p: &[u8], f: core::ops::Range<usize>) -> u32 {
    p.get(f)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn be64(p: &[u8], f: core::ops::Range<usize>) -> u64 {
    p.get(f).map_or(0, |b| {
        let mut x = [0u8; 8];
        x.copy_from_slice(b);
        u64::from_be_bytes(x)
    })
}

fn opcode(p: &[u8]) -> u8 {
    p.get(field::OPCODE).copied().unwrap_or(0)
}

/// `request #n (READ pid 1 req_id 0x2a va 0x10000)` for messages.
fn describe(n: usize, p: &[u8]) -> String {
    let op = Opcode::parse(opcode(p)).map_or("?", Opcode::name);
    format!(
        "request #{n} ({op} pid {} req_id {:#x} va {:#x})",
        be32(p, field::PID),
        be32(p, field::REQ_ID),
        be64(p, field::VA)
    )
}

/// Whether response `r` answers request `p`: same PID, request id and session.
fn answers(r: &[u8], p: &[u8]) -> bool {
    r.len() >= HEADER_LEN
        && p.len() >= HEADER_LEN
        && r[field::PID] == p[field::PID]
        && r[field::REQ_ID] == p[field::REQ_ID]
        && r[field::SESSION] == p[field::SESSION]
}

/// The pages (VPNs at the VA class's page shift) request `p` touches.
fn pages(lay: &Layout, p: &[u8]) -> Option<(u8, u64, u64)> {
    let va = be64(p, field::VA);
    let shift = lay.shift_of(va)?;
    let len = u64::from(be32(p, field::TOTAL_LEN).max(1));
    Some((shift, va >> shift, va.saturating_add(len - 1) >> shift))
}

/// The model receives request `t` (its answers join `want`); if younger
/// requests were answered before it, this judges each of those reorderings
/// by the ordering rule (`ip/fastpath/README.md`, "Answer order").
fn receive(
    m: &mut FastPath<Vec<u8>>,
    t: Taken,
    inserts: &mut [Insert],
    tlb: &mut TlbOrder,
    taken: &[Vec<u8>],
    want: &mut VecDeque<Vec<u8>>,
) -> Result<(), String> {
    let before = *m.stats();
    let queued = want.len();
    m.receive(client_of(&t.p), &t.p, &mut |_, o: &[u8]| {
        want.push_back(o.to_vec())
    });
    let st = *m.stats();
    let walked = st.tlb_misses > before.tlb_misses || st.faults > before.faults;
    let lay = *m.layout();
    tlb.look(&t)?;
    if walked {
        tlb.claim(&lay, &t, inserts);
    }
    if t.passed_by.is_empty() || want.len() == queued {
        // A packet the model does not answer has no place in the answer order.
        return Ok(());
    }
    let me = describe(t.n, &t.p);
    for &Passer { n: j, line, look } in &t.passed_by {
        let q = &taken[j];
        let them = describe(j, q);
        let bad = |why: String| {
            Err(format!(
                "rtl_events.txt line {line}: {them} was answered before {me}: {why}"
            ))
        };
        if !walked {
            return bad(
                "only a request that walks the page table or takes a fault may be passed, and \
                 the model's did neither"
                    .into(),
            );
        }
        let pid = be32(&t.p, field::PID);
        if let Some((s, lo, hi)) = pages(&lay, &t.p) {
            // The earlier request's TLB insert: the passing read must have
            // looked the TLB up before it (the model sees its use first).
            let ins = inserts.iter().find(|i| {
                i.line > t.take && i.pid == pid && (lo..=hi).contains(&((i.vpn << i.shift) >> s))
            });
            if let Some(i) = ins.filter(|i| look > i.line) {
                return bad(format!(
                    "its TLB lookup (line {look}) came after the earlier request's TLB insert \
                     (line {})",
                    i.line
                ));
            }
        }
    }
    Ok(())
}

/// Check case `dir` (with `rtl_events.txt` and `rtl_final.bin` from the
/// harness) against a model with READ interleaving `interleave`.
pub fn check(dir: &Path, interleave: bool) -> Result<Checked, String> {
    let init = read(dir, "init.bin")?;
    let stim = String::from_utf8(read(dir, "stim.txt")?).map_err(|e| e.to_string())?;
    let log = String::from_utf8(read(dir, "rtl_events.txt")?).map_err(|e| e.to_string())?;
    let fin = read(dir, "rtl_final.bin")?;
    check_events(init, &stim, &log, &fin, interleave)
}

fn num<T: TryFrom<u64>>(s: Option<&str>, what: &str, at: &str) -> Result<T, String> {
    s.and_then(|x| u64::from_str_radix(x, 16).ok())
        .and_then(|x| T::try_from(x).ok())
        .ok_or(format!("{at}: {what} missing or not hex"))
}

/// [`check`] on the files' contents: the board memory before (`init`), the
/// stimulus (`stim.txt`), the RTL's log (`rtl_events.txt`) and its final
/// memory (`rtl_final.bin`).
///
/// Requests are handed to the model lazily, in the order their answers
/// appear: a request whose answer comes before an older request's was
/// answered ahead of it, and every such reordering must obey the ordering
/// rule (`ip/fastpath/README.md`, "Answer order"), else the error names
/// both requests. A stream pump, a poll or an ARM write first hands the
/// model every request taken in before it.
pub fn check_events(
    init: Vec<u8>,
    stim: &str,
    log: &str,
    fin: &[u8],
    interleave: bool,
) -> Result<Checked, String> {
    let b = board::board();
    let mut m = FastPath::new(&b, board::options(), init).map_err(|e| e.to_string())?;
    m.set_interleave_reads(interleave);
    let base = m.layout().dram_base;
    let lay = *m.layout();
    let mut packets = Vec::new();
    let mut writes = VecDeque::new();
    for (n, l) in stim.lines().enumerate() {
        match l.split_once(' ') {
            Some(("P", h)) => packets.push(unhex(h)?),
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
    let mut c = Checked::default();
    let mut want: VecDeque<Vec<u8>> = VecDeque::new();
    let mut pending: VecDeque<Taken> = VecDeque::new();
    let mut inserts: Vec<Insert> = Vec::new();
    let mut tlb = TlbOrder::default();
    let settle = |m: &mut FastPath<Vec<u8>>,
                  pending: &mut VecDeque<Taken>,
                  inserts: &mut Vec<Insert>,
                  tlb: &mut TlbOrder,
                  want: &mut VecDeque<Vec<u8>>| {
        while let Some(t) = pending.pop_front() {
            receive(m, t, inserts, tlb, &packets, want)?;
        }
        Ok::<(), String>(())
    };
    for (n, l) in log.lines().enumerate() {
        let line = n + 1;
        let at = format!("rtl_events.txt line {line}");
        let (kind, rest) = l.split_once(' ').unwrap_or((l, ""));
        let mut args = rest.split_whitespace();
        match kind {
            "T" => {
                let p = packets
                    .get(c.takes)
                    .ok_or(format!("{at}: the RTL took in more packets than were sent"))?;
                pending.push_back(Taken {
                    n: c.takes,
                    p: p.clone(),
                    take: line,
                    look: None,
                    passed_by: Vec::new(),
                });
                c.takes += 1;
            }
            "K" => {
                let pid: u32 = num(args.next(), "PID", &at)?;
                let va: u64 = num(args.next(), "VA", &at)?;
                let hit = |t: &Taken| {
                    be32(&t.p, field::PID) == pid
                        && pages(&lay, &t.p)
                            .is_some_and(|(s, lo, hi)| (lo..=hi).contains(&(va >> s)))
                };
                // A request's first lookup (a read of two pages looks up twice).
                let k = pending
                    .iter()
                    .position(|t| t.look.is_none() && hit(t))
                    .or_else(|| pending.iter().position(hit))
                    .ok_or(format!(
                        "{at}: a hit-lane TLB lookup of PID {pid} VA {va:#x} that no request \
                         taken in and not yet answered reads"
                    ))?;
                pending[k].look.get_or_insert(line);
                c.lookups += 1;
            }
            "I" => {
                inserts.push(Insert {
                    line,
                    pid: num(args.next(), "PID", &at)?,
                    vpn: num(args.next(), "VPN", &at)?,
                    shift: num(args.next(), "shift", &at)?,
                    used: false,
                });
            }
            "P" => {
                settle(&mut m, &mut pending, &mut inserts, &mut tlb, &mut want)?;
                if m.pump(1, &mut |_, o: &[u8]| want.push_back(o.to_vec())) != 1 {
                    return Err(format!(
                        "{at}: the RTL pumped a stream packet, the model has none open"
                    ));
                }
                c.pumps += 1;
            }
            "R" => {
                settle(&mut m, &mut pending, &mut inserts, &mut tlb, &mut want)?;
                m.poll_rings(&mut |_, o: &[u8]| want.push_back(o.to_vec()));
                c.polls += 1;
            }
            "M" => {
                settle(&mut m, &mut pending, &mut inserts, &mut tlb, &mut want)?;
                let (pa, bytes) = writes
                    .pop_front()
                    .ok_or(format!("{at}: more memory writes than the stimulus has"))?;
                let off = (pa - base) as usize;
                m.dram_mut()[off..off + bytes.len()].copy_from_slice(&bytes);
                c.writes += 1;
            }
            "O" => {
                let got = unhex(rest)?;
                if want.is_empty() {
                    answer(
                        &mut m,
                        &mut pending,
                        (&mut inserts, &mut tlb),
                        &packets,
                        &mut want,
                        &got,
                        line,
                        &mut c,
                    )?;
                }
                match want.pop_front() {
                    Some(w) if w == got => c.responses += 1,
                    Some(w) => {
                        return Err(format!(
                            "{at}: response {} differs\n  model: {}\n  rtl:   {}",
                            c.responses,
                            hex(&w),
                            hex(&got)
                        ))
                    }
                    None => {
                        return Err(format!(
                            "{at}: the RTL sent a response the model did not: {}",
                            hex(&got)
                        ))
                    }
                }
            }
            _ => return Err(format!("{at}: unknown event `{l}`")),
        }
    }
    settle(&mut m, &mut pending, &mut inserts, &mut tlb, &mut want)?;
    if c.takes < packets.len() {
        return Err(format!(
            "{} packets were never taken in by the RTL",
            packets.len() - c.takes
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

/// The RTL sent `got` (log line `line`) with no earlier answer of the model
/// outstanding: hand the model the request it answers. That is the oldest
/// request taken in unless `got` answers a younger one; then the older ones
/// the model does not answer at all (tried on a copy) go first, and if an
/// older one is left, the younger request passed it: its own part of the
/// rule is checked here, the pair's when the older one is handed over.
/// Requests are matched by their ids, which a client may send twice (a late
/// duplicate, then a packet the board rejects): if the oldest one the ids
/// name gets no answer from the model, the next is handed on.
#[allow(clippy::too_many_arguments)]
fn answer(
    m: &mut FastPath<Vec<u8>>,
    pending: &mut VecDeque<Taken>,
    (inserts, tlb): (&mut Vec<Insert>, &mut TlbOrder),
    packets: &[Vec<u8>],
    want: &mut VecDeque<Vec<u8>>,
    got: &[u8],
    line: usize,
    c: &mut Checked,
) -> Result<(), String> {
    while let Some(front) = pending.front() {
        let at = pending.iter().position(|t| answers(got, &t.p));
        let Some(k) = at.filter(|&k| k > 0) else {
            // In order (or answering none: the comparison tells).
            let t = pending.pop_front().unwrap_or_else(|| unreachable!());
            receive(m, t, inserts, tlb, packets, want)?;
            if at == Some(0) && want.is_empty() {
                // The model dropped it (a late duplicate, say): `got` answers a
                // younger packet with the same ids, sent again.
                continue;
            }
            return Ok(());
        };
        let mut copy = m.clone();
        let mut said = false;
        copy.receive(client_of(&front.p), &front.p, &mut |_, _| said = true);
        if !said {
            *m = copy;
            pending.pop_front();
            continue;
        }
        let t = pending.remove(k).unwrap_or_else(|| unreachable!());
        let me = describe(t.n, &t.p);
        let them = describe(pending[0].n, &pending[0].p);
        let bad = |why: &str| {
            Err(format!(
                "rtl_events.txt line {line}: {me} was answered before {them}: {why}"
            ))
        };
        if opcode(&t.p) != Opcode::Read.raw() {
            return bad("only a READ may pass an earlier request (writes, atomics and control keep arrival order)");
        }
        if t.p.len() > 64 || be32(&t.p, field::TOTAL_LEN) > 64 {
            return bad("only a single-beat READ of at most 64 bytes may pass an earlier request");
        }
        if be32(&t.p, field::RETRY_OF) != 0 {
            return bad("a retry (retry_of set) keeps arrival order");
        }
        let Some(look) = t.look else {
            return bad("no hit-lane TLB lookup was logged for it: only a hit-lane read may pass");
        };
        let lay = *m.layout();
        let pid = be32(&t.p, field::PID);
        for i in pending.iter().take(k) {
            let them = describe(i.n, &i.p);
            let bad = |why: String| {
                Err(format!(
                    "rtl_events.txt line {line}: {me} was answered before {them}: {why}"
                ))
            };
            if opcode(&i.p) == Opcode::Fence.raw() {
                return bad("a read behind a FENCE keeps arrival order".into());
            }
            if opcode(&i.p) != Opcode::Read.raw() {
                return bad(
                    "only a READ may be passed (a write's or an atomic's intake would see the \
                     passing read's ack in the model's order)"
                        .into(),
                );
            }
            if let (Some((s, lo, hi)), Some((js, j0, _))) = (pages(&lay, &i.p), pages(&lay, &t.p)) {
                if pid == be32(&i.p, field::PID) && s == js && (lo..=hi).contains(&j0) {
                    return bad(format!(
                        "it reads the same page ({:#x}, shift {s}): it waits for the earlier \
                         request's translation",
                        j0 << s
                    ));
                }
            }
        }
        let before = *m.stats();
        m.receive(client_of(&t.p), &t.p, &mut |_, o: &[u8]| {
            want.push_back(o.to_vec())
        });
        let st = *m.stats();
        if st.duplicates > before.duplicates {
            return bad("a dedup replay keeps arrival order");
        }
        if st.tlb_misses > before.tlb_misses || st.faults > before.faults {
            return bad("it is not a TLB hit in the model (in the RTL's answer order)");
        }
        tlb.look(&t)?;
        let p = Passer { n: t.n, line, look };
        for i in pending.iter_mut().take(k) {
            i.passed_by.push(p);
        }
        c.reordered += 1;
        return Ok(());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::stim_text;
    use crate::trace::{generate_class, refill_crc, Case, Class, Event, PathClass};

    /// How the test's "RTL" answers request `b` ahead of the requests
    /// `a..b` (event indices; only packets between them).
    struct Ahead {
        a: usize,
        b: usize,
        /// Log `b`'s TLB lookup after `a`'s insert.
        look_late: bool,
        /// Answer `a..=b` in arrival order all the same (only the lookup
        /// and the insert are logged as above).
        in_order: bool,
    }

    fn hex_line(tag: &str, o: &[u8]) -> String {
        format!("{tag} {}\n", hex(o))
    }

    /// The log an RTL would write answering `case` in arrival order except
    /// for `ahead`, with every answer the reference model gives in that
    /// order (so only the ordering rule can reject it), and its final memory.
    fn log_of(case: &Case, ahead: Option<&Ahead>) -> (String, Vec<u8>) {
        let mut g = FastPath::new(&board::board(), board::options(), case.initial.clone()).unwrap();
        g.set_interleave_reads(false);
        let lay = *g.layout();
        let mut log = String::new();
        let pkt = |e: usize| match &case.events[e] {
            Event::Packet(p) => p.clone(),
            other => panic!("event {e} is not a packet: {other:?}"),
        };
        let mut e = 0;
        while e < case.events.len() {
            let answer = |g: &mut FastPath<Vec<u8>>, p: &[u8], log: &mut String| {
                g.receive(client_of(p), p, &mut |_, o: &[u8]| {
                    log.push_str(&hex_line("O", o))
                });
            };
            match (&case.events[e], ahead) {
                (Event::Packet(_), Some(w)) if w.a == e => {
                    (w.a..=w.b).for_each(|_| log.push_str("T\n"));
                    let (pa, pb) = (pkt(w.a), pkt(w.b));
                    // The lane looks the missing request up first (a FENCE
                    // does not take the lane).
                    if opcode(&pa) != Opcode::Fence.raw() {
                        log.push_str(&format!(
                            "K {:x} {:x}\n",
                            be32(&pa, field::PID),
                            be64(&pa, field::VA)
                        ));
                    }
                    let look =
                        format!("K {:x} {:x}\n", be32(&pb, field::PID), be64(&pb, field::VA));
                    let va = be64(&pa, field::VA);
                    let s = lay.shift_of(va).unwrap();
                    let ins = format!("I {:x} {:x} {s:x}\n", be32(&pa, field::PID), va >> s);
                    if w.look_late {
                        log.push_str(&ins);
                        log.push_str(&look);
                    } else {
                        log.push_str(&look);
                    }
                    if !w.look_late {
                        if !w.in_order {
                            answer(&mut g, &pb, &mut log);
                        }
                        log.push_str(&ins);
                    } else if !w.in_order {
                        answer(&mut g, &pb, &mut log);
                    }
                    for x in w.a..w.b {
                        answer(&mut g, &pkt(x), &mut log);
                    }
                    if w.in_order {
                        answer(&mut g, &pb, &mut log);
                    }
                    e = w.b;
                }
                (Event::Packet(p), _) => {
                    log.push_str("T\n");
                    answer(&mut g, p, &mut log);
                }
                (Event::Mem(pa, b), _) => {
                    log.push_str("M\n");
                    let off = (pa - lay.dram_base) as usize;
                    g.dram_mut()[off..off + b.len()].copy_from_slice(b);
                }
                (Event::Poll, _) => {
                    log.push_str("R\n");
                    g.poll_rings(&mut |_, o: &[u8]| log.push_str(&hex_line("O", o)));
                }
                _ => {}
            }
            e += 1;
        }
        (log, g.dram().to_vec())
    }

    fn run(case: &Case, ahead: Option<&Ahead>) -> Result<Checked, String> {
        let (log, fin) = log_of(case, ahead);
        check_events(case.initial.clone(), &stim_text(case), &log, &fin, false)
    }

    /// The arrival number of the packet at event `e`.
    fn number(case: &Case, e: usize) -> usize {
        case.events[..e]
            .iter()
            .filter(|x| matches!(x, Event::Packet(_)))
            .count()
    }

    /// A hitmiss stream and the event index of its first miss (a hit follows).
    fn hitmiss(class: Class) -> (Case, usize) {
        let c = generate_class(5, 40, class).case;
        let cold = if class == Class::HitMiss {
            PathClass::Miss
        } else {
            PathClass::Fault
        };
        let miss = c.paths.iter().find(|(_, p)| *p == cold).unwrap().0;
        (c, miss)
    }

    fn edit(case: &mut Case, e: usize, f: impl FnOnce(&mut Vec<u8>)) {
        let Event::Packet(p) = &mut case.events[e] else {
            panic!("event {e} is not a packet")
        };
        f(p);
        refill_crc(p);
    }

    fn rejected(r: Result<Checked, String>, case: &Case, a: usize, b: usize, why: &str) {
        let e = r.expect_err("the check accepted an illegal reordering");
        for n in [number(case, a), number(case, b)] {
            assert!(e.contains(&format!("request #{n} ")), "{e}: names #{n}");
        }
        assert!(e.contains(why), "{e}: says `{why}`");
    }

    /// The request after event `a` answered before it, its lookup logged
    /// before `a`'s insert.
    fn next_passes(a: usize) -> Ahead {
        Ahead {
            a,
            b: a + 1,
            look_late: false,
            in_order: false,
        }
    }

    /// `case` answered as `w` says is rejected, naming both requests and `why`.
    fn rejects(case: &Case, w: Ahead, why: &str) {
        rejected(run(case, Some(&w)), case, w.a, w.b, why);
    }

    #[test]
    fn in_order_answers_pass() {
        let (c, _) = hitmiss(Class::HitMiss);
        let k = run(&c, None).unwrap();
        assert_eq!((k.takes, k.reordered), (c.packets, 0));
        assert_eq!(k.responses, c.outputs.len());
    }

    #[test]
    fn a_hit_answered_before_the_miss_in_front_passes() {
        for class in [Class::HitMiss, Class::HitFault] {
            let (c, miss) = hitmiss(class);
            // The hit behind the miss (another page) answered before it.
            let k = run(&c, Some(&next_passes(miss)))
                .unwrap_or_else(|e| panic!("{}: {e}", class.name()));
            assert_eq!(k.reordered, 1, "{}", class.name());
            assert_eq!(k.takes, c.packets);
        }
    }

    #[test]
    fn a_hit_of_the_missing_page_may_not_pass() {
        let (mut c, miss) = hitmiss(Class::HitMiss);
        let Event::Packet(p) = &c.events[miss] else {
            unreachable!()
        };
        let va = be64(p, field::VA);
        edit(&mut c, miss + 1, |q| {
            q[field::VA].copy_from_slice(&(va + 8).to_be_bytes())
        });
        rejects(&c, next_passes(miss), "same page");
    }

    #[test]
    fn a_read_behind_a_fence_may_not_pass() {
        let (mut c, miss) = hitmiss(Class::HitMiss);
        edit(&mut c, miss, |q| {
            q[field::OPCODE] = Opcode::Fence.raw();
            q[field::TOTAL_LEN].fill(0);
        });
        rejects(&c, next_passes(miss), "behind a FENCE");
    }

    #[test]
    fn a_write_may_not_pass() {
        let (c, fault) = hitmiss(Class::HitWFault);
        rejects(&c, next_passes(fault), "only a READ");
    }

    #[test]
    fn a_write_may_not_be_passed() {
        let (mut c, miss) = hitmiss(Class::HitMiss);
        edit(&mut c, miss, |q| q[field::OPCODE] = Opcode::Write.raw());
        rejects(&c, next_passes(miss), "only a READ may be passed");
    }

    #[test]
    fn a_lookup_before_an_earlier_insert_answered_after_it_is_rejected() {
        let (c, miss) = hitmiss(Class::HitMiss);
        let w = |look_late| Ahead {
            look_late,
            in_order: true,
            ..next_passes(miss)
        };
        assert_eq!(run(&c, Some(&w(true))).unwrap().reordered, 0);
        rejected(
            run(&c, Some(&w(false))),
            &c,
            miss,
            miss + 1,
            "before the TLB insert",
        );
    }

    #[test]
    fn a_retry_may_not_pass() {
        let (mut c, miss) = hitmiss(Class::HitMiss);
        edit(&mut c, miss + 1, |q| {
            q[field::RETRY_OF].copy_from_slice(&7u32.to_be_bytes())
        });
        rejects(&c, next_passes(miss), "retry");
    }

    #[test]
    fn a_lookup_after_the_insert_may_not_pass() {
        let (c, miss) = hitmiss(Class::HitMiss);
        rejects(
            &c,
            Ahead {
                look_late: true,
                ..next_passes(miss)
            },
            "after the earlier request's TLB insert",
        );
    }

    /// A late duplicate of an acknowledged WRITE (dropped without an
    /// answer) and then a malformed packet with the same ids, both taken in
    /// before the answer (gates seed 4056614251): the answer is the second
    /// one's, not a response the model did not send.
    #[test]
    fn a_dropped_packet_ahead_of_its_twin_is_skipped() {
        let (mut c, _) = hitmiss(Class::HitWFault);
        let pkts: Vec<(usize, Vec<u8>)> = c
            .events
            .iter()
            .enumerate()
            .filter_map(|(e, x)| match x {
                Event::Packet(p) => Some((e, p.clone())),
                _ => None,
            })
            .collect();
        let (wi, w) = pkts
            .iter()
            .position(|(_, p)| opcode(p) == Opcode::Write.raw())
            .map(|i| (i, pkts[i].1.clone()))
            .expect("a WRITE in the class");
        let sess = &w[field::SESSION];
        // A later packet of its session acknowledges it.
        let (x, _) = pkts[wi + 1..]
            .iter()
            .find(|(_, p)| &p[field::SESSION] == sess)
            .cloned()
            .expect("a later packet of the WRITE's session");
        let id = be32(&w, field::REQ_ID);
        edit(&mut c, x, |q| {
            q[field::ACK].copy_from_slice(&(id + 1).to_be_bytes())
        });
        let mut bad = w.clone();
        bad[field::STATUS] = 1;
        refill_crc(&mut bad);
        c.events.insert(x + 1, Event::Packet(w.clone()));
        c.events.insert(x + 2, Event::Packet(bad));
        c.packets += 2;
        let (log, fin) = log_of(&c, None);
        // In arrival order the duplicate's take is followed by its twin's,
        // whose answer (MALFORMED: status set) is the next line.
        let lines: Vec<&str> = log.lines().collect();
        let at = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| **l == "T")
            .nth(number(&c, x + 2))
            .unwrap()
            .0;
        assert_eq!(lines[at - 1], "T", "the duplicate is dropped");
        let o = unhex(lines[at + 1].strip_prefix("O ").unwrap()).unwrap();
        assert!(
            answers(&o, &w) && o[field::STATUS] == 5,
            "{}",
            lines[at + 1]
        );
        let k = check_events(c.initial.clone(), &stim_text(&c), &log, &fin, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((k.takes, k.reordered), (c.packets, 0));
    }

    #[test]
    fn only_a_walk_or_a_fault_may_be_passed() {
        let (c, miss) = hitmiss(Class::HitMiss);
        // Two hits: the second answered before the first.
        rejects(&c, next_passes(miss + 1), "did neither");
    }
}
