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
    // A batch either parses whole (and its ops re-encode to the same bytes)
    // or names the field at fault.
    if let Ok(ops) = OffloadBatchReq::ops(data) {
        let ops: Vec<_> = ops.collect();
        let mut b = OffloadBatchReq { count: ops.len() as u16 }.to_bytes().to_vec();
        for (op, args) in &ops {
            b.extend_from_slice(&OffloadBatchOp { op: *op, args_len: args.len() as u16 }.to_bytes());
            b.extend_from_slice(args);
        }
        assert_eq!(b, data);
    }
    if let Ok((r, res, rest)) = OffloadBatchResult::parse_with_result(data) {
        assert_eq!(&r.to_bytes()[..], &data[..OffloadBatchResult::LEN]);
        assert_eq!(res.len() + rest.len() + OffloadBatchResult::LEN, data.len());
    }
    if let Ok(i) = InfoResp::parse(data) {
        assert!(i.board_name().is_ok());
    }
});
