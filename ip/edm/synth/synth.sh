#!/usr/bin/env bash
# Synthesize an EDM scheduler with yosys and write a JSON resource report.
#
# Usage: synth/synth.sh [-m MODULE] [-t TARGET] [-l LANES] PORTS [DEPTH] [OUT.json]
#   MODULE  edm_pim_sched (3-cycle reference, default) or edm_pim_sched_ring (scalable)
#   TARGET  generic (yosys `synth`, default for edm_pim_sched: flattened gates, memories as
#           flip-flops) or xcup (`synth_xilinx -family xcup`, default for edm_pim_sched_ring:
#           hierarchy kept, memories in block RAM / LUT RAM, no I/O buffers)
#   LANES   edm_pim_sched_ring only: candidates folded per cycle (default 1)
# The run is capped by `timeout` (EDM_SYNTH_TIMEOUT seconds, default 3600); a run that hits the
# cap exits non-zero and writes no report.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rtl="$here/../rtl"
module=edm_pim_sched
target=""
lanes=""
usage="usage: $0 [-m MODULE] [-t generic|xcup] [-l LANES] PORTS [DEPTH] [OUT.json]"
while getopts "m:t:l:" opt; do
    case "$opt" in
        m) module="$OPTARG" ;;
        t) target="$OPTARG" ;;
        l) lanes="$OPTARG" ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
ports="${1:?$usage}"
depth="${2:-6}"
out="${3:-$here/${module}_${ports}${lanes:+_l$lanes}.json}"
limit="${EDM_SYNTH_TIMEOUT:-3600}"

case "$module" in
    edm_pim_sched)
        sources="$rtl/edm_pim_sched.sv"; target="${target:-generic}"; params=""
        if [ -n "$lanes" ]; then echo "synth.sh: -l LANES applies to edm_pim_sched_ring only" >&2; exit 2; fi ;;
    edm_pim_sched_ring)
        sources="$rtl/edm_pim_sched_ring_port.sv $rtl/edm_pim_sched_ring.sv"; target="${target:-xcup}"
        lanes="${lanes:-1}"; params="-set LANES $lanes" ;;
    *) echo "synth.sh: unknown module '$module' (edm_pim_sched or edm_pim_sched_ring)" >&2; exit 2 ;;
esac
case "$target" in
    generic) flow="synth -top $module -flatten" ;;
    xcup) flow="synth_xilinx -family xcup -top $module -noiopad" ;;
    *) echo "synth.sh: unknown target '$target' (generic or xcup)" >&2; exit 2 ;;
esac
if ! [[ "$ports" =~ ^[0-9]+$ && "$depth" =~ ^[0-9]+$ && "${lanes:-1}" =~ ^[0-9]+$ ]]; then
    echo "synth.sh: PORTS ('$ports'), DEPTH ('$depth') and LANES ('$lanes') must be numbers" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
status=0
# peak memory from GNU time when it is installed
meter=()
if [ -x /usr/bin/time ]; then
    meter=(/usr/bin/time -f %M -o "$work/rss")
fi
"${meter[@]}" timeout "$limit" yosys -q -l "$work/log" -p "
read_verilog -sv $sources
chparam -set PORTS $ports -set DEPTH $depth $params $module
$flow
tee -q -o $work/stat stat
" > "$work/out" 2>&1 || status=$?
secs=$(( $(date +%s) - start ))
if [ "$status" -ne 0 ]; then
    tail -n 20 "$work/out" >&2
    if [ "$status" -eq 124 ]; then
        echo "synth.sh: $module PORTS=$ports timed out after ${limit}s" >&2
    else
        echo "synth.sh: yosys failed ($status) for $module PORTS=$ports" >&2
    fi
    exit "$status"
fi
peak="$(tail -n 1 "$work/rss" 2>/dev/null || true)"
python3 "$here/stat2json.py" "$work/stat" "$out" "$module" "$target" "$ports" "$depth" "${lanes:-0}" "$secs" "$peak"
