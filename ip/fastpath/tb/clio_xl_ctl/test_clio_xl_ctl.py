"""clio_xl_ctl: the translation loop against small models of the TLB and the walk stage.

The bench is the engine: it runs the stage in S_XL (`s_valid`), enters it
where a caller would (`s_at`: the range's wrap check, the next page, or the
answer to a TLB lookup the caller issued), keeps the range (`cur`, `end`) as
the stage's loads say and does the calls it asks for (the walk's flush and
PROBE, the error report), away 1–4 cycles each (`s_valid` low: nothing may
move then); it holds the stage now and then (`s_en` low). The VA space is
pages of 2^shift bytes, some outside it (`s_va_bad`). The TLB is a model: it
answers a page's lookup on the 1st–3rd running cycle in ST_TLBW, a hit with
or without the permission needed, or a miss. The walk stage is a model: a
miss handed to it (`m_walk`) runs 1–6 cycles in ST_WALK (`m_walking`), asks
for flushes and PROBEs on some of them and ends with a verdict: the TLB
insert or the fault queued, a failure with a status, or a report (BUSY or
UNMAPPED). The last page's takers (the write lane, the atomics stage, the
atomic's read) are random bits. Inputs no state reads carry junk.
`reference` says per translation the stage's events in order and its
running cycles: one per cycle of the engine's former S_XL_BEGIN, S_XL_PAGE,
S_XL_TLBW, S_XL_WALK, S_XL_OK, S_XL_FAILU and S_XL_FAILB states (the top's
cycle counts depend on them).
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import engine_cycle, reset_with_one_inside, rng, start

OK, PERMISSION, UNMAPPED, BUSY = 0x0, 0x2, 0x3, 0x6
AT = {"begin": 0, "page": 1, "tlbw": 2}
IDLE_IN = ("s_valid", "s_at", "s_idle", "s_en", "s_wraps", "s_at_end", "s_va_bad", "s_pass2", "s_more",
           "s_tlb_valid", "s_tlb_hit", "s_tlb_perm_ok", "s_walk_ok", "s_walk_fail", "s_walk_report",
           "s_walk_status", "s_walk_flush", "s_walk_probe", "s_wl_take", "s_at_take", "s_at_read")
PULSES = ("m_clear", "m_look", "m_tlb_load", "m_walk", "m_fail", "m_report", "m_flush", "m_probe", "m_ok",
          "m_next", "m_last", "m_hand_off", "m_let_go", "m_at_read", "m_ret")
EXITS = ("m_fail", "m_ret", "m_hand_off", "m_let_go", "m_at_read")
STATE_OUT = {"tlbw": "m_tlbw", "walk": "m_walking", "ok": "m_at_ok"}


def walk_plan(r):
    n = r.randrange(1, 7)
    calls = {i: r.choice(["flush", "probe"]) for i in range(1, n) if r.random() < 0.3}
    verdict = r.choices(["ok", "fail", "report"], [7, 1, 2])[0]
    status = r.choice([UNMAPPED, BUSY]) if verdict == "report" else \
        r.choice([UNMAPPED, BUSY, PERMISSION, 0x5]) if verdict == "fail" else r.getrandbits(8)
    return {"n": n, "calls": calls, "verdict": verdict, "status": status}


def scenario(r, entry=None, pages=None, pass2=None):
    """A translation: where it enters, the range, each page's fate, the takers."""
    sh = r.choice([8, 10, 12])
    entry = entry or r.choice(["begin", "page", "tlbw"])
    pass2 = (entry == "page" and r.random() < 0.25) if pass2 is None else pass2
    n = pages if pages is not None else r.choice([1, 1, 2, 3, 5])
    first = r.getrandbits(20) + 1
    cur = (first << sh) + r.randrange(0, 1 << sh)
    last = first + n - 1
    if n == 1:
        end = r.randrange(cur + 1, ((first + 1) << sh) + 1)
    else:
        end = r.randrange((last << sh) + 1, ((last + 1) << sh) + 1)
    sc = {"entry": entry, "shift": sh, "cur": cur, "end": end, "pass2": pass2,
          "wraps": int(entry == "begin" and r.random() < 0.1),
          "wl": r.random() < 0.3, "at": r.random() < 0.3, "rd": r.random() < 0.3,
          "kind": {}, "lat": {}, "walk": {}}
    if entry == "page" and not pass2 and r.random() < 0.1:
        sc["cur"] = end                                  # the first pass is at the range's end
    for pg in range(sc["cur"] >> sh, last + 2):
        kind = r.choices(["bad", "hit", "perm", "miss"], [1, 9, 1, 9])[0]
        if entry == "tlbw" and pg == sc["cur"] >> sh and kind == "bad":
            kind = "hit"                                 # the caller looked up a valid page
        sc["kind"][pg] = kind
        sc["lat"][pg] = r.randrange(1, 4)
        sc["walk"][pg] = walk_plan(r)
    return sc


