//! A test double of a memory board: byte memory in a map, a bump VA
//! allocator, permissions, the sync unit (atomics, locks), sessions (open,
//! join, close, key check, epoch) and a dedup buffer keyed by session and
//! first attempt's id, freed by the client's `ack`, with a per-session
//! quota (BUSY beyond it). It speaks the real wire format and exists only
//! to exercise the SDK; the real board model lives elsewhere.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use clio_wire::clio::serial_before;
use clio_wire::clio::{flags, HEADER_LEN};
use clio_wire::payload::{
    perms, AllocReq, AllocResp, AtomicArgs, AtomicResp, FreeReq, InfoResp, OpenSessionReq,
    OpenSessionResp,
};
use clio_wire::{Header, Opcode, Packet, Status};

/// The session every [`FakeBoard`] starts with (for tests that install
/// credentials with `Connection::set_session` instead of opening one).
pub const SESSION: u16 = 1;
/// Its PID.
pub const PID: u32 = 42;
/// Its key.
pub const KEY: u64 = 0x5eed_0000_cafe_f00d;
/// The board's first epoch.
pub const EPOCH: u32 = 0x0bad_5eed;

const PAGE: u64 = 4096;

/// The double's state; fields are public so tests can inspect and steer it.
pub struct FakeBoard {
    /// Payload bytes per response packet.
    pub mtu: usize,
    /// PIDs the board knows (empty = all).
    pub known_pids: HashSet<u32>,
    /// Memory, 4 KiB pages.
    pub mem: HashMap<u64, Vec<u8>>,
    /// Allocated ranges: va -> (size, perms).
    pub ranges: Vec<(u64, u64, u8)>,
    /// Next VA handed out.
    pub next_va: u64,
    /// Lock words held: va -> holder pid.
    pub locks: HashMap<u64, u32>,
    /// Executions per request opcode (dedup hits excluded).
    pub executed: HashMap<Opcode, u32>,
    /// Dedup hits per request opcode.
    pub deduped: HashMap<Opcode, u32>,
    /// Every valid request header received.
    pub requests: Vec<Header>,
    /// Boot epoch (change it to emulate a restart).
    pub epoch: u32,
    /// Open sessions: id -> (pid, key).
    pub sessions: HashMap<u16, (u32, u64)>,
    /// Dedup records a session may hold (BUSY beyond).
    pub dedup_quota: usize,
    /// Most dedup records any session held at once.
    pub dedup_high_water: usize,
    /// Answer the next this-many session requests `OVER_QUOTA`.
    pub over_quota: u32,
    /// Answer the next this-many new non-idempotent requests `BUSY` (as a
    /// dedup buffer filled by other sessions would).
    pub busy_next: u32,
    /// Response bound stated in INFO (KiB, 0: none); a larger READ is
    /// answered `TOO_LARGE`, as the fast path does.
    pub max_resp_kib: u16,
    next_session: u16,
    next_pid: u32,
    dedup_writes: HashSet<(u16, u32, u32)>,
    dedup_results: HashMap<(u16, u32), (Status, u64, u64)>,
}

impl FakeBoard {
    /// A board answering with `mtu` payload bytes per packet.
    pub fn new(mtu: usize) -> Self {
        FakeBoard {
            mtu,
            known_pids: HashSet::new(),
            mem: HashMap::new(),
            ranges: Vec::new(),
            next_va: 0x1_0000_0000,
            locks: HashMap::new(),
            executed: HashMap::new(),
            deduped: HashMap::new(),
            requests: Vec::new(),
            epoch: EPOCH,
            sessions: HashMap::from([(SESSION, (PID, KEY))]),
            dedup_quota: usize::MAX,
            dedup_high_water: 0,
            over_quota: 0,
            busy_next: 0,
            max_resp_kib: 0,
            next_session: SESSION + 1,
            next_pid: 100,
            dedup_writes: HashSet::new(),
            dedup_results: HashMap::new(),
        }
    }

    /// Dedup records session `s` holds now (one per write packet).
    pub fn dedup_records(&self, s: u16) -> usize {
        self.dedup_writes.iter().filter(|k| k.0 == s).count()
            + self.dedup_results.keys().filter(|k| k.0 == s).count()
    }

    /// Emulate a restart: new epoch, no sessions, no dedup records.
    pub fn restart(&mut self, epoch: u32) {
        self.epoch = epoch;
        self.sessions.clear();
        self.dedup_writes.clear();
        self.dedup_results.clear();
        self.locks.clear();
    }

