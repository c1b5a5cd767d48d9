//! The slow path in QEMU: co-simulation of the board firmware with the
//! fast-path model.
//!
//! [`QemuSlowPath::launch`] boots the firmware image (`firmware-arm/image`,
//! built for the same board config) in QEMU's ZynqMP model with the guest
//! RAM backed by a shared-memory file, and maps the same file here as the
//! board DRAM of the fast path ([`QemuDram`], a [`clio_fastpath::Dram`]).
//! Guest physical address = file offset = DRAM offset, so the rings, the
//! hash page table and the data pages are the very bytes both sides touch.
//!
//! ```text
//! qemu-system-aarch64 -M xlnx-zcu102,memory-backend=clio-ram -accel tcg,thread=single
//!     -object memory-backend-file,id=clio-ram,size=DRAM,mem-path=/dev/shm/NAME,share=on
//!     -display none -monitor none -serial file:LOG -semihosting -kernel IMAGE
//! ```
//!
//! **Who formats board DRAM.** The firmware, at boot, as on the board: it
//! zeroes the hash page table and the data region, writes both ring headers
//! and logs `ring service ready`. `launch` returns only after that line, so
//! the fast path then *attaches* with [`clio_fastpath::FastPath::new`]; calling
//! `FastPath::format` would reset the rings under the running firmware.
//!
//! **Board config.** The guest RAM is the board DRAM, so the config must put
//! DRAM at 0 and below 2 GiB (the ZynqMP's low DDR window; above it guest
//! addresses stop being file offsets). The shipped `emulator.toml` (256 MiB)
//! is the co-simulation config: a small file, and a boot-time clear of the
//! data region well under a second. The image must be built for the same
//! config (`CLIO_BOARD_CONFIG`); `launch` compares the config hash in the
//! image's manifest with the board's and refuses a mismatch.
//!
//! **Ordering across the two processes.** The firmware accesses the rings
//! with volatile loads/stores and `DMB` barriers (QEMU turns guest barriers
//! into host fences). On this side the fast-path model reaches the rings
//! through the slices [`QemuDram`] hands out. Each hand-out is an opaque call
//! with a sequentially consistent fence, so the compiler can neither cache
//! ring bytes across model operations nor move a model operation's stores
//! after the next one's loads, and the hardware orders them the same way. Within
//! one ring operation (slot bytes, then the index that publishes them) the
//! order rests on the ring engine's program order, which x86-64's
//! store-store and load-load ordering (TSO) preserves; see the README for
//! what a weakly ordered host would need.
//!
//! **Threads.** QEMU runs all four vCPUs on one host thread
//! (`thread=single`): in single-threaded TCG `WFE`/`YIELD` hand the host
//! thread to the next vCPU, so a busy guest costs one host core instead of
//! four spinning threads; idle cores of the co-simulation image halt in
//! `WFI` (firmware `gic.rs`), so an idle guest lets QEMU sleep.
//!
//! [`bench_slowpath`] measures the ring round trip and the alloc latency with
//! the slow path in QEMU next to the in-process slow path.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use clio_config::BoardConfig;
use clio_fastpath::{ClientId, Dram, FastPath, ModelOptions, ZeroPolicy};
use clio_fwlog::{Firmware, ImageManifest, Level, LogLine};
use clio_wire::payload::{perms, AllocReq, FreeReq, OpenSessionReq, OpenSessionResp};
use clio_wire::ring::{Consumer, Direction};
use clio_wire::{Header, Opcode, Packet, Status};
use memmap2::MmapMut;
use serde::Serialize;

/// Text of the firmware's log line that says the rings are served.
pub const READY_LINE: &str = "ring service ready";

/// Largest DRAM the co-simulation maps (the ZynqMP's low DDR window).
pub const MAX_DRAM: u64 = 2 << 30;

