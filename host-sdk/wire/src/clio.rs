//! The Clio packet: a fixed 56-byte header in front of every request,
//! response and NACK, carried as the payload of an Ethernet/IPv4/UDP frame.
//!
//! Every packet is self-contained (rule 1 of the design): it names the
//! process (PID), the request, the VA, the whole request's length and where
//! its own payload sits within it, so a memory node can execute packets of a
//! multi-packet write independently and in any order. Multi-byte fields are
//! big-endian (network order).
//!
//! ```text
//!  0      1      2      3      4             8             12
//! +------+------+------+------+-------------+-------------+-------------+
//! | ver  |opcode|flags |status|    pid      |   req_id    |  retry_of   |
//! +------+------+------+------+-------------+-------------+-------------+
//! 16                          24            28            32     34     36
//! +---------------------------+-------------+-------------+------+------+-------------+
//! |           va              |  total_len  |   offset    | plen | sess |    epoch    |
//! +---------------------------+-------------+-------------+------+------+-------------+
//! 40                          48            52            56
//! +---------------------------+-------------+-------------+
//! |           key             |     ack     |    crc      |
//! +---------------------------+-------------+-------------+
//! ```
//! The CRC32C covers the header (with the `crc` field taken as zero) and the
//! payload.
//!
//! Version 2 added the session fields (`session`, `epoch`, `key`, `ack`):
//! a request is executed only if `session`/`key` name a session the board
//! opened for `pid` in the boot named by `epoch` (see the wire README's
//! threat model). `ack` lets the board free the dedup records of answers
//! the client has received ([`serial_before`]).

use crate::crc::Crc32c;
use crate::enums::wire_enum;
use crate::error::bytes::{be16, be32, be64, set_be16, set_be32, set_be64};
use crate::{Error, ErrorKind, Result};

/// Current header version.
pub const VERSION: u8 = 2;
/// Header length in bytes.
pub const HEADER_LEN: usize = 56;
/// Largest payload a single packet may carry (jumbo frames included); the
/// MTU in force comes from the board config and is never above this.
pub const MAX_PAYLOAD: usize = 9000 - HEADER_LEN - 28;

/// The header fields: byte offsets of one-byte fields, byte ranges of the
/// others (shared with the RTL via the generated package, which has the offsets).
pub mod field {
    use crate::Field;

    /// Version byte.
    pub const VERSION: usize = 0;
    /// Opcode byte.
    pub const OPCODE: usize = 1;
    /// Flags byte.
    pub const FLAGS: usize = 2;
    /// Status byte.
    pub const STATUS: usize = 3;
    /// Global process id, u32.
    pub const PID: Field = 4..8;
    /// Request id, u32.
    pub const REQ_ID: Field = 8..12;
    /// Id of the request this one retries (0 = none), u32.
    pub const RETRY_OF: Field = 12..16;
    /// Virtual address of the request's first byte, u64.
    pub const VA: Field = 16..24;
    /// Length of the whole request's data, u32.
    pub const TOTAL_LEN: Field = 24..28;
    /// Offset of this packet's payload within the request, u32.
    pub const OFFSET: Field = 28..32;
    /// This packet's payload length, u16.
    pub const PAYLOAD_LEN: Field = 32..34;
    /// Session id issued by `OpenSession` (0 = none), u16.
    pub const SESSION: Field = 34..36;
    /// Boot epoch of the board the session was opened in, u32.
    pub const EPOCH: Field = 36..40;
    /// Session key (requests; 0 in responses), u64.
    pub const KEY: Field = 40..48;
    /// Acknowledgement watermark (requests; 0 in responses), u32.
    pub const ACK: Field = 48..52;
    /// CRC32C over header and payload, u32.
    pub const CRC: Field = 52..56;
}