    /// Executions of `op`.
    pub fn executed(&self, op: Opcode) -> u32 {
        self.executed.get(&op).copied().unwrap_or(0)
    }

    /// Read local memory (test inspection).
    pub fn peek(&self, va: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let mut done = 0usize;
        while done < len {
            let a = va + done as u64;
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(len - done);
            if let Some(p) = self.mem.get(&(a / PAGE)) {
                out[done..done + n].copy_from_slice(&p[off..off + n]);
            }
            done += n;
        }
        out
    }

    fn poke(&mut self, va: u64, data: &[u8]) {
        let mut done = 0usize;
        while done < data.len() {
            let a = va + done as u64;
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(data.len() - done);
            let p = self
                .mem
                .entry(a / PAGE)
                .or_insert_with(|| vec![0; PAGE as usize]);
            p[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    fn word(&self, va: u64) -> u64 {
        let b: Vec<u8> = self.peek(va, 8);
        u64::from_le_bytes(b.try_into().unwrap())
    }

    fn set_word(&mut self, va: u64, v: u64) {
        self.poke(va, &v.to_le_bytes());
    }

    fn check(&self, va: u64, len: u64, need: u8) -> Status {
        match self
            .ranges
            .iter()
            .find(|&&(s, n, _)| va >= s && va + len <= s + n)
        {
            None => Status::Unmapped,
            Some(&(_, _, p)) if p & need != need => Status::Permission,
            Some(_) => Status::Ok,
        }
    }

    /// Handle one datagram; response datagrams go to `out`.
    pub fn handle(&mut self, pkt: &[u8], out: &mut dyn FnMut(Vec<u8>)) {
        let p = match Packet::new_checked(pkt) {
            Ok(p) => p,
            Err(_) => return,
        };
        let h = match Header::parse_verified(&p) {
            Ok(h) => h,
            Err(_) => {
                // Integrity failure: NACK the (unverified) request id.
                let nack = Header {
                    status: Status::Corrupt,
                    offset: p.offset(),
                    session: p.session(),
                    epoch: p.epoch(),
                    ..Header::request(Opcode::Nack, p.pid(), p.req_id(), 0, 0)
                };
                out(emit(&nack, &[]));
                return;
            }
        };
        self.requests.push(h);
        let payload = p.payload().to_vec();
        let epoch = self.epoch;
        let reply = |status: Status, va: u64, total: u32, off: u32, data: &[u8]| {
            let r = Header {
                status,
                offset: off,
                session: h.session,
                epoch: if status == Status::Restarted {
                    epoch
                } else {
                    h.epoch
                },
                ..Header::request(
                    h.opcode.response().unwrap_or(Opcode::Nack),
                    h.pid,
                    h.req_id,
                    va,
                    total,
                )
            };
            emit(&r, data)
        };
        if h.opcode.needs_session() {
            if h.epoch != self.epoch {
                out(reply(Status::Restarted, 0, 0, h.offset, &[]));
                return;
            }
            if self.sessions.get(&h.session) != Some(&(h.pid, h.key)) {
                out(reply(Status::BadSession, 0, 0, h.offset, &[]));
                return;
            }
            if h.ack != 0 {
                let s = h.session;
                self.dedup_writes
                    .retain(|k| k.0 != s || !serial_before(k.1, h.ack));
                self.dedup_results
                    .retain(|k, _| k.0 != s || !serial_before(k.1, h.ack));
            }
            if self.over_quota > 0 {
                self.over_quota -= 1;
                out(reply(Status::OverQuota, h.va, h.total_len, h.offset, &[]));
                return;
            }
        }
        match h.opcode {
            Opcode::OpenSession => return self.open_session(&h, &payload, out),
            Opcode::CloseSession => {
                self.sessions.remove(&h.session);
                let s = h.session;
                self.dedup_writes.retain(|k| k.0 != s);
                self.dedup_results.retain(|k, _| k.0 != s);
                out(reply(Status::Ok, 0, 0, 0, &[]));
                return;
            }
            _ => {}
        }
        if !self.known_pids.is_empty() && !self.known_pids.contains(&h.pid) {
            out(reply(Status::BadPid, h.va, h.total_len, h.offset, &[]));
            return;
        }
        let key = if h.retry_of != 0 {
            h.retry_of
        } else {
            h.req_id
        };
        if h.opcode.is_non_idempotent() {
            let fresh = !self.dedup_writes.contains(&(h.session, key, h.offset))
                && !self.dedup_results.contains_key(&(h.session, key));
            if fresh && self.busy_next > 0 {
                self.busy_next -= 1;
                out(reply(Status::Busy, h.va, h.total_len, h.offset, &[]));
                return;
            }
            if fresh && self.dedup_records(h.session) >= self.dedup_quota {
                out(reply(Status::Busy, h.va, h.total_len, h.offset, &[]));
                return;
            }
        }
        match h.opcode {
            Opcode::Read => {
                if self.max_resp_kib != 0 && h.total_len > u32::from(self.max_resp_kib) * 1024 {
                    out(reply(Status::TooLarge, h.va, h.total_len, 0, &[]));
                    return;
                }
                let st = self.check(h.va, h.total_len as u64, perms::READ);
                if st != Status::Ok {
                    out(reply(st, h.va, h.total_len, 0, &[]));
                    return;
                }
                *self.executed.entry(Opcode::Read).or_default() += 1;
                let data = self.peek(h.va, h.total_len as usize);
                for (i, c) in data.chunks(self.mtu).enumerate() {
                    out(reply(
                        Status::Ok,
                        h.va,
                        h.total_len,
                        (i * self.mtu) as u32,
                        c,
                    ));
                }
            }
            Opcode::Write => {
                let st = self.check(h.va, h.total_len as u64, perms::WRITE);
                if st != Status::Ok {
                    out(reply(st, h.va, h.total_len, h.offset, &[]));
                    return;
                }
                // Only a retry is looked up; every execution is recorded
                // under the first attempt's id.
                let fresh = self.dedup_writes.insert((h.session, key, h.offset));
                if fresh || h.retry_of == 0 {
                    *self.executed.entry(Opcode::Write).or_default() += 1;
                    self.poke(h.va + h.offset as u64, &payload);
                } else {
                    *self.deduped.entry(Opcode::Write).or_default() += 1;
                }
                out(reply(Status::Ok, h.va, h.total_len, h.offset, &[]));
            }
            op => {
                let cached = if h.retry_of != 0 {
                    self.dedup_results.get(&(h.session, key))
                } else {
                    None
                };
                let (st, va, val) = match cached {
                    Some(&r) if op.is_non_idempotent() => {
                        *self.deduped.entry(op).or_default() += 1;
                        r
                    }
                    _ => {
                        let r = self.execute(&h, &payload);
                        if op.is_non_idempotent() && r.0 != Status::Busy {
                            self.dedup_results.insert((h.session, key), r);
                        }
                        r
                    }
                };
                let mut body = [0u8; InfoResp::LEN];
                let n = if st != Status::Ok {
                    0
                } else {
                    match op {
                        Opcode::Alloc => AllocResp {
                            size: val,
                            retries: 0,
                        }
                        .emit(&mut body)
                        .unwrap(),
                        Opcode::TestAndSet
                        | Opcode::CompareAndSwap
                        | Opcode::FetchAndAdd
                        | Opcode::Lock => AtomicResp { old: val }.emit(&mut body).unwrap(),
                        Opcode::Info => InfoResp {
                            board: InfoResp::board_field("fake"),
                            firmware_version: 0x0001_0000,
                            rtl_version: 0x0001_0000,
                            build_id: 7,
                            config_hash: 9,
                            dram_bytes: 1 << 30,
                            mtu: self.mtu as u16,
                            page_shift: 12,
                            slots_per_bucket: 16,
                            tlb_entries: 64,
                            epoch: self.epoch,
                            sessions: 64,
                            max_resp_kib: self.max_resp_kib,
                        }
                        .emit(&mut body)
                        .unwrap(),
                        _ => 0,
                    }
                };
                let mut r = Header::parse(&Packet::new_unchecked(
                    &reply(st, va, h.total_len, 0, &body[..n])[..],
                ))
                .unwrap();
                if op == Opcode::Alloc && h.flags & flags::FIXED_VA != 0 && va != h.va {
                    r.flags |= flags::MOVED;
                }
                out(emit(&r, &body[..n]));
            }
        }
        if h.opcode.is_non_idempotent() {
            let n = self.dedup_records(h.session);
            self.dedup_high_water = self.dedup_high_water.max(n);
        }
    }

    fn open_session(&mut self, h: &Header, payload: &[u8], out: &mut dyn FnMut(Vec<u8>)) {
        let resp = |status: Status, pid: u32, body: &[u8]| {
            let r = Header {
                status,
                epoch: self.epoch,
                ..Header::request(Opcode::OpenSessionResp, pid, h.req_id, 0, 0)
            };
            emit(&r, body)
        };
        let Ok(req) = OpenSessionReq::parse(payload) else {
            return out(resp(Status::Malformed, h.pid, &[]));
        };
        let pid = if req.join_session == 0 {
            if h.pid != 0 {
                return out(resp(Status::Malformed, h.pid, &[]));
            }
            self.next_pid += 1;
            self.next_pid
        } else {
            match self.sessions.get(&req.join_session) {
                Some(&(pid, key)) if key == req.join_key && pid == h.pid => pid,
                _ => return out(resp(Status::BadSession, h.pid, &[])),
            }
        };
        let session = self.next_session;
        self.next_session += 1;
        let key = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(session as u64 + 1) ^ self.epoch as u64;
        self.sessions.insert(session, (pid, key));
        let mut body = [0u8; OpenSessionResp::LEN];
        OpenSessionResp {
            session,
            pid,
            key,
            epoch: self.epoch,
            dedup_quota: self.dedup_quota.min(u16::MAX as usize) as u16,
            lock_quota: 16,
            mem_quota_pages: 1 << 20,
        }
        .emit(&mut body)
        .unwrap();
        out(resp(Status::Ok, pid, &body));
    }

    /// Execute a non-data request: (status, response va, value).
    fn execute(&mut self, h: &Header, payload: &[u8]) -> (Status, u64, u64) {
        let op = h.opcode;
        let ok = |me: &mut Self| {
            *me.executed.entry(op).or_default() += 1;
        };
        match op {
            Opcode::Alloc => {
                let Ok(a) = AllocReq::parse(payload) else {
                    return (Status::Malformed, 0, 0);
                };
                let size = a.size.div_ceil(PAGE) * PAGE;
                let va = self.next_va;
                self.next_va += size + PAGE;
                self.ranges.push((va, size, a.perms));
                ok(self);
                (Status::Ok, va, size)
            }
            Opcode::Free => {
                let Ok(f) = FreeReq::parse(payload) else {
                    return (Status::Malformed, 0, 0);
                };
                let before = self.ranges.len();
                self.ranges
                    .retain(|&(s, _, _)| !(s >= h.va && s < h.va + f.size));
                if self.ranges.len() == before {
                    return (Status::Unmapped, h.va, 0);
                }
                ok(self);
                (Status::Ok, h.va, 0)
            }
            Opcode::TestAndSet | Opcode::CompareAndSwap | Opcode::FetchAndAdd => {
                let st = self.check(h.va, 8, perms::RW);
                if st != Status::Ok {
                    return (st, h.va, 0);
                }
                let old = self.word(h.va);
                let new = match op {
                    Opcode::TestAndSet => 1,
                    Opcode::CompareAndSwap => match AtomicArgs::parse_cas(payload) {
                        Ok(AtomicArgs::CompareAndSwap { expected, new }) => {
                            if old == expected {
                                new
                            } else {
                                old
                            }
                        }
                        _ => return (Status::Malformed, h.va, 0),
                    },
                    _ => match AtomicArgs::parse_faa(payload) {
                        Ok(AtomicArgs::FetchAndAdd { addend }) => old.wrapping_add(addend),
                        _ => return (Status::Malformed, h.va, 0),
                    },
                };
                self.set_word(h.va, new);
                ok(self);
                (Status::Ok, h.va, old)
            }
            Opcode::Lock => {
                if self.locks.contains_key(&h.va) {
                    return (Status::Busy, h.va, 1);
                }
                self.locks.insert(h.va, h.pid);
                ok(self);
                (Status::Ok, h.va, 0)
            }
            Opcode::Unlock => {
                self.locks.remove(&h.va);
                ok(self);
                (Status::Ok, h.va, 0)
            }
            Opcode::Fence | Opcode::Info => {
                ok(self);
                (Status::Ok, 0, 0)
            }
            _ => (Status::Unsupported, h.va, 0),
        }
    }
}

/// Serialize a header and payload.
pub fn emit(h: &Header, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    let mut h = *h;
    h.payload_len = payload.len() as u16;
    h.emit_with_payload(&mut b, payload).unwrap();
    b
}
