"""clio_rd_data: the READ's data phase against small models of the ports.

The bench is the engine: it runs the stage in S_RD (`s_valid`) and does the
calls it asks for (the fault queue's flush, the next page's translation, an
empty READ's send), away 1–5 cycles each (`s_valid` low: nothing may move
then), and holds it now and then (`s_en` low). The page the engine
translated is the bench's: `s_in_page` says whether the READ's position
(`s_total`'s VA + `m_sent` + `m_filled`) is in it, and a translation
(`m_page`) makes it the page holding the position (pages of 2^shift bytes);
a READ starts with no page, or the one of its first byte (a one-page READ or
a pump keeps it). The data mover is a model: it takes the command
(`s_cmd_ready`) 0–2 running cycles into ST_MOVE, and is busy (`s_mv_idle`
low) 0–3 cycles before a page's translation; the engine's command length
register (`s_cmd_len`) is the segment the bench computed from the stage's
position at `m_cmd`, as the top's `rd_seg`. The READ stage is busy
(`s_solo`) a few cycles when the first chunk's commands are issued; the
drain waits 0–3 cycles for the mover, the packer or the builder. Inputs no
state reads carry junk. `reference` says per READ the stage's strobes in
order (each command with the position it starts at, its length and the
chunk's mark; the empty answer's offset, the stream table's bytes sent) and
its running cycles: one per cycle of the engine's former S_RD_BEGIN,
S_RD_CHUNK, S_RD_STEP, S_RD_MOVE, S_RD_DRAIN and S_RD_AFTER states (the top's
cycle counts depend on them).
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import cleared_by, reset_with_one_inside, rng, start

IDLE_IN = ("s_valid", "s_idle", "s_en", "s_pm", "s_streams", "s_solo", "s_flush_first", "s_sent0", "s_total",
           "s_mtu", "s_in_page", "s_mv_idle", "s_cmd_ready", "s_cmd_len", "s_pk_empty", "s_rb_ready")
PULSES = ("m_start", "m_flush", "m_empty", "m_solo", "m_page", "m_cmd", "m_cmd_taken", "m_drained", "m_insert",
          "m_finish", "m_pm_end")
EXITS = ("m_solo", "m_finish", "m_pm_end")


def chunk(total, sent, mtu):
    return min(total - sent, mtu)


def val(dut, name):
    return int(getattr(dut, name).value)


def commands(sc):
    """How many mover commands the READ takes (for the waits drawn per command)."""
    n_cmd, sent, page = 0, sc["sent0"], sc["page0"]
    while sent < sc["total"]:
        n, filled = chunk(sc["total"], sent, sc["mtu"]), 0
        while filled < n:
            cur = sc["va"] + sent + filled
            page = cur >> sc["shift"]
            filled += min(((page + 1) << sc["shift"]) - cur, n - filled)
            n_cmd += 1
        sent += n
        if sc["pm"] or sc["streams"]:
            break
    return n_cmd


def scenario(r, total=None, pm=None, streams=None, mtu=None):
    pm = r.random() < 0.2 if pm is None else pm
    streams = (pm or r.random() < 0.3) if streams is None else streams
    if total is None:
        total = r.choice([0, r.randrange(1, 200), r.randrange(1, 5000), r.randrange(1, 20000)])
    sc = {"total": total, "pm": pm, "streams": streams, "mtu": mtu or r.choice([64, 512, 1500, 4096]),
          "va": r.getrandbits(40), "shift": r.choice([8, 10, 12]), "flush": r.getrandbits(1),
          "solo_wait": r.choice([0, 0, 1, 3]), "drain_wait": r.choice([0, 0, 1, 3])}
    sc["sent0"] = r.choice([0, r.randrange(0, total + 1)]) if pm else 0
    sc["page0"] = r.choice([None, (sc["va"] + sc["sent0"]) >> sc["shift"]])
    k = commands(sc)
    sc["w_idle"] = [r.choice([0, 0, 1, 3]) for _ in range(k)]
    sc["ready"] = [r.randrange(0, 3) for _ in range(k)]
    return sc


def reference(sc):
    """The stage's events and running cycles for scenario `sc` (the former engine states, one cycle each)."""
    ev, cyc = ["start"] + (["flush"] if sc["flush"] else []), 1      # S_RD_BEGIN
    total, mtu, sent, page = sc["total"], sc["mtu"], sc["sent0"], sc["page0"]
    n, k, solo_wait = chunk(total, sent, mtu), 0, sc["solo_wait"]
    while True:
        if n == 0:
            ev.append(f"empty:{sent}")
            cyc += 2                                     # S_RD_STEP (the send called), S_RD_AFTER
            if sc["pm"]:
                return ev + ["pm_end"], cyc
            if sent >= total:
                return ev + ["finish"], cyc
            if sc["streams"]:
                return ev + [f"insert:{sent}", "finish"], cyc
            raise AssertionError("an empty chunk before the READ's end (MTU 0)")
        filled = 0
        while filled < n:
            cur = sc["va"] + sent + filled
            if page != cur >> sc["shift"]:
                ev.append("page")
                cyc += sc["w_idle"][k] + 1               # S_RD_STEP: the mover busy, then the call
                page = cur >> sc["shift"]
            seg = min(((page + 1) << sc["shift"]) - cur, n - filled)
            ev += [f"cmd:{sent + filled}:{seg}:{int(filled + seg == n)}", "cmd_taken"]
            cyc += 1 + sc["ready"][k] + 1                # S_RD_STEP (the command), S_RD_MOVE
            filled += seg
            k += 1
        cyc += solo_wait                                 # S_RD_STEP: the READ stage busy
        solo_wait = 0
        last = sent + n >= total
        if not sc["pm"] and not sc["streams"] and last:
            return ev + [f"solo:{sent}"], cyc + 1        # S_RD_STEP: handed to the READ stage
        if sc["pm"] or sc["streams"] or last:
            ev.append("drained")
            cyc += 1 + sc["drain_wait"] + 1 + 1          # S_RD_STEP, S_RD_DRAIN, S_RD_AFTER
            if sc["pm"]:
                return ev + ["pm_end"], cyc
            if last:
                return ev + ["finish"], cyc
            return ev + [f"insert:{sent + n}", "finish"], cyc
        cyc += 1                                         # S_RD_STEP: the next chunk at once
        sent += n
        n = chunk(total, sent, mtu)


