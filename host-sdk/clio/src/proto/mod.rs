//! Layer 1: the per-memory-node connection as a pure state machine.
//!
//! No sockets, no clock, no threads: time comes in as nanoseconds from any
//! fixed origin, packets come in as byte slices, and packets and completions
//! go out. Backends (UDP, in-process) and APIs (blocking, tokio) drive it.
//!
//! ```text
//! submit ─▶ ordering (deps: RAW/WAR/WAW per page, barriers, release)
//!        ─▶ ready queue ─▶ windows (cwnd, pacing below 1, iwnd) ─▶ poll_transmit
//! handle_packet ─▶ verify CRC ─▶ match req_id ─▶ reassemble / ack ─▶ completion
//!               └▶ NACK / corrupt / BUSY ─▶ retry with a new req_id (retry_of = first id),
//!                  resending only unacknowledged write packets, keeping received read bytes
//! handle_timeout ─▶ RTO expiry ─▶ retry, or Timeout after the retry budget
//! ```
//!
//! Operation slots live in a slab sized by [`ClientConfig::max_ops`]; data
//! buffers, range sets and dependency lists are reused, so the steady state
//! allocates nothing per operation (read data is handed out as a `Vec` that
//! callers may give back with [`Connection::recycle`]).
//!
//! Sessions: every request but `INFO` and `OPEN_SESSION` carries the
//! session's credentials (PID, session id, epoch, key) from the board's
//! answer to [`Request::OpenSession`] (or [`Connection::set_session`]), and
//! an acknowledgement watermark `ack`: the first-attempt id of the oldest
//! request still in flight, or the next id if none is. The board frees the
//! dedup records of everything before it. A non-idempotent first attempt
//! waits while the records the session's unacknowledged requests may hold
//! (one per write packet, one per other non-idempotent request) would exceed
//! its `dedup_quota`, so the session's own records never overflow its quota. An answer
//! `RESTARTED` ends the connection: every outstanding and later operation
//! fails with [`ClioError::BoardRestarted`].
//!
//! A request id counts up from [`ClientConfig::first_req_id`] on every
//! attempt and skips 0, so ids increase in serial-number order (the order
//! the board compares `ack` in). A direct-mapped table (2 × `max_ops`
//! entries, indexed by the low id bits) finds the slot of an answer in O(1);
//! an id whose entry is still held by a live attempt is skipped.

mod cc;
mod deps;
mod ranges;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use clio_wire::clio::{flags, HEADER_LEN, MAX_PAYLOAD};
use clio_wire::payload::{
    perms, AllocReq, AllocResp, AtomicArgs, AtomicResp, ChaseReq, FreeReq, InfoResp,
    OffloadCallReq, OffloadCallResp, OpenSessionReq, OpenSessionResp,
};
use clio_wire::{Header, Opcode, Packet, Status};

pub use cc::Control;
pub use deps::{Footprint, MAX_TRACKED_PAGES};
pub use ranges::{Insert, RangeSet};

use crate::{ChaseRequest, ChaseResult, ClientConfig, ClioError, OpKind, ShareToken};

/// The zero payload an INFO request carries (its answer's size).
static INFO_PAD: [u8; InfoResp::LEN] = [0; InfoResp::LEN];

/// Copies a fixed request payload (at most an `OpenSessionReq`, the longest)
/// into the staging buffer `emit_packet` sends from.
fn stage<'a>(small: &'a mut [u8; OpenSessionReq::LEN], bytes: &[u8]) -> &'a [u8] {
    let n = bytes.len().min(small.len());
    small[..n].copy_from_slice(&bytes[..n]);
    &small[..n]
}

/// Largest datagram the protocol ever emits or accepts.
pub const MAX_DATAGRAM: usize = HEADER_LEN + MAX_PAYLOAD;

/// Longest `OFFLOAD_CALL` answer taken in (several packets; a batch's):
/// the largest response bound a board may state (`max_resp_kib` 65535).
pub const MAX_OFFLOAD_ANSWER: u32 = 65535 * 1024;

/// Handle of one submitted operation (slot index and generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(u64);

impl OpId {
    fn new(index: u32, gen: u32) -> Self {
        OpId((gen as u64) << 32 | index as u64)
    }
    fn index(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }
    fn gen(self) -> u32 {
        (self.0 >> 32) as u32
    }
    /// The raw value (stable while the operation is outstanding).
    pub fn raw(self) -> u64 {
        self.0
    }
}

/// An operation to submit. Write data is copied into the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    /// Read `len` bytes at `va`.
    Read {
        /// First byte.
        va: u64,
        /// Bytes to read.
        len: u32,
    },
    /// Write `data` at `va`.
    Write {
        /// First byte.
        va: u64,
        /// Bytes to write.
        data: &'a [u8],
    },
    /// Allocate `size` bytes of remote virtual memory.
    Alloc {
        /// Bytes (the board rounds up to whole pages).
        size: u64,
        /// [`perms`] bits.
        perms: u8,
        /// log2 of the page size; 0 = the board's default.
        page_shift: u8,
        /// Ask for this exact VA (the board may move the range).
        fixed_va: Option<u64>,
    },
    /// Free the range `[va, va + size)`.
    Free {
        /// Start of the range.
        va: u64,
        /// Its length.
        size: u64,
    },
    /// Test-and-set the 8-byte word at `va`.
    TestAndSet {
        /// Word address (8-byte aligned).
        va: u64,
    },
    /// Compare-and-swap the 8-byte word at `va`.
    CompareAndSwap {
        /// Word address (8-byte aligned).
        va: u64,
        /// Value the word must hold.
        expected: u64,
        /// Value stored on success.
        new: u64,
    },
    /// Fetch-and-add on the 8-byte word at `va`.
    FetchAndAdd {
        /// Word address (8-byte aligned).
        va: u64,
        /// Value added (wrapping).
        addend: u64,
    },
    /// Acquire the lock word at `va` (retried with backoff while held).
    Lock {
        /// Lock word address (8-byte aligned).
        va: u64,
    },
    /// Release the lock word at `va`.
    Unlock {
        /// Lock word address (8-byte aligned).
        va: u64,
    },
    /// Wait for all earlier operations, then order at the board: later
    /// requests of this PID wait until earlier ones finish.
    Fence,
    /// Completes when every earlier operation has completed (no packet).
    Release,
    /// Ask the board who it is.
    Info,
    /// Open a session: a new address space (`join: None`, the board assigns
    /// the PID) or the address space of the session `join` names. On
    /// success the connection takes the session's credentials for every
    /// later request. Later operations wait for it (a barrier).
    OpenSession {
        /// The session to join, if any.
        join: Option<ShareToken>,
    },
    /// Close this connection's session after every earlier operation
    /// (a board answer `BAD_SESSION` counts as closed). Later requests fail
    /// with [`ClioError::NoSession`] until a new session is opened.
    CloseSession,
    /// A pointer chase executed by the board (see [`crate::chase`]);
    /// ordered as a barrier (the pages it reads are not known in advance).
    PointerChase(ChaseRequest),
    /// A call of offload `offload`'s operation `op` at the memory node,
    /// with the offload-defined `args` (one packet: the fixed part and the
    /// arguments must fit the MTU). Not ordered against this PID's memory
    /// operations: the offload works in its own address space.
    OffloadCall {
        /// Offload id registered at the board.
        offload: u32,
        /// Operation of that offload.
        op: u16,
        /// Its arguments.
        args: &'a [u8],
    },
}

impl Request<'_> {
    /// The operation kind.
    pub fn kind(&self) -> OpKind {
        match self {
            Request::Read { .. } => OpKind::Read,
            Request::Write { .. } => OpKind::Write,
            Request::Alloc { .. } => OpKind::Alloc,
            Request::Free { .. } => OpKind::Free,
            Request::TestAndSet { .. } => OpKind::TestAndSet,
            Request::CompareAndSwap { .. } => OpKind::CompareAndSwap,
            Request::FetchAndAdd { .. } => OpKind::FetchAndAdd,
            Request::Lock { .. } => OpKind::Lock,
            Request::Unlock { .. } => OpKind::Unlock,
            Request::Fence => OpKind::Fence,
            Request::Release => OpKind::Release,
            Request::Info => OpKind::Info,
            Request::OpenSession { .. } => OpKind::OpenSession,
            Request::CloseSession => OpKind::CloseSession,
            Request::PointerChase(_) => OpKind::PointerChase,
            Request::OffloadCall { .. } => OpKind::OffloadCall,
        }
    }
}

