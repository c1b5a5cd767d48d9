//! The driver of the ZCU106 fast-path register block (`clio_fp_regs`, map in
//! [`clio_wire::fpregs`]) over a [`RegisterBus`]: identity check, the boot
//! sequence, the TX doorbell and the status read.
//!
//! The register values and their order are [`fpregs::boot_writes`]; this
//! module issues them and checks what the block answers. The firmware
//! supplies the bus (volatile MMIO at `fastpath.regs_base`); tests supply a
//! fake one that records every access.
//!
//! Boot ([`FastPathRegs::boot`]):
//! 0. (firmware, before any access) the PL must be configured: an AXI
//!    access to an unconfigured PL port never completes, so the image reads
//!    the CSU's [`CSU_PCAP_STATUS`] first and stops on [`check_pl_done`];
//! 1. check the configuration ([`FastPathConfig::check`]): a bad one touches
//!    no register;
//! 2. read `ID`, then `VERSION`: a wrong value stops here, before any write
//!    (a wrong or missing bitstream is not configured);
//! 3. write `CONTROL` = `RESET` (hold the fast path; [`FastPathRegs::hold`]),
//!    then every configuration word in map order (64-bit fields low word
//!    first) and read each back ([`FastPathRegs::configure`]);
//! 4. write `CONTROL` = `READ_STREAMS` or 0 (release, streams as the board
//!    config's `fastpath.read_streams` says), read `STATUS` (`IN_RESET`
//!    must be clear), then `CONTROL` back (a bitstream that cannot stream
//!    reads `READ_STREAMS` as 0).
//!
//! The firmware splits it: `hold` before it formats board DRAM, `configure`
//! after, so the fast path never runs over rings being rewritten.
//!
//! Doorbell: the fast path drains the TX ring when `DOORBELL` is written
//! (it does not poll TX), so every engine call that may post to TX is
//! wrapped in [`FastPathRegs::post_and_ring`], which rings once if the
//! ring's `head` moved. A doorbell written while a drain runs is latched by
//! the fast path and starts another drain, so none is lost.

use clio_config::BoardConfig;
use clio_wire::fpregs::{self, reg, status, FastPathConfig, RegWrite, BOOT_WRITES};
use clio_wire::payload::InfoResp;
use clio_wire::ring::{header_field, RingMemory};

use crate::config::{ConfigError, SlowPathConfig};

/// 32-bit accesses to the register block, at byte offsets from its base.
///
/// An implementation must issue each access exactly once, in program order,
/// and order every earlier memory write (ring slots and indices) before a
/// register write, so a doorbell is never seen before the descriptors it
/// announces.
pub trait RegisterBus {
    /// Read the register word at `offset`.
    fn read32(&mut self, offset: u32) -> u32;
    /// Write `value` to the register word at `offset`.
    fn write32(&mut self, offset: u32, value: u32);
}

impl<B: RegisterBus + ?Sized> RegisterBus for &mut B {
    fn read32(&mut self, offset: u32) -> u32 {
        (**self).read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) {
        (**self).write32(offset, value)
    }
}

/// Address of the ZynqMP CSU's `PCAP_STATUS` register (UG1087: CSU module
/// at `0xFFCA_0000`, register at `+0x3010`), readable from EL1 without a PL.
pub const CSU_PCAP_STATUS: u64 = 0xFFCA_3010;

/// `PCAP_STATUS.PL_DONE` (bit 3): the PL finished configuration (its
/// `DONE` pin is high), so its AXI ports answer.
pub const PCAP_STATUS_PL_DONE: u32 = 1 << 3;

/// Whether the PL is configured, from a [`CSU_PCAP_STATUS`] value. Without
/// a bitstream an access to `fastpath.regs_base` would stall the core for
/// good, so the firmware touches the block only after this succeeds.
pub fn check_pl_done(pcap_status: u32) -> Result<(), RegsError> {
    if pcap_status & PCAP_STATUS_PL_DONE != 0 {
        Ok(())
    } else {
        Err(RegsError::PlNotConfigured { pcap_status })
    }
}

/// Why the block could not be brought up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegsError {
    /// `PCAP_STATUS.PL_DONE` is clear: no bitstream is loaded, and no
    /// register was touched.
    PlNotConfigured {
        /// The `PCAP_STATUS` value read.
        pcap_status: u32,
    },
    /// The configuration is invalid (no register was touched).
    Config(fpregs::ConfigError),
    /// A register read something other than what it must hold: `ID` or
    /// `VERSION` (wrong or missing bitstream; nothing was written), or a
    /// configuration word read back after its write (the fast path stays
    /// held in reset).
    Mismatch {
        /// Register name (as in [`fpregs::REGISTERS`]).
        register: &'static str,
        /// Byte offset of the word.
        offset: u32,
        /// Value read.
        read: u32,
        /// Value it must hold.
        expected: u32,
    },
    /// `STATUS.IN_RESET` still set after `CONTROL.RESET` was cleared.
    StillInReset {
        /// The `STATUS` value read.
        status: u32,
    },
}

