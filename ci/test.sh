#!/usr/bin/env bash
# The project's one test command (see ci/README.md).
#
# 1. setup: installs what is missing (aarch64-unknown-none target, HDL and
#    QEMU tools, memcached, cocotb), idempotently and quietly;
# 2. cargo fmt --check, clippy and rustdoc with warnings denied, the tests (nextest when
#    available) and the doc tests;
# 3. every suite in ci/suites/*.sh, in name order, plus component hooks
#    (ip/*/tb/run.sh, firmware-arm/*/ci.sh) that no suite already runs; the
#    hooks no suite names run in a second lane beside the suites.
# Stops at the first failure with a non-zero exit; prints a timed summary.
#
# Knobs (environment):
#   CI_SKIP_SETUP=1        do not install anything
#   CI_PACKAGES="a b"      run the cargo steps on these packages only
#   CI_SKIP_CARGO=1        skip the cargo steps
#   CI_SKIP_SUITES=1       skip the suites and hooks
#   CI_SUITES="pat ..."    run only suites whose file name contains one of the words
#   CI_STRICT=1            a suite that skips itself (exit 77) fails the run (default when CI=true)
#   CI_SERIAL=1            run the hooks after the suites instead of beside them
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CI_ROOT="$ROOT"
# Where pip puts scripts (cocotb-config) for a non-root user.
export PATH="$PATH:$HOME/.local/bin"

# Tool command -> Debian package that provides it.
APT_TOOLS=(
    "verilator:verilator"
    "iverilog:iverilog"
    "yosys:yosys"
    "qemu-system-aarch64:qemu-system-arm"
    "memcached:memcached"
    "redis-server:redis-server"
    "make:make"
    "tclsh:tcl"
)
FIRMWARE_TARGET="aarch64-unknown-none"
SKIP_EXIT=77
# The RTL benches' Python packages, pinned to the versions they were written against.
COCOTB_PKGS=(cocotb==2.1.0 cocotbext-axi==0.1.28)
# In CI every suite must really run: a skip (missing tool) is a failure there.
if [[ "${CI:-}" == true ]]; then
    export CI_STRICT="${CI_STRICT:-1}"
fi

STEP_NAMES=()
STEP_TIMES=()
STEP_RESULTS=()
RUN_START=$(date +%s%N)
LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/clio-ci.XXXXXX")"

ms_since() {
    echo $((($(date +%s%N) - $1) / 1000000))
}

fmt_ms() {
    printf '%d.%03ds' $(($1 / 1000)) $(($1 % 1000))
}

summary() {
    local status=$?
    echo
    echo "==================== summary ===================="
    local i
    for i in "${!STEP_NAMES[@]}"; do
        printf '  %-6s %10s  %s\n' "${STEP_RESULTS[$i]}" "$(fmt_ms "${STEP_TIMES[$i]}")" "${STEP_NAMES[$i]}"
    done
    echo "  total  $(fmt_ms "$(ms_since "$RUN_START")")"
    if [[ $status -eq 0 ]]; then
        echo "  result: PASS"
    else
        echo "  result: FAIL (exit $status)"
    fi
    if [[ -n "${LANE_PID:-}" ]]; then
        kill -- "-$LANE_PID" 2>/dev/null || true
    fi
    rm -rf "$LOG_DIR"
    return "$status"
}
trap summary EXIT

# step NAME CMD... : runs CMD with a header and its elapsed time; stops the run on failure.
# A command exiting 77 counts as skipped (a failure under CI_STRICT=1).
step() {
    local name=$1
    shift
    echo
    echo "==> ${name}"
    local start rc=0
    start=$(date +%s%N)
    "$@" </dev/null || rc=$?
    record "$name" "$(ms_since "$start")" "$rc"
}

# record NAME MS RC : adds a step to the summary with its footer; stops the run
# on failure (RC 77 is a skip, a failure under CI_STRICT=1).
record() {
    local name=$1 took=$2 rc=$3
    STEP_NAMES+=("$name")
    STEP_TIMES+=("$took")
    if [[ $rc -eq 0 ]]; then
        STEP_RESULTS+=("ok")
        echo "<== ${name}: ok in $(fmt_ms "$took")"
    elif [[ $rc -eq $SKIP_EXIT && "${CI_STRICT:-0}" != 1 ]]; then
        STEP_RESULTS+=("SKIP")
        echo "<== ${name}: SKIPPED in $(fmt_ms "$took")"
    else
        STEP_RESULTS+=("FAIL")
        echo "<== ${name}: FAILED (exit $rc) after $(fmt_ms "$took")" >&2
        exit "$rc"
    fi
}

