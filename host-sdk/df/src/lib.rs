//! Clio-DF: a DataFrame whose computation is split between the compute node
//! and the memory node, over one address space (dissertation seed 002,
//! §3.6 and §3.7.2).
//!
//! - The data: a [`DataFrame`] is a set of equally long `u64` columns in
//!   the caller's remote memory (each an array written with `rwrite`).
//! - At the memory node ([`DfOffload`], offload [`OFFLOAD_ID`]):
//!   [`DfClient::select`] filters a column and writes the matching rows
//!   (and a projected column's values at them) into a [`Selection`] in the
//!   same address space; [`DfClient::aggregate`] sums, counts and bounds a
//!   column, all of it or the selected rows. Only a call's 16 or 40 byte
//!   result crosses the network; the offload reads and writes the caller's
//!   memory under the caller's PID (`OffloadMem::use_caller_space`).
//! - At the compute node: [`histogram`] and [`shuffle`] work on what the
//!   client fetched ([`DfClient::fetch_values`] reads a selection's
//!   projected values: the selected rows only).
//! - The baseline the benchmark compares with: [`DfClient::select_at_cn`]
//!   fetches whole columns and filters at the compute node.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use clio::{ClientConfig, Session};
//! use clio_df::{histogram, DfClient, Predicate};
//! let s = Session::open("127.0.0.1:47700".parse()?, ClientConfig::default())?;
//! let mut df = DfClient::new(s);
//! let gender: Vec<u64> = (0..1000).map(|i| i % 2).collect();
//! let score: Vec<u64> = (0..1000).map(|i| i % 101).collect();
//! let t = df.upload(&[("gender", &gender), ("score", &score)])?;
//! let sel = df.select(&t, "gender", Predicate::Eq(1), Some("score"), t.rows())?;
//! let avg = df.aggregate_values(&sel)?.mean();
//! let scores = df.fetch_values(&sel)?;
//! let bins = histogram(&scores, 0, 100, 10);
//! println!("{} rows, mean {avg:?}, histogram {bins:?}", sel.matched());
//! # Ok(()) }
//! ```

pub mod offload;
pub mod proto;

use clio::backend::Transport;
use clio::{perms, AsyncSession, ClioError, Session};

pub use offload::DfOffload;

/// The offload id Clio-DF is registered under at a memory node.
pub const OFFLOAD_ID: u32 = clio_slowpath::offload::df::OFFLOAD_ID;

/// A `select` predicate over a column's values (unsigned comparisons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    /// `x == v`.
    Eq(u64),
    /// `x != v`.
    Ne(u64),
    /// `x < v`.
    Lt(u64),
    /// `x <= v`.
    Le(u64),
    /// `x > v`.
    Gt(u64),
    /// `x >= v`.
    Ge(u64),
    /// `lo <= x <= hi`.
    Between(u64, u64),
}

impl Predicate {
    /// The wire form: (predicate, lo, hi).
    pub fn wire(self) -> (u8, u64, u64) {
        use proto::pred;
        match self {
            Predicate::Eq(v) => (pred::EQ, v, 0),
            Predicate::Ne(v) => (pred::NE, v, 0),
            Predicate::Lt(v) => (pred::LT, v, 0),
            Predicate::Le(v) => (pred::LE, v, 0),
            Predicate::Gt(v) => (pred::GT, v, 0),
            Predicate::Ge(v) => (pred::GE, v, 0),
            Predicate::Between(lo, hi) => (pred::BETWEEN, lo, hi),
        }
    }

    /// Whether `x` matches (what the memory node computes).
    pub fn matches(self, x: u64) -> bool {
        let (predicate, lo, hi) = self.wire();
        proto::Select {
            column: 0,
            rows: 0,
            predicate,
            lo,
            hi,
            project: 0,
            out_rows: 0,
            out_values: 0,
            cap: 0,
        }
        .matches(x)
    }
}

