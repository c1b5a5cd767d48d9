//! The region gate through the model's rings: `GATE_SET` on the TX ring,
//! verdicts at intake, `GATE_DIRTY` reports on the RX ring.

mod common;

use clio_wire::payload::perms;
use clio_wire::ring::{Descriptor, GateMode, GATE_BLOCK};
use clio_wire::{Header, Opcode, Status};
use common::Bench;

const SHIFT: u8 = 12;

fn gate(b: &mut Bench, entry: u32, pid: u32, va: u64, len: u64, mode: GateMode) {
    b.post(&Descriptor::GateSet {
        entry,
        pid,
        va,
        len,
        mode,
    });
    assert!(b.poll().is_empty());
}

/// A bench with `pages` valid 4 KiB pages of PID 1 from `va` (spanning
/// several dirty blocks when `pages` > 16).
fn bench(pages: u64) -> (Bench, u64) {
    let mut b = Bench::new();
    let va = b.class_va(SHIFT) + 0x40_0000;
    b.map(1, va, pages, SHIFT, perms::RW, true);
    (b, va)
}

#[test]
fn paused_refuses_changes_and_serves_reads() {
    let (mut b, va) = bench(4);
    assert_eq!(b.write(1, 1, va, &[7; 64]), vec![Status::Ok]);
    gate(&mut b, 0, 1, va, 0x2000, GateMode::Paused);
    assert_eq!(b.write(1, 2, va, &[9; 64]), vec![Status::Busy]);
    // The write did not execute; reads are served.
    assert_eq!(b.read(1, 3, va, 64), (Status::Ok, vec![7; 64]));
    let faa = b.req(Opcode::FetchAndAdd, 1, 4, va + 8, 8, &5u64.to_be_bytes());
    assert_eq!(faa[0].h.status, Status::Busy);
    // A page past the range (and another PID's same VA) is untouched.
    assert_eq!(b.write(1, 5, va + 0x2000, &[1; 8]), vec![Status::Ok]);
    // Cleared: served again, nothing reported.
    gate(&mut b, 0, 0, 0, 0, GateMode::Open);
    assert_eq!(b.write(1, 6, va, &[9; 64]), vec![Status::Ok]);
    assert_eq!(b.read(1, 7, va, 64), (Status::Ok, vec![9; 64]));
    assert!(b.rx().is_empty());
    assert_eq!(b.fp.gate().stats().busy, 2);
}

#[test]
fn tracking_reports_each_block_once_per_setting() {
    // 32 pages = 128 KiB: two dirty blocks.
    let (mut b, va) = bench(32);
    gate(&mut b, 2, 1, va, 32 * 4096, GateMode::Tracking);
    // A write across the block edge: executed, both blocks reported first.
    let at = va + GATE_BLOCK - 4;
    assert_eq!(b.write(1, 1, at, &[3; 8]), vec![Status::Ok]);
    assert_eq!(
        b.rx(),
        vec![Descriptor::GateDirty {
            entry: 2,
            pid: 1,
            va,
            mask: 0b11
        }]
    );
    assert_eq!(b.read(1, 2, at, 8), (Status::Ok, vec![3; 8]));
    // Again: already dirty, no report.
    assert_eq!(b.write(1, 3, va, &[4; 8]), vec![Status::Ok]);
    assert!(b.rx().is_empty());
    // Re-setting the entry (a take) clears the bitmap: reported again.
    gate(&mut b, 2, 1, va, 32 * 4096, GateMode::Tracking);
    let cas = b.req(
        Opcode::CompareAndSwap,
        1,
        4,
        va + GATE_BLOCK + 8,
        8,
        &[0u8; 16],
    );
    assert_eq!(cas[0].h.status, Status::Ok);
    assert_eq!(
        b.rx(),
        vec![Descriptor::GateDirty {
            entry: 2,
            pid: 1,
            va,
            mask: 0b10
        }]
    );
    // Reads report nothing.
    assert_eq!(b.read(1, 5, va, 64).0, Status::Ok);
    assert!(b.rx().is_empty());
    // Paused after tracking: changes wait.
    gate(&mut b, 2, 1, va, 32 * 4096, GateMode::Paused);
    assert_eq!(b.write(1, 6, va, &[5; 8]), vec![Status::Busy]);
}

/// A write of `data` at `va` by PID 1 acknowledging `ack` (so its dedup
/// record does not pile up).
fn acked_write(b: &mut Bench, req_id: u32, ack: u32, va: u64, data: &[u8]) -> Status {
    let s = common::session_of(1);
    let pkt = Header {
        ack,
        ..Header::request(Opcode::Write, 1, req_id, va, data.len() as u32).with_session(
            s,
            common::EPOCH,
            common::key_of(1),
        )
    }
    .encode(data)
    .unwrap();
    let r = b.send(&pkt);
    r[0].h.status
}

#[test]
fn tracking_without_rx_room_refuses_and_marks_nothing() {
    let (mut b, va) = bench(32);
    gate(&mut b, 0, 1, va, 32 * 4096, GateMode::Tracking);
    // Fill the RX ring with reports: the entry re-set and written again.
    let slots = b.cfg.rings.rx.slots;
    for i in 0..slots {
        gate(&mut b, 0, 1, va, 32 * 4096, GateMode::Tracking);
        assert_eq!(acked_write(&mut b, 10 + i, 9 + i, va, &[1; 8]), Status::Ok);
    }
    gate(&mut b, 0, 1, va, 32 * 4096, GateMode::Tracking);
    assert_eq!(
        acked_write(&mut b, 10 + slots, 9 + slots, va, &[2; 8]),
        Status::Busy
    );
    assert_eq!(b.read(1, 1, va, 8), (Status::Ok, vec![1; 8]));
    assert_eq!(b.rx().len(), slots as usize);
    // With room again the same write reports and executes.
    assert_eq!(
        acked_write(&mut b, 11 + slots, 10 + slots, va, &[2; 8]),
        Status::Ok
    );
    assert_eq!(b.rx().len(), 1);
    assert_eq!(b.read(1, 2, va, 8), (Status::Ok, vec![2; 8]));
}

#[test]
fn moved_rejoin_and_a_bad_entry() {
    let (mut b, va) = bench(4);
    gate(&mut b, 0, 1, va, 4096, GateMode::Moved);
    assert_eq!(b.read(1, 1, va, 8).0, Status::Moved);
    assert_eq!(b.write(1, 2, va, &[1; 8]), vec![Status::Moved]);
    gate(&mut b, 0, 1, va, 4096, GateMode::Rejoin);
    assert_eq!(b.read(1, 3, va, 8).0, Status::Ok);
    assert_eq!(b.write(1, 4, va, &[1; 8]), vec![Status::Moved]);
    // An entry past the table is rejected (counted) and changes nothing.
    let n = b.fp.gate().capacity() as u32;
    let before = b.fp.stats().tx_rejected;
    gate(&mut b, n, 1, va + 4096, 4096, GateMode::Paused);
    assert_eq!(b.fp.stats().tx_rejected, before + 1);
    assert_eq!(b.write(1, 5, va + 4096, &[1; 8]), vec![Status::Ok]);
    // A new boot clears the gate.
    b.post(&Descriptor::Epoch { epoch: 99 });
    assert!(b.poll().is_empty());
    assert!(b.fp.gate().is_empty());
}
