//! Cross-component tests: the host SDK (`clio`) against the emulated memory
//! board (`clio-emu`: fast-path model plus the slow-path library) over real
//! UDP sockets on loopback, with the emulator's fault injection.
//!
//! This library holds the fixtures the tests in `tests/` share: a served
//! board whose counters stay readable while it runs, client settings that
//! tolerate a loaded debug build, and reproducible data patterns. The
//! `clio-e2e-worker` binary is a second process driving the same board.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use clio::backend::UdpTransport;
use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::server::ServeStats;
use clio_emu::{Board, BoardStats, ClientId, Engine, ServeOptions, ServerHandle};

/// The embedded emulator board config (4 MiB default pages).
pub fn emulator_config() -> BoardConfig {
    BoardConfig::embedded("emulator").expect("the embedded emulator config loads")
}

/// A board engine shared between the server thread and the test, so the
/// test can read the board's counters while it serves.
#[derive(Debug, Clone)]
pub struct SharedBoard(pub Arc<Mutex<Board>>);

impl SharedBoard {
    fn lock(&self) -> MutexGuard<'_, Board> {
        // A panic inside the board poisons the lock; the board state is
        // still what the test wants to inspect.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Engine for SharedBoard {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        self.lock().handle(from, packet, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        Engine::poll(&mut *self.lock(), out)
    }
    fn start(&mut self) {
        Engine::start(&mut *self.lock())
    }
    fn pump(&mut self, max: usize, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        Engine::pump(&mut *self.lock(), max, out)
    }
    fn owed_bytes(&self) -> u64 {
        Engine::owed_bytes(&*self.lock())
    }
}

/// An emulated board served over UDP on loopback.
#[derive(Debug)]
pub struct ServedBoard {
    /// The board's configuration.
    pub cfg: BoardConfig,
    board: SharedBoard,
    server: ServerHandle,
}

impl ServedBoard {
    /// Build a board from `cfg` and serve it on an ephemeral loopback port.
    pub fn start(cfg: BoardConfig, opts: ServeOptions) -> ServedBoard {
        let board = Board::new(&cfg).unwrap_or_else(|e| panic!("board {}: {e}", cfg.board.name));
        let board = SharedBoard(Arc::new(Mutex::new(board)));
        let bind: SocketAddr = ([127, 0, 0, 1], 0).into();
        let server = clio_emu::spawn(board.clone(), bind, opts).expect("bind a loopback port");
        ServedBoard { cfg, board, server }
    }

    /// The default emulator board without faults.
    pub fn emulator() -> ServedBoard {
        ServedBoard::start(emulator_config(), ServeOptions::default())
    }

    /// Where clients send.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The board's counters now. Every request a client has seen answered
    /// is counted: the server sends responses after the engine returns.
    pub fn stats(&self) -> BoardStats {
        self.board.lock().stats()
    }

    /// Default page size of the board.
    pub fn page(&self) -> u64 {
        self.cfg.pages.default_size
    }

    /// Client settings for this board (see [`client_config`]).
    pub fn client(&self) -> ClientConfig {
        client_config(&self.cfg)
    }

    /// Open a blocking session in a new address space.
    pub fn session(&self) -> Session<UdpTransport> {
        Session::open(self.addr(), self.client())
            .unwrap_or_else(|e| panic!("open a session (new address space): {e}"))
    }

    /// Open a blocking session in the address space of `other`.
    pub fn join(&self, other: &Session<UdpTransport>) -> Session<UdpTransport> {
        let token = other.share().expect("the other session is open");
        Session::join(self.addr(), token, self.client())
            .unwrap_or_else(|e| panic!("join PID {}: {e}", token.pid))
    }

    /// Stop serving; the server thread's counters. Fails if the server
    /// thread died (a panic in the board).
    pub fn stop(self) -> std::io::Result<ServeStats> {
        self.server.stop()
    }
}

/// Client settings from the board config, adjusted for a debug build on a
/// loaded machine over a link whose injected delays the kernel rounds up to
/// timer ticks (milliseconds, not microseconds):
/// a request deadline and retry budget wider than the board config's
/// (1 s, 8 retries), which are meant for an unloaded link; a lost packet
/// still costs only an RTO, so lossy tests stay fast. Congestion control
/// uses the SDK's board-derived defaults.
pub fn client_config(cfg: &BoardConfig) -> ClientConfig {
    ClientConfig {
        request_timeout_ns: 20_000_000_000,
        retry_budget: 64,
        ..ClientConfig::from_board(cfg)
    }
}

/// `len` bytes that differ with `seed` and with position (period 251, a
/// prime, so shifted copies never coincide with the page or MTU sizes).
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let s = (seed % 251) as usize;
    (0..len)
        .map(|i| ((i + s) % 251) as u8 ^ (seed >> 8) as u8)
        .collect()
}

/// Index of the first differing byte, for readable assertion messages.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// A small deterministic generator for reproducible workloads (the fault
/// injector's SplitMix64); the tests print their seed.
#[derive(Debug, Clone)]
pub struct Rng(clio_emu::faults::SplitMix64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(clio_emu::faults::SplitMix64::new(seed))
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `percent / 100`.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// Fill `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
    }
}

/// The seed of a randomized test: `CLIO_E2E_SEED` if set (to replay a
/// failure), else `default`. Printed so a failing run names it.
pub fn seed(default: u64) -> u64 {
    let s = std::env::var("CLIO_E2E_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    println!("seed = {s} (replay with CLIO_E2E_SEED={s})");
    s
}
