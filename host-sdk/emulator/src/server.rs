//! The UDP endpoint of an emulated board: a thin I/O shell that moves
//! datagrams between a socket and an [`Engine`], through optional faulty
//! links in each direction.
//!
//! One thread owns the socket and the engine. It blocks in a batched receive
//! with a timeout set to the next event it owes (a delayed packet, engine
//! work), so an idle board uses no CPU (it does not busy-poll: why at
//! `SPIN_BELOW`); [`ServerHandle::stop`] wakes it with an empty datagram.
//! Answers leave through a [`clio_mmsg::GsoSender`]: a multi-packet answer
//! is one segmented message where the kernel takes UDP GSO. Answers wait in
//! per-destination queues and leave
//! round-robin by destination in bursts of at most `SEND_BURST` datagrams;
//! between two bursts the loop takes in (without blocking) the requests
//! that have arrived, so no client's long answer holds another's request in
//! the socket. An engine that produces long answers lazily
//! ([`Engine::pump`], the model board's READs) is asked for only enough
//! datagrams to fill the next burst, so a request is executed between two
//! packets of another client's long answer rather than after its whole
//! generation. [`ServerHandle::trace`] records, for one client, each
//! request's board-side time and the datagrams sent ahead of its answer.
//!
//! Client addresses live in a bounded [`ClientTable`] (`network.clients`
//! entries, least recently used evicted, generation-tagged ids; see
//! [`crate::clients`]), so per-source state is fixed however many sources
//! send. Its counters are readable in process ([`ServerHandle::clients`])
//! and over the board's own port with a stats probe ([`probe_stats`], what
//! `clio info` prints for an emulated board): a datagram that starts with
//! [`STATS_PROBE`] is answered by the server with [`ProbeReply`] as JSON and
//! never reaches the engine. A Clio packet cannot start so (its first byte is
//! the header version, 1), and the answer is never longer than the probe,
//! so a spoofed probe reflects no more bytes than it cost.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio_mmsg::{RecvBatch, Wait};

use crate::clients::{ClientCounters, ClientTable};
use crate::faults::{FaultConfig, FaultStats, FaultyLink};

/// Clients a server remembers when its options name no board (the
/// `network.clients` default of `clio-config`).
pub const DEFAULT_CLIENTS: usize = clio_config::DEFAULT_CLIENTS as usize;

/// First bytes of a stats probe (and, with `=` for `?`, of its answer).
pub const STATS_PROBE: &[u8] = b"clio-emu stats?\n";

/// Prefix of a stats probe's answer, followed by [`ProbeReply`] as JSON.
pub const STATS_REPLY: &[u8] = b"clio-emu stats=\n";

/// Length [`probe_stats`] pads its probe to: room for the answer, which the
/// server sends only if it is no longer than the probe.
pub const STATS_PROBE_LEN: usize = 1024;

/// What a server answers to a stats probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProbeReply {
    /// Datagrams received (probes excluded).
    pub received: u64,
    /// Datagrams sent (probe answers excluded).
    pub sent: u64,
    /// The client table.
    pub clients: ClientCounters,
}

/// Waits shorter than this poll instead of blocking in the kernel.
///
/// The loop does not busy-poll after traffic. A 50 µs busy-poll (tried:
/// `host-sdk/kv/README.md`) saved an idle VM's wake-up on a quiet host, but
/// with any other runnable thread on the host (even at nice 19) a yielding
/// poll hands it the CPU for a whole scheduler slice and a spinning one
/// takes the CPU its client needs: sync Clio-KV calls fell from 46 k to
/// 5–13 k ops/s.
const SPIN_BELOW: Duration = Duration::from_millis(2);

/// Most datagrams taken in per receive call.
const RECV_BATCH: usize = 16;

/// Most answer datagrams sent per server-loop turn. Between two bursts the
/// loop takes in whatever requests have arrived, so a request waits behind
/// at most one burst of other clients' answers (≈ 8 × 1.5 KB, tens of µs on
/// loopback) instead of behind every answer of the turn before (up to
/// `RECV_BATCH` requests of up to the response bound each, milliseconds).
const SEND_BURST: usize = 8;

/// Answer bytes queued in the [`Outbox`] or still owed by the engine
/// ([`Engine::owed_bytes`]) above which the loop stops taking
/// in requests until it has sent some: memory stays bounded however fast
/// clients ask, and the excess waits in the socket (or is dropped there and
/// retried) as on a real port. Well above what clients that keep to their
/// incast window queue.
const OUTBOX_CAP: usize = 16 << 20;

/// One answer datagram waiting to be sent.
#[derive(Debug)]
struct Out {
    pkt: Vec<u8>,
    /// If this is the last answer datagram of a traced request
    /// ([`ServerHandle::trace`]): that request's mark.
    traced: Option<Mark>,
}

