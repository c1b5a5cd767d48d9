//! Emulated boards for the tests: in process (no sockets) and over UDP.

#![allow(dead_code)]

use clio::backend::{InProcess, UdpTransport};
use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
pub use clio_emu::sdk::Emu;
use clio_emu::{Board, ServeOptions, ServerHandle};

/// The embedded emulator config.
pub fn cfg() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

/// A session on a fresh in-process board.
pub fn in_process() -> Session<InProcess<Emu>> {
    let c = cfg();
    let board = Board::new(&c).unwrap();
    Session::open_with(InProcess::new(Emu(board), 1), ClientConfig::from_board(&c)).unwrap()
}

/// A fresh board served over UDP on loopback.
pub fn udp_board() -> ServerHandle {
    let c = cfg();
    clio_emu::spawn(
        Board::new(&c).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&c),
    )
    .unwrap()
}

/// A session over UDP to `server`.
pub fn udp_session(server: &ServerHandle) -> Session<UdpTransport> {
    Session::open(server.addr(), ClientConfig::from_board(&cfg())).unwrap()
}