impl core::fmt::Display for RegsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RegsError::PlNotConfigured { pcap_status } => write!(
                f,
                "PL not configured (CSU PCAP_STATUS = {pcap_status:#010x}, PL_DONE clear): load the bitstream first"
            ),
            RegsError::Config(e) => write!(f, "{e}"),
            RegsError::Mismatch {
                register,
                offset,
                read,
                expected,
            } => write!(
                f,
                "fast-path register {register} (+{offset:#x}) reads {read:#010x}, expected {expected:#010x}"
            ),
            RegsError::StillInReset { status } => write!(
                f,
                "fast-path STATUS = {status:#x}: IN_RESET still set after CONTROL.RESET was cleared"
            ),
        }
    }
}

/// The block's status registers, read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastPathStatus {
    /// `STATUS` ([`fpregs::status`] bits).
    pub status: u32,
    /// `POLL_COUNT`: finished TX-ring drains, wrapping.
    pub poll_count: u32,
    /// `RX_DROPS`: received frames the Ethernet/IPv4/UDP layer dropped.
    pub rx_drops: u32,
    /// `TX_DROPS`: responses dropped for want of a client address.
    pub tx_drops: u32,
}

impl FastPathStatus {
    /// No packet, drain or memory access in flight.
    pub fn idle(&self) -> bool {
        self.status & status::IDLE != 0
    }
    /// A doorbell's drain has not finished.
    pub fn poll_busy(&self) -> bool {
        self.status & status::POLL_BUSY != 0
    }
    /// Link of SFP port `port` (0 or 1) is up.
    pub fn link_up(&self, port: u8) -> bool {
        match port {
            0 => self.status & status::LINK0_UP != 0,
            1 => self.status & status::LINK1_UP != 0,
            _ => false,
        }
    }
    /// A received frame was dropped at a full receive FIFO since the last reset.
    pub fn rx_overflow(&self) -> bool {
        self.status & status::RX_OVERFLOW != 0
    }
    /// The fast path is held in reset.
    pub fn in_reset(&self) -> bool {
        self.status & status::IN_RESET != 0
    }
}

/// Version of the firmware as `InfoResp` carries it: major << 16 | minor << 8 | patch.
pub const fn version_word(major: u8, minor: u8, patch: u8) -> u32 {
    (major as u32) << 16 | (minor as u32) << 8 | patch as u32
}

/// The INFO payload of a board: its name, config hash, DRAM, MTU, default
/// page size, K and TLB from `board`; the firmware's version and build id
/// (first 8 bytes of the GNU build id, big-endian), the session-table
/// capacity (`sessions.capacity`; epoch 0: the fast path fills in its own)
/// and the block's
/// fast-path behaviour version (`clio_wire::payload::FASTPATH_VERSION`) as
/// `rtl_version` from the caller.
pub fn info_payload(
    board: &BoardConfig,
    firmware_version: u32,
    rtl_version: u32,
    build_id: u64,
) -> InfoResp {
    InfoResp {
        board: InfoResp::board_field(board.board.name.as_str()),
        firmware_version,
        rtl_version,
        build_id,
        config_hash: board.config_hash(),
        dram_bytes: board.dram.size,
        mtu: board.network.mtu_payload.min(u16::MAX.into()) as u16,
        page_shift: board.pages.default_size.trailing_zeros() as u8,
        slots_per_bucket: board.page_table.slots_per_bucket.min(255) as u8,
        tlb_entries: board.tlb.entries,
        // The fast path fills in its epoch register (set by the slow path's
        // `Epoch` descriptor); the static INFO words carry none.
        epoch: 0,
        sessions: board.session_capacity().min(u16::MAX.into()) as u16,
        // The fast path enforces the bound it reads from these INFO words
        // (bytes 62..64), so the stated and the enforced bound are one value.
        max_resp_kib: (board.network.max_response_bytes / 1024).min(u16::MAX.into()) as u16,
    }
}

/// The fast path's register values: the rings from `board`, the page
/// table, data region, VA classes and PID limit from the slow path's own
/// view `sp` (so the two sides cannot disagree), the network identity from
/// `board.network`, and `info`. Checked when written ([`FastPathRegs::boot`]).
pub fn fastpath_config(
    board: &BoardConfig,
    sp: &SlowPathConfig,
    info: InfoResp,
) -> Result<FastPathConfig, ConfigError> {
    Ok(FastPathConfig {
        table_base: sp.table_base,
        rx_base: board.rings.rx.base,
        rx_slots: board.rings.rx.slots,
        tx_base: board.rings.tx.base,
        tx_slots: board.rings.tx.slots,
        data_start: sp.data_base,
        data_end: sp.data_base.saturating_add(sp.data_size),
        classes: sp.page_classes()?,
        max_pid: sp.max_pids,
        mtu: board.network.mtu_payload,
        mac: board.network.mac,
        ipv4: board.network.ipv4,
        udp_port: board.network.udp_port,
        info,
        read_streams: board.fastpath.read_streams,
    })
}

