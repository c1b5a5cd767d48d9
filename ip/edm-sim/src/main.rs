//! `edmsim`: run the EDM fabric simulator on one workload, or the whole Fig. 8 matrix.

use std::process::ExitCode;

use clap::Parser;

/// Rack-scale EDM fabric simulator with six baselines (EDM §4.3, Fig. 8).
#[derive(Debug, Parser)]
#[command(name = "edmsim", version)]
struct Cli {
    #[command(flatten)]
    args: edm_sim::cli::Args,
}

fn main() -> ExitCode {
    match edm_sim::cli::run(Cli::parse().args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("edmsim: error: {e}");
            ExitCode::FAILURE
        }
    }
}
