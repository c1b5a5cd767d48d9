//! The fast-path register driver against a fake `clio_fp_regs` that records
//! every access: the boot sequence, the identity check, read-back and reset
//! errors, the doorbell after TX posts by the real engine, and the status.

mod common;

use std::collections::HashMap;

use clio_config::boards;
use clio_slowpath::fastpath_regs::{
    check_pl_done, fastpath_config, info_payload, version_word, PCAP_STATUS_PL_DONE,
};
use clio_slowpath::{Engine, FastPathRegs, FastPathStatus, RegisterBus, RegsError, SlowPathConfig};
use clio_wire::fpregs::{self, boot_writes, control, reg, status, Access, Rule, BOOT_WRITES};
use clio_wire::ring::{
    self, header_field, ring_bytes, Consumer, Descriptor, Direction, Producer, RingMemory,
};
use common::small_cfg;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read(u32),
    Write(u32, u32),
}

/// `clio_fp_regs` as its header and `clio_wire::fpregs` describe it.
struct FakeBlock {
    id: u32,
    version: u32,
    control: u32,
    words: HashMap<u32, u32>,
    /// Status bits besides IN_RESET and POLL_BUSY (links, idle, overflow).
    status_bits: u32,
    rx_drops: u32,
    tx_drops: u32,
    /// Drains started by doorbells (each finishes at once here).
    drains: u32,
    /// Doorbells written while the fast path was held (ignored).
    ignored_doorbells: u32,
    /// Accesses the block would answer with SLVERR.
    slverr: Vec<Op>,
    /// A word that drops writes (a bitstream with another map).
    deaf_word: Option<u32>,
    /// CONTROL.RESET cannot be cleared.
    stuck_in_reset: bool,
    /// CONTROL bits the block implements (a bitstream before
    /// READ_STREAMS has RESET only).
    control_mask: u32,
    log: Vec<Op>,
}

impl FakeBlock {
    fn new() -> Self {
        FakeBlock {
            id: fpregs::ID,
            version: fpregs::VERSION,
            control: control::RESET,
            words: HashMap::new(),
            status_bits: status::IDLE,
            rx_drops: 0,
            tx_drops: 0,
            drains: 0,
            ignored_doorbells: 0,
            slverr: Vec::new(),
            deaf_word: None,
            stuck_in_reset: false,
            control_mask: control::RESET | control::READ_STREAMS,
            log: Vec::new(),
        }
    }

    /// Significant bits of the word at `offset` of a read-write register.
    fn word_mask(offset: u32) -> Option<u32> {
        let r = fpregs::lookup(offset)?;
        if r.access != Access::ReadWrite || offset == reg::CONTROL {
            return None;
        }
        let bits = r.bits.saturating_sub(8 * (offset - r.offset)).min(32);
        Some(if bits == 32 {
            u32::MAX
        } else {
            (1 << bits) - 1
        })
    }

    fn writes(&self) -> Vec<(u32, u32)> {
        self.log
            .iter()
            .filter_map(|op| match *op {
                Op::Write(o, v) => Some((o, v)),
                Op::Read(_) => None,
            })
            .collect()
    }
}

impl RegisterBus for FakeBlock {
    fn read32(&mut self, offset: u32) -> u32 {
        self.log.push(Op::Read(offset));
        match offset {
            reg::ID => self.id,
            reg::VERSION => self.version,
            reg::CONTROL => self.control,
            reg::STATUS => {
                let reset = if self.control & control::RESET != 0 {
                    status::IN_RESET
                } else {
                    0
                };
                self.status_bits | reset
            }
            reg::DOORBELL => 0,
            reg::POLL_COUNT => self.drains,
            reg::RX_DROPS => self.rx_drops,
            reg::TX_DROPS => self.tx_drops,
            o if Self::word_mask(o).is_some() => self.words.get(&o).copied().unwrap_or(0),
            o => {
                self.slverr.push(Op::Read(o));
                0
            }
        }
    }

