//! The thin UDP shell: one datagram in, one answer out, over a [`Rack`].
//!
//! [`Service::serve`] loops until its stop flag is set: each turn waits at most
//! [`POLL`] for one datagram, answers it, then declares silent nodes dead. Datagrams
//! without the control magic are dropped; ones that fail to decode are answered
//! `Refused { Malformed, field }` with the request id when it could be read.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio_control::auth::{self, FrameError, RackKey, ReplayGuard, Seal, Sealer};
use clio_control::{Envelope, ErrorCode, Field, Message, NodeId, MAX_ENVELOPE_LEN};

use crate::state::field_named;
use crate::Rack;

/// Longest wait for a datagram before the loop checks its stop flag and liveness.
pub const POLL: Duration = Duration::from_millis(20);

/// Counters of one service.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests answered (refusals included).
    pub answered: u64,
    /// Datagrams dropped (no control magic, a reply where a request belongs) and
    /// answers that could not be sent.
    pub dropped: u64,
    /// Nodes declared dead.
    pub declared_dead: u64,
    /// Probes sent to `join = "probe"` nodes.
    pub probes: u64,
    /// Their `NodeInfo` answers taken (as hellos or heartbeats).
    pub probe_answers: u64,
    /// With a rack key: datagrams refused because their MAC did not verify.
    pub unauthenticated: u64,
    /// With a rack key: authentic requests refused as replays.
    pub replayed: u64,
}

/// Senders (clients, nodes, movers) whose counters the controller remembers.
pub const REPLAY_SENDERS: usize = 4096;

/// A random 64-bit id (a sender's, for sealed frames).
pub fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// A sealer whose counter starts at the wall clock in µs (see `clio_control::auth`).
pub fn new_sealer() -> Sealer {
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    Sealer::new(random_id(), us)
}

/// The controller behind a UDP socket.
#[derive(Debug)]
pub struct Service {
    socket: UdpSocket,
    rack: Rack,
    started: Instant,
    stats: Stats,
    /// When the next round of probes is due (ms on the service's clock).
    next_probe_ms: u64,
    probe_id: u32,
    /// Seals probes (with a rack key).
    prober: Sealer,
    prober_id: u64,
    /// The last probe counter a node's authentic answer carried.
    probe_seen: std::collections::HashMap<NodeId, u64>,
    /// Requests' counters per sender (with a rack key).
    guard: Box<ReplayGuard<REPLAY_SENDERS>>,
}

/// How often the `join = "probe"` nodes are probed: four times per
/// `dead_after_ms` (so three lost probes in a row do not kill a node),
/// between 10 ms and 1 s.
pub fn probe_interval_ms(dead_after_ms: u64) -> u64 {
    (dead_after_ms / 4).clamp(10, 1000)
}

