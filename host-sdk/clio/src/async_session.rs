//! Layer 3, async: [`AsyncSession`] runs the same [`Connection`] in a tokio
//! task over a tokio `UdpSocket`.
//!
//! Each call submits its operation at once (when the method is called, not
//! when the future is first polled), so call order is submission order:
//! awaiting each call before the next gives the strict order of synchronous
//! calls; issuing several and awaiting later gives the release order of
//! asynchronous calls, with the same page-granularity dependency checks.
//! Clones of a session share one connection, one board session and one
//! ordering domain. When the last clone is dropped, the driver finishes
//! what is outstanding, closes the board session (waiting at most
//! [`crate::CLOSE_ON_DROP_NS`] for the answer) and ends.
//!
//! The driver moves datagrams in batches (`recvmmsg`/`sendmmsg` through
//! `clio-mmsg`, on a second handle of the same socket): the packets one
//! step produces leave in one system call, and every answer already waiting
//! comes in with one. While answers are awaited it busy-polls the socket
//! for up to [`SPIN`] (yielding to other tasks between polls) before it
//! parks until the socket is readable: a pipelined caller's answers come
//! within tens of µs, and parking costs a sleep and a wake-up of the
//! runtime's thread per answer burst. A yield that gives the CPU to another
//! thread for its slice ends the polling for a while (`crate::spin`).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use clio_mmsg::{RecvBatch, Wait};
use clio_wire::payload::InfoResp;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::proto::{Allocation, Completion, Connection, OpId, Request, SessionInfo, MAX_DATAGRAM};
use crate::session::CLOSE_ON_DROP_NS;
use crate::{ChaseRequest, ChaseResult, ClientConfig, ClioError, OpKind, ShareToken};

type Reply = oneshot::Sender<Result<Completion, ClioError>>;

/// How long the driver busy-polls for answers it awaits before it parks
/// (the blocking transport's `DEFAULT_SPIN`).
pub const SPIN: Duration = Duration::from_micros(50);

/// Datagrams taken in per receive system call.
const RECV_SLOTS: usize = 16;

/// Socket receive buffer asked for (bytes): a window of answers while the
/// runtime's thread is descheduled.
const RECV_BUFFER: usize = 4 << 20;

