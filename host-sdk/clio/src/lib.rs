//! Host SDK for Clio remote memory.
//!
//! # Quick start
//!
//! Start a board (`clio sim` serves the emulated one on `127.0.0.1:47700`),
//! then:
//!
//! ```no_run
#![doc = include_str!("../examples/quick_start.rs")]
//! ```
//!
//! This is `examples/quick_start.rs`: here it is only compiled (a doc test
//! has no board), and CI runs the same file against `clio sim`
//! (`ci/suites/47-sdk-examples.sh`), with `examples/tour.rs` (a 64 MiB
//! allocation, records, a lock shared by 4 threads, 10 000 async reads and
//! the error cases). Only this crate is needed: it re-exports [`perms`],
//! [`BoardConfig`] (for [`ClientConfig::from_board`]), [`InfoResp`] and
//! `bytemuck` (derive `Pod` with `#[bytemuck(crate = "clio::bytemuck")]`).
//!
//! # Two levels
//!
//! - Typed ([`remote`]): [`connect`], [`RemoteAddr`], [`RemoteAlloc`]
//!   (freed with an explicit [`Session::free`], not on drop),
//!   [`Session::read_pod`]/[`Session::write_pod`] and their slice forms,
//!   [`Session::with_lock`], [`Session::rwait`]/[`Session::rpoll_all`].
//! - Low level, as the Clio library names them: `ralloc`, `rfree`, `rread`
//!   (into your buffer: the zero-copy path), `rwrite`, `rpoll`, `rlock`,
//!   `runlock`, `rfence`, `rrelease`, atomics and `rchase`, on `u64` VAs.
//!
//! [`AsyncSession`]'s calls are **eager**: each is submitted when the
//! method is called, not when its future is first polled, so call order is
//! program order, and a dropped, never-awaited `rwrite` still writes.
//!
//! # Layers
//!
//! Layered like `quinn-proto` under `quinn`:
//! - [`proto`]: a pure, deterministic per-memory-node state machine
//!   (request ids, MTU split and reassembly, request-level retry, RTO,
//!   AIMD `cwnd` and incast `iwnd`, page-granularity ordering).
//! - [`backend`]: thin datagram transports (UDP sockets, in-process boards).
//! - [`Session`] (blocking) and [`AsyncSession`] (tokio): the `ralloc`,
//!   `rfree`, `rread`, `rwrite`, `rpoll`, `rlock`, `runlock`, `rfence`,
//!   `rrelease` and atomic calls of the Clio library, and `rchase`
//!   (a pointer chase executed by the board, [`chase`]).
//!
//! See `README.md` beside this crate for the semantics and algorithms.

mod async_session;
pub mod backend;
pub mod chase;
mod config;
mod error;
pub mod proto;
pub mod remote;
mod session;
mod spin;
mod split;

pub use async_session::AsyncSession;
pub use chase::{ChaseOutcome, ChaseRequest, ChaseResult};
pub use config::{fresh_first_req_id, ClientConfig, ShareToken};
pub use error::{ClioError, OpKind};
pub use proto::{Allocation, Completion, Connection, OpId, Request, SessionInfo};
pub use remote::{connect, RemoteAddr, RemoteAlloc};
pub use session::{Client, Handle, Session, CLOSE_ON_DROP_NS};

/// Plain-old-data casts for [`Session::read_pod`] and friends.
pub use bytemuck;
/// A board's configuration ([`ClientConfig::from_board`] takes one).
pub use clio_config::BoardConfig;
/// Permission bits of an allocation (`R`, `W`, `RW`, ...), from the wire
/// crate, so basic use needs only this crate.
pub use clio_wire::payload::perms;
/// What a board says about itself ([`Session::info`]).
pub use clio_wire::payload::InfoResp;
