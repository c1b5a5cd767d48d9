//! The memory-node side of the rack, for emulated boards: a [`RackNode`] is a
//! `clio_emu::Board` behind a **region gate**, and a [`NodeAgent`] registers the
//! node with the controller and reports its pressure.
//!
//! The gate is what migration needs from a node (Clio §3.4.7: "requests to the
//! region are paused during the move"): per address space and node-VA range it
//! holds a [`GateState`]. `Paused` answers `BUSY` to everything that changes memory
//! (writes, atomics, locks, allocations inside it, frees) and serves reads, so the
//! mover can copy a stable image while clients retry; `Moved` answers `MOVED` to
//! every request, so a client learns the region's new home from the controller.
//! Requests outside gated ranges reach the board untouched. Gates are set by
//! [`Message::Gate`] datagrams on the node's own data port (told from Clio packets
//! by the control magic), answered `Ack` with the board's boot epoch.
//!
//! `Tracking` serves everything and records, per [`DIRTY_BLOCK`] of the range,
//! whether a change landed there since the mover last asked
//! ([`Message::TakeDirty`], which reads and clears the record in one step under
//! the node's lock): the mover copies while writes go on, re-copies the dirty
//! blocks in rounds, and pauses writes only for its last round (`Paused` keeps
//! the record). A change marks its blocks in the same step that executes it, so
//! a change that is acknowledged before the pause is either in what the mover
//! read or in the record it takes after the pause.
//!
//! A board allocation that starts inside a `Moved` range of the same address space
//! (the board reusing freed VA) drops that range's gate: the VA holds new data.
//!
//! Stand-in note: on a real board the gate belongs in the fast path's request
//! check (a range table beside the session table); here it is host code in front
//! of the emulated board, and the control datagrams it answers are the ones a
//! firmware would.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio::backend::InProcessBoard;
use std::collections::{BTreeMap, BTreeSet};

use clio_control::{
    ChunkVa, Envelope, ErrorCode, Field, GateState, Message, NodeId, Pressure, RegionUse, Space,
    DIRTY_BLOCK, MAGIC, MAX_CHUNK_LIST, MAX_ENVELOPE_LEN, MAX_USAGE,
};
use clio_emu::{Board, ClientId, Engine};
use clio_wire::clio::{Header, Opcode, Packet, Status};

use crate::service::Client;

/// One gated range of one address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The rack vRegion it belongs to.
    pub region: u32,
    /// Address space on this node.
    pub pid: u32,
    /// First node VA.
    pub va: u64,
    /// Bytes.
    pub len: u64,
    /// How requests to it are served.
    pub state: GateState,
}

impl Gate {
    fn covers(&self, pid: u32, va: u64) -> bool {
        self.pid == pid && va >= self.va && va - self.va < self.len
    }
}

/// What the gate did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Requests answered `BUSY` because their range was paused.
    pub busy: u64,
    /// Requests answered `MOVED`.
    pub moved: u64,
    /// Changes that marked blocks of a `Tracking` gate dirty.
    pub tracked: u64,
    /// Control datagrams answered (gates set).
    pub control: u64,
    /// Control datagrams refused (malformed, not for a node).
    pub refused: u64,
    /// Clio requests handled (gated answers included).
    pub served: u64,
    /// Time spent handling them (ns, inside the node: its service time, without
    /// waiting for the node or for a core).
    pub busy_ns: u64,
}

/// One board range bound to a chunk of a rack vRegion ([`Message::Bind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// The vRegion.
    pub region: u32,
    /// Chunk index within it.
    pub chunk: u16,
    /// Bytes.
    pub len: u64,
}

