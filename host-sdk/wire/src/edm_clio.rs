//! Clio packets carried over the EDM fabric (issue #15): the one definition of how
//! the U200 card's translator maps the Clio requests of its H2C ring onto EDM memory
//! messages, and how the memory node's answers come back.
//!
//! The card does not translate addresses: the Clio packet (header, sessions and all)
//! reaches a Clio memory node unchanged, and VA translation, faults, dedup and
//! ordering stay the memory node's. EDM moves bytes between the nodes' local
//! memories, so the mapping is a set of mailboxes in every node's EDM memory:
//!
//! | region | address in a node's EDM memory | what |
//! |---|---|---|
//! | inbox | [`inbox_addr`]`(peer, slot)` | a [`Record`] written by `peer`: a Clio request (at a memory node) or an answer chain (at a card) |
//! | outbox | [`outbox_addr`]`(peer, slot)` | at a memory node: the answer chain of `peer`'s READ in `slot`; at a card: where that chain lands |
//!
//! Per request the card picks a free slot `s` of the destination (at most [`SLOTS`]
//! in flight per card and memory node) and:
//!
//! * **READ** → a WREQ of the request record into the node's `inbox(card, s)`, then
//!   an RREQ of `outbox(card, s)` whose length is [`read_demand`]`(total_len)`: the
//!   switch schedules the answer (an RRES of that size) like any EDM read, so it
//!   sees the true demand of the read. If the RRES holds a chain with an older
//!   `seq` (the RREQ reached the node before its answer was written), the card
//!   reads again, until the answer is there or the slot times out.
//! * **every other request** (WRITE, atomics, control) → a WREQ of the record into
//!   `inbox(card, s)`; the node answers with a WREQ of the answer chain into the
//!   card's `inbox(node, s)`.
//!
//! The node runs the request through its unchanged Clio fast path the moment the
//! record has fully arrived, and writes the answers as a chain ([`emit_chain`]):
//! `seq u32 | (len u16 | packet)* | 0 u16`, echoing the record's `seq` so that the
//! card never mistakes a stale chain for the current one. A request with no answer
//! (e.g. a late duplicate the board drops) still gets an empty chain, which frees
//! the slot. All integers are little-endian.

use crate::clio::{Header, Opcode, Packet, Status, HEADER_LEN};
use crate::{Error, ErrorKind, Result};

/// Slots per (card, memory node) pair: requests a card keeps in flight to one node.
///
/// Sized from the bandwidth-delay product (`ip/edm-clio/README.md`): a memory node's
/// downlink carries at most 1/(15 × 4) 64 B operations per cycle for each of the 4 cards
/// sharing it, and an operation holds its slot 204–257 cycles in the paper's setting, so
/// a card has ~3.8 operations in flight at full load; 4 slots left no headroom (77 % busy
/// at load 0.8). 8 slots keep the wait for one under 1 % of the hold time there (Erlang C).
pub const SLOTS: u16 = 8;
/// Nodes a mailbox layout has room for (EDM node ids `0..MAX_PEERS`).
pub const MAX_PEERS: u16 = 16;
/// Bytes of one inbox slot: a record of a Clio packet of at most one XDMA slot.
pub const INBOX_SLOT_BYTES: u64 = 4096;
/// Bytes of one outbox slot: the largest answer chain of a READ (an RREQ's length is 16 bits).
pub const OUTBOX_SLOT_BYTES: u64 = 65_536;
/// Address of the inbox region.
pub const INBOX_BASE: u64 = 0;
/// Address of the outbox region.
pub const OUTBOX_BASE: u64 = INBOX_BASE + (MAX_PEERS as u64) * (SLOTS as u64) * INBOX_SLOT_BYTES;
/// Bytes of EDM memory a node needs for the mailboxes.
pub const MAILBOX_BYTES: u64 =
    OUTBOX_BASE + (MAX_PEERS as u64) * (SLOTS as u64) * OUTBOX_SLOT_BYTES;
