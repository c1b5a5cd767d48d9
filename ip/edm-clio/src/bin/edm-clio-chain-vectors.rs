//! Vectors for the translator's return stage (`ip/edm-clio/rtl/edm_clio_chain.sv`):
//! random answers as they land in the card's EDM memory (READ answer chains, and
//! records holding a chain), some stale, truncated or corrupted, and what the model
//! ([`edm_clio::unpack_answer`]) delivers from each.
//!
//! `edm-clio-chain-vectors COUNT SEED OUT`: one line per answer,
//! `A <record 0|1> <seq> <len> <hex bytes|-> <ok 0|1> <frees 0|1> <packets> <hex packet>...`.

use std::io::Write;

use clio_wire::edm_clio::{self as map};
use edm_clio::unpack_answer;

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
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn one(rng: &mut Rng) -> (bool, u32, Vec<u8>) {
    let seq = rng.next() as u32;
    let record = rng.below(2) == 0;
    let mut packets = Vec::new();
    let mut room = map::MAX_RECORD_PACKET - 6;
    for _ in 0..rng.below(5) {
        let n = 1 + match rng.below(4) {
            0 => rng.below(8),
            1 => rng.below(1200),
            _ => rng.below(130),
        } as usize;
        if n + 2 > room {
            break;
        }
        room -= n + 2;
        packets.push(rng.bytes(n));
    }
    let mut chain = vec![0u8; map::MAX_RECORD_PACKET];
    let n = map::emit_chain(seq, packets.iter().map(|p| p.as_slice()), &mut chain)
        .expect("the chain fits by construction");
    chain.truncate(n);
    match rng.below(12) {
        // Cut short, anywhere (also inside the seq, a length or a packet).
        0 | 1 => chain.truncate(rng.below(n as u64 + 1) as usize),
        // A length prefix overwritten.
        2 if n > 6 => {
            let mut at = 4;
            let skip = rng.below(packets.len() as u64 + 1);
            for p in packets.iter().take(skip as usize) {
                at += 2 + p.len();
            }
            let v = rng.next() as u16;
            chain[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
        // Bytes after the terminator (an RREQ longer than the chain).
        3 => {
            let extra = rng.below(20) as usize;
            chain.extend(rng.bytes(extra));
        }
        _ => {}
    }
    // A stale answer: the slot awaits another seq.
    let want = if rng.below(8) == 0 {
        seq ^ (1 + rng.below(u32::MAX as u64) as u32)
    } else {
        seq
    };
    if !record {
        return (false, want, chain);
    }
    let mut rec = vec![0u8; map::RECORD_HEADER + chain.len()];
    map::emit_record(rng.next() as u32, &chain, &mut rec).expect("fits by construction");
    match rng.below(12) {
        0 => rec[2] = 1 + rng.below(255) as u8,
        // A length past the record: the memory beyond is whatever it holds, up to
        // the inbox slot's end.
        1 => {
            let len = chain.len() + 1 + rng.below(5000) as usize;
            rec[0..2].copy_from_slice(&(len as u16).to_le_bytes());
            let end = (map::RECORD_HEADER + len).min(map::INBOX_SLOT_BYTES as usize);
            let extra = end - rec.len();
            rec.extend(rng.bytes(extra));
        }
        _ => {}
    }
    (true, want, rec)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        return Err("usage: edm-clio-chain-vectors COUNT SEED OUT".into());
    }
    let count: usize = args[1].parse().map_err(|e| format!("COUNT: {e}"))?;
    let seed: u64 = args[2].parse().map_err(|e| format!("SEED: {e}"))?;
    let mut out = std::fs::File::create(&args[3]).map_err(|e| format!("{}: {e}", args[3]))?;
    let mut rng = Rng(seed | 1);
    for _ in 0..count {
        let (record, want, bytes) = one(&mut rng);
        let u = unpack_answer(&bytes, record, want);
        let mut line = format!(
            "A {} {want} {} {} {} {} {}",
            record as u8,
            bytes.len(),
            hex(&bytes),
            u.ok as u8,
            u.frees as u8,
            u.packets.len()
        );
        for p in &u.packets {
            line.push(' ');
            line.push_str(&hex(p));
        }
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    Ok(())
}
