//! The ring service: the slow path serving the fast path over the rings.
//!
//! Boot (primary core, after the secondaries are online):
//! 1. zero the hash page table and the data region and clean them to DDR
//!    (the fast path reads both behind the caches; a page pushed into the
//!    free-PA FIFO must hold no earlier owner's data);
//! 2. write both ring headers empty (TX first, RX last), as the owner of
//!    board DRAM does at boot; the fast path attaches to them afterwards;
//! 3. gather the per-boot seed (`entropy.rs`: timer jitter, boot-time
//!    stamps, the RTC), build the [`SlowPath`] with it over a static arena
//!    sized at compile time from the board config, and the [`Engine`] over
//!    the two rings; log the boot epoch;
//! 4. log `ring service ready`, release the workers, post the `Epoch`
//!    descriptor (the slow path's first TX descriptor: the fast path resets
//!    its sessions and starts answering them), and start polling.
//!
//! Cores:
//! - **core 0** busy-polls the RX ring's producer index (as the paper's
//!   slow path does) and the TX ring's consumer index. When the fast path
//!   published descriptors, consumed TX commands (fences passed: freed pages
//!   can be scrubbed), or a worker finished a request, it runs one
//!   [`Engine::poll`] round: emit what is pending, scrub, refill the free-PA
//!   FIFOs, handle PA-consumed notices and error reports inline, and queue
//!   alloc/free requests to the worker chosen by PID;
//! - **cores 1–3** are the workers: each waits (`WFE`) for its queue flag,
//!   then runs its queued requests ([`Engine::run_worker`]; the VA search and
//!   bucket-overflow retries are the long part) and posts the commands and
//!   the reply to the TX ring.
//!
//! Offloads (`clio_slowpath::offload`): core 0's poll round also serves the
//! `OFFLOAD_CALL`s the fast path passes on (`OFFLOAD_REQ` fragments), inline,
//! in the offload's own address space (its PID, pages the slow path maps,
//! DRAM reached directly), and posts the answer as `OFFLOAD_REPLY` fragments.
//! The image registers Clio-KV (id 1), Clio-MV (id 2) and the tally offload
//! (id 4).
//!
//! The engine has one owner at a time: a ticket lock in cacheable memory
//! serialises the poll rounds and the worker runs (the slow-path library's
//! threading model). Hand-offs use flags plus `SEV`; every core also has the
//! generic-timer event stream on, so a `WFE` never outlives a missed event by
//! more than one event period.
//!
//! Idle sleep ([`IDLE_SLEEP`]: emulator-config and `qemu` builds, the
//! images that run in QEMU). A `WFE` does not halt a vCPU under TCG, so
//! waiting cores would keep QEMU's thread at 100 % of a host core. There,
//! a worker with nothing queued halts in `WFI` (`gic::sleep`) until core 0
//! sends it a wake-up SGI with its work; core 0, once the rings have been
//! quiet for [`POLL_AFTER_ACTIVITY_US`], halts for 20 µs, then twice as long
//! after each quiet look, up to [`IDLE_SLEEP_MAX_US`], and snaps back to busy
//! polling on the first descriptor or a worker's wake-up. The fast path of
//! the co-simulation cannot interrupt the guest, so a request that arrives
//! while core 0 sleeps waits at most [`IDLE_SLEEP_MAX_US`] of guest time.
//! ZCU106 lab images keep the paper's busy-polling core 0 and `WFE` workers
//! (dedicated cores, no added latency).
//!
//! Notification path. The fast path publishes an RX descriptor by storing
//! the ring's `head` and bumping its `doorbell` (clio-wire ring header); core 0
//! polls `head`. The board design also routes the doorbell to the PS as
//! `pl_ps_irq0[0]` (GIC SPI 89, interrupt ID 121), so an idle-capable image
//! could sleep in `WFI` until it; this image keeps interrupts masked and
//! polls. In the other direction the firmware stores the TX `head` and bumps
//! the TX `doorbell`; on the ZCU106 it then writes the fast-path register
//! `DOORBELL` (once per engine call that moved TX `head`, from whichever core
//! posted), which starts a drain of the TX ring. The emulated fast path
//! polls the TX ring itself.
//!
//! Fast-path registers (ZCU106 build, `fastpath.rs`): before touching board
//! DRAM the primary checks `ID`/`VERSION` and holds the fast path in reset;
//! once DRAM is formatted and the engine exists it writes the configuration,
//! releases the reset and logs the status; the status and drop counters
//! join the periodic report. Any error is logged and the service halts.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use aarch64_cpu::asm;
use aarch64_cpu::registers::{ReadWriteable, CNTKCTL_EL1};
use clio_config::Region;
use clio_slowpath::offload::{df, kv, mv, register_board, tally, OffloadHost, PhysMem, Serving};
use clio_slowpath::rack::FirmwareAgent;
use clio_slowpath::{Engine, EngineCounters, SlowPath, SlowPathConfig, Stats};
use clio_wire::ring::{header_field, ring_bytes, RingMemory};

