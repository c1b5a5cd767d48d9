//! `select` and `aggregate` at the memory node, as the emulated board's
//! offload. The one implementation is the firmware's
//! (`clio_slowpath::offload::df`, `no_std`: the scan, gather and output
//! order, the refusal codes), which the firmware image and the emulated
//! board on the RTL serve too; this wraps it for the emulator's engine
//! (`clio_emu::native::Native`), as `clio_kv` and `clio_mv` wrap theirs.
//!
//! It works in the **caller's** address space: the firmware's
//! `use_caller_space` joins the caller's PID through
//! `OffloadMem::use_caller_space` (a session of the offload's, proven by
//! the caller's session key the fast path has just checked), so it scans
//! the columns the compute node wrote and writes its selection where the
//! compute node reads it, under the caller's permissions — one address
//! space for the user's code at both nodes, no copy, no serialization
//! (dissertation seed 002, §3.6). Only the call's result (16 or 40 bytes)
//! crosses the network.

use clio_emu::native::Native;
use clio_emu::{Offload, OffloadError, OffloadMem};
use clio_slowpath::offload::df::DfOffload as FwDf;

/// Clio-DF's memory-node half, as an offload
/// (`clio_emu::Board::register_offload`). It keeps no state between calls
/// but its buffers (about 200 KiB, boxed).
#[derive(Debug)]
pub struct DfOffload(Box<Native<FwDf>>);

impl Default for DfOffload {
    fn default() -> Self {
        DfOffload::new()
    }
}

impl DfOffload {
    /// A fresh offload.
    pub fn new() -> DfOffload {
        DfOffload(Box::new(Native::new(FwDf::new())))
    }

    /// Rows read by scans and gathers since it was registered.
    pub fn rows_scanned(&self) -> u64 {
        self.0.inner().rows_scanned()
    }
}

impl Offload for DfOffload {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        self.0.max_result(op)
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        self.0.call(mem, op, args, out)
    }
}
