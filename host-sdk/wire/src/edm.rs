//! EDM (remote memory inside the Ethernet PHY) block formats.
//!
//! EDM carries remote-memory traffic as 66-bit PCS blocks between the 64b/66b encoder and
//! the scrambler (EDM §3.2). This module is the one definition of:
//!
//! * the 64b/66b block itself ([`Block66`], zero-copy view [`BlockView`]): a 2-bit sync
//!   header and a 64-bit payload whose least significant byte is the block type of a
//!   control block;
//! * the standard IEEE 802.3 Clause 49 control block types ([`block_type`]) and EDM's own
//!   block types /MS/ /MT/ /MST/ /N/ /G/, taken from values 802.3 leaves unused;
//! * the memory message header ([`MsgHeader`]) carried in /MS/ and /MST/, the demand
//!   notification ([`NotifyRepr`], /N/) and the grant ([`GrantRepr`], /G/);
//! * how a message (header plus body bytes) maps onto blocks ([`emit_message`],
//!   [`parse_message`], [`message_blocks`]).
//!
//! Bit numbering follows the RTL: payload byte `k` is bits `[8k+7:8k]` of the 64-bit
//! payload, byte 0 is transmitted first, and the sync header is the 2-bit value
//! [`SYNC_DATA`] (`2'b10`) or [`SYNC_CTRL`] (`2'b01`) with bit 0 transmitted first.
//!
//! # Message layout
//! A message is a 7-byte header followed by `body` bytes ([`MsgHeader::body_len`]):
//!
//! | blocks | layout |
//! |---|---|
//! | 1 (body ≤ 1) | /MST/: type, header\[0..6\], body\[0\] (or 0) |
//! | n ≥ 2 | /MS/: type, header\[0..6\], body\[0\]; n−2 × /MD/ (8 body bytes each, a data block); /MT/: type, up to 7 body bytes |
//!
//! So a message with `b ≥ 2` body bytes uses `1 + ceil(b / 8)` blocks: an 8-byte RREQ
//! (a 64-bit address) is 2 blocks and a 64-byte read response is 9 blocks. /MD/ is a
//! plain data block; the receiver knows it is memory data because it follows an /MS/
//! (memory messages are sent contiguously, never interleaved with frame blocks).

use core::fmt;

/// Sync header of a data block (`2'b10`, transmitted `0` then `1`).
pub const SYNC_DATA: u8 = 0b10;
/// Sync header of a control block (`2'b01`, transmitted `1` then `0`).
pub const SYNC_CTRL: u8 = 0b01;

/// Length of the byte form of a block: one sync-header byte plus 8 payload bytes.
pub const BLOCK_BYTES: usize = 9;
/// Length of the message header in bytes (payload bytes 1..=6 of /MS/ and /MST/).
pub const HEADER_BYTES: usize = 6;
/// Length of a remote memory address in a message body.
pub const ADDR_BYTES: usize = 8;
/// Largest body a message may carry (header `len` is 16 bits, plus the 8-byte address).
pub const MAX_BODY_BYTES: usize = u16::MAX as usize + ADDR_BYTES;

/// 8-bit block type field values of control blocks.
///
/// The standard values are IEEE 802.3 Clause 49 (Figure 49-7). EDM's values are unused
/// by 802.3 and each is at Hamming distance 3 from every standard value, so a single bit
/// error cannot turn a standard block into an EDM block or back.
pub mod block_type {
    /// All eight lanes are control characters (idle /I/ or error /E/): the IFG block.
    pub const IDLE: u8 = 0x1e;
    /// Control characters in lanes 0–3, ordered set in lane 4.
    pub const CTRL_OS4: u8 = 0x2d;
    /// Control characters in lanes 0–3, frame start in lane 4.
    pub const CTRL_START4: u8 = 0x33;
    /// Ordered set in lane 0, frame start in lane 4.
    pub const OS0_START4: u8 = 0x66;
    /// Ordered sets in lanes 0 and 4.
    pub const OS0_OS4: u8 = 0x55;
    /// Frame start in lane 0.
    pub const START0: u8 = 0x78;
    /// Ordered set in lane 0, control characters in lanes 4–7.
    pub const OS0_CTRL: u8 = 0x4b;
    /// Terminate in lane 0 (0 data bytes).
    pub const TERM0: u8 = 0x87;
    /// Terminate in lane 1 (1 data byte).
    pub const TERM1: u8 = 0x99;
    /// Terminate in lane 2 (2 data bytes).
    pub const TERM2: u8 = 0xaa;
    /// Terminate in lane 3 (3 data bytes).
    pub const TERM3: u8 = 0xb4;
    /// Terminate in lane 4 (4 data bytes).
    pub const TERM4: u8 = 0xcc;
    /// Terminate in lane 5 (5 data bytes).
    pub const TERM5: u8 = 0xd2;
    /// Terminate in lane 6 (6 data bytes).
    pub const TERM6: u8 = 0xe1;
    /// Terminate in lane 7 (7 data bytes).
    pub const TERM7: u8 = 0xff;
    /// EDM /MS/: start of a memory message of two or more blocks.
    pub const MS: u8 = 0x10;
    /// EDM /MT/: last block of a memory message of two or more blocks.
    pub const MT: u8 = 0x20;
    /// EDM /MST/: a whole memory message in one block.
    pub const MST: u8 = 0x40;
    /// EDM /N/: demand notification from a sender to the switch.
    pub const N: u8 = 0x04;
    /// EDM /G/: grant from the switch to a sender.
    pub const G: u8 = 0x08;
    /// All terminate types, index = number of data bytes before the terminate.
    pub const TERMS: [u8; 8] = [TERM0, TERM1, TERM2, TERM3, TERM4, TERM5, TERM6, TERM7];
}

