//! The board engine: the fast-path reference model and the unchanged
//! slow-path library over real rings in emulated board DRAM.
//!
//! This is what the FPGA and the ARM do on a ZCU106, in one process: the
//! fast path answers data requests and forwards alloc/free over the RX ring;
//! the slow path (the same `clio-slowpath` code the firmware links) consumes
//! the RX ring, places VA ranges, keeps the free-PA FIFOs full, and posts
//! PTE writes and replies on the TX ring, which the fast path drains.

use std::time::Duration;

use clio_config::BoardConfig;
use clio_fastpath::{ClientId as FpClient, Dram, FastPath, ModelOptions, Span, ZeroPolicy};

use crate::server::{ClientId, Engine};
use crate::slow::InProcSlowPath;

/// Why a board could not be built, naming the config key or part at fault.
#[derive(Debug)]
pub struct BoardError(pub String);

impl std::fmt::Display for BoardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BoardError {}

/// Counters of the whole board.
#[derive(Debug, Clone, Copy, Default)]
pub struct BoardStats {
    /// Fast-path counters.
    pub fast: clio_fastpath::Stats,
    /// Slow-path dispatcher counters.
    pub slow: clio_slowpath::EngineCounters,
}

/// A fresh per-boot seed for the slow path (its session keys and epoch)
/// from the operating system's randomness (`getrandom(2)`), so every board
/// started, or restarted on the same port, has a new epoch and new keys.
/// If the OS cannot give randomness (never expected on Linux), the clock's
/// nanoseconds and the process id are mixed instead; the board still
/// works, but its keys are then guessable, so this says so on stderr.
pub fn boot_seed() -> u64 {
    let mut b = [0u8; 8];
    match getrandom::getrandom(&mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(e) => {
            eprintln!("clio-emu: no OS randomness ({e}); session keys are guessable");
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            t ^ u64::from(std::process::id()).rotate_left(40)
        }
    }
}

/// An emulated memory board with its slow path in process.
pub struct Board {
    fast: FastPath<Vec<u8>>,
    /// Served, long READ answers leave packet by packet between other
    /// requests ([`Board::set_interleave_reads`]).
    interleave: bool,
    slow: InProcSlowPath,
    rx: Span,
    /// The offload engine behind the fast path's offload port.
    offloads: crate::offload::OffloadEngine,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("fast", &self.fast)
            .finish_non_exhaustive()
    }
}

impl Board {
    /// Build a board from a config: format its DRAM (rings, page table) as
    /// the FPGA does at configuration time, boot the slow path, and fill the
    /// free-PA FIFOs.
    pub fn new(cfg: &BoardConfig) -> Result<Board, BoardError> {
        // The slow path zeroes every freed page before reuse and DRAM starts
        // zeroed, so first-touch faults need not zero (they stay 3 cycles).
        Self::with_options(
            cfg,
            ModelOptions {
                zero_policy: ZeroPolicy::BySlowPath,
                ..ModelOptions::default()
            },
        )
    }

    /// [`Board::new`] with explicit fast-path model options.
    pub fn with_options(cfg: &BoardConfig, opts: ModelOptions) -> Result<Board, BoardError> {
        Self::with_seed(cfg, opts, boot_seed())
    }

    /// [`Board::with_options`] booting the slow path with a given `seed`
    /// (keys and epoch follow from it): for tests that need a reproducible
    /// board. A served board must use [`boot_seed`].
    pub fn with_seed(
        cfg: &BoardConfig,
        opts: ModelOptions,
        seed: u64,
    ) -> Result<Board, BoardError> {
        let dram_len = usize::try_from(cfg.dram.size).map_err(|_| {
            BoardError(format!(
                "dram.size = {}: larger than this host's address space",
                cfg.dram.size
            ))
        })?;
        let fast = FastPath::format(cfg, opts, vec![0u8; dram_len])
            .map_err(|e| BoardError(format!("fast path: {e}")))?;
        let lay = *fast.layout();
        let slow = InProcSlowPath::boot(cfg, &lay, fast.dram(), seed).map_err(BoardError)?;
        let mut b = Board {
            fast,
            interleave: cfg.fastpath.read_streams,
            slow,
            rx: lay.rx_ring,
            offloads: crate::offload::OffloadEngine::new(cfg.dedup.offload_answers as usize),
        };
        // `OFFLOAD_CALL` reaches the offload engine (an unknown id is
        // answered `NO_SUCH_OFFLOAD`, not `UNSUPPORTED`).
        b.fast.attach_offload_port();
        b.settle(&mut |_, _| {});
        Ok(b)
    }

