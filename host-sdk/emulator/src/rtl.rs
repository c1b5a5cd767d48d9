//! The emulated board on the fast-path RTL: `clio_fastpath_top` simulated
//! with Verilator in a harness process, the slow-path library in this one.
//!
//! ```text
//!  UDP ─▶ server ─▶ RtlBoard ──frames over pipes──▶ clio_rtlsim (Verilated clio_fastpath_top)
//!                     │  slow path (clio-slowpath Engine)        │ AXI4 slave (C++)
//!                     └──────────── board DRAM: one shared-memory file ──┘
//! ```
//!
//! **DRAM.** A file in `/dev/shm` of `dram.size` bytes, mapped by both
//! processes (file offset = DRAM offset). This side formats it exactly as
//! [`crate::Board`] does ([`FastPath::format`]: ring headers, cleared page
//! table); the harness serves the design's AXI4 memory port from its
//! mapping with the timing of `rtl/clio_axi_ram.sv`; the slow path works on
//! the rings in the same bytes.
//!
//! **Lock step.** The harness (`ip/fastpath/rtlsim/harness.cpp`) clocks the
//! design only while it executes a command: a packet (`P`, run until the top
//! is idle) or a TX-ring poll (`R`, pulse `poll`, run until done and idle).
//! Between commands it blocks reading its stdin, so DRAM has one user at a
//! time and the pipe round trip orders every access of one process before
//! the other's. The slow path runs between commands exactly as
//! `Board::settle` runs it; whenever it leaves descriptors in the TX ring,
//! this side asks for an `R`.
//!
//! **Build.** On first use the harness is built with `verilator` (from
//! `PATH`) from every `rtl/*.sv` plus `rtlsim/harness.cpp`, with the board's
//! geometry as `-G` parameters (the co-simulation's
//! [`clio_fastpath_cosim::board::verilator_params`]), into a cache directory
//! named by a hash of the sources, the parameters and the Verilator version;
//! later launches reuse it.
//!
//! **READ streams.** With `fastpath.read_streams` (the default) the top is
//! built with [`RTL_STREAMS`] stream entries (as the ZCU106 bitstream) and
//! runs with `cfg_streams_on`: a long READ's first packet leaves when it is
//! taken in, and the harness stops the clock as soon as the engine starts
//! pumping a stream packet (everything taken in before is done). A served
//! board ([`Engine::start`]) runs one such pump per [`Engine::pump`] call
//! (`S`, one packet each), so the server
//! executes other clients' requests between two packets of a long answer,
//! as on the model board; called directly ([`Engine::handle`] without a
//! server), the board pumps every open stream before it returns, so each
//! READ is answered whole, in the same bytes.
//!
//! **Clients.** The RTL knows no client addresses; a response goes to the
//! sender of the packet being executed, and one produced during a TX-ring
//! poll (a slow-path reply) to the client whose request had the same
//! `(pid, req_id)`.

