"""clio_chase_read: the pointer chase's reads against a model page map and memory, with the engine's calls away.

The bench is the engine and clio_chase: it starts a chase (`s_start` with
the value's length, as S_DISPATCH does), then runs the stage in S_CH
(`s_valid`). The walk's steps (words to read, then the value or the end)
are presented 1–3 cycles after the start or after the word before them was
handed back, held until taken. A translation (`m_xl`) or a page look-up
(`m_page`) takes the engine away 1–6 cycles; back from a look-up, the page
of the byte named (`m_cur`) is the engine's translated page (`s_pg_*`); the
data loop's start (`m_d0`) clears it, as S_CH_D0 does. A read (`m_read`)
takes it away 1–4 cycles and comes back with the bytes of the beat from the
address's lane (`s_rd`, random until then) and the count (`s_k`). The
engine's hold (`s_en` low) comes now and then; outputs stay low while the
stage does not run. A reference here says per chase what must happen: each
read's physical address and byte count (up to the end of the beat, of the
bytes wanted and of the page), the page look-ups, each word handed back (the
little-endian word at its VA), the value's bytes written in order, the
answer (found, the value's length, the hops) and the stage's cycles (one per
state of the engine's former S_CH_STEP, S_CH_D0, S_CH_D1, S_CH_D2 and
S_CH_RESP, the walk's waits aside: the top's cycle counts depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from tb_base import engine_cycle, rng, start

IDLE_IN = ("s_start", "s_vlen", "s_valid", "s_en", "s_walk_valid", "s_walk_cmd", "s_walk_va", "s_walk_hops",
           "s_pg_ok", "s_pg_start", "s_pg_end", "s_pg_ppn", "s_pg_shift", "s_rd", "s_k")
OUTS = ("m_walk_ready", "m_word_valid", "m_step", "m_xl", "m_d0", "m_page", "m_read", "m_wr_found",
        "m_wr_value", "m_wr_not_found", "m_done")
WORD, VALUE, DONE = 0, 1, 2
BEAT = 64
M64 = (1 << 64) - 1


class Mem:
    """VA pages (4 KiB or 64 KiB) mapped to random PPNs over a random-byte physical memory."""

    def __init__(self, r):
        self.r = r
        self.shift = r.choice([12, 12, 16])
        base = r.randrange(1, 1 << 20) << 16
        self.vpages = [base + (i << self.shift) for i in range(4)]
        self.ppn = {v: r.randrange(1, 1 << 18) for v in self.vpages}
        self.seed = r.getrandbits(32)

    def page(self, va):
        for v in self.vpages:
            if v <= va < v + (1 << self.shift):
                return v
        raise AssertionError(f"VA {va:#x} outside the mapped pages")

    def pa(self, va):
        v = self.page(va)
        return (self.ppn[v] << self.shift) | (va - v)

    def byte(self, pa):
        return (pa * 2654435761 + self.seed) >> 7 & 0xFF

    def lane_bytes(self, pa):
        """The beat's bytes from pa's lane up (what the top hands over: 8 of them, zeros past the beat)."""
        n = min(8, BEAT - pa % BEAT)
        return int.from_bytes(bytes(self.byte(pa + j) for j in range(n)), "little")

    def word(self, va):
        return int.from_bytes(bytes(self.byte(self.pa(va + j)) for j in range(8)), "little")

    def some_va(self, n):
        """A VA with n bytes mapped from it, near a page end now and then."""
        lo, hi = self.vpages[0], self.vpages[-1] + (1 << self.shift) - n
        if self.r.random() < 0.4:
            end = self.r.choice(self.vpages[1:])
            return max(lo, min(hi, end - self.r.randrange(1, max(2, n + 1))))
        return self.r.randrange(lo, hi + 1)


def expect_reads(mem, va, n):
    """The page look-ups and reads (pa, k) of n bytes at va, from a cleared page."""
    calls, pos, got, page = [], va, 0, None
    while got < n:
        if page is None or not page <= pos < page + (1 << mem.shift):
            page = mem.page(pos)
            calls.append(("page", pos))
        pa = mem.pa(pos)
        k = min(BEAT - pa % BEAT, n - got, page + (1 << mem.shift) - pos)
        calls.append(("read", pa, k))
        got += k
        pos += k
    return calls


def expect(mem, steps, vlen):
    """Calls, words, value offsets, the answer and the stage's cycles (the walk's waits aside)."""
    ev, cyc = [], 0
    for cmd, va, hops in steps:
        cyc += 1                                     # the step taken
        if cmd == DONE:
            break
        n = 8 if cmd == WORD else vlen
        ev.append(("xl", va, (va + n) & ((1 << 65) - 1)))
        if cmd == VALUE:
            ev.append(("fixed",))
        reads = expect_reads(mem, va, n)
        got = 0
        for c in reads:
            ev.append(c)
            if c[0] == "read" and cmd == VALUE:
                ev.append(("value", got, c[2]))       # written as it arrives
            got += c[2] if c[0] == "read" else 0
        cyc += 1 + sum(1 if c[0] == "page" else 2 for c in reads) + 1   # D0, the loop, the last D1
        if cmd == WORD:
            ev.append(("word", mem.word(va)))
        else:
            break
    found = steps[-1][0] == VALUE
    if not found:
        ev.append(("not found", steps[-1][2]))
    ev.append(("done", int(found), vlen, steps[-1][2]))
    return ev, cyc + 1                               # + the answer


async def chase(dut, r, mem, steps, vlen, hold_p=0.2, abandon_at=None):
    """Run one chase as the engine and the walk; returns (events, active cycles less the walk's waits)."""
    ev, active, away = [], 0, 0
    pg = None                                        # the engine's translated page (None: pg_ok low)
    back = None                                      # what a read brings back
    steps = list(steps)
    wait = r.randrange(1, 4)                         # clio_chase: the first step a cycle or more after start
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    dut.s_start.value = 1
    dut.s_vlen.value = vlen
    await RisingEdge(dut.clk)

    def drive():
        dut.s_start.value = 0
        dut.s_walk_valid.value = int(wait == 0 and bool(steps))
        if steps:
            dut.s_walk_cmd.value, dut.s_walk_va.value, dut.s_walk_hops.value = steps[0]
        dut.s_pg_ok.value = int(pg is not None)
        if pg is not None:
            dut.s_pg_start.value = pg
            dut.s_pg_end.value = pg + (1 << mem.shift)
            dut.s_pg_ppn.value = mem.ppn[pg]
        dut.s_pg_shift.value = mem.shift
        if away == 0 and back is not None:
            dut.s_rd.value, dut.s_k.value = back
        else:
            dut.s_rd.value, dut.s_k.value = r.getrandbits(64), r.randrange(0, 65)

    calls = 0
    while True:
        runs = await engine_cycle(dut, r, away, hold_p, OUTS, drive)
        if wait:
            wait -= 1
        if not runs:
            if away:
                away -= 1
            continue
        o = {n[2:]: int(getattr(dut, n).value) for n in OUTS}
        active += 1
        if o["walk_ready"] and not (o["step"]):
            assert int(dut.s_walk_valid.value) == 0, "a valid step not taken"
            active -= 1                              # the walk's wait, not the stage's
        assert o["walk_ready"] or not o["step"], "a step taken while not ready"
        if o["step"]:
            steps.pop(0)
        if o["xl"]:
            ev.append(("xl", int(dut.s_walk_va.value), int(dut.m_xl_end.value)))
        if o["wr_found"]:
            ev.append(("fixed",))
        if o["d0"]:
            pg = None
        if o["page"]:
            ev.append(("page", int(dut.m_cur.value)))
        if o["read"]:
            pa, k = int(dut.m_pa.value), int(dut.m_k.value)
            ev.append(("read", pa, k))
            back = (mem.lane_bytes(pa), k)
        if o["word_valid"]:
            ev.append(("word", int(dut.m_word.value)))
            wait = r.randrange(1, 4)
        if o["wr_value"]:
            ev.append(("value", int(dut.m_got.value), int(dut.s_k.value)))
            back = None
        if o["wr_not_found"]:
            ev.append(("not found", int(dut.m_hops.value)))
        if o["done"]:
            assert int(dut.m_resp_state.value) == 1, "the answer's hold names its state"
            ev.append(("done", int(dut.m_found.value), int(dut.m_vlen.value), int(dut.m_hops.value)))
            return ev, active
        assert not int(dut.m_resp_state.value), "the answer's state before the answer"
        ncalls = o["xl"] + o["page"] + o["read"]
        assert ncalls <= 1, f"two calls at once: {o}"
        if ncalls:
            calls += 1
            if abandon_at is not None and calls == abandon_at:
                return ev, active                    # the translation failed: the engine leaves
            away = r.randrange(1, 5) if o["read"] else r.randrange(1, 7)
            if o["page"]:
                pg = mem.page(int(dut.m_cur.value))
        assert active < 2000, ev


def first_diff(got, want):
    """Where two event lists part (for the assertion message)."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return i, g, w
    return min(len(got), len(want)), got[len(want):], want[len(got):]


def random_chase(r, mem):
    steps = []
    hops = 0
    for _ in range(r.randrange(0, 5)):
        hops += r.randrange(0, 2)
        steps.append((WORD, mem.some_va(8), hops))
    vlen = r.choice([0, 1, 7, 8, 9, 63, 64, 65, 200, 1024])
    hops += 1
    if r.random() < 0.6:
        steps.append((VALUE, mem.some_va(max(vlen, 1)), hops))
    else:
        steps.append((DONE, r.getrandbits(64), hops))
    return steps, vlen


@cocotb.test()
async def chases(dut):
    """Random walks over 4 KiB and 64 KiB pages: reads, look-ups, words, value bytes, the answer, cycles."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(300):
        mem = Mem(r)
        steps, vlen = random_chase(r, mem)
        want, cyc = expect(mem, steps, vlen)
        got, active = await chase(dut, r, mem, steps, vlen)
        assert got == want, (k, first_diff(got, want))
        assert active == cyc, (k, active, cyc)
        pages = sum(e[0] == "page" for e in got)
        seen.add((got[-1][1], len(steps) > 1, pages > len([s for s in steps if s[0] != DONE])))
    # Found and not found, after words or not, with reads that cross a page.
    assert {s[0] for s in seen} == {0, 1} and {s[1] for s in seen} == {False, True}, seen
    assert {s[2] for s in seen} == {False, True}, seen


@cocotb.test()
async def abandoned_then_new(dut):
    """A translation that fails (the engine leaves mid-chase): the next chase starts at its first step."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    for k in range(60):
        mem = Mem(r)
        steps, vlen = random_chase(r, mem)
        await chase(dut, r, mem, steps, vlen, abandon_at=r.randrange(1, 4))
        for _ in range(r.randrange(0, 3)):
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
        mem = Mem(r)
        steps, vlen = random_chase(r, mem)
        want, cyc = expect(mem, steps, vlen)
        got, active = await chase(dut, r, mem, steps, vlen)
        assert got == want, (k, first_diff(got, want))
        assert active == cyc, (k, active, cyc)
