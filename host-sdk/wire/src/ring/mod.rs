//! The FPGA <-> ARM ring buffers in shared board DRAM.
//!
//! Two single-producer single-consumer rings: RX carries work from the fast
//! path to the slow path (forwarded alloc/free requests, PA-consumed
//! notices, error reports); TX carries commands back (PTE writes and
//! removes, TLB invalidations, free-PA pushes, replies). Each ring is a
//! 128-byte header followed by `slot_count` fixed 64-byte slots. Indices are
//! free-running `u32`s (slot = index mod slot_count, slot_count a power of
//! two): empty when `head == tail`, full when `head - tail == slot_count`.
//! Producer and consumer fields sit on separate 64-byte lines so neither
//! side writes the other's cache line. Fields are little-endian.
//!
//! ```text
//! header +0   magic u32 | version u16 | slot_size u16 | slot_count u32 | rsvd u32
//!        +16  head u32 (producer)     | doorbell u32 (producer bumps after publishing)
//!        +64  tail u32 (consumer)     | rejected u32 (malformed slots the consumer skipped)
//! slot   +0   kind u8 | flags u8 | page_shift u8 | status u8 | pid u32 | tag u32 | req_id u32
//!        +16  a u64 | b u64 | c u64 | d u64 | e u64 | f u32 | crc32c u32 (over bytes 0..60)
//! ```
//! Which of `a..f` a kind uses is fixed by [`Descriptor`]'s emit/parse.
//!
//! Rack control datagrams (`clio-control` envelopes, magic `"CLRK"`, at most
//! 256 bytes) travel between the fast path and the slow path as
//! `CONTROL_REQ` (0x0c, RX) and `CONTROL_REPLY` (0x8c, TX) fragments:
//!
//! ```text
//! page_shift = index (0..count) | status = count = ceil(len / 40)
//! tag = the fast path's handle on the sender (echoed) | req_id = datagram seq (echoed)
//! a..e = 40 datagram bytes (zero after its end)       | f = len, 1..=280
//! ```
//! A datagram's fragments are pushed back to back in index order
//! ([`control_fragments`]); the consumer reassembles them
//! ([`ControlAssembler`]) and drops a datagram with a missing fragment (the
//! sender's request-level retry covers it, as for a lost UDP datagram).

use crate::crc::crc32c;
use crate::enums::wire_enum;
use crate::error::bytes::{le16, le32, le64, set_le16, set_le32, set_le64};
use crate::pte::{Pte, PTE_LEN};
use crate::{Error, ErrorKind, Field, Result};

mod engine;
pub use engine::{init, Consumer, Producer, PushError, RingFull, RingMemory};

/// Ring magic, "CLRG" little-endian.
pub const MAGIC: u32 = 0x4752_4C43;
/// Ring format version.
pub const VERSION: u16 = 1;
/// Bytes of the ring header.
pub const HEADER_LEN: usize = 128;
/// Bytes of one descriptor slot.
pub const SLOT_LEN: usize = 64;

/// The ring-header fields as byte ranges (the generated SV package has
/// their offsets, `RING_OFF_*`). The producer's fields and the consumer's
/// sit on separate 64-byte lines.
pub mod header_field {
    use crate::Field;

    /// Magic, u32.
    pub const MAGIC: Field = 0..4;
    /// Version, u16.
    pub const VERSION: Field = 4..6;
    /// Slot size in bytes, u16.
    pub const SLOT_SIZE: Field = 6..8;
    /// Slot count, u32.
    pub const SLOT_COUNT: Field = 8..12;
    /// Producer index, u32 (the producer's line).
    pub const HEAD: Field = 16..20;
    /// Doorbell counter, u32 (the producer's line).
    pub const DOORBELL: Field = 20..24;
    /// Consumer index, u32 (the consumer's line).
    pub const TAIL: Field = 64..68;
    /// Count of malformed slots the consumer rejected, u32 (the consumer's line).
    pub const REJECTED: Field = 68..72;
}

/// The descriptor fields: offsets of one-byte fields, byte ranges of the
/// others (the generated SV package has the offsets).
pub mod slot_field {
    use crate::Field;

    /// Kind, u8.
    pub const KIND: usize = 0;
    /// Flags, u8.
    pub const FLAGS: usize = 1;
    /// Page shift, u8.
    pub const PAGE_SHIFT: usize = 2;
    /// Status, u8.
    pub const STATUS: usize = 3;
    /// PID, u32.
    pub const PID: Field = 4..8;
    /// Fast-path context tag, echoed in replies, u32.
    pub const TAG: Field = 8..12;
    /// Client request id, u32.
    pub const REQ_ID: Field = 12..16;
    /// Operand a, u64.
    pub const A: Field = 16..24;
    /// Operand b, u64.
    pub const B: Field = 24..32;
    /// Operand c, u64.
    pub const C: Field = 32..40;
    /// Operand d, u64.
    pub const D: Field = 40..48;
    /// Operand e, u64.
    pub const E: Field = 48..56;
    /// Operand f, u32.
    pub const F: Field = 56..60;
    /// CRC32C over bytes 0..60, u32.
    pub const CRC: Field = 60..64;
}

/// Bits of a descriptor's flags byte.
pub mod desc_flags {
    /// `AllocReq`: fixed-address request. `Reply`: range was moved.
    pub const FIXED_OR_MOVED: u8 = 0x01;
    /// `PteWrite`: update of an existing slot rather than an insert.
    pub const UPDATE: u8 = 0x02;
    /// `SessionReply`: a close (clear the entry) rather than an open.
    pub const CLOSE: u8 = 0x04;
    /// All defined bits.
    pub const ALL: u8 = FIXED_OR_MOVED | UPDATE | CLOSE;
}

