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
pub const OFFLOAD_ID: u32 = 1;
/// Longest key (bytes; memcached's limit).
pub const MAX_KEY: usize = 250;
/// Longest value (bytes): a key and value travel in one packet.
pub const MAX_VALUE: usize = 1024;

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
    fn from_clio(e: ClioError, offload: u32) -> KvError {
        match e {
            ClioError::NoSuchOffload { .. } => KvError::NoOffload(offload),
            ClioError::OffloadFault { .. } => KvError::Fault,
            ClioError::OffloadRefused { code, .. } => match code {
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
            },
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
        })
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
}