/// The credentials and limits of an open session.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionInfo {
    /// The address space (process id).
    pub pid: u32,
    /// Session id at the board.
    pub session: u16,
    /// The board's boot epoch the session belongs to.
    pub epoch: u32,
    /// The session key (a credential; not shown by `Debug`).
    pub key: u64,
    /// Non-idempotent requests the session may have unacknowledged.
    pub dedup_quota: u16,
    /// Locks the session may hold at once.
    pub lock_quota: u16,
    /// Pages of the default size the address space may allocate.
    pub mem_quota_pages: u32,
}

impl core::fmt::Debug for SessionInfo {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SessionInfo")
            .field("pid", &self.pid)
            .field("session", &self.session)
            .field("epoch", &format_args!("{:#010x}", self.epoch))
            .field("key", &"<secret>")
            .field("dedup_quota", &self.dedup_quota)
            .field("lock_quota", &self.lock_quota)
            .field("mem_quota_pages", &self.mem_quota_pages)
            .finish()
    }
}

impl SessionInfo {
    /// Credentials for a session whose quotas are unknown (unlimited on
    /// the client side; the board still enforces its own).
    pub fn new(pid: u32, session: u16, epoch: u32, key: u64) -> SessionInfo {
        SessionInfo {
            pid,
            session,
            epoch,
            key,
            dedup_quota: u16::MAX,
            lock_quota: u16::MAX,
            mem_quota_pages: u32::MAX,
        }
    }

    /// The token another process joins this session's address space with.
    pub fn share(&self) -> ShareToken {
        ShareToken {
            pid: self.pid,
            session: self.session,
            epoch: self.epoch,
            key: self.key,
        }
    }
}

/// A placed allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// First byte of the range.
    pub va: u64,
    /// Bytes reserved (whole pages).
    pub size: u64,
    /// The board placed it away from the requested fixed VA.
    pub moved: bool,
    /// Candidate ranges the board refused for bucket overflow.
    pub retries: u32,
}

/// The result of a successful operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Read data (give the `Vec` back with [`Connection::recycle`] to reuse it).
    Read(Vec<u8>),
    /// All bytes written.
    Written,
    /// A range was allocated.
    Allocated(Allocation),
    /// The range was freed.
    Freed,
    /// An atomic finished; the word's value before it.
    Atomic {
        /// Old value.
        old: u64,
    },
    /// The lock is held by this PID.
    Locked,
    /// The lock was released.
    Unlocked,
    /// The fence completed.
    Fenced,
    /// Every earlier operation completed.
    Released,
    /// Board identity.
    Info(InfoResp),
    /// A session was opened; the connection now uses it.
    Opened(SessionInfo),
    /// The session was closed.
    Closed,
    /// A pointer chase finished (found, end of list, or hop limit).
    Chased(ChaseResult),
    /// An offload call succeeded; its result bytes.
    Offloaded(Vec<u8>),
}

/// Counters of what the connection saw and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets emitted.
    pub packets_sent: u64,
    /// Request attempts started (first sends and retries).
    pub requests_sent: u64,
    /// Attempts that were retries.
    pub retries: u64,
    /// Retries caused by RTO expiry.
    pub timeouts: u64,
    /// NACKs received for an outstanding attempt.
    pub nacks: u64,
    /// Packets that failed the CRC check.
    pub corrupt: u64,
    /// `BUSY` answers (backed off and resent).
    pub busy: u64,
    /// Valid packets that matched no outstanding attempt (late or stray).
    pub stale: u64,
    /// Response packets whose bytes had all arrived already.
    pub duplicates: u64,
    /// Packets too malformed to parse.
    pub malformed: u64,
    /// Operations completed (with success or error).
    pub completed: u64,
    /// Single packets of a multi-packet write resent after a NACK named
    /// their offset (the rest of the request was not resent).
    pub resent_packets: u64,
    /// RTO expiries that did not retry: the RTO had grown since the send,
    /// or answers to earlier requests were still arriving in order (the
    /// request was queued behind them, not lost).
    pub rto_deferred: u64,
    /// Answers to an attempt that had been retried on RTO expiry, received
    /// while the request was still outstanding: the timeout was spurious.
    pub spurious_timeouts: u64,
    /// Non-idempotent first attempts held back because the session's
    /// unacknowledged ones reached its dedup quota.
    pub dedup_waits: u64,
}

/// Where an operation slot is in its life. The transitions:
///
/// ```text
/// Free ─submit─▶ Blocked ─blockers done─▶ Ready ─poll_transmit─▶ Sending ─last packet─▶ Inflight
///                                          ▲  ▲                                            │
///                                          │  └──── lost (RTO, NACK, corrupt answer) ◀──────┤
///                                          └─ Backoff ◀── BUSY answer ◀────────────────────┤
/// Free ◀─take── Done ◀─────────── answer, error, timeout, restart ◀────────────────────────┘
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Unused; on the free list.
    Free,
    /// Waits for `blockers` earlier conflicting operations to complete.
    Blocked,
    /// In the ready queue, waiting for the windows (or a retry waiting to be sent).
    Ready,
    /// A multi-packet write whose packets are being emitted (`tx_off` is the
    /// next one); at most one slot is `Sending` at a time.
    Sending,
    /// Every packet of the current attempt sent; an RTO timer is armed.
    Inflight,
    /// Answered `BUSY`; a backoff timer is armed, then back to `Ready`.
    Backoff,
    /// Finished; `result` waits for [`Connection::take`].
    Done,
}

/// The request-specific fields of an operation, encoded at emit time.
#[derive(Debug, Clone, Copy)]
enum Params {
    /// Nothing beyond the header (reads, writes, locks, fences, ...).
    None,
    /// `ALLOC`'s payload, and whether `FIXED_VA` is set.
    Alloc {
        req: AllocReq,
        fixed: bool,
    },
    /// `FREE`'s payload.
    Free(FreeReq),
    /// The operands of CAS and FAA.
    Atomic(AtomicArgs),
    /// `OPEN_SESSION`: the session to join, if any.
    Open(Option<ShareToken>),
    /// `POINTER_CHASE`'s payload.
    Chase(ChaseReq),
    Offload(OffloadCallReq),
}

/// What an armed timer does when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKind {
    /// Retransmission timeout of an `Inflight` attempt.
    Rto,
    /// End of a `Backoff` after a `BUSY` answer.
    Backoff,
}

/// An armed timer. Timers are never removed when their attempt ends: a
/// timer whose `token` is no longer its slot's current attempt id (or whose
/// slot left the state the kind expects) is dead and skipped when it reaches
/// the front of the heap ([`timer_live`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Timer {
    /// When it fires (ns). First, so the heap orders by time.
    at: u64,
    /// The operation's slot.
    slot: u32,
    /// The attempt id (`req_id`) it was armed for.
    token: u32,
    /// What it does.
    kind: TimerKind,
}

