//! Allowed ranges of every key and the whole-config checks.
//!
//! Both the TOML loader and [`BoardConfig::validate`] use the [`limits`] below,
//! so a range is written once. Validation is `no_std`: a firmware can check a
//! generated `const` board with `const _: () = assert!(...)`-style tests or at boot.

use core::fmt;

use crate::keys;
use crate::model::{BoardConfig, BoardKind, Name, Region, PTE_BYTES, RING_SLOT_BYTES};

/// An inclusive range of allowed values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Smallest allowed value.
    pub min: u64,
    /// Largest allowed value.
    pub max: u64,
    /// Whether the value must also be a power of two.
    pub pow2: bool,
}

impl Limit {
    /// A plain inclusive range.
    pub const fn range(min: u64, max: u64) -> Self {
        Self {
            min,
            max,
            pow2: false,
        }
    }

    /// An inclusive range of powers of two.
    pub const fn pow2(min: u64, max: u64) -> Self {
        Self {
            min,
            max,
            pow2: true,
        }
    }

    /// Whether `v` is allowed.
    pub const fn allows(&self, v: u64) -> bool {
        v >= self.min && v <= self.max && (!self.pow2 || v.is_power_of_two())
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pow2 {
            write!(f, "a power of two in {}..={}", self.min, self.max)
        } else {
            write!(f, "in {}..={}", self.min, self.max)
        }
    }
}

/// The allowed range of every numeric key (one definition, used by loader and validator).
pub mod limits {
    use super::Limit;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    const TIB: u64 = 1 << 40;