/// An emulated memory board with a region gate in front of it.
///
/// Besides the gates it keeps what a node needs to take part in node-initiated
/// migration: which board ranges hold which chunk of which vRegion (bindings,
/// by `(pid, va)`), the requests served per region since the last report, the
/// regions migrated away from an address space (a late chunk of them is
/// refused), and each rack client's registered address space.
pub struct RackNode {
    board: Board,
    gates: Vec<Gate>,
    stats: GateStats,
    bindings: BTreeMap<(u32, u64), Binding>,
    hits: BTreeMap<u32, u64>,
    exported: BTreeSet<(u32, u32)>,
    spaces: BTreeMap<u64, Space>,
    /// Dirty records of `Tracking` gates (kept when one turns `Paused`), by
    /// (pid, gate start): bit i = block i changed since the last take.
    dirty: BTreeMap<(u32, u64), u64>,
}

impl std::fmt::Debug for RackNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RackNode")
            .field("gates", &self.gates)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Request opcodes whose `va` names memory the gate may hold back. `Alloc` is
/// left out (its `va` is only a hint; the board picks free VA), `Fence`, `Info`
/// and session opcodes carry none.
fn gated_opcode(op: Opcode) -> Option<bool> {
    // Some(true) = changes memory (paused answers BUSY), Some(false) = a read.
    match op {
        Opcode::Read | Opcode::PointerChase => Some(false),
        Opcode::Write
        | Opcode::TestAndSet
        | Opcode::CompareAndSwap
        | Opcode::FetchAndAdd
        | Opcode::Lock
        | Opcode::Unlock
        | Opcode::Free
        | Opcode::OffloadCall => Some(true),
        _ => None,
    }
}

impl RackNode {
    /// `board` behind an open gate.
    pub fn new(board: Board) -> RackNode {
        RackNode {
            board,
            gates: Vec::new(),
            stats: GateStats::default(),
            bindings: BTreeMap::new(),
            hits: BTreeMap::new(),
            exported: BTreeSet::new(),
            spaces: BTreeMap::new(),
            dirty: BTreeMap::new(),
        }
    }

    /// Marks the blocks of every `Tracking` gate of `pid` that `[va, end)`
    /// touches.
    fn mark_dirty(&mut self, pid: u32, va: u64, end: u64) {
        for g in &self.gates {
            if g.pid != pid || g.state != GateState::Tracking {
                continue;
            }
            let g_end = g.va.saturating_add(g.len);
            if end <= g.va || va >= g_end {
                continue;
            }
            let first = (va.max(g.va) - g.va) / DIRTY_BLOCK;
            let last = (end.min(g_end) - 1 - g.va) / DIRTY_BLOCK;
            if let Some(mask) = self.dirty.get_mut(&(pid, g.va)) {
                for b in first..=last.min(63) {
                    *mask |= 1 << b;
                }
                self.stats.tracked += 1;
            }
        }
    }

    /// Reads and clears the dirty record of the gate of `pid` starting at
    /// `va` (`None`: no gate there tracks).
    pub fn take_dirty(&mut self, pid: u32, va: u64) -> Option<u64> {
        self.dirty.get_mut(&(pid, va)).map(std::mem::take)
    }

    /// The binding covering `(pid, va)`.
    fn binding(&self, pid: u32, va: u64) -> Option<(u64, Binding)> {
        let (&(p, start), b) = self.bindings.range(..=(pid, va)).next_back()?;
        (p == pid && va - start < b.len).then_some((start, *b))
    }

    /// Per-region use since the previous call, for every region the node holds
    /// chunks of (ascending), and resets the counts.
    pub fn take_usage(&mut self) -> Vec<RegionUse> {
        let mut chunks: BTreeMap<u32, u16> = BTreeMap::new();
        for b in self.bindings.values() {
            let c = chunks.entry(b.region).or_insert(0);
            *c = c.saturating_add(1);
        }
        let hits = std::mem::take(&mut self.hits);
        chunks
            .into_iter()
            .map(|(region, chunks)| RegionUse {
                region,
                chunks,
                hits: hits.get(&region).copied().unwrap_or(0),
            })
            .collect()
    }

