"""edm_sw_forward against the Rust forwarding model: circuit checks, peer rewrite, fixed
latency, per-egress message order, and what is passed on, cycle by cycle."""

import os

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import start


def pack(values, width):
    v = 0
    for i, x in enumerate(values):
        v |= x << (i * width)
    return v


def field(sig, index, width):
    bits = str(sig.value)
    lo = len(bits) - (index + 1) * width
    part = bits[lo : lo + width]
    assert all(c in "01" for c in part), f"{sig._name}[{index}] = {part} is not 0/1"
    return int(part, 2)


@cocotb.test()
async def replay_model_vectors(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors fwd`"
    ports = int(os.environ.get("PORTS", "4"))
    pw = max(1, (ports - 1).bit_length())
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    cycles, cur, final = [], {"I": {}, "G": {}, "T": set(), "A": {}, "F": {}}, None
    for op in lines:
        if op[0] == "I":
            cur["I"][int(op[1])] = (int(op[2]), int(op[3], 16), int(op[4], 16))
        elif op[0] == "A":
            cur["A"][int(op[1])] = (int(op[2]), int(op[3], 16), int(op[4], 16))
        elif op[0] == "G":
            cur["G"][int(op[1])] = tuple(int(x) for x in op[2:])
        elif op[0] == "T":
            cur["T"].add(int(op[1]))
        elif op[0] == "F":
            cur["F"][int(op[1])] = (int(op[2], 16), int(op[3], 16))
        elif op[0] == "Z":
            cycles.append(cur)
            cur = {"I": {}, "G": {}, "T": set(), "A": {}, "F": {}}
        elif op[0] == "C":
            final = (int(op[1]), int(op[2]))
    await start(dut, idle=("in_valid", "grant_valid", "mid_unit"), cycles=3, settle=0)
    forwarded = 0
    for k, c in enumerate(cycles):
        await FallingEdge(dut.clk)
        dut.in_valid.value = pack([int(p in c["I"]) for p in range(ports)], 1)
        dut.in_class.value = pack([c["I"].get(p, (0, 0, 0))[0] for p in range(ports)], 3)
        dut.in_hdr.value = pack([c["I"].get(p, (0, 0, 0))[1] for p in range(ports)], 2)
        dut.in_data.value = pack([c["I"].get(p, (0, 0, 0))[2] for p in range(ports)], 64)
        g = [c["G"].get(p, (0, 0, 0, 0)) for p in range(ports)]
        dut.grant_valid.value = pack([int(p in c["G"]) for p in range(ports)], 1)
        dut.grant_kind.value = pack([x[0] for x in g], 3)
        dut.grant_id.value = pack([x[1] for x in g], 8)
        dut.grant_dst.value = pack([x[2] for x in g], pw)
        dut.grant_len.value = pack([x[3] for x in g], 16)
        dut.mid_unit.value = pack([int(p in c["T"]) for p in range(ports)], 1)
        await RisingEdge(dut.clk)
        await ReadOnly()
        pv = int(dut.pass_valid.value)
        got_a = {p: (field(dut.pass_class, p, 3), field(dut.pass_hdr, p, 2), field(dut.pass_data, p, 64)) for p in range(ports) if pv >> p & 1}
        assert got_a == c["A"], f"{path}: cycle {k}: passed {got_a} != model {c['A']}"
        fv = int(dut.fwd_valid.value)
        got_f = {p: (field(dut.fwd_hdr, p, 2), field(dut.fwd_data, p, 64)) for p in range(ports) if fv >> p & 1}
        assert got_f == c["F"], f"{path}: cycle {k}: forwarded {got_f} != model {c['F']}"
        forwarded += len(got_f)
    got = (int(dut.cnt_forwarded.value), int(dut.cnt_no_circuit.value))
    assert got == final, f"{path}: counters {got} != model {final}"
    assert int(dut.cnt_overflow.value) == 0
    dut._log.info("%d cycles matched the model (%s): %d blocks forwarded, %d chunks, %d dropped", len(cycles), path, forwarded, got[0], got[1])
