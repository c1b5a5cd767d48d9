//! The checked-in wire reference (`REFERENCE.md`) must equal what the crate
//! generates (`CLIO_BLESS=1 cargo test -p clio-wire` rewrites it).

mod common;

#[test]
fn reference_md_matches_crate() {
    let generated = clio_wire::reference::markdown();
    common::check_generated(&generated, "REFERENCE.md");
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
        "OffloadCallReq",
        "OffloadCallResp",
        "OpenSessionReq",
        "OpenSessionResp",
        "InfoResp",
    ] {
        assert!(md.contains(&format!("### {p} (")), "payload {p} missing");
    }
    assert!(md.contains("0x1EDC6F41") && md.contains("0x82F63B78"));
    assert!(md.contains("0xE3069283"), "CRC check value missing");
}
