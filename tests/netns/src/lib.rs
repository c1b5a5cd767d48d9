//! The netns fault campaign's fault proxy: a UDP relay between clients and a
//! memory board that drops, duplicates, corrupts, reorders and delays
//! packets with the emulator's seeded [`FaultyLink`] (one per direction).
//!
//! This kernel has no netem and no iptables, so the campaign
//! (`ci/suites/45-netns-faults.sh`) puts clients, this proxy and the board
//! in separate network namespaces joined by veth pairs; clients send to the
//! proxy, which relays each client's packets to the board from a socket of
//! its own (so the board sees one source per client) and relays the
//! answers back. It also counts what crosses it, by parsing Clio headers:
//! requests, retries, NACKs, duplicates answered from the dedup buffer,
//! RESTARTED answers.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio_emu::faults::FaultStats;
use clio_emu::{FaultConfig, FaultyLink};
use clio_wire::clio::{flags, RESPONSE_BIT};
use clio_wire::{Opcode, Packet, Status};

/// What crossed the proxy, per direction and by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// Clients seen (distinct source addresses).
    pub clients: u64,
    /// Request packets from clients that were first attempts (`retry_of == 0`).
    pub requests: u64,
    /// Request packets from clients that were retries (`retry_of != 0`).
    pub retries: u64,
    /// Packets from clients that are not Clio requests (too short, ...).
    pub other_up: u64,
    /// Packets from the board.
    pub responses: u64,
    /// Of those, NACKs.
    pub nacks: u64,
    /// Of those, answers replayed from the dedup buffer (flag DUPLICATE).
    pub replayed: u64,
    /// Of those, RESTARTED answers.
    pub restarted: u64,
    /// Of those, BUSY answers.
    pub busy: u64,
    /// Faults injected on packets towards the board.
    pub to_board: FaultStats,
    /// Faults injected on packets towards the clients.
    pub to_client: FaultStats,
}

impl ProxyStats {
    /// `key=value` lines (for the suite's log and README numbers).
    pub fn lines(&self) -> String {
        let f = |name: &str, s: &FaultStats| {
            format!(
                "{name}.offered={}\n{name}.dropped={}\n{name}.duplicated={}\n{name}.corrupted={}\n{name}.reordered={}\n",
                s.offered, s.dropped, s.duplicated, s.corrupted, s.reordered
            )
        };
        format!(
            "clients={}\nrequests={}\nretries={}\nother_up={}\nresponses={}\nnacks={}\nreplayed={}\nrestarted={}\nbusy={}\n{}{}",
            self.clients,
            self.requests,
            self.retries,
            self.other_up,
            self.responses,
            self.nacks,
            self.replayed,
            self.restarted,
            self.busy,
            f("to_board", &self.to_board),
            f("to_client", &self.to_client)
        )
    }
}

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Where clients send.
    pub listen: SocketAddr,
    /// The board.
    pub board: SocketAddr,
    /// Address the per-client upstream sockets bind to (port 0).
    pub upstream_bind: SocketAddr,
    /// Faults on packets towards the board.
    pub to_board: FaultConfig,
    /// Faults on packets towards the clients.
    pub to_client: FaultConfig,
}

/// A packet waiting in a link: which client it belongs to.
type ClientAddr = SocketAddr;

struct State {
    start: Instant,
    up: FaultyLink<ClientAddr>,
    down: FaultyLink<ClientAddr>,
    upstream: HashMap<ClientAddr, Arc<UdpSocket>>,
    stats: ProxyStats,
}

impl State {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running proxy.
pub struct Proxy {
    shared: Arc<Shared>,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("addr", &self.addr).finish()
    }
}

/// How long a blocked socket read waits before checking for stop.
const POLL: Duration = Duration::from_millis(50);

fn count_up(stats: &mut ProxyStats, pkt: &[u8]) {
    match Packet::new_checked(pkt) {
        Ok(p) if p.opcode_raw() & RESPONSE_BIT == 0 => {
            if p.retry_of() == 0 {
                stats.requests += 1;
            } else {
                stats.retries += 1;
            }
        }
        _ => stats.other_up += 1,
    }
}