use crate::board::{self, BOARD};
use crate::entropy;
use crate::fastpath::{self, Mmio};
use crate::gic;
use crate::ringmem::SharedRing;
use crate::timer;
use clio_slowpath::{FastPathRegs, FastPathStatus};

/// The slow path's parameters, from the board config.
const CFG: SlowPathConfig = SlowPathConfig::from_board(&BOARD);

// The board config must suit the slow path (checked when the image builds).
const _: () = match CFG.check() {
    Ok(()) => (),
    Err(_) => panic!("the board config is not usable by the slow path (SlowPathConfig::check)"),
};

/// Words of the slow path's arena.
const ARENA_WORDS: usize = CFG.arena_words();

/// Worker cores (all but core 0).
pub const WORKERS: usize = board::NUM_CORES as usize - 1;

/// Slots per worker queue (one is kept free by the SPSC queue).
const QUEUE_SLOTS: usize = 32;

/// RX descriptors taken per poll round.
const POLL_BUDGET: u32 = 64;

/// Guest-time interval between counter reports, when anything changed.
const REPORT_INTERVAL_US: u64 = 1_000_000;

/// Event-stream bit: a `WFE` wakes when this bit of the counter toggles
/// (bit 10 at 62.5–100 MHz: every ~10–16 µs).
const EVENT_STREAM_BIT: u64 = 10;

/// Whether idle cores halt in `WFI` (module docs): the images that run in
/// QEMU (the emulator board config, or the `qemu` feature).
pub const IDLE_SLEEP: bool =
    matches!(BOARD.board.kind, clio_config::BoardKind::Emulator) || cfg!(feature = "qemu");

/// Core 0 keeps busy-polling this long after the last activity, so a burst
/// of requests is served without sleep latency.
pub const POLL_AFTER_ACTIVITY_US: u64 = 2_000;

/// Core 0's first sleep once quiet; each quiet look doubles it.
const IDLE_SLEEP_MIN_US: u64 = 20;

/// Core 0's longest sleep: the most a request arriving while it sleeps waits.
pub const IDLE_SLEEP_MAX_US: u64 = 1_000;

/// A worker's sleep bound; core 0's wake-up SGI ends it early.
const WORKER_SLEEP_US: u64 = 100_000;

type RingEngine = Engine<'static, WORKERS, QUEUE_SLOTS>;

/// The arena: `.bss`, zeroed at boot, handed out once.
#[repr(C, align(64))]
struct Arena(UnsafeCell<[u64; ARENA_WORDS]>);

// SAFETY: borrowed mutably once, by the primary in `start`, before any other
// core can reach the engine.
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new([0; ARENA_WORDS]));

/// The engine, behind [`LOCK`].
struct EngineCell(UnsafeCell<MaybeUninit<RingEngine>>);

// SAFETY: written once before `READY`; afterwards only under `LOCK`.
unsafe impl Sync for EngineCell {}

static ENGINE: EngineCell = EngineCell(UnsafeCell::new(MaybeUninit::uninit()));

/// The node's rack side (gates, dirty records, bindings, control answers),
/// behind [`LOCK`] with the engine; built at compile time (`.bss`), never
/// on a 64 KiB core stack.
struct RackCell(UnsafeCell<FirmwareAgent>);

// SAFETY: only reached through a `Guard`, i.e. under `LOCK`.
unsafe impl Sync for RackCell {}

static RACK: RackCell = RackCell(UnsafeCell::new(FirmwareAgent::new()));

