//! Physical and protocol parameters shared by every scheme (EDM §4.3, Table 1).

use serde::Serialize;

/// Largest node count the simulator accepts.
pub const MAX_NODES: usize = 1024;

/// Which EDM messages are granted in arrival order (SRPT orders everything else; FCFS is in
/// arrival order anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdmOrder {
    /// The messages of one compute–memory node pair (§3.1.1, the default): a requester's
    /// writes to a target, or its reads from it. Every node is both compute and memory node
    /// here, so the port pair `s -> d` carries two such pairs (`s` writing to `d`, `d` reading
    /// from `s`), kept as two ordering lanes of the scheduler
    /// ([`edm_pim::Scheduler::notify_lane`]).
    NodePair,
    /// All messages that share a port pair `s -> d`, whoever requested them.
    PortPair,
    /// None: SRPT also orders the messages of one pair.
    Off,
}

/// Simulation parameters. Time is in picoseconds, sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimConfig {
    /// Number of nodes on the switch (paper: 144).
    pub nodes: usize,
    /// Link serialization time per byte (100 Gbps = 80 ps/B).
    pub ps_per_byte: u64,
    /// One-hop propagation delay (paper: 10 ns).
    pub prop_ps: u64,
    /// PMA+PMD latency of one PHY traversal (Table 1: 19 ns; a hop crosses two PHYs).
    pub phy_ps: u64,
    /// EDM PHY clock period (25G PHY at 390.625 MHz: 2.56 ns).
    pub cycle_ps: u64,
    /// EDM chunk size `c` (256 B).
    pub chunk_bytes: u32,
    /// EDM active notifications per pair `X` (3).
    pub active_per_pair: u32,
    /// Payload bytes per packet for the packet-switched baselines (the CDFs' "MTU-sized
    /// packet": 1460 B, as in the pHost/pFabric simulators).
    pub mtu_bytes: u32,
    /// Size of a read request (RREQ) message (8 B).
    pub rreq_bytes: u32,
    /// EDM scheduler timing: 0 runs PIM to a maximal matching instantly at every change (the
    /// published simulator's assumption); a positive value runs one PIM iteration (request,
    /// grant, accept) every `pim_iteration_ps`, continuously, like the hardware pipeline.
    pub pim_iteration_ps: u64,
    /// EDM block-slotted scheduling: when positive (and `pim_iteration_ps` is 0) the scheduler
    /// forms a maximal matching only at multiples of `slot_ps`, so port releases line up on a
    /// common grid; 0 schedules at the exact event times.
    pub slot_ps: u64,
    /// EDM destination-side reservation ([`edm_pim::Config::reserve`]).
    pub edm_reserve: bool,
    /// Which EDM messages are delivered in order ([`EdmOrder`]).
    pub edm_order: EdmOrder,
    /// EDM control traffic charged to link time: bits of one control message (§3.1.4: an /N/
    /// or /G/ holds destination 9, message id 8 and size 16 bits = 33), charged once per chunk
    /// to both of its ports; 0 (default, like the baselines' ACKs, tokens and credits) lets
    /// control ride free.
    pub edm_control_bits: u32,
    /// EDM read requests charged to link time: `rreq_bytes` on the requester's uplink and,
    /// forwarded as the read's first grant, on the memory node's downlink.
    pub edm_charge_rreq: bool,
    /// CXL hosts transmit their messages in issue order over `cxl_host_queues` transaction
    /// queues (default: a PCIe/CXL port has no per-message scheduler); `false` interleaves all
    /// active messages round-robin like the other packet baselines' hosts.
    pub cxl_host_fifo: bool,
    /// With `cxl_host_fifo`: in-order transaction queues per CXL host (the DMA channels or
    /// cores issuing remote-memory traffic; default 4, the H2C channel count of the Xilinx XDMA
    /// engine). The queues interleave flit by flit and a new message joins the queue with the
    /// fewest unsent bytes; 1 is a single in-order queue per port.
    pub cxl_host_queues: u32,
    /// PFC hosts are RDMA NICs with one reliable-connection queue pair per destination: its
    /// requests (writes, read requests) are sent in issue order, and so are the responses to
    /// the peer's reads (the two streams of a queue pair, the same per compute–memory pair
    /// order EDM keeps); everything else interleaves packet by packet. `false` interleaves
    /// every active message.
    pub pfc_in_order: bool,
    /// Fastpass batching period: endpoints send at most one demand report, and the arbiter
    /// runs one allocation round (one allocation frame per endpoint), per period. Default: a
    /// batch of 8 Fastpass timeslots of one 1460 B packet each (8 × 116.8 ns at 100 Gbps).
    /// 0 sends one request and one grant frame per transfer.
    pub fastpass_batch_ps: u64,
    /// Simulated-time limit; a run still busy past it fails instead of hanging (default 1 s).
    pub time_limit_ps: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 144,
            ps_per_byte: 80,
            prop_ps: 10_000,
            phy_ps: 19_000,
            cycle_ps: 2_560,
            chunk_bytes: 256,
            active_per_pair: 3,
            mtu_bytes: 1460,
            rreq_bytes: 8,
            pim_iteration_ps: 0,
            slot_ps: 0,
            edm_reserve: false,
            edm_order: EdmOrder::NodePair,
            edm_control_bits: 0,
            edm_charge_rreq: false,
            cxl_host_fifo: true,
            cxl_host_queues: 4,
            pfc_in_order: true,
            fastpass_batch_ps: 934_400,
            time_limit_ps: 1_000_000_000_000,
        }
    }
}

impl SimConfig {
    /// Latency of one node–switch hop: propagation plus the PHYs at both ends (48 ns).
    pub fn hop_ps(&self) -> u64 {
        self.prop_ps + 2 * self.phy_ps
    }

    /// Serialization time of `bytes` bytes on one link.
    pub fn ser_ps(&self, bytes: u64) -> u64 {
        bytes * self.ps_per_byte
    }

    /// Link bandwidth-delay product of one node–switch–node round trip, in bytes.
    pub fn bdp_bytes(&self) -> u64 {
        (4 * self.hop_ps()).div_ceil(self.ps_per_byte)
    }

    /// Check the fields; the error names the one at fault.
    pub fn validate(&self) -> Result<(), crate::SimError> {
        let bad =
            |field: &'static str, why: &'static str| Err(crate::SimError::Config { field, why });
        // Per-pair state is N² (EDM queues, DCQCN rates): keep it within memory.
        if self.nodes < 2 || self.nodes > MAX_NODES {
            return bad("nodes", "must be in 2..=1024");
        }
        if self.ps_per_byte == 0 {
            return bad("ps_per_byte", "must be positive");
        }
        if self.chunk_bytes == 0 {
            return bad("chunk_bytes", "must be positive");
        }
        if self.active_per_pair == 0 {
            return bad("active_per_pair", "must be positive");
        }
        if self.mtu_bytes == 0 {
            return bad("mtu_bytes", "must be positive");
        }
        if self.cxl_host_queues == 0 || self.cxl_host_queues > 64 {
            return bad("cxl_host_queues", "must be in 1..=64");
        }
        if self.rreq_bytes == 0 {
            return bad("rreq_bytes", "must be positive");
        }
        Ok(())
    }
}
