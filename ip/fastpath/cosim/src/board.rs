//! The board the co-simulation runs: a ZCU106 shrunk to 4 MiB of DRAM so the
//! whole memory image is compared after every run, with two page sizes, a
//! small TLB, FIFOs and rings so that eviction, refill, empty FIFOs and full
//! rings all happen within a short trace.

use clio_config::{BoardConfig, PageSizes, Region};
use clio_fastpath::{ClientId, Dram, FastPath, Layout, ModelOptions, ZeroPolicy};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::InfoResp;
use clio_wire::{Header, Opcode};

/// Page shift of VA class 0 (the default size).
pub const SMALL_SHIFT: u8 = 12;
/// Page shift of VA class 1.
pub const LARGE_SHIFT: u8 = 14;
/// Physical range `[start, end)` of the 4 KiB pages the slow path hands out.
pub const SMALL_POOL: (u64, u64) = (0x10_0000, 0x30_0000);
/// Physical range `[start, end)` of the 16 KiB pages.
pub const LARGE_POOL: (u64, u64) = (0x30_0000, 0x40_0000);

/// The co-simulation board config.
pub fn board() -> BoardConfig {
    let mut c = clio_config::boards::by_name("zcu106").expect("the shipped zcu106 config");
    c.dram.base = 0;
    c.dram.size = 4 << 20;
    c.regions.firmware = Region {
        base: 0,
        size: 0x1_0000,
    };
    c.regions.rings = Region {
        base: 0x1_0000,
        size: 0x1_0000,
    };
    c.regions.net_buffers = Region {
        base: 0x2_0000,
        size: 0x1_0000,
    };
    c.regions.page_table = Region {
        base: 0x4_0000,
        size: 0x4_0000,
    };
    c.regions.data = Region {
        base: SMALL_POOL.0,
        size: LARGE_POOL.1 - SMALL_POOL.0,
    };
    c.pages.sizes = PageSizes::EMPTY
        .with(1 << SMALL_SHIFT)
        .with(1 << LARGE_SHIFT);
    c.pages.default_size = 1 << SMALL_SHIFT;
    c.tlb.entries = 16;
    c.free_pa_fifo.depth = 8;
    c.rings.rx.base = 0x1_0000;
    c.rings.rx.slots = 16;
    c.rings.tx.base = 0x1_8000;
    c.rings.tx.slots = 16;
    c.network.mtu_payload = 512;
    // A response bound of four packets, so the random reads (up to 5000
    // bytes) land on both sides of it: TOO_LARGE and multi-packet answers.
    c.network.max_response_bytes = 2 * 1024;
    c.dedup.buffer_bytes = 32 * 32;
    c.dedup.entry_bytes = 32;
    c.va.bits = 32;
    c.va.max_pids = 6;
    // A small session table and quotas, so ids are reused, quotas bind and
    // the 32-record buffer fills within a short trace.
    c.sessions.capacity = 12;
    c.sessions.dedup_per_session = 10;
    c.sessions.locks_per_session = 2;
    c
}

/// Model options: pages come zeroed from the slow path (the RTL does not zero on fault).
pub fn options() -> ModelOptions {
    ModelOptions {
        zero_policy: ZeroPolicy::BySlowPath,
        ..ModelOptions::default()
    }
}

/// Verilator `-G` overrides that give the RTL top the same geometry as `layout`.
pub fn verilator_params(layout: &Layout) -> Vec<String> {
    let shifts: Vec<u8> = layout.fifo_shift[..layout.page_sizes].to_vec();
    let mut packed = 0u64;
    for (i, s) in shifts.iter().enumerate() {
        packed |= u64::from(*s) << (8 * i);
    }
    let pkt_bytes = clio_wire::clio::HEADER_LEN + layout.mtu.max(clio_wire::payload::InfoResp::LEN);
    vec![
        format!("-GTLB_ENTRIES={}", layout.tlb_entries),
        format!("-GBUCKET_BITS={}", layout.table.bucket_bits),
        format!("-GSLOTS={}", layout.table.slots_per_bucket),
        format!("-GNUM_SIZES={}", shifts.len()),
        format!("-GFIFO_SHIFTS={}'h{:x}", 8 * shifts.len(), packed),
        format!("-GFIFO_DEPTH={}", layout.fifo_depth),
        format!("-GDEDUP_ENTRIES={}", layout.dedup_entries),
        format!("-GPKT_BEATS={}", pkt_bytes.div_ceil(64)),
        format!("-GFWD_SLOTS={}", options().pending_slots),
        format!("-GFENCE_SLOTS={}", options().fence_slots),
        format!("-GSESSIONS={}", layout.sessions),
    ]
}

/// The INFO payload `fp` answers with. The RTL is given it as `cfg_info`
/// (as the firmware writes it: epoch 0), so the model and the RTL report the
/// same identity; the epoch is the RTL's own.
pub fn info_payload<D: Dram>(fp: &mut FastPath<D>) -> Result<[u8; InfoResp::LEN], String> {
    let pkt = Header::request(Opcode::Info, 1, 1, 0, 0)
        .encode(&[0; InfoResp::LEN])
        .map_err(|e| format!("INFO request: {e}"))?;
    let mut resp = Vec::new();
    fp.receive(ClientId(0), &pkt, &mut |_, r: &[u8]| resp = r.to_vec());
    let body = resp
        .get(HEADER_LEN..HEADER_LEN + InfoResp::LEN)
        .ok_or("the fast-path model did not answer INFO with a full payload")?;
    let mut info = [0u8; InfoResp::LEN];
    info.copy_from_slice(body);
    Ok(info)
}