/// 7-bit control character for idle (/I/) in control blocks.
pub const CTRL_CHAR_IDLE: u8 = 0x00;
/// 7-bit control character for error (/E/) in control blocks.
pub const CTRL_CHAR_ERROR: u8 = 0x1e;

/// Errors of the EDM formats; each names the field at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A buffer is shorter than the format needs.
    Truncated {
        /// What was being read or written.
        field: &'static str,
        /// Bytes (or blocks) needed.
        need: usize,
        /// Bytes (or blocks) available.
        have: usize,
    },
    /// The sync header is neither `2'b01` nor `2'b10`.
    BadSync {
        /// The 2-bit value found.
        value: u8,
    },
    /// A data block was found where a control block of type `expected` was required.
    NotControl {
        /// The block type required.
        expected: u8,
    },
    /// A control block has a block type not valid at this place.
    BadBlockType {
        /// The block type found.
        found: u8,
        /// What the position required.
        expected: &'static str,
    },
    /// A header or block field holds a value outside its range.
    BadField {
        /// Name of the field, e.g. `"msg.kind"`.
        field: &'static str,
        /// The value found.
        value: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { field, need, have } => {
                write!(f, "`{field}` truncated: need {need}, have {have}")
            }
            Error::BadSync { value } => write!(f, "block `sync` header {value:#04b} is invalid"),
            Error::NotControl { expected } => {
                write!(
                    f,
                    "expected a control block of `type` {expected:#04x}, found a data block"
                )
            }
            Error::BadBlockType { found, expected } => {
                write!(f, "block `type` {found:#04x} where {expected} was expected")
            }
            Error::BadField { field, value } => {
                write!(f, "field `{field}` = {value} is out of range")
            }
        }
    }
}

impl core::error::Error for Error {}

/// Result of EDM format operations.
pub type Result<T> = core::result::Result<T, Error>;

/// One 66-bit PCS block: 2-bit sync header and 64-bit payload (byte 0 in bits 7:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Block66 {
    /// Sync header, [`SYNC_DATA`] or [`SYNC_CTRL`] for valid blocks.
    pub sync: u8,
    /// The 64 payload bits; for a control block, bits 7:0 are the block type.
    pub payload: u64,
}

impl Block66 {
    /// The standard idle block (type 0x1e, eight /I/ characters): what the encoder emits in the IFG.
    pub const IDLE: Block66 = Block66 {
        sync: SYNC_CTRL,
        payload: block_type::IDLE as u64,
    };

    /// A data block with these 8 bytes (byte 0 transmitted first).
    pub const fn data(bytes: [u8; 8]) -> Block66 {
        Block66 {
            sync: SYNC_DATA,
            payload: u64::from_le_bytes(bytes),
        }
    }

    /// A control block of type `ty` with payload bytes 1..=7 from `rest`.
    pub const fn control(ty: u8, rest: [u8; 7]) -> Block66 {
        let b = [
            ty, rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6],
        ];
        Block66 {
            sync: SYNC_CTRL,
            payload: u64::from_le_bytes(b),
        }
    }

    /// True for a data sync header.
    pub const fn is_data(&self) -> bool {
        self.sync == SYNC_DATA
    }

    /// True for a control sync header.
    pub const fn is_control(&self) -> bool {
        self.sync == SYNC_CTRL
    }

    /// Block type of a control block (payload bits 7:0); `None` for other sync values.
    pub const fn block_type(&self) -> Option<u8> {
        if self.is_control() {
            Some(self.payload as u8)
        } else {
            None
        }
    }

    /// Payload bytes, byte 0 first.
    pub const fn bytes(&self) -> [u8; 8] {
        self.payload.to_le_bytes()
    }

    /// Byte form: sync header byte then 8 payload bytes.
    pub fn to_bytes(&self) -> [u8; BLOCK_BYTES] {
        let mut out = [0u8; BLOCK_BYTES];
        out[0] = self.sync;
        out[1..].copy_from_slice(&self.payload.to_le_bytes());
        out
    }

    /// The block as a 66-bit integer `{payload, sync}` (sync in bits 1:0), as the RTL vectors hold it.
    pub const fn to_u128(&self) -> u128 {
        ((self.payload as u128) << 2) | (self.sync as u128 & 0b11)
    }

    /// Inverse of [`Block66::to_u128`]; bits above 65 are ignored.
    pub const fn from_u128(v: u128) -> Block66 {
        Block66 {
            sync: (v & 0b11) as u8,
            payload: (v >> 2) as u64,
        }
    }

    /// What kind of block this is, judged from this block alone.
    pub fn class(&self) -> BlockClass {
        match self.sync {
            SYNC_DATA => BlockClass::Data,
            SYNC_CTRL => BlockClass::of_type(self.payload as u8),
            other => BlockClass::BadSync(other),
        }
    }
}

