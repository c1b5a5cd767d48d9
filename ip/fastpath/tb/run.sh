#!/usr/bin/env bash
# Fast-path RTL checks: lint, per-module cocotb benches (Icarus), the
# differential co-simulation against the Rust reference model (Verilator) and
# the II = 1 check of the ingress. Exits non-zero on any failure and prints a
# summary.
#
#   tb/run.sh                      # CI size: 100 000 requests, fresh random seed
#   COSIM_SEED=42 tb/run.sh        # reproduce a failing seed
#   COSIM_REQUESTS=5000 tb/run.sh  # quicker local run
#   COSIM_STREAM_REQUESTS=4000     # size of the READ-streams run (6.)
#   COSIM_GATE_REQUESTS=20000      # size of the region-gate run (3b.)
#   COSIM_OFFLOAD_REQUESTS=10000   # size of the offload pass-through run (3c.)
#   SKIP_BENCHES=1 / SKIP_COSIM=1  # run parts only
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rtl="$here/../rtl"
repo="$(cd "$here/../../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/target-rtl}"
work="${COSIM_WORK:-$(mktemp -d /tmp/clio-rtl.XXXXXX)}"
mkdir -p "$work"
requests="${COSIM_REQUESTS:-100000}"
seed="${COSIM_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
failures=()
summary=()

modules=(clio_crc32c clio_rx_parser clio_bucket_hash clio_tlb clio_pt_fetch clio_perm_check
         clio_free_pa_fifo clio_fault_unit clio_sync_unit clio_dedup clio_desc_check clio_ring_dma
         clio_resp_builder clio_fwd_table clio_chase clio_axi_arbiter clio_data_mover
         clio_session_table clio_hit_lane clio_write_lane clio_atomic_stage clio_xl_walk clio_xl_ctl clio_dispatch_check clio_intake_decide clio_wr_data clio_at_engine clio_rd_data clio_rd_stage clio_stream_table clio_region_gate clio_offload_fwd clio_ctrl_fwd clio_tx_cmd clio_page_in_region clio_tx_poll clio_tx_reply clio_err_report clio_chase_read clio_ingress clio_engine clio_fastpath_top clio_axi_ram clio_fastpath_sim)
srcs=()
for m in clio_pkg "${modules[@]}"; do srcs+=("$rtl/$m.sv"); done

# 1. Lint (the waivers in rtl/lint.vlt cover only the generated package and
#    the open outputs of the top level).
lint_bad=0
for m in "${modules[@]}"; do
    if ! out=$(verilator --lint-only -Wall "$rtl/lint.vlt" "${srcs[@]}" --top-module "$m" 2>&1); then
        echo "$out" | head -20
        lint_bad=$((lint_bad + 1))
        failures+=("lint $m")
    fi
done
iverilog -g2012 -o "$work/all.vvp" "${srcs[@]}" || failures+=("iverilog -g2012 of the RTL")
summary+=("lint: ${#modules[@]} modules, $lint_bad with warnings (verilator --lint-only -Wall)")

