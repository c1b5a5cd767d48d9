//! Generates the image's memory map from the board config.
//!
//! Reads `board-configs/zcu106.toml` (or the file named by
//! `CLIO_BOARD_CONFIG`) with `clio-config`, then writes into `OUT_DIR`:
//! - `memory.x`: the RAM region (`regions.firmware`) and stack layout,
//!   included by `link.x`;
//! - `board.rs`: the resolved config as `BOARD` (`clio_config::to_rust_source`),
//!   its hash, the board name, core count, stack size, and the contents of
//!   the `.clio_manifest` section.
//!
//! It also passes the linker scripts and `--build-id=sha1` to the linker, so
//! `cargo build --manifest-path firmware-arm/image/Cargo.toml --target
//! aarch64-unknown-none` works from any directory without `.cargo/config.toml`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs, process};

use clio_config::{BoardConfig, Region};

/// Cores in the ZynqMP APU cluster (Cortex-A53 × 4).
const NUM_CORES: u32 = 4;
/// Stack bytes per core.
const STACK_SIZE_PER_CORE: u64 = 64 * 1024;
/// Smallest firmware region accepted: stacks plus room for the image.
const MIN_FIRMWARE_BYTES: u64 = STACK_SIZE_PER_CORE * NUM_CORES as u64 + 256 * 1024;
/// MMU block size (src/mmu.rs).
const BLOCK_2M: u64 = 2 << 20;
/// End of the range the MMU maps (src/mmu.rs).
const MAPPED_LIMIT: u64 = 4 << 30;

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    process::exit(1);
}

/// The board config: `CLIO_BOARD_CONFIG` or the ZCU106's. Cargo runs this
/// script in the firmware's directory, so a relative path is tried there and
/// then from the repository root (where the READMEs' commands are typed).
fn config_path(manifest_dir: &Path) -> PathBuf {
    let Some(p) = env::var_os("CLIO_BOARD_CONFIG").map(PathBuf::from) else {
        return manifest_dir.join("../../board-configs/zcu106.toml");
    };
    if p.is_absolute() {
        return p;
    }
    let tries = [manifest_dir.join(&p), manifest_dir.join("../..").join(&p)];
    match tries.iter().find(|t| t.is_file()) {
        Some(t) => t.clone(),
        None => fail(&format!(
            "CLIO_BOARD_CONFIG={}: no such file in {} or in the repository root {} (give an absolute path, or one from the repository root)",
            p.display(),
            manifest_dir.display(),
            manifest_dir.join("../..").display()
        )),
    }
}

fn load_config(path: &Path) -> BoardConfig {
    // The error names the file and the dotted key.
    clio_config::load(path).unwrap_or_else(|e| fail(&e.to_string()))
}

