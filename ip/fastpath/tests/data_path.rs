//! Reads, writes, translation, faults, permissions and atomics.

mod common;

use clio_fastpath::{ModelOptions, ZeroPolicy};
use clio_wire::payload::{perms, AtomicArgs, AtomicResp};
use clio_wire::pte::Pte;
use clio_wire::ring::Descriptor;
use clio_wire::{Opcode, Status};
use common::Bench;

const MIB4: u8 = 22;
const KIB4: u8 = 12;

fn mapped(shift: u8, pages: u64) -> (Bench, u64) {
    let mut b = Bench::new();
    let va = b.class_va(shift) + (16u64 << shift);
    b.map(1, va, pages, shift, perms::RW, true);
    (b, va)
}

#[test]
fn write_then_read_back_within_a_page() {
    let (mut b, va) = mapped(MIB4, 1);
    assert_eq!(b.write(1, 1, va + 100, b"hello, board"), vec![Status::Ok]);
    let (st, data) = b.read(1, 2, va + 100, 12);
    assert_eq!(st, Status::Ok);
    assert_eq!(&data, b"hello, board");
    // Byte granularity: a 1-byte read in the middle.
    assert_eq!(b.read(1, 3, va + 104, 1).1, b"o");
}

#[test]
fn large_write_and_read_cross_pages_and_mtu() {
    let (mut b, va) = mapped(KIB4, 4);
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let start = va + 1000;
    let st = b.write(1, 1, start, &data);
    assert_eq!(st.len(), data.len().div_ceil(1450));
    assert!(st.iter().all(|&s| s == Status::Ok));
    let rs = b.req(Opcode::Read, 1, 2, start, data.len() as u32, &[]);
    assert_eq!(
        rs.len(),
        data.len().div_ceil(1450),
        "one response per MTU chunk"
    );
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r.h.offset as usize, i * 1450);
        assert_eq!(r.h.total_len as usize, data.len());
        assert_eq!(
            r.payload(),
            &data[i * 1450..(i * 1450 + 1450).min(data.len())]
        );
    }
    // The read touched three pages (1000 + 10000 bytes from a page start).
    assert_eq!(b.fp.last_trace().pages, 3);
}

#[test]
fn tlb_miss_costs_one_bucket_read_then_hits() {
    let (mut b, va) = mapped(MIB4, 1);
    b.read(1, 1, va, 16);
    let t = *b.fp.last_trace();
    assert_eq!(
        (t.tlb_misses, t.tlb_hits, t.dram_accesses),
        (1, 0, 2),
        "bucket + data"
    );
    b.read(1, 2, va + 64, 16);
    let h = *b.fp.last_trace();
    assert!(h.tlb_hit());
    assert_eq!(h.dram_accesses, 1);
    let c = clio_fastpath::CycleCosts::default();
    // Exactly one bucket fetch of 256 B (4 beats) of difference.
    assert_eq!(t.cycles - h.cycles, u64::from(c.dram_read_latency) + 4);
    // 16 B read, TLB hit: rx 4+1, tlb+perm 2, dram 40+1, tx 2+2 (56 + 16 bytes).
    assert_eq!(h.cycles, 5 + 2 + 41 + 4);
    assert!((h.nanos(250) - 208.0).abs() < 1e-9);
    // 8 B read, TLB hit: the response fits one beat.
    b.read(1, 3, va + 128, 8);
    assert_eq!(b.fp.last_trace().cycles, 5 + 2 + 41 + 3);
}

#[test]
fn tlb_size_comes_from_config_and_lru_evicts() {
    let mut cfg = common::board();
    cfg.tlb.entries = 4;
    let mut b = common::Bench::with(cfg, ModelOptions::default());
    let va = b.class_va(MIB4) + (16 << MIB4);
    b.map(1, va, 6, MIB4, perms::RW, true);
    for i in 0..5u64 {
        b.read(1, 1 + i as u32, va + (i << MIB4), 8);
    }
    assert_eq!(b.fp.tlb().len(), 4);
    // Page 0 was least recently used: evicted, so it misses again.
    b.read(1, 10, va, 8);
    assert_eq!(b.fp.last_trace().tlb_misses, 1);
    b.read(1, 11, va + (4 << MIB4), 8);
    assert!(b.fp.last_trace().tlb_hit());
}