wire_enum! {
    /// What a packet asks for or answers. Responses are the request's value
    /// with the top bit set ([`Opcode::response`]); `Nack` answers a packet that
    /// failed its integrity check.
    pub enum Opcode: u8 as "clio.opcode" {
        /// Allocate a VA range (slow path).
        Alloc = 0x01 => "ALLOC",
        /// Free a VA range (slow path).
        Free = 0x02 => "FREE",
        /// Read `total_len` bytes at `va`.
        Read = 0x03 => "READ",
        /// Write the payload at `va + offset`.
        Write = 0x04 => "WRITE",
        /// Test-and-set the 8-byte word at `va` (old value returned).
        TestAndSet = 0x05 => "TAS",
        /// Compare-and-swap the 8-byte word at `va`.
        CompareAndSwap = 0x06 => "CAS",
        /// Fetch-and-add on the 8-byte word at `va`.
        FetchAndAdd = 0x07 => "FAA",
        /// Acquire the lock word at `va` (test-and-set on the sync unit).
        Lock = 0x08 => "LOCK",
        /// Release the lock word at `va`.
        Unlock = 0x09 => "UNLOCK",
        /// Order: later requests of this PID wait until earlier ones finish.
        Fence = 0x0a => "FENCE",
        /// Extend path: follow a linked structure in remote memory.
        PointerChase = 0x0b => "POINTER_CHASE",
        /// Extend path: call an offload by id.
        OffloadCall = 0x0c => "OFFLOAD_CALL",
        /// Board identity and versions (needs no session; padded, see
        /// [`crate::payload::InfoResp::LEN`]).
        Info = 0x0d => "INFO",
        /// Open a session: a new address space, or join one whose session
        /// key the caller holds (slow path; needs no session).
        OpenSession = 0x0e => "OPEN_SESSION",
        /// Close the request's own session (slow path).
        CloseSession = 0x0f => "CLOSE_SESSION",
        /// Response to [`Opcode::Alloc`].
        AllocResp = 0x81 => "ALLOC_RESP",
        /// Response to [`Opcode::Free`].
        FreeResp = 0x82 => "FREE_RESP",
        /// Response to [`Opcode::Read`], carrying data.
        ReadResp = 0x83 => "READ_RESP",
        /// Response to [`Opcode::Write`] (the ACK of one packet).
        WriteResp = 0x84 => "WRITE_RESP",
        /// Response to [`Opcode::TestAndSet`].
        TestAndSetResp = 0x85 => "TAS_RESP",
        /// Response to [`Opcode::CompareAndSwap`].
        CompareAndSwapResp = 0x86 => "CAS_RESP",
        /// Response to [`Opcode::FetchAndAdd`].
        FetchAndAddResp = 0x87 => "FAA_RESP",
        /// Response to [`Opcode::Lock`].
        LockResp = 0x88 => "LOCK_RESP",
        /// Response to [`Opcode::Unlock`].
        UnlockResp = 0x89 => "UNLOCK_RESP",
        /// Response to [`Opcode::Fence`].
        FenceResp = 0x8a => "FENCE_RESP",
        /// Response to [`Opcode::PointerChase`].
        PointerChaseResp = 0x8b => "POINTER_CHASE_RESP",
        /// Response to [`Opcode::OffloadCall`].
        OffloadCallResp = 0x8c => "OFFLOAD_CALL_RESP",
        /// Response to [`Opcode::Info`].
        InfoResp = 0x8d => "INFO_RESP",
        /// Response to [`Opcode::OpenSession`].
        OpenSessionResp = 0x8e => "OPEN_SESSION_RESP",
        /// Response to [`Opcode::CloseSession`].
        CloseSessionResp = 0x8f => "CLOSE_SESSION_RESP",
        /// The packet named by `req_id` and `offset` arrived corrupted;
        /// resend it (or retry the request).
        Nack = 0xff => "NACK",
    }
}

/// Bit that marks a response opcode.
pub const RESPONSE_BIT: u8 = 0x80;

impl Opcode {
    /// Whether this opcode is a response (or NACK).
    pub const fn is_response(self) -> bool {
        self.raw() & RESPONSE_BIT != 0
    }