/// Bytes of a record's header: `len u16 | rsvd u16 | seq u32`.
pub const RECORD_HEADER: usize = 8;
/// Largest Clio packet a record holds.
pub const MAX_RECORD_PACKET: usize = INBOX_SLOT_BYTES as usize - RECORD_HEADER;
/// Payload bytes per READ answer the card budgets for in [`read_demand`]: every
/// board's MTU leaves at least this much per answer (the smallest MTU a board
/// config accepts is 576).
pub const READ_ANSWER_PAYLOAD: u32 = 512;
/// Largest READ length carried over EDM ([`read_demand`] must fit 16 bits).
pub const MAX_READ: u32 = 57_344;

/// Address of `peer`'s inbox slot `slot` in a node's EDM memory.
pub const fn inbox_addr(peer: u16, slot: u16) -> u64 {
    INBOX_BASE + (peer as u64 * SLOTS as u64 + slot as u64) * INBOX_SLOT_BYTES
}

/// Address of `peer`'s outbox slot `slot` in a node's EDM memory.
pub const fn outbox_addr(peer: u16, slot: u16) -> u64 {
    OUTBOX_BASE + (peer as u64 * SLOTS as u64 + slot as u64) * OUTBOX_SLOT_BYTES
}

/// How one Clio request crosses the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carriage {
    /// WREQ of the request record, then an RREQ of `demand` bytes of answer chain.
    Read {
        /// RREQ length: the answer chain's bytes ([`read_demand`]).
        demand: u16,
    },
    /// WREQ of the request record; the answer chain comes back as a WREQ.
    Write,
}

/// EDM memory message kinds of a carriage, as the RTL encodes them (`CARRY_*`).
pub mod carry {
    /// WREQ of the record, then RREQ of the answer.
    pub const READ: u8 = 1;
    /// WREQ of the record; answers by WREQ.
    pub const WRITE: u8 = 2;
    /// Refused by the card: the error code says why ([`super::refuse`]).
    pub const REFUSE: u8 = 3;
}

/// Why the card refuses a packet instead of carrying it (`REFUSE_*` in the RTL).
pub mod refuse {
    /// Not a Clio request the card knows (`clio.opcode`).
    pub const OPCODE: u8 = 1;
    /// A READ longer than [`super::MAX_READ`] (`clio.total_len`).
    pub const READ_LEN: u8 = 2;
    /// A packet longer than a record holds (`xdma.slot.len`).
    pub const PACKET_LEN: u8 = 3;
    /// Shorter than a Clio header (`clio.header`).
    pub const SHORT: u8 = 4;
}

/// Bytes of the answer chain of a READ of `total_len` bytes: the sequence number,
/// one length-prefixed Clio header per [`READ_ANSWER_PAYLOAD`] bytes, the data and
/// the terminator. A READ of length 0 still gets one (error or empty) answer.
pub const fn read_demand(total_len: u32) -> u32 {
    let answers = if total_len == 0 {
        1
    } else {
        total_len.div_ceil(READ_ANSWER_PAYLOAD)
    };
    4 + answers * (2 + HEADER_LEN as u32) + total_len + 2
}

/// The carriage of a Clio request packet of `packet_len` bytes with opcode byte
/// `opcode` and header `total_len`; the error names the field the card refuses.
/// Defined on the raw fields because that is all the translator reads.
pub fn carriage(opcode: u8, total_len: u32, packet_len: usize) -> Result<Carriage> {
    if packet_len < HEADER_LEN {
        return Err(Error::truncated("clio.header", HEADER_LEN, packet_len));
    }
    if packet_len > MAX_RECORD_PACKET {
        return Err(Error::new(
            "xdma.slot.len",
            ErrorKind::OutOfRange {
                value: packet_len as u64,
                max: MAX_RECORD_PACKET as u64,
            },
        ));
    }
    let op = Opcode::try_from(opcode)
        .ok()
        .filter(|o| !o.is_response())
        .ok_or(Error::new("clio.opcode", ErrorKind::Unknown(opcode as u64)))?;
    if op == Opcode::Read {
        if total_len > MAX_READ {
            return Err(Error::new(
                "clio.total_len",
                ErrorKind::OutOfRange {
                    value: total_len as u64,
                    max: MAX_READ as u64,
                },
            ));
        }
        return Ok(Carriage::Read {
            demand: read_demand(total_len) as u16,
        });
    }
    Ok(Carriage::Write)
}