    /// Whether a server serving this board interleaves long READ answers
    /// with other requests at packet granularity (default: the board
    /// config's `fastpath.read_streams`, on unless set false; see
    /// `clio_fastpath::FastPath::set_interleave_reads`). Off, every READ is
    /// answered whole when it is taken in, as the RTL does. Takes effect
    /// when a server starts serving the board; [`Board::handle`] called
    /// directly always answers whole.
    pub fn set_interleave_reads(&mut self, on: bool) {
        self.interleave = on;
    }

    /// The fast-path model (for inspection and benchmarks).
    pub fn fast(&self) -> &FastPath<Vec<u8>> {
        &self.fast
    }

    /// The fast-path model, mutable (the offload engine answers through it).
    pub(crate) fn fast_mut(&mut self) -> &mut FastPath<Vec<u8>> {
        &mut self.fast
    }

    /// Register `offload` under `id` (not 0, not taken): `OFFLOAD_CALL`s
    /// naming `id` reach it. It opens its own session (its own address
    /// space, under the board's quotas) on its first memory access.
    pub fn register_offload(
        &mut self,
        id: u32,
        offload: Box<dyn crate::offload::Offload>,
    ) -> Result<(), BoardError> {
        self.offloads.register(id, offload).map_err(BoardError)
    }

    /// Whether offloads' reads, writes and compare-and-swaps take the fast
    /// path's direct translated access (default on) or go as Clio packets
    /// into it (both check the same translation and permissions; see
    /// `clio_fastpath::FastPath::direct_read`). Off is for comparing the two.
    pub fn set_offload_direct(&mut self, on: bool) {
        self.offloads.set_direct(on);
    }

    /// After a direct access: finish the slow-path work a first-touch fault
    /// gave it, as [`Board::handle_raw`] does after a packet.
    pub(crate) fn after_direct(&mut self, out: &mut dyn FnMut(u64, &[u8])) {
        if self.slow_work_waiting() {
            self.settle(out);
        }
    }

    /// Answers the offload engine remembers for retries at most
    /// (`dedup.offload_answers`).
    #[cfg(test)]
    pub(crate) fn offload_engine_bound(&self) -> usize {
        self.offloads.bound()
    }

    /// The offload engine's counters.
    pub fn offload_counters(&self) -> crate::offload::OffloadCounters {
        self.offloads.counters()
    }

    /// Makes this board a rack memory node as a real board is one: its slow
    /// path runs `agent` (control datagrams reach it over the rings) with the
    /// region gate in the fast path, which gets the agent's gate table size
    /// ([`crate::slow::NODE_GATES`] entries).
    pub fn make_rack_node(&mut self, mut agent: Box<crate::slow::NodeAgent>) {
        let entries = crate::slow::NODE_GATES;
        self.fast.set_gate_entries(entries);
        agent.use_fast_path_gate(entries as u32);
        self.slow.set_rack(agent);
    }

    /// The slow path's rack side, if this board is a rack node.
    pub fn rack(&self) -> Option<&crate::slow::NodeAgent> {
        self.slow.rack()
    }

    /// The rack side, mutable; call [`Board::settle`] after a change so its
    /// gate commands reach the fast path.
    pub fn rack_mut(&mut self) -> Option<&mut crate::slow::NodeAgent> {
        self.slow.rack_mut()
    }

