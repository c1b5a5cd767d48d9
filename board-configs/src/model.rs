//! The board configuration types and every derived value.
//!
//! All types are plain `Copy` data that can be built in a `const` context, so a
//! `no_std` firmware can hold its board as a `const` generated at build time.
//! Derived values (page-table geometry, dedup entries, ...) are computed here
//! and nowhere else, so the fast path, the slow path, the emulator and the host
//! tool never disagree on them.

use core::fmt;

use crate::keys;

/// Bytes in one page-table entry, from the PTE layout in `clio-wire` (16 B).
pub const PTE_BYTES: u64 = clio_wire::pte::PTE_LEN as u64;

/// Bytes of one ring descriptor slot, from the ring format in `clio-wire` (64 B).
pub const RING_SLOT_BYTES: u64 = clio_wire::ring::SLOT_LEN as u64;

/// Bytes on an Ethernet link of the smallest request that takes a dedup
/// record (an atomic: 8 payload bytes): preamble 8 + Ethernet header 14 +
/// IPv4 20 + UDP 8 + Clio header + 8 + FCS 4 + inter-frame gap 12.
pub const MIN_RECORDED_FRAME_BYTES: u64 =
    8 + 14 + 20 + 8 + clio_wire::clio::HEADER_LEN as u64 + 8 + 4 + 12;

const fn clamp_u16(v: u64) -> u16 {
    if v > u16::MAX as u64 {
        u16::MAX
    } else {
        v as u16
    }
}

/// Bytes of the boot-seed mailbox ([`BoardConfig::boot_seed_mailbox`]).
pub const BOOT_SEED_BYTES: u64 = 32;

/// Longest board name, in bytes.
pub const NAME_CAPACITY: usize = 32;

/// A short ASCII-or-UTF-8 name stored inline, so it is `Copy` and `const`-constructible.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    bytes: [u8; NAME_CAPACITY],
    len: u8,
}

impl Name {
    /// Builds a name; `None` if `s` is longer than [`NAME_CAPACITY`] bytes.
    pub const fn try_new(s: &str) -> Option<Self> {
        let src = s.as_bytes();
        if src.len() > NAME_CAPACITY {
            return None;
        }
        let mut bytes = [0u8; NAME_CAPACITY];
        let mut i = 0;
        while i < src.len() {
            bytes[i] = src[i];
            i += 1;
        }
        Some(Self {
            bytes,
            len: src.len() as u8,
        })
    }

    /// Builds a name in a `const` context; a name longer than [`NAME_CAPACITY`]
    /// bytes is a compile-time error there (and a panic at run time).
    pub const fn new(s: &str) -> Self {
        match Self::try_new(s) {
            Some(name) => name,
            None => panic!("board name longer than NAME_CAPACITY bytes"),
        }
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        // Built from a `&str` prefix of whole characters, so always valid UTF-8.
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which kind of board a configuration describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardKind {
    /// Xilinx ZCU106 (Zynq UltraScale+ MPSoC): FPGA fast path + ARM slow path.
    Zcu106,
    /// Xilinx Alveo U200 PCIe card reached over XDMA (EDM fabric).
    AlveoU200,
    /// The emulated board process (fast-path model + slow-path library).
    Emulator,
}

impl BoardKind {
    /// Every kind, in a fixed order.
    pub const ALL: [BoardKind; 3] = [BoardKind::Zcu106, BoardKind::AlveoU200, BoardKind::Emulator];

    /// The spelling used in the TOML files (`board.kind`).
    pub const fn as_str(self) -> &'static str {
        match self {
            BoardKind::Zcu106 => "zcu106",
            BoardKind::AlveoU200 => "alveo-u200",
            BoardKind::Emulator => "emulator",
        }
    }

    /// Parses the TOML spelling.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Physical form of the board's network ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// 10G SFP+ cages (ZCU106).
    SfpPlus,
    /// 100G QSFP28 cages (Alveo U200).
    Qsfp28,
    /// No physical port: UDP over the host's loopback or a network namespace.
    Loopback,
}

impl PortKind {
    /// Every kind, in a fixed order.
    pub const ALL: [PortKind; 3] = [PortKind::SfpPlus, PortKind::Qsfp28, PortKind::Loopback];

    /// The spelling used in the TOML files (`network.port_kind`).
    pub const fn as_str(self) -> &'static str {
        match self {
            PortKind::SfpPlus => "sfp+",
            PortKind::Qsfp28 => "qsfp28",
            PortKind::Loopback => "loopback",
        }
    }

