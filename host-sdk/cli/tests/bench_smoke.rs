//! `clio bench --quick --json` runs every benchmark and reports sane numbers.

use std::process::Command;

use serde_json::Value;

fn num(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = match k.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[k],
        };
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

#[test]
fn quick_json_run_covers_every_benchmark() {
    let svg = std::env::temp_dir().join(format!("clio-bench-smoke-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["bench", "--quick", "--json", "--svg"])
        .arg(&svg)
        .output()
        .expect("run clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "clio bench failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert!(stderr.contains("clio bench: 12 benchmark(s)"), "{stderr}");
    assert_eq!(r["quick"], true);
    assert!(num(&r, "machine.nproc") >= 1.0);

    let benches = r["benchmarks"].as_array().expect("benchmarks");
    let names: Vec<&str> = benches
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "latency",
            "async",
            "inproc",
            "fault",
            "sessions",
            "ptes",
            "memcached",
            "radix",
            "kv",
            "fairness",
            "mv",
            "df"
        ]
    );
    let by = |n: &str| benches.iter().find(|b| b["name"] == n).unwrap();
    for b in benches {
        let name = b["name"].as_str().unwrap();
        // memcached may be absent; nothing else may be skipped or fail.
        if name == "memcached" && b["status"] == "skipped" {
            assert!(b["reason"].as_str().unwrap().contains("memcached"));
            continue;
        }
        assert_eq!(b["status"], "ok", "{name}: {}", b["reason"]);
        for c in b["checks"].as_array().unwrap() {
            assert!(
                c["value"].is_number() && c["met"].is_boolean(),
                "{name}: {c}"
            );
        }
        for p in b["plots"].as_array().unwrap() {
            let svg = std::fs::read_to_string(p.as_str().unwrap()).unwrap();
            assert!(svg.starts_with("<svg") && !svg.contains("NaN"), "{p}");
        }
    }

    // Latency: every size, echo floor and clio, positive and ordered percentiles.
    let rows = by("latency")["data"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        for s in ["echo", "rread", "rwrite"] {
            let p50 = num(row, &format!("{s}.p50_ns"));
            let p99 = num(row, &format!("{s}.p99_ns"));
            assert!(p50 > 0.0 && p99 >= p50, "{s}: {row}");
            assert!(num(row, &format!("{s}.n")) >= 50.0);
        }
        assert!(num(row, "rread_p50_over_floor") > 0.0);
    }

    let lanes = by("async")["data"]["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 3);
    assert_eq!(lanes[0]["transport"], "udp echo (floor)");
    for l in lanes {
        assert!(num(l, "ops_per_sec") > 10.0, "{l}");
    }

    let inproc = &by("inproc")["data"];
    assert!(num(inproc, "per_op_ns") > 0.0);
    assert!(num(inproc, "model_per_op_ns") > 0.0);
    assert!(num(inproc, "model_cycles") > 0.0);

    // Fault: the three classes, and the model orders them hit < miss <= fault.
    let classes = by("fault")["data"]["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 3);
    let cyc: Vec<f64> = classes.iter().map(|c| num(c, "model_cycles")).collect();
    assert!(cyc[0] < cyc[1] && cyc[1] <= cyc[2], "{cyc:?}");
    assert!(classes.iter().all(|c| num(c, "samples") > 0.0));

    let points = by("sessions")["data"]["points"].as_array().unwrap();
    assert_eq!(
        points
            .iter()
            .map(|p| num(p, "sessions"))
            .collect::<Vec<_>>(),
        [1.0, 10.0, 32.0]
    );
    assert!(points.iter().all(|p| num(p, "failures") == 0.0));

    // PTEs: all TLB hits at 16 pages, mostly misses at 1024 (64-entry TLB).
    let ptes = by("ptes")["data"]["points"].as_array().unwrap();
    let at = |n: f64| ptes.iter().find(|p| num(p, "mapped_pages") == n).unwrap();
    assert_eq!(num(at(16.0), "tlb_hit_rate"), 1.0);
    assert!(num(at(1024.0), "tlb_hit_rate") < 0.2);
    assert!(num(at(1024.0), "model_cycles") > num(at(16.0), "model_cycles"));
    assert!(ptes.iter().all(|p| num(p, "failures") == 0.0));

    let mc = by("memcached");
    if mc["status"] == "ok" {
        for row in mc["data"]["rows"].as_array().unwrap() {
            assert!(num(row, "get_over_rread") > 0.0 && num(row, "set_over_rwrite") > 0.0);
        }
    }
    // Radix: one round trip per level by rchase, more by rread.
    let radix = &by("radix")["data"];
    assert_eq!(num(radix, "rchase_round_trips"), 8.0, "{radix}");
    assert!(num(radix, "rread_round_trips") > 8.0, "{radix}");
    assert!(num(radix, "rchase_median_ns") > 0.0, "{radix}");
    // Clio-MV: both reads measured; Clio-DF: the offload moves fewer bytes
    // (at the smoke size too: 1 % of one column against both columns).
    let mv = &by("mv")["data"];
    assert!(
        num(mv, "latest_median_ns") > 0.0 && num(mv, "any_median_ns") > 0.0,
        "{mv}"
    );
    let df = &by("df")["data"];
    assert!(num(df, "selected") > 0.0, "{df}");
    assert!(num(df, "bytes_ratio") >= 10.0, "{df}");
    assert!(num(df, "offloaded_median_s") > 0.0, "{df}");
    let _ = std::fs::remove_dir_all(&svg);
}

#[test]
fn only_runs_the_named_benchmark_and_bad_names_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["bench", "--quick", "--json", "--only", "inproc"])
        .output()
        .expect("run clio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = r["benchmarks"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["name"], "inproc");

    let bad = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["bench", "--only", "warp"])
        .output()
        .expect("run clio");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("warp"));
}

#[test]
fn slowpath_report_is_emitted_as_json_and_svg() {
    let svg = std::env::temp_dir().join(format!("clio-bench-slowpath-{}.svg", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "bench", "slowpath", "--quick", "--board", "emulator", "--json", "--svg",
        ])
        .arg(&svg)
        .output()
        .expect("run clio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(r["board"], "emulator");
    let curves = r["retry_curves"].as_array().unwrap();
    assert_eq!(curves.len(), 3);
    assert!(curves
        .iter()
        .all(|c| !c["points"].as_array().unwrap().is_empty()));
    assert!(num(&r, "refill.per_sec") > 0.0);
    assert!(num(&r, "footprint.total") > 0.0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{text}");
    let _ = std::fs::remove_file(&svg);

    let bad = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["bench", "slowpath", "--board", "no-such-board"])
        .output()
        .expect("run clio");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no-such-board"));
}
