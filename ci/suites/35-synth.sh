#!/usr/bin/env bash
# The fast path's synthesis flow (ip/fastpath/synth/synth.sh: yosys synth_xilinx,
# per-module counts into a JSON report next to Clio's Fig. 19) on the small
# VirtMem units, with each one's deepest logic level (synth/depth.py, whose
# tests run first), so CI keeps the flow and the report working; the whole table
# (about 25 min of CPU, TOP=1 adds the flattened top) is a developer run.
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

if ! command -v yosys >/dev/null; then
    echo "yosys is not installed: cannot run the synthesis flow" >&2
    exit 77
fi
# The depth counter on netlists whose depth is known by construction (LUT chains,
# carry chains, MUXFs, BRAM/DSP boundaries, LUTRAM reads, ports; ~10 s), and the
# yosys 0.23 source preparation (package names qualified, a module's own parameters not).
python3 -m unittest ip/fastpath/synth/test_depth.py ip/fastpath/synth/test_prep.py
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mods="clio_perm_check clio_bucket_hash clio_free_pa_fifo"
MODULES="$mods" REPORT="$tmp/report.json" SYNTH_TIMEOUT=600 ip/fastpath/synth/synth.sh 2
python3 - "$tmp/report.json" $mods <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [m for m in sys.argv[2:] if r["modules"].get(m, {}).get("lut", 0) <= 0]
if bad:
    sys.exit(f"synthesis gave no LUT count for {bad}: {r['modules']}")
nodepth = [m for m in sys.argv[2:] if r["modules"][m].get("depth", {}).get("levels", 0) <= 0]
if nodepth:
    sys.exit(f"no logic depth measured for {nodepth}: {[r['modules'][m].get('depth') for m in nodepth]}")
print("synthesis flow ok:", ", ".join(
    f"{m} {r['modules'][m]['lut']} LUT, {r['modules'][m]['depth']['levels']} levels" for m in sys.argv[2:]))
PY
