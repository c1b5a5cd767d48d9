//! A board for Clio-DF's firmware half without QEMU: the slow path, the
//! slow-path tests' fast-path stand-in (`common::Board`: it applies TX
//! descriptors to a page-table image, keeps the free-PA FIFOs and plays
//! first touches), board DRAM as bytes, and an [`OffloadHost`] serving
//! `clio_slowpath::offload::df` over `OFFLOAD_REQ` fragments.
//!
//! Clients write their columns as the fast path would (a first touch takes
//! a page from the FIFO and reports `PA_CONSUMED`); what they allocate and
//! never touch stays unbacked until the offload writes it. Used by
//! `tests/offload_df.rs`.
#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;

use clio_slowpath::offload::df::DfOffload;
use clio_slowpath::offload::{OffloadHost, SliceDram};
use clio_slowpath::{ReplyTo, SlowPath, SlowPathConfig};
use clio_wire::payload::{OffloadCallReq, OffloadCallResp};
use clio_wire::ring::Descriptor;
use clio_wire::{Header, Opcode, Status};

/// MTU payload of the rig's board (the emulator board's).
pub const MTU: usize = 1450;
/// Answer datagram bound (a single call's answer is under the MTU).
pub const B: usize = 2048;

/// The slow-path config: 4 KiB pages over 16 MiB, so columns span pages.
pub fn cfg() -> SlowPathConfig {
    let mut c = SlowPathConfig::from_board(&clio_config::boards::EMULATOR);
    c.default_shift = 12;
    c.data_size = 16 << 20;
    c.bucket_bits = 11;
    c.slots_per_bucket = 8;
    c.fifo_depth = 8;
    c.max_pids = 8;
    c.max_ranges = 256;
    c.max_retries = 32;
    c.va_bits = 32;
    c.check().expect("the rig's slow-path config");
    c
}

/// A caller's checked credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creds {
    /// PID.
    pub pid: u32,
    /// Session id.
    pub session: u16,
    /// Boot epoch.
    pub epoch: u32,
    /// Session key.
    pub key: u64,
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `OK` with the result (after the `OffloadCallResp`).
    Ok(Vec<u8>),
    /// `OFFLOAD_REFUSED` with the code.
    Refused(u16),
    /// Another status (`OFFLOAD_FAULT`, ...).
    Other(Status),
}

/// The board.
pub struct Rig<'a> {
    /// The slow path.
    pub sp: SlowPath<'a>,
    board: common::Board,
    /// Board DRAM (the data region).
    pub dram: Vec<u8>,
    base: u64,
    tx: Vec<Descriptor>,
    seq: u32,
    req: u32,
    shift: u8,
}

impl<'a> Rig<'a> {
    /// A board over `arena` (`cfg().arena_words()` words).
    pub fn new(arena: &'a mut [u64]) -> Self {
        let c = cfg();
        let mut r = Rig {
            sp: SlowPath::new(c, arena, common::SEED).unwrap(),
            board: common::Board::new(&c),
            dram: vec![0; c.data_size as usize],
            base: c.data_base,
            tx: Vec::new(),
            seq: 0,
            req: 0,
            shift: c.default_shift,
        };
        r.settle();
        r
    }

    /// Emit what the slow path owes and top up the FIFOs; the stand-in
    /// applies it all.
    pub fn settle(&mut self) {
        for _ in 0..64 {
            let done = self.sp.pump(&mut self.tx);
            self.sp.refill(&mut self.tx);
            let idle = self.tx.is_empty();
            self.board.apply_all(&mut self.tx);
            if done && idle {
                return;
            }
        }
        panic!("the slow path does not settle");
    }

    /// The board table equals the slow path's shadow table.
    pub fn check_tables(&mut self) {
        self.settle();
        self.board.assert_matches(&self.sp);
    }

    /// Open a session on a new address space.
    pub fn open(&mut self) -> Creds {
        let g = self
            .sp
            .open_session(ReplyTo::default(), 0, 0, 0)
            .expect("a session");
        self.settle();
        Creds {
            pid: g.session.pid,
            session: g.session.id,
            epoch: self.sp.epoch(),
            key: g.session.key,
        }
    }