async def read(dut, r, sc, hold_p=0.2):
    """One READ as the engine, the page, the mover, the packer and the READ stage; returns (events, cycles)."""
    await FallingEdge(dut.clk)
    for name in IDLE_IN:
        getattr(dut, name).value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1 and val(dut, "m_begin") == 1, "not ready for a READ"
    dut.s_pm.value = int(sc["pm"])
    dut.s_streams.value = int(sc["streams"])
    dut.s_flush_first.value = sc["flush"]
    dut.s_sent0.value = sc["sent0"]
    dut.s_total.value = sc["total"]
    dut.s_mtu.value = sc["mtu"]
    st = {"phase": "begin", "page": sc["page0"], "k": 0, "wait": None, "move": 0, "solo": sc["solo_wait"],
          "drain": sc["drain_wait"], "len": 0}
    ev, running, away = [], 0, 0
    for _ in range(20000):
        await FallingEdge(dut.clk)
        hold = not away and r.random() < hold_p
        dut.s_en.value = 0 if hold else 1
        dut.s_valid.value = int(away == 0)
        run = not away and not hold
        ph = st["phase"]
        sent, n, filled = val(dut, "m_sent"), val(dut, "m_n"), val(dut, "m_filled")
        cur = sc["va"] + sent + filled
        in_page = st["page"] == cur >> sc["shift"]
        dut.s_in_page.value = int(in_page)
        need_page = ph == "step" and n != 0 and filled != n and not in_page
        if need_page and st["wait"] is None:
            st["wait"] = sc["w_idle"][st["k"]]
        chunk_end = ph == "step" and n != 0 and filled == n
        solo_now = chunk_end and st["solo"] > 0
        dut.s_solo.value = int(solo_now) if chunk_end else r.getrandbits(1)
        idle, pk_empty, rb_ready = r.getrandbits(1), r.getrandbits(1), r.getrandbits(1)
        if need_page:
            idle = int(st["wait"] == 0)
        elif ph == "drain":
            idle = pk_empty = rb_ready = 1
            if st["drain"]:
                low = r.choice(["idle", "pk", "rb"])
                idle, pk_empty, rb_ready = int(low != "idle"), int(low != "pk"), int(low != "rb")
        dut.s_mv_idle.value = idle
        dut.s_pk_empty.value = pk_empty
        dut.s_rb_ready.value = rb_ready
        dut.s_cmd_ready.value = int(st["move"] == sc["ready"][st["k"]]) if ph == "move" else r.getrandbits(1)
        dut.s_cmd_len.value = st["len"]
        await Timer(1, unit="ns")
        o = {p: val(dut, p) for p in PULSES}
        assert val(dut, "m_begin") + val(dut, "m_move") <= 1, "two states at once"
        if not run:
            assert not any(o.values()), f"moved while the engine is away or held: {o}"
            if away:
                away -= 1
            continue
        running += 1
        ways = ("m_empty", "m_solo", "m_page", "m_cmd", "m_finish", "m_pm_end")
        assert sum(o[p] for p in ways) <= 1, f"two ways out: {o}"
        assert o["m_flush"] <= o["m_start"] and o["m_insert"] <= o["m_finish"], o
        assert val(dut, "s_ready") == val(dut, "m_begin")
        if o["m_start"]:
            assert ph == "begin", ph
            ev.append("start")
            st["phase"] = "step"
        if o["m_flush"]:
            ev.append("flush")
            away = r.randrange(1, 6)
        if o["m_empty"]:
            ev.append(f"empty:{sent}")
            away = r.randrange(1, 6)                     # the header-only answer's send
            st["phase"] = "after"
        if o["m_page"]:
            ev.append("page")
            away = r.randrange(1, 6)
            st["page"] = cur >> sc["shift"]
            st["wait"] = None
        elif need_page and st["wait"]:
            st["wait"] -= 1
        if o["m_cmd"]:
            seg = min(((cur >> sc["shift"]) + 1 << sc["shift"]) - cur, n - filled)
            ev.append(f"cmd:{sent + filled}:{seg}:{int(filled + seg == n)}")
            st.update(len=seg, phase="move", move=0)
        elif ph == "move":
            if o["m_cmd_taken"]:
                ev.append("cmd_taken")
                st["k"] += 1
                st["phase"] = "step"
            else:
                st["move"] += 1
        if o["m_solo"]:
            ev.append(f"solo:{sent}")
        if chunk_end:
            if solo_now:
                st["solo"] -= 1
            elif not o["m_solo"] and (sc["pm"] or sc["streams"] or sent + n >= sc["total"]):
                st["phase"] = "drain"
        if ph == "drain":
            if o["m_drained"]:
                ev.append("drained")
                st["phase"] = "after"
            elif st["drain"]:
                st["drain"] -= 1
        if o["m_insert"]:
            ev.append(f"insert:{sent + n}")
        if o["m_finish"]:
            ev.append("finish")
        if o["m_pm_end"]:
            ev.append("pm_end")
        if ph == "after" and not any(o[p] for p in EXITS):
            st["phase"] = "chunk"
        if ph == "chunk":
            st["phase"] = "step"
        if any(o[p] for p in EXITS):
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0                        # the engine leaves S_RD
            await Timer(1, unit="ns")
            assert val(dut, "s_ready") == 1 and val(dut, "m_move") == 0, "not back in ST_BEGIN"
            if not sc["pm"] and not o["m_insert"]:
                assert val(dut, "m_sent") == sc["total"], "position not at the READ's end"
            return ev, running
    raise AssertionError(f"the READ did not end: {ev}")


