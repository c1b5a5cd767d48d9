//! Fixed payloads of the control, atomic, extend-path and info packets.
//!
//! Each is a plain struct with `LEN`, `parse` and `emit`; multi-byte fields
//! are big-endian like the header. Data payloads of reads and writes are
//! raw bytes and have no struct. The 8-byte words the atomics act on are
//! stored little-endian in board memory (as the ARM and host CPUs see them).

use crate::error::bytes::{be16, be32, be64, set_be16, set_be32, set_be64};
use crate::{Error, ErrorKind, Result};

fn need(field: &'static str, buf: &[u8], len: usize) -> Result<()> {
    if buf.len() < len {
        return Err(Error::truncated(field, len, buf.len()));
    }
    Ok(())
}

/// Access permission bits of a VA range and of a PTE.
pub mod perms {
    /// Reads allowed.
    pub const READ: u8 = 0x1;
    /// Writes (and atomics) allowed.
    pub const WRITE: u8 = 0x2;
    /// Read and write.
    pub const RW: u8 = READ | WRITE;
    /// All defined bits.
    pub const ALL: u8 = RW;
}

/// Payload of an `Alloc` request. The VA hint (or fixed VA, with the
/// `FIXED_VA` flag) travels in the header's `va`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllocReq {
    /// Bytes requested (rounded up to whole pages by the board).
    pub size: u64,
    /// [`perms`] bits of the new range.
    pub perms: u8,
    /// log2 of the page size; 0 = the board's default page size.
    pub page_shift: u8,
}

/// Byte layout of [`AllocReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod alloc_req {
    use crate::Field;

    /// Bytes requested, u64.
    pub const SIZE: Field = 0..8;
    /// Permission bits.
    pub const PERMS: usize = 8;
    /// log2 of the page size.
    pub const PAGE_SHIFT: usize = 9;
    /// Reserved, zero.
    pub const RESERVED_16: Field = 10..12;
    /// Reserved, zero.
    pub const RESERVED_32: Field = 12..16;
}

impl AllocReq {
    /// Encoded length.
    pub const LEN: usize = 16;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("alloc.payload", b, Self::LEN)?;
        let perms = b[alloc_req::PERMS];
        if perms & !perms::ALL != 0 || perms == 0 {
            return Err(Error::new("alloc.perms", ErrorKind::Unknown(perms as u64)));
        }
        let page_shift = b[alloc_req::PAGE_SHIFT];
        if page_shift != 0
            && !(crate::pte::MIN_PAGE_SHIFT..=crate::pte::MAX_PAGE_SHIFT).contains(&page_shift)
        {
            return Err(Error::new(
                "alloc.page_shift",
                ErrorKind::OutOfRange {
                    value: page_shift as u64,
                    max: crate::pte::MAX_PAGE_SHIFT as u64,
                },
            ));
        }
        let rsvd =
            be16(b, alloc_req::RESERVED_16) as u64 | (be32(b, alloc_req::RESERVED_32) as u64) << 16;
        if rsvd != 0 {
            return Err(Error::new("alloc.reserved", ErrorKind::Reserved(rsvd)));
        }
        Ok(AllocReq {
            size: be64(b, alloc_req::SIZE),
            perms,
            page_shift,
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, alloc_req::SIZE, self.size);
        b[alloc_req::PERMS] = self.perms;
        b[alloc_req::PAGE_SHIFT] = self.page_shift;
        set_be16(&mut b, alloc_req::RESERVED_16, 0);
        set_be32(&mut b, alloc_req::RESERVED_32, 0);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("alloc.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Payload of an `AllocResp`; the placed VA travels in the header's `va`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllocResp {
    /// Bytes actually reserved (whole pages).
    pub size: u64,
    /// How many candidate ranges were refused for bucket overflow.
    pub retries: u32,
}

/// Byte layout of [`AllocResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod alloc_resp {
    use crate::Field;

    /// Bytes allocated, u64.
    pub const SIZE: Field = 0..8;
    /// Placement retries, u32.
    pub const RETRIES: Field = 8..12;
}

impl AllocResp {
    /// Encoded length.
    pub const LEN: usize = 12;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("alloc_resp.payload", b, Self::LEN)?;
        Ok(AllocResp {
            size: be64(b, alloc_resp::SIZE),
            retries: be32(b, alloc_resp::RETRIES),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, alloc_resp::SIZE, self.size);
        set_be32(&mut b, alloc_resp::RETRIES, self.retries);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("alloc_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Payload of a `Free` request: the range `[va, va + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FreeReq {
    /// Bytes to free (must cover whole allocated ranges).
    pub size: u64,
}

/// Byte layout of [`FreeReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod free_req {
    use crate::Field;

    /// Bytes to free, u64.
    pub const SIZE: Field = 0..8;
}

impl FreeReq {
    /// Encoded length.
    pub const LEN: usize = 8;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("free.payload", b, Self::LEN)?;
        Ok(FreeReq {
            size: be64(b, free_req::SIZE),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, free_req::SIZE, self.size);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("free.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Operands of the atomics. `TestAndSet`, `Lock` and `Unlock` carry none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicArgs {
    /// Compare-and-swap: store `new` if the word equals `expected`.
    CompareAndSwap {
        /// Value the word must hold.
        expected: u64,
        /// Value stored on success.
        new: u64,
    },
    /// Fetch-and-add (wrapping).
    FetchAndAdd {
        /// Value added.
        addend: u64,
    },
}

/// Byte layout of [`AtomicArgs`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod atomic_args {
    use crate::Field;

    /// CAS: the expected value, u64.
    pub const CAS_EXPECTED: Field = 0..8;
    /// CAS: the value to store, u64.
    pub const CAS_NEW: Field = 8..16;
    /// FAA: the addend, u64.
    pub const FAA_ADDEND: Field = 0..8;
}

impl AtomicArgs {
    /// Encoded length of a CAS operand pair.
    pub const CAS_LEN: usize = 16;
    /// Encoded length of an FAA operand.
    pub const FAA_LEN: usize = 8;

