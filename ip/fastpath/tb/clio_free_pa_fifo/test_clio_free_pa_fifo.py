"""clio_free_pa_fifo against per-size Python FIFOs: pushes refused when full or of an unknown
size, first-word fall-through pops (the PPN in the cycle of the request), a push and a pop
in one cycle, the fill levels, and reset emptying every FIFO."""

import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from clio_tb import param, reset, start_clock


def shifts(dut):
    """The configured page shifts, entry 0 in the low byte (as the RTL reads them)."""
    n = param(dut, "NUM_SIZES")
    packed = param(dut, "SHIFTS")
    return [(packed >> (8 * i)) & 0xFF for i in range(n)]


async def sample(dut):
    """Outputs after the inputs of this cycle settle (before the next edge)."""
    await ReadOnly()
    ok = int(dut.pop_ok.value)
    # The PPN is defined only with `pop_ok` (an empty FIFO's head was never written).
    return dict(push_ready=int(dut.s_push_ready.value), push_known=int(dut.s_push_known.value),
                pop_ok=ok, pop_known=int(dut.pop_known.value),
                pop_ppn=int(dut.pop_ppn.value) if ok else None, level=int(dut.level.value))


def levels(dut, fifos, sizes, depth):
    aw = depth.bit_length()  # $clog2(DEPTH) + 1 for a power of two
    return sum(len(fifos[s]) << (i * aw) for i, s in enumerate(sizes))


@cocotb.test()
async def random_traffic(dut):
    """2 000 cycles of random pushes and pops (known and unknown sizes, often both at once),
    in alternating fill and drain phases."""
    depth = param(dut, "DEPTH")
    sizes = shifts(dut)
    unknown = [s for s in (12, 13, 21, 22, 30) if s not in sizes]
    start_clock(dut)
    dut.s_push_valid.value = 0
    dut.pop_en.value = 0
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    fifos = {s: deque() for s in sizes}
    seen = dict(full=0, empty=0, both=0, popped=0)
    for cycle in range(2000):
        await FallingEdge(dut.clk)
        # Fill and drain phases of 250 cycles, so every seed reaches both a full
        # and an empty FIFO many times (one steady mix drifts to one of them).
        fill = (cycle // 250) % 2 == 0
        push = rng.random() < (0.6 if fill else 0.35)
        pop = rng.random() < (0.35 if fill else 0.6)
        ps = rng.choice(sizes) if rng.random() < 0.9 or not unknown else rng.choice(unknown)
        qs = rng.choice(sizes) if rng.random() < 0.9 or not unknown else rng.choice(unknown)
        ppn = rng.getrandbits(32)
        dut.s_push_valid.value, dut.s_push_shift.value, dut.s_push_ppn.value = int(push), ps, ppn
        dut.pop_en.value, dut.pop_shift.value = int(pop), qs
        got = await sample(dut)
        ctx = f"cycle {cycle}: push {ps} pop {qs}"
        assert got["push_known"] == (ps in fifos), ctx
        assert got["push_ready"] == (ps in fifos and len(fifos[ps]) < depth), ctx
        assert got["pop_known"] == (qs in fifos), ctx
        assert got["pop_ok"] == (qs in fifos and len(fifos[qs]) > 0), ctx
        if got["pop_ok"]:
            assert got["pop_ppn"] == fifos[qs][0], f"{ctx}: ppn {got['pop_ppn']:#x}"
        assert got["level"] == levels(dut, fifos, sizes, depth), ctx
        seen["full"] += ps in fifos and len(fifos[ps]) == depth
        seen["empty"] += qs in fifos and not fifos[qs]
        # Both act on the state before the edge (a push into a full FIFO is refused even
        # when a pop frees a place in the same cycle).
        do_push = push and got["push_ready"]
        do_pop = pop and got["pop_ok"]
        seen["both"] += do_push and do_pop and ps == qs
        if do_pop:
            fifos[qs].popleft()
            seen["popped"] += 1
        if do_push:
            fifos[ps].append(ppn)
        await RisingEdge(dut.clk)
    dut._log.info("depth %d sizes %s: %s", depth, sizes, seen)
    assert seen["full"] > 10 and seen["empty"] > 10 and seen["both"] > 5, seen
    # Reset empties every FIFO.
    dut.s_push_valid.value = 0
    dut.pop_en.value = 0
    await reset(dut)
    for s in sizes:
        dut.pop_shift.value = s
        got = await sample(dut)
        assert got["pop_ok"] == 0 and got["level"] == 0
        await RisingEdge(dut.clk)


@cocotb.test()
async def order_per_size(dut):
    """Fill every size to DEPTH, then drain: each FIFO returns its own PPNs in order."""
    depth = param(dut, "DEPTH")
    sizes = shifts(dut)
    start_clock(dut)
    dut.s_push_valid.value = 0
    dut.pop_en.value = 0
    await reset(dut)
    want = {s: [(i << 8) | s for i in range(1, depth + 1)] for s in sizes}
    for i in range(depth):
        for s in sizes:
            await FallingEdge(dut.clk)
            dut.s_push_valid.value, dut.s_push_shift.value, dut.s_push_ppn.value = 1, s, want[s][i]
    await FallingEdge(dut.clk)
    dut.s_push_valid.value, dut.s_push_shift.value = 1, sizes[0]
    assert (await sample(dut))["push_ready"] == 0, "a full FIFO takes no more"
    await FallingEdge(dut.clk)
    dut.s_push_valid.value = 0
    for s in reversed(sizes):
        for i in range(depth):
            await FallingEdge(dut.clk)
            dut.pop_en.value, dut.pop_shift.value = 1, s
            got = await sample(dut)
            assert got["pop_ok"] and got["pop_ppn"] == want[s][i], (s, i, got)
    await FallingEdge(dut.clk)
    dut.pop_en.value = 0
