//! `clio sim`: serve an emulated board over UDP.

use anyhow::{Context, Result};
use clap::Args;
use clio_emu::qemu::QemuOptions;
use clio_emu::rtl::{RtlBoard, RtlOptions};
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
    pub image: Option<std::path::PathBuf>,
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
fn listen_addr(listen: &str) -> Result<std::net::SocketAddr> {
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

/// Run `clio sim`. Every option is checked before the socket is bound, and
/// "serving on" is printed once the board answers (QEMU has booted, the RTL
/// harness is built), so a script may start its clients when it sees it.
pub fn run(a: &SimArgs) -> Result<()> {
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
    if a.fast_path == FastPathKind::Rtl && a.slow_path != SlowPathKind::Inproc {
        anyhow::bail!("--fast-path rtl runs the slow path in process; it cannot be combined with --slow-path qemu");
    }
    let image = match a.slow_path {
        SlowPathKind::Qemu => Some(
            a.image
                .as_ref()
                .context("--slow-path qemu needs --image (the firmware ELF)")?,
        ),
        SlowPathKind::Inproc => None,
    };
    if let Some(image) = image {
        if !image.is_file() {
            anyhow::bail!("--image {}: no such file", image.display());
        }
    }
    let socket = std::net::UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
    let serving = |socket: &std::net::UdpSocket| -> Result<()> {
        eprintln!(
            "clio sim: board '{}' ({} MiB DRAM, {} KiB pages, {} TLB entries) serving on udp://{}",
            cfg.board.name,
            cfg.dram.size >> 20,
            cfg.pages.default_size >> 10,
            cfg.tlb.entries,
            socket.local_addr()?
        );
        Ok(())
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    match image {
        None if a.fast_path == FastPathKind::Rtl => {
            let board = RtlBoard::launch(&cfg, &RtlOptions::new()).map_err(anyhow::Error::msg)?;
            let h = board.harness();
            eprintln!(
                "clio sim: fast path is the RTL under Verilator ({}{}), ready",
                h.path.display(),
                if h.built {
                    format!(", built in {:.0} s", h.build_time.as_secs_f64())
                } else {
                    String::new()
                }
            );
            serving(&socket)?;
            clio_emu::server::serve(board, socket, opts, &stop)?;
        }
        None => {
            let mut board = Board::new(&cfg).map_err(anyhow::Error::msg)?;
            // Clio-KV, Clio-MV and Clio-DF as offloads 1, 2 and 3 (issue
            // #16); each takes memory only when used.
            board
                .register_offload(clio_kv::OFFLOAD_ID, Box::<clio_kv::KvOffload>::default())
                .map_err(anyhow::Error::msg)?;
            board
                .register_offload(clio_mv::OFFLOAD_ID, Box::<clio_mv::MvOffload>::default())
                .map_err(anyhow::Error::msg)?;
            board
                .register_offload(clio_df::OFFLOAD_ID, Box::<clio_df::DfOffload>::default())
                .map_err(anyhow::Error::msg)?;
            serving(&socket)?;
            clio_emu::server::serve(board, socket, opts, &stop)?;
        }
        Some(image) => {
            let mut qopts = QemuOptions::new(image, cfg);
            if let Some(q) = clio_emu::qemu::find_qemu() {
                qopts.qemu = q;
            }
            let mut board = QemuBoard::launch(qopts).map_err(anyhow::Error::msg)?;
            eprintln!(
                "clio sim: slow path is the firmware in QEMU, ready in {:.2} s (decode its UART with `clio logs --elf {} --input {}`)",
                board.firmware().boot_time().as_secs_f64(),
                image.display(),
                board.firmware().log_path().display()
            );
            serving(&socket)?;
            clio_emu::server::serve(board, socket, opts, &stop)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::listen_addr;

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
}
