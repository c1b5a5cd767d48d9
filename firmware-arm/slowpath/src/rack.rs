//! The memory node's side of the rack (issue #22): a pure `no_std` state
//! machine, no I/O, no heap, no clock of its own (the caller passes the time).
//!
//! Two parts, one owner each:
//!
//! - [`RackAgent`] answers the control datagrams a memory node serves
//!   (`clio-control`: `Gate`, `TakeDirty`, `Bind`, `Register`, `FindSpace`,
//!   `Chunks`) and holds the **region gate**: per address space and node-VA
//!   range a [`GateState`] that [`RackAgent::check`] applies to each Clio
//!   request before the fast path's work runs (`Paused` answers changes
//!   `BUSY`, `Moved` answers `MOVED`, `Rejoin` answers changes `MOVED`,
//!   `Tracking` serves everything and records the [`DIRTY_BLOCK`]s a change
//!   touches). It also keeps which board ranges hold which chunk of which
//!   vRegion (bindings: region assignment to this node's memory arrives as
//!   `Bind`, release as the chunk's `Free` or a `Moved` gate), the requests
//!   served per region for the controller's migration planning, and each rack
//!   client's registered address space.
//! - A node whose fast path only answers senders (a board: it cannot
//!   originate a datagram) joins by being asked: the controller `Probe`s it
//!   (rack file `join = "probe"`), naming its node id and the epoch it holds
//!   for it, and [`RackAgent`] answers `NodeInfo` (boot epoch, the epoch it
//!   last learned, capacity, pressure: what a `Hello` and a `Heartbeat`
//!   carry). The controller registers it, keeps it alive and fences it from
//!   those answers; the caller keeps the agent's facts current
//!   ([`NodeSide::node_facts`]).
//! - [`Link`] is the node's registration with the controller: `Hello` with the
//!   boot epoch, the `Welcome`'s epoch, a `Heartbeat` every interval with the
//!   frame allocator's used/free bytes ([`pressure`]), `Usage` pages after each
//!   heartbeat, and back to `Hello` when the controller refuses a heartbeat
//!   (declared dead, fenced).
//!
//! Tables are fixed-capacity (`G` gates, `B` bound chunks, `S` client address
//! spaces): a full table refuses the request (`NoCapacity`, naming the field)
//! instead of allocating. The host's emulated nodes (`clio-rack`'s
//! `RackNode`/`NodeAgent`) and the firmware image both run this code; the
//! host keeps the sockets and threads, the image the rings.
//!
//! Why nothing is lost by tracking: a change marks its blocks in the same
//! step that executes it (the caller runs [`RackAgent::check`] and the
//! request under one lock), so a change acknowledged before the mover's
//! `Paused` gate either preceded the mover's last read of its block or is in
//! a record the mover takes afterwards.

use clio_control::auth::{self, FrameError, ReplayGuard};
use clio_control::{
    ChunkVa, Envelope, ErrorCode, Field, GateState, Message, NodeAddr, NodeId, Pressure, RegionUse,
    Space, DIRTY_BLOCK, MAGIC, MAX_CHUNK_LIST, MAX_ENVELOPE_LEN, MAX_USAGE,
};
use clio_wire::clio::{Header, Opcode, Status};
use clio_wire::ring::{Descriptor, GateMode};

/// The rack key and its boot parameter block, for the image's boot code.
pub use clio_control::auth::{KeyBlock, KeyBlockError, RackKey};

use crate::phys::PhysAlloc;

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

/// One board range bound to a chunk of a rack vRegion (`Bind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// Address space.
    pub pid: u32,
    /// First node VA.
    pub va: u64,
    /// The vRegion.
    pub region: u32,
    /// Chunk index within it.
    pub chunk: u16,
    /// Bytes.
    pub len: u64,
}

/// What the gate and the control path did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentStats {
    /// Requests answered `BUSY` because their range was paused.
    pub busy: u64,
    /// Requests answered `MOVED`.
    pub moved: u64,
    /// Changes that marked blocks of a `Tracking` gate dirty.
    pub tracked: u64,
    /// Control datagrams answered.
    pub control: u64,
    /// Control datagrams refused (malformed, not for a node, table full).
    pub refused: u64,
    /// Control datagrams refused because their MAC did not verify under the
    /// rack key (forged, another key, unsealed) — with a key set only.
    pub unauthenticated: u64,
    /// Authentic control datagrams refused as replays.
    pub replayed: u64,
}

/// The gate's verdict on one Clio request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let the board serve it.
    Serve,
    /// Answer it header-only with this status (`BUSY` or `MOVED`), as the fast
    /// path builds its refusals ([`refusal`]).
    Answer(Status),
}

