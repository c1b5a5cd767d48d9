//! Offloads written once for the slow path (`clio_slowpath::offload`,
//! `no_std`, what the firmware runs on the ARM) served by the emulator's
//! offload engine too: [`Native`] adapts one to [`crate::Offload`], its
//! memory accesses going through [`OffloadMem`] (packets or the direct
//! translated access of the emulated board). The same offload code then
//! answers the same call on both boards, which is what the firmware's
//! co-simulation compares (`tests/qemu_offload.rs`).

use clio_slowpath::offload::{self as fw, MemFault, MemOp, OffloadMemory, Results};
use clio_wire::Opcode;

use crate::offload::{MemError, Offload, OffloadError, OffloadMem};

/// A slow-path offload served by the emulator's engine.
#[derive(Debug)]
pub struct Native<T> {
    inner: T,
    /// The result buffer, kept from call to call.
    buf: Vec<u8>,
}

impl<T> Native<T> {
    /// Serve `inner` here.
    pub fn new(inner: T) -> Self {
        Native {
            inner,
            buf: Vec::new(),
        }
    }

    /// The offload.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

/// [`OffloadMem`] as a slow-path [`OffloadMemory`].
struct Adapter<'m, 'a>(&'m mut OffloadMem<'a>);

fn fault(e: MemError) -> MemFault {
    MemFault {
        op: match e.op {
            Opcode::Read => MemOp::Read,
            Opcode::Write => MemOp::Write,
            Opcode::CompareAndSwap => MemOp::Cas,
            Opcode::OpenSession => MemOp::Join,
            _ => MemOp::Alloc,
        },
        va: e.va,
        status: e.status,
    }
}

impl OffloadMemory for Adapter<'_, '_> {
    fn alloc(&mut self, size: u64) -> Result<u64, MemFault> {
        self.0.alloc(size).map_err(fault)
    }
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        self.0.read(va, buf).map_err(fault)
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemFault> {
        self.0.write(va, data).map_err(fault)
    }
    fn cas(&mut self, va: u64, expected: u64, new: u64) -> Result<u64, MemFault> {
        self.0.cas(va, expected, new).map_err(fault)
    }
    fn prefetch(&mut self, va: u64, len: usize) {
        self.0.prefetch(va, len);
    }
    fn read_in_place(
        &mut self,
        va: u64,
        len: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Option<Result<(), MemFault>> {
        Some(self.0.read_with(va, len, |b| f(b)).map_err(fault))
    }
    fn use_caller_space(&mut self) -> Result<u32, MemFault> {
        self.0.use_caller_space().map_err(fault)
    }
    fn use_own_space(&mut self) {
        self.0.use_own_space();
    }
    fn mtu(&self) -> Option<usize> {
        Some(self.0.mtu())
    }
}

impl<T: fw::Offload + Send> Offload for Native<T> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn max_result(&self, op: u16) -> Option<usize> {
        self.inner.max_result(op)
    }

    fn prepare(&mut self, mem: &mut OffloadMem<'_>, ops: &[(u16, &[u8])]) {
        self.inner.prepare(&mut Adapter(mem), ops);
    }

    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        // The engine refuses a result over one packet; the room is that.
        self.buf.resize(mem.max_result(), 0);
        let mut res = Results::new(&mut self.buf);
        let r = self.inner.call(&mut Adapter(mem), op, args, &mut res);
        out.extend_from_slice(res.bytes());
        r.map_err(|e| match e {
            fw::OffloadError::Refused(code) => OffloadError::Refused(code),
            fw::OffloadError::Fault(f) => OffloadError::Fault(format!("{f:?}")),
        })
    }
}
