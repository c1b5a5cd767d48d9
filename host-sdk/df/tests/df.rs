//! Clio-DF against emulated boards: select and aggregate at the memory node
//! agree with the compute-node baseline for every predicate; the offload
//! works in the caller's address space (and only there); bad input gets
//! distinct errors; concurrent clients; the tokio client; histogram and
//! shuffle.

use clio::backend::InProcess;
use clio::{AsyncSession, ClientConfig, Session};
use clio_config::BoardConfig;
use clio_df::{
    histogram, shuffle, Aggregate, AsyncDfClient, DfClient, DfError, DfOffload, Predicate,
    OFFLOAD_ID,
};
use clio_emu::sdk::Emu;
use clio_emu::{Board, ServeOptions, ServerHandle};

mod common;
use common::table;

fn cfg() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

fn board() -> Board {
    let mut b = Board::new(&cfg()).unwrap();
    b.register_offload(OFFLOAD_ID, Box::<DfOffload>::default())
        .unwrap();
    b
}

fn in_process() -> DfClient<InProcess<Emu>> {
    let s = Session::open_with(
        InProcess::new(Emu(board()), 1),
        ClientConfig::from_board(&cfg()),
    )
    .unwrap();
    DfClient::new(s)
}

fn udp_board() -> ServerHandle {
    let c = cfg();
    clio_emu::spawn(
        board(),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(&c),
    )
    .unwrap()
}

#[test]
fn select_and_aggregate_agree_with_the_compute_node() {
    let mut df = in_process();
    // Not a multiple of the scan piece or of a packet's rows.
    let (a, b, c) = table(20_011);
    let t = df.upload(&[("a", &a), ("b", &b), ("c", &c)]).unwrap();
    assert_eq!(t.rows(), 20_011);
    let open = |df: &mut DfClient<InProcess<Emu>>| {
        df.session_mut()
            .transport_mut()
            .board()
            .0
            .slow()
            .open_sessions()
    };
    let sessions = open(&mut df);
    for pred in [
        Predicate::Eq(7),
        Predicate::Ne(7),
        Predicate::Lt(1),
        Predicate::Le(0),
        Predicate::Gt(98),
        Predicate::Ge(50),
        Predicate::Between(10, 12),
        Predicate::Eq(1000),
    ] {
        let sel = df.select(&t, "a", pred, Some("b"), t.rows()).unwrap();
        let (rows, values) = df.select_at_cn(&t, "a", pred, Some("b")).unwrap();
        assert_eq!(sel.matched(), rows.len() as u64, "{pred:?}");
        assert_eq!(df.fetch_rows(&sel).unwrap(), rows, "{pred:?}");
        assert_eq!(df.fetch_values(&sel).unwrap(), values, "{pred:?}");
        // Aggregates: over the projected values, over the selected rows of
        // another column, over a whole column.
        assert_eq!(
            df.aggregate_values(&sel).unwrap(),
            Aggregate::of(values.iter().copied()),
            "{pred:?}"
        );
        assert_eq!(
            df.aggregate(&t, "c", Some(&sel)).unwrap(),
            Aggregate::of(rows.iter().map(|&r| u64::from(r))),
            "{pred:?}"
        );
        df.free_selection(sel).unwrap();
    }
    // The offload joined the caller's address space for each call and
    // left it after: no session of its outlives a call.
    assert_eq!(open(&mut df), sessions);
    let all = df.aggregate(&t, "b", None).unwrap();
    assert_eq!(all, Aggregate::of(b.iter().copied()));
    assert!(all.mean().unwrap() > 400.0 && all.mean().unwrap() < 600.0);
    // A select without a projection writes only the rows.
    let sel = df.select(&t, "c", Predicate::Lt(5), None, 10).unwrap();
    assert_eq!(df.fetch_rows(&sel).unwrap(), [0, 1, 2, 3, 4]);
    assert!(df.fetch_values(&sel).unwrap().is_empty());
    assert_eq!(sel.values_va(), None);
    // The compute node changes the data in place; the memory node sees it
    // (one address space, nothing copied).
    let va = t.column("a").unwrap().va;
    df.session_mut().rwrite(va, &7777u64.to_le_bytes()).unwrap();
    let sel = df
        .select(&t, "a", Predicate::Eq(7777), Some("c"), 4)
        .unwrap();
    assert_eq!(df.fetch_values(&sel).unwrap(), [0]);
    df.free(t).unwrap();
}

#[test]
fn bad_input_gets_distinct_errors() {
    let mut df = in_process();
    let (a, b, _) = table(1000);
    assert!(matches!(
        df.upload(&[("a", &a), ("b", &b[..999])]),
        Err(DfError::BadColumns(_))
    ));
    assert!(matches!(
        df.upload(&[("a", &a), ("a", &b)]),
        Err(DfError::BadColumns(_))
    ));
    assert!(matches!(df.upload(&[]), Err(DfError::BadColumns(_))));
    let t = df.upload(&[("a", &a), ("b", &b)]).unwrap();
    assert!(matches!(
        df.select(&t, "zz", Predicate::Eq(1), None, 10),
        Err(DfError::NoColumn(n)) if n == "zz"
    ));
    assert!(matches!(
        df.select(&t, "a", Predicate::Between(5, 4), None, 10),
        Err(DfError::BadPredicate(_))
    ));
    // More matches than the selection holds.
    assert!(matches!(
        df.select(&t, "a", Predicate::Ge(0), None, 10),
        Err(DfError::SelectionFull {
            matched: 1000,
            cap: 10
        })
    ));
    // The offload checks too: each refusal with its own code.
    let column = t.column("a").unwrap().va;
    common::check_refusals(df.session_mut(), column, t.rows());
    // Still serving.
    let sel = df.select(&t, "a", Predicate::Eq(3), None, 1000).unwrap();
    assert_eq!(sel.matched(), a.iter().filter(|&&x| x == 3).count() as u64);
}

