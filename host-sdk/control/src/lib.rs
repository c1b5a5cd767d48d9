//! Rack control-plane messages: one definition, shared by the global controller
//! (`clio-rack`), the host SDK and, later, the memory board's slow path.
//!
//! A datagram is one [`Envelope`] (magic, version, request id, [`Message`]) encoded
//! with [`postcard`] into a caller's buffer ([`Envelope::encode`]). Decoding
//! ([`Envelope::decode`]) walks the same encoding field by field, so a malformed
//! datagram yields an [`Error`] naming the field at fault (`"hello.capacity"`),
//! never a panic; values are then range-checked ([`Message::validate`]).
//!
//! `no_std` and allocation-free: lists are `heapless::Vec`s of fixed capacity.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

use core::fmt;

use serde::{Deserialize, Serialize};

pub mod auth;

/// First four bytes of every control datagram: `"CLRK"`.
pub const MAGIC: [u8; 4] = *b"CLRK";
/// Control-protocol version this crate speaks.
pub const VERSION: u16 = 5;
/// vRegion size as a power of two: 1 GiB, the unit of distribution (LegoOS, Clio §3.4.7).
pub const VREGION_SHIFT: u32 = 30;
/// vRegion size in bytes.
pub const VREGION_BYTES: u64 = 1 << VREGION_SHIFT;
/// Virtual-address bits of the rack's address space (the boards' `va.bits`).
pub const VA_BITS: u32 = 50;
/// Number of vRegions in the address space; region indices are `0..REGION_COUNT`.
pub const REGION_COUNT: u32 = 1 << (VA_BITS - VREGION_SHIFT);
/// Most regions one [`Message::Allocate`] may ask for (its answer must fit one datagram).
pub const MAX_PLACEMENTS: usize = 16;
/// Most regions one [`Message::AllocateReplicated`] may ask for (each answer
/// entry names two nodes; the answer must fit one datagram).
pub const MAX_REPLICATED: usize = 8;
/// Largest encoded envelope; a buffer of this size always suffices for [`Envelope::encode`].
pub const MAX_ENVELOPE_LEN: usize = 256;
/// Most regions one [`Message::Usage`] reports (a node with more sends several).
pub const MAX_USAGE: usize = 12;
/// Most chunks one [`Message::ChunkList`] names (longer lists come in pages).
pub const MAX_CHUNK_LIST: usize = 14;
/// Granule of a `Tracking` gate's dirty record: a change anywhere in a block
/// marks the whole block (64 KiB, the piece a mover copies at a time).
pub const DIRTY_BLOCK: u64 = 64 << 10;
/// Longest range a `Tracking` gate covers: 64 blocks (4 MiB, one rack chunk),
/// so its dirty record is one `u64` mask ([`Message::Dirty`]).
pub const MAX_TRACKED: u64 = 64 * DIRTY_BLOCK;
/// Most migrations one [`Message::MigrationList`] names (longer lists come in pages).
pub const MAX_MIGRATION_LIST: usize = 3;

/// A memory node's id: its 1-based position in the rack file; 0 is never a node.
pub type NodeId = u16;

/// A memory node's network address (IPv4 or IPv6 with a UDP port).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NodeAddr {
    /// IPv4 address and port.
    V4 {
        /// Address octets.
        ip: [u8; 4],
        /// UDP port.
        port: u16,
    },
    /// IPv6 address and port.
    V6 {
        /// Address octets.
        ip: [u8; 16],
        /// UDP port.
        port: u16,
    },
}

#[cfg(feature = "std")]
impl From<std::net::SocketAddr> for NodeAddr {
    fn from(a: std::net::SocketAddr) -> Self {
        match a {
            std::net::SocketAddr::V4(a) => NodeAddr::V4 {
                ip: a.ip().octets(),
                port: a.port(),
            },
            std::net::SocketAddr::V6(a) => NodeAddr::V6 {
                ip: a.ip().octets(),
                port: a.port(),
            },
        }
    }
}

#[cfg(feature = "std")]
impl From<NodeAddr> for std::net::SocketAddr {
    fn from(a: NodeAddr) -> Self {
        match a {
            NodeAddr::V4 { ip, port } => (std::net::Ipv4Addr::from(ip), port).into(),
            NodeAddr::V6 { ip, port } => (std::net::Ipv6Addr::from(ip), port).into(),
        }
    }
}

/// Memory pressure a node reports with each heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pressure {
    /// Physical bytes the node has mapped for its regions.
    pub used_bytes: u64,
    /// Physical bytes still free on the node.
    pub free_bytes: u64,
}

/// Where one vRegion lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// vRegion index (`va >> VREGION_SHIFT`).
    pub region: u32,
    /// Owner node.
    pub node: NodeId,
    /// The owner's current epoch (its registration generation at the controller).
    pub epoch: u32,
}

/// Where one replicated vRegion lives: its primary (which serves reads and
/// atomics) and its backup (which receives every write in parallel); `backup` 0
/// means none any more (it died, or the primary died and it was promoted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replicas {
    /// vRegion index.
    pub region: u32,
    /// Primary node.
    pub primary: NodeId,
    /// The primary's current epoch.
    pub primary_epoch: u32,
    /// Backup node; 0: none.
    pub backup: NodeId,
    /// The backup's current epoch (0 when there is none).
    pub backup_epoch: u32,
}

/// Why the controller refused a request (always sent with the [`Field`] at fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorCode {
    /// The datagram could not be decoded or a value is out of range.
    Malformed,
    /// The node id is not in the rack file.
    UnknownNode,
    /// The epoch is not the node's current one: an earlier incarnation (fenced) or
    /// one never issued.
    StaleEpoch,
    /// The node is declared dead (missed heartbeats); it must say hello again.
    NodeDead,
    /// The address differs from the rack file's for this node.
    AddressMismatch,
    /// The node reports less memory than the rack file gives it.
    CapacityMismatch,
    /// The region already has an owner.
    AlreadyAssigned,
    /// The region has no owner.
    NotAssigned,
    /// The region is owned by another node.
    NotOwner,
    /// No live node (or not enough of them) has room for the regions asked for.
    NoCapacity,
    /// The controller could not make the change durable; nothing changed.
    Storage,
    /// A reply was sent where a request was expected.
    NotARequest,
    /// The region is replicated and the request applies to single-copy regions
    /// only (a migration of a replicated region).
    Replicated,
    /// The region is paused by a migration: try again after it ends.
    Busy,
    /// (v4) The datagram's MAC does not verify under the rack key (forged,
    /// corrupted, sealed under another key, or not sealed at all).
    Unauthenticated,
    /// (v4) An authentic datagram whose sender counter is not newer than
    /// one already accepted: a replay.
    Replayed,
}