    /// `dram.base`: any 4 KiB-aligned address below 2^48.
    pub const DRAM_BASE: Limit = Limit::range(0, (1 << 48) - 1);
    /// `dram.size`: 16 MiB to 1 TiB.
    pub const DRAM_SIZE: Limit = Limit::range(16 * MIB, TIB);
    /// `regions.*.base`.
    pub const REGION_BASE: Limit = Limit::range(0, (1 << 48) - 1);
    /// `regions.*.size`: 4 KiB to 1 TiB.
    pub const REGION_SIZE: Limit = Limit::range(4 * KIB, TIB);
    /// `pages.sizes[*]` and `pages.default_size`: 4 KiB to 1 GiB, powers of two.
    pub const PAGE_SIZE: Limit = Limit::pow2(4 * KIB, GIB);
    /// `page_table.slots_per_bucket`.
    pub const SLOTS_PER_BUCKET: Limit = Limit::pow2(1, 64);
    /// `page_table.slot_factor`.
    pub const SLOT_FACTOR: Limit = Limit::range(1, 8);
    /// `tlb.entries`.
    pub const TLB_ENTRIES: Limit = Limit::range(1, 4096);
    /// `free_pa_fifo.depth`.
    pub const FREE_PA_FIFO_DEPTH: Limit = Limit::range(1, 4096);
    /// `rings.slot_bytes`.
    pub const RING_SLOT_BYTES: Limit = Limit::pow2(16, 4096);
    /// `rings.rx.base`, `rings.tx.base`.
    pub const RING_BASE: Limit = Limit::range(0, (1 << 48) - 1);
    /// `rings.rx.slots`, `rings.tx.slots`.
    pub const RING_SLOTS: Limit = Limit::pow2(2, 65536);
    /// `fastpath.clock_mhz`.
    pub const CLOCK_MHZ: Limit = Limit::range(10, 1000);
    /// `fastpath.datapath_bits`.
    pub const DATAPATH_BITS: Limit = Limit::pow2(64, 2048);
    /// `fastpath.regs_base`: an address below 4 GiB (the firmware maps the
    /// low 4 GiB only).
    pub const REGS_BASE: Limit = Limit::range(0, (1 << 32) - 1);
    /// `network.udp_port`.
    pub const UDP_PORT: Limit = Limit::range(1, 65535);
    /// `network.mtu_payload`: data bytes per packet, at most what a 9000-byte
    /// jumbo frame carries after the IP, UDP and Clio headers (`clio-wire`).
    pub const MTU_PAYLOAD: Limit = Limit::range(256, clio_wire::clio::MAX_PAYLOAD as u64);
    /// `network.ports`.
    pub const PORTS: Limit = Limit::range(1, 8);
    /// `network.port_gbps`.
    pub const PORT_GBPS: Limit = Limit::range(1, 800);
    /// `network.clients`: up to 2^24 remembered addresses (about 1.6 GB of
    /// table at ~100 B each; the default 4096 takes ~400 KB).
    pub const CLIENTS: Limit = Limit::range(1, 1 << 24);
    /// `network.max_response_bytes`: whole KiB that fit the 16-bit
    /// `InfoResp.max_resp_kib` (also a multiple of 1 KiB, and at least
    /// `network.mtu_payload`).
    pub const MAX_RESPONSE_BYTES: Limit = Limit::range(KIB, 65535 * KIB);
    /// `dedup.buffer_bytes`.
    pub const DEDUP_BUFFER_BYTES: Limit = Limit::range(64, 64 * MIB);
    /// `dedup.entry_bytes`.
    pub const DEDUP_ENTRY_BYTES: Limit = Limit::pow2(8, 1024);
    /// `dedup.offload_answers` (also: their records fit half the firmware
    /// region).
    pub const OFFLOAD_ANSWERS: Limit = Limit::range(1, 1024);
    /// `timeouts.request_us`: up to one minute.
    pub const REQUEST_US: Limit = Limit::range(1, 60_000_000);
    /// `timeouts.rto_min_us`, `timeouts.rto_max_us`: up to ten seconds.
    pub const RTO_US: Limit = Limit::range(1, 10_000_000);
    /// `timeouts.retry_budget`.
    pub const RETRY_BUDGET: Limit = Limit::range(0, 64);
    /// `va.bits`.
    pub const VA_BITS: Limit = Limit::range(32, 56);
    /// `va.vregion_bytes`: 4 KiB to 1 TiB, powers of two.
    pub const VREGION_BYTES: Limit = Limit::pow2(4 * KIB, TIB);
    /// `va.max_pids`.
    pub const MAX_PIDS: Limit = Limit::range(1, 65535);
    /// `sessions.capacity`: session ids and INFO's `sessions` are u16 on
    /// the wire (`1..capacity`); a power of two so the fast path's table is
    /// a plain indexed memory.
    pub const SESSION_CAPACITY: Limit = Limit::pow2(2, 32768);
    /// `sessions.dedup_per_session`: carried as a u16.
    pub const DEDUP_PER_SESSION: Limit = Limit::range(1, 65535);
    /// `sessions.locks_per_session`: carried as a u16.
    pub const LOCKS_PER_SESSION: Limit = Limit::range(1, 65535);
    /// `sessions.mem_quota_bytes`: 4 KiB to 1 TiB.
    pub const MEM_QUOTA_BYTES: Limit = Limit::range(4 * KIB, TIB);
    /// `pcie.vendor_id`, `pcie.device_id`.
    pub const PCI_ID: Limit = Limit::range(0, 0xffff);
    /// `pcie.user_bar`.
    pub const PCI_BAR: Limit = Limit::range(0, 5);
    /// `pcie.user_offset`: inside a 4 GiB BAR.
    pub const PCI_USER_OFFSET: Limit = Limit::range(0, (1 << 32) - 1);
    /// `pcie.h2c_channels`, `pcie.c2h_channels`: XDMA has up to four of each.
    pub const XDMA_CHANNELS: Limit = Limit::range(1, 4);
    /// `pcie.xdma_instance`.
    pub const XDMA_INSTANCE: Limit = Limit::range(0, 255);
    /// Address alignment of every region.
    pub const REGION_ALIGN: u64 = 4 * KIB;
}

/// The value a [`Violation`] is about, for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// A number.
    Int(u64),
    /// An address.
    Addr(u64),
    /// A region.
    Region(Region),
    /// A fixed word.
    Text(&'static str),
    /// A name.
    Name(Name),
    /// Nothing useful to show.
    Nothing,
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Int(v) => write!(f, "{v}"),
            Shown::Addr(v) => write!(f, "{v:#x}"),
            Shown::Region(r) => write!(f, "{r}"),
            Shown::Text(t) => f.write_str(t),
            Shown::Name(n) => write!(f, "{:?}", n.as_str()),
            Shown::Nothing => f.write_str("(absent)"),
        }
    }
}