    /// Bound chunks of `region`: (pid, chunk, node VA), ascending by chunk.
    pub fn chunks_of(&self, region: u32) -> Vec<(u32, u16, u64)> {
        let mut v: Vec<_> = self
            .bindings
            .iter()
            .filter(|(_, b)| b.region == region)
            .map(|(&(pid, va), b)| (pid, b.chunk, va))
            .collect();
        v.sort_by_key(|&(_, c, _)| c);
        v
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// Current gates.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// Counters.
    pub fn stats(&self) -> GateStats {
        self.stats
    }

    /// Physical memory pressure from the slow path's frame allocator.
    pub fn pressure(&self) -> Pressure {
        let phys = self.board.slow().phys();
        let free = phys.free_bytes();
        Pressure {
            used_bytes: phys.total_bytes().saturating_sub(free),
            free_bytes: free,
        }
    }

    /// Sets (or, with `Open`, removes) the gate of `[va, va + len)` of `pid`.
    pub fn set_gate(&mut self, gate: Gate) {
        self.gates
            .retain(|g| !(g.pid == gate.pid && g.va == gate.va && g.len == gate.len));
        if gate.state == GateState::Moved {
            // The region left this address space: its bindings go, and a late
            // chunk of it is refused (the client learns the new owner).
            self.exported.insert((gate.pid, gate.region));
            self.bindings
                .retain(|&(pid, _), b| !(pid == gate.pid && b.region == gate.region));
        }
        match gate.state {
            GateState::Tracking => {
                self.dirty.entry((gate.pid, gate.va)).or_insert(0);
            }
            // The mover's last round reads what the tracking recorded.
            GateState::Paused => {}
            GateState::Open | GateState::Moved | GateState::Rejoin => {
                self.dirty.remove(&(gate.pid, gate.va));
            }
        }
        if gate.state != GateState::Open {
            self.gates.push(gate);
        }
    }

    /// One datagram from client `from`; answers go to `out`.
    pub fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        if pkt.starts_with(&MAGIC) {
            return self.control(from, pkt, out);
        }
        let t = Instant::now();
        self.serve(from, pkt, out);
        self.stats.served += 1;
        self.stats.busy_ns += u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    }

