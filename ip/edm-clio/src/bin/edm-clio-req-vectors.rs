//! Vectors for the translator's request stage (`ip/edm-clio/rtl/edm_clio_req.sv`): a
//! card's stream of random H2C packets and what the model ([`edm_clio::plan`]) makes
//! of each: refused, or the request record (with its sequence number) and, for a
//! READ, the RREQ's length; plus the mailbox addresses of the card's slots.
//!
//! `edm-clio-req-vectors COUNT SEED CARD OUT`: a first line
//! `S <card> <inbox addr of slot 0..SLOTS-1> <outbox addr of slot 0..SLOTS-1>`, then one line
//! per packet, `P <len> <hex|-> <refused 0|1> <record hex|-> <rreq len, 0 if none>`.

use std::io::Write;

use clio_wire::clio::{field, HEADER_LEN};
use clio_wire::edm_clio::{self as map};
use edm_clio::plan;

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

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        return Err("usage: edm-clio-req-vectors COUNT SEED CARD OUT".into());
    }
    let count: usize = args[1].parse().map_err(|e| format!("COUNT: {e}"))?;
    let seed: u64 = args[2].parse().map_err(|e| format!("SEED: {e}"))?;
    let card: u16 = args[3].parse().map_err(|e| format!("CARD: {e}"))?;
    if card >= map::MAX_PEERS {
        return Err(format!("CARD = {card}: at most {}", map::MAX_PEERS - 1));
    }
    let mut out = std::fs::File::create(&args[4]).map_err(|e| format!("{}: {e}", args[4]))?;
    let mut rng = Rng(seed | 1);
    let mut head = format!("S {card}");
    for s in 0..map::SLOTS {
        head += &format!(" {}", map::inbox_addr(card, s));
    }
    for s in 0..map::SLOTS {
        head += &format!(" {}", map::outbox_addr(card, s));
    }
    writeln!(out, "{head}").map_err(|e| e.to_string())?;
    let mut seq = 0u32;
    for _ in 0..count {
        let len = match rng.below(12) {
            0 => 1 + rng.below(HEADER_LEN as u64 - 1) as usize,
            1 => map::MAX_RECORD_PACKET + 1 + rng.below(20) as usize,
            2 => map::MAX_RECORD_PACKET - rng.below(2) as usize,
            3 => HEADER_LEN + rng.below(8) as usize,
            _ => HEADER_LEN + rng.below(1500) as usize,
        };
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len > field::OPCODE {
            p[field::OPCODE] = match rng.below(8) {
                0 => rng.next() as u8,
                1..=3 => 0x03,
                _ => 1 + rng.below(0x0f) as u8,
            };
        }
        if len >= field::TOTAL_LEN.end {
            let total: u32 = match rng.below(6) {
                0 => map::MAX_READ + rng.below(3) as u32 - 1,
                1 => 0,
                _ => rng.below(9000) as u32,
            };
            p[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        }
        let line = match plan(card, 0, seq.wrapping_add(1), &p) {
            Ok(c) => {
                seq = seq.wrapping_add(1);
                let rreq = c.rreq.map_or(0, |(_, n)| n);
                format!("P {len} {} 0 {} {rreq}", hex(&p), hex(&c.record))
            }
            Err(_) => format!("P {len} {} 1 - 0", hex(&p)),
        };
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    Ok(())
}
