//! CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the integrity check
//! of every Clio packet and ring descriptor.
//!
//! Slicing-by-8 tables are built at compile time; the hardware uses the same
//! polynomial (one 512-bit beat per cycle in the checksum unit).

/// Reflected CRC32C polynomial.
pub const POLY: u32 = 0x82F6_3B78;

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

static TABLES: [[u32; 256]; 8] = make_tables();

/// Incremental CRC32C state.
#[derive(Debug, Clone, Copy)]
pub struct Crc32c(u32);

impl Default for Crc32c {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32c {
    /// A fresh state.
    pub const fn new() -> Self {
        Crc32c(!0)
    }

    /// Feed bytes.
    pub fn update(&mut self, data: &[u8]) {
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if std::arch::is_x86_feature_detected!("sse4.2") {
            self.0 = hw::update(self.0, data);
            return;
        }
        self.update_table(data);
    }

    /// The portable slicing-by-8 path (also the reference for the SSE4.2 one).
    fn update_table(&mut self, data: &[u8]) {
        let t = &TABLES;
        let mut c = self.0;
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let lo = c ^ u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]);
            let hi = u32::from_le_bytes([ch[4], ch[5], ch[6], ch[7]]);
            c = t[7][(lo & 0xff) as usize]
                ^ t[6][((lo >> 8) & 0xff) as usize]
                ^ t[5][((lo >> 16) & 0xff) as usize]
                ^ t[4][(lo >> 24) as usize]
                ^ t[3][(hi & 0xff) as usize]
                ^ t[2][((hi >> 8) & 0xff) as usize]
                ^ t[1][((hi >> 16) & 0xff) as usize]
                ^ t[0][(hi >> 24) as usize];
        }
        for &b in chunks.remainder() {
            c = (c >> 8) ^ t[0][((c ^ b as u32) & 0xff) as usize];
        }
        self.0 = c;
    }

    /// Feed `n` zero bytes (used for the checksum field itself).
    pub fn update_zeros(&mut self, n: usize) {
        let mut c = self.0;
        for _ in 0..n {
            c = (c >> 8) ^ TABLES[0][(c & 0xff) as usize];
        }
        self.0 = c;
    }

    /// The final value.
    pub const fn finish(self) -> u32 {
        !self.0
    }
}

/// The SSE4.2 `crc32` instruction computes exactly this CRC (same reflected
/// polynomial, same state convention), eight bytes per instruction.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod hw {
    use core::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};

    pub(super) fn update(state: u32, data: &[u8]) -> u32 {
        // SAFETY: only called after `is_x86_feature_detected!("sse4.2")`.
        unsafe { update_sse42(state, data) }
    }

    #[target_feature(enable = "sse4.2")]
    unsafe fn update_sse42(state: u32, data: &[u8]) -> u32 {
        let mut c = state as u64;
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(ch);
            c = _mm_crc32_u64(c, u64::from_le_bytes(w));
        }
        let mut c = c as u32;
        let mut rest = chunks.remainder();
        if rest.len() >= 4 {
            c = _mm_crc32_u32(c, u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]));
            rest = &rest[4..];
        }
        for &b in rest {
            c = _mm_crc32_u8(c, b);
        }
        c
    }
}

/// CRC32C of one buffer.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut c = Crc32c::new();
    c.update(data);
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_check_value() {
        // The CRC catalogue's check value for CRC-32C.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        // RFC 3720 B.4: 32 bytes of zeros and of 0xff.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
    }

    #[test]
    fn slicing_matches_bytewise() {
        let data: [u8; 67] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        let mut bytewise = !0u32;
        for &b in &data {
            bytewise = (bytewise >> 8) ^ TABLES[0][((bytewise ^ b as u32) & 0xff) as usize];
        }
        assert_eq!(crc32c(&data), !bytewise);
        let mut table = Crc32c::new();
        table.update_table(&data);
        assert_eq!(table.finish(), !bytewise);
        // Every length exercises each tail (8-, 4- and 1-byte steps) of
        // whichever path `update` takes on this host.
        for len in 0..=data.len() {
            let mut t = Crc32c::new();
            t.update_table(&data[..len]);
            assert_eq!(crc32c(&data[..len]), t.finish(), "length {len}");
        }
        let mut inc = Crc32c::new();
        inc.update(&data[..5]);
        inc.update(&data[5..]);
        assert_eq!(inc.finish(), crc32c(&data));
        let mut z = Crc32c::new();
        z.update(&data[..9]);
        z.update_zeros(4);
        let mut with = data;
        with[9..13].fill(0);
        let mut r = Crc32c::new();
        r.update(&with[..13]);
        assert_eq!(z.finish(), r.finish());
    }
}