def reference(sc):
    """The stage's events and running cycles for scenario `sc`."""
    ev, cyc = [], 0
    cur, end, sh = sc["cur"], sc["end"], sc["shift"]
    phase = sc["entry"]
    if phase == "begin":
        cyc += 1
        ev.append("clear")
        if sc["wraps"]:
            return ev + [f"fail:{UNMAPPED}"], cyc
        phase = "page"
    while True:
        pg = cur >> sh
        if phase == "page":
            cyc += 1
            if not sc["pass2"] and cur >= end:
                return ev + ["ret"], cyc
            if sc["kind"][pg] == "bad":
                return ev + [f"fail:{UNMAPPED}"], cyc
            ev.append(f"look:{pg}")
        kind = sc["kind"][pg]
        cyc += sc["lat"][pg]                             # ST_TLBW until the answer
        if kind in ("hit", "perm"):
            ev.append("tlb_load")
            if kind == "perm":
                return ev + [f"fail:{PERMISSION}"], cyc
        else:
            w = sc["walk"][pg]
            ev.append(f"walk:{pg}")
            ev += [w["calls"][i] for i in sorted(w["calls"])]
            cyc += w["n"]                                # ST_WALK
            if w["verdict"] == "fail":
                return ev + [f"fail:{w['status']}"], cyc
            if w["verdict"] == "report":                 # ST_FAILB / ST_FAILU after it
                back = BUSY if w["status"] == BUSY else UNMAPPED
                return ev + [f"report:{w['status']}", f"fail:{back}"], cyc + 1
            cyc += 1                                     # ST_OK
        ev.append(f"ok:{pg}")
        if sc["pass2"]:
            return ev + ["ret"], cyc
        nxt = (cur | ((1 << sh) - 1)) + 1
        if nxt < end:
            ev.append("next")
            cur, phase = nxt, "page"
            continue
        taker = "hand_off" if sc["wl"] else "let_go" if sc["at"] else "at_read" if sc["rd"] else "ret"
        return ev + ["last", taker], cyc


def val(dut, name):
    return int(getattr(dut, name).value)


