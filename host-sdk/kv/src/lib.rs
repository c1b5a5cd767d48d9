//! Clio-KV: a key-value store that runs at the memory node as an offload,
//! in its own address space (dissertation seed 002, §3.6).
//!
//! - [`KvOffload`] is the store: chained hash buckets of slots holding seven
//!   fingerprints and object VAs each, objects written in full before they
//!   are published with one compare-and-swap (atomic writes, read-committed
//!   reads). It reaches its memory through the board's ordinary virtual
//!   memory interface under its own session (see `clio_emu::offload`).
//!   Register it with `Board::register_offload(OFFLOAD_ID, ..)`; `clio sim`
//!   does.
//! - [`KvClient`] (blocking) and [`AsyncKvClient`] (tokio, calls pipeline)
//!   send `OFFLOAD_CALL`s through the SDK; a [`Partitioner`] spreads keys
//!   over memory nodes (jump consistent hash), so every request for a key
//!   goes to the same node.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use clio::{ClientConfig, Session};
//! let s = Session::open("127.0.0.1:47700".parse()?, ClientConfig::default())?;
//! let mut kv = clio_kv::KvClient::new(vec![s])?;
//! kv.create(b"user:1", b"alice")?;
//! assert_eq!(kv.read(b"user:1")?, b"alice");
//! kv.update(b"user:1", b"bob")?;
//! kv.delete(b"user:1")?;
//! assert!(matches!(kv.read(b"user:1"), Err(clio_kv::KvError::NotFound)));
//! # Ok(()) }
//! ```

pub mod offload;
pub mod proto;

use clio::backend::Transport;
use clio::{AsyncSession, ClioError, Session};

pub use offload::KvOffload;

/// The offload id Clio-KV is registered under at a memory node.
pub const OFFLOAD_ID: u32 = clio_slowpath::offload::kv::OFFLOAD_ID;
/// Longest key (bytes; memcached's limit).
pub const MAX_KEY: usize = clio_slowpath::offload::kv::MAX_KEY;
/// Longest value (bytes): a key and value travel in one packet.
pub const MAX_VALUE: usize = clio_slowpath::offload::kv::MAX_VALUE;

/// What can go wrong with a key-value operation.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// The key is empty or longer than [`MAX_KEY`].
    #[error("key of {len} bytes: keys are 1..={max} bytes")]
    KeyTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The value is longer than [`MAX_VALUE`].
    #[error("value of {len} bytes: values are at most {max} bytes")]
    ValueTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// No such key (read, update, delete).
    #[error("no such key")]
    NotFound,
    /// The key exists already (create).
    #[error("key exists")]
    Exists,
    /// The store's address space is full (memory or quota).
    #[error("store full at the memory node")]
    Full,
    /// The memory node has no Clio-KV offload under the id used.
    #[error("no Clio-KV offload at the memory node (offload id {0})")]
    NoOffload(u32),
    /// The store faulted at the memory node (it keeps serving).
    #[error("the store faulted at the memory node")]
    Fault,
    /// The store refused the call with a code this client does not know,
    /// or found the arguments malformed.
    #[error("the store refused the call (code {0})")]
    Refused(u16),
    /// A partitioner over no nodes.
    #[error("no memory nodes given")]
    NoNodes,
    /// Transport or board error.
    #[error(transparent)]
    Clio(ClioError),
}

impl KvError {
    /// The error of a refusal `code` of the store.
    fn from_code(code: u16) -> KvError {
        match code {
            proto::code::NOT_FOUND => KvError::NotFound,
            proto::code::EXISTS => KvError::Exists,
            proto::code::FULL => KvError::Full,
            proto::code::KEY_TOO_LONG => KvError::KeyTooLong {
                len: 0,
                max: MAX_KEY,
            },
            proto::code::VALUE_TOO_LONG => KvError::ValueTooLong {
                len: 0,
                max: MAX_VALUE,
            },
            c => KvError::Refused(c),
        }
    }

