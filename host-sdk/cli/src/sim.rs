//! `clio sim`: serve an emulated board over UDP.

use std::fmt;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use clap::Args;
use clio_config::BoardConfig;
use clio_emu::qemu::QemuOptions;
use clio_emu::rtl::{RtlBoard, RtlOptions};
use clio_emu::server::ServeStats;
use clio_emu::{Board, FaultConfig, QemuBoard, ServeOptions};

use crate::board_arg::load_board;

/// Serve an emulated memory board until interrupted.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Board config: a TOML path or an embedded name.
    #[arg(long, default_value = "emulator")]
    pub board: String,
    /// Address to listen on (default: the config's network.ipv4 and udp_port).
    #[arg(long)]
    pub listen: Option<String>,
    /// Faults on packets arriving at the board, e.g. `drop=0.05,reorder=0.1,window_us=200,seed=1`.
    #[arg(long, default_value = "")]
    pub faults_in: String,
    /// Faults on packets the board sends (same syntax).
    #[arg(long, default_value = "")]
    pub faults_out: String,
    /// Where the slow path runs: in this process, or the firmware image in QEMU's ZynqMP model.
    #[arg(long, value_enum, default_value_t = SlowPathKind::Inproc)]
    pub slow_path: SlowPathKind,
    /// What runs the fast path: the Rust reference model, or the RTL
    /// (`ip/fastpath/rtl`) simulated with Verilator (built on first use;
    /// needs `verilator` on PATH; the slow path then runs in process).
    #[arg(long, value_enum, default_value_t = FastPathKind::Model)]
    pub fast_path: FastPathKind,
    /// Firmware ELF for `--slow-path qemu`, built for the same board config
    /// (`CLIO_BOARD_CONFIG=<config> cargo build --manifest-path firmware-arm/image/Cargo.toml
    /// --target aarch64-unknown-none --release`).
    #[arg(long)]
    pub image: Option<PathBuf>,
}

/// Where an emulated board's slow path runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SlowPathKind {
    /// The slow-path library in this process.
    Inproc,
    /// The firmware image under qemu-system-aarch64, sharing DRAM through a file.
    Qemu,
}

/// What runs an emulated board's fast path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FastPathKind {
    /// The Rust reference model (`ip/fastpath`).
    Model,
    /// The fast-path RTL under Verilator, in a harness process sharing DRAM.
    Rtl,
}

/// The `--listen` address: an `address:port` or `host:port` (names resolve,
/// like `--addr` elsewhere); an IPv4 result is preferred.
fn listen_addr(listen: &str) -> Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    let addrs: Vec<_> = listen
        .to_socket_addrs()
        .with_context(|| format!("--listen '{listen}' is not a host:port"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .with_context(|| format!("--listen '{listen}' resolves to no address"))
}

/// What `clio sim` reports while it starts; `Display` is the line the
/// binary prints after `clio sim: ` on standard error.
#[derive(Debug, Clone, PartialEq)]
pub enum SimEvent {
    /// The fast path is the RTL under Verilator and its harness is ready.
    RtlReady {
        /// The harness executable.
        harness: PathBuf,
        /// Seconds spent building it now (`None`: an earlier build was reused).
        build_secs: Option<f64>,
    },
    /// The slow path is the firmware in QEMU and it has booted.
    QemuReady {
        /// Seconds from launch until the firmware answered.
        boot_secs: f64,
        /// The firmware ELF (for decoding its log).
        image: PathBuf,
        /// Where QEMU writes the firmware's UART.
        log: PathBuf,
    },
    /// The board answers on `addr` (the last event before serving).
    Serving {
        /// The board config's name.
        board: String,
        /// DRAM, MiB.
        dram_mib: u64,
        /// Default page size, KiB.
        page_kib: u64,
        /// TLB entries.
        tlb_entries: u32,
        /// The bound UDP address.
        addr: SocketAddr,
    },
}

impl fmt::Display for SimEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimEvent::RtlReady {
                harness,
                build_secs,
            } => write!(
                f,
                "fast path is the RTL under Verilator ({}{}), ready",
                harness.display(),
                build_secs.map_or(String::new(), |s| format!(", built in {s:.0} s"))
            ),
            SimEvent::QemuReady {
                boot_secs,
                image,
                log,
            } => write!(
                f,
                "slow path is the firmware in QEMU, ready in {boot_secs:.2} s (decode its UART with `clio logs --elf {} --input {}`)",
                image.display(),
                log.display()
            ),
            SimEvent::Serving {
                board,
                dram_mib,
                page_kib,
                tlb_entries,
                addr,
            } => write!(
                f,
                "board '{board}' ({dram_mib} MiB DRAM, {page_kib} KiB pages, {tlb_entries} TLB entries) serving on udp://{addr}"
            ),
        }
    }
}

