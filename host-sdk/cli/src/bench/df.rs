//! `df`: Clio-DF's analytics workload (dissertation §3.7.2) over UDP — select
//! the rows of a two-column table whose key matches (1 % of them), average
//! their values and draw their histogram — done two ways side by side on
//! one emulated board:
//!
//! - **offloaded**: `select` (with the value column projected) and
//!   `aggregate` run at the memory node in the caller's address space; the
//!   compute node reads only the selected values, for the histogram;
//! - **fetched**: the compute node reads both columns whole and filters,
//!   averages and bins locally (what an RDMA client does).
//!
//! Bytes over the network are counted at the client's transport (UDP
//! payloads, both directions). Rounds alternate which path goes first;
//! medians. Both answers must agree. Issue #16's targets: at 1 %
//! selectivity over 64 MiB, the offload moves ≥ 10× fewer bytes and is
//! ≥ 3× faster.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clio::backend::{Transport, UdpTransport};
use clio::{ClientConfig, ClioError, Session};
use clio_df::{histogram, Aggregate, DfClient, DfOffload, Predicate, OFFLOAD_ID};
use serde::Serialize;

use super::stats::{median, Rng};
use super::svg::{self, Axis};
use super::{bar, Check, Ctx, Outcome, Plot, Ran};

/// Issue #16's target: fetched bytes / offloaded bytes.
pub const TARGET_BYTES: f64 = 10.0;
/// Issue #16's target: fetched median time / offloaded median time.
pub const TARGET_SPEEDUP: f64 = 3.0;
/// Rows whose key matches, per 10 000.
const SELECT_PER_10K: u64 = 100;
/// Histogram bins over the values.
const BINS: usize = 10;

/// A UDP transport that counts the bytes it carries.
struct Counted {
    inner: UdpTransport,
    sent: u64,
    received: u64,
}

