#![no_main]
//! Ring descriptors and header: a parsed slot re-encodes to the same bytes.
use clio_wire::ring::{Descriptor, Direction, RingHeader, SLOT_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for dir in [Direction::Rx, Direction::Tx] {
        if let Ok(d) = Descriptor::parse(data, dir) {
            let mut s = [0u8; SLOT_LEN];
            d.emit(&mut s).unwrap();
            assert_eq!(&s[..], &data[..SLOT_LEN]);
        }
    }
    if let Ok(h) = RingHeader::new_checked(data) {
        let _ = h.check();
    }
});
