//! Clio packets through the translator model and the EDM fabric model to a toy
//! memory node that answers each request with its request id and a payload of the
//! asked length.

use clio_wire::clio::HEADER_LEN;
use clio_wire::{Header, Opcode, Status};
use edm_clio::{ClioFabric, ClioFabricConfig, MemoryNode};

fn request(op: Opcode, req_id: u32, len: u32, payload: &[u8]) -> Vec<u8> {
    let h = Header {
        payload_len: payload.len() as u16,
        ..Header::request(op, 1, req_id, 0x1000, len)
    };
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    let n = h.emit_with_payload(&mut b, payload).unwrap();
    b.truncate(n);
    b
}

/// Answers a READ of `n` bytes with `n` bytes of `req_id as u8`, anything else with a
/// header-only answer; remembers who asked.
struct Toy(Vec<u16>);

impl MemoryNode for Toy {
    fn handle(&mut self, from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.0.push(from);
        let p = clio_wire::Packet::new_checked(packet).unwrap();
        let h = Header::parse_verified(&p).unwrap();
        let body = if h.opcode == Opcode::Read {
            vec![h.req_id as u8; h.total_len as usize]
        } else {
            Vec::new()
        };
        let r = Header {
            opcode: h.opcode.response().unwrap(),
            status: Status::Ok,
            payload_len: body.len() as u16,
            ..h
        };
        let mut b = vec![0u8; HEADER_LEN + body.len()];
        let n = r.emit_with_payload(&mut b, &body).unwrap();
        out(&b[..n]);
    }
}

#[test]
fn reads_writes_and_refusals_cross_the_fabric() {
    let mut f =
        ClioFabric::new(ClioFabricConfig::new(3, 2), vec![Toy(vec![]), Toy(vec![])]).unwrap();
    for card in 0..3 {
        for i in 0..6u32 {
            let id = (card as u32) * 100 + i + 1;
            let pkt = if i % 2 == 0 {
                request(Opcode::Read, id, 64 * (i + 1), &[])
            } else {
                request(Opcode::Write, id, 16, &[7u8; 16])
            };
            f.submit(card, &pkt).unwrap();
        }
    }
    assert!(f.run_until_idle(1_000_000), "{f:?}");
    let answers = f.take_answers();
    assert_eq!(answers.len(), 18, "{:?}", f.counters);
    for a in &answers {
        let p = clio_wire::Packet::new_checked(&a.packet[..]).unwrap();
        let h = Header::parse_verified(&p).unwrap();
        assert_eq!(h.req_id / 100, a.card as u32);
        if h.opcode == Opcode::ReadResp {
            assert!(a.read);
            assert_eq!(p.payload(), vec![h.req_id as u8; h.total_len as usize]);
        } else {
            assert_eq!(h.opcode, Opcode::WriteResp);
        }
        assert!(a.answered > a.submitted);
    }
    // Card i talks to node i % 2 (ports 3 and 4).
    assert_eq!(f.nodes[0].0.iter().filter(|&&c| c == 1).count(), 0);
    assert_eq!(f.nodes[1].0.len(), 6);
    assert_eq!(f.counters.bad_records + f.counters.timeouts, 0);
    // Refusals name the field and carry nothing.
    let mut bad = request(Opcode::Write, 9, 0, &[]);
    bad[1] = 0x7e;
    assert_eq!(f.submit(0, &bad).unwrap_err().field, "clio.opcode");
    assert_eq!(f.submit(0, &bad[..20]).unwrap_err().field, "clio.header");
    let long = request(Opcode::Read, 9, 60_000, &[]);
    assert_eq!(f.submit(0, &long).unwrap_err().field, "clio.total_len");
    assert_eq!(f.outstanding(), 0);
    // Counted per card, as the RTL card's XLATE_REFUSED.
    assert_eq!(f.card_counters(0).refused, 3);
    assert_eq!(f.card_counters(1).refused, 0);
}

#[test]
fn a_dead_link_times_out_its_cards_slots_and_spares_the_others() {
    let mut cfg = ClioFabricConfig::new(2, 1);
    cfg.slot_timeout = 20_000;
    let mut f = ClioFabric::new(cfg, vec![Toy(vec![])]).unwrap();
    // Card 0's uplink takes bad sync headers until its monitor takes it down.
    for c in 0..64 {
        f.fabric
            .inject(0, edm::fabric::Dir::Up, c, edm::fabric::Inject::BadSync);
    }
    for card in 0..2 {
        for i in 0..3u32 {
            let id = card as u32 * 100 + i + 1;
            f.submit(card, &request(Opcode::Read, id, 64, &[])).unwrap();
        }
    }
    for _ in 0..60_000 {
        f.step();
    }
    assert!(f.fabric.link_disabled(0, edm::fabric::Dir::Up).is_some());
    let answers = f.take_answers();
    assert!(answers.iter().all(|a| a.card == 1));
    assert_eq!(answers.len(), 3);
    assert_eq!(f.counters.timeouts, 3, "{:?}", f.counters);
    assert_eq!(
        f.card_counters(0).timeouts,
        3,
        "the dead card's XLATE_TIMEOUTS"
    );
    assert_eq!(f.card_counters(1), edm_clio::CardCounters::default());
    assert_eq!(f.outstanding(), 0, "the dead card's slots are free again");
}
