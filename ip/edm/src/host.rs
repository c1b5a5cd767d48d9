//! EDM host network stack (EDM §3.2.1): message queue, message ids per destination,
//! message state table and grant queue on the compute side; RREQ/RMWREQ service with
//! atomic read-modify-write and chunked RRES on the memory side. One node plays both roles.

use std::collections::{BTreeMap, HashMap, VecDeque};

use clio_wire::edm::{Block66, BlockClass, GrantRepr, MsgHeader, MsgKind, NotifyRepr, RmwOp};

use crate::assemble::{encode, Assembler, MemEvent, Message};
use crate::phy::{MemUnit, RxDemux, TxMux, TxPolicy};
use crate::timing::Latency;

/// Cycles from a TX job's start (its table and buffer read) to its unit's first block on
/// the line: a message may take the id a write's last chunk frees in the cycle after.
const JOB_CYCLES: u64 = 2;

/// Host parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// This node's id (its switch port).
    pub node: u16,
    /// Chunk size `c`: the implicit grant of an RREQ covers `min(c, len)` bytes.
    pub chunk_bytes: u16,
    /// Active messages allowed per destination (`X`).
    pub active_per_dst: usize,
    /// Bytes of local memory (remote memory when serving, read buffers when requesting).
    pub mem_bytes: usize,
    /// TX arbitration between memory blocks and frame blocks.
    pub policy: TxPolicy,
    /// Pipeline latencies.
    pub lat: Latency,
}

impl HostConfig {
    /// Defaults: chunk 256 B, X = 3, 64 KiB memory, fair TX policy, paper latencies.
    pub fn new(node: u16) -> Self {
        HostConfig {
            node,
            chunk_bytes: 256,
            active_per_dst: 3,
            mem_bytes: 1 << 16,
            policy: TxPolicy::Fair,
            lat: Latency::PAPER,
        }
    }
}

/// A remote memory operation submitted by the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Read `len` bytes at `addr` on `dst` into local memory at `local_addr`.
    Read {
        /// Memory node.
        dst: u16,
        /// Remote address.
        addr: u64,
        /// Bytes to read.
        len: u16,
        /// Where the response lands locally.
        local_addr: u64,
    },
    /// Write `data` at `addr` on `dst`.
    Write {
        /// Memory node.
        dst: u16,
        /// Remote address.
        addr: u64,
        /// Bytes to write.
        data: Vec<u8>,
    },
    /// Atomic read-modify-write of the 64-bit word at `addr` on `dst`.
    Rmw {
        /// Memory node.
        dst: u16,
        /// Remote address.
        addr: u64,
        /// Operation.
        op: RmwOp,
        /// Operands (CAS: compare, swap; FAA: addend; SWAP: value; TAS: none).
        operands: [u64; 2],
    },
}

impl Request {
    fn dst(&self) -> u16 {
        match self {
            Request::Read { dst, .. } | Request::Write { dst, .. } | Request::Rmw { dst, .. } => {
                *dst
            }
        }
    }
}

/// Why a request was refused at submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmitError {
    /// A field is out of range; names the field.
    BadField(&'static str),
}

impl std::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubmitError::BadField(name) => write!(f, "request field `{name}` is out of range"),
        }
    }
}

impl std::error::Error for SubmitError {}

/// A finished request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Tag returned by [`Host::submit`].
    pub tag: u64,
    /// Destination (memory node) of the request.
    pub dst: u16,
    /// Message id the request used (matches [`WriteApplied::id`] at the memory node).
    pub id: u8,
    /// False for a NULL response (the memory node could not serve the address).
    pub ok: bool,
    /// Cycle the request was submitted.
    pub submitted: u64,
    /// Cycle it left the message queue.
    pub dequeued: u64,
    /// Cycle the first response byte was written locally (reads) or the first chunk left (writes).
    pub first_data: u64,
    /// Cycle the last response byte was written (reads) or the last chunk left (writes).
    pub done: u64,
    /// Read data or RMW result.
    pub result: Vec<u8>,
}

