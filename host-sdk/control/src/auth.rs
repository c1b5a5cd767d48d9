//! Authenticated control frames (v4): a MAC over every control datagram
//! under the rack's key, with replay protection.
//!
//! ```text
//! frame   = body sender(u64 LE) counter(u64 LE) tag[16]
//! body    = an Envelope's postcard encoding (magic "CLRK", version 4, …)
//! tag     = SipHash-2-4, 128-bit output, keyed with the rack key, over
//!           body ‖ sender ‖ counter
//! ```
//!
//! - **sender**: a random id per sealing party (a process's client, the
//!   controller's prober); **counter**: strictly increasing per sender. A
//!   request whose (sender, counter) is not above the last one the receiver
//!   accepted from that sender is a replay ([`ReplayGuard`]).
//! - A **reply** carries the (sender, counter) of the request it answers
//!   and is sealed by the replier: the requester accepts only the reply to
//!   its own outstanding request (a replayed reply names an old counter).
//! - Counters start at the sender's wall clock in µs ([`Sealer::new`]), so
//!   a sender the receiver forgot (its table is bounded) still beats the
//!   receiver's floor: a forgotten sender's old frames stay refused.
//!
//! Why SipHash-2-4-128: a keyed PRF designed for short inputs (a control
//! frame is at most [`crate::MAX_ENVELOPE_LEN`] bytes), `no_std`, no
//! allocation, a few hundred cycles per frame on the board's Cortex-A53;
//! the 128-bit tag makes a forgery a 2⁻¹²⁸ guess per try.

use core::fmt;
use core::hash::Hasher;

use siphasher::sip128::{Hasher128, SipHasher24};

use crate::{Envelope, Error, ErrorKind, MAX_ENVELOPE_LEN};

/// Bytes after the body: sender, counter and tag.
pub const TRAILER_LEN: usize = 8 + 8 + 16;
/// Largest envelope body a frame may carry (the frame stays within
/// [`MAX_ENVELOPE_LEN`], the largest control datagram the rings carry).
pub const MAX_BODY_LEN: usize = MAX_ENVELOPE_LEN - TRAILER_LEN;

/// The rack's shared secret: 128 bits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RackKey(pub [u8; 16]);

impl fmt::Debug for RackKey {
    // A credential: keep it out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RackKey(<secret>)")
    }
}

/// Why a rack key's text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyError {
    /// Not 32 hex digits long (the length found).
    Length(usize),
    /// A character that is not a hex digit (its position).
    NotHex(usize),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Length(n) => {
                write!(f, "expected 32 hex digits (128 bits), found {n} characters")
            }
            KeyError::NotHex(i) => write!(f, "character {i} is not a hex digit"),
        }
    }
}

impl RackKey {
    /// Parses 32 hex digits (surrounding whitespace ignored).
    pub fn from_hex(text: &str) -> Result<RackKey, KeyError> {
        let t = text.trim().as_bytes();
        if t.len() != 32 {
            return Err(KeyError::Length(t.len()));
        }
        let mut k = [0u8; 16];
        for (i, pair) in t.chunks(2).enumerate() {
            let d = |j: usize| {
                (pair[j] as char)
                    .to_digit(16)
                    .ok_or(KeyError::NotHex(2 * i + j))
            };
            k[i] = (d(0)? * 16 + d(1)?) as u8;
        }
        Ok(RackKey(k))
    }

    fn tag(&self, signed: &[u8]) -> [u8; 16] {
        let mut h = SipHasher24::new_with_key(&self.0);
        h.write(signed);
        h.finish128().as_bytes()
    }
}

/// The boot parameter block that hands a board its rack key: 32 bytes a
/// loader leaves in board DRAM at [`KeyBlock::OFFSET`] bytes past the boot-seed
/// mailbox (`clio_config::BoardConfig::boot_seed_mailbox`), which the
/// firmware reads and zeroes before its fast path runs.
///
/// ```text
/// +0  magic "CLRKKEY1"   +8  key (16 bytes)   +24 check: the first 8 bytes of the
///                                               key's tag over magic + key
/// ```
///
/// The check tells a damaged or half-written block (refused, named) from a
/// key; all zeros (or the magic absent) is no block: the node runs keyless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBlock;

/// Why a key block was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyBlockError {
    /// Shorter than [`KeyBlock::LEN`] (the length found).
    Truncated(usize),
    /// The magic is there but the check does not match the key (`key_block.check`).
    Check,
}

impl fmt::Display for KeyBlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyBlockError::Truncated(n) => {
                write!(f, "key_block: {n} bytes, expected {}", KeyBlock::LEN)
            }
            KeyBlockError::Check => f.write_str("key_block.check: does not match the key"),
        }
    }
}