    fn serve(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        if !self.bindings.is_empty() {
            if let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) {
                if gated_opcode(h.opcode).is_some() {
                    if let Some((start, b)) = self.binding(h.pid, h.va) {
                        *self.hits.entry(b.region).or_insert(0) += 1;
                        // A freed chunk is no longer the region's.
                        if h.opcode == Opcode::Free && start == h.va {
                            self.bindings.remove(&(h.pid, start));
                        }
                    }
                }
            }
        }
        if !self.gates.is_empty() {
            if let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) {
                if let Some(writes) = gated_opcode(h.opcode) {
                    let hit = self
                        .gates
                        .iter()
                        .find(|g| g.covers(h.pid, h.va))
                        .map(|g| g.state);
                    let status = match hit {
                        // Freeing the old copy of a moved chunk (the mover does,
                        // after the switch) reaches the board: the memory is
                        // returned, the gate stays and answers MOVED.
                        Some(GateState::Moved) if h.opcode == Opcode::Free => None,
                        Some(GateState::Moved) => Some(Status::Moved),
                        Some(GateState::Paused) if writes => Some(Status::Busy),
                        // A new backup: the client must learn it before it
                        // changes memory again (reads go on).
                        Some(GateState::Rejoin) if writes => Some(Status::Moved),
                        // A free would pull the chunk from under the copy; an
                        // offload may change memory outside what the record sees.
                        Some(GateState::Tracking)
                            if matches!(h.opcode, Opcode::Free | Opcode::OffloadCall) =>
                        {
                            Some(Status::Busy)
                        }
                        _ => None,
                    };
                    if status.is_none() && writes && hit == Some(GateState::Tracking) {
                        // Marked in the same step that executes it (the node's lock).
                        let len = u64::from(h.total_len).max(8);
                        self.mark_dirty(h.pid, h.va, h.va.saturating_add(len));
                    }
                    if let Some(status) = status {
                        match status {
                            Status::Moved => self.stats.moved += 1,
                            _ => self.stats.busy += 1,
                        }
                        return answer(from, &h, status, out);
                    }
                }
            }
        }
        let gates = &mut self.gates;
        self.board.handle(from, pkt, &mut |to, p| {
            drop_reused(gates, p);
            out(to, p)
        });
    }

    /// Answers the migration messages a node serves (`Bind`, `Register`,
    /// `FindSpace`, `Chunks`); `None` for any other message.
    fn migration_control(&mut self, m: &Message) -> Option<Message> {
        let refuse = |code, field| Message::Refused { code, field };
        Some(match *m {
            Message::Bind {
                region,
                chunk,
                pid,
                va,
                len,
                import,
            } => {
                if import {
                    self.exported.remove(&(pid, region));
                } else if self.exported.contains(&(pid, region)) {
                    return Some(refuse(ErrorCode::NotOwner, Field::BindRegion));
                }
                let paused = self.gates.iter().any(|g| {
                    g.pid == pid
                        && g.region == region
                        && matches!(
                            g.state,
                            GateState::Paused | GateState::Rejoin | GateState::Tracking
                        )
                });
                if paused && !import {
                    return Some(refuse(ErrorCode::Busy, Field::BindRegion));
                }
                self.bindings
                    .insert((pid, va), Binding { region, chunk, len });
                Message::Ack {
                    epoch: self.board.epoch(),
                }
            }
            Message::Register { client, space } => {
                // First registration wins; a live session of the same address
                // space may replace the token (its first session may close).
                let e = self.spaces.entry(client).or_insert(space);
                if e.pid == space.pid {
                    *e = space;
                }
                Message::SpaceOf {
                    client,
                    space: Some(*e),
                }
            }
            Message::TakeDirty { pid, va, .. } => match self.take_dirty(pid, va) {
                Some(mask) => Message::Dirty { mask },
                None => refuse(ErrorCode::NotAssigned, Field::TakeDirtyVa),
            },
            Message::FindSpace { client } => Message::SpaceOf {
                client,
                space: self.spaces.get(&client).copied(),
            },
            Message::Chunks { region, from } => {
                let all = self.chunks_of(region);
                let Some(&(pid, _, _)) = all.first() else {
                    return Some(Message::NotAssigned { region });
                };
                let client = self
                    .spaces
                    .iter()
                    .find(|(_, s)| s.pid == pid)
                    .map_or(0, |(c, _)| *c);
                let mut chunks = heapless::Vec::new();
                let mut next = None;
                for &(_, chunk, va) in all.iter().filter(|&&(p, c, _)| p == pid && c >= from) {
                    if chunks.len() == MAX_CHUNK_LIST {
                        next = Some(chunk);
                        break;
                    }
                    let _ = chunks.push(ChunkVa { chunk, va });
                }
                Message::ChunkList {
                    region,
                    client,
                    pid,
                    chunks,
                    next,
                }
            }
            _ => return None,
        })
    }

    fn control(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        let (id, reply) = match Envelope::decode(pkt) {
            Ok(Envelope {
                request_id,
                message:
                    Message::Gate {
                        region,
                        pid,
                        va,
                        len,
                        state,
                    },
                ..
            }) => {
                self.set_gate(Gate {
                    region,
                    pid,
                    va,
                    len,
                    state,
                });
                self.stats.control += 1;
                (
                    request_id,
                    Message::Ack {
                        epoch: self.board.epoch(),
                    },
                )
            }
            Ok(env) => match self.migration_control(&env.message) {
                Some(reply) => {
                    self.stats.control += 1;
                    (env.request_id, reply)
                }
                None => {
                    self.stats.refused += 1;
                    (
                        env.request_id,
                        Message::Refused {
                            code: ErrorCode::NotARequest,
                            field: Field::Message,
                        },
                    )
                }
            },
            Err(e) => {
                self.stats.refused += 1;
                let Some(id) = Envelope::peek_request_id(pkt) else {
                    return;
                };
                let field = crate::state::field_named(e.field).unwrap_or(Field::Message);
                (
                    id,
                    Message::Refused {
                        code: ErrorCode::Malformed,
                        field,
                    },
                )
            }
        };
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        if let Ok(b) = Envelope::new(id, reply).encode(&mut buf) {
            out(from, b);
        }
    }
}

