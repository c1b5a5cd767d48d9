//! Vectors for the memory node's EDM front end (`ip/edm-clio/rtl/edm_clio_node.sv`):
//! random request records written by cards into the node's inbox slots (good ones,
//! empty, short packets, bad `rsvd`, lengths past the record or the bytes written),
//! the answers the node's Clio fast path gives to each (in order; stray answers of
//! other requests besides), and what the model ([`edm_clio::serve_record`]) makes of
//! each record: nothing (a bad record), a READ's answer chain in the peer's outbox
//! slot, or the answer record WREQ'd into the card's inbox.
//!
//! The fast path here answers as Clio does: a READ with its data in answers of up
//! to 512, 1024 or 1400 payload bytes (or one error answer, or, to exercise the
//! node's answer timeout, all but the last), any other request once (or not at
//! all: a dropped duplicate), with up to `MAXANS` bytes.
//!
//! `edm-clio-node-vectors COUNT SEED NODE PEERS MAXANS OUT`: a first line `N <node>`,
//! then per record `R <peer> <slot> <bytes written, hex>`, then its `X <hex>` (stray answers, sent
//! before the request's answers) and `A <hex>` (the fast path's answers), then
//! `E bad`, `E read <outbox addr> <chain hex | -> <timeout 0|1> <dropped 0|1>` or
//! `E write <card> <inbox addr> <record hex> <timeout 0|1> <dropped 0|1>`.

use std::io::Write;

use clio_wire::clio::{field, HEADER_LEN};
use clio_wire::edm_clio::{self as map};
use edm_clio::{serve_record, NodeReply};

