//! A software card behind stand-in files: the card end of the packet rings.
//!
//! [`FileCard`] owns a regular file in place of `<prefix>_user` (the
//! register block) and one regular file of card memory that both
//! `<prefix>_h2c_0` and `<prefix>_c2h_0` are hard links to, as on the real
//! card where both DMA channels address the same DDR. An [`XdmaLink`]
//! opened on [`FileCard::prefix`] then runs the real host code (`pread`/
//! `pwrite` on the nodes) against it. The card consumes published H2C
//! slots, hands each packet to a handler, and publishes the handler's
//! answers in C2H slots, exactly as the card's fast path does.
//!
//! [`XdmaLink`]: crate::XdmaLink

use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio_wire::xdma::{self, reg, status};

use crate::device::node_path;
use crate::link::{Backoff, Geometry};
use crate::node::Node;
use crate::{Result, XdmaError};

/// Answers one request may leave held back while the C2H ring is full; more are dropped.
const MAX_PENDING: usize = 1024;

/// Handler of one packet: `(packet, emit)`, calling `emit` once per answer.
pub type Handler<'a> = dyn FnMut(&[u8], &mut dyn FnMut(&[u8])) + 'a;

/// What one [`FileCard::serve_once`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    /// H2C slots consumed.
    pub requests: usize,
    /// C2H slots published.
    pub responses: usize,
}

impl Served {
    /// Nothing moved.
    pub fn is_idle(&self) -> bool {
        self.requests == 0 && self.responses == 0
    }
}

/// Card-side counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CardStats {
    /// Packets handed to the handler.
    pub requests: u64,
    /// Answers published.
    pub responses: u64,
    /// Malformed H2C slots dropped (also counted in the `ERRORS` register).
    pub malformed: u64,
    /// Answers dropped: larger than a slot, or the backlog was full.
    pub dropped_responses: u64,
}

/// A software Clio card on stand-in files (see the module docs).
#[derive(Debug)]
pub struct FileCard {
    prefix: PathBuf,
    user: Node,
    mem: Node,
    geom: Geometry,
    h2c_tail: u32,
    c2h_head: u32,
    /// Image of the H2C slot being read.
    slot: Vec<u8>,
    /// Image of the C2H slot being written.
    out_slot: Vec<u8>,
    pending: VecDeque<Vec<u8>>,
    stats: CardStats,
}

impl FileCard {
    /// A geometry for tests and software cards: 64 slots of 2 KiB (a
    /// 1450-byte-MTU Clio packet fits), H2C ring at 0, C2H ring after it.
    pub const DEFAULT_GEOMETRY: Geometry = Geometry {
        slot_bytes: 2048,
        slot_count: 64,
        h2c_base: 0,
        c2h_base: 64 * 2048,
    };

    /// Create the stand-in nodes `<dir>/<name>_user`, `<dir>/<name>_h2c_0`
    /// and `<dir>/<name>_c2h_0` (the last two hard links to
    /// `<dir>/<name>_card_mem`), reset the registers and mark the card READY.
    pub fn create(dir: &Path, name: &str, geom: Geometry) -> Result<FileCard> {
        let prefix = dir.join(name);
        let user_path = node_path(&prefix, "_user");
        geom.validate()
            .map_err(|(reg, value, reason)| XdmaError::Geometry {
                path: user_path.clone(),
                reg,
                value,
                reason,
            })?;
        let mem_path = node_path(&prefix, "_card_mem");
        let user = Node::create(user_path)?;
        user.set_len(reg::BLOCK_LEN)?;
        let mem = Node::create(mem_path.clone())?;
        let end = (geom.h2c_base.max(geom.c2h_base)) + geom.ring_bytes();
        mem.set_len(end)?;
        for channel in ["_h2c_0", "_c2h_0"] {
            let link = node_path(&prefix, channel);
            let _ = fs::remove_file(&link);
            fs::hard_link(&mem_path, &link).map_err(|source| XdmaError::Open {
                path: link.clone(),
                source,
            })?;
        }
        let card = FileCard {
            prefix,
            user,
            mem,
            geom,
            h2c_tail: 0,
            c2h_head: 0,
            slot: vec![0; geom.slot_bytes as usize],
            out_slot: vec![0; geom.slot_bytes as usize],
            pending: VecDeque::new(),
            stats: CardStats::default(),
        };
        for (r, v) in [
            (reg::ID, xdma::ID),
            (reg::VERSION, xdma::VERSION),
            (reg::H2C_HEAD, 0),
            (reg::H2C_TAIL, 0),
            (reg::C2H_HEAD, 0),
            (reg::C2H_TAIL, 0),
            (reg::SLOT_BYTES, geom.slot_bytes),
            (reg::SLOT_COUNT, geom.slot_count),
            (reg::H2C_BASE, geom.h2c_base as u32),
            (reg::H2C_BASE + 4, (geom.h2c_base >> 32) as u32),
            (reg::C2H_BASE, geom.c2h_base as u32),
            (reg::C2H_BASE + 4, (geom.c2h_base >> 32) as u32),
            (reg::ERRORS, 0),
            (reg::XLATE_REFUSED, 0),
            (reg::XLATE_TIMEOUTS, 0),
            (reg::XLATE_BAD, 0),
            (reg::STATUS, status::READY | status::LINK_UP),
        ] {
            card.user.write_u32(r, v)?;
        }
        Ok(card)
    }

