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

impl AllocReq {
    /// Encoded length.
    pub const LEN: usize = 16;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("alloc.payload", b, Self::LEN)?;
        let perms = b[8];
        if perms & !perms::ALL != 0 || perms == 0 {
            return Err(Error::new("alloc.perms", ErrorKind::Unknown(perms as u64)));
        }
        let page_shift = b[9];
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
        let rsvd = be16(b, 10) as u64 | (be32(b, 12) as u64) << 16;
        if rsvd != 0 {
            return Err(Error::new("alloc.reserved", ErrorKind::Reserved(rsvd)));
        }
        Ok(AllocReq {
            size: be64(b, 0),
            perms,
            page_shift,
        })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("alloc.payload", b, Self::LEN)?;
        set_be64(b, 0, self.size);
        b[8] = self.perms;
        b[9] = self.page_shift;
        set_be16(b, 10, 0);
        set_be32(b, 12, 0);
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

impl AllocResp {
    /// Encoded length.
    pub const LEN: usize = 12;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("alloc_resp.payload", b, Self::LEN)?;
        Ok(AllocResp {
            size: be64(b, 0),
            retries: be32(b, 8),
        })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("alloc_resp.payload", b, Self::LEN)?;
        set_be64(b, 0, self.size);
        set_be32(b, 8, self.retries);
        Ok(Self::LEN)
    }
}

/// Payload of a `Free` request: the range `[va, va + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FreeReq {
    /// Bytes to free (must cover whole allocated ranges).
    pub size: u64,
}

impl FreeReq {
    /// Encoded length.
    pub const LEN: usize = 8;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("free.payload", b, Self::LEN)?;
        Ok(FreeReq { size: be64(b, 0) })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("free.payload", b, Self::LEN)?;
        set_be64(b, 0, self.size);
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

impl AtomicArgs {
    /// Encoded length of a CAS operand pair.
    pub const CAS_LEN: usize = 16;
    /// Encoded length of an FAA operand.
    pub const FAA_LEN: usize = 8;

    /// Parse the operands of a CAS.
    pub fn parse_cas(b: &[u8]) -> Result<Self> {
        need("cas.payload", b, Self::CAS_LEN)?;
        Ok(AtomicArgs::CompareAndSwap {
            expected: be64(b, 0),
            new: be64(b, 8),
        })
    }
    /// Parse the operand of an FAA.
    pub fn parse_faa(b: &[u8]) -> Result<Self> {
        need("faa.payload", b, Self::FAA_LEN)?;
        Ok(AtomicArgs::FetchAndAdd { addend: be64(b, 0) })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        match *self {
            AtomicArgs::CompareAndSwap { expected, new } => {
                need("cas.payload", b, Self::CAS_LEN)?;
                set_be64(b, 0, expected);
                set_be64(b, 8, new);
                Ok(Self::CAS_LEN)
            }
            AtomicArgs::FetchAndAdd { addend } => {
                need("faa.payload", b, Self::FAA_LEN)?;
                set_be64(b, 0, addend);
                Ok(Self::FAA_LEN)
            }
        }
    }
}

/// Payload of every atomic and lock response: the word's value before the
/// operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtomicResp {
    /// Old value of the word.
    pub old: u64,
}

