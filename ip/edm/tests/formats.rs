//! Property tests of the EDM block formats and the RX path on arbitrary input.

use clio_wire::edm as wire;
use edm::assemble::{encode, Assembler};
use edm::phy::RxDemux;
use proptest::prelude::*;
use wire::{Block66, MsgHeader, MsgKind, RmwOp};

fn header() -> impl Strategy<Value = MsgHeader> {
    (
        0u8..4,
        any::<bool>(),
        0u8..4,
        any::<u16>(),
        any::<u8>(),
        1u16..2000,
    )
        .prop_map(|(k, last, op, peer, id, len)| {
            let kind = MsgKind::ALL[k as usize];
            match kind {
                MsgKind::Rmwreq => {
                    let op = RmwOp::ALL[op as usize];
                    MsgHeader {
                        kind,
                        last: true,
                        op: Some(op),
                        peer,
                        id,
                        len: op.response_bytes(),
                    }
                }
                MsgKind::Rreq => MsgHeader {
                    kind,
                    last: true,
                    op: None,
                    peer,
                    id,
                    len,
                },
                _ => MsgHeader {
                    kind,
                    last,
                    op: None,
                    peer,
                    id,
                    len,
                },
            }
        })
}

proptest! {
    #[test]
    fn messages_roundtrip_through_blocks(h in header(), seed in any::<u8>()) {
        let body: Vec<u8> = (0..h.body_len()).map(|i| (i as u8).wrapping_mul(seed)).collect();
        let blocks = encode(&h, &body).unwrap();
        prop_assert_eq!(blocks.len(), wire::message_blocks(body.len()));
        let mut out = vec![0u8; body.len()];
        let (h2, n, used) = wire::parse_message(&blocks, &mut out).unwrap();
        prop_assert_eq!((h2, n, used), (h, body.len(), blocks.len()));
        prop_assert_eq!(out, body);
    }

    #[test]
    fn rx_path_never_panics_on_arbitrary_blocks(raw in proptest::collection::vec((0u8..4, any::<u64>()), 0..400)) {
        let mut rx = RxDemux::new();
        let mut asm = Assembler::new();
        for (cycle, (sync, payload)) in raw.into_iter().enumerate() {
            let (mem, _) = rx.tick(Block66 { sync, payload });
            if let Some(m) = mem {
                let _ = asm.push(cycle as u64, m);
            }
        }
    }

    #[test]
    fn header_parse_rejects_or_roundtrips(payload in any::<u64>()) {
        if let Ok(h) = MsgHeader::parse_payload(payload) {
            let b = h.to_bytes();
            let p = payload.to_le_bytes();
            prop_assert_eq!(&b[..], &p[1..7]);
        }
    }
}
