//! Dedup of retries, slow-path forwarding, fences, TX commands, Info,
//! pointer chasing.

mod common;

use clio_fastpath::ClientId;
use clio_wire::clio::flags;
use clio_wire::payload::{
    perms, AllocReq, AllocResp, AtomicArgs, AtomicResp, ChaseReq, ChaseResp, FreeReq, InfoResp,
};
use clio_wire::pte::Pte;
use clio_wire::ring::Descriptor;
use clio_wire::{Opcode, Status};
use common::{packet, Bench};

const MIB4: u8 = 22;

fn mapped() -> (Bench, u64) {
    let mut b = Bench::new();
    let va = b.class_va(MIB4) + (16u64 << MIB4);
    b.map(1, va, 1, MIB4, perms::RW, true);
    (b, va)
}

fn faa(b: &mut Bench, req_id: u32, retry_of: u32, va: u64) -> common::Resp {
    let mut p = [0u8; 8];
    AtomicArgs::FetchAndAdd { addend: 1 }.emit(&mut p).unwrap();
    let rs = b.send(&packet(
        Opcode::FetchAndAdd,
        1,
        req_id,
        retry_of,
        va,
        8,
        0,
        &p,
    ));
    assert_eq!(rs.len(), 1);
    rs.into_iter().next().unwrap()
}

#[test]
fn retried_atomic_is_answered_not_reexecuted() {
    let (mut b, va) = mapped();
    let first = faa(&mut b, 10, 0, va);
    assert_eq!(AtomicResp::parse(first.payload()).unwrap().old, 0);
    // The response was lost: the client retries under a new id.
    let retry = faa(&mut b, 11, 10, va);
    assert_eq!(retry.h.flags, flags::DUPLICATE);
    assert_eq!(retry.h.req_id, 11);
    assert_eq!(retry.h.retry_of, 10);
    assert_eq!(
        AtomicResp::parse(retry.payload()).unwrap().old,
        0,
        "the original result"
    );
    assert!(b.fp.last_trace().duplicate);
    assert_eq!(b.fp.last_trace().dram_accesses, 0);
    // A second retry (retry_of always names the first attempt) also finds
    // it; a network duplicate of the original too.
    assert_eq!(faa(&mut b, 12, 10, va).h.flags, flags::DUPLICATE);
    assert_eq!(faa(&mut b, 10, 0, va).h.flags, flags::DUPLICATE);
    assert_eq!(
        b.read(1, 13, va, 8).1,
        1u64.to_le_bytes(),
        "applied exactly once"
    );
}

#[test]
fn late_original_after_executed_retry_is_not_run() {
    let (mut b, va) = mapped();
    // The original (id 20) is delayed; its retry 21 executes first.
    let r = faa(&mut b, 21, 20, va);
    assert_eq!(r.h.flags, 0);
    // Another client's write lands on the word in between.
    b.write(1, 30, va, &100u64.to_le_bytes());
    // The delayed original arrives: answered from the buffer, not executed.
    let late = faa(&mut b, 20, 0, va);
    assert_eq!(late.h.flags, flags::DUPLICATE);
    assert_eq!(b.read(1, 31, va, 8).1, 100u64.to_le_bytes());
}

#[test]
fn retried_write_packets_dedup_by_offset() {
    let (mut b, va) = mapped();
    let data = vec![7u8; 3000];
    b.write(1, 40, va, &data);
    // Overwrite part of it by a later request.
    b.write(1, 41, va, &[9u8; 100]);
    // A retry of request 40: every packet was executed, none runs again.
    let mtu = 1450;
    for (i, ch) in data.chunks(mtu).enumerate() {
        let rs = b.send(&packet(
            Opcode::Write,
            1,
            42,
            40,
            va,
            3000,
            (i * mtu) as u32,
            ch,
        ));
        assert_eq!(rs[0].h.flags, flags::DUPLICATE);
        assert_eq!(rs[0].h.offset as usize, i * mtu);
    }
    assert_eq!(b.read(1, 43, va, 100).1, vec![9u8; 100]);
    // A retry packet whose original packet never arrived is executed.
    let rs = b.send(&packet(
        Opcode::Write,
        1,
        45,
        44,
        va + 4000,
        8,
        0,
        b"12345678",
    ));
    assert_eq!(rs[0].h.flags, 0);
    assert_eq!(b.read(1, 46, va + 4000, 8).1, b"12345678");
}

