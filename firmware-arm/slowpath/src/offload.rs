//! Offloads in the slow path: programs at the memory node, reached by
//! `OFFLOAD_CALL`, running on the ARM with their own address space.
//!
//! The fast path does not serve `OFFLOAD_CALL` itself; a board whose fast
//! path passes the call to the slow path (the model's
//! `FastPath::forward_offloads_to_slow_path`; the RTL built with
//! `OFFLOAD_TAGS` = 64) sends the
//! checked request, Clio header and payload, as `OFFLOAD_REQ` fragments on
//! the RX ring, and answers the call from the `OFFLOAD_REPLY` fragments that
//! come back ([`clio_wire::ring::OffloadReplyHead`] then the answer's
//! payload). [`OffloadHost`] is this side: the registry of offloads by id,
//! the exactly-once records, and the answers, with the same statuses and
//! payload bytes as the emulator's offload engine (`clio_emu::offload`) gives
//! for the same call:
//!
//! - an `OffloadCallReq` that does not parse: `MALFORMED`;
//! - an id nobody registered: `NO_SUCH_OFFLOAD`;
//! - [`OffloadError::Refused`] (code ≠ 0): `OFFLOAD_REFUSED` with the code;
//! - [`OffloadError::Fault`] (a memory access refused, a result over its
//!   bound, a broken invariant of the offload, a refusal without a code):
//!   `OFFLOAD_FAULT`; the board keeps serving every other call;
//! - a batch (`OFFLOAD_OP_BATCH`): each operation as its own call, each
//!   with its own outcome, `TOO_LARGE` if its answer could outgrow the bound.
//!
//! **Memory.** An offload sees its own address space through
//! [`OffloadMemory`]: `alloc`, `read`, `write`, `cas` on VAs of its own PID,
//! a PID the board holds for it (the lowest free one, taken at its first
//! call, as a session would be). Allocation is the slow path's own
//! ([`SlowPath::alloc_mapped`]: the overflow-free placement and the memory
//! quota of every PID, pages backed at once) and translation is the slow
//! path's page table ([`SlowPath::translate`]); the bytes are reached
//! directly in board DRAM ([`PhysMem`]), as the dissertation's ARM-side
//! offloads do, not as packets through the fast path. An access to a VA
//! that no mapped page of its PID holds, or against the page's permissions,
//! is refused (`UNMAPPED`, `PERMISSION`) and the call faults. An offload
//! may instead work in the **caller's** address space for one call
//! ([`OffloadMemory::use_caller_space`], Clio-DF): the call's header
//! credentials are checked against the session table first, then the
//! caller's PID, permissions and quota apply ([`DirectMem`]).
//!
//! **Bounds.** No heap: `N` offloads, `R` remembered answers of up to `B`
//! payload bytes each, one request of up to [`MAX_CALL`] bytes assembled at
//! a time. An offload must not panic (nothing catches it on the board); every
//! failure is an [`OffloadError`].
//!
//! **Exactly-once.** An `OFFLOAD_CALL` is non-idempotent; its answer is
//! remembered per (session, first attempt's request id) and replayed to
//! retries, and forgotten when the session's `ack` passes it or when `R`
//! newer answers pushed it out.

use crate::machine::{SlowPath, TxSink};
use crate::SlowPathError;
use clio_wire::clio::{serial_before, HEADER_LEN};
use clio_wire::payload::{
    perms, OffloadBatchReq, OffloadBatchResult, OffloadCallReq, OffloadCallResp, OFFLOAD_OP_BATCH,
};
use clio_wire::ring::{
    offload_fragment_count, offload_fragments, Descriptor, Direction, OffloadAssembler,
    OffloadReplyHead,
};
use clio_wire::{Header, Packet, Status};

pub mod df;
pub mod kv;
pub mod mv;
pub mod tally;

/// Longest `OFFLOAD_REQ` datagram assembled: a Clio header and a payload of
/// up to a 9 000-byte jumbo MTU.
pub const MAX_CALL: usize = HEADER_LEN + 9000;

/// Bytes of an answer datagram's head.
const P: usize = OffloadReplyHead::LEN;

/// A memory access of an offload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    /// `alloc`.
    Alloc,
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `cas`.
    Cas,
    /// `use_caller_space`: joining the caller's address space.
    Join,
}

