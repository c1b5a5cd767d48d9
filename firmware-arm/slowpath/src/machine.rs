//! The slow-path state machine: allocation, free, PA-consumed notices,
//! free-PA refill and page scrubbing, with every board-table change emitted
//! as a TX descriptor into a [`TxSink`].
//!
//! No I/O happens here. A request changes the shadow state at once and
//! leaves a *job*: the TX descriptors that make the board table match,
//! ending with the reply. [`SlowPath::pump`] emits as many as the sink takes;
//! while a job is unfinished no new request is accepted ([`SlowPath::ready`]),
//! so the TX stream always applies the requests in order and a reply is
//! never sent before the commands it depends on.
//!
//! Zeroing policy: a page that was mapped to a process is *dirty* when its
//! range is freed (or when a PA-consumed notice arrives for a page that was
//! freed meanwhile). A dirty page is fenced behind the TX descriptor that
//! invalidates its TLB entries; only after the fast path has consumed that
//! descriptor does [`SlowPath::scrub`] hand it to a zeroing callback and
//! return it to the allocator. So a page pushed into the free-PA FIFO is
//! always either never-used since boot (the boot code zeroes the data
//! region) or zeroed after its last owner lost access to it.
//!
//! Sessions (issue #14): the slow path is constructed with a per-boot seed;
//! its first TX descriptor is always `Epoch` (the boot epoch, derived from
//! the seed). `SessionOpenReq` opens a session on a new address space (the
//! lowest free PID) or joins the address space of a live session whose key
//! the request proves; `SessionCloseReq` closes one, and closing the last
//! session of a PID frees all its ranges (the free path, one range at a
//! time) and releases the PID. Only a PID with an open session (or one the
//! board holds itself, [`SlowPath::reserve_pid`]) may allocate or free, and
//! a PID's allocated VA bytes never exceed `mem_quota_bytes`.

use crate::config::{window, ConfigError, Layout, SlowPathConfig, MAX_PAGE_SIZES};
use crate::phys::PhysAlloc;
use crate::session::{BootSecret, PidAccounts, SessionInfo, SessionTable};
use crate::shadow::ShadowTable;
use crate::va::{PidTable, RangeTable, VaRange};
use crate::words::{bit, get32, set32, set_bit, take};
use crate::SlowPathError;
use clio_wire::payload::perms;
use clio_wire::pte::TableGeometry;
use clio_wire::ring::Descriptor;
use clio_wire::{PageClasses, Pte, Status};
use heapless::Deque;

/// Where TX descriptors go (the TX ring, or a buffer in tests).
pub trait TxSink {
    /// Append one descriptor; `false` (and nothing appended) if full.
    fn push(&mut self, d: &Descriptor) -> bool;
}

impl<const N: usize> TxSink for heapless::Vec<Descriptor, N> {
    fn push(&mut self, d: &Descriptor) -> bool {
        heapless::Vec::push(self, *d).is_ok()
    }
}

#[cfg(feature = "std")]
impl TxSink for std::vec::Vec<Descriptor> {
    fn push(&mut self, d: &Descriptor) -> bool {
        std::vec::Vec::push(self, *d);
        true
    }
}

/// Who a reply goes to (copied from the request descriptor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplyTo {
    /// Fast-path context tag.
    pub tag: u32,
    /// Client request id.
    pub req_id: u32,
}

/// Where an allocation was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The range.
    pub range: VaRange,
    /// Candidates rejected because a bucket would have overflowed.
    pub retries: u32,
    /// A fixed-address request was placed elsewhere.
    pub moved: bool,
}

/// Counters of one page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SizeState {
    /// PAs pushed into the free-PA FIFO and not yet consumed.
    pub in_fifo: u32,
    /// Allocated virtual pages not yet backed by a PA.
    pub untouched: u64,
    /// Pages mapped by a first touch and still live.
    pub mapped: u64,
    /// Freed pages waiting for their fence and zeroing.
    pub dirty: u64,
}

/// Event counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Allocations placed.
    pub allocs: u64,
    /// Allocations refused.
    pub alloc_errors: u64,
    /// Frees done.
    pub frees: u64,
    /// Frees refused.
    pub free_errors: u64,
    /// Bucket-overflow retries over all allocations.
    pub retries: u64,
    /// Fixed-address allocations placed elsewhere.
    pub moved: u64,
    /// PA-consumed notices recorded.
    pub pa_consumed: u64,
    /// Notices for a page freed meanwhile (the PA was reclaimed as dirty).
    pub stale_notices: u64,
    /// Notices naming a page not in the FIFO or a bad slot.
    pub bad_notices: u64,
    /// Free PAs pushed.
    pub pa_pushed: u64,
    /// Refills that found no physical page.
    pub refill_starved: u64,
    /// Pages zeroed and returned to the allocator.
    pub scrubbed: u64,
    /// Errors the fast path reported (summed `count`).
    pub fastpath_errors: u64,
    /// Descriptors that do not belong on the RX ring.
    pub misdirected: u64,
    /// Sessions opened (new address spaces and joins).
    pub sessions_opened: u64,
    /// Sessions closed.
    pub sessions_closed: u64,
    /// Opens and closes refused (bad session or key, full table, no PID).
    pub session_errors: u64,
    /// Allocations refused for the PID's memory quota.
    pub over_quota: u64,
    /// PIDs released after their last session closed.
    pub pids_released: u64,
}

/// What an accepted session open hands the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionGrant {
    /// The session.
    pub session: SessionInfo,
    /// A new address space was opened (else an existing one was joined).
    pub new_pid: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RemoveStage {
    Pages,
    Tlb,
    Reply,
}

/// What [`SlowPath::admit_alloc`] found for an allocation it accepts.
#[derive(Debug, Clone, Copy)]
struct AllocPlan {
    /// Index of the page size in the per-size counters.
    size_index: usize,
    /// The page size's class (VA window).
    class: usize,
    /// The class window `[lo, hi)`.
    window: (u64, u64),
    /// Pages of the range.
    pages: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    Insert {
        pid: u32,
        vpn: u64,
        pages: u64,
        shift: u8,
        next: u64,
        /// `None` for the board's own allocations ([`SlowPath::alloc_mapped`]).
        reply: Option<Descriptor>,
    },
    Remove {
        pid: u32,
        vpn: u64,
        pages: u64,
        shift: u8,
        next: u64,
        stage: RemoveStage,
        /// `None` while a close frees its PID's ranges.
        reply: Option<Descriptor>,
    },
    Reply(Descriptor),
}

/// A close of a PID's last session in progress: its ranges are freed one
/// job at a time, then the reply goes out and the PID is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Closing {
    pid: u32,
    reply: Descriptor,
}

/// Fence value of a dirty batch whose TLB invalidation is not emitted yet.
const OPEN: u64 = u64::MAX;
/// Dirty batches remembered before new ones merge into the newest.
const FENCES: usize = 64;
/// Recently freed ranges remembered to tell a double free from a wild one.
const RECENT: usize = 32;

