//! The ring protocol both sides run: a single producer and a single consumer
//! over a [`RingMemory`] region holding one ring (header + slots).
//!
//! The producer writes a slot, then publishes it by storing `head` with
//! release ordering and bumping the doorbell; the consumer loads `head` with
//! acquire ordering, reads and validates the slot, then stores `tail` with
//! release ordering so the producer may reuse it. Neither side keeps state
//! the other can invalidate: both re-read the peer's index from memory, so a
//! restart of either side resumes from the shared header.

use super::{header_field, ring_bytes, slot_offset, Descriptor, Direction, HEADER_LEN, SLOT_LEN};
use crate::{Error, ErrorKind, Field, Result};
use core::sync::atomic::{fence, Ordering};

/// Memory that holds one ring. Implementations decide how a load or store
/// reaches the memory (plain bytes in tests and the in-process emulator,
/// volatile accesses with barriers in the firmware, a shared-memory file in
/// co-simulation); offsets are relative to the ring header.
pub trait RingMemory {
    /// Bytes available.
    fn len(&self) -> usize;
    /// Whether no byte is available.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Load a `u32` header field ([`header_field`], 4 bytes) with acquire
    /// ordering.
    fn load_u32(&self, at: Field) -> u32;
    /// Store a `u32` header field ([`header_field`], 4 bytes) with release
    /// ordering.
    fn store_u32(&mut self, at: Field, v: u32);
    /// Copy bytes out.
    fn read(&self, off: usize, buf: &mut [u8]);
    /// Copy bytes in.
    fn write(&mut self, off: usize, buf: &[u8]);
}

/// Plain memory, possibly shared with another process (a mapped file): the
/// fences order the index accesses against the slot accesses around them
/// (free on x86, needed on an ARM host).
impl RingMemory for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn load_u32(&self, at: Field) -> u32 {
        let mut a = [0u8; 4];
        // A field that is not 4 bytes wide fails here (a bug of the caller).
        a.copy_from_slice(&self[at]);
        fence(Ordering::Acquire);
        u32::from_le_bytes(a)
    }
    fn store_u32(&mut self, at: Field, v: u32) {
        fence(Ordering::Release);
        self[at].copy_from_slice(&v.to_le_bytes());
    }
    fn read(&self, off: usize, buf: &mut [u8]) {
        buf.copy_from_slice(&self[off..off + buf.len()]);
    }
    fn write(&mut self, off: usize, buf: &[u8]) {
        self[off..off + buf.len()].copy_from_slice(buf);
    }
}

/// Write an empty ring header of `slot_count` slots into `mem` (done once
/// by whoever owns the memory at boot).
pub fn init<M: RingMemory + ?Sized>(mem: &mut M, slot_count: u32) -> Result<()> {
    if slot_count == 0 || !slot_count.is_power_of_two() {
        return Err(Error::new(
            "ring.slot_count",
            ErrorKind::Unknown(slot_count as u64),
        ));
    }
    let need = ring_bytes(slot_count);
    if mem.len() < need {
        return Err(Error::truncated("ring.memory", need, mem.len()));
    }
    let mut h = [0u8; HEADER_LEN];
    super::RingHeader::new_checked(&mut h[..])?.init(slot_count)?;
    mem.write(0, &h);
    Ok(())
}

/// Read and validate the header of the ring in `mem`; returns the slot count.
fn attach<M: RingMemory + ?Sized>(mem: &M) -> Result<u32> {
    if mem.len() < HEADER_LEN {
        return Err(Error::truncated("ring.memory", HEADER_LEN, mem.len()));
    }
    let mut h = [0u8; HEADER_LEN];
    mem.read(0, &mut h);
    let count = super::RingHeader::new_checked(&h[..])?.check()?;
    if mem.len() < ring_bytes(count) {
        return Err(Error::truncated(
            "ring.memory",
            ring_bytes(count),
            mem.len(),
        ));
    }
    Ok(count)
}

/// The ring had no free slot; nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingFull;

/// The producing side of a ring.
#[derive(Debug, Clone)]
pub struct Producer {
    count: u32,
    dir: Direction,
}

impl Producer {
    /// Attach to an initialised ring that carries `dir` descriptors.
    pub fn attach<M: RingMemory + ?Sized>(mem: &M, dir: Direction) -> Result<Self> {
        Ok(Producer {
            count: attach(mem)?,
            dir,
        })
    }

    /// Slots in the ring.
    pub fn slot_count(&self) -> u32 {
        self.count
    }

    /// Slots free for [`Producer::push`] right now.
    pub fn free_slots<M: RingMemory + ?Sized>(&self, mem: &M) -> u32 {
        let head = mem.load_u32(header_field::HEAD);
        let tail = mem.load_u32(header_field::TAIL);
        self.count.saturating_sub(head.wrapping_sub(tail))
    }

    /// Publish one descriptor. A descriptor of the wrong direction is a
    /// programming error reported as `ring.kind`, never written.
    pub fn push<M: RingMemory + ?Sized>(
        &mut self,
        mem: &mut M,
        d: &Descriptor,
    ) -> core::result::Result<(), PushError> {
        if d.kind().is_rx() != (self.dir == Direction::Rx) {
            return Err(PushError::Invalid(Error::new(
                "ring.kind",
                ErrorKind::Inconsistent,
            )));
        }
        let mut slot = [0u8; SLOT_LEN];
        d.emit(&mut slot).map_err(PushError::Invalid)?;
        self.push_raw(mem, &slot)
            .map_err(|RingFull| PushError::Full)
    }

