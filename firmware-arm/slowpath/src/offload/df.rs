//! Clio-DF's memory-node half on the ARM (issue #16), `no_std`: `select`
//! and `aggregate` over `u64` columns in the **caller's** address space
//! ([`OffloadMemory::use_caller_space`]), registered by the firmware image
//! under [`OFFLOAD_ID`], the id the SDK's `clio_df` client calls.
//!
//! This is Clio-DF's one memory-node implementation: the firmware image
//! serves it reading board DRAM directly ([`super::DirectMem`], the
//! caller's session checked), the emulated board on the RTL through the
//! same [`super::register_board`], and the emulator's model board through
//! `clio_emu::native::Native` (`clio_df::DfOffload`), reading the caller's
//! memory through the fast path in packets. The call format ([`proto`]) is
//! the one definition, re-exported by `clio_df::proto`. Memory is reached
//! in a fixed order, so every side gives the same answers, refusal codes
//! and first failing access (`host-sdk/df/tests/qemu.rs` compares the
//! image with the emulator call by call): a scan reads the column 64 KiB at
//! a time; a gather of selected rows (a projection, or an aggregate over a
//! selection) reads a block of `mtu / 8` rows from the first row it lacks;
//! outputs are written 64 KiB at a time and at the end. No heap: those buffers
//! (64 + 64 + 64 + 9 KiB) are fields of [`DfOffload`], a `static` in the
//! image's `.bss`.

use super::{MemFault, Offload, OffloadError, OffloadMemory, Results};
use clio_wire::Status;

use proto::{code, op, Aggregate, Select};

/// Clio-DF's offload id.
pub const OFFLOAD_ID: u32 = 3;

/// Bytes of a column read at a time by a scan.
const SCAN_BYTES: usize = 64 << 10;
/// Bytes of an output buffered before it is written.
const FLUSH_BYTES: usize = 64 << 10;
/// Most rows a gather reads at a time: a jumbo MTU's worth (9 000 bytes).
const BLOCK_ROWS: usize = 9000 / 8;
/// Gather block of a side that does not say its MTU.
const DEFAULT_MTU: usize = 1450;