# 2. Per-module cocotb benches (Icarus), each at its Makefile's parameter point
#    and, for parameterized modules, at one or more below (small points, so
#    the sweep adds seconds, not minutes). Not swept: clio_rx_parser (the
#    header needs a beat of >= 512 bits; DATA_WIDTH=1024 takes 90 s more) and
#    the modules without size parameters.
declare -A sweep=(
    [clio_tlb]="ENTRIES=4"
    [clio_bucket_hash]="BUCKET_BITS=10"
    [clio_crc32c]="DATA_WIDTH=128"
    [clio_data_mover]="DATA_WIDTH=128"
    [clio_dedup]="ENTRIES=16"
    [clio_fault_unit]="FIFO_DEPTH=2"
    [clio_fwd_table]="SLOTS=4 FENCES=2"
    [clio_pt_fetch]="BUCKET_BITS=10 SLOTS=8"
    [clio_free_pa_fifo]="DEPTH=8 SIZES=1"
    [clio_resp_builder]="BEATS=9;BEATS=3"
    [clio_axi_ram]="DATA_WIDTH=128 READ_LATENCY=1"
    [clio_session_table]="SESSIONS=5"
    [clio_hit_lane]="PUMP_WAIT=3"
    [clio_write_lane]="DATA_WIDTH=128;SLOTS=4"
    [clio_atomic_stage]="DATA_WIDTH=128"
    [clio_ingress]="PKT_BEATS=3"
    [clio_ctrl_fwd]="FIW=2"
    [clio_tx_cmd]="OF_ON=0"
    [clio_tx_reply]="SESSIONS=5"
    [clio_stream_table]="STN=1"
    [clio_intake_decide]="OF_ON=0"
)
if [ -z "${SKIP_BENCHES:-}" ]; then
    nb=0
    np=0
    for d in "$here"/clio_*/; do
        name=$(basename "$d")
        nb=$((nb + 1))
        points=("")
        # Several extra points are separated by ';'.
        if [ -n "${sweep[$name]:-}" ]; then
            IFS=';' read -r -a extra <<< "${sweep[$name]}"
            points+=("${extra[@]}")
        fi
        for i in "${!points[@]}"; do
            np=$((np + 1))
            log="$work/$name-$i.log"
            # shellcheck disable=SC2086 # a point is a list of VAR=value words
            if ! make -C "$d" SIM=icarus SIM_BUILD="$work/build-$name-$i" \
                    COCOTB_RESULTS_FILE="$work/$name-$i.xml" ${points[$i]} > "$log" 2>&1; then
                grep -E "FAIL|Error|assert" "$log" | head -10
                # cocotb draws a seed per run unless COCOTB_RANDOM_SEED is set: name it.
                bseed=$(grep -oE "Seeding Python random module with [0-9]+" "$log" | head -1 | grep -oE "[0-9]+$")
                failures+=("bench $name ${points[$i]:-(default)} (log $log; reproduce: make -C $d SIM=icarus ${points[$i]:-}${points[$i]:+ }COCOTB_RANDOM_SEED=${bseed:-?})")
            fi
            grep -E "^\s*\*\* TESTS=" "$log" | sed "s/^/  $name ${points[$i]:-} /" | sed 's/  */ /g'
        done
    done
    summary+=("benches: $nb module benches, $np parameter points")
fi

