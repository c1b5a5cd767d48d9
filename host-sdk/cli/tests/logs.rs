//! `clio logs` on the firmware's golden QEMU captures: from a file, with the
//! wrong ELF, and through a pseudo-terminal pair standing in for a board's
//! UART (issue #17 finding 4, issue #19 item 2).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../firmware-arm/fwlog/tests/data")
        .join(name)
}

fn clio(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run clio")
}

fn build_id(elf: &str) -> String {
    clio_fwlog::ImageManifest::from_elf(elf, &std::fs::read(data(elf)).unwrap())
        .unwrap()
        .build_id
}

#[test]
fn file_with_its_own_elf_decodes_the_golden_log() {
    let out = clio(&[
        "logs".as_ref(),
        "--elf".as_ref(),
        data("boot.elf").as_os_str(),
        "--input".as_ref(),
        data("boot.uart").as_os_str(),
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

/// Before the check, this exited 0 and printed garbage lines.
#[test]
fn wrong_elf_is_an_error_naming_both_build_ids_unless_forced() {
    let args = |force: bool| {
        let mut v: Vec<std::ffi::OsString> = vec![
            "logs".into(),
            "--elf".into(),
            data("fault.elf").into(),
            "--input".into(),
            data("boot.uart").into(),
        ];
        if force {
            v.push("--force".into());
        }
        v
    };
    let a = args(false);
    let out = clio(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(&build_id("boot.elf")), "{err}");
    assert!(err.contains(&build_id("fault.elf")), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "nothing decoded before the banner check"
    );

    let a = args(true);
    let out = clio(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning (--force)"), "{err}");
}

/// A pseudo-terminal pair: the test writes the capture into the master as
/// the board's UART would; `clio logs` reads the slave.
fn openpty() -> (OwnedFd, OwnedFd, PathBuf) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two fds; name, termios and winsize may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: fresh fds owned by us from here on.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).unwrap();
    (master, slave, path)
}

fn termios(fd: &OwnedFd) -> libc::termios {
    // SAFETY: termios is plain data; tcgetattr fills it.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) }, 0);
    t
}

fn is_raw(t: &libc::termios) -> bool {
    t.c_lflag & (libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN) == 0
        && t.c_iflag & (libc::ICRNL | libc::IXON | libc::INLCR | libc::ISTRIP) == 0
        && t.c_oflag & libc::OPOST == 0
}

/// Before the fix the device was opened like a file: the pty stayed in
/// canonical mode with CR/NL translation and echo (the wait for raw mode
/// fails), and the binary frames did not survive the line discipline.
#[test]
fn uart_on_a_pty_is_set_raw_at_the_baud_rate_and_decodes_exactly() {
    let (master, slave, path) = openpty();
    // A fresh pty is cooked (canonical, echo, ICRNL) at 38400 baud.
    assert!(!is_raw(&termios(&slave)));
    let mut child = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args(["logs", "--elf"])
        .arg(data("boot.elf"))
        .arg("--input")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let t = loop {
        let t = termios(&slave);
        if is_raw(&t) {
            break t;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "clio logs did not put {} in raw mode: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // serialport sets the speed through termios2 (BOTHER + the rate in
    // c_ispeed/c_ospeed), so read it back the same way.
    // SAFETY: termios2 is plain data; TCGETS2 fills it.
    let mut t2: libc::termios2 = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::ioctl(slave.as_raw_fd(), libc::TCGETS2, &mut t2) },
        0
    );
    let speed = if t2.c_cflag & libc::CBAUD == libc::BOTHER {
        (t2.c_ispeed, t2.c_ospeed)
    } else {
        // SAFETY: reading the speed fields of a valid termios.
        let (i, o) = unsafe { (libc::cfgetispeed(&t), libc::cfgetospeed(&t)) };
        assert_eq!((i, o), (libc::B115200, libc::B115200), "baud rate");
        (115_200, 115_200)
    };
    assert_eq!(speed, (115_200, 115_200), "baud rate");
    assert_eq!(t.c_cflag & libc::CSIZE, libc::CS8, "8 data bits");
    assert_eq!(
        t.c_cflag & (libc::PARENB | libc::CSTOPB | libc::CRTSCTS),
        0,
        "no parity, 1 stop bit, no RTS/CTS"
    );

    // The board boots: the whole capture arrives, in two pieces.
    let uart = std::fs::read(data("boot.uart")).unwrap();
    // SAFETY: the master fd stays open for the test; File takes a dup.
    let mut m = std::fs::File::from(master.try_clone().unwrap());
    m.write_all(&uart[..uart.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    m.write_all(&uart[uart.len() / 2..]).unwrap();

    let expected: Vec<String> = std::fs::read_to_string(data("boot.log"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut got = Vec::new();
    while got.len() < expected.len() {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(l) => got.push(l),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(slave);
    assert_eq!(got, expected, "lines decoded from the pty");
}