#[test]
fn another_address_space_is_out_of_reach() {
    // Two clients of one board: the offload works in each caller's own
    // address space, so B cannot select over A's column.
    let server = udp_board();
    let c = cfg();
    let mut a = DfClient::new(Session::open(server.addr(), ClientConfig::from_board(&c)).unwrap());
    let mut b = DfClient::new(Session::open(server.addr(), ClientConfig::from_board(&c)).unwrap());
    let (col, _, _) = table(500);
    let col: Vec<u64> = col.iter().map(|x| x + 1).collect();
    let t = a.upload(&[("a", &col)]).unwrap();
    assert_eq!(
        a.select(&t, "a", Predicate::Ge(1), None, 500)
            .unwrap()
            .matched(),
        500
    );
    // In B's address space that VA is unmapped, or B's own (zeroed) memory
    // (VAs are per PID): never A's data.
    match b.select(&t, "a", Predicate::Ge(1), None, 500) {
        Err(DfError::Unmapped) => {}
        Ok(sel) => assert_eq!(sel.matched(), 0),
        Err(e) => panic!("{e}"),
    }
    drop(b);
    assert_eq!(a.aggregate(&t, "a", None).unwrap().count, 500);
    server.stop().unwrap();
}

#[test]
fn concurrent_clients_over_udp() {
    let server = udp_board();
    let addr = server.addr();
    let c = cfg();
    let threads: Vec<_> = (0..3u64)
        .map(|k| {
            std::thread::spawn(move || {
                let s = Session::open(addr, ClientConfig::from_board(&c)).unwrap();
                let mut df = DfClient::new(s);
                let vals: Vec<u64> = (0..4000u64).map(|i| (i * (k + 3)) % 97).collect();
                let t = df.upload(&[("v", &vals)]).unwrap();
                for round in 0..5u64 {
                    let want = vals.iter().filter(|&&x| x == round + k).count() as u64;
                    let sel = df
                        .select(&t, "v", Predicate::Eq(round + k), Some("v"), 4000)
                        .unwrap();
                    assert_eq!(sel.matched(), want);
                    let agg = df.aggregate_values(&sel).unwrap();
                    assert_eq!(agg.sum, u128::from(want * (round + k)));
                    df.free_selection(sel).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    server.stop().unwrap();
}

#[test]
fn tokio_client_sees_its_own_earlier_writes() {
    let server = udp_board();
    let addr = server.addr();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = AsyncSession::open(addr, ClientConfig::from_board(&cfg()))
            .await
            .unwrap();
        let df = AsyncDfClient::new(s);
        let (a, b, _) = table(3000);
        let t = df.upload(&[("a", &a), ("b", &b)]).await.unwrap();
        // An unawaited write, then a select: the select waits for it.
        let va = t.column("a").unwrap().va;
        let w = df.session().rwrite(va + 8 * 17, &5000u64.to_le_bytes());
        let sel = df
            .select(&t, "a", Predicate::Eq(5000), Some("b"), 10)
            .await
            .unwrap();
        w.await.unwrap();
        assert_eq!(df.fetch_values(&sel).await.unwrap(), [b[17]]);
        let agg = df.aggregate(&t, "b", Some(&sel)).await.unwrap();
        assert_eq!(agg.sum, u128::from(b[17]));
        assert!(matches!(
            df.select(&t, "nope", Predicate::Eq(1), None, 1).await,
            Err(DfError::NoColumn(_))
        ));
    });
    server.stop().unwrap();
}

#[test]
fn histogram_and_shuffle_at_the_compute_node() {
    let v: Vec<u64> = (0..=99).collect();
    assert_eq!(histogram(&v, 0, 99, 10), vec![10; 10]);
    assert_eq!(histogram(&v, 50, 59, 2), vec![5, 5]);
    assert_eq!(histogram(&[0, u64::MAX], 0, u64::MAX, 2), vec![1, 1]);
    assert!(histogram(&v, 0, 99, 0).is_empty());
    let parts = shuffle(&[1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1], 3);
    assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), 13);
    let home = |x: u64| parts.iter().position(|p| p.contains(&x)).unwrap();
    for x in 1..=9 {
        assert_eq!(
            parts.iter().filter(|p| p.contains(&x)).count(),
            1,
            "{x} in one partition"
        );
        let _ = home(x);
    }
    assert_eq!(parts[home(1)].iter().filter(|&&x| x == 1).count(), 3);
    let big = shuffle(&(0..30_000).collect::<Vec<_>>(), 4);
    assert!(big.iter().all(|p| (6500..8500).contains(&p.len())));
}
