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
