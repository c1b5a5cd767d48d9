//! The offload engine of the emulated memory node: a registry of offloads by
//! id, reached by `OFFLOAD_CALL` through the fast path's offload port.
//!
//! An offload is a program at the memory node with its own address space.
//! It reaches memory exactly as a client does (rule 8 of the design brief):
//! through Clio packets into the fast path, under its own session, so the
//! board's translation, permissions, first-touch faults, allocation by the
//! slow path, dedup and quotas apply to it unchanged. The only difference is
//! that its packets never cross a network: [`OffloadMem`] hands them to the
//! fast path in process and takes its answers back.
//!
//! On a real ZCU106 this engine is ARM software (it needs a general-purpose
//! CPU: hashing, variable-length keys, chains of unknown length, allocation
//! decisions), reached over the same kind of ring as alloc/free; only fixed,
//! bounded walks such as `POINTER_CHASE` are worth building in the RTL
//! extend path. See the emulator README.
//!
//! An offload may also work in the *caller's* address space for the rest of
//! a call ([`OffloadMem::use_caller_space`]): it joins the caller's PID with
//! a session of its own (the `OPEN_SESSION` join the SDK's `share` uses,
//! proven by the caller's session key that the fast path has just checked)
//! and closes that session when the call ends, so it never keeps the
//! caller's memory alive. This is how Clio-DF's `select` and `aggregate`
//! scan data the compute node wrote, with no copy and no serialization
//! (the dissertation's "one address space" for a user's CN and MN code).
//!
//! Exactly-once: an `OFFLOAD_CALL` is non-idempotent, but its answer can be a
//! whole packet, more than the fast path's 16-byte dedup records hold. The
//! engine therefore remembers its answers itself per (session, first
//! attempt's request id) and replays them to retries, forgetting them when
//! the session's `ack` watermark passes them, and the oldest beyond the
//! board's `dedup.offload_answers` in all sessions together (the bound the
//! firmware's slow path keeps too).

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use clio_fastpath::{ClientId as FpClient, DirectCreds, OffloadJob};
use clio_wire::clio::serial_before;
use clio_wire::payload::{
    AllocReq, AllocResp, AtomicArgs, AtomicResp, OffloadBatchReq, OffloadBatchResult,
    OffloadCallReq, OffloadCallResp, OpenSessionReq, OpenSessionResp, OFFLOAD_OP_BATCH,
};
use clio_wire::{Header, Opcode, Packet, Status};

use crate::board::Board;

/// Client ids of offloads' own sessions: counted down from the top of the id
/// space, far from any UDP client slot.
const OFFLOAD_CLIENT_TOP: u64 = u64::MAX;

/// Times one memory request is re-sent after `BUSY` (with the slow path run
/// in between, which is what frees whatever was busy) before it faults.
const BUSY_RETRIES: u32 = 64;

/// Why an offload call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffloadError {
    /// The offload refuses the call for its own reason (not 0); the client
    /// gets `OFFLOAD_REFUSED` with this code.
    Refused(u16),
    /// The offload faulted (a memory access failed, or its own invariant
    /// broke); the client gets `OFFLOAD_FAULT`.
    Fault(String),
}

impl From<MemError> for OffloadError {
    fn from(e: MemError) -> Self {
        OffloadError::Fault(e.to_string())
    }
}

/// A memory access of an offload that the board refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemError {
    /// The request.
    pub op: Opcode,
    /// Its VA.
    pub va: u64,
    /// The board's answer (or `Busy` if it stayed busy, `Corrupt` if it did
    /// not answer at all).
    pub status: Status,
}

impl std::fmt::Display for MemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at va {:#x}: {}",
            self.op.name(),
            self.va,
            self.status.name()
        )
    }
}

impl std::error::Error for MemError {}

/// An offload: one program at the memory node, serving calls.
pub trait Offload: Send {
    /// Short name (for logs and errors).
    fn name(&self) -> &str;

    /// Serve operation `op` with `args`, appending the result bytes to
    /// `out` (at most [`OffloadMem::max_result`]); every memory access goes
    /// through `mem`. A panic is caught and answered as a fault.
    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError>;