    /// The slow path (sessions, ranges, counters), for inspection.
    pub fn slow(&self) -> &clio_slowpath::SlowPath<'static> {
        self.slow.core()
    }

    /// Expire session `id` on the board's initiative: the slow path closes
    /// it with tag 0 (the fast path clears the entry and answers nobody),
    /// freeing its address space if it was the PID's last session.
    pub fn expire_session(&mut self, id: u16) -> Result<(), clio_slowpath::SlowPathError> {
        self.slow.core_mut().expire_session(id)?;
        // Nobody asked, so nobody is answered.
        self.settle(&mut |_, _| {});
        Ok(())
    }

    /// This boot's epoch, as the slow path posted it to the fast path.
    pub fn epoch(&self) -> u32 {
        self.slow.core().epoch()
    }

    /// Counters.
    pub fn stats(&self) -> BoardStats {
        BoardStats {
            fast: *self.fast.stats(),
            slow: *self.slow.counters(),
        }
    }

    /// One packet from `from`; responses go to `out`. Work the packet gave
    /// the slow path is finished before returning, so a forwarded alloc is
    /// answered within the call, as a pipelined board answers it promptly.
    pub fn handle(&mut self, from: u64, packet: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        self.handle_raw(from, packet, out);
        if self.fast.has_offload_port() {
            // The engine borrows the board for its offloads' own requests,
            // whose answers it takes whole within each call.
            let mut eng = std::mem::take(&mut self.offloads);
            let streaming = self.fast.interleaves_reads();
            self.fast.set_interleave_reads(false);
            while let Some(job) = self.fast.take_offload() {
                eng.serve(self, job, out);
            }
            self.fast.set_interleave_reads(streaming);
            self.offloads = eng;
        }
    }

    /// [`Board::handle`] without serving queued offload calls (the path of
    /// the offloads' own memory requests).
    pub(crate) fn handle_raw(&mut self, from: u64, packet: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
        self.fast.receive(FpClient(from), packet, &mut cb);
        if self.slow_work_waiting() {
            self.settle(out);
        }
    }

    fn slow_work_waiting(&self) -> bool {
        let mem = self.fast.dram();
        let rx = &mem[self.rx.start..self.rx.end];
        let head = clio_wire::ring::RingMemory::load_u32(rx, clio_wire::ring::header_field::HEAD);
        let tail = clio_wire::ring::RingMemory::load_u32(rx, clio_wire::ring::header_field::TAIL);
        head != tail
    }

    /// Run the slow path and the fast path's TX-ring intake until neither
    /// has anything left to do.
    pub fn settle(&mut self, out: &mut dyn FnMut(u64, &[u8])) {
        // Each round moves at least one descriptor or stops; the bound only
        // guards against a livelock bug turning into a hang.
        for _ in 0..1_000_000 {
            let slow_moved = self.slow.step(self.fast.dram_mut());
            let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
            let s = self.fast.poll_rings(&mut cb);
            if !slow_moved && s.commands == 0 {
                return;
            }
        }
    }
}

impl Engine for Board {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        Board::handle(self, from, packet, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.settle(out);
        None
    }
    fn start(&mut self) {
        self.fast.set_interleave_reads(self.interleave);
    }
    fn pump(&mut self, max: usize, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
        let n = self.fast.pump(max, &mut cb);
        // A packet's translation may have taken a first-touch fault.
        if n > 0 && self.slow_work_waiting() {
            self.settle(out);
        }
        n
    }
    fn owed_bytes(&self) -> u64 {
        self.fast.owed_bytes()
    }
}

/// An emulated board whose slow path is the real firmware image running in
/// QEMU's ZynqMP model, sharing board DRAM through a shared-memory file.
pub struct QemuBoard {
    fast: FastPath<crate::qemu::QemuDram>,
    qemu: crate::qemu::QemuSlowPath,
    idle: IdleBackoff,
}

/// How long a QEMU-backed board waits before it looks at the TX ring again.
///
/// The firmware answers forwarded requests asynchronously and cannot signal
/// this process, so the board polls the TX ring. It polls every
/// [`QEMU_POLL`] while anything moves (a packet, a TX descriptor, an answer
/// the slow path still owes, descriptors waiting on the RX ring); each quiet
/// poll doubles the interval up to [`QEMU_POLL_MAX`]. Past the server's spin
/// threshold (2 ms) the server sleeps in the kernel, so a quiet board costs
/// no CPU, and a packet still wakes it at once (only the slow path's own
/// late work waits for the next poll).
#[derive(Debug, Clone, Copy)]
pub struct IdleBackoff {
    interval: Duration,
    /// Forwarded requests whose answer has not come back (approximate:
    /// released fences also count as answers).
    owed: u64,
    forwarded_seen: u64,
    /// When a poll last saw something move.
    last_progress: std::time::Instant,
    /// Something moved (a packet, a TX descriptor, an answer) since the
    /// last interval was chosen.
    progressed: bool,
}

/// Longest the board keeps polling fast for an owed answer without any
/// progress (a slot the firmware rejected is never answered).
const QEMU_OWED_PATIENCE: Duration = Duration::from_secs(1);

/// Longest wait between two polls of a quiet QEMU-backed board.
pub const QEMU_POLL_MAX: Duration = Duration::from_millis(10);

impl IdleBackoff {
    fn new() -> Self {
        IdleBackoff {
            interval: QEMU_POLL,
            owed: 0,
            forwarded_seen: 0,
            last_progress: std::time::Instant::now(),
            progressed: false,
        }
    }

    /// Account one ring drain; `forwarded` is the model's counter.
    fn drained(&mut self, s: clio_fastpath::PollSummary, forwarded: u64) {
        self.owed += forwarded.saturating_sub(self.forwarded_seen);
        self.forwarded_seen = forwarded;
        self.owed = self.owed.saturating_sub(u64::from(s.responses));
        if s.commands > 0 || s.responses > 0 {
            self.progressed = true;
        }
    }

