//! Clio-MV: a multi-version object store that runs at the memory node as an
//! offload, in its own address space (dissertation seed 002, §3.6).
//!
//! - [`MvOffload`] is the store: per-object version arrays, an object-id
//!   map, a free-id list (see [`offload`] for the layout). Creating an
//!   object allocates its array and publishes the array's VA in the map;
//!   appending writes the next slot and then bumps the latest version;
//!   reading a version reads its slot, so any kept version costs what the
//!   latest does. Calls are totally ordered at the memory node, each
//!   atomic: sequential consistency per object. Register it with
//!   `Board::register_offload(OFFLOAD_ID, ..)`; `clio sim` does.
//! - [`MvClient`] (blocking) and [`AsyncMvClient`] (tokio) send
//!   `OFFLOAD_CALL`s through the SDK and turn refusals into [`MvError`]s.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use clio::{ClientConfig, Session};
//! let s = Session::open("127.0.0.1:47700".parse()?, ClientConfig::default())?;
//! let mut mv = clio_mv::MvClient::new(s);
//! let doc = mv.create(16, 64)?; // keep 16 versions of up to 64 bytes
//! assert_eq!(mv.append(doc, b"draft")?, 1);
//! assert_eq!(mv.append(doc, b"final")?, 2);
//! assert_eq!(mv.read_latest(doc)?, (2, b"final".to_vec()));
//! assert_eq!(mv.read_version(doc, 1)?, b"draft");
//! mv.delete(doc)?;
//! assert!(matches!(mv.read_latest(doc), Err(clio_mv::MvError::Deleted(_))));
//! # Ok(()) }
//! ```

pub mod offload;
pub mod proto;

use std::future::Future;

use clio::backend::Transport;
use clio::{AsyncSession, ClioError, Session};

pub use offload::MvOffload;
use proto::Call;

/// The offload id Clio-MV is registered under at a memory node.
pub const OFFLOAD_ID: u32 = clio_slowpath::offload::mv::OFFLOAD_ID;
/// Longest value of a version (bytes; a value travels in one packet), and
/// the largest version array (bytes): `16 + versions × (16 + value_size)`
/// (value size rounded up to 8) must fit one 4 MiB chunk — e.g. 4 032
/// versions of 1 KiB, 131 071 versions of 16 B (the store's limits,
/// `clio_slowpath::offload::mv`).
pub use clio_slowpath::offload::mv::{MAX_ARRAY_BYTES, MAX_VALUE};

/// An object's id: `generation << 32 | index` (ids are reused with a new
/// generation after a delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub u64);

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0 as u32, self.0 >> 32)
    }
}

/// An object's version range and shape ([`MvClient::info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The latest version (0 = none yet).
    pub latest: u64,
    /// The oldest version still kept (0 = none yet).
    pub oldest: u64,
    /// Versions kept.
    pub versions: u32,
    /// Largest value.
    pub value_size: u32,
}

/// What can go wrong with a multi-version operation.
#[derive(Debug, thiserror::Error)]
pub enum MvError {
    /// No object was ever issued under this id.
    #[error("no object {0}")]
    NoSuchObject(ObjectId),
    /// The object was deleted (read, append, or a second delete).
    #[error("object {0} was deleted")]
    Deleted(ObjectId),
    /// The version was never appended (above the latest, or none yet).
    #[error("object {id} has no version {version}")]
    NoSuchVersion {
        /// The object.
        id: ObjectId,
        /// The version asked for (0 = the latest).
        version: u64,
    },
    /// The version is older than the versions the object keeps.
    #[error("version {version} of object {id} is no longer kept")]
    VersionGone {
        /// The object.
        id: ObjectId,
        /// The version asked for.
        version: u64,
    },
    /// The value is longer than the object's value size (or [`MAX_VALUE`]).
    #[error(
        "value of {len} bytes: longer than the object's value size (the store's limit is {max})"
    )]
    ValueTooLong {
        /// Its length.
        len: usize,
        /// The store-wide limit ([`MAX_VALUE`]); an object's own may be lower.
        max: usize,
    },
    /// `create` with 0 versions, a value size of 0 or over [`MAX_VALUE`],
    /// or a version array over [`MAX_ARRAY_BYTES`].
    #[error("object shape refused: {versions} versions of {value_size} bytes (value size 1..={max_value}, array at most {max_array} bytes)", max_value = MAX_VALUE, max_array = MAX_ARRAY_BYTES)]
    BadShape {
        /// Versions asked for.
        versions: u32,
        /// Value size asked for.
        value_size: u32,
    },
    /// The store's address space is full (memory, quota, or object ids).
    #[error("store full at the memory node")]
    Full,
    /// The memory node has no Clio-MV offload under the id used.
    #[error("no Clio-MV offload at the memory node (offload id {0})")]
    NoOffload(u32),
    /// The store faulted at the memory node (it keeps serving).
    #[error("the store faulted at the memory node")]
    Fault,
    /// The store refused the call with a code this client does not know,
    /// or found the arguments malformed.
    #[error("the store refused the call (code {0})")]
    Refused(u16),
    /// The store answered with a result too short for the operation.
    #[error("short result from the store ({0} bytes)")]
    ShortResult(usize),
    /// Transport or board error.
    #[error(transparent)]
    Clio(ClioError),
}

