//! Whole-fabric behaviour: unloaded latency, random message mixes with data checks,
//! preemption of frames, and bad input.

use clio_wire::edm::{Block66, RmwOp};
use edm::fabric::{Dir, Fabric, FabricConfig, Inject};
use edm::host::Request;
use edm::phy::{frame_blocks, frames_from_stream};
use edm_pim::Priority;

/// Small deterministic generator so failures reproduce from the printed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn unloaded_latency_matches_table1_stack_cycles() {
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    f.hosts[1].mem[100..164].copy_from_slice(&[7u8; 64]);
    f.hosts[0]
        .submit(
            0,
            Request::Read {
                dst: 1,
                addr: 100,
                len: 64,
                local_addr: 0,
            },
        )
        .unwrap();
    assert!(f.run_until_quiet(1000));
    let c = &f.hosts[0].completions[0];
    assert_eq!(c.result, vec![7u8; 64]);
    // 107.52 ns = 42 cycles from leaving the message queue to the first byte written.
    assert_eq!(c.first_data - c.dequeued, 42);
    let now = f.now();
    f.hosts[0]
        .submit(
            now,
            Request::Write {
                dst: 1,
                addr: 200,
                data: vec![9u8; 64],
            },
        )
        .unwrap();
    assert!(f.run_until_quiet(1000));
    assert_eq!(&f.hosts[1].mem[200..264], &[9u8; 64][..]);
    // 104.96 ns = 41 cycles.
    assert_eq!(
        f.hosts[1].applied[0].first - f.hosts[0].completions[1].dequeued,
        41
    );
}

fn random_mix(seed: u64, ports: usize, ops: usize, priority: Priority, with_frames: bool) {
    random_mix_with(seed, ports, ops, priority, with_frames, false);
}

