#![no_main]
//! Clio-DF's calls (`clio_df::proto`): SELECT and AGGREGATE arguments
//! decode to values that re-encode to the same bytes, or a refusal code;
//! the result readers never panic.
use clio_df::proto::{self, Aggregate, Select};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Select::decode(data) {
        Ok(s) => assert_eq!(s.encode(), data),
        Err(code) => assert_ne!(code, 0),
    }
    match Aggregate::decode(data) {
        Ok(a) => assert_eq!(a.encode(), data),
        Err(code) => assert_ne!(code, 0),
    }
    let _ = proto::select_result(data);
    let _ = proto::aggregate_result(data);
});