# quiet LOGNAME CMD... : runs CMD with its output in a log that is shown only on failure.
quiet() {
    local log="$LOG_DIR/$1.log"
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "command failed: $*" >&2
        tail -n 40 "$log" >&2
        return 1
    fi
}

as_root() {
    if [[ $EUID -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        echo "need root (or passwordless sudo) to run: $*" >&2
        return 1
    fi
}

setup_rust_target() {
    if ! command -v rustup >/dev/null; then
        if rustc --print sysroot >/dev/null 2>&1 &&
            [[ -d "$(rustc --print sysroot)/lib/rustlib/$FIRMWARE_TARGET" ]]; then
            return 0
        fi
        echo "rustup is missing and rustc has no $FIRMWARE_TARGET target" >&2
        return 1
    fi
    # The toolchain named by rust-toolchain.toml (older rustup installs it on `rustup show`).
    if ! rustc -V >/dev/null 2>&1; then
        echo "rust toolchain: installing"
        quiet rustup-toolchain rustup toolchain install ||
            quiet rustup-show rustup show || return 1
    fi
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        echo "rust components: installing rustfmt, clippy"
        quiet rustup-components rustup component add rustfmt clippy || return 1
    fi
    if rustup target list --installed | grep -qx "$FIRMWARE_TARGET"; then
        echo "rust target $FIRMWARE_TARGET: present"
    else
        echo "rust target $FIRMWARE_TARGET: installing"
        quiet rustup-target rustup target add "$FIRMWARE_TARGET"
    fi
}

setup_apt_tools() {
    local missing=() entry cmd pkg
    for entry in "${APT_TOOLS[@]}"; do
        cmd=${entry%%:*}
        pkg=${entry#*:}
        command -v "$cmd" >/dev/null || missing+=("$pkg")
    done
    if ! python3 -m pip --version >/dev/null 2>&1 && ! python3 -c 'import cocotb' 2>/dev/null; then
        missing+=("python3-pip")
    fi
    if [[ ${#missing[@]} -eq 0 ]]; then
        echo "system tools: all present"
        return 0
    fi
    echo "system tools: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    quiet apt-update as_root apt-get update -qq || return 1
    quiet apt-install as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

setup_cocotb() {
    if python3 -c 'import cocotb, cocotbext.axi' 2>/dev/null; then
        echo "cocotb: present"
        return 0
    fi
    echo "cocotb: installing"
    local pip=(python3 -m pip install --quiet --disable-pip-version-check)
    # Debian marks its Python as externally managed (PEP 668); fall back to --break-system-packages.
    "${pip[@]}" "${COCOTB_PKGS[@]}" >"$LOG_DIR/pip-cocotb.log" 2>&1 ||
        quiet pip-cocotb-system "${pip[@]}" --break-system-packages "${COCOTB_PKGS[@]}"
    python3 -c 'import cocotb, cocotbext.axi'
}

first_line() {
    "$@" 2>/dev/null | head -n 1 || true
}

# One line per tool, so a log says what it ran with.
show_versions() {
    echo "versions:"
    printf '  %s\n' "$(first_line rustc -V)" "$(first_line cargo -V)" \
        "$(first_line verilator --version)" "$(first_line iverilog -V)" \
        "$(first_line yosys -V)" "$(first_line qemu-system-aarch64 --version)" \
        "$(first_line memcached -V)" "$(first_line python3 --version)" \
        "cocotb $(first_line python3 -c 'import cocotb; print(cocotb.__version__)')"
}

# Chained with && because `step` runs it in an `||` context, where bash ignores `set -e`.
setup() {
    setup_rust_target && setup_apt_tools && setup_cocotb && show_versions
}

# Cargo arguments selecting the packages: the workspace, or CI_PACKAGES.
package_args() {
    if [[ -n "${CI_PACKAGES:-}" ]]; then
        local p
        for p in $CI_PACKAGES; do
            printf '%s\n' -p "$p"
        done
    else
        printf '%s\n' --workspace
    fi
}

cargo_steps() {
    local pkgs fmt_pkgs
    mapfile -t pkgs < <(package_args)
    if [[ -n "${CI_PACKAGES:-}" ]]; then
        fmt_pkgs=("${pkgs[@]}")
    else
        fmt_pkgs=(--all)
    fi
    step "cargo fmt --check" cargo fmt "${fmt_pkgs[@]}" --check
    step "cargo clippy (-D warnings)" cargo clippy "${pkgs[@]}" --all-targets -- -D warnings
    # Broken intra-doc links and private-item links in public docs fail here, not in a reader's browser.
    step "cargo doc (-D warnings)" env RUSTDOCFLAGS="-D warnings" cargo doc "${pkgs[@]}" --no-deps
    if cargo nextest --version >/dev/null 2>&1; then
        step "cargo nextest run" cargo nextest run "${pkgs[@]}" --no-tests=warn
        step "cargo test --doc" cargo test "${pkgs[@]}" --doc
    else
        step "cargo test" cargo test "${pkgs[@]}"
    fi
}

# Whether `word` is selected by CI_SUITES (everything when unset).
selected() {
    [[ -z "${CI_SUITES:-}" ]] && return 0
    local w
    for w in $CI_SUITES; do
        [[ "$1" == *"$w"* ]] && return 0
    done
    return 1
}

# The hook lane: runs each hook given, in order, its output to
# $LOG_DIR/lane-N.log and "rc ms" to $LOG_DIR/lane-N.rc. Started with setsid,
# so a failing run can stop the whole lane by its process group.
# shellcheck disable=SC2016 # expanded by the lane's own bash
HOOK_LANE='
for i in $(seq 1 $#); do
    h=${!i}
    start=$(date +%s%N)
    rc=0
    (cd "$(dirname "$h")" && bash "./$(basename "$h")") >"$LOG_DIR/lane-$i.log" 2>&1 </dev/null || rc=$?
    echo "$rc $((($(date +%s%N) - start) / 1000000))" >"$LOG_DIR/lane-$i.rc"
done'

suite_steps() {
    shopt -s nullglob
    local suites=(ci/suites/*.sh) hooks=(ip/*/tb/run.sh firmware-arm/*/ci.sh) s h ran=0
    # Hooks that no suite names run in a second lane beside the suites: they are
    # mostly single-threaded simulators (Icarus, Verilator, QEMU), as are most
    # suites, so on a 2-core runner the two lanes overlap instead of queueing.
    # A hook a suite names waits for the suites (it may already have run there).
    local lane=() after=()
    for h in "${hooks[@]}"; do
        selected "$h" || continue
        if [[ "${CI_SERIAL:-0}" != 1 ]] && ! grep -qF "$h" "${suites[@]}"; then
            lane+=("$h")
        else
            after+=("$h")
        fi
    done
    if [[ ${#lane[@]} -gt 0 ]]; then
        echo "hooks beside the suites: ${lane[*]}"
        LOG_DIR="$LOG_DIR" setsid bash -c "$HOOK_LANE" hook-lane "${lane[@]}" &
        LANE_PID=$!
    fi
    # Which scripts the suites really run: every bash they start sources
    # BASH_ENV, which notes the script's path. A hook a suite ran is not run
    # again; a hook a suite only mentions (a comment, a skipped branch) is.
    local ledger="$LOG_DIR/scripts-run"
    : >"$ledger"
    printf '%s\n' '[[ -n "${CI_SCRIPTS_RUN:-}" && -f "$0" ]] && realpath "$0" >>"$CI_SCRIPTS_RUN"' \
        >"$LOG_DIR/note-script.sh"
    export CI_SCRIPTS_RUN="$ledger" BASH_ENV="$LOG_DIR/note-script.sh"
    for s in "${suites[@]}"; do
        selected "$s" || continue
        step "suite ${s}" bash "$s"
        ran=$((ran + 1))
    done
    unset BASH_ENV CI_SCRIPTS_RUN
    if [[ -n "${LANE_PID:-}" ]]; then
        wait "$LANE_PID" || true
        LANE_PID=
        local i rc took
        for i in "${!lane[@]}"; do
            h=${lane[$i]}
            echo
            echo "==> hook ${h} (ran beside the suites)"
            cat "$LOG_DIR/lane-$((i + 1)).log" 2>/dev/null || true
            if [[ -f "$LOG_DIR/lane-$((i + 1)).rc" ]]; then
                read -r rc took <"$LOG_DIR/lane-$((i + 1)).rc"
            else
                rc=1 took=0
                echo "hook ${h}: the lane stopped before it finished" >&2
            fi
            record "hook ${h}" "$took" "$rc"
            ran=$((ran + 1))
        done
    fi
    for h in "${after[@]}"; do
        if grep -qxF "$(realpath "$h")" "$ledger"; then
            echo "hook ${h}: already run by a suite"
            continue
        fi
        step "hook ${h}" bash -c 'cd "$(dirname "$1")" && bash "./$(basename "$1")"' hook "$h"
        ran=$((ran + 1))
    done
    shopt -u nullglob
    echo
    echo "suites and hooks run: $ran"
}

echo "clio-stack CI in $ROOT (CI=${CI:-false})"
if [[ "${CI_SKIP_SETUP:-0}" != 1 ]]; then
    step "setup (tools)" setup
fi
if [[ "${CI_SKIP_CARGO:-0}" != 1 ]]; then
    cargo_steps
fi
if [[ "${CI_SKIP_SUITES:-0}" != 1 ]]; then
    suite_steps
fi
