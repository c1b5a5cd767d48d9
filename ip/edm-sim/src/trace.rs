//! Message traces in the CSV format of the published EDM simulator's trace generator:
//!
//! ```text
//! FlowID,flowType,src,dst,flow_size_bytes,rreq_bytes,start_timeslot
//! 0,0,17,93,64,0,3
//! 1,1,4,120,64,16,3
//! ```
//!
//! One message per line after the header. `src` is the node that issues the message (the
//! compute node), `dst` the node it addresses (the memory node): a write's data goes
//! `src → dst`, a read's request goes `src → dst` and its `flow_size_bytes` of data come back
//! `dst → src`. `rreq_bytes` is the size of a read's request (0 for a write).
//! `start_timeslot` counts slots of one 8 B block at 100 Gb/s ([`SLOT_PS`] = 640 ps).
//!
//! `flowType` is `0` for a write and `1` for a read. The published generator's own codes are
//! not in our hands; `write`/`read` (any case) and `W`/`R` are accepted too, and a record whose
//! `rreq_bytes` contradicts its type (a write with a request, a read without one) is refused, so
//! a file with swapped codes fails loudly instead of being simulated backwards.
//!
//! Parsing never panics on any input (see `tests/fuzz.rs`); errors name the file, the line and
//! the field at fault.

use std::fmt::Write as _;
use std::path::Path;

use crate::workload::{Kind, Message, MAX_MESSAGE_BYTES};
use crate::SimError;

/// Length of one trace slot: one 8 B block at 100 Gb/s.
pub const SLOT_PS: u64 = 640;

/// The header line of the format.
pub const HEADER: &str = "FlowID,flowType,src,dst,flow_size_bytes,rreq_bytes,start_timeslot";

/// Largest `start_timeslot` accepted (2^40 slots ≈ 700 s): times in picoseconds stay far from
/// overflow.
pub const MAX_START_SLOT: u64 = 1 << 40;

/// Largest node id accepted in a trace (node ids are 16-bit in the simulator).
pub const MAX_NODE_ID: u64 = u16::MAX as u64;

/// Largest `rreq_bytes` accepted (64 KiB).
pub const MAX_RREQ_BYTES: u64 = 1 << 16;

/// One record of a CSV trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// `FlowID`: the message's id in the trace file.
    pub flow_id: u64,
    /// `flowType`: read or write.
    pub kind: Kind,
    /// `src`: the issuing (compute) node.
    pub src: u16,
    /// `dst`: the addressed (memory) node.
    pub dst: u16,
    /// `flow_size_bytes`: data bytes written or read back.
    pub bytes: u64,
    /// `rreq_bytes`: size of a read's request message (0 for writes).
    pub rreq_bytes: u64,
    /// `start_timeslot`: issue slot (one slot = [`SLOT_PS`]).
    pub start_slot: u64,
}

impl TraceRecord {
    /// The simulator's message for this record, with id `id` (issue time = slot × 640 ps).
    pub fn to_message(&self, id: u32) -> Message {
        Message {
            id,
            kind: self.kind,
            requester: self.src,
            target: self.dst,
            bytes: self.bytes,
            arrival: self.start_slot * SLOT_PS,
        }
    }

    /// The record of a simulator message; the issue time is rounded down to its slot.
    pub fn from_message(m: &Message, rreq_bytes: u64) -> TraceRecord {
        TraceRecord {
            flow_id: u64::from(m.id),
            kind: m.kind,
            src: m.requester,
            dst: m.target,
            bytes: m.bytes,
            rreq_bytes: match m.kind {
                Kind::Read => rreq_bytes,
                Kind::Write => 0,
            },
            start_slot: m.arrival / SLOT_PS,
        }
    }
}

const FIELDS: [&str; 7] = [
    "FlowID",
    "flowType",
    "src",
    "dst",
    "flow_size_bytes",
    "rreq_bytes",
    "start_timeslot",
];

