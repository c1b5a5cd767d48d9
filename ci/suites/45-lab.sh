#!/usr/bin/env bash
# LAB.md runs: every ```sh block of LAB.md, in order, against stand-ins on a
# machine without boards or Xilinx tools. The fake xsct, bootgen and
# program_flash of host-sdk/flash/tests/fake record their arguments; a
# `vivado` shim runs bitstream/build.tcl under the stubbed flow (writing a
# hardware platform .xsa that holds a stand-in psu_init.tcl) and hands every
# other script to the fake hardware manager; QEMU stands in for the
# ZCU106's ARM cores and `clio sim` for the board. ```console blocks need
# real hardware and are skipped (LAB.md says so).
set -euo pipefail
ROOT="${CI_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$ROOT"

for tool in tclsh qemu-system-aarch64 zip unzip python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is not installed: cannot run LAB.md against stand-ins" >&2
        exit 77
    fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/clio-lab.XXXXXX")"
trap 'rm -rf "$work"' EXIT
bin="$work/bin"
mkdir -p "$bin"
fakes="$ROOT/host-sdk/flash/tests/fake"
for f in xsct xsct_stub.tcl bootgen program_flash vivado_stub.tcl; do
    cp "$fakes/$f" "$bin/$f"
done
cp "$fakes/vivado" "$bin/vivado-hw"
cat > "$bin/vivado" <<SHIM
#!/usr/bin/env bash
# Stand-in for vivado: the build script runs under the stubbed flow, any
# other script under the fake hardware manager.
set -euo pipefail
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
    if [[ "\${args[i]}" == -source && "\${args[i+1]}" == */build.tcl ]]; then
        for ((j = i; j < \${#args[@]}; j++)); do
            [[ "\${args[j]}" == -tclargs ]] && break
        done
        tclargs=("\${args[@]:j+1}")
        tclsh "$ROOT/bitstream/ci/stubbed_build.tcl" "\${tclargs[@]}"
        out="\${tclargs[1]}"
        if [[ -f "\$out/clio_zcu106.xsa" ]]; then
            # A hardware platform is a zip holding psu_init.tcl.
            tmp="\$(mktemp -d)"
            printf 'proc %s {} { rec %s }\n' psu_init psu_init psu_ps_pl_isolation_removal psu_ps_pl_isolation_removal \
                psu_ps_pl_reset_config psu_ps_pl_reset_config psu_protection psu_protection > "\$tmp/psu_init.tcl"
            rm -f "\$out/clio_zcu106.xsa"
            (cd "\$tmp" && zip -q "\$out/clio_zcu106.xsa" psu_init.tcl)
            rm -rf "\$tmp"
        fi
        exit 0
    fi
done
exec "$bin/vivado-hw" "\$@"
SHIM
chmod +x "$bin/vivado"

export OUT="$work/out"
mkdir -p "$OUT"
printf '\177ELF stand-in bl31' > "$OUT/bl31.elf"   # LAB.md builds or downloads it (console block)
unset XILINX_VITIS XILINX_VIVADO
export PATH="$bin:$PATH" QEMU_AUDIO_DRV=none

# The sh blocks, in order.
awk '/^```sh$/ { on = 1; n++; print "echo \"--- LAB.md block " n "\""; next } /^```/ { on = 0; next } on' LAB.md > "$work/lab.sh"
blocks=$(grep -c '^```sh$' LAB.md)
echo "running $blocks sh blocks of LAB.md"
bash -euo pipefail "$work/lab.sh" 2>&1 | tee "$work/lab.log"
# What a lab would see: each route ran through its (fake) tools, the EL3
# boot set SMPEN, and bring-up passed.
for want in "flashed zcu106 via Jtag" "flashed zcu106 via Qspi" "flashed zcu106 via Sd" \
    "EL3 setup core 0: CPUECTLR_EL1" " passed, 0 failed" "via cfgmem" "write_cfgmem -force"; do
    grep -qF -- "$want" "$work/lab.log" || { echo "FAIL: LAB.md run did not print \"$want\"" >&2; exit 1; }
done
grep -q -- '-arch' "$bin/bootgen.argv" || { echo "FAIL: bootgen not run" >&2; exit 1; }
grep -q -- 'qspi-x8-dual_parallel' "$bin/program_flash.argv" || { echo "FAIL: program_flash not run" >&2; exit 1; }
echo "LAB.md: all $blocks sh blocks ran against stand-ins"