    fn from_clio(e: ClioError, offload: u32) -> KvError {
        match e {
            ClioError::NoSuchOffload { .. } => KvError::NoOffload(offload),
            ClioError::OffloadFault { .. } => KvError::Fault,
            ClioError::OffloadRefused { code, .. } => KvError::from_code(code),
            e => KvError::Clio(e),
        }
    }
}

fn check(key: &[u8], value: &[u8]) -> Result<(), KvError> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(KvError::KeyTooLong {
            len: key.len(),
            max: MAX_KEY,
        });
    }
    if value.len() > MAX_VALUE {
        return Err(KvError::ValueTooLong {
            len: value.len(),
            max: MAX_VALUE,
        });
    }
    Ok(())
}

/// One operation of a batch ([`KvClient::batch`], [`AsyncKvClient::batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvOp<'a> {
    /// Insert a key that must not exist: key, value.
    Create(&'a [u8], &'a [u8]),
    /// Replace the value of a key that must exist: key, value.
    Update(&'a [u8], &'a [u8]),
    /// Insert or replace: key, value.
    Put(&'a [u8], &'a [u8]),
    /// Read a key's value.
    Read(&'a [u8]),
    /// Remove a key that must exist.
    Delete(&'a [u8]),
}

impl<'a> KvOp<'a> {
    fn parts(&self) -> (u16, &'a [u8], &'a [u8]) {
        match *self {
            KvOp::Create(k, v) => (proto::op::CREATE, k, v),
            KvOp::Update(k, v) => (proto::op::UPDATE, k, v),
            KvOp::Put(k, v) => (proto::op::PUT, k, v),
            KvOp::Read(k) => (proto::op::READ, k, &[]),
            KvOp::Delete(k) => (proto::op::DELETE, k, &[]),
        }
    }
}

/// What one operation of a batch came to: a read's value (empty for the
/// other operations), or its own error.
pub type KvResult = Result<Vec<u8>, KvError>;

/// One `OFFLOAD_CALL` of a batch: its node, its arguments and which of the
/// batch's operations it carries.
struct BatchCall {
    node: usize,
    args: Vec<u8>,
    ops: Vec<usize>,
    /// Most bytes its operations' outcomes can take in the answer.
    answer: usize,
}

/// Pack `ops` into batch calls, as many operations per call as fit one
/// request packet (so jumbo frames carry more) and keep the answer within
/// the board's response bound (`mtu`, `max_resp` of the board's INFO); operations over the limits get
/// their error in `results` and are not sent.
fn pack(
    part: &Partitioner,
    ops: &[KvOp<'_>],
    mtu: usize,
    max_resp: usize,
    results: &mut [Option<KvResult>],
) -> Vec<BatchCall> {
    use clio_wire::payload::{
        OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp, OFFLOAD_BATCH_MAX_OPS,
    };
    let room = mtu - OffloadCallReq::LEN;
    // The board refuses a batch whose answer could outgrow its bound, each
    // result counted at its most (`proto::max_result`, the store declares
    // the same), at most one packet's worth.
    let answer_room = max_resp.saturating_sub(OffloadCallResp::LEN + OffloadBatchReq::LEN);
    let answer_of = |code: u16| {
        OffloadBatchResult::LEN + proto::max_result(code).min(mtu - OffloadCallResp::LEN)
    };
    let mut open: Vec<Option<BatchCall>> = (0..part.nodes()).map(|_| None).collect();
    let mut calls = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let (code, key, value) = op.parts();
        if let Err(e) = check(key, value) {
            results[i] = Some(Err(e));
            continue;
        }
        let node = part.node_of(key);
        let need = proto::batch_op_len(key, value);
        let answer = answer_of(code);
        let full = open[node].as_ref().is_some_and(|c| {
            c.args.len() + need > room
                || c.answer + answer > answer_room
                || c.ops.len() == OFFLOAD_BATCH_MAX_OPS
        });
        if full {
            calls.extend(open[node].take());
        }
        let c = open[node].get_or_insert_with(|| BatchCall {
            node,
            args: Vec::with_capacity(room),
            ops: Vec::new(),
            answer: 0,
        });
        if c.ops.is_empty() {
            c.args.extend_from_slice(&[0; OffloadBatchReq::LEN]);
        }
        proto::encode_batch_op(&mut c.args, code, key, value);
        c.ops.push(i);
        c.answer += answer;
    }
    calls.extend(open.into_iter().flatten());
    for c in &mut calls {
        let n = OffloadBatchReq {
            count: c.ops.len() as u16,
        };
        c.args[..OffloadBatchReq::LEN].copy_from_slice(&n.to_bytes());
    }
    calls
}

/// Spread a batch call's answer over its operations' results.
fn unpack(
    call: &BatchCall,
    answer: Result<Vec<u8>, ClioError>,
    offload: u32,
    results: &mut [Option<KvResult>],
) -> Result<(), KvError> {
    use clio_wire::payload::{OffloadBatchReq, OffloadBatchResult};
    use clio_wire::Status;
    let answer = answer.map_err(|e| KvError::from_clio(e, offload))?;
    let bad = |field: &'static str| {
        KvError::Clio(ClioError::Protocol {
            op: clio::OpKind::OffloadCall,
            field,
        })
    };
    let n = OffloadBatchReq::parse(&answer).map_err(|e| bad(e.field))?;
    if n.count as usize != call.ops.len() {
        return Err(bad("offload_batch_req.count"));
    }
    let mut rest = &answer[OffloadBatchReq::LEN..];
    for &i in &call.ops {
        let (r, value, tail) =
            OffloadBatchResult::parse_with_result(rest).map_err(|e| bad(e.field))?;
        rest = tail;
        results[i] = Some(match r.status {
            Status::Ok => Ok(value.to_vec()),
            Status::OffloadRefused => Err(KvError::from_code(r.code)),
            _ => Err(KvError::Fault),
        });
    }
    if !rest.is_empty() {
        return Err(bad("offload_batch_result.len"));
    }
    Ok(())
}

