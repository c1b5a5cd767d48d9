//! Every page size end to end on the in-process board: the slow path places
//! a range of page size `s` in the VA class of `s` (`clio_wire::PageClasses`)
//! and the fast path finds its pages there, with the PTE tag
//! `(pid, vpn, page_shift)` keeping pages of different sizes apart.

mod common;

use std::collections::HashMap;

use clio_config::BoardConfig;
use clio_emu::Board;
use clio_wire::clio::flags;
use clio_wire::payload::{perms, AllocReq, AllocResp, FreeReq};
use clio_wire::{Header, Opcode, Packet, PageClasses, Status};

const KIB4: u8 = 12;
const MIB2: u8 = 21;
const MIB4: u8 = 22;

fn emulator() -> BoardConfig {
    BoardConfig::embedded("emulator").unwrap()
}

/// A test client: raw packets to a board, with fresh request ids. Each
/// test-local PID number is an address space of its own, opened as a
/// session on first use (the board assigns the real PID).
struct Client {
    board: Board,
    classes: PageClasses,
    next_id: u32,
    sessions: HashMap<u32, common::Creds>,
}

impl Client {
    fn new(cfg: &BoardConfig) -> Client {
        Client {
            board: Board::new(cfg).unwrap(),
            classes: cfg.page_classes().unwrap(),
            next_id: 1,
            sessions: HashMap::new(),
        }
    }

    /// Send one request; the board must answer with exactly one packet.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        op: Opcode,
        pid: u32,
        flag_bits: u8,
        va: u64,
        total: u32,
        payload: &[u8],
    ) -> (Header, Vec<u8>) {
        let id = self.next_id;
        let board = &mut self.board;
        let me = *self
            .sessions
            .entry(pid)
            .or_insert_with(|| common::open(board, 1, id + 1_000_000));
        let h = Header {
            flags: flag_bits,
            ..Header::request(op, me.pid, id, va, total).with_session(me.session, me.epoch, me.key)
        };
        self.next_id += 1;
        let pkt = h.encode(payload).unwrap();
        let mut got = Vec::new();
        self.board.handle(1, &pkt, &mut |_, p| got.push(p.to_vec()));
        assert_eq!(got.len(), 1, "{op:?}: one response per request");
        let p = Packet::new_checked(&got[0][..]).unwrap();
        let rh = Header::parse_verified(&p).unwrap();
        assert_eq!(rh.req_id, h.req_id);
        (rh, p.payload().to_vec())
    }

    /// Allocate `size` bytes of `1 << shift` pages (0 = default size);
    /// returns (va, bytes, moved).
    fn alloc(&mut self, pid: u32, va: u64, size: u64, shift: u8, fixed: bool) -> (u64, u64, bool) {
        let mut a = [0u8; AllocReq::LEN];
        AllocReq {
            size,
            perms: perms::RW,
            page_shift: shift,
        }
        .emit(&mut a)
        .unwrap();
        let f = if fixed { flags::FIXED_VA } else { 0 };
        let (h, p) = self.call(Opcode::Alloc, pid, f, va, 0, &a);
        assert_eq!(
            (h.opcode, h.status),
            (Opcode::AllocResp, Status::Ok),
            "{h:?}"
        );
        let r = AllocResp::parse(&p).unwrap();
        (h.va, r.size, h.flags & flags::MOVED != 0)
    }

    fn free(&mut self, pid: u32, va: u64, size: u64) -> Status {
        let mut f = [0u8; FreeReq::LEN];
        FreeReq { size }.emit(&mut f).unwrap();
        let (h, _) = self.call(Opcode::Free, pid, 0, va, 0, &f);
        assert_eq!(h.opcode, Opcode::FreeResp);
        h.status
    }

    fn write(&mut self, pid: u32, va: u64, data: &[u8]) -> Status {
        let (h, _) = self.call(Opcode::Write, pid, 0, va, data.len() as u32, data);
        assert_eq!(h.opcode, Opcode::WriteResp);
        h.status
    }

    /// Read `len` (≤ one MTU) bytes: (status, data).
    fn read(&mut self, pid: u32, va: u64, len: u32) -> (Status, Vec<u8>) {
        let (h, p) = self.call(Opcode::Read, pid, 0, va, len, &[]);
        assert_eq!(h.opcode, Opcode::ReadResp);
        (h.status, p)
    }

    /// Whether `[va, va + bytes)` lies in the VA class of pages of `shift`.
    fn in_class(&self, va: u64, bytes: u64, shift: u8) -> bool {
        self.classes.shift_of(va) == Some(shift)
            && self.classes.shift_of(va + bytes - 1) == Some(shift)
    }
}