enum Owned {
    Req(Request<'static>),
    Write {
        va: u64,
        data: Vec<u8>,
    },
    Offload {
        offload: u32,
        op: u16,
        args: Vec<u8>,
    },
    SetMtu(usize),
}

struct Cmd {
    op: Owned,
    reply: Reply,
}

/// An async session of one process (PID) with one memory node.
#[derive(Debug, Clone)]
pub struct AsyncSession {
    tx: mpsc::UnboundedSender<Cmd>,
    chunk: u64,
    /// Largest write request: `chunk`, or what the session's dedup quota
    /// holds at once (one record per packet).
    write_chunk: u64,
    info: InfoResp,
    session: Option<SessionInfo>,
    /// The board's address, named in timeouts.
    board: SocketAddr,
}

fn closed() -> ClioError {
    ClioError::Transport("session driver stopped".into())
}

impl AsyncSession {
    /// Open a session over UDP to `board`, spawning its driver task on the
    /// current tokio runtime. Like [`crate::Session::open`], it probes the
    /// board's info (an unreachable board fails with `Timeout`), takes
    /// the board's MTU (INFO's `mtu`, raised or lowered), and opens a board session: a new address
    /// space, or the one `cfg.join` names.
    /// A config without [`ClientConfig::first_req_id`] gets a fresh random
    /// one, as in [`crate::Session::without_probe`].
    ///
    /// Not eager, unlike the calls of an open session: an ordinary `async`
    /// function that does nothing until awaited.
    pub async fn open(board: SocketAddr, mut cfg: ClientConfig) -> Result<AsyncSession, ClioError> {
        let join = cfg.join;
        cfg.first_req_id
            .get_or_insert_with(crate::fresh_first_req_id);
        let local: SocketAddr = if board.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let std_sock = std::net::UdpSocket::bind(local)
            .map_err(|e| ClioError::Transport(format!("bind {local}: {e}")))?;
        std_sock
            .connect(board)
            .map_err(|e| ClioError::Transport(format!("connect {board}: {e}")))?;
        std_sock.set_nonblocking(true)?;
        // A smaller buffer only costs retransmissions: not an error.
        let _ = clio_mmsg::grow_recv_buffer(&std_sock, RECV_BUFFER);
        // The batched calls go through a second handle of the same socket
        // (same file, same non-blocking mode); tokio keeps the readiness.
        let raw = std_sock.try_clone()?;
        let sock = UdpSocket::from_std(std_sock)?;
        let chunk = cfg.max_request_bytes as u64;
        let mtu = cfg.mtu_payload;
        let conn = Connection::new(cfg)?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(drive(conn, Io::new(sock, raw), rx));
        let unknown = InfoResp {
            board: [0; 16],
            firmware_version: 0,
            rtl_version: 0,
            build_id: 0,
            config_hash: 0,
            dram_bytes: 0,
            mtu: 0,
            page_shift: 0,
            slots_per_bucket: 0,
            tlb_entries: 0,
            epoch: 0,
            sessions: 0,
            max_resp_kib: 0,
        };
        let mut s = AsyncSession {
            tx,
            chunk,
            write_chunk: chunk,
            info: unknown,
            session: None,
            board,
        };
        let info = s.info().await?;
        let mut mtu = mtu as u64;
        if let Some(m) = crate::config::board_mtu(&info, mtu as usize) {
            s.submit(Owned::SetMtu(m)).await?;
            mtu = m as u64;
        }
        s.info = info;
        // Reads (and writes) are cut at the board's response bound (crate::split).
        s.chunk = u64::from(crate::split::bounded(
            s.chunk.min(u64::from(u32::MAX)) as u32,
            Some(&info),
        ));
        s.write_chunk = s.chunk;
        if let Some(t) = join {
            if t.epoch != info.epoch {
                return Err(ClioError::BoardRestarted {
                    op: OpKind::OpenSession,
                    epoch: info.epoch,
                });
            }
        }
        match s.submit(Owned::Req(Request::OpenSession { join })).await? {
            Completion::Opened(i) => {
                s.write_chunk = s.chunk.min(u64::from(i.dedup_quota.max(1)) * mtu);
                s.session = Some(i);
            }
            _ => {
                return Err(ClioError::Protocol {
                    op: OpKind::OpenSession,
                    field: "clio.opcode",
                })
            }
        }
        Ok(s)
    }

    /// Open a session that joins the address space `token` names.
    ///
    /// Not eager, unlike the calls of an open session: an ordinary `async`
    /// function that does nothing until awaited.
    pub async fn join(
        board: SocketAddr,
        token: ShareToken,
        cfg: ClientConfig,
    ) -> Result<AsyncSession, ClioError> {
        AsyncSession::open(
            board,
            ClientConfig {
                join: Some(token),
                ..cfg
            },
        )
        .await
    }

    /// The board's answer to the probe at open.
    pub fn board_info(&self) -> &InfoResp {
        &self.info
    }

    /// The session's credentials and limits as opened.
    pub fn session_info(&self) -> Option<&SessionInfo> {
        self.session.as_ref()
    }

    /// The token with which another thread or process joins this session's
    /// address space. Whoever holds it has full access while it is open.
    pub fn share(&self) -> Result<ShareToken, ClioError> {
        self.session
            .as_ref()
            .map(SessionInfo::share)
            .ok_or(ClioError::NoSession {
                op: OpKind::OpenSession,
            })
    }

    /// Close the board session after every earlier call (shared by every
    /// clone: their later calls fail with [`ClioError::NoSession`]).
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn close(&self) -> impl Future<Output = Result<(), ClioError>> {
        self.unit(Request::CloseSession)
    }

