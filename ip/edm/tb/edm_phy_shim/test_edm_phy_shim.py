"""edm_phy_shim in loopback against the Rust models: random frames and memory units on TX
(frames preempted, IFGs reused), the scrambled line stream, optional sync-header corruption
on the wire, and on RX the reassembled decoder stream, the memory blocks and link_down."""

import os
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import start


def parse(path):
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    cycles, want_w, want_d, want_m, link = [], [], [], [], None
    cur = {"units": [], "corrupt": False}
    for op in lines:
        if op[0] == "U":
            cur["units"].append([])
        elif op[0] == "K":
            cur["units"][-1].append((int(op[1], 16), int(op[2], 16)))
        elif op[0] == "E":
            cur["enc"] = (int(op[1]), int(op[2]), int(op[3], 16), int(op[4], 16))
        elif op[0] == "X":
            cur["corrupt"] = True
        elif op[0] == "W":
            want_w.append((int(op[1], 16), int(op[2], 16)))
            cycles.append(cur)
            cur = {"units": [], "corrupt": False}
        elif op[0] == "D":
            want_d.append((int(op[1], 16), int(op[2], 16)))
        elif op[0] == "M":
            want_m.append((int(op[1]), int(op[2], 16), int(op[3], 16)))
        elif op[0] == "L":
            link = int(op[1])
    return cycles, want_w, want_d, want_m, link


@cocotb.test()
async def loopback_matches_model(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors phy`"
    cycles, want_w, want_d, want_m, want_link = parse(path)
    await start(dut, idle=("enc_valid", "txm_valid", "line_rx_valid"), cycles=3, settle=0)
    units = deque()
    cur = None
    corrupt_flags = deque()
    line = deque()
    got_w, got_d, got_m = [], [], []
    k = 0
    idle_after = 0
    while k < len(cycles) or line or idle_after < 12:
        await FallingEdge(dut.clk)
        if k < len(cycles):
            c = cycles[k]
            for u in c["units"]:
                units.append((len(u), deque(u)))
            corrupt_flags.append(c["corrupt"])
            off, ready, hdr, data = c["enc"]
            dut.enc_valid.value = off
            dut.enc_hdr.value = hdr
            dut.enc_data.value = data
        else:
            dut.enc_valid.value = 0
            idle_after += 1
        if cur is None and units:
            cur = units.popleft()
        if cur is not None:
            n, blk = cur
            dut.txm_valid.value = 1
            dut.txm_hdr.value, dut.txm_data.value = blk[0]
            dut.txm_last.value = int(len(blk) == 1)
            dut.txm_len.value = n
        else:
            dut.txm_valid.value = 0
        if line:
            h, d = line.popleft()
            dut.line_rx_valid.value = 1
            dut.line_rx_hdr.value = h
            dut.line_rx_data.value = d
        else:
            dut.line_rx_valid.value = 0
        await ReadOnly()
        if k < len(cycles):
            assert int(dut.enc_ready.value) == cycles[k]["enc"][1], f"{path}: cycle {k}: enc_ready differs"
        took = cur is not None and int(dut.txm_ready.value)
        await RisingEdge(dut.clk)
        await ReadOnly()
        if took:
            cur[1].popleft()
            if not cur[1]:
                cur = None
        if int(dut.line_tx_valid.value) and len(got_w) < len(cycles):
            h, d = int(dut.line_tx_hdr.value), int(dut.line_tx_data.value)
            if corrupt_flags.popleft():
                h = 0b11 if h == 0b01 else 0b00
            got_w.append((h, d))
            line.append((h, d))
        if int(dut.dec_valid.value):
            got_d.append((int(dut.dec_hdr.value), int(dut.dec_data.value)))
        if int(dut.rxm_valid.value):
            got_m.append((int(dut.rxm_class.value), int(dut.rxm_hdr.value), int(dut.rxm_data.value)))
        k += 1
    for i, (g, w) in enumerate(zip(got_w, want_w)):
        assert g == w, f"{path}: line block {i}: rtl {g[0]:x} {g[1]:016x} != model {w[0]:x} {w[1]:016x}"
    assert len(got_w) == len(want_w), f"{path}: {len(got_w)} line blocks, model {len(want_w)}"
    for i, (g, w) in enumerate(zip(got_d, want_d)):
        assert g == w, f"{path}: decoder block {i}: rtl {g[0]:x} {g[1]:016x} != model {w[0]:x} {w[1]:016x}"
    assert len(got_d) == len(want_d), f"{path}: {len(got_d)} decoder blocks, model {len(want_d)}"
    assert got_m == want_m, f"{path}: memory blocks differ ({len(got_m)} vs {len(want_m)})"
    assert int(dut.link_down.value) == want_link, f"{path}: link_down {int(dut.link_down.value)} != model {want_link}"
    dut._log.info("%d cycles matched the model (%s): %d memory blocks, link_down=%d", len(cycles), path, len(got_m), want_link)
