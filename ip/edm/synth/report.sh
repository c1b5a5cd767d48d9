#!/usr/bin/env bash
# Synthesis sweep of the EDM schedulers; writes one JSON report (a list of synth.sh reports).
#
# Usage: synth/report.sh [OUT.json]   (default synth/report.json)
#   default:            edm_pim_sched_ring (xcup) at PORTS = 4, 8, 16 with LANES = 1, and
#                       16 with LANES = 4: about a minute of CPU
#   EDM_SYNTH_HEAVY=1:  also edm_pim_sched_ring at PORTS = 64 and 512 with LANES = 1, 512 with
#                       LANES = 8, and the 3-cycle reference edm_pim_sched (generic gates) at
#                       PORTS = 2 and 4: about 15 minutes, 0.7 GB peak
# Each run is capped by EDM_SYNTH_TIMEOUT seconds (default 3600); a run that fails or times out
# is recorded with its error and the sweep goes on; the script exits non-zero if any failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/report.json}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# module PORTS DEPTH LANES (- for a module without LANES)
runs=("edm_pim_sched_ring 4 6 1" "edm_pim_sched_ring 8 6 1" "edm_pim_sched_ring 16 6 1" "edm_pim_sched_ring 16 6 4")
if [ "${EDM_SYNTH_HEAVY:-0}" = 1 ]; then
    runs+=("edm_pim_sched_ring 64 6 1" "edm_pim_sched_ring 512 6 1" "edm_pim_sched_ring 512 6 8"
        "edm_pim_sched 2 2 -" "edm_pim_sched 4 6 -")
fi

failed=0
n=0
for run in "${runs[@]}"; do
    set -- $run
    n=$((n + 1))
    echo "synth: $1 PORTS=$2 DEPTH=$3 LANES=$4" >&2
    lanes=()
    if [ "$4" != - ]; then
        lanes=(-l "$4")
    fi
    if ! "$here/synth.sh" -m "$1" "${lanes[@]}" "$2" "$3" "$work/$n.json" > "$work/$n.out" 2> "$work/$n.err"; then
        failed=1
        tail -n 3 "$work/$n.err" >&2
        python3 - "$work/$n.json" "$1" "$2" "$3" "$work/$n.err" <<'PY'
import json, sys
out, module, ports, depth, err = sys.argv[1:]
msg = open(err).read().strip().splitlines()
json.dump({"module": module, "ports": int(ports), "depth": int(depth),
           "error": msg[-1] if msg else "yosys failed"}, open(out, "w"))
PY
    fi
    cat "$work/$n.out" >&2
done
python3 - "$out" "$work" "$n" <<'PY'
import json, sys
out, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
reps = [json.load(open(f"{work}/{i}.json")) for i in range(1, n + 1)]
with open(out, "w") as f:
    json.dump(reps, f, indent=2)
    f.write("\n")
PY
echo "synth: report in $out" >&2
exit "$failed"
