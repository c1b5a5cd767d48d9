//! Layer 3, blocking: [`Session`] drives a [`Connection`] over a
//! [`Transport`] on the calling thread (as CLib does: a synchronous call
//! polls for its response right after sending; an asynchronous one returns
//! a [`Handle`] and the thread polls when it calls [`Session::rpoll`]).
//!
//! A session is used by one thread at a time (every call takes `&mut self`).
//! Threads of one process each open their own session from a shared
//! [`Client`]: every session has its own socket, request ids and board
//! session, all in the client's address space (PID).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clio_wire::payload::InfoResp;

use crate::backend::{Transport, UdpTransport};
use crate::proto::{Allocation, Completion, Connection, OpId, Request, SessionInfo, MAX_DATAGRAM};
use crate::{ChaseRequest, ChaseResult, ClientConfig, ClioError, ShareToken};

/// Most waiting packets taken in at once before timers and sends run again.
const DRAIN_BATCH: usize = 256;

/// An outstanding asynchronous operation of a [`Session`]. A read or write
/// larger than `max_request_bytes` or than the board's response bound
/// (`InfoResp::max_resp_kib`) is several requests behind one handle.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Handle {
    first: OpId,
    rest: Vec<OpId>,
}

impl Handle {
    fn ops(&self) -> impl Iterator<Item = OpId> + '_ {
        std::iter::once(self.first).chain(self.rest.iter().copied())
    }
}

/// Shared per-process state: the board's address, the settings, and the
/// address space every session of this client works in.
///
/// [`Client::new`] opens an *anchor* session (a new address space, or the
/// one `cfg.join` names); [`Client::session`] opens further sessions that
/// join its address space, one per thread (each with its own socket, id
/// space and dedup records at the board). The anchor keeps the address
/// space alive and is closed when the last clone of the client is dropped.
#[derive(Debug, Clone)]
pub struct Client {
    board: SocketAddr,
    cfg: ClientConfig,
    token: ShareToken,
    _anchor: Arc<Mutex<Session<UdpTransport>>>,
}

impl Client {
    /// A client of the board at `board` (UDP): opens the anchor session.
    pub fn new(board: SocketAddr, cfg: ClientConfig) -> Result<Client, ClioError> {
        let anchor = Session::open(board, cfg.clone())?;
        let token = anchor.share()?;
        Ok(Client {
            board,
            cfg,
            token,
            _anchor: Arc::new(Mutex::new(anchor)),
        })
    }

    /// Open a session in this client's address space, with its own socket.
    pub fn session(&self) -> Result<Session<UdpTransport>, ClioError> {
        let cfg = ClientConfig {
            join: Some(self.token),
            ..self.cfg.clone()
        };
        Session::open(self.board, cfg)
    }

    /// The address space's PID.
    pub fn pid(&self) -> u32 {
        self.token.pid
    }

    /// The board's address (for an [`crate::AsyncSession::join`] of this
    /// client's address space).
    pub fn board(&self) -> SocketAddr {
        self.board
    }

    /// The token another process joins this client's address space with.
    pub fn share(&self) -> ShareToken {
        self.token
    }
}

/// A blocking session of one process (PID) with one memory node.
///
/// Opening it opens a session at the board (`OPEN_SESSION`): a new address
/// space, or the one [`ClientConfig::join`] names. Every request carries
/// the session's credentials. Dropping it closes the session (waiting at
/// most [`CLOSE_ON_DROP_NS`] for the board's answer); [`Session::close`]
/// closes it and reports the outcome.
#[derive(Debug)]
pub struct Session<T: Transport> {
    conn: Connection,
    transport: T,
    epoch: Instant,
    tx: Vec<u8>,
    rx: Vec<u8>,
    info: Option<InfoResp>,
    /// The transport's name for the board, for errors.
    peer: Option<String>,
}

/// Longest a dropped [`Session`] waits for the board to confirm the close.
pub const CLOSE_ON_DROP_NS: u64 = 100_000_000;

impl Session<UdpTransport> {
    /// Open a session over UDP to the board at `board`. Opening asks the
    /// board for its info (an unreachable board fails here with a clear
    /// `Timeout`; the MTU becomes the board's: INFO's `mtu`, e.g. 8916 with
    /// jumbo frames),
    /// then opens a session: a new address space (the board assigns the
    /// PID), or, with `cfg.join`, the address space of the session the
    /// token names.
    pub fn open(board: SocketAddr, cfg: ClientConfig) -> Result<Self, ClioError> {
        Session::open_with(UdpTransport::connect(board)?, cfg)
    }

