"""clio_err_report: ERROR_REPORTs pushed to a model RX ring, notices first, the reports lost counted.

The bench is the engine: it enters S_REP with a report's fields set
(`s_status`, `s_pid`, `s_va`, `s_opcode`) and runs the stage (`s_valid`).
Notices may be queued (`s_fq_pending`): a flush the stage asks for
(`m_flush`) takes the engine away 1–8 cycles and drains them. A push
(`m_push`) takes it away 1–4 cycles (S_RING, S_RING_W) against a model RX
ring that is full now and then (`s_ring_full`, random while the engine is
away, so a stage that reads it early is caught); `m_done` ends the report.
The engine's hold (`s_en` low) comes now and then; outputs stay low while
the stage does not run. A reference here, written from the descriptor
offsets of the package, says per report what must happen: the descriptor
loaded in every cycle before the push (the flush's notices overwrite the
engine's ring descriptor), the count of reports lost it carries (those the
full ring dropped since the last one pushed, plus itself, saturating), and
the stage's cycles (one per state of the engine's former S_REP and
S_REP_DONE: the top's cycle counts depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from clio_tb import PKG, desc_put as put
from tb_base import engine_cycle, rng, start

P = PKG
IDLE_IN = ("s_valid", "s_en", "s_status", "s_pid", "s_va", "s_opcode", "s_fq_pending", "s_ring_full")
OUTS = ("m_done", "m_flush", "m_push", "m_desc_load")
M32 = (1 << 32) - 1


def report_desc(status, pid, va, opcode, lost):
    d = put(0, P["SLOT_OFF_KIND"], 1, P["DESC_ERROR_REPORT"])
    d = put(d, P["SLOT_OFF_STATUS"], 1, status)
    d = put(d, P["SLOT_OFF_PID"], 4, pid)
    d = put(d, P["SLOT_OFF_A"], 8, va)
    d = put(d, P["SLOT_OFF_B"], 1, opcode)
    return put(d, P["SLOT_OFF_F"], 4, lost)


class Ring:
    """The RX ring as the report sees it: full or not at each push; reports lost since the last pushed."""

    def __init__(self):
        self.lost = 0
        self.full = 0                                # the last push's result

    def push(self, full):
        self.full = full
        self.lost = min(self.lost + 1, M32) if full else 0


def expect(fields, pending, lost):
    desc = report_desc(*fields, min(lost + 1, M32))
    steps = [{"load": desc, "flush": 1}] if pending else []
    return steps + [{"load": desc, "push": 1}, {"done": 1}]


async def report(dut, r, fields, pending, ring, full_p, hold_p=0.2):
    """Run one report as the engine; returns the active cycles' outputs."""
    steps, away, back_full = [], 0, None

    def drive():
        dut.s_status.value, dut.s_pid.value, dut.s_va.value, dut.s_opcode.value = fields
        dut.s_fq_pending.value = pending
        dut.s_ring_full.value = ring.full if away == 0 else r.getrandbits(1)

    while True:
        if not await engine_cycle(dut, r, away, hold_p, OUTS, drive):
            if away:
                away -= 1
            continue
        o = {n[2:]: int(getattr(dut, n).value) for n in OUTS}
        assert o["flush"] + o["push"] + o["done"] == 1, f"one way on per cycle: {o}"
        step = {}
        if o["desc_load"]:
            step["load"] = int(dut.m_desc.value)
        for n in ("flush", "push", "done"):
            if o[n]:
                step[n] = 1
        steps.append(step)
        if o["flush"]:
            pending = 0                              # S_FLUSH returns once the queue is empty
            away = r.randrange(1, 9)
        elif o["push"]:
            ring.push(int(r.random() < full_p))
            away = r.randrange(1, 5)
        else:
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            return steps
        assert len(steps) < 10, steps


def random_fields(r):
    return (r.choice([P["STATUS_MALFORMED"], P["STATUS_UNMAPPED"], P["STATUS_BUSY"], r.getrandbits(8)]),
            r.getrandbits(32), r.getrandbits(64), r.getrandbits(8))


@cocotb.test()
async def reports(dut):
    """Random reports, notices queued or not, a ring that fills and drains: descriptors, counts, cycles."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    ring = Ring()
    seen = set()
    for k in range(500):
        full_p = [0.0, 0.5, 0.9][(k // 60) % 3]     # runs of full rings, then a push that clears the count
        fields = random_fields(r)
        pending = int(r.random() < 0.3)
        want = expect(fields, pending, ring.lost)
        for _ in range(r.randrange(0, 3)):
            await FallingEdge(dut.clk)               # the engine elsewhere
        got = await report(dut, r, fields, pending, ring, full_p)
        assert got == want, (k, got, want)
        seen.add((pending, min(ring.lost, 3)))
    assert {p for p, _ in seen} == {0, 1} and {n for _, n in seen} == {0, 1, 2, 3}, seen


@cocotb.test()
async def lost_count_saturates(dut):
    """2^32 - 1 reports lost: the count stays there, and a pushed report clears it; a reset clears it too."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    ring = Ring()
    # Drive the count near the top through the design's own register (2^32 pushes would take days).
    dut.unreported_reg.value = M32 - 2
    ring.lost = M32 - 2
    await RisingEdge(dut.clk)
    for k in range(5):
        fields = random_fields(r)
        want = expect(fields, 0, ring.lost)
        got = await report(dut, r, fields, 0, ring, 1.0, hold_p=0)
        assert got == want, (k, got, want)
    assert ring.lost == M32
    fields = random_fields(r)
    got = await report(dut, r, fields, 0, ring, 0.0, hold_p=0)
    assert got == expect(fields, 0, M32), got
    want = expect(fields, 0, 0)
    got = await report(dut, r, fields, 0, ring, 1.0, hold_p=0)
    assert got == want, got                          # cleared by the pushed one
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    ring.lost = 0
    got = await report(dut, r, fields, 0, ring, 0.0, hold_p=0)
    assert got == expect(fields, 0, 0), got          # the reset cleared the one lost above