    /// Parse the operands of a CAS.
    pub fn parse_cas(b: &[u8]) -> Result<Self> {
        need("cas.payload", b, Self::CAS_LEN)?;
        Ok(AtomicArgs::CompareAndSwap {
            expected: be64(b, atomic_args::CAS_EXPECTED),
            new: be64(b, atomic_args::CAS_NEW),
        })
    }
    /// Parse the operand of an FAA.
    pub fn parse_faa(b: &[u8]) -> Result<Self> {
        need("faa.payload", b, Self::FAA_LEN)?;
        Ok(AtomicArgs::FetchAndAdd {
            addend: be64(b, atomic_args::FAA_ADDEND),
        })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        let (bytes, n) = self.to_bytes();
        let name = match self {
            AtomicArgs::CompareAndSwap { .. } => "cas.payload",
            AtomicArgs::FetchAndAdd { .. } => "faa.payload",
        };
        need(name, b, n)?;
        b[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }
    /// The encoded bytes and how many of them are the payload (an emit
    /// that cannot fail).
    pub fn to_bytes(&self) -> ([u8; Self::CAS_LEN], usize) {
        let mut b = [0u8; Self::CAS_LEN];
        let n = match *self {
            AtomicArgs::CompareAndSwap { expected, new } => {
                set_be64(&mut b, atomic_args::CAS_EXPECTED, expected);
                set_be64(&mut b, atomic_args::CAS_NEW, new);
                Self::CAS_LEN
            }
            AtomicArgs::FetchAndAdd { addend } => {
                set_be64(&mut b, atomic_args::FAA_ADDEND, addend);
                Self::FAA_LEN
            }
        };
        (b, n)
    }
}

/// Payload of every atomic and lock response: the word's value before the
/// operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtomicResp {
    /// Old value of the word.
    pub old: u64,
}

/// Byte layout of [`AtomicResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod atomic_resp {
    use crate::Field;

    /// The old value, u64.
    pub const OLD: Field = 0..8;
}

impl AtomicResp {
    /// Encoded length.
    pub const LEN: usize = 8;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("atomic_resp.payload", b, Self::LEN)?;
        Ok(AtomicResp {
            old: be64(b, atomic_resp::OLD),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, atomic_resp::OLD, self.old);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("atomic_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Payload of a `PointerChase` request: walk a linked list that starts at the
/// header's `va`, comparing the 8-byte key at `key_offset` of every node
/// with `key` and following the 8-byte pointer at `next_offset` (0 ends the
/// list), at most `max_hops` nodes. The response returns the matching node's
/// VA and `value_len` bytes at `value_offset` of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChaseReq {
    /// Key searched for.
    pub key: u64,
    /// Offset of the key within a node.
    pub key_offset: u16,
    /// Offset of the next-node pointer within a node.
    pub next_offset: u16,
    /// Offset of the value within a node.
    pub value_offset: u16,
    /// Bytes of value returned.
    pub value_len: u16,
    /// Largest number of nodes visited.
    pub max_hops: u32,
}

/// Byte layout of [`ChaseReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod chase_req {
    use crate::Field;

    /// Key searched for, u64.
    pub const KEY: Field = 0..8;
    /// Offset of the key in a node, u16.
    pub const KEY_OFFSET: Field = 8..10;
    /// Offset of the next pointer, u16.
    pub const NEXT_OFFSET: Field = 10..12;
    /// Offset of the value, u16.
    pub const VALUE_OFFSET: Field = 12..14;
    /// Value bytes, u16.
    pub const VALUE_LEN: Field = 14..16;
    /// Hop limit, u32.
    pub const MAX_HOPS: Field = 16..20;
}

impl ChaseReq {
    /// Encoded length.
    pub const LEN: usize = 20;
    /// Largest value returned by one chase.
    pub const MAX_VALUE: u16 = 1024;
    /// Most nodes one chase may visit (`max_hops` is 1..=this).
    pub const MAX_HOPS: u32 = 4096;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("chase.payload", b, Self::LEN)?;
        let r = ChaseReq {
            key: be64(b, chase_req::KEY),
            key_offset: be16(b, chase_req::KEY_OFFSET),
            next_offset: be16(b, chase_req::NEXT_OFFSET),
            value_offset: be16(b, chase_req::VALUE_OFFSET),
            value_len: be16(b, chase_req::VALUE_LEN),
            max_hops: be32(b, chase_req::MAX_HOPS),
        };
        if r.value_len > Self::MAX_VALUE {
            return Err(Error::new(
                "chase.value_len",
                ErrorKind::OutOfRange {
                    value: r.value_len as u64,
                    max: Self::MAX_VALUE as u64,
                },
            ));
        }
        Ok(r)
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, chase_req::KEY, self.key);
        set_be16(&mut b, chase_req::KEY_OFFSET, self.key_offset);
        set_be16(&mut b, chase_req::NEXT_OFFSET, self.next_offset);
        set_be16(&mut b, chase_req::VALUE_OFFSET, self.value_offset);
        set_be16(&mut b, chase_req::VALUE_LEN, self.value_len);
        set_be32(&mut b, chase_req::MAX_HOPS, self.max_hops);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("chase.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Fixed part of a `PointerChaseResp`; the value bytes follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChaseResp {
    /// VA of the matching node (0 if not found).
    pub node_va: u64,
    /// Nodes visited.
    pub hops: u32,
    /// Whether the key was found.
    pub found: bool,
}

/// Byte layout of [`ChaseResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod chase_resp {
    use crate::Field;

