//! The ring dispatcher on byte-buffer rings: many laps around small rings,
//! requests larger than the TX ring, and corrupt descriptors.

mod common;

use clio_slowpath::Engine;
use clio_wire::ring::{
    self, ring_bytes, Consumer, Descriptor, Direction, Producer, RingMemory, SLOT_LEN,
};
use clio_wire::Status;
use common::{small_cfg, Board};

struct Rig {
    rx: Vec<u8>,
    tx: Vec<u8>,
    fp_rx: Producer,
    fp_tx: Consumer,
    board: Board,
}

impl Rig {
    fn new(cfg: &clio_slowpath::SlowPathConfig, rx_slots: u32, tx_slots: u32) -> Self {
        let mut rx = vec![0u8; ring_bytes(rx_slots)];
        let mut tx = vec![0u8; ring_bytes(tx_slots)];
        ring::init(&mut rx[..], rx_slots).unwrap();
        ring::init(&mut tx[..], tx_slots).unwrap();
        let fp_rx = Producer::attach(&rx[..], Direction::Rx).unwrap();
        let fp_tx = Consumer::attach(&tx[..], Direction::Tx).unwrap();
        Rig {
            rx,
            tx,
            fp_rx,
            fp_tx,
            board: Board::new(cfg),
        }
    }

    /// The fast path takes every TX descriptor and applies it.
    fn drain_tx(&mut self) {
        while let Some(d) = self.fp_tx.pop(&mut self.tx[..]) {
            self.board
                .apply(&d.expect("the slow path emits only well-formed descriptors"));
        }
    }

    fn step<const W: usize, const Q: usize>(&mut self, e: &mut Engine<'_, W, Q>) {
        let mut zeroed = Vec::new();
        e.step(&mut self.rx[..], &mut self.tx[..], 16, |pa, len| {
            zeroed.push((pa, len))
        });
        for (pa, len) in zeroed {
            self.board.zero(pa, len);
        }
        self.drain_tx();
    }
}

#[test]
fn many_laps_with_wraparound_and_touches() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut rig = Rig::new(&cfg, 4, 4);
    let mut e: Engine<'_, 2, 4> = Engine::new(sp, &rig.rx[..], &rig.tx[..]).unwrap();
    let mut next_req = 1u32;
    let mut answered = 0;
    // Alloc 5 pages, touch them all, free: 60 rounds of 4-slot RX and TX rings.
    for round in 0..60u32 {
        let pid = 1 + round % 3;
        let req = next_req;
        next_req += 1;
        rig.fp_rx
            .push(
                &mut rig.rx[..],
                &Descriptor::AllocReq {
                    tag: req,
                    pid,
                    req_id: req,
                    va: 0,
                    size: 5 * 4096,
                    perms: 3,
                    page_shift: 12,
                    fixed: false,
                },
            )
            .unwrap();
        let mut placed = None;
        for _ in 0..20 {
            rig.step(&mut e);
            if let Some(Descriptor::Reply {
                req_id, status, va, ..
            }) = rig.board.replies.last().copied()
            {
                if req_id == req {
                    assert_eq!(status, Status::Ok.raw());
                    placed = Some(va);
                    break;
                }
            }
        }
        let va = placed.expect("alloc answered");
        answered += 1;
        // Touch every page; notices go back over the RX ring.
        let mut touched = 0;
        for _ in 0..20 {
            for i in 0..5 {
                if let Some(n) = rig.board.touch(pid, (va >> 12) + i, 12) {
                    while rig.fp_rx.push(&mut rig.rx[..], &n).is_err() {
                        rig.step(&mut e);
                    }
                    touched += 1;
                }
            }
            rig.step(&mut e);
            if touched == 5 {
                break;
            }
        }
        assert_eq!(touched, 5);
        let req = next_req;
        next_req += 1;
        rig.fp_rx
            .push(
                &mut rig.rx[..],
                &Descriptor::FreeReq {
                    tag: req,
                    pid,
                    req_id: req,
                    va,
                    size: 5 * 4096,
                },
            )
            .unwrap();
        for _ in 0..20 {
            rig.step(&mut e);
            if matches!(rig.board.replies.last(), Some(Descriptor::Reply { req_id, .. }) if *req_id == req)
            {
                break;
            }
        }
        assert!(
            matches!(rig.board.replies.last(), Some(Descriptor::Reply { req_id, status: 0, .. }) if *req_id == req)
        );
        answered += 1;
    }
    for _ in 0..4 {
        rig.step(&mut e);
    }
    assert_eq!(answered, 120);
    let c = *e.counters();
    assert_eq!(c.malformed, 0);
    assert_eq!(c.worked, 120);
    assert_eq!(c.inline, 300);
    assert_eq!(e.core().stats().pa_consumed, 300);
    assert_eq!(
        e.core().stats().scrubbed,
        300,
        "every freed page was zeroed"
    );
    assert!(
        c.tx_full > 0,
        "a 5-page alloc does not fit a 4-slot TX ring"
    );
    rig.board.assert_matches(e.core());
}