/// One operation, from submit until its result is taken.
#[derive(Debug)]
struct Slot {
    /// Generation, bumped when the slot is freed, so a stale [`OpId`] never
    /// names a later operation.
    gen: u32,
    /// Life-cycle state.
    state: State,
    /// The operation.
    kind: OpKind,
    /// Its VA (0 if it has none).
    va: u64,
    /// Its data length: bytes read or written, 8 for atomics, else 0.
    len: u32,
    /// Request-specific fields.
    params: Params,
    /// The pages it reads or writes, for ordering.
    fp: Footprint,
    /// Write data (copied at submit), or the read buffer being filled.
    data: Vec<u8>,
    /// Byte ranges received (reads) or acknowledged (writes), kept across
    /// attempts.
    got: RangeSet,
    /// An offload call's answer arriving in several packets (a batch's).
    answer: Vec<u8>,
    /// Id of the current attempt.
    req_id: u32,
    /// Id of the first attempt (`retry_of` of every retry; the dedup key).
    orig_id: u32,
    /// The id of the last attempt that ended by RTO expiry, until an answer
    /// to it is counted as a spurious timeout; 0 otherwise.
    prev_id: u32,
    /// Attempts started.
    attempts: u32,
    /// Attempts lost (RTO, NACK, corrupt answer): the retry budget counts these.
    losses: u32,
    /// `BUSY` answers so far (the backoff exponent).
    busy: u32,
    /// When the first attempt was sent (the request deadline counts from it).
    first_sent: u64,
    /// When the current attempt was sent (RTT samples and RTO).
    sent_at: u64,
    /// `Sending` writes: offset of the next packet to emit.
    tx_off: u32,
    /// Bytes the answer will occupy on the wire (incast window accounting).
    resp_bytes: u64,
    /// Counted in the congestion and incast windows (between send and
    /// answer, loss or backoff).
    on_wire: bool,
    /// `Blocked`: earlier operations still to complete.
    blockers: u32,
    /// Later operations blocked on this one.
    dependents: Vec<u32>,
    /// `Done`: the result.
    result: Option<Result<Completion, ClioError>>,
}

/// An operation checked and encoded by [`Connection::submit`], before it
/// takes a slot.
struct Prepared<'a> {
    va: u64,
    len: u32,
    params: Params,
    fp: Footprint,
    /// Write data to copy in.
    data: Option<&'a [u8]>,
}

impl Slot {
    fn new() -> Self {
        Slot {
            gen: 0,
            state: State::Free,
            kind: OpKind::Info,
            va: 0,
            len: 0,
            params: Params::None,
            fp: Footprint::None,
            data: Vec::new(),
            got: RangeSet::default(),
            answer: Vec::new(),
            req_id: 0,
            orig_id: 0,
            prev_id: 0,
            attempts: 0,
            losses: 0,
            busy: 0,
            first_sent: 0,
            sent_at: 0,
            tx_off: 0,
            resp_bytes: 0,
            on_wire: false,
            blockers: 0,
            dependents: Vec::new(),
            result: None,
        }
    }
}

impl Slot {
    /// The completion a successful single-packet answer carries (every
    /// kind but reads, writes and `OPEN_SESSION`, which change connection
    /// state). `Err` names the field that breaks the protocol.
    fn answer(&self, h: &Header, payload: &[u8]) -> Result<Completion, &'static str> {
        Ok(match self.kind {
            OpKind::Alloc => {
                let r = AllocResp::parse(payload).map_err(|e| e.field)?;
                Completion::Allocated(Allocation {
                    va: h.va,
                    size: r.size,
                    moved: h.flags & flags::MOVED != 0,
                    retries: r.retries,
                })
            }
            OpKind::Free => Completion::Freed,
            OpKind::TestAndSet | OpKind::CompareAndSwap | OpKind::FetchAndAdd => {
                let r = AtomicResp::parse(payload).map_err(|e| e.field)?;
                Completion::Atomic { old: r.old }
            }
            OpKind::Lock => Completion::Locked,
            OpKind::Unlock => Completion::Unlocked,
            OpKind::Fence => Completion::Fenced,
            OpKind::Info => Completion::Info(InfoResp::parse(payload).map_err(|e| e.field)?),
            OpKind::CloseSession => Completion::Closed,
            OpKind::PointerChase => {
                if h.va != self.va {
                    return Err("clio.va");
                }
                let Params::Chase(req) = self.params else {
                    return Err("clio.opcode");
                };
                Completion::Chased(ChaseResult::decode(&req, payload)?)
            }
            OpKind::OffloadCall => {
                let r = OffloadCallResp::parse(payload).map_err(|e| e.field)?;
                if r.code != 0 {
                    return Err("offload_call_resp.code");
                }
                Completion::Offloaded(payload[OffloadCallResp::LEN..].to_vec())
            }
            // Handled by the connection; `Release` has no packet.
            OpKind::Read | OpKind::Write | OpKind::OpenSession | OpKind::Release => {
                return Err("clio.opcode")
            }
        })
    }
}

/// One client's connection-less transport and ordering state towards one
/// memory node.
#[derive(Debug)]
pub struct Connection {
    /// Settings (validated).
    cfg: ClientConfig,
    /// Payload bytes per packet.
    mtu: u32,
    /// Operation slab, at most `cfg.max_ops` entries.
    slots: Vec<Slot>,
    /// Free slot indices.
    free: Vec<u32>,
    /// The last request id assigned.
    counter: u32,
    /// Direct-mapped id table (2 × `max_ops`, indexed by the low id bits):
    /// (attempt id, slot) of recent attempts.
    idmap: Vec<(u32, u32)>,
    /// The open session's credentials.
    session: Option<SessionInfo>,
    /// The board's new epoch once it answered `RESTARTED`.
    restarted: Option<u32>,
    /// First attempts in id order (slot, id, dedup records it may hold):
    /// the oldest live one is the ack watermark; entries of finished
    /// requests are dropped lazily when they reach the front.
    unacked: VecDeque<(u32, u32, u32)>,
    /// Dedup records the requests in `unacked` may hold at the board
    /// (finished ones included until they reach the front).
    unacked_dedup: u32,
    /// Single write packets to resend after a NACK: (slot, attempt id, offset).
    resend: VecDeque<(u32, u32, u32)>,
    /// When the last answer to a live attempt arrived.
    last_rx: Option<u64>,
    /// Latest send time among attempts that got an answer.
    rx_sent_max: u64,
    /// Per-page readers and writers, barriers and releases.
    deps: deps::Deps,
    /// Slots ready to send, in order (retries go to the front).
    ready: VecDeque<u32>,
    /// The multi-packet write being emitted, if any.
    sending: Option<u32>,
    /// When pacing next allows a send, if it is what holds the ready queue.
    pace_at: Option<u64>,
    /// Armed timers, earliest first (dead ones included, see [`Timer`]).
    timers: BinaryHeap<Reverse<Timer>>,
    /// Completed operations, in completion order, for `poll_completion`.
    done: VecDeque<OpId>,
    /// Congestion control, RTT estimate and incast window.
    cc: Control,
    /// Read buffers given back for reuse.
    pool: Vec<Vec<u8>>,
    /// Reused list of blockers while submitting.
    scratch: Vec<u32>,
    /// Operations submitted and not yet completed.
    active: usize,
    /// Counters.
    stats: Stats,
}

impl Connection {
    /// A connection with the given settings (validated). It has no session
    /// yet: submit [`Request::OpenSession`] (or call
    /// [`Connection::set_session`]) before requests that need one.
    pub fn new(cfg: ClientConfig) -> Result<Connection, ClioError> {
        cfg.validate()?;
        // `next_id` pre-increments, so start one below the first id.
        let counter = cfg.first_req_id.map_or(0, |f| f.wrapping_sub(1));
        Ok(Connection {
            mtu: cfg.mtu_payload as u32,
            cc: Control::new(&cfg),
            slots: Vec::new(),
            free: Vec::new(),
            counter,
            idmap: vec![(0, 0); 2 * cfg.max_ops],
            session: None,
            restarted: None,
            unacked: VecDeque::new(),
            unacked_dedup: 0,
            resend: VecDeque::new(),
            last_rx: None,
            rx_sent_max: 0,
            deps: deps::Deps::default(),
            ready: VecDeque::new(),
            sending: None,
            pace_at: None,
            timers: BinaryHeap::new(),
            done: VecDeque::new(),
            pool: Vec::new(),
            scratch: Vec::new(),
            active: 0,
            stats: Stats::default(),
            cfg,
        })
    }

