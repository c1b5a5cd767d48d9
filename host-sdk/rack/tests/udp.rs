//! The UDP service on loopback: registration, allocation, lookup, malformed input.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use clio_control::{
    Envelope, ErrorCode, Field, Message, Placement, MAX_ENVELOPE_LEN, VREGION_BYTES,
};
use clio_rack::service::{Client, Service};
use clio_rack::Rack;
use common::{hello, rack};

#[test]
fn the_service_answers_over_loopback_and_stops_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = rack();
    let (r, _) = Rack::open(cfg.clone(), dir.path().join("rack.log"), 0).unwrap();
    let running = Service::bind("127.0.0.1:0", r).unwrap().spawn().unwrap();
    let mut c = Client::connect(running.addr()).unwrap();

    assert_eq!(
        c.call(Message::Lookup { region: 5 }).unwrap(),
        Message::NotAssigned { region: 5 }
    );
    assert_eq!(
        c.call(hello(&cfg, 2, 7)).unwrap(),
        Message::Welcome { node: 2, epoch: 1 }
    );
    let Message::Allocated { placements } = c
        .call(Message::Allocate {
            bytes: VREGION_BYTES + 1,
        })
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        placements.as_slice(),
        [
            Placement {
                region: 0,
                node: 2,
                epoch: 1
            },
            Placement {
                region: 1,
                node: 2,
                epoch: 1
            }
        ]
    );
    assert_eq!(
        c.call(Message::Lookup { region: 1 }).unwrap(),
        Message::Owner(Placement {
            region: 1,
            node: 2,
            epoch: 1
        })
    );
    assert_eq!(
        c.call(Message::Allocate {
            bytes: VREGION_BYTES
        })
        .unwrap(),
        Message::Refused {
            code: ErrorCode::NoCapacity,
            field: Field::AllocateBytes
        }
    );

    // A datagram with a good header but a bad body is refused naming the field, with its id.
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; MAX_ENVELOPE_LEN];
    let n = Envelope::new(77, Message::Lookup { region: 3 })
        .encode(&mut buf)
        .unwrap()
        .len();
    raw.send_to(&buf[..n - 1], running.addr()).unwrap();
    let mut rx = [0u8; MAX_ENVELOPE_LEN];
    let m = raw.recv(&mut rx).unwrap();
    assert_eq!(
        Envelope::decode(&rx[..m]).unwrap(),
        Envelope::new(
            77,
            Message::Refused {
                code: ErrorCode::Malformed,
                field: Field::LookupRegion
            }
        )
    );
    // Garbage without the magic is dropped, and the service keeps serving.
    raw.send_to(b"GET / HTTP/1.0\r\n\r\n", running.addr())
        .unwrap();
    assert_eq!(
        c.call(Message::Lookup { region: 0 }).unwrap(),
        Message::Owner(Placement {
            region: 0,
            node: 2,
            epoch: 1
        })
    );

    let service = running.stop().unwrap();
    assert_eq!(service.rack().controller().owner(1), Some(2));
    assert_eq!(service.stats().dropped, 1);
    // Stopped means stopped: nobody answers any more.
    c.timeout = Duration::from_millis(50);
    c.attempts = 2;
    let e = c.call(Message::Lookup { region: 0 }).unwrap_err();
    assert!(
        e.to_string().contains("no answer from the rack controller"),
        "{e}"
    );
}

