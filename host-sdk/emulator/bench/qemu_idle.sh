#!/usr/bin/env bash
# Idle CPU of `clio sim --slow-path qemu` (issue #23, finding 3) and the
# bring-up latency under load, as quoted in host-sdk/emulator/README.md.
#
#   bench/qemu_idle.sh CLIO ELF [PORT]
#
# CLIO: a clio binary; ELF: the firmware image built for the emulator
# config (ci/suites/40-cosim-qemu.sh builds it). Starts the sim, measures
# utime+stime of the clio process and of QEMU from /proc/PID/stat over 5 s
# before any packet, runs `clio bringup` (its output, with the 64 B read
# p50, goes to stdout), then measures 5 s of idle again. BOARD (default
# `emulator`, the embedded config) names the board config for both.
set -euo pipefail
CLIO=$1
ELF=$2
PORT=${3:-47819}
BOARD=${BOARD:-emulator}
WINDOW=5
LOG=$(mktemp "${TMPDIR:-/tmp}/clio-idle.XXXXXX")
QEMU_AUDIO_DRV=none "$CLIO" sim --board "$BOARD" --slow-path qemu --image "$ELF" \
    --listen "127.0.0.1:$PORT" >"$LOG" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 240); do
    grep -q "ready in" "$LOG" && break
    kill -0 $SIM 2>/dev/null || { cat "$LOG" >&2; exit 1; }
    sleep 0.5
done
grep -q "ready in" "$LOG" || { cat "$LOG" >&2; echo "firmware not ready" >&2; exit 1; }
QEMU=$(pgrep -P $SIM -f qemu-system-aarch64 | head -1)
HZ=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
idle() {
    local a b a2 b2
    a=$(ticks $SIM); b=$(ticks "$QEMU")
    sleep $WINDOW
    a2=$(ticks $SIM); b2=$(ticks "$QEMU")
    awk -v what="$1" -v c=$((a2 - a)) -v q=$((b2 - b)) -v hz="$HZ" -v w=$WINDOW \
        'BEGIN { printf "%s: clio %.1f %% of a core, QEMU %.1f %%\n", what, 100 * c / (hz * w), 100 * q / (hz * w) }'
}
idle "idle before the first packet"
"$CLIO" bringup --addr "127.0.0.1:$PORT" --config "$BOARD" --mem-test-bytes 4194304 || true
idle "idle after bringup"