/// Classification of one block by its sync header and block type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockClass {
    /// A data block (/D/, or /MD/ inside a memory message).
    Data,
    /// Idle or error characters in all lanes (type 0x1e).
    Idle,
    /// A frame start (0x78, 0x33, 0x66).
    Start,
    /// A frame terminate with this many data bytes before it (0..=7).
    Terminate(u8),
    /// An ordered-set block without a start (0x2d, 0x55, 0x4b).
    OrderedSet,
    /// EDM /MS/.
    Ms,
    /// EDM /MT/.
    Mt,
    /// EDM /MST/.
    Mst,
    /// EDM /N/.
    Notify,
    /// EDM /G/.
    Grant,
    /// A control block whose type is neither standard nor EDM.
    Unknown(u8),
    /// The sync header is invalid (`2'b00` or `2'b11`).
    BadSync(u8),
}

impl BlockClass {
    /// Class of a control block with block type `ty`.
    pub fn of_type(ty: u8) -> BlockClass {
        use block_type::*;
        match ty {
            IDLE => BlockClass::Idle,
            START0 | CTRL_START4 | OS0_START4 => BlockClass::Start,
            CTRL_OS4 | OS0_OS4 | OS0_CTRL => BlockClass::OrderedSet,
            MS => BlockClass::Ms,
            MT => BlockClass::Mt,
            MST => BlockClass::Mst,
            N => BlockClass::Notify,
            G => BlockClass::Grant,
            t => match TERMS.iter().position(|&x| x == t) {
                Some(n) => BlockClass::Terminate(n as u8),
                None => BlockClass::Unknown(t),
            },
        }
    }

    /// True for EDM's own block classes (/MS/ /MT/ /MST/ /N/ /G/).
    pub fn is_edm(&self) -> bool {
        matches!(
            self,
            BlockClass::Ms
                | BlockClass::Mt
                | BlockClass::Mst
                | BlockClass::Notify
                | BlockClass::Grant
        )
    }
}

/// Zero-copy view of a block in its 9-byte form (sync byte, then payload bytes 0..7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockView<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BlockView<T> {
    /// Wrap a buffer without checks.
    pub const fn new_unchecked(buffer: T) -> Self {
        BlockView { buffer }
    }

    /// Wrap a buffer, checking its length and sync header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let v = BlockView { buffer };
        v.check_len()?;
        let s = v.sync();
        if s != SYNC_DATA && s != SYNC_CTRL {
            return Err(Error::BadSync { value: s });
        }
        Ok(v)
    }

    /// Check the buffer holds a whole block.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        if have < BLOCK_BYTES {
            return Err(Error::Truncated {
                field: "block",
                need: BLOCK_BYTES,
                have,
            });
        }
        Ok(())
    }

    /// Sync header (low 2 bits of byte 0).
    pub fn sync(&self) -> u8 {
        self.buffer.as_ref()[0] & 0b11
    }

    /// Payload as a 64-bit value.
    pub fn payload(&self) -> u64 {
        let b = self.buffer.as_ref();
        let mut p = [0u8; 8];
        p.copy_from_slice(&b[1..BLOCK_BYTES]);
        u64::from_le_bytes(p)
    }

    /// Block type (payload byte 0), meaningful for control blocks.
    pub fn block_type(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// The block as a value.
    pub fn block(&self) -> Block66 {
        Block66 {
            sync: self.sync(),
            payload: self.payload(),
        }
    }

    /// Consume the view, returning the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BlockView<T> {
    /// Set the sync header.
    pub fn set_sync(&mut self, sync: u8) {
        self.buffer.as_mut()[0] = sync & 0b11;
    }

    /// Set the payload.
    pub fn set_payload(&mut self, payload: u64) {
        self.buffer.as_mut()[1..BLOCK_BYTES].copy_from_slice(&payload.to_le_bytes());
    }
}

/// Kind of a memory message (EDM §2.3), header bits 2:0 of byte 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MsgKind {
    /// Read request: body is the 8-byte address; `len` is the number of bytes to read.
    Rreq = 0,
    /// Write request chunk: body is the 8-byte address then `len` data bytes.
    Wreq = 1,
    /// Atomic read-modify-write request: body is the address then the operands of `op`.
    Rmwreq = 2,
    /// Read response chunk: body is `len` data bytes.
    Rres = 3,
}

impl MsgKind {
    /// All kinds in code order.
    pub const ALL: [MsgKind; 4] = [MsgKind::Rreq, MsgKind::Wreq, MsgKind::Rmwreq, MsgKind::Rres];

    /// Decode the 3-bit field.
    pub fn from_code(code: u8) -> Result<MsgKind> {
        MsgKind::ALL
            .get(code as usize)
            .copied()
            .ok_or(Error::BadField {
                field: "msg.kind",
                value: code as u64,
            })
    }

    /// Short upper-case name.
    pub const fn name(&self) -> &'static str {
        match self {
            MsgKind::Rreq => "RREQ",
            MsgKind::Wreq => "WREQ",
            MsgKind::Rmwreq => "RMWREQ",
            MsgKind::Rres => "RRES",
        }
    }
}

