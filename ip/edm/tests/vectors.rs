//! The RTL vector generators: deterministic per seed, and exercising what the benches claim.

use edm::vectors::{
    dec_trace, enc_trace, fwd_trace, phy_trace, pim_converge_trace, pim_trace, rx_trace, tx_trace,
};

#[test]
fn traces_are_a_function_of_the_seed() {
    assert_eq!(rx_trace(500, 3), rx_trace(500, 3));
    assert_ne!(rx_trace(500, 3), rx_trace(500, 4));
    assert_eq!(
        pim_trace(4, 3, false, 256, 50, 9),
        pim_trace(4, 3, false, 256, 50, 9)
    );
    let enc = enc_trace(300, 3);
    assert_eq!(enc, enc_trace(300, 3));
    assert!(
        enc.lines().any(|l| l == "X"),
        "some invalid headers are generated"
    );
    let dec = dec_trace(400, 3);
    let counts: Vec<u64> = dec
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        counts[0] > 0 && counts[1] > 0,
        "bad-field and bad-length cases: {counts:?}"
    );
}

#[test]
fn phy_trace_reports_link_down_only_with_corruption() {
    assert!(phy_trace(1500, true, 5, 1_000_000, 0).ends_with("L 0\n"));
    let bad = phy_trace(1500, false, 5, 700, 20);
    assert_eq!(bad.lines().filter(|l| *l == "X").count(), 20);
    assert!(bad.ends_with("L 1\n"));
}

#[test]
fn traces_cover_preemption_drops_and_matches() {
    let tx = tx_trace(3000, true, 2);
    // Some frame blocks were sent, and memory blocks went out while a frame was pending.
    assert!(tx.lines().any(|l| l.starts_with("O ") && l.ends_with(" 1")));
    assert!(tx.lines().any(|l| l.starts_with("O ") && l.ends_with(" 2")));
    let fwd = fwd_trace(4, 2000, 2);
    let counters: Vec<u64> = fwd
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        counters[0] > 100 && counters[1] > 5,
        "forwarded and dropped chunks: {counters:?}"
    );
    let conv = pim_converge_trace(4, 5, 1);
    assert!(conv.lines().any(|l| l.starts_with("M ")));
}
