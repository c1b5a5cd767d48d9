"""clio_xl_walk: the page-table walk against models of the bucket hash and the bucket reader.

The bench is the engine and both units. The engine hands over a page the TLB
missed (`s_valid`, one cycle, as in S_XL_TLBW) and then runs the stage in
S_XL_WALK; the hash unit answers (`s_hash_valid`, one cycle) a random 1–4
cycles after its valid (`m_hash_valid`), the bucket reader (`s_ptf_valid`) a
random 1–6 cycles after its own (`m_ptf_valid`). Between the answers the
engine is held now and then (`s_en` low): nothing may move then. Checked per
walk: the hash started the cycle after the hand-off and only then, the
bucket loaded (`m_bucket`) in the hash's answer cycle and only then, the
reader started the cycle after, the reader owning the port (`m_ptf_own`)
from the cycle after the bucket through its answer, the walk's end
(`m_done`) in the reader's answer cycle, and the engine cycles in S_XL_WALK:
the hash's wait, one (the former S_XL_PTF), the reader's wait (the top's
cycle counts depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from tb_base import cycles, reset_with_one_inside, rng, start

IDLE_IN = ("s_valid", "s_idle", "s_en", "s_hash_valid", "s_ptf_valid")


def outs(dut):
    return {n: int(getattr(dut, n).value) for n in
            ("s_ready", "m_hash_valid", "m_ptf_valid", "m_bucket", "m_done", "m_ptf_own", "m_active")}


async def walk(dut, r, lat_hash, lat_ptf, hold_p=0.25):
    """One walk as the engine: hand over, then run the stage until it is done.
    Returns the engine's active (not held) cycles in S_XL_WALK."""
    await FallingEdge(dut.clk)
    drive_idle(dut)
    dut.s_en.value = 1
    await Timer(1, unit="ns")
    assert outs(dut)["s_ready"] == 1, "not ready for a page"
    dut.s_valid.value = 1                            # S_XL_TLBW: the TLB missed
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    hash_in, ptf_in = None, None                     # cycles until each unit answers
    phase, active, bucket_prev = "hash", 0, False
    for t in range(200):
        # Both units are models: they answer a fixed latency after their valid
        # (counted in the engine's cycles: the top never holds the engine in a
        # walk, and a held engine would miss an answer pulse, as before).
        await Timer(1, unit="ns")
        o = outs(dut)
        assert o["s_ready"] == 0 and o["m_active"] == 1, (t, o)
        if o["m_hash_valid"]:
            assert phase == "hash" and t == 0 and hash_in is None, f"hash started at cycle {t}: {o}"
            hash_in = lat_hash
        else:
            assert not (t == 0), "the hash did not start the cycle after the hand-off"
        if o["m_ptf_valid"]:
            assert bucket_prev and ptf_in is None, "the reader started, not the cycle after the bucket"
            ptf_in = lat_ptf
        answer_h = hash_in == 0
        answer_p = ptf_in == 0
        # The engine is held only when no answer is due (the units' answers are pulses).
        hold = not (answer_h or answer_p) and r.random() < hold_p
        dut.s_en.value = 0 if hold else 1
        dut.s_hash_valid.value = int(answer_h)
        dut.s_ptf_valid.value = int(answer_p)
        await Timer(1, unit="ns")
        o = outs(dut)
        assert o["m_ptf_own"] == int(phase in ("ptf", "ptfw")), (t, phase, o)
        if hold:
            assert o["m_bucket"] == 0 and o["m_done"] == 0, f"moved while held: {o}"
        else:
            active += 1
            assert o["m_bucket"] == int(answer_h), (t, phase, o)
            assert o["m_done"] == int(answer_p), (t, phase, o)
            if phase == "hash" and answer_h:
                phase = "ptf"
            elif phase == "ptf":
                phase = "ptfw"
            elif phase == "ptfw" and answer_p:
                phase = "done"
        bucket_prev = bool(o["m_bucket"])
        if not hold:                                 # the units' latencies count the engine's cycles
            hash_in = None if hash_in is None or hash_in == 0 else hash_in - 1
            ptf_in = None if ptf_in is None or ptf_in == 0 else ptf_in - 1
        await FallingEdge(dut.clk)
        dut.s_hash_valid.value = 0
        dut.s_ptf_valid.value = 0
        if phase == "done":
            dut.s_en.value = 1
            await Timer(1, unit="ns")
            o = outs(dut)
            assert o["s_ready"] == 1 and o["m_active"] == 0 and o["m_ptf_own"] == 0, f"not idle after the walk: {o}"
            assert o["m_ptf_valid"] == 0, "a second reader start"
            return active
    raise AssertionError("the walk did not end")


def drive_idle(dut):
    dut.s_valid.value = 0
    dut.s_idle.value = 0
    dut.s_hash_valid.value = 0
    dut.s_ptf_valid.value = 0


@cocotb.test()
async def walks(dut):
    """Random latencies and holds: every strobe in its cycle, the walk's cycles as the engine's were."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    for k in range(400):
        lh, lp = r.randrange(1, 5), r.randrange(1, 7)
        got = await walk(dut, r, lh, lp)
        # S_XL_HASHW: the hash's valid, then lh cycles to its answer; S_XL_PTF:
        # one (the reader's valid); S_XL_PTFW: lp cycles to the reader's answer.
        want = (lh + 1) + 1 + lp
        assert got == want, (k, lh, lp, got, want)
        for _ in range(r.randrange(0, 3)):
            await FallingEdge(dut.clk)


@cocotb.test()
async def back_to_back(dut):
    """No holds, shortest latencies, walks back to back: four engine cycles each."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    for _ in range(20):
        assert await walk(dut, r, 1, 1, hold_p=0) == 4


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
    o = outs(dut)
    assert o["m_hash_valid"] == 0 and o["m_active"] == 0 and o["s_ready"] == 1, o


@cocotb.test()
async def idle_or_reset_clears(dut):
    """The engine idle (`s_idle`) or a reset with a walk inside: the stage takes the next page."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    dut.s_en.value = 1
    dut.s_valid.value = 1
    await reset_with_one_inside(dut, "page")
    assert await walk(dut, r, 2, 3, hold_p=0) == 3 + 1 + 3
    await FallingEdge(dut.clk)
    dut.s_valid.value = 1
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    await cycles(dut, 2)                             # the hash answers nothing: still in the walk
    await FallingEdge(dut.clk)
    assert outs(dut)["m_active"] == 1
    dut.s_idle.value = 1
    await FallingEdge(dut.clk)
    dut.s_idle.value = 0
    await Timer(1, unit="ns")
    assert outs(dut)["s_ready"] == 1 and outs(dut)["m_active"] == 0
    assert await walk(dut, r, 1, 2, hold_p=0.3) == 2 + 1 + 2