#[test]
fn dedup_size_comes_from_config_and_a_full_buffer_refuses() {
    let mut cfg = common::board();
    cfg.dedup.buffer_bytes = 4 * u64::from(cfg.dedup.entry_bytes);
    let mut b = Bench::with(cfg, Default::default());
    let va = b.class_va(MIB4) + (16u64 << MIB4);
    b.map(1, va, 1, MIB4, perms::RW, true);
    assert_eq!(b.fp.dedup().capacity(), 4);
    for id in 1..=4 {
        assert_eq!(faa(&mut b, id, 0, va).h.status, Status::Ok);
    }
    // Full: a new request is refused, not executed, nothing is evicted.
    assert_eq!(faa(&mut b, 5, 0, va).h.status, Status::Busy);
    assert_eq!(b.fp.stats().dedup_busy, 1);
    assert_eq!(faa(&mut b, 100, 1, va).h.flags, flags::DUPLICATE);
    assert_eq!(b.read(1, 6, va, 8).1, 4u64.to_le_bytes());
}

#[test]
fn failed_requests_are_not_remembered() {
    let (mut b, va) = mapped();
    let l = va + 64;
    b.write(1, 1, l, &1u64.to_le_bytes());
    let rs = b.req(Opcode::Lock, 1, 2, l, 8, &[]);
    assert_eq!(rs[0].h.status, Status::Busy);
    b.write(1, 3, l, &0u64.to_le_bytes());
    // The retry of the busy lock executes (and now succeeds).
    let rs = b.send(&packet(Opcode::Lock, 1, 4, 2, l, 8, 0, &[]));
    assert_eq!((rs[0].h.status, rs[0].h.flags), (Status::Ok, 0));
}

fn alloc_pkt(req_id: u32, retry_of: u32) -> Vec<u8> {
    let mut p = [0u8; AllocReq::LEN];
    AllocReq {
        size: 8 << 20,
        perms: perms::RW,
        page_shift: 0,
    }
    .emit(&mut p)
    .unwrap();
    packet(Opcode::Alloc, 3, req_id, retry_of, 0, 0, 0, &p)
}

fn reply_for(d: &Descriptor, status: Status) -> Descriptor {
    match *d {
        Descriptor::AllocReq {
            tag,
            pid,
            req_id,
            size,
            ..
        } => Descriptor::Reply {
            tag,
            pid,
            req_id,
            status: status.raw(),
            va: 0x40_0000,
            size,
            retries: 2,
            moved: false,
        },
        Descriptor::FreeReq {
            tag,
            pid,
            req_id,
            va,
            size,
        } => Descriptor::Reply {
            tag,
            pid,
            req_id,
            status: status.raw(),
            va,
            size,
            retries: 0,
            moved: false,
        },
        _ => panic!("not forwarded: {d:?}"),
    }
}