/// Whether no key is in two of `calls` (their operations' keys in `ops`).
fn keys_apart(calls: &[BatchCall], ops: &[KvOp<'_>]) -> bool {
    let mut seen = std::collections::HashMap::new();
    calls.iter().enumerate().all(|(ci, c)| {
        c.ops
            .iter()
            .all(|&i| *seen.entry(ops[i].parts().1).or_insert(ci) == ci)
    })
}

/// The board's MTU and response bound as its INFO states them (the
/// emulated board's defaults when it stated none).
fn limits(info: Option<&clio_wire::payload::InfoResp>) -> (usize, usize) {
    let mtu = info.map_or(1450, |i| usize::from(i.mtu)).max(64);
    let max_resp = info
        .and_then(|i| i.max_resp_bytes())
        .map_or(64 << 10, |b| b as usize);
    (mtu, max_resp)
}

/// Which memory node holds a key: jump consistent hash (Lamping and Veach)
/// of the key's hash, so adding a node moves only 1/n of the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partitioner {
    nodes: u32,
}

impl Partitioner {
    /// Over `nodes` memory nodes (at least 1).
    pub fn new(nodes: usize) -> Result<Partitioner, KvError> {
        if nodes == 0 {
            return Err(KvError::NoNodes);
        }
        Ok(Partitioner {
            nodes: nodes.min(u32::MAX as usize) as u32,
        })
    }

    /// Nodes partitioned over.
    pub fn nodes(&self) -> usize {
        self.nodes as usize
    }

    /// The node of `key`.
    pub fn node_of(&self, key: &[u8]) -> usize {
        // Another seed than the store's bucket hash: node and bucket choice
        // stay independent.
        let mut k = proto::hash(key) ^ 0x9e37_79b9_7f4a_7c15;
        let (mut b, mut j) = (-1i64, 0i64);
        while j < i64::from(self.nodes) {
            b = j;
            k = k.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
            j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((k >> 33) + 1) as f64)) as i64;
        }
        b as usize
    }
}