use std::collections::{HashMap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use clio_config::BoardConfig;
use clio_fastpath::{FastPath, Layout, Span};
use clio_slowpath::SlowPath;
use clio_wire::clio::HEADER_LEN;
use clio_wire::ring::{header_field, Descriptor, Direction, Producer, RingMemory};
use clio_wire::Packet;
use memmap2::MmapMut;

use crate::board::BoardError;
use crate::server::{ClientId, Engine};
use crate::slow::InProcSlowPath;

/// Requests remembered for routing slow-path replies back to their client.
const ROUTES: usize = 1 << 16;
/// Largest frame the harness may send (a response packet, a message).
const MAX_FRAME: usize = 1 << 20;
/// Tag of the requests [`RtlBoard::slow_path_alloc`] places on the RX ring.
const DIRECT_TAG: u32 = 0xFFFF_FFFF;
/// Name of the harness binary in a build directory.
const HARNESS_BIN: &str = "clio_rtlsim";
/// Bumped when the build command or the frame protocol changes.
const BUILD_RECIPE: &str = "clio-rtlsim 3";
/// Open READ streams of the simulated top (`STREAMS`), the ZCU106
/// bitstream's count (`bitstream/zcu106/clio_zcu106_top.sv`, `FP_STREAMS`).
pub const RTL_STREAMS: u32 = 4;
/// Offload calls the RTL remembers while the slow path serves them (its
/// `OFFLOAD_TAGS`, the model's).
pub const RTL_OFFLOAD_TAGS: u32 = 64;

fn err(msg: impl Into<String>) -> BoardError {
    BoardError(msg.into())
}

fn next_seq() -> u32 {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Where the RTL comes from and where its simulator is built.
#[derive(Debug, Clone)]
pub struct RtlOptions {
    /// The `ip/fastpath` directory (with `rtl/` and `rtlsim/`).
    pub fastpath_dir: PathBuf,
    /// Cache of built harnesses (one subdirectory per source hash).
    pub cache_dir: PathBuf,
    /// The `verilator` command.
    pub verilator: PathBuf,
    /// Boot seed of the slow path (its epoch and session keys follow from
    /// it); `None`: a fresh one ([`crate::boot_seed`]). Tests pin it to
    /// compare the board with a model board booted with the same seed.
    pub seed: Option<u64>,
}

impl Default for RtlOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl RtlOptions {
    /// Defaults: sources from `$CLIO_FASTPATH_DIR`, else the checkout this
    /// crate was built from; cache in `$CLIO_RTLSIM_CACHE`, else
    /// `$XDG_CACHE_HOME/clio/rtlsim`, else `~/.cache/clio/rtlsim`;
    /// `verilator` from `PATH`.
    pub fn new() -> Self {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let fastpath_dir = env("CLIO_FASTPATH_DIR").unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("..")
                .join("ip")
                .join("fastpath")
        });
        let cache_dir = env("CLIO_RTLSIM_CACHE")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("clio").join("rtlsim")))
            .or_else(|| env("HOME").map(|d| d.join(".cache").join("clio").join("rtlsim")))
            .unwrap_or_else(|| std::env::temp_dir().join("clio-rtlsim-cache"));
        RtlOptions {
            fastpath_dir,
            cache_dir,
            verilator: PathBuf::from("verilator"),
            seed: None,
        }
    }
}

/// The first line of `verilator --version`, or `None` when it cannot run.
pub fn verilator_version(verilator: &Path) -> Option<String> {
    let out = Command::new(verilator)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().next().unwrap_or("").trim().to_string())
}

/// The sources of one harness build, in compile order.
#[derive(Debug, Clone)]
pub struct Sources {
    /// SystemVerilog files: packages (`*_pkg.sv`) first, then the modules.
    pub sv: Vec<PathBuf>,
    /// The C++ harness.
    pub harness: PathBuf,
}

impl Sources {
    /// Every `rtl/*.sv` and `rtlsim/harness.cpp` under `fastpath_dir`.
    pub fn find(fastpath_dir: &Path) -> Result<Sources, BoardError> {
        let rtl = fastpath_dir.join("rtl");
        let harness = fastpath_dir.join("rtlsim").join("harness.cpp");
        let top = rtl.join("clio_fastpath_top.sv");
        if !top.is_file() || !harness.is_file() {
            return Err(err(format!(
                "fast-path RTL sources not found: expected {} and {} (set CLIO_FASTPATH_DIR to the ip/fastpath directory of a checkout)",
                top.display(),
                harness.display()
            )));
        }
        let mut sv: Vec<PathBuf> = fs::read_dir(&rtl)
            .map_err(|e| err(format!("{}: {e}", rtl.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "sv"))
            .collect();
        // Packages must be parsed before the modules that import them.
        sv.sort_by_key(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            (!name.ends_with("_pkg.sv"), name)
        });
        Ok(Sources { sv, harness })
    }
}

/// Verilator options giving `clio_fastpath_top` the geometry of `lay`
/// (`-G` parameters, and what they need).
pub fn rtl_params(lay: &Layout) -> Result<Vec<String>, BoardError> {
    let mut p = clio_fastpath_cosim::board::verilator_params(lay);
    let end = lay.dram_base + lay.dram_len as u64;
    let bits = (u64::BITS - end.saturating_sub(1).leading_zeros()).max(32);
    if bits > 48 {
        return Err(err(format!(
            "dram: base {:#x} + {} bytes needs a {bits}-bit AXI address; the RTL simulator supports 48",
            lay.dram_base, lay.dram_len
        )));
    }
    p.push(format!("-GADDR_WIDTH={bits}"));
    // The reset loops over the dedup and TLB entries must unroll (Verilator
    // cannot schedule delayed array assignments in a loop it keeps).
    let unroll = lay.dedup_entries.max(lay.tlb_entries).max(64);
    p.push(format!("--unroll-count {unroll}"));
    p.push(format!("-GSTREAMS={RTL_STREAMS}"));
    // OFFLOAD_CALL is forwarded to the in-process slow path's offload host;
    // the answer buffer holds the longest answer it sends: the response
    // bound (at least the MTU), capped as the firmware caps it.
    p.push(format!("-GOFFLOAD_TAGS={RTL_OFFLOAD_TAGS}"));
    p.push(format!("-GOFFLOAD_RESP_BYTES={}", rtl_offload_answer(lay)));
    Ok(p)
}