/// The rack key's boot parameter block (`clio_control::auth::KeyBlock`, 32
/// bytes right after the boot-seed mailbox in board DRAM), read and zeroed:
/// the loader's (QEMU launcher's, a board's FSBL's) hand-over of the key.
fn rack_key_block(
) -> Result<Option<clio_slowpath::rack::RackKey>, clio_slowpath::rack::KeyBlockError> {
    use clio_slowpath::rack::KeyBlock;
    let base = BOARD.boot_seed_mailbox().base + KeyBlock::OFFSET;
    let mut b = [0u8; KeyBlock::LEN];
    for (i, byte) in b.iter_mut().enumerate() {
        let p = (base as usize + i) as *mut u8;
        // SAFETY: the block lies in `regions.net_buffers` (board DRAM, mapped
        // normal memory), unused before the fast path is released; read and
        // cleared once by the primary, like the seed mailbox.
        *byte = unsafe { core::ptr::read_volatile(p) };
        // SAFETY: as above.
        unsafe { core::ptr::write_volatile(p, 0) };
    }
    KeyBlock::decode(&b)
}

/// Offloads the image registers (`clio_slowpath::offload`).
const OFFLOADS: usize = 4;
/// Offload answers remembered for retries (exactly-once), all sessions
/// together: the board's `dedup.offload_answers` (default 32; validated
/// so the records fit half the firmware region).
const OFFLOAD_RECORDS: usize = BOARD.dedup.offload_answers as usize;
/// Largest offload answer datagram: a single call's result is bounded by
/// the MTU anyway; a batch's answer by the board's response bound (64 KiB:
/// Clio-KV's clients pack up to 63 reads of 1 KiB into one call), with its
/// 4-byte head.
const OFFLOAD_ANSWER: usize = 64 * 1024 + 64;

/// Freed object VAs Clio-KV keeps per size class for reuse.
const KV_FREE_PER_CLASS: usize = 64;

type FwOffloads = OffloadHost<'static, OFFLOADS, OFFLOAD_RECORDS, OFFLOAD_ANSWER>;

/// The offload host and its offloads, behind [`LOCK`] with the engine
/// (`.bss`, built at compile time).
struct OffloadCell(UnsafeCell<FwOffloads>);

// SAFETY: only reached through a `Guard`, i.e. under `LOCK`.
unsafe impl Sync for OffloadCell {}

// All zeros (limits set at boot), so it takes `.bss`, not image bytes.
static OFFLOAD_HOST: OffloadCell = OffloadCell(UnsafeCell::new(FwOffloads::new(0, 0)));

/// Clio-KV (id 1), registered at boot; its tables are allocated in its own
/// address space at its first call.
/// Written at boot (`.bss`: its bucket count would put 13 KB of
/// initialised data in the image).
struct KvCell(UnsafeCell<MaybeUninit<kv::KvStore<KV_FREE_PER_CLASS>>>);

// SAFETY: written and borrowed mutably once, by the primary, when it
// registers it.
unsafe impl Sync for KvCell {}

static KV: KvCell = KvCell(UnsafeCell::new(MaybeUninit::uninit()));

/// Freed version arrays Clio-MV keeps for reuse.
const MV_FREE_ARRAYS: usize = 256;

/// Clio-MV (id 2), registered at boot; its id map is allocated in its own
/// address space at its first call. Written at boot (`.bss`: its map size
/// would put the whole store in `.data`).
struct MvCell(UnsafeCell<MaybeUninit<mv::MvStore<MV_FREE_ARRAYS>>>);

// SAFETY: written and borrowed mutably once, by the primary, when it
// registers it.
unsafe impl Sync for MvCell {}

static MV: MvCell = MvCell(UnsafeCell::new(MaybeUninit::uninit()));

/// The tally offload (id 4), registered at boot.
struct TallyCell(UnsafeCell<tally::Tally>);

// SAFETY: borrowed mutably once, by the primary, when it registers it.
unsafe impl Sync for TallyCell {}

static TALLY: TallyCell = TallyCell(UnsafeCell::new(tally::Tally::new()));

/// Clio-DF (id 3), registered at boot: `select` and `aggregate` in the
/// caller's address space; its 201 KiB of scan and output buffers are
/// zeros at build time (`.bss`).
struct DfCell(UnsafeCell<df::DfOffload>);