/// A blocking Clio-KV client over one SDK session per memory node.
#[derive(Debug)]
pub struct KvClient<T: Transport> {
    nodes: Vec<Session<T>>,
    part: Partitioner,
    offload: u32,
    /// Whether [`KvClient::batch`] keeps its calls in flight together.
    pipelined: bool,
}

impl<T: Transport> KvClient<T> {
    /// A client over `nodes` (one open session per memory node, in a fixed
    /// order every client of the store uses).
    pub fn new(nodes: Vec<Session<T>>) -> Result<Self, KvError> {
        Self::with_offload(nodes, OFFLOAD_ID)
    }

    /// [`KvClient::new`] for a store registered under another offload id.
    pub fn with_offload(nodes: Vec<Session<T>>, offload: u32) -> Result<Self, KvError> {
        let part = Partitioner::new(nodes.len())?;
        Ok(KvClient {
            nodes,
            part,
            offload,
            pipelined: true,
        })
    }

    /// Whether [`KvClient::batch`] sends every call of a batch before
    /// waiting for the first (the default), or waits for each call before
    /// sending the next.
    pub fn set_pipelined(&mut self, on: bool) {
        self.pipelined = on;
    }

    /// The sessions (e.g. for their statistics).
    pub fn sessions(&self) -> &[Session<T>] {
        &self.nodes
    }

    /// The sessions, mutable.
    pub fn sessions_mut(&mut self) -> &mut [Session<T>] {
        &mut self.nodes
    }

    fn call(&mut self, op: u16, key: &[u8], value: &[u8]) -> Result<Vec<u8>, KvError> {
        check(key, value)?;
        let n = self.part.node_of(key);
        let args = proto::encode(key, value);
        self.nodes[n]
            .offload_call(self.offload, op, &args)
            .map_err(|e| KvError::from_clio(e, self.offload))
    }

    /// Insert `key` (it must not exist).
    pub fn create(&mut self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        self.call(proto::op::CREATE, key, value).map(drop)
    }

    /// Replace the value of `key` (it must exist).
    pub fn update(&mut self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        self.call(proto::op::UPDATE, key, value).map(drop)
    }

    /// Insert or replace.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        self.call(proto::op::PUT, key, value).map(drop)
    }

    /// The value of `key`.
    pub fn read(&mut self, key: &[u8]) -> Result<Vec<u8>, KvError> {
        self.call(proto::op::READ, key, &[])
    }

    /// Remove `key` (it must exist).
    pub fn delete(&mut self, key: &[u8]) -> Result<(), KvError> {
        self.call(proto::op::DELETE, key, &[]).map(drop)
    }

    /// Run `ops` with batch calls: as many operations per `OFFLOAD_CALL` as
    /// fit one request packet (per memory node). The calls are in flight
    /// together when no key appears in two of them (pipelined, the
    /// default: calls in flight together are not ordered among themselves
    /// on a lossy link), else each is waited for before the next is sent,
    /// so operations on one key always run in the order given. One result
    /// per operation, in order, each with its own error (a missing key
    /// fails only its own operation); `Err` when a call failed as a whole
    /// (transport, no store at the node).
    pub fn batch(&mut self, ops: &[KvOp<'_>]) -> Result<Vec<KvResult>, KvError> {
        use clio_wire::payload::OFFLOAD_OP_BATCH;
        let mut results: Vec<Option<KvResult>> = (0..ops.len()).map(|_| None).collect();
        let (mtu, max_resp) = limits(self.nodes[0].board_info());
        let calls = pack(&self.part, ops, mtu, max_resp, &mut results);
        if self.pipelined && calls.len() > 1 && keys_apart(&calls, ops) {
            let mut started = Vec::with_capacity(calls.len());
            for c in &calls {
                started.push(self.nodes[c.node].offload_call_async(
                    self.offload,
                    OFFLOAD_OP_BATCH,
                    &c.args,
                ));
            }
            // Every call is waited for (none left in flight), the first
            // error reported.
            let mut first_err = None;
            for (c, h) in calls.iter().zip(started) {
                let a = h.and_then(|h| self.nodes[c.node].offload_wait(h));
                if let Err(e) = unpack(c, a, self.offload, &mut results) {
                    first_err.get_or_insert(e);
                }
            }
            if let Some(e) = first_err {
                return Err(e);
            }
        } else {
            for c in &calls {
                let a = self.nodes[c.node].offload_call(self.offload, OFFLOAD_OP_BATCH, &c.args);
                unpack(c, a, self.offload, &mut results)?;
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.unwrap_or(Err(KvError::Fault)))
            .collect())
    }
}

