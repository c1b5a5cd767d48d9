//! The stable twin of the fuzz target `df_calls` (host-sdk/wire/fuzz):
//! SELECT and AGGREGATE argument bytes decode to values that re-encode to
//! the same bytes, or a non-zero refusal code; arguments of the right
//! length with arbitrary contents reach the decoders' deeper checks.

use clio_df::proto::{self, Aggregate, Select};
use proptest::prelude::*;

fn select(b: &[u8]) -> Option<Select> {
    match Select::decode(b) {
        Ok(s) => {
            assert_eq!(s.encode(), b);
            Some(s)
        }
        Err(code) => {
            assert_ne!(code, 0);
            None
        }
    }
}

fn aggregate(b: &[u8]) -> Option<Aggregate> {
    match Aggregate::decode(b) {
        Ok(a) => {
            assert_eq!(a.encode(), b);
            Some(a)
        }
        Err(code) => {
            assert_ne!(code, 0);
            None
        }
    }
}

/// Whether `n` entries of `size` bytes at `va` end below 2^64 (0: none).
fn ends(va: u64, n: u64, size: u64) -> bool {
    va == 0 || u128::from(va) + u128::from(n) * u128::from(size) <= u128::from(u64::MAX)
}

proptest! {
    #[test]
    fn arbitrary_bytes_decode_or_are_refused(b in proptest::collection::vec(any::<u8>(), 0..96)) {
        select(&b);
        aggregate(&b);
        let _ = proto::select_result(&b);
        let _ = proto::aggregate_result(&b);
    }

    #[test]
    fn right_length_arguments_decode_exactly_when_their_rules_hold(
        w in proptest::array::uniform9(any::<u64>()),
        predicate in 0u8..10,
        small in 0u64..4,
    ) {
        let s = Select {
            column: w[0],
            rows: w[1] % (proto::MAX_ROWS + 2),
            predicate,
            lo: w[2],
            hi: w[3],
            project: w[4] * (small & 1),
            out_rows: w[5],
            out_values: w[6] * (small >> 1),
            cap: w[7],
        };
        let valid = s.rows <= proto::MAX_ROWS
            && (s.project != 0) == (s.out_values != 0)
            && ends(s.column, s.rows, 8)
            && ends(s.project, s.rows, 8)
            && ends(s.out_rows, s.cap.min(s.rows), 4)
            && ends(s.out_values, s.cap.min(s.rows), 8)
            && (proto::pred::EQ..=proto::pred::BETWEEN).contains(&predicate)
            && !(predicate == proto::pred::BETWEEN && s.lo > s.hi);
        prop_assert_eq!(select(&s.encode()), valid.then_some(s));
        let a = Aggregate {
            column: w[0],
            rows: w[1] % (proto::MAX_ROWS + 2),
            selection: w[8] * (small & 1),
            selected: w[2] * (small >> 1),
        };
        let valid = a.rows <= proto::MAX_ROWS
            && !(a.selection == 0 && a.selected != 0)
            && ends(a.column, a.rows, 8)
            && ends(a.selection, a.selected, 4);
        prop_assert_eq!(aggregate(&a.encode()), valid.then_some(a));
    }
}