    /// Parses the TOML spelling.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What the memory board's network side is (`network.front_end`): how Clio
/// packets reach its unchanged fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    /// UDP/IPv4 over Ethernet (the prototype's; the default).
    Udp,
    /// An EDM port: Clio packets carried over the EDM fabric from U200 compute
    /// cards (issue #15; the mapping is `clio_wire::edm_clio`).
    Edm,
}

impl FrontEnd {
    /// Every front end, in a fixed order.
    pub const ALL: [FrontEnd; 2] = [FrontEnd::Udp, FrontEnd::Edm];

    /// The spelling used in the TOML files (`network.front_end`).
    pub const fn as_str(self) -> &'static str {
        match self {
            FrontEnd::Udp => "udp",
            FrontEnd::Edm => "edm",
        }
    }

    /// Parses the TOML spelling.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A contiguous range of board physical addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// First byte.
    pub base: u64,
    /// Length in bytes.
    pub size: u64,
}

impl Region {
    /// One past the last byte (saturating, so a malformed region never wraps).
    pub const fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }

    /// Whether `other` lies entirely inside `self`.
    pub const fn contains(&self, other: &Region) -> bool {
        other.base >= self.base && other.end() <= self.end()
    }

    /// Whether the two regions share at least one byte.
    pub const fn overlaps(&self, other: &Region) -> bool {
        self.size != 0 && other.size != 0 && self.base < other.end() && other.base < self.end()
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}..{:#x}", self.base, self.end())
    }
}

/// Set of supported page sizes: bit `n` set means pages of `2^n` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageSizes(pub u64);

impl PageSizes {
    /// The empty set.
    pub const EMPTY: PageSizes = PageSizes(0);

    /// Adds `bytes` (must be a power of two below 2^64).
    pub const fn with(self, bytes: u64) -> Self {
        PageSizes(self.0 | bytes)
    }

    /// Whether pages of `bytes` are supported.
    pub const fn contains(&self, bytes: u64) -> bool {
        bytes.is_power_of_two() && self.0 & bytes != 0
    }

    /// Number of sizes in the set.
    pub const fn len(&self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    pub const fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Smallest size in bytes, 0 if empty.
    pub const fn smallest(&self) -> u64 {
        self.0 & self.0.wrapping_neg()
    }

    /// Largest size in bytes, 0 if empty.
    pub const fn largest(&self) -> u64 {
        if self.0 == 0 {
            0
        } else {
            1u64 << (63 - self.0.leading_zeros())
        }
    }

    /// The sizes in bytes, smallest first.
    pub fn iter(&self) -> impl Iterator<Item = u64> {
        let bits = self.0;
        (0..64).map(|s| 1u64 << s).filter(move |b| bits & b != 0)
    }
}

/// Board identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// Human name, e.g. `zcu106`.
    pub name: Name,
    /// Which hardware (or the emulator) this is.
    pub kind: BoardKind,
}

/// Board DRAM reachable by the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dram {
    /// Physical base address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
}

impl Dram {
    /// The DRAM as a region.
    pub const fn region(&self) -> Region {
        Region {
            base: self.base,
            size: self.size,
        }
    }
}

/// How board DRAM is carved up. Regions lie inside DRAM and never overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Regions {
    /// Reserved for the slow-path firmware image, its stack and heap.
    pub firmware: Region,
    /// The FPGA↔ARM ring buffers ([`Rings`] locates each ring inside).
    pub rings: Region,
    /// Packet buffers of the fast-path network stack.
    pub net_buffers: Region,
    /// The hash page table (must hold [`BoardConfig::page_table_bytes`]).
    pub page_table: Region,
    /// Physical pages handed out to applications.
    pub data: Region,
}

impl Regions {
    /// Every region with its dotted key, in address-layout order of the shipped files.
    pub const fn named(&self) -> [(&'static str, Region); 5] {
        [
            (keys::REGIONS_FIRMWARE.table, self.firmware),
            (keys::REGIONS_RINGS.table, self.rings),
            (keys::REGIONS_NET_BUFFERS.table, self.net_buffers),
            (keys::REGIONS_PAGE_TABLE.table, self.page_table),
            (keys::REGIONS_DATA.table, self.data),
        ]
    }
}

/// Supported page sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pages {
    /// Every size the board can map.
    pub sizes: PageSizes,
    /// The size used when an allocation does not ask for one (4 MiB in the prototype).
    pub default_size: u64,
}

