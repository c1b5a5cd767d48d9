//! Clio-DF's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], its results and its refusal
//! codes. Integers big-endian; every VA is in the **caller's** address
//! space, and columns there are arrays of little-endian `u64` (as the
//! board's atomics see words), row `i` at `va + 8 i`.
//!
//! `SELECT` (72 bytes): `column: u64`, `rows: u64`, `predicate: u8`, seven
//! reserved zero bytes, `lo: u64`, `hi: u64`, `project: u64` (a second
//! column, 0 = none), `out_rows: u64` (0 = none), `out_values: u64` (0 =
//! none; required when `project` is set, refused otherwise), `cap: u64`.
//! Writes the matching rows' indices (`u32` LE each, ascending) at
//! `out_rows` and the projected column's values at those rows (`u64` LE) at
//! `out_values`, at most `cap` of each. Result (16 bytes): `matched: u64`
//! (all matching rows), `written: u64` (`min(matched, cap)`).
//!
//! `AGGREGATE` (32 bytes): `column: u64`, `rows: u64`, `selection: u64` (0 =
//! every row; else `u32` LE row indices, each below `rows`), `selected:
//! u64` (indices at `selection`). Result (40 bytes): `count: u64`, `sum:
//! u128` (exact), `min: u64`, `max: u64` (both 0 when `count` is 0).

/// Operations (the `op` of the `OffloadCallReq`).
pub mod op {
    /// Filter a column, writing the selection (and a projection).
    pub const SELECT: u16 = 1;
    /// Count, sum, min and max of a column (or of its selected rows).
    pub const AGGREGATE: u16 = 2;
}

/// Refusal codes (the `code` of an `OFFLOAD_REFUSED` answer).
pub mod code {
    /// The arguments do not parse (length, reserved bytes, unknown op, a
    /// projection without an output, more than 2^32 rows).
    pub const BAD_ARGS: u16 = 1;
    /// Unknown predicate, or `BETWEEN` with `lo > hi`.
    pub const BAD_PREDICATE: u16 = 2;
    /// A VA of the call (a column, a selection, an output) is not mapped in
    /// the caller's address space.
    pub const UNMAPPED: u16 = 3;
    /// The caller may not read a column or write an output there.
    pub const PERMISSION: u16 = 4;
    /// A selection names a row at or past the column's `rows`.
    pub const BAD_ROW: u16 = 5;
}

/// Predicates of `SELECT` (unsigned comparisons of the column's value `x`).
pub mod pred {
    /// `x == lo`.
    pub const EQ: u8 = 1;
    /// `x != lo`.
    pub const NE: u8 = 2;
    /// `x < lo`.
    pub const LT: u8 = 3;
    /// `x <= lo`.
    pub const LE: u8 = 4;
    /// `x > lo`.
    pub const GT: u8 = 5;
    /// `x >= lo`.
    pub const GE: u8 = 6;
    /// `lo <= x <= hi`.
    pub const BETWEEN: u8 = 7;
}

/// Bytes of `SELECT`'s arguments.
pub const SELECT_LEN: usize = 72;
/// Bytes of `SELECT`'s result.
pub const SELECT_RESULT_LEN: usize = 16;
/// Bytes of `AGGREGATE`'s arguments.
pub const AGGREGATE_LEN: usize = 32;
/// Bytes of `AGGREGATE`'s result.
pub const AGGREGATE_RESULT_LEN: usize = 40;
/// Most rows a column may have (row indices are `u32`).
pub const MAX_ROWS: u64 = 1 << 32;

/// `SELECT`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Select {
    /// The filtered column.
    pub column: u64,
    /// Its rows.
    pub rows: u64,
    /// One of [`pred`].
    pub predicate: u8,
    /// First operand.
    pub lo: u64,
    /// Second operand (`BETWEEN`).
    pub hi: u64,
    /// The projected column (0 = none).
    pub project: u64,
    /// Where the matching rows' indices go (0 = nowhere).
    pub out_rows: u64,
    /// Where the projected values go (0 = nowhere).
    pub out_values: u64,
    /// Entries each output holds.
    pub cap: u64,
}

/// `AGGREGATE`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aggregate {
    /// The column.
    pub column: u64,
    /// Its rows.
    pub rows: u64,
    /// Row indices to aggregate over (0 = every row).
    pub selection: u64,
    /// Indices at `selection`.
    pub selected: u64,
}

fn be64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(w)
}

