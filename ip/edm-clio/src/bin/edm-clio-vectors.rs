//! Vectors for the translator RTL's bench (`ip/edm-clio/tb`): random H2C packets and
//! what the mapping of `clio_wire::edm_clio` does with each.
//!
//! `edm-clio-vectors COUNT SEED OUT`: one line per packet,
//! `P <len> <hex bytes> <carry> <refuse> <demand>` (`carry`/`refuse` codes as in
//! `edm_clio::carry` and `edm_clio::refuse`, demand 0 unless a READ).

use std::io::Write;

use clio_wire::clio::{field, HEADER_LEN};
use clio_wire::edm_clio::{self as map, carry, Carriage};

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

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        return Err("usage: edm-clio-vectors COUNT SEED OUT".into());
    }
    let count: usize = args[1].parse().map_err(|e| format!("COUNT: {e}"))?;
    let seed: u64 = args[2].parse().map_err(|e| format!("SEED: {e}"))?;
    let mut out = std::fs::File::create(&args[3]).map_err(|e| format!("{}: {e}", args[3]))?;
    let mut rng = Rng(seed | 1);
    for _ in 0..count {
        let len = match rng.below(10) {
            0 => rng.below(HEADER_LEN as u64) as usize,
            1 => map::MAX_RECORD_PACKET + rng.below(64) as usize,
            2 => map::MAX_RECORD_PACKET - rng.below(2) as usize,
            _ => HEADER_LEN + rng.below(1500) as usize,
        };
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len > field::OPCODE {
            p[field::OPCODE] = match rng.below(8) {
                0 => rng.next() as u8,
                1 => 0x80 | rng.below(0x10) as u8,
                2..=4 => 0x03,
                _ => 1 + rng.below(0x0f) as u8,
            };
        }
        if len >= field::TOTAL_LEN.end {
            let total: u32 = match rng.below(6) {
                0 => rng.next() as u32,
                1 => map::MAX_READ + rng.below(3) as u32 - 1,
                2 => 0,
                _ => rng.below(9000) as u32,
            };
            p[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        }
        let opcode = p.get(field::OPCODE).copied().unwrap_or(0);
        let total = p
            .get(field::TOTAL_LEN)
            .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let (c, r, d) = match map::carriage(opcode, total, len) {
            Ok(Carriage::Read { demand }) => (carry::READ, 0, demand),
            Ok(Carriage::Write) => (carry::WRITE, 0, 0),
            Err(e) => (carry::REFUSE, map::refuse_code(&e), 0),
        };
        let hex: String = p.iter().map(|b| format!("{b:02x}")).collect();
        let hex = if hex.is_empty() { "-".to_string() } else { hex };
        writeln!(out, "P {len} {hex} {c} {r} {d}").map_err(|e| e.to_string())?;
    }
    Ok(())
}
