//! Packet-switched baselines over one output-queued switch: DCTCP, pFabric, PFC with DCQCN,
//! CXL-style credit flow control, and the idealized receiver-driven transport (IRD).
//!
//! Common model: every node has an uplink and a downlink of the configured rate; a packet is
//! serialized on the uplink, crosses one hop, is stored in the switch and queued at the egress
//! port of its destination, serialized on the downlink and crosses one more hop. Packets carry
//! `mtu_bytes` of payload (the CXL flavor uses 256 B flits); a read is an RREQ packet followed by
//! the response flow from the memory node. Receivers acknowledge data; ACKs, CNPs, credits,
//! pause frames and IRD tokens are delivered after their fixed path latency without occupying
//! data links (they are small and would ride at high priority).
//!
//! What differs per [`Flavor`]:
//! * `Dctcp` — per-message flows with a DCTCP window (initial 10 packets, ECN marking above
//!   `K` at the egress, α gain 1/16), FIFO egress with a drop-tail buffer, retransmission after
//!   an RTO; hosts serve their active flows round-robin (as do the PFC hosts, and the CXL
//!   hosts unless [`SimConfig::cxl_host_fifo`] sends each host's messages in issue order, over
//!   [`SimConfig::cxl_host_queues`] transaction queues).
//! * `Pfabric` — hosts send the flow with the least remaining bytes first with a window of one
//!   BDP, egress queues dequeue by the same priority and drop the lowest-priority packet when
//!   full, RTO of 3 base RTTs.
//! * `Pfc` — RoCE hosts with one reliable-connection queue pair per destination (its requests,
//!   and separately its read responses, leave in issue order unless [`SimConfig::pfc_in_order`]
//!   is off; the NIC interleaves the rest packet by packet); lossless: when the bytes an
//!   ingress port holds in the switch exceed `Xoff` the switch pauses that node's uplink (one
//!   hop later) until they drop below `Xon`, blocking all its traffic (head-of-line blocking);
//!   DCQCN per node pair cuts the sending rate on CNPs (ECN above `K`) and recovers by halving
//!   the gap to the target rate every period.
//! * `Cxl` — credit-based link flow control, input-queued: a node may only send while it holds
//!   credits for its FIFO ingress buffer in the switch; the head packet of an ingress moves to
//!   its egress only when the egress buffer has room, and credits return one hop after the
//!   packet leaves the ingress. An incast fills the victim egress, and every ingress whose head
//!   packet is destined to it stops, with all its other traffic (head-of-line blocking).
//! * `Ird` — receivers learn of every new flow in zero time and send tokens, one per packet,
//!   paced at their line rate, to their flow with the fewest remaining bytes (at most one BDP of
//!   outstanding tokens per flow); senders transmit only against tokens, SRPT among flows with
//!   tokens. A sender holding tokens from several receivers serves them one at a time, which
//!   is where receiver bandwidth is lost.

use std::collections::VecDeque;

use crate::config::SimConfig;
use crate::event::EventQueue;
use crate::workload::{Kind, Message};
use crate::{RunResult, SimError};

/// `Flow::stream` of a flow no ordering stream holds back.
const UNORDERED: u32 = u32::MAX;

/// Which baseline the packet engine models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// DCTCP.
    Dctcp,
    /// pFabric.
    Pfabric,
    /// PFC + DCQCN.
    Pfc,
    /// CXL credit-based flow control.
    Cxl,
    /// Idealized receiver-driven transport.
    Ird,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Flavor::Dctcp => "dctcp",
            Flavor::Pfabric => "pfabric",
            Flavor::Pfc => "pfc",
            Flavor::Cxl => "cxl",
            Flavor::Ird => "ird",
        }
    }
}

