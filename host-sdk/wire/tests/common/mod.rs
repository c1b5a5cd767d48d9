//! Shared by the tests that compare a checked-in generated file with what
//! the crate generates now.

use std::path::PathBuf;

/// `rel` (from this crate's directory) must equal `generated`; with
/// `CLIO_BLESS` set it is rewritten instead. A difference names the file and
/// its first differing line.
pub fn check_generated(generated: &str, rel: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("CLIO_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
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
