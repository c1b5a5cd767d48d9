//! The U200 card's Clio-to-EDM translator as a model, over the EDM fabric model.
//!
//! A [`ClioFabric`] is an EDM star fabric ([`edm::fabric::Fabric`], stepped one 2.56 ns
//! PHY cycle at a time) whose first `cards` ports are compute cards and whose other
//! ports are Clio memory nodes. Each card runs the translator: it takes whole Clio
//! request packets (what the host wrote into its H2C ring), maps each onto EDM
//! messages by [`clio_wire::edm_clio`] (READ: WREQ of the request record, then an
//! RREQ sized by the answer; everything else: WREQ) and turns what comes back into
//! Clio answer packets (what it publishes in its C2H ring). Each memory node hands
//! every request record that has fully arrived to a [`MemoryNode`] (a Clio board
//! whose network side is this EDM port) and sends its answers back.
//!
//! Timing is the EDM model's: [`Answer::submitted`] and [`Answer::answered`] are PHY
//! cycles. The memory node answers in the cycle the record arrives (its own service
//! time is the Clio fast path's, reported apart).

use std::collections::{HashMap, VecDeque};

use clio_wire::clio::{field, Opcode};
use clio_wire::edm_clio::{
    self as map, inbox_addr, outbox_addr, Carriage, INBOX_BASE, INBOX_SLOT_BYTES, OUTBOX_BASE,
    OUTBOX_SLOT_BYTES, SLOTS,
};
/// The EDM fabric model this crate runs on (for fault injection and link state).
pub use edm::fabric as edm_fabric;
use edm::fabric::{Fabric, FabricConfig};
use edm::host::Request;

/// A Clio memory node behind an EDM port: answers one Clio request packet.
pub trait MemoryNode {
    /// Serve `packet` from card `from` (its EDM node id); each answer goes to `out`.
    fn handle(&mut self, from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8]));
}

impl<F: FnMut(u16, &[u8], &mut dyn FnMut(&[u8]))> MemoryNode for F {
    fn handle(&mut self, from: u16, packet: &[u8], out: &mut dyn FnMut(&[u8])) {
        self(from, packet, out)
    }
}

/// One Clio answer delivered to a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Card index.
    pub card: usize,
    /// The Clio answer packet.
    pub packet: Vec<u8>,
    /// Cycle the request was handed to the card's translator.
    pub submitted: u64,
    /// Cycle the answer was complete at the card.
    pub answered: u64,
    /// Whether the request was a READ (carried as WREQ + RREQ).
    pub read: bool,
    /// Cycle the request record's last chunk left the card (its WREQ completed).
    pub record_sent: u64,
    /// Cycle the request got a card slot and its record was handed to the EDM host engine
    /// (after `submitted` when all the card's slots were busy).
    pub issued: u64,
    /// The card's own answer to a packet it refused ([`refusal_answer`]): no EDM
    /// message carried it, and it is answered in the cycle it was submitted.
    pub refusal: bool,
}

/// Counters of the translators and memory-node front ends (bad input is counted, never fatal).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests carried.
    pub carried: u64,
    /// Requests whose slot timed out (lost on a dead link); the SDK retries them.
    pub timeouts: u64,
    /// Records or chains that failed to parse, or carried a stale sequence number.
    pub bad_records: u64,
    /// NULL responses from the EDM layer (an address outside a node's memory).
    pub null_responses: u64,
    /// Answers that did not fit their chain.
    pub dropped_answers: u64,
    /// READ answers read again because the outbox still held an older chain.
    pub rereads: u64,
}

/// One card's translator counters: the three the RTL card keeps
/// (`edm_clio_card`: `cnt_refused`, `cnt_timeouts`, `cnt_bad`), which the card's
/// user BAR shows (`clio_wire::xdma::reg::XLATE_REFUSED` ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CardCounters {
    /// Packets the card refused and carried nothing for (the mapping's refusals).
    pub refused: u64,
    /// Slots freed by the timeout (no answer: a dead link).
    pub timeouts: u64,
    /// Answers that did not parse, stray answer writes and NULL responses.
    pub bad: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The record's WREQ is being sent.
    Record,
    /// The READ's RREQ is outstanding.
    Reading,
    /// Waiting for the answer chain's WREQ.
    Awaiting,
    /// A READ whose RREQ found an older chain, waiting until `reread_at` to read again.
    Backoff,
}

