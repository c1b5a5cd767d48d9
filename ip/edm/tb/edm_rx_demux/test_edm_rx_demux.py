"""edm_rx_demux against the Rust RX shim: the decoder-side stream (frames reassembled into
consecutive blocks, memory cycles turned idle) and the memory-side blocks, cycle by cycle."""

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
    blocks, want_dec, want_mem, want_cnt = [], [], [], None
    for op in lines:
        if op[0] == "B":
            blocks.append((int(op[1], 16), int(op[2], 16)))
        elif op[0] == "O":
            want_dec.append((int(op[1], 16), int(op[2], 16)))
        elif op[0] == "M":
            want_mem.append((int(op[1]), int(op[2], 16), int(op[3], 16)))
        elif op[0] == "C":
            want_cnt = tuple(int(x) for x in op[1:])
    start_clock(dut)
    dut.in_valid.value = 0
    await reset(dut, cycles=3, settle=0)
    got_dec, got_mem = [], []

    async def sample():
        await ReadOnly()
        if int(dut.dec_valid.value):
            got_dec.append((int(dut.dec_hdr.value), int(dut.dec_data.value)))
        if int(dut.mem_valid.value):
            got_mem.append((int(dut.mem_class.value), int(dut.mem_hdr.value), int(dut.mem_data.value)))

    for hdr, data in blocks:
        await FallingEdge(dut.clk)
        dut.in_hdr.value = hdr
        dut.in_data.value = data
        dut.in_valid.value = 1
        await RisingEdge(dut.clk)
        await sample()
    await FallingEdge(dut.clk)
    dut.in_valid.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
        await sample()
    for k, (g, w) in enumerate(zip(got_dec, want_dec)):
        assert g == w, f"{path}: decoder block {k}: rtl {g[0]:x} {g[1]:016x} != model {w[0]:x} {w[1]:016x}"
    assert len(got_dec) == len(want_dec), f"{path}: {len(got_dec)} decoder blocks, model {len(want_dec)}"
    assert got_mem == want_mem, f"{path}: memory-side blocks differ"
    got_cnt = tuple(int(x.value) for x in (dut.cnt_unknown, dut.cnt_truncated, dut.cnt_stray, dut.cnt_bad_sync))
    assert got_cnt == want_cnt, f"{path}: counters {got_cnt} != model {want_cnt}"
    assert int(dut.cnt_overflow.value) == 0
    dut._log.info("%d blocks matched the model (%s), %d frames released", len(blocks), path, int(dut.cnt_frames.value))
