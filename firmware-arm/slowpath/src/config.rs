//! The slow path's own view of a board: the few numbers it needs, taken from
//! a [`clio_config::BoardConfig`], and the arena layout derived from them.
//!
//! Everything here is `const fn`, so a firmware can size its static arena
//! from a board `const` at compile time:
//!
//! ```
//! use clio_slowpath::SlowPathConfig;
//! const CFG: SlowPathConfig = SlowPathConfig::from_board(&clio_config::boards::ZCU106);
//! const WORDS: usize = CFG.arena_words();
//! assert!(WORDS > 0);
//! ```

use clio_config::BoardConfig;
use clio_wire::pte::{MAX_PAGE_SHIFT, MIN_PAGE_SHIFT, VPN_BITS};
use clio_wire::{ErrorKind, PageClasses};

/// Most page sizes one board supports.
pub const MAX_PAGE_SIZES: usize = 4;

/// Default cap on live VA ranges over all PIDs (each costs 24 bytes).
pub const DEFAULT_MAX_RANGES: u32 = 1 << 16;

/// Default cap on rejected candidates per allocation before giving up.
pub const DEFAULT_MAX_RETRIES: u32 = 4096;

/// The slow path's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowPathConfig {
    /// Supported page shifts, ascending; the first `n_page_sizes` are valid.
    pub page_shifts: [u8; MAX_PAGE_SIZES],
    /// Number of valid entries of `page_shifts`.
    pub n_page_sizes: u8,
    /// Page shift used when a request asks for 0.
    pub default_shift: u8,
    /// PTE slots per bucket, K.
    pub slots_per_bucket: u32,
    /// log2 of the number of buckets.
    pub bucket_bits: u32,
    /// Board physical address of the page table (bucket 0).
    pub table_base: u64,
    /// First byte of the data region (pages handed to applications).
    pub data_base: u64,
    /// Bytes of the data region.
    pub data_size: u64,
    /// Free-PA FIFO depth per page size.
    pub fifo_depth: u32,
    /// Most PIDs with live state at once.
    pub max_pids: u32,
    /// VA width in bits.
    pub va_bits: u32,
    /// Most live VA ranges over all PIDs.
    pub max_ranges: u32,
    /// Most rejected candidates (bucket overflow) per allocation.
    pub max_retries: u32,
    /// Session-table entries (`sessions.capacity`; ids `1..capacity`).
    pub session_capacity: u32,
    /// Dedup records a session may hold (`sessions.dedup_per_session`),
    /// handed to the fast path in each `SessionReply`.
    pub dedup_quota: u16,
    /// Locks a session may hold (`sessions.locks_per_session`), likewise.
    pub lock_quota: u16,
    /// Bytes of VA one address space may have allocated
    /// (`sessions.mem_quota_bytes`).
    pub mem_quota_bytes: u64,
}

/// A configuration the slow path cannot run with, naming the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted name of the offending field (board-config spelling).
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

const fn log2(v: u64) -> u8 {
    (63 - v.leading_zeros()) as u8
}

const fn min_u64(a: u64, b: u64) -> u64 {
    if a < b {
        a
    } else {
        b
    }
}

