#![no_main]
//! Authenticated rack control frames (clio-control v4): any bytes either
//! fail to authenticate or, sealed under the fuzzer's key (the input's tail
//! is sealed here), open to a valid envelope or an error naming a field.
use clio_control::auth::{open, seal, FrameError, RackKey, Seal};
use clio_control::{Envelope, MAX_ENVELOPE_LEN};
use libfuzzer_sys::fuzz_target;

const KEY: RackKey = RackKey([0x5a; 16]);

fuzz_target!(|data: &[u8]| {
    // As received: random bytes do not authenticate (and never panic).
    assert!(matches!(open(data, &KEY), Err(FrameError::Unauthenticated) | Ok(_)));
    // As a body: when it decodes, sealing and opening round-trips.
    if let Ok(e) = Envelope::decode(data) {
        let s = Seal { sender: 1, counter: 2 };
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        if let Ok(f) = seal(&e, &KEY, s, &mut buf) {
            assert_eq!(open(f, &KEY).unwrap(), (e, s));
        }
    }
});