fn count_down(stats: &mut ProxyStats, pkt: &[u8]) {
    stats.responses += 1;
    let Ok(p) = Packet::new_checked(pkt) else {
        return;
    };
    if p.opcode_raw() == Opcode::Nack.raw() {
        stats.nacks += 1;
    }
    if p.flags() & flags::DUPLICATE != 0 {
        stats.replayed += 1;
    }
    if p.status_raw() == Status::Restarted.raw() {
        stats.restarted += 1;
    }
    if p.status_raw() == Status::Busy.raw() {
        stats.busy += 1;
    }
}

impl Proxy {
    /// Bind and start relaying.
    pub fn start(cfg: ProxyConfig) -> std::io::Result<Proxy> {
        let listen = Arc::new(UdpSocket::bind(cfg.listen)?);
        listen.set_read_timeout(Some(POLL))?;
        let addr = listen.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                start: Instant::now(),
                up: FaultyLink::new(cfg.to_board),
                down: FaultyLink::new(cfg.to_client),
                upstream: HashMap::new(),
                stats: ProxyStats::default(),
            }),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let mut threads = Vec::new();
        // Client side: take packets, open an upstream socket per new client.
        {
            let shared = shared.clone();
            let listen = listen.clone();
            let cfg = cfg.clone();
            threads.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut readers = Vec::new();
                while !shared.stop.load(Ordering::Relaxed) {
                    let (n, from) = match listen.recv_from(&mut buf) {
                        Ok(x) => x,
                        Err(_) => continue,
                    };
                    let mut st = shared.lock();
                    if let Entry::Vacant(slot) = st.upstream.entry(from) {
                        let Some(sock) = open_upstream(&cfg) else {
                            continue;
                        };
                        slot.insert(sock.clone());
                        st.stats.clients += 1;
                        let shared = shared.clone();
                        readers.push(std::thread::spawn(move || {
                            board_reader(&shared, &sock, from)
                        }));
                    }
                    count_up(&mut st.stats, &buf[..n]);
                    let now = st.now();
                    st.up.push(now, from, &buf[..n]);
                    drop(st);
                    shared.wake.notify_all();
                }
                for r in readers {
                    let _ = r.join();
                }
            }));
        }
        // Delivery: send every packet whose time has come, sleep until the next.
        {
            let shared = shared.clone();
            threads.push(std::thread::spawn(move || {
                let mut st = shared.lock();
                while !shared.stop.load(Ordering::Relaxed) {
                    let now = st.now();
                    while let Some((client, bytes)) = st.up.pop_due(now) {
                        if let Some(s) = st.upstream.get(&client) {
                            let _ = s.send(&bytes);
                        }
                    }
                    while let Some((client, bytes)) = st.down.pop_due(now) {
                        let _ = listen.send_to(&bytes, client);
                    }
                    let next = [st.up.next_due(), st.down.next_due()]
                        .into_iter()
                        .flatten()
                        .min();
                    let wait = match next {
                        Some(t) => Duration::from_nanos(t.saturating_sub(st.now())),
                        None => POLL,
                    };
                    st = shared
                        .wake
                        .wait_timeout(st, wait.min(POLL))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }));
        }
        Ok(Proxy {
            shared,
            addr,
            threads,
        })
    }

    /// Where clients send.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters so far.
    pub fn stats(&self) -> ProxyStats {
        let st = self.shared.lock();
        ProxyStats {
            to_board: st.up.stats(),
            to_client: st.down.stats(),
            ..st.stats
        }
    }

    /// Stop relaying (packets still held are dropped) and return the counters.
    pub fn stop(mut self) -> ProxyStats {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.stats()
    }
}

/// A socket towards the board for one client (so the board sees one
/// source per client).
fn open_upstream(cfg: &ProxyConfig) -> Option<Arc<UdpSocket>> {
    let sock = UdpSocket::bind(cfg.upstream_bind).ok()?;
    sock.connect(cfg.board).ok()?;
    sock.set_read_timeout(Some(POLL)).ok()?;
    Some(Arc::new(sock))
}

