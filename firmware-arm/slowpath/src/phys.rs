//! Physical page allocation over the data region, one allocator per page
//! size sharing one pool of frames.
//!
//! The data region is cut into frames of the largest page size. A page of
//! the largest size is a whole frame; smaller sizes take a frame from the
//! pool, carve it into pages, and keep it on their partial list while it has
//! a free page; a frame whose pages are all free again goes back to the
//! pool, so memory moves between sizes. A bitmap at the smallest-page
//! granularity marks pages in use (a page sets the bit of its first unit).
//!
//! Costs: whole-frame alloc/free O(1); a smaller page O(pages per frame / 64)
//! word scans for the smallest size, O(pages per frame) for middle sizes.

use crate::config::{Layout, SlowPathConfig, MAX_PAGE_SIZES};
use crate::words::{bit, set_bit, take};

const NO_CLASS: u64 = 0xff;

/// Why a PA could not be freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysError {
    /// The PPN is outside the data region or misaligned for its size.
    OutOfRange,
    /// The page is not in use (or belongs to another page size).
    NotInUse,
}

/// The per-size physical allocators and their shared frame pool.
#[derive(Debug)]
pub struct PhysAlloc<'a> {
    frame_base: u64,
    frame_shift: u32,
    unit_shift: u32,
    n_frames: u64,
    upf: u64,
    shifts: [u8; MAX_PAGE_SIZES],
    n_classes: usize,
    free_frames: &'a mut [u64],
    n_free_frames: usize,
    meta: &'a mut [u64],
    partial: &'a mut [u64],
    n_partial: [usize; MAX_PAGE_SIZES],
    used: &'a mut [u64],
    free_bytes: u64,
}

impl<'a> PhysAlloc<'a> {
    /// Carve the allocator's storage off `rest` and put every frame in the pool.
    pub(crate) fn carve(rest: &mut &'a mut [u64], cfg: &SlowPathConfig, l: &Layout) -> Self {
        let free_frames = take(rest, l.frame_stack_words);
        let meta = take(rest, l.frame_meta_words);
        let partial = take(rest, l.partial_words);
        let used = take(rest, l.bitmap_words);
        used.fill(0);
        meta.fill(NO_CLASS);
        // Stack top = frame 0, so memory is used from the bottom up.
        for (i, f) in free_frames.iter_mut().enumerate() {
            *f = l.n_frames - 1 - i as u64;
        }
        PhysAlloc {
            frame_base: l.frame_base,
            frame_shift: l.frame_shift,
            unit_shift: l.unit_shift,
            n_frames: l.n_frames,
            upf: l.units_per_frame,
            shifts: cfg.page_shifts,
            n_classes: cfg.shifts().len(),
            free_frames,
            n_free_frames: l.n_frames as usize,
            meta,
            partial,
            n_partial: [0; MAX_PAGE_SIZES],
            used,
            free_bytes: l.n_frames << l.frame_shift,
        }
    }

    /// Bytes not handed out (free frames plus free pages of partial frames).
    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    /// Bytes of the whole pool.
    pub fn total_bytes(&self) -> u64 {
        self.n_frames << self.frame_shift
    }

    /// Frames in the pool, not carved for any size.
    pub fn free_frames(&self) -> usize {
        self.n_free_frames
    }

    fn class_meta(&self, f: u64) -> (u64, u64, u64) {
        let m = self.meta[f as usize];
        (m & 0xff, (m >> 8) & 0xff_ffff, m >> 32)
    }

    fn set_meta(&mut self, f: u64, class: u64, used: u64, pos: u64) {
        self.meta[f as usize] = class | used << 8 | pos << 32;
    }

    fn stride(&self, class: usize) -> u64 {
        1 << (self.shifts[class] as u32 - self.unit_shift)
    }

    fn pop_frame(&mut self) -> Option<u64> {
        if self.n_free_frames == 0 {
            return None;
        }
        self.n_free_frames -= 1;
        Some(self.free_frames[self.n_free_frames])
    }

    fn push_frame(&mut self, f: u64) {
        self.free_frames[self.n_free_frames] = f;
        self.n_free_frames += 1;
    }

    fn partial_push(&mut self, class: usize, f: u64) {
        let pos = self.n_partial[class];
        self.partial[class * self.n_frames as usize + pos] = f;
        self.n_partial[class] += 1;
        let (c, used, _) = self.class_meta(f);
        self.set_meta(f, c, used, pos as u64);
    }

    fn partial_remove(&mut self, class: usize, f: u64) {
        let (_, _, pos) = self.class_meta(f);
        let base = class * self.n_frames as usize;
        let last = self.n_partial[class] - 1;
        let moved = self.partial[base + last];
        self.partial[base + pos as usize] = moved;
        self.n_partial[class] = last;
        if moved != f {
            let (c, used, _) = self.class_meta(moved);
            self.set_meta(moved, c, used, pos);
        }
    }