    fn write32(&mut self, offset: u32, value: u32) {
        self.log.push(Op::Write(offset, value));
        match offset {
            reg::CONTROL => {
                self.control = value & self.control_mask;
                if self.stuck_in_reset {
                    self.control = control::RESET;
                }
            }
            reg::DOORBELL => {
                if value & fpregs::DOORBELL_RING == 0 {
                } else if self.control & control::RESET != 0 {
                    self.ignored_doorbells += 1;
                } else {
                    self.drains += 1;
                }
            }
            o => match Self::word_mask(o) {
                Some(_) if self.deaf_word == Some(o) => {}
                Some(mask) => {
                    self.words.insert(o, value & mask);
                }
                None => self.slverr.push(Op::Write(o, value)),
            },
        }
    }
}

fn zcu106_config() -> fpregs::FastPathConfig {
    let board = boards::ZCU106;
    let sp = SlowPathConfig::from_board(&board);
    let info = info_payload(
        &board,
        version_word(0, 1, 0),
        clio_wire::payload::FASTPATH_VERSION,
        0x1122_3344_5566_7788,
    );
    fastpath_config(&board, &sp, info).unwrap()
}

#[test]
fn boot_checks_identity_holds_reset_writes_reads_back_and_releases() {
    let cfg = zcu106_config();
    let mut fake = FakeBlock::new();
    fake.status_bits = status::IDLE | status::LINK0_UP;
    fake.rx_drops = 2;
    let st = FastPathRegs::new(&mut fake).boot(&cfg).unwrap();
    assert!(fake.slverr.is_empty(), "SLVERR on {:?}", fake.slverr);

    let plan = boot_writes(&cfg).unwrap();
    let config = &plan[1..BOOT_WRITES - 1];
    let mut expected = vec![
        Op::Read(reg::ID),
        Op::Read(reg::VERSION),
        Op::Write(reg::CONTROL, control::RESET),
    ];
    expected.extend(config.iter().map(|w| Op::Write(w.offset, w.value)));
    expected.extend(config.iter().map(|w| Op::Read(w.offset)));
    expected.push(Op::Write(reg::CONTROL, control::READ_STREAMS));
    expected.extend([
        Op::Read(reg::STATUS),
        Op::Read(reg::POLL_COUNT),
        Op::Read(reg::RX_DROPS),
        Op::Read(reg::TX_DROPS),
        Op::Read(reg::CONTROL),
    ]);
    assert_eq!(fake.log, expected);

    // What the block holds now is the ZCU106 board config.
    let w = |o: u32| fake.words[&o];
    assert_eq!(
        (w(reg::TABLE_BASE), w(reg::TABLE_BASE + 4)),
        (0x0600_0000, 0)
    );
    assert_eq!((w(reg::RX_BASE), w(reg::RX_SLOTS)), (0x0400_0000, 4096));
    assert_eq!((w(reg::TX_BASE), w(reg::TX_SLOTS)), (0x0410_0000, 4096));
    assert_eq!(
        (w(reg::DATA_START), w(reg::DATA_END)),
        (0x0800_0000, 0x8000_0000)
    );
    assert_eq!(
        (w(reg::VA_BITS), w(reg::MAX_PID), w(reg::MTU)),
        (50, 4096, 1450)
    );
    // Class 0: 4 MiB (default), then 4 KiB, 2 MiB.
    assert_eq!(w(reg::CLASS_SHIFT), u32::from_le_bytes([22, 12, 21, 0]));
    assert_eq!((w(reg::MAC), w(reg::MAC + 4)), (0x1000_0001, 0x02c1));
    assert_eq!((w(reg::IPV4), w(reg::UDP_PORT)), (0x0a00_0002, 7700));
    // Released with READ_STREAMS: the ZCU106 config streams READ answers.
    assert!(cfg.read_streams);
    assert_eq!(fake.control, control::READ_STREAMS);
    assert_eq!(
        st,
        FastPathStatus {
            status: status::IDLE | status::LINK0_UP,
            poll_count: 0,
            rx_drops: 2,
            tx_drops: 0,
        }
    );
    assert!(st.idle() && st.link_up(0) && !st.link_up(1) && !st.in_reset());
}