/// What can go wrong with a DataFrame operation.
#[derive(Debug, thiserror::Error)]
pub enum DfError {
    /// No column of that name in the DataFrame.
    #[error("no column '{0}' in the DataFrame")]
    NoColumn(String),
    /// Columns of different lengths, or no column, or a duplicate name.
    #[error("columns: {0}")]
    BadColumns(String),
    /// More rows than the offload indexes (row indices are `u32`).
    #[error("{rows} rows: at most {max} rows", max = proto::MAX_ROWS)]
    TooManyRows {
        /// Rows given.
        rows: u64,
    },
    /// The predicate is malformed (`BETWEEN` with `lo > hi`).
    #[error("bad predicate {0:?}")]
    BadPredicate(Predicate),
    /// More rows matched than the selection holds; the first `cap` were
    /// written (select again with a larger `cap`).
    #[error("{matched} rows matched, the selection holds {cap}")]
    SelectionFull {
        /// Rows that matched.
        matched: u64,
        /// Rows the selection holds.
        cap: u64,
    },
    /// A VA of the call is not mapped in the caller's address space
    /// (a DataFrame or selection freed, or from another session's PID).
    #[error("a column or output of the call is not mapped in this address space")]
    Unmapped,
    /// The caller may not read or write a VA of the call.
    #[error("no permission for a column or output of the call")]
    Permission,
    /// A selection names a row past its column.
    #[error("a selection names a row past the column")]
    BadRow,
    /// The memory node has no Clio-DF offload under the id used.
    #[error("no Clio-DF offload at the memory node (offload id {0})")]
    NoOffload(u32),
    /// The offload faulted at the memory node (it keeps serving).
    #[error("the DataFrame offload faulted at the memory node")]
    Fault,
    /// The offload refused the call with a code this client does not
    /// know, or found the arguments malformed.
    #[error("the DataFrame offload refused the call (code {0})")]
    Refused(u16),
    /// The offload answered with a result of the wrong size.
    #[error("result of {0} bytes from the DataFrame offload")]
    BadResult(usize),
    /// Transport or board error.
    #[error(transparent)]
    Clio(ClioError),
}

impl DfError {
    fn from_clio(e: ClioError, offload: u32) -> DfError {
        match e {
            ClioError::NoSuchOffload { .. } => DfError::NoOffload(offload),
            ClioError::OffloadFault { .. } => DfError::Fault,
            ClioError::OffloadRefused { code, .. } => match code {
                proto::code::UNMAPPED => DfError::Unmapped,
                proto::code::PERMISSION => DfError::Permission,
                proto::code::BAD_ROW => DfError::BadRow,
                c => DfError::Refused(c),
            },
            e => DfError::Clio(e),
        }
    }
}

impl From<ClioError> for DfError {
    fn from(e: ClioError) -> Self {
        DfError::Clio(e)
    }
}

/// One column in remote memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// VA of row 0 (rows are `u64` LE, 8 bytes apart).
    pub va: u64,
}

/// A table of equally long `u64` columns in the caller's remote memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFrame {
    rows: u64,
    columns: Vec<Column>,
}

impl DataFrame {
    /// Rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The column `name`.
    pub fn column(&self, name: &str) -> Result<&Column, DfError> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| DfError::NoColumn(name.to_string()))
    }

    /// Bytes the columns take.
    pub fn bytes(&self) -> u64 {
        self.rows * 8 * self.columns.len() as u64
    }
}

/// The result of a `select`, in the caller's remote memory: the matching
/// rows' indices and, with a projection, the projected values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    matched: u64,
    written: u64,
    cap: u64,
    rows_va: u64,
    values_va: Option<u64>,
}

impl Selection {
    /// Rows that matched (all of them were written: a selection too small
    /// for them is an error).
    pub fn matched(&self) -> u64 {
        self.matched
    }

    /// VA of the row indices (`u32` LE, ascending).
    pub fn rows_va(&self) -> u64 {
        self.rows_va
    }

    /// VA of the projected values (`u64` LE), if the select projected.
    pub fn values_va(&self) -> Option<u64> {
        self.values_va
    }
}

/// Count, sum, min and max of a column or of selected rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aggregate {
    /// Values aggregated.
    pub count: u64,
    /// Their exact sum.
    pub sum: u128,
    /// The least (0 when `count` is 0).
    pub min: u64,
    /// The greatest (0 when `count` is 0).
    pub max: u64,
}

impl Aggregate {
    /// The mean (`None` over no values).
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Aggregate `values` at the compute node (the baseline, and a check).
    pub fn of(values: impl IntoIterator<Item = u64>) -> Aggregate {
        let mut a = Aggregate {
            min: u64::MAX,
            ..Aggregate::default()
        };
        for x in values {
            a.count += 1;
            a.sum += u128::from(x);
            a.min = a.min.min(x);
            a.max = a.max.max(x);
        }
        if a.count == 0 {
            a.min = 0;
        }
        a
    }
}