#[test]
fn a_restarted_service_answers_from_its_log_and_fences_silent_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("rack.log");
    let cfg = rack();
    let (r, _) = Rack::open(cfg.clone(), &log, 0).unwrap();
    let running = Service::bind("127.0.0.1:0", r).unwrap().spawn().unwrap();
    let mut c = Client::connect(running.addr()).unwrap();
    assert_eq!(
        c.call(hello(&cfg, 1, 5)).unwrap(),
        Message::Welcome { node: 1, epoch: 1 }
    );
    assert_eq!(
        c.call(Message::AssignRegion {
            region: 42,
            owner: 1,
            epoch: 1
        })
        .unwrap(),
        Message::Owner(Placement {
            region: 42,
            node: 1,
            epoch: 1
        })
    );
    drop(running.stop().unwrap());

    // A new controller process over the same log.
    let (r, rec) = Rack::open(cfg.clone(), &log, 0).unwrap();
    assert_eq!((rec.records, rec.truncated), (2, None));
    let running = Service::bind("127.0.0.1:0", r).unwrap().spawn().unwrap();
    let mut c = Client::connect(running.addr()).unwrap();
    assert_eq!(
        c.call(Message::Lookup { region: 42 }).unwrap(),
        Message::Owner(Placement {
            region: 42,
            node: 1,
            epoch: 1
        })
    );
    // mn0 never beats again: after dead_after_ms (1000) it is declared dead and fenced.
    std::thread::sleep(Duration::from_millis(1300));
    let hb = Message::Heartbeat {
        node: 1,
        epoch: 1,
        pressure: clio_control::Pressure {
            used_bytes: 0,
            free_bytes: 0,
        },
    };
    assert_eq!(
        c.call(hb).unwrap(),
        Message::Refused {
            code: ErrorCode::StaleEpoch,
            field: Field::HeartbeatEpoch
        }
    );
    assert_eq!(
        c.call(Message::Lookup { region: 42 }).unwrap(),
        Message::Owner(Placement {
            region: 42,
            node: 1,
            epoch: 2
        })
    );
    let service = running.stop().unwrap();
    assert!(service.rack().controller().node(1).unwrap().dead);
    assert_eq!(service.stats().declared_dead, 1);
}

/// A node agent's first heartbeat is part of starting it: a controller that
/// refuses it makes `NodeAgent::start` fail (naming the refusal), so once
/// `start` returns the controller holds the node's pressure (placement
/// breaks ties by it; a node not yet heard from counts as full).
#[test]
fn a_node_agent_reports_its_pressure_before_start_returns() {
    use clio_rack::node::{NodeAgent, RackNode, SharedNode};
    let ctl = UdpSocket::bind("127.0.0.1:0").unwrap();
    ctl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let addr = ctl.local_addr().unwrap();
    // A scripted controller: welcome the hello, refuse the heartbeat.
    let script = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut rx = [0u8; MAX_ENVELOPE_LEN];
        while seen.len() < 2 {
            let Ok((n, from)) = ctl.recv_from(&mut rx) else {
                break;
            };
            let env = Envelope::decode(&rx[..n]).unwrap();
            let reply = match env.message {
                Message::Hello { node, .. } => Message::Welcome { node, epoch: 1 },
                _ => Message::Refused {
                    code: ErrorCode::NodeDead,
                    field: Field::HeartbeatNode,
                },
            };
            seen.push(env.message);
            let mut out = [0u8; MAX_ENVELOPE_LEN];
            let bytes = Envelope::new(env.request_id, reply)
                .encode(&mut out)
                .unwrap();
            ctl.send_to(bytes, from).unwrap();
        }
        seen
    });
    let b = common::board();
    let node = SharedNode::new(RackNode::new(clio_emu::Board::new(&b).unwrap()));
    let Err(err) = NodeAgent::start(
        addr,
        1,
        "127.0.0.1:7700".parse().unwrap(),
        2 << 30,
        node,
        Duration::from_secs(3600),
    ) else {
        panic!("the refused first heartbeat must fail the start");
    };
    assert!(
        err.to_string().contains("refused node 1's first heartbeat"),
        "{err}"
    );
    let seen = script.join().unwrap();
    assert!(
        matches!(seen[0], Message::Hello { node: 1, .. }),
        "{seen:?}"
    );
    assert!(
        matches!(
            seen[1],
            Message::Heartbeat {
                node: 1,
                epoch: 1,
                ..
            }
        ),
        "{seen:?}"
    );
}
