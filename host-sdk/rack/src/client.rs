//! The SDK side of the rack: one address space over many memory nodes.
//!
//! A [`RackClient`] holds one `clio` [`Session`] per memory node it uses (opened on
//! first use), asks the controller for vRegions on [`RackClient::ralloc`], and
//! routes every call by rack VA: region = `va >> 30`, then the region's owner from
//! its cache. Inside a region, memory is taken from the owner in [`CHUNK`]-sized
//! board allocations on first touch (the node manages its regions at page
//! granularity; a 1 GiB region costs a node only what is touched), so an
//! allocation larger than one node's memory or one vRegion works as long as what
//! is touched fits. Requests that cross a chunk (hence a region) boundary are
//! split. A `MOVED` answer (the region migrated) makes the client look the region
//! up again; the normal path never asks the controller. [`RackClient::rfence`] and
//! [`RackClient::rrelease`] wait on every node this client has a session with, so
//! the ordering rules hold across nodes.
//!
//! [`RackClient::migrate`] moves a region to another node: gate the source
//! `Tracking` (everything served, changes recorded per 64 KiB block), copy each
//! chunk through sessions that join the client's address spaces, re-copy the
//! dirty blocks in rounds while writes go on, pause the source's writes (`BUSY`,
//! reads served) for a last round only ([`CopyPolicy`]), switch the owner at the
//! controller (the commit point, one logged change), point the cache at the
//! copy, then gate the source `MOVED` and free it. A failure before the switch rolls back (source
//! reopened, copies freed); a lost answer to the switch is resolved by a lookup.
//! Writers on other threads of the same client retry `BUSY` and follow `MOVED`,
//! so no acknowledged write is lost.
//!
//! The client is `Sync`: threads share it; each node's session is used by one
//! thread at a time.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use clio::backend::Transport;
use clio::{ClientConfig, ClioError, Session, ShareToken};
use clio_control::{
    ErrorCode, Field, GateState, Message, MigrationKind, MigrationOutcome, NodeId, Placement,
    Replicas, Space, DIRTY_BLOCK, VREGION_BYTES, VREGION_SHIFT,
};

use crate::config::RackConfig;
use crate::service::Client;

/// Bytes a node allocates for a region at a time, on first touch.
pub const CHUNK: u64 = 4 << 20;

/// Largest piece one board request carries: larger calls (and migration copies)
/// are split, so a read's answer stays within what a board streams back at once.
pub const MAX_PIECE: u64 = 64 << 10;

/// Allocations up to this size are carved out of a vRegion this client already
/// holds (no controller round trip); larger ones get whole regions of their own.
pub const ARENA_MAX: u64 = 64 << 20;

/// Alignment of allocations carved out of a held region.
pub const ARENA_ALIGN: u64 = 64;

/// Lock stripes that order writes to the two copies of a replicated region
/// (one stripe per chunk, hashed).
const STRIPES: usize = 64;

/// How long a call keeps following `BUSY` (a migration in progress) and `MOVED`
/// before it gives up.
pub const FOLLOW_FOR: Duration = Duration::from_secs(10);

