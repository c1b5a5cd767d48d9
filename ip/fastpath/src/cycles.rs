//! The cycle model: per-stage costs and the per-request trace.
//!
//! Costs are in fast-path clock cycles (250 MHz on the ZCU106). A beat is one
//! datapath word (64 B at 512 bit); streaming stages move one beat per cycle
//! (II = 1). The README's cycle table is the specification of these numbers.

/// Per-stage cycle costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleCosts {
    /// MAC-to-parser and match-action dispatch, once per packet.
    pub rx_fixed: u32,
    /// Cycles per received beat (header + payload streaming through the CRC unit).
    pub rx_per_beat: u32,
    /// One TLB (CAM) lookup, per page translated.
    pub tlb_lookup: u32,
    /// Read latency of board DRAM (request to first beat).
    pub dram_read_latency: u32,
    /// Latency of a posted DRAM write (request accepted).
    pub dram_write_latency: u32,
    /// Page fault: pop the free-PA FIFO, form the PTE, issue the writes.
    pub fault: u32,
    /// Permission check, once per page translated.
    pub perm_check: u32,
    /// Sync-unit arbitration of an atomic (read-modify-write slot).
    pub sync_unit: u32,
    /// Per chased node: compare the key and select the next pointer.
    pub chase_step: u32,
    /// Response header formation and CRC start, once per response packet.
    pub tx_fixed: u32,
    /// Cycles per transmitted beat.
    pub tx_per_beat: u32,
}

impl Default for CycleCosts {
    /// Defaults for a ZCU106 fast path: DDR4 through the MIG at 250 MHz
    /// (about 160 ns read latency), single-cycle CAM, three-cycle fault.
    fn default() -> Self {
        CycleCosts {
            rx_fixed: 4,
            rx_per_beat: 1,
            tlb_lookup: 1,
            dram_read_latency: 40,
            dram_write_latency: 4,
            fault: 3,
            perm_check: 1,
            sync_unit: 2,
            chase_step: 2,
            tx_fixed: 2,
            tx_per_beat: 1,
        }
    }
}

/// What one request cost: the basis of latency projection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trace {
    /// Raw opcode of the request (0 if the packet was too short to have one).
    pub opcode: u8,
    /// Status of the response (`None`: no response was sent yet or at all).
    pub status: Option<clio_wire::Status>,
    /// Pipeline cycles from first received beat to last transmitted beat.
    pub cycles: u64,
    /// DRAM accesses (bursts): bucket reads, data reads and writes, PTE
    /// write-backs, page zeroing, atomic read and write.
    pub dram_accesses: u32,
    /// Bytes moved to or from DRAM (data, buckets, PTEs, zeroing).
    pub dram_bytes: u64,
    /// Pages translated.
    pub pages: u32,
    /// Translations served by the TLB.
    pub tlb_hits: u32,
    /// Translations that read a bucket.
    pub tlb_misses: u32,
    /// First-touch faults taken.
    pub faults: u32,
    /// Bytes zeroed for first touch.
    pub zeroed_bytes: u64,
    /// Response packets sent.
    pub packets_out: u32,
    /// Answered from the dedup buffer, not executed.
    pub duplicate: bool,
    /// Answered later, from `poll_rings`: forwarded to the slow path, or a
    /// fence waiting for forwarded requests.
    pub forwarded: bool,
}

impl Trace {
    /// Whether any translation hit the TLB and none missed.
    pub fn tlb_hit(&self) -> bool {
        self.tlb_hits > 0 && self.tlb_misses == 0
    }

    /// Whether a first-touch fault was taken.
    pub fn faulted(&self) -> bool {
        self.faults > 0
    }

    /// Projected on-board latency in nanoseconds at `clock_mhz`.
    pub fn nanos(&self, clock_mhz: u32) -> f64 {
        self.cycles as f64 * 1000.0 / f64::from(clock_mhz.max(1))
    }
}

/// Beats needed to move `bytes` over a datapath of `beat` bytes.
#[inline]
pub fn beats(bytes: u64, beat: u32) -> u64 {
    bytes.div_ceil(u64::from(beat))
}
