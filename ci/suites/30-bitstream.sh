#!/usr/bin/env bash
# The Vivado build flow (bitstream/build.tcl) without Vivado: runs it for
# every board under plain tclsh with the Vivado commands stubbed, and checks
# the flow order, that every source file read exists and is the expected
# list, that the constraints parse with no pin assigned twice, the error
# paths, and the manifest `clio flash` reads. Also runs bitstream/program.tcl
# (the Alveo programming script) against a stubbed hardware manager, and the
# board tops' checks (bitstream/zcu106/tb/run.sh and
# bitstream/alveo-u200/tb/run.sh: lint of each top with the vendor IP stubbed,
# cocotb benches of its glue modules; about 25 s and 14 s).
# The clio-flash and clio-xdma cargo tests run in the cargo step.
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

if ! command -v tclsh >/dev/null; then
    echo "tclsh (Tcl 8.6) is not installed: cannot check the bitstream flow" >&2
    exit 77
fi
echo "tclsh $(echo 'puts [info patchlevel]' | tclsh)"

# build.tcl prints its own progress lines; keep the check results.
tclsh bitstream/ci/check_flow.tcl 2> >(grep -v '^build.tcl: error:' >&2) | grep -v '^build.tcl: =='

# program.tcl: argument checks and the programming sequence.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "bit" > "$tmp/design.bit"
tclsh bitstream/ci/check_program.tcl "$tmp/design.bit"

# Glue both boards share: lint and benches.
bash bitstream/common/tb/run.sh

# ZCU106 board top: lint (vendor IP stubbed) and the glue modules' benches.
bash bitstream/zcu106/tb/run.sh

# Alveo U200 board top: lint (vendor IP stubbed), the glue modules' benches and
# two EDM ports back to back.
bash bitstream/alveo-u200/tb/run.sh
