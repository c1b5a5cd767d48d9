//! The lab's alternative to EDM: Clio requests as UDP/IPv4 datagrams over a plain
//! store-and-forward Ethernet switch (what `clio bench edm` runs beside the EDM fabric).
//!
//! Every node has a full-duplex link of `link_gbps` to one output-queued switch. A request or
//! an answer is one Ethernet frame: Ethernet header 14 B + IPv4 20 B + UDP 8 B + the Clio
//! packet + FCS 4 B, padded to the 64 B minimum, plus 8 B preamble and 12 B inter-frame gap on
//! the wire. A frame is serialized on the sender's uplink (FIFO), received whole by the switch
//! (store and forward), forwarded after the fixed L2 forwarding latency, queued FIFO at the
//! destination's egress (no drops: the buffers are assumed deep enough, which only flatters
//! Ethernet) and serialized on the downlink. The memory node answers the moment a request has
//! fully arrived (its service time is the Clio fast path's, reported apart, as for EDM).
//!
//! Fixed latencies ([`EthernetConfig::TABLE1`]) are the "Raw Ethernet" column of EDM Table 1
//! (seed `001`): MAC 7.68 ns and PCS 7.68 ns at every end of a link (the sender, the switch's
//! ingress and egress, the receiver), layer-2 forwarding 400 ns in the switch (a switch
//! programmed for exact-match L2 forwarding only), PMA/PMD 19 ns at both ends of every link
//! and 10 ns of propagation per hop. No protocol stack time is charged: Clio's own UDP/IP is
//! in hardware and its cost is the fast path's, outside both fabrics.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Ethernet fabric parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EthernetConfig {
    /// Link rate, Gb/s.
    pub link_gbps: f64,
    /// MAC, ns per traversal (one at each end of a link).
    pub mac_ns: f64,
    /// PCS, ns per traversal.
    pub pcs_ns: f64,
    /// PMA + PMD, ns per traversal.
    pub pma_pmd_ns: f64,
    /// Propagation per hop, ns.
    pub propagation_ns: f64,
    /// Switch layer-2 forwarding (parse, lookup, packet manager, crossbar), ns.
    pub l2_forward_ns: f64,
}

impl EthernetConfig {
    /// 25 GbE (the EDM prototype's rate) with EDM Table 1's raw-Ethernet latencies.
    pub const TABLE1: EthernetConfig = EthernetConfig {
        link_gbps: 25.0,
        mac_ns: 7.68,
        pcs_ns: 7.68,
        pma_pmd_ns: 19.0,
        propagation_ns: 10.0,
        l2_forward_ns: 400.0,
    };

    /// Fixed time of one hop after the last bit is serialized: sender MAC + PCS + PMA/PMD,
    /// cable, receiver PMA/PMD + PCS + MAC.
    pub fn hop_ns(&self) -> f64 {
        2.0 * (self.mac_ns + self.pcs_ns + self.pma_pmd_ns) + self.propagation_ns
    }

    /// Wire time of a frame carrying a `udp_payload`-byte datagram, ns.
    pub fn wire_ns(&self, udp_payload: usize) -> f64 {
        (wire_bytes(udp_payload) * 8) as f64 / self.link_gbps
    }
}

/// Bytes a UDP/IPv4 datagram of `udp_payload` bytes takes on the wire: headers (Ethernet 14,
/// IPv4 20, UDP 8), FCS 4, padded to the 64 B minimum frame, preamble 8 and gap 12.
pub fn wire_bytes(udp_payload: usize) -> usize {
    (14 + 20 + 8 + udp_payload + 4).max(64) + 8 + 12
}

/// One operation: `card` sends a request of `request_bytes` (the Clio packet) to `node`, which
/// answers with `answer_bytes`, at `at_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    /// Arrival, ns.
    pub at_ns: f64,
    /// Sending node.
    pub card: usize,
    /// Answering node.
    pub node: usize,
    /// Clio request packet bytes (the UDP payload).
    pub request_bytes: usize,
    /// Clio answer packet bytes.
    pub answer_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Frame fully received by the switch: (op, is answer).
    AtSwitch(usize, bool),
    /// Frame fully received by its destination node.
    Delivered(usize, bool),
}

