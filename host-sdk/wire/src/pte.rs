//! The hash page table in board DRAM: PTE layout, bucket layout, and the
//! bucket hash of (PID, VPN).
//!
//! One flat table serves every process. A bucket is `K` consecutive 16-byte
//! PTEs fetched in one DRAM access (K = 16 gives 256 B = four 512-bit
//! beats). The slow path never lets a bucket overflow, so a translation is
//! at most one bucket read. Fields are little-endian (board DRAM as the ARM
//! and the AXI fabric see it).
//!
//! ```text
//!  0          4          8                    14     15
//! +----------+----------+--------------------+------+------+
//! |   pid    |   ppn    |     vpn (48 bit)   |perms |flags |
//! +----------+----------+--------------------+------+------+
//! flags: bit 0 ALLOCATED, bit 1 VALID, bits 3..7 page_shift
//! ```

use crate::error::bytes::{le32, set_le32};
use crate::payload::perms;
use crate::{Error, ErrorKind, Result};

/// Bytes per PTE.
pub const PTE_LEN: usize = 16;
/// Bits of VPN a PTE can hold.
pub const VPN_BITS: u32 = 48;
/// Largest VPN.
pub const VPN_MAX: u64 = (1 << VPN_BITS) - 1;
/// Smallest supported page shift (4 KiB).
pub const MIN_PAGE_SHIFT: u8 = 12;
/// Largest supported page shift (1 GiB).
pub const MAX_PAGE_SHIFT: u8 = 30;

/// The PTE fields: byte ranges of multi-byte fields, offsets of one-byte
/// fields (shared with the RTL via the generated package, which has the offsets).
pub mod field {
    use crate::Field;

    /// PID, u32.
    pub const PID: Field = 0..4;
    /// Physical page number, u32 (in units of the PTE's page size).
    pub const PPN: Field = 4..8;
    /// Virtual page number, 48 bits (six bytes).
    pub const VPN: Field = 8..14;
    /// Permission bits.
    pub const PERMS: usize = 14;
    /// Flags byte.
    pub const FLAGS: usize = 15;
}

/// Bits of the PTE flags byte.
pub mod pte_flags {
    /// The slot holds an allocated virtual page (it counts against K).
    pub const ALLOCATED: u8 = 0x01;
    /// A physical page is mapped (cleared: first touch faults).
    pub const VALID: u8 = 0x02;
    /// Shift of the page-shift field within the flags byte.
    pub const PAGE_SHIFT_SHIFT: u8 = 3;
    /// Reserved bit that must be zero.
    pub const RESERVED: u8 = 0x04;
}

/// Zero-copy view of one PTE.
#[derive(Debug, Clone)]
pub struct PteView<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PteView<T> {
    /// Wrap a buffer of at least [`PTE_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let n = buffer.as_ref().len();
        if n < PTE_LEN {
            return Err(Error::truncated("pte", PTE_LEN, n));
        }
        Ok(PteView { buffer })
    }
    /// PID.
    pub fn pid(&self) -> u32 {
        le32(self.buffer.as_ref(), field::PID)
    }
    /// PPN.
    pub fn ppn(&self) -> u32 {
        le32(self.buffer.as_ref(), field::PPN)
    }
    /// VPN.
    pub fn vpn(&self) -> u64 {
        let b = self.buffer.as_ref();
        let mut a = [0u8; 8];
        a[..field::VPN.len()].copy_from_slice(&b[field::VPN]);
        u64::from_le_bytes(a)
    }
    /// Permission bits.
    pub fn perms(&self) -> u8 {
        self.buffer.as_ref()[field::PERMS]
    }
    /// Flags byte.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Whether the slot is in use.
    pub fn allocated(&self) -> bool {
        self.flags() & pte_flags::ALLOCATED != 0
    }
    /// Whether the tag matches: an allocated slot of this PID, VPN and page
    /// shift. VPNs of different page sizes can be equal numbers for
    /// different addresses, so the page shift is part of the tag.
    pub fn matches(&self, pid: u32, vpn: u64, page_shift: u8) -> bool {
        self.allocated()
            && self.pid() == pid
            && self.vpn() == vpn
            && self.flags() >> pte_flags::PAGE_SHIFT_SHIFT == page_shift
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PteView<T> {
    /// Set the PID.
    pub fn set_pid(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), field::PID, v)
    }
    /// Set the PPN.
    pub fn set_ppn(&mut self, v: u32) {
        set_le32(self.buffer.as_mut(), field::PPN, v)
    }
    /// Set the VPN (low 48 bits kept).
    pub fn set_vpn(&mut self, v: u64) {
        let n = field::VPN.len();
        self.buffer.as_mut()[field::VPN].copy_from_slice(&v.to_le_bytes()[..n]);
    }
    /// Set the permission bits.
    pub fn set_perms(&mut self, v: u8) {
        self.buffer.as_mut()[field::PERMS] = v;
    }
    /// Set the flags byte.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }
}