/// A memory access of an offload that was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemFault {
    /// The access.
    pub op: MemOp,
    /// Its VA (0 for `alloc`).
    pub va: u64,
    /// Why, as the fast path would answer a client: `UNMAPPED`,
    /// `PERMISSION`, `OVER_QUOTA`, `OUT_OF_MEMORY`, `BUSY`, ...
    pub status: Status,
}

/// Why an offload's call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadError {
    /// The offload refuses the call for its own reason (not 0): answered
    /// `OFFLOAD_REFUSED` with this code.
    Refused(u16),
    /// The offload faulted: answered `OFFLOAD_FAULT`.
    Fault(Fault),
}

/// What went wrong in a faulting call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A memory access was refused.
    Mem(MemFault),
    /// The result outgrew the room the call has.
    ResultTooLarge,
    /// The offload found its own state inconsistent.
    Broken(&'static str),
}

impl From<MemFault> for OffloadError {
    fn from(e: MemFault) -> Self {
        OffloadError::Fault(Fault::Mem(e))
    }
}

impl MemFault {
    /// What a store answers for this fault: the store's own refusal `full` when
    /// memory ran out (quota, board memory, a size past the limit), which the client
    /// can act on; a fault otherwise.
    pub fn refused_if_full(self, full: u16) -> OffloadError {
        match self.status {
            Status::OverQuota | Status::OutOfMemory | Status::TooLarge => {
                OffloadError::Refused(full)
            }
            _ => OffloadError::from(self),
        }
    }
}

/// A bump allocator carving a store's small objects out of larger allocations of
/// its address space (one `alloc` per chunk instead of one per object).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Carver {
    at: u64,
    end: u64,
}

impl Carver {
    /// No chunk yet: the first carve allocates one.
    pub const fn new() -> Self {
        Carver { at: 0, end: 0 }
    }

    /// `bytes` from the current chunk, or from a new chunk of `chunk` bytes
    /// (at least `bytes`) when they do not fit; what is left of the old chunk stays
    /// unused in the address space.
    pub fn carve(
        &mut self,
        mem: &mut dyn OffloadMemory,
        bytes: u64,
        chunk: u64,
    ) -> Result<u64, MemFault> {
        if self.at + bytes > self.end {
            let size = chunk.max(bytes);
            let c = mem.alloc(size)?;
            self.at = c;
            self.end = c + size;
        }
        let va = self.at;
        self.at += bytes;
        Ok(va)
    }
}

/// An offload's view of its own address space.
pub trait OffloadMemory {
    /// Allocate `size` bytes (read/write); the VA. Fresh memory reads zero.
    fn alloc(&mut self, size: u64) -> Result<u64, MemFault>;
    /// Read `buf.len()` bytes at `va`.
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MemFault>;
    /// Write `data` at `va`.
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemFault>;
    /// Compare-and-swap the little-endian 8-byte word at `va`; the old value.
    fn cas(&mut self, va: u64, expected: u64, new: u64) -> Result<u64, MemFault>;
    /// A hint that `len` bytes at `va` are read soon: where this side can,
    /// it starts bringing them into the CPU's caches, with no effect on
    /// memory or on any answer (the emulator's direct access). By default
    /// nothing.
    fn prefetch(&mut self, va: u64, len: usize) {
        let _ = (va, len);
    }
    /// Hand the `len` bytes at `va` to `f` where they lie, when this side
    /// can without copying them into a buffer first (the emulator's direct
    /// access); `None` when it cannot (nothing was read: use
    /// [`OffloadMemory::read`]). By default `None`.
    fn read_in_place(
        &mut self,
        va: u64,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Option<Result<(), MemFault>> {
        let _ = (va, len, f);
        None
    }
    /// Work in the caller's address space (the PID that sent this call)
    /// from now until [`OffloadMemory::use_own_space`] or the end of the
    /// call (a batch: of the operation): every `alloc`, `read` and `write`
    /// then acts on the caller's memory, under the caller's permissions and
    /// quota, once the caller's session is proven (open, for that PID, with
    /// that key, this boot). Returns the caller's PID. By default refused
    /// (`BAD_SESSION`): a side that cannot check the caller offers nothing.
    fn use_caller_space(&mut self) -> Result<u32, MemFault> {
        Err(MemFault {
            op: MemOp::Join,
            va: 0,
            status: Status::BadSession,
        })
    }
    /// Work in the offload's own address space again (the default).
    fn use_own_space(&mut self) {}
    /// The board's MTU payload, where this side knows it (an offload may
    /// size its reads by it). By default `None`.
    fn mtu(&self) -> Option<usize> {
        None
    }
}

/// Where a call's result bytes go: a bounded buffer.
#[derive(Debug)]
pub struct Results<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl<'b> Results<'b> {
    /// Results into `buf` (its length is the bound).
    pub fn new(buf: &'b mut [u8]) -> Self {
        Results { buf, len: 0 }
    }

