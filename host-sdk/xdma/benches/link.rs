//! Packet rate of the host link against the software card on stand-in
//! files (page-cache `pread`/`pwrite`, a card thread polling): one packet
//! round trip, and a window of 32 MTU-sized packets in flight. This bounds
//! the host-side cost of the ring protocol; a real card adds PCIe and
//! driver latency per DMA.

use std::time::Duration;

use clio_xdma::{CardThread, FileCard, XdmaLink};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn setup() -> (tempfile::TempDir, XdmaLink, CardThread) {
    let dir = tempfile::tempdir().expect("temp dir");
    let card = FileCard::create(dir.path(), "xdma0", FileCard::DEFAULT_GEOMETRY).expect("card");
    let link = XdmaLink::open(card.prefix()).expect("link");
    let thread = card.spawn(|p, out| out(p));
    (dir, link, thread)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("xdma_file_card");
    let (_dir, mut link, thread) = setup();
    let mut buf = vec![0u8; 2048];

    let small = vec![0x5au8; 64];
    g.throughput(Throughput::Elements(1));
    g.bench_function("round_trip_64B", |b| {
        b.iter(|| {
            link.send(&small).expect("send");
            link.recv(&mut buf, Duration::from_secs(5))
                .expect("recv")
                .expect("answer");
        })
    });

    let mtu = vec![0xa5u8; 1490];
    g.throughput(Throughput::Bytes(32 * mtu.len() as u64));
    g.bench_function("window_32x1490B", |b| {
        b.iter(|| {
            for _ in 0..32 {
                link.send(&mtu).expect("send");
            }
            for _ in 0..32 {
                link.recv(&mut buf, Duration::from_secs(5))
                    .expect("recv")
                    .expect("answer");
            }
        })
    });
    g.finish();
    thread.stop().expect("card thread");
}

mod groups {
    // The macro defines an undocumented public function.
    #![allow(missing_docs)]
    use super::*;
    criterion_group! {
        name = benches;
        config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
        targets = bench
    }
}
criterion_main!(groups::benches);