    /// Called before a batch runs with its operations in order (the ones
    /// whose arguments parse as a batch), so the offload can start bringing
    /// in the memory they will touch with [`OffloadMem::prefetch`], as a
    /// pipelined engine keeps several DRAM reads in flight. Only a hint: it
    /// must not change any answer (every operation then runs as
    /// [`Offload::call`], in order). The default does nothing.
    fn prepare(&mut self, mem: &mut OffloadMem<'_>, ops: &[(u16, &[u8])]) {
        let _ = (mem, ops);
    }

    /// Most result bytes operation `op` can return, when the offload knows
    /// a bound below one packet's worth ([`OffloadMem::max_result`]). A
    /// batch's answer is sized with it: each operation counts at this many
    /// bytes (at one packet's worth when `None`), so with jumbo frames a
    /// batch of small results is not refused for room it will never use.
    /// A result over its bound is the offload's fault (`OFFLOAD_FAULT`).
    fn max_result(&self, op: u16) -> Option<usize> {
        let _ = op;
        None
    }
}

/// The session an offload holds at its board.
#[derive(Debug, Clone, Copy, Default)]
struct Creds {
    pid: u32,
    session: u16,
    epoch: u32,
    key: u64,
}

/// An offload's client state: its session and request ids.
#[derive(Debug)]
struct OffloadClient {
    from: u64,
    creds: Option<Creds>,
    next_id: u32,
}

/// Buffers of the offload engine's in-process exchanges, reused from one
/// memory access to the next.
#[derive(Debug, Default)]
struct Scratch {
    /// The request being sent.
    tx: Vec<u8>,
    /// Answers to the offload's client: `inbox[..answers]` are this
    /// exchange's (the rest keep their capacity for the next).
    inbox: Vec<Vec<u8>>,
    answers: usize,
    /// A read handed over in place that crossed pages, gathered.
    view: Vec<u8>,
}

impl Scratch {
    fn answers(&self) -> &[Vec<u8>] {
        &self.inbox[..self.answers]
    }
}

/// The memory interface of an offload: Clio requests of its own session,
/// handed to the fast path in process. Each call completes before it
/// returns (no pipelining: an offload on the ARM waits for its DRAM too).
pub struct OffloadMem<'a> {
    board: &'a mut Board,
    /// The offload's own session.
    client: &'a mut OffloadClient,
    /// The session joined to the caller's address space, once asked for.
    joined: Option<OffloadClient>,
    /// Whether accesses go to the caller's address space (`joined`).
    in_caller: bool,
    /// The caller's checked credentials (from the call's header).
    caller: Creds,
    /// Client id the joined session sends from.
    joined_from: u64,
    out: &'a mut dyn FnMut(u64, &[u8]),
    /// Buffers kept across accesses and calls (no allocation per access).
    scratch: &'a mut Scratch,
    mtu: usize,
    /// Bytes one read request may ask for (the board's response bound).
    max_read: usize,
    /// Whether reads, writes and CAS try the direct translated access first.
    direct: bool,
    /// Accesses served directly / as packets (the engine's counters).
    counts: &'a mut MemCounts,
}

/// How offloads' reads, writes and CAS were served.
#[derive(Debug, Clone, Copy, Default)]
struct MemCounts {
    direct: u64,
    packets: u64,
}

