//! Decoding the firmware's defmt byte stream into log lines.

use std::fmt;

use defmt_decoder::{DecodeError, Locations, StreamDecoder, Table};

use crate::FwlogError;

/// Log level of a line (defmt's levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `trace!`.
    Trace,
    /// `debug!`.
    Debug,
    /// `info!`.
    Info,
    /// `warn!`.
    Warn,
    /// `error!`.
    Error,
}

impl Level {
    fn from_defmt(level: defmt_parser::Level) -> Self {
        match level {
            defmt_parser::Level::Trace => Self::Trace,
            defmt_parser::Level::Debug => Self::Debug,
            defmt_parser::Level::Info => Self::Info,
            defmt_parser::Level::Warn => Self::Warn,
            defmt_parser::Level::Error => Self::Error,
        }
    }

    /// Upper-case name, as printed in log lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trace => "TRACE",
            Self::Debug => "DEBUG",
            Self::Info => "INFO",
            Self::Warn => "WARN",
            Self::Error => "ERROR",
        }
    }
}

/// Source location of a log statement, from the ELF's debug info.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    /// Source file path as recorded at build time.
    pub file: String,
    /// Line number.
    pub line: u64,
}

/// One decoded log line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// Timestamp as the firmware's timestamp format renders it (seconds with
    /// microseconds for the generic-timer timestamp), if the image has one.
    pub timestamp: Option<String>,
    /// Level; `None` for `println!`-style frames.
    pub level: Option<Level>,
    /// The message with its arguments formatted on the host.
    pub message: String,
    /// Where the statement is in the firmware source, if the ELF has debug info.
    pub location: Option<Location>,
}

impl fmt::Display for LogLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ts) = &self.timestamp {
            write!(f, "{ts} ")?;
        }
        if let Some(level) = self.level {
            write!(f, "{:<5} ", level.as_str())?;
        }
        f.write_str(&self.message)
    }
}

/// A firmware image's defmt table: what is needed to decode its log stream.
pub struct Firmware {
    table: Table,
    locations: Option<Locations>,
}

impl Firmware {
    /// Reads the defmt table (and source locations, when the ELF has debug
    /// info) from ELF bytes. `name` labels errors (usually the file path).
    pub fn from_elf(name: &str, elf: &[u8]) -> Result<Self, FwlogError> {
        // defmt-decoder parses with `object` too; check ELF-ness first so a
        // wrong file gets a clear error rather than a parser message.
        object::File::parse(elf).map_err(|e| FwlogError::NotElf {
            file: name.to_string(),
            reason: e.to_string(),
        })?;
        let table = Table::parse(elf)
            .map_err(|e| FwlogError::BadDefmtTable {
                file: name.to_string(),
                reason: format!("{e:#}"),
            })?
            .ok_or_else(|| FwlogError::NoDefmtTable {
                file: name.to_string(),
            })?;
        // Locations need DWARF; an image stripped of it still decodes.
        let locations = table.get_locations(elf).ok().filter(|l| !l.is_empty());
        Ok(Self { table, locations })
    }

    /// Whether source locations are available.
    pub fn has_locations(&self) -> bool {
        self.locations.is_some()
    }

    /// A decoder for one byte stream (one UART capture or live device).
    pub fn stream(&self) -> LogStream<'_> {
        LogStream {
            firmware: self,
            inner: self.table.new_stream_decoder(),
            malformed: 0,
        }
    }

    /// Decodes a whole captured stream. Frames that do not decode are
    /// counted, not fatal: a capture may start mid-frame or hold text from an
    /// earlier boot stage.
    pub fn decode_all(&self, bytes: &[u8]) -> (Vec<LogLine>, u64) {
        let mut stream = self.stream();
        let lines = stream.feed(bytes);
        (lines, stream.malformed_frames())
    }
}

/// Incremental decoder for one stream: feed bytes as they arrive.
pub struct LogStream<'a> {
    firmware: &'a Firmware,
    inner: Box<dyn StreamDecoder + Send + Sync + 'a>,
    malformed: u64,
}

impl LogStream<'_> {
    /// Adds received bytes and returns every line completed by them. Bytes
    /// of an unfinished frame are kept for the next call.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<LogLine> {
        self.inner.received(bytes);
        let mut lines = Vec::new();
        loop {
            match self.inner.decode() {
                Ok(frame) => {
                    let location = self
                        .firmware
                        .locations
                        .as_ref()
                        .and_then(|l| l.get(&frame.index()))
                        .map(|l| Location {
                            file: l.file.display().to_string(),
                            line: l.line,
                        });
                    lines.push(LogLine {
                        timestamp: frame.display_timestamp().map(|t| t.to_string()),
                        level: frame.level().map(Level::from_defmt),
                        message: frame.display_message().to_string(),
                        location,
                    });
                }
                Err(DecodeError::UnexpectedEof) => return lines,
                Err(DecodeError::Malformed) => self.malformed += 1,
            }
        }
    }

    /// Frames dropped because they did not decode.
    pub fn malformed_frames(&self) -> u64 {
        self.malformed
    }
}
