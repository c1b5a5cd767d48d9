//! What the model takes from the board config, checked once at construction.
//!
//! Every parameter comes from [`clio_config::BoardConfig`]; the only
//! model-specific knobs are the cycle costs ([`CycleCosts`]) and the zeroing
//! policy ([`ZeroPolicy`]).

use core::fmt;

use clio_config::{keys, BoardConfig};
use clio_wire::pte::{TableGeometry, MAX_PAGE_CLASSES, MAX_PAGE_SHIFT, MIN_PAGE_SHIFT};
use clio_wire::ring::ring_bytes;
use clio_wire::PageClasses;

use crate::cycles::CycleCosts;

/// Largest number of page sizes the VA-class rule can tell apart (two VA
/// bits); the wire crate's [`MAX_PAGE_CLASSES`].
pub const MAX_PAGE_SIZES: usize = MAX_PAGE_CLASSES;

/// Who guarantees that a physical page handed to a process holds no data of
/// an earlier owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroPolicy {
    /// The fast path zeroes the whole physical page when a first-touch fault
    /// maps it (cost counted in the trace: one DRAM write burst of the page).
    OnFault,
    /// The slow path zeroes pages before pushing them into the free-PA FIFO;
    /// the fast path maps them as they are.
    BySlowPath,
}

/// A configuration the model cannot run with, naming the config key at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted config key (or `dram` for the memory buffer handed in).
    pub key: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}

impl std::error::Error for ConfigError {}

fn err(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        key,
        reason: reason.into(),
    }
}

/// A physical range as DRAM offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte (DRAM offset).
    pub start: usize,
    /// One past the last byte (DRAM offset).
    pub end: usize,
}

impl Span {
    /// Bytes covered.
    pub const fn len(&self) -> usize {
        self.end - self.start
    }
    /// Whether the span is empty.
    pub const fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The resolved layout and parameters the model runs with.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Physical address of DRAM offset 0.
    pub dram_base: u64,
    /// DRAM bytes.
    pub dram_len: usize,
    /// RX ring (FPGA -> ARM): header plus slots.
    pub rx_ring: Span,
    /// TX ring (ARM -> FPGA): header plus slots.
    pub tx_ring: Span,
    /// Hash page table geometry (base is a physical address).
    pub table: TableGeometry,
    /// Data region as physical addresses `[start, end)`.
    pub data_start: u64,
    /// End of the data region (physical).
    pub data_end: u64,
    /// The VA-class rule ([`PageClasses`], from `BoardConfig::page_classes`).
    pub classes: PageClasses,
    /// Page shift of each VA class (index = class; 0 = class unused), a
    /// copy of `classes` for dumps and the RTL parameter files.
    pub class_shift: [u8; MAX_PAGE_SIZES],
    /// Supported page shifts, one per FIFO (index = FIFO number).
    pub fifo_shift: [u8; MAX_PAGE_SIZES],
    /// Number of supported page sizes.
    pub page_sizes: usize,
    /// Default page shift.
    pub default_shift: u8,
    /// VA width in bits.
    pub va_bits: u32,
    /// Largest valid PID (PIDs are `1..=max_pid`).
    pub max_pid: u32,
    /// Largest payload per packet.
    pub mtu: usize,
    /// Largest response one request may produce (`network.max_response_bytes`):
    /// a READ with a larger `total_len` is answered `TOO_LARGE`.
    pub max_resp: u32,
    /// TLB entries.
    pub tlb_entries: usize,
    /// Free-PA FIFO depth per page size.
    pub fifo_depth: usize,
    /// Dedup buffer entries.
    pub dedup_entries: usize,
    /// Session-table entries (session ids `1..sessions`).
    pub sessions: usize,
    /// Fast-path clock in MHz (for latency projection).
    pub clock_mhz: u32,
    /// Datapath width in bytes (one beat).
    pub beat_bytes: u32,
}

