//! Recovery never panics on any bytes, and a log cut anywhere keeps exactly the
//! records that were wholly written before the cut.

use clio_rack::log::{encode_record, scan, HEADER_LEN, HEADER_MAGIC, LOG_VERSION};
use clio_rack::Event;
use proptest::prelude::*;

fn header() -> Vec<u8> {
    let mut h = HEADER_MAGIC.to_vec();
    h.extend_from_slice(&LOG_VERSION.to_le_bytes());
    h
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        ("[a-z0-9]{1,8}", any::<u32>(), any::<u32>()).prop_map(|(node, epoch, boot_epoch)| {
            Event::Registered {
                node,
                epoch,
                boot_epoch,
            }
        }),
        ("[a-z0-9]{1,8}", any::<u32>()).prop_map(|(node, epoch)| Event::Dead { node, epoch }),
        (any::<u32>(), "[a-z0-9]{1,8}").prop_map(|(region, node)| Event::Assigned { region, node }),
        any::<u32>().prop_map(|region| Event::Released { region }),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_after_the_header_never_panic(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut bytes = header();
        bytes.extend_from_slice(&body);
        let s = scan(&bytes);
        prop_assert!(s.valid_len >= HEADER_LEN as u64 && s.valid_len <= bytes.len() as u64);
        prop_assert_eq!(s.stopped.is_none(), s.valid_len == bytes.len() as u64);
    }

    #[test]
    fn a_cut_keeps_the_whole_records_before_it(
        changes in proptest::collection::vec(proptest::collection::vec(event(), 1..4), 1..8),
        cut_seed in any::<u64>(),
    ) {
        let mut bytes = header();
        let mut ends = Vec::new();
        for c in &changes {
            bytes.extend_from_slice(&encode_record(c));
            ends.push(bytes.len());
        }
        let cut = HEADER_LEN + (cut_seed % (bytes.len() - HEADER_LEN + 1) as u64) as usize;
        let s = scan(&bytes[..cut]);
        let whole = ends.iter().filter(|e| **e <= cut).count();
        prop_assert_eq!(s.records.len(), whole);
        for (i, (_, events)) in s.records.iter().enumerate() {
            prop_assert_eq!(events, &changes[i]);
        }
        prop_assert_eq!(s.stopped.is_some(), !ends.contains(&cut) && cut != HEADER_LEN);
    }
}
