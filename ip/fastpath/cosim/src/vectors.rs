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
/// kind (SESSION_REPLY, EPOCH and GATE_SET included, an EPOCH of 0 too, GATE_SETs
/// with every mode and ranges either side of their bounds) and RX kinds, then
/// single-byte mutations with the CRC refilled or not; then `n / 4`
/// `OFFLOAD_REPLY` fragments and mutations of them.
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
        let d = match rng.gen_range(0..10) {
            9 => {
                use clio_wire::ring::{GateMode, GATE_MAX_TRACKED};
                let va: u64 = if rng.gen_bool(0.3) {
                    u64::MAX - rng.gen_range(0..GATE_MAX_TRACKED + 2)
                } else {
                    rng.gen()
                };
                let len = match rng.gen_range(0..6) {
                    0 => 0,
                    1 => GATE_MAX_TRACKED + rng.gen_range(0..2),
                    2 => (u64::MAX - va).wrapping_add(rng.gen_range(0..2)),
                    3 => rng.gen_range(1..=GATE_MAX_TRACKED),
                    _ => rng.gen(),
                };
                let mode = GateMode::ALL[rng.gen_range(0..GateMode::ALL.len())];
                let d = Descriptor::GateSet {
                    entry: rng.gen(),
                    pid: rng.gen(),
                    va,
                    len,
                    mode,
                };
                if rng.gen_bool(0.1) {
                    // A mode past REJOIN (no GateMode encodes one).
                    let mut s = emit(&d);
                    s[slot_field::STATUS] = rng.gen_range(5..=255);
                    fix_crc(&mut s);
                    let ok = Descriptor::parse(&s, Direction::Tx).is_ok();
                    for b in s {
                        let _ = write!(out, "{b:02x}");
                    }
                    let _ = writeln!(out, " {}", u8::from(ok));
                    continue;
                }
                d
            }
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
    offload_vectors(&mut rng, n / 4, &mut out);
    out
}

/// `n` `OFFLOAD_REPLY` fragments (issue #16) after the others: valid ones of
/// every length class (one fragment, many, at `MAX_OFFLOAD_LEN`), then
/// lengths, counts and indices either side of their bounds, bytes after
/// the datagram's end, and the other bytes of the slot, CRC refilled.
fn offload_vectors(rng: &mut SmallRng, n: usize, out: &mut String) {
    use clio_wire::ring::{MAX_OFFLOAD_LEN, OFFLOAD_FRAGMENT};
    for _ in 0..n {
        let len: u32 = match rng.gen_range(0..5) {
            0 => rng.gen_range(1..=OFFLOAD_FRAGMENT as u32),
            1 => MAX_OFFLOAD_LEN as u32 - rng.gen_range(0..80),
            _ => rng.gen_range(1..4000),
        };
        let count = (len as usize).div_ceil(OFFLOAD_FRAGMENT) as u16;
        let index = if rng.gen_bool(0.5) {
            count - 1
        } else {
            rng.gen_range(0..count)
        };
        let used = (len as usize - usize::from(index) * OFFLOAD_FRAGMENT).min(OFFLOAD_FRAGMENT);
        let mut data = [0u8; OFFLOAD_FRAGMENT];
        rng.fill(&mut data[..used]);
        let d = Descriptor::Offload {
            tag: rng.gen(),
            seq: rng.gen(),
            len,
            index,
            count,
            data,
            dir: Direction::Tx,
        };
        let mut s = emit(&d);
        let le32 = |s: &mut [u8; SLOT_LEN], at: usize, v: u32| {
            s[at..at + 4].copy_from_slice(&v.to_le_bytes());
        };
        match rng.gen_range(0..10) {
            0..=3 => {}
            4 => {
                let v = match rng.gen_range(0..4) {
                    0 => 0,
                    1 => MAX_OFFLOAD_LEN as u32 + rng.gen_range(1..3),
                    2 => len + rng.gen_range(1..60),
                    _ => len.saturating_sub(rng.gen_range(1..60)),
                };
                le32(&mut s, slot_field::F.start, v);
            }
            5 => {
                let c = count.wrapping_add(if rng.gen() { 1 } else { 0xffff });
                le32(
                    &mut s,
                    slot_field::PID.start,
                    u32::from(index) | u32::from(c) << 16,
                );
            }
            6 => {
                let i = count + rng.gen_range(0..2);
                le32(
                    &mut s,
                    slot_field::PID.start,
                    u32::from(i) | u32::from(count) << 16,
                );
            }
            7 => {
                // A byte at or past the end (valid when inside the datagram).
                let i =
                    slot_field::A.start + rng.gen_range(used.saturating_sub(2)..OFFLOAD_FRAGMENT);
                s[i] = rng.gen_range(1..=255);
            }
            _ => {
                let i = rng.gen_range(0..slot_field::CRC.start);
                s[i] = rng.gen();
            }
        }
        fix_crc(&mut s);
        let ok = Descriptor::parse(&s, Direction::Tx).is_ok();
        for b in s {
            let _ = write!(out, "{b:02x}");
        }
        let _ = writeln!(out, " {}", u8::from(ok));
    }
}

