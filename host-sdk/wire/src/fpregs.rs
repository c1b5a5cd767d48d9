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
//! +0x80 .. +0xbb INFO (480 bits, 15 words: word i = bits 32i..32i+31)
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
//! while `CONTROL.RESET` is set is ignored.

/// Value of the `ID` register: "CLFP" little-endian.
pub const ID: u32 = 0x5046_4C43;
/// Register-map version.
pub const VERSION: u32 = 2;
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
    /// The INFO response payload (`cfg_info`, 480 bits in 15 words): byte `i`
    /// of the payload as [`crate::payload::InfoResp`] emits it is bits
    /// `8i..8i+7`, so word `k` holds payload bytes `4k..4k+3` little-endian.
    pub const INFO: u32 = 0x80;
}

/// Bits of the `CONTROL` register.
pub mod control {
    /// Hold the fast path in reset (set at power-on).
    pub const RESET: u32 = 0x1;
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
    /// A received beat was lost because the receive FIFO was full (sticky
    /// until the fast path is reset through `CONTROL.RESET`).
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
        bits: 1,
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
        bits: 480,
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
        assert_eq!(lookup(reg::INFO + 14 * 4).map(|r| r.name), Some("INFO"));
        assert_eq!(lookup(reg::INFO + 15 * 4), None);
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
    }

    #[test]
    fn id_spells_clfp() {
        assert_eq!(&ID.to_le_bytes(), b"CLFP");
    }
}
