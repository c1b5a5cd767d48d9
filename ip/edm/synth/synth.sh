#!/usr/bin/env bash
# Synthesize edm_pim_sched with yosys (generic gates) and write a JSON resource report.
# Usage: synth/synth.sh PORTS [DEPTH] [OUT.json]. CI runs PORTS=8; see README for larger N.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ports="${1:-8}"
depth="${2:-6}"
out="${3:-$here/edm_pim_sched_${ports}.json}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
start=$(date +%s)
yosys -q -l "$log" -p "
read_verilog -sv $here/../rtl/edm_pim_sched.sv
chparam -set PORTS $ports -set DEPTH $depth edm_pim_sched
synth -top edm_pim_sched -flatten
tee -o $log.stat stat
"
secs=$(( $(date +%s) - start ))
python3 - "$log.stat" "$out" "$ports" "$depth" "$secs" <<'PY'
import json, re, sys
stat, out, ports, depth, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = open(stat).read()
cells = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+\$?(_?\w+_?)\s+(\d+)\s*$", text, re.M)}
total = re.search(r"Number of cells:\s+(\d+)", text)
wires = re.search(r"Number of wire bits:\s+(\d+)", text)
ffs = sum(v for k, v in cells.items() if "DFF" in k.upper())
rep = {"module": "edm_pim_sched", "ports": ports, "depth": depth, "cells": int(total.group(1)) if total else None,
       "wire_bits": int(wires.group(1)) if wires else None, "flip_flops": ffs, "cell_types": cells, "seconds": secs}
json.dump(rep, open(out, "w"), indent=2)
print(json.dumps({k: rep[k] for k in ("ports", "depth", "cells", "flip_flops", "seconds")}))
PY
rm -f "$log.stat"
