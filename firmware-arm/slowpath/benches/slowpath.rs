//! Criterion benches of the slow path: allocation at 50 % utilisation, and
//! the refill/notice cycle. The full figures (retry curve, latency table,
//! footprint) come from `examples/slowpath-report.rs`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use clio_slowpath::{ReplyTo, SlowPath, SlowPathConfig};
use clio_wire::ring::Descriptor;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::{Duration, Instant};

fn cfg() -> SlowPathConfig {
    // The emulator board, 4 KiB pages only (the size the table is sized for).
    let mut c = SlowPathConfig::from_board(&clio_config::boards::EMULATOR);
    c.page_shifts = [12, 0, 0, 0];
    c.n_page_sizes = 1;
    c.default_shift = 12;
    c.mem_quota_bytes = u64::MAX;
    c.check().unwrap();
    c
}

/// A slow path with every PID held by the board (no sessions here).
fn slow_path(cfg: SlowPathConfig, arena: &mut [u64]) -> SlowPath<'_> {
    let mut sp = SlowPath::new(cfg, arena, 0x5eed).unwrap();
    for pid in 1..=cfg.max_pids {
        sp.reserve_pid(pid).unwrap();
    }
    sp
}

fn fill(sp: &mut SlowPath<'_>, pct: u64) {
    let pages = sp.config().pages_of(12) * pct / 100;
    let mut done = 0;
    let mut sink = Vec::new();
    let mut pid = 1;
    while done < pages {
        let n = (pages - done).min(1 + (done * 7919) % 100);
        sp.alloc(ReplyTo::default(), pid, 0, n << 12, 3, 12, false)
            .unwrap();
        sp.pump(&mut sink);
        sink.clear();
        done += n;
        pid = pid % 64 + 1;
    }
}

fn alloc_free(c: &mut Criterion) {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = slow_path(cfg, &mut arena);
    fill(&mut sp, 50);
    let mut g = c.benchmark_group("alloc_free_50pct");
    g.measurement_time(Duration::from_secs(3));
    let mut sink: Vec<Descriptor> = Vec::with_capacity(256);
    for pages in [1u64, 10, 100] {
        g.bench_with_input(BenchmarkId::from_parameter(pages), &pages, |b, &pages| {
            b.iter(|| {
                let p = sp
                    .alloc(ReplyTo::default(), 500, 0, pages << 12, 3, 12, false)
                    .unwrap();
                sp.pump(&mut sink);
                sp.free(ReplyTo::default(), 500, p.range.start, p.range.bytes())
                    .unwrap();
                sp.pump(&mut sink);
                sink.clear();
            })
        });
    }
    g.finish();
}

fn refill_cycle(c: &mut Criterion) {
    let cfg = cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = slow_path(cfg, &mut arena);
    let mut g = c.benchmark_group("refill");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("push_and_consume_one_pa", |b| {
        b.iter_custom(|iters| {
            let mut sink = Vec::new();
            let mut pushed = Vec::with_capacity(64);
            let mut left = iters;
            let mut spent = Duration::ZERO;
            while left > 0 {
                let n = left.min(16_384);
                let p = sp
                    .alloc(ReplyTo::default(), 9, 0, n << 12, 3, 12, false)
                    .unwrap();
                sp.pump(&mut sink);
                sink.clear();
                let slots: Vec<(u32, u32)> = (0..n)
                    .map(|i| sp.shadow().find(9, p.range.vpn() + i, 12).unwrap())
                    .collect();
                let t = Instant::now();
                let mut i = 0usize;
                let mut notices = Vec::with_capacity(64);
                while (i as u64) < n {
                    sp.refill(&mut pushed);
                    for d in pushed.drain(..) {
                        if let (Descriptor::FreePaPush { ppn, page_shift }, Some(&(bucket, slot))) =
                            (d, slots.get(i))
                        {
                            let vpn = p.range.vpn() + i as u64;
                            notices.push(Descriptor::PaConsumed {
                                pid: 9,
                                vpn,
                                ppn,
                                page_shift,
                                bucket,
                                slot,
                            });
                            i += 1;
                        }
                    }
                    // As the engine's poll core does: one batch per drain of the RX ring.
                    assert_eq!(sp.pa_consumed_batch(&notices), 0);
                    notices.clear();
                }
                spent += t.elapsed();
                sp.free(ReplyTo::default(), 9, p.range.start, p.range.bytes())
                    .unwrap();
                sp.pump(&mut sink);
                sink.clear();
                let consumed = sp.emitted();
                sp.scrub(consumed, |_, _| {});
                left -= n;
            }
            spent
        })
    });
    g.finish();
}

criterion_group!(benches, alloc_free, refill_cycle);
criterion_main!(benches);
