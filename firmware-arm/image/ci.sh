#!/usr/bin/env bash
# Firmware image CI: builds clio-firmware for aarch64-unknown-none (no
# warnings, size reported), boots the lab image in QEMU's ZynqMP model (no
# PL there: it must read the CSU's PCAP_STATUS, find PL_DONE clear, log it
# and stop before touching fastpath.regs_base, without faulting), boots the `qemu`
# variant into its ring service, boots it in test mode
# (banner with the ELF's build id, all four cores online, exit status 0, at
# EL1, EL2 and EL3 entry; at EL3 every core logs CPUECTLR_EL1.SMPEN and
# CNTFRQ_EL0 set and cores 1-3 a PMU power-up request), then boots the fault-test build and checks that the
# data abort is reported with its syndrome and the run exits with status 3.
#
# Environment:
#   FWLOG=path        use this fwlog binary instead of building clio-fwlog
#   CARGO_TARGET_DIR  where cargo builds (default: each workspace's target/)
#   QEMU_TIMEOUT=60   seconds before a QEMU run counts as hung
# Exits 77 (skipped) when qemu-system-aarch64 is not installed.
set -euo pipefail

IMAGE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$IMAGE_DIR/../.." && pwd)"
TARGET=aarch64-unknown-none
TARGET_DIR="${CARGO_TARGET_DIR:-$IMAGE_DIR/target}"
ELF="$TARGET_DIR/$TARGET/release/clio-firmware"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/clio-fw-ci.XXXXXX")"
QEMU_TIMEOUT="${QEMU_TIMEOUT:-60}"
EXIT_FAULT=3
export QEMU_AUDIO_DRV=none
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

if ! command -v qemu-system-aarch64 >/dev/null; then
    echo "qemu-system-aarch64 not installed (Debian: qemu-system-arm); skipping" >&2
    exit 77
fi

# Host decoder.
if [[ -z "${FWLOG:-}" ]]; then
    (cd "$ROOT" && cargo build -q -p clio-fwlog --bin fwlog)
    FWLOG="${CARGO_TARGET_DIR:-$ROOT/target}/debug/fwlog"
fi
[[ -x "$FWLOG" ]] || fail "fwlog binary $FWLOG missing"

# build NAME [FEATURES]: release build, warnings are errors; copies the ELF
# to $WORK/NAME.elf.
build() {
    local name=$1 features=${2:-} log="$WORK/$1.build.log"
    local args=(build --manifest-path "$IMAGE_DIR/Cargo.toml" --target "$TARGET" --release)
    [[ -n "$features" ]] && args+=(--features "$features")
    # Force the crate to recompile so its warnings are shown on every run.
    touch "$IMAGE_DIR/src/main.rs"
    if ! (cd "$ROOT" && cargo "${args[@]}") >"$log" 2>&1; then
        cat "$log" >&2
        fail "build $name"
    fi
    if grep -E '^(warning|error)' "$log" >/dev/null; then
        cat "$log" >&2
        fail "build $name has warnings"
    fi
    cp "$ELF" "$WORK/$name.elf"
}

# boot NAME MACHINE_OPTS: boots $WORK/NAME.elf; the UART goes to
# $WORK/NAME.uart, the decoded log to $WORK/NAME.log; prints the exit status.
boot() {
    local name=$1 opts=$2 rc=0 start end
    start=$(date +%s%N)
    timeout "$QEMU_TIMEOUT" qemu-system-aarch64 -M "xlnx-zcu102$opts" -display none \
        -monitor none -semihosting -serial "file:$WORK/$name.uart" \
        -kernel "$WORK/$name.elf" >"$WORK/$name.qemu.log" 2>&1 || rc=$?
    end=$(date +%s%N)
    [[ $rc -ne 124 || "$name" == release* ]] || fail "$name: QEMU still running after ${QEMU_TIMEOUT}s (hang)"
    "$FWLOG" decode --elf "$WORK/$name.elf" "$WORK/$name.uart" >"$WORK/$name.log" \
        2>"$WORK/$name.decode.err" || fail "$name: decoding the UART capture failed: $(cat "$WORK/$name.decode.err")"
    echo "--- $name (QEMU -M xlnx-zcu102$opts): exit $rc, $(((end - start) / 1000000)) ms wall" >&2
    sed 's/^/    /' "$WORK/$name.log" >&2
    echo "$rc"
}

expect_line() {
    local name=$1 pattern=$2
    grep -E -- "$pattern" "$WORK/$name.log" >/dev/null ||
        fail "$name: no log line matches /$pattern/"
}

# json_field FILE KEY: a string or number field of fwlog's manifest JSON.
json_field() {
    sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1"
}

echo "== format and lints"
(cd "$ROOT" && cargo fmt --manifest-path "$IMAGE_DIR/Cargo.toml" --check) || fail "cargo fmt --check"
for features in "" "qemu" "test-mode" "fault-test"; do
    (cd "$ROOT" && cargo clippy -q --manifest-path "$IMAGE_DIR/Cargo.toml" --target "$TARGET" \
        --release ${features:+--features "$features"} -- -D warnings) ||
        fail "clippy (features: ${features:-none})"
done

echo "== release image"
build release ""
"$FWLOG" manifest --elf "$WORK/release.elf" >"$WORK/release.json"
echo "image size: $(json_field "$WORK/release.json" size) bytes loaded," \
    "$(json_field "$WORK/release.json" mem_size) bytes in memory with .bss and stacks"
