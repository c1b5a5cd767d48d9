//! Host buffers the XDMA driver accepts, and the meaning of its DMA errors.
//!
//! The Xilinx driver (`dma_ip_drivers/XDMA/linux-kernel/xdma/cdev_sgdma.c`,
//! `check_transfer_align`, checked for this crate) refuses a memory-mapped
//! transfer with `EINVAL` unless the user buffer's low address bits equal
//! the card address's, modulo the engine's address alignment (read from
//! the engine's alignment register; a power of two, at most a page). The
//! SDK's buffers live anywhere, so every DMA goes through a bounce buffer
//! placed so that `buffer address ≡ card address (mod DMA_ALIGN)`, which
//! satisfies every alignment up to `DMA_ALIGN`.
//!
//! When a transfer does not complete within the driver's `h2c_timeout_ms`
//! / `c2h_timeout_ms` (10 s by default), the driver aborts it, stops the
//! engine and returns `ETIMEDOUT` (`libxdma.c`, `xdma_xfer_submit`); the
//! card did not finish the DMA, so retrying blindly is pointless:
//! [`XdmaError::DmaTimeout`] says what to check and how to reset.

use std::io;
use std::path::Path;

use crate::XdmaError;

/// Alignment the bounce buffer honours: a page, the largest address
/// alignment an XDMA engine reports.
pub const DMA_ALIGN: usize = 4096;

/// A reusable host buffer for DMA (safe code only: an over-allocated `Vec`
/// and an offset chosen per transfer).
#[derive(Debug, Default)]
pub struct BounceBuffer {
    mem: Vec<u8>,
}

impl BounceBuffer {
    /// A `len`-byte slice whose address is congruent to `card_addr` modulo
    /// [`DMA_ALIGN`]. Its contents are unspecified.
    pub fn slice_for(&mut self, card_addr: u64, len: usize) -> &mut [u8] {
        let need = len + DMA_ALIGN;
        if self.mem.len() < need {
            self.mem.resize(need, 0);
        }
        let base = self.mem.as_ptr() as usize;
        let off = (card_addr as usize).wrapping_sub(base) % DMA_ALIGN;
        &mut self.mem[off..off + len]
    }
}

/// Whether `buf` may be used for a DMA at `card_addr` under the driver's
/// rule (checked before every DMA `pread`/`pwrite`, so a violation is our
/// bug reported by name, not an `EINVAL` from the driver).
pub fn aligned(buf: *const u8, card_addr: u64) -> bool {
    (buf as usize) % DMA_ALIGN == (card_addr as usize) % DMA_ALIGN
}

/// The error for a failed DMA `pread`/`pwrite`: the driver's timeout and
/// its alignment refusal get their own variants and advice.
pub fn dma_error(path: &Path, op: &'static str, offset: u64, source: io::Error) -> XdmaError {
    match source.raw_os_error() {
        Some(libc_etimedout) if libc_etimedout == ETIMEDOUT => XdmaError::DmaTimeout {
            path: path.to_path_buf(),
            op,
            offset,
        },
        _ => XdmaError::Io {
            path: path.to_path_buf(),
            op,
            offset,
            source,
        },
    }
}

/// Linux `ETIMEDOUT` (the crate has no libc dependency; the value is the
/// same on every Linux architecture).
const ETIMEDOUT: i32 = 110;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounce_slices_match_the_card_address_modulo_the_alignment() {
        let mut b = BounceBuffer::default();
        for card in [0u64, 1, 3, 63, 64, 4095, 4096, 0x1_0000_0007, 0x2000 + 17] {
            for len in [0usize, 1, 40, 2048, 9000] {
                let s = b.slice_for(card, len);
                assert_eq!(s.len(), len);
                assert!(aligned(s.as_ptr(), card), "card {card:#x} len {len}");
            }
        }
    }

    #[test]
    fn timeout_is_its_own_error() {
        let e = dma_error(
            Path::new("/dev/xdma0_h2c_0"),
            "write",
            0x40,
            io::Error::from_raw_os_error(110),
        );
        assert!(matches!(e, XdmaError::DmaTimeout { offset: 0x40, .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("/dev/xdma0_h2c_0") && msg.contains("stopped the engine"),
            "{msg}"
        );
        let e = dma_error(Path::new("x"), "read", 0, io::Error::from_raw_os_error(5));
        assert!(matches!(e, XdmaError::Io { .. }));
    }
}