fn check_columns(columns: &[(&str, &[u64])]) -> Result<u64, DfError> {
    let Some((_, first)) = columns.first() else {
        return Err(DfError::BadColumns("no column given".into()));
    };
    let rows = first.len() as u64;
    for (i, (name, c)) in columns.iter().enumerate() {
        if c.len() as u64 != rows {
            return Err(DfError::BadColumns(format!(
                "column '{name}' has {} rows, '{}' has {rows}",
                c.len(),
                columns[0].0
            )));
        }
        if columns[..i].iter().any(|(n, _)| n == name) {
            return Err(DfError::BadColumns(format!("column '{name}' given twice")));
        }
    }
    if rows > proto::MAX_ROWS {
        return Err(DfError::TooManyRows { rows });
    }
    Ok(rows)
}

fn le_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn select_args(
    df: &DataFrame,
    column: &str,
    pred: Predicate,
    project: Option<&str>,
    cap: u64,
    out: (u64, Option<u64>),
) -> Result<proto::Select, DfError> {
    let col = df.column(column)?.va;
    let project = match project {
        Some(p) => df.column(p)?.va,
        None => 0,
    };
    let (predicate, lo, hi) = pred.wire();
    if predicate == proto::pred::BETWEEN && lo > hi {
        return Err(DfError::BadPredicate(pred));
    }
    Ok(proto::Select {
        column: col,
        rows: df.rows,
        predicate,
        lo,
        hi,
        project,
        out_rows: out.0,
        out_values: out.1.unwrap_or(0),
        cap,
    })
}

fn selection_of(r: &[u8], cap: u64, out: (u64, Option<u64>)) -> Result<Selection, DfError> {
    let (matched, written) = proto::select_result(r).ok_or(DfError::BadResult(r.len()))?;
    if matched > written {
        return Err(DfError::SelectionFull { matched, cap });
    }
    Ok(Selection {
        matched,
        written,
        cap,
        rows_va: out.0,
        values_va: out.1,
    })
}

fn aggregate_of(r: &[u8]) -> Result<Aggregate, DfError> {
    let (count, sum, min, max) = proto::aggregate_result(r).ok_or(DfError::BadResult(r.len()))?;
    Ok(Aggregate {
        count,
        sum,
        min,
        max,
    })
}

/// A blocking Clio-DF client over one SDK session: the DataFrames live in
/// its address space, and the offload works in that same space.
#[derive(Debug)]
pub struct DfClient<T: Transport> {
    session: Session<T>,
    offload: u32,
}

impl<T: Transport> DfClient<T> {
    /// A client of the offload at [`OFFLOAD_ID`] on `session`'s memory node.
    pub fn new(session: Session<T>) -> Self {
        Self::with_offload(session, OFFLOAD_ID)
    }

    /// [`DfClient::new`] for an offload registered under another id.
    pub fn with_offload(session: Session<T>, offload: u32) -> Self {
        DfClient { session, offload }
    }

    /// The session (e.g. for its statistics).
    pub fn session(&self) -> &Session<T> {
        &self.session
    }

    /// The session, mutable (e.g. to write a column in place).
    pub fn session_mut(&mut self) -> &mut Session<T> {
        &mut self.session
    }

    fn call(&mut self, op: u16, args: &[u8]) -> Result<Vec<u8>, DfError> {
        self.session
            .offload_call(self.offload, op, args)
            .map_err(|e| DfError::from_clio(e, self.offload))
    }

    /// Write `columns` (equally long) into newly allocated remote memory.
    pub fn upload(&mut self, columns: &[(&str, &[u64])]) -> Result<DataFrame, DfError> {
        let rows = check_columns(columns)?;
        let mut out = Vec::new();
        for (name, values) in columns {
            let a = self.session.ralloc((rows * 8).max(8), perms::RW)?;
            self.session.rwrite(a.va, &le_bytes(values))?;
            out.push(Column {
                name: name.to_string(),
                va: a.va,
            });
        }
        Ok(DataFrame { rows, columns: out })
    }

    /// Free a DataFrame's columns.
    pub fn free(&mut self, df: DataFrame) -> Result<(), DfError> {
        for c in df.columns {
            self.session.rfree(c.va, (df.rows * 8).max(8))?;
        }
        Ok(())
    }