/// What to boot and how.
#[derive(Debug, Clone)]
pub struct QemuOptions {
    /// Firmware ELF built for `board` (`firmware-arm/image`, `CLIO_BOARD_CONFIG`).
    pub image: PathBuf,
    /// The board config; its DRAM becomes the guest RAM.
    pub board: BoardConfig,
    /// The `qemu-system-aarch64` binary.
    pub qemu: PathBuf,
    /// Where the firmware's UART (raw defmt frames) is captured; QEMU's own
    /// output goes beside it with the extension `.qemu.txt`.
    pub log: PathBuf,
    /// How long the firmware may take to report ready.
    pub timeout: Duration,
    /// The rack key handed to the firmware in its boot parameter block
    /// (`clio_control::auth::KeyBlock`, right after the boot-seed mailbox),
    /// as a board's boot loader would (`None`: no block, the node runs keyless).
    pub rack_key: Option<clio_control::auth::RackKey>,
}

impl QemuOptions {
    /// Options with defaults: `qemu-system-aarch64` from `PATH`, the log in
    /// the temporary directory, a 60 s boot timeout.
    pub fn new(image: impl Into<PathBuf>, board: BoardConfig) -> Self {
        QemuOptions {
            image: image.into(),
            board,
            qemu: PathBuf::from("qemu-system-aarch64"),
            log: std::env::temp_dir().join(format!(
                "clio-cosim-{}-{}.uart",
                std::process::id(),
                next_seq()
            )),
            timeout: Duration::from_secs(60),
            rack_key: None,
        }
    }
}

