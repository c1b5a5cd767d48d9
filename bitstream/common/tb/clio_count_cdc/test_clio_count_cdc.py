"""clio_count_cdc between unrelated clocks: a counter stepped at random (at
most one per source cycle, wrapping at 2^WIDTH) is read in the other domain.
Every value the destination shows is one the counter held, in the order it
held them (never ahead of the source, never going back), and after the source
stops the destination shows its final value within a few cycles. Source
faster than destination and the reverse."""

import random

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge, Timer

from tb_base import start_clock

WIDTH = 10
MOD = 1 << WIDTH


async def run(dut, s_period, m_period, steps, p_step, seed):
    rng = random.Random(seed)
    start_clock(dut, "s_clk", s_period)
    start_clock(dut, "m_clk", m_period)
    dut.s_count.value = 0
    await ClockCycles(dut.m_clk, 8)
    # Unwrapped count of steps the source has taken (its value is count % MOD).
    state = {"count": 0, "done": False}

    async def source():
        while state["count"] < steps:
            await RisingEdge(dut.s_clk)
            if rng.random() < p_step:
                state["count"] += 1
                dut.s_count.value = state["count"] % MOD
        state["done"] = True

    cocotb.start_soon(source())
    seen = 0  # unwrapped count the destination last showed
    changes = 0
    while not state["done"]:
        await RisingEdge(dut.m_clk)
        v = int(dut.m_count.value)
        step = (v - seen) % MOD
        # A step of more than half the range would be the count going back.
        assert step < MOD // 2, f"m_count went back: {seen % MOD} -> {v}"
        seen += step
        changes += step != 0
        assert seen <= state["count"], f"m_count {v} is ahead of the source ({state['count'] % MOD})"
    for _ in range(8):
        await RisingEdge(dut.m_clk)
    assert int(dut.m_count.value) == state["count"] % MOD, (
        f"settled at {int(dut.m_count.value)}, source {state['count'] % MOD}"
    )
    dut._log.info(
        "s %.2f ns, m %.2f ns: %d steps (%d wraps), destination changed %d times",
        s_period, m_period, state["count"], state["count"] // MOD, changes,
    )
    await Timer(1, unit="ns")


@cocotb.test()
async def source_faster(dut):
    """2.56 ns source (the EDM TX clock), 4 ns destination (PCIe user clock)."""
    await run(dut, 2.56, 4.0, 6000, 0.7, 11)


@cocotb.test()
async def source_slower(dut):
    """4 ns source, 2.56 ns destination, steps in every source cycle."""
    await run(dut, 4.0, 2.56, 3000, 1.0, 12)