impl SlowPathConfig {
    /// Take the slow path's numbers from a board configuration. Caps that
    /// the board file does not carry get their defaults
    /// ([`DEFAULT_MAX_RANGES`], [`DEFAULT_MAX_RETRIES`]); page sizes beyond
    /// [`MAX_PAGE_SIZES`] make [`SlowPathConfig::check`] fail.
    pub const fn from_board(b: &BoardConfig) -> Self {
        let mut page_shifts = [0u8; MAX_PAGE_SIZES];
        let mut n = 0usize;
        let mut s = 0u32;
        let mut extra = false;
        while s < 64 {
            if b.pages.sizes.0 & (1u64 << s) != 0 {
                if n < MAX_PAGE_SIZES {
                    page_shifts[n] = s as u8;
                    n += 1;
                } else {
                    extra = true;
                }
            }
            s += 1;
        }
        let smallest_pages = b.data_pages(b.pages.sizes.smallest());
        SlowPathConfig {
            page_shifts,
            // One more than the capacity marks "too many sizes" for `check`.
            n_page_sizes: if extra {
                MAX_PAGE_SIZES as u8 + 1
            } else {
                n as u8
            },
            default_shift: if b.pages.default_size == 0 {
                0
            } else {
                log2(b.pages.default_size)
            },
            slots_per_bucket: b.page_table.slots_per_bucket,
            bucket_bits: b.bucket_index_bits(),
            table_base: b.regions.page_table.base,
            data_base: b.regions.data.base,
            data_size: b.regions.data.size,
            fifo_depth: b.free_pa_fifo.depth,
            max_pids: b.va.max_pids,
            va_bits: b.va.bits,
            max_ranges: min_u64(smallest_pages, DEFAULT_MAX_RANGES as u64) as u32,
            max_retries: DEFAULT_MAX_RETRIES,
            session_capacity: b.sessions.capacity,
            dedup_quota: b.dedup_quota(),
            lock_quota: b.lock_quota(),
            mem_quota_bytes: b.sessions.mem_quota_bytes,
        }
    }

    /// The memory quota in default-size pages, as `SessionReply` carries it.
    pub const fn mem_quota_pages(&self) -> u32 {
        let pages = self.mem_quota_bytes >> self.default_shift;
        if pages > u32::MAX as u64 {
            u32::MAX
        } else {
            pages as u32
        }
    }

    /// The valid page shifts, ascending.
    pub fn shifts(&self) -> &[u8] {
        let n = (self.n_page_sizes as usize).min(MAX_PAGE_SIZES);
        &self.page_shifts[..n]
    }

    /// Index of `shift` among the supported page sizes, ascending: the
    /// index of the per-size counters, FIFOs and physical allocator lists.
    /// Not the VA class, which [`Self::page_classes`] gives.
    pub fn size_index(&self, shift: u8) -> Option<usize> {
        self.shifts().iter().position(|&s| s == shift)
    }

    /// The VA-class rule of this board ([`PageClasses`]: class 0 = the
    /// default size, classes 1.. = the other sizes ascending), built from
    /// `page_shifts`, `default_shift` and `va_bits`. Errors name the field.
    pub fn page_classes(&self) -> Result<PageClasses, ConfigError> {
        PageClasses::new(self.default_shift, self.shifts(), self.va_bits).map_err(|e| ConfigError {
            field: e.field,
            reason: match e.kind {
                ErrorKind::OutOfRange { .. } => "out of range for the page-size classes",
                _ => "inconsistent with the page-size classes",
            },
        })
    }

    /// The VAs where ranges of `1 << shift`-byte pages go: `[start, end)`
    /// inside the VA class of `shift`; `None` if the size is not supported.
    /// Class 0 starts one largest page up, so a null pointer never maps.
    pub fn va_window(&self, shift: u8) -> Option<(u64, u64)> {
        let pc = self.page_classes().ok()?;
        self.size_index(shift)?;
        window(&pc, self.va_base(), shift)
    }

