#!/usr/bin/env bash
# Per-module resource counts of the fast-path RTL with yosys (synth_xilinx,
# UltraScale+ cells), written to synth/report.json and compared with Clio's
# Fig. 19 (ZU7EV shares). CI (ci/suites/35-synth.sh) runs it on a few small
# modules only (CPU time).
#
# Default: the unit modules and the response builder with the reduced
# parameter set below (TLB 16, dedup 16, FIFO depth 8, 9-beat packet
# buffers), about 25 minutes of CPU (the parser alone 13), JOBS at a time.
#   TOP=1        adds the flattened top level (without the `share` pass, see run_one)
#   FULL=1       board defaults instead (TLB 64, dedup 64, FIFO 32, 24 beats)
#   NOWIDELUT=1  synth_xilinx -nowidelut: no MUXF7/F8 "LUT7/8" cells, which
#                yosys' mapper otherwise uses for wide XORs (CRC) at a high LUT cost
#   SYNTH_TIMEOUT=S  per-module cap in seconds (default 1500)
#   MODULES="a b"    only these modules (ci/suites/35-synth.sh runs a small set)
#   REPORT=path      write the JSON there instead of synth/report.json
#   TOP_TABLES="-set P V ..."  extra chparam settings for the top only (synth/top.sh
#                    sets the session / forwarding / fence tables small, see there)
#   ABC_NOFRAIG=1    map LUTs with abc's default LUT script less its first step, `&fraig -x`
#                    (SAT sweeping): on clio_hit_lane alone (70 699 AND nodes, its two CRC32C
#                    matrices) that step ran for over 15 minutes where the rest of the script
#                    takes 22 s, and it kept the flattened top in abc for hours (synth/top.sh)
#   RTL=dir          synthesize the sources in dir (e.g. an older checkout's ip/fastpath/rtl)
#   WORK=dir         keep the logs, stats and netlists (MODULE.json) there instead of a mktemp dir
#                    (without it the netlists are deleted once measured)
#   DEEP=N           the register inputs N or more levels deep traced back (depth.py --deep;
#                    default 30): where their paths start, what they pass, in the report
# Each module's deepest logic level (synth/depth.py on yosys' write_json netlist)
# goes into the report beside LUT/FF/BRAM, with its CPU time (yosys and abc). synth/top.sh runs the top alone.
#   synth/synth.sh [JOBS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rtl="${RTL:-$here/../rtl}"
jobs="${1:-2}"
work="${WORK:-$(mktemp -d /tmp/clio-synth.XXXXXX)}"
mkdir -p "$work"
if [ -n "${FULL:-}" ]; then
    top_params="-set TLB_ENTRIES 64 -set DEDUP_ENTRIES 64 -set FIFO_DEPTH 32 -set PKT_BEATS 24"
    tlb_params="-set ENTRIES 64"; dd_params="-set ENTRIES 64"; rb_params="-set BEATS 24"; set_name="board defaults"
else
    top_params="-set TLB_ENTRIES 16 -set DEDUP_ENTRIES 16 -set FIFO_DEPTH 8 -set PKT_BEATS 9"
    tlb_params="-set ENTRIES 16"; dd_params="-set ENTRIES 16"; rb_params="-set BEATS 9"; set_name="reduced"
fi
if [ -n "${TOP_TABLES:-}" ]; then top_params="$top_params $TOP_TABLES"; set_name="$set_name; top also $TOP_TABLES"; fi
flags="-family xcup -noiopad -flatten"
if [ -n "${NOWIDELUT:-}" ]; then flags="$flags -nowidelut"; set_name="$set_name, -nowidelut"; fi
if [ -n "${ABC_NOFRAIG:-}" ]; then set_name="$set_name; abc's LUT script without &fraig -x"; fi
python3 "$here/yosys_prep.py" "$rtl/clio_pkg.sv" "$work/src" "$rtl"/clio_*.sv
modules=(clio_crc32c clio_rx_parser clio_bucket_hash clio_tlb clio_pt_fetch clio_perm_check clio_free_pa_fifo
         clio_fault_unit clio_sync_unit clio_dedup clio_desc_check clio_ring_dma clio_resp_builder clio_axi_arbiter
         clio_data_mover clio_session_table clio_hit_lane clio_write_lane)