    /// At the memory node: the rows of `df` whose `column` matches `pred`,
    /// with `project`'s values at them, written into a new selection of
    /// `cap` rows in this address space. More matches than `cap` is
    /// [`DfError::SelectionFull`] (the selection is freed).
    pub fn select(
        &mut self,
        df: &DataFrame,
        column: &str,
        pred: Predicate,
        project: Option<&str>,
        cap: u64,
    ) -> Result<Selection, DfError> {
        df.column(column)?;
        if let Some(p) = project {
            df.column(p)?;
        }
        let cap = cap.min(df.rows);
        let rows_va = self.session.ralloc((cap * 4).max(8), perms::RW)?.va;
        let values_va = match project {
            Some(_) => match self.session.ralloc((cap * 8).max(8), perms::RW) {
                Ok(a) => Some(a.va),
                Err(e) => {
                    let _ = self.session.rfree(rows_va, (cap * 4).max(8));
                    return Err(e.into());
                }
            },
            None => None,
        };
        let out = (rows_va, values_va);
        let r = select_args(df, column, pred, project, cap, out)
            .and_then(|a| self.call(proto::op::SELECT, &a.encode()))
            .and_then(|r| selection_of(&r, cap, out));
        if r.is_err() {
            self.free_selection(Selection {
                matched: 0,
                written: 0,
                cap,
                rows_va,
                values_va,
            })?;
        }
        r
    }

    /// Free a selection's memory.
    pub fn free_selection(&mut self, sel: Selection) -> Result<(), DfError> {
        self.session.rfree(sel.rows_va, (sel.cap * 4).max(8))?;
        if let Some(v) = sel.values_va {
            self.session.rfree(v, (sel.cap * 8).max(8))?;
        }
        Ok(())
    }

    /// At the memory node: count, sum, min and max of `column`, over every
    /// row or over the rows of `sel`.
    pub fn aggregate(
        &mut self,
        df: &DataFrame,
        column: &str,
        sel: Option<&Selection>,
    ) -> Result<Aggregate, DfError> {
        let a = proto::Aggregate {
            column: df.column(column)?.va,
            rows: df.rows,
            selection: sel.map_or(0, |s| s.rows_va),
            selected: sel.map_or(0, |s| s.written),
        };
        aggregate_of(&self.call(proto::op::AGGREGATE, &a.encode())?)
    }

    /// At the memory node: count, sum, min and max of a selection's
    /// projected values (a selection without a projection has none).
    pub fn aggregate_values(&mut self, sel: &Selection) -> Result<Aggregate, DfError> {
        let Some(va) = sel.values_va else {
            return Ok(Aggregate::default());
        };
        let a = proto::Aggregate {
            column: va,
            rows: sel.written,
            selection: 0,
            selected: 0,
        };
        aggregate_of(&self.call(proto::op::AGGREGATE, &a.encode())?)
    }

    /// Read a selection's row indices to the compute node.
    pub fn fetch_rows(&mut self, sel: &Selection) -> Result<Vec<u32>, DfError> {
        let mut b = vec![0u8; sel.written as usize * 4];
        if !b.is_empty() {
            self.session.rread(sel.rows_va, &mut b)?;
        }
        Ok(u32s(&b))
    }

    /// Read a selection's projected values to the compute node (empty
    /// without a projection).
    pub fn fetch_values(&mut self, sel: &Selection) -> Result<Vec<u64>, DfError> {
        let Some(va) = sel.values_va else {
            return Ok(Vec::new());
        };
        let mut b = vec![0u8; sel.written as usize * 8];
        if !b.is_empty() {
            self.session.rread(va, &mut b)?;
        }
        Ok(u64s(&b))
    }

    /// Read a whole column to the compute node.
    pub fn fetch_column(&mut self, df: &DataFrame, column: &str) -> Result<Vec<u64>, DfError> {
        let va = df.column(column)?.va;
        let mut b = vec![0u8; df.rows as usize * 8];
        if !b.is_empty() {
            self.session.rread(va, &mut b)?;
        }
        Ok(u64s(&b))
    }

    /// The baseline: fetch `column` (and `project`) whole and filter at the
    /// compute node; the matching rows and the projected values at them.
    pub fn select_at_cn(
        &mut self,
        df: &DataFrame,
        column: &str,
        pred: Predicate,
        project: Option<&str>,
    ) -> Result<(Vec<u32>, Vec<u64>), DfError> {
        let col = self.fetch_column(df, column)?;
        let proj = match project {
            Some(p) => Some(self.fetch_column(df, p)?),
            None => None,
        };
        let mut rows = Vec::new();
        let mut values = Vec::new();
        for (i, &x) in col.iter().enumerate() {
            if pred.matches(x) {
                rows.push(i as u32);
                if let Some(p) = &proj {
                    values.push(p[i]);
                }
            }
        }
        Ok((rows, values))
    }
}

