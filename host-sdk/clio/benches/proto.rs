//! Criterion benchmarks of the SDK (see the module docs below).
//! Per-operation cost of the SDK:
//! - `proto/*`: the state machine alone (submit → transmit → response →
//!   completion), with responses made by a minimal in-bench responder;
//! - `inproc/*`: the blocking API over the in-process backend;
//! - `udp/*`: the async pattern (many outstanding reads) over loopback UDP
//!   against a responder thread.

use std::hint::black_box;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clio::backend::{InProcess, InProcessBoard};
use clio::proto::{Connection, MAX_DATAGRAM};
use clio::{ClientConfig, Completion, Request, Session, SessionInfo};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::{InfoResp, OpenSessionResp};
use clio_wire::{Header, Opcode, Packet, Status};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

/// Answers reads with zeros, writes with ACKs and info with a fixed record;
/// just enough board to time the client.
struct Responder {
    zeros: Vec<u8>,
    out: Vec<u8>,
}

impl Responder {
    fn new() -> Self {
        Responder {
            zeros: vec![0; 9000],
            out: vec![0; MAX_DATAGRAM],
        }
    }

    fn answer(&mut self, pkt: &[u8], send: &mut dyn FnMut(&[u8])) {
        let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) else {
            return;
        };
        let mut r = Header {
            opcode: h.opcode.response().unwrap_or(Opcode::Nack),
            status: Status::Ok,
            retry_of: 0,
            payload_len: 0,
            key: 0,
            ack: 0,
            ..h
        };
        match h.opcode {
            Opcode::Read => {
                let mtu = 1450u32;
                let mut off = 0;
                while off < h.total_len {
                    let n = mtu.min(h.total_len - off);
                    r.offset = off;
                    r.payload_len = n as u16;
                    let len = r
                        .emit_with_payload(&mut self.out, &self.zeros[..n as usize])
                        .unwrap();
                    send(&self.out[..len]);
                    off += n;
                }
            }
            Opcode::Info => {
                let mut body = [0u8; InfoResp::LEN];
                InfoResp {
                    board: InfoResp::board_field("bench"),
                    firmware_version: 0,
                    rtl_version: 0,
                    build_id: 0,
                    config_hash: 0,
                    dram_bytes: 0,
                    mtu: 1450,
                    page_shift: 22,
                    slots_per_bucket: 16,
                    tlb_entries: 64,
                    epoch: 1,
                    sessions: 64,
                    max_resp_kib: 64,
                }
                .emit(&mut body)
                .unwrap();
                r.payload_len = InfoResp::LEN as u16;
                let len = r.emit_with_payload(&mut self.out, &body).unwrap();
                send(&self.out[..len]);
            }
            Opcode::OpenSession => {
                let mut body = [0u8; OpenSessionResp::LEN];
                OpenSessionResp {
                    session: 1,
                    pid: 1,
                    key: 1,
                    epoch: 1,
                    dedup_quota: 1024,
                    lock_quota: 16,
                    mem_quota_pages: 1024,
                }
                .emit(&mut body)
                .unwrap();
                r.payload_len = body.len() as u16;
                let len = r.emit_with_payload(&mut self.out, &body).unwrap();
                send(&self.out[..len]);
            }
            _ => {
                let len = r.emit_with_payload(&mut self.out, &[]).unwrap();
                send(&self.out[..len]);
            }
        }
    }
}

impl InProcessBoard for Responder {
    fn handle(&mut self, _from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.answer(pkt, out)
    }
}

fn cfg() -> ClientConfig {
    ClientConfig {
        cwnd_init: 256.0,
        target_delay_ns: 1_000_000_000,
        ..ClientConfig::default()
    }
}

