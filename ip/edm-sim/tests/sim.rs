//! Simulator checks: conservation, EDM queue bounds, determinism, hand-computed cases.

use edm_pim::Priority;
use edm_sim::edm::{TABLE1_READ_PS, TABLE1_WRITE_PS};
use edm_sim::{
    evaluate, generate, run_scheme, EdmOrder, IdealCache, Kind, Message, Scheme, SimConfig,
    SizeCdf, Sizes, WorkloadSpec,
};

const ALL: [Scheme; 8] = [
    Scheme::Edm(Priority::Fcfs),
    Scheme::Edm(Priority::Srpt),
    Scheme::Ird,
    Scheme::Pfabric,
    Scheme::Pfc,
    Scheme::Dctcp,
    Scheme::Cxl,
    Scheme::Fastpass,
];

fn small_cfg(nodes: usize) -> SimConfig {
    SimConfig {
        nodes,
        ..SimConfig::default()
    }
}

/// A small heavy-tailed trace: sizes of 1, 3 and 20 packets plus 64 B messages.
fn mixed_trace(nodes: usize, messages: usize, load: f64, seed: u64) -> Vec<Message> {
    let cdf = SizeCdf::parse("test", "0.05 1 0.5\n1 1 0.7\n3 1 0.9\n20 1 1.0", 1460).unwrap();
    let spec = WorkloadSpec {
        load,
        write_ratio: 0.5,
        sizes: Sizes::Cdf(cdf),
        messages,
        seed,
    };
    generate(&spec, &small_cfg(nodes)).unwrap()
}

#[test]
fn every_byte_is_delivered_exactly_once_by_every_scheme() {
    let cfg = small_cfg(8);
    let msgs = mixed_trace(8, 300, 0.6, 11);
    let total: u64 = msgs.iter().map(|m| m.bytes).sum();
    for scheme in ALL {
        let r = run_scheme(scheme, &cfg, &msgs).unwrap();
        for m in &msgs {
            assert!(
                r.finish[m.id as usize].is_some(),
                "{}: message {} never completed",
                scheme.name(),
                m.id
            );
            assert!(r.finish[m.id as usize].unwrap() > m.arrival);
            assert_eq!(
                r.delivered[m.id as usize],
                m.bytes,
                "{}: message {} bytes",
                scheme.name(),
                m.id
            );
        }
        assert_eq!(r.duplicate_bytes, 0, "{}", scheme.name());
        // Everything sent arrived; only dropped packets are sent twice.
        assert!(r.sent_bytes >= total, "{}", scheme.name());
        if r.drops == 0 {
            assert_eq!(
                r.sent_bytes,
                total,
                "{}: sent bytes without drops",
                scheme.name()
            );
        }
    }
}

#[test]
fn lossy_schemes_recover_from_drops() {
    // An incast onto node 0 with tiny buffers forces drops; retransmission must still deliver
    // every byte exactly once.
    let cfg = small_cfg(8);
    let msgs: Vec<Message> = (0..120u32)
        .map(|i| Message {
            id: i,
            kind: Kind::Write,
            requester: 1 + (i % 7) as u16,
            target: 0,
            bytes: 4 * 1460,
            arrival: u64::from(i) * 1000,
        })
        .collect();
    let p = edm_sim::packet::Params {
        dctcp_buffer: 8 * 1460,
        pfabric_buffer: 6 * 1460,
        ..Default::default()
    };
    for flavor in [
        edm_sim::packet::Flavor::Dctcp,
        edm_sim::packet::Flavor::Pfabric,
    ] {
        let r = edm_sim::packet::run_with(&cfg, &msgs, flavor, p).unwrap();
        assert!(r.drops > 0, "{flavor:?} should drop in this incast");
        assert!(msgs
            .iter()
            .all(|m| r.delivered[m.id as usize] == m.bytes && r.finish[m.id as usize].is_some()));
        assert_eq!(r.duplicate_bytes, 0);
        assert!(r.sent_bytes > msgs.iter().map(|m| m.bytes).sum::<u64>());
    }
}