/// Hash page-table geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageTable {
    /// PTE slots per bucket, fetched in one DRAM access (prototype: 16).
    pub slots_per_bucket: u32,
    /// Slots per physical page of the smallest size (2: the table is twice the pages).
    pub slot_factor: u32,
}

/// Fast-path TLB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tlb {
    /// CAM entries (prototype: 64).
    pub entries: u32,
}

/// Free physical-page FIFOs the ARM keeps topped up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FreePaFifo {
    /// Entries per page size (prototype: 32).
    pub depth: u32,
}

/// One ring buffer in the ring region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ring {
    /// Physical address of slot 0.
    pub base: u64,
    /// Number of slots (a power of two, so indices wrap by mask).
    pub slots: u32,
}

/// The FPGA↔ARM rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rings {
    /// Bytes per descriptor slot.
    pub slot_bytes: u32,
    /// FPGA → ARM (allocation requests, PA-consumed notices, errors).
    pub rx: Ring,
    /// ARM → FPGA (PTE inserts/removes, TLB shootdowns, free PAs, replies).
    pub tx: Ring,
}

/// Fast-path datapath.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FastPath {
    /// Clock in MHz (250 on ZCU106).
    pub clock_mhz: u32,
    /// Datapath width in bits (512).
    pub datapath_bits: u32,
    /// Byte address, on the ARM's bus, of the fast-path register block
    /// (`clio_fp_regs`, map in `clio_wire::fpregs`) the firmware programs at
    /// boot; `None` where no ARM reaches one (Alveo; optional for the emulator).
    pub regs_base: Option<u64>,
    /// Interleave long READ answers of different clients packet by packet
    /// (the fast path's `cfg_streams_on`, `CONTROL.READ_STREAMS` on the
    /// ZCU106); off, every READ is answered whole before the next request.
    /// Default on, except on an Alveo card (no Clio fast path), where it is
    /// refused.
    pub read_streams: bool,
}

impl FastPath {
    /// `fastpath.read_streams` when the file does not set it.
    pub const fn default_read_streams(kind: BoardKind) -> bool {
        !matches!(kind, BoardKind::AlveoU200)
    }
}

/// Network identity and ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Network {
    /// Board MAC address.
    pub mac: [u8; 6],
    /// Board IPv4 address.
    pub ipv4: [u8; 4],
    /// UDP port the board serves.
    pub udp_port: u16,
    /// Largest UDP payload per packet in bytes (1450 in the prototype).
    pub mtu_payload: u32,
    /// Number of network ports.
    pub ports: u32,
    /// Line rate of each port in Gbit/s.
    pub port_gbps: u32,
    /// Physical form of the ports.
    pub port_kind: PortKind,
    /// Client return addresses the emulated board's UDP server remembers at
    /// once (`network.clients`, default [`DEFAULT_CLIENTS`]); the least
    /// recently heard is forgotten to make room. A ZCU106's RTL table is
    /// fixed by the top instead (64 entries indexed by pid; bitstream README).
    pub clients: u32,
    /// Largest response one request may produce, in bytes
    /// (`network.max_response_bytes`, default [`DEFAULT_MAX_RESPONSE_BYTES`]):
    /// a larger READ is answered `TOO_LARGE` without executing, and the INFO
    /// reply states the bound (in KiB) so clients split. It bounds how long
    /// one request holds the board's port (64 KiB: about 52 µs at 10 Gbit/s).
    pub max_response_bytes: u32,
    /// The memory board's network side (`network.front_end`, default
    /// [`FrontEnd::Udp`]): UDP/IPv4, or an EDM port (memory boards only).
    pub front_end: FrontEnd,
}

/// `network.clients` when a file does not set it.
pub const DEFAULT_CLIENTS: u32 = 4096;

/// `network.max_response_bytes` when a file does not set it: 64 KiB, 46
/// packets of a 1450-byte MTU, about 52 µs of a 10 Gbit/s port.
pub const DEFAULT_MAX_RESPONSE_BYTES: u32 = 64 * 1024;

/// Dedup buffer of recently executed non-idempotent requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dedup {
    /// Buffer capacity in bytes (≈ 3 × TIMEOUT × bandwidth; 30 KiB).
    pub buffer_bytes: u64,
    /// Bytes per remembered request.
    pub entry_bytes: u32,
    /// `OFFLOAD_CALL` answers the board remembers for retries
    /// (exactly-once), all sessions together (`dedup.offload_answers`,
    /// default [`DEFAULT_OFFLOAD_ANSWERS`]): a call retried after this many
    /// newer answers runs again. The firmware keeps each in a record the
    /// size of the largest answer datagram (`network.max_response_bytes`).
    pub offload_answers: u32,
}

