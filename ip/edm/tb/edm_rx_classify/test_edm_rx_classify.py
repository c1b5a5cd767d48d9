"""edm_rx_classify against the Rust RX shim: every memory block and every error counter."""

import os

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import reset, start_clock


@cocotb.test()
async def replay_model_vectors(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors rx`"
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    start_clock(dut)
    dut.in_valid.value = 0
    await reset(dut, cycles=3, settle=0)
    i = 0
    blocks = 0
    while i < len(lines):
        op = lines[i]
        i += 1
        if op[0] == "B":
            want = None
            while i < len(lines) and lines[i][0] in ("O", "M"):
                if lines[i][0] == "M":
                    want = (int(lines[i][1]), int(lines[i][2], 16), int(lines[i][3], 16))
                i += 1
            await FallingEdge(dut.clk)
            dut.in_hdr.value = int(op[1], 16)
            dut.in_data.value = int(op[2], 16)
            dut.in_valid.value = 1
            await RisingEdge(dut.clk)
            await ReadOnly()
            got = None
            if int(dut.mem_valid.value):
                got = (int(dut.mem_class.value), int(dut.mem_hdr.value), int(dut.mem_data.value))
            assert got == want, f"{path}:{i}: memory output {got} != model {want}"
            blocks += 1
        elif op[0] == "C":
            await FallingEdge(dut.clk)
            dut.in_valid.value = 0
            want = tuple(int(x) for x in op[1:])
            got = tuple(int(x.value) for x in (dut.cnt_unknown, dut.cnt_truncated, dut.cnt_stray, dut.cnt_bad_sync))
            assert got == want, f"{path}: counters {got} != model {want}"
    dut._log.info("%d blocks matched the model (%s)", blocks, path)