    /// The settings in force.
    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// Set the payload per packet (to the board's MTU, e.g. 8916 with jumbo
    /// frames); only between operations.
    pub fn set_mtu(&mut self, mtu: usize) -> Result<(), ClioError> {
        if self.active > 0 {
            return Err(ClioError::InvalidArgument {
                what: "mtu",
                reason: "cannot change while operations are outstanding",
            });
        }
        let mut c = self.cfg.clone();
        c.mtu_payload = mtu;
        c.validate()?;
        self.cfg = c;
        self.mtu = mtu as u32;
        Ok(())
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The open session's credentials and limits, if any.
    pub fn session(&self) -> Option<&SessionInfo> {
        self.session.as_ref()
    }

    /// Use these credentials for every later request (`None`: none). For
    /// tests and for clients that obtained a session by other means;
    /// [`Request::OpenSession`] sets them itself.
    pub fn set_session(&mut self, session: Option<SessionInfo>) {
        self.session = session;
        self.restarted = None;
    }

    /// The board's new epoch, once it answered `RESTARTED`: every operation
    /// of this connection fails from then on.
    pub fn restarted(&self) -> Option<u32> {
        self.restarted
    }

    /// The acknowledgement watermark the next request carries: the first
    /// attempt's id of the oldest request still in flight (sent and not
    /// answered), else the next id to be assigned.
    pub fn ack_watermark(&mut self) -> u32 {
        self.trim_unacked();
        match self.unacked.front() {
            Some(&(_, id, _)) => id,
            None => self.peek_next_id(),
        }
    }

    /// Drop finished requests from the front of `unacked`.
    fn trim_unacked(&mut self) {
        while let Some(&(idx, id, records)) = self.unacked.front() {
            let s = &self.slots[idx as usize];
            let live =
                s.orig_id == id && s.attempts > 0 && !matches!(s.state, State::Free | State::Done);
            if live {
                break;
            }
            self.unacked.pop_front();
            self.unacked_dedup -= records;
        }
    }

    /// The id [`Connection::next_id`] would return first (ids whose table
    /// entry is busy are skipped there, which only makes the real id later).
    fn peek_next_id(&self) -> u32 {
        match self.counter.wrapping_add(1) {
            0 => 1,
            n => n,
        }
    }

    /// Congestion and RTT state.
    pub fn control(&self) -> &Control {
        &self.cc
    }

    /// Operations submitted and not yet completed.
    pub fn active(&self) -> usize {
        self.active
    }

    /// Pages with an active reader or writer (dependency-tracking state).
    pub fn tracked_pages(&self) -> usize {
        self.deps.tracked_pages()
    }

    /// Smallest buffer [`Connection::poll_transmit`] accepts.
    pub fn max_packet_len(&self) -> usize {
        HEADER_LEN + self.mtu as usize
    }

    /// Give a read buffer back for reuse.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.pool.len() < self.cfg.max_ops {
            buf.clear();
            self.pool.push(buf);
        }
    }

    /// Submit an operation. It is ordered after conflicting earlier ones and
    /// sent when windows allow; its result comes from
    /// [`Connection::poll_completion`] or [`Connection::take`].
    pub fn submit(&mut self, req: Request<'_>) -> Result<OpId, ClioError> {
        let kind = req.kind();
        if let Some(epoch) = self.restarted {
            return Err(ClioError::BoardRestarted { op: kind, epoch });
        }
        let prep = self.prepare(req)?;
        let idx = self.take_slot()?;
        let resp_bytes = response_bytes(kind, prep.len, prep.params, self.mtu);
        let pool = &mut self.pool;
        let s = &mut self.slots[idx as usize];
        s.state = State::Blocked;
        s.kind = kind;
        s.va = prep.va;
        s.len = prep.len;
        s.params = prep.params;
        s.fp = prep.fp;
        s.attempts = 0;
        s.prev_id = 0;
        s.losses = 0;
        s.busy = 0;
        s.resp_bytes = resp_bytes;
        s.on_wire = false;
        s.blockers = 0;
        s.result = None;
        s.got.clear();
        if s.data.capacity() == 0 {
            if let Some(b) = pool.pop() {
                s.data = b;
            }
        }
        s.data.clear();
        match (kind, prep.data) {
            (OpKind::OffloadCall, Some(d)) => {
                // The packet's whole payload: the fixed part, then the args.
                if let Params::Offload(r) = prep.params {
                    s.data.extend_from_slice(&r.to_bytes());
                }
                s.data.extend_from_slice(d)
            }
            (_, Some(d)) => s.data.extend_from_slice(d),
            (OpKind::Read, None) => s.data.resize(prep.len as usize, 0),
            _ => {}
        }
        self.active += 1;
        let id = OpId::new(idx, self.slots[idx as usize].gen);
        if self.order(idx) {
            self.unblock(idx);
        }
        Ok(id)
    }

    /// Check a request's arguments and encode its fields.
    fn prepare<'a>(&self, req: Request<'a>) -> Result<Prepared<'a>, ClioError> {
        let shift = self.cfg.page_shift;
        let max = self.cfg.max_request_bytes as u64;
        let word = |va: u64| -> Result<u64, ClioError> {
            if va % 8 != 0 {
                return Err(ClioError::InvalidArgument {
                    what: "va",
                    reason: "atomic and lock words must be 8-byte aligned",
                });
            }
            Ok(va)
        };
        let prep = |va, len, params, fp| Prepared {
            va,
            len,
            params,
            fp,
            data: None,
        };
        // Atomics write one word; locks and the rest are ordered as barriers.
        let atomic = |va: u64, params| {
            Ok(prep(
                word(va)?,
                8,
                params,
                Footprint::range(va, 8, shift, true),
            ))
        };
        match req {
            Request::Read { va, len } => {
                check_range(va, len as u64, "len")?;
                check_max(len as u64, max, "len")?;
                let fp = Footprint::range(va, len as u64, shift, false);
                Ok(prep(va, len, Params::None, fp))
            }
            Request::Write { va, data } => {
                check_range(va, data.len() as u64, "data")?;
                check_max(data.len() as u64, max, "data")?;
                let fp = Footprint::range(va, data.len() as u64, shift, true);
                Ok(Prepared {
                    data: Some(data),
                    ..prep(va, data.len() as u32, Params::None, fp)
                })
            }
            Request::Alloc {
                size,
                perms,
                page_shift,
                fixed_va,
            } => prepare_alloc(size, perms, page_shift, fixed_va, shift)
                .map(|(va, params, fp)| prep(va, 0, params, fp)),
            Request::Free { va, size } => {
                check_range(va, size, "size")?;
                let fp = Footprint::range(va, size, shift, true);
                Ok(prep(va, 0, Params::Free(FreeReq { size }), fp))
            }
            Request::TestAndSet { va } => atomic(va, Params::None),
            Request::CompareAndSwap { va, expected, new } => atomic(
                va,
                Params::Atomic(AtomicArgs::CompareAndSwap { expected, new }),
            ),
            Request::FetchAndAdd { va, addend } => {
                atomic(va, Params::Atomic(AtomicArgs::FetchAndAdd { addend }))
            }
            Request::Lock { va } | Request::Unlock { va } => {
                Ok(prep(word(va)?, 8, Params::None, Footprint::Barrier))
            }
            Request::Fence => Ok(prep(0, 0, Params::None, Footprint::Barrier)),
            Request::Release => Ok(prep(0, 0, Params::None, Footprint::Release)),
            Request::Info => Ok(prep(0, 0, Params::None, Footprint::None)),
            Request::OpenSession { join } => Ok(prep(0, 0, Params::Open(join), Footprint::Barrier)),
            Request::CloseSession => Ok(prep(0, 0, Params::None, Footprint::Barrier)),
            Request::PointerChase(c) => {
                c.validate(self.mtu as usize)?;
                Ok(prep(c.va, 0, Params::Chase(c.wire()), Footprint::Barrier))
            }
            Request::OffloadCall { offload, op, args } => {
                if OffloadCallReq::LEN + args.len() > self.mtu as usize {
                    return Err(ClioError::InvalidArgument {
                        what: "args",
                        reason: "offload call does not fit one packet (MTU)",
                    });
                }
                let r = OffloadCallReq { offload, op };
                Ok(Prepared {
                    data: Some(args),
                    ..prep(0, 0, Params::Offload(r), Footprint::None)
                })
            }
        }
    }

    /// A free slot index, growing the slab up to `max_ops`.
    fn take_slot(&mut self) -> Result<u32, ClioError> {
        if let Some(i) = self.free.pop() {
            return Ok(i);
        }
        if self.slots.len() < self.cfg.max_ops {
            self.slots.push(Slot::new());
            return Ok((self.slots.len() - 1) as u32);
        }
        Err(ClioError::QueueFull {
            max: self.cfg.max_ops,
        })
    }

    /// Register slot `idx` with the ordering rules; true if nothing earlier
    /// blocks it.
    fn order(&mut self, idx: u32) -> bool {
        let fp = self.slots[idx as usize].fp;
        let mut blockers = std::mem::take(&mut self.scratch);
        blockers.clear();
        self.deps.register(idx, fp, &mut blockers);
        if fp.waits_for_all() {
            for (i, o) in self.slots.iter().enumerate() {
                if i as u32 != idx && !matches!(o.state, State::Free | State::Done) {
                    blockers.push(i as u32);
                }
            }
        }
        for &b in &blockers {
            self.slots[b as usize].dependents.push(idx);
        }
        self.slots[idx as usize].blockers = blockers.len() as u32;
        let unblocked = blockers.is_empty();
        self.scratch = blockers;
        unblocked
    }

    /// An operation's blockers are all done: queue it (or finish a release).
    fn unblock(&mut self, idx: u32) {
        if self.slots[idx as usize].kind == OpKind::Release {
            self.finish(idx, Ok(Completion::Released));
        } else {
            self.slots[idx as usize].state = State::Ready;
            self.ready.push_back(idx);
        }
    }

    /// Complete an operation and release the ones waiting for it.
    fn finish(&mut self, idx: u32, result: Result<Completion, ClioError>) {
        let mut work = vec![];
        let mut next = Some((idx, result));
        while let Some((idx, result)) = next.take() {
            self.leave_wire(idx);
            let s = &mut self.slots[idx as usize];
            s.state = State::Done;
            s.result = Some(result);
            let fp = s.fp;
            let gen = s.gen;
            let mut deps = std::mem::take(&mut s.dependents);
            self.deps.complete(idx, fp);
            self.active -= 1;
            self.stats.completed += 1;
            self.done.push_back(OpId::new(idx, gen));
            for &d in &deps {
                let o = &mut self.slots[d as usize];
                o.blockers -= 1;
                if o.blockers == 0 && o.state == State::Blocked {
                    if o.kind == OpKind::Release {
                        work.push(d);
                    } else {
                        o.state = State::Ready;
                        self.ready.push_back(d);
                    }
                }
            }
            deps.clear();
            self.slots[idx as usize].dependents = deps;
            if let Some(d) = work.pop() {
                next = Some((d, Ok(Completion::Released)));
            }
        }
    }

    /// The next completed operation, in completion order.
    pub fn poll_completion(&mut self) -> Option<(OpId, Result<Completion, ClioError>)> {
        while let Some(id) = self.done.pop_front() {
            if let Some(r) = self.take(id) {
                return Some((id, r));
            }
        }
        None
    }

    /// The result of `id` if it has completed (removing it).
    pub fn take(&mut self, id: OpId) -> Option<Result<Completion, ClioError>> {
        let s = self.slots.get_mut(id.index())?;
        if s.gen != id.gen() || s.state != State::Done {
            return None;
        }
        let r = s.result.take();
        s.state = State::Free;
        s.gen = s.gen.wrapping_add(1);
        self.free.push(id.index() as u32);
        r
    }

    /// Whether `id` names an operation that is outstanding or completed and
    /// not yet taken.
    pub fn is_known(&self, id: OpId) -> bool {
        self.slots
            .get(id.index())
            .is_some_and(|s| s.gen == id.gen() && s.state != State::Free)
    }

    /// Whether `id` has completed (its result waits to be taken).
    pub fn is_done(&self, id: OpId) -> bool {
        self.slots
            .get(id.index())
            .is_some_and(|s| s.gen == id.gen() && s.state == State::Done)
    }

    /// Emit the next packet into `buf`, if windows allow; returns its length.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Connection::max_packet_len`].
    pub fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<usize> {
        assert!(
            buf.len() >= self.max_packet_len(),
            "poll_transmit buffer of {} bytes is below max_packet_len {}",
            buf.len(),
            self.max_packet_len()
        );
        if self.restarted.is_some() {
            return None;
        }
        // A packet a NACK named goes first, alone, under its attempt's id
        // (the request is already counted in the windows).
        while let Some((idx, id, off)) = self.resend.pop_front() {
            let s = &self.slots[idx as usize];
            let live = s.req_id == id && matches!(s.state, State::Inflight | State::Sending);
            if live && off < s.len && s.got.next_gap(off) == off {
                let n = self.emit_packet(idx, off, buf);
                self.stats.packets_sent += 1;
                self.stats.resent_packets += 1;
                return Some(n);
            }
        }
        let idx = match self.sending {
            Some(i) => i,
            None => loop {
                let &head = self.ready.front()?;
                let s = &self.slots[head as usize];
                let (op, attempts, need) = (s.kind, s.attempts, s.resp_bytes);
                let needs_session = op.opcode().is_some_and(Opcode::needs_session);
                if needs_session && self.session.is_none() {
                    self.ready.pop_front();
                    self.finish(head, Err(ClioError::NoSession { op }));
                    continue;
                }
                let records = if attempts == 0 { self.records(head) } else { 0 };
                if records > 0 {
                    // The board refuses (BUSY) a session's non-idempotent
                    // packet beyond its quota of unacknowledged records;
                    // do not send one it would refuse. This request's ack
                    // frees the records of everything answered so far.
                    self.trim_unacked();
                    let quota = u32::from(self.session.map_or(u16::MAX, |s| s.dedup_quota));
                    if records > quota {
                        // It could never fit (the APIs cut writes to fit).
                        self.ready.pop_front();
                        self.finish(
                            head,
                            Err(ClioError::InvalidArgument {
                                what: "data",
                                reason: "write has more packets than the session's dedup quota",
                            }),
                        );
                        continue;
                    }
                    if self.unacked_dedup + records > quota {
                        self.stats.dedup_waits += 1;
                        self.pace_at = None;
                        return None;
                    }
                }
                match self.cc.may_send(now, need) {
                    Ok(()) => self.pace_at = None,
                    Err(at) => {
                        self.pace_at = at;
                        return None;
                    }
                }
                self.ready.pop_front();
                self.begin_attempt(head, now);
                break head;
            },
        };
        let n = self.emit(idx, buf);
        self.stats.packets_sent += 1;
        let s = &mut self.slots[idx as usize];
        if s.state == State::Sending && s.tx_off >= s.len {
            s.state = State::Inflight;
            self.sending = None;
        }
        if s.state == State::Inflight {
            let at = now + self.cc.rto();
            self.arm(at, idx, TimerKind::Rto);
        }
        Some(n)
    }

    /// Dedup records request `idx` may take at the board: one per packet of
    /// a write, one for any other non-idempotent request, none otherwise.
    fn records(&self, idx: u32) -> u32 {
        let s = &self.slots[idx as usize];
        match s.kind.opcode() {
            Some(Opcode::Write) => s.len.div_ceil(self.mtu).max(1),
            Some(op) if op.is_non_idempotent() => 1,
            _ => 0,
        }
    }

    /// Largest write (bytes) that fits the session's dedup quota: one
    /// request must never need more records than the session may hold.
    pub fn max_write_bytes(&self) -> u32 {
        let quota = u32::from(self.session.map_or(u16::MAX, |s| s.dedup_quota)).max(1);
        self.cfg
            .max_request_bytes
            .min(quota.saturating_mul(self.mtu))
    }

    fn begin_attempt(&mut self, idx: u32, now: u64) {
        let id = self.next_id();
        let mask = self.idmap.len() - 1;
        self.idmap[id as usize & mask] = (id, idx);
        let records = self.records(idx);
        let s = &mut self.slots[idx as usize];
        s.req_id = id;
        if s.attempts == 0 {
            s.orig_id = s.req_id;
            s.first_sent = now;
            self.unacked.push_back((idx, id, records));
            self.unacked_dedup += records;
        } else {
            self.stats.retries += 1;
        }
        s.attempts += 1;
        s.sent_at = now;
        if s.attempts == 1 {
            s.got.clear();
        }
        // A retry keeps what earlier attempts got: write packets already
        // acknowledged are not resent (the board's dedup buffer keys writes
        // by packet offset and also finds the original id through
        // `retry_of`), and read bytes already received stay; a read retry
        // asks for the whole range again and the repeated parts count as
        // duplicates.
        s.tx_off = if s.kind == OpKind::Write {
            s.got.next_gap(0)
        } else {
            0
        };
        s.on_wire = true;
        self.cc.on_send(now, s.resp_bytes);
        self.stats.requests_sent += 1;
        if s.kind == OpKind::Write && s.len > self.mtu {
            s.state = State::Sending;
            self.sending = Some(idx);
        } else {
            s.state = State::Inflight;
        }
    }

    /// Write the current packet of slot `idx` into `buf`.
    fn emit(&mut self, idx: u32, buf: &mut [u8]) -> usize {
        let s = &mut self.slots[idx as usize];
        let off = s.tx_off;
        if s.kind == OpKind::Write {
            // Skip packets an earlier attempt got acknowledged.
            let n = (s.len - off).min(self.mtu);
            s.tx_off = s.got.next_gap(off + n);
        } else {
            s.tx_off = s.len;
        }
        self.emit_packet(idx, off, buf)
    }

    /// Write the packet of slot `idx`'s current attempt at byte `off` (0 for
    /// anything but a write) into `buf`.
    fn emit_packet(&mut self, idx: u32, off: u32, buf: &mut [u8]) -> usize {
        let ack = self.ack_watermark();
        let mtu = self.mtu;
        let creds = self.session;
        let s = &self.slots[idx as usize];
        // Only `Release` has no opcode, and it never reaches the wire.
        let opcode = s.kind.opcode().unwrap_or(Opcode::Fence);
        let mut h = Header {
            retry_of: if s.attempts > 1 { s.orig_id } else { 0 },
            ..Header::request(opcode, 0, s.req_id, s.va, s.len)
        };
        if opcode.needs_session() {
            if let Some(c) = creds {
                h = h.with_session(c.session, c.epoch, c.key);
                h.pid = c.pid;
                h.ack = ack;
            }
        }
        // Fixed payloads are at most an `OpenSessionReq`; INFO's padding is
        // a shared zero block (no per-packet zeroing of it).
        let mut small = [0u8; OpenSessionReq::LEN];
        let payload: &[u8] = match (s.kind, s.params) {
            (OpKind::Write, _) => {
                let n = (s.len - off).min(mtu);
                h.offset = off;
                &s.data[off as usize..(off + n) as usize]
            }
            (_, Params::Open(join)) => {
                let req = OpenSessionReq {
                    join_session: join.map_or(0, |t| t.session),
                    join_key: join.map_or(0, |t| t.key),
                };
                h.pid = join.map_or(0, |t| t.pid);
                stage(&mut small, &req.to_bytes())
            }
            // An INFO request is padded to the answer's size (zeros), so
            // the board never answers more bytes than it was sent.
            (OpKind::Info, _) => &INFO_PAD,
            (_, Params::Alloc { req, fixed }) => {
                if fixed {
                    h.flags |= flags::FIXED_VA;
                }
                stage(&mut small, &req.to_bytes())
            }
            (_, Params::Free(f)) => stage(&mut small, &f.to_bytes()),
            (_, Params::Atomic(a)) => {
                let (bytes, n) = a.to_bytes();
                stage(&mut small, &bytes[..n])
            }
            (_, Params::Chase(c)) => stage(&mut small, &c.to_bytes()),
            (OpKind::OffloadCall, _) => &s.data[..],
            _ => &[],
        };
        h.payload_len = payload.len() as u16;
        // `poll_transmit` checked `buf` against max_packet_len (header + MTU)
        // and every payload is at most one MTU (checked at submission), so
        // the packet fits.
        let len = h.buffer_len();
        let mut p = Packet::new_unchecked(&mut buf[..len]);
        h.emit(&mut p);
        p.payload_mut().copy_from_slice(payload);
        p.fill_crc();
        len
    }

    /// The earliest armed timer, live or not: a cheap check whether
    /// [`Connection::handle_timeout`] might have work (never later than the
    /// earliest live timer; pacing is not a timer).
    pub fn earliest_timer(&self) -> Option<u64> {
        self.timers.peek().map(|Reverse(t)| t.at)
    }

    /// The earliest time [`Connection::handle_timeout`] has work to do.
    pub fn poll_timeout(&mut self) -> Option<u64> {
        while let Some(&Reverse(t)) = self.timers.peek() {
            if timer_live(&self.slots, t) {
                return Some(match self.pace_at {
                    Some(p) if !self.ready.is_empty() => p.min(t.at),
                    _ => t.at,
                });
            }
            self.timers.pop();
        }
        self.pace_at.filter(|_| !self.ready.is_empty())
    }

    /// Arm a timer of `kind` at `at` for the current attempt of slot `idx`.
    fn arm(&mut self, at: u64, idx: u32, kind: TimerKind) {
        let token = self.slots[idx as usize].req_id;
        self.timers.push(Reverse(Timer {
            at,
            slot: idx,
            token,
            kind,
        }));
    }

    /// Fire every timer due at `now`: retransmit timed-out requests, resend
    /// backed-off ones.
    pub fn handle_timeout(&mut self, now: u64) {
        while let Some(&Reverse(t)) = self.timers.peek() {
            if t.at > now {
                break;
            }
            self.timers.pop();
            if !timer_live(&self.slots, t) {
                continue;
            }
            let idx = t.slot;
            match t.kind {
                TimerKind::Rto => {
                    if let Some(later) = self.rto_defer(idx, now) {
                        self.stats.rto_deferred += 1;
                        self.arm(later, idx, TimerKind::Rto);
                        continue;
                    }
                    self.stats.timeouts += 1;
                    self.lost(idx, now, true);
                }
                TimerKind::Backoff => {
                    self.slots[idx as usize].state = State::Ready;
                    self.ready.push_front(idx);
                }
            }
        }
    }

    /// Whether an expired RTO timer of `idx` should wait rather than retry,
    /// and until when. The timer was armed with the RTO of its send time;
    /// two things make an expiry no evidence of loss:
    /// - the RTO has grown since (a queue built up): wait for the current
    ///   RTO from the send;
    /// - answers are still arriving (one within the last RTO) and none of
    ///   them is to a request sent after this one: the path delivers in
    ///   order and this request is still queued behind earlier ones (a
    ///   queueing-delay ramp that the RTT average has not caught up with).
    ///   Wait for one more RTO of silence, for at most four RTOs from the
    ///   send. This is TCP's rule of restarting the retransmission timer on
    ///   every acknowledgement of new data (RFC 6298 §5.3); a request sent
    ///   later that is answered first still marks this one lost at once.
    fn rto_defer(&self, idx: u32, now: u64) -> Option<u64> {
        let s = &self.slots[idx as usize];
        let rto = self.cc.rto();
        let by_rto = s.sent_at.saturating_add(rto);
        if by_rto > now {
            return Some(by_rto);
        }
        let last_rx = self.last_rx?;
        let in_order = self.rx_sent_max <= s.sent_at;
        let quiet_at = last_rx.saturating_add(rto);
        let cap = s.sent_at.saturating_add(rto.saturating_mul(4));
        (in_order && quiet_at > now && cap > now).then_some(quiet_at.min(cap))
    }

    /// The current attempt of `idx` no longer counts in the windows (it was
    /// answered, lost or refused), and no longer holds the send position.
    fn leave_wire(&mut self, idx: u32) {
        let s = &mut self.slots[idx as usize];
        if s.on_wire {
            s.on_wire = false;
            self.cc.on_leave(s.resp_bytes);
        }
        if self.sending == Some(idx) {
            self.sending = None;
        }
    }

    /// The current attempt of `idx` is lost: retry it or give up.
    fn lost(&mut self, idx: u32, now: u64, timed_out: bool) {
        self.cc.on_loss(now, timed_out);
        let budget = self.cfg.retry_budget;
        let deadline = self.cfg.request_timeout_ns;
        self.leave_wire(idx);
        let s = &mut self.slots[idx as usize];
        s.losses += 1;
        s.prev_id = if timed_out { s.req_id } else { 0 };
        if s.losses > budget || now.saturating_sub(s.first_sent) >= deadline {
            let e = ClioError::Timeout {
                op: s.kind,
                attempts: s.attempts,
                board: None,
            };
            self.finish(idx, Err(e));
        } else {
            s.state = State::Ready;
            self.ready.push_front(idx);
        }
    }

    /// The board answered `BUSY`: resend after an exponential backoff, until
    /// the request deadline.
    fn busy(&mut self, idx: u32, now: u64) {
        self.stats.busy += 1;
        let deadline = self.cfg.request_timeout_ns;
        self.leave_wire(idx);
        let s = &mut self.slots[idx as usize];
        let wait = self
            .cfg
            .busy_backoff_ns
            .saturating_mul(1u64 << s.busy.min(20))
            .min(self.cfg.rto_max_ns);
        s.busy += 1;
        if now.saturating_add(wait).saturating_sub(s.first_sent) >= deadline {
            let e = ClioError::Busy {
                op: s.kind,
                attempts: s.attempts,
            };
            self.finish(idx, Err(e));
        } else {
            s.state = State::Backoff;
            self.arm(now + wait, idx, TimerKind::Backoff);
        }
    }

    /// The slot an id belongs to, if it is the current attempt of an
    /// outstanding request.
    fn attempt(&self, req_id: u32) -> Option<u32> {
        let (id, idx) = self.idmap[req_id as usize & (self.idmap.len() - 1)];
        let s = self.slots.get(idx as usize)?;
        (req_id != 0
            && id == req_id
            && s.req_id == req_id
            && matches!(s.state, State::Inflight | State::Sending))
        .then_some(idx)
    }

    /// The next request id: never 0, and its table entry is not held by a
    /// live attempt (at most `max_ops` entries of 2 × `max_ops` are live,
    /// so this ends within a few steps).
    fn next_id(&mut self) -> u32 {
        loop {
            self.counter = self.counter.wrapping_add(1);
            if self.counter == 0 {
                continue;
            }
            let id = self.counter;
            let (held, _) = self.idmap[id as usize & (self.idmap.len() - 1)];
            if held == 0 || self.attempt(held).is_none() {
                return id;
            }
        }
    }

    /// Take in one received datagram.
    pub fn handle_packet(&mut self, now: u64, bytes: &[u8]) {
        let p = match Packet::new_checked(bytes) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        if p.verify_crc().is_err() {
            // A corrupted response counts as lost: if its (untrusted) id names
            // an outstanding attempt, retry now rather than after the RTO.
            self.stats.corrupt += 1;
            if let Some(idx) = self.attempt(p.req_id()) {
                self.lost(idx, now, false);
            }
            return;
        }
        let h = match Header::parse(&p) {
            Ok(h) => h,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let Some(idx) = self.attempt(h.req_id) else {
            self.stats.stale += 1;
            self.note_spurious(h.req_id);
            return;
        };
        let s = &self.slots[idx as usize];
        let kind = s.kind;
        // Answers to session requests echo the session and its PID; INFO
        // and OPEN_SESSION answers are checked by their payload instead.
        if let (true, Some(c)) = (
            kind.opcode().is_some_and(Opcode::needs_session),
            self.session,
        ) {
            if h.pid != c.pid || h.session != c.session {
                self.stats.stale += 1;
                return;
            }
        }
        self.last_rx = Some(now);
        self.rx_sent_max = self.rx_sent_max.max(s.sent_at);
        if h.opcode == Opcode::Nack || h.status == Status::Corrupt {
            return self.on_nack(idx, now, &h);
        }
        let expect = kind.opcode().and_then(Opcode::response);
        if Some(h.opcode) != expect {
            self.protocol(idx, now, "clio.opcode");
            return;
        }
        if h.status == Status::Busy {
            let rtt = now.saturating_sub(s.sent_at);
            self.cc.on_rtt(now, rtt);
            self.busy(idx, now);
            return;
        }
        if h.status == Status::Restarted && kind.opcode().is_some_and(Opcode::needs_session) {
            self.restart(h.epoch);
            return;
        }
        if kind == OpKind::CloseSession && matches!(h.status, Status::Ok | Status::BadSession) {
            // Closing a session the board no longer has is done, too.
            self.session = None;
            self.complete(idx, now, Ok(Completion::Closed));
            return;
        }
        if kind == OpKind::OffloadCall && h.status == Status::OffloadRefused {
            let code = match OffloadCallResp::parse(p.payload()) {
                Ok(r) if r.code != 0 => r.code,
                _ => return self.protocol(idx, now, "offload_call_resp.code"),
            };
            let e = ClioError::OffloadRefused { op: kind, code };
            self.complete(idx, now, Err(e));
            return;
        }
        let (pid, session) = self.session.map_or((0, 0), |c| (c.pid, c.session));
        // The request's range, for errors that name it.
        let len = match s.params {
            Params::Free(f) => f.size,
            _ => u64::from(s.len),
        };
        if let Some(e) = ClioError::from_status(h.status, kind, s.va, len, pid, session, h.epoch) {
            self.complete(idx, now, Err(e));
            return;
        }
        let step = match kind {
            OpKind::Read => self.on_read_data(idx, &h, p.payload()),
            OpKind::Write => self.on_write_ack(idx, &h),
            OpKind::OpenSession => self.on_opened(idx, p.payload()).map(Some),
            OpKind::OffloadCall if h.total_len > u32::from(h.payload_len) => {
                self.on_offload_part(idx, &h, p.payload())
            }
            _ => self.slots[idx as usize].answer(&h, p.payload()).map(Some),
        };
        match step {
            Ok(Some(c)) => self.complete(idx, now, Ok(c)),
            Ok(None) => {}
            Err(field) => self.protocol(idx, now, field),
        }
    }

    /// A NACK (or a `CORRUPT` answer) to the current attempt of `idx`.
    fn on_nack(&mut self, idx: u32, now: u64, h: &Header) {
        self.stats.nacks += 1;
        // A NACK names the refused packet's offset: of a write cut in
        // several packets, resend only that one (the others may well have
        // arrived); anything else is one packet, so retry it.
        let s = &self.slots[idx as usize];
        let multi = s.kind == OpKind::Write && s.len > self.mtu;
        let off = h.offset;
        if multi
            && h.opcode == Opcode::Nack
            && off % self.mtu == 0
            && off < s.len
            && off < s.tx_off
            && s.got.next_gap(off) == off
        {
            self.cc.on_loss(now, false);
            self.resend.push_back((idx, h.req_id, off));
        } else {
            self.lost(idx, now, false);
        }
    }

    /// A `READ_RESP` packet: place its bytes; the read completes when every
    /// byte arrived. `Err` names the header field that breaks the protocol.
    fn on_read_data(
        &mut self,
        idx: u32,
        h: &Header,
        payload: &[u8],
    ) -> Result<Option<Completion>, &'static str> {
        let s = &mut self.slots[idx as usize];
        if h.total_len != s.len {
            return Err("clio.total_len");
        }
        if h.va != s.va {
            return Err("clio.va");
        }
        let (off, end) = (h.offset, h.offset + h.payload_len as u32);
        if s.got.insert(off, end) == Insert::Duplicate {
            self.stats.duplicates += 1;
            return Ok(None);
        }
        s.data[off as usize..end as usize].copy_from_slice(payload);
        if !s.got.covers(s.len) {
            return Ok(None);
        }
        Ok(Some(Completion::Read(std::mem::take(&mut s.data))))
    }

    /// One packet of an `OFFLOAD_CALL` answer longer than a packet (a
    /// batch's): `total_len` is the whole answer, `offset` where this
    /// packet's bytes go; the call completes when every byte arrived.
    fn on_offload_part(
        &mut self,
        idx: u32,
        h: &Header,
        payload: &[u8],
    ) -> Result<Option<Completion>, &'static str> {
        let s = &mut self.slots[idx as usize];
        let total = h.total_len;
        if total > MAX_OFFLOAD_ANSWER {
            return Err("clio.total_len");
        }
        if s.got.is_empty() {
            s.answer.clear();
            s.answer.resize(total as usize, 0);
        } else if s.answer.len() != total as usize {
            return Err("clio.total_len");
        }
        let (off, end) = (h.offset, h.offset.saturating_add(u32::from(h.payload_len)));
        if end > total {
            return Err("clio.offset");
        }
        if s.got.insert(off, end) == Insert::Duplicate {
            self.stats.duplicates += 1;
            return Ok(None);
        }
        s.answer[off as usize..end as usize].copy_from_slice(payload);
        if !s.got.covers(total) {
            return Ok(None);
        }
        let answer = std::mem::take(&mut s.answer);
        self.slots[idx as usize].answer(h, &answer).map(Some)
    }

    /// A `WRITE_RESP`: one packet of the write is acknowledged; the write
    /// completes when all are.
    fn on_write_ack(&mut self, idx: u32, h: &Header) -> Result<Option<Completion>, &'static str> {
        let mtu = self.mtu;
        let s = &mut self.slots[idx as usize];
        if h.offset % mtu != 0 || h.offset >= s.len || h.offset >= s.tx_off {
            return Err("clio.offset");
        }
        let end = (h.offset + mtu).min(s.len);
        if s.got.insert(h.offset, end) == Insert::Duplicate {
            self.stats.duplicates += 1;
            return Ok(None);
        }
        Ok(s.got.covers(s.len).then_some(Completion::Written))
    }

    /// An `OPEN_SESSION_RESP`: take the session's credentials.
    fn on_opened(&mut self, idx: u32, payload: &[u8]) -> Result<Completion, &'static str> {
        let r = OpenSessionResp::parse(payload).map_err(|e| e.field)?;
        let join = match self.slots[idx as usize].params {
            Params::Open(j) => j,
            _ => None,
        };
        if r.session == 0 || r.pid == 0 || r.epoch == 0 {
            return Err("open_session_resp.session");
        }
        if join.is_some_and(|t| t.pid != r.pid) {
            return Err("open_session_resp.pid");
        }
        let info = SessionInfo {
            pid: r.pid,
            session: r.session,
            epoch: r.epoch,
            key: r.key,
            dedup_quota: r.dedup_quota,
            lock_quota: r.lock_quota,
            mem_quota_pages: r.mem_quota_pages,
        };
        self.session = Some(info);
        self.restarted = None;
        Ok(Completion::Opened(info))
    }

    /// A stale answer: if it answers the attempt before the current one of
    /// an outstanding request, retried on RTO expiry, that expiry was
    /// spurious (the answer was merely late). Counted once per attempt.
    fn note_spurious(&mut self, req_id: u32) {
        let (id, idx) = self.idmap[req_id as usize & (self.idmap.len() - 1)];
        if req_id == 0 || id != req_id {
            return;
        }
        if let Some(s) = self.slots.get_mut(idx as usize) {
            let live = matches!(
                s.state,
                State::Ready | State::Sending | State::Inflight | State::Backoff
            );
            if live && s.prev_id == req_id {
                s.prev_id = 0;
                self.stats.spurious_timeouts += 1;
            }
        }
    }

    /// The board answered `RESTARTED`: its epoch is now `epoch`, the
    /// session is gone, and so is every operation of this connection.
    fn restart(&mut self, epoch: u32) {
        self.restarted = Some(epoch);
        self.session = None;
        self.resend.clear();
        // Releases first: finishing what they wait for must not complete
        // them with success.
        for releases in [true, false] {
            for idx in 0..self.slots.len() as u32 {
                let s = &self.slots[idx as usize];
                let outstanding = !matches!(s.state, State::Free | State::Done);
                if outstanding && (s.kind == OpKind::Release) == releases {
                    let op = s.kind;
                    self.finish(idx, Err(ClioError::BoardRestarted { op, epoch }));
                }
            }
        }
        self.ready.clear();
        self.sending = None;
    }

    fn protocol(&mut self, idx: u32, now: u64, field: &'static str) {
        let op = self.slots[idx as usize].kind;
        self.complete(idx, now, Err(ClioError::Protocol { op, field }));
    }

    /// A request got its answer: sample the RTT and finish it.
    fn complete(&mut self, idx: u32, now: u64, result: Result<Completion, ClioError>) {
        let rtt = now.saturating_sub(self.slots[idx as usize].sent_at);
        self.cc.on_rtt(now, rtt);
        self.finish(idx, result);
    }
}

