#!/usr/bin/env bash
# Co-simulation of the slow path in QEMU: builds the firmware image for
# board-configs/emulator.toml, boots it in QEMU's ZynqMP model with the guest
# RAM in a shared-memory file, and runs host-sdk/emulator/tests/qemu_cosim.rs
# against it: alloc, write and read back across pages, first-touch faults,
# free, two PIDs isolated, and a corrupt RX descriptor that the firmware
# counts while it keeps serving.
#
# Environment:
#   CARGO_TARGET_DIR  the image builds in $CARGO_TARGET_DIR/cosim-image
#                     (default target/cosim-image), apart from the ZCU106 build
#   COSIM_BENCH=1     also run the slow-path benchmark (release build, JSON)
#   CI                set (CI=true): a missing qemu-system-aarch64 fails the suite
# Exits 77 (skipped) only when qemu-system-aarch64 is missing outside CI.
set -euo pipefail
ROOT="${CI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$ROOT"

if ! command -v qemu-system-aarch64 >/dev/null; then
    if [[ -n "${CI:-}" && "${CI}" != "false" && "${CI}" != "0" ]]; then
        echo "FAIL: qemu-system-aarch64 is required in CI (Debian package qemu-system-arm)" >&2
        exit 1
    fi
    echo "qemu-system-aarch64 not installed (Debian: qemu-system-arm); skipping" >&2
    exit 77
fi

BOARD="$ROOT/board-configs/emulator.toml"
IMAGE_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/cosim-image"
echo "== firmware image for $(basename "$BOARD")"
CLIO_BOARD_CONFIG="$BOARD" CARGO_TARGET_DIR="$IMAGE_TARGET_DIR" \
    cargo build -q --manifest-path firmware-arm/image/Cargo.toml --target aarch64-unknown-none --release
export CLIO_COSIM_IMAGE="$IMAGE_TARGET_DIR/aarch64-unknown-none/release/clio-firmware"
[[ -f "$CLIO_COSIM_IMAGE" ]] || { echo "FAIL: no image at $CLIO_COSIM_IMAGE" >&2; exit 1; }

echo "== co-simulation tests"
# Under CI the tests themselves refuse to skip when QEMU is missing.
timeout 600 cargo test -q -p clio-emu --test qemu_cosim -- --test-threads=1

if [[ "${COSIM_BENCH:-0}" == 1 ]]; then
    echo "== slow-path benchmark (QEMU vs in-process)"
    cargo run -q --release -p clio-emu --example slowpath_bench -- \
        --image "$CLIO_COSIM_IMAGE" --board "$BOARD" --iterations 500
fi
echo "co-simulation: all checks passed"