    /// VA of the last node visited, u64.
    pub const NODE_VA: Field = 0..8;
    /// Hops taken, u32.
    pub const HOPS: Field = 8..12;
    /// 1 if found, else 0; u32.
    pub const FOUND: Field = 12..16;
}

impl ChaseResp {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 16;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("chase_resp.payload", b, Self::LEN)?;
        let found = match be32(b, chase_resp::FOUND) {
            0 => false,
            1 => true,
            v => return Err(Error::new("chase_resp.found", ErrorKind::Unknown(v as u64))),
        };
        Ok(ChaseResp {
            node_va: be64(b, chase_resp::NODE_VA),
            hops: be32(b, chase_resp::HOPS),
            found,
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be64(&mut b, chase_resp::NODE_VA, self.node_va);
        set_be32(&mut b, chase_resp::HOPS, self.hops);
        set_be32(&mut b, chase_resp::FOUND, self.found as u32);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("chase_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Fixed part of an `OffloadCall`: which offload and which of its
/// operations; the operation's arguments (defined by the offload) follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadCallReq {
    /// Offload id registered on the board.
    pub offload: u32,
    /// Operation of that offload.
    pub op: u16,
}

/// Byte layout of [`OffloadCallReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod offload_call_req {
    use crate::Field;

    /// Offload id, u32.
    pub const OFFLOAD: Field = 0..4;
    /// Operation, u16.
    pub const OP: Field = 4..6;
    /// Reserved, zero.
    pub const RESERVED: Field = 6..8;
}

impl OffloadCallReq {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 8;
    /// Parse the fixed part; returns it and the arguments after it.
    pub fn parse_with_args(b: &[u8]) -> Result<(Self, &[u8])> {
        Ok((Self::parse(b)?, &b[Self::LEN..]))
    }
    /// Parse the fixed part; the reserved bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("offload_call.payload", b, Self::LEN)?;
        let rsvd = be16(b, offload_call_req::RESERVED);
        if rsvd != 0 {
            return Err(Error::new(
                "offload_call.reserved",
                ErrorKind::Reserved(rsvd as u64),
            ));
        }
        Ok(OffloadCallReq {
            offload: be32(b, offload_call_req::OFFLOAD),
            op: be16(b, offload_call_req::OP),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be32(&mut b, offload_call_req::OFFLOAD, self.offload);
        set_be16(&mut b, offload_call_req::OP, self.op);
        set_be16(&mut b, offload_call_req::RESERVED, 0);
        b
    }
    /// Emit the fixed part; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_call.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Fixed part of an `OffloadCallResp` with status `Ok` or `OffloadRefused`;
/// the operation's result bytes (defined by the offload) follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadCallResp {
    /// 0 with status `Ok`; with `OffloadRefused`, the offload's reason
    /// (never 0).
    pub code: u16,
}

/// Byte layout of [`OffloadCallResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod offload_call_resp {
    use crate::Field;

    /// Result code, u16.
    pub const CODE: Field = 0..2;
    /// Reserved, zero.
    pub const RESERVED: Field = 2..4;
}

impl OffloadCallResp {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 4;
    /// Parse the fixed part; the reserved bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("offload_call_resp.payload", b, Self::LEN)?;
        let rsvd = be16(b, offload_call_resp::RESERVED);
        if rsvd != 0 {
            return Err(Error::new(
                "offload_call_resp.reserved",
                ErrorKind::Reserved(rsvd as u64),
            ));
        }
        Ok(OffloadCallResp {
            code: be16(b, offload_call_resp::CODE),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be16(&mut b, offload_call_resp::CODE, self.code);
        set_be16(&mut b, offload_call_resp::RESERVED, 0);
        b
    }
    /// Emit the fixed part; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_call_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Payload of an `OpenSession` request.
///
/// `join_session == 0` opens a new address space (the board assigns the
/// PID; the header's `pid` must be 0). Otherwise the caller joins the
/// address space of the live session `join_session`, proving the right to
/// with that session's key (the owner hands its session id and key out);
/// the header's `pid` must be that session's PID. The trailing zero pad makes
/// the request as long as its answer (no amplification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenSessionReq {
    /// Session whose address space to join (0 = a new address space).
    pub join_session: u16,
    /// Key of `join_session` (0 when opening a new address space).
    pub join_key: u64,
}

/// Byte layout of [`OpenSessionReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod open_session_req {
    use crate::Field;

    /// Session to join, u16.
    pub const JOIN_SESSION: Field = 0..2;
    /// Reserved, zero.
    pub const RESERVED_16: Field = 2..4;
    /// Reserved, zero.
    pub const RESERVED_32: Field = 4..8;
    /// Its key, u64.
    pub const JOIN_KEY: Field = 8..16;
    /// Zero pad to the answer's length.
    pub const PAD: Field = 16..32;
}

impl OpenSessionReq {
    /// Encoded length (the exact payload length an `OpenSession` carries).
    pub const LEN: usize = 32;
    /// Parse; reserved and pad bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("open_session.payload", b, Self::LEN)?;
        let r = OpenSessionReq {
            join_session: be16(b, open_session_req::JOIN_SESSION),
            join_key: be64(b, open_session_req::JOIN_KEY),
        };
        if be16(b, open_session_req::RESERVED_16) != 0
            || be32(b, open_session_req::RESERVED_32) != 0
            || b[open_session_req::PAD].iter().any(|&x| x != 0)
        {
            return Err(Error::new("open_session.reserved", ErrorKind::Reserved(0)));
        }
        if r.join_session == 0 && r.join_key != 0 {
            return Err(Error::new("open_session.join_key", ErrorKind::Inconsistent));
        }
        Ok(r)
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be16(&mut b, open_session_req::JOIN_SESSION, self.join_session);
        set_be64(&mut b, open_session_req::JOIN_KEY, self.join_key);
        b
    }
    /// Emit (pad included); returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("open_session.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Payload of an `OpenSessionResp` with status `Ok`: the session's
/// credentials and limits. The client puts `session`, `epoch` and `key` in
/// every later request and `pid` in its `pid` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenSessionResp {
    /// Session id (1..sessions).
    pub session: u16,
    /// Address space (process id) of the session.
    pub pid: u32,
    /// The session key: unguessable, from the board's per-boot secret.
    pub key: u64,
    /// This boot's epoch.
    pub epoch: u32,
    /// Dedup records the session may hold (its non-idempotent requests in
    /// flight and not yet acknowledged).
    pub dedup_quota: u16,
    /// Locks the session may hold at once.
    pub lock_quota: u16,
    /// Pages of the default size the address space may allocate.
    pub mem_quota_pages: u32,
}

/// Byte layout of [`OpenSessionResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod open_session_resp {
    use crate::Field;