/// Tunables of the baselines (bytes and picoseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Egress buffer per port for DCTCP (drop tail).
    pub dctcp_buffer: u64,
    /// ECN marking threshold for DCTCP and DCQCN.
    pub ecn_k: u64,
    /// DCTCP initial window in packets.
    pub dctcp_init_cwnd: f64,
    /// DCTCP/pFabric retransmission timeout.
    pub dctcp_rto_ps: u64,
    /// pFabric egress buffer per port.
    pub pfabric_buffer: u64,
    /// PFC pause threshold per ingress port.
    pub pfc_xoff: u64,
    /// PFC resume threshold per ingress port.
    pub pfc_xon: u64,
    /// DCQCN rate-increase period.
    pub dcqcn_period_ps: u64,
    /// CXL ingress buffer per port (the node's credits).
    pub cxl_credits: u64,
    /// CXL egress buffer per port: an ingress head waits (blocking its FIFO) until it fits.
    pub cxl_egress_buffer: u64,
    /// CXL flit payload per packet.
    pub cxl_packet: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            dctcp_buffer: 256 * 1024,
            ecn_k: 16 * 1024,
            dctcp_init_cwnd: 10.0,
            dctcp_rto_ps: 20_000_000,
            pfabric_buffer: 24 * 1024,
            pfc_xoff: 32 * 1024,
            pfc_xon: 28 * 1024,
            dcqcn_period_ps: 1_500_000,
            cxl_credits: 4 * 1024,
            cxl_egress_buffer: 1024,
            cxl_packet: 256,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Packet {
    flow: u32,
    seq: u32,
    bytes: u32,
    src: u16,
    dst: u16,
    /// pFabric priority: the flow's remaining bytes when sent (lower first).
    prio: u64,
    ecn: bool,
    /// Time the sender started transmitting it (for the RTO of a dropped packet).
    sent: u64,
}

#[derive(Debug, Clone)]
struct Flow {
    msg: u32,
    /// False for the RREQ of a read.
    data: bool,
    src: u16,
    dst: u16,
    bytes: u64,
    npkts: u32,
    pkt_bytes: u32,
    next_seq: u32,
    rtx: VecDeque<u32>,
    inflight: u32,
    acked: u32,
    received: Vec<bool>,
    received_count: u32,
    in_active: bool,
    // DCTCP state.
    cwnd: f64,
    ssthresh: f64,
    alpha: f64,
    win_end: u32,
    win_acked: u32,
    win_marked: u32,
    /// Last time the host sent a packet of this flow (round-robin among flows).
    last_tx: u64,
    /// The host ordering stream this flow belongs to ([`UNORDERED`] if none): only the
    /// oldest flow of a stream with data to send may send (CXL in issue order: its
    /// transaction queue; PFC in order: its queue pair's requester or responder stream).
    stream: u32,
    // IRD state.
    tokens: u32,
    granted: u32,
}

impl Flow {
    fn size_of(&self, seq: u32) -> u32 {
        let start = u64::from(seq) * u64::from(self.pkt_bytes);
        (self.bytes - start).min(u64::from(self.pkt_bytes)) as u32
    }

    fn remaining_unacked(&self) -> u64 {
        self.bytes
            .saturating_sub(u64::from(self.acked) * u64::from(self.pkt_bytes))
    }

    fn has_unsent(&self) -> bool {
        !self.rtx.is_empty() || self.next_seq < self.npkts
    }
}

/// DCQCN rate state of one node pair.
#[derive(Debug, Clone, Copy)]
struct Dcqcn {
    /// Current rate as a fraction of line rate.
    rate: f64,
    target: f64,
    alpha: f64,
    last_update: u64,
    next_send: u64,
    last_cnp: u64,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Issue(u32),
    HostTx(u16),
    Arrive(Packet),
    EgressTx(u16),
    Deliver(Packet),
    Ack { flow: u32, ecn: bool },
    Timeout { flow: u32, seq: u32 },
    Pause(u16),
    Resume(u16),
    Credit(u16, u32),
    TokenTx(u16),
    Token(u32),
    Cnp(usize),
}