impl KeyBlock {
    /// Bytes of the block.
    pub const LEN: usize = 32;
    /// Its magic.
    pub const MAGIC: [u8; 8] = *b"CLRKKEY1";
    /// Where it lies: this many bytes past the start of the boot-seed
    /// mailbox (right after its 32 bytes).
    pub const OFFSET: u64 = 32;

    fn check(key: &RackKey) -> [u8; 8] {
        let mut signed = [0u8; 24];
        signed[..8].copy_from_slice(&Self::MAGIC);
        signed[8..].copy_from_slice(&key.0);
        let t = key.tag(&signed);
        let mut c = [0u8; 8];
        c.copy_from_slice(&t[..8]);
        c
    }

    /// The block that carries `key`.
    pub fn encode(key: &RackKey) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..8].copy_from_slice(&Self::MAGIC);
        b[8..24].copy_from_slice(&key.0);
        b[24..].copy_from_slice(&Self::check(key));
        b
    }

    /// The key a block carries: `Ok(None)` without the magic (no block),
    /// `Err` for a short or damaged one.
    pub fn decode(b: &[u8]) -> Result<Option<RackKey>, KeyBlockError> {
        if b.len() < Self::LEN {
            return Err(KeyBlockError::Truncated(b.len()));
        }
        if b[..8] != Self::MAGIC {
            return Ok(None);
        }
        let mut k = [0u8; 16];
        k.copy_from_slice(&b[8..24]);
        let key = RackKey(k);
        if b[24..32] != Self::check(&key) {
            return Err(KeyBlockError::Check);
        }
        Ok(Some(key))
    }
}

#[cfg(test)]
mod key_block_tests {
    use super::*;

    #[test]
    fn a_key_block_round_trips_and_damage_is_named() {
        let key = RackKey([7; 16]);
        let mut b = KeyBlock::encode(&key);
        assert_eq!(KeyBlock::decode(&b), Ok(Some(key)));
        assert_eq!(KeyBlock::decode(&[0u8; 32]), Ok(None));
        assert_eq!(
            KeyBlock::decode(&b[..31]),
            Err(KeyBlockError::Truncated(31))
        );
        b[9] ^= 1;
        assert_eq!(KeyBlock::decode(&b), Err(KeyBlockError::Check));
    }
}

/// The tag of `signed` (a frame's body, sender and counter) under `key`.
pub fn tag_of(key: &RackKey, signed: &[u8]) -> [u8; 16] {
    key.tag(signed)
}

/// The authenticated part of a frame besides the envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seal {
    /// The requester's id.
    pub sender: u64,
    /// Its counter for this request.
    pub counter: u64,
}

/// Seals `env` under `key` with `seal` into `buf` (at least
/// [`MAX_ENVELOPE_LEN`] bytes), returning the frame.
pub fn seal<'b>(
    env: &Envelope,
    key: &RackKey,
    seal: Seal,
    buf: &'b mut [u8],
) -> Result<&'b [u8], Error> {
    let body = buf.len().min(MAX_BODY_LEN);
    let n = env.encode(&mut buf[..body])?.len();
    let end = n + TRAILER_LEN;
    if buf.len() < end {
        return Err(Error::new("frame", ErrorKind::BufferFull));
    }
    buf[n..n + 8].copy_from_slice(&seal.sender.to_le_bytes());
    buf[n + 8..n + 16].copy_from_slice(&seal.counter.to_le_bytes());
    let tag = key.tag(&buf[..n + 16]);
    buf[n + 16..end].copy_from_slice(&tag);
    Ok(&buf[..end])
}

/// Why a frame was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The tag does not match (forged, corrupted, or sealed under another
    /// key), or the frame is too short to hold one: nothing in it is trusted.
    Unauthenticated,
    /// Authentic, but its (sender, counter) is not newer than one already
    /// accepted: a replay.
    Replayed,
    /// Authentic, but the envelope does not decode (an old version, a
    /// malformed message): the field at fault.
    Malformed(Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Unauthenticated => {
                f.write_str("frame.tag: not authenticated under the rack key")
            }
            FrameError::Replayed => f.write_str("frame.counter: a replayed frame"),
            FrameError::Malformed(e) => write!(f, "{e}"),
        }
    }
}

