//! The fast-path register block of the ZCU106 memory board: the AXI4-Lite
//! registers the ARM firmware reaches through `M_AXI_HPM0_FPD` to configure
//! the fast path (its `cfg_*` inputs), release it from reset, ring the TX-ring
//! doorbell (`poll`) and read its status.
//!
//! Registers are 32 bits wide, little-endian, at the byte offsets below from
//! the block's base address. A field wider than 32 bits takes consecutive
//! words, least-significant word first (`TABLE_BASE` low half at 0x20, high
//! half at 0x24). An access to an offset no register holds, or a write to a
//! read-only register, is answered with SLVERR (AXI `resp` = 2) and changes
//! nothing, so a firmware bug faults at the access instead of silently
//! reading zero.
//!
//! ```text
//! +0x00 ID (RO, "CLFP")  +0x04 VERSION (RO)   +0x08 CONTROL (RW)    +0x0c STATUS (RO)
//! +0x10 DOORBELL (WO)    +0x14 POLL_COUNT (RO)
//! +0x20 TABLE_BASE (64)  +0x28 RX_BASE (64)   +0x30 TX_BASE (64)    +0x38 RX_SLOTS
//! +0x3c TX_SLOTS         +0x40 DATA_START (64) +0x48 DATA_END (64)  +0x50 VA_BITS
//! +0x54 CLASS_SHIFT      +0x58 MAX_PID        +0x5c MTU
//! +0x60 MAC (48)         +0x68 IPV4           +0x6c UDP_PORT
//! +0x70 RX_DROPS (RO)    +0x74 TX_DROPS (RO)
//! +0x80 .. +0xbf INFO (512 bits, 16 words: word i = bits 32i..32i+31)
//! ```
//!
//! `MAC`, `IPV4` and `UDP_PORT` are the board's own addresses, used by the
//! Ethernet/IPv4/UDP layer in front of the fast path (`clio_udp_shim`): it
//! accepts UDP datagrams to `IPV4:UDP_PORT` at `MAC`, answers ARP requests
//! for `IPV4`, and sends responses from them. Each holds its address as one
//! big-endian number (MAC `02:c1:10:00:00:01` is `0x02c1_1000_0001`: low word
//! `0x1000_0001`, high word `0x02c1`; IPv4 `10.0.0.2` is `0x0a00_0002`).
//! They power up as 0 (nothing is accepted) and the firmware writes them from
//! the board config's `network.mac`, `network.ipv4`, `network.udp_port`.
//!
//! Boot order: with `CONTROL.RESET` set (its reset value) write every
//! configuration register, then clear `CONTROL.RESET`; configuration
//! registers must not change while the fast path runs. A doorbell written
//! while `CONTROL.RESET` is set is ignored. `CONTROL.READ_STREAMS` (the
//! fast path's `cfg_streams_on`: long READ answers interleaved packet by
//! packet between clients) is set or cleared by the release write itself,
//! so it never changes while the fast path runs.
//!
//! [`FastPathConfig`] holds the values typed; [`FastPathConfig::check`]
//! refuses, naming the field, what the block cannot take (an address at or
//! above 4 GiB, a misaligned base, an MTU the INFO payload does not fit in,
//! a zero or multicast MAC/IPv4, ...); [`boot_writes`] turns it into the
//! ordered (offset, value) writes of the boot sequence: `CONTROL` = `RESET`,
//! every configuration word in offset order (low word first), `CONTROL` =
//! `READ_STREAMS` or 0 (release).

/// Value of the `ID` register: "CLFP" little-endian.
pub const ID: u32 = 0x5046_4C43;
/// Register-map version (4: `CONTROL.READ_STREAMS`).
pub const VERSION: u32 = 4;
/// Bytes of the register block (its address window).
pub const BLOCK_LEN: u32 = 0x100;

/// Who may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read-only: writes answer SLVERR.
    ReadOnly,
    /// Read and write.
    ReadWrite,
    /// Write-only (a strobe): reads return 0.
    WriteOnly,
}

/// One register (or a field spanning consecutive 32-bit words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// Name, upper snake case (the SystemVerilog constant is `FPREG_<NAME>`).
    pub name: &'static str,
    /// Byte offset of the first (least-significant) word.
    pub offset: u32,
    /// Significant bits; bits above read as 0 and are ignored on write.
    pub bits: u32,
    /// Access rights.
    pub access: Access,
}

impl Register {
    /// Number of 32-bit words the register spans.
    pub const fn words(&self) -> u32 {
        self.bits.div_ceil(32)
    }
}

