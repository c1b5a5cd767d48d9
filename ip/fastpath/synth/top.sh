#!/usr/bin/env bash
# The flattened fast-path top alone (synth.sh with TOP=1, without yosys' `share`
# pass), reduced parameters unless FULL=1: its LUT/FF/BRAM and deepest logic
# level, printed as a README table row and written to synth/report-top.json.
# Over 20 minutes of yosys on an idle core; runs at nice 10.
#   RTL=dir          another checkout's ip/fastpath/rtl (e.g. the commit before a change)
#   WORK=dir         keep the log, the stat and the netlist there
#   REPORT=path      the JSON report (default synth/report-top.json)
#   SYNTH_TIMEOUT=S  cap in seconds (default 3600)
#   synth/top.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
TOP=1 MODULES=clio_fastpath_top REPORT="${REPORT:-$here/report-top.json}" SYNTH_TIMEOUT="${SYNTH_TIMEOUT:-3600}" \
    nice -n 10 "$here/synth.sh" 1