#[test]
fn edm_never_exceeds_its_notification_queue_bound() {
    // Heavy incast: every node writes to node 0 far faster than node 0's link drains.
    let cfg = small_cfg(6);
    let msgs: Vec<Message> = (0..600u32)
        .map(|i| Message {
            id: i,
            kind: if i % 3 == 0 { Kind::Read } else { Kind::Write },
            requester: if i % 3 == 0 { 0 } else { 1 + (i % 5) as u16 },
            target: if i % 3 == 0 { 1 + (i % 5) as u16 } else { 0 },
            bytes: 700,
            arrival: u64::from(i) * 100,
        })
        .collect();
    // X per source and ordering lane: node 0's queue holds the others' writes and the read
    // responses node 0 asked for, two compute–memory pairs per port pair (2·X·N), or X·N when
    // the port pair is the ordering unit.
    for (order, lanes) in [(EdmOrder::NodePair, 2), (EdmOrder::PortPair, 1)] {
        let cfg = SimConfig {
            edm_order: order,
            ..cfg
        };
        let r = run_scheme(Scheme::Edm(Priority::Srpt), &cfg, &msgs).unwrap();
        let bound = lanes * cfg.active_per_pair * cfg.nodes as u32;
        assert!(
            r.max_queue >= cfg.active_per_pair,
            "{order:?}: the incast should fill queues: {}",
            r.max_queue
        );
        assert!(
            r.max_queue <= bound,
            "{order:?}: queue {} over {lanes}·X·N = {bound}",
            r.max_queue
        );
        assert!(r.finish.iter().all(Option::is_some));
    }
}

#[test]
fn runs_are_deterministic_under_a_seed() {
    let cfg = small_cfg(8);
    for scheme in ALL {
        let a = run_scheme(scheme, &cfg, &mixed_trace(8, 200, 0.7, 5)).unwrap();
        let b = run_scheme(scheme, &cfg, &mixed_trace(8, 200, 0.7, 5)).unwrap();
        assert_eq!(a, b, "{}", scheme.name());
    }
    assert_ne!(mixed_trace(8, 50, 0.7, 5), mixed_trace(8, 50, 0.7, 6));
}

#[test]
fn three_node_edm_incast_by_hand() {
    // Nodes 1 and 2 each write 64 B to node 0 at t = 0. Notifications reach the scheduler at
    // hop + 3 cycles = 48 + 7.68 ns. Destination 0's rotated encoder prefers source 1. Write A
    // (1 -> 0) completes at the Table 1 latency; write B is granted when the ports free 5.12 ns
    // later and completes 5.12 ns after A.
    let cfg = small_cfg(3);
    let w = |id, src| Message {
        id,
        kind: Kind::Write,
        requester: src,
        target: 0,
        bytes: 64,
        arrival: 0,
    };
    let r = run_scheme(Scheme::Edm(Priority::Fcfs), &cfg, &[w(0, 1), w(1, 2)]).unwrap();
    assert_eq!(r.finish, vec![Some(296_960), Some(296_960 + 5_120)]);
    // A read: RREQ to the scheduler, RRES granted at once.
    let rd = Message {
        id: 0,
        kind: Kind::Read,
        requester: 2,
        target: 1,
        bytes: 64,
        arrival: 7,
    };
    assert_eq!(
        run_scheme(Scheme::Edm(Priority::Fcfs), &cfg, &[rd])
            .unwrap()
            .finish[0],
        Some(7 + TABLE1_READ_PS)
    );
    // Three 256 B chunks of one write: one chunk per 20.48 ns, the last one delivered last.
    let big = Message {
        id: 0,
        kind: Kind::Write,
        requester: 1,
        target: 2,
        bytes: 600,
        arrival: 0,
    };
    let fin = run_scheme(Scheme::Edm(Priority::Fcfs), &cfg, &[big])
        .unwrap()
        .finish[0]
        .unwrap();
    assert_eq!(fin, TABLE1_WRITE_PS - 5_120 + 2 * 20_480 + 88 * 80);
    // Charging 33-bit control messages (330 ps at 100 Gbps) holds the ports that much longer
    // per chunk: the second write of the incast and every later chunk start 330 ps later.
    let ctl = SimConfig {
        edm_control_bits: 33,
        ..cfg
    };
    let r = run_scheme(Scheme::Edm(Priority::Fcfs), &ctl, &[w(0, 1), w(1, 2)]).unwrap();
    assert_eq!(r.finish, vec![Some(296_960), Some(296_960 + 5_120 + 330)]);
    let fin = run_scheme(Scheme::Edm(Priority::Fcfs), &ctl, &[big])
        .unwrap()
        .finish[0]
        .unwrap();
    assert_eq!(fin, TABLE1_WRITE_PS - 5_120 + 2 * (20_480 + 330) + 88 * 80);
    // A charged RREQ holds the memory node's ports for 8 B after the response's grant.
    let rd2 = |id, arrival| Message { id, arrival, ..rd };
    let rreq = SimConfig {
        edm_charge_rreq: true,
        ..cfg
    };
    let f = run_scheme(Scheme::Edm(Priority::Fcfs), &rreq, &[rd2(0, 0), rd2(1, 0)])
        .unwrap()
        .finish;
    assert_eq!(f[1].unwrap() - f[0].unwrap(), 5_120 + 640);
}