/// Clio-DF's call format: the arguments after the `OffloadCallReq` of an
/// `OFFLOAD_CALL` to [`OFFLOAD_ID`], its results and its refusal codes.
/// Integers big-endian; every VA is in the **caller's** address space, and
/// columns there are arrays of little-endian `u64` (as the board's atomics
/// see words), row `i` at `va + 8 i`.
///
/// `SELECT` (72 bytes): `column: u64`, `rows: u64`, `predicate: u8`, seven
/// reserved zero bytes, `lo: u64`, `hi: u64`, `project: u64` (a second
/// column, 0 = none), `out_rows: u64` (0 = none), `out_values: u64` (0 =
/// none; required when `project` is set, refused otherwise), `cap: u64`.
/// Writes the matching rows' indices (`u32` LE each, ascending) at
/// `out_rows` and the projected column's values at those rows (`u64` LE) at
/// `out_values`, at most `cap` of each. Result (16 bytes): `matched: u64`
/// (all matching rows), `written: u64` (`min(matched, cap)`).
///
/// `AGGREGATE` (32 bytes): `column: u64`, `rows: u64`, `selection: u64` (0 =
/// every row; else `u32` LE row indices, each below `rows`), `selected:
/// u64` (indices at `selection`). Result (40 bytes): `count: u64`, `sum:
/// u128` (exact), `min: u64`, `max: u64` (both 0 when `count` is 0).
///
/// Every array a call names (a column of `rows` words, an output of
/// `min(cap, rows)` entries, a selection of `selected` indices) must end
/// below 2^64, else `BAD_ARGS`.
pub mod proto {
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
        /// projection without an output, more than 2^32 rows, an array
        /// passing the end of the VA space).
        pub const BAD_ARGS: u16 = 1;
        /// Unknown predicate, or `BETWEEN` with `lo > hi`.
        pub const BAD_PREDICATE: u16 = 2;
        /// A VA of the call (a column, a selection, an output) is not mapped
        /// in the caller's address space.
        pub const UNMAPPED: u16 = 3;
        /// The caller may not read a column or write an output there.
        pub const PERMISSION: u16 = 4;
        /// A selection names a row at or past the column's `rows`.
        pub const BAD_ROW: u16 = 5;
    }

    /// Predicates of `SELECT` (unsigned comparisons of the column's value
    /// `x`).
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

    /// Whether `n` entries of `size` bytes at `va` end below 2^64 (`va` 0:
    /// no array).
    pub fn fits(va: u64, n: u64, size: u64) -> bool {
        va == 0
            || n.checked_mul(size)
                .and_then(|b| va.checked_add(b))
                .is_some()
    }

    impl Select {
        /// The arguments' bytes.
        pub fn to_bytes(&self) -> [u8; SELECT_LEN] {
            let mut b = [0u8; SELECT_LEN];
            b[0..8].copy_from_slice(&self.column.to_be_bytes());
            b[8..16].copy_from_slice(&self.rows.to_be_bytes());
            b[16] = self.predicate;
            for (i, w) in [
                self.lo,
                self.hi,
                self.project,
                self.out_rows,
                self.out_values,
                self.cap,
            ]
            .into_iter()
            .enumerate()
            {
                b[24 + 8 * i..32 + 8 * i].copy_from_slice(&w.to_be_bytes());
            }
            b
        }

        /// Encode (the bytes of [`Select::to_bytes`] in a `Vec`).
        #[cfg(feature = "alloc")]
        pub fn encode(&self) -> alloc::vec::Vec<u8> {
            self.to_bytes().to_vec()
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
            let out = s.cap.min(s.rows);
            if !(fits(s.column, s.rows, 8)
                && fits(s.project, s.rows, 8)
                && fits(s.out_rows, out, 4)
                && fits(s.out_values, out, 8))
            {
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
        /// The arguments' bytes.
        pub fn to_bytes(&self) -> [u8; AGGREGATE_LEN] {
            let mut b = [0u8; AGGREGATE_LEN];
            for (i, w) in [self.column, self.rows, self.selection, self.selected]
                .into_iter()
                .enumerate()
            {
                b[8 * i..8 * i + 8].copy_from_slice(&w.to_be_bytes());
            }
            b
        }

        /// Encode (the bytes of [`Aggregate::to_bytes`] in a `Vec`).
        #[cfg(feature = "alloc")]
        pub fn encode(&self) -> alloc::vec::Vec<u8> {
            self.to_bytes().to_vec()
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
            if !(fits(a.column, a.rows, 8) && fits(a.selection, a.selected, 4)) {
                return Err(code::BAD_ARGS);
            }
            Ok(a)
        }
    }

    /// `SELECT`'s result bytes for (matched, written).
    pub fn select_result_bytes(matched: u64, written: u64) -> [u8; SELECT_RESULT_LEN] {
        let mut r = [0u8; SELECT_RESULT_LEN];
        r[..8].copy_from_slice(&matched.to_be_bytes());
        r[8..].copy_from_slice(&written.to_be_bytes());
        r
    }

    /// `AGGREGATE`'s result bytes for (count, sum, min, max).
    pub fn aggregate_result_bytes(
        count: u64,
        sum: u128,
        min: u64,
        max: u64,
    ) -> [u8; AGGREGATE_RESULT_LEN] {
        let mut r = [0u8; AGGREGATE_RESULT_LEN];
        r[..8].copy_from_slice(&count.to_be_bytes());
        r[8..24].copy_from_slice(&sum.to_be_bytes());
        r[24..32].copy_from_slice(&min.to_be_bytes());
        r[32..].copy_from_slice(&max.to_be_bytes());
        r
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
}

/// A refused access of the caller's memory as the call's answer: its own
/// code for an unmapped VA or a permission, a fault otherwise.
fn caller_error(e: MemFault) -> OffloadError {
    match e.status {
        Status::Unmapped => OffloadError::Refused(code::UNMAPPED),
        Status::Permission => OffloadError::Refused(code::PERMISSION),
        _ => OffloadError::from(e),
    }
}

fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// Reads rows of a column in any (mostly ascending) order, a block at a
/// time.
struct Gather<'b> {
    column: u64,
    rows: u64,
    block_rows: u64,
    first: u64,
    held: u64,
    block: &'b mut [u8],
}

impl<'b> Gather<'b> {
    fn new(column: u64, rows: u64, mtu: usize, block: &'b mut [u8]) -> Self {
        Gather {
            column,
            rows,
            block_rows: (mtu / 8).clamp(1, BLOCK_ROWS) as u64,
            first: 0,
            held: 0,
            block,
        }
    }

    fn get(&mut self, mem: &mut dyn OffloadMemory, row: u64) -> Result<u64, OffloadError> {
        if row >= self.rows {
            return Err(OffloadError::Refused(code::BAD_ROW));
        }
        if row < self.first || row >= self.first + self.held {
            let n = self.block_rows.min(self.rows - row);
            // Not yet held: nothing is held if the read fails.
            self.held = 0;
            mem.read(
                self.column.wrapping_add(row * 8),
                &mut self.block[..n as usize * 8],
            )
            .map_err(caller_error)?;
            self.first = row;
            self.held = n;
        }
        let at = (row - self.first) as usize * 8;
        Ok(le64(&self.block[at..]))
    }
}

/// An output array written in pieces.
struct Out<'b> {
    va: u64,
    written: u64,
    len: usize,
    buf: &'b mut [u8],
}