    /// Session id, u16.
    pub const SESSION: Field = 0..2;
    /// Reserved, zero.
    pub const RESERVED_16: Field = 2..4;
    /// PID, u32.
    pub const PID: Field = 4..8;
    /// Session key, u64.
    pub const KEY: Field = 8..16;
    /// Boot epoch, u32.
    pub const EPOCH: Field = 16..20;
    /// Dedup records, u16.
    pub const DEDUP_QUOTA: Field = 20..22;
    /// Locks, u16.
    pub const LOCK_QUOTA: Field = 22..24;
    /// Pages of VA, u32.
    pub const MEM_QUOTA_PAGES: Field = 24..28;
    /// Reserved, zero.
    pub const RESERVED_32: Field = 28..32;
}

impl OpenSessionResp {
    /// Encoded length.
    pub const LEN: usize = 32;
    /// Parse; reserved bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("open_session_resp.payload", b, Self::LEN)?;
        if be16(b, open_session_resp::RESERVED_16) != 0
            || be32(b, open_session_resp::RESERVED_32) != 0
        {
            return Err(Error::new(
                "open_session_resp.reserved",
                ErrorKind::Reserved(0),
            ));
        }
        Ok(OpenSessionResp {
            session: be16(b, open_session_resp::SESSION),
            pid: be32(b, open_session_resp::PID),
            key: be64(b, open_session_resp::KEY),
            epoch: be32(b, open_session_resp::EPOCH),
            dedup_quota: be16(b, open_session_resp::DEDUP_QUOTA),
            lock_quota: be16(b, open_session_resp::LOCK_QUOTA),
            mem_quota_pages: be32(b, open_session_resp::MEM_QUOTA_PAGES),
        })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be16(&mut b, open_session_resp::SESSION, self.session);
        set_be32(&mut b, open_session_resp::PID, self.pid);
        set_be64(&mut b, open_session_resp::KEY, self.key);
        set_be32(&mut b, open_session_resp::EPOCH, self.epoch);
        set_be16(&mut b, open_session_resp::DEDUP_QUOTA, self.dedup_quota);
        set_be16(&mut b, open_session_resp::LOCK_QUOTA, self.lock_quota);
        set_be32(
            &mut b,
            open_session_resp::MEM_QUOTA_PAGES,
            self.mem_quota_pages,
        );
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("open_session_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// Version of the fast-path behaviour (major << 16 | minor << 8 | patch): the
/// one the model in `ip/fastpath` specifies and the RTL is co-simulated
/// against. Every fast path (model, Verilated RTL, bitstream) reports it as
/// [`InfoResp::rtl_version`].
pub const FASTPATH_VERSION: u32 = 0x0002_0000;

/// Payload of an `InfoResp`: who the board is and what it runs, so a host
/// can compare it against a build manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InfoResp {
    /// Board name, NUL-padded ASCII (e.g. `zcu106`).
    pub board: [u8; 16],
    /// Firmware version (major << 16 | minor << 8 | patch).
    pub firmware_version: u32,
    /// RTL version, same encoding.
    pub rtl_version: u32,
    /// Build id of the firmware image.
    pub build_id: u64,
    /// Hash of the resolved board configuration.
    pub config_hash: u64,
    /// Board DRAM bytes.
    pub dram_bytes: u64,
    /// Largest payload per packet the board accepts.
    pub mtu: u16,
    /// log2 of the default page size.
    pub page_shift: u8,
    /// Page-table slots per bucket.
    pub slots_per_bucket: u8,
    /// TLB entries.
    pub tlb_entries: u32,
    /// This boot's epoch (changes at every board restart).
    pub epoch: u32,
    /// Session-table entries (session ids `1..sessions`).
    pub sessions: u16,
    /// Largest response one request may produce, in KiB (bytes 62..64;
    /// `network.max_response_bytes` / 1024). A READ whose `total_len` is
    /// above it is answered `TOO_LARGE`, header-only, without executing, so
    /// clients split larger reads. 0: the board states no bound.
    pub max_resp_kib: u16,
}

/// Byte layout of [`InfoResp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod info_resp {
    use crate::Field;

