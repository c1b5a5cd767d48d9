//! The checked-in SystemVerilog package must equal what the crate generates.

mod common;

fn check(generated: String, rel: &str) {
    common::check_generated(&generated, rel);
}

#[test]
fn clio_pkg_matches_crate() {
    check(
        clio_wire::svgen::clio_pkg(),
        "../../ip/fastpath/rtl/clio_pkg.sv",
    );
}
