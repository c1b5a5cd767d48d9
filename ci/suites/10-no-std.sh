#!/usr/bin/env bash
# The no_std crates (wire formats, board config, slow path) build for the
# bare-metal firmware target with their default features.
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

target=aarch64-unknown-none
packages=(clio-wire clio-config clio-slowpath)
args=()
for p in "${packages[@]}"; do
    args+=(-p "$p")
done
cargo build --quiet --target "$target" "${args[@]}"
echo "built for $target: ${packages[*]}"