impl std::fmt::Debug for OffloadMem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffloadMem")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl OffloadMem<'_> {
    /// The board's MTU payload: writes are split into requests of this
    /// size; a read asks for up to the response bound at once and is
    /// answered in packets of this size.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Largest result an offload may return (one packet).
    pub fn max_result(&self) -> usize {
        self.mtu - OffloadCallResp::LEN
    }

    /// The PID of the address space in use: the offload's own (opening its
    /// session on first use) or, after [`OffloadMem::use_caller_space`],
    /// the caller's.
    pub fn pid(&mut self) -> Result<u32, MemError> {
        Ok(self.creds()?.pid)
    }

    /// Work in the caller's address space (the PID that sent this call)
    /// from now until [`OffloadMem::use_own_space`] or the end of the call:
    /// every `alloc`, `read`, `write` and `cas` then acts on the caller's
    /// memory, under the caller's quotas and permissions. The first use in a
    /// call joins the caller's PID with a session of the offload's (closed
    /// when the call ends). Returns the caller's PID.
    pub fn use_caller_space(&mut self) -> Result<u32, MemError> {
        if self.joined.is_none() {
            self.joined = Some(OffloadClient {
                from: self.joined_from,
                creds: None,
                next_id: 1,
            });
            self.in_caller = true;
            let r = self.join_caller();
            if let Err(e) = r {
                self.joined = None;
                self.in_caller = false;
                return Err(e);
            }
        }
        self.in_caller = true;
        Ok(self.caller.pid)
    }

    /// Open the joined session (the active client is the new one).
    fn join_caller(&mut self) -> Result<(), MemError> {
        let mut p = [0u8; OpenSessionReq::LEN];
        let _ = OpenSessionReq {
            join_session: self.caller.session,
            join_key: self.caller.key,
        }
        .emit(&mut p);
        let id = self.next_id();
        let h = Header::request(Opcode::OpenSession, self.caller.pid, id, 0, 0);
        let (rh, payload) = self.exchange(h, &p)?;
        let bad = |status| MemError {
            op: Opcode::OpenSession,
            va: 0,
            status,
        };
        if rh.status != Status::Ok {
            return Err(bad(rh.status));
        }
        let r = OpenSessionResp::parse(&payload).map_err(|_| bad(Status::Malformed))?;
        self.active().creds = Some(Creds {
            pid: r.pid,
            session: r.session,
            epoch: r.epoch,
            key: r.key,
        });
        Ok(())
    }

    /// Work in the offload's own address space again (the default).
    pub fn use_own_space(&mut self) {
        self.in_caller = false;
    }

    /// Close the session joined to the caller's address space, if any.
    fn leave_caller(&mut self) {
        self.in_caller = true;
        if self.joined.as_ref().and_then(|j| j.creds).is_some() {
            // A failure leaves a session the board expires with the PID's
            // others; nothing the caller could act on.
            let _ = self.request(Opcode::CloseSession, 0, 0, &[]);
        }
        self.joined = None;
        self.in_caller = false;
    }

    /// The client whose session accesses use now.
    fn active(&mut self) -> &mut OffloadClient {
        match (&mut self.joined, self.in_caller) {
            (Some(j), true) => j,
            _ => self.client,
        }
    }

    fn creds(&mut self) -> Result<Creds, MemError> {
        if let Some(c) = self.active().creds {
            return Ok(c);
        }
        if self.in_caller {
            // The joined session was lost (board restarted): the caller's
            // session is gone with it.
            return Err(MemError {
                op: Opcode::OpenSession,
                va: 0,
                status: Status::BadSession,
            });
        }
        let mut p = [0u8; OpenSessionReq::LEN];
        let _ = OpenSessionReq {
            join_session: 0,
            join_key: 0,
        }
        .emit(&mut p);
        let id = self.next_id();
        let h = Header::request(Opcode::OpenSession, 0, id, 0, 0);
        let (_, payload) = self.exchange(h, &p)?;
        let r = OpenSessionResp::parse(&payload).map_err(|_| MemError {
            op: Opcode::OpenSession,
            va: 0,
            status: Status::Malformed,
        })?;
        let c = Creds {
            pid: r.pid,
            session: r.session,
            epoch: r.epoch,
            key: r.key,
        };
        self.client.creds = Some(c);
        Ok(c)
    }

    fn next_id(&mut self) -> u32 {
        let c = self.active();
        let id = c.next_id;
        c.next_id = id.wrapping_add(1).max(1);
        id
    }

    /// One request of the offload's session; its (single) answer.
    fn request(
        &mut self,
        op: Opcode,
        va: u64,
        total_len: u32,
        payload: &[u8],
    ) -> Result<(Header, Vec<u8>), MemError> {
        let c = self.creds()?;
        let id = self.next_id();
        let mut h =
            Header::request(op, c.pid, id, va, total_len).with_session(c.session, c.epoch, c.key);
        // Every earlier request was answered before this one was sent.
        h.ack = id;
        let (rh, rp) = self.exchange(h, payload)?;
        if rh.status != Status::Ok {
            if matches!(rh.status, Status::BadSession | Status::Restarted) {
                self.active().creds = None;
            }
            return Err(MemError {
                op,
                va,
                status: rh.status,
            });
        }
        Ok((rh, rp))
    }

    /// Send `h` with `payload` into the fast path (running the slow path
    /// when the request went there), retrying `BUSY`; the answer.
    fn exchange(&mut self, mut h: Header, payload: &[u8]) -> Result<(Header, Vec<u8>), MemError> {
        let first = h.req_id;
        for attempt in 0..=BUSY_RETRIES {
            if attempt > 0 {
                h.retry_of = first;
                h.req_id = self.next_id();
            }
            let (op, va) = (h.opcode, h.va);
            let malformed = move || MemError {
                op,
                va,
                status: Status::Malformed,
            };
            h.payload_len = u16::try_from(payload.len()).map_err(|_| malformed())?;
            let sc = &mut *self.scratch;
            sc.tx.resize(h.buffer_len(), 0);
            h.emit_with_payload(&mut sc.tx, payload)
                .map_err(|_| malformed())?;
            sc.answers = 0;
            let me = self.active().from;
            {
                let sc = &mut *self.scratch;
                let (tx, inbox, answers, out) =
                    (&sc.tx, &mut sc.inbox, &mut sc.answers, &mut *self.out);
                let mut route = |c: u64, p: &[u8]| {
                    if c == me {
                        if inbox.len() == *answers {
                            inbox.push(Vec::new());
                        }
                        let b = &mut inbox[*answers];
                        b.clear();
                        b.extend_from_slice(p);
                        *answers += 1;
                    } else {
                        out(c, p);
                    }
                };
                self.board.handle_raw(me, tx, &mut route);
            }
            let Some(resp) = self.scratch.answers().first() else {
                return Err(MemError {
                    op: h.opcode,
                    va: h.va,
                    status: Status::Corrupt,
                });
            };
            let p = Packet::new_unchecked(&resp[..]);
            // The answer was handed over in memory by the fast path, which
            // filled its CRC a moment ago; re-checking it guards no link.
            let rh = Header::parse(&p).map_err(|_| MemError {
                op: h.opcode,
                va: h.va,
                status: Status::Corrupt,
            })?;
            if rh.status == Status::Busy {
                continue;
            }
            return Ok((rh, p.payload().to_vec()));
        }
        Err(MemError {
            op: h.opcode,
            va: h.va,
            status: Status::Busy,
        })
    }

    /// The credentials for a direct access, `None` when it is off or the
    /// session is not open yet (its opening is a packet exchange).
    fn direct_creds(&mut self) -> Option<DirectCreds> {
        if !self.direct {
            return None;
        }
        let c = self.active().creds?;
        Some(DirectCreds {
            pid: c.pid,
            session: c.session,
            epoch: c.epoch,
            key: c.key,
        })
    }

    /// Try `f` as a direct translated access; `true` if it succeeded. A
    /// refusal is not final: the caller sends the same access as a packet,
    /// whose path gives the refusal its usual handling (the slow path run
    /// and `BUSY` retried, the status reported).
    fn try_direct<R>(
        &mut self,
        f: impl FnOnce(&mut FastPathOf, &DirectCreds) -> Result<R, Status>,
    ) -> Option<R> {
        let c = self.direct_creds()?;
        let r = f(self.board.fast_mut(), &c);
        self.board.after_direct(&mut *self.out);
        match r {
            Ok(v) => {
                self.counts.direct += 1;
                Some(v)
            }
            Err(_) => None,
        }
    }

    /// Start bringing `len` bytes at `va` into the caches for a read that
    /// follows (the direct translated access's [`FastPath::direct_prefetch`]):
    /// no effect on memory, answers or counters; nothing when direct access
    /// is off or the page is not in the TLB.
    ///
    /// [`FastPath::direct_prefetch`]: clio_fastpath::FastPath::direct_prefetch
    pub fn prefetch(&mut self, va: u64, len: usize) {
        if let Some(c) = self.direct_creds() {
            self.board.fast().direct_prefetch(&c, va, len);
        }
    }

    /// Allocate `size` bytes (read/write) in the offload's address space.
    pub fn alloc(&mut self, size: u64) -> Result<u64, MemError> {
        let mut p = [0u8; AllocReq::LEN];
        let _ = AllocReq {
            size,
            perms: clio_wire::payload::perms::RW,
            page_shift: 0,
        }
        .emit(&mut p);
        let (h, payload) = self.request(Opcode::Alloc, 0, 0, &p)?;
        AllocResp::parse(&payload).map_err(|_| MemError {
            op: Opcode::Alloc,
            va: 0,
            status: Status::Malformed,
        })?;
        Ok(h.va)
    }

    /// Read `buf.len()` bytes at `va`: one request per response bound
    /// (`network.max_response_bytes`), answered by the fast path with one
    /// packet per MTU, as it answers a client.
    pub fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MemError> {
        if self
            .try_direct(|fp, c| fp.direct_read(c, va, buf))
            .is_some()
        {
            return Ok(());
        }
        self.read_packets(va, buf)
    }

    /// Read `len` bytes at `va` and hand them to `f` where they lie (the
    /// direct translated access: no copy into a buffer first), or, when
    /// that access is refused, read as [`OffloadMem::read`] does into a
    /// scratch buffer and hand that. Same checks, translation and errors as
    /// `read`; `f` runs once, only for a read that succeeded.
    pub fn read_with<R>(
        &mut self,
        va: u64,
        len: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, MemError> {
        let mut f = Some(f);
        let mut view = std::mem::take(&mut self.scratch.view);
        let direct = self.try_direct(|fp, c| {
            fp.direct_read_with(c, va, len, &mut view, |b| f.take().map(|f| f(b)))
        });
        let r = match (direct.flatten(), f.take()) {
            (Some(r), _) => Ok(r),
            (None, Some(f)) => {
                view.clear();
                view.resize(len, 0);
                self.read_packets(va, &mut view).map(|()| f(&view))
            }
            // `f` ran, so the direct access answered.
            (None, None) => Err(MemError {
                op: Opcode::Read,
                va,
                status: Status::Corrupt,
            }),
        };
        self.scratch.view = view;
        r
    }

    /// [`OffloadMem::read`] as Clio packets.
    fn read_packets(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MemError> {
        self.counts.packets += 1;
        let max = self.max_read;
        for (i, chunk) in buf.chunks_mut(max).enumerate() {
            let at = va.wrapping_add((i * max) as u64);
            let bad = |status| MemError {
                op: Opcode::Read,
                va: at,
                status,
            };
            let place = |chunk: &mut [u8], off: u32, data: &[u8]| {
                let off = off as usize;
                let dst = chunk
                    .get_mut(off..off + data.len())
                    .ok_or(bad(Status::Malformed))?;
                dst.copy_from_slice(data);
                Ok::<usize, MemError>(data.len())
            };
            let (h0, first) = self.request(Opcode::Read, at, chunk.len() as u32, &[])?;
            let mut got = place(chunk, h0.offset, &first)?;
            // The fast path answered the whole request at once: the other
            // packets are in the inbox behind the first.
            for raw in self.scratch.answers().iter().skip(1) {
                let p = Packet::new_unchecked(&raw[..]);
                let rh = Header::parse(&p).map_err(|_| bad(Status::Corrupt))?;
                if rh.req_id != h0.req_id {
                    return Err(bad(Status::Corrupt));
                }
                if rh.status != Status::Ok {
                    return Err(bad(rh.status));
                }
                got += place(chunk, rh.offset, p.payload())?;
            }
            if got != chunk.len() {
                return Err(bad(Status::Malformed));
            }
        }
        Ok(())
    }

    /// Write `data` at `va` (one request per MTU).
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemError> {
        if self
            .try_direct(|fp, c| fp.direct_write(c, va, data))
            .is_some()
        {
            return Ok(());
        }
        self.counts.packets += 1;
        let mtu = self.mtu;
        for (i, chunk) in data.chunks(mtu).enumerate() {
            let at = va.wrapping_add((i * mtu) as u64);
            self.request(Opcode::Write, at, chunk.len() as u32, chunk)?;
        }
        Ok(())
    }

    /// Compare-and-swap the 8-byte word at `va`; the old value.
    pub fn cas(&mut self, va: u64, expected: u64, new: u64) -> Result<u64, MemError> {
        if let Some(old) = self.try_direct(|fp, c| fp.direct_cas(c, va, expected, new)) {
            return Ok(old);
        }
        self.counts.packets += 1;
        let mut p = [0u8; AtomicArgs::CAS_LEN];
        let _ = AtomicArgs::CompareAndSwap { expected, new }.emit(&mut p);
        let (_, payload) = self.request(Opcode::CompareAndSwap, va, 8, &p)?;
        AtomicResp::parse(&payload)
            .map(|r| r.old)
            .map_err(|_| MemError {
                op: Opcode::CompareAndSwap,
                va,
                status: Status::Malformed,
            })
    }
}

type FastPathOf = clio_fastpath::FastPath<Vec<u8>>;

struct Entry {
    offload: Box<dyn Offload>,
    client: OffloadClient,
    /// Client id of the sessions it joins to callers' address spaces.
    joined_from: u64,
}

/// A remembered answer.
type Answer = (Status, Vec<u8>);

/// The registry of offloads at one board and their exactly-once records.
#[derive(Default)]
pub struct OffloadEngine {
    entries: BTreeMap<u32, Entry>,
    /// Per client session: answers by first attempt's request id.
    answers: HashMap<u16, BTreeMap<u32, Answer>>,
    /// The remembered answers' keys, oldest first (some already forgotten
    /// through their session's `ack`: skipped when met).
    order: std::collections::VecDeque<(u16, u32)>,
    /// Answers remembered in all, and the most kept (`dedup.offload_answers`).
    remembered: usize,
    remember: usize,
    /// Calls answered (ok, refused, fault) since boot.
    counters: OffloadCounters,
    /// Exchange buffers of the offloads' memory accesses.
    scratch: Scratch,
    /// Direct translated access off (`Board::set_offload_direct`).
    packets_only: bool,
    mem_counts: MemCounts,
}

impl std::fmt::Debug for OffloadEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self
            .entries
            .iter()
            .map(|(id, e)| (*id, e.offload.name().to_string()))
            .collect();
        f.debug_struct("OffloadEngine")
            .field("offloads", &names)
            .field("counters", &self.counters)
            .finish()
    }
}

