//! A report read by `head` (the reader closes the pipe early) ends quietly
//! with status 0, not a panic with a backtrace.

use std::process::{Command, Stdio};

#[test]
fn closed_reader_ends_quietly_with_status_zero() {
    // `bench slowpath --quick` computes for a while before it prints its
    // report; the reader is gone before the first line, so every print
    // meets a closed pipe (Rust ignores SIGPIPE: the write fails with EPIPE).
    let mut child = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["bench", "slowpath", "--quick", "--board", "emulator"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run clio");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for clio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "status {:?}, stderr: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
