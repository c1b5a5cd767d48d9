//! Nodes that join by being asked (`join = "probe"`): the controller probes
//! an emulated node over real UDP, registers it and keeps it alive from its
//! answers, declares it dead when it stops answering, and fences the old
//! incarnation when it comes back; a `join = "hello"` node beside it keeps
//! registering itself.

use std::time::{Duration, Instant};

use clio_config::BoardConfig;
use clio_control::{ErrorCode, Field, Message, Pressure};
use clio_emu::{Board, ServeOptions};
use clio_rack::node::{NodeAgent, RackNode, SharedNode};
use clio_rack::service::{Client, Service};
use clio_rack::Rack;

fn board() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

/// Waits (bounded) until node `id`'s report satisfies `ok`; returns it.
fn report_until(
    c: &mut Client,
    id: u16,
    what: &str,
    ok: impl Fn(u32, bool, Option<Pressure>) -> bool,
) -> (u32, bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Message::NodeReport {
            epoch,
            live,
            pressure,
            ..
        } = c.call(Message::NodeStatus { node: id }).unwrap()
        {
            if ok(epoch, live, pressure) {
                return (epoch, live);
            }
        }
        assert!(Instant::now() < deadline, "{what}: not within 15 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_probed_node_is_registered_kept_alive_declared_dead_and_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let b = board();
    let node = SharedNode::new(RackNode::new(Board::new(&b).unwrap()));
    let server = clio_emu::spawn(
        node.clone(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&b),
    )
    .unwrap();
    let addr = server.addr();
    let other = SharedNode::new(RackNode::new(Board::new(&b).unwrap()));
    let other_server = clio_emu::spawn(
        other.clone(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&b),
    )
    .unwrap();
    let text = format!(
        "[controller]\ndead_after_ms = 400\n\
         [[node]]\nname = \"board\"\naddress = \"{addr}\"\ncapacity = \"2 GiB\"\njoin = \"probe\"\n\
         [[node]]\nname = \"host\"\naddress = \"{}\"\ncapacity = \"2 GiB\"\n",
        other_server.addr()
    );
    let cfg = clio_rack::config::load_str("rack.toml", &text).unwrap();
    let (rack, _) = Rack::open(cfg.clone(), dir.path().join("rack.log"), 0).unwrap();
    let svc = Service::bind("127.0.0.1:0", rack).unwrap().spawn().unwrap();
    // The hello node registers itself, as before.
    let agent = NodeAgent::start(
        svc.addr(),
        2,
        other_server.addr(),
        2 << 30,
        other.clone(),
        Duration::from_millis(50),
    )
    .unwrap();
    let mut c = Client::connect(svc.addr()).unwrap();

    // Registered from its first answer, then kept alive with its pressure.
    let (e1, _) = report_until(&mut c, 1, "registered", |e, live, p| {
        e > 0 && live && p.is_some()
    });
    assert_eq!(e1, 1);
    // The node learned its id and epoch from the probes.
    let deadline = Instant::now() + Duration::from_secs(5);
    while node.lock().rack_identity() != (1, e1) {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            node.lock().rack_identity()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Alive well past dead_after_ms: the probes keep it so.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(
        report_until(&mut c, 1, "still live", |_, live, _| live),
        (e1, true)
    );

    // It stops answering: declared dead, its epoch fenced.
    server.stop().unwrap();
    let (fence, _) = report_until(&mut c, 1, "declared dead", |_, live, _| !live);
    assert!(fence > e1);
    // Back on the same address, the same incarnation (same boot epoch): it
    // answers with its old epoch, which the controller fenced, so it is
    // registered anew above the fence.
    let server = clio_emu::spawn(node.clone(), addr, ServeOptions::for_board(&b)).unwrap();
    let (e3, _) = report_until(&mut c, 1, "back", |_, live, _| live);
    assert!(e3 > fence, "{e3} > {fence}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while node.lock().rack_identity() != (1, e3) {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            node.lock().rack_identity()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Whatever the old incarnation sends with its epoch is refused.
    assert_eq!(
        c.call(Message::Heartbeat {
            node: 1,
            epoch: e1,
            pressure: node.lock().pressure(),
        })
        .unwrap(),
        Message::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        }
    );
    // The hello node was live all along, on its first epoch.
    assert_eq!(agent.epoch(), 1);
    assert_eq!(
        report_until(&mut c, 2, "hello node live", |_, live, _| live),
        (1, true)
    );
    // A NodeInfo from an address that is not the probed node's is dropped
    // (a forger would have to answer from the node's address).
    let forger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; clio_control::MAX_ENVELOPE_LEN];
    let forged = clio_control::Envelope::new(
        1,
        Message::NodeInfo {
            node: 1,
            boot_epoch: 99,
            epoch: 0,
            capacity: 2 << 30,
            pressure: node.lock().pressure(),
        },
    )
    .encode(&mut buf)
    .unwrap()
    .to_vec();
    forger.send_to(&forged, svc.addr()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        report_until(&mut c, 1, "not re-registered", |_, live, _| live),
        (e3, true)
    );
    let stats = svc.stop().unwrap().stats();
    assert!(stats.probes > 10 && stats.probe_answers > 10, "{stats:?}");
    assert!(stats.dropped >= 1, "{stats:?}");
    drop(agent);
    server.stop().unwrap();
    other_server.stop().unwrap();
}