/// Counters of the offload engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OffloadCounters {
    /// Calls answered `OK`.
    pub ok: u64,
    /// Calls answered `OFFLOAD_REFUSED`.
    pub refused: u64,
    /// Calls answered `OFFLOAD_FAULT`.
    pub faults: u64,
    /// Calls answered `NO_SUCH_OFFLOAD`.
    pub unknown: u64,
    /// Retries answered from the remembered answer.
    pub replays: u64,
    /// Offloads' reads, writes and CAS served by the direct translated
    /// access.
    pub direct: u64,
    /// Offloads' reads, writes and CAS sent as Clio packets (direct access
    /// off, or refused and retried as a packet).
    pub packets: u64,
}

impl OffloadEngine {
    /// An engine that remembers up to `remember` (≥ 1) answers for retries,
    /// all sessions together (the board's `dedup.offload_answers`).
    pub fn new(remember: usize) -> OffloadEngine {
        OffloadEngine {
            remember: remember.max(1),
            ..OffloadEngine::default()
        }
    }

    /// Answers remembered for retries now.
    pub fn remembered(&self) -> usize {
        self.remembered
    }

    /// Most answers remembered (`dedup.offload_answers`).
    pub fn bound(&self) -> usize {
        self.remember
    }

    /// Register `offload` under `id` (not 0); an id already taken is an error.
    pub fn register(&mut self, id: u32, offload: Box<dyn Offload>) -> Result<(), String> {
        if id == 0 {
            return Err("offload id 0 is reserved".into());
        }
        if let Some(e) = self.entries.get(&id) {
            return Err(format!("offload id {id} is taken by {}", e.offload.name()));
        }
        let from = OFFLOAD_CLIENT_TOP - u64::from(id);
        let joined_from = OFFLOAD_CLIENT_TOP - (1 << 32) - u64::from(id);
        self.entries.insert(
            id,
            Entry {
                offload,
                client: OffloadClient {
                    from,
                    creds: None,
                    next_id: 1,
                },
                joined_from,
            },
        );
        Ok(())
    }