    /// Check every field the slow path relies on.
    pub const fn check(&self) -> Result<(), ConfigError> {
        const fn err(field: &'static str, reason: &'static str) -> Result<(), ConfigError> {
            Err(ConfigError { field, reason })
        }
        let n = self.n_page_sizes as usize;
        if n == 0 {
            return err("pages.sizes", "no page size");
        }
        if n > MAX_PAGE_SIZES {
            return err(
                "pages.sizes",
                "more page sizes than the slow path supports (4)",
            );
        }
        let mut i = 0;
        let mut default_ok = false;
        while i < n {
            let s = self.page_shifts[i];
            if s < MIN_PAGE_SHIFT || s > MAX_PAGE_SHIFT {
                return err("pages.sizes", "page size outside 4 KiB..1 GiB");
            }
            if i > 0 && s <= self.page_shifts[i - 1] {
                return err("pages.sizes", "page sizes not ascending");
            }
            if s == self.default_shift {
                default_ok = true;
            }
            i += 1;
        }
        if !default_ok {
            return err("pages.default_size", "not one of pages.sizes");
        }
        if self.slots_per_bucket == 0 || self.slots_per_bucket > 255 {
            return err("page_table.slots_per_bucket", "must be 1..=255");
        }
        if self.bucket_bits == 0 || self.bucket_bits > 28 {
            return err("page_table", "bucket count must be 2..=2^28");
        }
        if self.fifo_depth == 0 {
            return err("free_pa_fifo.depth", "must be at least 1");
        }
        if self.max_pids == 0 {
            return err("va.max_pids", "must be at least 1");
        }
        if self.va_bits < 24 || self.va_bits > VPN_BITS + MIN_PAGE_SHIFT as u32 {
            return err("va.bits", "must be 24..=60");
        }
        if self.max_ranges == 0 {
            return err("max_ranges", "must be at least 1");
        }
        if self.session_capacity < 2 || self.session_capacity > 1 << 15 {
            return err("sessions.capacity", "must be 2..=32768");
        }
        let l = self.layout();
        // Two top VA bits select the page-size class (`PageClasses`); a
        // class must hold at least one largest page. `SlowPath::new` builds
        // the `PageClasses` itself, which checks the rest.
        if self.va_bits < l.frame_shift + 2 {
            return err(
                "va.bits",
                "no room for two page-class bits above the largest page",
            );
        }
        if l.n_frames == 0 {
            return err("regions.data", "holds no page of the largest size");
        }
        if l.frame_base >> self.page_shifts[0] > u32::MAX as u64
            || (l.frame_base + (l.n_frames << l.frame_shift)) >> self.page_shifts[0]
                > u32::MAX as u64
        {
            return err("regions.data", "page numbers do not fit the 32-bit PPN");
        }
        Ok(())
    }

    /// The derived sizes and the arena layout (meaningful after [`Self::check`]).
    pub const fn layout(&self) -> Layout {
        let n = if (self.n_page_sizes as usize) > MAX_PAGE_SIZES {
            MAX_PAGE_SIZES
        } else {
            self.n_page_sizes as usize
        };
        let unit_shift = if n == 0 {
            12
        } else {
            self.page_shifts[0] as u32
        };
        let frame_shift = if n == 0 {
            12
        } else {
            self.page_shifts[n - 1] as u32
        };
        let frame = 1u64 << frame_shift;
        let frame_base = self.data_base.div_ceil(frame) * frame;
        let end = self.data_base.saturating_add(self.data_size);
        let n_frames = if end > frame_base {
            (end - frame_base) >> frame_shift
        } else {
            0
        };
        let units_per_frame = 1u64 << (frame_shift - unit_shift);
        let n_units = n_frames * units_per_frame;
        let buckets = 1u64
            << if self.bucket_bits > 40 {
                40
            } else {
                self.bucket_bits
            };
        let slots = buckets * self.slots_per_bucket as u64;
        let pid_cap = ((self.max_pids as u64) * 2).next_power_of_two();

        let shadow_words = slots * 2;
        let free_words = buckets.div_ceil(8);
        let range_words = self.max_ranges as u64 * 3;
        let pid_words = pid_cap * crate::va::PID_ENTRY_WORDS as u64;
        let frame_stack_words = n_frames;
        let frame_meta_words = n_frames;
        let partial_words = n_frames * n as u64;
        let bitmap_words = n_units.div_ceil(64);
        let dirty_words = n_units.div_ceil(2);
        let session_words = crate::session::SessionTable::words(self.session_capacity);
        let account_words = crate::session::PidAccounts::words(self.max_pids);
        let words = session_words
            + account_words
            + shadow_words
            + free_words
            + range_words
            + pid_words
            + frame_stack_words
            + frame_meta_words
            + partial_words
            + 2 * bitmap_words
            + dirty_words;
        Layout {
            unit_shift,
            frame_shift,
            frame_base,
            n_frames,
            units_per_frame,
            n_units,
            buckets,
            slots,
            pid_cap,
            shadow_words,
            free_words,
            range_words,
            pid_words,
            frame_stack_words,
            frame_meta_words,
            partial_words,
            bitmap_words,
            dirty_words,
            session_words,
            account_words,
            words,
        }
    }

