//! `clio-cosim`: generate co-simulation cases for the fast-path RTL.
//!
//! ```text
//! clio-cosim gen --seed N --requests N --out DIR   write one case (see clio_fastpath_cosim::files)
//! clio-cosim gates --seed N --requests N --out DIR the random case with the region gate in use: the
//!                                                  slow path sets gate entries over the pages the
//!                                                  requests touch; GATE_DIRTY reports checked as read
//! clio-cosim offload --seed N --requests N --out DIR the random case with the offload pass-through on
//!                                                  (issue #16; run on a harness built with
//!                                                  -GOFFLOAD_TAGS=64): the generator is the slow
//!                                                  path's offload host, OFFLOAD_REQs checked as read
//! clio-cosim stream --seed N --requests N --out DIR write a back-to-back TLB-hit read case (II = 1 run)
//! clio-cosim class --class C --seed N --requests N --out DIR
//!                                                  a back-to-back stream of one request class
//!                                                  (read8 read64 write64 read1k write1k read4k
//!                                                  write4k faa cas miss fault), and the model's
//!                                                  projected cycles for it
//! clio-cosim fairness --seed N --requests N --out DIR [--gap CYCLES]
//!                                                  a bound-sized READ of one client every CYCLES
//!                                                  (200), an 8-byte READ of another after every 4
//!                                                  (run with the harness's --replay)
//! clio-cosim flood --seed N --requests N --out DIR  4 bound-sized READs of one client, then N 8-byte
//!                                                  hit-lane READs of another back to back
//!                                                  (run with the harness's --replay on)
//! clio-cosim offload-cost --request-bytes N --answer-bytes N --calls N --out DIR
//!                                                  N offload calls, each answered at once (the
//!                                                  cost case of tb/cosim/offload_cost.sh); roles.txt
//!                                                  names the events that measure it
//! clio-cosim check --case DIR --interleave on|off  drive the model in the order a `--replay` run of
//!                                                  the harness logged (answers ahead of an earlier
//!                                                  request's checked against the ordering rule);
//!                                                  compare responses and memory
//! clio-cosim params                                Verilator -G flags matching the co-simulation board
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clio_fastpath::{FastPath, Layout};
use clio_fastpath_cosim::{board, files, trace};
use clio_wire::payload::InfoResp;

fn usage() -> ExitCode {
    eprintln!(
        "usage: clio-cosim gen|gates|offload|stream|fairness|flood --seed N --requests N --out DIR \
         | clio-cosim class --class C --seed N --requests N --out DIR \
         | clio-cosim offload-cost --request-bytes N --answer-bytes N --calls N --out DIR \
         | clio-cosim check --case DIR --interleave on|off | clio-cosim params"
    );
    ExitCode::from(2)
}

