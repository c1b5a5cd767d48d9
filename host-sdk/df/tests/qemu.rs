//! Clio-DF in the firmware (issue #16): the SDK's `DfClient` over UDP
//! against a board whose slow path runs in QEMU, where `select` and
//! `aggregate` are the firmware's (`clio_slowpath::offload::df`, reading
//! the caller's pages directly in board DRAM), reached by `OFFLOAD_CALL`s
//! the fast-path model passes over the rings. Every call also goes to an
//! emulated board serving the same firmware code in the emulator's engine
//! (`clio_df::DfOffload`, reading the caller's memory through the fast path
//! in packets rather than DRAM directly); both must agree with each other
//! and with the compute node's own computation.
//!
//! Needs `qemu-system-aarch64` (skipped outside CI without it); the image
//! is built for `board-configs/emulator.toml` as in `clio-emu`'s
//! co-simulation tests, whose helpers this shares.

mod common;
#[path = "../../emulator/tests/common/qemu.rs"]
mod qemu_common;

use clio::backend::UdpTransport as Udp;
use clio::{ClientConfig, Session};
use clio_df::{Aggregate, DataFrame, DfClient, DfError, DfOffload, Predicate, OFFLOAD_ID};
use common::table;
use qemu_common::qemu_or_skip;

fn emulated() -> clio_emu::ServerHandle {
    let c = qemu_common::board();
    let mut b = clio_emu::Board::new(&c).unwrap();
    b.register_offload(OFFLOAD_ID, Box::<DfOffload>::default())
        .unwrap();
    clio_emu::spawn(
        b,
        "127.0.0.1:0".parse().unwrap(),
        clio_emu::ServeOptions::for_board(&c),
    )
    .unwrap()
}

/// What a select came to on one board: matched, rows, values, aggregates
/// of the values and of column `c` over the selected rows.
type Seen = (u64, Vec<u32>, Vec<u64>, Aggregate, Aggregate);

fn run(df: &mut DfClient<Udp>, t: &DataFrame, pred: Predicate) -> Seen {
    let sel = df.select(t, "a", pred, Some("b"), t.rows()).unwrap();
    let seen = (
        sel.matched(),
        df.fetch_rows(&sel).unwrap(),
        df.fetch_values(&sel).unwrap(),
        df.aggregate_values(&sel).unwrap(),
        df.aggregate(t, "c", Some(&sel)).unwrap(),
    );
    df.free_selection(sel).unwrap();
    seen
}

#[test]
fn df_client_against_the_firmware() {
    let Some(qemu) = qemu_or_skip() else { return };
    let (server, client) = qemu_common::serve_firmware(qemu);
    let emu = emulated();
    let mut fw = DfClient::new(Session::open(server.addr(), client.clone()).unwrap());
    let mut em = DfClient::new(
        Session::open(emu.addr(), ClientConfig::from_board(&qemu_common::board())).unwrap(),
    );
    // Not a multiple of the 64 KiB scan or of a packet's rows.
    let (a, b, c) = table(20_011);
    let cols = [("a", &a[..]), ("b", &b[..]), ("c", &c[..])];
    let t = fw.upload(&cols).unwrap();
    let te = em.upload(&cols).unwrap();
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
        let got = run(&mut fw, &t, pred);
        assert_eq!(
            got,
            run(&mut em, &te, pred),
            "{pred:?}: firmware vs emulator"
        );
        // And the compute node's own answer.
        let rows: Vec<u32> = (0..a.len() as u32)
            .filter(|&i| pred.matches(a[i as usize]))
            .collect();
        let values: Vec<u64> = rows.iter().map(|&i| b[i as usize]).collect();
        assert_eq!(got.0, rows.len() as u64, "{pred:?}");
        assert_eq!(got.1, rows, "{pred:?}");
        assert_eq!(got.2, values, "{pred:?}");
        assert_eq!(got.3, Aggregate::of(values.iter().copied()), "{pred:?}");
        assert_eq!(
            got.4,
            Aggregate::of(rows.iter().map(|&r| u64::from(r))),
            "{pred:?}"
        );
    }
    assert_eq!(
        fw.aggregate(&t, "b", None).unwrap(),
        Aggregate::of(b.iter().copied())
    );
    // The compute node changes a value in place; the firmware sees it.
    let va = t.column("a").unwrap().va;
    fw.session_mut().rwrite(va, &7777u64.to_le_bytes()).unwrap();
    let sel = fw
        .select(&t, "a", Predicate::Eq(7777), Some("c"), 4)
        .unwrap();
    assert_eq!(fw.fetch_values(&sel).unwrap(), [0]);
    fw.free_selection(sel).unwrap();
    // A selection too small.
    assert!(matches!(
        fw.select(&t, "a", Predicate::Ge(0), None, 10),
        Err(DfError::SelectionFull {
            matched: 20_011,
            cap: 10
        })
    ));

    // Bad input: each refusal code, from the firmware.
    common::check_refusals(fw.session_mut(), va, t.rows());

    // Another client's address space: its VAs reach only its own memory.
    let mut other = DfClient::new(Session::open(server.addr(), client).unwrap());
    match other.aggregate(&t, "a", None) {
        Err(DfError::Unmapped) => {}
        Ok(agg) => assert_eq!(agg.sum, 0, "never the first client's data"),
        Err(e) => panic!("{e}"),
    }
    // The first client is still served.
    assert_eq!(
        fw.aggregate(&t, "c", None).unwrap(),
        Aggregate::of(c.iter().copied())
    );
    fw.free(t).unwrap();
    drop(other);
    drop(fw);
    server.stop().unwrap();
    emu.stop().unwrap();
}