/// Entries of the region gate the `clio_region_gate` bench is built with.
pub const GATE_BENCH_ENTRIES: usize = 8;

/// Region-gate vectors for the `clio_region_gate` bench, decided by the
/// model's [`clio_fastpath::GateTable`] (`ENTRIES` = [`GATE_BENCH_ENTRIES`]).
/// One operation per line:
///
/// ```text
/// S entry pid va len mode ok        a GATE_SET (ok: the entry exists)
/// C                                 an EPOCH: every entry cleared
/// Q pid va len class v a b tpid tva a request and the model's verdict:
///                                   v 0 serve, 1 refuse (a = status),
///                                   2 report (a = entry, b = new blocks,
///                                   tpid/tva = the entry's PID and VA)
/// M entry mask                      the report pushed: its blocks marked
/// ```
///
/// Numbers are hex; `class` is 0 not gated, 1 read, 2 change, 3 offload.
/// Ranges are drawn around few addresses and two PIDs so requests hit entry
/// edges, overlap several entries and cross 64 KiB blocks.
pub fn gate_vectors(seed: u64, n: usize) -> String {
    use clio_fastpath::{gate_class, GateTable, GateVerdict};
    use clio_wire::clio::Opcode;
    use clio_wire::ring::{GateMode, GATE_BLOCK, GATE_MAX_TRACKED};
    use clio_wire::Header;

    let mut rng = SmallRng::seed_from_u64(seed);
    let mut t = GateTable::new(GATE_BENCH_ENTRIES);
    let mut out = String::new();
    let mut set: Vec<(u32, u64, u64)> = Vec::new();
    let base = 0x1_0000_0000u64;
    let ops = [
        Opcode::Read,
        Opcode::PointerChase,
        Opcode::Write,
        Opcode::FetchAndAdd,
        Opcode::CompareAndSwap,
        Opcode::Lock,
        Opcode::Unlock,
        Opcode::TestAndSet,
        Opcode::OffloadCall,
        Opcode::Fence,
        Opcode::Free,
        Opcode::Alloc,
    ];
    for _ in 0..n {
        let r = rng.gen_range(0..100);
        if r < 18 {
            let entry = rng.gen_range(0..GATE_BENCH_ENTRIES as u32 + 2);
            let mode = GateMode::ALL[rng.gen_range(0..GateMode::ALL.len())];
            let pid = rng.gen_range(1..3);
            let va =
                base + rng.gen_range(0..64u64) * GATE_BLOCK + [0, 8, 4096][rng.gen_range(0..3)];
            let len = match rng.gen_range(0..4) {
                0 => rng.gen_range(1..=GATE_MAX_TRACKED),
                1 => GATE_MAX_TRACKED,
                2 => rng.gen_range(1..4) * GATE_BLOCK,
                _ => rng.gen_range(1..64),
            };
            // Now and then a range up to the end of the address space.
            let (va, len) = if rng.gen_bool(0.03) {
                (u64::MAX - len + 1, len)
            } else {
                (va, len)
            };
            let ok = t.set(entry as usize, pid, va, len, mode);
            if ok {
                set.push((pid, va, len));
            }
            let _ = writeln!(
                out,
                "S {entry:x} {pid:x} {va:x} {len:x} {:x} {}",
                mode.raw(),
                u8::from(ok)
            );
        } else if r < 19 {
            t.clear();
            let _ = writeln!(out, "C");
        } else {
            let op = ops[rng.gen_range(0..ops.len())];
            let class = match gate_class(op) {
                None => 0,
                Some(false) => 1,
                Some(true) if op == Opcode::OffloadCall => 3,
                Some(true) => 2,
            };
            let pid = rng.gen_range(1..3);
            // Around an entry's edges, or anywhere near the base.
            let va = match set.get(rng.gen_range(0..set.len().max(1))) {
                Some(&(_, eva, elen)) if rng.gen_bool(0.7) => match rng.gen_range(0..5) {
                    0 => eva,
                    1 => eva.wrapping_sub(rng.gen_range(1..16)),
                    2 => eva.saturating_add(elen).wrapping_sub(rng.gen_range(0..16)),
                    3 => eva.saturating_add(elen),
                    _ => eva.saturating_add(rng.gen_range(0..elen.max(1))),
                },
                _ => base + rng.gen_range(0..(70 * GATE_BLOCK)),
            };
            let len: u32 = match rng.gen_range(0..4) {
                0 => 0,
                1 => 8,
                2 => rng.gen_range(1..4096),
                _ => rng.gen_range(1..(3 * GATE_BLOCK as u32)),
            };
            let h = Header::request(op, pid, 1, va, len);
            let v = t.verdict(&h);
            let (code, a, b, tpid, tva) = match v {
                GateVerdict::Serve => (0, 0, 0, 0, 0),
                GateVerdict::Refuse(s) => (1, u64::from(s.raw()), 0, 0, 0),
                GateVerdict::Track { entry, mask } => {
                    let e = *t.entry(entry).expect("a tracking entry");
                    (2, entry as u64, mask, e.pid, e.va)
                }
            };
            let _ = writeln!(
                out,
                "Q {pid:x} {va:x} {len:x} {class:x} {code} {a:x} {b:x} {tpid:x} {tva:x}"
            );
            if let GateVerdict::Track { entry, mask } = v {
                t.mark(entry, mask);
                let _ = writeln!(out, "M {entry:x} {mask:x}");
            }
        }
    }
    out
}