/// What serves: the engine chosen by `--fast-path`/`--slow-path`.
#[derive(Debug, Clone, PartialEq)]
enum Engine {
    /// The reference model with the in-process slow path.
    Model,
    /// The RTL under Verilator, slow path in process.
    Rtl,
    /// The reference model with the firmware image in QEMU.
    Qemu(PathBuf),
}

/// `clio sim`'s options, checked: everything [`serve`] needs before it
/// binds.
#[derive(Debug)]
struct Checked {
    cfg: BoardConfig,
    addr: SocketAddr,
    opts: ServeOptions,
    engine: Engine,
}

/// Checks every option (config, address, faults, the engine and its
/// image) without binding or launching anything.
fn check(a: &SimArgs) -> Result<Checked> {
    let cfg = load_board(&a.board)?;
    let listen = match &a.listen {
        Some(l) => l.clone(),
        None => format!(
            "{}:{}",
            std::net::Ipv4Addr::from(cfg.network.ipv4),
            cfg.network.udp_port
        ),
    };
    let addr = listen_addr(&listen)?;
    let opts = ServeOptions {
        inbound: FaultConfig::parse(&a.faults_in)
            .map_err(anyhow::Error::msg)
            .context("--faults-in")?,
        outbound: FaultConfig::parse(&a.faults_out)
            .map_err(anyhow::Error::msg)
            .context("--faults-out")?,
        ..ServeOptions::for_board(&cfg)
    };
    let engine = match (a.fast_path, a.slow_path) {
        (FastPathKind::Rtl, SlowPathKind::Qemu) => anyhow::bail!(
            "--fast-path rtl runs the slow path in process; it cannot be combined with --slow-path qemu"
        ),
        (FastPathKind::Rtl, SlowPathKind::Inproc) => Engine::Rtl,
        (FastPathKind::Model, SlowPathKind::Inproc) => Engine::Model,
        (FastPathKind::Model, SlowPathKind::Qemu) => {
            let image = a
                .image
                .as_ref()
                .context("--slow-path qemu needs --image (the firmware ELF)")?;
            if !image.is_file() {
                anyhow::bail!("--image {}: no such file", image.display());
            }
            Engine::Qemu(image.clone())
        }
    };
    Ok(Checked {
        cfg,
        addr,
        opts,
        engine,
    })
}

/// The model board `clio sim` serves: Clio-KV, Clio-MV and Clio-DF
/// registered as offloads 1, 2 and 3 (issue #16); each takes memory only
/// when used.
pub fn model_board(cfg: &BoardConfig) -> Result<Board> {
    let mut board = Board::new(cfg).map_err(anyhow::Error::msg)?;
    board
        .register_offload(clio_kv::OFFLOAD_ID, Box::<clio_kv::KvOffload>::default())
        .map_err(anyhow::Error::msg)?;
    board
        .register_offload(clio_mv::OFFLOAD_ID, Box::<clio_mv::MvOffload>::default())
        .map_err(anyhow::Error::msg)?;
    board
        .register_offload(clio_df::OFFLOAD_ID, Box::<clio_df::DfOffload>::default())
        .map_err(anyhow::Error::msg)?;
    Ok(board)
}

