//! The host side of the packet rings in card memory (format in
//! [`clio_wire::xdma`]): [`XdmaLink`] sends whole Clio packets through H2C
//! slots and receives them from C2H slots.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use clio_wire::clio::HEADER_LEN;
use clio_wire::xdma::{self, reg, status, SLOT_HEADER_LEN};

use crate::device::XdmaDevice;
use crate::{Result, XdmaError};

/// Slot geometry of the two rings, as the card publishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Bytes per slot (header plus largest packet).
    pub slot_bytes: u32,
    /// Slots per ring (a power of two).
    pub slot_count: u32,
    /// Card address of H2C slot 0.
    pub h2c_base: u64,
    /// Card address of C2H slot 0.
    pub c2h_base: u64,
}

impl Geometry {
    /// Check the geometry is usable; on failure, the register at fault,
    /// its value and why.
    pub fn validate(&self) -> std::result::Result<(), (&'static str, u64, &'static str)> {
        if self.slot_count == 0 || !self.slot_count.is_power_of_two() {
            return Err((
                "SLOT_COUNT",
                self.slot_count as u64,
                "must be a non-zero power of two",
            ));
        }
        let min = (SLOT_HEADER_LEN + HEADER_LEN) as u32;
        let max = (SLOT_HEADER_LEN + u16::MAX as usize) as u32;
        if self.slot_bytes < min || self.slot_bytes > max || self.slot_bytes % 4 != 0 {
            return Err((
                "SLOT_BYTES",
                self.slot_bytes as u64,
                "must be a multiple of 4 holding a Clio header and at most a 64 KiB packet",
            ));
        }
        let ring = self.ring_bytes();
        let h2c_end = self.h2c_base.checked_add(ring).ok_or((
            "H2C_BASE",
            self.h2c_base,
            "ring runs past the 64-bit address space",
        ))?;
        let c2h_end = self.c2h_base.checked_add(ring).ok_or((
            "C2H_BASE",
            self.c2h_base,
            "ring runs past the 64-bit address space",
        ))?;
        if self.h2c_base < c2h_end && self.c2h_base < h2c_end {
            return Err(("C2H_BASE", self.c2h_base, "C2H ring overlaps the H2C ring"));
        }
        Ok(())
    }

    /// Bytes of one ring.
    pub fn ring_bytes(&self) -> u64 {
        self.slot_count as u64 * self.slot_bytes as u64
    }

    /// Largest packet one slot holds.
    pub fn max_packet(&self) -> usize {
        self.slot_bytes as usize - SLOT_HEADER_LEN
    }

    /// Card address of H2C slot `index` (free-running).
    pub fn h2c_slot(&self, index: u32) -> u64 {
        xdma::slot_addr(self.h2c_base, index, self.slot_count, self.slot_bytes)
    }

    /// Card address of C2H slot `index` (free-running).
    pub fn c2h_slot(&self, index: u32) -> u64 {
        xdma::slot_addr(self.c2h_base, index, self.slot_count, self.slot_bytes)
    }
}

/// How long [`XdmaLink::send`] waits for a free H2C slot.
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// Counters of one link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets published to the card.
    pub sent: u64,
    /// Packets received from the card.
    pub received: u64,
    /// C2H slots consumed but dropped (malformed, or larger than the buffer).
    pub dropped: u64,
    /// Times a send found the H2C ring full and had to wait.
    pub full_waits: u64,
}

/// The card's own counters (user-BAR registers, wrapping `u32`s, since the
/// card's reset): its ring engine's and its Clio-to-EDM translator's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CardCounters {
    /// Malformed H2C slots the card dropped (`ERRORS`).
    pub malformed_slots: u32,
    /// Packets the translator refused, carrying nothing (`XLATE_REFUSED`).
    pub refused: u32,
    /// Translator slots freed by their timeout: no answer came, a dead EDM
    /// link or memory node (`XLATE_TIMEOUTS`).
    pub timeouts: u32,
    /// Answers that did not parse, stray answer writes and NULL responses
    /// (`XLATE_BAD`).
    pub bad_answers: u32,
}