/// A header-only answer with `status` (as the fast path's refusals are built).
fn answer(from: u64, h: &Header, status: Status, out: &mut dyn FnMut(u64, &[u8])) {
    let Some(opcode) = h.opcode.response() else {
        return;
    };
    let r = Header {
        opcode,
        flags: 0,
        status,
        payload_len: 0,
        key: 0,
        ack: 0,
        // A read answer without data says so with offset 0.
        offset: if h.opcode == Opcode::Read {
            0
        } else {
            h.offset
        },
        ..*h
    };
    if let Ok(bytes) = r.encode(&[]) {
        out(from, &bytes);
    }
}

/// An allocation answer whose VA lies in a `Moved` range of its PID: the board
/// reused freed VA, so that range's gate no longer describes it.
fn drop_reused(gates: &mut Vec<Gate>, pkt: &[u8]) {
    if gates.is_empty() {
        return;
    }
    let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) else {
        return;
    };
    if h.opcode == Opcode::AllocResp && h.status == Status::Ok {
        let size = clio_wire::payload::AllocResp::parse(Packet::new_unchecked(pkt).payload())
            .map_or(1, |a| a.size.max(1));
        gates.retain(|g| {
            !(g.pid == h.pid
                && g.state == GateState::Moved
                && h.va < g.va.saturating_add(g.len)
                && g.va < h.va.saturating_add(size))
        });
    }
}

/// A node shared by its UDP server, in-process sessions and its agent.
#[derive(Debug, Clone)]
pub struct SharedNode(pub Arc<Mutex<RackNode>>);

impl SharedNode {
    /// Wraps `node`.
    pub fn new(node: RackNode) -> SharedNode {
        SharedNode(Arc::new(Mutex::new(node)))
    }

    /// Locks the node (a poisoned lock still holds the board's best state).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, RackNode> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Engine for SharedNode {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        self.lock().handle(from, packet, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        Engine::poll(&mut self.lock().board, out)
    }
}

impl InProcessBoard for SharedNode {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.lock().handle(from, pkt, &mut |to, p| {
            if to == from {
                out(p)
            }
        })
    }
}

/// Registers a node with the controller and keeps it alive with heartbeats
/// carrying its pressure, on its own thread.
#[derive(Debug)]
pub struct NodeAgent {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
    epoch: u32,
}

impl NodeAgent {
    /// Says hello for node `id` (serving at `addr` with `capacity` bytes) to the
    /// controller at `controller`, then heartbeats every `interval`. Fails if
    /// the controller refuses the hello or does not answer (naming its address).
    pub fn start(
        controller: SocketAddr,
        id: NodeId,
        addr: SocketAddr,
        capacity: u64,
        node: SharedNode,
        interval: Duration,
    ) -> io::Result<NodeAgent> {
        let mut c = Client::connect(controller)?;
        let boot_epoch = node.lock().board.epoch();
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("rack controller {controller}: {e}"));
        let epoch = match c
            .call(Message::Hello {
                node: id,
                addr: addr.into(),
                capacity,
                boot_epoch,
            })
            .map_err(named)?
        {
            Message::Welcome { epoch, .. } => epoch,
            Message::Refused { code, field } => {
                return Err(io::Error::other(format!(
                    "rack controller {controller} refused node {id}'s hello: {code} ({})",
                    field.name()
                )))
            }
            other => {
                return Err(io::Error::other(format!(
                    "rack controller {controller}: unexpected answer {other:?}"
                )))
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("clio-node-{id}"))
            .spawn(move || {
                let mut next = Instant::now();
                while !flag.load(Ordering::Relaxed) {
                    if Instant::now() >= next {
                        let pressure = node.lock().pressure();
                        // A lost heartbeat is covered by the next; a refusal (declared
                        // dead, fenced) ends the agent: the node must say hello again.
                        if let Ok(Message::Refused { code, field }) = c.call(Message::Heartbeat {
                            node: id,
                            epoch,
                            pressure,
                        }) {
                            return Err(io::Error::other(format!(
                                "rack controller {controller} refused node {id}'s heartbeat: {code} ({})",
                                field.name()
                            )));
                        }
                        // Per-region use for the controller's migration planning,
                        // in pages; a lost page only weakens one window's counts.
                        let usage = node.lock().take_usage();
                        for page in usage.chunks(MAX_USAGE) {
                            let _ = c.call(Message::Usage {
                                node: id,
                                epoch,
                                regions: page.iter().copied().collect(),
                            });
                        }
                        next = Instant::now() + interval;
                    }
                    std::thread::sleep(interval.min(Duration::from_millis(20)));
                }
                Ok(())
            })?;
        Ok(NodeAgent {
            stop,
            thread: Some(thread),
            epoch,
        })
    }