    /// Board name, NUL-padded.
    pub const BOARD: Field = 0..16;
    /// u32.
    pub const FIRMWARE_VERSION: Field = 16..20;
    /// u32.
    pub const RTL_VERSION: Field = 20..24;
    /// u64.
    pub const BUILD_ID: Field = 24..32;
    /// u64.
    pub const CONFIG_HASH: Field = 32..40;
    /// u64.
    pub const DRAM_BYTES: Field = 40..48;
    /// u16.
    pub const MTU: Field = 48..50;
    /// One byte.
    pub const PAGE_SHIFT: usize = 50;
    /// One byte.
    pub const SLOTS_PER_BUCKET: usize = 51;
    /// u32.
    pub const TLB_ENTRIES: Field = 52..56;
    /// u32.
    pub const EPOCH: Field = 56..60;
    /// u16.
    pub const SESSIONS: Field = 60..62;
    /// u16.
    pub const MAX_RESP_KIB: Field = 62..64;
}

impl InfoResp {
    /// Encoded length. An `Info` request must carry at least this many
    /// payload bytes (zeros), so an answer is never larger than what asked.
    pub const LEN: usize = 64;

    /// The response bound in bytes ([`InfoResp::max_resp_kib`] × 1024), or
    /// `None` when the board states none.
    pub fn max_resp_bytes(&self) -> Option<u32> {
        (self.max_resp_kib != 0).then(|| u32::from(self.max_resp_kib) * 1024)
    }

    /// The board name as text (up to the first NUL), if it is ASCII.
    pub fn board_name(&self) -> Result<&str> {
        let end = self
            .board
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.board.len());
        let s = &self.board[..end];
        if !s.is_ascii() {
            return Err(Error::new("info.board", ErrorKind::Inconsistent));
        }
        core::str::from_utf8(s).map_err(|_| Error::new("info.board", ErrorKind::Inconsistent))
    }

    /// A NUL-padded board name field from text (truncated to 16 bytes).
    pub fn board_field(name: &str) -> [u8; 16] {
        let mut b = [0u8; 16];
        let n = name.len().min(16);
        b[..n].copy_from_slice(&name.as_bytes()[..n]);
        b
    }

    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("info.payload", b, Self::LEN)?;
        let mut board = [0u8; 16];
        board.copy_from_slice(&b[info_resp::BOARD]);
        let r = InfoResp {
            board,
            firmware_version: be32(b, info_resp::FIRMWARE_VERSION),
            rtl_version: be32(b, info_resp::RTL_VERSION),
            build_id: be64(b, info_resp::BUILD_ID),
            config_hash: be64(b, info_resp::CONFIG_HASH),
            dram_bytes: be64(b, info_resp::DRAM_BYTES),
            mtu: be16(b, info_resp::MTU),
            page_shift: b[info_resp::PAGE_SHIFT],
            slots_per_bucket: b[info_resp::SLOTS_PER_BUCKET],
            tlb_entries: be32(b, info_resp::TLB_ENTRIES),
            epoch: be32(b, info_resp::EPOCH),
            sessions: be16(b, info_resp::SESSIONS),
            max_resp_kib: be16(b, info_resp::MAX_RESP_KIB),
        };
        r.board_name()?;
        Ok(r)
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[info_resp::BOARD].copy_from_slice(&self.board);
        set_be32(&mut b, info_resp::FIRMWARE_VERSION, self.firmware_version);
        set_be32(&mut b, info_resp::RTL_VERSION, self.rtl_version);
        set_be64(&mut b, info_resp::BUILD_ID, self.build_id);
        set_be64(&mut b, info_resp::CONFIG_HASH, self.config_hash);
        set_be64(&mut b, info_resp::DRAM_BYTES, self.dram_bytes);
        set_be16(&mut b, info_resp::MTU, self.mtu);
        b[info_resp::PAGE_SHIFT] = self.page_shift;
        b[info_resp::SLOTS_PER_BUCKET] = self.slots_per_bucket;
        set_be32(&mut b, info_resp::TLB_ENTRIES, self.tlb_entries);
        set_be32(&mut b, info_resp::EPOCH, self.epoch);
        set_be16(&mut b, info_resp::SESSIONS, self.sessions);
        set_be16(&mut b, info_resp::MAX_RESP_KIB, self.max_resp_kib);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("info.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// The `op` of an [`OffloadCallReq`] whose arguments are a batch: an
/// [`OffloadBatchReq`] followed by several operations of the same offload,
/// each with its arguments. Offloads do not define an operation with this
/// number.
pub const OFFLOAD_OP_BATCH: u16 = 0xffff;

/// Most operations one batch may carry.
pub const OFFLOAD_BATCH_MAX_OPS: usize = 64;

/// Fixed part of a batch's arguments (after an [`OffloadCallReq`] with
/// `op` = [`OFFLOAD_OP_BATCH`]); `count` operations follow, each an
/// [`OffloadBatchOp`] and its `args_len` argument bytes, packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadBatchReq {
    /// Operations that follow (1..=[`OFFLOAD_BATCH_MAX_OPS`]).
    pub count: u16,
}

/// Byte layout of [`OffloadBatchReq`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod offload_batch_req {
    use crate::Field;