    /// Whether offloads' memory accesses try the direct translated access.
    pub fn set_direct(&mut self, on: bool) {
        self.packets_only = !on;
    }

    /// Counters.
    pub fn counters(&self) -> OffloadCounters {
        OffloadCounters {
            direct: self.mem_counts.direct,
            packets: self.mem_counts.packets,
            ..self.counters
        }
    }

    /// Whether an id is registered.
    pub fn has(&self, id: u32) -> bool {
        self.entries.contains_key(&id)
    }

    /// Serve one call from the port, answering through the board's fast path.
    pub(crate) fn serve(
        &mut self,
        board: &mut Board,
        job: OffloadJob,
        out: &mut dyn FnMut(u64, &[u8]),
    ) {
        let h = job.header;
        let first = if h.retry_of != 0 {
            h.retry_of
        } else {
            h.req_id
        };
        let mine = self.answers.entry(h.session).or_default();
        if h.ack != 0 {
            let before = mine.len();
            mine.retain(|&id, _| !serial_before(id, h.ack));
            self.remembered -= before - mine.len();
        }
        if let Some((status, payload)) = mine.get(&first) {
            self.counters.replays += 1;
            let (status, payload) = (*status, payload.clone());
            return reply(board, &job, status, &payload, out);
        }
        let (status, payload) = self.run(board, &job, out);
        reply(board, &job, status, &payload, out);
        // Remembered after it is sent, so the answer moves in (no copy).
        self.remember_answer(h.session, first, (status, payload));
    }