#[derive(Debug, Clone)]
struct InFlight {
    seq: u32,
    demand: Option<u16>,
    submitted: u64,
    issued: u64,
    record_sent: u64,
    stage: Stage,
    /// READ answers read again so far (the back-off doubles with each).
    rereads: u32,
    /// When a READ in [`Stage::Backoff`] reads again.
    reread_at: u64,
}

#[derive(Debug, Clone, Default)]
struct CardState {
    dst: u16,
    slots: Vec<Option<InFlight>>,
    waiting: VecDeque<(u64, Vec<u8>)>,
    seq: u32,
    tags: HashMap<u64, usize>,
}

/// What a card makes of an answer that arrived for a slot awaiting sequence number
/// `seq` ([`unpack_answer`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unpacked {
    /// The Clio answer packets delivered to the C2H ring, in order.
    pub packets: Vec<Vec<u8>>,
    /// Whether the whole answer parsed (else the card counts a bad record).
    pub ok: bool,
    /// Whether the slot is freed: a record or chain that does not parse, or a
    /// stale `seq`, leaves it waiting (for the right answer or the slot timeout);
    /// a chain that breaks off after its `seq` matched frees it with the packets
    /// before the break delivered.
    pub frees: bool,
}

/// The card's reading of an answer for the slot awaiting `seq`: `bytes` is a READ's
/// RRES (the answer chain, `record == false`) or the record the memory node wrote
/// into the card's inbox (`record == true`, a record whose body is the chain). The
/// translator RTL's return stage (`rtl/edm_clio_chain.sv`) is checked against this.
pub fn unpack_answer(bytes: &[u8], record: bool, seq: u32) -> Unpacked {
    let chain = if record {
        match map::parse_record(bytes) {
            Ok(r) => r.body,
            Err(_) => return Unpacked::default(),
        }
    } else {
        bytes
    };
    let mut u = Unpacked::default();
    match map::parse_chain(chain) {
        Ok((s, packets)) if s == seq => {
            u.frees = true;
            u.ok = true;
            for p in packets {
                match p {
                    Ok(p) => u.packets.push(p.to_vec()),
                    Err(_) => {
                        u.ok = false;
                        break;
                    }
                }
            }
        }
        _ => {}
    }
    u
}

/// The header-only Clio answer a card makes itself to `packet`, which the mapping
/// refused with `e` ([`map::emit_refusal`]: `TOO_LARGE` for a READ past
/// [`map::MAX_READ`] or a packet past a record, `UNSUPPORTED` under a NACK opcode
/// for a byte that is no request opcode); `None` for a packet shorter than a Clio
/// header. The translator RTL (`rtl/edm_clio_card.sv`) answers the same, byte for
/// byte (`tb/cosim`).
pub fn refusal_answer(packet: &[u8], e: &Refusal) -> Option<Vec<u8>> {
    let mut out = vec![0u8; clio_wire::clio::HEADER_LEN];
    let n = map::emit_refusal(packet, map::refuse_code(e), &mut out)?;
    out.truncate(n);
    Some(out)
}

/// The EDM requests a card makes to carry one Clio request packet ([`plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carry {
    /// The request record (`len | rsvd | seq | packet`): the WREQ's data.
    pub record: Vec<u8>,
    /// Where the WREQ writes it in the memory node's EDM memory (its inbox slot).
    pub wreq_addr: u64,
    /// A READ's RREQ once the WREQ completed: address of the answer chain in the
    /// memory node's EDM memory (its outbox slot) and length.
    pub rreq: Option<(u64, u16)>,
}

