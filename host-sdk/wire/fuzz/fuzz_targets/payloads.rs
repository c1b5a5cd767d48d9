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
    if let Ok((r, args)) = OffloadCallReq::parse_with_args(data) {
        let mut b = [0u8; OffloadCallReq::LEN];
        r.emit(&mut b).unwrap();
        assert_eq!(&b[..], &data[..OffloadCallReq::LEN]);
        assert_eq!(args.len(), data.len() - OffloadCallReq::LEN);
    }
    let _ = OffloadCallResp::parse(data);
    if let Ok(i) = InfoResp::parse(data) {
        assert!(i.board_name().is_ok());
    }
});