    /// Operations that follow, u16.
    pub const COUNT: Field = 0..2;
    /// Reserved, zero.
    pub const RESERVED: Field = 2..4;
}

impl OffloadBatchReq {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 4;
    /// Parse the fixed part: reserved bytes zero, `count` in
    /// 1..=[`OFFLOAD_BATCH_MAX_OPS`].
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("offload_batch_req.payload", b, Self::LEN)?;
        let rsvd = be16(b, offload_batch_req::RESERVED);
        if rsvd != 0 {
            return Err(Error::new(
                "offload_batch_req.reserved",
                ErrorKind::Reserved(rsvd as u64),
            ));
        }
        let count = be16(b, offload_batch_req::COUNT);
        if count == 0 || count as usize > OFFLOAD_BATCH_MAX_OPS {
            return Err(Error::new(
                "offload_batch_req.count",
                ErrorKind::OutOfRange {
                    value: count as u64,
                    max: OFFLOAD_BATCH_MAX_OPS as u64,
                },
            ));
        }
        Ok(OffloadBatchReq { count })
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be16(&mut b, offload_batch_req::COUNT, self.count);
        set_be16(&mut b, offload_batch_req::RESERVED, 0);
        b
    }
    /// Emit the fixed part; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_batch_req.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
    /// Check a whole batch's arguments (fixed part, every operation, no
    /// bytes left over) and return its operations: `(op, args)` in order.
    pub fn ops(b: &[u8]) -> Result<OffloadBatchOps<'_>> {
        let r = Self::parse(b)?;
        let mut rest = &b[Self::LEN..];
        for _ in 0..r.count {
            let (_, _, tail) = OffloadBatchOp::parse_with_args(rest)?;
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(Error::new(
                "offload_batch_req.count",
                ErrorKind::Inconsistent,
            ));
        }
        Ok(OffloadBatchOps {
            rest: &b[Self::LEN..],
            left: r.count,
        })
    }
}

/// The operations of a checked batch ([`OffloadBatchReq::ops`]).
#[derive(Debug, Clone)]
pub struct OffloadBatchOps<'a> {
    rest: &'a [u8],
    left: u16,
}

impl<'a> Iterator for OffloadBatchOps<'a> {
    type Item = (u16, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        // Checked whole by `OffloadBatchReq::ops`.
        let (op, args, tail) = OffloadBatchOp::parse_with_args(self.rest).ok()?;
        self.rest = tail;
        self.left -= 1;
        Some((op.op, args))
    }
}

/// One operation of a batch: its number and the length of its arguments,
/// which follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadBatchOp {
    /// Operation of the offload (not [`OFFLOAD_OP_BATCH`]).
    pub op: u16,
    /// Argument bytes that follow.
    pub args_len: u16,
}

/// Byte layout of [`OffloadBatchOp`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod offload_batch_op {
    use crate::Field;

    /// Operation, u16.
    pub const OP: Field = 0..2;
    /// Argument bytes that follow, u16.
    pub const ARGS_LEN: Field = 2..4;
}

impl OffloadBatchOp {
    /// Encoded length.
    pub const LEN: usize = 4;
    /// Parse one operation's fixed part (`op` is not a nested batch).
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("offload_batch_op.payload", b, Self::LEN)?;
        let op = be16(b, offload_batch_op::OP);
        if op == OFFLOAD_OP_BATCH {
            return Err(Error::new(
                "offload_batch_op.op",
                ErrorKind::Unknown(op as u64),
            ));
        }
        Ok(OffloadBatchOp {
            op,
            args_len: be16(b, offload_batch_op::ARGS_LEN),
        })
    }
    /// Parse one operation: it, its arguments and the bytes after them.
    pub fn parse_with_args(b: &[u8]) -> Result<(Self, &[u8], &[u8])> {
        let o = Self::parse(b)?;
        let end = Self::LEN + o.args_len as usize;
        if b.len() < end {
            return Err(Error::truncated("offload_batch_op.args_len", end, b.len()));
        }
        Ok((o, &b[Self::LEN..end], &b[end..]))
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        set_be16(&mut b, offload_batch_op::OP, self.op);
        set_be16(&mut b, offload_batch_op::ARGS_LEN, self.args_len);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_batch_op.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

/// One operation's outcome in a batch's answer (after the answer's
/// [`OffloadCallResp`] and [`OffloadBatchReq`]-shaped count): its status,
/// its refusal code and the length of its result, which follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadBatchResult {
    /// `Ok`, `OffloadRefused` (with `code`) or `OffloadFault`.
    pub status: crate::Status,
    /// The offload's reason with `OffloadRefused` (not 0); else 0.
    pub code: u16,
    /// Result bytes that follow (0 unless `Ok`).
    pub len: u32,
}