if [ -n "${TOP:-}" ]; then modules+=(clio_fastpath_top); fi
if [ -n "${MODULES:-}" ]; then read -r -a modules <<< "$MODULES"; fi
run_one() {
    local m="$1" params=""
    case "$m" in
        clio_fastpath_top) params="$top_params" ;;
        clio_tlb) params="$tlb_params" ;;
        clio_dedup) params="$dd_params" ;;
        clio_resp_builder) params="$rb_params" ;;
    esac
    # The flattened top level did not get through yosys' SAT-based `share`
    # pass within 20 minutes, so it runs synth_xilinx's script without that
    # one step (resource sharing could only lower its count).
    local script="synth_xilinx $flags -top $m"
    if [ "$m" = clio_fastpath_top ]; then
        script="synth_xilinx $flags -top $m -run begin:coarse;
            techmap -map +/cmp2lut.v -map +/cmp2lcu.v -D LUT_WIDTH=6; alumacc; opt; memory -nomap; opt_clean;
            synth_xilinx $flags -top $m -run map_memory:"
    fi
    if [ -n "${ABC_NOFRAIG:-}" ]; then
        # synth_xilinx's map_luts step written out (yosys 0.23, these flags) with
        # its abc call given the script below instead of the default.
        local luts="2:2,3,6:5,10,20"
        if [ -n "${NOWIDELUT:-}" ]; then luts="2:2,3,6:5"; fi
        printf '%s\n' strash scorr dc2 dretime strash 'dch -f' if mfs2 > "$work/nofraig.abc"
        script="${script%-run map_memory:}"
        if [ "$script" = "synth_xilinx $flags -top $m" ]; then script="$script -run :map_luts"
        else script="$script -run map_memory:map_luts"; fi
        script="$script; opt_expr -mux_undef -noclkinv; abc -luts $luts -script $work/nofraig.abc; clean;
            techmap -map +/xilinx/ff_map.v; xilinx_srl -fixed -minlen 3;
            techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6; xilinx_dffopt;
            opt_lut_ins -tech xilinx; synth_xilinx $flags -top $m -run finalize:"
    fi
    local t0=$SECONDS files
    # Only the files the module needs (synth/deps.py): parsing every source cost
    # a small module most of its time.
    files=$(python3 "$here/deps.py" "$work/src" clio_pkg.sv "$m") || return 0
    # CPU time of yosys and its abc child processes (the log's own figure leaves
    # abc out): on a shared host the wall time says more about the load.
    local TIMEFORMAT='%U %S'
    { time (cd "$work/src" && timeout "${SYNTH_TIMEOUT:-1500}" yosys -q -l "$work/$m.log" -p \
        "read_verilog -sv $files; chparam $params $m; $script; tee -o $work/$m.stat stat; write_json $work/$m.json" \
        > /dev/null 2>&1) ; } 2> "$work/$m.cpu" || echo "synthesis of $m failed or timed out (log $work/$m.log)" >&2
    echo $((SECONDS - t0)) > "$work/$m.seconds"
    # Deepest logic level of the mapped netlist (synth/depth.py: LUT levels
    # between registers/ports, carry chains and MUXFs counted as it documents).
    if [ -s "$work/$m.stat" ] && [ -s "$work/$m.json" ]; then
        python3 "$here/depth.py" "$work/$m.json" --top "$m" --deep "$deep" --out "$work/$m.depth.json" > "$work/$m.depth.txt" \
            || echo "depth of $m failed (see $work/$m.depth.txt)" >&2
    fi
    if [ -z "$keep" ]; then rm -f "$work/$m.json"; fi
}
export -f run_one
keep="${WORK:-}"
deep="${DEEP:-30}"
export work flags top_params tlb_params dd_params rb_params here keep deep
cut -d' ' -f1-3 /proc/loadavg > "$work/load.start"
printf '%s\n' "${modules[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
cut -d' ' -f1-3 /proc/loadavg > "$work/load.end"
python3 "$here/report.py" "$work" "${REPORT:-$here/report.json}" "$set_name" "$flags" "${modules[@]}"