/// A PTE as plain values. An all-zero slot is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pte {
    /// Owning process.
    pub pid: u32,
    /// Virtual page number (VA >> page_shift).
    pub vpn: u64,
    /// Physical page number (PA >> page_shift); meaningful when `valid`.
    pub ppn: u32,
    /// [`perms`] bits.
    pub perms: u8,
    /// The slot holds an allocated virtual page.
    pub allocated: bool,
    /// A physical page is mapped.
    pub valid: bool,
    /// log2 of the page size.
    pub page_shift: u8,
}

impl Pte {
    /// The empty slot.
    pub const EMPTY: Pte = Pte {
        pid: 0,
        vpn: 0,
        ppn: 0,
        perms: 0,
        allocated: false,
        valid: false,
        page_shift: 0,
    };

    /// Parse a slot; an empty (all-zero flags) slot parses as [`Pte::EMPTY`]-like.
    pub fn parse(b: &[u8]) -> Result<Pte> {
        let v = PteView::new_checked(b)?;
        let flags = v.flags();
        if flags & pte_flags::RESERVED != 0 {
            return Err(Error::new("pte.flags", ErrorKind::Reserved(flags as u64)));
        }
        if v.perms() & !perms::ALL != 0 {
            return Err(Error::new(
                "pte.perms",
                ErrorKind::Reserved(v.perms() as u64),
            ));
        }
        let page_shift = flags >> pte_flags::PAGE_SHIFT_SHIFT;
        let allocated = flags & pte_flags::ALLOCATED != 0;
        let valid = flags & pte_flags::VALID != 0;
        if allocated && !(MIN_PAGE_SHIFT..=MAX_PAGE_SHIFT).contains(&page_shift) {
            return Err(Error::new(
                "pte.page_shift",
                ErrorKind::OutOfRange {
                    value: page_shift as u64,
                    max: MAX_PAGE_SHIFT as u64,
                },
            ));
        }
        if valid && !allocated {
            return Err(Error::new("pte.flags", ErrorKind::Inconsistent));
        }
        Ok(Pte {
            pid: v.pid(),
            vpn: v.vpn(),
            ppn: v.ppn(),
            perms: v.perms(),
            allocated,
            valid,
            page_shift,
        })
    }

    /// The flags byte this PTE encodes to.
    pub const fn flags_byte(&self) -> u8 {
        let mut f = self.page_shift << pte_flags::PAGE_SHIFT_SHIFT;
        if self.allocated {
            f |= pte_flags::ALLOCATED;
        }
        if self.valid {
            f |= pte_flags::VALID;
        }
        f
    }

