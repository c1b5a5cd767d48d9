//! The UDP endpoint of an emulated board: a thin I/O shell that moves
//! datagrams between a socket and an [`Engine`], through optional faulty
//! links in each direction.
//!
//! One thread owns the socket and the engine. It blocks in a batched receive with
//! a timeout set to the next event it owes (a delayed packet, engine work),
//! so an idle board uses no CPU; [`ServerHandle::stop`] wakes it with an
//! empty datagram.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio_mmsg::{RecvBatch, Wait};

use crate::faults::{FaultConfig, FaultStats, FaultyLink};

/// Waits shorter than this poll instead of blocking in the kernel.
const SPIN_BELOW: Duration = Duration::from_millis(2);

/// Most datagrams taken in per receive call.
const RECV_BATCH: usize = 16;

/// Send every queued datagram in batches; returns how many left. A datagram
/// the kernel refuses is lost, as on a real link (the client retries).
fn send_all(socket: &UdpSocket, q: &mut Vec<(Vec<u8>, Option<SocketAddr>)>) -> u64 {
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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            inbound: FaultConfig::NONE,
            outbound: FaultConfig::NONE,
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
}

/// A running server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<ServeStats>>>,
}

impl ServerHandle {
    /// The address clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
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
    let thread = std::thread::Builder::new()
        .name("clio-board".into())
        .spawn(move || serve(engine, socket, opts, &flag))?;
    Ok(ServerHandle {
        addr,
        stop,
        thread: Some(thread),
    })
}

/// Serve on the current thread until `stop` is set.
pub fn serve<E: Engine>(
    mut engine: E,
    socket: UdpSocket,
    opts: ServeOptions,
    stop: &AtomicBool,
) -> io::Result<ServeStats> {
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as u64;
    let mut inbound = FaultyLink::<ClientId>::new(opts.inbound);
    let mut outbound = FaultyLink::<ClientId>::new(opts.outbound);
    let faulty = !(opts.inbound.is_none() && opts.outbound.is_none());
    let mut clients: Vec<SocketAddr> = Vec::new();
    let mut ids: HashMap<SocketAddr, ClientId> = HashMap::new();
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
                    stats.received += 1;
                    let id = *ids.entry(from).or_insert_with(|| {
                        clients.push(from);
                        clients.len() as ClientId - 1
                    });
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
            } else if let Some(a) = clients.get(to as usize) {
                sends.push((p, Some(*a)));
            }
        }
        let t = now();
        while let Some((to, p)) = outbound.pop_due(t) {
            if let Some(a) = clients.get(to as usize) {
                sends.push((p, Some(*a)));
            }
        }
        stats.sent += send_all(&socket, &mut sends);
    }
    stats.inbound = inbound.stats();
    stats.outbound = outbound.stats();
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