/// When a traced request was taken in, and the server's send counters then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    taken: Instant,
    sent: u64,
    bytes: u64,
}

/// Answers waiting to be sent, one FIFO per destination, drained
/// round-robin by destination one packet at a time in bounded bursts
/// (packet-granularity interleaving). The rotation persists across bursts:
/// a destination that gets an answer while another's thousand packets wait
/// has it sent within the next burst, at most one packet per other
/// destination after the burst starts.
#[derive(Debug, Default)]
struct Outbox {
    queues: std::collections::VecDeque<(SocketAddr, std::collections::VecDeque<Out>)>,
    bytes: usize,
    packets: usize,
}

impl Outbox {
    fn push(&mut self, to: SocketAddr, pkt: Vec<u8>, traced: Option<Mark>) {
        self.bytes += pkt.len();
        self.packets += 1;
        let out = Out { pkt, traced };
        match self.queues.iter_mut().find(|(d, _)| *d == to) {
            Some((_, q)) => q.push_back(out),
            None => self
                .queues
                .push_back((to, std::collections::VecDeque::from([out]))),
        }
    }

    fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// Move up to `max` datagrams, round-robin by destination, to `sends`
    /// (and the trace marks of those that end a traced answer to `marks`,
    /// by index in `sends`).
    fn burst(
        &mut self,
        max: usize,
        sends: &mut Vec<(Vec<u8>, Option<SocketAddr>)>,
        marks: &mut Vec<(usize, Mark)>,
    ) {
        for _ in 0..max {
            let Some((to, mut q)) = self.queues.pop_front() else {
                return;
            };
            if let Some(o) = q.pop_front() {
                self.bytes -= o.pkt.len();
                self.packets -= 1;
                if let Some(t) = o.traced {
                    marks.push((sends.len(), t));
                }
                sends.push((o.pkt, Some(to)));
            }
            if !q.is_empty() {
                self.queues.push_back((to, q));
            }
        }
    }
}

/// Send `sends` in batches, a multi-packet answer's datagrams as one
/// segmented message where the kernel takes UDP GSO (`gso`); returns how
/// many the kernel took. A datagram the kernel refuses is lost, as on a
/// real link (the client retries). `sent[i]` is set for each datagram
/// handed to the kernel.
fn send_all(
    socket: &UdpSocket,
    gso: &mut clio_mmsg::GsoSender,
    sends: &[(Vec<u8>, Option<SocketAddr>)],
    sent: &mut Vec<bool>,
) -> u64 {
    sent.clear();
    sent.resize(sends.len(), false);
    let mut n_sent = 0;
    let mut at = 0;
    while at < sends.len() {
        match gso.send(socket, &sends[at..]) {
            Ok(n) => {
                sent[at..at + n].iter_mut().for_each(|s| *s = true);
                n_sent += n as u64;
                at += n;
            }
            // Skip the datagram the kernel refused (e.g. ICMP-reported
            // unreachable client) and go on with the rest.
            Err(_) => at += 1,
        }
    }
    n_sent
}

/// Board-side times of one client's requests, recorded by the server while
/// [`ServerHandle::trace`] names that client: when the serving thread took
/// the request in (its receive returned it) and when the send of its last
/// answer datagram made at intake returned (the burst holding it is cut
/// after it; of a READ streamed packet by packet, that is its first
/// packet). Only requests answered at once (not through a slow path's
/// rings) over fault-free links are traced.
#[derive(Debug, Default)]
pub struct Trace {
    client: std::sync::Mutex<Option<SocketAddr>>,
    on: AtomicBool,
    records: std::sync::Mutex<Vec<Traced>>,
}

/// The board-side record of one traced request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    /// The serving thread took the request in (its receive returned it).
    pub taken: Instant,
    /// The send of its last answer datagram returned.
    pub answered: Instant,
    /// Datagrams the board sent in between (other clients' answers, or
    /// earlier ones of this client): the board's queueing in packets,
    /// whatever the host's scheduler did meanwhile.
    pub ahead: u64,
    /// Their bytes (UDP payload).
    pub ahead_bytes: u64,
}

/// Opaque id of a client address, as the engine sees it.
pub type ClientId = u64;