/// The INFO payload the model answers with on the co-simulation board.
fn info_payload() -> Result<[u8; InfoResp::LEN], String> {
    let b = board::board();
    let mut m = FastPath::format(&b, board::options(), vec![0u8; b.dram.size as usize])
        .map_err(|e| e.to_string())?;
    board::info_payload(&mut m)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let b = board::board();
    let lay = match Layout::new(&b, b.dram.size as usize) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("clio-cosim: board config: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.first().map(String::as_str) {
        Some("params") => {
            println!("{}", board::verilator_params(&lay).join(" "));
            ExitCode::SUCCESS
        }
        Some("offload-cost") => {
            let mut nums = [0usize; 3];
            let mut out = None;
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                let v = it.next();
                match (a.as_str(), v) {
                    ("--request-bytes", Some(v)) => nums[0] = v.parse().unwrap_or(usize::MAX),
                    ("--answer-bytes", Some(v)) => nums[1] = v.parse().unwrap_or(usize::MAX),
                    ("--calls", Some(v)) => nums[2] = v.parse().unwrap_or(0),
                    ("--out", Some(v)) => out = Some(PathBuf::from(v)),
                    _ => return usage(),
                }
            }
            let Some(out) = out else { return usage() };
            if nums[0] > lay.mtu || nums[1] > 64 * 1024 || nums[2] == 0 {
                eprintln!(
                    "clio-cosim offload-cost: --request-bytes must be at most the MTU ({}), \
                     --answer-bytes at most 65536, --calls at least 1",
                    lay.mtu
                );
                return usage();
            }
            let info = match info_payload() {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("clio-cosim: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let (case, roles) = trace::generate_offload_cost(1, nums[0], nums[1], nums[2]);
            let roles: String = roles.iter().map(|(e, r)| format!("{e} {r}\n")).collect();
            if let Err(e) = files::write_case(&case, &lay, &info, &out)
                .and_then(|()| std::fs::write(out.join("roles.txt"), roles))
            {
                eprintln!("clio-cosim: writing {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            println!(
                "offload-cost: {} calls of {} request bytes answered with {} bytes -> {}",
                nums[2],
                nums[0],
                nums[1],
                out.display()
            );
            ExitCode::SUCCESS
        }
        Some("check") => {
            let (dir, on) = match &args[1..] {
                [c, d, i, v]
                    if c == "--case" && i == "--interleave" && (v == "on" || v == "off") =>
                {
                    (PathBuf::from(d), v == "on")
                }
                _ => return usage(),
            };
            match clio_fastpath_cosim::replay::check(&dir, on) {
                Ok(c) => {
                    println!(
                        "check {}: the model in the RTL's order agrees: {} requests taken in, {} stream \
                         packets pumped, {} polls, {} ARM writes, {} responses byte-identical, final \
                         memory identical; model: {} READ streams, {} cut by a page that went away; \
                         {} hit-lane TLB lookups, {} answers ahead of an earlier request's (each \
                         within the ordering rule)",
                        dir.display(),
                        c.takes,
                        c.pumps,
                        c.polls,
                        c.writes,
                        c.responses,
                        c.streams,
                        c.cut,
                        c.lookups,
                        c.reordered
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("clio-cosim check {}: MISMATCH: {e}", dir.display());
                    ExitCode::FAILURE
                }
            }
        }
        Some(cmd @ ("gen" | "gates" | "offload" | "stream" | "class" | "fairness" | "flood")) => {
            let mut seed = None;
            let mut requests = None;
            let mut out = None;
            let mut class = None;
            let mut gap = 200;
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                let v = it.next();
                match (a.as_str(), v) {
                    ("--seed", Some(v)) => seed = v.parse::<u64>().ok(),
                    ("--requests", Some(v)) => requests = v.parse::<usize>().ok(),
                    ("--out", Some(v)) => out = Some(PathBuf::from(v)),
                    ("--gap", Some(v)) if cmd == "fairness" => match v.parse::<u32>() {
                        Ok(g) => gap = g,
                        Err(_) => return usage(),
                    },
                    ("--class", Some(v)) => match trace::Class::parse(v) {
                        Some(c) => class = Some(c),
                        None => {
                            eprintln!("clio-cosim: unknown --class `{v}`");
                            return usage();
                        }
                    },
                    _ => return usage(),
                }
            }
            let (Some(seed), Some(requests), Some(out)) = (seed, requests, out) else {
                return usage();
            };
            let info = match info_payload() {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("clio-cosim: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let case = match (cmd, class) {
                ("gen", _) => trace::generate(seed, requests),
                ("gates", _) => trace::generate_gates(seed, requests),
                ("offload", _) => trace::generate_offload(seed, requests),
                ("stream", _) => trace::generate_stream(seed, requests),
                ("fairness", _) => trace::generate_fairness(seed, requests, 4, gap),
                ("flood", _) => trace::generate_flood(seed, requests, 4),
                (_, Some(class)) => {
                    let c = trace::generate_class(seed, requests, class);
                    // One line for tb/cosim/classes.sh (`cold`: the mixed
                    // classes' misses or first touches).
                    let cold = if class.is_mixed() {
                        c.requests / class.mixed_every()
                    } else {
                        0
                    };
                    println!(
                        "class {} requests {} packets {} ok {} model_cycles {} cold {}",
                        class.name(),
                        c.requests,
                        c.packets,
                        c.ok,
                        c.model_cycles,
                        cold
                    );
                    c.case
                }
                _ => {
                    eprintln!("clio-cosim: class needs --class");
                    return usage();
                }
            };
            if let Err(e) = files::write_case(&case, &lay, &info, &out) {
                eprintln!("clio-cosim: writing {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            println!(
                "seed {seed}: {} events, {} packets, {} responses -> {}",
                case.events.len(),
                case.packets,
                case.outputs.len(),
                out.display()
            );
            let st = &case.stats;
            println!(
                "model: {} forwarded, {} forward busy, {} re-targeted, {} duplicates, {} busy, \
                 {} TX commands, {} TX rejected, {} faults, {} TLB misses",
                st.forwarded,
                st.forward_busy,
                st.pending_retargets,
                st.duplicates,
                st.busy,
                st.tx_commands,
                st.tx_rejected,
                st.faults,
                st.tlb_misses
            );
            if cmd == "gates" {
                let g = &case.gate;
                println!(
                    "gates: {} GATE_SET applied, {} BUSY ({} for want of RX room), {} MOVED, \
                     {} changes tracked, {} GATE_DIRTY pushed, {} read and checked",
                    g.sets,
                    g.busy,
                    case.gate_rx_full,
                    g.moved,
                    g.tracked,
                    g.reports,
                    case.gate_reports_read
                );
            }
            if cmd == "offload" {
                let (l, o) = (&case.offload, &case.offload_gen);
                println!(
                    "offload: {} calls forwarded, {} BUSY without RX room, {} answered, {} answers \
                     dropped; slow path: {} OFFLOAD_REQ slots read and checked, {} calls read, \
                     {} answers sent ({} above the MTU, {} above the bound), {} stale, {} with a \
                     fragment missing or swapped, {} with a bad head",
                    l.forwarded,
                    l.busy,
                    l.answered,
                    l.dropped,
                    o.slots_read,
                    o.calls_read,
                    o.answers,
                    o.multi_packet,
                    o.above_bound,
                    o.stale,
                    o.broken,
                    o.bad_head
                );
            }
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}
