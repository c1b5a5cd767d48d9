//! The durable log: append-only, one checksummed record per committed change.
//!
//! ```text
//! file   = header record*
//! header = "CLIORACKLOG\0" (12 bytes) version (u32 LE, = 1)
//! record = len (u32 LE) crc (u32 LE) payload[len]
//!          crc = CRC32C (clio-wire) over len's 4 bytes then the payload
//!          payload = postcard encoding of Vec<Event> (all events of one change)
//! ```
//!
//! [`Log::append`] writes a record and `fdatasync`s it before returning: a change is
//! committed when `append` returns. Recovery ([`scan`]) reads records in order and
//! stops at the first one that is torn (the file ends inside it), too long, fails its
//! checksum, or does not decode; [`Log::open`] truncates the file there, so later
//! appends follow the last good record.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use clio_wire::crc::Crc32c;

use crate::state::Event;

/// First bytes of a log file.
pub const HEADER_MAGIC: [u8; 12] = *b"CLIORACKLOG\0";
/// Log format version.
pub const LOG_VERSION: u32 = 1;
/// Header bytes.
pub const HEADER_LEN: usize = 16;
/// Largest record payload accepted (a longer length field is corruption).
pub const MAX_RECORD_LEN: u32 = 1 << 20;
/// Bytes before each record's payload.
pub const RECORD_OVERHEAD: usize = 8;

/// Why recovery stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The file ends inside the record (a write cut short by a crash).
    Torn,
    /// The length field exceeds [`MAX_RECORD_LEN`].
    BadLength(u32),
    /// The checksum does not match.
    Checksum {
        /// Carried in the record.
        carried: u32,
        /// Computed over it.
        computed: u32,
    },
    /// The checksum matches but the payload does not decode.
    Undecodable(String),
}

/// One good record: its file offset and the events of its change.
pub type Record = (u64, Vec<Event>);

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Good records in order: (file offset, events).
    pub records: Vec<Record>,
    /// Bytes of header plus good records: where the next record goes.
    pub valid_len: u64,
    /// Why the scan stopped before the end, if it did.
    pub stopped: Option<StopReason>,
}

/// Errors opening or writing the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An I/O error on the file.
    #[error("{file}: {io}")]
    Io {
        /// The log file.
        file: String,
        /// What failed.
        io: io::Error,
    },
    /// The file exists but is not a rack log of this version.
    #[error("{file}: not a clio rack log (header {found:02x?}); refusing to touch it")]
    NotALog {
        /// The file.
        file: String,
        /// Its first bytes.
        found: Vec<u8>,
    },
    /// An earlier write failed and could not be undone; the log accepts no more records.
    #[error("{file}: an earlier write failed and could not be rolled back; restart to recover")]
    Poisoned {
        /// The file.
        file: String,
    },
}

fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..12].copy_from_slice(&HEADER_MAGIC);
    h[12..].copy_from_slice(&LOG_VERSION.to_le_bytes());
    h
}

fn crc(len: u32, payload: &[u8]) -> u32 {
    let mut c = Crc32c::new();
    c.update(&len.to_le_bytes());
    c.update(payload);
    c.finish()
}

