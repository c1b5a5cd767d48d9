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
    assert!(err.contains("CDF_nosuch.txt"), "{err}");
    let out = edmsim(&["--scheme", "tcp", "--messages", "5"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scheme `tcp`"));
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
