#!/usr/bin/env bash
# The netns fault campaign (issue #14, item 6): the SDK and an emulated board
# in separate network namespaces, joined by veth pairs through a middle
# namespace where the project's seeded fault proxy (clio-fault-proxy) relays
# UDP with loss, duplication, reordering, corruption and delay (this kernel
# has no netem and no iptables). Cases:
#   1. a seeded SDK workload (clio-netns-workload: writes across page and MTU
#      boundaries, reads, FAA, CAS, async batches, alloc/free) at 5 % loss +
#      2 % duplication + 25 % reordering + 1 % corruption each way, checked
#      against a local model (every read, every atomic's old value, and the
#      whole memory at the end), while a spoofing client on a third address
#      forges requests straight at the board (tests/python/spoof.py);
#   2. the board killed and restarted mid-workload: the SDK reports
#      BoardRestarted (never OK with zeros, never a hang), a new session works.
# Needs root (ip netns, veth). Traffic stays inside the namespaces. Prints the
# campaign's numbers (requests, retries, faults per kind, wall time).
# Knobs: NETNS_SEED (default 1), NETNS_OPS (default 2000), NETNS_FAULTS (the fault
# spec of both directions, without seed), CLIO_BIN (a prebuilt clio).
set -euo pipefail
cd "${CI_ROOT:-$(dirname "$0")/../..}"

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
    echo "45-netns-faults: needs root and iproute2 (ip netns); skipping"
    exit 77
fi
if ! command -v python3 >/dev/null; then
    echo "45-netns-faults: needs python3 (the spoofing client); skipping"
    exit 77
fi

SEED="${NETNS_SEED:-1}"
OPS="${NETNS_OPS:-2000}"
FAULTS="${NETNS_FAULTS:-drop=0.05,dup=0.02,reorder=0.25,window_us=2000,corrupt=0.01}"
PORT=47700
T0=$(date +%s%N)

