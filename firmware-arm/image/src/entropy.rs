//! The per-boot seed of the slow path (session keys and the boot epoch
//! derive from it; `clio_slowpath::BootSecret`).
//!
//! What this image has. The ZynqMP's A53 cores have no random-number
//! instruction (`RNDR` is Armv8.5; the A53 is Armv8.0), and the ZynqMP's
//! CSU offers no user TRNG (the TRNG is a Versal PMC block). So the seed is
//! gathered from what varies between boots:
//! - timing jitter: the system counter (`CNTPCT_EL0`) read around short
//!   memory-touching loops, [`Pool::jitter`]; under QEMU the counter follows
//!   the host's clock, so host scheduling and caches make every duration
//!   noisy; on a board the boot path is far more deterministic and this
//!   yields little;
//! - the counter's value at points of the boot whose duration varies (once
//!   the secondary cores are up, after each DRAM clear), [`Pool::stamp`];
//! - the RTC's `CURRENT_TIME` (seconds; QEMU starts it at the host's time,
//!   a board with a set, battery-backed RTC counts wall time): not secret,
//!   but it makes two boots' epochs differ even when the jitter does not;
//! - the **boot-seed mailbox** (`BoardConfig::boot_seed_mailbox`, 32 bytes at
//!   the start of `regions.net_buffers`), [`Pool::mailbox`]: where a loader
//!   leaves random bytes. The emulator's QEMU launcher writes 32 bytes of
//!   host OS randomness there, so under co-simulation the seed is as good as
//!   the host's `getrandom`; the firmware zeroes the mailbox after reading.
//!
//! This is enough for the emulated board (each QEMU boot gets a different
//! epoch and keys an observer of the wire cannot predict) and it is **not**
//! enough for a real board: a lab ZCU106 should take its seed from a
//! hardware entropy source, e.g. a ring-oscillator TRNG in the PL exposed
//! through the fast-path register block, or PUF-derived material through
//! the CSU, before it is exposed to untrusted clients. The log line says
//! how many jitter samples varied, and warns when none did (then the seed
//! is predictable).

use crate::timer;

/// The ZynqMP RTC's `CURRENT_TIME` register (RTC at `0xFFA6_0000`, UG1087).
const RTC_CURRENT_TIME: u64 = 0xffa6_0010;

/// Jitter samples taken at boot.
pub const JITTER_SAMPLES: u32 = 512;

/// Entropy pool: a 128-bit state that absorbs 64-bit samples. The mixing
/// only spreads the samples over the state; the entropy is in the samples.
pub struct Pool {
    a: u64,
    b: u64,
    /// Jitter samples whose duration differed from the previous one.
    pub varied: u32,
    /// Samples absorbed.
    pub samples: u32,
}

const fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Pool {
    /// An empty pool.
    pub const fn new() -> Self {
        Pool {
            a: 0x6a09_e667_f3bc_c908,
            b: 0xbb67_ae85_84ca_a73b,
            varied: 0,
            samples: 0,
        }
    }

    /// Absorb one sample.
    pub fn absorb(&mut self, v: u64) {
        self.a = mix(self.a ^ v).wrapping_add(self.b.rotate_left(17));
        self.b = mix(self.b.wrapping_add(v).rotate_left(29) ^ self.a);
        self.samples += 1;
    }

    /// Absorb the system counter now.
    pub fn stamp(&mut self) {
        self.absorb(timer::ticks());
    }

    /// Absorb the RTC's seconds.
    pub fn rtc(&mut self) -> u32 {
        // SAFETY: a read of a PS register inside the device window the MMU
        // maps (the RTC answers whether or not its time was set).
        let t = unsafe { core::ptr::read_volatile(RTC_CURRENT_TIME as usize as *const u32) };
        self.absorb(u64::from(t));
        t
    }

    /// Absorb the loader's boot-seed mailbox `m` and zero it; returns
    /// whether it held anything (a loader wrote it).
    pub fn mailbox(&mut self, m: clio_config::Region) -> bool {
        let mut any = 0u64;
        let words = (m.size / 8) as usize;
        for i in 0..words {
            let p = (m.base as usize + 8 * i) as *mut u64;
            // SAFETY: the mailbox lies in `regions.net_buffers` (board DRAM,
            // mapped normal memory) and nothing else uses it before the fast
            // path is released; the primary reads and clears it once.
            let w = unsafe { core::ptr::read_volatile(p) };
            // SAFETY: as above.
            unsafe { core::ptr::write_volatile(p, 0) };
            any |= w;
            self.absorb(w);
        }
        any != 0
    }

    /// Absorb the durations of `n` short loops over `scratch`.
    pub fn jitter(&mut self, n: u32, scratch: &mut [u64]) {
        let mut prev = 0u64;
        for i in 0..n {
            let t0 = timer::ticks();
            // Strided read-modify-writes: cache and TLB behaviour (and,
            // under QEMU, the host) make the time vary.
            let len = scratch.len().max(1);
            let mut at = (i as usize).wrapping_mul(97) % len;
            for _ in 0..32 {
                if let Some(w) = scratch.get_mut(at) {
                    // SAFETY: a valid, aligned element of `scratch`.
                    unsafe { core::ptr::write_volatile(w, w.wrapping_add(t0)) };
                }
                at = (at + 67) % len;
            }
            let d = timer::ticks().wrapping_sub(t0);
            self.varied += (d != prev) as u32;
            prev = d;
            self.absorb(d ^ u64::from(i) << 48);
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        mix(self.a ^ mix(self.b))
    }
}
