//! Under the paper's switch timing (`paper_timing`, grants before forwarded data) a
//! READ's RREQ can overtake its own request record on the way to the memory node.
//! Every request must still be answered: none may be lost to the slot timeout.

use clio_wire::clio::HEADER_LEN;
use clio_wire::{Header, Opcode, Status};
use edm_clio::{ClioFabric, ClioFabricConfig, MemoryNode};

struct Instant0;

impl MemoryNode for Instant0 {
    fn handle(&mut self, _from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8])) {
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

fn request(read: bool, req_id: u32) -> Vec<u8> {
    let payload: &[u8] = if read { &[] } else { &[0x5a; 64] };
    let op = if read { Opcode::Read } else { Opcode::Write };
    let h = Header {
        payload_len: payload.len() as u16,
        ..Header::request(op, 1, req_id, 0x10_0000, 64)
    };
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    let n = h.emit_with_payload(&mut b, payload).unwrap();
    b.truncate(n);
    b
}

/// The paper-timing run at about load 0.8 with the card's first re-read wait `backoff`:
/// the translators' counters and the answers delivered.
fn overtaking_run(backoff: u64) -> (edm_clio::Counters, usize) {
    let (cards, nodes) = (8, 2);
    let mut cfg = ClioFabricConfig::new(cards, nodes);
    cfg.reread_backoff = backoff;
    cfg.fabric.switch = cfg.fabric.switch.paper_timing();
    cfg.fabric.switch.grants_first = true;
    cfg.fabric.wire_cycles = edm::load::TABLE1_WIRE_CYCLES;
    cfg.slot_timeout = 50_000;
    let mut f = ClioFabric::new(cfg, (0..nodes).map(|_| Instant0).collect()).unwrap();
    // Poisson-like arrivals (xorshift), about load 0.8 of a node's downlink.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let ops = 1500u32;
    let mean_gap = 18.0; // cycles between arrivals over all cards
    let mut at = 0.0f64;
    let mut got = 0usize;
    for id in 1..=ops {
        at += -(1.0 - rnd()).ln() * mean_gap;
        while (f.now() as f64) < at {
            f.step();
            got += f.take_answers().len();
        }
        let card = (rnd() * cards as f64) as usize % cards;
        f.submit(card, &request(rnd() < 0.5, id)).unwrap();
    }
    assert!(f.run_until_idle(5_000_000), "{f:?}");
    got += f.take_answers().len();
    assert_eq!(got, ops as usize, "{:?}", f.counters);
    (f.counters, got)
}

#[test]
fn no_answer_lost_when_the_rreq_overtakes_its_record() {
    // At once (the card's behaviour before the back-off) and with the default back-off.
    for backoff in [0, edm_clio::REREAD_BACKOFF] {
        let (c, _) = overtaking_run(backoff);
        // The race happened (the RRES found the outbox's previous chain) and the card
        // read again instead of waiting for the slot timeout.
        assert!(c.rereads > 0, "backoff {backoff}: {c:?}");
        assert_eq!(c.timeouts, 0, "backoff {backoff}: {c:?}");
    }
}

#[test]
fn the_reread_wait_doubles_up_to_its_bound() {
    let w: Vec<u64> = (1..=7)
        .map(|n| edm_clio::reread_wait(64, 1024, n))
        .collect();
    assert_eq!(w, [64, 128, 256, 512, 1024, 1024, 1024]);
    assert_eq!(edm_clio::reread_wait(0, 1024, 3), 0);
    assert_eq!(edm_clio::reread_wait(64, 1024, 200), 1024);
}

/// The slot timeout counts from the slot being taken: requests that queued at the card
/// for longer than the timeout behind busy slots are still carried, not given up.
#[test]
fn queueing_for_a_slot_does_not_count_toward_its_timeout() {
    let mut cfg = ClioFabricConfig::new(1, 1);
    cfg.slot_timeout = 4096;
    let mut f = ClioFabric::new(cfg, vec![Instant0]).unwrap();
    let ops = 1000u32;
    for id in 1..=ops {
        f.submit(0, &request(id % 2 == 0, id)).unwrap();
    }
    assert!(f.run_until_idle(5_000_000), "{f:?}");
    let answers = f.take_answers();
    // The last requests waited far longer than the timeout for a slot.
    let waited = answers
        .iter()
        .map(|a| a.issued - a.submitted)
        .max()
        .unwrap();
    assert!(waited > 3 * 4096, "waited at most {waited} cycles");
    assert_eq!(f.counters.timeouts, 0, "{:?}", f.counters);
    assert_eq!(answers.len(), ops as usize, "{:?}", f.counters);
}
