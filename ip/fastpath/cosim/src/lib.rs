//! Differential co-simulation of the fast-path RTL against the Rust reference model.
//!
//! [`trace::generate`] builds a seeded trace of client packets and slow-path
//! ring traffic, runs it through the reference model ([`clio_fastpath`]) and
//! keeps every response and the final board memory. [`files::write_case`]
//! writes it for the Verilator harness (`ip/fastpath/tb/cosim`), which replays
//! the same events into the RTL top level and requires bit-identical
//! responses and an identical final memory image. [`board`] is the board the
//! co-simulation runs (and the RTL parameters that match it). [`replay`]
//! checks a run in which the RTL chose the order (READ streams pumped
//! between requests): the model follows the events the RTL logged.

pub mod board;
pub mod files;
pub mod replay;
pub mod trace;
pub mod vectors;