/// The refusal code of a [`carriage`] error (see [`refuse`]).
pub fn refuse_code(e: &Error) -> u8 {
    match e.field {
        "clio.opcode" => refuse::OPCODE,
        "clio.total_len" => refuse::READ_LEN,
        "xdma.slot.len" => refuse::PACKET_LEN,
        _ => refuse::SHORT,
    }
}

/// The status of the answer a card makes itself to a packet it refuses with `code`
/// ([`refuse`]; [`emit_refusal`]): `TOO_LARGE` for a READ past [`MAX_READ`] or a packet
/// past a record ([`MAX_RECORD_PACKET`]) — retrying cannot help, split it — and
/// `UNSUPPORTED` for a byte that is no request opcode (as a Clio board answers one).
/// `None` for a packet shorter than a Clio header: it names no request to answer
/// (a Clio board drops such a runt too); the card only counts it.
pub const fn refusal_status(code: u8) -> Option<Status> {
    match code {
        refuse::READ_LEN | refuse::PACKET_LEN => Some(Status::TooLarge),
        refuse::OPCODE => Some(Status::Unsupported),
        _ => None,
    }
}

/// The header-only Clio answer a card writes into its C2H ring for a packet it
/// refuses with `code` ([`carriage`], [`refuse_code`]), so that the host gets the
/// status ([`refusal_status`]) instead of a timeout. It is what a Clio board
/// answers to a request it cannot serve: version [`crate::clio::VERSION`], the request's opcode
/// with the response bit ([`Opcode::Nack`] for a byte that is no request opcode),
/// flags 0, the status, `pid`, `req_id`, `retry_of`, `offset`, `session` and
/// `epoch` echoed, `va`, `total_len`, `payload_len`, `key` and `ack` 0 (so the
/// answer itself always parses), the CRC filled in. The request's own CRC is not
/// checked (the card checks no CRC of what it carries either): an answer naming
/// a corrupted header's ids is a stray the host drops. Written into `out` (at
/// least [`HEADER_LEN`] bytes); returns its length, or `None` when there is
/// nothing to answer (a runt, or `out` too short).
pub fn emit_refusal(packet: &[u8], code: u8, out: &mut [u8]) -> Option<usize> {
    let status = refusal_status(code)?;
    let p = Packet::new_unchecked(packet.get(..HEADER_LEN)?);
    let opcode = Opcode::try_from(p.opcode_raw())
        .ok()
        .and_then(Opcode::response)
        .unwrap_or(Opcode::Nack);
    let h = Header::refusal(&p, opcode, status);
    h.emit_with_payload(out, &[]).ok()
}

/// A record in an inbox: a Clio request packet, or an answer chain, tagged with the
/// sender's sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Sender's sequence number (echoed in the answer chain).
    pub seq: u32,
    /// The bytes carried.
    pub body: &'a [u8],
}

/// Encode a record into `out`; returns the bytes written (the WREQ's length).
pub fn emit_record(seq: u32, body: &[u8], out: &mut [u8]) -> Result<usize> {
    let need = RECORD_HEADER + body.len();
    if body.len() > MAX_RECORD_PACKET || need > out.len() {
        return Err(Error::new(
            "edm_clio.record.len",
            ErrorKind::OutOfRange {
                value: body.len() as u64,
                max: MAX_RECORD_PACKET.min(out.len().saturating_sub(RECORD_HEADER)) as u64,
            },
        ));
    }
    out[0..2].copy_from_slice(&(body.len() as u16).to_le_bytes());
    out[2..4].copy_from_slice(&[0, 0]);
    out[4..8].copy_from_slice(&seq.to_le_bytes());
    out[RECORD_HEADER..need].copy_from_slice(body);
    Ok(need)
}

