//! The slow-path benchmark report (host only): the allocation retry curve
//! (Clio Fig. 13), allocation latency, free-PA refill rate, and the memory
//! footprint, as a serialisable [`Report`] with a small SVG plot.
//!
//! Method. Physical memory is filled with ranges of 1..=100 smallest pages
//! from 64 processes, to each utilisation level in turn; at each level,
//! probe allocations of 1, 10 and 100 pages are placed and freed again
//! (so the level does not move) and their retries recorded. Utilisation is
//! allocated pages over the data region's pages, the quantity the paper
//! plots. Time is wall-clock on the host running the report.

use crate::{ReplyTo, SlowPath, SlowPathConfig};
use clio_config::BoardConfig;
use clio_wire::ring::Descriptor;
use serde::Serialize;
use std::time::Instant;
use std::vec::Vec;

/// Probe sizes in pages (the paper's three curves).
pub const PROBE_PAGES: [u64; 3] = [1, 10, 100];

/// First-touch rate the refill must sustain: 4 KiB pages at 100 Gbit/s.
pub const REFILL_TARGET_PER_SEC: f64 = 100e9 / (4096.0 * 8.0);

/// How much work the report does.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ReportOptions {
    /// Probe allocations per size and utilisation level.
    pub probes: u32,
    /// Utilisation levels of the retry curve, in percent.
    pub levels: &'static [u32],
    /// PAs produced in the refill measurement.
    pub refill_pages: u64,
}

impl ReportOptions {
    /// The full report (a few seconds in release builds).
    pub const FULL: ReportOptions = ReportOptions {
        probes: 200,
        levels: &[
            0, 10, 20, 30, 40, 50, 60, 70, 80, 85, 90, 93, 95, 97, 98, 99,
        ],
        refill_pages: 2_000_000,
    };
    /// A quick pass (for tests and CI smoke runs).
    pub const QUICK: ReportOptions = ReportOptions {
        probes: 10,
        levels: &[0, 50, 90],
        refill_pages: 20_000,
    };
}

/// One point of a retry curve.
#[derive(Debug, Clone, Serialize)]
pub struct RetryPoint {
    /// Physical memory utilisation, percent.
    pub utilization_pct: f64,
    /// Probe size in pages.
    pub pages: u64,
    /// Mean retries per allocation.
    pub mean_retries: f64,
    /// Most retries of one allocation.
    pub max_retries: u32,
    /// Probe allocations that were placed.
    pub placed: u32,
    /// Probe allocations refused (table full within the retry budget).
    pub refused: u32,
    /// Median time of one probe allocation (placement plus PTE emission), ns.
    pub median_alloc_ns: f64,
}

/// A retry curve for one table geometry.
#[derive(Debug, Clone, Serialize)]
pub struct RetryCurve {
    /// What geometry this is.
    pub name: String,
    /// Page size of the probes and the fill, bytes.
    pub page_bytes: u64,
    /// Physical pages of that size.
    pub phys_pages: u64,
    /// Buckets × K of the table.
    pub table_slots: u64,
    /// Slots per bucket.
    pub slots_per_bucket: u32,
    /// The points, by utilisation then size.
    pub points: Vec<RetryPoint>,
    /// Extra time per retry, ns: the Theil–Sen slope (median of pairwise
    /// slopes, robust to preempted samples) of 100-page probe time against
    /// retries (None if no probe retried).
    pub per_retry_ns: Option<f64>,
}

/// Allocation latency at one size and utilisation.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyPoint {
    /// Pages of the allocation.
    pub pages: u64,
    /// Physical memory utilisation, percent.
    pub utilization_pct: u32,
    /// VA allocation (placement, overflow check, PTE emission), median ns.
    pub va_alloc_ns: f64,
    /// VA allocation, 99th percentile ns.
    pub va_alloc_p99_ns: f64,
    /// PA allocation per page (PA-consumed notice plus the refill push of a
    /// replacement page), median over probes, ns.
    pub pa_alloc_ns: f64,
}

