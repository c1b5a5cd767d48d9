//! Canonical TOML form of a resolved config and its stable hash.
//!
//! The canonical form lists every key, in a fixed order, with integers in
//! decimal (addresses in hex) and no inheritance. Loading it gives back the
//! same config, and its FNV-1a hash identifies the config in boot manifests.
//! Both work in `no_std` (the writer is any [`fmt::Write`]).

use core::fmt::{self, Write};

use crate::model::{BoardConfig, Region};

/// Writes the canonical TOML form of `c` to `w`.
pub fn write_canonical(c: &BoardConfig, w: &mut dyn Write) -> fmt::Result {
    fn region(w: &mut dyn Write, key: &str, r: &Region) -> fmt::Result {
        writeln!(w, "{key} = {{ base = {:#x}, size = {} }}", r.base, r.size)
    }
    writeln!(w, "[board]")?;
    writeln!(w, "name = \"{}\"", c.board.name)?;
    writeln!(w, "kind = \"{}\"", c.board.kind.as_str())?;
    writeln!(w, "\n[dram]")?;
    writeln!(w, "base = {:#x}", c.dram.base)?;
    writeln!(w, "size = {}", c.dram.size)?;
    writeln!(w, "\n[regions]")?;
    for (key, r) in c.regions.named() {
        region(w, key.trim_start_matches("regions."), &r)?;
    }
    writeln!(w, "\n[pages]")?;
    write!(w, "sizes = [")?;
    for (i, s) in c.pages.sizes.iter().enumerate() {
        if i > 0 {
            write!(w, ", ")?;
        }
        write!(w, "{s}")?;
    }
    writeln!(w, "]")?;
    writeln!(w, "default_size = {}", c.pages.default_size)?;
    writeln!(w, "\n[page_table]")?;
    writeln!(w, "slots_per_bucket = {}", c.page_table.slots_per_bucket)?;
    writeln!(w, "slot_factor = {}", c.page_table.slot_factor)?;
    writeln!(w, "\n[tlb]")?;
    writeln!(w, "entries = {}", c.tlb.entries)?;
    writeln!(w, "\n[free_pa_fifo]")?;
    writeln!(w, "depth = {}", c.free_pa_fifo.depth)?;
    writeln!(w, "\n[rings]")?;
    writeln!(w, "slot_bytes = {}", c.rings.slot_bytes)?;
    writeln!(
        w,
        "rx = {{ base = {:#x}, slots = {} }}",
        c.rings.rx.base, c.rings.rx.slots
    )?;
    writeln!(
        w,
        "tx = {{ base = {:#x}, slots = {} }}",
        c.rings.tx.base, c.rings.tx.slots
    )?;
    writeln!(w, "\n[fastpath]")?;
    writeln!(w, "clock_mhz = {}", c.fastpath.clock_mhz)?;
    writeln!(w, "datapath_bits = {}", c.fastpath.datapath_bits)?;
    if let Some(base) = c.fastpath.regs_base {
        writeln!(w, "regs_base = {base:#x}")?;
    }
    // Written only when it is not the kind's default, so the configs that
    // keep the default hash as they did before the key existed.
    if c.fastpath.read_streams != crate::model::FastPath::default_read_streams(c.board.kind) {
        writeln!(w, "read_streams = {}", c.fastpath.read_streams)?;
    }
    let n = &c.network;
    writeln!(w, "\n[network]")?;
    let m = n.mac;
    writeln!(
        w,
        "mac = \"{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}\"",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )?;
    let ip = n.ipv4;
    writeln!(w, "ipv4 = \"{}.{}.{}.{}\"", ip[0], ip[1], ip[2], ip[3])?;
    writeln!(w, "udp_port = {}", n.udp_port)?;
    writeln!(w, "mtu_payload = {}", n.mtu_payload)?;
    writeln!(w, "ports = {}", n.ports)?;
    writeln!(w, "port_gbps = {}", n.port_gbps)?;
    writeln!(w, "port_kind = \"{}\"", n.port_kind.as_str())?;
    // Written only when set to something else, so the configs that keep the
    // default hash as they did before the key existed.
    if n.clients != crate::model::DEFAULT_CLIENTS {
        writeln!(w, "clients = {}", n.clients)?;
    }
    if n.max_response_bytes != crate::model::DEFAULT_MAX_RESPONSE_BYTES {
        writeln!(w, "max_response_bytes = {}", n.max_response_bytes)?;
    }
    if n.front_end != crate::model::FrontEnd::Udp {
        writeln!(w, "front_end = \"{}\"", n.front_end.as_str())?;
    }
    writeln!(w, "\n[dedup]")?;
    writeln!(w, "buffer_bytes = {}", c.dedup.buffer_bytes)?;
    writeln!(w, "entry_bytes = {}", c.dedup.entry_bytes)?;
    // Written only when set to something else (as `network.clients`).
    if c.dedup.offload_answers != crate::model::DEFAULT_OFFLOAD_ANSWERS {
        writeln!(w, "offload_answers = {}", c.dedup.offload_answers)?;
    }
    let t = &c.timeouts;
    writeln!(w, "\n[timeouts]")?;
    writeln!(w, "request_us = {}", t.request_us)?;
    writeln!(w, "rto_min_us = {}", t.rto_min_us)?;
    writeln!(w, "rto_max_us = {}", t.rto_max_us)?;
    writeln!(w, "retry_budget = {}", t.retry_budget)?;
    writeln!(w, "\n[va]")?;
    writeln!(w, "bits = {}", c.va.bits)?;
    writeln!(w, "vregion_bytes = {}", c.va.vregion_bytes)?;
    writeln!(w, "max_pids = {}", c.va.max_pids)?;
    let se = &c.sessions;
    writeln!(w, "\n[sessions]")?;
    writeln!(w, "capacity = {}", se.capacity)?;
    writeln!(w, "dedup_per_session = {}", se.dedup_per_session)?;
    writeln!(w, "locks_per_session = {}", se.locks_per_session)?;
    writeln!(w, "mem_quota_bytes = {}", se.mem_quota_bytes)?;
    if let Some(p) = &c.pcie {
        writeln!(w, "\n[pcie]")?;
        writeln!(w, "vendor_id = {:#06x}", p.vendor_id)?;
        writeln!(w, "device_id = {:#06x}", p.device_id)?;
        writeln!(w, "user_bar = {}", p.user_bar)?;
        writeln!(w, "user_offset = {:#x}", p.user_offset)?;
        writeln!(w, "h2c_channels = {}", p.h2c_channels)?;
        writeln!(w, "c2h_channels = {}", p.c2h_channels)?;
        writeln!(w, "xdma_instance = {}", p.xdma_instance)?;
    }
    Ok(())
}

/// 64-bit FNV-1a over whatever is written to it.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(pub u64);

impl Fnv1a64 {
    /// FNV-1a 64-bit offset basis.
    pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    /// FNV-1a 64-bit prime.
    pub const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hasher in its initial state.
    pub const fn new() -> Self {
        Self(Self::OFFSET)
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

impl Default for Fnv1a64 {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for Fnv1a64 {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.update(s.as_bytes());
        Ok(())
    }
}

impl BoardConfig {
    /// Stable 64-bit hash of the resolved config: FNV-1a over its canonical TOML form.
    ///
    /// Two files that resolve to the same values (whatever their inheritance,
    /// spelling of sizes or key order) have the same hash.
    pub fn config_hash(&self) -> u64 {
        let mut h = Fnv1a64::new();
        // Writing into the hasher cannot fail.
        let _ = write_canonical(self, &mut h);
        h.0
    }
}
