//! Average PIM iterations to a maximal matching versus port count `N`.
//!
//! Every trial starts with all ports free and a random demand matrix (each ordered pair has a
//! message with probability `--density`, default 1.0), runs `schedule` once and records the
//! iteration count. Arrival times and sizes are random unless `--uniform` (all 64 B, all at
//! time 0: every decision is a tie, the worst case for a fixed tie-break rule). Prints one row per (N, policy, arbitration); `--json` prints JSON lines.
//!
//! `cargo run --release -p edm-pim --example iterations [-- --json --trials 200 --density 0.5]`

use std::time::Instant;

use edm_pim::{Arbitration, Config, Notification, Port, Priority, Scheduler, XorShift64};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut json = false;
    let mut trials = 100u32;
    let mut density = 1.0f64;
    let mut uniform = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--json" => json = true,
            "--uniform" => uniform = true,
            "--trials" | "--density" => {
                let Some(v) = args.get(i + 1) else {
                    eprintln!("error: {} needs a value", args[i]);
                    std::process::exit(2);
                };
                let ok = if args[i] == "--trials" {
                    v.parse().map(|t| trials = t).is_ok()
                } else {
                    v.parse().map(|d| density = d).is_ok() && (0.0..=1.0).contains(&density)
                };
                if !ok {
                    eprintln!("error: bad value {v:?} for {}", args[i]);
                    std::process::exit(2);
                }
                i += 1;
            }
            other => {
                eprintln!("error: unknown argument {other:?} (use --json, --uniform, --trials N, --density P)");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    if !json {
        println!(
            "{:>5} {:>5} {:>16} {:>8} {:>6} {:>6} {:>10}",
            "N", "log2N", "policy", "mean_it", "max_it", "match%", "us/sched"
        );
    }
    for &n in &[4usize, 8, 16, 32, 64, 128, 144, 256, 512] {
        for (pname, priority) in [("fcfs", Priority::Fcfs), ("srpt", Priority::Srpt)] {
            for (aname, arb) in [
                ("encoder", Arbitration::PriorityEncoder),
                ("random", Arbitration::Random { seed: 1 }),
            ] {
                let mut rng = XorShift64::new(n as u64 * 7919 + 1);
                let (mut sum, mut max, mut matched, mut possible) = (0u64, 0u32, 0usize, 0usize);
                let mut sched_time = 0.0;
                for _ in 0..trials {
                    let cfg = Config::new(n).with_priority(priority).with_arbitration(arb);
                    let mut s = Scheduler::new(cfg).expect("valid config");
                    let mut id = 0;
                    let mut has_demand_dst = vec![false; n];
                    let mut has_demand_src = vec![false; n];
                    #[allow(clippy::needless_range_loop)] // src and dst are port numbers
                    for src in 0..n {
                        for dst in 0..n {
                            let p = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                            if src != dst && p < density {
                                let (arrival, bytes) = if uniform {
                                    (0, 64)
                                } else {
                                    (rng.next_u64() % 1000, 64 + rng.next_u64() % 4096)
                                };
                                let note = Notification {
                                    src: src as Port,
                                    dst: dst as Port,
                                    bytes,
                                    id,
                                };
                                s.notify(arrival, note).expect("within bounds");
                                has_demand_src[src] = true;
                                has_demand_dst[dst] = true;
                                id += 1;
                            }
                        }
                    }
                    let t = Instant::now();
                    let out = s.schedule(1000);
                    sched_time += t.elapsed().as_secs_f64();
                    assert!(!s.has_eligible());
                    sum += u64::from(out.iterations);
                    max = max.max(out.iterations);
                    matched += out.matches.len();
                    let srcs = has_demand_src.iter().filter(|b| **b).count();
                    possible += srcs.min(has_demand_dst.iter().filter(|b| **b).count());
                }
                let mean = sum as f64 / f64::from(trials);
                let pct = 100.0 * matched as f64 / possible.max(1) as f64;
                let us = 1e6 * sched_time / f64::from(trials);
                let label = format!("{pname}/{aname}");
                if json {
                    println!("{{\"n\":{n},\"policy\":\"{pname}\",\"arbitration\":\"{aname}\",\"trials\":{trials},\"density\":{density},\"mean_iterations\":{mean:.3},\"max_iterations\":{max},\"matched_pct\":{pct:.2},\"us_per_schedule\":{us:.2}}}");
                } else {
                    println!(
                        "{n:>5} {:>5.2} {label:>16} {mean:>8.2} {max:>6} {pct:>6.1} {us:>10.1}",
                        (n as f64).log2()
                    );
                }
            }
        }
    }
}