#[test]
fn unmapped_bad_pid_and_out_of_space() {
    let (mut b, va) = mapped(MIB4, 1);
    assert_eq!(
        b.read(1, 1, va + (1 << MIB4), 8).0,
        Status::Unmapped,
        "next page not allocated"
    );
    assert_eq!(b.read(2, 2, va, 8).0, Status::Unmapped, "other PID's page");
    // PIDs without a session of theirs are refused before anything else.
    assert_eq!(b.read(0, 3, va, 8).0, Status::BadSession);
    let max = b.cfg.va.max_pids;
    assert_eq!(b.read(max + 1, 4, va, 8).0, Status::BadSession);
    // A session the slow path opened for an out-of-range PID: BAD_PID.
    for (session, pid, status) in [(20, max + 1, Status::BadPid), (21, max, Status::Unmapped)] {
        b.open(session, pid, 77);
        assert!(b.poll().is_empty());
        let pkt = clio_wire::Header::request(Opcode::Read, pid, 5, va, 8)
            .with_session(session, common::EPOCH, 77)
            .encode(&[])
            .unwrap();
        assert_eq!(b.send(&pkt)[0].h.status, status, "pid {pid}");
    }
    assert_eq!(
        b.read(1, 6, 1 << 50, 8).0,
        Status::Unmapped,
        "beyond the 50-bit VA space"
    );
    // Class 3 has no page size on the emulator (three sizes).
    assert_eq!(b.read(1, 7, 3 << 48, 8).0, Status::Unmapped);
    // A read running off the mapped page fails whole: no data sent.
    let rs = b.req(Opcode::Read, 1, 8, va + (1 << MIB4) - 8, 16, &[]);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].h.status, Status::Unmapped);
    assert!(rs[0].payload().is_empty());
}

#[test]
fn permissions_per_page() {
    let mut b = Bench::new();
    let va = b.class_va(KIB4) + 0x4000;
    b.map(1, va, 1, KIB4, perms::READ, true);
    b.map(1, va + 0x1000, 1, KIB4, perms::RW, true);
    b.map(1, va + 0x2000, 1, KIB4, perms::WRITE, true);
    assert_eq!(b.read(1, 1, va, 8).0, Status::Ok);
    assert_eq!(b.write(1, 2, va, b"x"), vec![Status::Permission]);
    // A write spanning a read-only and a writable page is refused whole.
    assert_eq!(
        b.write(1, 3, va + 0xffc, b"12345678"),
        vec![Status::Permission]
    );
    assert_eq!(
        b.read(1, 4, va + 0x1000, 4).1,
        vec![0; 4],
        "nothing written"
    );
    assert_eq!(b.write(1, 5, va + 0x2000, b"w"), vec![Status::Ok]);
    assert_eq!(
        b.read(1, 6, va + 0x2000, 1).0,
        Status::Permission,
        "write-only page"
    );
    // Atomics need WRITE.
    let rs = b.req(Opcode::FetchAndAdd, 1, 7, va, 8, &1u64.to_be_bytes());
    assert_eq!(rs[0].h.status, Status::Permission);
    // Permission is checked on TLB hits too (the read above filled the TLB).
    assert_eq!(b.write(1, 8, va + 8, b"y"), vec![Status::Permission]);
}

fn unmapped_bench(policy: ZeroPolicy) -> (Bench, u64) {
    let opts = ModelOptions {
        zero_policy: policy,
        ..ModelOptions::default()
    };
    let mut b = Bench::with(common::board(), opts);
    let va = b.class_va(KIB4) + 0x8000;
    b.map(1, va, 2, KIB4, perms::RW, false);
    (b, va)
}

