#!/usr/bin/env bash
# Clio-KV (issue #16), CI-sized: `clio bench --only kv --quick` runs YCSB A-D
# (Zipf 0.99 and uniform, 64 B / 256 B / 1 KiB values, 2000 keys) against
# Clio-KV on an emulated board over UDP and, when installed, a real memcached
# and redis-server, sync and pipelined; the JSON report must hold a row per
# (value size, workload, distribution, mode) with every installed peer
# measured. Targets are reported, not enforced here (a loaded CI host).
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

cargo build --quiet -p clio-cli
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" == /* ]] || target="$PWD/$target"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
timeout 600 "$target/debug/clio" bench --only kv --quick --json > "$out"
python3 - "$out" <<'PY'
import json, shutil, sys
r = json.load(open(sys.argv[1]))
kv = [b for b in r["benchmarks"] if b["name"] == "kv"][0]
rows = kv["data"]["rows"]
assert len(rows) == 3 * 4 * 2 * 2, len(rows)
for row in rows:
    assert row["clio"]["ops_per_sec"] > 0, row
    for peer, binary in (("memcached", "memcached"), ("redis", "redis-server")):
        if shutil.which(binary):
            assert row[peer] and row[peer]["ops_per_sec"] > 0, (peer, row)
print(f"47-kv-bench: {len(rows)} rows, peers: {kv['data']['peers']}")
PY
