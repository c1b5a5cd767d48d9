//! Random request streams against a flat-memory reference: memory contents
//! agree after every request, and every atomic is applied exactly once even
//! when requests are retried or duplicated.

mod common;

use clio_wire::clio::flags;
use clio_wire::payload::{perms, AtomicArgs, AtomicResp};
use clio_wire::{Opcode, Status};
use common::{packet, Bench};
use proptest::prelude::*;

const PAGES: u64 = 6;
const PAGE: u64 = 4096;
/// Page 4 is read-only, page 5 is not allocated; pages 2 and 3 fault on first touch.
const RO_PAGE: u64 = 4;

#[derive(Debug, Clone)]
enum Op {
    Write {
        at: u64,
        len: usize,
        fill: u8,
    },
    Read {
        at: u64,
        len: u32,
    },
    Faa {
        word: u64,
        add: u64,
    },
    Cas {
        word: u64,
        expect_current: bool,
        new: u64,
    },
    Tas {
        word: u64,
    },
    /// Re-send earlier request `i` (mod history) as a retry under a new id.
    Retry {
        i: usize,
    },
    /// Re-send earlier request `i` unchanged (network duplicate).
    Duplicate {
        i: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let span = PAGES * PAGE;
    prop_oneof![
        4 => (0..span, 1usize..1450, any::<u8>()).prop_map(|(at, len, fill)| Op::Write { at, len, fill }),
        3 => (0..span, 0u32..9000).prop_map(|(at, len)| Op::Read { at, len }),
        2 => (0..span / 8, any::<u64>()).prop_map(|(w, add)| Op::Faa { word: w * 8, add }),
        1 => (0..span / 8, any::<bool>(), any::<u64>()).prop_map(|(w, e, n)| Op::Cas { word: w * 8, expect_current: e, new: n }),
        1 => (0..span / 8).prop_map(|w| Op::Tas { word: w * 8 }),
        2 => any::<usize>().prop_map(|i| Op::Retry { i }),
        1 => any::<usize>().prop_map(|i| Op::Duplicate { i }),
    ]
}

/// The reference: flat bytes plus per-page permission and allocation.
struct Flat {
    mem: Vec<u8>,
}

impl Flat {
    fn page_ok(&self, at: u64, len: u64, need: u8) -> Status {
        if len == 0 {
            return Status::Ok;
        }
        let end = at + len;
        if end > PAGES * PAGE {
            return Status::Unmapped;
        }
        for p in at / PAGE..=(end - 1) / PAGE {
            if p == PAGES - 1 {
                return Status::Unmapped;
            }
            if p == RO_PAGE && need & perms::WRITE != 0 {
                return Status::Permission;
            }
        }
        Status::Ok
    }
    fn word(&self, at: u64) -> u64 {
        u64::from_le_bytes(self.mem[at as usize..at as usize + 8].try_into().unwrap())
    }
    fn set_word(&mut self, at: u64, v: u64) {
        self.mem[at as usize..at as usize + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// A sent non-idempotent request and the answer it got.
struct Sent {
    pkt_fields: (Opcode, u32, u64, u32, u32, Vec<u8>),
    status: Status,
    payload: Vec<u8>,
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut b = Bench::new();
    let base = b.class_va(12) + 0x40_0000;
    b.map(1, base, 2, 12, perms::RW, true);
    b.map(1, base + 2 * PAGE, 2, 12, perms::RW, false);
    b.map(1, base + RO_PAGE * PAGE, 1, 12, perms::READ, true);
    b.push_free(12, 2);
    // Valid pages were fresh, so they hold zeros like the reference.
    let mut flat = Flat {
        mem: vec![0; (PAGES * PAGE) as usize],
    };
    let mut hist: Vec<Sent> = Vec::new();
    let mut next_id = 1u32;
    let mut fresh = || {
        next_id += 1;
        next_id
    };
    for op in ops {
        match op {
            Op::Write { at, len, fill } => {
                let data: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8)).collect();
                let id = fresh();
                let rs = b.send(&packet(
                    Opcode::Write,
                    1,
                    id,
                    0,
                    base + at,
                    len as u32,
                    0,
                    &data,
                ));
                let want = flat.page_ok(at, len as u64, perms::WRITE);
                prop_assert_eq!(rs[0].h.status, want);
                if want == Status::Ok {
                    flat.mem[at as usize..at as usize + len].copy_from_slice(&data);
                }
                hist.push(Sent {
                    pkt_fields: (Opcode::Write, id, base + at, len as u32, 0, data),
                    status: want,
                    payload: vec![],
                });
            }
            Op::Read { at, len } => {
                let id = fresh();
                let (st, data) = b.read(1, id, base + at, len);
                let want = flat.page_ok(at, u64::from(len), perms::READ);
                prop_assert_eq!(st, want);
                if want == Status::Ok {
                    prop_assert_eq!(
                        &data[..],
                        &flat.mem[at as usize..at as usize + len as usize]
                    );
                }
            }
            Op::Faa { word, .. } | Op::Tas { word } | Op::Cas { word, .. } => {
                let (opc, args) = match op {
                    Op::Faa { add, .. } => (
                        Opcode::FetchAndAdd,
                        Some(AtomicArgs::FetchAndAdd { addend: add }),
                    ),
                    Op::Tas { .. } => (Opcode::TestAndSet, None),
                    Op::Cas {
                        expect_current,
                        new,
                        ..
                    } => {
                        let cur = if flat.page_ok(word, 8, perms::WRITE) == Status::Ok {
                            flat.word(word)
                        } else {
                            0
                        };
                        let expected = if expect_current { cur } else { cur ^ 1 };
                        (
                            Opcode::CompareAndSwap,
                            Some(AtomicArgs::CompareAndSwap { expected, new }),
                        )
                    }
                    _ => unreachable!(),
                };
                let mut p = [0u8; 16];
                let n = args.map_or(0, |a| a.emit(&mut p).unwrap());
                let id = fresh();
                let rs = b.send(&packet(opc, 1, id, 0, base + word, 8, 0, &p[..n]));
                let want = flat.page_ok(word, 8, perms::WRITE);
                prop_assert_eq!(rs[0].h.status, want);
                if want == Status::Ok {
                    let old = flat.word(word);
                    prop_assert_eq!(AtomicResp::parse(rs[0].payload()).unwrap().old, old);
                    match args {
                        Some(AtomicArgs::FetchAndAdd { addend }) => {
                            flat.set_word(word, old.wrapping_add(addend))
                        }
                        Some(AtomicArgs::CompareAndSwap { expected, new }) if old == expected => {
                            flat.set_word(word, new)
                        }
                        None => flat.set_word(word, 1),
                        _ => {}
                    }
                }
                hist.push(Sent {
                    pkt_fields: (opc, id, base + word, 8, 0, p[..n].to_vec()),
                    status: want,
                    payload: rs[0].payload().to_vec(),
                });
            }
            Op::Retry { i } | Op::Duplicate { i } => {
                if hist.is_empty() {
                    continue;
                }
                let k = i % hist.len();
                let (opc, id, va, total, off, ref pl) = hist[k].pkt_fields;
                let (req_id, retry_of) = if matches!(op, Op::Retry { .. }) {
                    (fresh(), id)
                } else {
                    (id, 0)
                };
                let rs = b.send(&packet(opc, 1, req_id, retry_of, va, total, off, pl));
                if hist[k].status == Status::Ok {
                    // Executed before: answered from the buffer, memory untouched.
                    prop_assert_eq!(rs[0].h.flags, flags::DUPLICATE);
                    prop_assert_eq!(rs[0].h.status, Status::Ok);
                    prop_assert_eq!(rs[0].payload(), &hist[k].payload[..]);
                } else {
                    // Failed before: runs again and fails the same way (no state changed).
                    prop_assert_eq!(rs[0].h.flags, 0);
                    prop_assert_eq!(rs[0].h.status, hist[k].status);
                }
            }
        }
    }
    // Final memory agrees page by page (the unallocated page excluded).
    let (st, all) = b.read(1, 0xffff_0000, base, ((PAGES - 1) * PAGE) as u32);
    prop_assert_eq!(st, Status::Ok);
    prop_assert!(all[..] == flat.mem[..((PAGES - 1) * PAGE) as usize]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_streams_match_flat_memory(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops)?;
    }
}

#[test]
fn determinism_same_stream_same_bytes() {
    // Two boards fed the same packets emit identical bytes and end with identical DRAM.
    let mk = || {
        let mut b = Bench::new();
        let va = b.class_va(12);
        b.map(1, va, 4, 12, perms::RW, false);
        b.push_free(12, 4);
        (b, va)
    };
    let (mut x, va) = mk();
    let (mut y, _) = mk();
    for i in 0..200u32 {
        let at = va + u64::from(i * 97 % 16000);
        let p = if i % 3 == 0 {
            packet(Opcode::Read, 1, i + 1, 0, at, i % 300, 0, &[])
        } else {
            packet(Opcode::Write, 1, i + 1, 0, at, 40, 0, &[i as u8; 40])
        };
        let (rx, ry) = (x.send(&p), y.send(&p));
        assert_eq!(
            rx.iter().map(|r| &r.bytes).collect::<Vec<_>>(),
            ry.iter().map(|r| &r.bytes).collect::<Vec<_>>()
        );
        assert_eq!(x.fp.last_trace(), y.fp.last_trace());
    }
    assert!(x.fp.dram()[..] == y.fp.dram()[..]);
}