/// Checks `frame`'s tag under `key` and decodes its envelope; the caller
/// checks the [`Seal`] (a [`ReplayGuard`] for requests, its own outstanding
/// seal for replies).
pub fn open(frame: &[u8], key: &RackKey) -> Result<(Envelope, Seal), FrameError> {
    let Some(body_len) = frame.len().checked_sub(TRAILER_LEN) else {
        return Err(FrameError::Unauthenticated);
    };
    let signed = &frame[..body_len + 16];
    let tag = key.tag(signed);
    // Constant time: no early exit on the first differing byte.
    let diff = tag
        .iter()
        .zip(&frame[body_len + 16..])
        .fold(0u8, |d, (a, b)| d | (a ^ b));
    if diff != 0 {
        return Err(FrameError::Unauthenticated);
    }
    let word = |o: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&frame[o..o + 8]);
        u64::from_le_bytes(w)
    };
    let seal = Seal {
        sender: word(body_len),
        counter: word(body_len + 8),
    };
    let env = Envelope::decode(&frame[..body_len]).map_err(FrameError::Malformed)?;
    Ok((env, seal))
}

/// The seal a frame claims (not authenticated: for echoing in a refusal).
pub fn peek_seal(frame: &[u8]) -> Option<Seal> {
    let b = frame.len().checked_sub(TRAILER_LEN)?;
    let word = |o: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&frame[o..o + 8]);
        u64::from_le_bytes(w)
    };
    Some(Seal {
        sender: word(b),
        counter: word(b + 8),
    })
}

/// The refusal a receiver answers a request frame with, sealed under `key`
/// with the seal the frame claims (so its sender can match it): `None` when
/// the frame is too short to carry a request id and a seal.
pub fn refusal<'b>(
    frame: &[u8],
    err: &FrameError,
    key: &RackKey,
    buf: &'b mut [u8],
) -> Option<&'b [u8]> {
    let id = peek_request_id(frame)?;
    let claimed = peek_seal(frame)?;
    let (code, field) = match err {
        FrameError::Unauthenticated => (crate::ErrorCode::Unauthenticated, crate::Field::FrameTag),
        FrameError::Replayed => (crate::ErrorCode::Replayed, crate::Field::FrameCounter),
        FrameError::Malformed(e) => (
            crate::ErrorCode::Malformed,
            crate::Field::ALL
                .iter()
                .copied()
                .find(|f| f.name() == e.field)
                .unwrap_or(crate::Field::Message),
        ),
    };
    let env = Envelope::new(id, crate::Message::Refused { code, field });
    seal(&env, key, claimed, buf).ok()
}

/// The request id of a frame's envelope, even if the frame does not
/// authenticate (so a refusal can carry it).
/// (An old version's id is read too: its refusal names the version.)
pub fn peek_request_id(frame: &[u8]) -> Option<u32> {
    let body = &frame[..frame.len().checked_sub(TRAILER_LEN)?];
    let mut r = crate::Reader { rest: body };
    let magic: [u8; 4] = r.take("envelope.magic").ok()?;
    if magic != crate::MAGIC {
        return None;
    }
    let _version: u16 = r.take("envelope.version").ok()?;
    r.take("envelope.request_id").ok()
}

/// A sealing party: its sender id and counter.
#[derive(Debug, Clone, Copy)]
pub struct Sealer {
    sender: u64,
    counter: u64,
}

impl Sealer {
    /// A sender `sender` (random per party) whose counter starts above
    /// `start` (the wall clock in µs, see the module docs).
    pub const fn new(sender: u64, start: u64) -> Sealer {
        Sealer {
            sender,
            counter: start,
        }
    }

    /// The seal of the next request.
    pub fn next_seal(&mut self) -> Seal {
        self.counter = self.counter.saturating_add(1);
        Seal {
            sender: self.sender,
            counter: self.counter,
        }
    }
}

/// Replay protection for `N` senders: the last counter accepted from each,
/// and a floor for the senders it had to forget.
#[derive(Debug, Clone)]
pub struct ReplayGuard<const N: usize> {
    /// (sender, last counter, last use): the least recently used is forgotten.
    seen: heapless::Vec<(u64, u64, u64), N>,
    /// Counters at or below this are refused from senders not in `seen`.
    floor: u64,
    clock: u64,
}

impl<const N: usize> Default for ReplayGuard<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ReplayGuard<N> {
    /// Nothing seen yet.
    pub const fn new() -> Self {
        ReplayGuard {
            seen: heapless::Vec::new(),
            floor: 0,
            clock: 0,
        }
    }