/// xorshift64*: reproducible from the seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The fast path's answers to request packet `p` and whether they leave the request
/// open (the node then closes it on its answer timeout).
fn answers(p: &[u8], maxans: usize, rng: &mut Rng) -> (Vec<Vec<u8>>, bool) {
    if p.is_empty() {
        // nothing to serve: the node answers an empty chain at once
        return (vec![], false);
    }
    if p.len() < HEADER_LEN {
        return (vec![], true);
    }
    let mut hdr = p[..HEADER_LEN].to_vec();
    hdr[field::OPCODE] |= 0x80;
    hdr[field::STATUS] = 0;
    let data = |n: usize, rng: &mut Rng| (0..n).map(|_| rng.next() as u8).collect::<Vec<_>>();
    if p[field::OPCODE] == 3 {
        let total = u32::from_be_bytes([p[24], p[25], p[26], p[27]]) as usize;
        let v = p[field::FLAGS] % 6;
        if v == 0 {
            let mut e = hdr;
            e[field::STATUS] = 1 + rng.below(12) as u8;
            return (vec![e], false);
        }
        let per = [512usize, 1024, 1400][p[field::STATUS] as usize % 3].min(maxans - HEADER_LEN);
        let n = total.div_ceil(per).max(1);
        let mut out: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let k = per.min(total - (per * i).min(total));
                let mut a = hdr.clone();
                a.extend(data(k, rng));
                a
            })
            .collect();
        // The last answer lost: the node's answer timeout closes the chain.
        let open = v == 5;
        if open {
            out.pop();
        }
        return (out, open);
    }
    match p[field::FLAGS] % 4 {
        0 => (vec![], true),
        1 => (vec![hdr], false),
        2 => {
            let mut a = hdr;
            a.extend_from_slice(&p[HEADER_LEN..p.len().min(HEADER_LEN + 100)]);
            (vec![a], false)
        }
        _ => {
            let mut a = hdr;
            // often the largest answer the node's buffer takes (past a record's room if that is more)
            let room = (maxans - HEADER_LEN) as u64;
            let n = if rng.below(2) == 0 {
                room - rng.below(64)
            } else {
                rng.below(room + 1)
            } as usize;
            a.extend(data(n, rng));
            (vec![a], false)
        }
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 7 {
        return Err("usage: edm-clio-node-vectors COUNT SEED NODE PEERS MAXANS OUT".into());
    }
    let count: usize = args[1].parse().map_err(|e| format!("COUNT: {e}"))?;
    let seed: u64 = args[2].parse().map_err(|e| format!("SEED: {e}"))?;
    let node: u16 = args[3].parse().map_err(|e| format!("NODE: {e}"))?;
    let peers: u16 = args[4].parse().map_err(|e| format!("PEERS: {e}"))?;
    let maxans: usize = args[5].parse().map_err(|e| format!("MAXANS: {e}"))?;
    if node >= map::MAX_PEERS || peers == 0 || peers > map::MAX_PEERS {
        return Err(format!(
            "NODE = {node}, PEERS = {peers}: node ids are below {}",
            map::MAX_PEERS
        ));
    }
    if maxans < HEADER_LEN + 512 {
        return Err(format!(
            "MAXANS = {maxans}: an answer holds at least {} bytes",
            HEADER_LEN + 512
        ));
    }
    let mut out = std::fs::File::create(&args[6]).map_err(|e| format!("{}: {e}", args[6]))?;
    let mut rng = Rng(seed | 1);
    writeln!(out, "N {node}").map_err(|e| e.to_string())?;
    for i in 0..count {
        let peer = rng.below(peers as u64) as u16;
        let slot = (i % map::SLOTS as usize) as u16;
        let seq = rng.next() as u32;
        let len = match rng.below(20) {
            0 => 0,
            1 => 1 + rng.below(HEADER_LEN as u64 - 1) as usize,
            2 => map::MAX_RECORD_PACKET - rng.below(4) as usize,
            3..=5 => HEADER_LEN + rng.below(1500) as usize,
            _ => HEADER_LEN + rng.below(120) as usize,
        };
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len > field::OPCODE {
            p[field::OPCODE] = if rng.below(2) == 0 {
                3
            } else {
                1 + rng.below(15) as u8
            };
        }
        if len >= field::TOTAL_LEN.end {
            let total: u32 = match rng.below(10) {
                0 => 0,
                1 => rng.below(20_000) as u32,
                _ => rng.below(3000) as u32,
            };
            p[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        }
        let mut rec = vec![0u8; map::RECORD_HEADER + len];
        map::emit_record(seq, &p, &mut rec).map_err(|e| e.to_string())?;
        // Bad records: rsvd set, a length past a record, or past the bytes written.
        let mut written = rec.clone();
        match rng.below(16) {
            0 => written[2] = 1 + rng.below(255) as u8,
            1 => {
                let bad = map::MAX_RECORD_PACKET as u16 + 1 + rng.below(100) as u16;
                written[0..2].copy_from_slice(&bad.to_le_bytes());
            }
            2 if len >= 16 => {
                written.truncate(map::RECORD_HEADER + len - 8 - rng.below(8) as usize)
            }
            _ => {}
        }
        // The card's WREQ moves whole words.
        while written.len() % 8 != 0 {
            written.push(rng.next() as u8);
        }
        writeln!(out, "R {peer} {slot} {}", hex(&written)).map_err(|e| e.to_string())?;
        let (ans, open) = answers(&p, maxans, &mut rng);
        let reply = serve_record(node, peer, slot, &written, |_p, o| {
            for a in &ans {
                o(a);
            }
        });
        if reply != NodeReply::Bad {
            if !p.is_empty() && rng.below(6) == 0 {
                // another request's answer (a late one): pid and req_id differ
                let mut x = vec![0u8; HEADER_LEN + rng.below(64) as usize];
                x[field::REQ_ID].copy_from_slice(&(rng.next() as u32 | 1).to_be_bytes());
                if len >= HEADER_LEN {
                    x[field::REQ_ID]
                        .iter_mut()
                        .zip(&p[field::REQ_ID])
                        .for_each(|(a, b)| *a ^= b);
                }
                writeln!(out, "X {}", hex(&x)).map_err(|e| e.to_string())?;
            }
            for a in &ans {
                writeln!(out, "A {}", hex(a)).map_err(|e| e.to_string())?;
            }
        }
        let line = match reply {
            NodeReply::Bad => "E bad".to_string(),
            NodeReply::Outbox { addr, chain } => format!(
                "E read {addr} {} {} {}",
                chain.as_deref().map_or("-".into(), hex),
                open as u8,
                chain.is_none() as u8
            ),
            NodeReply::Wreq {
                dst,
                addr,
                record,
                dropped,
            } => format!(
                "E write {dst} {addr} {} {} {}",
                hex(&record),
                open as u8,
                dropped as u8
            ),
        };
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    Ok(())
}
