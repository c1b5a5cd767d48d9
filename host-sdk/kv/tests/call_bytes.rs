//! The stable twin of the fuzz target `kv_calls` (host-sdk/wire/fuzz):
//! Clio-KV's argument bytes, alone and inside a batch, decode to a key and
//! value that re-encode to the same bytes, or a non-zero refusal code.

use clio_kv::{proto, MAX_KEY, MAX_VALUE};
use clio_wire::payload::OffloadBatchReq;
use proptest::prelude::*;

proptest! {
    #[test]
    fn arbitrary_bytes_decode_or_are_refused(b in proptest::collection::vec(any::<u8>(), 0..80)) {
        match proto::decode(&b) {
            Ok((k, v)) => prop_assert_eq!(proto::encode(k, v), b.clone()),
            Err(code) => prop_assert_ne!(code, 0),
        }
        if let Ok(ops) = OffloadBatchReq::ops(&b) {
            for (_, args) in ops {
                if let Ok((k, v)) = proto::decode(args) {
                    prop_assert_eq!(proto::encode(k, v), args.to_vec());
                }
            }
        }
    }

    #[test]
    fn encoded_calls_decode_exactly_within_the_limits(
        key in proptest::collection::vec(any::<u8>(), 0..260),
        value in proptest::collection::vec(any::<u8>(), 0..1100),
    ) {
        let b = proto::encode(&key, &value);
        let valid = !key.is_empty() && key.len() <= MAX_KEY && value.len() <= MAX_VALUE;
        match proto::decode(&b) {
            Ok((k, v)) => prop_assert!(valid && k == &key[..] && v == &value[..]),
            Err(code) => prop_assert!(!valid && code != 0),
        }
        // In a batch of one, the same.
        let mut batch = OffloadBatchReq { count: 1 }.to_bytes().to_vec();
        proto::encode_batch_op(&mut batch, proto::op::PUT, &key, &value);
        let (op, args) = OffloadBatchReq::ops(&batch).unwrap().next().unwrap();
        prop_assert_eq!(op, proto::op::PUT);
        prop_assert_eq!(args, &b[..]);
    }
}