    /// Append `bytes`; a fault if they do not fit.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), OffloadError> {
        let end = self.len + bytes.len();
        let dst = self
            .buf
            .get_mut(self.len..end)
            .ok_or(OffloadError::Fault(Fault::ResultTooLarge))?;
        dst.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// Bytes appended.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes appended.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// An offload: one program at the memory node, serving calls.
pub trait Offload {
    /// Short name (for logs).
    fn name(&self) -> &'static str;

    /// Serve operation `op` with `args`, appending the result to `out`;
    /// every memory access goes through `mem`. Must not panic.
    fn call(
        &mut self,
        mem: &mut dyn OffloadMemory,
        op: u16,
        args: &[u8],
        out: &mut Results<'_>,
    ) -> Result<(), OffloadError>;

    /// Most result bytes operation `op` returns, when known (a batch's
    /// answer is sized with it; see `clio_emu::Offload::max_result`).
    fn max_result(&self, op: u16) -> Option<usize> {
        let _ = op;
        None
    }

    /// A batch's operations (`op`, `args`), before they run in order: a
    /// hint to look ahead (e.g. [`OffloadMemory::prefetch`] what they will
    /// touch). Must change nothing any call's answer depends on. By
    /// default nothing.
    fn prepare(&mut self, mem: &mut dyn OffloadMemory, ops: &[(u16, &[u8])]) {
        let _ = (mem, ops);
    }
}

/// Board DRAM as the ARM reaches it, by physical address.
pub trait PhysMem {
    /// Read `buf.len()` bytes at `pa`; `false` if the range is not DRAM
    /// this side may touch.
    fn read(&mut self, pa: u64, buf: &mut [u8]) -> bool;
    /// Write `data` at `pa`; `false` as for `read`.
    fn write(&mut self, pa: u64, data: &[u8]) -> bool;
    /// Before this side reads or writes `len` bytes at `pa` that the fast
    /// path reads and writes too (a client's page): drop this side's cached
    /// copy so it sees DRAM (clean and invalidate). By default nothing (a
    /// side whose accesses are coherent with the fast path's).
    fn sync_from_device(&mut self, pa: u64, len: usize) {
        let _ = (pa, len);
    }
    /// After this side wrote `len` bytes at `pa` of such a page: push them
    /// to DRAM, where the fast path reads (clean). By default nothing.
    fn sync_to_device(&mut self, pa: u64, len: usize) {
        let _ = (pa, len);
    }
}

/// [`PhysMem`] over a byte slice holding DRAM from physical address `base`
/// (the emulator's in-process board, tests).
#[derive(Debug)]
pub struct SliceDram<'m> {
    /// Physical address of `bytes[0]`.
    pub base: u64,
    /// The DRAM.
    pub bytes: &'m mut [u8],
}

impl SliceDram<'_> {
    fn range(&self, pa: u64, n: usize) -> Option<core::ops::Range<usize>> {
        let off = usize::try_from(pa.checked_sub(self.base)?).ok()?;
        let end = off.checked_add(n)?;
        (end <= self.bytes.len()).then_some(off..end)
    }
}

