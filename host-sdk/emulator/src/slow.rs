//! The slow path in process: the `clio-slowpath` engine (the code the
//! firmware links, with its worker queues standing in for cores 1-3) driven
//! over the RX and TX rings in emulated board DRAM. Every in-process board
//! uses this one driver: the model board ([`crate::Board`]), the RTL board
//! ([`crate::rtl::RtlBoard`]) and the slow-path benchmark's in-process side.

use clio_config::BoardConfig;
use clio_fastpath::{Layout, Span};
use clio_slowpath::offload::{self as fw, OffloadHost, PhysMem, Serving};
use clio_slowpath::rack::NoRack;
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

/// Offload answers the in-process slow path remembers for retries (the
/// firmware's default `dedup.offload_answers`).
pub const OFFLOAD_RECORDS: usize = 32;
/// Largest offload answer payload the in-process slow path sends: the
/// firmware's (its `OFFLOAD_ANSWER` less the record's 64 bytes of room),
/// the boards' default 64 KiB response bound, so the bound INFO states and
/// the one served agree. The RTL board's answer buffer (block RAM,
/// `OFFLOAD_RESP_BYTES`; ip/fastpath/rtl README, "The offload pass-through
/// in the top") is built for it ([`crate::rtl::rtl_params`]).
pub const OFFLOAD_MAX_ANSWER: usize = 64 * 1024;
/// The in-process slow path's offload host: the firmware's offloads
/// ([`fw::register_board`]), answers of at most [`OFFLOAD_MAX_ANSWER`]
/// payload bytes plus the datagram head.
pub type SlowOffloads = OffloadHost<'static, 4, OFFLOAD_RECORDS, { OFFLOAD_MAX_ANSWER + 64 }>;

/// The offload host, owned by one board (which moves between threads).
struct SendHost(Box<SlowOffloads>);

// SAFETY: the host holds `&mut dyn Offload` to the four offloads that
// `serve_offloads` leaked for it alone, each of a `Send` type (checked
// below), or none yet (`new_host`); nothing else reaches them, so moving
// the host moves them.
unsafe impl Send for SendHost {}

const _: () = {
    const fn send<T: Send>() {}
    send::<fw::kv::KvStore<64>>();
    send::<fw::mv::MvStore<256>>();
    send::<fw::df::DfOffload>();
    send::<fw::tally::Tally>();
};