# 3. Differential co-simulation (3b. with the region gate in use, 3c. with
#    the offload pass-through on), then 4. the II = 1 run (10 000 back-to-back
#    TLB-hit reads through the top level, responses checked against the model),
#    then 5. a stream of each request class.
if [ -z "${SKIP_COSIM:-}" ]; then
    (cd "$repo" && cargo build --release -q -p clio-fastpath-cosim) || failures+=("cargo build clio-fastpath-cosim")
    gen="$CARGO_TARGET_DIR/release/clio-cosim"
    if sim=$("$here/cosim/build.sh" "$gen" "$work/cosim-build"); then
        echo "co-simulation: seed $seed, $requests requests"
        if "$gen" gen --seed "$seed" --requests "$requests" --out "$work/case" > /dev/null; then
            if "$sim" "$work/case" | tee "$work/cosim.log"; then
                summary+=("cosim: $(head -1 "$work/cosim.log")")
                while read -r l; do summary+=("  $l"); done < <(grep '^latency' "$work/cosim.log")
            else
                failures+=("cosim seed $seed (reproduce: COSIM_SEED=$seed COSIM_REQUESTS=$requests $0)")
            fi
        else
            failures+=("cosim trace generation, seed $seed")
        fi
        # 3b. The region gate (issue #22): the random trace with the slow
        #     path setting gate entries (paused, tracking, moved, rejoin,
        #     open) over the pages the requests touch; answers, every
        #     GATE_DIRTY the slow path reads and the final memory checked;
        #     then the same case with READ streams on in the RTL's order.
        greq="${COSIM_GATE_REQUESTS:-20000}"
        if "$gen" gates --seed "$seed" --requests "$greq" --out "$work/gates" > "$work/gates-gen.log" \
                && "$sim" "$work/gates" > "$work/gates.log"; then
            summary+=("region gate: $(head -1 "$work/gates.log")")
            summary+=("  model $(grep '^gates:' "$work/gates-gen.log")")
            summary+=("  $(grep '^RX slots' "$work/gates.log")")
            grep -q '^RX slots read by the slow path: [1-9]' "$work/gates.log" \
                || failures+=("region gate: no GATE_DIRTY report checked ($work/gates.log)")
            # The same case in the RTL's own order: packets back to back,
            # READ streams on (pumped between gated requests), the model
            # driven in the logged order (`check`): answers and memory.
            if "$sim" "$work/gates" --replay on > "$work/gates-replay.log" 2>&1 \
                    && "$gen" check --case "$work/gates" --interleave on >> "$work/gates-replay.log" 2>&1; then
                summary+=("  streams on, back to back: $(grep '^check' "$work/gates-replay.log" | sed 's/^check [^:]*: //')")
            else
                tail -5 "$work/gates-replay.log" 2>/dev/null
                failures+=("region gate, streams on, seed $seed (log $work/gates-replay.log)")
            fi
        else
            head -5 "$work/gates.log" 2>/dev/null
            failures+=("region gate cosim seed $seed (reproduce: COSIM_SEED=$seed COSIM_GATE_REQUESTS=$greq $0)")
        fi
        # 3c. The offload pass-through (issue #16): a harness built with
        #     OFFLOAD_TAGS = 64 (OFFLOAD_RESP_BYTES = the board's 2 KiB bound),
        #     the random trace with OFFLOAD_CALLs of every size and the
        #     generator as the slow path's offload host (OFFLOAD_REQs checked
        #     in the RX ring as read, answers of every status either side of
        #     the MTU and the bound, stale, broken, bad heads); answers and
        #     final memory checked.
        oreq="${COSIM_OFFLOAD_REQUESTS:-10000}"
        if osim=$("$here/cosim/build.sh" "$gen" "$work/cosim-build-offload" "-GOFFLOAD_TAGS=64 -GOFFLOAD_RESP_BYTES=2048") \
                && "$gen" offload --seed "$seed" --requests "$oreq" --out "$work/offload" > "$work/offload-gen.log" \
                && "$osim" "$work/offload" > "$work/offload.log"; then
            summary+=("offload pass-through: $(head -1 "$work/offload.log")")
            summary+=("  model $(grep '^offload:' "$work/offload-gen.log")")
            summary+=("  $(grep '^RX slots' "$work/offload.log")")
            grep -q '^RX slots read by the slow path: [1-9]' "$work/offload.log" \
                || failures+=("offload: no OFFLOAD_REQ checked ($work/offload.log)")
        else
            head -5 "$work/offload.log" 2>/dev/null
            failures+=("offload cosim seed $seed (reproduce: COSIM_SEED=$seed COSIM_OFFLOAD_REQUESTS=$oreq $0)")
        fi
        if "$gen" stream --seed "$seed" --requests 10000 --out "$work/stream" > /dev/null \
                && "$sim" "$work/stream" > "$work/stream.log"; then
            l=$(grep '^stream:' "$work/stream.log")
            summary+=("II=1 check: $l")
            echo "$l" | grep -q ' 0 stall cycles' || failures+=("II = 1: stalls in the back-to-back stream ($work/stream.log)")
        else
            cat "$work/stream.log" 2>/dev/null | head -5
            failures+=("II = 1 stream run, seed $seed")
        fi
        # 5. Every request class back to back (tb/cosim/classes.sh): each
        #    stream's responses and final memory checked against the model.
        if GEN="$gen" SIM="$sim" CARGO_TARGET_DIR="$CARGO_TARGET_DIR" \
                "$here/cosim/classes.sh" --requests 200 --seed "$seed" > "$work/classes.md"; then
            summary+=("per-class streams (200 requests each, cycles until idle):")
            while read -r l; do summary+=("  $l"); done < <(awk -F'|' 'NR > 2 && NF == 0 {exit} NR > 2 {printf "%s%s cycles/request\n", $2, $7}' "$work/classes.md")
            # The hits' extra latency behind misses / faults once in, and the intake's stall
            # per cold request before they are in (the second table; hitmiss64: sparse misses).
            while read -r l; do summary+=("  $l"); done < <(awk -F'|' 'NF == 9 && /^\| hit(miss|fault|miss64) / {printf "%s: hits pay%s cycles each behind the cold requests (mean), the intake stalls%s cycles per cold request\n", $2, $6, $8}' "$work/classes.md")
        else
            failures+=("per-class stream, seed $seed (see above)")
        fi
        # 6. READ streams (cfg_streams_on): the RTL decides the order (stream
        #    packets pumped between requests), the harness logs it (--replay)
        #    and `clio-cosim check` drives the model in that order, comparing
        #    every response and the final memory. A random case with packets
        #    back to back, then the fairness case (one client's bound-sized
        #    READs every 300 cycles, another's 8-byte READs between them) with
        #    streams on and off: the small read's latency side by side.
        #    Seed 5 (4 000 requests) runs too, every time: a FENCE taken in
        #    while the write lane still ran a WRITE (so no pump could start)
        #    was answered before its PID's stream packets (rtl/README.md,
        #    READ streams).
        sreq="${COSIM_STREAM_REQUESTS:-4000}"
        for run in "$seed $sreq" "5 4000"; do
            read -r ss sn <<< "$run"
            sw="$work/streams-$ss"
            if "$gen" gen --seed "$ss" --requests "$sn" --out "$sw" > /dev/null \
                    && "$sim" "$sw" --replay on > "$sw.log" 2>&1 \
                    && "$gen" check --case "$sw" --interleave on >> "$sw.log" 2>&1; then
                summary+=("READ streams: $(grep '^replay' "$sw.log")")
                summary+=("  $(grep '^check' "$sw.log")")
                grep -q ', 0 stream packets pumped' "$sw.log" \
                    && failures+=("READ streams: no stream packet pumped ($sw.log)")
            else
                tail -5 "$sw.log" 2>/dev/null
                failures+=("READ streams, seed $ss (reproduce: COSIM_SEED=$ss COSIM_STREAM_REQUESTS=$sn $0)")
            fi
        done
        if "$gen" fairness --seed "$seed" --requests 500 --gap 300 --out "$work/fair" > /dev/null; then
            summary+=("fairness (8-byte READ of one client while another's 2 KiB READs stream; first beat in -> answer's first beat):")
            for m in on off; do
                if "$sim" "$work/fair" --replay "$m" > "$work/fair-$m.log" 2>&1 \
                        && "$gen" check --case "$work/fair" --interleave "$m" >> "$work/fair-$m.log" 2>&1; then
                    summary+=("  streams $m: $(grep '^latency probe' "$work/fair-$m.log" | sed 's/^latency probe *first beat in -> first beat of its answer: //')")
                else
                    tail -5 "$work/fair-$m.log" 2>/dev/null
                    failures+=("fairness, streams $m, seed $seed (log $work/fair-$m.log)")
                fi
            done
        else
            failures+=("fairness case generation, seed $seed")
        fi
        # Hit-lane flood: four bound-sized READs open streams, then 400
        # 8-byte hit-lane READs of another client arrive back to back. A
        # pump waits for an empty lane, so the streams must still be pumped
        # during the flood (the lane pauses after PUMP_WAIT grants): the
        # last stream packet leaves before half the flood is taken in
        # (without the pause: after all of it).
        if "$gen" flood --seed "$seed" --requests 400 --out "$work/flood" > /dev/null \
                && "$sim" "$work/flood" --replay on > "$work/flood.log" 2>&1 \
                && "$gen" check --case "$work/flood" --interleave on >> "$work/flood.log" 2>&1; then
            before=$(awk '$1 == "T" { t++ } $1 == "P" { last = t } END { print last + 0 }' "$work/flood/rtl_events.txt")
            taken=$(grep -c '^T' "$work/flood/rtl_events.txt")
            summary+=("hit-lane flood: last stream packet pumped after $before of $taken requests taken in; $(grep '^check' "$work/flood.log")")
            [ "$before" -lt $((taken / 2)) ] \
                || failures+=("hit-lane flood: streams waited for the flood ($before of $taken taken first; $work/flood.log)")
        else
            tail -5 "$work/flood.log" 2>/dev/null
            failures+=("hit-lane flood, seed $seed (log $work/flood.log)")
        fi
    else
        failures+=("cosim harness build")
    fi
fi

echo
echo "== fast-path RTL summary =="
for s in "${summary[@]}"; do echo "$s"; done
if [ ${#failures[@]} -ne 0 ]; then
    echo "FAILED:"
    for f in "${failures[@]}"; do echo "  $f"; done
    exit 1
fi
echo "all checks passed (work dir $work)"
