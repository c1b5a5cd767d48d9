#!/usr/bin/env bash
# Build the Verilator co-simulation harness of clio_fastpath_sim with the
# geometry of the co-simulation board (from `clio-cosim params`).
# Usage: build.sh CLIO_COSIM_BIN OUT_DIR [EXTRA -G FLAGS, e.g. -GSTREAMS=4]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rtl="${RTL_DIR:-$here/../../rtl}"
gen="$1"
out="$2"
params="$("$gen" params) ${3:-}"
mkdir -p "$out"
srcs=(clio_pkg.sv clio_crc32c.sv clio_rx_parser.sv clio_tlb.sv clio_bucket_hash.sv clio_pt_fetch.sv
      clio_perm_check.sv clio_free_pa_fifo.sv clio_fault_unit.sv clio_sync_unit.sv clio_dedup.sv
      clio_desc_check.sv clio_ring_dma.sv clio_resp_builder.sv clio_fwd_table.sv clio_chase.sv clio_axi_arbiter.sv clio_data_mover.sv
      clio_session_table.sv clio_hit_lane.sv clio_write_lane.sv clio_atomic_stage.sv clio_xl_walk.sv clio_xl_ctl.sv clio_dispatch_check.sv clio_intake_decide.sv clio_wr_data.sv clio_at_engine.sv clio_rd_data.sv clio_rd_stage.sv clio_stream_table.sv clio_region_gate.sv clio_offload_fwd.sv clio_ctrl_fwd.sv clio_page_in_region.sv clio_tx_cmd.sv clio_tx_poll.sv clio_tx_reply.sv clio_err_report.sv clio_chase_read.sv clio_ingress.sv clio_engine.sv clio_fastpath_top.sv clio_axi_ram.sv clio_fastpath_sim.sv)
# shellcheck disable=SC2086
verilator --cc --exe --build -j 2 -O2 -Wno-fatal -Wno-lint -Wno-style \
    --top-module clio_fastpath_sim $params \
    -Mdir "$out" -o clio_cosim \
    "${srcs[@]/#/$rtl/}" "$here/harness.cpp" \
    -CFLAGS "-O2 -std=c++17" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "$out/clio_cosim"