/// `dedup.offload_answers` when a file does not set it (the firmware's
/// bound before it was a key: 32 records of 64 KiB, 2 MiB of `.bss`).
pub const DEFAULT_OFFLOAD_ANSWERS: u32 = 32;

/// Request-level timeouts used by the host SDK against this board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeouts {
    /// Give up on a request (all retries included) after this many µs.
    pub request_us: u64,
    /// Lower bound of the retransmission timeout in µs.
    pub rto_min_us: u64,
    /// Upper bound of the retransmission timeout in µs.
    pub rto_max_us: u64,
    /// Retries per request before reporting failure.
    pub retry_budget: u32,
}

/// Sessions (issue #14): the fast path's on-chip session table and the
/// per-session and per-address-space limits the board enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sessions {
    /// Entries of the fast-path session table; session ids are
    /// `1..capacity` (id 0 means "no session"), so `capacity - 1` sessions
    /// can be open at once.
    pub capacity: u32,
    /// Dedup records one session may hold at once (a new non-idempotent
    /// request beyond it is answered `BUSY`).
    pub dedup_per_session: u32,
    /// Locks one session may hold at once (a LOCK beyond it: `OVER_QUOTA`).
    pub locks_per_session: u32,
    /// Bytes of VA one address space (PID) may have allocated; an ALLOC
    /// beyond it is answered `OVER_QUOTA`. A multiple of `pages.default_size`.
    pub mem_quota_bytes: u64,
}

/// Virtual address space served by the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VaSpace {
    /// VA width in bits (50).
    pub bits: u32,
    /// Size of a vRegion, the unit of distribution across boards (1 GiB).
    pub vregion_bytes: u64,
    /// Largest number of concurrently open PIDs.
    pub max_pids: u32,
}

/// PCIe/XDMA attachment of a card (Alveo U200 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pcie {
    /// PCI vendor id.
    pub vendor_id: u16,
    /// PCI device id.
    pub device_id: u16,
    /// BAR carrying the user AXI-Lite registers.
    pub user_bar: u8,
    /// Offset of the EDM control registers inside the user BAR.
    pub user_offset: u64,
    /// Host-to-card DMA channels.
    pub h2c_channels: u8,
    /// Card-to-host DMA channels.
    pub c2h_channels: u8,
    /// XDMA driver instance: device files are `/dev/xdma<N>_*`.
    pub xdma_instance: u32,
}

/// A complete, resolved board configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoardConfig {
    /// Identity.
    pub board: Board,
    /// DRAM.
    pub dram: Dram,
    /// DRAM layout.
    pub regions: Regions,
    /// Page sizes.
    pub pages: Pages,
    /// Page-table geometry.
    pub page_table: PageTable,
    /// TLB.
    pub tlb: Tlb,
    /// Free-PA FIFOs.
    pub free_pa_fifo: FreePaFifo,
    /// FPGA↔ARM rings.
    pub rings: Rings,
    /// Fast-path clock and width.
    pub fastpath: FastPath,
    /// Network identity.
    pub network: Network,
    /// Dedup buffer.
    pub dedup: Dedup,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// VA space.
    pub va: VaSpace,
    /// Session table and quotas.
    pub sessions: Sessions,
    /// PCIe attachment (present exactly for Alveo U200).
    pub pcie: Option<Pcie>,
}

/// The derived values, in one place.
impl BoardConfig {
    /// Physical pages of `page_bytes` in the data region (0 if the size is not supported).
    pub const fn data_pages(&self, page_bytes: u64) -> u64 {
        if self.pages.sizes.contains(page_bytes) {
            self.regions.data.size / page_bytes
        } else {
            0
        }
    }

    /// The page size the page table is sized for: the smallest supported one.
    ///
    /// Any mix of page sizes maps at most as many pages as an all-smallest
    /// mapping, so sizing for the smallest size means the table never runs
    /// out of slots whatever sizes applications pick.
    pub const fn page_table_sizing_page(&self) -> u64 {
        self.pages.sizes.smallest()
    }

    /// Slots the table must have at least: `slot_factor` × data pages of the smallest size.
    pub const fn page_table_slots_needed(&self) -> u64 {
        (self.page_table.slot_factor as u64)
            .saturating_mul(self.data_pages(self.page_table_sizing_page()))
    }