    /// The epoch the controller gave this registration.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Stops heartbeating (the controller declares the node dead after its
    /// `dead_after_ms`); returns why the agent ended if it ended on its own.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("node agent thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for NodeAgent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends one control message to a memory node's data port and waits for the
/// answer (bounded retries): how a mover sets a node's gate over UDP.
pub fn call_node(node: SocketAddr, message: Message) -> io::Result<Message> {
    let mut c = Client::connect(node)?;
    c.call(message)
        .map_err(|e| io::Error::new(e.kind(), format!("memory node {node}: {e}")))
}

/// Memory nodes in this process: sessions through the SDK's in-process backend,
/// control messages through the same [`RackNode::handle`] a UDP datagram takes.
#[derive(Debug, Clone)]
pub struct InProcessLinks {
    nodes: Vec<SharedNode>,
    next_client: Arc<std::sync::atomic::AtomicU64>,
}

impl InProcessLinks {
    /// Links to `nodes`, node id i+1 being `nodes[i]`.
    pub fn new(nodes: Vec<SharedNode>) -> InProcessLinks {
        InProcessLinks {
            nodes,
            next_client: Arc::new(std::sync::atomic::AtomicU64::new(1)),
        }
    }

    fn node(&self, id: NodeId) -> Option<&SharedNode> {
        self.nodes.get(usize::from(id).checked_sub(1)?)
    }
}

impl crate::client::Links<clio::backend::InProcess<SharedNode>> for InProcessLinks {
    fn session(
        &self,
        node: NodeId,
        _addr: SocketAddr,
        cfg: clio::ClientConfig,
    ) -> Result<clio::Session<clio::backend::InProcess<SharedNode>>, clio::ClioError> {
        let n = self.node(node).ok_or(clio::ClioError::InvalidArgument {
            what: "node",
            reason: "no such in-process node",
        })?;
        let from = self.next_client.fetch_add(1, Ordering::Relaxed);
        clio::Session::open_with(clio::backend::InProcess::new(n.clone(), from), cfg)
    }

    fn control(&self, node: NodeId, _addr: SocketAddr, message: Message) -> io::Result<Message> {
        let n = self
            .node(node)
            .ok_or_else(|| io::Error::other(format!("no in-process node {node}")))?;
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let req = Envelope::new(1, message)
            .encode(&mut buf)
            .map_err(io::Error::other)?
            .to_vec();
        let mut reply = None;
        // Client id 0 is never a session's: the answer comes back here only.
        n.lock()
            .handle(0, &req, &mut |_, p| reply = Some(p.to_vec()));
        let reply = reply.ok_or_else(|| io::Error::other(format!("node {node}: no answer")))?;
        Envelope::decode(&reply)
            .map(|e| e.message)
            .map_err(io::Error::other)
    }
}
