"""clio_xl_walk: the page-table walk and its fault against small models of the ports.

The bench is the engine: it hands over a page the TLB missed (`s_valid`, one
cycle, as in S_XL_TLBW), runs the stage in S_XL_WALK (`s_run`) and does the
calls it asks for (the fault queue's flush, the RX ring's PROBE), away 1–5
cycles each (`s_run` low: nothing may move then). The units are models: the
hash answers (`s_hash_valid`) a random 1–4 cycles after its valid, the
bucket reader 1–6 cycles after its own, the fault unit 1–5 after its own,
each a one-cycle pulse (latencies in the engine's running cycles). The
permission check of the loaded PTE is the scenario's: a PTE found with the
rights (the TLB insert), a permission failure, a PPN outside the data area
(UNMAPPED reported), or a fault (no PTE found: a hit-free walk) taken with an
RX credit, after a flush, or after a probe, and the fault unit's answer:
taken (queued, or the queue full: flushed first), code 1, 2 or 3. The hit
lane beside the walk is busy a few cycles at the PTE. The engine is held now
and then (`s_en` low). `reference` says per walk the stage's strobes and
verdicts in order and its running cycles (one per cycle of the engine's
former S_XL_HASHW … S_XL_ENQ states: the top's cycle counts depend on them).
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import reset_with_one_inside, rng, start

IDLE_IN = ("s_valid", "s_run", "s_idle", "s_en", "s_hash_valid", "s_ptf_valid", "s_perm_status",
           "s_perm_fault", "s_in_data", "s_lane_busy", "s_fault_valid", "s_fault_ok", "s_fault_code",
           "s_credit", "s_fq_any", "s_fq_full")
VERDICTS = ("m_bucket", "m_pte", "m_fail", "m_report", "m_flush", "m_probe", "m_fault_ppn",
            "m_enq_unit", "m_enq", "m_insert")
UNMAPPED, BUSY, PERMISSION = 3, 6, 5
KINDS = ("insert", "perm", "unmapped", "fault")
PATHS = ("credit", "flush-credit", "flush-probe", "probe")
OUTCOMES = ("ok", "ok-full", "code1", "code2", "code3")


def reference(sc):
    """The stage's events and running cycles for scenario `sc`."""
    ev = ["hash", "bucket", "ptf", "pte"]
    cyc = (sc["lh"] + 1) + 1 + sc["lp"] + 1                 # HASHW, PTF, PTFW, PTE (the verdict)
    if sc["kind"] == "insert":
        return ev + ["insert"], cyc                  # at once: the lane's hits wait for the answer, not the insert
    cyc += sc["busy"]                                # any other verdict waits for the lane to be quiet
    if sc["kind"] == "perm":
        return ev + [f"fail:{PERMISSION}"], cyc
    if sc["kind"] == "unmapped":
        return ev + [f"report:{UNMAPPED}"], cyc
    path = sc["path"]
    if path.startswith("flush"):
        ev.append("flush")
        cyc += 1                                     # S_XL_PTE again after the flush
    if path.endswith("probe"):
        ev.append("probe")
        cyc += 1                                     # S_XL_FAULT
    ev.append("fault")
    cyc += sc["lf"] + 1                              # S_XL_FAULTW
    out = sc["outcome"]
    if out == "ok":
        ev += ["fault_ppn", "enq_unit"]
    elif out == "ok-full":
        ev += ["fault_ppn", "flush", "enq"]
        cyc += 1                                     # S_XL_ENQ
    elif out == "code1":
        ev.append(f"fail:{UNMAPPED}")
    elif out == "code2":
        ev.append(f"report:{BUSY}")
    else:
        ev.append(f"fail:{BUSY}")
    return ev, cyc


def scenario(r, kind=None, path=None, outcome=None):
    return {"lh": r.randrange(1, 5), "lp": r.randrange(1, 7), "lf": r.randrange(1, 6),
            "busy": r.choice([0, 0, 1, 3]), "kind": kind or r.choice(KINDS),
            "path": path or r.choice(PATHS), "outcome": outcome or r.choice(OUTCOMES)}


def val(dut, name):
    return int(getattr(dut, name).value)


