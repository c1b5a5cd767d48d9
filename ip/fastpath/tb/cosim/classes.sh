#!/usr/bin/env bash
# Per-class throughput of the fast-path RTL: for each request class, a
# stream of back-to-back requests (clio-cosim class) through the Verilated
# top level, checked response by response and memory against the model, and
# the cycles until the top is idle again ("beats/cycle": request beats in;
# "payload beats/cycle": data moved, request bytes / 64, per cycle). Prints a
# Markdown table (and JSON with --json FILE) beside the model's projected
# cycles per packet. Then, for the mixed classes (hitmiss, hitfault: every
# 4th request misses the TLB or faults, the others are hit-lane reads;
# hitwfault: as hitfault with hit-lane 8-byte writes; hitmiss16: as hitmiss
# with every 16th request a miss, so hits still arrive when a walk ends;
# hitmiss64: every 64th a miss, slower than one walk each), the
# hits' latency in the stream (first beat in -> first beat of the answer)
# beside the hits' of the read8 stream: the extra cycles a hit pays for the
# misses or faults among the requests in front of it once it is in, and the
# cycles the stream's offered beat waited at the intake per cold request
# (what a hit pays before it is in; "intake stall cycles" in the first table). faaretry: each FAA
# followed back to back by its retry, which must be answered from the first
# one's dedup record (DUPLICATE), not executed again (a request counts the
# FAA and its retry: two packets).
#
# Every stream's responses and final memory are compared with the model's by
# `clio-cosim check` in the order the RTL answered (the harness's
# --order-log), so a hit answered before a miss in front of it is allowed
# where the ordering rule allows it and reported (naming both) where not.
#
# Usage: classes.sh [--requests N] [--seed N] [--json FILE]
# Env: CARGO_TARGET_DIR, CLASSES (space-separated subset), CLOCK_MHZ (250),
#      GEN and SIM (a built clio-cosim and harness, as tb/run.sh has them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
requests=2000 seed=1 json=""
while [ $# -gt 0 ]; do
    case "$1" in
        --requests) requests="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --json) json="$2"; shift 2 ;;
        *) echo "usage: $0 [--requests N] [--seed N] [--json FILE]" >&2; exit 2 ;;
    esac
done
classes="${CLASSES:-read8 read64 write64 read1k write1k read4k write4k faa cas miss fault hitmiss hitfault hitwfault hitmiss16 hitmiss64 faaretry}"
mhz="${CLOCK_MHZ:-250}"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
work="$target/cosim-classes"
mkdir -p "$work"
if [ -n "${GEN:-}" ] && [ -n "${SIM:-}" ]; then
    gen="$GEN" sim="$SIM"
else
    (cd "$repo" && cargo build --release -q -p clio-fastpath-cosim)
    gen="$target/release/clio-cosim"
    sim=$("$here/build.sh" "$gen" "$target/cosim-build")
fi

