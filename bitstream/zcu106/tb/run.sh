#!/usr/bin/env bash
# ZCU106 board-top checks (about a minute): verilator --lint-only -Wall of every glue
# module and of clio_zcu106_top in both network front ends (with the fast-path RTL and the vendor IP
# replaced by the black-box port declarations in stubs/, which build.tcl never
# reads), an Icarus elaboration of the whole top, and the per-module cocotb
# benches (Icarus), and a bench of the whole top with clock models that fails
# when a MAC user clock does not run (clio_zcu106_clocks/). Called by ci/suites/30-bitstream.sh. Exits non-zero on any
# failure (77 when a tool is missing) and prints a summary.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
zcu="$(cd "$here/.." && pwd)"
repo="$(cd "$zcu/../.." && pwd)"
fp="$repo/ip/fastpath/rtl"
common="$repo/bitstream/common"
export PATH="$PATH:$HOME/.local/bin"

for tool in verilator iverilog make cocotb-config; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is not installed: cannot check the ZCU106 board top" >&2
        exit 77
    fi
done

failures=()
glue=(clio_axis_upsize clio_axis_downsize clio_axi_downsize clio_axi_lite_bridge clio_fp_regs
      clio_axis_frame_mux clio_axis_frame_demux clio_eth_ports
      clio_udp_shim clio_edm_front)
# Modules a glue module instantiates (linted with it).
subs() {
    case "$1" in
        clio_udp_shim) echo "$zcu/clio_udp_rx.sv $zcu/clio_udp_tx.sv" ;;
        clio_eth_ports) echo "$zcu/clio_udp_shim.sv $zcu/clio_udp_rx.sv $zcu/clio_udp_tx.sv $zcu/clio_axis_frame_mux.sv $zcu/clio_axis_frame_demux.sv $common/clio_axis_async_fifo.sv" ;;
        clio_fp_regs) echo "$common/clio_axil_regif.sv" ;;
        clio_edm_front) echo "$repo/ip/edm/rtl/edm_pkg.sv $repo/ip/edm-clio/rtl/edm_clio_node.sv $zcu/clio_axis_upsize.sv $zcu/clio_axis_downsize.sv $common/clio_axis_async_fifo.sv" ;;
    esac
}
# The fast-path sources build.tcl reads (simulation models excluded).
fp_srcs=("$fp/clio_pkg.sv")
for f in "$fp"/*.sv; do
    case "$(basename "$f")" in
        clio_pkg.sv|clio_axi_ram.sv|clio_fastpath_sim.sv) ;;
        *) fp_srcs+=("$f") ;;
    esac
done
stubs="$here/stubs/clio_zcu106_vendor_stubs.sv"

# 1. Lint.
lint_bad=0
for m in "${glue[@]}"; do
    # shellcheck disable=SC2046
    if ! out=$(timeout 120 verilator --lint-only -Wall "$fp/lint.vlt" "$fp/clio_pkg.sv" "$zcu/$m.sv" $(subs "$m") \
            --top-module "$m" 2>&1); then
        echo "$out" | head -20
        lint_bad=$((lint_bad + 1))
        failures+=("lint $m")
    fi
done
# The top in both builds (network.front_end "udp" and "edm"): the EDM one adds
# the sources build.tcl adds for it (the EDM stack, the memory node's front end,
# the U200's EDM port).
edm_srcs=("$repo/ip/edm/rtl/edm_pkg.sv")
for f in "$repo"/ip/edm/rtl/*.sv "$repo/ip/edm-clio/rtl/edm_clio_node.sv" \
        "$repo"/bitstream/alveo-u200/edm_{u200_port,block_lock,block_cdc}.sv; do
    case "$(basename "$f")" in edm_pkg.sv) ;; *) edm_srcs+=("$f") ;; esac
done
for fe in udp edm; do
    if ! out=$(timeout 300 verilator --lint-only -Wall -GFRONT_END="\"$fe\"" "$fp/lint.vlt" "${fp_srcs[@]}" \
            "${edm_srcs[@]}" "$common"/*.sv "$zcu"/*.sv "$stubs" --top-module clio_zcu106_top 2>&1); then
        echo "$out" | head -20
        lint_bad=$((lint_bad + 1))
        failures+=("lint clio_zcu106_top ($fe)")
    fi
done
work="$(mktemp -d /tmp/clio-zcu106.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for fe in udp edm; do
    iverilog -g2012 -s clio_zcu106_top -P"clio_zcu106_top.FRONT_END=\"$fe\"" -o "$work/top-$fe.vvp" \
        "${fp_srcs[@]}" "${edm_srcs[@]}" "$common"/*.sv "$zcu"/*.sv "$stubs" 2>&1 | grep -v 'sorry:\|warning:' || true
    if [ ! -s "$work/top-$fe.vvp" ]; then
        failures+=("iverilog elaboration of clio_zcu106_top ($fe)")
    fi
done
echo "lint: ${#glue[@]} glue modules + clio_zcu106_top in the udp and edm builds (vendor IP stubbed), $lint_bad with warnings"

# The whole top with clock models of the PS and the 10G core
# (-DCLIO_STUB_CLOCKS): both MAC user clocks must run at 156.25 MHz and the
# MAC user resets must be released (fails when txoutclksel_in_N/
# rxoutclksel_in_N are left open: they read 0, a static clock).
clk_out="$work/clocks.log"
if iverilog -g2012 -DCLIO_STUB_CLOCKS -s tb_clio_zcu106_clocks -o "$work/clocks.vvp" "${fp_srcs[@]}" "${edm_srcs[@]}" "$common"/*.sv "$zcu"/*.sv \
        "$stubs" "$here/clio_zcu106_clocks/tb_clio_zcu106_clocks.sv" >"$clk_out" 2>&1 &&
        timeout 300 vvp -n "$work/clocks.vvp" >>"$clk_out" 2>&1 && grep -q '^PASS' "$clk_out"; then
    grep '^PASS' "$clk_out" | sed 's/^/  clocks: /'
else
    cat "$clk_out" | tail -5
    # 2 us of simulated time take well under a second; a run that reaches the
    # timeout is a simulation that never advances (a zero-delay loop).
    failures+=("bench clio_zcu106_clocks (MAC user clocks; a 300 s timeout means the simulation did not advance)")
fi

# 2. Benches (the frame mux and demux with the board's 2 ports and with 3;
# clio_axis_async_fifo, shared with the U200 top, is checked by
# bitstream/common/tb/run.sh).
runs=()
for m in "${glue[@]}"; do runs+=("$m:"); done
runs+=("clio_axis_frame_mux:PORTS=3" "clio_axis_frame_demux:PORTS=3")
for r in "${runs[@]}"; do
    m="${r%%:*}"
    arg="${r#*:}"
    log="$work/$m${arg:+-$arg}.log"
    if ! make -C "$here/$m" SIM=icarus $arg > "$log" 2>&1; then
        grep -E "FAIL|Error|assert" "$log" | head -10
        failures+=("bench $m $arg")
    fi
    grep -E "^\s*\*\* TESTS=" "$log" | sed "s/^ */  $m${arg:+ ($arg)} /" | sed 's/  */ /g'
done

if [ ${#failures[@]} -ne 0 ]; then
    echo "ZCU106 top checks FAILED:"
    for f in "${failures[@]}"; do echo "  $f"; done
    exit 1
fi
echo "ZCU106 top checks passed"
