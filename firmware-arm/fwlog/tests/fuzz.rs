//! Property tests: what comes from a board (UART bytes) or the disk (an ELF) never panics
//! the decoder. Arbitrary or damaged UART streams decode to lines and a malformed-frame
//! count; damaged ELF files load or give an error.

use clio_fwlog::{Firmware, ImageManifest};
use proptest::prelude::*;

const BOOT_ELF: &[u8] = include_bytes!("data/boot.elf");
const BOOT_UART: &[u8] = include_bytes!("data/boot.uart");
const FAULT_ELF: &[u8] = include_bytes!("data/fault.elf");

/// `base` with bytes replaced, removed or inserted at the given positions.
fn mutate(base: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut v = base.to_vec();
    for &(pos, kind, byte) in edits {
        if v.is_empty() {
            v.push(byte);
            continue;
        }
        let i = pos % v.len();
        match kind % 3 {
            0 => v[i] = byte,
            1 => {
                v.remove(i);
            }
            _ => v.insert(i, byte),
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_uart_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        for elf in [BOOT_ELF, FAULT_ELF] {
            let fw = Firmware::from_elf("fw.elf", elf).unwrap();
            let (lines, malformed) = fw.decode_all(&bytes);
            // Every frame takes at least one byte.
            prop_assert!(lines.len() as u64 + malformed <= bytes.len() as u64 + 1);
        }
    }

    #[test]
    fn damaged_captures_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
        chunk in 1usize..64,
    ) {
        let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
        let mut bytes = mutate(BOOT_UART, &edits);
        bytes.truncate(cut % (bytes.len() + 1));
        let (whole, malformed) = fw.decode_all(&bytes);
        // Fed in pieces, the stream decodes to the same lines.
        let mut stream = fw.stream();
        let mut pieces = Vec::new();
        for c in bytes.chunks(chunk) {
            pieces.extend(stream.feed(c));
        }
        prop_assert_eq!(pieces.len(), whole.len());
        prop_assert_eq!(stream.malformed_frames(), malformed);
    }

    #[test]
    fn damaged_elf_files_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut elf = mutate(BOOT_ELF, &edits);
        if cut % 4 == 0 {
            elf.truncate(cut % (elf.len() + 1));
        }
        let _ = Firmware::from_elf("damaged.elf", &elf);
        let _ = ImageManifest::from_elf("damaged.elf", &elf);
    }

    #[test]
    fn arbitrary_bytes_are_not_an_elf(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        prop_assert!(Firmware::from_elf("x.elf", &bytes).is_err());
        prop_assert!(ImageManifest::from_elf("x.elf", &bytes).is_err());
    }
}