    /// Accepts `seal` if its counter is above the last one from its sender
    /// (or, for a sender not remembered, above the floor), and records it.
    pub fn check(&mut self, seal: Seal) -> Result<(), FrameError> {
        self.clock += 1;
        if let Some(e) = self.seen.iter_mut().find(|e| e.0 == seal.sender) {
            if seal.counter <= e.1 {
                return Err(FrameError::Replayed);
            }
            e.1 = seal.counter;
            e.2 = self.clock;
            return Ok(());
        }
        if seal.counter <= self.floor {
            return Err(FrameError::Replayed);
        }
        if self.seen.is_full() {
            // Forget the least recently used sender; its counters up to the
            // last accepted stay refused through the floor.
            let (i, _) = self
                .seen
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.2)
                .expect("full, so not empty");
            let gone = self.seen.swap_remove(i);
            self.floor = self.floor.max(gone.1);
        }
        let _ = self.seen.push((seal.sender, seal.counter, self.clock));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorCode, Message};

    const KEY: RackKey = RackKey(*b"0123456789abcdef");

    fn frame(seal_: Seal) -> ([u8; MAX_ENVELOPE_LEN], usize) {
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = seal(
            &Envelope::new(5, Message::Lookup { region: 9 }),
            &KEY,
            seal_,
            &mut buf,
        )
        .unwrap()
        .len();
        (buf, n)
    }

    #[test]
    fn a_sealed_frame_opens_and_each_fault_is_named() {
        let s = Seal {
            sender: 7,
            counter: 100,
        };
        let (mut buf, n) = frame(s);
        let (env, got) = open(&buf[..n], &KEY).unwrap();
        assert_eq!(
            (env.request_id, env.message, got),
            (5, Message::Lookup { region: 9 }, s)
        );
        // Wrong key.
        let other = RackKey(*b"fedcba9876543210");
        assert_eq!(open(&buf[..n], &other), Err(FrameError::Unauthenticated));
        // Forged: a changed message, counter or tag.
        for at in [n - TRAILER_LEN - 1, n - 20, n - 1] {
            buf[at] ^= 1;
            assert_eq!(open(&buf[..n], &KEY), Err(FrameError::Unauthenticated));
            buf[at] ^= 1;
        }
        // Unsealed (a v3-style bare envelope) or truncated.
        let mut bare = [0u8; MAX_ENVELOPE_LEN];
        let m = Envelope::new(5, Message::Lookup { region: 9 })
            .encode(&mut bare)
            .unwrap()
            .len();
        assert_eq!(open(&bare[..m], &KEY), Err(FrameError::Unauthenticated));
        assert_eq!(open(&buf[..10], &KEY), Err(FrameError::Unauthenticated));
        assert_eq!(peek_request_id(&buf[..n]), Some(5));
        // Replay.
        let mut g = ReplayGuard::<2>::new();
        assert_eq!(g.check(s), Ok(()));
        assert_eq!(g.check(s), Err(FrameError::Replayed));
        assert_eq!(
            g.check(Seal { counter: 99, ..s }),
            Err(FrameError::Replayed)
        );
        assert_eq!(g.check(Seal { counter: 101, ..s }), Ok(()));
        assert_eq!(
            FrameError::Replayed.to_string(),
            "frame.counter: a replayed frame"
        );
        let _ = ErrorCode::Replayed;
    }

    #[test]
    fn an_old_version_under_the_right_key_is_refused_naming_the_version() {
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let n = Envelope::new(5, Message::Lookup { region: 9 })
            .encode(&mut buf)
            .unwrap()
            .len();
        buf[4] = 3;
        // Sealed by hand around the v3 body.
        buf[n..n + 8].copy_from_slice(&1u64.to_le_bytes());
        buf[n + 8..n + 16].copy_from_slice(&2u64.to_le_bytes());
        let tag = KEY.tag(&buf[..n + 16]);
        buf[n + 16..n + 32].copy_from_slice(&tag);
        match open(&buf[..n + 32], &KEY) {
            Err(FrameError::Malformed(e)) => {
                assert_eq!(
                    (e.field, e.kind),
                    ("envelope.version", ErrorKind::Unknown(3))
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_forgotten_sender_old_frames_stay_refused() {
        let mut g = ReplayGuard::<2>::new();
        let s = |sender, counter| Seal { sender, counter };
        g.check(s(1, 10)).unwrap();
        g.check(s(2, 20)).unwrap();
        g.check(s(3, 30)).unwrap(); // forgets sender 1 (floor 10)
        assert_eq!(g.check(s(1, 10)), Err(FrameError::Replayed));
        assert_eq!(g.check(s(1, 11)), Ok(()));
    }

    #[test]
    fn keys_parse_from_hex_and_name_the_fault() {
        assert_eq!(
            RackKey::from_hex(" 000102030405060708090a0b0c0d0e0f\n").unwrap(),
            RackKey([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
        );
        assert_eq!(RackKey::from_hex("00"), Err(KeyError::Length(2)));
        assert_eq!(
            RackKey::from_hex("0g0102030405060708090a0b0c0d0e0f"),
            Err(KeyError::NotHex(1))
        );
        assert_eq!(format!("{:?}", KEY), "RackKey(<secret>)");
    }
}