/// The QEMU binary, if one can be run: `$QEMU` or `qemu-system-aarch64` on `PATH`.
pub fn find_qemu() -> Option<PathBuf> {
    let cand = std::env::var_os("QEMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("qemu-system-aarch64"));
    let ok = Command::new(&cand)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(cand)
}

fn next_seq() -> u32 {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Board DRAM shared with the QEMU guest: the mapped guest-RAM file.
#[derive(Debug)]
pub struct QemuDram {
    map: MmapMut,
}

impl Dram for QemuDram {
    // Not inlined, and fenced: see the module docs on ordering.
    #[inline(never)]
    fn bytes(&self) -> &[u8] {
        fence(Ordering::SeqCst);
        &self.map
    }
    #[inline(never)]
    fn bytes_mut(&mut self) -> &mut [u8] {
        fence(Ordering::SeqCst);
        &mut self.map
    }
}

/// A running firmware under QEMU. Dropping it kills QEMU and removes the
/// shared-memory file.
#[derive(Debug)]
pub struct QemuSlowPath {
    child: Child,
    shm: PathBuf,
    log: PathBuf,
    qemu_out: PathBuf,
    image: PathBuf,
    firmware: FirmwareLog,
    manifest: ImageManifest,
    boot_time: Duration,
    /// Length of the UART capture when it was last scanned for errors.
    log_scanned: u64,
    /// The first error the firmware logged, once seen.
    log_error: Option<String>,
}

/// The ELF's defmt table, for decoding the UART capture.
struct FirmwareLog(Firmware);

impl std::fmt::Debug for FirmwareLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FirmwareLog")
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn other(msg: String) -> io::Error {
    io::Error::other(msg)
}

impl QemuSlowPath {
    /// Boot the firmware and wait until it serves the rings.
    ///
    /// Errors (each names what is at fault): an image that is not a firmware
    /// ELF or was built for another board config; a board whose DRAM cannot
    /// be the guest RAM; QEMU missing or exiting; the firmware logging an
    /// error or not reporting ready within `timeout` — the last two carry
    /// the tail of the decoded UART log and of QEMU's output.
    pub fn launch(opts: QemuOptions) -> io::Result<(QemuSlowPath, QemuDram)> {
        let board = &opts.board;
        if board.dram.base != 0 {
            return Err(invalid(format!(
                "board {}: dram.base = {:#x}: the co-simulation needs DRAM at 0 (guest address = file offset)",
                board.board.name.as_str(),
                board.dram.base
            )));
        }
        if board.dram.size > MAX_DRAM {
            return Err(invalid(format!(
                "board {}: dram.size = {} bytes: the co-simulation maps at most {MAX_DRAM} (the ZynqMP low DDR window); use board-configs/emulator.toml",
                board.board.name.as_str(),
                board.dram.size
            )));
        }
        let name = opts.image.display().to_string();
        let elf = fs::read(&opts.image)
            .map_err(|e| io::Error::new(e.kind(), format!("firmware image {name}: {e}")))?;
        let manifest = ImageManifest::from_elf(&name, &elf).map_err(|e| invalid(e.to_string()))?;
        let want = format!("{:016x}", board.config_hash());
        if manifest.config_hash != want {
            return Err(invalid(format!(
                "firmware image {name} was built for board {} (config {}), not for board {} (config {want}); rebuild it with CLIO_BOARD_CONFIG",
                manifest.board,
                manifest.config_hash,
                board.board.name.as_str()
            )));
        }
        let firmware =
            FirmwareLog(Firmware::from_elf(&name, &elf).map_err(|e| invalid(e.to_string()))?);

        let shm_dir = Path::new("/dev/shm");
        let dir = if shm_dir.is_dir() {
            shm_dir.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let shm = dir.join(format!("clio-cosim-{}-{}", std::process::id(), next_seq()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&shm)?;
        let guard = ShmFile(shm.clone());
        file.set_len(board.dram.size)?;
        // SAFETY: the file is ours (created above); the only other user is the
        // QEMU guest, whose accesses follow the ring protocol (module docs).
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        drop(file);
        // The boot loader's part: random bytes for the firmware's per-boot
        // seed, where it looks for them (QEMU keeps the file's contents).
        let mailbox = board.boot_seed_mailbox();
        let at = (mailbox.base - board.dram.base) as usize;
        getrandom::getrandom(&mut map[at..at + mailbox.size as usize])
            .map_err(|e| other(format!("no OS randomness for the firmware's seed: {e}")))?;
        // And the rack key's block, where a board's loader leaves it.
        if let Some(key) = &opts.rack_key {
            use clio_control::auth::KeyBlock;
            let at = at + KeyBlock::OFFSET as usize;
            map[at..at + KeyBlock::LEN].copy_from_slice(&KeyBlock::encode(key));
        }

        let qemu_out = opts.log.with_extension("qemu.txt");
        let out = File::create(&qemu_out)?;
        // Empty the UART capture before QEMU starts: a file left at this path
        // by an earlier run (the name reuses a PID) holds its ready line, which
        // the wait below would take for this boot's.
        File::create(&opts.log)?;
        let err = out.try_clone()?;
        let start = Instant::now();
        let mut cmd = Command::new(&opts.qemu);
        die_with_parent(&mut cmd);
        let child = cmd
            .env("QEMU_AUDIO_DRV", "none")
            .arg("-M")
            .arg("xlnx-zcu102,memory-backend=clio-ram")
            .args(["-accel", "tcg,thread=single"])
            .arg("-object")
            .arg(format!(
                "memory-backend-file,id=clio-ram,size={},mem-path={},share=on",
                board.dram.size,
                shm.display()
            ))
            .args(["-display", "none", "-monitor", "none", "-semihosting"])
            .arg("-serial")
            .arg(format!("file:{}", opts.log.display()))
            .arg("-kernel")
            .arg(&opts.image)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| {
                io::Error::new(e.kind(), format!("starting {}: {e}", opts.qemu.display()))
            })?;
        std::mem::forget(guard);
        let mut q = QemuSlowPath {
            child,
            shm,
            log: opts.log.clone(),
            qemu_out,
            image: opts.image.clone(),
            firmware,
            manifest,
            boot_time: Duration::ZERO,
            log_scanned: 0,
            log_error: None,
        };
        q.wait_for_line(READY_LINE, opts.timeout)?;
        q.boot_time = start.elapsed();
        let dram = QemuDram { map };
        q.check_shared(&dram, board)?;
        // Both sides hold the file now; unlinking it means no stale file is
        // left behind however this process ends.
        let _ = fs::remove_file(&q.shm);
        Ok((q, dram))
    }

    /// The guest must have written the ring headers into our mapping.
    fn check_shared(&mut self, dram: &QemuDram, board: &BoardConfig) -> io::Result<()> {
        for (key, ring) in [("rings.rx", board.rings.rx), ("rings.tx", board.rings.tx)] {
            let start = (ring.base - board.dram.base) as usize;
            let mem = &dram.bytes()[start..start + clio_wire::ring::ring_bytes(ring.slots)];
            let dir = if key == "rings.rx" {
                Direction::Rx
            } else {
                Direction::Tx
            };
            match Consumer::attach(mem, dir) {
                Ok(c) if c.slot_count() == ring.slots => {}
                Ok(c) => {
                    return Err(self.failure(&format!(
                        "{key}: the firmware formatted {} slots, the board config says {}",
                        c.slot_count(),
                        ring.slots
                    )))
                }
                Err(e) => {
                    return Err(self.failure(&format!(
                        "{key}: firmware reported ready but its ring header is not visible in the shared file ({e:?}); is the guest RAM shared?"
                    )))
                }
            }
        }
        Ok(())
    }

    /// Wall time from starting QEMU to the ready line.
    pub fn boot_time(&self) -> Duration {
        self.boot_time
    }

    /// The image's manifest (build id, config hash, board).
    pub fn manifest(&self) -> &ImageManifest {
        &self.manifest
    }

    /// The firmware image booted.
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// The UART capture file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Every log line the firmware has sent so far, decoded.
    pub fn log_lines(&self) -> Vec<LogLine> {
        let bytes = fs::read(&self.log).unwrap_or_default();
        self.firmware.0.decode_all(&bytes).0
    }

    /// The last `n` decoded log lines, one per line.
    pub fn log_tail(&self, n: usize) -> String {
        let lines = self.log_lines();
        let skip = lines.len().saturating_sub(n);
        lines[skip..].iter().map(|l| format!("    {l}\n")).collect()
    }

    fn failure(&mut self, what: &str) -> io::Error {
        let qemu = fs::read_to_string(&self.qemu_out).unwrap_or_default();
        let qemu_tail: String = qemu
            .lines()
            .filter(|l| !l.contains("module audio-"))
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(|l| format!("    {l}\n"))
            .collect();
        other(format!(
            "{what}\nfirmware log ({}, last lines):\n{}QEMU output ({}):\n{}",
            self.log.display(),
            self.log_tail(20),
            self.qemu_out.display(),
            if qemu_tail.is_empty() {
                "    (none)\n".to_string()
            } else {
                qemu_tail
            }
        ))
    }

    /// Fails if QEMU has exited or the firmware logged an error (it reports
    /// exceptions and panics as errors before halting). Cheap when nothing
    /// changed: the log is decoded again only when it grew, because a
    /// polling board calls this on every poll.
    pub fn check_alive(&mut self) -> io::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            return Err(self.failure(&format!("QEMU exited ({status})")));
        }
        let len = fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0);
        if self.log_error.is_none() && len != self.log_scanned {
            self.log_scanned = len;
            self.log_error = self
                .log_lines()
                .into_iter()
                .find(|l| l.level == Some(Level::Error))
                .map(|e| e.message);
        }
        if let Some(e) = self.log_error.clone() {
            return Err(self.failure(&format!("firmware reported an error: {e}")));
        }
        Ok(())
    }

    /// QEMU's process id (for CPU accounting in tests and benchmarks).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait until a log line containing `text` appears; returns it. Fails
    /// when QEMU exits, the firmware logs an error, or `timeout` passes.
    pub fn wait_for_line(&mut self, text: &str, timeout: Duration) -> io::Result<LogLine> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = self
                .log_lines()
                .into_iter()
                .find(|l| l.message.contains(text))
            {
                return Ok(l);
            }
            self.check_alive()?;
            if Instant::now() >= deadline {
                return Err(self.failure(&format!(
                    "no firmware log line containing `{text}` within {:.1} s",
                    timeout.as_secs_f64()
                )));
            }
            // The UART capture is a file QEMU appends to; there is no event
            // to block on, so look again shortly.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Removes the shared-memory file if launch fails before QEMU owns it.
struct ShmFile(PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

impl Drop for QemuSlowPath {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.shm);
    }
}