/// The field an [`ErrorCode`] is about (its dotted name via [`Field::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Field {
    /// The envelope as a whole (e.g. trailing bytes).
    Envelope,
    /// The message kind.
    Message,
    /// `hello.node`
    HelloNode,
    /// `hello.addr`
    HelloAddr,
    /// `hello.capacity`
    HelloCapacity,
    /// `heartbeat.node`
    HeartbeatNode,
    /// `heartbeat.epoch`
    HeartbeatEpoch,
    /// `heartbeat.pressure`
    HeartbeatPressure,
    /// `assign.region`
    AssignRegion,
    /// `assign.owner`
    AssignOwner,
    /// `assign.epoch`
    AssignEpoch,
    /// `release.region`
    ReleaseRegion,
    /// `release.owner`
    ReleaseOwner,
    /// `release.epoch`
    ReleaseEpoch,
    /// `lookup.region`
    LookupRegion,
    /// `allocate.bytes`
    AllocateBytes,
    /// `move.region`
    MoveRegion,
    /// `move.from`
    MoveFrom,
    /// `move.from_epoch`
    MoveFromEpoch,
    /// `move.to`
    MoveTo,
    /// `gate.region`
    GateRegion,
    /// `node_status.node`
    NodeStatusNode,
    /// `allocate_replicated.bytes`
    AllocateReplicatedBytes,
    /// `lookup_replicas.region`
    LookupReplicasRegion,
    /// `bind.region`
    BindRegion,
    /// `usage.node`
    UsageNode,
    /// `usage.epoch`
    UsageEpoch,
    /// `chunks.region`
    ChunksRegion,
    /// `plan_move.high_ppm`
    PlanMoveMarks,
    /// `add_backup.region`
    AddBackupRegion,
    /// `add_backup.backup`
    AddBackupBackup,
    /// `take_dirty.va` (no `Tracking` or `Paused` gate starts there)
    TakeDirtyVa,
    /// `migration_begin.region` (v4)
    MigrationRegion,
    /// `migration.id` (v4: no open migration has it)
    MigrationId,
    /// `probe.node` (v4)
    ProbeNode,
    /// `frame.tag` (v4: the MAC)
    FrameTag,
    /// `frame.counter` (v4: the replay counter)
    FrameCounter,
    /// `envelope.version` (v4: an authentic frame of another version)
    EnvelopeVersion,
}

impl Field {
    /// Every field, in declaration order.
    pub const ALL: [Field; 38] = [
        Field::Envelope,
        Field::Message,
        Field::HelloNode,
        Field::HelloAddr,
        Field::HelloCapacity,
        Field::HeartbeatNode,
        Field::HeartbeatEpoch,
        Field::HeartbeatPressure,
        Field::AssignRegion,
        Field::AssignOwner,
        Field::AssignEpoch,
        Field::ReleaseRegion,
        Field::ReleaseOwner,
        Field::ReleaseEpoch,
        Field::LookupRegion,
        Field::AllocateBytes,
        Field::MoveRegion,
        Field::MoveFrom,
        Field::MoveFromEpoch,
        Field::MoveTo,
        Field::GateRegion,
        Field::NodeStatusNode,
        Field::AllocateReplicatedBytes,
        Field::LookupReplicasRegion,
        Field::BindRegion,
        Field::UsageNode,
        Field::UsageEpoch,
        Field::ChunksRegion,
        Field::PlanMoveMarks,
        Field::AddBackupRegion,
        Field::AddBackupBackup,
        Field::TakeDirtyVa,
        Field::MigrationRegion,
        Field::MigrationId,
        Field::ProbeNode,
        Field::FrameTag,
        Field::FrameCounter,
        Field::EnvelopeVersion,
    ];

    /// The dotted field name, as in decoding errors.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Envelope => "envelope",
            Field::Message => "message",
            Field::HelloNode => "hello.node",
            Field::HelloAddr => "hello.addr",
            Field::HelloCapacity => "hello.capacity",
            Field::HeartbeatNode => "heartbeat.node",
            Field::HeartbeatEpoch => "heartbeat.epoch",
            Field::HeartbeatPressure => "heartbeat.pressure",
            Field::AssignRegion => "assign.region",
            Field::AssignOwner => "assign.owner",
            Field::AssignEpoch => "assign.epoch",
            Field::ReleaseRegion => "release.region",
            Field::ReleaseOwner => "release.owner",
            Field::ReleaseEpoch => "release.epoch",
            Field::LookupRegion => "lookup.region",
            Field::AllocateBytes => "allocate.bytes",
            Field::MoveRegion => "move.region",
            Field::MoveFrom => "move.from",
            Field::MoveFromEpoch => "move.from_epoch",
            Field::MoveTo => "move.to",
            Field::GateRegion => "gate.region",
            Field::NodeStatusNode => "node_status.node",
            Field::AllocateReplicatedBytes => "allocate_replicated.bytes",
            Field::LookupReplicasRegion => "lookup_replicas.region",
            Field::BindRegion => "bind.region",
            Field::UsageNode => "usage.node",
            Field::UsageEpoch => "usage.epoch",
            Field::ChunksRegion => "chunks.region",
            Field::PlanMoveMarks => "plan_move.high_ppm",
            Field::AddBackupRegion => "add_backup.region",
            Field::AddBackupBackup => "add_backup.backup",
            Field::TakeDirtyVa => "take_dirty.va",
            Field::MigrationRegion => "migration_begin.region",
            Field::MigrationId => "migration.id",
            Field::ProbeNode => "probe.node",
            Field::FrameTag => "frame.tag",
            Field::FrameCounter => "frame.counter",
            Field::EnvelopeVersion => "envelope.version",
        }
    }
}

/// A board address space a rack client uses on one node: a share token of one of
/// its live sessions (whoever holds it can join the address space).
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Space {
    /// The address space (process id) on the node.
    pub pid: u32,
    /// A live session of it.
    pub session: u16,
    /// The board's boot epoch that session was opened in.
    pub epoch: u32,
    /// That session's key (a credential).
    pub key: u64,
}

impl fmt::Debug for Space {
    // The key is a credential: keep it out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Space")
            .field("pid", &self.pid)
            .field("session", &self.session)
            .field("epoch", &self.epoch)
            .field("key", &"<secret>")
            .finish()
    }
}

/// How much one vRegion was used on a node since its previous report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionUse {
    /// vRegion index.
    pub region: u32,
    /// Chunks of it the node holds (bound board ranges).
    pub chunks: u16,
    /// Requests the node served to it since the previous report.
    pub hits: u64,
}

/// One chunk of a region on a node: its index in the region and its node VA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkVa {
    /// Chunk index within the vRegion.
    pub chunk: u16,
    /// Node VA of the board range holding it.
    pub va: u64,
}

/// A migration the controller chose: move `region` from `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveOrder {
    /// vRegion index.
    pub region: u32,
    /// Its owner (the node under pressure).
    pub from: NodeId,
    /// The owner's current epoch (for the commit's `MoveRegion`).
    pub from_epoch: u32,
    /// The less loaded node to move it to.
    pub to: NodeId,
}

/// How a memory node serves requests to one of its vRegions (set by [`Message::Gate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GateState {
    /// Served normally.
    Open,
    /// Being migrated: reads are served, everything that changes memory (writes,
    /// atomics, locks, allocations, frees) is answered `BUSY` until the move ends.
    Paused,
    /// Migrated away: every request is answered `MOVED` (the client asks the
    /// controller for the new owner).
    Moved,
    /// The region got a new backup copy: reads are served, everything that
    /// changes memory is answered `MOVED` until the region's client, having
    /// learned the backup (`LookupReplicas`), reopens it.
    Rejoin,
    /// Being copied while writes go on (v3): every request is served, and each
    /// change (write, atomic, lock) marks the [`DIRTY_BLOCK`]s it touches in
    /// the gate's dirty record, which [`Message::TakeDirty`] reads and clears;
    /// frees and offload calls are answered `BUSY`, new chunks of the region
    /// are refused `Busy`. Changing the gate to `Paused` keeps the record (the
    /// mover's last round); `Open`, `Moved` and `Rejoin` drop it. At most
    /// [`MAX_TRACKED`] bytes.
    Tracking,
}

