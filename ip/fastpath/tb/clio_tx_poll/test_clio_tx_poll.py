"""clio_tx_poll: the TX-ring poll loop against a model ring, with the engine's calls away for random cycles.

The bench is the engine: it idles (`s_idle`) for a few cycles, then runs
the stage in S_POLL (`s_valid`). A pop the stage asks for (`m_pop`) is done
against a model TX ring (a queue of slots: a command, a slot the ring
rejects, or a head that does not parse, which stays; then empty) while the
engine is away 1–4 cycles as in S_RING / S_RING_W; the outcome lines carry
random values until the engine is back, so a stage that reads them early is
caught. A report (`m_report`) or a command (`m_cmd`) takes the engine away
1–6 cycles; `m_done` sends it back to idle. The engine's hold (`s_en` low)
comes now and then. A reference here says per poll what must happen: the
pops, each outcome's report or command, where the poll ends (slot count
reached, empty ring, bad head) and the stage's cycles (one per state of the
engine's former S_POLL, S_POLL_POPPED, S_POLL_NEXT and S_POLL_DONE states:
the top's cycle counts depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from tb_base import engine_cycle, rng, start

IDLE_IN = ("s_idle", "s_valid", "s_en", "s_slots", "s_empty", "s_bad_head", "s_rejected")
OUTS = ("m_pop", "m_popped", "m_report", "m_cmd", "m_done")
CMD, REJ, BAD = "cmd", "rejected", "bad head"


def expect(ring, slots):
    """The events of one poll over `ring` (consumed as the ring would), its active cycles and why it ended."""
    ev, cyc, end = [], 0, "slots"
    for _ in range(slots):
        ev.append("pop")
        cyc += 2                                     # the slot, then its outcome
        if not ring:
            ev.append("empty")
            end = "empty"
            break
        head = ring[0]
        if head == BAD:
            ev.append("report")
            end = "bad head"
            break
        ring.pop(0)
        ev.append("report" if head == REJ else "cmd")
        cyc += 1                                     # the next slot
    else:
        cyc += 1                                     # the slot count reached
    ev.append("done")
    return (ev, cyc + 1), end                        # + the poll's end


async def poll(dut, r, ring, slots, hold_p=0.2, abandon_after=None):
    """Run one poll as the engine; returns (events, active cycles). With `abandon_after`,
    the engine goes idle after that many calls instead of coming back."""
    ev, active, calls = [], 0, 0
    away, back = 0, None                             # cycles away, and what the engine comes back with
    dut.s_slots.value = slots

    def drive():
        dut.s_idle.value = 0
        if away == 0 and back is not None:
            dut.s_empty.value, dut.s_bad_head.value, dut.s_rejected.value = back
        else:
            dut.s_empty.value, dut.s_bad_head.value, dut.s_rejected.value = \
                r.getrandbits(1), r.getrandbits(1), r.getrandbits(1)

    while True:
        if not await engine_cycle(dut, r, away, hold_p, OUTS, drive):
            if away:
                away -= 1
            continue
        active += 1
        outs = {name: int(getattr(dut, name).value) for name in OUTS}
        calls_now = outs["m_pop"] + outs["m_report"] + outs["m_cmd"] + outs["m_done"]
        assert calls_now <= 1, f"two ways out at once: {outs}"
        if outs["m_popped"]:
            assert back is not None, "an outcome taken without a pop"
            if back == (1, 0, 0):
                ev.append("empty")
            back = None
        else:
            assert not (outs["m_report"] or outs["m_cmd"]), f"a report or command without an outcome: {outs}"
        if outs["m_pop"]:
            ev.append("pop")
            if not ring:
                back = (1, 0, 0)
            elif ring[0] == BAD:
                back = (0, 1, int(r.random() < 0.5))     # a bad head wins over the rejection
            else:
                back = (0, 0, int(ring.pop(0) == REJ))
            away = r.randrange(1, 5)                 # S_RING, S_RING_W
        elif outs["m_report"]:
            ev.append("report")
            away = r.randrange(1, 7)                 # S_REP ... S_REP_DONE
        elif outs["m_cmd"]:
            ev.append("cmd")
            away = r.randrange(1, 7)                 # clio_tx_cmd and what follows it
        elif outs["m_done"]:
            ev.append("done")
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            dut.s_idle.value = 1
            return ev, active
        if calls_now:
            calls += 1
            if abandon_after is not None and calls == abandon_after:
                await FallingEdge(dut.clk)
                dut.s_valid.value = 0
                dut.s_idle.value = 1                 # the engine idles: the poll is gone
                return ev, active


def random_ring(r):
    ring = [r.choice([CMD, CMD, CMD, REJ]) for _ in range(r.randrange(0, 9))]
    if ring and r.random() < 0.2:
        ring.insert(r.randrange(len(ring) + 1), BAD)
    return ring


@cocotb.test()
async def polls(dut):
    """Random rings and slot counts: pops, reports, commands, the poll's end and its cycles."""
    await start(dut, idle=IDLE_IN, s_idle=1)
    r = rng()
    seen = set()
    for _ in range(600):
        ring = random_ring(r)
        slots = r.choice([0, 1, 2, 3, 4, 6, 8, 16])
        want_ring = list(ring)
        want, end = expect(want_ring, slots)
        for _ in range(r.randrange(0, 3)):
            await FallingEdge(dut.clk)           # the engine idles a while
        got = await poll(dut, r, ring, slots)
        assert got == want, (slots, got, want)
        assert ring == want_ring, (ring, want_ring)
        seen.add((end, got[0].count("report") > (end == "bad head"), "cmd" in got[0]))
    # Every way a poll ends, with and without rejected slots and commands on the way.
    assert {e for e, _, _ in seen} == {"slots", "empty", "bad head"}, seen
    assert len(seen) >= 9, seen


@cocotb.test()
async def poll_abandoned_then_new(dut):
    """The engine idles with a poll inside (after a pop or a command): the next poll starts at slot 0."""
    await start(dut, idle=IDLE_IN, s_idle=1)
    r = rng()
    for k in range(60):
        ring = [CMD] * 10
        await poll(dut, r, ring, 8, abandon_after=r.randrange(1, 6))
        await FallingEdge(dut.clk)               # one idle cycle
        slots = r.randrange(1, 6)
        ring = [CMD] * 10
        want, _ = expect(list(ring), slots)
        got = await poll(dut, r, ring, slots)
        assert got == want, (k, slots, got, want)


@cocotb.test()
async def reset_mid_poll(dut):
    """A reset while the engine is away on a command leaves the stage at slot 0 of the next poll."""
    await start(dut, idle=IDLE_IN, s_idle=1)
    r = rng()
    ring = [CMD] * 4
    await poll(dut, r, ring, 4, hold_p=0, abandon_after=4)   # pop, cmd, pop, cmd: slot 2 next
    dut.s_idle.value = 0                         # not idle: only the reset clears the stage
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    ring = [CMD] * 4
    want, _ = expect(list(ring), 3)
    got = await poll(dut, r, ring, 3, hold_p=0)
    assert got == want, (got, want)