/// Parse the text of a CSV trace. `name` (the file path) appears in every error, with the
/// 1-based line and the field at fault. Blank lines are skipped; the header is required.
/// Records must be in non-decreasing `start_timeslot` order with distinct `FlowID`s.
pub fn parse(name: &str, text: &str) -> Result<Vec<TraceRecord>, SimError> {
    let err = |line: usize, why: String| SimError::Trace {
        name: name.to_string(),
        line,
        why,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((hi, header)) = lines.next() else {
        return Err(err(
            0,
            "empty file: expected the header `".to_string() + HEADER + "`",
        ));
    };
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    if cols != FIELDS {
        return Err(err(
            hi + 1,
            format!("header must be `{HEADER}`, found `{}`", clip(header)),
        ));
    }
    let mut out: Vec<TraceRecord> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, line) in lines {
        let ln = i + 1;
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() != FIELDS.len() {
            return Err(err(
                ln,
                format!(
                    "expected {} comma-separated fields, found {}",
                    FIELDS.len(),
                    cols.len()
                ),
            ));
        }
        let num = |k: usize, max: u64| -> Result<u64, SimError> {
            let v: u64 = cols[k].parse().map_err(|_| {
                err(
                    ln,
                    format!(
                        "field `{}`: `{}` is not an unsigned integer",
                        FIELDS[k],
                        clip(cols[k])
                    ),
                )
            })?;
            if v > max {
                return Err(err(
                    ln,
                    format!("field `{}`: {v} exceeds the limit {max}", FIELDS[k]),
                ));
            }
            Ok(v)
        };
        let flow_id = num(0, u64::MAX)?;
        let kind = match cols[1].to_ascii_lowercase().as_str() {
            "0" | "w" | "write" => Kind::Write,
            "1" | "r" | "read" => Kind::Read,
            other => {
                return Err(err(
                    ln,
                    format!(
                        "field `flowType`: `{}` is not 0/write or 1/read",
                        clip(other)
                    ),
                ))
            }
        };
        let src = num(2, MAX_NODE_ID)? as u16;
        let dst = num(3, MAX_NODE_ID)? as u16;
        let bytes = num(4, MAX_MESSAGE_BYTES)?;
        let rreq_bytes = num(5, MAX_RREQ_BYTES)?;
        let start_slot = num(6, MAX_START_SLOT)?;
        if src == dst {
            return Err(err(ln, format!("fields `src` and `dst` are both {src}")));
        }
        if bytes == 0 {
            return Err(err(ln, "field `flow_size_bytes` must be positive".into()));
        }
        match (kind, rreq_bytes) {
            (Kind::Write, r) if r != 0 => {
                return Err(err(
                    ln,
                    format!("field `rreq_bytes` is {r} for a write (flowType 0); must be 0"),
                ))
            }
            (Kind::Read, 0) => {
                return Err(err(
                    ln,
                    "field `rreq_bytes` is 0 for a read (flowType 1); must be positive".into(),
                ))
            }
            _ => {}
        }
        if let Some(prev) = out.last() {
            if start_slot < prev.start_slot {
                return Err(err(
                    ln,
                    format!(
                        "field `start_timeslot`: {start_slot} is before the previous record's {}",
                        prev.start_slot
                    ),
                ));
            }
        }
        if !ids.insert(flow_id) {
            return Err(err(ln, format!("field `FlowID`: {flow_id} appears twice")));
        }
        out.push(TraceRecord {
            flow_id,
            kind,
            src,
            dst,
            bytes,
            rreq_bytes,
            start_slot,
        });
    }
    if out.len() > u32::MAX as usize {
        return Err(err(0, "more than 2^32 records".into()));
    }
    Ok(out)
}

/// At most 40 characters of `s`, for error messages.
fn clip(s: &str) -> String {
    let mut c: String = s.chars().take(40).collect();
    if c.len() < s.len() {
        c.push('…');
    }
    c
}

/// Read and parse the CSV trace at `path`.
pub fn load(path: &Path) -> Result<Vec<TraceRecord>, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    parse(&path.display().to_string(), &text)
}

