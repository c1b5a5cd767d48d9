#![no_main]
//! Rack control datagrams (clio-control): any bytes decode to a valid envelope
//! that re-encodes to the same bytes, or fail naming a field.
use clio_control::{Envelope, MAX_ENVELOPE_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Envelope::decode(data) {
        Ok(e) => {
            assert!(e.message.validate().is_ok());
            let mut buf = [0u8; MAX_ENVELOPE_LEN];
            let n = e.encode(&mut buf).unwrap().len();
            assert_eq!(Envelope::decode(&buf[..n]).unwrap(), e);
        }
        Err(e) => assert!(!e.field.is_empty()),
    }
});