    /// Number of buckets: enough for [`Self::page_table_slots_needed`], rounded up to a
    /// power of two so the bucket index is `hash & (bucket_count - 1)`.
    pub const fn bucket_count(&self) -> u64 {
        let k = self.page_table.slots_per_bucket as u64;
        if k == 0 {
            return 0;
        }
        let needed = self.page_table_slots_needed().div_ceil(k);
        let needed = if needed == 0 { 1 } else { needed };
        match needed.checked_next_power_of_two() {
            Some(n) => n,
            None => u64::MAX,
        }
    }

    /// `log2(bucket_count)`: the number of hash bits that select a bucket.
    pub const fn bucket_index_bits(&self) -> u32 {
        self.bucket_count().trailing_zeros()
    }

    /// The VA-to-page-size rule of this board (class 0 = the default page
    /// size, then the other sizes ascending; see [`clio_wire::PageClasses`]).
    pub fn page_classes(&self) -> Result<clio_wire::PageClasses, clio_wire::Error> {
        let mut shifts = [0u8; clio_wire::pte::MAX_PAGE_CLASSES + 1];
        let mut n = 0;
        for bytes in self.pages.sizes.iter() {
            if n == shifts.len() {
                break;
            }
            shifts[n] = bytes.trailing_zeros() as u8;
            n += 1;
        }
        clio_wire::PageClasses::new(
            self.pages.default_size.trailing_zeros() as u8,
            &shifts[..n],
            self.va.bits,
        )
    }

    /// Where the table lives and its shape, as the `clio-wire` bucket functions take it.
    pub const fn page_table_geometry(&self) -> clio_wire::TableGeometry {
        clio_wire::TableGeometry {
            base: self.regions.page_table.base,
            bucket_bits: self.bucket_index_bits(),
            slots_per_bucket: self.page_table.slots_per_bucket,
        }
    }

    /// Total PTE slots in the table.
    pub const fn page_table_slots(&self) -> u64 {
        self.bucket_count()
            .saturating_mul(self.page_table.slots_per_bucket as u64)
    }

    /// Bytes of one bucket (one DRAM access).
    pub const fn bucket_bytes(&self) -> u64 {
        (self.page_table.slots_per_bucket as u64).saturating_mul(PTE_BYTES)
    }

    /// Bytes of the whole page table.
    pub const fn page_table_bytes(&self) -> u64 {
        self.bucket_count().saturating_mul(self.bucket_bytes())
    }

    /// Free-PA FIFO entries over all page sizes.
    pub const fn free_pa_fifo_entries(&self) -> u64 {
        (self.free_pa_fifo.depth as u64).saturating_mul(self.pages.sizes.len() as u64)
    }

    /// Bytes one ring occupies: the `clio-wire` ring header plus its slots.
    pub const fn ring_bytes(&self, ring: &Ring) -> u64 {
        (clio_wire::ring::HEADER_LEN as u64)
            .saturating_add((ring.slots as u64).saturating_mul(self.rings.slot_bytes as u64))
    }

    /// The RX ring (FPGA → ARM) as a region.
    pub const fn rx_ring_region(&self) -> Region {
        Region {
            base: self.rings.rx.base,
            size: self.ring_bytes(&self.rings.rx),
        }
    }

    /// The TX ring (ARM → FPGA) as a region.
    pub const fn tx_ring_region(&self) -> Region {
        Region {
            base: self.rings.tx.base,
            size: self.ring_bytes(&self.rings.tx),
        }
    }

    /// Requests the dedup buffer remembers.
    pub const fn dedup_entries(&self) -> u64 {
        match self
            .dedup
            .buffer_bytes
            .checked_div(self.dedup.entry_bytes as u64)
        {
            Some(n) => n,
            None => 0,
        }
    }

    /// Where a loader may leave random bytes for the firmware's per-boot
    /// seed (the first [`BOOT_SEED_BYTES`] of `regions.net_buffers`, which
    /// nothing uses before the fast path runs). The emulator's QEMU launcher
    /// writes OS randomness there before the guest starts; the firmware mixes
    /// whatever it finds into its seed and then zeroes it. A board whose
    /// boot loader writes nothing just adds DRAM's power-up contents.
    pub const fn boot_seed_mailbox(&self) -> Region {
        Region {
            base: self.regions.net_buffers.base,
            size: BOOT_SEED_BYTES,
        }
    }

    /// Session-table entries (`sessions.capacity`); valid session ids are
    /// `1..session_capacity()`.
    pub const fn session_capacity(&self) -> u32 {
        self.sessions.capacity
    }