// SAFETY: borrowed mutably once, by the primary, when it registers it.
unsafe impl Sync for DfCell {}

static DF: DfCell = DfCell(UnsafeCell::new(df::DfOffload::new()));

/// Board DRAM as the offloads reach it: the data region, identity-mapped
/// Normal cacheable memory. An offload's own pages belong to its own PID,
/// which no client holds, so the fast path never reads or writes them and
/// no cache maintenance is owed (a freed page is zeroed and cleaned by
/// `scrub` before reuse). A caller's pages (Clio-DF) are the fast path's
/// too: `DirectMem` asks for a clean and invalidate before each access and
/// a clean after each write (`sync_from_device`, `sync_to_device`).
struct DataRegion;

impl DataRegion {
    fn inside(pa: u64, n: usize) -> bool {
        let data = BOARD.regions.data;
        pa >= data.base && pa.checked_add(n as u64).is_some_and(|e| e <= data.end())
    }
}

impl PhysMem for DataRegion {
    fn read(&mut self, pa: u64, buf: &mut [u8]) -> bool {
        if !Self::inside(pa, buf.len()) {
            return false;
        }
        // SAFETY: inside the data region (mapped, identity), in a page the
        // slow path mapped to the offload's PID.
        unsafe { core::ptr::copy_nonoverlapping(pa as *const u8, buf.as_mut_ptr(), buf.len()) };
        true
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        if !Self::inside(pa, data.len()) {
            return false;
        }
        // SAFETY: as for `read`.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), pa as *mut u8, data.len()) };
        true
    }
    fn sync_from_device(&mut self, pa: u64, len: usize) {
        if Self::inside(pa, len) {
            // SAFETY: inside the data region, mapped Normal memory.
            unsafe { crate::cache::clean_invalidate(pa, len) };
        }
    }
    fn sync_to_device(&mut self, pa: u64, len: usize) {
        if Self::inside(pa, len) {
            // SAFETY: as above.
            unsafe { crate::cache::clean(pa, len) };
        }
    }
}

/// Set (release) once `ENGINE` is initialised.
static READY: AtomicBool = AtomicBool::new(false);

/// Per worker: requests wait in its queue (set and cleared under `LOCK`).
static WORK: [AtomicBool; WORKERS] = [const { AtomicBool::new(false) }; WORKERS];

/// Set by a worker after a request ran: core 0 emits, refills and polls.
static KICK: AtomicBool = AtomicBool::new(false);

/// Set (before `READY`) once the fast-path register block was brought up:
/// every core then rings its doorbell after posting to TX.
static FASTPATH_UP: AtomicBool = AtomicBool::new(false);

/// A ticket lock: fair, so a busy poll core cannot starve the workers.
struct TicketLock {
    next: AtomicU32,
    serving: AtomicU32,
}

static LOCK: TicketLock = TicketLock {
    next: AtomicU32::new(0),
    serving: AtomicU32::new(0),
};

/// Exclusive access to the engine while held.
struct Guard;

impl TicketLock {
    fn lock(&self) -> Guard {
        let me = self.next.fetch_add(1, Ordering::Relaxed);
        while self.serving.load(Ordering::Acquire) != me {
            core::hint::spin_loop();
        }
        Guard
    }
}

impl Guard {
    fn engine(&mut self) -> &mut RingEngine {
        // SAFETY: the guard proves the lock is held, and `READY` was set
        // after the engine was written.
        unsafe { (*ENGINE.0.get()).assume_init_mut() }
    }
}