wire_enum! {
    /// Descriptor kinds. RX kinds (FPGA -> ARM) are below 0x80, TX kinds
    /// (ARM -> FPGA) above.
    pub enum Kind: u8 as "ring.kind" {
        /// RX: an `Alloc` request forwarded by the fast path.
        AllocReq = 0x01 => "ALLOC_REQ",
        /// RX: a `Free` request forwarded by the fast path.
        FreeReq = 0x02 => "FREE_REQ",
        /// RX: the fast path took a free PA for a first touch and mapped it.
        PaConsumed = 0x03 => "PA_CONSUMED",
        /// RX: the fast path reports an error it saw.
        ErrorReport = 0x04 => "ERROR_REPORT",
        /// RX: an `OpenSession` request forwarded by the fast path.
        SessionOpenReq = 0x05 => "SESSION_OPEN_REQ",
        /// RX: a `CloseSession` request (of a valid session) forwarded.
        SessionCloseReq = 0x06 => "SESSION_CLOSE_REQ",
        /// TX: write a PTE into a page-table slot (insert or update).
        PteWrite = 0x81 => "PTE_WRITE",
        /// TX: clear a page-table slot.
        PteRemove = 0x82 => "PTE_REMOVE",
        /// TX: drop TLB entries of a page range.
        TlbInvalidate = 0x83 => "TLB_INVALIDATE",
        /// TX: push a reserved free physical page into the fault FIFO.
        FreePaPush = 0x84 => "FREE_PA_PUSH",
        /// TX: the answer to a forwarded request.
        Reply = 0x85 => "REPLY",
        /// TX: install (open) or clear (close) a session-table entry, and
        /// answer the forwarded request that asked (tag 0: none).
        SessionReply = 0x86 => "SESSION_REPLY",
        /// TX: a new boot: set the epoch, clear every session, dedup record
        /// and lock count. The slow path's first TX descriptor.
        Epoch = 0x87 => "EPOCH",
        /// RX: one fragment of a rack control datagram (`clio-control`,
        /// magic `"CLRK"`) the fast path received for the slow path.
        ControlReq = 0x0c => "CONTROL_REQ",
        /// TX: one fragment of the slow path's answer to a control datagram;
        /// the fast path sends the whole datagram to the request's sender.
        ControlReply = 0x8c => "CONTROL_REPLY",
        /// RX: one fragment of an `OFFLOAD_CALL` request the fast path does
        /// not serve itself, passed whole (Clio header and payload) to the
        /// slow path's offloads.
        OffloadReq = 0x08 => "OFFLOAD_REQ",
        /// TX: one fragment of the slow path's answer to an `OFFLOAD_REQ`:
        /// the status, then the answer's payload; the fast path answers the
        /// call with them.
        OffloadReply = 0x88 => "OFFLOAD_REPLY",
        /// TX: set (or, mode `OPEN`, clear) one entry of the fast path's
        /// region gate; any other setting clears the entry's dirty bitmap.
        GateSet = 0x8d => "GATE_SET",
        /// RX: blocks of a `TRACKING` gate entry that a change dirtied since
        /// the entry was last set (each block reported once per setting).
        GateDirty = 0x0d => "GATE_DIRTY",
    }
}

wire_enum! {
    /// How the fast path's region gate serves requests that touch an
    /// entry's range (`GATE_SET`'s `status` byte). "Changes" are writes,
    /// atomics, locks and offload calls; reads and pointer chases read.
    pub enum GateMode: u8 as "ring.gate.mode" {
        /// No entry (clears it).
        Open = 0 => "OPEN",
        /// Changes answered `BUSY`, reads served (a migration's last round).
        Paused = 1 => "PAUSED",
        /// Everything served; a write or atomic marks the [`GATE_BLOCK`]s it
        /// touches dirty (reported in `GATE_DIRTY`); offload calls `BUSY`.
        Tracking = 2 => "TRACKING",
        /// Everything answered `MOVED` (the range's region left this node).
        Moved = 3 => "MOVED",
        /// Changes answered `MOVED`, reads served (a new backup joined).
        Rejoin = 4 => "REJOIN",
    }
}

/// Bytes of one dirty block of a `TRACKING` gate entry (bit `i` of a
/// `GATE_DIRTY` mask = bytes `[va + i * GATE_BLOCK, va + (i + 1) * GATE_BLOCK)`).
pub const GATE_BLOCK: u64 = 64 << 10;
/// Longest `TRACKING` entry: 64 blocks, one `u64` bitmap.
pub const GATE_MAX_TRACKED: u64 = 64 * GATE_BLOCK;
/// Entries of the fast path's region gate on a board (the RTL's default
/// `clio_region_gate` size and the firmware's; a model may be built larger).
pub const GATE_ENTRIES: u32 = 16;

impl Kind {
    /// Whether the kind travels FPGA -> ARM.
    pub const fn is_rx(self) -> bool {
        (self as u8) < 0x80
    }
}

/// Datagram bytes one `CONTROL_REQ`/`CONTROL_REPLY` fragment carries
/// (operands `a..e`).
pub const CONTROL_FRAGMENT: usize = 40;
/// Most fragments of one control datagram (a `clio-control` envelope is at
/// most 256 bytes).
pub const MAX_CONTROL_FRAGMENTS: u8 = 7;
/// Longest control datagram the rings carry.
pub const MAX_CONTROL_LEN: usize = CONTROL_FRAGMENT * MAX_CONTROL_FRAGMENTS as usize;

/// Which ring a descriptor is parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// FPGA -> ARM.
    Rx,
    /// ARM -> FPGA.
    Tx,
}

