#!/usr/bin/env bash
# The translator RTL against its model: lint, then the cocotb benches on vectors from
# the model: `edm-clio-vectors` (random H2C packets and the mapping's answer for each:
# the classify stage, edm_clio_xlate) and `edm-clio-chain-vectors` (random answers in
# the card's EDM memory and the packets the card delivers from each: the return
# stage, edm_clio_chain, tb/chain) and `edm-clio-req-vectors` (a card's random H2C
# packets and the records and EDM requests the model makes of them: the request
# stage, edm_clio_req, tb/req); then the co-simulation of the whole translator
# (edm_clio_card on an EDM host, the EDM switch and a memory node's EDM host, RTL)
# against the model on a random trace (`edm-clio-cosim`, tb/cosim); then the memory
# node's EDM front end (edm_clio_node, tb/node) against the model's `serve_record` on
# random records and fast-path answers (`edm-clio-node-vectors`); last, the whole
# path in RTL (card translator, EDM switch, node front end) against the model
# (`edm-clio-cosim ... clio`, tb/path).
# The request stage runs at two parameter points. Clock, reset and seed come from the
# ip-wide bench base (ip/tb_common), the translator's helpers from edm_clio_tb.py.
# EDM_SEED replays a seed; EDM_CLIO_COUNT sets the number of packets (default 3000).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
seed="${EDM_SEED:-$(date +%s)}"
count="${EDM_CLIO_COUNT:-3000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "edm-clio rtl: seed $seed, $count packets"
verilator --lint-only -Wall "$root/ip/edm/rtl/edm_pkg.sv" "$here/../rtl/edm_clio_xlate.sv"
verilator --lint-only -Wall "$root/ip/edm/rtl/edm_pkg.sv" "$here/../rtl/edm_clio_chain.sv"
verilator --lint-only -Wall --top-module edm_clio_card "$root/ip/edm/rtl/edm_pkg.sv" "$here"/../rtl/edm_clio_{xlate,req,chain,card}.sv
verilator --lint-only -Wall "$root/ip/edm/rtl/edm_pkg.sv" "$here/../rtl/edm_clio_node.sv"

# run_bench NAME DIR VAR=vectors [MAKE VAR=value ...]: one bench at one parameter point,
# built in its own directory under $work (so a new point never reuses an old build).
run_bench() {
    local name="$1" dir="$2"
    shift 2
    local build="$work/build-$name"
    if ! make -s -C "$dir" SIM_BUILD="$build" COCOTB_RESULTS_FILE="$build.xml" EDM_SEED="$seed" "$@" \
            > "$work/$name.log" 2>&1 || ! grep -q 'FAIL=0' "$work/$name.log"; then
        cat "$work/$name.log"
        echo "FAILED: $name $* (seed $seed)"
        exit 1
    fi
    grep -h 'matched the\|cycles per answer word' "$work/$name.log" | sed 's/^ *[0-9.]*ns *INFO *//' || true
}

(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-vectors -- "$count" "$seed" "$work/vec.txt")
run_bench edm_clio_xlate "$here" EDM_CLIO_VECTORS="$work/vec.txt"
chains="$(( (count + 9) / 10 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-chain-vectors -- "$chains" "$seed" "$work/chain.txt")
run_bench edm_clio_chain "$here/chain" EDM_CLIO_CHAIN_VECTORS="$work/chain.txt"
reqs="$(( (count + 9) / 10 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-req-vectors -- "$reqs" "$seed" 3 "$work/req.txt")
# Two parameter points: the bench's small staging memory, and the card's own
# (edm_clio_card's defaults: AW 18, records at word 65536, answers at 131072).
run_bench edm_clio_req "$here/req" EDM_CLIO_REQ_VECTORS="$work/req.txt"
run_bench edm_clio_req-card "$here/req" EDM_CLIO_REQ_VECTORS="$work/req.txt" AW=18 STAGE_WORD=65536 ANSWER_WORD=131072
trace="$(( (count + 49) / 50 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-cosim -- "$trace" "$seed" "$work/cosim.txt")
run_bench edm_clio_cosim "$here/cosim" EDM_CLIO_COSIM="$work/cosim.txt"
# The memory node's front end (edm_clio_node, tb/node) at two parameter points: the
# bench's (node 3, cards 0-1, 2 KiB answer buffer, 300-cycle answer timeout) and a
# larger one (node 5, cards 0-3, 8 KiB answers: chains past a record's room are
# dropped; 150-cycle timeout, 16-deep intake queue).
records="$(( (count + 29) / 30 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-node-vectors -- "$records" "$seed" 3 2 2048 "$work/node.txt")
run_bench edm_clio_node "$here/node" EDM_CLIO_NODE_VECTORS="$work/node.txt"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-node-vectors -- "$records" "$((seed + 1))" 5 4 8192 "$work/node2.txt")
run_bench edm_clio_node-wide "$here/node" EDM_CLIO_NODE_VECTORS="$work/node2.txt" \
    AW=19 STAGE_WORD=393216 PKT_WORDS=1024 QDEPTH=16 ANSWER_TIMEOUT=150
# The whole path in RTL (tb/path): the card's translator, the EDM switch and the
# memory node's front end, each on its EDM host; the bench is the fast path behind
# the node, answering Clio's way (`edm-clio-cosim ... clio`).
path="$(( (count + 74) / 75 ))"
(cd "$root" && cargo run -q -p edm-clio --bin edm-clio-cosim -- "$path" "$seed" "$work/path.txt" clio)
run_bench edm_clio_path "$here/path" EDM_CLIO_PATH="$work/path.txt"
# A seed that once lost a READ's answer (27 packets): a burst of 8 grants filled the node
# host's grant queue and the RREQ behind it was dropped (GDEPTH now as the switch's queue).
if [ "$seed" != 1795807962 ]; then
    echo "edm-clio rtl: the whole path again at seed 1795807962 (a burst of grants)"
    (cd "$root" && cargo run -q -p edm-clio --bin edm-clio-cosim -- 27 1795807962 "$work/path-burst.txt" clio)
    run_bench edm_clio_path-burst "$here/path" EDM_CLIO_PATH="$work/path-burst.txt" EDM_SEED=1795807962
fi
echo "edm-clio rtl: passed"