/// Byte offsets of the registers.
pub mod reg {
    /// Identity ([`super::ID`]).
    pub const ID: u32 = 0x00;
    /// Register-map version ([`super::VERSION`]).
    pub const VERSION: u32 = 0x04;
    /// Control bits ([`super::control`]).
    pub const CONTROL: u32 = 0x08;
    /// Status bits ([`super::status`]).
    pub const STATUS: u32 = 0x0c;
    /// Writing a value with bit 0 set drains the TX ring once (`poll`).
    pub const DOORBELL: u32 = 0x10;
    /// Count of finished TX-ring drains (`poll_done` pulses), wrapping.
    pub const POLL_COUNT: u32 = 0x14;
    /// Board-DRAM address of the hash page table (`cfg_table_base`), 64 bits.
    pub const TABLE_BASE: u32 = 0x20;
    /// Address of the RX ring (FPGA -> ARM) header (`cfg_rx_base`), 64 bits.
    pub const RX_BASE: u32 = 0x28;
    /// Address of the TX ring (ARM -> FPGA) header (`cfg_tx_base`), 64 bits.
    pub const TX_BASE: u32 = 0x30;
    /// Slots of the RX ring (`cfg_rx_slots`).
    pub const RX_SLOTS: u32 = 0x38;
    /// Slots of the TX ring (`cfg_tx_slots`).
    pub const TX_SLOTS: u32 = 0x3c;
    /// First byte of the data region (`cfg_data_start`), 64 bits.
    pub const DATA_START: u32 = 0x40;
    /// End (exclusive) of the data region (`cfg_data_end`), 64 bits.
    pub const DATA_END: u32 = 0x48;
    /// Virtual-address bits (`cfg_va_bits`, 6 bits).
    pub const VA_BITS: u32 = 0x50;
    /// Page shift of each VA class, one byte per class, class 0 in the low
    /// byte; 0 = class unused (`cfg_class_shift`).
    pub const CLASS_SHIFT: u32 = 0x54;
    /// Highest valid PID (`cfg_max_pid`).
    pub const MAX_PID: u32 = 0x58;
    /// Largest payload per packet (`cfg_mtu`, 16 bits).
    pub const MTU: u32 = 0x5c;
    /// The board's Ethernet MAC address (48 bits, big-endian number: the
    /// first byte on the wire is bits 47..40).
    pub const MAC: u32 = 0x60;
    /// The board's IPv4 address (big-endian number: `10.0.0.2` = `0x0a000002`).
    pub const IPV4: u32 = 0x68;
    /// The UDP port the board serves Clio packets on (16 bits).
    pub const UDP_PORT: u32 = 0x6c;
    /// Received frames dropped by the Ethernet/IPv4/UDP layer (neither passed
    /// to the fast path nor answered as an ARP request), wrapping; not
    /// cleared by `CONTROL.RESET` (the layer runs while the fast path is held).
    pub const RX_DROPS: u32 = 0x70;
    /// Responses dropped because no client address was learned for their
    /// PID (or shorter than a Clio header), wrapping; not cleared by
    /// `CONTROL.RESET`.
    pub const TX_DROPS: u32 = 0x74;
    /// The INFO response payload (`cfg_info`, 512 bits in 16 words): byte `i`
    /// of the payload as [`crate::payload::InfoResp`] emits it is bits
    /// `8i..8i+7`, so word `k` holds payload bytes `4k..4k+3` little-endian.
    pub const INFO: u32 = 0x80;
}

/// Bits of the `CONTROL` register.
pub mod control {
    /// Hold the fast path in reset (set at power-on).
    pub const RESET: u32 = 0x1;
    /// Interleave long READ answers of different clients packet by packet
    /// (the fast path's `cfg_streams_on`; clear: every READ answered whole).
    /// Written with the release (`RESET` clear) and left alone after.
    pub const READ_STREAMS: u32 = 0x2;
}

/// Bits of the `STATUS` register.
pub mod status {
    /// The fast path is idle (no packet, ring drain or memory access in flight).
    pub const IDLE: u32 = 0x1;
    /// A doorbell was rung and its TX-ring drain has not finished.
    pub const POLL_BUSY: u32 = 0x2;
    /// SFP port 0 link up (MAC block lock).
    pub const LINK0_UP: u32 = 0x4;
    /// SFP port 1 link up (MAC block lock).
    pub const LINK1_UP: u32 = 0x8;
    /// A received frame was dropped because its port's receive FIFO was
    /// full (sticky until the fast path is reset through `CONTROL.RESET`).
    pub const RX_OVERFLOW: u32 = 0x10;
    /// `CONTROL.RESET` is set.
    pub const IN_RESET: u32 = 0x20;
}

/// Bit 0 of a `DOORBELL` write rings it.
pub const DOORBELL_RING: u32 = 0x1;