/// Longest offload answer payload the RTL board serves for `lay`: its
/// response bound (at least the MTU) up to the slow path's
/// [`crate::slow::OFFLOAD_MAX_ANSWER`] (its datagram, with the 4-byte head,
/// within the wire's `MAX_OFFLOAD_LEN`), the top's `OFFLOAD_RESP_BYTES`.
pub fn rtl_offload_answer(lay: &Layout) -> usize {
    const { assert!(crate::slow::OFFLOAD_MAX_ANSWER + 4 <= clio_wire::ring::MAX_OFFLOAD_LEN) };
    (lay.max_resp as usize)
        .max(lay.mtu)
        .min(crate::slow::OFFLOAD_MAX_ANSWER)
}

/// FNV-1a, 64 bit: a stable name for a set of build inputs.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// A built harness.
#[derive(Debug, Clone)]
pub struct Harness {
    /// The executable.
    pub path: PathBuf,
    /// Whether this call built it (false: found in the cache).
    pub built: bool,
    /// How long the build took (zero when cached).
    pub build_time: Duration,
}

/// The harness for `params`, built with Verilator unless the cache holds one
/// built from the same sources, parameters and Verilator version.
pub fn build_harness(opts: &RtlOptions, params: &[String]) -> Result<Harness, BoardError> {
    let version = verilator_version(&opts.verilator).ok_or_else(|| {
        err(format!(
            "`{} --version` did not run: the RTL fast path is simulated with Verilator (5.006 or newer); install it (Debian/Ubuntu: apt-get install verilator) and put it on PATH",
            opts.verilator.display()
        ))
    })?;
    let src = Sources::find(&opts.fastpath_dir)?;
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    fnv1a(&mut h, BUILD_RECIPE.as_bytes());
    fnv1a(&mut h, version.as_bytes());
    for p in params {
        fnv1a(&mut h, p.as_bytes());
        fnv1a(&mut h, &[0]);
    }
    for f in src.sv.iter().chain(std::iter::once(&src.harness)) {
        let text = fs::read(f).map_err(|e| err(format!("{}: {e}", f.display())))?;
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        fnv1a(&mut h, name.as_bytes());
        fnv1a(&mut h, &(text.len() as u64).to_le_bytes());
        fnv1a(&mut h, &text);
    }
    let key = format!("{h:016x}");
    let dir = opts.cache_dir.join(&key);
    let exe = dir.join(HARNESS_BIN);
    let cached = Harness {
        path: exe.clone(),
        built: false,
        build_time: Duration::ZERO,
    };
    if exe.is_file() {
        return Ok(cached);
    }
    fs::create_dir_all(&opts.cache_dir).map_err(|e| {
        err(format!(
            "RTL simulator cache {}: {e}",
            opts.cache_dir.display()
        ))
    })?;
    // One build per key at a time across processes; a waiter finds the
    // finished build.
    let _lock = BuildLock::take(&opts.cache_dir.join(format!("{key}.lock")))?;
    if exe.is_file() {
        return Ok(cached);
    }
    eprintln!(
        "clio-emu: building the fast-path RTL simulator with {version} into {} (first use of these sources; a few minutes)",
        dir.display()
    );
    let tag = format!("{}-{}", std::process::id(), next_seq());
    let work = opts.cache_dir.join(format!("build-{key}-{tag}"));
    let staged = opts.cache_dir.join(format!("out-{key}-{tag}"));
    let t0 = Instant::now();
    let r = run_verilator(opts, &src, params, &work, &staged);
    let _ = fs::remove_dir_all(&work);
    if let Err(e) = r {
        let _ = fs::remove_dir_all(&staged);
        return Err(e);
    }
    // Another process may have finished the same build first; either copy
    // is the same program.
    if fs::rename(&staged, &dir).is_err() {
        let _ = fs::remove_dir_all(&staged);
    }
    if !exe.is_file() {
        return Err(err(format!(
            "RTL simulator build finished but {} is missing",
            exe.display()
        )));
    }
    Ok(Harness {
        path: exe,
        built: true,
        build_time: t0.elapsed(),
    })
}

/// An exclusive `flock` on a file, released when dropped.
struct BuildLock(File);

