//! Stimulus and expected-output vectors for the RTL benches, produced by the Rust models
//! (the RTL must reproduce them exactly). Text, one operation per line.

use std::fmt::Write;

use clio_wire::edm::Block66;
use edm_pim::{Config, Notification, Priority, Scheduler};

use crate::phy::{frame_blocks, MemBlock, RxDemux};

/// Small xorshift generator so a vector file is a pure function of its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (0 is remapped).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    /// Next 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Scheduler trace for `edm_pim_sched`: lines
/// `N time src dst bytes tag ok`, `RS port`, `RD port`, `I time`, then the model's
/// `Q dst src` requests and `M src dst tag len last` matches, closed by `E`.
pub fn pim_trace(
    ports: usize,
    depth: u32,
    srpt: bool,
    chunk: u32,
    steps: usize,
    seed: u64,
) -> String {
    let mut cfg = Config::new(ports).with_active_per_pair(depth);
    cfg.chunk_bytes = chunk;
    if srpt {
        cfg = cfg.with_priority(Priority::Srpt);
    }
    let mut s = Scheduler::new(cfg).expect("valid bench config");
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let mut tag = 0u64;
    for step in 0..steps {
        let now = step as u64 * 3;
        for _ in 0..rng.below(ports as u64 + 1) {
            let src = rng.below(ports as u64) as u16;
            let dst = rng.below(ports as u64) as u16;
            let bytes = if rng.below(8) == 0 {
                0
            } else {
                1 + rng.below(1200)
            };
            let n = Notification {
                src,
                dst,
                bytes,
                id: tag & 0xffff,
            };
            let ok = s.notify(now, n).is_ok();
            let _ = writeln!(
                out,
                "N {now} {src} {dst} {bytes} {} {}",
                tag & 0xffff,
                ok as u8
            );
            tag += 1;
        }
        for p in 0..ports as u16 {
            if s.src_busy_until(p).is_some() && rng.below(3) == 0 {
                s.release_src(p);
                let _ = writeln!(out, "RS {p}");
            }
            if s.dst_busy_until(p).is_some() && rng.below(3) == 0 {
                s.release_dst(p);
                let _ = writeln!(out, "RD {p}");
            }
        }
        let it = s.iterate(now, 1);
        let _ = writeln!(out, "I {now}");
        for r in &it.requests {
            let _ = writeln!(out, "Q {} {}", r.dst, r.src);
        }
        for m in &it.matches {
            let _ = writeln!(
                out,
                "M {} {} {} {} {}",
                m.src, m.dst, m.id, m.len, m.last as u8
            );
        }
        let _ = writeln!(out, "E");
    }
    out
}

fn hex(b: &Block66) -> String {
    format!("{:x} {:016x}", b.sync, b.payload)
}

/// RX-shim trace for `edm_rx_demux`: a random mix of frames, memory messages, idles and bad
/// blocks. Lines `B sync payload` (input block) followed by the model's outputs for that
/// cycle: `O sync payload` (decoder side) and `M class sync payload` (memory side, class
/// 1 = start, 2 = data, 3 = end, 4 = single, 5 = notify, 6 = grant), closed by `C` with the
/// counters `unknown truncated stray bad_sync` after the last block.
pub fn rx_trace(blocks: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let stream = random_stream(&mut rng, blocks);
    let mut rx = RxDemux::new();
    let mut out = String::new();
    for b in &stream {
        let (mem, dec) = rx.tick(*b);
        let _ = writeln!(out, "B {}", hex(b));
        let _ = writeln!(out, "O {}", hex(&dec));
        if let Some(m) = mem {
            let (c, blk) = mem_class(m);
            let _ = writeln!(out, "M {c} {}", hex(&blk));
        }
    }
    let c = rx.counters;
    let _ = writeln!(
        out,
        "C {} {} {} {}",
        c.unknown_type, c.truncated, c.stray_memory, c.bad_sync
    );
    out
}