impl Guard {
    /// The engine, the rack side and the offloads together (one poll
    /// round uses all three).
    fn parts(&mut self) -> (&mut RingEngine, &mut FirmwareAgent, &mut FwOffloads) {
        // SAFETY: as for `engine`; `RACK` and `OFFLOAD_HOST` are only
        // reached under the lock.
        unsafe {
            (
                (*ENGINE.0.get()).assume_init_mut(),
                &mut *RACK.0.get(),
                &mut *OFFLOAD_HOST.0.get(),
            )
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        LOCK.serving.fetch_add(1, Ordering::Release);
    }
}

/// The RX ring (fast path → slow path).
fn rx_ring() -> SharedRing {
    // SAFETY: the board config places the ring inside `regions.rings`,
    // which the MMU maps non-cacheable and nothing else uses.
    unsafe { SharedRing::new(BOARD.rings.rx.base, ring_bytes(BOARD.rings.rx.slots)) }
}

/// The TX ring (slow path → fast path).
fn tx_ring() -> SharedRing {
    // SAFETY: as for `rx_ring`.
    unsafe { SharedRing::new(BOARD.rings.tx.base, ring_bytes(BOARD.rings.tx.slots)) }
}

/// Turn on this core's generic-timer event stream (bounds every `WFE`).
pub fn enable_event_stream() {
    CNTKCTL_EL1.modify(CNTKCTL_EL1::EVNTEN::SET + CNTKCTL_EL1::EVNTI.val(EVENT_STREAM_BIT));
}

/// Zero a DRAM region the fast path reads; logs how long it took.
fn clear(name: &str, r: Region) {
    let t0 = timer::micros();
    // SAFETY: the board config reserves the region for this use, and the
    // fast path does not run before the rings exist.
    unsafe { crate::cache::zero_for_device(r.base, r.size) };
    defmt::info!(
        "cleared {=str} {=u64:#x}+{=u64:#x} in {=u64} us",
        name,
        r.base,
        r.size,
        timer::micros() - t0
    );
}

/// Zeroing callback of the engine: a freed page whose TLB fence the fast
/// path has passed. Refuses anything outside the data region.
fn scrub(pa: u64, bytes: u64) {
    let data = BOARD.regions.data;
    let inside = pa >= data.base && pa.checked_add(bytes).is_some_and(|e| e <= data.end());
    if inside {
        // SAFETY: the slow path owns a freed page until it returns it to the
        // allocator, which happens after this call.
        unsafe { crate::cache::zero_for_device(pa, bytes) };
    } else {
        defmt::error!(
            "scrub of {=u64:#x}+{=u64:#x} outside the data region refused",
            pa,
            bytes
        );
    }
}

/// This core's handle on the fast-path register block, if it was brought up.
fn doorbell() -> Option<FastPathRegs<Mmio>> {
    if FASTPATH_UP.load(Ordering::Acquire) {
        fastpath::regs()
    } else {
        None
    }
}

/// Run `post` (an engine call that may publish TX descriptors) and ring the
/// fast path's doorbell if it did.
fn posting<R>(
    regs: &mut Option<FastPathRegs<Mmio>>,
    tx: &mut SharedRing,
    post: impl FnOnce(&mut SharedRing) -> R,
) -> R {
    match regs {
        Some(r) => r.post_and_ring(tx, post).0,
        None => post(tx),
    }
}

/// Log whether and where the fast-path registers will be programmed.
fn log_fastpath_plan() {
    if fastpath::PRESENT {
        defmt::info!(
            "fast-path registers at {=u64:#x}: programmed once board DRAM is formatted",
            fastpath::BASE
        );
    } else if cfg!(feature = "qemu") {
        defmt::info!("fast-path registers skipped: built with feature qemu (no PL)");
    } else {
        defmt::info!(
            "no fast-path registers on board kind {=str}: the fast path polls the TX ring",
            BOARD.board.kind.as_str()
        );
    }
}

/// Wait for a hand-off: `WFI` until woken (bounded) on images that sleep,
/// else `WFE` (woken by `SEV` or the event stream).
fn wait_for_work() {
    if IDLE_SLEEP {
        gic::sleep(WORKER_SLEEP_US);
    } else {
        asm::wfe();
    }
}

/// Signal `core` after a flag store it waits on (`SEV`, plus its wake-up
/// SGI on images that sleep).
fn signal(core: usize) {
    asm::sev();
    if IDLE_SLEEP {
        gic::wake(core);
    }
}

/// Core 0's quiet-time schedule: busy for [`POLL_AFTER_ACTIVITY_US`], then
/// sleeps doubling from [`IDLE_SLEEP_MIN_US`] to [`IDLE_SLEEP_MAX_US`].
struct IdleBackoff {
    busy_until: timer::Deadline,
    next_sleep_us: u64,
}

impl IdleBackoff {
    fn new() -> Self {
        IdleBackoff {
            busy_until: timer::Deadline::after_micros(POLL_AFTER_ACTIVITY_US),
            next_sleep_us: IDLE_SLEEP_MIN_US,
        }
    }

