//! The README's first command: `clio demo` runs its checked workload on an
//! embedded emulated board and passes, with nothing set up.

use std::process::Command;

#[test]
fn demo_passes_on_the_embedded_board() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .arg("demo")
        .output()
        .expect("run clio demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary = stdout
        .lines()
        .chain(stderr.lines())
        .find(|l| l.contains(" passed, "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}\n{stderr}"));
    assert!(summary.contains(" 0 failed"), "{summary}");
}

#[test]
fn rack_demo_survives_a_node_kill() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["demo", "--rack", "--json"])
        .output()
        .expect("run clio demo --rack");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON report");
    assert_eq!(v["failed"], 0, "{stdout}");
    assert_eq!(v["passed"], 7, "{stdout}");
}