fn random_mix_with(
    seed: u64,
    ports: usize,
    ops: usize,
    priority: Priority,
    with_frames: bool,
    paper_timing: bool,
) {
    let mut cfg = FabricConfig::new(ports);
    if paper_timing {
        // Grants ahead of forwarded messages, release at exactly l/B, fast scheduler clock.
        cfg.switch = cfg.switch.paper_timing();
        cfg.switch.sched_clock = 3;
    }
    cfg.switch.priority = priority;
    cfg.wire_cycles = 3;
    let mut f = Fabric::new(cfg).unwrap();
    let mut rng = Rng(seed | 1);
    // Each node's memory: [0, 16K) read-only pattern, [16K + 4K*w, ...) written by node w,
    // [60K + 8*w] FAA counters.
    for (i, h) in f.hosts.iter_mut().enumerate() {
        for (a, b) in h.mem.iter_mut().enumerate().take(16384) {
            *b = (a as u8).wrapping_mul(31).wrapping_add(i as u8);
        }
    }
    let mut expect_mem: Vec<Vec<u8>> = f.hosts.iter().map(|h| h.mem.clone()).collect();
    let mut expect_reads = std::collections::HashMap::new();
    let mut faa_total = vec![0u64; ports];
    let mut frames_sent = vec![Vec::new(); ports];
    let mut write_cursor = vec![vec![0usize; ports]; ports];
    for k in 0..ops {
        let now = f.now();
        let src = rng.below(ports as u64) as usize;
        let mut dst = rng.below(ports as u64 - 1) as usize;
        if dst >= src {
            dst += 1;
        }
        match rng.below(10) {
            0..=3 => {
                let len = 1 + rng.below(600) as u16;
                let addr = rng.below(16384 - len as u64);
                let local = 40960 + (k % 16) * 1024;
                let tag = f.hosts[src]
                    .submit(
                        now,
                        Request::Read {
                            dst: dst as u16,
                            addr,
                            len,
                            local_addr: local as u64,
                        },
                    )
                    .unwrap();
                let a = addr as usize;
                expect_reads.insert((src, tag), expect_mem[dst][a..a + len as usize].to_vec());
            }
            4..=6 => {
                let len = 1 + rng.below(700) as usize;
                let base = 16384 + 4096 * src;
                let off = write_cursor[src][dst] % (4096 - 700);
                write_cursor[src][dst] += len;
                let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                expect_mem[dst][base + off..base + off + len].copy_from_slice(&data);
                f.hosts[src]
                    .submit(
                        now,
                        Request::Write {
                            dst: dst as u16,
                            addr: (base + off) as u64,
                            data,
                        },
                    )
                    .unwrap();
            }
            7 => {
                let add = rng.below(1000);
                faa_total[dst] += add;
                f.hosts[src]
                    .submit(
                        now,
                        Request::Rmw {
                            dst: dst as u16,
                            addr: 61440,
                            op: RmwOp::Faa,
                            operands: [add, 0],
                        },
                    )
                    .unwrap();
            }
            _ => {
                if with_frames {
                    let len = 64 + rng.below(1400) as usize;
                    let frame: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                    f.hosts[src].send_frame(&frame_blocks(&frame));
                    frames_sent[src].push(frame);
                }
            }
        }
        for _ in 0..rng.below(12) {
            f.tick();
        }
    }
    if !f.run_until_quiet(400_000) {
        for (i, h) in f.hosts.iter().enumerate() {
            eprintln!(
                "host {i}: outstanding {} quiet {} counters {:?} rx {:?} asm {:?}",
                h.outstanding(),
                h.is_quiet(),
                h.counters,
                h.rx_counters(),
                h.asm_counters()
            );
        }
        eprintln!(
            "switch: queued {} counters {:?} quiet {}",
            f.switch.scheduler().queued(),
            f.switch.counters,
            f.switch.is_quiet()
        );
        panic!("seed {seed:#x}: fabric did not drain");
    }
    for (i, h) in f.hosts.iter().enumerate() {
        let mut m = expect_mem[i].clone();
        m[61440..61448].copy_from_slice(&faa_total[i].to_le_bytes());
        if let Some(a) = (16384..40960)
            .chain(61440..61448)
            .find(|&a| h.mem[a] != m[a])
        {
            panic!(
                "seed {seed:#x}: memory of node {i} differs first at {a}: {} != {}",
                h.mem[a], m[a]
            );
        }
        for c in &h.completions {
            if let Some(want) = expect_reads.get(&(i, c.tag)) {
                assert!(c.ok, "seed {seed:#x}");
                assert_eq!(
                    &c.result, want,
                    "seed {seed:#x}: read data of node {i} tag {}",
                    c.tag
                );
            }
        }
        let rx = h.rx_counters();
        assert_eq!(
            (rx.unknown_type, rx.truncated, rx.bad_sync),
            (0, 0, 0),
            "seed {seed:#x}"
        );
        assert_eq!(
            h.counters.unknown_grant + h.counters.unknown_response,
            0,
            "seed {seed:#x}"
        );
        // Frames sent by host i arrive intact, in order, at switch port i.
        let got = frames_from_stream(f.switch.frames_received(i));
        let got: Vec<Vec<u8>> = got
            .into_iter()
            .map(|r| r.expect("frame blocks consecutive"))
            .collect();
        assert_eq!(got, frames_sent[i], "seed {seed:#x}: frames of node {i}");
    }
    let reads = expect_reads.len();
    let done: usize = f.hosts.iter().map(|h| h.completions.len()).sum();
    assert!(done >= reads);
    let sc = f.switch.counters;
    assert_eq!(
        (
            f.switch.forward_counters().no_circuit,
            sc.notify_refused,
            sc.unexpected
        ),
        (0, 0, 0),
        "seed {seed:#x}"
    );
}

#[test]
fn random_mixes_fcfs_with_frames() {
    for seed in [1u64, 0xdead_beef, 42] {
        random_mix(seed, 4, 300, Priority::Fcfs, true);
    }
}

#[test]
fn random_mixes_with_paper_timing() {
    for seed in [3u64, 0xfeed] {
        random_mix_with(seed, 5, 300, Priority::Fcfs, true, true);
    }
    random_mix_with(17, 5, 300, Priority::Srpt, false, true);
}

#[test]
fn random_mixes_srpt() {
    for seed in [7u64, 99] {
        random_mix(seed, 6, 300, Priority::Srpt, false);
    }
}

#[test]
fn cas_is_atomic_across_competing_nodes() {
    let mut f = Fabric::new(FabricConfig::new(5)).unwrap();
    // Nodes 1..=4 all try to take the lock word at node 0 with CAS(0 -> me).
    for n in 1..5u16 {
        f.hosts[n as usize]
            .submit(
                0,
                Request::Rmw {
                    dst: 0,
                    addr: 64,
                    op: RmwOp::Cas,
                    operands: [0, n as u64],
                },
            )
            .unwrap();
    }
    assert!(f.run_until_quiet(10_000));
    let winners: Vec<u16> = (1..5u16)
        .filter(|&n| f.hosts[n as usize].completions[0].result == vec![1])
        .collect();
    assert_eq!(winners.len(), 1);
    let word = u64::from_le_bytes(f.hosts[0].mem[64..72].try_into().unwrap());
    assert_eq!(word, winners[0] as u64);
}