#[test]
fn first_touch_fault_maps_zeroes_and_notifies() {
    let (mut b, va) = unmapped_bench(ZeroPolicy::OnFault);
    b.push_free(KIB4, 1);
    // The free page holds an earlier owner's data.
    let lay = *b.fp.layout();
    let ppn = (lay.data_end >> KIB4) as u32 - 1;
    let pa = lay.offset(u64::from(ppn) << KIB4);
    b.fp.dram_mut()[pa..pa + 4096].fill(0xee);
    assert_eq!(b.fp.fifo_len(KIB4), 1);

    assert_eq!(b.write(1, 1, va + 10, b"abc"), vec![Status::Ok]);
    let t = *b.fp.last_trace();
    assert!(t.faulted());
    assert_eq!(t.zeroed_bytes, 4096);
    assert_eq!(b.fp.fifo_len(KIB4), 0);
    // Nothing of the earlier owner is readable; the write landed.
    let (st, page) = b.read(1, 2, va, 4096);
    assert_eq!(st, Status::Ok);
    assert!(
        b.fp.last_trace().tlb_hit(),
        "the fault inserted the TLB entry"
    );
    let mut want = vec![0u8; 4096];
    want[10..13].copy_from_slice(b"abc");
    assert_eq!(page, want);
    // PTE in DRAM is now valid with the popped PPN.
    let g = lay.table;
    let vpn = va >> KIB4;
    let bucket = g.bucket_of(1, vpn);
    let rx = b.rx();
    assert_eq!(rx.len(), 1);
    let Descriptor::PaConsumed {
        pid,
        vpn: v,
        ppn: p,
        page_shift,
        bucket: bk,
        slot,
    } = rx[0]
    else {
        panic!("{rx:?}")
    };
    assert_eq!((pid, v, p, page_shift, bk), (1, vpn, ppn, KIB4, bucket));
    let at = lay.offset(g.slot_addr(bucket, slot));
    let pte = Pte::parse(&b.fp.dram()[at..at + 16]).unwrap();
    assert!(pte.valid && pte.allocated);
    assert_eq!(pte.ppn, ppn);
}

#[test]
fn fault_costs_three_cycles_when_pages_come_pre_zeroed() {
    let (mut b, va) = unmapped_bench(ZeroPolicy::BySlowPath);
    b.push_free(KIB4, 2);
    b.read(1, 1, va, 16);
    let fault = *b.fp.last_trace();
    assert!(fault.faulted());
    assert_eq!(fault.zeroed_bytes, 0);
    // Same access on the second page, already mapped by hand: no fault.
    b.map(1, va + 0x10000, 1, KIB4, perms::RW, true);
    b.read(1, 2, va + 0x10000, 16);
    let plain = *b.fp.last_trace();
    assert!(!plain.faulted() && plain.tlb_misses == 1);
    assert_eq!(fault.cycles - plain.cycles, 3);
    assert_eq!(
        fault.dram_accesses,
        plain.dram_accesses + 1,
        "PTE write-back"
    );
}

#[test]
fn empty_fifo_is_busy_and_reported() {
    let (mut b, va) = unmapped_bench(ZeroPolicy::OnFault);
    assert_eq!(b.write(1, 1, va, b"x"), vec![Status::Busy]);
    let rx = b.rx();
    assert!(
        matches!(
            rx[..],
            [Descriptor::ErrorReport {
                status: 6,
                pid: 1,
                opcode: 4,
                count: 1,
                ..
            }]
        ),
        "{rx:?}"
    );
    // After a refill the retry succeeds.
    b.push_free(KIB4, 1);
    assert_eq!(b.write(1, 2, va, b"x"), vec![Status::Ok]);
    assert_eq!(b.fp.stats().fifo_empty, 1);
}

#[test]
fn permission_is_checked_before_a_fault_takes_a_page() {
    let mut b = Bench::new();
    let va = b.class_va(KIB4);
    b.map(1, va, 1, KIB4, perms::READ, false);
    b.push_free(KIB4, 1);
    assert_eq!(b.write(1, 1, va, b"x"), vec![Status::Permission]);
    assert_eq!(b.fp.fifo_len(KIB4), 1);
}