    /// Open a session over UDP that joins the address space `token` names
    /// (from [`Session::share`] of a session of another thread or process).
    pub fn join(
        board: SocketAddr,
        token: ShareToken,
        cfg: ClientConfig,
    ) -> Result<Self, ClioError> {
        Session::open(
            board,
            ClientConfig {
                join: Some(token),
                ..cfg
            },
        )
    }
}

impl<T: Transport> Session<T> {
    /// Open a session over any transport (probing the board and opening a
    /// board session as [`Session::open`]).
    pub fn open_with(transport: T, cfg: ClientConfig) -> Result<Self, ClioError> {
        let join = cfg.join;
        let mut s = Session::without_probe(transport, cfg)?;
        let info = s.info()?;
        if let Some(mtu) = crate::config::board_mtu(&info, s.conn.config().mtu_payload) {
            s.conn.set_mtu(mtu)?;
        }
        s.info = Some(info);
        if let Some(t) = join {
            // A token from an earlier boot names a session that is gone.
            if t.epoch != info.epoch {
                return Err(ClioError::BoardRestarted {
                    op: crate::OpKind::OpenSession,
                    epoch: info.epoch,
                });
            }
        }
        s.open_session(join)?;
        Ok(s)
    }

    /// A session object that has sent nothing: no info probe and no board
    /// session yet. Calls that need a session fail with
    /// [`ClioError::NoSession`] until [`Session::open_session`] succeeds.
    ///
    /// A config without [`ClientConfig::first_req_id`] gets a fresh random
    /// one.
    pub fn without_probe(transport: T, mut cfg: ClientConfig) -> Result<Self, ClioError> {
        cfg.first_req_id
            .get_or_insert_with(crate::fresh_first_req_id);
        Ok(Session {
            conn: Connection::new(cfg)?,
            peer: transport.peer(),
            transport,
            epoch: Instant::now(),
            tx: vec![0; MAX_DATAGRAM],
            rx: vec![0; MAX_DATAGRAM],
            info: None,
        })
    }

    /// The board's answer to the probe at open.
    pub fn board_info(&self) -> Option<&InfoResp> {
        self.info.as_ref()
    }

