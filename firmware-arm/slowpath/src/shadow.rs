//! The shadow page table: the ARM's copy of the board-DRAM hash table.
//!
//! Slot `(bucket, slot)` holds exactly the 16 bytes the board table holds
//! (the [`clio_wire::pte`] layout, kept as two little-endian words), and
//! every change here is paired with the TX command that makes the same
//! change to the board table, so allocation checks never read board DRAM.
//! A per-bucket free-slot count makes the overflow check O(1) per page.
//!
//! A slot is tagged by `(pid, vpn, page_shift)`: VPNs of different page
//! sizes are different numbers for different addresses, so the page shift
//! is part of the tag.

use crate::words::{get8, set8};
use clio_wire::pte::{pte_flags, TableGeometry, VPN_MAX};
use clio_wire::Pte;

/// The shadow table over arena words.
#[derive(Debug)]
pub struct ShadowTable<'a> {
    slots: &'a mut [u64],
    free: &'a mut [u64],
    geo: TableGeometry,
    used: u64,
    peak_bucket: u32,
}

/// Encode a PTE into its two words (bytes 0..8 and 8..16, little-endian).
pub fn pte_words(p: &Pte) -> [u64; 2] {
    let b = p.to_bytes();
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 8];
    lo.copy_from_slice(&b[..8]);
    hi.copy_from_slice(&b[8..]);
    [u64::from_le_bytes(lo), u64::from_le_bytes(hi)]
}

/// Decode two words into a PTE (the words were written by [`pte_words`]).
pub fn words_pte(w: [u64; 2]) -> Pte {
    let flags = (w[1] >> 56) as u8;
    Pte {
        pid: w[0] as u32,
        ppn: (w[0] >> 32) as u32,
        vpn: w[1] & VPN_MAX,
        perms: (w[1] >> 48) as u8,
        allocated: flags & pte_flags::ALLOCATED != 0,
        valid: flags & pte_flags::VALID != 0,
        page_shift: flags >> pte_flags::PAGE_SHIFT_SHIFT,
    }
}

impl<'a> ShadowTable<'a> {
    /// A table of `geo`'s shape over `slots` (2 words per PTE) and `free`
    /// (one count byte per bucket); both are cleared.
    pub(crate) fn new(slots: &'a mut [u64], free: &'a mut [u64], geo: TableGeometry) -> Self {
        slots.fill(0);
        let k = geo.slots_per_bucket as u8;
        free.fill(u64::from_le_bytes([k; 8]));
        ShadowTable {
            slots,
            free,
            geo,
            used: 0,
            peak_bucket: 0,
        }
    }

    /// The table's geometry.
    pub fn geometry(&self) -> TableGeometry {
        self.geo
    }

    /// Free slots in `bucket`.
    #[inline]
    pub fn free_in(&self, bucket: u32) -> u32 {
        get8(self.free, bucket as usize) as u32
    }

    /// Allocated slots over the whole table.
    pub fn used_slots(&self) -> u64 {
        self.used
    }

    /// The most slots ever used in one bucket.
    pub fn peak_bucket_use(&self) -> u32 {
        self.peak_bucket
    }

    #[inline]
    fn index(&self, bucket: u32, slot: u32) -> usize {
        (bucket as usize * self.geo.slots_per_bucket as usize + slot as usize) * 2
    }

    /// The PTE in `(bucket, slot)`; `None` if out of range.
    pub fn get(&self, bucket: u32, slot: u32) -> Option<Pte> {
        if bucket as u64 >= self.geo.buckets() || slot >= self.geo.slots_per_bucket {
            return None;
        }
        let i = self.index(bucket, slot);
        Some(words_pte([self.slots[i], self.slots[i + 1]]))
    }

    /// Load the first word of `(bucket, slot)` (0 if out of range). Used to
    /// start the cache misses of a batch of notices together, so they
    /// overlap instead of being taken one after another.
    #[inline]
    pub fn touch(&self, bucket: u32, slot: u32) -> u64 {
        if bucket as u64 >= self.geo.buckets() || slot >= self.geo.slots_per_bucket {
            return 0;
        }
        self.slots[self.index(bucket, slot) + 1]
    }

    /// The 16 bytes of `(bucket, slot)` exactly as the board table holds them.
    pub fn slot_bytes(&self, bucket: u32, slot: u32) -> Option<[u8; 16]> {
        self.get(bucket, slot).map(|p| p.to_bytes())
    }

