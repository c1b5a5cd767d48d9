//! Decoding real UART captures of the firmware, and reading image manifests.

use clio_fwlog::{Firmware, FwlogError, ImageManifest, Level};

const BOOT_ELF: &[u8] = include_bytes!("data/boot.elf");
const BOOT_UART: &[u8] = include_bytes!("data/boot.uart");
const BOOT_LOG: &str = include_str!("data/boot.log");
const FAULT_ELF: &[u8] = include_bytes!("data/fault.elf");
const FAULT_UART: &[u8] = include_bytes!("data/fault.uart");
const FAULT_LOG: &str = include_str!("data/fault.log");

fn text(lines: &[clio_fwlog::LogLine]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

fn golden(log: &str) -> Vec<String> {
    log.lines().map(str::to_string).collect()
}

#[test]
fn boot_capture_decodes_to_the_golden_log() {
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    let (lines, malformed) = fw.decode_all(BOOT_UART);
    assert_eq!(malformed, 0);
    assert_eq!(text(&lines), golden(BOOT_LOG));
    assert!(lines.iter().all(|l| l.level == Some(Level::Info)));
    assert!(lines.iter().all(|l| l.timestamp.is_some()));
}

#[test]
fn banner_carries_the_build_id_and_config_hash_of_the_manifest() {
    let manifest = ImageManifest::from_elf("boot.elf", BOOT_ELF).unwrap();
    assert_eq!(manifest.board, "zcu106");
    assert_eq!(
        manifest.build_id.len(),
        40,
        "SHA-1 build id: {}",
        manifest.build_id
    );
    assert_eq!(manifest.config_hash.len(), 16);
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    let (lines, _) = fw.decode_all(BOOT_UART);
    let banner = &lines[0].message;
    assert!(
        banner.starts_with(&format!(
            "clio-firmware {} board {} build {} config {}:",
            manifest.version, manifest.board, manifest.build_id, manifest.config_hash
        )),
        "{banner}"
    );
    // The fault image is a different link, so a different id.
    let other = ImageManifest::from_elf("fault.elf", FAULT_ELF).unwrap();
    assert_ne!(other.build_id, manifest.build_id);
    assert_eq!(other.config_hash, manifest.config_hash);
}

#[test]
fn manifest_sizes_cover_the_loaded_image() {
    let m = ImageManifest::from_elf("boot.elf", BOOT_ELF).unwrap();
    assert!(m.size > 0 && m.size < BOOT_ELF.len() as u64, "{m:?}");
    // In memory the image also holds .bss and four 64 KiB stacks.
    assert!(m.mem_size >= m.size + 4 * 64 * 1024, "{m:?}");
    let json = serde_json::to_value(&m).unwrap();
    for key in ["elf", "size", "build_id", "config_hash", "board"] {
        assert!(json.get(key).is_some(), "manifest JSON lacks {key}");
    }
}

#[test]
fn fault_capture_reports_the_syndrome() {
    let fw = Firmware::from_elf("fault.elf", FAULT_ELF).unwrap();
    let (lines, malformed) = fw.decode_all(FAULT_UART);
    assert_eq!(malformed, 0);
    assert_eq!(text(&lines), golden(FAULT_LOG));
    let errors: Vec<_> = lines
        .iter()
        .filter(|l| l.level == Some(Level::Error))
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(errors[0]
        .message
        .contains("ESR_EL1=0x96000005 EC=0x25 (data abort, same EL)"));
    assert!(errors[0].message.contains("FAR_EL1=0x0000000100000000"));
    assert!(errors[1].message.contains("DFSC=0x05"));
}

#[test]
fn byte_at_a_time_feeding_gives_the_same_lines() {
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    let mut stream = fw.stream();
    let mut lines = Vec::new();
    for b in BOOT_UART {
        lines.extend(stream.feed(std::slice::from_ref(b)));
    }
    assert_eq!(stream.malformed_frames(), 0);
    assert_eq!(text(&lines), golden(BOOT_LOG));
}

#[test]
fn text_from_an_earlier_boot_stage_costs_no_frame() {
    // A board's FSBL prints text on the same UART before the firmware runs;
    // the firmware's leading frame delimiter keeps the banner intact.
    let mut capture = b"Xilinx Zynq MP First Stage Boot Loader\r\nRelease 2022.2\r\n".to_vec();
    capture.extend_from_slice(BOOT_UART);
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    let (lines, malformed) = fw.decode_all(&capture);
    assert_eq!(malformed, 1, "the FSBL text is one undecodable frame");
    assert_eq!(text(&lines), golden(BOOT_LOG));
}

#[test]
fn a_corrupted_frame_is_dropped_and_the_rest_decode() {
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    // Frames are the runs of non-zero bytes between 0x00 delimiters;
    // garble the whole of the third one.
    let mut capture = BOOT_UART.to_vec();
    let third = capture
        .split_mut(|&b| b == 0)
        .filter(|frame| !frame.is_empty())
        .nth(2)
        .unwrap();
    third.fill(0xff);
    let (lines, malformed) = fw.decode_all(&capture);
    assert_eq!(malformed, 1);
    let mut expected = golden(BOOT_LOG);
    expected.remove(2);
    assert_eq!(text(&lines), expected);
}

#[test]
fn a_capture_cut_mid_frame_yields_only_whole_frames() {
    let fw = Firmware::from_elf("boot.elf", BOOT_ELF).unwrap();
    let last_end = BOOT_UART.len() - 1;
    assert_eq!(
        BOOT_UART[last_end], 0,
        "capture ends with a frame delimiter"
    );
    let cut = &BOOT_UART[..last_end - 3];
    let (lines, malformed) = fw.decode_all(cut);
    assert_eq!(malformed, 0);
    let expected = golden(BOOT_LOG);
    assert_eq!(text(&lines), expected[..expected.len() - 1]);
}

#[test]
fn the_wrong_elf_is_a_clear_error() {
    match Firmware::from_elf("notes.txt", b"not an elf at all") {
        Err(e @ FwlogError::NotElf { .. }) => assert!(e.to_string().starts_with("notes.txt: ")),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("decoded a text file as an ELF"),
    }
    // A host executable is an ELF but has no defmt table and no manifest.
    let exe_path = std::env::current_exe().unwrap();
    let exe = std::fs::read(&exe_path).unwrap();
    match Firmware::from_elf("host-exe", &exe) {
        Err(e @ FwlogError::NoDefmtTable { .. }) => {
            assert!(e.to_string().contains("host-exe"), "{e}")
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("found a defmt table in a host executable"),
    }
    match ImageManifest::from_elf("host-exe", &exe) {
        Err(FwlogError::MissingSection { section, .. }) => {
            assert!(section == ".note.gnu.build-id" || section == ".clio_manifest")
        }
        other => panic!("expected a missing-section error, got {other:?}"),
    }
}

/// The banner's build id is found without the ELF, whole or byte by byte,
/// and equals the id of the ELF that wrote the capture (not the other one).
#[test]
fn build_id_scanner_reads_the_banner_of_a_real_capture() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let uart = std::fs::read(dir.join("boot.uart")).unwrap();
    let boot = clio_fwlog::ImageManifest::from_elf(
        "boot.elf",
        &std::fs::read(dir.join("boot.elf")).unwrap(),
    )
    .unwrap();
    let fault = clio_fwlog::ImageManifest::from_elf(
        "fault.elf",
        &std::fs::read(dir.join("fault.elf")).unwrap(),
    )
    .unwrap();
    assert_ne!(boot.build_id, fault.build_id);
    let mut whole = clio_fwlog::BuildIdScanner::new(boot.build_id.len());
    assert_eq!(whole.feed(&uart).as_deref(), Some(boot.build_id.as_str()));
    assert_eq!(whole.feed(&uart), None, "reported once");
    let mut bytewise = clio_fwlog::BuildIdScanner::new(boot.build_id.len());
    let found: Vec<String> = uart
        .iter()
        .filter_map(|b| bytewise.feed(std::slice::from_ref(b)))
        .collect();
    assert_eq!(found, std::slice::from_ref(&boot.build_id));
    // The fault capture carries the fault image's id.
    let fuart = std::fs::read(dir.join("fault.uart")).unwrap();
    let mut s = clio_fwlog::BuildIdScanner::new(fault.build_id.len());
    assert_eq!(s.feed(&fuart).as_deref(), Some(fault.build_id.as_str()));
}
