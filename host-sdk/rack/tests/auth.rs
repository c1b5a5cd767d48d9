//! Authenticated control datagrams (control v4) over real UDP: a rack file
//! with a key makes the controller and the nodes given it serve only frames
//! sealed under that key; forged, replayed, wrong-key and old-version frames
//! are refused, each named, and counted.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use clio_config::BoardConfig;
use clio_control::auth::{open, seal, tag_of, RackKey, Seal, TRAILER_LEN};
use clio_control::{Envelope, ErrorCode, Field, GateState, Message, MAX_ENVELOPE_LEN};
use clio_emu::{Board, ServeOptions};
use clio_rack::node::{call_node, call_node_sealed, NodeAgent, RackNode, SharedNode};
use clio_rack::service::{Client, Service};
use clio_rack::Rack;

const KEY_HEX: &str = "000102030405060708090a0b0c0d0e0f";

fn board() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

/// Sends `frame` from a fresh socket; the sealed answer, opened.
fn exchange(to: SocketAddr, frame: &[u8], key: &RackKey) -> (Message, Seal) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.send_to(frame, to).unwrap();
    let mut buf = [0u8; 2048];
    let n = s.recv(&mut buf).expect("an answer");
    let (env, got) = open(&buf[..n], key).expect("answers are sealed");
    (env.message, got)
}

fn sealed(m: Message, key: &RackKey, s: Seal) -> Vec<u8> {
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    seal(&Envelope::new(1, m), key, s, &mut buf)
        .unwrap()
        .to_vec()
}

#[test]
fn the_rack_key_comes_from_the_rack_file_and_errors_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let rack = dir.path().join("rack.toml");
    let node = "[[node]]\nname = \"a\"\naddress = \"127.0.0.1:7701\"\ncapacity = \"1 GiB\"\n";
    let load = |controller: &str| {
        std::fs::write(&rack, format!("[controller]\n{controller}\n{node}")).unwrap();
        clio_rack::config::load(&rack)
    };
    std::fs::write(dir.path().join("rack.key"), format!("{KEY_HEX}\n")).unwrap();
    let key = RackKey::from_hex(KEY_HEX).unwrap();
    assert_eq!(load("key_file = \"rack.key\"").unwrap().key, Some(key));
    assert_eq!(
        load(&format!("key = \"{KEY_HEX}\"")).unwrap().key,
        Some(key)
    );
    assert_eq!(load("").unwrap().key, None);
    let e = load("key_file = \"missing.key\"").unwrap_err().to_string();
    assert!(
        e.contains("key 'controller.key_file' = \"missing.key\": cannot read")
            && e.contains("missing.key"),
        "{e}"
    );
    std::fs::write(dir.path().join("short.key"), "abcd").unwrap();
    let e = load("key_file = \"short.key\"").unwrap_err().to_string();
    assert!(
        e.contains("controller.key_file") && e.contains("short.key: expected 32 hex digits"),
        "{e}"
    );
    let e = load("key = \"zz0102030405060708090a0b0c0d0e0f\"")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("key 'controller.key' = (not shown: a secret): character 0 is not a hex digit"),
        "{e}"
    );
    assert!(
        !e.contains("0102030405"),
        "the key stays out of errors: {e}"
    );
}

