//! The Clio slow path: what the memory board's ARM cores run.
//!
//! - [`SlowPathConfig`]: the numbers taken from a board config, and the size
//!   of the one `u64` arena that holds all state (no heap).
//! - [`SlowPath`]: the state machine. Per-PID VA allocation with the
//!   overflow-free bucket check and retries, the [`ShadowTable`] (the ARM
//!   copy of the board hash page table with per-bucket free counts), the
//!   per-page-size [`PhysAlloc`], free-PA refill, and scrubbing of freed pages.
//!   Every board-table change goes out as a TX descriptor through a [`TxSink`].
//! - [`session`]: the per-boot secret (SipHash-2-4 keyed by the boot seed),
//!   the epoch, session keys, the shadow session table and per-PID
//!   accounts; [`SlowPath`] opens and closes sessions, assigns PIDs and
//!   enforces the per-PID memory quota.
//! - [`Engine`]: the ring dispatcher. One core polls the RX ring, handles
//!   PA-consumed notices inline and hands alloc/free requests to per-worker
//!   SPSC queues; workers run them against the core and emit into the TX ring.
//! - [`fastpath_regs`]: the driver of the ZCU106 fast-path register block
//!   over a [`RegisterBus`]: identity check, boot sequence, TX doorbell,
//!   status.
//! - [`apu_boot`]: what the image does itself when it enters at EL3 (per-core
//!   `CNTFRQ_EL0` and `CPUECTLR_EL1.SMPEN`, PMU power-up and release of
//!   cores 1–3, the system counter), over fakeable register traits.
//! - [`rack`]: the memory node's side of the rack (issue #22): the region
//!   gate, dirty tracking and the node's control answers ([`rack::RackAgent`]),
//!   and its registration and heartbeats with the controller ([`rack::Link`]).
//! - [`offload`]: offloads on the ARM (issue #16): the registry by id, the
//!   `Offload` trait over the offload's own address space (its PID, the
//!   slow path's allocation and page table, DRAM reached directly), the
//!   exactly-once records and the answers to `OFFLOAD_REQ` fragments.
//! - `report` (feature `std`): the benchmark report (retry curve, latency,
//!   refill rate, footprint) as JSON and SVG.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod apu_boot;
mod config;
mod engine;
mod error;
pub mod fastpath_regs;
mod machine;
pub mod offload;
pub mod phys;
pub mod rack;
pub mod session;
pub mod shadow;
pub mod va;
mod words;

#[cfg(feature = "std")]
pub mod report;

pub use crate::config::{
    ConfigError, Layout, SlowPathConfig, DEFAULT_MAX_RANGES, DEFAULT_MAX_RETRIES, MAX_PAGE_SIZES,
};
pub use crate::engine::{Engine, EngineCounters, PollOutcome, RingSink, NOTICE_BATCH};
pub use crate::error::SlowPathError;
pub use crate::fastpath_regs::{FastPathRegs, FastPathStatus, RegisterBus, RegsError};
pub use crate::machine::{Placement, ReplyTo, SessionGrant, SizeState, SlowPath, Stats, TxSink};
pub use crate::phys::PhysAlloc;
pub use crate::session::{BootSecret, SessionInfo};
pub use crate::shadow::ShadowTable;
pub use crate::va::VaRange;