    /// Allocate `size` bytes for `c` with `perms` (as `ALLOC` would).
    pub fn alloc(&mut self, c: &Creds, size: u64, perms: u8) -> u64 {
        let p = self
            .sp
            .alloc(ReplyTo::default(), c.pid, 0, size.max(8), perms, 0, false)
            .expect("an allocation");
        self.settle();
        p.range.start
    }

    /// Free what [`Rig::alloc`] gave.
    pub fn free(&mut self, c: &Creds, va: u64, size: u64) {
        self.sp
            .free(ReplyTo::default(), c.pid, va, size.max(8))
            .expect("a free");
        self.settle();
        // Freed pages are zeroed before reuse, as the board's scrub does.
        let mut zeroed = Vec::new();
        self.sp
            .scrub(self.board.applied, |pa, len| zeroed.push((pa, len)));
        for (pa, len) in zeroed {
            self.board.zero(pa, len);
            let at = (pa - self.base) as usize;
            self.dram[at..at + len as usize].fill(0);
        }
        self.settle();
    }

    fn pa(&mut self, pid: u32, va: u64, touch: bool) -> Option<u64> {
        if let Some((pa, _, _)) = self.sp.translate(pid, va) {
            return Some(pa);
        }
        if !touch {
            return None;
        }
        let n = self.board.touch(pid, va >> self.shift, self.shift)?;
        let Descriptor::PaConsumed {
            pid,
            vpn,
            ppn,
            page_shift,
            bucket,
            slot,
        } = n
        else {
            unreachable!()
        };
        self.sp
            .pa_consumed(pid, vpn, ppn, page_shift, bucket, slot)
            .unwrap();
        self.settle();
        self.sp.translate(pid, va).map(|t| t.0)
    }

    /// Write `bytes` at `va` of `c` as the fast path would (first touches
    /// included; no permission check: the rig's clients write what they
    /// allocated).
    pub fn write(&mut self, c: &Creds, va: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            let pa = self
                .pa(c.pid, va + i as u64, true)
                .expect("a page of the caller's range");
            self.dram[(pa - self.base) as usize] = *b;
        }
    }

    /// Read `len` bytes at `va` of `c` (an untouched page reads zero).
    pub fn read(&mut self, c: &Creds, va: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| match self.pa(c.pid, va + i, false) {
                Some(pa) => self.dram[(pa - self.base) as usize],
                None => 0,
            })
            .collect()
    }

    /// Upload a column (a new range, written).
    pub fn upload(&mut self, c: &Creds, values: &[u64]) -> u64 {
        let va = self.alloc(c, values.len() as u64 * 8, clio_wire::payload::perms::RW);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write(c, va, &bytes);
        va
    }

    /// One `OFFLOAD_CALL` from `c` to `offload` through `host`.
    pub fn call(
        &mut self,
        host: &mut OffloadHost<'_, 2, 4, B>,
        c: &Creds,
        offload: u32,
        op: u16,
        args: &[u8],
    ) -> Outcome {
        let mut payload = OffloadCallReq { offload, op }.to_bytes().to_vec();
        payload.extend_from_slice(args);
        self.req += 1;
        let mut h = Header::request(Opcode::OffloadCall, c.pid, self.req, 0, 0)
            .with_session(c.session, c.epoch, c.key);
        h.payload_len = payload.len() as u16;
        let mut pkt = vec![0u8; h.buffer_len()];
        h.emit_with_payload(&mut pkt, &payload).unwrap();
        self.seq += 1;
        let mut dram = SliceDram {
            base: self.base,
            bytes: &mut self.dram,
        };
        let (status, p) =
            common::offload_exchange(host, &mut self.sp, &mut dram, &mut self.tx, self.seq, &pkt);
        self.settle();
        match status {
            Status::Ok => Outcome::Ok(p[OffloadCallResp::LEN..].to_vec()),
            Status::OffloadRefused => Outcome::Refused(OffloadCallResp::parse(&p).unwrap().code),
            s => Outcome::Other(s),
        }
    }
}

/// A host with Clio-DF registered under its id.
pub fn host(df: &mut DfOffload) -> OffloadHost<'_, 2, 4, B> {
    let mut h = OffloadHost::new(MTU, 65536);
    h.register(clio_slowpath::offload::df::OFFLOAD_ID, df)
        .unwrap();
    h
}