/// Free-PA refill rate on one core.
#[derive(Debug, Clone, Serialize)]
pub struct RefillRate {
    /// PAs pushed (each after the notice consuming the previous one).
    pub pages: u64,
    /// Seconds taken.
    pub seconds: f64,
    /// PAs per second: the median over laps of 16384 PAs (robust to the
    /// host preempting the run).
    pub per_sec: f64,
    /// PAs per second of the fastest lap.
    pub best_per_sec: f64,
    /// The target (4 KiB first touches at 100 Gbit/s).
    pub target_per_sec: f64,
    /// Whether the target is met.
    pub meets_target: bool,
}

/// Bytes of slow-path state for a board.
#[derive(Debug, Clone, Serialize)]
pub struct Footprint {
    /// Board name.
    pub board: String,
    /// Shadow page table (16 B per slot).
    pub shadow_table: u64,
    /// Per-bucket free counts.
    pub bucket_counts: u64,
    /// Range table.
    pub ranges: u64,
    /// PID table.
    pub pids: u64,
    /// Physical allocator (frame stack, frame metadata, partial lists, bitmaps).
    pub phys: u64,
    /// Dirty-page queue.
    pub dirty_queue: u64,
    /// The whole arena.
    pub total: u64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Board the latency, refill and footprint numbers are for.
    pub board: String,
    /// Options used.
    pub options: ReportOptions,
    /// Retry curves: the board's own table with next-fit placement (each
    /// process's pages contiguous), and tables of exactly 2× slots filled
    /// with ranges at random VAs, with the board's K and with K = 4.
    pub retry_curves: Vec<RetryCurve>,
    /// Allocation latency table.
    pub alloc_latency: Vec<LatencyPoint>,
    /// Refill rate.
    pub refill: RefillRate,
    /// Memory footprint.
    pub footprint: Footprint,
}

/// Footprint of the slow path for `cfg`.
pub fn footprint(board: &str, cfg: &SlowPathConfig) -> Footprint {
    let l = cfg.layout();
    Footprint {
        board: board.into(),
        shadow_table: l.shadow_words * 8,
        bucket_counts: l.free_words * 8,
        ranges: l.range_words * 8,
        pids: l.pid_words * 8,
        phys: (l.frame_stack_words + l.frame_meta_words + l.partial_words + 2 * l.bitmap_words) * 8,
        dirty_queue: l.dirty_words * 8,
        total: l.bytes(),
    }
}

/// A config serving only the board's smallest page size (the size the table
/// is dimensioned for), so utilisation and table load are those of Fig. 13.
fn smallest_only(mut cfg: SlowPathConfig) -> SlowPathConfig {
    let s = cfg.page_shifts[0];
    cfg.page_shifts = [s, 0, 0, 0];
    cfg.n_page_sizes = 1;
    cfg.default_shift = s;
    cfg.max_ranges = 1 << 20;
    cfg.max_retries = 100_000;
    // The benchmarks fill the table from a few PIDs: no per-PID quota.
    cfg.mem_quota_bytes = u64::MAX;
    cfg
}

/// A slow path for the benchmarks: a fixed seed (nothing here depends on
/// keys) and every PID held by the board, as no client opens sessions.
fn bench_slow_path(cfg: SlowPathConfig, arena: &mut [u64]) -> SlowPath<'_> {
    let mut sp = SlowPath::new(cfg, arena, 0x5eed).expect("report config is valid");
    for pid in 1..=cfg.max_pids {
        sp.reserve_pid(pid).expect("no session holds a PID yet");
    }
    sp
}

/// The same board with a table of exactly 2 × pages slots (no power-of-two
/// round-up of the bucket count): the data region is resized to match.
fn tight(cfg: SlowPathConfig) -> SlowPathConfig {
    let mut c = smallest_only(cfg);
    let slots = c.layout().slots;
    let pages = slots / 2;
    c.data_size = pages << c.page_shifts[0];
    c.data_base = c.data_base.div_ceil(1 << c.page_shifts[0]) << c.page_shifts[0];
    c
}

