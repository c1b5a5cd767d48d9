//! The priority iterative Parallel Iterative Matching (PIM) scheduler of the EDM switch
//! (EDM, ASPLOS'25, §3.1). This crate is the one implementation used by the switch-stack model,
//! as the reference for the RTL scheduler bench, and by the rack-scale fabric simulator.
//!
//! # Model
//! * `N` ports; each is a source (sending side) and a destination (receiving side), busy
//!   independently.
//! * One notification queue per destination, at most `X` active notifications per
//!   source–destination pair (default 3) and `queue_capacity` (default `X·N`) per destination;
//!   a full queue refuses the notification with a typed [`NotifyError`].
//! * Messages of one pair are served strictly in arrival order (in-order delivery per pair); the
//!   policy ([`Priority::Fcfs`] or [`Priority::Srpt`]) orders the heads of different pairs.
//! * One PIM iteration is the 3-cycle hardware step:
//!   1. **request** — every free destination picks its highest-priority head message whose
//!      source is free and sends a request to that source;
//!   2. **grant** — every source that received requests picks the highest-priority one;
//!   3. **accept** — the chosen pairs are marked busy and one chunk `l = min(c, remaining)` is
//!      granted.
//!
//!   [`Scheduler::schedule`] repeats iterations until one finds no request (a maximal matching
//!   over the free ports) or the configured cap, and reports the iteration count.
//! * A match keeps its source and destination busy for `l/B` (`release_at`, in the caller's time
//!   units via [`LinkRate`]); ports are freed by [`Scheduler::release_expired`] (also done at the
//!   start of every `schedule`) or explicitly by [`Scheduler::release_src`]/[`Scheduler::release_dst`].
//! * Options beyond the paper (the defaults keep the paper's behavior): [`Config::reserve`] (a
//!   free destination waits for a busy source holding its best message instead of taking a
//!   worse one) and `in_order = false` (SRPT also reorders the messages of one pair).
//!
//! # Determinism and the RTL
//! With the default [`Arbitration::PriorityEncoder`] every decision takes the candidate with the
//! lowest [`RankKey`] `(priority, arrival, rotated port rank)` (see [`tie_rank`]): no randomness
//! at all, so an RTL bench that feeds
//! the same notifications (with the same arrival stamps, e.g. cycle numbers) and calls
//! [`Scheduler::iterate`] once per 3-cycle iteration sees identical requests and matches.
//! [`Arbitration::Random`] breaks equal priorities with a seeded xorshift64* ([`XorShift64`]),
//! recovering classic PIM's random choice reproducibly for simulation.
//!
//! # Example
//! ```
//! use edm_pim::{Config, Notification, Priority, Scheduler};
//! let mut s = Scheduler::new(Config::new(4).with_priority(Priority::Srpt)).unwrap();
//! s.notify(0, Notification { src: 0, dst: 1, bytes: 600, id: 7 }).unwrap();
//! s.notify(0, Notification { src: 2, dst: 1, bytes: 64, id: 8 }).unwrap();
//! let sched = s.schedule(0);
//! assert_eq!(sched.matches.len(), 1);
//! assert_eq!(sched.matches[0].id, 8); // SRPT: the shorter message wins destination 1
//! assert_eq!(sched.matches[0].release_at, 64 * 80); // 64 B at 100 Gbps = 5.12 ns in ps
//! let next = s.schedule(sched.matches[0].release_at);
//! assert_eq!((next.matches[0].id, next.matches[0].len), (7, 256)); // one 256 B chunk
//! ```

mod config;
mod error;
mod rng;
mod scheduler;

pub use config::{
    Arbitration, Config, LinkRate, Priority, DEFAULT_ACTIVE_PER_PAIR, DEFAULT_CHUNK_BYTES,
    MAX_PORTS,
};
pub use error::{ConfigError, NotifyError};
pub use rng::XorShift64;
pub use scheduler::{
    tie_rank, Iteration, Match, Notification, Port, RankKey, Request, Schedule, Scheduler,
    MAX_LANES,
};