/// Run `ops` (any order) through one switch with `nodes` ports; returns each operation's
/// latency (request arrival to the answer's last byte at the card), ns, in `ops` order.
pub fn run(cfg: &EthernetConfig, nodes: usize, ops: &[Op]) -> Vec<f64> {
    // Time in picoseconds as integers, so the event order is exact.
    let ps = |ns: f64| (ns * 1000.0).round() as u64;
    let mut up_free = vec![0u64; nodes];
    let mut down_free = vec![0u64; nodes];
    let mut heap: BinaryHeap<Reverse<(u64, Ev)>> = BinaryHeap::new();
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|&a, &b| ops[a].at_ns.total_cmp(&ops[b].at_ns));
    let mut arrivals: VecDeque<usize> = order.into();
    let mut lat = vec![f64::NAN; ops.len()];
    let hop = ps(cfg.hop_ns());
    let fwd = ps(cfg.l2_forward_ns);
    // Serialize on a FIFO link: start when the link is free, done after the wire time.
    let send = |free: &mut u64, t: u64, bytes: usize| -> u64 {
        let start = t.max(*free);
        *free = start + ps(cfg.wire_ns(bytes));
        *free
    };
    loop {
        let next_arrival = arrivals.front().map(|&i| ps(ops[i].at_ns));
        let next_event = heap.peek().map(|Reverse((t, _))| *t);
        match (next_arrival, next_event) {
            (None, None) => break,
            (Some(a), e) if e.is_none_or(|e| a <= e) => {
                let i = arrivals.pop_front().unwrap_or_default();
                let o = &ops[i];
                let done = send(&mut up_free[o.card], a, o.request_bytes);
                heap.push(Reverse((done + hop, Ev::AtSwitch(i, false))));
            }
            _ => {
                let Some(Reverse((t, ev))) = heap.pop() else {
                    break;
                };
                match ev {
                    Ev::AtSwitch(i, answer) => {
                        let o = &ops[i];
                        let (to, bytes) = if answer {
                            (o.card, o.answer_bytes)
                        } else {
                            (o.node, o.request_bytes)
                        };
                        let done = send(&mut down_free[to], t + fwd, bytes);
                        heap.push(Reverse((done + hop, Ev::Delivered(i, answer))));
                    }
                    Ev::Delivered(i, false) => {
                        let o = &ops[i];
                        let done = send(&mut up_free[o.node], t, o.answer_bytes);
                        heap.push(Reverse((done + hop, Ev::AtSwitch(i, true))));
                    }
                    Ev::Delivered(i, true) => {
                        lat[i] = (t - ps(ops[i].at_ns)) as f64 / 1000.0;
                    }
                }
            }
        }
    }
    lat
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(at_ns: f64, card: usize) -> Op {
        Op {
            at_ns,
            card,
            node: 2,
            request_bytes: 32,
            answer_bytes: 96,
        }
    }

    #[test]
    fn unloaded_latency_is_two_store_and_forward_round_trips() {
        let c = EthernetConfig::TABLE1;
        let l = run(&c, 3, &[op(0.0, 0)]);
        let want = 2.0 * (c.wire_ns(32) + c.wire_ns(96)) + 4.0 * c.hop_ns() + 2.0 * c.l2_forward_ns;
        assert!((l[0] - want).abs() < 0.01, "{} vs {want}", l[0]);
        // One leg without serialization is Table 1's raw-Ethernet write total (557.44 ns:
        // 461.44 ns of MAC, PCS and L2 forwarding, 4 x 19 ns PMA/PMD, 2 x 10 ns propagation).
        let leg = 2.0 * c.hop_ns() + c.l2_forward_ns;
        assert!((leg - 557.44).abs() < 1e-9, "{leg}");
        assert_eq!(wire_bytes(0), 84);
        assert_eq!(wire_bytes(1472), 1538);
    }

    #[test]
    fn incast_queues_at_the_egress() {
        let c = EthernetConfig::TABLE1;
        let alone = run(&c, 3, &[op(0.0, 0)])[0];
        let both = run(&c, 3, &[op(0.0, 0), op(0.0, 1)]);
        // Both requests reach the switch together; the second waits one request frame on the
        // downlink to the node, then its answer waits for the rest of the first answer's frame
        // on the node's uplink: one answer frame in all.
        assert!((both[0] - alone).abs() < 0.01);
        let extra = both[1] - alone;
        assert!((extra - c.wire_ns(96)).abs() < 0.01, "{extra}");
    }
}
