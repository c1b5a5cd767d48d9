//! The `fwlog` binary on the golden captures.

use std::path::PathBuf;
use std::process::Command;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn fwlog(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fwlog"))
        .args(args)
        .output()
        .expect("run fwlog")
}

#[test]
fn decode_prints_the_golden_log() {
    let (elf, uart) = (data("boot.elf"), data("boot.uart"));
    let out = fwlog(&[
        "decode".as_ref(),
        "--elf".as_ref(),
        elf.as_os_str(),
        uart.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(data("boot.log")).unwrap()
    );
}

#[test]
fn decode_json_gives_one_object_per_line() {
    let (elf, uart) = (data("fault.elf"), data("fault.uart"));
    let out = fwlog(&[
        "decode".as_ref(),
        "--json".as_ref(),
        "--elf".as_ref(),
        elf.as_os_str(),
        uart.as_os_str(),
    ]);
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["level"], "error");
    assert!(last["message"]
        .as_str()
        .unwrap()
        .starts_with("data abort: DFSC=0x05"));
}

#[test]
fn manifest_writes_json_with_the_build_id() {
    let dir = std::env::temp_dir().join(format!("fwlog-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("manifest.json");
    let elf = data("boot.elf");
    let out = fwlog(&[
        "manifest".as_ref(),
        "--elf".as_ref(),
        elf.as_os_str(),
        "--out".as_ref(),
        out_path.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: clio_fwlog::ImageManifest =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(m.board, "zcu106");
    let log = std::fs::read_to_string(data("boot.log")).unwrap();
    assert!(log
        .lines()
        .next()
        .unwrap()
        .contains(&format!("build {}", m.build_id)));
}

#[test]
fn a_missing_elf_fails_naming_the_file() {
    let (elf, uart) = (data("no-such.elf"), data("boot.uart"));
    let out = fwlog(&[
        "decode".as_ref(),
        "--elf".as_ref(),
        elf.as_os_str(),
        uart.as_os_str(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no-such.elf"), "{err}");
}
