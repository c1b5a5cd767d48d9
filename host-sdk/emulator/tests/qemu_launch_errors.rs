//! `QemuSlowPath::launch` refuses what cannot work before starting QEMU,
//! with an error naming the file or config key (no QEMU needed).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use clio_config::BoardConfig;
use clio_emu::qemu::{Latency, QemuOptions, QemuSlowPath};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A real firmware ELF (a boot-test build kept as decoder test data).
fn some_image() -> PathBuf {
    root().join("firmware-arm/fwlog/tests/data/boot.elf")
}

fn emulator() -> BoardConfig {
    clio_config::load(root().join("board-configs/emulator.toml")).unwrap()
}

fn launch_err(opts: QemuOptions) -> std::io::Error {
    match QemuSlowPath::launch(opts) {
        Ok(_) => panic!("launch must fail"),
        Err(e) => e,
    }
}

#[test]
fn image_built_for_another_config_is_refused() {
    let mut opts = QemuOptions::new(some_image(), emulator());
    opts.qemu = PathBuf::from("/nonexistent/qemu");
    let e = launch_err(opts);
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let msg = e.to_string();
    assert!(
        msg.contains("boot.elf") && msg.contains("built for board zcu106"),
        "{msg}"
    );
    assert!(msg.contains("CLIO_BOARD_CONFIG"), "{msg}");
}

#[test]
fn dram_that_cannot_be_guest_ram_is_refused() {
    let mut big = emulator();
    big.dram.size = 4 << 30;
    let e = launch_err(QemuOptions::new(some_image(), big));
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("dram.size"), "{e}");

    let mut moved = emulator();
    moved.dram.base = 0x8_0000_0000;
    let e = launch_err(QemuOptions::new(some_image(), moved));
    assert!(e.to_string().contains("dram.base"), "{e}");
}

#[test]
fn missing_or_foreign_image_is_named() {
    let e = launch_err(QemuOptions::new("/nonexistent/fw.elf", emulator()));
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.to_string().contains("/nonexistent/fw.elf"), "{e}");

    let not_elf = root().join("board-configs/emulator.toml");
    let e = launch_err(QemuOptions::new(&not_elf, emulator()));
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("emulator.toml"), "{e}");
}

#[test]
fn latency_summary() {
    assert!(Latency::of(&mut []).is_none());
    let mut v: Vec<u64> = (1..=200).rev().collect();
    let l = Latency::of(&mut v).unwrap();
    assert_eq!((l.samples, l.min_ns, l.max_ns), (200, 1, 200));
    assert_eq!(l.median_ns, 100);
    assert_eq!(l.p90_ns, 180);
    assert_eq!(l.p99_ns, 198);
    assert_eq!(l.mean_ns, 100);
}

#[test]
fn cosim_parts_can_move_to_the_server_thread() {
    fn send<T: Send>() {}
    send::<QemuSlowPath>();
    send::<clio_fastpath::FastPath<clio_emu::qemu::QemuDram>>();
}