def kind(sc, ev):
    if any(e.startswith("empty") for e in ev):
        return "empty"
    if sc["pm"]:
        return "pump"
    if any(e.startswith("insert") for e in ev):
        return "stream"
    chunks = sum(e.endswith(":1") for e in ev if e.startswith("cmd"))
    pages = sum(e == "page" for e in ev)
    return "solo-chunks" if chunks > 1 else "solo-pages" if pages > 1 else "solo-one"


@cocotb.test()
async def reads(dut):
    """Random READs, pumps and streams, pages, mover timings, holds and calls: every strobe, the cycles as the engine's."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(400):
        sc = scenario(r)
        want = reference(sc)
        got = await read(dut, r, sc)
        assert got == want, (k, {x: sc[x] for x in sc if x not in ("w_idle", "ready")}, got, want)
        seen.add(kind(sc, got[0]))
    assert seen == {"empty", "pump", "stream", "solo-chunks", "solo-pages", "solo-one"}, seen


def fixed(**kw):
    sc = {"pm": False, "streams": False, "sent0": 0, "flush": 0, "solo_wait": 0, "drain_wait": 0, "page0": None}
    sc.update(kw)
    k = commands(sc)
    sc.setdefault("w_idle", [0] * k)
    sc.setdefault("ready", [0] * k)
    return sc


@cocotb.test()
async def named_cases(dut):
    """One chunk, chunks at the MTU, a page crossing, an empty READ, a pumped packet, a stream, no holds."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    cases = [
        # One chunk in one page (its page kept from the translation): one marked command, the READ stage.
        (fixed(total=100, mtu=512, va=0x1000, shift=12, page0=1),
         (["start", "cmd:0:100:1", "cmd_taken", "solo:0"], 1 + 2 + 1)),
        # Three chunks at the MTU, each one marked command, then the READ stage; the mover slow once.
        (fixed(total=1200, mtu=512, va=0x2000, shift=12, page0=2, ready=[0, 2, 0]),
         (["start", "cmd:0:512:1", "cmd_taken", "cmd:512:512:1", "cmd_taken", "cmd:1024:176:1", "cmd_taken",
           "solo:1024"], 1 + (2 + 1) + (4 + 1) + 2 + 1)),
        # A chunk over a page boundary: the second page translated once the mover is idle; a flush first.
        (fixed(total=128, mtu=512, va=0x1000 - 64, shift=12, flush=1, w_idle=[0, 2]),
         (["start", "flush", "page", "cmd:0:64:0", "cmd_taken", "page", "cmd:64:64:1", "cmd_taken", "solo:0"],
          1 + (1 + 2) + (3 + 2) + 1)),
        # An empty READ: the header-only answer (offset 0), then the end.
        (fixed(total=0, mtu=512, va=0x5000, shift=12), (["start", "empty:0", "finish"], 1 + 2)),
        # A pumped stream packet from byte 1000: one chunk, drained, the pump's end.
        (fixed(total=3000, mtu=512, va=0x8000, shift=12, pm=True, streams=True, sent0=1000, page0=8,
               drain_wait=3),
         (["start", "cmd:1000:512:1", "cmd_taken", "drained", "pm_end"], 1 + 2 + 1 + 4 + 1)),
        # A READ with streams on: its first chunk, then the rest into the table; the READ stage busy first.
        (fixed(total=2000, mtu=512, va=0x9000, shift=12, streams=True, page0=9, solo_wait=2),
         (["start", "cmd:0:512:1", "cmd_taken", "drained", "insert:512", "finish"], 1 + 2 + 2 + 1 + 1 + 1)),
    ]
    for sc, want in cases:
        assert reference(sc) == want, (sc, reference(sc), want)
        assert await read(dut, r, sc, hold_p=0) == want, sc