    fn active(&mut self) {
        *self = IdleBackoff::new();
    }

    /// One quiet iteration: yield, or sleep once the busy window is over.
    fn quiet(&mut self) {
        if IDLE_SLEEP && self.busy_until.expired() {
            gic::sleep(self.next_sleep_us);
            self.next_sleep_us = (self.next_sleep_us * 2).min(IDLE_SLEEP_MAX_US);
        } else {
            // A hint on the board; under single-threaded emulation it lets
            // the other cores run.
            // SAFETY: `yield` has no architectural effect.
            unsafe { core::arch::asm!("yield", options(nomem, nostack)) };
        }
    }
}

/// Primary core: format board DRAM, build the engine, then serve forever.
pub fn run_primary() -> ! {
    let mut pool = entropy::Pool::new();
    pool.stamp();
    enable_event_stream();
    if IDLE_SLEEP {
        gic::init_distributor();
        gic::init_cpu();
    }
    log_fastpath_plan();
    // Hold the fast path before board DRAM changes under it (a warm reboot
    // of the ARM leaves the PL running).
    let mut held = fastpath::regs().map(|mut regs| {
        let Some(cfg) = fastpath::config(&CFG) else {
            crate::halt(crate::EXIT_SERVICE)
        };
        if !fastpath::hold(&mut regs) {
            crate::halt(crate::EXIT_SERVICE);
        }
        (regs, cfg)
    });
    clear("page table", BOARD.regions.page_table);
    pool.stamp();
    clear("data region", BOARD.regions.data);
    pool.stamp();
    let mut scratch = [0u64; 256];
    pool.jitter(entropy::JITTER_SAMPLES, &mut scratch);
    let rtc = pool.rtc();
    // After `hold`: the fast path does not touch its buffers any more.
    let loader_seed = pool.mailbox(BOARD.boot_seed_mailbox());
    // Read before the seed is final: a damaged block fails closed under a key
    // derived from it.
    let key_block = rack_key_block();
    let mut rx = rx_ring();
    let mut tx = tx_ring();
    for (name, ring, slots) in [
        ("tx", &mut tx, BOARD.rings.tx.slots),
        ("rx", &mut rx, BOARD.rings.rx.slots),
    ] {
        if let Err(e) = clio_wire::ring::init(ring, slots) {
            defmt::error!("ring {=str}: header init failed at {=str}", name, e.field);
            crate::halt(crate::EXIT_SERVICE);
        }
    }

    // SAFETY: the only mutable borrow of the arena, taken once.
    let arena: &'static mut [u64] = unsafe { &mut *ARENA.0.get() };
    pool.stamp();
    let core = match SlowPath::new(CFG, arena, pool.seed()) {
        Ok(c) => c,
        Err(e) => {
            defmt::error!(
                "slow path refused the config: {=str}: {=str}",
                e.field,
                e.reason
            );
            crate::halt(crate::EXIT_SERVICE)
        }
    };
    let epoch = core.epoch();
    // The seed itself is secret (every key derives from it); the epoch is
    // public (INFO carries it).
    defmt::info!(
        "boot epoch {=u32:#010x} (seed: {=u32} samples, {=u32} of {=u32} jitter samples varied, RTC {=u32} s, loader seed {=str})",
        epoch,
        pool.samples,
        pool.varied,
        entropy::JITTER_SAMPLES,
        rtc,
        if loader_seed { "present" } else { "absent" }
    );
    if pool.varied == 0 && !loader_seed {
        defmt::warn!(
            "no timer jitter and no loader seed at boot: the seed, and so the session keys, are predictable"
        );
    }
    // SAFETY: no other core reaches the rack side before `READY`.
    let rack = unsafe { &mut *RACK.0.get() };
    // Reads, writes and atomics never reach this core: the gate is the fast
    // path's (GATE_SET / GATE_DIRTY over the rings).
    rack.use_fast_path_gate(clio_wire::ring::GATE_ENTRIES);
    match key_block {
        Ok(Some(key)) => {
            rack.set_key(key);
            defmt::info!("rack key: present (control datagrams must be sealed)");
        }
        Ok(None) => defmt::info!("rack key: absent (bare control datagrams served)"),
        Err(e) => {
            // Fail closed: a key nobody holds, so every control datagram is
            // refused `Unauthenticated` rather than served unauthenticated.
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&pool.seed().to_le_bytes());
            k[8..].copy_from_slice(&(!pool.seed()).rotate_left(17).to_le_bytes());
            rack.set_key(clio_slowpath::rack::RackKey(k));
            match e {
                clio_slowpath::rack::KeyBlockError::Check => defmt::error!(
                    "rack key block: key_block.check does not match the key; no control datagram will be served"
                ),
                clio_slowpath::rack::KeyBlockError::Truncated(_) => {
                    defmt::error!("rack key block: truncated; no control datagram will be served")
                }
            }
        }
    }
    let engine = match RingEngine::new(core, &rx, &tx) {
        Ok(e) => e,
        Err(e) => {
            defmt::error!("engine cannot attach to the rings: {=str}", e.field);
            crate::halt(crate::EXIT_SERVICE)
        }
    };
    // SAFETY: no other core touches the engine before `READY`.
    unsafe { (*ENGINE.0.get()).write(engine) };
    // SAFETY: no other core reaches the offloads before `READY`; `TALLY`
    // is borrowed this once, for the host's lifetime, as are the stores.
    let registered = unsafe {
        let host = &mut *OFFLOAD_HOST.0.get();
        host.set_limits(
            BOARD.network.mtu_payload as usize,
            BOARD.network.max_response_bytes as usize,
        );
        let store = (*KV.0.get()).write(kv::KvStore::new(kv::DEFAULT_BUCKETS));
        let objects = (*MV.0.get()).write(mv::MvStore::new(mv::DEFAULT_MAX_OBJECTS));
        register_board(host, store, objects, &mut *DF.0.get(), &mut *TALLY.0.get())
    };
    if registered.is_err() {
        defmt::error!("an offload could not be registered");
    } else {
        defmt::info!(
            "offloads: clio-kv (id {=u32}), clio-mv (id {=u32}), clio-df (id {=u32}), tally (id {=u32}); answers up to {=usize} bytes, {=usize} remembered",
            kv::OFFLOAD_ID,
            mv::OFFLOAD_ID,
            df::OFFLOAD_ID,
            tally::ID,
            OFFLOAD_ANSWER,
            OFFLOAD_RECORDS
        );
    }
    if let Some((regs, cfg)) = held.as_mut() {
        if !fastpath::release(regs, cfg) {
            crate::halt(crate::EXIT_SERVICE);
        }
        FASTPATH_UP.store(true, Ordering::Release);
    }
    READY.store(true, Ordering::Release);
    asm::sev();
    // Post the boot epoch now (no RX slot taken: budget 0), so the fast path
    // serves sessions before the first request arrives.
    {
        let mut regs = doorbell();
        let mut g = LOCK.lock();
        let e = g.engine();
        posting(&mut regs, &mut tx, |tx| e.poll(&mut rx, tx, 0, scrub));
        if !e.core().epoch_posted() {
            defmt::error!("TX ring full at boot: epoch not posted yet");
        }
    }
    defmt::info!(
        "ring service ready: RX {=u64:#x} x{=u32}, TX {=u64:#x} x{=u32}, {=usize} workers, arena {=usize} KiB, {=u64} pages of {=u64} KiB",
        BOARD.rings.rx.base,
        BOARD.rings.rx.slots,
        BOARD.rings.tx.base,
        BOARD.rings.tx.slots,
        WORKERS,
        ARENA_WORDS * 8 / 1024,
        CFG.pages_of(CFG.default_shift),
        (1u64 << CFG.default_shift) / 1024
    );
    poll_loop(rx, tx)
}

