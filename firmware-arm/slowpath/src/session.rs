//! Sessions (issue #14): the per-boot secret, the boot epoch, session keys,
//! PID assignment, the shadow session table and per-PID accounting.
//!
//! The slow path owns all of it; the fast path only holds the table entries
//! the slow path installs with `SessionReply` descriptors, and the epoch the
//! slow path posts with its first TX descriptor (`Epoch`).
//!
//! Keys. A session key is SipHash-2-4, keyed by a 128-bit key expanded from
//! the per-boot seed, of `(session id, generation)`; the generation of a
//! session id counts its opens since boot, so a reused id never gets an old
//! key back. The epoch is the same PRF of a different input. Nothing is
//! stored that is not derived from the seed, and the seed is never output:
//! knowing epochs and one's own keys reveals nothing about other keys (as
//! long as SipHash is a PRF and the seed has entropy; see the firmware
//! image's README for where the seed comes from).

use core::fmt;
use core::hash::Hasher;

use siphasher::sip::SipHasher24;

/// Domain-separation byte of the epoch input.
const DOMAIN_EPOCH: u8 = 0x45; // 'E'
/// Domain-separation byte of a key input.
const DOMAIN_KEY: u8 = 0x4b; // 'K'

/// SplitMix64 step: spreads a 64-bit seed over the 128-bit SipHash key.
const fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The per-boot secret: the SipHash-2-4 key expanded from the boot seed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BootSecret {
    k0: u64,
    k1: u64,
}

impl fmt::Debug for BootSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret (a debug log must not leak every key).
        f.write_str("BootSecret(..)")
    }
}

impl BootSecret {
    /// The secret of a boot whose seed is `seed`: SipHash key
    /// `(k0, k1) = (splitmix64(seed), splitmix64(splitmix64(seed)))`.
    pub const fn from_seed(seed: u64) -> Self {
        let k0 = splitmix64(seed);
        BootSecret {
            k0,
            k1: splitmix64(k0),
        }
    }

    /// SipHash-2-4 under this boot's key of `domain` followed by the 8
    /// little-endian bytes of `input`.
    pub fn prf(&self, domain: u8, input: u64) -> u64 {
        let mut h = SipHasher24::new_with_keys(self.k0, self.k1);
        h.write(&[domain]);
        h.write(&input.to_le_bytes());
        h.finish()
    }

    /// This boot's epoch: a nonzero u32 (0 is the fast path's "no epoch yet").
    pub fn epoch(&self) -> u32 {
        let e = self.prf(DOMAIN_EPOCH, 0);
        // Fold the high half in so no bit of the PRF output is wasted.
        match (e ^ (e >> 32)) as u32 {
            0 => 1,
            v => v,
        }
    }

    /// The key of the `generation`-th open of session id `session` this
    /// boot: nonzero (0 is what a request without a session carries).
    pub fn key(&self, session: u16, generation: u32) -> u64 {
        match self.prf(DOMAIN_KEY, (generation as u64) << 16 | session as u64) {
            0 => 1,
            k => k,
        }
    }
}

/// One open session as the shadow table holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionInfo {
    /// Session id (`1..capacity`).
    pub id: u16,
    /// The address space it acts for.
    pub pid: u32,
    /// Opens of this id since boot, this one included.
    pub generation: u32,
    /// Its key.
    pub key: u64,
}

const VALID: u64 = 1 << 63;
const GEN_MASK: u64 = 0x7fff_ffff;

/// The shadow session table: two arena words per session id (`[valid |
/// generation << 32 | pid, key]`); id 0 is never used.
#[derive(Debug)]
pub struct SessionTable<'a> {
    words: &'a mut [u64],
    open: u32,
}

impl<'a> SessionTable<'a> {
    /// Arena words of a table of `capacity` entries.
    pub const fn words(capacity: u32) -> u64 {
        capacity as u64 * 2
    }

    /// A table over `words` (cleared).
    pub fn new(words: &'a mut [u64]) -> Self {
        words.fill(0);
        SessionTable { words, open: 0 }
    }

    /// Entries (session ids `1..capacity`).
    pub fn capacity(&self) -> u32 {
        (self.words.len() / 2) as u32
    }

