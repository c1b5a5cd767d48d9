#![no_main]
//! The rack key's boot parameter block: any bytes decode to no key, a key,
//! or a named refusal, never a panic; a decoded key re-encodes to the same block.
use clio_control::auth::KeyBlock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(key)) = KeyBlock::decode(data) {
        assert_eq!(&KeyBlock::encode(&key)[..], &data[..KeyBlock::LEN]);
    }
});
