//! Test harness: a board built from the emulator config, packet builders, and
//! the TX commands a slow path would post (PTE writes, free PAs, replies),
//! written by hand. It is not a slow path: it allocates nothing itself.
#![allow(dead_code)]

use std::collections::HashMap;

use clio_config::BoardConfig;
use clio_fastpath::{ClientId, FastPath, ModelOptions};
use clio_wire::clio::HEADER_LEN;
use clio_wire::pte::Pte;
use clio_wire::ring::{Consumer, Descriptor, Direction, Producer};
use clio_wire::{Header, Opcode, Packet, Status};

/// The shipped emulator board.
pub fn board() -> BoardConfig {
    clio_config::boards::EMULATOR
}

/// A parsed response packet.
#[derive(Debug, Clone)]
pub struct Resp {
    pub to: ClientId,
    pub bytes: Vec<u8>,
    pub h: Header,
}

impl Resp {
    pub fn payload(&self) -> &[u8] {
        &self.bytes[HEADER_LEN..]
    }
}

pub struct Bench {
    pub fp: FastPath<Vec<u8>>,
    pub cfg: BoardConfig,
    tx: Producer,
    rx: Consumer,
    used: HashMap<u32, u32>,
    next_ppn: HashMap<u8, u32>,
}

pub const CLIENT: ClientId = ClientId(7);

/// The boot epoch every bench posts first.
pub const EPOCH: u32 = 0x5eed_0001;

/// PIDs `1..=SESSION_PIDS` get a session at construction: session id = PID,
/// key = [`key_of`]; requests built by [`packet`] carry those credentials.
pub const SESSION_PIDS: u32 = 8;

