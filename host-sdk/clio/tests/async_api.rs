//! The tokio API over real UDP on loopback against the board double.

mod common;

use clio::{AsyncSession, ClientConfig, ClioError, OpKind};
use clio_wire::payload::perms;
use common::udp_board::UdpBoard;

fn cfg() -> ClientConfig {
    ClientConfig {
        rto_initial_ns: 20_000_000,
        rto_min_ns: 20_000_000,
        rto_max_ns: 200_000_000,
        request_timeout_ns: 5_000_000_000,
        retry_budget: 20,
        page_shift: 12,
        max_request_bytes: 8 << 10,
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn async_session_workload() {
    let board = UdpBoard::start(1000, 0);
    let s = AsyncSession::open(board.addr, cfg()).await.unwrap();
    assert_eq!(s.board_info().board_name().unwrap(), "fake");
    let a = s.ralloc(64 << 10, perms::RW).await.unwrap();
    let data: Vec<u8> = (0..30_000).map(|i| (i % 251) as u8).collect();
    s.rwrite(a.va + 1, &data).await.unwrap();
    assert_eq!(s.rread(a.va + 1, data.len() as u64).await.unwrap(), data);

    // Issue many, await later: writes then reads of the same pages (RAW
    // ordering is kept) and independent pages in parallel.
    let base = a.va + 40 * 1024;
    let writes: Vec<_> = (0..5u64)
        .map(|i| s.rwrite(base + i * 4096, &[i as u8 + 1; 32]))
        .collect();
    let reads: Vec<_> = (0..5u64).map(|i| s.rread(base + i * 4096, 32)).collect();
    let rel = s.rrelease();
    for w in writes {
        w.await.unwrap();
    }
    for (i, r) in reads.into_iter().enumerate() {
        assert_eq!(r.await.unwrap(), vec![i as u8 + 1; 32]);
    }
    rel.await.unwrap();

    let w = a.va + 60 * 1024;
    assert_eq!(s.faa(w, 2).await.unwrap(), 0);
    assert_eq!(s.cas(w, 2, 5).await.unwrap(), 2);
    assert_eq!(s.tas(w + 8).await.unwrap(), 0);
    s.rlock(w + 16).await.unwrap();
    s.runlock(w + 16).await.unwrap();
    s.rfence().await.unwrap();
    s.rfree(a.va, a.size).await.unwrap();
    assert_eq!(
        s.rread(a.va, 8).await,
        Err(ClioError::Unmapped {
            op: OpKind::Read,
            va: a.va,
            len: 8
        })
    );
}

#[tokio::test]
async fn async_session_survives_loss_and_times_out_cleanly() {
    let board = UdpBoard::start(1450, 5);
    let s = AsyncSession::open(board.addr, cfg()).await.unwrap();
    let a = s.ralloc(4096, perms::RW).await.unwrap();
    let futs: Vec<_> = (0..60).map(|_| s.faa(a.va, 1)).collect();
    for f in futs {
        f.await.unwrap();
    }
    // Every increment applied exactly once despite lost requests and lost
    // responses (retries carry retry_of; the board's dedup answers them).
    assert_eq!(s.faa(a.va, 0).await.unwrap(), 60);
    let retried = board
        .board
        .lock()
        .unwrap()
        .requests
        .iter()
        .any(|h| h.retry_of != 0);
    assert!(retried, "loss exercised retries");
    drop(board);
    let c = ClientConfig {
        retry_budget: 1,
        ..cfg()
    };
    let dead = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    assert_eq!(
        AsyncSession::open(dead, c).await.unwrap_err(),
        ClioError::Timeout {
            op: OpKind::Info,
            attempts: 2,
            board: Some(format!("udp://{dead}"))
        }
    );
}

/// A second async session joins the first's address space with its share
/// token; `close` and dropping every clone close the board sessions.
#[tokio::test]
async fn async_sessions_share_join_and_close() {
    let board = UdpBoard::start(1450, 0);
    let a = AsyncSession::open(board.addr, cfg()).await.unwrap();
    let token = a.share().unwrap();
    let b = AsyncSession::join(board.addr, token, cfg()).await.unwrap();
    let (ia, ib) = (*a.session_info().unwrap(), *b.session_info().unwrap());
    assert_eq!(ia.pid, ib.pid);
    assert_ne!(ia.session, ib.session);
    let r = a.ralloc(4096, perms::RW).await.unwrap();
    b.rwrite(r.va, b"joined").await.unwrap();
    assert_eq!(a.rread(r.va, 6).await.unwrap(), b"joined");
    let open = |s: u16| board.board.lock().unwrap().sessions.contains_key(&s);
    // Explicit close: the board forgets the session, later calls fail.
    b.close().await.unwrap();
    assert!(!open(ib.session));
    assert_eq!(
        b.rread(r.va, 6).await,
        Err(ClioError::NoSession { op: OpKind::Read })
    );
    // Dropping the last clone closes the session on the way out.
    let a2 = a.clone();
    drop(a);
    assert_eq!(a2.rread(r.va, 6).await.unwrap(), b"joined");
    drop(a2);
    let t0 = std::time::Instant::now();
    while open(ia.session) {
        assert!(
            t0.elapsed().as_secs() < 10,
            "the dropped session was not closed"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn async_reads_and_writes_are_cut_at_the_boards_response_bound() {
    // The board's 2 KiB bound is below the client's 8 KiB requests: a READ
    // of more would come back TOO_LARGE, so the session splits at 2 KiB.
    let board = UdpBoard::start(1000, 0);
    board.board.lock().unwrap().max_resp_kib = 2;
    let s = AsyncSession::open(board.addr, cfg()).await.unwrap();
    assert_eq!(s.board_info().max_resp_bytes(), Some(2048));
    let a = s.ralloc(64 << 10, perms::RW).await.unwrap();
    let data: Vec<u8> = (0..30_000).map(|i| (i % 251) as u8).collect();
    s.rwrite(a.va + 1, &data).await.unwrap();
    assert_eq!(s.rread(a.va + 1, data.len() as u64).await.unwrap(), data);
    let b = board.board.lock().unwrap();
    let big = b
        .requests
        .iter()
        .filter(|h| matches!(h.opcode, clio_wire::Opcode::Read | clio_wire::Opcode::Write))
        .map(|h| h.total_len)
        .max();
    assert_eq!(big, Some(2048));
}