#[test]
fn three_node_dctcp_incast_by_hand() {
    // Same incast on the packet switch: both packets reach the switch at 5.12 + 48 ns; the
    // first is forwarded at once (delivered 5.12 + 48 ns later), the second waits 5.12 ns.
    let cfg = small_cfg(3);
    let w = |id, src| Message {
        id,
        kind: Kind::Write,
        requester: src,
        target: 0,
        bytes: 64,
        arrival: 0,
    };
    let r = run_scheme(Scheme::Dctcp, &cfg, &[w(0, 1), w(1, 2)]).unwrap();
    assert_eq!(r.finish, vec![Some(2 * 53_120), Some(2 * 53_120 + 5_120)]);
}

#[test]
fn ideal_times_are_the_lone_message_times() {
    let cfg = small_cfg(144);
    let mut ideals = IdealCache::new();
    let edm = Scheme::Edm(Priority::Fcfs);
    assert_eq!(
        ideals.ideal(edm, &cfg, Kind::Write, 64).unwrap(),
        TABLE1_WRITE_PS
    );
    assert_eq!(
        ideals.ideal(edm, &cfg, Kind::Read, 64).unwrap(),
        TABLE1_READ_PS
    );
    // DCTCP write: two store-and-forward hops. Read: RREQ (8 B) then RRES (64 B).
    assert_eq!(
        ideals.ideal(Scheme::Dctcp, &cfg, Kind::Write, 64).unwrap(),
        2 * 53_120
    );
    assert_eq!(
        ideals.ideal(Scheme::Dctcp, &cfg, Kind::Read, 64).unwrap(),
        2 * (640 + 48_000) + 2 * 53_120
    );
}

#[test]
fn loaded_ordering_edm_best_fastpass_worst() {
    let cfg = small_cfg(16);
    let spec = WorkloadSpec {
        load: 0.8,
        write_ratio: 1.0,
        sizes: Sizes::Fixed(64),
        messages: 6000,
        seed: 2,
    };
    let msgs = generate(&spec, &cfg).unwrap();
    let mut ideals = IdealCache::new();
    let mean =
        |s: Scheme, ideals: &mut IdealCache| evaluate(s, &cfg, &msgs, ideals).unwrap().1.all.mean;
    let edm = mean(Scheme::Edm(Priority::Fcfs), &mut ideals);
    let fastpass = mean(Scheme::Fastpass, &mut ideals);
    for s in [
        Scheme::Ird,
        Scheme::Pfabric,
        Scheme::Pfc,
        Scheme::Dctcp,
        Scheme::Cxl,
    ] {
        let m = mean(s, &mut ideals);
        assert!(edm < m, "EDM {edm} should beat {} {m}", s.name());
        assert!(
            m < fastpass,
            "Fastpass {fastpass} should be worst ({} {m})",
            s.name()
        );
    }
    assert!(edm < 1.3, "EDM within 1.3x of unloaded at load 0.8: {edm}");
}