#[test]
fn pl_done_decides_whether_the_block_may_be_touched() {
    // After a bitstream load PCAP_STATUS has PL_INIT, PL_DONE and both PCAP
    // idle bits set (0xf); with PL_DONE clear the block must not be touched,
    // whatever else is set.
    assert_eq!(check_pl_done(0x0000_000f), Ok(()));
    assert_eq!(check_pl_done(PCAP_STATUS_PL_DONE), Ok(()));
    for status in [0, 0x0000_0007, 0xffff_fff7] {
        let e = check_pl_done(status).unwrap_err();
        assert_eq!(
            e,
            RegsError::PlNotConfigured {
                pcap_status: status
            }
        );
        assert!(e.to_string().contains("PL_DONE clear"), "{e}");
        assert!(e.to_string().contains(&format!("{status:#010x}")), "{e}");
    }
}

#[test]
fn a_wrong_id_stops_before_any_write_and_names_register_and_value() {
    let mut fake = FakeBlock::new();
    fake.id = 0xdead_beef;
    let e = FastPathRegs::new(&mut fake)
        .boot(&zcu106_config())
        .unwrap_err();
    assert_eq!(
        e,
        RegsError::Mismatch {
            register: "ID",
            offset: reg::ID,
            read: 0xdead_beef,
            expected: fpregs::ID,
        }
    );
    assert_eq!(
        e.to_string(),
        "fast-path register ID (+0x0) reads 0xdeadbeef, expected 0x50464c43"
    );
    assert_eq!(fake.log, [Op::Read(reg::ID)]);

    let mut fake = FakeBlock::new();
    fake.version = 1;
    let e = FastPathRegs::new(&mut fake)
        .boot(&zcu106_config())
        .unwrap_err();
    assert!(
        matches!(
            e,
            RegsError::Mismatch {
                register: "VERSION",
                read: 1,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(fake.log, [Op::Read(reg::ID), Op::Read(reg::VERSION)]);
}

#[test]
fn a_bad_config_touches_no_register() {
    let mut cfg = zcu106_config();
    cfg.rx_base = 0x1_0000_0000;
    let mut fake = FakeBlock::new();
    let e = FastPathRegs::new(&mut fake).boot(&cfg).unwrap_err();
    match e {
        RegsError::Config(c) => assert_eq!((c.field, c.rule), ("rx_base", Rule::Below4GiB)),
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("rx_base"), "{e}");
    assert!(fake.log.is_empty());
}

#[test]
fn a_word_that_does_not_read_back_keeps_the_fast_path_in_reset() {
    let mut fake = FakeBlock::new();
    fake.deaf_word = Some(reg::MTU);
    let e = FastPathRegs::new(&mut fake)
        .boot(&zcu106_config())
        .unwrap_err();
    assert_eq!(
        e,
        RegsError::Mismatch {
            register: "MTU",
            offset: reg::MTU,
            read: 0,
            expected: 1450,
        }
    );
    assert_eq!(fake.control, control::RESET);
    assert!(!fake.writes().contains(&(reg::CONTROL, 0)));

    let mut fake = FakeBlock::new();
    fake.stuck_in_reset = true;
    let e = FastPathRegs::new(&mut fake)
        .boot(&zcu106_config())
        .unwrap_err();
    assert_eq!(
        e,
        RegsError::StillInReset {
            status: status::IDLE | status::IN_RESET
        }
    );
}

#[test]
fn read_streams_follows_the_config_and_a_block_without_it_is_refused() {
    // Streams off in the board config: the release writes 0.
    let mut board = boards::ZCU106;
    board.fastpath.read_streams = false;
    let sp = SlowPathConfig::from_board(&board);
    let info = info_payload(&board, version_word(0, 1, 0), 1, 0);
    let off = fastpath_config(&board, &sp, info).unwrap();
    assert!(!off.read_streams);
    let mut fake = FakeBlock::new();
    FastPathRegs::new(&mut fake).boot(&off).unwrap();
    assert_eq!(fake.writes().last(), Some(&(reg::CONTROL, 0)));
    assert_eq!(fake.control, 0);

    // A bitstream whose CONTROL has RESET only drops READ_STREAMS: the boot
    // names the register instead of serving whole answers unasked.
    let mut old = FakeBlock::new();
    old.control_mask = control::RESET;
    let e = FastPathRegs::new(&mut old)
        .boot(&zcu106_config())
        .unwrap_err();
    assert_eq!(
        e,
        RegsError::Mismatch {
            register: "CONTROL",
            offset: reg::CONTROL,
            read: 0,
            expected: control::READ_STREAMS,
        }
    );
    assert!(e.to_string().contains("CONTROL"), "{e}");
    // The same block with streams off in the config boots.
    let mut old = FakeBlock::new();
    old.control_mask = control::RESET;
    FastPathRegs::new(&mut old).boot(&off).unwrap();
}

#[test]
fn hold_then_configure_is_the_boot_split_around_dram_formatting() {
    let cfg = zcu106_config();
    let mut fake = FakeBlock::new();
    fake.control = 0; // a fast path left running by an earlier boot
    let mut regs = FastPathRegs::new(&mut fake);
    regs.hold().unwrap();
    assert_eq!(
        regs.bus().log,
        [
            Op::Read(reg::ID),
            Op::Read(reg::VERSION),
            Op::Write(reg::CONTROL, control::RESET)
        ]
    );
    assert_eq!(regs.bus().control, control::RESET);
    // A bad config at the second step touches nothing and keeps the reset.
    let mut bad = cfg;
    bad.mtu = 20;
    assert!(matches!(regs.configure(&bad), Err(RegsError::Config(e)) if e.field == "mtu"));
    assert_eq!(regs.bus().log.len(), 3);
    let st = regs.configure(&cfg).unwrap();
    assert!(!st.in_reset());
    // hold + configure issue exactly what boot issues.
    let mut whole = FakeBlock::new();
    FastPathRegs::new(&mut whole).boot(&cfg).unwrap();
    assert_eq!(fake.log, whole.log);
    assert_eq!(fake.words, whole.words);
}

#[test]
fn status_reads_the_four_status_registers() {
    let mut fake = FakeBlock::new();
    fake.control = 0;
    fake.status_bits = status::LINK1_UP | status::RX_OVERFLOW | status::POLL_BUSY;
    fake.rx_drops = 17;
    fake.tx_drops = 5;
    fake.drains = 9;
    let st = FastPathRegs::new(&mut fake).status();
    assert_eq!((st.poll_count, st.rx_drops, st.tx_drops), (9, 17, 5));
    assert!(st.link_up(1) && !st.link_up(0) && !st.link_up(2));
    assert!(st.rx_overflow() && st.poll_busy() && !st.idle() && !st.in_reset());
    assert!(fake.log.iter().all(|op| matches!(op, Op::Read(_))));
}

#[test]
fn info_payload_describes_the_board() {
    let board = boards::ZCU106;
    let i = info_payload(&board, version_word(1, 2, 3), 2, 0xabcd);
    assert_eq!(i.board_name().unwrap(), "zcu106");
    assert_eq!(
        (i.firmware_version, i.rtl_version, i.build_id),
        (0x01_02_03, 2, 0xabcd)
    );
    assert_eq!(i.config_hash, board.config_hash());
    assert_eq!((i.dram_bytes, i.mtu, i.page_shift), (2 << 30, 1450, 22));
    assert_eq!((i.slots_per_bucket, i.tlb_entries), (16, 64));
    // Every shipped board with a register block gives a writable config.
    for b in [boards::ZCU106, boards::EMULATOR] {
        let sp = SlowPathConfig::from_board(&b);
        let cfg = fastpath_config(&b, &sp, info_payload(&b, 0, 0, 0)).unwrap();
        cfg.check()
            .unwrap_or_else(|e| panic!("{}: {e}", b.board.name));
    }
}

/// The real engine on byte rings, with the fake block behind the doorbell.
#[test]
fn the_doorbell_rings_once_after_each_engine_call_that_posted() {
    let cfg = small_cfg();
    let mut arena = vec![0u64; cfg.arena_words()];
    let sp = common::slow_path(cfg, &mut arena);
    let (rx_slots, tx_slots) = (8, 64);
    let mut rx = vec![0u8; ring_bytes(rx_slots)];
    let mut tx = vec![0u8; ring_bytes(tx_slots)];
    ring::init(&mut rx[..], rx_slots).unwrap();
    ring::init(&mut tx[..], tx_slots).unwrap();
    let mut fp_rx = Producer::attach(&rx[..], Direction::Rx).unwrap();
    let mut fp_tx = Consumer::attach(&tx[..], Direction::Tx).unwrap();
    let mut e: Engine<'_, 2, 4> = Engine::new(sp, &rx[..], &tx[..]).unwrap();
    let epoch = e.core().epoch();

    let mut fake = FakeBlock::new();
    fake.control = 0; // booted
    let mut regs = FastPathRegs::new(&mut fake);
    let mut step = |regs: &mut FastPathRegs<&mut FakeBlock>, rx: &mut Vec<u8>, tx: &mut Vec<u8>| {
        let before = tx[..].load_u32(header_field::HEAD);
        let (_, rang) = regs.post_and_ring(&mut tx[..], |t| e.step(&mut rx[..], t, 16, |_, _| {}));
        let posted = tx[..].load_u32(header_field::HEAD).wrapping_sub(before);
        (rang, posted)
    };

    // The first call posts the boot epoch, alone, and rings once.
    let (rang, posted) = step(&mut regs, &mut rx, &mut tx);
    assert!(rang && posted == 1, "posted {posted}");
    assert_eq!(regs.bus().drains, 1);
    assert_eq!(
        fp_tx.pop(&mut tx[..]).unwrap().unwrap(),
        Descriptor::Epoch { epoch }
    );
    regs.bus_mut().log.clear();

    // Nothing to do (the free-PA FIFOs fill on demand): no post, no doorbell.
    let (rang, posted) = step(&mut regs, &mut rx, &mut tx);
    assert!(!rang && posted == 0);
    assert!(regs.bus().log.is_empty());

    fp_rx
        .push(
            &mut rx[..],
            &Descriptor::AllocReq {
                tag: 7,
                pid: 1,
                req_id: 7,
                va: 0,
                size: 3 * 4096,
                perms: 3,
                page_shift: 12,
                fixed: false,
            },
        )
        .unwrap();
    // An allocation of three pages: PTE writes, the reply and the FIFO
    // refill for its untouched pages, many descriptors, one doorbell.
    let (rang, posted) = step(&mut regs, &mut rx, &mut tx);
    assert!(rang && posted >= 4, "posted {posted}");
    assert_eq!(regs.bus().drains, 2);
    assert_eq!(
        regs.bus().log,
        [Op::Write(reg::DOORBELL, fpregs::DOORBELL_RING)]
    );
    let (mut reply, mut taken) = (None, 0);
    while let Some(d) = fp_tx.pop(&mut tx[..]) {
        if let Descriptor::Reply { req_id, status, .. } = d.unwrap() {
            reply = Some((req_id, status));
        }
        taken += 1;
    }
    assert_eq!((reply, taken), (Some((7, 0)), posted));

    // The fast path took them all: nothing new, no doorbell.
    let (rang, posted) = step(&mut regs, &mut rx, &mut tx);
    assert!(!rang && posted == 0);
    assert_eq!(regs.bus().drains, 2);
    assert_eq!(regs.bus().ignored_doorbells, 0);
    assert!(regs.bus().slverr.is_empty());
}