struct Engine<'a> {
    cfg: SimConfig,
    p: Params,
    flavor: Flavor,
    msgs: &'a [Message],
    q: EventQueue<Ev>,
    flows: Vec<Flow>,
    res: RunResult,
    /// Per host: flows with something to send.
    active: Vec<Vec<u32>>,
    tx_busy: Vec<u64>,
    tx_pending: Vec<bool>,
    egress: Vec<VecDeque<(u64, Packet)>>,
    egress_bytes: Vec<u64>,
    eg_busy: Vec<u64>,
    eg_pending: Vec<bool>,
    ingress_bytes: Vec<u64>,
    paused: Vec<bool>,
    pause_sent: Vec<bool>,
    credits: Vec<u64>,
    dcqcn: Vec<Dcqcn>,
    /// IRD: per receiver, flows destined to it with packets not yet granted.
    rx_pending: Vec<Vec<u32>>,
    tok_busy: Vec<u64>,
    tok_pending: Vec<bool>,
    arrivals: u64,
    /// CXL: per ingress port, packets waiting in arrival order for room at their egress.
    ingress_fifo: Vec<VecDeque<Packet>>,
    /// CXL: per egress port, ingress ports whose head packet waits for it.
    waiting: Vec<VecDeque<u16>>,
    /// CXL: ingress port is registered in some `waiting` list.
    blocked: Vec<bool>,
    /// Per ordering stream (`Flow::stream`), the `pick_epoch` in which its head was considered.
    stream_seen: Vec<u32>,
    pick_epoch: u32,
}

/// Run `flavor` over `msgs`.
pub fn run(cfg: &SimConfig, msgs: &[Message], flavor: Flavor) -> Result<RunResult, SimError> {
    run_with(cfg, msgs, flavor, Params::default())
}

/// Run `flavor` over `msgs` with explicit tunables.
pub fn run_with(
    cfg: &SimConfig,
    msgs: &[Message],
    flavor: Flavor,
    p: Params,
) -> Result<RunResult, SimError> {
    let n = cfg.nodes;
    let mut e = Engine {
        cfg: *cfg,
        p,
        flavor,
        msgs,
        q: EventQueue::new(),
        flows: Vec::with_capacity(msgs.len() * 2),
        res: RunResult::new(msgs.len()),
        active: vec![Vec::new(); n],
        tx_busy: vec![0; n],
        tx_pending: vec![false; n],
        egress: vec![VecDeque::new(); n],
        egress_bytes: vec![0; n],
        eg_busy: vec![0; n],
        eg_pending: vec![false; n],
        ingress_bytes: vec![0; n],
        paused: vec![false; n],
        pause_sent: vec![false; n],
        credits: vec![p.cxl_credits; n],
        dcqcn: if flavor == Flavor::Pfc {
            vec![
                Dcqcn {
                    rate: 1.0,
                    target: 1.0,
                    alpha: 1.0,
                    last_update: 0,
                    next_send: 0,
                    last_cnp: 0
                };
                n * n
            ]
        } else {
            Vec::new()
        },
        rx_pending: vec![Vec::new(); n],
        tok_busy: vec![0; n],
        tok_pending: vec![false; n],
        arrivals: 0,
        ingress_fifo: vec![VecDeque::new(); if flavor == Flavor::Cxl { n } else { 0 }],
        waiting: vec![VecDeque::new(); if flavor == Flavor::Cxl { n } else { 0 }],
        blocked: vec![false; n],
        stream_seen: vec![0; (2 * n).max(64)],
        pick_epoch: 0,
    };
    for m in msgs {
        e.q.push(m.arrival, Ev::Issue(m.id));
    }
    while let Some((t, ev)) = e.q.pop() {
        if t > cfg.time_limit_ps {
            return Err(SimError::TimeLimit {
                scheme: flavor.name(),
                limit_ps: cfg.time_limit_ps,
            });
        }
        e.handle(t, ev);
    }
    e.res.events = e.q.processed();
    Ok(e.res)
}