    fn submit(&self, op: Owned) -> impl Future<Output = Result<Completion, ClioError>> {
        let (reply, rx) = oneshot::channel();
        let sent = self.tx.send(Cmd { op, reply }).is_ok();
        let board = self.board;
        async move {
            if !sent {
                return Err(closed());
            }
            rx.await
                .unwrap_or_else(|_| Err(closed()))
                .map_err(|e| e.at_board(Some(&format!("udp://{board}"))))
        }
    }

    /// Allocate `size` bytes with [`crate::perms`] bits (`perms::RW` for read-write).
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn ralloc(
        &self,
        size: u64,
        perms: u8,
    ) -> impl Future<Output = Result<Allocation, ClioError>> {
        let f = self.submit(Owned::Req(Request::Alloc {
            size,
            perms,
            page_shift: 0,
            fixed_va: None,
        }));
        async move {
            match f.await? {
                Completion::Allocated(a) => Ok(a),
                _ => Err(ClioError::Protocol {
                    op: OpKind::Alloc,
                    field: "clio.opcode",
                }),
            }
        }
    }

    /// Free `[va, va + size)`.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rfree(&self, va: u64, size: u64) -> impl Future<Output = Result<(), ClioError>> {
        let f = self.submit(Owned::Req(Request::Free { va, size }));
        async move { f.await.map(drop) }
    }