/// Every register, in offset order.
pub const REGISTERS: &[Register] = &[
    Register {
        name: "ID",
        offset: reg::ID,
        bits: 32,
        access: Access::ReadOnly,
    },
    Register {
        name: "VERSION",
        offset: reg::VERSION,
        bits: 32,
        access: Access::ReadOnly,
    },
    Register {
        name: "CONTROL",
        offset: reg::CONTROL,
        bits: 2,
        access: Access::ReadWrite,
    },
    Register {
        name: "STATUS",
        offset: reg::STATUS,
        bits: 6,
        access: Access::ReadOnly,
    },
    Register {
        name: "DOORBELL",
        offset: reg::DOORBELL,
        bits: 1,
        access: Access::WriteOnly,
    },
    Register {
        name: "POLL_COUNT",
        offset: reg::POLL_COUNT,
        bits: 32,
        access: Access::ReadOnly,
    },
    Register {
        name: "TABLE_BASE",
        offset: reg::TABLE_BASE,
        bits: 64,
        access: Access::ReadWrite,
    },
    Register {
        name: "RX_BASE",
        offset: reg::RX_BASE,
        bits: 64,
        access: Access::ReadWrite,
    },
    Register {
        name: "TX_BASE",
        offset: reg::TX_BASE,
        bits: 64,
        access: Access::ReadWrite,
    },
    Register {
        name: "RX_SLOTS",
        offset: reg::RX_SLOTS,
        bits: 32,
        access: Access::ReadWrite,
    },
    Register {
        name: "TX_SLOTS",
        offset: reg::TX_SLOTS,
        bits: 32,
        access: Access::ReadWrite,
    },
    Register {
        name: "DATA_START",
        offset: reg::DATA_START,
        bits: 64,
        access: Access::ReadWrite,
    },
    Register {
        name: "DATA_END",
        offset: reg::DATA_END,
        bits: 64,
        access: Access::ReadWrite,
    },
    Register {
        name: "VA_BITS",
        offset: reg::VA_BITS,
        bits: 6,
        access: Access::ReadWrite,
    },
    Register {
        name: "CLASS_SHIFT",
        offset: reg::CLASS_SHIFT,
        bits: 32,
        access: Access::ReadWrite,
    },
    Register {
        name: "MAX_PID",
        offset: reg::MAX_PID,
        bits: 32,
        access: Access::ReadWrite,
    },
    Register {
        name: "MTU",
        offset: reg::MTU,
        bits: 16,
        access: Access::ReadWrite,
    },
    Register {
        name: "MAC",
        offset: reg::MAC,
        bits: 48,
        access: Access::ReadWrite,
    },
    Register {
        name: "IPV4",
        offset: reg::IPV4,
        bits: 32,
        access: Access::ReadWrite,
    },
    Register {
        name: "UDP_PORT",
        offset: reg::UDP_PORT,
        bits: 16,
        access: Access::ReadWrite,
    },
    Register {
        name: "RX_DROPS",
        offset: reg::RX_DROPS,
        bits: 32,
        access: Access::ReadOnly,
    },
    Register {
        name: "TX_DROPS",
        offset: reg::TX_DROPS,
        bits: 32,
        access: Access::ReadOnly,
    },
    Register {
        name: "INFO",
        offset: reg::INFO,
        bits: 8 * crate::payload::InfoResp::LEN as u32,
        access: Access::ReadWrite,
    },
];

/// The register holding byte offset `offset` (any of its words), if any.
pub fn lookup(offset: u32) -> Option<&'static Register> {
    if offset % 4 != 0 {
        return None;
    }
    REGISTERS
        .iter()
        .find(|r| offset >= r.offset && offset < r.offset + 4 * r.words())
}

/// One 32-bit register write of a boot sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RegWrite {
    /// Byte offset in the block.
    pub offset: u32,
    /// Value written.
    pub value: u32,
}

/// Addresses the fast path's AXI master can reach: 32 bits (the
/// `clio_fastpath_top` `ADDR_WIDTH` on the ZCU106, where the 2 GB PS DDR sits
/// at 0). Every address field and the end of every range must stay below.
pub const ADDR_LIMIT: u64 = 1 << 32;

/// Alignment of the page-table and ring addresses: one 512-bit datapath beat
/// (a ring slot is one beat, a bucket read starts on one).
pub const BEAT_ALIGN: u64 = 64;

/// Slots a ring may have: a power of two in this range (indices wrap by mask).
pub const RING_SLOTS_MIN: u32 = 2;
/// Largest ring, in slots (the board config's limit).
pub const RING_SLOTS_MAX: u32 = 65536;

