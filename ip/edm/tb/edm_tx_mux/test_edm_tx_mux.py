"""edm_tx_mux against the Rust TX shim: back-pressure, every output block and its source,
cycle by cycle, with frames preempted by memory units and IFGs reused."""

import os
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import reset, start_clock


@cocotb.test()
async def replay_model_vectors(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors tx`"
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    start_clock(dut)
    dut.enc_valid.value = 0
    dut.mem_valid.value = 0
    await reset(dut, cycles=3, settle=0)
    units = deque()  # each: deque of (hdr, data), plus its length
    cur = None
    i = 0
    cycle = 0
    preempted = 0
    while i < len(lines):
        await FallingEdge(dut.clk)
        while lines[i][0] == "U":
            n = int(lines[i][1])
            blk = deque((int(lines[i + 1 + k][1], 16), int(lines[i + 1 + k][2], 16)) for k in range(n))
            units.append((n, blk))
            i += n + 1
        e = lines[i]
        o = lines[i + 1]
        assert e[0] == "E" and o[0] == "O", f"{path}:{i}: malformed vectors"
        i += 2
        dut.enc_valid.value = int(e[1])
        dut.enc_hdr.value = int(e[3], 16)
        dut.enc_data.value = int(e[4], 16)
        if cur is None and units:
            cur = units.popleft()
        if cur is not None:
            n, blk = cur
            dut.mem_valid.value = 1
            dut.mem_hdr.value, dut.mem_data.value = blk[0]
            dut.mem_last.value = int(len(blk) == 1)
            dut.mem_len.value = n
        else:
            dut.mem_valid.value = 0
            dut.mem_last.value = 0
            dut.mem_len.value = 0
        await ReadOnly()
        ready = int(dut.enc_ready.value)
        assert ready == int(e[2]), f"{path}:{i} cycle {cycle}: enc_ready {ready} != model {e[2]}"
        took = cur is not None and int(dut.mem_ready.value)
        await RisingEdge(dut.clk)
        await ReadOnly()
        got = (int(dut.out_hdr.value), int(dut.out_data.value), int(dut.out_src.value))
        want = (int(o[1], 16), int(o[2], 16), int(o[3]))
        assert got == want, f"{path}:{i} cycle {cycle}: out {got[0]:x} {got[1]:016x} src {got[2]} != model {want[0]:x} {want[1]:016x} src {want[2]}"
        if took:
            cur[1].popleft()
            if not cur[1]:
                cur = None
        cycle += 1
    preempted = int(dut.cnt_preempted.value)
    reused = int(dut.cnt_idles_reused.value)
    dut._log.info("%d cycles matched the model (%s); %d frame blocks preempted, %d idles reused", cycle, path, preempted, reused)