// ---- measurement -----------------------------------------------------------

/// Latency distribution of one measured operation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    /// Samples taken.
    pub samples: usize,
    /// Median, ns.
    pub median_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Mean, ns.
    pub mean_ns: u64,
    /// Smallest, ns.
    pub min_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

impl Latency {
    /// Summarise samples (nanoseconds); `None` when there are none.
    pub fn of(samples: &mut [u64]) -> Option<Latency> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        let at = |q: f64| samples[((n as f64 * q).ceil() as usize).clamp(1, n) - 1];
        Some(Latency {
            samples: n,
            median_ns: at(0.5),
            p90_ns: at(0.9),
            p99_ns: at(0.99),
            mean_ns: samples.iter().sum::<u64>() / n as u64,
            min_ns: samples[0],
            max_ns: samples[n - 1],
        })
    }
}

/// The two measured operations for one slow-path placement.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SlowPathLatency {
    /// Ring round trip: a request forwarded on the RX ring until its reply
    /// has come back on the TX ring and been answered (a free of the range
    /// just freed, which the slow path refuses: dispatch and reply only, no
    /// table work).
    pub ring_round_trip: Latency,
    /// An `Alloc` of one default-size page, packet in to response out
    /// (VA search, PTE insert commands, reply).
    pub alloc: Latency,
}