    /// The response opcode answering this request (`None` for responses).
    pub const fn response(self) -> Option<Opcode> {
        if self.is_response() {
            return None;
        }
        match Opcode::parse(self.raw() | RESPONSE_BIT) {
            Ok(op) => Some(op),
            Err(_) => None,
        }
    }

    /// The request a response answers (`None` for requests and NACK).
    pub const fn request(self) -> Option<Opcode> {
        if !self.is_response() || matches!(self, Opcode::Nack) {
            return None;
        }
        match Opcode::parse(self.raw() & !RESPONSE_BIT) {
            Ok(op) => Some(op),
            Err(_) => None,
        }
    }

    /// Requests handled by the ARM slow path (forwarded over the RX ring).
    pub const fn is_slow_path(self) -> bool {
        matches!(
            self,
            Opcode::Alloc | Opcode::Free | Opcode::OpenSession | Opcode::CloseSession
        )
    }

    /// Requests that need a valid session (every request but `Info` and
    /// `OpenSession`, which is how a session is obtained).
    pub const fn needs_session(self) -> bool {
        !self.is_response() && !matches!(self, Opcode::Info | Opcode::OpenSession)
    }

    /// Requests handled by the extend path (offloads).
    pub const fn is_extend_path(self) -> bool {
        matches!(self, Opcode::PointerChase | Opcode::OffloadCall)
    }

    /// Non-idempotent requests, remembered in the dedup buffer so that a
    /// retry is answered rather than executed twice.
    pub const fn is_non_idempotent(self) -> bool {
        matches!(
            self,
            Opcode::Write
                | Opcode::TestAndSet
                | Opcode::CompareAndSwap
                | Opcode::FetchAndAdd
                | Opcode::Lock
                | Opcode::Unlock
                | Opcode::Alloc
                | Opcode::Free
                | Opcode::OffloadCall
        )
    }
}

wire_enum! {
    /// Outcome carried in the `status` byte of a response.
    pub enum Status: u8 as "clio.status" {
        /// Success.
        Ok = 0 => "OK",
        /// The PID has no session at this memory node.
        BadPid = 1 => "BAD_PID",
        /// The page's permissions forbid this access.
        Permission = 2 => "PERMISSION",
        /// The VA is not inside an allocated range of this PID.
        Unmapped = 3 => "UNMAPPED",
        /// No physical memory (or VA space) is left.
        OutOfMemory = 4 => "OUT_OF_MEMORY",
        /// The request's fields are invalid.
        Malformed = 5 => "MALFORMED",
        /// Temporarily unable (lock held, FIFO empty, ring full): retry later.
        Busy = 6 => "BUSY",
        /// Integrity check failed (carried by NACKs).
        Corrupt = 7 => "CORRUPT",
        /// Opcode or offload not supported by this board.
        Unsupported = 8 => "UNSUPPORTED",
        /// No open session matches the request's `session`, `key` and `pid`.
        BadSession = 9 => "BAD_SESSION",
        /// The request's `epoch` is not this boot's: the board restarted and
        /// every session of the earlier boot is gone (the answer carries the
        /// current epoch).
        Restarted = 10 => "RESTARTED",
        /// A per-session or per-address-space limit (memory, locks held,
        /// sessions) would be exceeded.
        OverQuota = 11 => "OVER_QUOTA",
        /// The request asks for more than this board can ever give in one
        /// request (an allocation larger than the data region, a response
        /// beyond the board's per-request bound): split it, do not retry it.
        TooLarge = 12 => "TOO_LARGE",
        /// `OffloadCall` names an offload id that no offload is registered
        /// under at this board (a board without an offload engine answers
        /// `Unsupported` instead).
        NoSuchOffload = 13 => "NO_SUCH_OFFLOAD",
        /// The offload faulted while serving the call (a memory access of
        /// its own address space failed, or it crashed); the board keeps
        /// serving, the call's effects up to the fault may remain.
        OffloadFault = 14 => "OFFLOAD_FAULT",
        /// The offload refused the call; the answer carries an
        /// `OffloadCallResp` whose `code` (defined by the offload) says why.
        OffloadRefused = 15 => "OFFLOAD_REFUSED",
        /// The VA's 1 GiB vRegion is no longer served by this memory node (a
        /// rack migrated it): nothing executed; ask the rack controller where
        /// the region lives now and send the request there.
        Moved = 16 => "MOVED",
    }
}

