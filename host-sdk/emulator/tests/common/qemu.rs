//! The QEMU co-simulation's shared setup: the repository, the emulator
//! board config, the QEMU binary (a skip outside CI when missing) and the
//! firmware image built for that config.

use std::path::{Path, PathBuf};
use std::process::Command;

use clio_config::BoardConfig;
use clio_emu::qemu::find_qemu;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The emulator board config.
pub fn board() -> BoardConfig {
    clio_config::load(root().join("board-configs/emulator.toml")).expect("emulator.toml loads")
}

/// The QEMU binary, or `None` (skip) outside CI.
pub fn qemu_or_skip() -> Option<PathBuf> {
    if let Some(q) = find_qemu() {
        return Some(q);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(!ci, "CI: qemu-system-aarch64 is required for the co-simulation tests (Debian package qemu-system-arm)");
    eprintln!("skipping the QEMU co-simulation: qemu-system-aarch64 not found (install qemu-system-arm or set QEMU=path)");
    None
}

/// The firmware ELF for the emulator board config.
pub fn image() -> PathBuf {
    if let Some(p) = std::env::var_os("CLIO_COSIM_IMAGE") {
        return PathBuf::from(p);
    }
    // The same directory ci/suites/40-cosim-qemu.sh builds in.
    let target_dir = std::env::var_os("CLIO_COSIM_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root().join("target"))
                .join("cosim-image")
        });
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .env(
            "CLIO_BOARD_CONFIG",
            root().join("board-configs/emulator.toml"),
        )
        .env("CARGO_TARGET_DIR", &target_dir)
        .args([
            "build",
            "-q",
            "--manifest-path",
            "firmware-arm/image/Cargo.toml",
        ])
        .args(["--target", "aarch64-unknown-none", "--release"])
        .status()
        .expect("running cargo to build the firmware image");
    assert!(status.success(), "building the firmware image failed");
    target_dir.join("aarch64-unknown-none/release/clio-firmware")
}

/// The firmware board for [`board`] launched in `qemu` and served over UDP
/// on loopback, and a client config patient enough for an emulated ARM
/// (seconds per answer on a loaded host).
pub fn serve_firmware(qemu: PathBuf) -> (clio_emu::ServerHandle, clio::ClientConfig) {
    let b = board();
    let mut opts = clio_emu::qemu::QemuOptions::new(image(), b);
    opts.qemu = qemu;
    let fw = clio_emu::QemuBoard::launch(opts).unwrap_or_else(|e| panic!("{e}"));
    let server = clio_emu::spawn(
        fw,
        "127.0.0.1:0".parse().unwrap(),
        clio_emu::ServeOptions::default(),
    )
    .unwrap();
    let client = clio::ClientConfig {
        request_timeout_ns: 20_000_000_000,
        retry_budget: 64,
        ..clio::ClientConfig::from_board(&b)
    };
    (server, client)
}
