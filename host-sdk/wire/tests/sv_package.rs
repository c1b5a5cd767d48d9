//! The checked-in SystemVerilog package must equal what the crate generates.

use std::path::PathBuf;

fn check(generated: String, rel: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
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

#[test]
fn clio_pkg_matches_crate() {
    check(
        clio_wire::svgen::clio_pkg(),
        "../../ip/fastpath/rtl/clio_pkg.sv",
    );
}