/// Render records in the CSV format (header, one line per record, numeric `flowType`).
pub fn render(records: &[TraceRecord]) -> String {
    let mut s = String::with_capacity(32 * (records.len() + 1));
    s.push_str(HEADER);
    s.push('\n');
    for r in records {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            r.flow_id,
            match r.kind {
                Kind::Write => 0,
                Kind::Read => 1,
            },
            r.src,
            r.dst,
            r.bytes,
            r.rreq_bytes,
            r.start_slot
        );
    }
    s
}

/// Write `records` to `path` in the CSV format.
pub fn save(path: &Path, records: &[TraceRecord]) -> Result<(), SimError> {
    std::fs::write(path, render(records)).map_err(|e| SimError::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    })
}

/// The simulator's messages for `records` (ids 0.. in file order), checked against `nodes`:
/// the error names the first record whose `src` or `dst` is not below `nodes`.
pub fn to_messages(
    name: &str,
    records: &[TraceRecord],
    nodes: usize,
) -> Result<Vec<Message>, SimError> {
    if let Some(r) = records
        .iter()
        .find(|r| usize::from(r.src.max(r.dst)) >= nodes)
    {
        return Err(SimError::Trace {
            name: name.to_string(),
            line: 0,
            why: format!(
                "FlowID {}: node {} is not below --nodes {nodes}",
                r.flow_id,
                r.src.max(r.dst)
            ),
        });
    }
    Ok(records
        .iter()
        .enumerate()
        .map(|(i, r)| r.to_message(i as u32))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_renders_and_round_trips() {
        let text = format!("{HEADER}\n0,0,1,2,64,0,0\n\n7,read,3,1,128,16,5\n");
        let r = parse("t.csv", &text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].kind, Kind::Read);
        assert_eq!((r[1].flow_id, r[1].rreq_bytes, r[1].start_slot), (7, 16, 5));
        let again = parse("t.csv", &render(&r)).unwrap();
        assert_eq!(again, r);
        let m = to_messages("t.csv", &r, 4).unwrap();
        assert_eq!(m[1].arrival, 5 * SLOT_PS);
        assert_eq!(m[1].id, 1);
        assert_eq!(
            TraceRecord::from_message(&m[1], 16),
            TraceRecord { flow_id: 1, ..r[1] }
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let cases = [
            ("", "line 0"),
            ("a,b\n", "header must be"),
            (
                &format!("{HEADER}\n0,0,1,2,64,0\n") as &str,
                "7 comma-separated",
            ),
            (&format!("{HEADER}\n0,2,1,2,64,0,0\n"), "`flowType`"),
            (&format!("{HEADER}\n0,0,1,1,64,0,0\n"), "`src` and `dst`"),
            (&format!("{HEADER}\n0,0,1,2,x,0,0\n"), "`flow_size_bytes`"),
            (
                &format!("{HEADER}\n0,0,1,2,64,16,0\n"),
                "`rreq_bytes` is 16 for a write",
            ),
            (
                &format!("{HEADER}\n0,1,1,2,64,0,0\n"),
                "`rreq_bytes` is 0 for a read",
            ),
            (
                &format!("{HEADER}\n0,0,1,2,64,0,5\n1,0,1,2,64,0,4\n"),
                "`start_timeslot`",
            ),
            (
                &format!("{HEADER}\n0,0,1,2,64,0,5\n0,0,1,2,64,0,6\n"),
                "appears twice",
            ),
            (
                &format!("{HEADER}\n0,0,1,70000,64,0,5\n"),
                "`dst`: 70000 exceeds",
            ),
        ];
        for (text, want) in cases {
            let e = parse("f.csv", text).unwrap_err().to_string();
            assert!(e.contains("f.csv") && e.contains(want), "{text:?}: {e}");
        }
        let e = parse(
            "f.csv",
            &format!("{HEADER}\n0,0,1,2,64,0,0\n1,0,3,2,x,0,0\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 3"), "{e}");
        let r = parse("f.csv", &format!("{HEADER}\n0,0,1,9,64,0,0\n")).unwrap();
        let e = to_messages("f.csv", &r, 8).unwrap_err().to_string();
        assert!(e.contains("node 9") && e.contains("--nodes 8"), "{e}");
    }
}
