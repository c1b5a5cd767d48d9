#!/usr/bin/env bash
# Packages the release firmware image for a lab: builds clio-firmware for
# aarch64-unknown-none and writes OUT_DIR/clio-firmware.elf and
# OUT_DIR/manifest.json {elf, size, mem_size, entry, build_id, config_hash,
# board, version}, read from the ELF itself by `fwlog manifest`. `clio info`
# compares the manifest's build_id and config_hash with a board's boot banner.
#
# Usage: package.sh [OUT_DIR]   (default: firmware-arm/image/target/package)
# Environment: CLIO_BOARD_CONFIG (board file, default board-configs/zcu106.toml),
#              FWLOG (a prebuilt fwlog binary), CARGO_TARGET_DIR.
set -euo pipefail

IMAGE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$IMAGE_DIR/../.." && pwd)"
TARGET=aarch64-unknown-none
TARGET_DIR="${CARGO_TARGET_DIR:-$IMAGE_DIR/target}"
OUT_DIR="${1:-$IMAGE_DIR/target/package}"

(cd "$ROOT" && cargo build -q --manifest-path "$IMAGE_DIR/Cargo.toml" --target "$TARGET" --release)
if [[ -z "${FWLOG:-}" ]]; then
    (cd "$ROOT" && cargo build -q -p clio-fwlog --bin fwlog)
    FWLOG="${CARGO_TARGET_DIR:-$ROOT/target}/debug/fwlog"
fi

mkdir -p "$OUT_DIR"
cp "$TARGET_DIR/$TARGET/release/clio-firmware" "$OUT_DIR/clio-firmware.elf"
(cd "$OUT_DIR" && "$FWLOG" manifest --elf clio-firmware.elf --out manifest.json)
echo "packaged $OUT_DIR/clio-firmware.elf"
cat "$OUT_DIR/manifest.json"
