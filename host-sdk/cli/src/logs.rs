//! `clio logs`: decode the firmware's defmt stream with its ELF.
//!
//! The stream is binary (rzcobs frames): a board's UART must be read raw at
//! the firmware's baud rate, or the tty's line discipline rewrites bytes
//! (CR to NL, erase and end-of-file characters, echo) and the frames stop
//! decoding. A terminal device is therefore opened through the
//! `serialport` crate (raw mode, 8N1, no flow control, `--baud`); a file or
//! standard input is read as it is.
//!
//! Decoding with an ELF other than the one that wrote the stream turns every
//! frame into plausible garbage, so the banner's build id (found without
//! the ELF, `clio_fwlog::BuildIdScanner`) is compared with the ELF's: a
//! mismatch is an error unless `--force`.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use clio_fwlog::{BuildIdScanner, Firmware, ImageManifest, LogLine};

/// The firmware's console baud rate (`firmware-arm/image/src/board.rs`,
/// `CONSOLE_BAUD`, 8N1).
pub const DEFAULT_BAUD: u32 = 115_200;

/// Decode a firmware log stream (a QEMU serial capture or a board's UART device).
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The firmware ELF the stream came from.
    #[arg(long)]
    pub elf: std::path::PathBuf,
    /// The stream: a file or a UART device node (a terminal device is set to
    /// raw mode at --baud); `-` reads standard input.
    #[arg(long, default_value = "-")]
    pub input: String,
    /// Baud rate of a UART device (ignored for files and standard input).
    #[arg(long, default_value_t = DEFAULT_BAUD)]
    pub baud: u32,
    /// Decode even when the stream's banner names another build id than the ELF.
    #[arg(long)]
    pub force: bool,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How long one read of a UART waits before it is retried (a live stream
/// has quiet periods; only end of file or an error ends the command).
const SERIAL_READ_TIMEOUT: Duration = Duration::from_millis(200);

/// Open `path` for reading: a terminal through `serialport` in raw mode at
/// `baud`, anything else as a plain file.
pub fn open_input(path: &str, baud: u32) -> Result<Box<dyn Read>> {
    if path == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = std::fs::File::open(path).with_context(|| format!("opening {path}"))?;
    if !file.is_terminal() {
        return Ok(Box::new(file));
    }
    drop(file);
    // open_native: exclusive (TIOCEXCL), termios made raw (no echo, no
    // canonical mode, no CR/NL translation, VMIN/VTIME for the timeout),
    // 8 data bits, no parity, one stop bit, no flow control, and the speed.
    let port = serialport::new(path, baud)
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(SERIAL_READ_TIMEOUT)
        .open_native()
        .with_context(|| format!("{path}: cannot set up the UART (raw, {baud} baud 8N1)"))?;
    Ok(Box::new(port))
}

/// The build id of `elf` (None when it has no GNU build-id note, e.g. an
/// ELF from another toolchain: then nothing can be compared).
fn elf_build_id(name: &Path, elf: &[u8]) -> Option<String> {
    ImageManifest::from_elf(&name.display().to_string(), elf)
        .ok()
        .map(|m| m.build_id)
}

/// What `clio logs` reports while it decodes.
#[derive(Debug)]
pub enum LogEvent {
    /// A decoded log line.
    Line(LogLine),
    /// Something the reader should know (no build id to check; a build id
    /// mismatch overridden by `--force`).
    Warning(String),
}

/// The end of a decoded stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogSummary {
    /// Lines decoded.
    pub lines: u64,
    /// Frames that could not be decoded and were skipped.
    pub malformed: u64,
}

/// Runs `clio logs`: decodes as bytes arrive, each line (and warning) sent
/// to `on` as soon as it is decoded, so a live UART shows as it goes; an
/// error from `on` ends the run. The counts at the end of the stream.
pub fn decode(a: &LogsArgs, on: &mut dyn FnMut(LogEvent) -> Result<()>) -> Result<LogSummary> {
    let elf = std::fs::read(&a.elf).with_context(|| format!("reading {}", a.elf.display()))?;
    let fw = Firmware::from_elf(&a.elf.display().to_string(), &elf)
        .with_context(|| format!("{}: not a firmware ELF with defmt data", a.elf.display()))?;
    let expected = elf_build_id(&a.elf, &elf);
    if expected.is_none() {
        on(LogEvent::Warning(format!(
            "{} has no GNU build id; the stream cannot be matched to it",
            a.elf.display()
        )))?;
    }
    let mut scanner = expected.as_ref().map(|id| BuildIdScanner::new(id.len()));
    let mut input = open_input(&a.input, a.baud)?;
    let mut stream = fw.stream();
    let mut buf = [0u8; 4096];
    let mut lines = 0;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            // A quiet UART: keep listening.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::WouldBlock
                ) =>
            {
                continue
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", a.input)),
        };
        // Check the banner before printing what this chunk decodes to.
        if let (Some(s), Some(want)) = (scanner.as_mut(), expected.as_ref()) {
            if let Some(found) = s.feed(&buf[..n]) {
                if &found != want {
                    let msg = format!(
                        "{}: the stream's banner says build {found}, but {} is build {want}: decoding with it would print garbage (pass the ELF that was flashed, or --force)",
                        a.input,
                        a.elf.display()
                    );
                    if !a.force {
                        bail!(msg);
                    }
                    on(LogEvent::Warning(format!("warning (--force): {msg}")))?;
                }
            }
        }
        for line in stream.feed(&buf[..n]) {
            lines += 1;
            on(LogEvent::Line(line))?;
        }
    }
    Ok(LogSummary {
        lines,
        malformed: stream.malformed_frames(),
    })
}

#[cfg(test)]
mod tests {
    use super::{decode, LogEvent, LogSummary, LogsArgs};
    use std::path::PathBuf;

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../firmware-arm/fwlog/tests/data")
            .join(name)
    }

    fn args(elf: &str, force: bool) -> LogsArgs {
        LogsArgs {
            elf: data(elf),
            input: data("boot.uart").display().to_string(),
            baud: super::DEFAULT_BAUD,
            force,
            json: false,
        }
    }

    /// The golden capture decodes, in process, to the golden log's lines,
    /// one event each, and the summary counts them.
    #[test]
    fn golden_capture_decodes_to_line_events() {
        let mut text = String::new();
        let mut warnings = Vec::new();
        let summary = decode(&args("boot.elf", false), &mut |e| {
            match e {
                LogEvent::Line(l) => text.push_str(&format!("{l}\n")),
                LogEvent::Warning(w) => warnings.push(w),
            }
            Ok(())
        })
        .unwrap();
        let golden = std::fs::read_to_string(data("boot.log")).unwrap();
        assert_eq!(text, golden);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            summary,
            LogSummary {
                lines: golden.lines().count() as u64,
                malformed: 0
            }
        );
    }

    /// Another build's ELF is an error; with `--force` a warning event.
    #[test]
    fn wrong_elf_is_an_error_or_a_forced_warning() {
        let mut events = 0;
        let e = decode(&args("fault.elf", false), &mut |_| {
            events += 1;
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(events, 0);
        let mut warnings = Vec::new();
        decode(&args("fault.elf", true), &mut |e| {
            if let LogEvent::Warning(w) = e {
                warnings.push(w);
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("warning (--force):"));
    }
}
