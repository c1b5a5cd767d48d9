//! Generates `boards.rs` (the shipped boards as `const`s, for `no_std` users) and
//! `zcu106_board.rs` (the firmware-build-script form, for the round-trip test)
//! from the TOML files, using the crate's own loader and code generator.

#[allow(dead_code)]
#[path = "src/canonical.rs"]
mod canonical;
#[allow(dead_code)]
#[path = "src/codegen.rs"]
mod codegen;
#[allow(dead_code)]
#[path = "src/load.rs"]
mod load;
#[allow(dead_code)]
#[path = "src/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "src/validate.rs"]
mod validate;

use std::path::{Path, PathBuf};

/// (const name, file) of every shipped board.
const BOARDS: [(&str, &str); 3] = [
    ("ZCU106", "zcu106.toml"),
    ("ALVEO_U200", "alveo-u200.toml"),
    ("EMULATOR", "emulator.toml"),
];

fn main() {
    // `clio_config_std`: the std feature is on and the target has std (see Cargo.toml).
    println!("cargo::rustc-check-cfg=cfg(clio_config_std)");
    let std_feature = std::env::var_os("CARGO_FEATURE_STD").is_some();
    let bare_metal = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "none");
    if std_feature && !bare_metal {
        println!("cargo::rustc-cfg=clio_config_std");
    }
    for dir in [
        "src/canonical.rs",
        "src/codegen.rs",
        "src/load.rs",
        "src/model.rs",
        "src/validate.rs",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut boards = String::new();
    for (name, file) in BOARDS {
        println!("cargo:rerun-if-changed={file}");
        let config = match load::load(Path::new(file)) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: board-configs/{e}");
                std::process::exit(1);
            }
        };
        boards.push_str(&codegen::to_rust_const(&config, name, "crate"));
        if name == "ZCU106" {
            write(
                &out.join("zcu106_board.rs"),
                &codegen::to_rust_source(&config),
            );
        }
    }
    boards.push_str("/// Every shipped board with its name, in file order.\n");
    boards.push_str(&format!(
        "pub const ALL: [(&str, crate::BoardConfig); {}] = [\n",
        BOARDS.len()
    ));
    for (name, file) in BOARDS {
        let board = file.trim_end_matches(".toml");
        boards.push_str(&format!("    ({board:?}, {name}),\n"));
    }
    boards.push_str("];\n");
    write(&out.join("boards.rs"), &boards);
}

fn write(path: &Path, text: &str) {
    if let Err(e) = std::fs::write(path, text) {
        eprintln!("error: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
}