/// Bits of the `flags` byte.
pub mod flags {
    /// `Alloc`: place the range exactly at `va` if possible (the board may
    /// move it and says so in the response).
    pub const FIXED_VA: u8 = 0x01;
    /// Response: the range was placed away from the requested fixed VA.
    pub const MOVED: u8 = 0x02;
    /// Response: served from the dedup buffer (request was a duplicate).
    pub const DUPLICATE: u8 = 0x04;
    /// All defined bits.
    pub const ALL: u8 = FIXED_VA | MOVED | DUPLICATE;
}

/// Whether request id `a` comes before `b` in serial-number arithmetic
/// (RFC 1982 over `u32`): `b - a`, wrapped, is in `1..2^31`. Request ids
/// wrap, so the `ack` watermark is compared this way, never with `<`.
pub const fn serial_before(a: u32, b: u32) -> bool {
    let d = b.wrapping_sub(a);
    d != 0 && d < 0x8000_0000
}

/// Zero-copy view of a Clio packet in a byte buffer.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checking it; accessors may then panic on short
    /// buffers. Use [`Packet::new_checked`] on untrusted input.
    pub const fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wrap a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Packet { buffer };
        p.check_len()?;
        Ok(p)
    }

    /// Check that the buffer holds the header and the payload it declares.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::truncated("clio.header", HEADER_LEN, b.len()));
        }
        let need = HEADER_LEN + self.payload_len() as usize;
        if b.len() < need {
            return Err(Error::truncated("clio.payload_len", need, b.len()));
        }
        Ok(())
    }

    /// Consume the view.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// `version` field.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }
    /// Raw `opcode` field.
    pub fn opcode_raw(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE]
    }
    /// `flags` field.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Raw `status` field.
    pub fn status_raw(&self) -> u8 {
        self.buffer.as_ref()[field::STATUS]
    }
    /// `pid` field.
    pub fn pid(&self) -> u32 {
        be32(self.buffer.as_ref(), field::PID)
    }
    /// `req_id` field.
    pub fn req_id(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REQ_ID)
    }
    /// `retry_of` field.
    pub fn retry_of(&self) -> u32 {
        be32(self.buffer.as_ref(), field::RETRY_OF)
    }
    /// `va` field.
    pub fn va(&self) -> u64 {
        be64(self.buffer.as_ref(), field::VA)
    }
    /// `total_len` field.
    pub fn total_len(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TOTAL_LEN)
    }
    /// `offset` field.
    pub fn offset(&self) -> u32 {
        be32(self.buffer.as_ref(), field::OFFSET)
    }
    /// `payload_len` field.
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLOAD_LEN)
    }
    /// `session` field.
    pub fn session(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SESSION)
    }
    /// `epoch` field.
    pub fn epoch(&self) -> u32 {
        be32(self.buffer.as_ref(), field::EPOCH)
    }
    /// `key` field.
    pub fn key(&self) -> u64 {
        be64(self.buffer.as_ref(), field::KEY)
    }
    /// `ack` field.
    pub fn ack(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK)
    }
    /// `crc` field.
    pub fn crc(&self) -> u32 {
        be32(self.buffer.as_ref(), field::CRC)
    }

    /// The payload bytes (after [`Packet::check_len`]).
    pub fn payload(&self) -> &[u8] {
        let n = self.payload_len() as usize;
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + n]
    }

    /// CRC32C over header (crc field as zero) and payload.
    pub fn compute_crc(&self) -> u32 {
        // The header is copied with its CRC field zeroed so the check runs
        // over whole 8-byte words (the CRC field ends the header).
        let mut hdr = [0u8; HEADER_LEN];
        hdr[..field::CRC.start].copy_from_slice(&self.buffer.as_ref()[..field::CRC.start]);
        let mut c = Crc32c::new();
        c.update(&hdr);
        c.update(self.payload());
        c.finish()
    }

    /// Verify the integrity check.
    pub fn verify_crc(&self) -> Result<()> {
        let carried = self.crc();
        let computed = self.compute_crc();
        if carried != computed {
            return Err(Error::new(
                "clio.crc",
                ErrorKind::Checksum { carried, computed },
            ));
        }
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn b(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Set `version`.
    pub fn set_version(&mut self, v: u8) {
        self.b()[field::VERSION] = v;
    }
    /// Set `opcode`.
    pub fn set_opcode(&mut self, v: Opcode) {
        self.b()[field::OPCODE] = v.raw();
    }
    /// Set `flags`.
    pub fn set_flags(&mut self, v: u8) {
        self.b()[field::FLAGS] = v;
    }
    /// Set `status`.
    pub fn set_status(&mut self, v: Status) {
        self.b()[field::STATUS] = v.raw();
    }
    /// Set `pid`.
    pub fn set_pid(&mut self, v: u32) {
        set_be32(self.b(), field::PID, v)
    }
    /// Set `req_id`.
    pub fn set_req_id(&mut self, v: u32) {
        set_be32(self.b(), field::REQ_ID, v)
    }
    /// Set `retry_of`.
    pub fn set_retry_of(&mut self, v: u32) {
        set_be32(self.b(), field::RETRY_OF, v)
    }
    /// Set `va`.
    pub fn set_va(&mut self, v: u64) {
        set_be64(self.b(), field::VA, v)
    }
    /// Set `total_len`.
    pub fn set_total_len(&mut self, v: u32) {
        set_be32(self.b(), field::TOTAL_LEN, v)
    }
    /// Set `offset`.
    pub fn set_offset(&mut self, v: u32) {
        set_be32(self.b(), field::OFFSET, v)
    }
    /// Set `payload_len`.
    pub fn set_payload_len(&mut self, v: u16) {
        set_be16(self.b(), field::PAYLOAD_LEN, v)
    }
    /// Set `session`.
    pub fn set_session(&mut self, v: u16) {
        set_be16(self.b(), field::SESSION, v)
    }
    /// Set `epoch`.
    pub fn set_epoch(&mut self, v: u32) {
        set_be32(self.b(), field::EPOCH, v)
    }
    /// Set `key`.
    pub fn set_key(&mut self, v: u64) {
        set_be64(self.b(), field::KEY, v)
    }
    /// Set `ack`.
    pub fn set_ack(&mut self, v: u32) {
        set_be32(self.b(), field::ACK, v)
    }
    /// Set `crc`.
    pub fn set_crc(&mut self, v: u32) {
        set_be32(self.b(), field::CRC, v)
    }
    /// Mutable payload bytes (length from `payload_len`).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.payload_len() as usize;
        &mut self.b()[HEADER_LEN..HEADER_LEN + n]
    }
    /// Compute and store the CRC over header and payload.
    pub fn fill_crc(&mut self) {
        let c = self.compute_crc();
        self.set_crc(c);
    }
}

