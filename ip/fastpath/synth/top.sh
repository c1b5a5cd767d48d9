#!/usr/bin/env bash
# The flattened fast-path top alone (synth.sh with TOP=1, without yosys' `share`
# pass), reduced parameters unless FULL=1: its LUT/FF/BRAM and deepest logic
# level, printed as a README table row and written to synth/report-top.json.
# Runs at nice 10.
# The session, forwarding and fence tables are small by default (SESSIONS 16,
# FWD_SLOTS 8, FENCE_SLOTS 4): at the board's 1 024 sessions / 64 / 16 the
# session table alone is tens of thousands of flip-flops and 1 024:1 read
# multiplexers (its floor has two write ports, so no LUT RAM), and yosys did not
# finish the flattened top in over 2 hours. TABLES=board keeps the defaults.
#   RTL=dir          another checkout's ip/fastpath/rtl (e.g. the commit before a change)
#   WORK=dir         keep the log, the stat and the netlist there
#   REPORT=path      the JSON report (default synth/report-top.json)
#   SYNTH_TIMEOUT=S  cap in seconds (default 3600)
#   TABLES=board     the tables at their defaults (1 024 / 64 / 16) instead
#   ABC_NOFRAIG=     (set, empty) abc's full LUT script; by default the top runs it
#                    without `&fraig -x` (synth.sh): with it, abc did not finish the
#                    flattened top of b35e578 in 2 hours, without it about 2 minutes
#   synth/top.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "${TABLES:-}" = board ] || [ -n "${FULL:-}" ]; then tables=""
else tables="-set SESSIONS 16 -set FWD_SLOTS 8 -set FENCE_SLOTS 4"; fi
ABC_NOFRAIG="${ABC_NOFRAIG-1}" TOP_TABLES="$tables" TOP=1 MODULES=clio_fastpath_top REPORT="${REPORT:-$here/report-top.json}" SYNTH_TIMEOUT="${SYNTH_TIMEOUT:-3600}" \
    nice -n 10 "$here/synth.sh" 1