impl MvError {
    fn from_clio(e: ClioError, offload: u32, call: &Call<'_>) -> MvError {
        let (id, version) = match *call {
            Call::Append { id, .. } | Call::Delete { id } | Call::Info { id } => (id, 0),
            Call::Read { id, version } => (id, version),
            Call::Create { .. } => (0, 0),
        };
        let id = ObjectId(id);
        match e {
            ClioError::NoSuchOffload { .. } => MvError::NoOffload(offload),
            ClioError::OffloadFault { .. } => MvError::Fault,
            ClioError::OffloadRefused { code, .. } => match (code, call) {
                (proto::code::NO_SUCH_OBJECT, _) => MvError::NoSuchObject(id),
                (proto::code::DELETED, _) => MvError::Deleted(id),
                (proto::code::NO_SUCH_VERSION, _) => MvError::NoSuchVersion { id, version },
                (proto::code::VERSION_GONE, _) => MvError::VersionGone { id, version },
                (proto::code::VALUE_TOO_LONG, Call::Append { value, .. }) => {
                    MvError::ValueTooLong {
                        len: value.len(),
                        max: MAX_VALUE,
                    }
                }
                (
                    proto::code::BAD_SHAPE,
                    Call::Create {
                        versions,
                        value_size,
                    },
                ) => MvError::BadShape {
                    versions: *versions,
                    value_size: *value_size,
                },
                (proto::code::FULL, _) => MvError::Full,
                (c, _) => MvError::Refused(c),
            },
            e => MvError::Clio(e),
        }
    }
}

/// Checks the client can make before sending (the store makes them again).
fn check(call: &Call<'_>) -> Result<(), MvError> {
    match *call {
        Call::Append { value, .. } if value.len() > MAX_VALUE => Err(MvError::ValueTooLong {
            len: value.len(),
            max: MAX_VALUE,
        }),
        Call::Create {
            versions,
            value_size,
        } if versions == 0
            || value_size == 0
            || value_size as usize > MAX_VALUE
            || offload::array_len(versions, value_size) > MAX_ARRAY_BYTES =>
        {
            Err(MvError::BadShape {
                versions,
                value_size,
            })
        }
        _ => Ok(()),
    }
}

fn u64_at(r: &[u8], at: usize) -> Result<u64, MvError> {
    proto::result_u64(r, at).ok_or(MvError::ShortResult(r.len()))
}

fn info_of(r: &[u8]) -> Result<ObjectInfo, MvError> {
    if r.len() != proto::INFO_LEN {
        return Err(MvError::ShortResult(r.len()));
    }
    Ok(ObjectInfo {
        latest: u64_at(r, 0)?,
        oldest: u64_at(r, 8)?,
        versions: proto::result_u32(r, 16).ok_or(MvError::ShortResult(r.len()))?,
        value_size: proto::result_u32(r, 20).ok_or(MvError::ShortResult(r.len()))?,
    })
}

/// A blocking Clio-MV client over one SDK session.
#[derive(Debug)]
pub struct MvClient<T: Transport> {
    session: Session<T>,
    offload: u32,
}

impl<T: Transport> MvClient<T> {
    /// A client of the store at [`OFFLOAD_ID`] on `session`'s memory node.
    pub fn new(session: Session<T>) -> Self {
        Self::with_offload(session, OFFLOAD_ID)
    }

    /// [`MvClient::new`] for a store registered under another offload id.
    pub fn with_offload(session: Session<T>, offload: u32) -> Self {
        MvClient { session, offload }
    }

    /// The session (e.g. for its statistics).
    pub fn session(&self) -> &Session<T> {
        &self.session
    }

    /// The session, mutable.
    pub fn session_mut(&mut self) -> &mut Session<T> {
        &mut self.session
    }

    fn call(&mut self, call: Call<'_>) -> Result<Vec<u8>, MvError> {
        check(&call)?;
        let (op, args) = call.encode();
        self.session
            .offload_call(self.offload, op, &args)
            .map_err(|e| MvError::from_clio(e, self.offload, &call))
    }