/// The fast path's configuration as the firmware writes it into the block:
/// every `cfg_*` input plus the network identity, typed. Build it from the
/// board config and the slow path's layout, [`FastPathConfig::check`] it,
/// and turn it into register writes with [`boot_writes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastPathConfig {
    /// Board-DRAM address of the hash page table (`TABLE_BASE`).
    pub table_base: u64,
    /// Address of the RX ring header (`RX_BASE`).
    pub rx_base: u64,
    /// RX ring slots (`RX_SLOTS`).
    pub rx_slots: u32,
    /// Address of the TX ring header (`TX_BASE`).
    pub tx_base: u64,
    /// TX ring slots (`TX_SLOTS`).
    pub tx_slots: u32,
    /// First byte of the data region (`DATA_START`).
    pub data_start: u64,
    /// End (exclusive) of the data region (`DATA_END`).
    pub data_end: u64,
    /// The VA-class rule: gives `VA_BITS` and `CLASS_SHIFT` (already
    /// validated by [`crate::PageClasses::new`]).
    pub classes: crate::PageClasses,
    /// Highest valid PID (`MAX_PID`; PIDs are `1..=max_pid`).
    pub max_pid: u32,
    /// Largest payload per packet (`MTU`).
    pub mtu: u32,
    /// The board's MAC address, first byte on the wire first (`MAC`).
    pub mac: [u8; 6],
    /// The board's IPv4 address, first octet first (`IPV4`).
    pub ipv4: [u8; 4],
    /// The UDP port the board serves (`UDP_PORT`).
    pub udp_port: u16,
    /// The INFO response payload (`INFO`).
    pub info: crate::payload::InfoResp,
    /// Interleave long READ answers packet by packet
    /// (`CONTROL.READ_STREAMS`, written with the release).
    pub read_streams: bool,
}

/// Why a value of a [`FastPathConfig`] cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An address (or the end of a range) at or above [`ADDR_LIMIT`].
    Below4GiB,
    /// Not a multiple of this many bytes.
    Aligned(u64),
    /// Outside `min..=max`.
    Range {
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// Not a power of two in `min..=max`.
    PowerOfTwo {
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// Must be above the field named.
    Above(&'static str),
    /// Must equal the value of the field named (the two would disagree).
    Equal(&'static str),
    /// Must not be zero (the block would accept nothing).
    NonZero,
    /// Must be a unicast address (a multicast or broadcast address cannot
    /// be the board's own).
    Unicast,
}

impl core::fmt::Display for Rule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Rule::Below4GiB => {
                f.write_str("must end below 4 GiB (the fast path has 32-bit addresses)")
            }
            Rule::Aligned(a) => write!(f, "must be a multiple of {a}"),
            Rule::Range { min, max } => write!(f, "must be in {min}..={max}"),
            Rule::PowerOfTwo { min, max } => write!(f, "must be a power of two in {min}..={max}"),
            Rule::Above(other) => write!(f, "must be above {other}"),
            Rule::Equal(other) => write!(f, "must equal {other}"),
            Rule::NonZero => f.write_str("must not be zero"),
            Rule::Unicast => f.write_str("must be a unicast address"),
        }
    }
}

/// A [`FastPathConfig`] value that cannot be written, naming its field.
///
/// Displays as `fastpath config: mtu = 40: must be in 64..=8916`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The field of [`FastPathConfig`] (dotted for a part of `info`).
    pub field: &'static str,
    /// Its value (addresses as numbers; MAC and IPv4 as their register value).
    pub value: u64,
    /// The rule it breaks.
    pub rule: Rule,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let name = self.field;
        let address = name.ends_with("_base")
            || name.ends_with("_start")
            || name.ends_with("_end")
            || name == "mac"
            || name == "ipv4";
        if address {
            write!(
                f,
                "fastpath config: {name} = {:#x}: {}",
                self.value, self.rule
            )
        } else {
            write!(f, "fastpath config: {name} = {}: {}", self.value, self.rule)
        }
    }
}

fn cfg_err(field: &'static str, value: u64, rule: Rule) -> Result<(), ConfigError> {
    Err(ConfigError { field, value, rule })
}

/// The MAC as the `MAC` register's 48-bit big-endian number.
pub const fn mac_value(mac: [u8; 6]) -> u64 {
    let mut v = 0u64;
    let mut i = 0;
    while i < 6 {
        v = (v << 8) | mac[i] as u64;
        i += 1;
    }
    v
}

