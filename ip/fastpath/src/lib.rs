//! The Clio fast-path reference model.
//!
//! A deterministic, cycle-counting model of the CBoard data path, written as
//! a pure state machine (no sockets, threads or clocks): packets in through
//! [`FastPath::receive`], TX-ring commands in through [`FastPath::poll_rings`],
//! response packets out through a callback, RX-ring descriptors out into the
//! emulated board DRAM. It is the golden model the RTL in `ip/fastpath/rtl`
//! is checked against bit for bit; `README.md` beside this crate is the
//! behavioural specification both follow.
//!
//! Stages: integrity check (CRC32C, NACK) → dispatch by opcode → TLB (CAM,
//! LRU) → on a miss one bucket read from the hash page table in board DRAM →
//! permission check → first-touch fault from the free-PA FIFO → DRAM access
//! or sync unit (TAS/CAS/FAA, lock/unlock) → response. Alloc/free go to the
//! slow path over the RX ring; pointer chasing runs on the extend path; a
//! dedup buffer answers retried non-idempotent requests without executing
//! them again. Every request returns a [`Trace`] of cycles and DRAM accesses.
//!
//! ```
//! use clio_fastpath::{ClientId, FastPath, ModelOptions};
//! use clio_wire::{Header, Opcode, Packet, Status};
//!
//! let board = clio_config::boards::EMULATOR;
//! let dram = vec![0u8; board.dram.size as usize];
//! let mut fp = FastPath::format(&board, ModelOptions::default(), dram).unwrap();
//! // Before the slow path posts this boot's `Epoch` descriptor no session
//! // exists: every request that needs one is answered `Restarted`.
//! let req = Header::request(Opcode::Read, 1, 1, 0x40_0000, 16).with_session(1, 7, 0x5eed);
//! let pkt = req.encode(&[]).unwrap();
//! let mut answers = Vec::new();
//! let trace = fp.receive(ClientId(1), &pkt, &mut |to, bytes: &[u8]| answers.push((to, bytes.to_vec())));
//! let resp = Header::parse_verified(&Packet::new_checked(&answers[0].1[..]).unwrap()).unwrap();
//! assert_eq!((resp.opcode, resp.status), (Opcode::ReadResp, Status::Restarted));
//! assert_eq!(answers[0].1.len(), pkt.len()); // never more bytes than the request
//! assert_eq!(trace.dram_accesses, 0);
//! ```

mod config;
mod control;
mod cycles;
mod dedup;
mod direct;
mod dram;
mod fastpath;
mod gate;
mod interleave;
mod offload;
mod rackctl;
mod response;
mod session;
mod stats;
mod tlb;
mod xlat;

pub use config::{ConfigError, Layout, ModelOptions, Span, ZeroPolicy, MAX_PAGE_SIZES};
pub use control::PollSummary;
pub use cycles::{beats, CycleCosts, Trace};
pub use dedup::{Dedup, DedupKey, NoRoom, Recorded};
pub use direct::DirectCreds;
pub use dram::Dram;
pub use fastpath::{ClientId, FastPath, CHASE_MAX_HOPS, MODEL_VERSION};
pub use gate::{gate_class, gate_range, GateEntry, GateStats, GateTable, GateVerdict};
pub use offload::{OffloadJob, OffloadLinkStats, OFFLOAD_QUEUE, OFFLOAD_TAGS};
pub use rackctl::{ControlStats, CONTROL_SENDERS};
pub use session::{Session, Sessions};
pub use stats::Stats;
pub use tlb::{Tlb, TlbEntry};