impl AtomicResp {
    /// Encoded length.
    pub const LEN: usize = 8;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("atomic_resp.payload", b, Self::LEN)?;
        Ok(AtomicResp { old: be64(b, 0) })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("atomic_resp.payload", b, Self::LEN)?;
        set_be64(b, 0, self.old);
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
            key: be64(b, 0),
            key_offset: be16(b, 8),
            next_offset: be16(b, 10),
            value_offset: be16(b, 12),
            value_len: be16(b, 14),
            max_hops: be32(b, 16),
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
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("chase.payload", b, Self::LEN)?;
        set_be64(b, 0, self.key);
        set_be16(b, 8, self.key_offset);
        set_be16(b, 10, self.next_offset);
        set_be16(b, 12, self.value_offset);
        set_be16(b, 14, self.value_len);
        set_be32(b, 16, self.max_hops);
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

impl ChaseResp {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 16;
    /// Parse.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("chase_resp.payload", b, Self::LEN)?;
        let found = match be32(b, 12) {
            0 => false,
            1 => true,
            v => return Err(Error::new("chase_resp.found", ErrorKind::Unknown(v as u64))),
        };
        Ok(ChaseResp {
            node_va: be64(b, 0),
            hops: be32(b, 8),
            found,
        })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("chase_resp.payload", b, Self::LEN)?;
        set_be64(b, 0, self.node_va);
        set_be32(b, 8, self.hops);
        set_be32(b, 12, self.found as u32);
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
        let rsvd = be16(b, 6);
        if rsvd != 0 {
            return Err(Error::new(
                "offload_call.reserved",
                ErrorKind::Reserved(rsvd as u64),
            ));
        }
        Ok(OffloadCallReq {
            offload: be32(b, 0),
            op: be16(b, 4),
        })
    }
    /// Emit the fixed part; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_call.payload", b, Self::LEN)?;
        set_be32(b, 0, self.offload);
        set_be16(b, 4, self.op);
        set_be16(b, 6, 0);
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

impl OffloadCallResp {
    /// Encoded length of the fixed part.
    pub const LEN: usize = 4;
    /// Parse the fixed part; the reserved bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("offload_call_resp.payload", b, Self::LEN)?;
        let rsvd = be16(b, 2);
        if rsvd != 0 {
            return Err(Error::new(
                "offload_call_resp.reserved",
                ErrorKind::Reserved(rsvd as u64),
            ));
        }
        Ok(OffloadCallResp { code: be16(b, 0) })
    }
    /// Emit the fixed part; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("offload_call_resp.payload", b, Self::LEN)?;
        set_be16(b, 0, self.code);
        set_be16(b, 2, 0);
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

impl OpenSessionReq {
    /// Encoded length (the exact payload length an `OpenSession` carries).
    pub const LEN: usize = 32;
    /// Parse; reserved and pad bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("open_session.payload", b, Self::LEN)?;
        let r = OpenSessionReq {
            join_session: be16(b, 0),
            join_key: be64(b, 8),
        };
        if be16(b, 2) != 0 || be32(b, 4) != 0 || b[16..Self::LEN].iter().any(|&x| x != 0) {
            return Err(Error::new("open_session.reserved", ErrorKind::Reserved(0)));
        }
        if r.join_session == 0 && r.join_key != 0 {
            return Err(Error::new("open_session.join_key", ErrorKind::Inconsistent));
        }
        Ok(r)
    }
    /// Emit (pad included); returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("open_session.payload", b, Self::LEN)?;
        b[..Self::LEN].fill(0);
        set_be16(b, 0, self.join_session);
        set_be64(b, 8, self.join_key);
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

impl OpenSessionResp {
    /// Encoded length.
    pub const LEN: usize = 32;
    /// Parse; reserved bytes must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        need("open_session_resp.payload", b, Self::LEN)?;
        if be16(b, 2) != 0 || be32(b, 28) != 0 {
            return Err(Error::new(
                "open_session_resp.reserved",
                ErrorKind::Reserved(0),
            ));
        }
        Ok(OpenSessionResp {
            session: be16(b, 0),
            pid: be32(b, 4),
            key: be64(b, 8),
            epoch: be32(b, 16),
            dedup_quota: be16(b, 20),
            lock_quota: be16(b, 22),
            mem_quota_pages: be32(b, 24),
        })
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("open_session_resp.payload", b, Self::LEN)?;
        b[..Self::LEN].fill(0);
        set_be16(b, 0, self.session);
        set_be32(b, 4, self.pid);
        set_be64(b, 8, self.key);
        set_be32(b, 16, self.epoch);
        set_be16(b, 20, self.dedup_quota);
        set_be16(b, 22, self.lock_quota);
        set_be32(b, 24, self.mem_quota_pages);
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
        board.copy_from_slice(&b[..16]);
        let r = InfoResp {
            board,
            firmware_version: be32(b, 16),
            rtl_version: be32(b, 20),
            build_id: be64(b, 24),
            config_hash: be64(b, 32),
            dram_bytes: be64(b, 40),
            mtu: be16(b, 48),
            page_shift: b[50],
            slots_per_bucket: b[51],
            tlb_entries: be32(b, 52),
            epoch: be32(b, 56),
            sessions: be16(b, 60),
            max_resp_kib: be16(b, 62),
        };
        r.board_name()?;
        Ok(r)
    }
    /// Emit; returns bytes written.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        need("info.payload", b, Self::LEN)?;
        b[..16].copy_from_slice(&self.board);
        set_be32(b, 16, self.firmware_version);
        set_be32(b, 20, self.rtl_version);
        set_be64(b, 24, self.build_id);
        set_be64(b, 32, self.config_hash);
        set_be64(b, 40, self.dram_bytes);
        set_be16(b, 48, self.mtu);
        b[50] = self.page_shift;
        b[51] = self.slots_per_bucket;
        set_be32(b, 52, self.tlb_entries);
        set_be32(b, 56, self.epoch);
        set_be16(b, 60, self.sessions);
        set_be16(b, 62, self.max_resp_kib);
        Ok(Self::LEN)
    }
}
