//! Every dotted key of a board file, written once.
//!
//! The loader reads these keys, [`BoardConfig::validate`](crate::BoardConfig::validate)
//! names them in its violations, and a test checks that [`LEAVES`] is exactly
//! the set of keys the canonical form writes, so a key cannot be spelled two
//! ways. `no_std`.

/// The two keys of a `{ base, size }` region table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionKeys {
    /// The table, e.g. `regions.data`.
    pub table: &'static str,
    /// Its `base` key.
    pub base: &'static str,
    /// Its `size` key.
    pub size: &'static str,
}

/// The two keys of a `{ base, slots }` ring table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingKeys {
    /// The table, e.g. `rings.rx`.
    pub table: &'static str,
    /// Its `base` key.
    pub base: &'static str,
    /// Its `slots` key.
    pub slots: &'static str,
}

macro_rules! region {
    ($table:literal) => {
        RegionKeys {
            table: $table,
            base: concat!($table, ".base"),
            size: concat!($table, ".size"),
        }
    };
}

macro_rules! ring {
    ($table:literal) => {
        RingKeys {
            table: $table,
            base: concat!($table, ".base"),
            slots: concat!($table, ".slots"),
        }
    };
}

/// `inherit`: the file to load first (top level only).
pub const INHERIT: &str = "inherit";
/// `board.name`.
pub const BOARD_NAME: &str = "board.name";
/// `board.kind`.
pub const BOARD_KIND: &str = "board.kind";
/// `dram.base`.
pub const DRAM_BASE: &str = "dram.base";
/// `dram.size`.
pub const DRAM_SIZE: &str = "dram.size";
/// `regions.firmware`.
pub const REGIONS_FIRMWARE: RegionKeys = region!("regions.firmware");
/// `regions.rings`.
pub const REGIONS_RINGS: RegionKeys = region!("regions.rings");
/// `regions.net_buffers`.
pub const REGIONS_NET_BUFFERS: RegionKeys = region!("regions.net_buffers");
/// `regions.page_table`.
pub const REGIONS_PAGE_TABLE: RegionKeys = region!("regions.page_table");
/// `regions.data`.
pub const REGIONS_DATA: RegionKeys = region!("regions.data");
/// `pages.sizes`.
pub const PAGES_SIZES: &str = "pages.sizes";
/// `pages.default_size`.
pub const PAGES_DEFAULT_SIZE: &str = "pages.default_size";
/// `page_table.slots_per_bucket`.
pub const PAGE_TABLE_SLOTS_PER_BUCKET: &str = "page_table.slots_per_bucket";
/// `page_table.slot_factor`.
pub const PAGE_TABLE_SLOT_FACTOR: &str = "page_table.slot_factor";
/// `tlb.entries`.
pub const TLB_ENTRIES: &str = "tlb.entries";
/// `free_pa_fifo.depth`.
pub const FREE_PA_FIFO_DEPTH: &str = "free_pa_fifo.depth";
/// `rings.slot_bytes`.
pub const RINGS_SLOT_BYTES: &str = "rings.slot_bytes";
/// `rings.rx`.
pub const RINGS_RX: RingKeys = ring!("rings.rx");
/// `rings.tx`.
pub const RINGS_TX: RingKeys = ring!("rings.tx");
/// `fastpath.clock_mhz`.
pub const FASTPATH_CLOCK_MHZ: &str = "fastpath.clock_mhz";
/// `fastpath.datapath_bits`.
pub const FASTPATH_DATAPATH_BITS: &str = "fastpath.datapath_bits";
/// `fastpath.regs_base` (optional, depends on the board kind).
pub const FASTPATH_REGS_BASE: &str = "fastpath.regs_base";
/// `fastpath.read_streams` (optional boolean; default per board kind).
pub const FASTPATH_READ_STREAMS: &str = "fastpath.read_streams";
/// `network.mac`.
pub const NETWORK_MAC: &str = "network.mac";
/// `network.ipv4`.
pub const NETWORK_IPV4: &str = "network.ipv4";
/// `network.udp_port`.
pub const NETWORK_UDP_PORT: &str = "network.udp_port";
/// `network.mtu_payload`.
pub const NETWORK_MTU_PAYLOAD: &str = "network.mtu_payload";
/// `network.ports`.
pub const NETWORK_PORTS: &str = "network.ports";
/// `network.port_gbps`.
pub const NETWORK_PORT_GBPS: &str = "network.port_gbps";
/// `network.port_kind`.
pub const NETWORK_PORT_KIND: &str = "network.port_kind";
/// `network.clients` (optional).
pub const NETWORK_CLIENTS: &str = "network.clients";
/// `network.max_response_bytes` (optional).
pub const NETWORK_MAX_RESPONSE_BYTES: &str = "network.max_response_bytes";
/// `network.front_end` (optional).
pub const NETWORK_FRONT_END: &str = "network.front_end";
/// `dedup.buffer_bytes`.
pub const DEDUP_BUFFER_BYTES: &str = "dedup.buffer_bytes";
/// `dedup.entry_bytes`.
pub const DEDUP_ENTRY_BYTES: &str = "dedup.entry_bytes";
/// `dedup.offload_answers` (optional).
pub const DEDUP_OFFLOAD_ANSWERS: &str = "dedup.offload_answers";
/// `timeouts.request_us`.
pub const TIMEOUTS_REQUEST_US: &str = "timeouts.request_us";
/// `timeouts.rto_min_us`.
pub const TIMEOUTS_RTO_MIN_US: &str = "timeouts.rto_min_us";
/// `timeouts.rto_max_us`.
pub const TIMEOUTS_RTO_MAX_US: &str = "timeouts.rto_max_us";
/// `timeouts.retry_budget`.
pub const TIMEOUTS_RETRY_BUDGET: &str = "timeouts.retry_budget";
/// `va.bits`.
pub const VA_BITS: &str = "va.bits";
/// `va.vregion_bytes`.
pub const VA_VREGION_BYTES: &str = "va.vregion_bytes";
/// `va.max_pids`.
pub const VA_MAX_PIDS: &str = "va.max_pids";
/// `sessions.capacity`.
pub const SESSIONS_CAPACITY: &str = "sessions.capacity";
/// `sessions.dedup_per_session`.
pub const SESSIONS_DEDUP_PER_SESSION: &str = "sessions.dedup_per_session";
/// `sessions.locks_per_session`.
pub const SESSIONS_LOCKS_PER_SESSION: &str = "sessions.locks_per_session";
/// `sessions.mem_quota_bytes`.
pub const SESSIONS_MEM_QUOTA_BYTES: &str = "sessions.mem_quota_bytes";
/// `pcie`: the table (present exactly on Alveo cards).
pub const PCIE: &str = "pcie";
/// `pcie.vendor_id`.
pub const PCIE_VENDOR_ID: &str = "pcie.vendor_id";
/// `pcie.device_id`.
pub const PCIE_DEVICE_ID: &str = "pcie.device_id";
/// `pcie.user_bar`.
pub const PCIE_USER_BAR: &str = "pcie.user_bar";
/// `pcie.user_offset`.
pub const PCIE_USER_OFFSET: &str = "pcie.user_offset";
/// `pcie.h2c_channels`.
pub const PCIE_H2C_CHANNELS: &str = "pcie.h2c_channels";
/// `pcie.c2h_channels`.
pub const PCIE_C2H_CHANNELS: &str = "pcie.c2h_channels";
/// `pcie.xdma_instance`.
pub const PCIE_XDMA_INSTANCE: &str = "pcie.xdma_instance";