fn atomic(b: &mut Bench, op: Opcode, id: u32, va: u64, args: Option<AtomicArgs>) -> (Status, u64) {
    let mut p = [0u8; 16];
    let n = args.map_or(0, |a| a.emit(&mut p).unwrap());
    let rs = b.req(op, 1, id, va, 8, &p[..n]);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].h.opcode, op.response().unwrap());
    let old = AtomicResp::parse(rs[0].payload()).map_or(u64::MAX, |r| r.old);
    (rs[0].h.status, old)
}

#[test]
fn atomics_and_locks() {
    let (mut b, va) = mapped(MIB4, 1);
    let faa = |v| Some(AtomicArgs::FetchAndAdd { addend: v });
    assert_eq!(
        atomic(&mut b, Opcode::FetchAndAdd, 1, va, faa(5)),
        (Status::Ok, 0)
    );
    assert_eq!(
        atomic(&mut b, Opcode::FetchAndAdd, 2, va, faa(u64::MAX)),
        (Status::Ok, 5)
    );
    let cas = |e, n| {
        Some(AtomicArgs::CompareAndSwap {
            expected: e,
            new: n,
        })
    };
    assert_eq!(
        atomic(&mut b, Opcode::CompareAndSwap, 3, va, cas(9, 1)),
        (Status::Ok, 4),
        "fails: word is 4"
    );
    assert_eq!(
        atomic(&mut b, Opcode::CompareAndSwap, 4, va, cas(4, 77)),
        (Status::Ok, 4)
    );
    assert_eq!(
        b.read(1, 5, va, 8).1,
        77u64.to_le_bytes(),
        "words are little-endian in DRAM"
    );
    assert_eq!(
        atomic(&mut b, Opcode::TestAndSet, 6, va + 8, None),
        (Status::Ok, 0)
    );
    assert_eq!(
        atomic(&mut b, Opcode::TestAndSet, 7, va + 8, None),
        (Status::Ok, 1)
    );
    // Locks.
    let l = va + 64;
    assert_eq!(atomic(&mut b, Opcode::Lock, 8, l, None), (Status::Ok, 0));
    assert_eq!(
        atomic(&mut b, Opcode::Lock, 9, l, None),
        (Status::Busy, 1),
        "held"
    );
    assert_eq!(atomic(&mut b, Opcode::Unlock, 10, l, None), (Status::Ok, 1));
    assert_eq!(atomic(&mut b, Opcode::Lock, 11, l, None), (Status::Ok, 0));
    // Misaligned or mis-sized atomics are malformed.
    assert_eq!(
        atomic(&mut b, Opcode::TestAndSet, 12, va + 4, None).0,
        Status::Malformed
    );
    let rs = b.req(Opcode::FetchAndAdd, 1, 13, va, 8, &[0; 4]);
    assert_eq!(rs[0].h.status, Status::Malformed);
    let rs = b.req(Opcode::TestAndSet, 1, 14, va, 16, &[]);
    assert_eq!(rs[0].h.status, Status::Malformed, "total_len must be 8");
    let t = *b.fp.last_trace();
    assert_eq!(t.dram_accesses, 0);
}

#[test]
fn page_sizes_follow_the_va_class() {
    let mut b = Bench::new();
    for (shift, id) in [(KIB4, 1), (21u8, 2), (MIB4, 3)] {
        let va = b.class_va(shift) + (3u64 << shift);
        b.map(5, va, 1, shift, perms::RW, true);
        assert_eq!(
            b.write(5, id, va + (1 << shift) - 4, b"edge"),
            vec![Status::Ok]
        );
        assert_eq!(b.read(5, id + 10, va + (1 << shift) - 4, 4).1, b"edge");
        // The next page of that size is not mapped.
        assert_eq!(b.read(5, id + 20, va + (1 << shift), 1).0, Status::Unmapped);
    }
    assert_eq!(
        b.fp.layout().class_shift[0],
        MIB4,
        "class 0 holds default-size pages"
    );
}

