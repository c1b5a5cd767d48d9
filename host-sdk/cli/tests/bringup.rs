//! `clio bringup` over both transports against stand-ins (issue #17,
//! finding 9): PCIe through files standing in for the XDMA driver's nodes
//! (clio-xdma's `FileCard`, serving the emulated board), UDP against the
//! emulated board. The board config comes from the board's identity; a
//! `--config` for another board is an error naming both.

use std::process::{Command, Output, Stdio};

use clio_config::BoardConfig;
use clio_xdma::FileCard;

fn clio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run clio")
}

/// A software card on stand-in files whose fast path is the emulated
/// `board` (alloc, read, write, atomics, info), as the U200's translator
/// would put the Clio packets in front of a memory board.
fn card(dir: &tempfile::TempDir, board: &str) -> (clio_xdma::CardThread, String) {
    let card = FileCard::create(dir.path(), "xdma0", FileCard::DEFAULT_GEOMETRY).unwrap();
    let prefix = card.prefix().display().to_string();
    let mut b = clio_emu::Board::new(&BoardConfig::embedded(board).unwrap()).unwrap();
    let thread = card.spawn(move |pkt, out| b.handle(0, pkt, &mut |_, p| out(p)));
    (thread, prefix)
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn rows(v: &serde_json::Value) -> Vec<(String, bool)> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["check"].as_str().unwrap().to_string(),
                c["ok"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn xdma_bringup_probes_nodes_status_link_and_dma_alignment_then_runs_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (thread, prefix) = card(&dir, "emulator");
    let out = clio(&[
        "bringup",
        "--xdma",
        &prefix,
        "--mem-test-bytes",
        "65536",
        "--max-p50-us",
        "200000",
        "--json",
    ]);
    thread.stop().unwrap();
    assert!(
        out.status.success(),
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(
        v["config"], "emulator",
        "config picked from the card's identity"
    );
    assert_eq!(v["board"], format!("xdma://{prefix}"));
    let names: Vec<String> = rows(&v)
        .into_iter()
        .map(|(n, ok)| {
            assert!(ok, "{n} failed: {v}");
            n
        })
        .collect();
    assert_eq!(
        names,
        [
            "xdma nodes",
            "status register",
            "link",
            "card counters",
            "dma alignment",
            "identity",
            "epoch",
            "link mtu",
            "memory test",
            "page faults",
            "atomics",
            "latency"
        ]
    );
}

#[test]
fn xdma_bringup_without_a_driver_names_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("xdma7");
    let out = clio(&["bringup", "--xdma", prefix.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("no XDMA device at") && err.contains("xdma7"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("xdma7_user"));
}

#[test]
fn a_config_for_another_board_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let (thread, prefix) = card(&dir, "emulator");
    let out = clio(&["bringup", "--xdma", &prefix, "--config", "zcu106"]);
    thread.stop().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--config zcu106 is for board 'zcu106', but the board at xdma://")
            && err.contains("says it is 'emulator'"),
        "{err}"
    );
}

/// Before: with --addr the emulator config was used whatever the board was.
#[test]
fn udp_bringup_takes_the_config_the_board_names() {
    let cfg = BoardConfig::embedded("zcu106").unwrap();
    let server = clio_emu::spawn(
        clio_emu::Board::new(&cfg).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        clio_emu::ServeOptions::default(),
    )
    .unwrap();
    let addr = server.addr().to_string();
    let out = clio(&[
        "bringup",
        "--addr",
        &addr,
        "--mem-test-bytes",
        "65536",
        "--max-p50-us",
        "200000",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["config"], "zcu106");
    assert_eq!(rows(&v)[0], ("arp".to_string(), true));
    let out = clio(&["bringup", "--addr", &addr, "--config", "emulator"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is for board 'emulator', but the board at udp://")
            && err.contains("'zcu106'"),
        "{err}"
    );
}

/// Before: a memory test larger than the board's data region failed as
/// "board rejected the request as malformed". Now the board answers
/// TOO_LARGE and the row names the flag, the value and the region's size.
#[test]
fn a_memory_test_larger_than_the_data_region_says_so() {
    let cfg = BoardConfig::embedded("emulator").unwrap();
    let server = clio_emu::spawn(
        clio_emu::Board::new(&cfg).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        clio_emu::ServeOptions::default(),
    )
    .unwrap();
    let addr = server.addr().to_string();
    let out = clio(&[
        "bringup",
        "--addr",
        &addr,
        "--mem-test-bytes",
        "200000000",
        "--max-p50-us",
        "200000",
        "--json",
    ]);
    let v = json(&out);
    let row = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "memory test")
        .expect("a memory test row")
        .clone();
    assert_eq!(row["ok"], false);
    let detail = row["detail"].as_str().unwrap();
    assert!(
        detail.contains("--mem-test-bytes 200000000: larger than the board can ever allocate")
            && detail.contains(&format!("{} bytes", cfg.regions.data.size))
            && !detail.contains("malformed"),
        "{detail}"
    );
}
