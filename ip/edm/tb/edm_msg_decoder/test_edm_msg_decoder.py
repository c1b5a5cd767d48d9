"""edm_msg_decoder against the Rust assembler: every message header and body word, every /N/
and /G/, and the bad-field / bad-length counts, on a mix with corrupted and cut-short input."""

import os

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import reset, start_clock


def parse(path):
    inputs, events, counters = [], [], None
    with open(path) as f:
        for line in f:
            op = line.split()
            if not op:
                continue
            if op[0] == "I":
                inputs.append((int(op[1]), int(op[3], 16)))
            elif op[0] == "M":
                events.append(["M", tuple(int(x) for x in op[1:]), []])
            elif op[0] == "W":
                events[-1][2].append(int(op[1], 16))
            elif op[0] in ("N", "G"):
                events.append([op[0], tuple(int(x) for x in op[1:]), []])
            elif op[0] == "C":
                counters = (int(op[1]), int(op[2]))
    return inputs, [tuple([e[0], e[1], tuple(e[2])]) for e in events], counters


@cocotb.test()
async def matches_assembler(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors dec`"
    inputs, want, want_cnt = parse(path)
    start_clock(dut)
    dut.in_valid.value = 0
    await reset(dut, cycles=2, settle=0)
    got, words = [], []
    bad_field = bad_length = 0
    for k, (cls, data) in enumerate(inputs):
        await FallingEdge(dut.clk)
        dut.in_valid.value = 1
        dut.in_class.value = cls
        dut.in_data.value = data
        await RisingEdge(dut.clk)
        await ReadOnly()
        if cls in (1, 4):
            words = []
        if int(dut.body_valid.value):
            words.append(int(dut.body_data.value))
        if int(dut.msg_valid.value):
            if int(dut.msg_bad_field.value):
                bad_field += 1
            elif int(dut.msg_bad_length.value):
                bad_length += 1
            else:
                fields = tuple(int(getattr(dut, "msg_" + n).value) for n in ("kind", "last", "op", "peer", "id", "len"))
                got.append(("M", fields, tuple(words)))
            words = []
        if int(dut.ctl_valid.value):
            if int(dut.ctl_bad_field.value):
                bad_field += 1
            elif int(dut.ctl_grant.value):
                got.append(("G", (int(dut.ctl_peer.value), int(dut.ctl_id.value), int(dut.ctl_len.value), int(dut.ctl_kind.value)), ()))
            else:
                got.append(("N", (int(dut.ctl_peer.value), int(dut.ctl_id.value), int(dut.ctl_len.value)), ()))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{path}: event {i}: rtl {g} != model {w}"
    assert len(got) == len(want), f"{path}: {len(got)} events, model {len(want)}"
    assert (bad_field, bad_length) == want_cnt, f"{path}: counts {(bad_field, bad_length)} != model {want_cnt}"
    dut._log.info("%d blocks, %d events matched the model (%s); %d bad-field, %d bad-length", len(inputs), len(got), path, bad_field, bad_length)
