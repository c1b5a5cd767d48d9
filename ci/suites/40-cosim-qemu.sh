#!/usr/bin/env bash
# Co-simulation of the slow path in QEMU: builds the firmware image for
# board-configs/emulator.toml, boots it in QEMU's ZynqMP model with the guest
# RAM in a shared-memory file, and runs host-sdk/emulator/tests/qemu_cosim.rs
# against it: alloc, write and read back across pages, first-touch faults,
# free, two PIDs isolated, and a corrupt RX descriptor that the firmware
# counts while it keeps serving; then host-sdk/emulator/tests/qemu_idle.rs:
# the served QEMU board's idle CPU (this process and QEMU) stays bounded.
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

echo "== offloads in the firmware: OFFLOAD_CALL over the rings, answered as the emulator answers it"
timeout 300 cargo test -q -p clio-emu --test qemu_offload -- --test-threads=1
timeout 300 cargo test -q -p clio-kv --test qemu
# Clio-DF's select/aggregate in the caller's address space, from the SDK's
# DfClient: the image in QEMU and the same code on the emulator's model board.
timeout 300 cargo test -q -p clio-df --test qemu

echo "== an idle QEMU-backed board idles (host < 5 % of a core, QEMU < 25 %) and wakes on a request"
timeout 300 cargo test -q -p clio-emu --test qemu_idle -- --nocapture

echo "== the SDK against the QEMU-backed board: clio sim --slow-path qemu, then bringup and info"
# Debug builds: the workspace tests already built them.
cargo build -q -p clio-cli -p clio-fwlog
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
"$BIN/fwlog" manifest --elf "$CLIO_COSIM_IMAGE" --out "$IMAGE_TARGET_DIR/manifest.json"
PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SIM_LOG="$IMAGE_TARGET_DIR/sim.log"
QEMU_AUDIO_DRV=none "$BIN/clio" sim --board "$BOARD" --slow-path qemu --image "$CLIO_COSIM_IMAGE" \
    --listen "127.0.0.1:$PORT" >"$SIM_LOG" 2>&1 &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true' EXIT
# The board is ready when the firmware said so (the sim prints it); bounded wait.
for _ in $(seq 1 120); do
    grep -q "ready in" "$SIM_LOG" && break
    kill -0 "$SIM_PID" 2>/dev/null || { cat "$SIM_LOG" >&2; echo "FAIL: clio sim exited" >&2; exit 1; }
    sleep 0.5
done
grep -q "ready in" "$SIM_LOG" || { cat "$SIM_LOG" >&2; echo "FAIL: firmware not ready" >&2; exit 1; }
timeout 300 "$BIN/clio" bringup --addr "127.0.0.1:$PORT" --config "$BOARD" --mem-test-bytes 4194304
timeout 60 "$BIN/clio" info --addr "127.0.0.1:$PORT" --config "$BOARD" --manifest "$IMAGE_TARGET_DIR/manifest.json"
kill "$SIM_PID"

echo "== ring round trip and alloc latency: slow path in QEMU next to in process"
timeout 300 "$BIN/clio" bench slowpath --board "$BOARD" --slow-path qemu --image "$CLIO_COSIM_IMAGE" --quick

if [[ "${COSIM_BENCH:-0}" == 1 ]]; then
    echo "== slow-path benchmark (QEMU vs in-process)"
    cargo run -q --release -p clio-emu --example slowpath_bench -- \
        --image "$CLIO_COSIM_IMAGE" --board "$BOARD" --iterations 500
fi
echo "co-simulation: all checks passed"
