"""clio_wr_data: the WRITE's data phase against small models of the ports.

The bench is the engine: it runs the stage in S_WR (`s_valid`) and does the
calls it asks for (the fault queue's flush, the next page's translation),
away 1–5 cycles each (`s_valid` low: nothing may move then), and holds it now
and then outside the mover's cycles (`s_en` low, as `at_hold` holds S_WR in
ST_BEGIN). The write lane is a model: ready after a few cycles for a WRITE of
one translated page (`s_one`: the hand-off), its burst in the mover a few
cycles for the others (`s_lane_mem`). The page the engine translated is the
bench's: `s_in_page` says whether the stage's position (`m_base + m_pos`) is
in it, and a translation (`m_page`) makes it the page holding the position
(pages of 2^shift bytes); the engine's second pass starts with no page
(`m_start`). The data mover is a model: it takes the command (`s_cmd_ready`)
0–2 running cycles into ST_MOVE, then the payload's bytes in beats of at most
2^OW, a gap of 0–2 cycles between beats, and is done 1–3 cycles after the
last. Inputs no state reads carry junk. `reference` says per WRITE the
stage's strobes in order (each command with the position it starts at and
its length) and its running cycles: one per cycle of the engine's former
S_WR_BEGIN, S_WR_STEP and S_WR_MOVE states (the top's cycle counts depend on
them).
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import cleared_by, reset_with_one_inside, rng, start

IDLE_IN = ("s_valid", "s_idle", "s_en", "s_one", "s_lane_ready", "s_lane_mem", "s_flush_first", "s_base",
           "s_plen", "s_in_page", "s_cmd_ready", "s_take_valid", "s_take", "s_done")
PULSES = ("m_hand_off", "m_start", "m_flush", "m_answer", "m_page", "m_cmd", "m_cmd_taken", "m_last_take")
OW = 6
BYTES = 1 << OW


def segments(sc):
    """The mover commands of a WRITE: (position, length), each inside one page."""
    out, pos = [], 0
    while pos < sc["plen"]:
        cur = sc["base"] + pos
        left = ((cur >> sc["shift"]) + 1 << sc["shift"]) - cur
        n = min(left, sc["plen"] - pos)
        out.append((pos, n))
        pos += n
    return out


def mover_plan(r, pos0, n, base):
    """A command's beats: (MOVE cycle, bytes) and its taken and done cycles."""
    ready = r.randrange(0, 3)
    beats, t, pos = [], ready + 1, pos0
    while pos < pos0 + n:
        k = min(BYTES - (base + pos) % BYTES, pos0 + n - pos)
        beats.append((t, k))
        pos += k
        t += 1 + r.choice([0, 0, 1, 2])
    done = beats[-1][0] + r.randrange(1, 4)
    return {"ready": ready, "beats": beats, "done": done}


def scenario(r, one=None, plen=None):
    one = r.random() < 0.2 if one is None else one
    sc = {"one": one, "lane_wait": r.choice([0, 0, 1, 3]), "mem": r.choice([0, 0, 1, 3]),
          "flush": r.getrandbits(1), "base": r.getrandbits(40), "shift": r.choice([8, 10, 12])}
    sc["plen"] = plen if plen is not None else r.choice([0, r.randrange(1, 200), r.randrange(1, 5000),
                                                         r.randrange(1, 65536)])
    sc["moves"] = [mover_plan(r, p, n, sc["base"]) for p, n in segments(sc)]
    return sc


def reference(sc):
    """The stage's events and running cycles for scenario `sc`."""
    if sc["one"]:
        return ["hand_off"], sc["lane_wait"] + 1
    ev = ["start"] + (["flush"] if sc["flush"] else [])
    cyc = sc["mem"] + 1                                  # ST_BEGIN (the lane's burst, then the start)
    segs = segments(sc)
    for (pos, n), mv in zip(segs, sc["moves"]):
        ev += ["page", f"cmd:{pos}:{n}", "cmd_taken"]
        if pos + n == sc["plen"]:
            ev.append("last_take")
        cyc += 1 + 1 + mv["done"] + 1                   # ST_STEP (page), ST_STEP (command), ST_MOVE
    return ev + ["answer"], cyc + 1                      # ST_STEP: the answer


