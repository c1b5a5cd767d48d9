//! The tokio `AsyncSession` against an emulated board over UDP: many
//! operations in flight from one session, and several sessions of one PID
//! contending for a lock from concurrent tasks, clean and over a lossy,
//! reordering link.

use clio::{AsyncSession, ClioError};
use clio_emu::{FaultConfig, ServeOptions};
use clio_tests::{emulator_config, first_difference, pattern, ServedBoard};
use clio_wire::payload::perms;
use tokio::task::JoinSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_operations_in_flight_from_one_session() {
    let board = ServedBoard::emulator();
    let page = board.page();
    let s = AsyncSession::open(board.addr(), board.client())
        .await
        .unwrap();
    let a = s.ralloc(4 * page, perms::RW).await.unwrap();
    // 128 writes over four pages, all issued before any is awaited; every
    // future is 'static and runs on its own task.
    let spot = |i: u64| a.va + (i % 4) * page + (i / 4) * 5000;
    let mut writes = JoinSet::new();
    for i in 0..128u64 {
        writes.spawn(s.rwrite(spot(i), &pattern(1 + (i as usize * 37) % 4000, i)));
    }
    while let Some(r) = writes.join_next().await {
        r.unwrap().unwrap();
    }
    let mut reads = JoinSet::new();
    for i in 0..128u64 {
        let len = 1 + (i as usize * 37) % 4000;
        let f = s.rread(spot(i), len as u64);
        reads.spawn(async move { (i, len, f.await) });
    }
    while let Some(r) = reads.join_next().await {
        let (i, len, got) = r.unwrap();
        let got = got.unwrap();
        assert_eq!(first_difference(&got, &pattern(len, i)), None, "write {i}");
    }
    // 200 concurrent fetch-and-adds on one word: executed one at a time at
    // the board, each exactly once, so the old values are 0..200 exactly.
    let word = a.va + 3 * page + page / 2;
    let mut faas = JoinSet::new();
    for _ in 0..200 {
        faas.spawn(s.faa(word, 1));
    }
    let mut olds = Vec::new();
    while let Some(r) = faas.join_next().await {
        olds.push(r.unwrap().unwrap());
    }
    olds.sort_unstable();
    assert_eq!(olds, (0..200).collect::<Vec<u64>>());
    // A write, a fence, then a read issued before awaiting anything.
    let w = s.rwrite(a.va + 77, b"ordered");
    let f = s.rfence();
    let r = s.rread(a.va + 77, 7);
    w.await.unwrap();
    f.await.unwrap();
    assert_eq!(r.await.unwrap(), b"ordered");
    s.rfree(a.va, a.size).await.unwrap();
    assert!(matches!(
        s.rread(a.va, 8).await,
        Err(ClioError::Unmapped { .. })
    ));
    s.rrelease().await.unwrap();
    board.stop().unwrap();
}

/// `tasks` sessions of one address space (each joined with the first's
/// share token) each add `each` to a plain counter under the board's lock.
async fn contended_lock(board: &ServedBoard, tasks: u32, each: u64) {
    let s = AsyncSession::open(board.addr(), board.client())
        .await
        .unwrap();
    let a = s.ralloc(board.page(), perms::RW).await.unwrap();
    let (lock, counter) = (a.va, a.va + 512);
    let mut set = JoinSet::new();
    for _ in 1..=tasks {
        let cfg = clio::ClientConfig {
            join: Some(s.share().unwrap()),
            ..board.client()
        };
        let addr = board.addr();
        set.spawn(async move {
            let s = AsyncSession::open(addr, cfg).await?;
            for _ in 0..each {
                s.rlock(lock).await?;
                let v = u64::from_le_bytes(s.rread(counter, 8).await?.try_into().unwrap());
                s.rwrite(counter, &(v + 1).to_le_bytes()).await?;
                s.runlock(lock).await?;
            }
            Ok::<_, ClioError>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    let v = u64::from_le_bytes(s.rread(counter, 8).await.unwrap().try_into().unwrap());
    assert_eq!(v, tasks as u64 * each, "no lost update");
    assert_eq!(s.tas(lock).await.unwrap(), 0, "the lock ends free");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_contend_for_a_lock() {
    let board = ServedBoard::emulator();
    contended_lock(&board, 4, 25).await;
    board.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_contend_for_a_lock_over_a_lossy_link() {
    let faults =
        FaultConfig::parse("drop=0.03,dup=0.03,reorder=0.1,window_us=200,seed=11").unwrap();
    let opts = ServeOptions {
        inbound: faults,
        outbound: FaultConfig { seed: 12, ..faults },
        ..ServeOptions::default()
    };
    let board = ServedBoard::start(emulator_config(), opts);
    contended_lock(&board, 3, 20).await;
    // 200 FAAs in flight at once through the lossy link: each applied
    // exactly once, so the old values are exactly 0..200.
    let s = AsyncSession::open(board.addr(), board.client())
        .await
        .unwrap();
    let a = s.ralloc(board.page(), perms::RW).await.unwrap();
    let mut faas = JoinSet::new();
    for _ in 0..200 {
        faas.spawn(s.faa(a.va + 8, 1));
    }
    let mut olds = Vec::new();
    while let Some(r) = faas.join_next().await {
        olds.push(r.unwrap().unwrap());
    }
    olds.sort_unstable();
    assert_eq!(olds, (0..200).collect::<Vec<u64>>());
    let links = board.stop().unwrap();
    assert!(
        links.inbound.dropped > 0 && links.outbound.dropped > 0,
        "{links:?}"
    );
}