    /// Read `len` bytes at `va` into a new `Vec` (split into requests of
    /// at most `max_request_bytes` and of the board's response bound);
    /// [`AsyncSession::rread_into`] fills a buffer of yours, as the blocking
    /// [`crate::Session::rread`] does.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rread(&self, va: u64, len: u64) -> impl Future<Output = Result<Vec<u8>, ClioError>> {
        let mut parts = Vec::new();
        let mut err = None;
        if len == 0 {
            err = Some(ClioError::InvalidArgument {
                what: "len",
                reason: "must not be zero",
            });
        }
        let mut off = 0;
        while off < len && err.is_none() {
            let n = self.chunk.min(len - off);
            parts.push(self.submit(Owned::Req(Request::Read {
                va: va.wrapping_add(off),
                len: n as u32,
            })));
            off += n;
        }
        async move {
            if let Some(e) = err {
                return Err(e);
            }
            let mut out = Vec::with_capacity(len as usize);
            let mut first_err = None;
            for p in parts {
                match p.await {
                    Ok(Completion::Read(d)) => out.extend_from_slice(&d),
                    Ok(_) => {
                        first_err.get_or_insert(ClioError::Protocol {
                            op: OpKind::Read,
                            field: "clio.opcode",
                        });
                    }
                    Err(e) => {
                        first_err.get_or_insert(e.for_call(va, len));
                    }
                }
            }
            first_err.map_or(Ok(out), Err)
        }
    }

    /// Write `data` at `va` (copied; split like [`AsyncSession::rread`], and
    /// into requests whose packets fit the session's dedup quota).
    ///
    /// Eager: submitted when called, not when first polled; a dropped,
    /// never-awaited `rwrite` still writes.
    pub fn rwrite(&self, va: u64, data: &[u8]) -> impl Future<Output = Result<(), ClioError>> {
        let mut parts = Vec::new();
        let empty = data.is_empty();
        let total = data.len() as u64;
        for (i, c) in data.chunks(self.write_chunk as usize).enumerate() {
            let at = va.wrapping_add(i as u64 * self.write_chunk);
            parts.push(self.submit(Owned::Write {
                va: at,
                data: c.to_vec(),
            }));
        }
        async move {
            if empty {
                return Err(ClioError::InvalidArgument {
                    what: "data",
                    reason: "must not be empty",
                });
            }
            let mut first_err = None;
            for p in parts {
                if let Err(e) = p.await {
                    first_err.get_or_insert(e.for_call(va, total));
                }
            }
            first_err.map_or(Ok(()), Err)
        }
    }

    fn word(&self, req: Request<'static>) -> impl Future<Output = Result<u64, ClioError>> {
        let kind = req.kind();
        let f = self.submit(Owned::Req(req));
        async move {
            match f.await? {
                Completion::Atomic { old } => Ok(old),
                _ => Err(ClioError::Protocol {
                    op: kind,
                    field: "clio.opcode",
                }),
            }
        }
    }

    /// Test-and-set; returns the old value.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn tas(&self, va: u64) -> impl Future<Output = Result<u64, ClioError>> {
        self.word(Request::TestAndSet { va })
    }

    /// Compare-and-swap; returns the old value.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn cas(
        &self,
        va: u64,
        expected: u64,
        new: u64,
    ) -> impl Future<Output = Result<u64, ClioError>> {
        self.word(Request::CompareAndSwap { va, expected, new })
    }

    /// Fetch-and-add; returns the old value.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn faa(&self, va: u64, addend: u64) -> impl Future<Output = Result<u64, ClioError>> {
        self.word(Request::FetchAndAdd { va, addend })
    }

    fn unit(&self, req: Request<'static>) -> impl Future<Output = Result<(), ClioError>> {
        let f = self.submit(Owned::Req(req));
        async move { f.await.map(drop) }
    }

    /// Call operation `op` of offload `offload` at the memory node with
    /// `args` (copied; one packet); submitted when called, so several calls
    /// pipeline. Returns the offload's result bytes (errors as
    /// [`crate::Session::offload_call`]).
    pub fn offload_call(
        &self,
        offload: u32,
        op: u16,
        args: &[u8],
    ) -> impl Future<Output = Result<Vec<u8>, ClioError>> {
        let f = self.submit(Owned::Offload {
            offload,
            op,
            args: args.to_vec(),
        });
        async move {
            match f.await? {
                Completion::Offloaded(r) => Ok(r),
                _ => Err(ClioError::Protocol {
                    op: OpKind::OffloadCall,
                    field: "clio.opcode",
                }),
            }
        }
    }

    /// Pointer chase with value compare, executed by the board in one round
    /// trip (see [`crate::chase`]); submitted when called, ordered after
    /// every earlier call of the session (a barrier).
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rchase(
        &self,
        req: &ChaseRequest,
    ) -> impl Future<Output = Result<ChaseResult, ClioError>> {
        let f = self.submit(Owned::Req(Request::PointerChase(*req)));
        async move {
            match f.await? {
                Completion::Chased(r) => Ok(r),
                _ => Err(ClioError::Protocol {
                    op: OpKind::PointerChase,
                    field: "clio.opcode",
                }),
            }
        }
    }

    /// Acquire the lock word at `va`.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rlock(&self, va: u64) -> impl Future<Output = Result<(), ClioError>> {
        self.unit(Request::Lock { va })
    }

    /// Release the lock word at `va`.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn runlock(&self, va: u64) -> impl Future<Output = Result<(), ClioError>> {
        self.unit(Request::Unlock { va })
    }

    /// Wait for every earlier operation, then fence at the board.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rfence(&self) -> impl Future<Output = Result<(), ClioError>> {
        self.unit(Request::Fence)
    }

    /// Completes when every earlier operation has completed.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn rrelease(&self) -> impl Future<Output = Result<(), ClioError>> {
        self.unit(Request::Release)
    }

    /// Ask the board who it is.
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the operation (its result is then lost).
    pub fn info(&self) -> impl Future<Output = Result<InfoResp, ClioError>> {
        let f = self.submit(Owned::Req(Request::Info));
        async move {
            match f.await? {
                Completion::Info(i) => Ok(i),
                _ => Err(ClioError::Protocol {
                    op: OpKind::Info,
                    field: "clio.opcode",
                }),
            }
        }
    }
}

/// The driver's socket: tokio's handle for readiness, a second handle of
/// the same socket for the batched system calls, and their buffers.
struct Io {
    sock: UdpSocket,
    raw: std::net::UdpSocket,
    batch: RecvBatch,
    /// Packets of this step (buffers reused).
    sendq: clio_mmsg::SendQueue,
}

impl Io {
    fn new(sock: UdpSocket, raw: std::net::UdpSocket) -> Io {
        Io {
            sock,
            raw,
            batch: RecvBatch::new(RECV_SLOTS, MAX_DATAGRAM),
            sendq: clio_mmsg::SendQueue::new(),
        }
    }

