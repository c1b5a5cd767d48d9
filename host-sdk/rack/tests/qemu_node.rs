//! The firmware as a rack node: the real firmware image in QEMU's ZynqMP
//! model (its slow path, with the rack agent) behind the fast-path model,
//! served over UDP (`clio_emu::QemuBoard`). Its fast path only answers
//! senders, so it joins with `join = "probe"`: the controller probes it, the
//! probes reach the firmware's `RackAgent` over the rings (CONTROL_REQ /
//! CONTROL_REPLY), and its answers register it and keep it alive. QEMU
//! stopped (SIGSTOP) stops the answers: the node is declared dead; QEMU
//! resumed (SIGCONT), the same incarnation answers with its fenced epoch and
//! is registered anew above the fence.
//!
//! The rack is keyed: the launcher hands the firmware the rack key in its boot
//! parameter block (`clio_control::auth::KeyBlock`, where a board's loader
//! leaves it), the controller's probes and the test's own are sealed, and a
//! probe sealed under another key, a forged one and a bare one are refused
//! (named `Unauthenticated` / `frame.tag`, or not answered readably).
//!
//! Needs `qemu-system-aarch64` (`$QEMU` or `PATH`); without it the test
//! prints why and passes, except under CI (`CI` set), where it fails. The
//! image is `$CLIO_COSIM_IMAGE`, or built here for
//! `board-configs/emulator.toml` (as `clio-emu`'s co-simulation tests do).

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clio_control::auth::{open, seal, RackKey, Seal};
use clio_control::{Envelope, ErrorCode, Field, Message, MAX_ENVELOPE_LEN};
use clio_emu::qemu::QemuOptions;
use clio_emu::{ClientId, Engine, QemuBoard, ServeOptions};
use clio_rack::service::{Client, Service};
use clio_rack::Rack;
use std::sync::atomic::{AtomicU64, Ordering};

// The QEMU setup (repository root, board config, QEMU binary, firmware image) is
// the emulator co-simulation tests' own, shared rather than copied.
#[allow(dead_code)]
#[path = "../../emulator/tests/common/qemu.rs"]
mod qemu_setup;
use qemu_setup::{board, image, qemu_or_skip};

/// The QEMU-backed board, shared by its UDP server and the test.
#[derive(Clone)]
struct Shared(Arc<Mutex<QemuBoard>>);

impl Engine for Shared {
    fn handle(&mut self, from: ClientId, p: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        self.0.lock().unwrap().handle(from, p, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        self.0.lock().unwrap().poll(out)
    }
}

fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(st.success(), "kill {sig} {pid}");
}

/// Waits (bounded) until node 1's report satisfies `ok`: (epoch, live).
fn report_until(c: &mut Client, what: &str, ok: impl Fn(u32, bool) -> bool) -> (u32, bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Message::NodeReport { epoch, live, .. } =
            c.call(Message::NodeStatus { node: 1 }).unwrap()
        {
            if ok(epoch, live) {
                return (epoch, live);
            }
        }
        assert!(Instant::now() < deadline, "{what}: not within 30 s");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The rack key of the test's rack (file and firmware).
const KEY_HEX: &str = "00112233445566778899aabbccddeeff";

/// The test's own sealed requests: one sender, counters always newer.
static COUNTER: AtomicU64 = AtomicU64::new(1);

/// A probe (epoch 0 changes nothing) sealed under `key` by the test's sender.
fn probe_frame(key: &RackKey) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    let s = Seal {
        sender: 0x7e57,
        counter: COUNTER.fetch_add(1, Ordering::Relaxed),
    };
    seal(
        &Envelope::new(77, Message::Probe { node: 1, epoch: 0 }),
        key,
        s,
        &mut buf,
    )
    .unwrap()
    .to_vec()
}

/// Sends `frame` to the firmware; its answer's bytes, if one came within 2 s.
fn ask(node: std::net::SocketAddr, frame: &[u8]) -> Option<Vec<u8>> {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.send_to(frame, node).unwrap();
    let mut got = [0u8; 2048];
    let n = s.recv(&mut got).ok()?;
    Some(got[..n].to_vec())
}

