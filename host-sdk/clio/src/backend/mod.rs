//! Layer 2: datagram transports under the protocol state machine.
//!
//! A backend only moves whole Clio packets: [`Transport::send`] one (it may
//! queue it until [`Transport::flush`]), and [`Transport::recv`] one with a
//! deadline. Loss, corruption and reordering
//! are the protocol layer's business.
//!
//! - [`UdpTransport`]: one connected `std::net::UdpSocket` per session.
//! - [`InProcess`]: calls a board engine in the same process through the
//!   [`InProcessBoard`] trait (the SDK never depends on the emulator; the
//!   emulator's feature `sdk` adapts its board, `clio_emu::sdk::Emu`).

mod inproc;
mod udp;

use std::time::Instant;

pub use inproc::{InProcess, InProcessBoard, SharedBoard};
pub use udp::UdpTransport;

use crate::ClioError;

/// A datagram transport to one memory node.
pub trait Transport {
    /// Send one packet. A packet the network loses is not an error.
    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError>;

    /// Receive one packet into `buf`, waiting until `deadline` at most;
    /// `Ok(None)` when the deadline passed first. Packets longer than `buf`
    /// are dropped.
    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError>;

    /// Receive one packet only if it is already waiting (never blocks);
    /// the default asks [`Transport::recv`] with a deadline of now.
    fn try_recv(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ClioError> {
        self.recv(buf, Instant::now())
    }

    /// Hand every packet [`Transport::send`] queued to the network. A
    /// transport that batches sends flushes here and before it blocks in
    /// [`Transport::recv`]; the default sends at once and has nothing to do.
    fn flush(&mut self) -> Result<(), ClioError> {
        Ok(())
    }

    /// The board's address as errors name it (`udp://ip:port`); `None`
    /// (the default) for a transport without one.
    fn peer(&self) -> Option<String> {
        None
    }
}