#[test]
fn bad_traces_are_rejected_with_the_field_named() {
    let cfg = small_cfg(4);
    let bad = [Message {
        id: 0,
        kind: Kind::Write,
        requester: 2,
        target: 9,
        bytes: 64,
        arrival: 0,
    }];
    let e = run_scheme(Scheme::Dctcp, &cfg, &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("messages") && e.contains("message 0"), "{e}");
    let e = run_scheme(Scheme::Dctcp, &SimConfig { nodes: 1, ..cfg }, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nodes"), "{e}");
}

#[test]
fn cxl_incast_blocks_an_ingress_head_of_line() {
    // Nodes 1..=6 write 8 KiB each to node 0 (the victim); node 1 also writes 256 B to node 7.
    // Output-queued DCTCP delivers 1 -> 7 at once; under CXL node 1's ingress FIFO holds flits
    // for the full victim egress ahead of it, so the 1 -> 7 write waits behind the incast.
    let cfg = small_cfg(8);
    let mut msgs: Vec<Message> = (1..=6u16)
        .map(|s| Message {
            id: 0,
            kind: Kind::Write,
            requester: s,
            target: 0,
            bytes: 8192,
            arrival: 0,
        })
        .collect();
    msgs.push(Message {
        id: 0,
        kind: Kind::Write,
        requester: 1,
        target: 7,
        bytes: 256,
        // By 1 µs node 1's 4 KiB of ingress credits are all held by flits for the victim.
        arrival: 1_000_000,
    });
    for (i, m) in msgs.iter_mut().enumerate() {
        m.id = i as u32;
    }
    let cxl = run_scheme(Scheme::Cxl, &cfg, &msgs).unwrap().finish[6].unwrap() - 1_000_000;
    let dctcp = run_scheme(Scheme::Dctcp, &cfg, &msgs).unwrap().finish[6].unwrap() - 1_000_000;
    assert!(
        cxl > 3 * dctcp,
        "CXL {cxl} ps should be far behind DCTCP {dctcp} ps"
    );
}

#[test]
fn cxl_host_order_fifo_holds_a_short_message_behind_a_long_one() {
    // Node 0 issues a 64 KiB write to node 1, then 256 B to node 2 one nanosecond later. With
    // round-robin hosts the short write overtakes; with one in-order queue per host it leaves
    // after the whole long write.
    let msgs = [(1u16, 65_536u64, 0u64), (2, 256, 1_000)].map(|(target, bytes, arrival)| Message {
        id: u32::from(target) - 1,
        kind: Kind::Write,
        requester: 0,
        target,
        bytes,
        arrival,
    });
    let rr_cfg = SimConfig {
        cxl_host_fifo: false,
        ..small_cfg(3)
    };
    let rr = run_scheme(Scheme::Cxl, &rr_cfg, &msgs).unwrap();
    let fifo_cfg = SimConfig {
        cxl_host_fifo: true,
        cxl_host_queues: 1,
        ..small_cfg(3)
    };
    let fifo = run_scheme(Scheme::Cxl, &fifo_cfg, &msgs).unwrap();
    let (rr_long, rr_short) = (rr.finish[0].unwrap(), rr.finish[1].unwrap());
    let (fifo_long, fifo_short) = (fifo.finish[0].unwrap(), fifo.finish[1].unwrap());
    assert!(
        rr_short < rr_long / 4,
        "rr: short {rr_short} long {rr_long}"
    );
    // 64 KiB take 5.24 µs to serialize at 100 Gbps; the short write follows them.
    assert!(fifo_short > 5_242_880, "fifo: short {fifo_short}");
    assert!(
        fifo_short > fifo_long - 100_000,
        "fifo: short {fifo_short} long {fifo_long}"
    );
    assert_eq!(rr.delivered, fifo.delivered);
}

#[test]
fn pfc_queue_pairs_keep_a_pair_in_order_and_interleave_pairs() {
    // Node 0 issues a 64 KiB write to node 1, then 256 B to node 1 and 256 B to node 2 one
    // nanosecond later. In order (one queue pair per destination) the short write to node 1
    // leaves after the long one, the one to node 2 interleaves at once; with the pair order
    // off both short writes overtake.
    let msgs = [(1u16, 65_536u64, 0u64), (1, 256, 1_000), (2, 256, 1_000)]
        .into_iter()
        .enumerate()
        .map(|(i, (target, bytes, arrival))| Message {
            id: i as u32,
            kind: Kind::Write,
            requester: 0,
            target,
            bytes,
            arrival,
        })
        .collect::<Vec<_>>();
    let run = |pfc_in_order: bool| {
        let cfg = SimConfig {
            pfc_in_order,
            ..small_cfg(3)
        };
        let r = run_scheme(Scheme::Pfc, &cfg, &msgs).unwrap();
        assert_eq!(r.delivered, vec![65_536, 256, 256]);
        [0, 1, 2].map(|i| r.finish[i].unwrap())
    };
    let [long, same_pair, other_pair] = run(true);
    assert!(
        same_pair > long,
        "in order: {same_pair} before the long write {long}"
    );
    assert!(
        other_pair < 1_000_000,
        "in order: other pair done at {other_pair}"
    );
    let [long, same_pair, other_pair] = run(false);
    assert!(
        same_pair < long / 4,
        "unordered: {same_pair} vs long {long}"
    );
    assert!(
        other_pair < 1_000_000,
        "unordered: other pair done at {other_pair}"
    );
    // The responses to the peer's reads are the queue pair's other stream: node 0 reading
    // 256 B from node 1 does not wait for node 1's long write to node 0.
    let msgs = [
        (Kind::Write, 1u16, 0u16, 65_536u64, 0u64),
        (Kind::Read, 0, 1, 256, 1_000),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (kind, requester, target, bytes, arrival))| Message {
        id: i as u32,
        kind,
        requester,
        target,
        bytes,
        arrival,
    })
    .collect::<Vec<_>>();
    let r = run_scheme(Scheme::Pfc, &small_cfg(3), &msgs).unwrap();
    let (long, read) = (r.finish[0].unwrap(), r.finish[1].unwrap());
    assert!(
        read < long / 4,
        "read response {read} behind the write {long}"
    );
}