async def translate(dut, r, sc, hold_p=0.2):
    """One translation as the engine, the TLB and the walk stage; returns (events, running cycles)."""
    await FallingEdge(dut.clk)
    for name in IDLE_IN:
        getattr(dut, name).value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1, "not ready for a translation"
    sh, end = sc["shift"], sc["end"]
    mask = (1 << sh) - 1
    dut.s_at.value = AT[sc["entry"]]
    dut.s_pass2.value = int(sc["pass2"])
    dut.s_wraps.value = sc["wraps"]
    dut.s_wl_take.value = int(sc["wl"])
    dut.s_at_take.value = int(sc["at"])
    dut.s_at_read.value = int(sc["rd"])
    st = {"cur": sc["cur"], "phase": sc["entry"], "tlbw": 0, "walk": 0}
    ev, running, away = [], 0, 0

    def drive():
        cur, ph = st["cur"], st["phase"]
        pg = cur >> sh
        dut.s_at_end.value = int(cur >= end)
        dut.s_va_bad.value = int(sc["kind"].get(pg) == "bad")
        dut.s_more.value = int((cur | mask) + 1 < end)
        answer = ph == "tlbw" and st["tlbw"] + 1 == sc["lat"][pg]
        dut.s_tlb_valid.value = int(answer) if ph == "tlbw" else r.getrandbits(1)
        dut.s_tlb_hit.value = int(sc["kind"][pg] in ("hit", "perm")) if answer else r.getrandbits(1)
        dut.s_tlb_perm_ok.value = int(sc["kind"][pg] == "hit") if answer else r.getrandbits(1)
        if ph == "walk":
            w = sc["walk"][pg]
            i = st["walk"] + 1
            verdict = w["verdict"] if i == w["n"] else None
            dut.s_walk_flush.value = int(w["calls"].get(i) == "flush")
            dut.s_walk_probe.value = int(w["calls"].get(i) == "probe")
            dut.s_walk_ok.value = int(verdict == "ok")
            dut.s_walk_fail.value = int(verdict == "fail")
            dut.s_walk_report.value = int(verdict == "report")
            dut.s_walk_status.value = w["status"] if verdict else r.getrandbits(8)
        else:
            for n in ("s_walk_flush", "s_walk_probe", "s_walk_ok", "s_walk_fail", "s_walk_report"):
                getattr(dut, n).value = r.getrandbits(1)
            dut.s_walk_status.value = r.getrandbits(8)

    for _ in range(2000):
        runs = await engine_cycle(dut, r, away, hold_p, PULSES, drive)
        ph = st["phase"]
        for p, name in STATE_OUT.items():
            want = int(ph == p and not away)
            assert val(dut, name) == want, f"{name} = {val(dut, name)} in {ph} (away {away})"
        if not runs:
            if away:
                away -= 1
            continue
        running += 1
        o = {n: val(dut, n) for n in PULSES}
        assert sum(o[n] for n in EXITS) <= 1, f"two ways out: {o}"
        pg = st["cur"] >> sh
        walked_ok = ph == "walk" and st["walk"] + 1 == sc["walk"][pg]["n"] \
            and sc["walk"][pg]["verdict"] == "ok"
        if ph == "tlbw":
            st["tlbw"] += 1
        if ph == "walk":
            st["walk"] += 1
        if o["m_clear"]:
            assert ph == "begin"
            ev.append("clear")
            st["phase"] = "page"
        if o["m_look"]:
            ev.append(f"look:{pg}")
            st["phase"], st["tlbw"] = "tlbw", 0
        if o["m_tlb_load"]:
            ev.append("tlb_load")
        if o["m_walk"]:
            ev.append(f"walk:{pg}")
            st["phase"], st["walk"] = "walk", 0
        if o["m_flush"] or o["m_probe"]:
            ev.append("flush" if o["m_flush"] else "probe")
            away = r.randrange(1, 5)
        if o["m_report"]:
            ev.append(f"report:{val(dut, 'm_status')}")
            st["phase"] = "failb" if val(dut, "m_status") == BUSY else "failu"
            away = r.randrange(1, 5)
        if walked_ok:
            st["phase"] = "ok"
        if o["m_ok"]:
            ev.append(f"ok:{pg}")
        if o["m_next"]:
            ev.append("next")
            st["cur"] = (st["cur"] | mask) + 1
            st["phase"] = "page"
        if o["m_last"]:
            ev.append("last")
            st["cur"] = end
        if o["m_fail"]:
            ev.append(f"fail:{val(dut, 'm_status')}")
        for n in ("m_hand_off", "m_let_go", "m_at_read", "m_ret"):
            if o[n]:
                ev.append(n[2:])
        if any(o[n] for n in EXITS):
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0                        # the engine leaves S_XL
            await Timer(1, unit="ns")
            assert val(dut, "s_ready") == 1, "not back in ST_IDLE"
            return ev, running
    raise AssertionError(f"the translation did not end: {ev}")


def kind_of(sc, ev):
    """What a scenario exercised (for the coverage check)."""
    out = {sc["entry"]}
    out |= {e.split(":")[0] for e in ev}
    if sc["pass2"]:
        out.add("pass2")
    if ev.count("next") >= 1:
        out.add("multi")
    return out