#[test]
fn alloc_is_forwarded_and_answered_from_the_reply() {
    let mut b = Bench::new();
    assert!(b.send(&alloc_pkt(1, 0)).is_empty(), "answered later");
    assert!(b.fp.last_trace().forwarded);
    let rx = b.rx();
    let Descriptor::AllocReq {
        pid,
        req_id,
        size,
        perms: p,
        page_shift,
        fixed,
        ..
    } = rx[0]
    else {
        panic!("{rx:?}")
    };
    assert_eq!(
        (pid, req_id, size, p, page_shift, fixed),
        (3, 1, 8 << 20, perms::RW, 0, false)
    );
    // A retry while the slow path works forwards nothing new.
    assert!(b.send(&alloc_pkt(2, 1)).is_empty());
    assert!(b.rx().is_empty());
    b.post(&reply_for(&rx[0], Status::Ok));
    let rs = b.poll();
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(
        (r.h.opcode, r.h.status, r.h.req_id, r.h.retry_of),
        (Opcode::AllocResp, Status::Ok, 2, 1)
    );
    assert_eq!(r.h.va, 0x40_0000);
    assert_eq!(
        AllocResp::parse(r.payload()).unwrap(),
        AllocResp {
            size: 8 << 20,
            retries: 2
        }
    );
    // Later retries (or the delayed original) are answered from the dedup buffer.
    for (id, retry_of) in [(3, 1), (1, 0)] {
        let rs = b.send(&alloc_pkt(id, retry_of));
        assert_eq!(rs[0].h.flags, flags::DUPLICATE);
        assert_eq!(rs[0].h.va, 0x40_0000);
    }
    assert!(b.rx().is_empty());
    // A stale reply (tag already answered) is rejected and reported.
    b.post(&reply_for(&rx[0], Status::Ok));
    assert!(b.poll().is_empty());
    assert_eq!(b.fp.stats().tx_rejected, 1);
    assert!(matches!(
        b.rx()[..],
        [Descriptor::ErrorReport { status: 5, .. }]
    ));
}

#[test]
fn free_is_forwarded_and_a_failure_is_not_remembered() {
    let mut b = Bench::new();
    let mut p = [0u8; FreeReq::LEN];
    FreeReq { size: 4096 }.emit(&mut p).unwrap();
    assert!(b
        .send(&packet(Opcode::Free, 3, 1, 0, 0x1000, 0, 0, &p))
        .is_empty());
    let rx = b.rx();
    b.post(&reply_for(&rx[0], Status::Unmapped));
    let rs = b.poll();
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::FreeResp, Status::Unmapped)
    );
    assert!(
        b.send(&packet(Opcode::Free, 3, 2, 1, 0x1000, 0, 0, &p))
            .is_empty(),
        "forwarded again"
    );
}

#[test]
fn fence_waits_for_forwarded_requests_of_its_pid() {
    let mut b = Bench::new();
    let va = b.class_va(MIB4) + (16u64 << MIB4);
    b.map(3, va, 1, MIB4, perms::RW, true);
    b.map(4, va, 1, MIB4, perms::RW, true);
    // No forwarded request: the fence is answered at once.
    let rs = b.send(&packet(Opcode::Fence, 3, 1, 0, 0, 0, 0, &[]));
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::FenceResp, Status::Ok)
    );
    b.send(&alloc_pkt(2, 0));
    let fence = ClientId(99);
    let mut got = Vec::new();
    b.fp.receive(
        fence,
        &packet(Opcode::Fence, 3, 3, 0, 0, 0, 0, &[]),
        &mut |to, p: &[u8]| got.push((to, p.to_vec())),
    );
    assert!(got.is_empty(), "waits for the alloc");
    // Later requests of the PID are refused while the fence waits; other PIDs run.
    assert_eq!(b.read(3, 4, va, 8).0, Status::Busy);
    assert_eq!(b.read(4, 5, va, 8).0, Status::Ok);
    // A retry of the waiting alloc is not refused: it takes over the answer.
    assert!(b.send(&alloc_pkt(7, 2)).is_empty());
    let rx = b.rx();
    b.post(&reply_for(&rx[0], Status::Ok));
    let rs = b.poll();
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].h.opcode, Opcode::AllocResp);
    assert_eq!(
        (rs[1].to, rs[1].h.opcode, rs[1].h.req_id),
        (fence, Opcode::FenceResp, 3)
    );
    assert_eq!(b.read(3, 6, va, 8).0, Status::Ok);
}

