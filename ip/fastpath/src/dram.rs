//! Emulated board DRAM.
//!
//! The model sees board memory as one byte slice: DRAM offset `o` holds
//! physical address `dram.base + o`. The rings, the hash page table and the
//! data pages all live in it at the addresses of the board config, so the
//! slow path (in process, or a firmware under QEMU sharing the same file)
//! sees exactly the bytes the fast path wrote.

/// Board memory as a byte slice (offset 0 = the configured `dram.base`).
///
/// Implemented for owned buffers and for `&mut [u8]`, so an emulator can back
/// it with a mapped shared-memory file.
pub trait Dram {
    /// The whole memory.
    fn bytes(&self) -> &[u8];
    /// The whole memory, writable.
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl Dram for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Dram for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Dram for &mut [u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}
