//! [`XdmaLink`] as a datagram transport of the host SDK, so a
//! `clio::Session` runs over PCIe unchanged.

use std::time::Instant;

use clio::backend::Transport;
use clio::ClioError;

use crate::{XdmaError, XdmaLink};

impl From<XdmaError> for ClioError {
    fn from(e: XdmaError) -> Self {
        ClioError::Transport(e.to_string())
    }
}

impl Transport for XdmaLink {
    /// `xdma://<prefix>`, as `clio bringup` names a card.
    fn peer(&self) -> Option<String> {
        Some(format!("xdma://{}", self.device().prefix().display()))
    }

    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        XdmaLink::send(self, pkt).map_err(ClioError::from)
    }

    /// Malformed slots and packets larger than `buf` are dropped (counted
    /// in [`XdmaLink::stats`]), as the trait asks: loss is the protocol
    /// layer's business.
    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        loop {
            match self.recv_until(buf, deadline) {
                Err(e) if e.is_slot_local() => continue,
                r => return r.map_err(ClioError::from),
            }
        }
    }
}