    /// Create an object keeping its latest `versions` versions of values of
    /// at most `value_size` bytes; it starts with no version.
    pub fn create(&mut self, versions: u32, value_size: u32) -> Result<ObjectId, MvError> {
        let r = self.call(Call::Create {
            versions,
            value_size,
        })?;
        u64_at(&r, 0).map(ObjectId)
    }

    /// Append a version; its number (1 for the first).
    pub fn append(&mut self, id: ObjectId, value: &[u8]) -> Result<u64, MvError> {
        let r = self.call(Call::Append { id: id.0, value })?;
        u64_at(&r, 0)
    }

    /// The latest version and its value.
    pub fn read_latest(&mut self, id: ObjectId) -> Result<(u64, Vec<u8>), MvError> {
        let mut r = self.call(Call::Read {
            id: id.0,
            version: 0,
        })?;
        let v = u64_at(&r, 0)?;
        Ok((v, r.split_off(8)))
    }

    /// The value of version `version` (1 = the first).
    pub fn read_version(&mut self, id: ObjectId, version: u64) -> Result<Vec<u8>, MvError> {
        if version == 0 {
            return Err(MvError::NoSuchVersion { id, version });
        }
        let mut r = self.call(Call::Read { id: id.0, version })?;
        u64_at(&r, 0)?;
        Ok(r.split_off(8))
    }

    /// Delete the object (every version).
    pub fn delete(&mut self, id: ObjectId) -> Result<(), MvError> {
        self.call(Call::Delete { id: id.0 }).map(drop)
    }

    /// The object's version range and shape.
    pub fn info(&mut self, id: ObjectId) -> Result<ObjectInfo, MvError> {
        info_of(&self.call(Call::Info { id: id.0 })?)
    }
}

/// A tokio Clio-MV client: each call is submitted when made, so several
/// outstanding calls pipeline (cheap to clone). Calls not awaited in turn
/// may reach the store in any order; await each one for program order.
#[derive(Debug, Clone)]
pub struct AsyncMvClient {
    session: AsyncSession,
    offload: u32,
}

impl AsyncMvClient {
    /// A client of the store at [`OFFLOAD_ID`] on `session`'s memory node.
    pub fn new(session: AsyncSession) -> Self {
        AsyncMvClient {
            session,
            offload: OFFLOAD_ID,
        }
    }

    fn call(&self, call: Call<'_>) -> impl Future<Output = Result<Vec<u8>, MvError>> {
        let offload = self.offload;
        // Owned copies of what the error mapping needs.
        let (op, args) = call.encode();
        let f = check(&call).map(|()| self.session.offload_call(offload, op, &args));
        let err_args = args.clone();
        async move {
            f?.await.map_err(|e| {
                let call = Call::decode(op, &err_args).unwrap_or(Call::Delete { id: 0 });
                MvError::from_clio(e, offload, &call)
            })
        }
    }

    /// See [`MvClient::create`].
    pub fn create(
        &self,
        versions: u32,
        value_size: u32,
    ) -> impl Future<Output = Result<ObjectId, MvError>> {
        let f = self.call(Call::Create {
            versions,
            value_size,
        });
        async move { u64_at(&f.await?, 0).map(ObjectId) }
    }

    /// See [`MvClient::append`].
    pub fn append(&self, id: ObjectId, value: &[u8]) -> impl Future<Output = Result<u64, MvError>> {
        let f = self.call(Call::Append { id: id.0, value });
        async move { u64_at(&f.await?, 0) }
    }

    /// See [`MvClient::read_latest`].
    pub fn read_latest(
        &self,
        id: ObjectId,
    ) -> impl Future<Output = Result<(u64, Vec<u8>), MvError>> {
        let f = self.call(Call::Read {
            id: id.0,
            version: 0,
        });
        async move {
            let mut r = f.await?;
            let v = u64_at(&r, 0)?;
            Ok((v, r.split_off(8)))
        }
    }

    /// See [`MvClient::read_version`].
    pub fn read_version(
        &self,
        id: ObjectId,
        version: u64,
    ) -> impl Future<Output = Result<Vec<u8>, MvError>> {
        let f = (version != 0).then(|| self.call(Call::Read { id: id.0, version }));
        async move {
            let Some(f) = f else {
                return Err(MvError::NoSuchVersion { id, version });
            };
            let mut r = f.await?;
            u64_at(&r, 0)?;
            Ok(r.split_off(8))
        }
    }

    /// See [`MvClient::delete`].
    pub fn delete(&self, id: ObjectId) -> impl Future<Output = Result<(), MvError>> {
        let f = self.call(Call::Delete { id: id.0 });
        async move { f.await.map(drop) }
    }

    /// See [`MvClient::info`].
    pub fn info(&self, id: ObjectId) -> impl Future<Output = Result<ObjectInfo, MvError>> {
        let f = self.call(Call::Info { id: id.0 });
        async move { info_of(&f.await?) }
    }
}
