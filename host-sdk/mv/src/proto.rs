//! Clio-MV's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], its results and its refusal
//! codes. All integers big-endian.
//!
//! | op | arguments | result |
//! |---|---|---|
//! | `CREATE` | `versions: u32`, `value_size: u32` | `id: u64` |
//! | `APPEND` | `id: u64`, `value_len: u32`, `reserved: u32 = 0`, value | `version: u64` |
//! | `READ` | `id: u64`, `version: u64` (0 = the latest) | `version: u64`, value |
//! | `DELETE` | `id: u64` | nothing |
//! | `INFO` | `id: u64` | `latest: u64`, `oldest: u64`, `versions: u32`, `value_size: u32` |
//!
//! `versions` is how many of an object's latest versions are kept (older
//! ones are overwritten in place: a read of one is `VERSION_GONE`);
//! `value_size` bounds every value appended to the object. Versions count
//! from 1; `oldest` is 0 while the object has none.

// The operations, refusal codes, argument lengths and the `Call` decoder
// and encoder are the store's (`clio_slowpath::offload::mv::proto`, shared
// with the firmware).
pub use clio_slowpath::offload::mv::proto::{
    code, op, Call, APPEND_LEN, CREATE_LEN, ID_LEN, INFO_LEN, READ_LEN,
};

fn be64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(w)
}

fn be32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(w)
}

/// Read a big-endian `u64` result at `at` (`None` if the result is short).
pub fn result_u64(b: &[u8], at: usize) -> Option<u64> {
    (b.len() >= at + 8).then(|| be64(b, at))
}

/// Read a big-endian `u32` result at `at` (`None` if the result is short).
pub fn result_u32(b: &[u8], at: usize) -> Option<u32> {
    (b.len() >= at + 4).then(|| be32(b, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser's contract (as a fuzz target would check it, on stable):
    /// any bytes under any op decode or are refused, never panic, and what
    /// decodes encodes back to the same bytes.
    #[test]
    fn any_bytes_decode_or_are_refused_and_round_trip() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let op = (next() % 7) as u16;
            let len = (next() % 40) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Often a well-formed APPEND length and reserved word.
            if op == op::APPEND && len >= APPEND_LEN && next() % 2 == 0 {
                b[8..12].copy_from_slice(&((len - APPEND_LEN) as u32).to_be_bytes());
                b[12..16].fill(0);
            }
            if let Ok(c) = Call::decode(op, &b) {
                assert_eq!(c.encode(), (op, b.clone()), "{c:?}");
            }
        }
        assert_eq!(Call::decode(op::READ, &[0; 15]), Err(code::BAD_ARGS));
        assert_eq!(Call::decode(0, &[]), Err(code::BAD_ARGS));
    }
}