/// A random block stream as a sender would produce it: frames (sometimes interrupted by whole
/// memory messages, i.e. preempted), idles, /N/ /G/ blocks, and rare bad blocks.
pub fn random_stream(rng: &mut Rng, blocks: usize) -> Vec<Block66> {
    use clio_wire::edm::{GrantRepr, MsgHeader, MsgKind, NotifyRepr};
    let mut out = Vec::with_capacity(blocks + 64);
    let mut pending_frame: Vec<Block66> = Vec::new();
    let mut fi = 0;
    while out.len() < blocks {
        match rng.below(12) {
            0..=3 => {
                if fi >= pending_frame.len() {
                    let len = 8 + rng.below(200) as usize;
                    let f: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    pending_frame = frame_blocks(&f);
                    fi = 0;
                }
                let n = 1 + rng.below(6) as usize;
                for _ in 0..n {
                    if fi < pending_frame.len() {
                        out.push(pending_frame[fi]);
                        fi += 1;
                    }
                }
            }
            4..=5 => {
                let len = 1 + rng.below(100) as u16;
                let h = MsgHeader {
                    kind: MsgKind::Rres,
                    last: true,
                    op: None,
                    peer: rng.below(512) as u16,
                    id: rng.next_u64() as u8,
                    len,
                };
                let body: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                out.extend(crate::assemble::encode(&h, &body).expect("valid RRES"));
            }
            6 => out.push(
                NotifyRepr {
                    peer: 3,
                    id: rng.next_u64() as u8,
                    size: 1 + rng.below(9000) as u16,
                }
                .emit(),
            ),
            7 => out.push(
                GrantRepr {
                    peer: 1,
                    id: rng.next_u64() as u8,
                    len: 256,
                    kind: MsgKind::Wreq,
                }
                .emit(),
            ),
            8 => {
                // A truncated message or a stray /MT/.
                let h = MsgHeader::rreq(2, 3, 64);
                let m = crate::assemble::encode(&h, &[1; 8]).expect("valid RREQ");
                out.push(if rng.below(2) == 0 { m[0] } else { m[1] });
            }
            9 => {
                if rng.below(4) == 0 {
                    out.push(Block66::control(0x77, [0; 7]));
                } else {
                    out.push(Block66 {
                        sync: 0b11,
                        payload: rng.next_u64(),
                    });
                }
            }
            _ => {
                if fi >= pending_frame.len() {
                    out.push(Block66::IDLE);
                }
            }
        }
    }
    out
}

/// TX-shim trace for `edm_tx_mux`: per cycle, `U n` then `n` lines `K sync payload` for a
/// memory unit queued this cycle, `E offered ready sync payload` for the encoder side, and
/// the model's output `O sync payload source` (0 idle, 1 encoder, 2 memory). Frames and
/// memory units arrive at random, so frames get preempted and IFGs reused.
pub fn tx_trace(cycles: usize, fair: bool, seed: u64) -> String {
    let mut src = TxSource::new(fair, seed);
    let mut out = String::new();
    for _ in 0..cycles {
        let (b, s) = src.step(&mut out);
        let _ = writeln!(out, "O {} {s}", hex(&b));
    }
    out
}

/// Whole-shim loopback trace for `edm_phy_shim`: the TX lines of [`tx_trace`] (without
/// `O`), then `W sync payload` for the line block (after the scrambler; `X` before it when
/// its sync header is corrupted on the wire, cycles `corrupt_from..corrupt_from+corrupt_len`),
/// and the RX results `D sync payload` (decoder side) and `M class sync payload`. Ends with
/// `L link_down`.
pub fn phy_trace(
    cycles: usize,
    fair: bool,
    seed: u64,
    corrupt_from: usize,
    corrupt_len: usize,
) -> String {
    use crate::phy::{Descrambler, LinkMonitor, Scrambler};
    let mut src = TxSource::new(fair, seed);
    let mut scr = Scrambler::default();
    let mut des = Descrambler::default();
    let mut mon = LinkMonitor::new();
    let mut rx = RxDemux::new();
    let mut out = String::new();
    for c in 0..cycles {
        let (b, _) = src.step(&mut out);
        let mut w = scr.scramble(b);
        if (corrupt_from..corrupt_from + corrupt_len).contains(&c) {
            w.sync = if w.sync == 0b01 { 0b11 } else { 0b00 };
            let _ = writeln!(out, "X");
        }
        let _ = writeln!(out, "W {}", hex(&w));
        let d = des.descramble(w);
        let d = if mon.observe(c as u64, &d) {
            d
        } else {
            crate::phy::error_block()
        };
        let (mem, dec) = rx.tick(d);
        let _ = writeln!(out, "D {}", hex(&dec));
        if let Some(m) = mem {
            let (k, blk) = mem_class(m);
            let _ = writeln!(out, "M {k} {}", hex(&blk));
        }
    }
    let _ = writeln!(out, "L {}", mon.disabled_at().is_some() as u8);
    out
}

