#!/usr/bin/env bash
# Alveo U200 board-top checks (seconds): verilator --lint-only -Wall of every glue
# module, of edm_u200_port with the EDM RTL, and of edm_u200_top (with the fast-path,
# EDM and Clio-to-EDM translator RTL build.tcl reads, and the vendor IP replaced by the black-box port
# declarations in stubs/, which build.tcl never reads), an Icarus elaboration of the
# whole top, and the per-module cocotb benches (Icarus). Called by
# ci/suites/30-bitstream.sh. Exits non-zero on any failure (77 when a tool is
# missing) and prints a summary.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
u200="$(cd "$here/.." && pwd)"
repo="$(cd "$u200/../.." && pwd)"
fp="$repo/ip/fastpath/rtl"
edm="$repo/ip/edm/rtl"
xlate="$repo/ip/edm-clio/rtl"
common="$repo/bitstream/common"
export PATH="$PATH:$HOME/.local/bin"

for tool in verilator iverilog make cocotb-config; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is not installed: cannot check the U200 board top" >&2
        exit 77
    fi
done

failures=()
glue=(edm_xdma_regs edm_xdma_rings edm_ring_ram edm_xdma_path edm_block_lock edm_block_cdc)
# Modules a glue module instantiates (linted with it).
subs() {
    case "$1" in
        edm_xdma_path) echo "$u200/edm_ring_ram.sv $u200/edm_xdma_rings.sv $u200/edm_xdma_regs.sv $common/clio_axil_regif.sv" ;;
        edm_xdma_regs) echo "$common/clio_axil_regif.sv" ;;
    esac
}
# The RTL build.tcl reads for this board (simulation models excluded), packages first.
rtl_srcs=("$fp/clio_pkg.sv" "$edm/edm_pkg.sv")
for f in "$fp"/*.sv "$edm"/*.sv "$xlate"/*.sv; do
    case "$(basename "$f")" in
        clio_pkg.sv|edm_pkg.sv|clio_axi_ram.sv|clio_fastpath_sim.sv) ;;
        *) rtl_srcs+=("$f") ;;
    esac
done
edm_srcs=("$edm/edm_pkg.sv")
for f in "$edm"/*.sv; do
    [ "$(basename "$f")" = edm_pkg.sv ] || edm_srcs+=("$f")
done
stubs="$here/stubs/edm_u200_vendor_stubs.sv"

# 1. Lint.
lint_bad=0
lint() {
    local top="$1"
    shift
    local out
    if ! out=$(timeout 300 verilator --lint-only -Wall "$fp/lint.vlt" "$@" --top-module "$top" 2>&1); then
        echo "$out" | head -20
        lint_bad=$((lint_bad + 1))
        failures+=("lint $top")
    fi
}
for m in "${glue[@]}"; do
    # shellcheck disable=SC2046
    lint "$m" "$fp/clio_pkg.sv" "$edm/edm_pkg.sv" "$u200/$m.sv" $(subs "$m")
done
lint edm_u200_port "${edm_srcs[@]}" "$u200/edm_block_lock.sv" "$u200/edm_block_cdc.sv" "$u200/edm_u200_port.sv"
lint edm_u200_top "${rtl_srcs[@]}" "$common"/*.sv "$u200"/*.sv "$stubs"
work="$(mktemp -d /tmp/clio-u200.XXXXXX)"
trap 'rm -rf "$work"' EXIT
if ! iverilog -g2012 -s edm_u200_top -o "$work/top.vvp" "${rtl_srcs[@]}" "$common"/*.sv "$u200"/*.sv "$stubs"; then
    failures+=("iverilog elaboration of edm_u200_top")
fi
lint edm_board_reset "$u200/edm_board_reset.sv"
echo "lint: ${#glue[@]} glue modules + edm_u200_port + edm_board_reset + edm_u200_top (vendor IP stubbed), $lint_bad with warnings"

# The two whole-top benches share the top's instance and board clock
# (common/edm_u200_top_dut.svh, found with -I).
# The whole top with the XDMA's axi_aclk stopped and the board clock running
# (-DCLIO_STUB_CLOCKS): the SI5335 reset pulse (FS driven throughout) and the
# transceivers' reset must run (tb/edm_u200_reset).
rst_out="$work/reset.log"
if iverilog -g2012 -I "$here/common" -DCLIO_STUB_CLOCKS -s tb_edm_u200_reset -o "$work/reset.vvp" "${rtl_srcs[@]}" "$common"/*.sv "$u200"/*.sv \
        "$stubs" "$here/edm_u200_reset/tb_edm_u200_reset.sv" >"$rst_out" 2>&1 &&
        vvp -n "$work/reset.vvp" >>"$rst_out" 2>&1 && grep -q '^PASS' "$rst_out"; then
    grep '^PASS' "$rst_out" | sed 's/^/  reset: /'
else
    tail -8 "$rst_out"
    failures+=("bench edm_u200_reset (SI5335 reset, transceiver reset without axi_aclk)")
fi

# The whole top with PCIe and the transceivers running (-DCLIO_STUB_PCIE): the
# host, reading STATUS over AXI-Lite, must see READY = 0 while the Clio-to-EDM
# translator is in reset and READY = 1 once it is up (tb/edm_u200_ready).
ready_out="$work/ready.log"
if iverilog -g2012 -I "$here/common" -DCLIO_STUB_CLOCKS -DCLIO_STUB_PCIE -s tb_edm_u200_ready -o "$work/ready.vvp" "${rtl_srcs[@]}" \
        "$common"/*.sv "$u200"/*.sv "$stubs" "$here/edm_u200_ready/tb_edm_u200_ready.sv" >"$ready_out" 2>&1 &&
        vvp -n "$work/ready.vvp" >>"$ready_out" 2>&1 && grep -q '^PASS' "$ready_out"; then
    grep '^PASS' "$ready_out" | sed 's/^/  ready: /'
else
    tail -8 "$ready_out"
    failures+=("bench edm_u200_ready (STATUS.READY when the translator is up)")
fi

# 2. Benches.
for m in "${glue[@]}" edm_u200_port; do
    log="$work/$m.log"
    if ! make -C "$here/$m" SIM=icarus > "$log" 2>&1; then
        grep -E "FAIL|Error|assert" "$log" | head -10
        failures+=("bench $m")
    fi
    grep -E "^\s*\*\* TESTS=" "$log" | sed "s/^ */  $m /" | sed 's/  */ /g'
done

if [ ${#failures[@]} -ne 0 ]; then
    echo "U200 top checks FAILED:"
    for f in "${failures[@]}"; do echo "  $f"; done
    exit 1
fi
echo "U200 top checks passed"