#[test]
fn a_keyed_rack_refuses_forged_replayed_wrong_key_and_old_frames() {
    let dir = tempfile::tempdir().unwrap();
    let key = RackKey::from_hex(KEY_HEX).unwrap();
    let b = board();
    // A keyed node that joins by probe, and one that says hello (sealed).
    let probed = SharedNode::new(RackNode::new(Board::new(&b).unwrap()));
    probed.lock().set_key(key);
    let probed_srv = clio_emu::spawn(
        probed.clone(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&b),
    )
    .unwrap();
    let hello = SharedNode::new(RackNode::new(Board::new(&b).unwrap()));
    hello.lock().set_key(key);
    let hello_srv = clio_emu::spawn(
        hello.clone(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&b),
    )
    .unwrap();
    let text = format!(
        "[controller]\ndead_after_ms = 2000\nkey = \"{KEY_HEX}\"\n\
         [[node]]\nname = \"p\"\naddress = \"{}\"\ncapacity = \"2 GiB\"\njoin = \"probe\"\n\
         [[node]]\nname = \"h\"\naddress = \"{}\"\ncapacity = \"2 GiB\"\n",
        probed_srv.addr(),
        hello_srv.addr()
    );
    let cfg = clio_rack::config::load_str("rack.toml", &text).unwrap();
    let (rack, _) = Rack::open(cfg.clone(), dir.path().join("rack.log"), 0).unwrap();
    let svc = Service::bind("127.0.0.1:0", rack).unwrap().spawn().unwrap();
    let agent = NodeAgent::start_sealed(
        svc.addr(),
        Some(key),
        2,
        hello_srv.addr(),
        2 << 30,
        hello.clone(),
        Duration::from_millis(100),
    )
    .unwrap();
    assert_eq!(agent.epoch(), 1);
    let mut c = Client::connect(svc.addr()).unwrap().with_key(Some(key));
    // The probed node registers through sealed probes and answers.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(
        c.call(Message::NodeStatus { node: 1 }).unwrap(),
        Message::NodeReport { live: true, .. }
    ) {
        assert!(
            Instant::now() < deadline,
            "the probed node never registered"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(probed.lock().rack_identity().0, 1);

    // The controller: each bad frame refused and named.
    let s = |counter| Seal {
        sender: 4242,
        counter,
    };
    let lookup = Message::Lookup { region: 3 };
    let good = sealed(lookup.clone(), &key, s(10));
    assert_eq!(
        exchange(svc.addr(), &good, &key),
        (Message::NotAssigned { region: 3 }, s(10))
    );
    let refused = |code, field| Message::Refused { code, field };
    // Replay: the same frame again (from another port: the seal decides).
    assert_eq!(
        exchange(svc.addr(), &good, &key).0,
        refused(ErrorCode::Replayed, Field::FrameCounter)
    );
    // Forged: the region changed, the tag kept.
    let mut forged = sealed(lookup.clone(), &key, s(11));
    forged[7] ^= 1;
    assert_eq!(
        exchange(svc.addr(), &forged, &key).0,
        refused(ErrorCode::Unauthenticated, Field::FrameTag)
    );
    // Wrong key.
    let other = RackKey(*b"not-the-rack-key");
    assert_eq!(
        exchange(svc.addr(), &sealed(lookup.clone(), &other, s(12)), &key).0,
        refused(ErrorCode::Unauthenticated, Field::FrameTag)
    );
    // Old version: a v3 body sealed under the right key.
    let mut old = sealed(lookup.clone(), &key, s(13));
    old[4] = 3;
    let body = old.len() - TRAILER_LEN;
    let tag = tag_of(&key, &old[..body + 16]);
    old[body + 16..].copy_from_slice(&tag);
    assert_eq!(
        exchange(svc.addr(), &old, &key).0,
        refused(ErrorCode::Malformed, Field::EnvelopeVersion)
    );
    // A newer counter is served.
    assert_eq!(
        exchange(svc.addr(), &sealed(lookup, &key, s(14)), &key).0,
        Message::NotAssigned { region: 3 }
    );

    // The node: a sealed Gate from the rack key's holder is served; a bare
    // one (an unkeyed client) gets nothing it can read, and is counted.
    let gate = Message::Gate {
        region: 1,
        pid: 1,
        va: 0,
        len: 4096,
        state: GateState::Open,
    };
    assert!(matches!(
        call_node_sealed(hello_srv.addr(), Some(key), gate.clone()).unwrap(),
        Message::Ack { .. }
    ));
    let mut bare = Client::connect(hello_srv.addr()).unwrap();
    bare.attempts = 1;
    assert!(bare.call(gate.clone()).is_err());
    assert!(call_node(probed_srv.addr(), gate).is_err());
    let st = hello.lock().agent_stats();
    assert!(st.unauthenticated >= 1, "{st:?}");

    drop(agent);
    let stats = svc.stop().unwrap().stats();
    assert_eq!((stats.unauthenticated, stats.replayed), (2, 1), "{stats:?}");
    assert!(stats.probe_answers >= 1, "{stats:?}");
    probed_srv.stop().unwrap();
    hello_srv.stop().unwrap();
}