#[test]
fn memory_message_preempts_jumbo_frame() {
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    f.tap = true;
    let frame: Vec<u8> = (0..9000).map(|i| i as u8).collect();
    f.hosts[0].send_frame(&frame_blocks(&frame));
    for _ in 0..100 {
        f.tick();
    }
    let now = f.now();
    f.hosts[0]
        .submit(
            now,
            Request::Write {
                dst: 1,
                addr: 0,
                data: vec![1; 64],
            },
        )
        .unwrap();
    assert!(f.run_until_quiet(20_000));
    // The /N/ left host 0 two cycles after the request was dequeued, mid-frame.
    let n = f.taps.iter().find(|t| t.dir == Dir::Up && !t.rx).unwrap();
    assert_eq!(n.cycle, now + 2);
    assert_eq!(f.hosts[1].mem[..64], [1u8; 64]);
    let got = frames_from_stream(f.switch.frames_received(0));
    assert!(got == vec![Ok(frame)], "frame arrived intact");
}

#[test]
fn bad_input_is_counted_and_link_keeps_working() {
    let mut f = Fabric::new(FabricConfig::new(3)).unwrap();
    // Unknown block type, a truncated message, a grant for an unknown id, a stray /MT/.
    let ms = edm_ms_block();
    f.inject(
        0,
        Dir::Up,
        5,
        Inject::Replace(Block66::control(0x77, [0; 7])),
    );
    f.inject(0, Dir::Up, 6, Inject::Replace(ms));
    f.inject(
        1,
        Dir::Down,
        9,
        Inject::Replace(
            clio_wire::edm::GrantRepr {
                peer: 2,
                id: 77,
                len: 64,
                kind: clio_wire::edm::MsgKind::Wreq,
            }
            .emit(),
        ),
    );
    f.inject(
        2,
        Dir::Up,
        11,
        Inject::Replace(Block66::control(clio_wire::edm::block_type::MT, [0; 7])),
    );
    for _ in 0..40 {
        f.tick();
    }
    assert_eq!(f.switch.rx_counters(0).unknown_type, 1);
    assert_eq!(f.switch.rx_counters(0).truncated, 1);
    assert_eq!(f.switch.rx_counters(2).stray_memory, 1);
    assert_eq!(f.hosts[1].counters.unknown_grant, 1);
    // The links still carry traffic.
    f.hosts[2].mem[..8].copy_from_slice(&5u64.to_le_bytes());
    let now = f.now();
    f.hosts[0]
        .submit(
            now,
            Request::Read {
                dst: 2,
                addr: 0,
                len: 8,
                local_addr: 0,
            },
        )
        .unwrap();
    f.hosts[1]
        .submit(
            now,
            Request::Write {
                dst: 2,
                addr: 8,
                data: vec![3; 8],
            },
        )
        .unwrap();
    assert!(f.run_until_quiet(5000));
    assert_eq!(
        f.hosts[0].completions[0].result,
        5u64.to_le_bytes().to_vec()
    );
    assert_eq!(f.hosts[2].mem[8..16], [3u8; 8]);
}

fn edm_ms_block() -> Block66 {
    let h = clio_wire::edm::MsgHeader::rreq(2, 1, 8);
    let blocks = edm::assemble::encode(&h, &[0; 8]).unwrap();
    blocks[0]
}

#[test]
fn corrupting_link_is_disabled_and_reported() {
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    for c in 10..30 {
        f.inject(0, Dir::Up, c, Inject::BadSync);
    }
    for _ in 0..60 {
        f.tick();
    }
    let at = f.link_disabled(0, Dir::Up).expect("link disabled");
    // 16th bad block arrives 4 cycles (PCS + wire) after it was sent at cycle 25.
    assert_eq!(at, 29);
    assert_eq!(f.link_disabled(0, Dir::Down), None);
    assert_eq!(f.link_disabled(1, Dir::Up), None);
}

/// Host 0 reads `len` bytes of host 1 from 8 bytes before the end of its memory; runs until
/// quiet and checks the read failed with a NULL response and host 1 counted a bad address.
fn null_read(f: &mut Fabric, len: u16) -> edm::host::Completion {
    let big = f.hosts[1].mem.len() as u64;
    f.hosts[0]
        .submit(
            0,
            Request::Read {
                dst: 1,
                addr: big - 8,
                len,
                local_addr: 0,
            },
        )
        .unwrap();
    assert!(f.run_until_quiet(5000));
    let c = f.hosts[0].completions[0].clone();
    assert!(!c.ok);
    assert!(c.result.is_empty());
    assert_eq!(f.hosts[1].counters.bad_address, 1);
    c
}

