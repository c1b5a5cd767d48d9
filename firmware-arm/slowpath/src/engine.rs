//! The ring dispatcher: the poll loop over the RX ring, the hand-off of
//! requests to workers, and the TX side.
//!
//! Ring I/O is [`clio_wire::ring`]'s [`Consumer`]/[`Producer`]; this module
//! decides what to do with each descriptor.
//!
//! Threading model. The slow-path state ([`SlowPath`]) has one owner at a
//! time. One core runs [`Engine::poll`]: it finishes emitting the current
//! request, scrubs fenced pages, tops up the free-PA FIFOs, and drains the RX
//! ring; PA-consumed notices and error reports are handled inline (they are
//! O(1) and keep the FIFOs full), while alloc/free and session open/close
//! requests go into
//! per-worker SPSC queues chosen by PID, so one process's requests stay in
//! order. [`Engine::run_worker`] takes one request from a worker's queue and
//! runs it. On the board the worker cores call it under the spin lock that
//! guards the `Engine` (the VA search and retries are the long part, and the
//! poll core keeps serving notices between requests); here [`Engine::step`]
//! is the deterministic single-thread driver that runs the poll and then each
//! worker in turn.
//!
//! Malformed RX slots are consumed and counted by the ring consumer (its
//! header's `rejected` field) and here in [`EngineCounters::malformed`]; one
//! whose CRC fails cannot be answered (its tag is untrustworthy), so the
//! client's request-level retry covers it. A request that parses but is
//! invalid (bad permissions, zero size, unknown PID, ...) gets an error reply.

use crate::machine::{SlowPath, TxSink};
use crate::offload::{NoOffloads, OffloadSide};
use crate::rack::{NoRack, NodeSide};
use clio_control::MAX_ENVELOPE_LEN;
use clio_wire::clio::{Header, Opcode};
use clio_wire::ring::{
    control_fragments, Consumer, ControlAssembler, Descriptor, Direction, Producer, PushError,
    RingMemory, MAX_CONTROL_FRAGMENTS,
};
use heapless::spsc::Queue;

/// PA-consumed notices handled together (one FIFO's depth on the prototype).
pub const NOTICE_BATCH: usize = 32;

/// TX sink over a ring [`Producer`].
pub struct RingSink<'p, 'm, M: RingMemory + ?Sized> {
    /// The producer side of the TX ring.
    pub producer: &'p mut Producer,
    /// The TX ring's memory.
    pub mem: &'m mut M,
    /// Descriptors that could not be encoded (never expected; counted, dropped).
    pub invalid: u64,
}

impl<M: RingMemory + ?Sized> TxSink for RingSink<'_, '_, M> {
    fn push(&mut self, d: &Descriptor) -> bool {
        match self.producer.push(self.mem, d) {
            Ok(()) => true,
            Err(PushError::Full) => false,
            Err(PushError::Invalid(_)) => {
                self.invalid += 1;
                true
            }
        }
    }
}

/// Dispatcher counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineCounters {
    /// Poll rounds.
    pub polls: u64,
    /// RX descriptors parsed.
    pub rx: u64,
    /// RX slots rejected as malformed.
    pub malformed: u64,
    /// Requests handed to workers.
    pub dispatched: u64,
    /// Requests run by workers.
    pub worked: u64,
    /// Notices handled inline by the poll core.
    pub inline: u64,
    /// Poll rounds that stopped reading RX because a worker queue was full.
    pub queue_full: u64,
    /// Times emission stopped on a full TX ring.
    pub tx_full: u64,
    /// TX descriptors that could not be encoded.
    pub tx_invalid: u64,
    /// Pages zeroed and released.
    pub scrubbed: u64,
    /// Rack control datagrams answered (`CONTROL_REQ` in, `CONTROL_REPLY` out).
    pub control: u64,
    /// Control datagrams dropped (a fragment missing, undecodable without a
    /// request id, or no rack side).
    pub control_dropped: u64,
    /// Forwarded requests the rack gate refused (`BUSY`/`MOVED` replies).
    pub gated: u64,
    /// Offload calls answered (`OFFLOAD_REQ` in, `OFFLOAD_REPLY` out).
    pub offload_calls: u64,
    /// `OFFLOAD_REQ` fragments taken on a board without offloads.
    pub offload_dropped: u64,
}

/// What one poll round did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PollOutcome {
    /// RX slots taken (parsed or rejected).
    pub rx_taken: u32,
    /// Free PAs pushed.
    pub refilled: u32,
    /// The last malformed slot's error, if any this round.
    pub last_error: Option<clio_wire::Error>,
}

