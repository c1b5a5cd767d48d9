#![no_main]
//! Clio-MV's calls (`clio_mv::proto`): any operation number and argument
//! bytes decode to a call that re-encodes to the same bytes, or a refusal
//! code the store answers with; a result reader never panics.
use clio_mv::proto::{self, Call};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let op = u16::from_be_bytes([data[0], data[1]]);
    let args = &data[2..];
    match Call::decode(op, args) {
        Ok(c) => assert_eq!(c.encode(), (op, args.to_vec())),
        Err(code) => assert_ne!(code, 0),
    }
    for at in [0, 4, 8] {
        let _ = proto::result_u64(args, at);
        let _ = proto::result_u32(args, at);
    }
});