    /// Encode into a 16-byte slot.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < PTE_LEN {
            return Err(Error::truncated("pte", PTE_LEN, b.len()));
        }
        if self.vpn > VPN_MAX {
            return Err(Error::new(
                "pte.vpn",
                ErrorKind::OutOfRange {
                    value: self.vpn,
                    max: VPN_MAX,
                },
            ));
        }
        if self.page_shift > 31 {
            return Err(Error::new(
                "pte.page_shift",
                ErrorKind::OutOfRange {
                    value: self.page_shift as u64,
                    max: MAX_PAGE_SHIFT as u64,
                },
            ));
        }
        let mut v = PteView {
            buffer: &mut b[..PTE_LEN],
        };
        v.set_pid(self.pid);
        v.set_ppn(self.ppn);
        v.set_vpn(self.vpn);
        v.set_perms(self.perms);
        v.set_flags(self.flags_byte());
        Ok(())
    }

    /// The 16 bytes of this PTE (panics never: callers keep `vpn` in range;
    /// an out-of-range VPN is truncated to 48 bits as the hardware would).
    pub fn to_bytes(&self) -> [u8; PTE_LEN] {
        let mut b = [0u8; PTE_LEN];
        let mut v = PteView { buffer: &mut b[..] };
        v.set_pid(self.pid);
        v.set_ppn(self.ppn);
        v.set_vpn(self.vpn);
        v.set_perms(self.perms);
        v.set_flags(self.flags_byte());
        b
    }

    /// Whether this slot holds an allocated page of `(pid, vpn, page_shift)`
    /// (the tag; see [`PteView::matches`]).
    pub const fn matches(&self, pid: u32, vpn: u64, page_shift: u8) -> bool {
        self.allocated && self.pid == pid && self.vpn == vpn && self.page_shift == page_shift
    }
}

/// Multiplier of the bucket hash (the 64-bit golden-ratio constant).
pub const HASH_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;
/// Rotation applied to the PID before it is mixed with the VPN.
pub const HASH_PID_ROTATE: u32 = 38;

/// The bucket index of `(pid, vpn)` in a table of `2^bucket_bits` buckets.
///
/// Multiply-shift (Fibonacci) hashing of `vpn ^ rotl(pid, 38)`: one 64-bit
/// multiply and a shift, cheap in DSP slices, and consecutive VPNs of one
/// process land in distinct buckets (three-distance theorem), which keeps
/// allocation retries at zero while the table is under half full.
pub const fn bucket_index(pid: u32, vpn: u64, bucket_bits: u32) -> u32 {
    if bucket_bits == 0 {
        return 0;
    }
    let key = vpn ^ (pid as u64).rotate_left(HASH_PID_ROTATE);
    (key.wrapping_mul(HASH_MULTIPLIER) >> (64 - bucket_bits)) as u32
}

/// Published test vectors of [`bucket_index`]: `(pid, vpn, bucket_bits, index)`.
pub const HASH_VECTORS: &[(u32, u64, u32, u32)] = &[
    (0, 0, 10, 0),
    (1, 0, 10, 0x34a),
    (1, 1, 10, 0x1c3),
    (1, 2, 10, 0x03c),
    (7, 0x1234, 16, 0xcc2c),
    (0xffff_ffff, 0xffff_ffff_ffff, 20, 0xc8ab9),
    (42, 0x4000, 12, 0x6c8),
];

/// Where the table lives and its shape: everything needed to find a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableGeometry {
    /// Board physical address of bucket 0.
    pub base: u64,
    /// log2 of the number of buckets.
    pub bucket_bits: u32,
    /// Slots (PTEs) per bucket, K.
    pub slots_per_bucket: u32,
}