/// The slow path of one memory board.
#[derive(Debug)]
pub struct SlowPath<'a> {
    cfg: SlowPathConfig,
    layout: Layout,
    shadow: ShadowTable<'a>,
    ranges: RangeTable<'a>,
    pids: PidTable<'a>,
    phys: PhysAlloc<'a>,
    fifo_map: &'a mut [u64],
    dirty: &'a mut [u64],
    dirty_head: u64,
    dirty_len: u64,
    fences: Deque<(u64, u64), FENCES>,
    recent: Deque<(u32, u64, u64), RECENT>,
    /// The VA-class rule: where each page size's ranges go.
    classes: PageClasses,
    /// Counters per page size (index = [`SlowPathConfig::size_index`]).
    sizes: [SizeState; MAX_PAGE_SIZES],
    job: Option<Job>,
    closing: Option<Closing>,
    emitted: u64,
    stats: Stats,
    secret: BootSecret,
    epoch: u32,
    /// The `Epoch` descriptor is not out yet (nothing else may go first).
    epoch_pending: bool,
    sessions: SessionTable<'a>,
    accounts: PidAccounts<'a>,
}

impl<'a> SlowPath<'a> {
    /// A slow path for `cfg` over `arena` (at least [`SlowPathConfig::arena_words`]
    /// words; its contents are overwritten), booted with `seed`: the
    /// per-boot secret every session key and the epoch derive from. The
    /// caller must give a fresh unpredictable seed at every boot (the
    /// firmware from the board's entropy, the emulator from the OS); the
    /// first descriptor [`SlowPath::pump`] or [`SlowPath::refill`] emits is
    /// the `Epoch`.
    pub fn new(cfg: SlowPathConfig, arena: &'a mut [u64], seed: u64) -> Result<Self, ConfigError> {
        cfg.check()?;
        let classes = cfg.page_classes()?;
        let l = cfg.layout();
        if (arena.len() as u64) < l.words {
            return Err(ConfigError {
                field: "arena",
                reason: "fewer words than SlowPathConfig::arena_words",
            });
        }
        if l.n_units >= 1 << 30 {
            return Err(ConfigError {
                field: "regions.data",
                reason: "more than 2^30 smallest pages",
            });
        }
        let mut rest = arena;
        let sessions = SessionTable::new(take(&mut rest, l.session_words));
        let accounts = PidAccounts::new(take(&mut rest, l.account_words));
        let slots = take(&mut rest, l.shadow_words);
        let free = take(&mut rest, l.free_words);
        let geo = TableGeometry {
            base: cfg.table_base,
            bucket_bits: cfg.bucket_bits,
            slots_per_bucket: cfg.slots_per_bucket,
        };
        let shadow = ShadowTable::new(slots, free, geo);
        let (ranges, pids) =
            crate::va::carve(&mut rest, l.range_words, l.pid_words, cfg.max_pids as usize);
        let phys = PhysAlloc::carve(&mut rest, &cfg, &l);
        let fifo_map = take(&mut rest, l.bitmap_words);
        fifo_map.fill(0);
        let dirty = take(&mut rest, l.dirty_words);
        Ok(SlowPath {
            cfg,
            layout: l,
            shadow,
            ranges,
            pids,
            phys,
            fifo_map,
            dirty,
            dirty_head: 0,
            dirty_len: 0,
            fences: Deque::new(),
            recent: Deque::new(),
            classes,
            sizes: [SizeState::default(); MAX_PAGE_SIZES],
            job: None,
            closing: None,
            emitted: 0,
            stats: Stats::default(),
            secret: BootSecret::from_seed(seed),
            epoch: BootSecret::from_seed(seed).epoch(),
            epoch_pending: true,
            sessions,
            accounts,
        })
    }

