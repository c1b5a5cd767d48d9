//! Offloads on the ARM (`clio_slowpath::offload`): calls arrive as
//! `OFFLOAD_REQ` fragments, run against the offload's own address space
//! (its PID, the slow path's allocation and page table, DRAM reached
//! directly), and are answered as `OFFLOAD_REPLY` fragments; failures are
//! typed answers, never a panic.

mod common;

use clio_slowpath::offload::tally::{self, Tally};
use clio_slowpath::offload::{OffloadHost, SliceDram};
use clio_slowpath::{SlowPath, SlowPathConfig};
use clio_wire::payload::{
    OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp,
    OFFLOAD_OP_BATCH,
};
use clio_wire::ring::Descriptor;
use clio_wire::{Header, Opcode, Status};
use common::{small_cfg, SEED};

const MTU: usize = 1450;

struct Rig<'a, const B: usize> {
    sp: SlowPath<'a>,
    dram: Vec<u8>,
    base: u64,
    tx: Vec<Descriptor>,
    /// PTEs the slow path wrote for the board table.
    ptes: Vec<clio_wire::Pte>,
    seq: u32,
}

impl<'a, const B: usize> Rig<'a, B> {
    fn new(cfg: SlowPathConfig, arena: &'a mut [u64]) -> Self {
        let sp = SlowPath::new(cfg, arena, SEED).unwrap();
        Rig {
            sp,
            dram: vec![0; cfg.data_size as usize],
            base: cfg.data_base,
            tx: Vec::new(),
            ptes: Vec::new(),
            seq: 0,
        }
    }

    /// One call through the host: its answer's status and payload.
    fn call(
        &mut self,
        host: &mut OffloadHost<'_, 2, 4, B>,
        req_id: u32,
        retry_of: u32,
        payload: &[u8],
    ) -> (Status, Vec<u8>) {
        let mut h = Header::request(Opcode::OffloadCall, 3, req_id, 0, 0).with_session(1, 9, 42);
        h.retry_of = retry_of;
        h.payload_len = payload.len() as u16;
        let mut pkt = vec![0u8; h.buffer_len()];
        h.emit_with_payload(&mut pkt, payload).unwrap();
        self.seq += 1;
        let mut dram = SliceDram {
            base: self.base,
            bytes: &mut self.dram,
        };
        let answer =
            common::offload_exchange(host, &mut self.sp, &mut dram, &mut self.tx, self.seq, &pkt);
        for d in self.tx.drain(..) {
            if let Descriptor::PteWrite { pte, .. } = d {
                self.ptes.push(pte);
            }
        }
        answer
    }
}

fn args(op: u16, rest: &[u8]) -> Vec<u8> {
    let mut p = OffloadCallReq {
        offload: tally::ID,
        op,
    }
    .to_bytes()
    .to_vec();
    p.extend_from_slice(rest);
    p
}

fn add(index: u32, delta: u64) -> Vec<u8> {
    let mut a = index.to_be_bytes().to_vec();
    a.extend_from_slice(&delta.to_be_bytes());
    args(tally::op::ADD, &a)
}

fn word(v: u64) -> Vec<u8> {
    let mut p = OffloadCallResp { code: 0 }.to_bytes().to_vec();
    p.extend_from_slice(&v.to_le_bytes());
    p
}

#[test]
fn tally_runs_in_its_own_address_space_and_failures_are_answers() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::<2048>::new(cfg, &mut arena);
    let mut t = Tally::new();
    let mut t2 = Tally::new();
    let mut host = OffloadHost::<2, 4, 2048>::new(MTU, 65536);
    host.register(tally::ID, &mut t).unwrap();
    assert!(host.register(tally::ID, &mut t2).is_err());

    assert_eq!(rig.call(&mut host, 1, 0, &add(5, 7)), (Status::Ok, word(7)));
    // Its own PID, held by the board (the lowest free one).
    let pid = host.pid_of(tally::ID).unwrap();
    assert_eq!(pid, 1);
    assert!(rig.sp.pid_assigned(pid));
    assert!(rig.sp.pid_charged_bytes(pid) > 0, "the quota charges it");
    // Its table's page went to the board table mapped (valid, backed), and
    // the counter is in DRAM where that page is.
    let pte = *rig.ptes.first().expect("a PTE write for the new range");
    assert!(pte.valid && pte.pid == pid);
    let va = pte.vpn << pte.page_shift;
    let (pa, _, _) = rig.sp.translate(pid, va + 5 * 8).unwrap();
    assert_eq!(pa, (u64::from(pte.ppn) << pte.page_shift) + 40);
    let off = (pa - rig.base) as usize;
    assert_eq!(rig.dram[off..off + 8], 7u64.to_le_bytes());

    assert_eq!(rig.call(&mut host, 2, 0, &add(5, 3)).1, word(10));
    // Refusals.
    let (s, p) = rig.call(
        &mut host,
        3,
        0,
        &args(tally::op::GET, &tally::SLOTS.to_be_bytes()),
    );
    assert_eq!(s, Status::OffloadRefused);
    assert_eq!(
        OffloadCallResp::parse(&p).unwrap().code,
        tally::code::OUT_OF_RANGE
    );
    // A fault (a VA it never allocated), then it keeps serving.
    let (s, p) = rig.call(&mut host, 4, 0, &args(tally::op::PEEK, &8u64.to_be_bytes()));
    assert_eq!((s, p), (Status::OffloadFault, vec![]));
    assert_eq!(rig.call(&mut host, 5, 0, &add(5, 1)).1, word(11));
    // Unknown id, unparsable call.
    let unknown = OffloadCallReq { offload: 9, op: 1 }.to_bytes();
    assert_eq!(rig.call(&mut host, 6, 0, &unknown).0, Status::NoSuchOffload);
    assert_eq!(
        rig.call(&mut host, 7, 0, &[0, 0, 0, 4, 0, 1, 0, 1]).0,
        Status::Malformed
    );
    // A retry is answered from the record, not run again.
    assert_eq!(rig.call(&mut host, 8, 5, &add(5, 1)).1, word(11));
    assert_eq!(
        rig.call(&mut host, 9, 0, &args(tally::op::GET, &5u32.to_be_bytes()))
            .1,
        word(11)
    );
    let st = host.stats();
    assert_eq!(
        (st.replays, st.faults, st.refused, st.unknown),
        (1, 1, 1, 1)
    );
}