/// Request opcodes whose `va` names memory the gate may hold back:
/// `Some(true)` changes memory, `Some(false)` reads. `Alloc` is left out (its
/// `va` is only a hint), `Fence`, `Info` and session opcodes carry none.
pub fn gated_opcode(op: Opcode) -> Option<bool> {
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

/// The header of a header-only answer with `status` to request `h` (`None`
/// for an opcode without a response), as the fast path builds its refusals.
pub fn refusal(h: &Header, status: Status) -> Option<Header> {
    let opcode = h.opcode.response()?;
    Some(Header {
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
    })
}

/// A node's physical memory pressure from its frame allocator.
pub fn pressure(phys: &PhysAlloc<'_>) -> Pressure {
    let free = phys.free_bytes();
    Pressure {
        used_bytes: phys.total_bytes().saturating_sub(free),
        free_bytes: free,
    }
}

/// The [`Field`] whose dotted name a decoding error carries.
pub fn field_named(name: &str) -> Option<Field> {
    Field::ALL.iter().copied().find(|f| f.name() == name)
}

/// The region gate and the node's rack tables: `G` gates, `B` bound chunks,
/// `S` rack clients' address spaces.
pub struct RackAgent<const G: usize, const B: usize, const S: usize> {
    gates: heapless::Vec<Gate, G>,
    /// Dirty records of `Tracking` gates (kept when one turns `Paused`):
    /// (pid, gate start, mask); bit i = block i changed since the last take.
    dirty: heapless::Vec<(u32, u64, u64), G>,
    /// Sorted by (pid, va).
    bindings: heapless::Vec<Binding, B>,
    /// Requests per region since the last usage report, sorted by region.
    hits: heapless::Vec<(u32, u64), B>,
    /// (pid, region) pairs migrated away from an address space, oldest first.
    exported: heapless::Vec<(u32, u32), B>,
    spaces: heapless::Vec<(u64, Space), S>,
    stats: AgentStats,
    /// The node id the controller's probes name (0: never probed).
    node: NodeId,
    /// The epoch the controller's last probe granted (0: none).
    epoch: u32,
    /// Bytes the node offers and its pressure, for `NodeInfo`.
    capacity: u64,
    pressure: Pressure,
    /// The rack key: with one, only sealed frames are served (`auth`).
    key: Option<RackKey>,
    /// The last counter accepted per sender.
    guard: ReplayGuard<REPLAY_SENDERS>,
    /// With a gate in the fast path: which of its entries holds which gate
    /// (`(pid, va, len)`; `None` free), empty when this agent gates itself.
    fp_slots: heapless::Vec<Option<(u32, u64, u64)>, G>,
    /// `GATE_SET` commands not yet on the TX ring, in order.
    fp_pending: heapless::Deque<Descriptor, G>,
}

/// The fast path's mode for a gate state.
pub fn gate_mode(state: GateState) -> GateMode {
    match state {
        GateState::Open => GateMode::Open,
        GateState::Paused => GateMode::Paused,
        GateState::Tracking => GateMode::Tracking,
        GateState::Moved => GateMode::Moved,
        GateState::Rejoin => GateMode::Rejoin,
    }
}

// The fast path's dirty blocks are the control protocol's.
const _: () = assert!(clio_wire::ring::GATE_BLOCK == DIRTY_BLOCK);

/// Senders whose counters a node remembers (controller, movers, clients);
/// a forgotten one's old frames stay refused ([`ReplayGuard`]).
pub const REPLAY_SENDERS: usize = 32;

impl<const G: usize, const B: usize, const S: usize> Default for RackAgent<G, B, S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const G: usize, const B: usize, const S: usize> core::fmt::Debug for RackAgent<G, B, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RackAgent")
            .field("gates", &self.gates)
            .field("bindings", &self.bindings.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<const G: usize, const B: usize, const S: usize> RackAgent<G, B, S> {
    /// Every gate open, nothing bound.
    pub const fn new() -> Self {
        RackAgent {
            gates: heapless::Vec::new(),
            dirty: heapless::Vec::new(),
            bindings: heapless::Vec::new(),
            hits: heapless::Vec::new(),
            exported: heapless::Vec::new(),
            spaces: heapless::Vec::new(),
            stats: AgentStats {
                busy: 0,
                moved: 0,
                tracked: 0,
                control: 0,
                refused: 0,
                unauthenticated: 0,
                replayed: 0,
            },
            key: None,
            guard: ReplayGuard::new(),
            fp_slots: heapless::Vec::new(),
            fp_pending: heapless::Deque::new(),
            node: 0,
            epoch: 0,
            capacity: 0,
            pressure: Pressure {
                used_bytes: 0,
                free_bytes: 0,
            },
        }
    }

    /// Sets what the node's `NodeInfo` answers report: the bytes it offers
    /// and its memory pressure (the caller refreshes them before a control
    /// datagram is answered).
    pub fn set_node_facts(&mut self, capacity: u64, pressure: Pressure) {
        self.capacity = capacity;
        self.pressure = pressure;
    }

    /// Sets the rack key: from now on every control datagram must be a
    /// sealed frame under it (`clio_control::auth`), each request's counter
    /// newer than its sender's last; answers are sealed with the request's
    /// seal. Without a key, bare envelopes are served (an unauthenticated rack).
    pub fn set_key(&mut self, key: RackKey) {
        self.key = Some(key);
    }

    /// Gates data requests in the fast path instead of in [`Self::check`]: a
    /// board, whose reads, writes and atomics never reach the slow path. Each
    /// gate then takes one of the fast path's `entries` gate entries (a gate
    /// that finds none free is refused `NoCapacity`), set and cleared by
    /// `GATE_SET` commands ([`Self::take_commands`]); its dirty record is the
    /// union of the fast path's `GATE_DIRTY` reports ([`Self::gate_dirty`]),
    /// and a take re-sets the entry, which clears the fast path's bitmap.
    /// [`Self::check`] then gates only `Free` (forwarded to the slow path) and
    /// counts the rest. Call it before any gate is set.
    pub fn use_fast_path_gate(&mut self, entries: u32) {
        self.fp_slots.clear();
        for _ in 0..entries.min(G as u32) {
            let _ = self.fp_slots.push(None);
        }
    }

    /// Whether the gate is in the fast path ([`Self::use_fast_path_gate`]).
    pub fn gates_in_fast_path(&self) -> bool {
        !self.fp_slots.is_empty()
    }

    /// Hands the `GATE_SET` commands due to the fast path to `push`, in
    /// order, until it returns `false` (no room: the rest stay queued);
    /// returns whether none is left. The engine pushes them on the TX ring
    /// before the answer of the control datagram that caused them, so a mover
    /// that gets `Ack` knows the fast path gates the range.
    pub fn take_commands(&mut self, push: &mut dyn FnMut(&Descriptor) -> bool) -> bool {
        while let Some(d) = self.fp_pending.front() {
            if !push(d) {
                return false;
            }
            self.fp_pending.pop_front();
        }
        true
    }

    /// A `GATE_DIRTY` report of the fast path: entry `entry` (`pid`, from
    /// `va`) had the blocks in `mask` dirtied; they join the gate's dirty
    /// record. A report for a gate no longer tracked is dropped.
    pub fn gate_dirty(&mut self, entry: u32, pid: u32, va: u64, mask: u64) {
        let ours = self
            .fp_slots
            .get(entry as usize)
            .copied()
            .flatten()
            .is_some_and(|(p, v, _)| p == pid && v == va);
        if !ours {
            return;
        }
        if let Some(d) = self.dirty.iter_mut().find(|d| d.0 == pid && d.1 == va) {
            d.2 |= mask;
            self.stats.tracked += 1;
        }
    }

    /// Queues the `GATE_SET` that puts `gate` into fast-path entry `slot`.
    fn fp_command(&mut self, slot: usize, gate: &Gate) {
        let d = Descriptor::GateSet {
            entry: slot as u32,
            pid: gate.pid,
            va: gate.va,
            len: gate.len,
            mode: gate_mode(gate.state),
        };
        // Room is checked before a gate changes (`fp_room`); the queue holds
        // as many commands as there are gates.
        let _ = self.fp_pending.push_back(d);
    }

    /// The fast-path entry of the gate over exactly `[va, va + len)` of `pid`.
    fn fp_slot_of(&self, pid: u32, va: u64, len: u64) -> Option<usize> {
        self.fp_slots
            .iter()
            .position(|s| *s == Some((pid, va, len)))
    }

    /// The node id and epoch the controller's probes granted (`(0, 0)`: none).
    pub fn rack_identity(&self) -> (NodeId, u32) {
        (self.node, self.epoch)
    }

    /// Current gates.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// Bound chunks, by (pid, va).
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// Counters.
    pub fn stats(&self) -> AgentStats {
        self.stats
    }

    /// Whether any gate or binding exists (no: every request is served
    /// untouched and nothing is counted).
    pub fn idle(&self) -> bool {
        self.gates.is_empty() && self.bindings.is_empty()
    }

    fn binding_index(&self, pid: u32, va: u64) -> Option<usize> {
        let i = self
            .bindings
            .partition_point(|b| (b.pid, b.va) <= (pid, va))
            .checked_sub(1)?;
        let b = &self.bindings[i];
        (b.pid == pid && va - b.va < b.len).then_some(i)
    }

    fn count_hit(&mut self, region: u32) {
        match self.hits.binary_search_by_key(&region, |&(r, _)| r) {
            Ok(i) => self.hits[i].1 = self.hits[i].1.saturating_add(1),
            // Cannot be full: every counted region has a binding, and there
            // are at most B of those; a failed insert only loses a count.
            Err(i) => {
                let _ = self.hits.insert(i, (region, 1));
            }
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
            if let Some(d) = self.dirty.iter_mut().find(|d| d.0 == pid && d.1 == g.va) {
                for b in first..=last.min(63) {
                    d.2 |= 1 << b;
                }
                self.stats.tracked += 1;
            }
        }
    }

    /// Reads and clears the dirty record of the gate of `pid` starting at
    /// `va` (`None`: no gate there tracks).
    pub fn take_dirty(&mut self, pid: u32, va: u64) -> Option<u64> {
        if self.gates_in_fast_path() && self.fp_pending.is_full() {
            // No room to re-set the entry: answer the record without clearing
            // it (the mover copies these blocks now and again next time; the
            // fast path's bitmap and this record stay a superset).
            return self
                .dirty
                .iter()
                .find(|d| d.0 == pid && d.1 == va)
                .map(|d| d.2);
        }
        let mask = self
            .dirty
            .iter_mut()
            .find(|d| d.0 == pid && d.1 == va)
            .map(|d| core::mem::take(&mut d.2))?;
        if self.gates_in_fast_path() {
            // Re-set the tracking entry: the fast path's bitmap starts empty,
            // so the next change to any block is reported again.
            let g = self
                .gates
                .iter()
                .find(|g| g.pid == pid && g.va == va && g.state == GateState::Tracking)
                .copied();
            if let Some(g) = g {
                if let Some(slot) = self.fp_slot_of(g.pid, g.va, g.len) {
                    self.fp_command(slot, &g);
                }
            }
        }
        Some(mask)
    }

    /// The gate's verdict on Clio request `h`, run in the same step as the
    /// request itself: counts the request for its region, forgets a bound
    /// chunk that is freed, and marks a tracked change dirty.
    pub fn check(&mut self, h: &Header) -> Verdict {
        let Some(writes) = gated_opcode(h.opcode) else {
            return Verdict::Serve;
        };
        self.count(h);
        if self.gates.is_empty() {
            return Verdict::Serve;
        }
        if self.gates_in_fast_path() && h.opcode != Opcode::Free {
            // The fast path gated it (and reports what it dirtied).
            return Verdict::Serve;
        }
        let hit = self
            .gates
            .iter()
            .find(|g| g.covers(h.pid, h.va))
            .map(|g| g.state);
        let status = match hit {
            // Freeing the old copy of a moved chunk (the mover does, after the
            // switch) is served: the memory returns, the gate stays.
            Some(GateState::Moved) if h.opcode == Opcode::Free => None,
            Some(GateState::Moved) => Some(Status::Moved),
            Some(GateState::Paused) if writes => Some(Status::Busy),
            // A new backup: the client must learn it before it changes memory
            // again (reads go on).
            Some(GateState::Rejoin) if writes => Some(Status::Moved),
            // A free would pull the chunk from under the copy; an offload may
            // change memory outside what the record sees.
            Some(GateState::Tracking) if matches!(h.opcode, Opcode::Free | Opcode::OffloadCall) => {
                Some(Status::Busy)
            }
            _ => None,
        };
        match status {
            Some(s) => {
                match s {
                    Status::Moved => self.stats.moved += 1,
                    _ => self.stats.busy += 1,
                }
                Verdict::Answer(s)
            }
            None => {
                if writes && hit == Some(GateState::Tracking) {
                    let len = u64::from(h.total_len).max(8);
                    self.mark_dirty(h.pid, h.va, h.va.saturating_add(len));
                }
                Verdict::Serve
            }
        }
    }

    /// Counts request `h` for the region whose bound chunk it lands in (the
    /// controller's migration planning), and forgets a bound chunk that
    /// `h` frees; [`Self::check`] does this too. A node whose gate is in the
    /// fast path calls it for requests the fast path served.
    pub fn count(&mut self, h: &Header) {
        if gated_opcode(h.opcode).is_none() {
            return;
        }
        if let Some(i) = self.binding_index(h.pid, h.va) {
            let b = self.bindings[i];
            self.count_hit(b.region);
            // A freed chunk is no longer the region's.
            if h.opcode == Opcode::Free && b.va == h.va {
                self.bindings.remove(i);
            }
        }
    }

    /// The board answered an allocation of `[va, va + size)` in `pid`: a
    /// `Moved` gate over reused VA no longer describes it and is dropped.
    pub fn allocated(&mut self, pid: u32, va: u64, size: u64) {
        let size = size.max(1);
        let stale = |g: &Gate| {
            g.pid == pid
                && g.state == GateState::Moved
                && va < g.va.saturating_add(g.len)
                && g.va < va.saturating_add(size)
        };
        if self.gates_in_fast_path() {
            for i in 0..self.gates.len() {
                let g = self.gates[i];
                if stale(&g) {
                    if let Some(slot) = self.fp_slot_of(g.pid, g.va, g.len) {
                        self.fp_slots[slot] = None;
                        self.fp_command(
                            slot,
                            &Gate {
                                state: GateState::Open,
                                ..g
                            },
                        );
                    }
                }
            }
        }
        self.gates.retain(|g| !stale(g));
    }

    /// Sets (or, with `Open`, removes) a gate; `false` if the gate table is
    /// full (nothing changed).
    pub fn set_gate(&mut self, gate: Gate) -> bool {
        let same = |g: &Gate| g.pid == gate.pid && g.va == gate.va && g.len == gate.len;
        let replaces = self.gates.iter().any(same);
        let tracks = self.dirty.iter().any(|d| d.0 == gate.pid && d.1 == gate.va);
        if gate.state != GateState::Open && !replaces && self.gates.is_full() {
            return false;
        }
        if gate.state == GateState::Tracking && !tracks && self.dirty.is_full() {
            return false;
        }
        if self.gates_in_fast_path() {
            let slot = self.fp_slot_of(gate.pid, gate.va, gate.len).or_else(|| {
                (gate.state != GateState::Open)
                    .then(|| self.fp_slots.iter().position(Option::is_none))
                    .flatten()
            });
            match slot {
                Some(slot) if !self.fp_pending.is_full() => {
                    self.fp_slots[slot] =
                        (gate.state != GateState::Open).then_some((gate.pid, gate.va, gate.len));
                    self.fp_command(slot, &gate);
                }
                // Clearing a gate the fast path does not hold: nothing to send.
                None if gate.state == GateState::Open => {}
                // The fast path's table (or the command queue) is full.
                _ => return false,
            }
        }
        self.gates.retain(|g| !same(g));
        if gate.state == GateState::Moved {
            // The region left this address space: its bindings go, and a late
            // chunk of it is refused (the client learns the new owner).
            if !self.exported.contains(&(gate.pid, gate.region)) {
                if self.exported.is_full() {
                    // Forget the oldest mark: its client long since learned
                    // the move (a late chunk then lands here unrefused).
                    self.exported.remove(0);
                }
                let _ = self.exported.push((gate.pid, gate.region));
            }
            self.bindings
                .retain(|b| !(b.pid == gate.pid && b.region == gate.region));
        }
        match gate.state {
            GateState::Tracking => {
                if !tracks {
                    let _ = self.dirty.push((gate.pid, gate.va, 0));
                }
            }
            // The mover's last round reads what the tracking recorded.
            GateState::Paused => {}
            GateState::Open | GateState::Moved | GateState::Rejoin => {
                self.dirty.retain(|d| !(d.0 == gate.pid && d.1 == gate.va));
            }
        }
        if gate.state != GateState::Open {
            // Room was checked above.
            let _ = self.gates.push(gate);
        }
        true
    }

    /// Per-region use since the previous call, for every region the node
    /// holds chunks of (ascending), handed to `f` one at a time; resets the
    /// counts.
    pub fn take_usage(&mut self, mut f: impl FnMut(RegionUse)) {
        let mut after: Option<u32> = None;
        loop {
            let next = self
                .bindings
                .iter()
                .map(|b| b.region)
                .filter(|&r| after.is_none_or(|a| r > a))
                .min();
            let Some(region) = next else { break };
            let chunks = self.bindings.iter().filter(|b| b.region == region).count();
            let hits = self
                .hits
                .binary_search_by_key(&region, |&(r, _)| r)
                .map_or(0, |i| self.hits[i].1);
            f(RegionUse {
                region,
                chunks: u16::try_from(chunks).unwrap_or(u16::MAX),
                hits,
            });
            after = Some(region);
        }
        self.hits.clear();
    }

    /// Answers one control message (`boot_epoch`: the board's, for `Ack`s);
    /// anything a node does not serve is refused `NotARequest`.
    pub fn control(&mut self, m: &Message, boot_epoch: u32) -> Message {
        let reply = self.answer(m, boot_epoch);
        match reply {
            Message::Refused {
                code: ErrorCode::NotARequest | ErrorCode::NoCapacity,
                ..
            } => self.stats.refused += 1,
            _ => self.stats.control += 1,
        }
        reply
    }

    fn answer(&mut self, m: &Message, boot_epoch: u32) -> Message {
        let refuse = |code, field| Message::Refused { code, field };
        let ack = Message::Ack { epoch: boot_epoch };
        match *m {
            Message::Gate {
                region,
                pid,
                va,
                len,
                state,
            } => {
                if self.set_gate(Gate {
                    region,
                    pid,
                    va,
                    len,
                    state,
                }) {
                    ack
                } else {
                    refuse(ErrorCode::NoCapacity, Field::GateRegion)
                }
            }
            Message::TakeDirty { pid, va, .. } => match self.take_dirty(pid, va) {
                Some(mask) => Message::Dirty { mask },
                None => refuse(ErrorCode::NotAssigned, Field::TakeDirtyVa),
            },
            Message::Bind {
                region,
                chunk,
                pid,
                va,
                len,
                import,
            } => {
                if import {
                    self.exported.retain(|&e| e != (pid, region));
                } else if self.exported.contains(&(pid, region)) {
                    return refuse(ErrorCode::NotOwner, Field::BindRegion);
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
                    return refuse(ErrorCode::Busy, Field::BindRegion);
                }
                let b = Binding {
                    pid,
                    va,
                    region,
                    chunk,
                    len,
                };
                match self
                    .bindings
                    .binary_search_by_key(&(pid, va), |b| (b.pid, b.va))
                {
                    Ok(i) => self.bindings[i] = b,
                    Err(i) => {
                        if self.bindings.insert(i, b).is_err() {
                            return refuse(ErrorCode::NoCapacity, Field::BindRegion);
                        }
                    }
                }
                ack
            }
            Message::Register { client, space } => {
                // First registration wins; a live session of the same address
                // space may replace the token (its first session may close).
                let winner = match self.spaces.iter_mut().find(|(c, _)| *c == client) {
                    Some((_, s)) => {
                        if s.pid == space.pid {
                            *s = space;
                        }
                        *s
                    }
                    None => {
                        if self.spaces.push((client, space)).is_err() {
                            return refuse(ErrorCode::NoCapacity, Field::Message);
                        }
                        space
                    }
                };
                Message::SpaceOf {
                    client,
                    space: Some(winner),
                }
            }
            Message::FindSpace { client } => Message::SpaceOf {
                client,
                space: self
                    .spaces
                    .iter()
                    .find(|(c, _)| *c == client)
                    .map(|(_, s)| *s),
            },
            Message::Chunks { region, from } => self.chunk_list(region, from),
            Message::Probe { node, epoch } => {
                // The controller names the node (by the address it probed)
                // and, once registered, its epoch; 0 keeps what was learned,
                // so a node back from the dead answers its old, fenced epoch
                // and the controller registers it anew.
                self.node = node;
                if epoch != 0 {
                    self.epoch = epoch;
                }
                Message::NodeInfo {
                    node,
                    boot_epoch,
                    epoch: self.epoch,
                    capacity: self.capacity,
                    pressure: self.pressure,
                }
            }
            _ => refuse(ErrorCode::NotARequest, Field::Message),
        }
    }

    /// One page of `region`'s chunks from chunk `from` on, in the address
    /// space holding its lowest chunk.
    fn chunk_list(&self, region: u32, from: u16) -> Message {
        let Some(pid) = self
            .bindings
            .iter()
            .filter(|b| b.region == region)
            .min_by_key(|b| b.chunk)
            .map(|b| b.pid)
        else {
            return Message::NotAssigned { region };
        };
        let client = self
            .spaces
            .iter()
            .find(|(_, s)| s.pid == pid)
            .map_or(0, |(c, _)| *c);
        let mut chunks = heapless::Vec::new();
        let mut next = None;
        let mut after: Option<u16> = None;
        loop {
            let c = self
                .bindings
                .iter()
                .filter(|b| b.region == region && b.pid == pid && b.chunk >= from)
                .filter(|b| after.is_none_or(|a| b.chunk > a))
                .min_by_key(|b| b.chunk);
            let Some(b) = c else { break };
            if chunks.len() == MAX_CHUNK_LIST {
                next = Some(b.chunk);
                break;
            }
            let _ = chunks.push(ChunkVa {
                chunk: b.chunk,
                va: b.va,
            });
            after = Some(b.chunk);
        }
        Message::ChunkList {
            region,
            client,
            pid,
            chunks,
            next,
        }
    }

    /// One control datagram (starting with [`MAGIC`]) in, its answer encoded
    /// into `out`: the whole node-side control path of a board. A datagram
    /// that does not decode is refused `Malformed` naming the field, if its
    /// request id can be read; otherwise it is dropped (`None`).
    pub fn datagram<'o>(
        &mut self,
        pkt: &[u8],
        boot_epoch: u32,
        out: &'o mut [u8; MAX_ENVELOPE_LEN],
    ) -> Option<&'o [u8]> {
        if let Some(key) = self.key {
            return self.sealed_datagram(&key, pkt, boot_epoch, out);
        }
        let (id, reply) = match Envelope::decode(pkt) {
            Ok(env) => (env.request_id, self.control(&env.message, boot_epoch)),
            Err(e) => {
                self.stats.refused += 1;
                let id = Envelope::peek_request_id(pkt)?;
                let field = field_named(e.field).unwrap_or(Field::Message);
                (
                    id,
                    Message::Refused {
                        code: ErrorCode::Malformed,
                        field,
                    },
                )
            }
        };
        Envelope::new(id, reply).encode(out).ok().map(|b| &*b)
    }

    /// [`Self::datagram`] with a rack key: the frame's MAC is checked, then its
    /// counter (a request's), then the envelope; a refusal (`Unauthenticated`
    /// naming `frame.tag`, `Replayed` naming `frame.counter`, `Malformed`
    /// naming the field, e.g. `envelope.version`) is counted and answered
    /// sealed with the seal the frame claims.
    fn sealed_datagram<'o>(
        &mut self,
        key: &RackKey,
        pkt: &[u8],
        boot_epoch: u32,
        out: &'o mut [u8; MAX_ENVELOPE_LEN],
    ) -> Option<&'o [u8]> {
        let opened = auth::open(pkt, key).and_then(|(env, seal)| {
            if env.message.is_request() {
                self.guard.check(seal)?;
            }
            Ok((env, seal))
        });
        match opened {
            Ok((env, seal)) => {
                let reply = self.control(&env.message, boot_epoch);
                auth::seal(&Envelope::new(env.request_id, reply), key, seal, out).ok()
            }
            Err(e) => {
                match e {
                    FrameError::Unauthenticated => self.stats.unauthenticated += 1,
                    FrameError::Replayed => self.stats.replayed += 1,
                    FrameError::Malformed(_) => self.stats.refused += 1,
                }
                auth::refusal(pkt, &e, key, out)
            }
        }
    }

    /// Whether `pkt` is a control datagram (its magic) rather than a Clio request.
    pub fn is_control(pkt: &[u8]) -> bool {
        pkt.starts_with(&MAGIC)
    }
}

