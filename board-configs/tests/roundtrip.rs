//! Real round trip of the generated Rust source: `to_rust_source` of
//! zcu106.toml, checked in as `tests/generated/zcu106_board.rs` (a unit test
//! fails when it is stale), is compiled here and compared with the config
//! loaded at run time.

mod generated {
    include!("generated/zcu106_board.rs");
}

#[test]
fn generated_const_equals_the_loaded_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("zcu106.toml");
    let loaded = clio_config::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(generated::BOARD, loaded);
    assert_eq!(generated::BOARD.config_hash(), loaded.config_hash());
}

#[test]
fn generated_source_is_what_to_rust_source_prints_now() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/generated/zcu106_board.rs"
    ))
    .unwrap();
    assert_eq!(text, clio_config::to_rust_source(&generated::BOARD));
    assert!(text.starts_with("/// Board `zcu106`"));
    assert!(text.contains("pub const BOARD: ::clio_config::BoardConfig"));
}

/// The generated const is usable in const context, as a firmware would use it.
const BUCKETS: u64 = generated::BOARD.bucket_count();

#[test]
fn derived_values_work_in_const_context() {
    assert_eq!(BUCKETS, 65_536);
}

#[test]
fn every_config_generates_source_naming_every_value() {
    for c in [
        clio_config::boards::ZCU106,
        clio_config::boards::ALVEO_U200,
        clio_config::boards::EMULATOR,
    ] {
        let src = clio_config::to_rust_source(&c);
        for needle in [
            format!("{:#x}", c.regions.data.base),
            format!("{:#x}", c.regions.data.size),
            format!("udp_port: {}", c.network.udp_port),
            format!("{:?}", c.network.ipv4),
            format!("{:#x}", c.pages.sizes.0),
        ] {
            assert!(src.contains(&needle), "{needle} missing from {src}");
        }
        assert_eq!(src.contains("pcie: None"), c.pcie.is_none());
    }
}
