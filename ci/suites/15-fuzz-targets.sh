#!/usr/bin/env bash
# The cargo-fuzz targets of every parser still build (they run under nightly with
# `cargo fuzz run`; their contract also runs on stable as property tests).
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"
cargo check --quiet --manifest-path host-sdk/wire/fuzz/Cargo.toml --bins
echo "fuzz targets: $(grep -c '^\[\[bin\]\]' host-sdk/wire/fuzz/Cargo.toml) build"