impl TableGeometry {
    /// Number of buckets.
    pub const fn buckets(&self) -> u64 {
        1 << self.bucket_bits
    }
    /// Bytes of one bucket (one DRAM access).
    pub const fn bucket_bytes(&self) -> u64 {
        self.slots_per_bucket as u64 * PTE_LEN as u64
    }
    /// Bytes of the whole table.
    pub const fn table_bytes(&self) -> u64 {
        self.buckets() * self.bucket_bytes()
    }
    /// Physical address of a bucket.
    pub const fn bucket_addr(&self, bucket: u32) -> u64 {
        self.base + bucket as u64 * self.bucket_bytes()
    }
    /// Physical address of one slot.
    pub const fn slot_addr(&self, bucket: u32, slot: u32) -> u64 {
        self.bucket_addr(bucket) + slot as u64 * PTE_LEN as u64
    }
    /// Bucket of `(pid, vpn)`.
    pub const fn bucket_of(&self, pid: u32, vpn: u64) -> u32 {
        bucket_index(pid, vpn, self.bucket_bits)
    }
}

/// Zero-copy view of one bucket of K slots.
#[derive(Debug, Clone)]
pub struct Bucket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Bucket<T> {
    /// Wrap a buffer holding `slots` PTEs.
    pub fn new_checked(buffer: T, slots: usize) -> Result<Self> {
        let n = buffer.as_ref().len();
        if n < slots * PTE_LEN {
            return Err(Error::truncated("bucket", slots * PTE_LEN, n));
        }
        Ok(Bucket { buffer })
    }
    /// Number of slots the view holds.
    pub fn slots(&self) -> usize {
        self.buffer.as_ref().len() / PTE_LEN
    }
    /// View of slot `i`.
    pub fn slot(&self, i: usize) -> PteView<&[u8]> {
        PteView {
            buffer: &self.buffer.as_ref()[i * PTE_LEN..(i + 1) * PTE_LEN],
        }
    }
    /// The slot holding `(pid, vpn, page_shift)`, comparing every tag as the
    /// hardware does in parallel.
    pub fn find(&self, pid: u32, vpn: u64, page_shift: u8) -> Option<usize> {
        (0..self.slots()).find(|&i| self.slot(i).matches(pid, vpn, page_shift))
    }
    /// The first free slot.
    pub fn free_slot(&self) -> Option<usize> {
        (0..self.slots()).find(|&i| !self.slot(i).allocated())
    }
    /// Number of allocated slots.
    pub fn used(&self) -> usize {
        (0..self.slots())
            .filter(|&i| self.slot(i).allocated())
            .count()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bucket<T> {
    /// Write a PTE into slot `i`.
    pub fn write(&mut self, i: usize, pte: &Pte) -> Result<()> {
        if i >= self.slots() {
            return Err(Error::new(
                "bucket.slot",
                ErrorKind::OutOfRange {
                    value: i as u64,
                    max: self.slots() as u64 - 1,
                },
            ));
        }
        pte.emit(&mut self.buffer.as_mut()[i * PTE_LEN..(i + 1) * PTE_LEN])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_vectors() {
        for &(pid, vpn, bits, want) in HASH_VECTORS {
            assert_eq!(
                bucket_index(pid, vpn, bits),
                want,
                "pid {pid} vpn {vpn:#x} bits {bits}"
            );
            assert!(want < (1 << bits));
        }
    }

    #[test]
    fn consecutive_pages_spread() {
        // 512 consecutive pages of one process into 1024 buckets of 16:
        // no bucket gets more than 2 (far from overflow).
        let mut count = [0u8; 1024];
        for vpn in 0x100..0x100 + 512u64 {
            count[bucket_index(9, vpn, 10) as usize] += 1;
        }
        assert!(count.iter().all(|&c| c <= 2));
    }

    #[test]
    fn pte_golden_and_round_trip() {
        let pte = Pte {
            pid: 0x11223344,
            vpn: 0x0000_a1b2_c3d4_e5f6,
            ppn: 0x55667788,
            perms: 3,
            allocated: true,
            valid: true,
            page_shift: 22,
        };
        let b = pte.to_bytes();
        assert_eq!(
            b,
            [
                0x44, 0x33, 0x22, 0x11, 0x88, 0x77, 0x66, 0x55, 0xf6, 0xe5, 0xd4, 0xc3, 0xb2, 0xa1,
                3, 0xb3
            ]
        );
        assert_eq!(Pte::parse(&b).unwrap(), pte);
        let mut bad = b;
        bad[15] |= pte_flags::RESERVED;
        assert_eq!(Pte::parse(&bad).unwrap_err().field, "pte.flags");
        bad = b;
        bad[14] = 0x80;
        assert_eq!(Pte::parse(&bad).unwrap_err().field, "pte.perms");
        assert_eq!(Pte::parse(&b[..3]).unwrap_err().field, "pte");
    }

    #[test]
    fn bucket_find() {
        let mut raw = [0u8; 4 * PTE_LEN];
        let mut bk = Bucket::new_checked(&mut raw[..], 4).unwrap();
        let pte = Pte {
            pid: 3,
            vpn: 9,
            ppn: 1,
            perms: 1,
            allocated: true,
            valid: false,
            page_shift: 12,
        };
        bk.write(2, &pte).unwrap();
        assert_eq!(bk.find(3, 9, 12), Some(2));
        assert_eq!(bk.find(4, 9, 12), None);
        // Same PID and VPN number, other page size: a different page.
        assert_eq!(bk.find(3, 9, 21), None);
        let big = Pte {
            page_shift: 21,
            ..pte
        };
        bk.write(0, &big).unwrap();
        assert_eq!(bk.find(3, 9, 21), Some(0));
        assert_eq!(bk.find(3, 9, 12), Some(2));
        assert!(big.matches(3, 9, 21) && !big.matches(3, 9, 12));
        assert!(bk.slot(2).matches(3, 9, 12) && !bk.slot(2).matches(3, 9, 22));
        // A free slot matches nothing, whatever its stale tag bytes say.
        bk.write(
            3,
            &Pte {
                allocated: false,
                ..pte
            },
        )
        .unwrap();
        assert!(!bk.slot(3).matches(3, 9, 12));
        assert_eq!(bk.free_slot(), Some(1));
        assert_eq!(bk.used(), 2);
        assert_eq!(bk.write(4, &pte).unwrap_err().field, "bucket.slot");
    }
}

/// Largest number of page sizes a board serves at once (two VA bits).
pub const MAX_PAGE_CLASSES: usize = 4;

/// The rule that tells the page size of a VA: the top two bits of the VA
/// space select a page-size class; class 0 holds pages of the board's
/// default size, classes 1.. the other supported sizes in ascending order.
/// So the fast path knows a VA's page size (and thus its VPN and bucket)
/// before any lookup, and the slow path places each allocation in the class
/// of its page size. One definition, used by the slow path, the fast-path
/// model, the RTL and the SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageClasses {
    /// Page shift of each class; 0 = class unused.
    shifts: [u8; MAX_PAGE_CLASSES],
    /// Bits of the VA space.
    va_bits: u32,
}

impl PageClasses {
    /// Classes for a board with `default_shift` and the supported shifts in
    /// `shifts` (any order, the default among them). Errors name the field.
    pub fn new(default_shift: u8, shifts: &[u8], va_bits: u32) -> Result<PageClasses> {
        if !(MIN_PAGE_SHIFT..=MAX_PAGE_SHIFT).contains(&default_shift)
            || !shifts.contains(&default_shift)
        {
            return Err(Error::new("pages.default_size", ErrorKind::Inconsistent));
        }
        if shifts.len() > MAX_PAGE_CLASSES {
            return Err(Error::new(
                "pages.sizes",
                ErrorKind::OutOfRange {
                    value: shifts.len() as u64,
                    max: MAX_PAGE_CLASSES as u64,
                },
            ));
        }
        if !(32..=57).contains(&va_bits) {
            return Err(Error::new(
                "va.bits",
                ErrorKind::OutOfRange {
                    value: va_bits as u64,
                    max: 57,
                },
            ));
        }
        let mut out = [0u8; MAX_PAGE_CLASSES];
        out[0] = default_shift;
        let mut n = 1;
        let mut last = 0u8;
        // Ascending order of the others, duplicates refused.
        loop {
            let next = shifts
                .iter()
                .copied()
                .filter(|&s| s > last && s != default_shift)
                .min();
            let Some(s) = next else { break };
            if !(MIN_PAGE_SHIFT..=MAX_PAGE_SHIFT).contains(&s) {
                return Err(Error::new(
                    "pages.sizes",
                    ErrorKind::OutOfRange {
                        value: s as u64,
                        max: MAX_PAGE_SHIFT as u64,
                    },
                ));
            }
            out[n] = s;
            n += 1;
            last = s;
        }
        if shifts.iter().filter(|&&s| s == default_shift).count() > 1 || n != shifts.len() {
            return Err(Error::new("pages.sizes", ErrorKind::Inconsistent));
        }
        if (out.iter().copied().max().unwrap_or(0) as u32) > va_bits - 2 {
            return Err(Error::new("va.bits", ErrorKind::Inconsistent));
        }
        Ok(PageClasses {
            shifts: out,
            va_bits,
        })
    }

    /// Bits of the VA space.
    pub const fn va_bits(&self) -> u32 {
        self.va_bits
    }

    /// Page shift of class `class`, `None` if unused.
    pub const fn shift(&self, class: usize) -> Option<u8> {
        if class >= MAX_PAGE_CLASSES || self.shifts[class] == 0 {
            None
        } else {
            Some(self.shifts[class])
        }
    }

    /// The default page shift (class 0).
    pub const fn default_shift(&self) -> u8 {
        self.shifts[0]
    }

    /// Class of pages of `1 << shift` bytes (`0` = the default).
    pub fn class_of(&self, shift: u8) -> Option<usize> {
        if shift == 0 {
            return Some(0);
        }
        self.shifts.iter().position(|&s| s == shift && s != 0)
    }

    /// Class of `va`, `None` outside the VA space.
    pub const fn class_of_va(&self, va: u64) -> Option<usize> {
        if va >> self.va_bits != 0 {
            return None;
        }
        Some((va >> (self.va_bits - 2)) as usize & 3)
    }

    /// Page shift of `va`, `None` outside the VA space or in an unused class.
    pub const fn shift_of(&self, va: u64) -> Option<u8> {
        match self.class_of_va(va) {
            Some(c) => self.shift(c),
            None => None,
        }
    }

    /// First VA of class `class`.
    pub const fn class_base(&self, class: usize) -> u64 {
        (class as u64) << (self.va_bits - 2)
    }

    /// Bytes of VA in each class.
    pub const fn class_bytes(&self) -> u64 {
        1 << (self.va_bits - 2)
    }
}

#[cfg(test)]
mod class_tests {
    use super::*;

    #[test]
    fn default_first_then_ascending() {
        let c = PageClasses::new(22, &[12, 21, 22], 50).unwrap();
        assert_eq!(
            (c.shift(0), c.shift(1), c.shift(2), c.shift(3)),
            (Some(22), Some(12), Some(21), None)
        );
        assert_eq!(c.class_of(0), Some(0));
        assert_eq!(c.class_of(21), Some(2));
        assert_eq!(c.shift_of(c.class_base(1) + 5), Some(12));
        assert_eq!(c.shift_of(3 << 48), None);
        assert_eq!(c.shift_of(1 << 50), None);
        assert_eq!(
            PageClasses::new(22, &[12, 21], 50).unwrap_err().field,
            "pages.default_size"
        );
        assert_eq!(
            PageClasses::new(12, &[12, 13, 14, 15, 16], 50)
                .unwrap_err()
                .field,
            "pages.sizes"
        );
        assert_eq!(
            PageClasses::new(12, &[12, 12], 50).unwrap_err().field,
            "pages.sizes"
        );
    }
}
