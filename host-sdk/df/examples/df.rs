//! Clio-DF end to end over UDP: the dissertation's analytics workload
//! (§3.7.2). With no argument it starts an emulated board (with the
//! DataFrame offload registered as offload 3) in this process; with an
//! address it talks to a running `clio sim`:
//!
//! ```sh
//! cargo run --release -p clio-df --example df
//! # or, against a board served by `cargo run --release -p clio-cli -- sim`:
//! cargo run --release -p clio-df --example df -- 127.0.0.1:47700
//! ```
//!
//! Uploads a table of students (gender, score), selects the female rows at
//! the memory node with their scores projected, averages the scores there,
//! and draws the score histogram at the compute node; then does the same
//! by fetching both columns and filtering locally, and compares.

use std::time::Instant;

use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_df::{histogram, shuffle, Aggregate, DfClient, DfOffload, Predicate, OFFLOAD_ID};
use clio_emu::{Board, ServeOptions};

const ROWS: u64 = 200_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = BoardConfig::embedded("emulator")?;
    let mut server = None;
    let addr = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => {
            let mut board = Board::new(&cfg)?;
            board.register_offload(OFFLOAD_ID, Box::<DfOffload>::default())?;
            let h = clio_emu::spawn(board, "127.0.0.1:0".parse()?, ServeOptions::for_board(&cfg))?;
            let a = h.addr();
            server = Some(h);
            a
        }
    };
    println!("Clio-DF at udp://{addr} (offload {OFFLOAD_ID})");
    let s = Session::open(addr, ClientConfig::from_board(&cfg))?;
    let mut df = DfClient::new(s);

    // gender: 1 for about 1 % of the rows; score: 0..=100.
    let mut x = 0x853c_49e6_748f_ea9bu64;
    let (mut gender, mut score) = (Vec::new(), Vec::new());
    for _ in 0..ROWS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        gender.push(u64::from(x % 100 == 0));
        score.push((x >> 32) % 101);
    }
    let t = df.upload(&[("gender", &gender), ("score", &score)])?;
    println!(
        "uploaded {} rows, {} KiB, into this session's address space",
        t.rows(),
        t.bytes() >> 10
    );

    // At the memory node: select + aggregate; at the compute node: histogram.
    let at = Instant::now();
    let sel = df.select(&t, "gender", Predicate::Eq(1), Some("score"), t.rows())?;
    let avg = df.aggregate_values(&sel)?;
    let scores = df.fetch_values(&sel)?;
    let hist = histogram(&scores, 0, 100, 10);
    let offloaded = at.elapsed();
    println!(
        "offloaded: {} rows selected, mean score {:.2}, histogram {hist:?} in {:.1} ms",
        sel.matched(),
        avg.mean().unwrap_or(0.0),
        offloaded.as_secs_f64() * 1e3
    );
    let parts = shuffle(&scores, 4);
    println!(
        "shuffled the selected scores into 4 partitions of {:?} rows (at the compute node)",
        parts.iter().map(Vec::len).collect::<Vec<_>>()
    );

    // The baseline: fetch both columns whole and do everything here.
    let at = Instant::now();
    let (_, values) = df.select_at_cn(&t, "gender", Predicate::Eq(1), Some("score"))?;
    let base_avg = Aggregate::of(values.iter().copied());
    let base_hist = histogram(&values, 0, 100, 10);
    let fetched = at.elapsed();
    assert_eq!(base_avg, avg);
    assert_eq!(base_hist, hist);
    println!(
        "fetch and filter at the compute node: the same answer in {:.1} ms, reading {} KiB instead of {} KiB",
        fetched.as_secs_f64() * 1e3,
        t.bytes() >> 10,
        (sel.matched() * 8) >> 10
    );
    df.free_selection(sel)?;
    df.free(t)?;
    if let Some(h) = server {
        h.stop()?;
    }
    Ok(())
}