fn mem_class(m: MemBlock) -> (u8, Block66) {
    match m {
        MemBlock::Start(b) => (1, b),
        MemBlock::Data(b) => (2, b),
        MemBlock::End(b) => (3, b),
        MemBlock::Single(b) => (4, b),
        MemBlock::Notify(b) => (5, b),
        MemBlock::Grant(b) => (6, b),
    }
}

/// Random sender side of a TX shim: frames from a MAC, memory units from the host stack.
struct TxSource {
    rng: Rng,
    tx: crate::phy::TxMux,
    ip: std::collections::VecDeque<Block66>,
}

impl TxSource {
    fn new(fair: bool, seed: u64) -> Self {
        use crate::phy::{TxMux, TxPolicy};
        TxSource {
            rng: Rng::new(seed),
            tx: TxMux::new(if fair {
                TxPolicy::Fair
            } else {
                TxPolicy::StrictMemory
            }),
            ip: Default::default(),
        }
    }

    /// One cycle: queue traffic, offer an encoder block, tick; writes `U`/`K`/`E` lines.
    fn step(&mut self, out: &mut String) -> (Block66, u8) {
        use crate::phy::{MemUnit, TxSource as Src};
        use clio_wire::edm::{GrantRepr, MsgHeader, MsgKind, NotifyRepr};
        let rng = &mut self.rng;
        if self.ip.is_empty() && rng.below(30) == 0 {
            let len = 8 + rng.below(400) as usize;
            let f: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            self.ip.extend(frame_blocks(&f));
        }
        if rng.below(10) == 0 {
            let blocks = match rng.below(3) {
                0 => vec![NotifyRepr {
                    peer: 1,
                    id: rng.next_u64() as u8,
                    size: 64,
                }
                .emit()],
                1 => vec![GrantRepr {
                    peer: 2,
                    id: rng.next_u64() as u8,
                    len: 64,
                    kind: MsgKind::Wreq,
                }
                .emit()],
                _ => {
                    let len = rng.below(80) as u16;
                    let h = MsgHeader {
                        kind: MsgKind::Rres,
                        last: true,
                        op: None,
                        peer: 3,
                        id: 1,
                        len,
                    };
                    let body: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    crate::assemble::encode(&h, &body).expect("valid RRES")
                }
            };
            let _ = writeln!(out, "U {}", blocks.len());
            for b in &blocks {
                let _ = writeln!(out, "K {}", hex(b));
            }
            self.tx.push_memory(MemUnit { blocks });
        }
        let ready = self.tx.encoder_ready();
        let offer = if ready {
            match self.ip.pop_front() {
                Some(b) => Some(b),
                // An encoder emits idles whenever the MAC is quiet; offering them while memory
                // is queued exercises IFG reuse.
                None if self.tx.is_idle() || rng.below(2) == 0 => Some(Block66::IDLE),
                None => None,
            }
        } else {
            None
        };
        match offer {
            Some(b) => {
                let _ = writeln!(out, "E 1 {} {}", ready as u8, hex(&b));
                self.tx.push_encoder(b).expect("ready checked");
            }
            None => {
                let _ = writeln!(out, "E 0 {} 1 {:016x}", ready as u8, Block66::IDLE.payload);
            }
        }
        let (b, src) = self.tx.tick();
        let s = match src {
            Src::Idle => 0,
            Src::Encoder => 1,
            Src::Memory(_) => 2,
        };
        (b, s)
    }
}

