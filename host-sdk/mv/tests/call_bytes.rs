//! The stable twin of the fuzz target `mv_calls` (host-sdk/wire/fuzz):
//! any operation and argument bytes decode to a call that re-encodes to the
//! same bytes, or a non-zero refusal code; arguments near the valid shapes
//! (the right lengths, arbitrary contents) reach the decoders' deeper checks.

use clio_mv::proto::{self, Call};
use proptest::prelude::*;

fn check(op: u16, args: &[u8]) -> bool {
    match Call::decode(op, args) {
        Ok(c) => {
            assert_eq!(c.encode(), (op, args.to_vec()));
            true
        }
        Err(code) => {
            assert_ne!(code, 0);
            false
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_call_bytes_decode_or_are_refused(op in 0u16..8, args in proptest::collection::vec(any::<u8>(), 0..64)) {
        check(op, &args);
        for at in [0, 4, 8, 60] {
            let _ = proto::result_u64(&args, at);
            let _ = proto::result_u32(&args, at);
        }
    }

    #[test]
    fn calls_of_the_right_length_decode_and_round_trip(
        words in proptest::array::uniform2(any::<u64>()),
        value in proptest::collection::vec(any::<u8>(), 0..32),
    ) {
        let mut b = Vec::new();
        b.extend_from_slice(&words[0].to_be_bytes());
        b.extend_from_slice(&words[1].to_be_bytes());
        prop_assert!(check(proto::op::READ, &b[..proto::READ_LEN]));
        prop_assert!(check(proto::op::DELETE, &b[..proto::ID_LEN]));
        prop_assert!(check(proto::op::INFO, &b[..proto::ID_LEN]));
        prop_assert!(check(proto::op::CREATE, &b[..proto::CREATE_LEN]));
        let (op, append) = Call::Append { id: words[0], value: &value }.encode();
        prop_assert!(check(op, &append));
        // A wrong length, or the reserved word set, is refused.
        prop_assert!(!check(proto::op::READ, &b[..proto::READ_LEN - 1]));
        let mut bad = append.clone();
        bad[12] |= 1;
        prop_assert!(!check(op, &bad));
    }
}