# Cargo's output directory, absolute (CARGO_TARGET_DIR may be either).
TARGET="${CARGO_TARGET_DIR:-target}/debug"
[[ "$TARGET" == /* ]] || TARGET="$PWD/$TARGET"
if [[ -n ${CLIO_BIN:-} ]]; then
    cargo build --quiet -p clio-netns
    CLIO="$CLIO_BIN"
else
    cargo build --quiet -p clio-cli -p clio-netns
    CLIO="$TARGET/clio"
fi
PROXY="$TARGET/clio-fault-proxy"
WORKLOAD="$TARGET/clio-netns-workload"
SPOOF="$PWD/tests/python/spoof.py"

# Unique names (interface names stay within 15 characters).
tag=$(($$ % 100000))
NS_C="clio-c-$tag"   # client (SDK workload)
NS_M="clio-m-$tag"   # middle (fault proxy, router)
NS_B="clio-b-$tag"   # board (clio sim)
NS_S="clio-s-$tag"   # spoofer
LOG="$(mktemp -d "${TMPDIR:-/tmp}/clio-netns.XXXXXX")"
PIDS=()

cleanup() {
    local status=$?
    local p
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for ns in "$NS_C" "$NS_M" "$NS_B" "$NS_S"; do
        ip netns del "$ns" 2>/dev/null || true
    done
    if [[ $status -ne 0 ]]; then
        echo "45-netns-faults: FAILED; logs:"
        for f in "$LOG"/*; do
            [[ -f $f ]] || continue
            echo "--- $f"
            tail -n 40 "$f"
        done
    fi
    rm -rf "$LOG"
    exit "$status"
}
trap cleanup EXIT

# Topology: C 10.77.1.2 -- 10.77.1.1 M 10.77.2.1 -- 10.77.2.2 B
#                          M 10.77.3.1 -- 10.77.3.2 S
for ns in "$NS_C" "$NS_M" "$NS_B" "$NS_S"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
done
link() { # link NS_A IF_A ADDR_A NS_B IF_B ADDR_B
    ip link add "$2" type veth peer name "$5"
    ip link set "$2" netns "$1"
    ip link set "$5" netns "$4"
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$4" addr add "$6/24" dev "$5"
    ip -n "$1" link set "$2" up
    ip -n "$4" link set "$5" up
}
link "$NS_C" "vc$tag" 10.77.1.2 "$NS_M" "vmc$tag" 10.77.1.1
link "$NS_B" "vb$tag" 10.77.2.2 "$NS_M" "vmb$tag" 10.77.2.1
link "$NS_S" "vs$tag" 10.77.3.2 "$NS_M" "vms$tag" 10.77.3.1
ip netns exec "$NS_M" sysctl -q -w net.ipv4.ip_forward=1
ip -n "$NS_C" route add default via 10.77.1.1
ip -n "$NS_B" route add default via 10.77.2.1
ip -n "$NS_S" route add default via 10.77.3.1
BOARD="10.77.2.2:$PORT"

# start_board: clio sim in the board namespace; returns once it serves
# (its "serving on" line), its PID in BOARD_PID. Output goes on to a log.
start_board() {
    local n=$1 fd line
    exec {fd}< <(exec ip netns exec "$NS_B" "$CLIO" sim --listen "$BOARD" 2>&1)
    BOARD_PID=$!
    PIDS+=("$BOARD_PID")
    while IFS= read -r -t 60 -u "$fd" line; do
        echo "$line" >>"$LOG/board-$n.log"
        [[ $line == *"serving on"* ]] && break
    done
    if [[ $line != *"serving on"* ]]; then
        echo "board $n did not start"
        return 1
    fi
    cat <&"$fd" >>"$LOG/board-$n.log" &
    PIDS+=("$!")
    exec {fd}<&-
}

start_board 1

# The proxy reads nothing from stdin but stops at its end; its counters come
# on stdout. A coprocess gives both ends.
coproc PROXY_PROC {
    exec ip netns exec "$NS_M" "$PROXY" --listen "10.77.1.1:$PORT" --board "$BOARD" \
        --upstream-bind 10.77.2.1:0 \
        --to-board "$FAULTS,seed=$((SEED * 2))" --to-client "$FAULTS,seed=$((SEED * 2 + 1))" \
        2>"$LOG/proxy.log"
}
PROXY_PID=$PROXY_PROC_PID
PIDS+=("$PROXY_PID")
PROXY_OUT=${PROXY_PROC[0]}
PROXY_IN=${PROXY_PROC[1]}
IFS= read -r -t 30 -u "$PROXY_OUT" ready
[[ $ready == "ready"* ]] || { echo "proxy did not start: $ready"; exit 1; }

echo "== case 1: SDK workload through $FAULTS (seed $SEED, $OPS ops), spoofer on 10.77.3.2"
t1=$(date +%s%N)
ip netns exec "$NS_S" python3 "$SPOOF" 10.77.2.2 "$PORT" 150 "$SEED" >"$LOG/spoof.log" 2>&1 &
SPOOF_PID=$!
PIDS+=("$SPOOF_PID")
if ! timeout 150 ip netns exec "$NS_C" "$WORKLOAD" --board "10.77.1.1:$PORT" --seed "$SEED" \
    --ops "$OPS" --deadline-s 140 >"$LOG/workload.log" 2>&1; then
    echo "workload failed:"; cat "$LOG/workload.log"; exit 1
fi
cat "$LOG/workload.log"
if ! wait "$SPOOF_PID"; then
    echo "spoofer failed:"; cat "$LOG/spoof.log"; exit 1
fi
cat "$LOG/spoof.log"
echo "case 1: $((($(date +%s%N) - t1) / 1000000)) ms"

echo "== case 2: board killed and restarted mid-workload"
t2=$(date +%s%N)
exec {wfd}< <(exec timeout 90 ip netns exec "$NS_C" "$WORKLOAD" --board "10.77.1.1:$PORT" \
    --mode restart --seed "$SEED" --deadline-s 80 2>&1)
WL_PID=$!
PIDS+=("$WL_PID")
killed=0
last=""
while IFS= read -r -u "$wfd" line; do
    last=$line
    if [[ $killed -eq 0 && $line == "progress 200" ]]; then
        kill -9 "$BOARD_PID"
        wait "$BOARD_PID" 2>/dev/null || true
        start_board 2
        killed=1
        echo "board killed after 200 calls and restarted"
    fi
done
exec {wfd}<&-
wait "$WL_PID" || { echo "restart workload failed: $last"; exit 1; }
echo "$last"
[[ $killed -eq 1 && $last == PASS* ]] || { echo "restart case did not pass"; exit 1; }
echo "case 2: $((($(date +%s%N) - t2) / 1000000)) ms"

# Stop the proxy: end of its stdin; its counters follow on stdout.
exec {PROXY_IN}>&-
echo "== fault proxy counters (both cases)"
while IFS= read -r -t 30 -u "$PROXY_OUT" line; do
    echo "  $line"
done
wait "$PROXY_PID" || true
echo "45-netns-faults: passed in $((($(date +%s%N) - T0) / 1000000)) ms"