/// Why a value is not allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Outside its [`Limit`].
    OutOfRange(Limit),
    /// Not a multiple of `align`.
    NotAligned(u64),
    /// A region not inside DRAM.
    OutsideDram(Region),
    /// Shares bytes with another region or ring (its dotted key).
    Overlaps(&'static str, Region),
    /// Must lie inside the region with this dotted key.
    OutsideOf(&'static str, Region),
    /// Smaller than required; the `&str` says by what.
    TooSmall(u64, &'static str),
    /// Larger than allowed; the `&str` says by what.
    TooLarge(u64, &'static str),
    /// Must equal a value fixed elsewhere; the `&str` says where.
    NotEqual(u64, &'static str),
    /// The default page size is not in `pages.sizes`.
    NotASupportedPageSize,
    /// A board name with characters outside `[A-Za-z0-9._-]`, or empty.
    BadName,
    /// A table that must be present for this board kind is missing, or vice versa.
    WrongForKind(BoardKind, bool),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::OutOfRange(l) => write!(f, "must be {l}"),
            Reason::NotAligned(a) => write!(f, "must be a multiple of {a:#x}"),
            Reason::OutsideDram(d) => write!(f, "must lie inside DRAM {d}"),
            Reason::Overlaps(k, r) => write!(f, "overlaps '{k}' ({r})"),
            Reason::OutsideOf(k, r) => write!(f, "must lie inside '{k}' ({r})"),
            Reason::TooSmall(min, why) => write!(f, "must be at least {min} ({why})"),
            Reason::TooLarge(max, why) => write!(f, "must be at most {max} ({why})"),
            Reason::BadName => {
                f.write_str("must be 1 to 32 characters from A-Z, a-z, 0-9, '.', '_', '-'")
            }
            Reason::NotEqual(v, why) => write!(f, "must be {v} ({why})"),
            Reason::NotASupportedPageSize => f.write_str("must be one of 'pages.sizes'"),
            Reason::WrongForKind(kind, true) => {
                write!(f, "is required for board kind '{}'", kind.as_str())
            }
            Reason::WrongForKind(kind, false) => {
                write!(f, "is not allowed for board kind '{}'", kind.as_str())
            }
        }
    }
}

/// One broken rule: the dotted key, its value and why it is not allowed.
///
/// Displays as `key 'page_table.slots_per_bucket' = 0: must be a power of two in 1..=64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Dotted TOML key.
    pub key: &'static str,
    /// The offending value.
    pub value: Shown,
    /// The rule it breaks.
    pub reason: Reason,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key '{}' = {}: {}", self.key, self.value, self.reason)
    }
}

/// Checks `v` against `limit`.
pub const fn check(key: &'static str, v: u64, limit: Limit) -> Result<(), Violation> {
    if limit.allows(v) {
        Ok(())
    } else {
        Err(Violation {
            key,
            value: Shown::Int(v),
            reason: Reason::OutOfRange(limit),
        })
    }
}

fn fail(key: &'static str, value: Shown, reason: Reason) -> Result<(), Violation> {
    Err(Violation { key, value, reason })
}