    /// The slot holding `(pid, vpn)` of page size `shift`.
    pub fn find(&self, pid: u32, vpn: u64, shift: u8) -> Option<(u32, u32)> {
        let b = self.geo.bucket_of(pid, vpn);
        let want_hi = vpn
            | ((pte_flags::ALLOCATED as u64 | ((shift as u64) << pte_flags::PAGE_SHIFT_SHIFT))
                << 56);
        let mask_hi =
            VPN_MAX | ((pte_flags::ALLOCATED as u64 | (0x1f << pte_flags::PAGE_SHIFT_SHIFT)) << 56);
        let base = self.index(b, 0);
        (0..self.geo.slots_per_bucket).find_map(|s| {
            let i = base + 2 * s as usize;
            (self.slots[i] as u32 == pid && self.slots[i + 1] & mask_hi == want_hi)
                .then_some((b, s))
        })
    }

    /// Put `pte` (allocated) into a free slot of its bucket; `None` if full.
    pub(crate) fn insert(&mut self, pte: &Pte) -> Option<(u32, u32)> {
        let b = self.geo.bucket_of(pte.pid, pte.vpn);
        if self.free_in(b) == 0 {
            return None;
        }
        let base = self.index(b, 0);
        let s = (0..self.geo.slots_per_bucket).find(|&s| {
            (self.slots[base + 2 * s as usize + 1] >> 56) as u8 & pte_flags::ALLOCATED == 0
        })?;
        let w = pte_words(pte);
        self.slots[base + 2 * s as usize] = w[0];
        self.slots[base + 2 * s as usize + 1] = w[1];
        let f = self.free_in(b) - 1;
        set8(self.free, b as usize, f as u8);
        self.used += 1;
        self.peak_bucket = self.peak_bucket.max(self.geo.slots_per_bucket - f);
        Some((b, s))
    }

    /// Overwrite a live slot (e.g. to record the PA a first touch mapped).
    pub(crate) fn update(&mut self, bucket: u32, slot: u32, pte: &Pte) {
        let i = self.index(bucket, slot);
        let w = pte_words(pte);
        self.slots[i] = w[0];
        self.slots[i + 1] = w[1];
    }

    /// Clear a live slot and give it back to its bucket.
    pub(crate) fn remove(&mut self, bucket: u32, slot: u32) {
        let i = self.index(bucket, slot);
        if (self.slots[i + 1] >> 56) as u8 & pte_flags::ALLOCATED == 0 {
            return;
        }
        self.slots[i] = 0;
        self.slots[i + 1] = 0;
        let f = self.free_in(bucket) + 1;
        set8(self.free, bucket as usize, f as u8);
        self.used -= 1;
    }

    /// Every allocated slot, as `(bucket, slot, pte)` (for tests and audits).
    pub fn live(&self) -> impl Iterator<Item = (u32, u32, Pte)> + '_ {
        let k = self.geo.slots_per_bucket;
        (0..self.slots.len() / 2).filter_map(move |i| {
            let p = words_pte([self.slots[2 * i], self.slots[2 * i + 1]]);
            p.allocated.then_some(((i as u32) / k, (i as u32) % k, p))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_the_wire_layout() {
        let p = Pte {
            pid: 7,
            vpn: 0xabc_def0_1234,
            ppn: 99,
            perms: 3,
            allocated: true,
            valid: true,
            page_shift: 22,
        };
        let w = pte_words(&p);
        assert_eq!(words_pte(w), p);
        assert_eq!(Pte::parse(&p.to_bytes()).unwrap(), p);
    }

    #[test]
    fn insert_find_remove_and_counts() {
        let geo = TableGeometry {
            base: 0,
            bucket_bits: 2,
            slots_per_bucket: 2,
        };
        let mut s = [0u64; 4 * 2 * 2];
        let mut f = [0u64; 1];
        let mut t = ShadowTable::new(&mut s, &mut f, geo);
        let pte = |vpn| Pte {
            pid: 1,
            vpn,
            ppn: 0,
            perms: 1,
            allocated: true,
            valid: false,
            page_shift: 12,
        };
        let b = geo.bucket_of(1, 5);
        let a = t.insert(&pte(5)).unwrap();
        assert_eq!(a.0, b);
        assert_eq!(t.free_in(b), 1);
        assert_eq!(t.find(1, 5, 12), Some(a));
        assert_eq!(t.find(1, 5, 21), None, "page shift is part of the tag");
        assert_eq!(t.find(2, 5, 12), None);
        // Fill the bucket with VPNs hashing to it, then it refuses.
        let mut vpn = 6;
        while t.free_in(b) > 0 {
            if geo.bucket_of(1, vpn) == b {
                t.insert(&pte(vpn)).unwrap();
            }
            vpn += 1;
        }
        while geo.bucket_of(1, vpn) != b {
            vpn += 1;
        }
        assert!(t.insert(&pte(vpn)).is_none());
        t.remove(a.0, a.1);
        t.remove(a.0, a.1);
        assert_eq!(t.free_in(b), 1);
        assert_eq!(t.used_slots(), 1);
        assert_eq!(t.live().count(), 1);
    }
}