async def walk(dut, r, sc, hold_p=0.2):
    """One walk as the engine and the units; returns (events, running cycles)."""
    await FallingEdge(dut.clk)
    for name in IDLE_IN:
        getattr(dut, name).value = 0
    dut.s_en.value = 1
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1, "not ready for a page"
    dut.s_valid.value = 1                            # S_XL_TLBW: the TLB missed
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    dut.s_run.value = 1
    # The permission check and the queue as the scenario has them.
    perm = {"insert": 0, "perm": PERMISSION, "unmapped": 0, "fault": 0}[sc["kind"]]
    credit = int(sc["kind"] == "fault" and sc["path"] == "credit")
    fq_any = int(sc["kind"] == "fault" and sc["path"].startswith("flush"))
    fq_full = int(sc["outcome"] == "ok-full")
    busy = sc["busy"]
    ev, running, away, after_call = [], 0, 0, None
    due = {"hash": None, "ptf": None, "fault": None}  # running cycles until each unit answers
    phase = "walk"                                   # walk, pte, fault (the lane reads the first two)
    for t in range(400):
        await Timer(1, unit="ns")
        if val(dut, "m_hash_valid"):
            assert ev == [] and due["hash"] is None, f"hash started twice or late: {ev}"
            ev.append("hash")
            due["hash"] = sc["lh"]
        if val(dut, "m_ptf_valid"):
            assert ev and ev[-1] == "bucket" and due["ptf"] is None, f"reader started, not after the bucket: {ev}"
            ev.append("ptf")
            due["ptf"] = sc["lp"]
        if val(dut, "m_fault_valid"):
            assert due["fault"] is None, "fault unit started twice"
            ev.append("fault")
            due["fault"] = sc["lf"]
        answers = {u: int(due[u] == 0 and not away) for u in due}
        hold = not away and not any(answers.values()) and r.random() < hold_p
        dut.s_en.value = 0 if hold else 1
        dut.s_run.value = 0 if away else 1
        dut.s_hash_valid.value = answers["hash"]
        dut.s_ptf_valid.value = answers["ptf"]
        dut.s_fault_valid.value = answers["fault"]
        if answers["fault"]:
            dut.s_fault_ok.value = int(sc["outcome"].startswith("ok"))
            dut.s_fault_code.value = {"code1": 1, "code2": 2, "code3": 3}.get(sc["outcome"], 0)
        else:                                        # junk when no answer: a stage that reads it early is caught
            dut.s_fault_ok.value = r.getrandbits(1)
            dut.s_fault_code.value = r.getrandbits(2)
        pte_now = phase == "pte"
        dut.s_perm_status.value = perm if pte_now else r.choice([0, PERMISSION])
        dut.s_perm_fault.value = int(sc["kind"] == "fault") if pte_now else r.getrandbits(1)
        dut.s_in_data.value = int(sc["kind"] != "unmapped") if pte_now else r.getrandbits(1)
        dut.s_lane_busy.value = int(pte_now and busy > 0)
        dut.s_credit.value, dut.s_fq_any.value, dut.s_fq_full.value = credit, fq_any, fq_full
        await Timer(1, unit="ns")
        o = {n: val(dut, n) for n in VERDICTS}
        assert val(dut, "s_ready") == 0, "ready inside a walk"
        assert val(dut, "m_walking") == int(phase in ("walk", "pte")), (t, phase, ev)
        assert val(dut, "m_at_pte") == int(phase == "pte"), (t, phase, ev)
        assert val(dut, "m_ptf_own") == int(ev[-1:] in (["bucket"], ["ptf"]) or (phase == "walk" and "ptf" in ev)), \
            (t, ev)
        if away or hold:
            assert not any(o.values()), f"moved while the engine is away or held: {o}"
            if away:
                away -= 1
                if away == 0:                        # the call's effect, seen when the engine is back
                    if after_call == "flush-pte":
                        fq_any = 0
                        credit = int(sc["path"] == "flush-credit")
                    elif after_call == "flush-enq":
                        fq_full = 0
        else:
            running += 1
            assert sum(o[n] for n in ("m_fail", "m_report", "m_flush", "m_probe", "m_enq_unit", "m_enq",
                                      "m_insert")) <= 1, f"two ways out at once: {o}"
            assert o["m_bucket"] == answers["hash"] and o["m_pte"] == answers["ptf"], (t, o, answers)
            if o["m_fault_ppn"]:
                assert answers["fault"] and sc["outcome"].startswith("ok"), o
            for n in ("m_bucket", "m_pte", "m_fault_ppn", "m_flush", "m_probe", "m_enq_unit", "m_enq", "m_insert"):
                if o[n]:
                    ev.append(n[2:])
            if o["m_fail"] or o["m_report"]:
                ev.append(f"{'fail' if o['m_fail'] else 'report'}:{val(dut, 'm_status')}")
            if o["m_pte"]:
                phase = "pte"
            elif pte_now and busy > 0 and sc["kind"] != "insert":
                busy -= 1
                assert not any(o.values()), f"a verdict while the lane is busy: {o}"
            elif pte_now and not o["m_flush"]:
                phase = "fault"                      # any verdict but the flush leaves the PTE
            if o["m_flush"] or o["m_probe"]:
                away = r.randrange(1, 6)
                after_call = "flush-enq" if (o["m_flush"] and phase == "fault") else \
                    "flush-pte" if o["m_flush"] else "probe"
            if answers["hash"]:
                due["hash"] = None
            if answers["ptf"]:
                due["ptf"] = None
            if answers["fault"]:
                due["fault"] = None
            for u in due:
                if due[u]:
                    due[u] -= 1
            done = o["m_fail"] or o["m_report"] or o["m_enq_unit"] or o["m_enq"] or o["m_insert"]
            if done:
                await FallingEdge(dut.clk)
                dut.s_run.value = 0
                await Timer(1, unit="ns")
                assert val(dut, "s_ready") == 1 and val(dut, "m_walking") == 0, "not idle after the walk"
                assert val(dut, "m_ptf_valid") == 0 and val(dut, "m_fault_valid") == 0, "a unit started after the end"
                return ev, running
        await FallingEdge(dut.clk)
    raise AssertionError(f"the walk did not end: {ev}")