/// The PTE tag is (pid, vpn, page_shift): with 4 KiB as the default size
/// (class 0) a 4 KiB page and a 2 MiB page (class 1) can have the same VPN
/// number, hash to the same bucket, and must still translate to their own
/// physical pages, in either slot order, without counting PTE errors.
#[test]
fn same_vpn_in_two_sizes_does_not_alias() {
    const MIB2: u8 = 21;
    let mut cfg = common::board();
    cfg.pages.default_size = 1 << KIB4;
    for big_first in [false, true] {
        let mut b = Bench::with(cfg, ModelOptions::default());
        assert_eq!(b.fp.layout().class_shift[..3], [KIB4, MIB2, MIB4]);
        let vpn = (1u64 << 27) + 5;
        let small = vpn << KIB4;
        let large = vpn << MIB2;
        assert_eq!(b.fp.layout().shift_of(small), Some(KIB4));
        assert_eq!(b.fp.layout().shift_of(large), Some(MIB2));
        let g = b.fp.layout().table;
        let bucket = g.bucket_of(1, vpn);
        let order: [(u64, u8); 2] = if big_first {
            [(large, MIB2), (small, KIB4)]
        } else {
            [(small, KIB4), (large, MIB2)]
        };
        for (va, shift) in order {
            b.map(1, va, 1, shift, perms::RW, true);
        }
        assert_eq!(b.write(1, 1, small + 8, b"small page"), vec![Status::Ok]);
        assert_eq!(b.write(1, 2, large + 8, b"large page"), vec![Status::Ok]);
        assert_eq!(b.read(1, 3, small + 8, 10).1, b"small page");
        assert_eq!(b.read(1, 4, large + 8, 10).1, b"large page");
        // Again through the bucket, not the TLB.
        b.post(&Descriptor::TlbInvalidate {
            pid: 1,
            vpn: 0,
            pages: 0,
        });
        assert!(b.poll().is_empty());
        assert_eq!(b.read(1, 5, large + 8, 10).1, b"large page");
        assert_eq!(b.fp.last_trace().tlb_misses, 1);
        assert_eq!(b.read(1, 6, small + 8, 10).1, b"small page");
        assert_eq!(b.fp.stats().pte_errors, 0);
        // Removing the 4 KiB page (slot named by the command) leaves the 2 MiB one.
        let small_slot = u32::from(big_first);
        b.post(&Descriptor::PteRemove {
            bucket,
            slot: small_slot,
            pid: 1,
            vpn,
        });
        assert!(b.poll().is_empty());
        assert_eq!(b.fp.stats().tx_rejected, 0);
        assert_eq!(b.read(1, 7, small + 8, 1).0, Status::Unmapped);
        assert_eq!(b.read(1, 8, large + 8, 10).1, b"large page");
    }
}

/// The README's cycle table, pinned: these numbers are what the RTL matches.
#[test]
fn cycle_table_examples() {
    let (mut b, va) = mapped(MIB4, 1);
    b.read(1, 1, va, 8); // fill the TLB
    b.write(1, 2, va, &[0u8; 16]);
    // rx 4+2 (56 + 16 bytes), tlb+perm 2, posted write 4+1, tx 2+1.
    assert_eq!(b.fp.last_trace().cycles, 16);
    let rs = b.req(Opcode::FetchAndAdd, 1, 3, va, 8, &1u64.to_be_bytes());
    assert_eq!(rs[0].h.status, Status::Ok);
    // rx 5, tlb+perm 2, sync 2, read 41, write 5, tx 3.
    assert_eq!(b.fp.last_trace().cycles, 58);
    assert_eq!(b.fp.last_trace().dram_accesses, 2);
    // A 1450-byte write: rx 4 + 24 beats (1506 B), 2, 4 + 23 beats, tx 3.
    b.write(1, 4, va, &[1u8; 1450]);
    assert_eq!(b.fp.last_trace().cycles, 28 + 2 + 27 + 3);
    // A 3000-byte read: 2 + 41 + 47 data; responses 1506, 1506, 156 bytes.
    b.read(1, 5, va, 3000);
    assert_eq!(
        b.fp.last_trace().cycles,
        5 + 2 + 40 + 47 + (2 + 24) * 2 + (2 + 3)
    );
    // Dedup replay: rx and tx only.
    b.send(&common::packet(
        Opcode::FetchAndAdd,
        1,
        6,
        3,
        va,
        8,
        0,
        &1u64.to_be_bytes(),
    ));
    assert!(b.fp.last_trace().duplicate);
    assert_eq!(b.fp.last_trace().cycles, 5 + 3);
}

