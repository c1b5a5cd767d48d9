#![no_main]
//! EDM 66-bit blocks and memory messages: any bytes give a value or a
//! named error; a parsed message re-emits to the same blocks.
use clio_wire::edm::{emit_message, parse_message, Block66, BlockView, GrantRepr, NotifyRepr, BLOCK_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut blocks = Vec::new();
    for chunk in data.chunks(BLOCK_BYTES) {
        if let Ok(v) = BlockView::new_checked(chunk) {
            let b = v.block();
            let _ = NotifyRepr::parse(&b);
            let _ = GrantRepr::parse(&b);
            blocks.push(b);
        }
    }
    let mut body = vec![0u8; 1 << 17];
    if let Ok((h, n, used)) = parse_message(&blocks, &mut body) {
        let mut out = vec![Block66::data([0; 8]); used];
        let m = emit_message(&h, &body[..n], &mut out).unwrap();
        assert_eq!(&out[..m], &blocks[..used]);
    }
});