impl FastPathConfig {
    /// Checks every field; the first broken rule is returned, naming the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        let addr = |field: &'static str, a: u64, align: u64| {
            if a >= ADDR_LIMIT {
                return cfg_err(field, a, Rule::Below4GiB);
            }
            if a % align != 0 {
                return cfg_err(field, a, Rule::Aligned(align));
            }
            Ok(())
        };
        addr("table_base", self.table_base, BEAT_ALIGN)?;
        for (base_f, slots_f, base, slots) in [
            ("rx_base", "rx_slots", self.rx_base, self.rx_slots),
            ("tx_base", "tx_slots", self.tx_base, self.tx_slots),
        ] {
            addr(base_f, base, BEAT_ALIGN)?;
            if !slots.is_power_of_two() || !(RING_SLOTS_MIN..=RING_SLOTS_MAX).contains(&slots) {
                return cfg_err(
                    slots_f,
                    slots.into(),
                    Rule::PowerOfTwo {
                        min: RING_SLOTS_MIN.into(),
                        max: RING_SLOTS_MAX.into(),
                    },
                );
            }
            if base + crate::ring::ring_bytes(slots) as u64 > ADDR_LIMIT {
                return cfg_err(slots_f, slots.into(), Rule::Below4GiB);
            }
        }
        let page = 1u64 << crate::pte::MIN_PAGE_SHIFT;
        addr("data_start", self.data_start, page)?;
        if self.data_end > ADDR_LIMIT {
            return cfg_err("data_end", self.data_end, Rule::Below4GiB);
        }
        if self.data_end % page != 0 {
            return cfg_err("data_end", self.data_end, Rule::Aligned(page));
        }
        if self.data_end <= self.data_start {
            return cfg_err("data_end", self.data_end, Rule::Above("data_start"));
        }
        if self.max_pid == 0 {
            return cfg_err("max_pid", 0, Rule::NonZero);
        }
        let (mtu_min, mtu_max) = (
            crate::payload::InfoResp::LEN as u64,
            crate::clio::MAX_PAYLOAD as u64,
        );
        if !(mtu_min..=mtu_max).contains(&u64::from(self.mtu)) {
            return cfg_err(
                "mtu",
                self.mtu.into(),
                Rule::Range {
                    min: mtu_min,
                    max: mtu_max,
                },
            );
        }
        let mac = mac_value(self.mac);
        if mac == 0 {
            return cfg_err("mac", mac, Rule::NonZero);
        }
        // Bit 0 of the first byte is the group (multicast) bit.
        if self.mac[0] & 1 != 0 {
            return cfg_err("mac", mac, Rule::Unicast);
        }
        let ip = u32::from_be_bytes(self.ipv4);
        if ip == 0 {
            return cfg_err("ipv4", ip.into(), Rule::NonZero);
        }
        if ip == u32::MAX || (224..=239).contains(&self.ipv4[0]) {
            return cfg_err("ipv4", ip.into(), Rule::Unicast);
        }
        if self.udp_port == 0 {
            return cfg_err("udp_port", 0, Rule::NonZero);
        }
        // INFO describes the board the registers configure: the two agree.
        if u32::from(self.info.mtu) != self.mtu {
            return cfg_err("info.mtu", self.info.mtu.into(), Rule::Equal("mtu"));
        }
        if self.info.page_shift != self.classes.default_shift() {
            return cfg_err(
                "info.page_shift",
                self.info.page_shift.into(),
                Rule::Equal("the default page shift (class 0)"),
            );
        }
        Ok(())
    }

    /// The `CONTROL` value that releases the fast path: `RESET` clear,
    /// `READ_STREAMS` if [`FastPathConfig::read_streams`].
    pub fn control(&self) -> u32 {
        if self.read_streams {
            control::READ_STREAMS
        } else {
            0
        }
    }

    /// The `CLASS_SHIFT` register: class `i`'s page shift in byte `i`.
    pub fn class_shift_word(&self) -> u32 {
        let mut w = 0u32;
        for class in 0..crate::pte::MAX_PAGE_CLASSES {
            w |= u32::from(self.classes.shift(class).unwrap_or(0)) << (8 * class);
        }
        w
    }
}

/// Words of the INFO register.
pub const INFO_WORDS: usize = crate::payload::InfoResp::LEN / 4;

/// Words the configuration registers span (every read-write register but
/// `CONTROL`).
pub const CONFIG_WORDS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < REGISTERS.len() {
        let r = &REGISTERS[i];
        if matches!(r.access, Access::ReadWrite) && r.offset != reg::CONTROL {
            n += r.words() as usize;
        }
        i += 1;
    }
    n
};

/// Writes of the boot sequence: `CONTROL.RESET` set, the configuration
/// words, `CONTROL.RESET` cleared (with `READ_STREAMS` as configured).
pub const BOOT_WRITES: usize = CONFIG_WORDS + 2;