def val(dut, name):
    return int(getattr(dut, name).value)


async def write(dut, r, sc, hold_p=0.2):
    """One WRITE as the engine, the lane and the mover; returns (events, running cycles)."""
    await FallingEdge(dut.clk)
    for name in IDLE_IN:
        getattr(dut, name).value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1 and val(dut, "m_begin") == 1, "not ready for a WRITE"
    dut.s_one.value = int(sc["one"])
    dut.s_flush_first.value = sc["flush"]
    dut.s_base.value = sc["base"]
    dut.s_plen.value = sc["plen"]
    segs = segments(sc)
    ev, running, away = [], 0, 0
    st = {"page": None, "seg": 0, "move": None, "lane": sc["lane_wait"], "mem": sc["mem"], "taken": 0}

    def drive():
        m = st["move"]
        mv = sc["moves"][st["seg"]] if m is not None else None
        pos = val(dut, "m_pos")
        cur = val(dut, "m_base") + pos
        dut.s_in_page.value = int(st["page"] is not None and cur >> sc["shift"] == st["page"])
        dut.s_lane_ready.value = int(st["lane"] == 0) if sc["one"] else r.getrandbits(1)
        dut.s_lane_mem.value = int(st["mem"] > 0) if not sc["one"] else r.getrandbits(1)
        dut.s_cmd_ready.value = int(mv is not None and m == mv["ready"])
        beat = [k for t, k in mv["beats"] if t == m] if mv is not None else []
        dut.s_take_valid.value = int(bool(beat))
        dut.s_take.value = beat[0] if beat else r.randrange(0, BYTES + 1)
        dut.s_done.value = int(mv is not None and m == mv["done"])

    for t in range(20000):
        await FallingEdge(dut.clk)
        in_move = val(dut, "m_move") == 1                # the mover's cycles are never held (as in the top)
        hold = not away and not in_move and r.random() < hold_p
        dut.s_en.value = 0 if hold else 1
        dut.s_valid.value = int(away == 0)
        drive()
        await Timer(1, unit="ns")
        o = {n: val(dut, n) for n in PULSES}
        assert val(dut, "m_begin") + val(dut, "m_move") <= 1, "two states at once"
        if away or hold:
            assert not any(o.values()), f"moved while the engine is away or held: {o}"
            if away:
                away -= 1
            continue
        running += 1
        assert sum(o[n] for n in ("m_hand_off", "m_answer", "m_page", "m_cmd")) <= 1, f"two ways out: {o}"
        assert val(dut, "s_ready") == val(dut, "m_begin")
        if o["m_hand_off"]:
            ev.append("hand_off")
        if o["m_start"]:
            ev.append("start")
            st["page"] = None                            # the engine's second pass: no page yet
        if o["m_flush"]:
            ev.append("flush")
            away = r.randrange(1, 6)
        if o["m_page"]:
            ev.append("page")
            away = r.randrange(1, 6)
            st["page"] = (val(dut, "m_base") + val(dut, "m_pos")) >> sc["shift"]
        if o["m_cmd"]:
            pos = val(dut, "m_pos")
            cur = val(dut, "m_base") + pos
            left = ((cur >> sc["shift"]) + 1 << sc["shift"]) - cur
            ev.append(f"cmd:{pos}:{min(left, sc['plen'] - pos)}")
            st["move"] = -1                              # ST_MOVE from the next cycle
        if o["m_cmd_taken"]:
            ev.append("cmd_taken")
        if o["m_last_take"]:
            ev.append("last_take")
        if o["m_answer"]:
            assert val(dut, "m_pos") == sc["plen"] and val(dut, "m_base") == sc["base"], "answered early"
            ev.append("answer")
        if in_move:
            mv = sc["moves"][st["seg"]]
            assert val(dut, "m_move") == 1
            if st["move"] == mv["done"]:
                st["move"] = None
                st["seg"] += 1
        if st["move"] is not None:
            st["move"] += 1
        if sc["one"] and st["lane"]:
            st["lane"] -= 1
        if not sc["one"] and st["mem"]:
            st["mem"] -= 1
        if o["m_hand_off"] or o["m_answer"]:
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0                        # the engine leaves S_WR
            await Timer(1, unit="ns")
            assert val(dut, "s_ready") == 1 and val(dut, "m_move") == 0, "not back in ST_BEGIN"
            if not sc["one"]:
                assert val(dut, "m_pos") == sc["plen"], "position not at the payload's end"
            return ev, running
    raise AssertionError(f"the WRITE did not end: {ev}")


