//! Choosing the SDK's backend by address: `udp://HOST:PORT` (or a bare
//! `HOST:PORT`) for a board on the network, `xdma:///dev/xdma0` for an Alveo
//! card through the XDMA driver's nodes (or an emulated card's stand-in files).
//!
//! ```no_run
//! let t = clio_xdma::connect("xdma:///dev/xdma0")?;
//! let s = clio::Session::open_with(t, clio::ClientConfig::default())?;
//! # Ok::<(), clio::ClioError>(())
//! ```

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use clio::backend::{Transport, UdpTransport};
use clio::ClioError;

use crate::XdmaLink;

/// A board address: which backend, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardAddr {
    /// A board on the network (UDP/IPv4).
    Udp(SocketAddr),
    /// A card's XDMA node prefix (`/dev/xdma0`).
    Xdma(PathBuf),
}

impl fmt::Display for BoardAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardAddr::Udp(a) => write!(f, "udp://{a}"),
            BoardAddr::Xdma(p) => write!(f, "xdma://{}", p.display()),
        }
    }
}

impl FromStr for BoardAddr {
    type Err = String;

    /// `udp://HOST:PORT`, `HOST:PORT`, or `xdma://PATH` (an absolute path, so
    /// `xdma:///dev/xdma0`). The error says which form was expected.
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_prefix("xdma://") {
            if !p.starts_with('/') {
                return Err(format!(
                    "'{s}': an xdma address names the node prefix by absolute path, e.g. xdma:///dev/xdma0"
                ));
            }
            return Ok(BoardAddr::Xdma(PathBuf::from(p)));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            if scheme != "udp" {
                return Err(format!(
                    "'{s}': unknown scheme '{scheme}' (udp://HOST:PORT or xdma:///dev/xdmaN)"
                ));
            }
        }
        let hp = s.strip_prefix("udp://").unwrap_or(s);
        hp.to_socket_addrs()
            .map_err(|e| format!("'{s}' is not udp://HOST:PORT: {e}"))?
            .next()
            .map(BoardAddr::Udp)
            .ok_or_else(|| format!("'{s}' resolves to no address"))
    }
}

/// The transport an address selects.
#[derive(Debug)]
pub enum AnyTransport {
    /// Over UDP.
    Udp(UdpTransport),
    /// Over PCIe, through an Alveo card's rings.
    Xdma(Box<XdmaLink>),
}

impl AnyTransport {
    /// Connect to `addr` (for XDMA: open and probe the card).
    pub fn connect(addr: &BoardAddr) -> Result<AnyTransport, ClioError> {
        Ok(match addr {
            BoardAddr::Udp(a) => AnyTransport::Udp(UdpTransport::connect(*a)?),
            BoardAddr::Xdma(p) => AnyTransport::Xdma(Box::new(XdmaLink::open(p)?)),
        })
    }
}

/// Parse `addr` ([`BoardAddr`]) and connect to it.
pub fn connect(addr: &str) -> Result<AnyTransport, ClioError> {
    let a: BoardAddr = addr.parse().map_err(ClioError::Transport)?;
    AnyTransport::connect(&a)
}

impl Transport for AnyTransport {
    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        match self {
            AnyTransport::Udp(t) => t.send(pkt),
            AnyTransport::Xdma(t) => Transport::send(t.as_mut(), pkt),
        }
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        match self {
            AnyTransport::Udp(t) => t.recv(buf, deadline),
            AnyTransport::Xdma(t) => Transport::recv(t.as_mut(), buf, deadline),
        }
    }

    fn try_recv(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ClioError> {
        match self {
            AnyTransport::Udp(t) => t.try_recv(buf),
            AnyTransport::Xdma(t) => Transport::try_recv(t.as_mut(), buf),
        }
    }

    fn flush(&mut self) -> Result<(), ClioError> {
        match self {
            AnyTransport::Udp(t) => t.flush(),
            AnyTransport::Xdma(t) => Transport::flush(t.as_mut()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_choose_the_backend_and_bad_ones_say_what_is_expected() {
        assert_eq!(
            "udp://127.0.0.1:47700".parse::<BoardAddr>().unwrap(),
            BoardAddr::Udp("127.0.0.1:47700".parse().unwrap())
        );
        assert_eq!(
            "127.0.0.1:9".parse::<BoardAddr>().unwrap(),
            BoardAddr::Udp("127.0.0.1:9".parse().unwrap())
        );
        let x = "xdma:///dev/xdma0".parse::<BoardAddr>().unwrap();
        assert_eq!(x, BoardAddr::Xdma("/dev/xdma0".into()));
        assert_eq!(x.to_string(), "xdma:///dev/xdma0");
        assert!("xdma://dev/xdma0"
            .parse::<BoardAddr>()
            .unwrap_err()
            .contains("absolute"));
        assert!("tcp://1.2.3.4:5"
            .parse::<BoardAddr>()
            .unwrap_err()
            .contains("unknown scheme"));
        assert!("nonsense".parse::<BoardAddr>().is_err());
        let e = connect("xdma:///nonexistent/xdma9").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/xdma9_user"), "{e}");
    }
}
