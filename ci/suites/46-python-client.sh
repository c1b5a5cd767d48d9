#!/usr/bin/env bash
# The Python client (tests/python/clio_client.py, written from the generated
# wire reference alone) against `clio sim` on loopback: CRC and the
# reference's worked packets byte for byte, a session, alloc/write/read/
# atomics/free, joining an address space, and spoofing attempts refused with
# at most one header-only answer that change nothing.
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

if ! command -v python3 >/dev/null; then
    echo "46-python-client: needs python3; skipping"
    exit 77
fi
if [[ -z ${CLIO_BIN:-} ]]; then
    cargo build --quiet -p clio-cli
    target="${CARGO_TARGET_DIR:-target}"
    [[ "$target" == /* ]] || target="$PWD/$target"
    export CLIO_BIN="$target/debug/clio"
fi
python3 tests/python/test_client.py
