#!/usr/bin/env bash
# Run every EDM RTL bench (cocotb + Icarus, vectors from the Rust models) and the lint.
# Exits non-zero on the first failure. Seeds are printed; set EDM_SEED to replay one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
edm="$(dirname "$here")"
root="$(cd "$edm/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
seed="${EDM_SEED:-$(date +%s)}"
export EDM_SEED="$seed"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "edm rtl: seed $seed"
(cd "$root" && cargo build -q -p edm --bin edm-vectors)
vec="$CARGO_TARGET_DIR/debug/edm-vectors"

echo "lint: verilator --lint-only -Wall"
rtl="$edm/rtl"
verilator --lint-only -Wall "$rtl/edm_pim_sched.sv"
verilator --lint-only -Wall "$rtl/edm_scrambler.sv"
verilator --lint-only -Wall "$rtl/edm_link_monitor.sv"
verilator --lint-only -Wall "$rtl/edm_pkg.sv" "$rtl/edm_tx_mux.sv"
verilator --lint-only -Wall "$rtl/edm_pkg.sv" "$rtl/edm_rx_classify.sv"
verilator --lint-only -Wall "$rtl/edm_pkg.sv" "$rtl/edm_sw_forward.sv"
verilator --lint-only -Wall "$rtl/edm_pkg.sv" "$rtl/edm_msg_encoder.sv"
verilator --lint-only -Wall "$rtl/edm_pkg.sv" "$rtl/edm_msg_decoder.sv"
verilator --lint-only -Wall --top-module edm_rx_demux "$rtl/edm_pkg.sv" "$rtl/edm_rx_classify.sv" "$rtl/edm_rx_demux.sv"
verilator --lint-only -Wall --top-module edm_phy_shim "$rtl/edm_pkg.sv" "$rtl/edm_tx_mux.sv" "$rtl/edm_scrambler.sv" \
    "$rtl/edm_link_monitor.sv" "$rtl/edm_rx_classify.sv" "$rtl/edm_rx_demux.sv" "$rtl/edm_phy_shim.sv"

run_bench() {
    local dir="$1"; shift
    local vectors="$1"; shift
    rm -rf "$here/$dir/sim_build" "$here/$dir/results.xml"
    if ! make -s -C "$here/$dir" EDM_VECTORS="$vectors" EDM_SEED="$seed" "$@" > "$work/$dir.log" 2>&1 \
        || ! grep -q 'FAIL=0' "$work/$dir.log"; then
        cat "$work/$dir.log"
        echo "FAILED: $dir $* (seed $seed, vectors $vectors)"
        exit 1
    fi
    grep -h 'matched the' "$work/$dir.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
    grep -h 'TESTS=' "$work/$dir.log" | sed 's/^ *\*\* *//; s/ *\*\*$//' | awk '{print "  " $1, $2, $3}'
}

run_bench edm_scrambler /dev/null DESCRAMBLE=0
run_bench edm_scrambler /dev/null DESCRAMBLE=1
run_bench edm_link_monitor /dev/null

"$vec" enc 400 "$seed" "$work/enc.txt"
run_bench edm_msg_encoder "$work/enc.txt"
"$vec" dec 600 "$seed" "$work/dec.txt"
run_bench edm_msg_decoder "$work/dec.txt"

"$vec" rx 4000 "$seed" "$work/rx.txt"
run_bench edm_rx_classify "$work/rx.txt"
run_bench edm_rx_demux "$work/rx.txt"

for fair in 1 0; do
    "$vec" tx 4000 "$fair" "$seed" "$work/tx-$fair.txt"
    run_bench edm_tx_mux "$work/tx-$fair.txt" FAIR="$fair"
done

# Loopback through the whole shim: clean, then with a burst of wire corruption that must
# disable the link exactly when the model does.
"$vec" phy 3000 1 "$seed" 1000000 0 "$work/phy.txt"
run_bench edm_phy_shim "$work/phy.txt" FAIR=1
"$vec" phy 2000 0 "$seed" 900 20 "$work/phy-bad.txt"
run_bench edm_phy_shim "$work/phy-bad.txt" FAIR=0

for ports in 4 3 6; do
    "$vec" fwd "$ports" 3000 "$seed" "$work/fwd-$ports.txt"
    run_bench edm_sw_forward "$work/fwd-$ports.txt" PORTS="$ports"
done

for cfg in "4 6 0 256" "8 6 1 128" "5 4 0 64"; do
    set -- $cfg
    "$vec" pim "$1" "$2" "$3" "$4" 300 "$seed" "$work/pim-$1.txt"
    run_bench edm_pim_sched "$work/pim-$1.txt" PORTS="$1" DEPTH="$2" SRPT="$3" CHUNK="$4"
done
# Iterations per maximal matching, in RTL (3 cycles each), checked against the model.
for ports in 4 8; do
    "$vec" pimconv "$ports" 30 "$seed" "$work/conv-$ports.txt"
    run_bench edm_pim_sched "$work/conv-$ports.txt" PORTS="$ports" DEPTH=2
    grep -h 'per maximal matching' "$work/edm_pim_sched.log" | sed 's/^ *[0-9.]*ns *INFO *//'
done

# Synthesis smoke test (the full runs are recorded in README.md).
"$edm/synth/synth.sh" 2 2 "$work/synth.json" > "$work/synth.log" 2>&1 || { cat "$work/synth.log"; echo "FAILED: synth"; exit 1; }
tail -n 1 "$work/synth.log"
echo "edm rtl: all benches passed"
