#![no_main]
//! Clio packet header: any bytes parse to a header or a named error.
use clio_wire::{Header, Packet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Packet::new_checked(data) {
        Ok(p) => {
            if let Ok(h) = Header::parse_verified(&p) {
                // A packet that parses re-emits to the same bytes.
                let mut buf = vec![0u8; h.buffer_len()];
                h.emit_with_payload(&mut buf, p.payload()).unwrap();
                assert_eq!(&buf[..], &data[..h.buffer_len()]);
            }
        }
        Err(e) => assert!(!e.field.is_empty()),
    }
});
