#![no_main]
//! The offload host's request/answer path (`clio_slowpath::offload`): any
//! script of calls, batches, malformed, cut-short or reordered
//! `OFFLOAD_REQ` fragments and unknown ids gets answers that survive the
//! ring, reassemble, and have the shape their status promises; a whole call
//! gets exactly one; nothing panics. The script's format and checks are in
//! `firmware-arm/slowpath/tests/offload_drive/mod.rs` (stable twin:
//! `firmware-arm/slowpath/tests/offload_fuzz.rs`); seeds in
//! `corpus/offload_host/`.
use libfuzzer_sys::fuzz_target;

#[path = "../../../../firmware-arm/slowpath/tests/offload_drive/mod.rs"]
mod drive;

fuzz_target!(|data: &[u8]| {
    let _ = drive::run(data);
});