#[test]
fn rx_ring_full_makes_forwarding_busy() {
    let mut cfg = common::board();
    cfg.rings.rx.slots = 2;
    let mut b = Bench::with(cfg, Default::default());
    assert!(b.send(&alloc_pkt(1, 0)).is_empty());
    assert!(b.send(&alloc_pkt(2, 0)).is_empty());
    let rs = b.send(&alloc_pkt(3, 0));
    assert_eq!(rs[0].h.status, Status::Busy);
    assert_eq!(b.fp.stats().forward_busy, 1);
}

#[test]
fn pte_remove_and_update_keep_the_tlb_consistent() {
    let (mut b, va) = mapped();
    assert_eq!(b.read(1, 1, va, 8).0, Status::Ok);
    assert_eq!(b.fp.tlb().len(), 1);
    let lay = *b.fp.layout();
    let vpn = va >> MIB4;
    let bucket = lay.table.bucket_of(1, vpn);
    let at = lay.offset(lay.table.slot_addr(bucket, 0));
    let old = Pte::parse(&b.fp.dram()[at..at + 16]).unwrap();
    // Update: read-only.
    b.post(&Descriptor::PteWrite {
        bucket,
        slot: 0,
        update: true,
        pte: Pte {
            perms: perms::READ,
            ..old
        },
    });
    assert!(b.poll().is_empty());
    assert_eq!(b.write(1, 2, va, b"x"), vec![Status::Permission]);
    // Remove: unmapped.
    b.post(&Descriptor::PteRemove {
        bucket,
        slot: 0,
        pid: 1,
        vpn,
    });
    b.poll();
    assert_eq!(b.read(1, 3, va, 8).0, Status::Unmapped);
    assert_eq!(&b.fp.dram()[at..at + 16], &[0u8; 16]);
    // A remove naming the wrong tag is rejected.
    b.post(&Descriptor::PteRemove {
        bucket,
        slot: 0,
        pid: 1,
        vpn,
    });
    b.poll();
    assert_eq!(b.fp.stats().tx_rejected, 1);
}

#[test]
fn tlb_invalidate_drops_entries_of_a_range() {
    let mut b = Bench::new();
    let va = b.class_va(MIB4) + (16u64 << MIB4);
    b.map(1, va, 3, MIB4, perms::RW, true);
    for i in 0..3 {
        b.read(1, 1 + i as u32, va + (i << MIB4), 8);
    }
    assert_eq!(b.fp.tlb().len(), 3);
    b.post(&Descriptor::TlbInvalidate {
        pid: 1,
        vpn: (va >> MIB4) + 1,
        pages: 2,
    });
    b.poll();
    assert_eq!(b.fp.tlb().len(), 1);
    b.post(&Descriptor::TlbInvalidate {
        pid: 1,
        vpn: 0,
        pages: 0,
    });
    b.poll();
    assert!(b.fp.tlb().is_empty());
}

#[test]
fn bad_tx_commands_are_rejected_and_the_ring_keeps_going() {
    let mut b = Bench::new();
    let lay = *b.fp.layout();
    let buckets = lay.table.buckets() as u32;
    let pte = Pte {
        pid: 1,
        vpn: 1,
        ppn: 0,
        perms: 3,
        allocated: true,
        valid: true,
        page_shift: 22,
    };
    b.post(&Descriptor::PteWrite {
        bucket: buckets,
        slot: 0,
        update: false,
        pte,
    });
    b.post(&Descriptor::PteWrite {
        bucket: 0,
        slot: 16,
        update: false,
        pte: Pte { ppn: 1 << 9, ..pte },
    });
    // PPN 0 lies in the firmware region, not in the data region.
    b.post(&Descriptor::PteWrite {
        bucket: 0,
        slot: 0,
        update: false,
        pte,
    });
    b.post(&Descriptor::FreePaPush {
        page_shift: 13,
        ppn: 100_000,
    });
    b.post(&Descriptor::FreePaPush {
        page_shift: 12,
        ppn: 1,
    });
    let mut slot = [0u8; 64];
    Descriptor::FreePaPush {
        page_shift: 12,
        ppn: 1,
    }
    .emit(&mut slot)
    .unwrap();
    slot[30] ^= 1;
    b.post_raw(&slot);
    b.push_free(12, 1);
    assert_eq!(b.fp.stats().tx_rejected, 6);
    assert_eq!(b.fp.fifo_len(12), 1);
    let reports = b.rx();
    assert_eq!(reports.len(), 6);
    // FIFO depth from config: the 33rd push is refused.
    b.push_free(12, 31);
    assert_eq!(b.fp.fifo_len(12), 32);
    b.push_free(12, 1);
    assert_eq!(b.fp.fifo_len(12), 32);
    assert_eq!(b.fp.stats().tx_rejected, 7);
}

