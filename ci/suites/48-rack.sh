#!/usr/bin/env bash
# A rack of emulated memory nodes (issue #22), processes on real UDP loopback:
# `clio demo --rack` runs its checked workload (spanning nodes, small allocations
# without controller trips, a migration under writers, the primary of a
# replicated region killed under writers, the dead node fenced), then a short
# `clio bench rack`, which fails if any acknowledged write or add is lost in its
# migration or failover runs.
set -euo pipefail
ROOT="${CI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$ROOT"
cargo build -q -p clio-cli
clio="${CARGO_TARGET_DIR:-$ROOT/target}/debug/clio"

"$clio" demo --rack --nodes 3
"$clio" bench rack --secs 0.2 --allocs 20 --writes 200 --chunks 2
echo "rack: passed"
