//! The stable twin of the fuzz target `offload_host` (host-sdk/wire/fuzz):
//! the offload host's request/answer path (fragments in, answers split into
//! `OFFLOAD_REPLY` fragments out) under arbitrary scripts of calls, batches,
//! malformed and reordered fragments and unknown ids (`offload_drive`), and
//! the target's seed corpus.

#[path = "offload_drive/mod.rs"]
mod drive;

use clio_wire::Status;
use proptest::prelude::*;

#[test]
fn the_seed_corpus_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../host-sdk/wire/fuzz/corpus/offload_host");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    let mut all = Vec::new();
    for p in &seeds {
        let seen = drive::run(&std::fs::read(p).unwrap());
        eprintln!("{}: {seen:?}", p.display());
        all.extend(seen);
    }
    // The seeds reach every kind of answer.
    for s in [
        Status::Ok,
        Status::OffloadRefused,
        Status::OffloadFault,
        Status::NoSuchOffload,
        Status::Malformed,
    ] {
        assert!(all.contains(&s), "no seed is answered {s:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_scripts_get_well_formed_answers(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        drive::run(&data);
    }

    /// Scripts made of well-formed calls to the registered offloads (ids
    /// 2 and 4, small ops), so the offloads' own paths run too.
    #[test]
    fn scripts_of_plausible_calls(calls in proptest::collection::vec((0u8..2, 0u8..6, proptest::collection::vec(any::<u8>(), 0..24)), 1..24)) {
        let mut data = Vec::new();
        for (kind, op, args) in calls {
            if kind == 0 {
                // call: id selector (2 = MV, 4 = tally), op, args.
                data.extend_from_slice(&[0, [2u8, 4][usize::from(op % 2)], op, args.len() as u8]);
                data.extend_from_slice(&args);
            } else {
                // batch of two of the same: id selector, count, then each
                // op, its arguments' length and bytes.
                data.extend_from_slice(&[1, [2u8, 4][usize::from(op % 2)], 2]);
                for _ in 0..2 {
                    data.extend_from_slice(&[op, args.len() as u8]);
                    data.extend_from_slice(&args);
                }
            }
            // header: session 1, request id, no flags.
            data.extend_from_slice(&[0, data.len() as u8, 0]);
        }
        drive::run(&data);
    }
}