/// How a migration ended (v4; `InProgress` while it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MigrationOutcome {
    /// Still copying (or not heard from since a controller restart).
    InProgress,
    /// Committed: the controller's `MoveRegion` switched the owner.
    Completed,
    /// The mover gave up before the commit and undid its copy.
    RolledBack,
    /// The mover fell silent before the commit (it crashed, or the
    /// controller restarted and it never reported again): the controller
    /// keeps the source as the owner and closes the record.
    TimedOut,
}

/// What a recorded copy of a region is for (v5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MigrationKind {
    /// A migration: the region moves to `to`, which owns it after the commit
    /// (`MoveRegion`).
    Move,
    /// A re-replication: a replicated region that lost its backup is copied
    /// to a new one, `to`, which is its backup after the commit (`AddBackup`);
    /// `from` stays the owner.
    Copy,
}

/// One migration as the controller records it (`clio rack status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationInfo {
    /// The controller's id for it.
    pub id: u32,
    /// vRegion index.
    pub region: u32,
    /// The giver.
    pub from: NodeId,
    /// The taker.
    pub to: NodeId,
    /// Bytes to copy (the region's chunks when it began).
    pub total_bytes: u64,
    /// Bytes copied so far, as last reported (volatile: `None` after a
    /// controller restart until the mover reports again).
    pub copied_bytes: Option<u64>,
    /// When it began (Unix ms, the controller's clock).
    pub started_unix_ms: u64,
    /// When it ended (Unix ms), if it did.
    pub ended_unix_ms: Option<u64>,
    /// How it stands.
    pub outcome: MigrationOutcome,
    /// A move or a re-replication (v5).
    pub kind: MigrationKind,
}