/// The key of the session the bench opened for `pid`.
pub const fn key_of(pid: u32) -> u64 {
    0x6b65_7900_0000_0000 ^ (pid as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The session id a packet of `pid` carries (0 = none).
pub fn session_of(pid: u32) -> u16 {
    if (1..=SESSION_PIDS).contains(&pid) {
        pid as u16
    } else {
        0
    }
}

impl Bench {
    pub fn new() -> Bench {
        Self::with(board(), ModelOptions::default())
    }

    pub fn with(cfg: BoardConfig, opts: ModelOptions) -> Bench {
        let dram = vec![0u8; cfg.dram.size as usize];
        let fp = FastPath::format(&cfg, opts, dram).expect("format");
        let lay = *fp.layout();
        let tx = Producer::attach(
            &fp.dram()[lay.tx_ring.start..lay.tx_ring.end],
            Direction::Tx,
        )
        .unwrap();
        let rx = Consumer::attach(
            &fp.dram()[lay.rx_ring.start..lay.rx_ring.end],
            Direction::Rx,
        )
        .unwrap();
        let mut b = Bench {
            fp,
            cfg,
            tx,
            rx,
            used: HashMap::new(),
            next_ppn: HashMap::new(),
        };
        b.post(&Descriptor::Epoch { epoch: EPOCH });
        for pid in 1..=SESSION_PIDS {
            b.open(pid as u16, pid, key_of(pid));
        }
        assert!(b.poll().is_empty());
        b
    }

    /// Install session `session` of `pid` with `key` and the board's quotas,
    /// as the slow path does (a `SessionReply` nobody waits for).
    pub fn open(&mut self, session: u16, pid: u32, key: u64) {
        let cfg = self.cfg;
        self.open_with(session, pid, key, cfg.dedup_quota(), cfg.lock_quota());
    }

    /// [`Bench::open`] with the quotas given (posted, not yet polled).
    pub fn open_with(&mut self, session: u16, pid: u32, key: u64, dedup: u16, locks: u16) {
        self.post(&Descriptor::SessionReply {
            tag: 0,
            pid,
            req_id: 0,
            status: 0,
            session,
            key,
            dedup_quota: dedup,
            lock_quota: locks,
            mem_quota_pages: 0,
            close: false,
        });
    }

    /// First VA of the page-size class of `shift`.
    pub fn class_va(&self, shift: u8) -> u64 {
        let lay = self.fp.layout();
        let class = lay
            .class_shift
            .iter()
            .position(|&s| s == shift)
            .expect("size class");
        lay.class_base(class)
    }

    /// Post a TX descriptor as the slow path would.
    pub fn post(&mut self, d: &Descriptor) {
        let lay = *self.fp.layout();
        let mem = &mut self.fp.dram_mut()[lay.tx_ring.start..lay.tx_ring.end];
        self.tx.push(mem, d).expect("tx ring has room");
    }

    /// Post raw slot bytes (fault injection).
    pub fn post_raw(&mut self, slot: &[u8; 64]) {
        let lay = *self.fp.layout();
        let mem = &mut self.fp.dram_mut()[lay.tx_ring.start..lay.tx_ring.end];
        self.tx.push_raw(mem, slot).expect("tx ring has room");
    }

    /// Run the TX ring; returns the responses it produced.
    pub fn poll(&mut self) -> Vec<Resp> {
        let mut v = Vec::new();
        self.fp.poll_rings(&mut |to, b: &[u8]| v.push(parse(to, b)));
        v
    }

    /// Drain the RX ring.
    pub fn rx(&mut self) -> Vec<Descriptor> {
        let lay = *self.fp.layout();
        let mut v = Vec::new();
        loop {
            let mem = &mut self.fp.dram_mut()[lay.rx_ring.start..lay.rx_ring.end];
            match self.rx.pop(mem) {
                Some(d) => v.push(d.expect("well-formed rx descriptor")),
                None => return v,
            }
        }
    }

    /// Map `pages` pages of `1 << shift` bytes at `va` for `pid` with
    /// `perms`; `valid` pages get a fresh PA, others fault on first touch.
    pub fn map(&mut self, pid: u32, va: u64, pages: u64, shift: u8, perms: u8, valid: bool) {
        let g = self.fp.layout().table;
        for i in 0..pages {
            let vpn = (va >> shift) + i;
            let bucket = g.bucket_of(pid, vpn);
            let slot = self.used.entry(bucket).or_insert(0);
            assert!(*slot < g.slots_per_bucket, "bucket overflow in test setup");
            let s = *slot;
            *slot += 1;
            let ppn = if valid { self.fresh_ppn(shift) } else { 0 };
            let pte = Pte {
                pid,
                vpn,
                ppn,
                perms,
                allocated: true,
                valid,
                page_shift: shift,
            };
            self.post(&Descriptor::PteWrite {
                bucket,
                slot: s,
                update: false,
                pte,
            });
        }
        assert!(self.poll().is_empty());
    }

    /// A physical page never handed out before (from the top of the data region).
    pub fn fresh_ppn(&mut self, shift: u8) -> u32 {
        let lay = *self.fp.layout();
        let top = (lay.data_end >> shift) as u32;
        let n = self.next_ppn.entry(shift).or_insert(0);
        *n += 1;
        // Each size takes pages from its own slice of the data region.
        let slice = match shift {
            12 => 0,
            21 => 1,
            _ => 2,
        };
        let region_pages = ((lay.data_end - lay.data_start) >> shift) as u32;
        top - slice * region_pages / 3 - *n
    }

    /// Push `n` fresh free PAs of `shift`.
    pub fn push_free(&mut self, shift: u8, n: usize) {
        for _ in 0..n {
            let ppn = self.fresh_ppn(shift);
            self.post(&Descriptor::FreePaPush {
                page_shift: shift,
                ppn,
            });
        }
        assert!(self.poll().is_empty());
    }

    /// Send one packet; returns the responses.
    pub fn send(&mut self, pkt: &[u8]) -> Vec<Resp> {
        let mut v = Vec::new();
        self.fp
            .receive(CLIENT, pkt, &mut |to, b: &[u8]| v.push(parse(to, b)));
        v
    }

    /// Send one request built from fields; returns the responses.
    pub fn req(
        &mut self,
        op: Opcode,
        pid: u32,
        req_id: u32,
        va: u64,
        total_len: u32,
        payload: &[u8],
    ) -> Vec<Resp> {
        self.send(&packet(op, pid, req_id, 0, va, total_len, 0, payload))
    }

    /// Read `len` bytes; returns (status, data reassembled by offset).
    pub fn read(&mut self, pid: u32, req_id: u32, va: u64, len: u32) -> (Status, Vec<u8>) {
        let rs = self.req(Opcode::Read, pid, req_id, va, len, &[]);
        assert!(!rs.is_empty());
        let st = rs[0].h.status;
        let mut data = vec![0u8; if st == Status::Ok { len as usize } else { 0 }];
        for r in &rs {
            assert_eq!(r.h.opcode, Opcode::ReadResp);
            assert_eq!(r.h.req_id, req_id);
            if st == Status::Ok {
                let o = r.h.offset as usize;
                data[o..o + r.payload().len()].copy_from_slice(r.payload());
            }
        }
        (st, data)
    }

    /// Write `data` at `va` in MTU-sized packets; returns the statuses.
    pub fn write(&mut self, pid: u32, req_id: u32, va: u64, data: &[u8]) -> Vec<Status> {
        let mtu = self.cfg.network.mtu_payload as usize;
        let mut out = Vec::new();
        let mut off = 0;
        loop {
            let n = (data.len() - off).min(mtu);
            let pkt = packet(
                Opcode::Write,
                pid,
                req_id,
                0,
                va,
                data.len() as u32,
                off as u32,
                &data[off..off + n],
            );
            for r in self.send(&pkt) {
                assert_eq!(r.h.opcode, Opcode::WriteResp);
                out.push(r.h.status);
            }
            off += n;
            if off >= data.len() {
                return out;
            }
        }
    }
}

/// Build a request packet.
#[allow(clippy::too_many_arguments)]
pub fn packet(
    op: Opcode,
    pid: u32,
    req_id: u32,
    retry_of: u32,
    va: u64,
    total_len: u32,
    offset: u32,
    payload: &[u8],
) -> Vec<u8> {
    let s = session_of(pid);
    let key = if s == 0 { 0 } else { key_of(pid) };
    Header {
        retry_of,
        offset,
        ..Header::request(op, pid, req_id, va, total_len).with_session(s, EPOCH, key)
    }
    .encode(payload)
    .unwrap()
}

/// Parse a response; every response the model sends must carry a valid CRC
/// and parse as a header.
pub fn parse(to: ClientId, b: &[u8]) -> Resp {
    let p = Packet::new_checked(b).expect("response length");
    let h = Header::parse_verified(&p).expect("response parses");
    assert_eq!(b.len(), h.buffer_len(), "no trailing bytes");
    Resp {
        to,
        bytes: b.to_vec(),
        h,
    }
}