/// How card `card` (its EDM node id) carries `packet` in slot `slot` with sequence
/// number `seq`; a packet the mapping refuses gives the field at fault. The
/// translator RTL's request stage (`rtl/edm_clio_req.sv`) is checked against this.
pub fn plan(card: u16, slot: u16, seq: u32, packet: &[u8]) -> Result<Carry, Refusal> {
    let total = packet
        .get(field::TOTAL_LEN)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let op = packet.get(field::OPCODE).copied().unwrap_or(0);
    let carriage = map::carriage(op, total, packet.len())?;
    let mut record = vec![0u8; map::RECORD_HEADER + packet.len()];
    map::emit_record(seq, packet, &mut record)?;
    Ok(Carry {
        record,
        wreq_addr: inbox_addr(card, slot),
        rreq: match carriage {
            Carriage::Read { demand } => Some((outbox_addr(card, slot), demand)),
            Carriage::Write => None,
        },
    })
}

/// Configuration of a [`ClioFabric`].
#[derive(Debug, Clone, Copy)]
pub struct ClioFabricConfig {
    /// Compute cards (EDM ports `0..cards`).
    pub cards: usize,
    /// Memory nodes (EDM ports `cards..cards + nodes`).
    pub nodes: usize,
    /// The EDM fabric (its port count and host memory are set from the above).
    pub fabric: FabricConfig,
    /// Cycles after which a card gives up on a request (a dead link) and frees its slot,
    /// counted from the request taking the slot (not from its submission: a request that
    /// queued for a slot has not yet been on the link).
    pub slot_timeout: u64,
    /// Requests a card queues while its slots are busy; more are refused.
    pub max_waiting: usize,
    /// Cycles a card waits before reading a READ's answer again after its RREQ found
    /// an older chain (the RREQ overtook the node's answer), doubling with each
    /// re-read of the same request up to [`ClioFabricConfig::reread_backoff_max`];
    /// 0 reads again at once. The RTL card's `REREAD_BACKOFF`.
    pub reread_backoff: u64,
    /// The longest wait between two reads of the same answer (`REREAD_BACKOFF_MAX`).
    pub reread_backoff_max: u64,
}

impl ClioFabricConfig {
    /// `cards` cards and `nodes` memory nodes on one switch, paper timing.
    pub fn new(cards: usize, nodes: usize) -> Self {
        let mut fabric = FabricConfig::new(cards + nodes);
        fabric.host.mem_bytes = map::MAILBOX_BYTES as usize;
        ClioFabricConfig {
            cards,
            nodes,
            fabric,
            slot_timeout: 2_000_000,
            max_waiting: 1024,
            reread_backoff: REREAD_BACKOFF,
            reread_backoff_max: REREAD_BACKOFF_MAX,
        }
    }
}

/// Default first wait before a READ's answer is read again, in cycles: about one
/// RREQ round trip of a 64 B READ's chain (64 cycles unloaded, `README.md`), so a
/// node that answers within that time costs one more RREQ.
pub const REREAD_BACKOFF: u64 = 64;
/// Default longest wait between two reads of the same answer, in cycles.
pub const REREAD_BACKOFF_MAX: u64 = 1024;

/// The wait before the `n`-th re-read (from 1) of one READ's answer: `first`
/// doubling with each, at most `max`.
pub fn reread_wait(first: u64, max: u64, n: u32) -> u64 {
    let k = n.saturating_sub(1).min(63);
    first.saturating_mul(1u64 << k).min(max)
}

/// Why a card refuses a packet: the field at fault.
pub type Refusal = clio_wire::Error;

/// Cards, switch and memory nodes (see the crate docs).
pub struct ClioFabric<N: MemoryNode> {
    /// The EDM fabric model.
    pub fabric: Fabric,
    /// The memory nodes' Clio engines.
    pub nodes: Vec<N>,
    cfg: ClioFabricConfig,
    cards: Vec<CardState>,
    rx: Vec<HashMap<u64, usize>>,
    answers: Vec<Answer>,
    /// Counters.
    pub counters: Counters,
    card_counters: Vec<CardCounters>,
}

