//! Bad input at an emulated U200 card: a corrupted and a truncated H2C slot, an
//! over-long packet, a ring overflow and an unknown Clio opcode. Each is refused
//! with the field (or register) named (the card also answers the unknown opcode
//! itself), and the card keeps serving: a fresh session afterwards writes and
//! reads back.

use std::time::Duration;

use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_fabric::{Rack, RackOptions};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::perms;
use clio_wire::xdma::reg;
use clio_wire::{Header, Opcode, Packet, Status};
use clio_xdma::{XdmaDevice, XdmaError, XdmaLink};

fn card_still_serves(rack: &Rack) {
    let link = XdmaLink::open(rack.card(0)).unwrap();
    let mut s = Session::open_with(link, ClientConfig::default()).unwrap();
    let a = s.ralloc(4096, perms::RW).unwrap();
    s.rwrite(a.va, b"still here").unwrap();
    let mut b = [0u8; 10];
    s.rread(a.va, &mut b).unwrap();
    assert_eq!(&b, b"still here");
}

/// Write `slot` image into the next H2C slot by DMA and publish it, as a broken host would.
fn publish_raw(dev: &XdmaDevice, slot: &[u8]) {
    let head = dev.read_u32(reg::H2C_HEAD).unwrap();
    let base = dev.read_u64(reg::H2C_BASE).unwrap();
    let (bytes, count) = (
        dev.read_u32(reg::SLOT_BYTES).unwrap(),
        dev.read_u32(reg::SLOT_COUNT).unwrap(),
    );
    dev.dma_write(clio_wire::xdma::slot_addr(base, head, count, bytes), slot)
        .unwrap();
    dev.write_u32(reg::H2C_HEAD, head.wrapping_add(1)).unwrap();
}

fn wait_errors(dev: &XdmaDevice, want: u32) -> u32 {
    for _ in 0..400 {
        let e = dev.read_u32(reg::ERRORS).unwrap();
        if e >= want {
            return e;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    dev.read_u32(reg::ERRORS).unwrap()
}

#[test]
fn bad_slots_packets_and_indices_are_refused_and_the_card_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let rack = Rack::start(RackOptions {
        cards: 1,
        nodes: 1,
        dir: dir.path().to_path_buf(),
        board: BoardConfig::embedded("emulator").unwrap(),
    })
    .unwrap();
    card_still_serves(&rack);
    let dev = XdmaDevice::open(rack.card(0)).unwrap();

    // A corrupted slot header (reserved bits set) and a truncated one (length past the slot).
    publish_raw(&dev, &[8, 0, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8]);
    publish_raw(&dev, &[0xff, 0xff, 0, 0]);
    assert_eq!(wait_errors(&dev, 2), 2, "the card counts both in ERRORS");
    card_still_serves(&rack);

    // Ring overflow: H2C_HEAD far past the tail. The card drops what it cannot
    // trust, and a host that opens the card afterwards resumes from its indices.
    let tail = dev.read_u32(reg::H2C_TAIL).unwrap();
    dev.write_u32(reg::H2C_HEAD, tail.wrapping_add(1000))
        .unwrap();
    assert_eq!(wait_errors(&dev, 1002), 1002);
    card_still_serves(&rack);

    // An over-long packet never leaves the host: the error names both lengths.
    let mut link = XdmaLink::open(rack.card(0)).unwrap();
    let e = link.send(&vec![0u8; link.max_packet() + 1]).unwrap_err();
    assert!(matches!(e, XdmaError::TooLarge { .. }), "{e}");

    // An unknown opcode and a packet shorter than a Clio header: the card's
    // translator refuses both, naming the field, and carries nothing.
    let h = Header::request(Opcode::Write, 1, 7, 0x1000, 0);
    let mut p = vec![0u8; HEADER_LEN];
    h.emit_with_payload(&mut p, &[]).unwrap();
    p[clio_wire::clio::field::OPCODE] = 0x7e;
    link.send(&p).unwrap();
    link.send(&p[..20]).unwrap();
    // The unknown opcode is answered by the card itself, as a Clio board answers
    // one: a NACK with status UNSUPPORTED naming the request (the runt names none).
    let mut buf = [0u8; 256];
    let n = link
        .recv(&mut buf, Duration::from_secs(5))
        .unwrap()
        .expect("the card answers the unknown opcode");
    let a = Header::parse_verified(&Packet::new_checked(&buf[..n]).unwrap()).unwrap();
    assert_eq!(
        (a.opcode, a.status, a.pid, a.req_id, a.payload_len),
        (Opcode::Nack, Status::Unsupported, 1, 7, 0)
    );
    let mut refused = Vec::new();
    for _ in 0..400 {
        refused = rack.stats().refused;
        if refused.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    refused.sort();
    assert_eq!(
        refused,
        vec![
            ("clio.header".to_string(), 1),
            ("clio.opcode".to_string(), 1)
        ]
    );
    // The card's own registers say the same (XLATE_REFUSED; ERRORS from the
    // slots above), as `clio bringup` reads them.
    let c = link.card_counters().unwrap();
    assert_eq!(
        (c.malformed_slots, c.refused, c.timeouts),
        (1002, 2, 0),
        "{c}"
    );
    drop(link);
    card_still_serves(&rack);
    rack.stop().unwrap();
}