/// Every key that holds a value (not a table, not `inherit`), in canonical order.
pub const LEAVES: [&str; 59] = [
    BOARD_NAME,
    BOARD_KIND,
    DRAM_BASE,
    DRAM_SIZE,
    REGIONS_FIRMWARE.base,
    REGIONS_FIRMWARE.size,
    REGIONS_RINGS.base,
    REGIONS_RINGS.size,
    REGIONS_NET_BUFFERS.base,
    REGIONS_NET_BUFFERS.size,
    REGIONS_PAGE_TABLE.base,
    REGIONS_PAGE_TABLE.size,
    REGIONS_DATA.base,
    REGIONS_DATA.size,
    PAGES_SIZES,
    PAGES_DEFAULT_SIZE,
    PAGE_TABLE_SLOTS_PER_BUCKET,
    PAGE_TABLE_SLOT_FACTOR,
    TLB_ENTRIES,
    FREE_PA_FIFO_DEPTH,
    RINGS_SLOT_BYTES,
    RINGS_RX.base,
    RINGS_RX.slots,
    RINGS_TX.base,
    RINGS_TX.slots,
    FASTPATH_CLOCK_MHZ,
    FASTPATH_DATAPATH_BITS,
    FASTPATH_REGS_BASE,
    FASTPATH_READ_STREAMS,
    NETWORK_MAC,
    NETWORK_IPV4,
    NETWORK_UDP_PORT,
    NETWORK_MTU_PAYLOAD,
    NETWORK_PORTS,
    NETWORK_PORT_GBPS,
    NETWORK_PORT_KIND,
    NETWORK_CLIENTS,
    NETWORK_MAX_RESPONSE_BYTES,
    NETWORK_FRONT_END,
    DEDUP_BUFFER_BYTES,
    DEDUP_ENTRY_BYTES,
    TIMEOUTS_REQUEST_US,
    TIMEOUTS_RTO_MIN_US,
    TIMEOUTS_RTO_MAX_US,
    TIMEOUTS_RETRY_BUDGET,
    VA_BITS,
    VA_VREGION_BYTES,
    VA_MAX_PIDS,
    SESSIONS_CAPACITY,
    SESSIONS_DEDUP_PER_SESSION,
    SESSIONS_LOCKS_PER_SESSION,
    SESSIONS_MEM_QUOTA_BYTES,
    PCIE_VENDOR_ID,
    PCIE_DEVICE_ID,
    PCIE_USER_BAR,
    PCIE_USER_OFFSET,
    PCIE_H2C_CHANNELS,
    PCIE_C2H_CHANNELS,
    PCIE_XDMA_INSTANCE,
];