    /// The next poll interval, after a poll that saw `rx_waiting`.
    fn next(&mut self, rx_waiting: bool) -> Duration {
        let now = std::time::Instant::now();
        if std::mem::take(&mut self.progressed) {
            self.last_progress = now;
            self.interval = QEMU_POLL;
            return self.interval;
        }
        let stalled = now.duration_since(self.last_progress) >= QEMU_OWED_PATIENCE;
        if stalled {
            // An answer that has not come in this long (a rejected slot) is
            // not waited for at the fast rate.
            self.owed = 0;
        }
        self.interval = if (rx_waiting || self.owed > 0) && !stalled {
            QEMU_POLL
        } else {
            (self.interval * 2).min(QEMU_POLL_MAX)
        };
        self.interval
    }

    /// The interval the last poll asked for.
    pub fn interval(&self) -> Duration {
        self.interval
    }
}

impl std::fmt::Debug for QemuBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QemuBoard")
            .field("fast", &self.fast)
            .finish_non_exhaustive()
    }
}

/// How often a QEMU-backed board looks at the TX ring while its rings are
/// busy: the firmware answers asynchronously ([`IdleBackoff`]).
pub const QEMU_POLL: Duration = Duration::from_micros(50);

impl QemuBoard {
    /// Boot the firmware (which formats DRAM and the rings, as on the
    /// board) and attach the fast-path model to the shared memory.
    pub fn launch(opts: crate::qemu::QemuOptions) -> Result<QemuBoard, BoardError> {
        let board = opts.board;
        let (qemu, dram) = crate::qemu::QemuSlowPath::launch(opts)
            .map_err(|e| BoardError(format!("slow path in QEMU: {e}")))?;
        let mut fast = FastPath::new(&board, crate::qemu::cosim_model_options(), dram)
            .map_err(|e| BoardError(format!("fast path: {e}")))?;
        // The board reports the first 8 bytes of the firmware's build id.
        let id =
            u64::from_str_radix(qemu.manifest().build_id.get(..16).unwrap_or("0"), 16).unwrap_or(0);
        let v: Vec<u32> = qemu
            .manifest()
            .version
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        let version = v.first().copied().unwrap_or(0) << 16
            | v.get(1).copied().unwrap_or(0) << 8
            | v.get(2).copied().unwrap_or(0);
        fast.set_firmware_identity(version, id);
        // `OFFLOAD_CALL` goes to the firmware's offloads over the rings
        // (`clio_slowpath::offload`), as the fast path would pass it on a
        // board whose RTL forwards it (the RTL answers UNSUPPORTED today).
        fast.forward_offloads_to_slow_path();
        // Take what the firmware posted at boot (its `Epoch`, the first TX
        // descriptor) before serving, as the FPGA does on the doorbell; no
        // request exists yet, so nothing is answered.
        fast.poll_rings(&mut |_, _| {});
        Ok(QemuBoard {
            fast,
            qemu,
            idle: IdleBackoff::new(),
        })
    }

    /// The firmware under QEMU (logs, boot time, manifest).
    pub fn firmware(&mut self) -> &mut crate::qemu::QemuSlowPath {
        &mut self.qemu
    }

    /// QEMU's process id.
    pub fn firmware_pid(&self) -> u32 {
        self.qemu.pid()
    }

    /// The fast-path model.
    pub fn fast(&self) -> &FastPath<crate::qemu::QemuDram> {
        &self.fast
    }

    /// The poll backoff (its current interval).
    pub fn idle(&self) -> &IdleBackoff {
        &self.idle
    }

    /// Drain the TX ring and account it in the backoff.
    fn drain(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) {
        let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
        let s = self.fast.poll_rings(&mut cb);
        self.idle.drained(s, self.fast.stats().forwarded);
    }

    /// Descriptors on the RX ring the firmware has not taken yet.
    fn rx_waiting(&self) -> bool {
        let rx = self.fast.layout().rx_ring;
        let mem = &self.fast.dram().bytes()[rx.start..rx.end];
        let head = clio_wire::ring::RingMemory::load_u32(mem, clio_wire::ring::header_field::HEAD);
        let tail = clio_wire::ring::RingMemory::load_u32(mem, clio_wire::ring::header_field::TAIL);
        head != tail
    }
}

impl Engine for QemuBoard {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        let mut cb = |c: FpClient, p: &[u8]| out(c.0, p);
        self.fast.receive(FpClient(from), packet, &mut cb);
        self.idle.progressed = true;
        self.drain(out);
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.drain(out);
        // A dead firmware cannot be waited for; its log says why.
        if let Err(e) = self.qemu.check_alive() {
            eprintln!(
                "clio-emu: slow path in QEMU stopped: {e}\n{}",
                self.qemu.log_tail(20)
            );
            return None;
        }
        let rx = self.rx_waiting();
        Some(self.idle.next(rx))
    }
}
