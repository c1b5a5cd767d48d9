//! `clio`: one front door to the disaggregated-memory stack.

use anyhow::Result;
use clap::{Parser, Subcommand};

use clio_cli::progress::{Progress, Silent};
use clio_cli::{bench, board_arg, bringup, demo, demo_rack, fabric, flash, info, logs, rack, sim};

mod print;
use print::{Printer, Rows};

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
    /// Start an emulated EDM rack: emulated U200 cards, Clio memory nodes on EDM ports, one EDM switch.
    Fabric(fabric::FabricArgs),
    /// Serve an emulated memory board over UDP.
    Sim(sim::SimArgs),
    /// Decode a firmware defmt log stream with its ELF.
    Logs(logs::LogsArgs),
    /// Start a rack controller and emulated memory nodes over UDP; `clio rack status` asks a running one.
    Rack(rack::RackArgs),
    /// Benchmarks side by side (latency vs a UDP floor, throughput, faults, scaling, memcached); slow-path report.
    Bench(bench::BenchArgs),
}

fn dispatch(cli: &Cli) -> Result<()> {
    match &cli.cmd {
        Cmd::Bringup(a) => {
            let report = bringup::check(a, sink(a.json, Rows::Checks).as_mut())?;
            if a.json {
                show(&report, true)?;
            } else {
                println!("{}", report.summary());
            }
            report.verdict()
        }
        Cmd::Edmsim(a) => edm_sim::cli::run(a.clone()).map_err(anyhow::Error::msg),
        Cmd::Info(a) => {
            let report = info::query(a)?;
            show(&report, a.json)?;
            report.verdict()
        }
        Cmd::Flash(a) => print::flash(a),
        Cmd::Demo(a) if a.rack => {
            let board = board_arg::load_board(&a.board)?;
            let report = demo_rack::demo(&board, a.nodes, sink(a.json, Rows::Timed(40)).as_mut())?;
            if a.json {
                show(&report, true)?;
            } else {
                println!("{}", report.summary());
            }
            report.verdict()
        }
        Cmd::Demo(a) => {
            let report = demo::demo(a, sink(a.json, Rows::Timed(34)).as_mut())?;
            if a.json {
                show(&report, true)?;
            } else {
                println!("{}", report.summary());
            }
            report.verdict()
        }
        Cmd::Fabric(a) => {
            let report = fabric::fabric(a, sink(a.json, Rows::Checks).as_mut())?;
            show(&report, a.json)?;
            report.verdict()
        }
        Cmd::Sim(a) => {
            // Served until the process is killed: nothing sets `stop`.
            let stop = std::sync::atomic::AtomicBool::new(false);
            sim::serve(a, &stop, &mut |e| eprintln!("clio sim: {e}"))?;
            Ok(())
        }
        Cmd::Logs(a) => {
            let summary = logs::decode(a, &mut |e| {
                match e {
                    logs::LogEvent::Line(l) if a.json => println!("{}", serde_json::to_string(&l)?),
                    logs::LogEvent::Line(l) => println!("{l}"),
                    logs::LogEvent::Warning(w) => eprintln!("clio logs: {w}"),
                }
                Ok(())
            })?;
            if summary.malformed > 0 {
                eprintln!(
                    "clio logs: {} malformed frame(s) skipped",
                    summary.malformed
                );
            }
            Ok(())
        }
        Cmd::Bench(a) => {
            bench::show_progress(true);
            match &a.cmd {
                Some(bench::BenchCmd::Slowpath(s)) => show(&bench::slowpath::run(s)?, s.json),
                Some(bench::BenchCmd::Edm(e)) => show(&bench::edm::run(e)?, e.json),
                Some(bench::BenchCmd::Rack(r)) => {
                    let report = bench::rack::run(r)?;
                    show(&report, r.json)?;
                    report.verdict()
                }
                None => {
                    let json = a.suite.json;
                    let report = bench::run_suite(&a.suite, &mut |e| {
                        if !json {
                            print!("{e}");
                        }
                    })?;
                    if json {
                        println!("{}", serde_json::to_string_pretty(&report)?);
                        // Progress and the summary go to stderr with --json.
                        eprintln!("{}", report.summary());
                    } else {
                        println!("\n{}", report.summary());
                    }
                    report.verdict()
                }
            }
        }
        Cmd::Rack(a) => match &a.cmd {
            Some(rack::RackCmd::Status(s)) => show(&rack::status(s)?, s.json),
            None => {
                let rack = rack::start(a)?;
                if a.json {
                    println!("{}", serde_json::to_string(rack.layout())?);
                } else {
                    print!("{}", rack.layout());
                }
                rack.serve(a.for_secs.map(std::time::Duration::from_secs))
            }
        },
    }
}

/// Where a command's progress goes: nowhere with `--json` (the report is
/// the output), else printed as rows laid out as `rows`.
fn sink(json: bool, rows: Rows) -> Box<dyn Progress> {
    if json {
        Box::new(Silent)
    } else {
        Box::new(Printer::new(rows))
    }
}

/// Prints a command's report: its text form, or pretty JSON with `--json`.
fn show<R: serde::Serialize + std::fmt::Display>(report: &R, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{report}");
    }
    Ok(())
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
        eprintln!("clio: error: {}", one_line(&e));
        std::process::exit(1);
    }
}

