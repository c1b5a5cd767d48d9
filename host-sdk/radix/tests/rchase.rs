//! The SDK's `rchase` (sync and async) against an emulated board: found,
//! end of list, hop cap, value bytes, argument checks, UNMAPPED.

mod common;

use clio::backend::Transport;
use clio::{AsyncSession, ChaseOutcome, ChaseRequest, ClientConfig, ClioError, OpKind, Session};
use clio_wire::payload::perms;

/// Node layout of these tests: value (32 B) at 0, key at 32, next at 40.
const NODE: u64 = 64;

/// Write a list of `keys.len()` nodes at `base` (node i at base + i·64,
/// value = 32 bytes of i), the last one's next = `tail`.
fn list<T: Transport>(s: &mut Session<T>, base: u64, keys: &[u64], tail: u64) {
    let mut b = vec![0u8; keys.len() * NODE as usize];
    for (i, k) in keys.iter().enumerate() {
        let n = &mut b[i * NODE as usize..][..NODE as usize];
        n[..32].fill(i as u8);
        n[32..40].copy_from_slice(&k.to_le_bytes());
        let next = if i + 1 == keys.len() {
            tail
        } else {
            base + (i as u64 + 1) * NODE
        };
        n[40..48].copy_from_slice(&next.to_le_bytes());
    }
    s.rwrite(base, &b).unwrap();
}

fn req(va: u64, key: u64, max_hops: u32) -> ChaseRequest {
    ChaseRequest {
        va,
        key,
        key_offset: 32,
        next_offset: 40,
        value_offset: 0,
        value_len: 32,
        max_hops,
    }
}

#[test]
fn found_end_and_hop_limit() {
    let mut s = common::in_process();
    let a = s.ralloc(1 << 20, perms::RW).unwrap();
    let keys: Vec<u64> = (0..10).map(|i| 1000 + i).collect();
    list(&mut s, a.va, &keys, 0);
    let r = s.rchase(&req(a.va, 1006, 64)).unwrap();
    assert_eq!(r.hops, 7);
    assert_eq!(r.node_va(), Some(a.va + 6 * NODE));
    assert_eq!(r.value(), Some(&[6u8; 32][..]));
    let r = s.rchase(&req(a.va, 5, 64)).unwrap();
    assert_eq!((r.hops, r.outcome), (10, ChaseOutcome::End));
    // Cap below the list's length: HopLimit with hops = cap.
    let r = s.rchase(&req(a.va, 5, 4)).unwrap();
    assert_eq!((r.hops, r.outcome), (4, ChaseOutcome::HopLimit));
    // A list of exactly the cap's length is reported as HopLimit too (the
    // wire does not tell the two apart; documented).
    let r = s.rchase(&req(a.va, 5, 10)).unwrap();
    assert_eq!((r.hops, r.outcome), (10, ChaseOutcome::HopLimit));
    // A cycle stops at the cap.
    list(&mut s, a.va, &keys, a.va + 3 * NODE);
    let r = s.rchase(&req(a.va, 5, 4096)).unwrap();
    assert_eq!((r.hops, r.outcome), (4096, ChaseOutcome::HopLimit));
    // value_len 0 on a match: no value bytes.
    let r = s
        .rchase(&ChaseRequest {
            value_len: 0,
            ..req(a.va, 1000, 8)
        })
        .unwrap();
    assert_eq!(r.value(), Some(&[][..]));
    assert_eq!(r.hops, 1);
}

#[test]
fn a_chase_sees_earlier_async_writes() {
    let mut s = common::in_process();
    let a = s.ralloc(1 << 20, perms::RW).unwrap();
    list(&mut s, a.va, &[1, 2, 3], 0);
    // Change the key of node 2 without waiting; the chase is ordered after.
    let h = s
        .rwrite_async(a.va + 2 * NODE + 32, &9u64.to_le_bytes())
        .unwrap();
    let r = s.rchase(&req(a.va, 9, 8)).unwrap();
    assert_eq!(r.node_va(), Some(a.va + 2 * NODE));
    s.rpoll(&[h]).unwrap();
}

#[test]
fn bad_arguments_are_refused_before_sending() {
    let mut s = common::in_process();
    let sent = s.connection().stats().packets_sent;
    for (r, what) in [
        (req(4096, 1, 0), "max_hops"),
        (req(4096, 1, 4097), "max_hops"),
        (
            ChaseRequest {
                value_len: 1025,
                ..req(4096, 1, 1)
            },
            "value_len",
        ),
    ] {
        match s.rchase(&r) {
            Err(ClioError::InvalidArgument { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{r:?}: {other:?}"),
        }
    }
    assert_eq!(s.connection().stats().packets_sent, sent);
}

#[test]
fn pointers_out_of_the_address_space_are_unmapped() {
    let mut s = common::in_process();
    let a = s.ralloc(1 << 20, perms::RW).unwrap();
    // The start itself.
    let bad = 0x5500_0000_0000;
    assert_eq!(
        s.rchase(&req(bad, 1, 8)),
        Err(ClioError::Unmapped {
            op: OpKind::PointerChase,
            va: bad,
            len: 0
        })
    );
    // A next pointer in the middle: the error names the chase's start.
    list(&mut s, a.va, &[1, 2, 3], bad);
    assert_eq!(
        s.rchase(&req(a.va, 7, 8)),
        Err(ClioError::Unmapped {
            op: OpKind::PointerChase,
            va: a.va,
            len: 0
        })
    );
    // The key is still found before the bad pointer.
    assert_eq!(s.rchase(&req(a.va, 3, 8)).unwrap().hops, 3);
}

#[test]
fn async_rchase_over_udp() {
    let server = common::udp_board();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = AsyncSession::open(server.addr(), ClientConfig::from_board(&common::cfg()))
            .await
            .unwrap();
        let a = s.ralloc(1 << 20, perms::RW).await.unwrap();
        let mut b = Vec::new();
        for i in 0..5u64 {
            let mut n = vec![0u8; NODE as usize];
            n[..32].fill(i as u8 + 1);
            n[32..40].copy_from_slice(&(100 + i).to_le_bytes());
            let next = if i == 4 { 0 } else { a.va + (i + 1) * NODE };
            n[40..48].copy_from_slice(&next.to_le_bytes());
            b.extend_from_slice(&n);
        }
        // Issued without waiting: the chases are ordered after the write.
        let w = s.rwrite(a.va, &b);
        let hit = s.rchase(&req(a.va, 103, 16));
        let miss = s.rchase(&req(a.va, 7, 16));
        w.await.unwrap();
        let hit = hit.await.unwrap();
        assert_eq!(hit.value(), Some(&[4u8; 32][..]));
        assert_eq!(hit.hops, 4);
        assert_eq!(miss.await.unwrap().outcome, ChaseOutcome::End);
        assert_eq!(
            s.rchase(&req(0x6600_0000_0000, 1, 4)).await,
            Err(ClioError::Unmapped {
                op: OpKind::PointerChase,
                va: 0x6600_0000_0000,
                len: 0
            })
        );
    });
}
