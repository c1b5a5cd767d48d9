//! An emulated EDM rack: `N` emulated Alveo U200 compute cards, one EDM switch and
//! `M` Clio memory nodes whose network side is an EDM port.
//!
//! Each card is a [`clio_xdma::FileCard`]: the card end of the XDMA packet rings on
//! stand-in device files (`<dir>/xdmaN_user`, `_h2c_0`, `_c2h_0`), so a program
//! opens it with `clio_xdma::XdmaLink::open("<dir>/xdmaN")` exactly as it opens a
//! real card. Behind the rings run the card's translator and EDM host engine, the
//! switch and the memory nodes' EDM host engines ([`edm_clio::ClioFabric`], the
//! cycle models), and each memory node's Clio board ([`clio_emu::Board`]: the
//! fast-path model and the slow path, unchanged; only its front end is EDM instead
//! of UDP). Card `i` sends to memory node `i % M`.
//!
//! One thread runs the whole rack: it takes published H2C slots, steps the fabric
//! until every request is answered, and publishes the answers in C2H slots.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use clio_config::BoardConfig;
use clio_emu::Board;
use clio_wire::xdma::{reg, status};
use clio_xdma::FileCard;
use edm_clio::edm_fabric::Dir;
use edm_clio::{ClioFabric, ClioFabricConfig, MemoryNode};

/// A Clio board serving as an EDM memory node.
struct Node(Board);

