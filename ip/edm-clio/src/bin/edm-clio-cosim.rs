//! Trace for the co-simulation of the whole translator RTL (`ip/edm-clio/tb/cosim`:
//! edm_clio_card on an EDM host, the EDM switch and a memory node's EDM host) against
//! the model: random Clio request packets from one card to one memory node, run
//! through [`edm_clio::ClioFabric`] with a memory node that answers each request by a
//! fixed rule (the bench's node answers by the same rule), and the answers the model
//! delivers to the card.
//!
//! The trace starts with one packet of each refusal kind (a runt, a packet past a
//! record, an unknown opcode, a response opcode, a READ past `MAX_READ`), then COUNT
//! random packets.
//!
//! `backoff=CYCLES` sets the card's first re-read wait (`reread_backoff`; the bench's
//! `REREAD_BACKOFF` must be the same).
//!
//! `edm-clio-cosim COUNT SEED OUT [clio] [backoff=CYCLES]`: lines `P <hex>` (the packets, in H2C order),
//! then `A <hex>` (each answer the model delivered, in delivery order, the card's own
//! answers to refused packets included), then `R <field> <hex>` (each leading refused
//! packet's field at fault and the card's answer to it, `-` for none), then
//! `K <refused> <carried> <timeouts> <bad records> <READ answers read again>`.

use std::io::Write;

use clio_wire::clio::{field, HEADER_LEN};
use clio_wire::edm_clio::{self as map};
use edm_clio::{ClioFabric, ClioFabricConfig};

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

/// The memory node's answers to `p` (tb/cosim/test_edm_clio_cosim.py `respond` is
/// the same rule): a READ of `n` bytes gets one answer per 512 bytes (at least
/// one), each the request's header with the response bit set and its share of
/// data, so that the chain is exactly `read_demand(n)` bytes; any other request
/// gets no answer, its header, its header and up to 100 payload bytes, or its
/// header twice, by its byte 2.
///
/// With `clio` (the whole-path co-simulation, `tb/path`, where the memory node's
/// RTL front end collects the answers as Clio gives them) every answer has status
/// OK and a request other than a READ gets at most one answer (its header twice
/// becomes its header once).
fn respond(p: &[u8], clio: bool) -> Vec<Vec<u8>> {
    let mut hdr = p[..HEADER_LEN].to_vec();
    hdr[field::OPCODE] |= 0x80;
    if clio {
        hdr[field::STATUS] = 0;
    }
    if p[field::OPCODE] == 3 {
        let total = u32::from_be_bytes([p[24], p[25], p[26], p[27]]) as usize;
        let per = map::READ_ANSWER_PAYLOAD as usize;
        let n = total.div_ceil(per).max(1);
        return (0..n)
            .map(|i| {
                let k = per.min(total - (per * i).min(total));
                let mut a = hdr.clone();
                a.extend((0..k).map(|j| (p[0] as usize + i + j) as u8));
                a
            })
            .collect();
    }
    match p[2] % 4 {
        0 => vec![],
        1 => vec![hdr],
        2 => {
            let mut a = hdr;
            a.extend_from_slice(&p[HEADER_LEN..p.len().min(HEADER_LEN + 100)]);
            vec![a]
        }
        _ if clio => vec![hdr],
        _ => vec![hdr.clone(), hdr],
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: edm-clio-cosim COUNT SEED OUT [clio] [backoff=CYCLES]";
    if args.len() < 4 {
        return Err(usage.into());
    }
    let mut clio = false;
    let mut cfg = ClioFabricConfig::new(1, 1);
    for a in &args[4..] {
        match a.split_once('=') {
            None if a == "clio" => clio = true,
            Some(("backoff", v)) => {
                cfg.reread_backoff = v.parse().map_err(|e| format!("backoff: {e}"))?;
            }
            _ => return Err(format!("{a}: {usage}")),
        }
    }
    let count: usize = args[1].parse().map_err(|e| format!("COUNT: {e}"))?;
    let seed: u64 = args[2].parse().map_err(|e| format!("SEED: {e}"))?;
    let mut out = std::fs::File::create(&args[3]).map_err(|e| format!("{}: {e}", args[3]))?;
    let mut rng = Rng(seed | 1);
    let node = |_from: u16, p: &[u8], out: &mut dyn FnMut(&[u8])| {
        for a in respond(p, clio) {
            out(&a);
        }
    };
    let mut f = ClioFabric::new(cfg, vec![node])?;
    let mut refused = 0;
    let mut lines = Vec::new();
    let mut refusals = Vec::new();
    // One packet of each refusal kind: (length, opcode, total_len).
    for (len, op, total) in [
        (20, 4, 0),
        (map::MAX_RECORD_PACKET + 12, 4, 8),
        (HEADER_LEN + 8, 0x7e, 8),
        (HEADER_LEN, 0x83, 64),
        (HEADER_LEN, 3, map::MAX_READ + 1),
    ] {
        let mut p: Vec<u8> = (0..len.max(HEADER_LEN)).map(|_| rng.next() as u8).collect();
        p[field::OPCODE] = op;
        p[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        p.truncate(len);
        let e = f
            .submit(0, &p)
            .expect_err("every leading packet is one the card refuses");
        refused += 1;
        let answer = edm_clio::refusal_answer(&p, &e).map_or("-".to_string(), |a| hex(&a));
        refusals.push(format!("R {} {answer}", e.field));
        lines.push(format!("P {}", hex(&p)));
    }
    for _ in 0..count {
        let len = HEADER_LEN
            + match rng.below(4) {
                0 => rng.below(8),
                1 => rng.below(1900),
                _ => rng.below(200),
            } as usize;
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        p[field::OPCODE] = match rng.below(16) {
            0 => 0x80 | rng.below(16) as u8,
            1..=7 => 3,
            _ => 1 + rng.below(15) as u8,
        };
        let total: u32 = match rng.below(16) {
            0 => map::MAX_READ + 1 + rng.below(100) as u32,
            1 => 0,
            2 => rng.below(6000) as u32,
            _ => rng.below(700) as u32,
        };
        p[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        if f.submit(0, &p).is_err() {
            refused += 1;
        }
        lines.push(format!("P {}", hex(&p)));
    }
    if !f.run_until_idle(50_000_000) {
        return Err("the model did not go idle".into());
    }
    for a in f.take_answers() {
        lines.push(format!("A {}", hex(&a.packet)));
    }
    lines.extend(refusals);
    let c = f.counters;
    lines.push(format!(
        "K {refused} {} {} {} {}",
        c.carried, c.timeouts, c.bad_records, c.rereads
    ));
    for l in lines {
        writeln!(out, "{l}").map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}