/// Byte layout of [`OffloadBatchResult`]: ranges of multi-byte fields, offsets of one-byte ones.
pub mod offload_batch_result {
    use crate::Field;

    /// Status of the operation, u8.
    pub const STATUS: usize = 0;
    /// Reserved, zero, u8.
    pub const RESERVED: usize = 1;
    /// Refusal code, u16.
    pub const CODE: Field = 2..4;
    /// Result bytes that follow, u32.
    pub const LEN: Field = 4..8;
}

impl OffloadBatchResult {
    /// Encoded length.
    pub const LEN: usize = 8;
    /// Parse: a status an operation can have, reserved zero, a code exactly
    /// with `OffloadRefused`, no result bytes unless `Ok`.
    pub fn parse(b: &[u8]) -> Result<Self> {
        use crate::Status;
        need("offload_batch_result.payload", b, Self::LEN)?;
        let status = Status::parse(b[offload_batch_result::STATUS])?;
        if !matches!(
            status,
            Status::Ok | Status::OffloadRefused | Status::OffloadFault
        ) {
            return Err(Error::new(
                "offload_batch_result.status",
                ErrorKind::Unknown(status.raw() as u64),
            ));
        }
        if b[offload_batch_result::RESERVED] != 0 {
            return Err(Error::new(
                "offload_batch_result.reserved",
                ErrorKind::Reserved(b[offload_batch_result::RESERVED] as u64),
            ));
        }
        let code = be16(b, offload_batch_result::CODE);
        if (code != 0) != (status == Status::OffloadRefused) {
            return Err(Error::new(
                "offload_batch_result.code",
                ErrorKind::Inconsistent,
            ));
        }
        let len = be32(b, offload_batch_result::LEN);
        if len != 0 && status != Status::Ok {
            return Err(Error::new(
                "offload_batch_result.len",
                ErrorKind::Inconsistent,
            ));
        }
        Ok(OffloadBatchResult { status, code, len })
    }
    /// Parse one outcome: it, its result bytes and the bytes after them.
    pub fn parse_with_result(b: &[u8]) -> Result<(Self, &[u8], &[u8])> {
        let r = Self::parse(b)?;
        let end = (Self::LEN as u64 + u64::from(r.len)).min(usize::MAX as u64) as usize;
        if b.len() < end {
            return Err(Error::truncated("offload_batch_result.len", end, b.len()));
        }
        Ok((r, &b[Self::LEN..end], &b[end..]))
    }
    /// The encoded bytes (an emit that cannot fail).
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[offload_batch_result::STATUS] = self.status.raw();
        b[offload_batch_result::RESERVED] = 0;
        set_be16(&mut b, offload_batch_result::CODE, self.code);
        set_be32(&mut b, offload_batch_result::LEN, self.len);
        b
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_batch_result.payload", b, Self::LEN)?;
        b[..Self::LEN].copy_from_slice(&self.to_bytes());
        Ok(Self::LEN)
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::Field;

    /// Every byte of `0..len` belongs to exactly one field.
    fn tiles(name: &str, len: usize, fields: &[Field]) {
        let mut owner = std::vec![0u8; len];
        for f in fields {
            for b in f.clone() {
                assert!(b < len, "{name}: field {f:?} runs past {len}");
                owner[b] += 1;
            }
        }
        assert!(owner.iter().all(|&n| n == 1), "{name}: {owner:?}");
    }

    /// A one-byte field as a range.
    fn one(at: usize) -> Field {
        at..at + 1
    }