impl Layout {
    /// Resolve and check a board config for a DRAM of `dram_len` bytes.
    pub fn new(c: &BoardConfig, dram_len: usize) -> Result<Layout, ConfigError> {
        if (dram_len as u64) < c.dram.size {
            return Err(err(
                keys::DRAM_SIZE,
                format!(
                    "memory buffer holds {dram_len} bytes, config says {}",
                    c.dram.size
                ),
            ));
        }
        let (rx_ring, tx_ring) = rings(c)?;
        let table = page_table(c, [rx_ring, tx_ring])?;
        let pages = PageSizing::new(c)?;
        let (mtu, sessions) = check_limits(c)?;
        Ok(Layout {
            dram_base: c.dram.base,
            dram_len: c.dram.size as usize,
            rx_ring,
            tx_ring,
            table,
            data_start: c.regions.data.base,
            data_end: c.regions.data.end(),
            classes: pages.classes,
            class_shift: pages.class_shift,
            fifo_shift: pages.fifo_shift,
            page_sizes: pages.count,
            default_shift: pages.classes.default_shift(),
            va_bits: c.va.bits,
            max_pid: c.va.max_pids,
            mtu,
            max_resp: c.network.max_response_bytes,
            tlb_entries: c.tlb.entries as usize,
            fifo_depth: c.free_pa_fifo.depth as usize,
            dedup_entries: c.dedup_entries() as usize,
            sessions,
            clock_mhz: c.fastpath.clock_mhz,
            beat_bytes: c.fastpath.datapath_bits / 8,
        })
    }

    /// The page shift of `va` by the VA-class rule ([`PageClasses::shift_of`]),
    /// `None` if `va` lies outside the VA space or in a class with no page
    /// size.
    ///
    /// Class = VA bits `[va_bits-1 : va_bits-2]`; class 0 holds pages of the
    /// default size, classes 1.. the other supported sizes in ascending order.
    /// The page size of any VA is thus known before the page table is read,
    /// which keeps a translation at one bucket read.
    #[inline]
    pub fn shift_of(&self, va: u64) -> Option<u8> {
        self.classes.shift_of(va)
    }

    /// The first VA of page-size class `class` ([`PageClasses::class_base`]).
    pub fn class_base(&self, class: usize) -> u64 {
        self.classes.class_base(class)
    }

    /// FIFO number of a page shift, if the size is supported.
    pub fn fifo_of(&self, shift: u8) -> Option<usize> {
        self.fifo_shift[..self.page_sizes]
            .iter()
            .position(|&s| s == shift)
    }

    /// DRAM offset of a physical address.
    #[inline]
    pub fn offset(&self, pa: u64) -> usize {
        (pa - self.dram_base) as usize
    }

    /// Whether the physical page `ppn << shift` lies inside the data region.
    pub fn page_in_data(&self, ppn: u32, shift: u8) -> bool {
        let start = u64::from(ppn) << shift;
        let end = start + (1u64 << shift);
        start >= self.data_start && end <= self.data_end
    }
}

/// `len` bytes at physical address `pa` as DRAM offsets; an error naming
/// `key` unless they lie inside DRAM.
fn dram_span(c: &BoardConfig, key: &'static str, pa: u64, len: u64) -> Result<Span, ConfigError> {
    let start = pa
        .checked_sub(c.dram.base)
        .ok_or_else(|| err(key, "below dram.base"))?;
    let end = start
        .checked_add(len)
        .ok_or_else(|| err(key, "address overflow"))?;
    if end > c.dram.size {
        return Err(err(
            key,
            format!("{pa:#x}+{len:#x} runs past the end of DRAM"),
        ));
    }
    Ok(Span {
        start: start as usize,
        end: end as usize,
    })
}

/// The RX and TX rings: inside DRAM, of the wire's slot size, disjoint.
fn rings(c: &BoardConfig) -> Result<(Span, Span), ConfigError> {
    if c.rings.slot_bytes as usize != clio_wire::ring::SLOT_LEN {
        return Err(err(
            keys::RINGS_SLOT_BYTES,
            format!("must be {}", clio_wire::ring::SLOT_LEN),
        ));
    }
    let ring = |k: keys::RingKeys, r: clio_config::Ring| {
        dram_span(c, k.base, r.base, ring_bytes(r.slots) as u64)
    };
    let rx_ring = ring(keys::RINGS_RX, c.rings.rx)?;
    let tx_ring = ring(keys::RINGS_TX, c.rings.tx)?;
    if rx_ring.start < tx_ring.end && tx_ring.start < rx_ring.end {
        return Err(err(
            keys::RINGS_TX.base,
            format!(
                "TX ring {:#x}..{:#x} (128-byte header + slots) overlaps the RX ring {:#x}..{:#x}",
                tx_ring.start, tx_ring.end, rx_ring.start, rx_ring.end
            ),
        ));
    }
    Ok((rx_ring, tx_ring))
}