/// Every control-plane message. Requests go to the controller, replies come back
/// with the request's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Message {
    /// Node -> controller: register (or re-register after a restart or a partition).
    Hello {
        /// The node's id in the rack file.
        node: NodeId,
        /// The address it serves on (must match the rack file).
        addr: NodeAddr,
        /// Physical bytes it offers (at least the rack file's capacity).
        capacity: u64,
        /// The board's per-boot epoch (a new boot draws a new one).
        boot_epoch: u32,
    },
    /// Controller -> node: registered; use `epoch` in every later message.
    Welcome {
        /// The node.
        node: NodeId,
        /// Its new epoch; messages carrying an earlier one are refused.
        epoch: u32,
    },
    /// Node -> controller: alive, with its memory pressure.
    Heartbeat {
        /// The node.
        node: NodeId,
        /// Its current epoch.
        epoch: u32,
        /// Its pressure report.
        pressure: Pressure,
    },
    /// Place `region` on `owner` (an explicit placement; allocation picks nodes itself).
    AssignRegion {
        /// vRegion index.
        region: u32,
        /// Node to own it.
        owner: NodeId,
        /// The owner's current epoch (a stale one is refused).
        epoch: u32,
    },
    /// Give `region` back (its owner or a host freeing it); names owner and epoch as a fence.
    ReleaseRegion {
        /// vRegion index.
        region: u32,
        /// Its owner.
        owner: NodeId,
        /// The owner's current epoch.
        epoch: u32,
    },
    /// Which node holds `region`?
    Lookup {
        /// vRegion index.
        region: u32,
    },
    /// Assign enough fresh vRegions for `bytes` (rounded up to whole regions).
    Allocate {
        /// Bytes wanted, 1..=`MAX_PLACEMENTS` GiB.
        bytes: u64,
    },
    /// Success of a heartbeat or a release.
    Ack {
        /// The epoch the controller holds for the sender's node (0 for a release by a host).
        epoch: u32,
    },
    /// `region` is held by `node` at `epoch` (answers Lookup and AssignRegion).
    Owner(Placement),
    /// `region` has no owner.
    NotAssigned {
        /// vRegion index.
        region: u32,
    },
    /// The regions an Allocate got, in ascending region order.
    Allocated {
        /// Region, owner and epoch of each.
        placements: heapless::Vec<Placement, MAX_PLACEMENTS>,
    },
    /// The request was refused.
    Refused {
        /// Why.
        code: ErrorCode,
        /// Which field.
        field: Field,
    },
    /// Migration's commit point, to the controller: `region` changes owner from
    /// `from` to `to` in one logged change. `from_epoch` must be `from`'s current
    /// epoch (`from` may be dead: its region is then moved off it); `to` must be
    /// live with room. Answered `Owner` with the new placement (and `to`'s epoch).
    MoveRegion {
        /// vRegion index.
        region: u32,
        /// Current owner.
        from: NodeId,
        /// Its current epoch.
        from_epoch: u32,
        /// New owner.
        to: NodeId,
    },
    /// To a memory node (a datagram to its data port, told apart from Clio
    /// packets by the magic): serve the requests of address space `pid` whose VA
    /// lies in `[va, va + len)` — the node's part of vRegion `region` — as `state`
    /// says. Answered `Ack` with the node's boot epoch.
    Gate {
        /// vRegion index (the rack address space's; for reports).
        region: u32,
        /// The address space on this node.
        pid: u32,
        /// First node VA of the range.
        va: u64,
        /// Bytes in the range (at least 1).
        len: u64,
        /// How to serve it from now on.
        state: GateState,
    },
    /// Host -> controller: what do you know about `node`? (`clio rack status`)
    NodeStatus {
        /// The node.
        node: NodeId,
    },
    /// Controller -> host: the answer to `NodeStatus`.
    NodeReport {
        /// The node.
        node: NodeId,
        /// Its current epoch (0: never registered).
        epoch: u32,
        /// Registered and not declared dead.
        live: bool,
        /// vRegions it owns.
        regions: u32,
        /// Its last pressure report (none since it registered, or dead).
        pressure: Option<Pressure>,
    },
    /// Assign enough fresh vRegions for `bytes`, each on two distinct live nodes
    /// (primary and backup). Answered `AllocatedReplicated`.
    AllocateReplicated {
        /// Bytes wanted, 1..=`MAX_REPLICATED` GiB.
        bytes: u64,
    },
    /// The replicated regions an `AllocateReplicated` got, in ascending order.
    AllocatedReplicated {
        /// Region, primary and backup of each.
        sets: heapless::Vec<Replicas, MAX_REPLICATED>,
    },
    /// Who holds `region`, with its backup if it is replicated? Answered
    /// `ReplicaState` (backup 0 for a single-copy region) or `NotAssigned`.
    LookupReplicas {
        /// vRegion index.
        region: u32,
    },
    /// The answer to `LookupReplicas`.
    ReplicaState(Replicas),
    /// To a memory node: the board range `[va, va + len)` of address space `pid`
    /// holds chunk `chunk` of vRegion `region` (sent when a chunk is first
    /// taken, so the node can count accesses per region and export it).
    /// Answered `Ack` (the boot epoch); refused `NotOwner` if the region was
    /// migrated away from this address space (unless `import`: a mover placing
    /// a copy here), `Busy` while the region is paused by a migration.
    Bind {
        /// vRegion index.
        region: u32,
        /// Chunk index within it.
        chunk: u16,
        /// Address space on the node.
        pid: u32,
        /// First node VA.
        va: u64,
        /// Bytes (at least 1).
        len: u64,
        /// A migration's copy: clears an earlier "migrated away" mark.
        import: bool,
    },
    /// Node -> controller, after each heartbeat: per-region use since the
    /// previous report (every region it holds chunks of; in pages of
    /// [`MAX_USAGE`]). Answered `Ack`.
    Usage {
        /// The node.
        node: NodeId,
        /// Its current epoch.
        epoch: u32,
        /// Regions, ascending.
        regions: heapless::Vec<RegionUse, MAX_USAGE>,
    },
    /// To a memory node: record `space` as rack client `client`'s address space
    /// here (first registration wins). Answered `SpaceOf` with the winner.
    Register {
        /// The rack client's id (random, chosen by the client).
        client: u64,
        /// Its address space.
        space: Space,
    },
    /// To a memory node: which address space does rack client `client` use here?
    /// Answered `SpaceOf`.
    FindSpace {
        /// The rack client's id.
        client: u64,
    },
    /// The answer to `Register` and `FindSpace` (`None`: no space yet).
    SpaceOf {
        /// The rack client's id.
        client: u64,
        /// Its address space on this node.
        space: Option<Space>,
    },
    /// To a memory node: the chunks it holds of `region`, from chunk index
    /// `from` on. Answered `ChunkList` or `NotAssigned`.
    Chunks {
        /// vRegion index.
        region: u32,
        /// First chunk index wanted.
        from: u16,
    },
    /// The answer to `Chunks`: one page of the region's chunks on the node.
    ChunkList {
        /// vRegion index.
        region: u32,
        /// The rack client whose address space holds them (0: unregistered).
        client: u64,
        /// That address space.
        pid: u32,
        /// Chunks, ascending.
        chunks: heapless::Vec<ChunkVa, MAX_CHUNK_LIST>,
        /// Where the next page starts (`None`: this was the last).
        next: Option<u16>,
    },
    /// Mover -> controller: is a node over `high_ppm` (used / total physical
    /// bytes, parts per million) with a single-copy region to move to a node
    /// under `low_ppm`? Answered `MovePlan`.
    PlanMove {
        /// Pressure above which a node sheds a region.
        high_ppm: u32,
        /// Pressure below which a node may receive one.
        low_ppm: u32,
    },
    /// The answer to `PlanMove`: the least used region of the most loaded node
    /// and the least loaded target, or `None`.
    MovePlan(Option<MoveOrder>),
    /// Mover -> controller: a replicated region that lost a copy, and a node
    /// for its new backup? Answered `ReplicaPlan`.
    PlanReplica,
    /// The answer to `PlanReplica`: the region, its primary and the chosen new
    /// backup, or `None`.
    ReplicaPlan(Option<Replicas>),
    /// Mover -> controller, re-replication's commit point: `backup` (live, with
    /// room) holds a full copy of `region`, whose single copy is on `primary`
    /// at `primary_epoch`; from now on it is the region's backup (one logged
    /// change). Answered `ReplicaState`.
    AddBackup {
        /// vRegion index.
        region: u32,
        /// Its primary.
        primary: NodeId,
        /// The primary's current epoch.
        primary_epoch: u32,
        /// The new backup.
        backup: NodeId,
    },
    /// To a memory node (v3): the dirty record of the `Tracking` (or, after
    /// it, `Paused`) gate of address space `pid` starting at node VA `va`,
    /// read and cleared in one step. Answered `Dirty`, or `Refused
    /// { NotAssigned, TakeDirtyVa }` if no such gate tracks.
    TakeDirty {
        /// vRegion index.
        region: u32,
        /// The address space on this node.
        pid: u32,
        /// First node VA of the gate's range.
        va: u64,
    },
    /// The answer to `TakeDirty`: bit `i` set = block `i` ([`DIRTY_BLOCK`]
    /// bytes from the gate's start) changed since the previous `TakeDirty`
    /// (or since the gate began tracking).
    Dirty {
        /// The dirty blocks.
        mask: u64,
    },
    /// Mover -> controller (v4): a migration of `region` from `from` to `to`
    /// begins (`total_bytes` to copy); with `kind` `Copy` (v5), a
    /// re-replication of it to the new backup `to`. Logged; answered
    /// `MigrationId`, or refused `NotOwner` (the region is not `from`'s),
    /// `UnknownNode`, or `Busy` (another migration of it is open).
    MigrationBegin {
        /// vRegion index.
        region: u32,
        /// Its owner.
        from: NodeId,
        /// Where it goes.
        to: NodeId,
        /// Bytes to copy.
        total_bytes: u64,
        /// A move, or a copy to a new backup (v5).
        kind: MigrationKind,
    },
    /// The answer to `MigrationBegin`.
    MigrationId {
        /// The migration's id.
        id: u32,
    },
    /// Mover -> controller (v4): `copied_bytes` of migration `id` are copied
    /// (not logged). Answered `Ack`, or refused `NotAssigned` if no open
    /// migration has that id.
    MigrationProgress {
        /// The migration.
        id: u32,
        /// Bytes copied so far.
        copied_bytes: u64,
    },
    /// Mover -> controller (v4): migration `id` ended without a commit
    /// (`RolledBack`). Logged; answered `Ack`. (A commit ends the region's
    /// open migration `Completed` in the same logged change: `MoveRegion` a
    /// move, `AddBackup` a copy.)
    MigrationEnd {
        /// The migration.
        id: u32,
        /// How it ended.
        outcome: MigrationOutcome,
    },
    /// Host -> controller (v4): the migrations it records, open ones first
    /// (ascending id), then the most recent ended ones (newest first), from
    /// position `from` on. Answered `MigrationList`.
    Migrations {
        /// First position wanted.
        from: u32,
    },
    /// The answer to `Migrations`: one page.
    MigrationList {
        /// The migrations.
        entries: heapless::Vec<MigrationInfo, MAX_MIGRATION_LIST>,
        /// Where the next page starts (`None`: this was the last).
        next: Option<u32>,
    },
    /// Controller -> memory node (v4): are you there? For nodes that cannot
    /// originate datagrams (a board's fast path only answers senders), the
    /// controller registers them and keeps them alive by asking. `node` is
    /// the id the rack file gives the address probed; `epoch` the epoch the
    /// controller holds for the node (0: none granted yet). Answered `NodeInfo`.
    Probe {
        /// The node's id in the rack file.
        node: NodeId,
        /// Its epoch at the controller (0: not registered, or fenced).
        epoch: u32,
    },
    /// Memory node -> controller (v4): the answer to `Probe`: what a `Hello`
    /// and a `Heartbeat` would carry.
    NodeInfo {
        /// The id the probe named.
        node: NodeId,
        /// The board's per-boot epoch.
        boot_epoch: u32,
        /// The epoch the node last learned from a probe (0: none).
        epoch: u32,
        /// Bytes it offers.
        capacity: u64,
        /// Its memory pressure.
        pressure: Pressure,
    },
}