impl<N: MemoryNode> std::fmt::Debug for ClioFabric<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClioFabric")
            .field("cards", &self.cfg.cards)
            .field("nodes", &self.cfg.nodes)
            .field("now", &self.fabric.now())
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl<N: MemoryNode> ClioFabric<N> {
    /// Build the fabric; card `i` sends to memory node `i % nodes`. Fails naming the
    /// parameter if the sizes do not fit the mailbox layout or the switch.
    pub fn new(mut cfg: ClioFabricConfig, nodes: Vec<N>) -> Result<Self, String> {
        let ports = cfg.cards + cfg.nodes;
        if cfg.cards == 0 || cfg.nodes == 0 || nodes.len() != cfg.nodes {
            return Err(format!(
                "cards = {}, nodes = {} ({} engines): need at least one of each, one engine per node",
                cfg.cards,
                cfg.nodes,
                nodes.len()
            ));
        }
        if ports > map::MAX_PEERS as usize {
            return Err(format!(
                "cards + nodes = {ports}: the mailbox layout has room for {} nodes",
                map::MAX_PEERS
            ));
        }
        cfg.fabric.switch.ports = ports;
        cfg.fabric.host.mem_bytes = map::MAILBOX_BYTES as usize;
        let fabric = Fabric::new(cfg.fabric).map_err(|e| format!("switch: {e:?}"))?;
        let cards = (0..cfg.cards)
            .map(|i| CardState {
                dst: (cfg.cards + i % cfg.nodes) as u16,
                slots: vec![None; SLOTS as usize],
                ..CardState::default()
            })
            .collect();
        Ok(ClioFabric {
            fabric,
            nodes,
            cards,
            rx: vec![HashMap::new(); ports],
            answers: Vec::new(),
            counters: Counters::default(),
            card_counters: vec![CardCounters::default(); cfg.cards],
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ClioFabricConfig {
        &self.cfg
    }

    /// Current cycle.
    pub fn now(&self) -> u64 {
        self.fabric.now()
    }

    /// Point card `card` at memory node `node` (index among the memory nodes).
    pub fn set_target(&mut self, card: usize, node: usize) {
        self.cards[card].dst = (self.cfg.cards + node) as u16;
    }

    /// Hand one Clio request packet to card `card`'s translator. A packet the
    /// mapping refuses is returned with the field at fault: the card counts it,
    /// carries nothing and answers it itself ([`refusal_answer`], delivered at once
    /// with [`Answer::refusal`] set) unless it is shorter than a Clio header.
    pub fn submit(&mut self, card: usize, packet: &[u8]) -> Result<(), Refusal> {
        let total = packet
            .get(field::TOTAL_LEN)
            .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let op = packet.get(field::OPCODE).copied().unwrap_or(0);
        let now = self.now();
        if let Err(e) = map::carriage(op, total, packet.len()) {
            self.card_counters[card].refused += 1;
            if let Some(a) = refusal_answer(packet, &e) {
                self.answers.push(Answer {
                    card,
                    packet: a,
                    submitted: now,
                    answered: now,
                    read: false,
                    record_sent: now,
                    issued: now,
                    refusal: true,
                });
            }
            return Err(e);
        }
        let c = &mut self.cards[card];
        if c.waiting.len() >= self.cfg.max_waiting {
            return Err(clio_wire::Error::new(
                "edm_clio.card.queue",
                clio_wire::ErrorKind::OutOfRange {
                    value: c.waiting.len() as u64 + 1,
                    max: self.cfg.max_waiting as u64,
                },
            ));
        }
        c.waiting.push_back((now, packet.to_vec()));
        self.issue(card);
        Ok(())
    }

    /// Card `card`'s translator counters (zero for a card that does not exist).
    pub fn card_counters(&self, card: usize) -> CardCounters {
        self.card_counters.get(card).copied().unwrap_or_default()
    }

    /// Answers delivered so far (taken).
    pub fn take_answers(&mut self) -> Vec<Answer> {
        std::mem::take(&mut self.answers)
    }

    /// Requests queued or in flight at the cards.
    pub fn outstanding(&self) -> usize {
        self.cards
            .iter()
            .map(|c| c.waiting.len() + c.slots.iter().filter(|s| s.is_some()).count())
            .sum()
    }

    /// Step until every request is answered (or timed out) and the fabric is quiet,
    /// at most `max_cycles`; whether it got there.
    pub fn run_until_idle(&mut self, max_cycles: u64) -> bool {
        let end = self.now() + max_cycles;
        while self.now() < end {
            if self.outstanding() == 0 && self.fabric.is_quiet() {
                return true;
            }
            self.step();
        }
        false
    }

    fn issue(&mut self, card: usize) {
        let now = self.now();
        let port = card as u16;
        let c = &mut self.cards[card];
        while let Some(slot) = c.slots.iter().position(|s| s.is_none()) {
            let Some((submitted, packet)) = c.waiting.pop_front() else {
                break;
            };
            c.seq = c.seq.wrapping_add(1);
            // The mapping checked the packet at submission.
            let Ok(plan) = plan(port, slot as u16, c.seq, &packet) else {
                self.counters.bad_records += 1;
                continue;
            };
            let demand = plan.rreq.map(|(_, len)| len);
            let req = Request::Write {
                dst: c.dst,
                addr: plan.wreq_addr,
                data: plan.record,
            };
            match self.fabric.hosts[card].submit(now, req) {
                Ok(tag) => {
                    c.tags.insert(tag, slot);
                    c.slots[slot] = Some(InFlight {
                        seq: c.seq,
                        demand,
                        submitted,
                        issued: now,
                        record_sent: 0,
                        stage: Stage::Record,
                        rereads: 0,
                        reread_at: 0,
                    });
                    self.counters.carried += 1;
                }
                Err(_) => self.counters.bad_records += 1,
            }
        }
    }

    /// Advance one cycle.
    pub fn step(&mut self) {
        self.fabric.tick();
        let now = self.now();
        for card in 0..self.cfg.cards {
            self.card_events(card, now);
        }
        for n in 0..self.cfg.nodes {
            self.node_events(self.cfg.cards + n, now);
        }
        if now % 1024 == 0 {
            self.expire(now);
        }
    }

    fn expire(&mut self, now: u64) {
        let limit = self.cfg.slot_timeout;
        for card in 0..self.cfg.cards {
            let c = &mut self.cards[card];
            let mut freed = false;
            for s in c.slots.iter_mut() {
                // From the slot's issue: time queued for a slot is not time on the link.
                if s.as_ref()
                    .is_some_and(|f| now.saturating_sub(f.issued) > limit)
                {
                    *s = None;
                    freed = true;
                    self.counters.timeouts += 1;
                    self.card_counters[card].timeouts += 1;
                }
            }
            if freed {
                c.tags.retain(|_, slot| c.slots[*slot].is_some());
                self.issue(card);
            }
        }
    }

    fn card_events(&mut self, card: usize, now: u64) {
        let comps = std::mem::take(&mut self.fabric.hosts[card].completions);
        for comp in comps {
            let Some(slot) = self.cards[card].tags.remove(&comp.tag) else {
                continue;
            };
            let Some(f) = self.cards[card].slots[slot].clone() else {
                continue;
            };
            if !comp.ok {
                self.counters.null_responses += 1;
                self.card_counters[card].bad += 1;
                self.cards[card].slots[slot] = None;
                continue;
            }
            if f.stage == Stage::Record {
                if let Some(s) = self.cards[card].slots[slot].as_mut() {
                    s.record_sent = comp.done;
                }
            }
            match (f.stage, f.demand) {
                (Stage::Record, Some(demand)) => self.read_answer(card, slot, demand, now),
                (Stage::Record, None) => {
                    if let Some(s) = self.cards[card].slots[slot].as_mut() {
                        s.stage = Stage::Awaiting;
                    }
                }
                (Stage::Reading, demand) => {
                    self.deliver_chain(card, slot, &comp.result, now, true);
                    // Not the answer yet (the outbox still holds an older chain: the
                    // node has not answered when the RREQ reached it): read again
                    // after a bounded back-off, until it is there or the slot times out.
                    let (first, max) = (self.cfg.reread_backoff, self.cfg.reread_backoff_max);
                    if let (Some(demand), Some(s)) = (demand, self.cards[card].slots[slot].as_mut())
                    {
                        self.counters.rereads += 1;
                        s.rereads += 1;
                        let wait = reread_wait(first, max, s.rereads);
                        if wait == 0 {
                            self.read_answer(card, slot, demand, now);
                        } else {
                            s.stage = Stage::Backoff;
                            s.reread_at = now + wait;
                        }
                    }
                }
                (Stage::Awaiting, _) | (Stage::Backoff, _) => {}
            }
        }
        for slot in 0..self.cards[card].slots.len() {
            if let Some(InFlight {
                stage: Stage::Backoff,
                reread_at,
                demand: Some(demand),
                ..
            }) = self.cards[card].slots[slot]
            {
                if reread_at <= now {
                    self.read_answer(card, slot, demand, now);
                }
            }
        }
        for rec in self.complete_records(card) {
            let (peer, slot, bytes) = rec;
            let c = &self.cards[card];
            if peer != c.dst {
                self.counters.bad_records += 1;
                self.card_counters[card].bad += 1;
                continue;
            }
            self.deliver_chain(card, slot as usize, &bytes, now, false);
        }
        self.issue(card);
    }

    /// Post the RREQ of a READ's answer chain (slot `slot`'s outbox at the node).
    fn read_answer(&mut self, card: usize, slot: usize, demand: u16, now: u64) {
        let port = card as u16;
        let dst = self.cards[card].dst;
        let req = Request::Read {
            dst,
            addr: outbox_addr(port, slot as u16),
            len: demand,
            local_addr: outbox_addr(dst, slot as u16),
        };
        match self.fabric.hosts[card].submit(now, req) {
            Ok(tag) => {
                self.cards[card].tags.insert(tag, slot);
                if let Some(s) = self.cards[card].slots[slot].as_mut() {
                    s.stage = Stage::Reading;
                }
            }
            Err(_) => {
                self.counters.bad_records += 1;
                self.cards[card].slots[slot] = None;
            }
        }
    }

    /// Unpack an answer (an answer chain, or a record holding one) for `slot` and
    /// deliver its packets, by [`unpack_answer`].
    fn deliver_chain(&mut self, card: usize, slot: usize, bytes: &[u8], now: u64, read: bool) {
        let Some(f) = self.cards[card].slots.get(slot).cloned().flatten() else {
            self.counters.bad_records += 1;
            self.card_counters[card].bad += 1;
            return;
        };
        let u = unpack_answer(bytes, !read, f.seq);
        for p in u.packets {
            self.answers.push(Answer {
                card,
                packet: p,
                submitted: f.submitted,
                answered: now,
                read,
                record_sent: f.record_sent,
                issued: f.issued,
                refusal: false,
            });
        }
        if !u.ok {
            self.counters.bad_records += 1;
            self.card_counters[card].bad += 1;
        }
        if u.frees {
            self.cards[card].slots[slot] = None;
        }
    }

    /// Inbox records that finished arriving at `port` this cycle: (peer, slot, bytes).
    fn complete_records(&mut self, port: usize) -> Vec<(u16, u16, Vec<u8>)> {
        let applied = std::mem::take(&mut self.fabric.hosts[port].applied);
        let mut done = Vec::new();
        for a in applied {
            if !(INBOX_BASE..OUTBOX_BASE).contains(&a.addr) {
                continue;
            }
            let idx = (a.addr - INBOX_BASE) / INBOX_SLOT_BYTES;
            let (peer, slot) = ((idx / SLOTS as u64) as u16, (idx % SLOTS as u64) as u16);
            let base = inbox_addr(peer, slot);
            let got = self.rx[port].entry(base).or_insert(0);
            *got += a.len;
            let mem = &self.fabric.hosts[port].mem;
            let b = base as usize;
            if let Some(n) = map::record_len(&mem[b..b + 2]) {
                if *got >= n {
                    self.rx[port].remove(&base);
                    let end = (b + n).min(b + INBOX_SLOT_BYTES as usize);
                    done.push((peer, slot, mem[b..end].to_vec()));
                }
            }
        }
        done
    }

    fn node_events(&mut self, port: usize, now: u64) {
        // The node's own answer WREQs finishing need nothing.
        self.fabric.hosts[port].completions.clear();
        for (peer, slot, bytes) in self.complete_records(port) {
            let node = port - self.cfg.cards;
            let engine = &mut self.nodes[node];
            let reply = serve_record(port as u16, peer, slot, &bytes, |p, out| {
                engine.handle(peer, p, out)
            });
            match reply {
                NodeReply::Bad => self.counters.bad_records += 1,
                NodeReply::Outbox { addr, chain } => match chain {
                    Some(chain) => {
                        let at = addr as usize;
                        self.fabric.hosts[port].mem[at..at + chain.len()].copy_from_slice(&chain);
                    }
                    None => self.counters.dropped_answers += 1,
                },
                NodeReply::Wreq {
                    dst,
                    addr,
                    record,
                    dropped,
                } => {
                    if dropped {
                        self.counters.dropped_answers += 1;
                    }
                    let req = Request::Write {
                        dst,
                        addr,
                        data: record,
                    };
                    if self.fabric.hosts[port].submit(now, req).is_err() {
                        self.counters.bad_records += 1;
                    }
                }
            }
        }
    }
}

/// What a memory node's EDM front end does with one request record that has fully
/// arrived in its inbox ([`serve_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeReply {
    /// The record does not parse (header, length): counted, nothing is answered (the
    /// card's slot times out).
    Bad,
    /// A READ: its answer chain is written at `addr` (the peer's outbox slot) in the
    /// node's EDM memory, where the card's RREQ reads it; `None` if the answers do not
    /// fit an outbox slot (dropped: the outbox keeps its older chain).
    Outbox {
        /// Byte address of the outbox slot in the node's EDM memory.
        addr: u64,
        /// The answer chain (`seq | (len | packet)* | 0`).
        chain: Option<Vec<u8>>,
    },
    /// Any other request: a WREQ of `record` (a record whose body is the answer chain)
    /// into the card's inbox slot for this node.
    Wreq {
        /// The card (EDM node id).
        dst: u16,
        /// Byte address in the card's EDM memory (`inbox_addr(node, slot)`).
        addr: u64,
        /// The record written (`len | rsvd | seq | chain`).
        record: Vec<u8>,
        /// The answers did not fit a record: the chain is empty (it still frees the slot).
        dropped: bool,
    },
}

/// How memory node `node` (its EDM node id) serves the record `bytes` that `peer`
/// wrote into its inbox slot `slot`: the record is parsed ([`map::parse_record`]),
/// its Clio packet handed to `handle` (the node's Clio board; each answer packet to
/// the callback), and the answers become a chain echoing the record's `seq`. The
/// memory node's RTL front end (`rtl/edm_clio_node.sv`) is checked against this.
pub fn serve_record(
    node: u16,
    peer: u16,
    slot: u16,
    bytes: &[u8],
    handle: impl FnOnce(&[u8], &mut dyn FnMut(&[u8])),
) -> NodeReply {
    let Ok(r) = map::parse_record(bytes) else {
        return NodeReply::Bad;
    };
    let seq = r.seq;
    let is_read = r.body.get(field::OPCODE) == Some(&(Opcode::Read as u8));
    let mut out: Vec<Vec<u8>> = Vec::new();
    handle(r.body, &mut |p| out.push(p.to_vec()));
    if is_read {
        let mut chain = vec![0u8; OUTBOX_SLOT_BYTES as usize];
        let chain = map::emit_chain(seq, out.iter().map(|p| p.as_slice()), &mut chain)
            .ok()
            .map(|n| chain[..n].to_vec());
        return NodeReply::Outbox {
            addr: outbox_addr(peer, slot),
            chain,
        };
    }
    let mut chain = vec![0u8; map::MAX_RECORD_PACKET];
    let (n, dropped) = match map::emit_chain(seq, out.iter().map(|p| p.as_slice()), &mut chain) {
        Ok(n) => (n, false),
        // An empty chain still frees the card's slot.
        Err(_) => (
            map::emit_chain(seq, std::iter::empty(), &mut chain).unwrap_or(0),
            true,
        ),
    };
    let mut record = vec![0u8; map::RECORD_HEADER + n];
    let _ = map::emit_record(seq, &chain[..n], &mut record);
    NodeReply::Wreq {
        dst: peer,
        addr: inbox_addr(node, slot),
        record,
        dropped,
    }
}
