//! `OFFLOAD_CALL`s as raw packets and what a client sees of their answers,
//! for the tests that send each call to two boards and compare the answers
//! (`qemu_offload.rs`: the firmware in QEMU and the model board;
//! `rtl_offload.rs`: the board on the RTL and the model board).

use clio_wire::payload::{
    OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp,
    OFFLOAD_OP_BATCH,
};
use std::time::Duration;

use clio_emu::Engine;
use clio_wire::{Header, Opcode, Status};

use super::Creds;

/// Every datagram an in-process board `b` sends to `client` for `pkt`: the
/// answer of `handle`, then whatever its polls send until it has nothing
/// due (the board on the RTL answers an offload call from its slow path,
/// a few polls later; the model board at once).
pub fn exchange(b: &mut dyn Engine, client: u64, pkt: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    b.handle(client, pkt, &mut |to, p| {
        assert_eq!(to, client);
        got.push(p.to_vec());
    });
    for _ in 0..1000 {
        let before = got.len();
        let due = b.poll(&mut |to, p| {
            assert_eq!(to, client);
            got.push(p.to_vec());
        });
        if got.len() == before && due.is_none_or(|d| d > Duration::ZERO) {
            break;
        }
    }
    got
}

/// What a client sees of an answer, minus the session fields (each board
/// has its own boot secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The response's opcode.
    pub opcode: Opcode,
    /// Its status.
    pub status: Status,
    /// The request id it answers.
    pub req_id: u32,
    /// The answer's whole length.
    pub total_len: u32,
    /// This packet's offset in it.
    pub offset: u32,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// The answers in `pkts` (CRC checked).
pub fn answers(pkts: &[Vec<u8>]) -> Vec<Answer> {
    pkts.iter()
        .map(|p| {
            let (h, payload) = super::parse(p);
            Answer {
                opcode: h.opcode,
                status: h.status,
                req_id: h.req_id,
                total_len: h.total_len,
                offset: h.offset,
                payload,
            }
        })
        .collect()
}

/// An `OFFLOAD_CALL`'s payload: the `OffloadCallReq` and the arguments.
pub fn call_payload(offload: u32, op: u16, args: &[u8]) -> Vec<u8> {
    let mut p = OffloadCallReq { offload, op }.to_bytes().to_vec();
    p.extend_from_slice(args);
    p
}

/// An `OFFLOAD_CALL` of session `c` with request id `id` (`retry_of`: a
/// retry of that id) carrying `payload`.
pub fn call_packet(c: &Creds, id: u32, payload: &[u8], retry_of: Option<u32>) -> Vec<u8> {
    let mut h = Header::request(Opcode::OffloadCall, c.pid, id, 0, 0)
        .with_session(c.session, c.epoch, c.key);
    if let Some(first) = retry_of {
        h.retry_of = first;
    }
    h.encode(payload).unwrap()
}

/// A batch's payload: `OffloadCallReq` (op batch), the count, each
/// operation's head and arguments.
pub fn batch(id: u32, ops: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut p = call_payload(id, OFFLOAD_OP_BATCH, &[]);
    p.extend_from_slice(
        &OffloadBatchReq {
            count: ops.len() as u16,
        }
        .to_bytes(),
    );
    for (op, args) in ops {
        p.extend_from_slice(
            &OffloadBatchOp {
                op: *op,
                args_len: args.len() as u16,
            }
            .to_bytes(),
        );
        p.extend_from_slice(args);
    }
    p
}

/// The per-operation outcomes of a batch's answer: (status, code, result).
pub fn batch_results(payload: &[u8]) -> Vec<(Status, u16, Vec<u8>)> {
    let mut at = OffloadCallResp::LEN + OffloadBatchReq::LEN;
    let mut out = Vec::new();
    while at < payload.len() {
        let r = OffloadBatchResult::parse(&payload[at..]).unwrap();
        let body = at + OffloadBatchResult::LEN;
        out.push((
            r.status,
            r.code,
            payload[body..body + r.len as usize].to_vec(),
        ));
        at = body + r.len as usize;
    }
    out
}

/// An answer's payload of `OK` with `result`.
pub fn ok_with(result: &[u8]) -> Vec<u8> {
    answer_payload(0, result)
}

/// An answer's payload of `OFFLOAD_REFUSED` with `code`.
pub fn refused(code: u16) -> Vec<u8> {
    answer_payload(code, &[])
}

fn answer_payload(code: u16, result: &[u8]) -> Vec<u8> {
    let mut p = OffloadCallResp { code }.to_bytes().to_vec();
    p.extend_from_slice(result);
    p
}

/// Clio-KV's arguments: key length, two zero bytes, value length, key,
/// value.
pub fn kv_args(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut a = (key.len() as u16).to_be_bytes().to_vec();
    a.extend_from_slice(&[0, 0]);
    a.extend_from_slice(&(value.len() as u32).to_be_bytes());
    a.extend_from_slice(key);
    a.extend_from_slice(value);
    a
}

/// The tally's `ADD` arguments.
pub fn add_args(index: u32, delta: u64) -> Vec<u8> {
    let mut a = index.to_be_bytes().to_vec();
    a.extend_from_slice(&delta.to_be_bytes());
    a
}