/// What the ring dispatcher ([`crate::Engine::poll_with`]) asks of the
/// node's rack side: answers to control datagrams that came over the RX
/// ring, and the gate's verdict on requests forwarded to the slow path
/// (`Free`).
pub trait NodeSide {
    /// Answers control datagram `pkt` into `out`; `None`: dropped.
    fn control_datagram(
        &mut self,
        pkt: &[u8],
        boot_epoch: u32,
        out: &mut [u8; MAX_ENVELOPE_LEN],
    ) -> Option<usize>;
    /// The gate's verdict on forwarded request `h`: `Some(status)` refuses it.
    fn gate_forwarded(&mut self, h: &Header) -> Option<Status>;
    /// The node's capacity and pressure for its next `NodeInfo` (called
    /// before each control datagram is answered).
    fn node_facts(&mut self, _capacity: u64, _pressure: Pressure) {}
    /// Whether there is a rack side at all (without one the dispatcher
    /// keeps no TX room for control answers).
    fn present(&self) -> bool {
        true
    }
    /// Hands the fast-path commands (`GATE_SET`) due to `push` in order until
    /// it returns `false`; returns whether none is left.
    fn commands(&mut self, _push: &mut dyn FnMut(&Descriptor) -> bool) -> bool {
        true
    }
    /// A `GATE_DIRTY` report from the fast path.
    fn gate_dirty(&mut self, _entry: u32, _pid: u32, _va: u64, _mask: u64) {}
}