/// A write applied at this node as the memory node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteApplied {
    /// Writer.
    pub src: u16,
    /// Writer's message id.
    pub id: u8,
    /// Address of the chunk.
    pub addr: u64,
    /// Bytes written.
    pub len: usize,
    /// Cycle the first byte reached the memory controller.
    pub first: u64,
    /// Cycle the last byte did.
    pub done: u64,
}

/// Error counters of the host stack (bad input is counted and dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounters {
    /// Grants naming a message this host does not have.
    pub unknown_grant: u64,
    /// Responses naming no outstanding request.
    pub unknown_response: u64,
    /// Blocks a host never receives (/N/ at a host).
    pub unexpected: u64,
    /// Requests for addresses outside memory (answered with a NULL response or dropped).
    pub bad_address: u64,
}

#[derive(Debug, Clone)]
enum State {
    Read {
        tag: u64,
        local_addr: u64,
        total: usize,
        received: usize,
        submitted: u64,
        dequeued: u64,
        first: Option<u64>,
        rmw: bool,
        data: Vec<u8>,
    },
    Write {
        tag: u64,
        addr: u64,
        data: Vec<u8>,
        sent: usize,
        /// Bytes covered by the grants received so far.
        granted: usize,
        submitted: u64,
        dequeued: u64,
        first: Option<u64>,
    },
}

#[derive(Debug, Clone, Default)]
struct DstIds {
    in_use: Vec<bool>,
    next: u8,
    active: usize,
}

#[derive(Debug, Clone)]
enum Action {
    Emit(Vec<Block66>),
    Serve(GrantRepr),
    /// Free a message id (a read's, when its completion is reported).
    Free(u16, u8),
    /// Free a write's id when the job of its last chunk (the `Serve` with this key) starts:
    /// 2 cycles before the unit would start leaving with the TX side free of frames.
    FreeAtJob(u16, u8, (u64, u64)),
}

/// A response the memory node is serving, chunk by chunk as the switch grants it.
#[derive(Debug, Clone)]
struct Serving {
    /// The bytes read (or the RMW result); empty for a NULL response.
    data: Vec<u8>,
    /// Bytes the grants so far covered.
    sent: usize,
    /// Bytes the switch schedules: the request's length, a NULL response's too.
    total: usize,
}

impl Serving {
    /// Bytes of the next chunk a grant of `len` bytes covers, and whether it is the last.
    /// A NULL response spends every grant the switch issues for the request's length, so
    /// the switch's scheduler and the requester agree on when the message is over: each
    /// grant but the last gets an empty chunk, the last the NULL (empty, last) chunk.
    fn step(&self, len: u16) -> (usize, bool) {
        let n = (len as usize).min(self.total - self.sent);
        (n, self.sent + n == self.total)
    }

    /// Body bytes of a chunk covering `n` bytes from `sent`.
    fn body(&self, n: usize) -> &[u8] {
        self.data.get(self.sent..self.sent + n).unwrap_or(&[])
    }
}

/// One host: TX/RX shims, message stack, local memory, and a frame source/sink.
#[derive(Debug, Clone)]
pub struct Host {
    cfg: HostConfig,
    /// Local memory.
    pub mem: Vec<u8>,
    tx: TxMux,
    rx: RxDemux,
    asm: Assembler,
    queue: VecDeque<(u64, u64, Request)>,
    ids: HashMap<u16, DstIds>,
    table: HashMap<(u16, u8), State>,
    serve: HashMap<(u16, u8), Serving>,
    actions: BTreeMap<(u64, u64), Action>,
    seq: u64,
    next_tag: u64,
    ip_tx: VecDeque<Block66>,
    ip_rx: Vec<Block66>,
    ip_rx_in_frame: bool,
    /// Memory units pushed into the TX mux and units that started leaving it.
    units_pushed: u64,
    units_started: u64,
    /// Cycle the unit encoder is free: units pushed into the TX mux are encoded one after
    /// another (a unit pushed at `t` starts leaving at `max(t, enc_free)` if no frame is in
    /// the way); a job starts 2 cycles before its unit leaves.
    enc_free: u64,
    /// Writes whose last chunk is the unit with this push index: they complete when it starts
    /// leaving, which under load is later than its push.
    write_done: VecDeque<(u64, Completion)>,
    /// Finished requests, in completion order.
    pub completions: Vec<Completion>,
    /// Writes applied here as a memory node.
    pub applied: Vec<WriteApplied>,
    /// Error counters.
    pub counters: HostCounters,
}