    /// Keep `answer` for retries of (`session`, `first`), forgetting the
    /// oldest remembered answer when `remember` are kept already.
    fn remember_answer(&mut self, session: u16, first: u32, answer: Answer) {
        let bound = if self.remember == 0 {
            clio_config::DEFAULT_OFFLOAD_ANSWERS as usize
        } else {
            self.remember
        };
        while self.remembered >= bound {
            let Some((s, id)) = self.order.pop_front() else {
                break;
            };
            if let Some(m) = self.answers.get_mut(&s) {
                if m.remove(&id).is_some() {
                    self.remembered -= 1;
                }
            }
        }
        let old = self
            .answers
            .entry(session)
            .or_default()
            .insert(first, answer);
        if old.is_none() {
            self.remembered += 1;
        }
        self.order.push_back((session, first));
        // Keys forgotten through `ack` stay in `order` until met; compact
        // it so it stays within a few times the bound.
        if self.order.len() > 4 * bound {
            let answers = &self.answers;
            self.order
                .retain(|(s, id)| answers.get(s).is_some_and(|m| m.contains_key(id)));
        }
    }

    fn run(
        &mut self,
        board: &mut Board,
        job: &OffloadJob,
        out: &mut dyn FnMut(u64, &[u8]),
    ) -> Answer {
        let Ok((req, args)) = OffloadCallReq::parse_with_args(&job.payload) else {
            return (Status::Malformed, Vec::new());
        };
        let Some(e) = self.entries.get_mut(&req.offload) else {
            self.counters.unknown += 1;
            return (Status::NoSuchOffload, Vec::new());
        };
        let mtu = board.fast().layout().mtu;
        let max_read = (board.fast().layout().max_resp as usize).max(mtu);
        let mut result = vec![0u8; OffloadCallResp::LEN];
        let h = &job.header;
        let mut mem = OffloadMem {
            board,
            client: &mut e.client,
            joined: None,
            in_caller: false,
            caller: Creds {
                pid: h.pid,
                session: h.session,
                epoch: h.epoch,
                key: h.key,
            },
            joined_from: e.joined_from,
            out,
            scratch: &mut self.scratch,
            mtu,
            max_read,
            direct: !self.packets_only,
            counts: &mut self.mem_counts,
        };
        let offload = &mut e.offload;
        let counters = &mut self.counters;
        if req.op != OFFLOAD_OP_BATCH {
            let r = catch_unwind(AssertUnwindSafe(|| {
                offload.call(&mut mem, req.op, args, &mut result)
            }));
            mem.leave_caller();
            return match outcome(r, result.len() - OffloadCallResp::LEN, mtu, counters) {
                (Status::Ok, _) => (Status::Ok, result),
                (Status::OffloadRefused, code) => {
                    let mut p = vec![0u8; OffloadCallResp::LEN];
                    let _ = OffloadCallResp { code }.emit(&mut p);
                    (Status::OffloadRefused, p)
                }
                (s, _) => (s, Vec::new()),
            };
        }
        // A batch: each operation as its own call, each with its own outcome.
        let Ok(ops) = OffloadBatchReq::ops(args) else {
            mem.leave_caller();
            return (Status::Malformed, Vec::new());
        };
        let max_result = mtu - OffloadCallResp::LEN;
        // Each operation's result at most its declared bound, one packet's
        // worth at most.
        let cap =
            |o: &dyn Offload, op: u16| o.max_result(op).map_or(max_result, |m| m.min(max_result));
        let bound = mem.max_read;
        let count = ops.clone().count();
        let answer: usize = OffloadCallResp::LEN
            + OffloadBatchReq::LEN
            + ops
                .clone()
                .map(|(op, _)| OffloadBatchResult::LEN + cap(&**offload, op))
                .sum::<usize>();
        if answer > bound {
            // Its answer could outgrow what one request may be answered.
            mem.leave_caller();
            return (Status::TooLarge, Vec::new());
        }
        // Room for the largest answer at once: results are appended in
        // place, never moved by the vector's growth.
        result.reserve(answer - result.len());
        result.extend_from_slice(
            &OffloadBatchReq {
                count: count as u16,
            }
            .to_bytes(),
        );
        let look: Vec<(u16, &[u8])> = ops.clone().collect();
        // A panicking hint is ignored: the calls that follow answer.
        let _ = catch_unwind(AssertUnwindSafe(|| offload.prepare(&mut mem, &look)));
        for (op, op_args) in ops {
            let at = result.len();
            result.extend_from_slice(&[0u8; OffloadBatchResult::LEN]);
            let r = catch_unwind(AssertUnwindSafe(|| {
                offload.call(&mut mem, op, op_args, &mut result)
            }));
            let len = result.len() - at - OffloadBatchResult::LEN;
            let limit = cap(&**offload, op) + OffloadCallResp::LEN;
            let (status, code) = outcome(r, len, limit, counters);
            if status != Status::Ok {
                result.truncate(at + OffloadBatchResult::LEN);
            }
            let len = if status == Status::Ok { len as u32 } else { 0 };
            let o = OffloadBatchResult { status, code, len };
            result[at..at + OffloadBatchResult::LEN].copy_from_slice(&o.to_bytes());
        }
        mem.leave_caller();
        (Status::Ok, result)
    }
}

