#!/usr/bin/env bash
# Per-module resource counts of the fast-path RTL with yosys (synth_xilinx,
# UltraScale+ cells), written to synth/report.json and compared with Clio's
# Fig. 19 (ZU7EV shares). CI runs the unit modules with the reduced parameter
# set below (TLB 16, dedup 16, FIFO depth 8, 9-beat packet buffers), about
# 20 minutes on 2 cores; the response builder and the flattened top level take
# longer than that with yosys 0.23 and are synthesized only with TOP=1. FULL=1 uses the board
# defaults (TLB 64, dedup 64, FIFO 32, 24 beats).
#   synth/synth.sh [JOBS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rtl="$here/../rtl"
jobs="${1:-2}"
work="$(mktemp -d /tmp/clio-synth.XXXXXX)"
if [ -n "${FULL:-}" ]; then
    top_params="-set TLB_ENTRIES 64 -set DEDUP_ENTRIES 64 -set FIFO_DEPTH 32 -set PKT_BEATS 24"
    tlb_params="-set ENTRIES 64"; dd_params="-set ENTRIES 64"; set_name="board defaults"
else
    top_params="-set TLB_ENTRIES 16 -set DEDUP_ENTRIES 16 -set FIFO_DEPTH 8 -set PKT_BEATS 9"
    tlb_params="-set ENTRIES 16"; dd_params="-set ENTRIES 16"; set_name="reduced (CI)"
fi
python3 "$here/yosys_prep.py" "$rtl/clio_pkg.sv" "$work/src" "$rtl"/clio_*.sv
all=$(cd "$work/src" && ls clio_*.sv | grep -v -e clio_pkg -e clio_axi_ram -e clio_fastpath_sim | tr '\n' ' ')
modules=(clio_crc32c clio_rx_parser clio_bucket_hash clio_tlb clio_pt_fetch clio_perm_check clio_free_pa_fifo
         clio_fault_unit clio_sync_unit clio_dedup clio_desc_check clio_ring_dma)
# These two do not finish yosys 0.23's resource-sharing pass within CI time.
if [ -n "${TOP:-}" ]; then modules+=(clio_resp_builder clio_fastpath_top); fi
run_one() {
    local m="$1" params=""
    case "$m" in
        clio_fastpath_top) params="$top_params" ;;
        clio_tlb) params="$tlb_params" ;;
        clio_dedup) params="$dd_params" ;;
        clio_resp_builder) params="-set BEATS 9" ;;
    esac
    (cd "$work/src" && timeout "${SYNTH_TIMEOUT:-1500}" yosys -q -l "$work/$m.log" -p \
        "read_verilog -sv clio_pkg.sv $all; chparam $params $m; synth_xilinx -family xcup -noiopad -flatten -top $m; tee -o $work/$m.stat stat" \
        > /dev/null 2>&1) || echo "synthesis of $m failed or timed out (log $work/$m.log)" >&2
}
export -f run_one
export work all top_params tlb_params dd_params
printf '%s\n' "${modules[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
python3 "$here/report.py" "$work" "$here/report.json" "$set_name" "${modules[@]}"