/// Why a rack call failed.
#[derive(Debug, thiserror::Error)]
pub enum RackClientError {
    /// The controller did not answer (or the socket failed).
    #[error("rack controller {addr}: {source}")]
    Controller {
        /// Its address.
        addr: SocketAddr,
        /// What happened.
        source: io::Error,
    },
    /// The controller refused the request.
    #[error("rack controller {addr} refused: {code} ({field})", field = field.name())]
    Refused {
        /// Its address.
        addr: SocketAddr,
        /// Why.
        code: ErrorCode,
        /// The field at fault.
        field: Field,
    },
    /// A memory node failed the call.
    #[error("memory node {node} ({addr}): {source}")]
    Node {
        /// Its id.
        node: NodeId,
        /// Its address.
        addr: SocketAddr,
        /// The SDK's error.
        source: ClioError,
    },
    /// A memory node's control port did not answer a control message (a gate,
    /// a chunk binding, an address-space lookup) as expected.
    #[error("memory node {node} ({addr}) control: {source}")]
    Gate {
        /// Its id.
        node: NodeId,
        /// Its address.
        addr: SocketAddr,
        /// What happened.
        source: io::Error,
    },
    /// The VA lies in no region this client allocated.
    #[error("rack address {va:#x} is not allocated by this client")]
    Unallocated {
        /// The VA.
        va: u64,
    },
    /// The controller names an owner this client cannot use.
    #[error("region {region}: owner node {node} is not in the rack file")]
    UnknownNode {
        /// vRegion.
        region: u32,
        /// The node id.
        node: NodeId,
    },
    /// The region moved to a node where this client has no copy of it (another
    /// client migrated it; their translation is theirs).
    #[error("region {region} moved to node {node}, which this client did not copy it to")]
    MovedAway {
        /// vRegion.
        region: u32,
        /// New owner.
        node: NodeId,
    },
    /// A caller argument is invalid.
    #[error("invalid argument {what}: {reason}")]
    InvalidArgument {
        /// Parameter.
        what: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// The region gained a backup while a single-copy change was on its way
    /// (internal: the client sends the change again to both copies; never
    /// returned by a public call).
    #[error("region {region}: gained a backup; sent again to both copies")]
    Rejoined {
        /// vRegion.
        region: u32,
    },
    /// The region kept answering `BUSY`/`MOVED` for [`FOLLOW_FOR`].
    #[error("region {region}: still moving after {FOLLOW_FOR:?}")]
    StillMoving {
        /// vRegion.
        region: u32,
    },
}

/// How a client reaches memory nodes: sessions (UDP or in process) and the gate.
pub trait Links<T: Transport>: Send + Sync {
    /// Opens a session to node `node` at `addr` with `cfg` (which may join an
    /// address space through `cfg.join`).
    fn session(
        &self,
        node: NodeId,
        addr: SocketAddr,
        cfg: ClientConfig,
    ) -> Result<Session<T>, ClioError>;
    /// Sends a control message (a [`Message::Gate`]) to the node; returns its answer.
    fn control(&self, node: NodeId, addr: SocketAddr, message: Message) -> io::Result<Message>;
}

/// Memory nodes over UDP at their rack-file addresses.
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpLinks;

impl Links<clio::backend::UdpTransport> for UdpLinks {
    fn session(
        &self,
        _node: NodeId,
        addr: SocketAddr,
        cfg: ClientConfig,
    ) -> Result<Session<clio::backend::UdpTransport>, ClioError> {
        Session::open(addr, cfg)
    }
    fn control(&self, _node: NodeId, addr: SocketAddr, message: Message) -> io::Result<Message> {
        crate::node::call_node(addr, message)
    }
}

/// Memory nodes over UDP whose control datagrams are sealed under the rack
/// key (a rack file with `controller.key`/`key_file`; `None`: bare, as
/// [`UdpLinks`]).
#[derive(Debug, Clone, Copy)]
pub struct SealedUdpLinks(pub Option<clio_control::auth::RackKey>);

impl Links<clio::backend::UdpTransport> for SealedUdpLinks {
    fn session(
        &self,
        _node: NodeId,
        addr: SocketAddr,
        cfg: ClientConfig,
    ) -> Result<Session<clio::backend::UdpTransport>, ClioError> {
        Session::open(addr, cfg)
    }
    fn control(&self, _node: NodeId, addr: SocketAddr, message: Message) -> io::Result<Message> {
        crate::node::call_node_sealed(addr, self.0, message)
    }
}

/// Where one region lives and which board ranges hold its touched chunks.
#[derive(Debug)]
struct Route {
    node: NodeId,
    /// Bytes of the region the allocation uses (≤ 1 GiB).
    len: u64,
    /// Chunk index within the region -> node VA of its board allocation.
    chunks: BTreeMap<u64, u64>,
    /// A migration holds the region: new chunks wait.
    migrating: bool,
    /// A replicated region: the backup node and its chunk table (`None` if the
    /// region has one copy, or has lost its backup).
    backup: Option<(NodeId, BTreeMap<u64, u64>)>,
    /// Allocated as replicated (also after it lost a copy).
    replicated: bool,
    /// Requests this client routed to the region (reads, writes, atomics, locks):
    /// how hot it is, for [`RackClient::shed_pressure`].
    hits: std::sync::atomic::AtomicU64,
}

impl Route {
    fn new(node: NodeId, len: u64, backup: Option<NodeId>) -> Route {
        Route {
            node,
            len,
            chunks: BTreeMap::new(),
            migrating: false,
            backup: backup.map(|b| (b, BTreeMap::new())),
            replicated: backup.is_some(),
            hits: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// Where one byte of the rack lives: its node VA on the primary and, for a
/// replicated region, on the backup.
#[derive(Debug, Clone, Copy)]
struct Loc {
    node: NodeId,
    va: u64,
    backup: Option<(NodeId, u64)>,
}

/// The region this client carves small allocations from (one per kind).
#[derive(Debug, Clone, Copy)]
struct Arena {
    region: u32,
    /// Next free offset in the region.
    next: u64,
}

/// What waiting for a failover found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failover {
    /// The node was declared dead and its copy failed over.
    Gone,
    /// The node is still live a heartbeat window later (only slow).
    Alive,
}

/// One allocation this client made.
#[derive(Debug, Clone, Copy)]
struct Alloc {
    size: u64,
    /// Carved out of an arena region (shared with other allocations).
    carved: bool,
}

/// Allocation bookkeeping: allocations, the arenas and their live counts.
#[derive(Debug, Default)]
struct Allocs {
    by_va: BTreeMap<u64, Alloc>,
    /// Arena regions and how many live allocations each holds.
    live: BTreeMap<u32, usize>,
    /// Current arena: [single copy, replicated].
    arenas: [Option<Arena>; 2],
}

struct NodeSlot<T: Transport> {
    id: NodeId,
    addr: SocketAddr,
    session: Mutex<Option<Session<T>>>,
    /// The session's share token and PID, kept apart so a mover can join the
    /// address space while a writer holds the session.
    share: Mutex<Option<(ShareToken, u32)>>,
}

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// The region.
    pub region: u32,
    /// From node.
    pub from: NodeId,
    /// To node.
    pub to: NodeId,
    /// Bytes copied (touched chunks, then the blocks copied again).
    pub bytes: u64,
    /// How long writes to the region were paused: from the last round's pause
    /// to the source answering `MOVED` (or, re-replicating, `Rejoin`).
    pub paused: Duration,
    /// From the first gate to the end.
    pub took: Duration,
    /// Rounds of dirty blocks copied again while writes went on (the last,
    /// paused round not counted).
    pub rounds: u32,
}

/// How a migration or re-replication copies while writes go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyPolicy {
    /// Rounds of re-copying dirty blocks while writes go on, at most, before
    /// the final pause; 0 pauses writes for the whole copy (no tracking).
    pub max_rounds: u32,
    /// Pause as soon as a round finds at most this many dirty 64 KiB blocks.
    pub final_blocks: u32,
}

impl Default for CopyPolicy {
    fn default() -> Self {
        CopyPolicy {
            max_rounds: 4,
            final_blocks: 16,
        }
    }
}

impl CopyPolicy {
    /// The whole copy under a write pause (the behaviour before dirty tracking).
    pub const PAUSED: CopyPolicy = CopyPolicy {
        max_rounds: 0,
        final_blocks: 0,
    };
}

/// What [`copy_region`] did.
pub(crate) struct Copied {
    /// Bytes copied, re-copies included.
    pub(crate) bytes: u64,
    /// Rounds while writes went on.
    pub(crate) rounds: u32,
    /// When writes were paused.
    pub(crate) paused_at: Instant,
}

/// One address space over the rack's memory nodes (see the module docs).
pub struct RackClient<T: Transport> {
    ctl_addr: SocketAddr,
    ctl: Mutex<Client>,
    nodes: Vec<NodeSlot<T>>,
    links: Box<dyn Links<T>>,
    cfg: ClientConfig,
    routes: RwLock<BTreeMap<u32, Route>>,
    allocs: Mutex<Allocs>,
    /// Orders the two copies' writes of one chunk of a replicated region.
    stripes: Vec<Mutex<()>>,
    /// The controller's death verdict delay (from the rack file).
    dead_after_ms: u64,
    /// This client's rack-wide id: the key of its address spaces on the nodes
    /// (a mover copying one of its regions writes into the same space).
    id: u64,
}

/// A [`Space`] (control message) as the SDK's share token, and back.
pub(crate) fn token_of(s: Space) -> ShareToken {
    ShareToken {
        pid: s.pid,
        session: s.session,
        epoch: s.epoch,
        key: s.key,
    }
}

/// The control message's form of a share token.
pub(crate) fn space_of(t: ShareToken) -> Space {
    Space {
        pid: t.pid,
        session: t.session,
        epoch: t.epoch,
        key: t.key,
    }
}

/// Sends `m` to node `node`'s control port through `links`.
pub(crate) fn node_call<T: Transport>(
    links: &dyn Links<T>,
    node: NodeId,
    addr: SocketAddr,
    m: Message,
) -> Result<Message, RackClientError> {
    links
        .control(node, addr, m)
        .map_err(|source| RackClientError::Gate { node, addr, source })
}

/// Records a migration's (or, `kind` `Copy`, a re-replication's) start at
/// the controller through `call`; its id. Refused (another migration of the
/// region is open, the region is not `from`'s): the copy does not start.
pub(crate) fn begin_migration(
    mut call: impl FnMut(Message) -> Result<Message, RackClientError>,
    ctl_addr: SocketAddr,
    region: u32,
    (from, to): (NodeId, NodeId),
    total_bytes: u64,
    kind: MigrationKind,
) -> Result<u32, RackClientError> {
    match call(Message::MigrationBegin {
        region,
        from,
        to,
        total_bytes,
        kind,
    })? {
        Message::MigrationId { id } => Ok(id),
        Message::Refused {
            code: ErrorCode::Busy,
            ..
        } => Err(RackClientError::StillMoving { region }),
        other => Err(RackClientError::Controller {
            addr: ctl_addr,
            source: io::Error::other(format!("MigrationBegin answered {other:?}")),
        }),
    }
}

/// A region's chunks on one node: (rack client, pid, chunk index -> node VA).
pub(crate) type Held = (u64, u32, BTreeMap<u64, u64>);

/// The chunks node `node` holds of `region`: (rack client, pid, chunk -> node VA).
/// `None` when it holds none.
/// Where a chunk copy reads and writes: a node, its address and the session
/// (joined to the region's address space) the copy uses there.
pub(crate) struct CopyEnd<'a, T: Transport> {
    pub(crate) node: NodeId,
    pub(crate) addr: SocketAddr,
    pub(crate) pid: u32,
    pub(crate) session: &'a mut Session<T>,
}

/// Copies chunk `chunk` of `region` (at `nva` on `from`) into a fresh chunk
/// of `to`'s address space through `buf` (one chunk long) and binds it there
/// as imported; returns the new chunk's VA. A client's migration and the
/// balancer's both copy this way.
pub(crate) fn copy_chunk<T: Transport>(
    links: &dyn Links<T>,
    region: u32,
    (chunk, nva): (u64, u64),
    from: &mut CopyEnd<'_, T>,
    to: &mut CopyEnd<'_, T>,
    buf: &mut [u8],
) -> Result<u64, RackClientError> {
    for (i, part) in buf.chunks_mut(MAX_PIECE as usize).enumerate() {
        from.session
            .rread(nva + i as u64 * MAX_PIECE, part)
            .map_err(|source| RackClientError::Node {
                node: from.node,
                addr: from.addr,
                source,
            })?;
    }
    let err = |source| RackClientError::Node {
        node: to.node,
        addr: to.addr,
        source,
    };
    let a = to
        .session
        .ralloc(CHUNK, clio_wire::payload::perms::RW)
        .map_err(err)?;
    for (i, part) in buf.chunks(MAX_PIECE as usize).enumerate() {
        to.session
            .rwrite(a.va + i as u64 * MAX_PIECE, part)
            .map_err(err)?;
    }
    node_call(
        links,
        to.node,
        to.addr,
        Message::Bind {
            region,
            chunk: chunk as u16,
            pid: to.pid,
            va: a.va,
            len: CHUNK,
            import: true,
        },
    )?;
    Ok(a.va)
}