#[test]
fn info_reports_the_config() {
    let mut b = Bench::new();
    // The request must be as long as the answer (no amplification).
    let rs = b.send(&packet(
        Opcode::Info,
        0,
        4,
        0,
        0,
        0,
        0,
        &[0; InfoResp::LEN - 1],
    ));
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status, rs[0].h.payload_len),
        (Opcode::InfoResp, Status::Malformed, 0)
    );
    let req = packet(Opcode::Info, 0, 5, 0, 0, 0, 0, &[0; InfoResp::LEN]);
    let rs = b.send(&req);
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::InfoResp, Status::Ok)
    );
    assert!(rs[0].bytes.len() <= req.len());
    assert_eq!(
        rs[0].h.epoch,
        common::EPOCH,
        "the answer carries this boot's epoch"
    );
    let i = InfoResp::parse(rs[0].payload()).unwrap();
    assert_eq!(
        (i.epoch, u32::from(i.sessions)),
        (common::EPOCH, b.cfg.session_capacity())
    );
    assert_eq!(i.board_name().unwrap(), "emulator");
    assert_eq!(i.mtu, 1450);
    assert_eq!(i.page_shift, 22);
    assert_eq!(i.slots_per_bucket, 16);
    assert_eq!(i.tlb_entries, 64);
    assert_eq!(i.config_hash, b.cfg.config_hash());
    assert_eq!(i.dram_bytes, b.cfg.dram.size);
}

#[test]
fn offload_call_is_unsupported() {
    let mut b = Bench::new();
    let rs = b.send(&packet(
        Opcode::OffloadCall,
        1,
        5,
        0,
        0,
        0,
        0,
        &[0, 0, 0, 1],
    ));
    assert_eq!(
        (rs[0].h.opcode, rs[0].h.status),
        (Opcode::OffloadCallResp, Status::Unsupported)
    );
}

fn chase_req(key: u64, max_hops: u32) -> Vec<u8> {
    let mut p = [0u8; ChaseReq::LEN];
    ChaseReq {
        key,
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        value_len: 12,
        max_hops,
    }
    .emit(&mut p)
    .unwrap();
    p.to_vec()
}