/// A new offload host on the heap, built on a thread with room for it:
/// its answer records take about 2 MiB, which `Box::new` may build on the
/// stack first (more than a test thread has).
fn new_host(mtu: usize, max_response: usize) -> Result<Box<SlowOffloads>, String> {
    std::thread::Builder::new()
        .name("offload-host".into())
        .stack_size(2 * std::mem::size_of::<SlowOffloads>() + (1 << 20))
        .spawn(move || SendHost(Box::new(SlowOffloads::new(mtu, max_response))))
        .map_err(|e| format!("slow path offloads: {e}"))?
        .join()
        .map(|h| h.0)
        .map_err(|_| "slow path offloads: building the host panicked".to_string())
}

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
    /// The offloads this slow path serves (`OFFLOAD_REQ`); `None`: none.
    offloads: Option<SendHost>,
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
            offloads: None,
        })
    }

    /// Serve offload calls the fast path forwards (`OFFLOAD_REQ`), with the
    /// firmware's offloads ([`fw::register_board`]), for a board with MTU
    /// payload `mtu` and response bound `max_response` (each capped at
    /// [`OFFLOAD_MAX_ANSWER`]). The offloads live as long as the process.
    pub fn serve_offloads(&mut self, mtu: usize, max_response: usize) -> Result<(), String> {
        let mut host = new_host(
            mtu.min(OFFLOAD_MAX_ANSWER),
            max_response.min(OFFLOAD_MAX_ANSWER),
        )?;
        let kv = Box::leak(Box::new(fw::kv::KvStore::<64>::new(
            fw::kv::DEFAULT_BUCKETS,
        )));
        let mv = Box::leak(Box::new(fw::mv::MvStore::<256>::new(
            fw::mv::DEFAULT_MAX_OBJECTS,
        )));
        let df = Box::leak(Box::new(fw::df::DfOffload::new()));
        let tally = Box::leak(Box::new(fw::tally::Tally::new()));
        fw::register_board(&mut host, kv, mv, df, tally)
            .map_err(|e| format!("slow path offloads: {e:?}"))?;
        self.offloads = Some(SendHost(host));
        Ok(())
    }

    /// The offload host's counters, if this slow path serves offloads.
    pub fn offload_stats(&self) -> Option<fw::OffloadStats> {
        self.offloads.as_ref().map(|h| h.0.stats())
    }

    /// One round over `dram` (the whole board DRAM): take up to
    /// [`RX_BUDGET`] RX slots, run the workers, refill the free-PA FIFOs,
    /// post descriptors on the TX ring, and zero the pages it scrubs.
    /// Returns whether anything moved (the caller lets the fast path drain
    /// the TX ring, and steps again until neither side moves).
    pub fn step(&mut self, dram: &mut [u8]) -> bool {
        let before = *self.engine.counters();
        let scrub = &mut self.scrub;
        let zero = |pa, n| scrub.push((pa, n));
        let o = if let Some(SendHost(host)) = self.offloads.as_mut() {
            let (rx, tx, rest) = split_rings(dram, self.rx, self.tx);
            let mut phys = RingsApart {
                base: self.dram_base,
                rest,
            };
            let mut serving = Serving {
                host: &mut **host,
                phys: &mut phys,
            };
            let mut no_rack = NoRack;
            let node: &mut dyn clio_slowpath::rack::NodeSide = match self.rack.as_deref_mut() {
                Some(agent) => agent,
                None => &mut no_rack,
            };
            self.engine
                .step_full(rx, tx, RX_BUDGET, zero, node, &mut serving)
        } else {
            let (rx, tx) = split2(dram, self.rx, self.tx);
            match self.rack.as_deref_mut() {
                Some(agent) => self.engine.step_with(rx, tx, RX_BUDGET, zero, agent),
                None => self.engine.step(rx, tx, RX_BUDGET, zero),
            }
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

/// Board DRAM but the two rings, as the offloads reach it: `rest` holds
/// the pieces before, between and after the rings, each with its offset in
/// DRAM; an access that touches a ring (or leaves DRAM) is refused.
struct RingsApart<'m> {
    /// Physical address of DRAM byte 0.
    base: u64,
    rest: [(usize, &'m mut [u8]); 3],
}

impl RingsApart<'_> {
    fn piece(&mut self, pa: u64, n: usize) -> Option<&mut [u8]> {
        let off = usize::try_from(pa.checked_sub(self.base)?).ok()?;
        let end = off.checked_add(n)?;
        self.rest.iter_mut().find_map(|(at, s)| {
            (off >= *at && end <= *at + s.len()).then(|| &mut s[off - *at..end - *at])
        })
    }
}

impl PhysMem for RingsApart<'_> {
    fn read(&mut self, pa: u64, buf: &mut [u8]) -> bool {
        match self.piece(pa, buf.len()) {
            Some(s) => {
                buf.copy_from_slice(s);
                true
            }
            None => false,
        }
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        match self.piece(pa, data.len()) {
            Some(s) => {
                s.copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

/// The RX ring `rx`, the TX ring `tx`, and the rest of `mem` in three
/// pieces with their offsets (disjoint spans inside `mem`).
#[allow(clippy::type_complexity)]
fn split_rings(
    mem: &mut [u8],
    rx: Span,
    tx: Span,
) -> (&mut [u8], &mut [u8], [(usize, &mut [u8]); 3]) {
    let (first, second) = if rx.start < tx.start {
        (rx, tx)
    } else {
        (tx, rx)
    };
    let (a, tail) = mem.split_at_mut(first.start);
    let (r1, tail) = tail.split_at_mut(first.len());
    let (b, tail) = tail.split_at_mut(second.start - first.end);
    let (r2, c) = tail.split_at_mut(second.len());
    let rest = [(0, a), (first.end, b), (second.end, c)];
    if rx.start < tx.start {
        (r1, r2, rest)
    } else {
        (r2, r1, rest)
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
