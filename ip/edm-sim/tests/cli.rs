//! The `edmsim` binary: JSON output, plots, CDF loading and error messages.

use std::process::Command;

fn edmsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_edmsim"))
        .args(args)
        .output()
        .expect("run edmsim")
}

#[test]
fn microbenchmark_size_and_the_published_column() {
    // 64 B writes at load 0.8 are compared with the published value; other sizes are not.
    let run = |size: &str| {
        let out = edmsim(&[
            "--size",
            size,
            "--nodes",
            "16",
            "--messages",
            "200",
            "--scheme",
            "edm",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["rows"][0].clone()
    };
    let row = run("64");
    assert_eq!(row["published_mean"].as_f64(), Some(1.35));
    let row = run("256");
    assert!(row["published_mean"].is_null(), "{row}");
    assert_eq!(row["completed"], 200);
}

#[test]
fn json_run_with_a_cdf_and_a_plot() {
    let dir = std::env::temp_dir().join(format!("edmsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("CDF_tiny.txt"), "1 1 0.0\n1 1 0.8\n3 1 1.0\n").unwrap();
    let svg = dir.join("out.svg");
    let out = edmsim(&[
        "--workload",
        "tiny",
        "--cdf-dir",
        dir.to_str().unwrap(),
        "--nodes",
        "8",
        "--messages",
        "60",
        "--load",
        "0.3,0.6",
        "--scheme",
        "edm,cxl",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(r["completed"], 60);
        assert!(r["all"]["mean"].as_f64().unwrap() >= 1.0);
    }
    assert_eq!(
        rows[0]["scheme"], "edm-srpt",
        "application traces run EDM with SRPT"
    );
    assert_eq!(rows[0]["edm_reserve"], true);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<polyline") && text.contains("edm-srpt"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_name_the_bad_input() {
    let out = edmsim(&[
        "--workload",
        "nosuch",
        "--cdf-dir",
        "/nonexistent-dir",
        "--messages",
        "5",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cdf-dir") && err.contains("/nonexistent-dir"),
        "{err}"
    );
    let out = edmsim(&[
        "--workload",
        "nosuch",
        "--cdf-dir",
        "/tmp",
        "--messages",
        "5",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CDF_nosuch.txt"), "{err}");
    let out = edmsim(&["--scheme", "edmm", "--messages", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown scheme `edmm`")
            && err.contains(
                "known: edm, edm-fcfs, edm-srpt, ird, pfabric, pfc, dctcp, cxl, fastpass, all"
            ),
        "{err}"
    );
    for (flag, value) in [
        ("--metric", "paper"),
        ("--seeds", "0"),
        ("--warmup", "0.95"),
    ] {
        let out = edmsim(&[flag, value, "--messages", "5"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(flag), "{flag}: {err}");
    }
    let out = edmsim(&["--metric", "published", "--load", "0.5", "--messages", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a published label"), "{err}");
    let out = edmsim(&["--metric", "published", "--paper-window", "maybe"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--paper-window") && err.contains("`maybe`"),
        "{err}"
    );
    for size in ["0", "1073741825"] {
        let out = edmsim(&["--size", size, "--messages", "5"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("--size: {size} is not in 1..=1073741824 bytes")),
            "{err}"
        );
    }
    let out = edmsim(&["--load", "abc", "--messages", "5"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--load"));
    for flag in [
        "--edm-in-order",
        "--edm-charge-rreq",
        "--pfc-in-order",
        "--cxl-host-order",
    ] {
        let out = edmsim(&[flag, "maybe", "--messages", "5"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag) && err.contains("`maybe`"), "{err}");
    }
}

#[test]
fn workload_data_is_found_from_outside_the_repository() {
    // Run from a directory outside the checkout: the default `../shared/data/edm-workloads`
    // is resolved against the repository root (or the shared directory beside it).
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find_map(|d| {
            let c = d.join("shared/data/edm-workloads/CDF_hadoop.txt");
            c.is_file().then_some(c)
        });
    if shared.is_none() {
        eprintln!("no shared workload data on this machine; skipping");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_edmsim"))
        .current_dir(std::env::temp_dir())
        .args([
            "--workload",
            "hadoop",
            "--load",
            "0.4",
            "--nodes",
            "8",
            "--messages",
            "30",
            "--scheme",
            "edm",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn csv_traces_round_trip_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("edmsim-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("t.csv");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--workload",
            "mixed",
            "--load",
            "0.6",
            "--nodes",
            "16",
            "--messages",
            "300",
            "--scheme",
            "edm,cxl",
            "--json",
        ];
        a.extend_from_slice(extra);
        let out = edmsim(&a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["rows"].clone()
    };
    run(&["--trace-out", csv.to_str().unwrap()]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("FlowID,flowType,src,dst,flow_size_bytes,rreq_bytes,start_timeslot\n"));
    assert_eq!(text.lines().count(), 301);
    // The file read back and written again is the same file.
    let again = dir.join("again.csv");
    run(&[
        "--trace",
        csv.to_str().unwrap(),
        "--trace-out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    let rows = run(&["--trace", csv.to_str().unwrap()]);
    for r in rows.as_array().unwrap() {
        assert_eq!(r["completed"], 300);
        assert_eq!(r["workload"], "t");
    }
    // The published metric reads the same file.
    let out = edmsim(&[
        "--metric",
        "published",
        "--trace",
        csv.to_str().unwrap(),
        "--nodes",
        "16",
        "--scheme",
        "edm",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let legs = v["rows"][0]["legs"].as_f64().unwrap() as u64;
    let reads = text
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some("1"))
        .count() as u64;
    assert_eq!(legs, 300 + reads, "a read counts as two legs");
    // Too few nodes for the file: the error names the trace and the flag.
    let out = edmsim(&["--trace", csv.to_str().unwrap(), "--nodes", "4"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("t.csv") && err.contains("--nodes 4"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn published_metric_and_its_fig8_plot() {
    let dir = std::env::temp_dir().join(format!("edmsim-pub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = edmsim(&[
        "--metric",
        "published",
        "--workload",
        "write",
        "--load",
        "0.2,0.8",
        "--seeds",
        "3",
        "--scheme",
        "edm,cxl",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let edm08 = &rows[2];
    assert_eq!(edm08["scheme"], "edm");
    assert_eq!(edm08["generator_load"].as_f64(), Some(19.0));
    assert!((edm08["data_load"].as_f64().unwrap() - 0.811).abs() < 0.001);
    assert_eq!(edm08["published"].as_f64(), Some(1.35));
    assert!(edm08["ci95"].as_f64().is_some());
    // Under load the published metric is above 1 and the low load is clipped near 1.
    assert!(edm08["mean"].as_f64().unwrap() > 1.2, "{edm08}");
    assert!(rows[0]["mean"].as_f64().unwrap() < 1.05);
    assert_eq!(
        rows[3]["completed"].as_f64(),
        Some(1500.0),
        "CXL stops at 1 500"
    );

    // The steady-metric Fig. 8 plot on a small matrix: published values drawn, four
    // distinct panels, no clipped text, no empty series.
    let svg = dir.join("fig8.svg");
    let out = edmsim(&[
        "--fig8",
        "--nodes",
        "16",
        "--messages",
        "300",
        "--app-messages",
        "60",
        "--scheme",
        "edm,cxl,fastpass",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    edm_sim::plot::lint(&text).unwrap();
    for p in [
        "(a) write-only",
        "(b) read-only",
        "(c) mixed",
        "(d) application",
    ] {
        assert!(text.contains(p), "missing panel {p}");
    }
    assert!(text.contains(r#"class="published""#));
    assert!(text.contains("log scale"), "Fastpass spans decades");
    std::fs::remove_dir_all(&dir).unwrap();
}