/// The hash page table's geometry: it fits its region, and neither it nor
/// the data region overlaps a ring.
fn page_table(c: &BoardConfig, rings: [Span; 2]) -> Result<TableGeometry, ConfigError> {
    let k = c.page_table.slots_per_bucket;
    if k == 0 {
        return Err(err(keys::PAGE_TABLE_SLOTS_PER_BUCKET, "must be at least 1"));
    }
    let table = TableGeometry {
        base: c.regions.page_table.base,
        bucket_bits: c.bucket_index_bits(),
        slots_per_bucket: k,
    };
    let pt_key = keys::REGIONS_PAGE_TABLE.table;
    if table.table_bytes() > c.regions.page_table.size {
        return Err(err(
            pt_key,
            format!(
                "holds {} bytes, the table needs {}",
                c.regions.page_table.size,
                table.table_bytes()
            ),
        ));
    }
    let pt = dram_span(c, pt_key, table.base, table.table_bytes())?;
    let data = c.regions.data;
    let data = dram_span(c, keys::REGIONS_DATA.table, data.base, data.size)?;
    for (key, span) in [keys::RINGS_RX.base, keys::RINGS_TX.base]
        .into_iter()
        .zip(rings)
    {
        for other in [pt, data] {
            if span.start < other.end && other.start < span.end {
                return Err(err(key, "ring overlaps the page table or the data region"));
            }
        }
    }
    Ok(table)
}

/// The supported page sizes: the VA classes and one free-PA FIFO per size.
struct PageSizing {
    classes: PageClasses,
    /// Page shift of each VA class (0 = class unused).
    class_shift: [u8; MAX_PAGE_SIZES],
    /// Page shift of each FIFO, ascending.
    fifo_shift: [u8; MAX_PAGE_SIZES],
    /// How many sizes.
    count: usize,
}

impl PageSizing {
    fn new(c: &BoardConfig) -> Result<PageSizing, ConfigError> {
        let mut sizes: Vec<u64> = c.pages.sizes.iter().collect();
        if sizes.is_empty() || sizes.len() > MAX_PAGE_SIZES {
            return Err(err(
                keys::PAGES_SIZES,
                format!("1 to {MAX_PAGE_SIZES} page sizes supported"),
            ));
        }
        for &s in &sizes {
            let shift = s.trailing_zeros() as u8;
            if !(MIN_PAGE_SHIFT..=MAX_PAGE_SHIFT).contains(&shift) {
                return Err(err(
                    keys::PAGES_SIZES,
                    format!("page size {s} outside 4 KiB..1 GiB"),
                ));
            }
        }
        if !c.pages.sizes.contains(c.pages.default_size) {
            return Err(err(keys::PAGES_DEFAULT_SIZE, "not one of pages.sizes"));
        }
        // The one definition of the class rule; its errors name the key.
        let classes = c
            .page_classes()
            .map_err(|e| err(e.field, format!("page-size classes: {e}")))?;
        let mut class_shift = [0u8; MAX_PAGE_SIZES];
        for (class, slot) in class_shift.iter_mut().enumerate() {
            *slot = classes.shift(class).unwrap_or(0);
        }
        sizes.sort_unstable();
        let mut fifo_shift = [0u8; MAX_PAGE_SIZES];
        for (i, &s) in sizes.iter().enumerate() {
            fifo_shift[i] = s.trailing_zeros() as u8;
        }
        Ok(PageSizing {
            classes,
            class_shift,
            fifo_shift,
            count: sizes.len(),
        })
    }
}

/// The sizes the model's tables are built from: returns the MTU and the
/// session-table entries.
fn check_limits(c: &BoardConfig) -> Result<(usize, usize), ConfigError> {
    let mtu = c.network.mtu_payload as usize;
    let min_mtu = clio_wire::payload::InfoResp::LEN;
    if mtu < min_mtu || mtu > clio_wire::clio::MAX_PAYLOAD {
        return Err(err(
            keys::NETWORK_MTU_PAYLOAD,
            format!(
                "must be {min_mtu}..={} (an InfoResp must fit)",
                clio_wire::clio::MAX_PAYLOAD
            ),
        ));
    }
    if c.tlb.entries == 0 {
        return Err(err(keys::TLB_ENTRIES, "must be at least 1"));
    }
    if c.free_pa_fifo.depth == 0 {
        return Err(err(keys::FREE_PA_FIFO_DEPTH, "must be at least 1"));
    }
    if c.dedup_entries() == 0 {
        return Err(err(keys::DEDUP_BUFFER_BYTES, "holds no entry"));
    }
    let sessions = c.session_capacity() as usize;
    if !(2..=u16::MAX as usize).contains(&sessions) {
        return Err(err(
            keys::SESSIONS_CAPACITY,
            "must be 2..=65535 (session ids and InfoResp.sessions are u16)",
        ));
    }
    if c.fastpath.datapath_bits < 64 || c.fastpath.datapath_bits % 8 != 0 {
        return Err(err(
            keys::FASTPATH_DATAPATH_BITS,
            "must be a multiple of 8, at least 64",
        ));
    }
    if c.fastpath.clock_mhz == 0 {
        return Err(err(keys::FASTPATH_CLOCK_MHZ, "must be positive"));
    }
    Ok((mtu, sessions))
}