/// A tokio Clio-KV client: each call is submitted when made, so several
/// outstanding calls pipeline on the sessions (cheap to clone).
#[derive(Debug, Clone)]
pub struct AsyncKvClient {
    nodes: Vec<AsyncSession>,
    part: Partitioner,
    offload: u32,
}

impl AsyncKvClient {
    /// A client over `nodes` (one open session per memory node).
    pub fn new(nodes: Vec<AsyncSession>) -> Result<Self, KvError> {
        let part = Partitioner::new(nodes.len())?;
        Ok(AsyncKvClient {
            nodes,
            part,
            offload: OFFLOAD_ID,
        })
    }

    fn call(
        &self,
        op: u16,
        key: &[u8],
        value: &[u8],
    ) -> impl std::future::Future<Output = Result<Vec<u8>, KvError>> {
        let offload = self.offload;
        let f = check(key, value).map(|()| {
            let n = self.part.node_of(key);
            self.nodes[n].offload_call(offload, op, &proto::encode(key, value))
        });
        async move { f?.await.map_err(|e| KvError::from_clio(e, offload)) }
    }

    /// Insert `key` (it must not exist).
    pub fn create(
        &self,
        key: &[u8],
        value: &[u8],
    ) -> impl std::future::Future<Output = Result<(), KvError>> {
        let f = self.call(proto::op::CREATE, key, value);
        async move { f.await.map(drop) }
    }

    /// Replace the value of `key` (it must exist).
    pub fn update(
        &self,
        key: &[u8],
        value: &[u8],
    ) -> impl std::future::Future<Output = Result<(), KvError>> {
        let f = self.call(proto::op::UPDATE, key, value);
        async move { f.await.map(drop) }
    }

    /// Insert or replace.
    pub fn put(
        &self,
        key: &[u8],
        value: &[u8],
    ) -> impl std::future::Future<Output = Result<(), KvError>> {
        let f = self.call(proto::op::PUT, key, value);
        async move { f.await.map(drop) }
    }

    /// The value of `key`.
    pub fn read(&self, key: &[u8]) -> impl std::future::Future<Output = Result<Vec<u8>, KvError>> {
        self.call(proto::op::READ, key, &[])
    }

    /// Remove `key` (it must exist).
    pub fn delete(&self, key: &[u8]) -> impl std::future::Future<Output = Result<(), KvError>> {
        let f = self.call(proto::op::DELETE, key, &[]);
        async move { f.await.map(drop) }
    }

    /// [`KvClient::batch`], with every batch call submitted at once (they
    /// pipeline): submitted when called.
    pub fn batch(
        &self,
        ops: &[KvOp<'_>],
    ) -> impl std::future::Future<Output = Result<Vec<KvResult>, KvError>> {
        let mut results: Vec<Option<KvResult>> = (0..ops.len()).map(|_| None).collect();
        let (mtu, max_resp) = limits(Some(self.nodes[0].board_info()));
        let calls = pack(&self.part, ops, mtu, max_resp, &mut results);
        let offload = self.offload;
        let futs: Vec<_> = calls
            .iter()
            .map(|c| {
                self.nodes[c.node].offload_call(
                    offload,
                    clio_wire::payload::OFFLOAD_OP_BATCH,
                    &c.args,
                )
            })
            .collect();
        async move {
            for (c, f) in calls.iter().zip(futs) {
                unpack(c, f.await, offload, &mut results)?;
            }
            Ok(results
                .into_iter()
                .map(|r| r.unwrap_or(Err(KvError::Fault)))
                .collect())
        }
    }
}