    /// The node prefix to open the card with (`XdmaLink::open(prefix)`).
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The ring geometry the card publishes.
    pub fn geometry(&self) -> Geometry {
        self.geom
    }

    /// Counters.
    pub fn stats(&self) -> CardStats {
        self.stats
    }

    /// Read a register of the block (e.g. to check what the host wrote).
    pub fn register(&self, offset: u64) -> Result<u32> {
        self.user.read_u32(offset)
    }

    /// Overwrite a register (e.g. to clear `STATUS.READY`).
    pub fn set_register(&self, offset: u64, v: u32) -> Result<()> {
        self.user.write_u32(offset, v)
    }

    /// Write card memory directly (e.g. to place a slot image).
    pub fn write_mem(&self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.mem.write_all_at(addr, bytes)
    }

    /// Read card memory directly.
    pub fn read_mem(&self, addr: u64, buf: &mut [u8]) -> Result<()> {
        self.mem.read_exact_at(addr, buf)
    }

    /// Publish `packet` in the next C2H slot now, as the card's fast path
    /// would for an unsolicited packet. Fails with [`XdmaError::Full`] if
    /// the host has not freed a slot.
    pub fn publish(&mut self, packet: &[u8]) -> Result<()> {
        if !self.c2h_has_room()? {
            return Err(XdmaError::Full {
                path: self.user.path().to_path_buf(),
                waited: Duration::ZERO,
            });
        }
        self.write_c2h(packet)?;
        self.user.write_u32(reg::C2H_HEAD, self.c2h_head)
    }

    /// Consume published H2C slots, call `handle` on each packet, and
    /// publish its answers. While the C2H ring is full, answers are held
    /// back and no further request is consumed (the card's back-pressure:
    /// a host that never reads answers ends up with a full H2C ring).
    pub fn serve_once(&mut self, handle: &mut Handler<'_>) -> Result<Served> {
        let mut served = Served {
            responses: self.flush()?,
            ..Served::default()
        };
        let head = self.user.read_u32(reg::H2C_HEAD)?;
        let ahead = head.wrapping_sub(self.h2c_tail);
        if ahead > self.geom.slot_count {
            // The host published more than the ring holds: its slots were
            // overwritten, so none can be trusted. Drop them all.
            self.count_malformed(ahead as u64)?;
            self.h2c_tail = head;
            self.user.write_u32(reg::H2C_TAIL, head)?;
            return Ok(served);
        }
        let mut slot = std::mem::take(&mut self.slot);
        // Back-pressure as on the card: a request is only taken while the
        // answers of the previous ones have all been published.
        while self.h2c_tail != head {
            if !self.pending.is_empty() {
                match self.flush() {
                    Ok(n) => served.responses += n,
                    Err(e) => {
                        self.slot = slot;
                        return Err(e);
                    }
                }
                if !self.pending.is_empty() {
                    break;
                }
            }
            let r = self
                .mem
                .read_exact_at(self.geom.h2c_slot(self.h2c_tail), &mut slot);
            if let Err(e) = r {
                self.slot = slot;
                return Err(e);
            }
            match xdma::parse_slot(&slot) {
                Ok(packet) => {
                    self.stats.requests += 1;
                    let (pending, stats) = (&mut self.pending, &mut self.stats);
                    let max = self.geom.max_packet();
                    handle(packet, &mut |answer: &[u8]| {
                        if answer.len() > max || pending.len() >= MAX_PENDING {
                            stats.dropped_responses += 1;
                        } else {
                            pending.push_back(answer.to_vec());
                        }
                    });
                }
                Err(_) => {
                    if let Err(e) = self.count_malformed(1) {
                        self.slot = slot;
                        return Err(e);
                    }
                }
            }
            self.h2c_tail = self.h2c_tail.wrapping_add(1);
            served.requests += 1;
        }
        self.slot = slot;
        if served.requests > 0 {
            self.user.write_u32(reg::H2C_TAIL, self.h2c_tail)?;
        }
        served.responses += self.flush()?;
        Ok(served)
    }