/// A descriptor as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Descriptor {
    /// Forwarded `Alloc`.
    AllocReq {
        /// Fast-path context tag (echoed in the reply).
        tag: u32,
        /// Requesting process.
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// Requested or hinted VA.
        va: u64,
        /// Bytes requested.
        size: u64,
        /// Permission bits.
        perms: u8,
        /// log2 page size (0 = default).
        page_shift: u8,
        /// Fixed-address request.
        fixed: bool,
    },
    /// Forwarded `Free`.
    FreeReq {
        /// Fast-path context tag.
        tag: u32,
        /// Requesting process.
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// First VA of the range.
        va: u64,
        /// Bytes to free.
        size: u64,
    },
    /// A free PA was consumed by a first-touch fault and mapped at `(bucket, slot)`.
    PaConsumed {
        /// Faulting process.
        pid: u32,
        /// Faulting VPN.
        vpn: u64,
        /// PPN taken from the FIFO.
        ppn: u32,
        /// Page size of the FIFO it came from.
        page_shift: u8,
        /// Bucket of the PTE that now maps it.
        bucket: u32,
        /// Slot within the bucket.
        slot: u32,
    },
    /// An error the fast path saw (for counters and logs).
    ErrorReport {
        /// Status it answered with.
        status: u8,
        /// Process involved.
        pid: u32,
        /// VA involved.
        va: u64,
        /// Opcode of the failing request.
        opcode: u8,
        /// Errors of this kind since the last report.
        count: u32,
    },
    /// Write a PTE into `(bucket, slot)`.
    PteWrite {
        /// Bucket index.
        bucket: u32,
        /// Slot within the bucket.
        slot: u32,
        /// Update of a live slot (the TLB entry is refreshed) vs insert.
        update: bool,
        /// The entry.
        pte: Pte,
    },
    /// Clear `(bucket, slot)`, which must hold `(pid, vpn)`.
    PteRemove {
        /// Bucket index.
        bucket: u32,
        /// Slot within the bucket.
        slot: u32,
        /// Owner expected in the slot.
        pid: u32,
        /// VPN expected in the slot.
        vpn: u64,
    },
    /// Invalidate TLB entries of `pages` pages from `vpn`.
    TlbInvalidate {
        /// Process.
        pid: u32,
        /// First VPN.
        vpn: u64,
        /// Number of pages.
        pages: u32,
    },
    /// Push a free physical page for first-touch faults.
    FreePaPush {
        /// Page size (selects the FIFO).
        page_shift: u8,
        /// The reserved physical page.
        ppn: u32,
    },
    /// Answer to a forwarded request.
    Reply {
        /// Tag of the request answered.
        tag: u32,
        /// Process.
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// Outcome (a [`crate::Status`] value).
        status: u8,
        /// Placed VA (alloc) or freed VA.
        va: u64,
        /// Bytes reserved or freed.
        size: u64,
        /// Allocation retries.
        retries: u32,
        /// The range was placed away from the fixed VA asked for.
        moved: bool,
    },
    /// Forwarded `OpenSession`.
    SessionOpenReq {
        /// Fast-path context tag (echoed in the reply).
        tag: u32,
        /// The request's `pid` (0 = new address space).
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// Session whose address space to join (0 = none).
        join_session: u16,
        /// Key of `join_session`.
        join_key: u64,
    },
    /// Forwarded `CloseSession` (the fast path checked its key).
    SessionCloseReq {
        /// Fast-path context tag.
        tag: u32,
        /// The session's process.
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// Session to close.
        session: u16,
    },
    /// Install or clear a session-table entry and answer the request `tag`
    /// (if not 0). An open with a status other than OK installs nothing.
    SessionReply {
        /// Tag of the request answered (0 = slow-path initiated, no answer).
        tag: u32,
        /// The session's process.
        pid: u32,
        /// Client request id.
        req_id: u32,
        /// Outcome (a [`crate::Status`] value).
        status: u8,
        /// Session id.
        session: u16,
        /// Session key (0 for a close).
        key: u64,
        /// Dedup records the session may hold.
        dedup_quota: u16,
        /// Locks the session may hold.
        lock_quota: u16,
        /// Default-size pages the address space may allocate.
        mem_quota_pages: u32,
        /// A close rather than an open.
        close: bool,
    },
    /// A new boot's epoch (nonzero); resets all session state.
    Epoch {
        /// The epoch.
        epoch: u32,
    },
    /// Fragment `index` of `count` of control datagram `seq` (RX: from the
    /// fast path's client `tag`; TX: the answer to it). The fragments of one
    /// datagram are pushed back to back, in order; `len` is the whole
    /// datagram's length, `data` this fragment's bytes (zero after the end).
    Control {
        /// RX: the fast path's handle on the sender; TX: echoed.
        tag: u32,
        /// Datagram number chosen by the fast path (RX), echoed (TX).
        seq: u32,
        /// Bytes of the whole datagram, 1..=[`MAX_CONTROL_LEN`].
        len: u16,
        /// This fragment's index, `< count`.
        index: u8,
        /// Fragments of the datagram: `ceil(len / CONTROL_FRAGMENT)`.
        count: u8,
        /// The fragment's bytes (`a..e`).
        data: [u8; CONTROL_FRAGMENT],
        /// `Rx`: a `CONTROL_REQ`; `Tx`: a `CONTROL_REPLY`.
        dir: Direction,
    },
    /// Set entry `entry` of the fast path's region gate to `mode` over
    /// `[va, va + len)` of address space `pid` (`Open`: clear it). The
    /// entry's dirty bitmap starts empty.
    GateSet {
        /// Gate entry, below the fast path's table size.
        entry: u32,
        /// Address space.
        pid: u32,
        /// First VA of the range.
        va: u64,
        /// Bytes (not 0 unless `Open`; at most [`GATE_MAX_TRACKED`] when `Tracking`).
        len: u64,
        /// How requests to the range are served.
        mode: GateMode,
    },
    /// Entry `entry` (`pid`, starting at `va`) had the blocks in `mask`
    /// dirtied by a change since it was set (or since their last report).
    GateDirty {
        /// Gate entry.
        entry: u32,
        /// Its address space.
        pid: u32,
        /// Its first VA (so a report for a since-replaced entry is recognised).
        va: u64,
        /// Newly dirty blocks (not 0): bit `i` = block `i` ([`GATE_BLOCK`]).
        mask: u64,
    },
    /// Fragment `index` of `count` of offload datagram `seq` (RX: an
    /// `OFFLOAD_CALL` request, Clio header and payload, from the fast path's
    /// call `tag`; TX: the answer to it, [`OffloadReplyHead`] then the
    /// answer's payload). Pushed back to back, in order; `len` is the whole
    /// datagram's length, `data` this fragment's bytes (zero after the end).
    Offload {
        /// RX: the fast path's handle on the call; TX: echoed.
        tag: u32,
        /// Datagram number chosen by the fast path (RX), echoed (TX).
        seq: u32,
        /// Bytes of the whole datagram, 1..=[`MAX_OFFLOAD_LEN`].
        len: u32,
        /// This fragment's index, `< count`.
        index: u16,
        /// Fragments of the datagram: `ceil(len / OFFLOAD_FRAGMENT)`.
        count: u16,
        /// The fragment's bytes (`a..e`).
        data: [u8; OFFLOAD_FRAGMENT],
        /// `Rx`: an `OFFLOAD_REQ`; `Tx`: an `OFFLOAD_REPLY`.
        dir: Direction,
    },
}

impl Descriptor {
    /// The kind of this descriptor.
    pub const fn kind(&self) -> Kind {
        match self {
            Descriptor::AllocReq { .. } => Kind::AllocReq,
            Descriptor::FreeReq { .. } => Kind::FreeReq,
            Descriptor::PaConsumed { .. } => Kind::PaConsumed,
            Descriptor::ErrorReport { .. } => Kind::ErrorReport,
            Descriptor::PteWrite { .. } => Kind::PteWrite,
            Descriptor::PteRemove { .. } => Kind::PteRemove,
            Descriptor::TlbInvalidate { .. } => Kind::TlbInvalidate,
            Descriptor::FreePaPush { .. } => Kind::FreePaPush,
            Descriptor::Reply { .. } => Kind::Reply,
            Descriptor::SessionOpenReq { .. } => Kind::SessionOpenReq,
            Descriptor::SessionCloseReq { .. } => Kind::SessionCloseReq,
            Descriptor::SessionReply { .. } => Kind::SessionReply,
            Descriptor::Epoch { .. } => Kind::Epoch,
            Descriptor::Control {
                dir: Direction::Rx, ..
            } => Kind::ControlReq,
            Descriptor::Control {
                dir: Direction::Tx, ..
            } => Kind::ControlReply,
            Descriptor::Offload {
                dir: Direction::Rx, ..
            } => Kind::OffloadReq,
            Descriptor::Offload {
                dir: Direction::Tx, ..
            } => Kind::OffloadReply,
            Descriptor::GateSet { .. } => Kind::GateSet,
            Descriptor::GateDirty { .. } => Kind::GateDirty,
        }
    }