    /// Sessions open now.
    pub fn open_count(&self) -> u32 {
        self.open
    }

    /// The open session `id`, if any.
    pub fn get(&self, id: u16) -> Option<SessionInfo> {
        let i = id as usize;
        if i == 0 || i >= self.words.len() / 2 {
            return None;
        }
        let w = self.words[2 * i];
        (w & VALID != 0).then(|| SessionInfo {
            id,
            pid: w as u32,
            generation: ((w >> 32) & GEN_MASK) as u32,
            key: self.words[2 * i + 1],
        })
    }

    /// The lowest free id and the generation its next open gets.
    pub fn free_id(&self) -> Option<(u16, u32)> {
        (1..self.words.len() / 2).find_map(|i| {
            let w = self.words[2 * i];
            (w & VALID == 0)
                .then_some((i as u16, (((w >> 32) & GEN_MASK) as u32 + 1) & 0x7fff_ffff))
        })
    }

    /// Mark `id` open for `pid` with `generation` and `key`.
    pub fn open(&mut self, id: u16, pid: u32, generation: u32, key: u64) {
        let i = id as usize;
        if self.words[2 * i] & VALID == 0 {
            self.open += 1;
        }
        self.words[2 * i] = VALID | (generation as u64 & GEN_MASK) << 32 | pid as u64;
        self.words[2 * i + 1] = key;
    }

    /// Close `id` (its generation is kept so the next open gets a new key).
    pub fn close(&mut self, id: u16) {
        let i = id as usize;
        if self.words[2 * i] & VALID != 0 {
            self.open -= 1;
        }
        self.words[2 * i] &= !VALID & !0xffff_ffff;
        self.words[2 * i + 1] = 0;
    }
}

/// Bit of a PID word: the PID is held by the board itself
/// ([`crate::SlowPath::reserve_pid`]), not by sessions.
const BOARD_HELD: u64 = 1 << 63;
const SESSIONS_SHIFT: u32 = 32;
const SESSIONS_MASK: u64 = 0xffff;

/// Per-PID state, one arena word per PID `0..=max_pids`: sessions open on
/// it (bits 32..48), held by the board (bit 63), and the VA bytes its live
/// ranges take, in smallest pages (bits 0..32).
#[derive(Debug)]
pub struct PidAccounts<'a> {
    words: &'a mut [u64],
}

impl<'a> PidAccounts<'a> {
    /// Arena words for PIDs `0..=max_pids`.
    pub const fn words(max_pids: u32) -> u64 {
        max_pids as u64 + 1
    }

    /// Accounts over `words` (cleared).
    pub fn new(words: &'a mut [u64]) -> Self {
        words.fill(0);
        PidAccounts { words }
    }

    fn word(&self, pid: u32) -> u64 {
        self.words.get(pid as usize).copied().unwrap_or(0)
    }

    fn set(&mut self, pid: u32, w: u64) {
        if let Some(slot) = self.words.get_mut(pid as usize) {
            *slot = w;
        }
    }

    /// Whether `pid` is in `1..=max_pids`.
    pub fn in_range(&self, pid: u32) -> bool {
        pid != 0 && (pid as usize) < self.words.len()
    }

    /// Sessions open on `pid`.
    pub fn sessions(&self, pid: u32) -> u32 {
        ((self.word(pid) >> SESSIONS_SHIFT) & SESSIONS_MASK) as u32
    }

    /// Whether the board itself holds `pid`.
    pub fn board_held(&self, pid: u32) -> bool {
        self.word(pid) & BOARD_HELD != 0
    }

    /// Whether `pid` belongs to someone (an open session or the board): only
    /// then may it allocate or free.
    pub fn assigned(&self, pid: u32) -> bool {
        self.in_range(pid) && (self.board_held(pid) || self.sessions(pid) > 0)
    }

    /// Smallest pages charged to `pid`.
    pub fn charged(&self, pid: u32) -> u64 {
        self.word(pid) & 0xffff_ffff
    }

    /// The lowest PID in `1..=max_pids` nobody holds and with no memory
    /// charged (a PID whose ranges are still being freed is not reused).
    pub fn free_pid(&self) -> Option<u32> {
        (1..self.words.len())
            .find(|&p| self.words[p] == 0)
            .map(|p| p as u32)
    }

