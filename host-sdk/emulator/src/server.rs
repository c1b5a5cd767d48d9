//! The UDP endpoint of an emulated board: a thin I/O shell that moves
//! datagrams between a socket and an [`Engine`], through optional faulty
//! links in each direction.
//!
//! One thread owns the socket and the engine. It blocks in a batched receive with
//! a timeout set to the next event it owes (a delayed packet, engine work),
//! so an idle board uses no CPU; [`ServerHandle::stop`] wakes it with an
//! empty datagram.
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
const SPIN_BELOW: Duration = Duration::from_millis(2);

/// Most datagrams taken in per receive call.
const RECV_BATCH: usize = 16;

/// Send every queued datagram in batches; returns how many left. A datagram
/// the kernel refuses is lost, as on a real link (the client retries).
/// Reorder `q` round-robin by destination, each destination's packets in
/// their order: one client's multi-packet answers (up to the response bound
/// per request) then delay another's one-packet answer by at most one packet
/// per client instead of all of them (packet-granularity interleaving).
fn interleave(q: &mut Vec<(Vec<u8>, Option<SocketAddr>)>) {
    if q.len() < 2 || q.iter().all(|(_, a)| *a == q[0].1) {
        return;
    }
    let mut queues: Vec<(Option<SocketAddr>, std::collections::VecDeque<Vec<u8>>)> = Vec::new();
    for (p, a) in q.drain(..) {
        match queues.iter_mut().find(|(d, _)| *d == a) {
            Some((_, v)) => v.push_back(p),
            None => queues.push((a, std::collections::VecDeque::from([p]))),
        }
    }
    while !queues.is_empty() {
        queues.retain_mut(|(a, v)| match v.pop_front() {
            Some(p) => {
                q.push((p, *a));
                true
            }
            None => false,
        });
    }
}

fn send_all(socket: &UdpSocket, q: &mut Vec<(Vec<u8>, Option<SocketAddr>)>) -> u64 {
    interleave(q);
    let mut sent = 0;
    let mut at = 0;
    while at < q.len() {
        match clio_mmsg::send_batch(socket, &q[at..]) {
            Ok(n) => {
                sent += n as u64;
                at += n;
            }
            // Skip the datagram the kernel refused (e.g. ICMP-reported
            // unreachable client) and go on with the rest.
            Err(_) => at += 1,
        }
    }
    q.clear();
    sent
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
    let thread = std::thread::Builder::new()
        .name("clio-board".into())
        .spawn(move || serve_counted(engine, socket, opts, &flag, &counters))?;
    Ok(ServerHandle {
        addr,
        stop,
        live,
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
    serve_counted(engine, socket, opts, stop, &LiveCounters::default())
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
    let mut sends: Vec<(Vec<u8>, Option<SocketAddr>)> = Vec::new();

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
        match batch.recv(&socket, mode) {
            Ok(n) => {
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
        for (to, p) in outq.drain(..) {
            if faulty {
                outbound.push(now(), to, &p);
            } else if let Some(a) = clients.route(to) {
                sends.push((p, Some(a)));
            }
        }
        let t = now();
        while let Some((to, p)) = outbound.pop_due(t) {
            if let Some(a) = clients.route(to) {
                sends.push((p, Some(a)));
            }
        }
        // Published before the answers go out: a client that got its
        // answer sees counters that include its request.
        live.publish(&clients.counters());
        stats.sent += send_all(&socket, &mut sends);
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
    fn answers_interleave_round_robin_by_destination() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut q: Vec<(Vec<u8>, Option<SocketAddr>)> = (0..4u8)
            .map(|i| (vec![i], Some(a)))
            .chain([(vec![9], Some(b))])
            .collect();
        interleave(&mut q);
        let order: Vec<u8> = q.iter().map(|(p, _)| p[0]).collect();
        assert_eq!(order, [0, 9, 1, 2, 3], "b's one answer goes second");
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