/// Calls the `clio_offload_fwd` bench's module remembers (its `TAGS`).
pub const OFFLOAD_FWD_TAGS: u32 = 8;
/// Answer payload bytes the bench's module holds (its `RESP_BYTES`): above
/// 2 048 (the LUT-RAM buffer's former bound), so answers of up to 66 rows
/// of its block RAM are read back.
pub const OFFLOAD_FWD_RESP: usize = 2600;

/// Vectors for the `clio_offload_fwd` bench (issue #16), decided as the
/// model's offload pass-through decides them (`OffloadLink` in
/// ip/fastpath/src/offload.rs: calls by tag = seq mod TAGS, the oldest
/// forgotten; the wire crate's `OffloadAssembler` and
/// `OffloadReplyHead::split` for the answers). One line per step:
///
/// ```text
/// C pid req_id retry_of va total_len offset session epoch seq     record a call (seq expected)
/// F tag seq len index count data done answer dropped [status plen pid req_id retry_of va
///   total_len offset session epoch payload]                       one OFFLOAD_REPLY fragment
/// ```
///
/// Numbers are hex; `data` is the fragment's 40 bytes, `payload` the
/// answer's bytes (`-` when empty or above `OFFLOAD_FWD_RESP`: not held).
pub fn offload_fwd_vectors(seed: u64, n: usize) -> String {
    use clio_wire::ring::{offload_fragments, OffloadAssembler, OffloadReplyHead, MAX_OFFLOAD_LEN};
    use clio_wire::Status;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = String::new();
    let mut asm = Box::new(OffloadAssembler::<MAX_OFFLOAD_LEN>::new());
    // The call table: (seq, answer header fields) by tag.
    let mut calls: Vec<Option<(u32, [u64; 8])>> = vec![None; OFFLOAD_FWD_TAGS as usize];
    let mut next_seq: u32 = 0;
    let mut recent: Vec<u32> = Vec::new();
    let mut dropped: u64 = 0;
    let mut steps = 0;
    while steps < n {
        if recent.is_empty() || rng.gen_bool(0.35) {
            let f = [
                rng.gen::<u32>() as u64,
                rng.gen::<u32>() as u64,
                rng.gen::<u32>() as u64,
                rng.gen::<u64>(),
                rng.gen::<u32>() as u64,
                rng.gen::<u32>() as u64,
                rng.gen::<u16>() as u64,
                rng.gen::<u32>() as u64,
            ];
            let seq = next_seq;
            next_seq = next_seq.wrapping_add(1);
            calls[(seq % OFFLOAD_FWD_TAGS) as usize] = Some((seq, f));
            recent.push(seq);
            let _ = writeln!(
                out,
                "C {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x}",
                f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], seq
            );
            steps += 1;
            continue;
        }
        // An answer to a recent call (live, forgotten or answered already),
        // now and then to a tag past the table.
        let seq = recent[rng.gen_range(recent.len().saturating_sub(12)..recent.len())];
        let tag = if rng.gen_bool(0.03) {
            OFFLOAD_FWD_TAGS + rng.gen_range(0..3)
        } else {
            seq % OFFLOAD_FWD_TAGS
        };
        let plen = match rng.gen_range(0..12) {
            0 => 0,
            1 => OFFLOAD_FWD_RESP - 1 + rng.gen_range(0..3),
            2 => rng.gen_range(OFFLOAD_FWD_RESP..OFFLOAD_FWD_RESP + 200),
            3 => rng.gen_range(2049..OFFLOAD_FWD_RESP),
            4 => rng.gen_range(300..2049),
            _ => rng.gen_range(1..300),
        };
        let status = Status::ALL[rng.gen_range(0..Status::ALL.len())];
        let mut dg = OffloadReplyHead { status }.to_bytes().to_vec();
        dg.extend((0..plen).map(|_| rng.gen::<u8>()));
        match rng.gen_range(0..20) {
            0 => dg.truncate(rng.gen_range(1..4)),
            1 => dg[0] = rng.gen_range(Status::ALL.len() as u8..=255),
            2 => dg[rng.gen_range(1..4)] = rng.gen_range(1..=255),
            _ => {}
        }
        let mut frags: Vec<_> = offload_fragments(tag, seq, &dg, Direction::Tx)
            .expect("fits")
            .collect();
        match rng.gen_range(0..12) {
            0 if frags.len() > 1 => {
                let k = rng.gen_range(0..frags.len() - 1);
                frags.swap(k, k + 1);
            }
            1 => {
                let k = rng.gen_range(0..frags.len());
                frags.remove(k);
            }
            2 => frags.truncate(rng.gen_range(0..frags.len())), // the rest never comes
            _ => {}
        }
        for d in frags {
            let Descriptor::Offload {
                tag,
                seq,
                len,
                index,
                count,
                data,
                ..
            } = d
            else {
                continue;
            };
            let before = asm.dropped();
            let done = asm.push(&d).map(|(t, q, b)| (t, q, b.to_vec()));
            dropped += asm.dropped() - before;
            let mut line = String::new();
            for b in data {
                let _ = write!(line, "{b:02x}");
            }
            let _ = write!(out, "F {tag:x} {seq:x} {len:x} {index:x} {count:x} {line} ");
            match done {
                None => {
                    let _ = writeln!(out, "0 0 {dropped:x}");
                }
                Some((t, q, bytes)) => {
                    let call = calls.get_mut(t as usize).and_then(|c| match c {
                        Some((s, _)) if *s == q => c.take(),
                        _ => None,
                    });
                    match (call, OffloadReplyHead::split(&bytes)) {
                        (Some((_, f)), Ok((head, payload))) => {
                            let _ = write!(
                                out,
                                "1 1 {dropped:x} {:x} {:x}",
                                head.status.raw(),
                                payload.len()
                            );
                            for v in f {
                                let _ = write!(out, " {v:x}");
                            }
                            let _ = write!(out, " ");
                            if payload.is_empty() || payload.len() > OFFLOAD_FWD_RESP {
                                let _ = write!(out, "-");
                            }
                            if payload.len() <= OFFLOAD_FWD_RESP {
                                for b in payload {
                                    let _ = write!(out, "{b:02x}");
                                }
                            }
                            let _ = writeln!(out);
                        }
                        _ => {
                            dropped += 1;
                            let _ = writeln!(out, "1 0 {dropped:x}");
                        }
                    }
                }
            }
            steps += 1;
        }
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

    const GATE_PATH: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tb/clio_region_gate/vectors.txt"
    );

    #[test]
    fn gate_vectors_are_current() {
        let want = gate_vectors(0x6A7E, 6000);
        if std::env::var_os("CLIO_BLESS").is_some() {
            std::fs::write(GATE_PATH, &want).expect("write gate vectors");
        }
        let have = std::fs::read_to_string(GATE_PATH).unwrap_or_default();
        assert!(
            have == want,
            "{GATE_PATH} is stale: run CLIO_BLESS=1 cargo test -p clio-fastpath-cosim"
        );
        // Every verdict occurs often enough to test something.
        for (what, needle, min) in [
            ("serve", " 0 0 0 0 0\n", 300),
            ("report", "\nM ", 100),
            (
                "BUSY",
                &format!(" 1 {:x} ", clio_wire::Status::Busy.raw()),
                100,
            ),
            (
                "MOVED",
                &format!(" 1 {:x} ", clio_wire::Status::Moved.raw()),
                100,
            ),
        ] {
            let n = want.matches(needle).count();
            assert!(n >= min, "{what}: {n} < {min}");
        }
        let refused_sets = want
            .lines()
            .filter(|l| l.starts_with("S ") && l.ends_with(" 0"))
            .count();
        assert!(refused_sets >= 20, "sets past the table: {refused_sets}");
    }

    const OFFLOAD_PATH: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tb/clio_offload_fwd/vectors.txt"
    );

    #[test]
    fn offload_fwd_vectors_are_current() {
        let want = offload_fwd_vectors(0x0FF1, 8000);
        if std::env::var_os("CLIO_BLESS").is_some() {
            std::fs::write(OFFLOAD_PATH, &want).expect("write offload vectors");
        }
        let have = std::fs::read_to_string(OFFLOAD_PATH).unwrap_or_default();
        assert!(
            have == want,
            "{OFFLOAD_PATH} is stale: run CLIO_BLESS=1 cargo test -p clio-fastpath-cosim"
        );
        // Answers, completions nobody takes, and both sides of the bound.
        let answered = want
            .lines()
            .filter(|l| {
                l.starts_with("F ")
                    && l.split(' ').nth(7) == Some("1")
                    && l.split(' ').nth(8) == Some("1")
            })
            .count();
        let refused = want
            .lines()
            .filter(|l| {
                l.starts_with("F ")
                    && l.split(' ').nth(7) == Some("1")
                    && l.split(' ').nth(8) == Some("0")
            })
            .count();
        let above = want.lines().filter(|l| l.ends_with(" -")).count();
        // Answers held past 2 048 payload bytes (4 096 hex digits).
        let large = want
            .lines()
            .filter(|l| {
                l.split(' ').nth(8) == Some("1") && l.rsplit(' ').next().map_or(0, str::len) > 4096
            })
            .count();
        assert!(
            answered > 80 && refused > 50 && above > 15 && large > 10,
            "{answered} {refused} {above} {large}"
        );
    }

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
