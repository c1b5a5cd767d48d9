//! The host link against a software card on stand-in files: real Clio
//! packets end to end, ring wrap-around and back-pressure, and every error
//! path (identity, readiness, geometry, oversize, corrupt slots, missing
//! nodes, timeouts).

use std::time::{Duration, Instant};

use clio_wire::clio::HEADER_LEN;
use clio_wire::xdma::{self, reg};
use clio_wire::{Header, Opcode, Packet};
use clio_xdma::{FileCard, Geometry, XdmaDevice, XdmaError, XdmaLink};

fn card(dir: &tempfile::TempDir) -> FileCard {
    FileCard::create(dir.path(), "xdma0", FileCard::DEFAULT_GEOMETRY).unwrap()
}

fn header(opcode: Opcode, req_id: u32, va: u64, payload_len: usize) -> Header {
    Header {
        payload_len: payload_len as u16,
        ..Header::request(opcode, 7, req_id, va, payload_len as u32)
    }
}

fn write_packet(req_id: u32, data: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; HEADER_LEN + data.len()];
    let n = header(Opcode::Write, req_id, 0x1000 * req_id as u64, data.len())
        .emit_with_payload(&mut buf, data)
        .unwrap();
    buf.truncate(n);
    buf
}

/// Card handler: answer a WRITE with a READ_RESP carrying the same bytes
/// (so the test sees its data come back through the C2H ring).
fn echo(pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
    let p = Packet::new_checked(pkt).unwrap();
    let h = Header::parse_verified(&p).unwrap();
    let mut r = h;
    r.opcode = Opcode::ReadResp;
    let mut buf = vec![0u8; HEADER_LEN + p.payload().len()];
    let n = r.emit_with_payload(&mut buf, p.payload()).unwrap();
    out(&buf[..n]);
}

fn data(i: u32) -> Vec<u8> {
    (0..(i as usize * 37) % 1400)
        .map(|k| (k as u32 ^ i) as u8)
        .collect()
}

#[test]
fn clio_packets_round_trip_through_both_rings_with_wrap_around() {
    let dir = tempfile::tempdir().unwrap();
    let thread = card(&dir).spawn(echo);
    let mut link = XdmaLink::open(dir.path().join("xdma0")).unwrap();
    assert_eq!(link.geometry(), FileCard::DEFAULT_GEOMETRY);
    let mut buf = vec![0u8; 4096];
    // Three times around the 64-slot rings, with a window of 8 in flight.
    let total = 200u32;
    let (mut sent, mut got) = (0u32, 0u32);
    while got < total {
        while sent < total && sent - got < 8 {
            sent += 1;
            link.send(&write_packet(sent, &data(sent))).unwrap();
        }
        let n = link
            .recv(&mut buf, Duration::from_secs(10))
            .unwrap()
            .expect("the card answers every packet");
        got += 1;
        let p = Packet::new_checked(&buf[..n]).unwrap();
        let h = Header::parse_verified(&p).unwrap();
        assert_eq!(h.opcode, Opcode::ReadResp);
        assert_eq!(h.req_id, got, "answers come back in ring order");
        assert_eq!(h.va, 0x1000 * got as u64);
        assert_eq!(p.payload(), &data(got)[..]);
    }
    assert_eq!(link.stats().sent, 200);
    assert_eq!(link.stats().received, 200);
    let card = thread.stop().unwrap();
    assert_eq!(card.stats().requests, 200);
    assert_eq!(card.stats().responses, 200);
    assert_eq!(card.register(reg::H2C_HEAD).unwrap(), 200);
    assert_eq!(card.register(reg::H2C_TAIL).unwrap(), 200);
    assert_eq!(card.register(reg::C2H_HEAD).unwrap(), 200);
    assert_eq!(card.register(reg::C2H_TAIL).unwrap(), 200);
    assert_eq!(link.card_errors().unwrap(), 0);
}