impl Host {
    /// A host with zeroed memory.
    pub fn new(cfg: HostConfig) -> Self {
        Host {
            mem: vec![0; cfg.mem_bytes],
            tx: TxMux::new(cfg.policy),
            rx: RxDemux::new(),
            asm: Assembler::new(),
            queue: VecDeque::new(),
            ids: HashMap::new(),
            table: HashMap::new(),
            serve: HashMap::new(),
            actions: BTreeMap::new(),
            seq: 0,
            next_tag: 0,
            ip_tx: VecDeque::new(),
            ip_rx: Vec::new(),
            ip_rx_in_frame: false,
            units_pushed: 0,
            units_started: 0,
            enc_free: 0,
            write_done: VecDeque::new(),
            completions: Vec::new(),
            applied: Vec::new(),
            counters: HostCounters::default(),
            cfg,
        }
    }

    /// Configuration.
    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }

    /// Submit a request at cycle `now`; returns its tag.
    pub fn submit(&mut self, now: u64, req: Request) -> Result<u64, SubmitError> {
        if req.dst() == self.cfg.node {
            return Err(SubmitError::BadField("dst"));
        }
        match &req {
            Request::Read {
                len, local_addr, ..
            } => {
                if *len == 0 {
                    return Err(SubmitError::BadField("len"));
                }
                if *local_addr as usize + *len as usize > self.mem.len() {
                    return Err(SubmitError::BadField("local_addr"));
                }
            }
            Request::Write { data, .. } => {
                if data.is_empty() || data.len() > u16::MAX as usize {
                    return Err(SubmitError::BadField("data"));
                }
            }
            Request::Rmw { .. } => {}
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        self.queue.push_back((tag, now, req));
        Ok(tag)
    }

    /// Queue a standard Ethernet frame (as blocks) for the MAC side of this host.
    pub fn send_frame(&mut self, blocks: &[Block66]) {
        self.ip_tx.extend(blocks.iter().copied());
    }

    /// Frame-side blocks the decoder received (idles between frames left out).
    pub fn frames_received(&self) -> &[Block66] {
        &self.ip_rx
    }

    /// RX shim counters.
    pub fn rx_counters(&self) -> crate::phy::RxCounters {
        self.rx.counters
    }

    /// Assembler counters.
    pub fn asm_counters(&self) -> crate::assemble::AsmCounters {
        self.asm.counters
    }

    /// TX shim (for its statistics).
    pub fn tx_mux(&self) -> &TxMux {
        &self.tx
    }

    /// True when no request, action, or block is pending anywhere in this host.
    pub fn is_quiet(&self) -> bool {
        self.queue.is_empty()
            && self.actions.is_empty()
            && self.table.is_empty()
            && self.serve.is_empty()
            && self.tx.is_quiet()
            && self.ip_tx.is_empty()
            && self.rx.buffered() == 0
            && self.write_done.is_empty()
    }

    /// Requests submitted but not finished.
    pub fn outstanding(&self) -> usize {
        self.queue.len() + self.table.len()
    }

    fn schedule(&mut self, at: u64, a: Action) {
        self.seq += 1;
        self.actions.insert((at, self.seq), a);
    }

    /// Advance one cycle: take the block received this cycle, return the block sent.
    pub fn tick(&mut self, now: u64, rx_block: Block66) -> Block66 {
        let (mem, dec) = self.rx.tick(rx_block);
        self.record_decoder(dec);
        if let Some(m) = mem {
            if let Some(ev) = self.asm.push(now, m) {
                self.on_event(now, ev);
            }
        }
        self.dequeue(now);
        while let Some((&(at, s), _)) = self.actions.first_key_value() {
            if at > now {
                break;
            }
            let a = self.actions.remove(&(at, s)).expect("key just seen");
            match a {
                Action::Emit(blocks) => self.push_unit(now, blocks),
                Action::Serve(g) => self.serve_grant(now, g),
                Action::Free(dst, id) => self.free_id(dst, id),
                Action::FreeAtJob(dst, id, key) => {
                    // (a job already served has started)
                    let start = if self.actions.contains_key(&key) {
                        self.unit_start(key)
                    } else {
                        now
                    };
                    if start <= now + JOB_CYCLES {
                        self.free_id(dst, id);
                    } else {
                        self.schedule(start - JOB_CYCLES, Action::FreeAtJob(dst, id, key));
                    }
                }
            }
        }
        let (b, src) = self.tx.tick();
        if src == crate::phy::TxSource::Memory(0) {
            self.units_started += 1;
            while self
                .write_done
                .front()
                .is_some_and(|(k, _)| *k < self.units_started)
            {
                let (_, mut c) = self.write_done.pop_front().expect("front checked");
                c.done = now;
                self.completions.push(c);
            }
        }
        // The MAC hands the shim its block after the shim's registered output has taken this
        // cycle's block: a frame block leaves a cycle after it is handed over, as the RTL's.
        if self.tx.encoder_ready() {
            if let Some(b) = self.ip_tx.pop_front() {
                let _ = self.tx.push_encoder(b);
            } else if self.tx.is_idle() {
                let _ = self.tx.push_encoder(Block66::IDLE);
            }
        }
        b
    }

    fn push_unit(&mut self, now: u64, blocks: Vec<Block66>) {
        if !blocks.is_empty() {
            self.units_pushed += 1;
            self.enc_free = self.enc_free.max(now) + blocks.len() as u64;
        }
        self.tx.push_memory(MemUnit { blocks });
    }

    /// Blocks of the unit an action will push (0 for none).
    fn action_blocks(&self, a: &Action) -> u64 {
        let blocks = |body: usize| clio_wire::edm::message_blocks(body) as u64;
        match a {
            Action::Emit(b) => b.len() as u64,
            Action::Serve(g) => match g.kind {
                MsgKind::Wreq => match self.table.get(&(g.peer, g.id)) {
                    Some(State::Write { data, sent, .. }) => {
                        blocks(8 + (g.len as usize).min(data.len() - *sent))
                    }
                    _ => 0,
                },
                MsgKind::Rres => match self.serve.get(&(g.peer, g.id)) {
                    Some(sv) => blocks(sv.body(sv.step(g.len).0).len()),
                    None => 0,
                },
                _ => 0,
            },
            Action::Free(..) | Action::FreeAtJob(..) => 0,
        }
    }

    /// Cycle the unit of the pending action `key` starts leaving, frames aside: after every
    /// unit pushed or due before it.
    fn unit_start(&self, key: (u64, u64)) -> u64 {
        let mut free = self.enc_free;
        for (&(at, _), a) in self.actions.range(..key) {
            let n = self.action_blocks(a);
            if n > 0 {
                free = free.max(at) + n;
            }
        }
        free.max(key.0)
    }

    fn record_decoder(&mut self, b: Block66) {
        match b.class() {
            BlockClass::Start => {
                self.ip_rx_in_frame = true;
                self.ip_rx.push(b);
            }
            BlockClass::Terminate(_) => {
                self.ip_rx_in_frame = false;
                self.ip_rx.push(b);
            }
            BlockClass::Idle if !self.ip_rx_in_frame => {}
            _ => self.ip_rx.push(b),
        }
    }

    fn alloc_id(&mut self, dst: u16) -> Option<u8> {
        let x = self.cfg.active_per_dst;
        let ids = self.ids.entry(dst).or_insert_with(|| DstIds {
            in_use: vec![false; 256],
            next: 0,
            active: 0,
        });
        if ids.active >= x {
            return None;
        }
        for k in 0..256u16 {
            let id = ids.next.wrapping_add(k as u8);
            if !ids.in_use[id as usize] {
                ids.in_use[id as usize] = true;
                ids.next = id.wrapping_add(1);
                ids.active += 1;
                return Some(id);
            }
        }
        None
    }

    fn free_id(&mut self, dst: u16, id: u8) {
        if let Some(ids) = self.ids.get_mut(&dst) {
            if ids.in_use[id as usize] {
                ids.in_use[id as usize] = false;
                ids.active -= 1;
            }
        }
    }

    /// One message per cycle leaves the queue; a destination at its `X` limit waits
    /// without blocking other destinations (order is kept per destination).
    fn dequeue(&mut self, now: u64) {
        let mut blocked: Vec<u16> = Vec::new();
        let mut pick = None;
        for (i, (_, _, req)) in self.queue.iter().enumerate().take(64) {
            let d = req.dst();
            if blocked.contains(&d) {
                continue;
            }
            let full = self
                .ids
                .get(&d)
                .is_some_and(|s| s.active >= self.cfg.active_per_dst);
            if full {
                blocked.push(d);
                continue;
            }
            pick = Some(i);
            break;
        }
        let Some(i) = pick else { return };
        let (tag, submitted, req) = self.queue.remove(i).expect("index from scan");
        let dst = req.dst();
        let id = self.alloc_id(dst).expect("capacity checked");
        let at = now + self.cfg.lat.host_gen_request;
        match req {
            Request::Read {
                addr,
                len,
                local_addr,
                ..
            } => {
                let h = MsgHeader::rreq(dst, id, len);
                let blocks = encode(&h, &addr.to_le_bytes()).expect("valid RREQ");
                self.table.insert(
                    (dst, id),
                    State::Read {
                        tag,
                        local_addr,
                        total: len as usize,
                        received: 0,
                        submitted,
                        dequeued: now,
                        first: None,
                        rmw: false,
                        data: Vec::new(),
                    },
                );
                self.schedule(at, Action::Emit(blocks));
            }
            Request::Rmw {
                addr, op, operands, ..
            } => {
                let h = MsgHeader {
                    kind: MsgKind::Rmwreq,
                    last: true,
                    op: Some(op),
                    peer: dst,
                    id,
                    len: op.response_bytes(),
                };
                let mut body = addr.to_le_bytes().to_vec();
                for w in operands.iter().take(op.operand_bytes() / 8) {
                    body.extend_from_slice(&w.to_le_bytes());
                }
                let blocks = encode(&h, &body).expect("valid RMWREQ");
                self.table.insert(
                    (dst, id),
                    State::Read {
                        tag,
                        local_addr: 0,
                        total: op.response_bytes() as usize,
                        received: 0,
                        submitted,
                        dequeued: now,
                        first: None,
                        rmw: true,
                        data: Vec::new(),
                    },
                );
                self.schedule(at, Action::Emit(blocks));
            }
            Request::Write { addr, data, .. } => {
                let n = NotifyRepr {
                    peer: dst,
                    id,
                    size: data.len() as u16,
                };
                self.table.insert(
                    (dst, id),
                    State::Write {
                        tag,
                        addr,
                        data,
                        sent: 0,
                        granted: 0,
                        submitted,
                        dequeued: now,
                        first: None,
                    },
                );
                self.schedule(at, Action::Emit(vec![n.emit()]));
            }
        }
    }

    fn on_event(&mut self, now: u64, ev: MemEvent) {
        let lat = self.cfg.lat;
        match ev {
            MemEvent::Grant(g, at) => {
                let due = at + lat.host_rx_grant + lat.host_grant_queue + lat.host_gen_data;
                self.schedule(due, Action::Serve(g));
                let serve_key = (due, self.seq);
                if g.kind == MsgKind::Wreq {
                    if let Some(State::Write { data, granted, .. }) =
                        self.table.get_mut(&(g.peer, g.id))
                    {
                        let before = *granted;
                        *granted = (*granted + g.len as usize).min(data.len());
                        if before < data.len() && *granted == data.len() {
                            // The job of the last chunk frees the id (the table entry is
                            // read then); the next message may leave the cycle after.
                            self.schedule(
                                due.saturating_sub(JOB_CYCLES).max(now),
                                Action::FreeAtJob(g.peer, g.id, serve_key),
                            );
                        }
                    }
                }
            }
            MemEvent::Notify(..) => self.counters.unexpected += 1,
            MemEvent::Message(m) => match m.header.kind {
                MsgKind::Rreq | MsgKind::Rmwreq => self.on_request(m),
                MsgKind::Wreq => self.on_write(m),
                MsgKind::Rres => self.on_response(now, m),
            },
        }
    }

    fn word(&self, addr: u64) -> Option<u64> {
        let a = addr as usize;
        let b = self.mem.get(a..a.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn on_request(&mut self, m: Message) {
        let h = m.header;
        let addr = u64::from_le_bytes(m.body[..8].try_into().expect("RREQ body holds the address"));
        // The memory controller step happens as the request is taken; RMW is atomic because
        // requests are executed one at a time in arrival order.
        let data: Vec<u8> = match h.op {
            None => {
                let a = addr as usize;
                match a
                    .checked_add(h.len as usize)
                    .and_then(|e| self.mem.get(a..e))
                {
                    Some(d) => d.to_vec(),
                    None => {
                        self.counters.bad_address += 1;
                        Vec::new()
                    }
                }
            }
            Some(op) => match self.word(addr) {
                None => {
                    self.counters.bad_address += 1;
                    Vec::new()
                }
                Some(old) => {
                    let arg = |i: usize| {
                        u64::from_le_bytes(
                            m.body[8 + 8 * i..16 + 8 * i].try_into().expect("operand"),
                        )
                    };
                    let (new, result) = match op {
                        RmwOp::Cas => {
                            if old == arg(0) {
                                (arg(1), vec![1])
                            } else {
                                (old, vec![0])
                            }
                        }
                        RmwOp::Faa => (old.wrapping_add(arg(0)), old.to_le_bytes().to_vec()),
                        RmwOp::Swap => (arg(0), old.to_le_bytes().to_vec()),
                        RmwOp::Tas => (1, vec![(old != 0) as u8]),
                    };
                    let a = addr as usize;
                    self.mem[a..a + 8].copy_from_slice(&new.to_le_bytes());
                    result
                }
            },
        };
        let key = (h.peer, h.id);
        if self.serve.contains_key(&key) {
            // A second request with an id still being served: the sender broke the id rule.
            self.counters.unexpected += 1;
            return;
        }
        // A NULL response (no data) still covers the request's length, grant by grant.
        let total = if data.is_empty() {
            h.len as usize
        } else {
            data.len()
        };
        self.serve.insert(
            key,
            Serving {
                data,
                sent: 0,
                total,
            },
        );
        // The RREQ is the implicit grant of the first chunk.
        let lat = self.cfg.lat;
        let taken = (m.head + lat.host_rx_request).max(m.tail + lat.host_rx_request - 1);
        let first = GrantRepr {
            peer: h.peer,
            id: h.id,
            len: h.len.min(self.cfg.chunk_bytes),
            kind: MsgKind::Rres,
        };
        self.schedule(
            taken + lat.host_grant_queue + lat.host_gen_data,
            Action::Serve(first),
        );
    }

    fn on_write(&mut self, m: Message) {
        let h = m.header;
        let addr = u64::from_le_bytes(m.body[..8].try_into().expect("WREQ body holds the address"));
        let data = &m.body[8..];
        let a = addr as usize;
        match a
            .checked_add(data.len())
            .and_then(|e| self.mem.get_mut(a..e))
        {
            Some(dst) => dst.copy_from_slice(data),
            None => {
                self.counters.bad_address += 1;
                return;
            }
        }
        let lat = self.cfg.lat.host_rx_data;
        self.applied.push(WriteApplied {
            src: h.peer,
            id: h.id,
            addr,
            len: data.len(),
            first: m.head + lat,
            done: m.tail + lat,
        });
    }

    fn on_response(&mut self, _now: u64, m: Message) {
        let h = m.header;
        let key = (h.peer, h.id);
        let lat = self.cfg.lat.host_rx_data;
        let Some(State::Read {
            tag,
            local_addr,
            total,
            received,
            submitted,
            dequeued,
            first,
            rmw,
            data,
        }) = self.table.get_mut(&key)
        else {
            self.counters.unknown_response += 1;
            return;
        };
        if m.body.len() > *total - *received {
            self.counters.unknown_response += 1;
            return;
        }
        let first_at = *first.get_or_insert(m.head + lat);
        let null = m.body.is_empty() && h.last;
        if !*rmw {
            let a = *local_addr as usize + *received;
            self.mem[a..a + m.body.len()].copy_from_slice(&m.body);
        }
        data.extend_from_slice(&m.body);
        *received += m.body.len();
        if *received == *total || null {
            let (tag, submitted, dequeued, result) =
                (*tag, *submitted, *dequeued, std::mem::take(data));
            self.table.remove(&key);
            // The id is free when the completion is reported (`done`, the last block
            // checked): a message dequeued in that cycle may take it.
            self.schedule(m.tail + lat - 1, Action::Free(h.peer, h.id));
            self.completions.push(Completion {
                tag,
                dst: h.peer,
                id: h.id,
                ok: !null,
                submitted,
                dequeued,
                first_data: first_at,
                done: m.tail + lat,
                result,
            });
        }
    }

    fn serve_grant(&mut self, now: u64, g: GrantRepr) {
        match g.kind {
            MsgKind::Wreq => {
                let key = (g.peer, g.id);
                let Some(State::Write {
                    tag,
                    addr,
                    data,
                    sent,
                    submitted,
                    dequeued,
                    first,
                    ..
                }) = self.table.get_mut(&key)
                else {
                    self.counters.unknown_grant += 1;
                    return;
                };
                let len = (g.len as usize).min(data.len() - *sent);
                let last = *sent + len == data.len();
                let h = MsgHeader {
                    kind: MsgKind::Wreq,
                    last,
                    op: None,
                    peer: g.peer,
                    id: g.id,
                    len: len as u16,
                };
                let mut body = (*addr + *sent as u64).to_le_bytes().to_vec();
                body.extend_from_slice(&data[*sent..*sent + len]);
                *sent += len;
                first.get_or_insert(now);
                let blocks = encode(&h, &body).expect("valid WREQ");
                let done = (*tag, *submitted, *dequeued, first.unwrap_or(now));
                let unit = self.units_pushed;
                self.push_unit(now, blocks);
                if last {
                    // (its id was freed when this job started: FreeAtJob)
                    self.table.remove(&key);
                    // complete when this last chunk starts leaving (set then)
                    self.write_done.push_back((
                        unit,
                        Completion {
                            tag: done.0,
                            dst: g.peer,
                            id: g.id,
                            ok: true,
                            submitted: done.1,
                            dequeued: done.2,
                            first_data: done.3,
                            done: now,
                            result: Vec::new(),
                        },
                    ));
                }
            }
            MsgKind::Rres => {
                let key = (g.peer, g.id);
                let Some(sv) = self.serve.get_mut(&key) else {
                    self.counters.unknown_grant += 1;
                    return;
                };
                let (n, last) = sv.step(g.len);
                let body = sv.body(n);
                let h = MsgHeader {
                    kind: MsgKind::Rres,
                    last,
                    op: None,
                    peer: g.peer,
                    id: g.id,
                    len: body.len() as u16,
                };
                let blocks = encode(&h, body).expect("valid RRES");
                sv.sent += n;
                self.push_unit(now, blocks);
                if last {
                    self.serve.remove(&key);
                }
            }
            _ => self.counters.unknown_grant += 1,
        }
    }
}