/// Construction options of the model beyond the board config.
#[derive(Debug, Clone, Copy)]
pub struct ModelOptions {
    /// Per-stage cycle costs.
    pub costs: CycleCosts,
    /// Who zeroes pages for first touch.
    pub zero_policy: ZeroPolicy,
    /// Forwarded slow-path requests awaiting a reply (tags in flight).
    pub pending_slots: usize,
    /// Fences that may wait at once.
    pub fence_slots: usize,
    /// Entries of the region gate (`GATE_SET`; a board's is
    /// [`clio_wire::ring::GATE_ENTRIES`], an emulated rack node's larger).
    pub gate_entries: usize,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            costs: CycleCosts::default(),
            zero_policy: ZeroPolicy::OnFault,
            pending_slots: 64,
            fence_slots: 16,
            gate_entries: clio_wire::ring::GATE_ENTRIES as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_config::boards;

    #[test]
    fn shipped_boards_resolve() {
        for b in [boards::ZCU106, boards::ALVEO_U200, boards::EMULATOR] {
            let l = Layout::new(&b, b.dram.size as usize)
                .unwrap_or_else(|e| panic!("{}: {e}", b.board.name));
            assert_eq!(l.class_shift[0], l.default_shift);
            assert_eq!(Ok(l.classes), b.page_classes());
            for (class, &shift) in l.class_shift.iter().enumerate() {
                assert_eq!(l.classes.shift(class).unwrap_or(0), shift);
            }
            assert_eq!(l.dedup_entries as u64, b.dedup_entries());
        }
    }

    #[test]
    fn va_classes() {
        let b = boards::EMULATOR;
        let l = Layout::new(&b, b.dram.size as usize).unwrap();
        // 4 MiB default in class 0, then 4 KiB and 2 MiB ascending; class 3 unused.
        assert_eq!(l.class_shift, [22, 12, 21, 0]);
        assert_eq!(l.shift_of(0x40_0000), Some(22));
        assert_eq!(l.shift_of(1 << 48), Some(12));
        assert_eq!(l.shift_of((2 << 48) + 5), Some(21));
        assert_eq!(l.shift_of(3 << 48), None);
        assert_eq!(l.shift_of(1 << 50), None);
        assert_eq!(l.fifo_shift[..l.page_sizes], [12, 21, 22]);
    }

    #[test]
    fn bad_configs_name_their_key() {
        let mut b = boards::EMULATOR;
        assert_eq!(Layout::new(&b, 1 << 20).unwrap_err().key, "dram.size");
        b.rings.tx.base = b.rings.rx.base + 64;
        assert_eq!(
            Layout::new(&b, b.dram.size as usize).unwrap_err().key,
            "rings.tx.base"
        );
        let mut b = boards::EMULATOR;
        b.regions.page_table.size = 4096;
        assert_eq!(
            Layout::new(&b, b.dram.size as usize).unwrap_err().key,
            "regions.page_table"
        );
        let mut b = boards::EMULATOR;
        b.pages.default_size = 8192;
        assert_eq!(
            Layout::new(&b, b.dram.size as usize).unwrap_err().key,
            "pages.default_size"
        );
        let mut b = boards::EMULATOR;
        b.va.bits = 23;
        assert_eq!(
            Layout::new(&b, b.dram.size as usize).unwrap_err().key,
            "va.bits"
        );
        let mut b = boards::EMULATOR;
        b.network.mtu_payload = 0;
        assert_eq!(
            Layout::new(&b, b.dram.size as usize).unwrap_err().key,
            "network.mtu_payload"
        );
    }
}
