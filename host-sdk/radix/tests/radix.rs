//! The radix tree against an emulated board: random inserts and lookups
//! agree with a `BTreeMap`, by rchase and by rread, in process and over UDP;
//! corrupt chains fail clearly.

mod common;

use std::collections::BTreeMap;

use clio::backend::Transport;
use clio::{ClioError, OpKind, Session};
use clio_radix::{RadixError, RadixTree, NEXT_OFFSET};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Keys that share prefixes (so lists below the root have several entries
/// and paths branch at every level), plus fully random ones.
fn key(rng: &mut SmallRng) -> u64 {
    match rng.gen_range(0..3) {
        0 => rng.gen(),
        1 => 0x0102_0304_0000_0000 | rng.gen_range(0..1u64 << 20),
        _ => (rng.gen_range(0..4u64) << 56) | rng.gen_range(0..64u64),
    }
}

fn agree_with_model<T: Transport>(s: &mut Session<T>, n: usize, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut t = RadixTree::create(s, 8, 8).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..n {
        // Some keys again (replacing their value).
        let k = match model.keys().nth(rng.gen_range(0..model.len().max(1))) {
            Some(&k) if i % 5 == 4 => k,
            _ => key(&mut rng),
        };
        let v: u64 = rng.gen();
        let old = t.insert(s, k, v).unwrap();
        assert_eq!(old, model.insert(k, v), "insert {k:#x}");
    }
    for (&k, &v) in &model {
        assert_eq!(t.get(s, k).unwrap(), Some(v), "get {k:#x}");
        assert_eq!(t.get_rread(s, k).unwrap(), Some(v), "get_rread {k:#x}");
    }
    let mut missing = 0;
    while missing < 100 {
        let k = key(&mut rng);
        if model.contains_key(&k) {
            continue;
        }
        missing += 1;
        assert_eq!(t.get(s, k).unwrap(), None, "missing {k:#x}");
        assert_eq!(t.get_rread(s, k).unwrap(), None, "missing {k:#x}");
    }
    // A lookup is one round trip per level with rchase.
    let k = *model.keys().next().unwrap();
    let before = s.connection().stats().requests_sent;
    t.get(s, k).unwrap();
    assert_eq!(s.connection().stats().requests_sent - before, 8);
}

#[test]
fn random_keys_agree_with_a_btreemap_in_process() {
    let mut s = common::in_process();
    agree_with_model(&mut s, 600, 1);
}

#[test]
fn random_keys_agree_with_a_btreemap_over_udp() {
    let server = common::udp_board();
    let mut s = common::udp_session(&server);
    agree_with_model(&mut s, 200, 2);
}

#[test]
fn narrow_layouts_and_key_width() {
    let mut s = common::in_process();
    // 3 levels of 4 bits: 12-bit keys, fill every one.
    let mut t = RadixTree::create(&mut s, 3, 4).unwrap();
    for k in (0..4096u64).step_by(7) {
        t.insert(&mut s, k, k * 3).unwrap();
    }
    for k in 0..4096u64 {
        let want = (k % 7 == 0).then_some(k * 3);
        assert_eq!(t.get(&mut s, k).unwrap(), want, "{k}");
    }
    assert_eq!(
        t.get(&mut s, 4096),
        Err(RadixError::KeyTooWide {
            key: 4096,
            width: 12
        })
    );
}

#[test]
fn a_reader_in_a_joined_session_sees_the_tree() {
    let server = common::udp_board();
    let mut w = common::udp_session(&server);
    let mut t = RadixTree::create(&mut w, 8, 8).unwrap();
    t.insert(&mut w, 42, 4242).unwrap();
    let token = w.share().unwrap();
    let mut r = Session::join(
        server.addr(),
        token,
        clio::ClientConfig::from_board(&common::cfg()),
    )
    .unwrap();
    let view = RadixTree::open(t.root(), 8, 8).unwrap();
    assert_eq!(view.get(&mut r, 42).unwrap(), Some(4242));
    assert_eq!(view.get(&mut r, 43).unwrap(), None);
}

/// A next pointer outside the address space: the board's UNMAPPED, as the
/// SDK's error naming the chase's start (rchase) or the bad entry (rread).
#[test]
fn a_next_pointer_out_of_the_address_space_is_unmapped() {
    let mut s = common::in_process();
    let mut t = RadixTree::create(&mut s, 8, 8).unwrap();
    t.insert(&mut s, 1, 10).unwrap();
    let bad = 0x7700_0000_0000u64;
    // The root list: sentinel -> entry(chunk 0); point the entry's next away.
    let mut w = [0u8; 8];
    s.rread(t.root() + u64::from(NEXT_OFFSET), &mut w).unwrap();
    let first = u64::from_le_bytes(w);
    s.rwrite(first + u64::from(NEXT_OFFSET), &bad.to_le_bytes())
        .unwrap();
    // Key 1 is still found (its entry comes before the bad pointer).
    assert_eq!(t.get(&mut s, 1).unwrap(), Some(10));
    let missing = 0x0500_0000_0000_0000;
    assert_eq!(
        t.get(&mut s, missing),
        Err(RadixError::Remote {
            level: 0,
            source: ClioError::Unmapped {
                op: OpKind::PointerChase,
                va: t.root(),
                len: 0
            }
        })
    );
    assert_eq!(
        t.get_rread(&mut s, missing),
        Err(RadixError::Remote {
            level: 0,
            source: ClioError::Unmapped {
                op: OpKind::Read,
                va: bad,
                len: clio_radix::ENTRY_LEN
            }
        })
    );
    let e = t.get(&mut s, missing).unwrap_err().to_string();
    assert!(e.contains("level 0") && e.contains("not allocated"), "{e}");
}

/// A cycle: the walk stops at the hop cap with `Corrupt`.
#[test]
fn a_cycle_stops_at_the_hop_cap() {
    let mut s = common::in_process();
    let mut t = RadixTree::create(&mut s, 8, 8).unwrap();
    t.insert(&mut s, 0x0100_0000_0000_0000, 1).unwrap();
    t.insert(&mut s, 0x0200_0000_0000_0000, 2).unwrap();
    // Root list: sentinel -> e(2) -> e(1) -> 0; make e(1) point back at e(2).
    let mut w = [0u8; 8];
    s.rread(t.root() + u64::from(NEXT_OFFSET), &mut w).unwrap();
    let e2 = u64::from_le_bytes(w);
    s.rread(e2 + u64::from(NEXT_OFFSET), &mut w).unwrap();
    let e1 = u64::from_le_bytes(w);
    assert_ne!(e1, 0);
    s.rwrite(e1 + u64::from(NEXT_OFFSET), &e2.to_le_bytes())
        .unwrap();
    assert_eq!(t.get(&mut s, 0x0100_0000_0000_0000).unwrap(), Some(1));
    let corrupt = RadixError::Corrupt {
        level: 0,
        list: t.root(),
        hops: t.max_hops(),
    };
    assert_eq!(t.get(&mut s, 0x0300_0000_0000_0000), Err(corrupt.clone()));
    assert_eq!(t.get_rread(&mut s, 0x0300_0000_0000_0000), Err(corrupt));
    // An insert into the corrupt list refuses too.
    assert!(matches!(
        t.insert(&mut s, 0x0300_0000_0000_0000, 3),
        Err(RadixError::Corrupt { level: 0, .. })
    ));
}