/// No rack side: control datagrams are dropped, nothing is gated.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRack;

impl NodeSide for NoRack {
    fn control_datagram(
        &mut self,
        _: &[u8],
        _: u32,
        _: &mut [u8; MAX_ENVELOPE_LEN],
    ) -> Option<usize> {
        None
    }
    fn gate_forwarded(&mut self, _: &Header) -> Option<Status> {
        None
    }
    fn present(&self) -> bool {
        false
    }
}

impl<const G: usize, const B: usize, const S: usize> NodeSide for RackAgent<G, B, S> {
    fn control_datagram(
        &mut self,
        pkt: &[u8],
        boot_epoch: u32,
        out: &mut [u8; MAX_ENVELOPE_LEN],
    ) -> Option<usize> {
        self.datagram(pkt, boot_epoch, out).map(<[u8]>::len)
    }
    fn gate_forwarded(&mut self, h: &Header) -> Option<Status> {
        match self.check(h) {
            Verdict::Serve => None,
            Verdict::Answer(s) => Some(s),
        }
    }
    fn node_facts(&mut self, capacity: u64, pressure: Pressure) {
        self.set_node_facts(capacity, pressure);
    }
    fn commands(&mut self, push: &mut dyn FnMut(&Descriptor) -> bool) -> bool {
        self.take_commands(push)
    }
    fn gate_dirty(&mut self, entry: u32, pid: u32, va: u64, mask: u64) {
        RackAgent::gate_dirty(self, entry, pid, va, mask);
    }
}