/// Forwarding trace for `edm_sw_forward`, from [`crate::forward::Forwarder`]. Per cycle:
/// `I port class sync payload` ingress blocks, `G port kind id dst len` grants (applied after
/// the ingress blocks, as the switch does), `T port` for egress ports whose TX shim is
/// mid-unit; the model's `A port class sync payload` (passed on to the notification path)
/// and `F port sync payload` (forwarded block sent by the egress); `Z` ends the cycle.
/// `C forwarded no_circuit` at the end.
pub fn fwd_trace(ports: usize, cycles: usize, seed: u64) -> String {
    use crate::forward::{Circuit, Forwarder};
    use clio_wire::edm::{MsgHeader, MsgKind, NotifyRepr};
    let mut rng = Rng::new(seed);
    let mut f = Forwarder::new(ports, 4);
    let mut out = String::new();
    // Per ingress: blocks still to send (class, block), and grants to announce first.
    let mut sending: Vec<std::collections::VecDeque<MemBlock>> = vec![Default::default(); ports];
    let classify = |blocks: Vec<Block66>, cut: Option<usize>| -> Vec<MemBlock> {
        let n = blocks.len();
        let mut v: Vec<MemBlock> = blocks
            .into_iter()
            .enumerate()
            .map(|(i, b)| match (i, n) {
                (0, 1) => MemBlock::Single(b),
                (0, _) => MemBlock::Start(b),
                (i, n) if i == n - 1 => MemBlock::End(b),
                _ => MemBlock::Data(b),
            })
            .collect();
        if let Some(k) = cut {
            v.truncate(k.max(1));
        }
        v
    };
    for now in 0..cycles as u64 {
        let mut grants = Vec::new();
        let mut fresh = vec![false; ports];
        for p in 0..ports {
            if sending[p].is_empty() && rng.below(3) == 0 {
                fresh[p] = true;
                let mut dst = rng.below(ports as u64 - 1) as u16;
                if dst >= p as u16 {
                    dst += 1;
                }
                let kind = if rng.below(2) == 0 {
                    MsgKind::Wreq
                } else {
                    MsgKind::Rres
                };
                let len = 1 + rng.below(90) as u16;
                let id = rng.below(4) as u8;
                let h = MsgHeader {
                    kind,
                    last: true,
                    op: None,
                    peer: dst,
                    id,
                    len,
                };
                let body: Vec<u8> = (0..h.body_len()).map(|_| rng.next_u64() as u8).collect();
                let blocks = crate::assemble::encode(&h, &body).expect("valid chunk");
                match rng.below(10) {
                    0..=5 => {
                        // Granted now, sent from the next cycle on (sometimes cut short).
                        let glen = len + rng.below(3) as u16 * 8;
                        grants.push((
                            p as u16,
                            Circuit {
                                kind,
                                id,
                                dst,
                                len: glen,
                            },
                        ));
                        let cut =
                            (rng.below(8) == 0).then(|| rng.below(blocks.len() as u64) as usize);
                        sending[p].extend(classify(blocks, cut));
                    }
                    6 => sending[p].extend(classify(blocks, None)),
                    7 => {
                        let r = MsgHeader::rreq(dst, id, len);
                        sending[p].extend(classify(
                            crate::assemble::encode(&r, &[3; 8]).expect("valid RREQ"),
                            None,
                        ));
                    }
                    _ => sending[p].push_back(MemBlock::Notify(
                        NotifyRepr {
                            peer: dst,
                            id,
                            size: len,
                        }
                        .emit(),
                    )),
                }
            }
        }
        for p in 0..ports {
            if fresh[p] || rng.below(6) == 0 {
                // A gap: the RX shim had a frame or idle block this cycle (and a new chunk's
                // grant reaches the circuit table before its first block).
                continue;
            }
            let Some(m) = sending[p].pop_front() else {
                continue;
            };
            let (c, b) = mem_class(m);
            let _ = writeln!(out, "I {p} {c} {}", hex(&b));
            if let Some(back) = f.ingress(now, p as u16, m) {
                let (c, b) = mem_class(back);
                let _ = writeln!(out, "A {p} {c} {}", hex(&b));
            }
        }
        for (p, c) in grants {
            f.grant(p, c);
            let _ = writeln!(out, "G {p} {} {} {} {}", c.kind as u8, c.id, c.dst, c.len);
        }
        for d in 0..ports {
            let mid = rng.below(5) == 0;
            if mid {
                let _ = writeln!(out, "T {d}");
            }
            if let Some(b) = f.egress(now, d as u16, mid) {
                let _ = writeln!(out, "F {d} {}", hex(&b));
            }
        }
        let _ = writeln!(out, "Z");
    }
    let _ = writeln!(out, "C {} {}", f.counters.forwarded, f.counters.no_circuit);
    out
}