impl BoardConfig {
    /// Checks every key's range and every cross-key rule; the first broken one is returned.
    pub fn validate(&self) -> Result<(), Violation> {
        use limits as l;
        let c = self;
        // Single keys.
        let name = c.board.name.as_str();
        if name.is_empty() || !name.bytes().all(name_byte_ok) {
            return fail(keys::BOARD_NAME, Shown::Name(c.board.name), Reason::BadName);
        }
        check(keys::DRAM_BASE, c.dram.base, l::DRAM_BASE)?;
        check(keys::DRAM_SIZE, c.dram.size, l::DRAM_SIZE)?;
        for (key, r) in c.regions.named() {
            check(key, r.size, l::REGION_SIZE)?;
        }
        if c.pages.sizes.is_empty() {
            return fail(
                keys::PAGES_SIZES,
                Shown::Text("[]"),
                Reason::TooSmall(1, "page sizes"),
            );
        }
        for size in c.pages.sizes.iter() {
            check(keys::PAGES_SIZES, size, l::PAGE_SIZE)?;
        }
        check(keys::PAGES_DEFAULT_SIZE, c.pages.default_size, l::PAGE_SIZE)?;
        let ps = &c.page_table;
        check(
            keys::PAGE_TABLE_SLOTS_PER_BUCKET,
            ps.slots_per_bucket.into(),
            l::SLOTS_PER_BUCKET,
        )?;
        check(
            keys::PAGE_TABLE_SLOT_FACTOR,
            ps.slot_factor.into(),
            l::SLOT_FACTOR,
        )?;
        check(keys::TLB_ENTRIES, c.tlb.entries.into(), l::TLB_ENTRIES)?;
        check(
            keys::FREE_PA_FIFO_DEPTH,
            c.free_pa_fifo.depth.into(),
            l::FREE_PA_FIFO_DEPTH,
        )?;
        check(
            keys::RINGS_SLOT_BYTES,
            c.rings.slot_bytes.into(),
            l::RING_SLOT_BYTES,
        )?;
        check(keys::RINGS_RX.base, c.rings.rx.base, l::RING_BASE)?;
        check(keys::RINGS_RX.slots, c.rings.rx.slots.into(), l::RING_SLOTS)?;
        check(keys::RINGS_TX.base, c.rings.tx.base, l::RING_BASE)?;
        check(keys::RINGS_TX.slots, c.rings.tx.slots.into(), l::RING_SLOTS)?;
        check(
            keys::FASTPATH_CLOCK_MHZ,
            c.fastpath.clock_mhz.into(),
            l::CLOCK_MHZ,
        )?;
        check(
            keys::FASTPATH_DATAPATH_BITS,
            c.fastpath.datapath_bits.into(),
            l::DATAPATH_BITS,
        )?;
        if let Some(base) = c.fastpath.regs_base {
            check(keys::FASTPATH_REGS_BASE, base, l::REGS_BASE)?;
        }
        let n = &c.network;
        check(keys::NETWORK_UDP_PORT, n.udp_port.into(), l::UDP_PORT)?;
        check(
            keys::NETWORK_MTU_PAYLOAD,
            n.mtu_payload.into(),
            l::MTU_PAYLOAD,
        )?;
        check(keys::NETWORK_PORTS, n.ports.into(), l::PORTS)?;
        check(keys::NETWORK_PORT_GBPS, n.port_gbps.into(), l::PORT_GBPS)?;
        check(keys::NETWORK_CLIENTS, n.clients.into(), l::CLIENTS)?;
        check(
            keys::NETWORK_MAX_RESPONSE_BYTES,
            n.max_response_bytes.into(),
            l::MAX_RESPONSE_BYTES,
        )?;
        if n.max_response_bytes % 1024 != 0 {
            fail(
                keys::NETWORK_MAX_RESPONSE_BYTES,
                Shown::Int(n.max_response_bytes.into()),
                Reason::NotAligned(1024),
            )?;
        }
        if n.max_response_bytes < n.mtu_payload {
            fail(
                keys::NETWORK_MAX_RESPONSE_BYTES,
                Shown::Int(n.max_response_bytes.into()),
                Reason::TooSmall(n.mtu_payload.into(), "network.mtu_payload: one full packet"),
            )?;
        }
        check(
            keys::DEDUP_BUFFER_BYTES,
            c.dedup.buffer_bytes,
            l::DEDUP_BUFFER_BYTES,
        )?;
        check(
            keys::DEDUP_ENTRY_BYTES,
            c.dedup.entry_bytes.into(),
            l::DEDUP_ENTRY_BYTES,
        )?;
        check(
            keys::DEDUP_OFFLOAD_ANSWERS,
            c.dedup.offload_answers.into(),
            l::OFFLOAD_ANSWERS,
        )?;
        let t = &c.timeouts;
        check(keys::TIMEOUTS_REQUEST_US, t.request_us, l::REQUEST_US)?;
        check(keys::TIMEOUTS_RTO_MIN_US, t.rto_min_us, l::RTO_US)?;
        check(keys::TIMEOUTS_RTO_MAX_US, t.rto_max_us, l::RTO_US)?;
        check(
            keys::TIMEOUTS_RETRY_BUDGET,
            t.retry_budget.into(),
            l::RETRY_BUDGET,
        )?;
        check(keys::VA_BITS, c.va.bits.into(), l::VA_BITS)?;
        check(keys::VA_VREGION_BYTES, c.va.vregion_bytes, l::VREGION_BYTES)?;
        check(keys::VA_MAX_PIDS, c.va.max_pids.into(), l::MAX_PIDS)?;
        let se = &c.sessions;
        check(
            keys::SESSIONS_CAPACITY,
            se.capacity.into(),
            l::SESSION_CAPACITY,
        )?;
        check(
            keys::SESSIONS_DEDUP_PER_SESSION,
            se.dedup_per_session.into(),
            l::DEDUP_PER_SESSION,
        )?;
        check(
            keys::SESSIONS_LOCKS_PER_SESSION,
            se.locks_per_session.into(),
            l::LOCKS_PER_SESSION,
        )?;
        check(
            keys::SESSIONS_MEM_QUOTA_BYTES,
            se.mem_quota_bytes,
            l::MEM_QUOTA_BYTES,
        )?;
        if let Some(p) = &c.pcie {
            check(keys::PCIE_USER_BAR, p.user_bar.into(), l::PCI_BAR)?;
            check(keys::PCIE_USER_OFFSET, p.user_offset, l::PCI_USER_OFFSET)?;
            check("pcie.h2c_channels", p.h2c_channels.into(), l::XDMA_CHANNELS)?;
            check("pcie.c2h_channels", p.c2h_channels.into(), l::XDMA_CHANNELS)?;
            check(
                keys::PCIE_XDMA_INSTANCE,
                p.xdma_instance.into(),
                l::XDMA_INSTANCE,
            )?;
        }
        self.validate_layout()?;
        self.validate_relations()
    }