    /// Queue `pkt` for the next [`Io::flush`].
    fn push(&mut self, pkt: &[u8]) {
        self.sendq.push(pkt, None);
    }

    /// Send the queued packets, as few system calls as the kernel takes.
    /// A packet refused for an earlier ICMP "port unreachable" is lost (the
    /// protocol retries); a full socket buffer waits for room.
    async fn flush(&mut self) -> std::io::Result<()> {
        let mut at = 0;
        while at < self.sendq.len() {
            let pkts = &self.sendq.queued()[at..];
            match clio_mmsg::send_batch(&self.raw, pkts) {
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => at += 1,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    // Wait for room through tokio's readiness, then retry.
                    self.sock.writable().await?;
                    let (raw, pkts) = (&self.raw, &self.sendq.queued()[at..]);
                    match self
                        .sock
                        .try_io(Interest::WRITABLE, || clio_mmsg::send_batch(raw, pkts))
                    {
                        Ok(n) => at += n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => at += 1,
                        Err(e) => {
                            self.sendq.clear();
                            return Err(e);
                        }
                    }
                }
                Err(e) => {
                    self.sendq.clear();
                    return Err(e);
                }
            }
        }
        self.sendq.clear();
        Ok(())
    }

    /// Take in every datagram already waiting (without blocking) into
    /// `conn`; returns how many came. `through_tokio` clears tokio's
    /// readiness when the socket is found empty (after `readable()`).
    fn take_in(
        &mut self,
        conn: &mut Connection,
        ns: &dyn Fn() -> u64,
        through_tokio: bool,
    ) -> std::io::Result<usize> {
        let mut total = 0;
        loop {
            let r = if through_tokio {
                let (raw, batch) = (&self.raw, &mut self.batch);
                self.sock
                    .try_io(Interest::READABLE, || batch.recv(raw, Wait::No))
            } else {
                self.batch.recv(&self.raw, Wait::No)
            };
            match r {
                Ok(n) => {
                    let now = ns();
                    for i in 0..n {
                        // A datagram longer than a slot is dropped (`get`).
                        if let Some((d, _)) = self.batch.get(i) {
                            conn.handle_packet(now, d);
                        }
                    }
                    total += n;
                    if n < RECV_SLOTS {
                        // Drained for now; tokio's readiness is cleared by
                        // the next empty try.
                        if !through_tokio {
                            return Ok(total);
                        }
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::ConnectionRefused
                    ) =>
                {
                    return Ok(total)
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Fail every pending call with a transport error.
fn fail_all(pending: &mut HashMap<OpId, Reply>, what: &str, e: std::io::Error) {
    let err = ClioError::Transport(format!("{what}: {e}"));
    for (_, r) in pending.drain() {
        let _ = r.send(Err(err.clone()));
    }
}

/// The driver task: owns the connection and the socket; ends when every
/// session handle is dropped and nothing is outstanding.
async fn drive(mut conn: Connection, mut io: Io, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let epoch = Instant::now();
    let ns_at = move |t: Instant| t.duration_since(epoch).as_nanos() as u64;
    let ns = move || ns_at(Instant::now());
    let mut pending: HashMap<OpId, Reply> = HashMap::new();
    let mut backlog: VecDeque<Cmd> = VecDeque::new();
    let mut txb = vec![0u8; MAX_DATAGRAM];
    let mut open = true;
    let mut close_by: Option<u64> = None;
    let mut guard = crate::spin::SpinGuard::default();
    loop {
        let mut now = ns();
        // Take in answers already waiting before timers fire, so a task
        // that was not scheduled for a while does not retry requests whose
        // answers sit in the socket.
        if conn.earliest_timer().is_some_and(|t| t <= now) {
            if let Err(e) = io.take_in(&mut conn, &ns, false) {
                return fail_all(&mut pending, "recv", e);
            }
            now = ns();
        }
        conn.handle_timeout(now);
        while let Some(cmd) = backlog.pop_front() {
            let r = match &cmd.op {
                Owned::Req(req) => conn.submit(*req),
                Owned::Write { va, data } => conn.submit(Request::Write { va: *va, data }),
                Owned::Offload { offload, op, args } => conn.submit(Request::OffloadCall {
                    offload: *offload,
                    op: *op,
                    args,
                }),
                Owned::SetMtu(m) => {
                    let r = conn.set_mtu(*m).map(|()| Completion::Released);
                    let _ = cmd.reply.send(r);
                    continue;
                }
            };
            match r {
                Ok(id) => {
                    pending.insert(id, cmd.reply);
                }
                Err(ClioError::QueueFull { .. }) if conn.active() > 0 => {
                    backlog.push_front(cmd);
                    break;
                }
                Err(e) => {
                    let _ = cmd.reply.send(Err(e));
                }
            }
        }
        while let Some(n) = conn.poll_transmit(now, &mut txb) {
            io.push(&txb[..n]);
        }
        if let Err(e) = io.flush().await {
            return fail_all(&mut pending, "send", e);
        }
        while let Some((id, r)) = conn.poll_completion() {
            match pending.remove(&id) {
                Some(reply) => {
                    let _ = reply.send(r);
                }
                None => {
                    if let Ok(Completion::Read(d)) = r {
                        conn.recycle(d);
                    }
                }
            }
        }
        if !open && backlog.is_empty() {
            match close_by {
                // Every handle is gone: close the board session on the way out.
                None if conn.active() == 0 => {
                    if conn.session().is_none() || conn.submit(Request::CloseSession).is_err() {
                        return;
                    }
                    close_by = Some(now + CLOSE_ON_DROP_NS.min(conn.config().request_timeout_ns));
                    continue;
                }
                Some(t) if conn.active() == 0 || now >= t => return,
                _ => {}
            }
        }
        let deadline = conn
            .poll_timeout()
            .map(|t| epoch + Duration::from_nanos(t))
            .unwrap_or_else(|| Instant::now() + Duration::from_nanos(conn.control().rto()));
        let deadline = match close_by {
            Some(t) => deadline.min(epoch + Duration::from_nanos(t)),
            None => deadline,
        };
        // Answers awaited: poll for them for a while before parking,
        // letting other tasks (the callers) run between two polls.
        if conn.active() > 0 && backlog.is_empty() && guard.may_spin(std::time::Instant::now()) {
            let until = (Instant::now() + SPIN).min(deadline);
            let mut woke = false;
            while !woke && Instant::now() < until {
                match io.take_in(&mut conn, &ns, false) {
                    Ok(0) => {}
                    Ok(_) => woke = true,
                    Err(e) => return fail_all(&mut pending, "recv", e),
                }
                if open && !woke {
                    match rx.try_recv() {
                        Ok(c) => {
                            backlog.push_back(c);
                            woke = true;
                        }
                        Err(mpsc::error::TryRecvError::Disconnected) => {
                            open = false;
                            woke = true;
                        }
                        Err(mpsc::error::TryRecvError::Empty) => {}
                    }
                }
                if !woke {
                    // Other tasks first, then other threads (the board's
                    // may share this CPU): a pure spin would delay the
                    // very answer awaited. A late yield: park instead.
                    tokio::task::yield_now().await;
                    if !guard.yield_now() {
                        break;
                    }
                }
            }
            if woke {
                continue;
            }
        }
        tokio::select! {
            cmd = rx.recv(), if open => match cmd {
                Some(c) => {
                    backlog.push_back(c);
                    while let Ok(c) = rx.try_recv() {
                        backlog.push_back(c);
                    }
                }
                None => open = false,
            },
            r = io.sock.readable() => {
                // Take every waiting datagram, until tokio's readiness is
                // cleared by an empty try.
                if let Err(e) = r.and_then(|()| io.take_in(&mut conn, &ns, true)) {
                    return fail_all(&mut pending, "recv", e);
                }
            },
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}
