//! `select` and `aggregate` at the memory node: an offload that works in the
//! **caller's** address space (`OffloadMem::use_caller_space`), so it
//! scans the columns the compute node wrote and writes its selection where
//! the compute node reads it — one address space for the user's code at
//! both nodes, no copy, no serialization (dissertation seed 002, §3.6).
//!
//! A scan reads the column in 64 KiB pieces (each one Clio read per MTU
//! through the fast path, with translation and the caller's permissions);
//! a gather of selected rows (a projection, or an aggregate over a
//! selection) reads a block of the column starting at the first row it
//! lacks and serves the following rows from that block while they fall in
//! it, so a request fetches as many selected rows as one packet holds.
//! Outputs are written in 64 KiB pieces. Only the call's result (16 or 40
//! bytes) crosses the network.

use clio_emu::{MemError, Offload, OffloadError, OffloadMem};
use clio_wire::Status;

use crate::proto::{code, op, Aggregate, Select};

/// Bytes of a column read at a time by a scan.
const SCAN_BYTES: usize = 64 << 10;
/// Bytes of an output buffered before it is written.
const FLUSH_BYTES: usize = 64 << 10;

fn caller_error(e: MemError) -> OffloadError {
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
struct Gather {
    column: u64,
    rows: u64,
    block_rows: u64,
    first: u64,
    block: Vec<u8>,
}

impl Gather {
    fn new(column: u64, rows: u64, mtu: usize) -> Gather {
        Gather {
            column,
            rows,
            block_rows: (mtu / 8).max(1) as u64,
            first: 0,
            block: Vec::new(),
        }
    }

    fn get(&mut self, mem: &mut OffloadMem<'_>, row: u64) -> Result<u64, OffloadError> {
        if row >= self.rows {
            return Err(OffloadError::Refused(code::BAD_ROW));
        }
        let held = self.block.len() as u64 / 8;
        if row < self.first || row >= self.first + held {
            let n = self.block_rows.min(self.rows - row);
            self.block.resize(n as usize * 8, 0);
            mem.read(self.column + row * 8, &mut self.block)
                .map_err(caller_error)?;
            self.first = row;
        }
        let at = (row - self.first) as usize * 8;
        Ok(le64(&self.block[at..]))
    }
}

/// An output array written in pieces.
struct Out {
    va: u64,
    written: u64,
    buf: Vec<u8>,
}

impl Out {
    fn new(va: u64) -> Out {
        Out {
            va,
            written: 0,
            buf: Vec::new(),
        }
    }

    fn push(&mut self, mem: &mut OffloadMem<'_>, bytes: &[u8]) -> Result<(), OffloadError> {
        if self.va == 0 {
            return Ok(());
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= FLUSH_BYTES {
            self.flush(mem)?;
        }
        Ok(())
    }

    fn flush(&mut self, mem: &mut OffloadMem<'_>) -> Result<(), OffloadError> {
        if self.va == 0 || self.buf.is_empty() {
            return Ok(());
        }
        mem.write(self.va + self.written, &self.buf)
            .map_err(caller_error)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

/// Clio-DF's memory-node half, as an offload
/// (`clio_emu::Board::register_offload`). It keeps no state between calls.
#[derive(Debug, Default)]
pub struct DfOffload {
    rows_scanned: u64,
}

impl DfOffload {
    /// A fresh offload.
    pub fn new() -> DfOffload {
        DfOffload::default()
    }

    /// Rows read by scans and gathers since it was registered.
    pub fn rows_scanned(&self) -> u64 {
        self.rows_scanned
    }

    fn select(
        &mut self,
        mem: &mut OffloadMem<'_>,
        s: &Select,
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        mem.use_caller_space()?;
        let mtu = mem.mtu();
        let mut proj = (s.project != 0).then(|| Gather::new(s.project, s.rows, mtu));
        let mut rows_out = Out::new(s.out_rows);
        let mut vals_out = Out::new(s.out_values);
        let (mut matched, mut written) = (0u64, 0u64);
        let mut buf = vec![0u8; SCAN_BYTES];
        let per = (SCAN_BYTES / 8) as u64;
        let mut r0 = 0u64;
        while r0 < s.rows {
            let n = per.min(s.rows - r0);
            let b = &mut buf[..n as usize * 8];
            mem.read(s.column + r0 * 8, b).map_err(caller_error)?;
            self.rows_scanned += n;
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
                rows_out.push(mem, &(row as u32).to_le_bytes())?;
                if let Some(g) = &mut proj {
                    let v = g.get(mem, row)?;
                    vals_out.push(mem, &v.to_le_bytes())?;
                }
            }
            r0 += n;
        }
        rows_out.flush(mem)?;
        vals_out.flush(mem)?;
        out.extend_from_slice(&matched.to_be_bytes());
        out.extend_from_slice(&written.to_be_bytes());
        Ok(())
    }

    fn aggregate(
        &mut self,
        mem: &mut OffloadMem<'_>,
        a: &Aggregate,
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        mem.use_caller_space()?;
        let (mut count, mut sum, mut min, mut max) = (0u64, 0u128, u64::MAX, 0u64);
        let mut add = |x: u64| {
            count += 1;
            sum += u128::from(x);
            min = min.min(x);
            max = max.max(x);
        };
        let mut buf = vec![0u8; SCAN_BYTES];
        if a.selection == 0 {
            let per = (SCAN_BYTES / 8) as u64;
            let mut r0 = 0u64;
            while r0 < a.rows {
                let n = per.min(a.rows - r0);
                let b = &mut buf[..n as usize * 8];
                mem.read(a.column + r0 * 8, b).map_err(caller_error)?;
                self.rows_scanned += n;
                b.chunks_exact(8).for_each(|x| add(le64(x)));
                r0 += n;
            }
        } else {
            let mtu = mem.mtu();
            let mut g = Gather::new(a.column, a.rows, mtu);
            let per = (SCAN_BYTES / 4) as u64;
            let mut i0 = 0u64;
            while i0 < a.selected {
                let n = per.min(a.selected - i0);
                let b = &mut buf[..n as usize * 4];
                mem.read(a.selection + i0 * 4, b).map_err(caller_error)?;
                for r in b.chunks_exact(4) {
                    let row = u64::from(u32::from_le_bytes([r[0], r[1], r[2], r[3]]));
                    add(g.get(mem, row)?);
                }
                self.rows_scanned += n;
                i0 += n;
            }
        }
        if count == 0 {
            min = 0;
        }
        out.extend_from_slice(&count.to_be_bytes());
        out.extend_from_slice(&((sum >> 64) as u64).to_be_bytes());
        out.extend_from_slice(&(sum as u64).to_be_bytes());
        out.extend_from_slice(&min.to_be_bytes());
        out.extend_from_slice(&max.to_be_bytes());
        Ok(())
    }
}

impl Offload for DfOffload {
    fn name(&self) -> &str {
        "clio-df"
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        opn: u16,
        args: &[u8],
        out: &mut Vec<u8>,
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
}