# fastpath.regs_base of zcu106.toml as the firmware prints it (0x... lowercase).
regs_base=$(sed -n 's/^regs_base *= *\(0x[0-9A-Fa-f_]*\).*/\1/p' "$ROOT/board-configs/zcu106.toml" | tr -d _)
[[ -n "$regs_base" ]] || fail "no fastpath.regs_base in board-configs/zcu106.toml"
regs_base=$(printf '0x%x' "$regs_base")
# The lab image never exits. Its ring service first checks that the PL is
# configured (on a board an access to an unconfigured PL port never
# completes); QEMU's xlnx-zcu102 has no PL and reads PCAP_STATUS as 0, so
# the image must say so and stop there (halted, no exception, the register
# block never read). The ID/VERSION checks behind it are tested on a fake
# bus in firmware-arm/slowpath/tests/fastpath_regs.rs.
rc=$(QEMU_TIMEOUT=5 boot release "" 2>/dev/null || true)
expect_line release "INFO  clio-firmware .* build $(json_field "$WORK/release.json" build_id) "
expect_line release "INFO  cores online 0b1111$"
expect_line release "INFO  fast-path registers at $regs_base: programmed once board DRAM is formatted$"
expect_line release "ERROR PL not configured: CSU PCAP_STATUS \\(0xffca3010\\) reads 0x00000000, PL_DONE clear; .* fast-path registers at $regs_base not touched$"
if grep -E "exception|cleared|fast-path register ID|fast path at" "$WORK/release.log" >/dev/null; then
    fail "release: lab image went past the failed PL_DONE check or faulted"
fi

echo "== release image for QEMU (feature qemu)"
build release-qemu qemu
# It skips the register block and starts the ring service, whose first step
# clears the page table. (Clearing the ZCU106's 1.9 GiB data region takes
# QEMU far longer than the board; the whole service runs in
# ci/suites/40-cosim-qemu.sh on the 256 MiB emulator config.)
rc=$(QEMU_TIMEOUT=10 boot release-qemu "" 2>/dev/null || true)
expect_line release-qemu "INFO  cores online 0b1111$"
expect_line release-qemu "INFO  fast-path registers skipped: built with feature qemu \\(no PL\\)$"
expect_line release-qemu "INFO  cleared page table 0x[0-9a-f]+\\+0x[0-9a-f]+ in [0-9]+ us"

echo "== boot test"
build test test-mode
"$FWLOG" manifest --elf "$WORK/test.elf" >"$WORK/test.json"
build_id=$(json_field "$WORK/test.json" build_id)
config_hash=$(json_field "$WORK/test.json" config_hash)
[[ ${#build_id} -ge 16 ]] || fail "test image has no build id (manifest: $(cat "$WORK/test.json"))"
for entry in ":1" ",virtualization=on:2" ",secure=on:3"; do
    opts=${entry%:*}
    el=${entry##*:}
    rc=$(boot test "$opts")
    [[ $rc -eq 0 ]] || fail "boot test (entry EL$el) exited $rc, expected 0"
    expect_line test "INFO  clio-firmware .* build $build_id config $config_hash: entered EL$el, running EL1"
    expect_line test "cores online 0b1111$"
    expect_line test "boot test passed"
    if [[ $el -eq 3 ]]; then
        # No firmware below us: the image must have set SMPEN and CNTFRQ on
        # every core itself (QEMU ignores the CPUECTLR write, hence "-> 0x..").
        counter_hz=$(sed -n 's/^pub const COUNTER_HZ: u64 = \([0-9_]*\);/\1/p' "$IMAGE_DIR/src/board.rs" | tr -d _)
        expect_line test "INFO  EL3 setup core 0: CPUECTLR_EL1 0x[0-9a-f]+ -> 0x[0-9a-f]*[4-7cdef][0-9a-f] \\(SMPEN set\\), CNTFRQ_EL0 [0-9]+ -> $counter_hz Hz"
        for c in 1 2 3; do
            expect_line test "INFO  core $c online \\(entered EL3; CPUECTLR_EL1 0x[0-9a-f]+ -> 0x[0-9a-f]+ SMPEN set, CNTFRQ_EL0 [0-9]+ -> $counter_hz Hz\\)"
            expect_line test "INFO  core $c: PMU power-up done after [0-9]+ status reads, released"
        done
    fi
    if grep -E " (WARN|ERROR) " "$WORK/test.log" >/dev/null; then
        fail "boot test (entry EL$el) logged warnings or errors"
    fi
    banner_us=$(awk '/clio-firmware/ { print $1; exit }' "$WORK/test.log")
    done_us=$(awk '/boot test passed/ { print $1; exit }' "$WORK/test.log")
    echo "boot at EL$el entry: banner at ${banner_us}s, test done at ${done_us}s (guest counter)"
done

echo "== fault test"
build fault fault-test
rc=$(boot fault "")
[[ $rc -eq $EXIT_FAULT ]] || fail "fault test exited $rc, expected $EXIT_FAULT"
expect_line fault "ERROR exception on core 0: sync, current EL with SP_ELx; ESR_EL1=0x96000005 EC=0x25 \(data abort, same EL\) ISS=0x5 FAR_EL1=0x0000000100000000 ELR_EL1=0x[0-9a-f]{16}"
expect_line fault "ERROR data abort: DFSC=0x05 WnR=false FAR valid=true"

echo "firmware image CI: all checks passed"