/// Gates the firmware image holds (a migration gates one per 4 MiB chunk).
pub const FW_GATES: usize = 256;
/// Chunks the firmware can bind (4 MiB each: 2 GiB, the ZCU106's DRAM).
pub const FW_BINDINGS: usize = 512;
/// Rack clients' address spaces the firmware registers.
pub const FW_SPACES: usize = 32;
/// The node state machine as the firmware image sizes it.
pub type FirmwareAgent = RackAgent<FW_GATES, FW_BINDINGS, FW_SPACES>;

/// Where a node's registration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Not registered: the next message is a `Hello`.
    Unregistered,
    /// Registered with this epoch; heartbeats carry it.
    Registered {
        /// The controller's epoch for this incarnation.
        epoch: u32,
    },
}

/// A controller answer the link did not accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkError {
    /// The controller refused (the hello: a configuration mistake; a
    /// heartbeat: declared dead or fenced, the link is back to
    /// `Unregistered`).
    Refused {
        /// Why.
        code: ErrorCode,
        /// Which field.
        field: Field,
    },
    /// An answer of the wrong kind (or a `Welcome` for another node).
    Unexpected,
}

/// The node's registration with the controller and its heartbeat schedule
/// (milliseconds on the caller's clock).
#[derive(Debug, Clone, Copy)]
pub struct Link {
    node: NodeId,
    addr: NodeAddr,
    capacity: u64,
    boot_epoch: u32,
    interval_ms: u64,
    next_beat_ms: u64,
    state: LinkState,
}