impl BuildLock {
    fn take(path: &Path) -> Result<BuildLock, BoardError> {
        use std::os::fd::AsRawFd;
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(BuildLock(f));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(err(format!("locking {}: {e}", path.display())));
            }
        }
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: unlocking the descriptor this lock owns.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

fn run_verilator(
    opts: &RtlOptions,
    src: &Sources,
    params: &[String],
    work: &Path,
    staged: &Path,
) -> Result<(), BoardError> {
    let io = |what: &Path, e: io::Error| err(format!("{}: {e}", what.display()));
    fs::create_dir_all(work).map_err(|e| io(work, e))?;
    fs::create_dir_all(staged).map_err(|e| io(staged, e))?;
    let log_path = staged.join("build.log");
    let log = File::create(&log_path).map_err(|e| io(&log_path, e))?;
    let log2 = log.try_clone().map_err(|e| io(&log_path, e))?;
    let mut cmd = Command::new(&opts.verilator);
    cmd.args(["--cc", "--exe", "--build", "-j", "2", "-O2"])
        .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"])
        .args(["--top-module", "clio_fastpath_top"])
        .args(params.iter().flat_map(|p| p.split(' ')))
        .arg("-Mdir")
        .arg(work)
        .args(["-o", HARNESS_BIN])
        .args(&src.sv)
        .arg(&src.harness)
        // Verilator's makefile compiles the per-cycle code with -Os and the
        // construction code without optimisation, which builds quickest.
        .args(["-CFLAGS", "-std=c++17"])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    let status = cmd
        .status()
        .map_err(|e| err(format!("starting {}: {e}", opts.verilator.display())))?;
    if !status.success() {
        let text = fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(25).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(err(format!(
            "Verilator build of the fast-path RTL failed ({status}); last lines of its output:\n{}",
            tail.join("\n")
        )));
    }
    let built = work.join(HARNESS_BIN);
    fs::copy(&built, staged.join(HARNESS_BIN)).map_err(|e| io(&built, e))?;
    fs::write(staged.join("params.txt"), params.join("\n")).map_err(|e| io(staged, e))?;
    Ok(())
}