@cocotb.test()
async def writes(dut):
    """Random WRITEs, pages, mover timings, holds and calls: every strobe in order, the cycles as the engine's."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(400):
        sc = scenario(r)
        want = reference(sc)
        got = await write(dut, r, sc)
        assert got == want, (k, {x: sc[x] for x in sc if x != "moves"}, got, want)
        seen.add("one" if sc["one"] else "empty" if sc["plen"] == 0 else
                 "multi" if len(sc["moves"]) > 1 else "single")
    assert seen == {"one", "empty", "single", "multi"}, seen


@cocotb.test()
async def named_cases(dut):
    """The write lane's hand-off, an empty WRITE, a WRITE over two pages, no holds."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    sc = scenario(r, one=True)
    sc["lane_wait"] = 0
    assert await write(dut, r, sc, hold_p=0) == (["hand_off"], 1)
    sc = scenario(r, one=False, plen=0)
    sc.update(mem=0, flush=0)
    assert await write(dut, r, sc, hold_p=0) == (["start", "answer"], 2)
    sc = {"one": False, "lane_wait": 0, "mem": 1, "flush": 1, "base": 4096 - 64, "shift": 12, "plen": 128}
    sc["moves"] = [{"ready": 0, "beats": [(1, 64)], "done": 2}, {"ready": 1, "beats": [(2, 64)], "done": 3}]
    want = (["start", "flush", "page", "cmd:0:64", "cmd_taken", "page", "cmd:64:64", "cmd_taken", "last_take",
             "answer"], 2 + (2 + 3) + (2 + 4) + 1)
    assert reference(sc) == want
    assert await write(dut, r, sc, hold_p=0) == want


@cocotb.test()
async def idle_or_reset_clears(dut):
    """A reset or the engine idle (`s_idle`) with a WRITE inside (a call that failed): the next WRITE starts anew."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_plen.value = 100
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "WRITE")
    sc = scenario(r, one=False)
    assert await write(dut, r, sc) == reference(sc)
    for how in ("s_idle", "rst"):
        await FallingEdge(dut.clk)
        drive_in = {"s_valid": 1, "s_en": 1, "s_plen": 100, "s_base": 7, "s_one": 0, "s_lane_mem": 0}
        for n, v in drive_in.items():
            getattr(dut, n).value = v
        await FallingEdge(dut.clk)                       # ST_STEP: the page's translation is called
        await cleared_by(dut, how, "WRITE")             # the translation failed: the engine went idle
        sc = scenario(r)
        assert await write(dut, r, sc) == reference(sc)


@cocotb.test()
async def held_moves_nothing(dut):
    """The engine held in S_WR (`at_hold`): no hand-off, no start, the position kept."""
    await start(dut, idle=IDLE_IN)
    await FallingEdge(dut.clk)
    dut.s_valid.value = 1
    dut.s_en.value = 0
    dut.s_one.value = 1
    dut.s_lane_ready.value = 1
    for _ in range(3):
        await Timer(1, unit="ns")
        assert val(dut, "m_hand_off") == 0 and val(dut, "m_start") == 0
        await FallingEdge(dut.clk)
    dut.s_one.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "m_start") == 0
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1