impl Select {
    /// Encode.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(SELECT_LEN);
        b.extend_from_slice(&self.column.to_be_bytes());
        b.extend_from_slice(&self.rows.to_be_bytes());
        b.push(self.predicate);
        b.extend_from_slice(&[0; 7]);
        for w in [
            self.lo,
            self.hi,
            self.project,
            self.out_rows,
            self.out_values,
            self.cap,
        ] {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    /// Decode; `Err(code)` names what is wrong.
    pub fn decode(b: &[u8]) -> Result<Select, u16> {
        if b.len() != SELECT_LEN || b[17..24] != [0; 7] {
            return Err(code::BAD_ARGS);
        }
        let s = Select {
            column: be64(b, 0),
            rows: be64(b, 8),
            predicate: b[16],
            lo: be64(b, 24),
            hi: be64(b, 32),
            project: be64(b, 40),
            out_rows: be64(b, 48),
            out_values: be64(b, 56),
            cap: be64(b, 64),
        };
        if s.rows > MAX_ROWS || (s.project != 0) != (s.out_values != 0) {
            return Err(code::BAD_ARGS);
        }
        if !(pred::EQ..=pred::BETWEEN).contains(&s.predicate)
            || (s.predicate == pred::BETWEEN && s.lo > s.hi)
        {
            return Err(code::BAD_PREDICATE);
        }
        Ok(s)
    }

    /// Whether `x` matches the predicate.
    pub fn matches(&self, x: u64) -> bool {
        match self.predicate {
            pred::EQ => x == self.lo,
            pred::NE => x != self.lo,
            pred::LT => x < self.lo,
            pred::LE => x <= self.lo,
            pred::GT => x > self.lo,
            pred::GE => x >= self.lo,
            _ => self.lo <= x && x <= self.hi,
        }
    }
}

impl Aggregate {
    /// Encode.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(AGGREGATE_LEN);
        for w in [self.column, self.rows, self.selection, self.selected] {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    /// Decode; `Err(code)` names what is wrong.
    pub fn decode(b: &[u8]) -> Result<Aggregate, u16> {
        if b.len() != AGGREGATE_LEN {
            return Err(code::BAD_ARGS);
        }
        let a = Aggregate {
            column: be64(b, 0),
            rows: be64(b, 8),
            selection: be64(b, 16),
            selected: be64(b, 24),
        };
        if a.rows > MAX_ROWS || (a.selection == 0 && a.selected != 0) {
            return Err(code::BAD_ARGS);
        }
        Ok(a)
    }
}

/// Decode `SELECT`'s result into (matched, written).
pub fn select_result(r: &[u8]) -> Option<(u64, u64)> {
    (r.len() == SELECT_RESULT_LEN).then(|| (be64(r, 0), be64(r, 8)))
}

/// Decode `AGGREGATE`'s result into (count, sum, min, max).
pub fn aggregate_result(r: &[u8]) -> Option<(u64, u128, u64, u64)> {
    (r.len() == AGGREGATE_RESULT_LEN).then(|| {
        let sum = u128::from(be64(r, 8)) << 64 | u128::from(be64(r, 16));
        (be64(r, 0), sum, be64(r, 24), be64(r, 32))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parsers' contract (as a fuzz target would check it, on stable):
    /// any bytes decode or are refused, never panic, and what decodes
    /// encodes back to the same bytes.
    #[test]
    fn any_bytes_decode_or_are_refused_and_round_trip() {
        let mut x = 0x0fed_cba9_8765_4321u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut selects, mut aggregates) = (0, 0);
        for _ in 0..100_000 {
            let len = [SELECT_LEN, AGGREGATE_LEN, (next() % 80) as usize][(next() % 3) as usize];
            let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if len == SELECT_LEN && next() % 2 == 0 {
                // Plausible: reserved zero, a known predicate, small rows.
                b[16] = 1 + (next() % 7) as u8;
                b[17..24].fill(0);
                b[8..16].copy_from_slice(&(next() % 1000).to_be_bytes());
            }
            if len == AGGREGATE_LEN && next() % 2 == 0 {
                b[8..16].copy_from_slice(&(next() % 1000).to_be_bytes());
            }
            if let Ok(s) = Select::decode(&b) {
                assert_eq!(s.encode(), b);
                selects += 1;
            }
            if let Ok(a) = Aggregate::decode(&b) {
                assert_eq!(a.encode(), b);
                aggregates += 1;
            }
        }
        assert!(selects > 100 && aggregates > 100, "{selects} {aggregates}");
    }
}
