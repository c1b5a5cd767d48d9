#!/usr/bin/env bash
# The SDK's examples (host-sdk/clio/examples: the crate-level quick start and
# the tour of issue #19: a 64 MiB allocation, records, a lock shared by 4
# threads, 10 000 async reads, the error cases; the same tour on the `u64`
# calls) against `clio sim` on
# loopback, and the Clio-MV and Clio-DF examples (issue #16: offloads 2 and 3
# of that board). The SDK may not depend on the emulator (top README's crate
# order), so the board is the `clio` binary's, as a user would run it.
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

# Two commands: `--examples` would also limit clio-cli to its examples.
cargo build --quiet -p clio-cli
cargo build --quiet -p clio --examples
cargo build --quiet -p clio-mv -p clio-df --examples
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" == /* ]] || target="$PWD/$target"
clio="${CLIO_BIN:-$target/debug/clio}"

log="$(mktemp "${TMPDIR:-/tmp}/clio-examples.XXXXXX")"
"$clio" sim --listen 127.0.0.1:0 2>"$log" &
sim=$!
trap 'kill "$sim" 2>/dev/null; wait "$sim" 2>/dev/null || true; rm -f "$log"' EXIT
# "serving on udp://ADDR" is printed once the board answers.
addr=""
for _ in $(seq 1 200); do
    addr="$(sed -n 's|.*serving on udp://\([0-9.:]*\).*|\1|p' "$log")"
    [[ -n "$addr" ]] && break
    kill -0 "$sim" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
done
[[ -n "$addr" ]] || { echo "clio sim did not start" >&2; cat "$log" >&2; exit 1; }

for ex in quick_start tour tour_low_level mv df; do
    ex="$target/debug/examples/$ex"
    echo "== $(basename "$ex") against udp://$addr"
    timeout 120 "$ex" "$addr"
done