#[test]
fn cxl_host_queues_hold_a_short_message_only_when_every_queue_is_busy() {
    // Node 0 issues 64 KiB writes to nodes 1 and 2, then 256 B to node 3 one nanosecond later.
    // With two in-order queues both hold a long write and the short one waits for the first
    // of them to finish (the two interleave, so both end after about 10.5 µs); a third queue
    // takes it at once.
    let msgs = [(1u16, 65_536u64, 0u64), (2, 65_536, 0), (3, 256, 1_000)].map(
        |(target, bytes, arrival)| Message {
            id: u32::from(target) - 1,
            kind: Kind::Write,
            requester: 0,
            target,
            bytes,
            arrival,
        },
    );
    let short_done = |queues: u32| {
        let cfg = SimConfig {
            cxl_host_fifo: true,
            cxl_host_queues: queues,
            ..small_cfg(4)
        };
        let r = run_scheme(Scheme::Cxl, &cfg, &msgs).unwrap();
        assert_eq!(r.delivered, vec![65_536, 65_536, 256]);
        (
            r.finish[2].unwrap(),
            r.finish[0].unwrap().min(r.finish[1].unwrap()),
        )
    };
    let (two, first_long) = short_done(2);
    assert!(two > 10_000_000, "2 queues: short done at {two} ps");
    assert!(
        two > first_long,
        "2 queues: short {two} before the first long {first_long}"
    );
    let (three, _) = short_done(3);
    assert!(three < 1_000_000, "3 queues: short done at {three} ps");
    // Zero queues is a configuration error naming the field.
    let bad = SimConfig {
        cxl_host_queues: 0,
        ..small_cfg(4)
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("cxl_host_queues"));
}

#[test]
fn fastpass_batching_relieves_the_arbiter_link() {
    // 16 nodes of 64 B writes at load 0.5: one request and one grant frame per message need
    // 16 · 0.5 · 2 = 16 times the arbiter link; batched reports and allocation frames fit.
    let spec = WorkloadSpec {
        load: 0.5,
        write_ratio: 1.0,
        sizes: Sizes::Fixed(64),
        messages: 4000,
        seed: 5,
    };
    let cfg = small_cfg(16);
    let msgs = generate(&spec, &cfg).unwrap();
    let mean_mct = |cfg: &SimConfig| {
        let r = run_scheme(Scheme::Fastpass, cfg, &msgs).unwrap();
        assert_eq!(
            r.delivered,
            msgs.iter().map(|m| m.bytes).collect::<Vec<_>>()
        );
        let sum: u64 = msgs
            .iter()
            .zip(&r.finish)
            .map(|(m, f)| f.unwrap() - m.arrival)
            .sum();
        sum as f64 / msgs.len() as f64
    };
    let batched = mean_mct(&cfg);
    let per_transfer = mean_mct(&SimConfig {
        fastpass_batch_ps: 0,
        ..cfg
    });
    // Batched: a report period, an allocation round and the transfer, a few periods at most.
    assert!(
        batched < 4.0 * cfg.fastpass_batch_ps as f64,
        "batched {batched} ps"
    );
    assert!(
        batched * 3.0 < per_transfer,
        "batched {batched} ps vs per-transfer {per_transfer} ps"
    );
}