/// Core 0's loop.
fn poll_loop(mut rx: SharedRing, mut tx: SharedRing) -> ! {
    let mut regs = doorbell();
    let mut last_tx_tail = tx.load_u32(header_field::TAIL);
    let mut reported = (
        EngineCounters::default(),
        Stats::default(),
        FastPathStatus::default(),
    );
    let mut next_report = timer::Deadline::after_micros(REPORT_INTERVAL_US);
    let mut idle = IdleBackoff::new();
    loop {
        let rx_waiting = rx.load_u32(header_field::HEAD) != rx.load_u32(header_field::TAIL);
        let tx_tail = tx.load_u32(header_field::TAIL);
        let kicked = KICK.swap(false, Ordering::AcqRel);
        if rx_waiting || kicked || tx_tail != last_tx_tail {
            last_tx_tail = tx_tail;
            let mut g = LOCK.lock();
            let (e, node, host) = g.parts();
            let mut offloads = Serving {
                host,
                phys: &mut DataRegion,
            };
            let out = posting(&mut regs, &mut tx, |tx| {
                e.poll_full(&mut rx, tx, POLL_BUDGET, scrub, node, &mut offloads)
            });
            let mut woken = [false; WORKERS];
            for (w, flag) in WORK.iter().enumerate() {
                if e.queued(w) > 0 {
                    flag.store(true, Ordering::Release);
                    woken[w] = true;
                }
            }
            let rejected = e.counters().malformed;
            drop(g);
            asm::sev();
            if IDLE_SLEEP {
                for w in (0..WORKERS).filter(|&w| woken[w]) {
                    gic::wake(w + 1);
                }
            }
            idle.active();
            if let Some(err) = out.last_error {
                defmt::warn!(
                    "RX slot rejected: {=str} ({=u64} rejected since boot)",
                    err.field,
                    rejected
                );
            }
        } else {
            idle.quiet();
        }
        if next_report.expired() {
            next_report = timer::Deadline::after_micros(REPORT_INTERVAL_US);
            let mut g = LOCK.lock();
            let engine = (*g.engine().counters(), *g.engine().core().stats());
            drop(g);
            let st = regs.as_mut().map(|r| r.status()).unwrap_or_default();
            let now = (engine.0, engine.1, st);
            if now != reported {
                report(&now.0, &now.1);
                if regs.is_some() {
                    fastpath::log_status(&now.2);
                }
                reported = now;
            }
        }
    }
}