impl Message {
    /// Whether this message is a request to the controller.
    pub const fn is_request(&self) -> bool {
        matches!(
            self,
            Message::Hello { .. }
                | Message::Heartbeat { .. }
                | Message::AssignRegion { .. }
                | Message::ReleaseRegion { .. }
                | Message::Lookup { .. }
                | Message::Allocate { .. }
                | Message::MoveRegion { .. }
                | Message::Gate { .. }
                | Message::NodeStatus { .. }
                | Message::AllocateReplicated { .. }
                | Message::LookupReplicas { .. }
                | Message::Bind { .. }
                | Message::Usage { .. }
                | Message::Register { .. }
                | Message::FindSpace { .. }
                | Message::Chunks { .. }
                | Message::PlanMove { .. }
                | Message::PlanReplica
                | Message::AddBackup { .. }
                | Message::TakeDirty { .. }
                | Message::MigrationBegin { .. }
                | Message::MigrationProgress { .. }
                | Message::MigrationEnd { .. }
                | Message::Migrations { .. }
                | Message::Probe { .. }
        )
    }

    /// Range checks beyond the encoding: node ids are non-zero, regions are below
    /// [`REGION_COUNT`], sizes are non-zero and bounded.
    pub fn validate(&self) -> Result<(), Error> {
        fn node(field: &'static str, n: NodeId) -> Result<(), Error> {
            if n == 0 {
                Err(Error::new(
                    field,
                    ErrorKind::OutOfRange {
                        value: 0,
                        min: 1,
                        max: u64::from(NodeId::MAX),
                    },
                ))
            } else {
                Ok(())
            }
        }
        fn region(field: &'static str, r: u32) -> Result<(), Error> {
            if r >= REGION_COUNT {
                Err(Error::new(
                    field,
                    ErrorKind::OutOfRange {
                        value: u64::from(r),
                        min: 0,
                        max: u64::from(REGION_COUNT - 1),
                    },
                ))
            } else {
                Ok(())
            }
        }
        fn replicas(field: &'static str, s: &Replicas) -> Result<(), Error> {
            region(field, s.region)?;
            node(field, s.primary)?;
            if s.backup == s.primary {
                return Err(Error::new(field, ErrorKind::Inconsistent));
            }
            Ok(())
        }
        match self {
            Message::Hello {
                node: n, capacity, ..
            } => {
                node("hello.node", *n)?;
                if *capacity < VREGION_BYTES {
                    return Err(Error::new(
                        "hello.capacity",
                        ErrorKind::OutOfRange {
                            value: *capacity,
                            min: VREGION_BYTES,
                            max: u64::MAX,
                        },
                    ));
                }
                Ok(())
            }
            Message::Welcome { node: n, .. } => node("welcome.node", *n),
            Message::Heartbeat {
                node: n, pressure, ..
            } => {
                node("heartbeat.node", *n)?;
                if pressure
                    .used_bytes
                    .checked_add(pressure.free_bytes)
                    .is_none()
                {
                    return Err(Error::new("heartbeat.pressure", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::AssignRegion {
                region: r, owner, ..
            } => {
                region("assign.region", *r)?;
                node("assign.owner", *owner)
            }
            Message::ReleaseRegion {
                region: r, owner, ..
            } => {
                region("release.region", *r)?;
                node("release.owner", *owner)
            }
            Message::Lookup { region: r } => region("lookup.region", *r),
            Message::Allocate { bytes } => {
                let max = MAX_PLACEMENTS as u64 * VREGION_BYTES;
                if *bytes == 0 || *bytes > max {
                    return Err(Error::new(
                        "allocate.bytes",
                        ErrorKind::OutOfRange {
                            value: *bytes,
                            min: 1,
                            max,
                        },
                    ));
                }
                Ok(())
            }
            Message::Ack { .. } | Message::Refused { .. } => Ok(()),
            Message::MoveRegion {
                region: r,
                from,
                to,
                ..
            } => {
                region("move.region", *r)?;
                node("move.from", *from)?;
                node("move.to", *to)?;
                if from == to {
                    return Err(Error::new("move.to", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::NodeStatus { node: n } => node("node_status.node", *n),
            Message::NodeReport { node: n, .. } => node("node_report.node", *n),
            Message::Gate {
                region: r,
                va,
                len,
                state,
                ..
            } => {
                region("gate.region", *r)?;
                if *state == GateState::Tracking && *len > MAX_TRACKED {
                    return Err(Error::new(
                        "gate.len",
                        ErrorKind::OutOfRange {
                            value: *len,
                            min: 1,
                            max: MAX_TRACKED,
                        },
                    ));
                }
                if *len == 0 || va.checked_add(*len).is_none() {
                    return Err(Error::new(
                        "gate.len",
                        ErrorKind::OutOfRange {
                            value: *len,
                            min: 1,
                            max: u64::MAX - *va,
                        },
                    ));
                }
                Ok(())
            }
            Message::AllocateReplicated { bytes } => {
                let max = MAX_REPLICATED as u64 * VREGION_BYTES;
                if *bytes == 0 || *bytes > max {
                    return Err(Error::new(
                        "allocate_replicated.bytes",
                        ErrorKind::OutOfRange {
                            value: *bytes,
                            min: 1,
                            max,
                        },
                    ));
                }
                Ok(())
            }
            Message::LookupReplicas { region: r } => region("lookup_replicas.region", *r),
            Message::ReplicaState(s) => replicas("replica_state", s),
            Message::AllocatedReplicated { sets } => {
                for (i, s) in sets.iter().enumerate() {
                    replicas("allocated_replicated.sets", s)?;
                    if i > 0 && sets[i - 1].region >= s.region {
                        return Err(Error::new(
                            "allocated_replicated.sets.region",
                            ErrorKind::Inconsistent,
                        ));
                    }
                }
                Ok(())
            }
            Message::Owner(p) => {
                region("owner.region", p.region)?;
                node("owner.node", p.node)
            }
            Message::NotAssigned { region: r } => region("not_assigned.region", *r),
            Message::Bind {
                region: r, va, len, ..
            } => {
                region("bind.region", *r)?;
                if *len == 0 || va.checked_add(*len).is_none() {
                    return Err(Error::new(
                        "bind.len",
                        ErrorKind::OutOfRange {
                            value: *len,
                            min: 1,
                            max: u64::MAX - *va,
                        },
                    ));
                }
                Ok(())
            }
            Message::Usage {
                node: n, regions, ..
            } => {
                node("usage.node", *n)?;
                for (i, u) in regions.iter().enumerate() {
                    region("usage.regions.region", u.region)?;
                    if i > 0 && regions[i - 1].region >= u.region {
                        return Err(Error::new("usage.regions.region", ErrorKind::Inconsistent));
                    }
                }
                Ok(())
            }
            Message::Register { .. } | Message::FindSpace { .. } | Message::SpaceOf { .. } => {
                Ok(())
            }
            Message::Chunks { region: r, .. } => region("chunks.region", *r),
            Message::ChunkList {
                region: r,
                chunks,
                next,
                ..
            } => {
                region("chunk_list.region", *r)?;
                for (i, c) in chunks.iter().enumerate() {
                    if i > 0 && chunks[i - 1].chunk >= c.chunk {
                        return Err(Error::new("chunk_list.chunks", ErrorKind::Inconsistent));
                    }
                }
                if let (Some(n), Some(last)) = (next, chunks.last()) {
                    if *n <= last.chunk {
                        return Err(Error::new("chunk_list.next", ErrorKind::Inconsistent));
                    }
                }
                Ok(())
            }
            Message::PlanMove { high_ppm, low_ppm } => {
                if *high_ppm > 1_000_000 || low_ppm > high_ppm {
                    return Err(Error::new(
                        "plan_move.high_ppm",
                        ErrorKind::OutOfRange {
                            value: u64::from(*high_ppm),
                            min: u64::from(*low_ppm),
                            max: 1_000_000,
                        },
                    ));
                }
                Ok(())
            }
            Message::MovePlan(None) | Message::PlanReplica | Message::ReplicaPlan(None) => Ok(()),
            Message::ReplicaPlan(Some(s)) => {
                replicas("replica_plan", s)?;
                node("replica_plan.backup", s.backup)
            }
            Message::AddBackup {
                region: r,
                primary,
                backup,
                ..
            } => {
                region("add_backup.region", *r)?;
                node("add_backup.primary", *primary)?;
                node("add_backup.backup", *backup)?;
                if primary == backup {
                    return Err(Error::new("add_backup.backup", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::TakeDirty { region: r, .. } => region("take_dirty.region", *r),
            Message::Dirty { .. } => Ok(()),
            Message::MigrationBegin {
                region: r,
                from,
                to,
                ..
            } => {
                region("migration_begin.region", *r)?;
                node("migration_begin.from", *from)?;
                node("migration_begin.to", *to)?;
                if from == to {
                    return Err(Error::new("migration_begin.to", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::MigrationEnd { outcome, .. } => {
                if matches!(
                    outcome,
                    MigrationOutcome::InProgress | MigrationOutcome::Completed
                ) {
                    // Only a commit completes a migration; an open one is not an end.
                    return Err(Error::new("migration_end.outcome", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::MigrationId { .. }
            | Message::MigrationProgress { .. }
            | Message::Migrations { .. } => Ok(()),
            Message::MigrationList { entries, .. } => {
                for m in entries {
                    region("migration_list.entries.region", m.region)?;
                    node("migration_list.entries.from", m.from)?;
                    node("migration_list.entries.to", m.to)?;
                }
                Ok(())
            }
            Message::Probe { node: n, .. } => node("probe.node", *n),
            Message::NodeInfo {
                node: n, pressure, ..
            } => {
                node("node_info.node", *n)?;
                if pressure
                    .used_bytes
                    .checked_add(pressure.free_bytes)
                    .is_none()
                {
                    return Err(Error::new("node_info.pressure", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::MovePlan(Some(o)) => {
                region("move_plan.region", o.region)?;
                node("move_plan.from", o.from)?;
                node("move_plan.to", o.to)?;
                if o.from == o.to {
                    return Err(Error::new("move_plan.to", ErrorKind::Inconsistent));
                }
                Ok(())
            }
            Message::Allocated { placements } => {
                for (i, p) in placements.iter().enumerate() {
                    region("allocated.placements.region", p.region)?;
                    node("allocated.placements.node", p.node)?;
                    if i > 0 && placements[i - 1].region >= p.region {
                        return Err(Error::new(
                            "allocated.placements.region",
                            ErrorKind::Inconsistent,
                        ));
                    }
                }
                Ok(())
            }
        }
    }
}

/// One control datagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Always [`MAGIC`].
    pub magic: [u8; 4],
    /// Always [`VERSION`] for this crate.
    pub version: u16,
    /// Chosen by the requester; the reply carries the same id.
    pub request_id: u32,
    /// The message.
    pub message: Message,
}

impl Envelope {
    /// An envelope of this version around `message`.
    pub const fn new(request_id: u32, message: Message) -> Self {
        Envelope {
            magic: MAGIC,
            version: VERSION,
            request_id,
            message,
        }
    }

    /// Encodes into `buf` (postcard), returning the used prefix.
    /// [`MAX_ENVELOPE_LEN`] bytes always suffice.
    pub fn encode<'b>(&self, buf: &'b mut [u8]) -> Result<&'b mut [u8], Error> {
        postcard::to_slice(self, buf)
            .map_err(|e| Error::new("envelope", ErrorKind::from_postcard(e)))
    }

    /// The request id of a datagram whose magic, version and id decode, even if the
    /// message after them does not (so a refusal can carry the right id).
    pub fn peek_request_id(bytes: &[u8]) -> Option<u32> {
        let mut r = Reader { rest: bytes };
        let magic: [u8; 4] = r.take("envelope.magic").ok()?;
        let version: u16 = r.take("envelope.version").ok()?;
        if magic != MAGIC || version != VERSION {
            return None;
        }
        r.take("envelope.request_id").ok()
    }

    /// Decodes and validates one datagram. Trailing bytes are an error.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, Error> {
        let mut r = Reader { rest: bytes };
        let magic: [u8; 4] = r.take("envelope.magic")?;
        if magic != MAGIC {
            return Err(Error::new(
                "envelope.magic",
                ErrorKind::Unknown(u64::from(u32::from_be_bytes(magic))),
            ));
        }
        let version: u16 = r.take("envelope.version")?;
        if version != VERSION {
            return Err(Error::new(
                "envelope.version",
                ErrorKind::Unknown(u64::from(version)),
            ));
        }
        let request_id: u32 = r.take("envelope.request_id")?;
        let message = decode_message(&mut r)?;
        if !r.rest.is_empty() {
            return Err(Error::new(
                "envelope",
                ErrorKind::TrailingBytes(r.rest.len()),
            ));
        }
        message.validate()?;
        Ok(Envelope {
            magic,
            version,
            request_id,
            message,
        })
    }
}

/// Postcard's encoding of the message, walked field by field so errors name the field.
/// The variant order here is the declaration order of [`Message`] (postcard encodes
/// the variant index as a varint); the round-trip tests hold the two together.
fn decode_message(r: &mut Reader<'_>) -> Result<Message, Error> {
    let kind: u32 = r.take("message")?;
    Ok(match kind {
        0 => Message::Hello {
            node: r.take("hello.node")?,
            addr: r.take("hello.addr")?,
            capacity: r.take("hello.capacity")?,
            boot_epoch: r.take("hello.boot_epoch")?,
        },
        1 => Message::Welcome {
            node: r.take("welcome.node")?,
            epoch: r.take("welcome.epoch")?,
        },
        2 => Message::Heartbeat {
            node: r.take("heartbeat.node")?,
            epoch: r.take("heartbeat.epoch")?,
            pressure: r.take("heartbeat.pressure")?,
        },
        3 => Message::AssignRegion {
            region: r.take("assign.region")?,
            owner: r.take("assign.owner")?,
            epoch: r.take("assign.epoch")?,
        },
        4 => Message::ReleaseRegion {
            region: r.take("release.region")?,
            owner: r.take("release.owner")?,
            epoch: r.take("release.epoch")?,
        },
        5 => Message::Lookup {
            region: r.take("lookup.region")?,
        },
        6 => Message::Allocate {
            bytes: r.take("allocate.bytes")?,
        },
        7 => Message::Ack {
            epoch: r.take("ack.epoch")?,
        },
        8 => Message::Owner(r.take("owner")?),
        9 => Message::NotAssigned {
            region: r.take("not_assigned.region")?,
        },
        10 => Message::Allocated {
            placements: r.take("allocated.placements")?,
        },
        11 => Message::Refused {
            code: r.take("refused.code")?,
            field: r.take("refused.field")?,
        },
        12 => Message::MoveRegion {
            region: r.take("move.region")?,
            from: r.take("move.from")?,
            from_epoch: r.take("move.from_epoch")?,
            to: r.take("move.to")?,
        },
        13 => Message::Gate {
            region: r.take("gate.region")?,
            pid: r.take("gate.pid")?,
            va: r.take("gate.va")?,
            len: r.take("gate.len")?,
            state: r.take("gate.state")?,
        },
        14 => Message::NodeStatus {
            node: r.take("node_status.node")?,
        },
        15 => Message::NodeReport {
            node: r.take("node_report.node")?,
            epoch: r.take("node_report.epoch")?,
            live: r.take("node_report.live")?,
            regions: r.take("node_report.regions")?,
            pressure: r.take("node_report.pressure")?,
        },
        16 => Message::AllocateReplicated {
            bytes: r.take("allocate_replicated.bytes")?,
        },
        17 => Message::AllocatedReplicated {
            sets: r.take("allocated_replicated.sets")?,
        },
        18 => Message::LookupReplicas {
            region: r.take("lookup_replicas.region")?,
        },
        19 => Message::ReplicaState(r.take("replica_state")?),
        20 => Message::Bind {
            region: r.take("bind.region")?,
            chunk: r.take("bind.chunk")?,
            pid: r.take("bind.pid")?,
            va: r.take("bind.va")?,
            len: r.take("bind.len")?,
            import: r.take("bind.import")?,
        },
        21 => Message::Usage {
            node: r.take("usage.node")?,
            epoch: r.take("usage.epoch")?,
            regions: r.take("usage.regions")?,
        },
        22 => Message::Register {
            client: r.take("register.client")?,
            space: r.take("register.space")?,
        },
        23 => Message::FindSpace {
            client: r.take("find_space.client")?,
        },
        24 => Message::SpaceOf {
            client: r.take("space_of.client")?,
            space: r.take("space_of.space")?,
        },
        25 => Message::Chunks {
            region: r.take("chunks.region")?,
            from: r.take("chunks.from")?,
        },
        26 => Message::ChunkList {
            region: r.take("chunk_list.region")?,
            client: r.take("chunk_list.client")?,
            pid: r.take("chunk_list.pid")?,
            chunks: r.take("chunk_list.chunks")?,
            next: r.take("chunk_list.next")?,
        },
        27 => Message::PlanMove {
            high_ppm: r.take("plan_move.high_ppm")?,
            low_ppm: r.take("plan_move.low_ppm")?,
        },
        28 => Message::MovePlan(r.take("move_plan")?),
        29 => Message::PlanReplica,
        30 => Message::ReplicaPlan(r.take("replica_plan")?),
        31 => Message::AddBackup {
            region: r.take("add_backup.region")?,
            primary: r.take("add_backup.primary")?,
            primary_epoch: r.take("add_backup.primary_epoch")?,
            backup: r.take("add_backup.backup")?,
        },
        32 => Message::TakeDirty {
            region: r.take("take_dirty.region")?,
            pid: r.take("take_dirty.pid")?,
            va: r.take("take_dirty.va")?,
        },
        33 => Message::Dirty {
            mask: r.take("dirty.mask")?,
        },
        34 => Message::MigrationBegin {
            region: r.take("migration_begin.region")?,
            from: r.take("migration_begin.from")?,
            to: r.take("migration_begin.to")?,
            total_bytes: r.take("migration_begin.total_bytes")?,
            kind: r.take("migration_begin.kind")?,
        },
        35 => Message::MigrationId {
            id: r.take("migration_id.id")?,
        },
        36 => Message::MigrationProgress {
            id: r.take("migration_progress.id")?,
            copied_bytes: r.take("migration_progress.copied_bytes")?,
        },
        37 => Message::MigrationEnd {
            id: r.take("migration_end.id")?,
            outcome: r.take("migration_end.outcome")?,
        },
        38 => Message::Migrations {
            from: r.take("migrations.from")?,
        },
        39 => Message::MigrationList {
            entries: r.take("migration_list.entries")?,
            next: r.take("migration_list.next")?,
        },
        40 => Message::Probe {
            node: r.take("probe.node")?,
            epoch: r.take("probe.epoch")?,
        },
        41 => Message::NodeInfo {
            node: r.take("node_info.node")?,
            boot_epoch: r.take("node_info.boot_epoch")?,
            epoch: r.take("node_info.epoch")?,
            capacity: r.take("node_info.capacity")?,
            pressure: r.take("node_info.pressure")?,
        },
        other => return Err(Error::new("message", ErrorKind::Unknown(u64::from(other)))),
    })
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take<T: Deserialize<'a>>(&mut self, field: &'static str) -> Result<T, Error> {
        match postcard::take_from_bytes::<T>(self.rest) {
            Ok((v, rest)) => {
                self.rest = rest;
                Ok(v)
            }
            Err(e) => Err(Error::new(field, ErrorKind::from_postcard(e))),
        }
    }
}

/// A message that could not be encoded or decoded, naming the field at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    /// Dotted field name, e.g. `"hello.capacity"`.
    pub field: &'static str,
    /// What is wrong with it.
    pub kind: ErrorKind,
}

impl Error {
    /// Shorthand constructor.
    pub const fn new(field: &'static str, kind: ErrorKind) -> Self {
        Error { field, kind }
    }
}

/// What is wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The datagram ends inside the field.
    Truncated,
    /// A tag or magic value no version defines.
    Unknown(u64),
    /// A value outside its allowed range.
    OutOfRange {
        /// The value found.
        value: u64,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// Bytes that are not a valid encoding (bad varint, bool, list too long).
    Malformed,
    /// Fields that disagree with each other.
    Inconsistent,
    /// Bytes left after the message.
    TrailingBytes(usize),
    /// The output buffer is too small (encoding only).
    BufferFull,
}

impl ErrorKind {
    fn from_postcard(e: postcard::Error) -> Self {
        match e {
            postcard::Error::DeserializeUnexpectedEnd => ErrorKind::Truncated,
            postcard::Error::SerializeBufferFull => ErrorKind::BufferFull,
            _ => ErrorKind::Malformed,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Truncated => write!(f, "{}: datagram ends inside this field", self.field),
            ErrorKind::Unknown(v) => write!(f, "{}: unknown value {v:#x}", self.field),
            ErrorKind::OutOfRange { value, min, max } => {
                write!(
                    f,
                    "{}: value {value} out of range {min}..={max}",
                    self.field
                )
            }
            ErrorKind::Malformed => write!(f, "{}: malformed encoding", self.field),
            ErrorKind::Inconsistent => write!(f, "{}: inconsistent with other fields", self.field),
            ErrorKind::TrailingBytes(n) => write!(f, "{}: {n} bytes after the message", self.field),
            ErrorKind::BufferFull => write!(f, "{}: output buffer too small", self.field),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_lookup_bytes() {
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let e = Envelope::new(7, Message::Lookup { region: 300 });
        let b = e.encode(&mut buf).unwrap();
        // magic, version 4, id 7, kind 5, region 300 as varint (0xac 0x02)
        assert_eq!(&b[..], &[b'C', b'L', b'R', b'K', 5, 7, 5, 0xac, 0x02]);
        assert_eq!(Envelope::decode(b).unwrap(), e);
    }

    #[test]
    fn a_v2_datagram_is_refused_naming_the_version() {
        // v3 added `GateState::Tracking`, `TakeDirty` and `Dirty`: a v2 peer
        // would misread them, so its datagrams are refused as a whole.
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = Envelope::new(9, Message::Lookup { region: 1 })
            .encode(&mut buf)
            .unwrap()
            .len();
        buf[4] = 2;
        let e = Envelope::decode(&buf[..n]).unwrap_err();
        assert_eq!(e.field, "envelope.version");
        assert_eq!(e.kind, ErrorKind::Unknown(2));
        assert_eq!(Envelope::peek_request_id(&buf[..n]), None);
    }

    #[test]
    fn a_tracking_gate_is_at_most_one_mask_long() {
        let gate = |len| Message::Gate {
            region: 1,
            pid: 1,
            va: 0,
            len,
            state: GateState::Tracking,
        };
        assert!(gate(MAX_TRACKED).validate().is_ok());
        assert_eq!(
            gate(MAX_TRACKED + 1).validate().unwrap_err().field,
            "gate.len"
        );
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let e = Envelope::new(3, Message::Dirty { mask: u64::MAX });
        let b = e.encode(&mut buf).unwrap();
        assert_eq!(Envelope::decode(b).unwrap(), e);
    }

    #[test]
    fn errors_name_the_field() {
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let e = Envelope::new(
            1,
            Message::Hello {
                node: 1,
                addr: NodeAddr::V4 {
                    ip: [10, 0, 0, 2],
                    port: 7700,
                },
                capacity: 0,
                boot_epoch: 3,
            },
        );
        let n = e.encode(&mut buf).unwrap().len();
        assert_eq!(
            Envelope::decode(&buf[..n]).unwrap_err().field,
            "hello.capacity"
        );
        assert_eq!(
            Envelope::decode(&buf[..n - 1]).unwrap_err().field,
            "hello.boot_epoch"
        );
        assert_eq!(
            Envelope::decode(&buf[..3]).unwrap_err().field,
            "envelope.magic"
        );
        buf[4] = 1;
        assert_eq!(
            Envelope::decode(&buf[..n]).unwrap_err().field,
            "envelope.version"
        );
        let mut b = [0u8; MAX_ENVELOPE_LEN];
        let n = Envelope::new(
            1,
            Message::Lookup {
                region: REGION_COUNT,
            },
        )
        .encode(&mut b)
        .unwrap()
        .len();
        let err = Envelope::decode(&b[..n]).unwrap_err();
        assert_eq!(err.field, "lookup.region");
        assert!(err
            .to_string()
            .starts_with("lookup.region: value 1048576 out of range"));
        let n = Envelope::new(1, Message::Allocate { bytes: 17 << 30 })
            .encode(&mut b)
            .unwrap()
            .len();
        assert_eq!(
            Envelope::decode(&b[..n]).unwrap_err().field,
            "allocate.bytes"
        );
        b[n] = 0;
        assert_eq!(
            Envelope::decode(&b[..n + 1]).unwrap_err().kind,
            ErrorKind::TrailingBytes(1)
        );
        assert_eq!(
            Envelope::decode(&b[..n]).unwrap_err().kind,
            ErrorKind::OutOfRange {
                value: 17 << 30,
                min: 1,
                max: 16 << 30
            }
        );
    }

    #[test]
    fn largest_replicated_answer_fits() {
        let mut sets = heapless::Vec::new();
        for i in 0..MAX_REPLICATED {
            sets.push(Replicas {
                region: REGION_COUNT - 1 - (MAX_REPLICATED - i) as u32,
                primary: u16::MAX,
                primary_epoch: u32::MAX,
                backup: u16::MAX - 1,
                backup_epoch: u32::MAX,
            })
            .unwrap();
        }
        let e = Envelope::new(u32::MAX, Message::AllocatedReplicated { sets });
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = e.encode(&mut buf).unwrap().len();
        assert!(n <= auth::MAX_BODY_LEN, "{n}");
        assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e);
        let bad = Envelope::new(
            1,
            Message::ReplicaState(Replicas {
                region: 3,
                primary: 2,
                primary_epoch: 1,
                backup: 2,
                backup_epoch: 1,
            }),
        );
        let n = bad.encode(&mut buf).unwrap().len();
        let err = Envelope::decode(&buf[..n]).unwrap_err();
        assert_eq!(
            (err.field, err.kind),
            ("replica_state", ErrorKind::Inconsistent)
        );
    }

    #[test]
    fn largest_usage_and_chunk_list_fit() {
        let mut regions = heapless::Vec::new();
        for i in 0..MAX_USAGE {
            regions
                .push(RegionUse {
                    region: REGION_COUNT - 1 - (MAX_USAGE - i) as u32,
                    chunks: u16::MAX,
                    hits: u64::MAX,
                })
                .unwrap();
        }
        let mut chunks = heapless::Vec::new();
        for i in 0..MAX_CHUNK_LIST {
            chunks
                .push(ChunkVa {
                    chunk: u16::MAX - 1 - (MAX_CHUNK_LIST - i) as u16,
                    va: u64::MAX,
                })
                .unwrap();
        }
        let space = Space {
            pid: u32::MAX,
            session: u16::MAX,
            epoch: u32::MAX,
            key: u64::MAX,
        };
        for m in [
            Message::Usage {
                node: u16::MAX,
                epoch: u32::MAX,
                regions,
            },
            Message::ChunkList {
                region: REGION_COUNT - 1,
                client: u64::MAX,
                pid: u32::MAX,
                chunks,
                next: Some(u16::MAX),
            },
            Message::SpaceOf {
                client: u64::MAX,
                space: Some(space),
            },
        ] {
            let e = Envelope::new(u32::MAX, m);
            let mut buf = [0u8; MAX_ENVELOPE_LEN];
            let n = e.encode(&mut buf).unwrap().len();
            assert!(n <= auth::MAX_BODY_LEN, "{n}");
            assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e);
        }
        // A space's key stays out of debug output.
        assert!(!format!("{space:?}").contains(&format!("{}", u64::MAX)));
    }

    #[test]
    fn largest_message_fits() {
        let mut placements = heapless::Vec::new();
        for i in 0..MAX_PLACEMENTS {
            placements
                .push(Placement {
                    region: REGION_COUNT - 1 - (MAX_PLACEMENTS - i) as u32,
                    node: u16::MAX,
                    epoch: u32::MAX,
                })
                .unwrap();
        }
        let e = Envelope::new(u32::MAX, Message::Allocated { placements });
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = e.encode(&mut buf).unwrap().len();
        assert!(n <= auth::MAX_BODY_LEN, "{n}");
        assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e);
    }
}
