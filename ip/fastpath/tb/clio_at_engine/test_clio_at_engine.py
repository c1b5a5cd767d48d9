"""clio_at_engine: the atomics on the engine and the record against small models of the ports.

The bench is the engine: it runs the stage in S_AT (`s_valid`), enters it
where a caller would (`s_at`: the atomic's word translated, the word read by
the translation loop's own call, an executed request's record such as the
WRITE's answer) and does the word's read the stage calls for (`m_read`: away
1–5 cycles, `s_valid` low, nothing may move then; back at the word read). It
holds the stage now and then (`s_en` low) where the top's `eng_hold` /
`at_hold` can: the translated word, the atomic's answer, the record. The
atomics stage takes the atomic on a random bit (`s_take`). The sync unit is
a model: its result 0–3 running cycles into ST_SYNCW, held after it, per
operation — LOCK taken (a write), LOCK busy (no write, not OK), LOCK over
the session's quota, UNLOCK (a write), UNLOCK not held, TAS / FAA (a write),
CAS matched (a write) or not (OK, no write): the atomics with a fault queued
that stay on the engine. The engine port is a model: it takes the write 0–2
cycles after it is offered and returns its B 1–4 cycles later; the builder is
free (`s_free`) on random cycles. Inputs no state reads carry junk.
`reference` says per call the stage's events in order and its running
cycles: one per cycle of the engine's former S_AT_READ, S_AT_SYNCW,
S_AT_RESP, S_AT_WR, S_AT_WRB and S_REC1 states (the top's cycle counts
depend on them); the state terms the top reads (`m_at_read`, `m_at_resp`,
`m_at_rec`, `m_wr`, `m_port`, `m_wr_now`) are checked every cycle, held,
away or running.
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import engine_cycle, reset_with_one_inside, rng, start

AT = {"read": 0, "syncw": 1, "rec1": 2}
IDLE_IN = ("s_valid", "s_at", "s_idle", "s_en", "s_take", "s_sync_valid", "s_sync_write", "s_sync_ok",
           "s_lock_over", "s_port_ready", "s_port_done", "s_free")
PULSES = ("m_let_go", "m_read", "m_fail", "m_result", "m_wr_load", "m_payload", "m_locks", "m_send", "m_record")
EXITS = ("m_let_go", "m_read", "m_fail", "m_send", "m_record")
STATE_OUT = ("m_at_read", "m_at_resp", "m_at_rec", "m_wr", "m_port")
HOLDABLE = ("read", "resp", "rec1")
# The sync unit's verdict per operation: (write, OK, LOCK over quota).
OPS = {"lock": (1, 1, 0), "lock_busy": (0, 0, 0), "lock_over": (1, 1, 1), "unlock": (1, 1, 0),
       "unlock_not_held": (0, 0, 0), "tas": (1, 1, 0), "faa": (1, 1, 0), "cas": (1, 1, 0),
       "cas_no_match": (0, 1, 0)}


def scenario(r, entry=None, op=None):
    entry = entry or r.choice(["read", "read", "syncw", "rec1"])
    op = op or r.choice(sorted(OPS))
    return {"entry": entry, "op": op, "take": entry == "read" and r.random() < 0.3,
            "sync": r.randrange(0, 4), "port": r.randrange(0, 3), "b": r.randrange(1, 5),
            "free": [r.random() < 0.6 for _ in range(12)] + [True]}


def reference(sc):
    """The stage's events and running cycles for scenario `sc`."""
    if sc["entry"] == "rec1":
        return ["record"], 1
    ev, cyc = [], 0
    if sc["entry"] == "read":
        if sc["take"]:
            return ["let_go"], 1
        ev.append("read")
        cyc += 1
    write, ok, over = OPS[sc["op"]]
    cyc += sc["sync"] + 1                                # ST_SYNCW until the result
    if over:
        return ev + ["fail"], cyc
    if not write and not ok:
        return ev + ["result", "payload", "send"], cyc + 1       # ST_RESP
    ev += ["result", "wr_load"] + (["wr_now"] if write else [])
    if write:
        cyc += sc["port"]                                # ST_WR until the port takes it
        b_at = sc["b"] - 1                               # the B's ST_WRB cycle
    else:
        b_at = 0                                         # no write: no B to wait for
    i = b_at
    while not sc["free"][min(i, len(sc["free"]) - 1)]:
        i += 1
    return ev + ["payload", "locks", "record"], cyc + i + 1