#[test]
fn zero_length_and_exact_mtu_reads() {
    let (mut b, va) = mapped(MIB4, 1);
    let rs = b.req(Opcode::Read, 1, 1, va, 0, &[]);
    assert_eq!(rs.len(), 1);
    assert_eq!(
        (rs[0].h.status, rs[0].h.payload_len, rs[0].h.offset),
        (Status::Ok, 0, 0)
    );
    assert_eq!(b.fp.last_trace().dram_accesses, 0, "nothing translated");
    let rs = b.req(Opcode::Read, 1, 2, va, 2900, &[]);
    assert_eq!(
        rs.iter().map(|r| r.h.payload_len).collect::<Vec<_>>(),
        vec![1450, 1450]
    );
    let rs = b.req(Opcode::Write, 1, 3, va, 0, &[]);
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::WriteResp, Status::Ok)
    );
}

#[test]
fn borrowed_memory_and_uninitialised_rings() {
    let cfg = common::board();
    let mut mem = vec![0u8; cfg.dram.size as usize];
    // Rings were never initialised: attaching names the ring.
    let e = clio_fastpath::FastPath::new(&cfg, ModelOptions::default(), &mut mem[..]).unwrap_err();
    assert_eq!(e.key, "rings.rx");
    // Format through a borrowed slice (an mmap'd file in the emulator), then attach again.
    drop(clio_fastpath::FastPath::format(&cfg, ModelOptions::default(), &mut mem[..]).unwrap());
    let fp = clio_fastpath::FastPath::new(&cfg, ModelOptions::default(), &mut mem[..]).unwrap();
    assert_eq!(fp.layout().mtu, 1450);
}

#[test]
fn a_read_above_the_response_bound_is_too_large_and_not_executed() {
    // The shipped bound (64 KiB); a read of one byte more is refused with
    // one header-only answer and no DRAM access, one of exactly the bound
    // is served in MTU packets.
    let (mut b, va) = mapped(MIB4, 1);
    let bound = common::board().network.max_response_bytes;
    assert_eq!(bound, 64 * 1024);
    let rs = b.req(Opcode::Read, 1, 1, va, bound + 1, &[]);
    assert_eq!(rs.len(), 1, "header-only");
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::ReadResp, Status::TooLarge)
    );
    assert_eq!((rs[0].h.offset, rs[0].payload().len()), (0, 0));
    assert_eq!(b.fp.last_trace().dram_accesses, 0, "nothing read");
    assert_eq!(b.fp.stats().too_large, 1);
    // 8 MiB, the read that held the RTL board for seconds: one header back.
    let rs = b.req(Opcode::Read, 1, 2, va, 8 << 20, &[]);
    assert_eq!((rs.len(), rs[0].h.status), (1, Status::TooLarge));
    let rs = b.req(Opcode::Read, 1, 3, va, bound, &[]);
    assert_eq!(rs.len(), (bound as usize).div_ceil(1450));
    assert!(rs.iter().all(|r| r.h.status == Status::Ok));
    // INFO states the bound in KiB.
    let info = b.req(
        Opcode::Info,
        0,
        4,
        0,
        0,
        &[0; clio_wire::payload::InfoResp::LEN],
    );
    let i = clio_wire::payload::InfoResp::parse(info[0].payload()).unwrap();
    assert_eq!(i.max_resp_kib, 64);
    assert_eq!(i.max_resp_bytes(), Some(bound));
}