#[test]
fn slots_in_card_memory_have_the_wire_layout() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    let pkt = write_packet(1, b"abc");
    link.send(&pkt).unwrap();
    link.send(&write_packet(2, b"")).unwrap();
    assert_eq!(card.register(reg::H2C_HEAD).unwrap(), 2);
    let g = card.geometry();
    let mut slot = vec![0u8; pkt.len() + 4];
    card.read_mem(g.h2c_slot(0), &mut slot).unwrap();
    assert_eq!(&slot[..4], &[(pkt.len() as u8), 0, 0, 0]);
    assert_eq!(&slot[4..], &pkt[..]);
    // Same bytes through the c2h node (one memory behind both channels).
    let dev = XdmaDevice::open(card.prefix()).unwrap();
    let mut again = vec![0u8; slot.len()];
    dev.dma_read(g.h2c_slot(0), &mut again).unwrap();
    assert_eq!(again, slot);
    assert_eq!(xdma::parse_slot(&again).unwrap(), &pkt[..]);
}

#[test]
fn full_h2c_ring_waits_then_fails_and_recovers_when_the_card_consumes() {
    let dir = tempfile::tempdir().unwrap();
    let geom = Geometry {
        slot_count: 4,
        c2h_base: 4 * 2048,
        ..FileCard::DEFAULT_GEOMETRY
    };
    let mut card = FileCard::create(dir.path(), "xdma0", geom).unwrap();
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    link.set_send_timeout(Duration::from_millis(30));
    for i in 1..=4 {
        link.send(&write_packet(i, b"x")).unwrap();
    }
    let t = Instant::now();
    let e = link.send(&write_packet(5, b"x")).unwrap_err();
    assert!(matches!(e, XdmaError::Full { .. }), "{e}");
    assert!(t.elapsed() >= Duration::from_millis(30));
    assert!(e.to_string().contains("xdma0_user"), "{e}");
    assert_eq!(
        card.register(reg::H2C_HEAD).unwrap(),
        4,
        "nothing published"
    );

    let mut seen = Vec::new();
    let served = card
        .serve_once(&mut |p: &[u8], _out: &mut dyn FnMut(&[u8])| {
            seen.push(Packet::new_checked(p).unwrap().req_id())
        })
        .unwrap();
    assert_eq!(served.requests, 4);
    assert_eq!(seen, [1, 2, 3, 4]);
    link.send(&write_packet(5, b"x")).unwrap();
    assert_eq!(link.stats().full_waits, 2);
}

#[test]
fn answers_wait_in_the_card_while_the_c2h_ring_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let geom = Geometry {
        slot_count: 2,
        c2h_base: 2 * 2048,
        ..FileCard::DEFAULT_GEOMETRY
    };
    let mut card = FileCard::create(dir.path(), "xdma0", geom).unwrap();
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    // One request, three answers: only two fit the C2H ring.
    link.send(&write_packet(1, b"q")).unwrap();
    let mut handler = |_p: &[u8], out: &mut dyn FnMut(&[u8])| {
        for i in 10..13 {
            out(&write_packet(i, b"a"));
        }
    };
    let s = card.serve_once(&mut handler).unwrap();
    assert_eq!((s.requests, s.responses), (1, 2));
    let mut buf = [0u8; 256];
    let mut ids = Vec::new();
    for _ in 0..2 {
        let n = link.recv(&mut buf, Duration::ZERO).unwrap().unwrap();
        ids.push(Packet::new_checked(&buf[..n]).unwrap().req_id());
    }
    assert_eq!(link.recv(&mut buf, Duration::ZERO).unwrap(), None);
    let s = card.serve_once(&mut handler).unwrap();
    assert_eq!((s.requests, s.responses), (0, 1));
    let n = link.recv(&mut buf, Duration::ZERO).unwrap().unwrap();
    ids.push(Packet::new_checked(&buf[..n]).unwrap().req_id());
    assert_eq!(ids, [10, 11, 12]);
}