#[test]
fn pointer_chase_walks_nodes_through_translation() {
    let mut b = Bench::new();
    let base = b.class_va(12) + 0x10_0000;
    b.map(2, base, 4, 12, perms::RW, true);
    // Four nodes, one per page, in reverse page order: key, next, 12-byte value.
    let nodes: Vec<u64> = (0..4).map(|i| base + ((3 - i) << 12) + 0x20).collect();
    for (i, &n) in nodes.iter().enumerate() {
        let next = nodes.get(i + 1).copied().unwrap_or(0);
        let mut node = Vec::new();
        node.extend_from_slice(&(100 + i as u64).to_le_bytes());
        node.extend_from_slice(&next.to_le_bytes());
        node.extend_from_slice(format!("value-{i:06}").as_bytes());
        b.write(2, 10 + i as u32, n, &node);
    }
    let rs = b.send(&packet(
        Opcode::PointerChase,
        2,
        20,
        0,
        nodes[0],
        0,
        0,
        &chase_req(102, 16),
    ));
    let r = &rs[0];
    assert_eq!(
        (r.h.opcode, r.h.status),
        (Opcode::PointerChaseResp, Status::Ok)
    );
    let cr = ChaseResp::parse(r.payload()).unwrap();
    assert_eq!(
        cr,
        ChaseResp {
            node_va: nodes[2],
            hops: 3,
            found: true
        }
    );
    assert_eq!(&r.payload()[ChaseResp::LEN..], b"value-000002");
    // Two reads (key, next) for each passed node, key + value for the match.
    assert_eq!(
        b.fp.last_trace().dram_accesses - b.fp.last_trace().tlb_misses,
        2 + 2 + 2
    );
    // Not found: end of list, and hop limit.
    let rs = b.send(&packet(
        Opcode::PointerChase,
        2,
        21,
        0,
        nodes[0],
        0,
        0,
        &chase_req(7, 16),
    ));
    assert_eq!(
        ChaseResp::parse(rs[0].payload()).unwrap(),
        ChaseResp {
            node_va: 0,
            hops: 4,
            found: false
        }
    );
    let rs = b.send(&packet(
        Opcode::PointerChase,
        2,
        22,
        0,
        nodes[0],
        0,
        0,
        &chase_req(103, 2),
    ));
    assert_eq!(ChaseResp::parse(rs[0].payload()).unwrap().hops, 2);
    // Another PID cannot walk it.
    let rs = b.send(&packet(
        Opcode::PointerChase,
        5,
        23,
        0,
        nodes[0],
        0,
        0,
        &chase_req(102, 16),
    ));
    assert_eq!(rs[0].h.status, Status::Unmapped);
    let rs = b.send(&packet(
        Opcode::PointerChase,
        2,
        24,
        0,
        nodes[0],
        0,
        0,
        &chase_req(102, 0),
    ));
    assert_eq!(rs[0].h.status, Status::Malformed, "max_hops 0");
    // The response must fit the MTU: 16 + value_len <= MTU.
    let mut p = [0u8; ChaseReq::LEN];
    ChaseReq {
        key: 102,
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        value_len: 1024,
        max_hops: 4,
    }
    .emit(&mut p)
    .unwrap();
    let rs = b.send(&packet(Opcode::PointerChase, 2, 25, 0, nodes[0], 0, 0, &p));
    assert_eq!(rs[0].h.status, Status::Ok, "1040 bytes fit 1450");
    let mut small = common::board();
    small.network.mtu_payload = 1000;
    let mut s = Bench::with(small, Default::default());
    let rs = s.send(&packet(Opcode::PointerChase, 2, 26, 0, nodes[0], 0, 0, &p));
    assert_eq!(
        rs[0].h.status,
        Status::Malformed,
        "value would exceed the MTU"
    );
}

#[test]
fn error_reports_that_do_not_fit_are_counted_into_the_next() {
    let mut cfg = common::board();
    cfg.rings.rx.slots = 2;
    let mut b = Bench::with(cfg, Default::default());
    let va = b.class_va(12);
    b.map(1, va, 1, 12, perms::RW, false);
    assert!(b.send(&alloc_pkt(1, 0)).is_empty());
    assert!(b.send(&alloc_pkt(2, 0)).is_empty());
    // RX ring full: the empty-FIFO report cannot be pushed.
    assert_eq!(b.write(1, 3, va, b"x"), vec![Status::Busy]);
    assert_eq!(b.rx().len(), 2);
    assert_eq!(b.write(1, 4, va, b"x"), vec![Status::Busy]);
    let rx = b.rx();
    assert!(
        matches!(
            rx[..],
            [Descriptor::ErrorReport {
                status: 6,
                count: 2,
                ..
            }]
        ),
        "{rx:?}"
    );
}