impl PhysMem for SliceDram<'_> {
    fn read(&mut self, pa: u64, buf: &mut [u8]) -> bool {
        match self.range(pa, buf.len()) {
            Some(r) => {
                buf.copy_from_slice(&self.bytes[r]);
                true
            }
            None => false,
        }
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        match self.range(pa, data.len()) {
            Some(r) => {
                self.bytes[r].copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

/// An offload's address space on the ARM: its PID's ranges, placed and
/// translated by the slow path, reached directly in DRAM. Calls are served
/// one at a time by one core, and no client holds a session on the PID, so
/// a `cas` is a read and a conditional write.
///
/// With the call's [`Caller`] ([`DirectMem::with_caller`]), the offload may
/// also work in the caller's address space
/// ([`OffloadMemory::use_caller_space`]): the caller's session is checked
/// against the slow path's session table (open, for the header's PID, with
/// its key, in this boot's epoch), as `OPEN_SESSION`'s join checks it on the
/// emulator's engine; translation and permissions are then the caller's
/// PID's pages, a page the caller allocated but never touched is backed on
/// first access ([`SlowPath::back_page`], as the fast path's first touch
/// would), `alloc` is charged to the caller's quota, and nothing of any
/// other PID is reachable. A `cas` there is refused (`UNSUPPORTED`): the
/// ARM's read-then-write is not atomic against the fast path's sync unit,
/// which serves the caller's own atomics meanwhile.
pub struct DirectMem<'c, 'a> {
    core: &'c mut SlowPath<'a>,
    pid: u32,
    phys: &'c mut dyn PhysMem,
    sink: &'c mut dyn TxSink,
    caller: Option<Caller>,
    in_caller: bool,
    mtu: Option<usize>,
}

/// The credentials a call arrived with (its Clio header's, which the fast
/// path checked before passing the call on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The caller's PID.
    pub pid: u32,
    /// Its session id.
    pub session: u16,
    /// The session's boot epoch.
    pub epoch: u32,
    /// The session's key.
    pub key: u64,
}

impl Caller {
    /// The credentials of a request's header.
    pub fn of(h: &Header) -> Caller {
        Caller {
            pid: h.pid,
            session: h.session,
            epoch: h.epoch,
            key: h.key,
        }
    }
}

impl core::fmt::Debug for DirectMem<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DirectMem")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl<'c, 'a> DirectMem<'c, 'a> {
    /// The address space of `pid` (held by the board), over `phys`; the
    /// board-table commands of its allocations go to `sink`.
    pub fn new(
        core: &'c mut SlowPath<'a>,
        pid: u32,
        phys: &'c mut dyn PhysMem,
        sink: &'c mut dyn TxSink,
    ) -> Self {
        DirectMem {
            core,
            pid,
            phys,
            sink,
            caller: None,
            in_caller: false,
            mtu: None,
        }
    }

    /// The same, on a board with MTU payload `mtu`
    /// ([`OffloadMemory::mtu`]).
    pub fn with_mtu(mut self, mtu: usize) -> Self {
        self.mtu = Some(mtu);
        self
    }

    /// The same, for a call from `caller` (whose space the offload may
    /// then use, see [`DirectMem`]).
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// The PID whose space accesses use now.
    fn space(&self) -> u32 {
        match (self.in_caller, self.caller) {
            (true, Some(c)) => c.pid,
            _ => self.pid,
        }
    }

    /// Where `at` lives in the space in use: in the caller's, a page it
    /// allocated but never touched is backed now.
    fn locate(&mut self, at: u64) -> Result<(u64, u64, u8), Status> {
        let pid = self.space();
        if let Some(t) = self.core.translate(pid, at) {
            return Ok(t);
        }
        if !self.in_caller {
            return Err(Status::Unmapped);
        }
        // An earlier page's board-table write goes out first.
        if !self.core.ready() {
            self.core.pump(&mut *self.sink);
        }
        let r = self.core.back_page(pid, at).map_err(|e| match e {
            SlowPathError::Busy => Status::Busy,
            other => other.status(),
        })?;
        self.core.pump(&mut *self.sink);
        Ok(r)
    }

    /// `f(pa, offset, len)` over the pieces of `[va, va + len)`, page by
    /// page, each checked for `need` permissions.
    fn pieces(
        &mut self,
        op: MemOp,
        va: u64,
        len: usize,
        need: u8,
        mut f: impl FnMut(&mut dyn PhysMem, u64, usize, usize) -> bool,
    ) -> Result<(), MemFault> {
        let mut done = 0usize;
        while done < len {
            let at = va.wrapping_add(done as u64);
            let fault = |status| MemFault { op, va: at, status };
            let (pa, left, p) = self.locate(at).map_err(fault)?;
            if p & need != need {
                return Err(fault(Status::Permission));
            }
            let n = (len - done).min(usize::try_from(left).unwrap_or(usize::MAX));
            if !f(self.phys, pa, done, n) {
                return Err(fault(Status::Corrupt));
            }
            done += n;
        }
        Ok(())
    }
}

impl OffloadMemory for DirectMem<'_, '_> {
    fn alloc(&mut self, size: u64) -> Result<u64, MemFault> {
        let fault = |status| MemFault {
            op: MemOp::Alloc,
            va: 0,
            status,
        };
        // A client's request whose commands are still going out goes first.
        if !self.core.ready() {
            self.core.pump(&mut *self.sink);
        }
        let r = self.core.alloc_mapped(self.space(), size).map_err(|e| {
            fault(match e {
                SlowPathError::Busy => Status::Busy,
                other => other.status(),
            })
        })?;
        // Emit the board-table writes now where the ring has room (the
        // poll loop finishes them otherwise).
        self.core.pump(&mut *self.sink);
        Ok(r.start)
    }

    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let len = buf.len();
        // The caller's pages are the fast path's too (its own are not).
        let shared = self.in_caller;
        self.pieces(MemOp::Read, va, len, perms::READ, |m, pa, off, n| {
            if shared {
                m.sync_from_device(pa, n);
            }
            m.read(pa, &mut buf[off..off + n])
        })
    }

    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemFault> {
        let shared = self.in_caller;
        self.pieces(
            MemOp::Write,
            va,
            data.len(),
            perms::WRITE,
            |m, pa, off, n| {
                if shared {
                    m.sync_from_device(pa, n);
                }
                let ok = m.write(pa, &data[off..off + n]);
                if shared {
                    m.sync_to_device(pa, n);
                }
                ok
            },
        )
    }

    fn cas(&mut self, va: u64, expected: u64, new: u64) -> Result<u64, MemFault> {
        if self.in_caller {
            return Err(MemFault {
                op: MemOp::Cas,
                va,
                status: Status::Unsupported,
            });
        }
        if va % 8 != 0 {
            return Err(MemFault {
                op: MemOp::Cas,
                va,
                status: Status::Malformed,
            });
        }
        let mut w = [0u8; 8];
        self.pieces(MemOp::Cas, va, 8, perms::RW, |m, pa, _, n| {
            m.read(pa, &mut w[..n])
        })?;
        let old = u64::from_le_bytes(w);
        if old == expected {
            let b = new.to_le_bytes();
            self.pieces(MemOp::Cas, va, 8, perms::RW, |m, pa, _, n| {
                m.write(pa, &b[..n])
            })?;
        }
        Ok(old)
    }

    fn use_caller_space(&mut self) -> Result<u32, MemFault> {
        let refused = |status| MemFault {
            op: MemOp::Join,
            va: 0,
            status,
        };
        let c = self.caller.ok_or(refused(Status::BadSession))?;
        // The join's checks: the session open for this PID with this key,
        // in this boot (the fast path checked the same; the slow path's
        // table is the one it was installed from).
        let proven = c.pid != 0
            && c.epoch == self.core.epoch()
            && self
                .core
                .session(c.session)
                .is_some_and(|s| s.pid == c.pid && s.key == c.key);
        if !proven {
            return Err(refused(Status::BadSession));
        }
        self.in_caller = true;
        Ok(c.pid)
    }

    fn use_own_space(&mut self) {
        self.in_caller = false;
    }

    fn mtu(&self) -> Option<usize> {
        self.mtu
    }
}