/// The report of [`bench_slowpath`] (`clio bench slowpath --slow-path qemu --json`).
#[derive(Debug, Clone, Serialize)]
pub struct SlowPathBench {
    /// Board config name.
    pub board: String,
    /// Firmware build id.
    pub build_id: String,
    /// Iterations per operation.
    pub iterations: usize,
    /// QEMU start to `ring service ready`, ms.
    pub qemu_boot_ms: u64,
    /// The slow path in QEMU (firmware image, shared-memory rings).
    pub qemu: SlowPathLatency,
    /// The slow-path library in this process over the same ring format.
    pub in_process: SlowPathLatency,
}

/// A slow path the measurement loop can wait on.
trait Side<D: Dram> {
    /// Let the slow path make progress (no-op when it runs elsewhere).
    fn step(&mut self, fp: &mut FastPath<D>);
    /// Fail if the slow path died.
    fn check(&mut self) -> io::Result<()>;
}

struct InQemu<'q>(&'q mut QemuSlowPath);

impl Side<QemuDram> for InQemu<'_> {
    fn step(&mut self, _fp: &mut FastPath<QemuDram>) {
        std::hint::spin_loop();
    }
    fn check(&mut self) -> io::Result<()> {
        self.0.check_alive()
    }
}

/// The in-process slow path: the library's engine on this thread (the
/// same driver as the model board's).
pub(crate) struct InProcess(crate::slow::InProcSlowPath);

impl InProcess {
    fn new(fp: &FastPath<Vec<u8>>, board: &BoardConfig) -> io::Result<Self> {
        let slow = crate::slow::InProcSlowPath::boot(
            board,
            fp.layout(),
            fp.dram().as_slice(),
            crate::boot_seed(),
        )
        .map_err(invalid)?;
        Ok(InProcess(slow))
    }
}