/// A pattern that differs per range and per byte.
fn pattern(seed: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

#[test]
fn every_supported_page_size_allocates_faults_reads_and_frees() {
    let cfg = emulator();
    let mut c = Client::new(&cfg);
    let sizes: Vec<u8> = cfg
        .pages
        .sizes
        .iter()
        .map(|b| b.trailing_zeros() as u8)
        .collect();
    assert_eq!(sizes, [KIB4, MIB2, MIB4], "the emulator's page sizes");
    // 0 asks for the default size (4 MiB).
    for (i, (asked, shift)) in [(KIB4, KIB4), (MIB2, MIB2), (MIB4, MIB4), (0, MIB4)]
        .into_iter()
        .enumerate()
    {
        let page = 1u64 << shift;
        let (va, bytes, moved) = c.alloc(5, 0, 3 * page - 100, asked, false);
        assert_eq!((bytes, moved), (3 * page, false));
        assert_eq!(va % page, 0);
        assert!(c.in_class(va, bytes, shift), "{shift}: {va:#x}");
        let faults = c.board.stats().fast.faults;
        // Writes across both page boundaries: first touches of every page.
        let a = pattern(i as u8, 1000);
        let b = pattern(i as u8 + 100, 1000);
        assert_eq!(c.write(5, va + page - 400, &a), Status::Ok);
        assert_eq!(c.write(5, va + 2 * page - 600, &b), Status::Ok);
        assert_eq!(c.board.stats().fast.faults - faults, 3, "{shift}");
        assert_eq!(c.read(5, va + page - 400, 1000), (Status::Ok, a.clone()));
        assert_eq!(c.read(5, va + 2 * page - 600, 1000), (Status::Ok, b));
        // Untouched bytes of a faulted page read as zero.
        assert_eq!(c.read(5, va, 16), (Status::Ok, vec![0u8; 16]));
        // The range ends where it says.
        assert_eq!(c.read(5, va + bytes - 4, 8).0, Status::Unmapped);
        assert_eq!(c.free(5, va, bytes), Status::Ok);
        for off in [0, page - 400, 2 * page + 7] {
            assert_ne!(c.read(5, va + off, 8).0, Status::Ok, "{shift} after free");
            assert_ne!(c.write(5, va + off, b"late"), Status::Ok);
        }
        assert_ne!(c.free(5, va, bytes), Status::Ok, "double free");
    }
    assert_eq!(c.board.stats().fast.pte_errors, 0);
}

#[test]
fn two_page_sizes_interleaved_for_one_pid() {
    let cfg = emulator();
    let mut c = Client::new(&cfg);
    // (shift, pages) in request order: the sizes alternate.
    let plan = [
        (KIB4, 3),
        (MIB2, 2),
        (KIB4, 5),
        (MIB2, 1),
        (KIB4, 2),
        (MIB2, 3),
    ];
    let mut live = Vec::new();
    for (i, &(shift, pages)) in plan.iter().enumerate() {
        let page = 1u64 << shift;
        let (va, bytes, _) = c.alloc(9, 0, pages * page, shift, false);
        assert!(c.in_class(va, bytes, shift), "{shift}: {va:#x}");
        // Write a pattern over the first page boundary (or the middle of a
        // one-page range).
        let at = if pages > 1 { va + page - 300 } else { va + 64 };
        let data = pattern(i as u8, 600);
        assert_eq!(c.write(9, at, &data), Status::Ok);
        live.push((va, bytes, at, data));
    }
    // Ranges of one PID never overlap.
    let mut spans: Vec<(u64, u64)> = live.iter().map(|l| (l.0, l.0 + l.1)).collect();
    spans.sort();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0));
    for (_, _, at, data) in &live {
        assert_eq!(c.read(9, *at, 600), (Status::Ok, data.clone()));
    }
    // Free in mixed order; what is left stays intact, what is freed is gone.
    for k in [1, 4, 0, 5, 2, 3] {
        let (va, bytes, at, _) = live[k].clone();
        assert_eq!(c.free(9, va, bytes), Status::Ok);
        live[k].3.clear();
        assert_ne!(c.read(9, at, 8).0, Status::Ok);
        for (_, _, at, data) in live.iter().filter(|l| !l.3.is_empty()) {
            assert_eq!(c.read(9, *at, 600), (Status::Ok, data.clone()));
        }
    }
    assert_eq!(c.board.stats().fast.pte_errors, 0);
}