impl Link {
    /// Node `node` serving at `addr` with `capacity` bytes, in the boot with
    /// `boot_epoch`, heartbeating every `interval_ms`.
    pub const fn new(
        node: NodeId,
        addr: NodeAddr,
        capacity: u64,
        boot_epoch: u32,
        interval_ms: u64,
    ) -> Link {
        Link {
            node,
            addr,
            capacity,
            boot_epoch,
            interval_ms,
            next_beat_ms: 0,
            state: LinkState::Unregistered,
        }
    }

    /// Where the registration stands.
    pub fn state(&self) -> LinkState {
        self.state
    }

    /// The node id.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The current epoch, if registered.
    pub fn epoch(&self) -> Option<u32> {
        match self.state {
            LinkState::Registered { epoch } => Some(epoch),
            LinkState::Unregistered => None,
        }
    }

    /// The `Hello` to send.
    pub fn hello(&self) -> Message {
        Message::Hello {
            node: self.node,
            addr: self.addr,
            capacity: self.capacity,
            boot_epoch: self.boot_epoch,
        }
    }

    /// The controller's answer to the hello, at `now_ms`: the epoch; the
    /// first heartbeat is due at once (a fresh registration reports its
    /// pressure right away).
    pub fn welcomed(&mut self, now_ms: u64, reply: &Message) -> Result<u32, LinkError> {
        match *reply {
            Message::Welcome { node, epoch } if node == self.node => {
                self.state = LinkState::Registered { epoch };
                self.next_beat_ms = now_ms;
                Ok(epoch)
            }
            Message::Refused { code, field } => Err(LinkError::Refused { code, field }),
            _ => Err(LinkError::Unexpected),
        }
    }