    /// Regions inside DRAM, aligned, disjoint; rings inside the ring region;
    /// page table big enough; data region page-aligned.
    fn validate_layout(&self) -> Result<(), Violation> {
        let c = self;
        let dram = c.dram.region();
        if c.dram.base % l_align() != 0 {
            return fail(
                keys::DRAM_BASE,
                Shown::Addr(c.dram.base),
                Reason::NotAligned(l_align()),
            );
        }
        if c.dram.base.checked_add(c.dram.size).is_none() {
            return fail(
                keys::DRAM_SIZE,
                Shown::Int(c.dram.size),
                Reason::TooLarge(u64::MAX - c.dram.base, "base + size must fit in 64 bits"),
            );
        }
        let named = c.regions.named();
        for (i, (key, r)) in named.iter().enumerate() {
            if r.base % l_align() != 0 || r.size % l_align() != 0 {
                return fail(key, Shown::Region(*r), Reason::NotAligned(l_align()));
            }
            if !dram.contains(r) {
                return fail(key, Shown::Region(*r), Reason::OutsideDram(dram));
            }
            for (other_key, other) in &named[..i] {
                if r.overlaps(other) {
                    return fail(key, Shown::Region(*r), Reason::Overlaps(other_key, *other));
                }
            }
        }
        if u64::from(c.rings.slot_bytes) != RING_SLOT_BYTES {
            return fail(
                keys::RINGS_SLOT_BYTES,
                Shown::Int(c.rings.slot_bytes.into()),
                Reason::NotEqual(RING_SLOT_BYTES, "the ring slot of clio-wire"),
            );
        }
        let ring_area = (keys::REGIONS_RINGS.table, c.regions.rings);
        let rx = (keys::RINGS_RX.base, c.rx_ring_region());
        let tx = (keys::RINGS_TX.base, c.tx_ring_region());
        for (key, r) in [rx, tx] {
            if r.base % u64::from(c.rings.slot_bytes) != 0 {
                return fail(
                    key,
                    Shown::Addr(r.base),
                    Reason::NotAligned(c.rings.slot_bytes.into()),
                );
            }
            if !ring_area.1.contains(&r) {
                return fail(
                    key,
                    Shown::Region(r),
                    Reason::OutsideOf(ring_area.0, ring_area.1),
                );
            }
        }
        if tx.1.overlaps(&rx.1) {
            return fail(
                tx.0,
                Shown::Region(tx.1),
                Reason::Overlaps(keys::RINGS_RX.table, rx.1),
            );
        }
        let need = c.page_table_bytes();
        if c.regions.page_table.size < need {
            return fail(
                keys::REGIONS_PAGE_TABLE.table,
                Shown::Region(c.regions.page_table),
                Reason::TooSmall(need, "bytes of the derived page table"),
            );
        }
        let largest = c.pages.sizes.largest();
        let data = c.regions.data;
        if data.base % largest != 0 || data.size % largest != 0 {
            return fail(
                keys::REGIONS_DATA.table,
                Shown::Region(data),
                Reason::NotAligned(largest),
            );
        }
        Ok(())
    }