    fn count_malformed(&mut self, n: u64) -> Result<()> {
        self.stats.malformed += n;
        let e = self.user.read_u32(reg::ERRORS)?;
        self.user.write_u32(reg::ERRORS, e.wrapping_add(n as u32))
    }

    fn c2h_has_room(&self) -> Result<bool> {
        let tail = self.user.read_u32(reg::C2H_TAIL)?;
        let used = self.c2h_head.wrapping_sub(tail);
        if used > self.geom.slot_count {
            return Err(XdmaError::RingIndex {
                path: self.user.path().to_path_buf(),
                reg: "C2H_TAIL",
                value: tail,
                ahead: used,
                count: self.geom.slot_count,
            });
        }
        Ok(used < self.geom.slot_count)
    }

    fn write_c2h(&mut self, packet: &[u8]) -> Result<()> {
        let n = xdma::emit_slot(packet, &mut self.out_slot).map_err(|source| XdmaError::Slot {
            ring: "c2h",
            index: self.c2h_head,
            source,
        })?;
        self.mem
            .write_all_at(self.geom.c2h_slot(self.c2h_head), &self.out_slot[..n])?;
        self.c2h_head = self.c2h_head.wrapping_add(1);
        self.stats.responses += 1;
        Ok(())
    }

    /// Publish held-back answers while there is room; returns how many.
    fn flush(&mut self) -> Result<usize> {
        let mut n = 0;
        while !self.pending.is_empty() && self.c2h_has_room()? {
            if let Some(p) = self.pending.pop_front() {
                self.write_c2h(&p)?;
                n += 1;
            }
        }
        if n > 0 {
            self.user.write_u32(reg::C2H_HEAD, self.c2h_head)?;
        }
        Ok(n)
    }

    /// Serve on a thread of its own until [`CardThread::stop`].
    pub fn spawn<H>(self, handler: H) -> CardThread
    where
        H: FnMut(&[u8], &mut dyn FnMut(&[u8])) + Send + 'static,
    {
        CardThread::spawn(self, handler)
    }
}

/// A [`FileCard`] serving on its own thread.
#[derive(Debug)]
pub struct CardThread {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<FileCard>>>,
}

impl CardThread {
    fn spawn<H>(mut card: FileCard, mut handler: H) -> CardThread
    where
        H: FnMut(&[u8], &mut dyn FnMut(&[u8])) + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let join = std::thread::spawn(move || {
            let mut backoff = Backoff::default();
            while !flag.load(Ordering::Acquire) {
                if card.serve_once(&mut handler)?.is_idle() {
                    backoff.wait(Instant::now() + Duration::from_millis(1));
                } else {
                    backoff = Backoff::default();
                }
            }
            Ok(card)
        });
        CardThread {
            stop,
            join: Some(join),
        }
    }

    /// Stop serving and give the card back (or the error that stopped it).
    pub fn stop(mut self) -> Result<FileCard> {
        self.stop.store(true, Ordering::Release);
        let join = self.join.take().expect("joined only here");
        match join.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for CardThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}