impl MemoryNode for Node {
    fn handle(&mut self, from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.0.handle(u64::from(from), packet, &mut |_, p| out(p));
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct RackOptions {
    /// Compute cards.
    pub cards: usize,
    /// Memory nodes.
    pub nodes: usize,
    /// Directory for the cards' stand-in device files (`xdma0_user`, ...).
    pub dir: PathBuf,
    /// Board config of every memory node.
    pub board: BoardConfig,
}

/// Model-time statistics of the answers delivered so far.
#[derive(Debug, Clone, Default)]
pub struct RackStats {
    /// Requests handed to the translators.
    pub requests: u64,
    /// Answers published to the hosts.
    pub answers: u64,
    /// Requests the cards refused (field at fault, count).
    pub refused: Vec<(String, u64)>,
    /// Per answer: (was a READ, EDM model cycles from the card taking the request to the answer).
    pub latencies: Vec<(bool, u64)>,
    /// Translator counters.
    pub counters: edm_clio::Counters,
}

/// A running rack (stops when dropped).
#[derive(Debug)]
pub struct Rack {
    prefixes: Vec<PathBuf>,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<RackStats>>,
    join: Option<JoinHandle<Result<(), String>>>,
}

impl Rack {
    /// Create the cards' device files under `opts.dir`, build the memory nodes and
    /// the fabric, and start serving. Errors name what failed.
    pub fn start(opts: RackOptions) -> Result<Rack, String> {
        let mut cards = Vec::with_capacity(opts.cards);
        for i in 0..opts.cards {
            let c = FileCard::create(&opts.dir, &format!("xdma{i}"), FileCard::DEFAULT_GEOMETRY)
                .map_err(|e| format!("card {i}: {e}"))?;
            cards.push(c);
        }
        let mut nodes = Vec::with_capacity(opts.nodes);
        for n in 0..opts.nodes {
            nodes.push(Node(
                Board::new(&opts.board).map_err(|e| format!("memory node {n}: {e}"))?,
            ));
        }
        let fabric = ClioFabric::new(ClioFabricConfig::new(opts.cards, opts.nodes), nodes)?;
        let prefixes = cards.iter().map(|c| c.prefix().to_path_buf()).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(RackStats::default()));
        let (flag, st) = (Arc::clone(&stop), Arc::clone(&stats));
        let join = std::thread::Builder::new()
            .name("clio-fabric".into())
            .spawn(move || serve(cards, fabric, &flag, &st))
            .map_err(|e| format!("rack thread: {e}"))?;
        Ok(Rack {
            prefixes,
            stop,
            stats,
            join: Some(join),
        })
    }

    /// Node prefix of card `i` (open it with `XdmaLink::open`).
    pub fn card(&self, i: usize) -> &Path {
        &self.prefixes[i]
    }

    /// Node prefixes of every card.
    pub fn cards(&self) -> &[PathBuf] {
        &self.prefixes
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> RackStats {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Stop serving; the error that stopped the rack early, if any.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::Release);
        match self.join.take().map(|j| j.join()) {
            Some(Ok(r)) => r,
            Some(Err(p)) => std::panic::resume_unwind(p),
            None => Ok(()),
        }
    }
}

impl Drop for Rack {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

/// Cycles the rack steps the fabric per round before looking at the rings again.
const ROUND_CYCLES: u64 = 20_000;

fn serve(
    mut cards: Vec<FileCard>,
    mut fabric: ClioFabric<Node>,
    stop: &AtomicBool,
    stats: &Mutex<RackStats>,
) -> Result<(), String> {
    let mut out: Vec<VecDeque<Vec<u8>>> = vec![VecDeque::new(); cards.len()];
    let mut idle_rounds = 0u32;
    let mut link_down = vec![false; cards.len()];
    let mut shown = vec![edm_clio::CardCounters::default(); cards.len()];
    while !stop.load(Ordering::Acquire) {
        let mut moved = false;
        let mut taken = 0u64;
        let mut refused: Vec<String> = Vec::new();
        for (i, card) in cards.iter_mut().enumerate() {
            let served = card
                .serve_once(&mut |pkt: &[u8], _emit: &mut dyn FnMut(&[u8])| {
                    taken += 1;
                    // A refused packet is counted; the translator's own answer to it
                    // (`edm_clio::refusal_answer`) comes with the others below.
                    if let Err(e) = fabric.submit(i, pkt) {
                        refused.push(e.field.to_string());
                    }
                })
                .map_err(|e| format!("card {i}: {e}"))?;
            moved |= !served.is_idle();
        }
        if fabric.outstanding() > 0 || !fabric.fabric.is_quiet() {
            fabric.run_until_idle(ROUND_CYCLES);
            moved = true;
        }
        // A card whose EDM link the sync-header monitor took down says so in
        // STATUS.LINK_UP (the SDK's requests to it time out; `clio bringup` names it).
        for (i, card) in cards.iter().enumerate() {
            let down = [Dir::Up, Dir::Down]
                .into_iter()
                .any(|d| fabric.fabric.link_disabled(i, d).is_some());
            if down && !link_down[i] {
                link_down[i] = true;
                card.set_register(reg::STATUS, status::READY)
                    .map_err(|e| format!("card {i}: {e}"))?;
            }
        }
        // Each card's translator counters in its user BAR (XLATE_*), as the RTL
        // card shows its own (wrapping u32s).
        for (i, card) in cards.iter().enumerate() {
            let c = fabric.card_counters(i);
            if c != shown[i] {
                for (r, v) in [
                    (reg::XLATE_REFUSED, c.refused),
                    (reg::XLATE_TIMEOUTS, c.timeouts),
                    (reg::XLATE_BAD, c.bad),
                ] {
                    card.set_register(r, v as u32)
                        .map_err(|e| format!("card {i}: {e}"))?;
                }
                shown[i] = c;
            }
        }
        let answers = fabric.take_answers();
        {
            let mut st = stats.lock().unwrap_or_else(|p| p.into_inner());
            st.requests += taken;
            for f in refused {
                match st.refused.iter_mut().find(|(n, _)| *n == f) {
                    Some((_, c)) => *c += 1,
                    None => st.refused.push((f, 1)),
                }
            }
            for a in answers.iter().filter(|a| !a.refusal) {
                st.latencies.push((a.read, a.answered - a.submitted));
            }
            st.answers += answers.len() as u64;
            st.counters = fabric.counters;
        }
        for a in answers {
            out[a.card].push_back(a.packet);
        }
        for (i, card) in cards.iter_mut().enumerate() {
            while let Some(p) = out[i].front() {
                match card.publish(p) {
                    Ok(()) => {
                        out[i].pop_front();
                        moved = true;
                    }
                    Err(clio_xdma::XdmaError::Full { .. }) => break,
                    Err(e) => return Err(format!("card {i}: {e}")),
                }
            }
        }
        if moved {
            idle_rounds = 0;
        } else {
            idle_rounds = idle_rounds.saturating_add(1);
            if idle_rounds > 64 {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::yield_now();
            }
        }
    }
    Ok(())
}