/// Checks the firmware's own requirements on the layout (the config crate
/// validated the board-wide invariants).
fn check(cfg: &BoardConfig, path: &Path) {
    let Region { base, size } = cfg.regions.firmware;
    let at = |key: &str, why: &str| -> ! {
        fail(&format!("board config {}: `{key}` {why}", path.display()))
    };
    if base % 4096 != 0 {
        at(
            "regions.firmware.base",
            &format!("= {base:#x} must be 4 KiB aligned"),
        );
    }
    if size < MIN_FIRMWARE_BYTES {
        at(
            "regions.firmware.size",
            &format!("= {size} is below the {MIN_FIRMWARE_BYTES} bytes the image needs (stacks for {NUM_CORES} cores + code)"),
        );
    }
    // src/mmu.rs identity-maps the low 4 GiB with 2 MiB blocks and marks
    // the ring region non-cacheable block by block.
    let block_aligned = |r: Region| r.base % BLOCK_2M == 0 && r.size % BLOCK_2M == 0;
    if !block_aligned(cfg.dram.region()) {
        at(
            "dram",
            "base and size must be multiples of 2 MiB (MMU block size)",
        );
    }
    if cfg.dram.region().end() > MAPPED_LIMIT {
        at(
            "dram",
            "must end at or below 4 GiB (the range the MMU maps)",
        );
    }
    if !block_aligned(cfg.regions.rings) {
        at(
            "regions.rings",
            "base and size must be multiples of 2 MiB (mapped non-cacheable by 2 MiB blocks)",
        );
    }
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let path = config_path(&manifest_dir);
    println!("cargo:rerun-if-env-changed=CLIO_BOARD_CONFIG");
    println!("cargo:rerun-if-changed={}", path.display());
    // A board file may inherit others beside it.
    if let Some(dir) = path.parent() {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    println!("cargo:rerun-if-changed=link.x");
    // defmt compiles out every level below DEFMT_LOG (default: error only);
    // the banner and bring-up messages are info.
    println!("cargo:rerun-if-env-changed=DEFMT_LOG");
    let level = env::var("DEFMT_LOG").unwrap_or_else(|_| "info".to_string());
    println!("cargo:rustc-env=DEFMT_LOG={level}");

    let cfg = load_config(&path);
    check(&cfg, &path);

    let Region {
        base: fw_base,
        size: fw_size,
    } = cfg.regions.firmware;
    let memory_x = format!(
        "/* Generated by build.rs from {} — do not edit. */\n\
         MEMORY\n{{\n  RAM (rwx) : ORIGIN = {fw_base:#x}, LENGTH = {fw_size:#x}\n}}\n\
         _stack_size_per_core = {STACK_SIZE_PER_CORE:#x};\n\
         _num_cores = {NUM_CORES};\n",
        path.display()
    );
    write(&out.join("memory.x"), &memory_x);

    let board_name = cfg.board.name.as_str();
    if !board_name.is_ascii() {
        fail(&format!(
            "board config {}: `board.name` must be ASCII for the manifest",
            path.display()
        ));
    }
    let config_hash = format!("{:016x}", cfg.config_hash());
    let manifest = format!(
        "board={board_name}\nconfig_hash={config_hash}\nversion={}\nfirmware_base={fw_base:#x}\nfirmware_size={fw_size:#x}\n",
        env::var("CARGO_PKG_VERSION").expect("set by cargo"),
    );
    let mut board = String::new();
    let _ = writeln!(
        board,
        "// Generated by build.rs from {} — do not edit.\n",
        path.display()
    );
    board.push_str(&clio_config::to_rust_source(&cfg));
    let _ = writeln!(
        board,
        "/// Hash of the resolved board config, hex (`BoardConfig::config_hash`).\n\
         pub const CONFIG_HASH: &str = {config_hash:?};"
    );
    let _ = writeln!(
        board,
        "/// Board name (`board.name`).\npub const BOARD_NAME: &str = {board_name:?};"
    );
    let _ = writeln!(
        board,
        "/// Cores started (the APU cluster).\npub const NUM_CORES: u32 = {NUM_CORES};"
    );
    let _ = writeln!(
        board,
        "/// Stack bytes per core.\npub const STACK_SIZE_PER_CORE: u32 = {STACK_SIZE_PER_CORE};"
    );
    let _ = writeln!(
        board,
        "/// Contents of the `.clio_manifest` section (`key=value` lines).\n\
         pub const MANIFEST: &[u8; {}] = b{:?};",
        manifest.len(),
        manifest
    );
    write(&out.join("board.rs"), &board);

    fs::copy(manifest_dir.join("link.x"), out.join("link.x"))
        .unwrap_or_else(|e| fail(&format!("copying link.x: {e}")));
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
    println!("cargo:rustc-link-arg-bins=--build-id=sha1");
    // Segments are placed by the linker script; page-align them in the file
    // at 4 KiB (the MMU granule) rather than lld's 64 KiB default.
    println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
}

fn write(path: &Path, contents: &str) {
    // Leave an unchanged file alone so dependants are not rebuilt.
    if fs::read_to_string(path).ok().as_deref() != Some(contents) {
        fs::write(path, contents)
            .unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
    }
}