    /// A slow path owning a leaked heap arena (for host processes that run
    /// one board for their whole life, like the emulator).
    #[cfg(feature = "std")]
    pub fn new_leaked(cfg: SlowPathConfig, seed: u64) -> Result<SlowPath<'static>, ConfigError> {
        let words = cfg.arena_words();
        cfg.check()?;
        SlowPath::new(cfg, std::vec![0u64; words].leak(), seed)
    }

    /// The configuration.
    pub fn config(&self) -> &SlowPathConfig {
        &self.cfg
    }
    /// The derived layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The shadow page table.
    pub fn shadow(&self) -> &ShadowTable<'a> {
        &self.shadow
    }
    /// The live ranges.
    pub fn ranges(&self) -> &RangeTable<'a> {
        &self.ranges
    }
    /// The physical allocator.
    pub fn phys(&self) -> &PhysAlloc<'a> {
        &self.phys
    }
    /// PIDs with live ranges.
    pub fn pids(&self) -> &PidTable<'a> {
        &self.pids
    }
    /// The VA-class rule ranges are placed by.
    pub fn page_classes(&self) -> &PageClasses {
        &self.classes
    }
    /// The VAs where ranges of `1 << shift`-byte pages go (see
    /// [`SlowPathConfig::va_window`]); `None` for an unsupported size.
    pub fn va_window(&self, shift: u8) -> Option<(u64, u64)> {
        self.cfg.size_index(shift)?;
        window(&self.classes, self.cfg.va_base(), shift)
    }
    /// Counters of the page size with index `i` among the supported sizes
    /// (ascending, [`SlowPathConfig::size_index`]).
    pub fn size_state(&self, i: usize) -> SizeState {
        self.sizes[i]
    }
    /// Event counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// TX descriptors emitted since start.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }
    /// Whether a new request can be handled (the previous one is fully
    /// emitted, a close's frees included).
    pub fn ready(&self) -> bool {
        self.job.is_none() && self.closing.is_none()
    }
    /// This boot's epoch (nonzero).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    /// Whether the `Epoch` descriptor has been emitted.
    pub fn epoch_posted(&self) -> bool {
        !self.epoch_pending
    }
    /// The open session `id`, if any (its key included: for tests and
    /// board-local tools; the slow path never sends it anywhere but in the
    /// open's `SessionReply`).
    pub fn session(&self, id: u16) -> Option<SessionInfo> {
        self.sessions.get(id)
    }
    /// Sessions open now.
    pub fn open_sessions(&self) -> u32 {
        self.sessions.open_count()
    }
    /// Sessions open on `pid`.
    pub fn pid_sessions(&self, pid: u32) -> u32 {
        self.accounts.sessions(pid)
    }
    /// Whether `pid` belongs to an open session or to the board.
    pub fn pid_assigned(&self, pid: u32) -> bool {
        self.accounts.assigned(pid)
    }
    /// VA bytes of `pid`'s live ranges (what its quota counts).
    pub fn pid_charged_bytes(&self, pid: u32) -> u64 {
        self.accounts.charged(pid) << self.layout.unit_shift
    }
    /// Hold `pid` for the board itself: it may allocate and free without a
    /// session and is never handed to a session. For board-local users
    /// with their own address space (offloads, tests); the memory quota
    /// still applies. `UnknownPid` outside `1..=max_pids`, `BadSession` if
    /// a session already holds it.
    pub fn reserve_pid(&mut self, pid: u32) -> Result<(), SlowPathError> {
        if !self.accounts.in_range(pid) {
            return Err(SlowPathError::UnknownPid(pid));
        }
        if self.accounts.sessions(pid) > 0 {
            return Err(SlowPathError::BadSession);
        }
        self.accounts.hold(pid);
        Ok(())
    }

    /// Hold the lowest free PID for the board itself, as
    /// [`SlowPath::reserve_pid`] does (an offload's own address space).
    pub fn hold_free_pid(&mut self) -> Result<u32, SlowPathError> {
        let pid = self.accounts.free_pid().ok_or(SlowPathError::NoFreePid)?;
        self.accounts.hold(pid);
        Ok(pid)
    }

    /// Allocate `size` bytes (read/write, default page size) for `pid`, a
    /// PID the board holds ([`SlowPath::hold_free_pid`]) or one a session
    /// holds (an offload working in its caller's space), with every page
    /// backed at once by a zeroed physical page: for code on the ARM that
    /// reaches its memory directly ([`SlowPath::translate`]) rather than
    /// through the fast path's first-touch faults. The placement, the
    /// overflow-free check and the PID's memory quota are those of
    /// [`SlowPath::alloc`]; the shadow table changes at once, and the
    /// board table's `PteWrite`s (valid PTEs) are left as a job with no
    /// reply ([`SlowPath::pump`]), so a client that were ever to share the
    /// address space would see the same pages. `Busy` while an earlier
    /// request's commands are still being emitted.
    pub fn alloc_mapped(&mut self, pid: u32, size: u64) -> Result<VaRange, SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        if !self.accounts.board_held(pid) && self.accounts.sessions(pid) == 0 {
            return Err(SlowPathError::UnknownPid(pid));
        }
        let shift = self.cfg.default_shift;
        let si = self
            .cfg
            .size_index(shift)
            .ok_or(SlowPathError::UnsupportedPageSize(shift))?;
        // Every page is taken now: the pool must hold them beyond what
        // earlier ranges' first touches are owed.
        let pages = size.div_ceil(1u64 << shift);
        if self.owed_bytes(si, 0).saturating_add(pages << shift) > self.phys.free_bytes() {
            self.stats.alloc_errors += 1;
            return Err(SlowPathError::PhysExhausted);
        }
        let p = match self.place(pid, 0, size, perms::RW, 0, false) {
            Ok(p) => p,
            Err(e) => {
                self.stats.alloc_errors += 1;
                self.stats.over_quota += matches!(e, SlowPathError::OverQuota { .. }) as u64;
                return Err(e);
            }
        };
        let r = p.range;
        self.accounts
            .charge(pid, (r.bytes() >> self.layout.unit_shift) as i64);
        self.stats.allocs += 1;
        self.stats.retries += p.retries as u64;
        for i in 0..r.pages {
            let Some((b, s)) = self.shadow.find(pid, r.vpn() + i, shift) else {
                continue;
            };
            // Checked above; a page the pool cannot give after all stays
            // unmapped, and an access to it is refused by `translate`.
            let Some(ppn) = self.phys.alloc(si) else {
                break;
            };
            let mut pte = self.shadow.get(b, s).unwrap_or(Pte::EMPTY);
            pte.valid = true;
            pte.ppn = ppn;
            self.shadow.update(b, s, &pte);
            let st = &mut self.sizes[si];
            st.untouched -= 1;
            st.mapped += 1;
        }
        self.job = Some(Job::Insert {
            pid,
            vpn: r.vpn(),
            pages: r.pages,
            shift,
            next: 0,
            reply: None,
        });
        Ok(r)
    }

    /// Back the page holding `va` of `pid` now if it is allocated but not
    /// yet touched (no physical page), as the fast path's first touch would,
    /// for code on the ARM that reaches a client's memory directly (an
    /// offload in its caller's address space); then where it lives, as
    /// [`SlowPath::translate`]. The page is a zeroed one from the pool (not
    /// the free-PA FIFO, whose pages the fast path owns), its `PteWrite` (an
    /// update of the live slot) is left as a job ([`SlowPath::pump`]).
    /// `NotAllocated` (answered `UNMAPPED`) if no range of `pid` holds `va`; `Busy` while an earlier request's
    /// commands are still being emitted; `PhysExhausted` without a free
    /// page.
    ///
    /// First touches the fast path reported before the call are applied
    /// before the call runs ([`crate::Engine::poll_full`]), so a page the
    /// caller wrote is found, not backed again. A first touch of the same
    /// page by the fast path while this one's `PteWrite` is on its way
    /// would map it twice (the second mapping wins in the board table; its
    /// `PA_CONSUMED` is then refused as a double map): the offload must own
    /// the page for the call, as an output the caller allocated for it and
    /// does not touch while it runs.
    pub fn back_page(&mut self, pid: u32, va: u64) -> Result<(u64, u64, u8), SlowPathError> {
        if let Some(t) = self.translate(pid, va) {
            return Ok(t);
        }
        let found = self.cfg.shifts().iter().find_map(|&shift| {
            let (b, s) = self.shadow.find(pid, va >> shift, shift)?;
            Some((shift, b, s, self.shadow.get(b, s)?))
        });
        let Some((shift, b, s, mut pte)) = found else {
            return Err(SlowPathError::NotAllocated { va });
        };
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        let si = self
            .cfg
            .size_index(shift)
            .ok_or(SlowPathError::UnsupportedPageSize(shift))?;
        let ppn = self.phys.alloc(si).ok_or(SlowPathError::PhysExhausted)?;
        pte.valid = true;
        pte.ppn = ppn;
        self.shadow.update(b, s, &pte);
        let st = &mut self.sizes[si];
        st.untouched -= 1;
        st.mapped += 1;
        // An update of a live (allocated) slot: the fast path refreshes its
        // TLB entry. One descriptor, emitted as a reply-only job is.
        self.job = Some(Job::Reply(Descriptor::PteWrite {
            bucket: b,
            slot: s,
            update: true,
            pte,
        }));
        self.translate(pid, va)
            .ok_or(SlowPathError::NotAllocated { va })
    }

    /// Where `va` of `pid` lives: its physical address, the bytes left in
    /// its page from there, and the page's permissions; `None` if no
    /// mapped page holds it. The lookup is the shadow table's, i.e. the
    /// board table's translation, done by the ARM.
    pub fn translate(&self, pid: u32, va: u64) -> Option<(u64, u64, u8)> {
        self.cfg.shifts().iter().find_map(|&shift| {
            let (b, s) = self.shadow.find(pid, va >> shift, shift)?;
            let pte = self.shadow.get(b, s)?;
            if !pte.valid {
                return None;
            }
            let off = va & ((1u64 << shift) - 1);
            Some((
                (u64::from(pte.ppn) << shift) | off,
                (1u64 << shift) - off,
                pte.perms,
            ))
        })
    }
    /// Whether page `ppn` of the size with index `size` sits in the free-PA FIFO.
    pub fn in_fifo(&self, size: usize, ppn: u32) -> bool {
        self.phys
            .unit(size, ppn)
            .is_some_and(|u| bit(self.fifo_map, u))
    }
    /// Freed pages not yet zeroed.
    pub fn dirty_pages(&self) -> u64 {
        self.dirty_len
    }

    fn emit<S: TxSink + ?Sized>(&mut self, sink: &mut S, d: &Descriptor) -> bool {
        let ok = sink.push(d);
        self.emitted += ok as u64;
        ok
    }

    // ---- allocation -------------------------------------------------------

    /// Bytes future first touches may still take from the pool.
    fn owed_bytes(&self, extra_size: usize, extra_pages: u64) -> u64 {
        self.cfg
            .shifts()
            .iter()
            .enumerate()
            .map(|(c, &s)| {
                let st = &self.sizes[c];
                let untouched = st.untouched + if c == extra_size { extra_pages } else { 0 };
                untouched.saturating_sub(st.in_fifo as u64) << s
            })
            .sum()
    }

    fn dirty_bytes(&self) -> u64 {
        self.cfg
            .shifts()
            .iter()
            .enumerate()
            .map(|(c, &s)| self.sizes[c].dirty << s)
            .sum()
    }

    /// Reserve table slots for `pages` pages from `vpn`; on a full bucket,
    /// undo and return the index of the page that did not fit.
    fn try_reserve(
        &mut self,
        pid: u32,
        vpn: u64,
        pages: u64,
        shift: u8,
        perm: u8,
    ) -> Result<(), u64> {
        for i in 0..pages {
            let pte = Pte {
                pid,
                vpn: vpn + i,
                ppn: 0,
                perms: perm,
                allocated: true,
                valid: false,
                page_shift: shift,
            };
            if self.shadow.insert(&pte).is_none() {
                for j in 0..i {
                    if let Some((b, s)) = self.shadow.find(pid, vpn + j, shift) {
                        self.shadow.remove(b, s);
                    }
                }
                return Err(i);
            }
        }
        Ok(())
    }

    /// Place and reserve a range; the board-table commands are left as a job.
    ///
    /// The range goes inside the VA class of its page size
    /// ([`SlowPath::va_window`]), where the fast path looks for pages of that
    /// size. `va` is the fixed address (with `fixed`) or a hint (0 = none);
    /// a fixed address that cannot be honoured (misaligned, outside the
    /// class of its size, taken, or overflowing a bucket) is placed
    /// elsewhere in the class and reported `moved`; a hint outside the class
    /// is ignored in favour of the PID's cursor in that class. The
    /// overflow-free check hashes every page of a candidate into its bucket
    /// and rejects the candidate if a bucket has no free slot; the next
    /// candidate starts just past the page that did not fit, so it differs
    /// from the rejected one in every page's bucket pattern up to that page.
    #[allow(clippy::too_many_arguments)]
    pub fn alloc(
        &mut self,
        to: ReplyTo,
        pid: u32,
        va: u64,
        size: u64,
        perm: u8,
        page_shift: u8,
        fixed: bool,
    ) -> Result<Placement, SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        let r = self.place(pid, va, size, perm, page_shift, fixed);
        match r {
            Ok(p) => {
                self.accounts
                    .charge(pid, (p.range.bytes() >> self.layout.unit_shift) as i64);
                self.stats.allocs += 1;
                self.stats.retries += p.retries as u64;
                self.stats.moved += p.moved as u64;
                let reply = Descriptor::Reply {
                    tag: to.tag,
                    pid,
                    req_id: to.req_id,
                    status: Status::Ok.raw(),
                    va: p.range.start,
                    size: p.range.bytes(),
                    retries: p.retries,
                    moved: p.moved,
                };
                self.job = Some(Job::Insert {
                    pid,
                    vpn: p.range.vpn(),
                    pages: p.range.pages,
                    shift: p.range.page_shift,
                    next: 0,
                    reply: Some(reply),
                });
            }
            Err(e) => {
                self.stats.alloc_errors += 1;
                self.stats.over_quota += matches!(e, SlowPathError::OverQuota { .. }) as u64;
                let retries = if let SlowPathError::TableFull { retries } = e {
                    retries
                } else {
                    0
                };
                self.job = Some(Job::Reply(error_reply(to, pid, va, size, e, retries)));
            }
        }
        r
    }

    /// Place a new range of `size` bytes for `pid`: at `va` if `fixed` and
    /// possible (else moved), else next fit from `va` as a hint or the PID's
    /// cursor, inside the class window of its page size.
    fn place(
        &mut self,
        pid: u32,
        va: u64,
        size: u64,
        perm: u8,
        page_shift: u8,
        fixed: bool,
    ) -> Result<Placement, SlowPathError> {
        let shift = if page_shift == 0 {
            self.cfg.default_shift
        } else {
            page_shift
        };
        let plan = self.admit_alloc(pid, size, perm, shift, page_shift)?;
        let (lo, hi) = plan.window;
        let pidx = self.pids.get_or_insert(pid)?;
        let mut retries = 0u32;
        let mut moved = false;
        let mut placed = None;
        let len = plan.pages << shift;
        let in_window = |v: u64| v >= lo && v.checked_add(len).is_some_and(|e| e <= hi);
        if fixed {
            // A fixed VA outside the class of its page size could never be
            // reached (the fast path would take it for another size), so it
            // is moved into the class like any other fixed VA that cannot be
            // honoured; the reply says `moved`.
            let fits = va % (1u64 << shift) == 0
                && in_window(va)
                && self.ranges.conflict(pid, va, len).is_none();
            if fits
                && self
                    .try_reserve(pid, va >> shift, plan.pages, shift, perm)
                    .is_ok()
            {
                placed = Some(va);
            } else {
                retries += fits as u32;
                moved = true;
            }
        }
        let placed = match placed {
            Some(v) => v,
            None => {
                // A hint outside the class window is ignored: next fit
                // from this PID's cursor in the class.
                let hint = if va != 0 && in_window(va) {
                    va
                } else {
                    self.pids.cursor(pidx, plan.class)
                };
                let found = self.search(
                    pid,
                    hint,
                    plan.window,
                    plan.pages,
                    shift,
                    perm,
                    &mut retries,
                );
                match found {
                    Ok(v) => v,
                    Err(e) => {
                        if self.pids.ranges(pidx) == 0 {
                            self.pids.remove(pid);
                        }
                        return Err(e);
                    }
                }
            }
        };
        let range = VaRange {
            pid,
            start: placed,
            pages: plan.pages,
            page_shift: shift,
            perms: perm,
        };
        self.commit_range(pidx, plan, &range)?;
        Ok(Placement {
            range,
            retries,
            moved,
        })
    }

    /// The checks an allocation passes before any state changes: a page
    /// size with a class window, permissions, a size the window can hold,
    /// an owned PID within its memory quota, physical pages to back it, a
    /// free range-table entry.
    fn admit_alloc(
        &self,
        pid: u32,
        size: u64,
        perm: u8,
        shift: u8,
        page_shift: u8,
    ) -> Result<AllocPlan, SlowPathError> {
        // Per-size counters use the size index; the VA goes in the size's
        // class window (`PageClasses`), the only place the fast path looks
        // for pages of this size.
        let (si, (lo, hi)) = match (
            self.cfg.size_index(shift),
            window(&self.classes, self.cfg.va_base(), shift),
        ) {
            (Some(si), Some(w)) => (si, w),
            _ => return Err(SlowPathError::UnsupportedPageSize(page_shift)),
        };
        let class = self.classes.class_of(shift).unwrap_or(0);
        if perm == 0 || perm & !perms::ALL != 0 {
            return Err(SlowPathError::BadPerms(perm));
        }
        if size == 0 {
            return Err(SlowPathError::ZeroSize);
        }
        let max = (hi - lo).min(self.cfg.pages_of(shift) << shift);
        if size > max {
            return Err(SlowPathError::Oversize { size, max });
        }
        if pid == 0 {
            return Err(SlowPathError::UnknownPid(0));
        }
        self.check_owner(pid)?;
        let pages = size.div_ceil(1u64 << shift);
        let used = self.pid_charged_bytes(pid);
        if used.saturating_add(pages << shift) > self.cfg.mem_quota_bytes {
            return Err(SlowPathError::OverQuota {
                used,
                quota: self.cfg.mem_quota_bytes,
            });
        }
        if self.owed_bytes(si, pages) > self.phys.free_bytes() + self.dirty_bytes() {
            return Err(SlowPathError::PhysExhausted);
        }
        if self.ranges.len() == self.ranges.capacity() {
            return Err(SlowPathError::RangeTableFull);
        }
        Ok(AllocPlan {
            size_index: si,
            class,
            window: (lo, hi),
            pages,
        })
    }

    /// Record a placed range: range table, the PID's count and cursor, the
    /// size's untouched pages; a free of a recently freed range it overlaps
    /// becomes legal again.
    fn commit_range(
        &mut self,
        pidx: usize,
        plan: AllocPlan,
        range: &VaRange,
    ) -> Result<(), SlowPathError> {
        self.ranges.insert(range)?;
        self.pids.add_ranges(pidx, 1);
        self.pids.set_cursor(pidx, plan.class, range.end());
        self.sizes[plan.size_index].untouched += plan.pages;
        let pid = range.pid;
        let n = self.recent.len();
        for _ in 0..n {
            if let Some(e) = self.recent.pop_front() {
                let overlaps = e.0 == pid && e.1 < range.end() && range.start < e.1 + e.2;
                if !overlaps {
                    let _ = self.recent.push_back(e);
                }
            }
        }
        Ok(())
    }

    /// Next-fit search from `hint` for a free, overflow-free range inside
    /// `[va_base, va_end)` (the class window of the page size).
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        pid: u32,
        hint: u64,
        (va_base, va_end): (u64, u64),
        pages: u64,
        shift: u8,
        perm: u8,
        retries: &mut u32,
    ) -> Result<u64, SlowPathError> {
        let page = 1u64 << shift;
        let len = pages << shift;
        let align = |v: u64| v.div_ceil(page) * page;
        let start0 = align(hint.clamp(va_base, va_end));
        let mut s = start0;
        let mut wrapped = false;
        loop {
            if wrapped && s >= start0 {
                return Err(SlowPathError::VaExhausted);
            }
            if s.checked_add(len).is_none_or(|e| e > va_end) {
                if wrapped {
                    return Err(SlowPathError::VaExhausted);
                }
                wrapped = true;
                s = align(va_base);
                continue;
            }
            if let Some(r) = self.ranges.conflict(pid, s, len) {
                s = align(r.end());
                continue;
            }
            match self.try_reserve(pid, s >> shift, pages, shift, perm) {
                Ok(()) => return Ok(s),
                Err(i) => {
                    *retries += 1;
                    if *retries > self.cfg.max_retries {
                        return Err(SlowPathError::TableFull {
                            retries: *retries - 1,
                        });
                    }
                    s += (i + 1) << shift;
                }
            }
        }
    }

    // ---- free -------------------------------------------------------------

    /// Free whole live ranges covering exactly `[va, va + size)` (size rounded
    /// up to the page size). The board-table commands are left as a job.
    pub fn free(
        &mut self,
        to: ReplyTo,
        pid: u32,
        va: u64,
        size: u64,
    ) -> Result<VaRange, SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        let r = self
            .check_owner(pid)
            .and_then(|()| self.unmap(pid, va, size));
        match r {
            Ok(r) => {
                self.stats.frees += 1;
                let reply = Descriptor::Reply {
                    tag: to.tag,
                    pid,
                    req_id: to.req_id,
                    status: Status::Ok.raw(),
                    va: r.start,
                    size: r.bytes(),
                    retries: 0,
                    moved: false,
                };
                self.job = Some(Job::Remove {
                    pid,
                    vpn: r.vpn(),
                    pages: r.pages,
                    shift: r.page_shift,
                    next: 0,
                    stage: RemoveStage::Pages,
                    reply: Some(reply),
                });
                Ok(r)
            }
            Err(e) => {
                self.stats.free_errors += 1;
                self.job = Some(Job::Reply(error_reply(to, pid, va, size, e, 0)));
                Err(e)
            }
        }
    }

    fn unmap(&mut self, pid: u32, va: u64, size: u64) -> Result<VaRange, SlowPathError> {
        let pidx = self.pids.get(pid).ok_or(SlowPathError::UnknownPid(pid))?;
        if size == 0 {
            return Err(SlowPathError::ZeroSize);
        }
        let end = va.saturating_add(size);
        let Some(i) = self
            .ranges
            .first_ending_after(pid, va)
            .filter(|&i| self.ranges.get(i).start < end)
        else {
            let freed_before = self
                .recent
                .iter()
                .any(|&(p, v, n)| p == pid && v < end && va < v + n);
            return Err(if freed_before {
                SlowPathError::DoubleFree { va }
            } else {
                SlowPathError::NotAllocated { va }
            });
        };
        let first = self.ranges.get(i);
        if first.start != va {
            return Err(SlowPathError::PartiallyAllocated { va });
        }
        let page = 1u64 << first.page_shift;
        let end = va.saturating_add(size.div_ceil(page).saturating_mul(page));
        let mut cover = first.end();
        let mut n = 1;
        while cover < end {
            let next = (i + n < self.ranges.len()).then(|| self.ranges.get(i + n));
            match next {
                Some(r) if r.pid == pid && r.start == cover => {
                    if r.perms != first.perms || r.page_shift != first.page_shift {
                        return Err(SlowPathError::PermissionMismatch {
                            first: first.perms,
                            other: r.perms,
                        });
                    }
                    cover = r.end();
                    n += 1;
                }
                _ => return Err(SlowPathError::PartiallyAllocated { va }),
            }
        }
        if cover != end {
            return Err(SlowPathError::PartiallyAllocated { va });
        }
        self.ranges.remove(i, n);
        self.accounts
            .charge(pid, -(((end - va) >> self.layout.unit_shift) as i64));
        self.pids.add_ranges(pidx, -(n as i64));
        if self.pids.ranges(pidx) == 0 {
            self.pids.remove(pid);
        }
        if self.recent.is_full() {
            self.recent.pop_front();
        }
        let _ = self.recent.push_back((pid, va, end - va));
        Ok(VaRange {
            pid,
            start: va,
            pages: (end - va) >> first.page_shift,
            page_shift: first.page_shift,
            perms: first.perms,
        })
    }

    // ---- PA-consumed notices and refill -------------------------------------

    /// Record that the fast path mapped `ppn` (taken from the FIFO) at
    /// `(bucket, slot)` for `(pid, vpn)`.
    pub fn pa_consumed(
        &mut self,
        pid: u32,
        vpn: u64,
        ppn: u32,
        page_shift: u8,
        bucket: u32,
        slot: u32,
    ) -> Result<(), SlowPathError> {
        let Some(size) = self.cfg.size_index(page_shift) else {
            self.stats.bad_notices += 1;
            return Err(SlowPathError::BadNotice);
        };
        let unit = match self.phys.unit(size, ppn) {
            Some(u) if bit(self.fifo_map, u) && self.phys.in_use(size, ppn) => u,
            _ => {
                self.stats.bad_notices += 1;
                return Err(SlowPathError::BadNotice);
            }
        };
        set_bit(self.fifo_map, unit, false);
        self.sizes[size].in_fifo -= 1;
        match self.shadow.get(bucket, slot) {
            Some(mut p) if p.matches(pid, vpn, page_shift) && !p.valid => {
                p.valid = true;
                p.ppn = ppn;
                self.shadow.update(bucket, slot, &p);
                let st = &mut self.sizes[size];
                st.untouched -= 1;
                st.mapped += 1;
                self.stats.pa_consumed += 1;
                Ok(())
            }
            Some(p) if p.matches(pid, vpn, page_shift) => {
                // Mapped twice: the second page may hold data; reclaim it dirty.
                let fence = self.stale_fence();
                self.push_dirty(size, unit, fence);
                self.stats.bad_notices += 1;
                Err(SlowPathError::BadNotice)
            }
            _ => {
                // The range was freed after the fast path mapped the page: fence
                // the page behind the removal's TLB invalidation.
                let fence = self.stale_fence();
                self.push_dirty(size, unit, fence);
                self.stats.stale_notices += 1;
                Ok(())
            }
        }
    }

    /// Handle a batch of PA-consumed notices (other descriptors are
    /// skipped). The slots are loaded first so their cache misses overlap;
    /// then each notice is handled as [`SlowPath::pa_consumed`] does.
    /// Returns the notices refused.
    pub fn pa_consumed_batch(&mut self, notices: &[Descriptor]) -> u32 {
        let mut acc = 0u64;
        for d in notices {
            if let Descriptor::PaConsumed { bucket, slot, .. } = *d {
                acc ^= self.shadow.touch(bucket, slot);
            }
        }
        core::hint::black_box(acc);
        let mut refused = 0;
        for d in notices {
            if let Descriptor::PaConsumed {
                pid,
                vpn,
                ppn,
                page_shift,
                bucket,
                slot,
            } = *d
            {
                refused += self
                    .pa_consumed(pid, vpn, ppn, page_shift, bucket, slot)
                    .is_err() as u32;
            }
        }
        refused
    }

    /// Fence of a page reclaimed from a notice: behind the TLB invalidation
    /// of a removal still being emitted, else behind everything emitted.
    fn stale_fence(&self) -> u64 {
        match self.job {
            Some(Job::Remove {
                stage: RemoveStage::Pages | RemoveStage::Tlb,
                ..
            }) => OPEN,
            _ => self.emitted,
        }
    }

    /// Top up every free-PA FIFO to `min(depth, untouched pages)` of its
    /// size; returns the PAs pushed.
    pub fn refill<S: TxSink + ?Sized>(&mut self, sink: &mut S) -> u32 {
        let mut pushed = 0;
        if !self.post_epoch(sink) {
            return 0;
        }
        for c in 0..self.cfg.shifts().len() {
            let shift = self.cfg.page_shifts[c];
            let target = (self.cfg.fifo_depth as u64).min(self.sizes[c].untouched) as u32;
            while self.sizes[c].in_fifo < target {
                let Some(ppn) = self.phys.alloc(c) else {
                    self.stats.refill_starved += 1;
                    break;
                };
                if !self.emit(
                    sink,
                    &Descriptor::FreePaPush {
                        page_shift: shift,
                        ppn,
                    },
                ) {
                    // The page was never published; give it straight back.
                    let _ = self.phys.free(c, ppn);
                    return pushed;
                }
                if let Some(u) = self.phys.unit(c, ppn) {
                    set_bit(self.fifo_map, u, true);
                }
                self.sizes[c].in_fifo += 1;
                self.stats.pa_pushed += 1;
                pushed += 1;
            }
        }
        pushed
    }

    // ---- dirty pages ----------------------------------------------------------

    fn push_dirty(&mut self, size: usize, unit: u64, fence: u64) {
        let cap = self.layout.n_units;
        let at = (self.dirty_head + self.dirty_len) % cap;
        set32(self.dirty, at as usize, (size as u32) << 30 | unit as u32);
        self.dirty_len += 1;
        self.sizes[size].dirty += 1;
        let full = self.fences.is_full();
        match self.fences.back_mut() {
            Some(b) if b.0 == fence || full => {
                b.0 = if b.0 == OPEN || fence == OPEN {
                    OPEN
                } else {
                    b.0.max(fence)
                };
                b.1 += 1;
            }
            _ => {
                let _ = self.fences.push_back((fence, 1));
            }
        }
    }

    fn close_open_batch(&mut self) {
        let now = self.emitted;
        for b in self.fences.iter_mut() {
            if b.0 == OPEN {
                b.0 = now;
            }
        }
    }

    /// Zero and release every dirty page whose fence the fast path has
    /// passed: `tx_consumed` is how many TX descriptors it has taken off the
    /// ring since start. `zero(pa, bytes)` must clear the page in board DRAM.
    /// Returns the pages released.
    pub fn scrub(&mut self, tx_consumed: u64, mut zero: impl FnMut(u64, u64)) -> u64 {
        let cap = self.layout.n_units;
        let mut done = 0;
        while let Some(&(fence, count)) = self.fences.front() {
            if fence == OPEN || fence > tx_consumed {
                break;
            }
            for _ in 0..count {
                let e = get32(self.dirty, self.dirty_head as usize);
                self.dirty_head = (self.dirty_head + 1) % cap;
                self.dirty_len -= 1;
                let size = (e >> 30) as usize;
                let unit = (e & ((1 << 30) - 1)) as u64;
                let shift = self.cfg.page_shifts[size];
                let pa = self.layout.frame_base + (unit << self.layout.unit_shift);
                zero(pa, 1u64 << shift);
                let _ = self.phys.free(size, (pa >> shift) as u32);
                self.sizes[size].dirty -= 1;
                done += 1;
            }
            self.fences.pop_front();
        }
        self.stats.scrubbed += done;
        done
    }

    // ---- emission -------------------------------------------------------------

    /// Emit the pending job's descriptors into `sink` until it is done
    /// (returns `true`) or the sink is full.
    pub fn pump<S: TxSink + ?Sized>(&mut self, sink: &mut S) -> bool {
        if !self.post_epoch(sink) {
            return false;
        }
        loop {
            let Some(job) = self.job else {
                match self.closing {
                    None => return true,
                    Some(c) => {
                        if !self.close_step(c, sink) {
                            return false;
                        }
                        continue;
                    }
                }
            };
            let progressed = match job {
                Job::Reply(d) => {
                    let sent = self.emit(sink, &d);
                    if sent {
                        self.job = None;
                    }
                    sent
                }
                Job::Insert { .. } => self.pump_insert(job, sink),
                Job::Remove { .. } => self.pump_remove(job, sink),
            };
            if !progressed {
                return false;
            }
        }
    }

    /// One step of an `Insert` job: a `PteWrite` for each page placed, then
    /// the reply. `false` if the sink filled (the job keeps its position).
    fn pump_insert<S: TxSink + ?Sized>(&mut self, job: Job, sink: &mut S) -> bool {
        let Job::Insert {
            pid,
            vpn,
            pages,
            shift,
            mut next,
            reply,
        } = job
        else {
            return true;
        };
        while next < pages {
            let v = vpn + next;
            if let Some((b, s)) = self.shadow.find(pid, v, shift) {
                let pte = self.shadow.get(b, s).unwrap_or(Pte::EMPTY);
                let d = Descriptor::PteWrite {
                    bucket: b,
                    slot: s,
                    update: false,
                    pte,
                };
                if !self.emit(sink, &d) {
                    self.job = Some(Job::Insert {
                        pid,
                        vpn,
                        pages,
                        shift,
                        next,
                        reply,
                    });
                    return false;
                }
            }
            next += 1;
        }
        self.job = reply.map(Job::Reply);
        true
    }

    /// One stage of a `Remove` job: a `PteRemove` per mapped page (its
    /// physical page goes to the dirty list), then one `TlbInvalidate` of the
    /// range, then the reply if any. `false` if the sink filled.
    fn pump_remove<S: TxSink + ?Sized>(&mut self, job: Job, sink: &mut S) -> bool {
        let Job::Remove {
            pid,
            vpn,
            pages,
            shift,
            mut next,
            stage,
            reply,
        } = job
        else {
            return true;
        };
        let save = |next, stage| {
            Some(Job::Remove {
                pid,
                vpn,
                pages,
                shift,
                next,
                stage,
                reply,
            })
        };
        match stage {
            RemoveStage::Pages => {
                let size = self.cfg.size_index(shift).unwrap_or(0);
                while next < pages {
                    let v = vpn + next;
                    if let Some((b, s)) = self.shadow.find(pid, v, shift) {
                        let d = Descriptor::PteRemove {
                            bucket: b,
                            slot: s,
                            pid,
                            vpn: v,
                        };
                        if !self.emit(sink, &d) {
                            self.job = save(next, RemoveStage::Pages);
                            return false;
                        }
                        let pte = self.shadow.get(b, s).unwrap_or(Pte::EMPTY);
                        if pte.valid {
                            if let Some(u) = self.phys.unit(size, pte.ppn) {
                                self.push_dirty(size, u, OPEN);
                            }
                            self.sizes[size].mapped -= 1;
                        } else {
                            self.sizes[size].untouched -= 1;
                        }
                        self.shadow.remove(b, s);
                    }
                    next += 1;
                }
                self.job = save(next, RemoveStage::Tlb);
            }
            RemoveStage::Tlb => {
                let d = Descriptor::TlbInvalidate {
                    pid,
                    vpn,
                    pages: pages.min(u32::MAX as u64) as u32,
                };
                if !self.emit(sink, &d) {
                    return false;
                }
                self.close_open_batch();
                self.job = save(next, RemoveStage::Reply);
            }
            RemoveStage::Reply => {
                if let Some(reply) = reply {
                    if !self.emit(sink, &reply) {
                        return false;
                    }
                }
                self.job = None;
            }
        }
        true
    }

    /// Emit the `Epoch` descriptor if it is not out yet; `false` if the
    /// sink is full (then nothing else may be emitted either).
    fn post_epoch<S: TxSink + ?Sized>(&mut self, sink: &mut S) -> bool {
        if self.epoch_pending {
            let d = Descriptor::Epoch { epoch: self.epoch };
            if !self.emit(sink, &d) {
                return false;
            }
            self.epoch_pending = false;
        }
        true
    }

    /// One step of a close: start freeing the PID's next range, or, when
    /// none is left, send the reply and release the PID. `false` if the
    /// sink is full.
    fn close_step<S: TxSink + ?Sized>(&mut self, c: Closing, sink: &mut S) -> bool {
        let next = self
            .ranges
            .first_ending_after(c.pid, 0)
            .map(|i| self.ranges.get(i))
            .filter(|r| r.pid == c.pid);
        if let Some(r) = next {
            match self.unmap(c.pid, r.start, r.bytes()) {
                Ok(r) => {
                    self.stats.frees += 1;
                    self.job = Some(Job::Remove {
                        pid: c.pid,
                        vpn: r.vpn(),
                        pages: r.pages,
                        shift: r.page_shift,
                        next: 0,
                        stage: RemoveStage::Pages,
                        reply: None,
                    });
                    return true;
                }
                // A whole live range always unmaps; if it ever did not, stop
                // rather than loop (the PID stays charged, so not reused).
                Err(_) => self.stats.free_errors += 1,
            }
        }
        if !self.emit(sink, &c.reply) {
            return false;
        }
        self.closing = None;
        if self.accounts.charged(c.pid) == 0 {
            self.stats.pids_released += 1;
        }
        true
    }

    // ---- sessions ---------------------------------------------------------------

    /// Only a PID in `1..=max_pids` (else `UnknownPid`) that an open session
    /// or the board holds (else `BadSession`) may allocate or free: the
    /// slow path never creates state for a PID nobody owns (e.g. an ALLOC
    /// the fast path forwarded just before it applied the PID's last close).
    fn check_owner(&self, pid: u32) -> Result<(), SlowPathError> {
        if !self.accounts.in_range(pid) {
            Err(SlowPathError::UnknownPid(pid))
        } else if !self.accounts.assigned(pid) {
            Err(SlowPathError::BadSession)
        } else {
            Ok(())
        }
    }

    /// The `SessionReply` of an open or close.
    fn session_reply(
        &self,
        to: ReplyTo,
        pid: u32,
        status: clio_wire::Status,
        session: u16,
        key: u64,
        close: bool,
    ) -> Descriptor {
        let ok = status == Status::Ok && !close;
        Descriptor::SessionReply {
            tag: to.tag,
            pid,
            req_id: to.req_id,
            status: status.raw(),
            session,
            key,
            dedup_quota: if ok { self.cfg.dedup_quota } else { 0 },
            lock_quota: if ok { self.cfg.lock_quota } else { 0 },
            mem_quota_pages: if ok { self.cfg.mem_quota_pages() } else { 0 },
            close,
        }
    }

    /// Open a session: with `join_session == 0` on a new address space (the
    /// lowest PID in `1..=max_pids` nobody holds; the request's `pid` must
    /// be 0), else on the address space of the open session `join_session`,
    /// whose key `join_key` must be and whose PID `pid` must be. The session
    /// gets the lowest free id and the key of `(id, generation)`. The
    /// `SessionReply` (the fast path installs the entry, then answers) is
    /// left as a job.
    ///
    /// Refusals: `pid != 0` for a new address space → `MALFORMED`; an
    /// unknown or closed `join_session`, a wrong key or PID → `BAD_SESSION`;
    /// no free session id (`sessions.capacity`) or no free PID
    /// (`va.max_pids`) → `OVER_QUOTA` (a board-wide limit, reached until
    /// sessions close; not `BUSY`, which the SDK would retry blindly).
    pub fn open_session(
        &mut self,
        to: ReplyTo,
        pid: u32,
        join_session: u16,
        join_key: u64,
    ) -> Result<SessionGrant, SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        let r = self.admit(pid, join_session, join_key);
        match r {
            Ok(g) => {
                let s = g.session;
                self.sessions.open(s.id, s.pid, s.generation, s.key);
                self.accounts.add_session(s.pid, 1);
                self.stats.sessions_opened += 1;
                let d = self.session_reply(to, s.pid, Status::Ok, s.id, s.key, false);
                self.job = Some(Job::Reply(d));
            }
            Err(e) => {
                self.stats.session_errors += 1;
                let d = self.session_reply(to, pid, e.status(), join_session, 0, false);
                self.job = Some(Job::Reply(d));
            }
        }
        r
    }

    fn admit(
        &self,
        pid: u32,
        join_session: u16,
        join_key: u64,
    ) -> Result<SessionGrant, SlowPathError> {
        let (new_pid, pid) = if join_session == 0 {
            if pid != 0 {
                return Err(SlowPathError::PidOnNewSession(pid));
            }
            (true, 0)
        } else {
            match self.sessions.get(join_session) {
                Some(s) if s.key == join_key && s.pid == pid => (false, pid),
                _ => return Err(SlowPathError::BadSession),
            }
        };
        let (id, generation) = self
            .sessions
            .free_id()
            .ok_or(SlowPathError::SessionTableFull)?;
        let pid = if new_pid {
            self.accounts.free_pid().ok_or(SlowPathError::NoFreePid)?
        } else {
            pid
        };
        Ok(SessionGrant {
            session: SessionInfo {
                id,
                pid,
                generation,
                key: self.secret.key(id, generation),
            },
            new_pid,
        })
    }

    /// Expire session `id` on the board's own initiative (an operator's or
    /// a policy's decision; no request asked): a close with tag 0, so the
    /// fast path clears the entry (and the session's dedup records and lock
    /// count) and answers nobody. Like a requested close, the last session
    /// of a PID frees the PID's ranges first. `BadSession` if `id` is not
    /// open (then nothing is emitted).
    pub fn expire_session(&mut self, id: u16) -> Result<(), SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        let s = self.sessions.get(id).ok_or(SlowPathError::BadSession)?;
        self.close_session(ReplyTo::default(), s.pid, id)
    }

    /// Close session `session` of `pid` (the fast path checked its key).
    /// The last session of a PID (not held by the board) frees every range
    /// of the PID first (PTE removes and TLB invalidations, as frees do),
    /// then the `SessionReply` with the close flag goes out and the PID is
    /// free for a new address space. An id that is not open, or open for
    /// another PID, → `BAD_SESSION` (the SDK takes that as "already closed").
    pub fn close_session(
        &mut self,
        to: ReplyTo,
        pid: u32,
        session: u16,
    ) -> Result<(), SlowPathError> {
        if !self.ready() {
            return Err(SlowPathError::Busy);
        }
        match self.sessions.get(session) {
            Some(s) if s.pid == pid => {
                self.sessions.close(session);
                self.accounts.add_session(pid, -1);
                self.stats.sessions_closed += 1;
                let reply = self.session_reply(to, pid, Status::Ok, session, 0, true);
                if self.accounts.sessions(pid) == 0 && !self.accounts.board_held(pid) {
                    self.closing = Some(Closing { pid, reply });
                } else {
                    self.job = Some(Job::Reply(reply));
                }
                Ok(())
            }
            _ => {
                self.stats.session_errors += 1;
                let e = SlowPathError::BadSession;
                let reply = self.session_reply(to, pid, e.status(), session, 0, true);
                self.job = Some(Job::Reply(reply));
                Err(e)
            }
        }
    }

    /// Handle one RX descriptor and emit what it causes (as far as the sink
    /// takes; the rest stays pending for [`SlowPath::pump`]). Returns
    /// [`SlowPathError::Busy`] without consuming the descriptor if the
    /// previous request is not fully emitted.
    pub fn handle<S: TxSink + ?Sized>(
        &mut self,
        d: &Descriptor,
        sink: &mut S,
    ) -> Result<(), SlowPathError> {
        let r = match *d {
            Descriptor::AllocReq {
                tag,
                pid,
                req_id,
                va,
                size,
                perms,
                page_shift,
                fixed,
            } => self
                .alloc(
                    ReplyTo { tag, req_id },
                    pid,
                    va,
                    size,
                    perms,
                    page_shift,
                    fixed,
                )
                .map(|_| ()),
            Descriptor::FreeReq {
                tag,
                pid,
                req_id,
                va,
                size,
            } => self
                .free(ReplyTo { tag, req_id }, pid, va, size)
                .map(|_| ()),
            Descriptor::PaConsumed {
                pid,
                vpn,
                ppn,
                page_shift,
                bucket,
                slot,
            } => self.pa_consumed(pid, vpn, ppn, page_shift, bucket, slot),
            Descriptor::SessionOpenReq {
                tag,
                pid,
                req_id,
                join_session,
                join_key,
            } => self
                .open_session(ReplyTo { tag, req_id }, pid, join_session, join_key)
                .map(|_| ()),
            Descriptor::SessionCloseReq {
                tag,
                pid,
                req_id,
                session,
            } => self.close_session(ReplyTo { tag, req_id }, pid, session),
            Descriptor::ErrorReport { count, .. } => {
                self.stats.fastpath_errors += count as u64;
                Ok(())
            }
            _ => {
                self.stats.misdirected += 1;
                Ok(())
            }
        };
        if r == Err(SlowPathError::Busy) {
            return r;
        }
        self.pump(sink);
        r
    }
}

fn error_reply(
    to: ReplyTo,
    pid: u32,
    va: u64,
    size: u64,
    e: SlowPathError,
    retries: u32,
) -> Descriptor {
    Descriptor::Reply {
        tag: to.tag,
        pid,
        req_id: to.req_id,
        status: e.status().raw(),
        va,
        size,
        retries,
        moved: false,
    }
}
