//! `clio sim` checks its options before it binds or says it is serving.

use std::process::Command;

#[test]
fn qemu_without_image_fails_before_serving() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["sim", "--slow-path", "qemu", "--listen", "127.0.0.1:0"])
        .output()
        .expect("run clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--image"), "{stderr}");
    assert!(!stderr.contains("serving on"), "{stderr}");
}

#[test]
fn missing_image_file_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "sim",
            "--slow-path",
            "qemu",
            "--image",
            "/nonexistent/clio-fw.elf",
            "--listen",
            "localhost:0",
        ])
        .output()
        .expect("run clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/nonexistent/clio-fw.elf"), "{stderr}");
    assert!(!stderr.contains("serving on"), "{stderr}");
}
