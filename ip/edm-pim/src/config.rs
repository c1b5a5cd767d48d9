//! Scheduler configuration: port count, queue bounds, chunk size, policy, link rate.

use crate::error::ConfigError;

/// Default chunk size `c` in bytes (EDM §4.3: 256 B).
pub const DEFAULT_CHUNK_BYTES: u32 = 256;
/// Default number of active notifications per source–destination pair (EDM §3.1.2: X = 3).
pub const DEFAULT_ACTIVE_PER_PAIR: u32 = 3;
/// Largest supported port count (port numbers are `u16`; the paper's largest switch is 512 ports).
pub const MAX_PORTS: usize = 4096;

/// Which message property orders the notification queues (EDM §3.1.1 property 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Priority {
    /// First come, first served: the priority value is the notification's arrival time.
    /// Optimal for light-tailed workloads.
    #[default]
    Fcfs,
    /// Shortest remaining processing time: the priority value is the remaining bytes of the
    /// pair's head message. Applied across pairs only; within a pair messages stay FIFO.
    Srpt,
}

/// How equal priority values are resolved in the request and grant steps.
///
/// A deciding port `q` (a destination in the request step, a source in the grant step) compares
/// candidates by [`crate::RankKey`] `(priority value, arrival time, tie rank)`, lowest first.
/// The variants differ in the tie rank given to a competing port `p` (or, for `Random`, replace
/// the last two fields by a random draw).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Arbitration {
    /// Rotated priority encoder: tie rank `(p - q - 1) mod N`, i.e. port `q` prefers `q+1`, then
    /// `q+2`, … A fixed rotation per port, so in hardware it is only the wiring order of the
    /// encoder inputs. Deterministic, and with all priorities equal it matches a full demand in
    /// one iteration (the plain lowest-port rule needs `N/2`).
    #[default]
    PriorityEncoder,
    /// Plain priority encoder: tie rank `p` (the lowest port number wins). Deterministic but
    /// degenerates to ~`N/2` iterations when many priorities tie.
    LowestPort,
    /// Classic PIM randomness restricted to ties: candidates compare by priority value only and
    /// ties are broken uniformly at random by an internal xorshift64* generator seeded with
    /// `seed`. Reproducible for a given seed and call sequence.
    Random {
        /// Seed of the internal generator (0 is remapped to a fixed non-zero constant).
        seed: u64,
    },
}

/// Link speed expressed as a rational: `bytes` bytes occupy a link for `time` units of model time.
///
/// A granted chunk of `l` bytes keeps its ports busy for `ceil(l * time / bytes)` time units
/// (EDM §3.1.1 step 7: release after `l/B`). Examples: 100 Gbps with picosecond time is
/// `{ bytes: 1, time: 80 }`; the 25G PHY counted in 390.625 MHz cycles is `{ bytes: 8, time: 1 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkRate {
    /// Bytes transferred in `time` units.
    pub bytes: u64,
    /// Time units needed for `bytes` bytes.
    pub time: u64,
}

impl LinkRate {
    /// 100 Gbps with time in picoseconds (80 ps per byte).
    pub const GBPS_100_PS: LinkRate = LinkRate { bytes: 1, time: 80 };
    /// The 25G EDM PHY with time in 2.56 ns PHY cycles (one 64-bit block per cycle).
    pub const PHY_25G_CYCLES: LinkRate = LinkRate { bytes: 8, time: 1 };

    /// Time units `len` bytes occupy the link, rounded up.
    pub fn busy_time(&self, len: u64) -> u64 {
        (len * self.time).div_ceil(self.bytes)
    }
}

/// Scheduler parameters. Build with [`Config::new`] and adjust fields; checked by
/// [`Config::validate`] (called by [`crate::Scheduler::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    /// Number of switch ports `N` (each is both a source and a destination).
    pub ports: usize,
    /// Maximum active notifications per source–destination pair (`X`).
    pub active_per_pair: u32,
    /// Capacity of each per-destination notification queue; `X * N` unless overridden.
    pub queue_capacity: u32,
    /// Maximum bytes a single grant lets a sender transmit (`c`).
    pub chunk_bytes: u32,
    /// Queue ordering policy.
    pub priority: Priority,
    /// Tie-breaking rule.
    pub arbitration: Arbitration,
    /// Upper bound on PIM iterations per [`crate::Scheduler::schedule`] call; `None` runs to a
    /// maximal matching.
    pub max_iterations: Option<u32>,
    /// Link rate used to compute how long a match keeps its ports busy.
    pub link: LinkRate,
    /// Destination-side reservation (not in the paper; off by default): a free destination whose
    /// highest-priority head message waits for a busy source issues no request instead of
    /// requesting a lower-priority message, so ports freed at different instants cannot keep
    /// overtaking a high-priority pair. Non-work-conserving; the idle time is bounded by one
    /// chunk. With it on, a converged schedule is maximal only over unreserved destinations.
    pub reserve: bool,
    /// In-order delivery per pair (EDM §3.1.1 property 5; on by default): a pair's messages
    /// (of one ordering lane, see [`crate::Scheduler::notify_lane`]) are granted strictly in
    /// arrival order and SRPT orders only different pairs and lanes. Off, SRPT also orders the
    /// messages within a pair (FCFS is unaffected).
    pub in_order: bool,
}

impl Config {
    /// Defaults from the paper for `ports` ports: X = 3, queue X·N, chunk 256 B, FCFS,
    /// rotated priority-encoder arbitration, no iteration cap, 100 Gbps in picoseconds.
    pub fn new(ports: usize) -> Self {
        Config {
            ports,
            active_per_pair: DEFAULT_ACTIVE_PER_PAIR,
            queue_capacity: DEFAULT_ACTIVE_PER_PAIR.saturating_mul(ports as u32),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            priority: Priority::Fcfs,
            arbitration: Arbitration::PriorityEncoder,
            max_iterations: None,
            link: LinkRate::GBPS_100_PS,
            reserve: false,
            in_order: true,
        }
    }

    /// Same as [`Config::new`] with the given priority policy.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Same config with the given arbitration rule.
    pub fn with_arbitration(mut self, arbitration: Arbitration) -> Self {
        self.arbitration = arbitration;
        self
    }

    /// Same config with `X` active notifications per pair and the queue capacity reset to X·N.
    pub fn with_active_per_pair(mut self, x: u32) -> Self {
        self.active_per_pair = x;
        self.queue_capacity = x.saturating_mul(self.ports as u32);
        self
    }

    /// Check every field; the error names the field at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.ports < 2 || self.ports > MAX_PORTS {
            return Err(ConfigError::Ports {
                ports: self.ports,
                max: MAX_PORTS,
            });
        }
        if self.active_per_pair == 0 {
            return Err(ConfigError::Zero {
                field: "active_per_pair",
            });
        }
        if self.queue_capacity == 0 {
            return Err(ConfigError::Zero {
                field: "queue_capacity",
            });
        }
        if self.chunk_bytes == 0 {
            return Err(ConfigError::Zero {
                field: "chunk_bytes",
            });
        }
        if self.max_iterations == Some(0) {
            return Err(ConfigError::Zero {
                field: "max_iterations",
            });
        }
        if self.link.bytes == 0 {
            return Err(ConfigError::Zero {
                field: "link.bytes",
            });
        }
        if self.link.time == 0 {
            return Err(ConfigError::Zero { field: "link.time" });
        }
        Ok(())
    }
}