impl<'b> Out<'b> {
    fn new(va: u64, buf: &'b mut [u8]) -> Self {
        Out {
            va,
            written: 0,
            len: 0,
            buf,
        }
    }

    fn push(&mut self, mem: &mut dyn OffloadMemory, bytes: &[u8]) -> Result<(), OffloadError> {
        if self.va == 0 {
            return Ok(());
        }
        if self.len + bytes.len() > self.buf.len() {
            // Entries divide the buffer, so a full one was flushed already.
            self.flush(mem)?;
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        if self.len >= FLUSH_BYTES {
            self.flush(mem)?;
        }
        Ok(())
    }

    fn flush(&mut self, mem: &mut dyn OffloadMemory) -> Result<(), OffloadError> {
        if self.va == 0 || self.len == 0 {
            return Ok(());
        }
        mem.write(self.va.wrapping_add(self.written), &self.buf[..self.len])
            .map_err(caller_error)?;
        self.written += self.len as u64;
        self.len = 0;
        Ok(())
    }
}

/// Clio-DF's memory-node half on the ARM. It keeps no state between calls
/// but its buffers and a counter; all zeros when new, so a `static` one
/// takes `.bss`.
pub struct DfOffload {
    rows_scanned: u64,
    scan: [u8; SCAN_BYTES],
    rows_out: [u8; FLUSH_BYTES],
    values_out: [u8; FLUSH_BYTES],
    block: [u8; BLOCK_ROWS * 8],
}

impl core::fmt::Debug for DfOffload {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DfOffload")
            .field("rows_scanned", &self.rows_scanned)
            .finish_non_exhaustive()
    }
}

impl Default for DfOffload {
    fn default() -> Self {
        Self::new()
    }
}

impl DfOffload {
    /// A fresh offload (about 201 KiB of buffers).
    pub const fn new() -> Self {
        DfOffload {
            rows_scanned: 0,
            scan: [0; SCAN_BYTES],
            rows_out: [0; FLUSH_BYTES],
            values_out: [0; FLUSH_BYTES],
            block: [0; BLOCK_ROWS * 8],
        }
    }

    /// Rows read by scans and gathers since it was made.
    pub fn rows_scanned(&self) -> u64 {
        self.rows_scanned
    }

    fn join(mem: &mut dyn OffloadMemory) -> Result<(), OffloadError> {
        mem.use_caller_space()
            .map(|_| ())
            .map_err(OffloadError::from)
    }

    fn select(
        &mut self,
        mem: &mut dyn OffloadMemory,
        s: &Select,
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        Self::join(mem)?;
        let mtu = mem.mtu().unwrap_or(DEFAULT_MTU);
        let DfOffload {
            rows_scanned,
            scan,
            rows_out,
            values_out,
            block,
        } = self;
        let mut proj = (s.project != 0).then(|| Gather::new(s.project, s.rows, mtu, block));
        let mut rows_o = Out::new(s.out_rows, rows_out);
        let mut vals_o = Out::new(s.out_values, values_out);
        let (mut matched, mut written) = (0u64, 0u64);
        let per = (SCAN_BYTES / 8) as u64;
        let mut r0 = 0u64;
        while r0 < s.rows {
            let n = per.min(s.rows - r0);
            let b = &mut scan[..n as usize * 8];
            mem.read(s.column.wrapping_add(r0 * 8), b)
                .map_err(caller_error)?;
            *rows_scanned += n;
            for (i, x) in b.chunks_exact(8).enumerate() {
                if !s.matches(le64(x)) {
                    continue;
                }
                matched += 1;
                if written == s.cap {
                    continue;
                }
                written += 1;
                let row = r0 + i as u64;
                rows_o.push(mem, &(row as u32).to_le_bytes())?;
                if let Some(g) = &mut proj {
                    let v = g.get(mem, row)?;
                    vals_o.push(mem, &v.to_le_bytes())?;
                }
            }
            r0 += n;
        }
        rows_o.flush(mem)?;
        vals_o.flush(mem)?;
        out.push(&proto::select_result_bytes(matched, written))
    }