/// The shared-memory DRAM file; removed when dropped.
struct ShmFile {
    path: PathBuf,
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Counters of an RTL board.
#[derive(Debug, Clone, Copy, Default)]
pub struct RtlStats {
    /// Packets executed by the RTL.
    pub packets: u64,
    /// Response packets the RTL sent.
    pub responses: u64,
    /// TX-ring polls the RTL ran.
    pub polls: u64,
    /// Design clock cycles simulated.
    pub cycles: u64,
    /// Responses whose request was never seen (dropped).
    pub unrouted: u64,
    /// Stream packets pumped ([`Engine::pump`], or to finish an answer of
    /// a board called without a server).
    pub pumped: u64,
    /// READ streams open in the RTL after the last command.
    pub open_streams: u32,
    /// Slow-path dispatcher counters.
    pub slow: clio_slowpath::EngineCounters,
}

/// An emulated memory board whose fast path is the RTL under Verilator.
pub struct RtlBoard {
    child: Child,
    to_sim: Option<ChildStdin>,
    from_sim: Option<ChildStdout>,
    log: File,
    map: MmapMut,
    lay: Layout,
    slow: InProcSlowPath,
    routes: HashMap<(u32, u32), ClientId>,
    route_order: VecDeque<(u32, u32)>,
    /// Responses produced outside a server call, sent at the next one.
    held: Vec<(ClientId, Vec<u8>)>,
    stats: RtlStats,
    failed: Option<String>,
    harness: Harness,
    /// A server serves the board ([`Engine::start`]): open streams are
    /// pumped by the server, not finished at once.
    served: bool,
    /// `network.max_response_bytes`: what one open stream may still owe.
    max_response: u64,
}

impl std::fmt::Debug for RtlBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtlBoard")
            .field("harness", &self.harness.path)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl RtlBoard {
    /// Build (or find) the harness for `cfg`, format board DRAM in a
    /// shared-memory file, start the simulation and fill the free-PA FIFOs
    /// through the slow path.
    pub fn launch(cfg: &BoardConfig, opts: &RtlOptions) -> Result<RtlBoard, BoardError> {
        let dram_len = usize::try_from(cfg.dram.size).map_err(|_| {
            err(format!(
                "dram.size = {}: larger than this host's address space",
                cfg.dram.size
            ))
        })?;
        let lay = Layout::new(cfg, dram_len).map_err(|e| err(format!("fast path: {e}")))?;
        let params = rtl_params(&lay)?;
        let harness = build_harness(opts, &params)?;

        let dir = Path::new("/dev/shm");
        let dir = if dir.is_dir() {
            dir.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let stem = format!("clio-rtlsim-{}-{}", std::process::id(), next_seq());
        let shm = ShmFile {
            path: dir.join(&stem),
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&shm.path)
            .map_err(|e| err(format!("board DRAM file {}: {e}", shm.path.display())))?;
        file.set_len(cfg.dram.size)
            .map_err(|e| err(format!("board DRAM file {}: {e}", shm.path.display())))?;
        // SAFETY: the file was created above and is shared only with the
        // harness, which touches it only while this side waits (lock step).
        let mut map = unsafe { MmapMut::map_mut(&file) }
            .map_err(|e| err(format!("mapping {}: {e}", shm.path.display())))?;
        drop(file);

        let info = {
            let mut fp = FastPath::format(cfg, crate::qemu::cosim_model_options(), &mut map[..])
                .map_err(|e| err(format!("fast path: {e}")))?;
            clio_fastpath_cosim::board::info_payload(&mut fp).map_err(err)?
        };
        let seed = opts.seed.unwrap_or_else(crate::boot_seed);
        let mut slow = InProcSlowPath::boot(cfg, &lay, &map[..], seed).map_err(err)?;
        slow.serve_offloads(
            cfg.network.mtu_payload as usize,
            cfg.network.max_response_bytes as usize,
        )
        .map_err(err)?;
        let cfg_path = std::env::temp_dir().join(format!("{stem}.cfg"));
        let mut cfg_text = clio_fastpath_cosim::files::config_lines(&lay, &info, 0);
        cfg_text.push_str(if cfg.fastpath.read_streams {
            "streams 1\n"
        } else {
            "streams 0\n"
        });
        fs::write(&cfg_path, cfg_text).map_err(|e| err(format!("{}: {e}", cfg_path.display())))?;
        // The harness's stderr: read through our own handle, so the file can
        // be unlinked at once and nothing is left behind however we end.
        let log_path = std::env::temp_dir().join(format!("{stem}.log"));
        let log_err = |e: io::Error| err(format!("{}: {e}", log_path.display()));
        let log_file = File::create(&log_path).map_err(log_err)?;
        let log = File::open(&log_path).map_err(log_err)?;
        let _ = fs::remove_file(&log_path);
        let spawned = Command::new(&harness.path)
            .arg(&shm.path)
            .arg(&cfg_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let _ = fs::remove_file(&cfg_path);
                return Err(err(format!("starting {}: {e}", harness.path.display())));
            }
        };
        let to_sim = child.stdin.take();
        let from_sim = child.stdout.take();
        let mut b = RtlBoard {
            child,
            to_sim,
            from_sim,
            log,
            map,
            lay,
            slow,
            routes: HashMap::new(),
            route_order: VecDeque::new(),
            held: Vec::new(),
            stats: RtlStats::default(),
            failed: None,
            harness,
            served: false,
            max_response: u64::from(cfg.network.max_response_bytes),
        };
        let hello = b.read_frame();
        let _ = fs::remove_file(&cfg_path);
        match hello {
            Ok((b'H', p)) if p.len() == 8 => {}
            Ok((k, _)) => return Err(b.failure(&format!("unexpected first frame {k:#x}"))),
            Err(e) => return Err(b.failure(&format!("the harness did not start: {e}"))),
        }
        // Both processes hold the mapping now; no file is left behind
        // however either ends.
        drop(shm);
        let mut held = Vec::new();
        b.settle(&mut |to, p| held.push((to, p.to_vec())));
        b.held = held;
        b.health()?;
        Ok(b)
    }

    /// The resolved layout of board DRAM.
    pub fn layout(&self) -> &Layout {
        &self.lay
    }

    /// Board DRAM (the shared file) as this side sees it between commands.
    pub fn dram(&self) -> &[u8] {
        fence(Ordering::SeqCst);
        &self.map
    }

    /// The harness this board runs.
    pub fn harness(&self) -> &Harness {
        &self.harness
    }

    /// Counters.
    pub fn stats(&self) -> RtlStats {
        RtlStats {
            slow: *self.slow.counters(),
            ..self.stats
        }
    }

    /// The slow path's offload host's counters (calls served, refused,
    /// unknown ids, ...).
    pub fn offload_stats(&self) -> Option<clio_slowpath::offload::OffloadStats> {
        self.slow.offload_stats()
    }

    /// The slow path (for inspection).
    pub fn slow_path(&self) -> &SlowPath<'static> {
        self.slow.core()
    }