/// [`tight`] with `k` slots per bucket (the bucket count scaled to keep 2×).
fn tight_k(cfg: SlowPathConfig, k: u32) -> SlowPathConfig {
    let mut c = tight(cfg);
    let slots = c.layout().slots;
    c.slots_per_bucket = k;
    c.bucket_bits = (slots / k as u64).trailing_zeros();
    c
}

/// Tiny deterministic generator (xorshift) so runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A filled slow path and the means to move its utilisation.
struct Filler<'a> {
    sp: SlowPath<'a>,
    rng: Rng,
    pages: u64,
    allocated: u64,
    sink: Vec<Descriptor>,
    shift: u8,
    /// Place fill ranges at random VAs instead of next-fit per process.
    scatter: bool,
}

impl Filler<'_> {
    fn fill_to(&mut self, pct: u32) {
        let target = self.pages * pct as u64 / 100;
        while self.allocated < target {
            let n = (1 + self.rng.next() % 100).min(target - self.allocated);
            let pid = 1 + (self.rng.next() % 64) as u32;
            let hint = if self.scatter { self.random_va() } else { 0 };
            let r = self.sp.alloc(
                ReplyTo::default(),
                pid,
                hint,
                n << self.shift,
                3,
                self.shift,
                false,
            );
            self.sp.pump(&mut self.sink);
            self.sink.clear();
            match r {
                Ok(_) => self.allocated += n,
                Err(_) => break,
            }
        }
    }

    /// A random page-aligned VA in the class window of the page size, so
    /// successive probes sample different parts of the table.
    fn random_va(&mut self) -> u64 {
        let (lo, hi) = self
            .sp
            .va_window(self.shift)
            .expect("the report's page size is supported");
        let pages = (hi - lo) >> self.shift;
        lo + ((self.rng.next() % pages) << self.shift)
    }

    /// Place and free one probe at a random hint; (retries, ns) or None if refused.
    fn probe(&mut self, pages: u64) -> Option<(u32, f64)> {
        let hint = self.random_va();
        let t = Instant::now();
        let r = self.sp.alloc(
            ReplyTo::default(),
            1000,
            hint,
            pages << self.shift,
            3,
            self.shift,
            false,
        );
        self.sp.pump(&mut self.sink);
        let ns = t.elapsed().as_nanos() as f64;
        self.sink.clear();
        let p = r.ok()?;
        let _ = self
            .sp
            .free(ReplyTo::default(), 1000, p.range.start, p.range.bytes());
        self.sp.pump(&mut self.sink);
        self.sink.clear();
        Some((p.retries, ns))
    }
}

fn retry_curve(name: &str, cfg: SlowPathConfig, scatter: bool, opts: &ReportOptions) -> RetryCurve {
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = bench_slow_path(cfg, &mut arena);
    let shift = cfg.page_shifts[0];
    let pages = cfg.pages_of(shift);
    let mut f = Filler {
        sp,
        rng: Rng(0x9E37_79B9_7F4A_7C15),
        pages,
        allocated: 0,
        sink: Vec::new(),
        shift,
        scatter,
    };
    let mut points = Vec::new();
    let mut fit: Vec<(f64, f64)> = Vec::new();
    for &level in opts.levels {
        f.fill_to(level);
        let util = f.allocated as f64 * 100.0 / pages as f64;
        for &n in &PROBE_PAGES {
            if f.allocated + n > pages {
                continue;
            }
            let (mut sum, mut max, mut placed, mut refused) = (0u64, 0u32, 0u32, 0u32);
            let mut times = Vec::new();
            for _ in 0..opts.probes {
                match f.probe(n) {
                    Some((r, t)) => {
                        sum += r as u64;
                        max = max.max(r);
                        placed += 1;
                        times.push(t);
                        if n == 100 {
                            fit.push((r as f64, t));
                        }
                    }
                    None => refused += 1,
                }
            }
            points.push(RetryPoint {
                utilization_pct: util,
                pages: n,
                mean_retries: if placed > 0 {
                    sum as f64 / placed as f64
                } else {
                    0.0
                },
                max_retries: max,
                placed,
                refused,
                median_alloc_ns: percentile(&mut times, 50.0),
            });
        }
    }
    RetryCurve {
        name: name.into(),
        page_bytes: 1 << shift,
        phys_pages: pages,
        table_slots: cfg.layout().slots,
        slots_per_bucket: cfg.slots_per_bucket,
        points,
        per_retry_ns: theil_sen(&fit),
    }
}

