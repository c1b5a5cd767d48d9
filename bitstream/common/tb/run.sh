#!/usr/bin/env bash
# Checks of the glue both board tops share (seconds): verilator --lint-only
# -Wall of each module in bitstream/common and its cocotb bench (Icarus).
# Called by ci/suites/30-bitstream.sh; exits non-zero on any failure (77 when
# a tool is missing).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
common="$(cd "$here/.." && pwd)"
export PATH="$PATH:$HOME/.local/bin"

for tool in verilator iverilog make cocotb-config; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is not installed: cannot check bitstream/common" >&2
        exit 77
    fi
done

failures=()
for f in "$common"/*.sv; do
    m="$(basename "$f" .sv)"
    if ! out=$(timeout 120 verilator --lint-only -Wall "$f" --top-module "$m" 2>&1); then
        echo "$out" | head -20
        failures+=("lint $m")
    fi
    if [ ! -d "$here/$m" ]; then
        failures+=("no bench for $m")
        continue
    fi
    rm -rf "$here/$m/sim_build" "$here/$m/results.xml"
    # The async FIFO three times: plain, frame mode, frame mode with drop-when-full.
    variants=("")
    [ "$m" = clio_axis_async_fifo ] && variants+=("FRAME_FIFO=1" "FRAME_FIFO=1 DROP_WHEN_FULL=1")
    for arg in "${variants[@]}"; do
        log="$(mktemp)"
        # shellcheck disable=SC2086
        if ! make -C "$here/$m" SIM=icarus $arg > "$log" 2>&1; then
            grep -E "FAIL|Error|assert" "$log" | head -10
            failures+=("bench $m $arg")
        fi
        grep -E "^\s*\*\* TESTS=" "$log" | sed "s/^ */  $m $arg /" | sed 's/  */ /g'
        rm -f "$log"
    done
    rm -rf "$here/$m/sim_build" "$here/$m/results.xml"
done

if [ ${#failures[@]} -ne 0 ]; then
    echo "bitstream/common checks FAILED:"
    for f in "${failures[@]}"; do echo "  $f"; done
    exit 1
fi
echo "bitstream/common checks passed"