#[test]
fn corrupt_and_misdirected_descriptors_are_counted_and_survived() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut rig = Rig::new(&cfg, 8, 64);
    let mut e: Engine<'_, 1, 8> = Engine::new(sp, &rig.rx[..], &rig.tx[..]).unwrap();
    let good = |req: u32| Descriptor::AllocReq {
        tag: req,
        pid: 4,
        req_id: req,
        va: 0,
        size: 4096,
        perms: 3,
        page_shift: 12,
        fixed: false,
    };
    // A flipped bit in an alloc request (CRC fails).
    let mut bad = [0u8; SLOT_LEN];
    good(100).emit(&mut bad).unwrap();
    bad[20] ^= 0x08;
    // A TX-only kind on the RX ring, with a valid CRC.
    let mut wrong = [0u8; SLOT_LEN];
    Descriptor::FreePaPush {
        page_shift: 12,
        ppn: 1,
    }
    .emit(&mut wrong)
    .unwrap();
    // A well-formed request with invalid content: zero permissions.
    let zero_perms = Descriptor::AllocReq {
        tag: 7,
        pid: 4,
        req_id: 7,
        va: 0,
        size: 4096,
        perms: 0,
        page_shift: 12,
        fixed: false,
    };
    for round in 0..6u32 {
        rig.fp_rx.push(&mut rig.rx[..], &good(2 * round)).unwrap();
        rig.fp_rx.push_raw(&mut rig.rx[..], &bad).unwrap();
        rig.fp_rx.push_raw(&mut rig.rx[..], &wrong).unwrap();
        rig.fp_rx.push(&mut rig.rx[..], &zero_perms).unwrap();
        rig.fp_rx
            .push(&mut rig.rx[..], &good(2 * round + 1))
            .unwrap();
        for _ in 0..4 {
            rig.step(&mut e);
        }
    }
    let c = *e.counters();
    assert_eq!(c.malformed, 12);
    assert_eq!(rig.rx[..].len(), ring_bytes(8));
    let rejected = rig.rx[..].load_u32(clio_wire::ring::header_field::REJECTED);
    assert_eq!(rejected, 12, "the ring header counts rejected slots too");
    let ok: Vec<u32> = rig
        .board
        .replies
        .iter()
        .filter_map(|d| match d {
            Descriptor::Reply {
                status: 0, req_id, ..
            } => Some(*req_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        ok,
        (0..12).collect::<Vec<_>>(),
        "every good request answered, in order"
    );
    let malformed = rig.board.replies.iter().filter(|d| matches!(d, Descriptor::Reply { status, req_id: 7, .. } if *status == Status::Malformed.raw())).count();
    assert_eq!(malformed, 6, "invalid content gets an error reply");
    rig.board.assert_matches(e.core());
}

#[test]
fn a_corrupt_producer_index_does_not_hang_the_poll() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut rig = Rig::new(&cfg, 4, 8);
    let mut e: Engine<'_, 1, 4> = Engine::new(sp, &rig.rx[..], &rig.tx[..]).unwrap();
    rig.rx[16..20].copy_from_slice(&1000u32.to_le_bytes());
    let out = e.poll(&mut rig.rx[..], &mut rig.tx[..], 16, |_, _| {});
    assert_eq!(out.last_error.map(|e| e.field), Some("ring.head"));
    assert_eq!(e.counters().malformed, 1);
}

/// Records what the shadow table says of one page when a call arrives.
struct Probe {
    pid: u32,
    va: u64,
    seen: Vec<bool>,
}

impl clio_slowpath::offload::OffloadSide for Probe {
    fn present(&self) -> bool {
        true
    }
    fn reply_room(&self) -> u32 {
        1
    }
    fn fragment(
        &mut self,
        _: &Descriptor,
        core: &mut clio_slowpath::SlowPath<'_>,
        _: &mut dyn clio_slowpath::TxSink,
    ) -> bool {
        self.seen.push(core.translate(self.pid, self.va).is_some());
        true
    }
}

#[test]
fn a_call_sees_the_first_touches_that_came_before_it_in_the_same_poll() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let mut rig = Rig::new(&cfg, 16, 16);
    let mut e: Engine<'_, 1, 4> = Engine::new(sp, &rig.rx[..], &rig.tx[..]).unwrap();
    let alloc = Descriptor::AllocReq {
        tag: 1,
        pid: 1,
        req_id: 1,
        va: 0,
        size: 4096,
        perms: 3,
        page_shift: 12,
        fixed: false,
    };
    rig.fp_rx.push(&mut rig.rx[..], &alloc).unwrap();
    for _ in 0..4 {
        rig.step(&mut e);
    }
    let Some(Descriptor::Reply { va, status: 0, .. }) = rig.board.replies.last().copied() else {
        panic!("alloc answered: {:?}", rig.board.replies);
    };
    // The fast path's first touch, then a call, in one poll's batch: the
    // call must find the page mapped (else it would back it a second time
    // and read zeros instead of what the client wrote).
    let touch = rig.board.touch(1, va >> 12, 12).expect("a first touch");
    rig.fp_rx.push(&mut rig.rx[..], &touch).unwrap();
    let call = Descriptor::Offload {
        tag: 0,
        seq: 0,
        len: 1,
        index: 0,
        count: 1,
        data: [0; clio_wire::ring::OFFLOAD_FRAGMENT],
        dir: Direction::Rx,
    };
    rig.fp_rx.push(&mut rig.rx[..], &call).unwrap();
    let mut probe = Probe {
        pid: 1,
        va,
        seen: Vec::new(),
    };
    e.poll_full(
        &mut rig.rx[..],
        &mut rig.tx[..],
        16,
        |_, _| {},
        &mut clio_slowpath::rack::NoRack,
        &mut probe,
    );
    assert_eq!(probe.seen, [true]);
    assert_eq!(e.core().stats().pa_consumed, 1);
}