    /// Open a board session (a new address space, or join the one `join`
    /// names); later calls use it. Waits for earlier calls first.
    pub fn open_session(&mut self, join: Option<ShareToken>) -> Result<SessionInfo, ClioError> {
        match self.call(Request::OpenSession { join })? {
            Completion::Opened(i) => Ok(i),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::OpenSession,
                field: "clio.opcode",
            }),
        }
    }

    /// The open session's credentials and limits (`None` if closed).
    pub fn session_info(&self) -> Option<&SessionInfo> {
        self.conn.session()
    }

    /// The address space's PID.
    pub fn pid(&self) -> Option<u32> {
        self.conn.session().map(|s| s.pid)
    }

    /// The token with which another thread or process joins this session's
    /// address space ([`Session::join`], [`ClientConfig::join`]). Valid
    /// while this session is open; whoever holds it has full access.
    pub fn share(&self) -> Result<ShareToken, ClioError> {
        self.conn
            .session()
            .map(SessionInfo::share)
            .ok_or(ClioError::NoSession {
                op: crate::OpKind::OpenSession,
            })
    }

    /// The protocol state machine (stats, windows, config).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The protocol state machine, mutably (e.g. to send a crafted request
    /// in a test).
    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The transport.
    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Move packets until `done` holds. Never waits past the connection's
    /// next timer, and every request has one, so this always ends.
    fn drive(&mut self, done: &dyn Fn(&Connection) -> bool) -> Result<(), ClioError> {
        self.drive_until(done, None).map(drop)
    }

    /// [`Session::drive`] that gives up at `limit` (ns on the session clock)
    /// with `Ok(false)`.
    fn drive_until(
        &mut self,
        done: &dyn Fn(&Connection) -> bool,
        limit: Option<u64>,
    ) -> Result<bool, ClioError> {
        let mut now = self.now();
        loop {
            self.fire_timers(&mut now)?;
            while let Some(n) = self.conn.poll_transmit(now, &mut self.tx) {
                self.transport.send(&self.tx[..n])?;
            }
            self.transport.flush()?;
            if done(&self.conn) {
                return Ok(true);
            }
            if limit.is_some_and(|l| now >= l) {
                return Ok(false);
            }
            let deadline = match self.conn.poll_timeout() {
                Some(t) => t,
                None if self.conn.active() == 0 => return Err(ClioError::UnknownOp),
                // Only window-blocked requests remain; their windows open
                // when answers arrive, so wait for one at most an RTO.
                None => now + self.conn.control().rto(),
            };
            let deadline = limit.map_or(deadline, |l| deadline.min(l));
            // The receive time is the clock for the next round, too.
            let got = self
                .transport
                .recv(&mut self.rx, self.epoch + Duration::from_nanos(deadline))?;
            now = self.now();
            let Some(n) = got else { continue };
            self.conn.handle_packet(now, &self.rx[..n]);
            // Take in every answer already waiting before timers fire: a
            // thread descheduled past an RTO must not resend requests whose
            // answers sit in its socket (that would also shrink cwnd).
            for _ in 0..DRAIN_BATCH {
                if !self.take_waiting(&mut now)? {
                    break;
                }
            }
        }
    }

    /// Fire the timers due at `now`, after taking in the answers already
    /// waiting: a thread that was descheduled, or busy between calls, past
    /// an RTO must not retry requests whose answers sit in its socket
    /// (that made most of the "timeouts" of a loaded pipelined run, and
    /// each also cut `cwnd`). Costs nothing when no timer is due.
    fn fire_timers(&mut self, now: &mut u64) -> Result<(), ClioError> {
        if self.conn.earliest_timer().is_some_and(|t| t <= *now) {
            for _ in 0..DRAIN_BATCH {
                if !self.take_waiting(now)? {
                    break;
                }
            }
        }
        self.conn.handle_timeout(*now);
        Ok(())
    }

    /// Take in one packet that is already waiting, stamped with a fresh
    /// `now`; false (and no clock read) when none is.
    fn take_waiting(&mut self, now: &mut u64) -> Result<bool, ClioError> {
        let Some(n) = self.transport.try_recv(&mut self.rx)? else {
            return Ok(false);
        };
        *now = self.now();
        self.conn.handle_packet(*now, &self.rx[..n]);
        Ok(true)
    }

    fn submit(&mut self, req: Request<'_>) -> Result<OpId, ClioError> {
        loop {
            match self.conn.submit(req) {
                Err(ClioError::QueueFull { max }) => {
                    // Make room: wait for some operation to complete. Results
                    // stay in their slots, so only fail if none can free up.
                    let before = self.conn.active();
                    if before == 0 {
                        return Err(ClioError::QueueFull { max });
                    }
                    self.drive(&|c| c.active() < before)?;
                }
                r => return r,
            }
        }
    }

    fn wait(&mut self, id: OpId) -> Result<Completion, ClioError> {
        self.drive(&|c| c.is_done(id) || !c.is_known(id))?;
        self.conn
            .take(id)
            .unwrap_or(Err(ClioError::UnknownOp))
            .map_err(|e| e.at_board(self.peer.as_deref()))
    }

    fn call(&mut self, req: Request<'_>) -> Result<Completion, ClioError> {
        let id = self.submit(req)?;
        self.wait(id)
    }

    /// Largest read request: `max_request_bytes`, or the board's response
    /// bound if lower ([`crate::split`]).
    fn chunk(&self) -> u32 {
        crate::split::bounded(self.conn.config().max_request_bytes, self.info.as_ref())
    }

    /// Allocate `size` bytes with [`crate::perms`] bits (`perms::RW` for read-write).
    pub fn ralloc(&mut self, size: u64, perms: u8) -> Result<Allocation, ClioError> {
        match self.call(Request::Alloc {
            size,
            perms,
            page_shift: 0,
            fixed_va: None,
        })? {
            Completion::Allocated(a) => Ok(a),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::Alloc,
                field: "clio.opcode",
            }),
        }
    }

    /// Allocate at a fixed VA (the board may move it: see [`Allocation::moved`]).
    pub fn ralloc_at(&mut self, va: u64, size: u64, perms: u8) -> Result<Allocation, ClioError> {
        match self.call(Request::Alloc {
            size,
            perms,
            page_shift: 0,
            fixed_va: Some(va),
        })? {
            Completion::Allocated(a) => Ok(a),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::Alloc,
                field: "clio.opcode",
            }),
        }
    }

    /// Free `[va, va + size)`.
    pub fn rfree(&mut self, va: u64, size: u64) -> Result<(), ClioError> {
        self.call(Request::Free { va, size }).map(drop)
    }

    /// Read `buf.len()` bytes at `va` into `buf` (no allocation per call);
    /// [`Session::rread_vec`] returns a new `Vec`, as
    /// [`crate::AsyncSession::rread`] does.
    pub fn rread(&mut self, va: u64, buf: &mut [u8]) -> Result<(), ClioError> {
        let h = self.rread_async(va, buf.len() as u64)?;
        self.rread_wait(h, buf)
            .map_err(|e| e.for_call(va, buf.len() as u64))
    }

    /// Write `data` at `va`.
    pub fn rwrite(&mut self, va: u64, data: &[u8]) -> Result<(), ClioError> {
        let h = self.rwrite_async(va, data)?;
        self.rpoll_one(h)
            .map(drop)
            .map_err(|e| e.for_call(va, data.len() as u64))
    }

    /// Start an allocation; `rpoll` yields `Completion::Allocated`.
    pub fn ralloc_async(&mut self, size: u64, perms: u8) -> Result<Handle, ClioError> {
        let first = self.submit(Request::Alloc {
            size,
            perms,
            page_shift: 0,
            fixed_va: None,
        })?;
        Ok(Handle {
            first,
            rest: Vec::new(),
        })
    }

    /// Start freeing `[va, va + size)`; `rpoll` yields `Completion::Freed`.
    /// Later accesses to the range wait for it, earlier ones are waited for.
    pub fn rfree_async(&mut self, va: u64, size: u64) -> Result<Handle, ClioError> {
        let first = self.submit(Request::Free { va, size })?;
        Ok(Handle {
            first,
            rest: Vec::new(),
        })
    }

    /// Start a read of `len` bytes; reads above `max_request_bytes` become
    /// several requests behind one handle.
    pub fn rread_async(&mut self, va: u64, len: u64) -> Result<Handle, ClioError> {
        if len == 0 {
            return Err(ClioError::InvalidArgument {
                what: "len",
                reason: "must not be zero",
            });
        }
        self.split(va, len, None)
    }

    /// Start a write (the data is copied).
    pub fn rwrite_async(&mut self, va: u64, data: &[u8]) -> Result<Handle, ClioError> {
        if data.is_empty() {
            return Err(ClioError::InvalidArgument {
                what: "data",
                reason: "must not be empty",
            });
        }
        self.split(va, data.len() as u64, Some(data))
    }

    fn split(&mut self, va: u64, len: u64, data: Option<&[u8]>) -> Result<Handle, ClioError> {
        if va.checked_add(len).is_none() {
            return Err(ClioError::InvalidArgument {
                what: "va",
                reason: "range wraps the address space",
            });
        }
        // Writes are also cut to what the session's dedup quota can hold at
        // once (one record per packet until the write is acknowledged).
        let chunk = match data {
            Some(_) => crate::split::bounded(self.conn.max_write_bytes(), self.info.as_ref()),
            None => self.chunk(),
        } as u64;
        let parts = len.div_ceil(chunk);
        let mut first = None;
        let mut rest = Vec::new();
        for i in 0..parts {
            let off = i * chunk;
            let n = chunk.min(len - off);
            let req = match data {
                None => Request::Read {
                    va: va + off,
                    len: n as u32,
                },
                Some(d) => Request::Write {
                    va: va + off,
                    data: &d[off as usize..(off + n) as usize],
                },
            };
            match self.submit(req) {
                Ok(id) if first.is_none() => first = Some(id),
                Ok(id) => rest.push(id),
                Err(e) => {
                    // Do not leave earlier parts behind an error: finish them.
                    for id in first.into_iter().chain(rest) {
                        let _ = self.wait(id);
                    }
                    return Err(e);
                }
            }
        }
        let first = first.ok_or(ClioError::InvalidArgument {
            what: "len",
            reason: "must not be zero",
        })?;
        Ok(Handle { first, rest })
    }

    /// Whether every part of `h` has completed (sends and receives what is
    /// ready, without waiting).
    pub fn try_rpoll(&mut self, h: &Handle) -> Result<bool, ClioError> {
        let mut now = self.now();
        // Take what has arrived, without waiting (bounded), then timers.
        for _ in 0..1024 {
            if !self.take_waiting(&mut now)? {
                break;
            }
        }
        self.conn.handle_timeout(now);
        while let Some(n) = self.conn.poll_transmit(now, &mut self.tx) {
            self.transport.send(&self.tx[..n])?;
        }
        self.transport.flush()?;
        for _ in 0..1024 {
            if !self.take_waiting(&mut now)? {
                break;
            }
        }
        Ok(h.ops()
            .all(|id| self.conn.is_done(id) || !self.conn.is_known(id)))
    }

    /// Wait for every handle and return their results in order (a split
    /// read's parts are joined; a split operation fails with its first error).
    pub fn rpoll(
        &mut self,
        handles: &[Handle],
    ) -> Result<Vec<Result<Completion, ClioError>>, ClioError> {
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(self.rpoll_one(h.clone()));
        }
        Ok(out)
    }

    fn rpoll_one(&mut self, h: Handle) -> Result<Completion, ClioError> {
        if h.rest.is_empty() {
            return self.wait(h.first);
        }
        let mut joined: Option<Vec<u8>> = None;
        let mut err = None;
        let mut written = false;
        for id in h.ops() {
            match self.wait(id) {
                Ok(Completion::Read(d)) => {
                    joined.get_or_insert_with(Vec::new).extend_from_slice(&d);
                    self.conn.recycle(d);
                }
                Ok(_) => written = true,
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        match (err, joined) {
            (Some(e), _) => Err(e),
            (None, Some(d)) => Ok(Completion::Read(d)),
            (None, None) if written => Ok(Completion::Written),
            (None, None) => Err(ClioError::UnknownOp),
        }
    }

    /// Wait for a read handle and copy its data into `buf` (whose length
    /// must be the read's).
    pub fn rread_wait(&mut self, h: Handle, buf: &mut [u8]) -> Result<(), ClioError> {
        let mut off = 0usize;
        let mut err = None;
        for id in h.ops() {
            match self.wait(id) {
                Ok(Completion::Read(d)) => {
                    let end = off + d.len();
                    if end <= buf.len() {
                        buf[off..end].copy_from_slice(&d);
                    } else {
                        err.get_or_insert(ClioError::InvalidArgument {
                            what: "buf",
                            reason: "shorter than the read",
                        });
                    }
                    off = end;
                    self.conn.recycle(d);
                }
                Ok(_) => {
                    err.get_or_insert(ClioError::InvalidArgument {
                        what: "handle",
                        reason: "not a read",
                    });
                }
                Err(e) => {
                    err.get_or_insert(e);
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None if off != buf.len() => Err(ClioError::InvalidArgument {
                what: "buf",
                reason: "longer than the read",
            }),
            None => Ok(()),
        }
    }

    fn word_call(&mut self, req: Request<'_>) -> Result<u64, ClioError> {
        let kind = req.kind();
        match self.call(req)? {
            Completion::Atomic { old } => Ok(old),
            _ => Err(ClioError::Protocol {
                op: kind,
                field: "clio.opcode",
            }),
        }
    }

    /// Test-and-set the word at `va`; returns its old value.
    pub fn tas(&mut self, va: u64) -> Result<u64, ClioError> {
        self.word_call(Request::TestAndSet { va })
    }

    /// Compare-and-swap the word at `va`; returns its old value (the swap
    /// happened iff it equals `expected`).
    pub fn cas(&mut self, va: u64, expected: u64, new: u64) -> Result<u64, ClioError> {
        self.word_call(Request::CompareAndSwap { va, expected, new })
    }

    /// Fetch-and-add on the word at `va`; returns its old value.
    pub fn faa(&mut self, va: u64, addend: u64) -> Result<u64, ClioError> {
        self.word_call(Request::FetchAndAdd { va, addend })
    }

    /// Call operation `op` of offload `offload` at the memory node with
    /// `args` (one packet); returns the offload's result bytes. Offload
    /// errors: [`ClioError::NoSuchOffload`], [`ClioError::OffloadFault`],
    /// [`ClioError::OffloadRefused`] (with the offload's reason code).
    pub fn offload_call(
        &mut self,
        offload: u32,
        op: u16,
        args: &[u8],
    ) -> Result<Vec<u8>, ClioError> {
        match self.call(Request::OffloadCall { offload, op, args })? {
            Completion::Offloaded(r) => Ok(r),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::OffloadCall,
                field: "clio.opcode",
            }),
        }
    }

    /// Start an [`Session::offload_call`] without waiting for it (the args
    /// are copied): several calls are in flight at once, each answered in
    /// its own time; [`Session::offload_wait`] takes a call's result.
    /// Offload calls in flight together are not ordered among themselves
    /// (a lost and resent one runs after a later one): start a call that
    /// must follow another after waiting for it.
    pub fn offload_call_async(
        &mut self,
        offload: u32,
        op: u16,
        args: &[u8],
    ) -> Result<Handle, ClioError> {
        let first = self.submit(Request::OffloadCall { offload, op, args })?;
        Ok(Handle {
            first,
            rest: Vec::new(),
        })
    }

    /// Wait for a call started by [`Session::offload_call_async`] and
    /// return its result bytes (errors as [`Session::offload_call`]).
    pub fn offload_wait(&mut self, h: Handle) -> Result<Vec<u8>, ClioError> {
        match self.rpoll_one(h)? {
            Completion::Offloaded(r) => Ok(r),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::OffloadCall,
                field: "clio.opcode",
            }),
        }
    }

    /// Pointer chase with value compare, executed by the board in one round
    /// trip (`POINTER_CHASE`; see [`crate::chase`] for the outcomes, the
    /// hop cap and the errors). Ordered after every earlier call.
    pub fn rchase(&mut self, req: &ChaseRequest) -> Result<ChaseResult, ClioError> {
        match self.call(Request::PointerChase(*req))? {
            Completion::Chased(r) => Ok(r),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::PointerChase,
                field: "clio.opcode",
            }),
        }
    }

    /// Acquire the lock word at `va` (waits, with backoff, while another
    /// holder has it; fails with `Busy` after the request timeout).
    pub fn rlock(&mut self, va: u64) -> Result<(), ClioError> {
        self.call(Request::Lock { va }).map(drop)
    }

    /// Release the lock word at `va` (after every earlier operation).
    pub fn runlock(&mut self, va: u64) -> Result<(), ClioError> {
        self.call(Request::Unlock { va }).map(drop)
    }

    /// Wait for every earlier operation, then fence at the board.
    pub fn rfence(&mut self) -> Result<(), ClioError> {
        self.call(Request::Fence).map(drop)
    }

    /// Wait until every earlier operation has completed.
    pub fn rrelease(&mut self) -> Result<(), ClioError> {
        self.call(Request::Release).map(drop)
    }

    /// Ask the board who it is.
    pub fn info(&mut self) -> Result<InfoResp, ClioError> {
        match self.call(Request::Info)? {
            Completion::Info(i) => Ok(i),
            _ => Err(ClioError::Protocol {
                op: crate::OpKind::Info,
                field: "clio.opcode",
            }),
        }
    }

    /// Wait for everything outstanding, then close the board session
    /// (`CLOSE_SESSION`; the board frees its dedup records and locks count,
    /// and the address space's memory when this was its last session).
    /// Results of handles not yet polled are dropped.
    pub fn close(mut self) -> Result<(), ClioError> {
        self.close_session()
    }

    /// Close the board session now (waits for earlier calls). Later calls
    /// fail with [`ClioError::NoSession`] until [`Session::open_session`].
    pub fn close_session(&mut self) -> Result<(), ClioError> {
        if self.conn.session().is_none() {
            return match self.conn.restarted() {
                Some(epoch) => Err(ClioError::BoardRestarted {
                    op: crate::OpKind::CloseSession,
                    epoch,
                }),
                None => Ok(()),
            };
        }
        self.call(Request::CloseSession).map(drop)
    }
}

impl<T: Transport> Drop for Session<T> {
    fn drop(&mut self) {
        if self.conn.session().is_none() {
            return;
        }
        // Best effort, bounded: a board that does not answer keeps the
        // session until it expires there.
        let Ok(id) = self.conn.submit(Request::CloseSession) else {
            return;
        };
        let limit = self.now() + CLOSE_ON_DROP_NS.min(self.conn.config().request_timeout_ns);
        let _ = self.drive_until(&|c| c.is_done(id) || !c.is_known(id), Some(limit));
    }
}