/// Convergence trace for `edm_pim_sched`: `rounds` times, every port is released (`RS`/`RD`),
/// a random demand (each pair with probability ½, random arrival) is notified, then PIM
/// iterates until an iteration finds no request; `S` opens each round. Same line format as
/// [`pim_trace`], so the bench checks every iteration and counts iterations per maximal
/// matching.
pub fn pim_converge_trace(ports: usize, rounds: usize, seed: u64) -> String {
    let mut cfg = Config::new(ports).with_active_per_pair(2);
    cfg.chunk_bytes = 256;
    let mut s = Scheduler::new(cfg).expect("valid bench config");
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let mut tag = 0u64;
    let mut now = 0u64;
    for _ in 0..rounds {
        let _ = writeln!(out, "S");
        for p in 0..ports as u16 {
            if s.src_busy_until(p).is_some() {
                s.release_src(p);
                let _ = writeln!(out, "RS {p}");
            }
            if s.dst_busy_until(p).is_some() {
                s.release_dst(p);
                let _ = writeln!(out, "RD {p}");
            }
        }
        for src in 0..ports as u16 {
            for dst in 0..ports as u16 {
                if src != dst && rng.below(2) == 0 && s.can_notify(src, dst) {
                    let t = now + rng.below(1000);
                    let n = Notification {
                        src,
                        dst,
                        bytes: 64 + rng.below(512),
                        id: tag & 0xffff,
                    };
                    let ok = s.notify(t, n).is_ok();
                    let _ = writeln!(
                        out,
                        "N {t} {src} {dst} {} {} {}",
                        n.bytes,
                        tag & 0xffff,
                        ok as u8
                    );
                    tag += 1;
                }
            }
        }
        now += 1000;
        loop {
            let it = s.iterate(now, 1);
            let _ = writeln!(out, "I {now}");
            for r in &it.requests {
                let _ = writeln!(out, "Q {} {}", r.dst, r.src);
            }
            for m in &it.matches {
                let _ = writeln!(
                    out,
                    "M {} {} {} {} {}",
                    m.src, m.dst, m.id, m.len, m.last as u8
                );
            }
            let _ = writeln!(out, "E");
            now += 3;
            if it.requests.is_empty() {
                break;
            }
        }
    }
    out
}

/// Encoder trace for `edm_msg_encoder`: per message `H kind last op peer id len`, the body as
/// little-endian words `W word`, then the expected blocks `K sync payload` (or `X` when the
/// header is invalid and must be flagged), closed by `E`.
pub fn enc_trace(count: usize, seed: u64) -> String {
    use clio_wire::edm::{MsgHeader, MsgKind, RmwOp};
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    for _ in 0..count {
        let kind = MsgKind::ALL[rng.below(4) as usize];
        let op = (kind == MsgKind::Rmwreq).then(|| RmwOp::ALL[rng.below(4) as usize]);
        let mut len = match (kind, op) {
            (MsgKind::Rmwreq, Some(o)) => o.response_bytes(),
            (MsgKind::Rres, _) => rng.below(70) as u16,
            _ => 1 + rng.below(70) as u16,
        };
        let last = matches!(kind, MsgKind::Rreq | MsgKind::Rmwreq) || rng.below(2) == 0;
        if rng.below(12) == 0 && kind == MsgKind::Rreq {
            len = 0; // invalid: an RREQ for no bytes
        }
        let h = MsgHeader {
            kind,
            last,
            op,
            peer: rng.below(512) as u16,
            id: rng.next_u64() as u8,
            len,
        };
        let body: Vec<u8> = (0..h.body_len()).map(|_| rng.next_u64() as u8).collect();
        let op_code = op.map_or(0, |o| o as u8);
        let _ = writeln!(
            out,
            "H {} {} {op_code} {} {} {}",
            kind as u8, last as u8, h.peer, h.id, h.len
        );
        for chunk in body.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            let _ = writeln!(out, "W {:016x}", u64::from_le_bytes(w));
        }
        match crate::assemble::encode(&h, &body) {
            Ok(blocks) => {
                for b in &blocks {
                    let _ = writeln!(out, "K {}", hex(b));
                }
            }
            Err(_) => {
                let _ = writeln!(out, "X");
            }
        }
        let _ = writeln!(out, "E");
    }
    out
}