impl Transport for Counted {
    fn send(&mut self, pkt: &[u8]) -> Result<(), ClioError> {
        self.sent += pkt.len() as u64;
        self.inner.send(pkt)
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>, ClioError> {
        let n = self.inner.recv(buf, deadline)?;
        self.received += n.unwrap_or(0) as u64;
        Ok(n)
    }

    fn try_recv(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ClioError> {
        let n = self.inner.try_recv(buf)?;
        self.received += n.unwrap_or(0) as u64;
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), ClioError> {
        self.inner.flush()
    }

    fn peer(&self) -> Option<String> {
        self.inner.peer()
    }
}

fn bytes(df: &mut DfClient<Counted>) -> u64 {
    let t = df.session_mut().transport_mut();
    t.sent + t.received
}

#[derive(Debug, Serialize)]
struct Df {
    rows: u64,
    table_bytes: u64,
    selectivity: f64,
    rounds: usize,
    selected: u64,
    /// Median seconds of select + aggregate at the memory node, fetch of
    /// the selected values and histogram at the compute node.
    offloaded_median_s: f64,
    /// Median seconds of fetching both columns and doing it all at the
    /// compute node.
    fetched_median_s: f64,
    /// Bytes over the network per run (UDP payloads, both directions).
    offloaded_bytes: u64,
    /// Bytes over the network per run (UDP payloads, both directions).
    fetched_bytes: u64,
    /// fetched bytes / offloaded bytes.
    bytes_ratio: f64,
    /// fetched median / offloaded median.
    speedup: f64,
    /// Client retries during the runs.
    retries: u64,
}

/// Run the DataFrame comparison on a board of its own.
pub fn run(ctx: &Ctx) -> Result<Ran> {
    let p = &ctx.plan;
    let rows = p.df_bytes / 16;
    let mut cfg = ctx.cfg;
    // The table and the selection in one address space.
    cfg.sessions.mem_quota_bytes = cfg.regions.data.size - (8 << 20);
    if p.df_bytes + (16 << 20) > cfg.sessions.mem_quota_bytes {
        bail!(
            "df: a {} MiB table does not fit board '{}' ({} MiB of data memory)",
            p.df_bytes >> 20,
            cfg.board.name,
            cfg.regions.data.size >> 20
        );
    }
    let mut board = clio_emu::Board::new(&cfg).map_err(anyhow::Error::msg)?;
    board
        .register_offload(OFFLOAD_ID, Box::<DfOffload>::default())
        .map_err(anyhow::Error::msg)?;
    let server = clio_emu::spawn(
        board,
        "127.0.0.1:0".parse()?,
        clio_emu::ServeOptions::for_board(&cfg),
    )?;
    let t = Counted {
        inner: UdpTransport::connect(server.addr())?,
        sent: 0,
        received: 0,
    };
    let mut df = DfClient::new(
        Session::open_with(t, ClientConfig::from_board(&cfg)).context("df: opening a session")?,
    );
    let mut rng = Rng::new(0xdf);
    let (mut key, mut value) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        key.push(rng.below(10_000));
        value.push(rng.below(1_000_000));
    }
    let table = df
        .upload(&[("key", &key), ("value", &value)])
        .context("df: uploading the table")?;
    let pred = Predicate::Lt(SELECT_PER_10K);
    let want = key.iter().filter(|&&k| pred.matches(k)).count() as u64;
    let cap = (want * 2).max(64);
    let lo_hi = (0, 999_999);
    let pb = bar(p.df_rounds as u64 * 2, "df");
    let (mut off_s, mut fet_s) = (Vec::new(), Vec::new());
    let (mut off_b, mut fet_b) = (0u64, 0u64);
    let retries0 = df.session().connection().stats().retries;
    for round in 0..p.df_rounds {
        for offloaded in [round % 2 == 0, round % 2 != 0] {
            let b0 = bytes(&mut df);
            let at = Instant::now();
            let (agg, hist) = if offloaded {
                let sel = df.select(&table, "key", pred, Some("value"), cap)?;
                let agg = df.aggregate_values(&sel)?;
                let vals = df.fetch_values(&sel)?;
                let hist = histogram(&vals, lo_hi.0, lo_hi.1, BINS);
                let r = (agg, hist);
                off_s.push(at.elapsed().as_secs_f64());
                df.free_selection(sel)?;
                r
            } else {
                let (_, vals) = df.select_at_cn(&table, "key", pred, Some("value"))?;
                let agg = Aggregate::of(vals.iter().copied());
                let hist = histogram(&vals, lo_hi.0, lo_hi.1, BINS);
                fet_s.push(at.elapsed().as_secs_f64());
                (agg, hist)
            };
            let moved = bytes(&mut df) - b0;
            if offloaded {
                off_b = moved;
            } else {
                fet_b = moved;
            }
            if agg.count != want || hist.iter().sum::<u64>() != want {
                bail!(
                    "df: {} path selected {} rows, {want} match",
                    if offloaded { "offloaded" } else { "fetched" },
                    agg.count
                );
            }
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let retries = df.session().connection().stats().retries - retries0;
    df.free(table)?;
    drop(df);
    server.stop()?;
    let offloaded_median_s = median(&mut off_s);
    let fetched_median_s = median(&mut fet_s);
    Ok(Ran::Done(Box::new(Df {
        rows,
        table_bytes: rows * 16,
        selectivity: want as f64 / rows as f64,
        rounds: p.df_rounds,
        selected: want,
        offloaded_median_s,
        fetched_median_s,
        offloaded_bytes: off_b,
        fetched_bytes: fet_b,
        bytes_ratio: fet_b as f64 / off_b.max(1) as f64,
        speedup: fetched_median_s / offloaded_median_s.max(Duration::from_nanos(1).as_secs_f64()),
        retries,
    })))
}

impl Outcome for Df {
    fn data(&self) -> Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn checks(&self) -> Vec<Check> {
        vec![
            Check::at_least(
                "df select at 1 %: fetched bytes / offloaded bytes",
                (self.bytes_ratio * 10.0).round() / 10.0,
                TARGET_BYTES,
            ),
            Check::at_least(
                "df select at 1 %: median fetched / median offloaded",
                (self.speedup * 100.0).round() / 100.0,
                TARGET_SPEEDUP,
            ),
        ]
    }

    fn text(&self) -> String {
        format!(
            "  {} rows x 2 u64 columns ({} MiB), {} rows selected ({:.2} %), {} rounds over UDP\n  offloaded (select + aggregate at the MN, histogram at the CN): median {:.1} ms, {} KiB over the network\n  fetched (both columns to the CN, filter there):                median {:.1} ms, {} KiB over the network\n  {:.1}x fewer bytes, {:.1}x faster; retries {}\n",
            self.rows,
            self.table_bytes >> 20,
            self.selected,
            self.selectivity * 100.0,
            self.rounds,
            self.offloaded_median_s * 1e3,
            self.offloaded_bytes >> 10,
            self.fetched_median_s * 1e3,
            self.fetched_bytes >> 10,
            self.bytes_ratio,
            self.speedup,
            self.retries,
        )
    }

    fn plots(&self) -> Vec<Plot> {
        vec![Plot {
            file: "df-select.svg".into(),
            svg: svg::bar_chart(
                "Clio-DF select at 1 % + aggregate + histogram, median",
                &Axis::linear("ms per query"),
                &["query".to_string()],
                &[
                    ("offloaded".into(), vec![self.offloaded_median_s * 1e3]),
                    ("fetched".into(), vec![self.fetched_median_s * 1e3]),
                ],
            ),
        }]
    }
}