/// The `p`-th percentile (nearest rank) of `v`; 0 for an empty slice.
fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[i.min(v.len() - 1)]
}

/// Theil–Sen slope of y over x (median of the slopes of all pairs with
/// different x, over at most 1500 evenly spaced samples); None without
/// spread in x.
fn theil_sen(xy: &[(f64, f64)]) -> Option<f64> {
    let step = xy.len().div_ceil(1500).max(1);
    let pts: Vec<(f64, f64)> = xy.iter().step_by(step).copied().collect();
    let mut slopes = Vec::new();
    for i in 0..pts.len() {
        for j in i + 1..pts.len() {
            let dx = pts[j].0 - pts[i].0;
            if dx != 0.0 {
                slopes.push((pts[j].1 - pts[i].1) / dx);
            }
        }
    }
    (!slopes.is_empty()).then(|| percentile(&mut slopes, 50.0))
}

fn latency(cfg: SlowPathConfig, opts: &ReportOptions) -> Vec<LatencyPoint> {
    let cfg = smallest_only(cfg);
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = bench_slow_path(cfg, &mut arena);
    let shift = cfg.page_shifts[0];
    let pages = cfg.pages_of(shift);
    let mut f = Filler {
        sp,
        rng: Rng(0x2545_F491_4F6C_DD1D),
        pages,
        allocated: 0,
        sink: Vec::new(),
        shift,
        scatter: false,
    };
    let mut out = Vec::new();
    for level in [10u32, 50, 90] {
        f.fill_to(level);
        for &n in &PROBE_PAGES {
            let (mut va_t, mut pa_t) = (Vec::new(), Vec::new());
            for _ in 0..opts.probes.max(5) {
                let hint = f.random_va();
                let t = Instant::now();
                let r =
                    f.sp.alloc(ReplyTo::default(), 2000, hint, n << shift, 3, shift, false);
                f.sp.pump(&mut f.sink);
                let va_ns = t.elapsed().as_nanos() as f64;
                f.sink.clear();
                let Ok(p) = r else { continue };
                va_t.push(va_ns);
                let mut pa_n = 0u64;
                // Back every page: the fast path takes the pushed PAs in order.
                let mut vpn = p.range.vpn();
                let end = vpn + p.range.pages;
                let t = Instant::now();
                let mut pushed = Vec::new();
                while vpn < end {
                    f.sp.refill(&mut pushed);
                    if pushed.is_empty() {
                        break;
                    }
                    for d in pushed.drain(..) {
                        if let Descriptor::FreePaPush { ppn, page_shift } = d {
                            if vpn < end {
                                if let Some((b, s)) = f.sp.shadow().find(2000, vpn, shift) {
                                    let _ = f.sp.pa_consumed(2000, vpn, ppn, page_shift, b, s);
                                    pa_n += 1;
                                }
                                vpn += 1;
                            }
                        }
                    }
                }
                pa_t.push(t.elapsed().as_nanos() as f64 / pa_n.max(1) as f64);
                let _ =
                    f.sp.free(ReplyTo::default(), 2000, p.range.start, p.range.bytes());
                f.sp.pump(&mut f.sink);
                f.sink.clear();
                let consumed = f.sp.emitted();
                f.sp.scrub(consumed, |_, _| {});
            }
            out.push(LatencyPoint {
                pages: n,
                utilization_pct: level,
                va_alloc_ns: percentile(&mut va_t, 50.0),
                va_alloc_p99_ns: percentile(&mut va_t, 99.0),
                pa_alloc_ns: percentile(&mut pa_t, 50.0),
            });
        }
    }
    out
}

