//! UDP backend: one connected socket per session.
//!
//! Receiving busy-polls a non-blocking socket for a short spin period (as
//! CLib polls its NIC), yielding the CPU between two polls, then blocks with a read timeout set to the
//! protocol's next deadline. A yield that came back late (another thread
//! held the CPU for its slice) stops the polling for a while (`crate::spin`). The timeout is re-set only when the deadline
//! moves by more than an eighth of it. Datagrams move in batches
//! (`recvmmsg`/`sendmmsg` through `clio-mmsg`): one receive takes in every
//! answer already waiting, and the sends of one protocol step leave in one
//! call at [`Transport::flush`], so steady pipelined traffic costs well under
//! one system call per packet.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use clio_mmsg::{RecvBatch, Wait};

use super::Transport;
use crate::proto::MAX_DATAGRAM;
use crate::ClioError;

/// Datagrams taken in per receive call.
const RECV_SLOTS: usize = 8;
/// Socket receive buffer asked for (bytes).
const RECV_BUFFER: usize = 4 << 20;
/// Sends queued before a flush is forced.
const SEND_BATCH: usize = 32;

/// A UDP socket connected to one board's `ip:port`.
#[derive(Debug)]
pub struct UdpTransport {
    sock: UdpSocket,
    timeout: Option<Duration>,
    nonblocking: bool,
    spin: Duration,
    batch: RecvBatch,
    /// Next datagram of `batch` not yet handed out.
    next: usize,
    /// Queued sends (buffers reused), to the connected board.
    sendq: clio_mmsg::SendQueue,
    /// Whether a receive may poll (yielding) first (`crate::spin`).
    guard: crate::spin::SpinGuard,
}

/// Default busy-poll period before a receive blocks.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

impl UdpTransport {
    /// Bind an ephemeral local port and connect it to `board`.
    pub fn connect(board: SocketAddr) -> Result<UdpTransport, ClioError> {
        let local: SocketAddr = if board.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let sock = UdpSocket::bind(local)
            .map_err(|e| ClioError::Transport(format!("bind {local}: {e}")))?;
        sock.connect(board)
            .map_err(|e| ClioError::Transport(format!("connect {board}: {e}")))?;
        // Room for a window of answers while this thread is descheduled;
        // the kernel caps the request, and a smaller buffer only costs
        // retransmissions, so a refusal is not an error.
        let _ = clio_mmsg::grow_recv_buffer(&sock, RECV_BUFFER);
        let mut t = UdpTransport {
            sock,
            timeout: None,
            nonblocking: false,
            spin: Duration::ZERO,
            batch: RecvBatch::new(RECV_SLOTS, MAX_DATAGRAM),
            next: 0,
            sendq: clio_mmsg::SendQueue::new(),
            guard: crate::spin::SpinGuard::default(),
        };
        t.set_spin(DEFAULT_SPIN)?;
        Ok(t)
    }

    /// Busy-poll this long before blocking (zero: always block).
    pub fn set_spin(&mut self, spin: Duration) -> Result<(), ClioError> {
        self.spin = spin;
        self.set_nonblocking(!spin.is_zero())
    }

    fn set_nonblocking(&mut self, on: bool) -> Result<(), ClioError> {
        if self.nonblocking != on {
            self.sock.set_nonblocking(on)?;
            self.nonblocking = on;
        }
        Ok(())
    }

    /// The local address (the board answers to it).
    pub fn local_addr(&self) -> Result<SocketAddr, ClioError> {
        Ok(self.sock.local_addr()?)
    }

    /// Set the socket's read timeout only when the needed wait is shorter
    /// than the one in force, or much longer: one syscall per change, not
    /// per receive. Waking early is harmless (the caller loops).
    fn arm(&mut self, wait: Duration) -> io::Result<()> {
        let wait = wait.max(Duration::from_micros(1));
        let rearm = match self.timeout {
            None => true,
            Some(cur) => wait + cur / 8 < cur || wait > cur * 4,
        };
        if rearm {
            self.sock.set_read_timeout(Some(wait))?;
            self.timeout = Some(wait);
        }
        Ok(())
    }
}

impl UdpTransport {
    /// The next datagram of the last batch that fits `buf`, copied there.
    fn take_buffered(&mut self, buf: &mut [u8]) -> Option<usize> {
        while self.next < self.batch.len() {
            let i = self.next;
            self.next += 1;
            // Too long for the slot or for `buf`: dropped, as documented.
            if let Some((d, _)) = self.batch.get(i) {
                if let Some(dst) = buf.get_mut(..d.len()) {
                    dst.copy_from_slice(d);
                    return Some(d.len());
                }
            }
        }
        None
    }
}

impl Transport for UdpTransport {
    fn peer(&self) -> Option<String> {
        self.sock.peer_addr().ok().map(|a| format!("udp://{a}"))
    }

    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        self.sendq.push(pkt, None);
        if self.sendq.len() >= SEND_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ClioError> {
        let pkts = self.sendq.queued();
        let mut at = 0;
        while at < pkts.len() {
            match clio_mmsg::send_batch(&self.sock, &pkts[at..]) {
                Ok(n) => at += n,
                // An ICMP "port unreachable" from an earlier packet, or a
                // full socket buffer: this packet is lost; the protocol
                // retries and reports a timeout.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::WouldBlock
                    ) =>
                {
                    at += 1
                }
                Err(e) => {
                    self.sendq.clear();
                    return Err(ClioError::Transport(format!("send: {e}")));
                }
            }
        }
        self.sendq.clear();
        Ok(())
    }

    fn try_recv(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ClioError> {
        self.flush()?;
        if let Some(n) = self.take_buffered(buf) {
            return Ok(Some(n));
        }
        loop {
            match self.batch.recv(&self.sock, Wait::No) {
                Ok(_) => {
                    self.next = 0;
                    if let Some(n) = self.take_buffered(buf) {
                        return Ok(Some(n));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(ClioError::Transport(format!("recv: {e}"))),
            }
        }
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        // Never wait for an answer to a request still in our queue.
        self.flush()?;
        if let Some(n) = self.take_buffered(buf) {
            return Ok(Some(n));
        }
        let start = Instant::now();
        let spin_until = if self.guard.may_spin(start) {
            start + self.spin
        } else {
            start
        };
        // Even with the deadline passed, look once for a waiting packet.
        let mut tried = false;
        loop {
            let now = Instant::now();
            if !self.nonblocking {
                if now >= deadline && tried {
                    return Ok(None);
                }
                self.arm(deadline.saturating_duration_since(now))?;
            }
            tried = true;
            match self.batch.recv(&self.sock, Wait::ForOne) {
                Ok(_) => {
                    self.next = 0;
                    if !self.spin.is_zero() && self.guard.may_spin(now) {
                        self.set_nonblocking(true)?;
                    }
                    if let Some(n) = self.take_buffered(buf) {
                        return Ok(Some(n));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && self.nonblocking => {
                    if now >= deadline {
                        return Ok(None);
                    }
                    // Yield rather than spin: the board's thread may share
                    // this CPU (an emulated board in process, a loaded
                    // host), and holding the CPU for the whole spin would
                    // delay the very answer awaited. A late yield (another
                    // thread took the CPU for a slice): block instead.
                    if now >= spin_until || !self.guard.yield_now() {
                        self.set_nonblocking(false)?;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                            | io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return Err(ClioError::Transport(format!("recv: {e}"))),
            }
        }
    }
}

impl Drop for UdpTransport {
    fn drop(&mut self) {
        // Best effort: a queued packet (e.g. a final release) still leaves.
        let _ = self.flush();
    }
}