#[test]
fn probe_rejects_a_card_that_is_not_clio() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    card.set_register(reg::ID, 0xdead_beef).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    match &e {
        XdmaError::BadId { path, found, .. } => {
            assert_eq!(*found, 0xdead_beef);
            assert!(path.ends_with("xdma0_user"));
        }
        other => panic!("wrong error {other}"),
    }
    assert!(e.to_string().contains("0xdeadbeef"), "{e}");
}

#[test]
fn probe_rejects_other_versions_and_cards_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    card.set_register(reg::VERSION, 9).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::BadVersion {
                found: 9,
                expected: xdma::VERSION,
                ..
            }
        ),
        "{e}"
    );
    card.set_register(reg::VERSION, xdma::VERSION).unwrap();
    card.set_register(reg::STATUS, xdma::status::LINK_UP)
        .unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(matches!(e, XdmaError::NotReady { status: 2, .. }), "{e}");
    assert!(e.to_string().contains("not READY"), "{e}");
}

#[test]
fn probe_rejects_unusable_geometry_naming_the_register() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    card.set_register(reg::SLOT_COUNT, 3).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::Geometry {
                reg: "SLOT_COUNT",
                value: 3,
                ..
            }
        ),
        "{e}"
    );
    card.set_register(reg::SLOT_COUNT, 64).unwrap();
    card.set_register(reg::C2H_BASE, 0x800).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::Geometry {
                reg: "C2H_BASE",
                ..
            }
        ),
        "{e}"
    );
    card.set_register(reg::C2H_BASE, 64 * 2048).unwrap();
    card.set_register(reg::SLOT_BYTES, 16).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::Geometry {
                reg: "SLOT_BYTES",
                ..
            }
        ),
        "{e}"
    );
    // A C2H_HEAD published beyond the ring is refused at probe too.
    card.set_register(reg::SLOT_BYTES, 2048).unwrap();
    card.set_register(reg::C2H_HEAD, 65).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::RingIndex {
                reg: "C2H_HEAD",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn oversize_packet_is_refused_before_anything_moves() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    assert_eq!(link.max_packet(), 2044);
    let big = vec![0u8; 2045];
    let e = link.send(&big).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::TooLarge {
                len: 2045,
                max: 2044
            }
        ),
        "{e}"
    );
    assert_eq!(card.register(reg::H2C_HEAD).unwrap(), 0);
    link.send(&big[..2044]).unwrap();
    assert_eq!(card.register(reg::H2C_HEAD).unwrap(), 1);
}

#[test]
fn corrupt_c2h_slot_is_reported_consumed_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    let g = card.geometry();
    card.publish(&write_packet(1, b"first")).unwrap();
    card.publish(&write_packet(2, b"second")).unwrap();
    // Slot 0 now claims 0xffff bytes, more than a 2048-byte slot holds.
    card.write_mem(g.c2h_slot(0), &[0xff, 0xff]).unwrap();
    let mut buf = [0u8; 4096];
    let e = link.recv(&mut buf, Duration::from_secs(1)).unwrap_err();
    match &e {
        XdmaError::Slot {
            ring,
            index,
            source,
        } => {
            assert_eq!((*ring, *index), ("c2h", 0));
            assert_eq!(source.field, "xdma.slot.len");
        }
        other => panic!("wrong error {other}"),
    }
    assert!(e.is_slot_local());
    assert!(e.to_string().contains("c2h slot 0"), "{e}");
    assert_eq!(card.register(reg::C2H_TAIL).unwrap(), 1, "slot freed");
    assert_eq!(link.stats().dropped, 1);
    // The link goes on with the next slot.
    let n = link
        .recv(&mut buf, Duration::from_secs(1))
        .unwrap()
        .unwrap();
    let p = Packet::new_checked(&buf[..n]).unwrap();
    assert_eq!((p.req_id(), p.payload()), (2, &b"second"[..]));
    assert_eq!(card.register(reg::C2H_TAIL).unwrap(), 2);
}

