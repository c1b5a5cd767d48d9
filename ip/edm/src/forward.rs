//! Virtual-circuit forwarding in the switch PHY (EDM §3.2.2): a grant opens a circuit at
//! the sender's ingress; the chunk's blocks, checked against it by their header alone, go to
//! the egress with a fixed latency and the header's `peer` rewritten to the source port.
//! Each egress sends forwarded messages whole, in the order they started.

use std::collections::VecDeque;

use clio_wire::edm::{block_type, field, Block66, BlockClass, MsgHeader, MsgKind};

use crate::phy::MemBlock;

/// A granted chunk an ingress port may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Circuit {
    /// Message kind (WREQ or RRES).
    pub kind: MsgKind,
    /// Message id.
    pub id: u8,
    /// Egress port (the message's destination).
    pub dst: u16,
    /// Bytes granted.
    pub len: u16,
}

/// Forwarding counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwardCounters {
    /// Chunks that matched a circuit and were forwarded.
    pub forwarded: u64,
    /// WREQ/RRES chunks without a matching circuit (dropped).
    pub no_circuit: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    None,
    Forward(u16),
    Drop,
}

#[derive(Debug, Clone)]
struct Ingress {
    circuits: Vec<Circuit>,
    cut: Cut,
}

#[derive(Debug, Clone)]
struct Egress {
    msgs: VecDeque<VecDeque<(u64, Block66)>>,
    open: Vec<Option<usize>>,
    in_fwd: bool,
}

/// The forwarding plane of an `N`-port switch.
#[derive(Debug, Clone)]
pub struct Forwarder {
    latency: u64,
    ingress: Vec<Ingress>,
    egress: Vec<Egress>,
    /// Counters.
    pub counters: ForwardCounters,
}

/// An /MT/ with no data: closes a forwarded message whose sender cut it short, so the egress
/// moves on and the receiver counts the damage.
pub fn close_block() -> Block66 {
    Block66::control(block_type::MT, [0; 7])
}

impl Forwarder {
    /// `ports` ports, `latency` cycles from ingress to egress.
    pub fn new(ports: usize, latency: u64) -> Self {
        Forwarder {
            latency,
            ingress: vec![
                Ingress {
                    circuits: Vec::new(),
                    cut: Cut::None
                };
                ports
            ],
            egress: vec![
                Egress {
                    msgs: VecDeque::new(),
                    open: vec![None; ports],
                    in_fwd: false
                };
                ports
            ],
            counters: ForwardCounters::default(),
        }
    }

    /// Open a circuit at ingress `src` (the scheduler granted it a chunk).
    pub fn grant(&mut self, src: u16, c: Circuit) {
        self.ingress[src as usize].circuits.push(c);
    }

    /// Open circuits at ingress `src`.
    pub fn circuits(&self, src: u16) -> usize {
        self.ingress[src as usize].circuits.len()
    }

    /// True when no forwarded block is waiting at any egress.
    pub fn is_empty(&self) -> bool {
        self.egress.iter().all(|e| e.msgs.is_empty())
    }

    /// True while egress `d` is in the middle of a forwarded message (it must finish first).
    pub fn mid_message(&self, d: u16) -> bool {
        self.egress.get(d as usize).is_some_and(|e| e.in_fwd)
    }

    /// Take a memory-side block received on ingress `p` at `now`. Forwarded (or dropped)
    /// blocks are consumed; anything else is returned for the notification path.
    pub fn ingress(&mut self, now: u64, p: u16, m: MemBlock) -> Option<MemBlock> {
        let due = now + self.latency;
        let head = match m {
            MemBlock::Start(b) | MemBlock::Single(b) => Some(b),
            _ => None,
        };
        if head.is_some() || matches!(m, MemBlock::Notify(_) | MemBlock::Grant(_)) {
            // Anything but /MD/ or /MT/ ends a message in progress (the RX shim counted it).
            if let Cut::Forward(d) = self.ingress[p as usize].cut {
                self.push(d, p, due, close_block(), false, true);
            }
            self.ingress[p as usize].cut = Cut::None;
        }
        if let Some(b) = head {
            if let Ok(h) = MsgHeader::parse_payload(b.payload) {
                if matches!(h.kind, MsgKind::Wreq | MsgKind::Rres) {
                    let ing = &mut self.ingress[p as usize];
                    let found = ing.circuits.iter().position(|c| {
                        c.kind == h.kind && c.id == h.id && c.dst == h.peer && h.len <= c.len
                    });
                    ing.cut = match found {
                        Some(i) => {
                            ing.circuits.remove(i);
                            self.counters.forwarded += 1;
                            Cut::Forward(h.peer)
                        }
                        None => {
                            self.counters.no_circuit += 1;
                            Cut::Drop
                        }
                    };
                }
            }
        }
        match self.ingress[p as usize].cut {
            Cut::Forward(d) => {
                let (blk, start, end) = match m {
                    MemBlock::Start(b) => (rewrite_peer(b, p), true, false),
                    MemBlock::Single(b) => (rewrite_peer(b, p), true, true),
                    MemBlock::Data(b) => (b, false, false),
                    MemBlock::End(b) => (b, false, true),
                    MemBlock::Notify(_) | MemBlock::Grant(_) => return Some(m),
                };
                self.push(d, p, due, blk, start, end);
                if end {
                    self.ingress[p as usize].cut = Cut::None;
                }
                None
            }
            Cut::Drop => {
                if matches!(m, MemBlock::End(_) | MemBlock::Single(_)) {
                    self.ingress[p as usize].cut = Cut::None;
                }
                None
            }
            Cut::None => Some(m),
        }
    }