/// The header of a Clio packet as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// What the packet asks for or answers.
    pub opcode: Opcode,
    /// [`flags`] bits.
    pub flags: u8,
    /// Outcome (responses); `Ok` in requests.
    pub status: Status,
    /// Global process id (protection domain).
    pub pid: u32,
    /// Request id, unique per PID among in-flight requests; never 0.
    pub req_id: u32,
    /// The request id this one retries (0 = first attempt).
    pub retry_of: u32,
    /// VA of the request's first byte (alloc: hint or fixed address).
    pub va: u64,
    /// Length of the whole request's data.
    pub total_len: u32,
    /// Offset of this packet's payload within the request.
    pub offset: u32,
    /// This packet's payload length.
    pub payload_len: u16,
    /// Session id (0 = none: `Info`, `OpenSession`).
    pub session: u16,
    /// Boot epoch the session belongs to.
    pub epoch: u32,
    /// Session key (0 in responses).
    pub key: u64,
    /// Acknowledgement watermark: every request of the session whose first
    /// attempt's id is serially before `ack` has been answered to the
    /// client (0 = no information; 0 in responses).
    pub ack: u32,
}

impl Header {
    /// A first-attempt request: status `Ok`, no flags, offset 0, no
    /// payload, no session. Other fields by struct update (`..Header::request(..)`);
    /// `Header::encode` (feature `std`) sets `payload_len` from the
    /// payload.
    pub const fn request(opcode: Opcode, pid: u32, req_id: u32, va: u64, total_len: u32) -> Header {
        Header {
            opcode,
            flags: 0,
            status: Status::Ok,
            pid,
            req_id,
            retry_of: 0,
            va,
            total_len,
            offset: 0,
            payload_len: 0,
            session: 0,
            epoch: 0,
            key: 0,
            ack: 0,
        }
    }