/// Runs `clio sim` on this thread until `stop` is set (and a datagram,
/// even an empty one, wakes the server). Every option is checked before
/// the socket is bound, and [`SimEvent::Serving`] is reported once the
/// board answers (QEMU has booted, the RTL harness is built), so a script
/// may start its clients when it sees it.
pub fn serve(a: &SimArgs, stop: &AtomicBool, on: &mut dyn FnMut(SimEvent)) -> Result<ServeStats> {
    let Checked {
        cfg,
        addr,
        opts,
        engine,
    } = check(a)?;
    let socket = UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
    let serving = SimEvent::Serving {
        board: cfg.board.name.to_string(),
        dram_mib: cfg.dram.size >> 20,
        page_kib: cfg.pages.default_size >> 10,
        tlb_entries: cfg.tlb.entries,
        addr: socket.local_addr()?,
    };
    let stats = match engine {
        Engine::Rtl => {
            let board = RtlBoard::launch(&cfg, &RtlOptions::new()).map_err(anyhow::Error::msg)?;
            let h = board.harness();
            on(SimEvent::RtlReady {
                harness: h.path.clone(),
                build_secs: h.built.then_some(h.build_time.as_secs_f64()),
            });
            on(serving);
            clio_emu::server::serve(board, socket, opts, stop)?
        }
        Engine::Model => {
            let board = model_board(&cfg)?;
            on(serving);
            clio_emu::server::serve(board, socket, opts, stop)?
        }
        Engine::Qemu(image) => {
            let mut qopts = QemuOptions::new(&image, cfg);
            if let Some(q) = clio_emu::qemu::find_qemu() {
                qopts.qemu = q;
            }
            let mut board = QemuBoard::launch(qopts).map_err(anyhow::Error::msg)?;
            on(SimEvent::QemuReady {
                boot_secs: board.firmware().boot_time().as_secs_f64(),
                image,
                log: board.firmware().log_path().to_path_buf(),
            });
            on(serving);
            clio_emu::server::serve(board, socket, opts, stop)?
        }
    };
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    fn args(listen: &str) -> SimArgs {
        SimArgs {
            board: "emulator".into(),
            listen: Some(listen.into()),
            faults_in: String::new(),
            faults_out: String::new(),
            slow_path: SlowPathKind::Inproc,
            fast_path: FastPathKind::Model,
            image: None,
        }
    }

    #[test]
    fn listen_takes_names_and_names_the_flag() {
        let a = listen_addr("localhost:47700").unwrap();
        assert_eq!(a.port(), 47700);
        assert!(a.ip().is_loopback());
        assert_eq!(
            listen_addr("127.0.0.1:5").unwrap(),
            "127.0.0.1:5".parse().unwrap()
        );
        let e = format!("{:#}", listen_addr("no port here").unwrap_err());
        assert!(e.contains("--listen 'no port here'"), "{e}");
    }

    /// Each bad option is named, before anything is bound or launched.
    #[test]
    fn options_are_checked_and_named() {
        let err = |a: &SimArgs| format!("{:#}", check(a).unwrap_err());
        let mut a = args("127.0.0.1:0");
        assert_eq!(check(&a).unwrap().engine, Engine::Model);
        a.faults_in = "drop=2".into();
        assert!(err(&a).contains("--faults-in"), "{}", err(&a));
        a.faults_in.clear();
        a.slow_path = SlowPathKind::Qemu;
        assert!(err(&a).contains("needs --image"), "{}", err(&a));
        a.image = Some("/nonexistent/clio-fw.elf".into());
        assert!(err(&a).contains("/nonexistent/clio-fw.elf"), "{}", err(&a));
        a.fast_path = FastPathKind::Rtl;
        assert!(err(&a).contains("cannot be combined"), "{}", err(&a));
        a.slow_path = SlowPathKind::Inproc;
        assert_eq!(check(&a).unwrap().engine, Engine::Rtl);
        a.board = "no-such-board".into();
        assert!(check(&a).is_err());
    }

    /// `serve` reports where it serves, answers a client there (with the
    /// offloads registered), and returns once stopped.
    #[test]
    fn serves_a_client_until_stopped() {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let server = std::thread::spawn(move || {
            serve(&args("127.0.0.1:0"), &flag, &mut |e| tx.send(e).unwrap())
        });
        let SimEvent::Serving { addr, board, .. } =
            rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap()
        else {
            panic!("the model board reports only that it serves")
        };
        assert_eq!(board, "emulator");
        let cfg = load_board("emulator").unwrap();
        let mut s = clio::Session::open(addr, clio::ClientConfig::from_board(&cfg)).unwrap();
        let al = s.ralloc(4096, clio_wire::payload::perms::RW).unwrap();
        s.rwrite(al.va + 10, b"sim").unwrap();
        let mut b = [0u8; 3];
        s.rread(al.va + 10, &mut b).unwrap();
        assert_eq!(&b, b"sim");
        stop.store(true, Ordering::SeqCst);
        UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .send_to(&[], addr)
            .unwrap();
        let stats = server.join().unwrap().unwrap();
        assert!(stats.received >= 4 && stats.sent >= 3, "{stats:?}");
    }
}