/// Refill rate: one process's large untouched range; the refill pushes, and
/// every pushed PA is consumed by a notice for the next page, as first
/// touches at line rate would.
pub fn refill_rate(cfg: SlowPathConfig, total: u64) -> RefillRate {
    let cfg = smallest_only(cfg);
    let mut arena = vec![0u64; cfg.arena_words()];
    let mut sp = bench_slow_path(cfg, &mut arena);
    let shift = cfg.page_shifts[0];
    let range_pages = (cfg.pages_of(shift) / 2).min(total.max(1));
    let mut sink = Vec::new();
    let mut pushed = Vec::with_capacity(cfg.fifo_depth as usize);
    let mut done = 0u64;
    let mut elapsed = 0f64;
    let mut laps: Vec<f64> = Vec::new();
    while done < total {
        let p = sp
            .alloc(
                ReplyTo::default(),
                7,
                0,
                range_pages << shift,
                3,
                shift,
                false,
            )
            .expect("half the memory is free");
        sp.pump(&mut sink);
        sink.clear();
        // Slots of the pages, as the fast path knows them from its lookup.
        let slots: Vec<(u32, u32)> = (0..p.range.pages)
            .map(|i| {
                sp.shadow()
                    .find(7, p.range.vpn() + i, shift)
                    .expect("page reserved")
            })
            .collect();
        let t = Instant::now();
        let mut lap = Instant::now();
        let mut lap_start = done;
        let mut i = 0usize;
        let mut notices = Vec::with_capacity(cfg.fifo_depth as usize);
        while (i as u64) < p.range.pages && done < total {
            sp.refill(&mut pushed);
            if pushed.is_empty() {
                break;
            }
            // The fast path maps the pushed PAs in order and notifies in a batch,
            // as the poll core drains them from the RX ring.
            for d in pushed.drain(..) {
                if let Descriptor::FreePaPush { ppn, page_shift } = d {
                    if i < slots.len() {
                        let (bucket, slot) = slots[i];
                        notices.push(Descriptor::PaConsumed {
                            pid: 7,
                            vpn: p.range.vpn() + i as u64,
                            ppn,
                            page_shift,
                            bucket,
                            slot,
                        });
                        i += 1;
                        done += 1;
                    }
                }
            }
            sp.pa_consumed_batch(&notices);
            notices.clear();
            if done - lap_start >= 16384 {
                laps.push((done - lap_start) as f64 / lap.elapsed().as_secs_f64().max(1e-9));
                lap = Instant::now();
                lap_start = done;
            }
        }
        elapsed += t.elapsed().as_secs_f64();
        let _ = sp.free(ReplyTo::default(), 7, p.range.start, p.range.bytes());
        sp.pump(&mut sink);
        sink.clear();
        let consumed = sp.emitted();
        sp.scrub(consumed, |_, _| {});
    }
    if laps.is_empty() {
        laps.push(done as f64 / elapsed.max(1e-9));
    }
    let per_sec = percentile(&mut laps, 50.0);
    let best_per_sec = percentile(&mut laps, 100.0);
    RefillRate {
        pages: done,
        seconds: elapsed,
        per_sec,
        best_per_sec,
        target_per_sec: REFILL_TARGET_PER_SEC,
        meets_target: per_sec > REFILL_TARGET_PER_SEC,
    }
}