def val(dut, name):
    return int(getattr(dut, name).value)


async def call(dut, r, sc, hold_p=0.3):
    """One call of the stage as the engine, the sync unit, the port and the builder."""
    await FallingEdge(dut.clk)
    for name in IDLE_IN:
        getattr(dut, name).value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1, "not ready for a call"
    dut.s_at.value = AT[sc["entry"]]
    write, ok, over = OPS[sc["op"]]
    st = {"phase": sc["entry"], "n": 0, "offer": 0, "taken": False, "at": AT[sc["entry"]]}
    ev, running, away = [], 0, 0

    def drive():
        ph, n = st["phase"], st["n"]
        dut.s_at.value = st["at"]                        # the engine's entry register (from the next edge)
        dut.s_take.value = int(sc["take"]) if ph == "read" else r.getrandbits(1)
        result = ph == "syncw" and n == sc["sync"]
        held = ph in ("resp", "wr", "wrb", "rec1")       # the sync unit's result stays out
        dut.s_sync_valid.value = int(result) if ph == "syncw" else r.getrandbits(1)
        dut.s_sync_write.value = write if result or held else r.getrandbits(1)
        dut.s_sync_ok.value = ok if result or held else r.getrandbits(1)
        dut.s_lock_over.value = over if result or held else r.getrandbits(1)
        offering = (result and write and not over) or ph == "wr"
        dut.s_port_ready.value = int(st["offer"] == sc["port"]) if offering else r.getrandbits(1)
        dut.s_port_done.value = int(n == sc["b"] - 1 and st["taken"]) if ph == "wrb" else r.getrandbits(1)
        dut.s_free.value = int(sc["free"][min(n, len(sc["free"]) - 1)]) if ph == "wrb" else r.getrandbits(1)

    for _ in range(500):
        ph = st["phase"]
        runs = await engine_cycle(dut, r, away, hold_p if ph in HOLDABLE else 0, PULSES, drive)
        want = {"m_at_read": ph == "read", "m_at_resp": ph == "resp", "m_at_rec": ph == "rec1",
                "m_wr": ph == "wr", "m_port": ph in ("wr", "wrb")}
        for name in STATE_OUT:
            assert val(dut, name) == int(want[name] and not away), f"{name} in {ph} (away {away})"
        if not runs:
            assert val(dut, "m_wr_now") == 0, "the write offered while the stage does not run"
            if away:
                away -= 1
                if not away:
                    st["phase"], st["n"] = "syncw", 0
            continue
        running += 1
        o = {n: val(dut, n) for n in PULSES}
        assert sum(o[n] for n in EXITS) <= 1, f"two ways out: {o}"
        wr_now = val(dut, "m_wr_now")
        assert wr_now == int(ph == "syncw" and st["n"] == sc["sync"] and write and not over), "m_wr_now"
        for name in PULSES:
            if o[name]:
                ev.append(name[2:])
                if name == "m_wr_load" and wr_now:
                    ev.append("wr_now")
        if ph == "read":
            assert o["m_let_go"] or o["m_read"], "the translated word neither taken nor read"
            if o["m_let_go"]:
                return ev, running
            away = r.randrange(1, 6)
            st["at"] = AT["syncw"]                       # `at_read`: back at the word read
            continue
        if ph == "syncw":
            if st["n"] == sc["sync"]:
                if o["m_fail"]:
                    return ev, running
                if o["m_result"]:
                    if write and not val(dut, "s_port_ready"):
                        st["phase"], st["offer"] = "wr", 1
                    else:
                        st["phase"], st["taken"] = "wrb", bool(write)
                else:
                    st["phase"] = "resp"
                st["n"] = 0
            else:
                assert not any(o.values()), f"moved before the sync unit's result: {o}"
                st["n"] += 1
            continue
        if ph == "wr":
            if val(dut, "s_port_ready"):
                st["phase"], st["n"], st["taken"] = "wrb", 0, True
            else:
                st["offer"] += 1
            continue
        if ph == "wrb":
            if o["m_record"]:
                assert o["m_payload"] and o["m_locks"], "the record without the answer's payload or count"
                return ev, running
            st["n"] += 1
            continue
        if ph == "resp":
            if o["m_send"]:
                return ev, running
            st["phase"] = "rec1"
            continue
        assert o["m_record"], "the record not written"
        return ev, running
    raise AssertionError(f"the call did not end: {ev}")