/// A tokio Clio-DF client: the memory-node operations as futures. Each
/// waits for the session's earlier calls (`rrelease`) before it is sent,
/// so the offload sees every write the caller issued before it.
#[derive(Debug, Clone)]
pub struct AsyncDfClient {
    session: AsyncSession,
    offload: u32,
}

impl AsyncDfClient {
    /// A client of the offload at [`OFFLOAD_ID`] on `session`'s memory node.
    pub fn new(session: AsyncSession) -> Self {
        AsyncDfClient {
            session,
            offload: OFFLOAD_ID,
        }
    }

    /// The session.
    pub fn session(&self) -> &AsyncSession {
        &self.session
    }

    async fn call(&self, op: u16, args: Vec<u8>) -> Result<Vec<u8>, DfError> {
        self.session.rrelease().await?;
        self.session
            .offload_call(self.offload, op, &args)
            .await
            .map_err(|e| DfError::from_clio(e, self.offload))
    }

    /// See [`DfClient::upload`].
    pub async fn upload(&self, columns: &[(&str, &[u64])]) -> Result<DataFrame, DfError> {
        let rows = check_columns(columns)?;
        let mut out = Vec::new();
        for (name, values) in columns {
            let a = self.session.ralloc((rows * 8).max(8), perms::RW).await?;
            self.session.rwrite(a.va, &le_bytes(values)).await?;
            out.push(Column {
                name: name.to_string(),
                va: a.va,
            });
        }
        Ok(DataFrame { rows, columns: out })
    }

    /// See [`DfClient::select`].
    pub async fn select(
        &self,
        df: &DataFrame,
        column: &str,
        pred: Predicate,
        project: Option<&str>,
        cap: u64,
    ) -> Result<Selection, DfError> {
        df.column(column)?;
        if let Some(p) = project {
            df.column(p)?;
        }
        let cap = cap.min(df.rows);
        let rows_va = self.session.ralloc((cap * 4).max(8), perms::RW).await?.va;
        let values_va = match project {
            Some(_) => Some(self.session.ralloc((cap * 8).max(8), perms::RW).await?.va),
            None => None,
        };
        let out = (rows_va, values_va);
        let args = select_args(df, column, pred, project, cap, out)?;
        let r = self.call(proto::op::SELECT, args.encode()).await;
        let r = r.and_then(|r| selection_of(&r, cap, out));
        if r.is_err() {
            self.session.rfree(rows_va, (cap * 4).max(8)).await?;
            if let Some(v) = values_va {
                self.session.rfree(v, (cap * 8).max(8)).await?;
            }
        }
        r
    }

    /// See [`DfClient::aggregate`].
    pub async fn aggregate(
        &self,
        df: &DataFrame,
        column: &str,
        sel: Option<&Selection>,
    ) -> Result<Aggregate, DfError> {
        let a = proto::Aggregate {
            column: df.column(column)?.va,
            rows: df.rows,
            selection: sel.map_or(0, |s| s.rows_va),
            selected: sel.map_or(0, |s| s.written),
        };
        aggregate_of(&self.call(proto::op::AGGREGATE, a.encode()).await?)
    }

    /// See [`DfClient::fetch_values`].
    pub async fn fetch_values(&self, sel: &Selection) -> Result<Vec<u64>, DfError> {
        let Some(va) = sel.values_va else {
            return Ok(Vec::new());
        };
        if sel.written == 0 {
            return Ok(Vec::new());
        }
        Ok(u64s(&self.session.rread(va, sel.written * 8).await?))
    }
}

/// At the compute node: counts of `values` in `bins` equal bins over
/// `lo..=hi` (values outside are not counted; `bins` of 0 gives none).
pub fn histogram(values: &[u64], lo: u64, hi: u64, bins: usize) -> Vec<u64> {
    let mut h = vec![0u64; bins];
    if bins == 0 || lo > hi {
        return h;
    }
    let width = u128::from(hi - lo) + 1;
    for &x in values {
        if x < lo || x > hi {
            continue;
        }
        let b = (u128::from(x - lo) * bins as u128 / width) as usize;
        h[b] += 1;
    }
    h
}

/// At the compute node: split `values` into `parts` partitions by a hash
/// of each value (every equal value lands in the same partition, in input
/// order), e.g. to hand each partition to a worker for a group-by.
pub fn shuffle(values: &[u64], parts: usize) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new(); parts];
    if parts == 0 {
        return out;
    }
    for &x in values {
        // SplitMix64's finalizer: equal values, equal partition; nearby
        // values spread.
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        out[(z % parts as u64) as usize].push(x);
    }
    out
}
