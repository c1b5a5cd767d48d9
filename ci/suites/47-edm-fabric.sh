#!/usr/bin/env bash
# The Alveo path end to end on the emulated EDM rack (issue #15): `clio fabric
# --check` runs an SDK workload through every emulated U200 card, the EDM switch
# and the Clio memory nodes; then `clio info` and `clio bringup` talk to an
# emulated card through its XDMA stand-in nodes (xdma://). The rack steps the
# EDM cycle models in real time, so bring-up uses a small memory test and a
# p50 bound that fits a model running ~1000x slower than the hardware.
set -euo pipefail
ROOT="${CI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$ROOT"
cargo build -q -p clio-cli
clio="${CARGO_TARGET_DIR:-$ROOT/target}/debug/clio"
work="$(mktemp -d "${TMPDIR:-/tmp}/clio-fabric.XXXXXX")"
pid=""
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$clio" fabric --cards 3 --nodes 2 --check

# The translator's RTL, the memory node's front end RTL and the whole path in RTL
# against their model (cocotb + Icarus).
if command -v verilator >/dev/null && command -v cocotb-config >/dev/null; then
    EDM_CLIO_COUNT=2000 bash ip/edm-clio/tb/run.sh
else
    echo "verilator or cocotb missing: skipping ip/edm-clio/tb/run.sh"
fi

"$clio" fabric --cards 1 --nodes 1 --dir "$work/rack" --seconds 120 > "$work/fabric.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
    [[ -e "$work/rack/xdma0_user" ]] && break
    sleep 0.1
done
"$clio" info --addr "xdma://$work/rack/xdma0"
"$clio" bringup --addr "xdma://$work/rack/xdma0" --mem-test-bytes 65536 --max-p50-us 100000
echo "edm fabric: passed"