/// The boot sequence for `cfg`, in the order the writes must be issued:
/// `CONTROL` = `RESET` first (the fast path is held while its inputs
/// change), then every configuration register in offset order, a field
/// wider than 32 bits low word first, and `CONTROL` = [`FastPathConfig::control`]
/// (release: `RESET` clear, `READ_STREAMS` as configured) last.
/// `cfg` is checked first; nothing is returned for a bad one.
pub fn boot_writes(cfg: &FastPathConfig) -> Result<[RegWrite; BOOT_WRITES], ConfigError> {
    cfg.check()?;
    let mut info = [0u8; crate::payload::InfoResp::LEN];
    // The buffer is exactly InfoResp::LEN bytes, so emit cannot fail.
    let _ = cfg.info.emit(&mut info);
    let mut out = [RegWrite::default(); BOOT_WRITES];
    let mut n = 0;
    let mut put = |offset: u32, value: u32| {
        out[n] = RegWrite { offset, value };
        n += 1;
    };
    put(reg::CONTROL, control::RESET);
    let wide = |put: &mut dyn FnMut(u32, u32), offset: u32, v: u64| {
        put(offset, v as u32);
        put(offset + 4, (v >> 32) as u32);
    };
    wide(&mut put, reg::TABLE_BASE, cfg.table_base);
    wide(&mut put, reg::RX_BASE, cfg.rx_base);
    wide(&mut put, reg::TX_BASE, cfg.tx_base);
    put(reg::RX_SLOTS, cfg.rx_slots);
    put(reg::TX_SLOTS, cfg.tx_slots);
    wide(&mut put, reg::DATA_START, cfg.data_start);
    wide(&mut put, reg::DATA_END, cfg.data_end);
    put(reg::VA_BITS, cfg.classes.va_bits());
    put(reg::CLASS_SHIFT, cfg.class_shift_word());
    put(reg::MAX_PID, cfg.max_pid);
    put(reg::MTU, cfg.mtu);
    wide(&mut put, reg::MAC, mac_value(cfg.mac));
    put(reg::IPV4, u32::from_be_bytes(cfg.ipv4));
    put(reg::UDP_PORT, cfg.udp_port.into());
    for (k, word) in info.chunks_exact(4).enumerate() {
        put(
            reg::INFO + 4 * k as u32,
            u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
        );
    }
    put(reg::CONTROL, cfg.control());
    debug_assert_eq!(n, BOOT_WRITES);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_aligned_ordered_and_disjoint() {
        let mut end = 0;
        for r in REGISTERS {
            assert_eq!(r.offset % 4, 0, "{} unaligned", r.name);
            assert!(
                r.offset >= end,
                "{} overlaps the register before it",
                r.name
            );
            assert!(r.bits >= 1, "{} has no bits", r.name);
            end = r.offset + 4 * r.words();
            if r.bits > 32 {
                assert_eq!(
                    r.offset % 8,
                    0,
                    "{}: multi-word fields start 8-aligned",
                    r.name
                );
            }
        }
        assert!(end <= BLOCK_LEN, "registers run past BLOCK_LEN");
    }

    #[test]
    fn lookup_finds_every_word_and_nothing_else() {
        assert_eq!(
            lookup(reg::TABLE_BASE + 4).map(|r| r.name),
            Some("TABLE_BASE")
        );
        assert_eq!(lookup(reg::INFO + 15 * 4).map(|r| r.name), Some("INFO"));
        assert_eq!(lookup(reg::INFO + 16 * 4), None);
        assert_eq!(lookup(0x18), None);
        assert_eq!(lookup(reg::ID + 1), None);
        let mapped = (0..BLOCK_LEN)
            .step_by(4)
            .filter(|o| lookup(*o).is_some())
            .count();
        let words: u32 = REGISTERS.iter().map(Register::words).sum();
        assert_eq!(mapped as u32, words);
    }

    #[test]
    fn widths_match_the_fast_path_inputs() {
        let bits = |n: &str| REGISTERS.iter().find(|r| r.name == n).unwrap().bits;
        assert_eq!(bits("INFO"), 8 * crate::payload::InfoResp::LEN as u32);
        assert_eq!(bits("VA_BITS"), 6);
        assert_eq!(bits("MTU"), 16);
        assert_eq!(bits("MAC"), 48);
        assert_eq!(bits("IPV4"), 32);
        assert_eq!(bits("UDP_PORT"), 16);
        assert_eq!(bits("STATUS"), 32 - status::IN_RESET.leading_zeros());
        assert_eq!(bits("CONTROL"), 32 - control::READ_STREAMS.leading_zeros());
    }

    fn sample() -> FastPathConfig {
        let classes = crate::PageClasses::new(22, &[12, 21, 22], 50).unwrap();
        let info = crate::payload::InfoResp {
            board: crate::payload::InfoResp::board_field("zcu106"),
            firmware_version: 0x0001_0203,
            rtl_version: VERSION,
            build_id: 0x0123_4567_89ab_cdef,
            config_hash: 0xfedc_ba98_7654_3210,
            dram_bytes: 2 << 30,
            mtu: 1450,
            page_shift: 22,
            slots_per_bucket: 16,
            tlb_entries: 64,
            epoch: 0,
            sessions: 256,
            max_resp_kib: 64,
        };
        FastPathConfig {
            table_base: 0x0600_0000,
            rx_base: 0x0400_0000,
            rx_slots: 4096,
            tx_base: 0x0410_0000,
            tx_slots: 1024,
            data_start: 0x0800_0000,
            data_end: 0x8000_0000,
            classes,
            max_pid: 4096,
            mtu: 1450,
            mac: [0x02, 0xc1, 0x10, 0x00, 0x00, 0x01],
            ipv4: [10, 0, 0, 2],
            udp_port: 7700,
            info,
            read_streams: true,
        }
    }

    fn value_at(w: &[RegWrite], offset: u32) -> u32 {
        let hits: Vec<_> = w.iter().filter(|x| x.offset == offset).collect();
        assert_eq!(
            hits.len(),
            1,
            "offset {offset:#x} written {} times",
            hits.len()
        );
        hits[0].value
    }

    #[test]
    fn every_register_lands_at_its_offset_with_its_value() {
        let c = sample();
        let w = boot_writes(&c).unwrap();
        let config = &w[1..BOOT_WRITES - 1];
        let v = |o| value_at(config, o);
        assert_eq!((v(0x20), v(0x24)), (0x0600_0000, 0));
        assert_eq!((v(0x28), v(0x2c)), (0x0400_0000, 0));
        assert_eq!((v(0x30), v(0x34)), (0x0410_0000, 0));
        assert_eq!((v(0x38), v(0x3c)), (4096, 1024));
        assert_eq!((v(0x40), v(0x44)), (0x0800_0000, 0));
        assert_eq!((v(0x48), v(0x4c)), (0x8000_0000, 0));
        assert_eq!(v(0x50), 50);
        // Class 0 = default 4 MiB (22), then 4 KiB (12), 2 MiB (21), unused.
        assert_eq!(v(0x54), u32::from_le_bytes([22, 12, 21, 0]));
        assert_eq!(v(0x58), 4096);
        assert_eq!(v(0x5c), 1450);
        // The module docs' example: 02:c1:10:00:00:01, 10.0.0.2.
        assert_eq!((v(0x60), v(0x64)), (0x1000_0001, 0x02c1));
        assert_eq!(v(0x68), 0x0a00_0002);
        assert_eq!(v(0x6c), 7700);
        let mut info = [0u8; crate::payload::InfoResp::LEN];
        for k in 0..INFO_WORDS {
            let word = v(reg::INFO + 4 * k as u32);
            info[4 * k..4 * k + 4].copy_from_slice(&word.to_le_bytes());
        }
        assert_eq!(crate::payload::InfoResp::parse(&info).unwrap(), c.info);
        // Byte 0 of the payload (first letter of the board name) is bits 7..0.
        assert_eq!(v(reg::INFO) & 0xff, u32::from(b'z'));
    }

    #[test]
    fn boot_order_holds_reset_writes_every_config_word_then_releases() {
        let w = boot_writes(&sample()).unwrap();
        assert_eq!(
            w[0],
            RegWrite {
                offset: reg::CONTROL,
                value: control::RESET
            }
        );
        assert_eq!(
            w[BOOT_WRITES - 1],
            RegWrite {
                offset: reg::CONTROL,
                value: control::READ_STREAMS
            }
        );
        // Streams off: the release writes 0; nothing else changes.
        let mut off = sample();
        off.read_streams = false;
        let w_off = boot_writes(&off).unwrap();
        assert_eq!(w_off[BOOT_WRITES - 1].value, 0);
        assert_eq!(w_off[..BOOT_WRITES - 1], w[..BOOT_WRITES - 1]);
        // The release never holds the fast path, and sets only known bits.
        assert_eq!(
            w[BOOT_WRITES - 1].value & !(control::RESET | control::READ_STREAMS),
            0
        );
        assert_eq!(w[BOOT_WRITES - 1].value & control::RESET, 0);
        let config = &w[1..BOOT_WRITES - 1];
        assert!(config.iter().all(|x| x.offset != reg::CONTROL));
        // Offset order, so a wide field's low word precedes its high word.
        assert!(config.windows(2).all(|p| p[0].offset < p[1].offset));
        // Exactly the words of the read-write registers, each within its width.
        let mut expected = Vec::new();
        for r in REGISTERS {
            if r.access == Access::ReadWrite && r.offset != reg::CONTROL {
                for k in 0..r.words() {
                    expected.push(r.offset + 4 * k);
                }
            }
        }
        let got: Vec<u32> = config.iter().map(|x| x.offset).collect();
        assert_eq!(got, expected);
        assert_eq!(CONFIG_WORDS, expected.len());
        for x in config {
            let r = lookup(x.offset).unwrap();
            let bit0 = 8 * (x.offset - r.offset);
            let bits_here = r.bits.saturating_sub(bit0).min(32);
            if bits_here < 32 {
                assert_eq!(
                    x.value >> bits_here,
                    0,
                    "{} word {:#x} too wide",
                    r.name,
                    x.offset
                );
            }
        }
    }

    #[test]
    fn bad_fields_are_named_and_give_no_writes() {
        type Spoil = fn(&mut FastPathConfig);
        let cases: Vec<(&str, Rule, Spoil)> = vec![
            ("table_base", Rule::Below4GiB, |c| c.table_base = 1 << 32),
            ("table_base", Rule::Aligned(64), |c| c.table_base += 8),
            ("rx_base", Rule::Below4GiB, |c| c.rx_base = 0x1_0000_0000),
            ("tx_base", Rule::Aligned(64), |c| c.tx_base = 0x0410_0020),
            ("rx_slots", Rule::PowerOfTwo { min: 2, max: 65536 }, |c| {
                c.rx_slots = 1000
            }),
            ("tx_slots", Rule::PowerOfTwo { min: 2, max: 65536 }, |c| {
                c.tx_slots = 1
            }),
            ("tx_slots", Rule::Below4GiB, |c| c.tx_base = 0xffff_ff00),
            ("data_start", Rule::Aligned(4096), |c| c.data_start += 64),
            ("data_end", Rule::Below4GiB, |c| {
                c.data_end = (1 << 32) + 4096
            }),
            ("data_end", Rule::Above("data_start"), |c| {
                c.data_end = c.data_start
            }),
            ("max_pid", Rule::NonZero, |c| c.max_pid = 0),
            (
                "mtu",
                Rule::Range {
                    min: 64,
                    max: crate::clio::MAX_PAYLOAD as u64,
                },
                |c| {
                    c.mtu = 63;
                    c.info.mtu = 63;
                },
            ),
            (
                "mtu",
                Rule::Range {
                    min: 64,
                    max: crate::clio::MAX_PAYLOAD as u64,
                },
                |c| {
                    c.mtu = 70_000;
                },
            ),
            ("mac", Rule::NonZero, |c| c.mac = [0; 6]),
            ("mac", Rule::Unicast, |c| c.mac[0] = 0x01),
            ("ipv4", Rule::NonZero, |c| c.ipv4 = [0; 4]),
            ("ipv4", Rule::Unicast, |c| c.ipv4 = [239, 1, 2, 3]),
            ("ipv4", Rule::Unicast, |c| c.ipv4 = [255; 4]),
            ("udp_port", Rule::NonZero, |c| c.udp_port = 0),
            ("info.mtu", Rule::Equal("mtu"), |c| c.info.mtu = 1500),
            (
                "info.page_shift",
                Rule::Equal("the default page shift (class 0)"),
                |c| c.info.page_shift = 12,
            ),
        ];
        for (field, rule, spoil) in cases {
            let mut c = sample();
            spoil(&mut c);
            let e = boot_writes(&c).unwrap_err();
            assert_eq!((e.field, e.rule), (field, rule), "{e}");
            assert_eq!(c.check(), Err(e));
            let text = e.to_string();
            assert!(text.contains(field), "{text}");
            assert!(text.ends_with(&rule.to_string()), "{text}");
        }
        assert_eq!(sample().check(), Ok(()));
        let mut c = sample();
        c.mtu = 40;
        assert_eq!(
            c.check().unwrap_err().to_string(),
            "fastpath config: mtu = 40: must be in 64..=8916"
        );
        c = sample();
        c.table_base = 0x1_0000_0000;
        assert_eq!(
            c.check().unwrap_err().to_string(),
            "fastpath config: table_base = 0x100000000: \
             must end below 4 GiB (the fast path has 32-bit addresses)"
        );
    }

    #[test]
    fn id_spells_clfp() {
        assert_eq!(&ID.to_le_bytes(), b"CLFP");
    }
}
