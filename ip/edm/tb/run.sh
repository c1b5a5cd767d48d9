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
(cd "$root" && cargo build -q -p edm --bin edm-vectors --bin edm-cosim)
vec="$CARGO_TARGET_DIR/debug/edm-vectors"
cosim="$CARGO_TARGET_DIR/debug/edm-cosim"

echo "lint: verilator --lint-only -Wall"
rtl="$edm/rtl"
verilator --lint-only -Wall "$rtl/edm_pim_sched.sv"
for lanes in 1 4; do
    verilator --lint-only -Wall -GLANES=$lanes --top-module edm_pim_sched_ring "$rtl/edm_pim_sched_ring_port.sv" \
        "$rtl/edm_pim_sched_ring.sv"
done
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
verilator --lint-only -Wall --top-module edm_host_top "$rtl/edm_pkg.sv" "$rtl/edm_msg_encoder.sv" \
    "$rtl/edm_msg_decoder.sv" "$rtl/edm_rx_classify.sv" "$rtl/edm_rx_demux.sv" "$rtl/edm_tx_mux.sv" \
    "$rtl/edm_host_engine.sv" "$rtl/edm_host_top.sv"
verilator --lint-only -Wall --top-module edm_switch_top "$rtl/edm_pkg.sv" "$rtl/edm_rx_classify.sv" \
    "$rtl/edm_rx_demux.sv" "$rtl/edm_tx_mux.sv" "$rtl/edm_sw_forward.sv" "$rtl/edm_pim_sched.sv" \
    "$rtl/edm_switch_top.sv"

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
    grep -h 'matched the\|per-message latency' "$work/$dir.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
    grep -h 'TESTS=' "$work/$dir.log" | sed 's/^ *\*\* *//; s/ *\*\*$//' | awk '{print "  " $1, $2, $3}'
}

run_bench edm_scrambler /dev/null DESCRAMBLE=0
run_bench edm_scrambler /dev/null DESCRAMBLE=1
run_bench edm_link_monitor /dev/null
run_bench edm_link_monitor /dev/null WINDOW=128 THRESHOLD=8

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
# The scalable scheduler (queues in memories, 3 * ceil(PORTS / LANES) + 4 cycles per
# iteration) on the same vectors: every request and match equal to the model's.
for cfg in "4 6 0 256 1" "8 6 1 128 4" "5 4 0 64 2"; do
    set -- $cfg
    run_bench edm_pim_sched_ring "$work/pim-$1.txt" PORTS="$1" DEPTH="$2" SRPT="$3" CHUNK="$4" LANES="$5"
done
"$vec" pim 16 3 1 256 120 "$seed" "$work/pim-16.txt"
run_bench edm_pim_sched_ring "$work/pim-16.txt" PORTS=16 DEPTH=3 SRPT=1 CHUNK=256 LANES=4
run_bench edm_pim_sched_ring "$work/conv-8.txt" PORTS=8 DEPTH=2 LANES=2
grep -h 'per maximal matching' "$work/edm_pim_sched_ring.log" | sed 's/^ *[0-9.]*ns *INFO *//'

# Switch top and host top, each on its own, then the whole RTL fabric (hosts around the
# switch) against the Rust fabric model on random read/write mixes with frames both ways.
run_bench edm_switch_top /dev/null
run_bench edm_host_top /dev/null
# Unloaded (one request at a time, `apart`): every message's latency within 2 % of the
# model's (the bench's default EDM_LAT_TOL).
"$cosim" 3 16 0 "$seed" "$work/cosim-idle.txt" apart
run_bench edm_fabric "$work/cosim-idle.txt" PORTS=3
# PORTS REQUESTS FRAMES [SPAN]: a moderate load, then a burst that fills every queue, both on
# this run's seed (printed above; replay a failure with EDM_SEED=SEED tb/run.sh), each
# message's latency within 2 % of the model's too.
"$cosim" 4 120 30 "$seed" "$work/cosim-4.txt"
run_bench edm_fabric "$work/cosim-4.txt" PORTS=4
echo "burst: edm-cosim 6 150 20 $seed OUT 60"
"$cosim" 6 150 20 "$seed" "$work/cosim-6.txt" 60
run_bench edm_fabric "$work/cosim-6.txt" PORTS=6
# A burst that once showed an RTL bound the model lacks (an issued-message FIFO smaller than
# the table held messages back; 2 of 148 latencies off), replayed on every run.
"$cosim" 6 150 20 1795728586 "$work/cosim-6-pinned.txt" 60
run_bench edm_fabric "$work/cosim-6-pinned.txt" PORTS=6
# A burst that hung the model and the RTL alike (a NULL answer completed a read while the
# switch still held its other chunks; a later request was refused and lost), replayed too.
"$cosim" 6 150 20 1795747458 "$work/cosim-6-null.txt" 60
run_bench edm_fabric "$work/cosim-6-null.txt" PORTS=6

# Synthesis smoke test (the full runs are recorded in README.md).
"$edm/synth/synth.sh" 2 2 "$work/synth.json" > "$work/synth.log" 2>&1 || { cat "$work/synth.log"; echo "FAILED: synth"; exit 1; }
tail -n 1 "$work/synth.log"
"$edm/synth/synth.sh" -m edm_pim_sched_ring 4 6 "$work/synth-ring.json" > "$work/synth-ring.log" 2>&1 \
    || { cat "$work/synth-ring.log"; echo "FAILED: synth edm_pim_sched_ring"; exit 1; }
tail -n 1 "$work/synth-ring.log"
echo "edm rtl: all benches passed"