    /// Publish a raw slot image as is (used by tests and fault injection to
    /// place a deliberately corrupt descriptor).
    pub fn push_raw<M: RingMemory + ?Sized>(
        &mut self,
        mem: &mut M,
        slot: &[u8; SLOT_LEN],
    ) -> core::result::Result<(), RingFull> {
        let head = mem.load_u32(header_field::HEAD);
        let tail = mem.load_u32(header_field::TAIL);
        if head.wrapping_sub(tail) >= self.count {
            return Err(RingFull);
        }
        mem.write(slot_offset(head, self.count), slot);
        mem.store_u32(header_field::HEAD, head.wrapping_add(1));
        let bell = mem.load_u32(header_field::DOORBELL);
        mem.store_u32(header_field::DOORBELL, bell.wrapping_add(1));
        Ok(())
    }
}

/// Why a push failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// No free slot; retry after the consumer advances.
    Full,
    /// The descriptor cannot be encoded or belongs to the other ring.
    Invalid(Error),
}

/// The consuming side of a ring.
#[derive(Debug, Clone)]
pub struct Consumer {
    count: u32,
    dir: Direction,
}

impl Consumer {
    /// Attach to an initialised ring that carries `dir` descriptors.
    pub fn attach<M: RingMemory + ?Sized>(mem: &M, dir: Direction) -> Result<Self> {
        Ok(Consumer {
            count: attach(mem)?,
            dir,
        })
    }

    /// Slots in the ring.
    pub fn slot_count(&self) -> u32 {
        self.count
    }

    /// Descriptors waiting.
    pub fn pending<M: RingMemory + ?Sized>(&self, mem: &M) -> u32 {
        let head = mem.load_u32(header_field::HEAD);
        let tail = mem.load_u32(header_field::TAIL);
        head.wrapping_sub(tail).min(self.count)
    }

    /// Take the next descriptor. `None` when empty. A malformed slot is
    /// consumed, counted in the header's `rejected` field, and returned as
    /// the error naming its bad field, so the caller can report it and go on.
    pub fn pop<M: RingMemory + ?Sized>(&mut self, mem: &mut M) -> Option<Result<Descriptor>> {
        let head = mem.load_u32(header_field::HEAD);
        let tail = mem.load_u32(header_field::TAIL);
        let used = head.wrapping_sub(tail);
        if used == 0 {
            return None;
        }
        if used > self.count {
            // The producer's index is corrupt; do not walk off into memory
            // that holds no descriptors.
            return Some(Err(Error::new(
                "ring.head",
                ErrorKind::OutOfRange {
                    value: used as u64,
                    max: self.count as u64,
                },
            )));
        }
        let mut slot = [0u8; SLOT_LEN];
        mem.read(slot_offset(tail, self.count), &mut slot);
        let parsed = Descriptor::parse(&slot, self.dir);
        if parsed.is_err() {
            let r = mem.load_u32(header_field::REJECTED);
            mem.store_u32(header_field::REJECTED, r.wrapping_add(1));
        }
        mem.store_u32(header_field::TAIL, tail.wrapping_add(1));
        Some(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::ring_bytes;

    #[test]
    fn wraps_fills_and_rejects() {
        let mut mem = [0u8; ring_bytes(4)];
        init(&mut mem[..], 4).unwrap();
        let mut p = Producer::attach(&mem[..], Direction::Tx).unwrap();
        let mut c = Consumer::attach(&mem[..], Direction::Tx).unwrap();
        // Many laps around a 4-slot ring.
        for round in 0..10u32 {
            for i in 0..4 {
                p.push(
                    &mut mem[..],
                    &Descriptor::FreePaPush {
                        page_shift: 12,
                        ppn: round * 4 + i,
                    },
                )
                .unwrap();
            }
            assert_eq!(
                p.push(
                    &mut mem[..],
                    &Descriptor::FreePaPush {
                        page_shift: 12,
                        ppn: 0
                    }
                ),
                Err(PushError::Full)
            );
            for i in 0..4 {
                assert_eq!(
                    c.pop(&mut mem[..]).unwrap().unwrap(),
                    Descriptor::FreePaPush {
                        page_shift: 12,
                        ppn: round * 4 + i
                    }
                );
            }
            assert!(c.pop(&mut mem[..]).is_none());
        }
        // A corrupt slot is consumed, counted and named; the next one is fine.
        let mut bad = [0u8; SLOT_LEN];
        Descriptor::FreePaPush {
            page_shift: 12,
            ppn: 1,
        }
        .emit(&mut bad)
        .unwrap();
        bad[25] ^= 0x40;
        p.push_raw(&mut mem[..], &bad).unwrap();
        p.push(
            &mut mem[..],
            &Descriptor::TlbInvalidate {
                pid: 1,
                vpn: 2,
                pages: 3,
            },
        )
        .unwrap();
        assert_eq!(c.pop(&mut mem[..]).unwrap().unwrap_err().field, "ring.crc");
        assert_eq!(mem[..].load_u32(header_field::REJECTED), 1);
        assert!(c.pop(&mut mem[..]).unwrap().is_ok());
        // Wrong direction is refused before anything is written.
        assert!(matches!(
            p.push(
                &mut mem[..],
                &Descriptor::FreeReq {
                    tag: 0,
                    pid: 1,
                    req_id: 1,
                    va: 0,
                    size: 1
                }
            ),
            Err(PushError::Invalid(_))
        ));
    }

    #[test]
    fn corrupt_head_is_reported_not_followed() {
        let mut mem = [0u8; ring_bytes(2)];
        init(&mut mem[..], 2).unwrap();
        let mut c = Consumer::attach(&mem[..], Direction::Rx).unwrap();
        mem[..].store_u32(header_field::HEAD, 1000);
        assert_eq!(c.pop(&mut mem[..]).unwrap().unwrap_err().field, "ring.head");
        assert!(Consumer::attach(&mem[..], Direction::Rx).is_err());
    }
}
