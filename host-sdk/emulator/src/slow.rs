//! The slow path in process: the `clio-slowpath` engine (the code the
//! firmware links, with its worker queues standing in for cores 1-3) driven
//! over the RX and TX rings in emulated board DRAM. Every in-process board
//! uses this one driver: the model board ([`crate::Board`]), the RTL board
//! ([`crate::rtl::RtlBoard`]) and the slow-path benchmark's in-process side.

use clio_config::BoardConfig;
use clio_fastpath::{Layout, Span};
use clio_slowpath::{EngineCounters, SlowPath, SlowPathConfig};

/// Worker queues of the in-process slow path (the firmware's cores 1-3).
pub const WORKERS: usize = 3;
/// Capacity of each worker queue plus one.
pub const WORKER_QUEUE: usize = 64;
/// RX slots the slow path takes per step.
pub const RX_BUDGET: u32 = 64;

type SlowEngine = clio_slowpath::Engine<'static, WORKERS, WORKER_QUEUE>;

/// Gates an emulated rack node's slow path holds (and its fast path's gate
/// entries: `Moved` gates stay until their VA is reused).
pub const NODE_GATES: usize = 4096;
/// Chunks bound on an emulated rack node (4 MiB each: 8 GiB of touched memory).
pub const NODE_BINDINGS: usize = 2048;
/// Rack clients' address spaces registered on an emulated rack node.
pub const NODE_SPACES: usize = 256;
/// The slow path's rack side as an emulated rack node sizes it.
pub type NodeAgent = clio_slowpath::rack::RackAgent<NODE_GATES, NODE_BINDINGS, NODE_SPACES>;

/// The slow-path engine and where its rings live in board DRAM.
pub struct InProcSlowPath {
    engine: SlowEngine,
    rx: Span,
    tx: Span,
    /// Physical address of DRAM byte 0.
    dram_base: u64,
    /// Pages to zero from the current step (reused).
    scrub: Vec<(u64, u64)>,
    /// The rack side of a memory node (control datagrams, the gate's
    /// commands and reports), as the firmware runs it; `None`: no rack.
    rack: Option<Box<NodeAgent>>,
}

impl std::fmt::Debug for InProcSlowPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcSlowPath")
            .field("counters", self.engine.counters())
            .finish_non_exhaustive()
    }
}

impl InProcSlowPath {
    /// Boot the slow path for `cfg` with `seed` over the rings of `lay` in
    /// `dram` (formatted by the fast path; byte 0 is `lay.dram_base`).
    pub fn boot(
        cfg: &BoardConfig,
        lay: &Layout,
        dram: &[u8],
        seed: u64,
    ) -> Result<InProcSlowPath, String> {
        let core = SlowPath::new_leaked(SlowPathConfig::from_board(cfg), seed)
            .map_err(|e| format!("slow path: {e:?}"))?;
        let rx = dram
            .get(lay.rx_ring.start..lay.rx_ring.end)
            .ok_or("slow path: RX ring outside DRAM")?;
        let tx = dram
            .get(lay.tx_ring.start..lay.tx_ring.end)
            .ok_or("slow path: TX ring outside DRAM")?;
        let engine = SlowEngine::new(core, rx, tx).map_err(|e| format!("slow path rings: {e}"))?;
        Ok(InProcSlowPath {
            engine,
            rx: lay.rx_ring,
            tx: lay.tx_ring,
            dram_base: lay.dram_base,
            scrub: Vec::new(),
            rack: None,
        })
    }

    /// One round over `dram` (the whole board DRAM): take up to
    /// [`RX_BUDGET`] RX slots, run the workers, refill the free-PA FIFOs,
    /// post descriptors on the TX ring, and zero the pages it scrubs.
    /// Returns whether anything moved (the caller lets the fast path drain
    /// the TX ring, and steps again until neither side moves).
    pub fn step(&mut self, dram: &mut [u8]) -> bool {
        let before = *self.engine.counters();
        let (rx, tx) = split2(dram, self.rx, self.tx);
        let scrub = &mut self.scrub;
        let zero = |pa, n| scrub.push((pa, n));
        let o = match self.rack.as_deref_mut() {
            Some(agent) => self.engine.step_with(rx, tx, RX_BUDGET, zero, agent),
            None => self.engine.step(rx, tx, RX_BUDGET, zero),
        };
        for (pa, n) in self.scrub.drain(..) {
            let at = pa.wrapping_sub(self.dram_base) as usize;
            if let Some(s) = dram.get_mut(at..at.saturating_add(n as usize)) {
                s.fill(0);
            }
        }
        let after = *self.engine.counters();
        o.rx_taken > 0
            || o.refilled > 0
            || after.worked != before.worked
            || after.scrubbed != before.scrubbed
    }

    /// The slow path's state (sessions, ranges, statistics).
    pub fn core(&self) -> &SlowPath<'static> {
        self.engine.core()
    }

    /// The slow path's state, to act on the board's own initiative.
    pub fn core_mut(&mut self) -> &mut SlowPath<'static> {
        self.engine.core_mut()
    }

    /// Makes this slow path a rack memory node's: `agent` answers control
    /// datagrams and drives the fast path's gate.
    pub fn set_rack(&mut self, agent: Box<NodeAgent>) {
        self.rack = Some(agent);
    }

    /// The rack side, if any.
    pub fn rack(&self) -> Option<&NodeAgent> {
        self.rack.as_deref()
    }

    /// The rack side, mutable (its commands reach the fast path at the next step).
    pub fn rack_mut(&mut self) -> Option<&mut NodeAgent> {
        self.rack.as_deref_mut()
    }

    /// The engine's counters.
    pub fn counters(&self) -> &EngineCounters {
        self.engine.counters()
    }
}

/// Two disjoint mutable views of memory (spans `a` and `b`, in that order).
pub(crate) fn split2(mem: &mut [u8], a: Span, b: Span) -> (&mut [u8], &mut [u8]) {
    if a.start < b.start {
        let (lo, hi) = mem.split_at_mut(b.start);
        (&mut lo[a.start..a.end], &mut hi[..b.len()])
    } else {
        let (lo, hi) = mem.split_at_mut(a.start);
        (&mut hi[..a.len()], &mut lo[b.start..b.end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split2_gives_each_span_in_either_order() {
        let mut m: Vec<u8> = (0..32).collect();
        let a = Span { start: 4, end: 8 };
        let b = Span { start: 20, end: 22 };
        let (x, y) = split2(&mut m, a, b);
        assert_eq!((&x[..], &y[..]), (&[4u8, 5, 6, 7][..], &[20u8, 21][..]));
        let (y, x) = split2(&mut m, b, a);
        assert_eq!((&x[..], &y[..]), (&[4u8, 5, 6, 7][..], &[20u8, 21][..]));
    }
}
