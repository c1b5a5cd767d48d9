#![no_main]
//! Fixed payloads: every parser returns a value or a named error.
use clio_wire::payload::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = AllocReq::parse(data);
    let _ = AllocResp::parse(data);
    let _ = FreeReq::parse(data);
    let _ = AtomicArgs::parse_cas(data);
    let _ = AtomicArgs::parse_faa(data);
    let _ = AtomicResp::parse(data);
    let _ = ChaseReq::parse(data);
    let _ = ChaseResp::parse(data);
    let _ = OffloadReq::parse(data);
    if let Ok(i) = InfoResp::parse(data) {
        assert!(i.board_name().is_ok());
    }
});