/// The register block over bus `B`.
#[derive(Debug)]
pub struct FastPathRegs<B> {
    bus: B,
}

impl<B: RegisterBus> FastPathRegs<B> {
    /// The block behind `bus`; nothing is accessed yet.
    pub fn new(bus: B) -> Self {
        FastPathRegs { bus }
    }

    /// The bus.
    pub fn bus(&self) -> &B {
        &self.bus
    }

    /// The bus, mutably (e.g. to reset a recording bus between checks).
    pub fn bus_mut(&mut self) -> &mut B {
        &mut self.bus
    }

    fn expect(
        &mut self,
        register: &'static str,
        offset: u32,
        expected: u32,
    ) -> Result<(), RegsError> {
        let read = self.bus.read32(offset);
        if read == expected {
            Ok(())
        } else {
            Err(RegsError::Mismatch {
                register,
                offset,
                read,
                expected,
            })
        }
    }

    /// Read `ID`, then `VERSION`; the first wrong one is the error.
    pub fn probe(&mut self) -> Result<(), RegsError> {
        self.expect("ID", reg::ID, fpregs::ID)?;
        self.expect("VERSION", reg::VERSION, fpregs::VERSION)
    }

    /// The boot sequence (module docs) in one call: [`Self::hold`], then
    /// [`Self::configure`]; `cfg` is checked before any access.
    pub fn boot(&mut self, cfg: &FastPathConfig) -> Result<FastPathStatus, RegsError> {
        cfg.check().map_err(RegsError::Config)?;
        self.hold()?;
        self.configure(cfg)
    }

    /// Steps 2 and 3a of the boot: [`Self::probe`], then hold the fast path
    /// in reset (the first write of [`fpregs::boot_writes`]). The firmware
    /// does this before it formats board DRAM, so a fast path still running
    /// from an earlier boot of the ARM (the PL keeps its state) stops
    /// touching the rings and the page table first.
    pub fn hold(&mut self) -> Result<(), RegsError> {
        self.probe()?;
        self.bus.write32(reg::CONTROL, fpregs::control::RESET);
        Ok(())
    }

    /// The rest of the boot, after [`Self::hold`]: write every
    /// configuration word, read each back, release the reset (with
    /// `READ_STREAMS` as `cfg` says), read `CONTROL` back and the status
    /// (`IN_RESET` must be clear). A bad `cfg` touches no register.
    pub fn configure(&mut self, cfg: &FastPathConfig) -> Result<FastPathStatus, RegsError> {
        let writes = fpregs::boot_writes(cfg).map_err(RegsError::Config)?;
        let release = writes[BOOT_WRITES - 1];
        let config = &writes[1..BOOT_WRITES - 1];
        for w in config {
            self.bus.write32(w.offset, w.value);
        }
        for &RegWrite { offset, value } in config {
            let name = fpregs::lookup(offset).map_or("?", |r| r.name);
            self.expect(name, offset, value)?;
        }
        self.bus.write32(release.offset, release.value);
        let st = self.status();
        if st.in_reset() {
            return Err(RegsError::StillInReset { status: st.status });
        }
        // A bitstream without READ_STREAMS reads the bit as 0: say so
        // rather than serve with answers the config did not ask for.
        self.expect("CONTROL", release.offset, release.value)?;
        Ok(st)
    }

    /// Ring the TX doorbell: the fast path drains the TX ring once.
    pub fn ring_doorbell(&mut self) {
        self.bus.write32(reg::DOORBELL, fpregs::DOORBELL_RING);
    }

    /// Run `post` (anything that may publish TX descriptors into `tx`) and
    /// ring the doorbell once if the TX ring's `head` moved. Returns what
    /// `post` returned and whether the doorbell was rung.
    pub fn post_and_ring<M, R>(&mut self, tx: &mut M, post: impl FnOnce(&mut M) -> R) -> (R, bool)
    where
        M: RingMemory + ?Sized,
    {
        let before = tx.load_u32(header_field::HEAD);
        let out = post(tx);
        let moved = tx.load_u32(header_field::HEAD) != before;
        if moved {
            self.ring_doorbell();
        }
        (out, moved)
    }

    /// Read `STATUS`, `POLL_COUNT`, `RX_DROPS` and `TX_DROPS`.
    pub fn status(&mut self) -> FastPathStatus {
        FastPathStatus {
            status: self.bus.read32(reg::STATUS),
            poll_count: self.bus.read32(reg::POLL_COUNT),
            rx_drops: self.bus.read32(reg::RX_DROPS),
            tx_drops: self.bus.read32(reg::TX_DROPS),
        }
    }
}