impl std::fmt::Display for CardCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} malformed slots (ERRORS), {} refused (XLATE_REFUSED), {} timed out (XLATE_TIMEOUTS), {} bad answers (XLATE_BAD)",
            self.malformed_slots, self.refused, self.timeouts, self.bad_answers
        )
    }
}

/// Waits in a poll loop: spin briefly, then yield, then sleep in short
/// steps, never past the deadline. A register read on a real card costs
/// about a microsecond, so the first polls are cheap and fast.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    rounds: u32,
}

impl Backoff {
    /// Wait one poll interval; `false` once `deadline` has passed.
    pub(crate) fn wait(&mut self, deadline: Instant) -> bool {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < 64 {
            std::hint::spin_loop();
        } else if self.rounds < 128 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50).min(deadline - now));
        }
        true
    }
}

/// Host end of the packet path to one card: owns the H2C producer index
/// and the C2H consumer index.
#[derive(Debug)]
pub struct XdmaLink {
    dev: XdmaDevice,
    geom: Geometry,
    h2c_head: u32,
    h2c_tail_seen: u32,
    c2h_tail: u32,
    c2h_head_seen: u32,
    slot: Vec<u8>,
    /// Packets taken off the C2H ring while a send waited for room.
    backlog: VecDeque<Vec<u8>>,
    send_timeout: Duration,
    stats: LinkStats,
}

impl XdmaLink {
    /// Open `<prefix>_*` nodes (channel 0) and [`XdmaLink::probe`] the card.
    pub fn open(prefix: impl AsRef<std::path::Path>) -> Result<XdmaLink> {
        XdmaLink::probe(XdmaDevice::open(prefix)?)
    }

    /// Check the card is a ready Clio card with a usable geometry and pick
    /// up the ring indices where a previous host left them.
    pub fn probe(dev: XdmaDevice) -> Result<XdmaLink> {
        let path = || dev.user_path().to_path_buf();
        let id = dev.read_u32(reg::ID)?;
        if id != xdma::ID {
            return Err(XdmaError::BadId {
                path: path(),
                found: id,
                expected: xdma::ID,
            });
        }
        let version = dev.read_u32(reg::VERSION)?;
        if version != xdma::VERSION {
            return Err(XdmaError::BadVersion {
                path: path(),
                found: version,
                expected: xdma::VERSION,
            });
        }
        let st = dev.read_u32(reg::STATUS)?;
        if st & status::READY == 0 {
            return Err(XdmaError::NotReady {
                path: path(),
                status: st,
            });
        }
        let geom = Geometry {
            slot_bytes: dev.read_u32(reg::SLOT_BYTES)?,
            slot_count: dev.read_u32(reg::SLOT_COUNT)?,
            h2c_base: dev.read_u64(reg::H2C_BASE)?,
            c2h_base: dev.read_u64(reg::C2H_BASE)?,
        };
        geom.validate()
            .map_err(|(reg, value, reason)| XdmaError::Geometry {
                path: path(),
                reg,
                value,
                reason,
            })?;
        let h2c_head = dev.read_u32(reg::H2C_HEAD)?;
        let h2c_tail = dev.read_u32(reg::H2C_TAIL)?;
        let c2h_head = dev.read_u32(reg::C2H_HEAD)?;
        let c2h_tail = dev.read_u32(reg::C2H_TAIL)?;
        let mut link = XdmaLink {
            slot: vec![0; geom.slot_bytes as usize],
            backlog: VecDeque::new(),
            dev,
            geom,
            h2c_head,
            h2c_tail_seen: h2c_tail,
            c2h_tail,
            c2h_head_seen: c2h_tail,
            send_timeout: DEFAULT_SEND_TIMEOUT,
            stats: LinkStats::default(),
        };
        link.check_ahead("H2C_HEAD", h2c_head, h2c_tail)?;
        link.check_ahead("C2H_HEAD", c2h_head, c2h_tail)?;
        link.c2h_head_seen = c2h_head;
        Ok(link)
    }

    /// Set how long [`XdmaLink::send`] waits for a free slot.
    pub fn set_send_timeout(&mut self, t: Duration) {
        self.send_timeout = t;
    }

    /// The ring geometry.
    pub fn geometry(&self) -> Geometry {
        self.geom
    }