    /// The header-only answer to a packet refused before it was trusted (failed its
    /// integrity check, did not parse, or was refused by a card): `pid`, `req_id`,
    /// `retry_of`, `offset` (which packet of a multi-packet request), `session` and
    /// `epoch` echoed; `va`, `total_len`, `payload_len`, `key`, `ack` and flags 0, so
    /// the answer itself always parses.
    pub fn refusal<T: AsRef<[u8]>>(p: &Packet<T>, opcode: Opcode, status: Status) -> Header {
        Header {
            opcode,
            flags: 0,
            status,
            pid: p.pid(),
            req_id: p.req_id(),
            retry_of: p.retry_of(),
            va: 0,
            total_len: 0,
            offset: p.offset(),
            payload_len: 0,
            session: p.session(),
            epoch: p.epoch(),
            key: 0,
            ack: 0,
        }
    }

    /// The same header carrying the credentials of a session.
    pub const fn with_session(self, session: u16, epoch: u32, key: u64) -> Header {
        Header {
            session,
            epoch,
            key,
            ..self
        }
    }

    /// Header (with `payload_len` taken from `payload`) and payload as one
    /// packet with its CRC filled in.
    #[cfg(feature = "std")]
    pub fn encode(&self, payload: &[u8]) -> Result<std::vec::Vec<u8>> {
        let payload_len = u16::try_from(payload.len()).map_err(|_| {
            Error::new(
                "clio.payload_len",
                ErrorKind::OutOfRange {
                    value: payload.len() as u64,
                    max: u16::MAX as u64,
                },
            )
        })?;
        let h = Header {
            payload_len,
            ..*self
        };
        let mut buf = std::vec![0u8; h.buffer_len()];
        h.emit_with_payload(&mut buf, payload)?;
        Ok(buf)
    }