/// The dispatcher: the slow path, the two rings' ends, and `W` worker
/// queues of `Q - 1` requests each.
pub struct Engine<'a, const W: usize, const Q: usize> {
    core: SlowPath<'a>,
    rx: Consumer,
    tx: Producer,
    queues: [Queue<Descriptor, Q>; W],
    counters: EngineCounters,
    control: ControlAssembler,
}

impl<'a, const W: usize, const Q: usize> Engine<'a, W, Q> {
    /// Attach to initialised RX and TX rings.
    pub fn new<R: RingMemory + ?Sized, T: RingMemory + ?Sized>(
        core: SlowPath<'a>,
        rx_mem: &R,
        tx_mem: &T,
    ) -> Result<Self, clio_wire::Error> {
        Ok(Engine {
            core,
            rx: Consumer::attach(rx_mem, Direction::Rx)?,
            tx: Producer::attach(tx_mem, Direction::Tx)?,
            queues: core::array::from_fn(|_| Queue::new()),
            counters: EngineCounters::default(),
            control: ControlAssembler::new(),
        })
    }

    /// The slow-path state.
    pub fn core(&self) -> &SlowPath<'a> {
        &self.core
    }

    /// The slow-path state, mutably: for board-local set-up between poll
    /// rounds, e.g. [`SlowPath::reserve_pid`] for a test or an offload that
    /// allocates without a session.
    pub fn core_mut(&mut self) -> &mut SlowPath<'a> {
        &mut self.core
    }

    /// Counters.
    pub fn counters(&self) -> &EngineCounters {
        &self.counters
    }

    /// Requests waiting in worker `w`'s queue.
    pub fn queued(&self, w: usize) -> usize {
        self.queues.get(w).map_or(0, |q| q.len())
    }

    fn sink<'p, 'm, T: RingMemory + ?Sized>(
        tx: &'p mut Producer,
        mem: &'m mut T,
    ) -> RingSink<'p, 'm, T> {
        RingSink {
            producer: tx,
            mem,
            invalid: 0,
        }
    }

    fn emit_pending<T: RingMemory + ?Sized>(&mut self, tx_mem: &mut T) -> bool {
        let mut s = Self::sink(&mut self.tx, tx_mem);
        let done = self.core.pump(&mut s);
        self.counters.tx_invalid += s.invalid;
        self.counters.tx_full += !done as u64;
        done
    }

    /// One round of the poll core: finish emission, scrub pages whose fence
    /// the fast path has passed (`zero(pa, bytes)` clears board DRAM), refill
    /// the FIFOs, and take up to `budget` RX slots.
    pub fn poll<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        self.poll_with(rx_mem, tx_mem, budget, zero, &mut NoRack)
    }

    /// [`Engine::poll`] on a memory node of a rack: `CONTROL_REQ` fragments
    /// are reassembled and the datagram answered by `node` (its
    /// `CONTROL_REPLY` fragments go out at once), and a forwarded `Free` the
    /// node's gate holds back is answered with the gate's status instead of
    /// being queued. With a rack side, RX is read only while the TX ring has
    /// room for a whole control answer, so an answer is never half-pushed.
    pub fn poll_with<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
        node: &mut dyn NodeSide,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        self.poll_full(rx_mem, tx_mem, budget, zero, node, &mut NoOffloads)
    }

    /// [`Engine::poll_with`] on a board whose slow path serves offloads:
    /// `OFFLOAD_REQ` fragments are reassembled and the call served by
    /// `offloads` (its `OFFLOAD_REPLY` fragments go out at once). With
    /// offloads, RX is read only while the TX ring has room for a whole
    /// answer.
    pub fn poll_full<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
        node: &mut dyn NodeSide,
        offloads: &mut dyn OffloadSide,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        self.counters.polls += 1;
        let mut out = PollOutcome::default();
        self.emit_pending(tx_mem);
        // Everything emitted minus what still sits in the ring has been
        // taken by the fast path.
        let in_ring = self.tx.slot_count() - self.tx.free_slots(tx_mem);
        let consumed = self.core.emitted().saturating_sub(in_ring as u64);
        self.counters.scrubbed += self.core.scrub(consumed, zero);
        out.refilled += self.core.refill(&mut Self::sink(&mut self.tx, tx_mem));
        let mut notices: heapless::Vec<Descriptor, NOTICE_BATCH> = heapless::Vec::new();
        // Gate commands first: requests after them see the gate they set.
        let mut flushed = self.node_commands(node, tx_mem);
        while out.rx_taken < budget {
            if !flushed {
                flushed = self.node_commands(node, tx_mem);
                if !flushed {
                    self.counters.tx_full += 1;
                    break;
                }
            }
            if self.queues.iter().any(|q| q.is_full()) {
                self.counters.queue_full += 1;
                break;
            }
            // A control answer may follow one gate command.
            if node.present() && self.tx.free_slots(tx_mem) < u32::from(MAX_CONTROL_FRAGMENTS) + 1 {
                self.counters.tx_full += 1;
                break;
            }
            if offloads.present() && self.tx.free_slots(tx_mem) < offloads.reply_room() {
                self.counters.tx_full += 1;
                break;
            }
            let Some(r) = self.rx.pop(rx_mem) else { break };
            out.rx_taken += 1;
            match r {
                Err(e) => {
                    self.counters.malformed += 1;
                    out.last_error = Some(e);
                    // A corrupt producer index is not consumed by pop; stop
                    // here rather than spin on it for the rest of the budget.
                    if e.field == "ring.head" {
                        break;
                    }
                }
                Ok(d) => {
                    self.counters.rx += 1;
                    match d {
                        Descriptor::FreeReq {
                            tag,
                            pid,
                            req_id,
                            va,
                            ..
                        } if self.gated(tag, pid, req_id, va, node, tx_mem) => {
                            self.counters.gated += 1;
                        }
                        Descriptor::Control { .. } => {
                            self.control_datagram(&d, node, tx_mem);
                            self.counters.inline += 1;
                        }
                        Descriptor::GateDirty {
                            entry,
                            pid,
                            va,
                            mask,
                        } => {
                            node.gate_dirty(entry, pid, va, mask);
                            self.counters.inline += 1;
                        }
                        Descriptor::Offload { .. } => {
                            // The call may read pages whose first touch came
                            // before it in this batch: map them first, or it
                            // would find them unbacked and back them again.
                            self.apply_notices(&mut notices);
                            if offloads.present() {
                                let mut sink = Self::sink(&mut self.tx, tx_mem);
                                if offloads.fragment(&d, &mut self.core, &mut sink) {
                                    self.counters.offload_calls += 1;
                                }
                                self.counters.tx_invalid += sink.invalid;
                            } else {
                                self.counters.offload_dropped += 1;
                            }
                            self.counters.inline += 1;
                        }
                        // Session opens and closes go the same way as alloc and
                        // free, so a close runs after the PID's earlier requests
                        // (a new address space, PID 0, goes to worker 0).
                        Descriptor::AllocReq { pid, .. }
                        | Descriptor::FreeReq { pid, .. }
                        | Descriptor::SessionOpenReq { pid, .. }
                        | Descriptor::SessionCloseReq { pid, .. } => {
                            let w = pid as usize % W.max(1);
                            // Cannot fail: fullness was checked above.
                            let _ = self.queues[w].enqueue(d);
                            self.counters.dispatched += 1;
                        }
                        Descriptor::PaConsumed { .. } => {
                            // Batched so the shadow-slot cache misses overlap.
                            if notices.push(d).is_err() {
                                self.apply_notices(&mut notices);
                                let _ = notices.push(d);
                            }
                            self.counters.inline += 1;
                        }
                        other => {
                            self.apply_notices(&mut notices);
                            let mut s = Self::sink(&mut self.tx, tx_mem);
                            // Errors are counted in the slow path's stats.
                            let _ = self.core.handle(&other, &mut s);
                            self.counters.inline += 1;
                        }
                    }
                }
            }
        }
        self.apply_notices(&mut notices);
        out.refilled += self.core.refill(&mut Self::sink(&mut self.tx, tx_mem));
        out
    }

    /// Maps the batched first touches into the shadow table.
    fn apply_notices(&mut self, notices: &mut heapless::Vec<Descriptor, NOTICE_BATCH>) {
        if !notices.is_empty() {
            self.core.pa_consumed_batch(notices);
            notices.clear();
        }
    }

    /// Pushes `node`'s queued fast-path commands; whether none is left.
    fn node_commands<T: RingMemory + ?Sized>(
        &mut self,
        node: &mut dyn NodeSide,
        tx_mem: &mut T,
    ) -> bool {
        let mut s = Self::sink(&mut self.tx, tx_mem);
        let done = node.commands(&mut |d| s.push(d));
        self.counters.tx_invalid += s.invalid;
        done
    }

    /// Whether `node`'s gate refuses the forwarded free; if so its reply
    /// (the gate's status) is pushed.
    fn gated<T: RingMemory + ?Sized>(
        &mut self,
        tag: u32,
        pid: u32,
        req_id: u32,
        va: u64,
        node: &mut dyn NodeSide,
        tx_mem: &mut T,
    ) -> bool {
        let h = Header::request(Opcode::Free, pid, req_id, va, 0);
        let Some(status) = node.gate_forwarded(&h) else {
            return false;
        };
        let reply = Descriptor::Reply {
            tag,
            pid,
            req_id,
            status: status.raw(),
            va,
            size: 0,
            retries: 0,
            moved: false,
        };
        // Room was checked before the slot was taken.
        let mut s = Self::sink(&mut self.tx, tx_mem);
        let _ = s.push(&reply);
        self.counters.tx_invalid += s.invalid;
        true
    }

    /// One `CONTROL_REQ` fragment; a completed datagram is answered by
    /// `node` and its answer pushed as `CONTROL_REPLY` fragments.
    fn control_datagram<T: RingMemory + ?Sized>(
        &mut self,
        d: &Descriptor,
        node: &mut dyn NodeSide,
        tx_mem: &mut T,
    ) {
        let dropped = self.control.dropped();
        let done = self.control.push(d);
        let mut answered = false;
        if let Some((tag, seq, pkt)) = done {
            let mut buf = [0u8; MAX_ENVELOPE_LEN];
            // A probe's answer reports the node's VA capacity and pressure.
            let capacity = 1u64
                .checked_shl(self.core.config().va_bits)
                .unwrap_or(u64::MAX);
            node.node_facts(capacity, crate::rack::pressure(self.core.phys()));
            if let Some(n) = node.control_datagram(pkt, self.core.epoch(), &mut buf) {
                // The gate command it caused goes first (room was checked).
                self.node_commands(node, tx_mem);
                if let Some(frags) = control_fragments(tag, seq, &buf[..n], Direction::Tx) {
                    // Room for a whole answer was checked before the slot was taken.
                    let mut s = Self::sink(&mut self.tx, tx_mem);
                    for f in frags {
                        let _ = s.push(&f);
                    }
                    self.counters.tx_invalid += s.invalid;
                    self.counters.control += 1;
                    answered = true;
                }
            }
            if !answered {
                self.counters.control_dropped += 1;
            }
        }
        self.counters.control_dropped += self.control.dropped() - dropped;
    }

    /// Run one queued request of worker `w` if the previous request's
    /// commands are all emitted; returns whether one ran.
    pub fn run_worker<T: RingMemory + ?Sized>(&mut self, w: usize, tx_mem: &mut T) -> bool {
        if !self.emit_pending(tx_mem) || w >= W {
            return false;
        }
        let Some(d) = self.queues[w].dequeue() else {
            return false;
        };
        let mut s = Self::sink(&mut self.tx, tx_mem);
        // The request's outcome travels in its reply; refusals are counted.
        let _ = self.core.handle(&d, &mut s);
        self.counters.tx_invalid += s.invalid;
        self.counters.worked += 1;
        true
    }

    /// [`Engine::step`] on a memory node of a rack (see [`Engine::poll_with`]).
    pub fn step_with<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
        node: &mut dyn NodeSide,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        self.step_full(rx_mem, tx_mem, budget, zero, node, &mut NoOffloads)
    }

    /// [`Engine::step_with`] on a board whose slow path serves offloads
    /// (see [`Engine::poll_full`]).
    pub fn step_full<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
        node: &mut dyn NodeSide,
        offloads: &mut dyn OffloadSide,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        let mut out = self.poll_full(rx_mem, tx_mem, budget, zero, node, offloads);
        for w in 0..W {
            self.run_worker(w, tx_mem);
        }
        out.refilled += self.core.refill(&mut Self::sink(&mut self.tx, tx_mem));
        out
    }

    /// Deterministic single-thread driver: one poll round, then each worker
    /// once, then a refill for whatever the requests allocated.
    pub fn step<R, T, Z>(
        &mut self,
        rx_mem: &mut R,
        tx_mem: &mut T,
        budget: u32,
        zero: Z,
    ) -> PollOutcome
    where
        R: RingMemory + ?Sized,
        T: RingMemory + ?Sized,
        Z: FnMut(u64, u64),
    {
        self.step_with(rx_mem, tx_mem, budget, zero, &mut NoRack)
    }
}