    /// Encode into a 64-byte slot, CRC included.
    pub fn emit(&self, s: &mut [u8]) -> Result<()> {
        if s.len() < SLOT_LEN {
            return Err(Error::truncated("ring.slot", SLOT_LEN, s.len()));
        }
        let s = &mut s[..SLOT_LEN];
        s.fill(0);
        s[slot_field::KIND] = self.kind().raw();
        use slot_field::*;
        match *self {
            Descriptor::AllocReq {
                tag,
                pid,
                req_id,
                va,
                size,
                perms,
                page_shift,
                fixed,
            } => {
                s[FLAGS] = if fixed { desc_flags::FIXED_OR_MOVED } else { 0 };
                s[PAGE_SHIFT] = page_shift;
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, A, va);
                set_le64(s, B, size);
                s[C.start] = perms;
            }
            Descriptor::FreeReq {
                tag,
                pid,
                req_id,
                va,
                size,
            } => {
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, A, va);
                set_le64(s, B, size);
            }
            Descriptor::PaConsumed {
                pid,
                vpn,
                ppn,
                page_shift,
                bucket,
                slot,
            } => {
                s[PAGE_SHIFT] = page_shift;
                set_le32(s, PID, pid);
                set_le64(s, A, vpn);
                set_le64(s, B, ppn as u64);
                set_le64(s, C, bucket as u64);
                set_le32(s, F, slot);
            }
            Descriptor::ErrorReport {
                status,
                pid,
                va,
                opcode,
                count,
            } => {
                s[STATUS] = status;
                set_le32(s, PID, pid);
                set_le64(s, A, va);
                s[B.start] = opcode;
                set_le32(s, F, count);
            }
            Descriptor::PteWrite {
                bucket,
                slot,
                update,
                pte,
            } => {
                s[FLAGS] = if update { desc_flags::UPDATE } else { 0 };
                pte.emit(&mut s[A.start..A.start + PTE_LEN])
                    .map_err(|e| Error::new("ring.pte", e.kind))?;
                set_le64(s, C, bucket as u64);
                set_le32(s, F, slot);
            }
            Descriptor::PteRemove {
                bucket,
                slot,
                pid,
                vpn,
            } => {
                set_le32(s, PID, pid);
                set_le64(s, A, vpn);
                set_le64(s, C, bucket as u64);
                set_le32(s, F, slot);
            }
            Descriptor::TlbInvalidate { pid, vpn, pages } => {
                set_le32(s, PID, pid);
                set_le64(s, A, vpn);
                set_le32(s, F, pages);
            }
            Descriptor::FreePaPush { page_shift, ppn } => {
                s[PAGE_SHIFT] = page_shift;
                set_le64(s, B, ppn as u64);
            }
            Descriptor::Reply {
                tag,
                pid,
                req_id,
                status,
                va,
                size,
                retries,
                moved,
            } => {
                s[FLAGS] = if moved { desc_flags::FIXED_OR_MOVED } else { 0 };
                s[STATUS] = status;
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, A, va);
                set_le64(s, B, size);
                set_le32(s, F, retries);
            }
            Descriptor::SessionOpenReq {
                tag,
                pid,
                req_id,
                join_session,
                join_key,
            } => {
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, A, join_key);
                set_le64(s, B, join_session as u64);
            }
            Descriptor::SessionCloseReq {
                tag,
                pid,
                req_id,
                session,
            } => {
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, B, session as u64);
            }
            Descriptor::SessionReply {
                tag,
                pid,
                req_id,
                status,
                session,
                key,
                dedup_quota,
                lock_quota,
                mem_quota_pages,
                close,
            } => {
                s[FLAGS] = if close { desc_flags::CLOSE } else { 0 };
                s[STATUS] = status;
                set_le32(s, PID, pid);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, req_id);
                set_le64(s, A, key);
                set_le64(s, B, session as u64);
                set_le64(
                    s,
                    C,
                    dedup_quota as u64 | (lock_quota as u64) << 16 | (mem_quota_pages as u64) << 32,
                );
            }
            Descriptor::Epoch { epoch } => {
                set_le64(s, A, epoch as u64);
            }
            Descriptor::Control {
                tag,
                seq,
                len,
                index,
                count,
                data,
                ..
            } => {
                s[PAGE_SHIFT] = index;
                s[STATUS] = count;
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, seq);
                s[A.start..E.end].copy_from_slice(&data);
                set_le32(s, F, u32::from(len));
            }
            Descriptor::Offload {
                tag,
                seq,
                len,
                index,
                count,
                data,
                ..
            } => {
                set_le32(s, PID, u32::from(index) | u32::from(count) << 16);
                set_le32(s, TAG, tag);
                set_le32(s, REQ_ID, seq);
                s[A.start..E.end].copy_from_slice(&data);
                set_le32(s, F, len);
            }
            Descriptor::GateSet {
                entry,
                pid,
                va,
                len,
                mode,
            } => {
                s[STATUS] = mode.raw();
                set_le32(s, PID, pid);
                set_le32(s, TAG, entry);
                set_le64(s, A, va);
                set_le64(s, B, len);
            }
            Descriptor::GateDirty {
                entry,
                pid,
                va,
                mask,
            } => {
                set_le32(s, PID, pid);
                set_le32(s, TAG, entry);
                set_le64(s, A, va);
                set_le64(s, C, mask);
            }
        }
        let crc = crc32c(&s[..CRC.start]);
        set_le32(s, CRC, crc);
        Ok(())
    }

    /// Decode a slot read from the ring of `dir`. The CRC, the kind's
    /// direction, unused operands (must be zero) and ranges are checked, so a
    /// torn or corrupt slot is an error naming the field, never a command.
    pub fn parse(s: &[u8], dir: Direction) -> Result<Descriptor> {
        use slot_field::*;
        if s.len() < SLOT_LEN {
            return Err(Error::truncated("ring.slot", SLOT_LEN, s.len()));
        }
        let carried = le32(s, CRC);
        let computed = crc32c(&s[..CRC.start]);
        if carried != computed {
            return Err(Error::new(
                "ring.crc",
                ErrorKind::Checksum { carried, computed },
            ));
        }
        let kind = Kind::parse(s[KIND])?;
        if kind.is_rx() != (dir == Direction::Rx) {
            return Err(Error::new("ring.kind", ErrorKind::Inconsistent));
        }
        let flags = s[FLAGS];
        if flags & !desc_flags::ALL != 0 {
            return Err(Error::new("ring.flags", ErrorKind::Reserved(flags as u64)));
        }
        let u32_of = |field: &'static str, at: Field| -> Result<u32> {
            let v = le64(s, at);
            u32::try_from(v).map_err(|_| {
                Error::new(
                    field,
                    ErrorKind::OutOfRange {
                        value: v,
                        max: u32::MAX as u64,
                    },
                )
            })
        };
        let u16_of = |field: &'static str, at: Field| -> Result<u16> {
            let v = le64(s, at);
            u16::try_from(v).map_err(|_| {
                Error::new(
                    field,
                    ErrorKind::OutOfRange {
                        value: v,
                        max: u16::MAX as u64,
                    },
                )
            })
        };
        let d = match kind {
            Kind::AllocReq => Descriptor::AllocReq {
                tag: le32(s, TAG),
                pid: le32(s, PID),
                req_id: le32(s, REQ_ID),
                va: le64(s, A),
                size: le64(s, B),
                perms: s[C.start],
                page_shift: s[PAGE_SHIFT],
                fixed: flags & desc_flags::FIXED_OR_MOVED != 0,
            },
            Kind::FreeReq => Descriptor::FreeReq {
                tag: le32(s, TAG),
                pid: le32(s, PID),
                req_id: le32(s, REQ_ID),
                va: le64(s, A),
                size: le64(s, B),
            },
            Kind::PaConsumed => Descriptor::PaConsumed {
                pid: le32(s, PID),
                vpn: le64(s, A),
                ppn: u32_of("ring.pa_consumed.ppn", B)?,
                page_shift: s[PAGE_SHIFT],
                bucket: u32_of("ring.pa_consumed.bucket", C)?,
                slot: le32(s, F),
            },
            Kind::ErrorReport => Descriptor::ErrorReport {
                status: s[STATUS],
                pid: le32(s, PID),
                va: le64(s, A),
                opcode: s[B.start],
                count: le32(s, F),
            },
            Kind::PteWrite => Descriptor::PteWrite {
                bucket: u32_of("ring.pte_write.bucket", C)?,
                slot: le32(s, F),
                update: flags & desc_flags::UPDATE != 0,
                pte: Pte::parse(&s[A.start..A.start + PTE_LEN])
                    .map_err(|e| Error::new("ring.pte", e.kind))?,
            },
            Kind::PteRemove => Descriptor::PteRemove {
                bucket: u32_of("ring.pte_remove.bucket", C)?,
                slot: le32(s, F),
                pid: le32(s, PID),
                vpn: le64(s, A),
            },
            Kind::TlbInvalidate => Descriptor::TlbInvalidate {
                pid: le32(s, PID),
                vpn: le64(s, A),
                pages: le32(s, F),
            },
            Kind::FreePaPush => Descriptor::FreePaPush {
                page_shift: s[PAGE_SHIFT],
                ppn: u32_of("ring.free_pa_push.ppn", B)?,
            },
            Kind::Reply => Descriptor::Reply {
                tag: le32(s, TAG),
                pid: le32(s, PID),
                req_id: le32(s, REQ_ID),
                status: s[STATUS],
                va: le64(s, A),
                size: le64(s, B),
                retries: le32(s, F),
                moved: flags & desc_flags::FIXED_OR_MOVED != 0,
            },
            Kind::SessionOpenReq => Descriptor::SessionOpenReq {
                tag: le32(s, TAG),
                pid: le32(s, PID),
                req_id: le32(s, REQ_ID),
                join_session: u16_of("ring.session_open.join_session", B)?,
                join_key: le64(s, A),
            },
            Kind::SessionCloseReq => Descriptor::SessionCloseReq {
                tag: le32(s, TAG),
                pid: le32(s, PID),
                req_id: le32(s, REQ_ID),
                session: u16_of("ring.session_close.session", B)?,
            },
            Kind::SessionReply => {
                let c = le64(s, C);
                Descriptor::SessionReply {
                    tag: le32(s, TAG),
                    pid: le32(s, PID),
                    req_id: le32(s, REQ_ID),
                    status: s[STATUS],
                    session: u16_of("ring.session_reply.session", B)?,
                    key: le64(s, A),
                    dedup_quota: c as u16,
                    lock_quota: (c >> 16) as u16,
                    mem_quota_pages: (c >> 32) as u32,
                    close: flags & desc_flags::CLOSE != 0,
                }
            }
            Kind::Epoch => match u32_of("ring.epoch", A)? {
                0 => return Err(Error::new("ring.epoch", ErrorKind::Inconsistent)),
                epoch => Descriptor::Epoch { epoch },
            },
            Kind::ControlReq | Kind::ControlReply => {
                let len = le32(s, F);
                let (index, count) = (s[PAGE_SHIFT], s[STATUS]);
                let data = fragment::<CONTROL_FRAGMENT>(
                    s,
                    len,
                    (u16::from(index), u16::from(count)),
                    MAX_CONTROL_LEN,
                    [
                        "ring.control.len",
                        "ring.control.count",
                        "ring.control.index",
                    ],
                )?;
                Descriptor::Control {
                    tag: le32(s, TAG),
                    seq: le32(s, REQ_ID),
                    len: len as u16,
                    index,
                    count,
                    data,
                    dir,
                }
            }
            Kind::OffloadReq | Kind::OffloadReply => {
                let len = le32(s, F);
                let pos = le32(s, PID);
                let (index, count) = (pos as u16, (pos >> 16) as u16);
                let data = fragment::<OFFLOAD_FRAGMENT>(
                    s,
                    len,
                    (index, count),
                    MAX_OFFLOAD_LEN,
                    [
                        "ring.offload.len",
                        "ring.offload.count",
                        "ring.offload.index",
                    ],
                )?;
                Descriptor::Offload {
                    tag: le32(s, TAG),
                    seq: le32(s, REQ_ID),
                    len,
                    index,
                    count,
                    data,
                    dir,
                }
            }
            Kind::GateSet => {
                let mode = GateMode::parse(s[STATUS])?;
                let (va, len) = (le64(s, A), le64(s, B));
                let max = match mode {
                    GateMode::Tracking => GATE_MAX_TRACKED,
                    _ => u64::MAX - va,
                };
                if mode != GateMode::Open && (len == 0 || len > max) {
                    return Err(Error::new(
                        "ring.gate.len",
                        ErrorKind::OutOfRange { value: len, max },
                    ));
                }
                Descriptor::GateSet {
                    entry: le32(s, TAG),
                    pid: le32(s, PID),
                    va,
                    len,
                    mode,
                }
            }
            Kind::GateDirty => match le64(s, C) {
                0 => return Err(Error::new("ring.gate.mask", ErrorKind::Inconsistent)),
                mask => Descriptor::GateDirty {
                    entry: le32(s, TAG),
                    pid: le32(s, PID),
                    va: le64(s, A),
                    mask,
                },
            },
        };
        // Re-encode and compare: any byte the kind does not use must be zero,
        // so two encodings of one command never differ.
        let mut canon = [0u8; SLOT_LEN];
        d.emit(&mut canon)?;
        if let Some(i) = (0..CRC.start).find(|&i| canon[i] != s[i]) {
            return Err(Error::new(
                slot_field_name(i),
                ErrorKind::Reserved(s[i] as u64),
            ));
        }
        Ok(d)
    }
}