/// Decoder trace for `edm_msg_decoder`, from [`crate::assemble::Assembler`]: memory-side
/// blocks `I class sync payload` (messages of every kind, some with a corrupted header or a
/// missing block, some cut short, /N/ and /G/ blocks, some invalid), and the assembler's
/// events: `M kind last op peer id len` with the body words `W word`, `N peer id size`,
/// `G peer id len kind`; `C bad_field bad_length` at the end.
pub fn dec_trace(count: usize, seed: u64) -> String {
    use crate::assemble::{Assembler, MemEvent};
    use clio_wire::edm::{GrantRepr, MsgHeader, MsgKind, NotifyRepr, RmwOp};
    let mut rng = Rng::new(seed);
    let mut asm = Assembler::new();
    let mut out = String::new();
    let mut cycle = 0u64;
    let mut feed = |m: MemBlock, out: &mut String, asm: &mut Assembler| {
        let (c, b) = mem_class(m);
        let _ = writeln!(out, "I {c} {}", hex(&b));
        match asm.push(cycle, m) {
            Some(MemEvent::Message(msg)) => {
                let h = msg.header;
                let op = h.op.map_or(0, |o| o as u8);
                let _ = writeln!(
                    out,
                    "M {} {} {op} {} {} {}",
                    h.kind as u8, h.last as u8, h.peer, h.id, h.len
                );
                for chunk in msg.body.chunks(8) {
                    let mut w = [0u8; 8];
                    w[..chunk.len()].copy_from_slice(chunk);
                    let _ = writeln!(out, "W {:016x}", u64::from_le_bytes(w));
                }
            }
            Some(MemEvent::Notify(n, _)) => {
                let _ = writeln!(out, "N {} {} {}", n.peer, n.id, n.size);
            }
            Some(MemEvent::Grant(g, _)) => {
                let _ = writeln!(out, "G {} {} {} {}", g.peer, g.id, g.len, g.kind as u8);
            }
            None => {}
        }
        cycle += 1;
    };
    for _ in 0..count {
        match rng.below(10) {
            0..=6 => {
                let kind = MsgKind::ALL[rng.below(4) as usize];
                let op = (kind == MsgKind::Rmwreq).then(|| RmwOp::ALL[rng.below(4) as usize]);
                let len = match (kind, op) {
                    (MsgKind::Rmwreq, Some(o)) => o.response_bytes(),
                    (MsgKind::Rres, _) => rng.below(60) as u16,
                    _ => 1 + rng.below(60) as u16,
                };
                let last = matches!(kind, MsgKind::Rreq | MsgKind::Rmwreq) || rng.below(2) == 0;
                let h = MsgHeader {
                    kind,
                    last,
                    op,
                    peer: rng.below(512) as u16,
                    id: rng.next_u64() as u8,
                    len,
                };
                let body: Vec<u8> = (0..h.body_len()).map(|_| rng.next_u64() as u8).collect();
                let mut blocks = crate::assemble::encode(&h, &body).expect("valid message");
                match rng.below(8) {
                    0 => blocks[0].payload |= 0x7 << 12, // op on a non-RMW kind, or a bad RMW op
                    1 if blocks.len() > 2 => {
                        blocks.remove(1); // a block lost
                    }
                    2 if blocks.len() > 1 => {
                        blocks.truncate(1 + rng.below(blocks.len() as u64 - 1) as usize)
                    } // cut short
                    _ => {}
                }
                let n = blocks.len();
                for (i, b) in blocks.into_iter().enumerate() {
                    let m = match (i, b.class()) {
                        (0, clio_wire::edm::BlockClass::Mst) => MemBlock::Single(b),
                        (0, _) => MemBlock::Start(b),
                        (_, clio_wire::edm::BlockClass::Mt) => MemBlock::End(b),
                        _ if i + 1 == n && n > 1 && b.class() == clio_wire::edm::BlockClass::Mt => {
                            MemBlock::End(b)
                        }
                        _ => MemBlock::Data(b),
                    };
                    feed(m, &mut out, &mut asm);
                }
            }
            7 => {
                let size = if rng.below(5) == 0 {
                    0
                } else {
                    1 + rng.below(9000) as u16
                };
                let b = NotifyRepr {
                    peer: rng.below(512) as u16,
                    id: rng.next_u64() as u8,
                    size: size.max(1),
                }
                .emit();
                let b = if size == 0 {
                    clio_wire::edm::Block66 {
                        sync: b.sync,
                        payload: b.payload & !(0xffff << 32),
                    }
                } else {
                    b
                };
                feed(MemBlock::Notify(b), &mut out, &mut asm);
            }
            _ => {
                let kind = MsgKind::ALL[rng.below(4) as usize];
                let g = GrantRepr {
                    peer: rng.below(512) as u16,
                    id: rng.next_u64() as u8,
                    len: 1 + rng.below(300) as u16,
                    kind: MsgKind::Wreq,
                };
                let mut b = g.emit();
                b.payload = (b.payload & !(0xff << 48)) | ((kind as u64) << 48);
                feed(MemBlock::Grant(b), &mut out, &mut asm);
            }
        }
    }
    let c = asm.counters;
    let _ = writeln!(out, "C {} {}", c.bad_field, c.bad_length);
    out
}