/// Read-modify-write opcode (header bits 7:4 of byte 1). Operands and results are 64-bit
/// little-endian words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RmwOp {
    /// Compare-and-swap: operands `compare`, `swap`; result 1 byte, 1 if swapped.
    Cas = 0,
    /// Fetch-and-add: operand `addend`; result the old value.
    Faa = 1,
    /// Swap: operand `value`; result the old value.
    Swap = 2,
    /// Test-and-set: no operand; sets the word to 1; result 1 byte, the old value != 0.
    Tas = 3,
}

impl RmwOp {
    /// All opcodes in code order.
    pub const ALL: [RmwOp; 4] = [RmwOp::Cas, RmwOp::Faa, RmwOp::Swap, RmwOp::Tas];

    /// Decode the 4-bit field.
    pub fn from_code(code: u8) -> Result<RmwOp> {
        RmwOp::ALL
            .get(code as usize)
            .copied()
            .ok_or(Error::BadField {
                field: "msg.op",
                value: code as u64,
            })
    }

    /// Operand bytes following the address in the RMWREQ body.
    pub const fn operand_bytes(&self) -> usize {
        match self {
            RmwOp::Cas => 16,
            RmwOp::Faa | RmwOp::Swap => 8,
            RmwOp::Tas => 0,
        }
    }

    /// Bytes of the RRES this request produces: the switch's demand estimate (EDM §3.1.1).
    pub const fn response_bytes(&self) -> u16 {
        match self {
            RmwOp::Cas | RmwOp::Tas => 1,
            RmwOp::Faa | RmwOp::Swap => 8,
        }
    }
}

/// Header of a memory message: payload bytes 1..=6 of /MS/ or /MST/.
///
/// | byte | bits | field |
/// |---|---|---|
/// | 1 | 2:0 | `kind` ([`MsgKind`]) |
/// | 1 | 3 | `last`: last chunk of the message |
/// | 1 | 7:4 | `op` ([`RmwOp`] code for RMWREQ, else 0) |
/// | 2–3 | | `peer`: destination node from a host, source node from the switch |
/// | 4 | | `id`: message id, unique per (sender, destination) while in flight |
/// | 5–6 | | `len`: bytes to read (RREQ), data bytes (WREQ, RRES), result bytes (RMWREQ) |
///
/// Payload byte 7 is body byte 0. A memory node that cannot serve a read answers it NULL:
/// one RRES chunk per grant the switch issues for the request's length, each with no data
/// (`len` 0), only the last with `last` set; the requester completes the read as failed on
/// that last, empty chunk (an empty chunk without `last` carries nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MsgHeader {
    /// Message kind.
    pub kind: MsgKind,
    /// Last chunk of a multi-chunk WREQ/RRES (always set for RREQ and RMWREQ).
    pub last: bool,
    /// Read-modify-write opcode; must be `None` unless `kind` is RMWREQ.
    pub op: Option<RmwOp>,
    /// Peer node: the destination on host→switch links, the source on switch→host links.
    pub peer: u16,
    /// Message id.
    pub id: u8,
    /// Length field, meaning per `kind` (see the table).
    pub len: u16,
}

/// Bit offsets of header and control-block fields inside the 64-bit payload (used by the
/// SystemVerilog package generator and the RTL).
pub mod field {
    /// Block type: bits 7:0.
    pub const TYPE_LSB: u32 = 0;
    /// Header `kind`: bits 10:8.
    pub const MSG_KIND_LSB: u32 = 8;
    /// Header `last`: bit 11.
    pub const MSG_LAST_BIT: u32 = 11;
    /// Header `op`: bits 15:12.
    pub const MSG_OP_LSB: u32 = 12;
    /// Header `peer`: bits 31:16.
    pub const MSG_PEER_LSB: u32 = 16;
    /// Header `id`: bits 39:32.
    pub const MSG_ID_LSB: u32 = 32;
    /// Header `len`: bits 55:40.
    pub const MSG_LEN_LSB: u32 = 40;
    /// Body byte 0 in /MS/ and /MST/: bits 63:56.
    pub const MSG_BODY0_LSB: u32 = 56;
    /// /N/ and /G/ `peer`: bits 23:8.
    pub const CB_PEER_LSB: u32 = 8;
    /// /N/ and /G/ `id`: bits 31:24.
    pub const CB_ID_LSB: u32 = 24;
    /// /N/ `size` and /G/ `len`: bits 47:32.
    pub const CB_LEN_LSB: u32 = 32;
    /// /G/ `kind` (message kind granted): bits 55:48.
    pub const CB_KIND_LSB: u32 = 48;
}

impl MsgHeader {
    /// A read request for `len` bytes.
    pub const fn rreq(peer: u16, id: u8, len: u16) -> MsgHeader {
        MsgHeader {
            kind: MsgKind::Rreq,
            last: true,
            op: None,
            peer,
            id,
            len,
        }
    }

    /// Body length in bytes implied by the header.
    pub fn body_len(&self) -> usize {
        match self.kind {
            MsgKind::Rreq => ADDR_BYTES,
            MsgKind::Wreq => ADDR_BYTES + self.len as usize,
            MsgKind::Rmwreq => ADDR_BYTES + self.op.map_or(0, |o| o.operand_bytes()),
            MsgKind::Rres => self.len as usize,
        }
    }

    /// Number of blocks of the whole message on the wire.
    pub fn wire_blocks(&self) -> usize {
        message_blocks(self.body_len())
    }