/// The fragments of control datagram `bytes` (1..=[`MAX_CONTROL_LEN`]
/// bytes; `None` otherwise), to push back to back on the ring of `dir`.
pub fn control_fragments(
    tag: u32,
    seq: u32,
    bytes: &[u8],
    dir: Direction,
) -> Option<impl Iterator<Item = Descriptor> + '_> {
    if bytes.is_empty() || bytes.len() > MAX_CONTROL_LEN {
        return None;
    }
    let count = bytes.len().div_ceil(CONTROL_FRAGMENT) as u8;
    Some(
        bytes
            .chunks(CONTROL_FRAGMENT)
            .enumerate()
            .map(move |(i, part)| {
                let mut data = [0u8; CONTROL_FRAGMENT];
                data[..part.len()].copy_from_slice(part);
                Descriptor::Control {
                    tag,
                    seq,
                    len: bytes.len() as u16,
                    index: i as u8,
                    count,
                    data,
                    dir,
                }
            }),
    )
}

/// Reassembles control datagrams from their fragments (one datagram at a
/// time: a ring's producer pushes a datagram's fragments back to back).
#[derive(Debug, Clone)]
pub struct ControlAssembler {
    buf: [u8; MAX_CONTROL_LEN],
    /// (tag, seq, len, next index) of the datagram being assembled.
    at: Option<(u32, u32, u16, u8)>,
    dropped: u64,
}