#[test]
fn out_of_range_read_gets_a_null_response() {
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    null_read(&mut f, 64);
}

#[test]
fn a_null_response_longer_than_a_chunk_spends_every_grant() {
    // The switch schedules a read's response by the request's length. A NULL answer in the
    // first chunk would complete the read (and free its id) while the switch still held the
    // other chunks; the requester's next reads then pushed the pair past 2X and one was
    // refused and lost (burst seed 1795747458). The memory node answers each grant instead,
    // the NULL coming with the last.
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    f.switch.log = Some(Vec::new());
    let chunk = f.switch.config().chunk_bytes;
    let c = null_read(&mut f, 2 * chunk + 64);
    let grants: Vec<u64> = f
        .switch
        .log
        .as_ref()
        .unwrap()
        .iter()
        .filter(|e| e.grant && e.kind == clio_wire::edm::MsgKind::Rres)
        .map(|e| e.at)
        .collect();
    assert_eq!(
        grants.len(),
        3,
        "one grant per chunk of the request's length"
    );
    assert!(
        c.done > *grants.last().unwrap(),
        "the read completed at {} before the switch's last grant at {}",
        c.done,
        grants.last().unwrap()
    );
    assert_eq!(f.hosts[1].counters.unknown_grant, 0);
    assert_eq!(f.switch.counters.notify_refused, 0);
}

#[test]
fn the_burst_that_lost_a_read_after_a_null_response_goes_quiet() {
    // `edm-cosim 6 150 20 1795747458 OUT 60` is the random burst that hung before the memory
    // node answered every grant of a NULL response (the model never went quiet).
    let out = std::env::temp_dir().join(format!("edm-null-burst-{}.txt", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_edm-cosim"))
        .args(["6", "150", "20", "1795747458"])
        .arg(&out)
        .arg("60")
        .status()
        .expect("run edm-cosim");
    let trace = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert!(status.success(), "edm-cosim failed on the burst seed");
    assert!(
        trace.lines().any(|l| l.starts_with("Q ")),
        "no quiet cycle in the trace"
    );
}

#[test]
fn at_most_x_messages_per_destination_are_active() {
    let mut f = Fabric::new(FabricConfig::new(3)).unwrap();
    f.tap = true;
    for i in 0..8u64 {
        f.hosts[0]
            .submit(
                0,
                Request::Write {
                    dst: 1,
                    addr: i * 64,
                    data: vec![i as u8; 64],
                },
            )
            .unwrap();
    }
    f.hosts[0]
        .submit(
            0,
            Request::Read {
                dst: 2,
                addr: 0,
                len: 8,
                local_addr: 0,
            },
        )
        .unwrap();
    for _ in 0..6 {
        f.tick();
    }
    // Three /N/ for node 1 left (X = 3), then the RREQ to node 2, not held behind the writes.
    let sent: Vec<_> = f
        .taps
        .iter()
        .filter(|t| t.dir == Dir::Up && !t.rx)
        .map(|t| (t.cycle, t.block.class()))
        .collect();
    use clio_wire::edm::BlockClass;
    assert_eq!(
        sent,
        vec![
            (2, BlockClass::Notify),
            (3, BlockClass::Notify),
            (4, BlockClass::Notify),
            (5, BlockClass::Ms)
        ]
    );
    assert!(f.run_until_quiet(20_000));
    for i in 0..8usize {
        assert_eq!(f.hosts[1].mem[i * 64..i * 64 + 64], [i as u8; 64]);
    }
    let read = f.hosts[0].completions.iter().find(|c| c.tag == 8).unwrap();
    let last_write = f.hosts[0]
        .completions
        .iter()
        .filter(|c| c.tag < 8)
        .map(|c| c.done)
        .max()
        .unwrap();
    assert!(
        read.done < last_write,
        "the read overtook the queued writes to another node"
    );
}

#[test]
fn submit_rejects_bad_fields_by_name() {
    let mut f = Fabric::new(FabricConfig::new(2)).unwrap();
    let e = f.hosts[0]
        .submit(
            0,
            Request::Read {
                dst: 1,
                addr: 0,
                len: 0,
                local_addr: 0,
            },
        )
        .unwrap_err();
    assert_eq!(e.to_string(), "request field `len` is out of range");
    let e = f.hosts[0]
        .submit(
            0,
            Request::Write {
                dst: 0,
                addr: 0,
                data: vec![1],
            },
        )
        .unwrap_err();
    assert_eq!(e.to_string(), "request field `dst` is out of range");
}