/// Encodes one record (all events of one change).
pub fn encode_record(events: &[Event]) -> Vec<u8> {
    let payload = postcard::to_stdvec(events).expect("events always encode");
    let len = u32::try_from(payload.len()).expect("record fits u32");
    let mut out = Vec::with_capacity(RECORD_OVERHEAD + payload.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc(len, &payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Reads the records after the header of `bytes` (a whole log file) up to the first
/// bad one. `bytes` must start with a valid header.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut at = HEADER_LEN;
    let mut records = Vec::new();
    let stopped = loop {
        let rest = &bytes[at.min(bytes.len())..];
        if rest.is_empty() {
            break None;
        }
        if rest.len() < RECORD_OVERHEAD {
            break Some(StopReason::Torn);
        }
        let len = u32::from_le_bytes(rest[0..4].try_into().expect("4 bytes"));
        let carried = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
        if len > MAX_RECORD_LEN {
            break Some(StopReason::BadLength(len));
        }
        let end = RECORD_OVERHEAD + len as usize;
        if rest.len() < end {
            break Some(StopReason::Torn);
        }
        let payload = &rest[RECORD_OVERHEAD..end];
        let computed = crc(len, payload);
        if computed != carried {
            break Some(StopReason::Checksum { carried, computed });
        }
        match postcard::from_bytes::<Vec<Event>>(payload) {
            Ok(events) => records.push((at as u64, events)),
            Err(e) => break Some(StopReason::Undecodable(e.to_string())),
        }
        at += end;
    };
    Scan {
        records,
        valid_len: at.min(bytes.len()) as u64,
        stopped,
    }
}

/// What recovery did to the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Good records replayed.
    pub records: usize,
    /// Where recovery stopped and why, and the bytes cut off from there, if it did.
    pub truncated: Option<(u64, StopReason, u64)>,
    /// The file did not exist (or held only part of a header) and was created.
    pub created: bool,
}

/// The open log, positioned after its last good record.
#[derive(Debug)]
pub struct Log {
    file: File,
    path: PathBuf,
    end: u64,
    poisoned: bool,
}

impl Log {
    /// Opens (or creates) the log at `path`, recovers it, and returns the good records
    /// with their file offsets.
    pub fn open(path: impl AsRef<Path>) -> Result<(Log, Vec<Record>, Recovery), LogError> {
        let path = path.as_ref().to_path_buf();
        let name = path.display().to_string();
        let io = |io| LogError::Io {
            file: name.clone(),
            io,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let h = header();
        let mut created = false;
        if bytes.len() < HEADER_LEN && h.starts_with(&bytes) {
            // New, or a crash while the header was being written.
            file.set_len(0).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.write_all(&h).map_err(io)?;
            file.sync_all().map_err(io)?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
            }
            bytes = h.to_vec();
            created = true;
        } else if !bytes.starts_with(&h) {
            return Err(LogError::NotALog {
                file: name,
                found: bytes[..bytes.len().min(HEADER_LEN)].to_vec(),
            });
        }
        let s = scan(&bytes);
        let truncated = match s.stopped {
            Some(reason) => {
                let dropped = bytes.len() as u64 - s.valid_len;
                file.set_len(s.valid_len).map_err(io)?;
                file.sync_all().map_err(io)?;
                Some((s.valid_len, reason, dropped))
            }
            None => None,
        };
        file.seek(SeekFrom::Start(s.valid_len)).map_err(io)?;
        let recovery = Recovery {
            records: s.records.len(),
            truncated,
            created,
        };
        Ok((
            Log {
                file,
                path,
                end: s.valid_len,
                poisoned: false,
            },
            s.records,
            recovery,
        ))
    }

    /// Appends one record holding `events` and `fdatasync`s it: when this returns Ok
    /// the change survives a crash. On error the file is cut back to the last good
    /// record (if even that fails, the log refuses further appends).
    pub fn append(&mut self, events: &[Event]) -> Result<(), LogError> {
        let name = || self.path.display().to_string();
        if self.poisoned {
            return Err(LogError::Poisoned { file: name() });
        }
        let rec = encode_record(events);
        let r = self
            .file
            .write_all(&rec)
            .and_then(|()| self.file.sync_data());
        match r {
            Ok(()) => {
                self.end += rec.len() as u64;
                Ok(())
            }
            Err(io) => {
                let undo = self
                    .file
                    .set_len(self.end)
                    .and_then(|()| self.file.seek(SeekFrom::Start(self.end)).map(|_| ()));
                if undo.is_err() {
                    self.poisoned = true;
                }
                Err(LogError::Io { file: name(), io })
            }
        }
    }

    /// Bytes of header plus committed records.
    pub fn len(&self) -> u64 {
        self.end
    }

    /// Whether the log holds no records.
    pub fn is_empty(&self) -> bool {
        self.end == HEADER_LEN as u64
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
