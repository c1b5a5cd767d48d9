//! Per-request cost of the model itself (host CPU time, not projected cycles):
//! a 16 B read that hits the TLB, a 4 KiB write (three MTU packets), a
//! first-touch fault on a 4 KiB page, and what a 64 KiB read (the shipped
//! response bound) costs at intake answered whole and interleaved (first
//! packet only; the rest is pumped later): the time a request taken in
//! behind it waits for the board.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "../tests/common/mod.rs"]
mod common;

use clio_fastpath::{ModelOptions, ZeroPolicy};
use clio_wire::payload::perms;
use clio_wire::pte::Pte;
use clio_wire::ring::Descriptor;
use clio_wire::{Header, Opcode, Packet, Status};
use common::{packet, Bench, CLIENT};

fn read_16b(c: &mut Criterion) {
    let mut b = Bench::new();
    let va = b.class_va(22) + (64 << 22);
    b.map(1, va, 1, 22, perms::RW, true);
    let pkt = packet(Opcode::Read, 1, 1, 0, va + 128, 16, 0, &[]);
    let mut sink = 0usize;
    b.fp.receive(CLIENT, &pkt, &mut |_, r: &[u8]| sink += r.len());
    assert!(b.fp.last_trace().tlb_hit() || b.fp.last_trace().tlb_misses == 1);
    let mut g = c.benchmark_group("fastpath");
    g.throughput(Throughput::Elements(1));
    g.bench_function("read_16B_tlb_hit", |bench| {
        bench.iter(|| {
            let t =
                b.fp.receive(CLIENT, &pkt, &mut |_, r: &[u8]| sink += r.len());
            debug_assert_eq!(t.status, Some(Status::Ok));
            t.cycles
        })
    });
    g.finish();
    assert!(sink > 0);
}

fn write_4k(c: &mut Criterion) {
    let mut b = Bench::new();
    let va = b.class_va(22) + (64 << 22);
    b.map(1, va, 1, 22, perms::RW, true);
    let data = vec![0x5au8; 4096];
    let mtu = b.cfg.network.mtu_payload as usize;
    // Each request acknowledges every id before its own (ack = id), so
    // records never pile up; when the ids come round again the session is
    // installed anew (its records and ack floor cleared, once per 2048
    // requests), so no request is a duplicate or a late one.
    let requests: Vec<Vec<Vec<u8>>> = (0..2048u32)
        .map(|id| {
            data.chunks(mtu)
                .enumerate()
                .map(|(i, ch)| {
                    let p = packet(Opcode::Write, 1, id + 1, 0, va, 4096, (i * mtu) as u32, ch);
                    let h = Header::parse(&Packet::new_unchecked(&p[..])).expect("parses");
                    Header { ack: id + 1, ..h }.encode(ch).expect("encodes")
                })
                .collect()
        })
        .collect();
    let mut next = 0usize;
    let mut g = c.benchmark_group("fastpath");
    g.throughput(Throughput::Bytes(4096));
    g.bench_function("write_4KiB", |bench| {
        bench.iter(|| {
            let mut n = 0;
            if next % requests.len() == 0 {
                b.open(1, 1, common::key_of(1));
                b.poll();
            }
            for p in &requests[next % requests.len()] {
                let t = b.fp.receive(CLIENT, p, &mut |_, _| {});
                debug_assert!(!t.duplicate && t.status == Some(Status::Ok));
                n += t.packets_out;
            }
            next += 1;
            n
        })
    });
    g.finish();
}

/// Faulting writes to 16 pages; between timed rounds the pages are made
/// not-valid again and their PAs pushed back, as a slow path recycling
/// freed memory would (untimed).
fn first_touch(c: &mut Criterion) {
    let mut g = c.benchmark_group("fastpath");
    for (name, policy) in [
        ("first_touch_fault_4KiB_zero_on_fault", ZeroPolicy::OnFault),
        ("first_touch_fault_4KiB_pre_zeroed", ZeroPolicy::BySlowPath),
    ] {
        let opts = ModelOptions {
            zero_policy: policy,
            ..ModelOptions::default()
        };
        let mut b = Bench::with(common::board(), opts);
        let va = b.class_va(12) + 0x10_0000;
        b.map(1, va, 16, 12, perms::RW, false);
        let g_ = b.fp.layout().table;
        let slots: Vec<(u32, u32, Pte)> = (0..16u64)
            .map(|i| {
                let vpn = (va >> 12) + i;
                let bucket = g_.bucket_of(1, vpn);
                let at = b.fp.layout().offset(g_.slot_addr(bucket, 0));
                let pte = Pte::parse(&b.fp.dram()[at..at + 16]).unwrap();
                assert!(pte.matches(1, vpn, 12));
                (bucket, 0, pte)
            })
            .collect();
        let ppns: Vec<u32> = (0..16).map(|_| b.fresh_ppn(12)).collect();
        let mut id = 1u32;
        g.throughput(Throughput::Elements(16));
        g.bench_function(name, |bench| {
            bench.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    for (&(bucket, slot, pte), &ppn) in slots.iter().zip(&ppns) {
                        b.post(&Descriptor::PteWrite {
                            bucket,
                            slot,
                            update: true,
                            pte,
                        });
                        b.post(&Descriptor::FreePaPush {
                            page_shift: 12,
                            ppn,
                        });
                    }
                    b.poll();
                    b.rx();
                    let pkts: Vec<Vec<u8>> = (0..16u64)
                        .map(|i| {
                            id = id.wrapping_add(1).max(1);
                            packet(Opcode::Write, 1, id, 0, va + (i << 12), 16, 0, &[1u8; 16])
                        })
                        .collect();
                    let t0 = Instant::now();
                    let mut faults = 0;
                    for p in &pkts {
                        faults += b.fp.receive(CLIENT, p, &mut |_, _| {}).faults;
                    }
                    spent += t0.elapsed();
                    assert_eq!(faults, 16);
                }
                spent
            })
        });
    }
    g.finish();
}

fn read_64k_intake(c: &mut Criterion) {
    let mut g = c.benchmark_group("fastpath");
    g.throughput(Throughput::Elements(1));
    for interleave in [false, true] {
        let mut b = Bench::new();
        let va = b.class_va(22) + (64 << 22);
        b.map(1, va, 1, 22, perms::RW, true);
        b.fp.set_interleave_reads(interleave);
        let pkt = packet(Opcode::Read, 1, 1, 0, va, 64 << 10, 0, &[]);
        let mut sink = 0usize;
        let name = if interleave {
            "read_64KiB_intake_interleaved"
        } else {
            "read_64KiB_intake_whole"
        };
        g.bench_function(name, |bench| {
            bench.iter(|| {
                // As the emulator's server does: every answer datagram copied out.
                let t =
                    b.fp.receive(CLIENT, &pkt, &mut |_, r: &[u8]| sink += r.to_vec().len());
                t.packets_out
            });
        });
        // Drop the open streams between samples' batches (not timed).
        while b.fp.pump(1 << 20, &mut |_, r: &[u8]| sink += r.len()) > 0 {}
        assert!(sink > 0);
    }
    g.finish();
}

// `criterion_group!` expands to an undocumented public function.
#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, read_16b, write_4k, first_touch, read_64k_intake);
}
use group::benches;
criterion_main!(benches);