/// Bytes a record occupies, from its first two bytes (`None` if fewer are present).
pub fn record_len(bytes: &[u8]) -> Option<usize> {
    (bytes.len() >= 2).then(|| RECORD_HEADER + u16::from_le_bytes([bytes[0], bytes[1]]) as usize)
}

/// Parse a record; the error names the field.
pub fn parse_record(bytes: &[u8]) -> Result<Record<'_>> {
    if bytes.len() < RECORD_HEADER {
        return Err(Error::truncated(
            "edm_clio.record",
            RECORD_HEADER,
            bytes.len(),
        ));
    }
    let len = u16::from_le_bytes([bytes[0], bytes[1]]) as usize;
    let rsvd = u16::from_le_bytes([bytes[2], bytes[3]]);
    if rsvd != 0 {
        return Err(Error::new(
            "edm_clio.record.rsvd",
            ErrorKind::Reserved(rsvd as u64),
        ));
    }
    if len > MAX_RECORD_PACKET || RECORD_HEADER + len > bytes.len() {
        return Err(Error::new(
            "edm_clio.record.len",
            ErrorKind::OutOfRange {
                value: len as u64,
                max: (bytes.len() - RECORD_HEADER).min(MAX_RECORD_PACKET) as u64,
            },
        ));
    }
    Ok(Record {
        seq: u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
        body: &bytes[RECORD_HEADER..RECORD_HEADER + len],
    })
}

/// Encode an answer chain (`seq`, then each packet length-prefixed, then a zero
/// length) into `out`; returns the bytes written. Fails naming
/// `edm_clio.chain.len` if the chain does not fit `out`.
pub fn emit_chain<'p>(
    seq: u32,
    packets: impl IntoIterator<Item = &'p [u8]>,
    out: &mut [u8],
) -> Result<usize> {
    let cap = out.len();
    let full = |need: usize| {
        Error::new(
            "edm_clio.chain.len",
            ErrorKind::OutOfRange {
                value: need as u64,
                max: cap as u64,
            },
        )
    };
    if out.len() < 6 {
        return Err(full(6));
    }
    out[0..4].copy_from_slice(&seq.to_le_bytes());
    let mut at = 4;
    for p in packets {
        let need = at + 2 + p.len() + 2;
        if need > out.len() || p.is_empty() || p.len() > u16::MAX as usize {
            return Err(full(need));
        }
        out[at..at + 2].copy_from_slice(&(p.len() as u16).to_le_bytes());
        out[at + 2..at + 2 + p.len()].copy_from_slice(p);
        at += 2 + p.len();
    }
    out[at..at + 2].copy_from_slice(&[0, 0]);
    Ok(at + 2)
}

/// Parse an answer chain: its `seq` and the packets, in order. The error names the field.
pub fn parse_chain(bytes: &[u8]) -> Result<(u32, ChainIter<'_>)> {
    if bytes.len() < 6 {
        return Err(Error::truncated("edm_clio.chain", 6, bytes.len()));
    }
    let seq = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    Ok((seq, ChainIter { rest: &bytes[4..] }))
}

/// The packets of an answer chain ([`parse_chain`]); yields an error (naming
/// `edm_clio.chain.len`) and stops if the chain runs past its bytes.
#[derive(Debug, Clone)]
pub struct ChainIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for ChainIter<'a> {
    type Item = Result<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.len() < 2 {
            let have = self.rest.len();
            self.rest = &[];
            return (have > 0).then(|| Err(Error::truncated("edm_clio.chain.len", 2, have)));
        }
        let len = u16::from_le_bytes([self.rest[0], self.rest[1]]) as usize;
        if len == 0 {
            self.rest = &[];
            return None;
        }
        if 2 + len > self.rest.len() {
            let have = self.rest.len() - 2;
            self.rest = &[];
            return Some(Err(Error::new(
                "edm_clio.chain.len",
                ErrorKind::OutOfRange {
                    value: len as u64,
                    max: have as u64,
                },
            )));
        }
        let p = &self.rest[2..2 + len];
        self.rest = &self.rest[2 + len..];
        Some(Ok(p))
    }
}