/// Board side of one client: answers go into the client-bound link.
fn board_reader(shared: &Shared, sock: &UdpSocket, client: ClientAddr) {
    let mut buf = vec![0u8; 65536];
    while !shared.stop.load(Ordering::Relaxed) {
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            // Timeouts (to check stop) and ICMP refusals while the board is down.
            Err(_) => continue,
        };
        let mut st = shared.lock();
        count_down(&mut st.stats, &buf[..n]);
        let now = st.now();
        st.down.push(now, client, &buf[..n]);
        drop(st);
        shared.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_wire::Header;

    /// A board stand-in that answers every packet with its response opcode.
    fn echo_board() -> (SocketAddr, Arc<AtomicBool>, JoinHandle<u64>) {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(POLL)).unwrap();
        let addr = s.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let h = std::thread::spawn(move || {
            let mut n = 0;
            let mut buf = [0u8; 2048];
            while !st.load(Ordering::Relaxed) {
                if let Ok((len, from)) = s.recv_from(&mut buf) {
                    n += 1;
                    let mut b = buf[..len].to_vec();
                    b[1] |= RESPONSE_BIT;
                    let mut p = Packet::new_unchecked(&mut b[..]);
                    p.fill_crc();
                    let _ = s.send_to(&b, from);
                }
            }
            n
        });
        (addr, stop, h)
    }

    fn request(id: u32, retry_of: u32) -> Vec<u8> {
        Header {
            retry_of,
            ..Header::request(Opcode::Read, 1, id, 0, 8)
        }
        .encode(&[])
        .unwrap()
    }

    fn proxy(board: SocketAddr, up: &str, down: &str) -> Proxy {
        Proxy::start(ProxyConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            board,
            upstream_bind: "127.0.0.1:0".parse().unwrap(),
            to_board: FaultConfig::parse(up).unwrap(),
            to_client: FaultConfig::parse(down).unwrap(),
        })
        .unwrap()
    }

    #[test]
    fn relays_both_ways_and_counts_requests_and_retries() {
        let (board, stop, h) = echo_board();
        let p = proxy(board, "", "");
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        for (id, retry) in [(1, 0), (2, 0), (3, 2)] {
            c.send_to(&request(id, retry), p.addr()).unwrap();
            let mut b = [0u8; 512];
            let n = c.recv(&mut b).unwrap();
            let got = Packet::new_checked(&b[..n]).unwrap();
            assert_eq!(got.req_id(), id);
            assert_eq!(got.opcode_raw(), Opcode::ReadResp.raw());
        }
        let s = p.stop();
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 3);
        assert_eq!(
            (s.clients, s.requests, s.retries, s.responses),
            (1, 2, 1, 3)
        );
        assert_eq!(s.to_board.offered, 3);
        assert_eq!(s.to_client.dropped, 0);
    }

    #[test]
    fn injects_duplicates_and_corruption_with_its_seed() {
        let (board, stop, h) = echo_board();
        let p = proxy(board, "dup=1,seed=3", "corrupt=1,seed=4");
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.send_to(&request(9, 0), p.addr()).unwrap();
        // Two copies reach the board, two corrupted answers come back.
        for _ in 0..2 {
            let mut b = [0u8; 512];
            let n = c.recv(&mut b).unwrap();
            let got = Packet::new_checked(&b[..n]).unwrap();
            assert!(got.verify_crc().is_err(), "the answer was corrupted");
        }
        let s = p.stop();
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 2);
        assert_eq!(s.to_board.duplicated, 1);
        assert_eq!(s.to_client.corrupted, 2);
    }

    #[test]
    fn drops_everything_at_loss_one() {
        let (board, stop, h) = echo_board();
        let p = proxy(board, "drop=1,seed=5", "");
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        for id in 1..=20 {
            c.send_to(&request(id, 0), p.addr()).unwrap();
        }
        // Wait until the proxy has taken all 20 (an event, not a sleep).
        let t0 = Instant::now();
        while p.stats().to_board.offered < 20 {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "proxy took no packets"
            );
            std::thread::yield_now();
        }
        let s = p.stop();
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 0);
        assert_eq!(s.to_board.dropped, 20);
        assert_eq!(s.responses, 0);
    }
}