    /// `Ok` while the simulation runs; the reason it stopped otherwise.
    pub fn health(&self) -> Result<(), BoardError> {
        match &self.failed {
            None => Ok(()),
            Some(m) => Err(err(m.clone())),
        }
    }

    /// Place `[va, va + size)` for `pid` through the slow path directly: an
    /// `AllocReq` for a fixed address on the RX ring, as the fast path
    /// forwards an `ALLOC`, then the slow path's PTE writes through a TX-ring
    /// poll of the RTL. For tests that need mapped pages without a client
    /// `ALLOC` (and for RTL builds that do not forward it); the slow path's
    /// reply carries a tag no forwarded request has, so the RTL refuses it
    /// (an error report to the slow path). Returns the placed range.
    pub fn slow_path_alloc(
        &mut self,
        pid: u32,
        va: u64,
        size: u64,
        perms: u8,
    ) -> Result<clio_slowpath::VaRange, BoardError> {
        self.health()?;
        // The slow path serves only PIDs with an open session or held by the
        // board: hold a session-less PID for this hook (Err: a session has it).
        let _ = self.slow.core_mut().reserve_pid(pid);
        let req = Descriptor::AllocReq {
            tag: DIRECT_TAG,
            pid,
            req_id: 0,
            va,
            size,
            perms,
            page_shift: 0,
            fixed: true,
        };
        {
            let rx = &mut self.map[self.lay.rx_ring.start..self.lay.rx_ring.end];
            let mut p =
                Producer::attach(&*rx, Direction::Rx).map_err(|e| err(format!("RX ring: {e}")))?;
            p.push(rx, &req)
                .map_err(|e| err(format!("RX ring: cannot place the request: {e:?}")))?;
        }
        let mut held = std::mem::take(&mut self.held);
        self.settle(&mut |to, p| held.push((to, p.to_vec())));
        self.held = held;
        self.health()?;
        let placed = self
            .slow
            .core()
            .ranges()
            .of_pid(pid)
            .find(|r| r.start == va);
        placed.ok_or_else(|| {
            err(format!(
                "the slow path did not place {size} bytes at {va:#x} for PID {pid} (taken, misaligned, or out of memory; slow-path stats {:?})",
                self.slow.core().stats()
            ))
        })
    }

    fn failure(&mut self, what: &str) -> BoardError {
        use std::io::Seek;
        let _ = self.child.try_wait();
        let mut log = String::new();
        let _ = self.log.rewind();
        let _ = self.log.read_to_string(&mut log);
        let tail: Vec<&str> = log.lines().rev().take(10).collect();
        let tail: Vec<String> = tail.into_iter().rev().map(|l| format!("    {l}")).collect();
        err(format!(
            "RTL simulator {}: {what}{}",
            self.harness.path.display(),
            if tail.is_empty() {
                String::new()
            } else {
                format!("\nits output:\n{}", tail.join("\n"))
            }
        ))
    }

    fn read_frame(&mut self) -> io::Result<(u8, Vec<u8>)> {
        let r = self
            .from_sim
            .as_mut()
            .ok_or_else(|| io::Error::other("harness output closed"))?;
        let mut h = [0u8; 5];
        r.read_exact(&mut h)?;
        let len = u32::from_le_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if len > MAX_FRAME {
            return Err(io::Error::other(format!(
                "frame of {len} bytes (kind {:#x})",
                h[0]
            )));
        }
        let mut p = vec![0u8; len];
        r.read_exact(&mut p)?;
        Ok((h[0], p))
    }

    fn write_frame(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let w = self
            .to_sim
            .as_mut()
            .ok_or_else(|| io::Error::other("harness input closed"))?;
        let len = u32::try_from(payload.len()).map_err(io::Error::other)?;
        let mut f = Vec::with_capacity(5 + payload.len());
        f.push(kind);
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(payload);
        // The pipe write is the release of every DRAM store made so far.
        fence(Ordering::SeqCst);
        w.write_all(&f)
    }