    fn push(&mut self, d: u16, p: u16, due: u64, blk: Block66, start: bool, end: bool) {
        let eg = &mut self.egress[d as usize];
        match eg.open[p as usize] {
            Some(i) if !start => eg.msgs[i].push_back((due, blk)),
            _ => {
                eg.msgs.push_back(VecDeque::from([(due, blk)]));
                eg.open[p as usize] = Some(eg.msgs.len() - 1);
            }
        }
        if end {
            eg.open[p as usize] = None;
        }
    }

    /// The forwarded block egress `d` sends at `now`, if one is due. A forwarded message, once
    /// started, is never interrupted; it waits only for a memory unit the port's TX shim is in
    /// the middle of (`mid_unit`).
    pub fn egress(&mut self, now: u64, d: u16, mid_unit: bool) -> Option<Block66> {
        let eg = &mut self.egress[d as usize];
        let due = eg
            .msgs
            .front()
            .and_then(|m| m.front())
            .is_some_and(|&(t, _)| t <= now);
        if !(due && (eg.in_fwd || !mid_unit)) {
            return None;
        }
        let msg = eg.msgs.front_mut().expect("due checked");
        let (_, b) = msg.pop_front().expect("due checked");
        let end = matches!(b.class(), BlockClass::Mt | BlockClass::Mst);
        eg.in_fwd = !end;
        if end {
            eg.msgs.pop_front();
            for o in eg.open.iter_mut().flatten() {
                *o -= 1;
            }
        }
        Some(b)
    }
}

/// Replace the header's `peer` (destination) with the ingress port (source).
pub fn rewrite_peer(b: Block66, src: u16) -> Block66 {
    let shift = field::MSG_PEER_LSB;
    Block66 {
        sync: b.sync,
        payload: (b.payload & !(0xffff << shift)) | ((src as u64) << shift),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::encode;

    fn blocks_of(h: MsgHeader, body: &[u8]) -> Vec<MemBlock> {
        let b = encode(&h, body).unwrap();
        let n = b.len();
        b.into_iter()
            .enumerate()
            .map(|(i, x)| match (i, n) {
                (0, 1) => MemBlock::Single(x),
                (0, _) => MemBlock::Start(x),
                (i, n) if i == n - 1 => MemBlock::End(x),
                _ => MemBlock::Data(x),
            })
            .collect()
    }

    #[test]
    fn granted_chunk_is_forwarded_with_fixed_latency_and_rewritten_peer() {
        let mut f = Forwarder::new(3, 4);
        f.grant(
            0,
            Circuit {
                kind: MsgKind::Wreq,
                id: 5,
                dst: 2,
                len: 16,
            },
        );
        let h = MsgHeader {
            kind: MsgKind::Wreq,
            last: true,
            op: None,
            peer: 2,
            id: 5,
            len: 16,
        };
        let msg = blocks_of(h, &[9; 24]);
        for (t, m) in msg.iter().enumerate() {
            assert!(f.ingress(t as u64, 0, *m).is_none());
        }
        let mut out = Vec::new();
        for t in 0..20 {
            if let Some(b) = f.egress(t, 2, false) {
                out.push((t, b));
            }
        }
        assert_eq!(out.len(), 4);
        assert_eq!(out[0].0, 4);
        let hh = MsgHeader::parse_payload(out[0].1.payload).unwrap();
        assert_eq!(hh.peer, 0);
        assert_eq!(f.counters.forwarded, 1);
    }

    #[test]
    fn chunk_without_circuit_is_dropped_and_counted() {
        let mut f = Forwarder::new(2, 4);
        let h = MsgHeader {
            kind: MsgKind::Rres,
            last: true,
            op: None,
            peer: 1,
            id: 5,
            len: 8,
        };
        for (t, m) in blocks_of(h, &[1; 8]).into_iter().enumerate() {
            assert!(f.ingress(t as u64, 0, m).is_none());
        }
        assert_eq!(f.counters.no_circuit, 1);
        assert!(f.is_empty());
    }
}