/// Copies a region's chunks from `from` to `to` while writes go on, as
/// `policy` says: gates each chunk `list` names `Tracking` (listing again until
/// no new chunk slipped in: the node refuses new ones while tracking), copies
/// each whole, then re-copies the blocks the node recorded dirty, round after
/// round, until a round finds at most `policy.final_blocks`, finds no fewer
/// than the round before (writers dirty as fast as it copies), or
/// `policy.max_rounds` is reached; then gates them `Paused` (writes `BUSY`;
/// the record is kept) and copies what is dirty once more. With
/// `max_rounds` 0 the chunks are paused before the first copy. Records the
/// chunks it gated (`chunk -> source VA`) and copied (`chunk -> target VA`)
/// for the caller's rollback; the caller fences the target and commits. A
/// change acknowledged before the pause either preceded the read of its block
/// or marked it dirty after the last take: the final take catches it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_region<T: Transport>(
    links: &dyn Links<T>,
    region: u32,
    gate: &dyn Fn(u64, GateState) -> Result<(), RackClientError>,
    list: &mut dyn FnMut() -> Result<BTreeMap<u64, u64>, RackClientError>,
    from: &mut CopyEnd<'_, T>,
    to: &mut CopyEnd<'_, T>,
    policy: CopyPolicy,
    gated: &mut BTreeMap<u64, u64>,
    copied: &mut BTreeMap<u64, u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<Copied, RackClientError> {
    let tracking = policy.max_rounds > 0;
    let first = if tracking {
        GateState::Tracking
    } else {
        GateState::Paused
    };
    let mut paused_at = Instant::now();
    loop {
        let fresh: Vec<_> = list()?
            .into_iter()
            .filter(|(c, _)| !gated.contains_key(c))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for (c, nva) in fresh {
            gate(nva, first)?;
            gated.insert(c, nva);
        }
    }
    let mut buf = vec![0u8; CHUNK as usize];
    let mut bytes = 0;
    for (&c, &nva) in gated.iter() {
        let va = copy_chunk(links, region, (c, nva), from, to, &mut buf)?;
        copied.insert(c, va);
        bytes += CHUNK;
        progress(bytes);
    }
    if !tracking {
        return Ok(Copied {
            bytes,
            rounds: 0,
            paused_at,
        });
    }
    let mut pending: BTreeMap<u64, u64> = BTreeMap::new();
    let mut rounds = 0;
    let mut last = u32::MAX;
    while rounds < policy.max_rounds {
        take_dirty(links, region, from, gated, &mut pending)?;
        let n: u32 = pending.values().map(|m| m.count_ones()).sum();
        // Converged, or writers dirty blocks as fast as a round copies them
        // (another round would not shrink the paused one).
        if n <= policy.final_blocks || n >= last {
            break;
        }
        last = n;
        bytes += recopy(from, to, gated, copied, &pending, &mut buf)?;
        progress(bytes);
        pending.clear();
        rounds += 1;
    }
    paused_at = Instant::now();
    for &nva in gated.values() {
        gate(nva, GateState::Paused)?;
    }
    take_dirty(links, region, from, gated, &mut pending)?;
    bytes += recopy(from, to, gated, copied, &pending, &mut buf)?;
    progress(bytes);
    Ok(Copied {
        bytes,
        rounds,
        paused_at,
    })
}

/// ORs each gated chunk's dirty record (read and cleared at the node) into `pending`.
fn take_dirty<T: Transport>(
    links: &dyn Links<T>,
    region: u32,
    from: &CopyEnd<'_, T>,
    gated: &BTreeMap<u64, u64>,
    pending: &mut BTreeMap<u64, u64>,
) -> Result<(), RackClientError> {
    for (&c, &nva) in gated {
        let m = Message::TakeDirty {
            region,
            pid: from.pid,
            va: nva,
        };
        match node_call(links, from.node, from.addr, m)? {
            Message::Dirty { mask } => *pending.entry(c).or_insert(0) |= mask,
            other => {
                return Err(RackClientError::Gate {
                    node: from.node,
                    addr: from.addr,
                    source: io::Error::other(format!("unexpected answer to TakeDirty: {other:?}")),
                })
            }
        }
    }
    Ok(())
}

/// Copies the `pending` dirty blocks again; returns the bytes.
fn recopy<T: Transport>(
    from: &mut CopyEnd<'_, T>,
    to: &mut CopyEnd<'_, T>,
    gated: &BTreeMap<u64, u64>,
    copied: &BTreeMap<u64, u64>,
    pending: &BTreeMap<u64, u64>,
    buf: &mut [u8],
) -> Result<u64, RackClientError> {
    let block = &mut buf[..DIRTY_BLOCK as usize];
    let mut bytes = 0;
    for (c, &mask) in pending {
        let (Some(&src), Some(&dst)) = (gated.get(c), copied.get(c)) else {
            continue;
        };
        for b in (0..64u64).filter(|b| mask & (1 << b) != 0) {
            let off = b * DIRTY_BLOCK;
            from.session
                .rread(src + off, block)
                .map_err(|source| RackClientError::Node {
                    node: from.node,
                    addr: from.addr,
                    source,
                })?;
            to.session
                .rwrite(dst + off, block)
                .map_err(|source| RackClientError::Node {
                    node: to.node,
                    addr: to.addr,
                    source,
                })?;
            bytes += DIRTY_BLOCK;
        }
    }
    Ok(bytes)
}

pub(crate) fn chunk_list<T: Transport>(
    links: &dyn Links<T>,
    node: NodeId,
    addr: SocketAddr,
    region: u32,
) -> Result<Option<Held>, RackClientError> {
    let mut out = BTreeMap::new();
    let mut from = 0u16;
    let mut owner = None;
    loop {
        match node_call(links, node, addr, Message::Chunks { region, from })? {
            Message::ChunkList {
                client,
                pid,
                chunks,
                next,
                ..
            } => {
                owner = Some((client, pid));
                out.extend(chunks.iter().map(|c| (u64::from(c.chunk), c.va)));
                match next {
                    Some(n) => from = n,
                    None => break,
                }
            }
            Message::NotAssigned { .. } => break,
            other => {
                return Err(RackClientError::Gate {
                    node,
                    addr,
                    source: io::Error::other(format!("unexpected answer to Chunks: {other:?}")),
                })
            }
        }
    }
    Ok(owner.map(|(c, p)| (c, p, out)))
}

/// This rack client's address space on `node`: the one registered for `client`
/// there (joined), or a new session registered as it. Returns the session.
pub(crate) fn space_session<T: Transport>(
    links: &dyn Links<T>,
    node: NodeId,
    addr: SocketAddr,
    client: u64,
    cfg: &ClientConfig,
) -> Result<Session<T>, RackClientError> {
    let nerr = |source| RackClientError::Node { node, addr, source };
    let join = |sp: Space| {
        let c = ClientConfig {
            join: Some(token_of(sp)),
            ..cfg.clone()
        };
        links.session(node, addr, c).map_err(nerr)
    };
    let unexpected = |m: Message| RackClientError::Gate {
        node,
        addr,
        source: io::Error::other(format!("unexpected answer {m:?}")),
    };
    let s = match node_call(links, node, addr, Message::FindSpace { client })? {
        Message::SpaceOf {
            space: Some(sp), ..
        } => join(sp)?,
        Message::SpaceOf { space: None, .. } => {
            let s = links.session(node, addr, cfg.clone()).map_err(nerr)?;
            let mine = space_of(s.share().map_err(nerr)?);
            match node_call(
                links,
                node,
                addr,
                Message::Register {
                    client,
                    space: mine,
                },
            )? {
                Message::SpaceOf { space: Some(w), .. } if w.pid == mine.pid => s,
                // Another session registered first: use its address space.
                Message::SpaceOf { space: Some(w), .. } => {
                    drop(s);
                    join(w)?
                }
                other => return Err(unexpected(other)),
            }
        }
        other => return Err(unexpected(other)),
    };
    // This session's own token stands for the space from now on (the session
    // that registered it may be a mover's, which may close).
    let mine = space_of(s.share().map_err(nerr)?);
    node_call(
        links,
        node,
        addr,
        Message::Register {
            client,
            space: mine,
        },
    )?;
    Ok(s)
}

impl<T: Transport> std::fmt::Debug for RackClient<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RackClient")
            .field("controller", &self.ctl_addr)
            .field("nodes", &self.nodes.len())
            .finish_non_exhaustive()
    }
}

/// A node's session slot, locked.
type SessionGuard<'a, T> = MutexGuard<'a, Option<Session<T>>>;

