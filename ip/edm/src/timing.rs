//! Fixed pipeline latencies in 2.56 ns PHY cycles (25G PCS at 390.625 MHz), from EDM
//! §3.1.2, §3.2.1 and §3.2.2. The model applies them one by one; the Table 1 breakdown in
//! the report is measured in simulation, not summed from here.

/// Nanoseconds per PHY cycle.
pub const CYCLE_NS: f64 = 2.56;

/// Per-stage latencies in cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Standard PCS TX (scrambler and gearbox) per traversal.
    pub pcs_tx: u64,
    /// Standard PCS RX (block lock and descrambler) per traversal.
    pub pcs_rx: u64,
    /// Host: read the message queue and create the RREQ/RMWREQ /M*/ or /N/ block.
    pub host_gen_request: u64,
    /// Host: parse a received /G/ and write it into the grant queue.
    pub host_rx_grant: u64,
    /// Host: read the grant queue across the RX→TX clock domains.
    pub host_grant_queue: u64,
    /// Host: read the state table, read the data buffer, create the /M*/ data block.
    pub host_gen_data: u64,
    /// Memory node: parse an RREQ, add its grant-queue entry, send it to the memory controller.
    pub host_rx_request: u64,
    /// Host: parse an RRES/WREQ block, extract the address, hand the data over.
    pub host_rx_data: u64,
    /// Switch: identify /N/ /G/ /M*/ by block type.
    pub sw_classify: u64,
    /// Switch: ordered-list insert into the notification queue.
    pub sw_queue_insert: u64,
    /// Switch: one PIM iteration (request, grant, accept).
    pub sw_pim_iteration: u64,
    /// Switch: create a /G/ block (or re-emit the buffered RREQ as the implicit grant).
    pub sw_grant_gen: u64,
    /// Switch: virtual-circuit forwarding RX→TX, including the clock-domain crossing.
    pub sw_forward: u64,
}

impl Latency {
    /// The values of the EDM prototype.
    pub const PAPER: Latency = Latency {
        pcs_tx: 2,
        pcs_rx: 2,
        host_gen_request: 2,
        host_rx_grant: 2,
        host_grant_queue: 4,
        host_gen_data: 3,
        host_rx_request: 3,
        host_rx_data: 3,
        sw_classify: 1,
        sw_queue_insert: 2,
        sw_pim_iteration: 3,
        sw_grant_gen: 1,
        sw_forward: 4,
    };
}

impl Latency {
    /// Every latency multiplied by `f`: the same nanoseconds counted in time units `f` times
    /// shorter (e.g. `f = 4` counts in 100G block times of 0.64 ns instead of 2.56 ns cycles).
    pub fn scaled(self, f: u64) -> Latency {
        Latency {
            pcs_tx: self.pcs_tx * f,
            pcs_rx: self.pcs_rx * f,
            host_gen_request: self.host_gen_request * f,
            host_rx_grant: self.host_rx_grant * f,
            host_grant_queue: self.host_grant_queue * f,
            host_gen_data: self.host_gen_data * f,
            host_rx_request: self.host_rx_request * f,
            host_rx_data: self.host_rx_data * f,
            sw_classify: self.sw_classify * f,
            sw_queue_insert: self.sw_queue_insert * f,
            sw_pim_iteration: self.sw_pim_iteration * f,
            sw_grant_gen: self.sw_grant_gen * f,
            sw_forward: self.sw_forward * f,
        }
    }
}

impl Default for Latency {
    fn default() -> Self {
        Latency::PAPER
    }
}

/// Convert cycles to nanoseconds.
pub fn ns(cycles: u64) -> f64 {
    cycles as f64 * CYCLE_NS
}

/// What a message meets outside the PCS on each link it crosses: the
/// transceiver (PMA + PMD) on each side and the cable. These are not EDM's
/// logic, so Table 1 lists them apart and adds them to the stack latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkPhysical {
    /// One PMA + PMD traversal (serializer or deserializer and the optics or
    /// copper driver), ns. EDM Table 1 ("Ethernet PHY (PMA+PMD)"): 19 ns.
    pub pma_pmd_ns: f64,
    /// One-hop propagation, ns. EDM Table 1 ("Propagation delay"; "the
    /// one-hop propagation delay is 10 ns", about 2 m of cable).
    pub propagation_ns: f64,
}

impl LinkPhysical {
    /// EDM Table 1's values.
    pub const TABLE1: LinkPhysical = LinkPhysical {
        pma_pmd_ns: 19.0,
        propagation_ns: 10.0,
    };

    /// The time added to a stack latency by `links` link traversals: each
    /// crosses a PMA/PMD on the sending and on the receiving side, and one
    /// cable. A read crosses 4 links (RREQ CN → switch → MN, RRES back), a
    /// write also 4 (/N/ and /G/ on the CN's link, WREQ CN → switch → MN):
    /// Table 1's 8 × 19 ns + 4 × 10 ns = 192 ns for both.
    pub fn added_ns(&self, links: u32) -> PhysicalShare {
        PhysicalShare {
            pma_pmd_traversals: 2 * links,
            pma_pmd_ns: 2.0 * f64::from(links) * self.pma_pmd_ns,
            propagations: links,
            propagation_ns: f64::from(links) * self.propagation_ns,
        }
    }
}

/// The physical share of one operation's latency, by part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicalShare {
    /// PMA/PMD traversals.
    pub pma_pmd_traversals: u32,
    /// Their total, ns.
    pub pma_pmd_ns: f64,
    /// Cable hops.
    pub propagations: u32,
    /// Their total, ns.
    pub propagation_ns: f64,
}

impl PhysicalShare {
    /// PMA/PMD plus propagation, ns.
    pub fn total_ns(&self) -> f64 {
        self.pma_pmd_ns + self.propagation_ns
    }
}

#[cfg(test)]
mod physical_tests {
    use super::*;

    #[test]
    fn table1_adds_192_ns_over_four_links() {
        let s = LinkPhysical::TABLE1.added_ns(4);
        assert_eq!((s.pma_pmd_traversals, s.propagations), (8, 4));
        assert_eq!(s.pma_pmd_ns, 152.0);
        assert_eq!(s.propagation_ns, 40.0);
        assert_eq!(s.total_ns(), 192.0);
    }

    #[test]
    fn per_hop_wire_delays_follow_from_table1() {
        let t = LinkPhysical::TABLE1;
        let hop_ns = 2.0 * t.pma_pmd_ns + t.propagation_ns;
        assert_eq!(
            crate::load::TABLE1_WIRE_CYCLES,
            (hop_ns / CYCLE_NS).ceil() as u64
        );
        assert_eq!(
            crate::load::TABLE1_WIRE_BLOCKS_100G,
            (hop_ns / (CYCLE_NS / crate::load::BLOCKS_PER_CYCLE_100G as f64)).round() as u64
        );
    }
}