    /// Relations between keys that are not about addresses.
    fn validate_relations(&self) -> Result<(), Violation> {
        let c = self;
        if !c.pages.sizes.contains(c.pages.default_size) {
            return fail(
                keys::PAGES_DEFAULT_SIZE,
                Shown::Int(c.pages.default_size),
                Reason::NotASupportedPageSize,
            );
        }
        // Two VA bits select a page-size class, so at most four sizes, and
        // the largest page must fit in one class's share of the VA space.
        if c.pages.sizes.len() as usize > clio_wire::pte::MAX_PAGE_CLASSES {
            return fail(
                keys::PAGES_SIZES,
                Shown::Int(c.pages.sizes.len().into()),
                Reason::TooLarge(
                    clio_wire::pte::MAX_PAGE_CLASSES as u64,
                    "page-size classes (two VA bits)",
                ),
            );
        }
        if c.page_classes().is_err() {
            return fail(
                keys::VA_BITS,
                Shown::Int(c.va.bits.into()),
                Reason::TooSmall(
                    u64::from(c.pages.sizes.largest().trailing_zeros()) + 2,
                    "bits for the largest page plus two class bits",
                ),
            );
        }
        let t = &c.timeouts;
        if t.rto_max_us < t.rto_min_us {
            return fail(
                keys::TIMEOUTS_RTO_MAX_US,
                Shown::Int(t.rto_max_us),
                Reason::TooSmall(t.rto_min_us, keys::TIMEOUTS_RTO_MIN_US),
            );
        }
        if t.request_us < t.rto_max_us {
            return fail(
                keys::TIMEOUTS_REQUEST_US,
                Shown::Int(t.request_us),
                Reason::TooSmall(t.rto_max_us, keys::TIMEOUTS_RTO_MAX_US),
            );
        }
        if c.dedup.buffer_bytes < u64::from(c.dedup.entry_bytes) {
            return fail(
                keys::DEDUP_BUFFER_BYTES,
                Shown::Int(c.dedup.buffer_bytes),
                Reason::TooSmall(c.dedup.entry_bytes.into(), "one dedup.entry_bytes entry"),
            );
        }
        // The firmware keeps each remembered answer in a record of the
        // largest answer datagram (the response bound and a 64-byte head):
        // all of them must leave half the firmware region to the rest.
        let record = u64::from(c.network.max_response_bytes) + 64;
        let most = c.regions.firmware.size / 2 / record;
        if u64::from(c.dedup.offload_answers) > most {
            return fail(
                keys::DEDUP_OFFLOAD_ANSWERS,
                Shown::Int(c.dedup.offload_answers.into()),
                Reason::TooLarge(
                    most,
                    "records of network.max_response_bytes + 64 in half of regions.firmware",
                ),
            );
        }
        if c.va.vregion_bytes > c.va_bytes() {
            return fail(
                keys::VA_VREGION_BYTES,
                Shown::Int(c.va.vregion_bytes),
                Reason::TooLarge(c.va_bytes(), "2^va.bits"),
            );
        }
        if c.pages.sizes.largest() > c.va.vregion_bytes {
            return fail(
                keys::VA_VREGION_BYTES,
                Shown::Int(c.va.vregion_bytes),
                Reason::TooSmall(c.pages.sizes.largest(), "the largest page size"),
            );
        }
        self.validate_sessions()?;
        // One bucket is one DRAM burst; a PTE beat must fit the datapath.
        if PTE_BYTES * 8 > u64::from(c.fastpath.datapath_bits) {
            return fail(
                keys::FASTPATH_DATAPATH_BITS,
                Shown::Int(c.fastpath.datapath_bits.into()),
                Reason::TooSmall(PTE_BYTES * 8, "one PTE per beat"),
            );
        }
        let is_alveo = c.board.kind == BoardKind::AlveoU200;
        if is_alveo != c.pcie.is_some() {
            return fail(
                keys::PCIE,
                Shown::Text(if c.pcie.is_some() {
                    "present"
                } else {
                    "absent"
                }),
                Reason::WrongForKind(c.board.kind, is_alveo),
            );
        }
        // The EDM front end is a memory board's network side; a U200 is a compute
        // node's EDM NIC (its translator is the other end).
        if c.network.front_end == crate::model::FrontEnd::Edm && is_alveo {
            return fail(
                keys::NETWORK_FRONT_END,
                Shown::Text(c.network.front_end.as_str()),
                Reason::WrongForKind(c.board.kind, false),
            );
        }
        // A U200 carries no Clio fast path whose READ answers could stream.
        if c.fastpath.read_streams && is_alveo {
            return fail(
                keys::FASTPATH_READ_STREAMS,
                Shown::Text("true"),
                Reason::WrongForKind(c.board.kind, false),
            );
        }
        self.validate_regs_base()
    }
}