/// Whether a timer still refers to the current state of its slot.
fn timer_live(slots: &[Slot], t: Timer) -> bool {
    let s = &slots[t.slot as usize];
    s.req_id == t.token
        && match t.kind {
            TimerKind::Rto => s.state == State::Inflight,
            TimerKind::Backoff => s.state == State::Backoff,
        }
}

/// A request's `[va, va + len)` must be non-empty and must not wrap.
fn check_range(va: u64, len: u64, what: &'static str) -> Result<(), ClioError> {
    if len == 0 {
        return Err(ClioError::InvalidArgument {
            what,
            reason: "must not be zero",
        });
    }
    if va.checked_add(len).is_none() {
        return Err(ClioError::InvalidArgument {
            what: "va",
            reason: "range wraps the address space",
        });
    }
    Ok(())
}

/// A read or write must fit `max_request_bytes`.
fn check_max(len: u64, max: u64, what: &'static str) -> Result<(), ClioError> {
    if len > max {
        return Err(ClioError::InvalidArgument {
            what,
            reason: "exceeds max_request_bytes",
        });
    }
    Ok(())
}

/// Check an `ALLOC`'s arguments: its VA (0 unless fixed), fields and
/// footprint (a fixed range is ordered like a write of it).
fn prepare_alloc(
    size: u64,
    p: u8,
    page_shift: u8,
    fixed_va: Option<u64>,
    shift: u8,
) -> Result<(u64, Params, Footprint), ClioError> {
    if size == 0 {
        return Err(ClioError::InvalidArgument {
            what: "size",
            reason: "must not be zero",
        });
    }
    if p == 0 || p & !perms::ALL != 0 {
        return Err(ClioError::InvalidArgument {
            what: "perms",
            reason: "must be a non-empty set of READ | WRITE",
        });
    }
    if page_shift != 0 && !(12..=30).contains(&page_shift) {
        return Err(ClioError::InvalidArgument {
            what: "page_shift",
            reason: "must be 0 or in 12..=30",
        });
    }
    let req = AllocReq {
        size,
        perms: p,
        page_shift,
    };
    Ok(match fixed_va {
        Some(va) => {
            check_range(va, size, "size")?;
            let fp = Footprint::range(va, size, shift, true);
            (va, Params::Alloc { req, fixed: true }, fp)
        }
        None => (0, Params::Alloc { req, fixed: false }, Footprint::None),
    })
}

/// Bytes the answer to an operation occupies on the wire (headers
/// included), which the incast window reserves while it is outstanding.
fn response_bytes(kind: OpKind, len: u32, params: Params, mtu: u32) -> u64 {
    let (len, mtu, hdr) = (len as u64, mtu as u64, HEADER_LEN as u64);
    match kind {
        OpKind::Read => len + hdr * len.div_ceil(mtu),
        OpKind::Write => hdr * len.div_ceil(mtu),
        OpKind::Alloc => hdr + AllocResp::LEN as u64,
        OpKind::Info => hdr + InfoResp::LEN as u64,
        OpKind::OpenSession => hdr + OpenSessionResp::LEN as u64,
        OpKind::CloseSession | OpKind::Fence | OpKind::Release => hdr,
        OpKind::PointerChase => match params {
            Params::Chase(c) => {
                hdr + (clio_wire::payload::ChaseResp::LEN + c.value_len as usize) as u64
            }
            _ => hdr,
        },
        // The result's length is the offload's business: at most a packet.
        OpKind::OffloadCall => hdr + mtu,
        _ => hdr + AtomicResp::LEN as u64,
    }
}
