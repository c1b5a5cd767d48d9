//! The emulated board behind the SDK's in-process backend (feature `sdk`).
//!
//! The SDK never depends on the emulator (README, "Crate order"), so the
//! adapter lives here, above both: [`Emu`] hands each request packet of an
//! in-process session to a [`Board`] and passes the session the answers
//! addressed to it. Tests and tools that run SDK clients against an
//! emulated board without sockets use it instead of writing their own.

use clio::backend::{InProcess, InProcessBoard};
use clio::{ClientConfig, ClioError, Session};

use crate::Board;

/// A [`Board`] as the SDK's [`InProcessBoard`]: requests are handled
/// within the call (the board finishes the slow-path work a packet gives
/// it before returning), and only answers to the calling client reach it.
#[derive(Debug)]
pub struct Emu(pub Board);

impl InProcessBoard for Emu {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        // Answers to other clients (there are none on this path) are not
        // this session's.
        self.0.handle(from, pkt, &mut |to, p| {
            if to == from {
                out(p)
            }
        })
    }
}

impl From<Board> for Emu {
    fn from(b: Board) -> Self {
        Emu(b)
    }
}

/// The SDK's in-process transport to `board`, as client `client`.
pub fn in_process(board: Board, client: u64) -> InProcess<Emu> {
    InProcess::new(Emu(board), client)
}

/// A session (a new address space) on `board`, in process, configured for
/// `board`'s config.
pub fn session(board: Board, cfg: ClientConfig) -> Result<Session<InProcess<Emu>>, ClioError> {
    Session::open_with(in_process(board, 1), cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_config::BoardConfig;

    /// A session through the adapter allocates, writes and reads back.
    #[test]
    fn a_session_runs_on_the_adapted_board() {
        let cfg = BoardConfig::embedded("emulator").unwrap();
        let mut s = session(Board::new(&cfg).unwrap(), ClientConfig::from_board(&cfg)).unwrap();
        let al = s.ralloc(8192, clio_wire::payload::perms::RW).unwrap();
        s.rwrite(al.va + 4090, b"across a page").unwrap();
        let mut b = [0u8; 13];
        s.rread(al.va + 4090, &mut b).unwrap();
        assert_eq!(&b, b"across a page");
    }
}