    /// Sessions that can be open at once: `capacity - 1` (id 0 is "none").
    pub const fn max_sessions(&self) -> u32 {
        self.sessions.capacity.saturating_sub(1)
    }

    /// Dedup records one session may hold, as the `SessionReply` descriptor
    /// and `OpenSessionResp` carry it (validation keeps it within `u16`).
    pub const fn dedup_quota(&self) -> u16 {
        clamp_u16(self.sessions.dedup_per_session as u64)
    }

    /// Locks one session may hold, as the wire carries it (`u16`).
    pub const fn lock_quota(&self) -> u16 {
        clamp_u16(self.sessions.locks_per_session as u64)
    }

    /// The per-PID memory quota in pages of `pages.default_size`, as the
    /// `SessionReply` descriptor and `OpenSessionResp` carry it (validation
    /// keeps it a whole number of pages that fits `u32`).
    pub const fn mem_quota_pages(&self) -> u32 {
        match self
            .sessions
            .mem_quota_bytes
            .checked_div(self.pages.default_size)
        {
            Some(n) if n > u32::MAX as u64 => u32::MAX,
            Some(n) => n as u32,
            None => 0,
        }
    }

    /// Dedup records the buffer must hold (the brief's ≈ 3 × TIMEOUT ×
    /// bandwidth, counted in records): the smallest recorded requests
    /// ([`MIN_RECORDED_FRAME_BYTES`] on the wire each) arriving at the full
    /// line rate ([`Self::line_rate_gbps`]) for three retransmission
    /// timeouts at the SDK's floor (`timeouts.rto_min_us`, which the SDK
    /// takes as its RTO floor): a record must outlive the first attempt,
    /// a retry sent one RTO later, and the acknowledgement that frees it.
    ///
    /// Why not the SDK's give-up time (`timeouts.request_us`): records are
    /// freed only by the client's acknowledgement, never evicted, so a record
    /// outlives any retry however late; a session whose acknowledgement is
    /// held back by a lost answer holds at most `sessions.dedup_per_session`
    /// records (then `BUSY`), which covers its whole give-up time. Sizing for
    /// line rate × give-up time would take 3 s × 2.5 GB/s / 130 B ≈ 58 M
    /// records on a ZCU106 (1.8 GB of on-chip memory).
    pub const fn dedup_entries_needed(&self) -> u64 {
        let bits = 3u128 * self.timeouts.rto_min_us as u128 * self.line_rate_gbps() as u128 * 1000;
        let per = MIN_RECORDED_FRAME_BYTES as u128 * 8;
        let n = bits.div_ceil(per);
        if n > u64::MAX as u128 {
            u64::MAX
        } else {
            n as u64
        }
    }

    /// `dedup.buffer_bytes` needed for [`Self::dedup_entries_needed`].
    pub const fn dedup_buffer_bytes_needed(&self) -> u64 {
        self.dedup_entries_needed()
            .saturating_mul(self.dedup.entry_bytes as u64)
    }

    /// How long the dedup buffer lasts, in ns, when the smallest recorded
    /// requests arrive at the full line rate and none is acknowledged: what
    /// `clio bringup` compares with the client's retransmission timeouts.
    pub const fn dedup_coverage_ns(&self) -> u64 {
        let gbps = self.line_rate_gbps();
        if gbps == 0 {
            return u64::MAX;
        }
        // bits / (Gbit/s) = ns.
        self.dedup_entries()
            .saturating_mul(MIN_RECORDED_FRAME_BYTES * 8)
            / gbps
    }

    /// Fast-path throughput in Gbit/s at one beat per cycle (II = 1).
    pub const fn datapath_gbps(&self) -> u64 {
        (self.fastpath.clock_mhz as u64).saturating_mul(self.fastpath.datapath_bits as u64) / 1000
    }

    /// Aggregate line rate of all ports in Gbit/s.
    pub const fn line_rate_gbps(&self) -> u64 {
        (self.network.ports as u64).saturating_mul(self.network.port_gbps as u64)
    }

    /// Bytes of the VA space.
    pub const fn va_bytes(&self) -> u64 {
        if self.va.bits >= 64 {
            u64::MAX
        } else {
            1u64 << self.va.bits
        }
    }

    /// vRegions per address space.
    pub const fn vregion_count(&self) -> u64 {
        match self.va_bytes().checked_div(self.va.vregion_bytes) {
            Some(n) => n,
            None => 0,
        }
    }
}