fn bench_proto(c: &mut Criterion) {
    let mut g = c.benchmark_group("proto");
    // One synchronous-style 16 B read: the whole client path, time fixed.
    let mut conn = Connection::new(cfg()).unwrap();
    conn.set_session(Some(SessionInfo::new(1, 1, 1, 1)));
    let mut board = Responder::new();
    let mut tx = vec![0u8; MAX_DATAGRAM];
    let mut rx = vec![0u8; MAX_DATAGRAM];
    let mut now = 0u64;
    g.throughput(Throughput::Elements(1));
    g.bench_function("read16_one_at_a_time", |b| {
        b.iter(|| {
            now += 1000;
            let id = conn
                .submit(Request::Read {
                    va: 0x1000,
                    len: 16,
                })
                .unwrap();
            let n = conn.poll_transmit(now, &mut tx).unwrap();
            let mut rn = 0;
            board.answer(&tx[..n], &mut |r| {
                rx[..r.len()].copy_from_slice(r);
                rn = r.len();
            });
            conn.handle_packet(now + 500, &rx[..rn]);
            match conn.take(id) {
                Some(Ok(Completion::Read(d))) => conn.recycle(black_box(d)),
                other => panic!("{other:?}"),
            }
        })
    });
    // 64 outstanding 64 B reads on distinct pages, answered in a batch.
    g.throughput(Throughput::Elements(64));
    let mut conn = Connection::new(cfg()).unwrap();
    conn.set_session(Some(SessionInfo::new(1, 1, 1, 1)));
    let mut pkts: Vec<Vec<u8>> = Vec::new();
    g.bench_function("read64_batch_of_64", |b| {
        b.iter(|| {
            now += 1000;
            for i in 0..64u64 {
                conn.submit(Request::Read {
                    va: i << 22,
                    len: 64,
                })
                .unwrap();
            }
            pkts.clear();
            while let Some(n) = conn.poll_transmit(now, &mut tx) {
                board.answer(&tx[..n], &mut |r| pkts.push(r.to_vec()));
            }
            for p in &pkts {
                conn.handle_packet(now + 500, p);
            }
            let mut k = 0;
            while let Some((_, r)) = conn.poll_completion() {
                if let Ok(Completion::Read(d)) = r {
                    conn.recycle(d);
                }
                k += 1;
            }
            assert_eq!(k, 64);
        })
    });
    // The responder's share of the above (emit + CRC of one response).
    g.throughput(Throughput::Elements(1));
    let req = {
        let h = Header::request(Opcode::Read, 1, 5, 0, 16).with_session(1, 1, 1);
        let mut b = vec![0u8; HEADER_LEN];
        h.emit_with_payload(&mut b, &[]).unwrap();
        b
    };
    g.bench_function("responder_share_read16", |b| {
        b.iter(|| {
            board.answer(black_box(&req), &mut |r| {
                black_box(r);
            })
        })
    });
    g.finish();
}

fn bench_inproc(c: &mut Criterion) {
    let mut g = c.benchmark_group("inproc");
    g.throughput(Throughput::Elements(1));
    let mut s = Session::open_with(InProcess::new(Responder::new(), 1), cfg()).unwrap();
    let mut buf = [0u8; 16];
    g.bench_function("sync_read16", |b| {
        b.iter(|| {
            s.rread(0x1000, &mut buf).unwrap();
            black_box(&buf);
        })
    });
    g.finish();
}

fn bench_udp(c: &mut Criterion) {
    let mut g = c.benchmark_group("udp");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(3));
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let server = std::thread::spawn(move || {
        let mut board = Responder::new();
        let mut buf = vec![0u8; 65536];
        while !st.load(Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            board.answer(&buf[..n], &mut |r| {
                let _ = sock.send_to(r, from);
            });
        }
    });
    // Default congestion control: the responder thread, not the client, is
    // the bottleneck here, and delay-based AIMD keeps its queue short.
    let udp_cfg = ClientConfig {
        rto_min_ns: 5_000_000,
        rto_initial_ns: 5_000_000,
        ..ClientConfig::default()
    };
    let mut s = Session::open(addr, udp_cfg).unwrap();
    g.throughput(Throughput::Elements(256));
    g.bench_function("async_read64_x256", |b| {
        b.iter_batched(
            Vec::new,
            |mut hs| {
                for i in 0..256u64 {
                    hs.push(s.rread_async((i % 64) << 22, 64).unwrap());
                }
                for r in s.rpoll(&hs).unwrap() {
                    black_box(r.unwrap());
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.throughput(Throughput::Elements(1));
    let mut buf = [0u8; 16];
    g.bench_function("sync_read16", |b| {
        b.iter(|| s.rread(0x1000, &mut buf).unwrap())
    });
    g.finish();
    eprintln!(
        "udp session stats: {:?}, cwnd {:.1}",
        s.connection().stats(),
        s.connection().control().cwnd()
    );
    stop.store(true, Ordering::Relaxed);
    let _ = server.join();
}

mod groups {
    // The macro defines an undocumented public function.
    #![allow(missing_docs)]
    use super::*;
    criterion_group!(benches, bench_proto, bench_inproc, bench_udp);
}
criterion_main!(groups::benches);