/// A packet-in, packets-out board engine.
pub trait Engine: Send {
    /// Handle one datagram from `from`; responses go to `out`.
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8]));
    /// Do background work (the slow path's rings); responses go to `out`.
    /// Returns how soon the engine wants to be polled again, `None` if only
    /// a new packet can give it work.
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration>;
    /// Called once when a server starts serving the engine: an engine that
    /// can send long answers packet by packet ([`Engine::pump`]) turns
    /// that on here. Engines that answer every request whole do nothing.
    fn start(&mut self) {}
    /// Emit up to `max` datagrams of answers the engine still owes (the
    /// rest of long READs, round-robin by client); returns how many. The
    /// server calls it whenever fewer than a burst of datagrams wait, so
    /// requests that arrive meanwhile are executed between two packets of
    /// a long answer.
    fn pump(&mut self, _max: usize, _out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        0
    }
    /// Datagram bytes [`Engine::pump`] still owes (they count against the
    /// server's cap on queued answers).
    fn owed_bytes(&self) -> u64 {
        0
    }
}

/// Options of a served board.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// Faults applied to packets arriving at the board.
    pub inbound: FaultConfig,
    /// Faults applied to packets the board sends.
    pub outbound: FaultConfig,
    /// Client addresses remembered at once (`network.clients`); the least
    /// recently heard one is forgotten to make room.
    pub clients: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            inbound: FaultConfig::NONE,
            outbound: FaultConfig::NONE,
            clients: DEFAULT_CLIENTS,
        }
    }
}

impl ServeOptions {
    /// No faults, and the client capacity of `cfg` (`network.clients`).
    pub fn for_board(cfg: &clio_config::BoardConfig) -> Self {
        ServeOptions {
            clients: cfg.network.clients as usize,
            ..ServeOptions::default()
        }
    }
}

/// What a server did, returned when it stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeStats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Inbound link counters.
    pub inbound: FaultStats,
    /// Outbound link counters.
    pub outbound: FaultStats,
    /// The client table.
    pub clients: ClientCounters,
    /// Stats probes answered.
    pub probes: u64,
}

/// Counters the serving thread publishes for [`ServerHandle::clients`].
#[derive(Debug, Default)]
pub struct LiveCounters {
    live: AtomicU64,
    capacity: AtomicU64,
    evicted: AtomicU64,
    unroutable: AtomicU64,
}

impl LiveCounters {
    fn publish(&self, c: &ClientCounters) {
        self.live.store(c.live, Ordering::Relaxed);
        self.capacity.store(c.capacity, Ordering::Relaxed);
        self.evicted.store(c.evicted, Ordering::Relaxed);
        self.unroutable.store(c.unroutable, Ordering::Relaxed);
    }

    /// The last published table counters.
    pub fn get(&self) -> ClientCounters {
        ClientCounters {
            live: self.live.load(Ordering::Relaxed),
            capacity: self.capacity.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            unroutable: self.unroutable.load(Ordering::Relaxed),
        }
    }
}

/// A running server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    live: Arc<LiveCounters>,
    trace: Arc<Trace>,
    thread: Option<JoinHandle<io::Result<ServeStats>>>,
}

impl ServerHandle {
    /// The address clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The client table's counters, as of the answers sent so far (they are
    /// published before each round's answers go out).
    pub fn clients(&self) -> ClientCounters {
        self.live.get()
    }

    /// Record the board-side times of `client`'s requests from now on
    /// (`None`: stop recording); see [`Trace`]. Records of an earlier
    /// client are dropped.
    pub fn trace(&self, client: Option<SocketAddr>) {
        let mut c = self.trace.client.lock().unwrap_or_else(|e| e.into_inner());
        *c = client;
        self.trace.on.store(client.is_some(), Ordering::Release);
        self.trace
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Take the records made so far: for each traced request, when the
    /// serving thread took it in and when its answer's send returned, in
    /// the order answered.
    pub fn take_trace(&self) -> Vec<Traced> {
        std::mem::take(&mut *self.trace.records.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// CPU time the serving thread has used so far (`None` where the
    /// thread's CPU clock cannot be read: not Linux, or the thread ended).
    pub fn cpu_time(&self) -> Option<Duration> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::thread::JoinHandleExt;
            let t = self.thread.as_ref()?;
            let mut clock: libc::clockid_t = 0;
            // SAFETY: the thread is joinable (not yet joined: the handle
            // still holds it), and `clock` is valid for writes.
            if unsafe { libc::pthread_getcpuclockid(t.as_pthread_t(), &mut clock) } != 0 {
                return None;
            }
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is valid for writes during the call.
            if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
                return None;
            }
            Some(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Stop the server and return its counters.
    pub fn stop(mut self) -> io::Result<ServeStats> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> io::Result<ServeStats> {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking receive; the server ignores empty datagrams.
        let waker = UdpSocket::bind(if self.addr.is_ipv4() {
            "127.0.0.1:0"
        } else {
            "[::1]:0"
        })?;
        let target = match self.addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => {
                SocketAddr::from(([127, 0, 0, 1], a.port()))
            }
            a => a,
        };
        waker.send_to(&[], target)?;
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("board server thread panicked"))?,
            None => Ok(ServeStats::default()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop_inner();
        }
    }
}

/// Serve `engine` on `bind` (use port 0 for an ephemeral port) in a thread.
pub fn spawn<E: Engine + 'static>(
    engine: E,
    bind: SocketAddr,
    opts: ServeOptions,
) -> io::Result<ServerHandle> {
    let socket = UdpSocket::bind(bind)?;
    let addr = socket.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let live = Arc::new(LiveCounters::default());
    let counters = live.clone();
    let trace = Arc::new(Trace::default());
    let tracer = trace.clone();
    let thread = std::thread::Builder::new()
        .name("clio-board".into())
        .spawn(move || serve_counted(engine, socket, opts, &flag, &counters, &tracer))?;
    Ok(ServerHandle {
        addr,
        stop,
        live,
        trace,
        thread: Some(thread),
    })
}