/// Counters of the offload host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OffloadStats {
    /// Calls (and batch operations) answered `OK`.
    pub ok: u64,
    /// Calls answered `OFFLOAD_REFUSED`.
    pub refused: u64,
    /// Calls answered `OFFLOAD_FAULT`.
    pub faults: u64,
    /// Calls answered `NO_SUCH_OFFLOAD`.
    pub unknown: u64,
    /// Calls answered `MALFORMED` (or `TOO_LARGE`).
    pub malformed: u64,
    /// Retries answered from the remembered answer.
    pub replays: u64,
    /// Requests dropped: a fragment missing, or longer than [`MAX_CALL`].
    pub dropped: u64,
}

/// One remembered answer.
#[derive(Debug, Clone, Copy)]
struct Record<const B: usize> {
    live: bool,
    session: u16,
    first: u32,
    status: Status,
    len: usize,
    bytes: [u8; B],
}

impl<const B: usize> Record<B> {
    const EMPTY: Self = Record {
        live: false,
        session: 0,
        first: 0,
        status: Status::Ok,
        len: 0,
        bytes: [0; B],
    };
}

/// One registered offload.
struct Entry<'o> {
    id: u32,
    offload: &'o mut dyn Offload,
    /// Its PID, held at its first call.
    pid: Option<u32>,
}