    /// Largest packet [`XdmaLink::send`] accepts.
    pub fn max_packet(&self) -> usize {
        self.geom.max_packet()
    }

    /// The device nodes.
    pub fn device(&self) -> &XdmaDevice {
        &self.dev
    }

    /// Counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// The card's count of malformed H2C slots it dropped (`ERRORS`).
    pub fn card_errors(&self) -> Result<u32> {
        self.dev.read_u32(reg::ERRORS)
    }

    /// The card's counters (`ERRORS` and the translator's `XLATE_*`).
    pub fn card_counters(&self) -> Result<CardCounters> {
        card_counters(&self.dev)
    }

    fn check_ahead(&self, name: &'static str, head: u32, tail: u32) -> Result<()> {
        let ahead = head.wrapping_sub(tail);
        if ahead > self.geom.slot_count {
            return Err(XdmaError::RingIndex {
                path: self.dev.user_path().to_path_buf(),
                reg: name,
                value: head,
                ahead,
                count: self.geom.slot_count,
            });
        }
        Ok(())
    }

    /// Send one packet: DMA it into the next H2C slot, then publish it with
    /// `H2C_HEAD`. Waits up to the send timeout for a free slot
    /// ([`XdmaError::Full`] after that).
    pub fn send(&mut self, packet: &[u8]) -> Result<()> {
        if packet.len() > self.geom.max_packet() {
            return Err(XdmaError::TooLarge {
                len: packet.len(),
                max: self.geom.max_packet(),
            });
        }
        if self.h2c_head.wrapping_sub(self.h2c_tail_seen) >= self.geom.slot_count {
            self.wait_for_slot()?;
        }
        let n = xdma::emit_slot(packet, &mut self.slot).map_err(|source| XdmaError::Slot {
            ring: "h2c",
            index: self.h2c_head,
            source,
        })?;
        self.dev
            .dma_write(self.geom.h2c_slot(self.h2c_head), &self.slot[..n])?;
        self.h2c_head = self.h2c_head.wrapping_add(1);
        self.dev.write_u32(reg::H2C_HEAD, self.h2c_head)?;
        self.stats.sent += 1;
        Ok(())
    }

    fn wait_for_slot(&mut self) -> Result<()> {
        self.stats.full_waits += 1;
        let start = Instant::now();
        let deadline = start + self.send_timeout;
        let mut backoff = Backoff::default();
        loop {
            let tail = self.dev.read_u32(reg::H2C_TAIL)?;
            // The card's consumer index can never pass our producer index.
            if tail.wrapping_sub(self.h2c_tail_seen)
                > self.h2c_head.wrapping_sub(self.h2c_tail_seen)
            {
                return Err(XdmaError::RingIndex {
                    path: self.dev.user_path().to_path_buf(),
                    reg: "H2C_TAIL",
                    value: tail,
                    ahead: tail.wrapping_sub(self.h2c_tail_seen),
                    count: self.geom.slot_count,
                });
            }
            self.h2c_tail_seen = tail;
            if self.h2c_head.wrapping_sub(tail) < self.geom.slot_count {
                return Ok(());
            }
            // The card may be waiting for room in the C2H ring before it
            // takes more requests: take its answers off the ring meanwhile,
            // or both sides would wait for each other.
            if self.backlog.len() < self.backlog_cap() && self.drain_one()? {
                backoff = Backoff::default();
                continue;
            }
            if !backoff.wait(deadline) {
                return Err(XdmaError::Full {
                    path: self.dev.user_path().to_path_buf(),
                    waited: start.elapsed(),
                });
            }
        }
    }

    /// Most packets kept in the backlog: four rings' worth.
    fn backlog_cap(&self) -> usize {
        4 * self.geom.slot_count as usize
    }