    /// Check field consistency; the error names the field.
    pub fn check(&self) -> Result<()> {
        match (self.kind, self.op) {
            (MsgKind::Rmwreq, None) => {
                return Err(Error::BadField {
                    field: "msg.op",
                    value: 0xff,
                })
            }
            (MsgKind::Rmwreq, Some(op)) => {
                if self.len != op.response_bytes() {
                    return Err(Error::BadField {
                        field: "msg.len",
                        value: self.len as u64,
                    });
                }
                if !self.last {
                    return Err(Error::BadField {
                        field: "msg.last",
                        value: 0,
                    });
                }
            }
            (_, Some(op)) => {
                return Err(Error::BadField {
                    field: "msg.op",
                    value: op as u64,
                })
            }
            (MsgKind::Rreq, None) => {
                if self.len == 0 {
                    return Err(Error::BadField {
                        field: "msg.len",
                        value: 0,
                    });
                }
                if !self.last {
                    return Err(Error::BadField {
                        field: "msg.last",
                        value: 0,
                    });
                }
            }
            (MsgKind::Wreq, None) => {
                if self.len == 0 {
                    return Err(Error::BadField {
                        field: "msg.len",
                        value: 0,
                    });
                }
            }
            (MsgKind::Rres, None) => {}
        }
        Ok(())
    }

    /// Parse the header from an /MS/ or /MST/ payload (byte 0, the type, is not checked here).
    pub fn parse_payload(payload: u64) -> Result<MsgHeader> {
        let b = payload.to_le_bytes();
        let kind = MsgKind::from_code(b[1] & 0x7)?;
        let op_code = b[1] >> 4;
        let op = if kind == MsgKind::Rmwreq {
            Some(RmwOp::from_code(op_code)?)
        } else if op_code != 0 {
            return Err(Error::BadField {
                field: "msg.op",
                value: op_code as u64,
            });
        } else {
            None
        };
        let h = MsgHeader {
            kind,
            last: b[1] & 0x8 != 0,
            op,
            peer: u16::from_le_bytes([b[2], b[3]]),
            id: b[4],
            len: u16::from_le_bytes([b[5], b[6]]),
        };
        h.check()?;
        Ok(h)
    }

    /// The 6 header bytes (payload bytes 1..=6).
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let op = self.op.map_or(0, |o| o as u8);
        let p = self.peer.to_le_bytes();
        let l = self.len.to_le_bytes();
        [
            (self.kind as u8) | ((self.last as u8) << 3) | (op << 4),
            p[0],
            p[1],
            self.id,
            l[0],
            l[1],
        ]
    }
}

/// Number of blocks a message with `body` body bytes occupies: 1 for `body ≤ 1`
/// (/MST/), else `1 + ceil(body / 8)`.
pub const fn message_blocks(body: usize) -> usize {
    if body <= 1 {
        1
    } else {
        1 + body.div_ceil(8)
    }
}

/// Emit a message as blocks into `out`; returns the number of blocks written.
///
/// `body` must be exactly [`MsgHeader::body_len`] bytes.
pub fn emit_message(header: &MsgHeader, body: &[u8], out: &mut [Block66]) -> Result<usize> {
    header.check()?;
    let want = header.body_len();
    if body.len() != want {
        return Err(Error::BadField {
            field: "msg.body_len",
            value: body.len() as u64,
        });
    }
    let n = message_blocks(want);
    if out.len() < n {
        return Err(Error::Truncated {
            field: "blocks",
            need: n,
            have: out.len(),
        });
    }
    let h = header.to_bytes();
    let first = |ty: u8| {
        Block66::control(
            ty,
            [
                h[0],
                h[1],
                h[2],
                h[3],
                h[4],
                h[5],
                body.first().copied().unwrap_or(0),
            ],
        )
    };
    if n == 1 {
        out[0] = first(block_type::MST);
        return Ok(1);
    }
    out[0] = first(block_type::MS);
    let mut pos = 1;
    for slot in out.iter_mut().take(n - 1).skip(1) {
        let mut d = [0u8; 8];
        d.copy_from_slice(&body[pos..pos + 8]);
        *slot = Block66::data(d);
        pos += 8;
    }
    let mut t = [0u8; 7];
    let rest = &body[pos..];
    t[..rest.len()].copy_from_slice(rest);
    out[n - 1] = Block66::control(block_type::MT, t);
    Ok(n)
}