    /// Run one command; responses go to `out` (routed). On a harness
    /// failure the board stops and says why once.
    fn command(
        &mut self,
        kind: u8,
        payload: &[u8],
        sender: Option<(ClientId, (u32, u32))>,
        out: &mut dyn FnMut(ClientId, &[u8]),
    ) {
        if self.failed.is_some() {
            return;
        }
        let r = self.command_inner(kind, payload, sender, out);
        fence(Ordering::SeqCst);
        if let Err(e) = r {
            let what = match kind {
                b'P' => "executing a packet",
                b'S' => "pumping a stream packet",
                _ => "polling the TX ring",
            };
            let m = self.failure(&format!("{what}: {e}")).0;
            eprintln!("clio-emu: fast path (RTL) stopped: {m}");
            self.failed = Some(m);
        }
    }

    fn command_inner(
        &mut self,
        kind: u8,
        payload: &[u8],
        sender: Option<(ClientId, (u32, u32))>,
        out: &mut dyn FnMut(ClientId, &[u8]),
    ) -> io::Result<()> {
        self.write_frame(kind, payload)?;
        loop {
            match self.read_frame()? {
                (b'O', p) => {
                    self.stats.responses += 1;
                    let key = (p.len() >= HEADER_LEN).then(|| {
                        let v = Packet::new_unchecked(&p[..]);
                        (v.pid(), v.req_id())
                    });
                    let to = match (sender, key) {
                        (Some((c, k)), Some(r)) if k == r => Some(c),
                        (s, r) => r
                            .and_then(|r| self.routes.get(&r).copied())
                            .or(s.map(|(c, _)| c)),
                    };
                    match to {
                        Some(c) => out(c, &p),
                        None => self.stats.unrouted += 1,
                    }
                }
                (b'D', p) if p.len() == 12 => {
                    let mut c = [0u8; 8];
                    c.copy_from_slice(&p[..8]);
                    self.stats.cycles = u64::from_le_bytes(c);
                    self.stats.open_streams = u32::from_le_bytes([p[8], p[9], p[10], p[11]]);
                    return Ok(());
                }
                (b'E', p) => {
                    return Err(io::Error::other(String::from_utf8_lossy(&p).into_owned()))
                }
                (k, _) => return Err(io::Error::other(format!("unexpected frame {k:#x}"))),
            }
        }
    }

    fn remember(&mut self, key: (u32, u32), from: ClientId) {
        if self.routes.insert(key, from).is_none() {
            self.route_order.push_back(key);
            if self.route_order.len() > ROUTES {
                if let Some(old) = self.route_order.pop_front() {
                    self.routes.remove(&old);
                }
            }
        }
    }

    fn ring_index(&self, ring: Span, field: clio_wire::Field) -> u32 {
        RingMemory::load_u32(&self.map[ring.start..ring.end], field)
    }

    /// Run the slow path, and the RTL's TX-ring intake whenever the slow
    /// path left descriptors there, until neither has anything to do.
    fn settle(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) {
        // Each round moves at least one descriptor or stops; the bound only
        // guards against a livelock bug turning into a hang.
        for _ in 0..1_000_000 {
            if self.failed.is_some() {
                return;
            }
            let slow_moved = self.slow.step(&mut self.map);
            let tail = self.ring_index(self.lay.tx_ring, header_field::TAIL);
            let head = self.ring_index(self.lay.tx_ring, header_field::HEAD);
            let mut consumed = false;
            if head != tail {
                self.stats.polls += 1;
                self.command(b'R', &[], None, out);
                consumed = self.ring_index(self.lay.tx_ring, header_field::TAIL) != tail;
            }
            if !slow_moved && !consumed {
                return;
            }
        }
    }

    fn flush_held(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) {
        for (to, p) in self.held.drain(..) {
            out(to, &p);
        }
    }

    /// Pump one packet of the open streams (`S`); returns the datagrams it
    /// sent (one, or none when no stream is open).
    fn pump_one(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        if self.stats.open_streams == 0 || self.failed.is_some() {
            return 0;
        }
        let mut n = 0;
        self.command(b'S', &[], None, &mut |to, p| {
            n += 1;
            out(to, p)
        });
        self.stats.pumped += 1;
        // The packet's translation may have taken a first-touch fault.
        let rx = self.lay.rx_ring;
        if self.ring_index(rx, header_field::HEAD) != self.ring_index(rx, header_field::TAIL) {
            self.settle(out);
        }
        n
    }
}