    fn aggregate(
        &mut self,
        mem: &mut dyn OffloadMemory,
        a: &Aggregate,
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        Self::join(mem)?;
        let (mut count, mut sum, mut min, mut max) = (0u64, 0u128, u64::MAX, 0u64);
        let mut add = |x: u64| {
            count += 1;
            sum += u128::from(x);
            min = min.min(x);
            max = max.max(x);
        };
        let DfOffload {
            rows_scanned,
            scan,
            block,
            ..
        } = self;
        if a.selection == 0 {
            let per = (SCAN_BYTES / 8) as u64;
            let mut r0 = 0u64;
            while r0 < a.rows {
                let n = per.min(a.rows - r0);
                let b = &mut scan[..n as usize * 8];
                mem.read(a.column.wrapping_add(r0 * 8), b)
                    .map_err(caller_error)?;
                *rows_scanned += n;
                b.chunks_exact(8).for_each(|x| add(le64(x)));
                r0 += n;
            }
        } else {
            let mtu = mem.mtu().unwrap_or(DEFAULT_MTU);
            let mut g = Gather::new(a.column, a.rows, mtu, block);
            let per = (SCAN_BYTES / 4) as u64;
            let mut i0 = 0u64;
            while i0 < a.selected {
                let n = per.min(a.selected - i0);
                let b = &mut scan[..n as usize * 4];
                mem.read(a.selection.wrapping_add(i0 * 4), b)
                    .map_err(caller_error)?;
                for r in b.chunks_exact(4) {
                    let row = u64::from(u32::from_le_bytes([r[0], r[1], r[2], r[3]]));
                    add(g.get(mem, row)?);
                }
                *rows_scanned += n;
                i0 += n;
            }
        }
        if count == 0 {
            min = 0;
        }
        out.push(&proto::aggregate_result_bytes(count, sum, min, max))
    }
}

impl Offload for DfOffload {
    fn name(&self) -> &'static str {
        "clio-df"
    }

    fn call(
        &mut self,
        mem: &mut dyn OffloadMemory,
        opn: u16,
        args: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError> {
        match opn {
            op::SELECT => {
                let s = Select::decode(args).map_err(OffloadError::Refused)?;
                self.select(mem, &s, out)
            }
            op::AGGREGATE => {
                let a = Aggregate::decode(args).map_err(OffloadError::Refused)?;
                self.aggregate(mem, &a, out)
            }
            _ => Err(OffloadError::Refused(code::BAD_ARGS)),
        }
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        match op {
            op::SELECT => Some(proto::SELECT_RESULT_LEN),
            op::AGGREGATE => Some(proto::AGGREGATE_RESULT_LEN),
            _ => Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::proto::*;

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
        let mut b = [0u8; 80];
        for _ in 0..100_000 {
            let len = [SELECT_LEN, AGGREGATE_LEN, (next() % 80) as usize][(next() % 3) as usize];
            let b = &mut b[..len];
            b.iter_mut().for_each(|v| *v = next() as u8);
            if len == SELECT_LEN && next() % 2 == 0 {
                // Plausible: reserved zero, a known predicate, small rows,
                // VAs below 2^48.
                b[16] = 1 + (next() % 7) as u8;
                b[17..24].fill(0);
                b[8..16].copy_from_slice(&(next() % 1000).to_be_bytes());
                for at in [0, 40, 48, 56] {
                    b[at..at + 2].fill(0);
                }
            }
            if len == AGGREGATE_LEN && next() % 2 == 0 {
                b[8..16].copy_from_slice(&(next() % 1000).to_be_bytes());
                b[0..2].fill(0);
                b[16..18].fill(0);
                b[24..28].fill(0);
            }
            if let Ok(s) = Select::decode(b) {
                assert_eq!(s.to_bytes()[..], b[..]);
                selects += 1;
            }
            if let Ok(a) = Aggregate::decode(b) {
                assert_eq!(a.to_bytes()[..], b[..]);
                aggregates += 1;
            }
        }
        assert!(selects > 100 && aggregates > 100, "{selects} {aggregates}");
    }

    #[test]
    fn an_array_past_the_end_of_the_va_space_is_bad_args() {
        let s = Select {
            column: u64::MAX - 15,
            rows: 2,
            predicate: pred::EQ,
            lo: 0,
            hi: 0,
            project: 0,
            out_rows: 0,
            out_values: 0,
            cap: 0,
        };
        assert_eq!(Select::decode(&s.to_bytes()), Err(code::BAD_ARGS));
        let ok = Select {
            column: u64::MAX - 16,
            ..s
        };
        assert_eq!(Select::decode(&ok.to_bytes()), Ok(ok));
        let out = Select {
            column: 0x1000,
            out_rows: u64::MAX - 7,
            cap: 2,
            ..s
        };
        assert_eq!(Select::decode(&out.to_bytes()), Err(code::BAD_ARGS));
        let a = Aggregate {
            column: 0x1000,
            rows: 4,
            selection: 0x2000,
            selected: u64::MAX / 2,
        };
        assert_eq!(Aggregate::decode(&a.to_bytes()), Err(code::BAD_ARGS));
    }
}