#[test]
fn a_batch_answers_each_operation_and_its_bound_is_checked() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::<64>::new(cfg, &mut arena);
    let mut t = Tally::new();
    let mut host = OffloadHost::<2, 4, 64>::new(MTU, 65536);
    host.register(tally::ID, &mut t).unwrap();
    let batch = |n: usize| {
        let mut p = args(
            OFFLOAD_OP_BATCH,
            &OffloadBatchReq { count: n as u16 }.to_bytes(),
        );
        for i in 0..n {
            let a = [
                (i as u32).to_be_bytes().to_vec(),
                1u64.to_be_bytes().to_vec(),
            ]
            .concat();
            p.extend_from_slice(
                &OffloadBatchOp {
                    op: tally::op::ADD,
                    args_len: 12,
                }
                .to_bytes(),
            );
            p.extend_from_slice(&a);
        }
        p
    };
    // 2 operations: 4 + 4 + 2 x (8 + 8) = 40 bytes, inside 60.
    let (s, p) = rig.call(&mut host, 1, 0, &batch(2));
    assert_eq!(s, Status::Ok);
    let body = &p[OffloadCallResp::LEN + OffloadBatchReq::LEN..];
    let r = OffloadBatchResult::parse(body).unwrap();
    assert_eq!((r.status, r.len), (Status::Ok, 8));
    // 4 operations could need 72 bytes: refused whole, nothing run.
    assert_eq!(rig.call(&mut host, 2, 0, &batch(4)).0, Status::TooLarge);
    assert_eq!(
        rig.call(&mut host, 3, 0, &args(tally::op::GET, &0u32.to_be_bytes()))
            .1,
        word(1)
    );
}

#[test]
fn an_offload_over_its_quota_is_refused_memory_not_the_board() {
    let mut cfg = small_cfg();
    // Less than one page per PID: the tally's table cannot be placed.
    cfg.mem_quota_bytes = 4096;
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::<2048>::new(cfg, &mut arena);
    let mut t = Tally::new();
    let mut host = OffloadHost::<2, 4, 2048>::new(MTU, 65536);
    host.register(tally::ID, &mut t).unwrap();
    assert_eq!(
        rig.call(&mut host, 1, 0, &add(0, 1)).0,
        Status::OffloadFault
    );
    assert_eq!(rig.sp.stats().over_quota, 1);
    let unknown = OffloadCallReq { offload: 9, op: 1 }.to_bytes();
    assert_eq!(rig.call(&mut host, 2, 0, &unknown).0, Status::NoSuchOffload);
}

#[test]
fn a_retry_past_the_remembered_answers_runs_again() {
    // `R` = 4 answers remembered in all (the firmware image keeps 32): a
    // retry is replayed while its record is among the 4 latest, and runs
    // again once 4 newer answers pushed it out (firmware-arm/image/README.md).
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut rig = Rig::<2048>::new(cfg, &mut arena);
    let mut t = Tally::new();
    let mut host = OffloadHost::<2, 4, 2048>::new(MTU, 65536);
    host.register(tally::ID, &mut t).unwrap();
    let get = args(tally::op::GET, &0u32.to_be_bytes());
    assert_eq!(rig.call(&mut host, 1, 0, &add(0, 5)).1, word(5));
    for id in 2..=4 {
        assert_eq!(rig.call(&mut host, id, 0, &get).1, word(5));
    }
    // Three newer answers: the first is still remembered.
    assert_eq!(rig.call(&mut host, 5, 1, &add(0, 5)).1, word(5));
    assert_eq!(host.stats().replays, 1);
    // A fourth pushes it out: the retry runs the add again.
    assert_eq!(rig.call(&mut host, 6, 0, &get).1, word(5));
    assert_eq!(rig.call(&mut host, 7, 1, &add(0, 5)).1, word(10));
    assert_eq!(host.stats().replays, 1);
}