/// Parse a whole message from `blocks` (which must start with /MS/ or /MST/); copies the
/// body into `body_out` and returns the header, the body length and the blocks consumed.
pub fn parse_message(blocks: &[Block66], body_out: &mut [u8]) -> Result<(MsgHeader, usize, usize)> {
    let first = blocks.first().ok_or(Error::Truncated {
        field: "blocks",
        need: 1,
        have: 0,
    })?;
    let ty = match first.class() {
        BlockClass::Ms => block_type::MS,
        BlockClass::Mst => block_type::MST,
        BlockClass::Data => {
            return Err(Error::NotControl {
                expected: block_type::MS,
            })
        }
        BlockClass::BadSync(v) => return Err(Error::BadSync { value: v }),
        _ => {
            return Err(Error::BadBlockType {
                found: first.payload as u8,
                expected: "/MS/ or /MST/",
            })
        }
    };
    let header = MsgHeader::parse_payload(first.payload)?;
    let body = header.body_len();
    let n = message_blocks(body);
    if (n == 1) != (ty == block_type::MST) {
        return Err(Error::BadField {
            field: "msg.len",
            value: header.len as u64,
        });
    }
    if blocks.len() < n {
        return Err(Error::Truncated {
            field: "blocks",
            need: n,
            have: blocks.len(),
        });
    }
    if body_out.len() < body {
        return Err(Error::Truncated {
            field: "body",
            need: body,
            have: body_out.len(),
        });
    }
    let b0 = first.bytes()[7];
    if n == 1 {
        if body == 1 {
            body_out[0] = b0;
        }
        return Ok((header, body, 1));
    }
    body_out[0] = b0;
    let mut pos = 1;
    for blk in &blocks[1..n - 1] {
        match blk.class() {
            BlockClass::Data => {}
            BlockClass::BadSync(v) => return Err(Error::BadSync { value: v }),
            _ => {
                return Err(Error::BadBlockType {
                    found: blk.payload as u8,
                    expected: "/MD/",
                })
            }
        }
        body_out[pos..pos + 8].copy_from_slice(&blk.bytes());
        pos += 8;
    }
    let last = &blocks[n - 1];
    match last.class() {
        BlockClass::Mt => {}
        BlockClass::Data => {
            return Err(Error::NotControl {
                expected: block_type::MT,
            })
        }
        BlockClass::BadSync(v) => return Err(Error::BadSync { value: v }),
        _ => {
            return Err(Error::BadBlockType {
                found: last.payload as u8,
                expected: "/MT/",
            })
        }
    }
    let rest = body - pos;
    body_out[pos..body].copy_from_slice(&last.bytes()[1..1 + rest]);
    Ok((header, body, n))
}

/// A demand notification (/N/): the sender wants to send a WREQ of `size` bytes to `peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NotifyRepr {
    /// Destination node of the message (the source port is implied by the ingress port).
    pub peer: u16,
    /// Message id of the WREQ.
    pub id: u8,
    /// Data bytes of the WREQ (the demand).
    pub size: u16,
}

impl NotifyRepr {
    /// Parse from a control block of type /N/.
    pub fn parse(block: &Block66) -> Result<NotifyRepr> {
        expect_type(block, block_type::N, "/N/")?;
        let b = block.bytes();
        let size = u16::from_le_bytes([b[4], b[5]]);
        if size == 0 {
            return Err(Error::BadField {
                field: "notify.size",
                value: 0,
            });
        }
        Ok(NotifyRepr {
            peer: u16::from_le_bytes([b[1], b[2]]),
            id: b[3],
            size,
        })
    }

    /// Emit as an /N/ block.
    pub fn emit(&self) -> Block66 {
        let p = self.peer.to_le_bytes();
        let s = self.size.to_le_bytes();
        Block66::control(block_type::N, [p[0], p[1], self.id, s[0], s[1], 0, 0])
    }
}

/// A grant (/G/): the receiver may send the next `len` bytes of message (`kind`, `peer`, `id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrantRepr {
    /// Destination node of the granted message.
    pub peer: u16,
    /// Message id (the WREQ's own id, or the id of the RREQ an RRES answers).
    pub id: u8,
    /// Bytes granted (one chunk).
    pub len: u16,
    /// Kind of the granted message: [`MsgKind::Wreq`] or [`MsgKind::Rres`].
    pub kind: MsgKind,
}

impl GrantRepr {
    /// Parse from a control block of type /G/.
    pub fn parse(block: &Block66) -> Result<GrantRepr> {
        expect_type(block, block_type::G, "/G/")?;
        let b = block.bytes();
        let kind = MsgKind::from_code(b[6]).map_err(|_| Error::BadField {
            field: "grant.kind",
            value: b[6] as u64,
        })?;
        if !matches!(kind, MsgKind::Wreq | MsgKind::Rres) {
            return Err(Error::BadField {
                field: "grant.kind",
                value: b[6] as u64,
            });
        }
        let len = u16::from_le_bytes([b[4], b[5]]);
        if len == 0 {
            return Err(Error::BadField {
                field: "grant.len",
                value: 0,
            });
        }
        Ok(GrantRepr {
            peer: u16::from_le_bytes([b[1], b[2]]),
            id: b[3],
            len,
            kind,
        })
    }

    /// Emit as a /G/ block.
    pub fn emit(&self) -> Block66 {
        let p = self.peer.to_le_bytes();
        let l = self.len.to_le_bytes();
        Block66::control(
            block_type::G,
            [p[0], p[1], self.id, l[0], l[1], self.kind as u8, 0],
        )
    }
}

fn expect_type(block: &Block66, ty: u8, name: &'static str) -> Result<()> {
    match block.class() {
        BlockClass::Data => Err(Error::NotControl { expected: ty }),
        BlockClass::BadSync(v) => Err(Error::BadSync { value: v }),
        _ if block.payload as u8 == ty => Ok(()),
        _ => Err(Error::BadBlockType {
            found: block.payload as u8,
            expected: name,
        }),
    }
}