#[test]
fn corrupt_h2c_slot_is_dropped_by_the_card_and_counted_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut card = card(&dir);
    let link = XdmaLink::open(card.prefix()).unwrap();
    let g = card.geometry();
    // A host bug: a slot with reserved bits set, published by hand.
    link.device()
        .dma_write(g.h2c_slot(0), &[4, 0, 1, 0, 1, 2, 3, 4])
        .unwrap();
    link.device().write_u32(reg::H2C_HEAD, 1).unwrap();
    let mut calls = 0;
    let s = card
        .serve_once(&mut |_p: &[u8], _o: &mut dyn FnMut(&[u8])| calls += 1)
        .unwrap();
    assert_eq!((s.requests, calls), (1, 0));
    assert_eq!(card.stats().malformed, 1);
    assert_eq!(link.card_errors().unwrap(), 1);
    assert_eq!(card.register(reg::H2C_TAIL).unwrap(), 1);
}

#[test]
fn received_packet_larger_than_the_buffer_is_dropped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    card.publish(&write_packet(1, &[7u8; 100])).unwrap();
    card.publish(&write_packet(2, b"")).unwrap();
    let mut small = [0u8; 64];
    let e = link.recv(&mut small, Duration::ZERO).unwrap_err();
    assert!(
        matches!(e, XdmaError::BufferTooSmall { len, cap: 64 } if len == clio_wire::clio::HEADER_LEN + 100),
        "{e}"
    );
    let n = link.recv(&mut small, Duration::ZERO).unwrap().unwrap();
    assert_eq!(Packet::new_checked(&small[..n]).unwrap().req_id(), 2);
}

#[test]
fn missing_device_node_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let c2h = dir.path().join("xdma0_c2h_0");
    std::fs::remove_file(&c2h).unwrap();
    let e = XdmaLink::open(card.prefix()).unwrap_err();
    match &e {
        XdmaError::Open { path, source } => {
            assert_eq!(path, &c2h);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("wrong error {other}"),
    }
    assert!(e.to_string().contains(&c2h.display().to_string()), "{e}");
    let e = XdmaDevice::open(dir.path().join("xdma7")).unwrap_err();
    assert!(e.to_string().contains("xdma7_user"), "{e}");
    // The control node is optional; asking for it names the path.
    let dev_dir = tempfile::tempdir().unwrap();
    let card2 = FileCard::create(dev_dir.path(), "xdma1", FileCard::DEFAULT_GEOMETRY).unwrap();
    let dev = XdmaDevice::open(card2.prefix()).unwrap();
    let e = dev.control_read_u32(0).unwrap_err();
    assert!(e.to_string().contains("xdma1_control"), "{e}");
}

#[test]
fn recv_times_out_within_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    let mut buf = [0u8; 2048];
    let t = Instant::now();
    assert_eq!(
        link.recv(&mut buf, Duration::from_millis(25)).unwrap(),
        None
    );
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(25), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(link.recv(&mut buf, Duration::ZERO).unwrap(), None);
}