@cocotb.test()
async def translations(dut):
    """Random ranges, pages, TLB answers, walks, holds and calls: every event in order, the cycles as the engine's."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(500):
        sc = scenario(r)
        want = reference(sc)
        got = await translate(dut, r, sc)
        assert got == want, (k, {x: sc[x] for x in sc if x not in ("walk", "lat", "kind")}, got, want)
        seen |= kind_of(sc, got[0])
    need = {"begin", "page", "tlbw", "pass2", "multi", "clear", "look", "tlb_load", "walk", "flush", "probe",
            "report", "fail", "ok", "next", "last", "hand_off", "let_go", "at_read", "ret"}
    assert need <= seen, need - seen


@cocotb.test()
async def named_cases(dut):
    """A hit, a permission failure, an unmapped VA, a miss that walks, a multi-page range, a second pass."""
    await start(dut, idle=IDLE_IN)
    r = rng()

    def one(entry, kinds, pages=1, pass2=False, **kw):
        sc = scenario(r, entry=entry, pages=pages, pass2=pass2)
        sc.update({"wraps": 0, "wl": False, "at": False, "rd": False, **kw})
        base = sc["cur"] >> sc["shift"]
        for i, k in enumerate(kinds):
            sc["kind"][base + i] = k
            sc["lat"][base + i] = 1
        return sc, base

    # A hit: the caller's lookup answered, the one page translated, back to the caller.
    sc, pg = one("tlbw", ["hit"])
    assert await translate(dut, r, sc, hold_p=0) == (["tlb_load", f"ok:{pg}", "last", "ret"], 1)
    # The same hit of a one-page WRITE: the write lane takes it.
    sc, pg = one("tlbw", ["hit"], wl=True)
    assert await translate(dut, r, sc, hold_p=0) == (["tlb_load", f"ok:{pg}", "last", "hand_off"], 1)
    # A permission failure.
    sc, pg = one("page", ["perm"])
    assert await translate(dut, r, sc, hold_p=0) == ([f"look:{pg}", "tlb_load", f"fail:{PERMISSION}"], 2)
    # An unmapped VA (outside the space), and a range past the top.
    sc, pg = one("page", ["bad"])
    assert await translate(dut, r, sc, hold_p=0) == ([f"fail:{UNMAPPED}"], 1)
    sc, pg = one("begin", ["hit"], wraps=1)
    assert await translate(dut, r, sc, hold_p=0) == (["clear", f"fail:{UNMAPPED}"], 1)
    # A miss that walks: a flush and a PROBE on the way, then the insert, ST_OK.
    sc, pg = one("page", ["miss"])
    sc["walk"][pg] = {"n": 4, "calls": {1: "flush", 3: "probe"}, "verdict": "ok", "status": 0}
    want = ([f"look:{pg}", f"walk:{pg}", "flush", "probe", f"ok:{pg}", "last", "ret"], 1 + 1 + 4 + 1)
    assert reference(sc) == want
    assert await translate(dut, r, sc, hold_p=0) == want
    # A miss whose walk reports BUSY: the report, then BUSY.
    sc, pg = one("page", ["miss"])
    sc["walk"][pg] = {"n": 2, "calls": {}, "verdict": "report", "status": BUSY}
    assert await translate(dut, r, sc, hold_p=0) == \
        ([f"look:{pg}", f"walk:{pg}", f"report:{BUSY}", f"fail:{BUSY}"], 1 + 1 + 2 + 1)
    # A range of three pages from its wrap check: hit, miss, hit.
    sc, pg = one("begin", ["hit", "miss", "hit"], pages=3)
    sc["walk"][pg + 1] = {"n": 1, "calls": {}, "verdict": "ok", "status": 0}
    want = (["clear", f"look:{pg}", "tlb_load", f"ok:{pg}", "next", f"look:{pg + 1}", f"walk:{pg + 1}",
             f"ok:{pg + 1}", "next", f"look:{pg + 2}", "tlb_load", f"ok:{pg + 2}", "last", "ret"],
            1 + 2 + (2 + 1 + 1) + 2)
    assert reference(sc) == want
    assert await translate(dut, r, sc, hold_p=0) == want
    # A data phase's second pass: one page, back to the caller though pages follow.
    sc, pg = one("page", ["hit", "hit"], pages=2, pass2=True)
    assert await translate(dut, r, sc, hold_p=0) == ([f"look:{pg}", "tlb_load", f"ok:{pg}", "ret"], 2)


@cocotb.test()
async def idle_or_reset_clears(dut):
    """A reset or the engine idle (`s_idle`) with a translation inside (a call that failed): the next starts anew."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_at.value = AT["begin"]
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "translation")
    sc = scenario(r)
    assert await translate(dut, r, sc) == reference(sc)
    for how in ("s_idle", "rst"):
        await FallingEdge(dut.clk)
        for n, v in {"s_valid": 1, "s_en": 1, "s_at": AT["tlbw"], "s_tlb_valid": 1, "s_tlb_hit": 0}.items():
            getattr(dut, n).value = v
        await FallingEdge(dut.clk)                       # ST_WALK: the walk's flush is called
        dut.s_valid.value = 0
        await Timer(1, unit="ns")
        assert val(dut, "s_ready") == 0
        getattr(dut, how).value = 1                      # the flush's caller went idle
        await FallingEdge(dut.clk)
        getattr(dut, how).value = 0
        await Timer(1, unit="ns")
        assert val(dut, "s_ready") == 1 and val(dut, "m_walking") == 0
        sc = scenario(r)
        assert await translate(dut, r, sc) == reference(sc)
