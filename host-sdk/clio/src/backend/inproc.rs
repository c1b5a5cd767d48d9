//! In-process backend: a board engine called directly, no sockets.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::Transport;
use crate::ClioError;

/// A board engine that takes request packets and emits response packets.
///
/// `from` names the sending client (as a UDP source address would), so one
/// engine can serve several sessions. The emulator implements this on its
/// side of the crate order (`clio_emu::sdk::Emu`, feature `sdk` of
/// `clio-emu`); this SDK does not depend on it.
pub trait InProcessBoard {
    /// Handle one request packet; call `out` once per response packet.
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8]));
}

impl<B: InProcessBoard + ?Sized> InProcessBoard for Box<B> {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        (**self).handle(from, pkt, out)
    }
}

/// A board shared by several sessions (possibly on several threads).
#[derive(Debug)]
pub struct SharedBoard<B>(pub Arc<Mutex<B>>);

impl<B> Clone for SharedBoard<B> {
    fn clone(&self) -> Self {
        SharedBoard(Arc::clone(&self.0))
    }
}

impl<B: InProcessBoard> InProcessBoard for SharedBoard<B> {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        // A poisoned lock means another session panicked inside the board;
        // its state is still the board's best, so keep serving.
        let mut b = self.0.lock().unwrap_or_else(|p| p.into_inner());
        b.handle(from, pkt, out)
    }
}

/// Transport that hands packets to an [`InProcessBoard`] and queues its
/// answers; buffers are reused.
#[derive(Debug)]
pub struct InProcess<B> {
    board: B,
    from: u64,
    queue: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

impl<B: InProcessBoard> InProcess<B> {
    /// Talk to `board` as client `from`.
    pub fn new(board: B, from: u64) -> Self {
        InProcess {
            board,
            from,
            queue: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// The board (e.g. to inspect it in tests).
    pub fn board(&mut self) -> &mut B {
        &mut self.board
    }
}

impl<B: InProcessBoard> Transport for InProcess<B> {
    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        let (queue, spare) = (&mut self.queue, &mut self.spare);
        self.board.handle(self.from, pkt, &mut |r| {
            let mut b = spare.pop().unwrap_or_default();
            b.clear();
            b.extend_from_slice(r);
            queue.push_back(b);
        });
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        if let Some(n) = self.try_recv(buf)? {
            return Ok(Some(n));
        }
        // The board answers synchronously: with nothing queued, nothing will
        // arrive before the deadline (the board dropped the packet).
        let now = Instant::now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        }
        Ok(None)
    }

    fn try_recv(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ClioError> {
        while let Some(p) = self.queue.pop_front() {
            let n = p.len();
            let fits = n <= buf.len();
            if fits {
                buf[..n].copy_from_slice(&p);
            }
            self.spare.push(p);
            if fits {
                return Ok(Some(n));
            }
        }
        Ok(None)
    }
}