printf '| class | requests | packets | beats in | RTL cycles | RTL cycles/request | beats/cycle | payload beats/cycle | RTL Gb/s at %s MHz | model cycles/packet | intake stall cycles |\n' "$mhz"
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
rows=()
lat=()
hit_lat() {  # LOG PATH -> "median mean" of the stream latency of PATH
    awk -v p="$2" '$1 == "stream" && $2 == "latency" && $3 == p { print $14, $16 }' "$1"
}
for c in $classes; do
    out="$work/$c"
    line=$("$gen" class --class "$c" --seed "$seed" --requests "$requests" --out "$out" | grep '^class ')
    read -r _ _ _ reqs _ pkts _ ok _ mcyc _ ncold <<< "$line"
    # The harness logs the RTL's answers (--order-log) and `clio-cosim check`
    # compares them in the RTL's order, each answer sent ahead of an earlier
    # request's checked against the ordering rule (ip/fastpath/README.md,
    # "Answer order"). A harness without --order-log (an older build given as
    # SIM) ignores it and compares in the model's order itself.
    rm -f "$out/rtl_events.txt"
    if ! "$sim" "$out" --order-log > "$out.log" 2>&1 \
            || { [ -f "$out/rtl_events.txt" ] && ! "$gen" check --case "$out" --interleave off >> "$out.log" 2>&1; }; then
        tail -5 "$out.log" >&2
        echo "classes.sh: class $c: the RTL differs from the model (reproduce: $gen class --class $c --seed $seed --requests $requests --out DIR; $sim DIR --order-log; $gen check --case DIR --interleave off)" >&2
        exit 1
    fi
    st=$(grep '^stream:' "$out.log")
    beats=$(sed -E 's/.*\(([0-9]+) beats\).*/\1/' <<< "$st")
    cycles=$(sed -E 's/.*idle after ([0-9]+) cycles.*/\1/' <<< "$st")
    # Cycles the offered beat waited at the intake: where a stream pays for
    # what the requests' own latency (counted from their first beat in) hides.
    stalls=$(sed -E 's/.* ([0-9]+) stall cycles.*/\1/' <<< "$st")
    bytes=$(case "$c" in read64|write64) echo 64 ;; read1k|write1k) echo 1024 ;; read4k|write4k) echo 4096 ;; *) echo 8 ;; esac)
    row=$(awk -v c="$c" -v r="$reqs" -v p="$pkts" -v b="$beats" -v y="$cycles" -v m="$mcyc" -v by="$bytes" -v f="$mhz" -v ok="$ok" 'BEGIN {
        gbps = (y > 0) ? r * by * 8 / (y / (f * 1e6)) / 1e9 : 0;
        printf "%s %d %d %d %d %.2f %.3f %.3f %.2f %.1f %d", c, r, p, b, y, y / r, b / y, r * by / 64 / y, gbps, m / p, ok }')
    read -r _ _ _ _ _ cpr bpc ppc gb mpp okn <<< "$row"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$reqs" "$pkts" "$beats" "$cycles" "$cpr" "$bpc" "$ppc" "$gb" "$mpp" "$stalls"
    case "$c" in
        read8) read -r r8med r8mean <<< "$(hit_lat "$out.log" hit)" ;;
        hitmiss|hitfault|hitwfault|hitmiss16|hitmiss64)
            cold=$(case "$c" in hitmiss*) echo miss ;; *) echo fault ;; esac)
            read -r hmed hmean <<< "$(hit_lat "$out.log" hit)"
            read -r cmed cmean <<< "$(hit_lat "$out.log" "$cold")"
            per=$(awk -v s="$stalls" -v n="${ncold:-0}" 'BEGIN { printf "%.1f", (n > 0) ? s / n : 0 }')
            lat+=("$c $hmed $hmean $cold $cmed $cmean $per") ;;
    esac
    rows+=("{\"class\":\"$c\",\"requests\":$reqs,\"packets\":$pkts,\"ok\":$okn,\"beats\":$beats,\"rtl_cycles\":$cycles,\"rtl_cycles_per_request\":$cpr,\"beats_per_cycle\":$bpc,\"payload_beats_per_cycle\":$ppc,\"rtl_gbps\":$gb,\"model_cycles_per_packet\":$mpp,\"intake_stall_cycles\":$stalls}")
done
if [ ${#lat[@]} -gt 0 ]; then
    printf '\n| class | hit latency median | hit latency mean | read8 stream hit latency median / mean | extra cycles per hit (mean) | cold request latency median / mean | intake stall cycles per cold request |\n'
    printf '|---|---|---|---|---|---|---|\n'
    for l in "${lat[@]}"; do
        read -r c hmed hmean cold cmed cmean per <<< "$l"
        if [ -n "${r8mean:-}" ]; then
            base="$r8med / $r8mean"
            extra=$(awk -v a="$hmean" -v b="$r8mean" 'BEGIN { printf "%.1f", a - b }')
        else
            base="(read8 not run)" extra="-"
        fi
        printf '| %s | %s | %s | %s | %s | %s %s / %s | %s |\n' "$c" "$hmed" "$hmean" "$base" "$extra" "$cold" "$cmed" "$cmean" "$per"
    done
fi
if [ -n "$json" ]; then
    (IFS=,; printf '{"seed":%s,"clock_mhz":%s,"classes":[%s]}\n' "$seed" "$mhz" "${rows[*]}") > "$json"
fi
