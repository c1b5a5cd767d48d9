#![no_main]
//! Clio-KV's call arguments (`clio_kv::proto`), alone and as the operations
//! of a batch: decode to a key and value that re-encode to the same bytes,
//! or a refusal code.
use clio_kv::proto;
use clio_wire::payload::OffloadBatchReq;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match proto::decode(data) {
        Ok((k, v)) => assert_eq!(proto::encode(k, v), data),
        Err(code) => assert_ne!(code, 0),
    }
    if let Ok(ops) = OffloadBatchReq::ops(data) {
        for (_, args) in ops {
            if let Ok((k, v)) = proto::decode(args) {
                assert_eq!(proto::encode(k, v), args);
            }
        }
    }
});