/// Serve on the current thread until `stop` is set.
pub fn serve<E: Engine>(
    engine: E,
    socket: UdpSocket,
    opts: ServeOptions,
    stop: &AtomicBool,
) -> io::Result<ServeStats> {
    serve_counted(
        engine,
        socket,
        opts,
        stop,
        &LiveCounters::default(),
        &Trace::default(),
    )
}

/// The answer to a stats probe, if `pkt` is one and the answer fits in it.
fn probe_answer(pkt: &[u8], stats: &ServeStats, clients: &ClientTable) -> Option<Vec<u8>> {
    if !pkt.starts_with(STATS_PROBE) {
        return None;
    }
    let reply = ProbeReply {
        received: stats.received,
        sent: stats.sent,
        clients: clients.counters(),
    };
    let mut out = STATS_REPLY.to_vec();
    serde_json::to_writer(&mut out, &reply).ok()?;
    (out.len() <= pkt.len()).then_some(out)
}

/// Ask the server at `board` for its counters with a stats probe from
/// `socket`; `Ok(None)` when the answer is not a stats answer or none comes
/// within `timeout` (a hardware board answers a probe with a NACK, if at all).
pub fn probe_stats(
    socket: &UdpSocket,
    board: SocketAddr,
    timeout: Duration,
) -> io::Result<Option<ProbeReply>> {
    let mut probe = STATS_PROBE.to_vec();
    probe.resize(STATS_PROBE_LEN, b' ');
    socket.send_to(&probe, board)?;
    let deadline = Instant::now() + timeout;
    let mut buf = vec![0u8; 65536];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        socket.set_read_timeout(Some(left))?;
        match socket.recv_from(&mut buf) {
            Ok((n, from)) if from == board => {
                return Ok(buf[..n]
                    .strip_prefix(STATS_REPLY)
                    .and_then(|j| serde_json::from_slice(j).ok()));
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        }
    }
}