    /// Words (`u64`) of arena [`crate::SlowPath::new`] needs.
    pub const fn arena_words(&self) -> usize {
        self.layout().words as usize
    }

    /// Pages of `shift` the data region holds.
    pub const fn pages_of(&self, shift: u8) -> u64 {
        let l = self.layout();
        (l.n_frames << l.frame_shift) >> shift
    }

    /// First usable VA (one largest page, so a null pointer never maps).
    pub const fn va_base(&self) -> u64 {
        1u64 << self.layout().frame_shift
    }

    /// One past the last usable VA.
    pub const fn va_end(&self) -> u64 {
        1u64 << self.va_bits
    }
}

/// `[start, end)` of the VA class of `shift` under `pc`, not below `floor`.
pub(crate) fn window(pc: &PageClasses, floor: u64, shift: u8) -> Option<(u64, u64)> {
    let class = pc.class_of(shift)?;
    let base = pc.class_base(class);
    Some((base.max(floor), base + pc.class_bytes()))
}

/// Sizes derived from a [`SlowPathConfig`] and the split of the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Shift of the smallest page (the bitmap unit).
    pub unit_shift: u32,
    /// Shift of the largest page (the frame the physical allocator splits).
    pub frame_shift: u32,
    /// First frame's physical address (data base rounded up to a frame).
    pub frame_base: u64,
    /// Frames in the data region.
    pub n_frames: u64,
    /// Smallest pages per frame.
    pub units_per_frame: u64,
    /// Smallest pages in all frames.
    pub n_units: u64,
    /// Buckets of the page table.
    pub buckets: u64,
    /// PTE slots of the page table.
    pub slots: u64,
    /// Entries of the PID hash table.
    pub pid_cap: u64,
    /// Arena words of the shadow table (2 per PTE).
    pub shadow_words: u64,
    /// Arena words of the per-bucket free counts (8 per word).
    pub free_words: u64,
    /// Arena words of the range table (3 per range).
    pub range_words: u64,
    /// Arena words of the PID table (1 + one cursor per VA class, per entry).
    pub pid_words: u64,
    /// Arena words of the free-frame stack.
    pub frame_stack_words: u64,
    /// Arena words of the per-frame metadata.
    pub frame_meta_words: u64,
    /// Arena words of the per-size partial-frame lists.
    pub partial_words: u64,
    /// Arena words of one unit bitmap (two are kept: in use, in FIFO).
    pub bitmap_words: u64,
    /// Arena words of the dirty-page queue (2 per word).
    pub dirty_words: u64,
    /// Arena words of the shadow session table (2 per entry).
    pub session_words: u64,
    /// Arena words of the per-PID accounts (1 per PID, 0 included).
    pub account_words: u64,
    /// Total arena words.
    pub words: u64,
}

impl Layout {
    /// Bytes of the arena.
    pub const fn bytes(&self) -> u64 {
        self.words * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_config::boards;

    #[test]
    fn shipped_boards_are_accepted() {
        for b in [boards::ZCU106, boards::EMULATOR] {
            let c = SlowPathConfig::from_board(&b);
            c.check().unwrap();
            assert_eq!(c.layout().buckets, b.bucket_count());
            assert_eq!(c.slots_per_bucket, b.page_table.slots_per_bucket);
            assert_eq!(
                c.shifts().first().map(|&s| 1u64 << s),
                Some(b.pages.sizes.smallest())
            );
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let mut c = SlowPathConfig::from_board(&boards::EMULATOR);
        c.slots_per_bucket = 0;
        assert_eq!(c.check().unwrap_err().field, "page_table.slots_per_bucket");
        let mut c = SlowPathConfig::from_board(&boards::EMULATOR);
        c.default_shift = 13;
        assert_eq!(c.check().unwrap_err().field, "pages.default_size");
        let mut c = SlowPathConfig::from_board(&boards::EMULATOR);
        c.data_size = 4096;
        assert_eq!(c.check().unwrap_err().field, "regions.data");
        let mut c = SlowPathConfig::from_board(&boards::EMULATOR);
        c.va_bits = 22;
        assert_eq!(c.check().unwrap_err().field, "va.bits");
    }
}