#[test]
fn the_same_vpn_in_two_sizes_does_not_alias() {
    // With 4 MiB as the default (the shipped emulator), the classes keep
    // VPN numbers of different sizes disjoint; with 4 KiB as the default
    // they overlap: 4 KiB VPNs of class 0 cover [0, 2^36), 2 MiB VPNs of
    // class 1 cover [2^27, 2^28). So this board makes the tag carry the
    // page shift.
    let mut cfg = emulator();
    cfg.pages.default_size = 1 << KIB4;
    let mut c = Client::new(&cfg);
    assert_eq!(
        (c.classes.shift(0), c.classes.shift(1), c.classes.shift(2)),
        (Some(KIB4), Some(MIB2), Some(MIB4))
    );
    let vpn = (1u64 << 27) + 5;
    let small = vpn << KIB4;
    let large = vpn << MIB2;
    let (va, _, moved) = c.alloc(3, large, 1 << MIB2, MIB2, true);
    assert_eq!((va, moved), (large, false));
    let (va, _, moved) = c.alloc(3, small, 1 << KIB4, KIB4, true);
    assert_eq!((va, moved), (small, false));
    // Both pages share one bucket of the hash table.
    let g = cfg.page_table_geometry();
    assert_eq!(g.bucket_of(3, small >> KIB4), g.bucket_of(3, large >> MIB2));
    assert_eq!(c.write(3, small + 100, b"four KiB page"), Status::Ok);
    assert_eq!(c.write(3, large + 100, b"two MiB page!"), Status::Ok);
    assert_eq!(c.read(3, small + 100, 13).1, b"four KiB page");
    assert_eq!(c.read(3, large + 100, 13).1, b"two MiB page!");
    // Same page offsets past the 4 KiB page: only the 2 MiB page has them.
    assert_eq!(c.write(3, large + 8192, b"x"), Status::Ok);
    assert_eq!(c.read(3, small + 8192, 1).0, Status::Unmapped);
    assert_eq!(c.board.stats().fast.pte_errors, 0);
    // Freeing one size leaves the other.
    assert_eq!(c.free(3, small, 1 << KIB4), Status::Ok);
    assert_ne!(c.read(3, small + 100, 13).0, Status::Ok);
    assert_eq!(c.read(3, large + 100, 13).1, b"two MiB page!");
    assert_eq!(c.free(3, large, 1 << MIB2), Status::Ok);
    assert_ne!(c.read(3, large + 100, 13).0, Status::Ok);
}

#[test]
fn a_fixed_va_outside_the_class_of_its_size_is_moved_into_it() {
    let cfg = emulator();
    let mut c = Client::new(&cfg);
    // A 4 KiB range asked for at a default-class (4 MiB) address.
    let want = 64 << MIB4;
    assert_eq!(c.classes.shift_of(want), Some(MIB4));
    let (va, bytes, moved) = c.alloc(4, want, 2 << KIB4, KIB4, true);
    assert!(moved && va != want);
    assert!(c.in_class(va, bytes, KIB4), "{va:#x}");
    assert_eq!(c.write(4, va + 4000, b"across"), Status::Ok);
    assert_eq!(c.read(4, va + 4000, 6).1, b"across");
    // Inside its class the same request is placed exactly.
    let exact = c.classes.class_base(c.classes.class_of(KIB4).unwrap()) + (1 << 30);
    let (va, _, moved) = c.alloc(4, exact, 1 << KIB4, KIB4, true);
    assert_eq!((va, moved), (exact, false));
}