impl Side<Vec<u8>> for InProcess {
    fn step(&mut self, fp: &mut FastPath<Vec<u8>>) {
        self.0.step(fp.dram_mut().as_mut_slice());
    }
    fn check(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One request through the fast path; waits (bounded) for its response.
fn exchange<D: Dram, S: Side<D>>(
    fp: &mut FastPath<D>,
    side: &mut S,
    packet: &[u8],
    timeout: Duration,
) -> io::Result<(Header, Duration)> {
    exchange_payload(fp, side, packet, timeout).map(|(h, _, t)| (h, t))
}

/// [`exchange`], also returning the response's payload.
fn exchange_payload<D: Dram, S: Side<D>>(
    fp: &mut FastPath<D>,
    side: &mut S,
    packet: &[u8],
    timeout: Duration,
) -> io::Result<(Header, Vec<u8>, Duration)> {
    let mut resp: Option<Vec<u8>> = None;
    let t0 = Instant::now();
    fp.receive(ClientId(1), packet, &mut |_, b| resp = Some(b.to_vec()));
    let deadline = t0 + timeout;
    // Liveness checks decode the firmware log: rare, so they do not weigh
    // on the measured tail.
    let mut next_check = t0 + Duration::from_millis(100);
    let mut spins = 0u32;
    while resp.is_none() {
        side.step(fp);
        fp.poll_rings(&mut |_, b| resp = Some(b.to_vec()));
        spins = spins.wrapping_add(1);
        if resp.is_none() && spins % 256 == 0 {
            let now = Instant::now();
            if now >= next_check {
                side.check()?;
                next_check = now + Duration::from_millis(100);
            }
            if now >= deadline {
                return Err(other(format!(
                    "no response within {:.1} s",
                    timeout.as_secs_f64()
                )));
            }
        }
    }
    let took = t0.elapsed();
    let bytes = resp.unwrap_or_default();
    let p = Packet::new_checked(&bytes[..]).map_err(|e| other(format!("response: {e:?}")))?;
    let h = Header::parse_verified(&p).map_err(|e| other(format!("response: {e:?}")))?;
    Ok((h, p.payload().to_vec(), took))
}

/// The measuring client's session: its address space and credentials.
#[derive(Debug, Clone, Copy)]
struct Session {
    pid: u32,
    id: u16,
    epoch: u32,
    key: u64,
}

impl Session {
    /// Open a session on a new address space (through the slow path).
    fn open<D: Dram, S: Side<D>>(
        fp: &mut FastPath<D>,
        side: &mut S,
        req_id: u32,
        timeout: Duration,
    ) -> io::Result<Session> {
        let mut p = [0u8; OpenSessionReq::LEN];
        let _ = OpenSessionReq {
            join_session: 0,
            join_key: 0,
        }
        .emit(&mut p);
        let pkt = Header::request(Opcode::OpenSession, 0, req_id, 0, 0)
            .encode(&p)
            .unwrap_or_default();
        let (h, payload, _) = exchange_payload(fp, side, &pkt, timeout)?;
        if h.status != Status::Ok {
            return Err(other(format!("open session: status {:?}", h.status)));
        }
        let r = OpenSessionResp::parse(&payload)
            .map_err(|e| other(format!("open session answer: {e}")))?;
        Ok(Session {
            pid: r.pid,
            id: r.session,
            epoch: r.epoch,
            key: r.key,
        })
    }

    /// A request packet of this session.
    fn request(&self, op: Opcode, req_id: u32, va: u64, payload: &[u8]) -> Vec<u8> {
        // Only fixed-size control payloads come here, so encoding cannot fail.
        Header::request(op, self.pid, req_id, va, 0)
            .with_session(self.id, self.epoch, self.key)
            .encode(payload)
            .unwrap_or_default()
    }

    fn alloc(&self, req_id: u32, size: u64) -> Vec<u8> {
        let mut p = [0u8; AllocReq::LEN];
        let _ = AllocReq {
            size,
            perms: perms::RW,
            page_shift: 0,
        }
        .emit(&mut p);
        self.request(Opcode::Alloc, req_id, 0, &p)
    }

    fn free(&self, req_id: u32, va: u64, size: u64) -> Vec<u8> {
        let mut p = [0u8; FreeReq::LEN];
        let _ = FreeReq { size }.emit(&mut p);
        self.request(Opcode::Free, req_id, va, &p)
    }
}

fn measure<D: Dram, S: Side<D>>(
    fp: &mut FastPath<D>,
    side: &mut S,
    board: &BoardConfig,
    iterations: usize,
) -> io::Result<SlowPathLatency> {
    let page = board.pages.default_size;
    let timeout = Duration::from_secs(10);
    let mut req = 0u32;
    let mut next = || {
        req += 1;
        req
    };
    let me = Session::open(fp, side, next(), timeout)?;
    let (mut rtt, mut alloc) = (
        Vec::with_capacity(iterations),
        Vec::with_capacity(iterations),
    );
    // Warm-up: the first allocation creates the PID's VA state.
    for i in 0..iterations + 1 {
        let (h, t) = exchange(fp, side, &me.alloc(next(), page), timeout)?;
        if h.status != Status::Ok {
            return Err(other(format!("alloc {i}: status {:?}", h.status)));
        }
        if i > 0 {
            alloc.push(t.as_nanos() as u64);
        }
        let (f, _) = exchange(fp, side, &me.free(next(), h.va, page), timeout)?;
        if f.status != Status::Ok {
            return Err(other(format!("free {i}: status {:?}", f.status)));
        }
        // A free of what was just freed: answered `Unmapped` by the slow path.
        let (e, t) = exchange(fp, side, &me.free(next(), h.va, page), timeout)?;
        if e.status == Status::Ok {
            return Err(other(format!("second free of {:#x} succeeded", h.va)));
        }
        if i > 0 {
            rtt.push(t.as_nanos() as u64);
        }
    }
    let none = || other("no samples".into());
    Ok(SlowPathLatency {
        ring_round_trip: Latency::of(&mut rtt).ok_or_else(none)?,
        alloc: Latency::of(&mut alloc).ok_or_else(none)?,
    })
}

/// The model options of the co-simulation: the firmware zeroes pages before
/// it pushes them into the free-PA FIFO (at boot, and when scrubbing freed
/// pages), as on the board.
pub fn cosim_model_options() -> ModelOptions {
    ModelOptions {
        zero_policy: ZeroPolicy::BySlowPath,
        ..ModelOptions::default()
    }
}

/// Measure the ring round trip and alloc latency with the slow path in QEMU
/// (booted from `opts`) and in process, `iterations` samples each.
pub fn bench_slowpath(opts: QemuOptions, iterations: usize) -> io::Result<SlowPathBench> {
    let board = opts.board;
    let iterations = iterations.max(1);

    let fp_err = |e: clio_fastpath::ConfigError| invalid(format!("fast-path model: {e}"));
    let dram = vec![0u8; board.dram.size as usize];
    let mut fp = FastPath::format(&board, cosim_model_options(), dram).map_err(fp_err)?;
    let mut side = InProcess::new(&fp, &board)?;
    let in_process = measure(&mut fp, &mut side, &board, iterations)?;
    drop(fp);

    let (mut q, dram) = QemuSlowPath::launch(opts)?;
    let mut fp = FastPath::new(&board, cosim_model_options(), dram).map_err(fp_err)?;
    let qemu = measure(&mut fp, &mut InQemu(&mut q), &board, iterations)?;
    Ok(SlowPathBench {
        board: board.board.name.as_str().to_string(),
        build_id: q.manifest().build_id.clone(),
        iterations,
        qemu_boot_ms: q.boot_time().as_millis() as u64,
        qemu,
        in_process,
    })
}

/// QEMU must not outlive the process that serves its fast path (a killed
/// `clio sim` runs no destructors): ask the kernel to kill it when its
/// parent dies (precisely: when the thread that launched it exits, so
/// launch from a thread that lives as long as the board).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only
    // makes one async-signal-safe system call.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == 0
            {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
}

/// Elsewhere a killed parent leaves QEMU to the user.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}