    #[test]
    fn every_payload_layout_tiles_its_length() {
        tiles(
            "alloc_req",
            AllocReq::LEN,
            &[
                alloc_req::SIZE,
                one(alloc_req::PERMS),
                one(alloc_req::PAGE_SHIFT),
                alloc_req::RESERVED_16,
                alloc_req::RESERVED_32,
            ],
        );
        tiles(
            "alloc_resp",
            AllocResp::LEN,
            &[alloc_resp::SIZE, alloc_resp::RETRIES],
        );
        tiles("free_req", FreeReq::LEN, &[free_req::SIZE]);
        tiles(
            "cas",
            AtomicArgs::CAS_LEN,
            &[atomic_args::CAS_EXPECTED, atomic_args::CAS_NEW],
        );
        tiles("faa", AtomicArgs::FAA_LEN, &[atomic_args::FAA_ADDEND]);
        tiles("atomic_resp", AtomicResp::LEN, &[atomic_resp::OLD]);
        tiles(
            "chase_req",
            ChaseReq::LEN,
            &[
                chase_req::KEY,
                chase_req::KEY_OFFSET,
                chase_req::NEXT_OFFSET,
                chase_req::VALUE_OFFSET,
                chase_req::VALUE_LEN,
                chase_req::MAX_HOPS,
            ],
        );
        tiles(
            "chase_resp",
            ChaseResp::LEN,
            &[chase_resp::NODE_VA, chase_resp::HOPS, chase_resp::FOUND],
        );
        tiles(
            "offload_call_req",
            OffloadCallReq::LEN,
            &[
                offload_call_req::OFFLOAD,
                offload_call_req::OP,
                offload_call_req::RESERVED,
            ],
        );
        tiles(
            "offload_call_resp",
            OffloadCallResp::LEN,
            &[offload_call_resp::CODE, offload_call_resp::RESERVED],
        );
        tiles(
            "offload_batch_req",
            OffloadBatchReq::LEN,
            &[offload_batch_req::COUNT, offload_batch_req::RESERVED],
        );
        tiles(
            "offload_batch_op",
            OffloadBatchOp::LEN,
            &[offload_batch_op::OP, offload_batch_op::ARGS_LEN],
        );
        tiles(
            "offload_batch_result",
            OffloadBatchResult::LEN,
            &[
                one(offload_batch_result::STATUS),
                one(offload_batch_result::RESERVED),
                offload_batch_result::CODE,
                offload_batch_result::LEN,
            ],
        );
        tiles(
            "open_session_req",
            OpenSessionReq::LEN,
            &[
                open_session_req::JOIN_SESSION,
                open_session_req::RESERVED_16,
                open_session_req::RESERVED_32,
                open_session_req::JOIN_KEY,
                open_session_req::PAD,
            ],
        );
        tiles(
            "open_session_resp",
            OpenSessionResp::LEN,
            &[
                open_session_resp::SESSION,
                open_session_resp::RESERVED_16,
                open_session_resp::PID,
                open_session_resp::KEY,
                open_session_resp::EPOCH,
                open_session_resp::DEDUP_QUOTA,
                open_session_resp::LOCK_QUOTA,
                open_session_resp::MEM_QUOTA_PAGES,
                open_session_resp::RESERVED_32,
            ],
        );
        tiles(
            "info_resp",
            InfoResp::LEN,
            &[
                info_resp::BOARD,
                info_resp::FIRMWARE_VERSION,
                info_resp::RTL_VERSION,
                info_resp::BUILD_ID,
                info_resp::CONFIG_HASH,
                info_resp::DRAM_BYTES,
                info_resp::MTU,
                one(info_resp::PAGE_SHIFT),
                one(info_resp::SLOTS_PER_BUCKET),
                info_resp::TLB_ENTRIES,
                info_resp::EPOCH,
                info_resp::SESSIONS,
                info_resp::MAX_RESP_KIB,
            ],
        );
    }

    #[test]
    fn offload_batches_parse_whole_and_name_the_bad_field() {
        let mut b = OffloadBatchReq { count: 2 }.to_bytes().to_vec();
        b.extend_from_slice(&OffloadBatchOp { op: 3, args_len: 2 }.to_bytes());
        b.extend_from_slice(b"ab");
        b.extend_from_slice(&OffloadBatchOp { op: 4, args_len: 0 }.to_bytes());
        let ops: Vec<_> = OffloadBatchReq::ops(&b).unwrap().collect();
        assert_eq!(ops, vec![(3, &b"ab"[..]), (4, &b""[..])]);
        let field = |b: &[u8]| OffloadBatchReq::ops(b).unwrap_err().field;
        assert_eq!(field(&b[..b.len() - 1]), "offload_batch_op.payload");
        assert_eq!(field(&b[..b.len() - 5]), "offload_batch_op.args_len");
        let mut extra = b.clone();
        extra.push(0);
        assert_eq!(field(&extra), "offload_batch_req.count");
        assert_eq!(field(&[0, 0, 0, 0]), "offload_batch_req.count");
        assert_eq!(field(&[0, 65, 0, 0]), "offload_batch_req.count");
        assert_eq!(field(&[0, 1, 0, 1]), "offload_batch_req.reserved");
        let mut nested = OffloadBatchReq { count: 1 }.to_bytes().to_vec();
        nested.extend_from_slice(
            &OffloadBatchOp {
                op: OFFLOAD_OP_BATCH,
                args_len: 0,
            }
            .to_bytes(),
        );
        assert_eq!(field(&nested), "offload_batch_op.op");

        use crate::Status;
        let ok = OffloadBatchResult {
            status: Status::Ok,
            code: 0,
            len: 3,
        };
        let mut r = ok.to_bytes().to_vec();
        r.extend_from_slice(b"xyz!");
        let (got, res, rest) = OffloadBatchResult::parse_with_result(&r).unwrap();
        assert_eq!((got, res, rest), (ok, &b"xyz"[..], &b"!"[..]));
        let bad = |s: Status, code: u16, len: u32| {
            OffloadBatchResult::parse(
                &OffloadBatchResult {
                    status: s,
                    code,
                    len,
                }
                .to_bytes(),
            )
            .unwrap_err()
            .field
        };
        assert_eq!(
            bad(Status::OffloadRefused, 0, 0),
            "offload_batch_result.code"
        );
        assert_eq!(bad(Status::Ok, 5, 0), "offload_batch_result.code");
        assert_eq!(bad(Status::OffloadFault, 0, 1), "offload_batch_result.len");
        assert_eq!(bad(Status::Busy, 0, 0), "offload_batch_result.status");
        assert_eq!(
            OffloadBatchResult::parse_with_result(&ok.to_bytes())
                .unwrap_err()
                .field,
            "offload_batch_result.len"
        );
    }
}