/// Asks the firmware directly, sealed under the rack key, which node id and
/// epoch it holds.
fn firmware_identity(node: std::net::SocketAddr) -> (u16, u32, u32) {
    let key = RackKey::from_hex(KEY_HEX).unwrap();
    let got = ask(node, &probe_frame(&key)).expect("the firmware answers a sealed probe");
    let (env, _) = open(&got, &key).expect("the answer is sealed under the rack key");
    assert_eq!(env.request_id, 77);
    match env.message {
        Message::NodeInfo {
            node,
            epoch,
            boot_epoch,
            ..
        } => (node, epoch, boot_epoch),
        other => panic!("a NodeInfo, got {other:?}"),
    }
}

#[test]
fn the_firmware_joins_by_probe_is_declared_dead_when_stopped_and_fenced_when_back() {
    let Some(qemu) = qemu_or_skip() else { return };
    let cfg = board();
    let key = RackKey::from_hex(KEY_HEX).unwrap();
    let mut opts = QemuOptions::new(image(), cfg);
    opts.qemu = qemu;
    opts.rack_key = Some(key);
    let b = QemuBoard::launch(opts).expect("the firmware boots in QEMU");
    let qemu_pid = b.firmware_pid();
    let fw = Shared(Arc::new(Mutex::new(b)));
    let server = clio_emu::spawn(
        fw.clone(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&cfg),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[controller]\ndead_after_ms = 1000\nkey = \"{KEY_HEX}\"\n\
         [[node]]\nname = \"zcu106-qemu\"\naddress = \"{}\"\ncapacity = \"4 GiB\"\njoin = \"probe\"\n",
        server.addr()
    );
    let rack_cfg = clio_rack::config::load_str("rack.toml", &text).unwrap();
    let (rack, _) = Rack::open(rack_cfg, dir.path().join("rack.log"), 0).unwrap();
    let svc = Service::bind("127.0.0.1:0", rack).unwrap().spawn().unwrap();
    let mut c = Client::connect(svc.addr()).unwrap().with_key(Some(key));

    // Registered from the firmware's answers, and it learned its epoch.
    let (e1, _) = report_until(&mut c, "registered", |e, live| e > 0 && live);
    assert_eq!(e1, 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    let boot = loop {
        let (node, epoch, boot) = firmware_identity(server.addr());
        if (node, epoch) == (1, e1) {
            break boot;
        }
        assert!(
            Instant::now() < deadline,
            "firmware holds ({node}, {epoch})"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // Only the rack key's holders are served: a probe sealed under another
    // key and a forged one are refused, named; a bare one gets nothing readable.
    let refused = Message::Refused {
        code: ErrorCode::Unauthenticated,
        field: Field::FrameTag,
    };
    let other = RackKey(*b"not-the-rack-key");
    let answer = ask(server.addr(), &probe_frame(&other)).expect("a refusal");
    assert_eq!(open(&answer, &key).unwrap().0.message, refused);
    let mut forged = probe_frame(&key);
    forged[6] ^= 1;
    let answer = ask(server.addr(), &forged).expect("a refusal");
    assert_eq!(open(&answer, &key).unwrap().0.message, refused);
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    let bare = Envelope::new(78, Message::Probe { node: 1, epoch: 0 })
        .encode(&mut buf)
        .unwrap()
        .to_vec();
    if let Some(a) = ask(server.addr(), &bare) {
        assert!(
            Envelope::decode(&a).map_or(true, |e| !matches!(e.message, Message::NodeInfo { .. })),
            "a bare probe must not be answered"
        );
    }

    // Kept alive past several death verdict delays.
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(report_until(&mut c, "alive", |_, live| live), (e1, true));

    // QEMU stops: no answers, declared dead, epoch fenced.
    signal(qemu_pid, "-STOP");
    let (fence, _) = report_until(&mut c, "declared dead", |_, live| !live);
    assert!(fence > e1);
    // QEMU resumes: the same boot answers its old epoch, is registered anew.
    signal(qemu_pid, "-CONT");
    let (e3, _) = report_until(&mut c, "back", |_, live| live);
    assert!(e3 > fence, "{e3} > {fence}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (node, epoch, b) = firmware_identity(server.addr());
        assert_eq!(b, boot, "the same incarnation");
        if (node, epoch) == (1, e3) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "firmware holds ({node}, {epoch})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The old incarnation's epoch is fenced.
    let stale = Message::Heartbeat {
        node: 1,
        epoch: e1,
        pressure: clio_control::Pressure {
            used_bytes: 0,
            free_bytes: 1,
        },
    };
    assert_eq!(
        c.call(stale).unwrap(),
        Message::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        }
    );
    let stats = svc.stop().unwrap().stats();
    assert!(stats.probe_answers > 5, "{stats:?}");
    server.stop().unwrap();
}
