//! The XDMA driver's character devices for one card and one DMA channel.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::dma::BounceBuffer;
use crate::node::Node;
use crate::{Result, XdmaError};

/// The nodes the Xilinx XDMA driver creates for card `prefix` (e.g.
/// `/dev/xdma0`): `_user` (the user BAR), `_h2c_N` and `_c2h_N` (DMA
/// channel N) and, when present, `_control` (the XDMA IP's own registers).
///
/// Registers are 32-bit little-endian and accessed one word per call, as
/// the driver requires; 64-bit registers are two words, low word first.
/// DMA goes through `pwrite`/`pread` at the card address, looping over
/// short transfers, from a bounce buffer whose address is congruent to the
/// card address (the driver's alignment rule, [`crate::dma`]).
#[derive(Debug)]
pub struct XdmaDevice {
    user: Node,
    h2c: Node,
    c2h: Node,
    control: Option<Node>,
    control_path: PathBuf,
    /// The node prefix it was opened with (`/dev/xdma0`).
    prefix: PathBuf,
    bounce: Mutex<BounceBuffer>,
}

/// The node path `<prefix><suffix>` (e.g. `/dev/xdma0` + `_user`).
pub fn node_path(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

impl XdmaDevice {
    /// Open `<prefix>_user`, `<prefix>_h2c_0`, `<prefix>_c2h_0` (and
    /// `<prefix>_control` if it exists). A missing node is an
    /// [`XdmaError::Open`] naming its path.
    pub fn open(prefix: impl AsRef<Path>) -> Result<XdmaDevice> {
        XdmaDevice::open_channel(prefix, 0)
    }

    /// As [`XdmaDevice::open`], on DMA channel `channel`.
    pub fn open_channel(prefix: impl AsRef<Path>, channel: u32) -> Result<XdmaDevice> {
        let prefix = prefix.as_ref();
        let user = Node::open(node_path(prefix, "_user"))?;
        let h2c = Node::open(node_path(prefix, &format!("_h2c_{channel}")))?;
        let c2h = Node::open(node_path(prefix, &format!("_c2h_{channel}")))?;
        let control_path = node_path(prefix, "_control");
        // The control node is only needed for XDMA IP diagnostics, and a
        // card whose driver hides it still moves packets.
        let control = if control_path.exists() {
            Some(Node::open(control_path.clone())?)
        } else {
            None
        };
        Ok(XdmaDevice {
            user,
            h2c,
            c2h,
            control,
            control_path,
            prefix: prefix.to_path_buf(),
            bounce: Mutex::new(BounceBuffer::default()),
        })
    }

    /// The node prefix it was opened with (`/dev/xdma0`).
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// Path of the user-BAR node.
    pub fn user_path(&self) -> &Path {
        self.user.path()
    }

    /// Path of the host-to-card DMA node.
    pub fn h2c_path(&self) -> &Path {
        self.h2c.path()
    }

    /// Path of the card-to-host DMA node.
    pub fn c2h_path(&self) -> &Path {
        self.c2h.path()
    }

    /// Read the 32-bit user-BAR register at byte `offset`.
    pub fn read_u32(&self, offset: u64) -> Result<u32> {
        self.user.read_u32(offset)
    }

    /// Write the 32-bit user-BAR register at byte `offset`.
    pub fn write_u32(&self, offset: u64, v: u32) -> Result<()> {
        self.user.write_u32(offset, v)
    }

    /// Read a 64-bit user-BAR register (low word at `offset`, then high).
    pub fn read_u64(&self, offset: u64) -> Result<u64> {
        let lo = self.user.read_u32(offset)? as u64;
        let hi = self.user.read_u32(offset + 4)? as u64;
        Ok(lo | hi << 32)
    }

    /// Write a 64-bit user-BAR register (low word first).
    pub fn write_u64(&self, offset: u64, v: u64) -> Result<()> {
        self.user.write_u32(offset, v as u32)?;
        self.user.write_u32(offset + 4, (v >> 32) as u32)
    }

    /// Read a 32-bit XDMA IP register through `<prefix>_control`.
    pub fn control_read_u32(&self, offset: u64) -> Result<u32> {
        match &self.control {
            Some(n) => n.read_u32(offset),
            None => Err(XdmaError::Open {
                path: self.control_path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            }),
        }
    }

    /// Host-to-card DMA: write `data` at card address `card_addr` (any
    /// caller buffer: it is copied to an aligned bounce buffer).
    pub fn dma_write(&self, card_addr: u64, data: &[u8]) -> Result<()> {
        let mut bounce = self.bounce.lock().unwrap_or_else(|p| p.into_inner());
        let buf = bounce.slice_for(card_addr, data.len());
        buf.copy_from_slice(data);
        self.h2c.dma_write_at(card_addr, buf)
    }

    /// Card-to-host DMA: fill `buf` from card address `card_addr` (through
    /// an aligned bounce buffer).
    pub fn dma_read(&self, card_addr: u64, buf: &mut [u8]) -> Result<()> {
        let mut bounce = self.bounce.lock().unwrap_or_else(|p| p.into_inner());
        let b = bounce.slice_for(card_addr, buf.len());
        self.c2h.dma_read_at(card_addr, b)?;
        buf.copy_from_slice(b);
        Ok(())
    }
}
