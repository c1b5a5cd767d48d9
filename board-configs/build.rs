//! Sets `clio_config_std` when the `std` feature is on and the target has std
//! (see Cargo.toml): the loader, code generator and embedded files need it.
//! The shipped boards' `const`s are not generated here but checked in
//! (`src/boards_gen.rs`, drift-tested), so the build needs none of the crate's code.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(clio_config_std)");
    let std_feature = std::env::var_os("CARGO_FEATURE_STD").is_some();
    let bare_metal = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "none");
    if std_feature && !bare_metal {
        println!("cargo::rustc-cfg=clio_config_std");
    }
}
