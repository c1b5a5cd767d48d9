//! Test vectors of TX-descriptor validity, decided by the wire crate's
//! `Descriptor::parse`, for the RTL's `clio_desc_check` bench. The
//! checked-in copy is `ip/fastpath/tb/clio_desc_check/vectors.txt`; a test
//! fails when it drifts from the wire crate (`CLIO_BLESS=1` rewrites it).

use std::fmt::Write as _;

use clio_wire::pte::Pte;
use clio_wire::ring::{slot_field, Descriptor, Direction, SLOT_LEN};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn emit(d: &Descriptor) -> [u8; SLOT_LEN] {
    let mut s = [0u8; SLOT_LEN];
    d.emit(&mut s).expect("descriptor encodes");
    s
}

fn fix_crc(s: &mut [u8; SLOT_LEN]) {
    let crc = clio_wire::crc32c(&s[..slot_field::CRC.start]);
    s[slot_field::CRC].copy_from_slice(&crc.to_le_bytes());
}

/// `n` lines of `<slot hex> <0|1>` from `seed`: valid descriptors of every TX
/// kind (SESSION_REPLY and EPOCH included, an EPOCH of 0 too) and RX kinds,
/// then single-byte mutations with the CRC refilled or not.
pub fn desc_vectors(seed: u64, n: usize) -> String {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = String::new();
    for _ in 0..n {
        let pte = Pte {
            pid: rng.gen(),
            vpn: rng.gen_range(0..1u64 << 48),
            ppn: rng.gen(),
            perms: rng.gen_range(0..4),
            allocated: true,
            valid: rng.gen(),
            page_shift: rng.gen_range(12..=30),
        };
        let d = match rng.gen_range(0..9) {
            7 => Descriptor::SessionReply {
                tag: rng.gen(),
                pid: rng.gen(),
                req_id: rng.gen(),
                status: rng.gen(),
                session: rng.gen(),
                key: rng.gen(),
                dedup_quota: rng.gen(),
                lock_quota: rng.gen(),
                mem_quota_pages: rng.gen(),
                close: rng.gen(),
            },
            8 => Descriptor::Epoch {
                // Now and then 0, which no EPOCH may carry.
                epoch: if rng.gen_bool(0.1) { 0 } else { rng.gen() },
            },
            0 => Descriptor::PteWrite {
                bucket: rng.gen(),
                slot: rng.gen(),
                update: rng.gen(),
                pte,
            },
            1 => Descriptor::PteRemove {
                bucket: rng.gen(),
                slot: rng.gen(),
                pid: rng.gen(),
                vpn: rng.gen(),
            },
            2 => Descriptor::TlbInvalidate {
                pid: rng.gen(),
                vpn: rng.gen(),
                pages: rng.gen(),
            },
            3 => Descriptor::FreePaPush {
                page_shift: rng.gen(),
                ppn: rng.gen(),
            },
            4 => Descriptor::Reply {
                tag: rng.gen(),
                pid: rng.gen(),
                req_id: rng.gen(),
                status: rng.gen(),
                va: rng.gen(),
                size: rng.gen(),
                retries: rng.gen(),
                moved: rng.gen(),
            },
            5 => Descriptor::PaConsumed {
                pid: 1,
                vpn: 2,
                ppn: 3,
                page_shift: 12,
                bucket: 4,
                slot: 5,
            },
            _ => Descriptor::ErrorReport {
                status: 1,
                pid: 2,
                va: 3,
                opcode: 4,
                count: 5,
            },
        };
        let mut s = emit(&d);
        match rng.gen_range(0..4) {
            0 => {}
            1 => {
                let i = rng.gen_range(0..slot_field::CRC.start);
                s[i] = rng.gen();
                fix_crc(&mut s);
            }
            2 => {
                // Mutate the PTE flags/perms bytes (PteWrite's entry checks).
                let i = slot_field::A.start + rng.gen_range(14..16);
                s[i] = rng.gen();
                fix_crc(&mut s);
            }
            _ => {
                let i = rng.gen_range(0..SLOT_LEN);
                s[i] ^= 1 << rng.gen_range(0..8);
            }
        }
        let ok = Descriptor::parse(&s, Direction::Tx).is_ok();
        for b in s {
            let _ = write!(out, "{b:02x}");
        }
        let _ = writeln!(out, " {}", u8::from(ok));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tb/clio_desc_check/vectors.txt"
    );

    #[test]
    fn vectors_are_current() {
        let want = desc_vectors(0xC110, 3000);
        if std::env::var_os("CLIO_BLESS").is_some() {
            std::fs::write(PATH, &want).expect("write vectors");
        }
        let have = std::fs::read_to_string(PATH).unwrap_or_default();
        assert!(
            have == want,
            "{PATH} is stale: run CLIO_BLESS=1 cargo test -p clio-fastpath-cosim"
        );
        let valid = want.lines().filter(|l| l.ends_with(" 1")).count();
        assert!(
            valid > 500 && valid < 2500,
            "vectors must mix accepted and rejected slots ({valid})"
        );
    }
}
