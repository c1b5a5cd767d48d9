//! Host SDK for Clio remote memory.
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
mod session;
mod split;

pub use async_session::AsyncSession;
pub use chase::{ChaseOutcome, ChaseRequest, ChaseResult};
pub use config::{fresh_first_req_id, ClientConfig, ShareToken};
pub use error::{ClioError, OpKind};
pub use proto::{Allocation, Completion, Connection, OpId, Request, SessionInfo};
pub use session::{Client, Handle, Session, CLOSE_ON_DROP_NS};