fn lock<X>(m: &Mutex<X>) -> MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<T: Transport> RackClient<T> {
    /// A client of the rack in `rack` (its nodes and controller address), reaching
    /// nodes through `links` with session settings `cfg`. Nothing is sent yet.
    pub fn new(
        rack: &RackConfig,
        controller: SocketAddr,
        links: impl Links<T> + 'static,
        cfg: ClientConfig,
    ) -> Result<Self, RackClientError> {
        let ctl = Client::connect(controller)
            .map_err(|source| RackClientError::Controller {
                addr: controller,
                source,
            })?
            .with_key(rack.key);
        Ok(RackClient {
            ctl_addr: controller,
            ctl: Mutex::new(ctl),
            nodes: rack
                .nodes
                .iter()
                .map(|n| NodeSlot {
                    id: n.id,
                    addr: n.address,
                    session: Mutex::new(None),
                    share: Mutex::new(None),
                })
                .collect(),
            links: Box::new(links),
            cfg,
            routes: RwLock::new(BTreeMap::new()),
            allocs: Mutex::new(Allocs::default()),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            dead_after_ms: rack.dead_after_ms,
            id: {
                use std::hash::BuildHasher;
                std::collections::hash_map::RandomState::new()
                    .hash_one((std::process::id(), Instant::now(), controller))
                    .max(1)
            },
        })
    }

    /// Shortens the controller client's patience (tests of an unreachable one).
    pub fn set_controller_timeout(&self, per_attempt: Duration, attempts: u32) {
        let mut c = lock(&self.ctl);
        c.timeout = per_attempt;
        c.attempts = attempts;
    }

    fn call_controller(&self, m: Message) -> Result<Message, RackClientError> {
        let reply = lock(&self.ctl)
            .call(m)
            .map_err(|source| RackClientError::Controller {
                addr: self.ctl_addr,
                source,
            })?;
        if let Message::Refused { code, field } = reply {
            return Err(RackClientError::Refused {
                addr: self.ctl_addr,
                code,
                field,
            });
        }
        Ok(reply)
    }

    fn slot(&self, node: NodeId) -> Option<&NodeSlot<T>> {
        self.nodes.get(usize::from(node).checked_sub(1)?)
    }

    /// The node's session, opened on first use.
    fn session(&self, node: NodeId) -> Result<(SessionGuard<'_, T>, SocketAddr), RackClientError> {
        let slot = self
            .slot(node)
            .ok_or(RackClientError::UnknownNode { region: 0, node })?;
        let mut g = lock(&slot.session);
        if g.is_none() {
            let s = space_session(&*self.links, node, slot.addr, self.id, &self.cfg)?;
            let share = s.share().map_err(|source| RackClientError::Node {
                node,
                addr: slot.addr,
                source,
            })?;
            *lock(&slot.share) = Some((share, s.pid().unwrap_or(0)));
            *g = Some(s);
        }
        Ok((g, slot.addr))
    }

    /// Allocates `size` bytes (1 B ..= 16 GiB); returns the rack VA of the first
    /// byte. Up to [`ARENA_MAX`] bytes are carved out of a vRegion this client
    /// already holds (no controller round trip but for the region's first
    /// allocation); larger sizes get whole vRegions from the controller. Board
    /// memory is taken on first touch.
    pub fn ralloc(&self, size: u64) -> Result<u64, RackClientError> {
        self.alloc(size, false)
    }

    /// Like [`RackClient::ralloc`], but every vRegion has two copies on distinct
    /// nodes (at most 8 GiB): writes are acknowledged when both copies have
    /// them, and when a copy's node dies the controller fails over (see the
    /// crate README, "Replication").
    pub fn ralloc_replicated(&self, size: u64) -> Result<u64, RackClientError> {
        self.alloc(size, true)
    }

    fn alloc(&self, size: u64, replicated: bool) -> Result<u64, RackClientError> {
        if size == 0 {
            return Err(RackClientError::InvalidArgument {
                what: "size",
                reason: "must not be zero",
            });
        }
        if size > ARENA_MAX {
            let va = self.alloc_regions(size, replicated)?;
            lock(&self.allocs).by_va.insert(
                va,
                Alloc {
                    size,
                    carved: false,
                },
            );
            return Ok(va);
        }
        let kind = usize::from(replicated);
        let mut a = lock(&self.allocs);
        let fits = |ar: &Arena| {
            ar.next.next_multiple_of(ARENA_ALIGN) + size <= VREGION_BYTES
                // A replicated arena that lost a copy is not carved further.
                && (!replicated || self.copies_of(ar.region).is_some_and(|(_, b)| b.is_some()))
        };
        let arena = match a.arenas[kind] {
            Some(ar) if fits(&ar) => ar,
            old => {
                let va = self.alloc_regions(VREGION_BYTES, replicated)?;
                let region = (va >> VREGION_SHIFT) as u32;
                a.live.insert(region, 0);
                a.arenas[kind] = Some(Arena { region, next: 0 });
                if let Some(old) = old {
                    if a.live.get(&old.region) == Some(&0) {
                        a.live.remove(&old.region);
                        drop(a);
                        self.release_region(old.region)?;
                        a = lock(&self.allocs);
                    }
                }
                Arena { region, next: 0 }
            }
        };
        let off = arena.next.next_multiple_of(ARENA_ALIGN);
        let va = (u64::from(arena.region) << VREGION_SHIFT) + off;
        a.arenas[kind] = Some(Arena {
            region: arena.region,
            next: off + size,
        });
        *a.live.entry(arena.region).or_insert(0) += 1;
        a.by_va.insert(va, Alloc { size, carved: true });
        Ok(va)
    }

    /// Whole vRegions from the controller, cached; the VA of the first.
    fn alloc_regions(&self, size: u64, replicated: bool) -> Result<u64, RackClientError> {
        let unexpected = |what: &str| RackClientError::Controller {
            addr: self.ctl_addr,
            source: io::Error::other(format!("unexpected answer to {what}")),
        };
        let sets: Vec<Replicas> = if replicated {
            let Message::AllocatedReplicated { sets } =
                self.call_controller(Message::AllocateReplicated { bytes: size })?
            else {
                return Err(unexpected("AllocateReplicated"));
            };
            sets.into_iter().collect()
        } else {
            let Message::Allocated { placements } =
                self.call_controller(Message::Allocate { bytes: size })?
            else {
                return Err(unexpected("Allocate"));
            };
            placements
                .iter()
                .map(|p| Replicas {
                    region: p.region,
                    primary: p.node,
                    primary_epoch: p.epoch,
                    backup: 0,
                    backup_epoch: 0,
                })
                .collect()
        };
        let first = sets.first().map_or(0, |p| p.region);
        let va = u64::from(first) << VREGION_SHIFT;
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        let mut left = size;
        for (i, p) in sets.iter().enumerate() {
            if p.region != first + i as u32 {
                return Err(RackClientError::Controller {
                    addr: self.ctl_addr,
                    source: io::Error::other("allocated regions are not contiguous"),
                });
            }
            for node in [p.primary, p.backup] {
                if node != 0 && self.slot(node).is_none() {
                    return Err(RackClientError::UnknownNode {
                        region: p.region,
                        node,
                    });
                }
            }
            let len = left.min(VREGION_BYTES);
            left -= len;
            let backup = (p.backup != 0).then_some(p.backup);
            routes.insert(p.region, Route::new(p.primary, len, backup));
        }
        Ok(va)
    }

    /// Frees the allocation at `va` (as returned by [`RackClient::ralloc`]). A
    /// whole-region allocation frees its chunks on their nodes and its regions at
    /// the controller; a carved one gives its region back when the region's last
    /// allocation is freed and it is no longer the arena.
    pub fn rfree(&self, va: u64) -> Result<(), RackClientError> {
        let mut a = lock(&self.allocs);
        let alloc = a
            .by_va
            .remove(&va)
            .ok_or(RackClientError::Unallocated { va })?;
        let first = (va >> VREGION_SHIFT) as u32;
        if alloc.carved {
            let current = a.arenas.iter().flatten().any(|ar| ar.region == first);
            let live = a.live.entry(first).or_insert(1);
            *live -= 1;
            if *live > 0 || current {
                return Ok(());
            }
            a.live.remove(&first);
            drop(a);
            return self.release_region(first);
        }
        drop(a);
        let n = alloc.size.div_ceil(VREGION_BYTES) as u32;
        for region in first..first + n {
            self.release_region(region)?;
        }
        Ok(())
    }

    /// Frees `region`'s chunks on every copy and gives it back to the controller.
    fn release_region(&self, region: u32) -> Result<(), RackClientError> {
        let route = self
            .routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&region);
        let Some(route) = route else { return Ok(()) };
        let copies = std::iter::once((route.node, route.chunks)).chain(route.backup);
        for (node, chunks) in copies {
            let (mut s, addr) = self.session(node)?;
            let s = s.as_mut().expect("opened");
            for node_va in chunks.values() {
                s.rfree(*node_va, CHUNK)
                    .map_err(|source| RackClientError::Node { node, addr, source })?;
            }
        }
        let owner = self.lookup(region)?;
        self.call_controller(Message::ReleaseRegion {
            region,
            owner: owner.node,
            epoch: owner.epoch,
        })?;
        Ok(())
    }

    fn lookup(&self, region: u32) -> Result<Placement, RackClientError> {
        match self.call_controller(Message::Lookup { region })? {
            Message::Owner(p) => Ok(p),
            _ => Err(RackClientError::Unallocated {
                va: u64::from(region) << VREGION_SHIFT,
            }),
        }
    }

    /// The node and node VA of rack VA `va`, allocating its chunk on first touch.
    fn locate(&self, va: u64) -> Result<(NodeId, u64), RackClientError> {
        self.locate_copies(va).map(|l| (l.node, l.va))
    }

    /// Where `va` lives on each copy, allocating its chunk on first touch (on
    /// both copies of a replicated region).
    fn locate_copies(&self, va: u64) -> Result<Loc, RackClientError> {
        let region = (va >> VREGION_SHIFT) as u32;
        let off = va & (VREGION_BYTES - 1);
        let chunk = off / CHUNK;
        let at = |r: &Route| -> Option<Loc> {
            r.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let base = r.chunks.get(&chunk)?;
            let backup = match &r.backup {
                Some((b, chunks)) => Some((*b, chunks.get(&chunk)? + off % CHUNK)),
                None => None,
            };
            Some(Loc {
                node: r.node,
                va: base + off % CHUNK,
                backup,
            })
        };
        {
            let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
            let r = routes
                .get(&region)
                .ok_or(RackClientError::Unallocated { va })?;
            if off >= r.len {
                return Err(RackClientError::Unallocated { va });
            }
            if let Some(l) = at(r) {
                return Ok(l);
            }
        }
        let deadline = Instant::now() + FOLLOW_FOR;
        loop {
            let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
            let r = routes
                .get_mut(&region)
                .ok_or(RackClientError::Unallocated { va })?;
            if let Some(l) = at(r) {
                return Ok(l);
            }
            let mut refused = None;
            if !r.migrating {
                // Each copy's chunk is recorded as soon as it exists, so a copy
                // that fails here is not leaked; the next touch takes the other.
                if !r.chunks.contains_key(&chunk) {
                    match self.take_chunk(r.node, region, chunk)? {
                        Ok(nva) => {
                            r.chunks.insert(chunk, nva);
                        }
                        Err(code) => refused = Some((r.node, code)),
                    }
                }
                if refused.is_none() {
                    if let Some((b, chunks)) = &mut r.backup {
                        if let std::collections::btree_map::Entry::Vacant(e) = chunks.entry(chunk) {
                            match self.take_chunk(*b, region, chunk)? {
                                Ok(nva) => {
                                    e.insert(nva);
                                }
                                Err(code) => refused = Some((*b, code)),
                            }
                        }
                    }
                }
                if refused.is_none() {
                    return Ok(at(r).expect("both copies have the chunk"));
                }
            }
            drop(routes);
            match refused {
                // The region was migrated away from `node` by the controller:
                // learn where it is now, then touch the chunk there.
                Some((node, ErrorCode::NotOwner)) => self.relearn(region, node)?,
                // Paused, or waiting for this client to learn a new backup.
                Some((_, ErrorCode::Busy)) => drop(self.refresh_backup(region)?),
                _ => {}
            }
            if Instant::now() > deadline {
                return Err(RackClientError::StillMoving { region });
            }
            // A migration of this region is copying; it ends within its own bound.
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// A fresh chunk on `node`, bound at the node to chunk `chunk` of `region`
    /// (it counts the region's accesses and can export it). `Ok(Err(code))`:
    /// the node refused the binding — `NotOwner` (the region was migrated away
    /// from it) or `Busy` (a migration of the region is copying) — and the
    /// chunk was given back.
    fn take_chunk(
        &self,
        node: NodeId,
        region: u32,
        chunk: u64,
    ) -> Result<Result<u64, ErrorCode>, RackClientError> {
        let (mut g, addr) = self.session(node)?;
        let s = g.as_mut().expect("opened");
        let err = |source| RackClientError::Node { node, addr, source };
        let nva = s
            .ralloc(CHUNK, clio_wire::payload::perms::RW)
            .map_err(err)?
            .va;
        let bind = Message::Bind {
            region,
            chunk: chunk as u16,
            pid: s.pid().unwrap_or(0),
            va: nva,
            len: CHUNK,
            import: false,
        };
        match node_call(&*self.links, node, addr, bind)? {
            Message::Ack { .. } => Ok(Ok(nva)),
            Message::Refused {
                code: code @ (ErrorCode::NotOwner | ErrorCode::Busy),
                ..
            } => {
                s.rfree(nva, CHUNK).map_err(err)?;
                Ok(Err(code))
            }
            other => Err(RackClientError::Gate {
                node,
                addr,
                source: io::Error::other(format!("unexpected answer to Bind: {other:?}")),
            }),
        }
    }

    /// The node whose copy of a replicated `region` failed with `e` (it did not
    /// answer, or answers as a new boot), if that is what `e` says.
    fn lost_copy(&self, region: u32, e: &RackClientError) -> Option<NodeId> {
        let (node, lost) = match e {
            RackClientError::Node { node, source, .. } => (
                node,
                matches!(
                    source,
                    ClioError::Timeout { .. }
                        | ClioError::BoardRestarted { .. }
                        | ClioError::Transport(_)
                ),
            ),
            // Its control port (address-space lookup, chunk binding) is unreachable.
            RackClientError::Gate { node, .. } => (node, true),
            _ => return None,
        };
        let replicated = self
            .routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&region)
            .is_some_and(|r| r.replicated);
        (lost && replicated).then_some(*node)
    }

    /// A copy of replicated `region` on `node` failed: wait until the controller
    /// has declared `node` dead and failed over (its backup promoted, or the
    /// backup dropped), then point the cache at what is left ([`Failover::Gone`]).
    /// If the controller still counts `node` live a heartbeat window after the
    /// failure, the node was only slow ([`Failover::Alive`]). A region whose other
    /// copy is gone too, or that another client changed, fails with `cause`.
    fn await_failover(
        &self,
        region: u32,
        node: NodeId,
        cause: RackClientError,
    ) -> Result<Failover, RackClientError> {
        let patience = Duration::from_millis(self.dead_after_ms) + Duration::from_millis(500);
        let deadline = Instant::now() + patience;
        loop {
            let r = match self.call_controller(Message::LookupReplicas { region })? {
                Message::ReplicaState(r) => r,
                _ => return Err(cause),
            };
            let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
            let Some(route) = routes.get_mut(&region) else {
                return Err(cause);
            };
            let backup = route.backup.as_ref().map(|(b, _)| *b);
            let held = route.node == node || backup == Some(node);
            if !held {
                // Another thread already failed this copy over.
                return Ok(Failover::Gone);
            }
            let still = r.primary == node || r.backup == node;
            if !still {
                if route.node == node && backup == Some(r.primary) {
                    // Promoted: the backup's copy is the region now.
                    let (b, chunks) = route.backup.take().expect("checked");
                    route.node = b;
                    route.chunks = chunks;
                } else if backup == Some(node) && r.primary == route.node && r.backup == 0 {
                    route.backup = None;
                } else {
                    return Err(RackClientError::MovedAway {
                        region,
                        node: r.primary,
                    });
                }
                drop(routes);
                // The lost node's session is of no further use (fences skip it).
                if let Some(slot) = self.slot(node) {
                    *lock(&slot.session) = None;
                }
                return Ok(Failover::Gone);
            }
            drop(routes);
            if Instant::now() > deadline {
                return Ok(Failover::Alive);
            }
            // The controller declares the node dead within its dead_after_ms.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Which nodes hold `region` for this client: (primary, backup).
    pub fn copies_of(&self, region: u32) -> Option<(NodeId, Option<NodeId>)> {
        self.routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&region)
            .map(|r| (r.node, r.backup.as_ref().map(|(b, _)| *b)))
    }

    /// The stripe ordering writes to `va`'s chunk on both copies.
    fn stripe(&self, va: u64) -> MutexGuard<'_, ()> {
        lock(&self.stripes[((va / CHUNK) % STRIPES as u64) as usize])
    }

    /// Both copies' sessions, locked in node order (no two threads lock them
    /// crosswise).
    fn two_sessions(
        &self,
        a: NodeId,
        b: NodeId,
    ) -> Result<(SessionGuard<'_, T>, SessionGuard<'_, T>), RackClientError> {
        if a < b {
            let (ga, _) = self.session(a)?;
            let (gb, _) = self.session(b)?;
            Ok((ga, gb))
        } else {
            let (gb, _) = self.session(b)?;
            let (ga, _) = self.session(a)?;
            Ok((ga, gb))
        }
    }

    fn node_err(&self, node: NodeId, source: ClioError) -> RackClientError {
        RackClientError::Node {
            node,
            addr: self.slot(node).map_or(self.ctl_addr, |s| s.addr),
            source,
        }
    }

    /// Writes one piece (inside one chunk) to both copies of a replicated region
    /// in parallel — sent to the backup, then to the primary, then both waited
    /// for — under the chunk's stripe, so both copies see writes in one order.
    /// Acknowledged only when both answered; a lost copy is failed over first,
    /// then the write is sent again (a write is idempotent).
    fn write_replicated(&self, va: u64, data: &[u8]) -> Result<(), RackClientError> {
        let region = (va >> VREGION_SHIFT) as u32;
        let deadline = Instant::now() + FOLLOW_FOR;
        loop {
            let res = (|| {
                let l = self.locate_copies(va)?;
                let _order = self.stripe(va);
                let Some((b, bva)) = l.backup else {
                    // One copy left (the other was lost): sent again as a
                    // single-copy write (which follows BUSY and MOVED).
                    return Err(RackClientError::Rejoined { region });
                };
                let (mut ps, mut bs) = self.two_sessions(l.node, b)?;
                let (ps, bs) = (ps.as_mut().expect("opened"), bs.as_mut().expect("opened"));
                let hb = bs
                    .rwrite_async(bva, data)
                    .map_err(|e| self.node_err(b, e))?;
                // Puts the backup's packets on the wire before the primary's.
                let sent = bs.try_rpoll(&hb).map_err(|e| self.node_err(b, e));
                let primary = ps.rwrite(l.va, data).map_err(|e| self.node_err(l.node, e));
                let backup = bs
                    .rpoll(std::slice::from_ref(&hb))
                    .map_err(|e| self.node_err(b, e))
                    .and_then(|mut r| r.remove(0).map_err(|e| self.node_err(b, e)));
                primary.and(sent).and(backup.map(drop))
            })();
            let e = match res {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if matches!(
                &e,
                RackClientError::Node {
                    source: ClioError::Busy { .. },
                    ..
                }
            ) && Instant::now() < deadline
            {
                // A copy stayed paused (gated for a copy or a rejoin) past the
                // session's request deadline: wait as a single-copy write does
                // (writing both copies again is idempotent).
                std::thread::sleep(Duration::from_micros(500));
                continue;
            }
            let Some(node) = self.lost_copy(region, &e) else {
                return Err(e);
            };
            if Instant::now() > deadline {
                return Err(e);
            }
            self.await_failover(region, node, e)?;
        }
    }

    /// An atomic on a replicated region: executed at the primary under the
    /// word's stripe, its result written to the backup before it is returned.
    ///
    /// `order_op` holds the stripe across the primary's op too (atomics). A lock
    /// is taken at the primary without it — the board makes the taker wait while
    /// the word is held, and a waiter holding the stripe would keep the holder's
    /// release out — and mirrored under it: a lock succeeds only after the
    /// previous holder's release ran at the primary under the stripe, so its
    /// mirror (0) reaches the backup before the new holder's (1).
    fn atomic_replicated(
        &self,
        va: u64,
        order_op: bool,
        op: impl Fn(&mut Session<T>, u64) -> Result<u64, ClioError>,
        after: impl Fn(u64) -> u64,
    ) -> Result<u64, RackClientError> {
        let region = (va >> VREGION_SHIFT) as u32;
        loop {
            let l = self.locate_copies(va)?;
            if l.backup.is_none() {
                // One copy left (failed over): sent again as a single-copy op.
                return Err(RackClientError::Rejoined { region });
            }
            let order = order_op.then(|| self.stripe(va));
            let old = self.session(l.node).and_then(|(mut s, _)| {
                op(s.as_mut().expect("opened"), l.va).map_err(|e| self.node_err(l.node, e))
            });
            let old = match old {
                Ok(old) => old,
                Err(e) => {
                    drop(order);
                    let Some(node) = self.lost_copy(region, &e) else {
                        return Err(e);
                    };
                    match self.await_failover(region, node, e)? {
                        // The primary's effect died with it; the backup never had
                        // it: run it on what is left.
                        Failover::Gone => continue,
                        // Whether a live primary ran it is unknown: not retried.
                        Failover::Alive => {
                            return Err(self.node_err(
                                node,
                                ClioError::Transport(
                                    "atomic unanswered by a live primary; outcome unknown".into(),
                                ),
                            ))
                        }
                    }
                }
            };
            let new = after(old);
            let Some((b, bva)) = l.backup.filter(|_| new != old) else {
                return Ok(old);
            };
            let _order = order.unwrap_or_else(|| self.stripe(va));
            // Mirror under the stripe (no later write to the word overtakes it)
            // until the backup has it or is gone.
            loop {
                let r = self.session(b).and_then(|(mut s, _)| {
                    s.as_mut()
                        .expect("opened")
                        .rwrite(bva, &new.to_le_bytes())
                        .map_err(|e| self.node_err(b, e))
                });
                let Err(e) = r else { return Ok(old) };
                let Some(node) = self.lost_copy(region, &e) else {
                    return Err(e);
                };
                if self.await_failover(region, node, e)? == Failover::Gone {
                    return Ok(old);
                }
            }
        }
    }

    fn is_replicated(&self, va: u64) -> bool {
        self.routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&((va >> VREGION_SHIFT) as u32))
            // One copy left: served (and moved) like a single-copy region.
            .is_some_and(|r| r.replicated && r.backup.is_some())
    }

    /// Runs `f` on the session of the node holding `va` with the node VA, following
    /// `BUSY` (a pause) and `MOVED` (a finished move) until [`FOLLOW_FOR`].
    fn at<R>(
        &self,
        va: u64,
        f: impl FnMut(&mut Session<T>, u64) -> Result<R, ClioError>,
    ) -> Result<R, RackClientError> {
        self.at_kind(va, false, true, f)
    }

    /// [`Self::at`] for a change: if the region gains a backup on the way
    /// (`MOVED` from a `Rejoin` gate), `Rejoined` says to send it to both.
    fn at_mut<R>(
        &self,
        va: u64,
        f: impl FnMut(&mut Session<T>, u64) -> Result<R, ClioError>,
    ) -> Result<R, RackClientError> {
        self.at_kind(va, true, false, f)
    }

    /// [`Self::at_mut`] for a plain write, which may be sent again after a
    /// timeout (the same bytes to the same place).
    fn at_write<R>(
        &self,
        va: u64,
        f: impl FnMut(&mut Session<T>, u64) -> Result<R, ClioError>,
    ) -> Result<R, RackClientError> {
        self.at_kind(va, true, true, f)
    }

    /// `idempotent`: the call may be sent again after the node did not answer
    /// it in time (reads, plain writes; not atomics, whose effect at a live
    /// but slow node is unknown).
    fn at_kind<R>(
        &self,
        va: u64,
        mutates: bool,
        idempotent: bool,
        mut f: impl FnMut(&mut Session<T>, u64) -> Result<R, ClioError>,
    ) -> Result<R, RackClientError> {
        let region = (va >> VREGION_SHIFT) as u32;
        let deadline = Instant::now() + FOLLOW_FOR;
        loop {
            let (node, node_va) = self.locate(va)?;
            let (mut s, addr) = match self.session(node) {
                Ok(s) => s,
                Err(e) => match self.lost_copy(region, &e) {
                    // A session to a node declared dead since `locate`.
                    Some(lost) => {
                        self.await_failover(region, lost, e)?;
                        continue;
                    }
                    None => return Err(e),
                },
            };
            match f(s.as_mut().expect("opened"), node_va) {
                Ok(r) => return Ok(r),
                Err(ClioError::Moved { .. }) => {
                    drop(s);
                    self.relearn(region, node)?;
                    if mutates && self.is_replicated(va) {
                        return Err(RackClientError::Rejoined { region });
                    }
                }
                Err(ClioError::Busy { .. }) if Instant::now() < deadline => {
                    // Paused by a migration (or a held lock): back off a little
                    // rather than spin against the node copying the region.
                    drop(s);
                    std::thread::sleep(Duration::from_micros(500));
                }
                Err(source) => {
                    drop(s);
                    let slow = idempotent && matches!(source, ClioError::Timeout { .. });
                    let e = RackClientError::Node { node, addr, source };
                    match self.lost_copy(region, &e) {
                        // A read or single-copy write is idempotent: sent again.
                        Some(lost) => drop(self.await_failover(region, lost, e)?),
                        // The only copy's node did not answer within the
                        // session's deadline: on an overloaded host a live node
                        // can be that slow, so an idempotent call is sent again
                        // until FOLLOW_FOR (a dead node's region is not served
                        // by anyone else either), then the node's error.
                        None if slow && Instant::now() < deadline => continue,
                        None => return Err(e),
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(RackClientError::StillMoving { region });
            }
        }
    }

    /// After `MOVED` from `node`: the cache may already point elsewhere (this
    /// client's own migration); else ask the controller.
    fn relearn(&self, region: u32, node: NodeId) -> Result<(), RackClientError> {
        let cached = self
            .routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&region)
            .map(|r| r.node);
        if cached != Some(node) {
            return Ok(());
        }
        let p = self.lookup(region)?;
        if p.node == node {
            // The controller still names it: a switch being committed, or a
            // new backup (re-replication) this client must write to as well.
            self.refresh_backup(region)?;
            return Ok(());
        }
        self.adopt(region, node, p.node)
    }

    /// A replicated `region` that lost its backup: if the controller names a
    /// new one (re-replication), take its chunk table from it, write to both
    /// from now on, and reopen the primary (its `Rejoin` gates held this
    /// client's changes back until it knew). Returns whether it adopted one.
    fn refresh_backup(&self, region: u32) -> Result<bool, RackClientError> {
        let degraded = self
            .routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&region)
            .is_some_and(|r| r.replicated && r.backup.is_none());
        if !degraded {
            return Ok(false);
        }
        let Message::ReplicaState(rs) = self.call_controller(Message::LookupReplicas { region })?
        else {
            return Ok(false);
        };
        if rs.backup == 0 {
            return Ok(false);
        }
        let b = rs.backup;
        let chunks = self.my_chunks(region, b)?;
        let (primary, reopen) = {
            let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
            let Some(r) = routes.get_mut(&region) else {
                return Ok(false);
            };
            if r.node != rs.primary {
                return Ok(false);
            }
            if r.backup.is_none() {
                r.backup = Some((b, chunks));
            }
            (r.node, r.chunks.values().copied().collect::<Vec<_>>())
        };
        let (_, pid) = {
            let slot = self.slot(primary).ok_or(RackClientError::UnknownNode {
                region,
                node: primary,
            })?;
            lock(&slot.share).ok_or(RackClientError::Unallocated {
                va: u64::from(region) << VREGION_SHIFT,
            })?
        };
        for nva in reopen {
            self.gate(primary, region, pid, nva, GateState::Open)?;
        }
        Ok(true)
    }

    /// `region`'s chunk table at `node`, which must hold it in this client's
    /// address space there (someone else's copy is `MovedAway`); empty when
    /// nothing of it was touched there.
    fn my_chunks(&self, region: u32, node: NodeId) -> Result<BTreeMap<u64, u64>, RackClientError> {
        let addr = self
            .slot(node)
            .ok_or(RackClientError::UnknownNode { region, node })?
            .addr;
        let pid = {
            let (g, _) = self.session(node)?;
            g.as_ref().expect("opened").pid().unwrap_or(0)
        };
        match chunk_list(&*self.links, node, addr, region)? {
            Some((_, p, chunks)) if p == pid => Ok(chunks),
            Some(_) => Err(RackClientError::MovedAway { region, node }),
            None => Ok(BTreeMap::new()),
        }
    }

    /// `region` moved from `from` to `to` by someone else (the controller's
    /// mover): take its chunk table from `to`, which holds it in this client's
    /// address space there.
    fn adopt(&self, region: u32, from: NodeId, to: NodeId) -> Result<(), RackClientError> {
        let chunks = self.my_chunks(region, to)?;
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = routes.get_mut(&region) {
            // Another thread may have adopted it already.
            if r.node == from && !r.migrating {
                r.node = to;
                r.chunks = chunks;
            }
        }
        Ok(())
    }

    /// Pieces of `[va, va + len)` that stay inside one chunk: (offset, len).
    fn pieces(va: u64, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let mut done = 0usize;
        std::iter::from_fn(move || {
            if done >= len {
                return None;
            }
            let at = va + done as u64;
            let room = (CHUNK - at % CHUNK).min(MAX_PIECE) as usize;
            let n = room.min(len - done);
            let piece = (done, n);
            done += n;
            Some(piece)
        })
    }

    /// Reads `buf.len()` bytes at rack VA `va` (split at chunk and region edges).
    pub fn rread(&self, va: u64, buf: &mut [u8]) -> Result<(), RackClientError> {
        for (off, n) in Self::pieces(va, buf.len()) {
            let part = &mut buf[off..off + n];
            self.at(va + off as u64, |s, nva| s.rread(nva, part))?;
        }
        Ok(())
    }

    /// Writes `data` at rack VA `va` (split at chunk and region edges).
    pub fn rwrite(&self, va: u64, data: &[u8]) -> Result<(), RackClientError> {
        for (off, n) in Self::pieces(va, data.len()) {
            let part = &data[off..off + n];
            self.redo(|| {
                if self.is_replicated(va + off as u64) {
                    self.write_replicated(va + off as u64, part)
                } else {
                    self.at_write(va + off as u64, |s, nva| s.rwrite(nva, part))
                }
            })?;
        }
        Ok(())
    }

    /// Runs a change again while it reports that its region gained a backup
    /// on the way (then it goes to both copies).
    fn redo<R>(
        &self,
        mut f: impl FnMut() -> Result<R, RackClientError>,
    ) -> Result<R, RackClientError> {
        loop {
            match f() {
                Err(RackClientError::Rejoined { .. }) => continue,
                r => return r,
            }
        }
    }

    fn word(va: u64) -> Result<(), RackClientError> {
        if va % 8 != 0 {
            return Err(RackClientError::InvalidArgument {
                what: "va",
                reason: "atomics act on 8-byte aligned words",
            });
        }
        Ok(())
    }

    /// Test-and-set of the word at `va`; returns the old value.
    pub fn tas(&self, va: u64) -> Result<u64, RackClientError> {
        Self::word(va)?;
        self.redo(|| {
            if self.is_replicated(va) {
                return self.atomic_replicated(va, true, |s, nva| s.tas(nva), |_| 1);
            }
            self.at_mut(va, |s, nva| s.tas(nva))
        })
    }

    /// Compare-and-swap of the word at `va`; returns the old value.
    pub fn cas(&self, va: u64, expected: u64, new: u64) -> Result<u64, RackClientError> {
        Self::word(va)?;
        self.redo(|| {
            if self.is_replicated(va) {
                return self.atomic_replicated(
                    va,
                    true,
                    |s, nva| s.cas(nva, expected, new),
                    |old| if old == expected { new } else { old },
                );
            }
            self.at_mut(va, |s, nva| s.cas(nva, expected, new))
        })
    }

    /// Fetch-and-add on the word at `va`; returns the old value.
    pub fn faa(&self, va: u64, addend: u64) -> Result<u64, RackClientError> {
        Self::word(va)?;
        self.redo(|| {
            if self.is_replicated(va) {
                return self.atomic_replicated(
                    va,
                    true,
                    |s, nva| s.faa(nva, addend),
                    |old| old.wrapping_add(addend),
                );
            }
            self.at_mut(va, |s, nva| s.faa(nva, addend))
        })
    }

    /// Takes the lock word at `va` (8-byte aligned) at the node holding it,
    /// waiting while another holder has it (the board answers `BUSY`; retried
    /// for up to [`FOLLOW_FOR`], then `Node { source: Busy }`). On a replicated
    /// region it is taken at the primary and the held word (1) is written to the
    /// backup before it is granted, so a held lock stays held on a promoted copy.
    pub fn rlock(&self, va: u64) -> Result<(), RackClientError> {
        Self::word(va)?;
        let deadline = Instant::now() + FOLLOW_FOR;
        self.redo(|| {
            if !self.is_replicated(va) {
                return self.at_mut(va, |s, nva| s.rlock(nva));
            }
            loop {
                match self.atomic_replicated(va, false, |s, nva| s.rlock(nva).map(|()| 0), |_| 1) {
                    Err(RackClientError::Node {
                        source: ClioError::Busy { .. },
                        ..
                    }) if Instant::now() < deadline => {}
                    r => return r.map(drop),
                }
            }
        })
    }

    /// Releases the lock word at `va` (after this client's earlier operations on
    /// that node). On a replicated region: at the primary, then 0 is written to
    /// the backup before it returns; after a failover, at the promoted copy.
    pub fn runlock(&self, va: u64) -> Result<(), RackClientError> {
        Self::word(va)?;
        self.redo(|| {
            if !self.is_replicated(va) {
                return self.at_mut(va, |s, nva| s.runlock(nva));
            }
            self.atomic_replicated(va, true, |s, nva| s.runlock(nva).map(|()| 1), |_| 0)
                .map(drop)
        })
    }

    fn each_open(
        &self,
        mut f: impl FnMut(&mut Session<T>) -> Result<(), ClioError>,
    ) -> Result<usize, RackClientError> {
        let mut n = 0;
        for slot in &self.nodes {
            let mut g = lock(&slot.session);
            if let Some(s) = g.as_mut() {
                f(s).map_err(|source| RackClientError::Node {
                    node: slot.id,
                    addr: slot.addr,
                    source,
                })?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// A fence on every node this client has a session with (T4 across nodes:
    /// nothing after it starts before everything before it finished, anywhere).
    /// Returns how many nodes it waited on.
    pub fn rfence(&self) -> Result<usize, RackClientError> {
        self.each_open(|s| s.rfence())
    }

    /// A release on every node this client has a session with.
    pub fn rrelease(&self) -> Result<usize, RackClientError> {
        self.each_open(|s| s.rrelease())
    }

    /// The node currently caching `region` for this client.
    pub fn owner_of(&self, region: u32) -> Option<NodeId> {
        self.routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&region)
            .map(|r| r.node)
    }

    fn gate(
        &self,
        node: NodeId,
        region: u32,
        pid: u32,
        va: u64,
        state: GateState,
    ) -> Result<(), RackClientError> {
        let addr = self.slot(node).map_or(self.ctl_addr, |s| s.addr);
        let m = Message::Gate {
            region,
            pid,
            va,
            len: CHUNK,
            state,
        };
        match self.links.control(node, addr, m) {
            Ok(Message::Ack { .. }) => Ok(()),
            Ok(other) => Err(RackClientError::Gate {
                node,
                addr,
                source: io::Error::other(format!("unexpected answer {other:?}")),
            }),
            Err(source) => Err(RackClientError::Gate { node, addr, source }),
        }
    }

    /// A second session joined to this client's address space on `node`.
    fn joined(&self, node: NodeId) -> Result<(Session<T>, u32), RackClientError> {
        let slot = self
            .slot(node)
            .ok_or(RackClientError::UnknownNode { region: 0, node })?;
        let addr = slot.addr;
        let known = *lock(&slot.share);
        let (token, pid) = match known {
            Some(k) => k,
            None => {
                drop(self.session(node)?);
                lock(&slot.share).expect("set when the session opened")
            }
        };
        let err = |source| RackClientError::Node { node, addr, source };
        let cfg = ClientConfig {
            join: Some(token),
            ..self.cfg.clone()
        };
        let j = self.links.session(node, addr, cfg).map_err(err)?;
        Ok((j, pid))
    }

    /// Relieves memory pressure: asks the controller for every node's last
    /// pressure report (heartbeats: used / (used + free) bytes), and if the most
    /// loaded live node is above `high_permille`, moves the least-used (fewest
    /// requests routed by this client) single-copy region of this client there
    /// to the least loaded live node below `low_permille`, by [`Self::migrate`].
    /// `Ok(None)`: no node over the mark, no target under it, or no movable
    /// region. The decision uses the nodes' reports; the move is done here
    /// because only the address space's owner can copy its chunks.
    pub fn shed_pressure(
        &self,
        high_permille: u64,
        low_permille: u64,
    ) -> Result<Option<Migration>, RackClientError> {
        let mut load = Vec::new();
        for node in 1..=self.nodes.len() as NodeId {
            // Dead, or no report yet: neither shed from nor moved to.
            if let Message::NodeReport {
                live: true,
                pressure: Some(p),
                ..
            } = self.call_controller(Message::NodeStatus { node })?
            {
                // In parts per million (marks are in ‰): a few touched
                // chunks of a large board still order the nodes.
                let total = u128::from(p.used_bytes) + u128::from(p.free_bytes);
                let ppm = u128::from(p.used_bytes) * 1_000_000 / total.max(1);
                load.push((ppm as u64, node));
            }
        }
        let Some(&(hot_load, over)) = load.iter().max() else {
            return Ok(None);
        };
        let Some(&(_, to)) = load
            .iter()
            .filter(|(l, _)| *l < low_permille.saturating_mul(1000))
            .min()
        else {
            return Ok(None);
        };
        if hot_load <= high_permille.saturating_mul(1000) || to == over {
            return Ok(None);
        }
        let coldest = self
            .routes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, r)| {
                r.node == over && !r.replicated && !r.migrating && !r.chunks.is_empty()
            })
            .map(|(&region, r)| (r.hits.load(std::sync::atomic::Ordering::Relaxed), region))
            .min();
        match coldest {
            Some((_, region)) => self.migrate(region, to).map(Some),
            None => Ok(None),
        }
    }

    /// Moves `region` to node `to` (see the module docs) with the default
    /// [`CopyPolicy`]: writes go on during the copy, paused for its last round
    /// only. Completed or rolled back, never half: the controller's switch is
    /// one logged change.
    pub fn migrate(&self, region: u32, to: NodeId) -> Result<Migration, RackClientError> {
        self.migrate_with(region, to, CopyPolicy::default())
    }

    /// [`Self::migrate`] with an explicit copy policy ([`CopyPolicy::PAUSED`]:
    /// writes wait for the whole copy).
    pub fn migrate_with(
        &self,
        region: u32,
        to: NodeId,
        policy: CopyPolicy,
    ) -> Result<Migration, RackClientError> {
        let (from, chunks) = {
            let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
            let r = routes
                .get_mut(&region)
                .ok_or(RackClientError::Unallocated {
                    va: u64::from(region) << VREGION_SHIFT,
                })?;
            if r.migrating {
                return Err(RackClientError::StillMoving { region });
            }
            if r.replicated {
                return Err(RackClientError::InvalidArgument {
                    what: "region",
                    reason: "replicated regions do not migrate (their copies fail over)",
                });
            }
            if r.node == to {
                return Err(RackClientError::InvalidArgument {
                    what: "to",
                    reason: "the region is on that node already",
                });
            }
            r.migrating = true;
            (r.node, r.chunks.clone())
        };
        let res = self.migrate_locked(region, from, to, &chunks, policy);
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = routes.get_mut(&region) {
            r.migrating = false;
            if let Ok((_, ref new_chunks, _)) = res {
                r.node = to;
                r.chunks = new_chunks.clone();
            }
        }
        drop(routes);
        let (m, _, paused_at) = res?;
        // Switched: everything still aimed at the source learns the move.
        let (mut src, pid) = self.joined(from)?;
        for nva in chunks.values() {
            self.gate(from, region, pid, *nva, GateState::Moved)?;
        }
        let paused = paused_at.elapsed();
        for nva in chunks.values() {
            let _ = src.rfree(*nva, CHUNK);
        }
        Ok(Migration {
            paused,
            took: m.took + paused,
            ..m
        })
    }

    /// Track, copy, pause, copy what is dirty, switch. On error before the
    /// switch everything is undone. Returns the migration, the new chunk
    /// table and when writes were paused.
    fn migrate_locked(
        &self,
        region: u32,
        from: NodeId,
        to: NodeId,
        chunks: &BTreeMap<u64, u64>,
        policy: CopyPolicy,
    ) -> Result<(Migration, BTreeMap<u64, u64>, Instant), RackClientError> {
        let from_epoch = self.lookup(region)?.epoch;
        let (mut src, pid) = self.joined(from)?;
        let (mut dst, dst_pid) = self.joined(to)?;
        let to_addr = self.slot(to).map_or(self.ctl_addr, |s| s.addr);
        // Recorded at the controller (`clio rack status`): begun, progress
        // per chunk, ended by the commit or by the rollback below.
        let id = begin_migration(
            |m| self.call_controller(m),
            self.ctl_addr,
            region,
            (from, to),
            chunks.len() as u64 * CHUNK,
            MigrationKind::Move,
        )?;
        let started = Instant::now();
        let mut gated = BTreeMap::new();
        let mut copied = BTreeMap::new();
        let mut done = None;
        let copy = (|| {
            let from_addr = self.slot(from).map_or(self.ctl_addr, |s| s.addr);
            let mut src_end = CopyEnd {
                node: from,
                addr: from_addr,
                pid,
                session: &mut src,
            };
            let mut dst_end = CopyEnd {
                node: to,
                addr: to_addr,
                pid: dst_pid,
                session: &mut dst,
            };
            // New chunks of a migrating region wait in this client: the
            // table is fixed.
            let c = copy_region(
                &*self.links,
                region,
                &|nva, state| self.gate(from, region, pid, nva, state),
                &mut || Ok(chunks.clone()),
                &mut src_end,
                &mut dst_end,
                policy,
                &mut gated,
                &mut copied,
                &mut |copied_bytes| {
                    // Best effort: the record is for the operator.
                    let _ = self.call_controller(Message::MigrationProgress { id, copied_bytes });
                },
            )?;
            done = Some(c);
            // Everything is on `to` before the switch makes it the owner.
            dst.rfence().map_err(|source| RackClientError::Node {
                node: to,
                addr: to_addr,
                source,
            })?;
            self.call_controller(Message::MoveRegion {
                region,
                from,
                from_epoch,
                to,
            })
        })();
        let switched = match copy {
            Ok(Message::Owner(p)) if p.node == to => Ok(()),
            Ok(other) => Err(RackClientError::Controller {
                addr: self.ctl_addr,
                source: io::Error::other(format!("unexpected answer to MoveRegion: {other:?}")),
            }),
            // A lost answer to the switch: the controller decides what happened.
            Err(e @ RackClientError::Controller { .. }) => match self.lookup(region) {
                Ok(p) if p.node == to => Ok(()),
                _ => Err(e),
            },
            Err(e) => Err(e),
        };
        let c = match (switched, done) {
            (Ok(()), Some(c)) => c,
            (res, _) => {
                // Roll back: the source serves again, the copies go.
                for nva in gated.values() {
                    let _ = self.gate(from, region, pid, *nva, GateState::Open);
                }
                for nva in copied.values() {
                    let _ = dst.rfree(*nva, CHUNK);
                }
                // Best effort: a record left open closes `TimedOut`.
                let _ = self.call_controller(Message::MigrationEnd {
                    id,
                    outcome: MigrationOutcome::RolledBack,
                });
                return Err(res.err().unwrap_or(RackClientError::StillMoving { region }));
            }
        };
        Ok((
            Migration {
                region,
                from,
                to,
                bytes: c.bytes,
                paused: Duration::ZERO,
                took: started.elapsed(),
                rounds: c.rounds,
            },
            copied,
            c.paused_at,
        ))
    }
}