impl Default for ControlAssembler {
    fn default() -> Self {
        Self::new()
    }
}

impl ControlAssembler {
    /// Nothing assembled yet.
    pub const fn new() -> Self {
        ControlAssembler {
            buf: [0; MAX_CONTROL_LEN],
            at: None,
            dropped: 0,
        }
    }

    /// Datagrams dropped because a fragment was missing or out of order.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Takes one fragment; returns `(tag, seq, datagram)` when it completes
    /// one. A fragment that does not continue the datagram in progress drops
    /// that datagram (counted); a first fragment starts a new one.
    pub fn push(&mut self, d: &Descriptor) -> Option<(u32, u32, &[u8])> {
        let Descriptor::Control {
            tag,
            seq,
            len,
            index,
            count,
            data,
            ..
        } = *d
        else {
            return None;
        };
        let continues = matches!(self.at, Some((t, q, l, next)) if t == tag && q == seq && l == len && next == index);
        if !continues {
            if self.at.is_some() {
                self.dropped += 1;
            }
            self.at = None;
            if index != 0 {
                self.dropped += 1;
                return None;
            }
        }
        let start = usize::from(index) * CONTROL_FRAGMENT;
        let end = (start + CONTROL_FRAGMENT).min(usize::from(len));
        self.buf[start..end].copy_from_slice(&data[..end - start]);
        if index + 1 == count {
            self.at = None;
            Some((tag, seq, &self.buf[..usize::from(len)]))
        } else {
            self.at = Some((tag, seq, len, index + 1));
            None
        }
    }
}

/// Name of the descriptor field that holds byte `i` (for error messages).
pub const fn slot_field_name(i: usize) -> &'static str {
    use slot_field::*;
    match i {
        KIND => "ring.kind",
        FLAGS => "ring.flags",
        PAGE_SHIFT => "ring.page_shift",
        STATUS => "ring.status",
        4..=7 => "ring.pid",
        8..=11 => "ring.tag",
        12..=15 => "ring.req_id",
        16..=23 => "ring.a",
        24..=31 => "ring.b",
        32..=39 => "ring.c",
        40..=47 => "ring.d",
        48..=55 => "ring.e",
        56..=59 => "ring.f",
        _ => "ring.crc",
    }
}

/// Zero-copy view of a ring header.
#[derive(Debug, Clone)]
pub struct RingHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RingHeader<T> {
    /// Wrap a buffer of at least [`HEADER_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let n = buffer.as_ref().len();
        if n < HEADER_LEN {
            return Err(Error::truncated("ring.header", HEADER_LEN, n));
        }
        Ok(RingHeader { buffer })
    }
    /// Magic.
    pub fn magic(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::MAGIC)
    }
    /// Version.
    pub fn version(&self) -> u16 {
        le16(self.buffer.as_ref(), header_field::VERSION)
    }
    /// Slot size.
    pub fn slot_size(&self) -> u16 {
        le16(self.buffer.as_ref(), header_field::SLOT_SIZE)
    }
    /// Slot count.
    pub fn slot_count(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::SLOT_COUNT)
    }
    /// Producer index.
    pub fn head(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::HEAD)
    }
    /// Doorbell counter.
    pub fn doorbell(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::DOORBELL)
    }
    /// Consumer index.
    pub fn tail(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::TAIL)
    }
    /// Rejected-slot counter.
    pub fn rejected(&self) -> u32 {
        le32(self.buffer.as_ref(), header_field::REJECTED)
    }
    /// Validate magic, version, slot size and count; returns the count.
    pub fn check(&self) -> Result<u32> {
        if self.magic() != MAGIC {
            return Err(Error::new(
                "ring.magic",
                ErrorKind::Unknown(self.magic() as u64),
            ));
        }
        if self.version() != VERSION {
            return Err(Error::new(
                "ring.version",
                ErrorKind::Unknown(self.version() as u64),
            ));
        }
        if self.slot_size() as usize != SLOT_LEN {
            return Err(Error::new(
                "ring.slot_size",
                ErrorKind::Unknown(self.slot_size() as u64),
            ));
        }
        let n = self.slot_count();
        if n == 0 || !n.is_power_of_two() {
            return Err(Error::new("ring.slot_count", ErrorKind::Unknown(n as u64)));
        }
        let used = self.head().wrapping_sub(self.tail());
        if used > n {
            return Err(Error::new(
                "ring.head",
                ErrorKind::OutOfRange {
                    value: used as u64,
                    max: n as u64,
                },
            ));
        }
        Ok(n)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RingHeader<T> {
    /// Initialise an empty ring of `slot_count` slots.
    pub fn init(&mut self, slot_count: u32) -> Result<()> {
        if slot_count == 0 || !slot_count.is_power_of_two() {
            return Err(Error::new(
                "ring.slot_count",
                ErrorKind::Unknown(slot_count as u64),
            ));
        }
        let b = self.buffer.as_mut();
        b[..HEADER_LEN].fill(0);
        set_le32(b, header_field::MAGIC, MAGIC);
        set_le16(b, header_field::VERSION, VERSION);
        set_le16(b, header_field::SLOT_SIZE, SLOT_LEN as u16);
        set_le32(b, header_field::SLOT_COUNT, slot_count);
        Ok(())
    }
    /// Set the producer index.
    pub fn set_head(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), header_field::HEAD, v)
    }
    /// Set the doorbell counter.
    pub fn set_doorbell(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), header_field::DOORBELL, v)
    }
    /// Set the consumer index.
    pub fn set_tail(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), header_field::TAIL, v)
    }
    /// Set the rejected counter.
    pub fn set_rejected(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), header_field::REJECTED, v)
    }
}

