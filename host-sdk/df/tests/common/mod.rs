//! What the Clio-DF tests share: the test table and the offload's refusal
//! codes, checked the same way on every board (the emulator's and the
//! firmware image in QEMU run the same offload code).
#![allow(dead_code)]

use clio::backend::Transport;
use clio::{perms, ClioError, Session};
use clio_df::{proto, OFFLOAD_ID};

/// A table: `a` in 0..100 (pseudo-random), `b` a score, `c` = row.
pub fn table(rows: usize) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut a = Vec::with_capacity(rows);
    let mut b = Vec::with_capacity(rows);
    for _ in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a.push(x % 100);
        b.push((x >> 20) % 1000);
    }
    let c = (0..rows as u64).collect();
    (a, b, c)
}

/// The refusal code of a call that must be refused.
pub fn refused<T: Transport>(s: &mut Session<T>, op: u16, args: &[u8]) -> u16 {
    match s.offload_call(OFFLOAD_ID, op, args) {
        Err(ClioError::OffloadRefused { code, .. }) => code,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Each bad call gets its own refusal code: short arguments, an unknown
/// operation, a projection without an output, a bad predicate, an unmapped
/// column, a selection naming a row past the column, a read-only output.
/// `column` is a mapped column of `rows` rows in `s`'s address space.
pub fn check_refusals<T: Transport>(s: &mut Session<T>, column: u64, rows: u64) {
    let good = proto::Select {
        column,
        rows,
        predicate: proto::pred::EQ,
        lo: 1,
        hi: 0,
        project: 0,
        out_rows: 0,
        out_values: 0,
        cap: 0,
    };
    let mut short = good.encode();
    short.pop();
    assert_eq!(refused(s, proto::op::SELECT, &short), proto::code::BAD_ARGS);
    assert_eq!(refused(s, 9, &good.encode()), proto::code::BAD_ARGS);
    let proj_without_output = proto::Select {
        project: good.column,
        ..good
    };
    assert_eq!(
        refused(s, proto::op::SELECT, &proj_without_output.encode()),
        proto::code::BAD_ARGS
    );
    let bad_pred = proto::Select {
        predicate: 42,
        ..good
    };
    assert_eq!(
        refused(s, proto::op::SELECT, &bad_pred.encode()),
        proto::code::BAD_PREDICATE
    );
    // A column the caller never mapped.
    let unmapped = proto::Select {
        column: 0x7f00_0000_0000,
        ..good
    };
    assert_eq!(
        refused(s, proto::op::SELECT, &unmapped.encode()),
        proto::code::UNMAPPED
    );
    // A selection naming a row past the column (written and acknowledged
    // just before the call).
    let sel_va = s.ralloc(8, perms::RW).unwrap().va;
    s.rwrite(sel_va, &[0xff; 8]).unwrap();
    let agg = proto::Aggregate {
        column,
        rows,
        selection: sel_va,
        selected: 2,
    };
    assert_eq!(
        refused(s, proto::op::AGGREGATE, &agg.encode()),
        proto::code::BAD_ROW
    );
    // Read-only output.
    let ro = s.ralloc(4096, perms::READ).unwrap().va;
    let to_ro = proto::Select {
        out_rows: ro,
        cap: 1000,
        ..good
    };
    assert_eq!(
        refused(s, proto::op::SELECT, &to_ro.encode()),
        proto::code::PERMISSION
    );
}
