//! One device node (or its stand-in file) with positioned I/O whose errors
//! name the node.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::{dma, Result, XdmaError};

/// An open node: the file plus the path it was opened from.
#[derive(Debug)]
pub(crate) struct Node {
    file: File,
    path: PathBuf,
}

impl Node {
    /// Open `path` read-write (every XDMA node we use is opened `O_RDWR`,
    /// as the Xilinx tools do).
    pub(crate) fn open(path: PathBuf) -> Result<Node> {
        match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => Ok(Node { file, path }),
            Err(source) => Err(XdmaError::Open { path, source }),
        }
    }

    /// Create (or truncate) a regular file standing in for a node.
    pub(crate) fn create(path: PathBuf) -> Result<Node> {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
        {
            Ok(file) => Ok(Node { file, path }),
            Err(source) => Err(XdmaError::Open { path, source }),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Fill `buf` from `offset`, looping over short reads (`pread`).
    pub(crate) fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(XdmaError::ShortTransfer {
                        path: self.path.clone(),
                        op: "read",
                        offset,
                        done,
                        want: buf.len(),
                    })
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(self.io("read", offset, source)),
            }
        }
        Ok(())
    }

    /// Write all of `buf` at `offset`, looping over short writes (`pwrite`).
    pub(crate) fn write_all_at(&self, offset: u64, buf: &[u8]) -> Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.write_at(&buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(XdmaError::ShortTransfer {
                        path: self.path.clone(),
                        op: "write",
                        offset,
                        done,
                        want: buf.len(),
                    })
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(self.io("write", offset, source)),
            }
        }
        Ok(())
    }

    /// A DMA write (`pwrite` on an `_h2c_N` node): `buf` must follow the
    /// driver's alignment rule ([`crate::dma`]); a driver timeout becomes
    /// [`XdmaError::DmaTimeout`].
    pub(crate) fn dma_write_at(&self, offset: u64, buf: &[u8]) -> Result<()> {
        self.check_dma("write", offset, buf.as_ptr())?;
        self.write_all_at(offset, buf).map_err(dma_io)
    }

    /// A DMA read (`pread` on a `_c2h_N` node), as [`Node::dma_write_at`].
    pub(crate) fn dma_read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.check_dma("read", offset, buf.as_ptr())?;
        self.read_exact_at(offset, buf).map_err(dma_io)
    }

    fn check_dma(&self, op: &'static str, offset: u64, buf: *const u8) -> Result<()> {
        if dma::aligned(buf, offset) {
            Ok(())
        } else {
            Err(XdmaError::Misaligned {
                path: self.path.clone(),
                op,
                offset,
                buf: buf as usize,
                align: dma::DMA_ALIGN,
            })
        }
    }

    /// One 32-bit little-endian register read (one 4-byte `pread`: the XDMA
    /// user/control nodes move exactly one 32-bit word per call).
    pub(crate) fn read_u32(&self, offset: u64) -> Result<u32> {
        let mut b = [0u8; 4];
        self.read_exact_at(offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// One 32-bit little-endian register write.
    pub(crate) fn write_u32(&self, offset: u64, v: u32) -> Result<()> {
        self.write_all_at(offset, &v.to_le_bytes())
    }

    pub(crate) fn set_len(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|source| self.io("write", len, source))
    }

    fn io(&self, op: &'static str, offset: u64, source: io::Error) -> XdmaError {
        XdmaError::Io {
            path: self.path.clone(),
            op,
            offset,
            source,
        }
    }
}

/// An I/O error of a DMA node, classified ([`dma::dma_error`]).
fn dma_io(e: XdmaError) -> XdmaError {
    match e {
        XdmaError::Io {
            path,
            op,
            offset,
            source,
        } => dma::dma_error(&path, op, offset, source),
        e => e,
    }
}