/// The SystemVerilog package `edm_pkg` with every constant of this module, as the RTL
/// under `ip/edm/rtl/edm_pkg.sv` must hold it.
#[cfg(feature = "std")]
pub fn sv_package() -> std::string::String {
    use core::fmt::Write;
    use std::string::String;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// edm_pkg: EDM 64b/66b block types and message field offsets."
    );
    let _ = writeln!(
        s,
        "// GENERATED from clio-wire (host-sdk/wire/src/edm.rs); do not edit."
    );
    let _ = writeln!(
        s,
        "// Regenerate: cargo run -p edm --bin edm-report -- --write-pkg ip/edm/rtl/edm_pkg.sv"
    );
    let _ = writeln!(s, "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n/* verilator lint_off UNUSEDPARAM */\npackage edm_pkg;\n");
    let _ = writeln!(
        s,
        "    localparam logic [1:0] SYNC_DATA = 2'b{SYNC_DATA:02b};"
    );
    let _ = writeln!(
        s,
        "    localparam logic [1:0] SYNC_CTRL = 2'b{SYNC_CTRL:02b};\n"
    );
    let types: [(&str, u8); 20] = {
        use block_type::*;
        [
            ("IDLE", IDLE),
            ("CTRL_OS4", CTRL_OS4),
            ("CTRL_START4", CTRL_START4),
            ("OS0_START4", OS0_START4),
            ("OS0_OS4", OS0_OS4),
            ("START0", START0),
            ("OS0_CTRL", OS0_CTRL),
            ("TERM0", TERM0),
            ("TERM1", TERM1),
            ("TERM2", TERM2),
            ("TERM3", TERM3),
            ("TERM4", TERM4),
            ("TERM5", TERM5),
            ("TERM6", TERM6),
            ("TERM7", TERM7),
            ("MS", MS),
            ("MT", MT),
            ("MST", MST),
            ("N", N),
            ("G", G),
        ]
    };
    for (name, v) in types {
        let _ = writeln!(s, "    localparam logic [7:0] BT_{name:<11} = 8'h{v:02x};");
    }
    let _ = writeln!(s);
    for k in MsgKind::ALL {
        let _ = writeln!(
            s,
            "    localparam logic [2:0] MSG_KIND_{:<6} = 3'd{};",
            k.name(),
            k as u8
        );
    }
    for o in RmwOp::ALL {
        let _ = writeln!(
            s,
            "    localparam logic [3:0] RMW_OP_{:<4} = 4'd{}; // operands {} B, result {} B",
            std::format!("{o:?}").to_uppercase(),
            o as u8,
            o.operand_bytes(),
            o.response_bytes()
        );
    }
    let _ = writeln!(s);
    let fields: [(&str, u32); 13] = {
        use field::*;
        [
            ("TYPE_LSB", TYPE_LSB),
            ("MSG_KIND_LSB", MSG_KIND_LSB),
            ("MSG_LAST_BIT", MSG_LAST_BIT),
            ("MSG_OP_LSB", MSG_OP_LSB),
            ("MSG_PEER_LSB", MSG_PEER_LSB),
            ("MSG_ID_LSB", MSG_ID_LSB),
            ("MSG_LEN_LSB", MSG_LEN_LSB),
            ("MSG_BODY0_LSB", MSG_BODY0_LSB),
            ("CB_PEER_LSB", CB_PEER_LSB),
            ("CB_ID_LSB", CB_ID_LSB),
            ("CB_LEN_LSB", CB_LEN_LSB),
            ("CB_KIND_LSB", CB_KIND_LSB),
            ("ADDR_BYTES", ADDR_BYTES as u32),
        ]
    };
    for (name, v) in fields {
        let _ = writeln!(s, "    localparam int {name:<13} = {v};");
    }
    let _ = writeln!(s);
    s.push_str(&crate::edm_clio::sv_constants());
    let _ = writeln!(
        s,
        "\nendpackage\n/* verilator lint_on UNUSEDPARAM */\n\n`resetall"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(h: MsgHeader, body: &[u8]) {
        let mut blocks = [Block66::default(); 64];
        let n = emit_message(&h, body, &mut blocks).unwrap();
        assert_eq!(n, h.wire_blocks());
        let mut out = [0u8; 512];
        let (h2, len, used) = parse_message(&blocks[..n], &mut out).unwrap();
        assert_eq!((h2, len, used), (h, body.len(), n));
        assert_eq!(&out[..len], body);
    }

    #[test]
    fn rreq_is_two_blocks_and_rres64_nine() {
        let h = MsgHeader::rreq(5, 7, 64);
        assert_eq!(h.wire_blocks(), 2);
        roundtrip(h, &0x1122_3344_5566_7788u64.to_le_bytes());
        let r = MsgHeader {
            kind: MsgKind::Rres,
            last: true,
            op: None,
            peer: 9,
            id: 7,
            len: 64,
        };
        assert_eq!(r.wire_blocks(), 9);
        let body: [u8; 64] = core::array::from_fn(|i| i as u8);
        roundtrip(r, &body);
    }

    #[test]
    fn all_body_lengths_roundtrip() {
        let data: [u8; 300] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for len in 0..=200u16 {
            let r = MsgHeader {
                kind: MsgKind::Rres,
                last: len % 2 == 0,
                op: None,
                peer: 511,
                id: 255,
                len,
            };
            roundtrip(r, &data[..len as usize]);
        }
        for len in 1..=100u16 {
            let w = MsgHeader {
                kind: MsgKind::Wreq,
                last: true,
                op: None,
                peer: 3,
                id: 1,
                len,
            };
            roundtrip(w, &data[..8 + len as usize]);
        }
        for op in RmwOp::ALL {
            let h = MsgHeader {
                kind: MsgKind::Rmwreq,
                last: true,
                op: Some(op),
                peer: 1,
                id: 2,
                len: op.response_bytes(),
            };
            roundtrip(h, &data[..8 + op.operand_bytes()]);
        }
    }

    #[test]
    fn mst_used_for_tiny_bodies() {
        let r = MsgHeader {
            kind: MsgKind::Rres,
            last: true,
            op: None,
            peer: 1,
            id: 1,
            len: 1,
        };
        let mut b = [Block66::default(); 2];
        assert_eq!(emit_message(&r, &[1], &mut b).unwrap(), 1);
        assert_eq!(b[0].class(), BlockClass::Mst);
    }

    #[test]
    fn errors_name_fields() {
        let mut b = [Block66::default(); 4];
        let bad = MsgHeader {
            kind: MsgKind::Rreq,
            last: true,
            op: None,
            peer: 1,
            id: 1,
            len: 0,
        };
        assert_eq!(
            emit_message(&bad, &[0; 8], &mut b),
            Err(Error::BadField {
                field: "msg.len",
                value: 0
            })
        );
        let h = MsgHeader::rreq(1, 1, 8);
        assert!(matches!(
            emit_message(&h, &[0; 7], &mut b),
            Err(Error::BadField {
                field: "msg.body_len",
                ..
            })
        ));
        let n = emit_message(&h, &[0; 8], &mut b).unwrap();
        let mut out = [0u8; 16];
        assert_eq!(
            parse_message(&b[..n - 1], &mut out),
            Err(Error::Truncated {
                field: "blocks",
                need: 2,
                have: 1
            })
        );
        let mut bad_kind = b;
        bad_kind[0].payload = (bad_kind[0].payload & !0x0700) | 0x0700;
        assert_eq!(
            parse_message(&bad_kind[..n], &mut out),
            Err(Error::BadField {
                field: "msg.kind",
                value: 7
            })
        );
        let mut no_mt = b;
        no_mt[1] = Block66::IDLE;
        assert!(matches!(
            parse_message(&no_mt[..n], &mut out),
            Err(Error::BadBlockType {
                expected: "/MT/",
                ..
            })
        ));
        let e = Error::BadField {
            field: "grant.kind",
            value: 9,
        };
        let mut s = [0u8; 64];
        let mut w = Buf(&mut s, 0);
        core::fmt::write(&mut w, format_args!("{e}")).unwrap();
        assert!(core::str::from_utf8(&w.0[..w.1])
            .unwrap()
            .contains("grant.kind"));
    }

    struct Buf<'a>(&'a mut [u8], usize);
    impl core::fmt::Write for Buf<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let b = s.as_bytes();
            self.0[self.1..self.1 + b.len()].copy_from_slice(b);
            self.1 += b.len();
            Ok(())
        }
    }

    #[test]
    fn notify_and_grant_roundtrip() {
        let n = NotifyRepr {
            peer: 300,
            id: 9,
            size: 4096,
        };
        assert_eq!(NotifyRepr::parse(&n.emit()), Ok(n));
        let g = GrantRepr {
            peer: 511,
            id: 200,
            len: 256,
            kind: MsgKind::Rres,
        };
        assert_eq!(GrantRepr::parse(&g.emit()), Ok(g));
        assert!(matches!(
            GrantRepr::parse(&n.emit()),
            Err(Error::BadBlockType {
                expected: "/G/",
                ..
            })
        ));
        let mut bad = g.emit();
        bad.payload = (bad.payload & !(0xff << 48)) | (0x02 << 48);
        assert!(matches!(
            GrantRepr::parse(&bad),
            Err(Error::BadField {
                field: "grant.kind",
                ..
            })
        ));
    }

    #[test]
    fn edm_types_are_unused_and_far_from_standard() {
        use block_type::*;
        let std_types = [
            IDLE,
            CTRL_OS4,
            CTRL_START4,
            OS0_START4,
            OS0_OS4,
            START0,
            OS0_CTRL,
            TERM0,
            TERM1,
            TERM2,
            TERM3,
            TERM4,
            TERM5,
            TERM6,
            TERM7,
        ];
        for e in [MS, MT, MST, N, G] {
            for s in std_types {
                assert!((e ^ s).count_ones() >= 3, "{e:#x} vs {s:#x}");
            }
            assert!(BlockClass::of_type(e).is_edm());
        }
    }

    #[test]
    fn view_and_u128_forms() {
        let g = GrantRepr {
            peer: 2,
            id: 3,
            len: 64,
            kind: MsgKind::Wreq,
        }
        .emit();
        let bytes = g.to_bytes();
        let v = BlockView::new_checked(&bytes[..]).unwrap();
        assert_eq!(v.block(), g);
        assert_eq!(v.block_type(), block_type::G);
        assert_eq!(Block66::from_u128(g.to_u128()), g);
        assert_eq!(
            BlockView::new_checked(&bytes[..8]).unwrap_err(),
            Error::Truncated {
                field: "block",
                need: 9,
                have: 8
            }
        );
        let mut bad = bytes;
        bad[0] = 0b11;
        assert_eq!(
            BlockView::new_checked(&bad[..]).unwrap_err(),
            Error::BadSync { value: 3 }
        );
    }
}