fn serve_counted<E: Engine>(
    mut engine: E,
    socket: UdpSocket,
    opts: ServeOptions,
    stop: &AtomicBool,
    live: &LiveCounters,
    trace: &Trace,
) -> io::Result<ServeStats> {
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as u64;
    let mut inbound = FaultyLink::<ClientId>::new(opts.inbound);
    let mut outbound = FaultyLink::<ClientId>::new(opts.outbound);
    let faulty = !(opts.inbound.is_none() && opts.outbound.is_none());
    let mut clients = ClientTable::new(opts.clients);
    live.publish(&clients.counters());
    let mut stats = ServeStats::default();
    // Bursts from many clients must fit while the engine works; the kernel
    // caps the request and a smaller buffer only costs client retries.
    let _ = clio_mmsg::grow_recv_buffer(&socket, 4 << 20);
    let mut batch = RecvBatch::new(RECV_BATCH, 65536);
    let mut timeout: Option<Duration> = None;
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(None)?;
    let mut engine_wait: Option<Duration> = None;
    let mut outq: Vec<(ClientId, Vec<u8>)> = Vec::new();
    let mut outbox = Outbox::default();
    let mut sends: Vec<(Vec<u8>, Option<SocketAddr>)> = Vec::new();
    let mut sent: Vec<bool> = Vec::new();
    let mut marks: Vec<(usize, Mark)> = Vec::new();
    let mut sent_bytes = 0u64;
    let mut gso = clio_mmsg::GsoSender::new();
    engine.start();

    while !stop.load(Ordering::Relaxed) {
        // Sleep in the kernel until a datagram or the next owed event.
        let mut wait = engine_wait;
        for due in [inbound.next_due(), outbound.next_due()]
            .into_iter()
            .flatten()
        {
            let d = Duration::from_nanos(due.saturating_sub(now()));
            wait = Some(wait.map_or(d, |w| w.min(d)));
        }
        let mode = match wait {
            // Answers still queued or owed: take in what has arrived, do
            // not wait.
            _ if !outbox.is_empty() || engine.owed_bytes() > 0 => Wait::No,
            // Socket timeouts are rounded up to scheduler ticks (ms), far
            // coarser than injected delays or a firmware's reply time: wait
            // for near events by polling the socket and yielding the CPU.
            Some(d) if d < SPIN_BELOW => {
                std::thread::yield_now();
                Wait::No
            }
            w => {
                // One syscall per real change of the wait, not per loop:
                // waking early is harmless, oversleeping is not.
                let rearm = match (w, timeout) {
                    (None, cur) => cur.is_some(),
                    (Some(_), None) => true,
                    (Some(d), Some(cur)) => d < cur || d > cur * 4,
                };
                if rearm {
                    socket.set_read_timeout(w)?;
                    timeout = w;
                }
                Wait::ForOne
            }
        };
        // Past the outbox's cap, send before taking in more.
        let intake = (outbox.bytes as u64).saturating_add(engine.owed_bytes()) < OUTBOX_CAP as u64;
        match if intake {
            batch.recv(&socket, mode)
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        } {
            Ok(n) => {
                let taken = Instant::now();
                let traced = if trace.on.load(Ordering::Acquire) && !faulty {
                    *trace.client.lock().unwrap_or_else(|e| e.into_inner())
                } else {
                    None
                };
                for i in 0..n {
                    let Some((pkt, Some(from))) = batch.get(i) else {
                        continue;
                    };
                    if pkt.is_empty() {
                        continue;
                    }
                    if let Some(answer) = probe_answer(pkt, &stats, &clients) {
                        // Sent at once, apart from board traffic; a refused
                        // send is a lost probe (the asker times out).
                        if socket.send_to(&answer, from).is_ok() {
                            stats.probes += 1;
                        }
                        continue;
                    }
                    stats.received += 1;
                    let id = clients.id(from);
                    if faulty {
                        inbound.push(now(), id, pkt);
                    } else if traced == Some(from) {
                        // Route this request's answers now, its last
                        // datagram marked with when it was taken in.
                        engine.handle(id, pkt, &mut |to, p| outq.push((to, p.to_vec())));
                        let mut answered = false;
                        for (to, p) in outq.drain(..) {
                            if let Some(a) = clients.route(to) {
                                answered |= a == from;
                                outbox.push(a, p, None);
                            }
                        }
                        if answered {
                            if let Some((_, q)) = outbox.queues.iter_mut().find(|(d, _)| *d == from)
                            {
                                if let Some(o) = q.back_mut() {
                                    o.traced = Some(Mark {
                                        taken,
                                        sent: stats.sent,
                                        bytes: sent_bytes,
                                    });
                                }
                            }
                        }
                    } else {
                        engine.handle(id, pkt, &mut |to, p| outq.push((to, p.to_vec())));
                    }
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {} // ICMP from a gone client
            Err(e) => return Err(e),
        }
        let t = now();
        while let Some((id, p)) = inbound.pop_due(t) {
            engine.handle(id, &p, &mut |to, r| outq.push((to, r.to_vec())));
        }
        engine_wait = engine.poll(&mut |to, r| outq.push((to, r.to_vec())));
        // Long answers' next packets, only as many as make up one burst:
        // the rest are produced after the next intake, so a request taken
        // in then is answered between two of their packets.
        if outbox.packets + outq.len() < SEND_BURST {
            let room = SEND_BURST - outbox.packets - outq.len();
            engine.pump(room, &mut |to, r| outq.push((to, r.to_vec())));
        }
        for (to, p) in outq.drain(..) {
            if faulty {
                outbound.push(now(), to, &p);
            } else if let Some(a) = clients.route(to) {
                outbox.push(a, p, None);
            }
        }
        let t = now();
        while let Some((to, p)) = outbound.pop_due(t) {
            if let Some(a) = clients.route(to) {
                outbox.push(a, p, None);
            }
        }
        // Published before the answers go out: a client that got its
        // answer sees counters that include its request.
        live.publish(&clients.counters());
        sends.clear();
        marks.clear();
        outbox.burst(SEND_BURST, &mut sends, &mut marks);
        let (base, base_bytes) = (stats.sent, sent_bytes);
        if let Some(&(last, _)) = marks.last() {
            // A traced answer's stamp is when the send of its own datagram
            // returned: the burst goes in two calls, cut after it.
            stats.sent += send_all(&socket, &mut gso, &sends[..=last], &mut sent);
            let done = Instant::now();
            let mut rest = Vec::new();
            stats.sent += send_all(&socket, &mut gso, &sends[last + 1..], &mut rest);
            sent.extend(rest);
            let mut r = trace.records.lock().unwrap_or_else(|e| e.into_inner());
            for &(i, m) in marks.iter().filter(|(i, _)| sent[*i]) {
                let before = sends[..i].iter().zip(&sent[..i]).filter(|(_, s)| **s);
                let (n, b) = before.fold((0, 0), |(n, b), ((p, _), _)| (n + 1, b + p.len() as u64));
                r.push(Traced {
                    taken: m.taken,
                    answered: done,
                    ahead: base + n - m.sent,
                    ahead_bytes: base_bytes + b - m.bytes,
                });
            }
        } else {
            stats.sent += send_all(&socket, &mut gso, &sends, &mut sent);
        }
        sent_bytes += sends
            .iter()
            .zip(&sent)
            .filter(|(_, s)| **s)
            .map(|((p, _), _)| p.len() as u64)
            .sum::<u64>();
    }
    stats.inbound = inbound.stats();
    stats.outbound = outbound.stats();
    stats.clients = clients.counters();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Echoes every packet back reversed; `poll` has nothing to do.
    struct Reverse;
    impl Engine for Reverse {
        fn handle(&mut self, from: ClientId, p: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
            let r: Vec<u8> = p.iter().rev().copied().collect();
            out(from, &r);
        }
        fn poll(&mut self, _out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
            None
        }
    }

    #[test]
    fn outbox_bursts_are_bounded_and_a_new_destination_goes_next() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut ob = Outbox::default();
        for i in 0..1000u32 {
            ob.push(a, i.to_le_bytes().to_vec(), None);
        }
        let (mut sends, mut marks) = (Vec::new(), Vec::new());
        ob.burst(SEND_BURST, &mut sends, &mut marks);
        assert_eq!(sends.len(), SEND_BURST, "one burst, not the whole queue");
        // B's one answer, queued while A's 992 others wait, leaves in the
        // next burst right after one more of A's, marked.
        let t = Mark {
            taken: Instant::now(),
            sent: 8,
            bytes: 32,
        };
        ob.push(b, vec![9], Some(t));
        sends.clear();
        ob.burst(SEND_BURST, &mut sends, &mut marks);
        let to: Vec<_> = sends.iter().map(|(_, d)| d.unwrap()).collect();
        assert_eq!(&to[..3], &[a, b, a]);
        assert_eq!(marks, [(1, t)]);
        // A's answers stay in order; the outbox drains and counts bytes.
        let mut rest = Vec::new();
        while !ob.is_empty() {
            sends.clear();
            ob.burst(SEND_BURST, &mut sends, &mut marks);
            assert!(sends.len() <= SEND_BURST);
            rest.extend(sends.drain(..).map(|(p, _)| p));
        }
        let seq: Vec<u32> = rest
            .iter()
            .map(|p| u32::from_le_bytes(p[..4].try_into().unwrap()))
            .collect();
        // (The second burst held B's and SEND_BURST - 1 of A's.)
        let first = 2 * SEND_BURST as u32 - 1;
        assert!(seq.iter().copied().eq(first..1000), "A's order kept");
        assert_eq!(ob.bytes, 0);
    }

    /// Answers `flood` with [`Flood::N`] datagrams, anything else with `ok`.
    struct Flood;
    impl Flood {
        const N: u32 = 200_000;
    }
    impl Engine for Flood {
        fn handle(&mut self, from: ClientId, p: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
            if p == b"flood" {
                for i in 0..Self::N {
                    out(from, &i.to_le_bytes());
                }
            } else {
                out(from, b"ok");
            }
        }
        fn poll(&mut self, _out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
            None
        }
    }

    /// A loopback client socket that gives up a receive after 5 s.
    fn client() -> UdpSocket {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }

    #[test]
    fn requests_are_taken_in_between_answer_bursts() {
        let h = spawn(
            Flood,
            "127.0.0.1:0".parse().unwrap(),
            ServeOptions::default(),
        )
        .unwrap();
        let (a, b) = (client(), client());
        a.send_to(b"flood", h.addr()).unwrap();
        let mut buf = [0u8; 64];
        let (n, _) = a.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], &0u32.to_le_bytes(), "the flood has begun");
        // A stats probe is answered when the loop takes it in, with the
        // datagrams sent so far: fewer than the flood, because the loop
        // takes requests in between bursts. (A loop that sent a turn's
        // answers at once would take it in only after all of them.)
        let r = probe_stats(&b, h.addr(), Duration::from_secs(5))
            .unwrap()
            .expect("the probe is answered");
        assert!(
            r.sent < u64::from(Flood::N),
            "the probe waited for {} of the flood's {} datagrams",
            r.sent,
            Flood::N
        );
        // And a request's answer overtakes the rest of the flood.
        h.trace(Some(b.local_addr().unwrap()));
        b.send_to(b"hi", h.addr()).unwrap();
        let (n, _) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ok");
        let r = probe_stats(&b, h.addr(), Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert!(r.sent < u64::from(Flood::N), "sent {}", r.sent);
        let tr = h.take_trace();
        assert_eq!(tr.len(), 1, "B's request was traced");
        assert!(tr[0].answered >= tr[0].taken);
        assert!(
            tr[0].ahead <= 1,
            "B's answer waited behind {} datagrams",
            tr[0].ahead
        );
        let s = h.stop().unwrap();
        assert_eq!(s.received, 2);
    }

    /// Owes [`Lazy::N`] datagrams for `long`, produced only by `pump`, and
    /// answers anything else at once with how many it had produced then.
    #[derive(Default)]
    struct Lazy {
        owed: Option<(ClientId, u32)>,
        made: u32,
    }
    impl Lazy {
        const N: u32 = 100_000;
    }
    impl Engine for Lazy {
        fn handle(&mut self, from: ClientId, p: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
            if p == b"long" {
                self.owed = Some((from, Self::N));
            } else {
                out(from, &self.made.to_le_bytes());
            }
        }
        fn poll(&mut self, _out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
            None
        }
        fn pump(&mut self, max: usize, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
            let Some((to, left)) = self.owed.as_mut() else {
                return 0;
            };
            let n = (*left).min(max as u32);
            for _ in 0..n {
                out(*to, b"data");
            }
            *left -= n;
            self.made += n;
            if *left == 0 {
                self.owed = None;
            }
            n as usize
        }
        fn owed_bytes(&self) -> u64 {
            self.owed.map_or(0, |(_, n)| u64::from(n) * 4)
        }
    }

    #[test]
    fn requests_are_executed_between_pumped_packets() {
        let h = spawn(
            Lazy::default(),
            "127.0.0.1:0".parse().unwrap(),
            ServeOptions::default(),
        )
        .unwrap();
        let (a, b) = (client(), client());
        a.send_to(b"long", h.addr()).unwrap();
        let mut buf = [0u8; 64];
        let (n, _) = a.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"data", "the long answer has begun");
        // B's request is executed while A's answer is still being made: the
        // server asks the engine for at most a burst at a time.
        h.trace(Some(b.local_addr().unwrap()));
        b.send_to(b"hi", h.addr()).unwrap();
        let (n, _) = b.recv_from(&mut buf).unwrap();
        let made = u32::from_le_bytes(buf[..n].try_into().unwrap());
        assert!(made < Lazy::N, "B waited for all {made} of A's datagrams");
        // The probe's answer comes after the loop has recorded B's trace.
        probe_stats(&b, h.addr(), Duration::from_secs(5)).unwrap();
        let tr = h.take_trace();
        assert_eq!(tr.len(), 1);
        assert!(
            tr[0].ahead <= 1,
            "{} datagrams ahead of B's answer",
            tr[0].ahead
        );
        // And all of A's answer is sent (whether A's socket keeps up or not).
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let r = probe_stats(&b, h.addr(), Duration::from_secs(5)).unwrap();
            if r.is_some_and(|r| r.sent == u64::from(Lazy::N) + 1) {
                break;
            }
            assert!(Instant::now() < deadline, "A's answer was not all sent");
        }
        let s = h.stop().unwrap();
        assert_eq!(s.sent, u64::from(Lazy::N) + 1);
    }

    #[test]
    fn serves_and_stops() {
        let h = spawn(
            Reverse,
            "127.0.0.1:0".parse().unwrap(),
            ServeOptions::default(),
        )
        .unwrap();
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 16];
        for i in 0..10u8 {
            c.send_to(&[1, 2, i], h.addr()).unwrap();
            let (n, _) = c.recv_from(&mut b).unwrap();
            assert_eq!(&b[..n], &[i, 2, 1]);
        }
        let s = h.stop().unwrap();
        assert_eq!((s.received, s.sent), (10, 10));
    }

    /// Holds the id of a `hold` packet and answers it `late` when the next
    /// packet arrives, which it answers `ok`: an answer the engine owes a
    /// client across other clients' requests (as a forwarded ALLOC waits).
    #[derive(Default)]
    struct Holder(Option<ClientId>);
    impl Engine for Holder {
        fn handle(&mut self, from: ClientId, p: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
            if p == b"hold" {
                self.0 = Some(from);
                return;
            }
            out(from, b"ok");
            if let Some(h) = self.0.take() {
                out(h, b"late");
            }
        }
        fn poll(&mut self, _out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
            None
        }
    }

    #[test]
    fn a_late_answer_never_reaches_the_client_that_took_the_slot() {
        let opts = ServeOptions {
            clients: 1,
            ..ServeOptions::default()
        };
        let h = spawn(Holder::default(), "127.0.0.1:0".parse().unwrap(), opts).unwrap();
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        a.send_to(b"hold", h.addr()).unwrap();
        // B's request is served after A's (one socket, FIFO); B takes A's
        // only slot, and the engine then answers A's held request.
        b.send_to(b"go", h.addr()).unwrap();
        let mut buf = [0u8; 16];
        let (n, _) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ok");
        // The next datagram B gets is the answer to its next request, not
        // A's late answer.
        b.send_to(b"again", h.addr()).unwrap();
        let (n, _) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ok");
        let c = h.clients();
        assert_eq!((c.live, c.capacity, c.evicted, c.unroutable), (1, 1, 1, 1));
        let s = h.stop().unwrap();
        assert_eq!((s.received, s.sent), (3, 2));
    }

    #[test]
    fn stats_probe_answers_counters_and_never_amplifies() {
        let h = spawn(
            Reverse,
            "127.0.0.1:0".parse().unwrap(),
            ServeOptions::default(),
        )
        .unwrap();
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.send_to(&[1, 2, 3], h.addr()).unwrap();
        let mut b = [0u8; 16];
        c.recv_from(&mut b).unwrap();
        let r = probe_stats(&c, h.addr(), Duration::from_secs(5))
            .unwrap()
            .expect("the emulator answers a stats probe");
        assert_eq!((r.received, r.sent), (1, 1));
        assert_eq!(r.clients.live, 1);
        assert_eq!(r.clients.capacity, DEFAULT_CLIENTS as u64);
        // A probe shorter than its answer is not answered.
        let stats = ServeStats::default();
        let table = ClientTable::new(4);
        assert!(probe_answer(STATS_PROBE, &stats, &table).is_none());
        let mut long = STATS_PROBE.to_vec();
        long.resize(STATS_PROBE_LEN, b' ');
        let ans = probe_answer(&long, &stats, &table).unwrap();
        assert!(ans.len() <= long.len() && ans.starts_with(STATS_REPLY));
        // Probes are neither clients nor board traffic.
        let s = h.stop().unwrap();
        assert_eq!((s.received, s.sent, s.probes, s.clients.live), (1, 1, 1, 1));
    }

    #[test]
    fn an_idle_board_blocks() {
        let h = spawn(
            Reverse,
            "127.0.0.1:0".parse().unwrap(),
            ServeOptions::default(),
        )
        .unwrap();
        let Some(t0) = h.cpu_time() else {
            return; // no thread CPU clock on this platform
        };
        let c = client();
        let mut b = [0u8; 16];
        for i in 0..100u8 {
            c.send_to(&[1, i], h.addr()).unwrap();
            let (n, _) = c.recv_from(&mut b).unwrap();
            assert_eq!(&b[..n], &[i, 1]);
        }
        // Idle, the board sleeps in the kernel: over half a second it uses
        // (nearly) no CPU. A board that kept polling would use the whole
        // half second, or as much of a core as the host gives it (far more
        // than 50 ms even on a loaded host).
        std::thread::sleep(Duration::from_millis(1));
        let t1 = h.cpu_time().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let idle = h.cpu_time().unwrap() - t1;
        assert!(
            idle < Duration::from_millis(50),
            "an idle board used {idle:?} of CPU in 0.5 s"
        );
        // Traffic made the thread use CPU (the clock is read), and the
        // board still answers after sleeping.
        assert!(t1 > t0, "{t0:?} -> {t1:?}");
        c.send_to(&[3, 4], h.addr()).unwrap();
        let (n, _) = c.recv_from(&mut b).unwrap();
        assert_eq!(&b[..n], &[4, 3]);
        h.stop().unwrap();
    }

    #[test]
    fn delayed_link_still_delivers() {
        let opts = ServeOptions {
            outbound: FaultConfig {
                delay_ns: 2_000_000,
                ..FaultConfig::NONE
            },
            ..ServeOptions::default()
        };
        let h = spawn(Reverse, "127.0.0.1:0".parse().unwrap(), opts).unwrap();
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let t = Instant::now();
        c.send_to(&[7, 8], h.addr()).unwrap();
        let mut b = [0u8; 4];
        let (n, _) = c.recv_from(&mut b).unwrap();
        assert_eq!(&b[..n], &[8, 7]);
        assert!(t.elapsed() >= Duration::from_millis(2));
        h.stop().unwrap();
    }
}