fn report(c: &EngineCounters, s: &Stats) {
    defmt::info!(
        "rings: polls {=u64} rx {=u64} malformed {=u64} dispatched {=u64} worked {=u64} inline {=u64} tx_full {=u64} scrubbed {=u64}",
        c.polls,
        c.rx,
        c.malformed,
        c.dispatched,
        c.worked,
        c.inline,
        c.tx_full,
        c.scrubbed
    );
    defmt::info!(
        "rack: control {=u64} dropped {=u64} gated {=u64}",
        c.control,
        c.control_dropped,
        c.gated
    );
    defmt::info!(
        "offloads: calls {=u64} dropped {=u64}",
        c.offload_calls,
        c.offload_dropped
    );
    defmt::info!(
        "slow path: allocs {=u64} (errors {=u64}, retries {=u64}) frees {=u64} (errors {=u64}) pa pushed {=u64} consumed {=u64} fast-path errors {=u64}",
        s.allocs,
        s.alloc_errors,
        s.retries,
        s.frees,
        s.free_errors,
        s.pa_pushed,
        s.pa_consumed,
        s.fastpath_errors
    );
    defmt::info!(
        "sessions: opened {=u64} closed {=u64} refused {=u64} over quota {=u64} pids released {=u64}",
        s.sessions_opened,
        s.sessions_closed,
        s.session_errors,
        s.over_quota,
        s.pids_released
    );
}

/// Worker core `core` (1..): run queued requests forever.
pub fn run_worker(core: usize) -> ! {
    enable_event_stream();
    if IDLE_SLEEP {
        gic::init_cpu();
    }
    let w = core - 1;
    while !READY.load(Ordering::Acquire) {
        asm::wfe();
    }
    let mut tx = tx_ring();
    let mut regs = doorbell();
    loop {
        if !WORK[w].load(Ordering::Acquire) {
            wait_for_work();
            continue;
        }
        let mut g = LOCK.lock();
        let e = g.engine();
        let ran = posting(&mut regs, &mut tx, |tx| e.run_worker(w, tx));
        if e.queued(w) == 0 {
            WORK[w].store(false, Ordering::Relaxed);
        }
        drop(g);
        if ran {
            KICK.store(true, Ordering::Release);
            signal(0);
        } else {
            // The previous request's commands wait for TX room; core 0
            // emits them when the fast path frees slots.
            wait_for_work();
        }
    }
}
