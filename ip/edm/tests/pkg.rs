//! The checked-in SystemVerilog package must be exactly what clio-wire generates.

#[test]
fn edm_pkg_sv_is_generated_from_clio_wire() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/rtl/edm_pkg.sv");
    let on_disk = std::fs::read_to_string(path).expect("rtl/edm_pkg.sv exists");
    assert!(
        on_disk == clio_wire::edm::sv_package(),
        "rtl/edm_pkg.sv is stale: run `cargo run -p edm --bin edm-report -- --write-pkg ip/edm/rtl/edm_pkg.sv`"
    );
}