/// The offloads of one board and their exactly-once records: `N` offloads,
/// `R` answers remembered, answer datagrams of at most `B` bytes (the
/// payload at most `B - 4`: a single call's result is bounded by the MTU
/// too, a batch's answer by the response bound too).
pub struct OffloadHost<'o, const N: usize, const R: usize, const B: usize> {
    entries: heapless::Vec<Entry<'o>, N>,
    records: [Record<B>; R],
    /// Where the next record goes (the oldest is replaced).
    next_record: usize,
    calls: OffloadAssembler<MAX_CALL>,
    /// The answer datagram: its head, then up to `B - P` payload bytes.
    answer: [u8; B],
    mtu: usize,
    bound: usize,
    stats: OffloadStats,
}

impl<const N: usize, const R: usize, const B: usize> core::fmt::Debug for OffloadHost<'_, N, R, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OffloadHost")
            .field("offloads", &self.entries.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Why an offload could not be registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterError {
    /// Id 0 is reserved.
    ReservedId,
    /// The id is taken.
    Taken(u32),
    /// All `N` entries are used.
    Full,
}

impl<'o, const N: usize, const R: usize, const B: usize> OffloadHost<'o, N, R, B> {
    /// A host for a board with MTU payload `mtu` and response bound
    /// `max_response` (the fast path splits a longer answer into packets
    /// of `mtu`); answers are bounded by `B` too.
    pub const fn new(mtu: usize, max_response: usize) -> Self {
        let (mtu, bound) = Self::limits(mtu, max_response);
        OffloadHost {
            entries: heapless::Vec::new(),
            records: [Record::EMPTY; R],
            next_record: 0,
            calls: OffloadAssembler::new(),
            answer: [0; B],
            mtu,
            bound,
            stats: OffloadStats {
                ok: 0,
                refused: 0,
                faults: 0,
                unknown: 0,
                malformed: 0,
                replays: 0,
                dropped: 0,
            },
        }
    }

    /// Set the MTU payload and response bound (as [`OffloadHost::new`]):
    /// a host built with `new(0, 0)` is all zeros, so a `static` one sits
    /// in `.bss` rather than in the loaded image, and gets its limits at
    /// boot.
    pub fn set_limits(&mut self, mtu: usize, max_response: usize) {
        (self.mtu, self.bound) = Self::limits(mtu, max_response);
    }

    const fn limits(mtu: usize, max_response: usize) -> (usize, usize) {
        const fn min(a: usize, b: usize) -> usize {
            if a < b {
                a
            } else {
                b
            }
        }
        let room = B.saturating_sub(P);
        let bound = if max_response > mtu {
            max_response
        } else {
            mtu
        };
        (min(mtu, room), min(bound, room))
    }

    /// Register `offload` under `id` (not 0, not taken).
    pub fn register(&mut self, id: u32, offload: &'o mut dyn Offload) -> Result<(), RegisterError> {
        if id == 0 {
            return Err(RegisterError::ReservedId);
        }
        if self.entries.iter().any(|e| e.id == id) {
            return Err(RegisterError::Taken(id));
        }
        self.entries
            .push(Entry {
                id,
                offload,
                pid: None,
            })
            .map_err(|_| RegisterError::Full)
    }

    /// Counters.
    pub fn stats(&self) -> OffloadStats {
        let mut s = self.stats;
        s.dropped += self.calls.dropped();
        s
    }

    /// The PID of offload `id`'s address space, once it has one.
    pub fn pid_of(&self, id: u32) -> Option<u32> {
        self.entries.iter().find(|e| e.id == id).and_then(|e| e.pid)
    }

    /// TX slots one answer may take: room the poll loop keeps before it
    /// takes an RX slot, so an answer is never half-pushed.
    pub const fn max_reply_fragments() -> u32 {
        offload_fragment_count(B) as u32
    }

    /// One `OFFLOAD_REQ` fragment; a completed call is served and its
    /// answer pushed to `sink` as `OFFLOAD_REPLY` fragments (the caller
    /// checked the room for [`OffloadHost::max_reply_fragments`]). Returns
    /// whether a call was answered.
    pub fn fragment(
        &mut self,
        d: &Descriptor,
        core: &mut SlowPath<'_>,
        phys: &mut dyn PhysMem,
        sink: &mut dyn TxSink,
    ) -> bool {
        let Some((tag, seq, call)) = self.calls.push(d) else {
            return false;
        };
        // The request is copied out of the assembler so serving it may
        // borrow the host.
        let mut req = [0u8; MAX_CALL];
        let n = call.len();
        req[..n].copy_from_slice(call);
        let (status, len) = self.serve(&req[..n], core, phys, sink);
        self.answer[..P].copy_from_slice(&OffloadReplyHead { status }.to_bytes());
        match offload_fragments(tag, seq, &self.answer[..P + len], Direction::Tx) {
            Some(frags) => {
                for f in frags {
                    let _ = sink.push(&f);
                }
                true
            }
            None => false,
        }
    }

    /// Serve one request (header and payload): its status, with the
    /// answer's payload in `self.answer[P..P + len]`.
    fn serve(
        &mut self,
        pkt: &[u8],
        core: &mut SlowPath<'_>,
        phys: &mut dyn PhysMem,
        sink: &mut dyn TxSink,
    ) -> (Status, usize) {
        let p = Packet::new_unchecked(pkt);
        let Ok(h) = Header::parse(&p) else {
            self.stats.malformed += 1;
            return (Status::Malformed, 0);
        };
        let first = if h.retry_of != 0 {
            h.retry_of
        } else {
            h.req_id
        };
        if h.ack != 0 {
            for r in self.records.iter_mut() {
                if r.live && r.session == h.session && serial_before(r.first, h.ack) {
                    r.live = false;
                }
            }
        }
        if let Some(r) = self
            .records
            .iter()
            .find(|r| r.live && r.session == h.session && r.first == first)
        {
            self.stats.replays += 1;
            self.answer[P..P + r.len].copy_from_slice(&r.bytes[..r.len]);
            return (r.status, r.len);
        }
        let (status, len) = self.run(&h, p.payload(), core, phys, sink);
        if R > 0 {
            let r = &mut self.records[self.next_record];
            r.live = true;
            r.session = h.session;
            r.first = first;
            r.status = status;
            r.len = len;
            r.bytes[..len].copy_from_slice(&self.answer[P..P + len]);
            self.next_record = (self.next_record + 1) % R;
        }
        (status, len)
    }

    fn run(
        &mut self,
        h: &Header,
        payload: &[u8],
        core: &mut SlowPath<'_>,
        phys: &mut dyn PhysMem,
        sink: &mut dyn TxSink,
    ) -> (Status, usize) {
        let Ok((req, args)) = OffloadCallReq::parse_with_args(payload) else {
            self.stats.malformed += 1;
            return (Status::Malformed, 0);
        };
        let Some(e) = self.entries.iter_mut().find(|e| e.id == req.offload) else {
            self.stats.unknown += 1;
            return (Status::NoSuchOffload, 0);
        };
        let head = OffloadCallResp::LEN;
        self.answer[P..P + head].copy_from_slice(&OffloadCallResp { code: 0 }.to_bytes());
        let pid = match e.pid {
            Some(p) => p,
            None => match core.hold_free_pid() {
                Ok(p) => {
                    e.pid = Some(p);
                    p
                }
                Err(_) => {
                    self.stats.faults += 1;
                    return (Status::OffloadFault, 0);
                }
            },
        };
        let mut mem = DirectMem::new(core, pid, phys, sink)
            .with_caller(Caller::of(h))
            .with_mtu(self.mtu);
        let max_result = self.mtu.saturating_sub(head);
        let stats = &mut self.stats;
        if req.op != OFFLOAD_OP_BATCH {
            let mut out = Results::new(&mut self.answer[P + head..P + head + max_result]);
            let r = e.offload.call(&mut mem, req.op, args, &mut out);
            let len = out.len();
            return match outcome(r, stats) {
                (Status::Ok, _) => (Status::Ok, head + len),
                (Status::OffloadRefused, code) => {
                    self.answer[P..P + head].copy_from_slice(&OffloadCallResp { code }.to_bytes());
                    (Status::OffloadRefused, head)
                }
                (s, _) => (s, 0),
            };
        }
        let Ok(ops) = OffloadBatchReq::ops(args) else {
            stats.malformed += 1;
            return (Status::Malformed, 0);
        };
        let cap =
            |o: &dyn Offload, op: u16| o.max_result(op).map_or(max_result, |m| m.min(max_result));
        let count = ops.clone().count();
        let answer: usize = head
            + OffloadBatchReq::LEN
            + ops
                .clone()
                .map(|(op, _)| OffloadBatchResult::LEN + cap(&*e.offload, op))
                .sum::<usize>();
        if answer > self.bound {
            stats.malformed += 1;
            return (Status::TooLarge, 0);
        }
        let mut at = head;
        self.answer[P + at..P + at + OffloadBatchReq::LEN].copy_from_slice(
            &OffloadBatchReq {
                count: count as u16,
            }
            .to_bytes(),
        );
        at += OffloadBatchReq::LEN;
        for (op, op_args) in ops {
            let c = cap(&*e.offload, op);
            let body = at + OffloadBatchResult::LEN;
            let mut out = Results::new(&mut self.answer[P + body..P + body + c]);
            let r = e.offload.call(&mut mem, op, op_args, &mut out);
            // The caller's space is joined for one operation at a time.
            mem.use_own_space();
            let len = out.len();
            let (status, code) = outcome(r, stats);
            let len = if status == Status::Ok { len } else { 0 };
            let o = OffloadBatchResult {
                status,
                code,
                len: len as u32,
            };
            self.answer[P + at..P + body].copy_from_slice(&o.to_bytes());
            at = body + len;
        }
        (Status::Ok, at)
    }
}

/// What a call came to: `Ok`, `OffloadRefused` with its code, or
/// `OffloadFault` (a fault, a result over its room, a refusal without a
/// reason); counted.
fn outcome(r: Result<(), OffloadError>, stats: &mut OffloadStats) -> (Status, u16) {
    match r {
        Ok(()) => {
            stats.ok += 1;
            (Status::Ok, 0)
        }
        Err(OffloadError::Refused(code)) if code != 0 => {
            stats.refused += 1;
            (Status::OffloadRefused, code)
        }
        Err(_) => {
            stats.faults += 1;
            (Status::OffloadFault, 0)
        }
    }
}

/// Register a board's offloads on `host` under their wire ids: Clio-KV
/// ([`kv::OFFLOAD_ID`]), Clio-MV ([`mv::OFFLOAD_ID`]), Clio-DF
/// ([`df::OFFLOAD_ID`]) and the tally ([`tally::ID`]). The one registry of
/// every slow path that serves offloads (the firmware image, the emulated
/// board on the RTL), so they answer the same ids.
pub fn register_board<
    'o,
    const N: usize,
    const R: usize,
    const B: usize,
    const KF: usize,
    const MF: usize,
>(
    host: &mut OffloadHost<'o, N, R, B>,
    kv: &'o mut kv::KvStore<KF>,
    mv: &'o mut mv::MvStore<MF>,
    df: &'o mut df::DfOffload,
    tally: &'o mut tally::Tally,
) -> Result<(), RegisterError> {
    host.register(kv::OFFLOAD_ID, kv)
        .and(host.register(mv::OFFLOAD_ID, mv))
        .and(host.register(df::OFFLOAD_ID, df))
        .and(host.register(tally::ID, tally))
}

/// The engine's view of a board's offloads ([`crate::Engine::poll_full`]).
pub trait OffloadSide {
    /// Whether this board serves offloads (else `OFFLOAD_REQ` fragments
    /// are dropped, counted).
    fn present(&self) -> bool;
    /// TX slots one answer may take.
    fn reply_room(&self) -> u32;
    /// One `OFFLOAD_REQ` fragment (see [`OffloadHost::fragment`]).
    fn fragment(&mut self, d: &Descriptor, core: &mut SlowPath<'_>, sink: &mut dyn TxSink) -> bool;
}

/// A board without offloads.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOffloads;

impl OffloadSide for NoOffloads {
    fn present(&self) -> bool {
        false
    }
    fn reply_room(&self) -> u32 {
        0
    }
    fn fragment(&mut self, _: &Descriptor, _: &mut SlowPath<'_>, _: &mut dyn TxSink) -> bool {
        false
    }
}

/// An [`OffloadHost`] with the DRAM its offloads reach, for one poll round.
pub struct Serving<'x, 'o, const N: usize, const R: usize, const B: usize> {
    /// The host.
    pub host: &'x mut OffloadHost<'o, N, R, B>,
    /// Board DRAM.
    pub phys: &'x mut dyn PhysMem,
}

impl<const N: usize, const R: usize, const B: usize> OffloadSide for Serving<'_, '_, N, R, B> {
    fn present(&self) -> bool {
        true
    }
    fn reply_room(&self) -> u32 {
        OffloadHost::<N, R, B>::max_reply_fragments()
    }
    fn fragment(&mut self, d: &Descriptor, core: &mut SlowPath<'_>, sink: &mut dyn TxSink) -> bool {
        self.host.fragment(d, core, &mut *self.phys, sink)
    }
}
