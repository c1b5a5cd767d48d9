//! Ring round trip and alloc latency with the slow path in QEMU next to the
//! in-process slow path, as JSON (what `clio bench slowpath --slow-path qemu
//! --json` reports).
//!
//! ```sh
//! CLIO_BOARD_CONFIG=board-configs/emulator.toml cargo build --release \
//!     --manifest-path firmware-arm/image/Cargo.toml --target aarch64-unknown-none
//! cargo run --release -p clio-emu --example slowpath_bench -- \
//!     --image firmware-arm/image/target/aarch64-unknown-none/release/clio-firmware \
//!     [--board board-configs/emulator.toml] [--iterations 500]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clio_emu::qemu::{bench_slowpath, find_qemu, QemuOptions};

fn usage() -> ExitCode {
    eprintln!("usage: slowpath_bench --image ELF [--board TOML] [--iterations N]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut image = std::env::var_os("CLIO_COSIM_IMAGE").map(PathBuf::from);
    let mut board = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../board-configs/emulator.toml"
    ));
    let mut iterations = 500usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let Some(v) = args.next() else { return usage() };
        match a.as_str() {
            "--image" => image = Some(PathBuf::from(v)),
            "--board" => board = PathBuf::from(v),
            "--iterations" => match v.parse() {
                Ok(n) => iterations = n,
                Err(_) => {
                    eprintln!("--iterations: `{v}` is not a number");
                    return ExitCode::from(2);
                }
            },
            _ => return usage(),
        }
    }
    let Some(image) = image else { return usage() };
    let cfg = match clio_config::load(&board) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(qemu) = find_qemu() else {
        eprintln!("qemu-system-aarch64 not found (install qemu-system-arm or set QEMU=path)");
        return ExitCode::FAILURE;
    };
    let mut opts = QemuOptions::new(image, cfg);
    opts.qemu = qemu;
    match bench_slowpath(opts, iterations) {
        Ok(report) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
