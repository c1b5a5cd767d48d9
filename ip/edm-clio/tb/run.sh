#!/usr/bin/env bash
# The translator RTL against its model: lint, then the cocotb benches on vectors from
# the model: `edm-clio-vectors` (random H2C packets and the mapping's answer for each:
# the classify stage, edm_clio_xlate) and `edm-clio-chain-vectors` (random answers in
# the card's EDM memory and the packets the card delivers from each: the return
# stage, edm_clio_chain, tb/chain) and `edm-clio-req-vectors` (a card's random H2C
# packets and the records and EDM requests the model makes of them: the request
# stage, edm_clio_req, tb/req); then the co-simulation of the whole translator
# (edm_clio_card on an EDM host, the EDM switch and a memory node's EDM host, RTL)
# against the model on a random trace (`edm-clio-cosim`, tb/cosim).
# EDM_SEED replays a seed; EDM_CLIO_COUNT sets the number of packets (default 3000).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
seed="${EDM_SEED:-$(date +%s)}"
count="${EDM_CLIO_COUNT:-3000}"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$here/sim_build" "$here/results.xml" "$here/chain/sim_build" "$here/chain/results.xml" "$here/req/sim_build" "$here/req/results.xml" "$here/cosim/sim_build" "$here/cosim/results.xml"' EXIT
echo "edm-clio rtl: seed $seed, $count packets"
verilator --lint-only -Wall "$root/ip/edm/rtl/edm_pkg.sv" "$here/../rtl/edm_clio_xlate.sv"
verilator --lint-only -Wall "$root/ip/edm/rtl/edm_pkg.sv" "$here/../rtl/edm_clio_chain.sv"
verilator --lint-only -Wall --top-module edm_clio_card "$root/ip/edm/rtl/edm_pkg.sv" "$here"/../rtl/*.sv
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-vectors -- "$count" "$seed" "$work/vec.txt")
if ! make -s -C "$here" EDM_CLIO_VECTORS="$work/vec.txt" EDM_SEED="$seed" > "$work/log" 2>&1 \
    || ! grep -q 'FAIL=0' "$work/log"; then
    cat "$work/log"
    echo "FAILED: edm_clio_xlate (seed $seed)"
    exit 1
fi
grep -h 'matched the' "$work/log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
chains="$(( (count + 9) / 10 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-chain-vectors -- "$chains" "$seed" "$work/chain.txt")
if ! make -s -C "$here/chain" EDM_CLIO_CHAIN_VECTORS="$work/chain.txt" EDM_SEED="$seed" > "$work/chain.log" 2>&1 \
    || ! grep -q 'FAIL=0' "$work/chain.log"; then
    cat "$work/chain.log"
    echo "FAILED: edm_clio_chain (seed $seed)"
    exit 1
fi
grep -h 'matched the' "$work/chain.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
reqs="$(( (count + 9) / 10 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-req-vectors -- "$reqs" "$seed" 3 "$work/req.txt")
if ! make -s -C "$here/req" EDM_CLIO_REQ_VECTORS="$work/req.txt" EDM_SEED="$seed" > "$work/req.log" 2>&1 \
    || ! grep -q 'FAIL=0' "$work/req.log"; then
    cat "$work/req.log"
    echo "FAILED: edm_clio_req (seed $seed)"
    exit 1
fi
grep -h 'matched the' "$work/req.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
trace="$(( (count + 49) / 50 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-cosim -- "$trace" "$seed" "$work/cosim.txt")
if ! make -s -C "$here/cosim" EDM_CLIO_COSIM="$work/cosim.txt" EDM_SEED="$seed" > "$work/cosim.log" 2>&1 \
    || ! grep -q 'FAIL=0' "$work/cosim.log"; then
    cat "$work/cosim.log"
    echo "FAILED: edm_clio cosim (seed $seed)"
    exit 1
fi
grep -h 'matched the' "$work/cosim.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
echo "edm-clio rtl: passed"