#[test]
fn corrupt_tx_head_stops_the_poll() {
    let mut b = Bench::new();
    let lay = *b.fp.layout();
    let head = clio_wire::ring::header_field::HEAD;
    let at = lay.tx_ring.start + head.start..lay.tx_ring.start + head.end;
    b.fp.dram_mut()[at].copy_from_slice(&100_000u32.to_le_bytes());
    let s = b.fp.poll_rings(&mut |_, _| {});
    assert_eq!((s.commands, s.rejected), (1, 1));
    assert!(matches!(
        b.rx()[..],
        [Descriptor::ErrorReport { status: 5, .. }]
    ));
}

/// Rack control datagrams (magic "CLRK") are the slow path's: the model
/// passes each, whole, as CONTROL_REQ fragments and sends the reassembled
/// CONTROL_REPLY to the datagram's sender only; an answer under a tag it
/// never issued is rejected, and a datagram the RX ring cannot take whole is
/// dropped (counted), never half-pushed.
#[test]
fn control_datagrams_pass_through_to_the_slow_path_and_back() {
    use clio_fastpath::ClientId;
    use clio_wire::ring::{control_fragments, ControlAssembler, Direction};
    let mut b = Bench::new();
    // Shorter than a Clio header, and one long enough for three fragments.
    let short = b"CLRK\x03\x07\x05\xac\x02".to_vec();
    let mut long = b"CLRK".to_vec();
    long.extend((0..96u8).map(|i| i.wrapping_mul(7)));
    let mut got = Vec::new();
    b.fp.receive(ClientId(5), &short, &mut |to, p: &[u8]| {
        got.push((to, p.to_vec()))
    });
    b.fp.receive(ClientId(6), &long, &mut |to, p: &[u8]| {
        got.push((to, p.to_vec()))
    });
    assert!(got.is_empty(), "the fast path does not answer them itself");
    let rx = b.rx();
    assert_eq!(rx.len(), 1 + 3);
    let mut asm = ControlAssembler::new();
    let mut datagrams = Vec::new();
    for d in &rx {
        if let Some((tag, seq, bytes)) = asm.push(d) {
            datagrams.push((tag, seq, bytes.to_vec()));
        }
    }
    assert_eq!(datagrams.len(), 2);
    assert_eq!(datagrams[0].2, short);
    assert_eq!(datagrams[1].2, long);
    // The slow path answers the long one first, then the short one.
    for (i, (tag, seq, _)) in datagrams.iter().rev().enumerate() {
        let answer = vec![i as u8 + 1; 50];
        for f in control_fragments(*tag, *seq, &answer, Direction::Tx).unwrap() {
            b.post(&f);
        }
    }
    let mut out = Vec::new();
    b.fp.poll_rings(&mut |to, p: &[u8]| out.push((to, p.to_vec())));
    assert_eq!(
        out,
        vec![(ClientId(6), vec![1u8; 50]), (ClientId(5), vec![2u8; 50])]
    );
    // A second answer to the same datagram (its sender forgotten) is rejected.
    let (tag, seq, _) = &datagrams[0];
    for f in control_fragments(*tag, *seq, &[9; 8], Direction::Tx).unwrap() {
        b.post(&f);
    }
    let rejected = b.fp.stats().tx_rejected;
    b.fp.poll_rings(&mut |_, _: &[u8]| panic!("no answer to a forgotten sender"));
    assert_eq!(b.fp.stats().tx_rejected, rejected + 1);
    let st = b.fp.control_stats();
    assert_eq!((st.forwarded, st.answered, st.dropped), (2, 2, 1), "{st:?}");
    // Fill the RX ring: a datagram that does not fit whole is dropped.
    let mut pushed = 0;
    loop {
        let before = b.fp.control_stats().dropped;
        b.fp.receive(ClientId(7), &long, &mut |_, _: &[u8]| {});
        if b.fp.control_stats().dropped > before {
            break;
        }
        pushed += 1;
    }
    assert!(pushed > 0);
    // (The rejected answer above also left an error report in the ring.)
    let rx = b.rx();
    let fragments = rx
        .iter()
        .filter(|d| matches!(d, Descriptor::Control { .. }))
        .count();
    assert_eq!(fragments, pushed * 3, "only whole datagrams in the ring");
}