/// SystemVerilog `localparam`s of this mapping, for `edm_pkg` (the translator RTL).
#[cfg(feature = "std")]
pub fn sv_constants() -> std::string::String {
    use core::fmt::Write;
    let mut s = std::string::String::new();
    let _ = writeln!(s, "    // Clio over EDM (host-sdk/wire/src/edm_clio.rs).");
    for (name, v) in [
        ("CLIO_HEADER_LEN", HEADER_LEN as u64),
        ("CLIO_OP_READ", Opcode::Read as u8 as u64),
        ("CLIO_OP_FIRST", Opcode::Alloc as u8 as u64),
        ("CLIO_OP_LAST", Opcode::CloseSession as u8 as u64),
        ("CARRY_READ", carry::READ as u64),
        ("CARRY_WRITE", carry::WRITE as u64),
        ("CARRY_REFUSE", carry::REFUSE as u64),
        ("REFUSE_OPCODE", refuse::OPCODE as u64),
        ("REFUSE_READ_LEN", refuse::READ_LEN as u64),
        ("REFUSE_PACKET_LEN", refuse::PACKET_LEN as u64),
        ("REFUSE_SHORT", refuse::SHORT as u64),
        ("EC_MAX_READ", MAX_READ as u64),
        ("EC_MAX_RECORD_PACKET", MAX_RECORD_PACKET as u64),
        ("EC_READ_ANSWER_PAYLOAD", READ_ANSWER_PAYLOAD as u64),
        ("EC_RECORD_HEADER", RECORD_HEADER as u64),
        ("EC_SLOTS", SLOTS as u64),
        ("EC_INBOX_BASE", INBOX_BASE),
        ("EC_INBOX_SLOT_BYTES", INBOX_SLOT_BYTES),
        ("EC_OUTBOX_BASE", OUTBOX_BASE),
        ("EC_OUTBOX_SLOT_BYTES", OUTBOX_SLOT_BYTES),
        // The card's own answer to a refused packet (emit_refusal).
        ("CLIO_VERSION", crate::clio::VERSION as u64),
        ("CLIO_OP_NACK", Opcode::Nack as u8 as u64),
        ("CLIO_RESPONSE_BIT", crate::clio::RESPONSE_BIT as u64),
        (
            "EC_STATUS_TOO_LARGE",
            refusal_status(refuse::READ_LEN).map_or(0, Status::raw) as u64,
        ),
        (
            "EC_STATUS_OPCODE",
            refusal_status(refuse::OPCODE).map_or(0, Status::raw) as u64,
        ),
    ] {
        let _ = writeln!(s, "    localparam int {name:<22} = {v};");
    }
    let _ = writeln!(
        s,
        "    localparam logic [31:0] CLIO_CRC32C_POLY_REFLECTED = 32'h{:08x};",
        crate::crc::POLY
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_of_each_opcode() {
        assert_eq!(
            carriage(Opcode::Read as u8, 64, HEADER_LEN).unwrap(),
            Carriage::Read {
                demand: (4 + 58 + 64 + 2) as u16
            }
        );
        for op in [
            Opcode::Write,
            Opcode::CompareAndSwap,
            Opcode::Alloc,
            Opcode::Info,
        ] {
            assert_eq!(
                carriage(op as u8, 8, HEADER_LEN + 8).unwrap(),
                Carriage::Write
            );
        }
        assert_eq!(
            carriage(0x83, 0, HEADER_LEN).unwrap_err().field,
            "clio.opcode"
        );
        assert_eq!(
            carriage(0x7e, 0, HEADER_LEN).unwrap_err().field,
            "clio.opcode"
        );
        assert_eq!(
            carriage(3, MAX_READ + 1, HEADER_LEN).unwrap_err().field,
            "clio.total_len"
        );
        assert_eq!(carriage(4, 0, 10).unwrap_err().field, "clio.header");
        assert_eq!(carriage(4, 0, 5000).unwrap_err().field, "xdma.slot.len");
        assert!(read_demand(MAX_READ) <= u16::MAX as u32);
        assert!(read_demand(64 * 1024) > u16::MAX as u32);
        assert!(outbox_addr(MAX_PEERS - 1, SLOTS - 1) + OUTBOX_SLOT_BYTES == MAILBOX_BYTES);
    }

    #[test]
    fn refusal_answers_name_the_request_and_parse() {
        let h = Header::request(Opcode::Read, 7, 42, 0x1000, MAX_READ + 1).with_session(
            3,
            9,
            0xdead_beef,
        );
        let mut req = [0u8; HEADER_LEN];
        h.emit_with_payload(&mut req, &[]).unwrap();
        let e = carriage(req[crate::clio::field::OPCODE], MAX_READ + 1, HEADER_LEN).unwrap_err();
        let mut out = [0u8; HEADER_LEN];
        let n = emit_refusal(&req, refuse_code(&e), &mut out).unwrap();
        let a = Header::parse_verified(&Packet::new_checked(&out[..n]).unwrap()).unwrap();
        assert_eq!(
            (a.opcode, a.status, a.pid, a.req_id, a.session, a.epoch, a.key, a.va),
            (Opcode::ReadResp, Status::TooLarge, 7, 42, 3, 9, 0, 0)
        );
        // An opcode that is no request: NACK, UNSUPPORTED.
        req[crate::clio::field::OPCODE] = 0x7e;
        let n = emit_refusal(&req, refuse::OPCODE, &mut out).unwrap();
        let a = Header::parse_verified(&Packet::new_checked(&out[..n]).unwrap()).unwrap();
        assert_eq!(
            (a.opcode, a.status, a.req_id),
            (Opcode::Nack, Status::Unsupported, 42)
        );
        // A runt names no request.
        assert_eq!(emit_refusal(&req[..20], refuse::SHORT, &mut out), None);
        assert_eq!(emit_refusal(&req[..20], refuse::OPCODE, &mut out), None);
    }

    #[test]
    fn records_and_chains_round_trip_and_name_fields() {
        let mut b = [0u8; 64];
        let n = emit_record(7, b"abc", &mut b).unwrap();
        assert_eq!(record_len(&b), Some(n));
        let r = parse_record(&b[..n]).unwrap();
        assert_eq!((r.seq, r.body), (7, &b"abc"[..]));
        assert_eq!(
            parse_record(&b[..n - 1]).unwrap_err().field,
            "edm_clio.record.len"
        );
        b[2] = 1;
        assert_eq!(
            parse_record(&b[..n]).unwrap_err().field,
            "edm_clio.record.rsvd"
        );
        let mut c = [0u8; 32];
        let n = emit_chain(9, [&b"xy"[..], &b"z"[..]], &mut c).unwrap();
        let (seq, it) = parse_chain(&c[..n]).unwrap();
        let got: Vec<_> = it.map(|p| p.unwrap().to_vec()).collect();
        assert_eq!((seq, got), (9, vec![b"xy".to_vec(), b"z".to_vec()]));
        assert_eq!(
            emit_chain(9, [&[0u8; 40][..]], &mut c).unwrap_err().field,
            "edm_clio.chain.len"
        );
        c[4] = 200;
        let (_, mut it) = parse_chain(&c[..n]).unwrap();
        assert_eq!(it.next().unwrap().unwrap_err().field, "edm_clio.chain.len");
        assert!(it.next().is_none());
    }
}
