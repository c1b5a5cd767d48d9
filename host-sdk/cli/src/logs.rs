//! `clio logs`: decode the firmware's defmt stream with its ELF.

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use clio_fwlog::Firmware;

/// Decode a firmware log stream (a QEMU serial capture or a board's UART device).
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The firmware ELF the stream came from.
    #[arg(long)]
    pub elf: std::path::PathBuf,
    /// The stream: a file or a UART device node; `-` reads standard input.
    #[arg(long, default_value = "-")]
    pub input: String,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Run `clio logs`: decode as bytes arrive, so a live UART prints as it goes.
pub fn run(a: &LogsArgs) -> Result<()> {
    let elf = std::fs::read(&a.elf).with_context(|| format!("reading {}", a.elf.display()))?;
    let fw = Firmware::from_elf(&a.elf.display().to_string(), &elf)
        .with_context(|| format!("{}: not a firmware ELF with defmt data", a.elf.display()))?;
    let mut input: Box<dyn Read> = if a.input == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(&a.input).with_context(|| format!("opening {}", a.input))?)
    };
    let mut stream = fw.stream();
    let mut buf = [0u8; 4096];
    loop {
        let n = input
            .read(&mut buf)
            .with_context(|| format!("reading {}", a.input))?;
        if n == 0 {
            break;
        }
        for line in stream.feed(&buf[..n]) {
            if a.json {
                println!("{}", serde_json::to_string(&line)?);
            } else {
                println!("{line}");
            }
        }
    }
    if stream.malformed_frames() > 0 {
        eprintln!(
            "clio logs: {} malformed frame(s) skipped",
            stream.malformed_frames()
        );
    }
    Ok(())
}