impl Engine<'_> {
    fn base_rtt(&self) -> u64 {
        4 * self.cfg.hop_ps() + 2 * self.cfg.ser_ps(u64::from(self.cfg.mtu_bytes))
    }

    fn new_flow(&mut self, t: u64, msg: u32, data: bool, src: u16, dst: u16, bytes: u64) {
        let pkt_bytes = match self.flavor {
            Flavor::Cxl => self.p.cxl_packet,
            _ => self.cfg.mtu_bytes,
        };
        let npkts = bytes.div_ceil(u64::from(pkt_bytes)) as u32;
        let bdp_pkts = (self.cfg.bdp_bytes() as f64 / f64::from(pkt_bytes))
            .ceil()
            .max(2.0);
        let cwnd = match self.flavor {
            Flavor::Dctcp => self.p.dctcp_init_cwnd,
            Flavor::Pfabric => bdp_pkts,
            _ => f64::INFINITY,
        };
        let stream = match self.flavor {
            Flavor::Cxl if self.cfg.cxl_host_fifo => u32::from(self.shortest_queue(src)),
            Flavor::Pfc if self.cfg.pfc_in_order => {
                // A queue pair's requester stream (writes, RREQs) and its responder stream
                // (read responses) are ordered separately.
                let responder = data && self.msgs[msg as usize].kind == Kind::Read;
                2 * u32::from(dst) + u32::from(responder)
            }
            _ => UNORDERED,
        };
        let id = self.flows.len() as u32;
        self.flows.push(Flow {
            msg,
            data,
            src,
            dst,
            bytes,
            npkts,
            pkt_bytes,
            next_seq: 0,
            rtx: VecDeque::new(),
            inflight: 0,
            acked: 0,
            received: vec![false; npkts as usize],
            received_count: 0,
            in_active: true,
            cwnd,
            ssthresh: f64::INFINITY,
            alpha: 1.0,
            win_end: 0,
            win_acked: 0,
            win_marked: 0,
            last_tx: 0,
            stream,
            tokens: 0,
            granted: 0,
        });
        self.active[usize::from(src)].push(id);
        if self.flavor == Flavor::Ird && data {
            self.rx_pending[usize::from(dst)].push(id);
            self.kick_tokens(dst, t);
        }
        self.kick_tx(src, t);
    }

    /// CXL in issue order: the transaction queue of host `h` with the fewest unsent bytes
    /// (lowest index on ties), where a new message goes.
    fn shortest_queue(&self, h: u16) -> u8 {
        let mut backlog = [0u64; 64];
        for &f in &self.active[usize::from(h)] {
            let fl = &self.flows[f as usize];
            let sent = u64::from(fl.next_seq) * u64::from(fl.pkt_bytes);
            backlog[fl.stream as usize] += fl.bytes.saturating_sub(sent);
        }
        let k = self.cfg.cxl_host_queues as usize;
        (0..k).min_by_key(|&q| (backlog[q], q)).unwrap_or(0) as u8
    }

    fn kick_tx(&mut self, h: u16, t: u64) {
        let i = usize::from(h);
        if !self.tx_pending[i] {
            self.tx_pending[i] = true;
            self.q.push(t.max(self.tx_busy[i]), Ev::HostTx(h));
        }
    }

    fn kick_egress(&mut self, d: u16, t: u64) {
        let i = usize::from(d);
        if !self.eg_pending[i] {
            self.eg_pending[i] = true;
            self.q.push(t.max(self.eg_busy[i]), Ev::EgressTx(d));
        }
    }

    fn kick_tokens(&mut self, d: u16, t: u64) {
        let i = usize::from(d);
        if !self.tok_pending[i] {
            self.tok_pending[i] = true;
            self.q.push(t.max(self.tok_busy[i]), Ev::TokenTx(d));
        }
    }

    fn pair(&self, src: u16, dst: u16) -> usize {
        usize::from(src) * self.cfg.nodes + usize::from(dst)
    }

    /// DCQCN: apply the rate recoveries due by `t` and return the pair's state.
    fn dcqcn_at(&mut self, pair: usize, t: u64) -> Dcqcn {
        let period = self.p.dcqcn_period_ps;
        let d = &mut self.dcqcn[pair];
        if d.rate < 1.0 && t > d.last_update + period {
            let steps = ((t - d.last_update) / period).min(16);
            for k in 0..steps {
                if k >= 5 {
                    d.target = (d.target + 0.05).min(1.0);
                }
                d.rate = ((d.rate + d.target) / 2.0).min(1.0);
                d.alpha *= 1.0 - 1.0 / 16.0;
            }
            d.last_update += steps * period;
        }
        *d
    }

    /// Pick the next packet host `h` may send at `t`; returns the flow and the earliest later
    /// time something may become sendable (pacing).
    fn pick(&mut self, h: u16, t: u64) -> (Option<u32>, Option<u64>) {
        let mut best: Option<(u64, u32)> = None;
        let mut later: Option<u64> = None;
        let mut list = std::mem::take(&mut self.active[usize::from(h)]);
        let flows = &mut self.flows;
        list.retain(|&f| {
            let keep = flows[f as usize].has_unsent();
            flows[f as usize].in_active = keep;
            keep
        });
        // Ordered streams: only the oldest flow of each may send (the list is in issue order).
        self.pick_epoch = self.pick_epoch.wrapping_add(1);
        if self.pick_epoch == 0 {
            // Wrapped: forget every stamp so none can match a reused epoch.
            self.stream_seen.fill(0);
            self.pick_epoch = 1;
        }
        for &f in &list {
            let fl = &self.flows[f as usize];
            if fl.stream != UNORDERED {
                let seen = &mut self.stream_seen[fl.stream as usize];
                if *seen == self.pick_epoch {
                    continue;
                }
                *seen = self.pick_epoch;
            }
            let window_ok = f64::from(fl.inflight) < fl.cwnd;
            let ok = match self.flavor {
                Flavor::Dctcp | Flavor::Pfabric => window_ok,
                Flavor::Ird => !fl.data || fl.tokens > 0,
                Flavor::Pfc => {
                    let pair = self.pair(fl.src, fl.dst);
                    let st = self.dcqcn_at(pair, t);
                    if st.next_send > t {
                        later = Some(later.map_or(st.next_send, |l: u64| l.min(st.next_send)));
                        false
                    } else {
                        true
                    }
                }
                Flavor::Cxl => true,
            };
            if !ok {
                continue;
            }
            let fl = &self.flows[f as usize];
            let key = match self.flavor {
                Flavor::Pfabric | Flavor::Ird => fl.remaining_unacked(),
                // Round-robin (for CXL in issue order, among the queue heads): least recently
                // served flow first (new flows first), then by age.
                _ => fl.last_tx,
            };
            if best.is_none_or(|(k, bf)| (key, f) < (k, bf)) {
                best = Some((key, f));
            }
        }
        self.active[usize::from(h)] = list;
        (best.map(|b| b.1), later)
    }

    fn handle(&mut self, t: u64, ev: Ev) {
        match ev {
            Ev::Issue(id) => {
                let m = self.msgs[id as usize];
                match m.kind {
                    Kind::Write => self.new_flow(t, id, true, m.requester, m.target, m.bytes),
                    Kind::Read => {
                        let rreq = u64::from(self.cfg.rreq_bytes);
                        self.new_flow(t, id, false, m.requester, m.target, rreq)
                    }
                }
            }
            Ev::HostTx(h) => self.host_tx(h, t),
            Ev::Arrive(pkt) => self.arrive(pkt, t),
            Ev::EgressTx(d) => self.egress_tx(d, t),
            Ev::Deliver(pkt) => self.deliver(pkt, t),
            Ev::Ack { flow, ecn } => self.ack(flow, ecn, t),
            Ev::Timeout { flow, seq } => {
                // Scheduled only for packets that were dropped: the sender's RTO fires.
                let fl = &mut self.flows[flow as usize];
                fl.inflight = fl.inflight.saturating_sub(1);
                fl.rtx.push_back(seq);
                if self.flavor == Flavor::Dctcp {
                    fl.ssthresh = (fl.cwnd / 2.0).max(2.0);
                    fl.cwnd = 1.0;
                }
                let src = fl.src;
                if !fl.in_active {
                    fl.in_active = true;
                    self.active[usize::from(src)].push(flow);
                }
                self.kick_tx(src, t);
            }
            Ev::Pause(h) => self.paused[usize::from(h)] = true,
            Ev::Resume(h) => {
                self.paused[usize::from(h)] = false;
                self.kick_tx(h, t);
            }
            Ev::Credit(h, b) => {
                self.credits[usize::from(h)] += u64::from(b);
                self.kick_tx(h, t);
            }
            Ev::TokenTx(d) => self.token_tx(d, t),
            Ev::Token(f) => {
                self.flows[f as usize].tokens += 1;
                let src = self.flows[f as usize].src;
                self.kick_tx(src, t);
            }
            Ev::Cnp(pair) => {
                let d = &mut self.dcqcn[pair];
                // At most one rate cut per 2 µs (the DCQCN CNP interval at the sender's NP).
                if t >= d.last_cnp + 2_000_000 || d.last_cnp == 0 {
                    d.last_cnp = t;
                    d.alpha = (1.0 - 1.0 / 16.0) * d.alpha + 1.0 / 16.0;
                    d.target = d.rate;
                    d.rate = (d.rate * (1.0 - d.alpha / 2.0)).max(0.01);
                    d.last_update = t;
                }
            }
        }
    }

    fn host_tx(&mut self, h: u16, t: u64) {
        let hi = usize::from(h);
        self.tx_pending[hi] = false;
        if t < self.tx_busy[hi] {
            self.kick_tx(h, t);
            return;
        }
        if self.paused[hi] {
            return; // Resume kicks the host.
        }
        let (pick, later) = self.pick(h, t);
        let Some(f) = pick else {
            if let Some(l) = later {
                self.tx_pending[hi] = true;
                self.q.push(l, Ev::HostTx(h));
            }
            return;
        };
        let fl = &self.flows[f as usize];
        let seq = fl.rtx.front().copied().unwrap_or(fl.next_seq);
        let bytes = fl.size_of(seq);
        if self.flavor == Flavor::Cxl {
            if self.credits[hi] < u64::from(bytes) {
                return; // Credit return kicks the host; the head packet blocks everything.
            }
            self.credits[hi] -= u64::from(bytes);
        }
        let fl = &mut self.flows[f as usize];
        if fl.rtx.front() == Some(&seq) {
            fl.rtx.pop_front();
        } else {
            fl.next_seq += 1;
        }
        fl.inflight += 1;
        fl.last_tx = t + 1;
        if self.flavor == Flavor::Ird && fl.data {
            fl.tokens -= 1;
        }
        let prio = fl.remaining_unacked();
        let (src, dst, data) = (fl.src, fl.dst, fl.data);
        if data {
            self.res.sent_bytes += u64::from(bytes);
        }
        let ser = self.cfg.ser_ps(u64::from(bytes));
        if self.flavor == Flavor::Pfc {
            let pair = self.pair(src, dst);
            let d = &mut self.dcqcn[pair];
            d.next_send = t + (ser as f64 / d.rate) as u64;
        }
        let pkt = Packet {
            flow: f,
            seq,
            bytes,
            src,
            dst,
            prio,
            ecn: false,
            sent: t,
        };
        self.tx_busy[hi] = t + ser;
        self.q.push(t + ser + self.cfg.hop_ps(), Ev::Arrive(pkt));
        self.kick_tx(h, t + ser);
    }

    fn drop_packet(&mut self, pkt: Packet, t: u64) {
        self.res.drops += 1;
        let rto = match self.flavor {
            Flavor::Dctcp => self.p.dctcp_rto_ps,
            _ => 3 * self.base_rtt(),
        };
        self.q.push(
            (pkt.sent + rto).max(t),
            Ev::Timeout {
                flow: pkt.flow,
                seq: pkt.seq,
            },
        );
    }

    fn arrive(&mut self, mut pkt: Packet, t: u64) {
        let d = usize::from(pkt.dst);
        let b = u64::from(pkt.bytes);
        match self.flavor {
            Flavor::Dctcp => {
                if self.egress_bytes[d] + b > self.p.dctcp_buffer {
                    self.drop_packet(pkt, t);
                    return;
                }
                pkt.ecn = self.egress_bytes[d] + b > self.p.ecn_k;
            }
            Flavor::Pfabric => {
                if self.egress_bytes[d] + b > self.p.pfabric_buffer {
                    // Drop the lowest-priority packet (largest remaining size, latest arrival).
                    let victim = self.egress[d]
                        .iter()
                        .enumerate()
                        .max_by_key(|(_, (order, p))| (p.prio, *order))
                        .map(|(i, (_, p))| (i, p.prio));
                    match victim {
                        Some((i, prio)) if prio > pkt.prio => {
                            let (_, v) = self.egress[d].remove(i).expect("victim index");
                            self.egress_bytes[d] -= u64::from(v.bytes);
                            self.drop_packet(v, t);
                        }
                        _ => {
                            self.drop_packet(pkt, t);
                            return;
                        }
                    }
                }
            }
            Flavor::Pfc => {
                pkt.ecn = self.egress_bytes[d] + b > self.p.ecn_k;
                let s = usize::from(pkt.src);
                self.ingress_bytes[s] += b;
                if self.ingress_bytes[s] > self.p.pfc_xoff && !self.pause_sent[s] {
                    self.pause_sent[s] = true;
                    self.q.push(t + self.cfg.hop_ps(), Ev::Pause(pkt.src));
                }
            }
            Flavor::Cxl => {
                // Input-queued: the packet waits in its ingress FIFO for egress buffer room.
                self.ingress_fifo[usize::from(pkt.src)].push_back(pkt);
                self.cxl_forward(pkt.src, t);
                return;
            }
            Flavor::Ird => {}
        }
        self.arrivals += 1;
        self.egress[d].push_back((self.arrivals, pkt));
        self.egress_bytes[d] += b;
        self.kick_egress(pkt.dst, t);
    }

    /// CXL: move head packets of ingress `i` to their egress while they fit; a head that does
    /// not fit blocks the whole FIFO (head-of-line) until its egress drains. Leaving the ingress
    /// buffer returns the packet's credits to the node one hop later.
    fn cxl_forward(&mut self, i: u16, t: u64) {
        let ii = usize::from(i);
        if self.blocked[ii] {
            return;
        }
        while let Some(&pkt) = self.ingress_fifo[ii].front() {
            let d = usize::from(pkt.dst);
            let b = u64::from(pkt.bytes);
            if self.egress_bytes[d] > 0 && self.egress_bytes[d] + b > self.p.cxl_egress_buffer {
                self.blocked[ii] = true;
                self.waiting[d].push_back(i);
                return;
            }
            self.ingress_fifo[ii].pop_front();
            self.arrivals += 1;
            self.egress[d].push_back((self.arrivals, pkt));
            self.egress_bytes[d] += b;
            self.kick_egress(pkt.dst, t);
            self.q.push(t + self.cfg.hop_ps(), Ev::Credit(i, pkt.bytes));
        }
    }

    fn egress_tx(&mut self, d: u16, t: u64) {
        let di = usize::from(d);
        self.eg_pending[di] = false;
        if t < self.eg_busy[di] {
            self.kick_egress(d, t);
            return;
        }
        let next = if self.flavor == Flavor::Pfabric {
            let i = self.egress[di]
                .iter()
                .enumerate()
                .min_by_key(|(_, (order, p))| (p.prio, *order))
                .map(|(i, _)| i);
            i.and_then(|i| self.egress[di].remove(i))
        } else {
            self.egress[di].pop_front()
        };
        let Some((_, pkt)) = next else { return };
        let b = u64::from(pkt.bytes);
        self.egress_bytes[di] -= b;
        let ser = self.cfg.ser_ps(b);
        let hop = self.cfg.hop_ps();
        self.eg_busy[di] = t + ser;
        self.q.push(t + ser + hop, Ev::Deliver(pkt));
        let s = usize::from(pkt.src);
        match self.flavor {
            Flavor::Pfc => {
                self.ingress_bytes[s] -= b;
                if self.pause_sent[s] && self.ingress_bytes[s] < self.p.pfc_xon {
                    self.pause_sent[s] = false;
                    self.q.push(t + hop, Ev::Resume(pkt.src));
                }
            }
            Flavor::Cxl => {
                // Room at this egress: blocked ingress heads retry in round-robin order; one
                // that moves a packet and blocks again rejoins at the back.
                for _ in 0..self.waiting[di].len() {
                    if self.egress_bytes[di] >= self.p.cxl_egress_buffer {
                        break;
                    }
                    let Some(i) = self.waiting[di].pop_front() else {
                        break;
                    };
                    self.blocked[usize::from(i)] = false;
                    self.cxl_forward(i, t);
                }
            }
            _ => {}
        }
        if !self.egress[di].is_empty() {
            self.kick_egress(d, t + ser);
        }
    }

    fn deliver(&mut self, pkt: Packet, t: u64) {
        let hop = self.cfg.hop_ps();
        let flavor = self.flavor;
        let fl = &mut self.flows[pkt.flow as usize];
        let first = !fl.received[pkt.seq as usize];
        if first {
            fl.received[pkt.seq as usize] = true;
            fl.received_count += 1;
            if fl.data {
                self.res.delivered[fl.msg as usize] += u64::from(pkt.bytes);
            }
        } else if fl.data {
            self.res.duplicate_bytes += u64::from(pkt.bytes);
        }
        let complete = first && fl.received_count == fl.npkts;
        let (msg, data) = (fl.msg, fl.data);
        match flavor {
            Flavor::Dctcp | Flavor::Pfabric => {
                self.q.push(
                    t + 2 * hop,
                    Ev::Ack {
                        flow: pkt.flow,
                        ecn: pkt.ecn,
                    },
                );
            }
            Flavor::Pfc => {
                fl.inflight = fl.inflight.saturating_sub(1);
                if pkt.ecn {
                    let pair = self.pair(pkt.src, pkt.dst);
                    self.q.push(t + 2 * hop, Ev::Cnp(pair));
                }
            }
            Flavor::Ird => {
                fl.inflight = fl.inflight.saturating_sub(1);
                if data {
                    self.kick_tokens(pkt.dst, t);
                }
            }
            Flavor::Cxl => fl.inflight = fl.inflight.saturating_sub(1),
        }
        if complete {
            if data {
                self.res.finish[msg as usize] = Some(t);
            } else {
                // The RREQ reached the memory node: it returns the data (memory access time 0).
                let m = self.msgs[msg as usize];
                self.new_flow(t, msg, true, m.target, m.requester, m.bytes);
            }
        }
    }

    fn ack(&mut self, flow: u32, ecn: bool, t: u64) {
        let fl = &mut self.flows[flow as usize];
        fl.inflight = fl.inflight.saturating_sub(1);
        fl.acked += 1;
        if self.flavor == Flavor::Dctcp {
            fl.win_acked += 1;
            fl.win_marked += u32::from(ecn);
            if fl.acked >= fl.win_end {
                let frac = f64::from(fl.win_marked) / f64::from(fl.win_acked.max(1));
                fl.alpha = (1.0 - 1.0 / 16.0) * fl.alpha + frac / 16.0;
                if fl.win_marked > 0 {
                    fl.cwnd = (fl.cwnd * (1.0 - fl.alpha / 2.0)).max(1.0);
                    fl.ssthresh = fl.cwnd;
                }
                fl.win_end = fl.acked + fl.cwnd.ceil() as u32;
                fl.win_acked = 0;
                fl.win_marked = 0;
            } else if !ecn {
                fl.cwnd += if fl.cwnd < fl.ssthresh {
                    1.0
                } else {
                    1.0 / fl.cwnd
                };
            }
        }
        let src = fl.src;
        self.kick_tx(src, t);
    }

    fn token_tx(&mut self, d: u16, t: u64) {
        let di = usize::from(d);
        self.tok_pending[di] = false;
        if t < self.tok_busy[di] {
            self.kick_tokens(d, t);
            return;
        }
        let bdp = self.cfg.bdp_bytes();
        let flows = &self.flows;
        self.rx_pending[di].retain(|&f| flows[f as usize].granted < flows[f as usize].npkts);
        let best = self.rx_pending[di]
            .iter()
            .copied()
            .filter(|&f| {
                let fl = &flows[f as usize];
                let outstanding =
                    u64::from(fl.granted - fl.received_count) * u64::from(fl.pkt_bytes);
                fl.granted == fl.received_count || outstanding < bdp
            })
            .min_by_key(|&f| {
                let fl = &flows[f as usize];
                (
                    fl.bytes
                        .saturating_sub(u64::from(fl.granted) * u64::from(fl.pkt_bytes)),
                    f,
                )
            });
        let Some(f) = best else { return };
        let fl = &mut self.flows[f as usize];
        let bytes = fl.size_of(fl.granted);
        fl.granted += 1;
        self.q.push(t + 2 * self.cfg.hop_ps(), Ev::Token(f));
        self.tok_busy[di] = t + self.cfg.ser_ps(u64::from(bytes));
        self.kick_tokens(d, self.tok_busy[di]);
    }
}