impl BoardConfig {
    /// The `[sessions]` table against the rest, and the dedup buffer's size
    /// against the line rate and the SDK's retransmission timeout.
    fn validate_sessions(&self) -> Result<(), Violation> {
        let c = self;
        let se = &c.sessions;
        let need = c.dedup_buffer_bytes_needed();
        if c.dedup.buffer_bytes < need {
            return fail(
                keys::DEDUP_BUFFER_BYTES,
                Shown::Int(c.dedup.buffer_bytes),
                Reason::TooSmall(
                    need,
                    "raise dedup.buffer_bytes: records of 3 x timeouts.rto_min_us of the smallest \
                     recorded requests at the line rate (network.ports x network.port_gbps)",
                ),
            );
        }
        if u64::from(se.dedup_per_session) > c.dedup_entries() {
            return fail(
                keys::SESSIONS_DEDUP_PER_SESSION,
                Shown::Int(se.dedup_per_session.into()),
                Reason::TooLarge(
                    c.dedup_entries(),
                    "records of the whole buffer, dedup.buffer_bytes / dedup.entry_bytes",
                ),
            );
        }
        let page = c.pages.default_size;
        if page != 0 && se.mem_quota_bytes % page != 0 {
            return fail(
                keys::SESSIONS_MEM_QUOTA_BYTES,
                Shown::Int(se.mem_quota_bytes),
                Reason::NotAligned(page),
            );
        }
        if se.mem_quota_bytes > c.regions.data.size {
            return fail(
                keys::SESSIONS_MEM_QUOTA_BYTES,
                Shown::Int(se.mem_quota_bytes),
                Reason::TooLarge(c.regions.data.size, keys::REGIONS_DATA.size),
            );
        }
        if page != 0 && se.mem_quota_bytes / page > u64::from(u32::MAX) {
            return fail(
                keys::SESSIONS_MEM_QUOTA_BYTES,
                Shown::Int(se.mem_quota_bytes),
                Reason::TooLarge(
                    u64::from(u32::MAX).saturating_mul(page),
                    "2^32 - 1 pages of pages.default_size (the wire's mem_quota_pages)",
                ),
            );
        }
        Ok(())
    }
}

/// The ZynqMP's `M_AXI_HPM0_FPD` low address window (UG1085 address map),
/// where the ZCU106 bitstream puts the fast-path register block.
pub const HPM0_FPD_WINDOW: Region = Region {
    base: 0xa000_0000,
    size: 0x1000_0000,
};

impl BoardConfig {
    /// `fastpath.regs_base`: required on a ZCU106 (its firmware programs the
    /// block), refused on an Alveo card (no ARM); where present, 4 KiB
    /// aligned with the whole block inside the `M_AXI_HPM0_FPD` window.
    fn validate_regs_base(&self) -> Result<(), Violation> {
        let key = keys::FASTPATH_REGS_BASE;
        let kind = self.board.kind;
        let base = match (kind, self.fastpath.regs_base) {
            (BoardKind::AlveoU200, Some(b)) => {
                return fail(key, Shown::Addr(b), Reason::WrongForKind(kind, false))
            }
            (BoardKind::Zcu106, None) => {
                return fail(key, Shown::Nothing, Reason::WrongForKind(kind, true))
            }
            (_, None) => return Ok(()),
            (_, Some(b)) => b,
        };
        if base % l_align() != 0 {
            return fail(key, Shown::Addr(base), Reason::NotAligned(l_align()));
        }
        let block = Region {
            base,
            size: clio_wire::fpregs::BLOCK_LEN as u64,
        };
        if !HPM0_FPD_WINDOW.contains(&block) {
            return fail(
                key,
                Shown::Addr(base),
                Reason::OutsideOf("M_AXI_HPM0_FPD", HPM0_FPD_WINDOW),
            );
        }
        Ok(())
    }
}

/// Whether `b` may appear in a board name (names go into file names and generated code).
pub const fn name_byte_ok(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-'
}

const fn l_align() -> u64 {
    limits::REGION_ALIGN
}