    /// Move one published C2H packet into the backlog; `false` if none.
    /// Malformed slots are dropped and counted, as `recv` would.
    fn drain_one(&mut self) -> Result<bool> {
        let head = self.dev.read_u32(reg::C2H_HEAD)?;
        if head == self.c2h_tail || head.wrapping_sub(self.c2h_tail) > self.geom.slot_count {
            // Nothing, or a value a later poll will re-read and judge.
            return Ok(false);
        }
        self.c2h_head_seen = head;
        let mut buf = vec![0u8; self.geom.max_packet()];
        match self.take_slot(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                self.backlog.push_back(buf);
            }
            Err(e) if e.is_slot_local() => {}
            Err(e) => return Err(e),
        }
        Ok(true)
    }

    /// Receive one packet into `buf`, waiting up to `timeout`; `Ok(None)`
    /// if none arrived in time. See [`XdmaLink::recv_until`].
    pub fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> Result<Option<usize>> {
        self.recv_until(buf, Instant::now() + timeout)
    }

    /// Receive one packet into `buf`, polling `C2H_HEAD` until `deadline`.
    ///
    /// A malformed slot or a packet larger than `buf` is consumed (the
    /// ring moves on) and reported as a slot-local error
    /// ([`XdmaError::is_slot_local`]); the next call continues.
    pub fn recv_until(&mut self, buf: &mut [u8], deadline: Instant) -> Result<Option<usize>> {
        if let Some(p) = self.backlog.pop_front() {
            if p.len() > buf.len() {
                self.stats.dropped += 1;
                self.stats.received -= 1;
                return Err(XdmaError::BufferTooSmall {
                    len: p.len(),
                    cap: buf.len(),
                });
            }
            buf[..p.len()].copy_from_slice(&p);
            return Ok(Some(p.len()));
        }
        if self.c2h_head_seen == self.c2h_tail && !self.poll_c2h(deadline)? {
            return Ok(None);
        }
        self.take_slot(buf).map(Some)
    }

    /// Read the slot at the C2H tail into `buf` and free it.
    fn take_slot(&mut self, buf: &mut [u8]) -> Result<usize> {
        let index = self.c2h_tail;
        self.dev
            .dma_read(self.geom.c2h_slot(index), &mut self.slot)?;
        let parsed = xdma::parse_slot(&self.slot).map(|p| {
            let fits = p.len() <= buf.len();
            if fits {
                buf[..p.len()].copy_from_slice(p);
            }
            (p.len(), fits)
        });
        self.c2h_tail = index.wrapping_add(1);
        self.dev.write_u32(reg::C2H_TAIL, self.c2h_tail)?;
        match parsed {
            Ok((len, true)) => {
                self.stats.received += 1;
                Ok(len)
            }
            Ok((len, false)) => {
                self.stats.dropped += 1;
                Err(XdmaError::BufferTooSmall {
                    len,
                    cap: buf.len(),
                })
            }
            Err(source) => {
                self.stats.dropped += 1;
                Err(XdmaError::Slot {
                    ring: "c2h",
                    index,
                    source,
                })
            }
        }
    }

    /// Poll `C2H_HEAD` until it moves past our tail; `false` at the deadline.
    fn poll_c2h(&mut self, deadline: Instant) -> Result<bool> {
        let mut backoff = Backoff::default();
        let mut suspicious = false;
        loop {
            let head = self.dev.read_u32(reg::C2H_HEAD)?;
            let ahead = head.wrapping_sub(self.c2h_tail);
            if ahead > self.geom.slot_count {
                // One impossible value may be a read racing the card's
                // update; a second one is a broken card.
                if suspicious {
                    return Err(XdmaError::RingIndex {
                        path: self.dev.user_path().to_path_buf(),
                        reg: "C2H_HEAD",
                        value: head,
                        ahead,
                        count: self.geom.slot_count,
                    });
                }
                suspicious = true;
                continue;
            }
            suspicious = false;
            if ahead > 0 {
                self.c2h_head_seen = head;
                return Ok(true);
            }
            if !backoff.wait(deadline) {
                return Ok(false);
            }
        }
    }
}

/// Read a card's counters from its user BAR (also before a link is opened:
/// `clio bringup` reads them from a card that is not ready).
pub fn card_counters(dev: &XdmaDevice) -> Result<CardCounters> {
    Ok(CardCounters {
        malformed_slots: dev.read_u32(reg::ERRORS)?,
        refused: dev.read_u32(reg::XLATE_REFUSED)?,
        timeouts: dev.read_u32(reg::XLATE_TIMEOUTS)?,
        bad_answers: dev.read_u32(reg::XLATE_BAD)?,
    })
}
