"""clio_chase against the reference model's walk (ip/fastpath/src/fastpath.rs
`chase`): lists with and without the key, cycles cut by max_hops, a null
pointer ending the walk, wrapping VA arithmetic, walks abandoned mid-way."""

import random

import cocotb
from cocotb.triggers import RisingEdge, Timer

from clio_tb import reset, start_clock

M64 = (1 << 64) - 1
WORD, VALUE, DONE = 0, 1, 2


def walk(mem, va, key, ko, no, vo, max_hops):
    """The model's walk: list of (cmd, va) steps and the final (cmd, node, hops)."""
    steps = []
    cur, hops = va, 0
    while True:
        if hops == max_hops:
            return steps, (DONE, None, hops)
        hops += 1
        a = (cur + ko) & M64
        steps.append(a)
        if mem(a) == key:
            return steps, (VALUE, cur, hops, (cur + vo) & M64)
        a = (cur + no) & M64
        steps.append(a)
        nxt = mem(a)
        if nxt == 0:
            return steps, (DONE, None, hops)
        cur = nxt


def make_list(rng):
    """Nodes at random VAs (some near the top of the VA space); a dict memory."""
    n = rng.randrange(1, 12)
    ko, no, vo = rng.randrange(0, 64), rng.randrange(0, 64), rng.randrange(0, 1 << 16)
    nodes = [rng.getrandbits(64) if rng.random() < 0.1 else rng.randrange(1, 1 << 40) for _ in range(n)]
    words = {}
    keys = [rng.getrandbits(64) for _ in range(n)]
    for i, v in enumerate(nodes):
        words[(v + ko) & M64] = keys[i]
        nxt = nodes[i + 1] if i + 1 < n else (nodes[rng.randrange(n)] if rng.random() < 0.3 else 0)
        words[(v + no) & M64] = nxt
    filler = rng.getrandbits(64)

    def mem(a):
        return words.get(a, filler)

    key = rng.choice(keys) if rng.random() < 0.6 else rng.getrandbits(64)
    return nodes[0], key, ko, no, vo, mem


@cocotb.test()
async def walks_against_model(dut):
    """Random lists (found, not found, cycles, hop limits) give the model's reads and answers."""
    start_clock(dut)
    dut.s_start.value = 0
    dut.s_word_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    seen = {VALUE: 0, DONE: 0, "limit": 0, "abandoned": 0}
    # At least 400 walks, and on until every outcome was seen more than 20 times
    # (some seeds draw few abandoned walks in the first 400), capped.
    walks = 0
    while walks < 400 or (walks < 4000 and not all(v > 20 for v in seen.values())):
        walks += 1
        va, key, ko, no, vo, mem = make_list(rng)
        max_hops = rng.choice([1, 2, 3, rng.randrange(1, 20), 64]) if rng.random() < 0.97 else 4096
        steps, end = walk(mem, va, key, ko, no, vo, max_hops)
        abandon = rng.random() < 0.1 and len(steps) > 1
        (dut.s_va.value, dut.s_key.value, dut.s_key_offset.value, dut.s_next_offset.value,
         dut.s_value_offset.value, dut.s_max_hops.value) = va, key, ko, no, vo, max_hops
        dut.s_start.value = 1
        await RisingEdge(dut.clk)
        dut.s_start.value = 0
        cut = rng.randrange(len(steps)) if abandon else None
        for i, a in enumerate(steps):
            while not dut.m_valid.value:
                await RisingEdge(dut.clk)
            await Timer(1, unit="ns")
            assert int(dut.m_cmd.value) == WORD and int(dut.m_va.value) == a, (i, hex(a))
            dut.m_ready.value = 1
            await RisingEdge(dut.clk)
            dut.m_ready.value = 0
            if i == cut:
                break  # a failed read: the engine answers the request and never returns the word
            for _ in range(rng.randrange(0, 3)):
                await RisingEdge(dut.clk)
            dut.s_word.value = mem(a)
            dut.s_word_valid.value = 1
            await RisingEdge(dut.clk)
            dut.s_word_valid.value = 0
        if cut is not None:
            seen["abandoned"] += 1
            continue
        while not dut.m_valid.value:
            await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        assert int(dut.m_cmd.value) == end[0]
        assert int(dut.m_hops.value) == end[2]
        if end[0] == VALUE:
            assert int(dut.m_node.value) == end[1] and int(dut.m_va.value) == end[3]
        elif end[2] == max_hops:
            seen["limit"] += 1
        seen[end[0]] += 1
        dut.m_ready.value = 1
        await RisingEdge(dut.clk)
        dut.m_ready.value = 0
        await RisingEdge(dut.clk)
        assert dut.m_valid.value == 0, "the walk is over"
    dut._log.info("%d walks: %s", walks, seen)
    assert all(v > 20 for v in seen.values()), seen