    /// Add (`+1`) or remove (`-1`) one session of `pid`.
    pub fn add_session(&mut self, pid: u32, delta: i32) {
        let w = self.word(pid);
        let n = ((w >> SESSIONS_SHIFT) & SESSIONS_MASK) as i64 + delta as i64;
        let n = n.clamp(0, SESSIONS_MASK as i64) as u64;
        self.set(
            pid,
            (w & !(SESSIONS_MASK << SESSIONS_SHIFT)) | n << SESSIONS_SHIFT,
        );
    }

    /// Mark `pid` held by the board.
    pub fn hold(&mut self, pid: u32) {
        let w = self.word(pid);
        self.set(pid, w | BOARD_HELD);
    }

    /// Charge (`delta > 0`) or refund smallest pages to `pid`.
    pub fn charge(&mut self, pid: u32, delta: i64) {
        let w = self.word(pid);
        let n = ((w & 0xffff_ffff) as i64 + delta).clamp(0, 0xffff_ffff) as u64;
        self.set(pid, (w & !0xffff_ffff) | n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_keys_depend_on_the_seed_and_are_nonzero() {
        let a = BootSecret::from_seed(1);
        let b = BootSecret::from_seed(2);
        assert_ne!(a.epoch(), b.epoch());
        assert_ne!(a.epoch(), 0);
        assert_ne!(a.key(1, 1), b.key(1, 1));
        assert_ne!(a.key(1, 1), a.key(1, 2));
        assert_ne!(a.key(1, 1), a.key(2, 1));
        // The same seed gives the same values (the PRF is deterministic).
        assert_eq!(a.key(7, 3), BootSecret::from_seed(1).key(7, 3));
        assert_eq!(format!("{a:?}"), "BootSecret(..)");
    }

    #[test]
    fn the_key_is_siphash24_of_session_and_generation() {
        let seed = 0x0123_4567_89ab_cdef;
        let s = BootSecret::from_seed(seed);
        let k0 = splitmix64(seed);
        let mut h = SipHasher24::new_with_keys(k0, splitmix64(k0));
        let mut input = [0u8; 9];
        input[0] = DOMAIN_KEY;
        input[1..].copy_from_slice(&((5u64 << 16) | 9).to_le_bytes());
        h.write(&input);
        assert_eq!(s.key(9, 5), h.finish());
    }

    #[test]
    fn table_ids_generations_and_counts() {
        let mut w = [0u64; 8];
        let mut t = SessionTable::new(&mut w);
        assert_eq!(t.capacity(), 4);
        assert_eq!(t.free_id(), Some((1, 1)));
        t.open(1, 7, 1, 99);
        assert_eq!(t.free_id(), Some((2, 1)));
        assert_eq!(
            t.get(1),
            Some(SessionInfo {
                id: 1,
                pid: 7,
                generation: 1,
                key: 99
            })
        );
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(4), None);
        t.close(1);
        assert_eq!(t.get(1), None);
        assert_eq!(t.open_count(), 0);
        // The reused id gets the next generation.
        assert_eq!(t.free_id(), Some((1, 2)));
        t.open(1, 7, 2, 5);
        t.open(2, 7, 1, 6);
        t.open(3, 8, 1, 7);
        assert_eq!(t.free_id(), None);
        assert_eq!(t.open_count(), 3);
    }

    #[test]
    fn pid_accounts() {
        let mut w = [0u64; 4];
        let mut p = PidAccounts::new(&mut w);
        assert_eq!(p.free_pid(), Some(1));
        assert!(!p.assigned(1));
        p.add_session(1, 1);
        assert!(p.assigned(1));
        assert_eq!(p.free_pid(), Some(2));
        p.charge(1, 5);
        p.add_session(1, -1);
        // No session, but memory still charged: not free yet.
        assert!(!p.assigned(1));
        assert_eq!(p.free_pid(), Some(2));
        p.charge(1, -5);
        assert_eq!(p.free_pid(), Some(1));
        p.hold(3);
        assert!(p.assigned(3));
        assert!(!p.in_range(4));
        assert!(!p.assigned(0));
    }
}
