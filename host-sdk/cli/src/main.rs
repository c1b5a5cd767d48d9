//! `clio`: one front door to the disaggregated-memory stack.

use anyhow::Result;
use clap::{Parser, Subcommand};

mod bench;
mod board_arg;
mod bringup;
mod demo;
mod flash;
mod info;
mod logs;
mod report;
mod sim;

/// The clio command-line tool.
#[derive(Debug, Parser)]
#[command(
    name = "clio",
    version,
    about = "Emulated boards, demos, benchmarks, bring-up, logs and flashing for Clio memory boards and EDM fabrics"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Simulate an EDM fabric at rack scale against six baselines (EDM Fig. 8).
    Edmsim(edm_sim::cli::Args),
    /// Lab bring-up checks against a board: identity, MTU, memory test, faults, atomics, latency.
    Bringup(bringup::BringupArgs),
    /// Flash a board's bitstream and firmware through the vendor tools.
    Flash(flash::FlashArgs),
    /// Ask a board who it is; compare with a firmware build manifest.
    Info(info::InfoArgs),
    /// Start an emulated board and run a visible remote-memory workload on it.
    Demo(demo::DemoArgs),
    /// Serve an emulated memory board over UDP.
    Sim(sim::SimArgs),
    /// Decode a firmware defmt log stream with its ELF.
    Logs(logs::LogsArgs),
    /// Benchmarks side by side (latency vs a UDP floor, throughput, faults, scaling, memcached); slow-path report.
    Bench(bench::BenchArgs),
}

fn dispatch(cli: &Cli) -> Result<()> {
    match &cli.cmd {
        Cmd::Bringup(a) => bringup::run(a),
        Cmd::Edmsim(a) => edm_sim::cli::run(a.clone()).map_err(anyhow::Error::msg),
        Cmd::Info(a) => info::run(a),
        Cmd::Flash(a) => flash::run(a),
        Cmd::Demo(a) => demo::run(a),
        Cmd::Sim(a) => sim::run(a),
        Cmd::Logs(a) => logs::run(a),
        Cmd::Bench(a) => bench::run(a),
    }
}

/// Whether a panic is `print!` failing on a closed standard output: the
/// reader (`clio … | head -1`) went away, which is not an error of ours.
fn is_closed_stdout(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let msg = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe")
}

/// Errors print as one line with their causes (no backtrace noise), and
/// the exit code is 1. A reader that closes the pipe early ends the run
/// quietly with status 0, as `head` expects of the commands it reads.
fn main() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_stdout(info) {
            std::process::exit(0);
        }
        default_hook(info);
    }));
    let cli = Cli::parse();
    if let Err(e) = dispatch(&cli) {
        eprintln!("clio: error: {e:#}");
        std::process::exit(1);
    }
}