/// Bytes of a ring of `slot_count` slots, header included.
pub const fn ring_bytes(slot_count: u32) -> usize {
    HEADER_LEN + slot_count as usize * SLOT_LEN
}

/// Byte offset of slot `index` (free-running) within a ring.
pub const fn slot_offset(index: u32, slot_count: u32) -> usize {
    HEADER_LEN + (index & (slot_count - 1)) as usize * SLOT_LEN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_init_and_check() {
        let mut b = [0u8; HEADER_LEN];
        let mut h = RingHeader::new_checked(&mut b[..]).unwrap();
        h.init(8).unwrap();
        assert_eq!(h.check().unwrap(), 8);
        h.set_head(9);
        assert_eq!(h.check().unwrap_err().field, "ring.head");
        assert_eq!(&b[..12], &[0x43, 0x4c, 0x52, 0x47, 1, 0, 64, 0, 8, 0, 0, 0]);
        assert_eq!(
            RingHeader::new_checked(&mut b[..])
                .unwrap()
                .init(6)
                .unwrap_err()
                .field,
            "ring.slot_count"
        );
    }

    #[test]
    fn descriptor_direction_and_reserved() {
        let d = Descriptor::FreePaPush {
            page_shift: 22,
            ppn: 77,
        };
        let mut s = [0u8; SLOT_LEN];
        d.emit(&mut s).unwrap();
        assert_eq!(Descriptor::parse(&s, Direction::Tx).unwrap(), d);
        assert_eq!(
            Descriptor::parse(&s, Direction::Rx).unwrap_err().field,
            "ring.kind"
        );
        // A stray byte in an unused operand, with a fixed-up CRC, is rejected by name.
        s[44] = 1;
        let crc = crc32c(&s[..60]);
        s[60..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Descriptor::parse(&s, Direction::Tx).unwrap_err().field,
            "ring.d"
        );
        s[44] = 0;
        assert_eq!(
            Descriptor::parse(&s, Direction::Tx).unwrap_err().field,
            "ring.crc"
        );
    }

    #[test]
    fn gate_descriptors() {
        let set = Descriptor::GateSet {
            entry: 3,
            pid: 7,
            va: 0x40_0000,
            len: GATE_MAX_TRACKED,
            mode: GateMode::Tracking,
        };
        let mut s = [0u8; SLOT_LEN];
        set.emit(&mut s).unwrap();
        assert_eq!(
            &s[..16],
            &[0x8d, 0, 0, 2, 7, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(Descriptor::parse(&s, Direction::Tx).unwrap(), set);
        assert_eq!(
            Descriptor::parse(&s, Direction::Rx).unwrap_err().field,
            "ring.kind"
        );
        let bad = |d: Descriptor| {
            let mut s = [0u8; SLOT_LEN];
            d.emit(&mut s).unwrap();
            Descriptor::parse(
                &s,
                if d.kind().is_rx() {
                    Direction::Rx
                } else {
                    Direction::Tx
                },
            )
            .unwrap_err()
            .field
        };
        // A tracked range over one bitmap, an empty range, a range past the end.
        let track = |len| Descriptor::GateSet {
            entry: 0,
            pid: 1,
            va: 0,
            len,
            mode: GateMode::Tracking,
        };
        assert_eq!(bad(track(GATE_MAX_TRACKED + 1)), "ring.gate.len");
        assert_eq!(bad(track(0)), "ring.gate.len");
        let wrap = Descriptor::GateSet {
            entry: 0,
            pid: 1,
            va: u64::MAX - 4,
            len: 6,
            mode: GateMode::Moved,
        };
        assert_eq!(bad(wrap), "ring.gate.len");
        // Clearing takes any range; an unknown mode is named.
        let open = Descriptor::GateSet {
            entry: 9,
            pid: 0,
            va: 0,
            len: 0,
            mode: GateMode::Open,
        };
        open.emit(&mut s).unwrap();
        assert_eq!(Descriptor::parse(&s, Direction::Tx).unwrap(), open);
        s[slot_field::STATUS] = 5;
        let crc = crc32c(&s[..60]);
        s[60..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Descriptor::parse(&s, Direction::Tx).unwrap_err().field,
            "ring.gate.mode"
        );
        let dirty = Descriptor::GateDirty {
            entry: 1,
            pid: 2,
            va: 0x80_0000,
            mask: 0b101,
        };
        dirty.emit(&mut s).unwrap();
        assert_eq!(s[0], 0x0d);
        assert_eq!(Descriptor::parse(&s, Direction::Rx).unwrap(), dirty);
        let none = Descriptor::GateDirty {
            entry: 1,
            pid: 2,
            va: 0,
            mask: 0,
        };
        assert_eq!(bad(none), "ring.gate.mask");
    }

    #[test]
    fn golden_reply() {
        let d = Descriptor::Reply {
            tag: 5,
            pid: 2,
            req_id: 9,
            status: 0,
            va: 0x40_0000,
            size: 0x80_0000,
            retries: 3,
            moved: true,
        };
        let mut s = [0u8; SLOT_LEN];
        d.emit(&mut s).unwrap();
        assert_eq!(
            &s[..16],
            &[0x85, 1, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0]
        );
        assert_eq!(
            &s[16..32],
            &[0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0]
        );
        assert_eq!(&s[56..60], &[3, 0, 0, 0]);
        assert_eq!(Descriptor::parse(&s, Direction::Tx).unwrap(), d);
    }
}

/// The checks every fragment kind shares: `len` in `1..=max`, `count` the
/// fragments of `N` bytes `len` takes, `index` below `count`, and zeros
/// after the datagram's end (one datagram, one encoding); the fragment's
/// bytes. `names`: the fields named by the length, count and index errors.
fn fragment<const N: usize>(
    s: &[u8],
    len: u32,
    (index, count): (u16, u16),
    max: usize,
    names: [&'static str; 3],
) -> Result<[u8; N]> {
    if len == 0 || len as usize > max {
        return Err(Error::new(
            names[0],
            ErrorKind::OutOfRange {
                value: u64::from(len),
                max: max as u64,
            },
        ));
    }
    if usize::from(count) != (len as usize).div_ceil(N) {
        return Err(Error::new(names[1], ErrorKind::Inconsistent));
    }
    if index >= count {
        return Err(Error::new(names[2], ErrorKind::Inconsistent));
    }
    let mut data = [0u8; N];
    data.copy_from_slice(&s[slot_field::A.start..slot_field::E.end]);
    let used = (len as usize - usize::from(index) * N).min(N);
    if let Some(i) = data[used..].iter().position(|&b| b != 0) {
        return Err(Error::new(
            slot_field_name(slot_field::A.start + used + i),
            ErrorKind::Reserved(u64::from(data[used + i])),
        ));
    }
    Ok(data)
}

/// Datagram bytes one `OFFLOAD_REQ`/`OFFLOAD_REPLY` fragment carries
/// (operands `a..e`).
pub const OFFLOAD_FRAGMENT: usize = 40;

/// Longest offload datagram the rings carry: an answer of up to a 64 KiB
/// response bound with its head, or a request of a jumbo-frame MTU with its
/// Clio header, with room to spare (128 KiB, 3 277 fragments).
pub const MAX_OFFLOAD_LEN: usize = 128 * 1024;

/// The head of an `OFFLOAD_REPLY` datagram: the Clio status the fast path
/// answers the call with (`status` u8, then three zero bytes); the answer's
/// payload follows.
///
/// ```text
/// +0 status u8 | reserved u8 x3 (zero) | payload ...
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffloadReplyHead {
    /// The status of the answer.
    pub status: crate::Status,
}

impl OffloadReplyHead {
    /// Bytes of the head.
    pub const LEN: usize = 4;

    /// The head's bytes.
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        [self.status.raw(), 0, 0, 0]
    }

    /// Split an `OFFLOAD_REPLY` datagram into its head and the answer's
    /// payload; a short datagram, an unknown status or nonzero reserved
    /// bytes are refused naming the field.
    pub fn split(datagram: &[u8]) -> Result<(OffloadReplyHead, &[u8])> {
        if datagram.len() < Self::LEN {
            return Err(Error::truncated(
                "ring.offload_reply",
                Self::LEN,
                datagram.len(),
            ));
        }
        let status = crate::Status::parse(datagram[0])?;
        if datagram[1..Self::LEN] != [0, 0, 0] {
            return Err(Error::new(
                "ring.offload_reply.reserved",
                ErrorKind::Reserved(u64::from(le32(datagram, 0..4) >> 8)),
            ));
        }
        Ok((OffloadReplyHead { status }, &datagram[Self::LEN..]))
    }
}

/// The fragments of offload datagram `bytes` (1..=[`MAX_OFFLOAD_LEN`]
/// bytes; `None` otherwise), to push back to back on the ring of `dir`.
pub fn offload_fragments(
    tag: u32,
    seq: u32,
    bytes: &[u8],
    dir: Direction,
) -> Option<impl Iterator<Item = Descriptor> + '_> {
    if bytes.is_empty() || bytes.len() > MAX_OFFLOAD_LEN {
        return None;
    }
    let count = offload_fragment_count(bytes.len());
    Some(
        bytes
            .chunks(OFFLOAD_FRAGMENT)
            .enumerate()
            .map(move |(i, part)| {
                let mut data = [0u8; OFFLOAD_FRAGMENT];
                data[..part.len()].copy_from_slice(part);
                Descriptor::Offload {
                    tag,
                    seq,
                    len: bytes.len() as u32,
                    index: i as u16,
                    count,
                    data,
                    dir,
                }
            }),
    )
}

/// Fragments of an offload datagram of `len` bytes.
pub const fn offload_fragment_count(len: usize) -> u16 {
    len.div_ceil(OFFLOAD_FRAGMENT) as u16
}

/// Reassembles offload datagrams of up to `N` bytes from their fragments
/// (one datagram at a time, as for [`ControlAssembler`]). A datagram longer
/// than `N` is dropped (counted): the consumer sizes `N` to the longest
/// datagram it serves.
#[derive(Debug, Clone)]
pub struct OffloadAssembler<const N: usize> {
    buf: [u8; N],
    /// (tag, seq, len, next index) of the datagram being assembled.
    at: Option<(u32, u32, u32, u16)>,
    /// (tag, seq) of a datagram too long to hold, whose fragments are skipped.
    skip: Option<(u32, u32)>,
    dropped: u64,
}

impl<const N: usize> Default for OffloadAssembler<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> OffloadAssembler<N> {
    /// Nothing assembled yet.
    pub const fn new() -> Self {
        OffloadAssembler {
            buf: [0; N],
            at: None,
            skip: None,
            dropped: 0,
        }
    }

    /// Datagrams dropped: a fragment missing or out of order, or longer
    /// than `N`.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Takes one fragment; returns `(tag, seq, datagram)` when it completes
    /// one. A fragment that does not continue the datagram in progress drops
    /// that datagram (counted); a first fragment starts a new one.
    pub fn push(&mut self, d: &Descriptor) -> Option<(u32, u32, &[u8])> {
        let Descriptor::Offload {
            tag,
            seq,
            len,
            index,
            count,
            data,
            ..
        } = *d
        else {
            return None;
        };
        if index != 0 && self.skip == Some((tag, seq)) {
            return None;
        }
        self.skip = None;
        let continues = matches!(self.at, Some((t, q, l, next)) if t == tag && q == seq && l == len && next == index);
        if !continues {
            if self.at.is_some() {
                self.dropped += 1;
            }
            self.at = None;
            if index != 0 {
                self.dropped += 1;
                return None;
            }
            if len as usize > N {
                // Too long to hold: dropped once, its other fragments skipped.
                self.dropped += 1;
                self.skip = Some((tag, seq));
                return None;
            }
        }
        let start = usize::from(index) * OFFLOAD_FRAGMENT;
        let end = (start + OFFLOAD_FRAGMENT).min(len as usize);
        self.buf[start..end].copy_from_slice(&data[..end - start]);
        if index + 1 == count {
            self.at = None;
            Some((tag, seq, &self.buf[..len as usize]))
        } else {
            self.at = Some((tag, seq, len, index + 1));
            None
        }
    }
}
