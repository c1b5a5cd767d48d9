//! `clio rack` starts a controller and registered nodes; `clio rack status` names an
//! unreachable controller; `clio bench rack` runs and loses no write (migration and
//! re-replication, paused and tracked).

use std::process::Command;

use serde_json::Value;

#[test]
fn rack_prints_its_layout_with_every_node_live() {
    let log = std::env::temp_dir().join(format!("clio-rack-cli-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "rack",
            "--nodes",
            "2",
            "--listen",
            "127.0.0.1:0",
            "--for-secs",
            "0",
            "--json",
        ])
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "clio rack failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let nodes = r["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 2);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["id"], i + 1);
        assert_eq!(n["live"], true);
        assert_eq!(n["epoch"], 1);
        assert_eq!(n["name"], format!("mn{i}"));
    }
    // The log is durable: a second start replays it and the nodes re-register
    // with higher epochs.
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "rack",
            "--nodes",
            "2",
            "--listen",
            "127.0.0.1:0",
            "--for-secs",
            "0",
            "--json",
        ])
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run clio");
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(r["nodes"][0]["epoch"], 2);
    // Keyed by default: the key file beside the log, reused by the second start.
    let key = log.with_extension("log.key");
    assert_eq!(r["key_file"], key.display().to_string());
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(&key);
}

#[test]
fn status_of_an_unreachable_controller_names_it() {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = s.local_addr().unwrap();
    drop(s);
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["rack", "status", "--controller"])
        .arg(addr.to_string())
        .output()
        .expect("run clio");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("rack controller {addr}")),
        "{stderr}"
    );
}

#[test]
fn bench_rack_json_loses_no_write() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "bench",
            "rack",
            "--secs",
            "0.1",
            "--threads",
            "1",
            "--allocs",
            "5",
            "--chunks",
            "1",
            "--json",
        ])
        .output()
        .expect("run clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "clio bench rack failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(r["throughput"].as_array().unwrap().len(), 8);
    for p in r["throughput"].as_array().unwrap() {
        assert!(p["ops"].as_u64().unwrap() > 0, "{p}");
    }
    assert!(r["alloc"]["controller"]["p50_ns"].as_f64().unwrap() > 0.0);
    for p in r["throughput"].as_array().unwrap() {
        assert!(p["model_ops_per_s"].as_f64().unwrap() > 0.0, "{p}");
    }
    // Paused for the whole copy, then copied while writes go on.
    let moves = r["migration"].as_array().unwrap();
    assert_eq!(moves.len(), 2);
    assert_eq!(moves[0]["policy"], "paused");
    assert_eq!(moves[0]["bytes"], 4 << 20);
    assert_eq!(moves[1]["policy"], "tracked");
    assert!(moves[1]["bytes"].as_u64().unwrap() >= 4 << 20);
    let rereps = r["rereplication"].as_array().unwrap();
    assert_eq!(rereps.len(), 2);
    for m in moves.iter().chain(rereps) {
        assert_eq!(m["lost_writes"], 0, "{m}");
        assert!(m["writes_checked"].as_u64().unwrap() > 0, "{m}");
    }
}