/// Run the whole report for `board`.
pub fn report(board: &BoardConfig, opts: &ReportOptions) -> Report {
    let cfg = SlowPathConfig::from_board(board);
    let name = board.board.name.as_str().to_string();
    let own = smallest_only(cfg);
    let kib = (1u64 << own.page_shifts[0]) >> 10;
    let k = own.slots_per_bucket;
    let curves = vec![
        retry_curve(
            &format!("{name}: board table (K={k}), {kib} KiB pages, next-fit fill"),
            own,
            false,
            opts,
        ),
        retry_curve(
            &format!("{name}: exactly 2x slots (K={k}), scattered fill"),
            tight(cfg),
            true,
            opts,
        ),
        retry_curve(
            &format!("{name}: exactly 2x slots (K=4), scattered fill"),
            tight_k(cfg, 4),
            true,
            opts,
        ),
    ];
    Report {
        board: name.clone(),
        options: *opts,
        retry_curves: curves,
        alloc_latency: latency(cfg, opts),
        refill: refill_rate(cfg, opts.refill_pages),
        footprint: footprint(&name, &cfg),
    }
}

/// The retry curves as a standalone SVG (one panel per curve, one line per
/// probe size, utilisation on x, mean retries on y).
pub fn to_svg(r: &Report) -> String {
    use std::fmt::Write;
    let (w, ph, m) = (640.0, 300.0, 50.0);
    let h = ph * r.retry_curves.len() as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let colors = ["#1f77b4", "#d62728", "#2ca02c"];
    for (k, c) in r.retry_curves.iter().enumerate() {
        let y0 = k as f64 * ph;
        let ymax = c
            .points
            .iter()
            .map(|p| p.mean_retries)
            .fold(1.0f64, f64::max)
            .ceil();
        let x = |u: f64| m + u / 100.0 * (w - 2.0 * m);
        let y = |v: f64| y0 + ph - m + -(v / ymax) * (ph - 2.0 * m);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
            m,
            y0 + 20.0,
            escape(&c.name)
        );
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
            x(0.0),
            y(0.0),
            x(100.0),
            y(0.0)
        );
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
            x(0.0),
            y(0.0),
            x(0.0),
            y(ymax)
        );
        for t in 0..=10 {
            let u = t as f64 * 10.0;
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                x(u),
                y(0.0) + 15.0,
                u
            );
        }
        for t in 0..=4 {
            let v = ymax * t as f64 / 4.0;
            let digits = if ymax < 4.0 { 2 } else { 1 };
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{:.*}</text>"#,
                x(0.0) - 5.0,
                y(v) + 4.0,
                digits,
                v
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">physical memory utilization (%)</text>"#,
            w / 2.0,
            y0 + ph - 12.0
        );
        let _ = writeln!(
            s,
            r#"<text x="12" y="{}" transform="rotate(-90 12 {})" text-anchor="middle">retries per alloc</text>"#,
            y0 + ph / 2.0,
            y0 + ph / 2.0
        );
        for (i, &n) in PROBE_PAGES.iter().enumerate() {
            let pts: Vec<String> = c
                .points
                .iter()
                .filter(|p| p.pages == n)
                .map(|p| format!("{:.1},{:.1}", x(p.utilization_pct), y(p.mean_retries)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
                colors[i],
                pts.join(" ")
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" fill="{}">{} page{}</text>"#,
                x(5.0),
                y0 + 40.0 + 15.0 * i as f64,
                colors[i],
                n,
                if n == 1 { "" } else { "s" }
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_report_on_the_emulator_board() {
        let mut o = ReportOptions::QUICK;
        o.refill_pages = 2000;
        let r = report(&clio_config::boards::EMULATOR, &o);
        assert_eq!(r.retry_curves.len(), 3);
        // No retries with the table nearly empty.
        for c in &r.retry_curves {
            assert!(c
                .points
                .iter()
                .filter(|p| p.utilization_pct < 1.0)
                .all(|p| p.mean_retries == 0.0 && p.placed > 0));
        }
        assert_eq!(r.refill.pages, 2000);
        assert!(r
            .alloc_latency
            .iter()
            .all(|l| l.va_alloc_ns > 0.0 && l.pa_alloc_ns > 0.0));
        assert!(r.footprint.total >= r.footprint.shadow_table);
        let svg = to_svg(&r);
        assert!(svg.starts_with("<svg") && svg.contains("polyline"));
        assert!(serde_json::to_string(&r).unwrap().contains("retry_curves"));
    }
}