/// What an offload's call came to: `Ok`, `OffloadRefused` with its code,
/// or `OffloadFault` (a fault, a panic, a result of `len` bytes over one
/// packet of `mtu`, a refusal without a reason: all the offload's failure,
/// not the caller's); counted.
fn outcome(
    r: std::thread::Result<Result<(), OffloadError>>,
    len: usize,
    mtu: usize,
    counters: &mut OffloadCounters,
) -> (Status, u16) {
    match r {
        Ok(Ok(())) if len + OffloadCallResp::LEN <= mtu => {
            counters.ok += 1;
            (Status::Ok, 0)
        }
        Ok(Err(OffloadError::Refused(code))) if code != 0 => {
            counters.refused += 1;
            (Status::OffloadRefused, code)
        }
        _ => {
            counters.faults += 1;
            (Status::OffloadFault, 0)
        }
    }
}

fn reply(
    board: &mut Board,
    job: &OffloadJob,
    status: Status,
    payload: &[u8],
    out: &mut dyn FnMut(u64, &[u8]),
) {
    let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
    board
        .fast_mut()
        .offload_reply(job, status, payload, &mut cb);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ans(b: u8) -> Answer {
        (Status::Ok, vec![b])
    }

    #[test]
    fn remembered_answers_are_bounded_in_all_sessions_oldest_first() {
        let mut e = OffloadEngine::new(4);
        // Two sessions, six answers: the two oldest are forgotten.
        for (i, s) in [1u16, 2, 1, 2, 1, 2].into_iter().enumerate() {
            e.remember_answer(s, 100 + i as u32, ans(i as u8));
        }
        assert_eq!(e.remembered(), 4);
        assert!(!e.answers[&1].contains_key(&100), "the oldest is forgotten");
        assert!(!e.answers[&2].contains_key(&101));
        assert_eq!(e.answers[&1][&104], ans(4));
        assert_eq!(e.answers[&2][&103], ans(3));
        // Answers forgotten through `ack` free their room: the next ones
        // evict nothing still remembered until the bound is reached again.
        let m = e.answers.get_mut(&1).unwrap();
        m.clear();
        e.remembered -= 2;
        e.remember_answer(2, 200, ans(9));
        e.remember_answer(2, 201, ans(9));
        assert_eq!(e.remembered(), 4);
        assert!(e.answers[&2].contains_key(&103), "no live answer evicted");
        e.remember_answer(2, 202, ans(9));
        assert_eq!(e.remembered(), 4);
        assert!(!e.answers[&2].contains_key(&103), "now the oldest live one");
        // The order list stays within a few times the bound however many
        // keys `ack` forgot.
        for i in 0..100 {
            e.remember_answer(3, i, ans(0));
            e.answers.get_mut(&3).unwrap().remove(&i);
            e.remembered -= 1;
        }
        assert!(e.order.len() <= 4 * 4 + 1, "{}", e.order.len());
    }

    #[test]
    fn a_board_remembers_its_configs_offload_answers() {
        let mut cfg = clio_config::BoardConfig::embedded("emulator").unwrap();
        cfg.dedup.offload_answers = 7;
        let b = Board::new(&cfg).unwrap();
        assert_eq!(b.offload_engine_bound(), 7);
    }
}
