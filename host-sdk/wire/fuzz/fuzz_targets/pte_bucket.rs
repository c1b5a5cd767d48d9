#![no_main]
//! PTEs and buckets: a parsed PTE re-encodes to the same bytes.
use clio_wire::pte::{Bucket, Pte, PTE_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Pte::parse(data) {
        assert_eq!(&p.to_bytes()[..], &data[..PTE_LEN]);
    }
    if let Ok(b) = Bucket::new_checked(data, data.len() / PTE_LEN) {
        let _ = b.find(1, 1, 12);
        let _ = b.free_slot();
    }
});