    /// Parse and validate a header, without the checksum (see
    /// [`Header::parse_verified`]). The payload length is checked against the
    /// buffer, and `offset + payload_len` against `total_len` for the
    /// opcodes whose payload is a slice of the request's data.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Header> {
        p.check_len()?;
        if p.version() != VERSION {
            return Err(Error::new(
                "clio.version",
                ErrorKind::Unknown(p.version() as u64),
            ));
        }
        let opcode = Opcode::parse(p.opcode_raw())?;
        let status = Status::parse(p.status_raw())?;
        if p.flags() & !flags::ALL != 0 {
            return Err(Error::new(
                "clio.flags",
                ErrorKind::Reserved(p.flags() as u64),
            ));
        }
        if p.payload_len() as usize > MAX_PAYLOAD {
            return Err(Error::new(
                "clio.payload_len",
                ErrorKind::OutOfRange {
                    value: p.payload_len() as u64,
                    max: MAX_PAYLOAD as u64,
                },
            ));
        }
        let h = Header {
            opcode,
            flags: p.flags(),
            status,
            pid: p.pid(),
            req_id: p.req_id(),
            retry_of: p.retry_of(),
            va: p.va(),
            total_len: p.total_len(),
            offset: p.offset(),
            payload_len: p.payload_len(),
            session: p.session(),
            epoch: p.epoch(),
            key: p.key(),
            ack: p.ack(),
        };
        if h.carries_data_slice() {
            let end = h.offset as u64 + h.payload_len as u64;
            if end > h.total_len as u64 {
                return Err(Error::new("clio.offset", ErrorKind::Inconsistent));
            }
        }
        if h.va.checked_add(h.total_len as u64).is_none() {
            return Err(Error::new("clio.total_len", ErrorKind::Inconsistent));
        }
        Ok(h)
    }

    /// Parse and verify the CRC; corruption is reported on `clio.crc`.
    pub fn parse_verified<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Header> {
        p.check_len()?;
        p.verify_crc()?;
        Header::parse(p)
    }

    /// Whether the payload is a slice `[offset, offset + payload_len)` of
    /// the request's data (writes and read responses).
    pub const fn carries_data_slice(&self) -> bool {
        matches!(self.opcode, Opcode::Write | Opcode::ReadResp)
    }

    /// Bytes the header plus payload occupy.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }

    /// Write the header into `p` (the CRC is left for [`Packet::fill_crc`],
    /// since it covers the payload too).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_version(VERSION);
        p.set_opcode(self.opcode);
        p.set_flags(self.flags);
        p.set_status(self.status);
        p.set_pid(self.pid);
        p.set_req_id(self.req_id);
        p.set_retry_of(self.retry_of);
        p.set_va(self.va);
        p.set_total_len(self.total_len);
        p.set_offset(self.offset);
        p.set_payload_len(self.payload_len);
        p.set_session(self.session);
        p.set_epoch(self.epoch);
        p.set_key(self.key);
        p.set_ack(self.ack);
        p.set_crc(0);
    }

    /// Emit header and payload into `buf` and fill the CRC; returns the
    /// packet length. `payload.len()` must equal `payload_len`.
    pub fn emit_with_payload(&self, buf: &mut [u8], payload: &[u8]) -> Result<usize> {
        let len = self.buffer_len();
        if payload.len() != self.payload_len as usize {
            return Err(Error::new("clio.payload_len", ErrorKind::Inconsistent));
        }
        if buf.len() < len {
            return Err(Error::truncated("clio.buffer", len, buf.len()));
        }
        let mut p = Packet::new_unchecked(&mut buf[..len]);
        self.emit(&mut p);
        p.payload_mut().copy_from_slice(payload);
        p.fill_crc();
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            opcode: Opcode::Write,
            flags: 0,
            status: Status::Ok,
            pid: 0x0102_0304,
            req_id: 7,
            retry_of: 0,
            va: 0x0000_1234_5678_9000,
            total_len: 3000,
            offset: 1450,
            payload_len: 4,
            session: 0x0a0b,
            epoch: 0x1122_3344,
            key: 0x0102_0304_0506_0708,
            ack: 5,
        }
    }

    #[test]
    fn request_encode_round_trip() {
        let h = Header {
            retry_of: 4,
            ..Header::request(Opcode::Write, 7, 9, 0x1000, 3)
        };
        let b = h.encode(&[1, 2, 3]).unwrap();
        let p = Packet::new_checked(&b[..]).unwrap();
        let got = Header::parse_verified(&p).unwrap();
        assert_eq!(
            got,
            Header {
                payload_len: 3,
                ..h
            }
        );
        assert_eq!(p.payload(), &[1, 2, 3]);
        let big = std::vec![0u8; 70_000];
        assert_eq!(h.encode(&big).unwrap_err().field, "clio.payload_len");
    }

    #[test]
    fn golden_bytes() {
        let mut buf = [0u8; 60];
        let n = sample().emit_with_payload(&mut buf, b"abcd").unwrap();
        assert_eq!(n, 60);
        let expect_head: [u8; 52] = [
            2, 0x04, 0, 0, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x90,
            0x00, 0, 0, 0x0b, 0xb8, 0, 0, 0x05, 0xaa, 0, 4, 0x0a, 0x0b, 0x11, 0x22, 0x33, 0x44, 1,
            2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 5,
        ];
        assert_eq!(&buf[..52], &expect_head);
        // CRC32C of the header with a zero crc field followed by the payload.
        let mut zeroed = buf;
        zeroed[52..56].fill(0);
        assert_eq!(
            u32::from_be_bytes(buf[52..56].try_into().unwrap()),
            crate::crc32c(&zeroed)
        );
        assert_eq!(&buf[52..56], &[0x4e, 0xfd, 0xa1, 0x6f]);
        assert_eq!(&buf[56..], b"abcd");
    }

    #[test]
    fn round_trip_and_corruption() {
        let mut buf = [0u8; 60];
        sample().emit_with_payload(&mut buf, b"abcd").unwrap();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(Header::parse_verified(&p).unwrap(), sample());
        let mut bad = buf;
        bad[58] ^= 1;
        let e = Header::parse_verified(&Packet::new_unchecked(&bad[..])).unwrap_err();
        assert_eq!(e.field, "clio.crc");
    }

    #[test]
    fn each_field_error_is_named() {
        let mut buf = [0u8; 60];
        sample().emit_with_payload(&mut buf, b"abcd").unwrap();
        let err = |f: &dyn Fn(&mut [u8; 60])| {
            let mut b = buf;
            f(&mut b);
            Header::parse(&Packet::new_unchecked(&b[..]))
                .unwrap_err()
                .field
        };
        assert_eq!(err(&|b| b[0] = 9), "clio.version");
        assert_eq!(err(&|b| b[1] = 0x55), "clio.opcode");
        assert_eq!(err(&|b| b[2] = 0x80), "clio.flags");
        assert_eq!(err(&|b| b[3] = 200), "clio.status");
        assert_eq!(err(&|b| b[33] = 5), "clio.payload_len");
        assert_eq!(err(&|b| b[26] = 0), "clio.offset");
        let short = Header::parse(&Packet::new_unchecked(&buf[..10])).unwrap_err();
        assert_eq!(short.field, "clio.header");
        assert_eq!(short.kind, ErrorKind::Truncated { need: 56, have: 10 });
    }

    #[test]
    fn serial_order_wraps() {
        assert!(serial_before(1, 2));
        assert!(!serial_before(2, 2));
        assert!(!serial_before(3, 2));
        assert!(serial_before(u32::MAX, 0));
        assert!(serial_before(u32::MAX - 5, 3));
        assert!(!serial_before(3, u32::MAX - 5));
        assert!(!serial_before(0, 0x8000_0000));
    }

    #[test]
    fn session_rules() {
        assert!(!Opcode::Info.needs_session());
        assert!(!Opcode::OpenSession.needs_session());
        assert!(Opcode::CloseSession.needs_session());
        assert!(Opcode::Read.needs_session());
        assert!(!Opcode::ReadResp.needs_session());
        assert!(Opcode::OpenSession.is_slow_path());
        assert_eq!(
            Opcode::OpenSession.response(),
            Some(Opcode::OpenSessionResp)
        );
    }

    #[test]
    fn opcode_pairs() {
        for &op in Opcode::ALL {
            if let Some(r) = op.response() {
                assert_eq!(r.request(), Some(op));
            }
        }
        assert_eq!(Opcode::Read.response(), Some(Opcode::ReadResp));
        assert_eq!(Opcode::Nack.request(), None);
    }
}
