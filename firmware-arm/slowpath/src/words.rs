//! Packed access to the `u64` arena: the whole state lives in one word
//! slice so a firmware can hold it in one static and the library needs no
//! `unsafe` casts.

/// `u32` number `i` of a word slice (two per word, low half first).
#[inline]
pub(crate) fn get32(w: &[u64], i: usize) -> u32 {
    (w[i / 2] >> ((i & 1) * 32)) as u32
}

/// Set `u32` number `i` of a word slice.
#[inline]
pub(crate) fn set32(w: &mut [u64], i: usize, v: u32) {
    let sh = (i & 1) * 32;
    let x = &mut w[i / 2];
    *x = (*x & !(0xffff_ffffu64 << sh)) | ((v as u64) << sh);
}

/// Byte number `i` of a word slice (eight per word, low byte first).
#[inline]
pub(crate) fn get8(w: &[u64], i: usize) -> u8 {
    (w[i / 8] >> ((i & 7) * 8)) as u8
}

/// Set byte number `i` of a word slice.
#[inline]
pub(crate) fn set8(w: &mut [u64], i: usize, v: u8) {
    let sh = (i & 7) * 8;
    let x = &mut w[i / 8];
    *x = (*x & !(0xffu64 << sh)) | ((v as u64) << sh);
}

/// Bit `i` of a bitmap.
#[inline]
pub(crate) fn bit(w: &[u64], i: u64) -> bool {
    w[(i / 64) as usize] >> (i % 64) & 1 != 0
}

/// Set or clear bit `i` of a bitmap.
#[inline]
pub(crate) fn set_bit(w: &mut [u64], i: u64, v: bool) {
    let m = 1u64 << (i % 64);
    let x = &mut w[(i / 64) as usize];
    if v {
        *x |= m
    } else {
        *x &= !m
    }
}

/// Split `n` words off the front of `rest`.
pub(crate) fn take<'a>(rest: &mut &'a mut [u64], n: u64) -> &'a mut [u64] {
    let r = core::mem::take(rest);
    let (a, b) = r.split_at_mut(n as usize);
    *rest = b;
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips() {
        let mut w = [0u64; 4];
        set32(&mut w, 3, 0xdead_beef);
        set32(&mut w, 2, 7);
        assert_eq!((get32(&w, 3), get32(&w, 2)), (0xdead_beef, 7));
        set8(&mut w, 21, 0xab);
        assert_eq!(get8(&w, 21), 0xab);
        assert_eq!(get8(&w, 20), 0);
        assert_eq!(get32(&w, 3), 0xdead_beef);
        set_bit(&mut w, 200, true);
        assert!(bit(&w, 200) && !bit(&w, 199));
        set_bit(&mut w, 200, false);
        assert!(!bit(&w, 200));
    }
}