@cocotb.test()
async def chunk_after_empty(dut):
    """MTU 0 (never configured, but the states allow it): empty chunks through ST_AFTER and ST_CHUNK, one cycle each."""
    await start(dut, idle=IDLE_IN)
    await FallingEdge(dut.clk)
    drive_in = {"s_valid": 1, "s_en": 1, "s_total": 10, "s_mtu": 0, "s_flush_first": 0}
    for n, v in drive_in.items():
        getattr(dut, n).value = v
    seen = []
    for t in range(9):
        await Timer(1, unit="ns")
        seen.append((val(dut, "m_start"), val(dut, "m_empty"), val(dut, "m_finish")))
        if t:
            assert (val(dut, "m_sent"), val(dut, "m_n")) == (0, 0)
        await FallingEdge(dut.clk)
    # ST_BEGIN, then ST_STEP (empty) / ST_AFTER / ST_CHUNK, over and over: no end, nothing sent.
    assert seen == [(1, 0, 0)] + [(0, 1, 0), (0, 0, 0), (0, 0, 0)] * 2 + [(0, 1, 0), (0, 0, 0)], seen
    dut.s_idle.value = 1
    await FallingEdge(dut.clk)
    dut.s_idle.value = 0
    dut.s_valid.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1


@cocotb.test()
async def idle_or_reset_clears(dut):
    """A reset or the engine idle (`s_idle`) with a READ inside (a page that failed): the next READ starts anew."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_total.value = 100
    dut.s_mtu.value = 64
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "READ")
    sc = scenario(r)
    assert await read(dut, r, sc) == reference(sc)
    for how in ("s_idle", "rst"):
        await FallingEdge(dut.clk)
        drive_in = {"s_valid": 1, "s_en": 1, "s_total": 100, "s_mtu": 64, "s_in_page": 0, "s_mv_idle": 1,
                    "s_pm": 0, "s_streams": 0}
        for n, v in drive_in.items():
            getattr(dut, n).value = v
        await FallingEdge(dut.clk)                       # ST_STEP: the page's translation is called
        await Timer(1, unit="ns")
        assert val(dut, "m_page") == 1
        await FallingEdge(dut.clk)
        await cleared_by(dut, how, "READ")             # the translation failed: the engine went idle
        sc = scenario(r)
        assert await read(dut, r, sc) == reference(sc)


@cocotb.test()
async def held_moves_nothing(dut):
    """The engine held in S_RD (`at_hold`, the write lane busy): no start, the position kept."""
    await start(dut, idle=IDLE_IN)
    await FallingEdge(dut.clk)
    dut.s_valid.value = 1
    dut.s_en.value = 0
    dut.s_total.value = 300
    dut.s_mtu.value = 64
    dut.s_sent0.value = 5
    for _ in range(3):
        await Timer(1, unit="ns")
        assert val(dut, "m_start") == 0 and val(dut, "m_begin") == 1
        await FallingEdge(dut.clk)
    dut.s_en.value = 1
    await Timer(1, unit="ns")
    assert val(dut, "m_start") == 1
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 0 and (val(dut, "m_sent"), val(dut, "m_n"), val(dut, "m_filled")) == (5, 64, 0)
