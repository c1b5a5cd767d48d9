//! `fwlog`: decode a Clio firmware's defmt log capture, or print its boot
//! image manifest, using the firmware ELF.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use clio_fwlog::{Firmware, ImageManifest};

#[derive(Parser)]
#[command(
    name = "fwlog",
    about = "Decode Clio firmware logs and boot-image manifests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode a defmt byte stream (a UART capture, or `-` for stdin).
    Decode {
        /// Firmware ELF that produced the stream.
        #[arg(long)]
        elf: PathBuf,
        /// Captured bytes; `-` reads standard input until it closes.
        input: PathBuf,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
        /// Append the source location to each text line.
        #[arg(long)]
        locations: bool,
    },
    /// Print the boot-image manifest (build id, config hash, board, size) as JSON.
    Manifest {
        /// Firmware ELF.
        #[arg(long)]
        elf: PathBuf,
        /// Write the JSON here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn read_elf(path: &PathBuf) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading firmware ELF {}", path.display()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Decode {
            elf,
            input,
            json,
            locations,
        } => {
            let bytes = read_elf(&elf)?;
            let fw = Firmware::from_elf(&elf.display().to_string(), &bytes)?;
            let mut stream = fw.stream();
            let mut src: Box<dyn Read> = if input.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(
                    std::fs::File::open(&input)
                        .with_context(|| format!("opening capture {}", input.display()))?,
                )
            };
            let mut out = std::io::stdout().lock();
            let mut buf = [0u8; 4096];
            loop {
                let n = src
                    .read(&mut buf)
                    .with_context(|| format!("reading {}", input.display()))?;
                if n == 0 {
                    break;
                }
                for line in stream.feed(&buf[..n]) {
                    if json {
                        writeln!(out, "{}", serde_json::to_string(&line)?)?;
                    } else {
                        match (&line.location, locations) {
                            (Some(l), true) => writeln!(out, "{line}  ({}:{})", l.file, l.line)?,
                            _ => writeln!(out, "{line}")?,
                        }
                    }
                }
                out.flush()?;
            }
            if stream.malformed_frames() > 0 {
                eprintln!(
                    "fwlog: {} frame(s) did not decode (capture started mid-frame, other text on the line, or a different ELF)",
                    stream.malformed_frames()
                );
            }
            Ok(())
        }
        Command::Manifest { elf, out } => {
            let bytes = read_elf(&elf)?;
            let manifest = ImageManifest::from_elf(&elf.display().to_string(), &bytes)?;
            let text = serde_json::to_string_pretty(&manifest)? + "\n";
            match out {
                Some(path) => std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => std::io::stdout().write_all(text.as_bytes())?,
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fwlog: {e:#}");
            ExitCode::FAILURE
        }
    }
}
