//! Clio-KV's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], and its refusal codes.
//!
//! Arguments (big-endian): `key_len: u16`, `reserved: u16 = 0`,
//! `value_len: u32`, then `key_len` key bytes and `value_len` value bytes
//! (`value_len` is 0 for read and delete). A read's result is the value;
//! the other operations return nothing.

/// Operations (the `op` of the `OffloadCallReq`).
pub mod op {
    /// Insert a key that must not exist.
    pub const CREATE: u16 = 1;
    /// Replace the value of a key that must exist.
    pub const UPDATE: u16 = 2;
    /// Read a key's value.
    pub const READ: u16 = 3;
    /// Remove a key that must exist.
    pub const DELETE: u16 = 4;
    /// Insert or replace.
    pub const PUT: u16 = 5;
}

/// Refusal codes (the `code` of an `OFFLOAD_REFUSED` answer).
pub mod code {
    /// The key is longer than [`crate::MAX_KEY`] (or empty).
    pub const KEY_TOO_LONG: u16 = 1;
    /// The value is longer than [`crate::MAX_VALUE`].
    pub const VALUE_TOO_LONG: u16 = 2;
    /// No such key.
    pub const NOT_FOUND: u16 = 3;
    /// The key exists already (create).
    pub const EXISTS: u16 = 4;
    /// The arguments do not parse (lengths disagree, reserved bits set,
    /// unknown operation, a value on a read or delete).
    pub const BAD_ARGS: u16 = 5;
    /// The store's address space is out of memory or over its quota.
    pub const FULL: u16 = 6;
}

/// Most result bytes operation `op` returns: a read's value (at most
/// [`crate::MAX_VALUE`]), nothing for the others. The store declares it to
/// the board and the client packs batches by it, so a batch's answer is
/// sized by what its operations can return rather than a packet each.
pub fn max_result(op: u16) -> usize {
    if op == op::READ {
        crate::MAX_VALUE
    } else {
        0
    }
}

/// Length of the fixed part of the arguments.
pub const ARGS_LEN: usize = 8;

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

/// Decode arguments into (key, value); `Err(code)` names what is wrong.
pub fn decode(args: &[u8]) -> Result<(&[u8], &[u8]), u16> {
    if args.len() < ARGS_LEN || args[2..4] != [0, 0] {
        return Err(code::BAD_ARGS);
    }
    let k = u16::from_be_bytes([args[0], args[1]]) as usize;
    let v = u32::from_be_bytes([args[4], args[5], args[6], args[7]]) as usize;
    if args.len() != ARGS_LEN + k + v {
        return Err(code::BAD_ARGS);
    }
    if k == 0 || k > crate::MAX_KEY {
        return Err(code::KEY_TOO_LONG);
    }
    if v > crate::MAX_VALUE {
        return Err(code::VALUE_TOO_LONG);
    }
    Ok((&args[ARGS_LEN..ARGS_LEN + k], &args[ARGS_LEN + k..]))
}

/// 64-bit FNV-1a: the store's bucket hash and fingerprint.
pub fn hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
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
