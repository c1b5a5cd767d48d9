//! The logic behind the `clio` command-line tool, as a library: each
//! command's module takes its parsed arguments and does the work, so other
//! programs (and tests) can run a bring-up, a benchmark suite, a demo or an
//! emulated board without going through the executable. The `clio` binary
//! (`src/main.rs`) only parses the command line and dispatches here.
//! Long-running commands (bring-up, the demos) report typed
//! [`progress::Event`]s to a [`progress::Progress`] sink and return a report
//! value; the binary decides how they look on a terminal. The benchmark
//! suite reports each benchmark as a [`bench::SuiteEvent`] and returns a
//! [`bench::SuiteReport`]; `clio sim` reports [`sim::SimEvent`]s before it
//! serves until stopped; `clio rack` returns a [`rack::ServingRack`] with its
//! layout. No module prints (the benchmarks' progress bars on standard
//! error aside).
//!
//! | command | module |
//! |---|---|
//! | `clio sim` | [`sim`] |
//! | `clio demo` | [`demo`] |
//! | `clio bench` | [`bench`](mod@bench) |
//! | `clio bringup` | [`bringup`] |
//! | `clio info` | [`info`] |
//! | `clio logs` | [`logs`] |
//! | `clio flash` | [`flash`] |
//! | `clio fabric` | [`fabric`] |
//! | `clio rack` | [`rack`] |
//! | `clio edmsim` | `edm_sim::cli` (in the `edm-sim` crate) |

pub mod bench;
pub mod board_arg;
pub mod bringup;
pub mod demo;
pub mod demo_rack;
pub mod fabric;
pub mod flash;
pub mod info;
pub mod logs;
pub mod progress;
pub mod rack;
pub mod report;
pub mod sim;
