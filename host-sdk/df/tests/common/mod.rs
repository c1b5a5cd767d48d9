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
    let select = |sel: proto::Select| (proto::op::SELECT, sel.encode());
    // A selection naming a row past the column (written and acknowledged
    // just before the call).
    let sel_va = s.ralloc(8, perms::RW).unwrap().va;
    s.rwrite(sel_va, &[0xff; 8]).unwrap();
    let past_the_column = proto::Aggregate {
        column,
        rows,
        selection: sel_va,
        selected: 2,
    };
    let ro = s.ralloc(4096, perms::READ).unwrap().va;
    let cases = [
        (
            "short arguments",
            (proto::op::SELECT, short),
            proto::code::BAD_ARGS,
        ),
        (
            "an unknown operation",
            (9, good.encode()),
            proto::code::BAD_ARGS,
        ),
        (
            "a projection without an output",
            select(proto::Select {
                project: good.column,
                ..good
            }),
            proto::code::BAD_ARGS,
        ),
        (
            "a bad predicate",
            select(proto::Select {
                predicate: 42,
                ..good
            }),
            proto::code::BAD_PREDICATE,
        ),
        (
            "a column the caller never mapped",
            select(proto::Select {
                column: 0x7f00_0000_0000,
                ..good
            }),
            proto::code::UNMAPPED,
        ),
        (
            "a selection naming a row past the column",
            (proto::op::AGGREGATE, past_the_column.encode()),
            proto::code::BAD_ROW,
        ),
        (
            "a read-only output",
            select(proto::Select {
                out_rows: ro,
                cap: 1000,
                ..good
            }),
            proto::code::PERMISSION,
        ),
    ];
    for (what, (op, args), code) in cases {
        assert_eq!(refused(s, op, &args), code, "{what}");
    }
}