/// `e` and its causes on one line, joined by ": ". A cause whose text the
/// message before it already ends with (an error that prints its source and
/// also names it as its source) is printed once.
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !out.is_empty() && out.ends_with(&s) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{one_line, Cli};
    use clap::Parser;
    use std::path::{Path, PathBuf};

    fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !["target", ".git", "node_modules"].contains(&name.as_str())
                    && !name.starts_with("sim_build")
                {
                    markdown_files(&p, out);
                }
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }

    /// `clio` command lines quoted in a document: code-block lines that run
    /// `clio …` or `cargo run … -p clio-cli -- …`, and inline `clio …` spans
    /// (flagged `true`: prose may name a command or flag without its
    /// arguments). Lines with placeholders of optional parts (`[--x]`, `…`)
    /// are skipped.
    fn commands(text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut in_code = false;
        let mut pending = String::new();
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code {
                // Shell continuation lines make one command.
                let l = line.split(" #").next().unwrap_or("").trim();
                if let Some(head) = l.strip_suffix('\\') {
                    pending.push_str(head.trim_end());
                    pending.push(' ');
                    continue;
                }
                pending.push_str(l);
                let joined = std::mem::take(&mut pending);
                let l = joined.strip_prefix("$ ").unwrap_or(&joined);
                if let Some((_, args)) = l.split_once("-p clio-cli -- ") {
                    out.push((format!("clio {args}"), false));
                } else if l.starts_with("clio ") {
                    out.push((l.to_string(), false));
                }
            } else {
                for span in line.split('`').skip(1).step_by(2) {
                    if span.starts_with("clio ") || span == "clio" {
                        out.push((span.to_string(), true));
                    }
                }
            }
        }
        out.retain(|(c, _)| !c.contains(['[', '…', '|', '<']) && !c.contains("..."));
        out
    }

    /// The arguments of a documented command line as the shell would pass
    /// them: up to the first redirection or command separator, quotes
    /// removed.
    fn argv(command: &str) -> Vec<String> {
        command
            .split_whitespace()
            .take_while(|t| {
                !(t.starts_with('>') || t.starts_with("2>") || ["&", "&&", ";"].contains(t))
            })
            .map(|t| t.trim_matches(['"', '\'']).to_string())
            .collect()
    }

    /// An inline span that names a command (`clio flash`) or a flag
    /// (`clio info --manifest`) without the arguments it needs is a mention,
    /// not an invocation; anything else that fails to parse is an error.
    fn mention_only(c: &str, e: &clap::Error) -> bool {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::MissingRequiredArgument => true,
            ErrorKind::InvalidValue => {
                c.split_whitespace()
                    .last()
                    .is_some_and(|t| t.starts_with("--"))
                    && e.to_string().contains("a value is required")
            }
            _ => false,
        }
    }

    /// Every `clio` command line in the repository's docs still parses
    /// (unknown subcommands, renamed flags and bad values fail here).
    #[test]
    fn an_error_that_prints_its_source_is_printed_once() {
        #[derive(Debug)]
        struct Node(std::io::Error);
        impl std::fmt::Display for Node {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "memory node 1: {}", self.0)
            }
        }
        impl std::error::Error for Node {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = || std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer");
        let e = anyhow::Error::new(Node(io())).context("bench rack");
        assert_eq!(one_line(&e), "bench rack: memory node 1: no answer");
        // A cause the message does not print is still shown.
        let e = anyhow::Error::new(io()).context("memory node 1");
        assert_eq!(one_line(&e), "memory node 1: no answer");
    }

    #[test]
    fn every_documented_command_line_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        markdown_files(&root, &mut files);
        let mut bad = Vec::new();
        let mut n = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            for (c, inline) in commands(&text) {
                n += 1;
                let argv = argv(&c);
                if argv.len() == 1 {
                    continue; // bare `clio` names the tool
                }
                if let Err(e) = Cli::try_parse_from(&argv) {
                    if inline && mention_only(&c, &e) {
                        continue;
                    }
                    let first = e.to_string().lines().next().unwrap_or("").to_string();
                    bad.push(format!("{}: `{c}`: {first}", f.display()));
                }
            }
        }
        assert!(n > 20, "only {n} documented command lines found");
        assert!(bad.is_empty(), "{} of {n}:\n{}", bad.len(), bad.join("\n"));
    }

    #[test]
    fn command_scanner() {
        let md = "run `clio bench --only async` or\n```sh\ncargo run --release -p clio-cli -- demo   # main job\n\
                  clio bench slowpath [--board zcu106]\nclio sim --listen 127.0.0.1:1 \\\n  --board emulator > log 2>&1 &\n```\n";
        assert_eq!(
            commands(md),
            vec![
                ("clio bench --only async".to_string(), true),
                ("clio demo".to_string(), false),
                (
                    "clio sim --listen 127.0.0.1:1 --board emulator > log 2>&1 &".to_string(),
                    false
                )
            ]
        );
        assert_eq!(
            argv("clio flash --bitstream \"$OUT/m.json\" > x 2>&1"),
            vec!["clio", "flash", "--bitstream", "$OUT/m.json"]
        );
        let e = Cli::try_parse_from(["clio", "info", "--manifest"]).unwrap_err();
        assert!(mention_only("clio info --manifest", &e));
        let e = Cli::try_parse_from(["clio", "bench", "--only", "x", "--bogus"]).unwrap_err();
        assert!(!mention_only("clio bench --only x --bogus", &e));
        assert!(Cli::try_parse_from(["clio", "bench", "--no-such-flag"]).is_err());
    }
}