impl Engine for RtlBoard {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        self.flush_held(out);
        // An empty datagram is no AXI-stream packet; the board sees nothing.
        if packet.is_empty() {
            return;
        }
        let key = (packet.len() >= HEADER_LEN).then(|| {
            let v = Packet::new_unchecked(packet);
            (v.pid(), v.req_id())
        });
        if let Some(k) = key {
            self.remember(k, from);
        }
        self.stats.packets += 1;
        self.command(b'P', packet, Some((from, key.unwrap_or((0, 0)))), out);
        let rx = self.lay.rx_ring;
        if self.ring_index(rx, header_field::HEAD) != self.ring_index(rx, header_field::TAIL) {
            self.settle(out);
        }
        // Without a server nobody pumps: finish every answer now.
        while !self.served && self.stats.open_streams != 0 && self.failed.is_none() {
            self.pump_one(out);
        }
    }

    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.flush_held(out);
        self.settle(out);
        None
    }

    fn start(&mut self) {
        self.served = true;
    }

    fn pump(&mut self, max: usize, out: &mut dyn FnMut(ClientId, &[u8])) -> usize {
        self.flush_held(out);
        let mut n = 0;
        while n < max && self.stats.open_streams != 0 && self.failed.is_none() {
            n += self.pump_one(out).max(1);
        }
        n
    }

    fn owed_bytes(&self) -> u64 {
        // An upper bound: each open stream owes at most one bound-sized answer.
        u64::from(self.stats.open_streams).saturating_mul(self.max_response)
    }
}

impl Drop for RtlBoard {
    fn drop(&mut self) {
        let _ = self.write_frame(b'Q', &[]);
        // Closing both pipes ends the harness even if it is mid-write.
        self.to_sim = None;
        self.from_sim = None;
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emulator() -> BoardConfig {
        BoardConfig::embedded("emulator").unwrap()
    }

    #[test]
    fn params_follow_the_layout() {
        let cfg = emulator();
        let lay = Layout::new(&cfg, cfg.dram.size as usize).unwrap();
        let p = rtl_params(&lay).unwrap();
        assert!(p.contains(&"-GADDR_WIDTH=32".to_string()), "{p:?}");
        assert!(
            p.contains(&format!("-GDEDUP_ENTRIES={}", lay.dedup_entries)),
            "{p:?}"
        );
        assert!(
            p.contains(&format!("--unroll-count {}", lay.dedup_entries)),
            "{p:?}"
        );
        // DRAM reaching past 4 GiB widens the AXI address; past 2^48 is refused.
        let wide = Layout {
            dram_base: 1 << 32,
            ..lay
        };
        assert!(rtl_params(&wide)
            .unwrap()
            .contains(&"-GADDR_WIDTH=33".to_string()));
        let huge = Layout {
            dram_base: 1 << 50,
            ..lay
        };
        let e = rtl_params(&huge).unwrap_err().to_string();
        assert!(e.contains("48") && e.contains("dram"), "{e}");
    }

    #[test]
    fn offload_answer_buffer_follows_the_response_bound() {
        let cfg = emulator();
        let lay = Layout::new(&cfg, cfg.dram.size as usize).unwrap();
        // The emulator's 64 KiB bound, stated by INFO, is held whole.
        assert_eq!(lay.max_resp, 64 * 1024);
        assert!(rtl_params(&lay)
            .unwrap()
            .contains(&"-GOFFLOAD_RESP_BYTES=65536".to_string()));
        let small = Layout {
            max_resp: 2048,
            ..lay
        };
        assert_eq!(rtl_offload_answer(&small), 2048);
        let below_mtu = Layout {
            max_resp: 1024,
            ..lay
        };
        assert_eq!(rtl_offload_answer(&below_mtu), lay.mtu);
        // Past the firmware's answer record: its cap.
        let big = Layout {
            max_resp: 1 << 20,
            ..lay
        };
        assert_eq!(rtl_offload_answer(&big), crate::slow::OFFLOAD_MAX_ANSWER);
    }

    #[test]
    fn sources_put_packages_first() {
        let o = RtlOptions::new();
        let s = Sources::find(&o.fastpath_dir).unwrap();
        let names: Vec<String> =
            s.sv.iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
        assert_eq!(names.first().map(String::as_str), Some("clio_pkg.sv"));
        assert!(names.iter().any(|n| n == "clio_fastpath_top.sv"));
        let e = Sources::find(Path::new("/nonexistent"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/rtl") && e.contains("CLIO_FASTPATH_DIR"),
            "{e}"
        );
    }

    #[test]
    fn cache_key_hash_is_stable() {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        fnv1a(&mut h, b"a");
        // FNV-1a 64 of "a" (published test vector).
        assert_eq!(h, 0xaf63_dc4c_8601_ec8c);
    }
}