#[test]
fn impossible_c2h_head_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    card.set_register(reg::C2H_HEAD, 1000).unwrap();
    let mut buf = [0u8; 2048];
    let e = link.recv(&mut buf, Duration::from_secs(5)).unwrap_err();
    assert!(
        matches!(
            e,
            XdmaError::RingIndex {
                reg: "C2H_HEAD",
                value: 1000,
                count: 64,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn short_transfers_stop_with_an_error_naming_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let dev = XdmaDevice::open(card.prefix()).unwrap();
    let g = card.geometry();
    let end = g.c2h_base + g.ring_bytes();
    let mut buf = [0u8; 8];
    let e = dev.dma_read(end - 2, &mut buf).unwrap_err();
    match &e {
        XdmaError::ShortTransfer {
            path,
            op,
            done,
            want,
            ..
        } => {
            assert!(path.ends_with("xdma0_c2h_0"));
            assert_eq!((*op, *done, *want), ("read", 2, 8));
        }
        other => panic!("wrong error {other}"),
    }
    // 64-bit registers are two 32-bit words, low first.
    dev.write_u64(reg::H2C_BASE, 0x1122_3344_5566_7788).unwrap();
    assert_eq!(card.register(reg::H2C_BASE).unwrap(), 0x5566_7788);
    assert_eq!(card.register(reg::H2C_BASE + 4).unwrap(), 0x1122_3344);
    assert_eq!(dev.read_u64(reg::H2C_BASE).unwrap(), 0x1122_3344_5566_7788);
}

#[test]
fn sender_drains_answers_while_the_card_waits_for_c2h_room() {
    // Two-slot rings and a card with back-pressure: it takes no request
    // while an answer is held back. A host that sends eight requests before
    // reading any answer would wait forever for H2C room; the link takes
    // the answers off the C2H ring while it waits.
    let dir = tempfile::tempdir().unwrap();
    let geom = Geometry {
        slot_count: 2,
        c2h_base: 2 * 2048,
        ..FileCard::DEFAULT_GEOMETRY
    };
    let card = FileCard::create(dir.path(), "xdma0", geom).unwrap();
    let mut link = XdmaLink::open(card.prefix()).unwrap();
    let thread = card.spawn(echo);
    for i in 1..=8 {
        link.send(&write_packet(i, &data(i))).unwrap();
    }
    let mut buf = vec![0u8; 2048];
    for i in 1..=8 {
        let n = link
            .recv(&mut buf, Duration::from_secs(10))
            .unwrap()
            .unwrap();
        let p = Packet::new_checked(&buf[..n]).unwrap();
        assert_eq!((p.req_id(), p.payload()), (i, &data(i)[..]));
    }
    assert_eq!(link.recv(&mut buf, Duration::ZERO).unwrap(), None);
    assert!(link.stats().full_waits > 0, "{:?}", link.stats());
    assert_eq!(link.stats().received, 8);
    let card = thread.stop().unwrap();
    assert_eq!(card.stats().responses, 8);
}

/// The driver refuses (EINVAL) a DMA whose host buffer is not congruent to
/// the card address modulo the engine's alignment. The stand-in applies the
/// same rule before each DMA; callers' buffers sit anywhere, so without the
/// bounce buffer these transfers from odd offsets of a Vec fail.
#[test]
fn dma_from_any_caller_buffer_meets_the_drivers_alignment_rule() {
    let dir = tempfile::tempdir().unwrap();
    let card = card(&dir);
    let dev = XdmaDevice::open(card.prefix()).unwrap();
    let g = card.geometry();
    let backing: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    for (k, skew) in [0usize, 1, 3, 5, 17].into_iter().enumerate() {
        let card_addr = g.h2c_slot(k as u32) + [0u64, 2, 7, 64, 1][k];
        let data = &backing[skew..skew + 200];
        dev.dma_write(card_addr, data).unwrap();
        let mut back = vec![0u8; 203];
        dev.dma_read(card_addr, &mut back[3..]).unwrap();
        assert_eq!(
            &back[3..],
            data,
            "card address {card_addr:#x}, caller skew {skew}"
        );
    }
}

#[test]
fn dma_errors_name_the_alignment_rule_and_the_timeout_advice() {
    let e = XdmaError::Misaligned {
        path: "/dev/xdma0_h2c_0".into(),
        op: "write",
        offset: 0x1003,
        buf: 0x7f00_0000_0001,
        align: clio_xdma::dma::DMA_ALIGN,
    };
    assert!(e.to_string().contains("EINVAL"), "{e}");
    let e = XdmaError::DmaTimeout {
        path: "/dev/xdma0_c2h_0".into(),
        op: "read",
        offset: 0x40,
    };
    let s = e.to_string();
    assert!(
        s.contains("/dev/xdma0_c2h_0") && s.contains("rmmod xdma") && s.contains("clio flash"),
        "{s}"
    );
}
