"""clio_sync_unit: TAS, CAS (equal and not), FAA (wrapping), LOCK (free and held), UNLOCK."""

import random

import cocotb
from cocotb.triggers import RisingEdge

from clio_tb import PKG as P, reset, start_clock

M64 = 2**64 - 1


def model(op, old, a0, a1):
    """(new or None, status) of the reference model's atomic()."""
    if op == P["OP_TAS"]:
        return 1, P["STATUS_OK"]
    if op == P["OP_CAS"]:
        return (a1 if old == a0 else None), P["STATUS_OK"]
    if op == P["OP_FAA"]:
        return (old + a0) & M64, P["STATUS_OK"]
    if op == P["OP_LOCK"]:
        return (1, P["STATUS_OK"]) if old == 0 else (None, P["STATUS_BUSY"])
    if op == P["OP_UNLOCK"]:
        return 0, P["STATUS_OK"]
    return None, P["STATUS_MALFORMED"]


@cocotb.test()
async def operations(dut):
    """Every operation on random and edge-case words, one result per cycle."""
    start_clock(dut)
    dut.s_valid.value = 0
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    ops = [P[k] for k in ("OP_TAS", "OP_CAS", "OP_FAA", "OP_LOCK", "OP_UNLOCK", "OP_READ")]
    pending = None
    for _ in range(3000):
        op = rng.choice(ops)
        old = rng.choice([0, 1, M64, rng.getrandbits(64)])
        a0 = old if rng.random() < 0.5 else rng.choice([1, M64, rng.getrandbits(64)])
        a1 = rng.getrandbits(64)
        dut.s_opcode.value, dut.s_old.value, dut.s_arg0.value, dut.s_arg1.value = op, old, a0, a1
        dut.s_valid.value = 1
        await RisingEdge(dut.clk)
        if pending:
            new, status, o = pending
            assert dut.m_valid.value == 1
            assert int(dut.m_old.value) == o
            assert int(dut.m_status.value) == status
            assert bool(dut.m_write.value) == (new is not None)
            if new is not None:
                assert int(dut.m_new.value) == new
        pending = (*model(op, old, a0, a1), old)