@cocotb.test()
async def atomics(dut):
    """Random calls, operations, port and builder timings, holds and reads: every event in order, the cycles."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(600):
        sc = scenario(r)
        want = reference(sc)
        got = await call(dut, r, sc)
        assert got == want, (k, {x: sc[x] for x in sc if x != "free"}, got, want)
        seen.add(sc["entry"] if sc["entry"] == "rec1" or sc["take"] else sc["op"])
    assert seen == set(OPS) | {"rec1", "read"}, seen


@cocotb.test()
async def named_cases(dut):
    """LOCK taken and busy, UNLOCK, TAS / CAS / FAA with a fault queued, the WRITE's record: no holds."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    base = {"take": False, "sync": 1, "port": 0, "b": 2, "free": [True]}
    cases = [
        ({"entry": "read", "op": "lock"}, ["read", "result", "wr_load", "wr_now", "payload", "locks", "record"],
         1 + 2 + 2),
        ({"entry": "read", "op": "lock_busy"}, ["read", "result", "payload", "send"], 1 + 2 + 1),
        ({"entry": "syncw", "op": "lock_over"}, ["fail"], 2),
        ({"entry": "syncw", "op": "unlock", "port": 2}, ["result", "wr_load", "wr_now", "payload", "locks",
                                                        "record"], 2 + 2 + 2),
        ({"entry": "syncw", "op": "tas"}, ["result", "wr_load", "wr_now", "payload", "locks", "record"], 2 + 2),
        ({"entry": "syncw", "op": "cas_no_match", "free": [False, False, True]},
         ["result", "wr_load", "payload", "locks", "record"], 2 + 3),
        ({"entry": "syncw", "op": "faa", "b": 1}, ["result", "wr_load", "wr_now", "payload", "locks", "record"],
         2 + 1),
        ({"entry": "read", "op": "tas", "take": True}, ["let_go"], 1),
        ({"entry": "rec1", "op": "tas"}, ["record"], 1),
    ]
    for upd, ev, cyc in cases:
        sc = dict(base, **upd)
        assert reference(sc) == (ev, cyc), (upd, reference(sc))
        assert await call(dut, r, sc, hold_p=0) == (ev, cyc), upd


@cocotb.test()
async def idle_or_reset_clears(dut):
    """A reset or the engine idle (`s_idle`) while the word's result is awaited: the next call starts anew."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_at.value = AT["syncw"]
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "atomic")
    for how in ("s_idle", "rst"):
        await FallingEdge(dut.clk)
        dut.s_at.value = AT["syncw"]
        dut.s_valid.value = 1
        await FallingEdge(dut.clk)                       # in ST_SYNCW, no result yet
        dut.s_valid.value = 0
        dut.s_at.value = AT["read"]
        await Timer(1, unit="ns")
        assert val(dut, "s_ready") == 0
        getattr(dut, how).value = 1
        await FallingEdge(dut.clk)
        getattr(dut, how).value = 0
        await Timer(1, unit="ns")
        assert val(dut, "s_ready") == 1
        sc = scenario(r, entry="read")
        assert await call(dut, r, sc) == reference(sc)
