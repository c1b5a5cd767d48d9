//! The firmware's build id, read from its banner frame without the ELF.
//!
//! `clio logs` must notice when the ELF it decodes with is not the image
//! that wrote the stream: decoding then turns every frame into plausible
//! garbage. The banner (`clio-firmware … build <id> …`) carries the GNU
//! build id as a defmt `{=str}` argument, i.e. its length as a
//! little-endian `u32` and the ASCII hex digits, inside an rzcobs-encoded frame that ends at a `0x00`
//! delimiter. This scanner undoes the rzcobs framing (no defmt table
//! needed) and looks for such a length followed by that many lowercase
//! hex digits, so it finds the id whichever ELF the user passed.
//!
//! rzcobs ("reverse zero-compressing COBS", defmt's default encoding) is
//! decoded from the end of the frame backwards: a code byte `0x01..=0x7f`
//! covers 7 bytes, bit `6 - i` set meaning byte `i` is zero and clear
//! meaning it is the next literal; `0x80..=0xfe` is one zero then
//! `(code & 0x7f) + 7` literals; `0xff` is 134 literals.

/// Undo rzcobs on one frame (without its `0x00` delimiter). `None` when the
/// frame is truncated or holds a zero byte (not a frame of this encoding).
pub fn rzcobs_decode(frame: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(frame.len() + frame.len() / 7 + 1);
    let mut it = frame.iter().rev().copied();
    while let Some(code) = it.next() {
        match code {
            0 => return None,
            0x01..=0x7f => {
                for i in 0..7 {
                    if code & (1 << (6 - i)) != 0 {
                        out.push(0);
                    } else {
                        out.push(it.next()?);
                    }
                }
            }
            0x80..=0xfe => {
                out.push(0);
                for _ in 0..(code & 0x7f) + 7 {
                    out.push(it.next()?);
                }
            }
            0xff => {
                for _ in 0..134 {
                    out.push(it.next()?);
                }
            }
        }
    }
    out.reverse();
    Some(out)
}

/// A `{=str}` argument of exactly `len` lowercase hex digits in a decoded
/// frame: its length as a little-endian `u32`, then the digits.
fn hex_str_arg(frame: &[u8], len: usize) -> Option<String> {
    let prefix = u32::try_from(len).ok()?.to_le_bytes();
    if len == 0 {
        return None;
    }
    frame.windows(len + 4).find_map(|w| {
        (w[..4] == prefix
            && w[4..]
                .iter()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| String::from_utf8_lossy(&w[4..]).into_owned())
    })
}

/// Longest frame kept while waiting for its delimiter (a banner is about
/// 100 bytes; anything far longer is not one and must not grow memory).
const MAX_FRAME: usize = 4096;

/// Finds the build id in a stream fed in pieces.
#[derive(Debug)]
pub struct BuildIdScanner {
    id_len: usize,
    frame: Vec<u8>,
    overflow: bool,
    found: Option<String>,
}

impl BuildIdScanner {
    /// A scanner for build ids of `id_len` hex digits (40 for the SHA-1 id
    /// the image's linker writes: the length of the ELF's own id).
    pub fn new(id_len: usize) -> Self {
        BuildIdScanner {
            id_len,
            frame: Vec::new(),
            overflow: false,
            found: None,
        }
    }

    /// Feeds received bytes; returns the build id of the first frame that
    /// carries one (once: later calls return `None`).
    pub fn feed(&mut self, bytes: &[u8]) -> Option<String> {
        if self.found.is_some() {
            return None;
        }
        for &b in bytes {
            if b != 0 {
                if self.frame.len() < MAX_FRAME {
                    self.frame.push(b);
                } else {
                    self.overflow = true;
                }
                continue;
            }
            let frame = std::mem::take(&mut self.frame);
            let overflow = std::mem::replace(&mut self.overflow, false);
            if overflow || frame.is_empty() {
                continue;
            }
            if let Some(id) = rzcobs_decode(&frame).and_then(|f| hex_str_arg(&f, self.id_len)) {
                self.found = Some(id.clone());
                return Some(id);
            }
        }
        None
    }

    /// The build id found so far.
    pub fn found(&self) -> Option<&str> {
        self.found.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_runs_and_zeros() {
        // Code 0x80: seven literals and a zero (decoded back to front).
        assert_eq!(
            rzcobs_decode(&[1, 2, 3, 4, 5, 6, 7, 0x80]).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 0]
        );
        // Code 0x7f: seven zeros.
        assert_eq!(rzcobs_decode(&[0x7f]).unwrap(), [0; 7]);
        assert!(rzcobs_decode(&[0x80]).is_none(), "truncated");
        assert!(
            rzcobs_decode(&[1, 0, 0x80]).is_none(),
            "zero inside a frame"
        );
    }
}
