"""edm_pim_sched_ring against the edm-pim model: replay a vector file, compare every request and match.

Same vector files as the edm_pim_sched bench. Differences the bench allows for: notifications
wait for notif_ready (valid/ready), the scheduler clears its memories after reset (iter_busy),
and an iteration takes 3 * ceil(PORTS / LANES) + 4 cycles (asserted) instead of 3.
"""

import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb_base import start

from pim_vectors import check_outputs, expected_iteration, load


async def step(dut):
    await RisingEdge(dut.clk)


async def wait_high(dut, sig, limit, what):
    """Wait (at most `limit` cycles) until `sig` reads 1 in the current cycle."""
    for _ in range(limit):
        await ReadOnly()
        if int(getattr(dut, sig).value):
            return
        await step(dut)
    raise AssertionError(f"{what}: {sig} stayed low for {limit} cycles")


@cocotb.test()
async def replay_model_vectors(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-vectors pim`"
    ports = int(os.environ.get("PORTS", "4"))
    pw = max(1, (ports - 1).bit_length())
    lanes = int(os.environ.get("LANES", "1"))
    iter_cycles = 3 * -(-ports // lanes) + 4
    await start(dut, idle=("notif_valid", "rel_src_valid", "rel_dst_valid", "iter_start"), cycles=3, settle=1)
    await wait_high(dut, "notif_ready", ports + 2, "reset clear")
    await step(dut)

    lines = load(path)
    i = 0
    iterations = 0
    rounds = []  # iterations per maximal matching, for `S` traces
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
            await wait_high(dut, "notif_ready", iter_cycles, f"{path}:{i}")
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
            await ReadOnly()
            assert not int(dut.iter_busy.value), f"{path}:{i}: busy before iteration start"
            await step(dut)  # leave the read-only phase before driving
            dut.iter_start.value = 1
            await step(dut)
            dut.iter_start.value = 0
            cycles = 1
            while True:
                await ReadOnly()
                if int(dut.iter_done.value):
                    break
                assert cycles < iter_cycles + 8, f"{path}:{i}: iteration did not finish"
                await step(dut)
                cycles += 1
            assert cycles == iter_cycles, f"{path}:{i}: iteration took {cycles} cycles, want {iter_cycles}"
            check_outputs(dut, f"{path}:{i}", ports, pw, want_q, want_m)
            iterations += 1
            if round_iters is not None and want_q:
                round_iters += 1
            await step(dut)
    if round_iters is not None:
        rounds.append(round_iters)
        avg = sum(rounds) / len(rounds)
        dut._log.info(
            "PORTS=%d LANES=%d: %.2f iterations (%.1f cycles) per maximal matching over %d rounds",
            ports, lanes, avg, iter_cycles * avg, len(rounds),
        )
    dut._log.info("%d iterations (%d cycles each) matched the model (%s)", iterations, iter_cycles, path)
