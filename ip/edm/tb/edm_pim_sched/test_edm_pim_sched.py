"""edm_pim_sched against the edm-pim model: replay a vector file, compare every request and match."""

import os

import cocotb
from cocotb.triggers import RisingEdge, ReadOnly

from tb_base import start

from pim_vectors import check_outputs, expected_iteration, load


async def step(dut):
    await RisingEdge(dut.clk)


@cocotb.test()
async def replay_model_vectors(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors pim`"
    ports = int(os.environ.get("PORTS", "4"))
    pw = max(1, (ports - 1).bit_length())
    await start(dut, idle=("notif_valid", "rel_src_valid", "rel_dst_valid", "iter_start"), cycles=3, settle=1)

    lines = load(path)
    i = 0
    iterations = 0
    rounds = []  # (iterations that matched, cycles) per maximal matching, for `S` traces
    round_iters = None
    while i < len(lines):
        op = lines[i]
        i += 1
        if op[0] == "N":
            t, s, d, b, tag, ok = (int(x) for x in op[1:])
            dut.notif_valid.value = 1
            dut.notif_src.value = s
            dut.notif_dst.value = d
            dut.notif_bytes.value = b
            dut.notif_tag.value = tag
            dut.notif_time.value = t
            await step(dut)
            dut.notif_valid.value = 0
            await ReadOnly()
            refused = int(dut.notif_refused.value)
            assert refused == (1 - ok), f"{path}:{i}: notification refused={refused}, model ok={ok}"
            await step(dut)
        elif op[0] == "S":
            if round_iters is not None:
                rounds.append(round_iters)
            round_iters = 0
        elif op[0] in ("RS", "RD"):
            sig = "rel_src" if op[0] == "RS" else "rel_dst"
            getattr(dut, sig + "_valid").value = 1
            getattr(dut, sig).value = int(op[1])
            await step(dut)
            getattr(dut, sig + "_valid").value = 0
        elif op[0] == "I":
            want_q, want_m, i = expected_iteration(lines, i)
            dut.iter_start.value = 1
            await step(dut)
            dut.iter_start.value = 0
            cycles = 1
            while True:
                await ReadOnly()
                if int(dut.iter_done.value):
                    break
                await step(dut)
                cycles += 1
            assert cycles == 3, f"{path}:{i}: iteration took {cycles} cycles"
            check_outputs(dut, f"{path}:{i}", ports, pw, want_q, want_m)
            iterations += 1
            if round_iters is not None and want_q:
                round_iters += 1
            await step(dut)
    if round_iters is not None:
        rounds.append(round_iters)
        avg = sum(rounds) / len(rounds)
        dut._log.info(
            "PORTS=%d: %.2f iterations (%.1f cycles) per maximal matching over %d rounds",
            ports, avg, 3 * avg, len(rounds),
        )
    dut._log.info("%d iterations matched the model (%s)", iterations, path)