@cocotb.test()
async def walks(dut):
    """Random scenarios, latencies, holds and calls: every strobe and verdict in order, the cycles as the engine's."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    seen = set()
    for k in range(1500):
        sc = scenario(r)
        want = reference(sc)
        got = await walk(dut, r, sc)
        assert got == want, (k, sc, got, want)
        seen.add((sc["kind"],) if sc["kind"] != "fault" else (sc["kind"], sc["path"], sc["outcome"]))
    assert len(seen) == 3 + len(PATHS) * len(OUTCOMES), sorted(seen)


@cocotb.test()
async def named_cases(dut):
    """A walk that finds the PTE, a permission failure, a hit-free walk that faults, back to back, no holds."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    base = {"lh": 1, "lp": 1, "lf": 1, "busy": 0}
    cases = [
        (dict(base, kind="insert", path="credit", outcome="ok"), ["hash", "bucket", "ptf", "pte", "insert"], 5),
        (dict(base, kind="perm", path="credit", outcome="ok"), ["hash", "bucket", "ptf", "pte", "fail:5"], 5),
        (dict(base, kind="fault", path="credit", outcome="ok"),
         ["hash", "bucket", "ptf", "pte", "fault", "fault_ppn", "enq_unit"], 7),
        (dict(base, kind="fault", path="probe", outcome="code2"),
         ["hash", "bucket", "ptf", "pte", "probe", "fault", "report:6"], 8),
    ]
    for sc, ev, cyc in cases:
        assert reference(sc) == (ev, cyc), sc
        got = await walk(dut, r, sc, hold_p=0)
        assert got == (ev, cyc), (sc, got)


@cocotb.test()
async def no_start_while_held(dut):
    """A page offered while the engine is held is not taken (the engine did not leave S_XL_TLBW)."""
    await start(dut, idle=IDLE_IN)
    await FallingEdge(dut.clk)
    dut.s_valid.value = 1
    dut.s_en.value = 0
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "m_hash_valid") == 0 and val(dut, "m_walking") == 0 and val(dut, "s_ready") == 1


@cocotb.test()
async def idle_or_reset_clears(dut):
    """A reset or the engine idle (`s_idle`) with a walk inside: the stage takes the next page."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "page")
    sc = scenario(r, kind="insert")
    assert await walk(dut, r, sc, hold_p=0) == reference(sc)
    await FallingEdge(dut.clk)
    dut.s_valid.value = 1
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    dut.s_run.value = 1
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    assert val(dut, "m_walking") == 1
    dut.s_idle.value = 1
    await FallingEdge(dut.clk)
    dut.s_idle.value = 0
    await Timer(1, unit="ns")
    assert val(dut, "s_ready") == 1 and val(dut, "m_walking") == 0
    sc = scenario(r, kind="fault", path="flush-probe", outcome="ok-full")
    assert await walk(dut, r, sc) == reference(sc)