impl Service {
    /// Binds `addr` (e.g. the rack file's `controller.listen`, or port 0 for tests).
    /// The service's clock starts at 0 here: open the `Rack` with `now_ms = 0`.
    pub fn bind(addr: impl ToSocketAddrs, rack: Rack) -> io::Result<Service> {
        let socket = UdpSocket::bind(addr)?;
        socket.set_read_timeout(Some(POLL))?;
        let mut prober = new_sealer();
        let prober_id = prober.next_seal().sender;
        Ok(Service {
            socket,
            rack,
            started: Instant::now(),
            stats: Stats::default(),
            next_probe_ms: 0,
            probe_id: 0,
            prober,
            prober_id,
            probe_seen: std::collections::HashMap::new(),
            guard: Box::new(ReplayGuard::new()),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The controller.
    pub fn rack(&self) -> &Rack {
        &self.rack
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Milliseconds since the service started (the clock the state machine sees; the
    /// rack was opened at 0).
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Answers one datagram, if one arrives within [`POLL`]; then checks liveness.
    /// Errors only if the socket fails or declaring a node dead cannot be logged
    /// (fail-stop: the controller must not run on without its log).
    pub fn turn(&mut self) -> io::Result<()> {
        let mut buf = [0u8; MAX_ENVELOPE_LEN + 1];
        match self.socket.recv_from(&mut buf) {
            Ok((n, from)) => self.answer(&buf[..n], from)?,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
        let now = self.now_ms();
        if now >= self.next_probe_ms {
            self.next_probe_ms =
                now + probe_interval_ms(self.rack.controller().config().dead_after_ms);
            self.probe();
        }
        let dead = self.rack.tick(now).map_err(io::Error::other)?;
        self.stats.declared_dead += dead
            .iter()
            .filter(|e| matches!(e, crate::Event::Dead { .. }))
            .count() as u64;
        Ok(())
    }

    /// Sends one probe to every `join = "probe"` node (a lost one is
    /// followed by the next round).
    fn probe(&mut self) {
        let key = self.key();
        for (addr, m) in self.rack.probes() {
            self.probe_id = self.probe_id.wrapping_add(1);
            let mut out = [0u8; MAX_ENVELOPE_LEN];
            let env = Envelope::new(self.probe_id, m);
            let bytes = match &key {
                Some(k) => auth::seal(&env, k, self.prober.next_seal(), &mut out),
                None => env.encode(&mut out).map(|b| &*b),
            };
            if let Ok(bytes) = bytes {
                if self.socket.send_to(bytes, addr).is_ok() {
                    self.stats.probes += 1;
                }
            }
        }
    }

    fn key(&self) -> Option<RackKey> {
        self.rack.controller().config().key
    }

    /// A datagram under the rack key: MAC, then counter, then envelope;
    /// refusals are sealed with the seal the datagram claims.
    fn answer_sealed(
        &mut self,
        key: &RackKey,
        datagram: &[u8],
        from: SocketAddr,
    ) -> io::Result<()> {
        let mut out = [0u8; MAX_ENVELOPE_LEN];
        let (env, seal) = match auth::open(datagram, key) {
            Ok(x) => x,
            Err(e) => {
                if e == FrameError::Unauthenticated {
                    self.stats.unauthenticated += 1;
                }
                if let Some(b) = auth::refusal(datagram, &e, key, &mut out) {
                    let _ = self.socket.send_to(b, from);
                }
                self.stats.dropped += 1;
                return Ok(());
            }
        };
        if let Message::NodeInfo { node, .. } = env.message {
            // The answer to one of our probes, newer than the last taken.
            let last = self.probe_seen.get(&node).copied().unwrap_or(0);
            if seal.sender != self.prober_id || seal.counter <= last {
                self.stats.replayed += 1;
                return Ok(());
            }
            let now = self.now_ms();
            match self.rack.probe_answer(now, from, &env.message) {
                Some(_) => {
                    self.probe_seen.insert(node, seal.counter);
                    self.stats.probe_answers += 1;
                }
                None => self.stats.dropped += 1,
            }
            return Ok(());
        }
        if !env.message.is_request() {
            self.stats.dropped += 1;
            return Ok(());
        }
        let reply = match self.guard.check(seal) {
            Ok(()) => {
                let now = self.now_ms();
                self.rack.request(now, &env.message)
            }
            Err(_) => {
                self.stats.replayed += 1;
                Message::Refused {
                    code: ErrorCode::Replayed,
                    field: Field::FrameCounter,
                }
            }
        };
        let bytes = auth::seal(&Envelope::new(env.request_id, reply), key, seal, &mut out)
            .map_err(io::Error::other)?;
        match self.socket.send_to(bytes, from) {
            Ok(_) => self.stats.answered += 1,
            Err(_) => self.stats.dropped += 1,
        }
        Ok(())
    }

    fn answer(&mut self, datagram: &[u8], from: SocketAddr) -> io::Result<()> {
        if let Some(key) = self.key() {
            return self.answer_sealed(&key, datagram, from);
        }
        let (id, reply) = match Envelope::decode(datagram) {
            Ok(env) if matches!(env.message, Message::NodeInfo { .. }) => {
                // A probed node's answer: a hello or heartbeat on its behalf
                // (nothing is sent back; the next probe carries the epoch).
                let now = self.now_ms();
                match self.rack.probe_answer(now, from, &env.message) {
                    Some(_) => self.stats.probe_answers += 1,
                    None => self.stats.dropped += 1,
                }
                return Ok(());
            }
            Ok(env) if env.message.is_request() => {
                let now = self.now_ms();
                (env.request_id, self.rack.request(now, &env.message))
            }
            Ok(_) => {
                self.stats.dropped += 1;
                return Ok(());
            }
            Err(e) => match Envelope::peek_request_id(datagram) {
                Some(id) => {
                    let field = field_named(e.field).unwrap_or(Field::Message);
                    (
                        id,
                        Message::Refused {
                            code: ErrorCode::Malformed,
                            field,
                        },
                    )
                }
                None => {
                    self.stats.dropped += 1;
                    return Ok(());
                }
            },
        };
        let mut out = [0u8; MAX_ENVELOPE_LEN];
        let bytes = Envelope::new(id, reply)
            .encode(&mut out)
            .map_err(io::Error::other)?;
        // The change (if any) is committed already; a lost answer is the client's
        // to retry, so a failed send does not stop the service.
        match self.socket.send_to(bytes, from) {
            Ok(_) => self.stats.answered += 1,
            Err(_) => self.stats.dropped += 1,
        }
        Ok(())
    }

    /// Serves until `stop` is set (checked at least every [`POLL`]).
    pub fn serve(&mut self, stop: &AtomicBool) -> io::Result<Stats> {
        while !stop.load(Ordering::Relaxed) {
            self.turn()?;
        }
        Ok(self.stats)
    }

    /// Serves on a new thread; [`Running::stop`] ends it and returns the service.
    pub fn spawn(mut self) -> io::Result<Running> {
        let addr = self.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("clio-rack".into())
            .spawn(move || self.serve(&flag).map(|_| self))?;
        Ok(Running { addr, stop, thread })
    }
}

/// A service running on its own thread.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<io::Result<Service>>,
}

impl Running {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the loop (within one [`POLL`]) and returns the service.
    pub fn stop(self) -> io::Result<Service> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| io::Error::other("rack service thread panicked"))?
    }
}

/// A blocking client: one request, bounded retries.
#[derive(Debug)]
pub struct Client {
    socket: UdpSocket,
    next_id: u32,
    /// Wait per attempt.
    pub timeout: Duration,
    /// Attempts before giving up.
    pub attempts: u32,
    /// The rack key: requests are sealed, only sealed answers to them taken.
    key: Option<RackKey>,
    sealer: Sealer,
}

impl Client {
    /// A client of the controller at `controller` (from an ephemeral local port).
    pub fn connect(controller: SocketAddr) -> io::Result<Client> {
        let local: SocketAddr = if controller.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        }
        .parse()
        .expect("literal");
        let socket = UdpSocket::bind(local)?;
        socket.connect(controller)?;
        Ok(Client {
            socket,
            next_id: 1,
            timeout: Duration::from_millis(200),
            attempts: 5,
            key: None,
            sealer: new_sealer(),
        })
    }

    /// Seals every request under `key` (the rack file's; `None`: bare
    /// envelopes, an unauthenticated rack).
    pub fn with_key(mut self, key: Option<RackKey>) -> Client {
        self.key = key;
        self
    }

    /// The address it talks to.
    pub fn peer(&self) -> io::Result<SocketAddr> {
        self.socket.peer_addr()
    }

    /// Sends `request` and waits for the answer with its id (retrying on timeout).
    /// Not idempotent for `Allocate`: a lost answer and a retry allocate twice.
    pub fn call(&mut self, request: Message) -> io::Result<Message> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let env = Envelope::new(id, request);
        self.socket.set_read_timeout(Some(self.timeout))?;
        let mut buf = [0u8; MAX_ENVELOPE_LEN + 1];
        for _ in 0..self.attempts {
            // A retry is a new frame (a new counter): the receiver refuses
            // the same frame twice.
            let mut out = [0u8; MAX_ENVELOPE_LEN];
            let mut sent: Option<Seal> = None;
            let bytes = match &self.key {
                Some(k) => {
                    let s = self.sealer.next_seal();
                    sent = Some(s);
                    auth::seal(&env, k, s, &mut out).map_err(io::Error::other)?
                }
                None => &*env.encode(&mut out).map_err(io::Error::other)?,
            };
            self.socket.send(bytes)?;
            let deadline = Instant::now() + self.timeout;
            while Instant::now() < deadline {
                match self.socket.recv(&mut buf) {
                    Ok(n) => match (&self.key, sent) {
                        (Some(k), Some(s)) => match auth::open(&buf[..n], k) {
                            Ok((e, got)) if got == s && e.request_id == id => return Ok(e.message),
                            _ => continue,
                        },
                        _ => match Envelope::decode(&buf[..n]) {
                            Ok(e) if e.request_id == id => return Ok(e.message),
                            _ => continue,
                        },
                    },
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) =>
                    {
                        break
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no answer from the rack controller after {} attempts",
                self.attempts
            ),
        ))
    }
}
