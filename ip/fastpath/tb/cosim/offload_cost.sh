#!/usr/bin/env bash
# Cycles of the offload pass-through (issue #16) in the Verilated top built
# with OFFLOAD_TAGS = 64: for each request / answer size, CALLS calls (each
# read by the slow path at once and answered OK, `clio-cosim offload-cost`),
# checked against the model like every co-simulation case, and the median
# cycles of a call (first beat in -> its OFFLOAD_REQ fragments pushed, the
# top idle) and of its answer (the polls that take its OFFLOAD_REPLY
# fragments, at most a TX ring's worth each, and send its packets, until
# idle). Both include the harness's three quiet cycles that end an event.
# Prints a Markdown table.
#
# Usage: offload_cost.sh [--calls N] ["REQ:ANS" ...]   (default sizes below)
# Env: GEN and SIM (a built clio-cosim and an OFFLOAD_TAGS=64 harness), else
#      both are built into CARGO_TARGET_DIR (the repository's target/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
calls=20
if [ "${1:-}" = "--calls" ]; then calls="$2"; shift 2; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=("8:8" "64:64" "200:511" "512:512" "8:513" "8:2048" "512:2048")
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
work="$target/cosim-offload-cost"
mkdir -p "$work"
if [ -n "${GEN:-}" ] && [ -n "${SIM:-}" ]; then
    gen="$GEN" sim="$SIM"
else
    (cd "$repo" && cargo build --release -q -p clio-fastpath-cosim)
    gen="$target/release/clio-cosim"
    sim=$("$here/build.sh" "$gen" "$target/cosim-build-offload" "-GOFFLOAD_TAGS=64 -GOFFLOAD_RESP_BYTES=2048")
fi
printf '| request payload bytes | OFFLOAD_REQ fragments | cycles per call | answer payload bytes | OFFLOAD_REPLY fragments | answer packets | cycles per answer |\n'
printf '|---|---|---|---|---|---|---|\n'
for sz in "${sizes[@]}"; do
    req="${sz%%:*}" ans="${sz##*:}"
    out="$work/$req-$ans"
    "$gen" offload-cost --request-bytes "$req" --answer-bytes "$ans" --calls "$calls" --out "$out" > /dev/null
    if ! COSIM_EVENT_CYCLES="$out/cycles.txt" "$sim" "$out" > "$out.log" 2>&1; then
        tail -5 "$out.log" >&2
        echo "offload_cost.sh: $req:$ans: the RTL differs from the model ($out.log)" >&2
        exit 1
    fi
    awk -v req="$req" -v ans="$ans" -v mtu=512 '
        FNR == NR { cyc[$1] = $3; next }
        $2 == "call" { n++; call[n] = cyc[$1] }
        $2 == "answer" { answer[n] += cyc[$1] }
        function median(a, k,   i, j, t, b) {
            for (i = 1; i <= k; i++) b[i] = a[i]
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
            return (k % 2) ? b[(k + 1) / 2] : (b[k / 2] + b[k / 2 + 1]) / 2
        }
        END {
            printf "| %d | %d | %s | %d | %d | %d | %s |\n", req, int((56 + req + 39) / 40), median(call, n),
                ans, int((4 + ans + 39) / 40), ans <= mtu ? 1 : int((ans + mtu - 1) / mtu), median(answer, n)
        }' "$out/cycles.txt" "$out/roles.txt"
done
