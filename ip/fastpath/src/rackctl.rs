//! Rack control datagrams (`clio-control`, magic `"CLRK"`): the fast path
//! does not interpret them; it passes each to the slow path over the RX ring
//! as `CONTROL_REQ` fragments and sends the `CONTROL_REPLY` fragments that
//! come back, reassembled, to the datagram's sender. A memory node's rack
//! side (gates, dirty records, bindings) runs in the slow-path firmware
//! (`clio_slowpath::rack`).

use clio_wire::ring::{control_fragments, ControlAssembler, Descriptor, Direction};

use crate::{ClientId, Dram, FastPath};

/// Senders remembered at once (a datagram's answer goes to its sender; the
/// oldest is forgotten first, and its late answer dropped).
pub const CONTROL_SENDERS: usize = 64;

/// What the control pass-through did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControlStats {
    /// Datagrams passed to the slow path.
    pub forwarded: u64,
    /// Answers sent to their senders.
    pub answered: u64,
    /// Datagrams dropped: too long, no room in the RX ring, an answer for a
    /// forgotten sender, or a fragment missing.
    pub dropped: u64,
}

/// The pass-through's state.
#[derive(Debug, Clone)]
pub(crate) struct ControlLink {
    /// Per tag: (datagram seq, sender).
    senders: [Option<(u32, ClientId)>; CONTROL_SENDERS],
    next_seq: u32,
    replies: ControlAssembler,
    pub(crate) stats: ControlStats,
}

impl ControlLink {
    pub(crate) fn new() -> ControlLink {
        ControlLink {
            senders: [None; CONTROL_SENDERS],
            next_seq: 0,
            replies: ControlAssembler::new(),
            stats: ControlStats::default(),
        }
    }
}

impl<D: Dram> FastPath<D> {
    /// Control pass-through counters.
    pub fn control_stats(&self) -> ControlStats {
        self.ctl.stats
    }

    /// A control datagram from `src`: to the slow path, whole or not at all.
    pub(crate) fn forward_control(&mut self, src: ClientId, packet: &[u8]) {
        let seq = self.ctl.next_seq;
        self.ctl.next_seq = seq.wrapping_add(1);
        let tag = seq % CONTROL_SENDERS as u32;
        let rx = &mut self.dram.bytes_mut()[self.lay.rx_ring.start..self.lay.rx_ring.end];
        let Some(frags) = control_fragments(tag, seq, packet, Direction::Rx) else {
            self.ctl.stats.dropped += 1;
            return;
        };
        let count = packet.len().div_ceil(clio_wire::ring::CONTROL_FRAGMENT) as u32;
        if self.rx.free_slots(rx) < count {
            self.ctl.stats.dropped += 1;
            return;
        }
        for f in frags {
            // Room was checked: a datagram is never half-pushed.
            let _ = self.rx.push(rx, &f);
        }
        self.ctl.senders[tag as usize] = Some((seq, src));
        self.ctl.stats.forwarded += 1;
        self.trace.forwarded = true;
    }

    /// One `CONTROL_REPLY` fragment; a completed answer goes to its sender.
    pub(crate) fn control_reply<F: FnMut(ClientId, &[u8])>(
        &mut self,
        d: &Descriptor,
        out: &mut F,
    ) -> bool {
        let dropped = self.ctl.replies.dropped();
        let done = self.ctl.replies.push(d);
        let ok = match done {
            Some((tag, seq, bytes)) => match self.ctl.senders.get(tag as usize).copied() {
                Some(Some((s, to))) if s == seq => {
                    out(to, bytes);
                    self.ctl.senders[tag as usize] = None;
                    self.ctl.stats.answered += 1;
                    true
                }
                _ => {
                    self.ctl.stats.dropped += 1;
                    false
                }
            },
            None => true,
        };
        self.ctl.stats.dropped += self.ctl.replies.dropped() - dropped;
        ok
    }
}
