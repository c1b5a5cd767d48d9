//! `clio-cosim`: generate co-simulation cases for the fast-path RTL.
//!
//! ```text
//! clio-cosim gen --seed N --requests N --out DIR   write one case (see clio_fastpath_cosim::files)
//! clio-cosim stream --seed N --requests N --out DIR write a back-to-back TLB-hit read case (II = 1 run)
//! clio-cosim params                                Verilator -G flags matching the co-simulation board
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clio_fastpath::{FastPath, Layout};
use clio_fastpath_cosim::{board, files, trace};
use clio_wire::payload::InfoResp;

fn usage() -> ExitCode {
    eprintln!("usage: clio-cosim gen|stream --seed N --requests N --out DIR | clio-cosim params");
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
        Some(cmd @ ("gen" | "stream")) => {
            let mut seed = None;
            let mut requests = None;
            let mut out = None;
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                let v = it.next();
                match (a.as_str(), v) {
                    ("--seed", Some(v)) => seed = v.parse::<u64>().ok(),
                    ("--requests", Some(v)) => requests = v.parse::<usize>().ok(),
                    ("--out", Some(v)) => out = Some(PathBuf::from(v)),
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
            let case = if cmd == "gen" {
                trace::generate(seed, requests)
            } else {
                trace::generate_stream(seed, requests)
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
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}
