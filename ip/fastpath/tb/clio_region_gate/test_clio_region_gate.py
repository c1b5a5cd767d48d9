"""clio_region_gate against the fast-path model's region gate (`clio_fastpath::GateTable`).

vectors.txt is the model's run of random table settings and requests (`gate_vectors` in
ip/fastpath/cosim/src/vectors.rs): every GATE_SET with whether the entry exists, EPOCH
clears, and every request with the model's verdict (serve, refuse with BUSY/MOVED, or report
these new dirty blocks of this entry), followed by the mark of a reported mask. The bench
applies each set, clear and mark at a clock edge and checks every output of the check port
against the model, request by request, a clock edge after the request is applied (the
verdict is registered). Before that edge `m_ready` must say whether the registered verdict
is already this request's: the same request checked at the last edge, with no set, mark or
clear since, or no entry set at all."""

import os

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from tb_base import param, start_clock

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    with open(os.path.join(HERE, "vectors.txt")) as f:
        return [line.split() for line in f if line.strip()]


def idle(dut):
    for name in ("s_set_valid", "s_set_entry", "s_set_pid", "s_set_va", "s_set_len", "s_set_mode",
                 "s_clear", "s_req_pid", "s_req_va", "s_req_len", "s_req_class", "s_mark_valid",
                 "s_mark_entry", "s_mark_mask"):
        getattr(dut, name).value = 0


async def edge(dut):
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    idle(dut)


@cocotb.test()
async def model_verdicts(dut):
    """Every vector's verdict, mask and set acceptance as the model decided them."""
    assert param(dut, "ENTRIES") == 8, "vectors.txt is made for ENTRIES = 8"
    start_clock(dut)
    idle(dut)
    dut.rst.value = 1
    for _ in range(2):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    counts = {"S": 0, "C": 0, "Q": 0, "M": 0, "serve": 0, "refuse": 0, "report": 0, "ready early": 0,
              "held": 0, "marked": 0}
    # The request the registers took at the last edge (None: the idle inputs) and
    # whether the table changed at that edge (reset counts as a change).
    taken, changed = None, True
    last_q = None
    for n, v in enumerate(load(), 1):
        op = v[0]
        counts[op] += 1
        where = f"vectors.txt line {n}: {' '.join(v)}"
        if op == "S":
            entry, pid, va, ln, mode, ok = (int(x, 16) for x in v[1:])
            dut.s_set_valid.value = 1
            dut.s_set_entry.value = entry
            dut.s_set_pid.value = pid
            dut.s_set_va.value = va
            dut.s_set_len.value = ln
            dut.s_set_mode.value = mode
            await Timer(1, "ns")
            assert int(dut.m_set_ok.value) == ok, where
            await edge(dut)
            taken, changed = None, bool(ok)
        elif op == "C":
            dut.s_clear.value = 1
            await edge(dut)
            taken, changed = None, True
        elif op == "M":
            # Marked with the reporting request still applied, as the top does: the
            # verdict taken at the mark's edge is the table's before it (not ready);
            # a cycle on it is ready and no longer reports the marked blocks.
            entry, mask = int(v[1], 16), int(v[2], 16)
            dut.s_mark_valid.value = 1
            dut.s_mark_entry.value = entry
            dut.s_mark_mask.value = mask
            if last_q is not None:
                dut.s_req_pid.value, dut.s_req_va.value, dut.s_req_len.value, dut.s_req_class.value = last_q
            await RisingEdge(dut.clk)
            await Timer(1, "ns")
            dut.s_mark_valid.value = 0
            if last_q is not None and entry < 8:
                assert int(dut.m_ready.value) == 0, f"{where}: ready at the mark's edge"
                await RisingEdge(dut.clk)
                await Timer(1, "ns")
                assert int(dut.m_ready.value) == 1, f"{where}: not ready a cycle after the mark"
                again = int(dut.m_track.value) and int(dut.m_track_entry.value) == entry
                assert not (again and int(dut.m_track_mask.value) & mask), f"{where}: marked blocks reported again"
                counts["marked"] += 1
            await FallingEdge(dut.clk)
            idle(dut)
            taken, changed = last_q, False
        else:
            pid, va, ln, cls, code, a, b, tpid, tva = (int(x, 16) for x in v[1:])
            dut.s_req_pid.value = pid
            dut.s_req_va.value = va
            dut.s_req_len.value = ln
            dut.s_req_class.value = cls
            await Timer(1, "ns")
            early = not int(dut.m_live.value) or (taken == (pid, va, ln, cls) and not changed)
            counts["ready early"] += early
            assert int(dut.m_ready.value) == early, f"{where}: m_ready {int(dut.m_ready.value)} before the edge"
            await RisingEdge(dut.clk)
            await Timer(1, "ns")
            taken, changed = (pid, va, ln, cls), False
            last_q = taken
            assert int(dut.m_ready.value) == 1, f"{where}: not ready a cycle after the request"
            refuse, track = int(dut.m_refuse.value), int(dut.m_track.value)
            if code == 0:
                counts["serve"] += 1
                assert (refuse, track) == (0, 0), f"{where}: served by the model"
            elif code == 1:
                counts["refuse"] += 1
                assert (refuse, track) == (1, 0), f"{where}: refused by the model"
                assert int(dut.m_status.value) == a, f"{where}: status {int(dut.m_status.value):#x}"
            else:
                counts["report"] += 1
                assert (refuse, track) == (0, 1), f"{where}: a report by the model"
                got = (int(dut.m_track_entry.value), int(dut.m_track_mask.value),
                       int(dut.m_track_pid.value), int(dut.m_track_va.value))
                assert got == (a, b, tpid, tva), f"{where}: got {tuple(hex(x) for x in got)}"
            if n % 5 == 0 and int(dut.m_live.value):
                # The same request held a cycle on: ready before the edge, the same verdict.
                await FallingEdge(dut.clk)
                assert int(dut.m_ready.value) == 1, f"{where}: the held request is not ready"
                assert (int(dut.m_refuse.value), int(dut.m_track.value)) == (refuse, track), where
                counts["held"] += 1
                await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
            idle(dut)
    dut._log.info("vectors: %s", counts)
    assert counts["report"] > 50 and counts["refuse"] > 100 and counts["serve"] > 100
    assert counts["held"] > 50 and counts["ready early"] > 10 and counts["marked"] > 50
