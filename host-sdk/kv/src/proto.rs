//! Clio-KV's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], and its refusal codes.
//!
//! Arguments (big-endian): `key_len: u16`, `reserved: u16 = 0`,
//! `value_len: u32`, then `key_len` key bytes and `value_len` value bytes
//! (`value_len` is 0 for read and delete). A read's result is the value;
//! the other operations return nothing.

// The operations, refusal codes, argument decoding and hash are the
// store's (`clio_slowpath::offload::kv::proto`, shared with the firmware).
pub use clio_slowpath::offload::kv::proto::{code, decode, hash, max_result, op, ARGS_LEN};

/// Encode the arguments of a call.
pub fn encode(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(ARGS_LEN + key.len() + value.len());
    b.extend_from_slice(&(key.len() as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&(value.len() as u32).to_be_bytes());
    b.extend_from_slice(key);
    b.extend_from_slice(value);
    b
}

/// Bytes one operation takes in a batch's arguments: its
/// `OffloadBatchOp`, then its arguments as [`encode`] writes them.
pub fn batch_op_len(key: &[u8], value: &[u8]) -> usize {
    clio_wire::payload::OffloadBatchOp::LEN + ARGS_LEN + key.len() + value.len()
}

/// Append one operation to a batch's arguments (after its
/// `OffloadBatchReq`).
pub fn encode_batch_op(b: &mut Vec<u8>, op: u16, key: &[u8], value: &[u8]) {
    let args_len = (ARGS_LEN + key.len() + value.len()) as u16;
    b.extend_from_slice(&clio_wire::payload::OffloadBatchOp { op, args_len }.to_bytes());
    b.extend_from_slice(&(key.len() as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&(value.len() as u32).to_be_bytes());
    b.extend_from_slice(key);
    b.extend_from_slice(value);
}
