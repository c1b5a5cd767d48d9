//! The checked-in wire reference (`REFERENCE.md`) must equal what the crate
//! generates (`CLIO_BLESS=1 cargo test -p clio-wire` rewrites it).

use std::path::PathBuf;

#[test]
fn reference_md_matches_crate() {
    let generated = clio_wire::reference::markdown();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("REFERENCE.md");
    if std::env::var_os("CLIO_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run CLIO_BLESS=1 cargo test -p clio-wire",
            path.display()
        )
    });
    if on_disk != generated {
        let line = on_disk
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| on_disk.lines().count().min(generated.lines().count()));
        panic!(
            "{} differs from the wire crate at line {}; run CLIO_BLESS=1 cargo test -p clio-wire",
            path.display(),
            line + 1
        );
    }
}

/// Every opcode, status and payload the crate defines appears in the text,
/// with its value.
#[test]
fn reference_names_every_opcode_status_and_payload() {
    use clio_wire::{Opcode, Status};
    let md = clio_wire::reference::markdown();
    for op in Opcode::ALL {
        let needle = format!("{:#04x}", op.raw());
        assert!(md.contains(op.name()), "opcode {} missing", op.name());
        assert!(md.contains(&needle), "opcode value {needle} missing");
    }
    for s in Status::ALL {
        assert!(
            md.contains(&format!("| {} | {} |", s.raw(), s.name())),
            "status {} missing",
            s.name()
        );
    }
    for p in [
        "AllocReq",
        "AllocResp",
        "FreeReq",
        "AtomicResp",
        "ChaseReq",
        "ChaseResp",
        "OffloadReq",
        "OpenSessionReq",
        "OpenSessionResp",
        "InfoResp",
    ] {
        assert!(md.contains(&format!("### {p} (")), "payload {p} missing");
    }
    assert!(md.contains("0x1EDC6F41") && md.contains("0x82F63B78"));
    assert!(md.contains("0xE3069283"), "CRC check value missing");
}