    /// Whether a heartbeat is due at `now_ms`.
    pub fn due(&self, now_ms: u64) -> bool {
        matches!(self.state, LinkState::Registered { .. }) && now_ms >= self.next_beat_ms
    }

    /// The heartbeat due at `now_ms` (with `pressure`), if one is; the next
    /// is then due one interval later.
    pub fn heartbeat(&mut self, now_ms: u64, pressure: Pressure) -> Option<Message> {
        let LinkState::Registered { epoch } = self.state else {
            return None;
        };
        if now_ms < self.next_beat_ms {
            return None;
        }
        self.next_beat_ms = now_ms.saturating_add(self.interval_ms);
        Some(Message::Heartbeat {
            node: self.node,
            epoch,
            pressure,
        })
    }

    /// The controller's answer to a heartbeat. A refusal (declared dead,
    /// fenced) ends the registration: the node must say hello again.
    pub fn beat_answered(&mut self, reply: &Message) -> Result<(), LinkError> {
        match *reply {
            Message::Ack { .. } => Ok(()),
            Message::Refused { code, field } => {
                self.state = LinkState::Unregistered;
                Err(LinkError::Refused { code, field })
            }
            _ => Err(LinkError::Unexpected),
        }
    }

    /// The usage report after a heartbeat, in pages of [`MAX_USAGE`] regions
    /// (each page handed to `send`); nothing when unregistered.
    pub fn usage<const G: usize, const B: usize, const S: usize>(
        &self,
        agent: &mut RackAgent<G, B, S>,
        mut send: impl FnMut(Message),
    ) {
        let LinkState::Registered { epoch } = self.state else {
            return;
        };
        let mut page: heapless::Vec<RegionUse, MAX_USAGE> = heapless::Vec::new();
        let node = self.node;
        agent.take_usage(|u| {
            if page.is_full() {
                send(Message::Usage {
                    node,
                    epoch,
                    regions: core::mem::take(&mut page),
                });
            }
            let _ = page.push(u);
        });
        if !page.is_empty() {
            send(Message::Usage {
                node,
                epoch,
                regions: page,
            });
        }
    }
}