    /// Allocate a page of size class `class` (index into the board's sizes);
    /// returns its PPN (PA >> page shift).
    pub fn alloc(&mut self, class: usize) -> Option<u32> {
        if class >= self.n_classes {
            return None;
        }
        let shift = self.shifts[class];
        let page = 1u64 << shift;
        if class == self.n_classes - 1 {
            let f = self.pop_frame()?;
            self.set_meta(f, class as u64, 1, 0);
            set_bit(self.used, f * self.upf, true);
            self.free_bytes -= page;
            return Some(((self.frame_base + (f << self.frame_shift)) >> shift) as u32);
        }
        let per_frame = 1u64 << (self.frame_shift - shift as u32);
        let f = if self.n_partial[class] > 0 {
            self.partial[class * self.n_frames as usize + self.n_partial[class] - 1]
        } else {
            let f = self.pop_frame()?;
            self.set_meta(f, class as u64, 0, 0);
            self.partial_push(class, f);
            f
        };
        let j = self.find_free(f, class)?;
        set_bit(self.used, f * self.upf + j * self.stride(class), true);
        let (c, used, pos) = self.class_meta(f);
        self.set_meta(f, c, used + 1, pos);
        if used + 1 == per_frame {
            self.partial_remove(class, f);
        }
        self.free_bytes -= page;
        let pa = self.frame_base + (f << self.frame_shift) + (j << shift);
        Some((pa >> shift) as u32)
    }

    /// First free page of `class` in frame `f`.
    fn find_free(&self, f: u64, class: usize) -> Option<u64> {
        let st = self.stride(class);
        let first = f * self.upf;
        if st == 1 && self.upf % 64 == 0 {
            let w0 = (first / 64) as usize;
            let words = (self.upf / 64) as usize;
            return (0..words).find_map(|k| {
                let w = self.used[w0 + k];
                (w != u64::MAX).then(|| (k as u64) * 64 + (!w).trailing_zeros() as u64)
            });
        }
        (0..self.upf / st).find(|&j| !bit(self.used, first + j * st))
    }

    /// The unit index and frame of `(class, ppn)` if it is a page of the region.
    fn locate(&self, class: usize, ppn: u32) -> Option<(u64, u64)> {
        if class >= self.n_classes {
            return None;
        }
        let pa = (ppn as u64) << self.shifts[class];
        if pa < self.frame_base {
            return None;
        }
        let off = pa - self.frame_base;
        let f = off >> self.frame_shift;
        (f < self.n_frames).then_some(((off >> self.unit_shift), f))
    }

    /// Whether `(class, ppn)` is a page currently handed out.
    pub fn in_use(&self, class: usize, ppn: u32) -> bool {
        match self.locate(class, ppn) {
            Some((u, f)) => bit(self.used, u) && self.class_meta(f).0 == class as u64,
            None => false,
        }
    }

    /// Unit index of `(class, ppn)` (for per-page side tables).
    pub fn unit(&self, class: usize, ppn: u32) -> Option<u64> {
        self.locate(class, ppn).map(|(u, _)| u)
    }

    /// Return a page to its allocator.
    pub fn free(&mut self, class: usize, ppn: u32) -> Result<(), PhysError> {
        let (u, f) = self.locate(class, ppn).ok_or(PhysError::OutOfRange)?;
        if !bit(self.used, u) || self.class_meta(f).0 != class as u64 {
            return Err(PhysError::NotInUse);
        }
        set_bit(self.used, u, false);
        self.free_bytes += 1u64 << self.shifts[class];
        if class == self.n_classes - 1 {
            self.set_meta(f, NO_CLASS, 0, 0);
            self.push_frame(f);
            return Ok(());
        }
        let per_frame = 1u64 << (self.frame_shift - self.shifts[class] as u32);
        let (c, used, pos) = self.class_meta(f);
        if used == per_frame {
            self.set_meta(f, c, used - 1, pos);
            self.partial_push(class, f);
        } else {
            self.set_meta(f, c, used - 1, pos);
        }
        if used - 1 == 0 {
            self.partial_remove(class, f);
            self.set_meta(f, NO_CLASS, 0, 0);
            self.push_frame(f);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_config::boards;

    fn cfg() -> SlowPathConfig {
        let mut c = SlowPathConfig::from_board(&boards::EMULATOR);
        c.data_size = 8 << 22; // eight 4 MiB frames
        c.check().unwrap();
        c
    }

    #[test]
    fn sizes_share_frames_and_give_them_back() {
        let c = cfg();
        let l = c.layout();
        let mut arena = vec![0u64; l.words as usize];
        let mut rest = &mut arena[..];
        let mut p = PhysAlloc::carve(&mut rest, &c, &l);
        let big = c.shifts().len() - 1;
        let total = p.total_bytes();
        // One 4 KiB page takes a frame out of the pool.
        let small = p.alloc(0).unwrap();
        assert_eq!(p.free_frames(), 7);
        let frames: Vec<u32> = (0..7).map(|_| p.alloc(big).unwrap()).collect();
        assert_eq!(p.alloc(big), None, "pool empty");
        // The small page's frame still serves the rest of its 4 KiB pages.
        let more: Vec<u32> = (0..1023).map(|_| p.alloc(0).unwrap()).collect();
        assert_eq!(p.alloc(0), None);
        assert_eq!(p.free_bytes(), 0);
        assert_eq!(p.free(0, small), Ok(()));
        assert_eq!(p.free(0, small), Err(PhysError::NotInUse));
        assert_eq!(p.free(big, frames[0] + 100), Err(PhysError::OutOfRange));
        for m in more {
            p.free(0, m).unwrap();
        }
        assert_eq!(
            p.free_frames(),
            1,
            "an empty carved frame returns to the pool"
        );
        for f in frames {
            p.free(big, f).unwrap();
        }
        assert_eq!(p.free_bytes(), total);
        // All eight frames are available to the largest size again.
        assert_eq!((0..8).filter_map(|_| p.alloc(big)).count(), 8);
    }
}
