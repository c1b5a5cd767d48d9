//! UDP backend: one connected socket per session.
//!
//! Receiving busy-polls a non-blocking socket for a short spin period (as
//! CLib polls its NIC), then blocks with a read timeout set to the
//! protocol's next deadline. The timeout is re-set only when the deadline
//! moves by more than an eighth of it, so steady traffic costs one
//! `recv` per packet and nothing more.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use super::Transport;
use crate::ClioError;

/// A UDP socket connected to one board's `ip:port`.
#[derive(Debug)]
pub struct UdpTransport {
    sock: UdpSocket,
    timeout: Option<Duration>,
    nonblocking: bool,
    spin: Duration,
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
        let mut t = UdpTransport {
            sock,
            timeout: None,
            nonblocking: false,
            spin: Duration::ZERO,
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

impl Transport for UdpTransport {
    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        match self.sock.send(pkt) {
            Ok(_) => Ok(()),
            // An ICMP "port unreachable" from an earlier packet: that packet
            // was lost; the protocol retries and reports a timeout.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(ClioError::Transport(format!("send: {e}"))),
        }
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        let spin_until = Instant::now() + self.spin;
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
            match self.sock.recv(buf) {
                Ok(n) => {
                    if !self.spin.is_zero() {
                        self.set_nonblocking(true)?;
                    }
                    return Ok(Some(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && self.nonblocking => {
                    if now >= deadline {
                        return Ok(None);
                    }
                    if now < spin_until {
                        std::hint::spin_loop();
                    } else {
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
